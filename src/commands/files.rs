//! Writing a user's own files (an agent's settings, systemd units) whole or not at all, so that an
//! interrupted write never leaves a half file for the agent or systemd to read.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Writes `text` to `path` whole or not at all: a new file in the same folder, synced, renamed over it.
/// A symlink at `path` is replaced, not followed.
pub fn write_atomic(path: &Path, text: &str, mode: u32) -> Result<(), String> {
    let shown = path.display();
    let dir = path.parent().ok_or_else(|| format!("{shown}: no folder"))?;
    let name = path
        .file_name()
        .ok_or_else(|| format!("{shown}: no file name"))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".hookd-{}.tmp", std::process::id()));
    let tmp = dir.join(tmp_name);
    let result = (|| {
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)?;
        out.set_permissions(std::fs::Permissions::from_mode(mode))?;
        out.write_all(text.as_bytes())?;
        out.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Ok(dir) = std::fs::File::open(dir) {
            let _ = dir.sync_all();
        }
        Ok::<(), std::io::Error>(())
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {shown}: {e}")
    })
}
