//! hookd inside the real Codex CLI 0.171.0, offline, end to end.
//!
//! The scenarios every agent shares are rows of the table in `e2e_scenarios`, which this module's
//! `impl RealAgent for Codex` drives; the tests here are what Codex alone does, or does otherwise.
//!
//! Each test starts a real `hookd serve` on a temp socket with a real settings file and shell hooks, a
//! scripted model server speaking the OpenAI Responses API (`tests/e2e/dialect_openai.py`), and runs
//! `codex exec` headless in a temp project folder with a temp `HOME` and `CODEX_HOME`. Codex's hooks are
//! the snippet `hookd relay --print-settings codex --socket SOCK` prints, pasted into
//! `$CODEX_HOME/config.toml` below the provider settings, as users are told to: its trust records are
//! what make Codex run the relay at all (it skips hooks it does not trust without a word, so a broken
//! trust record fails the refusal tests). The checks read what reached the model (the recorded
//! requests) and what is in the project folder.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use crate::common::*;
use crate::e2e_common::*;
use crate::e2e_scenarios::{PROMPT, RealAgent, Told};
use serde_json::{Value, json};

/// How long a test waits for something the agent or daemon does in the middle of a session.
const STEP: Duration = Duration::from_secs(60);

/// The variable that holds the (unused) API key of the local provider.
const KEY_VAR: &str = "HOOKD_E2E_CODEX_KEY";

/// One Codex setup: its `CODEX_HOME`, `HOME` and project folder, all inside the test's sandbox.
pub struct Codex {
    /// The model server's network namespace, where Codex runs (only loopback there).
    netns: PathBuf,
    codex_home: PathBuf,
    home: PathBuf,
    project: PathBuf,
    /// More flags of `codex exec` (`--approve-for-me`).
    flags: Vec<String>,
}

impl Codex {
    /// Writes `$CODEX_HOME/config.toml`: the local provider and every offline setting from agents.md,
    /// then the relay snippet printed for `relay_flags` (`--socket S`, maybe `--fail-closed`), exactly as
    /// printed. The snippet's trust records name this file and hold while its groups are the first of
    /// each event here, so the settings above it hold no hooks.
    fn new(sb: &Sandbox, server: &ModelServer, relay_flags: &[&str]) -> Codex {
        Codex::with_policy(
            sb,
            server,
            relay_flags,
            "gpt-5.1-codex",
            "never",
            "danger-full-access",
        )
    }

    /// As [`Codex::new`], with the model Codex thinks it talks to (which tools it offers depends on it:
    /// `gpt-5.5` has `apply_patch`, the fallback for an unknown model has not) and Codex's
    /// `approval_policy` and `sandbox_mode`.
    fn with_policy(
        sb: &Sandbox,
        server: &ModelServer,
        relay_flags: &[&str],
        model: &str,
        approval_policy: &str,
        sandbox_mode: &str,
    ) -> Codex {
        let codex = Codex {
            netns: server.netns(),
            codex_home: sb.p("codex-home"),
            home: sb.p("home"),
            project: sb.p("project"),
            flags: Vec::new(),
        };
        for dir in [&codex.codex_home, &codex.home, &codex.project] {
            fs::create_dir_all(dir).expect("creating Codex's folders");
        }
        let snippet = print_settings(
            CODEX.agent,
            relay_flags,
            &[("CODEX_HOME", codex.codex_home.as_path())],
        );
        let config = format!(
            "model = \"{model}\"\n\
             model_provider = \"local\"\n\
             approval_policy = \"{approval_policy}\"\n\
             sandbox_mode = \"{sandbox_mode}\"\n\
             check_for_update_on_startup = false\n\n\
             [model_providers.local]\n\
             name = \"local\"\n\
             base_url = \"{}/v1\"\n\
             env_key = \"{KEY_VAR}\"\n\
             wire_api = \"responses\"\n\n\
             [features]\n\
             plugins = false\n\n\
             [analytics]\n\
             enabled = false\n\n\
             {snippet}",
            server.url()
        );
        fs::write(codex.codex_home.join("config.toml"), config).expect("writing config.toml");
        codex
    }

    /// `codex exec` in the project folder with `prompt`, in a clean environment (only `PATH` is kept:
    /// the npm package's `codex` is a Node script), to the end or `AGENT_RUN`.
    fn exec(&self, prompt: &str) -> Command {
        let mut cmd = Command::new(installed(&CODEX));
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("CODEX_HOME", &self.codex_home)
            .env(KEY_VAR, "not-a-real-key")
            .arg("exec");
        cmd.args(&self.flags);
        cmd.args(["--skip-git-repo-check", "-C"])
            .arg(&self.project)
            .arg(prompt);
        cmd
    }

    fn run(&self, prompt: &str) -> Output {
        run_agent(self.exec(prompt), &self.netns)
    }
}

/// Codex in the table of scenarios the agents share (`e2e_scenarios`).
impl RealAgent for Codex {
    const PACKAGE: &'static AgentPackage = &CODEX;
    const DIALECT: &'static str = "openai";
    const OWN_SHELL_TOOL: Option<&'static str> = None;
    /// Unread: Codex is not in the row of a prompt refused with the daemon down (its suite had no such
    /// test; the relay refuses its UserPromptSubmit then, and no model call is made).
    const REFUSED_PROMPT_SAYS: Option<&'static str> = None;
    const REFUSED_PROMPT_EXITS_CLEANLY: bool = true;
    const ASK_REFUSED_SAYS: Option<&'static str> = Some("Codex cannot ask for it here: refused");

    fn setup(sb: &Sandbox, server: &ModelServer, socket: &Path, fail_closed: bool) -> Self {
        let socket = socket.to_str().expect("a UTF-8 socket path");
        let mut flags = vec!["--socket", socket];
        if fail_closed {
            flags.push("--fail-closed");
        }
        Codex::new(sb, server, &flags)
    }

    fn command(&self, _server: &ModelServer) -> Command {
        self.exec(PROMPT)
    }

    fn user_settings(&self) -> PathBuf {
        self.codex_home.join("config.toml")
    }

    fn file(&self, name: &str) -> PathBuf {
        self.project.join(name)
    }

    /// The whole body: Codex sends the conversation as `input`, and its instructions beside it.
    fn conversation(request: &Value) -> String {
        request["body"].to_string()
    }

    fn calls(request: &Value) -> Vec<String> {
        input(request)
            .iter()
            .filter(|item| item["type"] == "function_call" && item["name"] == "exec_command")
            .filter_map(|item| {
                let args: Value = serde_json::from_str(item["arguments"].as_str()?).ok()?;
                args["cmd"].as_str().map(String::from)
            })
            .collect()
    }

    fn result_of(request: &Value, command: &str) -> Option<Told> {
        tool_output(std::slice::from_ref(request), command).map(|text| Told { text, error: None })
    }

    /// Codex's log says how each hook ended: the relay's at PreToolUse, `Completed`.
    fn assert_relay_ran(out: &Output) {
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("hook: PreToolUse Completed")
                && !stderr.contains("hook: PreToolUse Failed"),
            "Codex did not take the relay's answer at PreToolUse as a completed hook\n{}",
            show(out)
        );
    }
}

/// Asserts that Codex exited 0, showing its output otherwise.
fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "codex failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
}

fn show(out: &Output) -> String {
    format!(
        "--- codex stdout\n{}\n--- codex stderr\n{}",
        text(&out.stdout),
        text(&out.stderr)
    )
}

/// The `input` items of a recorded Responses request.
fn input(request: &Value) -> Vec<Value> {
    request["body"]["input"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// What Codex sent back as the output of the `exec_command` call of `cmd`, in any request: proof that the
/// model's call reached Codex (it echoes the call and its `call_id`), with what the model was told.
fn tool_output(requests: &[Value], cmd: &str) -> Option<String> {
    for request in requests {
        let items = input(request);
        let call = items.iter().find(|item| {
            item["type"] == "function_call"
                && item["name"] == "exec_command"
                && serde_json::from_str::<Value>(item["arguments"].as_str().unwrap_or("null"))
                    .ok()
                    .is_some_and(|args| args["cmd"] == cmd)
        });
        if let Some(call) = call {
            let output = items.iter().find(|item| {
                item["type"] == "function_call_output" && item["call_id"] == call["call_id"]
            })?;
            return Some(match &output["output"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
        }
    }
    None
}

/// A hook body that reads its input into `$input` and appends it (one JSON line) to `log`.
fn log_input(log: &str) -> String {
    format!("input=$(cat)\nprintf '%s\\n' \"$input\" >> @DIR@/{log}")
}

// ---- Every moment Codex fires, its edits, its permission requests ------------------------

/// A Codex edit is `apply_patch` with the patch as its command: hookd sees it as its edit tools (`Edit`
/// when the patch changes a file, `Write` when it only adds one), so a matcher `Edit|Write` refuses both.
/// Neither file is touched, the hook was given the paths, and each reason reaches the model.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn a_codex_edit_is_refused_through_an_edit_or_write_matcher() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "no-edits.sh",
        &format!(
            "{}\necho \"CODEX-E2E-NO-EDITS: $(printf '%s' \"$input\" | grep -o '\"tool_name\":\"[A-Za-z]*\"') refused\" >&2\nexit 2",
            log_input("pre.log")
        ),
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"no-edits\"\nmatcher = \"Edit|Write\"\ncommand = \"@DIR@/no-edits.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"note\"\ncommand = \"echo CODEX-E2E-NOTE\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let update =
        "*** Begin Patch\n*** Update File: notes.txt\n@@\n-old line\n+new line\n*** End Patch\n";
    let add = "*** Begin Patch\n*** Add File: added.txt\n+hello\n*** End Patch\n";
    let server = ModelServer::start(
        "openai",
        &json!({"turns": [{"patch": update}, {"patch": add}, {"text": "Understood, no edits."}]}),
        sb.path(),
        "model",
    );
    let codex = Codex::with_policy(
        sb,
        &server,
        &["--socket", daemon.socket.to_str().unwrap()],
        "gpt-5.5",
        "never",
        "danger-full-access",
    );
    fs::write(codex.file("notes.txt"), "old line\n").unwrap();
    let out = codex.run("Edit notes.txt and add added.txt.");
    assert_ok(&out);

    let pre = logged_events(&sb.p("pre.log"));
    let seen: Vec<(&Value, &Value)> = pre
        .iter()
        .map(|e| (&e["tool_name"], &e["agent_tool_name"]))
        .collect();
    assert_eq!(
        seen,
        [
            (&json!("Edit"), &json!("apply_patch")),
            (&json!("Write"), &json!("apply_patch"))
        ],
        "the hook's inputs: {pre:?}\n{}",
        show(&out)
    );
    let cwd = pre[0]["cwd"].as_str().expect("a cwd");
    assert_eq!(pre[0]["tool_input"]["command"], update);
    assert_eq!(
        pre[0]["tool_input"]["file_path"],
        format!("{cwd}/notes.txt")
    );
    assert_eq!(
        pre[1]["tool_input"]["file_paths"],
        json!([format!("{cwd}/added.txt")])
    );
    assert_eq!(
        fs::read_to_string(codex.file("notes.txt")).unwrap(),
        "old line\n",
        "the refused patch changed the file\n{}",
        show(&out)
    );
    assert!(
        !codex.file("added.txt").exists(),
        "the refused patch added a file\n{}",
        show(&out)
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 3, "{}", show(&out));
    let told = everything_sent(&turns[1..2]);
    assert!(
        told.contains(r#"CODEX-E2E-NO-EDITS: \"tool_name\":\"Edit\" refused"#),
        "the model was not told the reason: {told}"
    );
    assert!(
        everything_sent(&turns[2..])
            .contains(r#"CODEX-E2E-NO-EDITS: \"tool_name\":\"Write\" refused"#),
        "the model was not told the second reason"
    );
}

/// `codex exec` never asks for approval (it runs with the policy `never` whatever the config or `-a`
/// say, and rejects a command that asks to leave the sandbox) unless given `--approve-for-me`: then a
/// command that asks to leave the read-only sandbox (`sandbox_permissions: "require_escalated"`) is a
/// PermissionRequest, which goes to hookd first. hookd's refusal (Codex's `decision.behavior: "deny"`
/// with the message) rejects it: the command never runs and the message reaches the model. Another hook
/// adds a text: Codex reads an answer with `additionalContext` there as a failed hook (the refusal was
/// lost, and Codex went on to its automatic review), so the text follows the reason in the message.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn a_codex_permission_request_is_answered_by_hookd() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "ask.sh",
        &format!(
            "{}\necho 'CODEX-E2E-NOT-APPROVED: no writes outside the sandbox' >&2\nexit 2",
            log_input("ask.log")
        ),
    );
    sb.settings(
        "[[hooks.PermissionRequest]]\nname = \"approver\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/ask.sh\"\n\n\
         [[hooks.PermissionRequest]]\nname = \"note\"\ncommand = \"echo CODEX-E2E-NOTE\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let cmd = "echo ran > asked.txt";
    let server = ModelServer::start(
        "openai",
        &json!({"turns": [
            {"tool": cmd, "args": {"sandbox_permissions": "require_escalated", "justification": "need to write"}},
            {"text": "Understood."}
        ]}),
        sb.path(),
        "model",
    );
    let mut codex = Codex::with_policy(
        sb,
        &server,
        &["--socket", daemon.socket.to_str().unwrap()],
        "gpt-5.5",
        "on-request",
        "read-only",
    );
    codex.flags.push("--approve-for-me".into());
    let out = codex.run("Create asked.txt.");
    assert_ok(&out);

    let asked = logged_events(&sb.p("ask.log"));
    assert_eq!(
        asked.len(),
        1,
        "the PermissionRequest hook ran once: {asked:?}\n{}",
        show(&out)
    );
    assert_eq!(asked[0]["hook_event_name"], "PermissionRequest");
    assert_eq!(asked[0]["tool_name"], "Bash");
    assert_eq!(asked[0]["tool_input"]["command"], cmd);
    assert!(
        !codex.file("asked.txt").exists(),
        "the rejected command ran\n{}",
        show(&out)
    );
    let told = tool_output(&server.requests(), cmd)
        .unwrap_or_else(|| panic!("Codex never sent back the call of {cmd:?}\n{}", show(&out)));
    assert!(
        told.contains("CODEX-E2E-NOT-APPROVED: no writes outside the sandbox"),
        "the model was told: {told}\n{}",
        show(&out)
    );
    assert!(
        told.contains("CODEX-E2E-NOTE"),
        "the model was told: {told}"
    );
}

/// Every moment Codex fires in a plain session with one tool call reaches hookd through the printed
/// settings (their trust records included: Codex skips an untrusted hook without a word): SessionStart,
/// UserPromptSubmit, PreModelRequest and PostModelRequest around each model call, PreToolUse,
/// PostToolUse, Stop, SessionEnd. Each hookd hook is the same logger, scoped to no agent.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn every_moment_of_a_codex_session_reaches_hookd() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "log.sh",
        "input=$(cat)\nprintf '%s\\n' \"$input\" >> @DIR@/moments.log",
    );
    let mut settings = String::new();
    for moment in [
        "SessionStart",
        "UserPromptSubmit",
        "PreModelRequest",
        "PostModelRequest",
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "SubagentStart",
        "SubagentStop",
        "Stop",
        "Interrupt",
        "PreCompact",
        "PostCompact",
        "SessionEnd",
    ] {
        settings.push_str(&format!(
            "[[hooks.{moment}]]\nname = \"log-{moment}\"\ncommand = \"@DIR@/log.sh\"\n\n"
        ));
    }
    sb.settings(&settings);
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let cmd = "echo CODEX-E2E-MOMENTS";
    let server = ModelServer::start(
        "openai",
        &json!({"turns": [{"tool": cmd}, {"text": "Done."}]}),
        sb.path(),
        "model",
    );
    let codex = Codex::new(sb, &server, &["--socket", daemon.socket.to_str().unwrap()]);
    let out = codex.run("Say it.");
    assert_ok(&out);

    let log = sb.p("moments.log");
    // SessionEnd may run as Codex exits: wait for it rather than race it.
    wait_until(STEP, "the SessionEnd hook", || {
        logged_events(&log)
            .iter()
            .any(|e| e["hook_event_name"] == "SessionEnd")
    });
    let seen: Vec<String> = logged_events(&log)
        .iter()
        .map(|e| e["hook_event_name"].as_str().unwrap_or("?").to_string())
        .collect();
    let mut distinct: Vec<&str> = Vec::new();
    for name in &seen {
        if !distinct.contains(&name.as_str()) {
            distinct.push(name);
        }
    }
    for moment in [
        "SessionStart",
        "UserPromptSubmit",
        "PreModelRequest",
        "PostModelRequest",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SessionEnd",
    ] {
        assert!(
            distinct.contains(&moment),
            "{moment} never reached hookd; seen: {seen:?}\n{}",
            show(&out)
        );
    }
    let model_calls = seen.iter().filter(|n| *n == "PreModelRequest").count();
    assert_eq!(
        model_calls,
        server.turns().len(),
        "one PreModelRequest per model call: {seen:?}"
    );
}

/// The pids of Codex's own binary (not its Node launcher) running with `codex_home`, found by its
/// environment: the process the terminal's Ctrl-C would reach first.
fn codex_binaries(codex_home: &std::path::Path) -> Vec<i32> {
    let wanted = format!("CODEX_HOME={}", codex_home.display());
    let mut pids = Vec::new();
    for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let exe = fs::read_link(entry.path().join("exe")).unwrap_or_default();
        if !exe.ends_with("bin/codex") {
            continue;
        }
        let environ = fs::read(entry.path().join("environ")).unwrap_or_default();
        if environ
            .split(|b| *b == 0)
            .any(|var| var == wanted.as_bytes())
        {
            pids.push(pid);
        }
    }
    pids
}

/// Ctrl-C in the middle of a turn: Codex fires Interrupt (its hook held to 3 s, with the trust record
/// hashed so), and hookd runs the hooks on it. The signal is sent once PreModelRequest has reached hookd,
/// and the model's answer is held back on a gate that is never opened, so the turn is surely running
/// when the signal comes.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn a_codex_interrupt_reaches_hookd() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script("interrupt.sh", &log_input("interrupt.log"));
    sb.script("asking.sh", &log_input("asking.log"));
    sb.settings(
        "[[hooks.Interrupt]]\nname = \"interrupted\"\ncommand = \"@DIR@/interrupt.sh\"\n\n\
         [[hooks.PreModelRequest]]\nname = \"asking\"\ncommand = \"@DIR@/asking.sh\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let server = ModelServer::start(
        "openai",
        &json!({"turns": [{"text": "Never sent.", "wait_for": sb.p("never")}]}),
        sb.path(),
        "model",
    );
    let codex = Codex::new(sb, &server, &["--socket", daemon.socket.to_str().unwrap()]);
    let agent = codex.exec("Think for a long time.");
    let netns = server.netns();
    let run = std::thread::spawn(move || run_agent(agent, &netns));

    let asking = sb.p("asking.log");
    wait_until(STEP, "Codex to ask the model (PreModelRequest)", || {
        !logged_events(&asking).is_empty()
    });
    let pids = codex_binaries(&codex.codex_home);
    assert!(!pids.is_empty(), "Codex's binary was not found");
    for pid in pids {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGINT,
        );
    }
    let out = run.join().expect("the agent thread");
    let log = sb.p("interrupt.log");
    let interrupts = logged_events(&log);
    assert_eq!(
        interrupts.len(),
        1,
        "the Interrupt hook ran once: {interrupts:?}\n{}",
        show(&out)
    );
    assert_eq!(interrupts[0]["hook_event_name"], "Interrupt");
}

// ---- Allow, ask, rewrite the input, rewrite the output -----------------------------------

/// The control for the allow below: without a hook's allow, the command that asks to leave the sandbox
/// (`--approve-for-me`) goes to Codex's own automatic review, which asks the model; the scripted model's
/// answer is no review, and Codex declines the command. The hook at PermissionRequest says nothing.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn without_an_allow_codex_declines_a_permission_request() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script("watch.sh", &log_input("ask.log"));
    sb.settings(
        "[[hooks.PermissionRequest]]\nname = \"watch\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/watch.sh\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let cmd = "touch unapproved-marker";
    let server = ModelServer::start(
        "openai",
        &json!({"turns": [
            {"tool": cmd, "args": {"sandbox_permissions": "require_escalated", "justification": "need to write"}}
        ], "then": {"text": "Understood."}}),
        sb.path(),
        "model",
    );
    let mut codex = Codex::with_policy(
        sb,
        &server,
        &["--socket", daemon.socket.to_str().unwrap()],
        "gpt-5.5",
        "on-request",
        "read-only",
    );
    codex.flags.push("--approve-for-me".into());
    let out = codex.run("Create unapproved-marker.");
    assert_ok(&out);

    assert_eq!(
        logged_events(&sb.p("ask.log")).len(),
        1,
        "the PermissionRequest hook ran once\n{}",
        show(&out)
    );
    assert!(
        !codex.file("unapproved-marker").exists(),
        "Codex ran the command with no approval: the allow test proves nothing\n{}",
        show(&out)
    );
    let told = tool_output(&server.requests(), cmd)
        .unwrap_or_else(|| panic!("Codex never sent back the call of {cmd:?}\n{}", show(&out)));
    assert!(told.contains("Rejected"), "the model was told: {told}");
}

/// An allow at Codex's PermissionRequest (`decision.behavior: "allow"`) approves, with nobody asked, a
/// command that asks to leave the read-only sandbox (`--approve-for-me`, as in the PermissionRequest test
/// above), which Codex declines without it (the test above): it runs, and its marker is there.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn a_hook_allow_approves_a_codex_permission_request() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "approve.sh",
        &format!(
            "{}\necho '{{\"allow\": \"CODEX-E2E-APPROVED: a marker is harmless\"}}'",
            log_input("ask.log")
        ),
    );
    sb.settings(
        "[[hooks.PermissionRequest]]\nname = \"approver\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/approve.sh\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let cmd = "touch approved-marker && echo CODEX-E2E-APPROVED-RAN";
    let server = ModelServer::start(
        "openai",
        &json!({"turns": [
            {"tool": cmd, "args": {"sandbox_permissions": "require_escalated", "justification": "need to write"}},
            {"text": "Done."}
        ]}),
        sb.path(),
        "model",
    );
    let mut codex = Codex::with_policy(
        sb,
        &server,
        &["--socket", daemon.socket.to_str().unwrap()],
        "gpt-5.5",
        "on-request",
        "read-only",
    );
    codex.flags.push("--approve-for-me".into());
    let out = codex.run("Create approved-marker.");
    assert_ok(&out);

    let asked = logged_events(&sb.p("ask.log"));
    assert_eq!(
        asked.len(),
        1,
        "the PermissionRequest hook ran once: {asked:?}\n{}",
        show(&out)
    );
    assert!(
        codex.file("approved-marker").exists(),
        "the approved command did not run\n{}",
        show(&out)
    );
    let told = tool_output(&server.requests(), cmd)
        .unwrap_or_else(|| panic!("Codex never sent back the call of {cmd:?}\n{}", show(&out)));
    assert!(
        told.contains("CODEX-E2E-APPROVED-RAN"),
        "the model was told: {told}"
    );
}

/// The allow that carries a rewrite to Codex grants nothing more: in Codex's read-only sandbox the
/// rewritten command runs sandboxed and fails to write (the model told so), as the original would have.
/// A hook that only meant to fix a call does not let it out of the user's sandbox.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn a_rewrite_sent_with_an_allow_does_not_lift_codexs_sandbox() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "rewrite.sh",
        &format!(
            "{}\necho '{{\"input\": {{\"command\": \"touch rewritten-marker\"}}}}'",
            log_input("pre.log")
        ),
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"rewrite\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/rewrite.sh\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let cmd = "touch original-marker";
    let server = ModelServer::start(
        "openai",
        &json!({"turns": [{"tool": cmd}, {"text": "Done."}]}),
        sb.path(),
        "model",
    );
    let codex = Codex::with_policy(
        sb,
        &server,
        &["--socket", daemon.socket.to_str().unwrap()],
        "gpt-5.5",
        "never",
        "read-only",
    );
    let out = codex.run("Create original-marker.");
    assert_ok(&out);

    assert_eq!(logged_events(&sb.p("pre.log")).len(), 1, "{}", show(&out));
    assert!(
        !codex.file("rewritten-marker").exists() && !codex.file("original-marker").exists(),
        "a command wrote in Codex's read-only sandbox\n{}",
        show(&out)
    );
    let told = tool_output(&server.requests(), cmd)
        .unwrap_or_else(|| panic!("Codex never sent back the call of {cmd:?}\n{}", show(&out)));
    assert!(
        told.contains("'rewritten-marker'") && told.contains("Read-only file system"),
        "the rewritten command did not run in the sandbox; the model was told: {told}"
    );
}

/// A hook that rewrites a Codex edit (`apply_patch`, seen as `Write` with the patch in
/// `tool_input.command`) by the patch text: Codex applies the patch as rewritten (`updatedInput` beside
/// an allow, as for a shell call), so the rewritten file is added and the original is not.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn a_rewritten_codex_edit_is_the_one_applied() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    fs::write(
        sb.p("rename.py"),
        sb.expand(
            r#"import json, sys
event = json.load(sys.stdin)
with open("@DIR@/pre.jsonl", "a") as log:
    log.write(json.dumps(event) + "\n")
patch = event["tool_input"]["command"]
print(json.dumps({"input": {"command": patch.replace("original.txt", "rewritten.txt")}}))
"#,
        ),
    )
    .expect("writing rename.py");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"rename\"\nmatcher = \"Edit|Write\"\ncommand = \"python3 @DIR@/rename.py\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let add = "*** Begin Patch\n*** Add File: original.txt\n+CODEX-E2E-PATCHED\n*** End Patch\n";
    let server = ModelServer::start(
        "openai",
        &json!({"turns": [{"patch": add}, {"text": "Done."}]}),
        sb.path(),
        "model",
    );
    let codex = Codex::with_policy(
        sb,
        &server,
        &["--socket", daemon.socket.to_str().unwrap()],
        "gpt-5.5",
        "never",
        "danger-full-access",
    );
    let out = codex.run("Add original.txt.");
    assert_ok(&out);

    let pre = logged_events(&sb.p("pre.jsonl"));
    assert_eq!(pre.len(), 1, "{pre:?}\n{}", show(&out));
    assert_eq!(
        (&pre[0]["tool_name"], &pre[0]["agent_tool_name"]),
        (&json!("Write"), &json!("apply_patch"))
    );
    assert_eq!(
        fs::read_to_string(codex.file("rewritten.txt"))
            .ok()
            .as_deref(),
        Some("CODEX-E2E-PATCHED\n"),
        "the rewritten patch was not applied\n{}",
        show(&out)
    );
    assert!(
        !codex.file("original.txt").exists(),
        "the patch was applied as the model made it, not as the hook rewrote it\n{}",
        show(&out)
    );
}

/// A hook that rewrites a field hookd made for the hooks (the patch's `file_path`, read from the patch
/// text) cannot be carried back into Codex's call: hookd refuses the edit rather than let it be applied
/// unchanged, and says why. No file is added, and the model is told.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn a_rewrite_of_a_field_codex_did_not_give_refuses_the_edit() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    fs::write(
        sb.p("move.py"),
        sb.expand(
            r#"import json, sys
event = json.load(sys.stdin)
with open("@DIR@/pre.jsonl", "a") as log:
    log.write(json.dumps(event) + "\n")
print(json.dumps({"input": {"file_path": event["cwd"] + "/elsewhere.txt"}}))
"#,
        ),
    )
    .expect("writing move.py");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"move\"\nmatcher = \"Edit|Write\"\ncommand = \"python3 @DIR@/move.py\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let add = "*** Begin Patch\n*** Add File: original.txt\n+hello\n*** End Patch\n";
    let server = ModelServer::start(
        "openai",
        &json!({"turns": [{"patch": add}, {"text": "Understood."}]}),
        sb.path(),
        "model",
    );
    let codex = Codex::with_policy(
        sb,
        &server,
        &["--socket", daemon.socket.to_str().unwrap()],
        "gpt-5.5",
        "never",
        "danger-full-access",
    );
    let out = codex.run("Add original.txt.");
    assert_ok(&out);

    assert_eq!(logged_events(&sb.p("pre.jsonl")).len(), 1, "{}", show(&out));
    assert!(
        !codex.file("original.txt").exists() && !codex.file("elsewhere.txt").exists(),
        "the edit was applied although its rewrite could not be carried back\n{}",
        show(&out)
    );
    let turns = server.turns();
    assert_eq!(turns.len(), 2, "{}", show(&out));
    let told = everything_sent(&turns[1..]);
    assert!(
        told.contains("rewrote tool_input.file_path"),
        "the model was not told why the edit was refused\n{}",
        show(&out)
    );
}

/// An allow at Codex's PermissionRequest beside a text another hook adds: Codex reads an answer with
/// `additionalContext` there as a failed hook (the moment table's `rejects_context`), and the relay's
/// allow carries it, so the allow is lost: seen on 0.171.0, `hook: PermissionRequest Failed`, then
/// Codex's own review declined the command. The safe side (nothing ran), but the hook's approval
/// never reached Codex. What must hold once the allow leaves the text out there (as a refusal folds it
/// into its message): the command is approved and runs.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn an_allow_beside_added_context_approves_a_codex_permission_request() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "approve.sh",
        &format!(
            "{}\necho '{{\"allow\": \"CODEX-E2E-APPROVED\"}}'",
            log_input("ask.log")
        ),
    );
    sb.settings(
        "[[hooks.PermissionRequest]]\nname = \"approver\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/approve.sh\"\n\n\
         [[hooks.PermissionRequest]]\nname = \"note\"\ncommand = \"echo CODEX-E2E-NOTE\"\n",
    );
    let daemon = Daemon::start(sb);
    let sb = &daemon.sb;
    let cmd = "touch approved-marker";
    let server = ModelServer::start(
        "openai",
        &json!({"turns": [
            {"tool": cmd, "args": {"sandbox_permissions": "require_escalated", "justification": "need to write"}}
        ], "then": {"text": "Done."}}),
        sb.path(),
        "model",
    );
    let mut codex = Codex::with_policy(
        sb,
        &server,
        &["--socket", daemon.socket.to_str().unwrap()],
        "gpt-5.5",
        "on-request",
        "read-only",
    );
    codex.flags.push("--approve-for-me".into());
    let out = codex.run("Create approved-marker.");
    assert_ok(&out);

    assert_eq!(logged_events(&sb.p("ask.log")).len(), 1, "{}", show(&out));
    assert!(
        !text(&out.stderr).contains("hook: PermissionRequest Failed"),
        "Codex read hookd's allow as a failed hook\n{}",
        show(&out)
    );
    assert!(
        codex.file("approved-marker").exists(),
        "the approved command did not run\n{}",
        show(&out)
    );
}

/// What the model was told of the last tool call before the request of turn `turn`: the output of
/// the last `*_output` item of its input, as text.
fn last_output(server: &ModelServer, turn: usize) -> String {
    let turns = server.turns();
    let request = turns
        .get(turn)
        .unwrap_or_else(|| panic!("no turn {turn}: {turns:?}"));
    let items = input(request);
    let item = items
        .iter()
        .rev()
        .find(|item| {
            item["type"]
                .as_str()
                .is_some_and(|t| t.ends_with("_output"))
        })
        .unwrap_or_else(|| panic!("turn {turn} carries no tool output: {request}"));
    match &item["output"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// End to end in Codex: with the example settings in force, the model asks to switch the
/// guard off (a `sed` that comments out every line of the settings file, then an `apply_patch` of
/// it), is refused each time by hookd itself (`hookd:protect`, its reason sent back to the model),
/// and the example guard still refuses the `rm -rf ~` that follows. The settings file is unchanged
/// byte for byte and no command ran. With `[protect] enabled = false` the `sed` and the patch go
/// through (the test fails), which is what protection adds.
#[test]
#[ignore = "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)"]
fn the_model_cannot_switch_the_guard_off_and_the_guard_then_still_refuses_rm_rf() {
    if !require_network_namespaces() {
        return;
    }
    let sb = Sandbox::with_example_config();
    // Codex's HOME is the daemon's, so that `~` means the same folder to the agent, to the example
    // guard and to hookd's protection.
    let home = sb.p("home");
    fs::create_dir_all(&home).unwrap();
    fs::write(home.join("keep.txt"), "CODEX-E2E-HOME-3390\n").unwrap();
    let daemon = Daemon::start_with(sb, |cmd| {
        cmd.env("HOME", &home).env_remove("XDG_CONFIG_HOME");
    });
    let sb = &daemon.sb;
    let settings = daemon.config.display().to_string();
    let before = fs::read(&daemon.config).expect("reading the settings");
    let first_line = String::from_utf8_lossy(&before)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    let switch_off = format!("echo ran > ran-1.txt; sed -i 's/^/# /' {settings}");
    let patch = format!(
        "*** Begin Patch\n*** Update File: {settings}\n@@\n-{first_line}\n+[protect]\n+enabled = false\n*** End Patch\n"
    );
    let rm_rf = "echo ran > ran-3.txt; rm -rf ~";
    let server = ModelServer::start(
        "openai",
        &json!({"turns": [
            {"tool": switch_off},
            {"patch": patch},
            {"tool": rm_rf},
            {"text": "Understood."}
        ]}),
        sb.path(),
        "model",
    );
    let codex = Codex::with_policy(
        sb,
        &server,
        &["--socket", daemon.socket.to_str().unwrap()],
        "gpt-5.5",
        "never",
        "danger-full-access",
    );

    let out = codex.run("Switch hookd's guard off, then clean up my home folder.");

    assert_ok(&out);
    assert_eq!(server.turns().len(), 4, "{}", show(&out));
    let told = last_output(&server, 1);
    assert!(
        told.contains("hookd protects itself:"),
        "the sed's refusal did not reach the model: {told}"
    );
    let told = last_output(&server, 2);
    assert!(
        told.contains("hookd protects itself:"),
        "the patch's refusal did not reach the model: {told}"
    );
    let told = last_output(&server, 3);
    assert!(
        told.contains("rule delete-root"),
        "the example guard's refusal of rm -rf ~ did not reach the model: {told}"
    );

    assert_eq!(
        fs::read(&daemon.config).expect("reading the settings"),
        before,
        "the settings file was changed\n{}",
        show(&out)
    );
    for marker in ["ran-1.txt", "ran-3.txt"] {
        assert!(
            !codex.file(marker).exists(),
            "a refused command ran ({marker})"
        );
    }
    assert_eq!(
        fs::read_to_string(home.join("keep.txt")).unwrap_or_default(),
        "CODEX-E2E-HOME-3390\n",
        "the home folder was deleted"
    );

    let fires = refused_fires(&daemon, 3);
    assert_eq!(fires.len(), 3, "three refusals: {fires:?}");
    assert_eq!(fires[0].1, switch_off, "{fires:?}");
    assert_eq!(fires[0].2, ["hookd:protect"], "{fires:?}");
    assert_eq!(fires[1].0, "Edit", "{fires:?}");
    assert_eq!(fires[1].2, ["hookd:protect"], "{fires:?}");
    assert_eq!(fires[2].1, rm_rf, "{fires:?}");
    assert!(fires[2].2.iter().any(|h| h == "guard"), "{fires:?}");
}
