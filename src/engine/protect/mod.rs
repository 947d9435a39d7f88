//! hookd's guard of itself (docs/security.md): before a tool runs, a call that would change what keeps
//! the guard standing is refused by the engine itself, whatever the user's hooks are (none included).
//!
//! The agent runs as the same user as hookd: one tool call could edit the settings, replace a hook's
//! script, empty the journal, rewrite the agent's own hook settings or kill the daemon, and every guard
//! would be off. So at [`GUARDED_MOMENTS`], a call is read for what it would touch (`judge.rs`): a file
//! edit's path, a shell command's writes and the processes it signals ([`crate::shell`] reads it as a
//! shell would), anything else's paths; and a call that would write, move, delete or change the mode of
//! a guarded path ([`Places`], the settings and `[protect] paths`), or stop or kill the daemon, is
//! refused, its record naming [`PROTECT_HOOK`]. Reads go on. What it cannot see (a command disguised, a
//! script that writes the file) is said in docs/security.md: the defence behind it is the journal of
//! every weakening reload, the socket unit that restarts a killed daemon, and a fail-closed relay.

mod judge;
mod kept;
mod paths;
mod places;

use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::settings::Settings;
use crate::tables::moment;

use kept::Kept;
pub use paths::Guarded;
pub use places::Places;

/// The name the record and the response give hookd's own refusal, as a hook's name: the prefix is kept
/// from the settings' hooks (`settings::parse`), so it can only be hookd's.
pub const PROTECT_HOOK: &str = "hookd:protect";

/// The moments before a tool runs, where a refusal holds the call back.
pub const GUARDED_MOMENTS: &[&str] = &[
    moment::PRE_TOOL_USE,
    moment::PERMISSION_REQUEST,
    moment::PRE_SKILL_SHELL_COMMAND,
];

/// The guard of one generation of the settings: the guarded paths, made once when the settings are
/// installed, and what a call is judged with.
#[derive(Debug, Default)]
pub struct Shield {
    enabled: bool,
    /// The settings file, named in every refusal as where the guard is turned off.
    settings_path: PathBuf,
    /// What a call is judged against.
    kept: Kept,
}

impl Shield {
    /// The guard for `settings` at `places`.
    pub fn new(settings: &Settings, places: &Places) -> Shield {
        let mut env = crate::shell::Env {
            home: places.home.to_str().map(str::to_string),
            ..crate::shell::Env::default()
        };
        for (name, value) in &places.vars {
            env.vars.insert(name.clone(), value.clone());
        }
        env.vars
            .entry("HOME".into())
            .or_insert_with(|| places.home.to_string_lossy().into_owned());
        if let Some(dir) = settings.dir.to_str() {
            env.vars.insert("HOOKD_CONFIG_DIR".into(), dir.to_string());
        }
        Shield {
            enabled: settings.protect.enabled,
            settings_path: settings.path.clone(),
            kept: Kept {
                guarded: paths::guarded(settings, places),
                daemon_pid: places.daemon_pid,
                daemon_command_line: places.daemon_command_line.clone(),
                env,
                home: places.home.clone(),
                folders: paths::Folders::default(),
            },
        }
    }

    /// Whether the guard is on.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The guarded paths, for `status` and `doctor`.
    pub fn guarded(&self) -> &[Guarded] {
        &self.kept.guarded
    }

    /// Why a call at `moment` must be refused, or `None` when it touches nothing of hookd's (or the
    /// guard is off, or the moment is not before a tool runs).
    pub fn judge(&self, moment: &str, event: &Map<String, Value>) -> Option<String> {
        if !self.enabled || !GUARDED_MOMENTS.contains(&moment) {
            return None;
        }
        let touched = judge::judge(&self.kept, event)?;
        Some(format!(
            "hookd protects itself: this call would {touched}. An agent may read hookd's files but not change them, nor stop the daemon; if this change is wanted, the user makes it by hand, outside the agent (or turns this guard off by hand in {}: [protect] enabled = false)",
            self.settings_path.display()
        ))
    }
}

#[cfg(test)]
mod tests;
