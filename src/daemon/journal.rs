//! The journal's writer (docs/record.md): a thread of its own that takes records from the recorder's
//! queue, counts them for `status`, streams them to watchers, and appends them to
//! `$XDG_STATE_HOME/hookd/journal.jsonl`, rotated by size.
//!
//! Off the fire path: a fire hands its record over without waiting ([`crate::record::note`]); if this
//! thread falls behind (a slow disk), the queue fills, records are counted as dropped, and the count is
//! written as a record of its own. Crash-safe: each batch of whole lines is one `write` on a file opened
//! `O_APPEND` (one per file when a batch spans a rotation), so a `kill -9` leaves only whole lines (the
//! last batch may be missing), and a start after
//! a torn write (a full disk) cuts the partial line off before appending.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::broadcast;

use crate::daemon::tally::Tally;
use crate::engine::Engine;
use crate::record::{self, Kind, LINES_IDLE, Message, Record, Taken};
use crate::sync::lock;

/// Records waiting for the writer before more are dropped.
pub const QUEUE: usize = 16_384;

/// Records a watcher may fall behind by before it is dropped.
pub const WATCH_BUFFER: usize = 4096;

/// How long the writer gathers records before it writes them, while they come: the most a record waits
/// to reach the journal and the watchers, and what a `kill -9` may lose.
const TICK: Duration = Duration::from_millis(20);

/// How often the relay's spool is looked at while the daemon runs (and at start).
const SPOOL_EVERY: Duration = Duration::from_secs(30);

pub use crate::record::read::{FILE, rotated};

/// A record as watchers get it: the value, to filter on, and its line, serialized once.
#[derive(Debug)]
pub struct Entry {
    pub record: Record,
    pub line: Vec<u8>,
}

/// What the daemon's other tasks see of the journal.
#[derive(Debug)]
pub struct Journal {
    /// Every record, as written, for `watch`: made when the first watcher comes ([`Journal::watch`]),
    /// since its slots (all [`WATCH_BUFFER`] of them) are made, and resident, at once.
    hub: std::sync::OnceLock<broadcast::Sender<Arc<Entry>>>,
    /// Held while a watcher comes, and while the writer sees whether anybody watches: a fire's record
    /// is written as its line on the fire's thread (a watcher gets none) only while nobody does, and
    /// the writer must not say "nobody" between a watcher's coming and its first record.
    watching: Mutex<()>,
    /// Counts for `status`.
    pub tally: Mutex<Tally>,
    /// Where the journal is written.
    pub path: PathBuf,
    pub(crate) written: Mutex<Written>,
}

/// What the writer has done, for `status`.
#[derive(Debug, Default, Clone)]
pub struct Written {
    pub records: u64,
    pub dropped: u64,
    pub last_error: Option<String>,
}

impl Journal {
    /// Starts the writer, which installs the process's recorder. `None` when a recorder is installed
    /// already (a second daemon in one process: a test).
    pub fn start(engine: Arc<Engine>, state_dir: PathBuf) -> Option<Arc<Journal>> {
        let queue = record::install(QUEUE)?;
        let journal = Arc::new(Journal {
            hub: std::sync::OnceLock::new(),
            watching: Mutex::default(),
            tally: Mutex::default(),
            path: state_dir.join(FILE),
            written: Mutex::default(),
        });
        let writer = Writer {
            journal: journal.clone(),
            engine,
            state_dir,
            file: None,
            stamps: crate::time::Stamps::default(),
            spent: Vec::new(),
            lines: Vec::new(),
        };
        std::thread::Builder::new()
            .name("hookd-journal".into())
            .spawn(move || writer.run(queue))
            .ok()?;
        Some(journal)
    }

    /// A stream of every record noted from now on: from here, fires' records come to the writer
    /// whole, for the watcher, until nobody watches ([`Writer::lines_where_fired_unless_watched`]).
    pub fn watch(&self) -> broadcast::Receiver<Arc<Entry>> {
        let _watching = lock(&self.watching);
        let receiver = self
            .hub
            .get_or_init(|| broadcast::channel(WATCH_BUFFER).0)
            .subscribe();
        if let Some(recorder) = record::get() {
            recorder.stop_lines_here();
        }
        receiver
    }

    /// How many watch the records.
    pub fn watchers(&self) -> usize {
        self.hub.get().map_or(0, broadcast::Sender::receiver_count)
    }

    pub fn written(&self) -> Written {
        lock(&self.written).clone()
    }
}

/// What the writer has taken, in the order it was noted: a record, or fires' lines written on their own
/// threads (a range of [`Taken::lines`]).
enum Batched {
    Record(Box<Record>),
    Lines(std::ops::Range<usize>),
}

// Records stay boxed from the fire to the writer and back ([`record::Recorder::fresh`]): a box is what
// circulates, so that neither thread allocates or frees one per fire.
#[allow(clippy::vec_box)]
struct Writer {
    journal: Arc<Journal>,
    engine: Arc<Engine>,
    state_dir: PathBuf,
    /// The journal file open for appending, and its length.
    file: Option<(File, u64)>,
    /// Records' times, the date written once a second.
    stamps: crate::time::Stamps,
    /// Records written, emptied, to give back to the fires ([`Record::recycled`]).
    spent: Vec<Box<Record>>,
    /// The last batch's lines' buffer, emptied, for the next batch's.
    lines: Vec<u8>,
}

/// The most room the batch's buffer keeps between batches: a tick's lines at 100,000 fires a second.
const LINES_KEPT: usize = 1 << 20;

#[allow(clippy::vec_box)]
impl Writer {
    /// Idle, the writer blocks on the queue, and the first record wakes it; then it gathers on a
    /// [`TICK`], draining the queue once a tick, until a tick brings nothing. So a fire never pays a
    /// wake-up of this thread while fires come often (the cost that mattered: a record per fire, each
    /// waking the writer for its own `write`, made a no-hook fire three times as slow), and an idle
    /// daemon does not poll.
    fn run(mut self, queue: record::Queue) {
        let mut batch: Vec<Batched> = self.spooled();
        let mut last_spool = Instant::now();
        let mut flushes = Vec::new();
        let mut taken = Taken::default();
        let mut gathering = false;
        loop {
            if gathering || !batch.is_empty() {
                std::thread::sleep(TICK);
            } else {
                // Going idle: what a burst of fires grew is let go.
                queue.trim_spare();
                self.lines.shrink_to(LINES_IDLE);
                taken.lines.shrink_to(LINES_IDLE);
                queue.wait(SPOOL_EVERY);
            }
            queue.take_all(&mut taken);
            let mut placed = 0;
            for message in taken.messages.drain(..) {
                match message {
                    Message::Record(record) => batch.push(Batched::Record(record)),
                    Message::Lines(end) => {
                        batch.push(Batched::Lines(placed..end));
                        placed = end;
                    }
                    Message::Flush(done) => flushes.push(done),
                }
            }
            if placed < taken.lines.len() {
                batch.push(Batched::Lines(placed..taken.lines.len()));
            }
            gathering = !batch.is_empty();
            if last_spool.elapsed() >= SPOOL_EVERY {
                batch.extend(self.spooled());
                last_spool = Instant::now();
            }
            if let Some(recorder) = record::get() {
                let dropped = recorder.take_dropped();
                if dropped > 0 {
                    let mut record = Record::new(Kind::Dropped);
                    record.count = Some(dropped);
                    lock(&self.journal.written).dropped += dropped;
                    batch.push(Batched::Record(Box::new(record)));
                }
                self.lines_where_fired_unless_watched(recorder);
            }
            self.write(&mut batch, &taken);
            queue.give_back(&mut self.spent);
            for done in flushes.drain(..) {
                let _ = done.try_send(());
            }
        }
    }

    /// What the relay answered alone while the daemon was down, from its spool.
    fn spooled(&self) -> Vec<Batched> {
        record::spool::take(&self.state_dir)
            .into_iter()
            .map(|record| Batched::Record(Box::new(record)))
            .collect()
    }

    /// Fires' lines written where they fired again, once nobody watches (while somebody does, their
    /// records come whole, for them): looked at and said under the lock a watcher comes under, so
    /// that a watcher that comes between the two is not left without records.
    fn lines_where_fired_unless_watched(&self, recorder: &record::Recorder) {
        let _watching = lock(&self.journal.watching);
        if self.journal.watchers() == 0 {
            recorder.set_lines_here(true);
        }
    }

    /// Writes `batch` (emptied; its room kept for the next), with the fires' lines `taken` brought.
    fn write(&mut self, batch: &mut Vec<Batched>, taken: &Taken) {
        if batch.is_empty() {
            return;
        }
        let settings = self.engine.current().settings.record.clone();
        if let Some(recorder) = record::get() {
            recorder.set_full_inputs(settings.full_inputs);
        }
        let mut lines = std::mem::take(&mut self.lines);
        lines.clear();
        {
            let mut tally = lock(&self.journal.tally);
            for item in batch.iter() {
                if let Batched::Record(record) = item {
                    tally.count(record);
                }
            }
            tally.count_fires(&taken.counted);
        }
        let hub = self
            .journal
            .hub
            .get()
            .filter(|hub| hub.receiver_count() > 0);
        let mut count = 0u64;
        for item in batch.drain(..) {
            let mut record = match item {
                Batched::Record(record) => record,
                // Fires' lines: with the journal turned off since, not kept (as a fire's record).
                Batched::Lines(range) => {
                    if settings.enabled {
                        lines.extend_from_slice(&taken.lines[range]);
                    }
                    continue;
                }
            };
            record.bound();
            let start = lines.len();
            record.write_line(&mut lines, &mut self.stamps);
            // With the journal off, a reload that weakened the guard is written all the same: turning
            // the journal off in the same edit must not hide it.
            let kept = settings.enabled || record.kind == Kind::Weakened;
            if let Some(hub) = hub {
                let line = lines[start..].to_vec();
                let record = *record;
                let _ = hub.send(Arc::new(Entry { record, line }));
            } else if record.kind == Kind::Fire {
                self.spent.push(record.recycled());
            }
            if kept {
                count += 1;
            } else {
                lines.truncate(start);
            }
        }
        if settings.enabled {
            count += taken.line_count;
        }
        if lines.is_empty() {
            if !settings.enabled {
                self.file = None;
            }
            self.keep_lines(lines);
            return;
        }
        let max = settings.file_size_mib << 20;
        let result = self.append(&lines, max, settings.files);
        self.keep_lines(lines);
        let mut written = lock(&self.journal.written);
        match result {
            Ok(too_long) => {
                written.records += count - too_long;
                if too_long > 0 {
                    tracing::warn!(
                        "{too_long} records longer than file_size_mib were not written (a whole tool input kept by full_inputs)"
                    );
                    written.dropped += too_long;
                }
                written.last_error = None;
            }
            Err(e) => {
                let why = format!("cannot write {}: {e}", self.journal.path.display());
                if written.last_error.as_deref() != Some(why.as_str()) {
                    tracing::warn!("{why}; records are counted in status but not kept");
                }
                written.last_error = Some(why);
                self.file = None;
            }
        }
    }

    /// `lines`, written, kept for the next batch's, so that a batch allocates nothing; not past
    /// [`LINES_KEPT`] (a batch of long lines, or the relay's whole spool, is let go).
    fn keep_lines(&mut self, mut lines: Vec<u8>) {
        if lines.capacity() <= LINES_KEPT {
            lines.clear();
            self.lines = lines;
        }
    }

    /// Appends whole lines, rotating whenever the next would take the file past `max` bytes: each
    /// `write` is of whole lines that fit, so that no file passes `max` however large the batch (the
    /// relay's spool, taken at start, is a batch of up to 3 MiB; a thousand fires with long reasons pass
    /// a MiB too). A line longer than `max` on its own (only a whole input kept by `full_inputs` can be)
    /// is not written: it is counted, and the count returned, so the bound holds.
    fn append(&mut self, lines: &[u8], max: u64, files: u32) -> std::io::Result<u64> {
        // As nearly always: the whole batch fits in the open file, each line with it, in one write,
        // with no line looked for.
        if let Some((file, len)) = &mut self.file
            && *len + lines.len() as u64 <= max
        {
            file.write_all(lines)?;
            *len += lines.len() as u64;
            return Ok(0);
        }
        let mut too_long = 0;
        let mut rest = lines;
        while !rest.is_empty() {
            if self.file.is_none() {
                self.file = Some(open(&self.journal.path)?);
            }
            let Some((file, len)) = &mut self.file else {
                unreachable!("opened above")
            };
            let room = max.saturating_sub(*len);
            let mut fits = 0usize;
            for line in rest.split_inclusive(|&b| b == b'\n') {
                if (fits + line.len()) as u64 > room {
                    break;
                }
                fits += line.len();
            }
            if fits > 0 {
                file.write_all(&rest[..fits])?;
                *len += fits as u64;
                rest = &rest[fits..];
                continue;
            }
            let first = rest
                .split_inclusive(|&b| b == b'\n')
                .next()
                .map_or(0, <[u8]>::len);
            if first as u64 > max {
                too_long += 1;
                rest = &rest[first..];
                continue;
            }
            // The next line does not fit in what is left of a file that has lines: a new file.
            self.file = None;
            rotate(&self.journal.path, files)?;
        }
        Ok(too_long)
    }
}

/// Opens the journal at `path` for appending (folder 0700, file 0600, never through a link), cutting off
/// a partial last line left by a torn write; gives the file and its length.
fn open(path: &Path) -> std::io::Result<(File, u64)> {
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if metadata.permissions().mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    let mut len = metadata.len();
    if len > 0 {
        let whole = whole_length(&mut file, len)?;
        if whole != len {
            tracing::warn!(
                "{}: cut off a partial last line ({} bytes) left by a write cut short",
                path.display(),
                len - whole
            );
            file.set_len(whole)?;
            len = whole;
        }
    }
    Ok((file, len))
}

/// The length of the file up to and with its last `\n`.
fn whole_length(file: &mut File, len: u64) -> std::io::Result<u64> {
    let mut end = len;
    let mut chunk = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(chunk.len() as u64);
        let piece = &mut chunk[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(piece)?;
        if let Some(at) = piece.iter().rposition(|&b| b == b'\n') {
            return Ok(start + at as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// Moves `journal.jsonl` to `journal.1.jsonl`, and each older file one further, keeping `files` in all.
fn rotate(path: &Path, files: u32) -> std::io::Result<()> {
    let last = files.saturating_sub(1);
    if last == 0 {
        return std::fs::remove_file(path);
    }
    let _ = std::fs::remove_file(rotated(path, last));
    for n in (0..last).rev() {
        match std::fs::rename(rotated(path, n), rotated(path, n + 1)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_last_line_is_cut_off_on_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/journal.jsonl");
        let (mut file, len) = open(&path).unwrap();
        assert_eq!(len, 0);
        file.write_all(b"{\"a\":1}\n{\"b\":").unwrap();
        drop(file);
        let (mut file, len) = open(&path).unwrap();
        assert_eq!(len, 8);
        file.write_all(b"{\"c\":3}\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"a\":1}\n{\"c\":3}\n"
        );
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_batch_larger_than_a_file_is_split_across_rotations() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let mut writer = Writer {
            journal: Arc::new(Journal {
                hub: std::sync::OnceLock::new(),
                watching: Mutex::default(),
                tally: Mutex::default(),
                path: path.clone(),
                written: Mutex::default(),
            }),
            engine: Engine::new(crate::settings::Settings::empty(
                &dir.path().join("hooks.toml"),
            )),
            state_dir: dir.path().to_path_buf(),
            file: None,
            stamps: crate::time::Stamps::default(),
            spent: Vec::new(),
            lines: Vec::new(),
        };
        let line = format!("{}\n", "x".repeat(99));
        let lines = line.repeat(35);
        // 3,500 bytes into files of 1,000: 10 lines each, 3 files kept.
        assert_eq!(writer.append(lines.as_bytes(), 1000, 3).unwrap(), 0);
        for n in 0..3 {
            let len = std::fs::metadata(rotated(&path, n)).unwrap().len();
            assert!(len <= 1000, "file {n}: {len} bytes");
        }
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 500);
        let long = format!("{}\n", "y".repeat(2000));
        assert_eq!(writer.append(long.as_bytes(), 1000, 3).unwrap(), 1);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 500);
    }

    #[test]
    fn rotation_keeps_the_number_of_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        for round in 0..5 {
            std::fs::write(&path, format!("{round}\n")).unwrap();
            rotate(&path, 3).unwrap();
        }
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["journal.1.jsonl", "journal.2.jsonl"]);
        assert_eq!(std::fs::read_to_string(rotated(&path, 1)).unwrap(), "4\n");
        assert_eq!(std::fs::read_to_string(rotated(&path, 2)).unwrap(), "3\n");
    }
}
