//! Trust pinned to content: what the user trusted of each repository's hooks, one digest per hook (its
//! definition, and the bytes of every file of the repository it runs). A hook whose digest is not the
//! one trusted (never trusted, or changed by one byte since) is pending: it does not run, and is never
//! silent about it.
//!
//! The store is a file in hookd's state folder (`trust.json`), written only by `hookd trust` (never by
//! the daemon, never over the socket): hookd's guard of itself keeps the agent from writing the state
//! folder, and from running `hookd trust` (docs/security.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What the user trusted: per repository (its root, as an absolute path), per hook (`Moment/name`),
/// the digest trusted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Store {
    pub projects: BTreeMap<String, BTreeMap<String, String>>,
}

/// The trust store is read up to this size: a digest per hook takes about a hundred bytes, so this is
/// tens of thousands of repositories' hooks; one larger was not written by `hookd trust`.
const STORE_SIZE: u64 = 16 * 1024 * 1024;

/// Where the store is: hookd's state folder.
pub fn store_path() -> PathBuf {
    crate::paths::state_dir().join("trust.json")
}

impl Store {
    /// The store at `path`; none there (or unreadable) trusts nothing.
    pub fn load(path: &Path) -> Store {
        Store::read(path).unwrap_or_else(|why| {
            tracing::warn!(file = %path.display(), "{why}: every repository's hooks are pending");
            Store::default()
        })
    }

    /// The store at `path` to be changed and written back: none there is an empty one; one that cannot be
    /// read or parsed is an `Err`, never taken as empty (written back, it would take away every other
    /// repository's trust).
    ///
    /// Read without waiting and within `STORE_SIZE` (16 MiB): the agent runs as the user, and a FIFO (or a
    /// file it holds a lease on) put in the store's place must not hold the daemon, `hookd check` or
    /// `hookd trust`; anything but a regular file is refused.
    pub fn read(path: &Path) -> Result<Store, String> {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let refused =
            |why: String| format!("the trust store {} cannot be read ({why})", path.display());
        let file = match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
            .open(path)
        {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Store::default()),
            Err(e) => return Err(refused(e.to_string())),
        };
        let meta = file.metadata().map_err(|e| refused(e.to_string()))?;
        if !meta.is_file() {
            return Err(refused("it is not a regular file".into()));
        }
        let mut bytes = Vec::new();
        file.take(STORE_SIZE + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| refused(e.to_string()))?;
        if bytes.len() as u64 > STORE_SIZE {
            return Err(refused(format!("it is larger than {STORE_SIZE} bytes")));
        }
        serde_json::from_slice(&bytes).map_err(|e| refused(e.to_string()))
    }

    /// Writes the store whole or not at all (a file beside it renamed over it), readable by the user
    /// alone.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let temp = path.with_extension(format!("json.{}.tmp", std::process::id()));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temp)?;
        let text = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        file.write_all(&text)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    }

    /// The digest trusted for `key` of the repository at `root`.
    pub fn trusted(&self, root: &Path, key: &str) -> Option<&str> {
        self.projects
            .get(&root.to_string_lossy().into_owned())
            .and_then(|hooks| hooks.get(key))
            .map(String::as_str)
    }
}

/// The SHA-256 of `bytes`, in hex.
pub fn digest(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The first 16 hex digits of the SHA-256 of `bytes`: enough to tell settings apart.
pub fn short_digest(bytes: &[u8]) -> String {
    let mut full = digest(bytes);
    full.truncate(16);
    full
}

/// The digest of one hook: its moment, the text of its table in the file, whether its moment is
/// sequential there, and each file of the repository it runs, by its path and its bytes. A file that
/// cannot be read is digested as such, so that it being readable again changes the digest.
pub fn hook_digest(moment: &str, definition: &str, sequential: bool, files: &[PathBuf]) -> String {
    let read: Vec<(PathBuf, Option<Script>)> = files
        .iter()
        .map(|file| (file.clone(), read_bounded(file)))
        .collect();
    digest_of(moment, definition, sequential, &read)
}

/// [`hook_digest`] of files already read: the bytes digested are the bytes given, so that what runs
/// can be made the very bytes trusted (`layers::snapshot`).
pub fn digest_of(
    moment: &str,
    definition: &str,
    sequential: bool,
    files: &[(PathBuf, Option<Script>)],
) -> String {
    let mut all = Vec::new();
    for part in [
        moment.as_bytes(),
        definition.as_bytes(),
        &[u8::from(sequential)],
    ] {
        all.extend_from_slice(&(part.len() as u64).to_le_bytes());
        all.extend_from_slice(part);
    }
    for (file, read) in files {
        let path = file.to_string_lossy();
        all.extend_from_slice(&(path.len() as u64).to_le_bytes());
        all.extend_from_slice(path.as_bytes());
        match read {
            Some(script) => {
                all.extend_from_slice(&(script.bytes.len() as u64).to_le_bytes());
                all.extend_from_slice(&script.bytes);
            }
            None => all.extend_from_slice(&u64::MAX.to_le_bytes()),
        }
    }
    digest(&all)
}

/// A file of the repository as read once: its bytes, and whether its owner may run it (a copy of it
/// is made runnable alike).
#[derive(Debug, Clone)]
pub struct Script {
    pub bytes: Vec<u8>,
    pub executable: bool,
}

/// A script a repository's hook runs is digested up to this size; one bigger cannot be trusted.
const SCRIPT_SIZE: u64 = 16 * 1024 * 1024;

/// The bytes of a regular file, read without waiting (a FIFO put in a script's place must not hold the
/// daemon) and within [`SCRIPT_SIZE`]; `None` for anything else.
pub fn read_bounded(path: &Path) -> Option<Script> {
    use std::io::Read;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > SCRIPT_SIZE {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(SCRIPT_SIZE + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= SCRIPT_SIZE).then_some(Script {
        bytes,
        executable: meta.permissions().mode() & 0o100 != 0,
    })
}
