//! The daemon's open-file budget. Connections (the socket's and the http listener's) get what the
//! open-file limit leaves after a reserve for running hooks and workers: idle clients, however many, can
//! never take the descriptors a hook needs to start. Past the budget, clients wait in the listen backlog;
//! hooks run.

use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::limits::{MAX_CONNECTIONS, MAX_HTTP_CONNECTIONS};
use crate::settings::{Program, Settings};

/// The daemon's own descriptors, whatever the settings: the listeners, the runtime's epoll and wake-up,
/// inotify, the signal pipe, the log, the lock, a settings file being read, the http token.
const BASE_RESERVE: usize = 64;

/// Per hook process allowed at once (`max_processes`): its stdin, stdout and stderr, and one more for the
/// moment of its spawn.
const PER_HOOK: usize = 4;

/// Per worker process, kept for its life: stdin, stdout, stderr.
const PER_WORKER: usize = 3;

/// Per connection: its socket, and a second handle on it that watches for the client hanging up while
/// its fires are pending.
const PER_CONNECTION: usize = 2;

/// Connections allowed whatever the limit: a daemon nobody can reach guards nothing.
const MIN_CONNECTIONS: usize = 4;

/// Connection slots daemon by the socket and the http listener, sized from the open-file limit.
#[derive(Debug)]
pub struct Descriptors {
    slots: Arc<Semaphore>,
    /// The number of slots the semaphore was given (in use or not).
    size: Mutex<usize>,
}

impl Descriptors {
    /// Slots for the soft open-file limit in force now and these settings.
    pub fn new(settings: &Settings) -> Descriptors {
        let size = budget(open_file_limit(), settings);
        tracing::info!(
            limit = open_file_limit(),
            connections = size,
            "connections at once, the rest of the open-file limit kept for hooks"
        );
        Descriptors {
            slots: Arc::new(Semaphore::new(size)),
            size: Mutex::new(size),
        }
    }

    /// Waits for a connection slot; dropping the permit frees it.
    pub async fn connection(&self) -> OwnedSemaphorePermit {
        self.slots
            .clone()
            .acquire_owned()
            .await
            .expect("the connection slots are never closed")
    }

    /// How many connections are open, and how many may be at once now.
    pub fn connections(&self) -> (usize, usize) {
        let size = *crate::sync::lock(&self.size);
        (size.saturating_sub(self.slots.available_permits()), size)
    }

    /// Follows new settings (a reload may change `max_processes` or the workers): slots are added, or
    /// taken back as they come free.
    pub fn resize(&self, settings: &Settings) {
        let wanted = budget(open_file_limit(), settings);
        let mut size = crate::sync::lock(&self.size);
        if wanted > *size {
            self.slots.add_permits(wanted - *size);
            *size = wanted;
        } else if wanted < *size {
            // Only free slots can be taken back; connections open now keep theirs until they close.
            let taken = self.slots.forget_permits(*size - wanted);
            *size -= taken;
        }
    }
}

/// Connections allowed under `limit` open files with these settings.
pub fn budget(limit: u64, settings: &Settings) -> usize {
    let workers: usize = settings
        .hooks
        .iter()
        .flat_map(|(_, hooks)| hooks.iter())
        .filter(|hook| hook.enabled)
        .map(|hook| match hook.program {
            Program::Worker { count, .. } => count,
            _ => 0,
        })
        .sum();
    let reserve = BASE_RESERVE + PER_HOOK * settings.defaults.max_processes + PER_WORKER * workers;
    let most = MAX_CONNECTIONS + MAX_HTTP_CONNECTIONS;
    (usize::try_from(limit)
        .unwrap_or(usize::MAX)
        .saturating_sub(reserve)
        / PER_CONNECTION)
        .clamp(MIN_CONNECTIONS, most)
}

/// The soft open-file limit (`ulimit -n`), which the daemon raised at start as far as it could.
fn open_file_limit() -> u64 {
    nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map_or(1024, |(soft, _)| soft)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn settings(text: &str) -> Settings {
        Settings::parse(Path::new("/h.toml"), "h.toml", text).unwrap()
    }

    #[test]
    fn connections_get_what_the_hooks_leave() {
        let defaults = settings("");
        // 64 processes by default: 64 + 4 * 64 kept back, two descriptors a connection.
        assert_eq!(budget(1024, &defaults), (1024 - 64 - 256) / 2);
        assert_eq!(budget(8192, &defaults), 1024 + 256);
        assert_eq!(budget(100, &defaults), MIN_CONNECTIONS);
        let workers = settings(
            "[defaults]\nmax_processes = 8\n[[hooks.PreToolUse]]\nworker = [\"w\"]\nworkers = 4\n",
        );
        assert_eq!(budget(256, &workers), (256 - 64 - 32 - 12) / 2);
    }
}
