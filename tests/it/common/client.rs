//! A client of the socket's line protocol, and what every test checks of a response.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

use serde_json::{Value, json};

use super::RESPONSE;

/// One connection speaking the line protocol.
pub struct Client {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
}

impl Client {
    pub fn connect(path: &Path) -> Client {
        let stream =
            UnixStream::connect(path).unwrap_or_else(|e| panic!("connecting to {path:?}: {e}"));
        Client::from_stream(stream)
    }

    pub fn from_stream(stream: UnixStream) -> Client {
        stream
            .set_read_timeout(Some(RESPONSE))
            .expect("read timeout");
        let reader = BufReader::new(stream.try_clone().expect("cloning the stream"));
        Client {
            writer: stream,
            reader,
        }
    }

    /// Sends raw bytes (a line must end in `\n`).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("writing to the socket");
    }

    /// Sends a request; an error (the daemon closed the connection) is returned, not a panic.
    pub fn try_send(&mut self, v: &Value) -> std::io::Result<()> {
        let mut line = serde_json::to_string(v).unwrap();
        line.push('\n');
        self.writer.write_all(line.as_bytes())
    }

    pub fn send(&mut self, v: &Value) {
        let mut line = serde_json::to_string(v).unwrap();
        line.push('\n');
        self.send_raw(line.as_bytes());
    }

    /// The next line, or None at EOF (a reset connection counts as EOF). Panics on the read deadline.
    pub fn read_line(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) => Some(line),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => None,
            Err(e) => panic!("reading a response line: {e} (after {RESPONSE:?} at most)"),
        }
    }

    /// The next response, parsed. Panics at EOF, on the deadline, or if the line is not JSON.
    pub fn recv(&mut self) -> Value {
        let line = self
            .read_line()
            .expect("the daemon closed the connection instead of answering");
        assert!(
            line.ends_with('\n'),
            "response line not terminated by \\n: {line:?}"
        );
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("response is not JSON ({e}): {line:?}"))
    }

    pub fn request(&mut self, v: &Value) -> Value {
        self.send(v);
        self.recv()
    }

    /// Reads until the daemon closes the connection; panics if more data comes first.
    pub fn expect_eof(&mut self) {
        let mut rest = Vec::new();
        match self.reader.read_to_end(&mut rest) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(e) => panic!("waiting for the daemon to close the connection: {e}"),
        }
        assert!(
            rest.is_empty(),
            "expected the connection closed, got more data: {:?}",
            String::from_utf8_lossy(&rest)
        );
    }
}

/// Checks a fire response against contract section 9: `ok`, `refused`, `adds`, `reason` exactly when
/// refused, and each hook entry's fields.
pub fn check_fire_shape(resp: &Value) {
    assert_eq!(resp["ok"], true, "fire failed: {resp}");
    let refused = resp["refused"]
        .as_bool()
        .unwrap_or_else(|| panic!("`refused` not a bool: {resp}"));
    assert!(resp["adds"].is_array(), "`adds` not an array: {resp}");
    assert!(
        resp["adds"]
            .as_array()
            .unwrap()
            .iter()
            .all(Value::is_string),
        "`adds` holds a non-string: {resp}"
    );
    let permission = resp.get("permission").map(|p| {
        p.as_str()
            .unwrap_or_else(|| panic!("`permission` not a string: {resp}"))
    });
    assert!(
        matches!(permission, None | Some("allow" | "ask")),
        "unknown permission: {resp}"
    );
    if permission == Some("ask") {
        assert!(
            refused,
            "an ask must hold the call back (`refused`): {resp}"
        );
    }
    if permission == Some("allow") {
        assert!(!refused, "an allow beside a refusal: {resp}");
    }
    if refused {
        assert!(
            resp["reason"].is_string(),
            "refused without a string `reason`: {resp}"
        );
    } else if permission.is_none() {
        assert!(
            resp.get("reason").is_none(),
            "`reason` present though neither refused nor allowed: {resp}"
        );
    }
    if let Some(input) = resp.get("input") {
        assert!(input.is_object(), "`input` not an object: {resp}");
        assert!(
            !refused || permission == Some("ask"),
            "a refused call rewritten: {resp}"
        );
    }

    let hooks = resp["hooks"]
        .as_array()
        .unwrap_or_else(|| panic!("`hooks` not an array: {resp}"));
    for h in hooks {
        assert!(h["name"].is_string(), "hook without a name: {resp}");
        let outcome = h["outcome"]
            .as_str()
            .unwrap_or_else(|| panic!("hook without an outcome: {h}"));
        assert!(
            [
                "nothing", "adds", "rewrote", "allowed", "asked", "refused", "failed", "skipped"
            ]
            .contains(&outcome),
            "unknown outcome {outcome:?}: {h}"
        );
        assert!(h["ms"].is_number(), "hook without a numeric `ms`: {h}");
        if let Some(exit) = h.get("exit") {
            assert!(exit.is_i64(), "`exit` not an integer: {h}");
        }
        if outcome == "failed" {
            assert!(
                h["error"].is_string(),
                "failed hook without an `error`: {h}"
            );
        }
        if let Some(t) = h.get("truncated") {
            assert_eq!(
                t,
                &Value::Bool(true),
                "`truncated` present but not true: {h}"
            );
        }
    }
}

/// The entry for hook `name` in a fire response.
pub fn hook<'a>(resp: &'a Value, name: &str) -> &'a Value {
    resp["hooks"]
        .as_array()
        .and_then(|hs| hs.iter().find(|h| h["name"] == name))
        .unwrap_or_else(|| panic!("no hook {name:?} in the response: {resp}"))
}

/// The names of the hooks that ran, in the response's order.
pub fn hook_names(resp: &Value) -> Vec<String> {
    resp["hooks"]
        .as_array()
        .unwrap_or_else(|| panic!("no `hooks` array: {resp}"))
        .iter()
        .map(|h| h["name"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The `adds` of a fire response as strings.
pub fn adds(resp: &Value) -> Vec<String> {
    resp["adds"]
        .as_array()
        .unwrap_or_else(|| panic!("no `adds` array: {resp}"))
        .iter()
        .map(|a| a.as_str().unwrap_or("").to_string())
        .collect()
}

/// A plain PreToolUse event for the Bash tool.
pub fn bash_event() -> Value {
    json!({"session_id": "s1", "tool_name": "Bash", "tool_input": {"command": "ls"}})
}

/// The error kind of an error response, which must have a message.
pub fn error_kind(resp: &Value) -> &str {
    assert_eq!(resp["ok"], false, "expected an error: {resp}");
    assert!(
        resp["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "error without a message: {resp}"
    );
    resp["error"]["kind"]
        .as_str()
        .unwrap_or_else(|| panic!("error without a kind: {resp}"))
}

/// Connects to `socket` without blocking: `None` when the listener's backlog is full (or nothing
/// listens), where a blocking connect would wait.
pub fn connect_without_blocking(socket: &Path) -> Option<UnixStream> {
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, UnixAddr};
    let fd = nix::sys::socket::socket(
        AddressFamily::Unix,
        SockType::Stream,
        SockFlag::SOCK_NONBLOCK,
        None,
    )
    .expect("a socket");
    let address = UnixAddr::new(socket).expect("a socket address");
    nix::sys::socket::connect(std::os::fd::AsRawFd::as_raw_fd(&fd), &address)
        .ok()
        .map(|()| UnixStream::from(fd))
}
