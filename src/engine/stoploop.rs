//! Stop loops (docs/settings.md, "Stop loops"): a Stop hook that always refuses would keep an agent working forever (Codex
//! loops without end; Gemini CLI crashes). The daemon counts consecutive refused Stops per agent and
//! session, tells Stop hooks the count, and lets a Stop through once the count reaches the cap.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::limits::STOP_LOOP_SESSIONS;
use crate::sync::lock;

/// Who a count belongs to: a hash of the agent and the session id. A hash, not the strings: a session id
/// comes from the client and may be long, and the memory bound must hold in bytes, not only in entries.
type Key = u64;

fn key(agent: &str, session: &str) -> Key {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (agent, session).hash(&mut hasher);
    hasher.finish()
}

/// Consecutive refused Stops per (agent, session).
#[derive(Debug, Default)]
pub struct StopLoops {
    inner: Mutex<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    by_session: HashMap<Key, Entry>,
    /// Increases with every use, to find the session unused the longest.
    clock: u64,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    refusals: u32,
    last_used: u64,
    /// The last refusal's reason, as (length in bytes, hash): Gemini CLI sends its agent on by submitting
    /// that reason as a new prompt, which must not count as one. (0, _) when there is none.
    reason: (usize, u64),
}

fn hash_text(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

impl StopLoops {
    /// How many Stops of this session were refused in a row so far.
    pub fn refusals(&self, agent: &str, session: &str) -> u32 {
        let counts = lock(&self.inner);
        counts
            .by_session
            .get(&key(agent, session))
            .map_or(0, |e| e.refusals)
    }

    /// Records a Stop's verdict: one more refusal in a row (`refused` is its reason), or the end of the run.
    pub fn record_stop(&self, agent: &str, session: &str, refused: Option<&str>) {
        let key = key(agent, session);
        let mut counts = lock(&self.inner);
        let Some(reason) = refused else {
            counts.by_session.remove(&key);
            return;
        };
        counts.clock += 1;
        let now = counts.clock;
        if !counts.by_session.contains_key(&key) && counts.by_session.len() >= STOP_LOOP_SESSIONS {
            let oldest = counts
                .by_session
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(k, _)| *k);
            if let Some(oldest) = oldest {
                counts.by_session.remove(&oldest);
            }
        }
        let entry = counts.by_session.entry(key).or_insert(Entry {
            refusals: 0,
            last_used: now,
            reason: (0, 0),
        });
        entry.refusals += 1;
        entry.last_used = now;
        entry.reason = (reason.len(), hash_text(reason));
    }

    /// A prompt in the session: the count starts over, unless the prompt is the last refusal's reason
    /// coming back. Gemini CLI sends its agent on after a refused AfterAgent by submitting the reason (and
    /// what hookd adds after it) as a new prompt, and fires BeforeAgent (UserPromptSubmit) for it: that is
    /// the refused Stop going on, not a new prompt, and resetting there would make the cap unreachable.
    ///
    /// An empty prompt is no new prompt either: Qwen Code fires UserPromptSubmit again, with `prompt: ""`,
    /// after every tool result, and a refused Stop that sends it on to run a tool would otherwise start
    /// the count over each time, and the cap would never be reached.
    pub fn prompt_submitted(&self, agent: &str, session: &str, prompt: &str) {
        if prompt.is_empty() {
            return;
        }
        let key = key(agent, session);
        let mut counts = lock(&self.inner);
        if let Some(entry) = counts.by_session.get(&key) {
            let (len, hash) = entry.reason;
            if len > 0
                && prompt
                    .get(..len)
                    .is_some_and(|head| hash_text(head) == hash)
            {
                return;
            }
        }
        counts.by_session.remove(&key);
    }

    /// Sessions remembered now.
    pub fn len(&self) -> usize {
        lock(&self.inner).by_session.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_refusals_in_a_row_per_agent_and_session() {
        let loops = StopLoops::default();
        loops.record_stop("codex", "s1", Some("r"));
        loops.record_stop("codex", "s1", Some("r"));
        loops.record_stop("codex", "s2", Some("r"));
        assert_eq!(loops.refusals("codex", "s1"), 2);
        assert_eq!(loops.refusals("codex", "s2"), 1);
        assert_eq!(
            loops.refusals("claude-code", "s1"),
            0,
            "another agent's session is another count"
        );
    }

    #[test]
    fn a_stop_let_through_or_a_new_prompt_starts_over() {
        let loops = StopLoops::default();
        loops.record_stop("a", "s", Some("r"));
        loops.record_stop("a", "s", None);
        assert_eq!(loops.refusals("a", "s"), 0);
        loops.record_stop("a", "s", Some("r"));
        loops.prompt_submitted("a", "s", "a new prompt");
        assert_eq!(loops.refusals("a", "s"), 0);
        assert!(loops.is_empty());
    }

    #[test]
    fn the_last_refusal_coming_back_as_a_prompt_is_no_new_prompt() {
        let loops = StopLoops::default();
        loops.record_stop("gemini-cli", "s", Some("tests fail"));
        loops.prompt_submitted("gemini-cli", "s", "tests fail\n\nadded context");
        assert_eq!(loops.refusals("gemini-cli", "s"), 1);
        loops.prompt_submitted("gemini-cli", "s", "tests");
        assert_eq!(
            loops.refusals("gemini-cli", "s"),
            0,
            "another prompt starts over"
        );
    }

    #[test]
    fn an_empty_prompt_is_no_new_prompt() {
        // Qwen Code fires UserPromptSubmit with an empty prompt after each tool result.
        let loops = StopLoops::default();
        loops.record_stop("qwen-code", "s", Some("tests fail"));
        loops.prompt_submitted("qwen-code", "s", "");
        assert_eq!(loops.refusals("qwen-code", "s"), 1);
    }

    #[test]
    fn memory_is_bounded_and_the_oldest_session_goes_first() {
        let loops = StopLoops::default();
        for i in 0..STOP_LOOP_SESSIONS {
            loops.record_stop("a", &format!("s{i}"), Some("r"));
        }
        loops.record_stop("a", "s0", Some("r")); // s0 used again: now s1 is the oldest
        loops.record_stop("a", "new", Some("r"));
        assert_eq!(loops.len(), STOP_LOOP_SESSIONS);
        assert_eq!(loops.refusals("a", "s1"), 0, "the oldest was forgotten");
        assert_eq!(loops.refusals("a", "s0"), 2);
        assert_eq!(loops.refusals("a", "new"), 1);
    }
}
