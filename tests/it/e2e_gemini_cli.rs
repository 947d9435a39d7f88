//! hookd inside the real Gemini CLI (0.61.0, pinned), end to end and offline.
//!
//! The scenarios every agent shares are rows of the table in `e2e_scenarios`, which this module's
//! `impl RealAgent for GeminiSetup` drives; the tests here are what Gemini CLI alone does, or does otherwise.
//!
//! Each test starts a real `hookd serve` on a temp socket with a real settings file and shell hooks, a
//! scripted model server speaking the Gemini API (`tests/e2e/dialect_gemini.py`), and the real `gemini -p`
//! in a temp project folder with a temp HOME whose `~/.gemini/settings.json` holds the hooks printed by
//! `hookd relay --print-settings gemini-cli` (as users are told to), API-key auth, and no telemetry or
//! update checks. What reached the model is read from the server's record; what ran, from the folder.
//!
//! Gemini CLI names its moments BeforeTool / AfterTool / BeforeAgent / AfterAgent and its shell tool
//! `run_shell_command`; the hookd settings here use hookd's names (PreToolUse, UserPromptSubmit, Stop)
//! and `matcher = "Bash"`, which the relay maps (contract 12). A refusal where Gemini CLI only takes
//! advice (SessionStart) is shown as advice, and the session goes on; an MCP tool (`mcp_<server>_<tool>`,
//! from a scripted stdio server) is matched by Claude Code's name for it, `mcp__<server>__<tool>`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::*;
use crate::e2e_common::*;
use crate::e2e_scenarios::{PROMPT, RealAgent, Told};
use serde_json::{Value, json};

/// The folders of one agent run inside a test's sandbox: a HOME holding `~/.gemini/settings.json`, and
/// the project folder the agent works in.
pub struct GeminiSetup {
    home: PathBuf,
    project: PathBuf,
}

/// Writes `~/.gemini/settings.json` under `root/home` with the hooks `hookd relay --print-settings
/// gemini-cli --socket SOCKET [--fail-closed]` prints, merged into the settings that keep the agent
/// offline, and makes the project folder.
fn setup(root: &Path, socket: &Path, fail_closed: bool) -> GeminiSetup {
    let home = root.join("home");
    let project = root.join("project");
    fs::create_dir_all(home.join(".gemini")).unwrap();
    fs::create_dir_all(&project).unwrap();
    let mut flags = vec!["--socket", socket.to_str().unwrap()];
    if fail_closed {
        flags.push("--fail-closed");
    }
    let snippet: Value = serde_json::from_str(&print_settings(GEMINI_CLI.agent, &flags, &[]))
        .expect("--print-settings gemini-cli prints JSON");
    let mut settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "telemetry": {"enabled": false},
        "privacy": {"usageStatisticsEnabled": false},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        "tools": {"useRipgrep": false},
    });
    let hooks = snippet["hooks"].clone();
    assert!(
        hooks["BeforeTool"].is_array() && hooks["AfterAgent"].is_array(),
        "the snippet has Gemini's event names: {snippet}"
    );
    settings["hooks"] = hooks;
    fs::write(
        home.join(".gemini/settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
    GeminiSetup { home, project }
}

/// `gemini -p PROMPT --approval-mode yolo` in the project folder, talking to `server` only, with an
/// environment of its own (nothing inherited but PATH).
fn gemini_command(setup: &GeminiSetup, server: &ModelServer) -> Command {
    let mut cmd = Command::new(installed(&GEMINI_CLI));
    cmd.args(["-p", PROMPT, "--approval-mode", "yolo"])
        .current_dir(&setup.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &setup.home)
        .env("GOOGLE_GEMINI_BASE_URL", server.url())
        .env("GEMINI_API_KEY", "e2e-test-key")
        // Headless runs refuse an untrusted folder (not in agents.md; seen on 0.61.0).
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .env("TERM", "dumb")
        .env("NO_COLOR", "1");
    cmd
}

/// Runs the agent to its end and checks that it ended on its own, cleanly.
fn run_gemini(setup: &GeminiSetup, server: &ModelServer) -> Output {
    let out = run_agent(gemini_command(setup, server), &server.netns());
    assert!(
        out.status.success(),
        "gemini failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// The shell commands the model asked for in a request's history (the functionCall parts it was sent
/// back), which proves the agent got the tool call.
fn function_calls(request: &Value) -> Vec<String> {
    parts(request)
        .filter_map(|p| {
            p["functionCall"]["args"]["command"]
                .as_str()
                .map(String::from)
        })
        .collect()
}

/// The tool results a request carries (functionResponse parts), as text.
fn function_responses(request: &Value) -> String {
    parts(request)
        .filter(|p| !p["functionResponse"].is_null())
        .map(|p| p["functionResponse"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn parts(request: &Value) -> impl Iterator<Item = &Value> {
    request["body"]["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["parts"].as_array().into_iter().flatten())
}

/// Explains a failing check: what the agent printed and every request the model got.
fn context(out: &Output, server: &ModelServer) -> String {
    GeminiSetup::explain(out, server)
}

/// Gemini CLI in the table of scenarios the agents share (`e2e_scenarios`).
impl RealAgent for GeminiSetup {
    const PACKAGE: &'static AgentPackage = &GEMINI_CLI;
    const DIALECT: &'static str = "gemini";
    const OWN_SHELL_TOOL: Option<&'static str> = Some("run_shell_command");
    const REFUSED_PROMPT_SAYS: Option<&'static str> =
        Some("Agent execution blocked: hookd is not running");
    const REFUSED_PROMPT_EXITS_CLEANLY: bool = true;
    const ASK_REFUSED_SAYS: Option<&'static str> = Some("Gemini CLI cannot ask for it here");

    fn setup(sb: &Sandbox, _server: &ModelServer, socket: &Path, fail_closed: bool) -> Self {
        setup(sb.path(), socket, fail_closed)
    }

    fn command(&self, server: &ModelServer) -> Command {
        gemini_command(self, server)
    }

    fn user_settings(&self) -> PathBuf {
        self.home.join(".gemini/settings.json")
    }

    fn file(&self, name: &str) -> PathBuf {
        self.project.join(name)
    }

    fn conversation(request: &Value) -> String {
        request["body"]["contents"].to_string()
    }

    fn calls(request: &Value) -> Vec<String> {
        function_calls(request)
    }

    /// The functionResponse parts answer the functionCall parts in order.
    fn result_of(request: &Value, command: &str) -> Option<Told> {
        let calls: Vec<&Value> = parts(request)
            .filter(|p| !p["functionCall"].is_null())
            .collect();
        let responses: Vec<&Value> = parts(request)
            .filter(|p| !p["functionResponse"].is_null())
            .collect();
        let at = calls
            .iter()
            .position(|c| c["functionCall"]["args"]["command"] == command)?;
        responses.get(at).map(|r| Told {
            text: r["functionResponse"].to_string(),
            error: None,
        })
    }

    /// Gemini CLI writes a refused prompt's reason to its stderr.
    fn refused_prompt_said(out: &Output) -> String {
        text(&out.stderr)
    }
}

/// Gemini CLI ignores a refusal at SessionStart (it only takes advice there). A SessionStart
/// hook that refuses is answered as what it is: the session goes on to its end, and Gemini CLI shows the
/// user the reason with the word that it went on (hookd's `systemMessage`, which Gemini CLI writes to
/// its stderr at SessionStart), not a block that is not one. What the hooks add still reaches the model.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn a_refusal_at_session_start_is_reported_as_advice_and_the_session_goes_on() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.SessionStart]]\nname = \"no-sessions\"\ncommand = \"cat >> @DIR@/start.log; echo >> @DIR@/start.log; echo 'E2E-ADVICE-5d1: no sessions today' >&2; exit 2\"\n\n\
         [[hooks.SessionStart]]\nname = \"ctx\"\ncommand = \"cat > /dev/null; echo E2E-CTX-5d1: the branch is main\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let server = ModelServer::start(
        "gemini",
        &json!({"turns": [{"text": "E2E-FINAL: went on."}]}),
        sb.path(),
        "model",
    );
    let out = run_gemini(&setup, &server);
    let why = context(&out, &server);

    let started = logged_events(&sb.p("start.log"));
    assert_eq!(started.len(), 1, "the hook ran at SessionStart{why}");
    assert_eq!(started[0]["hook_event_name"], "SessionStart", "{why}");
    let turns = server.turns();
    assert_eq!(turns.len(), 1, "the session went on to the model{why}");
    assert!(
        turns[0]["body"]["contents"]
            .to_string()
            .contains("E2E-CTX-5d1: the branch is main"),
        "what the hooks add reached the model{why}"
    );
    assert!(text(&out.stdout).contains("E2E-FINAL: went on."), "{why}");
    assert!(
        text(&out.stderr).contains(
            "E2E-ADVICE-5d1: no sessions today (a refusal at SessionStart, where Gemini CLI only takes advice: it goes on)"
        ),
        "the refusal is shown as advice{why}"
    );
}

/// Gemini CLI names an MCP tool `mcp_<server>_<tool>`; hooks see it as Claude Code names it,
/// `mcp__<server>__<tool>`. A PreToolUse hook with matcher `mcp__echo__.*` refuses the real MCP server's
/// tool (a stdio server scripted in `tests/e2e/mcp_echo.py`): the tool does not run, the reason reaches
/// the model, and a matcher for another server never fires.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn an_mcp_tool_is_matched_by_its_claude_code_name_and_refused() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "deny-mcp.sh",
        "cat >> @DIR@/mcp.log\necho >> @DIR@/mcp.log\necho 'E2E-MCP-DENIED-3a9: no echo tools' >&2\nexit 2",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"deny-echo\"\nmatcher = \"mcp__echo__.*\"\ncommand = \"@DIR@/deny-mcp.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"github\"\nmatcher = \"mcp__github__.*\"\ncommand = \"cat > /dev/null; touch @DIR@/github-fired\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let settings_path = setup.home.join(".gemini/settings.json");
    let mut settings: Value =
        serde_json::from_str(&fs::read_to_string(&settings_path).unwrap()).unwrap();
    let server_script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/mcp_echo.py");
    settings["mcpServers"] = json!({"echo": {
        "command": "python3",
        "args": [server_script, sb.path()],
        "trust": true,
    }});
    fs::write(
        &settings_path,
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
    let server = ModelServer::start(
        "gemini",
        &json!({"turns": [
            {"call": {"name": "mcp_echo_echo_text", "args": {"text": "hi"}}},
            {"text": "E2E-FINAL: understood."},
        ]}),
        sb.path(),
        "model",
    );
    let out = run_gemini(&setup, &server);
    let why = context(&out, &server);

    let seen = logged_events(&sb.p("mcp.log"));
    assert_eq!(seen.len(), 1, "the mcp__echo__.* hook fired once{why}");
    assert_eq!(seen[0]["tool_name"], "mcp__echo__echo_text", "{why}");
    assert_eq!(seen[0]["agent_tool_name"], "mcp_echo_echo_text", "{why}");
    assert_eq!(seen[0]["mcp_context"]["server_name"], "echo", "{why}");
    assert!(!sb.p("calls.log").exists(), "the refused MCP tool ran{why}");
    assert!(
        !sb.p("github-fired").exists(),
        "a matcher for another server fired{why}"
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 2, "{why}");
    assert!(
        function_responses(&turns[1]).contains("E2E-MCP-DENIED-3a9: no echo tools"),
        "the refusal's reason is the tool's result the model sees{why}"
    );
}

// Allow, ask and rewrites, on the real agent. Gemini CLI 0.61.0's powers (src/tables/agent.rs): an
// allow grants nothing (not sent), an ask in -p would wait for ever (refused, saying approval is
// needed), `hookSpecificOutput.tool_input` rewrites a call, and an AfterTool deny's reason is all the
// model sees of a result (a rewritten output is sent that way).
