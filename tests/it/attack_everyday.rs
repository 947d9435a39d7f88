//! Attacks on the everyday commands (`hookd setup`, `hookd test`, the text for people), as a
//! careless user, a buggy hook or a buggy agent would make them; each a finding, fixed.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use crate::common::*;

const TIMEOUT: Duration = Duration::from_secs(30);

/// `PROGRAM ARGS` (a hookd binary) with HOME `home` and none of the agents' own variables.
fn setup_with(program: &Path, home: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(program);
    cmd.args(args).env("HOME", home);
    for var in [
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "GEMINI_CLI_HOME",
        "QWEN_HOME",
        "COPILOT_HOME",
    ] {
        cmd.env_remove(var);
    }
    let out = run_with_deadline(cmd, None, TIMEOUT);
    assert_eq!(
        code(&out.status),
        0,
        "{} {args:?} failed:\n{}{}",
        program.display(),
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// Finding: a file that held hookd's hooks of another hookd binary (an upgrade moved it), with a setting
/// of the user's added since, was backed up as it was, hookd's hooks and all; `--undo` then said it
/// restored the file "as it was before hookd setup" and left every one of those hooks in it, pointing at
/// the old binary. The backup holds the file without hookd's hooks.
#[test]
fn undo_after_a_setup_by_another_hookd_leaves_no_hookd_hook() {
    let sb = Sandbox::new();
    let home = sb.p("home");
    let file = home.join(".claude/settings.json");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    let user = r#"{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-me"}]}]}}"#;
    fs::write(&file, user).unwrap();
    // The old hookd, elsewhere: its setup, then the user's own edit, then the new hookd's setup.
    let old = sb.p("old/hookd");
    fs::create_dir_all(old.parent().unwrap()).unwrap();
    fs::copy(BIN, &old).unwrap();
    fs::set_permissions(&old, fs::Permissions::from_mode(0o755)).unwrap();
    setup_with(&old, &home, &["setup", "claude-code"]);
    let written = fs::read_to_string(&file).unwrap();
    assert!(written.contains(old.to_str().unwrap()), "{written}");
    let mut edited: serde_json::Value = serde_json::from_str(&written).unwrap();
    edited["theme"] = "dark".into();
    fs::write(&file, serde_json::to_string_pretty(&edited).unwrap()).unwrap();
    setup_with(Path::new(BIN), &home, &["setup", "claude-code"]);
    let now = fs::read_to_string(&file).unwrap();
    assert!(!now.contains(old.to_str().unwrap()), "{now}");

    setup_with(Path::new(BIN), &home, &["setup", "claude-code", "--undo"]);
    let restored: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    let commands: Vec<&str> = restored["hooks"]
        .as_object()
        .into_iter()
        .flat_map(|events| events.values())
        .flat_map(|groups| groups.as_array().into_iter().flatten())
        .flat_map(|group| group["hooks"].as_array().into_iter().flatten())
        .filter_map(|hook| hook["command"].as_str())
        .collect();
    assert_eq!(commands, ["notify-me"], "{restored}");
    assert_eq!(restored["model"], "opus");
    assert_eq!(restored["theme"], "dark");
}

/// A sandbox whose one hook refuses Write, for claude-code only.
fn claude_only_guard() -> Sandbox {
    let sb = Sandbox::new();
    sb.script("deny.sh", "echo 'no writes' >&2\nexit 2");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"deny\"\nmatcher = \"Write\"\nagents = [\"claude-code\"]\ncommand = \"@DIR@/deny.sh\"\n",
    );
    sb
}

fn hookd_test(sb: &Sandbox, args: &[&str], stdin: &str) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.arg("test")
        .args(args)
        .args(["--config", sb.config().to_str().unwrap()])
        .env("XDG_STATE_HOME", sb.p("state"));
    run_with_deadline(cmd, Some(stdin), TIMEOUT)
}

/// Finding: `hookd test --agent claude` (for claude-code), and a case with `agent = "claude"`, ran none
/// of claude-code's hooks and said "not refused", exit 0: a policy test that passes while the real
/// agent's writes are refused, and one that would pass with the guard broken. The settings refuse that
/// very name in `agents`; a trial refuses it too.
#[test]
fn a_misspelt_agent_is_an_error_not_a_pass() {
    let sb = claude_only_guard();
    let event = r#"{"tool_name": "Write", "tool_input": {"file_path": "x"}}"#;
    let real = hookd_test(&sb, &["PreToolUse", "--agent", "claude-code"], event);
    assert_eq!(code(&real.status), 2, "{}", text(&real.stdout));
    let typo = hookd_test(&sb, &["PreToolUse", "--agent", "claude"], event);
    let stderr = text(&typo.stderr);
    assert_eq!(code(&typo.status), 1, "{}{stderr}", text(&typo.stdout));
    assert!(stderr.contains("did you mean \"claude-code\""), "{stderr}");
    // An agent of a client's own is still anyone's to name.
    let own = hookd_test(&sb, &["PreToolUse", "--agent", "my-sdk-bot"], event);
    assert_eq!(code(&own.status), 0, "{}", text(&own.stderr));

    fs::write(
        sb.p("cases.toml"),
        "[[case]]\nname = \"writes go through\"\nmoment = \"PreToolUse\"\nagent = \"claude\"\n\
         event_json = '{\"tool_name\": \"Write\"}'\nexpect = \"not refused\"\n",
    )
    .unwrap();
    let cases = hookd_test(&sb, &["--cases", sb.p("cases.toml").to_str().unwrap()], "");
    let out = text(&cases.stdout);
    assert_eq!(code(&cases.status), 1, "{out}{}", text(&cases.stderr));
    assert!(out.contains("did you mean"), "{out}");
}

/// Finding: `hookd fire --agent claude` fired as an agent named "claude", so that the guard scoped to
/// claude-code did not run and the answer was "not refused", exit 0, where Claude Code itself is refused;
/// `hookd test` and the settings refuse that very name. And `hookd setup claude` (or `import --agent
/// gemini`) said only "unknown agent", without the name meant.
#[test]
fn a_misspelt_agent_on_the_command_line_is_named_by_every_command() {
    let d = Daemon::start(claude_only_guard());
    let socket = d.socket.to_str().unwrap();
    let event = r#"{"tool_name": "Write", "tool_input": {"file_path": "x"}}"#;
    let fire = |agent: &str| {
        run_hookd(
            &["fire", "PreToolUse", "--agent", agent, "--socket", socket],
            Some(event),
            TIMEOUT,
        )
    };
    assert_eq!(code(&fire("claude-code").status), 2);
    let typo = fire("claude");
    let stderr = text(&typo.stderr);
    assert_eq!(code(&typo.status), 1, "{}{stderr}", text(&typo.stdout));
    assert!(stderr.contains("did you mean \"claude-code\""), "{stderr}");
    assert!(typo.stdout.is_empty(), "{}", text(&typo.stdout));
    // A client's own agent is still anyone's to name.
    let own = fire("my-sdk-bot");
    assert_eq!(code(&own.status), 0, "{}", text(&own.stderr));

    let home = d.sb.p("home");
    fs::create_dir_all(&home).unwrap();
    for (args, meant) in [
        (&["setup", "claude"][..], "claude-code"),
        (&["setup", "Codex", "--dry-run"][..], "codex"),
        (&["relay", "--print-settings", "qwen"][..], "qwen-code"),
    ] {
        let mut cmd = Command::new(BIN);
        cmd.args(args).env("HOME", &home);
        let out = run_with_deadline(cmd, None, TIMEOUT);
        let stderr = text(&out.stderr);
        assert_eq!(code(&out.status), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("did you mean \"{meant}\"?")),
            "{args:?}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?}: {}", text(&out.stdout));
    }
    let file = d.sb.p("settings.json");
    fs::write(&file, r#"{"hooks": {}}"#).unwrap();
    let out = run_hookd(
        &["import", "--agent", "gemini", file.to_str().unwrap()],
        None,
        TIMEOUT,
    );
    assert_eq!(code(&out.status), 1);
    assert!(
        text(&out.stderr).contains("did you mean \"gemini-cli\"?"),
        "{}",
        text(&out.stderr)
    );
    // Nothing setup would have written.
    assert!(!home.join(".claude").exists());
}
