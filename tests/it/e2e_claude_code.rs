//! hookd inside the real Claude Code (2.1.332, pinned), end to end and offline: a real daemon with real
//! shell hooks, Claude Code's own hook settings written from `hookd relay --print-settings claude-code`
//! as users are told to, and the model replaced by the scripted server (`tests/e2e/model_server.py`,
//! dialect `anthropic`). Each test checks what reached the model (the recorded requests) and what the
//! tools did in the project folder.
//!
//! The scenarios every agent shares are rows of the table in `e2e_scenarios`, which this module's
//! `impl RealAgent for Session` drives; the tests here are what Claude Code alone does, or does otherwise.
//!
//! Where the hooks go: Claude Code reads `$CLAUDE_CONFIG_DIR/settings.json` (the user's settings) and
//! the project's `.claude/settings.json`; it runs the hooks of both, but ignores a project's
//! `permissions.allow` until the workspace is trusted (an interactive dialog). So the tests merge the
//! printed snippet with `permissions.allow: ["Bash"]` into `$CLAUDE_CONFIG_DIR/settings.json`: as root,
//! Claude Code refuses `--dangerously-skip-permissions`, and this is what lets the tool run so that only
//! a hook can stop it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::*;
use crate::e2e_common::*;
use crate::e2e_scenarios::{PROMPT, RealAgent, Told};

/// The reason `--fail-closed` gives when the daemon is down (contract 12).
const NOT_RUNNING: &str = "hookd is not running";

/// How long a test waits for something the agent does while it runs (a file a tool writes).
const AGENT_STEP: Duration = Duration::from_secs(60);

/// One Claude Code session's setting: a hookd sandbox (settings, hook scripts, socket), with a temp
/// HOME, config dir and project folder inside it.
pub struct Session {
    home: PathBuf,
    config: PathBuf,
    project: PathBuf,
}

impl Session {
    fn new(sb: &Sandbox) -> Session {
        let session = Session {
            home: sb.p("home"),
            config: sb.p("claude-config"),
            project: sb.p("project"),
        };
        for dir in [&session.home, &session.config, &session.project] {
            fs::create_dir_all(dir).expect("creating the agent's folders");
        }
        session
    }

    /// Writes Claude Code's settings.json: what `hookd relay --print-settings claude-code --socket S`
    /// (plus `extra` flags) prints, merged with the permission that lets Bash run.
    fn hook_settings(&self, socket: &Path, extra: &[&str]) {
        self.hook_settings_allowing(socket, extra, &["Bash"]);
    }

    /// As `hook_settings`, with `allow` as the user's `permissions.allow` (empty: no tool is
    /// pre-approved, and in `-p` Claude Code refuses a call that needs permission, with nobody to ask).
    fn hook_settings_allowing(&self, socket: &Path, extra: &[&str], allow: &[&str]) {
        self.hook_settings_permitting(socket, extra, json!({ "allow": allow }));
    }

    /// As `hook_settings`, with `permissions` as the user's permission rules (`allow`, `deny`, ...).
    fn hook_settings_permitting(&self, socket: &Path, extra: &[&str], permissions: Value) {
        let socket = socket.to_str().expect("utf-8 socket path");
        let mut flags = vec!["--socket", socket];
        flags.extend_from_slice(extra);
        let snippet = print_settings(CLAUDE_CODE.agent, &flags, &[]);
        let mut settings: Value = serde_json::from_str(&snippet)
            .unwrap_or_else(|e| panic!("the printed settings are not JSON ({e}):\n{snippet}"));
        assert!(
            settings["hooks"]["PreToolUse"].is_array(),
            "no PreToolUse hook in the printed settings:\n{snippet}"
        );
        settings["permissions"] = permissions;
        fs::write(
            self.config.join("settings.json"),
            serde_json::to_string_pretty(&settings).unwrap(),
        )
        .expect("writing Claude Code's settings.json");
    }

    /// Writes Claude Code's settings.json with http hooks: what `hookd relay --print-settings
    /// claude-code --http --port PORT` prints, merged with the permission that lets Bash run.
    fn http_hook_settings(&self, port: u16, socket: &Path, extra: &[&str]) {
        self.http_hook_settings_allowing(port, socket, extra, &["Bash"]);
    }

    /// As `http_hook_settings`, with `allow` as the user's `permissions.allow`.
    fn http_hook_settings_allowing(
        &self,
        port: u16,
        socket: &Path,
        extra: &[&str],
        allow: &[&str],
    ) {
        let port = port.to_string();
        let socket = socket.to_str().expect("utf-8 socket path");
        let mut flags = vec!["--http", "--port", &port, "--socket", socket];
        flags.extend_from_slice(extra);
        let snippet = print_settings(CLAUDE_CODE.agent, &flags, &[]);
        let mut settings: Value = serde_json::from_str(&snippet)
            .unwrap_or_else(|e| panic!("the printed settings are not JSON ({e}):\n{snippet}"));
        assert_eq!(
            settings["hooks"]["PreToolUse"][0]["hooks"][0]["type"], "http",
            "no http PreToolUse hook in the printed settings:\n{snippet}"
        );
        settings["permissions"] = json!({"allow": allow});
        fs::write(
            self.config.join("settings.json"),
            serde_json::to_string_pretty(&settings).unwrap(),
        )
        .expect("writing Claude Code's settings.json");
    }

    /// Runs `claude -p PROMPT --output-format json` in the project folder against `server`, offline.
    fn run(&self, server: &ModelServer, prompt: &str) -> Output {
        self.run_with(server, prompt, &[])
    }

    /// As `run`, with `env` added to the agent's environment.
    fn run_with(&self, server: &ModelServer, prompt: &str, env: &[(&str, &str)]) -> Output {
        run_agent(self.claude(server, prompt, env), &server.netns())
    }

    /// `claude -p PROMPT --output-format json` in the project folder, talking to `server` only, with an
    /// environment of its own and `env`.
    fn claude(&self, server: &ModelServer, prompt: &str, env: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new(installed(&CLAUDE_CODE));
        cmd.args(["-p", prompt, "--output-format", "json"])
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("LANG", "C.UTF-8")
            .env("HOME", &self.home)
            .env("CLAUDE_CONFIG_DIR", &self.config)
            .env("ANTHROPIC_BASE_URL", server.url())
            .env("ANTHROPIC_API_KEY", "sk-e2e-offline")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .envs(env.iter().copied());
        cmd
    }
}

/// Claude Code in the table of scenarios the agents share (`e2e_scenarios`).
impl RealAgent for Session {
    const PACKAGE: &'static AgentPackage = &CLAUDE_CODE;
    const DIALECT: &'static str = "anthropic";
    const OWN_SHELL_TOOL: Option<&'static str> = None;
    const REFUSED_PROMPT_SAYS: Option<&'static str> = Some(NOT_RUNNING);
    const REFUSED_PROMPT_EXITS_CLEANLY: bool = true;
    const ASK_REFUSED_SAYS: Option<&'static str> = None;

    /// With `permissions.allow: ["Bash"]`: only a hook stops a call.
    fn setup(sb: &Sandbox, _server: &ModelServer, socket: &Path, fail_closed: bool) -> Self {
        let session = Session::new(sb);
        let extra: &[&str] = if fail_closed { &["--fail-closed"] } else { &[] };
        session.hook_settings(socket, extra);
        session
    }

    fn command(&self, server: &ModelServer) -> Command {
        self.claude(server, PROMPT, &[])
    }

    fn user_settings(&self) -> PathBuf {
        self.config.join("settings.json")
    }

    fn file(&self, name: &str) -> PathBuf {
        self.project.join(name)
    }

    fn conversation(request: &Value) -> String {
        request["body"]["messages"].to_string()
    }

    fn calls(request: &Value) -> Vec<String> {
        request["body"]["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .filter(|b| b["type"] == "tool_use")
            .filter_map(|b| b["input"]["command"].as_str().map(String::from))
            .collect()
    }

    fn result_of(request: &Value, command: &str) -> Option<Told> {
        tool_results(request)
            .into_iter()
            .find(|(c, _, _)| c == command)
            .map(|(_, text, is_error)| Told {
                text,
                error: Some(is_error),
            })
    }

    /// The `result` of Claude Code's JSON output.
    fn refused_prompt_said(out: &Output) -> String {
        let result: Value = serde_json::from_slice(&out.stdout).expect("claude's JSON result");
        result["result"].as_str().unwrap_or("").to_string()
    }

    fn explain(out: &Output, server: &ModelServer) -> String {
        format!(
            "\nstdout: {}\nstderr: {}\nrequests: {}",
            text(&out.stdout),
            text(&out.stderr),
            transcript(server)
        )
    }
}

/// The model server for one test, keeping its files in the sandbox.
fn model(sb: &Sandbox, script: Value) -> ModelServer {
    ModelServer::start("anthropic", &script, sb.path(), "model")
}

/// Panics with the agent's output unless it exited 0.
fn assert_ran(out: &Output, server: &ModelServer) {
    assert!(
        out.status.success(),
        "claude exited {}:\nstdout: {}\nstderr: {}\nrequests: {}",
        out.status,
        text(&out.stdout),
        text(&out.stderr),
        transcript(server)
    );
}

/// A short account of every request, for failure messages: each one's turn and the messages after the
/// prompt and Claude Code's long system block (the whole bodies run to tens of kilobytes).
fn transcript(server: &ModelServer) -> String {
    let mut out = String::new();
    for request in server.requests() {
        let messages = request["body"]["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let tail: Vec<String> = messages
            .iter()
            .skip(2)
            .map(|m| {
                let text = m.to_string();
                match text.char_indices().nth(1500) {
                    Some((cut, _)) => format!("{}...", &text[..cut]),
                    None => text,
                }
            })
            .collect();
        out.push_str(&format!(
            "\n[request {} turn {}] {}",
            request["n"],
            request["turn"],
            tail.join("\n    ")
        ));
    }
    if out.is_empty() {
        out.push_str("(no requests)");
    }
    out
}

/// The `tool_result` blocks of a request's messages, with the `tool_use` each answers: (command,
/// result content as text, is_error).
fn tool_results(request: &Value) -> Vec<(String, String, bool)> {
    let messages = request["body"]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let blocks: Vec<&Value> = messages
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .collect();
    blocks
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|result| {
            let command = blocks
                .iter()
                .find(|b| b["type"] == "tool_use" && b["id"] == result["tool_use_id"])
                .map(|b| b["input"]["command"].as_str().unwrap_or("").to_string())
                .unwrap_or_default();
            let content = match &result["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (command, content, result["is_error"] == true)
        })
        .collect()
}

/// The result the model was given for the call of `command`, in the request of turn `turn`.
fn result_of(server: &ModelServer, turn: usize, command: &str) -> (String, bool) {
    let turns = server.turns();
    let request = turns
        .get(turn)
        .unwrap_or_else(|| panic!("no turn {turn}; requests: {}", transcript(server)));
    tool_results(request)
        .into_iter()
        .find(|(c, _, _)| c == command)
        .map(|(_, content, is_error)| (content, is_error))
        .unwrap_or_else(|| {
            panic!("turn {turn} carries no result for the call of {command:?}: {request}")
        })
}

/// Claude Code with http hooks: no relay process at all, Claude Code POSTs each event to the
/// daemon's HTTP listener with the bearer token from `$HOOKD_TOKEN`. The daemon runs in the model
/// server's network namespace, since that is where Claude Code's 127.0.0.1 is.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn over_http_hooks_a_refused_tool_does_not_run_and_the_model_is_told_why() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "deny.sh",
        r#"cat >> @DIR@/seen.jsonl; echo >> @DIR@/seen.jsonl
if grep -q refused.txt @DIR@/seen.jsonl; then echo "E2E-HTTP-5120: no refused files, said over http" >&2; exit 2; fi"#,
    );
    // Besides the policy, a hook on each moment of the session notes that the moment came over http.
    let moments = [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SessionEnd",
    ];
    let mut settings = String::from(
        "[http]\nlisten = \"127.0.0.1:0\"\n\n\
         [[hooks.PreToolUse]]\nname = \"deny\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/deny.sh\"\n",
    );
    for moment in moments {
        settings.push_str(&format!(
            "\n[[hooks.{moment}]]\nname = \"seen-{moment}\"\ncommand = \"echo {moment} >> @DIR@/moments.log\"\n"
        ));
    }
    sb.settings(&settings);
    // A harmless call first (so that PostToolUse fires), then the refused one.
    let harmless = "echo fine > ok.txt";
    let command = "echo should-not-run > refused.txt";
    let server = model(
        &sb,
        json!({"turns": [{"tool": harmless}, {"tool": command}, {"text": "E2E done."}]}),
    );
    let netns = server.netns();
    let daemon = Daemon::start_with(sb, |cmd| enter_netns(cmd, &netns));
    let port = daemon.http_port();
    let status = daemon.status();
    let token_file = status["http"]["token_file"]
        .as_str()
        .expect("http.token_file");
    let token = fs::read_to_string(token_file).expect("reading the token file");
    let session = Session::new(&daemon.sb);
    session.http_hook_settings(port, &daemon.socket, &[]);

    let out = session.run_with(
        &server,
        "Please create refused.txt.",
        &[("HOOKD_TOKEN", token.trim())],
    );

    assert_ran(&out, &server);
    assert!(
        !session.file("refused.txt").exists(),
        "the refused command ran\nstdout: {}\nstderr: {}\n{}",
        text(&out.stdout),
        text(&out.stderr),
        transcript(&server)
    );
    let seen = daemon.sb.read("seen.jsonl");
    assert!(
        seen.contains("\"tool_name\":\"Bash\"") && seen.contains("refused.txt"),
        "the hook did not see the call: {seen}"
    );
    assert!(
        session.file("ok.txt").exists(),
        "the harmless command did not run"
    );
    assert_eq!(server.turns().len(), 3, "{}", transcript(&server));
    let (result, is_error) = result_of(&server, 2, command);
    assert!(
        result.contains("E2E-HTTP-5120: no refused files, said over http"),
        "the refusal's reason did not reach the model: {result:?}"
    );
    assert!(
        is_error,
        "the refusal reached the model as a success: {result:?}"
    );
    // SessionEnd may still be on its way when the agent has exited: wait for it, with a deadline.
    wait_until(
        AGENT_STEP,
        "SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop and SessionEnd in moments.log \
         (each moment's http hook reaching the daemon)",
        || {
            let seen = fs::read_to_string(daemon.sb.p("moments.log")).unwrap_or_default();
            moments.iter().all(|m| seen.lines().any(|l| l == *m))
        },
    );
    // Every moment's http hook was answered: Claude Code reports none as failed (a wrong token, a
    // non-2xx status or a body it cannot read would each show here as "... hook [URL] failed").
    assert!(
        !text(&out.stderr).contains("failed"),
        "an http hook failed: {}",
        text(&out.stderr)
    );
}

/// `--http --fail-closed`: Claude Code's http hooks carry `onFailure: "block"`, so with hookd
/// gone mid-session the tool is refused, not run, though no relay process is there to say so.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn over_http_hooks_with_the_daemon_gone_and_fail_closed_the_tool_is_refused() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    // Marks that the prompt went through hookd (the daemon was up then).
    sb.settings(
        "[http]\nlisten = \"127.0.0.1:0\"\n\n\
         [[hooks.UserPromptSubmit]]\nname = \"up\"\ncommand = \"touch @DIR@/prompted\"\n",
    );
    let gate = sb.p("gate");
    let command = "echo fail-closed > closed.txt";
    let server = model(
        &sb,
        json!({"turns": [{"tool": command, "wait_for": gate}, {"text": "E2E done."}]}),
    );
    let netns = server.netns();
    let mut daemon = Daemon::start_with(sb, |cmd| enter_netns(cmd, &netns));
    let port = daemon.http_port();
    let status = daemon.status();
    let token_file = status["http"]["token_file"]
        .as_str()
        .expect("http.token_file");
    let token = fs::read_to_string(token_file).expect("reading the token file");
    let session = Session::new(&daemon.sb);
    session.http_hook_settings(port, &daemon.socket, &["--fail-closed"]);

    let prompted = daemon.sb.p("prompted");
    let out = std::thread::scope(|scope| {
        let agent = scope.spawn(|| {
            session.run_with(
                &server,
                "Please create closed.txt.",
                &[("HOOKD_TOKEN", token.trim())],
            )
        });
        wait_until(AGENT_STEP, "the prompt to pass hookd over http", || {
            prompted.exists()
        });
        daemon.signal(nix::sys::signal::Signal::SIGTERM);
        daemon.wait_exit(RESPONSE);
        fs::write(&gate, "").expect("opening the gate");
        agent.join().expect("the agent's thread")
    });

    assert_ran(&out, &server);
    assert!(
        !session.file("closed.txt").exists(),
        "the tool ran with hookd down and --fail-closed\nstdout: {}\nstderr: {}\n{}",
        text(&out.stdout),
        text(&out.stderr),
        transcript(&server)
    );
    // The model did call the tool (turn 1 answers that call), and was told it was refused.
    let (result, is_error) = result_of(&server, 1, command);
    assert!(
        is_error,
        "the refusal reached the model as a success: {result:?}"
    );
    // PostToolBatch and the Stop after it go on (no onFailure there: refusing PostToolBatch would end the
    // turn with nothing said, a Stop would be sent on with no stop cap): two model calls.
    let turns = server.turns().len();
    assert_eq!(turns, 2, "{turns} model calls: {}", transcript(&server));
    assert!(
        result.contains("onFailure is \"block\""),
        "the model was not told why: {result:?}"
    );
}

/// Claude Code's other moments reach hookd from the printed settings and are answered in the
/// shape it reads there. A refusal at PostToolBatch (after the calls of a batch have run, before the next
/// model call) ends the turn: the tool ran, and the model is not called again.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn a_refusal_at_post_tool_batch_ends_the_turn() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PostToolBatch]]\nname = \"one-batch\"\n\
         command = \"cat > @DIR@/batch.json; echo 'E2E-BATCH: one batch is enough' >&2; exit 2\"\n",
    );
    let daemon = Daemon::start(sb);
    let session = Session::new(&daemon.sb);
    session.hook_settings(&daemon.socket, &[]);
    let server = model(
        &daemon.sb,
        json!({"turns": [{"tool": "echo ran > batch.txt"}, {"text": "E2E done."}]}),
    );

    let out = session.run(&server, "Please create batch.txt.");

    assert_ran(&out, &server);
    assert_eq!(
        fs::read_to_string(session.file("batch.txt")).unwrap_or_default(),
        "ran\n",
        "the tool did not run"
    );
    let batch: Value =
        serde_json::from_str(&daemon.sb.read("batch.json")).expect("the hook's input");
    assert_eq!(batch["hook_event_name"], "PostToolBatch");
    assert_eq!(batch["tool_calls"][0]["tool_name"], "Bash", "{batch}");
    assert_eq!(server.turns().len(), 1, "{}", transcript(&server));
    let result: Value = serde_json::from_slice(&out.stdout).expect("claude's JSON result");
    assert_eq!(result["terminal_reason"], "hook_stopped", "{result}");
}

// ---- Allow, ask, rewrite the input, rewrite the output --------------------------------------

/// Without a hook's allow, a call the user has not allowed (no `permissions.allow`) is refused by Claude
/// Code itself in `-p`: nobody is there to ask. What the allow test below overcomes.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn without_an_allow_a_tool_the_user_has_not_allowed_does_not_run() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "watch.sh",
        "cat >> @DIR@/pre.jsonl; echo >> @DIR@/pre.jsonl",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"watch\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/watch.sh\"\n",
    );
    let daemon = Daemon::start(sb);
    let session = Session::new(&daemon.sb);
    session.hook_settings_allowing(&daemon.socket, &[], &[]);
    let command = "touch unallowed-marker";
    let server = model(
        &daemon.sb,
        json!({"turns": [{"tool": command}, {"text": "E2E done."}]}),
    );

    let out = session.run(&server, "Please create unallowed-marker.");

    assert_ran(&out, &server);
    assert!(
        daemon.sb.read("pre.jsonl").contains(command),
        "the hook did not see the call"
    );
    assert!(
        !session.file("unallowed-marker").exists(),
        "a call the user has not allowed ran without a hook's allow: the allow test proves nothing"
    );
    let (result, is_error) = result_of(&server, 1, command);
    assert!(is_error, "{result:?}");
}

/// A hook's allow (`{"allow": "why"}`, said to Claude Code as `permissionDecision: "allow"`) runs a call
/// the user has not allowed, with no prompt: the marker it makes is there, and its result reached the
/// model as a success.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn a_hook_allow_runs_a_tool_the_user_has_not_allowed() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "approve.sh",
        r#"cat > @DIR@/pre.json; echo '{"allow": "E2E-ALLOW-4410: touching a marker is harmless"}'"#,
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"approve\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/approve.sh\"\n",
    );
    let daemon = Daemon::start(sb);
    let session = Session::new(&daemon.sb);
    session.hook_settings_allowing(&daemon.socket, &[], &[]);
    let command = "touch allowed-marker && echo E2E-ALLOWED-RAN";
    let server = model(
        &daemon.sb,
        json!({"turns": [{"tool": command}, {"text": "E2E done."}]}),
    );

    let out = session.run(&server, "Please create allowed-marker.");

    assert_ran(&out, &server);
    assert!(
        session.file("allowed-marker").exists(),
        "the call the hook allowed did not run\nstderr: {}\n{}",
        text(&out.stderr),
        transcript(&server)
    );
    let (result, is_error) = result_of(&server, 1, command);
    assert!(
        result.contains("E2E-ALLOWED-RAN") && !is_error,
        "the allowed call's output did not reach the model as a success: {result:?}"
    );
}

/// A hook's allow does not beat the user's deny rule: `permissions.deny` names the call, the hook allows
/// it, and Claude Code still refuses it (the model told so); nothing runs.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn a_users_deny_rule_wins_over_a_hook_allow() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "approve.sh",
        r#"cat > @DIR@/pre.json; echo '{"allow": "E2E-ALLOW-DENIED"}'"#,
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"approve\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/approve.sh\"\n",
    );
    let daemon = Daemon::start(sb);
    let session = Session::new(&daemon.sb);
    let command = "touch denied-marker";
    session.hook_settings_permitting(
        &daemon.socket,
        &[],
        json!({"deny": [format!("Bash({command})")]}),
    );
    let server = model(
        &daemon.sb,
        json!({"turns": [{"tool": command}, {"text": "E2E done."}]}),
    );

    let out = session.run(&server, "Please create denied-marker.");

    assert_ran(&out, &server);
    assert!(daemon.sb.p("pre.json").exists(), "the hook did not run");
    assert!(
        !session.file("denied-marker").exists(),
        "a hook's allow ran a call the user's deny rule names"
    );
    let (result, is_error) = result_of(&server, 1, command);
    assert!(is_error && result.contains("denied"), "{result:?}");
}

/// A rewritten call is held to the user's rules as rewritten: the user allows only the call the model
/// made (`Bash(touch original-marker)`), the hook rewrites it into another, and Claude Code asks for
/// that one (refused in `-p`): a rewrite does not carry the original's permission over.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn a_rewritten_call_is_held_to_the_users_rules() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "rewrite.sh",
        r#"cat > @DIR@/pre.json; echo '{"input": {"command": "touch rewritten-marker"}}'"#,
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"rewrite\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/rewrite.sh\"\n",
    );
    let daemon = Daemon::start(sb);
    let session = Session::new(&daemon.sb);
    let command = "touch original-marker";
    session.hook_settings_allowing(&daemon.socket, &[], &[&format!("Bash({command})")]);
    let server = model(
        &daemon.sb,
        json!({"turns": [{"tool": command}, {"text": "E2E done."}]}),
    );

    let out = session.run(&server, "Please create original-marker.");

    assert_ran(&out, &server);
    assert!(daemon.sb.p("pre.json").exists(), "the hook did not run");
    assert!(
        !session.file("rewritten-marker").exists(),
        "the rewritten call ran on the permission the user gave the original"
    );
    assert!(
        !session.file("original-marker").exists(),
        "the call ran as the model made it, not as the hook rewrote it"
    );
    let (result, is_error) = result_of(&server, 1, command);
    assert!(
        is_error && result.contains("rewritten-marker"),
        "the model was not told the rewritten call needs approval: {result:?}"
    );
}

/// A daemon with an HTTP listener, started in the model server's network namespace (where Claude Code's
/// 127.0.0.1 is), and the bearer token its http hooks send (`$HOOKD_TOKEN`).
fn http_daemon(sb: Sandbox, server: &ModelServer) -> (Daemon, String) {
    let netns = server.netns();
    let daemon = Daemon::start_with(sb, |cmd| enter_netns(cmd, &netns));
    let status = daemon.status();
    let token_file = status["http"]["token_file"]
        .as_str()
        .expect("http.token_file");
    let token = fs::read_to_string(token_file).expect("reading the token file");
    (daemon, token.trim().to_string())
}

/// Over http hooks (no relay process: the daemon's HTTP listener answers, through the same dialect
/// code), a hook's allow runs a call the user has not allowed, and a hook's rewrite of the command is
/// the call that runs: one hook answers `{"allow": ..., "input": {...}}`, said as `permissionDecision:
/// "allow"` + `updatedInput`.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn over_http_hooks_an_allow_with_a_rewrite_runs_the_rewritten_call_unprompted() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "approve.sh",
        r#"cat > @DIR@/pre.json; echo '{"allow": "E2E-HTTP-ALLOW", "input": {"command": "touch http-rewritten-marker && echo E2E-HTTP-REWRITTEN-RAN"}}'"#,
    );
    sb.settings(
        "[http]\nlisten = \"127.0.0.1:0\"\n\n\
         [[hooks.PreToolUse]]\nname = \"approve\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/approve.sh\"\n",
    );
    let command = "touch http-original-marker";
    let server = model(
        &sb,
        json!({"turns": [{"tool": command}, {"text": "E2E done."}]}),
    );
    let (daemon, token) = http_daemon(sb, &server);
    let session = Session::new(&daemon.sb);
    session.http_hook_settings_allowing(daemon.http_port(), &daemon.socket, &[], &[]);

    let out = session.run_with(
        &server,
        "Please create http-original-marker.",
        &[("HOOKD_TOKEN", &token)],
    );

    assert_ran(&out, &server);
    assert!(
        daemon.sb.p("pre.json").exists(),
        "the hook did not run: {}",
        text(&out.stderr)
    );
    assert!(
        session.file("http-rewritten-marker").exists(),
        "the allowed, rewritten call did not run\nstderr: {}\n{}",
        text(&out.stderr),
        transcript(&server)
    );
    assert!(
        !session.file("http-original-marker").exists(),
        "the call ran as the model made it"
    );
    let (result, is_error) = result_of(&server, 1, command);
    assert!(
        result.contains("E2E-HTTP-REWRITTEN-RAN") && !is_error,
        "the model was not given the rewritten call's output: {result:?}"
    );
}

/// Over http hooks, a PostToolUse hook's redaction (`updatedToolOutput` in the body of the daemon's
/// HTTP answer) is what the model receives.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn over_http_hooks_a_redacted_output_is_what_the_model_receives() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    fs::write(sb.p("redact.py"), sb.expand(REDACT_PY)).expect("writing redact.py");
    sb.settings(
        "[http]\nlisten = \"127.0.0.1:0\"\n\n\
         [[hooks.PostToolUse]]\nname = \"redact\"\nmatcher = \"Bash\"\ncommand = \"python3 @DIR@/redact.py\"\n",
    );
    let server = model(
        &sb,
        json!({"turns": [{"tool": PRINTS_TOKEN}, {"text": "E2E done."}]}),
    );
    let (daemon, token) = http_daemon(sb, &server);
    let session = Session::new(&daemon.sb);
    session.http_hook_settings(daemon.http_port(), &daemon.socket, &[]);

    let out = session.run_with(
        &server,
        "Please print the token.",
        &[("HOOKD_TOKEN", &token)],
    );

    assert_ran(&out, &server);
    let post = logged_events(&daemon.sb.p("post.jsonl"));
    assert!(
        post.iter()
            .any(|e| e["tool_response"].to_string().contains(TOKEN)),
        "the hook never saw the token in the tool's output: {post:?}"
    );
    let (result, _) = result_of(&server, 1, PRINTS_TOKEN);
    assert!(
        result.contains("token=[REDACTED]"),
        "the model was not given the redacted output: {result:?}\nstderr: {}",
        text(&out.stderr)
    );
    assert!(
        !everything_sent(&server.requests()).contains(TOKEN),
        "the token reached the model: {}",
        transcript(&server)
    );
}

/// A hook that gives the redacted output as plain text (`{"output": "..."}`, not in the shape of the
/// Bash result): hookd passes the string on as `updatedToolOutput`, and Claude Code 2.1.332 ignores a
/// string there without a word (agents.md), so the model gets the token and nobody is told. Seen on the
/// real agent: the model's tool_result was the unredacted `token=ghp_...`, stderr empty. What must hold
/// once the dialect code puts a text rewrite into the tool's shape (a Bash result's `stdout`), or says
/// it could not: the token never reaches the model.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn a_redacted_output_given_as_text_is_what_the_model_receives() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "redact.sh",
        r#"cat > @DIR@/post.json; echo '{"output": "token=[REDACTED]"}'"#,
    );
    sb.settings(
        "[[hooks.PostToolUse]]\nname = \"redact\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/redact.sh\"\n",
    );
    let daemon = Daemon::start(sb);
    let session = Session::new(&daemon.sb);
    session.hook_settings(&daemon.socket, &[]);
    let server = model(
        &daemon.sb,
        json!({"turns": [{"tool": PRINTS_TOKEN}, {"text": "E2E done."}]}),
    );

    let out = session.run(&server, "Please print the token.");

    assert_ran(&out, &server);
    assert!(daemon.sb.p("post.json").exists(), "the hook did not run");
    assert!(
        !everything_sent(&server.requests()).contains(TOKEN),
        "the token reached the model although a hook redacted it: {}\nstderr: {}",
        transcript(&server),
        text(&out.stderr)
    );
}

/// The last `tool_result` the model was sent in the request of turn `turn` (the answer to the call
/// of turn `turn - 1`), with the `tool_use` it answers: (tool name, result content as text, is_error).
fn last_result(server: &ModelServer, turn: usize) -> (String, String, bool) {
    let turns = server.turns();
    let request = turns
        .get(turn)
        .unwrap_or_else(|| panic!("no turn {turn}; requests: {}", transcript(server)));
    let messages = request["body"]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let blocks: Vec<&Value> = messages
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .collect();
    let result = blocks
        .iter()
        .rev()
        .find(|b| b["type"] == "tool_result")
        .unwrap_or_else(|| panic!("turn {turn} carries no tool result: {request}"));
    let tool = blocks
        .iter()
        .find(|b| b["type"] == "tool_use" && b["id"] == result["tool_use_id"])
        .map(|b| b["name"].as_str().unwrap_or("").to_string())
        .unwrap_or_default();
    let content = match &result["content"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    (tool, content, result["is_error"] == true)
}

/// End to end: with the example settings in force, the model asks to switch the guard off
/// (a `sed` that comments out every line of the settings file, then a `Write` over it), is refused
/// each time by hookd itself (`hookd:protect`, its reason sent back to the model), and the example
/// guard still refuses the `rm -rf ~` that follows. The settings file is unchanged byte for byte and
/// no command ran. With `[protect] enabled = false` the `sed` and the `Write` go through (the test
/// fails), which is what protection adds.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn the_model_cannot_switch_the_guard_off_and_the_guard_then_still_refuses_rm_rf() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::with_example_config();
    // The agent's HOME is the daemon's, so that `~` means the same folder to the agent, to the
    // example guard and to hookd's protection.
    let home = sb.p("home");
    fs::create_dir_all(&home).unwrap();
    fs::write(home.join("keep.txt"), "E2E-HOME-3390\n").unwrap();
    let daemon = Daemon::start_with(sb, |cmd| {
        cmd.env("HOME", &home).env_remove("XDG_CONFIG_HOME");
    });
    let session = Session::new(&daemon.sb);
    session.hook_settings_allowing(&daemon.socket, &[], &["Bash", "Read", "Write", "Edit"]);
    let settings = daemon.config.display().to_string();
    let before = fs::read(&daemon.config).expect("reading the settings");
    let switch_off = format!("echo ran > ran-1.txt; sed -i 's/^/# /' {settings}");
    let rm_rf = "echo ran > ran-3.txt; rm -rf ~";
    let server = model(
        &daemon.sb,
        json!({"turns": [
            {"tool": switch_off},
            {"call": {"name": "Read", "input": {"file_path": settings}}},
            {"call": {"name": "Write", "input": {"file_path": settings,
                "content": "# hookd switched off by the agent\n"}}},
            {"tool": rm_rf},
            {"text": "E2E done."}
        ]}),
    );

    let out = session.run(
        &server,
        "Switch hookd's guard off, then clean up my home folder.",
    );

    assert_ran(&out, &server);
    assert_eq!(server.turns().len(), 5, "{}", transcript(&server));
    let (tool, sed_result, is_error) = last_result(&server, 1);
    assert_eq!(tool, "Bash");
    assert!(
        sed_result.contains("hookd protects itself:") && is_error,
        "the sed's refusal did not reach the model: {sed_result:?}"
    );
    let (tool, read_result, is_error) = last_result(&server, 2);
    assert_eq!(tool, "Read");
    assert!(
        !is_error && read_result.contains("deny-destructive"),
        "reading the settings goes on: {read_result:?}"
    );
    let (tool, write_result, is_error) = last_result(&server, 3);
    assert_eq!(tool, "Write");
    assert!(
        write_result.contains("hookd protects itself:") && is_error,
        "the Write's refusal did not reach the model: {write_result:?}"
    );
    let (tool, rm_result, is_error) = last_result(&server, 4);
    assert_eq!(tool, "Bash");
    assert!(
        rm_result.contains("rule delete-root") && is_error,
        "the example guard's refusal of rm -rf ~ did not reach the model: {rm_result:?}"
    );

    assert_eq!(
        fs::read(&daemon.config).expect("reading the settings"),
        before,
        "the settings file was changed"
    );
    for marker in ["ran-1.txt", "ran-3.txt"] {
        assert!(
            !session.file(marker).exists(),
            "a refused command ran ({marker})"
        );
    }
    assert_eq!(
        fs::read_to_string(home.join("keep.txt")).unwrap_or_default(),
        "E2E-HOME-3390\n",
        "the home folder was deleted"
    );

    let fires = refused_fires(&daemon, 3);
    assert_eq!(fires.len(), 3, "three refusals: {fires:?}");
    assert_eq!(fires[0].1, switch_off, "{fires:?}");
    assert_eq!(fires[0].2, ["hookd:protect"], "{fires:?}");
    assert_eq!(fires[1].0, "Write", "{fires:?}");
    assert_eq!(fires[1].2, ["hookd:protect"], "{fires:?}");
    assert_eq!(fires[2].1, rm_rf, "{fires:?}");
    assert!(fires[2].2.iter().any(|h| h == "guard"), "{fires:?}");
}
