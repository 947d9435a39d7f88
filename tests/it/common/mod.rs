//! Shared helpers for the integration tests, each once: a sandbox (a fresh temp dir holding the settings
//! file, the hook scripts and the socket), a guard that runs the real `hookd serve` and kills it on drop, a
//! line client for the socket protocol, processes seen through /proc, programs run with a deadline,
//! agents' events, prerequisites (a test that cannot run says so), polling helpers (tests never sleep
//! to wait for something), and the places every program they start is kept to (`places`: never the
//! user's own daemon, settings or journal). Everything is re-exported here: a test module says `use crate::common::*;`.
//!
//! `benches/fire.rs` includes this module too, to start and stop its daemons as the tests do, and uses
//! only part of it, hence the `dead_code` allowance there (not here: every helper has a test using it).

mod calls;
mod client;
mod daemon;
mod events;
mod lite;
mod places;
mod procs;
mod pty;
mod require;
mod run;
mod sandbox;

pub use calls::*;
pub use client::*;
pub use daemon::*;
pub use events::*;
pub use lite::*;
pub use places::*;
pub use procs::*;
pub use pty::*;
pub use require::*;
pub use run::*;
pub use sandbox::*;

use std::time::{Duration, Instant};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_hookd");

/// The relay as a program of its own, built beside [`BIN`]: what `--print-settings` and `setup` write.
pub const RELAY_BIN: &str = env!("CARGO_BIN_EXE_hookd-relay");

/// How long the daemon may take to accept its first connection: a deadline, not a wait. Generous, since a
/// debug build compiling its settings' regular expressions (`\w{100}` four times) on a loaded two-core
/// machine was seen to need more than 10 s.
pub const READY: Duration = Duration::from_secs(30);

/// How long a response may take before a read gives up (a safety net against a hung test, not a speed
/// assertion: every test that needs a response waits on this deadline).
pub const RESPONSE: Duration = Duration::from_secs(30);

/// Polls `cond` every 10 ms until it holds; panics with `what` at the deadline.
pub fn wait_until(timeout: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return;
        }
        if Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
