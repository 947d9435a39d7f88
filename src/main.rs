use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;
use hookd::commands::cli::{Cli, Command, RelayOnly};

fn main() -> ExitCode {
    let parsed = if std::env::args_os()
        .nth(1)
        .is_some_and(|word| word == "relay")
    {
        // Started by an agent for every tool call: parse the relay's options alone, not every command's.
        RelayOnly::try_parse_from(std::env::args_os().skip(1))
            .map(|relay| Command::Relay(relay.args))
    } else {
        Cli::try_parse().map(|cli| cli.command)
    };
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
    match hookd::commands::run(command) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("hookd: {message}");
            ExitCode::FAILURE
        }
    }
}
