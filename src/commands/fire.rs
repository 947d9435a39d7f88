//! `hookd fire`: fires a moment at the daemon with the event read on stdin. For scripts (stdout not a
//! terminal, or `--json`) it prints the daemon's response line as it came; for a person at a terminal,
//! the verdict as text ([`crate::commands::answer_text`]). The exit status is the same either way, and
//! an error is said on stderr either way.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use crate::commands::shared::{EXIT_REFUSED, error_message, misspelt_agent};
use crate::commands::{answer_text, client, style};
use crate::protocol::Asking;

/// What `fire` was told on its command line.
pub struct Options<'a> {
    pub socket: &'a Path,
    pub moment: String,
    pub agent: Option<String>,
    pub json: bool,
}

pub fn fire(options: Options<'_>) -> Result<ExitCode, String> {
    // Before the event is read: a misspelt agent is the caller's mistake, whatever the event.
    misspelt_agent(options.agent.as_deref())?;
    let input = crate::commands::event_input::read_event(None)?;
    let event = crate::commands::event_input::own_event(&input)?;
    let request = Asking::Fire {
        id: 1,
        moment: &options.moment,
        agent: options.agent.as_deref(),
        event: &event.fields,
        undecidable: None,
        fail_closed: false,
        source: None,
    };
    let response = client::request(options.socket, &request, None)?;
    let terminal = std::io::stdout().is_terminal();
    let fired = response.read_fire()?;
    if options.json || !terminal {
        // For scripts the response line, whatever it holds; an error is said on stderr too, for the
        // person reading the script's log, who would otherwise find only a JSON line in its output.
        println!("{}", response.line);
        return match fired {
            Ok(fired) if fired.refused => Ok(ExitCode::from(EXIT_REFUSED)),
            Ok(_) => Ok(ExitCode::SUCCESS),
            Err(error) => Err(error_message(&error)),
        };
    }
    match fired {
        Ok(fired) => {
            print!(
                "{}",
                answer_text::verdict(&fired, None, style::colour_wanted(terminal))
            );
            Ok(if fired.refused {
                ExitCode::from(EXIT_REFUSED)
            } else {
                ExitCode::SUCCESS
            })
        }
        Err(error) => Err(error_message(&error)),
    }
}
