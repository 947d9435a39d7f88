//! Reading the journal back, for `hookd log` and `hookd why`: every file the rotation kept, oldest first,
//! line by line. The daemon writes it ([`crate::daemon::journal`]); how the files are named is said here
//! once, for the writer and the readers.

use std::io::{BufRead, BufReader};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use super::line::Record;

/// The journal's file name in the state folder; rotated files are `journal.1.jsonl`, `journal.2.jsonl`...
pub const FILE: &str = "journal.jsonl";

/// The most files the rotation keeps (`[record] files` allows up to 100), so the most a reader looks for.
pub const MAX_FILES: u32 = 100;

/// Where the journal is: `journal.jsonl` in [`crate::paths::state_dir`].
pub fn default_path() -> PathBuf {
    crate::paths::state_dir().join(FILE)
}

/// The journal's `n`th rotated file beside `path` (`journal.1.jsonl`, the newest rotated); `n = 0` is
/// `path` itself. A journal by another name (`x.jsonl`) has `x.1.jsonl`, so that a copy of one read with
/// `--journal` keeps its rotation.
pub fn rotated(path: &Path, n: u32) -> PathBuf {
    if n == 0 {
        return path.to_path_buf();
    }
    let stem = path
        .file_name()
        .and_then(|name| name.to_str())
        .and_then(|name| name.strip_suffix(".jsonl"))
        .unwrap_or("journal");
    path.with_file_name(format!("{stem}.{n}.jsonl"))
}

/// The journal's files that exist, oldest first: the rotated ones from the highest number down, then
/// `path`. A gap in the numbers (fewer `files` after a reload) is skipped, not taken as the end.
pub fn files(path: &Path) -> Vec<PathBuf> {
    (0..MAX_FILES)
        .rev()
        .map(|n| rotated(path, n))
        .filter(|file| file.is_file())
        .collect()
}

/// What reading the journal found besides its records.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Read {
    /// Whether any of its files exists.
    pub found: bool,
    /// Lines that are not records (torn by a crash, written by hand): skipped.
    pub unreadable: usize,
}

/// Calls `each` with every record of the journal at `path` and its line as stored (without the `\n`),
/// oldest first, until it breaks. Reads a line at a time: the journal may hold up to 100 files of 1 GiB.
pub fn each(
    path: &Path,
    mut each: impl FnMut(&str, Record) -> ControlFlow<()>,
) -> Result<Read, String> {
    let mut read = Read::default();
    for file in files(path) {
        let opened = match std::fs::File::open(&file) {
            Ok(opened) => opened,
            // Rotated away between the listing and the open: its lines are in the next file's name now,
            // read in its turn or gone with the oldest.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
        };
        read.found = true;
        let mut reader = BufReader::new(opened);
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
            }
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\n', '\r']);
            if text.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Record>(text) {
                Ok(record) => {
                    if each(text, record).is_break() {
                        return Ok(read);
                    }
                }
                Err(_) => read.unreadable += 1,
            }
        }
    }
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotated_files_are_named_after_the_journal() {
        let path = Path::new("/s/hookd/journal.jsonl");
        assert_eq!(rotated(path, 0), path);
        assert_eq!(rotated(path, 3), Path::new("/s/hookd/journal.3.jsonl"));
        assert_eq!(
            rotated(Path::new("/tmp/copy.jsonl"), 1),
            Path::new("/tmp/copy.1.jsonl")
        );
    }

    #[test]
    fn the_files_are_read_oldest_first_and_unreadable_lines_counted() {
        let dir = std::env::temp_dir().join(format!("hookd-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(FILE);
        let line = |t: &str| format!("{{\"v\":1,\"time\":\"{t}\",\"kind\":\"reload\"}}\n");
        std::fs::write(rotated(&path, 3), line("a")).unwrap();
        std::fs::write(rotated(&path, 1), line("b") + "not json\n").unwrap();
        std::fs::write(&path, line("c") + "\n{\"torn\n").unwrap();
        let mut seen = Vec::new();
        let read = each(&path, |text, record| {
            assert!(text.starts_with('{') && !text.ends_with('\n'));
            seen.push(record.time);
            ControlFlow::Continue(())
        })
        .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(seen, ["a", "b", "c"]);
        assert_eq!(
            read,
            Read {
                found: true,
                unreadable: 2
            }
        );
    }

    #[test]
    fn a_missing_journal_is_found_empty() {
        let read = each(Path::new("/nonexistent/hookd/journal.jsonl"), |_, _| {
            panic!("no records")
        })
        .unwrap();
        assert!(!read.found);
    }
}
