//! `hookd relay` end to end (contract section 12): the agents' real hook inputs (the captures in
//! `tests/fixtures/agents/`, and variants derived from them) go through the real relay to a real daemon
//! with real shell hooks, and what the relay prints and how it exits is compared with the dialect table.
//! Also: Gemini CLI's names mapped to Claude Code's, `agents` scoping, fail-open and `--fail-closed`
//! when the daemon is down, silent or fed garbage, and `hello` / `check` knowing which moments each agent
//! fires. And events the model shapes, each decided: up to 64 MiB given whole to the hooks,
//! past that or 10,000 levels deep decided as failures of their hooks, lone surrogates read as U+FFFD;
//! an event of another agent, or misspelt, said on stderr and refused with `--fail-closed`.
//!
//! The expected answers are written here from the contract's table, independently of `src/relay.rs`.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::time::Duration;

use crate::common::*;
use serde_json::{Map, Value, json};

/// A safety net for one relay run (never a speed assertion).
const T: Duration = Duration::from_secs(20);

// ---- helpers --------------------------------------------------------------------------------------

/// `base` with the given fields set (a derived variant of a real input).
fn with(base: &Value, fields: Value) -> Value {
    let mut v = base.clone();
    for (k, f) in fields.as_object().expect("fields object") {
        v[k] = f.clone();
    }
    v
}

/// `base` without the given fields.
fn without(base: &Value, fields: &[&str]) -> Value {
    let mut v = base.clone();
    for f in fields {
        v.as_object_mut().unwrap().remove(*f);
    }
    v
}

/// What the relay printed and how it exited.
#[derive(Debug)]
struct Answer {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Answer {
    /// stdout parsed as one JSON value; None when stdout is empty.
    fn json(&self) -> Option<Value> {
        if self.stdout.is_empty() {
            return None;
        }
        assert!(
            self.stdout.ends_with('\n') && self.stdout.trim_end().lines().count() == 1,
            "stdout is not one line: {self:?}"
        );
        Some(
            serde_json::from_str(self.stdout.trim_end())
                .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:?}")),
        )
    }

    /// Exit 0, nothing on stdout, exactly one line on stderr: fail-open.
    fn assert_fail_open(&self, what: &str) {
        assert_eq!(self.code, 0, "{what}: fail-open exits 0: {self:?}");
        assert_eq!(
            self.stdout, "",
            "{what}: fail-open prints nothing: {self:?}"
        );
        assert!(
            self.stderr.ends_with('\n') && self.stderr.lines().count() == 1,
            "{what}: fail-open says exactly one line on stderr: {self:?}"
        );
        assert!(!self.stderr.trim().is_empty(), "{what}: {self:?}");
    }

    /// Exit 0, no output at all.
    fn assert_silent(&self, what: &str) {
        assert_eq!(
            (self.code, self.stdout.as_str(), self.stderr.as_str()),
            (0, "", ""),
            "{what}: expected exit 0 and no output: {self:?}"
        );
    }
}

/// Runs `hookd relay --socket SOCKET ARGS` with `input` on stdin.
fn relay(socket: &Path, args: &[&str], input: &str) -> Answer {
    let mut all = vec!["relay", "--socket", socket.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = run_hookd(&all, Some(input), T);
    Answer {
        code: code(&out.status),
        stdout: text(&out.stdout),
        stderr: text(&out.stderr),
    }
}

/// Runs the relay as `agent` with `event` (serialized as the agent would: one JSON document).
fn relay_event(socket: &Path, agent: &str, extra: &[&str], event: &Value) -> Answer {
    let mut args = vec!["--agent", agent];
    args.extend_from_slice(extra);
    relay(socket, &args, &serde_json::to_string_pretty(event).unwrap())
}

/// Gemini CLI's event names and hookd's moments (contract 12).
const GEMINI_MOMENTS: &[(&str, &str)] = &[
    ("BeforeTool", "PreToolUse"),
    ("AfterTool", "PostToolUse"),
    ("BeforeAgent", "UserPromptSubmit"),
    ("AfterAgent", "Stop"),
    ("PreCompress", "PreCompact"),
    ("SessionStart", "SessionStart"),
    ("SessionEnd", "SessionEnd"),
    ("Notification", "Notification"),
];

/// The moments a daemon knows without a `moments = [...]` declaration (contract 4).
const KNOWN_MOMENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
];

/// The moment an agent's `hook_event_name` is, or None when the daemon does not know it.
fn moment_of(agent: &str, event_name: &str) -> Option<&'static str> {
    let name = if agent == "gemini-cli" {
        GEMINI_MOMENTS
            .iter()
            .find(|(g, _)| *g == event_name)
            .map_or(event_name, |(_, m)| m)
    } else {
        event_name
    };
    KNOWN_MOMENTS.iter().copied().find(|m| *m == name)
}

/// What the agent must be given: stdout (parsed), stderr (trimmed) and the exit status.
#[derive(Debug, PartialEq)]
struct Expect {
    stdout: Option<Value>,
    stderr: Option<String>,
    code: i32,
}

/// The dialect table of contract 12, for a verdict: `refusal` is the reason when refused.
fn expected(
    agent: &str,
    event_name: &str,
    moment: &str,
    refusal: Option<&str>,
    adds: &[String],
) -> Expect {
    let json_out = |v: Value| Expect {
        stdout: Some(v),
        stderr: None,
        code: 0,
    };
    let context = (!adds.is_empty()).then(|| adds.join("\n\n"));
    let gemini = agent == "gemini-cli";
    // Answered as a Stop: `decision` with the adds after the reason; adds alone to the user. PreCompact
    // too: Claude Code's schema has no hookSpecificOutput for it, and an answer naming
    // one is read as plain text, its refusal lost.
    let stop = moment == "Stop" || moment == "SubagentStop" || moment == "PreCompact";
    // hookSpecificOutput: hookEventName (the agent's own name), the given fields, and the adds.
    let specific = |fields: Value| {
        let mut m: Map<String, Value> = fields.as_object().cloned().unwrap_or_default();
        m.insert("hookEventName".into(), json!(event_name));
        if let Some(c) = &context {
            m.insert("additionalContext".into(), json!(c));
        }
        Value::Object(m)
    };
    let Some(reason) = refusal else {
        let context = context
            .as_ref()
            .filter(|_| !(agent == "codex" && moment == "PermissionRequest"));
        return match context {
            None => Expect {
                stdout: None,
                stderr: None,
                code: 0,
            },
            Some(c) if stop => json_out(json!({"systemMessage": c})),
            Some(_) => json_out(json!({"hookSpecificOutput": specific(json!({}))})),
        };
    };
    // Gemini CLI and Qwen Code ignore a refusal at these (agents.md, and Qwen Code 0.24.4's package):
    // the answer says it goes on.
    let (advisory, shown): (&[&str], &str) = match agent {
        "gemini-cli" => (
            &["SessionStart", "PreCompact", "Notification", "SessionEnd"],
            "Gemini CLI",
        ),
        // Claude Code 2.1.332 only shows a refusal to the user at these (its own code).
        "claude-code" => (
            &[
                "SessionStart",
                "Notification",
                "SubagentStart",
                "PostCompact",
                "SessionEnd",
            ],
            "Claude Code",
        ),
        "qwen-code" => (
            &[
                "SessionStart",
                "PostToolUse",
                "PostToolUseFailure",
                "Notification",
                "SubagentStart",
                "PreCompact",
                "PostCompact",
                "SessionEnd",
            ],
            "Qwen Code",
        ),
        _ => (&[], ""),
    };
    if advisory.contains(&moment) {
        let said = format!(
            "{reason} (a refusal at {event_name}, where {shown} only takes advice: it goes on)"
        );
        let mut out = json!({"systemMessage": said});
        if let Some(c) = &context {
            out["hookSpecificOutput"] =
                json!({"hookEventName": event_name, "additionalContext": c});
        }
        return Expect {
            stdout: Some(out),
            stderr: Some(format!("hookd relay: {said}")),
            code: 0,
        };
    }
    if stop {
        let reason = match &context {
            Some(c) => format!("{reason}\n\n{c}"),
            None => reason.to_string(),
        };
        let decision = if gemini { "deny" } else { "block" };
        return json_out(json!({"decision": decision, "reason": reason}));
    }
    let block_moments = ["UserPromptSubmit", "PostToolUse", "PostToolUseFailure"];
    let with_adds = |mut v: Value| {
        if context.is_some() {
            v["hookSpecificOutput"] = specific(json!({}));
        }
        v
    };
    match moment {
        "PreToolUse" | "PermissionRequest" if gemini => {
            json_out(with_adds(json!({"decision": "deny", "reason": reason})))
        }
        "PreToolUse" => json_out(json!({"hookSpecificOutput": specific(json!({
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }))})),
        // Codex reads an answer with additionalContext there as a failed hook: what hooks add follows
        // the message instead, and is left out without a refusal (above).
        "PermissionRequest" if agent == "codex" => {
            let message = match &context {
                Some(c) => format!("{reason}\n\n{c}"),
                None => reason.to_string(),
            };
            json_out(json!({"hookSpecificOutput": {
                "hookEventName": event_name,
                "decision": {"behavior": "deny", "message": message},
            }}))
        }
        "PermissionRequest" => json_out(json!({"hookSpecificOutput": specific(json!({
            "decision": {"behavior": "deny", "message": reason},
        }))})),
        m if block_moments.contains(&m) => {
            let decision = if gemini { "deny" } else { "block" };
            json_out(with_adds(json!({"decision": decision, "reason": reason})))
        }
        _ => Expect {
            stdout: None,
            stderr: Some(reason.to_string()),
            code: 2,
        },
    }
}

/// Compares what the relay did with what the table says.
fn assert_answer(got: &Answer, want: &Expect, what: &str) {
    let actual = Expect {
        stdout: got.json(),
        stderr: Some(got.stderr.trim_end().to_string()).filter(|s| !s.is_empty()),
        code: got.code,
    };
    assert_eq!(actual, *want, "{what}: raw answer {got:?}");
    if let Some(err) = &want.stderr {
        assert_eq!(got.stderr, format!("{err}\n"), "{what}: stderr exactly");
    }
}

// ---- the dialect table, with every captured input -------------------------------------------------

/// The moments the dialect daemons hang hooks on.
const HOOKED: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
];

/// What the dialect daemon's hooks say, on every moment.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Says {
    Refuse,
    Add,
    RefuseAndAdd,
    Nothing,
}

impl Says {
    fn refuses(self) -> bool {
        matches!(self, Says::Refuse | Says::RefuseAndAdd)
    }
    fn adds(self) -> bool {
        matches!(self, Says::Add | Says::RefuseAndAdd)
    }
}

/// A daemon whose hooks, on every moment in `HOOKED`, refuse (naming the moment and agent they saw), add
/// two texts (the first naming the moment, the second on two lines), or say nothing.
fn dialect_daemon(says: Says) -> Daemon {
    let sb = Sandbox::new();
    sb.script(
        "refuse.sh",
        "cat > /dev/null\necho \"no: $HOOKD_MOMENT for $HOOKD_AGENT\" >&2\nexit 2",
    );
    sb.script("add1.sh", "echo \"T1 at $HOOKD_MOMENT\"");
    sb.script("add2.sh", "printf 'T2\\nsecond line\\n'");
    sb.script("quiet.sh", "cat > /dev/null\nexit 0");
    let mut toml = String::new();
    for m in HOOKED {
        let mut hook = |name: &str, script: &str| {
            toml.push_str(&format!(
                "[[hooks.{m}]]\nname = \"{name}-{m}\"\ncommand = \"@DIR@/{script}\"\n\n"
            ));
        };
        if says.refuses() {
            hook("refuse", "refuse.sh");
        }
        if says.adds() {
            hook("add1", "add1.sh");
            hook("add2", "add2.sh");
        }
        if says == Says::Nothing {
            hook("quiet", "quiet.sh");
        }
    }
    sb.settings(&toml);
    Daemon::start(sb)
}

/// The inputs fed as `agent`: every real capture, plus variants derived from them.
fn inputs(agent: &str) -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents")
        .join(agent);
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("listing {dir:?}: {e}"))
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "fixtures missing in {dir:?}: {files:?}");
    let mut all: Vec<(String, Value)> = files
        .iter()
        .map(|f| (format!("{agent}/{f}"), fixture_json(agent, f)))
        .collect();
    let rm = |base: &Value| {
        let mut v = base.clone();
        // Not `rm -rf /`, which hookd's guard of itself refuses whatever the hooks say (it would delete
        // the settings): what the hooks say is what these rows are of.
        v["tool_input"]["command"] = json!("rm -rf /scratch/build");
        v
    };
    match agent {
        "gemini-cli" => {
            let before_tool = fixture_json(agent, "BeforeTool.json");
            let after_agent = fixture_json(agent, "AfterAgent.json");
            all.push(("BeforeTool rm -rf /".into(), rm(&before_tool)));
            all.push((
                "AfterAgent stop_hook_active".into(),
                with(&after_agent, json!({"stop_hook_active": true})),
            ));
            all.push((
                "Notification (derived)".into(),
                with(
                    &without(&after_agent, &["prompt", "prompt_response", "stop_hook_active"]),
                    json!({"hook_event_name": "Notification", "notification_type": "ToolPermission", "message": "needs approval"}),
                ),
            ));
        }
        _ => {
            let pre = fixture_json(agent, "PreToolUse-1.json");
            let post = fixture_json(agent, "PostToolUse-1.json");
            let stop = fixture_json(agent, "Stop-1.json");
            let start = fixture_json(agent, "SessionStart-1.json");
            all.push(("PreToolUse rm -rf /".into(), rm(&pre)));
            all.push((
                "Stop stop_hook_active".into(),
                with(&stop, json!({"stop_hook_active": true})),
            ));
            all.push((
                "PermissionRequest (derived)".into(),
                with(
                    &without(&pre, &["tool_use_id"]),
                    json!({"hook_event_name": "PermissionRequest"}),
                ),
            ));
            all.push((
                "PostToolUseFailure (derived)".into(),
                with(
                    &without(&post, &["tool_response"]),
                    json!({"hook_event_name": "PostToolUseFailure", "error": "exit status 1"}),
                ),
            ));
            all.push((
                "SubagentStop (derived)".into(),
                with(
                    &stop,
                    json!({"hook_event_name": "SubagentStop", "agent_type": "general-purpose"}),
                ),
            ));
            all.push((
                "PreCompact (derived)".into(),
                with(
                    &start,
                    json!({"hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}),
                ),
            ));
            all.push((
                "Notification (derived)".into(),
                with(
                    &start,
                    json!({"hook_event_name": "Notification", "notification_type": "idle_prompt", "message": "waiting"}),
                ),
            ));
        }
    }
    all
}

/// Feeds every input of `agent` through the relay to a daemon whose hooks say `says`, and checks each
/// answer against the table.
fn dialect(agent: &str, says: Says) {
    let d = dialect_daemon(says);
    for (what, event) in inputs(agent) {
        let event_name = event["hook_event_name"].as_str().unwrap().to_string();
        let what = format!("{agent} {says:?} {what} ({event_name})");
        let got = relay_event(&d.socket, agent, &[], &event);
        let Some(moment) = moment_of(agent, &event_name) else {
            // A moment the daemon does not know: nothing to say, whatever the hooks would have said.
            got.assert_silent(&what);
            continue;
        };
        let reason = format!("no: {moment} for {agent}");
        let adds: Vec<String> = if says.adds() {
            vec![format!("T1 at {moment}"), "T2\nsecond line".into()]
        } else {
            Vec::new()
        };
        let want = expected(
            agent,
            &event_name,
            moment,
            says.refuses().then_some(reason.as_str()),
            &adds,
        );
        assert_answer(&got, &want, &what);
    }
}

#[test]
fn claude_code_refused() {
    dialect("claude-code", Says::Refuse);
}

#[test]
fn claude_code_adds() {
    dialect("claude-code", Says::Add);
}

#[test]
fn claude_code_refused_with_adds() {
    dialect("claude-code", Says::RefuseAndAdd);
}

#[test]
fn claude_code_nothing() {
    dialect("claude-code", Says::Nothing);
}

#[test]
fn codex_refused() {
    dialect("codex", Says::Refuse);
}

#[test]
fn codex_adds() {
    dialect("codex", Says::Add);
}

#[test]
fn codex_refused_with_adds() {
    dialect("codex", Says::RefuseAndAdd);
}

#[test]
fn codex_nothing() {
    dialect("codex", Says::Nothing);
}

#[test]
fn gemini_refused() {
    dialect("gemini-cli", Says::Refuse);
}

#[test]
fn gemini_adds() {
    dialect("gemini-cli", Says::Add);
}

#[test]
fn gemini_refused_with_adds() {
    dialect("gemini-cli", Says::RefuseAndAdd);
}

#[test]
fn gemini_nothing() {
    dialect("gemini-cli", Says::Nothing);
}

// Qwen Code reads Claude Code's answers, under Claude Code's event names; its inputs include the second
// UserPromptSubmit of a turn, with an empty prompt.

#[test]
fn qwen_code_refused() {
    dialect("qwen-code", Says::Refuse);
}

#[test]
fn qwen_code_adds() {
    dialect("qwen-code", Says::Add);
}

#[test]
fn qwen_code_refused_with_adds() {
    dialect("qwen-code", Says::RefuseAndAdd);
}

#[test]
fn qwen_code_nothing() {
    dialect("qwen-code", Says::Nothing);
}

/// The table itself, spelled out for the rows the brief names (so that a wrong `expected` cannot hide a
/// wrong relay): literal answers for a few real inputs.
#[test]
fn literal_answers_for_real_inputs() {
    let d = dialect_daemon(Says::RefuseAndAdd);
    let s = &d.socket;

    let got = relay_event(
        s,
        "claude-code",
        &[],
        &fixture_json("claude-code", "PreToolUse-1.json"),
    );
    assert_eq!(got.code, 0, "{got:?}");
    assert_eq!(got.stderr, "", "{got:?}");
    assert_eq!(
        got.json().unwrap(),
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no: PreToolUse for claude-code",
            "additionalContext": "T1 at PreToolUse\n\nT2\nsecond line",
        }})
    );

    let got = relay_event(s, "codex", &[], &fixture_json("codex", "Stop-1.json"));
    assert_eq!((got.code, got.stderr.as_str()), (0, ""), "{got:?}");
    assert_eq!(
        got.json().unwrap(),
        json!({"decision": "block", "reason": "no: Stop for codex\n\nT1 at Stop\n\nT2\nsecond line"})
    );

    let got = relay_event(
        s,
        "gemini-cli",
        &[],
        &fixture_json("gemini-cli", "BeforeAgent.json"),
    );
    assert_eq!((got.code, got.stderr.as_str()), (0, ""), "{got:?}");
    assert_eq!(
        got.json().unwrap(),
        json!({"decision": "deny", "reason": "no: UserPromptSubmit for gemini-cli",
               "hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "T1 at UserPromptSubmit\n\nT2\nsecond line"}})
    );

    let got = relay_event(
        s,
        "gemini-cli",
        &[],
        &fixture_json("gemini-cli", "AfterAgent.json"),
    );
    assert_eq!(
        got.json().unwrap(),
        json!({"decision": "deny", "reason": "no: Stop for gemini-cli\n\nT1 at Stop\n\nT2\nsecond line"}),
        "{got:?}"
    );

    let got = relay_event(
        s,
        "claude-code",
        &[],
        &fixture_json("claude-code", "SessionStart-1.json"),
    );
    // Claude Code only shows a refusal at SessionStart to the user: said as advice.
    let said = "no: SessionStart for claude-code (a refusal at SessionStart, where Claude Code only takes advice: it goes on)";
    assert_eq!(
        (got.code, got.stderr.as_str()),
        (0, format!("hookd relay: {said}\n").as_str()),
        "{got:?}"
    );
    assert_eq!(
        got.json().unwrap(),
        json!({"systemMessage": said, "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "T1 at SessionStart\n\nT2\nsecond line"}})
    );

    let d = dialect_daemon(Says::Add);
    let got = relay_event(
        &d.socket,
        "claude-code",
        &[],
        &fixture_json("claude-code", "Stop-2.json"),
    );
    assert_eq!(
        got.json().unwrap(),
        json!({"systemMessage": "T1 at Stop\n\nT2\nsecond line"}),
        "{got:?}"
    );
    let got = relay_event(
        &d.socket,
        "gemini-cli",
        &[],
        &fixture_json("gemini-cli", "SessionStart.json"),
    );
    assert_eq!(
        got.json().unwrap(),
        json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "T1 at SessionStart\n\nT2\nsecond line"}}),
        "{got:?}"
    );
}

// ---- a real policy: rm -rf refused, the rest let through ------------------------------------------

#[test]
fn deny_rm_refuses_rm_rf_and_lets_harmless_commands_through_for_every_agent() {
    let sb = Sandbox::new();
    sb.script(
        "deny-rm.sh",
        "if grep -q 'rm -rf'; then echo 'rm -rf is not allowed' >&2; exit 2; fi\nexit 0",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"deny-rm\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/deny-rm.sh\"\n",
    );
    let d = Daemon::start(sb);
    let cases = [
        (
            "claude-code",
            fixture_json("claude-code", "PreToolUse-1.json"),
        ),
        ("codex", fixture_json("codex", "PreToolUse-1.json")),
        ("gemini-cli", fixture_json("gemini-cli", "BeforeTool.json")),
        ("qwen-code", fixture_json("qwen-code", "PreToolUse-1.json")),
    ];
    for (agent, harmless) in cases {
        let got = relay_event(&d.socket, agent, &[], &harmless);
        got.assert_silent(&format!("{agent}: a harmless command"));

        let mut rm = harmless.clone();
        rm["tool_input"]["command"] = json!("rm -rf /");
        let got = relay_event(&d.socket, agent, &[], &rm);
        let want = if agent == "gemini-cli" {
            json!({"decision": "deny", "reason": "rm -rf is not allowed"})
        } else {
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "rm -rf is not allowed"}})
        };
        assert_eq!((got.code, got.stderr.as_str()), (0, ""), "{agent}: {got:?}");
        assert_eq!(got.json(), Some(want), "{agent}: {got:?}");
    }
}

// ---- Gemini's names, agents scoping -----------------------------------------------------------------

#[test]
fn gemini_tools_reach_hooks_with_claude_names_and_both_matchers_fire() {
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"bash\"\nmatcher = \"Bash\"\ncommand = \"cat > @DIR@/bash-seen.json\"\n\n\
         [[hooks.PreToolUse]]\nname = \"gemini-name\"\nmatcher = \"run_shell_command\"\ncommand = \"cat > @DIR@/gemini-seen.json\"\n\n\
         [[hooks.PreToolUse]]\nname = \"read\"\nmatcher = \"Read\"\ncommand = \"cat > @DIR@/read-seen.json\"\n\n\
         [[hooks.PostToolUse]]\nname = \"after-bash\"\nmatcher = \"Bash\"\ncommand = \"cat > @DIR@/after-seen.json\"\n",
    );
    let d = Daemon::start(sb);
    let seen = |name: &str| -> Option<Value> {
        let text = std::fs::read_to_string(d.sb.p(name)).ok()?;
        Some(
            serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{name}: not JSON ({e}): {text:?}")),
        )
    };

    let before = fixture_json("gemini-cli", "BeforeTool.json");
    relay_event(&d.socket, "gemini-cli", &[], &before).assert_silent("gemini BeforeTool");
    let bash = seen("bash-seen.json").expect("matcher \"Bash\" did not fire for run_shell_command");
    assert_eq!(bash["tool_name"], "Bash", "{bash}");
    assert_eq!(bash["agent_tool_name"], "run_shell_command", "{bash}");
    assert_eq!(bash["hook_event_name"], "PreToolUse", "{bash}");
    assert_eq!(bash["tool_input"], before["tool_input"], "{bash}");
    assert_eq!(bash["session_id"], before["session_id"], "{bash}");
    let gemini = seen("gemini-seen.json")
        .expect("matcher \"run_shell_command\" did not fire for Gemini's own tool name");
    assert_eq!(gemini, bash, "both hooks see the same event");
    assert!(
        seen("read-seen.json").is_none(),
        "matcher \"Read\" fired for a shell command"
    );

    relay_event(
        &d.socket,
        "gemini-cli",
        &[],
        &fixture_json("gemini-cli", "AfterTool.json"),
    )
    .assert_silent("gemini AfterTool");
    let after = seen("after-seen.json").expect("PostToolUse Bash did not fire for AfterTool");
    assert_eq!(after["hook_event_name"], "PostToolUse", "{after}");
    assert_eq!(after["tool_name"], "Bash", "{after}");
    assert_eq!(after["agent_tool_name"], "run_shell_command", "{after}");

    // Claude Code's input is passed through as it is: no agent_tool_name, and the Gemini name's matcher
    // does not fit a Bash call.
    std::fs::remove_file(d.sb.p("bash-seen.json")).unwrap();
    std::fs::remove_file(d.sb.p("gemini-seen.json")).unwrap();
    relay_event(
        &d.socket,
        "claude-code",
        &[],
        &fixture_json("claude-code", "PreToolUse-1.json"),
    )
    .assert_silent("claude PreToolUse");
    let bash = seen("bash-seen.json").expect("matcher \"Bash\" did not fire for claude-code");
    assert_eq!(bash["tool_name"], "Bash", "{bash}");
    assert!(bash.get("agent_tool_name").is_none(), "{bash}");
    assert!(
        seen("gemini-seen.json").is_none(),
        "matcher \"run_shell_command\" fired for Claude Code's Bash"
    );
}

/// Gemini CLI's MCP tools (`mcp_<server>_<tool>`, a real capture) are seen as Claude Code's
/// `mcp__<server>__<tool>`: a `mcp__.*` or `mcp__echo__.*` matcher fires, refuses, and Gemini CLI is
/// told so; a matcher for another server does not fire. (With the real agent and a scripted MCP server:
/// e2e_gemini_cli.rs.)
#[test]
fn gemini_mcp_tools_are_seen_with_claude_names_and_mcp_matchers_fire() {
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"all-mcp\"\nmatcher = \"mcp__.*\"\ncommand = \"cat > @DIR@/all-seen.json\"\n\n\
         [[hooks.PreToolUse]]\nname = \"echo-server\"\nmatcher = \"mcp__echo__.*\"\ncommand = \"cat > /dev/null; echo no echo tools >&2; exit 2\"\n\n\
         [[hooks.PreToolUse]]\nname = \"github-server\"\nmatcher = \"mcp__github__.*\"\ncommand = \"cat > /dev/null; touch @DIR@/github-fired\"\n\n\
         [[hooks.PostToolUse]]\nname = \"after-mcp\"\nmatcher = \"mcp__echo__echo_text\"\ncommand = \"cat > @DIR@/after-seen.json\"\n",
    );
    let d = Daemon::start(sb);
    let seen = |name: &str| -> Value {
        let text = std::fs::read_to_string(d.sb.p(name))
            .unwrap_or_else(|e| panic!("{name} was not written: the matcher did not fire ({e})"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: not JSON ({e}): {text:?}"))
    };
    let before = fixture_json("gemini-cli", "mcp-BeforeTool-1.json");
    assert_eq!(before["tool_name"], "mcp_echo_echo_text");
    let got = relay_event(&d.socket, "gemini-cli", &[], &before);
    assert_eq!(
        (got.code, got.json()),
        (
            0,
            Some(json!({"decision": "deny", "reason": "no echo tools"}))
        ),
        "{got:?}"
    );
    let all = seen("all-seen.json");
    assert_eq!(all["tool_name"], "mcp__echo__echo_text", "{all}");
    assert_eq!(all["agent_tool_name"], "mcp_echo_echo_text", "{all}");
    assert_eq!(all["mcp_context"], before["mcp_context"], "{all}");
    assert!(
        !d.sb.p("github-fired").exists(),
        "a matcher for another server fired"
    );
    relay_event(
        &d.socket,
        "gemini-cli",
        &[],
        &fixture_json("gemini-cli", "mcp-AfterTool-1.json"),
    )
    .assert_silent("gemini MCP AfterTool");
    let after = seen("after-seen.json");
    assert_eq!(after["hook_event_name"], "PostToolUse", "{after}");
    assert_eq!(after["tool_name"], "mcp__echo__echo_text", "{after}");
}

#[test]
fn hooks_scoped_to_codex_fire_only_through_agent_codex() {
    let sb = Sandbox::new();
    sb.script(
        "codex-only.sh",
        "echo \"codex only (agent $HOOKD_AGENT)\" >&2\nexit 2",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"codex-only\"\nagents = [\"codex\"]\ncommand = \"@DIR@/codex-only.sh\"\n",
    );
    let d = Daemon::start(sb);
    let got = relay_event(
        &d.socket,
        "codex",
        &[],
        &fixture_json("codex", "PreToolUse-1.json"),
    );
    assert_eq!((got.code, got.stderr.as_str()), (0, ""), "{got:?}");
    assert_eq!(
        got.json(),
        Some(
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "codex only (agent codex)"}})
        ),
        "{got:?}"
    );
    // The same input, said to come from Claude Code: the hook is not codex's to run.
    relay_event(
        &d.socket,
        "claude-code",
        &[],
        &fixture_json("codex", "PreToolUse-1.json"),
    )
    .assert_silent("codex-scoped hook through --agent claude-code");
    relay_event(
        &d.socket,
        "claude-code",
        &[],
        &fixture_json("claude-code", "PreToolUse-1.json"),
    )
    .assert_silent("codex-scoped hook, claude input");
    relay_event(
        &d.socket,
        "gemini-cli",
        &[],
        &fixture_json("gemini-cli", "BeforeTool.json"),
    )
    .assert_silent("codex-scoped hook through --agent gemini-cli");
    // Without --agent the relay speaks for claude-code.
    relay(
        &d.socket,
        &[],
        &fixture_json("codex", "PreToolUse-1.json").to_string(),
    )
    .assert_silent("codex-scoped hook, default agent");
}

// ---- when the daemon cannot answer ------------------------------------------------------------------

#[test]
fn daemon_not_running_fails_open_or_closed() {
    let sb = Sandbox::new();
    // A socket path with nothing there (its folder does not even exist).
    let socket = sb.p("nothing/hookd.sock");
    for (agent, file) in [
        ("claude-code", "PreToolUse-1.json"),
        ("codex", "PreToolUse-1.json"),
        ("gemini-cli", "BeforeTool.json"),
        ("claude-code", "SessionStart-1.json"),
        ("gemini-cli", "AfterAgent.json"),
    ] {
        let event = fixture_json(agent, file);
        let what = format!("{agent} {file}, daemon down");
        relay_event(&socket, agent, &[], &event).assert_fail_open(&what);

        let got = relay_event(&socket, agent, &["--fail-closed"], &event);
        let event_name = event["hook_event_name"].as_str().unwrap();
        let moment = moment_of(agent, event_name).unwrap();
        if moment == "Stop" || moment == "SessionEnd" {
            // Refusing a Stop would send the agent on working with no daemon to cap it: let it stop.
            got.assert_fail_open(&format!("{what}, --fail-closed"));
            continue;
        }
        let want = expected(agent, event_name, moment, Some("hookd is not running"), &[]);
        assert_answer(&got, &want, &format!("{what}, --fail-closed"));
    }
    // Every agent's Stop, and a SessionEnd, --fail-closed, nothing listening: the agent is let stop.
    for (agent, file) in [
        ("claude-code", "Stop-1.json"),
        ("codex", "Stop-1.json"),
        ("gemini-cli", "AfterAgent.json"),
        ("claude-code", "SessionEnd-1.json"),
        ("gemini-cli", "SessionEnd.json"),
    ] {
        relay_event(
            &socket,
            agent,
            &["--fail-closed"],
            &fixture_json(agent, file),
        )
        .assert_fail_open(&format!("{agent} {file}, daemon down, --fail-closed"));
    }
    // A socket file with no daemon behind it (a stale socket) is the same as none.
    let stale = sb.p("stale.sock");
    drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
    let event = fixture_json("claude-code", "PreToolUse-1.json");
    relay_event(&stale, "claude-code", &[], &event).assert_fail_open("stale socket");
    let got = relay_event(&stale, "claude-code", &["--fail-closed"], &event);
    assert_eq!(
        got.json().unwrap()["hookSpecificOutput"]["permissionDecisionReason"],
        "hookd is not running",
        "{got:?}"
    );
}

#[test]
fn daemon_silent_past_the_relay_timeout_fails_open_or_closed() {
    let sb = Sandbox::new();
    sb.settings("[[hooks.PreToolUse]]\nname = \"slow\"\ncommand = \"sleep 5\"\n");
    let d = Daemon::start(sb);
    let event = fixture_json("claude-code", "PreToolUse-1.json");

    relay_event(&d.socket, "claude-code", &["--timeout", "0.5"], &event)
        .assert_fail_open("daemon silent past --timeout");

    let got = relay_event(
        &d.socket,
        "claude-code",
        &["--timeout", "0.5", "--fail-closed"],
        &event,
    );
    assert_eq!((got.code, got.stderr.as_str()), (0, ""), "{got:?}");
    let v = got.json().expect("--fail-closed refuses on stdout");
    let specific = &v["hookSpecificOutput"];
    assert_eq!(specific["hookEventName"], "PreToolUse", "{v}");
    assert_eq!(specific["permissionDecision"], "deny", "{v}");
    // Contract 12: silent past the relay's timeout counts as not running.
    assert_eq!(
        specific["permissionDecisionReason"], "hookd is not running",
        "{v}"
    );

    let got = relay_event(
        &d.socket,
        "gemini-cli",
        &["--timeout", "0.5", "--fail-closed"],
        &fixture_json("gemini-cli", "BeforeTool.json"),
    );
    let v = got.json().expect("--fail-closed refuses on stdout");
    assert_eq!(v["decision"], "deny", "{got:?}");
    assert_eq!(v["reason"], "hookd is not running", "{got:?}");

    // The relay hung up: the daemon ends the hooks it was running for it.
    wait_until(T, "the abandoned fires to end", || {
        d.status()["in_flight"] == 0
    });
}

#[test]
fn input_that_is_not_json_fails_open_or_closed() {
    let sb = Sandbox::new();
    sb.settings("[[hooks.PreToolUse]]\nname = \"deny\"\ncommand = \"exit 2\"\n");
    let d = Daemon::start(sb);
    for input in [
        "this is not json",
        "{\"hook_event_name\": \"PreToolUse\"",
        "",
    ] {
        relay(&d.socket, &[], input).assert_fail_open(&format!("input {input:?}"));
        let got = relay(&d.socket, &["--fail-closed"], input);
        assert_eq!(got.code, 2, "input {input:?}, --fail-closed: {got:?}");
        assert_eq!(got.stdout, "", "input {input:?}, --fail-closed: {got:?}");
        assert!(
            !got.stderr.trim().is_empty(),
            "input {input:?}, --fail-closed says why on stderr: {got:?}"
        );
    }
}

#[test]
fn a_moment_the_daemon_does_not_know_says_nothing() {
    let d = dialect_daemon(Says::RefuseAndAdd);
    let event = fixture_json("gemini-cli", "BeforeModel.json");
    relay_event(&d.socket, "gemini-cli", &[], &event).assert_silent("gemini BeforeModel");
    relay_event(&d.socket, "gemini-cli", &["--fail-closed"], &event)
        .assert_silent("gemini BeforeModel, --fail-closed");
    relay_event(
        &d.socket,
        "gemini-cli",
        &[],
        &fixture_json("gemini-cli", "BeforeToolSelection.json"),
    )
    .assert_silent("gemini BeforeToolSelection");
}

/// A refusal where the agent only takes advice (Gemini CLI ignores one at PreCompress) is
/// said as what it is, by the daemon's answer as by the relay's, never as a block that is not one.
#[test]
fn a_refusal_where_the_agent_only_advises_is_said_so_by_the_daemon_and_the_relay() {
    let d = dialect_daemon(Says::Refuse);
    let event = fixture_json("gemini-cli", "PreCompress.json");
    for (agent, advisory) in [("gemini-cli", true), ("claude-code", false), ("", false)] {
        let r = d.fire_req(
            json!({"op": "fire", "id": 1, "moment": "PreCompact", "agent": agent, "event": event}),
        );
        assert_eq!(r["refused"], true, "{agent}: {r}");
        assert_eq!(
            r.get("advisory").is_some_and(|a| a == true),
            advisory,
            "{agent}: {r}"
        );
    }
    // Where Gemini CLI heeds a refusal, it is no advice.
    let r = d.fire_req(json!({"op": "fire", "id": 1, "moment": "PreToolUse", "agent": "gemini-cli", "event": fixture_json("gemini-cli", "BeforeTool.json")}));
    assert_eq!(
        (r["refused"].clone(), r.get("advisory")),
        (json!(true), None),
        "{r}"
    );
    for extra in [&[][..], &["--fail-closed"][..]] {
        let got = relay_event(&d.socket, "gemini-cli", extra, &event);
        assert_eq!(got.code, 0, "{got:?}");
        let said = got.json().unwrap()["systemMessage"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(said.contains("only takes advice"), "{got:?}");
        assert!(
            !got.stdout.contains("deny"),
            "no deny Gemini CLI would ignore: {got:?}"
        );
        assert_eq!(got.stderr, format!("hookd relay: {said}\n"), "{got:?}");
    }
}

#[test]
fn an_unknown_agent_is_a_usage_error() {
    let sb = Sandbox::new();
    let out = run_hookd(
        &[
            "relay",
            "--agent",
            "nope",
            "--socket",
            sb.p("hookd.sock").to_str().unwrap(),
        ],
        Some(&fixture_json("claude-code", "PreToolUse-1.json").to_string()),
        T,
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(code(&out.status), 1, "{stdout:?} {stderr:?}");
    assert_eq!(stdout, "", "{stderr:?}");
    assert_eq!(stderr.lines().count(), 1, "one line on stderr: {stderr:?}");
    assert!(stderr.contains("nope"), "{stderr:?}");
}

// ---- hello and check know each agent's moments -------------------------------------------------------

/// Hooks scoped to agents, some of which never fire the hook's moment. `fail-codex` and `perm-gemini` name
/// Qwen Code too, which fires theirs: a hook none of whose agents fires its moment can never run, and the
/// file would be refused (tests/it/cli_check.rs).
fn scoped_settings(sb: &Sandbox) {
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"pre-all\"\ncommand = \"true\"\n\n\
         [[hooks.PostToolUseFailure]]\nname = \"fail-all\"\ncommand = \"true\"\n\n\
         [[hooks.PostToolUseFailure]]\nname = \"fail-codex\"\nagents = [\"codex\", \"qwen-code\"]\ncommand = \"true\"\n\n\
         [[hooks.PostToolUseFailure]]\nname = \"fail-claude\"\nagents = [\"claude-code\"]\ncommand = \"true\"\n\n\
         [[hooks.PermissionRequest]]\nname = \"perm-gemini\"\nagents = [\"gemini-cli\", \"qwen-code\"]\ncommand = \"true\"\n\n\
         [[hooks.PreCompact]]\nname = \"compact-all\"\ncommand = \"true\"\n\n\
         [[hooks.Stop]]\nname = \"stop-codex\"\nagents = [\"codex\"]\ncommand = \"true\"\n\n\
         [[hooks.PostToolUseFailure]]\nname = \"fail-off\"\nenabled = false\ncommand = \"true\"\n",
    );
}

fn unreachable(resp: &Value) -> BTreeSet<(String, String)> {
    assert_eq!(resp["ok"], true, "{resp}");
    resp["unreachable"]
        .as_array()
        .unwrap_or_else(|| panic!("no `unreachable` array: {resp}"))
        .iter()
        .map(|u| {
            (
                u["hook"].as_str().unwrap().to_string(),
                u["moment"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn set(pairs: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    pairs
        .iter()
        .map(|(h, m)| (h.to_string(), m.to_string()))
        .collect()
}

#[test]
fn hello_without_moments_uses_what_hookd_knows_of_the_agent() {
    let sb = Sandbox::new();
    scoped_settings(&sb);
    let d = Daemon::start(sb);

    // Codex fires every moment but PostToolUseFailure and Notification (PreCompact too).
    let resp = d
        .connect()
        .request(&json!({"op": "hello", "id": "h1", "agent": "codex"}));
    assert_eq!(resp["id"], "h1", "{resp}");
    assert!(resp["version"].is_string(), "{resp}");
    assert_eq!(
        unreachable(&resp),
        set(&[
            ("fail-all", "PostToolUseFailure"),
            ("fail-codex", "PostToolUseFailure"),
        ]),
        "{resp}"
    );
    // Each one is logged as a warning.
    wait_until(T, "the daemon to log the unreachable hooks", || {
        let log = d.log_text();
        ["fail-all", "fail-codex"]
            .iter()
            .all(|h| log.lines().any(|l| l.contains("WARN") && l.contains(h)))
    });

    // Gemini CLI never fires PermissionRequest or PostToolUseFailure.
    let resp = d
        .connect()
        .request(&json!({"op": "hello", "id": 2, "agent": "gemini-cli"}));
    assert_eq!(
        unreachable(&resp),
        set(&[
            ("fail-all", "PostToolUseFailure"),
            ("perm-gemini", "PermissionRequest"),
        ]),
        "{resp}"
    );

    // Claude Code fires every moment.
    let resp = d
        .connect()
        .request(&json!({"op": "hello", "id": 3, "agent": "claude-code"}));
    assert_eq!(unreachable(&resp), set(&[]), "{resp}");

    // Moments given explicitly win over what hookd knows.
    let resp = d.connect().request(
        &json!({"op": "hello", "id": 4, "agent": "codex", "moments": ["PreToolUse", "PostToolUseFailure", "PreCompact"]}),
    );
    assert_eq!(unreachable(&resp), set(&[("stop-codex", "Stop")]), "{resp}");

    // An agent hookd does not know, without moments: nothing can be said.
    let resp = d
        .connect()
        .request(&json!({"op": "hello", "id": 5, "agent": "my-sdk-agent"}));
    assert_eq!(unreachable(&resp), set(&[]), "{resp}");
}

#[test]
fn check_warns_of_a_hook_for_codex_on_a_moment_codex_never_fires() {
    let sb = Sandbox::new();
    scoped_settings(&sb);
    let out = run_hookd(
        &["check", "--config", sb.config().to_str().unwrap()],
        None,
        T,
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(
        code(&out.status),
        0,
        "a warning is not an error: {stdout:?} {stderr:?}"
    );
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("fail-codex") && w.contains("PostToolUseFailure")),
        "no warning for fail-codex: {stderr:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("perm-gemini") && w.contains("PermissionRequest")),
        "no warning for perm-gemini: {stderr:?}"
    );
    for quiet in ["fail-all", "fail-claude", "stop-codex", "pre-all"] {
        assert!(
            !warnings.iter().any(|w| w.contains(&format!("\"{quiet}\""))),
            "{quiet} is reachable, yet warned of: {stderr:?}"
        );
    }
}

// ---- events the model can shape: any size, any depth, lone surrogates ---------------------

/// A safety net for a relay run with an event of tens of MB (never a speed assertion).
const BIG: Duration = Duration::from_secs(180);

/// Runs the relay with `input`, allowing for its size.
fn relay_big(socket: &Path, args: &[&str], input: &str) -> Answer {
    let mut all = vec!["relay", "--socket", socket.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = run_hookd(&all, Some(input), BIG);
    Answer {
        code: code(&out.status),
        stdout: text(&out.stdout),
        stderr: text(&out.stderr),
    }
}

/// A Claude Code `Write` PreToolUse of exactly `size` bytes, from `/tmp`. `event_name` is its
/// `hook_event_name`, or none.
fn write_input(size: usize, event_name: Option<&str>) -> String {
    write_event(size, "/tmp", event_name)
}

/// A daemon whose `Write` hook refuses an event over 60 MB, with the given `on_failure` (see
/// `common::size_guard_hook`).
fn size_guard(on_failure: &str) -> Daemon {
    let sb = Sandbox::new();
    let hook = size_guard_hook(&sb, on_failure);
    sb.settings(&hook);
    Daemon::start(sb)
}

/// The reason of a Claude Code PreToolUse refusal on stdout.
fn deny_reason(got: &Answer) -> String {
    assert_eq!((got.code, got.stderr.as_str()), (0, ""), "{got:?}");
    claude_deny_reason(&got.json().unwrap_or_else(|| panic!("no refusal: {got:?}")))
}

#[test]
fn events_up_to_64_mib_reach_their_hooks_whole() {
    let d = size_guard("ignore");
    relay_big(&d.socket, &[], &write_input(2 << 20, Some("PreToolUse")))
        .assert_silent("a 2 MiB Write");
    let got = relay_big(&d.socket, &[], &write_input(64 << 20, Some("PreToolUse")));
    let reason = deny_reason(&got);
    let seen: u64 = reason
        .strip_suffix(" bytes is too big")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the hook did not judge the event: {reason}"));
    assert!(seen > 64_000_000, "the hook saw {seen} bytes");
}

#[test]
fn events_past_64_mib_are_decided_as_failures_of_their_hooks() {
    let input = write_input(70_000_000, Some("PreToolUse"));
    let why = "the event is 70000000 bytes, over the 64 MiB limit";

    // on_failure = "refuse": refused in the agent's dialect, saying why.
    let d = size_guard("refuse");
    let reason = deny_reason(&relay_big(&d.socket, &[], &input));
    assert_eq!(
        reason,
        format!("hook size-guard failed: hookd could not give this hook the event: {why}")
    );
    // Through Gemini CLI's names too: the head's tool name is renamed, so the `Write` matcher holds.
    let gemini = input
        .replacen("\"PreToolUse\"", "\"BeforeTool\"", 1)
        .replacen("\"Write\"", "\"write_file\"", 1);
    let got = relay_big(&d.socket, &["--agent", "gemini-cli"], &gemini);
    let v = got.json().unwrap_or_else(|| panic!("no refusal: {got:?}"));
    assert_eq!(v["decision"], "deny", "{v}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .ends_with("bytes, over the 64 MiB limit"),
        "{v}"
    );

    // The default, on_failure = "ignore": let through, but never silently.
    let d = size_guard("ignore");
    let got = relay_big(&d.socket, &[], &input);
    got.assert_fail_open("a 70 MB Write, on_failure = ignore");
    assert!(
        got.stderr.contains(why) && got.stderr.contains("1 hook(s)"),
        "{got:?}"
    );
    wait_until(T, "the daemon to log the undecidable event", || {
        d.log_text().contains("an event hookd cannot decide")
    });

    // No moment to be found in it at all: said, and refused with --fail-closed.
    let anonymous = write_input(70_000_000, None);
    relay_big(&d.socket, &[], &anonymous).assert_fail_open("70 MB without hook_event_name");
    let got = relay_big(&d.socket, &["--fail-closed"], &anonymous);
    assert_eq!((got.code, got.stdout.as_str()), (2, ""), "{got:?}");
    assert!(got.stderr.contains("hook_event_name"), "{got:?}");
}

/// `event` as Claude Code would send it, with its tool input nested `depth` levels deep.
fn nested(mut event: Value, depth: usize) -> String {
    event["tool_input"]["deep"] = json!("@DEEP@");
    serde_json::to_string(&event).unwrap().replace(
        "\"@DEEP@\"",
        &format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
    )
}

#[test]
fn an_event_nested_10000_deep_is_decided_as_a_failure_of_its_hooks() {
    let sb = Sandbox::new();
    // `guard` would let the command through; `writes` would refuse, but its matcher does not hold.
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"guard\"\nmatcher = \"Bash\"\non_failure = \"refuse\"\ncommand = \"exit 0\"\n\n\
         [[hooks.PreToolUse]]\nname = \"writes\"\nmatcher = \"Write\"\ncommand = \"exit 2\"\n",
    );
    let d = Daemon::start(sb);
    let why = "hook guard failed: hookd could not give this hook the event: the event is nested deeper than 128 levels";
    let input = nested(fixture_json("claude-code", "PreToolUse-1.json"), 10_000);
    assert_eq!(deny_reason(&relay(&d.socket, &[], &input)), why);
    let input = nested(fixture_json("gemini-cli", "BeforeTool.json"), 10_000);
    let got = relay(&d.socket, &["--agent", "gemini-cli"], &input);
    assert_eq!(
        got.json(),
        Some(json!({"decision": "deny", "reason": why})),
        "{got:?}"
    );

    // With on_failure = "ignore", the agent goes on, and the relay says why.
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"guard\"\nmatcher = \"Bash\"\ncommand = \"exit 2\"\n",
    );
    let d = Daemon::start(sb);
    let input = nested(fixture_json("claude-code", "PreToolUse-1.json"), 10_000);
    let got = relay(&d.socket, &[], &input);
    got.assert_fail_open("10,000 deep, on_failure = ignore");
    assert!(got.stderr.contains("deeper than 128"), "{got:?}");
}

#[test]
fn a_lone_surrogate_in_the_command_still_reaches_the_hook_that_refuses() {
    let sb = Sandbox::new();
    sb.script(
        "deny-rm.sh",
        "if grep -q 'rm -rf'; then echo 'rm -rf is not allowed' >&2; exit 2; fi\nexit 0",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"deny-rm\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/deny-rm.sh\"\n",
    );
    let d = Daemon::start(sb);
    for (agent, file) in [
        ("claude-code", "PreToolUse-1.json"),
        ("codex", "PreToolUse-1.json"),
        ("gemini-cli", "BeforeTool.json"),
    ] {
        let mut event = fixture_json(agent, file);
        event["tool_input"]["command"] = json!("rm -rf / @LONE@");
        // As Node's JSON.stringify writes half an emoji: a lone high surrogate, then a lone low one.
        let input = serde_json::to_string(&event)
            .unwrap()
            .replace("@LONE@", r"\ud83d and \ude00");
        let got = relay(&d.socket, &["--agent", agent], &input);
        assert_eq!((got.code, got.stderr.as_str()), (0, ""), "{agent}: {got:?}");
        let v = got
            .json()
            .unwrap_or_else(|| panic!("{agent}: not refused: {got:?}"));
        let reason = if agent == "gemini-cli" {
            &v["reason"]
        } else {
            &v["hookSpecificOutput"]["permissionDecisionReason"]
        };
        assert_eq!(reason, "rm -rf is not allowed", "{agent}: {v}");
    }
}

// ---- what the relay does not know -----------------------------------------------------------

#[test]
fn an_event_of_another_agent_or_a_misspelt_one_is_said_and_refused_when_closed() {
    let d = dialect_daemon(Says::Refuse);
    let gemini = fixture_json("gemini-cli", "BeforeTool.json");
    let misspelt = with(
        &fixture_json("claude-code", "PreToolUse-1.json"),
        json!({"hook_event_name": "PreTooluse"}),
    );
    for (event, says) in [
        (
            &gemini,
            "\"BeforeTool\" is not an event claude-code sends; it is Gemini CLI's name for PreToolUse: use --agent gemini-cli",
        ),
        (
            &misspelt,
            "\"PreTooluse\" is not an event claude-code sends (did you mean \"PreToolUse\"?)",
        ),
    ] {
        let got = relay_event(&d.socket, "claude-code", &[], event);
        got.assert_fail_open(says);
        assert!(got.stderr.contains(says), "{got:?}");
        let got = relay_event(&d.socket, "claude-code", &["--fail-closed"], event);
        assert_eq!((got.code, got.stdout.as_str()), (2, ""), "{got:?}");
        assert!(got.stderr.contains(says), "{got:?}");
    }
    // Codex fed Gemini CLI's own event, with no counterpart among hookd's moments.
    let got = relay_event(
        &d.socket,
        "codex",
        &[],
        &fixture_json("gemini-cli", "BeforeModel.json"),
    );
    got.assert_fail_open("codex fed BeforeModel");
    assert!(got.stderr.contains("use --agent gemini-cli"), "{got:?}");
}

/// An event of a moment hookd knows, but under a name the relay's agent never sends (Claude
/// Code's `PreToolUse` through `--agent gemini-cli`): the hooks would run, and be answered in a dialect
/// the real agent does not read, a refusal lost. Said, and refused under `--fail-closed` with stderr and
/// exit 2, which every agent reads as a refusal. (An event an agent of the same dialect sends is fired:
/// it is answered in a dialect the agent reads.)
#[test]
fn an_event_of_a_known_moment_under_another_agents_name_is_said_and_refused_when_closed() {
    let d = dialect_daemon(Says::Refuse);
    let claude_pre = fixture_json("claude-code", "PreToolUse-1.json");
    let gemini_pre = fixture_json("gemini-cli", "BeforeTool.json");
    for (agent, event, owner) in [
        ("gemini-cli", &claude_pre, "claude-code"),
        ("codex", &gemini_pre, "gemini-cli"),
        ("claude-code", &gemini_pre, "gemini-cli"),
    ] {
        let name = event["hook_event_name"].as_str().unwrap();
        let what = format!("{name} through --agent {agent}");
        let got = relay_event(&d.socket, agent, &[], event);
        got.assert_fail_open(&what);
        assert!(
            got.stderr
                .contains(&format!("\"{name}\" is not an event {agent} sends")),
            "{what}: {got:?}"
        );
        assert!(
            got.stderr.contains(&format!("use --agent {owner}")),
            "{what}: {got:?}"
        );
        let got = relay_event(&d.socket, agent, &["--fail-closed"], event);
        assert_eq!((got.code, got.stdout.as_str()), (2, ""), "{what}: {got:?}");
        assert!(
            got.stderr.contains(&format!("use --agent {owner}")),
            "{what}: {got:?}"
        );
    }
    // A Stop of another agent is let through even so (refusing it would keep the agent working).
    let got = relay_event(
        &d.socket,
        "gemini-cli",
        &["--fail-closed"],
        &fixture_json("claude-code", "Stop-1.json"),
    );
    assert_eq!((got.code, got.stdout.as_str()), (0, ""), "{got:?}");
    assert!(got.stderr.contains("use --agent"), "{got:?}");
}

#[test]
fn a_daemon_that_never_accepts_is_answered_within_the_relay_timeout() {
    // Found attacking the fixes: a listener whose backlog is full (a flooded daemon, or a socket
    // someone else bound and never accepts on) held the relay in connect() past its --timeout, until the
    // agent killed it and went on. One deadline now covers connecting, sending and the answer.
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("hookd.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    // The backlog holds up to net.core.somaxconn (4096 by default) connections, each a descriptor here.
    raise_open_files(8192);
    // Fill the backlog: connections that are never accepted, made without blocking until one would.
    let mut held = Vec::new();
    while let Some(stream) = connect_without_blocking(&socket) {
        held.push(stream);
        assert!(held.len() < 100_000, "the backlog never filled");
    }
    let event = r#"{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"rm -rf /"}}"#;
    let out = relay(&socket, &["--fail-closed", "--timeout", "1"], event);
    assert!(
        out.stdout.contains("\"deny\"") && out.stdout.contains("hookd is not running"),
        "the relay did not refuse within its timeout: {out:?}"
    );
    drop((held, listener));
}

#[test]
fn an_event_too_dense_to_hold_is_decided_from_its_head_and_said() {
    // Found attacking the fixes again: when the daemon (not the relay) found an event
    // undecidable, the relay let the agent go on without a word. Six MiB of tiny values would take more
    // memory decoded than a connection may hold: the daemon decides it from its head.
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"guard\"\nmatcher = \"Bash\"\ncommand = \"exit 0\"\n\n\
         [[hooks.PreToolUse]]\nname = \"strict\"\nmatcher = \"Bash\"\non_failure = \"refuse\"\ncommand = \"exit 0\"\n",
    );
    let d = Daemon::start(sb);
    let dense = format!("[{}0]", "0,".repeat(3 << 20));
    let mut event = fixture_json("claude-code", "PreToolUse-1.json");
    event["tool_input"]["values"] = json!("@DENSE@");
    let input = serde_json::to_string(&event)
        .unwrap()
        .replace("\"@DENSE@\"", &dense);
    let got = relay_big(&d.socket, &[], &input);
    let reason = deny_reason(&got);
    assert!(
        reason.starts_with("hook strict failed: hookd could not give this hook the event")
            && reason.contains("memory"),
        "{got:?}"
    );
    // Without the strict hook, the agent goes on, and the relay says why.
    d.sb.settings(
        "[[hooks.PreToolUse]]\nname = \"guard\"\nmatcher = \"Bash\"\ncommand = \"exit 0\"\n",
    );
    wait_until(T, "the strict hook to be gone", || {
        d.status()["hooks"]["PreToolUse"] == 1
    });
    let got = relay_big(&d.socket, &[], &input);
    got.assert_fail_open("too dense, on_failure = ignore");
    assert!(got.stderr.contains("could not be given it"), "{got:?}");
}

#[test]
fn a_refusal_from_a_daemon_of_another_version_is_heard() {
    // Found in review: the relay came to read the daemon's answer as this hookd writes it,
    // and an answer of another shape (a daemon older or newer than the relay: no `adds`, no `hooks`, an
    // outcome this hookd does not know, a non-string add) was unreadable, so its refusal was let
    // through (fail-open). What a verdict needs is read loosely now; only a `refused` that is not a
    // boolean is not guessed at.
    let answers = [
        r#"{"ok":true,"refused":true,"reason":"no rm"}"#,
        r#"{"ok":true,"refused":true,"reason":"no rm","adds":[7],"hooks":[{"name":"h","outcome":"asked","ms":"1"}]}"#,
        r#"{"ok":true,"refused":true,"reason":"no rm","adds":[],"hooks":[{"name":"h","outcome":"deferred","ms":1.0}],"new_field":{}}"#,
    ];
    let event = fixture_json("claude-code", "PreToolUse-1.json");
    for answer in answers {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("hookd.sock");
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        // A stand-in daemon: one connection, one request line, this answer.
        let serving = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut request = String::new();
            BufReader::new(&stream).read_line(&mut request).unwrap();
            (&stream)
                .write_all(format!("{answer}\n").as_bytes())
                .unwrap();
            request
        });
        let got = relay_event(&socket, "claude-code", &[], &event);
        let request = serving.join().unwrap();
        assert!(request.contains("\"op\":\"fire\""), "{request}");
        assert_eq!(deny_reason(&got), "no rm", "answer {answer}: {got:?}");
    }
}

/// `check` warns of a hook meant to refuse where an agent it runs for only takes advice, and
/// is quiet about one on every moment that does not mean to.
#[test]
fn check_warns_of_a_refusal_where_an_agent_only_takes_advice() {
    let sb = Sandbox::new();
    let mut toml = String::new();
    // hookd's own default timeout fits itself to each agent's limit at each moment: no warning.
    for m in HOOKED {
        toml.push_str(&format!(
            "[[hooks.{m}]]\nname = \"plain-{m}\"\ncommand = \"true\"\n\n"
        ));
    }
    toml.push_str(
        "[[hooks.SessionStart]]\nname = \"guard\"\ncommand = \"true\"\non_failure = \"refuse\"\n\n",
    );
    toml.push_str("[[hooks.PreToolUse]]\nname = \"tool-guard\"\ncommand = \"true\"\non_failure = \"refuse\"\nagents = [\"gemini-cli\"]\n");
    sb.settings(&toml);
    let out = run_hookd(
        &["check", "--config", sb.config().to_str().unwrap()],
        None,
        T,
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(code(&out.status), 0, "{stdout:?} {stderr:?}");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect();
    assert!(
        warnings.contains(&"warning: hook \"guard\" has on_failure = \"refuse\" on SessionStart, where Claude Code (its SessionStart), Gemini CLI (its SessionStart), Qwen Code (its SessionStart) and Copilot CLI (its sessionStart) only take advice: a refusal there does not stop them, and hookd answers it as advice"),
        "{stderr:?}"
    );
    // The hooks that do not mean to refuse, and one where Gemini CLI heeds a refusal: quiet.
    assert!(
        !warnings
            .iter()
            .any(|w| w.contains("\"plain-") || w.contains("tool-guard")),
        "{stderr:?}"
    );
}

// ---- Copilot CLI: an input that names no event ------------------------------------------------------

/// Copilot CLI's native inputs name no event: the relay is told it (`--event`), answers in Copilot's flat
/// JSON, and never exits 1 (which Copilot reads as a block). Without `--event`, or with one Copilot never
/// sends, the relay says so and lets the agent go on, or refuses with `--fail-closed`: never a silent pass.
#[test]
fn copilot_native_inputs_are_placed_by_the_event_the_relay_is_told() {
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"deny-bash\"\nmatcher = \"Bash\"\ncommand = \"cat > @DIR@/pre-seen.json; echo 'E2E no bash' >&2; exit 2\"\n\n\
         [[hooks.Stop]]\nname = \"more\"\ncommand = \"echo 'write the summary' >&2; exit 2\"\n\n\
         [[hooks.PermissionRequest]]\nname = \"no\"\ncommand = \"echo 'not today' >&2; exit 2\"\n\n\
         [[hooks.UserPromptSubmit]]\nname = \"ctx\"\ncommand = \"echo 'the branch is main'\"\n",
    );
    let d = Daemon::start(sb);
    let copilot = |file: &str, args: &[&str]| {
        let input = fixture_json("copilot-cli", file);
        let mut all = vec!["--agent", "copilot-cli"];
        all.extend_from_slice(args);
        relay(&d.socket, &all, &input.to_string())
    };

    let got = copilot("native-preToolUse.json", &["--event", "preToolUse"]);
    assert_eq!((got.code, got.stderr.as_str()), (0, ""), "{got:?}");
    assert_eq!(
        got.json(),
        Some(json!({"permissionDecision": "deny", "permissionDecisionReason": "E2E no bash"}))
    );
    let seen: Value =
        serde_json::from_str(&std::fs::read_to_string(d.sb.p("pre-seen.json")).unwrap()).unwrap();
    assert_eq!(
        (&seen["tool_name"], &seen["agent_tool_name"]),
        (&json!("Bash"), &json!("bash"))
    );
    assert_eq!(seen["tool_input"], seen["toolArgs"], "{seen}");

    let got = copilot("native-agentStop.json", &["--event", "agentStop"]);
    assert_eq!(
        got.json(),
        Some(json!({"decision": "block", "reason": "write the summary"})),
        "{got:?}"
    );
    // A permissionRequest names itself (`hookName`).
    let got = copilot("native-permissionRequest.json", &[]);
    assert_eq!(
        got.json(),
        Some(json!({"behavior": "deny", "message": "not today"})),
        "{got:?}"
    );
    let got = copilot(
        "native-userPromptSubmitted.json",
        &["--event", "userPromptSubmitted"],
    );
    assert_eq!(
        got.json(),
        Some(json!({"additionalContext": "the branch is main"})),
        "{got:?}"
    );
    // Nothing to say at an event nobody hooks, and no hook ran.
    let got = copilot("native-sessionEnd.json", &["--event", "sessionEnd"]);
    got.assert_silent("sessionEnd");

    // No --event: said, let through; refused with --fail-closed (exit 2, never 1).
    let got = copilot("native-preToolUse.json", &[]);
    assert_eq!((got.code, got.stdout.as_str()), (0, ""), "{got:?}");
    assert!(got.stderr.contains("--event"), "{got:?}");
    let got = copilot("native-preToolUse.json", &["--fail-closed"]);
    assert_eq!(got.code, 2, "{got:?}");
    assert!(got.stderr.contains("--event"), "{got:?}");
    // A misspelt event: the same, with the event meant.
    let got = copilot(
        "native-preToolUse.json",
        &["--event", "pretooluse", "--fail-closed"],
    );
    assert_eq!(got.code, 2, "{got:?}");
    assert!(
        got.stderr.contains("did you mean \"preToolUse\""),
        "{got:?}"
    );
}

// ---- Codex: its edits and its moments of its own ----------------------------------------

/// Codex's `apply_patch` (the captured PreToolUse and PostToolUse of a patch that adds hello.txt) fires a
/// hookd matcher `Edit|Write`, as `Write`, with the path made absolute and the patch kept; the refusal is
/// Codex's deny with the reason. A hook matching `apply_patch` (Codex's own name) fires as well.
#[test]
fn codex_apply_patch_fires_an_edit_or_write_matcher() {
    let sb = Sandbox::new();
    sb.script(
        "no-edits.sh",
        "cat >> @DIR@/edits.log\necho >> @DIR@/edits.log\necho 'no edits here' >&2\nexit 2",
    );
    sb.script("own.sh", "cat > @DIR@/own.json");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"no-edits\"\nmatcher = \"Edit|Write\"\ncommand = \"@DIR@/no-edits.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"own\"\nmatcher = \"apply_patch\"\ncommand = \"@DIR@/own.sh\"\n\n\
         [[hooks.PostToolUse]]\nname = \"no-edits-after\"\nmatcher = \"Write\"\ncommand = \"@DIR@/no-edits.sh\"\n",
    );
    let d = Daemon::start(sb);
    let pre = fixture_json("codex", "PreToolUse-apply_patch.json");
    let got = relay_event(&d.socket, "codex", &[], &pre);
    assert_eq!(
        got.json(),
        Some(json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no edits here",
        }})),
        "{got:?}"
    );
    let seen: Value =
        serde_json::from_str(std::fs::read_to_string(d.sb.p("edits.log")).unwrap().trim()).unwrap();
    assert_eq!(seen["tool_name"], "Write");
    assert_eq!(seen["agent_tool_name"], "apply_patch");
    assert_eq!(
        seen["tool_input"]["file_path"],
        "/home/user/project/hello.txt"
    );
    assert_eq!(
        seen["tool_input"]["file_paths"],
        json!(["/home/user/project/hello.txt"])
    );
    assert_eq!(seen["tool_input"]["command"], pre["tool_input"]["command"]);
    assert!(
        d.sb.p("own.json").exists(),
        "the apply_patch matcher did not fire"
    );

    let post = fixture_json("codex", "PostToolUse-apply_patch.json");
    let got = relay_event(&d.socket, "codex", &[], &post);
    assert_eq!(
        got.json(),
        Some(json!({"decision": "block", "reason": "no edits here"})),
        "{got:?}"
    );
}

/// The moments only Codex fires (Interrupt, PreModelRequest, PostModelRequest) are placed by the relay
/// from the captured inputs and their hooks run; a refusal at Interrupt is written as at SessionEnd, one at
/// the model requests (which Codex only watches) as advice.
#[test]
fn codex_moments_of_its_own_reach_their_hooks() {
    let sb = Sandbox::new();
    sb.script(
        "seen.sh",
        "cat >> @DIR@/seen.log\necho >> @DIR@/seen.log\necho \"refused $HOOKD_MOMENT\" >&2\nexit 2",
    );
    let mut settings = String::new();
    for moment in ["Interrupt", "PreModelRequest", "PostModelRequest"] {
        settings.push_str(&format!(
            "[[hooks.{moment}]]\nname = \"seen-{moment}\"\ncommand = \"@DIR@/seen.sh\"\n\n"
        ));
    }
    sb.settings(&settings);
    let d = Daemon::start(sb);
    for (file, moment) in [
        ("Interrupt-1.json", "Interrupt"),
        ("PreModelRequest-1.json", "PreModelRequest"),
        ("PostModelRequest-1.json", "PostModelRequest"),
    ] {
        let got = relay_event(&d.socket, "codex", &[], &fixture_json("codex", file));
        if moment == "Interrupt" {
            assert_eq!(
                (got.code, got.stderr.as_str()),
                (2, format!("refused {moment}\n").as_str()),
                "{file}: {got:?}"
            );
        } else {
            // Codex only watches the model requests: a refusal there is said as advice, never as a
            // block Codex would ignore.
            let said = format!(
                "refused {moment} (a refusal at {moment}, where Codex only takes advice: it goes on)"
            );
            assert_eq!(
                (got.code, got.stderr.as_str()),
                (0, format!("hookd relay: {said}\n").as_str()),
                "{file}: {got:?}"
            );
            assert_eq!(got.json(), Some(json!({"systemMessage": said})), "{file}");
        }
    }
    let seen: Vec<String> = std::fs::read_to_string(d.sb.p("seen.log"))
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["hook_event_name"].to_string())
        .collect();
    assert_eq!(
        seen,
        [
            "\"Interrupt\"",
            "\"PreModelRequest\"",
            "\"PostModelRequest\""
        ]
    );
}

/// Every moment Codex 0.171.0 fires, each with a hook scoped to Codex: `check` has no warning for any,
/// and Codex's `hello` finds none unreachable.
#[test]
fn hooks_on_every_codex_moment_are_reachable_for_codex() {
    const CODEX_MOMENTS: &[&str] = &[
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
    ];
    let sb = Sandbox::new();
    let mut settings = String::new();
    for moment in CODEX_MOMENTS {
        settings.push_str(&format!(
            "[[hooks.{moment}]]\nname = \"codex-{moment}\"\ncommand = \"true\"\nagents = [\"codex\"]\n\n"
        ));
    }
    sb.settings(&settings);
    let out = run_hookd(
        &["check", "--config", sb.config().to_str().unwrap()],
        None,
        T,
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(code(&out.status), 0, "{stdout:?} {stderr:?}");
    assert!(!stderr.contains("warning"), "{stderr}");
    for moment in CODEX_MOMENTS {
        assert!(stdout.contains(&format!("codex-{moment} ")), "{stdout}");
    }
    let d = Daemon::start(sb);
    let resp = d
        .connect()
        .request(&json!({"op": "hello", "id": 1, "agent": "codex"}));
    assert_eq!(unreachable(&resp), set(&[]), "{resp}");
}

// ---- Claude Code's other moments ----------------------------------------------------------

/// Claude Code 2.1.332 reads a refusal in its own shape at each moment; PostToolBatch's ends the turn, so
/// `--fail-closed` with hookd down lets it through (each tool call was refused before it ran), and an
/// elicitation is declined, not answered with a bare exit 2.
#[test]
fn claude_codes_other_moments_are_answered_in_their_shape() {
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PostToolBatch]]\nname = \"enough\"\ncommand = \"echo 'E2E-BATCH: enough for now' >&2; exit 2\"\n\n\
         [[hooks.Elicitation]]\nname = \"no-forms\"\ncommand = \"echo 'no forms from that server' >&2; exit 2\"\n",
    );
    let d = Daemon::start(sb);
    let batch = fixture_json("claude-code", "PostToolBatch-1.json");
    let got = relay_event(&d.socket, "claude-code", &[], &batch);
    assert_eq!((got.code, got.stderr.as_str()), (0, ""), "{got:?}");
    assert_eq!(
        got.json().unwrap(),
        json!({"decision": "block", "reason": "E2E-BATCH: enough for now"})
    );
    let elicitation = json!({"hook_event_name": "Elicitation", "session_id": "s", "cwd": "/",
        "mcp_server_name": "forms", "message": "Your name?", "requested_schema": {}});
    let got = relay_event(&d.socket, "claude-code", &[], &elicitation);
    assert_eq!(
        got.json().unwrap(),
        json!({"reason": "no forms from that server",
               "hookSpecificOutput": {"hookEventName": "Elicitation", "action": "decline"}})
    );

    let nothing = d.sb.p("nothing/hookd.sock");
    relay_event(&nothing, "claude-code", &["--fail-closed"], &batch)
        .assert_fail_open("PostToolBatch, daemon down, --fail-closed");
    let got = relay_event(&nothing, "claude-code", &["--fail-closed"], &elicitation);
    assert_eq!(
        got.json().unwrap()["hookSpecificOutput"]["action"],
        "decline",
        "{got:?}"
    );
}

/// Codex waits 3 s for its SessionEnd hooks. hookd stops a slow hook there a second before that, so the
/// verdict reaches the relay before it gives up: a fast hook's refusal is heard, not lost with a relay
/// that stopped waiting. The slow hook is read by its `on_failure`, and stopped.
#[test]
fn a_verdict_at_a_moment_the_agent_waits_little_for_is_heard_before_it_gives_up() {
    let sb = Sandbox::new();
    sb.script("slow.sh", "echo $$ > @DIR@/slow.pid\nexec sleep 300");
    sb.settings(
        "[[hooks.SessionEnd]]\nname = \"upload\"\ncommand = \"@DIR@/slow.sh\"\ntimeout = 200\n\n\
         [[hooks.SessionEnd]]\nname = \"keep-logs\"\ncommand = \"echo 'keep the logs' >&2; exit 2\"\n",
    );
    let d = Daemon::start(sb);
    let event = fixture_json("codex", "SessionEnd-1.json");
    let got = relay_event(&d.socket, "codex", &["--timeout", "100"], &event);
    // Before, the relay gave up after 2.5 s and let the session end without a word of the refusal.
    assert_eq!(
        (got.code, got.stderr.as_str()),
        (2, "keep the logs\n"),
        "{got:?}"
    );
    let pid: i32 = d.sb.read("slow.pid").trim().parse().unwrap();
    wait_until(T, "the slow SessionEnd hook to be stopped", || {
        process_gone(pid, d.pid())
    });
}

/// Found attacking the moments: an MCP call of Gemini CLI too deep to decode whole was named from its head,
/// which had no `mcp_context`: a server `my_srv` was split as `my`, and a guard on `mcp__my_srv__.*` with
/// `on_failure = "refuse"` never counted, so the call went through.
#[test]
fn a_gemini_mcp_call_too_deep_to_decode_still_reaches_its_guard() {
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"guard\"\nmatcher = \"mcp__my_srv__.*\"\non_failure = \"refuse\"\ncommand = \"exit 0\"\n",
    );
    let d = Daemon::start(sb);
    let deep = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
    let input = format!(
        r#"{{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"mcp_my_srv_create","tool_input":{deep},"mcp_context":{{"server_name":"my_srv","tool_name":"create"}}}}"#
    );
    let got = relay(&d.socket, &["--agent", "gemini-cli"], &input);
    let v = got.json().unwrap_or_else(|| panic!("no refusal: {got:?}"));
    assert_eq!(v["decision"], "deny", "{got:?}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .starts_with("hook guard failed"),
        "{got:?}"
    );
}

/// Codex's patch tool called through its shell reaches both the `Edit|Write` guard and the `Bash` one
/// (found attacking the moments).
#[test]
fn a_codex_patch_through_the_shell_reaches_edit_and_bash_guards() {
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"bash-seen\"\nmatcher = \"Bash\"\ncommand = \"cat > @DIR@/bash.json\"\n\n\
         [[hooks.PreToolUse]]\nname = \"no-edits\"\nmatcher = \"Edit|Write\"\ncommand = \"echo 'no edits here' >&2; exit 2\"\n",
    );
    let d = Daemon::start(sb);
    let event = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/p", "tool_name": "Bash",
                       "tool_input": {"command": "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: x\n+y\n*** End Patch\nEOF"}});
    let got = relay_event(&d.socket, "codex", &[], &event);
    assert_eq!(deny_reason(&got), "no edits here", "{got:?}");
    let seen: Value = serde_json::from_str(&d.sb.read("bash.json")).unwrap();
    assert_eq!(
        (&seen["tool_name"], &seen["agent_tool_name"]),
        (&json!("Write"), &json!("Bash"))
    );
}

/// Found in the second outside attack: Codex applies `cd DIR && apply_patch <<'EOF'` as a
/// patch whose paths are from DIR; it reached only the `Bash` guard. Now the `Edit|Write` guard sees the
/// edit, its paths made absolute from DIR, and refuses it; the `Bash` guard still sees it too.
#[test]
fn a_codex_patch_after_cd_reaches_edit_and_bash_guards_with_its_paths() {
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"bash-seen\"\nmatcher = \"Bash\"\ncommand = \"cat > @DIR@/bash.json\"\n\n\
         [[hooks.PreToolUse]]\nname = \"no-edits\"\nmatcher = \"Edit|Write\"\ncommand = \"cat > @DIR@/edit.json; echo 'no edits here' >&2; exit 2\"\n",
    );
    let d = Daemon::start(sb);
    let command = "cd \"../me/.config/hookd\" && apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: hooks.toml\n@@\n-[[hooks.PreToolUse]]\n+\n*** End Patch\nEOF";
    let event = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/home/project", "tool_name": "Bash",
                       "tool_input": {"command": command}});
    let got = relay_event(&d.socket, "codex", &[], &event);
    assert_eq!(deny_reason(&got), "no edits here", "{got:?}");
    let seen: Value = serde_json::from_str(&d.sb.read("edit.json")).unwrap();
    assert_eq!(
        (&seen["tool_name"], &seen["agent_tool_name"]),
        (&json!("Edit"), &json!("Bash"))
    );
    assert_eq!(
        seen["tool_input"]["file_path"],
        "/home/me/.config/hookd/hooks.toml"
    );
    assert_eq!(seen["tool_input"]["command"], command);
    let bash: Value = serde_json::from_str(&d.sb.read("bash.json")).unwrap();
    assert_eq!(bash["tool_input"]["command"], command);
}

/// Found in review: with `--fail-closed`, a Stop the relay could not fire (another agent's
/// name for it, or an input it could not read, placed by `--event`) was refused, sending the agent on
/// with no stop cap; it is let through, as every Stop the daemon cannot answer is.
#[test]
fn a_stop_the_relay_cannot_fire_is_let_through_even_fail_closed() {
    let sb = Sandbox::new();
    let d = Daemon::start(sb);
    let got = relay(
        &d.socket,
        &["--agent", "claude-code", "--fail-closed"],
        r#"{"hook_event_name":"AfterAgent","session_id":"x"}"#,
    );
    assert_eq!(got.code, 0, "{got:?}");
    assert!(got.stderr.contains("letting the Stop through"), "{got:?}");
    let got = relay(
        &d.socket,
        &["--agent", "claude-code", "--event", "Stop", "--fail-closed"],
        "garbage",
    );
    assert_eq!(got.code, 0, "{got:?}");
    assert!(got.stderr.contains("letting the Stop through"), "{got:?}");
    // A moment that holds something back is still refused, in the agent's own words for it.
    let got = relay(
        &d.socket,
        &[
            "--agent",
            "claude-code",
            "--event",
            "PreToolUse",
            "--fail-closed",
        ],
        "garbage",
    );
    assert!(
        deny_reason(&got).starts_with("hookd could not answer"),
        "{got:?}"
    );
}
