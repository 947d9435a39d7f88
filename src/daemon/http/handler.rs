//! One HTTP request, start to finish: who may ask (the `Host` header, the bearer token), what is asked
//! (the path names the agent, the body is its hook input), and the answer in that agent's dialect.
//!
//! The checks, in order, each with its status:
//! 1. `Host` must name this machine's loopback (`localhost`, `127.0.0.1`, `[::1]`, any port): a web page
//!    that rebinds its own DNS name to 127.0.0.1 sends its own name and is refused (403).
//! 2. `Authorization: Bearer <token>`, compared in constant time (401, and a log line without the token).
//! 3. The path `/hooks/<agent>` (404) and the method `POST` (405).
//! 4. The body: within [`HTTP_BODY_TIMEOUT`] (408), a JSON object with `hook_event_name` (400). Up to
//!    [`MAX_EVENT`] bytes it is decoded whole; past that (or nested too deep to decode) it is read only for
//!    its head as it streams by, and fired as undecidable: its hooks are read as failed, so that a hook
//!    with `on_failure = "refuse"` refuses; with `ignore`, the answer is a `systemMessage` saying so. No
//!    size is refused: an agent reads a 413 as "go on".
//! 5. The fire, in-process, as the socket server fires; 200 with what `hookd relay` would print (an empty
//!    body when the hooks have nothing to say).
//!
//! A request with more than one `Host` header is refused (400): which one a check reads and which one a
//! proxy or the agent meant need not be the same.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};

use super::token::Token;
use crate::agents::Agent;
use crate::agents::dialect::{self, Translated, Transport};
use crate::daemon::state::Daemon;
use crate::engine::{Fire, NotDecided};
use crate::limits::{
    HTTP_BODY_TIMEOUT, LARGE_LINE, LARGE_LINE_DEADLINE, MAX_EVENT, OFF_THREAD, PERMIT_WAIT,
};
use crate::protocol::head::Head;
use crate::protocol::too_large;

/// The path prefix of the hook endpoints; the rest of the path is the agent's name.
const PREFIX: &str = "/hooks/";

/// What one request needs besides itself.
pub struct Context {
    pub daemon: Arc<Daemon>,
    pub peer: SocketAddr,
}

pub type Body = Full<Bytes>;

/// Answers one request; never fails (every problem is a status and a JSON error body).
pub async fn handle(context: &Context, request: Request<Incoming>) -> Response<Body> {
    let control = &context.daemon.http;
    // A refused request's connection is closed after the answer (`Connection: close`): it cannot stay
    // to hold a connection slot.
    if request.headers().get_all(HOST).iter().nth(1).is_some() {
        let why = "more than one Host header";
        tracing::warn!(peer = %context.peer, "http: refused a request: {why}");
        return closing(error(StatusCode::BAD_REQUEST, "bad_request", why));
    }
    if let Err(why) = check_host(
        request.headers().get(HOST),
        control.any_ip_host.load(Ordering::Relaxed),
    ) {
        tracing::warn!(peer = %context.peer, "http: refused a request: {why}");
        return closing(error(StatusCode::FORBIDDEN, "forbidden_host", &why));
    }
    let token = control.token.load();
    let authorized = match token.as_deref() {
        Some(token) => check_token(request.headers().get(AUTHORIZATION), token),
        None => Err("no token is in force"),
    };
    if let Err(why) = authorized {
        tracing::warn!(peer = %context.peer, path = request.uri().path(), "http: refused a request: {why}");
        let mut response = error(StatusCode::UNAUTHORIZED, "unauthorized", why);
        response
            .headers_mut()
            .insert("www-authenticate", HeaderValue::from_static("Bearer"));
        return closing(response);
    }
    let Some(agent) = agent_of(request.uri().path()) else {
        let names: Vec<String> = Agent::ALL
            .iter()
            .map(|a| format!("{PREFIX}{}", a.name()))
            .collect();
        let message = format!("no such endpoint; the endpoints are {}", names.join(", "));
        return error(StatusCode::NOT_FOUND, "not_found", &message);
    };
    if request.method() != Method::POST {
        let mut response = error(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "only POST is answered: the body is the agent's hook input",
        );
        response
            .headers_mut()
            .insert("allow", HeaderValue::from_static("POST"));
        return response;
    }
    if context.daemon.draining.is_cancelled() {
        return shutting_down();
    }
    let request_query = request.uri().query().map(str::to_string);
    let input = match read_body(request, &context.daemon.memory).await {
        Ok(input) => input,
        Err(response) => return response,
    };
    // The decoded event is counted in the daemon's memory budget until its fire is answered (the
    // large-line permit it was read under is given back at once: a fire may take minutes, and others
    // wait for the permits).
    let mut held = crate::daemon::memory::Account::new(context.daemon.memory.clone());
    let translated = match input {
        Input::Whole(bytes, None) if bytes.len() <= OFF_THREAD => dialect::translate(agent, &bytes),
        // Decoding megabytes of JSON takes milliseconds: not on the thread every client shares.
        Input::Whole(bytes, permit) => {
            let decoder = context.daemon.memory.decoder().await;
            let decoding = tokio::task::spawn_blocking(move || {
                (
                    crate::daemon::memory::request_cost(&bytes),
                    dialect::translate(agent, &bytes),
                )
            });
            let (cost, translated) = decoding
                .await
                .unwrap_or_else(|e| (0, Err(format!("decoding the hook input failed: {e}"))));
            drop((permit, decoder));
            held.charge(cost);
            translated.map(|mut translated| {
                translated.event.large = true;
                translated
            })
        }
        Input::Over { head, why, busy } => {
            dialect::translate_head(agent, head, why).map(|mut translated| {
                translated.event.busy = busy;
                translated
            })
        }
    };
    let Translated {
        moment,
        event_name,
        event,
        carry_back,
    } = match translated {
        Ok(translated) => translated,
        Err(why) => return error(StatusCode::BAD_REQUEST, "bad_request", &why),
    };
    let undecidable = event.undecidable.clone();
    let mut event = event;
    event.source = crate::record::Source::Http;
    event.fail_closed = says_fail_closed(request_query.as_deref());
    let request = Fire {
        moment: moment.clone(),
        agent: Some(agent.name().to_string()),
        event,
    };
    let engine = &context.daemon.engine;
    let cancel = engine.abandoned().child_token();
    let verdict = match engine.decide(request, &cancel).await {
        // Cut to fit as on the socket.
        Ok(decision) => crate::daemon::answer::fire_response(None, decision),
        // A moment nobody hangs hooks on (one hookd does not know, not declared): nothing to say. (The
        // relay says when the event is not one of its agent's; an agent sends an http hook only its own.)
        Err(NotDecided::UnknownMoment(_)) => return ok(None),
        Err(NotDecided::ShuttingDown) => return shutting_down(),
    };
    let answer = dialect::answer_to(
        agent,
        &moment,
        &event_name,
        &verdict,
        carry_back.as_ref(),
        Transport::Http,
    );
    if let Some(why) = undecidable
        && answer.stdout.is_none()
        && !verdict.hooks.is_empty()
    {
        // Its hooks were read as failed and none refuses on failure: the agent goes on, but the user is
        // told, as the relay tells stderr (no hook having run, there is no other answer to carry it).
        let message = format!(
            "hookd: {why}: {} hook(s) could not be given it and were read as failed",
            verdict.hooks.len()
        );
        return ok(Some(json!({"systemMessage": message}).to_string()));
    }
    ok(answer.stdout)
}

/// Whether the URL's query says the agent holds the call back when this hook fails (`fail_closed=1`):
/// what `hookd relay --print-settings claude-code --http --fail-closed` writes beside
/// `"onFailure": "block"`, for the managed layer's `require_fail_closed` to tell the hook from a
/// fail-open one.
fn says_fail_closed(query: Option<&str>) -> bool {
    query.is_some_and(|query| {
        query
            .split('&')
            .any(|pair| pair == "fail_closed=1" || pair == "fail_closed=true")
    })
}

/// The agent named by a path `/hooks/<agent>`.
fn agent_of(path: &str) -> Option<Agent> {
    Agent::from_name(path.strip_prefix(PREFIX)?)
}

/// `Host` names loopback: `localhost`, or a loopback IP address (any IP address when `any_ip` is set:
/// DNS rebinding needs a name, never an address), each with an optional port.
fn check_host(host: Option<&HeaderValue>, any_ip: bool) -> Result<(), String> {
    let Some(host) = host else {
        return Err("no Host header".into());
    };
    let refused = || {
        format!(
            "the Host header {:?} is not a loopback name (localhost, 127.0.0.1 or [::1])",
            String::from_utf8_lossy(host.as_bytes())
        )
    };
    let text = host.to_str().map_err(|_| refused())?;
    let (name, port) = match text.strip_prefix('[') {
        Some(rest) => {
            let (inside, after) = rest.split_once(']').ok_or_else(refused)?;
            (inside, after)
        }
        None => match text.rsplit_once(':') {
            Some((name, _)) => (name, &text[name.len()..]),
            None => (text, ""),
        },
    };
    let port_ok = port.is_empty()
        || port.strip_prefix(':').is_some_and(|p| {
            !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
        });
    let name_ok = name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback() || any_ip);
    if port_ok && name_ok {
        Ok(())
    } else {
        Err(refused())
    }
}

/// `Authorization: Bearer <token>` with the daemon's token.
fn check_token(header: Option<&HeaderValue>, token: &Token) -> Result<(), &'static str> {
    let Some(header) = header else {
        return Err("no Authorization header (Bearer token)");
    };
    let value = header.as_bytes();
    let presented = match value.split_at_checked(7) {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case(b"bearer ") => rest.trim_ascii(),
        _ => return Err("the Authorization header is not a Bearer token"),
    };
    if token.matches(presented) {
        Ok(())
    } else {
        Err("wrong token")
    }
}

/// A request's body.
enum Input {
    /// At most [`MAX_EVENT`] bytes; past [`LARGE_LINE`], with the large-line permit it
    /// was read under, held until it is decoded.
    Whole(Vec<u8>, Option<tokio::sync::OwnedSemaphorePermit>),
    /// Not held whole (larger than [`MAX_EVENT`], or no large-line permit to be had): what its head
    /// holds, and why it was not held.
    Over { head: Head, why: String, busy: bool },
}

/// The body, or the response that says why not. Held in memory up to [`MAX_EVENT`]; past that (or when
/// `Content-Length` says so at once), each piece is scanned for the head as it arrives and let go. A body
/// held past [`LARGE_LINE`] takes one of the daemon's few large-line permits (daemon with
/// the socket's large request lines), so that many connections cannot each hold tens of megabytes.
async fn read_body(
    request: Request<Incoming>,
    memory: &crate::daemon::memory::Memory,
) -> Result<Input, Response<Body>> {
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let mut body = request.into_body();
    let mut scanner = declared
        .is_some_and(|n| n > MAX_EVENT as u64)
        .then(crate::agents::dialect::head_scanner);
    let mut kept: Vec<u8> = Vec::new();
    let mut large = None;
    let mut busy = false;
    let mut size: u64 = 0;
    let mut large_until: Option<tokio::time::Instant> = None;
    let read = async {
        loop {
            let next = body.frame();
            // A body read under a large-line permit has as long as a socket line to arrive, so that slow
            // senders cannot keep the permits others need (the body's own deadline is longer).
            let frame = match large_until {
                Some(until) => match tokio::time::timeout_at(until, next).await {
                    Ok(frame) => frame,
                    Err(_) => return Ok(false),
                },
                None => next.await,
            };
            let Some(frame) = frame else { break };
            let Ok(data) = frame?.into_data() else {
                continue; // trailers
            };
            size += data.len() as u64;
            match &mut scanner {
                Some(scanner) => scanner.feed(&data),
                None => {
                    if large.is_none() && kept.len() + data.len() > LARGE_LINE {
                        match tokio::time::timeout(PERMIT_WAIT, memory.large_line()).await {
                            Ok(permit) => {
                                large = Some(permit);
                                large_until =
                                    Some(tokio::time::Instant::now() + LARGE_LINE_DEADLINE);
                            }
                            Err(_) => {
                                // Too many large events are being read at once: this one is decided
                                // from its head, at once, rather than wait past the agent's patience.
                                let mut over = crate::agents::dialect::head_scanner();
                                over.feed(&kept);
                                over.feed(&data);
                                kept = Vec::new();
                                scanner = Some(over);
                                busy = true;
                                continue;
                            }
                        }
                    }
                    kept.extend_from_slice(&data);
                    if kept.len() > MAX_EVENT {
                        let mut over = crate::agents::dialect::head_scanner();
                        over.feed(&kept);
                        kept = Vec::new();
                        large = None;
                        scanner = Some(over);
                    }
                }
            }
        }
        Ok::<bool, hyper::Error>(true)
    };
    match tokio::time::timeout(HTTP_BODY_TIMEOUT, read).await {
        Ok(Ok(false)) => {
            let message = format!(
                "a body over {} bytes did not arrive within {:?} of starting to be read",
                LARGE_LINE, LARGE_LINE_DEADLINE
            );
            Err(closing(error(
                StatusCode::REQUEST_TIMEOUT,
                "timeout",
                &message,
            )))
        }
        Ok(Ok(true)) => Ok(match scanner {
            Some(scanner) => Input::Over {
                head: scanner.finish(),
                why: if busy {
                    format!(
                        "the event is {size} bytes, and hookd was reading as many large events as it reads at once"
                    )
                } else {
                    too_large(size)
                },
                busy,
            },
            None => Input::Whole(kept, large),
        }),
        Ok(Err(e)) => {
            let message = format!("cannot read the body: {e}");
            Err(error(StatusCode::BAD_REQUEST, "bad_request", &message))
        }
        Err(_) => {
            let message = format!("the body did not arrive within {HTTP_BODY_TIMEOUT:?}");
            Err(error(StatusCode::REQUEST_TIMEOUT, "timeout", &message))
        }
    }
}

/// 200 with the agent's answer, or an empty body for nothing to say (Claude Code: "success, no output").
fn ok(answer: Option<String>) -> Response<Body> {
    let mut response = match answer {
        Some(mut text) => {
            // As the relay prints it: one line.
            text.push('\n');
            let mut response = Response::new(Full::new(Bytes::from(text)));
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            response
        }
        None => Response::new(Full::new(Bytes::new())),
    };
    *response.status_mut() = StatusCode::OK;
    response
}

fn shutting_down() -> Response<Body> {
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        "shutting_down",
        "the daemon is shutting down",
    )
}

/// A status with `{"error":{"kind":K,"message":M}}`. Agents read any non-2xx as a non-blocking error:
/// the tool runs.
/// `response`, with the connection closed after it.
fn closing(mut response: Response<Body>) -> Response<Body> {
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

fn error(status: StatusCode, kind: &str, message: &str) -> Response<Body> {
    let body = json!({"error": {"kind": kind, "message": message}});
    let mut text = Value::to_string(&body);
    text.push('\n');
    let mut response = Response::new(Full::new(Bytes::from(text)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(text: &str, any_ip: bool) -> bool {
        check_host(Some(&HeaderValue::from_str(text).unwrap()), any_ip).is_ok()
    }

    #[test]
    fn loopback_hosts_are_taken() {
        for ok in [
            "localhost",
            "LOCALHOST:8787",
            "127.0.0.1",
            "127.0.0.1:8787",
            "[::1]",
            "[::1]:8787",
        ] {
            assert!(host(ok, false), "{ok}");
        }
    }

    #[test]
    fn other_hosts_are_refused() {
        for bad in [
            "evil.example",
            "evil.example:8787",
            "localhost.evil.example",
            "192.168.1.2:8787",
            "127.0.0.1:",
            "127.0.0.1:80:80",
            "[::1",
            "[::2]:80",
            "",
            "localhost:abc",
        ] {
            assert!(!host(bad, false), "{bad}");
        }
        assert!(check_host(None, false).is_err());
        assert!(host("192.168.1.2:8787", true), "an address, never a name");
        assert!(!host("evil.example", true));
    }

    #[test]
    fn paths_name_agents() {
        assert!(says_fail_closed(Some("fail_closed=1")));
        assert!(says_fail_closed(Some("x=2&fail_closed=true")));
        assert!(!says_fail_closed(Some("fail_closed=0")));
        assert!(!says_fail_closed(Some("not_fail_closed=1")));
        assert!(!says_fail_closed(None));
        assert_eq!(agent_of("/hooks/claude-code"), Some(Agent::ClaudeCode));
        assert_eq!(agent_of("/hooks/codex"), Some(Agent::Codex));
        assert_eq!(agent_of("/hooks/gemini-cli"), Some(Agent::GeminiCli));
        assert_eq!(agent_of("/hooks/claude-code/"), None);
        assert_eq!(agent_of("/"), None);
    }
}
