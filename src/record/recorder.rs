//! The handle records are given to: one per process, installed by the daemon when it starts, as a
//! logger is. Everything that decides or changes something (a fire, a reload, a worker's restart) calls
//! [`note`], which never waits: the record goes into a bounded queue for the journal's writer, or, when
//! the writer has fallen that far behind, is counted as dropped (and that count is itself recorded).
//! Without an installed recorder (a test, a benchmark holding an engine in hand, `hookd test`), [`note`]
//! does nothing.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};

use super::line::Record;

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
    queue: SyncSender<Message>,
    dropped: AtomicU64,
    /// Whether to keep whole tool inputs (`[record] full_inputs`), as last installed.
    full_inputs: std::sync::atomic::AtomicBool,
}

static RECORDER: OnceLock<Recorder> = OnceLock::new();

/// Installs the process's recorder, with room for `capacity` records waiting: the receiving end is the
/// journal's writer's. `None` when one is installed already (a process has one journal).
pub fn install(capacity: usize) -> Option<Receiver<Message>> {
    let (queue, receiver) = sync_channel(capacity);
    let recorder = Recorder {
        queue,
        dropped: AtomicU64::new(0),
        full_inputs: false.into(),
    };
    RECORDER.set(recorder).ok().map(|()| receiver)
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
        match self.queue.try_send(Message::Record(Box::new(record))) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Asks the writer to write what is queued and waits for it, at most `deadline`.
    pub fn flush(&self, deadline: std::time::Duration) -> bool {
        let (done, wait) = sync_channel(1);
        let sent = match self.queue.try_send(Message::Flush(done.clone())) {
            Ok(()) => true,
            // A full queue: wait for room, but not past the deadline (the writer may be stuck on a disk).
            Err(TrySendError::Full(message)) => {
                let queue = self.queue.clone();
                std::thread::spawn(move || queue.send(message).is_ok());
                true
            }
            Err(TrySendError::Disconnected(_)) => false,
        };
        sent && wait.recv_timeout(deadline).is_ok()
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
