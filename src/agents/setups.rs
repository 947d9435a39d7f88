//! The registry of setups, `$XDG_STATE_HOME/hookd/setup.json`: which agent's settings file `hookd
//! setup` wrote hookd's relay hooks into, with the relay's command as written, whether it fails closed,
//! and a digest of the hooks written ([`crate::agents::setup::hooks_digest`]), so that `hookd doctor`
//! can tell when they changed (drift) and the daemon's guard knows which files hold the relay
//! ([`setup_files`]). `hookd setup AGENT --undo` takes the entry out.
//!
//! ```json
//! {"version":1,"setups":[{"agent":"claude-code","file":"/home/me/.claude/settings.json",
//!   "relay":"/usr/local/bin/hookd-relay --agent claude-code","fail_closed":false,
//!   "hooks_sha256":"sha256:...","at":"2026-12-04T21:00:00.000Z"}]}
//! ```
//!
//! Parsing and writing the text are pure ([`Registry::parse`], [`Registry::to_text`]); the file is read
//! and written by [`load`] and [`update`], the second under a lock, so that two setups at once (two
//! agents set up from two shells) do not lose each other's entry.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The version of the file's format this hookd writes and reads.
pub const VERSION: u32 = 1;

/// The file, read by the daemon too: small, or it is none hookd wrote.
const MAX_REGISTRY: u64 = 1 << 20;

/// One agent's settings file as `hookd setup` left it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setup {
    /// The agent, as the command line names it (`claude-code`).
    pub agent: String,
    /// The settings file, absolute.
    pub file: String,
    /// The relay's command as written into each hook.
    pub relay: String,
    /// Whether the relay refuses when the daemon cannot answer (`--fail-closed`).
    pub fail_closed: bool,
    /// The digest of hookd's hooks as written ([`crate::agents::setup::hooks_digest`]).
    pub hooks_sha256: String,
    /// When setup wrote them (RFC 3339, UTC).
    pub at: String,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registry {
    pub version: u32,
    pub setups: Vec<Setup>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry {
            version: VERSION,
            setups: Vec::new(),
        }
    }
}

impl Registry {
    /// The file's text; an empty one is an empty registry. Another version is refused, not guessed at.
    pub fn parse(text: &str) -> Result<Registry, String> {
        if text.trim().is_empty() {
            return Ok(Registry::default());
        }
        let registry: Registry =
            serde_json::from_str(text).map_err(|e| format!("not a registry of setups: {e}"))?;
        if registry.version != VERSION {
            return Err(format!(
                "version {} of the registry of setups, not {VERSION}, which this hookd reads",
                registry.version
            ));
        }
        Ok(registry)
    }

    /// The file's text: indented JSON, one entry a line or so, ending in a newline.
    pub fn to_text(&self) -> String {
        serde_json::to_string_pretty(self).expect("the registry serializes") + "\n"
    }

    /// `setup` in the place of any entry for the same file (one file, one entry), else at the end.
    pub fn record(&mut self, setup: Setup) {
        match self.setups.iter_mut().find(|s| s.file == setup.file) {
            Some(old) => *old = setup,
            None => self.setups.push(setup),
        }
    }

    /// Takes out the entry of `agent` for `file`; whether there was one.
    pub fn forget(&mut self, agent: &str, file: &str) -> bool {
        let before = self.setups.len();
        self.setups
            .retain(|s| !(s.agent == agent && s.file == file));
        self.setups.len() < before
    }

    /// The files set up, each once.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = Vec::new();
        for setup in &self.setups {
            let file = PathBuf::from(&setup.file);
            if !files.contains(&file) {
                files.push(file);
            }
        }
        files
    }
}

/// Where the registry is: `setup.json` in hookd's state folder ([`crate::paths::state_dir`]).
pub fn path() -> PathBuf {
    crate::paths::state_dir().join("setup.json")
}

/// The agents' settings files hookd's relay hooks were written into, as the registry says (none when
/// it is missing or unreadable): the files the daemon's guard protects.
pub fn setup_files() -> Vec<PathBuf> {
    load_from(&path()).map(|r| r.files()).unwrap_or_default()
}

/// The registry as the file holds it; empty when there is no file.
pub fn load() -> Result<Registry, String> {
    load_from(&path())
}

fn load_from(path: &Path) -> Result<Registry, String> {
    use std::io::Read;
    let shown = path.display();
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Registry::default()),
        Err(e) => return Err(format!("cannot read {shown}: {e}")),
    };
    let mut text = String::new();
    file.take(MAX_REGISTRY)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    Registry::parse(&text).map_err(|e| format!("{shown}: {e}"))
}

/// Changes the registry with `change`, under an exclusive lock (`setup.json.lock` beside it), and writes
/// it whole or not at all (a new file renamed over the old). An unreadable registry is started afresh
/// rather than keep every later setup out of it; what it held is kept beside it as `setup.json.bad`.
pub fn update(change: impl FnOnce(&mut Registry)) -> Result<(), String> {
    update_at(&path(), change)
}

fn update_at(path: &Path, change: impl FnOnce(&mut Registry)) -> Result<(), String> {
    use nix::fcntl::{Flock, FlockArg};
    let dir = path.parent().ok_or("the registry has no folder")?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let lock_path = path.with_extension("json.lock");
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&lock_path)
        .map_err(|e| format!("cannot open {}: {e}", lock_path.display()))?;
    let _lock = Flock::lock(lock, FlockArg::LockExclusive)
        .map_err(|(_, e)| format!("cannot lock {}: {e}", lock_path.display()))?;
    let mut registry = match load_from(path) {
        Ok(registry) => registry,
        Err(_) => {
            let _ = std::fs::rename(path, path.with_extension("json.bad"));
            Registry::default()
        }
    };
    change(&mut registry);
    let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    let written = (|| {
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        out.write_all(registry.to_text().as_bytes())?;
        out.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {}: {e}", path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(agent: &str, file: &str) -> Setup {
        Setup {
            agent: agent.into(),
            file: file.into(),
            relay: format!("/bin/hookd-relay --agent {agent}"),
            fail_closed: false,
            hooks_sha256: "sha256:00".into(),
            at: "2026-12-04T21:00:00.000Z".into(),
        }
    }

    #[test]
    fn the_text_is_the_documented_shape_and_reads_back() {
        let mut registry = Registry::default();
        registry.record(entry("claude-code", "/h/.claude/settings.json"));
        let text = registry.to_text();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["version"], 1);
        let setup = &value["setups"][0];
        for key in [
            "agent",
            "file",
            "relay",
            "fail_closed",
            "hooks_sha256",
            "at",
        ] {
            assert!(setup.get(key).is_some(), "{key} in {text}");
        }
        assert_eq!(Registry::parse(&text).unwrap(), registry);
        assert_eq!(Registry::parse("").unwrap(), Registry::default());
        assert!(
            Registry::parse("{\"version\":2,\"setups\":[]}")
                .unwrap_err()
                .contains("version 2")
        );
        assert!(Registry::parse("[").is_err());
    }

    #[test]
    fn one_file_one_entry_and_undo_takes_it_out() {
        let mut registry = Registry::default();
        registry.record(entry("claude-code", "/a"));
        registry.record(entry("codex", "/b"));
        let mut again = entry("claude-code", "/a");
        again.fail_closed = true;
        registry.record(again);
        assert_eq!(registry.setups.len(), 2);
        assert!(registry.setups[0].fail_closed);
        assert_eq!(registry.files(), [PathBuf::from("/a"), PathBuf::from("/b")]);
        assert!(registry.forget("claude-code", "/a"));
        assert!(!registry.forget("claude-code", "/a"));
        assert_eq!(registry.files(), [PathBuf::from("/b")]);
    }

    #[test]
    fn updates_keep_each_others_entries_and_a_bad_file_is_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/setup.json");
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || {
                    update_at(&path, |r| r.record(entry("codex", &format!("/f{i}")))).unwrap()
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(load_from(&path).unwrap().setups.len(), 8);
        std::fs::write(&path, "junk").unwrap();
        assert!(load_from(&path).is_err());
        update_at(&path, |r| r.record(entry("codex", "/new"))).unwrap();
        assert_eq!(load_from(&path).unwrap().files(), [PathBuf::from("/new")]);
        assert_eq!(
            std::fs::read_to_string(path.with_extension("json.bad")).unwrap(),
            "junk"
        );
    }
}
