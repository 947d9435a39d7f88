//! `examples/sdk_client.py`, the Python client an SDK-built agent would embed, against a real daemon:
//! it finds the socket, says hello, fires a PreToolUse for Bash, and exits 2 refused, 0 allowed, 1 on
//! errors.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::common::*;

/// A safety net for one run of the example (never a speed assertion).
const T: Duration = Duration::from_secs(20);

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sdk_client.py");

/// A daemon whose one hook, inline in the settings, refuses `rm -rf` and otherwise adds a line naming
/// the agent it ran for.
fn policy_daemon() -> Daemon {
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"deny-rm\"\nmatcher = \"Bash\"\n\
         command = \"if grep -q 'rm -rf'; then echo 'rm -rf is not allowed' >&2; exit 2; fi; echo \\\"checked for $HOOKD_AGENT\\\"\"\n",
    );
    Daemon::start(sb)
}

/// Runs the example with `args`, with `env` set over the places the runner gives it (`keep_home`);
/// returns (exit, stdout, stderr).
fn example(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new("python3");
    cmd.arg(EXAMPLE).args(args).envs(env.iter().copied());
    let out = run_with_deadline(cmd, None, T);
    (code(&out.status), text(&out.stdout), text(&out.stderr))
}

fn socket_args<'a>(socket: &'a Path, command: &'a str) -> Vec<&'a str> {
    vec!["--socket", socket.to_str().unwrap(), "--", command]
}

#[test]
fn rm_rf_is_refused_with_the_hooks_reason() {
    let d = policy_daemon();
    let (code, stdout, stderr) = example(&socket_args(&d.socket, "rm -rf /"), &[]);
    assert_eq!(code, 2, "{stdout:?} {stderr:?}");
    assert_eq!(stdout, "refused: rm -rf is not allowed\n", "{stderr:?}");
    assert_eq!(stderr, "", "{stdout:?}");
}

#[test]
fn a_harmless_command_is_allowed_with_the_adds() {
    let d = policy_daemon();
    let (code, stdout, stderr) = example(&socket_args(&d.socket, "ls -l"), &[]);
    assert_eq!(code, 0, "{stdout:?} {stderr:?}");
    // The hook ran for the agent the example's hello named.
    assert_eq!(
        stdout, "allowed; hooks add: checked for my-sdk-agent\n",
        "{stderr:?}"
    );
    assert_eq!(stderr, "", "{stdout:?}");
}

#[test]
fn daemon_down_exits_1_with_one_line_on_stderr() {
    let sb = Sandbox::new();
    let nothing = sb.p("nothing/hookd.sock");
    let (code, stdout, stderr) = example(&socket_args(&nothing, "ls"), &[]);
    assert_eq!(code, 1, "{stdout:?} {stderr:?}");
    assert_eq!(stdout, "", "{stderr:?}");
    assert_eq!(stderr.lines().count(), 1, "one line on stderr: {stderr:?}");
    assert!(stderr.contains("not running"), "{stderr:?}");
}

#[test]
fn the_socket_comes_from_hookd_socket_then_xdg_runtime_dir() {
    let d = policy_daemon();
    let socket = d.socket.to_str().unwrap();
    let (code, stdout, stderr) = example(
        &["--", "rm -rf /tmp/x"],
        &[
            ("HOOKD_SOCKET", socket),
            ("XDG_RUNTIME_DIR", "/nonexistent"),
        ],
    );
    assert_eq!(code, 2, "$HOOKD_SOCKET first: {stdout:?} {stderr:?}");
    assert_eq!(stdout, "refused: rm -rf is not allowed\n");

    // $XDG_RUNTIME_DIR/hookd/hookd.sock, here a symlink to the daemon's socket.
    let xdg = d.sb.p("xdg");
    std::fs::create_dir_all(xdg.join("hookd")).unwrap();
    std::os::unix::fs::symlink(&d.socket, xdg.join("hookd/hookd.sock")).unwrap();
    let (code, stdout, stderr) = example(
        &["--", "echo", "hi"],
        &[
            ("HOOKD_SOCKET", ""),
            ("XDG_RUNTIME_DIR", xdg.to_str().unwrap()),
        ],
    );
    assert_eq!(code, 0, "$XDG_RUNTIME_DIR: {stdout:?} {stderr:?}");
    assert_eq!(stdout, "allowed; hooks add: checked for my-sdk-agent\n");
}

#[test]
fn hello_warnings_name_hooks_that_never_run_for_the_agent() {
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"ok\"\ncommand = \"true\"\n\n\
         [[hooks.PreCompact]]\nname = \"compact\"\ncommand = \"true\"\n",
    );
    let d = Daemon::start(sb);
    let (code, stdout, stderr) = example(&socket_args(&d.socket, "ls"), &[]);
    assert_eq!(code, 0, "{stdout:?} {stderr:?}");
    assert_eq!(stdout, "allowed\n", "{stderr:?}");
    assert!(
        stderr.starts_with("warning:")
            && stderr.contains("compact")
            && stderr.contains("PreCompact"),
        "{stderr:?}"
    );
}

#[test]
fn a_bad_command_line_exits_1_not_2() {
    // 2 means "refused": a usage error must not look like one.
    let (code, stdout, stderr) = example(&[], &[]);
    assert_eq!(code, 1, "{stdout:?} {stderr:?}");
    let (code, _, stderr) = example(&["--timeout", "0", "--", "ls"], &[]);
    assert_eq!(code, 1, "{stderr:?}");
}
