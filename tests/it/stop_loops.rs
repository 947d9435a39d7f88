//! Stop loops (contract section 14), through the socket and through the relay: consecutive refused Stops
//! are counted per (agent, `session_id`), Stop hooks see the count as `stop_refusals`, and once it
//! reaches `stop_refusal_cap` the next Stop goes through whatever the hooks say, with an `adds` that says
//! why; a Stop let through or a new prompt of the session starts the count over.

use std::time::Duration;

use crate::common::*;
use serde_json::{Value, json};

/// A safety net for one relay run (never a speed assertion).
const T: Duration = Duration::from_secs(20);

/// The cap the tests set (the default is 8).
const CAP: u64 = 3;

/// A daemon with `stop_refusal_cap = 3` and a Stop hook that appends its stdin to `stops.log` and always
/// refuses (exit 2, the reason on stderr), unless the event says `"let_go": true`. A UserPromptSubmit
/// hook logs its stdin too, so that a test can tell it ran.
fn nagging_daemon() -> Daemon {
    let sb = Sandbox::new();
    sb.script(
        "nag.sh",
        "input=$(cat)\nprintf '%s\\n' \"$input\" >> @DIR@/stops.log\n\
         case \"$input\" in *'\"let_go\":true'*) exit 0 ;; esac\n\
         echo 'the tests still fail: fix them' >&2\nexit 2",
    );
    sb.script("prompt.sh", "cat >> @DIR@/prompts.log");
    sb.settings(&format!(
        "[defaults]\nstop_refusal_cap = {CAP}\n\n\
         [[hooks.Stop]]\nname = \"nag\"\ncommand = \"@DIR@/nag.sh\"\n\n\
         [[hooks.UserPromptSubmit]]\nname = \"prompt\"\ncommand = \"@DIR@/prompt.sh\"\n"
    ));
    Daemon::start(sb)
}

/// The events the Stop hook saw, in order.
fn seen(d: &Daemon) -> Vec<Value> {
    let text = std::fs::read_to_string(d.sb.p("stops.log")).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}")))
        .collect()
}

/// Fires a Stop of `session` as `agent` through the socket; returns the response and the
/// `stop_refusals` the hook saw.
fn stop(d: &Daemon, agent: &str, session: &str, extra: Value) -> (Value, u64) {
    let before = seen(d).len();
    let mut event =
        json!({"session_id": session, "stop_hook_active": true, "last_assistant_message": "done"});
    for (k, v) in extra.as_object().unwrap() {
        event[k] = v.clone();
    }
    let resp = d.fire_req(
        json!({"op": "fire", "id": "stop", "moment": "Stop", "agent": agent, "event": event}),
    );
    let events = seen(d);
    assert_eq!(
        events.len(),
        before + 1,
        "the Stop hook ran once for this Stop: {resp}"
    );
    let last = events.last().unwrap();
    assert_eq!(last["session_id"], session, "{last}");
    assert_eq!(last["hook_event_name"], "Stop", "{last}");
    let refusals = last["stop_refusals"]
        .as_u64()
        .unwrap_or_else(|| panic!("no integer stop_refusals in the Stop event: {last}"));
    (resp, refusals)
}

/// A Stop that must be refused, the hook having seen `count`.
fn refused_stop(d: &Daemon, agent: &str, session: &str, count: u64) {
    let (resp, seen) = stop(d, agent, session, json!({}));
    assert_eq!(
        seen, count,
        "{agent}/{session}: stop_refusals in the event: {resp}"
    );
    assert_eq!(
        resp["refused"],
        true,
        "{agent}/{session}: Stop #{} should be refused: {resp}",
        count + 1
    );
    assert_eq!(resp["reason"], "the tests still fail: fix them", "{resp}");
    assert!(adds(&resp).is_empty(), "no adds below the cap: {resp}");
}

/// The Stop past the cap: let through, whatever the hook said, with adds naming the cap.
fn capped_stop(d: &Daemon, agent: &str, session: &str) {
    let (resp, seen) = stop(d, agent, session, json!({}));
    assert_eq!(seen, CAP, "{agent}/{session}: {resp}");
    assert_eq!(
        resp["refused"], false,
        "{agent}/{session}: the Stop past the cap goes through: {resp}"
    );
    assert_eq!(
        hook(&resp, "nag")["outcome"],
        "refused",
        "the hook still refused: {resp}"
    );
    let adds = adds(&resp);
    assert!(
        adds.iter().any(|a| a.contains("stop_refusal_cap")),
        "the adds say the cap was reached: {resp}"
    );
}

#[test]
fn refused_three_times_then_let_through_then_counting_starts_over() {
    let d = nagging_daemon();
    for count in 0..CAP {
        refused_stop(&d, "claude-code", "s1", count);
    }
    capped_stop(&d, "claude-code", "s1");
    // The Stop let through ended the run: the next one is counted from zero again.
    refused_stop(&d, "claude-code", "s1", 0);
    refused_stop(&d, "claude-code", "s1", 1);
}

#[test]
fn the_count_in_the_event_is_the_daemons_not_the_clients() {
    let d = nagging_daemon();
    let (resp, seen) = stop(&d, "claude-code", "s1", json!({"stop_refusals": 99}));
    assert_eq!(seen, 0, "a client cannot set the count: {resp}");
    assert_eq!(resp["refused"], true, "{resp}");
    let (resp, seen) = stop(&d, "claude-code", "s1", json!({"stop_refusals": 0}));
    assert_eq!(seen, 1, "{resp}");
    refused_stop(&d, "claude-code", "s1", 2);
    capped_stop(&d, "claude-code", "s1");
}

#[test]
fn a_stop_not_refused_resets_the_count() {
    let d = nagging_daemon();
    refused_stop(&d, "codex", "s1", 0);
    refused_stop(&d, "codex", "s1", 1);
    let (resp, seen) = stop(&d, "codex", "s1", json!({"let_go": true}));
    assert_eq!(seen, 2, "{resp}");
    assert_eq!(resp["refused"], false, "{resp}");
    assert!(adds(&resp).is_empty(), "{resp}");
    for count in 0..CAP {
        refused_stop(&d, "codex", "s1", count);
    }
    capped_stop(&d, "codex", "s1");
}

#[test]
fn a_prompt_of_the_same_session_resets_the_count() {
    let d = nagging_daemon();
    refused_stop(&d, "claude-code", "s1", 0);
    refused_stop(&d, "claude-code", "s1", 1);
    // A prompt of another session, or of another agent's session, changes nothing here.
    for (agent, session) in [("claude-code", "s2"), ("codex", "s1")] {
        let resp = d.fire_req(
            json!({"op": "fire", "id": 1, "moment": "UserPromptSubmit", "agent": agent,
                                     "event": {"session_id": session, "prompt": "other"}}),
        );
        assert_eq!(resp["refused"], false, "{resp}");
    }
    refused_stop(&d, "claude-code", "s1", 2);
    // A new prompt in the session: counting starts over.
    let resp = d.fire_req(
        json!({"op": "fire", "id": 2, "moment": "UserPromptSubmit", "agent": "claude-code",
                                 "event": {"session_id": "s1", "prompt": "now do this"}}),
    );
    assert_eq!(resp["refused"], false, "{resp}");
    assert!(
        d.sb.read("prompts.log").contains("now do this"),
        "the prompt hook ran"
    );
    for count in 0..CAP {
        refused_stop(&d, "claude-code", "s1", count);
    }
    capped_stop(&d, "claude-code", "s1");
}

#[test]
fn each_session_and_each_agent_has_its_own_count() {
    let d = nagging_daemon();
    refused_stop(&d, "claude-code", "s1", 0);
    refused_stop(&d, "claude-code", "s1", 1);
    refused_stop(&d, "claude-code", "s2", 0);
    refused_stop(&d, "codex", "s1", 0);
    refused_stop(&d, "claude-code", "s1", 2);
    refused_stop(&d, "codex", "s1", 1);
    refused_stop(&d, "claude-code", "s2", 1);
    capped_stop(&d, "claude-code", "s1");
    // s1 of claude-code reaching the cap let nothing else through.
    refused_stop(&d, "claude-code", "s2", 2);
    refused_stop(&d, "codex", "s1", 2);
    capped_stop(&d, "codex", "s1");
    capped_stop(&d, "claude-code", "s2");
}

#[test]
fn the_count_follows_a_connections_hello_agent() {
    // A fire without `agent` counts under the connection's hello agent, with the same session.
    let d = nagging_daemon();
    let mut c = d.connect();
    let hello = c.request(&json!({"op": "hello", "id": "h", "agent": "codex"}));
    assert_eq!(hello["ok"], true, "{hello}");
    for i in 0..CAP {
        let resp = c.request(
            &json!({"op": "fire", "id": i, "moment": "Stop", "event": {"session_id": "s1"}}),
        );
        assert_eq!(resp["refused"], true, "{resp}");
    }
    // The same session as codex, on a fresh connection: the count is the hello agent's.
    capped_stop(&d, "codex", "s1");
}

// ---- through the relay ------------------------------------------------------------------------------

/// Runs the relay as `agent` with `input`; returns (exit, stdout parsed, stderr).
fn relay(d: &Daemon, agent: &str, input: &str) -> (i32, Value, String) {
    let out = run_hookd(
        &[
            "relay",
            "--agent",
            agent,
            "--socket",
            d.socket.to_str().unwrap(),
        ],
        Some(input),
        T,
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    let v = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("relay stdout is not JSON ({e}): {stdout:?} {stderr:?}"));
    (code(&out.status), v, stderr)
}

/// Through the relay, with each agent's real Stop input: refused CAP times in the agent's dialect, the
/// hook seeing the count; then let through, with the note in `systemMessage` and no `decision`.
fn cap_through_the_relay(agent: &str, file: &str, decision: &str) {
    let d = nagging_daemon();
    let input = fixture(agent, file);
    for count in 0..CAP {
        let (code, v, err) = relay(&d, agent, &input);
        assert_eq!(
            (code, err.as_str()),
            (0, ""),
            "{agent} Stop #{}: {v}",
            count + 1
        );
        assert_eq!(
            v,
            json!({"decision": decision, "reason": "the tests still fail: fix them"}),
            "{agent} Stop #{}",
            count + 1
        );
        assert_eq!(
            seen(&d).last().unwrap()["stop_refusals"],
            count,
            "{agent}: the hook sees the count"
        );
    }
    let (code, v, err) = relay(&d, agent, &input);
    assert_eq!((code, err.as_str()), (0, ""), "{agent} past the cap: {v}");
    assert!(
        v.get("decision").is_none(),
        "{agent}: the Stop past the cap is not refused: {v}"
    );
    let message = v["systemMessage"]
        .as_str()
        .unwrap_or_else(|| panic!("{agent}: the note goes to the user as systemMessage: {v}"));
    assert!(message.contains("stop_refusal_cap"), "{agent}: {v}");
    assert_eq!(seen(&d).last().unwrap()["stop_refusals"], CAP);
    // And the next Stop is counted from zero.
    let (_, v, _) = relay(&d, agent, &input);
    assert_eq!(v["decision"], decision, "{agent}: {v}");
    assert_eq!(seen(&d).last().unwrap()["stop_refusals"], 0);
}

#[test]
fn gemini_after_agent_is_capped_through_the_relay() {
    cap_through_the_relay("gemini-cli", "AfterAgent.json", "deny");
}

#[test]
fn codex_stop_is_capped_through_the_relay() {
    cap_through_the_relay("codex", "Stop-1.json", "block");
}

#[test]
fn claude_code_stop_is_capped_through_the_relay() {
    cap_through_the_relay("claude-code", "Stop-2.json", "block");
}

#[test]
fn a_gemini_before_agent_through_the_relay_resets_the_count() {
    let d = nagging_daemon();
    let after = fixture("gemini-cli", "AfterAgent.json");
    for _ in 0..2 {
        let (_, v, _) = relay(&d, "gemini-cli", &after);
        assert_eq!(v["decision"], "deny", "{v}");
    }
    assert_eq!(seen(&d).last().unwrap()["stop_refusals"], 1);
    // BeforeAgent is UserPromptSubmit, of the same session: the count starts over.
    let out = run_hookd(
        &[
            "relay",
            "--agent",
            "gemini-cli",
            "--socket",
            d.socket.to_str().unwrap(),
        ],
        Some(&fixture("gemini-cli", "BeforeAgent.json")),
        T,
    );
    assert_eq!(code(&out.status), 0, "{out:?}");
    let (_, v, _) = relay(&d, "gemini-cli", &after);
    assert_eq!(v["decision"], "deny", "{v}");
    assert_eq!(seen(&d).last().unwrap()["stop_refusals"], 0);
}

#[test]
fn a_prompt_resets_the_count_even_with_no_prompt_hooks() {
    // The reset is the daemon's bookkeeping, not a hook's doing: it holds with no UserPromptSubmit hook.
    let sb = Sandbox::new();
    sb.script(
        "nag.sh",
        "printf '%s\\n' \"$(cat)\" >> @DIR@/stops.log\necho 'not yet' >&2\nexit 2",
    );
    sb.settings(
        "[defaults]\nstop_refusal_cap = 3\n\n[[hooks.Stop]]\nname = \"nag\"\ncommand = \"@DIR@/nag.sh\"\n",
    );
    let d = Daemon::start(sb);
    for count in 0..2 {
        let (resp, seen) = stop(&d, "codex", "s1", json!({}));
        assert_eq!((seen, &resp["refused"]), (count, &json!(true)), "{resp}");
    }
    let resp = d.fire_req(
        json!({"op": "fire", "id": 1, "moment": "UserPromptSubmit", "agent": "codex",
                                 "event": {"session_id": "s1", "prompt": "next"}}),
    );
    assert_eq!(resp["refused"], false, "{resp}");
    assert!(hook_names(&resp).is_empty(), "{resp}");
    let (resp, seen) = stop(&d, "codex", "s1", json!({}));
    assert_eq!(seen, 0, "the prompt started the count over: {resp}");
}
