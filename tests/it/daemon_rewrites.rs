//! Answers beyond refuse and add, end to end: hooks that allow, ask, rewrite a tool's input or output,
//! read by the real daemon from real shell hooks and folded into one response on a real socket
//! (`permission`, `input`, `output`, each hook's `outcome` and `rewrote`); `sequential = [...]` chains;
//! `hookd fire`'s exit status for an ask and an allow; `hookd check`'s errors for `sequential`.

use std::time::Duration;

use crate::common::*;
use serde_json::{Value, json};

const T: Duration = Duration::from_secs(20);

/// A tool input with three fields, so that a rewrite of one can be seen to keep the others.
fn three_fields() -> Value {
    json!({"command": "rm x", "timeout": 5, "description": "clean up"})
}

/// A PreToolUse event for the Bash tool with `tool_input`.
fn bash_with(tool_input: Value) -> Value {
    json!({"session_id": "s1", "tool_name": "Bash", "tool_input": tool_input})
}

/// A hook's table in the settings: `name` on `moment` running the script `name.sh`, with `extra` keys.
fn hook_toml(moment: &str, name: &str, extra: &str) -> String {
    format!("[[hooks.{moment}]]\nname = \"{name}\"\ncommand = \"@DIR@/{name}.sh\"\n{extra}\n")
}

// ---- allow and ask ----------------------------------------------------------------------------------

#[test]
fn an_allow_is_permission_allow_and_not_refused() {
    let r = fire_one(
        "PreToolUse",
        &prints(r#"{"allow": "read-only command"}"#),
        "",
    );
    assert_eq!(r["refused"], false, "{r}");
    assert_eq!(r["permission"], "allow", "{r}");
    assert_eq!(r["reason"], "read-only command", "{r}");
    assert_eq!(hook(&r, "h")["outcome"], "allowed", "{r}");
    assert!(hook(&r, "h").get("rewrote").is_none(), "{r}");
}

#[test]
fn an_ask_holds_the_call_back_with_permission_ask_and_its_reason() {
    let r = fire_one(
        "PreToolUse",
        &prints(
            r#"{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "deletes files: sure?"}}"#,
        ),
        "",
    );
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(r["permission"], "ask", "{r}");
    assert_eq!(r["reason"], "deletes files: sure?", "{r}");
    assert_eq!(hook(&r, "h")["outcome"], "asked", "{r}");
}

#[test]
fn an_ask_beside_an_allow_asks_and_a_refusal_beside_both_refuses() {
    let d = Daemon::with_scripts(
        &[
            ("allow.sh", &prints(r#"{"allow": true}"#)),
            ("ask.sh", &prints(r#"{"ask": "sure?"}"#)),
        ],
        &(hook_toml("PreToolUse", "allow", "") + &hook_toml("PreToolUse", "ask", "")),
    );
    let r = d.fire("PreToolUse", bash_with(three_fields()));
    assert_eq!(
        (&r["refused"], &r["permission"], &r["reason"]),
        (&json!(true), &json!("ask"), &json!("sure?")),
        "{r}"
    );
    let d = Daemon::with_scripts(
        &[
            ("allow.sh", &prints(r#"{"allow": true}"#)),
            ("ask.sh", &prints(r#"{"ask": "sure?"}"#)),
            ("deny.sh", "echo 'never' >&2; exit 2"),
        ],
        &(hook_toml("PreToolUse", "allow", "")
            + &hook_toml("PreToolUse", "ask", "")
            + &hook_toml("PreToolUse", "deny", "")),
    );
    let r = d.fire("PreToolUse", bash_with(three_fields()));
    assert_eq!(r["refused"], true, "{r}");
    assert!(
        r.get("permission").is_none(),
        "a refusal has no permission: {r}"
    );
    assert_eq!(r["reason"], "never", "{r}");
}

/// `hookd fire PreToolUse` against `d` with `event` on stdin: its exit status and the response.
fn fire_cli(d: &Daemon, event: &Value) -> (i32, Value) {
    let socket = d.socket.to_str().unwrap();
    let out = run_hookd(
        &["fire", "PreToolUse", "--socket", socket],
        Some(&event.to_string()),
        T,
    );
    let stdout = text(&out.stdout);
    let line = stdout.lines().next().unwrap_or("");
    let v: Value = serde_json::from_str(line).unwrap_or_else(|e| {
        panic!(
            "fire printed no JSON response line ({e}): {stdout:?} stderr {:?}",
            text(&out.stderr)
        )
    });
    (code(&out.status), v)
}

#[test]
fn hookd_fire_exits_2_for_an_ask_and_0_for_an_allow() {
    let d = Daemon::with_scripts(
        &[
            ("ask.sh", &prints(r#"{"ask": "sure?"}"#)),
            ("allow.sh", &prints(r#"{"permissionDecision": "allow"}"#)),
        ],
        &(hook_toml("PreToolUse", "ask", "matcher = \"Bash\"")
            + &hook_toml("PreToolUse", "allow", "matcher = \"Read\"")),
    );
    let (status, v) = fire_cli(&d, &bash_with(three_fields()));
    assert_eq!(status, 2, "an ask holds the call back: {v}");
    assert_eq!(v["permission"], "ask", "{v}");
    let (status, v) = fire_cli(
        &d,
        &json!({"session_id": "s1", "tool_name": "Read", "tool_input": {"file_path": "/tmp/x"}}),
    );
    assert_eq!(status, 0, "{v}");
    assert_eq!(v["permission"], "allow", "{v}");
    assert_eq!(v["refused"], false, "{v}");
}

// ---- rewrites composed ------------------------------------------------------------------------------

#[test]
fn two_hooks_rewriting_different_fields_compose_into_the_whole_input() {
    // One in hookd's words, one in Claude Code's, which echoes the whole input with its field changed.
    let d = Daemon::with_scripts(
        &[
            (
                "trash.sh",
                &prints(r#"{"input": {"command": "mv x .trash/"}}"#),
            ),
            (
                "longer.sh",
                &prints(
                    r#"{"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": "rm x", "timeout": 60, "description": "clean up"}}}"#,
                ),
            ),
        ],
        &(hook_toml("PreToolUse", "trash", "") + &hook_toml("PreToolUse", "longer", "")),
    );
    let r = d.fire("PreToolUse", bash_with(three_fields()));
    assert_eq!(r["refused"], false, "{r}");
    assert!(
        r.get("permission").is_none(),
        "longer allowed the call as the agent made it, not as trash rewrote it: {r}"
    );
    assert_eq!(
        r["input"],
        json!({"command": "mv x .trash/", "timeout": 60, "description": "clean up"}),
        "{r}"
    );
    assert_eq!(hook(&r, "trash")["outcome"], "rewrote", "{r}");
    assert_eq!(hook(&r, "trash")["rewrote"], "input", "{r}");
    assert_eq!(hook(&r, "longer")["outcome"], "allowed", "{r}");
    assert_eq!(hook(&r, "longer")["rewrote"], "input", "{r}");
}

#[test]
fn one_field_rewritten_two_ways_is_refused_naming_both_hooks_in_settings_order() {
    // `first` finishes last: it waits for `second` to be done. The message names them in the settings
    // file's order all the same.
    let d = Daemon::with_scripts(
        &[
            (
                "first.sh",
                &format!(
                    "while [ ! -e @DIR@/second-done ]; do sleep 0.01; done\n{}",
                    prints(r#"{"input": {"command": "rm -i x"}}"#)
                ),
            ),
            (
                "second.sh",
                &format!(
                    "{}\ntouch @DIR@/second-done",
                    prints(r#"{"modifiedArgs": {"command": "mv x .trash/"}}"#)
                ),
            ),
        ],
        &(hook_toml("PreToolUse", "first", "") + &hook_toml("PreToolUse", "second", "")),
    );
    let r = d.fire("PreToolUse", bash_with(three_fields()));
    assert_eq!(r["refused"], true, "{r}");
    assert!(r.get("permission").is_none(), "{r}");
    assert!(
        r.get("input").is_none(),
        "nothing of a refused call runs: {r}"
    );
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.contains("hooks first and second rewrote tool_input.command differently"),
        "{reason}"
    );
    assert!(
        reason.contains(r#"sequential = ["PreToolUse"]"#),
        "the reason says how to chain them: {reason}"
    );
    assert!(
        d.log_text().contains("rewrites conflict"),
        "the conflict is logged: {}",
        d.log_text()
    );
}

#[test]
fn a_refusal_drops_every_rewrite() {
    let d = Daemon::with_scripts(
        &[
            (
                "trash.sh",
                &prints(r#"{"input": {"command": "mv x .trash/"}}"#),
            ),
            ("deny.sh", "echo 'no deleting today' >&2; exit 2"),
        ],
        &(hook_toml("PreToolUse", "trash", "") + &hook_toml("PreToolUse", "deny", "")),
    );
    let r = d.fire("PreToolUse", bash_with(three_fields()));
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(r["reason"], "no deleting today", "{r}");
    assert!(
        r.get("input").is_none(),
        "a refused call is not rewritten: {r}"
    );
    assert!(r.get("permission").is_none(), "{r}");
    assert_eq!(hook(&r, "trash")["outcome"], "rewrote", "{r}");
}

#[test]
fn a_pre_tool_use_event_without_tool_input_still_gets_the_rewrite() {
    let r = fire_one(
        "PreToolUse",
        &prints(r#"{"input": {"command": "ls -la"}}"#),
        "",
    );
    // fire_one's event has a tool_input; this one has none.
    assert_eq!(r["input"]["command"], "ls -la", "{r}");
    let sb = Sandbox::new();
    sb.script("h.sh", &prints(r#"{"input": {"command": "ls -la"}}"#));
    sb.settings(&hook_toml("PreToolUse", "h", ""));
    let d = Daemon::start(sb);
    let r = d.fire(
        "PreToolUse",
        json!({"session_id": "s1", "tool_name": "Bash"}),
    );
    assert_eq!(r["refused"], false, "{r}");
    assert_eq!(r["input"], json!({"command": "ls -la"}), "{r}");
    assert_eq!(hook(&r, "h")["rewrote"], "input", "{r}");
}

#[test]
fn an_output_rewrite_at_post_tool_use_is_the_responses_output() {
    let d = Daemon::with_scripts(
        &[(
            "redact.sh",
            &prints(r#"{"output": {"stdout": "token=[REDACTED]", "stderr": ""}}"#),
        )],
        &hook_toml("PostToolUse", "redact", ""),
    );
    let r = d.fire(
        "PostToolUse",
        json!({
            "session_id": "s1",
            "tool_name": "Bash",
            "tool_input": {"command": "env"},
            "tool_response": {"stdout": "token=abc123", "stderr": "", "interrupted": false},
        }),
    );
    assert_eq!(r["refused"], false, "{r}");
    assert_eq!(
        r["output"],
        json!({"stdout": "token=[REDACTED]", "stderr": "", "interrupted": false}),
        "{r}"
    );
    assert!(r.get("input").is_none(), "{r}");
    assert_eq!(hook(&r, "redact")["outcome"], "rewrote", "{r}");
    assert_eq!(hook(&r, "redact")["rewrote"], "output", "{r}");
}

#[test]
fn an_input_rewrite_at_user_prompt_submit_is_a_failed_hook() {
    let body = prints(r#"{"input": {"prompt": "something else"}}"#);
    let event = json!({"session_id": "s1", "prompt": "fix the bug"});
    let d = Daemon::with_scripts(&[("h.sh", &body)], &hook_toml("UserPromptSubmit", "h", ""));
    let r = d.fire("UserPromptSubmit", event.clone());
    assert_eq!(r["refused"], false, "{r}");
    assert!(r.get("input").is_none(), "{r}");
    let h = hook(&r, "h");
    assert_eq!(h["outcome"], "failed", "{r}");
    assert!(
        h["error"]
            .as_str()
            .unwrap()
            .contains("where there is no tool call to rewrite"),
        "{r}"
    );
    let d = Daemon::with_scripts(
        &[("h.sh", &body)],
        &hook_toml("UserPromptSubmit", "h", "on_failure = \"refuse\""),
    );
    let r = d.fire("UserPromptSubmit", event);
    assert_eq!(r["refused"], true, "{r}");
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("hook h failed: ") && reason.contains("no tool call to rewrite"),
        "{reason}"
    );
    assert_eq!(hook(&r, "h")["outcome"], "refused", "{r}");
}

#[test]
fn a_rewrite_whose_result_is_over_a_mebibyte_refuses_with_the_reason() {
    // The event's input is large; the hook changes one small field of it: the input to run, whole, is
    // more than an answer carries, and dropping it would run the call unrewritten.
    let content = "x".repeat(1_100_000);
    let d = Daemon::with_scripts(
        &[(
            "h.sh",
            &prints(r#"{"input": {"file_path": "/tmp/elsewhere"}}"#),
        )],
        &hook_toml("PreToolUse", "h", ""),
    );
    let r = d.fire(
        "PreToolUse",
        json!({
            "session_id": "s1",
            "tool_name": "Write",
            "tool_input": {"file_path": "/tmp/big", "content": content},
        }),
    );
    assert_eq!(r["refused"], true, "{r:.300}");
    assert!(r.get("input").is_none(), "{r:.300}");
    assert!(r.get("permission").is_none(), "{r:.300}");
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.contains("rewrote the tool input")
            && reason.contains("more than an answer carries")
            && reason.contains("refuses the call"),
        "{reason}"
    );
}

#[test]
fn a_rewrite_of_a_large_event_keeps_the_fields_it_did_not_change() {
    let content = "x".repeat(300_000);
    let d = Daemon::with_scripts(
        &[(
            "h.sh",
            &prints(r#"{"input": {"file_path": "/tmp/elsewhere"}}"#),
        )],
        &hook_toml("PreToolUse", "h", ""),
    );
    let r = d.fire(
        "PreToolUse",
        json!({
            "session_id": "s1",
            "tool_name": "Write",
            "tool_input": {"file_path": "/tmp/big", "content": content},
        }),
    );
    assert_eq!(r["refused"], false, "{r:.300}");
    assert_eq!(r["input"]["file_path"], "/tmp/elsewhere", "{r:.300}");
    assert_eq!(
        r["input"]["content"].as_str().map(str::len),
        Some(300_000),
        "the field the hook did not rewrite is kept: {r:.300}"
    );
}

#[test]
fn a_rewrite_of_an_event_just_under_the_large_size_keeps_the_other_fields() {
    // The same rewrite as above, of an event just under OFF_THREAD (64 KiB): what the large one should
    // give.
    let content = "x".repeat(60_000);
    let d = Daemon::with_scripts(
        &[(
            "h.sh",
            &prints(r#"{"input": {"file_path": "/tmp/elsewhere"}}"#),
        )],
        &hook_toml("PreToolUse", "h", ""),
    );
    let r = d.fire(
        "PreToolUse",
        json!({
            "session_id": "s1",
            "tool_name": "Write",
            "tool_input": {"file_path": "/tmp/big", "content": content},
        }),
    );
    assert_eq!(r["refused"], false, "{r:.300}");
    assert_eq!(r["input"]["file_path"], "/tmp/elsewhere", "{r:.300}");
    assert_eq!(
        r["input"]["content"].as_str().map(str::len),
        Some(60_000),
        "{r:.300}"
    );
}

#[test]
fn two_rewrites_that_together_pass_a_mebibyte_refuse() {
    // Each hook's answer fits its output limit; the input they compose does not fit an answer.
    let big = |field: &str| {
        format!(
            "printf '{{\"input\": {{\"{field}\": \"'\nhead -c 600000 /dev/zero | tr '\\0' y\nprintf '\"}}}}'"
        )
    };
    let d = Daemon::with_scripts(
        &[("a.sh", &big("content")), ("b.sh", &big("old_string"))],
        &(hook_toml("PreToolUse", "a", "") + &hook_toml("PreToolUse", "b", "")),
    );
    let r = d.fire("PreToolUse", bash_with(three_fields()));
    assert_eq!(hook(&r, "a")["rewrote"], "input", "{r:.300}");
    assert_eq!(hook(&r, "b")["rewrote"], "input", "{r:.300}");
    assert_eq!(r["refused"], true, "{r:.300}");
    assert!(r.get("input").is_none(), "{r:.300}");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains("more than an answer carries"),
        "{r:.300}"
    );
}

// ---- sequential chains ------------------------------------------------------------------------------

#[test]
fn in_a_sequential_moment_each_hook_is_given_the_rewrite_before_it() {
    let d = Daemon::with_scripts(
        &[
            ("first.sh", &prints(r#"{"input": {"command": "rm -i x"}}"#)),
            (
                "second.sh",
                &format!(
                    "cat > @DIR@/second-stdin.json\n{}",
                    prints(r#"{"input": {"command": "rm -i x --dry-run"}}"#)
                ),
            ),
        ],
        &format!(
            "sequential = [\"PreToolUse\"]\n\n{}{}",
            hook_toml("PreToolUse", "first", ""),
            hook_toml("PreToolUse", "second", "")
        ),
    );
    let r = d.fire("PreToolUse", bash_with(three_fields()));
    let given: Value = serde_json::from_str(&d.sb.read("second-stdin.json")).unwrap();
    assert_eq!(
        given["tool_input"],
        json!({"command": "rm -i x", "timeout": 5, "description": "clean up"}),
        "the second hook is given the first's rewrite: {given}"
    );
    assert_eq!(
        r["refused"], false,
        "a chain's rewrites never conflict: {r}"
    );
    assert_eq!(
        r["input"],
        json!({"command": "rm -i x --dry-run", "timeout": 5, "description": "clean up"}),
        "{r}"
    );
    assert_eq!(hook_names(&r), vec!["first", "second"], "{r}");
}

#[test]
fn in_a_sequential_moment_a_refusal_skips_the_hooks_after_it() {
    let d = Daemon::with_scripts(
        &[
            (
                "trash.sh",
                &prints(r#"{"input": {"command": "mv x .trash/"}}"#),
            ),
            ("deny.sh", "echo 'not here' >&2; exit 2"),
            (
                "after.sh",
                "touch @DIR@/after-ran\necho '{\"allow\": true}'",
            ),
        ],
        &format!(
            "sequential = [\"PreToolUse\"]\n\n{}{}{}",
            hook_toml("PreToolUse", "trash", ""),
            hook_toml("PreToolUse", "deny", ""),
            hook_toml("PreToolUse", "after", "")
        ),
    );
    let r = d.fire("PreToolUse", bash_with(three_fields()));
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(r["reason"], "not here", "{r}");
    assert!(
        r.get("input").is_none(),
        "a refusal drops the chain's rewrite: {r}"
    );
    assert!(r.get("permission").is_none(), "{r}");
    assert_eq!(hook_names(&r), vec!["trash", "deny", "after"], "{r}");
    assert_eq!(hook(&r, "deny")["outcome"], "refused", "{r}");
    let after = hook(&r, "after");
    assert_eq!(after["outcome"], "skipped", "{r}");
    assert!(
        after.get("exit").is_none(),
        "a skipped hook did not exit: {r}"
    );
    assert!(
        !d.sb.p("after-ran").exists(),
        "the skipped hook must never have run"
    );
}

// ---- settings errors --------------------------------------------------------------------------------

/// `hookd check` of `toml`, which must be invalid: its stderr and the `FILE:LINE:COL: message` errors.
fn check_errors(toml: &str) -> (String, Vec<(u32, u32, String)>) {
    let sb = Sandbox::new();
    sb.settings(toml);
    let config = sb.config();
    let out = run_hookd(&["check", "--config", config.to_str().unwrap()], None, T);
    let stderr = text(&out.stderr);
    assert_eq!(code(&out.status), 1, "expected an invalid file: {stderr}");
    let prefix = format!("{}:", config.display());
    let errors = stderr
        .lines()
        .filter_map(|l| {
            let mut parts = l.strip_prefix(&prefix)?.splitn(3, ':');
            let line = parts.next()?.parse().ok()?;
            let col = parts.next()?.parse().ok()?;
            Some((line, col, parts.next()?.trim_start().to_string()))
        })
        .collect();
    (stderr, errors)
}

#[test]
fn sequential_with_gemini_clis_name_says_it_is_pre_tool_use() {
    let (stderr, errors) = check_errors(
        "sequential = [\"BeforeTool\"]\n\n[[hooks.PreToolUse]]\nname = \"a\"\ncommand = \"true\"\n",
    );
    let (line, col, message) = errors
        .iter()
        .find(|(_, _, m)| m.contains("BeforeTool"))
        .unwrap_or_else(|| panic!("no error about BeforeTool: {stderr}"));
    assert_eq!(*line, 1, "{stderr}");
    assert_eq!(*col, 15, "at the name in the list: {stderr}");
    assert!(
        message.contains("Gemini CLI's name for PreToolUse")
            && message.contains("write \"PreToolUse\""),
        "{message}"
    );
}

#[test]
fn sequential_with_a_misspelt_moment_suggests_the_right_one() {
    let (stderr, errors) = check_errors(
        "sequential = [\"Stop\", \"PreToolUs\"]\n\n[[hooks.Stop]]\nname = \"a\"\ncommand = \"true\"\n",
    );
    let (line, col, message) = errors
        .iter()
        .find(|(_, _, m)| m.contains("\"PreToolUs\""))
        .unwrap_or_else(|| panic!("no error about PreToolUs: {stderr}"));
    assert_eq!(*line, 1, "{stderr}");
    assert_eq!(*col, 23, "at the name in the list: {stderr}");
    assert!(
        message.contains("unknown moment \"PreToolUs\" in sequential")
            && message.contains("did you mean \"PreToolUse\""),
        "{message}"
    );
}

// ---- asks where there is no call to approve ------------------------------------------------------------

#[test]
fn an_ask_keeps_the_rewrite_a_person_would_approve() {
    let d = Daemon::with_scripts(
        &[
            (
                "trash.sh",
                &prints(r#"{"input": {"command": "mv x .trash/"}}"#),
            ),
            (
                "ask.sh",
                &prints(r#"{"permissionDecision": "ask", "permissionDecisionReason": "sure?"}"#),
            ),
        ],
        &(hook_toml("PreToolUse", "trash", "") + &hook_toml("PreToolUse", "ask", "")),
    );
    let r = d.fire("PreToolUse", bash_with(three_fields()));
    assert_eq!(
        (&r["refused"], &r["permission"]),
        (&json!(true), &json!("ask")),
        "{r}"
    );
    assert_eq!(
        r["input"],
        json!({"command": "mv x .trash/", "timeout": 5, "description": "clean up"}),
        "the user approves the call as it will run: {r}"
    );
}

#[test]
fn a_stop_that_asks_past_the_refusal_cap_is_let_through_without_an_ask() {
    let d = Daemon::with_scripts(
        &[("ask.sh", &prints(r#"{"ask": "run the tests first?"}"#))],
        &format!(
            "[defaults]\nstop_refusal_cap = 1\n\n{}",
            hook_toml("Stop", "ask", "")
        ),
    );
    let stop = || {
        let mut c = d.connect();
        c.request(
            &json!({"op": "fire", "id": 1, "moment": "Stop", "agent": "claude-code",
            "event": {"session_id": "capped", "stop_hook_active": false}}),
        )
    };
    let first = stop();
    assert_eq!(
        (&first["refused"], &first["permission"]),
        (&json!(true), &json!("ask")),
        "{first}"
    );
    let second = stop();
    assert_eq!(
        second["refused"], false,
        "past the cap the Stop is let through: {second}"
    );
    assert!(
        second.get("permission").is_none(),
        "a Stop let through must not still say ask (refused false beside permission ask): {second}"
    );
    check_fire_shape(&second);
}

#[test]
fn a_permission_request_allowed_with_an_updated_input_in_claude_codes_words() {
    let d = Daemon::with_scripts(
        &[(
            "pin.sh",
            &prints(
                r#"{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow", "updatedInput": {"command": "rm -i x"}}}}"#,
            ),
        )],
        &hook_toml("PermissionRequest", "pin", ""),
    );
    let r = d.fire("PermissionRequest", bash_with(three_fields()));
    assert_eq!(r["refused"], false, "{r}");
    assert_eq!(r["permission"], "allow", "{r}");
    assert_eq!(
        r["input"],
        json!({"command": "rm -i x", "timeout": 5, "description": "clean up"}),
        "{r}"
    );
    assert_eq!(hook(&r, "pin")["outcome"], "allowed", "{r}");
    assert_eq!(hook(&r, "pin")["rewrote"], "input", "{r}");
}

#[test]
fn gemini_clis_tool_input_and_deny_are_heard() {
    let d = Daemon::with_scripts(
        &[
            (
                "pin.sh",
                &prints(r#"{"hookSpecificOutput": {"tool_input": {"timeout": 30}}}"#),
            ),
            (
                "deny.sh",
                &prints(r#"{"decision": "deny", "reason": "not on Fridays"}"#),
            ),
        ],
        &(hook_toml("PreToolUse", "pin", "")
            + &hook_toml("PreToolUse", "deny", "matcher = \"Read\"")),
    );
    let r = d.fire("PreToolUse", bash_with(three_fields()));
    assert_eq!(r["input"]["timeout"], 30, "{r}");
    assert_eq!(r["input"]["command"], "rm x", "{r}");
    let r = d.fire(
        "PreToolUse",
        json!({"session_id": "s1", "tool_name": "Read", "tool_input": {"file_path": "/tmp/x"}}),
    );
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(r["reason"], "not on Fridays", "{r}");
    assert!(r.get("input").is_none(), "{r}");
}
