//! Processes that escape a hook's process group.
//!
//! A hook's group is stopped as a whole, but a process can leave the group (`setsid`, a double fork that
//! daemonizes). Such a process would outlive its hook, and once it exits, stay a zombie under whatever
//! adopts it. So the daemon makes itself the child subreaper of everything it starts: an orphaned
//! descendant is re-parented to the daemon, not to init. While hooks run, and for a moment after the
//! last one ends, the daemon looks at its children every few milliseconds; soon after it killed what a
//! hook or an escapee left once their grace period was over; otherwise every few seconds. The children
//! it started and still tracks (hooks, workers) are left to their runs; any other child is an escapee.
//! A living escapee is stopped (SIGTERM to it and its group, SIGKILL a second later); a dead one is
//! reaped.
//!
//! The daemon does not listen for SIGCHLD: each hook's exit is seen through its pidfd, and a handler run
//! at every exit cost every hook a signal's delivery, often to a thread asleep in the blocking pool, and
//! the runtime a wake-up to read it (about 20 us of the daemon's CPU per hook with 32 clients). Sweeping
//! on a clock while hooks run finds what they leave behind as soon, a sweep per
//! `SWEEP_WHILE_RUNNING` however many hooks end in it.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;
use tokio::sync::Notify;
use tokio_util::task::TaskTracker;

use crate::limits::KILL_GRACE;
use crate::sync::lock;

/// How often children are looked at while no hook runs: what a worker leaves behind, and an escapee
/// that exits on its own, are found by this.
const SWEEP_EVERY: Duration = Duration::from_secs(2);

/// How often children are looked at while hooks run, and how long after the last one ends: a sweep reads
/// /proc (a dozen system calls), and waiting this long gathers the processes of a burst of hooks into one.
const SWEEP_WHILE_RUNNING: Duration = Duration::from_millis(20);

/// The children the daemon started itself, whose exit their runs collect.
#[derive(Debug, Default)]
pub struct Reaper {
    tracked: Mutex<HashSet<u32>>,
    /// Escapees sent SIGTERM and not yet reaped: a sweep while one takes its time to die (it may ignore
    /// SIGTERM and wait for the SIGKILL) neither signals nor reports it again.
    stopping: Arc<Mutex<HashSet<u32>>>,
    /// Spawns in progress on other threads: their children exist before they are tracked, so no sweep
    /// happens meanwhile (it would take them for escapees).
    spawning: Arc<AtomicUsize>,
    /// Hook runs in progress: while there are any, the sweep runs every [`SWEEP_WHILE_RUNNING`].
    runs: AtomicUsize,
    /// Asks for a sweep soon: a first run started, or processes were killed after their run.
    soon: Arc<Notify>,
}

/// A spawn in progress off the runtime's thread; dropping it ends it.
pub struct Spawning(Arc<AtomicUsize>);

impl Drop for Spawning {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Reaper {
    /// A hook or worker process just started: its exit belongs to its run, not to the sweep.
    pub fn track(&self, pid: u32) {
        lock(&self.tracked).insert(pid);
    }

    /// A spawn is starting off the runtime's thread: no sweep until the returned guard is dropped.
    pub fn spawning(&self) -> Spawning {
        self.spawning.fetch_add(1, Ordering::SeqCst);
        Spawning(self.spawning.clone())
    }

    /// Its run has reaped it, or left it to the sweep (or, a worker, to tokio's orphan queue).
    pub fn untrack(&self, pid: u32) {
        lock(&self.tracked).remove(&pid);
    }

    /// A hook run starts: whether no other was in progress.
    pub fn run_started(&self) -> bool {
        let alone = self.runs.fetch_add(1, Ordering::SeqCst) == 0;
        if alone {
            self.soon.notify_one();
        }
        alone
    }

    /// A hook run has ended (its process reaped, or killed and left to the sweep).
    pub fn run_ended(&self) {
        self.runs.fetch_sub(1, Ordering::SeqCst);
    }

    /// Processes were just killed after their run ended (a group's SIGKILL after its grace): a sweep in
    /// a moment reaps what they leave.
    pub fn look_soon(&self) {
        self.soon.notify_one();
    }

    /// Becomes the subreaper of every descendant, and sweeps for as long as the daemon runs. The
    /// SIGKILLs that follow SIGTERMs are tracked in `tasks`, so shutdown waits for them.
    pub fn start(self: &Arc<Self>, tasks: &TaskTracker) {
        if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
            // The sweep still runs: the daemon's own children (a hook whose fire was abandoned) are
            // reaped by it, subreaper or not.
            tracing::warn!(
                "cannot become the subreaper of hooks' processes ({e}): a process that leaves its hook's group may outlive it"
            );
        }
        let reaper = self.clone();
        let tasks = tasks.clone();
        tokio::spawn(async move {
            loop {
                if reaper.runs.load(Ordering::SeqCst) > 0 {
                    tokio::time::sleep(SWEEP_WHILE_RUNNING).await;
                } else {
                    tokio::select! {
                        // Not at once: the run that asked is starting its hook, and its fire is to
                        // answer first; the sweep after that finds what it left behind.
                        _ = reaper.soon.notified() => tokio::time::sleep(SWEEP_WHILE_RUNNING).await,
                        _ = tokio::time::sleep(SWEEP_EVERY) => {}
                    }
                }
                reaper.sweep(&tasks);
            }
        });
    }

    /// Reaps dead escapees and stops living ones.
    pub fn sweep(&self, tasks: &TaskTracker) {
        if self.spawning.load(Ordering::SeqCst) > 0 {
            return; // the next sweep looks
        }
        for pid in children() {
            if lock(&self.tracked).contains(&pid) {
                continue;
            }
            let target = Pid::from_raw(pid as i32);
            match state_of(pid) {
                Some('Z') => {
                    let _ = waitpid(target, Some(WaitPidFlag::WNOHANG));
                    lock(&self.stopping).remove(&pid);
                }
                Some(_) if !lock(&self.stopping).insert(pid) => {} // already being stopped
                Some(_) => {
                    tracing::info!(
                        pid,
                        "stopping a process a hook left behind outside its group"
                    );
                    let _ = killpg(target, Signal::SIGTERM);
                    let _ = kill(target, Signal::SIGTERM);
                    let soon = self.soon.clone();
                    tasks.spawn(async move {
                        tokio::time::sleep(KILL_GRACE).await;
                        // Still ours (a child of this daemon, not reaped, so not a reused pid)?
                        if parent_of(pid) == Some(std::process::id()) {
                            let _ = killpg(target, Signal::SIGKILL);
                            let _ = kill(target, Signal::SIGKILL);
                        }
                        // Dead of the SIGTERM or of the SIGKILL: reaped by the sweep this asks for.
                        soon.notify_one();
                    });
                }
                None => {
                    lock(&self.stopping).remove(&pid);
                }
            }
        }
    }
}

/// The daemon's children, from every thread's `children` file in /proc.
fn children() -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let mut pids = Vec::new();
    for task in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
            pids.extend(
                text.split_whitespace()
                    .filter_map(|pid| pid.parse::<u32>().ok()),
            );
        }
    }
    pids
}

/// The state letter of a process (`R`, `S`, `Z`...), from /proc/PID/stat.
fn state_of(pid: u32) -> Option<char> {
    stat_fields(pid).and_then(|fields| fields.first().and_then(|state| state.chars().next()))
}

fn parent_of(pid: u32) -> Option<u32> {
    stat_fields(pid).and_then(|fields| fields.get(1).and_then(|ppid| ppid.parse().ok()))
}

/// The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses).
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    Some(after_name.split_whitespace().map(str::to_string).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process_state_and_parent() {
        let me = std::process::id();
        assert!(matches!(state_of(me), Some('R' | 'S')));
        assert_eq!(parent_of(me), Some(nix::unistd::getppid().as_raw() as u32));
        assert_eq!(state_of(u32::MAX), None);
    }
}
