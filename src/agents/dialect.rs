//! The agents' hook dialects: their hook input read as a fire, and a verdict written back as the agent
//! reads it (docs/agents.md, the agents' answers). What differs per agent is read from its row
//! ([`crate::agent::AGENTS`]: its names, its tools, its [`Dialect`]) and the moment's row
//! ([`crate::moment::KNOWN`]: its [`Shape`]); the code here has one arm per dialect and shape. Pure: `hookd relay` (a process the agent starts) and the HTTP listener (an
//! agent's http hook) both answer through [`answer`], so the two cannot drift apart.

use serde_json::{Map, Value, json};

use crate::agents::{Agent, Dialect};
use crate::head::{EVENT_FIELDS, Head, Scanner};
use crate::limits::MAX_DEPTH;
use crate::moment::Shape;
use crate::protocol::Event;

/// How the answer reaches the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// A command hook: stdout, stderr and an exit status.
    Process,
    /// An http hook: a response body and nothing else. HTTP has no exit status, so where a process
    /// refuses with exit 2 and stderr ([`Shape::ExitTwo`]), the body says it in JSON: `systemMessage`
    /// (what Claude Code shows the user for an exit 2 at those moments), or Gemini CLI's `decision: "deny"`.
    Http,
}

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

/// An agent's hook input, read as a fire.
#[derive(Debug, Clone, PartialEq)]
pub struct Translated {
    /// hookd's name for the moment.
    pub moment: String,
    /// The agent's own name for it (`hook_event_name`), to answer in.
    pub event_name: String,
    pub event: Event,
}

/// The agent's hook input as a fire: the moment, the agent's own name for it, and the event. Gemini CLI's
/// moments and tools are renamed to Claude Code's, keeping the tool's own name in `agent_tool_name`, so
/// that one matcher serves every agent.
///
/// `input` is at most [`MAX_EVENT`](crate::limits::MAX_EVENT) bytes (past that, see [`translate_head`]). Lone
/// surrogate escapes are read as U+FFFD, bytes that are not UTF-8 as U+FFFD; an input nested deeper than
/// serde_json reads is translated from its head, as undecidable (its hooks are read as failed).
pub fn translate(agent: Agent, input: &[u8]) -> Result<Translated, String> {
    // A byte-order mark is no part of the JSON (a tool or a shell may put one in front of it).
    let input = input.strip_prefix(b"\xef\xbb\xbf").unwrap_or(input);
    // An agent's own text, not UTF-8 somewhere (a file's bytes in a tool input): read as the nearest
    // UTF-8 rather than let the event through undecided. Whatever else is wrong with it is then judged
    // on that text: nested too deep, it is still decided from its head.
    let mended;
    let input = match std::str::from_utf8(input) {
        Ok(_) => input,
        Err(_) => {
            mended = String::from_utf8_lossy(input);
            mended.as_bytes()
        }
    };
    let value = match crate::head::parse(input) {
        Ok(value) => value,
        Err(e) if crate::head::too_deep(&e) => {
            let why = format!("the event is nested deeper than {} levels", MAX_DEPTH);
            return translate_head(agent, Scanner::scan(EVENT_FIELDS, None, input), why);
        }
        Err(e) => return Err(format!("the hook input is not JSON: {e}")),
    };
    let Value::Object(event) = value else {
        return Err("the hook input is not a JSON object".into());
    };
    let (moment, event_name, fields) = translate_object(agent, event)?;
    Ok(Translated {
        moment,
        event_name,
        event: fields.into(),
    })
}

/// An input that cannot be decoded whole (`why`: too large, too deep) as an undecidable fire, from what
/// its head holds ([`EVENT_FIELDS`]).
pub fn translate_head(agent: Agent, head: Head, why: String) -> Result<Translated, String> {
    if !head.object {
        return Err(format!("the hook input is not a JSON object ({why})"));
    }
    let (moment, event_name, fields) =
        translate_object(agent, head.fields).map_err(|e| format!("{e} ({why})"))?;
    Ok(Translated {
        moment,
        event_name,
        event: Event {
            fields,
            undecidable: Some(why),
            large: false,
            busy: false,
        },
    })
}

fn translate_object(
    agent: Agent,
    mut event: Map<String, Value>,
) -> Result<(String, String, Map<String, Value>), String> {
    let Some(event_name) = event
        .get("hook_event_name")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return Err("the hook input has no hook_event_name".into());
    };
    let moment = agent.moment_of(&event_name);
    if let Some(tool) = event
        .get("tool_name")
        .and_then(Value::as_str)
        .map(str::to_string)
        && let Some(claude_name) = agent.claude_tool_name(&tool)
    {
        event.insert("agent_tool_name".into(), Value::String(tool));
        event.insert("tool_name".into(), Value::String(claude_name.into()));
    }
    Ok((moment, event_name, event))
}

/// For an event the daemon has no moment for (`unknown_moment`): `None` when it is a real event of this
/// agent that nobody hangs hooks on (nothing to say), else what is wrong, naming the `--agent` that sends
/// such events or the event that was likely meant. The agent's event names are few and known here, so a
/// wrong `--agent` or a misspelt name is told from an event that is merely not watched.
pub fn unknown_event(agent: Agent, event_name: &str) -> Option<String> {
    let own = agent.event_names();
    if own.contains(&event_name) {
        return None;
    }
    let shown = crate::moment::shown(event_name);
    let head = format!("\"{shown}\" is not an event {} sends", agent.name());
    for other in Agent::ALL.into_iter().filter(|other| *other != agent) {
        if other.event_names().contains(&event_name) {
            let moment = other.moment_of(event_name);
            let what = if moment == event_name {
                format!("it is {}'s", other.display_name())
            } else {
                format!("it is {}'s name for {moment}", other.display_name())
            };
            return Some(format!("{head}; {what}: use --agent {}", other.name()));
        }
    }
    match crate::moment::did_you_mean(event_name, own.iter().copied()) {
        Some(meant) => Some(format!("{head} (did you mean \"{meant}\"?)")),
        None => Some(format!(
            "{head}, and the daemon has no moment of that name (its events are: {})",
            own.join(", ")
        )),
    }
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

/// The verdict in the agent's dialect: the moment's [`Shape`] as the agent's [`Dialect`] writes it
/// (docs/agents.md, the agents' answers). `refusal` is the reason when refused.
pub fn answer(
    agent: Agent,
    moment: &str,
    agent_event_name: &str,
    refusal: Option<&str>,
    adds: &[&str],
    transport: Transport,
) -> Answer {
    let context = (!adds.is_empty()).then(|| adds.join("\n\n"));
    let shape = crate::moment::answer(moment);
    let dialect = agent.dialect();
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
            Some(context) if matches!(shape, Shape::Stop | Shape::BlockAlone) => {
                json_answer(json!({"systemMessage": context}))
            }
            Some(_) => json_answer(json!({"hookSpecificOutput": with_context(Map::new())})),
        };
    };
    // The word of a JSON refusal.
    let decision = match dialect {
        Dialect::ClaudeCode => "block",
        Dialect::GeminiCli => "deny",
    };
    let mut out = Map::new();
    match (shape, dialect) {
        (Shape::ExitTwo, _) if transport == Transport::Process => {
            return Answer {
                stdout: None,
                stderr: Some(reason.to_string()),
                exit: 2,
            };
        }
        // Over HTTP, what Claude Code shows the user for an exit 2 at those moments.
        (Shape::ExitTwo, Dialect::ClaudeCode) => {
            out.insert("systemMessage".into(), json!(reason));
            if context.is_some() {
                out.insert("hookSpecificOutput".into(), with_context(Map::new()));
            }
        }
        (Shape::Stop | Shape::BlockAlone, _) => {
            // The reason is what the agent is sent on to do; what hooks add follows it.
            let reason = match &context {
                Some(context) => format!("{reason}\n\n{context}"),
                None => reason.to_string(),
            };
            return json_answer(json!({"decision": decision, "reason": reason}));
        }
        (Shape::PermissionDecision, Dialect::ClaudeCode) => {
            let mut specific = Map::new();
            specific.insert("permissionDecision".into(), json!("deny"));
            specific.insert("permissionDecisionReason".into(), json!(reason));
            out.insert("hookSpecificOutput".into(), with_context(specific));
        }
        (Shape::PermissionBehavior, Dialect::ClaudeCode) => {
            let mut specific = Map::new();
            specific.insert(
                "decision".into(),
                json!({"behavior": "deny", "message": reason}),
            );
            out.insert("hookSpecificOutput".into(), with_context(specific));
        }
        (Shape::Decline, Dialect::ClaudeCode) => {
            // Claude Code gives the user's side of an MCP elicitation a decline, with the reason.
            out.insert("reason".into(), json!(reason));
            let mut specific = Map::new();
            specific.insert("action".into(), json!("decline"));
            out.insert("hookSpecificOutput".into(), with_context(specific));
        }
        // Gemini CLI refuses every moment alike; over HTTP even where a process would exit 2.
        (Shape::Block, _) | (_, Dialect::GeminiCli) => {
            out.insert("decision".into(), json!(decision));
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

    #[test]
    fn an_input_too_deep_and_not_utf8_is_still_decided_from_its_head() {
        // Found attacking issue 12's fixes: one stray byte before the deep part made the input "not
        // JSON", and the relay let it through.
        let mut input = b"{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"x\":\"\xff\",\"deep\":".to_vec();
        input.extend(std::iter::repeat_n(b'[', 10_000));
        input.extend(std::iter::repeat_n(b']', 10_000));
        input.extend(b"}}");
        let translated = translate(Agent::ClaudeCode, &input).expect("decided");
        assert_eq!(translated.moment, "PreToolUse");
        assert_eq!(translated.event.fields["tool_name"], "Bash");
        assert!(
            translated
                .event
                .undecidable
                .unwrap()
                .contains("deeper than 128")
        );
    }

    #[test]
    fn a_byte_order_mark_is_no_part_of_the_input() {
        let input = b"\xef\xbb\xbf{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\"}";
        let translated = translate(Agent::ClaudeCode, input).expect("decided");
        assert_eq!(translated.event.fields["tool_name"], "Bash");
        assert!(translated.event.undecidable.is_none());
    }

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
        for moment in ["UserPromptSubmit", "PostToolUse", "PostToolUseFailure"] {
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
    fn an_elicitation_refused_is_declined_with_the_reason() {
        for moment in ["Elicitation", "ElicitationResult"] {
            for transport in [Transport::Process, Transport::Http] {
                let answer =
                    super::answer(Agent::ClaudeCode, moment, moment, Some("R"), &[], transport);
                assert_eq!(
                    parsed(&answer),
                    json!({"reason": "R", "hookSpecificOutput": {"hookEventName": moment, "action": "decline"}}),
                    "{moment}"
                );
            }
        }
    }

    #[test]
    fn claude_codes_other_moments_refuse_in_the_shape_it_reads_there() {
        for moment in ["PreModelSwitch", "PreSkillShellCommand"] {
            let answer = answer(Agent::ClaudeCode, moment, moment, Some("R"), &[]);
            assert_eq!(
                parsed(&answer)["hookSpecificOutput"]["permissionDecision"],
                "deny",
                "{moment}"
            );
        }
        for moment in ["UserPromptExpansion", "PostToolBatch"] {
            let answer = answer(Agent::ClaudeCode, moment, moment, Some("R"), &["T"]);
            assert_eq!(
                parsed(&answer),
                json!({"decision": "block", "reason": "R", "hookSpecificOutput": {"hookEventName": moment, "additionalContext": "T"}}),
                "{moment}"
            );
        }
        // Claude Code's schema has no hookSpecificOutput for these: nothing the refusal rides on may be
        // out of it, and what hooks add goes to the user. Found in issue 14: an answer naming one
        // (PreCompact's) is read as plain text, and a refusal with something added was lost.
        for moment in [
            "TaskCompleted",
            "TeammateIdle",
            "TaskCreated",
            "ConfigChange",
            "PreCompact",
        ] {
            let added = answer(Agent::ClaudeCode, moment, moment, None, &["T"]);
            assert_eq!(parsed(&added), json!({"systemMessage": "T"}), "{moment}");
            let answer = answer(Agent::ClaudeCode, moment, moment, Some("R"), &["T"]);
            assert_eq!(
                parsed(&answer),
                json!({"decision": "block", "reason": "R\n\nT"}),
                "{moment}"
            );
        }
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
        let input = include_str!("../../tests/fixtures/agents/gemini-cli/BeforeTool.json");
        let t = translate(Agent::GeminiCli, input.as_bytes()).unwrap();
        assert_eq!(
            (t.moment.as_str(), t.event_name.as_str()),
            ("PreToolUse", "BeforeTool")
        );
        assert_eq!(t.event.fields["tool_name"], "Bash");
        assert_eq!(t.event.fields["agent_tool_name"], "run_shell_command");
        assert_eq!(t.event.undecidable, None);
    }

    #[test]
    fn claude_input_passes_through() {
        let input = include_str!("../../tests/fixtures/agents/claude-code/PreToolUse-1.json");
        let t = translate(Agent::ClaudeCode, input.as_bytes()).unwrap();
        assert_eq!(t.moment, "PreToolUse");
        assert!(t.event.fields.get("agent_tool_name").is_none());
        assert!(translate(Agent::ClaudeCode, b"[]").is_err());
        assert!(
            translate(Agent::ClaudeCode, b"{\"x\":1}")
                .unwrap_err()
                .contains("hook_event_name")
        );
    }

    #[test]
    fn lone_surrogates_and_bytes_that_are_not_utf8_are_read_as_replacements() {
        let input =
            br#"{"hook_event_name":"PreToolUse","tool_input":{"command":"rm -rf / \ud800"}}"#;
        let t = translate(Agent::ClaudeCode, input).unwrap();
        assert_eq!(t.event.fields["tool_input"]["command"], "rm -rf / \u{fffd}");
        let input = b"{\"hook_event_name\":\"PreToolUse\",\"x\":\"\xff\"}";
        let t = translate(Agent::ClaudeCode, input).unwrap();
        assert_eq!(t.event.fields["x"], "\u{fffd}");
    }

    #[test]
    fn too_deep_input_is_translated_from_its_head_as_undecidable() {
        let depth = 10_000;
        let input = format!(
            r#"{{"hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{}{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let t = translate(Agent::GeminiCli, input.as_bytes()).unwrap();
        assert_eq!(t.moment, "PreToolUse");
        assert_eq!(t.event.fields["tool_name"], "Write");
        assert_eq!(t.event.fields["agent_tool_name"], "write_file");
        assert!(t.event.undecidable.unwrap().contains("deeper than 128"));
        let no_name = format!(
            r#"{{"tool_input":{}{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        assert!(
            translate(Agent::ClaudeCode, no_name.as_bytes())
                .unwrap_err()
                .contains("hook_event_name")
        );
    }

    #[test]
    fn unknown_events_name_the_agent_or_the_event_meant() {
        assert_eq!(
            unknown_event(Agent::ClaudeCode, "BeforeTool").unwrap(),
            "\"BeforeTool\" is not an event claude-code sends; it is Gemini CLI's name for PreToolUse: use --agent gemini-cli"
        );
        assert_eq!(
            unknown_event(Agent::ClaudeCode, "PreTooluse").unwrap(),
            "\"PreTooluse\" is not an event claude-code sends (did you mean \"PreToolUse\"?)"
        );
        assert!(
            unknown_event(Agent::Codex, "BeforeModel")
                .unwrap()
                .contains("use --agent gemini-cli")
        );
        assert!(
            unknown_event(Agent::GeminiCli, "PermissionRequest")
                .unwrap()
                .contains("use --agent claude-code")
        );
        assert!(
            unknown_event(Agent::ClaudeCode, "Zzz")
                .unwrap()
                .contains("Zzz")
        );
        // Real events of the agent, merely not watched: nothing to say.
        assert_eq!(unknown_event(Agent::GeminiCli, "BeforeModel"), None);
        assert_eq!(unknown_event(Agent::GeminiCli, "BeforeTool"), None);
        assert_eq!(unknown_event(Agent::ClaudeCode, "SubagentStart"), None);
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
