//! Prerequisites: what a test needs from the machine (a program, a kernel feature) and cannot set up
//! itself.
//!
//! The rule: a test whose prerequisite is missing never passes quietly.
//! - In CI it FAILS, naming what is missing. CI is `HOOKD_TESTS_STRICT` or `CI` set to anything but
//!   empty, `0` or `false`; `.ci/run` sets `HOOKD_TESTS_STRICT=1`, and most CI services set `CI=true`.
//!   Running as root is not taken as a sign of CI: developers' containers run as root too.
//! - Elsewhere (a developer's machine without, say, systemd) it is skipped: it prints
//!   `SKIPPED <test>: <why>` straight to the standard error, past the test harness's capture (so it shows
//!   without `--nocapture`, among the `ok` lines), and returns early.
//!
//! A prerequisite is checked with [`require`] at the point the test needs it ([`require_root`] for a test
//! that acts as another user; the real-agent suites check that they can make a network namespace).
//! Programs a test cannot do without at all (setpriv, python3, unshare, npm) are not checked: spawning
//! them fails the test, loudly. So `cargo test` runs as an ordinary user, every test it cannot run
//! listed as SKIPPED; CI runs as root, where none is skipped.

use std::io::Write;

/// Whether missing prerequisites fail the tests (CI) instead of skipping them; see the module's rule.
pub fn strict() -> bool {
    ["HOOKD_TESTS_STRICT", "CI"].iter().any(|var| {
        std::env::var(var)
            .is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false" | "FALSE" | "False"))
    })
}

/// True when `available`; otherwise fails the test in CI, or says `SKIPPED <test>: <why>` and returns
/// false for the test to return early. `why` says what is missing and what goes untested.
#[must_use = "a test must return when its prerequisite is missing"]
pub fn require(available: bool, why: &str) -> bool {
    if available {
        return true;
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    if strict() {
        panic!(
            "{test}: a prerequisite is missing: {why} (in CI, HOOKD_TESTS_STRICT or CI set, a test \
             that cannot run fails)"
        );
    }
    // Straight to the standard error: `eprintln!` would be captured by the harness and shown only on a
    // failure.
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
    false
}

/// [`require`] that the tests run as root: a test that acts as another user (`setpriv`, a file `chown`ed
/// to someone else) cannot run as an ordinary user. `why` says what goes untested.
#[must_use = "a test must return when its prerequisite is missing"]
pub fn require_root(why: &str) -> bool {
    require(
        nix::unistd::geteuid().is_root(),
        &format!("needs root, to act as another user: {why}"),
    )
}

/// Whether `program` is found on `PATH` (as `Command::new` would find it).
pub fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(program))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}
