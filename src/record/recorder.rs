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

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::line::Record;
use crate::sync::lock;

/// What the journal's writer is handed.
#[derive(Debug)]
pub enum Message {
    Record(Box<Record>),
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
    /// Whether to keep whole tool inputs (`[record] full_inputs`), as last installed.
    full_inputs: AtomicBool,
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
}

/// The most written records kept for the next fires: a tick's worth at a few thousand fires a second.
const SPARE: usize = 256;

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
        full_inputs: false.into(),
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
    pub fn fresh(&self, kind: super::line::Kind) -> Box<Record> {
        let spare = lock(&self.queue).spare.pop();
        let mut record = spare.unwrap_or_else(|| Box::new(Record::new(kind)));
        record.kind = kind;
        record.at = Some(std::time::SystemTime::now());
        record
    }

    /// [`Recorder::note`] of a record already boxed.
    pub fn note_boxed(&self, record: Box<Record>) {
        let waiting = lock(&self.queue);
        if waiting.records >= self.capacity {
            drop(waiting);
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.push(waiting, Message::Record(record));
    }

    /// `message` queued; the writer woken if it sleeps until one comes.
    fn push(&self, mut waiting: std::sync::MutexGuard<'_, Waiting>, message: Message) {
        if matches!(message, Message::Record(_)) {
            waiting.records += 1;
        }
        waiting.messages.push(message);
        let wake = std::mem::take(&mut waiting.writer_asleep);
        drop(waiting);
        if wake {
            self.arrived.notify_one();
        }
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

impl Queue {
    /// Sleeps until a message waits, at most `timeout`; whether one does.
    pub fn wait(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut waiting = lock(&self.0.queue);
        while waiting.messages.is_empty() {
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

    /// Everything waiting, taken at once into `into` (emptied first): the list under the lock is
    /// swapped for `into`'s, so that neither side allocates once both have grown to what a tick brings.
    pub fn take_all(&self, into: &mut Vec<Message>) {
        into.clear();
        let mut waiting = lock(&self.0.queue);
        std::mem::swap(&mut waiting.messages, into);
        waiting.records = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorder(capacity: usize) -> &'static Recorder {
        Box::leak(Box::new(Recorder {
            queue: Mutex::default(),
            arrived: Condvar::new(),
            capacity,
            dropped: AtomicU64::new(0),
            full_inputs: false.into(),
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
        let mut taken = Vec::new();
        queue.take_all(&mut taken);
        assert_eq!(taken.len(), 3);
        assert!(matches!(taken[2], Message::Flush(_)));
        // Taken, there is room again.
        recorder.note(Record::new(super::super::line::Kind::Fire));
        assert_eq!(recorder.take_dropped(), 0);
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
        let mut taken = Vec::new();
        queue.take_all(&mut taken);
        assert_eq!(taken.len(), 1);
    }
}
