//! A trusted hook of a repository run from the very bytes that were digested: each file it runs is
//! read once, into memory; the digest is taken of those bytes; and when it is the one the user trusted,
//! the hook runs copies written from them into a private folder of hookd's state (0700, each copy
//! named by the digest of its bytes), its command's or `argv`'s words pointed at the copies. The agent
//! can write the repository's files at any moment, between the digest and the start too; it cannot
//! write hookd's state (hookd's guard of itself refuses it, docs/security.md), so a script changed
//! after it was digested changes nothing of what runs.
//!
//! The hook still runs from the repository's `.hookd` folder, with its environment: only the paths of
//! the files it runs change (`$0` is the copy's path; its name is the file's own).

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::layers::named::{self, Place};
use crate::layers::project::Pinned;
use crate::layers::trust::{self, Script};
use crate::settings::{Hook, Program};
use crate::sync::lock;

/// A hook's files as read once for one fire, and their digest.
#[derive(Debug)]
pub struct Snapshot {
    pub digest: String,
    files: Vec<(PathBuf, Option<Script>)>,
}

/// Reads `pinned`'s files once and digests what was read.
pub fn take(pinned: &Pinned, sequential: bool) -> Snapshot {
    let files: Vec<(PathBuf, Option<Script>)> = pinned
        .files
        .iter()
        .map(|file| (file.clone(), trust::read_bounded(file)))
        .collect();
    let digest = trust::digest_of(&pinned.hook.moment, &pinned.definition, sequential, &files);
    Snapshot { digest, files }
}

/// A file's identity and last change (device, inode, size, modified and changed to the nanosecond), to
/// tell it changed without reading it: a copy touched since hookd wrote it, a hooks file edited.
pub(crate) type Stamp = (u64, u64, u64, i64, i64);

/// [`Stamp`] of `path` itself (a link's own, not its target's); `None` when it is not there.
pub(crate) fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
        meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
    ))
}

/// The private folder of copies, and each copy as hookd last wrote it.
#[derive(Debug)]
pub struct Copies {
    dir: PathBuf,
    written: Mutex<HashMap<PathBuf, Stamp>>,
}

/// Copies kept in memory at most before the memory starts over (each is then checked by reading it
/// back once more, never trusted unseen).
const MAX_COPIES: usize = 4096;

impl Copies {
    /// Copies in `dir` (made 0700 when first needed).
    pub fn new(dir: PathBuf) -> Copies {
        Copies {
            dir,
            written: Mutex::new(HashMap::new()),
        }
    }

    /// The copies in hookd's state folder.
    pub fn in_state() -> Copies {
        Copies::new(crate::paths::state_dir().join("trusted-scripts"))
    }

    /// Where the copy of `script` (named `name`) is, written now unless it is there as hookd wrote it.
    fn place(&self, name: &str, script: &Script) -> std::io::Result<PathBuf> {
        use std::io::Write;
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
        let folder = self.dir.join(format!(
            "{}{}",
            trust::digest(&script.bytes),
            if script.executable { "-x" } else { "" }
        ));
        let path = folder.join(name);
        let now = stamp(&path);
        if now.is_some() && lock(&self.written).get(&path) == now.as_ref() {
            return Ok(path);
        }
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&folder)?;
        // Made private even when it was there already, with other modes.
        std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))?;
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700))?;
        let temp = folder.join(format!(".{name}.{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&temp);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&temp)?;
        file.write_all(&script.bytes)?;
        file.set_permissions(std::fs::Permissions::from_mode(if script.executable {
            0o500
        } else {
            0o400
        }))?;
        drop(file);
        std::fs::rename(&temp, &path)?;
        let written = stamp(&path).ok_or_else(|| std::io::Error::other("the copy vanished"))?;
        let mut memory = lock(&self.written);
        if memory.len() >= MAX_COPIES {
            memory.clear();
        }
        memory.insert(path.clone(), written);
        Ok(path)
    }

    /// Where a file that was missing when digested is pointed at: a path in the private folder that
    /// is never written, so that the file appearing in the repository after the digest is not run.
    fn missing(&self, name: &str) -> PathBuf {
        self.dir.join("missing").join(name)
    }
}

impl Snapshot {
    /// `pinned`'s hook pointed at copies of the bytes of this snapshot. `Err`: why it cannot be (a
    /// file no plain word names, a copy that cannot be written); the hook is then not run.
    pub fn runnable(&self, pinned: &Pinned, copies: &Copies) -> Result<Arc<Hook>, String> {
        if let Some(file) = pinned.unplaced.first() {
            return Err(format!(
                "not run: it names {} in a form hookd cannot point at the copy of the bytes it trusted (inside `sh -c '...'`, with an escape): name the file as a plain word of the command",
                file.display()
            ));
        }
        if pinned.files.is_empty() {
            return Ok(pinned.hook.clone());
        }
        let mut paths = Vec::with_capacity(self.files.len());
        for (file, read) in &self.files {
            let name = file
                .file_name()
                .map_or_else(|| "script".into(), |n| n.to_string_lossy().into_owned());
            paths.push(match read {
                Some(script) => copies.place(&name, script).map_err(|e| {
                    format!(
                        "not run: the copy of {} it trusted cannot be written in {} ({e})",
                        file.display(),
                        copies.dir.display()
                    )
                })?,
                None => copies.missing(&name),
            });
        }
        let mut hook = (*pinned.hook).clone();
        match &mut hook.program {
            Program::Shell { command, .. } => {
                let mut spans: Vec<(usize, usize, usize)> = pinned
                    .places
                    .iter()
                    .filter_map(|(place, n)| match place {
                        Place::Span(a, b) => Some((*a, *b, *n)),
                        Place::Arg(_) => None,
                    })
                    .collect();
                spans.sort();
                for (start, end, n) in spans.into_iter().rev() {
                    if command.get(start..end).is_some() {
                        command
                            .replace_range(start..end, &named::quoted(&paths[n].to_string_lossy()));
                    }
                }
            }
            Program::Argv(argv) | Program::Worker { argv, .. } => {
                for (place, n) in &pinned.places {
                    if let Place::Arg(at) = place
                        && let Some(word) = argv.get_mut(*at)
                    {
                        *word = paths[*n].to_string_lossy().into_owned();
                    }
                }
            }
            Program::Guard(_) | Program::Live { .. } => {}
        }
        Ok(Arc::new(hook))
    }
}
