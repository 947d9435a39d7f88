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
    /// How many times a record woke the writer: once per stretch of fires after an idle spell.
    wakes: AtomicU64,
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

// Boxed: a box is what circulates between the fires' threads and the writer.
#[allow(clippy::vec_box)]
mod at_hand {
    use super::Record;
    use std::cell::RefCell;

    thread_local! {
        /// Written records this thread took back from the writer, for its next fires
        /// ([`super::Recorder::fresh`]).
        pub static NEXT: RefCell<Vec<Box<Record>>> = const { RefCell::new(Vec::new()) };
    }
}
use at_hand::NEXT;

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
    pub fn fresh(&self, kind: super::line::Kind) -> Box<Record> {
        // `try_with`: a record made from a destructor as its thread ends (this thread's records at
        // hand gone) is a new one, never a panic that loses it.
        let at_hand = NEXT.try_with(|next| next.borrow_mut().pop()).ok().flatten();
        let mut record = at_hand.unwrap_or_else(|| Box::new(Record::new(kind)));
        record.kind = kind;
        record.at = Some(std::time::SystemTime::now());
        record
    }

    /// [`Recorder::note`] of a record already boxed. Under the same lock, spare records for this
    /// thread's next fires are taken, when it has none at hand.
    pub fn note_boxed(&self, record: Box<Record>) {
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

    /// `message` queued; the writer woken if it sleeps until one comes.
    fn push(&self, mut waiting: std::sync::MutexGuard<'_, Waiting>, message: Message) {
        if matches!(message, Message::Record(_)) {
            waiting.records += 1;
        }
        waiting.messages.push(message);
        let wake = std::mem::take(&mut waiting.writer_asleep);
        drop(waiting);
        if wake {
            self.wakes.fetch_add(1, Ordering::Relaxed);
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

    /// The spare records cut to [`SPARE_IDLE`], and their list's room with them: the writer is going
    /// idle.
    pub fn trim_spare(&self) {
        let mut waiting = lock(&self.0.queue);
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
            wakes: AtomicU64::new(0),
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
                let record = recorder.fresh(super::super::line::Kind::Fire);
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
        let mut taken = Vec::new();
        queue.take_all(&mut taken);
        assert_eq!(taken.len(), 100, "every record handed over");
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
            recorder.note_boxed(recorder.fresh(super::super::line::Kind::Fire));
            handed.send(()).unwrap();
            wait_go.recv().unwrap();
            filled
                .send(recorder.fresh(super::super::line::Kind::Fire))
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
            let mut taken = Vec::new();
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
                gathering = !taken.is_empty();
                for message in taken.drain(..) {
                    match message {
                        Message::Record(record) => {
                            let of = record.count.unwrap_or_default() as usize;
                            taken_of[of].fetch_add(1, Ordering::SeqCst);
                            spent.push(record.recycled());
                        }
                        Message::Flush(_) => return,
                    }
                }
                queue.give_back(&mut spent);
            }
        });
        const FIRES: usize = 5000;
        let fire = move |of: usize| {
            for fired in 1..=FIRES {
                let mut record = recorder.fresh(super::super::line::Kind::Fire);
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
