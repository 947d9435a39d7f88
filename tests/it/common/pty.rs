//! Running a program with its stdout on a pseudo-terminal, as a person at a terminal runs it: what a
//! command prints for people (tables, colour) is only printed there.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use super::run_with_stdout;

/// Runs `cmd` with stdout on a fresh pseudo-terminal (stdin and stderr as
/// [`super::run_with_deadline`] sets them), waiting at most `timeout`. `Output::stdout` is what the terminal showed, with the terminal's
/// `\r\n` turned back into `\n`. `NO_COLOR` is removed unless the caller set it.
pub fn run_on_terminal(cmd: Command, stdin: Option<&str>, timeout: Duration) -> Output {
    run_on_terminal_of(cmd, stdin, timeout, None)
}

/// [`run_on_terminal`] on a terminal `columns` wide (with none, a terminal that says no size, as a
/// fresh pseudo-terminal does).
pub fn run_on_terminal_of(
    mut cmd: Command,
    stdin: Option<&str>,
    timeout: Duration,
    columns: Option<u16>,
) -> Output {
    let size = columns.map(|columns| nix::pty::Winsize {
        ws_row: 50,
        ws_col: columns,
        ws_xpixel: 0,
        ws_ypixel: 0,
    });
    let pty = nix::pty::openpty(size.as_ref(), None).expect("openpty");
    let master: OwnedFd = pty.master;
    let slave: OwnedFd = pty.slave;
    if !cmd.get_envs().any(|(key, _)| key == "NO_COLOR") {
        cmd.env_remove("NO_COLOR");
    }
    // The reader drains the terminal while the program runs (a full terminal buffer would block it) and
    // ends at EIO, once the program and every copy of the terminal's other end are gone.
    let reader = std::thread::spawn(move || {
        let mut file = std::fs::File::from(master);
        let mut shown = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match file.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => shown.extend_from_slice(&buf[..n]),
            }
        }
        shown
    });
    let mut out = run_with_stdout(cmd, stdin, Stdio::from(slave), timeout);
    let shown = reader.join().unwrap();
    out.stdout = String::from_utf8_lossy(&shown)
        .replace("\r\n", "\n")
        .into_bytes();
    out
}
