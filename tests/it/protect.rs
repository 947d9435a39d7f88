//! hookd's guard of itself (docs/security.md), as agents meet it: the real daemon, each agent's
//! captured hook input rewritten into a call that would switch the guard off, sent through `hookd relay
//! --agent NAME` and answered in that agent's dialect, with the example settings and with settings that
//! hold no hook at all. Reads and ordinary work go through; every refusal is in the journal under
//! `hookd:protect`.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use crate::common::*;

const T: Duration = Duration::from_secs(20);

/// A daemon whose HOME is the sandbox's `home/` (where `~` of the calls points), on `settings` (the
/// example settings when `None`).
fn daemon(settings: Option<&str>) -> Daemon {
    let sb = match settings {
        None => Sandbox::with_example_config(),
        Some(_) => Sandbox::new(),
    };
    if let Some(text) = settings {
        sb.settings(text);
    }
    let home = sb.p("home");
    std::fs::create_dir_all(home.join("work")).unwrap();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(home.join(".claude/settings.json"), "{}\n").unwrap();
    Daemon::start_with(sb, |cmd| {
        cmd.env("HOME", &home)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME");
    })
}

fn home(d: &Daemon) -> PathBuf {
    d.sb.p("home")
}

const AGENTS: [&str; 5] = [
    "claude-code",
    "codex",
    "gemini-cli",
    "qwen-code",
    "copilot-cli",
];

/// Every call that would switch the guard off or stop hookd, for every agent, refused; reads and
/// ordinary work not.
fn holds(d: &Daemon) {
    let home = home(d);
    let work = home.join("work");
    let settings = d.config.display().to_string();
    let conf = d.sb.config_dir().display().to_string();
    let pid = d.pid();
    let refused_calls = [
        format!("sed -i 's/^/# /' {settings}"),
        format!("echo '' > {settings}"),
        format!("rm -f {settings}"),
        format!("mv {conf} {conf}.off"),
        "echo '{}' > ~/.claude/settings.json".to_string(),
        "systemctl --user stop hookd".to_string(),
        "pkill hookd".to_string(),
        format!("kill -9 {pid}"),
        format!("cd {conf} && bash -lc 'truncate -s 0 hooks.toml'"),
    ];
    for agent in AGENTS {
        for command in &refused_calls {
            let (event, extra) = shell_call(agent, command, &work);
            let out = relay(d, agent, &event, &extra);
            let reason = refusal(agent, &out)
                .unwrap_or_else(|| panic!("{agent} let through {command:?}: {out:?}"));
            assert!(
                reason.contains("hookd protects itself"),
                "{agent} {command:?}: {reason}"
            );
        }
        for path in [d.config.clone(), home.join(".claude/settings.json")] {
            let (event, extra) = write_call(agent, &path, &work);
            let out = relay(d, agent, &event, &extra);
            assert!(
                refusal(agent, &out).is_some(),
                "{agent} let a write of {} through: {out:?}",
                path.display()
            );
        }
        for command in [
            format!("cat {settings}"),
            format!("grep -c hooks {settings}"),
            "ls -la".to_string(),
            "echo done > notes.txt".to_string(),
        ] {
            let (event, extra) = shell_call(agent, &command, &work);
            let out = relay(d, agent, &event, &extra);
            assert_eq!(
                refusal(agent, &out),
                None,
                "{agent} refused {command:?}: {out:?}"
            );
        }
        let (event, extra) = write_call(agent, &work.join("notes.txt"), &work);
        let out = relay(d, agent, &event, &extra);
        assert_eq!(refusal(agent, &out), None, "{agent}: {out:?}");
    }
    assert!(
        std::fs::read_to_string(&d.config).unwrap().contains('#') || d.config.exists(),
        "the settings file is still there"
    );
}

#[test]
fn the_guard_holds_with_settings_that_hold_no_hook() {
    let d = daemon(Some("# no hooks at all\n"));
    holds(&d);
}

#[test]
fn the_guard_holds_with_the_example_settings_and_the_guard_still_refuses_after() {
    let d = daemon(None);
    holds(&d);
    // The example guard is still in force, and still refuses what it refuses.
    let (event, extra) = shell_call("claude-code", "rm -rf ~", &home(&d).join("work"));
    let out = relay(&d, "claude-code", &event, &extra);
    let reason = refusal("claude-code", &out).expect("rm -rf ~ let through");
    assert!(reason.contains("rule delete-root"), "{reason}");
}

#[test]
fn a_refusal_is_recorded_under_hookds_own_name_and_turned_off_only_in_the_settings() {
    let d = daemon(Some("# no hooks\n"));
    let settings = d.config.display().to_string();
    let answer = d.fire(
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": format!("rm {settings}")}, "cwd": "/"}),
    );
    assert_eq!(answer["refused"], true, "{answer}");
    assert_eq!(answer["hooks"][0]["name"], "hookd:protect", "{answer}");
    let journal = state_home_for(&d.socket).join("hookd/journal.jsonl");
    wait_until(T, "the refusal in the journal", || {
        std::fs::read_to_string(&journal).is_ok_and(|text| {
            text.lines()
                .any(|line| line.contains("\"hookd:protect\"") && line.contains("\"refused\""))
        })
    });
    // A user's hook may not take hookd's name.
    d.sb.settings("[[hooks.PreToolUse]]\nname = \"hookd:protect\"\ncommand = \"true\"\n");
    let reload = d.reload();
    assert_eq!(reload["ok"], false, "{reload}");
    // Turned off by hand in the settings, it is off.
    d.sb.settings("[protect]\nenabled = false\n");
    let reload = d.reload();
    assert_eq!(reload["ok"], true, "{reload}");
    let answer = d.fire(
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": format!("rm {settings}")}, "cwd": "/"}),
    );
    assert_eq!(answer["refused"], false, "{answer}");
}
