//! The Python client of live hooks (clients/python/, docs/live-hooks.md): its own tests, run with
//! `python3 -m unittest` against a fake daemon and against this build's `hookd serve` (given as
//! `HOOKD_BIN`), and the example that approves tool calls live (examples/approve_live.py). Run here so
//! that `cargo test`, and CI, run them; strict, so that a test that cannot find the daemon fails rather
//! than skips.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::common::*;

/// A safety net for the whole Python suite (never a speed assertion).
const SUITE: Duration = Duration::from_secs(300);

#[test]
fn the_python_clients_tests_pass_against_this_daemon() {
    let package = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/python");
    let mut cmd = Command::new("python3");
    cmd.args(["-B", "-m", "unittest", "discover", "-v", "-s"])
        .arg(package.join("tests"))
        .current_dir(&package)
        .env("HOOKD_BIN", BIN)
        .env("HOOKD_TESTS_STRICT", "1")
        .env_remove("HOOKD_SOCKET")
        .env_remove("HOOKD_CONFIG");
    keep_home(&mut cmd, &this_tests_folder());
    let out = run_with_deadline(cmd, None, SUITE);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    // unittest writes its report on stderr; shown with --nocapture, and on a failure.
    eprintln!("{stdout}{stderr}");
    assert_eq!(
        code(&out.status),
        0,
        "the Python client's tests failed:\n{stderr}"
    );
    assert!(stderr.contains("\nOK"), "{stderr}");
    assert!(
        !stderr.contains("skipped"),
        "a test was skipped in strict mode:\n{stderr}"
    );
}
