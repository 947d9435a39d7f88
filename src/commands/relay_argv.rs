//! `hookd relay`'s command line read without clap, for the command an agent starts on every tool call.
//!
//! Building even the relay's own clap definition, and walking it, touches code and data pages that the
//! relay otherwise never needs; on a VM every first touch of a page is a fault of several microseconds,
//! and the relay's whole budget is a fraction of a millisecond (BENCHMARKS.md, "The relay's start"). So
//! `main` first tries [`parse`], which takes only the forms `--print-settings` and `setup` write
//! (`relay --agent NAME [--socket PATH] [--fail-closed] [--event NAME]`, plus `--timeout SECONDS` and the
//! `--option=value` spelling), and gives up on anything else: help, a typo, a repeated option, a value that
//! looks like an option. What it gives up on goes to clap ([`super::cli::RelayOnly`]), which says what is
//! wrong exactly as before. A unit test holds the two to the same reading of every command line this one
//! accepts, so the fast path can never mean something clap would not.

use std::ffi::OsString;
use std::path::PathBuf;

use super::cli::RelayArgs;
use crate::limits::RELAY_TIMEOUT_SECS;

/// `words` as `hookd relay` takes them (the first is `relay`), or `None` for anything but the plain forms
/// above: then clap must read it.
pub fn parse(words: &[OsString]) -> Option<RelayArgs> {
    let (first, rest) = words.split_first()?;
    if first != "relay" {
        return None;
    }
    let mut agent = None;
    let mut socket = None;
    let mut fail_closed = false;
    let mut event = None;
    let mut timeout = None;
    let mut words = rest.iter();
    while let Some(word) = words.next() {
        // Options are ASCII; a word that is not UTF-8 can only be a value, which clap places better.
        let word = word.to_str()?;
        let (name, inline) = match word.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (word, None),
        };
        if name == "--fail-closed" {
            if inline.is_some() || fail_closed {
                return None;
            }
            fail_closed = true;
            continue;
        }
        let slot: &mut Option<OsString> = match name {
            "--agent" => &mut agent,
            "--socket" => &mut socket,
            "--event" => &mut event,
            "--timeout" => &mut timeout,
            _ => return None,
        };
        if slot.is_some() {
            return None;
        }
        let value = match inline {
            Some(value) => OsString::from(value),
            None => words.next()?.clone(),
        };
        // Empty, or what could be an option: clap's reading (an error, or a value it allows) decides.
        if value.is_empty() || value.as_encoded_bytes().starts_with(b"-") {
            return None;
        }
        *slot = Some(value);
    }
    let timeout = match timeout {
        Some(seconds) => seconds.to_str()?.parse::<f64>().ok()?,
        None => RELAY_TIMEOUT_SECS,
    };
    Some(RelayArgs {
        agent: match agent {
            Some(agent) => agent.into_string().ok()?,
            None => "claude-code".to_string(),
        },
        socket: socket.map(PathBuf::from),
        fail_closed,
        event: match event {
            Some(event) => Some(event.into_string().ok()?),
            None => None,
        },
        timeout,
        print_settings: None,
        http: false,
        port: None,
        config: None,
    })
}

/// Whether a command line asks for `--fail-closed` in any spelling: [`asks_fail_closed_as`].
pub fn asks_fail_closed(words: &[OsString]) -> bool {
    asks_fail_closed_as(words).is_some()
}

/// The first word of `words` that asks for `--fail-closed`, however it is spelt: `--fail-closed` itself,
/// or misspelt (`--fail-close`, `--fail-closd`, `--fail_closed`, `-fail-closed`, `--Fail-Closed=yes`), with
/// a dash pasted from a web page (`—fail-closed`, `–fail-closed`), or in a value's place
/// (`--socket --fail-closed` where `$SOCKET` was empty). A relay whose command line it cannot run as
/// written (help, a word it does not know, a value it cannot take) refuses when one of its words asks
/// for fail-closed: the user asked it to refuse when it cannot decide. Reading a word too broadly costs a
/// refusal that says why; too narrowly, every tool call went through.
pub fn asks_fail_closed_as(words: &[OsString]) -> Option<&OsString> {
    words
        .iter()
        .find(|word| word_asks_fail_closed(&word.to_string_lossy()))
}

/// Whether one word asks for fail-closed ([`asks_fail_closed_as`]): its name (before any `=`), its dashes
/// of every kind, underscores and spaces left out and read without case, is `failclosed` but for at most
/// two letters, or holds both `fail` and `clos`. A path (a word with a `/`) is a value, never an option.
pub fn word_asks_fail_closed(word: &str) -> bool {
    if word.contains('/') {
        return false;
    }
    let name = word.split('=').next().unwrap_or_default();
    let letters: String = name
        .chars()
        .filter(|&c| !is_dash(c) && c != '_' && !c.is_whitespace())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    (letters.contains("fail") && letters.contains("clos"))
        || edit_distance(&letters, "failclosed") <= 2
}

/// A hyphen, a dash or a minus, as a web page or a word processor may put for `-`.
fn is_dash(c: char) -> bool {
    matches!(
        c,
        '-' | '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{fe58}' | '\u{fe63}' | '\u{ff0d}'
    )
}

/// The number of letters to add, remove or change to make `a` into `b` (Levenshtein's distance).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb))
                .min(above + 1)
                .min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The first value given to `option` in `words` (`--agent NAME` or `--agent=NAME`), if UTF-8: what a
/// command line that cannot be read says of its agent and event, for a refusal to place its moment.
pub fn value_of<'a>(words: &'a [OsString], option: &str) -> Option<&'a str> {
    let mut words = words.iter();
    while let Some(word) = words.next() {
        let Some(word) = word.to_str() else {
            continue;
        };
        if word == option {
            return words.next()?.to_str();
        }
        if let Some(value) = word
            .strip_prefix(option)
            .and_then(|rest| rest.strip_prefix('='))
        {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::cli::RelayOnly;
    use clap::Parser;
    use proptest::prelude::*;

    fn words(argv: &[&str]) -> Vec<OsString> {
        argv.iter().map(OsString::from).collect()
    }

    /// What clap makes of `argv`, for comparing: its error's kind, or the options it read.
    fn by_clap(argv: &[OsString]) -> Result<String, clap::error::ErrorKind> {
        RelayOnly::try_parse_from(argv)
            .map(|relay| format!("{:?}", relay.args))
            .map_err(|e| e.kind())
    }

    /// The commands `--print-settings` and `setup` write, each read as clap reads it.
    #[test]
    fn the_commands_hookd_writes_take_the_fast_path_and_mean_the_same() {
        for argv in [
            &["relay"][..],
            &["relay", "--agent", "codex"],
            &["relay", "--agent", "claude-code", "--fail-closed"],
            &["relay", "--agent", "copilot-cli", "--event", "preToolUse"],
            &[
                "relay",
                "--agent",
                "gemini-cli",
                "--socket",
                "/run/user/1000/hookd.sock",
            ],
            &["relay", "--agent=qwen-code", "--socket=/s", "--timeout=2.5"],
            &[
                "relay",
                "--timeout",
                "5",
                "--fail-closed",
                "--agent",
                "codex",
            ],
        ] {
            let argv = words(argv);
            let fast = parse(&argv).unwrap_or_else(|| panic!("{argv:?} is a plain form"));
            assert_eq!(Ok(format!("{fast:?}")), by_clap(&argv), "{argv:?}");
        }
    }

    /// What the fast path gives up on, clap reads: its help, its errors, and the rare forms.
    #[test]
    fn anything_else_is_left_to_clap() {
        for argv in [
            &["relay", "--help"][..],
            &["relay", "-h"],
            &["relay", "--agent"],
            &["relay", "--agent", "codex", "--agent", "codex"],
            &["relay", "--fail-closed", "--fail-closed"],
            &["relay", "--fail-closed=true"],
            &["relay", "--agnet", "codex"],
            &["relay", "--agent", "--fail-closed"],
            &["relay", "--agent="],
            &["relay", "--timeout", "soon"],
            &["relay", "--print-settings", "codex"],
            &["relay", "--print-settings", "claude-code", "--http"],
            &["relay", "stray"],
            &["fire", "PreToolUse"],
        ] {
            assert!(parse(&words(argv)).is_none(), "{argv:?}");
        }
    }

    /// A command line that cannot be used but asks for --fail-closed, however misspelt, refuses; the
    /// agent and event it names place the refusal.
    #[test]
    fn a_wrong_command_line_asks_for_fail_closed_however_it_is_spelt() {
        for argv in [
            &["relay", "--fail-closed"][..],
            &["relay", "--socket", "--fail-closed"],
            &["relay", "--fail_closed"],
            &["relay", "-fail-closed"],
            &["relay", "--Fail-Closed=yes"],
            &["relay", "--failclosed"],
            &["relay", "--fail-close"],
            &["relay", "--fail-closd"],
            &["relay", "--fial-closed"],
            &["relay", "--FAIL-CLOSE"],
            &["relay", "\u{2014}fail-closed"],
            &["relay", "\u{2013}fail-closed"],
            &["relay", "\u{2013}\u{2013}fail\u{2010}closed"],
            &["relay", "\u{2212}\u{2212}fail-closed"],
            &["relay", "--failing-closed"],
            &["relay", "fail-closed"],
            &[
                "relay",
                "--agent",
                "codex",
                "--event",
                "\u{2014}fail-closed",
            ],
        ] {
            assert!(asks_fail_closed(&words(argv)), "{argv:?}");
        }
        for argv in [
            &["relay"][..],
            &["relay", "--agent", "codex"],
            &["relay", "--socket", "/run/fail-closed"],
            &["relay", "--fail"],
            &["relay", "--fail-open"],
            &["relay", "--closed"],
            &["relay", "--event", "PostToolUseFailure"],
            &["relay", "--timeout", "5", "--agent", "copilot-cli"],
        ] {
            assert!(!asks_fail_closed(&words(argv)), "{argv:?}");
        }
        assert_eq!(edit_distance("failclosd", "failclosed"), 1);
        assert_eq!(edit_distance("fialclosed", "failclosed"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        let argv = words(&[
            "relay",
            "--agent=codex",
            "--event",
            "preToolUse",
            "--socket",
        ]);
        assert_eq!(value_of(&argv, "--agent"), Some("codex"));
        assert_eq!(value_of(&argv, "--event"), Some("preToolUse"));
        assert_eq!(value_of(&argv, "--socket"), None);
        assert_eq!(value_of(&argv, "--timeout"), None);
    }

    proptest! {
        /// Whatever command line the fast path accepts, clap accepts too and reads the same options
        /// from: generated from the relay's options, their values, and words that are neither.
        #[test]
        fn whatever_the_fast_path_reads_clap_reads_the_same(
            picks in proptest::collection::vec(0usize..WORDS.len(), 0..9),
            joined in proptest::collection::vec(any::<bool>(), 0..9),
        ) {
            let mut argv = vec![OsString::from("relay")];
            let mut i = 0;
            while i < picks.len() {
                let word = WORDS[picks[i]];
                let next = picks.get(i + 1).map(|&p| WORDS[p]);
                match next {
                    Some(value) if joined.get(i).copied().unwrap_or(false) && word.starts_with("--") => {
                        argv.push(format!("{word}={value}").into());
                        i += 2;
                    }
                    _ => {
                        argv.push(word.into());
                        i += 1;
                    }
                }
            }
            if let Some(fast) = parse(&argv) {
                prop_assert_eq!(Ok(format!("{fast:?}")), by_clap(&argv), "{:?}", argv);
            }
        }
    }

    /// The words the property above builds command lines from.
    const WORDS: &[&str] = &[
        "--agent",
        "--socket",
        "--event",
        "--timeout",
        "--fail-closed",
        "--print-settings",
        "--http",
        "codex",
        "claude-code",
        "/tmp/s",
        "3",
        "0",
        "-1",
        "1e3",
        "inf",
        "NaN",
        "",
        "-",
        "--",
        "x=y",
        "preToolUse",
    ];
}
