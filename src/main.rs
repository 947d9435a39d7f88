use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;
use hookd::commands::cli::{Cli, Command};

fn main() -> ExitCode {
    let mut args = std::env::args_os();
    let program = args.next().unwrap_or_default();
    let mut words: Vec<OsString> = args.collect();
    if std::path::Path::new(&program)
        .file_name()
        .is_some_and(|name| name == hookd::agents::snippet::RELAY_PROGRAM)
    {
        // Started as `hookd-relay` (a link to this binary, or a copy, where the relay's own program was
        // to be): what `setup` writes then runs the relay, not a command line hookd cannot read, which
        // every agent but Copilot would take for a failed hook and go on, each call unwatched.
        words.insert(0, OsString::from("relay"));
    }
    if words.first().is_some_and(|word| word == "relay") {
        // Started by an agent for every tool call: read and carried out without building every
        // command's definition first; `--print-settings` comes back here, to `run`.
        return hookd::commands::relay_main(&words, |args| {
            hookd::commands::output::with_stdout_written(hookd::commands::run(Command::Relay(args)))
        });
    }
    let parsed = Cli::try_parse_from(std::iter::once(program).chain(words)).map(|cli| cli.command);
    let command = match parsed {
        Ok(command) => command,
        Err(e) => {
            let _ = e.print();
            // Usage errors exit 1, not clap's 2: to `hookd fire`, 2 means "refused".
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => ExitCode::SUCCESS,
                _ => ExitCode::FAILURE,
            };
        }
    };
    finish(hookd::commands::run(command))
}

/// A command's outcome as the exit status; its error said on stderr, and so is a stdout that could not
/// be written (a reader that left early is no error: the command ends quietly, with its own status).
fn finish(outcome: Result<ExitCode, String>) -> ExitCode {
    use hookd::commands::output::{Stream, print, with_stdout_written};
    match with_stdout_written(outcome) {
        Ok(code) => code,
        Err(message) => {
            print(Stream::Err, format_args!("hookd: {message}\n"));
            ExitCode::FAILURE
        }
    }
}
