//! How the daemon reads one hook's answer (contract section 7, every row of the table and every JSON
//! form), folds the outcomes into the verdict (section 8), and picks the hooks that run (section 5
//! matchers, `agents`, `enabled`, default names). Each test runs the real daemon with real shell hooks.

use crate::common::*;
use serde_json::{Value, json};

// ---- could not be started -------------------------------------------------------------------------

#[test]
fn command_not_found_is_failed_with_exit_127() {
    let sb = Sandbox::new();
    sb.settings("[[hooks.PreToolUse]]\nname = \"h\"\ncommand = \"no-such-command-hookd-test\"\n");
    let d = Daemon::start(sb);
    let r = d.fire("PreToolUse", bash_event());
    let h = hook(&r, "h");
    assert_eq!(h["outcome"], "failed", "{r}");
    assert_eq!(h["exit"], 127, "{r}");
    assert_eq!(
        r["refused"], false,
        "a failed hook says nothing by default: {r}"
    );
    assert_eq!(adds(&r), Vec::<String>::new(), "{r}");
}

#[test]
fn command_not_executable_is_failed_with_exit_126() {
    let sb = Sandbox::new();
    std::fs::write(sb.p("plain.sh"), "#!/bin/sh\necho should-not-run\n").unwrap();
    // Written with the default mode (0644): the shell finds it but cannot execute it.
    sb.settings("[[hooks.PreToolUse]]\nname = \"h\"\ncommand = \"@DIR@/plain.sh\"\n");
    let d = Daemon::start(sb);
    let r = d.fire("PreToolUse", bash_event());
    let h = hook(&r, "h");
    assert_eq!(h["outcome"], "failed", "{r}");
    assert_eq!(h["exit"], 126, "{r}");
    assert_eq!(r["refused"], false, "{r}");
}

#[test]
fn argv_to_missing_file_is_failed() {
    let sb = Sandbox::new();
    sb.settings("[[hooks.PreToolUse]]\nname = \"h\"\nargv = [\"@DIR@/does-not-exist\", \"x\"]\n");
    let d = Daemon::start(sb);
    let r = d.fire("PreToolUse", bash_event());
    let h = hook(&r, "h");
    assert_eq!(h["outcome"], "failed", "{r}");
    assert!(
        h.get("exit").is_none(),
        "a hook that never started has no exit code: {r}"
    );
    assert!(!h["error"].as_str().unwrap().is_empty(), "{r}");
    assert_eq!(r["refused"], false, "{r}");
}

#[test]
fn argv_runs_without_a_shell() {
    let sb = Sandbox::new();
    sb.script("args.sh", "printf '%s|' \"$@\"");
    // An argv is exec'd as it stands: `$HOME` and `;` reach the program literally.
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"h\"\nargv = [\"@DIR@/args.sh\", \"$HOME\", \"a;b\"]\n",
    );
    let d = Daemon::start(sb);
    let r = d.fire("PreToolUse", bash_event());
    assert_eq!(hook(&r, "h")["outcome"], "adds", "{r}");
    assert_eq!(adds(&r), vec!["$HOME|a;b|"], "{r}");
}

// ---- timeout and signals --------------------------------------------------------------------------

#[test]
fn timeout_is_failed_timed_out() {
    let r = fire_one("PreToolUse", "sleep 30", "timeout = 0.5");
    let h = hook(&r, "h");
    assert_eq!(h["outcome"], "failed", "{r}");
    let error = h["error"].as_str().unwrap();
    assert!(
        error.starts_with("timed out after"),
        "error {error:?} in {r}"
    );
    assert_eq!(r["refused"], false, "{r}");
    let ms = h["ms"].as_f64().unwrap();
    assert!(
        ms >= 400.0,
        "a 0.5 s timeout reported after only {ms} ms: {r}"
    );
}

#[test]
fn killed_by_signal_is_failed() {
    // An argv hook, so that the script is the process the daemon waits for (under `sh -c` the shell
    // would report the script's death as exit 137).
    let sb = Sandbox::new();
    sb.script("h.sh", "echo partial\nkill -KILL $$");
    sb.settings("[[hooks.PreToolUse]]\nname = \"h\"\nargv = [\"@DIR@/h.sh\"]\n");
    let d = Daemon::start(sb);
    let r = d.fire("PreToolUse", bash_event());
    let h = hook(&r, "h");
    assert_eq!(h["outcome"], "failed", "{r}");
    assert!(
        h.get("exit").is_none(),
        "a hook killed by a signal has no exit code: {r}"
    );
    assert_eq!(
        adds(&r),
        Vec::<String>::new(),
        "a killed hook's stdout is not read as adds: {r}"
    );
    assert_eq!(r["refused"], false, "{r}");
}

// ---- exit 2 -----------------------------------------------------------------------------------------

#[test]
fn exit_2_reason_from_json_first() {
    let r = fire_one(
        "PreToolUse",
        r#"echo '{"decision":"block","reason":"json says no"}'; echo 'stderr says no' >&2; exit 2"#,
        "",
    );
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(r["reason"], "json says no", "{r}");
    let h = hook(&r, "h");
    assert_eq!(h["outcome"], "refused", "{r}");
    assert_eq!(h["exit"], 2, "{r}");
}

#[test]
fn exit_2_reason_from_stderr_trimmed() {
    let r = fire_one(
        "PreToolUse",
        "echo 'some stdout'; printf '  \\n  stderr says no  \\n\\n' >&2; exit 2",
        "",
    );
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(r["reason"], "stderr says no", "{r}");
    assert_eq!(hook(&r, "h")["outcome"], "refused", "{r}");
}

#[test]
fn exit_2_reason_from_stdout_trimmed() {
    let r = fire_one("PreToolUse", "printf '\\n  stdout says no \\n'; exit 2", "");
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(r["reason"], "stdout says no", "{r}");
}

#[test]
fn exit_2_without_output_gives_default_reason() {
    let r = fire_one("PreToolUse", "exit 2", "");
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(r["reason"], "hook h refused", "{r}");
    assert_eq!(hook(&r, "h")["outcome"], "refused", "{r}");
}

// ---- exit 0 -----------------------------------------------------------------------------------------

#[test]
fn exit_0_empty_or_blank_is_nothing() {
    for body in ["exit 0", "printf '  \\n\\t \\n'"] {
        let r = fire_one("PreToolUse", body, "");
        let h = hook(&r, "h");
        assert_eq!(h["outcome"], "nothing", "{body}: {r}");
        assert_eq!(h["exit"], 0, "{body}: {r}");
        assert_eq!(r["refused"], false, "{body}: {r}");
        assert_eq!(adds(&r), Vec::<String>::new(), "{body}: {r}");
    }
}

#[test]
fn exit_0_text_is_adds_trimmed() {
    let r = fire_one(
        "PreToolUse",
        "printf '\\n  branch: main\\n  dirty: 2 files  \\n\\n'",
        "",
    );
    assert_eq!(hook(&r, "h")["outcome"], "adds", "{r}");
    assert_eq!(adds(&r), vec!["branch: main\n  dirty: 2 files"], "{r}");
    assert_eq!(r["refused"], false, "{r}");
}

/// Runs a hook printing `json` with exit status `exit`; returns the response.
fn json_answer(json: &str, exit: i32) -> Value {
    fire_one(
        "PreToolUse",
        &format!("cat <<'EOF'\n{json}\nEOF\nexit {exit}"),
        "",
    )
}

#[test]
fn json_decision_block_refuses() {
    let r = json_answer(r#"{"decision": "block", "reason": "blocked by policy"}"#, 0);
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(r["reason"], "blocked by policy", "{r}");
    assert_eq!(hook(&r, "h")["outcome"], "refused", "{r}");
    assert_eq!(adds(&r), Vec::<String>::new(), "{r}");
}

#[test]
fn json_permission_decision_deny_refuses() {
    let r = json_answer(
        r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no rm"}}"#,
        0,
    );
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(r["reason"], "no rm", "{r}");
    assert_eq!(hook(&r, "h")["outcome"], "refused", "{r}");
}

#[test]
fn json_permission_decision_allow_is_not_a_refusal() {
    let r = json_answer(
        r#"{"hookSpecificOutput": {"permissionDecision": "allow", "permissionDecisionReason": "fine"}}"#,
        0,
    );
    assert_eq!(r["refused"], false, "{r}");
    assert_eq!(r["permission"], "allow", "{r}");
    assert_eq!(r["reason"], "fine", "{r}");
    assert_eq!(hook(&r, "h")["outcome"], "allowed", "{r}");
}

#[test]
fn json_decision_behavior_deny_refuses() {
    let r = json_answer(
        r#"{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "not you"}}}"#,
        0,
    );
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(r["reason"], "not you", "{r}");
    assert_eq!(hook(&r, "h")["outcome"], "refused", "{r}");
}

#[test]
fn json_additional_context_adds() {
    let r = json_answer(
        r#"{"hookSpecificOutput": {"additionalContext": "remember the tests"}}"#,
        0,
    );
    assert_eq!(r["refused"], false, "{r}");
    assert_eq!(adds(&r), vec!["remember the tests"], "{r}");
    assert_eq!(hook(&r, "h")["outcome"], "adds", "{r}");
}

#[test]
fn json_short_refused_refuses() {
    let r = json_answer(r#"{"refused": "short form"}"#, 0);
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(r["reason"], "short form", "{r}");
    assert_eq!(hook(&r, "h")["outcome"], "refused", "{r}");
}

#[test]
fn json_short_adds_adds() {
    let r = json_answer(r#"{"adds": "short adds"}"#, 0);
    assert_eq!(r["refused"], false, "{r}");
    assert_eq!(adds(&r), vec!["short adds"], "{r}");
    assert_eq!(hook(&r, "h")["outcome"], "adds", "{r}");
}

#[test]
fn json_refusal_and_adds_together() {
    for json in [
        r#"{"decision": "block", "reason": "both", "hookSpecificOutput": {"additionalContext": "and context"}}"#,
        r#"{"refused": "both", "adds": "and context"}"#,
    ] {
        let r = json_answer(json, 0);
        assert_eq!(r["refused"], true, "{json}: {r}");
        assert_eq!(r["reason"], "both", "{json}: {r}");
        assert_eq!(adds(&r), vec!["and context"], "{json}: {r}");
        assert_eq!(hook(&r, "h")["outcome"], "refused", "{json}: {r}");
    }
}

#[test]
fn json_unknown_fields_are_ignored() {
    let r = json_answer(
        r#"{"suppressOutput": true, "whatever": {"deep": [1, 2]}, "adds": "kept", "hookSpecificOutput": {"hookEventName": "PreToolUse", "futureField": 3}}"#,
        0,
    );
    assert_eq!(r["refused"], false, "{r}");
    assert_eq!(adds(&r), vec!["kept"], "{r}");
    assert_eq!(hook(&r, "h")["outcome"], "adds", "{r}");

    let r = json_answer(r#"{"somethingElse": "entirely"}"#, 0);
    assert_eq!(hook(&r, "h")["outcome"], "nothing", "{r}");
    assert_eq!(adds(&r), Vec::<String>::new(), "{r}");
}

#[test]
fn invalid_json_is_failed_never_nothing() {
    let r = fire_one("PreToolUse", "echo '  {\"decision\": \"block\", oops'", "");
    let h = hook(&r, "h");
    assert_eq!(h["outcome"], "failed", "{r}");
    assert_eq!(h["exit"], 0, "{r}");
    assert_eq!(r["refused"], false, "{r}");
    assert_eq!(adds(&r), Vec::<String>::new(), "{r}");
}

// ---- other exit statuses ----------------------------------------------------------------------------

#[test]
fn other_exit_with_json_is_read_as_json() {
    let r = json_answer(
        r#"{"decision": "block", "reason": "valid json decides"}"#,
        1,
    );
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(r["reason"], "valid json decides", "{r}");
    let h = hook(&r, "h");
    assert_eq!(h["outcome"], "refused", "{r}");
    assert_eq!(h["exit"], 1, "{r}");

    let r = json_answer(r#"{"adds": "from exit 3"}"#, 3);
    assert_eq!(r["refused"], false, "{r}");
    assert_eq!(adds(&r), vec!["from exit 3"], "{r}");
    assert_eq!(hook(&r, "h")["exit"], 3, "{r}");
}

#[test]
fn other_exit_without_json_is_failed() {
    let r = fire_one(
        "PreToolUse",
        "echo 'plain text'; echo 'it broke' >&2; exit 1",
        "",
    );
    let h = hook(&r, "h");
    assert_eq!(h["outcome"], "failed", "{r}");
    assert_eq!(h["exit"], 1, "{r}");
    let error = h["error"].as_str().unwrap();
    assert!(error.starts_with("exit 1"), "error {error:?}: {r}");
    assert_eq!(r["refused"], false, "{r}");
    assert_eq!(
        adds(&r),
        Vec::<String>::new(),
        "a failed hook's stdout is not adds: {r}"
    );
}

// ---- on_failure = "refuse" --------------------------------------------------------------------------

#[test]
fn on_failure_refuse_turns_failure_into_refusal() {
    let r = fire_one(
        "PreToolUse",
        "echo 'first line' >&2; echo 'second line' >&2; exit 1",
        "on_failure = \"refuse\"",
    );
    assert_eq!(r["refused"], true, "{r}");
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("hook h failed: exit 1"),
        "reason {reason:?}: {r}"
    );
    assert!(
        reason.contains("first line"),
        "reason {reason:?} lacks the stderr's first line: {r}"
    );
    assert_eq!(hook(&r, "h")["outcome"], "refused", "{r}");
}

#[test]
fn on_failure_refuse_on_timeout() {
    let r = fire_one(
        "PreToolUse",
        "sleep 30",
        "timeout = 0.3\non_failure = \"refuse\"",
    );
    assert_eq!(r["refused"], true, "{r}");
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("hook h failed: timed out after"),
        "reason {reason:?}: {r}"
    );
}

#[test]
fn on_failure_refuse_from_defaults() {
    let sb = Sandbox::new();
    sb.settings(
        "[defaults]\non_failure = \"refuse\"\n\n[[hooks.PreToolUse]]\nname = \"h\"\ncommand = \"exit 5\"\n",
    );
    let d = Daemon::start(sb);
    let r = d.fire("PreToolUse", bash_event());
    assert_eq!(r["refused"], true, "{r}");
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("hook h failed: exit 5"),
        "reason {reason:?}: {r}"
    );
}

// ---- Stop -------------------------------------------------------------------------------------------

#[test]
fn stop_refusal_without_reason_is_nothing() {
    for body in ["exit 2", r#"echo '{"decision": "block"}'"#] {
        let r = fire_one("Stop", body, "");
        assert_eq!(r["refused"], false, "{body}: {r}");
        assert_eq!(hook(&r, "h")["outcome"], "nothing", "{body}: {r}");
    }
    // With a reason, a Stop refusal holds.
    let r = fire_one("Stop", "echo 'run the tests first' >&2; exit 2", "");
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(r["reason"], "run the tests first", "{r}");
}

// ---- the verdict ------------------------------------------------------------------------------------

#[test]
fn slow_first_refusal_still_gives_its_reason() {
    let sb = Sandbox::new();
    sb.script(
        "slow.sh",
        "sleep 0.5\necho 'slow first says no' >&2\nexit 2",
    );
    sb.script("fast.sh", "echo 'fast second says no' >&2\nexit 2");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"slow\"\ncommand = \"@DIR@/slow.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"fast\"\ncommand = \"@DIR@/fast.sh\"\n",
    );
    let d = Daemon::start(sb);
    let r = d.fire("PreToolUse", bash_event());
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(r["reason"], "slow first says no", "{r}");
    assert_eq!(
        hook_names(&r),
        vec!["slow", "fast"],
        "hooks listed in settings order: {r}"
    );
    assert_eq!(hook(&r, "slow")["outcome"], "refused", "{r}");
    assert_eq!(hook(&r, "fast")["outcome"], "refused", "{r}");
}

#[test]
fn adds_follow_settings_order_not_finishing_order() {
    let sb = Sandbox::new();
    sb.script("one.sh", "sleep 0.3\necho one");
    sb.script("two.sh", "echo two");
    sb.script("none.sh", "exit 0");
    sb.script(
        "three.sh",
        r#"echo '{"hookSpecificOutput": {"additionalContext": "three"}}'"#,
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"one\"\ncommand = \"@DIR@/one.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"two\"\ncommand = \"@DIR@/two.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"none\"\ncommand = \"@DIR@/none.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"three\"\ncommand = \"@DIR@/three.sh\"\n",
    );
    let d = Daemon::start(sb);
    let r = d.fire("PreToolUse", bash_event());
    assert_eq!(r["refused"], false, "{r}");
    assert_eq!(adds(&r), vec!["one", "two", "three"], "{r}");
    assert_eq!(hook_names(&r), vec!["one", "two", "none", "three"], "{r}");
}

#[test]
fn refusal_and_adds_from_different_hooks_fold_together() {
    let sb = Sandbox::new();
    sb.script("ctx.sh", "echo 'branch: main'");
    sb.script("deny.sh", "echo 'no' >&2; exit 2");
    sb.script("broken.sh", "exit 1");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"ctx\"\ncommand = \"@DIR@/ctx.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"broken\"\ncommand = \"@DIR@/broken.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"deny\"\ncommand = \"@DIR@/deny.sh\"\n",
    );
    let d = Daemon::start(sb);
    let r = d.fire("PreToolUse", bash_event());
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(r["reason"], "no", "{r}");
    assert_eq!(adds(&r), vec!["branch: main"], "{r}");
    assert_eq!(hook(&r, "broken")["outcome"], "failed", "{r}");
}

#[test]
fn no_hooks_no_refusal() {
    let sb = Sandbox::new();
    sb.settings("[[hooks.Stop]]\nname = \"s\"\ncommand = \"exit 2\"\n");
    let d = Daemon::start(sb);
    let r = d.fire("PreToolUse", bash_event());
    assert_eq!(r["refused"], false, "{r}");
    assert_eq!(r["hooks"], json!([]), "{r}");
    assert_eq!(r["adds"], json!([]), "{r}");
}

#[test]
fn default_hook_names_are_moment_and_position() {
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\ncommand = \"true\"\n\n\
         [[hooks.PreToolUse]]\nname = \"named\"\ncommand = \"true\"\n\n\
         [[hooks.PreToolUse]]\ncommand = \"exit 2\"\n\n\
         [[hooks.Stop]]\ncommand = \"true\"\n",
    );
    let d = Daemon::start(sb);
    let r = d.fire("PreToolUse", bash_event());
    assert_eq!(
        hook_names(&r),
        vec!["PreToolUse#1", "named", "PreToolUse#3"],
        "{r}"
    );
    assert_eq!(r["reason"], "hook PreToolUse#3 refused", "{r}");
    let r = d.fire("Stop", json!({"session_id": "s1"}));
    assert_eq!(hook_names(&r), vec!["Stop#1"], "{r}");
}

// ---- which hooks run --------------------------------------------------------------------------------

#[test]
fn matchers_behave_as_claude_code_reads_them() {
    let sb = Sandbox::new();
    sb.script("ok.sh", "exit 0");
    let hooks = [
        ("bash", Some("Bash")),
        ("editwrite", Some("Edit|Write")),
        ("bashread", Some("Bash, Read")),
        ("mcp", Some("mcp__.*")),
        ("editre", Some("Edit.*")),
        ("empty", Some("")),
        ("star", Some("*")),
        ("none", None),
    ];
    let mut toml = String::new();
    for (name, matcher) in hooks {
        toml.push_str(&format!(
            "[[hooks.PreToolUse]]\nname = \"{name}\"\ncommand = \"@DIR@/ok.sh\"\n"
        ));
        if let Some(m) = matcher {
            toml.push_str(&format!("matcher = \"{m}\"\n"));
        }
        toml.push('\n');
    }
    sb.settings(&toml);
    let d = Daemon::start(sb);
    let all = ["empty", "star", "none"];
    let cases: &[(&str, &[&str])] = &[
        ("Bash", &["bash", "bashread"]),
        ("Write", &["editwrite"]),
        ("Edit", &["editwrite", "editre"]),
        ("Read", &["bashread"]),
        ("mcp__github__create_issue", &["mcp"]),
        ("NotebookEdit", &["editre"]),
        ("BashOutput", &[]),
        ("bash", &[]),
    ];
    for (tool, specific) in cases {
        let r = d.fire(
            "PreToolUse",
            json!({"session_id": "s1", "tool_name": tool, "tool_input": {}}),
        );
        let mut expected: Vec<&str> = hooks
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| specific.contains(n) || all.contains(n))
            .collect();
        expected.sort();
        let mut got = hook_names(&r);
        got.sort();
        assert_eq!(got, expected, "tool {tool}: {r}");
    }

    // An event without tool_name: no hook with a (real) matcher fits; a hook without one still runs.
    let r = d.fire("PreToolUse", json!({"session_id": "s1"}));
    let got = hook_names(&r);
    assert!(
        got.contains(&"none".to_string()),
        "hook without matcher did not run: {r}"
    );
    for name in ["bash", "editwrite", "bashread", "mcp", "editre"] {
        assert!(
            !got.contains(&name.to_string()),
            "{name} ran for an event without tool_name: {r}"
        );
    }
}

#[test]
fn matcher_on_other_moment_fields() {
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.SessionStart]]\nname = \"resume\"\nmatcher = \"resume\"\ncommand = \"echo resumed\"\n\n\
         [[hooks.Notification]]\nname = \"perm\"\nmatcher = \"permission_prompt\"\ncommand = \"echo notified\"\n",
    );
    let d = Daemon::start(sb);
    let r = d.fire(
        "SessionStart",
        json!({"session_id": "s", "source": "resume"}),
    );
    assert_eq!(hook_names(&r), vec!["resume"], "{r}");
    let r = d.fire(
        "SessionStart",
        json!({"session_id": "s", "source": "startup"}),
    );
    assert_eq!(hook_names(&r), Vec::<String>::new(), "{r}");
    let r = d.fire(
        "Notification",
        json!({"session_id": "s", "notification_type": "permission_prompt"}),
    );
    assert_eq!(adds(&r), vec!["notified"], "{r}");
}

#[test]
fn agents_filter_uses_fire_agent_then_hello_agent() {
    let sb = Sandbox::new();
    sb.script("ok.sh", "echo \"$HOOKD_HOOK\"");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"codex-only\"\nagents = [\"codex\"]\ncommand = \"@DIR@/ok.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"everyone\"\ncommand = \"@DIR@/ok.sh\"\n",
    );
    let d = Daemon::start(sb);
    let fire = |agent: Option<&str>| {
        let mut req = json!({"op": "fire", "id": 9, "moment": "PreToolUse", "event": bash_event()});
        if let Some(a) = agent {
            req["agent"] = json!(a);
        }
        d.fire_req(req)
    };
    assert_eq!(
        hook_names(&fire(Some("codex"))),
        vec!["codex-only", "everyone"]
    );
    assert_eq!(hook_names(&fire(Some("claude-code"))), vec!["everyone"]);
    assert_eq!(
        hook_names(&fire(None)),
        vec!["everyone"],
        "a hook with agents ran without an agent"
    );

    // On a connection that said hello as codex, a fire without agent is codex's.
    let mut c = d.connect();
    let hello =
        c.request(&json!({"op": "hello", "id": "h", "agent": "codex", "moments": ["PreToolUse"]}));
    assert_eq!(hello["ok"], true, "{hello}");
    let r = c
        .request(&json!({"op": "fire", "id": "f1", "moment": "PreToolUse", "event": bash_event()}));
    check_fire_shape(&r);
    assert_eq!(r["id"], "f1");
    assert_eq!(hook_names(&r), vec!["codex-only", "everyone"], "{r}");
    // The fire's own agent wins over the hello's.
    let r = c.request(&json!({"op": "fire", "id": "f2", "moment": "PreToolUse", "agent": "claude-code", "event": bash_event()}));
    check_fire_shape(&r);
    assert_eq!(hook_names(&r), vec!["everyone"], "{r}");
}

#[test]
fn disabled_hook_does_not_run() {
    let sb = Sandbox::new();
    sb.script(
        "mark.sh",
        "touch @DIR@/disabled-ran\necho 'should not run' >&2\nexit 2",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"off\"\nenabled = false\ncommand = \"@DIR@/mark.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"on\"\nenabled = true\ncommand = \"echo on\"\n",
    );
    let d = Daemon::start(sb);
    let r = d.fire("PreToolUse", bash_event());
    assert_eq!(hook_names(&r), vec!["on"], "{r}");
    assert_eq!(r["refused"], false, "{r}");
    assert_eq!(adds(&r), vec!["on"], "{r}");
    assert!(
        !d.sb.p("disabled-ran").exists(),
        "the disabled hook's script ran"
    );
}

// ---- an event too big for a hook's environment ------------------------------------------------------

/// A session id or folder past what Linux lets one environment variable hold (128 KiB) kept every hook
/// from starting ("argument list too long"), and with `on_failure = "ignore"` the guard's refusal was
/// lost. Such a value is left out of `HOOKD_SESSION` and `CLAUDE_PROJECT_DIR`; the hook still reads it
/// whole on its stdin, and refuses.
#[test]
fn a_session_id_or_folder_too_long_for_the_environment_still_runs_the_guard() {
    let sb = Sandbox::new();
    sb.script(
        "guard.sh",
        "input=$(cat)\nprintf '%s' \"${#HOOKD_SESSION}\" > @DIR@/session-length\ncase \"$input\" in *rm*) echo 'no rm' >&2; exit 2 ;; esac",
    );
    sb.settings("[[hooks.PreToolUse]]\nname = \"guard\"\ncommand = \"@DIR@/guard.sh\"\n");
    let d = Daemon::start(sb);
    let long = "s".repeat(200 * 1024);
    let r = d.fire(
        "PreToolUse",
        json!({"session_id": long, "cwd": format!("/{long}"), "tool_name": "Bash",
            "tool_input": {"command": "rm -rf ~"}}),
    );
    assert_eq!(r["refused"], true, "the guard did not run: {r}");
    assert_eq!(hook(&r, "guard")["outcome"], "refused", "{r}");
    let seen = std::fs::read_to_string(d.sb.p("session-length")).unwrap();
    assert_eq!(seen, "0", "HOOKD_SESSION given a value too long for it");
}
