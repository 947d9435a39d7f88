//! A fire's line in the record (docs/record.md): begun when the fire starts, finished with its decision.
//! One dropped unfinished (the fire's task ended before its decision) is written as cut short, so that a
//! fire that started always has its line: no decision without an end.
//!
//! Without a recorder installed (an engine held in a test's hand) nothing is made at all.

use std::time::Instant;

use serde_json::{Map, Value};

use crate::engine::runner::Ran;
use crate::engine::verdict::{Exit, Kind};
use crate::engine::{Decision, HookReport, NotDecided};
use crate::record::{self, Record, Source, Verdict};

/// The record of one fire in progress.
pub(crate) struct FireRecord {
    record: Option<Record>,
    started: Instant,
}

impl FireRecord {
    /// The record of a fire from `source` at `moment`, on settings `generation`; nothing at all when
    /// the settings turn the record off (`[record] enabled = false`).
    pub fn begin(
        source: Source,
        moment: &str,
        agent: Option<&str>,
        event: &Map<String, Value>,
        generation: &crate::engine::Generation,
    ) -> FireRecord {
        let enabled = generation.settings.record.enabled;
        let record = record::get().filter(|_| enabled).map(|recorder| {
            let mut record = Record::new(record::Kind::Fire);
            record.source = Some(source);
            record.generation = Some(generation.number);
            record.agent = agent.map(|a| record::cut(a, record::SUMMARY_CHARS));
            record.describe(moment, event, recorder.full_inputs());
            record
        });
        FireRecord {
            record,
            started: Instant::now(),
        }
    }

    /// The record of a fire's hooks run in the background: a `background` line of its own, written
    /// once they end ([`FireRecord::ended`]), beside the fire's, which does not wait for them.
    pub fn background(
        source: Source,
        moment: &str,
        agent: Option<&str>,
        event: &Map<String, Value>,
        generation: &crate::engine::Generation,
    ) -> FireRecord {
        let mut record = FireRecord::begin(source, moment, agent, event, generation);
        if let Some(record) = &mut record.record {
            record.kind = record::Kind::Background;
        }
        record
    }

    /// The hooks run in the background ended, or were stopped at shutdown (`stopped`): the record is
    /// written, with no verdict (nobody read one).
    pub fn ended(mut self, stopped: bool) {
        let Some(mut record) = self.record.take() else {
            return;
        };
        if stopped {
            record.cut = Some("the daemon stopped before the hooks finished".into());
        }
        record.ms = Some(crate::time::tenths_of_ms(self.started.elapsed()));
        record::note(record);
    }

    /// The hooks that ran: each one's outcome, with its stderr when it refused, asked or failed (what
    /// `hookd why` shows). A run cancelled because nobody waits for it marks the fire as cut short.
    pub fn hooks(&mut self, reports: &[HookReport], runs: &[Option<Ran>]) {
        let Some(record) = &mut self.record else {
            return;
        };
        for (report, ran) in reports.iter().zip(runs) {
            let telling = matches!(report.outcome, Kind::Refused | Kind::Asked | Kind::Failed);
            let stderr = ran
                .as_ref()
                .filter(|ran| telling && !ran.stderr.is_empty())
                .map(|ran| {
                    record::cut(&String::from_utf8_lossy(&ran.stderr), record::STDERR_CHARS)
                });
            // A fire the daemon gave up on (it is stopping) returns before this is called: a run
            // cancelled here was stopped because its client left.
            if let Some(Exit::Cancelled(_)) = ran.as_ref().map(|ran| &ran.exit) {
                record
                    .cut
                    .get_or_insert_with(|| "the client left".to_string());
            }
            record.hooks.push(record::Hook {
                name: report.name.clone(),
                outcome: outcome_word(report.outcome).to_string(),
                exit: report.exit,
                ms: crate::time::tenths_of_ms(report.elapsed),
                error: report.error.clone(),
                stderr,
            });
        }
    }

    /// The fire's decision: the record is written.
    pub fn decided(mut self, decision: &Decision) {
        let Some(mut record) = self.record.take() else {
            return;
        };
        let mut rewrote = Vec::new();
        if decision.input.is_some() {
            rewrote.push("input".to_string());
        }
        if decision.output.is_some() {
            rewrote.push("output".to_string());
        }
        let word = match (decision.refused, decision.permission) {
            (true, Some(crate::engine::verdict::Permission::Ask)) => "asked",
            (true, _) => "refused",
            (false, Some(crate::engine::verdict::Permission::Allow)) => "allowed",
            _ if !rewrote.is_empty() => "rewrote",
            _ => "none",
        };
        record.verdict = Some(Verdict {
            decision: word.to_string(),
            refused: decision.refused,
            reason: decision.reason.clone(),
            adds: decision.adds.len(),
            rewrote,
            advisory: decision.advisory,
        });
        record.ms = Some(crate::time::tenths_of_ms(self.started.elapsed()));
        record::note(record);
    }

    /// The fire was not decided: an unknown moment, or the daemon stopping before the hooks finished.
    pub fn not_decided(mut self, why: &NotDecided) {
        let Some(mut record) = self.record.take() else {
            return;
        };
        match why {
            NotDecided::UnknownMoment(message) => record.error = Some(message.clone()),
            NotDecided::ShuttingDown => {
                record.cut = Some("the daemon stopped before the hooks finished".into());
            }
        }
        record.ms = Some(crate::time::tenths_of_ms(self.started.elapsed()));
        record::note(record);
    }
}

impl Drop for FireRecord {
    fn drop(&mut self) {
        if let Some(mut record) = self.record.take() {
            record
                .cut
                .get_or_insert_with(|| "the fire ended before its decision".into());
            record.ms = Some(crate::time::tenths_of_ms(self.started.elapsed()));
            record::note(record);
        }
    }
}

/// A Stop let through at `stop_refusal_cap`, with the refusal it overrode.
pub(crate) fn stop_cap(agent: &str, session: &str, refusals: u32, reason: &str) {
    if record::get().is_none() {
        return;
    }
    let mut record = Record::new(record::Kind::StopCap);
    record.moment = Some(crate::moment::STOP.to_string());
    record.agent = (!agent.is_empty()).then(|| record::cut(agent, record::SUMMARY_CHARS));
    record.session = (!session.is_empty()).then(|| record::cut(session, record::SUMMARY_CHARS));
    record.count = Some(u64::from(refusals));
    record.verdict = Some(Verdict {
        decision: "none".into(),
        refused: false,
        reason: Some(reason.to_string()),
        ..Verdict::default()
    });
    record::note(record);
}

/// The word the protocol and the record use for an outcome.
pub fn outcome_word(kind: Kind) -> &'static str {
    match kind {
        Kind::Nothing => "nothing",
        Kind::Adds => "adds",
        Kind::Rewrote => "rewrote",
        Kind::Allowed => "allowed",
        Kind::Asked => "asked",
        Kind::Refused => "refused",
        Kind::Failed => "failed",
        Kind::Skipped => "skipped",
    }
}
