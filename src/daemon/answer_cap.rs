//! A fire's answer, kept under [`MAX_ANSWER`] bytes once written as JSON. A hook may print a megabyte of
//! control characters, each six bytes once escaped, and a fire may have many hooks: uncapped, one answer
//! could be tens of megabytes, and a client pipelining fires without reading could make the daemon hold
//! gigabytes. The verdict itself is never cut: a refusal stays a refusal, with the start of its reason; what
//! is cut is the end of what the hooks add, in the settings file's order, and the cut is said.

use crate::limits::{MAX_ANSWER, MAX_ID, MAX_REWRITE};
use crate::protocol::{FireResponse, json_len};

/// The longest reason kept, in bytes of text (before escaping).
const MAX_REASON: usize = 64 << 10;

/// The longest error kept in a hook's report, in bytes of text.
const MAX_ERROR: usize = 4 << 10;

/// The longest error kept in a hook's report when the reports alone fill half an answer.
const MAX_ERROR_MANY: usize = 160;

/// Room kept for the note that says what was cut.
const NOTE_ROOM: usize = 256;

/// Cuts `response` to fit [`MAX_ANSWER`]; returns how many bytes of text were cut (0: it fit as it was).
pub fn cap(response: &mut FireResponse) -> usize {
    guard_rewrite_sizes(response);
    if surely_fits(response) || serialized_len(response) <= MAX_ANSWER {
        return 0;
    }
    let mut cut = 0;
    if let Some(reason) = &mut response.reason {
        cut += truncate(reason, MAX_REASON);
    }
    for report in &mut response.hooks {
        if let Some(error) = &mut report.error {
            cut += truncate(error, MAX_ERROR);
        }
    }
    // Hundreds of hooks, each with its error: the reports shrink to a line each before any add is cut.
    if serialized_len(response) + NOTE_ROOM > MAX_ANSWER / 2 {
        for report in &mut response.hooks {
            if let Some(error) = &mut report.error {
                cut += truncate(error, MAX_ERROR_MANY);
            }
        }
    }
    let mut adds = std::mem::take(&mut response.adds);
    let room = MAX_ANSWER.saturating_sub(serialized_len(response) + NOTE_ROOM);
    // Each add costs its escaped text, its quotes and a comma. The longest are cut first, all to the same
    // length, so that a hook that floods never takes the place of another hook's few words.
    let costs: Vec<usize> = adds.iter().map(|add| escaped_len(add) + 3).collect();
    let share = fair_share(&costs, room);
    for (add, cost) in adds.iter_mut().zip(&costs) {
        if *cost > share {
            let keep = longest_prefix_within(add, share.saturating_sub(3));
            cut += add.len() - keep;
            add.truncate(keep);
        }
    }
    response.adds = adds;
    if cut > 0 {
        response.adds.push(format!(
            "hookd cut {cut} bytes of what the hooks said: an answer is at most {MAX_ANSWER} bytes"
        ));
        tracing::warn!(
            cut,
            "a fire's answer was over {MAX_ANSWER} bytes: the end of what its hooks said was cut"
        );
    }
    cut
}

/// A rewritten input or output over [`MAX_REWRITE`] cannot be cut and must not be dropped: an input
/// dropped runs the call as the hooks rewrote it away from (the call is refused, and the reason says
/// why); an output dropped shows the model what a hook redacted (it is withheld). The engine's fold
/// withholds large outputs, in the tool's shape, before this: here is the last guard of the answer.
fn guard_rewrite_sizes(response: &mut FireResponse) {
    let size = |value: &Option<serde_json::Value>| value.as_ref().map_or(0, json_len);
    let output = size(&response.output);
    if output > MAX_REWRITE {
        // After the tool ran: withheld from the model, never dropped (the model would see the output as
        // it was). The engine withholds these already; this is the last guard.
        response.output = Some(crate::engine::verdict::withheld(&format!(
            "a hook rewrote it to {output} bytes, more than hookd carries ({MAX_REWRITE})"
        )));
        tracing::warn!(output, "a rewritten output too large to answer: withheld");
    }
    let input = size(&response.input);
    if input <= MAX_REWRITE {
        return;
    }
    response.input = None;
    response.refused = true;
    response.permission = None;
    response.reason = Some(format!(
        "the hooks rewrote the tool input to {input} bytes, more than an answer carries \
         ({MAX_REWRITE} bytes); hookd refuses the call rather than let it go on as it was before the rewrite"
    ));
    tracing::warn!(input, "a rewrite too large to answer: the call is refused");
}

/// Whether `response` fits without counting it: each byte of text takes at most 6 once escaped, and what
/// surrounds the texts is small. Nearly every answer is a few hundred bytes, and a fire with no hook
/// costs microseconds: it is not serialized twice for the cap.
fn surely_fits(response: &FireResponse) -> bool {
    const AROUND_EACH: usize = 128;
    if response.input.is_some() || response.output.is_some() {
        return false;
    }
    // Every id taken is at most MAX_ID bytes as JSON (protocol.rs refuses longer ones).
    let id = if response.id.is_some() { MAX_ID } else { 0 };
    let texts = id
        + response.reason.as_ref().map_or(0, String::len)
        + response.adds.iter().map(String::len).sum::<usize>()
        + response
            .hooks
            .iter()
            .map(|report| report.name.len() + report.error.as_ref().map_or(0, String::len))
            .sum::<usize>();
    let items = 1 + response.adds.len() + response.hooks.len();
    texts * 6 + items * AROUND_EACH + AROUND_EACH <= MAX_ANSWER
}

/// The length of `response` as JSON, counted without building it (it may be many megabytes).
fn serialized_len(response: &FireResponse) -> usize {
    json_len(response)
}

/// Cuts `text` to at most `most` bytes, at a character boundary; returns how many bytes went.
fn truncate(text: &mut String, most: usize) -> usize {
    if text.len() <= most {
        return 0;
    }
    let mut end = most;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = text.len() - end;
    text.truncate(end);
    cut
}

/// The bytes one character takes in a JSON string.
fn escaped_char_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

fn escaped_len(text: &str) -> usize {
    text.chars().map(escaped_char_len).sum()
}

/// The largest share such that every cost, cut to at most the share, fits in `room` altogether.
fn fair_share(costs: &[usize], room: usize) -> usize {
    if costs.iter().sum::<usize>() <= room {
        return usize::MAX;
    }
    let mut sorted = costs.to_vec();
    sorted.sort_unstable();
    let mut left = room;
    for (i, cost) in sorted.iter().enumerate() {
        let sharers = sorted.len() - i;
        if cost * sharers > left {
            return left / sharers;
        }
        left -= cost;
    }
    usize::MAX
}

/// The length in bytes of the longest prefix of `text` whose escaped form fits in `room`.
fn longest_prefix_within(text: &str, room: usize) -> usize {
    let mut used = 0;
    for (at, c) in text.char_indices() {
        used += escaped_char_len(c);
        if used > room {
            return at;
        }
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::{HookReport, Outcome, Verdict};

    fn response(refused: bool, adds: Vec<String>) -> FireResponse {
        FireResponse {
            id: Some(1.into()),
            ok: true,
            verdict: Verdict {
                refused,
                reason: refused.then(|| "\u{1}".repeat(1 << 20)),
                adds,
                hooks: vec![HookReport {
                    layer: None,
                    rewrote: None,
                    name: "flood".into(),
                    outcome: Outcome::Refused,
                    exit: Some(2),
                    ms: 1.0,
                    error: None,
                    truncated: true,
                }],
                ..Verdict::default()
            },
        }
    }

    #[test]
    fn escaped_lengths_are_those_serde_writes() {
        for text in ["plain", "\u{1}\u{1f}", "\"\\\n\t", "é€😀", "\u{7f}"] {
            assert_eq!(
                escaped_len(text) + 2,
                serde_json::to_string(text).unwrap().len(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_small_answer_is_left_alone() {
        let mut small = response(false, vec!["branch: main".into()]);
        let before = small.clone();
        assert_eq!(cap(&mut small), 0);
        assert_eq!(small, before);
    }

    #[test]
    fn a_flood_of_control_characters_is_cut_to_fit_and_the_refusal_kept() {
        let flood = "\u{2}".repeat(1 << 20);
        let mut answer = response(true, vec![flood.clone(), "second".into(), flood]);
        assert!(cap(&mut answer) > 0);
        assert!(
            serialized_len(&answer) <= MAX_ANSWER,
            "{}",
            serialized_len(&answer)
        );
        assert!(answer.refused);
        assert_eq!(answer.reason.as_ref().unwrap().len(), MAX_REASON);
        assert!(answer.adds.last().unwrap().starts_with("hookd cut "));
        // What was kept is a prefix of each, in the settings file's order; the short one is whole.
        assert!(answer.adds[0].chars().all(|c| c == '\u{2}'));
        assert_eq!(answer.adds[1], "second");
        assert_eq!(answer.adds[0].len(), answer.adds[2].len());
    }

    #[test]
    fn many_failed_hooks_fit_with_their_errors_cut() {
        let mut answer = response(false, vec!["kept".into()]);
        answer.hooks = (0..3000)
            .map(|n| HookReport {
                layer: None,
                rewrote: None,
                name: format!("hook{n}"),
                outcome: Outcome::Failed,
                exit: Some(1),
                ms: 1.0,
                error: Some(format!("exit 1: {}", "e".repeat(4000))),
                truncated: false,
            })
            .collect();
        assert!(cap(&mut answer) > 0);
        assert!(
            serialized_len(&answer) <= MAX_ANSWER,
            "{}",
            serialized_len(&answer)
        );
        assert_eq!(answer.hooks.len(), 3000, "every hook is still reported");
        assert_eq!(answer.adds[0], "kept");
    }

    /// An allowed response carrying a rewritten `input` (or `output`) of `size` bytes of text.
    fn rewritten(size: usize, output: bool) -> FireResponse {
        let value = serde_json::json!({"command": "echo", "content": "x".repeat(size)});
        let mut response = response(false, vec!["kept".into()]);
        response.verdict = Verdict {
            permission: Some(crate::decision::Permission::Allow),
            input: (!output).then(|| value.clone()),
            output: output.then_some(value),
            reason: Some("fine".into()),
            hooks: vec![HookReport {
                layer: None,
                rewrote: Some(if output {
                    crate::decision::Rewrote::Output
                } else {
                    crate::decision::Rewrote::Input
                }),
                name: "big".into(),
                outcome: Outcome::Allowed,
                exit: Some(0),
                ms: 1.0,
                error: None,
                truncated: false,
            }],
            ..response.verdict
        };
        response
    }

    #[test]
    fn a_rewritten_input_of_2_mib_is_refused_with_no_input_and_says_why() {
        let mut answer = rewritten(2 << 20, false);
        cap(&mut answer);
        assert!(answer.refused, "the call must not go on unrewritten");
        assert_eq!(
            answer.input, None,
            "a rewrite is never cut, only dropped with a refusal"
        );
        assert_eq!(answer.output, None);
        assert_eq!(answer.permission, None, "a refusal has no permission");
        let reason = answer.reason.as_deref().unwrap();
        assert!(
            reason.contains("rewrote the tool input")
                && reason.contains(&format!("{MAX_REWRITE} bytes"))
                && reason.contains("refuses the call"),
            "{reason}"
        );
        let size: usize = reason
            .split("to ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("the rewrite's size is said: {reason}"));
        assert!(size > 2 << 20, "{reason}");
        assert!(serialized_len(&answer) <= MAX_ANSWER);
        assert_eq!(answer.adds, vec!["kept"], "what the hooks added is kept");
        assert_eq!(answer.hooks.len(), 1, "the hook is still reported");
    }

    #[test]
    fn a_rewritten_output_over_the_limit_is_withheld_and_said_so() {
        let mut answer = rewritten(MAX_REWRITE, true);
        cap(&mut answer);
        assert!(!answer.refused, "the tool ran: nothing to refuse");
        let shown = answer.output.as_ref().and_then(|o| o.as_str()).unwrap();
        assert!(
            shown.starts_with("[hookd withheld this tool's output"),
            "{shown}"
        );
    }

    #[test]
    fn a_rewrite_just_under_the_limit_is_kept_whole() {
        let mut answer = rewritten(MAX_REWRITE - 100, false);
        let before = answer.clone();
        assert_eq!(cap(&mut answer), 0);
        assert_eq!(answer, before, "nothing cut, nothing refused");
    }

    #[test]
    fn the_longest_are_cut_to_a_fair_share() {
        assert_eq!(fair_share(&[10, 20], 100), usize::MAX);
        assert_eq!(fair_share(&[10, 100, 100], 110), 50);
        assert_eq!(fair_share(&[10, 100, 40], 90), 40);
        assert_eq!(fair_share(&[100, 100], 10), 5);
    }
}

#[cfg(test)]
mod attack {
    use super::*;

    #[test]
    fn attack_an_oversized_redaction_is_dropped_at_post_tool_use() {
        let mut response = FireResponse {
            id: Some(1.into()),
            ok: true,
            verdict: crate::decision::Verdict {
                output: Some(
                    serde_json::json!({"stdout": "x".repeat(MAX_REWRITE + 10), "stderr": ""}),
                ),
                ..crate::decision::Verdict::default()
            },
        };
        cap(&mut response);
        assert!(
            response.output.is_some(),
            "an output redaction must never become 'refused' with the original output left in place: {:?}",
            response.reason
        );
    }
}
