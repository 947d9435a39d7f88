//! Agents' tool calls as the agents make them, built from their captured hook inputs
//! (`../shared/fixtures/agents/`), sent through `hookd relay --agent NAME`, and the answer read as the
//! agent reads it: for the tests of what hookd refuses before a tool runs (its guard of itself, the
//! built-in guard).

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::{Daemon, code, fixture_json, run_hookd, text};

/// What the relay answered, read as the agent reads it: refused (with the reason it gives), or not.
pub fn refusal(agent: &str, out: &std::process::Output) -> Option<String> {
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    if code(&out.status) == 2 {
        return Some(stderr);
    }
    let answer: Value = serde_json::from_str(stdout.trim()).ok()?;
    let specific = &answer["hookSpecificOutput"];
    let denied = specific["permissionDecision"] == "deny"
        || specific["decision"]["behavior"] == "deny"
        || answer["permissionDecision"] == "deny"
        || answer["decision"] == "deny"
        || answer["decision"] == "block";
    denied.then(|| format!("{agent}: {stdout}"))
}

/// Sends `event` (a captured input of `agent`, made into the call) through the relay.
pub fn relay(d: &Daemon, agent: &str, event: &Value, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "relay",
        "--agent",
        agent,
        "--socket",
        d.socket.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run_hookd(&args, Some(&event.to_string()), Duration::from_secs(20))
}

/// A shell call of `agent` running `command` in `cwd`, in that agent's own shape.
pub fn shell_call(agent: &str, command: &str, cwd: &Path) -> (Value, Vec<&'static str>) {
    let (mut event, extra) = match agent {
        "claude-code" => (fixture_json("claude-code", "PreToolUse-1.json"), vec![]),
        "codex" => (fixture_json("codex", "PreToolUse-1.json"), vec![]),
        "gemini-cli" => (fixture_json("gemini-cli", "BeforeTool.json"), vec![]),
        "qwen-code" => (fixture_json("qwen-code", "PreToolUse-1.json"), vec![]),
        "copilot-cli" => {
            let mut event = fixture_json("copilot-cli", "native-preToolUse.json");
            event["toolArgs"] = json!({ "command": command });
            event["cwd"] = json!(cwd);
            return (event, vec!["--event", "preToolUse"]);
        }
        other => panic!("no agent {other}"),
    };
    event["tool_name"] = json!(match agent {
        "gemini-cli" | "qwen-code" => "run_shell_command",
        _ => "Bash",
    });
    event["tool_input"] = json!({ "command": command });
    event["cwd"] = json!(cwd);
    (event, extra)
}

/// A file-writing call of `agent` on `path`, in that agent's own shape (Codex's is a patch).
pub fn write_call(agent: &str, path: &Path, cwd: &Path) -> (Value, Vec<&'static str>) {
    match agent {
        "codex" => {
            let mut event = fixture_json("codex", "PreToolUse-apply_patch.json");
            event["tool_input"] = json!({
                "command": format!("*** Begin Patch\n*** Update File: {}\n@@\n-a\n+b\n*** End Patch\n", path.display())
            });
            event["cwd"] = json!(cwd);
            (event, vec![])
        }
        "copilot-cli" => {
            let mut event = fixture_json("copilot-cli", "native-preToolUse.json");
            event["toolName"] = json!("create");
            event["toolArgs"] = json!({ "path": path, "file_text": "" });
            event["cwd"] = json!(cwd);
            (event, vec!["--event", "preToolUse"])
        }
        _ => {
            let (mut event, extra) = shell_call(agent, "", cwd);
            event["tool_name"] = json!(match agent {
                "gemini-cli" | "qwen-code" => "write_file",
                _ => "Write",
            });
            event["tool_input"] = json!({ "file_path": path, "content": "" });
            (event, extra)
        }
    }
}

/// Claude Code running `command` in `home/work` of `d`'s sandbox, sent through `hookd relay`: its
/// answer read whole, with its text (`None`: let through with nothing said). A relay that failed, an
/// answer that is not JSON, or words on stderr beside no answer fail the test: none of them is a
/// refusal, nor a call let through.
pub fn claude_bash_in_work(
    d: &Daemon,
    command: &str,
    deadline: Duration,
) -> Option<(Value, String)> {
    let event = json!({
        "session_id": "s",
        "transcript_path": "/dev/null",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "cwd": d.sb.p("home/work"),
    });
    let out = run_hookd(
        &[
            "relay",
            "--agent",
            "claude-code",
            "--socket",
            d.socket.to_str().unwrap(),
        ],
        Some(&event.to_string()),
        deadline,
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(
        code(&out.status),
        0,
        "{command}: the relay failed: {stderr}"
    );
    if stdout.trim().is_empty() {
        assert!(
            stderr.trim().is_empty(),
            "{command}: no answer, and the relay said: {stderr}"
        );
        return None;
    }
    let answer: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{command}: not an answer ({e}): {stdout:?} {stderr}"));
    Some((answer, stdout))
}
