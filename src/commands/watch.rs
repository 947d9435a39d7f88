//! `hookd watch`: the record live, through the socket's `watch` request (docs/protocol.md, "watch"):
//! each record the daemon writes that passes the filter, as a table row on a terminal or as the JSON
//! line it is, until interrupted or the daemon stops.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;

use crate::commands::cli::Filter;
use crate::commands::record_text;
use crate::commands::shared::{ADMIN_TIMEOUT, error_message};
use crate::commands::{client, style};
use crate::protocol::{Asking, ErrorKind, ErrorResponse};
use crate::record::Record;

pub fn watch(socket: &Path, filter: &Filter, json: bool) -> Result<ExitCode, String> {
    let filter = filter.to_watch();
    let request = Asking::Watch {
        id: 1,
        filter: &filter,
    };
    let client::Stream { first, mut reader } = client::stream(socket, &request, ADMIN_TIMEOUT)?;
    let started: Value = serde_json::from_str(&first.line).unwrap_or_default();
    if started["watching"] != true {
        return Err(match serde_json::from_value::<ErrorResponse>(started) {
            Ok(error) => error_message(&error),
            Err(_) => format!("hookd did not start the watch: {}", first.line),
        });
    }
    let table = !json && std::io::stdout().is_terminal();
    let colour = style::colour_wanted(table);
    let mut stdout = std::io::stdout().lock();
    let mut show = |text: &str| -> Result<(), std::io::Error> {
        stdout.write_all(text.as_bytes())?;
        stdout.write_all(b"\n")?;
        stdout.flush()
    };
    let ended = |result: std::io::Result<()>| match result {
        Ok(()) => None,
        // The reader left (`hookd watch | head -3`): done, quietly.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Some(Ok(ExitCode::SUCCESS)),
        Err(e) => Some(Err(format!("cannot write to stdout: {e}"))),
    };
    if table && let Some(end) = ended(show(&record_text::header())) {
        return end;
    }
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => {
                return Err(format!(
                    "hookd on {} closed the watch without saying why",
                    socket.display()
                ));
            }
            Ok(_) => {}
            Err(e) => return Err(format!("the watch on {} broke: {e}", socket.display())),
        }
        let text = line.trim_end();
        let shown = match what(text) {
            Line::Record(record) if table => record_text::row(&record, colour),
            Line::Record(_) => text.to_string(),
            Line::Stopped => {
                eprintln!("hookd: the daemon on {} stopped", socket.display());
                return Ok(ExitCode::SUCCESS);
            }
            Line::Error(message) => return Err(message),
            // A line this hookd cannot read (from a newer daemon): passed on as JSON, never shown
            // half-understood in the table.
            Line::Unknown if table => continue,
            Line::Unknown => text.to_string(),
        };
        if let Some(end) = ended(show(&shown)) {
            return end;
        }
    }
}

/// A line of the watch after its first.
#[derive(Debug)]
enum Line {
    Record(Box<Record>),
    /// The daemon is stopping.
    Stopped,
    /// The watch ended with an error (`too_slow`: this watcher fell behind), said as a message.
    Error(String),
    Unknown,
}

fn what(text: &str) -> Line {
    if let Ok(record) = serde_json::from_str::<Record>(text) {
        return Line::Record(Box::new(record));
    }
    match serde_json::from_str::<ErrorResponse>(text) {
        Ok(error) if error.error.kind == ErrorKind::ShuttingDown => Line::Stopped,
        Ok(error) => Line::Error(error_message(&error)),
        Err(_) => Line::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_of_a_watch_are_told_apart() {
        assert!(matches!(
            what(r#"{"v":1,"time":"2026-12-01T09:30:00.123Z","kind":"fire","moment":"Stop"}"#),
            Line::Record(record) if record.moment.as_deref() == Some("Stop")
        ));
        assert!(matches!(
            what(
                r#"{"id":1,"ok":false,"error":{"kind":"shutting_down","message":"the daemon is stopping"}}"#
            ),
            Line::Stopped
        ));
        let Line::Error(message) = what(
            r#"{"id":1,"ok":false,"error":{"kind":"too_slow","message":"this watcher fell 9 records behind"},"missed":9}"#,
        ) else {
            panic!("too_slow is an error")
        };
        assert_eq!(message, "this watcher fell 9 records behind (too_slow)");
        assert!(matches!(what("[1]"), Line::Unknown));
    }
}
