//! The record: one JSON line for every decision hookd makes, and for what happens to the daemon around
//! them (reloads, worker restarts, the Stop cap, the relay's own answers when the daemon was down).
//! docs/record.md is the reference for the format, which is stable: every line carries [`VERSION`], and
//! a field once written keeps its name and meaning.
//!
//! Hooks decide; the record only observes. A record is made on the fire's path as a plain value and
//! handed to the [`Recorder`] without waiting; the journal's writer (in the daemon) serializes it, writes
//! it and streams it to watchers on a thread of its own, so that a fire never waits for the disk. While
//! nobody watches, a fire that ran no hook (and keeps no whole input) has its line serialized on its own
//! thread, after its answer, and only the bytes handed over (recorder.rs says why).

mod json;
mod line;
pub mod read;
mod recorder;
pub mod spool;

pub use line::{
    ERROR_CHARS, Hook, Kind, MAX_WEAKENINGS, Record, STDERR_CHARS, SUMMARY_CHARS, Source, VERSION,
    Verdict, Weakening, cut, summary, weakened_words,
};
pub use recorder::{FireCounts, LINES_IDLE, Message, Queue, Recorder, Taken, get, install, note};
