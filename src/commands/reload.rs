//! `hookd reload`: the daemon asked to read its settings again; what it did said once, for people as
//! text ([`admin_text`]) or for scripts as the daemon's line.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use crate::commands::shared::{ADMIN_TIMEOUT, for_scripts};
use crate::commands::{admin_text, client};
use crate::protocol::{Asking, ReloadResponse};

/// `hookd reload`: the error said once, as JSON on stdout for scripts or as text on stderr for people.
pub fn reload(socket: &Path, people: Option<bool>) -> Result<ExitCode, String> {
    let response = client::request(socket, &Asking::Reload { id: 1 }, Some(ADMIN_TIMEOUT))?;
    let read = response.read::<ReloadResponse>()?;
    let Some(colour) = people else {
        return Ok(for_scripts(&response.line, read.is_ok()));
    };
    match read {
        Ok(reloaded) => {
            print!("{}", admin_text::reloaded(reloaded.generation, colour));
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            let colour = colour && std::io::stderr().is_terminal();
            eprint!("{}", admin_text::reload_refused(&error, colour));
            Ok(ExitCode::FAILURE)
        }
    }
}
