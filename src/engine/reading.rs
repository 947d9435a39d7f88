//! What one hook said, read from how it ended and what it printed (docs/settings.md, "How a hook's
//! answer is read"): its exit status, its stderr, and its JSON in hookd's short words or any agent's
//! (Claude Code's, Gemini CLI's, Copilot CLI's), so that a refusal written in any of them is heard. Pure
//! code: no I/O, so every row of the table in docs/settings.md has a unit test here. What is read is a
//! [`Heard`], which [`crate::engine::verdict`] folds.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::decision::{Outcome, Permission};
use crate::engine::verdict::{Heard, withheld};
use crate::settings::OnFailure;

/// How a hook's process ended, as the runner saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this status.
    Code(i32),
    /// A signal ended it (not one of ours: that is [`Exit::TimedOut`] or [`Exit::Cancelled`]).
    Signal(i32),
    /// It ran past its timeout and was killed.
    TimedOut(Duration),
    /// It could not be started at all (no such file, not executable...).
    CouldNotStart(String),
    /// It was killed because its answer was no longer wanted (the client left, the daemon is stopping).
    Cancelled(&'static str),
    /// A worker hook answered (a line on its stdout): read as a hook's stdout after exit 0, but with no
    /// exit status to report, since the worker did not exit.
    Answered,
    /// A worker hook could not give an answer (it died, or answered what is not an answer); the text
    /// says what happened.
    Broken(String),
    /// A live hook's client answered and said its hook failed (the answer's `error`, the text here): read
    /// as a hook that exited non-zero is, so what holds back in its answer (a refusal, an ask) stands,
    /// and the rest is its failure, which its `on_failure` decides.
    Failed(String),
}

impl Exit {
    /// The exit status, for the response's `exit` field: absent when the process did not exit by itself.
    pub fn code(&self) -> Option<i32> {
        match self {
            Exit::Code(code) => Some(*code),
            _ => None,
        }
    }
}

/// Everything the reader needs about one run of a hook.
#[derive(Debug, Clone, Copy)]
pub struct Run<'a> {
    pub hook: &'a str,
    pub moment: &'a str,
    pub exit: &'a Exit,
    pub stdout: &'a [u8],
    pub stderr: &'a [u8],
    /// Whether it ran as `shell -c command`: then exits 126 and 127 are the shell's "cannot run it".
    pub via_shell: bool,
    pub on_failure: OnFailure,
}

/// Reads one hook's answer (docs/settings.md, "How a hook's answer is read"), then applies `on_failure` and the rules for empty refusals.
pub fn read(run: Run<'_>) -> Heard {
    let said = read_raw(&run);
    settle(said, &run)
}

/// What the hook said before `on_failure` and the empty-reason rules: a refusal's reason may be missing.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Said {
    Answered(Answered),
    Failed(String),
}

/// The parts of an answer, each as the hook gave it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Answered {
    /// `Some` when it refuses, with its reason if it gave one.
    refusal: Option<Option<String>>,
    /// Ask or allow, with the reason if it gave one.
    permission: Option<(Permission, Option<String>)>,
    adds: Vec<String>,
    input: Option<Value>,
    output: Option<Value>,
}

impl Answered {
    fn adds(text: &str) -> Answered {
        Answered {
            adds: vec![text.to_string()],
            ..Answered::default()
        }
    }
}

fn read_raw(run: &Run<'_>) -> Said {
    let stdout = String::from_utf8_lossy(run.stdout);
    // A byte-order mark (some Windows-born tools write one) is no part of the answer.
    let stdout = stdout.trim().trim_start_matches('\u{feff}').trim_start();
    let code = match run.exit {
        Exit::CouldNotStart(why) => return Said::Failed(format!("could not start: {why}")),
        Exit::TimedOut(after) => {
            return Said::Failed(format!("timed out after {}s", after.as_secs_f64()));
        }
        Exit::Signal(signal) => {
            return Said::Failed(format!("killed by signal {signal}{}", signal_name(*signal)));
        }
        Exit::Cancelled(why) => return Said::Failed(format!("cancelled: {why}")),
        Exit::Broken(why) => return Said::Failed(why.clone()),
        Exit::Code(code) => *code,
        Exit::Answered => 0,
        Exit::Failed(_) => 1,
    };
    // Why a hook that did not exit cleanly failed: its exit and stderr, or what its client said.
    let failure = || match run.exit {
        Exit::Failed(why) => format!("the client said its hook failed: {why}"),
        _ => exit_error(code, run.stderr),
    };
    match code {
        126 | 127 if run.via_shell => Said::Failed(exit_error(code, run.stderr)),
        2 => {
            // A refusal, whatever else the JSON says: only its reason and adds are read.
            let json = parse_object(stdout).and_then(Result::ok);
            let said = json
                .as_ref()
                .map(|o| read_json(o, run.moment))
                .and_then(Result::ok)
                .unwrap_or_default();
            let json_reason = said.refusal.flatten().or_else(|| {
                json.as_ref()
                    .and_then(|o| o.get("reason"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            });
            let stderr = String::from_utf8_lossy(run.stderr).trim().to_string();
            let reason = json_reason
                .filter(|r| !r.trim().is_empty())
                .or_else(|| Some(stderr).filter(|s| !s.is_empty()))
                .or_else(|| Some(stdout.to_string()).filter(|s| !s.is_empty() && json.is_none()));
            Said::Answered(Answered {
                refusal: Some(reason),
                adds: said.adds,
                // A refusal after the tool ran cannot undo it: the hook's rewrite of what the model
                // sees of it (a redaction) still holds.
                output: said.output,
                ..Answered::default()
            })
        }
        0 if stdout.is_empty() => Said::Answered(Answered::default()),
        0 => match parse_object(stdout) {
            Some(Ok(object)) => said_by_json(&object, run.moment),
            Some(Err(e)) => Said::Failed(format!("invalid JSON on stdout: {e}")),
            None => Said::Answered(Answered::adds(stdout)),
        },
        _ => match parse_object(stdout) {
            // Claude Code lets JSON that parses decide, whatever the exit status; but from a hook that
            // did not exit cleanly only what holds back is taken: an allow or a rewrite from a crashed
            // hook is its failure (and `on_failure = "refuse"` refuses).
            Some(Ok(object)) => match said_by_json(&object, run.moment) {
                // An ask holds back: kept, without the rewrite a crashed hook gave beside it.
                Said::Answered(mut said)
                    if said.refusal.is_none()
                        && matches!(said.permission, Some((Permission::Ask, _))) =>
                {
                    said.input = None;
                    said.output = None;
                    Said::Answered(said)
                }
                Said::Answered(said)
                    if said.refusal.is_none()
                        && (matches!(said.permission, Some((Permission::Allow, _)))
                            || said.input.is_some()
                            || said.output.is_some()) =>
                {
                    Said::Failed(failure())
                }
                // A client that said its hook failed has said nothing else but what holds back.
                Said::Answered(said)
                    if said.refusal.is_none() && matches!(run.exit, Exit::Failed(_)) =>
                {
                    Said::Failed(failure())
                }
                said => said,
            },
            _ => Said::Failed(failure()),
        },
    }
}

/// `Some` when stdout is meant as JSON (its first non-space character is `{`): parsed, or why not.
fn parse_object(stdout: &str) -> Option<Result<Map<String, Value>, serde_json::Error>> {
    stdout
        .starts_with('{')
        .then(|| serde_json::from_str::<Map<String, Value>>(stdout))
}

fn said_by_json(object: &Map<String, Value>, moment: &str) -> Said {
    match read_json(object, moment) {
        Ok(answered) => Said::Answered(answered),
        Err(why) => Said::Failed(why),
    }
}

/// hookd's short fields, Claude Code's, and the other agents' where a hook written for them would say
/// the same thing another way (Gemini CLI's `decision: "deny"`, Copilot CLI's flat `permissionDecision`
/// and `modifiedArgs`): a refusal written in any agent's words is heard. `Err` for a rewrite that cannot
/// be one (an input that is not an object): a hook that meant to change the call and cannot be read has
/// failed, never silently let the call go on unchanged.
fn read_json(object: &Map<String, Value>, moment: &str) -> Result<Answered, String> {
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_string);
    let specific = object.get("hookSpecificOutput").and_then(Value::as_object);
    let mut said = Answered::default();
    let refuse = |said: &mut Answered, reason: Option<String>| {
        if said.refusal.as_ref().is_none_or(Option::is_none) {
            said.refusal = Some(reason);
        }
    };
    // A permission word: deny refuses; ask and allow, the strongest kept (an ask over an allow).
    let decide = |said: &mut Answered, word: Option<&str>, reason: Option<String>| match word {
        Some("deny" | "block") => refuse(said, reason),
        Some("ask")
            if said
                .permission
                .as_ref()
                .is_none_or(|(p, _)| *p == Permission::Allow) =>
        {
            said.permission = Some((Permission::Ask, reason));
        }
        Some("allow" | "approve") if said.permission.is_none() => {
            said.permission = Some((Permission::Allow, reason));
        }
        _ => {}
    };
    // What cannot be read is kept to say, unless a refusal (or an ask) in the same answer is read: a
    // hook that refused in one field is never made a failed hook by a mistake in another.
    let mut errors: Vec<String> = Vec::new();
    let mut inputs = vec![object.get("input"), object.get("modifiedArgs")];
    let mut outputs = vec![object.get("output"), object.get("modifiedResult")];
    let (word, reason, input) = decision(object, object, &mut errors);
    decide(&mut said, word, reason);
    inputs.push(input);
    decide(
        &mut said,
        word_or_note(object, "permissionDecision", &mut errors),
        text(object.get("permissionDecisionReason")),
    );
    decide(
        &mut said,
        word_or_note(object, "behavior", &mut errors),
        text(object.get("message")),
    );
    match object.get("hookSpecificOutput") {
        None | Some(Value::Null | Value::Object(_)) => {}
        Some(other) => errors.push(format!(
            "`hookSpecificOutput` is {}, not an object",
            shown_json(other)
        )),
    }
    if let Some(specific) = specific {
        decide(
            &mut said,
            word_or_note(specific, "permissionDecision", &mut errors),
            text(specific.get("permissionDecisionReason")),
        );
        let (word, reason, input) = decision(specific, object, &mut errors);
        decide(&mut said, word, reason);
        inputs.push(input);
        inputs.push(specific.get("updatedInput"));
        inputs.push(specific.get("tool_input"));
        outputs.push(specific.get("updatedToolOutput"));
        outputs.push(specific.get("updatedMCPToolOutput"));
    }
    let mut short = |field: &str| {
        short_field(object, field).unwrap_or_else(|why| {
            errors.push(why);
            None
        })
    };
    let (refused, ask, allow) = (short("refused"), short("ask"), short("allow"));
    if let Some(reason) = refused {
        refuse(&mut said, reason);
    }
    if let Some(reason) = ask {
        decide(&mut said, Some("ask"), reason);
    }
    if let Some(reason) = allow {
        decide(&mut said, Some("allow"), reason);
    }
    // Claude Code's and Gemini CLI's "stop everything", stronger than a deny: read as a refusal.
    if object.get("continue") == Some(&Value::Bool(false)) {
        refuse(
            &mut said,
            text(object.get("stopReason")).or_else(|| text(object.get("reason"))),
        );
    }
    said.adds
        .extend(text(specific.and_then(|s| s.get("additionalContext"))));
    said.adds.extend(text(object.get("adds")));
    said.adds.retain(|t| !t.trim().is_empty());
    said.refusal = said
        .refusal
        .map(|reason| reason.filter(|r| !r.trim().is_empty()));
    if let Some((_, reason)) = &mut said.permission {
        *reason = reason.take().filter(|r| !r.trim().is_empty());
    }
    match one_rewrite(inputs, "input") {
        Ok(None) => {}
        Ok(Some(input)) if !input.is_object() => {
            errors.push("a rewritten tool input must be a JSON object".into())
        }
        Ok(Some(_)) if !crate::tables::moment::rewrites_input(moment) => errors.push(format!(
            "rewrote the tool input at {}, where there is no tool call to rewrite (only at {})",
            crate::tables::moment::shown(moment),
            crate::tables::moment::REWRITES_INPUT.join(" and ")
        )),
        Ok(Some(input)) => said.input = Some(input.clone()),
        Err(why) => errors.push(why),
    }
    match one_rewrite(outputs, "output") {
        Ok(None) => {}
        Ok(Some(_)) if !crate::tables::moment::rewrites_output(moment) => errors.push(format!(
            "rewrote the tool output at {}, where there is no tool result to rewrite (only at {})",
            crate::tables::moment::shown(moment),
            crate::tables::moment::REWRITES_OUTPUT.join(" and ")
        )),
        Ok(Some(output)) => said.output = Some(output.clone()),
        Err(why) => errors.push(why),
    }
    if errors.is_empty() {
        return Ok(said);
    }
    let error = errors.join("; ");
    if said.refusal.is_some() {
        // The refusal stands; nothing of the call runs, so what could not be read changes nothing.
        said.input = None;
        return Ok(said);
    }
    if let Some((Permission::Ask, reason)) = said.permission.take() {
        // An ask beside what cannot be read: held back, as a refusal, rather than asked about a call
        // that may not be the one the hook meant.
        said.refusal = Some(Some(format!(
            "{} (and its answer could not be read whole: {error})",
            reason.unwrap_or_else(|| "the hook asks for approval".into())
        )));
        said.input = None;
        return Ok(said);
    }
    Err(error)
}

/// The `decision` of `holder` (the answer, or its `hookSpecificOutput`): a word (Claude Code's top
/// level, Gemini CLI's) with the `reason` beside it or at the top, or Claude Code's PermissionRequest
/// object with a `behavior`, its `message` and its `updatedInput`, wherever a hook put either.
fn decision<'a>(
    holder: &'a Map<String, Value>,
    answer: &'a Map<String, Value>,
    errors: &mut Vec<String>,
) -> (Option<&'a str>, Option<String>, Option<&'a Value>) {
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_string);
    match holder.get("decision") {
        Some(Value::Object(decision)) => (
            word_or_note(decision, "behavior", errors),
            text(decision.get("message")),
            decision.get("updatedInput"),
        ),
        _ => (
            word_or_note(holder, "decision", errors),
            text(holder.get("reason")).or_else(|| text(answer.get("reason"))),
            None,
        ),
    }
}

/// The one rewrite an answer gives in `fields` (its forms in each agent's words): `None` when none;
/// `Err` when two forms give different values, since hookd cannot know which the hook meant.
fn one_rewrite<'a>(
    fields: Vec<Option<&'a Value>>,
    what: &str,
) -> Result<Option<&'a Value>, String> {
    let mut given = fields.into_iter().flatten().filter(|v| !v.is_null());
    let Some(first) = given.next() else {
        return Ok(None);
    };
    if given.any(|other| other != first) {
        return Err(format!(
            "the answer rewrites the tool {what} twice, differently (in two of its fields)"
        ));
    }
    Ok(Some(first))
}

/// The words a decision field may hold, in any agent's answers.
const DECISION_WORDS: &[&str] = &["deny", "block", "ask", "allow", "approve", "defer"];

/// A decision field (`decision`, `permissionDecision`, `behavior`): absent, `null` or `""` is none; a
/// word of [`DECISION_WORDS`] is that word; anything else is `Err`: a hook whose decision cannot be read
/// has failed, never said nothing (it may have meant a refusal).
fn word<'a>(object: &'a Map<String, Value>, field: &str) -> Result<Option<&'a str>, String> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(word)) if word.is_empty() => Ok(None),
        Some(Value::String(word)) if DECISION_WORDS.contains(&word.as_str()) => Ok(Some(word)),
        Some(other) => Err(format!(
            "`{field}` is {}, not one of {}",
            shown_json(other),
            DECISION_WORDS.join(", ")
        )),
    }
}

/// [`word`], its error noted in `errors` (and read as no word).
fn word_or_note<'a>(
    object: &'a Map<String, Value>,
    field: &str,
    errors: &mut Vec<String>,
) -> Option<&'a str> {
    word(object, field).unwrap_or_else(|why| {
        errors.push(why);
        None
    })
}

/// hookd's short fields `refused`, `ask`, `allow`: `Some(reason)` when given (a string, or `true` with
/// no reason); `None` when absent, `null` or `false`; `Err` for any other value, which may have been
/// meant as a refusal.
fn short_field(object: &Map<String, Value>, field: &str) -> Result<Option<Option<String>>, String> {
    match object.get(field) {
        None | Some(Value::Null) | Some(Value::Bool(false)) => Ok(None),
        Some(Value::Bool(true)) => Ok(Some(None)),
        Some(Value::String(reason)) => Ok(Some(Some(reason.clone()))),
        Some(other) => Err(format!(
            "`{field}` is {}, not a string or true",
            shown_json(other)
        )),
    }
}

/// A JSON value as an error shows it: at most 60 characters.
fn shown_json(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    }
}

fn settle(said: Said, run: &Run<'_>) -> Heard {
    let answered = match said {
        Said::Answered(answered) => answered,
        Said::Failed(error) => {
            return match run.on_failure {
                OnFailure::Ignore => Heard {
                    error: Some(error),
                    ..Heard::new(Outcome::Failed)
                },
                OnFailure::Refuse => Heard {
                    reason: Some(format!("hook {} failed: {error}", run.hook)),
                    // After the tool ran a refusal cannot undo it, and the model would see the output
                    // as it was, which the hook may have been there to redact: withheld instead.
                    output: crate::tables::moment::rewrites_output(run.moment).then(|| {
                        withheld(&format!("hook {} failed and refuses on failure", run.hook))
                    }),
                    error: Some(error),
                    ..Heard::new(Outcome::Refused)
                },
            };
        }
    };
    let Answered {
        refusal,
        permission,
        adds,
        input,
        output,
    } = answered;
    let mut outcome = Heard {
        adds,
        input,
        output,
        ..Heard::new(Outcome::Nothing)
    };
    match refusal {
        Some(Some(reason)) => {
            outcome.kind = Outcome::Refused;
            outcome.reason = Some(reason);
        }
        Some(None) if crate::tables::moment::is_stop(run.moment) => {
            // Sending the agent on with no instruction would only loop it: treat it as saying nothing.
            outcome.warning = Some(format!(
                "hook {} refused {} without a reason; counted as nothing",
                run.hook, run.moment
            ));
        }
        Some(None) => {
            outcome.kind = Outcome::Refused;
            outcome.reason = Some(format!("hook {} refused", run.hook));
        }
        None => match permission {
            // Never read from a hook (its words are allow and ask); were it, it would hold back.
            Some((Permission::Ask | Permission::Unknown, reason)) => {
                outcome.kind = Outcome::Asked;
                outcome.reason =
                    Some(reason.unwrap_or_else(|| format!("hook {} asks for approval", run.hook)));
            }
            Some((Permission::Allow, reason)) => {
                outcome.kind = Outcome::Allowed;
                outcome.reason = reason;
            }
            None => {}
        },
    }
    if outcome.kind == Outcome::Nothing {
        outcome.kind = if outcome.rewrote().is_some() {
            Outcome::Rewrote
        } else if !outcome.adds.is_empty() {
            Outcome::Adds
        } else {
            Outcome::Nothing
        };
    }
    outcome
}

/// `exit N` and the first line of stderr, when there is one.
fn exit_error(code: i32, stderr: &[u8]) -> String {
    let stderr = String::from_utf8_lossy(stderr);
    match stderr.lines().map(str::trim).find(|line| !line.is_empty()) {
        Some(line) => format!("exit {code}: {line}"),
        None => format!("exit {code}"),
    }
}

fn signal_name(signal: i32) -> String {
    nix::sys::signal::Signal::try_from(signal)
        .map(|s| format!(" ({})", s.as_str()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::Rewrote;

    struct Case {
        moment: &'static str,
        exit: Exit,
        stdout: &'static str,
        stderr: &'static str,
        via_shell: bool,
        on_failure: OnFailure,
    }

    fn case(exit: Exit, stdout: &'static str) -> Case {
        Case {
            moment: "PreToolUse",
            exit,
            stdout,
            stderr: "",
            via_shell: true,
            on_failure: OnFailure::Ignore,
        }
    }

    impl Case {
        fn stderr(mut self, stderr: &'static str) -> Case {
            self.stderr = stderr;
            self
        }
        fn at(mut self, moment: &'static str) -> Case {
            self.moment = moment;
            self
        }
        fn argv(mut self) -> Case {
            self.via_shell = false;
            self
        }
        fn refuse_on_failure(mut self) -> Case {
            self.on_failure = OnFailure::Refuse;
            self
        }
        fn read(&self) -> Heard {
            read(Run {
                hook: "guard",
                moment: self.moment,
                exit: &self.exit,
                stdout: self.stdout.as_bytes(),
                stderr: self.stderr.as_bytes(),
                via_shell: self.via_shell,
                on_failure: self.on_failure,
            })
        }
    }

    #[test]
    fn a_live_clients_reported_failure_keeps_only_what_holds_back() {
        let failed = || Exit::Failed("it raised".into());
        let said = case(failed(), r#"{"error":"it raised"}"#).read();
        assert_eq!(
            failed_with(&said),
            "the client said its hook failed: it raised"
        );
        // An allow, a rewrite or adds beside it are its failure; with refuse, a refusal naming it.
        let said = case(
            failed(),
            r#"{"allow":"ok","input":{"command":"x"},"error":"e"}"#,
        )
        .read();
        assert!(said.input.is_none());
        failed_with(&said);
        let said = case(failed(), r#"{"adds":"note","error":"e"}"#)
            .refuse_on_failure()
            .read();
        assert!(refused_with(&said).contains("it raised"), "{said:?}");
        // A refusal or an ask beside it stands.
        let said = case(failed(), r#"{"refused":"no","error":"e"}"#).read();
        assert_eq!(refused_with(&said), "no");
        let said = case(failed(), r#"{"ask":"a person","error":"e"}"#).read();
        assert_eq!(said.kind, Outcome::Asked, "{said:?}");
    }

    fn failed_with(outcome: &Heard) -> &str {
        assert_eq!(outcome.kind, Outcome::Failed, "{outcome:?}");
        outcome.error.as_deref().unwrap()
    }

    fn refused_with(outcome: &Heard) -> &str {
        assert_eq!(outcome.kind, Outcome::Refused, "{outcome:?}");
        outcome.reason.as_deref().unwrap()
    }

    // Row: could not be started, or the shell exited 126 / 127.
    #[test]
    fn a_hook_that_could_not_start_failed() {
        let outcome = case(Exit::CouldNotStart("no such file or directory".into()), "")
            .argv()
            .read();
        assert_eq!(
            failed_with(&outcome),
            "could not start: no such file or directory"
        );
        let outcome = case(Exit::Code(127), "")
            .stderr("sh: 1: nope: not found\n")
            .read();
        assert_eq!(failed_with(&outcome), "exit 127: sh: 1: nope: not found");
        let outcome = case(Exit::Code(126), "{\"refused\":\"x\"}").read();
        assert_eq!(
            failed_with(&outcome),
            "exit 126",
            "the shell's 126 is not the hook's answer"
        );
    }

    #[test]
    fn an_argv_program_exiting_127_is_an_ordinary_exit() {
        let outcome = case(Exit::Code(127), "{\"adds\":\"x\"}").argv().read();
        assert_eq!(outcome.kind, Outcome::Adds);
    }

    // Row: ran past its timeout.
    #[test]
    fn a_timed_out_hook_failed() {
        assert_eq!(
            failed_with(&case(Exit::TimedOut(Duration::from_secs(5)), "").read()),
            "timed out after 5s"
        );
        assert_eq!(
            failed_with(&case(Exit::TimedOut(Duration::from_millis(500)), "").read()),
            "timed out after 0.5s"
        );
    }

    // Row: killed by a signal.
    #[test]
    fn a_hook_killed_by_a_signal_failed() {
        assert_eq!(
            failed_with(&case(Exit::Signal(9), "{\"refused\":\"x\"}").read()),
            "killed by signal 9 (SIGKILL)"
        );
    }

    // Row: exit 2, each source of the reason in turn.
    #[test]
    fn exit_2_refuses_with_the_json_reason_first() {
        let outcome = case(Exit::Code(2), "{\"reason\": \"from json\"}")
            .stderr("from stderr")
            .read();
        assert_eq!(refused_with(&outcome), "from json");
        let outcome = case(
            Exit::Code(2),
            "{\"decision\":\"block\",\"reason\":\"blocked\"}",
        )
        .stderr("e")
        .read();
        assert_eq!(refused_with(&outcome), "blocked");
    }

    #[test]
    fn exit_2_refuses_with_stderr_then_stdout_then_a_default() {
        assert_eq!(
            refused_with(&case(Exit::Code(2), "out").stderr("  no rm -rf\n").read()),
            "no rm -rf"
        );
        assert_eq!(refused_with(&case(Exit::Code(2), " out \n").read()), "out");
        assert_eq!(
            refused_with(&case(Exit::Code(2), "").read()),
            "hook guard refused"
        );
        assert_eq!(
            refused_with(&case(Exit::Code(2), "{\"other\":1}").read()),
            "hook guard refused"
        );
    }

    // Row: exit 0 with nothing to say.
    #[test]
    fn exit_0_with_blank_stdout_says_nothing() {
        for stdout in ["", " \n\t "] {
            assert_eq!(case(Exit::Code(0), stdout).read().kind, Outcome::Nothing);
        }
        assert_eq!(
            case(Exit::Code(0), "").stderr("noise").read().kind,
            Outcome::Nothing
        );
    }

    // Row: exit 0 with JSON, every form.
    #[test]
    fn exit_0_json_forms_refuse() {
        let forms = [
            r#"{"decision": "block", "reason": "R"}"#,
            r#"{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "R"}}"#,
            r#"{"hookSpecificOutput": {"decision": {"behavior": "deny", "message": "R"}}}"#,
            r#"{"refused": "R"}"#,
            r#"  {"refused": "R", "unknown": [1, 2]}"#,
        ];
        for form in forms {
            assert_eq!(
                refused_with(&case(Exit::Code(0), form).read()),
                "R",
                "{form}"
            );
        }
    }

    #[test]
    fn exit_0_json_forms_add() {
        for form in [
            r#"{"hookSpecificOutput": {"additionalContext": "T"}}"#,
            r#"{"adds": "T"}"#,
        ] {
            let outcome = case(Exit::Code(0), form).read();
            assert_eq!(
                (outcome.kind, outcome.adds),
                (Outcome::Adds, vec!["T".to_string()]),
                "{form}"
            );
        }
    }

    #[test]
    fn exit_0_json_refusal_and_adds_together() {
        let outcome = case(Exit::Code(0), r#"{"refused": "R", "adds": "T"}"#).read();
        assert_eq!(refused_with(&outcome), "R");
        assert_eq!(outcome.adds, vec!["T"]);
    }

    #[test]
    fn exit_0_json_without_known_fields_says_nothing() {
        for form in [
            "{}",
            r#"{"decision": "defer"}"#,
            r#"{"hookSpecificOutput": {"permissionDecision": "defer"}}"#,
            r#"{"continue": true}"#,
            r#"{"refused": false}"#,
            r#"{"allow": false}"#,
            r#"{"input": null}"#,
        ] {
            assert_eq!(
                case(Exit::Code(0), form).read().kind,
                Outcome::Nothing,
                "{form}"
            );
        }
    }

    #[test]
    fn exit_0_json_refusal_without_reason_gets_one() {
        assert_eq!(
            refused_with(&case(Exit::Code(0), r#"{"decision": "block"}"#).read()),
            "hook guard refused"
        );
        assert_eq!(
            refused_with(&case(Exit::Code(0), r#"{"refused": true}"#).read()),
            "hook guard refused"
        );
    }

    #[test]
    fn exit_0_invalid_json_failed_never_nothing() {
        let outcome = case(Exit::Code(0), "{\"refused\": ").read();
        assert!(
            failed_with(&outcome).starts_with("invalid JSON on stdout"),
            "{outcome:?}"
        );
    }

    // Row: exit 0 with any other stdout.
    #[test]
    fn exit_0_text_adds_it_trimmed() {
        let outcome = case(Exit::Code(0), "\n branch: main \n").read();
        assert_eq!(
            (outcome.kind, outcome.adds),
            (Outcome::Adds, vec!["branch: main".to_string()])
        );
        assert_eq!(
            case(Exit::Code(0), "[1, 2]").read().kind,
            Outcome::Adds,
            "only `{{` starts JSON"
        );
    }

    // Row: any other exit with JSON that parses.
    #[test]
    fn other_exits_with_json_are_read_as_json() {
        assert_eq!(
            refused_with(&case(Exit::Code(1), r#"{"decision":"block","reason":"R"}"#).read()),
            "R"
        );
        assert_eq!(
            case(Exit::Code(3), r#"{"adds":"T"}"#).read().adds,
            vec!["T"]
        );
        assert_eq!(case(Exit::Code(1), "{}").read().kind, Outcome::Nothing);
    }

    // Row: any other exit.
    #[test]
    fn other_exits_failed_with_the_first_stderr_line() {
        assert_eq!(
            failed_with(&case(Exit::Code(1), "text").stderr("\nfirst\nsecond").read()),
            "exit 1: first"
        );
        assert_eq!(failed_with(&case(Exit::Code(3), "{bad").read()), "exit 3");
    }

    #[test]
    fn on_failure_refuse_turns_a_failure_into_a_refusal() {
        let outcome = case(Exit::Code(1), "")
            .stderr("boom")
            .refuse_on_failure()
            .read();
        assert_eq!(refused_with(&outcome), "hook guard failed: exit 1: boom");
        assert_eq!(outcome.error.as_deref(), Some("exit 1: boom"));
        let outcome = case(Exit::TimedOut(Duration::from_secs(5)), "")
            .refuse_on_failure()
            .read();
        assert_eq!(
            refused_with(&outcome),
            "hook guard failed: timed out after 5s"
        );
        assert_eq!(
            case(Exit::Code(0), "ok").refuse_on_failure().read().kind,
            Outcome::Adds
        );
    }

    #[test]
    fn a_stop_refusal_with_nothing_to_say_is_nothing() {
        for moment in ["Stop", "SubagentStop"] {
            let outcome = case(Exit::Code(2), "").at(moment).read();
            assert_eq!(outcome.kind, Outcome::Nothing);
            assert!(outcome.warning.is_some());
            let outcome = case(Exit::Code(0), r#"{"decision":"block","adds":"T"}"#)
                .at(moment)
                .read();
            assert_eq!(
                (outcome.kind, outcome.adds),
                (Outcome::Adds, vec!["T".to_string()])
            );
        }
        assert_eq!(
            refused_with(
                &case(Exit::Code(2), "")
                    .stderr("tests fail")
                    .at("Stop")
                    .read()
            ),
            "tests fail"
        );
        let failed_stop = case(Exit::Code(1), "")
            .at("Stop")
            .refuse_on_failure()
            .read();
        assert_eq!(refused_with(&failed_stop), "hook guard failed: exit 1");
    }

    fn kind_and_reason(form: &str, moment: &'static str) -> (Outcome, Option<String>) {
        let outcome = case(Exit::Code(0), Box::leak(form.to_string().into_boxed_str()))
            .at(moment)
            .read();
        (outcome.kind, outcome.reason)
    }

    #[test]
    fn every_agents_words_for_allow_are_an_allow() {
        for form in [
            r#"{"allow": true}"#,
            r#"{"hookSpecificOutput": {"permissionDecision": "allow"}}"#,
            r#"{"decision": "approve"}"#,
            r#"{"decision": "allow"}"#,
            r#"{"permissionDecision": "allow"}"#,
            r#"{"hookSpecificOutput": {"decision": {"behavior": "allow"}}}"#,
            r#"{"behavior": "allow"}"#,
        ] {
            assert_eq!(
                kind_and_reason(form, "PreToolUse"),
                (Outcome::Allowed, None),
                "{form}"
            );
        }
        assert_eq!(
            kind_and_reason(r#"{"allow": "read-only"}"#, "PreToolUse"),
            (Outcome::Allowed, Some("read-only".into()))
        );
        assert_eq!(
            kind_and_reason(
                r#"{"hookSpecificOutput": {"permissionDecision": "allow", "permissionDecisionReason": " "}}"#,
                "PreToolUse"
            ),
            (Outcome::Allowed, None),
            "a blank reason is none"
        );
    }

    #[test]
    fn every_agents_words_for_ask_are_an_ask_with_a_reason() {
        for form in [
            r#"{"ask": "R"}"#,
            r#"{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "R"}}"#,
            r#"{"decision": "ask", "reason": "R"}"#,
            r#"{"permissionDecision": "ask", "permissionDecisionReason": "R"}"#,
        ] {
            assert_eq!(
                kind_and_reason(form, "PreToolUse"),
                (Outcome::Asked, Some("R".into())),
                "{form}"
            );
        }
        assert_eq!(
            kind_and_reason(r#"{"ask": true}"#, "PreToolUse"),
            (Outcome::Asked, Some("hook guard asks for approval".into()))
        );
    }

    #[test]
    fn every_agents_words_for_deny_refuse() {
        for form in [
            r#"{"decision": "deny", "reason": "R"}"#,
            r#"{"permissionDecision": "deny", "permissionDecisionReason": "R"}"#,
            r#"{"behavior": "deny", "message": "R"}"#,
        ] {
            assert_eq!(
                kind_and_reason(form, "PreToolUse"),
                (Outcome::Refused, Some("R".into())),
                "{form}"
            );
        }
    }

    #[test]
    fn in_one_answer_a_refusal_beats_an_ask_and_an_ask_an_allow() {
        assert_eq!(
            kind_and_reason(
                r#"{"allow": true, "ask": "A", "refused": "R"}"#,
                "PreToolUse"
            ),
            (Outcome::Refused, Some("R".into()))
        );
        assert_eq!(
            kind_and_reason(
                r#"{"hookSpecificOutput": {"permissionDecision": "allow"}, "ask": "A"}"#,
                "PreToolUse"
            ),
            (Outcome::Asked, Some("A".into()))
        );
        assert_eq!(
            kind_and_reason(r#"{"ask": "A", "allow": "L"}"#, "PreToolUse"),
            (Outcome::Asked, Some("A".into()))
        );
    }

    #[test]
    fn exit_2_refuses_whatever_else_the_json_says() {
        let outcome = case(
            Exit::Code(2),
            r#"{"allow": true, "input": {"command": "x"}}"#,
        )
        .stderr("no")
        .read();
        assert_eq!(refused_with(&outcome), "no");
        assert_eq!(outcome.input, None, "a refusal's rewrite is not read");
    }

    #[test]
    fn every_agents_words_for_a_rewritten_input_are_read() {
        for form in [
            r#"{"input": {"command": "x"}}"#,
            r#"{"hookSpecificOutput": {"updatedInput": {"command": "x"}}}"#,
            r#"{"hookSpecificOutput": {"tool_input": {"command": "x"}}}"#,
            r#"{"modifiedArgs": {"command": "x"}}"#,
        ] {
            let outcome = case(Exit::Code(0), Box::leak(form.to_string().into_boxed_str())).read();
            assert_eq!(outcome.kind, Outcome::Rewrote, "{form}");
            assert_eq!(
                outcome.input,
                Some(serde_json::json!({"command": "x"})),
                "{form}"
            );
            assert_eq!(outcome.rewrote(), Some(Rewrote::Input));
        }
        let outcome = case(
            Exit::Code(0),
            r#"{"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": "x"}}}"#,
        )
        .read();
        assert_eq!(
            outcome.kind,
            Outcome::Allowed,
            "an allow that rewrites is an allow"
        );
        assert!(outcome.input.is_some());
        let outcome = case(
            Exit::Code(0),
            r#"{"hookSpecificOutput": {"decision": {"behavior": "allow", "updatedInput": {"a": 1}}}}"#,
        )
        .at("PermissionRequest")
        .read();
        assert_eq!(outcome.input, Some(serde_json::json!({"a": 1})));
    }

    #[test]
    fn a_rewrite_that_cannot_be_one_fails_never_passes_unchanged() {
        let outcome = case(Exit::Code(0), r#"{"input": "rm -rf x"}"#).read();
        assert!(failed_with(&outcome).contains("must be a JSON object"));
        let outcome = case(Exit::Code(0), r#"{"input": {"prompt": "x"}}"#)
            .at("UserPromptSubmit")
            .read();
        assert!(failed_with(&outcome).contains("no tool call to rewrite"));
        let outcome = case(Exit::Code(0), r#"{"output": "x"}"#).read();
        assert!(failed_with(&outcome).contains("no tool result to rewrite"));
        let outcome = case(Exit::Code(0), r#"{"input": [1]}"#)
            .refuse_on_failure()
            .read();
        assert_eq!(
            outcome.kind,
            Outcome::Refused,
            "a guard that cannot be read refuses"
        );
    }

    #[test]
    fn a_rewritten_output_is_read_at_post_tool_use() {
        for form in [
            r#"{"output": {"stdout": "x"}}"#,
            r#"{"hookSpecificOutput": {"updatedToolOutput": {"stdout": "x"}}}"#,
            r#"{"hookSpecificOutput": {"updatedMCPToolOutput": {"stdout": "x"}}}"#,
        ] {
            let outcome = case(Exit::Code(0), Box::leak(form.to_string().into_boxed_str()))
                .at("PostToolUse")
                .read();
            assert_eq!(outcome.kind, Outcome::Rewrote, "{form}");
            assert_eq!(outcome.output, Some(serde_json::json!({"stdout": "x"})));
            assert_eq!(outcome.rewrote(), Some(Rewrote::Output));
        }
    }

    #[test]
    fn a_decision_is_read_wherever_a_hook_put_it() {
        for form in [
            r#"{"decision": {"behavior": "deny", "message": "R"}}"#,
            r#"{"hookSpecificOutput": {"decision": "deny", "reason": "R"}}"#,
            r#"{"hookSpecificOutput": {"decision": "block"}, "reason": "R"}"#,
        ] {
            assert_eq!(
                kind_and_reason(form, "PreToolUse"),
                (Outcome::Refused, Some("R".into())),
                "{form}"
            );
        }
        let outcome = case(Exit::Code(0), r#"{"hookSpecificOutput": "deny"}"#).read();
        assert!(failed_with(&outcome).contains("`hookSpecificOutput` is \"deny\""));
    }

    #[test]
    fn a_decision_that_cannot_be_read_fails_never_says_nothing() {
        for stdout in [
            r#"{"refused": 1}"#,
            r#"{"refused": {"reason": "rm -rf"}}"#,
            r#"{"decision": ["deny"], "reason": "x"}"#,
            r#"{"decision": "denied"}"#,
            r#"{"ask": 1}"#,
            r#"{"hookSpecificOutput": {"permissionDecision": "nope"}}"#,
        ] {
            let outcome = case(
                Exit::Code(0),
                Box::leak(stdout.to_string().into_boxed_str()),
            )
            .read();
            assert_eq!(outcome.kind, Outcome::Failed, "{stdout}: {outcome:?}");
            let outcome = case(
                Exit::Code(0),
                Box::leak(stdout.to_string().into_boxed_str()),
            )
            .refuse_on_failure()
            .read();
            assert_eq!(outcome.kind, Outcome::Refused, "{stdout}: {outcome:?}");
        }
    }
}

#[cfg(test)]
mod attack {
    use super::*;

    fn read_at(moment: &str, exit: Exit, stdout: &str) -> Heard {
        read(Run {
            hook: "guard",
            moment,
            exit: &exit,
            stdout: stdout.as_bytes(),
            stderr: b"",
            via_shell: true,
            on_failure: OnFailure::Ignore,
        })
    }

    #[test]
    fn attack_deny_with_a_bad_input_rewrite_is_lost() {
        let outcome = read_at(
            "PreToolUse",
            Exit::Code(0),
            r#"{"decision":"deny","reason":"never rm -rf","input":"rm -rf /"}"#,
        );
        assert_eq!(outcome.kind, Outcome::Refused, "{outcome:?}");
    }

    #[test]
    fn attack_refusal_with_output_at_pretooluse_is_lost() {
        let outcome = read_at(
            "PreToolUse",
            Exit::Code(0),
            r#"{"refused":"secret in the command","output":"whatever"}"#,
        );
        assert_eq!(outcome.kind, Outcome::Refused, "{outcome:?}");
    }

    #[test]
    fn attack_prompt_block_with_an_input_field_is_lost() {
        let outcome = read_at(
            "UserPromptSubmit",
            Exit::Code(0),
            r#"{"decision":"block","reason":"no secrets in prompts","input":{"prompt":"x"}}"#,
        );
        assert_eq!(outcome.kind, Outcome::Refused, "{outcome:?}");
    }

    #[test]
    fn attack_ask_with_a_bad_input_rewrite_is_lost() {
        let outcome = read_at(
            "PreToolUse",
            Exit::Code(0),
            r#"{"permissionDecision":"ask","permissionDecisionReason":"sure?","modifiedArgs":"{\"command\":\"ls\"}"}"#,
        );
        // Held back as a refusal: asked about, the call would run as the hook did not mean it.
        assert_eq!(outcome.kind, Outcome::Refused, "{outcome:?}");
        assert!(outcome.reason.unwrap().starts_with("sure?"));
    }

    #[test]
    fn attack_bom_before_json_refusal_is_lost() {
        let outcome = read_at("PreToolUse", Exit::Code(0), "\u{feff}{\"refused\":\"no\"}");
        assert_eq!(outcome.kind, Outcome::Refused, "{outcome:?}");
    }

    #[test]
    fn attack_empty_input_shadows_updated_input() {
        let outcome = read_at(
            "PreToolUse",
            Exit::Code(0),
            r#"{"input":{},"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"ls"}}}"#,
        );
        // Two different rewrites in one answer: either the real one is used, or the hook failed (refuse
        // under on_failure=refuse) -- never the empty one kept silently.
        assert_ne!(outcome.input, Some(serde_json::json!({})), "{outcome:?}");
    }
    #[test]
    fn attack_continue_false_is_not_heard() {
        let outcome = read_at(
            "PreToolUse",
            Exit::Code(0),
            r#"{"continue": false, "stopReason": "credentials in the command: stopping"}"#,
        );
        assert_eq!(outcome.kind, Outcome::Refused, "{outcome:?}");
    }

    #[test]
    fn attack_copilot_modified_result_is_not_heard() {
        let outcome = read_at(
            "PostToolUse",
            Exit::Code(0),
            r#"{"modifiedResult": {"textResultForLlm": "token=[REDACTED]", "resultType": "success"}}"#,
        );
        assert!(
            outcome.output.is_some() || outcome.kind == Outcome::Failed,
            "{outcome:?}"
        );
    }

    #[test]
    fn attack_exit_1_with_an_allow_beats_on_failure_refuse() {
        let exit = Exit::Code(1);
        let outcome = read(Run {
            hook: "guard",
            moment: "PreToolUse",
            exit: &exit,
            stdout: br#"{"allow": true}"#,
            stderr: b"Traceback (most recent call last): ...",
            via_shell: true,
            on_failure: OnFailure::Refuse,
        });
        assert_eq!(outcome.kind, Outcome::Refused, "{outcome:?}");
    }
    #[test]
    fn attack_a_refusal_of_the_wrong_type_is_silently_nothing() {
        for stdout in [
            r#"{"refused": 1}"#,
            r#"{"refused": {"reason": "rm -rf"}}"#,
            r#"{"decision": ["deny"], "reason": "x"}"#,
            r#"{"ask": 1}"#,
        ] {
            let outcome = read_at("PreToolUse", Exit::Code(0), stdout);
            assert!(
                matches!(
                    outcome.kind,
                    Outcome::Refused | Outcome::Asked | Outcome::Failed
                ),
                "{stdout}: {outcome:?}"
            );
        }
    }
}
