//! hookd inside the real GitHub Copilot CLI (`@github/copilot` 1.0.102, pinned), end to end and offline.
//!
//! Each test starts a real `hookd serve` on a temp socket with a real settings file and shell hooks, a
//! scripted model server speaking OpenAI's Chat Completions (`tests/e2e/dialect_copilot_chat.py`, which
//! Copilot CLI calls for a provider of its own: `COPILOT_OFFLINE`, `COPILOT_PROVIDER_BASE_URL`), and the
//! real `copilot -p` in a temp project folder with a temp HOME whose `~/.copilot/settings.json` is what
//! `hookd relay --print-settings copilot-cli` prints (its native hooks, each command naming its event
//! with `--event`, since Copilot's hook input names none). What reached the model is read from the
//! server's record; what ran, from the folder.
//!
//! Copilot CLI names its moments preToolUse / userPromptSubmitted / agentStop and its shell tool `bash`;
//! the hookd settings here use hookd's names (PreToolUse, UserPromptSubmit, Stop) and `matcher = "Bash"`,
//! which the relay maps.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

use crate::common::*;
use crate::e2e_common::*;
use nix::sys::signal::Signal;
use serde_json::{Value, json};

const PROMPT: &str = "Please do the scripted task in this folder.";

/// How long a test waits for something the running agent does (a safety net, not a timing).
const AGENT_STEP: Duration = Duration::from_secs(90);

/// The folders of one agent run inside a test's sandbox: a HOME holding `~/.copilot/settings.json`, and
/// the project folder the agent works in.
struct CopilotSetup {
    home: PathBuf,
    project: PathBuf,
}

/// The installed `copilot`, and the folder it unpacks itself into (`$XDG_CACHE_HOME/copilot/pkg`): kept
/// beside the install and unpacked once, before any test runs the agent, so that no test pays for it
/// and no two unpack it at once.
fn copilot() -> &'static (PathBuf, PathBuf) {
    static PROGRAM: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        let program = installed(&COPILOT_CLI);
        let unpacked = cache_dir().join(format!(
            "{}-{}/xdg-cache",
            COPILOT_CLI.agent, COPILOT_CLI.version
        ));
        fs::create_dir_all(&unpacked).unwrap();
        let mut cmd = Command::new(&program);
        cmd.arg("--version")
            .env("XDG_CACHE_HOME", &unpacked)
            .env("HOME", &unpacked);
        let out = run_with_deadline(cmd, None, Duration::from_secs(120));
        assert!(
            out.status.success(),
            "copilot --version failed: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        (program, unpacked)
    })
}

/// Writes `~/.copilot/settings.json` under `root/home`: the hooks `hookd relay --print-settings
/// copilot-cli --socket SOCKET [--fail-closed]` prints, as printed; and makes the project folder.
fn setup(root: &Path, socket: &Path, fail_closed: bool) -> CopilotSetup {
    let home = root.join("home");
    let project = root.join("project");
    fs::create_dir_all(home.join(".copilot")).unwrap();
    fs::create_dir_all(&project).unwrap();
    let mut flags = vec!["--socket", socket.to_str().unwrap()];
    if fail_closed {
        flags.push("--fail-closed");
    }
    let snippet = print_settings(COPILOT_CLI.agent, &flags, &[]);
    let settings: Value =
        serde_json::from_str(&snippet).expect("--print-settings copilot-cli prints JSON");
    assert!(
        settings["hooks"]["preToolUse"].is_array() && settings["hooks"]["agentStop"].is_array(),
        "the snippet has Copilot's event names: {snippet}"
    );
    fs::write(home.join(".copilot/settings.json"), snippet).unwrap();
    CopilotSetup { home, project }
}

/// `copilot -p PROMPT --allow-all-tools --no-auto-update` in the project folder, talking to `server`
/// only, with an environment of its own (nothing inherited but PATH).
fn copilot_command(setup: &CopilotSetup, server: &ModelServer) -> Command {
    let mut cmd = copilot_asking(setup, server);
    cmd.arg("--allow-all-tools");
    cmd
}

/// As [`copilot_command`] without `--allow-all-tools`: every tool call asks for permission (the
/// permissionRequest hooks), and in `-p` nobody else answers.
fn copilot_asking(setup: &CopilotSetup, server: &ModelServer) -> Command {
    let (program, unpacked) = copilot();
    let mut cmd = Command::new(program);
    cmd.args(["-p", PROMPT, "--no-auto-update"])
        .current_dir(&setup.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &setup.home)
        .env("XDG_CACHE_HOME", unpacked)
        .env("COPILOT_OFFLINE", "true")
        .env("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", server.url()))
        .env("COPILOT_PROVIDER_API_KEY", "e2e-test-key")
        .env("COPILOT_MODEL", "local-model")
        .env("TERM", "dumb")
        .env("NO_COLOR", "1");
    cmd
}

/// Runs the agent to its end and checks that it ended on its own, cleanly.
fn run_copilot(setup: &CopilotSetup, server: &ModelServer) -> Output {
    let out = run_agent(copilot_command(setup, server), &server.netns());
    assert!(
        out.status.success(),
        "copilot failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

fn messages(request: &Value) -> impl Iterator<Item = &Value> {
    request["body"]["messages"].as_array().into_iter().flatten()
}

/// The shell commands the model asked for in a request's history (the tool calls it was sent back),
/// which proves the agent got the tool call.
fn tool_calls(request: &Value) -> Vec<String> {
    messages(request)
        .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
        .filter_map(|call| call["function"]["arguments"].as_str())
        .filter_map(|args| serde_json::from_str::<Value>(args).ok())
        .filter_map(|args| args["command"].as_str().map(String::from))
        .collect()
}

/// The tool results a request carries (`tool` messages), as text.
fn tool_results(request: &Value) -> String {
    messages(request)
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
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

/// A PreToolUse hook written for Claude Code's `Bash` refuses Copilot's `bash` (its preToolUse): the
/// command (which would create a file) does not run, and the hook's reason is what the model is told.
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
        "copilot-chat",
        &json!({"turns": [{"tool": command}, {"text": "E2E-FINAL: understood."}]}),
        sb.path(),
        "model",
    );
    let out = run_copilot(&setup, &server);
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
        tool_results(&turns[1]).contains("E2E-DENIED-7f3: refused.txt is off limits"),
        "the refusal's reason is the tool's result the model sees{why}"
    );
    let pre = logged_events(&sb.p("pre.log"));
    assert_eq!(
        pre.len(),
        1,
        "the hook ran once, for the one tool call{why}"
    );
    assert_eq!(pre[0]["tool_name"], "Bash", "{why}");
    assert_eq!(pre[0]["agent_tool_name"], "bash", "{why}");
    assert_eq!(pre[0]["tool_input"]["command"], command, "{why}");
    assert_refusal_in_log(&daemon, "copilot-cli", &pre[0], "E2E-DENIED-7f3");
}

/// A PermissionRequest hook's refusal is Copilot's answer to the permission it asks for (`behavior:
/// "deny"`): the command does not run and the model sees the reason.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn refused_permission_request_denies_the_tool_with_the_reason() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PermissionRequest]]\nname = \"no-perm\"\nmatcher = \"Bash\"\ncommand = \"cat >> @DIR@/perm.log; echo >> @DIR@/perm.log; echo 'E2E-PERM-5a1: not without a review' >&2; exit 2\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let command = "echo asked > asked.txt";
    let server = ModelServer::start(
        "copilot-chat",
        &json!({"turns": [{"tool": command}, {"text": "E2E-FINAL: understood."}]}),
        sb.path(),
        "model",
    );
    let out = run_agent(copilot_asking(&setup, &server), &server.netns());
    let why = context(&out, &server);
    assert!(out.status.success(), "copilot failed ({}){why}", out.status);

    assert!(
        !setup.project.join("asked.txt").exists(),
        "the refused command ran{why}"
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 2, "{why}");
    assert!(
        tool_results(&turns[1]).contains("E2E-PERM-5a1: not without a review"),
        "the refusal's reason reached the model{why}"
    );
    let asked = logged_events(&sb.p("perm.log"));
    assert_eq!(asked.len(), 1, "{why}");
    assert_eq!(asked[0]["tool_name"], "Bash", "{why}");
    assert_eq!(asked[0]["tool_input"]["command"], command, "{why}");
}

/// A PostToolUse refusal (`decision: "block"`) replaces what the model sees of the tool's result.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn refused_tool_result_is_replaced_by_the_reason() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PostToolUse]]\nname = \"hide\"\nmatcher = \"Bash\"\ncommand = \"cat > /dev/null; echo 'E2E-HIDDEN-b70: the output holds a secret' >&2; exit 2\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let command = "printf 'E2E-SECRET-%s\\n' 99";
    let server = ModelServer::start(
        "copilot-chat",
        &json!({"turns": [{"tool": command}, {"text": "E2E-FINAL: ok."}]}),
        sb.path(),
        "model",
    );
    let out = run_copilot(&setup, &server);
    let why = context(&out, &server);

    let turns = server.turns();
    assert_eq!(turns.len(), 2, "{why}");
    let seen = tool_results(&turns[1]);
    assert!(
        seen.contains("E2E-HIDDEN-b70"),
        "the reason reached the model{why}"
    );
    assert!(!seen.contains("E2E-SECRET-99"), "the output did not{why}");
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
    // The output is not in the command's text: seeing it proves the command ran.
    let command = "printf 'E2E-RAN-%s-OK\\n' 42 > ran.txt && cat ran.txt";
    let server = ModelServer::start(
        "copilot-chat",
        &json!({"turns": [{"tool": command}, {"text": "E2E-FINAL: done."}]}),
        sb.path(),
        "model",
    );
    let out = run_copilot(&setup, &server);
    let why = context(&out, &server);

    assert_eq!(
        fs::read_to_string(setup.project.join("ran.txt")).unwrap_or_default(),
        "E2E-RAN-42-OK\n",
        "the command ran in the project folder{why}"
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 2, "{why}");
    assert!(
        tool_results(&turns[1]).contains("E2E-RAN-42-OK"),
        "the command's output reached the model{why}"
    );
    assert_eq!(
        logged_events(&sb.p("pre.log")).len(),
        1,
        "the hook was asked{why}"
    );
}

/// What a UserPromptSubmit hook prints reaches the model with the prompt (Copilot: userPromptSubmitted
/// `additionalContext`).
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn context_added_to_the_prompt_reaches_the_model() {
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
        "copilot-chat",
        &json!({"turns": [{"text": "E2E-FINAL: noted."}]}),
        sb.path(),
        "model",
    );
    let out = run_copilot(&setup, &server);
    let why = context(&out, &server);

    let turns = server.turns();
    assert_eq!(turns.len(), 1, "{why}");
    let sent = turns[0]["body"]["messages"].to_string();
    assert!(
        sent.contains("E2E-CTX-91c: the branch is main"),
        "the added context is in the first model call{why}"
    );
    assert!(sent.contains(PROMPT), "with the prompt{why}");
}

/// A Stop (agentStop) refused once sends the model on with the reason, exactly once: the hook refuses
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
        "copilot-chat",
        &json!({"turns": [{"text": "E2E-FIRST answer."}, {"text": "E2E-SECOND answer."}],
                "then": {"text": "E2E-UNEXPECTED third answer."}}),
        sb.path(),
        "model",
    );
    let out = run_copilot(&setup, &server);
    let why = context(&out, &server);

    let turns = server.turns();
    assert_eq!(turns.len(), 2, "sent on exactly once{why}");
    assert!(
        turns[1]["body"]["messages"]
            .to_string()
            .contains("E2E-MORE-3d9: also write the summary"),
        "the Stop refusal's reason is what the model is sent on with{why}"
    );
    assert!(
        !turns[0]["body"]["messages"]
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

/// A Stop hook that always refuses is stopped by `stop_refusal_cap`: with a cap of 2 (below Copilot's own
/// 8), the model is sent on twice and the third agentStop is let through.
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
        "copilot-chat",
        &json!({"turns": [{"text": "E2E-ANSWER 1."}], "then": {"text": "E2E-ANSWER again."}}),
        sb.path(),
        "model",
    );
    let out = run_copilot(&setup, &server);
    let why = context(&out, &server);

    let stops = logged_events(&sb.p("stop.log"));
    let counts: Vec<&Value> = stops.iter().map(|e| &e["stop_refusals"]).collect();
    assert_eq!(
        counts,
        [&json!(0), &json!(1), &json!(2)],
        "two refusals, then the cap let the third agentStop through{why}"
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 3, "the first answer and two more{why}");
    assert!(
        turns[2]["body"]["messages"]
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
        "copilot-chat",
        &json!({"turns": [{"tool": "echo open > ran.txt"}, {"text": "E2E-FINAL: done."}]}),
        sb.path(),
        "model",
    );
    let out = run_copilot(&setup, &server);
    let why = context(&out, &server);

    assert!(setup.project.join("ran.txt").exists(), "the tool ran{why}");
    assert_eq!(server.turns().len(), 2, "{why}");
}

/// The daemon down from the start, with `--fail-closed` in the printed settings: the prompt itself is
/// refused (userPromptSubmitted `decision: "block"`), so no model call is made and nothing runs. (The
/// sessionStart before it is refused too, which Copilot only shows.) No tool call is made here:
/// `daemon_gone_mid_session_with_fail_closed_the_tool_is_refused` covers how one is refused.
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
        "copilot-chat",
        &json!({"turns": [{"tool": "echo closed > ran.txt"}, {"text": "E2E-FINAL: done."}]}),
        sb.path(),
        "model",
    );
    let out = run_agent(copilot_command(&setup, &server), &server.netns());
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
    // Copilot shows the reason and exits 1 for a refused prompt (seen with 1.0.102).
    assert!(
        format!("{}{}", text(&out.stdout), text(&out.stderr)).contains("hookd is not running"),
        "the agent says why{why}"
    );
}

/// The daemon up when the prompt is sent and gone before the model's tool call, with `--fail-closed`:
/// the relay refuses that call (preToolUse deny), the command does not run and the model is told
/// `hookd is not running`. The agentStop after the model's answer is let through even fail-closed (no
/// daemon, so no cap), so the session ends after exactly two model calls.
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
        "copilot-chat",
        &json!({"turns": [{"tool": command, "wait_for": gate}, {"text": "E2E-FINAL: understood."}],
                "then": {"text": "E2E-UNEXPECTED further answer."}}),
        daemon.sb.path(),
        "model",
    );
    let cmd = copilot_command(&setup, &server);
    let netns = server.netns();
    let agent = std::thread::spawn(move || run_agent(cmd, &netns));

    wait_until(AGENT_STEP, "the prompt to pass hookd", || prompted.exists());
    daemon.signal(Signal::SIGTERM);
    daemon.wait_exit(RESPONSE);
    fs::write(&gate, "").unwrap();
    let out = agent.join().expect("the agent's thread");
    let why = context(&out, &server);
    assert!(out.status.success(), "copilot failed ({}){why}", out.status);

    assert!(
        !setup.project.join("closed.txt").exists(),
        "the tool ran with the daemon gone and --fail-closed{why}"
    );
    let turns = server.turns();
    assert_eq!(
        turns.len(),
        2,
        "the tool call, then the answer to its refusal{why}"
    );
    assert_eq!(tool_calls(&turns[1]), [command], "{why}");
    assert!(
        tool_results(&turns[1]).contains("hookd is not running"),
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
        "copilot-chat",
        &json!({"turns": [
            {"tool": "echo 1 > first.txt"},
            {"tool": "echo 2 > second.txt", "wait_for": gate},
            {"text": "E2E-FINAL: done."}
        ]}),
        sb.path(),
        "model",
    );
    let generation = daemon.status()["generation"].as_u64().unwrap();
    let cmd = copilot_command(&setup, &server);
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
        tool_results(&turns[2]).contains("E2E-RELOADED-c4e"),
        "the new settings' reason reached the model{why}"
    );
    assert_eq!(
        logged_events(&sb.p("pre.log")).len(),
        1,
        "the old hook saw only the first command{why}"
    );
}

// Issue 15: allow, ask and rewrites, on the real agent. Copilot CLI 1.0.102's powers (src/tables/agent.rs): an
// allow lets a tool run without its permission prompt, an ask is sent as `permissionDecision: "ask"`,
// `modifiedArgs` rewrites a call, and `modifiedResult` replaces what the model sees of a result.

/// Without `--allow-all-tools` every call asks for permission, which nobody gives in -p
/// (`refused_permission_request_denies_the_tool_with_the_reason`). A PreToolUse hook's allow is
/// Copilot's `permissionDecision: "allow"`: the tool runs, and no permission is asked at all.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn an_allow_runs_a_tool_that_would_need_permission() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"approve\"\nmatcher = \"Bash\"\ncommand = \"cat >> @DIR@/pre.log; echo >> @DIR@/pre.log; echo '{\\\"allow\\\": \\\"E2E-ALLOW-1c8: read-only\\\"}'\"\n\n\
         [[hooks.PermissionRequest]]\nname = \"watch\"\nmatcher = \"Bash\"\ncommand = \"cat >> @DIR@/perm.log; echo >> @DIR@/perm.log\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let server = ModelServer::start(
        "copilot-chat",
        &json!({"turns": [{"tool": "touch allowed-marker"}, {"text": "E2E-FINAL: done."}]}),
        sb.path(),
        "model",
    );
    let out = run_agent(copilot_asking(&setup, &server), &server.netns());
    let why = context(&out, &server);
    assert!(out.status.success(), "copilot failed ({}){why}", out.status);

    assert_eq!(
        logged_events(&sb.p("pre.log")).len(),
        1,
        "the hook was asked{why}"
    );
    assert!(
        setup.project.join("allowed-marker").exists(),
        "the allowed tool ran{why}"
    );
    assert!(
        logged_events(&sb.p("perm.log")).is_empty(),
        "no permission was asked{why}"
    );
    assert_eq!(server.turns().len(), 2, "{why}");
}

/// The control for `an_allow_runs_a_tool_that_would_need_permission`: the same run with a PreToolUse hook
/// that says nothing. Copilot asks for the permission (the PermissionRequest hook sees it), nobody gives
/// it in -p, and the tool does not run.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn without_an_allow_a_tool_that_needs_permission_does_not_run() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"log\"\nmatcher = \"Bash\"\ncommand = \"cat >> @DIR@/pre.log; echo >> @DIR@/pre.log\"\n\n\
         [[hooks.PermissionRequest]]\nname = \"watch\"\nmatcher = \"Bash\"\ncommand = \"cat >> @DIR@/perm.log; echo >> @DIR@/perm.log\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let setup = setup(sb.path(), &daemon.socket, false);
    let server = ModelServer::start(
        "copilot-chat",
        &json!({"turns": [{"tool": "touch allowed-marker"}, {"text": "E2E-FINAL: done."}]}),
        sb.path(),
        "model",
    );
    let out = run_agent(copilot_asking(&setup, &server), &server.netns());
    let why = context(&out, &server);
    assert!(out.status.success(), "copilot failed ({}){why}", out.status);

    assert_eq!(
        logged_events(&sb.p("pre.log")).len(),
        1,
        "the hook was asked{why}"
    );
    assert_eq!(
        logged_events(&sb.p("perm.log")).len(),
        1,
        "the permission was asked{why}"
    );
    assert!(
        !setup.project.join("allowed-marker").exists(),
        "the tool ran without a permission{why}"
    );
}

/// A hook's `{"input": {"command": ...}}` reaches Copilot CLI as `modifiedArgs`: the rewritten command is
/// the one that runs, and the original does not.
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
        "copilot-chat",
        &json!({"turns": [{"tool": "touch original-marker"}, {"text": "E2E-FINAL: done."}]}),
        sb.path(),
        "model",
    );
    let out = run_copilot(&setup, &server);
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

/// A PostToolUse hook's redacted `{"output": ...}` reaches Copilot CLI as `modifiedResult`: the model gets
/// `[REDACTED]`, never the token.
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
        "copilot-chat",
        &json!({"turns": [{"tool": PRINTS_TOKEN}, {"text": "E2E-FINAL: done."}]}),
        sb.path(),
        "model",
    );
    let out = run_copilot(&setup, &server);
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
        tool_results(&turns[1]).contains("token=[REDACTED]"),
        "the redacted output reached the model{why}"
    );
    assert!(
        !everything_sent(&server.requests()).contains(TOKEN),
        "the token reached the model{why}"
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
        "copilot-chat",
        &json!({"turns": [{"tool": PRINTS_TOKEN}, {"text": "E2E-FINAL: done."}]}),
        sb.path(),
        "model",
    );
    let out = run_copilot(&setup, &server);
    let why = context(&out, &server);

    let post = logged_events(&sb.p("post.jsonl"));
    assert_eq!(post.len(), 1, "the hook was asked{why}");
    assert_eq!(server.turns().len(), 2, "{why}");
    assert!(
        !everything_sent(&server.requests()).contains(TOKEN),
        "the token reached the model{why}"
    );
}

/// A hook's ask, sent to Copilot CLI as `permissionDecision: "ask"`, even with `--allow-all-tools`: in -p
/// nobody can be asked, so the tool does not run, the agent ends on its own, and the model is told.
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
        "copilot-chat",
        &json!({"turns": [{"tool": "touch asked-marker"}, {"text": "E2E-FINAL: understood."}]}),
        sb.path(),
        "model",
    );
    let out = run_copilot(&setup, &server);
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
