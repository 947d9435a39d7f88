//! The record for people: a row of `hookd log`'s and `hookd watch`'s table, and `hookd why`'s account of
//! one refusal. Everything from a record is shown with control characters made harmless (a summary or a
//! hook's stderr may hold escape sequences that would rewrite the terminal), and cut to its column.

use std::fmt::Write;

use crate::commands::style::{clean, painted_code};
use crate::decision::{self, Outcome, Ruling};
use crate::record::{Kind, Record};

/// The columns' widths, in characters; the last (the slowest hook) takes what it needs.
const TIME: usize = 14;
const AGENT: usize = 11;
const MOMENT: usize = 16;
const ASKED: usize = 36;
const VERDICT: usize = 10;
const REASON: usize = 36;

/// The table's first line.
pub fn header() -> String {
    let mut line = String::new();
    for (title, width) in [
        ("TIME (UTC)", TIME),
        ("AGENT", AGENT),
        ("MOMENT", MOMENT),
        ("ASKED", ASKED),
        ("VERDICT", VERDICT),
        ("REASON", REASON),
    ] {
        let _ = write!(line, "{title:<width$}  ");
    }
    line.push_str("SLOWEST HOOK");
    line
}

/// One record as a row of the table, without its `\n`.
pub fn row(record: &Record, colour: bool) -> String {
    let (asked, verdict, reason) = describe(record);
    let mut line = String::new();
    line.push_str(&cell(&short_time(&record.time), TIME));
    line.push_str(&cell(record.agent.as_deref().unwrap_or("-"), AGENT));
    line.push_str(&cell(record.moment.as_deref().unwrap_or("-"), MOMENT));
    line.push_str(&cell(&asked, ASKED));
    let shown = cell(&verdict, VERDICT);
    match paint(record, colour) {
        Some(code) => {
            let word = shown.trim_end();
            let _ = write!(
                line,
                "{}{}",
                painted_code(word, code, true),
                &shown[word.len()..]
            );
        }
        None => line.push_str(&shown),
    }
    line.push_str(&cell(&reason, REASON));
    if let Some(slowest) = slowest(record) {
        line.push_str(&clean(&slowest));
    }
    line.trim_end().to_string()
}

/// The ANSI style of a record's verdict, when colouring: what was held back stands out (a fire refused
/// or asked, in its decision's colour; the relay failing closed; a settings file refused or weakening).
fn paint(record: &Record, colour: bool) -> Option<&'static str> {
    if !colour {
        return None;
    }
    match record.kind {
        Kind::Fire => record
            .verdict
            .as_ref()
            .filter(|v| !v.advisory && matches!(v.decision, Ruling::Refused | Ruling::Asked))
            .and_then(|v| v.decision.colour()),
        Kind::Relay if record.relay.as_deref() == Some("fail_closed") => Some(decision::RED),
        Kind::ReloadRefused => Some(decision::RED),
        Kind::Weakened => Some(decision::YELLOW),
        _ => None,
    }
}

/// What was asked, the verdict's word, and the reason, for a record of any kind.
fn describe(record: &Record) -> (String, String, String) {
    let text = |value: &Option<String>| value.clone().unwrap_or_default();
    let reason = record
        .settled_by
        .as_ref()
        .map(|by| format!("by {by}"))
        .or_else(|| record.verdict.as_ref().and_then(|v| v.reason.clone()))
        .or_else(|| record.cut.clone())
        .or_else(|| record.error.clone())
        .unwrap_or_default();
    let asked = match (&record.tool, &record.summary) {
        (Some(tool), Some(summary)) => format!("{tool}: {summary}"),
        (Some(tool), None) => tool.clone(),
        (None, summary) => text(summary),
    };
    let verdict = match record.kind {
        Kind::Fire => match &record.verdict {
            Some(v) if v.advisory => "advised".to_string(),
            Some(v) => v.decision.word().to_string(),
            None if record.cut.is_some() => "cut".to_string(),
            None => "error".to_string(),
        },
        Kind::Relay => record.relay.clone().unwrap_or_else(|| "relay".into()),
        Kind::Reload => "reloaded".into(),
        Kind::ReloadRefused => "bad reload".into(),
        Kind::WorkerRestart => "restart".into(),
        Kind::StopCap => "stop cap".into(),
        Kind::Dropped => "dropped".into(),
        Kind::Weakened => "weakened".into(),
        Kind::Background => "background".into(),
        Kind::Ask => format!("ask: {}", record.outcome.as_deref().unwrap_or("?")),
        Kind::Other => "?".into(),
    };
    let asked = match record.kind {
        Kind::WorkerRestart => text(&record.hook),
        Kind::Dropped => format!("{} records", record.count.unwrap_or_default()),
        Kind::StopCap => format!(
            "{} Stops refused in a row",
            record.count.unwrap_or_default()
        ),
        _ => asked,
    };
    (asked, verdict, reason)
}

/// The hook that took longest, with its time.
fn slowest(record: &Record) -> Option<String> {
    record
        .hooks
        .iter()
        .max_by(|a, b| a.ms.total_cmp(&b.ms))
        .map(|hook| format!("{} {}", crate::record::cut(&hook.name, 24), ms(hook.ms)))
}

/// Milliseconds as people read them: a tenth below 100 ms, whole above.
pub fn ms(ms: f64) -> String {
    if ms >= 100.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

/// `2026-12-01T09:30:00.123Z` as `12-01 09:30:00`; anything else as it is.
fn short_time(time: &str) -> String {
    match (time.get(5..10), time.get(11..19)) {
        (Some(day), Some(clock)) if time.len() == 24 => format!("{day} {clock}"),
        _ => time.to_string(),
    }
}

/// `text` made one harmless line, cut to `width` and padded to it, with two spaces after.
fn cell(text: &str, width: usize) -> String {
    let text = clean(text);
    let text = if text.chars().count() > width {
        crate::record::cut(&text, width - 1)
    } else {
        text
    };
    format!("{text:<width$}  ")
}

/// `hookd why`'s account of a held-back record: when, who, what was asked, the verdict and its reason,
/// which hook held it back and its stderr, and every hook with its outcome and time.
pub fn full(record: &Record) -> String {
    let mut out = String::new();
    let verdict = record.verdict.clone().unwrap_or_default();
    let _ = writeln!(
        out,
        "{} at {}",
        record.verdict.as_ref().map_or("", |v| v.decision.word()),
        clean(&record.time)
    );
    let tool = match (&record.tool, &record.agent_tool) {
        (Some(tool), Some(own)) => Some(format!("{tool} ({own})")),
        (tool, _) => tool.clone(),
    };
    for (label, value) in [
        ("agent", record.agent.clone()),
        ("session", record.session.clone()),
        ("cwd", record.cwd.clone()),
        ("moment", record.moment.clone()),
        ("tool", tool),
        ("asked", record.summary.clone()),
        ("reason", verdict.reason.clone()),
        ("cut", record.cut.clone()),
    ] {
        if let Some(value) = value {
            let _ = writeln!(out, "  {label:<8} {}", clean(&value));
        }
    }
    if verdict.advisory {
        out.push_str("  (at this moment the agent takes a refusal only as advice)\n");
    }
    // The hooks that held it back: those whose outcome is the verdict; failing that (a hook that failed
    // with `on_failure = "refuse"`), those that failed.
    let mut blamed: Vec<_> = record
        .hooks
        .iter()
        .filter(|hook| Some(hook.outcome) == verdict.decision.outcome())
        .collect();
    if blamed.is_empty() {
        blamed = record
            .hooks
            .iter()
            .filter(|hook| hook.outcome == Outcome::Failed)
            .collect();
    }
    for hook in &blamed {
        let exit = hook.exit.map(|e| format!("exit {e}, ")).unwrap_or_default();
        let _ = writeln!(
            out,
            "{} by {} ({exit}{})",
            hook.outcome.word(),
            clean(&hook.name),
            ms(hook.ms)
        );
        if let Some(error) = &hook.error {
            let _ = writeln!(out, "  error: {}", clean(error));
        }
        match hook.stderr.as_deref().map(str::trim_end) {
            Some(stderr) if !stderr.is_empty() => {
                out.push_str("  its stderr:\n");
                for line in stderr.lines() {
                    let _ = writeln!(out, "    {}", clean(line));
                }
            }
            _ => out.push_str("  (nothing on its stderr)\n"),
        }
    }
    let took = record.ms.map(|t| format!(", the fire took {}", ms(t)));
    let _ = writeln!(
        out,
        "hooks ({}{}):",
        record.hooks.len(),
        took.unwrap_or_default()
    );
    let width = record
        .hooks
        .iter()
        .map(|hook| clean(&hook.name).chars().count())
        .max()
        .unwrap_or(0);
    for hook in &record.hooks {
        let mut line = format!(
            "  {:<width$}  {:<8}",
            clean(&hook.name),
            hook.outcome.word()
        );
        match hook.exit {
            Some(exit) => {
                let _ = write!(line, "  exit {exit:<3}");
            }
            None => line.push_str("          "),
        }
        let _ = write!(line, "  {:>8}", ms(hook.ms));
        if let Some(error) = &hook.error {
            let _ = write!(line, "  {}", clean(error));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused() -> Record {
        serde_json::from_str(r#"{"v":1,"time":"2026-12-01T09:30:00.123Z","kind":"fire","generation":3,"source":"relay","agent":"claude-code","session":"s1","cwd":"/p","moment":"PreToolUse","tool":"Bash","summary":"rm -rf ~","verdict":{"decision":"refused","refused":true,"reason":"rm -r ~ would delete your home folder","adds":0},"hooks":[{"name":"log","outcome":"nothing","exit":0,"ms":12.5},{"name":"deny-destructive","outcome":"refused","exit":2,"ms":0.4,"stderr":"rm -r ~ would delete\nyour home folder\n"}],"ms":12.9}"#).unwrap()
    }

    #[test]
    fn a_row_has_every_column_in_its_place() {
        let row = row(&refused(), false);
        assert_eq!(
            row,
            format!(
                "{:<16}{:<13}{:<18}{:<38}{:<12}{:<38}log 12.5 ms",
                "12-01 09:30:00",
                "claude-code",
                "PreToolUse",
                "Bash: rm -rf ~",
                "refused",
                "rm -r ~ would delete your home fold…"
            )
        );
        let column = |text: &str, part: &str| text[..text.find(part).unwrap()].chars().count();
        assert_eq!(column(&header(), "AGENT"), column(&row, "claude-code"));
        assert_eq!(column(&header(), "SLOWEST HOOK"), column(&row, "log 12.5"));
    }

    #[test]
    fn a_row_cuts_long_text_and_makes_control_characters_harmless() {
        let mut record = refused();
        record.summary = Some(format!("echo \x1b[2J{}", "x".repeat(100)));
        let row = row(&record, false);
        assert!(!row.contains('\x1b'), "{row:?}");
        let asked: String = row.chars().skip(16 + 13 + 18).take(38).collect();
        assert!(asked.ends_with("…  "), "{asked:?}");
        assert!(asked.trim_end().ends_with('…'), "{asked:?}");
    }

    #[test]
    fn colour_marks_only_what_was_held_back() {
        let red = row(&refused(), true);
        assert!(red.contains("\x1b[1;31mrefused\x1b[0m     "), "{red:?}");
        assert_eq!(
            red.replace("\x1b[1;31m", "").replace("\x1b[0m", ""),
            row(&refused(), false)
        );
        let mut allowed = refused();
        allowed.verdict.as_mut().unwrap().decision = Ruling::Allowed;
        assert!(!row(&allowed, true).contains('\x1b'));
    }

    #[test]
    fn other_kinds_say_what_happened() {
        let relay: Record = serde_json::from_str(r#"{"v":1,"time":"2026-12-01T09:31:10.004Z","kind":"relay","agent":"codex","moment":"PreToolUse","tool":"Bash","summary":"cargo test","error":"hookd is not running","relay":"fail_open"}"#).unwrap();
        let shown = row(&relay, false);
        assert!(
            shown.contains("fail_open") && shown.contains("hookd is not running"),
            "{shown}"
        );
        let reload: Record = serde_json::from_str(r#"{"v":1,"time":"2026-12-01T09:31:10.004Z","kind":"reload_refused","generation":2,"error":"hooks.toml:1:1: bad"}"#).unwrap();
        let shown = row(&reload, false);
        assert!(
            shown.contains("bad reload") && shown.contains("hooks.toml:1:1: bad"),
            "{shown}"
        );
        assert!(shown.starts_with("12-01 09:31:10  -"), "{shown}");
    }

    #[test]
    fn why_tells_the_refusing_hook_and_its_stderr() {
        let text = full(&refused());
        assert!(
            text.starts_with("refused at 2026-12-01T09:30:00.123Z\n"),
            "{text}"
        );
        for part in [
            "  agent    claude-code\n",
            "  session  s1\n",
            "  tool     Bash\n",
            "  asked    rm -rf ~\n",
            "  reason   rm -r ~ would delete your home folder\n",
            "refused by deny-destructive (exit 2, 0.4 ms)\n  its stderr:\n    rm -r ~ would delete\n    your home folder\n",
            "hooks (2, the fire took 12.9 ms):\n",
            "  log               nothing   exit 0     12.5 ms\n",
            "  deny-destructive  refused   exit 2      0.4 ms\n",
        ] {
            assert!(text.contains(part), "{part:?} not in:\n{text}");
        }
    }
}
