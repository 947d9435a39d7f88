use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;

fn main() -> ExitCode {
    let cli = match hookd::commands::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // Usage errors exit 1, not clap's 2: to `hookd fire`, 2 means "refused".
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => ExitCode::SUCCESS,
                _ => ExitCode::FAILURE,
            };
        }
    };
    match hookd::commands::run(cli.command) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("hookd: {message}");
            ExitCode::FAILURE
        }
    }
}
