//! `hookd doctor` against a real daemon, in a temp HOME with every XDG folder its own: a healthy chain
//! (the five agents set up by `hookd setup`) exits 0; drift in each agent's own settings file (a relay
//! hook taken out, a relay command changed) is named, file and event, and exits 1; a daemon that does not
//! answer a fail-open relay exits 1 (a fail-closed one is a warning); `--json`'s shape.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use hookd::agents::Agent;
use serde_json::Value;

use crate::common::*;

const T: Duration = Duration::from_secs(60);

/// A relay program that is not hookd's, named as hookd's is: what a worm would write.
const EVIL: &str = "/nowhere/evil/hookd-relay";

/// The agents' variables, none of the machine's own.
const AGENT_VARS: &[&str] = &[
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "QWEN_HOME",
    "COPILOT_HOME",
];

/// A user's world: a daemon on its own socket, a HOME and XDG folders of its own.
struct World {
    daemon: Option<Daemon>,
    socket: PathBuf,
    home: PathBuf,
    root: PathBuf,
}

impl World {
    fn new() -> World {
        World::with_settings("# no hooks of the user's\n")
    }

    /// A world whose daemon serves `settings`, which are also the default settings file there (where
    /// `hookd setup` looks for them).
    fn with_settings(settings: &str) -> World {
        let daemon = Daemon::with_scripts(&[], settings);
        let root = daemon.sb.path().to_path_buf();
        let home = root.join("home");
        fs::create_dir(&home).unwrap();
        let config = root.join("xdg-config/hookd/hooks.toml");
        fs::create_dir_all(config.parent().unwrap()).unwrap();
        fs::write(config, settings).unwrap();
        World {
            socket: daemon.socket.clone(),
            daemon: Some(daemon),
            home,
            root,
        }
    }

    fn hookd(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new(BIN);
        cmd.args(args)
            .env("HOME", &self.home)
            .env("XDG_STATE_HOME", self.root.join("xdg-state"))
            .env("XDG_CONFIG_HOME", self.root.join("xdg-config"))
            .env("XDG_RUNTIME_DIR", self.root.join("xdg-run"));
        for var in AGENT_VARS {
            cmd.env_remove(var);
        }
        run_with_deadline(cmd, None, T)
    }

    fn setup(&self, agent: Agent, extra: &[&str]) {
        let mut args = vec![
            "setup",
            agent.name(),
            "--socket",
            self.socket.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let out = self.hookd(&args);
        assert_eq!(code(&out.status), 0, "setup: {}", text(&out.stderr));
    }

    /// `hookd doctor` (more `args`): its exit status and stdout.
    fn doctor(&self, args: &[&str]) -> (i32, String) {
        let mut all = vec!["doctor", "--socket", self.socket.to_str().unwrap()];
        all.extend_from_slice(args);
        let out = self.hookd(&all);
        (code(&out.status), text(&out.stdout) + &text(&out.stderr))
    }

    /// The agent's own settings file in this HOME.
    fn file(&self, agent: Agent) -> PathBuf {
        self.home.join(match agent {
            Agent::ClaudeCode => ".claude/settings.json",
            Agent::Codex => ".codex/config.toml",
            Agent::GeminiCli => ".gemini/settings.json",
            Agent::QwenCode => ".qwen/settings.json",
            Agent::CopilotCli => ".copilot/settings.json",
        })
    }
}

/// The agent's name for the moment before a tool runs, where a guard sits.
fn guard_event(agent: Agent) -> &'static str {
    agent.event_name_of("PreToolUse")
}

/// Whether a hook entry (a group, or Copilot's flat hook) runs hookd's relay.
fn runs_relay(entry: &str) -> bool {
    entry.contains(RELAY_BIN)
}

/// Edits the agent's file as an agent or a worm would: the relay hooks at the guard's event taken out
/// (`evil` None), or their command replaced by `evil`.
fn tamper(file: &Path, agent: Agent, evil: Option<&str>) {
    let event = guard_event(agent);
    let text = fs::read_to_string(file).unwrap();
    if agent == Agent::Codex {
        let mut doc: toml::Table = text.parse().unwrap();
        let hooks = doc["hooks"].as_table_mut().unwrap();
        let groups = hooks[event].as_array_mut().unwrap();
        match evil {
            None => {
                groups.retain(|g| !runs_relay(&g.to_string()));
                if groups.is_empty() {
                    hooks.remove(event);
                }
            }
            Some(evil) => {
                for group in groups.iter_mut().filter(|g| runs_relay(&g.to_string())) {
                    group["hooks"].as_array_mut().unwrap()[0]
                        .as_table_mut()
                        .unwrap()
                        .insert("command".into(), evil.into());
                }
            }
        }
        fs::write(file, toml::to_string(&doc).unwrap()).unwrap();
        return;
    }
    let mut settings: Value = serde_json::from_str(&text).unwrap();
    let list = settings["hooks"][event].as_array_mut().unwrap();
    match evil {
        None => list.retain(|entry| !runs_relay(&entry.to_string())),
        Some(evil) => {
            for entry in list.iter_mut().filter(|e| runs_relay(&e.to_string())) {
                if agent == Agent::CopilotCli {
                    entry["bash"] = format!("{evil} --event {event}").into();
                } else {
                    entry["hooks"][0]["command"] = evil.into();
                }
            }
        }
    }
    fs::write(file, serde_json::to_string_pretty(&settings).unwrap()).unwrap();
}

#[test]
fn a_healthy_chain_exits_0() {
    let world = World::new();
    for agent in Agent::ALL {
        world.setup(agent, &[]);
    }
    let (status, said) = world.doctor(&[]);
    assert_eq!(status, 0, "{said}");
    assert!(
        said.starts_with(&format!(
            "ok   hookd {} answers on {}",
            hookd::VERSION,
            world.socket.display()
        )),
        "{said}"
    );
    assert!(
        said.contains("is valid and in force (generation "),
        "{said}"
    );
    for agent in Agent::ALL {
        assert!(
            said.contains(&format!(
                "ok   {}: {} holds the relay hooks as written",
                agent.display_name(),
                world.file(agent).display()
            )),
            "{agent:?}: {said}"
        );
        assert!(
            said.contains(&format!(
                "ok   {}: the relay program {RELAY_BIN} is there, hookd {}",
                agent.display_name(),
                hookd::VERSION
            )),
            "{said}"
        );
        assert!(
            said.contains(&format!(
                "warn {}: the relay fails open",
                agent.display_name()
            )),
            "{said}"
        );
    }
    assert!(
        said.contains("ok   Codex: Codex's trust records match each of hookd's hooks"),
        "{said}"
    );
    assert!(
        said.ends_with("hookd guards every call of the agents set up\n"),
        "{said}"
    );
}

#[test]
fn drift_in_each_agents_file_is_named() {
    for agent in Agent::ALL {
        let world = World::new();
        world.setup(agent, &[]);
        let file = world.file(agent);
        let name = agent.display_name();
        let event = guard_event(agent);
        assert_eq!(world.doctor(&[]).0, 0, "{agent:?}");

        // A relay hook taken out.
        tamper(&file, agent, None);
        let (status, said) = world.doctor(&[]);
        assert_eq!(status, 1, "{agent:?}: {said}");
        assert!(
            said.contains(&format!(
                "FAIL {name}: drift: {} no longer holds the relay hooks as written: no relay hook at {event}\n     fix: hookd setup {}",
                file.display(),
                agent.name()
            )),
            "{agent:?}: {said}"
        );
        assert!(
            said.ends_with("a call could go through unguarded: fix what FAIL says\n"),
            "{said}"
        );

        // Set up again, then the relay's command changed.
        world.setup(agent, &[]);
        assert_eq!(world.doctor(&[]).0, 0, "{agent:?}");
        let evil = format!("{EVIL} --agent {}", agent.name());
        tamper(&file, agent, Some(&evil));
        let (status, said) = world.doctor(&[]);
        assert_eq!(status, 1, "{agent:?}: {said}");
        assert!(
            said.contains(&format!(
                "FAIL {name}: drift: {} no longer holds the relay hooks as written: at {event} a hook not as written ({evil}",
                file.display()
            )),
            "{agent:?}: {said}"
        );
        assert!(
            said.contains(&format!(
                "FAIL {name}: the relay program {EVIL} is missing or cannot run"
            )),
            "{agent:?}: {said}"
        );
        if agent == Agent::Codex {
            assert!(
                said.contains(&format!(
                    "FAIL Codex: Codex skips hookd's hooks at {event} without a word: their trust records do not match"
                )),
                "{said}"
            );
        }
    }
}

#[test]
fn a_daemon_that_does_not_answer_a_fail_open_relay_exits_1() {
    let mut world = World::new();
    world.setup(Agent::ClaudeCode, &[]);
    drop(world.daemon.take());
    let (status, said) = world.doctor(&[]);
    assert_eq!(status, 1, "{said}");
    assert!(
        said.starts_with(&format!(
            "FAIL no hookd answers on {}",
            world.socket.display()
        )),
        "{said}"
    );

    // With every relay failing closed, the calls are refused meanwhile: a warning.
    world.setup(Agent::ClaudeCode, &["--fail-closed"]);
    let (status, said) = world.doctor(&[]);
    assert_eq!(status, 0, "{said}");
    assert!(
        said.starts_with("warn no hookd answers") && said.contains("every relay fails closed"),
        "{said}"
    );
    assert!(
        said.contains("ok   Claude Code: the relay fails closed"),
        "{said}"
    );
}

#[test]
fn json_says_each_check() {
    let world = World::new();
    world.setup(Agent::Codex, &["--fail-closed"]);
    let (status, said) = world.doctor(&["--json"]);
    assert_eq!(status, 0, "{said}");
    let report: Value = serde_json::from_str(&said).unwrap_or_else(|e| panic!("{e}: {said}"));
    assert_eq!(report["ok"], true);
    assert_eq!(report["socket"], world.socket.to_str().unwrap());
    assert_eq!(report["version"], hookd::VERSION);
    let checks = report["checks"].as_array().unwrap();
    for check in checks {
        assert!(
            check["check"].is_string() && check["message"].is_string(),
            "{check}"
        );
        assert!(
            ["ok", "warn", "fail"].contains(&check["status"].as_str().unwrap()),
            "{check}"
        );
    }
    let kinds: Vec<&str> = checks
        .iter()
        .map(|c| c["check"].as_str().unwrap())
        .collect();
    for kind in [
        "daemon",
        "settings",
        "protect",
        "hooks",
        "trust",
        "relay",
        "fail_closed",
    ] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    let hooks = checks.iter().find(|c| c["check"] == "hooks").unwrap();
    assert_eq!(hooks["agent"], "codex");
    assert_eq!(hooks["file"], world.file(Agent::Codex).to_str().unwrap());
    assert_eq!(hooks["status"], "ok");

    tamper(&world.file(Agent::Codex), Agent::Codex, None);
    let (status, said) = world.doctor(&["--json"]);
    assert_eq!(status, 1);
    let report: Value = serde_json::from_str(&said).unwrap();
    assert_eq!(report["ok"], false);
    let hooks = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "hooks")
        .unwrap();
    assert_eq!(hooks["status"], "fail");
    assert!(
        hooks["fix"]
            .as_str()
            .unwrap()
            .starts_with("hookd setup codex --socket"),
        "{hooks}"
    );
}

/// An agent's own file that holds hookd's relay hooks though the registry does not list it (set up by
/// an older hookd, or by hand) is checked all the same, its relay read from the file.
#[test]
fn a_file_set_up_before_the_registry_is_checked_too() {
    let world = World::new();
    for agent in [Agent::CopilotCli, Agent::ClaudeCode] {
        world.setup(agent, &["--fail-closed"]);
    }
    fs::remove_file(world.root.join("xdg-state/hookd/setup.json")).unwrap();
    let (status, said) = world.doctor(&[]);
    assert_eq!(status, 0, "{said}");
    for agent in [Agent::CopilotCli, Agent::ClaudeCode] {
        assert!(
            said.contains(&format!(
                "ok   {}: {} holds the relay hooks as written",
                agent.display_name(),
                world.file(agent).display()
            )),
            "{said}"
        );
    }
    tamper(&world.file(Agent::CopilotCli), Agent::CopilotCli, None);
    let (status, said) = world.doctor(&[]);
    assert_eq!(status, 1, "{said}");
    assert!(
        said.contains(&format!(
            "FAIL {}: drift: {} no longer holds the relay hooks as written: no relay hook at preToolUse",
            Agent::CopilotCli.display_name(),
            world.file(Agent::CopilotCli).display()
        )),
        "{said}"
    );
}

/// The agent's own hooks still run beside hookd's relay: one that hookd's settings hold too (the user
/// imported it) runs twice, which setup and doctor say, with which hook and where each is; one that
/// only the agent holds is pointed at `hookd import`. Taken out of the agent's file, doctor is quiet.
#[test]
fn hooks_in_the_agents_file_and_in_hookds_settings_are_said_to_run_twice() {
    let w = World::with_settings(
        "[[hooks.PreToolUse]]\nname = \"claude-code-PreToolUse-1\"\nmatcher = \"Bash\"\ncommand = \"echo guard\"\n",
    );
    let file = w.file(Agent::ClaudeCode);
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    let own = r#"{"hooks": {
  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo guard"}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "echo stop"}]}]
}}
"#;
    fs::write(&file, own).unwrap();
    let out = w.hookd(&[
        "setup",
        "claude-code",
        "--socket",
        w.socket.to_str().unwrap(),
    ]);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let config = w.root.join("xdg-config/hookd/hooks.toml");
    assert!(
        stderr.contains(&format!(
            "warning: 1 of Claude Code's own hooks in {} are in hookd's settings ({}) too, so each runs twice, once by Claude Code and once through hookd: PreToolUse `echo guard` (hookd's \"claude-code-PreToolUse-1\")",
            file.display(),
            config.display()
        )),
        "{stderr}"
    );

    let (status, said) = w.doctor(&[]);
    assert_eq!(status, 0, "a hook that runs twice is a warning: {said}");
    let line = said
        .lines()
        .find(|l| l.contains("runs twice"))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(
        line.starts_with("warn Claude Code: 1 of Claude Code's own hooks"),
        "{line}"
    );
    assert!(said.contains("fix: take those hooks out of"), "{said}");

    // Out of the agent's file: doctor is quiet of it, and setup points the one left at import.
    fs::write(&file, own.replace("echo guard", "echo other")).unwrap();
    let out = w.hookd(&[
        "setup",
        "claude-code",
        "--socket",
        w.socket.to_str().unwrap(),
    ]);
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("runs twice"), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "hint: {} holds 2 hooks of Claude Code's own, which Claude Code runs beside hookd's relay; to have hookd run them instead",
            file.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("hookd import {}", file.display())),
        "{stderr}"
    );
    let (_, said) = w.doctor(&[]);
    assert!(!said.contains("runs twice"), "{said}");
}

/// Claude Code set up with hookd's http hooks (`hookd relay --print-settings claude-code --http`, which
/// setup does not write) is healthy while they post to the daemon's listener, and named as drift when
/// they post elsewhere; never taken for setup's command hooks gone astray.
#[test]
fn http_hooks_are_checked_against_the_daemons_listener() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let w = World::with_settings(&format!("[http]\nlisten = \"127.0.0.1:{port}\"\n"));
    let printed = w.hookd(&[
        "relay",
        "--print-settings",
        "claude-code",
        "--http",
        "--socket",
        w.socket.to_str().unwrap(),
    ]);
    assert_eq!(code(&printed.status), 0, "{}", text(&printed.stderr));
    let file = w.file(Agent::ClaudeCode);
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(&file, &printed.stdout).unwrap();

    let healthy = format!("posting to its listener on 127.0.0.1:{port}");
    let mut said = String::new();
    wait_until(T, "doctor to find the listener", || {
        said = w.doctor(&[]).1;
        said.contains(&healthy)
    });
    let (status, said) = w.doctor(&[]);
    assert_eq!(status, 0, "{said}");
    assert!(
        said.lines()
            .any(|l| l.starts_with("ok   Claude Code:") && l.contains("holds hookd's http hooks")),
        "{said}"
    );
    assert!(!said.contains("drift"), "{said}");

    // The guard narrowed to one tool, as an agent editing its own settings would: drift, not ok.
    let printed_text = fs::read_to_string(&file).unwrap();
    let mut narrowed: Value = serde_json::from_str(&printed_text).unwrap();
    narrowed["hooks"]["PreToolUse"][0]["matcher"] = Value::from("Read");
    fs::write(&file, narrowed.to_string()).unwrap();
    let (status, said) = w.doctor(&[]);
    assert_eq!(status, 1, "{said}");
    assert!(
        said.contains(
            "no longer holds hookd's http hooks as printed: at PreToolUse a hook not as written"
        ),
        "{said}"
    );
    fs::write(&file, &printed_text).unwrap();

    let elsewhere = port.wrapping_add(1);
    let text_now = fs::read_to_string(&file).unwrap();
    fs::write(
        &file,
        text_now.replace(&format!(":{port}/"), &format!(":{elsewhere}/")),
    )
    .unwrap();
    let (status, said) = w.doctor(&[]);
    assert_eq!(status, 1, "{said}");
    assert!(
        said.contains(&format!(
            "http hooks post to http://127.0.0.1:{elsewhere}/hooks/claude-code, but hookd listens on 127.0.0.1:{port}"
        )),
        "{said}"
    );
}
