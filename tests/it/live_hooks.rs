//! Hooks hung live over the socket (docs/protocol.md, "Live hooks"): the real daemon, a raw socket client
//! that attaches hooks, answers the calls it is sent and detaches them, and agents' fires on other
//! connections that wait for its answers.

use std::thread;
use std::time::Duration;

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
pub(crate) fn bash_in(session: &str, command: &str) -> Value {
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

/// Attaches `hooks` for the client `client` on `c`; the response, whatever it says.
pub(crate) fn attach_answer(c: &mut Client, client: &str, hooks: Value) -> Value {
    let r = c.request(&json!({"op": "attach", "id": 1, "client": client, "hooks": hooks}));
    assert_eq!(r["id"], 1, "{r}");
    r
}

/// [`attach_answer`], which must be taken.
fn attach(c: &mut Client, client: &str, hooks: Value) -> Value {
    let r = attach_answer(c, client, hooks);
    assert_eq!(r["ok"], true, "{r}");
    r
}

/// The next line on `c`, which must be a call.
pub(crate) fn next_call(c: &mut Client) -> Value {
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

/// A fire as [`fire_in_thread`], whose answer must come within `deadline` (the test fails past it):
/// for what must be answered long before the hook's own timeout.
pub(crate) fn fire_within(
    d: &Daemon,
    deadline: Duration,
    moment: &str,
    event: Value,
) -> thread::JoinHandle<Value> {
    let socket = d.socket.clone();
    let moment = moment.to_string();
    thread::spawn(move || {
        let stream = std::os::unix::net::UnixStream::connect(&socket).expect("connecting");
        let mut agent = Client::from_stream(stream.try_clone().expect("cloning"));
        // The clones share one socket: this deadline is the client's.
        stream.set_read_timeout(Some(deadline)).expect("a deadline");
        agent.request(&json!({"op": "fire", "id": "f", "moment": moment, "agent": "claude-code", "event": event}))
    })
}

/// The live hooks `status` lists.
pub(crate) fn live_in_status(d: &Daemon) -> Vec<Value> {
    d.status()["live"].as_array().cloned().unwrap_or_default()
}

#[test]
fn hooks_hung_where_they_can_never_run_are_refused_in_the_answer_and_the_rest_are_hung() {
    let d = daemon_with_a_file_hook();
    // A session already ended.
    let r = d.fire_req(
        json!({"op": "fire", "moment": "SessionEnd", "agent": "claude-code",
                              "event": {"session_id": "S0", "reason": "exit"}}),
    );
    assert_eq!(r["ok"], true, "{r}");
    let mut live = d.connect();
    let r = attach(
        &mut live,
        "flow",
        json!([
            {"name": "typo", "moment": "PreToolUze"},
            {"name": "codex-notes", "moment": "Notification", "agents": ["codex"]},
            {"name": "stop-bash", "moment": "Stop", "matcher": "Bash"},
            {"name": "over", "moment": "PreToolUse", "session": "S0"},
            {"name": "misspelt", "moment": "Stop", "sesion": "S1"},
            {"name": "good", "moment": "Stop", "agents": ["codex"]},
            {"name": "good", "moment": "Stop"},
        ]),
    );
    assert_eq!(r["attached"], json!(["good"]), "{r}");
    let reasons: Vec<(String, String)> = r["refused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|refused| {
            (
                refused["name"].as_str().unwrap().to_string(),
                refused["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let reason = |name: &str| {
        reasons
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, reason)| reason.clone())
            .unwrap_or_else(|| panic!("{name} not refused: {r}"))
    };
    assert_eq!(reasons.len(), 6, "{r}");
    assert!(
        reason("typo").contains("(did you mean \"PreToolUse\"?)"),
        "{r}"
    );
    assert!(
        reason("codex-notes").starts_with("codex never fires Notification"),
        "{r}"
    );
    assert!(reason("stop-bash").contains("no field to match"), "{r}");
    assert!(
        reason("over").contains("session S0 has already ended"),
        "{r}"
    );
    assert!(
        reason("misspelt").contains("did you mean \"session\""),
        "{r}"
    );
    // The second of one name on one connection.
    assert_eq!(reasons[5].0, "good", "{r}");
    assert!(
        reasons[5].1.contains("already hung a hook named \"good\""),
        "{r}"
    );
    let hung = live_in_status(&d);
    assert_eq!(hung.len(), 1, "{hung:?}");
    assert_eq!(hung[0]["hook"], "good");
}

#[test]
fn a_client_killed_mid_call_makes_the_fire_follow_its_on_failure_at_once() {
    let d = daemon_with_a_file_hook();
    for (on_failure, refused) in [("refuse", true), ("ignore", false)] {
        let mut live = d.connect();
        attach(
            &mut live,
            "dies",
            json!([{"name": "guard", "moment": "PreToolUse", "timeout": 30, "on_failure": on_failure}]),
        );
        // Answered long before the hook's 30 s.
        let fire = fire_within(
            &d,
            Duration::from_secs(10),
            "PreToolUse",
            bash_in("S", "rm -rf x"),
        );
        next_call(&mut live);
        // Killed: the kernel closes its socket, and nothing more comes from it.
        drop(live);
        let r = fire
            .join()
            .expect("the fire was answered before its deadline");
        check_fire_shape(&r);
        assert_eq!(r["refused"], refused, "{on_failure}: {r}");
        let guard = hook(&r, "guard");
        assert_eq!(
            guard["outcome"],
            if refused { "refused" } else { "failed" },
            "{r}"
        );
        assert!(
            guard["error"]
                .as_str()
                .unwrap()
                .contains("connection ended"),
            "{r}"
        );
        // And the hook is down: the next fire does not wait for it.
        wait_until(Duration::from_secs(10), "the hook taken down", || {
            live_in_status(&d).is_empty()
        });
        let r = d.fire("PreToolUse", bash_in("S", "rm -rf x"));
        assert_eq!(hook_names(&r), vec!["file"], "{r}");
    }
}

#[test]
fn a_silent_client_is_cut_at_its_timeout_while_other_clients_fires_go_on() {
    let d = daemon_with_a_file_hook();
    let mut silent = d.connect();
    let mut answering = d.connect();
    attach(
        &mut silent,
        "silent",
        json!([{"name": "mute", "moment": "PreToolUse", "session": "slow", "timeout": 5}]),
    );
    attach(
        &mut answering,
        "quick",
        json!([{"name": "quick", "moment": "PreToolUse", "session": "fast"}]),
    );
    let slow = fire_in_thread(&d, "PreToolUse", bash_in("slow", "ls"));
    let call = next_call(&mut silent);
    assert_eq!(call["event"]["session_id"], "slow", "{call}");
    // The silent client says nothing; another client's fire is answered meanwhile.
    let fast = fire_in_thread(&d, "PreToolUse", bash_in("fast", "ls"));
    let call = next_call(&mut answering);
    answering.send(&json!({"op": "answer", "call": call["call"], "adds": "quick said"}));
    let r = fast.join().unwrap();
    assert_eq!(adds(&r), vec!["from the file", "quick said"], "{r}");
    assert!(
        !slow.is_finished(),
        "the silent client's fire ended before its hook's timeout"
    );
    // Cut at its timeout: it said nothing.
    let r = slow.join().unwrap();
    check_fire_shape(&r);
    assert_eq!(r["refused"], false, "{r}");
    assert_eq!(hook(&r, "mute")["outcome"], "failed", "{r}");
    assert_eq!(hook(&r, "mute")["error"], "timed out after 5s", "{r}");
    // Its late answer is dropped, and said to be.
    silent.send(&json!({"op": "answer", "call": call["call"], "refused": "too late"}));
    let r = silent.recv();
    assert_eq!(error_kind(&r), "bad_request", "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no longer pending"),
        "{r}"
    );
}

#[test]
fn session_end_takes_the_sessions_hooks_down_and_tells_the_client() {
    let d = daemon_with_a_file_hook();
    let mut live = d.connect();
    attach(
        &mut live,
        "ide",
        json!([{"name": "s1-only", "moment": "PreToolUse", "session": "S1"},
               {"name": "every", "moment": "Stop"}]),
    );
    // Another session's end leaves it.
    d.fire_req(
        json!({"op": "fire", "moment": "SessionEnd", "agent": "claude-code",
                      "event": {"session_id": "S2", "reason": "exit"}}),
    );
    assert_eq!(live_in_status(&d).len(), 2);
    d.fire_req(
        json!({"op": "fire", "moment": "SessionEnd", "agent": "claude-code",
                      "event": {"session_id": "S1", "reason": "exit"}}),
    );
    let told = live.recv();
    assert_eq!(told["op"], "detached", "{told}");
    assert_eq!(told["hooks"], json!(["s1-only"]), "{told}");
    assert!(told["reason"].as_str().unwrap().contains("S1"), "{told}");
    let hung = live_in_status(&d);
    assert_eq!(hung.len(), 1, "{hung:?}");
    assert_eq!(hung[0]["hook"], "every", "{hung:?}");
    let r = d.fire("PreToolUse", bash_in("S1", "ls"));
    assert_eq!(hook_names(&r), vec!["file"], "{r}");
}

#[test]
fn status_lists_live_hooks_the_journal_names_them_and_a_disconnect_takes_them_down() {
    let d = daemon_with_a_file_hook();
    let mut live = d.connect();
    attach(
        &mut live,
        "watcher",
        json!([{"name": "note", "moment": "PreToolUse", "session": "S1", "agents": ["claude-code"]}]),
    );
    let fire = fire_in_thread(&d, "PreToolUse", bash_in("S1", "ls"));
    let call = next_call(&mut live);
    live.send(&json!({"op": "answer", "call": call["call"], "refused": "not now"}));
    let r = fire.join().unwrap();
    assert_eq!(r["reason"], "not now", "{r}");

    let hung = live_in_status(&d);
    assert_eq!(hung.len(), 1, "{hung:?}");
    assert_eq!(hung[0]["client"], "watcher");
    assert_eq!(hung[0]["pid"], std::process::id());
    assert_eq!(hung[0]["hook"], "note");
    assert_eq!(hung[0]["moment"], "PreToolUse");
    assert_eq!(hung[0]["session"], "S1");
    assert_eq!(hung[0]["agents"], json!(["claude-code"]));
    assert_eq!(hung[0]["calls"], 1);

    // The journal names it, and where it came from.
    let journal = state_home_for(&d.socket)
        .join("hookd")
        .join("journal.jsonl");
    let mut named = None;
    wait_until(Duration::from_secs(10), "the fire in the journal", || {
        let text = std::fs::read_to_string(&journal).unwrap_or_default();
        named = text
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|record| record["kind"] == "fire")
            .flat_map(|record| record["hooks"].as_array().cloned().unwrap_or_default())
            .find(|hook| hook["name"] == "note");
        named.is_some()
    });
    let named = named.unwrap();
    assert_eq!(named["layer"], "live:watcher", "{named}");
    assert_eq!(named["outcome"], "refused", "{named}");

    // A disconnect takes it down.
    drop(live);
    wait_until(Duration::from_secs(10), "the hook taken down", || {
        live_in_status(&d).is_empty()
    });
    let r = d.fire("PreToolUse", bash_in("S1", "ls"));
    assert_eq!(hook_names(&r), vec!["file"], "{r}");
}

// ---- A hostile client. ----

#[test]
fn a_flood_of_attaches_is_bounded_per_connection_and_per_daemon() {
    let d = daemon_with_a_file_hook();
    let hooks = |from: usize| -> Value {
        (from..from + 64)
            .map(|i| json!({"name": format!("h{i}"), "moment": "Stop", "session": "never"}))
            .collect()
    };
    // More than a connection may hang, in one attach: refused whole.
    let mut first = d.connect();
    let mut too_many: Vec<Value> = hooks(0).as_array().unwrap().clone();
    too_many.push(json!({"name": "one-more", "moment": "Stop"}));
    let r = first.request(&json!({"op": "attach", "id": 1, "client": "flood", "hooks": too_many}));
    assert_eq!(error_kind(&r), "bad_request", "{r}");
    // As many as it may, then one more, refused.
    let r = attach(&mut first, "flood", hooks(0));
    assert_eq!(r["attached"].as_array().unwrap().len(), 64, "{r}");
    let r = attach(
        &mut first,
        "flood",
        json!([{"name": "h64", "moment": "Stop"}]),
    );
    assert_eq!(r["attached"], json!([]), "{r}");
    assert!(
        r["refused"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("as many as one may"),
        "{r}"
    );
    // Up to the daemon's bound over other connections, then refused.
    let mut others: Vec<Client> = Vec::new();
    for n in 1..16 {
        let mut c = d.connect();
        let r = attach(&mut c, "flood", hooks(n * 64));
        assert_eq!(r["attached"].as_array().unwrap().len(), 64, "{r}");
        others.push(c);
    }
    let mut last = d.connect();
    let r = attach(
        &mut last,
        "flood",
        json!([{"name": "past", "moment": "Stop"}]),
    );
    assert_eq!(r["attached"], json!([]), "{r}");
    assert!(
        r["refused"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("the daemon holds 1024"),
        "{r}"
    );
    assert_eq!(live_in_status(&d).len(), 1024);
    // None of them is this session's: a Stop does not wait for any.
    let r = d.fire("Stop", json!({"session_id": "S"}));
    assert_eq!(r["hooks"], json!([]), "{r}");
    // Gone with their connections.
    drop(others);
    wait_until(Duration::from_secs(10), "the hooks taken down", || {
        live_in_status(&d).len() == 64
    });
    let r = attach(
        &mut last,
        "flood",
        json!([{"name": "past", "moment": "Stop"}]),
    );
    assert_eq!(r["attached"], json!(["past"]), "{r}");
}

#[test]
fn an_answer_out_of_step_or_a_line_that_cannot_be_read_fails_the_calls_pending_at_once() {
    let d = daemon_with_a_file_hook();
    for wrong in [
        &br#"{"op":"answer","call":999,"refused":"meant for another"}"#[..],
        br#"{"op":"answer","refused":"which call?"}"#,
        br#"{"op":"answer","call":"1"}"#,
        b"{\"op\":\"answer\",\"call\":1,\"refused\":",
    ] {
        let mut live = d.connect();
        attach(
            &mut live,
            "confused",
            json!([{"name": "strict", "moment": "PreToolUse", "timeout": 30, "on_failure": "refuse"}]),
        );
        let fire = fire_within(
            &d,
            Duration::from_secs(10),
            "PreToolUse",
            bash_in("S", "ls"),
        );
        next_call(&mut live);
        let mut line = wrong.to_vec();
        line.push(b'\n');
        live.send_raw(&line);
        let said = live.recv();
        assert_eq!(said["ok"], false, "{said}");
        let r = fire.join().expect("the fire was answered at once");
        assert_eq!(
            r["refused"],
            true,
            "{}: {r}",
            String::from_utf8_lossy(wrong)
        );
        assert_eq!(hook(&r, "strict")["outcome"], "refused", "{r}");
        // The connection goes on: the hook is still hung and answers the next call.
        let fire = fire_in_thread(&d, "PreToolUse", bash_in("S", "ls"));
        let call = next_call(&mut live);
        live.send(&json!({"op": "answer", "call": call["call"]}));
        let r = fire.join().unwrap();
        assert_eq!(r["refused"], false, "{r}");
    }
    // An answer from a connection that was never called.
    let mut stranger = d.connect();
    let r = stranger.request(&json!({"op": "answer", "call": 1, "allow": "sure"}));
    assert_eq!(error_kind(&r), "out_of_step", "{r}");
}

#[test]
fn a_huge_answer_fails_closed_and_the_daemon_goes_on() {
    let d = daemon_with_a_file_hook();
    let mut live = d.connect();
    attach(
        &mut live,
        "huge",
        json!([{"name": "flood", "moment": "PreToolUse", "on_failure": "ignore"}]),
    );
    let fire = fire_in_thread(&d, "PreToolUse", bash_in("S", "ls"));
    let call = next_call(&mut live);
    live.send(&json!({"op": "answer", "call": call["call"], "adds": "x".repeat(3 << 20)}));
    let r = fire.join().unwrap();
    check_fire_shape(&r);
    // Cut, it may have been a refusal too large to carry: refused, whatever its on_failure.
    assert_eq!(
        r["refused"],
        true,
        "{}",
        &r.to_string()[..500.min(r.to_string().len())]
    );
    assert_eq!(hook(&r, "flood")["outcome"], "refused");
    assert_eq!(hook(&r, "flood")["truncated"], true);
    assert_eq!(d.status()["ok"], true);
}

#[test]
fn a_client_that_never_reads_fails_its_calls_and_holds_up_no_other_clients_fires() {
    // No hook of the file: only the live hooks' ways are loaded.
    let d = Daemon::with_scripts(&[], "# no hooks of the file\n");
    // It hangs a hook, then reads nothing more.
    let mut deaf = d.connect();
    attach(
        &mut deaf,
        "deaf",
        json!([{"name": "deaf", "moment": "PreToolUse", "session": "deaf", "timeout": 1}]),
    );
    let mut hearing = d.connect();
    attach(
        &mut hearing,
        "hearing",
        json!([{"name": "hearing", "moment": "PreToolUse", "session": "ok"}]),
    );
    // Calls of 240 KB each (under the size that needs a large-line permit), more than its socket and
    // its queue (4 MiB) hold together. (The deadline is for a machine under load: each is answered at
    // its hook's timeout at most.)
    let big = "y".repeat(240 << 10);
    let fires: Vec<_> = (0..30)
        .map(|_| {
            fire_within(
                &d,
                Duration::from_secs(60),
                "PreToolUse",
                bash_in("deaf", &big),
            )
        })
        .collect();
    // Meanwhile another client's fire goes on.
    let other = fire_in_thread(&d, "PreToolUse", bash_in("ok", "ls"));
    let call = next_call(&mut hearing);
    hearing.send(&json!({"op": "answer", "call": call["call"], "adds": "heard"}));
    let r = other.join().unwrap();
    assert_eq!(adds(&r), vec!["heard"], "{r}");
    let mut not_reading = 0;
    for fire in fires {
        let r = fire
            .join()
            .expect("each fire answered, at its hook's timeout at most");
        assert_eq!(r["refused"], false, "{}", hook(&r, "deaf"));
        let deaf = hook(&r, "deaf");
        assert_eq!(deaf["outcome"], "failed");
        let error = deaf["error"].as_str().unwrap();
        assert!(
            error == "timed out after 1s" || error.contains("not reading its calls"),
            "{error}"
        );
        not_reading += usize::from(error.contains("not reading its calls"));
    }
    assert!(
        not_reading > 0,
        "no call was failed for a client that reads nothing"
    );
    drop(deaf);
}

#[test]
fn another_user_cannot_hang_a_hook() {
    if !require_root("a client of another uid") {
        return;
    }
    let d = daemon_with_a_file_hook();
    d.another_user_is_told_nothing(&[
        r#"{"op":"attach","id":1,"client":"x","hooks":[{"name":"h","moment":"PreToolUse"}]}"#,
    ]);
    assert!(live_in_status(&d).is_empty());
    let r = d.fire("PreToolUse", bash_in("S", "ls"));
    assert_eq!(hook_names(&r), vec!["file"], "{r}");
}

#[test]
fn a_client_that_sends_no_more_or_turns_to_watching_answers_no_call_and_its_hooks_go() {
    let d = daemon_with_a_file_hook();
    // Half-closed: it can read, but never answer.
    let stream = std::os::unix::net::UnixStream::connect(&d.socket).unwrap();
    let mut half = Client::from_stream(stream.try_clone().unwrap());
    attach(
        &mut half,
        "half",
        json!([{"name": "h", "moment": "PreToolUse", "timeout": 30, "on_failure": "refuse"}]),
    );
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    wait_until(Duration::from_secs(10), "the hook taken down", || {
        live_in_status(&d).is_empty()
    });
    // A watcher.
    let mut watcher = d.connect();
    attach(
        &mut watcher,
        "watcher",
        json!([{"name": "w", "moment": "PreToolUse", "timeout": 30, "on_failure": "refuse"}]),
    );
    let r = watcher.request(&json!({"op": "watch", "id": "w"}));
    assert_eq!(r["watching"], true, "{r}");
    assert!(live_in_status(&d).is_empty());
    let r = d.fire("PreToolUse", bash_in("S", "ls"));
    assert_eq!(hook_names(&r), vec!["file"], "{r}");
    // A name or a client with a control character (a line of its own in the log) is refused.
    let mut c = d.connect();
    let r = attach(&mut c, "ok", json!([{"name": "a\nb", "moment": "Stop"}]));
    assert_eq!(r["attached"], json!([]), "{r}");
    let r = c.request(&json!({"op": "attach", "id": 1, "client": "x\ny", "hooks": []}));
    assert_eq!(error_kind(&r), "bad_request", "{r}");
}
