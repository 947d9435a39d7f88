//! Running a program to completion with a deadline: `hookd` itself, or anything else a test needs.

use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use super::BIN;

/// Runs `hookd ARGS` with `stdin`, waiting at most `timeout`; returns its output.
pub fn run_hookd(args: &[&str], stdin: Option<&str>, timeout: Duration) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    run_with_deadline(cmd, stdin, timeout)
}

/// Spawns `cmd`, trying again while it fails with "text file busy": a program a test has just copied
/// (an older hookd, a hook script) is busy for as long as any process holds it open for writing, and a
/// child another test thread forks in that moment holds the copy's descriptor until it execs.
fn spawn_copied_program(cmd: &mut Command, timeout: Duration) -> std::process::Child {
    let deadline = Instant::now() + timeout;
    loop {
        match cmd.spawn() {
            Ok(child) => return child,
            Err(e) if e.raw_os_error() == Some(26) && Instant::now() < deadline => {
                std::thread::yield_now();
            }
            Err(e) => panic!("spawning {cmd:?}: {e}"),
        }
    }
}

/// Runs a command to completion with `stdin`, killing it and panicking if it outlives `timeout`.
pub fn run_with_deadline(cmd: Command, stdin: Option<&str>, timeout: Duration) -> Output {
    run_with_stdout(cmd, stdin, Stdio::piped(), timeout)
}

/// [`run_with_deadline`] with stdout sent to `stdout`; `Output::stdout` holds what it printed only when
/// that is a pipe. The command is dropped before returning, closing this side's copy of `stdout`.
pub(super) fn run_with_stdout(
    mut cmd: Command,
    stdin: Option<&str>,
    stdout: Stdio,
    timeout: Duration,
) -> Output {
    // A relay's spool never in the user's home: in the test's own folder when it gave one, else in
    // one folder for this test binary.
    if !cmd.get_envs().any(|(key, _)| key == "XDG_STATE_HOME") {
        cmd.env(
            "XDG_STATE_HOME",
            std::env::temp_dir().join(format!("hookd-tests-state-{}", std::process::id())),
        );
    }
    // Nor the user's daemon on the default socket (`hookd setup` asks it to reload): a runtime folder
    // of this test binary's, where no daemon listens, unless the test gave one.
    if !cmd.get_envs().any(|(key, _)| key == "XDG_RUNTIME_DIR") {
        cmd.env(
            "XDG_RUNTIME_DIR",
            std::env::temp_dir().join(format!("hookd-tests-run-{}", std::process::id())),
        );
    }
    cmd.env_remove("HOOKD_SOCKET")
        .env_remove("HOOKD_CONFIG")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(stdout)
        .stderr(Stdio::piped());
    let mut child = spawn_copied_program(&mut cmd, timeout);
    let writer = stdin.map(|text| {
        let mut pipe = child.stdin.take().unwrap();
        let text = text.to_string();
        std::thread::spawn(move || {
            let _ = pipe.write_all(text.as_bytes());
        })
    });
    let out_pipe = child.stdout.take();
    let mut err_pipe = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut pipe) = out_pipe {
            let _ = pipe.read_to_end(&mut buf);
        }
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err_pipe.read_to_end(&mut buf);
        buf
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    if let Some(w) = writer {
        let _ = w.join();
    }
    Output {
        status,
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    }
}

/// The exit code of a finished process, with a message naming the signal if it was killed.
pub fn code(status: &ExitStatus) -> i32 {
    status
        .code()
        .unwrap_or_else(|| panic!("killed by signal {:?}", status.signal()))
}

/// Text of a process's stdout / stderr.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What a relay printed and how it exited, compared whole: `hookd relay`, `hookd-relay` and the static
/// build must answer alike, byte for byte.
#[derive(Debug, PartialEq, Eq)]
pub struct Said {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `program` with `words` then `args` (`["relay"]` first for hookd, none for hookd-relay), `input`
/// on stdin, its spool in `state` (never the user's) and no `HOOKD_SOCKET`, at most `timeout`.
pub fn relay_said(
    program: &str,
    words: &[&str],
    args: &[&str],
    input: &str,
    state: &std::path::Path,
    timeout: Duration,
) -> Said {
    let mut command = Command::new(program);
    command
        .args(words)
        .args(args)
        .env("XDG_STATE_HOME", state)
        .env_remove("HOOKD_SOCKET");
    let out = run_with_deadline(command, Some(input), timeout);
    Said {
        code: code(&out.status),
        stdout: text(&out.stdout),
        stderr: text(&out.stderr),
    }
}

/// The relay's words for `agent` on `socket`, then `extra`, and `--fail-closed` when `closed`.
pub fn relay_words<'a>(
    agent: &'a str,
    socket: &'a str,
    extra: &[&'a str],
    closed: bool,
) -> Vec<&'a str> {
    let mut words = vec!["--agent", agent, "--socket", socket];
    words.extend_from_slice(extra);
    if closed {
        words.push("--fail-closed");
    }
    words
}
