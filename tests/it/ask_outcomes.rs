//! Asks followed to their end through the real daemon and the real relay: hookd answers "ask" for a
//! tool call, then what the agent fires for the same call (by its id, or its tool and input where it
//! gives no id) writes an `ask` record with what came of it; `hookd log --asks` shows the asks.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::*;

/// A daemon whose PreToolUse hook asks a person about every `deploy` command.
fn asking_daemon() -> Daemon {
    let sb = Sandbox::new();
    sb.script(
        "ask.sh",
        &format!(
            "cat >/dev/null; echo '{}'",
            r#"{"ask": "deploying needs a person"}"#
        ),
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"ask-deploy\"\nif = \"Bash(deploy *)\"\ncommand = \"@DIR@/ask.sh\"\n",
    );
    Daemon::start(sb)
}

/// `agent`'s event `moment` for the call `id` running `command`, as the agent sends it.
fn claude(moment: &str, session: &str, id: &str, command: &str) -> Value {
    let mut event = fixture_json("claude-code", "PreToolUse-1.json");
    event["hook_event_name"] = json!(moment);
    event["session_id"] = json!(session);
    event["tool_use_id"] = json!(id);
    event["tool_input"] = json!({ "command": command });
    if moment == "PostToolUse" {
        event["tool_response"] = json!({"stdout": "ok"});
    }
    event
}

#[test]
fn an_ask_followed_by_the_calls_post_tool_use_ran_and_by_permission_denied_was_denied() {
    let d = asking_daemon();
    let relay_ok = |agent: &str, event: &Value, extra: &[&str]| {
        let out = relay(&d, agent, event, extra);
        assert!(
            matches!(code(&out.status), 0 | 2),
            "{agent}: {}",
            text(&out.stderr)
        );
        out
    };
    // Claude Code: asked, then the call ran.
    let out = relay_ok(
        "claude-code",
        &claude("PreToolUse", "s1", "toolu_A", "deploy prod"),
        &[],
    );
    assert!(
        text(&out.stdout).contains("\"ask\""),
        "asked: {}",
        text(&out.stdout)
    );
    relay_ok(
        "claude-code",
        &claude("PostToolUse", "s1", "toolu_A", "deploy prod"),
        &[],
    );
    let ran = journaled(&d, "toolu_A's outcome", |l| {
        l["kind"] == "ask" && l["call"] == "toolu_A"
    });
    assert_eq!(ran["outcome"], "ran", "{ran}");
    assert_eq!(ran["settled_by"], "PostToolUse", "{ran}");
    assert_eq!(ran["moment"], "PreToolUse", "{ran}");
    assert_eq!(ran["summary"], "deploy prod", "{ran}");
    assert_eq!(
        ran["verdict"]["reason"], "deploying needs a person",
        "{ran}"
    );
    // Asked, then denied.
    relay_ok(
        "claude-code",
        &claude("PreToolUse", "s1", "toolu_B", "deploy staging"),
        &[],
    );
    relay_ok(
        "claude-code",
        &claude("PermissionDenied", "s1", "toolu_B", "deploy staging"),
        &[],
    );
    let denied = journaled(&d, "toolu_B's outcome", |l| {
        l["kind"] == "ask" && l["call"] == "toolu_B"
    });
    assert_eq!(denied["outcome"], "denied", "{denied}");
    assert_eq!(denied["settled_by"], "PermissionDenied", "{denied}");
    // Asked, then the session's next prompt with no word of the call.
    relay_ok(
        "claude-code",
        &claude("PreToolUse", "s1", "toolu_C", "deploy dev"),
        &[],
    );
    let mut prompt = fixture_json("claude-code", "UserPromptSubmit-1.json");
    prompt["session_id"] = json!("s1");
    relay_ok("claude-code", &prompt, &[]);
    let unknown = journaled(&d, "toolu_C's outcome", |l| {
        l["kind"] == "ask" && l["call"] == "toolu_C"
    });
    assert_eq!(unknown["outcome"], "unknown", "{unknown}");
    assert_eq!(unknown["settled_by"], "next prompt", "{unknown}");
    // A call that was not asked about settles nothing.
    relay_ok(
        "claude-code",
        &claude("PreToolUse", "s1", "toolu_D", "ls"),
        &[],
    );
    relay_ok(
        "claude-code",
        &claude("PostToolUse", "s1", "toolu_D", "ls"),
        &[],
    );

    // Codex, by its tool_use_id.
    let (mut event, extra) = shell_call("codex", "deploy prod", d.sb.path());
    event["tool_use_id"] = json!("call_X");
    relay_ok("codex", &event, &extra);
    let mut post = fixture_json("codex", "PostToolUse-1.json");
    post["session_id"] = event["session_id"].clone();
    post["tool_use_id"] = json!("call_X");
    relay_ok("codex", &post, &[]);
    let codex = journaled(&d, "codex's outcome", |l| {
        l["kind"] == "ask" && l["call"] == "call_X"
    });
    assert_eq!(codex["outcome"], "ran", "{codex}");
    assert_eq!(codex["agent"], "codex", "{codex}");

    // Gemini CLI gives no id: the call is known by its tool and input.
    let (event, extra) = shell_call("gemini-cli", "deploy prod", d.sb.path());
    relay_ok("gemini-cli", &event, &extra);
    let mut after = fixture_json("gemini-cli", "AfterTool.json");
    after["session_id"] = event["session_id"].clone();
    after["tool_name"] = event["tool_name"].clone();
    after["tool_input"] = event["tool_input"].clone();
    relay_ok("gemini-cli", &after, &[]);
    let gemini = journaled(&d, "gemini's outcome", |l| {
        l["kind"] == "ask" && l["agent"] == "gemini-cli"
    });
    assert_eq!(gemini["outcome"], "ran", "{gemini}");
    assert!(gemini.get("call").is_none(), "{gemini}");

    // The fire's own lines are as they were: the ask is a fire that asked.
    let path = d.journal_file();
    let all = journal_records(&path);
    assert_eq!(
        all.iter().filter(|l| l["kind"] == "ask").count(),
        5,
        "one ask record per ask: {all:?}"
    );
    let fire = all
        .iter()
        .find(|l| l["kind"] == "fire" && l["summary"] == "deploy prod")
        .unwrap();
    assert_eq!(fire["verdict"]["decision"], "asked", "{fire}");
    assert!(fire.get("outcome").is_none(), "{fire}");

    // `hookd log --asks`: the fires that asked and what came of each, nothing else.
    let out = run_hookd(
        &[
            "log",
            "--asks",
            "--json",
            "--journal",
            path.to_str().unwrap(),
        ],
        None,
        Duration::from_secs(20),
    );
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    let shown: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(shown.len(), 10, "5 asks and 5 outcomes: {shown:?}");
    assert!(
        shown
            .iter()
            .all(|l| l["kind"] == "ask" || l["verdict"]["decision"] == "asked"),
        "{shown:?}"
    );
    // `hookd why` still shows the last call held back, not what came of an ask.
    let out = run_hookd(
        &["why", "--json", "--journal", path.to_str().unwrap()],
        None,
        Duration::from_secs(20),
    );
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    let why: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(why["kind"], "fire", "{why}");
}
