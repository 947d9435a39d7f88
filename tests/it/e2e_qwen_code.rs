//! hookd inside the real Qwen Code (0.24.4, pinned), end to end and offline.
//!
//! The scenarios every agent shares are rows of the table in `e2e_scenarios`, which this module's
//! `impl RealAgent for QwenSetup` drives; the tests here are what Qwen Code alone does, or does otherwise.
//!
//! Each test starts a real `hookd serve` on a temp socket with a real settings file and shell hooks, a
//! scripted model server speaking the OpenAI Chat Completions API (`tests/e2e/dialect_openai_chat.py`),
//! and the real `qwen --approval-mode yolo PROMPT` in a temp project folder with a temp HOME whose
//! `~/.qwen/settings.json` holds the hooks printed by `hookd relay --print-settings qwen-code` (as users
//! are told to), OpenAI-compatible auth, folder trust off, and no telemetry, updates or background memory
//! agents. What reached the model is read from the server's record; what ran, from the folder.
//!
//! Qwen Code fires Claude Code's moment names (PreToolUse, UserPromptSubmit, Stop) with Gemini CLI's tool
//! names (`run_shell_command`); the hookd settings here use `matcher = "Bash"`, which the relay maps.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use crate::common::*;
use crate::e2e_common::*;
use crate::e2e_scenarios::{PROMPT, RealAgent, Told, chat_calls, chat_result_of};
use nix::sys::signal::Signal;
use serde_json::{Value, json};

/// How long a test waits for something the running agent does (a safety net, not a timing).
const AGENT_STEP: Duration = Duration::from_secs(90);

/// The folders of one agent run inside a test's sandbox: a HOME holding `~/.qwen/settings.json`, and
/// the project folder the agent works in.
pub struct QwenSetup {
    home: PathBuf,
    project: PathBuf,
}

/// Writes `~/.qwen/settings.json` under `root/home` with the hooks `hookd relay --print-settings
/// qwen-code --socket SOCKET [--fail-closed]` prints, merged into the settings that keep the agent
/// offline and quiet, and makes the project folder.
fn setup(root: &Path, socket: &Path, fail_closed: bool) -> QwenSetup {
    let home = root.join("home");
    let project = root.join("project");
    fs::create_dir_all(home.join(".qwen")).unwrap();
    fs::create_dir_all(&project).unwrap();
    let mut flags = vec!["--socket", socket.to_str().unwrap()];
    if fail_closed {
        flags.push("--fail-closed");
    }
    let snippet: Value = serde_json::from_str(&print_settings(QWEN_CODE.agent, &flags, &[]))
        .expect("--print-settings qwen-code prints JSON");
    let mut settings = json!({
        "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": false}},
        "telemetry": {"enabled": false},
        "privacy": {"usageStatisticsEnabled": false},
        "general": {"enableAutoUpdate": false, "showSessionRecap": false},
        // Background agents that would call the model beside the conversation (seen on 0.24.4: a
        // memory extraction after a run), using up the script's turns.
        "memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false, "enableAutoSkill": false},
    });
    let hooks = snippet["hooks"].clone();
    assert!(
        hooks["PreToolUse"].is_array() && hooks["Stop"].is_array(),
        "the snippet has Claude Code's event names: {snippet}"
    );
    settings["hooks"] = hooks;
    fs::write(
        home.join(".qwen/settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
    QwenSetup { home, project }
}

/// `qwen --approval-mode yolo PROMPT` in the project folder, talking to `server` only, with an
/// environment of its own (nothing inherited but PATH).
fn qwen_command(setup: &QwenSetup, server: &ModelServer) -> Command {
    let mut cmd = Command::new(installed(&QWEN_CODE));
    cmd.args(["--approval-mode", "yolo", PROMPT])
        .current_dir(&setup.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &setup.home)
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .env("OPENAI_API_KEY", "e2e-test-key")
        .env("OPENAI_MODEL", "local-model")
        .env("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1")
        .env("TERM", "dumb")
        .env("NO_COLOR", "1");
    cmd
}

/// Runs the agent to its end and checks that it ended on its own, cleanly.
fn run_qwen(setup: &QwenSetup, server: &ModelServer) -> Output {
    run_qwen_with(qwen_command(setup, server), server)
}

fn run_qwen_with(cmd: Command, server: &ModelServer) -> Output {
    let out = run_agent(cmd, &server.netns());
    assert!(
        out.status.success(),
        "qwen failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// The tool results a request carries (`role: "tool"` messages), as text.
fn tool_results(request: &Value) -> String {
    messages(request)
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn messages(request: &Value) -> impl Iterator<Item = &Value> {
    request["body"]["messages"].as_array().into_iter().flatten()
}

/// Explains a failing check: what the agent printed and every request the model got.
fn context(out: &Output, server: &ModelServer) -> String {
    QwenSetup::explain(out, server)
}

/// Qwen Code in the table of scenarios the agents share (`e2e_scenarios`).
impl RealAgent for QwenSetup {
    const PACKAGE: &'static AgentPackage = &QWEN_CODE;
    const DIALECT: &'static str = "openai-chat";
    const OWN_SHELL_TOOL: Option<&'static str> = Some("run_shell_command");
    /// Qwen Code 0.24.4 prints nothing of a refused prompt in a headless run, and exits 0.
    const REFUSED_PROMPT_SAYS: Option<&'static str> = None;
    const REFUSED_PROMPT_EXITS_CLEANLY: bool = true;
    const ASK_REFUSED_SAYS: Option<&'static str> = None;

    fn setup(sb: &Sandbox, _server: &ModelServer, socket: &Path, fail_closed: bool) -> Self {
        setup(sb.path(), socket, fail_closed)
    }

    fn command(&self, server: &ModelServer) -> Command {
        qwen_command(self, server)
    }

    fn user_settings(&self) -> PathBuf {
        self.home.join(".qwen/settings.json")
    }

    fn file(&self, name: &str) -> PathBuf {
        self.project.join(name)
    }

    fn conversation(request: &Value) -> String {
        request["body"]["messages"].to_string()
    }

    fn calls(request: &Value) -> Vec<String> {
        chat_calls(request)
    }

    fn result_of(request: &Value, command: &str) -> Option<Told> {
        chat_result_of(request, command)
    }
}

/// What a UserPromptSubmit hook prints reaches the model with the prompt. Qwen Code fires
/// UserPromptSubmit a second time after the tool's result, with an empty prompt: the hook runs again (it
/// sees `prompt: ""`), its context is added again after the tool result, and the turn goes on.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn context_added_at_user_prompt_submit_reaches_the_model() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "ctx.sh",
        "cat >> @DIR@/prompt.log\necho >> @DIR@/prompt.log\necho 'E2E-CTX-2b8: the branch is main'",
    );
    sb.settings("[[hooks.UserPromptSubmit]]\nname = \"ctx\"\ncommand = \"@DIR@/ctx.sh\"\n");
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let server = ModelServer::start(
        "openai-chat",
        &json!({"turns": [{"tool": "echo ran > ran.txt"}, {"text": "E2E-FINAL: noted."}]}),
        sb.path(),
        "model",
    );
    let out = run_qwen(&setup, &server);
    let why = context(&out, &server);

    let turns = server.turns();
    assert_eq!(turns.len(), 2, "{why}");
    let first = turns[0]["body"]["messages"].to_string();
    assert!(
        first.contains("E2E-CTX-2b8: the branch is main"),
        "the added context is in the first model call{why}"
    );
    assert!(first.contains(PROMPT), "with the prompt{why}");
    assert!(
        setup.project.join("ran.txt").exists(),
        "the turn went on past the second UserPromptSubmit: the tool ran{why}"
    );
    let prompts: Vec<Value> = logged_events(&sb.p("prompt.log"))
        .iter()
        .map(|e| e["prompt"].clone())
        .collect();
    assert_eq!(
        prompts,
        [json!(PROMPT), json!("")],
        "the hook ran for the prompt, and again with an empty one after the tool's result{why}"
    );
    assert_eq!(
        turns[1]["body"]["messages"]
            .to_string()
            .matches("E2E-CTX-2b8")
            .count(),
        2,
        "the context is added again after the tool's result{why}"
    );
    assert!(text(&out.stdout).contains("E2E-FINAL: noted."), "{why}");
}

/// A Stop hook that always refuses is ended by hookd's `stop_refusal_cap`: with a cap of 2, the model is
/// sent on twice and the third Stop is let through, and Qwen Code ends cleanly. Qwen Code's own cap
/// (`stopHookBlockingCap`, 8 by default on 0.24.4; none on the build agents.md saw) is raised to its
/// highest here, so that what ends the loop is hookd's. Sent on, the model runs a tool, after which
/// Qwen Code fires UserPromptSubmit with an empty prompt: that is no new prompt, and the count goes on
/// (were it started over, the cap would never be reached).
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn stop_refusal_cap_ends_a_stop_hook_that_always_refuses() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "never.sh",
        "cat >> @DIR@/stop.log\necho >> @DIR@/stop.log\necho 'E2E-NEVER-DONE: keep going' >&2\nexit 2",
    );
    sb.settings(
        "[defaults]\nstop_refusal_cap = 2\n\n[[hooks.Stop]]\nname = \"never-done\"\ncommand = \"@DIR@/never.sh\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let server = ModelServer::start(
        "openai-chat",
        &json!({"turns": [{"text": "E2E-ANSWER 1."}, {"tool": "echo again >> again.txt"}],
                "then": {"text": "E2E-ANSWER again."}}),
        sb.path(),
        "model",
    );
    let mut cmd = qwen_command(&setup, &server);
    cmd.env("QWEN_CODE_STOP_HOOK_BLOCK_CAP", "100");
    let out = run_qwen_with(cmd, &server);
    let why = context(&out, &server);

    let stops = logged_events(&sb.p("stop.log"));
    let counts: Vec<&Value> = stops.iter().map(|e| &e["stop_refusals"]).collect();
    assert_eq!(
        counts,
        [&json!(0), &json!(1), &json!(2)],
        "two refusals, then the cap let the third Stop through{why}"
    );
    let turns = server.turns();
    assert_eq!(
        turns.len(),
        4,
        "the first answer, the tool call it was sent on to, the answer after it, and one more{why}"
    );
    assert!(
        turns[3]["body"]["messages"]
            .to_string()
            .contains("E2E-NEVER-DONE: keep going"),
        "{why}"
    );
    assert_eq!(
        fs::read_to_string(setup.project.join("again.txt")).unwrap_or_default(),
        "again\n",
        "the tool ran once{why}"
    );
}

/// The daemon up when the prompt is sent and gone before the model's tool call, with `--fail-closed`:
/// UserPromptSubmit passes (its hook runs), the daemon is stopped while the model server holds its first
/// answer, a `run_shell_command` call, and then the relay refuses that call: the command does not run,
/// and the agent says why. The turn ends there: Qwen Code fires UserPromptSubmit again after the tool's
/// result (with an empty prompt), which the relay, fail-closed with no daemon, refuses too, so the tool's
/// refusal never goes back to the model.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn daemon_gone_mid_session_with_fail_closed_the_tool_is_refused() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    // Marks that the prompt went through hookd (the daemon was up then).
    sb.settings("[[hooks.UserPromptSubmit]]\nname = \"up\"\ncommand = \"touch @DIR@/prompted\"\n");
    let mut daemon = Daemon::start(sb);
    let setup = setup(daemon.sb.path(), &daemon.socket, true);
    let gate = daemon.sb.p("gate");
    let prompted = daemon.sb.p("prompted");
    let command = "echo closed > closed.txt";
    let server = ModelServer::start(
        "openai-chat",
        &json!({"turns": [{"tool": command, "wait_for": gate}, {"text": "E2E-FINAL: understood."}],
                "then": {"text": "E2E-UNEXPECTED further answer."}}),
        daemon.sb.path(),
        "model",
    );
    let cmd = qwen_command(&setup, &server);
    let netns = server.netns();
    let agent = std::thread::spawn(move || run_agent(cmd, &netns));

    wait_until(AGENT_STEP, "the prompt to pass hookd", || prompted.exists());
    daemon.signal(Signal::SIGTERM);
    daemon.wait_exit(RESPONSE);
    fs::write(&gate, "").unwrap();
    let out = agent.join().expect("the agent's thread");
    let why = context(&out, &server);
    assert!(out.status.success(), "qwen failed ({}){why}", out.status);

    assert!(
        !setup.project.join("closed.txt").exists(),
        "the tool ran with the daemon gone and --fail-closed{why}"
    );
    assert!(
        text(&out.stderr).contains("Tool \"run_shell_command\" was not run: hookd is not running"),
        "the agent says why{why}"
    );
    assert_eq!(
        server.turns().len(),
        1,
        "the refused UserPromptSubmit after the tool's result ends the turn{why}"
    );
}

// Allow, ask and rewrites, on the real agent. Qwen Code 0.24.4's powers (src/tables/agent.rs): an
// allow changes nothing (not sent), an ask is sent, a rewritten input cannot reach the tool (the call is
// refused, the reason giving the call as rewritten), and a rewritten output cannot be taken (the user is
// told).

/// Qwen Code cannot run a rewritten call: hookd refuses the call, the reason giving the call as the hooks
/// rewrote it. The original does not run (it may be what a hook rewrote it away from), and the model is
/// told the rewritten call, which it may make instead.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn a_rewritten_command_refuses_the_call_and_names_the_rewrite() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"rewrite\"\nmatcher = \"Bash\"\ncommand = \"cat >> @DIR@/pre.log; echo >> @DIR@/pre.log; echo '{\\\"input\\\": {\\\"command\\\": \\\"touch rewritten-marker\\\"}}'\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let server = ModelServer::start(
        "openai-chat",
        &json!({"turns": [{"tool": "touch original-marker"}, {"text": "E2E-FINAL: understood."}]}),
        sb.path(),
        "model",
    );
    let out = run_qwen(&setup, &server);
    let why = context(&out, &server);

    assert_eq!(
        logged_events(&sb.p("pre.log")).len(),
        1,
        "the hook was asked{why}"
    );
    assert!(
        !setup.project.join("original-marker").exists(),
        "the original command ran{why}"
    );
    assert!(!setup.project.join("rewritten-marker").exists(), "{why}");
    let turns = server.turns();
    assert_eq!(turns.len(), 2, "{why}");
    let seen = tool_results(&turns[1]);
    assert!(
        seen.contains("make this call instead") && seen.contains("touch rewritten-marker"),
        "the model is told the call as rewritten{why}"
    );
}
