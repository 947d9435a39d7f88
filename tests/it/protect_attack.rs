//! The guard of itself attacked through the real daemon: spellings of a change to hookd's
//! files, or of its stop, that the guard first let through, sent as Claude Code's `PreToolUse` through
//! `hookd relay`; and reads it first refused, which go through.

use std::time::Duration;

use crate::common::*;

const T: Duration = Duration::from_secs(20);

fn daemon() -> Daemon {
    let sb = Sandbox::with_example_config();
    let home = sb.p("home");
    std::fs::create_dir_all(home.join("work")).unwrap();
    Daemon::start_with(sb, |cmd| {
        cmd.env("HOME", &home)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME");
    })
}

/// Whether Claude Code, running `command` in `home/work`, is refused by hookd's own guard (a relay
/// that failed or an answer not read fails the test: neither is a call let through).
fn refused(d: &Daemon, command: &str) -> bool {
    claude_bash_in_work(d, command, T).is_some_and(|(answer, stdout)| {
        answer["hookSpecificOutput"]["permissionDecision"] == "deny"
            && stdout.contains("hookd protects itself")
    })
}

#[test]
fn attack_spellings_the_guard_let_through_are_refused_by_the_daemon() {
    let d = daemon();
    let conf = d.sb.config_dir().display().to_string();
    let pid = d.pid();
    for command in [
        format!("mv {conf}{{,.off}}"),
        format!("cd {conf}; cd /tmp; cd -; rm -f hooks.toml"),
        format!("cd \"$(dirname {conf}/hooks.toml)\" && : > hooks.toml"),
        format!("kill -s KILL {pid}"),
        "systemctl --user -s KILL kill hookd".to_string(),
        "echo pkill hookd | sh".to_string(),
        format!("cp -l {conf}/hooks.toml ../innocent.txt"),
    ] {
        assert!(refused(&d, &command), "let through: {command}");
    }
    assert!(d.config.exists(), "the settings are still there");
}

#[test]
fn attack_a_write_through_a_hard_link_is_refused_by_the_daemon() {
    let d = daemon();
    let link = d.sb.p("home/work/innocent.txt");
    std::fs::hard_link(&d.config, &link).unwrap();
    assert!(refused(&d, "echo '' > innocent.txt"));
    assert!(!refused(&d, "echo '' > other.txt"));
}

#[test]
fn attack_reads_the_guard_refused_go_through_the_daemon() {
    let d = daemon();
    let settings = d.config.display().to_string();
    for command in [
        format!("sed -n '1,5p' {settings}"),
        format!("awk 'NR < 3' {settings}"),
        format!("cat {settings} | python3 -c 'import sys; sys.stdin.read()'"),
        format!("ls {} | xargs grep -l hooks", d.sb.config_dir().display()),
    ] {
        assert!(!refused(&d, &command), "refused: {command}");
    }
}
