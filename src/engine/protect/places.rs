//! What the daemon knows of where it lives, beyond the settings: the places hookd's guard of itself
//! keeps besides them (the socket's folder, the record's, the agents' settings files, the daemon's
//! process), given by the command that starts the daemon.

use std::path::{Path, PathBuf};

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
