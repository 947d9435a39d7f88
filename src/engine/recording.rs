//! A fire's line in the record (docs/record.md): begun when the fire starts, finished with its decision.
//! One dropped unfinished (the fire's task ended before its decision) is written as cut short, so that a
//! fire that started always has its line: no decision without an end.
//!
//! Without a recorder installed (an engine held in a test's hand) nothing is made at all.

use std::cell::{Cell, RefCell};
use std::time::Instant;

use serde_json::{Map, Value};

use crate::decision::{HookReport, Outcome, Ruling};
use crate::engine::reading::Exit;
use crate::engine::request::NotDecided;
use crate::engine::runner::Ran;
use crate::record::{self, Record, Source};

/// The record of one fire in progress.
pub(crate) struct FireRecord {
    /// Boxed: held across every await of the fire, it would otherwise make the fire's future (moved
    /// whole at each step of its task) larger by the record's size.
    record: Option<Box<Record>>,
    started: Instant,
    /// What the event says (its session, folder, tool, input) is not written yet: see
    /// [`FireRecord::begin_lazily`].
    undescribed: bool,
}

impl FireRecord {
    /// The record of a fire from `source` at `moment`, on settings `generation`; nothing at all when
    /// the settings turn the record off (`[record] enabled = false`).
    pub fn begin(
        source: Source,
        moment: &str,
        agent: Option<&str>,
        event: &Map<String, Value>,
        generation: &crate::engine::state::Generation,
    ) -> FireRecord {
        FireRecord::begin_with(
            source,
            moment,
            agent,
            Some(event),
            generation,
            Instant::now(),
        )
    }

    /// As [`FireRecord::begin`], but while a fire is decided in place on a connection, before its
    /// answer is written ([`answer_first`]), what the event says is written into the record only once
    /// the answer is out, when the fire ends without waiting (as a fire that matches no hook does).
    /// The fire's path then calls [`FireRecord::describe`] before it changes the event or waits. The
    /// fire's own clock reading, `started`, is the record's: one reading less on the fire's path.
    pub fn begin_lazily(
        source: Source,
        moment: &str,
        agent: Option<&str>,
        event: &Map<String, Value>,
        generation: &crate::engine::state::Generation,
        started: Instant,
    ) -> FireRecord {
        let lazily = ANSWERING_FIRST.with(Cell::get);
        FireRecord::begin_with(
            source,
            moment,
            agent,
            (!lazily).then_some(event),
            generation,
            started,
        )
    }

    fn begin_with(
        source: Source,
        moment: &str,
        agent: Option<&str>,
        event: Option<&Map<String, Value>>,
        generation: &crate::engine::state::Generation,
        started: Instant,
    ) -> FireRecord {
        let enabled = generation.settings.record.enabled;
        let record = record::get().filter(|_| enabled).map(|recorder| {
            let mut record = recorder.fresh(record::Kind::Fire, &generation.settings.digest);
            record.source = Some(source);
            record.generation = Some(generation.number);
            record.describe_moment(moment);
            if let Some(event) = event {
                record.describe_event(event, recorder.full_inputs());
            }
            record.describe_agent(agent);
            record
        });
        FireRecord {
            undescribed: record.is_some() && event.is_none(),
            record,
            started,
        }
    }

    /// Writes what the event says into the record now, if it was left for later
    /// ([`FireRecord::begin_lazily`]): before the event changes (a hook's input, a rewrite) or the
    /// fire waits for anything.
    pub fn describe(&mut self, event: &Map<String, Value>) {
        if !std::mem::take(&mut self.undescribed) {
            return;
        }
        if let (Some(record), Some(recorder)) = (&mut self.record, record::get()) {
            record.describe_event(event, recorder.full_inputs());
        }
    }

    /// The record of a fire's hooks run in the background: a `background` line of its own, written
    /// once they end ([`FireRecord::ended`]), beside the fire's, which does not wait for them.
    pub fn background(
        source: Source,
        moment: &str,
        agent: Option<&str>,
        event: &Map<String, Value>,
        generation: &crate::engine::state::Generation,
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
        note(record);
    }

    /// The hooks that ran: each one's outcome, with its stderr when it refused, asked or failed (what
    /// `hookd why` shows). A run cancelled because nobody waits for it marks the fire as cut short.
    pub fn hooks(&mut self, reports: &[HookReport], runs: &[Option<Ran>]) {
        let Some(record) = &mut self.record else {
            return;
        };
        for (report, ran) in reports.iter().zip(runs) {
            let telling = matches!(
                report.outcome,
                Outcome::Refused | Outcome::Asked | Outcome::Failed
            );
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
                layer: report.layer.clone(),
                outcome: report.outcome,
                exit: report.exit,
                ms: report.ms,
                error: report.error.clone(),
                stderr,
            });
        }
    }

    /// The last hook recorded is of `layer`: a hook that did not run, named without its table.
    pub fn layer_of_last(&mut self, layer: crate::settings::Layer) {
        if let Some(recorded) = self.record.as_mut().and_then(|r| r.hooks.last_mut()) {
            recorded.layer = Some(layer.name().to_string());
        }
    }

    /// The layer of each of `hooks`, the last of the hooks recorded so far: said for a managed and a
    /// repository's hook (a hook with none is the user's).
    pub fn layers(&mut self, hooks: &[std::sync::Arc<crate::settings::Hook>]) {
        let Some(record) = &mut self.record else {
            return;
        };
        let start = record.hooks.len().saturating_sub(hooks.len());
        for (recorded, hook) in record.hooks[start..].iter_mut().zip(hooks) {
            if hook.layer != crate::settings::Layer::User {
                recorded.layer = Some(hook.layer.name().to_string());
            }
        }
    }

    /// The fire's decision: the record is written, and the fire's `event` let go; both once the answer
    /// is out when the fire was decided in place ([`answer_first`]).
    pub fn decided(mut self, verdict: &crate::decision::Verdict, event: Map<String, Value>) {
        let mut record = self.record.take();
        if let Some(record) = &mut record {
            record.verdict = Some(record::Verdict::of(verdict));
            record.ms = Some(crate::time::tenths_of_ms(self.started.elapsed()));
        }
        let left = Left {
            record,
            undescribed: std::mem::take(&mut self.undescribed),
            event,
        };
        if ANSWERING_FIRST.with(Cell::get) {
            LEFT.with(|waiting| waiting.borrow_mut().push(left));
        } else {
            left.finish();
        }
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
        note(record);
    }
}

impl Drop for FireRecord {
    fn drop(&mut self) {
        if let Some(mut record) = self.record.take() {
            record
                .cut
                .get_or_insert_with(|| "the fire ended before its decision".into());
            record.ms = Some(crate::time::tenths_of_ms(self.started.elapsed()));
            note(record);
        }
    }
}

thread_local! {
    /// Set while a fire is polled in place on a connection's task ([`answer_first`]).
    static ANSWERING_FIRST: Cell<bool> = const { Cell::new(false) };
    /// What the fires decided meanwhile left for after their answers.
    static LEFT: RefCell<Vec<Left>> = const { RefCell::new(Vec::new()) };
}

/// A fire's end left for after its answer: its record to describe and hand over, its event to let go.
struct Left {
    record: Option<Box<Record>>,
    undescribed: bool,
    event: Map<String, Value>,
}

impl Left {
    fn finish(self) {
        if let Some(mut record) = self.record {
            if self.undescribed
                && let Some(recorder) = record::get()
            {
                record.describe_event(&self.event, recorder.full_inputs());
            }
            note(record);
        }
        drop(self.event);
    }
}

/// Runs `decide` (a first poll of a fire, on the connection's task) so that a fire it decides leaves
/// the part of its ending that its client need not wait for (what the event says written into its
/// record, the record handed to the journal's writer, the event let go) in the [`AfterAnswer`] given
/// back, to be finished once the answer is written: a fire's record then costs its answer's latency
/// little more than taking a record and setting its verdict.
pub fn answer_first<T>(decide: impl FnOnce() -> T) -> (T, AfterAnswer) {
    /// Unset however `decide` ends, a panic included.
    struct Answering;
    impl Drop for Answering {
        fn drop(&mut self) {
            ANSWERING_FIRST.with(|answering| answering.set(false));
        }
    }
    ANSWERING_FIRST.with(|answering| answering.set(true));
    let answering = Answering;
    let decided = decide();
    drop(answering);
    let left = LEFT.with(|left| std::mem::take(&mut *left.borrow_mut()));
    (decided, AfterAnswer(left))
}

/// What fires decided in place left for after their answers ([`answer_first`]). Finished by
/// [`AfterAnswer::finish`], or when dropped, however the connection goes on: never lost.
#[must_use = "finish it once the answer is written"]
#[derive(Default)]
pub struct AfterAnswer(Vec<Left>);

impl AfterAnswer {
    pub fn finish(mut self) {
        self.finish_left();
    }

    fn finish_left(&mut self) {
        if self.0.capacity() == 0 {
            return; // nothing left, nor room to keep (an answer that was not a fire's)
        }
        for left in self.0.drain(..) {
            left.finish();
        }
        // The list's room kept for the next fire's.
        let emptied = std::mem::take(&mut self.0);
        LEFT.with(|left| {
            let mut left = left.borrow_mut();
            if left.capacity() < emptied.capacity() {
                *left = emptied;
            }
        });
    }
}

impl Drop for AfterAnswer {
    fn drop(&mut self) {
        self.finish_left();
    }
}

/// Hands a fire's record to the journal's writer.
fn note(record: Box<Record>) {
    if let Some(recorder) = record::get() {
        recorder.note_boxed(record);
    }
}

/// A Stop let through at `stop_refusal_cap`, with the refusal it overrode.
pub(crate) fn stop_cap(agent: &str, session: &str, refusals: u32, reason: &str) {
    if record::get().is_none() {
        return;
    }
    let mut record = Record::new(record::Kind::StopCap);
    record.moment = Some(crate::tables::moment::STOP.to_string());
    record.agent = (!agent.is_empty()).then(|| record::cut(agent, record::SUMMARY_CHARS));
    record.session = (!session.is_empty()).then(|| record::cut(session, record::SUMMARY_CHARS));
    record.count = Some(u64::from(refusals));
    record.verdict = Some(record::Verdict {
        decision: Ruling::None,
        refused: false,
        reason: Some(reason.to_string()),
        ..record::Verdict::default()
    });
    record::note(record);
}
