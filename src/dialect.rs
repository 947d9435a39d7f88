//! The agents' hook dialects: their hook input read as a fire, and a verdict written back as the agent
//! reads it (contract 12). Pure: `hookd relay` (a process the agent starts) and the HTTP listener (an
//! agent's http hook) both answer through [`answer`], so the two cannot drift apart.

use serde_json::{Map, Value, json};

use crate::agents::{Agent, claude_tool_name};

/// How the answer reaches the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// A command hook: stdout, stderr and an exit status.
    Process,
    /// An http hook: a response body and nothing else. HTTP has no exit status, so where a process
    /// refuses with exit 2 and stderr, the body says it in JSON: `systemMessage` (what Claude Code shows
    /// the user for an exit 2 at those moments), or Gemini CLI's `decision: "deny"`.
    Http,
}

/// Moments where a refusal goes out as JSON on stdout with exit 0; at the others a process refuses with
/// stderr and exit 2 (over HTTP, see [`Transport::Http`]).
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

/// What the agent reads: for a process (the relay), what it prints and how it exits; over HTTP, `stdout`
/// is the response body and the rest is always empty and 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    pub exit: u8,
}

impl Answer {
    pub fn nothing() -> Answer {
        Answer {
            stdout: None,
            stderr: None,
            exit: 0,
        }
    }
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

/// The reason to give the agent for a verdict: `None` when not refused; a refusal with no reason (or a
/// blank one) still gets one, since Gemini CLI and Codex let a refusal without a reason through.
pub fn refusal(refused: bool, reason: Option<&str>) -> Option<&str> {
    refused.then(|| {
        reason
            .filter(|r| !r.trim().is_empty())
            .unwrap_or("refused by hookd")
    })
}

/// The verdict in the agent's dialect (the table of contract 12). `refusal` is the reason when refused.
pub fn answer(
    agent: Agent,
    moment: &str,
    agent_event_name: &str,
    refusal: Option<&str>,
    adds: &[&str],
    transport: Transport,
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
        return match (transport, agent) {
            (Transport::Process, _) => Answer {
                stdout: None,
                stderr: Some(reason.to_string()),
                exit: 2,
            },
            (Transport::Http, Agent::GeminiCli) => {
                let mut out = Map::new();
                out.insert("decision".into(), json!("deny"));
                out.insert("reason".into(), json!(reason));
                if context.is_some() {
                    out.insert("hookSpecificOutput".into(), with_context(Map::new()));
                }
                json_answer(Value::Object(out))
            }
            (Transport::Http, _) => {
                let mut out = Map::new();
                out.insert("systemMessage".into(), json!(reason));
                if context.is_some() {
                    out.insert("hookSpecificOutput".into(), with_context(Map::new()));
                }
                json_answer(Value::Object(out))
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer of a process (the relay's).
    fn answer(
        agent: Agent,
        moment: &str,
        event_name: &str,
        refusal: Option<&str>,
        adds: &[&str],
    ) -> Answer {
        super::answer(agent, moment, event_name, refusal, adds, Transport::Process)
    }

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
        let answer = self::answer(Agent::GeminiCli, "Stop", "AfterAgent", None, &["T"]);
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
        let answer = self::answer(Agent::GeminiCli, "Stop", "AfterAgent", Some("R"), &[]);
        assert_eq!(parsed(&answer), json!({"decision": "deny", "reason": "R"}));
        let answer = self::answer(
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

    #[test]
    fn over_http_every_refusal_is_json() {
        for agent in Agent::ALL {
            for moment in crate::moment::KNOWN.iter().map(|m| m.name) {
                let answer =
                    super::answer(agent, moment, moment, Some("R"), &["T"], Transport::Http);
                assert_eq!(
                    (answer.exit, answer.stderr.as_deref()),
                    (0, None),
                    "{moment}"
                );
                // The reason is a value of the body, or starts one (what hooks add may follow it); a
                // key would not do.
                fn holds(value: &Value, text: &str) -> bool {
                    match value {
                        Value::String(s) => s.starts_with(text),
                        Value::Object(map) => map.values().any(|v| holds(v, text)),
                        Value::Array(items) => items.iter().any(|v| holds(v, text)),
                        _ => false,
                    }
                }
                let body = parsed(&answer);
                assert!(holds(&body, "R"), "{agent:?} {moment}: {body}");
            }
        }
    }

    #[test]
    fn over_http_an_exit_2_moment_refuses_with_a_system_message() {
        let answer = super::answer(
            Agent::ClaudeCode,
            "SessionStart",
            "SessionStart",
            Some("R"),
            &["T"],
            Transport::Http,
        );
        assert_eq!(
            parsed(&answer),
            json!({"systemMessage": "R", "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "T"}})
        );
        let answer = super::answer(
            Agent::GeminiCli,
            "SessionStart",
            "SessionStart",
            Some("R"),
            &[],
            Transport::Http,
        );
        assert_eq!(parsed(&answer), json!({"decision": "deny", "reason": "R"}));
    }

    #[test]
    fn over_http_json_moments_answer_as_the_relay_does() {
        for moment in ["PreToolUse", "UserPromptSubmit", "Stop", "PostToolUse"] {
            for refusal in [None, Some("R")] {
                assert_eq!(
                    super::answer(
                        Agent::ClaudeCode,
                        moment,
                        moment,
                        refusal,
                        &["T"],
                        Transport::Http
                    ),
                    answer(Agent::ClaudeCode, moment, moment, refusal, &["T"]),
                    "{moment} {refusal:?}"
                );
            }
        }
    }
}
