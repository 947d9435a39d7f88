//! Where the settings file and the socket are when no flag says (docs/commands.md, "Where things are"): the flag, then the
//! environment variable, then the XDG folder, then a fixed fallback.

use std::path::PathBuf;

/// `$HOOKD_CONFIG`, else `$XDG_CONFIG_HOME/hookd/hooks.toml`, else `~/.config/hookd/hooks.toml`.
pub fn default_config() -> PathBuf {
    if let Some(path) = non_empty_var("HOOKD_CONFIG") {
        return path.into();
    }
    if let Some(dir) = non_empty_var("XDG_CONFIG_HOME") {
        return PathBuf::from(dir).join("hookd/hooks.toml");
    }
    home().join(".config/hookd/hooks.toml")
}

/// `$HOOKD_SOCKET`, else `$XDG_RUNTIME_DIR/hookd/hookd.sock`, else `/tmp/hookd-$UID/hookd.sock`.
pub fn default_socket() -> PathBuf {
    if let Some(path) = non_empty_var("HOOKD_SOCKET") {
        return path.into();
    }
    if let Some(dir) = non_empty_var("XDG_RUNTIME_DIR") {
        return PathBuf::from(dir).join("hookd/hookd.sock");
    }
    PathBuf::from(format!("/tmp/hookd-{}/hookd.sock", nix::unistd::getuid()))
}

/// Where systemd looks for the user's own units: `$XDG_CONFIG_HOME/systemd/user`, else
/// `~/.config/systemd/user`.
pub fn systemd_user_dir() -> PathBuf {
    match non_empty_var("XDG_CONFIG_HOME") {
        Some(dir) => PathBuf::from(dir).join("systemd/user"),
        None => home().join(".config/systemd/user"),
    }
}

fn non_empty_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The user's home folder: `$HOME`, else the password database's entry.
pub fn home() -> PathBuf {
    if let Some(home) = non_empty_var("HOME") {
        return home.into();
    }
    nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map_or_else(|| PathBuf::from("/"), |user| user.dir)
}

/// Where hookd keeps its record (the journal, the relay's spool): `$XDG_STATE_HOME/hookd`, else
/// `~/.local/state/hookd`.
pub fn state_dir() -> PathBuf {
    match non_empty_var("XDG_STATE_HOME") {
        Some(dir) => PathBuf::from(dir).join("hookd"),
        None => home().join(".local/state/hookd"),
    }
}
