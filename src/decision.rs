//! The decision, one set of types for everyone who makes it, carries it or shows it: what one hook said
//! ([`Outcome`]), a hook's word on a call short of a refusal ([`Permission`]), what a hook rewrote
//! ([`Rewrote`]), each hook's part ([`HookReport`]), the one verdict of a fire ([`Verdict`]) and its word
//! in the record ([`Ruling`]). The engine folds into these types, the protocol writes them on the wire,
//! the record keeps their words, the dialects answer an agent from them and the commands show them.
//!
//! Each word is written here once, as serde writes it (`"asked"`, `"refused"`...), with its colour on
//! a terminal: a new kind of decision is a variant here, and the compiler then asks for each place that
//! must say what it means. The words are the wire's and the journal's: they never change.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Bold red (an ANSI style): what holds a call back, or failed.
pub const RED: &str = "1;31";
/// Bold yellow: an ask, waiting for a person.
pub const YELLOW: &str = "1;33";
/// Green: an allow.
pub const GREEN: &str = "32";

/// What one hook said, at its strongest: a hook that allows and rewrites is [`Outcome::Allowed`] (its
/// [`HookReport::rewrote`] says it rewrote too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Exit 0 with nothing to add.
    Nothing,
    /// Context to add to the agent's.
    Adds,
    /// It rewrote the tool's input or output, and took no side on whether the call may go on.
    Rewrote,
    /// It let the call go on without asking the user.
    Allowed,
    /// It asked for the user's approval.
    Asked,
    Refused,
    /// It crashed, timed out, or answered what cannot be read (its `on_failure` decided what it meant).
    Failed,
    /// Not run: an earlier hook of a sequential moment refused.
    Skipped,
    /// An outcome this hookd does not know, read from another version's answer or journal. Never made
    /// by hookd, never written by it.
    #[serde(other)]
    Unknown,
}

impl Outcome {
    /// Every outcome hookd makes, in the order docs/protocol.md lists them.
    pub const KNOWN: &[Outcome] = &[
        Outcome::Nothing,
        Outcome::Adds,
        Outcome::Rewrote,
        Outcome::Allowed,
        Outcome::Asked,
        Outcome::Refused,
        Outcome::Failed,
        Outcome::Skipped,
    ];

    /// The word the response and the record write the outcome with (`"refused"`), for text that says
    /// it too.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Nothing => "nothing",
            Outcome::Adds => "adds",
            Outcome::Rewrote => "rewrote",
            Outcome::Allowed => "allowed",
            Outcome::Asked => "asked",
            Outcome::Refused => "refused",
            Outcome::Failed => "failed",
            Outcome::Skipped => "skipped",
            Outcome::Unknown => "unknown",
        }
    }

    /// The outcome a word names, of those hookd makes.
    pub fn of_word(word: &str) -> Option<Outcome> {
        Outcome::KNOWN.iter().copied().find(|o| o.word() == word)
    }

    /// Its ANSI style on a terminal (`"1;31"`), where it has one: red for what holds back or failed,
    /// yellow for an ask, green for an allow.
    pub fn colour(self) -> Option<&'static str> {
        match self {
            Outcome::Refused | Outcome::Failed => Some(RED),
            Outcome::Asked => Some(YELLOW),
            Outcome::Allowed => Some(GREEN),
            Outcome::Nothing
            | Outcome::Adds
            | Outcome::Rewrote
            | Outcome::Skipped
            | Outcome::Unknown => None,
        }
    }
}

/// A word on whether a tool call may go on, short of a refusal: one hook's, or the fire's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Permission {
    /// Go on without asking the user.
    Allow,
    /// Ask the user first (the verdict's `refused` is true: without a person to ask, the call does not
    /// go on).
    Ask,
    /// A word this hookd does not know, read from another version's answer. Never written; read as
    /// holding back.
    #[serde(other)]
    Unknown,
}

impl Permission {
    /// The permission a word names (`"allow"`, `"ask"`); any other word is [`Permission::Unknown`].
    pub fn of_word(word: &str) -> Permission {
        match word {
            "allow" => Permission::Allow,
            "ask" => Permission::Ask,
            _ => Permission::Unknown,
        }
    }
}

/// What of a tool call a hook rewrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rewrote {
    Input,
    Output,
    /// Read from another version's answer or journal. Never written.
    #[serde(other)]
    Unknown,
}

impl Rewrote {
    /// The word the response and the record write it with.
    pub fn word(self) -> &'static str {
        match self {
            Rewrote::Input => "input",
            Rewrote::Output => "output",
            Rewrote::Unknown => "unknown",
        }
    }
}

/// The verdict in one word, as the record keeps it (`decision`): the strongest thing the hooks said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ruling {
    /// Held back by a refusal.
    Refused,
    /// Held back for a person's approval.
    Asked,
    /// Let go on without asking the user.
    Allowed,
    /// Let go on, rewritten.
    Rewrote,
    /// Nothing held it back, allowed it or rewrote it.
    #[default]
    None,
    /// A word this hookd does not know, read from another version's journal. Never written.
    #[serde(other)]
    Unknown,
}

impl Ruling {
    /// The word of `verdict`.
    pub fn of(verdict: &Verdict) -> Ruling {
        match (verdict.refused, verdict.permission) {
            (true, Some(Permission::Ask)) => Ruling::Asked,
            (true, _) => Ruling::Refused,
            (false, Some(Permission::Allow)) => Ruling::Allowed,
            _ if verdict.input.is_some() || verdict.output.is_some() => Ruling::Rewrote,
            _ => Ruling::None,
        }
    }

    /// The word the record writes it with.
    pub fn word(self) -> &'static str {
        match self {
            Ruling::Refused => "refused",
            Ruling::Asked => "asked",
            Ruling::Allowed => "allowed",
            Ruling::Rewrote => "rewrote",
            Ruling::None => "none",
            Ruling::Unknown => "unknown",
        }
    }

    /// The hooks' outcome that made this ruling (a refusal's hooks refused), where one did.
    pub fn outcome(self) -> Option<Outcome> {
        match self {
            Ruling::Refused => Some(Outcome::Refused),
            Ruling::Asked => Some(Outcome::Asked),
            Ruling::Allowed => Some(Outcome::Allowed),
            Ruling::Rewrote => Some(Outcome::Rewrote),
            Ruling::None | Ruling::Unknown => None,
        }
    }

    /// Its ANSI style on a terminal, as its hooks' outcome's.
    pub fn colour(self) -> Option<&'static str> {
        self.outcome().and_then(Outcome::colour)
    }
}

/// One hook's part in a fire's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookReport {
    pub name: String,
    /// Where the hook comes from, when not the settings file: `live:CLIENT` for a hook hung live over the
    /// socket by the client CLIENT. Written only then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer: Option<String>,
    pub outcome: Outcome,
    /// `input` or `output`: what of the call this hook rewrote. Written only when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewrote: Option<Rewrote>,
    /// Its exit code, when it exited (not killed, not a worker).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<i32>,
    /// From its start (after waiting for a process slot) to its outcome, in milliseconds to a tenth.
    #[serde(default)]
    pub ms: f64,
    /// What went wrong, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Whether its stdout or stderr was cut at the output limit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// The one verdict of a fire: folded from its hooks by the engine, written in a fire's response (its
/// fields are the response's, beside `id` and `ok`), answered to an agent in its dialect, kept in short
/// in the record.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Verdict {
    /// The call must not go on unattended: a hook refused, or asked (then [`Verdict::permission`] is
    /// [`Permission::Ask`], and a person may still approve it). A client that knows nothing of
    /// `permission` holds back, the safe side.
    pub refused: bool,
    /// Ask or allow, when no hook refused and one gave it. Written only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission: Option<Permission>,
    /// The refusal's reason (the first in settings order), else the ask's, else the allow's if it gave
    /// one. Set when refused or asked, and never empty then, so the agent is always told something.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Context to add, in the settings file's order of the hooks that gave it.
    #[serde(default)]
    pub adds: Vec<String>,
    /// The tool input once every rewrite is applied, whole (run it instead of the event's
    /// `tool_input`): when one changed it and nothing refused (kept with an ask: it is the call a
    /// person would approve).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// What the model should see of the tool's result, whole, instead of the event's `tool_response`:
    /// when hooks changed it; kept when refused (the tool has run), withheld when rewritten two ways or
    /// too large.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// Every hook that ran, in the settings file's order (the engine's to fill: the fold leaves it).
    #[serde(default)]
    pub hooks: Vec<HookReport>,
    /// Refused at a moment where the fire's agent only takes advice (Gemini CLI at PreCompress): the
    /// agent will not stop for it. Written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub advisory: bool,
    /// Two hooks rewrote the same field differently: what the refusal says, also for the log. Never
    /// written: the daemon's log says it, and the refusal's reason.
    #[serde(skip)]
    pub conflict: Option<String>,
}

impl Verdict {
    /// A refusal with `reason` and nothing else.
    pub fn refusal(reason: String) -> Verdict {
        Verdict {
            refused: true,
            reason: Some(reason),
            ..Verdict::default()
        }
    }

    /// Whether it asks for a person's approval (held back until one gives it).
    pub fn asks(&self) -> bool {
        self.refused && self.permission == Some(Permission::Ask)
    }

    /// Its word, as the record keeps it.
    pub fn ruling(&self) -> Ruling {
        Ruling::of(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcomes_word_is_the_one_the_response_writes() {
        for outcome in [
            Outcome::Nothing,
            Outcome::Adds,
            Outcome::Rewrote,
            Outcome::Allowed,
            Outcome::Asked,
            Outcome::Refused,
            Outcome::Failed,
            Outcome::Skipped,
        ] {
            assert_eq!(serde_json::to_value(outcome).unwrap(), outcome.word());
        }
        let unknown: Outcome = serde_json::from_str("\"vetoed\"").unwrap();
        assert_eq!(unknown.word(), "unknown");
    }

    #[test]
    fn each_outcome_is_written_with_its_word_and_read_back() {
        for outcome in Outcome::KNOWN {
            let written = serde_json::to_string(outcome).unwrap();
            assert_eq!(written, format!("\"{}\"", outcome.word()));
            assert_eq!(serde_json::from_str::<Outcome>(&written).unwrap(), *outcome);
            assert_eq!(Outcome::of_word(outcome.word()), Some(*outcome));
        }
        assert_eq!(
            serde_json::from_str::<Outcome>("\"pondered\"").unwrap(),
            Outcome::Unknown
        );
        assert_eq!(Outcome::of_word("unknown"), None);
    }

    #[test]
    fn each_ruling_is_written_with_its_word() {
        for ruling in [
            Ruling::Refused,
            Ruling::Asked,
            Ruling::Allowed,
            Ruling::Rewrote,
            Ruling::None,
        ] {
            let written = serde_json::to_string(&ruling).unwrap();
            assert_eq!(written, format!("\"{}\"", ruling.word()));
            assert_eq!(serde_json::from_str::<Ruling>(&written).unwrap(), ruling);
        }
    }

    #[test]
    fn the_ruling_is_the_strongest_thing_said() {
        let mut verdict = Verdict::default();
        assert_eq!(verdict.ruling(), Ruling::None);
        verdict.output = Some(Value::from("x"));
        assert_eq!(verdict.ruling(), Ruling::Rewrote);
        verdict.permission = Some(Permission::Allow);
        assert_eq!(verdict.ruling(), Ruling::Allowed);
        verdict.refused = true;
        assert_eq!(verdict.ruling(), Ruling::Refused);
        verdict.permission = Some(Permission::Ask);
        assert_eq!(verdict.ruling(), Ruling::Asked);
        assert!(verdict.asks());
    }

    #[test]
    fn a_verdict_is_written_with_the_fields_of_a_response_and_no_conflict() {
        let verdict = Verdict {
            refused: true,
            reason: Some("no".into()),
            hooks: vec![HookReport {
                name: "h".into(),
                layer: None,
                outcome: Outcome::Refused,
                rewrote: None,
                exit: Some(2),
                ms: 2.4,
                error: None,
                truncated: false,
            }],
            conflict: Some("two ways".into()),
            ..Verdict::default()
        };
        assert_eq!(
            serde_json::to_string(&verdict).unwrap(),
            r#"{"refused":true,"reason":"no","adds":[],"hooks":[{"name":"h","outcome":"refused","exit":2,"ms":2.4}]}"#
        );
    }
}
