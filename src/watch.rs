//! Watches the settings file and reloads it when it changes (contract 10).
//!
//! The folder is watched, not the file: editors and git replace a file by renaming another over it or by
//! unlinking and creating it, and a watch on the file itself would be lost with the old inode. A symlinked
//! settings file is followed: every folder along the chain of links is watched too, so both `ln -sfn` to a
//! new target and edits of the target are seen. The notify callback never blocks: it `try_send`s into a
//! channel of one, and this task batches a burst of events into one reload (a trailing window, capped so
//! a change takes effect within 200 ms). Without inotify (the per-user watch limit spent), or while the
//! folder does not exist, the file's metadata is polled instead.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::event::{AccessKind, AccessMode, EventKind};
use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::reload::{Trigger, reload};
use crate::state::Shared;

/// A burst of events ends when none has come for this long.
const QUIET: Duration = Duration::from_millis(30);

/// A burst that never goes quiet is still reloaded this long after its first event.
const MAX_DELAY: Duration = Duration::from_millis(150);

/// How often the file is looked at when it cannot be watched.
pub const POLL_EVERY: Duration = Duration::from_millis(500);

/// Links followed from the settings path before giving up (a loop of links).
const MAX_LINKS: usize = 16;

/// Watches until `stop` is cancelled. `HOOKD_WATCH=poll` forces polling (for tests, and for filesystems
/// where inotify sees nothing, such as some network mounts).
pub fn spawn(shared: Arc<Shared>, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
    let force_poll = std::env::var("HOOKD_WATCH").is_ok_and(|v| v == "poll");
    tokio::spawn(async move {
        tokio::select! {
            _ = stop.cancelled() => {}
            _ = watch(shared, force_poll) => {}
        }
    })
}

async fn watch(shared: Arc<Shared>, force_poll: bool) {
    let mut seen = Fingerprint::of(&Chain::resolve(&shared.config_path));
    loop {
        let chain = Chain::resolve(&shared.config_path);
        let armed = if force_poll {
            Err(Unwatchable::Forced)
        } else {
            arm(&chain)
        };
        // Whatever changed while nothing watched (between two arms) is taken now.
        seen = reload_if_changed(&shared, &chain, seen);
        match armed {
            Ok((watcher, mut events)) => {
                let ids = chain.folder_ids();
                while events.recv().await.is_some() {
                    settle(&mut events).await;
                    let _ = reload(&shared, Trigger::Watch);
                    seen = Fingerprint::of(&chain);
                    if Chain::resolve(&shared.config_path) != chain
                        || !chain.folders_exist()
                        || chain.folder_ids() != ids
                    {
                        // A link now points elsewhere, or a watched folder went or was replaced (inotify
                        // watches the folder it was given, not its path): watch anew.
                        break;
                    }
                }
                drop(watcher);
            }
            Err(Unwatchable::FolderMissing) => {
                tracing::info!(config = %shared.config_path.display(), "the settings file's folder does not exist yet: looking for it every {POLL_EVERY:?}");
                while !Chain::resolve(&shared.config_path).folders_exist() {
                    tokio::time::sleep(POLL_EVERY).await;
                }
            }
            Err(why @ (Unwatchable::NoInotify(_) | Unwatchable::Forced)) => {
                // Said once: polling, once begun, goes on for the daemon's life.
                tracing::warn!(
                    "cannot watch the settings file ({why}): polling it every {POLL_EVERY:?} instead"
                );
                loop {
                    tokio::time::sleep(POLL_EVERY).await;
                    let now = Chain::resolve(&shared.config_path);
                    seen = reload_if_changed(&shared, &now, seen);
                }
            }
        }
    }
}

/// Reloads when the file's fingerprint moved since `seen`; returns the fingerprint now.
fn reload_if_changed(shared: &Arc<Shared>, chain: &Chain, seen: Fingerprint) -> Fingerprint {
    let now = Fingerprint::of(chain);
    if now != seen {
        let _ = reload(shared, Trigger::Watch);
    }
    now
}

/// Waits for a burst of events to end: [`QUIET`] without one, or [`MAX_DELAY`] in all.
async fn settle(events: &mut mpsc::Receiver<()>) {
    let cap = tokio::time::sleep(MAX_DELAY);
    tokio::pin!(cap);
    loop {
        tokio::select! {
            _ = &mut cap => return,
            next = tokio::time::timeout(QUIET, events.recv()) => match next {
                Ok(Some(())) => continue,
                Ok(None) | Err(_) => return,
            },
        }
    }
}

#[derive(Debug)]
enum Unwatchable {
    Forced,
    FolderMissing,
    NoInotify(notify::Error),
}

impl std::fmt::Display for Unwatchable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unwatchable::Forced => write!(f, "HOOKD_WATCH=poll"),
            Unwatchable::FolderMissing => write!(f, "its folder does not exist"),
            Unwatchable::NoInotify(e) => write!(f, "{e}"),
        }
    }
}

/// Starts watching every folder of the chain; events about the chain's paths arrive on the receiver.
fn arm(chain: &Chain) -> Result<(notify::RecommendedWatcher, mpsc::Receiver<()>), Unwatchable> {
    if !chain.folders_exist() {
        return Err(Unwatchable::FolderMissing);
    }
    let (sender, receiver) = mpsc::channel(1);
    let interesting = chain.clone();
    let mut watcher =
        notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
            Ok(event)
                if is_change(&event.kind)
                    && event.paths.iter().any(|p| interesting.concerns(p)) =>
            {
                // Full means a signal is already pending: this event is in the same batch.
                let _ = sender.try_send(());
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!("watching the settings file: {e}");
                let _ = sender.try_send(());
            }
        })
        .map_err(Unwatchable::NoInotify)?;
    for folder in &chain.folders {
        watcher
            .watch(folder, RecursiveMode::NonRecursive)
            .map_err(|e| match e.kind {
                notify::ErrorKind::PathNotFound => Unwatchable::FolderMissing,
                notify::ErrorKind::Io(ref io) if io.kind() == std::io::ErrorKind::NotFound => {
                    Unwatchable::FolderMissing
                }
                _ => Unwatchable::NoInotify(e),
            })?;
    }
    Ok((watcher, receiver))
}

/// Opening and reading a file changes nothing (and the daemon's own reads would otherwise wake it).
fn is_change(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

/// The settings path and every link target it leads through, and the folders that hold them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Chain {
    paths: Vec<PathBuf>,
    folders: Vec<PathBuf>,
}

impl Chain {
    fn resolve(path: &Path) -> Chain {
        let mut paths = vec![path.to_path_buf()];
        let mut current = path.to_path_buf();
        while paths.len() <= MAX_LINKS {
            let Ok(target) = std::fs::read_link(&current) else {
                break;
            };
            let target = match current.parent() {
                Some(folder) if target.is_relative() => folder.join(target),
                _ => target,
            };
            paths.push(target.clone());
            current = target;
        }
        // A folder reached through a link (a folder stowed as a link): the link itself is part of the chain,
        // so that the folder holding it is watched and re-pointing it is seen.
        let mut i = 0;
        while i < paths.len() && paths.len() <= MAX_LINKS * 2 {
            let here = paths[i].clone();
            let mut ancestor = here.parent();
            while let Some(a) = ancestor {
                if std::fs::symlink_metadata(a).is_ok_and(|m| m.file_type().is_symlink())
                    && !paths.iter().any(|p| p == a)
                {
                    paths.push(a.to_path_buf());
                }
                ancestor = a.parent();
            }
            i += 1;
        }
        let mut folders: Vec<PathBuf> = Vec::new();
        for path in &paths {
            let folder = path
                .parent()
                .map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
            if !folders.contains(&folder) {
                folders.push(folder);
            }
        }
        Chain { paths, folders }
    }

    fn concerns(&self, path: &Path) -> bool {
        self.paths.iter().any(|p| p == path) || self.folders.iter().any(|f| f == path)
    }

    /// Device and inode of each folder: a folder replaced under the same path has new ones.
    fn folder_ids(&self) -> Vec<Option<(u64, u64)>> {
        self.folders
            .iter()
            .map(|f| std::fs::metadata(f).ok().map(|m| (m.dev(), m.ino())))
            .collect()
    }

    fn folders_exist(&self) -> bool {
        self.folders.iter().all(|f| f.is_dir())
    }
}

/// What polling compares: each path of the chain's identity, size, time and mode (`None`: missing).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fingerprint(Vec<Option<FileStamp>>);

/// Device, inode, size, modification time (seconds, nanoseconds), mode and owner of one path.
type FileStamp = (u64, u64, u64, i64, i64, u32, u32);

impl Fingerprint {
    fn of(chain: &Chain) -> Fingerprint {
        Fingerprint(
            chain
                .paths
                .iter()
                .map(|path| {
                    std::fs::symlink_metadata(path).ok().map(|m| {
                        (
                            m.dev(),
                            m.ino(),
                            m.size(),
                            m.mtime(),
                            m.mtime_nsec(),
                            m.mode(),
                            m.uid(),
                        )
                    })
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_of_links_is_followed_to_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::fs::write(real.join("hooks.toml"), "").unwrap();
        std::os::unix::fs::symlink("real/hooks.toml", dir.path().join("hooks.toml")).unwrap();
        let chain = Chain::resolve(&dir.path().join("hooks.toml"));
        assert_eq!(
            chain.paths,
            vec![
                dir.path().join("hooks.toml"),
                dir.path().join("real/hooks.toml")
            ]
        );
        assert_eq!(chain.folders, vec![dir.path().to_path_buf(), real.clone()]);
        assert!(chain.concerns(&real.join("hooks.toml")));
        assert!(!chain.concerns(&real.join("other.toml")));
    }

    #[test]
    fn a_loop_of_links_ends() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("b", dir.path().join("a")).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        assert_eq!(
            Chain::resolve(&dir.path().join("a")).paths.len(),
            MAX_LINKS + 1
        );
    }
}
