//! hookd's guard of itself (docs/security.md): before a tool runs, a call that would change what keeps
//! the guard standing is refused by the engine itself, whatever the user's hooks are (none included).
//!
//! The agent runs as the same user as hookd: one tool call could edit the settings, replace a hook's
//! script, empty the journal, rewrite the agent's own hook settings or kill the daemon, and every guard
//! would be off. So at [`GUARDED_MOMENTS`], a call is read for what it would touch ([`judge`]): a file
//! edit's path, a shell command's writes and the processes it signals ([`crate::shell`] reads it as a
//! shell would), anything else's paths; and a call that would write, move, delete or change the mode of
//! a guarded path ([`Places`], the settings and `[protect] paths`), or stop or kill the daemon, is
//! refused, its record naming [`PROTECT_HOOK`]. Reads go on. What it cannot see (a command disguised, a
//! script that writes the file) is said in docs/security.md: the defence behind it is the journal of
//! every weakening reload, the socket unit that restarts a killed daemon, and a fail-closed relay.

mod judge;
mod paths;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::moment;
use crate::settings::Settings;

pub use paths::Guarded;

/// The name the record and the response give hookd's own refusal, as a hook's name: the prefix is kept
/// from the settings' hooks (`settings::parse`), so it can only be hookd's.
pub const PROTECT_HOOK: &str = "hookd:protect";

/// The moments before a tool runs, where a refusal holds the call back.
pub const GUARDED_MOMENTS: &[&str] = &[
    moment::PRE_TOOL_USE,
    moment::PERMISSION_REQUEST,
    moment::PRE_SKILL_SHELL_COMMAND,
];

/// What the daemon knows of where it lives, beyond the settings: what the guard keeps besides them.
#[derive(Debug, Clone, Default)]
pub struct Places {
    /// The socket the daemon listens on (its folder is guarded whole: the runtime folder).
    pub socket: Option<PathBuf>,
    /// The record's folder (journal, spool) and anything else hookd keeps.
    pub state_dir: Option<PathBuf>,
    /// The folder of the user's systemd units, where `hookd install` writes hookd's.
    pub units_dir: Option<PathBuf>,
    /// The agents' settings files that hold (or may hold) the relay, each with its agent's name.
    pub agent_files: Vec<(String, PathBuf)>,
    /// The files `hookd setup` wrote the relay into, from its registry (`agents::setups`): a project's
    /// `.github/hooks/hookd.json`, a file given by `--file`.
    pub set_up_files: Vec<PathBuf>,
    /// hookd's own programs: the daemon and the relays beside it.
    pub programs: Vec<PathBuf>,
    /// The daemon's process, which no call may signal.
    pub daemon_pid: Option<i32>,
    /// The daemon's command line, for `pkill -f`.
    pub daemon_command_line: String,
    /// The home folder and the variables a command line may name paths by (`HOME`, `XDG_*`).
    pub home: PathBuf,
    pub vars: Vec<(String, String)>,
}

impl Places {
    /// The places of this user as hookd finds them when nothing else is said: the default socket, the
    /// state folder, the units folder, this program and its relays, the home folder and its variables.
    /// The daemon adds what only it knows (`daemon_pid`, the socket it really serves, the agents' files).
    pub fn of_this_user() -> Places {
        let programs = std::env::current_exe()
            .ok()
            .map(|exe| {
                let dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
                let mut programs = vec![exe];
                for sibling in ["hookd", "hookd-relay", "hookd-relay-lite"] {
                    let path = dir.join(sibling);
                    if path.exists() && !programs.contains(&path) {
                        programs.push(path);
                    }
                }
                programs
            })
            .unwrap_or_default();
        let vars = [
            "HOME",
            "USER",
            "LOGNAME",
            "XDG_CONFIG_HOME",
            "XDG_STATE_HOME",
            "XDG_RUNTIME_DIR",
            "XDG_DATA_HOME",
            "XDG_CACHE_HOME",
            "HOOKD_CONFIG",
            "HOOKD_SOCKET",
            "CODEX_HOME",
            "CLAUDE_CONFIG_DIR",
        ]
        .iter()
        .filter_map(|name| {
            let value = std::env::var(name).ok().filter(|v| !v.is_empty())?;
            Some((name.to_string(), value))
        })
        .collect();
        Places {
            socket: Some(crate::paths::default_socket()),
            state_dir: Some(crate::paths::state_dir()),
            units_dir: Some(crate::paths::systemd_user_dir()),
            agent_files: Vec::new(),
            set_up_files: Vec::new(),
            programs,
            daemon_pid: None,
            daemon_command_line: String::new(),
            home: crate::paths::home(),
            vars,
        }
    }
}

/// The guard of one generation of the settings: the guarded paths, made once when the settings are
/// installed, and what a call is judged with.
#[derive(Debug, Default)]
pub struct Shield {
    enabled: bool,
    guarded: Vec<Guarded>,
    /// The settings file, named in every refusal as where the guard is turned off.
    settings_path: PathBuf,
    daemon_pid: Option<i32>,
    daemon_command_line: String,
    env: crate::shell::Env,
    home: PathBuf,
    /// The agents' working folders, resolved a moment ago.
    folders: paths::Folders,
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
            guarded: paths::guarded(settings, places),
            settings_path: settings.path.clone(),
            daemon_pid: places.daemon_pid,
            daemon_command_line: places.daemon_command_line.clone(),
            env,
            home: places.home.clone(),
            folders: paths::Folders::default(),
        }
    }

    /// Whether the guard is on.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The guarded paths, for `status` and `doctor`.
    pub fn guarded(&self) -> &[Guarded] {
        &self.guarded
    }

    /// Why a call at `moment` must be refused, or `None` when it touches nothing of hookd's (or the
    /// guard is off, or the moment is not before a tool runs).
    pub fn judge(&self, moment: &str, event: &Map<String, Value>) -> Option<String> {
        if !self.enabled || !GUARDED_MOMENTS.contains(&moment) {
            return None;
        }
        let touched = judge::judge(self, event)?;
        Some(format!(
            "hookd protects itself: this call would {touched}. An agent may read hookd's files but not change them, nor stop the daemon; if this change is wanted, the user makes it by hand, outside the agent (or turns this guard off by hand in {}: [protect] enabled = false)",
            self.settings_path.display()
        ))
    }
}

#[cfg(test)]
mod tests;
