//! The relay's spool: what `hookd relay` answered on its own because the daemon could not (down, or
//! silent past the relay's timeout), kept in a small file until the daemon next runs and takes it into
//! the journal. Without it, a fail-open leaves one line on an agent's stderr that nobody reads.
//!
//! One record per line, appended with one `write` on a file opened `O_APPEND`, so relays writing at
//! once never interleave their lines. Bounded: past [`MAX_SPOOL`] bytes nothing more is appended (the
//! daemon has been down a long time; the first calls are the ones that say when it went).

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::line::Record;

/// The most bytes the spool holds: about a thousand calls.
pub const MAX_SPOOL: u64 = 1 << 20;

/// The spool in `state_dir`.
pub fn path_in(state_dir: &Path) -> PathBuf {
    state_dir.join("relay-spool.jsonl")
}

/// Appends `record` to the spool in `state_dir`, making the folder (0700) and the file (0600) if need
/// be. Errors are the caller's to ignore: the relay's answer to its agent never waits on this.
pub fn append(state_dir: &Path, record: &Record) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(state_dir)?;
    // O_NONBLOCK: a FIFO planted as the spool would block this open until someone read it, and the relay
    // (its agent waiting for the answer) with it; a FIFO with no reader fails at once instead, one with a
    // reader is refused below. Not following a link: the spool is never written elsewhere.
    let mut file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path_in(state_dir))?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(std::io::Error::other("the spool is not a regular file"));
    }
    if metadata.len() >= MAX_SPOOL {
        return Ok(());
    }
    file.write_all(&record.clone().to_line())
}

/// Takes every record out of the spool in `state_dir`: the file is renamed aside first (a relay writing
/// meanwhile starts a new one), read, and removed. Lines that are not records are skipped.
pub fn take(state_dir: &Path) -> Vec<Record> {
    let spool = path_in(state_dir);
    let taking = state_dir.join("relay-spool.taking");
    // A spool left from a take cut short (the daemon killed) is read first.
    let mut text = String::new();
    for path in [&taking, &spool] {
        if path == &spool && std::fs::rename(&spool, &taking).is_err() {
            continue;
        }
        let opened = OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
            .open(&taking);
        if let Ok(file) = opened {
            let is_file = file.metadata().is_ok_and(|m| m.is_file());
            if is_file {
                let _ = file.take(MAX_SPOOL * 2).read_to_string(&mut text);
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
            }
        }
        let _ = std::fs::remove_file(&taking);
    }
    // Only `relay` records: the spool is a file any process of the user's can write, and what it holds
    // must not pass for the daemon's own fires or reloads (in the journal and in `status`'s counts).
    text.lines()
        .filter_map(|line| serde_json::from_str::<Record>(line).ok())
        .filter(|record| record.kind == super::line::Kind::Relay)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Kind;

    #[test]
    fn what_is_appended_is_taken_once() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state/hookd");
        let mut record = Record::new(Kind::Relay);
        record.relay = Some("fail_open".into());
        record.stamp();
        append(&state, &record).unwrap();
        append(&state, &record).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path_in(&state))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let taken = take(&state);
        assert_eq!(taken, vec![record.clone(), record]);
        assert!(take(&state).is_empty(), "taken once");
    }

    #[test]
    fn a_fifo_as_the_spool_is_neither_waited_on_nor_read() {
        let dir = tempfile::tempdir().unwrap();
        nix::unistd::mkfifo(&path_in(dir.path()), nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(append(dir.path(), &Record::new(Kind::Relay)).is_err());
        assert!(take(dir.path()).is_empty());
    }

    #[test]
    fn only_relay_records_are_taken() {
        let dir = tempfile::tempdir().unwrap();
        let mut fire = Record::new(Kind::Fire);
        let mut relay = Record::new(Kind::Relay);
        let mut text = fire.to_line();
        text.extend(relay.to_line());
        text.extend(b"garbage\n");
        std::fs::write(path_in(dir.path()), text).unwrap();
        assert_eq!(take(dir.path()), vec![relay]);
    }

    #[test]
    fn a_full_spool_takes_no_more() {
        let dir = tempfile::tempdir().unwrap();
        let record = Record::new(Kind::Relay);
        std::fs::create_dir_all(dir.path()).unwrap();
        std::fs::write(path_in(dir.path()), vec![b'\n'; MAX_SPOOL as usize]).unwrap();
        append(dir.path(), &record).unwrap();
        let len = std::fs::metadata(path_in(dir.path())).unwrap().len();
        assert_eq!(len, MAX_SPOOL);
    }
}
