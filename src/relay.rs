//! `hookd relay`: hookd inside an agent's own hook settings (contract 12).
//!
//! The agent starts the relay for every hook moment (so for every tool call): it reads the agent's hook
//! input on stdin, fires it at the daemon over a blocking socket (no async runtime, nothing done before it
//! is needed), and answers in the agent's dialect. When the daemon cannot answer, it fails open with one
//! line on stderr, or refuses with `--fail-closed`.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::agents::{Agent, claude_tool_name};
use crate::client::ClientError;

/// What the relay was told on its command line.
#[derive(Debug, Clone)]
pub struct Options {
    pub agent: Agent,
    pub socket: PathBuf,
    pub fail_closed: bool,
    pub timeout: Duration,
}

/// How long the relay waits for a verdict by default. Above the daemon's default hook timeout (60 s), so
/// that a hanging hook is answered by the daemon (with its `on_failure`) before the relay gives up, and
/// below the 120 s that `--print-settings` gives the agent, so the relay answers before the agent kills it.
pub const DEFAULT_TIMEOUT_SECS: f64 = 100.0;

/// The reason given to the agent when `--fail-closed` refuses because the daemon is down or silent past
/// the relay's timeout (contract 12).
pub const NOT_RUNNING: &str = "hookd is not running";

/// Moments where a refusal goes out as JSON on stdout with exit 0; at the others it is stderr and exit 2.
const JSON_REFUSAL_MOMENTS: &[&str] = &[
    "PreToolUse",
    "PermissionRequest",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "PostToolUse",
    "PostToolUseFailure",
    "PreCompact",
];

/// What the relay prints and how it exits: exactly what the agent reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    pub exit: u8,
}

impl Answer {
    fn nothing() -> Answer {
        Answer {
            stdout: None,
            stderr: None,
            exit: 0,
        }
    }

    fn emit(self) -> ExitCode {
        if let Some(out) = self.stdout {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{out}");
            let _ = stdout.flush();
        }
        if let Some(err) = self.stderr {
            eprintln!("{err}");
        }
        ExitCode::from(self.exit)
    }
}

pub fn run(options: &Options) -> ExitCode {
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        return cannot_answer(
            options,
            None,
            &format!("cannot read the hook input: {e}"),
            false,
        );
    }
    let (moment, agent_event_name, event) = match translate(options.agent, &input) {
        Ok(translated) => translated,
        Err(why) => return cannot_answer(options, None, &why, false),
    };
    let request = json!({"op": "fire", "id": 1, "moment": moment, "agent": options.agent.name(), "event": event});
    let response = match crate::client::request(&options.socket, &request, Some(options.timeout)) {
        Ok(response) => response.value,
        Err(error) => {
            let down = matches!(error, ClientError::NotRunning(_) | ClientError::TimedOut(_));
            return cannot_answer(
                options,
                Some((&moment, &agent_event_name)),
                &error.to_string(),
                down,
            );
        }
    };
    if response["ok"] != json!(true) {
        if response["error"]["kind"] == "unknown_moment" {
            // A moment nobody hangs hooks on (one hookd does not know, not declared): nothing to say.
            return ExitCode::SUCCESS;
        }
        let message = response["error"]["message"].as_str().unwrap_or("an error");
        return cannot_answer(
            options,
            Some((&moment, &agent_event_name)),
            &format!("hookd answered: {message}"),
            false,
        );
    }
    let refused = response["refused"] == json!(true);
    let reason = response["reason"]
        .as_str()
        .filter(|r| !r.trim().is_empty())
        .unwrap_or("refused by hookd");
    let adds: Vec<&str> = response["adds"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    answer(
        options.agent,
        &moment,
        &agent_event_name,
        refused.then_some(reason),
        &adds,
    )
    .emit()
}

/// The agent's hook input as a fire: the moment, the agent's own name for it, and the event. Gemini CLI's
/// moments and tools are renamed to Claude Code's, keeping the tool's own name in `agent_tool_name`, so
/// that one matcher serves every agent.
pub fn translate(
    agent: Agent,
    input: &str,
) -> Result<(String, String, Map<String, Value>), String> {
    let mut event = match serde_json::from_str::<Value>(input) {
        Ok(Value::Object(event)) => event,
        Ok(_) => return Err("the hook input is not a JSON object".into()),
        Err(e) => return Err(format!("the hook input is not JSON: {e}")),
    };
    let Some(event_name) = event
        .get("hook_event_name")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return Err("the hook input has no hook_event_name".into());
    };
    let moment = agent.moment_of(&event_name);
    if agent == Agent::GeminiCli
        && let Some(tool) = event
            .get("tool_name")
            .and_then(Value::as_str)
            .map(str::to_string)
        && let Some(claude_name) = claude_tool_name(&tool)
    {
        event.insert("agent_tool_name".into(), Value::String(tool));
        event.insert("tool_name".into(), Value::String(claude_name.into()));
    }
    Ok((moment, event_name, event))
}

/// The verdict in the agent's dialect (the table of contract 12). `refusal` is the reason when refused.
pub fn answer(
    agent: Agent,
    moment: &str,
    agent_event_name: &str,
    refusal: Option<&str>,
    adds: &[&str],
) -> Answer {
    let context = (!adds.is_empty()).then(|| adds.join("\n\n"));
    let is_stop = crate::moment::is_stop(moment);
    let json_answer = |value: Value| Answer {
        stdout: Some(value.to_string()),
        stderr: None,
        exit: 0,
    };
    let with_context = |mut specific: Map<String, Value>| {
        specific.insert(
            "hookEventName".into(),
            Value::String(agent_event_name.into()),
        );
        if let Some(context) = &context {
            specific.insert("additionalContext".into(), Value::String(context.clone()));
        }
        Value::Object(specific)
    };
    let Some(reason) = refusal else {
        return match context {
            None => Answer::nothing(),
            // At Stop, additionalContext reads as "keep going": what hooks add is shown to the user.
            Some(context) if is_stop => json_answer(json!({"systemMessage": context})),
            Some(_) => json_answer(json!({"hookSpecificOutput": with_context(Map::new())})),
        };
    };
    if !JSON_REFUSAL_MOMENTS.contains(&moment) {
        return Answer {
            stdout: None,
            stderr: Some(reason.to_string()),
            exit: 2,
        };
    }
    if is_stop {
        // The reason is what the agent is sent on to do; what hooks add follows it.
        let reason = match &context {
            Some(context) => format!("{reason}\n\n{context}"),
            None => reason.to_string(),
        };
        let decision = if agent == Agent::GeminiCli {
            "deny"
        } else {
            "block"
        };
        return json_answer(json!({"decision": decision, "reason": reason}));
    }
    let mut out = Map::new();
    match (agent, moment) {
        (Agent::GeminiCli, _) => {
            out.insert("decision".into(), json!("deny"));
            out.insert("reason".into(), json!(reason));
            if context.is_some() {
                out.insert("hookSpecificOutput".into(), with_context(Map::new()));
            }
        }
        (_, "PreToolUse") => {
            let mut specific = Map::new();
            specific.insert("permissionDecision".into(), json!("deny"));
            specific.insert("permissionDecisionReason".into(), json!(reason));
            out.insert("hookSpecificOutput".into(), with_context(specific));
        }
        (_, "PermissionRequest") => {
            let mut specific = Map::new();
            specific.insert(
                "decision".into(),
                json!({"behavior": "deny", "message": reason}),
            );
            out.insert("hookSpecificOutput".into(), with_context(specific));
        }
        _ => {
            out.insert("decision".into(), json!("block"));
            out.insert("reason".into(), json!(reason));
            if context.is_some() {
                out.insert("hookSpecificOutput".into(), with_context(Map::new()));
            }
        }
    }
    json_answer(Value::Object(out))
}

/// The daemon could not give a verdict: let the agent go on, saying so once on stderr, or with
/// `--fail-closed` refuse in the agent's dialect. `moment` is `None` when the input itself was unreadable;
/// `down` when the daemon is not running or did not answer in time.
///
/// A Stop is let through even with `--fail-closed`: refusing a Stop does not stop anything, it sends the
/// agent on working, and with no daemon there is no stop cap either. Seen with the real Codex: a daemon
/// gone mid-session made every Stop a refusal, 64 model calls in 3 s and no end (tests/e2e_codex.rs).
fn cannot_answer(
    options: &Options,
    moment: Option<(&str, &str)>,
    why: &str,
    down: bool,
) -> ExitCode {
    let stop = moment.is_some_and(|(moment, _)| crate::moment::is_stop(moment));
    if !options.fail_closed || stop {
        eprintln!("hookd relay: {why}; letting the agent go on (fail-open)");
        return ExitCode::SUCCESS;
    }
    let reason = if down {
        NOT_RUNNING.to_string()
    } else {
        format!("hookd could not answer: {why}")
    };
    match moment {
        Some((moment, agent_event_name)) => {
            answer(options.agent, moment, agent_event_name, Some(&reason), &[]).emit()
        }
        None => Answer {
            stdout: None,
            stderr: Some(reason),
            exit: 2,
        }
        .emit(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(answer: &Answer) -> Value {
        serde_json::from_str(answer.stdout.as_deref().expect("stdout")).expect("JSON")
    }

    #[test]
    fn claude_pre_tool_use_refusal_is_a_permission_deny() {
        let answer = answer(
            Agent::ClaudeCode,
            "PreToolUse",
            "PreToolUse",
            Some("no rm"),
            &[],
        );
        assert_eq!((answer.exit, answer.stderr.as_deref()), (0, None));
        assert_eq!(
            parsed(&answer),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no rm"}})
        );
    }

    #[test]
    fn claude_permission_request_refusal_denies_the_permission() {
        let answer = answer(
            Agent::Codex,
            "PermissionRequest",
            "PermissionRequest",
            Some("R"),
            &["T"],
        );
        assert_eq!(
            parsed(&answer),
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "R"}, "additionalContext": "T"}})
        );
    }

    #[test]
    fn block_moments_refuse_with_decision_block_and_keep_the_adds() {
        for moment in [
            "UserPromptSubmit",
            "PostToolUse",
            "PostToolUseFailure",
            "PreCompact",
        ] {
            let answer = answer(Agent::ClaudeCode, moment, moment, Some("R"), &["T1", "T2"]);
            assert_eq!(
                parsed(&answer),
                json!({"decision": "block", "reason": "R", "hookSpecificOutput": {"hookEventName": moment, "additionalContext": "T1\n\nT2"}}),
                "{moment}"
            );
        }
    }

    #[test]
    fn stop_refusals_carry_the_adds_after_the_reason() {
        for moment in ["Stop", "SubagentStop"] {
            let answer = answer(
                Agent::ClaudeCode,
                moment,
                moment,
                Some("tests fail"),
                &["T"],
            );
            assert_eq!(
                parsed(&answer),
                json!({"decision": "block", "reason": "tests fail\n\nT"})
            );
        }
    }

    #[test]
    fn stop_adds_without_refusal_go_to_the_user_not_the_model() {
        let answer = answer(Agent::ClaudeCode, "Stop", "Stop", None, &["T1", "T2"]);
        assert_eq!(parsed(&answer), json!({"systemMessage": "T1\n\nT2"}));
        let answer = super::answer(Agent::GeminiCli, "Stop", "AfterAgent", None, &["T"]);
        assert_eq!(parsed(&answer), json!({"systemMessage": "T"}));
    }

    #[test]
    fn other_moments_refuse_on_stderr_with_exit_2() {
        let answer = answer(
            Agent::ClaudeCode,
            "SessionStart",
            "SessionStart",
            Some("R"),
            &["T"],
        );
        assert_eq!(
            answer,
            Answer {
                stdout: None,
                stderr: Some("R".into()),
                exit: 2
            }
        );
    }

    #[test]
    fn adds_alone_are_additional_context() {
        let answer = answer(
            Agent::ClaudeCode,
            "UserPromptSubmit",
            "UserPromptSubmit",
            None,
            &["branch: main"],
        );
        assert_eq!(
            parsed(&answer),
            json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "branch: main"}})
        );
    }

    #[test]
    fn nothing_to_say_prints_nothing() {
        assert_eq!(
            answer(Agent::ClaudeCode, "PreToolUse", "PreToolUse", None, &[]),
            Answer::nothing()
        );
    }

    #[test]
    fn gemini_refusals_use_its_fields_and_event_names() {
        let answer = answer(
            Agent::GeminiCli,
            "PreToolUse",
            "BeforeTool",
            Some("R"),
            &["T"],
        );
        assert_eq!(
            parsed(&answer),
            json!({"decision": "deny", "reason": "R", "hookSpecificOutput": {"hookEventName": "BeforeTool", "additionalContext": "T"}})
        );
        let answer = super::answer(Agent::GeminiCli, "Stop", "AfterAgent", Some("R"), &[]);
        assert_eq!(parsed(&answer), json!({"decision": "deny", "reason": "R"}));
        let answer = super::answer(
            Agent::GeminiCli,
            "UserPromptSubmit",
            "BeforeAgent",
            None,
            &["T"],
        );
        assert_eq!(
            parsed(&answer),
            json!({"hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "T"}})
        );
    }

    #[test]
    fn gemini_input_gets_claude_names() {
        let input = include_str!("../tests/fixtures/agents/gemini-cli/BeforeTool.json");
        let (moment, event_name, event) = translate(Agent::GeminiCli, input).unwrap();
        assert_eq!(
            (moment.as_str(), event_name.as_str()),
            ("PreToolUse", "BeforeTool")
        );
        assert_eq!(event["tool_name"], "Bash");
        assert_eq!(event["agent_tool_name"], "run_shell_command");
    }

    #[test]
    fn claude_input_passes_through() {
        let input = include_str!("../tests/fixtures/agents/claude-code/PreToolUse-1.json");
        let (moment, _, event) = translate(Agent::ClaudeCode, input).unwrap();
        assert_eq!(moment, "PreToolUse");
        assert!(event.get("agent_tool_name").is_none());
        assert!(translate(Agent::ClaudeCode, "[]").is_err());
        assert!(
            translate(Agent::ClaudeCode, "{\"x\":1}")
                .unwrap_err()
                .contains("hook_event_name")
        );
    }
}
