//! The HTTP listener for agents' http hooks, end to end: the real daemon with `[http] listen =
//! "127.0.0.1:0"` (the port learnt from `status`), real shell hooks, and a hand-written HTTP client on a
//! plain `TcpStream` (so that it can send what no well-behaved client would: a foreign `Host`, no token,
//! a body past the limit).
//!
//! Held here: every verdict shape per moment, in each agent's dialect (the expected bodies written from
//! the contract's table, independently of `src/dialect.rs`); the token (401 without or with a wrong one,
//! its file 0600 and kept across restarts, refused when others can read it); the `Host` check (403);
//! bodies of any size and depth decided (whole up to 64 MiB, past that as failures of their hooks), two
//! `Host` headers refused; 400, 404, 405; 32 requests at once; the listener off by default; reload starting, moving and
//! stopping it; a port that cannot be bound; a client that hangs up (its hooks stopped); shutdown (a fire
//! in progress answered); `relay --print-settings claude-code --http`.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::time::Duration;

use crate::common::*;
use serde_json::{Value, json};

/// A safety net for one command (never a speed assertion).
const T: Duration = Duration::from_secs(20);

// ---- helpers --------------------------------------------------------------------------------------

/// The settings' `[http]` table, listening on a port the kernel picks.
const HTTP_ON: &str = "[http]\nlisten = \"127.0.0.1:0\"\n";

/// The port the daemon's listener is bound to, from `status`.
fn port(d: &Daemon) -> u16 {
    d.http_port()
}

/// The status of POSTing `body` with the right token and `Host: host`.
fn status_with_host(d: &Daemon, host: &str, body: &str) -> u16 {
    exchange(
        port(d),
        &format!(
            "POST /hooks/claude-code HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {}\r\nContent-Length: {}",
            token(d),
            body.len()
        ),
        body.as_bytes(),
    )
    .status
}

/// Where the sandbox's daemon keeps its token: `hookd/http-token` in its state folder
/// (`$XDG_STATE_HOME`, which the tests put beside the socket).
fn token_path(sb: &Sandbox) -> std::path::PathBuf {
    state_home_for(&sb.socket()).join("hookd/http-token")
}

/// The token in `path`, trimmed.
fn read_token(path: &std::path::Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path:?}: {e}"))
        .trim()
        .to_string()
}

/// The token the daemon made.
fn token(d: &Daemon) -> String {
    // The daemon accepts on its socket a moment before it has written the token (the http listener
    // starts after the socket is bound): wait for it.
    let path = token_path(&d.sb);
    wait_until(T, "the http token to be written", || {
        std::fs::read_to_string(&path).is_ok_and(|t| !t.trim().is_empty())
    });
    read_token(&path)
}

/// One HTTP response, as read off the wire.
#[derive(Debug)]
struct Reply {
    status: u16,
    /// Header lines, lower-cased.
    headers: Vec<String>,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("the body is not JSON ({e}): {self:?}"))
    }

    fn header(&self, name: &str) -> Option<&str> {
        let prefix = format!("{name}:");
        self.headers
            .iter()
            .find(|h| h.starts_with(&prefix))
            .map(|h| h[prefix.len()..].trim())
    }
}

/// Sends `head` (the request line and headers, without the blank line) and `body` on a new connection
/// that closes after the response, and reads the response.
fn exchange(port: u16, head: &str, body: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connecting to the listener");
    stream.set_read_timeout(Some(RESPONSE)).unwrap();
    let mut request = format!("{head}\r\nConnection: close\r\n\r\n").into_bytes();
    request.extend_from_slice(body);
    // The daemon may answer (401, 403) and close before taking the whole body: a failed write is fine.
    if let Err(e) = stream.write_all(&request) {
        eprintln!("writing the request stopped: {e}"); // shown only if the test fails
    }
    read_reply(&mut stream)
}

fn read_reply(stream: &mut TcpStream) -> Reply {
    let mut raw = Vec::new();
    let mut chunk = [0u8; 8192];
    let began = std::time::Instant::now();
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset && !raw.is_empty() => break,
            // A signal caught while the read waits (a socket with a read timeout is never restarted).
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => panic!(
                "reading the response: {e} ({:?} after the read began; read so far: {:?})",
                began.elapsed(),
                text(&raw)
            ),
        }
    }
    let raw = text(&raw);
    let (head, body) = raw
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no end of headers in {raw:?}"));
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    Reply {
        status,
        headers: lines.map(str::to_ascii_lowercase).collect(),
        body: body.to_string(),
    }
}

/// POSTs `body` to `path` with the right Host and token.
fn post(d: &Daemon, path: &str, body: &str) -> Reply {
    post_to(port(d), &token(d), path, body)
}

fn post_to(port: u16, token: &str, path: &str, body: &str) -> Reply {
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}",
        body.len()
    );
    exchange(port, &head, body.as_bytes())
}

/// POSTs an event to Claude Code's endpoint; the parsed body, or None for an empty 200.
fn claude(d: &Daemon, event: Value) -> Option<Value> {
    answer(d, "/hooks/claude-code", event)
}

fn answer(d: &Daemon, path: &str, event: Value) -> Option<Value> {
    let reply = post(d, path, &event.to_string());
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(
        reply.header("access-control-allow-origin").is_none(),
        "no CORS: {reply:?}"
    );
    if reply.body.is_empty() {
        return None;
    }
    assert_eq!(reply.header("content-type"), Some("application/json"));
    Some(reply.json())
}

/// A daemon whose settings are `HTTP_ON` and `hooks`, with the scripts written first.
fn start(sb: Sandbox, hooks: &str) -> Daemon {
    sb.settings(&format!("{HTTP_ON}{hooks}"));
    Daemon::start(sb)
}

/// A PreToolUse event from Claude Code for `tool` running `command`.
fn pre_tool_use(tool: &str, command: &str) -> Value {
    json!({"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": tool,
           "tool_input": {"command": command}, "cwd": "/"})
}

/// A script that refuses (exit 2, REASON on stderr) when its input holds `word`, else prints `adds`
/// (nothing when empty).
fn refuse_if(sb: &Sandbox, name: &str, word: &str, reason: &str, adds: &str) {
    let says = if adds.is_empty() {
        String::new()
    } else {
        format!("echo '{adds}'")
    };
    sb.script(
        name,
        &format!(
            "input=$(cat)\ncase \"$input\" in *'{word}'*) echo '{reason}' >&2; exit 2;; esac\n{says}"
        ),
    );
}

/// Whether a process has a TCP socket listening (its socket inodes against /proc/net/tcp{,6}).
fn listens_on_tcp(pid: u32) -> bool {
    let inodes: HashSet<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("reading the daemon's fds")
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter_map(|l| {
            let l = l.to_string_lossy().into_owned();
            l.strip_prefix("socket:[")?
                .strip_suffix(']')
                .map(str::to_string)
        })
        .collect();
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|table| {
        std::fs::read_to_string(table)
            .unwrap_or_default()
            .lines()
            .skip(1)
            .any(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                // st 0A: LISTEN; field 9: the inode.
                fields.get(3) == Some(&"0A") && fields.get(9).is_some_and(|i| inodes.contains(*i))
            })
    })
}

// ---- verdicts, per moment ---------------------------------------------------------------------------

#[test]
fn pre_tool_use_deny_allow_and_adds() {
    let sb = Sandbox::new();
    refuse_if(&sb, "guard.sh", "rm -rf", "rm -rf is not allowed", "");
    sb.script("context.sh", "cat >/dev/null; echo 'branch: main'");
    let d = start(
        sb,
        "[[hooks.PreToolUse]]\nname = \"guard\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/guard.sh\"\n\
         [[hooks.PreToolUse]]\nname = \"context\"\nmatcher = \"Edit\"\ncommand = \"@DIR@/context.sh\"\n",
    );
    assert_eq!(
        claude(&d, pre_tool_use("Bash", "rm -rf /")),
        Some(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": "rm -rf is not allowed"}}))
    );
    assert_eq!(
        claude(&d, pre_tool_use("Bash", "ls")),
        None,
        "allowed: empty 200"
    );
    assert_eq!(
        claude(&d, pre_tool_use("Edit", "x")),
        Some(
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "branch: main"}})
        )
    );
    assert_eq!(
        claude(&d, pre_tool_use("Read", "x")),
        None,
        "no hook matches"
    );
    // Codex speaks Claude Code's dialect.
    assert_eq!(
        answer(&d, "/hooks/codex", pre_tool_use("Bash", "rm -rf /")).unwrap()["hookSpecificOutput"]
            ["permissionDecision"],
        "deny"
    );
}

#[test]
fn user_prompt_submit_block_and_additional_context() {
    let sb = Sandbox::new();
    refuse_if(&sb, "prompt.sh", "forbidden", "not that prompt", "");
    sb.script("git.sh", "cat >/dev/null; echo 'branch: main'");
    let d = start(
        sb,
        "[[hooks.UserPromptSubmit]]\nname = \"prompt\"\ncommand = \"@DIR@/prompt.sh\"\n\
         [[hooks.UserPromptSubmit]]\nname = \"git\"\ncommand = \"@DIR@/git.sh\"\n",
    );
    let event = |prompt: &str| json!({"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": prompt, "cwd": "/"});
    assert_eq!(
        claude(&d, event("do the forbidden thing")),
        Some(json!({"decision": "block", "reason": "not that prompt",
            "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "branch: main"}}))
    );
    assert_eq!(
        claude(&d, event("hello")),
        Some(
            json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "branch: main"}})
        )
    );
}

#[test]
fn stop_block_and_post_tool_use() {
    let sb = Sandbox::new();
    refuse_if(&sb, "stop.sh", "\"s-block\"", "tests fail: fix them", "");
    refuse_if(
        &sb,
        "post.sh",
        "secret",
        "the output holds a secret",
        "checked",
    );
    let d = start(
        sb,
        "[[hooks.Stop]]\nname = \"stop\"\ncommand = \"@DIR@/stop.sh\"\n\
         [[hooks.PostToolUse]]\nname = \"post\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/post.sh\"\n",
    );
    let stop = |session: &str| json!({"session_id": session, "hook_event_name": "Stop", "stop_hook_active": false, "cwd": "/"});
    assert_eq!(
        claude(&d, stop("s-block")),
        Some(json!({"decision": "block", "reason": "tests fail: fix them"}))
    );
    assert_eq!(claude(&d, stop("s-other")), None);
    let post = |output: &str| {
        json!({"session_id": "s1", "hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_input": {"command": "cat x"}, "tool_response": {"stdout": output}, "cwd": "/"})
    };
    assert_eq!(
        claude(&d, post("a secret")),
        Some(json!({"decision": "block", "reason": "the output holds a secret"}))
    );
    assert_eq!(
        claude(&d, post("fine")),
        Some(
            json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "checked"}})
        )
    );
}

#[test]
fn a_refusal_where_a_process_would_exit_2_is_json_over_http() {
    let sb = Sandbox::new();
    sb.script("start.sh", "cat >/dev/null; echo 'not today' >&2; exit 2");
    let d = start(
        sb,
        "[[hooks.SessionStart]]\nname = \"start\"\ncommand = \"@DIR@/start.sh\"\n",
    );
    let event = json!({"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"});
    // Claude Code only shows a refusal at SessionStart to the user: said as advice.
    assert_eq!(
        claude(&d, event),
        Some(
            json!({"systemMessage": "not today (a refusal at SessionStart, where Claude Code only takes advice: it goes on)"})
        )
    );
}

#[test]
fn gemini_cli_gets_its_own_dialect_and_claude_code_tool_names() {
    let sb = Sandbox::new();
    refuse_if(&sb, "guard.sh", "rm -rf", "no rm", "");
    let d = start(
        sb,
        "[[hooks.PreToolUse]]\nname = \"guard\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/guard.sh\"\n",
    );
    let event = json!({"session_id": "g1", "hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
                       "tool_input": {"command": "rm -rf /"}, "cwd": "/"});
    assert_eq!(
        answer(&d, "/hooks/gemini-cli", event),
        Some(json!({"decision": "deny", "reason": "no rm"}))
    );
}

#[test]
fn a_moment_nobody_knows_gets_an_empty_answer() {
    let d = start(Sandbox::new(), "");
    let event = json!({"session_id": "s1", "hook_event_name": "SomethingNew"});
    assert_eq!(claude(&d, event), None);
}

// ---- who may ask ------------------------------------------------------------------------------------

#[test]
fn no_token_or_a_wrong_one_gets_401_and_a_log_line_without_the_token() {
    let d = start(Sandbox::new(), "");
    let (port, token) = (port(&d), token(&d));
    let body = pre_tool_use("Bash", "ls").to_string();
    let no_token = exchange(
        port,
        &format!(
            "POST /hooks/claude-code HTTP/1.1\r\nHost: localhost:{port}\r\nContent-Length: {}",
            body.len()
        ),
        body.as_bytes(),
    );
    assert_eq!(no_token.status, 401, "{no_token:?}");
    assert_eq!(no_token.json()["error"]["kind"], "unauthorized");
    let mut wrong = token.clone().into_bytes();
    wrong[5] = if wrong[5] == b'a' { b'b' } else { b'a' };
    let wrong = String::from_utf8(wrong).unwrap();
    let reply = post_to(port, &wrong, "/hooks/claude-code", &body);
    assert_eq!(reply.status, 401, "{reply:?}");
    let reply = post_to(port, &format!("{token}x"), "/hooks/claude-code", &body);
    assert_eq!(reply.status, 401, "a longer token: {reply:?}");
    let basic = exchange(
        port,
        &format!(
            "POST /hooks/claude-code HTTP/1.1\r\nHost: localhost\r\nAuthorization: Basic {token}\r\nContent-Length: {}",
            body.len()
        ),
        body.as_bytes(),
    );
    assert_eq!(basic.status, 401, "not a Bearer token: {basic:?}");
    wait_until(RESPONSE, "the refusals in the log", || {
        d.log_text().matches("http: refused a request").count() >= 4
    });
    let log = d.log_text();
    assert!(!log.contains(&token), "the token is in the log:\n{log}");
    assert!(
        !log.contains(&wrong),
        "the wrong token is in the log:\n{log}"
    );
    // The right token, for contrast.
    assert_eq!(
        post_to(port, &token, "/hooks/claude-code", &body).status,
        200
    );
}

#[test]
fn a_host_that_is_not_loopback_gets_403() {
    let d = start(Sandbox::new(), "");
    let (port, token) = (port(&d), token(&d));
    let body = pre_tool_use("Bash", "ls").to_string();
    for (host, status) in [
        ("evil.example", 403),
        (&format!("evil.example:{port}") as &str, 403),
        ("localhost.evil.example", 403),
        ("10.1.2.3", 403),
        (&format!("localhost:{port}"), 200),
        ("[::1]", 200),
        ("127.0.0.1", 200),
    ] {
        let reply = exchange(
            port,
            &format!(
                "POST /hooks/claude-code HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nContent-Length: {}",
                body.len()
            ),
            body.as_bytes(),
        );
        assert_eq!(reply.status, status, "Host {host}: {reply:?}");
        if status == 403 {
            assert_eq!(reply.json()["error"]["kind"], "forbidden_host");
        }
    }
}

/// The token survives a restart, and a logout or reboot too: it is kept in the state folder
/// (`$XDG_STATE_HOME/hookd`), not in the runtime folder beside the socket, which a logout or a reboot
/// erases (the agents' `HOOKD_TOKEN` stopped working after one).
#[test]
fn the_token_file_is_private_kept_across_restarts_and_reboots_and_refused_when_others_can_read_it()
{
    let sb = Sandbox::new();
    sb.settings(HTTP_ON);
    // The state folder apart from the runtime folder (`run/`, the socket's), as on a real system.
    let state_home = sb.p("state");
    let serve = |log: &str| {
        let mut cmd = serve_command(&sb, log);
        cmd.env("XDG_STATE_HOME", &state_home);
        cmd
    };
    let token_file = state_home.join("hookd/http-token");
    let first = {
        let mut child = ChildGuard(serve("first.log").spawn().expect("serve"));
        wait_until(READY, "the first daemon's http listener", || {
            std::os::unix::net::UnixStream::connect(sb.socket()).is_ok() && token_file.exists()
        });
        let mode = std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the token file's mode");
        let folder = std::fs::metadata(token_file.parent().unwrap()).unwrap();
        assert_eq!(
            folder.permissions().mode() & 0o777,
            0o700,
            "its folder's mode"
        );
        let token = read_token(&token_file);
        assert_eq!(token.len(), 64, "{token:?}");
        stop_child(&mut child.0);
        token
    };
    // A reboot: the runtime folder is gone.
    std::fs::remove_dir_all(sb.p("run")).unwrap();
    assert!(!sb.p("run/http-token").exists());
    let mut second = ChildGuard(serve("second.log").spawn().expect("serve"));
    let mut status = Value::Null;
    wait_until(READY, "the second daemon's http listener", || {
        let Ok(stream) = std::os::unix::net::UnixStream::connect(sb.socket()) else {
            return false;
        };
        status = Client::from_stream(stream).request(&json!({"op": "status"}));
        status["http"]["state"] == "listening"
    });
    assert_eq!(
        status["http"]["token_file"],
        token_file.to_str().unwrap(),
        "status shows the token's path"
    );
    assert_eq!(read_token(&token_file), first, "the token is reused");
    let port = status["http"]["listen"]
        .as_str()
        .and_then(|l| l.rsplit_once(':'))
        .and_then(|(_, p)| p.parse().ok())
        .expect("the listener's port");
    let body = pre_tool_use("Bash", "ls").to_string();
    assert_eq!(
        post_to(port, &first, "/hooks/claude-code", &body).status,
        200,
        "the token from before the reboot is taken"
    );
    stop_child(&mut second.0);

    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = run_with_deadline(serve("third.log"), None, T);
    assert_eq!(
        code(&out.status),
        1,
        "a token others can read stops the start"
    );
    // run_with_deadline captures the daemon's stderr: its log.
    let log = text(&out.stderr);
    assert!(
        log.contains("the http listener cannot start") && log.contains("mode 0640"),
        "{log}"
    );

    // A state folder others can write to is refused, and no token is made in it.
    std::fs::remove_file(&token_file).unwrap();
    std::fs::set_permissions(
        token_file.parent().unwrap(),
        std::fs::Permissions::from_mode(0o777),
    )
    .unwrap();
    let out = run_with_deadline(serve("fourth.log"), None, T);
    assert_eq!(code(&out.status), 1, "a token folder others can write to");
    assert!(
        text(&out.stderr).contains("others could replace it"),
        "{}",
        text(&out.stderr)
    );
    assert!(!token_file.exists());
}

// ---- what is asked ------------------------------------------------------------------------------------

/// A Claude Code `Write` PreToolUse of exactly `size` bytes, as an http hook's body.
fn write_body(size: usize) -> Vec<u8> {
    write_event(size, "/", Some("PreToolUse")).into_bytes()
}

/// A daemon (listening on http) whose `Write` hook refuses an event over 60 MB, with the given
/// `on_failure` (see `common::size_guard_hook`).
fn size_guard(on_failure: &str) -> Daemon {
    let sb = Sandbox::new();
    let hook = size_guard_hook(&sb, on_failure);
    start(sb, &hook)
}

/// `body` sent chunked (no length), in pieces of 1 MiB.
fn chunked(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + body.len() / 1000 + 16);
    for piece in body.chunks(1 << 20) {
        out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// The reason of a Claude Code PreToolUse refusal.
fn deny_reason(reply: &Reply) -> String {
    assert_eq!(reply.status, 200, "{reply:?}");
    claude_deny_reason(&reply.json())
}

#[test]
fn bodies_up_to_64_mib_are_decided_whole_and_past_it_as_failures_of_their_hooks() {
    let d = size_guard("refuse");
    let (port, token) = (port(&d), token(&d));
    let head = |extra: &str| {
        format!(
            "POST /hooks/claude-code HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n{extra}"
        )
    };
    let sized = |body: &[u8]| head(&format!("Content-Length: {}", body.len()));

    // 2 MiB and 64 MiB: given whole to the hook, which judges them by their size.
    let body = write_body(2 << 20);
    let reply = exchange(port, &sized(&body), &body);
    assert_eq!((reply.status, reply.body.as_str()), (200, ""), "{reply:?}");
    let body = write_body(64 << 20);
    let reason = deny_reason(&exchange(port, &sized(&body), &body));
    let seen: u64 = reason
        .strip_suffix(" bytes is too big")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the hook did not judge the event: {reason}"));
    assert!(seen > 64_000_000, "the hook saw {seen} bytes");

    // 70 MB, declared or streamed: its hook is read as failed, and on_failure = "refuse" refuses.
    let body = write_body(70_000_000);
    let failed = "hook size-guard failed: hookd could not give this hook the event: the event is 70000000 bytes, over the 64 MiB limit";
    assert_eq!(deny_reason(&exchange(port, &sized(&body), &body)), failed);
    let reply = exchange(port, &head("Transfer-Encoding: chunked"), &chunked(&body));
    assert_eq!(deny_reason(&reply), failed);

    // The default, on_failure = "ignore": let through, and the user and the daemon's log are told.
    let d = size_guard("ignore");
    let head = format!(
        "POST /hooks/claude-code HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\nContent-Length: {}",
        self::token(&d),
        body.len()
    );
    let reply = exchange(d.http_port(), &head, &body);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(
        reply.json(),
        json!({"systemMessage": "hookd: the event is 70000000 bytes, over the 64 MiB limit: 1 hook(s) could not be given it and were read as failed"})
    );
    wait_until(T, "the daemon to log the undecidable event", || {
        d.log_text().contains("an event hookd cannot decide")
    });
}

#[test]
fn deep_nesting_and_lone_surrogates_are_decided_over_http() {
    let sb = Sandbox::new();
    refuse_if(&sb, "guard.sh", "rm -rf", "rm -rf is not allowed", "");
    let d = start(
        sb,
        "[[hooks.PreToolUse]]\nname = \"guard\"\nmatcher = \"Bash\"\non_failure = \"refuse\"\ncommand = \"@DIR@/guard.sh\"\n",
    );
    // As Node's JSON.stringify writes half an emoji: the hook still sees the command, and refuses.
    let body = pre_tool_use("Bash", "rm -rf / @LONE@")
        .to_string()
        .replace("@LONE@", r"\ud83d");
    assert_eq!(
        deny_reason(&post(&d, "/hooks/claude-code", &body)),
        "rm -rf is not allowed"
    );
    // 10,000 levels deep: decided from its head, the hook read as failed.
    let mut event = pre_tool_use("Bash", "ls");
    event["tool_input"]["deep"] = json!("@DEEP@");
    let depth = 10_000;
    let body = event.to_string().replace(
        "\"@DEEP@\"",
        &format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
    );
    assert_eq!(
        deny_reason(&post(&d, "/hooks/claude-code", &body)),
        "hook guard failed: hookd could not give this hook the event: the event is nested deeper than 128 levels"
    );
}

#[test]
fn a_request_with_two_host_headers_is_refused() {
    let d = start(Sandbox::new(), "");
    let (port, token) = (port(&d), token(&d));
    let body = pre_tool_use("Bash", "ls").to_string();
    for hosts in [
        "Host: 127.0.0.1\r\nHost: evil.example",
        "Host: evil.example\r\nHost: 127.0.0.1",
        "Host: localhost\r\nHost: localhost",
    ] {
        let reply = exchange(
            port,
            &format!(
                "POST /hooks/claude-code HTTP/1.1\r\n{hosts}\r\nAuthorization: Bearer {token}\r\nContent-Length: {}",
                body.len()
            ),
            body.as_bytes(),
        );
        assert_eq!(reply.status, 400, "{hosts:?}: {reply:?}");
        assert_eq!(reply.json()["error"]["kind"], "bad_request", "{reply:?}");
    }
}

#[test]
fn garbage_gets_400_unknown_paths_404_other_methods_405() {
    let d = start(Sandbox::new(), "");
    for body in [
        "not json",
        "[1,2]",
        "{\"tool_name\":\"Bash\"}",
        "{\"hook_event_name\": 3}",
    ] {
        let reply = post(&d, "/hooks/claude-code", body);
        assert_eq!(reply.status, 400, "{body}: {reply:?}");
        assert_eq!(reply.json()["error"]["kind"], "bad_request", "{body}");
    }
    let event = pre_tool_use("Bash", "ls").to_string();
    for path in ["/hooks/cursor", "/", "/hooks/claude-code/x", "/hooks"] {
        let reply = post(&d, path, &event);
        assert_eq!(reply.status, 404, "{path}: {reply:?}");
        assert_eq!(reply.json()["error"]["kind"], "not_found");
    }
    let (port, token) = (port(&d), token(&d));
    for method in ["GET", "PUT", "DELETE"] {
        let reply = exchange(
            port,
            &format!(
                "{method} /hooks/claude-code HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\nContent-Length: 0"
            ),
            b"",
        );
        assert_eq!(reply.status, 405, "{method}: {reply:?}");
        assert_eq!(
            reply.header("allow"),
            Some("post"),
            "headers are lower-cased here"
        );
    }
    // Still serving after all that.
    assert_eq!(post(&d, "/hooks/claude-code", &event).status, 200);
}

#[test]
fn thirty_two_requests_at_once_each_get_their_own_answer() {
    let sb = Sandbox::new();
    // Answers with the command it was asked about: each reply must carry its own request's.
    sb.script(
        "echo.sh",
        "sed -n 's/.*\"command\":\"\\([^\"]*\\)\".*/\\1/p'",
    );
    let d = start(
        sb,
        "[[hooks.PreToolUse]]\nname = \"echo\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/echo.sh\"\n",
    );
    let (port, token) = (port(&d), token(&d));
    let barrier = std::sync::Barrier::new(32);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..32)
            .map(|i| {
                let (token, barrier) = (&token, &barrier);
                scope.spawn(move || {
                    let body = pre_tool_use("Bash", &format!("job-{i}")).to_string();
                    barrier.wait();
                    (i, post_to(port, token, "/hooks/claude-code", &body))
                })
            })
            .collect();
        for handle in handles {
            let (i, reply) = handle.join().expect("a client thread");
            assert_eq!(reply.status, 200, "{reply:?}");
            assert_eq!(
                reply.json()["hookSpecificOutput"]["additionalContext"],
                format!("job-{i}"),
                "{reply:?}"
            );
        }
    });
}

#[test]
fn one_connection_serves_many_requests() {
    let d = start(Sandbox::new(), "");
    let (port, token) = (port(&d), token(&d));
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(RESPONSE)).unwrap();
    let body = pre_tool_use("Read", "x").to_string();
    for _ in 0..5 {
        let request = format!(
            "POST /hooks/claude-code HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).unwrap();
        // An empty 200: the headers end the response.
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            assert_eq!(
                stream.read(&mut byte).unwrap(),
                1,
                "connection closed early"
            );
            head.push(byte[0]);
        }
        let head = text(&head).to_ascii_lowercase();
        assert!(head.starts_with("http/1.1 200"), "{head}");
        assert!(head.contains("content-length: 0"), "{head}");
    }
}

// ---- on, off, moved -----------------------------------------------------------------------------------

#[test]
fn the_listener_is_off_by_default() {
    let sb = Sandbox::new();
    sb.settings("[[hooks.Stop]]\ncommand = \"true\"\n");
    let d = Daemon::start(sb);
    let status = d.status();
    assert_eq!(status["http"]["state"], "off", "{status}");
    assert!(status["http"].get("listen").is_none(), "{status}");
    assert!(!listens_on_tcp(d.pid()), "the daemon listens on a TCP port");
    assert!(
        !token_path(&d.sb).exists(),
        "no token is made while the listener is off"
    );
}

#[test]
fn reload_starts_moves_and_stops_the_listener() {
    let sb = Sandbox::new();
    sb.settings("# nothing yet\n");
    let d = Daemon::start(sb);
    assert_eq!(d.status()["http"]["state"], "off");

    d.sb.settings(HTTP_ON);
    assert_eq!(d.reload()["ok"], true);
    let first = port(&d);
    assert!(listens_on_tcp(d.pid()));
    let event = pre_tool_use("Bash", "ls").to_string();
    assert_eq!(
        post_to(first, &token(&d), "/hooks/claude-code", &event).status,
        200
    );

    // Moved: a port that was free a moment ago.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let second = free.local_addr().unwrap().port();
    drop(free);
    d.sb.settings(&format!("[http]\nlisten = \"127.0.0.1:{second}\"\n"));
    assert_eq!(d.reload()["ok"], true);
    assert_eq!(port(&d), second);
    assert_eq!(
        post_to(second, &token(&d), "/hooks/claude-code", &event).status,
        200
    );
    wait_until(RESPONSE, "the old port to close", || {
        TcpStream::connect(("127.0.0.1", first)).is_err()
    });

    // Stopped.
    d.sb.settings("# no http\n");
    assert_eq!(d.reload()["ok"], true);
    assert_eq!(d.status()["http"]["state"], "off");
    wait_until(RESPONSE, "the listener to close", || {
        TcpStream::connect(("127.0.0.1", second)).is_err() && !listens_on_tcp(d.pid())
    });
}

#[test]
fn a_port_in_use_stops_the_start_and_keeps_the_old_listener_on_reload() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port_taken = taken.local_addr().unwrap().port();

    let sb = Sandbox::new();
    sb.settings(&format!("[http]\nlisten = \"127.0.0.1:{port_taken}\"\n"));
    let out = run_with_deadline(serve_command(&sb, "refused.log"), None, T);
    assert_eq!(code(&out.status), 1);
    let log = text(&out.stderr);
    assert!(
        log.contains("the http listener cannot start") && log.contains("already in use"),
        "{log}"
    );

    let d = start(Sandbox::new(), "");
    let before = port(&d);
    d.sb.settings(&format!("[http]\nlisten = \"127.0.0.1:{port_taken}\"\n"));
    assert_eq!(
        d.reload()["ok"],
        true,
        "the hooks of the new settings are taken"
    );
    let status = d.status();
    assert_eq!(status["http"]["state"], "error", "{status}");
    assert!(
        status["http"]["error"]
            .as_str()
            .unwrap()
            .contains("already in use"),
        "{status}"
    );
    assert_eq!(
        status["http"]["listen"],
        format!("127.0.0.1:{before}"),
        "the old listener stays"
    );
    let event = pre_tool_use("Bash", "ls").to_string();
    assert_eq!(
        post_to(before, &token(&d), "/hooks/claude-code", &event).status,
        200
    );
    drop(taken);
}

#[test]
fn a_non_loopback_address_is_a_settings_error_unless_allowed() {
    let sb = Sandbox::new();
    sb.settings("[http]\nlisten = \"0.0.0.0:8787\"\n");
    let config = sb.config();
    let out = run_hookd(&["check", "--config", config.to_str().unwrap()], None, T);
    assert_eq!(code(&out.status), 1);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{}:2:10: http.listen 0.0.0.0:8787 is not a loopback address",
            config.display()
        )),
        "{stderr}"
    );
    sb.settings("[http]\nlisten = \"0.0.0.0:8787\"\nallow_non_loopback = true\n");
    let out = run_hookd(&["check", "--config", config.to_str().unwrap()], None, T);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
}

// ---- the agent's settings -------------------------------------------------------------------------------

#[test]
fn print_settings_http_writes_claude_code_http_hooks() {
    let sb = Sandbox::new();
    sb.settings("[http]\nlisten = \"127.0.0.1:8791\"\n");
    let config = sb.config();
    let socket = sb.socket();
    let mut cmd = std::process::Command::new(BIN);
    cmd.args([
        "relay",
        "--print-settings",
        "claude-code",
        "--http",
        "--config",
        config.to_str().unwrap(),
        "--socket",
        socket.to_str().unwrap(),
    ])
    .env("XDG_STATE_HOME", state_home_for(&socket));
    let out = run_with_deadline(cmd, None, T);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    let settings: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let hook = &settings["hooks"]["PreToolUse"][0]["hooks"][0];
    assert_eq!(
        hook,
        &json!({"type": "http", "url": "http://127.0.0.1:8791/hooks/claude-code",
                "headers": {"Authorization": "Bearer $HOOKD_TOKEN"},
                "allowedEnvVars": ["HOOKD_TOKEN"], "timeout": 120})
    );
    assert_eq!(settings["hooks"]["PreToolUse"][0]["matcher"], "*");
    assert!(settings["hooks"]["Stop"][0].get("matcher").is_none());
    let note = text(&out.stderr);
    assert!(
        note.contains(&format!(
            "export HOOKD_TOKEN=\"$(cat {})\"",
            token_path(&sb).display()
        )),
        "{note}"
    );

    let out = run_hookd(
        &[
            "relay",
            "--print-settings",
            "claude-code",
            "--http",
            "--port",
            "9999",
        ],
        None,
        T,
    );
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("http://127.0.0.1:9999/hooks/claude-code"));

    // Http hooks fail closed with onFailure "block" (Claude Code 2.1.332 blocks on a hook that is
    // down, late or unreadable), where a refusal holds something back; SessionStart's command hook gets
    // the relay's --fail-closed.
    let out = run_hookd(
        &[
            "relay",
            "--print-settings",
            "claude-code",
            "--http",
            "--port",
            "9999",
            "--fail-closed",
        ],
        None,
        T,
    );
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    let settings: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let hook = |event: &str| settings["hooks"][event][0]["hooks"][0].clone();
    for event in [
        "PreToolUse",
        "UserPromptSubmit",
        "PermissionRequest",
        "PostToolUse",
    ] {
        assert_eq!(hook(event)["type"], "http", "{event}");
        assert_eq!(hook(event)["onFailure"], "block", "{event}");
        // And says so in its url, for the managed layer's require_fail_closed.
        assert_eq!(
            hook(event)["url"],
            "http://127.0.0.1:9999/hooks/claude-code?fail_closed=1",
            "{event}"
        );
    }
    // A Stop refused sends the agent on (no stop cap with hookd down); SessionEnd is too late.
    for event in ["Stop", "SubagentStop", "SessionEnd"] {
        assert!(hook(event).get("onFailure").is_none(), "{event}");
    }
    assert_eq!(hook("SessionStart")["type"], "command");
    assert!(
        hook("SessionStart")["command"]
            .as_str()
            .unwrap()
            .ends_with(" --fail-closed"),
        "{}",
        hook("SessionStart")
    );

    sb.settings("# no http\n");
    let out = run_hookd(
        &[
            "relay",
            "--print-settings",
            "claude-code",
            "--http",
            "--config",
            config.to_str().unwrap(),
        ],
        None,
        T,
    );
    assert_eq!(code(&out.status), 1);
    assert!(
        text(&out.stderr).contains("no [http] listen"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_client_that_hangs_up_has_its_hooks_stopped() {
    let sb = Sandbox::new();
    sb.script("slow.sh", "echo $$ > @DIR@/slow.pid\nexec sleep 60");
    let d = start(
        sb,
        "[[hooks.PreToolUse]]\nname = \"slow\"\ncommand = \"@DIR@/slow.sh\"\n",
    );
    let (port, token) = (port(&d), token(&d));
    let body = pre_tool_use("Bash", "ls").to_string();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "POST /hooks/claude-code HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let pid = d.sb.wait_pid("slow.pid");
    assert_eq!(d.status()["in_flight"], 1);
    drop(stream);
    wait_until(RESPONSE, "the hook to be stopped", || {
        process_gone(pid, d.pid())
    });
    wait_until(RESPONSE, "no fire in flight", || {
        d.status()["in_flight"] == 0
    });
}

#[test]
fn shutdown_lets_a_running_http_fire_finish() {
    let sb = Sandbox::new();
    sb.script(
        "slowish.sh",
        "cat >/dev/null; touch @DIR@/started; sleep 0.5; echo 'too late for rm' >&2; exit 2",
    );
    let mut d = start(
        sb,
        "[[hooks.PreToolUse]]\nname = \"slowish\"\ncommand = \"@DIR@/slowish.sh\"\n",
    );
    let (port, token) = (port(&d), token(&d));
    let body = pre_tool_use("Bash", "rm x").to_string();
    let client = std::thread::spawn(move || post_to(port, &token, "/hooks/claude-code", &body));
    wait_until(RESPONSE, "the hook to start", || d.sb.p("started").exists());
    d.signal(nix::sys::signal::Signal::SIGTERM);
    let reply = client.join().unwrap();
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(
        reply.json()["hookSpecificOutput"]["permissionDecisionReason"],
        "too late for rm"
    );
    assert!(d.wait_exit(RESPONSE).success());
}

#[test]
fn check_shows_the_http_listener() {
    let sb = Sandbox::new();
    sb.settings("[http]\nlisten = \"127.0.0.1:8787\"\n");
    let config = sb.config();
    let out = run_hookd(&["check", "--config", config.to_str().unwrap()], None, T);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("http listener on 127.0.0.1:8787"),
        "{}",
        text(&out.stdout)
    );
}

// ---- hardening: other users, refused connections, the token's rotation, planted files -------------

/// A client run as `nobody` that connects to `port` in each way another user could try, sends
/// nothing, and prints for each way `WAY EOF` when the daemon closed the connection at once or `WAY OPEN`
/// when it was still open after 5 s: a plain connect; one bound to the loopback device (SO_BINDTODEVICE,
/// which hides a socket from a lookup that does not name the device); one from each non-loopback IPv4
/// address of this machine (a loopback listener reached from another source address).
const NOBODY_WAYS: &str = r#"
import fcntl, socket, struct, sys
port = int(sys.argv[1])
ways = [("plain", None, None), ("bound-to-lo", None, b"lo")]
for index, name in socket.if_nameindex():
    if name == "lo":
        continue
    try:
        request = struct.pack("256s", name.encode()[:15])
        with socket.socket() as s:
            address = socket.inet_ntoa(fcntl.ioctl(s.fileno(), 0x8915, request)[20:24])
        ways.append(("from-" + name, address, None))
    except OSError:
        pass
for way, source, device in ways:
    s = socket.socket()
    if device:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, device)
    if source:
        s.bind((source, 0))
    s.settimeout(5)
    try:
        s.connect(("127.0.0.1", port))
        data = s.recv(100)
        print(way, "EOF" if data == b"" else "DATA")
    except socket.timeout:
        print(way, "OPEN")
    except (ConnectionResetError, BrokenPipeError):
        print(way, "EOF")
    except OSError as e:
        print(way, "SKIP", e)
"#;

/// Runs `NOBODY_WAYS` against `port`; (way, result) pairs.
fn nobody_ways(port: u16) -> Vec<(String, String)> {
    let mut cmd = as_nobody("/usr/bin/python3");
    cmd.args(["-I", "-c", NOBODY_WAYS, &port.to_string()]);
    let out = run_with_deadline(cmd, None, Duration::from_secs(120));
    let results: Vec<(String, String)> = text(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(w, r)| (w.to_string(), r.to_string()))
        .collect();
    assert!(
        results.len() >= 2,
        "the nobody client ran: {:?} {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    results
}

/// Another user's connection is closed at once, before it can send anything, however it connects (the
/// kernel's socket diagnostics say whose the client's socket is), as the Unix socket closes one: it
/// cannot hold a connection slot. Also on a listener on every address (`0.0.0.0`), reached on loopback.
#[test]
fn another_users_connection_is_closed_at_once() {
    if !require_root("an http client of another uid") {
        return;
    }
    for listen in ["127.0.0.1:0", "0.0.0.0:0"] {
        let sb = Sandbox::new();
        sb.settings(&format!(
            "[http]\nlisten = \"{listen}\"\nallow_non_loopback = true\n"
        ));
        let d = Daemon::start(sb);
        assert_eq!(d.status()["http"]["peer_check"], true, "{}", d.status());
        let port = port(&d);
        for (way, result) in nobody_ways(port) {
            assert!(
                result == "EOF" || result.starts_with("SKIP"),
                "listen {listen}: nobody's {way} connection: {result}"
            );
        }
        wait_until(T, "the log line naming the other user", || {
            d.log_text()
                .contains("closed a connection that is not this user's")
        });
        // Our own connections are served as before.
        let reply = post(
            &d,
            "/hooks/claude-code",
            &pre_tool_use("Bash", "ls").to_string(),
        );
        assert_eq!(reply.status, 200, "{reply:?}");
    }
}

/// A request refused for its token or its Host has its connection closed after the answer, even when the
/// client asked to keep it.
#[test]
fn a_refused_request_closes_its_connection() {
    let d = start(Sandbox::new(), "");
    let port = port(&d);
    let body = pre_tool_use("Bash", "ls").to_string();
    for (host, auth) in [
        (format!("127.0.0.1:{port}"), "Bearer wrong".to_string()),
        ("evil.example".to_string(), format!("Bearer {}", token(&d))),
    ] {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_read_timeout(Some(RESPONSE)).unwrap();
        let request = format!(
            "POST /hooks/claude-code HTTP/1.1\r\nHost: {host}\r\nAuthorization: {auth}\r\nConnection: keep-alive\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).unwrap();
        // read_reply reads to EOF: it returns only because the daemon closed the connection.
        let reply = read_reply(&mut stream);
        assert!(matches!(reply.status, 401 | 403), "{reply:?}");
        assert_eq!(reply.header("connection"), Some("close"), "{reply:?}");
    }
}

/// Removing the token file and reloading puts a new token in force, without a restart: the old one is
/// refused from then on.
#[test]
fn a_removed_token_is_made_anew_on_reload() {
    let d = start(Sandbox::new(), "");
    let port = port(&d);
    let old = token(&d);
    let body = pre_tool_use("Bash", "ls").to_string();
    assert_eq!(post_to(port, &old, "/hooks/claude-code", &body).status, 200);
    std::fs::remove_file(token_path(&d.sb)).unwrap();
    assert_eq!(d.reload()["ok"], true);
    let new = token(&d);
    assert_ne!(new, old);
    assert_eq!(post_to(port, &new, "/hooks/claude-code", &body).status, 200);
    assert_eq!(post_to(port, &old, "/hooks/claude-code", &body).status, 401);
    assert!(d.log_text().contains("a new token is in force"));
}

/// Turning `allow_non_loopback` on for the same address takes effect in place (no second bind of the
/// port, which would fail): a Host that is another IP address is then taken.
#[test]
fn allow_non_loopback_changes_in_place() {
    let sb = Sandbox::new();
    sb.settings(HTTP_ON);
    let d = Daemon::start(sb);
    let port = port(&d);
    let body = pre_tool_use("Bash", "ls").to_string();
    let with_host = |host: &str| status_with_host(&d, host, &body);
    assert_eq!(with_host("10.1.2.3"), 403);
    d.sb.settings(&format!(
        "[http]\nlisten = \"127.0.0.1:{port}\"\nallow_non_loopback = true\n"
    ));
    assert_eq!(d.reload()["ok"], true);
    let status = d.status();
    assert_eq!(status["http"]["state"], "listening", "{status}");
    assert_eq!(
        status["http"]["listen"],
        format!("127.0.0.1:{port}"),
        "{status}"
    );
    assert_eq!(with_host("10.1.2.3"), 200);
    assert_eq!(with_host("evil.example"), 403, "a name is never taken");
}

/// A FIFO planted where the token or the lock file goes makes `serve` refuse at once, with the reason,
/// instead of blocking forever on the open.
#[test]
fn a_fifo_in_place_of_the_token_or_the_lock_is_refused_at_once() {
    for planted in ["run/state/hookd/http-token", "run/hookd.sock.lock"] {
        let sb = Sandbox::new();
        sb.settings(HTTP_ON);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(sb.p("run/state/hookd"))
            .unwrap();
        assert_eq!(sb.p("run/state/hookd/http-token"), token_path(&sb));
        nix::unistd::mkfifo(
            &sb.p(planted),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        let out = run_with_deadline(serve_command(&sb, "daemon.log"), None, T);
        let log = text(&out.stderr);
        assert_eq!(code(&out.status), 1, "{planted}: {log}");
        assert!(log.contains("not a regular file"), "{planted}: {log}");
    }
}

/// A flood of idle connections to the listener, more than the usual file limit of 1024, leaves the
/// daemon able to serve the socket and to run hooks: the listener takes at most its share (256) and the
/// rest wait in the kernel's backlog or in their SYN retries. Before it had a share of its own, such a
/// flood used every descriptor of a daemon started with the limit of 1024, and fires over the socket
/// hung. The connects are non-blocking, so that those the backlog holds back do not stall the test.
#[test]
fn a_flood_of_idle_http_connections_leaves_the_socket_served() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, SockaddrIn, connect, socket};
    const FLOOD: usize = 1100;
    const TOP_UP_TO: usize = 2 * FLOOD;
    // This test's own process must hold the flood.
    raise_open_files(TOP_UP_TO as u64 + 512);
    let sb = Sandbox::new();
    refuse_if(&sb, "guard.sh", "rm -rf", "no rm -rf", "");
    let d = Daemon::start_with(
        {
            sb.settings(&format!(
                "{HTTP_ON}[[hooks.PreToolUse]]\nname = \"guard\"\ncommand = \"@DIR@/guard.sh\"\n"
            ));
            sb
        },
        |cmd| {
            use std::os::unix::process::CommandExt;
            unsafe {
                // Safety: only setrlimit, a system call, runs between fork and exec. The daemon starts
                // with the soft limit most sessions have.
                cmd.pre_exec(|| {
                    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE)?;
                    setrlimit(Resource::RLIMIT_NOFILE, 1024.min(hard), hard)?;
                    Ok(())
                });
            }
        },
    );
    let port = port(&d);
    let address = SockaddrIn::new(127, 0, 0, 1, port);
    let connect_one = || {
        let fd = socket(
            AddressFamily::Inet,
            SockType::Stream,
            SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
            None,
        )
        .expect("a flood socket");
        match connect(std::os::fd::AsRawFd::as_raw_fd(&fd), &address) {
            Ok(()) | Err(nix::errno::Errno::EINPROGRESS) => fd,
            Err(e) => panic!("connecting a flood socket: {e}"),
        }
    };
    let mut flood: Vec<std::os::fd::OwnedFd> = (0..FLOOD).map(|_| connect_one()).collect();
    // The flood is in before the fire is sent: either the daemon took connections until it had nearly
    // no descriptor left (as it did before the listener had a share of its own), or it took its share
    // and the kernel's accept queue for the port is full.
    let descriptors = || {
        std::fs::read_dir(format!("/proc/{}/fd", d.pid()))
            .map(|dir| dir.count())
            .unwrap_or(0)
    };
    let accept_queue = || {
        let port_hex = format!(":{port:04X}");
        std::fs::read_to_string("/proc/net/tcp")
            .unwrap_or_default()
            .lines()
            .map(|line| line.split_whitespace().collect::<Vec<_>>())
            // A listening socket (state 0A): its rx_queue is the accept queue's length.
            .find(|f| f.len() > 4 && f[1].ends_with(&port_hex) && f[3] == "0A")
            .and_then(|f| f[4].split_once(':').map(|(_, rx)| rx.to_string()))
            .and_then(|rx| usize::from_str_radix(&rx, 16).ok())
            .unwrap_or(0)
    };
    let flood_is_in = || descriptors() >= 1000 || (descriptors() >= 256 && accept_queue() >= 128);
    // A burst of connects can be answered with SYN cookies (a busy machine, the SYN queue over its
    // bound); a cookie's connection that finds the accept queue full is dropped by the server while the
    // client takes it as made, and is never retried. So the flood is topped up, a few at a time, until
    // the daemon holds its share and the queue is full, rather than hoping the first burst got there.
    let deadline = std::time::Instant::now() + T;
    while !flood_is_in() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out after {T:?} waiting for the flood to be in: {} connects, {} descriptors in the daemon, \
             {} in the accept queue",
            flood.len(),
            descriptors(),
            accept_queue()
        );
        if flood.len() < TOP_UP_TO {
            flood.extend((0..16).map(|_| connect_one()));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let refused = d.fire("PreToolUse", pre_tool_use("Bash", "rm -rf /tmp/x"));
    assert_eq!(refused["refused"], true, "{refused}");
    assert_eq!(refused["reason"], "no rm -rf", "{refused}");
    drop(flood);
    // Once the flood is gone, http is served again.
    let reply = post(
        &d,
        "/hooks/claude-code",
        &pre_tool_use("Bash", "ls").to_string(),
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(
        !d.log_text().contains("Too many open files"),
        "{}",
        d.log_text()
    );
}

/// A reload that moves the listener to another address on the port it holds (`127.0.0.1:P` to
/// `0.0.0.0:P` and back): the old listener gives the port up first, then the new one binds it.
#[test]
fn a_move_to_another_address_on_the_same_port() {
    let d = start(Sandbox::new(), "");
    let port = port(&d);
    let body = pre_tool_use("Bash", "ls").to_string();
    let with_host = |host: &str| status_with_host(&d, host, &body);
    for (listen, allow, other_ip) in [
        (format!("0.0.0.0:{port}"), true, 200),
        (format!("127.0.0.1:{port}"), false, 403),
    ] {
        d.sb.settings(&format!(
            "[http]\nlisten = \"{listen}\"\nallow_non_loopback = {allow}\n"
        ));
        assert_eq!(d.reload()["ok"], true);
        wait_until(T, &format!("the listener on {listen}"), || {
            let status = d.status();
            status["http"]["state"] == "listening" && status["http"]["listen"] == listen.as_str()
        });
        assert_eq!(
            post_to(port, &token(&d), "/hooks/claude-code", &body).status,
            200
        );
        // The Host policy moved with the listener.
        assert_eq!(
            with_host("10.1.2.3"),
            other_ip,
            "after the move to {listen}"
        );
    }
    assert!(!d.log_text().contains("already in use"), "{}", d.log_text());
}

/// A port another program holds on another address is no move of ours: the reload fails, says so, and
/// the listener in force stays where it was (it is not torn down to try).
#[test]
fn a_port_taken_elsewhere_is_no_move_and_the_listener_stays() {
    let d = start(Sandbox::new(), "");
    let port = port(&d);
    let other = std::net::TcpListener::bind(("127.0.0.2", port)).expect("binding 127.0.0.2");
    d.sb.settings(&format!("[http]\nlisten = \"127.0.0.2:{port}\"\n"));
    d.reload();
    let status = d.status();
    assert_eq!(status["http"]["state"], "error", "{status}");
    assert_eq!(
        status["http"]["listen"],
        format!("127.0.0.1:{port}"),
        "{status}"
    );
    assert!(!d.log_text().contains("moving"), "{}", d.log_text());
    drop(other);
}

/// Under the managed layer's `require_fail_closed`, an http hook that does not say it blocks when
/// hookd cannot answer (the url's `?fail_closed=1`, written beside `"onFailure": "block"`) is refused
/// as a fail-open relay is; one that says so is answered by the hooks alone.
#[test]
fn require_fail_closed_refuses_a_fail_open_http_hook() {
    if !require_root("the managed layer must be root's") {
        return;
    }
    let sb = Sandbox::new();
    let dir = crate::layers_managed::managed(&sb, "require_fail_closed = true\n");
    sb.settings(&format!("{HTTP_ON}# no hooks\n"));
    let d = Daemon::start_managed(sb, &dir);
    let call = pre_tool_use("Bash", "ls");
    let open = answer(&d, "/hooks/claude-code", call.clone()).expect("a refusal");
    assert_eq!(
        open["hookSpecificOutput"]["permissionDecision"], "deny",
        "{open}"
    );
    assert!(
        open["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .is_some_and(
                |r| r.contains("require_fail_closed") && r.contains("--http --fail-closed")
            ),
        "{open}"
    );
    assert_eq!(
        answer(&d, "/hooks/claude-code?fail_closed=1", call.clone()),
        None,
        "a fail-closed http hook, nothing to say"
    );
    // A Stop refused holds nothing back: not refused for being fail-open.
    assert_eq!(
        answer(
            &d,
            "/hooks/claude-code",
            json!({"hook_event_name": "Stop", "session_id": "s"})
        ),
        None
    );
}
