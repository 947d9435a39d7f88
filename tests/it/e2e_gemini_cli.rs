//! hookd inside the real Gemini CLI (0.61.0, pinned), end to end and offline.
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
//! from a scripted stdio server) is matched by Claude Code's name for it, `mcp__<server>__<tool>` (issue 14).

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

/// The folders of one agent run inside a test's sandbox: a HOME holding `~/.gemini/settings.json`, and
/// the project folder the agent works in.
struct GeminiSetup {
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
    format!(
        "\nagent stdout:\n{}\nagent stderr:\n{}\nrequests:\n{}",
        text(&out.stdout),
        text(&out.stderr),
        everything_sent(&server.requests())
    )
}

/// A PreToolUse hook written for Claude Code's `Bash` refuses Gemini's `run_shell_command`: the command
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
        "input=$(cat)\nprintf '%s\\n' \"$input\" >> @DIR@/pre.log\ncase \"$input\" in\n  *refused.txt*) echo 'E2E-DENIED-7f3: refused.txt is off limits' >&2; exit 2 ;;\nesac\nexit 0",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"deny-refused\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/deny.sh\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let command = "echo refused > refused.txt";
    let server = ModelServer::start(
        "gemini",
        &json!({"turns": [{"tool": command}, {"text": "E2E-FINAL: understood."}]}),
        sb.path(),
        "model",
    );
    let out = run_gemini(&setup, &server);
    let why = context(&out, &server);

    assert!(
        !setup.project.join("refused.txt").exists(),
        "the refused command ran{why}"
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 2, "a tool call, then the final answer{why}");
    assert_eq!(
        function_calls(&turns[1]),
        [command],
        "the agent got the tool call and sent it back{why}"
    );
    assert!(
        function_responses(&turns[1]).contains("E2E-DENIED-7f3: refused.txt is off limits"),
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
    assert_refusal_in_log(&daemon, "gemini-cli", &pre[0], "E2E-DENIED-7f3");
}

/// A command the policy lets through runs, and its output is what the model sees next.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn allowed_shell_command_runs_and_its_output_reaches_the_model() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "allow.sh",
        "cat >> @DIR@/pre.log\necho >> @DIR@/pre.log\nexit 0",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"log\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/allow.sh\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    // The output is not in the command's text: seeing it proves the command ran. (Gemini CLI refuses
    // `$(...)` and `$((...))` in commands as "command injection".)
    let command = "printf 'E2E-RAN-%s-OK\\n' 42 > ran.txt && cat ran.txt";
    let server = ModelServer::start(
        "gemini",
        &json!({"turns": [{"tool": command}, {"text": "E2E-FINAL: done."}]}),
        sb.path(),
        "model",
    );
    let out = run_gemini(&setup, &server);
    let why = context(&out, &server);

    assert_eq!(
        fs::read_to_string(setup.project.join("ran.txt")).unwrap_or_default(),
        "E2E-RAN-42-OK\n",
        "the command ran in the project folder{why}"
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 2, "{why}");
    assert!(
        function_responses(&turns[1]).contains("E2E-RAN-42-OK"),
        "the command's output reached the model{why}"
    );
    assert_eq!(
        logged_events(&sb.p("pre.log")).len(),
        1,
        "the hook was asked{why}"
    );
    assert!(text(&out.stdout).contains("E2E-FINAL: done."), "{why}");
}

/// What a UserPromptSubmit hook prints reaches the model with the prompt (Gemini: BeforeAgent
/// `additionalContext`).
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn context_added_before_the_agent_reaches_the_model() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.UserPromptSubmit]]\nname = \"ctx\"\ncommand = \"cat > /dev/null; echo E2E-CTX-91c: the branch is main\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let server = ModelServer::start(
        "gemini",
        &json!({"turns": [{"text": "E2E-FINAL: noted."}]}),
        sb.path(),
        "model",
    );
    let out = run_gemini(&setup, &server);
    let why = context(&out, &server);

    let turns = server.turns();
    assert_eq!(turns.len(), 1, "{why}");
    let sent = turns[0]["body"]["contents"].to_string();
    assert!(
        sent.contains("E2E-CTX-91c: the branch is main"),
        "the added context is in the first model call{why}"
    );
    assert!(sent.contains(PROMPT), "with the prompt{why}");
}

/// A Stop (AfterAgent) refused once sends the model on with the reason, exactly once: the hook refuses
/// only while `stop_refusals` is 0, as the daemon counts it.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn stop_refused_once_sends_the_model_on_exactly_once() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "stop.sh",
        "input=$(cat)\nprintf '%s\\n' \"$input\" >> @DIR@/stop.log\ncase \"$input\" in\n  *'\"stop_refusals\":0'*) echo 'E2E-MORE-3d9: also write the summary' >&2; exit 2 ;;\nesac\nexit 0",
    );
    sb.settings("[[hooks.Stop]]\nname = \"once-more\"\ncommand = \"@DIR@/stop.sh\"\n");
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let server = ModelServer::start(
        "gemini",
        &json!({"turns": [{"text": "E2E-FIRST answer."}, {"text": "E2E-SECOND answer."}],
                "then": {"text": "E2E-UNEXPECTED third answer."}}),
        sb.path(),
        "model",
    );
    let out = run_gemini(&setup, &server);
    let why = context(&out, &server);

    let turns = server.turns();
    assert_eq!(turns.len(), 2, "sent on exactly once{why}");
    assert!(
        turns[1]["body"]["contents"]
            .to_string()
            .contains("E2E-MORE-3d9: also write the summary"),
        "the Stop refusal's reason is what the model is sent on with{why}"
    );
    assert!(
        !turns[0]["body"]["contents"]
            .to_string()
            .contains("E2E-MORE-3d9"),
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
}

/// A Stop hook that always refuses is stopped by `stop_refusal_cap`: with a cap of 2, the model is sent
/// on twice and the third Stop is let through; Gemini CLI ends cleanly (without the cap it loops until
/// it crashes).
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
        "gemini",
        &json!({"turns": [{"text": "E2E-ANSWER 1."}], "then": {"text": "E2E-ANSWER again."}}),
        sb.path(),
        "model",
    );
    let out = run_gemini(&setup, &server);
    let why = context(&out, &server);

    let stops = logged_events(&sb.p("stop.log"));
    let counts: Vec<&Value> = stops.iter().map(|e| &e["stop_refusals"]).collect();
    assert_eq!(
        counts,
        [&json!(0), &json!(1), &json!(2)],
        "two refusals, then the cap let the third Stop through{why}"
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 3, "the first answer and two more{why}");
    assert!(
        turns[2]["body"]["contents"]
            .to_string()
            .contains("E2E-NEVER-DONE: keep going"),
        "{why}"
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
        "gemini",
        &json!({"turns": [{"tool": "echo open > ran.txt"}, {"text": "E2E-FINAL: done."}]}),
        sb.path(),
        "model",
    );
    let out = run_gemini(&setup, &server);
    let why = context(&out, &server);

    assert!(setup.project.join("ran.txt").exists(), "the tool ran{why}");
    assert_eq!(server.turns().len(), 2, "{why}");
}

/// The daemon down from the start, with `--fail-closed` in the printed settings: the prompt itself is
/// refused. Gemini CLI fires BeforeAgent before its first model call; the relay refuses it (`hookd is not
/// running`, which the agent prints), so no request at all reaches the model server and the agent still
/// ends cleanly. No tool call is ever made here, so this says nothing about how a tool call is refused:
/// `daemon_gone_mid_session_with_fail_closed_the_tool_is_refused` covers that.
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
        "gemini",
        &json!({"turns": [{"tool": "echo closed > ran.txt"}, {"text": "E2E-FINAL: done."}]}),
        sb.path(),
        "model",
    );
    let out = run_agent(gemini_command(&setup, &server), &server.netns());
    let why = context(&out, &server);

    assert!(
        !setup.project.join("ran.txt").exists(),
        "the tool ran with the daemon down and --fail-closed{why}"
    );
    assert_eq!(
        server.requests().len(),
        0,
        "the refused prompt never reached the model{why}"
    );
    assert!(
        text(&out.stderr).contains("Agent execution blocked: hookd is not running"),
        "the agent says why{why}"
    );
    assert!(out.status.success(), "and ends cleanly{why}");
}

/// The daemon up when the prompt is sent and gone before the model's tool call, with `--fail-closed`:
/// BeforeAgent passes (the UserPromptSubmit hook runs), the daemon is stopped while the model server
/// holds its first answer, a `run_shell_command` call, and then the relay refuses that call: the command
/// does not run and the model is told `hookd is not running`. The AfterAgent after the model's answer is
/// let through even fail-closed (no daemon, so no `stop_refusal_cap` to end a run of refusals), so the
/// session ends after exactly two model calls.
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
        "gemini",
        &json!({"turns": [{"tool": command, "wait_for": gate}, {"text": "E2E-FINAL: understood."}],
                "then": {"text": "E2E-UNEXPECTED further answer."}}),
        daemon.sb.path(),
        "model",
    );
    let cmd = gemini_command(&setup, &server);
    let netns = server.netns();
    let agent = std::thread::spawn(move || run_agent(cmd, &netns));

    wait_until(AGENT_STEP, "the prompt to pass hookd", || prompted.exists());
    daemon.signal(Signal::SIGTERM);
    daemon.wait_exit(RESPONSE);
    assert!(
        !daemon.socket.exists(),
        "the stopped daemon left its socket"
    );
    fs::write(&gate, "").unwrap();
    let out = agent.join().expect("the agent's thread");
    let why = context(&out, &server);
    assert!(out.status.success(), "gemini failed ({}){why}", out.status);

    assert!(
        !setup.project.join("closed.txt").exists(),
        "the tool ran with the daemon gone and --fail-closed{why}"
    );
    let turns = server.turns();
    assert_eq!(
        turns.len(),
        2,
        "the tool call, then the answer to its refusal; the AfterAgent after it ends the session{why}"
    );
    assert_eq!(
        function_calls(&turns[1]),
        [command],
        "the agent got the tool call and sent it back{why}"
    );
    assert!(
        function_responses(&turns[1]).contains("hookd is not running"),
        "the fail-closed reason is the tool's result the model sees{why}"
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
        "input=$(cat)\ncase \"$input\" in\n  *second.txt*) echo 'E2E-RELOADED-c4e: second.txt refused by the new settings' >&2; exit 2 ;;\nesac\nexit 0",
    );
    sb.settings("[[hooks.PreToolUse]]\nname = \"allow\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/allow.sh\"\n");
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let gate = sb.p("gate");
    let server = ModelServer::start(
        "gemini",
        &json!({"turns": [
            {"tool": "echo 1 > first.txt"},
            {"tool": "echo 2 > second.txt", "wait_for": gate},
            {"text": "E2E-FINAL: done."}
        ]}),
        sb.path(),
        "model",
    );
    let generation = daemon.status()["generation"].as_u64().unwrap();
    let cmd = gemini_command(&setup, &server);
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
        function_calls(&turns[2]),
        ["echo 1 > first.txt", "echo 2 > second.txt"],
        "the agent got both tool calls{why}"
    );
    assert!(
        function_responses(&turns[2]).contains("E2E-RELOADED-c4e"),
        "the new settings' reason reached the model{why}"
    );
    assert_eq!(
        logged_events(&sb.p("pre.log")).len(),
        1,
        "the old hook saw only the first command{why}"
    );
}

/// Issue 14: Gemini CLI ignores a refusal at SessionStart (it only takes advice there). A SessionStart
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

/// Issue 14: Gemini CLI names an MCP tool `mcp_<server>_<tool>`; hooks see it as Claude Code names it,
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

// Issue 15: allow, ask and rewrites, on the real agent. Gemini CLI 0.61.0's powers (src/tables/agent.rs): an
// allow grants nothing (not sent), an ask in -p would wait for ever (refused, saying approval is
// needed), `hookSpecificOutput.tool_input` rewrites a call, and an AfterTool deny's reason is all the
// model sees of a result (a rewritten output is sent that way).

/// Gemini CLI takes no allow (it grants nothing outside yolo: agents.md), so hookd does not send one: a
/// hook's `{"allow": ...}` leaves the call as it would be without the hook, and in yolo it runs.
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
        "gemini",
        &json!({"turns": [{"tool": "touch allowed-marker"}, {"text": "E2E-FINAL: done."}]}),
        sb.path(),
        "model",
    );
    let out = run_gemini(&setup, &server);
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
        !function_responses(&turns[1]).contains("E2E-ALLOW-1c8"),
        "nothing of the allow was sent as a refusal{why}"
    );
}

/// A hook's `{"input": {"command": ...}}` reaches Gemini CLI as `hookSpecificOutput.tool_input`: the
/// rewritten command is the one that runs, and the original does not.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn a_rewritten_command_is_the_one_that_runs() {
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
        "gemini",
        &json!({"turns": [{"tool": "touch original-marker"}, {"text": "E2E-FINAL: done."}]}),
        sb.path(),
        "model",
    );
    let out = run_gemini(&setup, &server);
    let why = context(&out, &server);

    let pre = logged_events(&sb.p("pre.log"));
    assert_eq!(pre.len(), 1, "the hook was asked{why}");
    assert_eq!(
        pre[0]["tool_input"]["command"], "touch original-marker",
        "{why}"
    );
    assert!(
        setup.project.join("rewritten-marker").exists(),
        "the rewritten command ran{why}"
    );
    assert!(
        !setup.project.join("original-marker").exists(),
        "the original command ran{why}"
    );
    assert_eq!(server.turns().len(), 2, "{why}");
}

/// A PostToolUse hook's redacted `{"output": ...}` reaches Gemini CLI as the reason of an AfterTool deny,
/// which is all the model sees of the result: the model gets `[REDACTED]`, never the token.
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
        "gemini",
        &json!({"turns": [{"tool": PRINTS_TOKEN}, {"text": "E2E-FINAL: done."}]}),
        sb.path(),
        "model",
    );
    let out = run_gemini(&setup, &server);
    let why = context(&out, &server);

    let post = logged_events(&sb.p("post.jsonl"));
    assert_eq!(post.len(), 1, "the hook was asked{why}");
    assert!(
        post[0]["tool_response"].to_string().contains(TOKEN),
        "the tool printed the token{why}"
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 2, "{why}");
    assert!(
        function_responses(&turns[1]).contains("token=[REDACTED]"),
        "the redacted output reached the model{why}"
    );
    assert!(
        !everything_sent(&server.requests()).contains(TOKEN),
        "the token reached the model{why}"
    );
}

/// Gemini CLI in -p would wait for ever on an ask (agents.md): hookd refuses instead, saying approval is
/// needed. The tool does not run, the agent ends on its own, and the model is told why.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn an_ask_in_headless_mode_refuses_and_says_approval_is_needed() {
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
        "gemini",
        &json!({"turns": [{"tool": "touch asked-marker"}, {"text": "E2E-FINAL: understood."}]}),
        sb.path(),
        "model",
    );
    let out = run_gemini(&setup, &server);
    let why = context(&out, &server);

    assert!(
        !setup.project.join("asked-marker").exists(),
        "the tool ran{why}"
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 2, "{why}");
    let seen = function_responses(&turns[1]);
    assert!(
        seen.contains("E2E-ASK-2b7: a person must approve this")
            && seen.contains("Gemini CLI cannot ask for it here"),
        "the model is told the call needs approval{why}"
    );
}
