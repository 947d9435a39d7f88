//! The socket's `relay` request (docs/protocol.md, "relay"): an agent's raw hook input, answered with
//! the stdout, stderr and exit status `hookd relay` would give for it, by the same code. Held against
//! `hookd relay` itself: every captured input of every agent, fail-open and `--fail-closed`, a daemon
//! that refuses, one with no hook, and one silent past the relay's timeout.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::attack_relay::{fixture_args, fixtures};
use crate::common::*;

/// A safety net for one run (never a speed assertion).
const T: Duration = Duration::from_secs(20);

/// The agents hookd serves (captured inputs of others are in the fixtures too).
const KNOWN: &[&str] = &[
    "claude-code",
    "codex",
    "gemini-cli",
    "qwen-code",
    "copilot-cli",
];

/// What a `relay` request answers for `args` (the relay's words) and `input`, as `hookd relay` says it.
fn asked(d: &Daemon, args: &[&str], input: &str) -> Said {
    let response = d.connect().request(&request(args, input));
    assert_eq!(response["ok"], true, "{args:?}: {response}");
    Said {
        code: response["exit"].as_i64().unwrap() as i32,
        stdout: response["stdout"].as_str().unwrap().to_string(),
        stderr: response["stderr"].as_str().unwrap().to_string(),
    }
}

/// The `relay` request for the relay's words `args` (as `--print-settings` writes them) and `input`.
fn request(args: &[&str], input: &str) -> Value {
    let mut request = json!({"op": "relay", "id": 1, "input": input});
    let mut words = args.iter();
    while let Some(word) = words.next() {
        match *word {
            "--fail-closed" => request["fail_closed"] = json!(true),
            "--timeout" => {
                let seconds: f64 = words.next().unwrap().parse().unwrap();
                request["timeout"] = json!(seconds);
            }
            option => {
                let key = option.trim_start_matches("--");
                request[key] = json!(words.next().unwrap());
            }
        }
    }
    request
}

/// `hookd relay` and the `relay` request give the same answer for `args` and `input`.
fn alike(d: &Daemon, args: &[&str], input: &str, state: &Path) {
    let relay = relay_said(BIN, &["relay"], args, input, state, T);
    let request = asked(d, args, input);
    assert_eq!(relay, request, "{args:?}, {input}");
}

#[test]
fn every_captured_input_is_answered_as_hookd_relay_answers_it() {
    let d = refusing_daemon();
    let socket = d.socket.to_str().unwrap().to_string();
    let state = d.sb.p("state");
    let mut refused = 0;
    for (_, agent, event, input) in fixtures() {
        let args = fixture_args(&agent, &event, &socket);
        if !KNOWN.contains(&agent.as_str()) {
            // An agent hookd does not serve: the request is refused, and a client hands the call to
            // `hookd relay`, which says so in its own way.
            let response = d.connect().request(&request(&args, &input));
            assert_eq!(response["error"]["kind"], "bad_request", "{response}");
            continue;
        }
        alike(&d, &args, &input, &state);
        let mut closed = args.clone();
        closed.push("--fail-closed");
        alike(&d, &closed, &input, &state);
        let said = asked(&d, &args, &input);
        refused += usize::from(format!("{}{}", said.stdout, said.stderr).contains("not today"));
    }
    // Not a daemon that says nothing: the refusals are there, and alike.
    assert!(refused >= 10, "only {refused} inputs were refused");
    // Inputs no agent sends: empty, not JSON, another agent's event, a moment nobody hooks.
    for (agent, input) in [
        ("claude-code", ""),
        ("codex", "{"),
        (
            "codex",
            r#"{"hook_event_name":"BeforeTool","tool_name":"run_shell_command"}"#,
        ),
        (
            "claude-code",
            r#"{"hook_event_name":"Notification","message":"hi"}"#,
        ),
        ("claude-code", r#"{"hook_event_name":"NoSuchMoment"}"#),
    ] {
        for closed in [false, true] {
            let args = relay_words(agent, &socket, &[], closed);
            alike(&d, &args, input, &state);
        }
    }
}

#[test]
fn a_fire_past_the_relays_timeout_is_answered_as_the_relay_answers_it() {
    let d = Daemon::with_scripts(
        &[("slow.sh", "cat >/dev/null\nsleep 5")],
        "[[hooks.PreToolUse]]\nname = \"slow\"\ncommand = \"@DIR@/slow.sh\"\ntimeout = 10\n",
    );
    let socket = d.socket.to_str().unwrap().to_string();
    let state = d.sb.p("state");
    let input = fixture("claude-code", "PreToolUse-1.json");
    for closed in [false, true] {
        let args = relay_words("claude-code", &socket, &["--timeout", "0.3"], closed);
        let relay = relay_said(BIN, &["relay"], &args, &input, &state, T);
        let request = asked(&d, &args, &input);
        assert_eq!(relay, request);
        let told = format!("{}{}", request.stdout, request.stderr);
        let said = if closed {
            "hookd is not running"
        } else {
            "did not answer in time"
        };
        assert!(told.contains(said), "{request:?}");
    }
}

#[test]
fn a_bad_relay_request_is_an_error_and_the_connection_lives() {
    let d = Daemon::start(Sandbox::new());
    let mut client = d.connect();
    for (request, says) in [
        (
            json!({"op": "relay", "id": 1, "agent": "nope", "input": "{}"}),
            "unknown agent",
        ),
        (json!({"op": "relay", "id": 2, "input": "{}"}), "\"agent\""),
        (
            json!({"op": "relay", "id": 3, "agent": "codex"}),
            "\"input\"",
        ),
        (
            json!({"op": "relay", "id": 4, "agent": "codex", "input": "{}", "timeout": 0}),
            "\"timeout\"",
        ),
        (
            json!({"op": "relay", "id": 5, "agent": "codex", "input": "x".repeat((1 << 20) + 1)}),
            "at most 1048576",
        ),
    ] {
        let response = client.request(&request);
        assert_eq!(response["ok"], false, "{response}");
        assert_eq!(response["id"], request["id"], "{response}");
        assert_eq!(response["error"]["kind"], "bad_request", "{response}");
        let message = response["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{message}");
    }
    let status = client.request(&json!({"op": "status", "id": 9}));
    assert_eq!(status["ok"], true, "{status}");
}
