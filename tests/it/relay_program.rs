//! `hookd-relay`, the relay as a program of its own: it answers every agent exactly as `hookd
//! relay` does (refused, added to, nothing to say, the daemon down, fail-open and `--fail-closed`), reads
//! the same command lines, and is what `--print-settings` and `setup` write when it is installed beside
//! `hookd`, the old `hookd relay` entries being recognised and replaced.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::common::*;

/// A safety net for one run (never a speed assertion).
const T: Duration = Duration::from_secs(20);

/// `program` (`words` first: `["relay"]` for hookd) with `args`, `input` on stdin, its spool in `state`.
fn run(program: &str, words: &[&str], args: &[&str], input: &str, state: &Path) -> Said {
    relay_said(program, words, args, input, state, T)
}

/// The same call through `hookd relay` and through `hookd-relay`: both answers, in that order.
fn both(args: &[&str], input: &str, state: &Path) -> (Said, Said) {
    (
        run(BIN, &["relay"], args, input, state),
        run(RELAY_BIN, &[], args, input, state),
    )
}

/// A daemon with a guard refusing `rm -rf` (exit 2, its reason on stderr) and a hook that adds a line
/// of context to every event.
fn guarded_daemon() -> Daemon {
    Daemon::with_scripts(
        &[
            (
                "guard.sh",
                "input=$(cat)\ncase \"$input\" in *'rm -rf'*) echo 'no rm -rf here' >&2; exit 2;; esac",
            ),
            ("context.sh", "cat >/dev/null\necho 'branch: main'"),
        ],
        "[[hooks.PreToolUse]]\nname = \"guard\"\ncommand = \"@DIR@/guard.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"context\"\ncommand = \"@DIR@/context.sh\"\n",
    )
}

/// A shell call's PreToolUse input in `agent`'s own words.
fn shell_call(agent: &str, command: &str, cwd: &Path) -> String {
    let cwd = cwd.display();
    let command = serde_json::to_string(command).unwrap();
    match agent {
        "gemini-cli" => format!(
            r#"{{"hook_event_name":"BeforeTool","session_id":"s1","cwd":"{cwd}","tool_name":"run_shell_command","tool_input":{{"command":{command}}}}}"#
        ),
        _ => format!(
            r#"{{"hook_event_name":"PreToolUse","session_id":"s1","cwd":"{cwd}","tool_name":"Bash","tool_input":{{"command":{command}}}}}"#
        ),
    }
}

#[test]
fn every_answer_is_the_same_through_both_programs() {
    let d = guarded_daemon();
    let socket = d.sb.socket();
    let socket = socket.to_str().unwrap();
    let state = d.sb.p("state");
    for agent in ["claude-code", "codex", "gemini-cli", "qwen-code"] {
        for (command, refused) in [("rm -rf /tmp/x", true), ("ls -la", false)] {
            let input = shell_call(agent, command, d.sb.path());
            let (hookd, program) = both(&["--agent", agent, "--socket", socket], &input, &state);
            assert_eq!(hookd, program, "{agent}, {command}");
            let told = format!("{}{}", program.stdout, program.stderr);
            assert_eq!(
                told.contains("no rm -rf here"),
                refused,
                "{agent}, {command}: {program:?}"
            );
        }
    }
}

#[test]
fn with_the_daemon_down_both_fail_open_or_closed_alike() {
    let sb = Sandbox::new();
    let socket = sb.p("nobody-listens.sock");
    let socket = socket.to_str().unwrap();
    let state = sb.p("state");
    let input = shell_call("claude-code", "rm -rf /tmp/x", sb.path());
    let (hookd, program) = both(
        &["--agent", "claude-code", "--socket", socket],
        &input,
        &state,
    );
    assert_eq!(hookd, program);
    assert_eq!(program.code, 0, "fail-open: {program:?}");
    let (hookd, program) = both(
        &[
            "--agent",
            "claude-code",
            "--socket",
            socket,
            "--fail-closed",
        ],
        &input,
        &state,
    );
    assert_eq!(hookd, program);
    // Claude Code is refused in its own JSON, exit 0.
    let answer: serde_json::Value = serde_json::from_str(&program.stdout).unwrap();
    let decided = &answer["hookSpecificOutput"];
    assert_eq!(decided["permissionDecision"], "deny", "{program:?}");
    assert_eq!(
        decided["permissionDecisionReason"], "hookd is not running",
        "{program:?}"
    );
}

#[test]
fn its_command_line_is_the_relays() {
    let sb = Sandbox::new();
    let state = sb.p("state");
    let help = run(RELAY_BIN, &[], &["--help"], "", &state);
    assert_eq!(help.code, 0, "{help:?}");
    assert!(
        help.stdout.contains("--agent") && help.stdout.contains("--fail-closed"),
        "{help:?}"
    );
    // A mistake is said once, by the full parser, and exits 1: never 2, which an agent reads as a refusal.
    let typo = run(RELAY_BIN, &[], &["--agnet", "codex"], "{}", &state);
    assert_eq!(typo.code, 1, "{typo:?}");
    assert!(typo.stderr.contains("--agnet"), "{typo:?}");
    let unknown = run(RELAY_BIN, &[], &["--agent", "claude"], "{}", &state);
    assert_eq!(unknown.code, 1, "{unknown:?}");
    assert!(unknown.stderr.contains("unknown agent"), "{unknown:?}");
    let settings = run(RELAY_BIN, &[], &["--print-settings", "codex"], "", &state);
    assert_eq!(settings.code, 1, "{settings:?}");
    assert!(
        settings
            .stderr
            .contains("hookd relay --print-settings AGENT"),
        "{settings:?}"
    );
    assert_eq!(settings.stdout, "", "{settings:?}");
}

/// `hookd` copied into `dir`, with `hookd-relay` beside it when `with_relay` (mode `relay_mode`).
fn install(dir: &Path, with_relay: bool, relay_mode: u32) -> String {
    fs::create_dir_all(dir).unwrap();
    let hookd = dir.join("hookd");
    fs::copy(BIN, &hookd).unwrap();
    if with_relay {
        let relay = dir.join("hookd-relay");
        fs::copy(RELAY_BIN, &relay).unwrap();
        fs::set_permissions(&relay, fs::Permissions::from_mode(relay_mode)).unwrap();
    }
    hookd.to_str().unwrap().to_string()
}

fn printed_settings(hookd: &str, state: &Path) -> String {
    let said = run(
        hookd,
        &["relay"],
        &["--print-settings", "claude-code"],
        "",
        state,
    );
    assert_eq!(said.code, 0, "{said:?}");
    said.stdout
}

#[test]
fn print_settings_writes_the_relays_program_only_where_it_is_installed() {
    let sb = Sandbox::new();
    let state = sb.p("state");
    let dir = sb.p("with");
    let hookd = install(&dir, true, 0o755);
    let printed = printed_settings(&hookd, &state);
    let relay = format!("{} --agent claude-code", dir.join("hookd-relay").display());
    assert!(printed.contains(&relay), "{printed}");
    assert!(!printed.contains(" relay --agent"), "{printed}");

    let alone = install(&sb.p("alone"), false, 0);
    let printed = printed_settings(&alone, &state);
    assert!(
        printed.contains(&format!("{alone} relay --agent claude-code")),
        "{printed}"
    );

    // One that cannot be run is not written: the agent would fail to start it on every call.
    let unrunnable = install(&sb.p("unrunnable"), true, 0o644);
    let printed = printed_settings(&unrunnable, &state);
    assert!(
        printed.contains(&format!("{unrunnable} relay --agent claude-code")),
        "{printed}"
    );
}

#[test]
fn setup_replaces_hookd_relay_entries_with_the_relays_program_and_twice_is_once() {
    let sb = Sandbox::new();
    let file = sb.p("settings.json");
    let old = format!("{BIN} relay --agent claude-code");
    fs::write(
        &file,
        format!(
            r#"{{"model": "x", "hooks": {{"PreToolUse": [{{"matcher": "*", "hooks": [{{"type": "command", "command": "{old}"}}]}}, {{"matcher": "Bash", "hooks": [{{"type": "command", "command": "./mine.sh"}}]}}]}}}}"#
        ),
    )
    .unwrap();
    let file_arg = file.to_str().unwrap();
    for _ in 0..2 {
        let said = run(
            BIN,
            &["setup", "claude-code"],
            &["--file", file_arg],
            "",
            &sb.p("state"),
        );
        assert_eq!(said.code, 0, "{said:?}");
    }
    let written = fs::read_to_string(&file).unwrap();
    assert!(!written.contains(&old), "{written}");
    assert!(written.contains("./mine.sh"), "{written}");
    assert!(written.contains("\"model\""), "{written}");
    let new = format!("{RELAY_BIN} --agent claude-code");
    let settings: serde_json::Value = serde_json::from_str(&written).unwrap();
    let pre_tool_use = settings["hooks"]["PreToolUse"].to_string();
    assert_eq!(
        pre_tool_use.matches(&new).count(),
        1,
        "one relay entry at PreToolUse: {pre_tool_use}"
    );
}

/// The static build (`cargo build-static`), named by `HOOKD_STATIC_RELAY`: CI builds it and sets it.
fn static_relay() -> Option<String> {
    std::env::var("HOOKD_STATIC_RELAY")
        .ok()
        .filter(|path| !path.is_empty())
}

#[test]
fn the_static_build_answers_as_the_default_one() {
    let relay = static_relay();
    if !require(
        relay.is_some(),
        "HOOKD_STATIC_RELAY names no static hookd-relay (cargo build-static; .ci/run sets it)",
    ) {
        return;
    }
    let relay = relay.unwrap();
    let d = guarded_daemon();
    let socket = d.sb.socket();
    let socket = socket.to_str().unwrap();
    let state = d.sb.p("state");
    let down = d.sb.p("nobody-listens.sock");
    let down = down.to_str().unwrap();
    for agent in ["claude-code", "codex", "gemini-cli", "qwen-code"] {
        for (command, refused) in [("rm -rf /tmp/x", true), ("ls -la", false)] {
            let input = shell_call(agent, command, d.sb.path());
            for args in [
                &["--agent", agent, "--socket", socket][..],
                &["--agent", agent, "--socket", down],
                &["--agent", agent, "--socket", down, "--fail-closed"],
            ] {
                let dynamic = run(RELAY_BIN, &[], args, &input, &state);
                let fixed = run(&relay, &[], args, &input, &state);
                assert_eq!(fixed, dynamic, "{agent}, {command}, {args:?}");
            }
            let answered = run(
                &relay,
                &[],
                &["--agent", agent, "--socket", socket],
                &input,
                &state,
            );
            assert_eq!(
                format!("{}{}", answered.stdout, answered.stderr).contains("no rm -rf here"),
                refused,
                "{agent}, {command}: {answered:?}"
            );
        }
    }
    // Without $HOME, the relay still answers. (The spool is kept in the test's folder: with neither
    // variable, a static glibc reads the home folder from the password database, the user's real one.)
    let mut command = Command::new(&relay);
    command
        .args(["--agent", "claude-code", "--socket", down, "--fail-closed"])
        .env_remove("HOME")
        .env("XDG_STATE_HOME", &state);
    let out = run_with_deadline(
        command,
        Some(&shell_call("claude-code", "ls", d.sb.path())),
        T,
    );
    assert!(
        text(&out.stdout).contains("hookd is not running"),
        "{}",
        text(&out.stderr)
    );
}
