//! Binding the daemon's socket safely: a private folder, a private socket, no second daemon on the same
//! path, and no stale file left from a crash standing in the way.

use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use std::fs::File;

use nix::fcntl::{Flock, FlockArg};
use nix::sys::stat::{Mode, umask};

/// The socket file this daemon bound, to be removed when it stops.
#[derive(Debug)]
pub struct SocketFile {
    path: PathBuf,
    /// Device and inode of the socket file, so that shutdown removes only the file this daemon made.
    identity: (u64, u64),
    /// The lock on `<socket>.lock`, held for the daemon's life (released by the kernel when it exits).
    _lock: Flock<File>,
}

impl SocketFile {
    /// Removes the socket file if it is still the one this daemon bound.
    pub fn remove_file(&self) {
        let ours = std::fs::symlink_metadata(&self.path)
            .is_ok_and(|m| (m.dev(), m.ino()) == self.identity);
        if ours && let Err(e) = std::fs::remove_file(&self.path) {
            tracing::warn!(path = %self.path.display(), "could not remove the socket file: {e}");
        }
    }
}

/// Binds a listening socket at `path` (non-blocking, for tokio), creating its folder (mode 0700) when
/// missing.
pub fn bind(path: &Path) -> Result<(UnixListener, SocketFile), String> {
    let shown = path.display();
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    prepare_folder(folder)?;
    let lock = lock_for(path)?;
    match std::fs::symlink_metadata(path) {
        Ok(metadata) if metadata.file_type().is_socket() => match UnixStream::connect(path) {
            Ok(_) => {
                return Err(format!(
                    "a hookd daemon is already running on {shown}; stop it first"
                ));
            }
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                std::fs::remove_file(path)
                    .map_err(|e| format!("cannot remove the stale socket {shown}: {e}"))?;
                tracing::info!(socket = %shown, "removed a stale socket left by a daemon that is gone");
            }
            Err(e) => {
                return Err(format!(
                    "cannot tell whether a daemon is running on {shown}: {e}"
                ));
            }
        },
        Ok(_) => {
            return Err(format!(
                "{shown} exists and is not a socket; refusing to replace it"
            ));
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot inspect {shown}: {e}")),
    }
    // Bound under umask 077, so the socket is never reachable by others, not even for an instant.
    let previous = umask(Mode::from_bits_truncate(0o077));
    let bound = UnixListener::bind(path);
    umask(previous);
    let listener = bound.map_err(|e| match e.kind() {
        ErrorKind::AddrInUse => {
            format!("{shown} is in use by another daemon that started at the same time")
        }
        _ => format!("cannot listen on {shown}: {e}"),
    })?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("cannot set the mode of {shown}: {e}"))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("cannot set up {shown}: {e}"))?;
    let metadata =
        std::fs::symlink_metadata(path).map_err(|e| format!("cannot inspect {shown}: {e}"))?;
    Ok((
        listener,
        SocketFile {
            path: path.to_path_buf(),
            identity: (metadata.dev(), metadata.ino()),
            _lock: lock,
        },
    ))
}

/// Takes the lock `<socket>.lock` beside the socket, or says that another daemon holds it. Without it, two
/// daemons starting at once could both find a stale socket, and the second would remove the socket the
/// first had just bound: the first would serve on a path nobody can reach. The lock file is left in place
/// when the daemon stops (removing it would let a third daemon lock a new file while a second holds the
/// old one).
fn lock_for(path: &Path) -> Result<Flock<File>, String> {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let lock_path = PathBuf::from(name);
    let shown = lock_path.display();
    let not_regular = || {
        format!(
            "the lock file {shown} is not a regular file of this user's; remove it and start again"
        )
    };
    if std::fs::symlink_metadata(&lock_path).is_ok_and(|m| !m.is_file()) {
        return Err(not_regular());
    }
    // O_NOFOLLOW and O_NONBLOCK: a symlink or a FIFO planted in its place since (the socket may be in a
    // daemon folder such as /tmp) is refused at once, never followed or waited on.
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(&lock_path)
        .map_err(|e| format!("cannot open the lock file {shown}: {e}"))?;
    let metadata = file
        .metadata()
        .map_err(|e| format!("cannot inspect the lock file {shown}: {e}"))?;
    if !metadata.is_file() || metadata.uid() != nix::unistd::getuid().as_raw() {
        return Err(not_regular());
    }
    Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, errno)| {
        if errno == nix::errno::Errno::EWOULDBLOCK {
            format!(
                "a hookd daemon is already running, or starting, on {} (it holds {shown})",
                path.display()
            )
        } else {
            format!("cannot lock {shown}: {errno}")
        }
    })
}

/// Creates the socket's folder 0700, or checks that an existing one is safe to bind in: owned by this user
/// or root, and writable by nobody else. Others who can write the folder could replace the socket with
/// theirs (and answer every fire "go ahead"). A folder hookd did not create is never changed: making
/// `/tmp` or a home folder 0700 because `--socket` pointed into it would break everything else that lives
/// there.
fn prepare_folder(folder: &Path) -> Result<(), String> {
    let shown = folder.display();
    match std::fs::metadata(folder) {
        Ok(metadata) => {
            if !metadata.is_dir() {
                return Err(format!("the socket's folder {shown} is not a folder"));
            }
            let uid = nix::unistd::getuid().as_raw();
            if metadata.uid() != uid && metadata.uid() != 0 {
                return Err(format!(
                    "the socket's folder {shown} belongs to uid {}, not to this user; refusing to use it",
                    metadata.uid()
                ));
            }
            if metadata.mode() & 0o022 != 0 {
                let mode = metadata.mode() & 0o7777;
                return Err(format!(
                    "the socket's folder {shown} is writable by others (mode {mode:04o}): they could replace \
                     the socket with their own; put the socket in a private folder (for example \
                     --socket {}/hookd/hookd.sock, a folder hookd creates 0700), or make this one \
                     private with `chmod go-w {shown}`",
                    folder.display()
                ));
            }
            Ok(())
        }
        Err(e) if e.kind() == ErrorKind::NotFound => std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(folder)
            .map_err(|e| format!("cannot create the socket's folder {shown}: {e}")),
        Err(e) => Err(format!("cannot inspect the socket's folder {shown}: {e}")),
    }
}

/// Our own uid, or root: anyone else could make our hooks run, or learn our policies.
pub fn peer_allowed(uid: u32) -> bool {
    uid == nix::unistd::getuid().as_raw() || uid == 0
}
