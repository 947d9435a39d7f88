//! The handle records are given to: one per process, installed by the daemon when it starts, as a
//! logger is. Everything that decides or changes something (a fire, a reload, a worker's restart) calls
//! [`note`], which never waits: the record goes into a bounded queue for the journal's writer, or, when
//! the writer has fallen that far behind, is counted as dropped (and that count is itself recorded).
//! Without an installed recorder (a test, a benchmark holding an engine in hand, `hookd test`), [`note`]
//! does nothing.
//!
//! The queue is a list under a lock that the writer takes whole, once a tick: a record costs the fire
//! one uncontended lock and a push, and the list grows with what waits, where a channel of fixed slots
//! held its whole capacity (16,384 slots, about 400 KiB) resident from the start in an idle daemon.
//! The same lock hands the fire's thread the next records to fill ([`Recorder::fresh`]), a few at a
//! time, so that a fire takes the lock once, not once for its record and once more to hand it over;
//! and the writer is woken only by the record that finds it asleep on an empty queue, never while it
//! gathers a tick's records.
//!
//! While nobody watches the records, a fire's record that holds no hook run, no whole input and no
//! error (the no-hook fires that come by the ten thousand) is written as its line on the fire's own
//! thread, once its answer is sent, and only the line's bytes are handed over, with the fire counted by
//! moment for `status` ([`FireCounts`]): the record itself never leaves the thread, which fills it again
//! for its next fire. Handing the record over cost more than writing its line: its dozen cache lines
//! (the record and each of its texts) passed to the writer's core and back at every fire.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::json::Repeated;
use super::line::{Kind, Record};
use crate::decision::Ruling;
use crate::sync::lock;

/// What the journal's writer is handed.
#[derive(Debug)]
pub enum Message {
    Record(Box<Record>),
    /// The fires' lines written on their own threads ([`Taken::lines`]) up to this offset come
    /// here, before what follows: the journal keeps the order records were noted in.
    Lines(usize),
    /// Write everything queued before this, then say so: at shutdown, so that the fires cut short by
    /// the stop have their lines.
    Flush(SyncSender<()>),
}

/// The queue into the journal's writer.
#[derive(Debug)]
pub struct Recorder {
    queue: Mutex<Waiting>,
    /// Wakes the writer when a first message comes while it waits for one ([`Queue::wait`]).
    arrived: Condvar,
    /// The most records waiting before more are dropped.
    capacity: usize,
    dropped: AtomicU64,
    /// How many times a record woke the writer: once per stretch of fires after an idle spell.
    wakes: AtomicU64,
    /// Whether to keep whole tool inputs (`[record] full_inputs`), as last installed.
    full_inputs: AtomicBool,
    /// Whether a fire's plain record may be written as its line on the fire's thread: nobody watches
    /// (a watcher is sent records, not lines). Set by the journal ([`Recorder::set_lines_here`]).
    lines_here: AtomicBool,
}

/// The fires of one moment whose lines were written on their own threads, counted for `status`.
#[derive(Debug, Default)]
pub struct FireCounts {
    pub moment: String,
    pub fires: u64,
    pub refused: u64,
    pub asked: u64,
}

impl FireCounts {
    /// One more fire, which the hooks' `decision` held back or not.
    pub fn count(&mut self, decision: Option<Ruling>) {
        self.fires += 1;
        match decision {
            Some(Ruling::Refused) => self.refused += 1,
            Some(Ruling::Asked) => self.asked += 1,
            _ => {}
        }
    }
}

/// What the writer takes at once ([`Queue::take_all`]).
#[derive(Debug, Default)]
pub struct Taken {
    pub messages: Vec<Message>,
    /// Fires' lines written on their own threads, whole, in the order noted; placed among `messages` by
    /// [`Message::Lines`], the rest after them.
    pub lines: Vec<u8>,
    /// How many lines `lines` holds.
    pub line_count: u64,
    /// Those fires, counted by moment.
    pub counted: Vec<FireCounts>,
}

/// What waits for the writer. Records are boxed from the fire to the writer and back: a box is what
/// circulates ([`Recorder::fresh`]), so that neither thread allocates or frees one per fire.
#[allow(clippy::vec_box)]
#[derive(Debug, Default)]
struct Waiting {
    messages: Vec<Message>,
    /// Records among `messages` (a flush is not counted against the capacity).
    records: usize,
    /// The writer is asleep until a message comes.
    writer_asleep: bool,
    /// Fires' records the writer has written, emptied, for the next fires ([`Recorder::fresh`]).
    spare: Vec<Box<Record>>,
    /// Fires' lines written on their own threads ([`Recorder::note_boxed`]), and what goes with them.
    lines: Vec<u8>,
    line_count: u64,
    counted: Vec<FireCounts>,
    /// Where `lines` ended when the last message was queued ([`Message::Lines`]).
    marked: usize,
}

/// The most written records kept for the next fires while fires come: a tick's worth at 200,000 fires
/// a second, so that under load a fire's record is nearly always one written before (a new one is
/// allocated on the fire's thread and, past this, freed on the writer's).
const SPARE: usize = 4096;

/// The most kept once the writer goes idle: a tick's worth at a few thousand fires a second, so that a
/// burst of fires does not leave an idle daemon holding thousands of empty records.
const SPARE_IDLE: usize = 256;

/// The most spare records a thread that hands records over keeps at hand ([`NEXT`]): taken with the
/// hand-over's lock, a few at a time, so that the lock is not taken again to fill the next fire's.
const AT_HAND: usize = 8;

/// The most moments a tick's fires written as lines are counted under: the moments hookd knows are
/// fewer; a fire of one more (a name a client made up) goes to the writer whole, which counts it.
const COUNTED_MOMENTS: usize = 64;

/// The room a buffer of lines keeps while the journal's writer is idle: a few hundred lines.
pub const LINES_IDLE: usize = 64 << 10;

// Boxed: a box is what circulates between the fires' threads and the writer.
#[allow(clippy::vec_box)]
mod at_hand {
    use super::{Record, Repeated};
    use std::cell::RefCell;

    thread_local! {
        /// Written records this thread took back from the writer, for its next fires
        /// ([`super::Recorder::fresh`]).
        pub static NEXT: RefCell<Vec<Box<Record>>> = const { RefCell::new(Vec::new()) };
        /// The line a fire's record is written into on this thread, the times' date, worked out once
        /// a second, and the origins of its last lines, to repeat ([`super::Recorder::note_boxed`]).
        pub static LINE: RefCell<(Vec<u8>, crate::time::Stamps, Repeated)> =
            RefCell::default();
    }
}
use at_hand::{LINE, NEXT};

static RECORDER: OnceLock<Recorder> = OnceLock::new();

/// The writer's end of the process's recorder: see [`install`].
#[derive(Debug)]
pub struct Queue(&'static Recorder);

/// Installs the process's recorder, with room for `capacity` records waiting: the queue's other end is
/// the journal's writer's. `None` when one is installed already (a process has one journal).
pub fn install(capacity: usize) -> Option<Queue> {
    let recorder = Recorder {
        queue: Mutex::default(),
        arrived: Condvar::new(),
        capacity,
        dropped: AtomicU64::new(0),
        wakes: AtomicU64::new(0),
        full_inputs: false.into(),
        lines_here: true.into(),
    };
    RECORDER.set(recorder).ok()?;
    RECORDER.get().map(Queue)
}

/// The process's recorder, when one is installed.
pub fn get() -> Option<&'static Recorder> {
    RECORDER.get()
}

/// Hands `record` to the journal's writer without waiting; a no-op without a recorder.
pub fn note(record: Record) {
    if let Some(recorder) = RECORDER.get() {
        recorder.note(record);
    }
}

impl Recorder {
    pub fn note(&self, record: Record) {
        self.note_boxed(Box::new(record));
    }

    /// A fire's record to fill in: one the writer gave back when there is one, its strings kept
    /// ([`Record::recycled`]; [`Record::describe`] must write them), else a new one; of `kind`, now.
    /// Taken from what this thread's last hand-over brought back ([`Recorder::note_boxed`]), without a
    /// lock: a fire takes the queue's lock once, to hand its record over.
    pub fn fresh(&self, kind: Kind, digest: &std::sync::Arc<str>) -> Box<Record> {
        // `try_with`: a record made from a destructor as its thread ends (this thread's records at
        // hand gone) is a new one, never a panic that loses it.
        let at_hand = NEXT.try_with(|next| next.borrow_mut().pop()).ok().flatten();
        let mut record = at_hand.unwrap_or_else(|| Box::new(Record::new(kind)));
        record.kind = kind;
        record.at = Some(std::time::SystemTime::now());
        // A record filled again holds the digest of its last fire's settings ([`Record::recycled`]):
        // the same settings' is kept as it is (its count, written by two threads in turn, would pass
        // between their cores), any other replaced here, so no record is handed out with a stale one.
        if !record
            .digest
            .as_ref()
            .is_some_and(|kept| std::sync::Arc::ptr_eq(kept, digest))
        {
            record.digest = Some(digest.clone()).filter(|digest| !digest.is_empty());
        }
        record
    }

    /// [`Recorder::note`] of a record already boxed: a fire's plain record written as its line here
    /// (see the module's doc), any other handed over whole. Under the hand-over's lock, spare records
    /// for this thread's next fires are taken, when it has none at hand.
    pub fn note_boxed(&self, record: Box<Record>) {
        let Some(record) = self.note_as_line(record) else {
            return;
        };
        let mut waiting = lock(&self.queue);
        // As a thread ends (its records at hand gone), the record is still handed over.
        let _ = NEXT.try_with(|next| {
            let mut next = next.borrow_mut();
            if next.is_empty() {
                let from = waiting.spare.len().saturating_sub(AT_HAND);
                next.extend(waiting.spare.drain(from..));
            }
        });
        if waiting.records >= self.capacity {
            drop(waiting);
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.push(waiting, Message::Record(record));
    }

    /// `record` written as its line on this thread and its line queued, when it is a fire's plain
    /// record and nobody watches; else `record`, to hand over whole. The record is kept on this
    /// thread for its next fire.
    fn note_as_line(&self, mut record: Box<Record>) -> Option<Box<Record>> {
        let plain = record.kind == Kind::Fire
            && record.hooks.is_empty()
            && record.input.is_none()
            && record.error.is_none();
        if !plain || !self.lines_here.load(Ordering::Relaxed) {
            return Some(record);
        }
        // Whether the line was queued (or dropped, the queue full); else the record goes whole.
        let queued = LINE
            .try_with(|line| {
                let (line, stamps, repeated) = &mut *line.borrow_mut();
                line.clear();
                record.bound();
                record.write_line_repeating(line, stamps, repeated);
                let decision = record.verdict.as_ref().map(|verdict| verdict.decision);
                let mut waiting = lock(&self.queue);
                // A watcher came while the line was written: the record goes whole, for it.
                if !self.lines_here.load(Ordering::Relaxed) {
                    return false;
                }
                if waiting.records >= self.capacity {
                    drop(waiting);
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                    return true;
                }
                if let Some(moment) = &record.moment
                    && !waiting.count(moment, decision)
                {
                    return false;
                }
                waiting.records += 1;
                waiting.line_count += 1;
                waiting.lines.extend_from_slice(line);
                self.wake_if_asleep(waiting);
                true
            })
            // As a thread ends (its line gone), the record goes to the writer whole.
            .unwrap_or(false);
        if !queued {
            return Some(record);
        }
        // Kept for this thread's next fire, when it has room at hand.
        let record = record.recycled();
        let _ = NEXT.try_with(|next| {
            let mut next = next.borrow_mut();
            if next.len() < AT_HAND {
                next.push(record);
            }
        });
        None
    }

    /// `message` queued; the writer woken if it sleeps until one comes.
    fn push(&self, mut waiting: std::sync::MutexGuard<'_, Waiting>, message: Message) {
        if matches!(message, Message::Record(_)) {
            waiting.records += 1;
        }
        // The fires' lines queued before this message are written before it.
        if waiting.lines.len() > waiting.marked {
            let end = waiting.lines.len();
            waiting.messages.push(Message::Lines(end));
            waiting.marked = end;
        }
        waiting.messages.push(message);
        self.wake_if_asleep(waiting);
    }

    /// The writer woken if it sleeps until something comes.
    fn wake_if_asleep(&self, mut waiting: std::sync::MutexGuard<'_, Waiting>) {
        let wake = std::mem::take(&mut waiting.writer_asleep);
        drop(waiting);
        if wake {
            self.wakes.fetch_add(1, Ordering::Relaxed);
            self.arrived.notify_one();
        }
    }

    /// Whether fires' plain records may be written as lines on their own threads: not while anybody
    /// watches the records.
    pub fn set_lines_here(&self, here: bool) {
        self.lines_here.store(here, Ordering::Relaxed);
    }

    /// No more fires' lines written where they fired, from now: said under the queue's lock, which a
    /// line is queued under, so that every record queued after this returns comes whole (a watcher
    /// that starts watching gets every record handed over after).
    pub fn stop_lines_here(&self) {
        let _queue = lock(&self.queue);
        self.lines_here.store(false, Ordering::Relaxed);
    }

    /// Asks the writer to write what is queued and waits for it, at most `deadline`.
    pub fn flush(&self, deadline: Duration) -> bool {
        let (done, wait) = sync_channel(1);
        self.push(lock(&self.queue), Message::Flush(done));
        wait.recv_timeout(deadline).is_ok()
    }

    /// The records dropped since the last call, counted afresh from zero.
    pub fn take_dropped(&self) -> u64 {
        self.dropped.swap(0, Ordering::Relaxed)
    }

    /// Whether records keep whole tool inputs.
    pub fn full_inputs(&self) -> bool {
        self.full_inputs.load(Ordering::Relaxed)
    }

    pub fn set_full_inputs(&self, full: bool) {
        self.full_inputs.store(full, Ordering::Relaxed);
    }
}

impl Waiting {
    /// A fire of `moment` whose line was written on its thread, counted; `false` when the tick's
    /// counts already hold [`COUNTED_MOMENTS`] others (the record then goes to the writer whole).
    fn count(&mut self, moment: &str, decision: Option<Ruling>) -> bool {
        let at = match self
            .counted
            .iter()
            .position(|counts| counts.moment == moment)
        {
            Some(at) => at,
            None if self.counted.len() >= COUNTED_MOMENTS => return false,
            None => {
                self.counted.push(FireCounts {
                    moment: moment.to_owned(),
                    ..FireCounts::default()
                });
                self.counted.len() - 1
            }
        };
        self.counted[at].count(decision);
        true
    }
}

impl Queue {
    /// Sleeps until a message waits, at most `timeout`; whether one does.
    pub fn wait(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut waiting = lock(&self.0.queue);
        while waiting.messages.is_empty() && waiting.lines.is_empty() {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                waiting.writer_asleep = false;
                return false;
            };
            waiting.writer_asleep = true;
            waiting = match self.0.arrived.wait_timeout(waiting, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        waiting.writer_asleep = false;
        true
    }

    /// Fires' records written, given back to be filled again ([`Recorder::fresh`]); past [`SPARE`]
    /// kept, the rest are let go.
    #[allow(clippy::vec_box)]
    pub fn give_back(&self, records: &mut Vec<Box<Record>>) {
        if records.is_empty() {
            return;
        }
        let mut waiting = lock(&self.0.queue);
        let room = SPARE.saturating_sub(waiting.spare.len());
        let kept = records.len().min(room);
        waiting.spare.extend(records.drain(..kept));
        drop(waiting);
        records.clear();
    }

    /// The spare records cut to [`SPARE_IDLE`], and their list's room with them, and the fires' lines'
    /// room to [`LINES_IDLE`]: the writer is going idle.
    pub fn trim_spare(&self) {
        let mut waiting = lock(&self.0.queue);
        waiting.lines.shrink_to(LINES_IDLE);
        if waiting.spare.capacity() > SPARE_IDLE {
            let kept: Vec<Box<Record>> = {
                let from = waiting.spare.len().saturating_sub(SPARE_IDLE);
                waiting.spare.drain(from..).collect()
            };
            let let_go = std::mem::replace(&mut waiting.spare, kept);
            drop(waiting);
            drop(let_go);
        }
    }

    /// Everything waiting, taken at once into `into` (emptied first): the lists under the lock are
    /// swapped for `into`'s, so that neither side allocates once both have grown to what a tick brings.
    pub fn take_all(&self, into: &mut Taken) {
        into.messages.clear();
        into.lines.clear();
        into.counted.clear();
        let mut waiting = lock(&self.0.queue);
        std::mem::swap(&mut waiting.messages, &mut into.messages);
        std::mem::swap(&mut waiting.lines, &mut into.lines);
        std::mem::swap(&mut waiting.counted, &mut into.counted);
        into.line_count = std::mem::take(&mut waiting.line_count);
        waiting.records = 0;
        waiting.marked = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_digest() -> std::sync::Arc<str> {
        "".into()
    }

    /// A recorder writing plain fires' lines where they are noted.
    fn recorder_with(capacity: usize) -> &'static Recorder {
        let recorder = recorder(capacity);
        recorder.set_lines_here(true);
        recorder
    }

    fn recorder(capacity: usize) -> &'static Recorder {
        Box::leak(Box::new(Recorder {
            queue: Mutex::default(),
            arrived: Condvar::new(),
            capacity,
            dropped: AtomicU64::new(0),
            wakes: AtomicU64::new(0),
            full_inputs: false.into(),
            lines_here: false.into(),
        }))
    }

    #[test]
    fn records_past_the_capacity_are_counted_as_dropped_and_a_flush_always_fits() {
        let recorder = recorder(2);
        let queue = Queue(recorder);
        for _ in 0..5 {
            recorder.note(Record::new(super::super::line::Kind::Fire));
        }
        assert_eq!(recorder.take_dropped(), 3);
        let (done, _wait) = sync_channel(1);
        recorder.push(lock(&recorder.queue), Message::Flush(done));
        let mut taken = Taken::default();
        queue.take_all(&mut taken);
        assert_eq!(taken.messages.len(), 3);
        assert!(matches!(taken.messages[2], Message::Flush(_)));
        // Taken, there is room again.
        recorder.note(Record::new(super::super::line::Kind::Fire));
        assert_eq!(recorder.take_dropped(), 0);
    }

    #[test]
    fn a_fire_takes_its_next_records_with_its_hand_over_and_the_writer_is_woken_once() {
        let recorder = recorder(1000);
        let queue = Queue(recorder);
        // The writer asleep on an empty queue; written records waiting to be filled again.
        let mut written: Vec<Box<Record>> = (0..20)
            .map(|_| Box::new(Record::new(super::super::line::Kind::Fire)))
            .collect();
        let addresses: Vec<usize> = written
            .iter()
            .map(|r| &**r as *const Record as usize)
            .collect();
        queue.give_back(&mut written);
        lock(&recorder.queue).writer_asleep = true;
        std::thread::spawn(move || {
            let mut reused = 0;
            for _ in 0..100 {
                let record = recorder.fresh(Kind::Fire, &no_digest());
                reused += usize::from(addresses.contains(&(&*record as *const Record as usize)));
                recorder.note_boxed(record);
            }
            // The first fire finds none at hand and has a new record; each hand-over that finds
            // none at hand brings the next ones back.
            assert_eq!(reused, 20);
        })
        .join()
        .unwrap();
        assert_eq!(
            recorder.wakes.load(Ordering::Relaxed),
            1,
            "one wake-up for 100 records"
        );
        let mut taken = Taken::default();
        queue.take_all(&mut taken);
        assert_eq!(taken.messages.len(), 100, "every record handed over");
        assert!(lock(&recorder.queue).spare.is_empty());
    }

    #[test]
    fn a_fire_with_records_at_hand_takes_no_lock_for_its_next() {
        let recorder = recorder(1000);
        let queue = Queue(recorder);
        let mut written: Vec<Box<Record>> = (0..4)
            .map(|_| Box::new(Record::new(super::super::line::Kind::Fire)))
            .collect();
        queue.give_back(&mut written);
        let (handed, wait_handed) = sync_channel(0);
        let (go, wait_go) = sync_channel::<()>(0);
        let (filled, wait_filled) = sync_channel(1);
        let fire = std::thread::spawn(move || {
            recorder.note_boxed(recorder.fresh(Kind::Fire, &no_digest()));
            handed.send(()).unwrap();
            wait_go.recv().unwrap();
            filled
                .send(recorder.fresh(Kind::Fire, &no_digest()))
                .unwrap();
        });
        wait_handed.recv().unwrap();
        // The queue's lock held (by a writer taking its batch): the fire's next record still comes.
        let held = lock(&recorder.queue);
        go.send(()).unwrap();
        let next = wait_filled.recv_timeout(Duration::from_secs(60));
        drop(held);
        assert!(next.is_ok(), "the next record waited for the queue's lock");
        fire.join().unwrap();
    }

    /// A plain fire's record (no hook, no whole input, no error), its session `session`, of `moment`.
    fn plain_fire(session: &str, moment: &str, decision: Ruling) -> Box<Record> {
        let mut record = Box::new(Record::new(Kind::Fire));
        record.session = Some(session.into());
        record.moment = Some(moment.into());
        record.verdict = Some(super::super::line::Verdict {
            decision,
            ..Default::default()
        });
        record
    }

    #[test]
    fn plain_fires_come_as_lines_in_the_order_noted_among_the_records_handed_over_whole() {
        let recorder = recorder_with(1000);
        let queue = Queue(recorder);
        std::thread::spawn(move || {
            recorder.note_boxed(plain_fire("a", "PreToolUse", Ruling::None));
            recorder.note_boxed(plain_fire("b", "PreToolUse", Ruling::None));
            recorder.note(Record::new(Kind::Reload));
            recorder.note_boxed(plain_fire("c", "Stop", Ruling::Refused));
            let mut with_hook = plain_fire("h", "PreToolUse", Ruling::Asked);
            with_hook.hooks.push(super::super::line::Hook {
                name: "guard".into(),
                outcome: crate::decision::Outcome::Asked,
                exit: Some(0),
                ms: 1.0,
                error: None,
                stderr: None,
                layer: None,
            });
            recorder.note_boxed(with_hook);
            recorder.note_boxed(plain_fire("d", "PreToolUse", Ruling::Asked));
        })
        .join()
        .unwrap();
        let mut taken = Taken::default();
        queue.take_all(&mut taken);
        let sessions = |bytes: &[u8]| -> Vec<String> {
            String::from_utf8_lossy(bytes)
                .lines()
                .map(|line| {
                    let record: Record = serde_json::from_str(line).expect("a whole record");
                    record.session.unwrap_or_default()
                })
                .collect()
        };
        // a, b | the reload | c | the fire with a hook | d
        let [
            Message::Lines(first),
            Message::Record(reload),
            Message::Lines(second),
            Message::Record(hooked),
        ] = taken.messages.as_slice()
        else {
            panic!("not lines, a record, lines, a record: {:?}", taken.messages)
        };
        assert_eq!(reload.kind, Kind::Reload);
        assert_eq!(hooked.session.as_deref(), Some("h"));
        assert_eq!(sessions(&taken.lines[..*first]), ["a", "b"]);
        assert_eq!(sessions(&taken.lines[*first..*second]), ["c"]);
        assert_eq!(sessions(&taken.lines[*second..]), ["d"]);
        assert_eq!(taken.line_count, 4);
        let counts: Vec<_> = taken
            .counted
            .iter()
            .map(|c| (c.moment.as_str(), c.fires, c.refused, c.asked))
            .collect();
        assert_eq!(counts, [("PreToolUse", 3, 0, 1), ("Stop", 1, 1, 0)]);
        // Taken, the next fire's line starts a list of its own.
        recorder.note_boxed(plain_fire("e", "PreToolUse", Ruling::None));
        queue.take_all(&mut taken);
        assert!(taken.messages.is_empty());
        assert_eq!(sessions(&taken.lines), ["e"]);
    }

    #[test]
    fn a_plain_fire_is_handed_over_whole_while_somebody_watches_and_its_record_stays_at_hand_otherwise()
     {
        let recorder = recorder(1000);
        let queue = Queue(recorder);
        std::thread::spawn(move || {
            recorder.note_boxed(plain_fire("watched", "PreToolUse", Ruling::None));
            recorder.set_lines_here(true);
            let record = plain_fire("plain", "PreToolUse", Ruling::None);
            let address = &*record as *const Record as usize;
            recorder.note_boxed(record);
            let next = recorder.fresh(Kind::Fire, &no_digest());
            assert_eq!(
                &*next as *const Record as usize, address,
                "filled again here"
            );
            assert_eq!(
                next.session.as_deref().unwrap_or_default(),
                "",
                "a text of the record's last fire"
            );
        })
        .join()
        .unwrap();
        let mut taken = Taken::default();
        queue.take_all(&mut taken);
        assert!(
            matches!(taken.messages.as_slice(), [Message::Record(r)] if r.session.as_deref() == Some("watched"))
        );
        assert_eq!(taken.line_count, 1);
    }

    #[test]
    fn a_record_filled_again_never_keeps_another_settings_digest() {
        let recorder = recorder_with(1000);
        std::thread::spawn(move || {
            let (first, second): (std::sync::Arc<str>, std::sync::Arc<str>) =
                ("first".into(), "second".into());
            let mut record = recorder.fresh(Kind::Fire, &first);
            record.moment = Some("PreToolUse".into());
            recorder.note_boxed(record);
            let record = recorder.fresh(Kind::Fire, &second);
            assert_eq!(record.digest.as_deref(), Some("second"));
            recorder.note_boxed(record);
            let record = recorder.fresh(Kind::Fire, &no_digest());
            assert_eq!(record.digest, None, "settings with no digest: none said");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn fires_lines_past_the_capacity_are_dropped_and_a_moment_past_the_counted_ones_goes_whole() {
        let recorder = recorder_with(2);
        let queue = Queue(recorder);
        for fire in 0..5 {
            recorder.note_boxed(plain_fire(&fire.to_string(), "PreToolUse", Ruling::None));
        }
        assert_eq!(recorder.take_dropped(), 3);
        let mut taken = Taken::default();
        queue.take_all(&mut taken);
        assert_eq!(taken.line_count, 2);
        let big = recorder_with(COUNTED_MOMENTS * 2);
        let queue = Queue(big);
        for moment in 0..=COUNTED_MOMENTS {
            big.note_boxed(plain_fire("s", &format!("Made{moment}"), Ruling::None));
        }
        queue.take_all(&mut taken);
        assert_eq!(taken.line_count as usize, COUNTED_MOMENTS);
        assert_eq!(taken.counted.len(), COUNTED_MOMENTS);
        assert!(
            matches!(taken.messages.as_slice(), [Message::Lines(_), Message::Record(r)] if r.moment.as_deref() == Some(&*format!("Made{COUNTED_MOMENTS}")))
        );
    }

    #[test]
    fn a_writer_asleep_is_woken_by_the_first_record() {
        let recorder = recorder(16);
        let queue = Queue(recorder);
        assert!(!queue.wait(Duration::from_millis(10)), "nothing waits");
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            recorder.note(Record::new(super::super::line::Kind::Fire));
        });
        let started = Instant::now();
        assert!(queue.wait(Duration::from_secs(30)));
        assert!(started.elapsed() < Duration::from_secs(30));
        sender.join().unwrap();
        let mut taken = Taken::default();
        queue.take_all(&mut taken);
        assert_eq!(taken.messages.len(), 1);
    }

    /// The writer's loop as the journal runs it (asleep on an empty queue, then gathering, giving
    /// written records back) against fires on two threads that each hand a record over and wait for it
    /// to be taken, thousands of times, so that hand-overs land on every side of the writer's going to
    /// sleep: none is left waiting while the writer sleeps (its sleep is a minute, the wait for the
    /// record ten seconds), none is taken twice, and every record given back is filled again.
    #[test]
    fn no_record_waits_while_the_writer_sleeps() {
        use std::sync::atomic::AtomicUsize;
        let recorder = recorder(1 << 20);
        let queue = Queue(recorder);
        // Records taken of each fire's thread (told by the record's `count`), and the writer's stop.
        let taken_of: &'static [AtomicUsize; 2] =
            Box::leak(Box::new([AtomicUsize::new(0), AtomicUsize::new(0)]));
        let writer = std::thread::spawn(move || {
            let mut taken = Taken::default();
            let mut spent = Vec::new();
            let mut gathering = false;
            loop {
                if gathering {
                    std::thread::yield_now();
                } else {
                    queue.trim_spare();
                    queue.wait(Duration::from_secs(60));
                }
                queue.take_all(&mut taken);
                gathering = !taken.messages.is_empty();
                for message in taken.messages.drain(..) {
                    match message {
                        Message::Record(record) => {
                            let of = record.count.unwrap_or_default() as usize;
                            taken_of[of].fetch_add(1, Ordering::SeqCst);
                            spent.push(record.recycled());
                        }
                        Message::Flush(_) => return,
                        Message::Lines(_) => panic!("a line written where lines are not wanted"),
                    }
                }
                queue.give_back(&mut spent);
            }
        });
        const FIRES: usize = 5000;
        let fire = move |of: usize| {
            for fired in 1..=FIRES {
                let mut record = recorder.fresh(Kind::Fire, &no_digest());
                assert_eq!(record.count, None, "a field of the record's last fire");
                record.count = Some(of as u64);
                recorder.note_boxed(record);
                let deadline = Instant::now() + Duration::from_secs(10);
                while taken_of[of].load(Ordering::SeqCst) < fired {
                    assert!(
                        Instant::now() < deadline,
                        "a record waits while the writer sleeps"
                    );
                    std::thread::yield_now();
                }
                // A pause of 0 to 60 µs: the next hand-over lands before, while and after the
                // writer goes to sleep.
                let pause = Duration::from_micros((fired as u64 * 7919) % 61);
                let paused = Instant::now();
                while paused.elapsed() < pause {
                    std::thread::yield_now();
                }
            }
        };
        let fires: Vec<_> = (0..2)
            .map(|of| std::thread::spawn(move || fire(of)))
            .collect();
        for fire in fires {
            fire.join().unwrap();
        }
        let (done, _) = sync_channel(1);
        recorder.push(lock(&recorder.queue), Message::Flush(done));
        writer.join().unwrap();
        for of in taken_of {
            assert_eq!(of.load(Ordering::SeqCst), FIRES, "each record taken once");
        }
        assert_eq!(recorder.take_dropped(), 0);
    }
}
