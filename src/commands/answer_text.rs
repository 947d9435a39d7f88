//! A fire's verdict for people: what `hookd fire` and `hookd test` print on a terminal. One rendering for
//! both, so that the two cannot tell the same verdict two ways. Everything a hook or an event gave (a
//! reason, an add, what it printed) is shown with its control characters escaped: an escape sequence in
//! a hook's stderr must not rewrite the terminal.

use std::fmt::Write;

use crate::agents::dialect::Answer;
use crate::commands::style::{painted_code, printable};
use crate::decision::{HookReport, Outcome, Rewrote, Ruling};
use crate::engine::Printed;
use crate::protocol::FireResponse;

/// Lines of a hook's stdout or stderr shown on a terminal; `--json` has them all.
const SHOWN_LINES: usize = 20;

/// The verdict in one word or two: `refused`, `asked`, `allowed`, `not refused`. The words `hookd test
/// --cases` expects, and the first of the text.
pub fn verdict_word(response: &FireResponse) -> &'static str {
    match response.ruling() {
        Ruling::Rewrote | Ruling::None => "not refused",
        ruling => ruling.word(),
    }
}

/// The verdict for people: what was decided and why, each hook's outcome and time (and, given
/// `printed`, one per hook as `hookd test` has them, what each printed), what hooks add, and what they
/// rewrote.
pub fn verdict(response: &FireResponse, printed: Option<&[Printed]>, colour: bool) -> String {
    let mut out = String::new();
    let word = verdict_word(response);
    let _ = write!(out, "{}", paint(word, response.ruling().colour(), colour));
    if response.advisory {
        out.push_str(" (as advice: the agent only takes advice here and goes on)");
    }
    if let Some(reason) = &response.reason {
        let _ = write!(out, ": {}", escaped(reason));
    }
    out.push('\n');
    if response.hooks.is_empty() {
        out.push_str("no hook fits this event\n");
    } else {
        out.push_str("hooks:\n");
        let width = response
            .hooks
            .iter()
            .map(|h| escaped(&h.name).chars().count())
            .max()
            .unwrap_or(0);
        for (index, hook) in response.hooks.iter().enumerate() {
            hook_line(&mut out, hook, width, colour);
            if let Some(printed) = printed.and_then(|p| p.get(index)) {
                stream(&mut out, "stdout", &printed.stdout);
                stream(&mut out, "stderr", &printed.stderr);
            }
        }
    }
    if !response.adds.is_empty() {
        out.push_str("adds:\n");
        for add in &response.adds {
            block(&mut out, "  ", &escaped_lines(add));
        }
    }
    for (what, value) in [
        ("the tool input", &response.input),
        ("the tool output", &response.output),
    ] {
        if let Some(value) = value {
            let _ = writeln!(out, "rewrote {what} to:");
            let text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
            block(&mut out, "  ", &escaped_lines(&text));
        }
    }
    out
}

/// What the relay answers an agent, as `hookd test --agent` shows it.
pub fn relay_answer(agent: &str, answer: &Answer) -> String {
    let mut out = format!(
        "hookd relay --agent {} would answer: exit {}",
        escaped(agent),
        answer.exit
    );
    if answer.stdout.is_none() && answer.stderr.is_none() {
        out.push_str(", nothing printed (the agent goes on)\n");
        return out;
    }
    out.push('\n');
    if let Some(stdout) = &answer.stdout {
        stream(&mut out, "stdout", stdout.as_bytes());
    }
    if let Some(stderr) = &answer.stderr {
        stream(&mut out, "stderr", stderr.as_bytes());
    }
    out
}

/// A hook's line: its name, outcome, how it ended, its time; then its error, and whether its output
/// was cut.
fn hook_line(out: &mut String, hook: &HookReport, width: usize, colour: bool) {
    let name = escaped(&hook.name);
    let word = hook.outcome.word();
    let rewrote = match hook.rewrote {
        Some(Rewrote::Unknown) => " (something)".to_string(),
        Some(what) => format!(" ({})", what.word()),
        None => String::new(),
    };
    let outcome = format!("{word}{rewrote}");
    let ended = match hook.exit {
        Some(code) => format!("exit {code}"),
        None if hook.outcome == Outcome::Skipped => "not run".to_string(),
        None => "-".to_string(),
    };
    let shown = format!("{outcome:<17}");
    let shown = shown.replacen(word, &paint(word, hook.outcome.colour(), colour), 1);
    let _ = writeln!(
        out,
        "  {name:<width$}  {shown}  {ended:<9} {:>9.1} ms",
        hook.ms
    );
    if let Some(error) = &hook.error {
        block(out, "      error: ", &escaped_lines(error));
    }
    if hook.truncated {
        out.push_str("      its output was cut at the output limit\n");
    }
}

/// A hook's stdout or stderr, indented under it; nothing when empty. At most [`SHOWN_LINES`] lines.
fn stream(out: &mut String, label: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end_matches(['\n', '\r']);
    if text.is_empty() {
        return;
    }
    let lines = escaped_lines(text);
    let head = format!("      {label}: ");
    let more = lines.len().saturating_sub(SHOWN_LINES);
    block(out, &head, &lines[..lines.len() - more]);
    if more > 0 {
        let _ = writeln!(
            out,
            "{:width$}... {more} more line{} (--json shows all)",
            "",
            if more == 1 { "" } else { "s" },
            width = head.len()
        );
    }
}

/// `lines` with `head` before the first and its width of spaces before the others.
fn block(out: &mut String, head: &str, lines: &[String]) {
    for (i, line) in lines.iter().enumerate() {
        if i == 0 {
            out.push_str(head);
        } else {
            let _ = write!(out, "{:width$}", "", width = head.len());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if lines.is_empty() {
        out.push_str(head.trim_end());
        out.push('\n');
    }
}

/// Characters of one line shown on a terminal: a hook that floods one endless line is cut too.
const SHOWN_CHARS: usize = 2000;

/// `text`'s lines, each with its control characters escaped, each cut at [`SHOWN_CHARS`].
fn escaped_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| {
            let shown = escaped(line);
            match shown.char_indices().nth(SHOWN_CHARS) {
                None => shown.into_owned(),
                Some((cut, _)) => {
                    let more = shown[cut..].chars().count();
                    format!("{} ... {more} more characters", &shown[..cut])
                }
            }
        })
        .collect()
}

fn escaped(text: &str) -> std::borrow::Cow<'_, str> {
    printable(text)
}

/// `word` in its decision's colour ([`Outcome::colour`]), when colour is wanted and it has one.
fn paint(word: &str, code: Option<&str>, colour: bool) -> String {
    match code {
        Some(code) => painted_code(word, code, colour),
        None => word.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::decision::{Permission, Verdict};

    fn response(refused: bool, permission: Option<Permission>) -> FireResponse {
        FireResponse {
            id: None,
            ok: true,
            verdict: Verdict {
                refused,
                permission,
                reason: refused.then(|| "no \x1b[2J way".to_string()),
                adds: vec!["on branch main\nclean".into()],
                hooks: vec![HookReport {
                    name: "guard".into(),
                    layer: None,
                    outcome: if refused {
                        Outcome::Refused
                    } else {
                        Outcome::Nothing
                    },
                    rewrote: None,
                    exit: Some(if refused { 2 } else { 0 }),
                    ms: 12.5,
                    error: None,
                    truncated: false,
                }],
                ..Verdict::default()
            },
        }
    }

    #[test]
    fn the_words_of_each_verdict() {
        assert_eq!(verdict_word(&response(true, None)), "refused");
        assert_eq!(
            verdict_word(&response(true, Some(Permission::Ask))),
            "asked"
        );
        assert_eq!(
            verdict_word(&response(false, Some(Permission::Allow))),
            "allowed"
        );
        assert_eq!(verdict_word(&response(false, None)), "not refused");
    }

    #[test]
    fn a_refusal_reads_with_its_reason_hooks_and_adds_and_no_control_characters() {
        let text = verdict(&response(true, None), None, false);
        assert!(text.starts_with("refused: no \\u{1b}[2J way\n"), "{text}");
        assert!(text.contains("\n  guard  refused"), "{text}");
        assert!(text.contains("exit 2"), "{text}");
        assert!(text.contains("12.5 ms"), "{text}");
        assert!(
            text.contains("adds:\n  on branch main\n  clean\n"),
            "{text}"
        );
        assert!(!text.contains('\x1b'), "{text:?}");
    }

    #[test]
    fn colour_only_when_asked_for() {
        let plain = verdict(&response(true, None), None, false);
        let coloured = verdict(&response(true, None), None, true);
        assert!(!plain.contains("\x1b["));
        assert!(
            coloured.starts_with("\x1b[1;31mrefused\x1b[0m: "),
            "{coloured:?}"
        );
    }

    #[test]
    fn what_a_hook_printed_is_shown_under_it_and_a_flood_is_cut() {
        let flood: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let printed = [Printed {
            stdout: flood.into_bytes(),
            stderr: b"why\n".to_vec(),
        }];
        let text = verdict(&response(true, None), Some(&printed), false);
        assert!(text.contains("      stdout: line 0\n"), "{text}");
        assert!(text.contains("              line 19\n"), "{text}");
        assert!(!text.contains("line 20\n"), "{text}");
        assert!(
            text.contains("... 80 more lines (--json shows all)"),
            "{text}"
        );
        assert!(text.contains("      stderr: why\n"), "{text}");
    }

    #[test]
    fn one_endless_line_is_cut_too() {
        let printed = [Printed {
            stdout: "x".repeat(10_000).into_bytes(),
            stderr: Vec::new(),
        }];
        let text = verdict(&response(false, None), Some(&printed), false);
        assert!(text.contains("x ... 8000 more characters\n"), "{text}");
        assert!(text.len() < 3000, "{} bytes", text.len());
    }

    #[test]
    fn the_relay_answer_says_exit_and_what_is_printed() {
        let answer = Answer {
            stdout: None,
            stderr: Some("no".into()),
            exit: 2,
        };
        assert_eq!(
            relay_answer("codex", &answer),
            "hookd relay --agent codex would answer: exit 2\n      stderr: no\n"
        );
        assert!(relay_answer("codex", &Answer::nothing()).contains("nothing printed"));
    }
}
