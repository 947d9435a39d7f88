//! Whether a file can be trusted to hold what its owner wrote: ssh's StrictModes, for the settings file
//! and for the programs its hooks run.
//!
//! A file is only as safe as the folders that hold it: whoever can write a folder can rename another file
//! over the one in it, or a symlink to a file of their choosing (another user replaced `hooks.toml` in a
//! 0777 folder by a link to an empty file, and every hook was dropped). So the path is walked from `/`
//! one name at a time, every link followed by hand, and every folder met on the way (those above each
//! link's target included) must belong to the user or root and be writable by nobody else. A folder that
//! is sticky and root's (`/tmp`) may be written by all: there, only a name's owner can remove or rename it,
//! and what lies below is checked in turn.
//!
//! The walk ends with a path that holds no link; the settings file is then opened by it with
//! `O_NOFOLLOW`, so what is read is what was checked (and a name swapped in between, which only the user
//! or root could do, fails to open rather than be read unchecked).

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// Links followed before giving up (a loop of links), as the kernel's own limit.
const MAX_LINKS: usize = 40;

/// Who may own a file and the folders that hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owners {
    /// The user (the daemon's own uid) or root: the user's own settings and programs.
    UserOrRoot,
    /// Root alone: the managed layer, which the user (and so the agent, running as the user) must not
    /// be able to change. A file the user owns can be made writable again by the user, whatever its mode.
    RootOnly,
}

impl Owners {
    fn allows(self, owner: u32, uid: u32) -> bool {
        owner == 0 || (self == Owners::UserOrRoot && owner == uid)
    }

    fn who(self, uid: u32) -> String {
        match self {
            Owners::UserOrRoot => format!("this user (uid {uid}) or root"),
            Owners::RootOnly => "root".to_string(),
        }
    }
}

/// Why a path cannot be taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Untrusted {
    /// The file, or a folder on its way, does not exist.
    NotFound,
    /// Refused, with the reason and the fix.
    Refused(String),
}

/// Follows every link of `path` (made absolute against the current folder) and checks each folder on
/// the way. `what` names the file in messages ("the settings file"). Returns the path with no link left.
pub(crate) fn resolve(path: &Path, what: &str) -> Result<PathBuf, Untrusted> {
    resolve_owned(path, what, Owners::UserOrRoot)
}

/// As [`resolve`], with every folder on the way held to `owners`.
pub(crate) fn resolve_owned(path: &Path, what: &str, owners: Owners) -> Result<PathBuf, Untrusted> {
    let path = std::path::absolute(path)
        .map_err(|e| Untrusted::Refused(format!("cannot tell where {} is: {e}", path.display())))?;
    let uid = nix::unistd::getuid().as_raw();
    let mut pending: Vec<OsString> = names(&path);
    pending.reverse(); // popped from the end: the next name last
    let mut current = PathBuf::from("/");
    check_folder(&current, &metadata(&current)?, uid, what, owners)?;
    let mut links = 0;
    while let Some(name) = pending.pop() {
        if name == ".." {
            current.pop();
            continue;
        }
        let next = current.join(&name);
        let meta = metadata(&next)?;
        if meta.file_type().is_symlink() {
            links += 1;
            if links > MAX_LINKS {
                return Err(Untrusted::Refused(format!(
                    "{what}: more than {MAX_LINKS} symbolic links from {} (a loop of links?)",
                    path.display()
                )));
            }
            // Who could re-point the link is who can write its folder, checked already.
            let target = std::fs::read_link(&next).map_err(|e| {
                Untrusted::Refused(format!("cannot read the link {}: {e}", next.display()))
            })?;
            if target.is_absolute() {
                current = PathBuf::from("/");
            }
            let mut more = names(&target);
            more.reverse();
            pending.extend(more);
            continue;
        }
        if !pending.is_empty() {
            if !meta.is_dir() {
                return Err(Untrusted::NotFound);
            }
            check_folder(&next, &meta, uid, what, owners)?;
        }
        current = next;
    }
    Ok(current)
}

/// Checks the file at a path with no link left (from [`resolve`]): owned by one of `owners`, and
/// writable by nobody else.
pub(crate) fn check_file_owned(
    metadata: &std::fs::Metadata,
    path: &Path,
    what: &str,
    owners: Owners,
) -> Result<(), String> {
    let uid = nix::unistd::getuid().as_raw();
    if !owners.allows(metadata.uid(), uid) {
        return Err(format!(
            "refused: {what} {} is owned by uid {}, not by {}; whoever owns it could run commands as you{}",
            path.display(),
            metadata.uid(),
            owners.who(uid),
            if owners == Owners::RootOnly {
                " and the managed layer must be out of the user's (and the agent's) reach (fix: chown root: and chmod go-w)"
            } else {
                ""
            }
        ));
    }
    let mode = metadata.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(format!(
            "refused: {what} {} is writable by group or others (mode {mode:04o}); anyone who can write it could run commands as you (fix: chmod go-w {})",
            path.display(),
            path.display()
        ));
    }
    Ok(())
}

/// The names of a path, `.` left out (a leading `/` too: the walk starts there).
fn names(path: &Path) -> Vec<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

fn metadata(path: &Path) -> Result<std::fs::Metadata, Untrusted> {
    std::fs::symlink_metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => Untrusted::NotFound,
        _ => Untrusted::Refused(format!("cannot look at {}: {e}", path.display())),
    })
}

/// A folder on the way: the user's or root's, and writable by nobody else unless it is root's and
/// sticky.
fn check_folder(
    folder: &Path,
    metadata: &std::fs::Metadata,
    uid: u32,
    what: &str,
    owners: Owners,
) -> Result<(), Untrusted> {
    let owner = metadata.uid();
    if !owners.allows(owner, uid) {
        return Err(Untrusted::Refused(format!(
            "refused: the folder {} that holds {what} is owned by uid {owner}, not by {}; whoever owns it could replace {what}",
            folder.display(),
            owners.who(uid)
        )));
    }
    let mode = metadata.mode() & 0o7777;
    let sticky_of_root = owner == 0 && mode & 0o1000 != 0;
    if mode & 0o022 != 0 && !sticky_of_root {
        return Err(Untrusted::Refused(format!(
            "refused: the folder {} that holds {what} is writable by group or others (mode {mode:04o}); anyone who can write it could replace {what} (fix: chmod go-w {})",
            folder.display(),
            folder.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn links_are_followed_and_the_folders_of_their_targets_checked() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        std::fs::create_dir(&store).unwrap();
        chmod(&store, 0o755);
        std::fs::write(store.join("real.toml"), "").unwrap();
        std::os::unix::fs::symlink("store/./../store/real.toml", dir.path().join("hooks.toml"))
            .unwrap();
        let resolved = resolve(&dir.path().join("hooks.toml"), "the settings file").unwrap();
        assert_eq!(resolved, store.join("real.toml"));

        chmod(&store, 0o775);
        let Err(Untrusted::Refused(message)) =
            resolve(&dir.path().join("hooks.toml"), "the settings file")
        else {
            panic!("a group-writable target folder was taken");
        };
        assert!(
            message.contains(&format!("the folder {} ", store.display()))
                && message.contains("mode 0775")
                && message.ends_with(&format!("(fix: chmod go-w {})", store.display())),
            "{message}"
        );
    }

    #[test]
    fn a_sticky_folder_of_roots_may_be_written_by_all() {
        let meta = std::fs::symlink_metadata("/tmp").unwrap();
        if meta.uid() == 0 && meta.mode() & 0o1000 != 0 {
            assert_eq!(
                check_folder(Path::new("/tmp"), &meta, 12345, "x", Owners::UserOrRoot),
                Ok(())
            );
        }
    }

    #[test]
    fn a_missing_file_or_folder_is_not_found_and_a_loop_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            resolve(&dir.path().join("none/hooks.toml"), "x"),
            Err(Untrusted::NotFound)
        );
        std::os::unix::fs::symlink("b", dir.path().join("a")).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        assert!(matches!(
            resolve(&dir.path().join("a"), "x"),
            Err(Untrusted::Refused(m)) if m.contains("loop")
        ));
    }
}
