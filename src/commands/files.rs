//! Writing a user's own files (an agent's settings, systemd units) whole or not at all, so that an
//! interrupted write never leaves a half file for the agent or systemd to read; and reading an agent's
//! settings file, bounded.

use std::io::{Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Writes `text` to `path` whole or not at all: a new file in the same folder, synced, renamed over it.
/// A symlink at `path` is replaced, not followed.
pub fn write_atomic(path: &Path, text: &str, mode: u32) -> Result<(), String> {
    Staged::new(path, text, mode)?.commit()
}

/// A file's new text written beside it and synced, not yet in its place: [`Staged::commit`] renames it
/// over the file, in one step; dropped uncommitted, it is removed. What lets `hookd setup` write
/// everything first and look at the file once more just before it replaces it.
pub struct Staged {
    path: std::path::PathBuf,
    tmp: Option<std::path::PathBuf>,
}

impl Staged {
    pub fn new(path: &Path, text: &str, mode: u32) -> Result<Staged, String> {
        let shown = path.display();
        let dir = path.parent().ok_or_else(|| format!("{shown}: no folder"))?;
        let name = path
            .file_name()
            .ok_or_else(|| format!("{shown}: no file name"))?;
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".hookd-{}.tmp", std::process::id()));
        let tmp = dir.join(tmp_name);
        let written = (|| {
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(mode)
                .open(&tmp)?;
            out.set_permissions(std::fs::Permissions::from_mode(mode))?;
            out.write_all(text.as_bytes())?;
            out.sync_all()
        })();
        let staged = Staged {
            path: path.to_path_buf(),
            tmp: Some(tmp),
        };
        written.map_err(|e| format!("cannot write {shown}: {e}"))?;
        Ok(staged)
    }

    /// The new file renamed over the old one, and the folder synced.
    pub fn commit(mut self) -> Result<(), String> {
        let tmp = self.tmp.take().expect("committed once");
        let renamed = std::fs::rename(&tmp, &self.path);
        if let Err(e) = renamed {
            let _ = std::fs::remove_file(&tmp);
            return Err(format!("cannot write {}: {e}", self.path.display()));
        }
        if let Some(Ok(dir)) = self.path.parent().map(std::fs::File::open) {
            let _ = dir.sync_all();
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// An agent's settings file larger than this is none an agent writes (theirs are a few KiB); `hookd
/// setup` does not edit it and `hookd import` does not read it.
pub const MAX_AGENT_FILE: u64 = 16 << 20;

/// The text of an agent's settings file, for `hookd import`: a regular file (a link to one is fine), at
/// most [`MAX_AGENT_FILE`] bytes, UTF-8. Opened without blocking and read through the same handle that
/// was checked: a FIFO given by mistake would wait for a writer forever, and `/dev/zero` be read into
/// memory without end.
pub fn read_agent_file(path: &Path) -> Result<String, String> {
    let shown = path.display();
    let cannot = |e: std::io::Error| format!("cannot read {shown}: {e}");
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(path)
        .map_err(cannot)?;
    let meta = file.metadata().map_err(cannot)?;
    if !meta.is_file() {
        return Err(format!("{shown} is not a regular file"));
    }
    if meta.len() > MAX_AGENT_FILE {
        return Err(format!(
            "{shown} is {} bytes, more than the {MAX_AGENT_FILE} of any agent's settings file",
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_AGENT_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_AGENT_FILE {
        return Err(format!(
            "{shown} grew past the {MAX_AGENT_FILE} bytes of any agent's settings file while it was read"
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("{shown} is not UTF-8 text"))
}
