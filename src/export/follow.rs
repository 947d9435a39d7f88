//! Following the journal from its files, with a place kept on disk: where the exporter is, in which file
//! (by inode, and a hash of its first line, so that a file that took a dead one's inode is not taken
//! for it) and how far. The place moves only when a batch was taken by the collector
//! ([`Follower::commit`]), so each record is sent at least once: across a collector that is down (the
//! batch is read again from the file, never held in memory), a daemon restart (the place is in
//! hookd's state folder) and rotation (the journal is rotated by renaming, which keeps a file's inode).

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::record::read::{MAX_FILES, rotated};

/// The cursor's file in the state folder.
pub const CURSOR_FILE: &str = "export-otlp.cursor";

/// A place in the journal: a file and an offset in it, at the start of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    pub inode: u64,
    /// A hash of the file's first line (0 while the file had none).
    pub head: u64,
    pub offset: u64,
}

/// Lines read past a place, and the place after them.
#[derive(Debug)]
pub struct Batch {
    /// Whole lines, each without its `\n`.
    pub lines: Vec<Vec<u8>>,
    pub end: Place,
}

/// The journal followed from a place.
#[derive(Debug)]
pub struct Follower {
    journal: PathBuf,
    cursor: PathBuf,
    /// `None`: from the start of the oldest file (the journal had no file when the cursor was made).
    place: Option<Place>,
    /// Said once, then taken: the place was rotated away (records between it and the oldest file kept
    /// were not sent), or the cursor could not be read or written.
    pub trouble: Option<String>,
}

fn fnv(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash.max(1)
}

fn open(path: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
}

/// The hash of the file's first whole line (its first 64 KiB, enough to tell files apart), 0 when it has
/// none yet.
fn head_of(file: &mut File) -> std::io::Result<u64> {
    use std::io::Read;
    file.seek(SeekFrom::Start(0))?;
    let mut line = Vec::new();
    BufReader::new(&mut *file)
        .take(64 * 1024)
        .read_until(b'\n', &mut line)?;
    Ok(if line.last() == Some(&b'\n') {
        fnv(&line)
    } else {
        0
    })
}

/// The journal's files that exist, oldest first, with their inodes; listed until two listings agree, so
/// that a rotation under way (files renamed one by one) is not read half done.
fn listing(journal: &Path) -> Vec<(PathBuf, u64)> {
    let once = || -> Vec<(PathBuf, u64)> {
        (0..MAX_FILES)
            .rev()
            .map(|n| rotated(journal, n))
            .filter_map(|path| {
                let metadata = std::fs::symlink_metadata(&path).ok()?;
                metadata.is_file().then(|| (path, metadata.ino()))
            })
            .collect()
    };
    let mut last = once();
    for _ in 0..5 {
        let again = once();
        if again == last {
            break;
        }
        last = again;
    }
    last
}

fn inode_of(path: &Path) -> Option<u64> {
    std::fs::symlink_metadata(path).ok().map(|m| m.ino())
}

impl Follower {
    /// Follows `journal` from the place saved in `cursor`; without one (the first time), from the
    /// journal's end as it is now, a place saved at once: the history before export was turned on is not
    /// sent, and nothing written after is missed, whatever happens next.
    pub fn start(journal: PathBuf, cursor: PathBuf) -> Follower {
        let mut follower = Follower {
            journal,
            cursor,
            place: None,
            trouble: None,
        };
        match std::fs::read(&follower.cursor) {
            Ok(bytes) => match serde_json::from_slice::<Place>(&bytes) {
                Ok(place) => follower.place = Some(place),
                Err(e) => {
                    follower.trouble = Some(format!(
                        "{} could not be read ({e}): the export starts again from the journal's end",
                        follower.cursor.display()
                    ));
                    follower.place_at_end();
                }
            },
            Err(_) => follower.place_at_end(),
        }
        follower
    }

    fn place_at_end(&mut self) {
        self.place = listing(&self.journal).last().and_then(|(path, _)| {
            let mut file = open(path).ok()?;
            let metadata = file.metadata().ok()?;
            let head = head_of(&mut file).ok()?;
            let offset = whole_length(&mut file, metadata.len()).ok()?;
            Some(Place {
                inode: metadata.ino(),
                head,
                offset,
            })
        });
        if let Some(place) = self.place {
            self.save(place);
        }
    }

    fn save(&mut self, place: Place) {
        if let Err(e) = write_cursor(&self.cursor, &place) {
            self.trouble = Some(format!("cannot write {}: {e}", self.cursor.display()));
        }
    }

    /// The place reached, now sent: kept in memory and on disk.
    pub fn commit(&mut self, end: Place) {
        self.place = Some(end);
        self.save(end);
    }

    /// The file the place is in, opened and checked, with the place (the oldest file's start when the
    /// place's file is gone).
    fn locate(&mut self) -> std::io::Result<Option<(File, Place)>> {
        if let Some(place) = self.place {
            let path = if inode_of(&self.journal) == Some(place.inode) {
                Some(self.journal.clone())
            } else {
                listing(&self.journal)
                    .into_iter()
                    .find(|(_, inode)| *inode == place.inode)
                    .map(|(path, _)| path)
            };
            if let Some(path) = path
                && let Ok(mut file) = open(&path)
                && file.metadata()?.ino() == place.inode
            {
                let head = head_of(&mut file)?;
                if place.head == 0 || head == place.head {
                    return Ok(Some((file, Place { head, ..place })));
                }
            }
            self.trouble = Some(
                "the journal was rotated past the records not yet sent (more records than [record] files x file_size_mib keep while the collector was away): those were not sent; the export goes on from the oldest file kept".into(),
            );
        }
        let Some((path, inode)) = listing(&self.journal).into_iter().next() else {
            self.place = None;
            return Ok(None);
        };
        let mut file = open(&path)?;
        let head = head_of(&mut file)?;
        let place = Place {
            inode,
            head,
            offset: 0,
        };
        self.commit(place);
        Ok(Some((file, place)))
    }

    /// The next lines past the place: at most `max_lines`, and `max_bytes` (but always one whole line);
    /// `None` when there are none yet. Moves on to the next file when the place's file is read to its
    /// end and rotated (no more is written to it).
    pub fn next(&mut self, max_lines: usize, max_bytes: usize) -> std::io::Result<Option<Batch>> {
        for _ in 0..=MAX_FILES {
            let Some((mut file, place)) = self.locate()? else {
                return Ok(None);
            };
            let sealed = inode_of(&self.journal) != Some(place.inode);
            file.seek(SeekFrom::Start(place.offset))?;
            let mut reader = BufReader::new(file);
            let mut lines = Vec::new();
            let mut taken = 0usize;
            loop {
                if lines.len() >= max_lines || (taken >= max_bytes && !lines.is_empty()) {
                    break;
                }
                match read_line(&mut reader, MAX_JOURNAL_LINE)? {
                    Line::Whole(mut line) => {
                        taken += line.len();
                        line.pop();
                        if !line.iter().all(u8::is_ascii_whitespace) {
                            lines.push(line);
                        }
                    }
                    Line::TooLong(length) => {
                        taken += length;
                        self.trouble = Some(format!(
                            "a journal line of more than {} MiB was not sent (no record of hookd's is that long: the journal was written by something else)",
                            MAX_JOURNAL_LINE >> 20
                        ));
                    }
                    Line::Unended => break, // the end, or a line still being written
                }
            }
            if taken > 0 {
                return Ok(Some(Batch {
                    lines,
                    end: Place {
                        offset: place.offset + taken as u64,
                        ..place
                    },
                }));
            }
            if !sealed {
                return Ok(None);
            }
            // Read to its end and rotated: the next file, newer than this one.
            let files = listing(&self.journal);
            let Some(at) = files.iter().position(|(_, inode)| *inode == place.inode) else {
                continue; // rotated away meanwhile: locate says so
            };
            let Some((path, inode)) = files.get(at + 1) else {
                return Ok(None); // the next file is not made yet
            };
            let mut next = open(path)?;
            let head = head_of(&mut next)?;
            self.commit(Place {
                inode: *inode,
                head,
                offset: 0,
            });
        }
        Ok(None)
    }

    /// Bytes of the journal past the place: what is left to send (before `kinds` and `decisions` leave
    /// some out).
    pub fn backlog(&self) -> u64 {
        let files = listing(&self.journal);
        let size = |path: &Path| std::fs::metadata(path).map_or(0, |m| m.len());
        let Some(place) = self.place else {
            return files.iter().map(|(path, _)| size(path)).sum();
        };
        match files.iter().position(|(_, inode)| *inode == place.inode) {
            Some(at) => {
                size(&files[at].0).saturating_sub(place.offset)
                    + files[at + 1..].iter().map(|(p, _)| size(p)).sum::<u64>()
            }
            None => files.iter().map(|(path, _)| size(path)).sum(),
        }
    }
}

/// The longest journal line read: hookd's records are cut far below it (but a full input, at most an
/// event's size). The journal is a file the user's programs can write, the agent among them: a longer
/// line is skipped unread, so that it cannot take the daemon's memory.
const MAX_JOURNAL_LINE: usize = crate::limits::MAX_LINE;

/// A line read from the journal.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// With its `\n`.
    Whole(Vec<u8>),
    /// Longer than the bound: skipped to its `\n`, this many bytes with it.
    TooLong(usize),
    /// No `\n` yet (the end of the file, or a line still being written): nothing is taken.
    Unended,
}

/// Reads a line of at most `bound` bytes; a longer one is read through without being kept.
fn read_line(reader: &mut impl BufRead, bound: usize) -> std::io::Result<Line> {
    use std::io::Read;
    let mut line = Vec::new();
    reader
        .by_ref()
        .take(bound as u64 + 1)
        .read_until(b'\n', &mut line)?;
    if line.last() == Some(&b'\n') {
        return Ok(Line::Whole(line));
    }
    if line.len() <= bound {
        return Ok(Line::Unended);
    }
    let mut length = line.len();
    drop(line);
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(Line::Unended);
        }
        match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => {
                reader.consume(at + 1);
                return Ok(Line::TooLong(length + at + 1));
            }
            None => {
                let n = buffer.len();
                length += n;
                reader.consume(n);
            }
        }
    }
}

/// The length of the file up to and with its last `\n`.
fn whole_length(file: &mut File, len: u64) -> std::io::Result<u64> {
    use std::io::Read;
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

/// Writes the cursor whole or not at all: a file beside it, then renamed over it.
fn write_cursor(path: &Path, place: &Place) -> std::io::Result<()> {
    use std::io::Write;
    let partial = path.with_extension("partial");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(&partial)?;
    file.write_all(&serde_json::to_vec(place).unwrap_or_default())?;
    file.sync_data()?;
    std::fs::rename(&partial, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_line_past_the_bound_is_skipped_unkept() {
        let text = format!("short\n{}\nnext\n{}", "x".repeat(100), "y".repeat(100));
        let mut reader = std::io::Cursor::new(text.into_bytes());
        assert_eq!(
            read_line(&mut reader, 10).unwrap(),
            Line::Whole(b"short\n".to_vec())
        );
        assert_eq!(read_line(&mut reader, 10).unwrap(), Line::TooLong(101));
        assert_eq!(
            read_line(&mut reader, 10).unwrap(),
            Line::Whole(b"next\n".to_vec())
        );
        assert_eq!(
            read_line(&mut reader, 10).unwrap(),
            Line::Unended,
            "a long line not ended yet is not taken"
        );
    }

    fn append(path: &Path, text: &str) {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .unwrap();
        file.write_all(text.as_bytes()).unwrap();
    }

    fn texts(batch: &Batch) -> Vec<String> {
        batch
            .lines
            .iter()
            .map(|l| String::from_utf8(l.clone()).unwrap())
            .collect()
    }

    #[test]
    fn a_journal_line_past_the_bound_is_not_sent() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("journal.jsonl");
        append(&journal, "old\n");
        let mut follower = Follower::start(journal.clone(), dir.path().join(CURSOR_FILE));
        assert!(follower.next(10, 1 << 20).unwrap().is_none());
        append(
            &journal,
            &format!("a\n{}\nb\n", "x".repeat(MAX_JOURNAL_LINE + 1)),
        );
        let batch = follower.next(10, 1 << 20).unwrap().unwrap();
        assert!(
            texts(&batch) == ["a"],
            "the long line skipped, not kept: {} lines",
            batch.lines.len()
        );
        assert!(follower.trouble.take().unwrap().contains("was not sent"));
        follower.commit(batch.end);
        assert_eq!(texts(&follower.next(10, 1 << 20).unwrap().unwrap()), ["b"]);
    }

    #[test]
    fn the_first_start_begins_at_the_end_and_a_partial_line_waits() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("journal.jsonl");
        append(&journal, "old\n");
        let mut follower = Follower::start(journal.clone(), dir.path().join(CURSOR_FILE));
        assert!(follower.next(10, 1 << 20).unwrap().is_none());
        append(&journal, "a\nb");
        let batch = follower.next(10, 1 << 20).unwrap().unwrap();
        assert_eq!(texts(&batch), ["a"]);
        assert!(
            follower.next(10, 1 << 20).unwrap().is_some(),
            "uncommitted: read again"
        );
        follower.commit(batch.end);
        assert!(follower.next(10, 1 << 20).unwrap().is_none());
        append(&journal, "\n");
        assert_eq!(texts(&follower.next(10, 1 << 20).unwrap().unwrap()), ["b"]);
    }

    #[test]
    fn the_place_survives_a_restart_and_rotations() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("journal.jsonl");
        let cursor = dir.path().join(CURSOR_FILE);
        let mut follower = Follower::start(journal.clone(), cursor.clone());
        append(&journal, "1\n2\n");
        let batch = follower.next(1, 1 << 20).unwrap().unwrap();
        assert_eq!(texts(&batch), ["1"]);
        follower.commit(batch.end);
        // Two rotations while the exporter is stopped.
        std::fs::rename(&journal, rotated(&journal, 1)).unwrap();
        append(&journal, "3\n");
        std::fs::rename(rotated(&journal, 1), rotated(&journal, 2)).unwrap();
        std::fs::rename(&journal, rotated(&journal, 1)).unwrap();
        append(&journal, "4\n");
        let mut follower = Follower::start(journal.clone(), cursor);
        let mut seen = Vec::new();
        while let Some(batch) = follower.next(10, 1 << 20).unwrap() {
            seen.extend(texts(&batch));
            follower.commit(batch.end);
        }
        assert_eq!(seen, ["2", "3", "4"]);
        assert_eq!(follower.backlog(), 0);
        assert!(follower.trouble.is_none());
    }

    #[test]
    fn a_place_rotated_away_goes_on_from_the_oldest_file_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("journal.jsonl");
        let cursor = dir.path().join(CURSOR_FILE);
        append(&journal, "gone\n");
        let follower = Follower::start(journal.clone(), cursor.clone());
        drop(follower);
        std::fs::remove_file(&journal).unwrap();
        append(&rotated(&journal, 1), "kept\n");
        append(&journal, "new\n");
        let mut follower = Follower::start(journal, cursor);
        let batch = follower.next(10, 1 << 20).unwrap().unwrap();
        assert_eq!(texts(&batch), ["kept"]);
        assert!(follower.trouble.take().unwrap().contains("rotated past"));
    }
}
