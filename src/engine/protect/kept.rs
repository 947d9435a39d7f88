//! What the guard of itself keeps, and what it reads a call with: the guarded paths, the daemon's
//! process, and the home and variables a shell command is read in. Made once per generation of the
//! settings (by the [`Shield`](super::Shield)); every call is judged against it (`judge.rs`).

use std::path::PathBuf;

use crate::engine::protect::paths::{Folders, Guarded};

/// The guard's world, as a call is judged in it.
#[derive(Debug, Default)]
pub(super) struct Kept {
    pub guarded: Vec<Guarded>,
    pub daemon_pid: Option<i32>,
    pub daemon_command_line: String,
    pub env: crate::shell::Env,
    pub home: PathBuf,
    /// The agents' working folders, resolved a moment ago.
    pub folders: Folders,
}
