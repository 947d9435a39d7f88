//! Setting an agent up with hookd, through the real binary: `hookd import` turns each agent's own hook
//! settings into a file that `hookd check` accepts, and `hookd relay --print-settings` prints a snippet
//! each agent can read that routes every one of its moments through the relay.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use hookd::agents::Agent;
use serde_json::Value;
use tempfile::TempDir;

use crate::common::{BIN, RELAY_BIN, keep_home, this_tests_folder};

fn hookd(args: &[&str], envs: &[(&str, &Path)]) -> Output {
    let mut command = Command::new(BIN);
    command.args(args).env_remove("HOOKD_CONFIG");
    for (name, value) in envs {
        command.env(name, value);
    }
    keep_home(&mut command, &this_tests_folder());
    command.output().expect("running hookd")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn temp() -> TempDir {
    tempfile::Builder::new()
        .prefix("hookd-agents-")
        .tempdir()
        .expect("creating a temp dir")
}

/// `hookd import FILE [--agent AGENT]`, which must succeed; its output.
fn import(file: &Path, agent: Option<&str>) -> String {
    let mut args = vec!["import", file.to_str().unwrap()];
    if let Some(agent) = agent {
        args.extend(["--agent", agent]);
    }
    let out = hookd(&args, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "import failed: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Writes `settings` as hooks.toml next to it (mode 0644, as `check` wants) and runs `hookd check` on it,
/// which must accept it; its listing.
fn check(dir: &Path, settings: &str) -> String {
    let path = dir.join("hooks.toml");
    fs::write(&path, settings).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    let out = hookd(&["check", "--config", path.to_str().unwrap()], &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "check refused the imported settings:\n{}\n---\n{settings}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Asserts that `listing` (check's output) has a line for hook `name` holding each of `parts`.
fn lists(listing: &str, name: &str, parts: &[&str]) {
    let line = listing
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no hook {name} in:\n{listing}"));
    for part in parts {
        assert!(line.contains(part), "{part:?} not in {line:?}");
    }
}

mod import {
    use super::*;

    #[test]
    fn claude_code_settings() {
        let dir = temp();
        let file = dir.path().join("settings.json");
        fs::write(
            &file,
            r#"{
  "permissions": {"allow": ["Bash"]},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [
        {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/deny-rm.sh", "timeout": 10},
        {"type": "prompt", "prompt": "Is this command safe? $ARGUMENTS"}
      ]},
      {"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "jq -c . >> ~/mcp.log"}]}
    ],
    "PostToolUse": [
      {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "cargo fmt --all", "timeout": 2.5}]}
    ],
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "git status --short | head -20"}]}],
    "Stop": [{"hooks": [{"type": "agent", "prompt": "check the tests pass"}]}],
    "FileChanged": [{"hooks": [{"type": "command", "command": "make -q"}]}]
  }
}"#,
        )
        .unwrap();
        let settings = import(&file, Some("claude-code"));
        assert!(settings.starts_with(&format!(
            "# imported from {} (claude-code) by hookd import\n",
            file.display()
        )));
        assert!(settings.contains(
            "# not converted: hooks.PreToolUse[0].hooks[1] (type \"prompt\"): hookd runs commands only"
        ));
        assert!(settings.contains(
            "# not converted: hooks.Stop[0].hooks[0] (type \"agent\"): hookd runs commands only"
        ));
        let listing = check(dir.path(), &settings);
        assert!(listing.contains(": valid, 5 hooks\n"), "{listing}");
        lists(
            &listing,
            "claude-code-PreToolUse-1",
            &["matcher \"Bash\"", "deny-rm.sh", "timeout 10s"],
        );
        lists(
            &listing,
            "claude-code-PreToolUse-2",
            &["matcher \"mcp__.*\""],
        );
        lists(
            &listing,
            "claude-code-PostToolUse-1",
            &["matcher \"Edit|Write\"", "timeout 2.5s"],
        );
        lists(&listing, "claude-code-UserPromptSubmit-1", &["git status"]);
        lists(&listing, "claude-code-FileChanged-1", &["make -q"]);
    }

    #[test]
    fn codex_hooks_json_guessed_from_its_place() {
        let dir = temp();
        fs::create_dir(dir.path().join(".codex")).unwrap();
        let file = dir.path().join(".codex/hooks.json");
        fs::write(
            &file,
            r#"{"hooks": {
  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 ~/.codex/guard.py", "timeout": 5}]}],
  "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "npx prettier --write ."}]}],
  "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "cat NOTES.md"}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "./check-done.sh", "timeout": 30}, {"type": "prompt"}]}],
  "SubagentFinished": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
}}"#,
        )
        .unwrap();
        let settings = import(&file, None);
        assert!(
            settings.starts_with(&format!(
                "# imported from {} (codex) by hookd import\n",
                file.display()
            )),
            "{settings}"
        );
        assert!(settings.contains("# not converted: hooks.Stop[0].hooks[1] (type \"prompt\")"));
        assert!(
            settings.contains("[[hooks.SubagentFinished]]\nname = \"codex-SubagentFinished-1\"\ndeclare_moment = true\n"),
            "{settings}"
        );
        let listing = check(dir.path(), &settings);
        assert!(listing.contains(": valid, 5 hooks\n"), "{listing}");
        lists(
            &listing,
            "codex-PreToolUse-1",
            &["matcher \"Bash\"", "guard.py", "timeout 5s"],
        );
        lists(&listing, "codex-PostToolUse-1", &["matcher \"Edit|Write\""]);
        lists(&listing, "codex-SessionStart-1", &["matcher \"startup\""]);
        lists(&listing, "codex-Stop-1", &["timeout 30s"]);
        lists(&listing, "codex-SubagentFinished-1", &["notify-send"]);
    }

    #[test]
    fn gemini_cli_settings_with_its_names_and_milliseconds() {
        let dir = temp();
        let file = dir.path().join("settings.json");
        fs::write(
            &file,
            r#"{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "hooks": {
    "BeforeTool": [
      {"matcher": "run_shell_command", "hooks": [{"name": "deny-rm", "type": "command", "command": "$HOME/.gemini/deny-rm.sh", "timeout": 5000}]},
      {"matcher": "write_file|replace", "hooks": [{"name": "fmt", "type": "command", "command": "fmt.sh", "timeout": 1500}]}
    ],
    "AfterAgent": [{"hooks": [{"name": "tests", "type": "command", "command": "make test", "timeout": 60000}]}],
    "BeforeModel": [{"hooks": [{"name": "log", "type": "command", "command": "tee -a ~/model.log"}]}],
    "SessionStart": [{"matcher": "startup", "hooks": [{"name": "hookd", "type": "command", "command": "/usr/local/bin/hookd relay --agent gemini-cli"}]}]
  }
}"#,
        )
        .unwrap();
        let settings = import(&file, Some("gemini-cli"));
        assert!(settings.contains("matcher was \"run_shell_command\" (Gemini CLI's tool names)"));
        assert!(settings.contains(
            "# not converted: hooks.SessionStart[0].hooks[0] runs `hookd relay` already"
        ));
        let listing = check(dir.path(), &settings);
        assert!(listing.contains(": valid, 4 hooks\n"), "{listing}");
        lists(
            &listing,
            "gemini-cli-PreToolUse-1",
            &["matcher \"Bash\"", "deny-rm.sh", "timeout 5s"],
        );
        lists(
            &listing,
            "gemini-cli-PreToolUse-2",
            &["matcher \"Write|Edit\"", "timeout 1.5s"],
        );
        lists(&listing, "gemini-cli-Stop-1", &["make test", "timeout 60s"]);
        lists(&listing, "gemini-cli-BeforeModel-1", &["tee -a"]);

        // Without --agent, Gemini CLI's own event names give it away.
        let guessed = import(&file, None);
        assert!(
            guessed.contains("(gemini-cli) by hookd import\n"),
            "{guessed}"
        );
        assert_eq!(
            guessed.lines().skip(2).collect::<Vec<_>>(),
            settings.lines().skip(1).collect::<Vec<_>>(),
            "the guess changes only the header"
        );
    }

    #[test]
    fn copilot_cli_hooks_file_with_its_flat_hooks_and_camel_case_names() {
        let dir = temp();
        let file = dir.path().join("hooks.copilot.json");
        fs::write(
            &file,
            r#"{"version": 1, "hooks": {
  "preToolUse": [{"type": "command", "bash": "./scripts/check.sh", "powershell": "./scripts/check.ps1", "timeoutSec": 15}],
  "agentStop": [{"type": "command", "bash": "make test", "timeoutSec": 120}],
  "errorOccurred": [{"type": "command", "bash": "logger copilot-error"}],
  "sessionStart": [{"type": "command", "bash": "/usr/local/bin/hookd relay --agent copilot-cli --event sessionStart"}],
  "PostToolUse": [{"matcher": "bash", "hooks": [{"type": "command", "command": "./after.sh", "timeout": 9}]}]
}}"#,
        )
        .unwrap();
        let settings = import(&file, None);
        assert!(
            settings.contains("(copilot-cli) by hookd import\n"),
            "guessed from its own event names: {settings}"
        );
        assert!(settings.contains("not kept: \"powershell\""), "{settings}");
        assert!(
            settings.contains("# not converted: hooks.sessionStart[0] runs `hookd relay` already"),
            "{settings}"
        );
        let listing = check(dir.path(), &settings);
        assert!(listing.contains(": valid, 4 hooks\n"), "{listing}");
        lists(
            &listing,
            "copilot-cli-PreToolUse-1",
            &["./scripts/check.sh", "timeout 15s"],
        );
        lists(
            &listing,
            "copilot-cli-Stop-1",
            &["make test", "timeout 120s"],
        );
        lists(&listing, "copilot-cli-errorOccurred-1", &["logger"]);
        lists(
            &listing,
            "copilot-cli-PostToolUse-1",
            &["matcher \"Bash\"", "./after.sh", "timeout 9s"],
        );
    }

    #[test]
    fn claude_code_is_the_guess_for_a_plain_settings_json() {
        let dir = temp();
        let file = dir.path().join("settings.json");
        fs::write(
            &file,
            r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x.sh"}]}]}}"#,
        )
        .unwrap();
        let settings = import(&file, None);
        assert!(
            settings.contains("(claude-code) by hookd import\n"),
            "{settings}"
        );
        lists(
            &check(dir.path(), &settings),
            "claude-code-PreToolUse-1",
            &["x.sh"],
        );
    }

    #[test]
    fn a_file_that_is_not_json_is_one_error_line() {
        let dir = temp();
        let file = dir.path().join("settings.json");
        fs::write(&file, "{\n  \"hooks\": {\n    \"Stop\": [\n}\n").unwrap();
        let out = hookd(&["import", file.to_str().unwrap()], &[]);
        assert_eq!(out.status.code(), Some(1));
        assert!(out.stdout.is_empty());
        let stderr = text(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("hookd: {}:4:1: not JSON: ", file.display())),
            "{stderr}"
        );

        fs::write(&file, "{\"model\": \"opus\"}").unwrap();
        let out = hookd(&["import", file.to_str().unwrap()], &[]);
        assert_eq!(out.status.code(), Some(1));
        let stderr = text(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("no \"hooks\" object"), "{stderr}");

        let out = hookd(
            &["import", dir.path().join("missing.json").to_str().unwrap()],
            &[],
        );
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(text(&out.stderr).lines().count(), 1);
    }
}

mod print_settings {
    use super::*;

    fn print(agent: &str, codex_home: &Path) -> String {
        let out = hookd(
            &["relay", "--print-settings", agent],
            &[("CODEX_HOME", codex_home)],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "print-settings {agent}: {}",
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    /// The relay command, as printed: the relay's own program, built beside this binary.
    fn relay(agent: Agent) -> String {
        format!("{RELAY_BIN} --agent {}", agent.name())
    }

    #[test]
    fn claude_code_and_gemini_cli_get_json_naming_every_moment() {
        let dir = temp();
        for agent in [Agent::ClaudeCode, Agent::GeminiCli] {
            let printed = print(agent.name(), dir.path());
            let settings: Value = serde_json::from_str(&printed)
                .unwrap_or_else(|e| panic!("{}: not JSON: {e}\n{printed}", agent.name()));
            let events = settings["hooks"].as_object().unwrap();
            assert_eq!(events.len(), agent.moments().len());
            for moment in agent.moments() {
                let event = agent.event_name_of(moment);
                let hook = &events[event][0]["hooks"][0];
                assert_eq!(hook["type"], "command", "{event}");
                assert_eq!(
                    hook["command"].as_str(),
                    Some(relay(agent).as_str()),
                    "{event}"
                );
            }
        }
    }

    #[test]
    fn copilot_cli_gets_its_hooks_file_each_hook_naming_its_event() {
        let dir = temp();
        let printed = print("copilot-cli", dir.path());
        let settings: Value =
            serde_json::from_str(&printed).unwrap_or_else(|e| panic!("not JSON: {e}\n{printed}"));
        assert_eq!(settings["version"], 1);
        let agent = Agent::CopilotCli;
        let events = settings["hooks"].as_object().unwrap();
        assert_eq!(events.len(), agent.moments().len());
        for moment in agent.moments() {
            let event = agent.event_name_of(moment);
            let hook = &events[event][0];
            assert_eq!(hook["type"], "command", "{event}");
            assert_eq!(
                hook["bash"].as_str(),
                Some(format!("{} --event {event}", relay(agent)).as_str()),
                "{event}"
            );
        }
    }

    #[test]
    fn codex_gets_toml_naming_every_moment_with_its_trust_records() {
        let dir = temp();
        let printed = print("codex", dir.path());
        let settings: toml::Value =
            toml::from_str(&printed).unwrap_or_else(|e| panic!("not TOML: {e}\n{printed}"));
        let config = dir.path().canonicalize().unwrap().join("config.toml");
        assert!(
            printed.starts_with(&format!(
                "# hookd relay for Codex CLI: paste this into {}\n",
                config.display()
            )),
            "{printed}"
        );
        let hooks = settings["hooks"].as_table().unwrap();
        let state = hooks["state"].as_table().unwrap();
        for moment in Agent::Codex.moments() {
            let hook = &hooks[moment][0]["hooks"][0];
            assert_eq!(hook["command"].as_str(), Some(relay(Agent::Codex).as_str()));
            // Codex holds SessionEnd and Interrupt hooks to 3 s (and hashes the 3 into the trust).
            let timeout = match moment {
                "SessionEnd" | "Interrupt" => 3,
                _ => 120,
            };
            assert_eq!(hook["timeout"].as_integer(), Some(timeout), "{moment}");
            let label = match moment {
                "SessionStart" => "session_start",
                "UserPromptSubmit" => "user_prompt_submit",
                "PreModelRequest" => "pre_model_request",
                "PostModelRequest" => "post_model_request",
                "PreToolUse" => "pre_tool_use",
                "PermissionRequest" => "permission_request",
                "PostToolUse" => "post_tool_use",
                "SubagentStart" => "subagent_start",
                "SubagentStop" => "subagent_stop",
                "Stop" => "stop",
                "Interrupt" => "interrupt",
                "PreCompact" => "pre_compact",
                "PostCompact" => "post_compact",
                "SessionEnd" => "session_end",
                other => panic!("a Codex moment this test does not know: {other}"),
            };
            let key = format!("{}:{label}:0:0", config.display());
            let hash = state[&key]["trusted_hash"].as_str().unwrap();
            assert!(
                hash.starts_with("sha256:") && hash.len() == 7 + 64,
                "{hash}"
            );
        }
        assert_eq!(Agent::Codex.moments().len(), 14, "{printed}");
    }

    #[test]
    fn an_unknown_agent_is_one_error_line() {
        let out = hookd(&["relay", "--print-settings", "nope"], &[]);
        assert_eq!(out.status.code(), Some(1));
        assert!(out.stdout.is_empty());
        let stderr = text(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("unknown agent \"nope\""), "{stderr}");
    }
}
