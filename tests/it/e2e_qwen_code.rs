//! hookd inside the real Qwen Code (0.24.4, pinned), end to end and offline.
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
use nix::sys::signal::Signal;
use serde_json::{Value, json};

const PROMPT: &str = "Please do the scripted task in this folder.";

/// How long a test waits for something the running agent does (a safety net, not a timing).
const AGENT_STEP: Duration = Duration::from_secs(90);

/// The folders of one agent run inside a test's sandbox: a HOME holding `~/.qwen/settings.json`, and
/// the project folder the agent works in.
struct QwenSetup {
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

/// The shell commands the model asked for in a request's history (the assistant's `tool_calls` it was
/// sent back), which proves the agent got the tool call.
fn tool_calls(request: &Value) -> Vec<String> {
    messages(request)
        .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
        .filter_map(|call| {
            let arguments = call["function"]["arguments"].as_str()?;
            let arguments: Value = serde_json::from_str(arguments).ok()?;
            arguments["command"].as_str().map(String::from)
        })
        .collect()
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
    format!(
        "\nagent stdout:\n{}\nagent stderr:\n{}\nrequests:\n{}",
        text(&out.stdout),
        text(&out.stderr),
        everything_sent(&server.requests())
    )
}

/// A PreToolUse hook written for Claude Code's `Bash` refuses Qwen's `run_shell_command`: the command
/// (which would create a file) does not run, and the hook's reason is what the model is told.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn refused_shell_command_does_not_run_and_the_reason_reaches_the_model() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "deny.sh",
        "input=$(cat)\nprintf '%s\\n' \"$input\" >> @DIR@/pre.log\ncase \"$input\" in\n  *refused.txt*) echo 'E2E-DENIED-5a1: refused.txt is off limits' >&2; exit 2 ;;\nesac\nexit 0",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"deny-refused\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/deny.sh\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let command = "echo refused > refused.txt";
    let server = ModelServer::start(
        "openai-chat",
        &json!({"turns": [{"tool": command}, {"text": "E2E-FINAL: understood."}]}),
        sb.path(),
        "model",
    );
    let out = run_qwen(&setup, &server);
    let why = context(&out, &server);

    assert!(
        !setup.project.join("refused.txt").exists(),
        "the refused command ran{why}"
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 2, "a tool call, then the final answer{why}");
    assert_eq!(
        tool_calls(&turns[1]),
        [command],
        "the agent got the tool call and sent it back{why}"
    );
    assert!(
        tool_results(&turns[1]).contains("E2E-DENIED-5a1: refused.txt is off limits"),
        "the refusal's reason is the tool's result the model sees{why}"
    );
    let pre = logged_events(&sb.p("pre.log"));
    assert_eq!(
        pre.len(),
        1,
        "the hook ran once, for the one tool call{why}"
    );
    assert_eq!(pre[0]["tool_name"], "Bash", "{why}");
    assert_eq!(pre[0]["agent_tool_name"], "run_shell_command", "{why}");
    assert!(
        text(&out.stdout).contains("E2E-FINAL: understood."),
        "{why}"
    );
    assert_refusal_in_log(&daemon, "qwen-code", &pre[0], "E2E-DENIED-5a1");
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

/// A Stop refused once sends the model on with the reason, exactly once: the hook refuses only while
/// `stop_refusals` is 0, as the daemon counts it.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn stop_refused_once_sends_the_model_on_exactly_once() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "stop.sh",
        "input=$(cat)\nprintf '%s\\n' \"$input\" >> @DIR@/stop.log\ncase \"$input\" in\n  *'\"stop_refusals\":0'*) echo 'E2E-MORE-8e4: also write the summary' >&2; exit 2 ;;\nesac\nexit 0",
    );
    sb.settings("[[hooks.Stop]]\nname = \"once-more\"\ncommand = \"@DIR@/stop.sh\"\n");
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let server = ModelServer::start(
        "openai-chat",
        &json!({"turns": [{"text": "E2E-FIRST answer."}, {"text": "E2E-SECOND answer."}],
                "then": {"text": "E2E-UNEXPECTED third answer."}}),
        sb.path(),
        "model",
    );
    let out = run_qwen(&setup, &server);
    let why = context(&out, &server);

    let turns = server.turns();
    assert_eq!(turns.len(), 2, "sent on exactly once{why}");
    assert!(
        turns[1]["body"]["messages"]
            .to_string()
            .contains("E2E-MORE-8e4: also write the summary"),
        "the Stop refusal's reason is what the model is sent on with{why}"
    );
    assert!(
        !turns[0]["body"]["messages"]
            .to_string()
            .contains("E2E-MORE-8e4"),
        "{why}"
    );
    let stops = logged_events(&sb.p("stop.log"));
    let counts: Vec<&Value> = stops.iter().map(|e| &e["stop_refusals"]).collect();
    assert_eq!(
        counts,
        [&json!(0), &json!(1)],
        "the hook saw the count{why}"
    );
    assert_eq!(stops[1]["stop_hook_active"], true, "{why}");
    assert!(text(&out.stdout).contains("E2E-SECOND answer."), "{why}");
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

/// The daemon down (nothing listens on the socket the relay is given): the relay lets the agent go on,
/// and the tool runs.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn daemon_down_fails_open_and_the_tool_runs() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    let socket = sb.p("run/nobody-listens.sock");
    let setup = setup(sb.path(), &socket, false);
    let server = ModelServer::start(
        "openai-chat",
        &json!({"turns": [{"tool": "echo open > ran.txt"}, {"text": "E2E-FINAL: done."}]}),
        sb.path(),
        "model",
    );
    let out = run_qwen(&setup, &server);
    let why = context(&out, &server);

    assert!(setup.project.join("ran.txt").exists(), "the tool ran{why}");
    assert_eq!(server.turns().len(), 2, "{why}");
}

/// The daemon down from the start, with `--fail-closed` in the printed settings: the prompt itself is
/// refused. Qwen Code fires UserPromptSubmit before its first model call; the relay refuses it, so no
/// request at all reaches the model server and nothing runs. No tool call is ever made here:
/// `daemon_gone_mid_session_with_fail_closed_the_tool_is_refused` covers how a tool call is refused.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn daemon_down_with_fail_closed_refuses_and_nothing_runs() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    let socket = sb.p("run/nobody-listens.sock");
    let setup = setup(sb.path(), &socket, true);
    let server = ModelServer::start(
        "openai-chat",
        &json!({"turns": [{"tool": "echo closed > ran.txt"}, {"text": "E2E-FINAL: done."}]}),
        sb.path(),
        "model",
    );
    let out = run_agent(qwen_command(&setup, &server), &server.netns());
    let why = context(&out, &server);

    assert!(
        !setup.project.join("ran.txt").exists(),
        "the tool ran with the daemon down and --fail-closed{why}"
    );
    assert_eq!(
        server.turns().len(),
        0,
        "the refused prompt never reached the model{why}"
    );
    // Qwen Code 0.24.4 prints nothing of a refused prompt in a headless run, and exits 0.
    assert!(out.status.success(), "and ends cleanly{why}");
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

/// An edit of the hookd settings while the agent runs takes effect at the next tool call, with no
/// restart of anything: the first command runs under the old settings, the second is refused by the new.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn settings_edit_takes_effect_at_the_next_tool_call_of_a_running_session() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "allow.sh",
        "cat >> @DIR@/pre.log\necho >> @DIR@/pre.log\nexit 0",
    );
    sb.script(
        "deny.sh",
        "input=$(cat)\ncase \"$input\" in\n  *second.txt*) echo 'E2E-RELOADED-71d: second.txt refused by the new settings' >&2; exit 2 ;;\nesac\nexit 0",
    );
    sb.settings("[[hooks.PreToolUse]]\nname = \"allow\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/allow.sh\"\n");
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let gate = sb.p("gate");
    let server = ModelServer::start(
        "openai-chat",
        &json!({"turns": [
            {"tool": "echo 1 > first.txt"},
            {"tool": "echo 2 > second.txt", "wait_for": gate},
            {"text": "E2E-FINAL: done."}
        ]}),
        sb.path(),
        "model",
    );
    let generation = daemon.status()["generation"].as_u64().unwrap();
    let cmd = qwen_command(&setup, &server);
    let netns = server.netns();
    let agent = std::thread::spawn(move || run_agent(cmd, &netns));

    wait_until(AGENT_STEP, "the first command to run", || {
        setup.project.join("first.txt").exists()
    });
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"deny\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/deny.sh\"\n",
    );
    wait_until(AGENT_STEP, "the daemon to load the edited settings", || {
        daemon.status()["generation"].as_u64().unwrap() > generation
    });
    fs::write(&gate, "").unwrap();
    let out = agent.join().expect("the agent's thread");
    let why = context(&out, &server);
    assert!(out.status.success(), "{why}");

    assert!(
        !setup.project.join("second.txt").exists(),
        "the second command ran despite the new settings{why}"
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 3, "{why}");
    assert_eq!(
        tool_calls(&turns[2]),
        ["echo 1 > first.txt", "echo 2 > second.txt"],
        "the agent got both tool calls{why}"
    );
    assert!(
        tool_results(&turns[2]).contains("E2E-RELOADED-71d"),
        "the new settings' reason reached the model{why}"
    );
    assert_eq!(
        logged_events(&sb.p("pre.log")).len(),
        1,
        "the old hook saw only the first command{why}"
    );
}

// Issue 15: allow, ask and rewrites, on the real agent. Qwen Code 0.24.4's powers (src/tables/agent.rs): an
// allow changes nothing (not sent), an ask is sent, a rewritten input cannot reach the tool (the call is
// refused, the reason giving the call as rewritten), and a rewritten output cannot be taken (the user is
// told).

/// Qwen Code fires PreToolUse only once a call is approved, so an allow changes nothing and hookd does
/// not send one: a hook's `{"allow": ...}` leaves the call as it would be without the hook (in yolo, it
/// runs).
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn an_allow_is_not_sent_and_the_tool_runs_as_without_the_hook() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"approve\"\nmatcher = \"Bash\"\ncommand = \"cat >> @DIR@/pre.log; echo >> @DIR@/pre.log; echo '{\\\"allow\\\": \\\"E2E-ALLOW-1c8: read-only\\\"}'\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let server = ModelServer::start(
        "openai-chat",
        &json!({"turns": [{"tool": "touch allowed-marker"}, {"text": "E2E-FINAL: done."}]}),
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
        setup.project.join("allowed-marker").exists(),
        "the tool ran as without the hook{why}"
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 2, "{why}");
    assert!(
        !tool_results(&turns[1]).contains("E2E-ALLOW-1c8"),
        "nothing of the allow was sent as a refusal{why}"
    );
}

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

/// A rewritten output reaches Qwen Code's model as `{"continue": false, "stopReason": R}`, the one
/// PostToolUse answer Qwen Code 0.24.4 reads there (its `updatedToolOutput` does not exist, and a
/// `decision: "block"` is ignored): the model gets exactly R as the tool's result, the token never, and
/// the turn goes on to its end.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn a_redacted_output_is_what_the_model_receives() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    redact_hook(&sb);
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let server = ModelServer::start(
        "openai-chat",
        &json!({"turns": [{"tool": PRINTS_TOKEN}, {"text": "E2E-FINAL: done."}]}),
        sb.path(),
        "model",
    );
    let out = run_qwen(&setup, &server);
    let why = context(&out, &server);

    let post = logged_events(&sb.p("post.jsonl"));
    assert_eq!(post.len(), 1, "the hook was asked{why}");
    assert!(
        post[0]["tool_response"].to_string().contains(TOKEN),
        "the tool printed the token{why}"
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 2, "the turn went on after the tool{why}");
    let seen = tool_results(&turns[1]);
    assert!(
        seen.contains("token=[REDACTED]"),
        "the model sees the redacted output{why}"
    );
    assert!(
        !everything_sent(&server.requests()).contains(TOKEN),
        "the token never reaches the model{why}"
    );
}

/// A redaction beside another hook's refusal after the tool ran: the model never sees the token.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn a_refusal_after_the_tool_ran_keeps_the_redaction() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    redact_and_refuse_hooks(&sb);
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let server = ModelServer::start(
        "openai-chat",
        &json!({"turns": [{"tool": PRINTS_TOKEN}, {"text": "E2E-FINAL: done."}]}),
        sb.path(),
        "model",
    );
    let out = run_qwen(&setup, &server);
    let why = context(&out, &server);

    let post = logged_events(&sb.p("post.jsonl"));
    assert_eq!(post.len(), 1, "the hook was asked{why}");
    assert_eq!(server.turns().len(), 2, "{why}");
    assert!(
        !everything_sent(&server.requests()).contains(TOKEN),
        "the token reached the model{why}"
    );
}

/// A hook's ask, sent to Qwen Code as `permissionDecision: "ask"`: in headless mode nobody can be asked,
/// so the tool does not run, the agent ends on its own, and the model is told the reason.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn an_ask_in_headless_mode_does_not_run_the_tool() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"ask\"\nmatcher = \"Bash\"\ncommand = \"cat > /dev/null; echo '{\\\"ask\\\": \\\"E2E-ASK-2b7: a person must approve this\\\"}'\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let server = ModelServer::start(
        "openai-chat",
        &json!({"turns": [{"tool": "touch asked-marker"}, {"text": "E2E-FINAL: understood."}]}),
        sb.path(),
        "model",
    );
    let out = run_qwen(&setup, &server);
    let why = context(&out, &server);

    assert!(
        !setup.project.join("asked-marker").exists(),
        "the tool ran{why}"
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 2, "{why}");
    assert!(
        tool_results(&turns[1]).contains("E2E-ASK-2b7: a person must approve this"),
        "the model is told the reason{why}"
    );
}
