//! What a command prints, on stdout and stderr, when the reader has gone.
//!
//! A closed pipe is a normal way for a command's output to end (`hookd log | head`, `hookd check | head
//! -1`): std's `println!` panics then ("failed printing to stdout"), exit 101. hookd keeps Rust's SIGPIPE
//! ignored rather than die of it, since a command killed in the middle of its work (setup between its
//! write and its registry entry, install between two units) would leave it half done. Instead every
//! command prints through the macros defined here, which shadow std's `print!`, `println!`,
//! `eprint!` and `eprintln!` in every command: once a stream's reader has gone, what is printed on it
//! is dropped, the command finishes its work, and it exits with its own status, silently, as cargo and
//! ripgrep do. Any other failed write (a full disk under `> file`) is kept, and `main` says it and exits 1.

// std's printing macros, shadowed for every command (`#[macro_use]` on this module, declared first in
// `commands/mod.rs`): what is printed after the reader has gone is dropped instead of panicking.
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::commands::output::print($crate::commands::output::Stream::Out, format_args!($($arg)*))
    };
}
macro_rules! println {
    () => {
        print!("\n")
    };
    ($($arg:tt)*) => {
        print!("{}\n", format_args!($($arg)*))
    };
}
macro_rules! eprint {
    ($($arg:tt)*) => {
        $crate::commands::output::print($crate::commands::output::Stream::Err, format_args!($($arg)*))
    };
}
macro_rules! eprintln {
    () => {
        eprint!("\n")
    };
    ($($arg:tt)*) => {
        eprint!("{}\n", format_args!($($arg)*))
    };
}

use std::io::Write;
use std::sync::Mutex;

/// The first failed write of stdout that was not a closed pipe, to be said at the end.
static STDOUT_FAILED: Mutex<Option<String>> = Mutex::new(None);

/// Which stream a macro prints on.
#[derive(Debug, Clone, Copy)]
pub enum Stream {
    Out,
    Err,
}

/// Prints `args` on `stream`; a write that fails is dropped (see the module's comment), never a panic.
pub fn print(stream: Stream, args: std::fmt::Arguments<'_>) {
    let written = match stream {
        Stream::Out => std::io::stdout().lock().write_fmt(args),
        Stream::Err => std::io::stderr().lock().write_fmt(args),
    };
    if let Err(e) = written {
        note_failed(stream, &e);
    }
}

/// Writes `bytes` whole on stdout and flushes them; a closed pipe is no error.
pub fn write_stdout(bytes: &[u8]) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("cannot write to stdout: {e}")),
    }
}

/// Keeps a failed write of stdout for [`stdout_failed`], unless it is the reader gone. Stderr's are
/// dropped: there is nowhere left to say them.
fn note_failed(stream: Stream, error: &std::io::Error) {
    if matches!(stream, Stream::Err) || error.kind() == std::io::ErrorKind::BrokenPipe {
        return;
    }
    if let Ok(mut failed) = STDOUT_FAILED.lock() {
        failed.get_or_insert_with(|| error.to_string());
    }
}

/// Why stdout could not be written, when it could not and its reader had not gone: flushed first, so
/// that what std holds back in its buffer counts too.
pub fn stdout_failed() -> Option<String> {
    if let Err(e) = std::io::stdout().lock().flush() {
        note_failed(Stream::Out, &e);
    }
    STDOUT_FAILED.lock().ok().and_then(|failed| failed.clone())
}

/// A command's outcome, made an error when it succeeded but its stdout could not be written (for
/// another reason than a reader gone): a script must not take a success for output it never got.
pub fn with_stdout_written(
    outcome: Result<std::process::ExitCode, String>,
) -> Result<std::process::ExitCode, String> {
    match (outcome, stdout_failed()) {
        (Ok(_), Some(failed)) => Err(format!("cannot write to stdout: {failed}")),
        (outcome, _) => outcome,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_is_no_failure_and_a_full_disk_is() {
        note_failed(
            Stream::Out,
            &std::io::Error::from(std::io::ErrorKind::BrokenPipe),
        );
        note_failed(Stream::Err, &std::io::Error::other("stderr gone"));
        assert_eq!(*STDOUT_FAILED.lock().unwrap(), None);
        note_failed(Stream::Out, &std::io::Error::other("No space left"));
        assert_eq!(
            STDOUT_FAILED.lock().unwrap().as_deref(),
            Some("No space left")
        );
    }
}
