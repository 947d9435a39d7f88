//! Hooks hung live over the socket (docs/protocol.md, "Live hooks"): the real daemon, a raw socket client
//! that attaches hooks, answers the calls it is sent and detaches them, and agents' fires on other
//! connections that wait for its answers.

use std::thread;

use crate::common::*;
use serde_json::{Value, json};

/// A daemon whose one PreToolUse hook, from the file, adds "from the file".
fn daemon_with_a_file_hook() -> Daemon {
    Daemon::with_scripts(
        &[("file.sh", "echo 'from the file'")],
        "[[hooks.PreToolUse]]\nname = \"file\"\ncommand = \"@DIR@/file.sh\"\n",
    )
}

/// A Bash call of `session`.
fn bash_in(session: &str, command: &str) -> Value {
    json!({"session_id": session, "tool_name": "Bash", "tool_input": {"command": command}})
}

/// A fire of `moment` by Claude Code, asked on a connection of its own in a thread, as an agent's relay
/// would while the live client answers.
fn fire_in_thread(d: &Daemon, moment: &str, event: Value) -> thread::JoinHandle<Value> {
    let socket = d.socket.clone();
    let moment = moment.to_string();
    thread::spawn(move || {
        let mut agent = Client::connect(&socket);
        agent.request(&json!({"op": "fire", "id": "f", "moment": moment, "agent": "claude-code", "event": event}))
    })
}

/// Attaches `hooks` for the client `client` on `c`; the response.
fn attach(c: &mut Client, client: &str, hooks: Value) -> Value {
    let r = c.request(&json!({"op": "attach", "id": 1, "client": client, "hooks": hooks}));
    assert_eq!(r["id"], 1, "{r}");
    assert_eq!(r["ok"], true, "{r}");
    r
}

/// The next line on `c`, which must be a call.
fn next_call(c: &mut Client) -> Value {
    let call = c.recv();
    assert_eq!(call["op"], "call", "expected a call: {call}");
    assert!(call["call"].as_u64().is_some(), "{call}");
    call
}

#[test]
fn a_live_hook_refuses_its_session_and_never_sees_another_and_detach_takes_it_down() {
    let d = daemon_with_a_file_hook();
    let mut live = d.connect();
    let r = attach(
        &mut live,
        "my-ide",
        json!([{"name": "approve", "moment": "PreToolUse", "matcher": "Bash",
                "agents": ["claude-code"], "session": "S1", "timeout": 30, "on_failure": "ignore"}]),
    );
    assert_eq!(r["attached"], json!(["approve"]), "{r}");
    assert_eq!(r["refused"], json!([]), "{r}");

    // A call in S1 reaches the client, which refuses it: the fire waits for its answer.
    let fire = fire_in_thread(&d, "PreToolUse", bash_in("S1", "git push"));
    let call = next_call(&mut live);
    assert_eq!(call["hook"], "approve", "{call}");
    assert_eq!(call["moment"], "PreToolUse", "{call}");
    assert_eq!(call["event"]["session_id"], "S1", "{call}");
    assert_eq!(call["event"]["tool_input"]["command"], "git push", "{call}");
    assert_eq!(call["event"]["hook_event_name"], "PreToolUse", "{call}");
    live.send(&json!({"op": "answer", "call": call["call"], "refused": "pushes wait for review"}));
    let r = fire.join().unwrap();
    check_fire_shape(&r);
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(r["reason"], "pushes wait for review", "{r}");
    // After the file's hooks, and named as live.
    assert_eq!(hook_names(&r), vec!["file", "approve"], "{r}");
    assert_eq!(hook(&r, "approve")["outcome"], "refused", "{r}");
    assert_eq!(hook(&r, "approve")["layer"], "live:my-ide", "{r}");
    assert!(hook(&r, "file").get("layer").is_none(), "{r}");
    assert_eq!(adds(&r), vec!["from the file"], "{r}");

    // S2 is not its session: the fire does not wait for it, and the client is sent nothing (the next
    // line it reads is the answer to what it asks next).
    let r = d.fire_req(
        json!({"op": "fire", "moment": "PreToolUse", "agent": "claude-code",
                              "event": bash_in("S2", "git push")}),
    );
    assert_eq!(r["refused"], false, "{r}");
    assert_eq!(hook_names(&r), vec!["file"], "{r}");
    let s = live.request(&json!({"op": "status", "id": "s"}));
    assert_eq!(s["id"], "s", "the client was sent something for S2: {s}");

    // Another agent's fire in S1 is not its either.
    let r = d.fire_req(
        json!({"op": "fire", "moment": "PreToolUse", "agent": "codex",
                              "event": bash_in("S1", "git push")}),
    );
    assert_eq!(hook_names(&r), vec!["file"], "{r}");

    // Taken down: S1 goes through again.
    let r = live.request(&json!({"op": "detach", "id": 2, "hooks": ["approve"]}));
    assert_eq!(r["id"], 2, "{r}");
    assert_eq!(r["detached"], json!(["approve"]), "{r}");
    let r = d.fire_req(
        json!({"op": "fire", "moment": "PreToolUse", "agent": "claude-code",
                              "event": bash_in("S1", "git push")}),
    );
    assert_eq!(r["refused"], false, "{r}");
    assert_eq!(hook_names(&r), vec!["file"], "{r}");
}

#[test]
fn a_live_hooks_answer_is_read_as_a_workers_and_folded_in_the_order_hung() {
    let d = daemon_with_a_file_hook();
    let mut first = d.connect();
    let mut second = d.connect();
    attach(
        &mut first,
        "one",
        json!([{"name": "adds", "moment": "PreToolUse"}]),
    );
    attach(
        &mut second,
        "two",
        json!([{"name": "asks", "moment": "PreToolUse"}]),
    );
    let fire = fire_in_thread(&d, "PreToolUse", bash_in("S", "make"));
    // Answered in the other order than hung: the fold keeps the order hung.
    let asked = next_call(&mut second);
    second.send(&json!({"op": "answer", "call": asked["call"],
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
                               "permissionDecisionReason": "a person decides"}}));
    let added = next_call(&mut first);
    first.send(&json!({"op": "answer", "call": added["call"], "adds": "from one"}));
    let r = fire.join().unwrap();
    check_fire_shape(&r);
    assert_eq!(hook_names(&r), vec!["file", "adds", "asks"], "{r}");
    assert_eq!(adds(&r), vec!["from the file", "from one"], "{r}");
    assert_eq!(r["permission"], "ask", "{r}");
    assert_eq!(r["reason"], "a person decides", "{r}");
    assert_eq!(hook(&r, "asks")["layer"], "live:two", "{r}");
}
