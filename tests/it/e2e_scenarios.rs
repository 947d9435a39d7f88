//! The scenarios the real agents share, as one table: each row names a scenario (a function below, generic
//! over the agent) and the agents it runs on, and `scenarios!` stamps out one `#[test]` per agent and
//! scenario, `e2e_scenarios::SCENARIO::AGENT`, so that a test's name is in this file to grep and
//! `cargo test --test it AGENT -- --ignored` runs one agent's scenarios with its own suite
//! (`e2e_AGENT.rs`, which holds what only that agent does and how to drive it: its [`RealAgent`]).
//!
//! Every scenario is the same story for each agent: a real daemon with real shell hooks, the agent's
//! own hook settings as `hookd relay --print-settings` writes them, the agent run headless and offline
//! against the scripted model server, and checks of what reached the model and what ran. What differs
//! between agents (how the model's requests carry a tool call and its result, what an agent says when
//! hookd refuses its prompt) is a method or a constant of [`RealAgent`], so that each check is written
//! once and holds for every agent in its row. An agent left out of a row either cannot do what the row
//! tests, or behaves otherwise; its own suite says how (for instance Qwen Code fires UserPromptSubmit a
//! second time within a turn, which changes the context, cap and daemon-gone stories).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::{Value, json};

use crate::common::*;
use crate::e2e_common::*;

/// Stamps out one test per agent of each row: `mod SCENARIO { fn AGENT() }`, each marked with the
/// `ignore` that `.ci/agents` lifts (`LEFT_OUT`'s text, which a test in `e2e_common` holds every
/// real-agent test to).
macro_rules! scenarios {
    ($($scenario:ident: [$($agent:ident),+ $(,)?];)+) => {$(
        mod $scenario {
            $(
                #[test]
                #[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
                fn $agent() {
                    if crate::e2e_common::require_network_namespaces() {
                        super::$scenario::<super::agents::$agent>();
                    }
                }
            )+
        }
    )+};
}

scenarios! {
    a_refused_tool_call_does_not_run_and_the_model_is_told_why:
        [claude_code, codex, gemini_cli, copilot_cli, qwen_code];
    a_harmless_tool_call_runs_and_its_output_reaches_the_model:
        [claude_code, codex, gemini_cli, copilot_cli];
    context_added_at_user_prompt_submit_reaches_the_model:
        [claude_code, codex, gemini_cli, copilot_cli];
    a_stop_refused_once_sends_the_model_on_with_the_reason_exactly_once:
        [claude_code, codex, gemini_cli, copilot_cli, qwen_code];
    a_stop_hook_that_always_refuses_is_ended_by_stop_refusal_cap:
        [claude_code, codex, gemini_cli, copilot_cli];
    with_the_daemon_down_the_agent_works_on:
        [claude_code, codex, gemini_cli, copilot_cli, qwen_code];
    with_the_daemon_down_and_fail_closed_no_prompt_reaches_the_model:
        [claude_code, gemini_cli, copilot_cli, qwen_code];
    with_the_daemon_gone_mid_session_and_fail_closed_the_tool_is_refused:
        [claude_code, codex, gemini_cli, copilot_cli];
    a_settings_edit_during_a_session_takes_effect_on_the_next_tool_call:
        [claude_code, codex, gemini_cli, copilot_cli, qwen_code];
    an_allow_the_agent_cannot_take_is_not_sent_and_the_tool_runs_as_without_it:
        [codex, gemini_cli, qwen_code];
    a_rewritten_command_is_the_one_that_runs:
        [claude_code, codex, gemini_cli, copilot_cli];
    a_redacted_output_is_what_the_model_receives:
        [claude_code, codex, gemini_cli, copilot_cli, qwen_code];
    a_refusal_after_the_tool_ran_keeps_the_redaction:
        [claude_code, copilot_cli, qwen_code];
    an_ask_in_headless_mode_does_not_run_the_tool_and_the_model_is_told:
        [claude_code, codex, gemini_cli, copilot_cli, qwen_code];
    a_managed_relay_refuses_and_the_users_own_settings_cannot_take_it_out:
        [claude_code, codex, gemini_cli, copilot_cli, qwen_code];
}

/// The agents of the table, by the names their tests carry.
#[allow(non_camel_case_types)]
mod agents {
    pub type claude_code = crate::e2e_claude_code::Session;
    pub type codex = crate::e2e_codex::Codex;
    pub type gemini_cli = crate::e2e_gemini_cli::GeminiSetup;
    pub type copilot_cli = crate::e2e_copilot_cli::CopilotSetup;
    pub type qwen_code = crate::e2e_qwen_code::QwenSetup;
}

/// One real agent, as the table drives it: set up in a sandbox with the relay's printed hook settings,
/// run headless against the scripted model server, and read from the requests the model was sent.
pub trait RealAgent: Sized {
    /// The pinned package; its `agent` is hookd's name for the agent.
    const PACKAGE: &'static AgentPackage;
    /// The model server's dialect for this agent (`ModelServer::start`).
    const DIALECT: &'static str;
    /// The agent's own name for its shell tool, which hooks see as `Bash` with this name kept in
    /// `agent_tool_name`; `None` for an agent whose shell tool is `Bash` already (no `agent_tool_name`).
    const OWN_SHELL_TOOL: Option<&'static str>;
    /// What the agent shows when the relay, fail-closed with no daemon, refuses the prompt itself
    /// (found in [`RealAgent::refused_prompt_said`]); `None` when it shows nothing.
    const REFUSED_PROMPT_SAYS: Option<&'static str>;
    /// Whether the agent exits 0 after its prompt was refused.
    const REFUSED_PROMPT_EXITS_CLEANLY: bool;
    /// The words hookd adds when it refuses an ask the agent cannot put to anybody in a headless run;
    /// `None` for an agent that is sent the ask (and, headless, refuses the call itself).
    const ASK_REFUSED_SAYS: Option<&'static str>;

    /// The agent's folders inside `sb`, its settings holding the hooks `hookd relay --print-settings
    /// AGENT --socket SOCKET` prints (with `--fail-closed` when asked) and whatever keeps it offline
    /// and talking to `server`.
    fn setup(sb: &Sandbox, server: &ModelServer, socket: &Path, fail_closed: bool) -> Self;

    /// The agent's headless run of [`PROMPT`] in its project folder, talking to `server` only.
    fn command(&self, server: &ModelServer) -> Command;

    /// A file in the project folder the agent works in.
    fn file(&self, name: &str) -> PathBuf;

    /// All the model was sent of the conversation in one recorded request, as text.
    fn conversation(request: &Value) -> String;

    /// The shell commands of the tool calls a request sends back to the model, in order: proof that
    /// the agent got the model's calls.
    fn calls(request: &Value) -> Vec<String>;

    /// What the model was told in `request` of the shell call of `command`; `None` when the request
    /// carries no result for it.
    fn result_of(request: &Value, command: &str) -> Option<Told>;

    /// The user's own settings file the agent reads, as [`RealAgent::setup`] wrote it.
    fn user_settings(&self) -> PathBuf;

    /// Where the agent shows a refused prompt's reason: its output, both streams.
    fn refused_prompt_said(out: &Output) -> String {
        format!("{}{}", text(&out.stdout), text(&out.stderr))
    }

    /// The agent's own word, where it gives one, that it ran the relay at PreToolUse and took its
    /// answer as a hook that completed (not a failed one). Nothing to check for most agents.
    fn assert_relay_ran(_out: &Output) {}

    /// Explains a failing check: what the agent printed and every request the model got.
    fn explain(out: &Output, server: &ModelServer) -> String {
        format!(
            "\nagent stdout:\n{}\nagent stderr:\n{}\nrequests:\n{}",
            text(&out.stdout),
            text(&out.stderr),
            everything_sent(&server.requests())
        )
    }
}

/// The prompt of every headless run.
pub const PROMPT: &str = "Please do the scripted task in this folder.";

/// How long a scenario waits for something the running agent does (a safety net, not a timing).
const AGENT_STEP: Duration = Duration::from_secs(90);

/// What the model was told of one tool call.
pub struct Told {
    /// The result, as text.
    pub text: String,
    /// Whether the agent marked the result an error, where its dialect has such a mark.
    pub error: Option<bool>,
}

/// The shell commands of the tool calls in a Chat Completions request (the assistant's `tool_calls`
/// sent back), in order: how Qwen Code and Copilot CLI carry them.
pub fn chat_calls(request: &Value) -> Vec<String> {
    chat_shell_calls(request)
        .map(|(_, command)| command)
        .collect()
}

/// What a Chat Completions request tells the model of the shell call of `command`: the `tool`
/// message that answers the call's id.
pub fn chat_result_of(request: &Value, command: &str) -> Option<Told> {
    let (id, _) = chat_shell_calls(request).find(|(_, c)| c == command)?;
    let messages = request["body"]["messages"].as_array()?;
    let result = messages
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)?;
    Some(Told {
        text: result["content"].to_string(),
        error: None,
    })
}

/// (id, command) of each shell call in a Chat Completions request.
fn chat_shell_calls(request: &Value) -> impl Iterator<Item = (Value, String)> + '_ {
    request["body"]["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
        .filter_map(|call| {
            let arguments = call["function"]["arguments"].as_str()?;
            let arguments: Value = serde_json::from_str(arguments).ok()?;
            let command = arguments["command"].as_str()?.to_string();
            Some((call["id"].clone(), command))
        })
}

/// The model server for one scenario, speaking `A`'s dialect, keeping its files in `sb`.
fn model<A: RealAgent>(sb: &Sandbox, script: Value) -> ModelServer {
    ModelServer::start(A::DIALECT, &script, sb.path(), "model")
}

/// A daemon on the sandbox `sb`, the model server on `script`, and the agent set up to reach the daemon
/// through the relay (fail-open).
fn start<A: RealAgent>(sb: Sandbox, script: Value) -> (Daemon, ModelServer, A) {
    let daemon = Daemon::start(sb);
    let server = model::<A>(&daemon.sb, script);
    let agent = A::setup(&daemon.sb, &server, &daemon.socket, false);
    (daemon, server, agent)
}

/// Runs the agent to its end (or `AGENT_RUN`) and asserts it ended on its own, cleanly.
fn run<A: RealAgent>(agent: &A, server: &ModelServer) -> Output {
    let out = run_agent(agent.command(server), &server.netns());
    assert!(
        out.status.success(),
        "{} failed ({}){}",
        A::PACKAGE.bin,
        out.status,
        A::explain(&out, server)
    );
    out
}

/// What the model was told, in the request of turn `turn`, of the call of `command`.
fn told<A: RealAgent>(server: &ModelServer, turn: usize, command: &str, why: &str) -> Told {
    let turns = server.turns();
    let request = turns
        .get(turn)
        .unwrap_or_else(|| panic!("no turn {turn}{why}"));
    A::result_of(request, command)
        .unwrap_or_else(|| panic!("turn {turn} carries no result for the call of {command:?}{why}"))
}

/// The conversation of the request of turn `turn`.
fn conversation<A: RealAgent>(server: &ModelServer, turn: usize) -> String {
    A::conversation(&server.turns()[turn])
}

/// A PreToolUse hook written for Claude Code's `Bash` refuses the agent's shell tool: the command (which
/// would create a file) does not run, the agent got the call, the hook's reason is what the model is
/// told (as an error, where the agent marks one), and the refusal is in `hookd log --refused` with the
/// agent's session.
fn a_refused_tool_call_does_not_run_and_the_model_is_told_why<A: RealAgent>() {
    let sb = Sandbox::new();
    sb.script(
        "deny.sh",
        "input=$(cat)\nprintf '%s\\n' \"$input\" >> @DIR@/pre.log\ncase \"$input\" in\n  *refused.txt*) echo 'E2E-DENIED-7f3: refused.txt is off limits' >&2; exit 2 ;;\nesac\nexit 0",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"deny-refused\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/deny.sh\"\n",
    );
    let command = "echo refused > refused.txt";
    let (daemon, server, agent) = start::<A>(
        sb,
        json!({"turns": [{"tool": command}, {"text": "E2E-FINAL: understood."}]}),
    );

    let out = run(&agent, &server);
    let why = A::explain(&out, &server);

    assert!(
        !agent.file("refused.txt").exists(),
        "the refused command ran{why}"
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 2, "a tool call, then the final answer{why}");
    assert_eq!(
        A::calls(&turns[1]),
        [command],
        "the agent got the tool call and sent it back{why}"
    );
    let result = told::<A>(&server, 1, command, &why);
    assert!(
        result
            .text
            .contains("E2E-DENIED-7f3: refused.txt is off limits"),
        "the refusal's reason is the tool's result the model sees{why}"
    );
    assert_ne!(
        result.error,
        Some(false),
        "the refusal reached the model as a success{why}"
    );
    assert!(
        text(&out.stdout).contains("E2E-FINAL: understood."),
        "the agent ended with the model's final answer{why}"
    );
    let pre = logged_events(&daemon.sb.p("pre.log"));
    assert_eq!(
        pre.len(),
        1,
        "the hook ran once, for the one tool call{why}"
    );
    assert_eq!(pre[0]["tool_name"], "Bash", "{why}");
    assert_eq!(
        pre[0]["agent_tool_name"],
        A::OWN_SHELL_TOOL.map_or(Value::Null, Value::from),
        "{why}"
    );
    assert_eq!(pre[0]["tool_input"]["command"], command, "{why}");
    assert_refusal_in_log(&daemon, A::PACKAGE.agent, &pre[0], "E2E-DENIED-7f3");
}

/// A command the policy lets through runs, the hook saw the agent's call (as `Bash`, with the command),
/// and the command's output (not in its text: seeing it proves it ran) is what the model sees next.
fn a_harmless_tool_call_runs_and_its_output_reaches_the_model<A: RealAgent>() {
    let sb = Sandbox::new();
    sb.script(
        "allow.sh",
        "cat >> @DIR@/pre.log\necho >> @DIR@/pre.log\nexit 0",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"log\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/allow.sh\"\n",
    );
    // Gemini CLI refuses `$(...)` and `$((...))` in commands as "command injection": printf it is.
    let command = "printf 'E2E-RAN-%s-OK\\n' 42 > ran.txt && cat ran.txt";
    let (daemon, server, agent) = start::<A>(
        sb,
        json!({"turns": [{"tool": command}, {"text": "E2E-FINAL: done."}]}),
    );

    let out = run(&agent, &server);
    let why = A::explain(&out, &server);

    assert_eq!(
        fs::read_to_string(agent.file("ran.txt")).unwrap_or_default(),
        "E2E-RAN-42-OK\n",
        "the command ran in the project folder{why}"
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 2, "{why}");
    let result = told::<A>(&server, 1, command, &why);
    assert!(
        result.text.contains("E2E-RAN-42-OK"),
        "the command's output reached the model{why}"
    );
    assert_ne!(result.error, Some(true), "{why}");
    let pre = logged_events(&daemon.sb.p("pre.log"));
    assert_eq!(pre.len(), 1, "the hook was asked once{why}");
    assert_eq!(pre[0]["tool_name"], "Bash", "{why}");
    assert_eq!(pre[0]["tool_input"]["command"], command, "{why}");
    assert!(text(&out.stdout).contains("E2E-FINAL: done."), "{why}");
}

/// What a UserPromptSubmit hook prints is added to what the model gets in its first call, with the
/// prompt.
fn context_added_at_user_prompt_submit_reaches_the_model<A: RealAgent>() {
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.UserPromptSubmit]]\nname = \"ctx\"\ncommand = \"cat > /dev/null; echo E2E-CTX-91c: the branch is main\"\n",
    );
    let (_daemon, server, agent) =
        start::<A>(sb, json!({"turns": [{"text": "E2E-FINAL: noted."}]}));

    let out = run(&agent, &server);
    let why = A::explain(&out, &server);

    assert_eq!(server.turns().len(), 1, "{why}");
    let first = conversation::<A>(&server, 0);
    assert!(
        first.contains("E2E-CTX-91c: the branch is main"),
        "the added context is in the first model call{why}"
    );
    assert!(first.contains(PROMPT), "with the prompt{why}");
}

/// A Stop refused once sends the model on with the reason, exactly once: the hook refuses only while
/// `stop_refusals` is 0, as the daemon counts it, and sees the second Stop as one after a refusal.
fn a_stop_refused_once_sends_the_model_on_with_the_reason_exactly_once<A: RealAgent>() {
    let sb = Sandbox::new();
    sb.script(
        "stop.sh",
        "input=$(cat)\nprintf '%s\\n' \"$input\" >> @DIR@/stop.log\n\
         case \"$input\" in *'\"stop_refusals\":0'[,}]*) echo 'E2E-MORE-3d9: also write the summary' >&2; exit 2 ;; esac\nexit 0",
    );
    sb.settings("[[hooks.Stop]]\nname = \"once-more\"\ncommand = \"@DIR@/stop.sh\"\n");
    let (daemon, server, agent) = start::<A>(
        sb,
        json!({"turns": [{"text": "E2E-FIRST answer."}, {"text": "E2E-SECOND answer."}],
               "then": {"text": "E2E-UNEXPECTED third answer."}}),
    );

    let out = run(&agent, &server);
    let why = A::explain(&out, &server);

    assert_eq!(server.turns().len(), 2, "sent on exactly once{why}");
    assert!(
        !conversation::<A>(&server, 0).contains("E2E-MORE-3d9"),
        "the reason was sent before any Stop{why}"
    );
    assert!(
        conversation::<A>(&server, 1).contains("E2E-MORE-3d9: also write the summary"),
        "the Stop refusal's reason is what the model is sent on with{why}"
    );
    let stops = logged_events(&daemon.sb.p("stop.log"));
    let seen: Vec<(Value, Value)> = stops
        .iter()
        .map(|s| (s["stop_refusals"].clone(), s["stop_hook_active"].clone()))
        .collect();
    assert_eq!(
        seen,
        [(json!(0), json!(false)), (json!(1), json!(true))],
        "the Stops the hook saw (stop_refusals, stop_hook_active){why}"
    );
    assert!(text(&out.stdout).contains("E2E-SECOND answer."), "{why}");
}

/// A Stop hook that always refuses would keep some agents asking the model for ever (Codex has no cap of
/// its own; Claude Code's and Copilot CLI's are 8): `stop_refusal_cap = 2` lets the third Stop through,
/// so the agent ends after exactly three model calls, each after the first carrying the reason. The
/// hook itself gives up after 50 Stops, so that a missing cap fails quickly instead of spinning to the
/// run's deadline.
fn a_stop_hook_that_always_refuses_is_ended_by_stop_refusal_cap<A: RealAgent>() {
    let sb = Sandbox::new();
    sb.script(
        "never.sh",
        "cat >> @DIR@/stop.log\necho >> @DIR@/stop.log\n\
         if [ \"$(wc -l < @DIR@/stop.log)\" -gt 50 ]; then exit 0; fi\n\
         echo 'E2E-NEVER-DONE: keep going' >&2\nexit 2",
    );
    sb.settings(
        "[defaults]\nstop_refusal_cap = 2\n\n[[hooks.Stop]]\nname = \"never-done\"\ncommand = \"@DIR@/never.sh\"\n",
    );
    let (daemon, server, agent) = start::<A>(
        sb,
        json!({"turns": [{"text": "E2E-ANSWER 1."}], "then": {"text": "E2E-ANSWER again."}}),
    );

    let out = run(&agent, &server);
    let why = A::explain(&out, &server);

    let stops = logged_events(&daemon.sb.p("stop.log"));
    let counts: Vec<&Value> = stops.iter().map(|e| &e["stop_refusals"]).collect();
    assert_eq!(
        counts,
        [&json!(0), &json!(1), &json!(2)],
        "two refusals, then the cap let the third Stop through{why}"
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 3, "the first answer and two more{why}");
    for turn in 1..3 {
        assert!(
            conversation::<A>(&server, turn).contains("E2E-NEVER-DONE: keep going"),
            "a call after a refused Stop lacks the reason{why}"
        );
    }
}

/// The daemon down (nothing listens on the socket the relay is given): the relay lets the agent go on
/// (fail-open), the tool runs and its output reaches the model.
fn with_the_daemon_down_the_agent_works_on<A: RealAgent>() {
    let sb = Sandbox::new();
    let socket = sb.p("run/nobody-listens.sock");
    let command = "echo open > ran.txt && echo E2E-FAIL-OPEN";
    let server = model::<A>(
        &sb,
        json!({"turns": [{"tool": command}, {"text": "E2E-FINAL: done."}]}),
    );
    let agent = A::setup(&sb, &server, &socket, false);

    let out = run(&agent, &server);
    let why = A::explain(&out, &server);

    A::assert_relay_ran(&out);
    assert_eq!(
        fs::read_to_string(agent.file("ran.txt")).unwrap_or_default(),
        "open\n",
        "the tool did not run with the daemon down (fail-open){why}"
    );
    assert_eq!(server.turns().len(), 2, "{why}");
    assert!(
        told::<A>(&server, 1, command, &why)
            .text
            .contains("E2E-FAIL-OPEN"),
        "the tool's output reached the model{why}"
    );
}

/// The daemon down from the start, with `--fail-closed` in the printed settings: the prompt itself is
/// refused (the agent fires UserPromptSubmit, or its name for it, before its first model call), so no
/// request at all reaches the model server, nothing runs, and the agent says why where it says anything.
/// No tool call is made here: `with_the_daemon_gone_mid_session_and_fail_closed_the_tool_is_refused`
/// covers how one is refused.
fn with_the_daemon_down_and_fail_closed_no_prompt_reaches_the_model<A: RealAgent>() {
    let sb = Sandbox::new();
    let socket = sb.p("run/nobody-listens.sock");
    let server = model::<A>(
        &sb,
        json!({"turns": [{"tool": "echo closed > ran.txt"}, {"text": "E2E-FINAL: done."}]}),
    );
    let agent = A::setup(&sb, &server, &socket, true);

    let out = run_agent(agent.command(&server), &server.netns());
    let why = A::explain(&out, &server);

    assert!(
        !agent.file("ran.txt").exists(),
        "the tool ran with the daemon down and --fail-closed{why}"
    );
    assert_eq!(
        server.requests().len(),
        0,
        "the refused prompt never reached the model{why}"
    );
    if let Some(says) = A::REFUSED_PROMPT_SAYS {
        assert!(
            A::refused_prompt_said(&out).contains(says),
            "the agent says why: {says:?}{why}"
        );
    }
    assert_eq!(
        out.status.success(),
        A::REFUSED_PROMPT_EXITS_CLEANLY,
        "how the agent ends on a refused prompt ({}){why}",
        out.status
    );
}

/// The daemon up when the prompt is sent and gone before the model's tool call, with `--fail-closed`:
/// the prompt passes (its hook runs), the daemon is stopped while the model server holds its first
/// answer, a shell call, and then the relay refuses that call: the command does not run and the model is
/// told `hookd is not running`. The Stop after the model's answer is let through even fail-closed (no
/// daemon, so no `stop_refusal_cap` to end a run of refusals: Codex looped without end, 64 model calls in
/// 3 s, before the relay did that), so the session ends after exactly two model calls.
fn with_the_daemon_gone_mid_session_and_fail_closed_the_tool_is_refused<A: RealAgent>() {
    let sb = Sandbox::new();
    // Marks that the prompt went through hookd (the daemon was up then).
    sb.settings("[[hooks.UserPromptSubmit]]\nname = \"up\"\ncommand = \"touch @DIR@/prompted\"\n");
    let mut daemon = Daemon::start(sb);
    let gate = daemon.sb.p("gate");
    let prompted = daemon.sb.p("prompted");
    let command = "echo closed > closed.txt";
    let server = model::<A>(
        &daemon.sb,
        json!({"turns": [{"tool": command, "wait_for": gate}, {"text": "E2E-FINAL: understood."}],
               "then": {"text": "E2E-UNEXPECTED further answer."}}),
    );
    let agent = A::setup(&daemon.sb, &server, &daemon.socket, true);

    let out = std::thread::scope(|scope| {
        let (cmd, netns) = (agent.command(&server), server.netns());
        let running = scope.spawn(move || run_agent(cmd, &netns));
        wait_until(AGENT_STEP, "the prompt to pass hookd", || prompted.exists());
        daemon.signal(Signal::SIGTERM);
        daemon.wait_exit(RESPONSE);
        assert!(
            !daemon.socket.exists(),
            "the stopped daemon left its socket"
        );
        fs::write(&gate, "").expect("opening the gate");
        running.join().expect("the agent's thread")
    });
    let why = A::explain(&out, &server);
    assert!(
        out.status.success(),
        "the agent failed ({}){why}",
        out.status
    );

    assert!(
        !agent.file("closed.txt").exists(),
        "the tool ran with the daemon gone and --fail-closed{why}"
    );
    let turns = server.turns();
    assert_eq!(
        turns.len(),
        2,
        "the tool call, then the answer to its refusal; the Stop after it ends the session{why}"
    );
    assert_eq!(
        A::calls(&turns[1]),
        [command],
        "the agent got the tool call and sent it back{why}"
    );
    let result = told::<A>(&server, 1, command, &why);
    assert!(
        result.text.contains("hookd is not running"),
        "the fail-closed reason is the tool's result the model sees{why}"
    );
    assert_ne!(result.error, Some(false), "{why}");
}

/// An edit of the hookd settings while the agent runs takes effect at the next tool call, with no
/// restart of anything: the first command runs under the old settings (only the old hook sees it), the
/// file is replaced (as editors do), and the second command, held back by the model server until the
/// daemon has loaded the new file, is refused with the new policy's reason (only the new hook sees it).
fn a_settings_edit_during_a_session_takes_effect_on_the_next_tool_call<A: RealAgent>() {
    let sb = Sandbox::new();
    sb.script(
        "allow.sh",
        "cat >> @DIR@/pre.log\necho >> @DIR@/pre.log\nexit 0",
    );
    sb.script(
        "deny.sh",
        "input=$(cat)\nprintf '%s\\n' \"$input\" >> @DIR@/edited.log\n\
         case \"$input\" in\n  *second.txt*) echo 'E2E-RELOADED-c4e: second.txt refused by the new settings' >&2; exit 2 ;;\nesac\nexit 0",
    );
    sb.settings("[[hooks.PreToolUse]]\nname = \"allow\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/allow.sh\"\n");
    let daemon = Daemon::start(sb);
    let gate = daemon.sb.p("gate");
    let (first, second) = ("echo 1 > first.txt", "echo 2 > second.txt");
    let server = model::<A>(
        &daemon.sb,
        json!({"turns": [
            {"tool": first},
            {"tool": second, "wait_for": gate},
            {"text": "E2E-FINAL: done."}
        ]}),
    );
    let agent = A::setup(&daemon.sb, &server, &daemon.socket, false);
    let generation = daemon.status()["generation"]
        .as_u64()
        .expect("a generation");

    let out = std::thread::scope(|scope| {
        let (cmd, netns) = (agent.command(&server), server.netns());
        let running = scope.spawn(move || run_agent(cmd, &netns));
        wait_until(AGENT_STEP, "the first command to run", || {
            agent.file("first.txt").exists()
        });
        daemon.sb.settings(
            "[[hooks.PreToolUse]]\nname = \"deny\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/deny.sh\"\n",
        );
        wait_until(AGENT_STEP, "the daemon to load the edited settings", || {
            daemon.status()["generation"].as_u64() > Some(generation)
        });
        fs::write(&gate, "").expect("opening the gate");
        running.join().expect("the agent's thread")
    });
    let why = A::explain(&out, &server);
    assert!(
        out.status.success(),
        "the agent failed ({}){why}",
        out.status
    );

    assert!(
        !agent.file("second.txt").exists(),
        "the second command ran despite the new settings{why}"
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 3, "{why}");
    assert_eq!(
        A::calls(&turns[2]),
        [first, second],
        "the agent got both tool calls{why}"
    );
    let ran = told::<A>(&server, 2, first, &why);
    assert!(
        !ran.text.contains("E2E-RELOADED-c4e"),
        "the first call was not answered as run{why}"
    );
    let refused = told::<A>(&server, 2, second, &why);
    assert!(
        refused
            .text
            .contains("E2E-RELOADED-c4e: second.txt refused by the new settings"),
        "the new settings' reason reached the model{why}"
    );
    assert_ne!(refused.error, Some(false), "{why}");
    let commands = |log: &str| -> Vec<Value> {
        logged_events(&daemon.sb.p(log))
            .iter()
            .map(|e| e["tool_input"]["command"].clone())
            .collect()
    };
    assert_eq!(
        commands("pre.log"),
        [json!(first)],
        "the old hook saw only the first command{why}"
    );
    assert_eq!(
        commands("edited.log"),
        [json!(second)],
        "the new hook saw only the second command{why}"
    );
}

/// An agent that would read a PreToolUse allow as a failed hook, or that grants nothing by one (Codex,
/// Gemini CLI outside yolo, Qwen Code which fires PreToolUse only once a call is approved: agents.md),
/// is not sent it: a hook's `{"allow": ...}` leaves the call as it would be without the hook, it runs,
/// its output reaches the model and nothing of the allow was sent as a refusal.
fn an_allow_the_agent_cannot_take_is_not_sent_and_the_tool_runs_as_without_it<A: RealAgent>() {
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"approve\"\nmatcher = \"Bash\"\ncommand = \"cat >> @DIR@/pre.log; echo >> @DIR@/pre.log; echo '{\\\"allow\\\": \\\"E2E-ALLOW-1c8: read-only\\\"}'\"\n",
    );
    let command = "touch allowed-marker && echo E2E-ALLOWED-RAN";
    let (daemon, server, agent) = start::<A>(
        sb,
        json!({"turns": [{"tool": command}, {"text": "E2E-FINAL: done."}]}),
    );

    let out = run(&agent, &server);
    let why = A::explain(&out, &server);

    A::assert_relay_ran(&out);
    assert_eq!(
        logged_events(&daemon.sb.p("pre.log")).len(),
        1,
        "the hook was asked{why}"
    );
    assert!(
        agent.file("allowed-marker").exists(),
        "the tool ran as without the hook{why}"
    );
    assert_eq!(server.turns().len(), 2, "{why}");
    let result = told::<A>(&server, 1, command, &why);
    assert!(
        result.text.contains("E2E-ALLOWED-RAN"),
        "the tool's output reached the model{why}"
    );
    assert!(
        !result.text.contains("E2E-ALLOW-1c8"),
        "nothing of the allow was sent as a refusal{why}"
    );
}

/// A hook's rewrite of the command (`{"input": {"command": ...}}`, in each agent's words: Claude Code's
/// `updatedInput`, Codex's beside an allow, Gemini CLI's `tool_input`, Copilot CLI's `modifiedArgs`) is
/// the call that runs: the rewritten marker is there, the original is not, and the model gets the
/// rewritten call's output.
fn a_rewritten_command_is_the_one_that_runs<A: RealAgent>() {
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"rewrite\"\nmatcher = \"Bash\"\ncommand = \"cat >> @DIR@/pre.log; echo >> @DIR@/pre.log; echo '{\\\"input\\\": {\\\"command\\\": \\\"touch rewritten-marker && echo E2E-REWRITTEN-RAN\\\"}}'\"\n",
    );
    let command = "touch original-marker";
    let (daemon, server, agent) = start::<A>(
        sb,
        json!({"turns": [{"tool": command}, {"text": "E2E-FINAL: done."}]}),
    );

    let out = run(&agent, &server);
    let why = A::explain(&out, &server);

    let pre = logged_events(&daemon.sb.p("pre.log"));
    assert_eq!(pre.len(), 1, "the hook was asked{why}");
    assert_eq!(pre[0]["tool_input"]["command"], command, "{why}");
    assert!(
        agent.file("rewritten-marker").exists(),
        "the rewritten command did not run{why}"
    );
    assert!(
        !agent.file("original-marker").exists(),
        "the call ran as the model made it, not as the hook rewrote it{why}"
    );
    assert_eq!(server.turns().len(), 2, "{why}");
    // Copilot CLI sends the model its call as the hook rewrote it; the others, as the model made it.
    let rewritten = "touch rewritten-marker && echo E2E-REWRITTEN-RAN";
    let request = &server.turns()[1];
    let result = A::result_of(request, command)
        .or_else(|| A::result_of(request, rewritten))
        .unwrap_or_else(|| panic!("turn 1 carries no result for the call{why}"));
    assert!(
        result.text.contains("E2E-REWRITTEN-RAN") && result.error != Some(true),
        "the model was not given the rewritten call's output{why}"
    );
}

/// A PostToolUse hook that redacts a token the tool printed (`{"output": ...}`, in each agent's words):
/// the hook saw the token, the model's next request carries `[REDACTED]` as the call's result, and the
/// token nowhere.
fn a_redacted_output_is_what_the_model_receives<A: RealAgent>() {
    let sb = Sandbox::new();
    redact_hook(&sb);
    let (daemon, server, agent) = start::<A>(
        sb,
        json!({"turns": [{"tool": PRINTS_TOKEN}, {"text": "E2E-FINAL: done."}]}),
    );

    let out = run(&agent, &server);
    let why = A::explain(&out, &server);

    let post = logged_events(&daemon.sb.p("post.jsonl"));
    assert_eq!(post.len(), 1, "the hook was asked{why}");
    assert!(
        post[0]["tool_response"].to_string().contains(TOKEN),
        "the hook never saw the token in the tool's output{why}"
    );
    assert_eq!(
        server.turns().len(),
        2,
        "the turn went on after the tool{why}"
    );
    assert!(
        told::<A>(&server, 1, PRINTS_TOKEN, &why)
            .text
            .contains("token=[REDACTED]"),
        "the model was not given the redacted output{why}"
    );
    assert!(
        !everything_sent(&server.requests()).contains(TOKEN),
        "the token reached the model{why}"
    );
}

/// A redaction beside another hook's refusal after the tool ran (a refusal at PostToolUse cannot undo
/// the call, and must not cost the redaction): the refusal's reason reaches the model, the token never.
fn a_refusal_after_the_tool_ran_keeps_the_redaction<A: RealAgent>() {
    let sb = Sandbox::new();
    redact_and_refuse_hooks(&sb);
    let (daemon, server, agent) = start::<A>(
        sb,
        json!({"turns": [{"tool": PRINTS_TOKEN}, {"text": "E2E-FINAL: done."}]}),
    );

    let out = run(&agent, &server);
    let why = A::explain(&out, &server);

    let post = logged_events(&daemon.sb.p("post.jsonl"));
    assert_eq!(post.len(), 1, "the hook was asked{why}");
    assert_eq!(server.turns().len(), 2, "{why}");
    let sent = everything_sent(&server.requests());
    assert!(
        sent.contains("E2E-JUDGE-7d1"),
        "the refusal's reason reached the model{why}"
    );
    assert!(!sent.contains(TOKEN), "the token reached the model{why}");
}

/// A hook's ask (`{"ask": "why"}`) in a headless run: nobody can be asked, so the call does not run, the
/// agent does not wait (`run_agent` fails the test at `AGENT_RUN`), and the model is told the hook's
/// reason (as an error, where the agent marks one), with hookd's word that the agent cannot ask where
/// hookd refused the call in its place.
fn an_ask_in_headless_mode_does_not_run_the_tool_and_the_model_is_told<A: RealAgent>() {
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"ask\"\nmatcher = \"Bash\"\ncommand = \"cat >> @DIR@/pre.log; echo >> @DIR@/pre.log; echo '{\\\"ask\\\": \\\"E2E-ASK-2b7: a person must approve this\\\"}'\"\n",
    );
    let command = "touch asked-marker";
    let (daemon, server, agent) = start::<A>(
        sb,
        json!({"turns": [{"tool": command}, {"text": "E2E-FINAL: understood."}]}),
    );

    let out = run(&agent, &server);
    let why = A::explain(&out, &server);

    assert_eq!(
        logged_events(&daemon.sb.p("pre.log")).len(),
        1,
        "the hook was asked{why}"
    );
    assert!(
        !agent.file("asked-marker").exists(),
        "the call a hook asked about ran with nobody to ask{why}"
    );
    assert_eq!(server.turns().len(), 2, "{why}");
    let result = told::<A>(&server, 1, command, &why);
    assert!(
        result
            .text
            .contains("E2E-ASK-2b7: a person must approve this"),
        "the ask's reason did not reach the model{why}"
    );
    assert_ne!(result.error, Some(false), "{why}");
    if let Some(says) = A::ASK_REFUSED_SAYS {
        assert!(
            result.text.contains(says),
            "the model is told the call needs approval: {says:?}{why}"
        );
    }
}

/// `hookd setup AGENT ARGS` by the hookd installed with its relays (as `print_settings` runs it), with
/// hookd's state and runtime folders in the daemon's sandbox, never the machine's; it must succeed.
fn setup_by_hookd(daemon: &Daemon, args: &[&str]) -> String {
    let mut cmd = Command::new(hookd_installed_with_lite().join("hookd"));
    cmd.arg("setup")
        .args(args)
        .env("XDG_STATE_HOME", state_home_for(&daemon.socket))
        .env("XDG_RUNTIME_DIR", daemon.sb.p("run"))
        .env_remove("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
        .env_remove("QWEN_CODE_SYSTEM_SETTINGS_PATH");
    let out = run_with_deadline(cmd, None, Duration::from_secs(30));
    assert!(
        out.status.success(),
        "hookd setup {args:?} failed:\n{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    format!("{}{}", text(&out.stdout), text(&out.stderr))
}

/// `hookd setup AGENT --managed` puts the relay into the agent's managed settings (below a root of the
/// test's, which the agent sees as `/etc`), and the agent runs it from there: a hookd hook's refusal
/// holds (the tool does not run, the model is told why, the journal has it), though the user's own
/// settings have had the relay taken out (`setup --remove`) and every hook switched off as the agent
/// lets them (Claude Code's, Qwen Code's and Copilot CLI's `disableAllHooks`, Codex's `[features] hooks
/// = false`, Gemini CLI's `hooksConfig.enabled = false`): the managed file wins over each.
fn a_managed_relay_refuses_and_the_users_own_settings_cannot_take_it_out<A: RealAgent>() {
    let sb = Sandbox::new();
    sb.script(
        "deny.sh",
        "input=$(cat)\nprintf '%s\\n' \"$input\" >> @DIR@/pre.log\ncase \"$input\" in\n  *refused.txt*) echo 'E2E-MANAGED-5c1: refused.txt is off limits' >&2; exit 2 ;;\nesac\nexit 0",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"deny-refused\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/deny.sh\"\n",
    );
    let command = "echo refused > refused.txt";
    let (daemon, server, agent) = start::<A>(
        sb,
        json!({"turns": [{"tool": command}, {"text": "E2E-FINAL: understood."}]}),
    );
    let agent_name = A::PACKAGE.agent;

    // The user's own settings: the relay taken out, and the agent's own switch for every hook off.
    let user = agent.user_settings();
    let user_file = user.to_str().unwrap();
    let said = setup_by_hookd(&daemon, &[agent_name, "--file", user_file, "--remove"]);
    assert!(said.contains("removed hookd's relay hooks"), "{said}");
    let own = fs::read_to_string(&user).unwrap();
    assert!(!own.contains("hookd-relay"), "{own}");
    let off = match agent_name {
        "codex" => own.replace("[features]\n", "[features]\nhooks = false\n"),
        "gemini-cli" => {
            let mut settings: Value = serde_json::from_str(&own).unwrap();
            settings["hooksConfig"] = json!({"enabled": false});
            settings.to_string()
        }
        _ => {
            let mut settings: Value = serde_json::from_str(&own).unwrap();
            settings["disableAllHooks"] = json!(true);
            settings.to_string()
        }
    };
    assert_ne!(off, own, "the user's switch is in their file");
    fs::write(&user, off).unwrap();

    // The relay in the agent's managed settings, below the test's root.
    let root = daemon.sb.p("managed-root");
    fs::create_dir(&root).unwrap();
    let said = setup_by_hookd(
        &daemon,
        &[
            agent_name,
            "--managed",
            "--managed-root",
            root.to_str().unwrap(),
            "--socket",
            daemon.socket.to_str().unwrap(),
        ],
    );
    assert!(said.contains("created"), "{said}");

    let mut cmd = agent.command(&server);
    with_etc_over(&mut cmd, &root.join("etc"));
    let out = run_agent(cmd, &server.netns());
    let why = A::explain(&out, &server);
    assert!(
        out.status.success(),
        "{} failed ({}){why}",
        A::PACKAGE.bin,
        out.status
    );

    assert!(
        !agent.file("refused.txt").exists(),
        "the refused command ran: the managed relay was not run{why}"
    );
    let pre = logged_events(&daemon.sb.p("pre.log"));
    assert_eq!(
        pre.len(),
        1,
        "hookd's hook ran once, through the managed relay alone{why}"
    );
    let result = told::<A>(&server, 1, command, &why);
    assert!(
        result
            .text
            .contains("E2E-MANAGED-5c1: refused.txt is off limits"),
        "the refusal's reason is what the model sees{why}"
    );
    assert_refusal_in_log(&daemon, agent_name, &pre[0], "E2E-MANAGED-5c1");
}
