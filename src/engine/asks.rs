//! Asks followed to their end. When hookd answers "ask" for a tool call, a person approves it or not,
//! and the fire's record cannot say which. The engine keeps the ask, and what the agent fires later for
//! the same call settles it: a `PostToolUse` or `PostToolUseFailure` (it ran), a `PermissionDenied`, or
//! a `PermissionRequest` hookd's own hooks refused (denied); the session's next prompt, the wait running
//! out ([`ASK_OUTCOME_WAIT`]) or the daemon stopping leave it `unknown`. Each is written as an `ask`
//! record (docs/record.md), beside the fire's own line, which stays as it was.
//!
//! The call is known by its id (`tool_use_id`, Qwen Code's `tool_call_id`, ...); for an agent that
//! gives none (Gemini CLI, Copilot CLI), by its tool and its input, which the agent sends again after
//! the call. Only with a journal to write to: with none, nothing is kept.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Map, Value};

use crate::limits::{ASK_OUTCOME_WAIT, ASKS_FOLLOWED};
use crate::record::{self, Record};
use crate::tables::moment;

/// The fields agents name a tool call's id in, first found first.
const CALL_ID_FIELDS: &[&str] = &[
    "tool_use_id",
    "tool_call_id",
    "toolUseId",
    "toolCallId",
    "call_id",
];

/// How often the asks waited on too long are looked for, at most (on a fire).
const SWEEP_EVERY: Duration = Duration::from_secs(5);

/// One tool call of one session of one agent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    agent: String,
    session: String,
    call: String,
}

/// How long a part of a [`Key`] is kept as it is: a longer one (a session id or a call id is the
/// agent's to write, as long as an event) is kept as its length and hash, so that the asks followed
/// cost a bounded amount of memory whatever their ids.
const KEY_PART_KEPT: usize = 128;

/// How many bytes of tool inputs (`[record] full_inputs`) the asks waiting keep in their records, all
/// together: past it, an ask's record leaves its input out (the fire's own record has it), so that
/// [`ASKS_FOLLOWED`] asks of inputs as large as an event cannot take the daemon's memory.
const ASK_INPUTS_KEPT: usize = 16 << 20;

/// A part of a [`Key`], bounded (see [`KEY_PART_KEPT`]).
fn key_part(text: &str) -> String {
    if text.len() <= KEY_PART_KEPT {
        return text.to_string();
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    format!("#{}:{:016x}", text.len(), hasher.finish())
}

/// An ask waiting for its outcome: its record made ready when it was asked.
#[derive(Debug)]
struct Waiting {
    since: Instant,
    order: u64,
    record: Record,
    /// The bytes of its record's input, counted in [`State::input_bytes`].
    input_bytes: usize,
}

#[derive(Debug, Default)]
struct State {
    waiting: HashMap<Key, Waiting>,
    next: u64,
    swept: Option<Instant>,
    /// The bytes of the inputs the waiting asks' records keep (see [`ASK_INPUTS_KEPT`]).
    input_bytes: usize,
}

impl State {
    /// Takes an ask out of those waiting, its input's bytes with it.
    fn remove(&mut self, key: &Key) -> Option<Waiting> {
        let waiting = self.waiting.remove(key)?;
        self.input_bytes = self.input_bytes.saturating_sub(waiting.input_bytes);
        Some(waiting)
    }

    /// Whether an input of `bytes` may be kept in a waiting ask's record, counted if so.
    fn keep_input(&mut self, bytes: usize) -> bool {
        let kept = self.input_bytes.saturating_add(bytes) <= ASK_INPUTS_KEPT;
        if kept {
            self.input_bytes += bytes;
        }
        kept
    }
}

/// The asks the engine follows (see the module's doc).
#[derive(Debug, Default)]
pub(crate) struct Asks {
    state: Mutex<State>,
}

/// What a fire tells of the asks: its moment, agent, event, and what hookd answered.
pub(crate) struct Told<'a> {
    pub moment: &'a str,
    pub agent: Option<&'a str>,
    pub event: &'a Map<String, Value>,
    /// hookd answered ask.
    pub asked: bool,
    /// hookd refused (not an ask).
    pub refused: bool,
    /// The ask's reason, for its record.
    pub reason: Option<&'a str>,
    pub generation: u64,
    pub source: record::Source,
    /// The settings record fires (`[record] enabled`).
    pub recording: bool,
}

impl Asks {
    /// Takes what a fire tells: a new ask kept, an ask settled by what the agent fired for its call.
    pub(crate) fn told(&self, told: Told<'_>) {
        let Some(recorder) = record::get().filter(|_| told.recording) else {
            return;
        };
        let session = text(told.event, "session_id");
        let agent = told.agent.unwrap_or_default().to_string();
        let mut settled = Vec::new();
        {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            if state
                .swept
                .is_none_or(|swept| now.duration_since(swept) >= SWEEP_EVERY)
            {
                state.swept = Some(now);
                let late: Vec<Key> = state
                    .waiting
                    .iter()
                    .filter(|(_, w)| now.duration_since(w.since) >= ASK_OUTCOME_WAIT)
                    .map(|(key, _)| key.clone())
                    .collect();
                for key in late {
                    if let Some(waiting) = state.remove(&key) {
                        settled.push((waiting, "unknown", "no word in time".to_string()));
                    }
                }
            }
            // The call's key only where it is asked for: a fire with nothing waiting and no ask costs
            // no more than the lock.
            let wanted = told.asked
                || (!state.waiting.is_empty()
                    && [
                        moment::POST_TOOL_USE,
                        moment::POST_TOOL_USE_FAILURE,
                        moment::PERMISSION_DENIED,
                        moment::PERMISSION_REQUEST,
                    ]
                    .contains(&told.moment));
            let key = wanted
                .then(|| call_key(told.event))
                .flatten()
                .map(|call| Key {
                    agent: key_part(&agent),
                    session: key_part(&session),
                    call: key_part(&call),
                });
            match (told.moment, key) {
                (moment::USER_PROMPT_SUBMIT, _) => {
                    let (agent, session) = (key_part(&agent), key_part(&session));
                    let gone: Vec<Key> = state
                        .waiting
                        .keys()
                        .filter(|key| key.agent == agent && key.session == session)
                        .cloned()
                        .collect();
                    for key in gone {
                        if let Some(waiting) = state.remove(&key) {
                            settled.push((waiting, "unknown", "next prompt".to_string()));
                        }
                    }
                }
                (moment::POST_TOOL_USE | moment::POST_TOOL_USE_FAILURE, Some(key)) => {
                    if let Some(waiting) = state.remove(&key) {
                        settled.push((waiting, "ran", told.moment.to_string()));
                    }
                }
                (moment::PERMISSION_DENIED, Some(key)) => {
                    if let Some(waiting) = state.remove(&key) {
                        settled.push((waiting, "denied", told.moment.to_string()));
                    }
                }
                (moment::PERMISSION_REQUEST, Some(key))
                    if told.refused && state.waiting.contains_key(&key) =>
                {
                    if let Some(waiting) = state.remove(&key) {
                        settled.push((
                            waiting,
                            "denied",
                            "PermissionRequest refused by hookd".into(),
                        ));
                    }
                }
                // Asked again for the same call (PreToolUse, then its PermissionRequest): the first ask
                // is the one followed.
                (moment::PRE_TOOL_USE | moment::PERMISSION_REQUEST, Some(key))
                    if told.asked && !state.waiting.contains_key(&key) =>
                {
                    if state.waiting.len() >= ASKS_FOLLOWED
                        && let Some(oldest) = state
                            .waiting
                            .iter()
                            .min_by_key(|(_, w)| w.order)
                            .map(|(key, _)| key.clone())
                        && let Some(waiting) = state.remove(&oldest)
                    {
                        settled.push((waiting, "unknown", "too many asks waiting".into()));
                    }
                    let mut record = Record::new(record::Kind::Ask);
                    record.generation = Some(told.generation);
                    record.source = Some(told.source);
                    record.agent = told.agent.map(|a| record::cut(a, record::SUMMARY_CHARS));
                    record.describe(told.moment, told.event, recorder.full_inputs());
                    let input_bytes = record
                        .input
                        .as_ref()
                        .map_or(0, |input| input.to_string().len());
                    let input_bytes = match state.keep_input(input_bytes) {
                        true => input_bytes,
                        false => {
                            record.input = None;
                            0
                        }
                    };
                    record.call = CALL_ID_FIELDS
                        .iter()
                        .find_map(|field| told.event.get(*field).and_then(Value::as_str))
                        .filter(|id| !id.is_empty())
                        .map(|id| record::cut(id, record::SUMMARY_CHARS));
                    record.verdict = Some(record::Verdict {
                        decision: crate::decision::Ruling::Asked,
                        refused: true,
                        reason: told.reason.map(str::to_string),
                        ..record::Verdict::default()
                    });
                    record.asked = Some(crate::time::rfc3339_millis(SystemTime::now()));
                    let order = state.next;
                    state.next += 1;
                    state.waiting.insert(
                        key,
                        Waiting {
                            since: now,
                            order,
                            record,
                            input_bytes,
                        },
                    );
                }
                _ => {}
            }
        }
        for (waiting, outcome, by) in settled {
            write(waiting, outcome, by);
        }
    }

    /// At shutdown: every ask still waiting is written as `unknown`.
    pub(crate) fn stopping(&self) {
        let waiting: Vec<Waiting> = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            state.input_bytes = 0;
            state.waiting.drain().map(|(_, w)| w).collect()
        };
        for waiting in waiting {
            write(waiting, "unknown", "daemon stopped".into());
        }
    }
}

/// An ask's record, with what came of it, to the journal.
fn write(waiting: Waiting, outcome: &str, by: String) {
    let mut record = waiting.record;
    record.at = Some(SystemTime::now());
    record.outcome = Some(outcome.to_string());
    record.settled_by = Some(by);
    record.ms = Some(crate::time::tenths_of_ms(waiting.since.elapsed()));
    record::note(record);
}

/// The call an event is of: its id, or for an agent that gives none, its tool and input.
fn call_key(event: &Map<String, Value>) -> Option<String> {
    if let Some(id) = CALL_ID_FIELDS
        .iter()
        .find_map(|field| event.get(*field).and_then(Value::as_str))
        .filter(|id| !id.is_empty())
    {
        return Some(format!("id:{id}"));
    }
    let tool = event.get("tool_name").and_then(Value::as_str)?;
    let input = event.get("tool_input").or_else(|| event.get("toolArgs"))?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    tool.hash(&mut hasher);
    input.to_string().hash(&mut hasher);
    Some(format!("input:{:016x}", hasher.finish()))
}

fn text(event: &Map<String, Value>, key: &str) -> String {
    event
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_ask_costs_bounded_memory_whatever_its_ids_and_input() {
        let long_a = "a".repeat(1 << 20);
        let long_b = format!("{}b", "a".repeat((1 << 20) - 1));
        assert!(key_part(&long_a).len() <= KEY_PART_KEPT);
        assert_ne!(key_part(&long_a), key_part(&long_b));
        assert_eq!(key_part("session-1"), "session-1");
        let mut state = State::default();
        assert!(state.keep_input(ASK_INPUTS_KEPT - 10));
        assert!(
            !state.keep_input(11),
            "past the bound, the input is left out"
        );
        assert!(state.keep_input(10));
        let key = Key {
            agent: "a".into(),
            session: "s".into(),
            call: "c".into(),
        };
        state.waiting.insert(
            key.clone(),
            Waiting {
                since: Instant::now(),
                order: 0,
                record: Record::new(record::Kind::Ask),
                input_bytes: ASK_INPUTS_KEPT,
            },
        );
        assert!(state.remove(&key).is_some());
        assert_eq!(state.input_bytes, 0, "a settled ask gives its bytes back");
    }

    #[test]
    fn a_call_is_known_by_its_id_else_by_its_tool_and_input() {
        let of = |v: Value| call_key(v.as_object().unwrap());
        assert_eq!(
            of(json!({"tool_use_id": "toolu_1", "tool_call_id": "c"})),
            Some("id:toolu_1".into())
        );
        assert_eq!(
            of(json!({"tool_call_id": "call_1"})),
            Some("id:call_1".into())
        );
        let a = of(json!({"tool_name": "Bash", "tool_input": {"command": "ls"}}));
        assert_eq!(
            a,
            of(json!({"tool_name": "Bash", "tool_input": {"command": "ls"}}))
        );
        assert_ne!(
            a,
            of(json!({"tool_name": "Bash", "tool_input": {"command": "ls -l"}}))
        );
        assert_eq!(of(json!({"session_id": "s"})), None);
    }
}
