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

/// Where the daemon binds its socket: `$HOOKD_SOCKET`, else `$XDG_RUNTIME_DIR/hookd/hookd.sock`, else
/// `/tmp/hookd-$UID/hookd.sock`. Clients look in more places ([`socket_places`]).
pub fn default_socket() -> PathBuf {
    if let Some(path) = non_empty_var("HOOKD_SOCKET") {
        return path.into();
    }
    if let Some(dir) = non_empty_var("XDG_RUNTIME_DIR") {
        return PathBuf::from(dir).join("hookd/hookd.sock");
    }
    PathBuf::from(format!("/tmp/hookd-{}/hookd.sock", nix::unistd::getuid()))
}

/// Every place a daemon of this user may listen, in the order a client tries them (docs/commands.md,
/// "Where things are"): `$HOOKD_SOCKET` alone when it is set; else `$XDG_RUNTIME_DIR/hookd/hookd.sock`,
/// then `/run/user/$UID/hookd/hookd.sock`, then `/tmp/hookd-$UID/hookd.sock`. The daemon binds the first
/// of those its own environment gives ([`default_socket`]), and a client's environment may differ from
/// the daemon's: an agent started by `su -`, `sudo -u`, cron or an ssh without a login session has no
/// `XDG_RUNTIME_DIR`, and looking in `/tmp` alone it found no daemon where the daemon served
/// (`/run/user/$UID`) and let every call through.
pub fn socket_places() -> Vec<PathBuf> {
    places_for(
        non_empty_var("HOOKD_SOCKET"),
        non_empty_var("XDG_RUNTIME_DIR"),
        nix::unistd::getuid().as_raw(),
    )
}

/// [`socket_places`] for the given `$HOOKD_SOCKET`, `$XDG_RUNTIME_DIR` (unset or empty: `None`) and uid,
/// each place once.
pub fn places_for(
    hookd_socket: Option<String>,
    runtime_dir: Option<String>,
    uid: u32,
) -> Vec<PathBuf> {
    if let Some(path) = hookd_socket {
        return vec![path.into()];
    }
    let mut places: Vec<PathBuf> = Vec::with_capacity(3);
    let runtime = runtime_dir.map(|dir| PathBuf::from(dir).join("hookd/hookd.sock"));
    for place in runtime.into_iter().chain([
        PathBuf::from(format!("/run/user/{uid}/hookd/hookd.sock")),
        PathBuf::from(format!("/tmp/hookd-{uid}/hookd.sock")),
    ]) {
        if !places.contains(&place) {
            places.push(place);
        }
    }
    places
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

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(places: Vec<PathBuf>) -> Vec<String> {
        places.iter().map(|p| p.display().to_string()).collect()
    }

    #[test]
    fn hookd_socket_is_the_only_place_when_set() {
        let places = places_for(Some("/s/x.sock".into()), Some("/run/user/7".into()), 7);
        assert_eq!(shown(places), ["/s/x.sock"]);
    }

    #[test]
    fn without_xdg_runtime_dir_the_client_still_looks_where_a_login_session_puts_it() {
        assert_eq!(
            shown(places_for(None, None, 1000)),
            [
                "/run/user/1000/hookd/hookd.sock",
                "/tmp/hookd-1000/hookd.sock"
            ]
        );
    }

    #[test]
    fn xdg_runtime_dir_comes_first_and_each_place_is_tried_once() {
        assert_eq!(
            shown(places_for(None, Some("/var/rt".into()), 5)),
            [
                "/var/rt/hookd/hookd.sock",
                "/run/user/5/hookd/hookd.sock",
                "/tmp/hookd-5/hookd.sock"
            ]
        );
        assert_eq!(
            shown(places_for(None, Some("/run/user/5".into()), 5)),
            ["/run/user/5/hookd/hookd.sock", "/tmp/hookd-5/hookd.sock"]
        );
    }
}
