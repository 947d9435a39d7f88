//! The event a command reads from its user, for `hookd fire` and `hookd test` alike: its bytes from stdin
//! or a file, bounded, never empty; and hookd's own event read from them as the daemon reads one.

use std::io::{IsTerminal, Read};
use std::path::Path;

use serde_json::Value;

use crate::limits::{LARGE_LINE, MAX_EVENT, MAX_LINE};
use crate::protocol::Event;

/// The event's bytes, from `file` or else stdin. Empty (or only white space) is an error, never an
/// empty event: a pipe that lost its writer must not pass for an event with nothing in it.
pub fn read_event(file: Option<&Path>) -> Result<Vec<u8>, String> {
    let mut input = Vec::new();
    let (read, from) = match file {
        Some(file) => {
            let opened = std::fs::File::open(file)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            let read = opened.take(MAX_LINE as u64 + 1).read_to_end(&mut input);
            (read, format!("in {}", file.display()))
        }
        None => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                eprintln!("hookd: reading the event on stdin (end it with Ctrl-D)");
            }
            let read = stdin
                .lock()
                .take(MAX_LINE as u64 + 1)
                .read_to_end(&mut input);
            (read, "on stdin".to_string())
        }
    };
    read.map_err(|e| format!("cannot read the event {from}: {e}"))?;
    if input.trim_ascii().is_empty() {
        return Err(format!("no event {from}"));
    }
    if input.len() > MAX_LINE {
        return Err(format!(
            "the event {from} is larger than hookd takes ({} MiB)",
            MAX_LINE >> 20
        ));
    }
    Ok(input)
}

/// hookd's own event (as `hookd fire` sends it): a JSON object, read as the daemon reads it.
pub fn own_event(input: &[u8]) -> Result<Event, String> {
    if input.len() > MAX_EVENT {
        return Err(format!(
            "the event is larger than hookd takes ({} MiB)",
            MAX_EVENT >> 20
        ));
    }
    let value =
        crate::protocol::head::parse(input).map_err(|e| format!("the event is not JSON: {e}"))?;
    let Value::Object(fields) = value else {
        return Err("the event must be a JSON object".into());
    };
    let mut event = Event::from(fields);
    event.large = input.len() > LARGE_LINE;
    Ok(event)
}
