//! `background = true`: a hook that does not hold the turn. The fire is answered without waiting for it,
//! and what it says is never read: only where no agent reads a hook's verdict, or where the call it
//! would judge has run already, can a hook be left unheard without losing a decision. Elsewhere (a
//! refusal that holds a tool call or a prompt back, sends the agent on, ends the turn) `background` is
//! an error that says why: a guard put in the background by mistake would let through all it refuses.

use crate::tables::moment::{self, Refusal};

/// The moments after a tool call has run, where a hook's answer is only advice on the result: a
/// background hook there (a log shipper, a metrics push) loses no decision.
const AFTER_THE_CALL: &[&str] = &[moment::POST_TOOL_USE, moment::POST_TOOL_USE_FAILURE];

/// Why a hook on `moment_name` may not run in the background, or `None` when it may.
pub fn refused_at(moment_name: &str) -> Option<String> {
    let Some(known) = moment::known(moment_name) else {
        return Some(format!(
            "{moment_name} is a declared moment, and hookd cannot tell that no agent waits for a hook's verdict there; run the hook in the foreground"
        ));
    };
    let nobody_reads = known.fired_by.iter().all(|fired| fired.advisory);
    if known.refusal == Refusal::TooLate || nobody_reads || AFTER_THE_CALL.contains(&known.name) {
        return None;
    }
    let readers: Vec<&str> = known
        .fired_by
        .iter()
        .filter(|fired| !fired.advisory)
        .map(|fired| fired.agent.name())
        .collect();
    let does = match known.refusal {
        Refusal::HoldsBack => "a refusal there holds something back",
        Refusal::SendsOn => "a refusal there sends the agent on working",
        Refusal::EndsTurn => "a refusal there ends the turn",
        Refusal::TooLate => "",
    };
    Some(format!(
        "a hook in the background is never heard, and at {} {} read a hook's verdict ({does}): remove background to let the hook decide, or hang it on a moment whose verdict nobody waits for (PostToolUse, Notification, SessionEnd, ...)",
        known.name,
        readers.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_where_no_decision_is_lost() {
        for moment in [
            "PostToolUse",
            "PostToolUseFailure",
            "SessionEnd",
            "Notification",
            "StopFailure",
            "PermissionDenied",
        ] {
            assert_eq!(refused_at(moment), None, "{moment}");
        }
        for moment in [
            "PreToolUse",
            "PermissionRequest",
            "UserPromptSubmit",
            "Stop",
            "PostToolBatch",
            "MyOwnMoment",
        ] {
            assert!(refused_at(moment).is_some(), "{moment}");
        }
        let why = refused_at("PreToolUse").unwrap();
        assert!(
            why.starts_with("a hook in the background is never heard, and at PreToolUse claude-code, codex, gemini-cli, qwen-code, copilot-cli read a hook's verdict (a refusal there holds something back)"),
            "{why}"
        );
    }
}
