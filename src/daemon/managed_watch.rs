//! The managed layer watched: its folder polled (an admin's change is rare, and a poll misses no way
//! of saving a file: a package's rename, Ansible's copy, an editor's write), and any change reloaded as
//! the user's file is, each layer keeping its last good settings on an error.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::daemon::file_changes::POLL_EVERY;
use crate::daemon::reload::{Trigger, reload};
use crate::daemon::state::Daemon;

/// What the managed folder looked like when it was read.
pub type Seen = Vec<(std::path::PathBuf, u64, u64, i64, i64)>;

/// Polls until `stop` is cancelled, from what the folder looked like before it was read at start-up
/// (a change in between is taken at the first poll).
pub fn spawn(
    daemon: Arc<Daemon>,
    stop: CancellationToken,
    mut seen: Seen,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(POLL_EVERY) => {}
            }
            let dir = daemon.managed_dir.clone();
            let Ok(now) =
                tokio::task::spawn_blocking(move || crate::layers::managed::fingerprint(&dir))
                    .await
            else {
                continue;
            };
            if now != seen {
                seen = now;
                let _ = reload(&daemon, Trigger::Watch).await;
            }
        }
    })
}
