//! The user's own places kept out of every program a test starts. hookd finds the user's daemon, settings
//! and record through the environment: `$HOOKD_SOCKET`, else `$XDG_RUNTIME_DIR/hookd/hookd.sock`, else a
//! fixed fallback (`/tmp/hookd-$UID`, and soon `/run/user/$UID` before it); `$HOOKD_CONFIG`, else
//! `$XDG_CONFIG_HOME`, else `~/.config`; the journal and the relay's spool in `$XDG_STATE_HOME`, else
//! `~/.local/state`; `hookd setup` edits the agents' files under `$HOME` or their own variables. A test
//! that inherited these from `cargo test` fired into the user's running daemon and wrote into the user's
//! journal.
//!
//! So every program the helpers start goes through [`keep_home`]: each of those variables the test does
//! not set (or remove) itself points into a folder of the test's own, and a hookd program left with a way
//! to the user's places panics before it starts. The daemon's folder is its socket's
//! ([`super::serve_command_at`]); a program run to completion gets its thread's ([`this_tests_folder`]:
//! each test runs on a thread of its own). tests/it/isolation.rs holds it.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

/// The folders a program finds through the environment, each with the name of its stand-in in the
/// test's folder.
pub const PLACES: [(&str, &str); 5] = [
    ("HOME", "home"),
    ("XDG_RUNTIME_DIR", "runtime"),
    ("XDG_STATE_HOME", "state"),
    ("XDG_CONFIG_HOME", "config"),
    ("XDG_CACHE_HOME", "cache"),
];

/// The agents' own variables, which name the user's agent settings (`hookd setup` edits them): removed
/// unless the test names its own.
pub const AGENTS_PLACES: [&str; 5] = [
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "QWEN_HOME",
    "COPILOT_HOME",
];

thread_local! {
    /// This thread's folder, made on first use and removed when the thread ends (with its test).
    static THIS_TESTS: TempDir = tempfile::Builder::new()
        .prefix("hookd-test-places-")
        .tempdir()
        .expect("creating a temp dir");
}

/// The folder of the test running on this thread: the places of the programs it runs to completion.
pub fn this_tests_folder() -> PathBuf {
    THIS_TESTS.with(|dir| dir.path().to_path_buf())
}

/// What `cmd` says of `name`: `None` when it leaves it to the environment it inherits, `Some(None)` when
/// it removes it, `Some(Some(value))` when it sets it.
fn given(cmd: &Command, name: &str) -> Option<Option<OsString>> {
    cmd.get_envs()
        .find(|(key, _)| *key == OsStr::new(name))
        .map(|(_, value)| value.map(OsStr::to_os_string))
}

/// The value `cmd` sets `name` to, when it sets it to something.
fn set_to(cmd: &Command, name: &str) -> Option<PathBuf> {
    given(cmd, name)
        .flatten()
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
}

/// Points every place `cmd` does not name itself into `folder` (see [`PLACES`]: `HOME` is `folder/home`,
/// `XDG_RUNTIME_DIR` `folder/runtime`, ...), removes the agents' variables it does not name, and sets
/// `HOOKD_SOCKET` and `HOOKD_CONFIG`, unless it names them, to where hookd would find them from the
/// variables it then has, a path in `folder` where it would fall back to a fixed one. A variable the test
/// set or removed itself is left as it is: the tests of the fallbacks remove them on purpose.
///
/// Panics when `cmd` runs a hookd program that could still reach the user's places (see
/// [`reaches_the_users_places`]).
pub fn keep_home(cmd: &mut Command, folder: &Path) {
    for (name, stand_in) in PLACES {
        if given(cmd, name).is_none() {
            cmd.env(name, folder.join(stand_in));
        }
    }
    for name in AGENTS_PLACES {
        if given(cmd, name).is_none() {
            cmd.env_remove(name);
        }
    }
    if given(cmd, "HOOKD_SOCKET").is_none() {
        let runtime = set_to(cmd, "XDG_RUNTIME_DIR").unwrap_or_else(|| folder.join("runtime"));
        cmd.env("HOOKD_SOCKET", runtime.join("hookd/hookd.sock"));
    }
    if given(cmd, "HOOKD_CONFIG").is_none() {
        let config = set_to(cmd, "XDG_CONFIG_HOME")
            .or_else(|| set_to(cmd, "HOME").map(|home| home.join(".config")))
            .unwrap_or_else(|| folder.join("config"));
        cmd.env("HOOKD_CONFIG", config.join("hookd/hooks.toml"));
    }
    // The machine's managed layer is a place of the machine's, not the test's.
    without_the_machines_managed_layer(cmd);
    if let Some(why) = reaches_the_users_places(cmd) {
        panic!("{cmd:?} {why}: give it a place in the test's folder");
    }
}

/// A managed layer's folder that no machine has, whose every folder on the way is root's (`/`): read
/// as an empty layer by root and by a user alike, where a folder of the test's own would be refused to
/// a user (the layer must be root's).
pub const NO_MANAGED_LAYER: &str = "/nonexistent/hookd-tests-have-no-managed-layer";

/// `--managed` [`NO_MANAGED_LAYER`] for a hookd command that reads the managed layer (`serve`,
/// `check`) unless it names one of its own: a test's daemon never reads the machine's own `/etc/hookd`
/// (a team's hooks would run on the test's events), and a test's `check` never shows its hooks.
/// [`keep_home`] calls it for every hookd program a test starts; a program started through another
/// (`sh -c`, `systemd-socket-activate`) calls it itself.
pub fn without_the_machines_managed_layer(cmd: &mut Command) {
    // The command's own first word, or the word after a hookd program another one starts.
    let program = cmd.get_program().to_string_lossy().into_owned();
    let words: Vec<String> = std::iter::once(program)
        .chain(cmd.get_args().map(|arg| arg.to_string_lossy().into_owned()))
        .collect();
    let reads_it = words.windows(2).any(|pair| {
        let names_hookd = Path::new(&pair[0])
            .file_name()
            .is_some_and(|name| name.to_string_lossy() == "hookd");
        names_hookd && (pair[1] == "serve" || pair[1] == "check")
    });
    let names_one = cmd
        .get_args()
        .any(|arg| arg == "--managed" || arg.to_string_lossy().starts_with("--managed="));
    if reads_it && !names_one {
        cmd.arg("--managed").arg(NO_MANAGED_LAYER);
    }
}

/// The variables a toolchain finds the user's own setup through: its home, its caches, rustup's and
/// cargo's folders, npm's settings.
const TOOLCHAINS_PLACES: [&str; 6] = [
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "NPM_CONFIG_USERCONFIG",
];

/// Gives `cmd`, a toolchain a test needs (cargo building the lite relay, npm installing an agent), the
/// user's own home and caches as this process has them, which [`keep_home`] then leaves as they are: it
/// needs the user's setup (rustup's toolchains, npm's registry), and it starts no hookd program.
pub fn the_users_toolchain(cmd: &mut Command) {
    for name in TOOLCHAINS_PLACES {
        match std::env::var_os(name) {
            Some(value) => cmd.env(name, value),
            None => cmd.env_remove(name),
        };
    }
}

/// Whether `cmd` is a hookd program (`hookd`, `hookd-relay`, `hookd-relay-lite`, or a copy of one).
fn is_hookd(cmd: &Command) -> bool {
    Path::new(cmd.get_program())
        .file_name()
        .and_then(OsStr::to_str)
        .is_some_and(|name| name.starts_with("hookd"))
}

/// How a hookd program `cmd` would reach the user's own places, if it would: a place set to the one this
/// test process has (the user's, under `cargo test`), or the variables that lead to a place all removed
/// so that hookd falls back to a fixed one (the socket in `/tmp/hookd-$UID` or `/run/user/$UID`, the home
/// folder from the password database). `None` for any other program: one that wraps hookd in a private
/// mount namespace ([`in_private_tmp`]) may remove them all.
pub fn reaches_the_users_places(cmd: &Command) -> Option<String> {
    if !is_hookd(cmd) {
        return None;
    }
    for (name, _) in PLACES
        .iter()
        .chain(&[("HOOKD_SOCKET", ""), ("HOOKD_CONFIG", "")])
    {
        let own = std::env::var_os(name).filter(|value| !value.is_empty());
        if own.is_some() && set_to(cmd, name) == own.map(PathBuf::from) {
            return Some(format!("has ${name} as the user has it"));
        }
    }
    let names_socket = cmd
        .get_args()
        .any(|arg| arg.to_string_lossy().starts_with("--socket"));
    if !names_socket
        && set_to(cmd, "HOOKD_SOCKET").is_none()
        && set_to(cmd, "XDG_RUNTIME_DIR").is_none()
    {
        return Some(
            "has neither $HOOKD_SOCKET nor $XDG_RUNTIME_DIR nor --socket, and would look for the \
             user's own daemon in /run/user/$UID or /tmp/hookd-$UID"
                .into(),
        );
    }
    if set_to(cmd, "HOME").is_none() {
        for place in ["XDG_STATE_HOME", "XDG_CONFIG_HOME"] {
            if set_to(cmd, place).is_none() {
                return Some(format!(
                    "has neither $HOME nor ${place}, and would find the user's home folder in the \
                     password database"
                ));
            }
        }
    }
    None
}

/// `cmd` run where `/tmp` and `/run/user` are empty folders of its own: in a mount namespace of its own
/// (a user namespace too unless this process is root) with a fresh tmpfs over each, so that what hookd
/// falls back to there (`/tmp/hookd-$UID`, `/run/user/$UID`) is never the user's. `None` where this
/// process cannot make one, or where the program itself lives under `/tmp` and would be hidden. The
/// environment and folder of `cmd` are carried over; the test's own folder under `/tmp` is hidden too.
pub fn in_private_tmp(cmd: &Command) -> Option<Command> {
    let program = Path::new(cmd.get_program());
    if program.starts_with("/tmp") || program.starts_with("/run/user") {
        return None;
    }
    if !can_hide_tmp() {
        return None;
    }
    let mut wrapped = unshare();
    wrapped
        .args(["sh", "-c", HIDE_TMP, "sh"])
        .arg(program)
        .args(cmd.get_args());
    for (name, value) in cmd.get_envs() {
        match value {
            Some(value) => wrapped.env(name, value),
            None => wrapped.env_remove(name),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    Some(wrapped)
}

/// The shell words that hide `/tmp` and `/run/user` (where there is one), then run the program given.
const HIDE_TMP: &str = "mount -t tmpfs hookd-test /tmp && \
     { [ ! -d /run/user ] || mount -t tmpfs hookd-test /run/user; } && exec \"$@\"";

/// `unshare` making a mount namespace whose mounts stay its own, as root or as anyone else.
fn unshare() -> Command {
    let mut cmd = Command::new("unshare");
    if !nix::unistd::geteuid().is_root() {
        cmd.args(["--user", "--map-current-user"]);
    }
    cmd.args(["--mount", "--propagation", "private", "--"]);
    cmd
}

/// Whether [`in_private_tmp`] works here (asked once: unprivileged user namespaces may be off).
fn can_hide_tmp() -> bool {
    static CAN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CAN.get_or_init(|| {
        unshare()
            .args(["sh", "-c", HIDE_TMP, "sh", "true"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    })
}
