//! `hookd status`: what the daemon says of itself, for people as `systemctl status` shows a service
//! ([`admin_text`]), for scripts as the daemon's line.

use std::path::Path;
use std::process::ExitCode;

use crate::commands::shared::{ADMIN_TIMEOUT, error_message, for_scripts};
use crate::commands::{admin_text, client};
use crate::protocol::{Asking, StatusResponse};

/// `hookd status`; `people` is `Some(colour)` to print for people.
pub fn status(socket: &Path, people: Option<bool>) -> Result<ExitCode, String> {
    let response = client::request(socket, &Asking::Status { id: 1 }, Some(ADMIN_TIMEOUT))?;
    let read = response.read::<StatusResponse>()?;
    let Some(colour) = people else {
        return Ok(for_scripts(&response.line, read.is_ok()));
    };
    match read {
        Ok(status) => {
            // Looked at here, on the daemon's machine as its user: the daemon serves what it read.
            let config = Path::new(&status.config);
            let no_file = (!config.exists()).then(|| admin_text::NoSettingsFile {
                near: crate::settings::near_name(config).map(|near| near.display().to_string()),
            });
            print!(
                "{}",
                admin_text::status(
                    &status,
                    &socket.display().to_string(),
                    no_file.as_ref(),
                    colour
                )
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => Err(error_message(&error)),
    }
}
