//! The guard of itself, judged call by call: each row a call the issue names (or a disguise of one)
//! that must be refused, or ordinary work and reads that must not be.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::{Places, Shield};
use crate::settings::Settings;

struct World {
    _dir: tempfile::TempDir,
    home: PathBuf,
    shield: Shield,
}

fn world(protect: &str) -> World {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let config = home.join(".config/hookd");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::create_dir_all(home.join("project/src")).unwrap();
    std::fs::create_dir_all(home.join("bin")).unwrap();
    std::fs::write(home.join("bin/guard.sh"), "#!/bin/sh\n").unwrap();
    std::fs::write(config.join("deny.py"), "").unwrap();
    std::os::unix::fs::symlink(config.join("hooks.toml"), home.join("project/link.toml")).unwrap();
    let protect = protect.replace("{home}", &home.to_string_lossy());
    let text = format!(
        "{protect}\n[[hooks.PreToolUse]]\nname = \"g\"\nworker = [\"./deny.py\"]\n[[hooks.Stop]]\nname = \"s\"\ncommand = \"{}/bin/guard.sh --x\"\n",
        home.display()
    );
    std::fs::write(config.join("hooks.toml"), &text).unwrap();
    let settings = Settings::parse(&config.join("hooks.toml"), "hooks.toml", &text).unwrap();
    let places = Places {
        socket: Some(dir.path().join("run/hookd/hookd.sock")),
        state_dir: Some(home.join(".local/state/hookd")),
        units_dir: Some(home.join(".config/systemd/user")),
        agent_files: vec![
            ("Claude Code".into(), home.join(".claude/settings.json")),
            ("Codex".into(), home.join(".codex/config.toml")),
        ],
        set_up_files: vec![home.join("project/.github/hooks/hookd.json")],
        programs: vec![home.join(".cargo/bin/hookd-relay-lite")],
        daemon_pid: Some(4242),
        daemon_command_line: "/home/u/.cargo/bin/hookd serve --config x".into(),
        home: home.clone(),
        vars: vec![("HOME".into(), home.to_string_lossy().into_owned())],
    };
    World {
        shield: Shield::new(&settings, &places),
        home,
        _dir: dir,
    }
}

fn event(tool: &str, input: Value, cwd: &Path) -> Map<String, Value> {
    json!({"tool_name": tool, "tool_input": input, "cwd": cwd})
        .as_object()
        .unwrap()
        .clone()
}

fn bash(world: &World, command: &str) -> Option<String> {
    let cwd = world.home.join("project");
    world.shield.judge(
        "PreToolUse",
        &event("Bash", json!({ "command": command }), &cwd),
    )
}

#[test]
fn every_way_of_switching_the_guard_off_by_shell_is_refused() {
    let w = world("");
    for command in [
        "sed -i 's/^/# /' ~/.config/hookd/hooks.toml",
        "echo '' > ~/.config/hookd/hooks.toml",
        "rm -f ~/.config/hookd/hooks.toml",
        "mv ~/.config/hookd ~/.config/hookd.off",
        "rm -rf ~/.config",
        "cd ~/.config/hookd && sed -i 's/x/y/' hooks.toml",
        "cd .. && cd .config && rm -r hookd",
        "printf '' | tee ~/.config/hookd/hooks.toml",
        "truncate -s 0 $HOME/.config/hookd/hooks.toml",
        "chmod 777 ~/.config/hookd/hooks.toml",
        "chmod -R go+w ~/.config",
        "cp /tmp/empty.toml ~/.config/hookd/hooks.toml",
        "cp -r /tmp/evil/.config ~/",
        "ln -sf /dev/null ~/.config/hookd/hooks.toml",
        "echo x >> link.toml",
        "rm -rf ~/.config/hook*",
        "rm -rf ~/.c*/hookd",
        "bash -c 'rm -f ~/.config/hookd/hooks.toml'",
        "sudo -u me sh -c \"echo > ~/.config/hookd/hooks.toml\"",
        "env -i HOME=/x rm ~/.config/hookd/deny.py",
        "W=~/.config/hookd; rm -rf $W",
        "python3 -c \"open('~/.config/hookd/hooks.toml','w')\"",
        "echo 'rm ~/.config/hookd/hooks.toml' | sh",
        "echo ~/.config/hookd/hooks.toml | xargs rm",
        "find ~/.config/hookd -name '*.toml' -delete",
        "find ~/.config -exec rm -rf {} +",
        "dd if=/dev/null of=$HOME/.config/hookd/hooks.toml",
        "rm ~/.local/state/hookd/journal.jsonl",
        "> ~/.claude/settings.json",
        "vim ~/.codex/config.toml",
        "echo '#!/bin/sh' > ~/bin/guard.sh",
        "cp /bin/true ~/.cargo/bin/hookd-relay-lite",
        "rm ~/.config/systemd/user/hookd.service",
        "rm ~/.config/systemd/user/default.target.wants/hookd.service",
        "systemctl --user stop hookd",
        "systemctl --user disable --now hookd.socket",
        "systemctl --user mask hookd",
        "systemctl --user kill hookd.service",
        "pkill hookd",
        "pkill -9 -f 'hookd serve'",
        "killall hookd",
        "kill -9 4242",
        "kill 4242",
        "kill -STOP 4242",
        "kill -- -4242",
        "kill -9 -1",
        "kill $(pgrep hookd)",
        "kill `pidof hookd`",
        "pkill -u me",
        "hookd setup claude-code --undo",
        "bash <<'EOF'\nrm -f ~/.config/hookd/hooks.toml\nEOF",
        "bash <<< 'rm -f ~/.config/hookd/hooks.toml'",
        "watch -n 1 rm -f ~/.config/hookd/hooks.toml",
        "trap 'rm -f ~/.config/hookd/hooks.toml' EXIT",
        "git checkout -- ~/.config/hookd/hooks.toml",
        "rm -rf ~/../*/.config",
        "rm .github/hooks/hookd.json",
        "rm -rf ~/*",
    ] {
        assert!(bash(&w, command).is_some(), "let through: {command}");
    }
}

#[test]
fn reads_and_ordinary_work_go_on() {
    let w = world("");
    for command in [
        "cat ~/.config/hookd/hooks.toml",
        "grep -n hooks ~/.config/hookd/hooks.toml",
        "less ~/.local/state/hookd/journal.jsonl",
        "hookd status",
        "hookd log",
        "hookd check --config ~/.config/hookd/hooks.toml",
        "cp ~/.config/hookd/hooks.toml /tmp/backup.toml",
        "diff ~/.config/hookd/hooks.toml /tmp/backup.toml",
        "ls -la ~/.config/hookd",
        "cargo test && git commit -am 'x'",
        "rm -rf build target",
        "mv src/a.rs src/b.rs",
        "echo hi > out.txt",
        "sed -i 's/a/b/' src/main.rs",
        "mkdir -p ~/.config/other",
        "rm -rf ~/.config/hookd.old",
        "kill 1234",
        "kill -0 4242",
        "pkill -f 'python server.py'",
        "systemctl --user status hookd",
        "systemctl --user restart nginx",
        "journalctl --user -u hookd",
        "git diff ~/.config/hookd/hooks.toml",
        "find . -name '*.pyc' -delete",
        "python3 script.py",
        "rm -rf ~/project/*",
        "hookd setup claude-code",
    ] {
        assert_eq!(bash(&w, command), None, "refused: {command}");
    }
}

#[test]
fn file_tools_of_every_agent_are_judged_by_their_paths() {
    let w = world("");
    let cwd = w.home.join("project");
    let settings = w.home.join(".config/hookd/hooks.toml");
    for (tool, input) in [
        ("Write", json!({"file_path": settings, "content": ""})),
        (
            "Edit",
            json!({"file_path": "../.config/hookd/deny.py", "old_string": "a", "new_string": "b"}),
        ),
        ("MultiEdit", json!({"file_path": settings, "edits": []})),
        (
            "Write",
            json!({"path": w.home.join(".claude/settings.json")}),
        ),
        (
            "Edit",
            json!({"command": "*** Begin Patch", "file_paths": ["/tmp/x", settings]}),
        ),
        (
            "mcp__fs__write_file",
            json!({"path": "~/.config/hookd/hooks.toml", "content": ""}),
        ),
    ] {
        let refused = w
            .shield
            .judge("PreToolUse", &event(tool, input.clone(), &cwd));
        assert!(refused.is_some(), "{tool} {input}");
        let refused = w
            .shield
            .judge("PermissionRequest", &event(tool, input.clone(), &cwd));
        assert!(refused.is_some(), "PermissionRequest {tool} {input}");
        assert_eq!(
            w.shield
                .judge("PostToolUse", &event(tool, input.clone(), &cwd)),
            None,
            "after the tool ran, nothing is held back"
        );
    }
    for (tool, input) in [
        ("Read", json!({"file_path": settings})),
        ("Grep", json!({"pattern": "x", "path": settings})),
        (
            "Write",
            json!({"file_path": cwd.join("src/new.rs"), "content": "hookd"}),
        ),
        ("mcp__fs__read_file", json!({"path": settings})),
    ] {
        assert_eq!(
            w.shield
                .judge("PreToolUse", &event(tool, input.clone(), &cwd)),
            None,
            "{tool} {input}"
        );
    }
}

#[test]
fn the_guard_is_turned_off_and_widened_only_in_the_settings() {
    let off = world("[protect]\nenabled = false\n");
    assert_eq!(bash(&off, "rm -f ~/.config/hookd/hooks.toml"), None);
    let wide = world("[protect]\npaths = [\"{home}/.ssh\"]\n");
    assert!(bash(&wide, "echo key >> ~/.ssh/authorized_keys").is_some());
    assert!(bash(&wide, "rm -f ~/.config/hookd/hooks.toml").is_some());
}

#[test]
fn a_refusal_says_what_is_guarded_and_how_to_change_it() {
    let w = world("");
    let reason = bash(&w, "rm -f ~/.config/hookd/hooks.toml").unwrap();
    assert!(
        reason.starts_with("hookd protects itself: this call would delete "),
        "{reason}"
    );
    assert!(
        reason.contains("hooks.toml (hookd's settings file)"),
        "{reason}"
    );
    assert!(reason.contains("[protect] enabled = false"), "{reason}");
}
