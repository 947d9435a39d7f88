//! The managed hooks' second look at a call a lower layer's hook rewrote, now also where the verdict so
//! far asks a person to approve it (`Again::judge`, docs/teams.md): attacked with a managed hook that
//! fails on the rewritten call (fail-closed), one that allows it, one that asks about it too. A refusal
//! is never turned into an ask, nor an ask into a pass.

use serde_json::{Value, json};

use crate::common::*;
use crate::layers_managed::managed;

fn bash(command: &str) -> Value {
    json!({"session_id": "s", "cwd": "/", "tool_name": "Bash", "tool_input": {"command": command}})
}

/// The user's hook asks about the call and rewrites it into a deploy; the team's hook (fail-closed)
/// sees the deploy only on its second look.
#[test]
fn a_managed_hook_on_its_second_look_at_a_call_the_user_asks_about_refuses_fails_closed_or_leaves_the_ask()
 {
    if !require_root("the managed layer must be root's") {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "swap-ask.sh",
        &prints(r#"{"ask": "the user asks", "input": {"command": "deploy --prod"}}"#),
    );
    // Fails (exit 1, not a refusal) on the deploy: fail-closed, that is a refusal.
    sb.script("team.sh", "grep -q deploy && exit 1; exit 0");
    let dir = managed(
        &sb,
        "[[hooks.PreToolUse]]\nname = \"team\"\nmatcher = \"Bash\"\non_failure = \"refuse\"\ncommand = \"@DIR@/team.sh\"\n",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"swap\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/swap-ask.sh\"\n",
    );
    let d = Daemon::start_managed(sb, &dir);
    let resp = d.fire("PreToolUse", bash("ls"));
    assert_eq!(resp["refused"], true, "{resp}");
    assert!(
        resp.get("permission").is_none(),
        "the team's failure refuses, not asks: {resp}"
    );
    assert!(resp.get("input").is_none(), "no rewrite carried: {resp}");
    // The team's hook allows the deploy on its second look: its allow is not taken, the user's ask
    // stays, with the rewrite for the person to approve.
    d.sb.script(
        "team.sh",
        "grep -q deploy && { echo '{\"allow\": \"fine by the team\"}'; }; exit 0",
    );
    let resp = d.fire("PreToolUse", bash("ls"));
    assert_eq!(resp["refused"], true, "{resp}");
    assert_eq!(resp["permission"], "ask", "{resp}");
    assert_eq!(resp["reason"], "the user asks", "{resp}");
    assert_eq!(resp["input"]["command"], "deploy --prod", "{resp}");
    // The team asks about it too: one ask, the first (the user's) reason.
    d.sb.script(
        "team.sh",
        "grep -q deploy && { echo '{\"ask\": \"the team asks\"}'; }; exit 0",
    );
    let resp = d.fire("PreToolUse", bash("ls"));
    assert_eq!(resp["permission"], "ask", "{resp}");
    assert_eq!(resp["reason"], "the user asks", "{resp}");
    // The team refuses it outright: refused, whatever the user asked.
    d.sb.script(
        "team.sh",
        "grep -q deploy && { echo 'no deploys from agents' >&2; exit 2; }; exit 0",
    );
    let resp = d.fire("PreToolUse", bash("ls"));
    assert_eq!(resp["refused"], true, "{resp}");
    assert!(resp.get("permission").is_none(), "{resp}");
    assert_eq!(resp["reason"], "no deploys from agents", "{resp}");
    // Each second look is in the fire's report and its journal line.
    let again = resp["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["name"] == "team")
        .count();
    assert_eq!(again, 2, "the first look and the second: {resp}");
}
