//! Processes seen through /proc: their state, their descriptors, every pid; and running as another user.

use std::collections::BTreeMap;
use std::fs;
use std::process::Command;
use std::time::Duration;

use super::wait_until;

/// `/proc/PID/stat` fields after the command name: state, ppid, pgrp, ... (the command name may hold
/// spaces and parentheses, so the fields start after the last ')').
pub fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// A process's state letter and parent pid from /proc/PID/stat, or None when it does not exist.
pub fn proc_stat(pid: i32) -> Option<(char, i32)> {
    let fields = stat_fields(pid)?;
    let state = fields.first()?.chars().next()?;
    let ppid = fields.get(1)?.parse().ok()?;
    Some((state, ppid))
}

/// True when `pid` no longer runs. A zombie counts as gone only when its parent is not the daemon: an
/// orphaned hook process is re-parented to PID 1, and PID 1 in this test machine does not reap orphans
/// (checked: an orphaned `sleep` stays `Z` under PID 1 for good), so such a zombie is dead and nothing the
/// daemon could reap. A zombie whose parent is the daemon is the daemon's to reap, so it is not gone.
pub fn process_gone(pid: i32, daemon_pid: u32) -> bool {
    match proc_stat(pid) {
        None => true,
        Some(('Z', ppid)) | Some(('X', ppid)) => ppid != daemon_pid as i32,
        Some(_) => false,
    }
}

/// The uid of `nobody`: another user, for the tests of what other users cannot do.
pub const NOBODY: u32 = 65534;

/// `program` run as `nobody` (uid and gid, no supplementary groups), arguments still to be added.
pub fn as_nobody(program: &str) -> Command {
    let mut cmd = Command::new("setpriv");
    cmd.args([
        &format!("--reuid={NOBODY}"),
        &format!("--regid={NOBODY}"),
        "--clear-groups",
        program,
    ]);
    cmd
}

/// Every process's pid.
pub fn all_pids() -> Vec<i32> {
    fs::read_dir("/proc")
        .expect("listing /proc")
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// A process's open descriptors: number -> what it points at (empty once it is gone).
pub fn fds(pid: u32) -> BTreeMap<u32, String> {
    let Ok(entries) = fs::read_dir(format!("/proc/{pid}/fd")) else {
        return BTreeMap::new();
    };
    entries
        .filter_map(|e| {
            let e = e.ok()?;
            let fd = e.file_name().to_str()?.parse().ok()?;
            let target = fs::read_link(e.path())
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "?".into());
            Some((fd, target))
        })
        .collect()
}

/// A daemon's descriptors once it is idle: the same listing seen 10 polls in a row (connections just
/// closed are gone by then); panics if it does not settle within `timeout`.
pub fn idle_fds(pid: u32, timeout: Duration) -> BTreeMap<u32, String> {
    let mut last = BTreeMap::new();
    let mut same = 0;
    wait_until(timeout, "the idle daemon's descriptors to settle", || {
        let now = fds(pid);
        if now == last {
            same += 1;
        } else {
            same = 0;
            last = now;
        }
        same >= 10
    });
    last
}

/// Raises this process's soft limit on open files to at least `want` (within the hard limit; never
/// lowers it: the tests of this binary share the process) and returns it. Children started afterwards,
/// daemons among them, inherit it.
pub fn raise_open_files(want: u64) -> u64 {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("getrlimit");
    if soft >= want {
        return soft;
    }
    let raised = want.min(hard);
    setrlimit(Resource::RLIMIT_NOFILE, raised, hard).expect("setrlimit");
    raised
}
