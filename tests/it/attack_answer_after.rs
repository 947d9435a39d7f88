//! A fire that waits for its hooks, attacked on its way to the journal: a client that pipelines fires
//! and hangs up unread, one that reads none of its answers, a stop with fires pending, a watcher while
//! hooks run, the `relay` request, and the journal's order against the answers'. Every fire keeps its
//! one line, a refusal says refused, and none waits on a client that does not read. (Written against a
//! tree that handed such a fire's record over only after its answer was written, af8a5b7: the two
//! tests of a refusal decided behind an unread answer failed there, its line held until the client read.)

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde_json::{Value, json};

use crate::common::*;

/// A fire request line for session `session` whose Bash command is `command`.
fn fire_line(session: &str, command: &str) -> Vec<u8> {
    let mut line = serde_json::to_vec(&json!({
        "op": "fire", "id": session, "moment": "PreToolUse", "agent": "claude-code",
        "event": {"session_id": session, "cwd": "/", "tool_name": "Bash", "tool_input": {"command": command}}
    }))
    .unwrap();
    line.push(b'\n');
    line
}

/// The journal's fire lines of the sessions starting with `prefix`, in the journal's order.
fn fire_lines(d: &Daemon, prefix: &str) -> Vec<Value> {
    d.journal()
        .into_iter()
        .filter(|r| {
            r["kind"] == "fire"
                && r["session"]
                    .as_str()
                    .is_some_and(|session| session.starts_with(prefix))
        })
        .collect()
}

fn session(record: &Value) -> String {
    record["session"].as_str().unwrap_or_default().to_owned()
}

/// Each of `sessions` has exactly one line among `lines`, and none other is there.
fn once_each(lines: &[Value], sessions: &[String]) {
    let mut seen: Vec<String> = lines.iter().map(session).collect();
    seen.sort();
    let mut expected = sessions.to_vec();
    expected.sort();
    assert_eq!(seen, expected, "each fire's line once, none missing");
}

/// A refusing hook that takes a little while: `sleep 0.05; exit 2`.
fn slow_refuser() -> Daemon {
    Daemon::with_scripts(
        &[("deny.sh", "cat >/dev/null; sleep 0.05; echo no >&2; exit 2")],
        "[[hooks.PreToolUse]]\nname = \"deny\"\ncommand = \"@DIR@/deny.sh\"\n",
    )
}

/// `count` fires of sessions `PREFIX-N`, pipelined on a new connection that reads nothing.
fn pipelined(d: &Daemon, prefix: &str, count: usize) -> (UnixStream, Vec<String>) {
    let sessions: Vec<String> = (0..count).map(|n| format!("{prefix}-{n}")).collect();
    let batch: Vec<u8> = sessions.iter().flat_map(|s| fire_line(s, "ls")).collect();
    let mut stream = UnixStream::connect(&d.socket).unwrap();
    stream.write_all(&batch).unwrap();
    (stream, sessions)
}

/// The fire lines of `sessions` (all starting with `prefix`), once there is one for each.
fn a_line_for_each(d: &Daemon, prefix: &str, sessions: &[String]) -> Vec<Value> {
    let mut lines = Vec::new();
    wait_until(RESPONSE, "a line for each fire", || {
        lines = fire_lines(d, prefix);
        lines.len() >= sessions.len()
    });
    lines
}

/// 50 fires whose hook runs and refuses, pipelined on one connection that hangs up before reading any
/// answer: each has exactly one line, refused or cut short because the client left.
#[test]
fn pipelined_hook_fires_of_a_client_that_hangs_up_unread_each_have_one_line() {
    let d = slow_refuser();
    let (stream, sessions) = pipelined(&d, "hangup", 50);
    drop(stream);
    a_line_for_each(&d, "hangup-", &sessions);
    // Any late duplicate would come within the daemon's own cleanup (2 s at most): a fire after it.
    assert_eq!(d.fire("PreToolUse", json!({"session_id": "after", "cwd": "/", "tool_name": "Bash", "tool_input": {"command": "ls"}}))["refused"], true);
    journaled(&d, "the later fire's line", |r| r["session"] == "after");
    let lines = fire_lines(&d, "hangup-");
    once_each(&lines, &sessions);
    for line in &lines {
        let refused = line["verdict"]["decision"] == "refused";
        let cut = line["cut"].is_string();
        assert!(refused || cut, "neither refused nor cut short: {line}");
        if !refused {
            assert_eq!(line["cut"], "the client left", "{line}");
        }
    }
}

/// The same, the client waiting until every hook has run (every fire decided, its answer in the socket's
/// buffer unread) before it hangs up: every line says refused.
#[test]
fn hook_fires_answered_into_an_unread_socket_each_have_one_refused_line() {
    let d = slow_refuser();
    let (stream, sessions) = pipelined(&d, "unread", 50);
    let lines = a_line_for_each(&d, "unread-", &sessions);
    drop(stream);
    once_each(&lines, &sessions);
    for line in &lines {
        assert_eq!(line["verdict"]["decision"], "refused", "{line}");
        assert_eq!(line["verdict"]["refused"], true, "{line}");
        assert!(line.get("cut").is_none(), "{line}");
    }
}

/// A hook that adds 900 kB (more than a socket's buffer) for a command `BIG`, and refuses `DENY` after a
/// second.
fn big_and_slow_deny() -> Daemon {
    Daemon::with_scripts(
        &[(
            "judge.sh",
            "input=$(cat)\ncase \"$input\" in\n  *BIG*) head -c 900000 /dev/zero | tr '\\0' a; exit 0;;\n  *DENY*) sleep 1; echo no >&2; exit 2;;\nesac\nexit 0\n",
        )],
        "[[hooks.PreToolUse]]\nname = \"judge\"\ncommand = \"@DIR@/judge.sh\"\n",
    )
}

/// A client of `d` that sends `PREFIX-big` (a BIG answer) then `PREFIX-deny` (a refusal a second
/// later), pipelined, and reads nothing.
fn stalled(d: &Daemon, prefix: &str) -> UnixStream {
    let mut stream = UnixStream::connect(&d.socket).unwrap();
    let mut batch = fire_line(&format!("{prefix}-big"), "BIG");
    batch.extend(fire_line(&format!("{prefix}-deny"), "DENY"));
    stream.write_all(&batch).unwrap();
    stream
}

/// A client pipelines a fire whose answer is larger than its socket's buffer and a fire whose hook
/// refuses a second later, and reads nothing: the refusal, decided while the connection waits for its
/// client to read the first answer, is in the journal well before the daemon's write deadline (30 s)
/// gives up on the client (the code says "a fire's record never waits on its client"), and another
/// client is served meanwhile.
#[test]
fn a_refusal_decided_behind_an_unread_answer_is_journaled_without_waiting_for_the_client() {
    let d = big_and_slow_deny();
    let stream = stalled(&d, "stall");
    let sent = Instant::now();
    journaled(&d, "the large answer's line", |r| {
        r["session"] == "stall-big"
    });
    // Another client is served while this one reads nothing.
    let other = d.fire(
        "PreToolUse",
        json!({"session_id": "stall-other", "cwd": "/", "tool_name": "Bash", "tool_input": {"command": "DENY"}}),
    );
    assert_eq!(other["refused"], true, "{other}");
    journaled(&d, "the other client's refusal", |r| {
        r["session"] == "stall-other"
    });
    let mut deny = None;
    wait_until(
        Duration::from_secs(10),
        "the refusal's line while its client reads nothing",
        || {
            deny = fire_lines(&d, "stall-deny").pop();
            deny.is_some()
        },
    );
    let deny = deny.unwrap();
    assert_eq!(deny["verdict"]["decision"], "refused", "{deny}");
    assert!(
        sent.elapsed() < Duration::from_secs(25),
        "journaled only after {:?}",
        sent.elapsed()
    );
    drop(stream);
}

/// A client that reads nothing for a while, its refusals journaled meanwhile, then reads: it is given
/// every answer, once, whole, in the order the journal has their lines.
#[test]
fn a_client_that_reads_late_is_given_every_answer_in_the_journals_order() {
    let d = big_and_slow_deny();
    let mut client = d.connect();
    let mut sessions = vec!["lateread-big".to_string()];
    let mut batch = fire_line("lateread-big", "BIG");
    for n in 0..5 {
        let session = format!("lateread-deny-{n}");
        batch.extend(fire_line(&session, "DENY"));
        sessions.push(session);
    }
    client.send_raw(&batch);
    let mut lines = Vec::new();
    wait_until(
        RESPONSE,
        "every line while the client reads nothing",
        || {
            lines = fire_lines(&d, "lateread-");
            lines.len() >= sessions.len()
        },
    );
    let mut answered = Vec::new();
    for _ in &sessions {
        let answer = client.recv();
        let id = answer["id"].as_str().unwrap().to_owned();
        assert_eq!(answer["refused"], id.contains("deny"), "{answer}");
        if id == "lateread-big" {
            assert_eq!(adds(&answer).concat().len(), 900_000);
        }
        answered.push(id);
    }
    once_each(&lines, &sessions);
    let journaled: Vec<String> = lines.iter().map(session).collect();
    assert_eq!(journaled, answered, "the journal's order is the answers'");
    // Nothing more: each answer once.
    assert_eq!(
        client.request(&json!({"op": "status", "id": "st"}))["id"],
        "st"
    );
}

/// The same stalled client, and the daemon killed (SIGKILL: an OOM kill, a crash) once the refusal's
/// line is in the journal, its answer still unread behind the first: the line is in the file, whole, and
/// is not written twice by anything the kill cut short.
#[test]
fn a_refusal_decided_behind_an_unread_answer_survives_a_kill_seconds_later() {
    let mut d = big_and_slow_deny();
    let stream = stalled(&d, "kill");
    journaled(&d, "the large answer's line", |r| {
        r["session"] == "kill-big"
    });
    // Its line within the time a client would wait for it, well before the write deadline (30 s).
    wait_until(Duration::from_secs(10), "the refusal's line", || {
        !fire_lines(&d, "kill-deny").is_empty()
    });
    d.signal(Signal::SIGKILL);
    d.wait_exit(Duration::from_secs(30));
    let deny = fire_lines(&d, "kill-deny");
    assert_eq!(deny.len(), 1, "the refusal's line, lost with the daemon");
    assert_eq!(deny[0]["verdict"]["decision"], "refused", "{}", deny[0]);
    drop(stream);
}

/// The same stalled client, waited out: once the daemon's write deadline closes its connection, the
/// refusal decided behind the unread answer is journaled, once, as refused (it is never lost).
#[test]
fn a_refusal_decided_behind_an_unread_answer_is_journaled_by_the_write_deadline_at_the_latest() {
    let d = big_and_slow_deny();
    let stream = stalled(&d, "late");
    let mut deny = Vec::new();
    wait_until(
        Duration::from_secs(60),
        "the refusal's line, by the write deadline",
        || {
            deny = fire_lines(&d, "late-deny");
            !deny.is_empty()
        },
    );
    drop(stream);
    // Any second line would come within the connection's cleanup: a fire after it, waited for.
    let after = d.fire("PreToolUse", json!({"session_id": "late-after", "cwd": "/", "tool_name": "Bash", "tool_input": {"command": "ls"}}));
    assert_eq!(after["ok"], true, "{after}");
    journaled(&d, "the later fire's line", |r| {
        r["session"] == "late-after"
    });
    let deny = fire_lines(&d, "late-deny");
    assert_eq!(deny.len(), 1, "{deny:?}");
    assert_eq!(deny[0]["verdict"]["decision"], "refused", "{}", deny[0]);
    assert_eq!(fire_lines(&d, "late-big").len(), 1);
}

/// SIGTERM with hook fires pending on a client that reads nothing (one answer stuck in its socket, a
/// refusal decided behind it, others still running): every fire has its line once the daemon has exited.
#[test]
fn a_stop_with_hook_fires_pending_and_answers_unwritten_leaves_every_line() {
    let mut d = big_and_slow_deny();
    let mut stream = UnixStream::connect(&d.socket).unwrap();
    let mut sessions = vec!["term-big".to_string()];
    let mut batch = fire_line("term-big", "BIG");
    for n in 0..10 {
        let session = format!("term-deny-{n}");
        batch.extend(fire_line(&session, "DENY"));
        sessions.push(session);
    }
    stream.write_all(&batch).unwrap();
    journaled(&d, "the large answer's line", |r| {
        r["session"] == "term-big"
    });
    // Some refusals decided behind the unread answer (the large answer's fire and two more answered),
    // then the stop.
    wait_until(Duration::from_secs(10), "refusals decided", || {
        d.log_text().matches("fire answered").count() >= 3
    });
    d.signal(Signal::SIGTERM);
    let status = d.wait_exit(Duration::from_secs(60));
    assert!(status.success(), "{status:?}");
    let lines = fire_lines(&d, "term-");
    once_each(&lines, &sessions);
    for line in &lines {
        let s = session(line);
        if s.starts_with("term-deny") {
            let refused = line["verdict"]["decision"] == "refused";
            assert!(refused || line["cut"].is_string(), "{line}");
        }
    }
    drop(stream);
}

/// SIGTERM right after 30 pipelined hook fires, their client reading nothing: every line written.
#[test]
fn a_stop_right_after_pipelined_hook_fires_leaves_every_line() {
    let mut d = slow_refuser();
    let (stream, sessions) = pipelined(&d, "stop", 30);
    wait_until(RESPONSE, "the first line", || {
        !fire_lines(&d, "stop-").is_empty()
    });
    d.signal(Signal::SIGTERM);
    let status = d.wait_exit(Duration::from_secs(60));
    assert!(status.success(), "{status:?}");
    let lines = fire_lines(&d, "stop-");
    once_each(&lines, &sessions);
    for line in &lines {
        let refused = line["verdict"]["decision"] == "refused";
        assert!(refused || line["cut"].is_string(), "{line}");
    }
    drop(stream);
}

/// A watcher while 40 pipelined hook fires run and refuse: it is sent every fire's record, whole, once.
#[test]
fn a_watcher_gets_every_hook_fires_record_whole() {
    let d = slow_refuser();
    let mut watcher = d.connect();
    let started = watcher.request(&json!({"op": "watch", "id": "w", "moment": "PreToolUse"}));
    assert_eq!(started["watching"], true, "{started}");
    let sessions: Vec<String> = (0..40).map(|n| format!("watched-{n}")).collect();
    let batch: Vec<u8> = sessions.iter().flat_map(|s| fire_line(s, "ls")).collect();
    let mut client = d.connect();
    client.send_raw(&batch);
    for _ in &sessions {
        assert_eq!(client.recv()["refused"], true);
    }
    let mut seen = Vec::new();
    while seen.len() < sessions.len() {
        let record = watcher.recv();
        assert_eq!(record["kind"], "fire", "{record}");
        assert_eq!(record["verdict"]["decision"], "refused", "{record}");
        assert_eq!(record["hooks"][0]["name"], "deny", "{record}");
        assert_eq!(record["tool"], "Bash", "{record}");
        seen.push(record);
    }
    once_each(&seen, &sessions);
}

/// The `relay` request (docs/protocol.md) with a hook that refuses: answered as the relay answers, and
/// its fire's line says refused; a relay request whose client hangs up before its answer still has its
/// line.
#[test]
fn relay_requests_whose_hooks_run_have_their_lines() {
    let d = slow_refuser();
    let input = json!({"hook_event_name": "PreToolUse", "session_id": "relayed-1", "cwd": "/",
        "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}});
    let answer = d
        .connect()
        .request(&json!({"op": "relay", "id": 1, "agent": "claude-code",
        "input": input.to_string()}));
    assert_eq!(answer["ok"], true, "{answer}");
    assert_eq!(answer["refusal"], "no", "{answer}");
    let line = journaled(&d, "the relayed fire's line", |r| {
        r["session"] == "relayed-1"
    });
    assert_eq!(line["kind"], "fire", "{line}");
    assert_eq!(line["verdict"]["decision"], "refused", "{line}");
    assert_eq!(line["tool"], "Bash", "{line}");
    assert_eq!(line["summary"], "rm -rf /", "{line}");

    let sessions: Vec<String> = (0..20).map(|n| format!("relayed-gone-{n}")).collect();
    let mut batch = Vec::new();
    for (n, s) in sessions.iter().enumerate() {
        let input = json!({"hook_event_name": "PreToolUse", "session_id": s, "cwd": "/",
            "tool_name": "Bash", "tool_input": {"command": "ls"}});
        batch.extend(
            serde_json::to_vec(&json!({"op": "relay", "id": n, "agent": "claude-code",
                "input": input.to_string()}))
            .unwrap(),
        );
        batch.push(b'\n');
    }
    let mut stream = UnixStream::connect(&d.socket).unwrap();
    stream.write_all(&batch).unwrap();
    drop(stream);
    let mut lines = Vec::new();
    wait_until(RESPONSE, "a line for each relayed fire", || {
        lines = fire_lines(&d, "relayed-gone-");
        lines.len() >= sessions.len()
    });
    once_each(&lines, &sessions);
    for line in &lines {
        assert_eq!(line["tool"], "Bash", "described: {line}");
        let refused = line["verdict"]["decision"] == "refused";
        assert!(refused || line["cut"].is_string(), "{line}");
    }
}

/// Fires pipelined on one connection whose hooks take different times (so they are decided out of the
/// order sent): the journal holds their lines in the order their answers came, each once, refusals
/// said refused.
#[test]
fn hook_fires_lines_are_in_the_order_answered() {
    let d = Daemon::with_scripts(
        &[(
            "vary.sh",
            "input=$(cat)\ncase \"$input\" in\n  *slow*) sleep 0.3;;\n  *mid*) sleep 0.1;;\nesac\ncase \"$input\" in\n  *deny*) echo no >&2; exit 2;;\nesac\nexit 0\n",
        )],
        "[[hooks.PreToolUse]]\nname = \"vary\"\ncommand = \"@DIR@/vary.sh\"\n",
    );
    let mut client = d.connect();
    let mut sent = Vec::new();
    let mut batch = Vec::new();
    for n in 0..30 {
        let speed = ["slow", "mid", "fast"][n % 3];
        let verdict = if n % 2 == 0 { "deny" } else { "pass" };
        let session = format!("order-{n}");
        batch.extend(fire_line(&session, &format!("{speed} {verdict}")));
        sent.push((session, verdict == "deny"));
    }
    client.send_raw(&batch);
    let mut answered = Vec::new();
    for _ in &sent {
        let answer = client.recv();
        let id = answer["id"].as_str().unwrap().to_owned();
        let refused = sent.iter().find(|(s, _)| *s == id).unwrap().1;
        assert_eq!(answer["refused"], refused, "{answer}");
        answered.push(id);
    }
    assert_ne!(
        answered,
        sent.iter().map(|(s, _)| s.clone()).collect::<Vec<_>>(),
        "decided out of order"
    );
    let mut lines = Vec::new();
    wait_until(RESPONSE, "every line", || {
        lines = fire_lines(&d, "order-");
        lines.len() >= sent.len()
    });
    let journaled: Vec<String> = lines.iter().map(session).collect();
    assert_eq!(journaled, answered, "the journal's order is the answers'");
    for line in &lines {
        let refused = sent.iter().find(|(s, _)| *s == session(line)).unwrap().1;
        let decision = if refused { "refused" } else { "none" };
        assert_eq!(line["verdict"]["decision"], decision, "{line}");
    }
}

/// A `relay` request's fire decided at once (no hook matches) and one given up on past the request's
/// `timeout` (its hook still running) each have their line, with what the event said.
#[test]
fn relay_requests_decided_at_once_or_given_up_on_have_described_lines() {
    let d = Daemon::with_scripts(
        &[("slow.sh", "cat >/dev/null; sleep 5; exit 2")],
        "[[hooks.PreToolUse]]\nname = \"slow\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/slow.sh\"\n",
    );
    let relay = |session: &str, tool: &str, timeout: f64| {
        let input = json!({"hook_event_name": "PreToolUse", "session_id": session, "cwd": "/",
            "tool_name": tool, "tool_input": {"command": "ls", "file_path": "/etc/hosts"}});
        d.connect().request(
            &json!({"op": "relay", "id": session, "agent": "claude-code",
            "input": input.to_string(), "timeout": timeout}),
        )
    };
    let at_once = relay("relay-at-once", "Read", 100.0);
    assert_eq!(at_once["ok"], true, "{at_once}");
    assert!(at_once.get("refusal").is_none(), "{at_once}");
    let line = journaled(&d, "the relayed fire decided at once", |r| {
        r["session"] == "relay-at-once"
    });
    assert_eq!(line["tool"], "Read", "{line}");
    assert_eq!(line["moment"], "PreToolUse", "{line}");
    assert_eq!(line["verdict"]["decision"], "none", "{line}");

    let given_up = relay("relay-given-up", "Bash", 0.5);
    assert_eq!(given_up["ok"], true, "{given_up}");
    let line = journaled(&d, "the relayed fire given up on", |r| {
        r["session"] == "relay-given-up"
    });
    assert_eq!(line["tool"], "Bash", "{line}");
    assert_eq!(line["summary"], "ls", "{line}");
    assert!(line["cut"].is_string(), "{line}");
    for session in ["relay-at-once", "relay-given-up"] {
        assert_eq!(fire_lines(&d, session).len(), 1, "{session}");
    }
}

/// A buggy hook that ignores SIGTERM and outlives the connection's grace for its fires (2 s), its client
/// hung up: the fires' tasks are dropped unfinished, and each still has its one line.
#[test]
fn fires_whose_hooks_ignore_the_stop_of_a_client_gone_each_have_one_line() {
    let d = Daemon::with_scripts(
        &[(
            "stubborn.sh",
            "trap '' TERM; echo $$ >> @DIR@/started; cat >/dev/null; sleep 4; echo no >&2; exit 2",
        )],
        "[[hooks.PreToolUse]]\nname = \"stubborn\"\ncommand = \"@DIR@/stubborn.sh\"\n",
    );
    let (stream, sessions) = pipelined(&d, "stubborn", 5);
    // The hooks started before the client leaves.
    let started = || -> Vec<i32> {
        std::fs::read_to_string(d.sb.p("started"))
            .unwrap_or_default()
            .lines()
            .filter_map(|pid| pid.parse().ok())
            .collect()
    };
    wait_until(RESPONSE, "the hooks to start", || !started().is_empty());
    drop(stream);
    a_line_for_each(&d, "stubborn-", &sessions);
    // Once the hooks are gone (stopped with SIGKILL after ignoring SIGTERM, or at their own end) and a
    // later fire's line is written, no second line of theirs comes.
    wait_until(
        Duration::from_secs(20),
        "the stubborn hooks to be gone",
        || started().iter().all(|&pid| process_gone(pid, d.pid())),
    );
    let after = d.fire(
        "PreToolUse",
        json!({"session_id": "stubborn-after", "cwd": "/", "tool_name": "Read", "tool_input": {}}),
    );
    assert_eq!(after["ok"], true, "{after}");
    journaled(&d, "the later fire's line", |r| {
        r["session"] == "stubborn-after"
    });
    let lines: Vec<Value> = fire_lines(&d, "stubborn-")
        .into_iter()
        .filter(|line| session(line) != "stubborn-after")
        .collect();
    once_each(&lines, &sessions);
    for line in &lines {
        let refused = line["verdict"]["decision"] == "refused";
        assert!(refused || line["cut"].is_string(), "{line}");
    }
}
