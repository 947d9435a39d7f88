//! Attacks on allow, ask and rewrites: each test is a finding, ignored until fixed.

use std::process::Command;
use std::time::Duration;

use crate::common::*;
use serde_json::json;

const T: Duration = Duration::from_secs(20);
const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sdk_client.py");

fn hook_toml(moment: &str, name: &str) -> String {
    format!("[[hooks.{moment}]]\nname = \"{name}\"\ncommand = \"@DIR@/{name}.sh\"\n")
}

#[test]
fn attack_daemon_deny_beside_a_bad_rewrite_lets_the_call_run() {
    let d = Daemon::with_scripts(
        &[(
            "guard.sh",
            &prints(r#"{"decision": "deny", "reason": "never rm -rf", "input": "rm -rf /"}"#),
        )],
        &hook_toml("PreToolUse", "guard"),
    );
    let r = d.fire(
        "PreToolUse",
        json!({"session_id": "s1", "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}),
    );
    assert_eq!(r["refused"], true, "{r}");
}

#[test]
fn attack_sdk_example_drops_a_rewrite() {
    let d = Daemon::with_scripts(
        &[(
            "trash.sh",
            &prints(r#"{"input": {"command": "mv x ~/.trash/"}}"#),
        )],
        &hook_toml("PreToolUse", "trash"),
    );
    let mut cmd = Command::new("python3");
    cmd.arg(EXAMPLE)
        .args(["--socket", d.socket.to_str().unwrap(), "--", "rm x"]);
    let out = run_with_deadline(cmd, None, T);
    let (code, stdout) = (code(&out.status), text(&out.stdout));
    assert!(
        !(code == 0 && stdout.starts_with("allowed")),
        "a rewritten call was reported as plainly allowed: {stdout:?}"
    );
}

#[test]
fn attack_daemon_post_tool_use_block_drops_the_redaction() {
    let d = Daemon::with_scripts(
        &[
            (
                "redact.sh",
                &prints(r#"{"output": {"stdout": "token=[REDACTED]"}}"#),
            ),
            (
                "judge.sh",
                &prints(r#"{"decision": "block", "reason": "suspicious output"}"#),
            ),
        ],
        &(hook_toml("PostToolUse", "redact") + &hook_toml("PostToolUse", "judge")),
    );
    let r = d.fire(
        "PostToolUse",
        json!({
            "session_id": "s1",
            "tool_name": "Bash",
            "tool_input": {"command": "env"},
            "tool_response": {"stdout": "token=abc123", "stderr": ""},
        }),
    );
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(
        r["output"]["stdout"], "token=[REDACTED]",
        "the redaction of an output that already exists must still be given: {r}"
    );
}

/// Decides a PreToolUse with two hooks, the second refusing, after the engine gave up every fire
/// (the daemon stopping past its drain deadline); `sequential` or not.
fn decide_after_abandon(sequential: bool) -> Result<hookd::decision::Verdict, String> {
    use hookd::engine::{Engine, Fire as EngineFire};
    use hookd::protocol::Event;
    use hookd::settings::Settings;
    let dir = tempfile::tempdir().unwrap();
    let mut toml = String::new();
    if sequential {
        toml.push_str("sequential = [\"PreToolUse\"]\n\n");
    }
    toml.push_str(
        "[[hooks.PreToolUse]]\nname = \"allow\"\ncommand = 'cat >/dev/null; echo {\\\"allow\\\":true}'\n\
         [[hooks.PreToolUse]]\nname = \"guard\"\ncommand = 'cat >/dev/null; echo no >&2; exit 2'\n",
    );
    let settings = Settings::parse(&dir.path().join("hooks.toml"), "hooks.toml", &toml)
        .expect("valid settings");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let engine = Engine::new(settings);
        engine.abandon();
        let mut fields = serde_json::Map::new();
        fields.insert("cwd".into(), dir.path().to_str().unwrap().into());
        fields.insert("session_id".into(), "s".into());
        fields.insert("tool_name".into(), "Bash".into());
        fields.insert("tool_input".into(), json!({"command": "rm -rf /"}));
        let fire = EngineFire {
            moment: "PreToolUse".into(),
            agent: None,
            event: Event::from(fields),
        };
        engine
            .decide(fire, &engine.abandoned().child_token())
            .await
            .map_err(|e| format!("{e:?}"))
    })
}

#[test]
fn attack_control_a_parallel_fire_after_abandon_is_not_decided() {
    // The control: at a parallel moment, a fire decided once every fire is given up is ShuttingDown.
    let decided = decide_after_abandon(false);
    assert!(
        decided.as_ref().is_err() || decided.as_ref().is_ok_and(|d| d.refused),
        "{decided:?}"
    );
}

#[test]
fn attack_a_sequential_chain_after_abandon_is_an_empty_allow() {
    let decided = decide_after_abandon(true);
    assert!(
        decided.as_ref().is_err() || decided.as_ref().is_ok_and(|d| d.refused),
        "{decided:?}"
    );
}

#[test]
fn attack_a_redaction_cut_by_the_stdout_cap_fails_open() {
    let d = Daemon::with_scripts(
        &[(
            "redact.sh",
            "cat >/dev/null; python3 -c 'import json; print(json.dumps({\"output\": {\"stdout\": \"\\u6f22\" * 200000}}))'",
        )],
        &hook_toml("PostToolUse", "redact"),
    );
    let r = d.fire(
        "PostToolUse",
        json!({
            "session_id": "s1",
            "tool_name": "Bash",
            "tool_input": {"command": "cat notes"},
            "tool_response": {"stdout": "token=abc123", "stderr": ""},
        }),
    );
    assert_eq!(r["refused"], true, "{}", r["hooks"]);
    let shown = r["output"]["stdout"].as_str().unwrap_or_default();
    assert!(
        shown.starts_with("[hookd withheld this tool's output"),
        "a redaction that was cut must not let the original output through: {shown:?} {}",
        r["hooks"]
    );
}
