//! `cargo test` never touches the user's own hookd: every program a test starts, the
//! daemon, its hooks, the relays and any other hookd command, finds its daemon, settings and record in
//! folders of the test's own (`common::keep_home`), whatever the environment `cargo test` was run in.
//! Seen from inside: the environment a hook of a test's daemon has, and the one a program run to
//! completion has (`env` in hookd's place). And held in the source: no test starts a hookd program
//! itself without giving it its places.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::common::*;

const T: Duration = Duration::from_secs(30);

/// The variables by which a hookd program finds the user's own places.
fn places() -> Vec<&'static str> {
    PLACES
        .iter()
        .map(|(name, _)| *name)
        .chain(["HOOKD_SOCKET", "HOOKD_CONFIG"])
        .collect()
}

/// `NAME=VALUE` lines into a map.
fn parse_env(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Each of [`places`] in `env` is set, and inside `folder`.
fn all_inside(env: &HashMap<String, String>, folder: &Path) {
    for name in places() {
        let value = env
            .get(name)
            .unwrap_or_else(|| panic!("{name} is not set: {env:?}"));
        assert!(
            Path::new(value).starts_with(folder),
            "{name}={value} is not in the test's folder {}",
            folder.display()
        );
    }
}

#[test]
fn the_daemon_and_its_hooks_have_the_tests_places() {
    let d = Daemon::with_scripts(
        &[("env.sh", "env > @DIR@/env.txt")],
        "[[hooks.PreToolUse]]\nname = \"env\"\ncommand = \"@DIR@/env.sh\"\n",
    );
    d.fire("PreToolUse", bash_event());
    let env = parse_env(&d.sb.read("env.txt"));
    all_inside(&env, d.sb.path());
    assert_eq!(env["HOOKD_SOCKET"], d.socket.to_str().unwrap());
    assert_eq!(env["HOOKD_CONFIG"], d.config.to_str().unwrap());
    assert_eq!(
        Path::new(&env["XDG_STATE_HOME"]),
        state_home_for(&d.socket),
        "the journal beside the socket"
    );
    for name in AGENTS_PLACES {
        assert!(!env.contains_key(name), "{name} is the user's: {env:?}");
    }
}

#[test]
fn a_program_run_to_completion_has_the_tests_places() {
    let out = run_with_deadline(Command::new("env"), None, T);
    let env = parse_env(&text(&out.stdout));
    let folder = this_tests_folder();
    all_inside(&env, &folder);
    assert_eq!(
        Path::new(&env["HOOKD_SOCKET"]),
        folder.join("runtime/hookd/hookd.sock"),
        "where hookd would find it from $XDG_RUNTIME_DIR"
    );
    // Each test its own: another thread (another test) has another folder.
    let other = std::thread::spawn(this_tests_folder).join().unwrap();
    assert_ne!(other, folder);
}

/// The command line `/proc` shows for `pid`, a word a line.
fn command_line(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap()
        .split(|b| *b == 0)
        .filter(|word| !word.is_empty())
        .map(|word| String::from_utf8_lossy(word).into_owned())
        .collect()
}

/// How many times `words` name a managed layer, and whether the one they name is `dir`.
fn managed_named(words: &[String], dir: &str) -> (usize, bool) {
    let at: Vec<usize> = words
        .iter()
        .enumerate()
        .filter(|(_, word)| *word == "--managed")
        .map(|(n, _)| n)
        .collect();
    let is_dir = at
        .first()
        .is_some_and(|n| words.get(n + 1).is_some_and(|word| word == dir));
    (at.len(), is_dir)
}

#[test]
fn no_daemon_nor_check_of_a_test_reads_the_machines_managed_layer() {
    // A test's daemon, whichever helper starts it, names a managed layer no machine has...
    let d = Daemon::with_scripts(&[], "# none\n");
    assert_eq!(
        managed_named(&command_line(d.pid()), NO_MANAGED_LAYER),
        (1, true),
        "{:?}",
        command_line(d.pid())
    );
    let sb = Sandbox::new();
    sb.settings("# none\n");
    let by_hand = serve_command(&sb, "by-hand.log");
    let words: Vec<String> = by_hand
        .get_args()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        managed_named(&words, NO_MANAGED_LAYER),
        (1, true),
        "{words:?}"
    );
    // ... or the one its test names, once.
    let dir = sb.p("managed");
    std::fs::create_dir_all(&dir).unwrap();
    let managed = Daemon::start_managed(Sandbox::new(), &dir);
    assert_eq!(
        managed_named(&command_line(managed.pid()), dir.to_str().unwrap()),
        (1, true)
    );
    // `hookd check` run to completion: a stand-in named hookd that prints its words.
    std::fs::create_dir_all(sb.p("bin")).unwrap();
    let stand_in = sb.p("bin/hookd");
    std::fs::write(&stand_in, "#!/bin/sh\nprintf '%s\\n' \"$@\"\n").unwrap();
    std::fs::set_permissions(
        &stand_in,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let said = |args: &[&str]| -> Vec<String> {
        let mut cmd = Command::new(&stand_in);
        cmd.args(args);
        let out = run_with_deadline(cmd, None, T);
        text(&out.stdout).lines().map(String::from).collect()
    };
    let words = said(&["check", "--config", "x.toml"]);
    assert_eq!(
        managed_named(&words, NO_MANAGED_LAYER),
        (1, true),
        "{words:?}"
    );
    let words = said(&["check", "--managed", "mine"]);
    assert_eq!(managed_named(&words, "mine"), (1, true), "{words:?}");
    // A command that reads no managed layer is left as it is.
    let words = said(&["status"]);
    assert_eq!(
        managed_named(&words, NO_MANAGED_LAYER),
        (0, false),
        "{words:?}"
    );
}

#[test]
fn the_places_a_test_names_are_kept_and_the_rest_follow_them() {
    let sb = Sandbox::new();
    let mut cmd = Command::new("env");
    cmd.env("XDG_RUNTIME_DIR", sb.p("xdg"))
        .env("HOME", sb.p("home"))
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_CACHE_HOME");
    let env = parse_env(&text(&run_with_deadline(cmd, None, T).stdout));
    assert_eq!(Path::new(&env["XDG_RUNTIME_DIR"]), sb.p("xdg"));
    assert_eq!(Path::new(&env["HOME"]), sb.p("home"));
    assert!(!env.contains_key("XDG_CONFIG_HOME") && !env.contains_key("XDG_CACHE_HOME"));
    // hookd's own defaults from what the test gave: the same paths, never a fixed fallback.
    assert_eq!(
        Path::new(&env["HOOKD_SOCKET"]),
        sb.p("xdg/hookd/hookd.sock")
    );
    assert_eq!(
        Path::new(&env["HOOKD_CONFIG"]),
        sb.p("home/.config/hookd/hooks.toml")
    );
}

#[test]
fn hookd_without_a_socket_of_the_tests_own_is_not_started() {
    // Both variables removed and no --socket: hookd would look in /run/user/$UID or /tmp/hookd-$UID,
    // the user's own daemon's places.
    let mut relay = Command::new(BIN);
    relay
        .args(["relay", "--agent", "claude-code"])
        .env_remove("HOOKD_SOCKET")
        .env("XDG_RUNTIME_DIR", "");
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        keep_home(&mut relay, &this_tests_folder())
    }));
    let said = refused.expect_err("a relay that would find the user's daemon was let start");
    let said = said.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(said.contains("/tmp/hookd-$UID"), "{said}");

    // The user's own home given as it is: refused too.
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        let mut check = Command::new(BIN);
        check.arg("check").env("HOME", home);
        let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            keep_home(&mut check, &this_tests_folder())
        }));
        assert!(
            refused.is_err(),
            "hookd with the user's own HOME was let start"
        );
    }

    // With a socket named, or inside a mount namespace of its own, the fallback is allowed.
    let mut named = Command::new(BIN);
    named
        .args([
            "relay",
            "--agent",
            "claude-code",
            "--socket",
            "/nonexistent/s",
        ])
        .env_remove("HOOKD_SOCKET")
        .env_remove("XDG_RUNTIME_DIR");
    keep_home(&mut named, &this_tests_folder());
}

#[test]
fn a_private_tmp_hides_the_users_tmp_and_run_user() {
    let mut ls = Command::new("/bin/sh");
    ls.args(["-c", "ls -A /tmp; ls -A /run/user 2>/dev/null; true"]);
    let Some(hidden) = in_private_tmp(&ls) else {
        if !require(
            false,
            "no mount namespace of the test's own: the relays' fixed fallback goes untested",
        ) {
            return;
        }
        unreachable!();
    };
    let out = run_with_deadline(hidden, None, T);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "", "/tmp or /run/user is not empty");
    // And outside it, /tmp is as it was: this test's own folder is there.
    assert!(this_tests_folder().exists());
}

/// The `.rs` files of the integration tests and the bench (which starts daemons too), `common/` left out
/// (its helpers are the ones that give the places), and this file (which names the words it looks for).
fn test_sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = vec![root.join("benches/fire.rs")];
    let mut folders = vec![root.join("tests/it")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with("common") {
                    folders.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("isolation.rs")
            {
                found.push(path);
            }
        }
    }
    found
}

/// The words by which a test names a hookd program to start.
const HOOKD_PROGRAMS: &[&str] = &[
    "BIN",
    "RELAY_BIN",
    "lite()",
    "lite_relay()",
    "hookd_installed_with_lite()",
    "\"hookd\"",
    "join(\"hookd\")",
    "join(\"hookd-relay\")",
    "join(\"hookd-relay-lite\")",
];

/// The calls that start a program there and then, past the helpers that run one to completion
/// (`run_with_deadline` and those built on it) and those that start the daemon (`serve_command*`).
const STARTS: &[&str] = &[".spawn()", ".output()"];

/// The source cut into functions: each piece from one `fn` line to the next (nested functions and
/// closures go with the function they are in).
fn functions(text: &str) -> Vec<(usize, String)> {
    let mut pieces: Vec<(usize, String)> = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default().trim_start();
        let starts = ["fn ", "pub fn ", "pub(crate) fn ", "pub(super) fn "]
            .iter()
            .any(|p| code.starts_with(p));
        if starts || pieces.is_empty() {
            pieces.push((number + 1, String::new()));
        }
        let piece = &mut pieces.last_mut().unwrap().1;
        piece.push_str(line.split("//").next().unwrap_or_default());
        piece.push('\n');
    }
    pieces
}

#[test]
fn no_test_starts_a_hookd_program_without_its_places() {
    let mut found = Vec::new();
    for path in test_sources() {
        let text = std::fs::read_to_string(&path).unwrap();
        for (line, body) in functions(&text) {
            let names_hookd = HOOKD_PROGRAMS.iter().any(|word| {
                body.match_indices(word).any(|(at, _)| {
                    // `BIN` as a word, not a part of `RELAY_BIN` or `BINARY`.
                    let before = body[..at].chars().next_back();
                    let after = body[at + word.len()..].chars().next();
                    let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                    !(word.chars().all(|c| c.is_alphanumeric() || c == '_')
                        && (part(before) || part(after)))
                })
            });
            let starts = STARTS.iter().any(|call| body.contains(call));
            let kept = ["keep_home(", "daemons_places(", "serve_command"]
                .iter()
                .any(|helper| body.contains(helper));
            if names_hookd && starts && !kept {
                found.push(format!("{}:{line}", path.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "these functions start a hookd program themselves without `keep_home` (the user's own \
         daemon, settings and journal are in reach): run it through `run_with_deadline`, or call \
         `keep_home` on it first:\n{}",
        found.join("\n")
    );
}
