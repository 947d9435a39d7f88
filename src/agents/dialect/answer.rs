//! A verdict written back as the agent reads it (docs/agents.md, the agents' answers): the moment's
//! [`Shape`] as the agent's [`Dialect`] writes it, with what the agent can do of allow, ask and rewrites
//! ([`Powers`](crate::agent::Powers)). What differs per agent is read from its row
//! ([`crate::agent::AGENTS`]) and the moment's ([`crate::moment::KNOWN`]); the code here has one arm per
//! dialect and shape. Pure: `hookd relay` (a process the agent starts) and the HTTP listener (an agent's
//! http hook) both answer through [`answer_verdict`], so the two cannot drift apart.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use crate::agent::{InputRewrite, OutputRewrite};
use crate::agents::dialect::input::{CarryBack, agent_input};
use crate::agents::{Agent, Dialect};
use crate::decision::{Permission, Verdict};
use crate::moment::Shape;

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

/// The verdict as Copilot CLI's native hooks read it (checked with 1.0.102): flat JSON at the top level.
/// preToolUse `permissionDecision: "deny"` + `permissionDecisionReason`; permissionRequest `behavior:
/// "deny"` + `message`; agentStop and subagentStop `decision: "block"` + `reason` (sent on, the reason as
/// the next user message); userPromptSubmitted `decision: "block"` + `reason`; `additionalContext` where
/// Copilot takes it. Elsewhere a refusal is only a failed hook to Copilot: stderr and exit 2 (never exit 1,
/// which Copilot reads as a block too, so that no answer meant to let it go on can be read as one).
fn copilot_answer(
    shape: Shape,
    refusal: Option<&str>,
    context: Option<String>,
    transport: Transport,
) -> Answer {
    let json_answer = |value: Map<String, Value>| Answer {
        stdout: Some(Value::Object(value).to_string()),
        stderr: None,
        exit: 0,
    };
    let mut out = Map::new();
    let Some(reason) = refusal else {
        // At a stop, context reads as "keep going", and Copilot has nowhere to show it to the user.
        if let Some(context) = context.filter(|_| shape != Shape::Stop) {
            out.insert("additionalContext".into(), json!(context));
            return json_answer(out);
        }
        return Answer::nothing();
    };
    match shape {
        Shape::Stop => {
            let reason = match &context {
                Some(context) => format!("{reason}\n\n{context}"),
                None => reason.to_string(),
            };
            out.insert("decision".into(), json!("block"));
            out.insert("reason".into(), json!(reason));
            return json_answer(out);
        }
        Shape::PermissionDecision => {
            out.insert("permissionDecision".into(), json!("deny"));
            out.insert("permissionDecisionReason".into(), json!(reason));
        }
        Shape::PermissionBehavior => {
            out.insert("behavior".into(), json!("deny"));
            out.insert("message".into(), json!(reason));
        }
        Shape::ExitTwo if transport == Transport::Process => {
            return Answer {
                stdout: None,
                stderr: Some(reason.to_string()),
                exit: 2,
            };
        }
        // Copilot CLI has no elicitations, and no schema that a context beside a block would fail.
        Shape::Block | Shape::ExitTwo | Shape::BlockAlone | Shape::Decline => {
            out.insert("decision".into(), json!("block"));
            out.insert("reason".into(), json!(reason));
        }
    }
    if let Some(context) = context {
        out.insert("additionalContext".into(), json!(context));
    }
    json_answer(out)
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
    let mut context = (!adds.is_empty()).then(|| adds.join("\n\n"));
    // Where the agent would read `additionalContext` as a failed hook (Codex at PermissionRequest), what
    // hooks add follows the reason of a refusal, as at Stop, and is left out otherwise: a refusal must
    // never be lost for a text beside it.
    let folded = context
        .take_if(|_| agent.rejects_context(moment))
        .and_then(|added| refusal.map(|reason| format!("{reason}\n\n{added}")));
    let refusal = folded.as_deref().or(refusal);
    let shape = crate::moment::answer(moment);
    let dialect = agent.dialect();
    // Where the agent only takes advice, a refusal would be ignored: said as what it is instead.
    if let Some(reason) = refusal
        && agent.advisory(moment)
    {
        return advisory_refusal(agent, agent_event_name, reason, context, transport);
    }
    if dialect == Dialect::CopilotCli {
        return copilot_answer(shape, refusal, context, transport);
    }
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
        Dialect::CopilotCli => unreachable!("answered by copilot_answer above"),
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
        // (Copilot CLI is answered by copilot_answer above.)
        (Shape::Block, _) | (_, Dialect::GeminiCli) | (_, Dialect::CopilotCli) => {
            out.insert("decision".into(), json!(decision));
            out.insert("reason".into(), json!(reason));
            if context.is_some() {
                out.insert("hookSpecificOutput".into(), with_context(Map::new()));
            }
        }
    }
    json_answer(Value::Object(out))
}

/// The verdict as said to an agent: its rewritten input carried back into the agent's own terms
/// ([`agent_input`]), or, where it cannot be, a refusal that says why (a rewrite that cannot reach the
/// agent is refused, never run as it was before the rewrite). Borrowed when there is nothing to carry.
pub fn in_agents_terms<'a>(
    verdict: &'a Verdict,
    carry_back: Option<&CarryBack>,
) -> Cow<'a, Verdict> {
    match (&verdict.input, carry_back) {
        (Some(input), Some(carry_back)) if !verdict.refused || verdict.asks() => {
            match agent_input(carry_back, input) {
                Ok(input) => Cow::Owned(Verdict {
                    input: Some(input),
                    ..verdict.clone()
                }),
                Err(why) => Cow::Owned(Verdict::refusal(why)),
            }
        }
        _ => Cow::Borrowed(verdict),
    }
}

/// A fire's verdict as `agent` is answered, by the relay (a process) or over HTTP: its rewritten input
/// carried back into the agent's terms ([`in_agents_terms`]), in the agent's dialect
/// ([`answer_verdict`]).
pub fn answer_to(
    agent: Agent,
    moment: &str,
    agent_event_name: &str,
    verdict: &Verdict,
    carry_back: Option<&CarryBack>,
    transport: Transport,
) -> Answer {
    let said = in_agents_terms(verdict, carry_back);
    answer_verdict(agent, moment, agent_event_name, &said, transport)
}

/// The verdict in the agent's dialect, with what the agent can do of allow, ask and rewrites
/// ([`Powers`](crate::agent::Powers)): what it says weighed against what the agent can do where it is
/// asked ([`reply`]), then written (a plain refusal or adds as [`answer`], with a rewritten output where
/// there is one; an allow, an ask or a rewritten input as [`permission_answer`]).
pub fn answer_verdict(
    agent: Agent,
    moment: &str,
    agent_event_name: &str,
    verdict: &Verdict,
    transport: Transport,
) -> Answer {
    let adds: Vec<&str> = verdict.adds.iter().map(String::as_str).collect();
    match reply(agent, moment, verdict) {
        Reply::Plain(reason) => {
            let rewritten_output = verdict
                .output
                .as_ref()
                .filter(|_| crate::moment::rewrites_output(moment));
            match rewritten_output {
                Some(output) => output_answer(
                    agent,
                    moment,
                    agent_event_name,
                    output,
                    reason.as_deref(),
                    &adds,
                    transport,
                ),
                None => answer(
                    agent,
                    moment,
                    agent_event_name,
                    reason.as_deref(),
                    &adds,
                    transport,
                ),
            }
        }
        Reply::Permission {
            word,
            reason,
            input,
        } => permission_answer(agent, agent_event_name, word, reason, input, &adds),
    }
}

/// What a verdict says, at its strongest, for the table of [`reply`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Says {
    Refuses,
    Asks,
    /// Rewrites the tool input (and may allow it too).
    Rewrites,
    Allows,
    /// Nothing past what hooks add (and a rewritten output, which every answer carries).
    Nothing,
}

/// Where the agent asks: before a tool runs (an allow, an ask and a rewritten input have their fields
/// there), at its permission request, or elsewhere (only a refusal and adds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    BeforeTool,
    PermissionRequest,
    Elsewhere,
}

/// What the agent is told.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Reply<'a> {
    /// [`answer`]'s: a refusal with this reason, or (`None`) only what hooks add.
    Plain(Option<Cow<'a, str>>),
    /// [`permission_answer`]'s: allow or ask (`word`; `None`: a rewrite alone), with the input to run.
    Permission {
        word: Option<&'static str>,
        reason: Option<&'a str>,
        input: Option<&'a Value>,
    },
}

/// The table: what the verdict says x what the agent can do where it is asked. Where the agent cannot
/// do what the verdict says, the safe side: an ask it cannot ask is a refusal that says approval is
/// needed; an allow it ignores is not sent; a rewritten input it cannot take refuses the call, giving the
/// call as rewritten; a rewrite it takes only with an allow is sent with one (no hook asked for caution,
/// or this would be an ask or a refusal).
fn reply<'a>(agent: Agent, moment: &str, verdict: &'a Verdict) -> Reply<'a> {
    let powers = agent.powers();
    let place = match crate::moment::answer(moment) {
        Shape::PermissionDecision => Place::BeforeTool,
        Shape::PermissionBehavior => Place::PermissionRequest,
        _ => Place::Elsewhere,
    };
    let input = verdict.input.as_ref().filter(|_| place != Place::Elsewhere);
    let allowed = verdict.permission == Some(Permission::Allow);
    let reason = verdict.reason.as_deref();
    let says = match () {
        _ if verdict.asks() => Says::Asks,
        _ if verdict.refused => Says::Refuses,
        _ if input.is_some() => Says::Rewrites,
        _ if allowed => Says::Allows,
        _ => Says::Nothing,
    };
    let asked = || refusal(true, reason).unwrap_or_default();
    let refuse = |why: String| Reply::Plain(Some(Cow::Owned(why)));
    let instead = |input: &Value| {
        refuse(format!(
            "hookd: the hooks rewrote this call, and {} cannot run a rewritten call here: make this \
             call instead: {input}",
            agent.display_name()
        ))
    };
    let permission = |word, reason, input| Reply::Permission {
        word,
        reason,
        input,
    };
    match (says, place, input) {
        (Says::Refuses, _, _) => Reply::Plain(refusal(true, reason).map(Cow::Borrowed)),
        (Says::Asks, Place::BeforeTool, _)
            if powers.ask
                && !agent.advisory(moment)
                && (input.is_none() || powers.input == InputRewrite::Alone) =>
        {
            permission(Some("ask"), Some(asked()), input)
        }
        // The agent is about to ask the user: saying nothing lets it.
        (Says::Asks, Place::PermissionRequest, None) => Reply::Plain(None),
        // Asked about, the call as the agent made it would run once approved: not the one hooks
        // rewrote it to.
        (Says::Asks, _, Some(input)) => refuse(format!(
            "{} (a hook asks for a person's approval of this call as hooks rewrote it, and {} \
             cannot ask about a rewritten call: refused; make this call instead, for approval: {input})",
            asked(),
            agent.display_name()
        )),
        (Says::Asks, _, None) => refuse(format!(
            "{} (a hook asks for a person's approval of this call, and {} cannot ask for it \
             here: refused)",
            asked(),
            agent.display_name()
        )),
        (Says::Rewrites, Place::PermissionRequest, Some(input))
            if allowed
                && powers.input == InputRewrite::Alone
                && agent.dialect() == Dialect::ClaudeCode =>
        {
            permission(Some("allow"), reason, Some(input))
        }
        (Says::Rewrites, Place::PermissionRequest, Some(input)) => instead(input),
        (Says::Rewrites, _, Some(input)) => match powers.input {
            InputRewrite::Refused => instead(input),
            InputRewrite::Alone => permission(
                (allowed && powers.allow).then_some("allow"),
                reason,
                Some(input),
            ),
            InputRewrite::WithAllow => permission(Some("allow"), reason, Some(input)),
        },
        (Says::Allows, Place::BeforeTool, _) if powers.allow => {
            permission(Some("allow"), reason, None)
        }
        (Says::Allows, Place::PermissionRequest, _) => permission(Some("allow"), reason, None),
        (Says::Rewrites, _, None) | (Says::Allows, _, _) | (Says::Nothing, _, _) => {
            Reply::Plain(None)
        }
    }
}

/// An allow or an ask (`word`; `None`: a rewrite alone), with the rewritten input where there is one, as
/// the agent's dialect writes it before a tool runs or at a permission request.
fn permission_answer(
    agent: Agent,
    agent_event_name: &str,
    word: Option<&str>,
    reason: Option<&str>,
    input: Option<&Value>,
    adds: &[&str],
) -> Answer {
    let moment = agent.moment_of(agent_event_name);
    // Where the agent reads `additionalContext` as a failed hook (Codex at PermissionRequest), what hooks
    // add is left out: beside it, the allow would be lost.
    let context = (!adds.is_empty() && !agent.rejects_context(&moment)).then(|| adds.join("\n\n"));
    let permission_request = moment == crate::moment::PERMISSION_REQUEST;
    let mut out = Map::new();
    match agent.dialect() {
        Dialect::CopilotCli => {
            if permission_request {
                if let Some(word) = word {
                    out.insert("behavior".into(), json!(word));
                }
            } else {
                if let Some(word) = word {
                    out.insert("permissionDecision".into(), json!(word));
                    if let Some(reason) = reason {
                        out.insert("permissionDecisionReason".into(), json!(reason));
                    }
                }
                if let Some(input) = input {
                    out.insert("modifiedArgs".into(), input.clone());
                }
            }
            if let Some(context) = context {
                out.insert("additionalContext".into(), json!(context));
            }
        }
        dialect => {
            let mut specific = Map::new();
            specific.insert("hookEventName".into(), json!(agent_event_name));
            if permission_request {
                let mut decision = Map::new();
                if let Some(word) = word {
                    decision.insert("behavior".into(), json!(word));
                }
                if let Some(input) = input {
                    decision.insert("updatedInput".into(), input.clone());
                }
                specific.insert("decision".into(), Value::Object(decision));
            } else {
                if let Some(word) = word {
                    specific.insert("permissionDecision".into(), json!(word));
                    if let Some(reason) = reason {
                        specific.insert("permissionDecisionReason".into(), json!(reason));
                    }
                }
                if let Some(input) = input {
                    let key = match dialect {
                        Dialect::GeminiCli => "tool_input",
                        _ => "updatedInput",
                    };
                    specific.insert(key.into(), input.clone());
                }
            }
            if let Some(context) = context {
                specific.insert("additionalContext".into(), json!(context));
            }
            out.insert("hookSpecificOutput".into(), Value::Object(specific));
        }
    }
    Answer {
        stdout: Some(Value::Object(out).to_string()),
        stderr: None,
        exit: 0,
    }
}

/// A rewritten tool output as the agent takes one ([`OutputRewrite`]), beside `refusal` when the verdict
/// refused after the tool ran: a refusal there cannot undo the call, and without the rewrite the model
/// would see the output as it was (the secret a redaction hid).
fn output_answer(
    agent: Agent,
    moment: &str,
    agent_event_name: &str,
    output: &Value,
    refusal: Option<&str>,
    adds: &[&str],
    transport: Transport,
) -> Answer {
    let plain =
        |reason: Option<&str>| answer(agent, moment, agent_event_name, reason, adds, transport);
    let base = match agent.powers().output {
        // All the model sees of the result is the reason of a block: the refusal's, else the output.
        OutputRewrite::AsReason => {
            return plain(Some(refusal.unwrap_or(&model_text(output))));
        }
        // The stopReason is what the model gets as the result: the refusal, then the output.
        OutputRewrite::ContinueFalse => {
            let text = model_text(output);
            let mut out = Map::new();
            out.insert("continue".into(), json!(false));
            let (stop_reason, stderr) = match refusal {
                Some(reason) => (format!("{reason}\n\n{text}"), plain(Some(reason)).stderr),
                None => (text, None),
            };
            out.insert("stopReason".into(), json!(stop_reason));
            if refusal.is_none() && !adds.is_empty() {
                out.insert(
                    "hookSpecificOutput".into(),
                    json!({"hookEventName": agent_event_name, "additionalContext": adds.join("\n\n")}),
                );
            }
            return Answer {
                stdout: Some(Value::Object(out).to_string()),
                stderr,
                exit: 0,
            };
        }
        OutputRewrite::Shaped | OutputRewrite::CopilotResult => plain(refusal),
    };
    if refusal.is_some() && base.stdout.is_none() {
        // A refusal on stderr and exit 2, kept as it is.
        return base;
    }
    let mut object = match base.stdout.as_deref().map(serde_json::from_str::<Value>) {
        Some(Ok(Value::Object(object))) => object,
        _ => Map::new(),
    };
    if agent.powers().output == OutputRewrite::CopilotResult {
        object.insert("modifiedResult".into(), copilot_result(output));
    } else if let Value::Object(specific) = object
        .entry("hookSpecificOutput")
        .or_insert_with(|| json!({"hookEventName": agent_event_name}))
    {
        specific.insert("updatedToolOutput".into(), output.clone());
    }
    Answer {
        stdout: Some(Value::Object(object).to_string()),
        stderr: base.stderr,
        exit: 0,
    }
}

/// A rewritten output as Copilot CLI's `modifiedResult`.
fn copilot_result(output: &Value) -> Value {
    match output {
        Value::Object(object) if object.contains_key("textResultForLlm") => output.clone(),
        _ => json!({"textResultForLlm": model_text(output), "resultType": "success"}),
    }
}

/// A tool's result as text, for an agent that takes a rewritten result only as text: a string as it is;
/// the text field of the agents' result objects (`llmContent`, `textResultForLlm`, `output`, `content`),
/// or `stdout` and `stderr`; anything else as JSON.
pub fn model_text(output: &Value) -> String {
    if let Value::String(text) = output {
        return text.clone();
    }
    // The field the model is given, whatever it holds (Gemini CLI's MCP results give parts, not text):
    // never the whole object, whose display fields (`returnDisplay`) the model never sees and a hook
    // may not have rewritten. The fields in the order the fold writes text into them.
    let field = |key: &str| output.get(key).and_then(Value::as_str);
    if let Some(key) = crate::engine::verdict::TEXT_FIELDS
        .iter()
        .find(|key| output.get(**key).is_some_and(|value| !value.is_null()))
    {
        if *key == "stdout" {
            return match (field("stdout"), field("stderr")) {
                (Some(out), Some(err)) if !err.is_empty() => format!("{out}\n{err}"),
                (Some(out), _) => out.to_string(),
                _ => output["stdout"].to_string(),
            };
        }
        return match &output[*key] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
    }
    match field("stderr") {
        Some(err) => err.to_string(),
        None => output.to_string(),
    }
}

/// What a refusal says at a moment where the agent only takes advice ([`Agent::advisory`]: Gemini CLI
/// at PreCompress, for one): not a deny the agent would ignore, so that nobody believes something was
/// held back, but a `systemMessage` that says the agent goes on (Claude Code, Codex and Gemini CLI all
/// show it to the user), what the hooks add kept as context, and for a process the same line on stderr.
pub fn advisory_refusal(
    agent: Agent,
    agent_event_name: &str,
    reason: &str,
    context: Option<String>,
    transport: Transport,
) -> Answer {
    let said = advisory_message(agent, agent_event_name, reason);
    let stderr = (transport == Transport::Process).then(|| format!("hookd relay: {said}"));
    if agent.dialect() == Dialect::CopilotCli && transport == Transport::Process {
        // Copilot CLI reads no message from a hook: the line on stderr says it, the context goes on.
        let stdout = context.map(|context| json!({"additionalContext": context}).to_string());
        return Answer {
            stdout,
            stderr,
            exit: 0,
        };
    }
    let mut out = Map::new();
    out.insert("systemMessage".into(), json!(said));
    if let Some(context) = context {
        out.insert(
            "hookSpecificOutput".into(),
            json!({"hookEventName": agent_event_name, "additionalContext": context}),
        );
    }
    Answer {
        stdout: Some(Value::Object(out).to_string()),
        stderr,
        exit: 0,
    }
}

/// The words for a refusal the agent will not heed (see [`advisory_refusal`]).
pub fn advisory_message(agent: Agent, agent_event_name: &str, reason: &str) -> String {
    format!(
        "{reason} (a refusal at {agent_event_name}, where {} only takes advice: it goes on)",
        agent.display_name()
    )
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
    fn codex_permission_request_refusal_carries_what_hooks_add_in_its_message() {
        let answer = answer(
            Agent::Codex,
            "PermissionRequest",
            "PermissionRequest",
            Some("R"),
            &["T1", "T2"],
        );
        assert_eq!(
            parsed(&answer),
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "R\n\nT1\n\nT2"}}})
        );
        let added = self::answer(
            Agent::Codex,
            "PermissionRequest",
            "PermissionRequest",
            None,
            &["T"],
        );
        assert_eq!(added, Answer::nothing());
        // Elsewhere Codex takes it as Claude Code does.
        let pre = self::answer(Agent::Codex, "PreToolUse", "PreToolUse", Some("R"), &["T"]);
        assert_eq!(parsed(&pre)["hookSpecificOutput"]["additionalContext"], "T");
    }

    #[test]
    fn claude_permission_request_refusal_denies_the_permission() {
        let answer = answer(
            Agent::ClaudeCode,
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
        // out of it, and what hooks add goes to the user. Found serving every moment: an answer naming one
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
        // Codex heeds a refusal at SessionStart (Claude Code only takes advice there: below).
        let answer = answer(
            Agent::Codex,
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
    fn a_refusal_where_the_agent_only_advises_says_it_goes_on() {
        for (moment, event_name) in [
            ("SessionStart", "SessionStart"),
            ("PreCompact", "PreCompress"),
            ("Notification", "Notification"),
            ("SessionEnd", "SessionEnd"),
        ] {
            let answer = answer(Agent::GeminiCli, moment, event_name, Some("R"), &["T"]);
            let said = format!(
                "R (a refusal at {event_name}, where Gemini CLI only takes advice: it goes on)"
            );
            assert_eq!(answer.exit, 0, "{moment}");
            assert_eq!(
                answer.stderr.as_deref(),
                Some(format!("hookd relay: {said}").as_str())
            );
            assert_eq!(
                parsed(&answer),
                json!({"systemMessage": said, "hookSpecificOutput": {"hookEventName": event_name, "additionalContext": "T"}}),
                "{moment}"
            );
        }
        // Where Gemini CLI heeds a refusal, it is still a deny; and so it is for an agent that heeds it.
        let answer = answer(Agent::GeminiCli, "PreToolUse", "BeforeTool", Some("R"), &[]);
        assert_eq!(parsed(&answer), json!({"decision": "deny", "reason": "R"}));
        let answer = self::answer(
            Agent::ClaudeCode,
            "PreCompact",
            "PreCompact",
            Some("R"),
            &[],
        );
        assert_eq!(parsed(&answer), json!({"decision": "block", "reason": "R"}));
    }

    #[test]
    fn qwen_code_reads_claude_code_answers() {
        // Checked against @qwen-code/qwen-code 0.24.4: `permissionDecision: "deny"` at PreToolUse,
        // `decision: "block"` at UserPromptSubmit and Stop, exit 2 with the reason on stderr elsewhere.
        for (moment, refusal) in [
            ("PreToolUse", Some("no rm")),
            ("UserPromptSubmit", Some("R")),
            ("Stop", Some("tests fail")),
            ("PermissionRequest", Some("R")),
            ("UserPromptSubmit", None),
        ] {
            assert_eq!(
                answer(Agent::QwenCode, moment, moment, refusal, &["T"]),
                answer(Agent::ClaudeCode, moment, moment, refusal, &["T"]),
                "{moment}"
            );
        }
    }

    #[test]
    fn copilot_answers_are_flat_and_never_exit_1() {
        let a = |moment: &str, refusal: Option<&str>, adds: &[&str]| {
            let event = Agent::CopilotCli.event_name_of(moment).to_string();
            answer(Agent::CopilotCli, moment, &event, refusal, adds)
        };
        assert_eq!(
            parsed(&a("PreToolUse", Some("no rm"), &[])),
            json!({"permissionDecision": "deny", "permissionDecisionReason": "no rm"})
        );
        assert_eq!(
            parsed(&a("Stop", Some("tests fail"), &["T"])),
            json!({"decision": "block", "reason": "tests fail\n\nT"})
        );
        assert_eq!(
            parsed(&a("PermissionRequest", Some("R"), &[])),
            json!({"behavior": "deny", "message": "R"})
        );
        assert_eq!(
            parsed(&a("UserPromptSubmit", Some("R"), &["T"])),
            json!({"decision": "block", "reason": "R", "additionalContext": "T"})
        );
        assert_eq!(
            parsed(&a("UserPromptSubmit", None, &["T1", "T2"])),
            json!({"additionalContext": "T1\n\nT2"})
        );
        assert_eq!(a("Stop", None, &["T"]), Answer::nothing());
        for moment in Agent::CopilotCli.moments() {
            for refusal in [None, Some("R")] {
                let answer = a(moment, refusal, &["T"]);
                assert!(answer.exit == 0 || answer.exit == 2, "{moment}: {answer:?}");
            }
        }
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
        // Claude Code only shows a refusal at SessionStart to the user: said as what it is.
        assert_eq!(
            parsed(&answer),
            json!({"systemMessage": "R (a refusal at SessionStart, where Claude Code only takes advice: it goes on)", "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "T"}})
        );
        // Gemini CLI ignores a refusal at SessionStart: said as what it is.
        let answer = super::answer(
            Agent::GeminiCli,
            "SessionStart",
            "SessionStart",
            Some("R"),
            &[],
            Transport::Http,
        );
        assert_eq!(
            parsed(&answer),
            json!({"systemMessage": "R (a refusal at SessionStart, where Gemini CLI only takes advice: it goes on)"})
        );
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

    fn verdict(
        refused: bool,
        permission: Option<Permission>,
        reason: Option<&'static str>,
        input: Option<Value>,
        output: Option<&'static Value>,
    ) -> Verdict {
        Verdict {
            refused,
            permission,
            reason: reason.map(str::to_string),
            input,
            output: output.cloned(),
            ..Verdict::default()
        }
    }

    fn said_to(agent: Agent, moment: &str, said: &Verdict) -> Answer {
        let event_name = agent
            .event_names()
            .iter()
            .copied()
            .find(|name| agent.moment_of(name) == moment)
            .expect("the agent fires the moment");
        answer_verdict(agent, moment, event_name, said, Transport::Process)
    }

    fn allow() -> Verdict {
        verdict(
            false,
            Some(Permission::Allow),
            Some("read-only"),
            None,
            None,
        )
    }

    fn ask() -> Verdict {
        verdict(true, Some(Permission::Ask), Some("sure?"), None, None)
    }

    fn rewrite(allowed: bool) -> Verdict {
        verdict(
            false,
            allowed.then_some(Permission::Allow),
            None,
            Some(json!({"command": "mv x .trash/"})),
            None,
        )
    }

    #[test]
    fn an_allow_is_sent_only_to_agents_that_read_it() {
        let claude = parsed(&said_to(Agent::ClaudeCode, "PreToolUse", &allow()));
        assert_eq!(claude["hookSpecificOutput"]["permissionDecision"], "allow");
        assert_eq!(
            claude["hookSpecificOutput"]["permissionDecisionReason"],
            "read-only"
        );
        let copilot = parsed(&said_to(Agent::CopilotCli, "PreToolUse", &allow()));
        assert_eq!(copilot["permissionDecision"], "allow");
        for agent in [Agent::Codex, Agent::GeminiCli, Agent::QwenCode] {
            assert_eq!(
                said_to(agent, "PreToolUse", &allow()),
                Answer::nothing(),
                "{agent:?} ignores or fails on an allow: not sent"
            );
        }
        // At a permission request every agent that has one reads an allow.
        let codex = parsed(&said_to(Agent::Codex, "PermissionRequest", &allow()));
        assert_eq!(codex["hookSpecificOutput"]["decision"]["behavior"], "allow");
        let copilot = parsed(&said_to(Agent::CopilotCli, "PermissionRequest", &allow()));
        assert_eq!(copilot["behavior"], "allow");
    }

    #[test]
    fn an_allow_is_never_lost_for_a_text_beside_it() {
        let mut said = allow();
        said.adds = vec!["note".into()];
        let codex = parsed(&said_to(Agent::Codex, "PermissionRequest", &said));
        assert_eq!(codex["hookSpecificOutput"]["decision"]["behavior"], "allow");
        assert!(
            codex["hookSpecificOutput"]
                .get("additionalContext")
                .is_none(),
            "Codex reads additionalContext at PermissionRequest as a failed hook: {codex}"
        );
        let claude = parsed(&said_to(Agent::ClaudeCode, "PermissionRequest", &said));
        assert_eq!(claude["hookSpecificOutput"]["additionalContext"], "note");
    }

    #[test]
    fn an_ask_is_asked_where_the_agent_can_and_refused_where_it_cannot() {
        let claude = parsed(&said_to(Agent::ClaudeCode, "PreToolUse", &ask()));
        assert_eq!(claude["hookSpecificOutput"]["permissionDecision"], "ask");
        assert_eq!(
            claude["hookSpecificOutput"]["permissionDecisionReason"],
            "sure?"
        );
        let qwen = parsed(&said_to(Agent::QwenCode, "PreToolUse", &ask()));
        assert_eq!(qwen["hookSpecificOutput"]["permissionDecision"], "ask");
        let copilot = parsed(&said_to(Agent::CopilotCli, "PreToolUse", &ask()));
        assert_eq!(copilot["permissionDecision"], "ask");
        let codex = parsed(&said_to(Agent::Codex, "PreToolUse", &ask()));
        assert_eq!(codex["hookSpecificOutput"]["permissionDecision"], "deny");
        let reason = codex["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(
            reason.starts_with("sure?") && reason.contains("approval"),
            "{reason}"
        );
        let gemini = parsed(&said_to(Agent::GeminiCli, "PreToolUse", &ask()));
        assert_eq!(gemini["decision"], "deny", "Gemini CLI would wait forever");
        // At a permission request the agent is about to ask the user: nothing said lets it.
        assert_eq!(
            said_to(Agent::ClaudeCode, "PermissionRequest", &ask()),
            Answer::nothing()
        );
        // Elsewhere an ask is a refusal in the moment's own shape.
        let stop = parsed(&said_to(Agent::ClaudeCode, "Stop", &ask()));
        assert_eq!(stop["decision"], "block");
    }

    #[test]
    fn a_rewritten_input_goes_in_each_agents_field_or_refuses() {
        let claude = parsed(&said_to(Agent::ClaudeCode, "PreToolUse", &rewrite(false)));
        assert_eq!(
            claude["hookSpecificOutput"]["updatedInput"]["command"],
            "mv x .trash/"
        );
        assert!(
            claude["hookSpecificOutput"]
                .get("permissionDecision")
                .is_none()
        );
        let claude = parsed(&said_to(Agent::ClaudeCode, "PreToolUse", &rewrite(true)));
        assert_eq!(claude["hookSpecificOutput"]["permissionDecision"], "allow");
        let codex = parsed(&said_to(Agent::Codex, "PreToolUse", &rewrite(false)));
        assert_eq!(
            codex["hookSpecificOutput"]["permissionDecision"], "allow",
            "Codex takes a rewrite only beside an allow"
        );
        assert_eq!(
            codex["hookSpecificOutput"]["updatedInput"]["command"],
            "mv x .trash/"
        );
        let gemini = parsed(&said_to(Agent::GeminiCli, "PreToolUse", &rewrite(true)));
        assert_eq!(
            gemini["hookSpecificOutput"]["tool_input"]["command"],
            "mv x .trash/"
        );
        assert!(
            gemini["hookSpecificOutput"]
                .get("permissionDecision")
                .is_none()
        );
        let copilot = parsed(&said_to(Agent::CopilotCli, "PreToolUse", &rewrite(false)));
        assert_eq!(copilot["modifiedArgs"]["command"], "mv x .trash/");
        let qwen = parsed(&said_to(Agent::QwenCode, "PreToolUse", &rewrite(true)));
        assert_eq!(qwen["hookSpecificOutput"]["permissionDecision"], "deny");
        let reason = qwen["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(
            reason.contains("make this call instead") && reason.contains("mv x .trash/"),
            "{reason}"
        );
    }

    #[test]
    fn an_ask_with_a_rewrite_asks_about_the_rewritten_call() {
        let said = verdict(
            true,
            Some(Permission::Ask),
            Some("sure?"),
            Some(json!({"command": "mv x t"})),
            None,
        );
        let claude = parsed(&said_to(Agent::ClaudeCode, "PreToolUse", &said));
        assert_eq!(claude["hookSpecificOutput"]["permissionDecision"], "ask");
        assert_eq!(
            claude["hookSpecificOutput"]["updatedInput"]["command"],
            "mv x t"
        );
    }

    #[test]
    fn a_rewritten_output_reaches_each_agents_model_or_the_user_is_told() {
        static BASH: std::sync::LazyLock<Value> = std::sync::LazyLock::new(
            || json!({"stdout": "token=[REDACTED]", "stderr": "", "interrupted": false}),
        );
        let said = verdict(false, None, None, None, Some(&BASH));
        let claude = parsed(&said_to(Agent::ClaudeCode, "PostToolUse", &said));
        assert_eq!(claude["hookSpecificOutput"]["updatedToolOutput"], *BASH);
        let codex = parsed(&said_to(Agent::Codex, "PostToolUse", &said));
        assert_eq!(
            (&codex["decision"], &codex["reason"]),
            (&json!("block"), &json!("token=[REDACTED]"))
        );
        static GEMINI: std::sync::LazyLock<Value> = std::sync::LazyLock::new(
            || json!({"llmContent": "Output: [REDACTED]", "returnDisplay": "x"}),
        );
        let said = verdict(false, None, None, None, Some(&GEMINI));
        let gemini = parsed(&said_to(Agent::GeminiCli, "PostToolUse", &said));
        assert_eq!(
            (&gemini["decision"], &gemini["reason"]),
            (&json!("deny"), &json!("Output: [REDACTED]"))
        );
        let copilot = parsed(&said_to(Agent::CopilotCli, "PostToolUse", &said));
        assert_eq!(
            copilot["modifiedResult"]["textResultForLlm"],
            "Output: [REDACTED]"
        );
        let qwen = parsed(&said_to(Agent::QwenCode, "PostToolUse", &said));
        assert_eq!(
            (&qwen["continue"], &qwen["stopReason"]),
            (&json!(false), &json!("Output: [REDACTED]"))
        );
    }

    #[test]
    fn a_plain_refusal_and_adds_answer_as_before() {
        let said = verdict(true, None, Some("no"), None, None);
        assert_eq!(
            said_to(Agent::ClaudeCode, "PreToolUse", &said),
            answer(
                Agent::ClaudeCode,
                "PreToolUse",
                "PreToolUse",
                Some("no"),
                &[]
            )
        );
    }
}

#[cfg(test)]
mod attack {
    use super::*;

    fn said_to(agent: Agent, moment: &str, said: &Verdict) -> Answer {
        let event_name = agent
            .event_names()
            .iter()
            .copied()
            .find(|name| agent.moment_of(name) == moment)
            .expect("the agent fires the moment");
        answer_verdict(agent, moment, event_name, said, Transport::Process)
    }

    #[test]
    fn attack_qwen_ask_with_rewrite_drops_the_rewrite() {
        let said = Verdict {
            refused: true,
            permission: Some(Permission::Ask),
            reason: Some("sure?".into()),
            input: Some(json!({"command": "mv x .trash/"})),
            ..Verdict::default()
        };
        let answer = said_to(Agent::QwenCode, "PreToolUse", &said);
        let text =
            answer.stdout.clone().unwrap_or_default() + &answer.stderr.clone().unwrap_or_default();
        assert!(
            text.contains("mv x .trash/"),
            "the rewrite must be refused-with-the-rewritten-call, never dropped under an ask: {answer:?}"
        );
    }

    #[test]
    fn attack_claude_post_tool_use_ask_drops_the_redaction() {
        let redacted = json!({"stdout": "[REDACTED]", "stderr": ""});
        let said = Verdict {
            refused: true,
            permission: Some(Permission::Ask),
            reason: Some("sure?".into()),
            output: Some(redacted.clone()),
            ..Verdict::default()
        };
        let answer = said_to(Agent::ClaudeCode, "PostToolUse", &said);
        let stdout = answer.stdout.clone().unwrap_or_default();
        assert!(
            stdout.contains("updatedToolOutput"),
            "the redaction must reach the agent: {answer:?}"
        );
    }

    #[test]
    fn attack_gemini_mcp_redaction_leaks_return_display_to_the_model() {
        let redacted = json!({
            "llmContent": [{"text": "[REDACTED]"}],
            "returnDisplay": "token=abc123"
        });
        for agent in [Agent::GeminiCli, Agent::QwenCode] {
            let said = Verdict {
                output: Some(redacted.clone()),
                ..Verdict::default()
            };
            let answer = said_to(agent, "PostToolUse", &said);
            let all = format!("{:?} {:?}", answer.stdout, answer.stderr);
            assert!(!all.contains("abc123"), "{agent:?}: {all}");
        }
    }
}
