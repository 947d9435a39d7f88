//! The client commands (contract section 2): `hookd fire`, `hookd status`, `hookd reload`, with their
//! exit statuses, against a real daemon and against none.

use std::time::Duration;

use crate::common::*;
use serde_json::Value;

const T: Duration = Duration::from_secs(20);

fn policy_daemon() -> Daemon {
    let sb = Sandbox::new();
    sb.script("deny.sh", "echo 'no bash here' >&2\nexit 2");
    sb.script("ctx.sh", "echo 'some context'");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"deny\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/deny.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"ctx\"\nmatcher = \"Read\"\ncommand = \"@DIR@/ctx.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"codex-deny\"\nmatcher = \"Write\"\nagents = [\"codex\"]\ncommand = \"@DIR@/deny.sh\"\n",
    );
    Daemon::start(sb)
}

fn fire_cli(d: &Daemon, extra: &[&str], event: &str) -> (i32, Value, String) {
    let socket = d.socket.to_str().unwrap();
    let mut args = vec!["fire", "PreToolUse", "--socket", socket];
    args.extend_from_slice(extra);
    let out = run_hookd(&args, Some(event), T);
    let stdout = text(&out.stdout);
    let line = stdout.lines().next().unwrap_or("");
    let v: Value = serde_json::from_str(line).unwrap_or_else(|e| {
        panic!(
            "fire printed no JSON response line ({e}): {stdout:?} stderr {:?}",
            text(&out.stderr)
        )
    });
    (code(&out.status), v, text(&out.stderr))
}

#[test]
fn fire_exit_0_when_not_refused() {
    let d = policy_daemon();
    let (code, v, err) = fire_cli(&d, &[], r#"{"session_id": "s", "tool_name": "Read"}"#);
    assert_eq!(code, 0, "{v} {err}");
    assert_eq!(v["refused"], false, "{v}");
    assert_eq!(adds(&v), vec!["some context"], "{v}");
}

#[test]
fn fire_exit_2_when_refused() {
    let d = policy_daemon();
    let (code, v, err) = fire_cli(&d, &[], r#"{"session_id": "s", "tool_name": "Bash"}"#);
    assert_eq!(code, 2, "{v} {err}");
    assert_eq!(v["refused"], true, "{v}");
    assert_eq!(v["reason"], "no bash here", "{v}");
}

#[test]
fn fire_passes_the_agent() {
    let d = policy_daemon();
    let event = r#"{"session_id": "s", "tool_name": "Write"}"#;
    let (code, v, _) = fire_cli(&d, &["--agent", "codex"], event);
    assert_eq!(code, 2, "{v}");
    assert_eq!(hook_names(&v), vec!["codex-deny"], "{v}");
    let (code, v, _) = fire_cli(&d, &[], event);
    assert_eq!(code, 0, "{v}");
    assert_eq!(hook_names(&v), Vec::<String>::new(), "{v}");
}

#[test]
fn fire_exit_1_when_daemon_down() {
    let sb = Sandbox::new();
    let socket = sb.socket();
    let out = run_hookd(
        &["fire", "PreToolUse", "--socket", socket.to_str().unwrap()],
        Some(r#"{"tool_name": "Bash"}"#),
        T,
    );
    assert_eq!(code(&out.status), 1, "stdout {:?}", text(&out.stdout));
    let err = text(&out.stderr);
    assert_eq!(
        err.trim().lines().count(),
        1,
        "not one clear line on stderr: {err:?}"
    );
    assert!(!err.trim().is_empty());
}

#[test]
fn fire_exit_1_on_bad_input() {
    let d = policy_daemon();
    let socket = d.socket.to_str().unwrap();
    for input in ["this is not json", "[1, 2]"] {
        let out = run_hookd(&["fire", "PreToolUse", "--socket", socket], Some(input), T);
        assert_eq!(
            code(&out.status),
            1,
            "{input}: stdout {:?}",
            text(&out.stdout)
        );
        assert!(
            !text(&out.stderr).trim().is_empty(),
            "{input}: nothing on stderr"
        );
    }
}

#[test]
fn fire_exit_1_on_unknown_moment() {
    let d = policy_daemon();
    let socket = d.socket.to_str().unwrap();
    let out = run_hookd(&["fire", "PreTooluse", "--socket", socket], Some("{}"), T);
    assert_eq!(code(&out.status), 1, "stdout {:?}", text(&out.stdout));
}

#[test]
fn status_exit_0_and_1_when_down() {
    let d = policy_daemon();
    let out = run_hookd(&["status", "--socket", d.socket.to_str().unwrap()], None, T);
    assert_eq!(code(&out.status), 0, "stderr {:?}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&d.pid().to_string()),
        "status does not show the pid: {stdout}"
    );

    let sb = Sandbox::new();
    let out = run_hookd(
        &["status", "--socket", sb.socket().to_str().unwrap()],
        None,
        T,
    );
    assert_eq!(
        code(&out.status),
        1,
        "status with no daemon: {:?}",
        text(&out.stdout)
    );
    assert!(!text(&out.stderr).trim().is_empty(), "nothing on stderr");
}

#[test]
fn reload_exit_0_then_1_with_errors() {
    let d = policy_daemon();
    let socket = d.socket.to_str().unwrap();
    let out = run_hookd(&["reload", "--socket", socket], None, T);
    assert_eq!(
        code(&out.status),
        0,
        "stdout {:?} stderr {:?}",
        text(&out.stdout),
        text(&out.stderr)
    );

    d.sb.settings("[[hooks.PreToolUse]]\nname = \"x\"\ncommand = \"true\"\nbogus = 1\n");
    let out = run_hookd(&["reload", "--socket", socket], None, T);
    assert_eq!(code(&out.status), 1, "stdout {:?}", text(&out.stdout));
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    let loc = format!("{}:4:", d.config.display());
    assert!(
        all.contains(&loc) && all.contains("bogus"),
        "the error ({loc}...bogus) is not printed: {all}"
    );

    let out = run_hookd(
        &["reload", "--socket", d.sb.p("nope.sock").to_str().unwrap()],
        None,
        T,
    );
    assert_eq!(code(&out.status), 1, "reload with no daemon");
}
