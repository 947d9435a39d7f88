//! Watches the settings file and reloads it when it changes (docs/settings.md, "Live reload").
//!
//! The folder is watched, not the file: editors and git replace a file by renaming another over it or by
//! unlinking and creating it, and a watch on the file itself would be lost with the old inode. A symlinked
//! settings file is followed: every folder along the chain of links is watched too, so both `ln -sfn` to a
//! new target and edits of the target are seen. The notify callback never blocks: it notes what it saw and
//! `try_send`s into a channel of one, and this task batches a burst of events into one reload (a trailing
//! window, capped so a change takes effect within 200 ms of its writer's close). Without inotify (the
//! per-user watch limit spent), or while the folder does not exist, the file's metadata is polled instead.
//!
//! A file is reloaded only once its writer is done with it: when a writer closes it (inotify's
//! IN_CLOSE_WRITE), when a file or link is moved or linked into place, or when it goes. Never on a write
//! alone: a writer that truncates the file, writes a comment, pauses and writes the rest leaves a valid
//! file with no hooks in the pause, and loading it let 8,447 of 8,735 `rm -rf /` through. While polling,
//! the file must look the same at two polls in a row.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use notify::event::{AccessKind, AccessMode, EventKind, ModifyKind};
use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::daemon::reload::{Trigger, reload};
use crate::daemon::state::Daemon;

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
pub fn spawn(
    daemon: Arc<Daemon>,
    stop: CancellationToken,
    read_as: SeenAtStart,
) -> tokio::task::JoinHandle<()> {
    let force_poll = std::env::var("HOOKD_WATCH").is_ok_and(|v| v == "poll");
    tokio::spawn(async move {
        tokio::select! {
            _ = stop.cancelled() => {}
            _ = watch(daemon, force_poll, read_as) => {}
        }
    })
}

/// The settings file as it was just before the daemon read it at start-up. The watcher starts from it,
/// not from the file as it finds it: an edit saved between that read and the watcher's start (the socket
/// already answering) would otherwise be taken for the settings in force, and never loaded.
pub struct SeenAtStart(Fingerprint);

impl SeenAtStart {
    /// To be taken before the file is read.
    pub fn before_reading(config: &Path) -> SeenAtStart {
        SeenAtStart(Fingerprint::of(&Chain::resolve(config)))
    }
}

async fn watch(daemon: Arc<Daemon>, force_poll: bool, read_as: SeenAtStart) {
    let mut seen = read_as.0;
    loop {
        let chain = Chain::resolve(&daemon.config_path);
        let armed = if force_poll {
            Err(Unwatchable::Forced)
        } else {
            arm(&chain)
        };
        // Whatever changed while nothing watched (between two arms) is taken now.
        seen = reload_if_changed(&daemon, &chain, seen).await;
        match armed {
            Ok((watcher, mut events, seen_kinds)) => {
                let ids = chain.folder_ids();
                // Set while a writer has written the file and not closed it yet: a change of mode or owner
                // then waits for the close, rather than load what is written so far.
                let mut writing = false;
                while events.recv().await.is_some() {
                    settle(&mut events).await;
                    let seen_now = seen_kinds.swap(0, Ordering::AcqRel);
                    let due = if seen_now & DONE != 0 {
                        // Writes after the close that ended the batch's writing: a new writer is at it.
                        writing = seen_now & WRITTEN != 0;
                        true
                    } else {
                        writing |= seen_now & WRITTEN != 0;
                        seen_now & METADATA != 0 && !writing
                    };
                    if due {
                        let _ = reload(&daemon, Trigger::Watch).await;
                        seen = Fingerprint::of(&chain);
                    }
                    if Chain::resolve(&daemon.config_path) != chain
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
                tracing::info!(config = %daemon.config_path.display(), "the settings file's folder does not exist yet: looking for it every {POLL_EVERY:?}");
                while !Chain::resolve(&daemon.config_path).folders_exist() {
                    tokio::time::sleep(POLL_EVERY).await;
                }
            }
            Err(why @ (Unwatchable::NoInotify(_) | Unwatchable::Forced)) => {
                // Said once: polling, once begun, goes on for the daemon's life.
                tracing::warn!(
                    "cannot watch the settings file ({why}): polling it every {POLL_EVERY:?} instead"
                );
                // A change is taken once the file looks the same at two polls in a row: a writer that
                // is still at it changes its size or time between them.
                let mut last = seen.clone();
                loop {
                    tokio::time::sleep(POLL_EVERY).await;
                    let now = Fingerprint::of(&Chain::resolve(&daemon.config_path));
                    if now != seen && now == last {
                        let _ = reload(&daemon, Trigger::Watch).await;
                        seen = now.clone();
                    }
                    last = now;
                }
            }
        }
    }
}

/// Reloads when the file's fingerprint moved since `seen`; returns the fingerprint now.
async fn reload_if_changed(daemon: &Arc<Daemon>, chain: &Chain, seen: Fingerprint) -> Fingerprint {
    let now = Fingerprint::of(chain);
    if now != seen {
        let _ = reload(daemon, Trigger::Watch).await;
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

/// What the callback saw in a batch, as bits of one byte (see [`seen`]).
type Seen = u8;
/// A write to the file (or a file created, which is written next): not a reason to reload.
const WRITTEN: Seen = 1;
/// A writer closed the file, a file or link was moved or linked into place, or went: reload.
const DONE: Seen = 2;
/// The file's mode or owner changed: reload, unless a writer is still at it.
const METADATA: Seen = 4;

/// Starts watching every folder of the chain; events about the chain's paths are noted in the returned
/// byte and wake the receiver.
fn arm(
    chain: &Chain,
) -> Result<
    (
        notify::RecommendedWatcher,
        mpsc::Receiver<()>,
        Arc<AtomicU8>,
    ),
    Unwatchable,
> {
    if !chain.folders_exist() {
        return Err(Unwatchable::FolderMissing);
    }
    let (sender, receiver) = mpsc::channel(1);
    let noted = Arc::new(AtomicU8::new(0));
    let note = noted.clone();
    let interesting = chain.clone();
    let mut watcher =
        notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
            Ok(event) => {
                let Some(path) = event.paths.iter().find(|p| interesting.concerns(p)) else {
                    return;
                };
                // A hard link made into place names a file that has other names: written already.
                let created_file = matches!(event.kind, EventKind::Create(_))
                    && std::fs::symlink_metadata(path)
                        .is_ok_and(|m| m.file_type().is_file() && m.nlink() == 1);
                match seen(&event.kind, created_file) {
                    0 => {}
                    WRITTEN => {
                        // Noted, and nothing woken: the close that ends the write will be.
                        note.fetch_or(WRITTEN, Ordering::AcqRel);
                    }
                    // The events come in order on notify's one thread: a close ends the writes before it.
                    DONE => {
                        note.store(DONE, Ordering::Release);
                        // Full means a wake-up is already pending: this event is in the same batch.
                        let _ = sender.try_send(());
                    }
                    kind => {
                        note.fetch_or(kind, Ordering::AcqRel);
                        let _ = sender.try_send(());
                    }
                }
            }
            Err(e) => {
                tracing::warn!("watching the settings file: {e}");
                note.store(DONE, Ordering::Release);
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
    Ok((watcher, receiver, noted))
}

/// What an event about one of the chain's paths means. `created_file`: the event is a creation and the
/// path is now a regular file, one that its creator is about to write (`open(O_CREAT)`, then writes, then
/// the close that ends in IN_CLOSE_WRITE). A symbolic or hard link created (`ln -s`), a folder, a rename,
/// a removal: done at once. Opening and reading a file changes nothing (and the daemon's own reads would
/// otherwise wake it).
fn seen(kind: &EventKind, created_file: bool) -> Seen {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => DONE,
        EventKind::Access(_) => 0,
        EventKind::Create(_) if created_file => WRITTEN,
        EventKind::Modify(ModifyKind::Data(_)) => WRITTEN,
        EventKind::Modify(ModifyKind::Metadata(_)) => METADATA,
        _ => DONE,
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

    #[test]
    fn only_a_writer_that_is_done_makes_a_reload() {
        use notify::event::{CreateKind, DataChange, MetadataKind, RemoveKind, RenameMode};
        let close = EventKind::Access(AccessKind::Close(AccessMode::Write));
        assert_eq!(seen(&close, false), DONE);
        let write = EventKind::Modify(ModifyKind::Data(DataChange::Any));
        assert_eq!(
            seen(&write, false),
            WRITTEN,
            "a write alone is not the end of it"
        );
        let create = EventKind::Create(CreateKind::File);
        assert_eq!(seen(&create, true), WRITTEN, "a new file is written next");
        assert_eq!(seen(&create, false), DONE, "a link created is whole");
        let moved = EventKind::Modify(ModifyKind::Name(RenameMode::To));
        assert_eq!(seen(&moved, false), DONE);
        assert_eq!(seen(&EventKind::Remove(RemoveKind::File), false), DONE);
        let chmod = EventKind::Modify(ModifyKind::Metadata(MetadataKind::Permissions));
        assert_eq!(seen(&chmod, false), METADATA);
        let read = EventKind::Access(AccessKind::Close(AccessMode::Read));
        assert_eq!(seen(&read, false), 0);
    }
}
