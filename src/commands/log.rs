//! `hookd log` and `hookd why`: the journal read back (docs/commands.md, "hookd log"). Both read the files
//! the daemon wrote, not the daemon: they work with the daemon stopped, and show what it did before.

use std::collections::VecDeque;
use std::io::{IsTerminal, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use crate::commands::cli::Filter;
use crate::commands::record_text;
use crate::commands::style;
use crate::protocol::WatchFilter;
use crate::record::Record;

/// How many rows the table shows when `-n` does not say: a screenful. JSON lines, read by programs, are
/// all given.
pub const TABLE_ROWS: usize = 20;

/// What `hookd log` was asked.
pub struct Log {
    pub filter: Filter,
    pub since: Option<String>,
    pub last: Option<usize>,
    /// Only asks and their outcomes.
    pub asks: bool,
    pub json: bool,
    pub journal: Option<PathBuf>,
}

pub fn log(asked: Log) -> Result<ExitCode, String> {
    let path = asked
        .journal
        .unwrap_or_else(crate::record::read::default_path);
    let since = asked
        .since
        .as_deref()
        .map(|text| since(text, SystemTime::now()))
        .transpose()?;
    let filter = asked.filter.to_watch();
    let table = !asked.json && std::io::stdout().is_terminal();
    let keep = asked.last.or(table.then_some(TABLE_ROWS));
    let mut kept: VecDeque<(String, Record)> = VecDeque::new();
    let mut matched = 0usize;
    // With no `-n` (JSON lines, for a program), each record goes out as it is read: the journal may be
    // far larger than memory.
    let mut direct = keep
        .is_none()
        .then(|| std::io::BufWriter::new(std::io::stdout().lock()));
    let mut failed = None;
    let read = crate::record::read::each(&path, |line, record| {
        if !passes(&filter, since.as_deref(), &record) || (asked.asks && !is_ask(&record)) {
            return ControlFlow::Continue(());
        }
        matched += 1;
        if let Some(out) = direct.as_mut() {
            if let Err(e) = out
                .write_all(line.as_bytes())
                .and_then(|()| out.write_all(b"\n"))
            {
                failed = Some(e);
                return ControlFlow::Break(());
            }
            return ControlFlow::Continue(());
        }
        if keep == Some(0) {
            return ControlFlow::Continue(());
        }
        if keep.is_some_and(|keep| kept.len() == keep) {
            kept.pop_front();
        }
        kept.push_back((line.to_string(), record));
        ControlFlow::Continue(())
    })?;
    if let Some(mut out) = direct {
        let flushed = failed.map_or_else(|| out.flush(), Err);
        match flushed {
            Ok(()) => {}
            // The reader left (`hookd log | head`): done, quietly.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(ExitCode::SUCCESS),
            Err(e) => return Err(format!("cannot write to stdout: {e}")),
        }
    }
    if !read.found {
        eprintln!("hookd: no journal yet at {}", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    if read.unreadable > 0 {
        let (lines, are) = match read.unreadable {
            1 => ("1 line".to_string(), "is not a record"),
            n => (format!("{n} lines"), "are not records"),
        };
        eprintln!("hookd: skipped {lines} of {} that {are}", path.display());
    }
    let mut out = String::new();
    if table {
        if kept.is_empty() {
            eprintln!("hookd: nothing in {} matches", path.display());
            return Ok(ExitCode::SUCCESS);
        }
        let colour = style::colour_wanted(true);
        out.push_str(&record_text::header());
        out.push('\n');
        for (_, record) in &kept {
            out.push_str(&record_text::row(record, colour));
            out.push('\n');
        }
        if matched > kept.len() {
            out.push_str(&format!(
                "(the last {} of {matched}; -n N shows more)\n",
                kept.len()
            ));
        }
    } else {
        for (line, _) in &kept {
            out.push_str(line);
            out.push('\n');
        }
    }
    print_all(&out)
}

/// Whether `record` passes the filter and is not older than `since` (RFC 3339 in UTC to the millisecond,
/// as the record's `time` is: such times compare as strings).
/// An ask, or what came of one: a fire that asked a person, or an `ask` record.
fn is_ask(record: &Record) -> bool {
    match record.kind {
        crate::record::Kind::Ask => true,
        crate::record::Kind::Fire => record
            .verdict
            .as_ref()
            .is_some_and(|v| v.decision == crate::decision::Ruling::Asked),
        _ => false,
    }
}

fn passes(filter: &WatchFilter, since: Option<&str>, record: &Record) -> bool {
    filter.matches(record) && since.is_none_or(|since| record.time.as_str() >= since)
}

/// `--since`'s time, in the record's form: `30s`, `10m`, `2h`, `1d` before `now`, or an RFC 3339 time.
fn since(text: &str, now: SystemTime) -> Result<String, String> {
    let bad = || {
        format!(
            "--since {text:?}: give a time ago (30s, 10m, 2h, 1d) or an RFC 3339 time (2026-12-01T09:30:00Z)"
        )
    };
    let text = text.trim();
    if let Some(time) = crate::time::parse_rfc3339(text) {
        return Ok(crate::time::rfc3339_millis(time));
    }
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (count, unit) = text.split_at(split);
    let count: u64 = count.parse().map_err(|_| bad())?;
    let unit = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(bad()),
    };
    let ago = count
        .checked_mul(unit)
        .map(Duration::from_secs)
        .ok_or_else(bad)?;
    Ok(crate::time::rfc3339_millis(
        now.checked_sub(ago).unwrap_or(SystemTime::UNIX_EPOCH),
    ))
}

/// What `hookd why` was asked.
pub struct Why {
    pub agent: Option<String>,
    pub session: Option<String>,
    pub moment: Option<String>,
    pub json: bool,
    pub journal: Option<PathBuf>,
}

pub fn why(asked: Why) -> Result<ExitCode, String> {
    let path = asked
        .journal
        .unwrap_or_else(crate::record::read::default_path);
    let filter = WatchFilter {
        agent: asked.agent,
        session: asked.session,
        moment: asked.moment,
        refused: true,
    };
    let mut last = None;
    let read = crate::record::read::each(&path, |line, record| {
        if filter.matches(&record) {
            last = Some((line.to_string(), record));
        }
        ControlFlow::Continue(())
    })?;
    if !read.found {
        return Err(format!("no journal yet at {}", path.display()));
    }
    let Some((line, record)) = last else {
        return Err(nothing_refused(&path, &filter));
    };
    if asked.json {
        print_all(&format!("{line}\n"))
    } else {
        print_all(&record_text::full(&record))
    }
}

fn nothing_refused(path: &Path, filter: &WatchFilter) -> String {
    let mut of = Vec::new();
    for (what, value) in [
        ("agent", &filter.agent),
        ("session", &filter.session),
        ("moment", &filter.moment),
    ] {
        if let Some(value) = value {
            of.push(format!("{what} {value}"));
        }
    }
    let of = if of.is_empty() {
        String::new()
    } else {
        format!(" for {}", of.join(", "))
    };
    format!(
        "no refusal{of} in the journal at {} (nothing was refused or asked)",
        path.display()
    )
}

/// Writes `text` to stdout. A reader that left early (`hookd log | head`) ends the command quietly, as
/// it does for other tools that print.
pub fn print_all(text: &str) -> Result<ExitCode, String> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(format!("cannot write to stdout: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> SystemTime {
        crate::time::parse_rfc3339(text).unwrap()
    }

    #[test]
    fn since_takes_a_time_ago_or_a_time() {
        let now = at("2026-12-01T10:00:00Z");
        assert_eq!(since("30s", now).unwrap(), "2026-12-01T09:59:30.000Z");
        assert_eq!(since("10m", now).unwrap(), "2026-12-01T09:50:00.000Z");
        assert_eq!(since("2h", now).unwrap(), "2026-12-01T08:00:00.000Z");
        assert_eq!(since("1d", now).unwrap(), "2026-11-30T10:00:00.000Z");
        assert_eq!(
            since("2026-12-01T11:30:00.5+01:00", now).unwrap(),
            "2026-12-01T10:30:00.500Z"
        );
        assert_eq!(
            since("99999999999d", now).unwrap(),
            "1970-01-01T00:00:00.000Z"
        );
        for bad in ["", "10", "m", "10 m", "10w", "-1h", "yesterday"] {
            let error = since(bad, now).unwrap_err();
            assert!(
                error.contains("--since") && error.contains("30s"),
                "{error}"
            );
        }
    }

    #[test]
    fn the_filter_and_since_both_hold() {
        let record: Record = serde_json::from_str(
            r#"{"v":1,"time":"2026-12-01T09:30:00.123Z","kind":"fire","agent":"codex","session":"s1","moment":"Stop","verdict":{"decision":"refused","refused":true}}"#,
        )
        .unwrap();
        let none = WatchFilter::default();
        assert!(passes(&none, None, &record));
        assert!(passes(&none, Some("2026-12-01T09:30:00.123Z"), &record));
        assert!(!passes(&none, Some("2026-12-01T09:30:00.124Z"), &record));
        let codex = WatchFilter {
            agent: Some("codex".into()),
            refused: true,
            ..WatchFilter::default()
        };
        assert!(passes(&codex, None, &record));
        let other = WatchFilter {
            session: Some("s2".into()),
            ..WatchFilter::default()
        };
        assert!(!passes(&other, None, &record));
    }

    #[test]
    fn nothing_refused_says_for_what() {
        let filter = WatchFilter {
            agent: Some("codex".into()),
            ..WatchFilter::default()
        };
        assert_eq!(
            nothing_refused(Path::new("/j.jsonl"), &filter),
            "no refusal for agent codex in the journal at /j.jsonl (nothing was refused or asked)"
        );
    }
}
