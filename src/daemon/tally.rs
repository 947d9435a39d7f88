//! The numbers `status` shows of the record: fires, refusals, asks and failures per moment since the
//! daemon started, and each hook's recent p50 and p99, so that a slow hook is found without reading
//! the journal. Counted by the journal's writer, off the fire path.

use std::collections::{BTreeMap, HashMap, VecDeque};

use crate::decision::Outcome;
use crate::protocol::{HookTimes, MomentCounts};
use crate::record::{FireCounts, Kind, Record};

/// How many of a hook's last runs its percentiles are taken over.
const RECENT: usize = 256;

/// The most hooks and moments counted: names come from the settings and from clients (a moment name a
/// client made up), and the counts must stay small whatever they send.
const MAX_NAMES: usize = 1024;

#[derive(Debug, Default)]
pub struct Tally {
    moments: BTreeMap<String, MomentCounts>,
    hooks: HashMap<String, Times>,
}

#[derive(Debug, Default)]
struct Times {
    runs: u64,
    recent: VecDeque<f64>,
}

impl Tally {
    /// Counts one record: a fire for its moment and its hooks; hooks run in the background for their
    /// runs and times only (their fire was counted already).
    pub fn count(&mut self, record: &Record) {
        if record.kind == Kind::Background {
            self.count_hooks(record);
            return;
        }
        if record.kind != Kind::Fire || record.error.is_some() {
            return;
        }
        let Some(moment) = &record.moment else { return };
        let Some(counts) = self.moment(moment) else {
            return;
        };
        let mut fire = FireCounts::default();
        fire.count(record.verdict.as_ref().map(|v| v.decision));
        add(counts, &fire);
        if record.hooks.iter().any(|h| h.outcome == Outcome::Failed) {
            counts.failed += 1;
        }
        self.count_hooks(record);
    }

    /// Fires whose lines were written on their own threads, counted there by moment (they ran no
    /// hook: nothing failed and no hook is timed).
    pub fn count_fires(&mut self, counted: &[FireCounts]) {
        for fires in counted {
            if let Some(counts) = self.moment(&fires.moment) {
                add(counts, fires);
            }
        }
    }

    /// `moment`'s counts, made the first time; `None` past [`MAX_NAMES`] moments.
    fn moment(&mut self, moment: &str) -> Option<&mut MomentCounts> {
        if !self.moments.contains_key(moment) {
            if self.moments.len() >= MAX_NAMES {
                return None;
            }
            self.moments
                .insert(moment.to_owned(), MomentCounts::default());
        }
        self.moments.get_mut(moment)
    }

    /// Each hook of the record that ran: one more run, and its time among the recent ones.
    fn count_hooks(&mut self, record: &Record) {
        for hook in &record.hooks {
            if hook.outcome == Outcome::Skipped {
                continue;
            }
            if !self.hooks.contains_key(&hook.name) && self.hooks.len() >= MAX_NAMES {
                continue;
            }
            if !self.hooks.contains_key(&hook.name) {
                self.hooks.insert(hook.name.clone(), Times::default());
            }
            let Some(times) = self.hooks.get_mut(&hook.name) else {
                continue;
            };
            times.runs += 1;
            if times.recent.len() == RECENT {
                times.recent.pop_front();
            }
            times.recent.push_back(hook.ms);
        }
    }

    pub fn moments(&self) -> BTreeMap<String, MomentCounts> {
        self.moments.clone()
    }

    pub fn hooks(&self) -> BTreeMap<String, HookTimes> {
        self.hooks
            .iter()
            .map(|(name, times)| {
                let mut sorted: Vec<f64> = times.recent.iter().copied().collect();
                sorted.sort_by(f64::total_cmp);
                let at = |p: f64| {
                    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
                    sorted.get(index).copied().unwrap_or(0.0)
                };
                let times = HookTimes {
                    runs: times.runs,
                    p50_ms: at(0.50),
                    p99_ms: at(0.99),
                };
                (name.clone(), times)
            })
            .collect()
    }
}

/// `fires` added to a moment's counts.
fn add(counts: &mut MomentCounts, fires: &FireCounts) {
    counts.fires += fires.fires;
    counts.refused += fires.refused;
    counts.asked += fires.asked;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::Ruling;
    use crate::record::{Hook, Verdict};

    fn fire(moment: &str, decision: Ruling, hooks: &[(&str, Outcome, f64)]) -> Record {
        let mut record = Record::new(Kind::Fire);
        record.moment = Some(moment.into());
        record.verdict = Some(Verdict {
            decision,
            refused: matches!(decision, Ruling::Refused | Ruling::Asked),
            ..Verdict::default()
        });
        record.hooks = hooks
            .iter()
            .map(|(name, outcome, ms)| Hook {
                layer: None,
                name: (*name).into(),
                outcome: *outcome,
                exit: None,
                ms: *ms,
                error: None,
                stderr: None,
            })
            .collect();
        record
    }

    #[test]
    fn fires_are_counted_per_moment_and_hooks_timed() {
        let mut tally = Tally::default();
        for i in 0..100 {
            tally.count(&fire(
                "PreToolUse",
                Ruling::None,
                &[("slow", Outcome::Nothing, f64::from(i))],
            ));
        }
        tally.count(&fire(
            "PreToolUse",
            Ruling::Refused,
            &[("slow", Outcome::Refused, 1.0)],
        ));
        tally.count(&fire("Stop", Ruling::Asked, &[("x", Outcome::Failed, 2.0)]));
        let moments = tally.moments();
        assert_eq!(
            moments["PreToolUse"],
            MomentCounts {
                fires: 101,
                refused: 1,
                asked: 0,
                failed: 0
            }
        );
        assert_eq!(
            moments["Stop"],
            MomentCounts {
                fires: 1,
                refused: 0,
                asked: 1,
                failed: 1
            }
        );
        let hooks = tally.hooks();
        assert_eq!(hooks["slow"].runs, 101);
        assert_eq!(hooks["slow"].p50_ms, 49.0);
        assert_eq!(hooks["slow"].p99_ms, 98.0);
        let mut background = fire(
            "PostToolUse",
            Ruling::None,
            &[("shipper", Outcome::Nothing, 7.0)],
        );
        background.kind = Kind::Background;
        background.verdict = None;
        tally.count(&background);
        assert_eq!(
            tally.hooks()["shipper"].runs,
            1,
            "a hook in the background counts its runs"
        );
        tally.count(&Record::new(Kind::Reload));
        assert_eq!(tally.moments().len(), 2, "only fires count");
    }
}
