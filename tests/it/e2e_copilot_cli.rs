//! hookd inside the real GitHub Copilot CLI (`@github/copilot` 1.0.102, pinned), end to end and offline.
//!
//! The scenarios every agent shares are rows of the table in `e2e_scenarios`, which this module's
//! `impl RealAgent for CopilotSetup` drives; the tests here are what Copilot CLI alone does, or does otherwise.
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
use crate::e2e_scenarios::{PROMPT, RealAgent, Told, chat_calls, chat_result_of};
use serde_json::{Value, json};

/// The folders of one agent run inside a test's sandbox: a HOME holding `~/.copilot/settings.json`, and
/// the project folder the agent works in.
pub struct CopilotSetup {
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

/// Explains a failing check: what the agent printed and every request the model got.
fn context(out: &Output, server: &ModelServer) -> String {
    CopilotSetup::explain(out, server)
}

/// The tool results a request carries (`tool` messages), as text.
fn tool_results(request: &Value) -> String {
    request["body"]["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Copilot CLI in the table of scenarios the agents share (`e2e_scenarios`).
impl RealAgent for CopilotSetup {
    const PACKAGE: &'static AgentPackage = &COPILOT_CLI;
    const DIALECT: &'static str = "copilot-chat";
    const OWN_SHELL_TOOL: Option<&'static str> = Some("bash");
    /// Copilot shows the reason and exits 1 for a refused prompt (seen with 1.0.102).
    const REFUSED_PROMPT_SAYS: Option<&'static str> = Some("hookd is not running");
    const REFUSED_PROMPT_EXITS_CLEANLY: bool = false;
    const ASK_REFUSED_SAYS: Option<&'static str> = None;

    fn setup(sb: &Sandbox, _server: &ModelServer, socket: &Path, fail_closed: bool) -> Self {
        setup(sb.path(), socket, fail_closed)
    }

    /// With `--allow-all-tools`: only a hook stops a call.
    fn command(&self, server: &ModelServer) -> Command {
        copilot_command(self, server)
    }

    fn user_settings(&self) -> PathBuf {
        self.home.join(".copilot/settings.json")
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

// Allow, ask and rewrites, on the real agent. Copilot CLI 1.0.102's powers (src/tables/agent.rs): an
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
