//! One HTTP request, start to finish: who may ask (the `Host` header, the bearer token), what is asked
//! (the path names the agent, the body is its hook input), and the answer in that agent's dialect.
//!
//! The checks, in order, each with its status:
//! 1. `Host` must name this machine's loopback (`localhost`, `127.0.0.1`, `[::1]`, any port): a web page
//!    that rebinds its own DNS name to 127.0.0.1 sends its own name and is refused (403).
//! 2. `Authorization: Bearer <token>`, compared in constant time (401, and a log line without the token).
//! 3. The path `/hooks/<agent>` (404) and the method `POST` (405).
//! 4. The body: at most [`MAX_BODY`] bytes (413), within [`BODY_TIMEOUT`] (408), a JSON object with
//!    `hook_event_name` (400).
//! 5. The fire, in-process, as the socket server fires; 200 with what `hookd relay` would print (an empty
//!    body when the hooks have nothing to say).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};

use super::token::Token;
use crate::agents::Agent;
use crate::dialect::{self, Transport};
use crate::fire::{self, Fire};
use crate::protocol::ErrorKind;
use crate::state::Shared;

/// The largest body accepted: the socket protocol's line limit, so that one event fits either way.
pub const MAX_BODY: usize = crate::protocol::MAX_LINE;

/// How long a client may take to send a body once its headers are in.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// The path prefix of the hook endpoints; the rest of the path is the agent's name.
const PREFIX: &str = "/hooks/";

/// What one request needs besides itself.
pub struct Context {
    pub shared: Arc<Shared>,
    pub peer: SocketAddr,
}

pub type Body = Full<Bytes>;

/// Answers one request; never fails (every problem is a status and a JSON error body).
pub async fn handle(context: &Context, request: Request<Incoming>) -> Response<Body> {
    let control = &context.shared.http;
    // A refused request's connection is closed after the answer (`Connection: close`): it cannot stay
    // to hold a connection slot.
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
    if context.shared.draining.is_cancelled() {
        return shutting_down();
    }
    let input = match read_body(request).await {
        Ok(input) => input,
        Err(response) => return response,
    };
    let (moment, event_name, event) = match dialect::translate(agent, &input) {
        Ok(translated) => translated,
        Err(why) => return error(StatusCode::BAD_REQUEST, "bad_request", &why),
    };
    let request = Fire {
        id: None,
        moment: moment.clone(),
        agent: Some(agent.name().to_string()),
        event,
    };
    let cancel = context.shared.abandon.child_token();
    let verdict = match fire::decide(&context.shared, request, cancel).await {
        Ok(verdict) => verdict,
        // A moment nobody hangs hooks on (one hookd does not know, not declared): nothing to say, as the
        // relay says nothing.
        Err(e) if e.error.kind == ErrorKind::UnknownMoment => return ok(None),
        Err(e) if e.error.kind == ErrorKind::ShuttingDown => return shutting_down(),
        Err(e) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                &e.error.message,
            );
        }
    };
    let adds: Vec<&str> = verdict.adds.iter().map(String::as_str).collect();
    let answer = dialect::answer(
        agent,
        &moment,
        &event_name,
        dialect::refusal(verdict.refused, verdict.reason.as_deref()),
        &adds,
        Transport::Http,
    );
    ok(answer.stdout)
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

/// The body as text, or the response that says why not.
async fn read_body(request: Request<Incoming>) -> Result<String, Response<Body>> {
    let too_large = || {
        error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            &format!("the body is larger than {MAX_BODY} bytes"),
        )
    };
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return Err(too_large());
    }
    // Limited: a body without a Content-Length (chunked) is cut off at the limit as it streams in.
    let collected = tokio::time::timeout(
        BODY_TIMEOUT,
        Limited::new(request.into_body(), MAX_BODY).collect(),
    )
    .await;
    let bytes = match collected {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => return Err(too_large()),
        Ok(Err(e)) => {
            let message = format!("cannot read the body: {e}");
            return Err(error(StatusCode::BAD_REQUEST, "bad_request", &message));
        }
        Err(_) => {
            let message = format!("the body did not arrive within {BODY_TIMEOUT:?}");
            return Err(error(StatusCode::REQUEST_TIMEOUT, "timeout", &message));
        }
    };
    String::from_utf8(bytes.to_vec()).map_err(|_| {
        error(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "the hook input is not UTF-8",
        )
    })
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
        assert_eq!(agent_of("/hooks/claude-code"), Some(Agent::ClaudeCode));
        assert_eq!(agent_of("/hooks/codex"), Some(Agent::Codex));
        assert_eq!(agent_of("/hooks/gemini-cli"), Some(Agent::GeminiCli));
        assert_eq!(agent_of("/hooks/claude-code/"), None);
        assert_eq!(agent_of("/"), None);
    }
}
