//! Agents' events and hooks that several areas use: the captured hook inputs, a Claude Code `Write` of a
//! given size and the hook that judges it by its size, and how Claude Code is told a refusal.

use std::path::Path;

use serde_json::Value;

use super::Sandbox;

/// A captured hook input, `tests/fixtures/agents/AGENT/FILE`, as text.
pub fn fixture(agent: &str, file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents")
        .join(agent)
        .join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path:?}: {e}"))
}

/// A captured hook input, parsed.
pub fn fixture_json(agent: &str, file: &str) -> Value {
    let text = fixture(agent, file);
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("tests/fixtures/agents/{agent}/{file} is not JSON: {e}"))
}

/// A Claude Code `Write` PreToolUse of exactly `size` bytes (the file's content makes up the rest), in
/// the folder `cwd`. `event_name` is its `hook_event_name`, or none.
pub fn write_event(size: usize, cwd: &str, event_name: Option<&str>) -> String {
    let name = event_name.map_or(String::new(), |n| format!(r#""hook_event_name":"{n}","#));
    let head = format!(
        r#"{{"session_id":"s1",{name}"tool_name":"Write","cwd":"{cwd}","tool_input":{{"file_path":"/tmp/big","content":""#
    );
    let tail = r#""}}"#;
    let mut input = String::with_capacity(size);
    input.push_str(&head);
    input.push_str(&"x".repeat(size - head.len() - tail.len()));
    input.push_str(tail);
    input
}

/// Writes the script of a `Write` hook that refuses an event over 60 MB, judging by its content (so it
/// must be given the event whole), and returns the hook's settings, with the given `on_failure`.
pub fn size_guard_hook(sb: &Sandbox, on_failure: &str) -> String {
    sb.script(
        "size-guard.sh",
        "n=$(wc -c)\nif [ \"$n\" -gt 60000000 ]; then echo \"$n bytes is too big\" >&2; exit 2; fi\nexit 0",
    );
    format!(
        "[[hooks.PreToolUse]]\nname = \"size-guard\"\nmatcher = \"Write\"\non_failure = \"{on_failure}\"\ncommand = \"@DIR@/size-guard.sh\"\n"
    )
}

/// The reason of a Claude Code PreToolUse refusal, from the answer the agent is given.
pub fn claude_deny_reason(answer: &Value) -> String {
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "{answer}"
    );
    answer["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .to_string()
}
