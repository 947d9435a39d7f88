//! What one hook said, read from how it ended and what it printed (docs/settings.md, "How a hook's
//! answer is read"), and the one verdict folded from every hook's outcome (docs/settings.md, "The
//! verdict"). Pure code: no I/O, so every row of the table in docs/settings.md has a unit test here.

use std::time::Duration;

use serde_json::{Map, Value};

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

/// The four things a hook can say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Nothing,
    Adds,
    Refused,
    Failed,
}

/// What one hook said, ready to be folded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub kind: Kind,
    /// Set exactly when `kind` is [`Kind::Refused`]; never empty, so the agent is always told something.
    pub reason: Option<String>,
    /// Context the hook adds, in the order it gave them.
    pub adds: Vec<String>,
    /// What went wrong, when the hook failed (also kept when `on_failure = "refuse"` made it a refusal).
    pub error: Option<String>,
    /// Something the daemon should log about this answer (a Stop refusal with nothing to say).
    pub warning: Option<String>,
}

impl Outcome {
    fn new(kind: Kind) -> Outcome {
        Outcome {
            kind,
            reason: None,
            adds: Vec::new(),
            error: None,
            warning: None,
        }
    }
}

/// The one answer for a fire.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Verdict {
    pub refused: bool,
    pub reason: Option<String>,
    pub adds: Vec<String>,
}

/// Folds outcomes, given in the settings file's order, into the verdict: the first refusing hook's reason,
/// and every hook's adds in that order. The order the hooks finished in never matters.
pub fn fold<'a>(outcomes: impl IntoIterator<Item = &'a Outcome>) -> Verdict {
    let mut verdict = Verdict::default();
    for outcome in outcomes {
        if outcome.kind == Kind::Refused && !verdict.refused {
            verdict.refused = true;
            verdict.reason = outcome.reason.clone();
        }
        verdict.adds.extend(outcome.adds.iter().cloned());
    }
    verdict
}

/// Reads one hook's answer (docs/settings.md, "How a hook's answer is read"), then applies `on_failure` and the rules for empty refusals.
pub fn read(run: Run<'_>) -> Outcome {
    let said = read_raw(&run);
    settle(said, &run)
}

/// What the hook said before `on_failure` and the empty-reason rules: a refusal's reason may be missing.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Said {
    Nothing,
    Adds(Vec<String>),
    Refused {
        reason: Option<String>,
        adds: Vec<String>,
    },
    Failed(String),
}

fn read_raw(run: &Run<'_>) -> Said {
    let stdout = String::from_utf8_lossy(run.stdout);
    let stdout = stdout.trim();
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
    };
    match code {
        126 | 127 if run.via_shell => Said::Failed(exit_error(code, run.stderr)),
        2 => {
            let json = parse_object(stdout).and_then(Result::ok);
            let (refusal, adds) = json.as_ref().map(read_json).unwrap_or_default();
            let json_reason = refusal.flatten().or_else(|| {
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
            Said::Refused { reason, adds }
        }
        0 if stdout.is_empty() => Said::Nothing,
        0 => match parse_object(stdout) {
            Some(Ok(object)) => said_by_json(&object),
            Some(Err(e)) => Said::Failed(format!("invalid JSON on stdout: {e}")),
            None => Said::Adds(vec![stdout.to_string()]),
        },
        _ => match parse_object(stdout) {
            // Claude Code lets JSON that parses decide, whatever the exit status.
            Some(Ok(object)) => said_by_json(&object),
            _ => Said::Failed(exit_error(code, run.stderr)),
        },
    }
}

/// `Some` when stdout is meant as JSON (its first non-space character is `{`): parsed, or why not.
fn parse_object(stdout: &str) -> Option<Result<Map<String, Value>, serde_json::Error>> {
    stdout
        .starts_with('{')
        .then(|| serde_json::from_str::<Map<String, Value>>(stdout))
}

fn said_by_json(object: &Map<String, Value>) -> Said {
    match read_json(object) {
        (Some(reason), adds) => Said::Refused { reason, adds },
        (None, adds) if !adds.is_empty() => Said::Adds(adds),
        (None, _) => Said::Nothing,
    }
}

/// Claude Code's JSON fields and the daemon's short ones: `(Some(reason?))` when it refuses, and its adds.
fn read_json(object: &Map<String, Value>) -> (Option<Option<String>>, Vec<String>) {
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_string);
    let specific = object.get("hookSpecificOutput").and_then(Value::as_object);
    let mut refusal: Option<Option<String>> = None;
    let mut refuse = |reason: Option<String>| {
        if refusal.as_ref().is_none_or(Option::is_none) {
            refusal = Some(reason);
        }
    };
    if object.get("decision").and_then(Value::as_str) == Some("block") {
        refuse(text(object.get("reason")));
    }
    if let Some(specific) = specific {
        if specific.get("permissionDecision").and_then(Value::as_str) == Some("deny") {
            refuse(text(specific.get("permissionDecisionReason")));
        }
        let decision = specific.get("decision").and_then(Value::as_object);
        if let Some(decision) =
            decision.filter(|d| d.get("behavior").and_then(Value::as_str) == Some("deny"))
        {
            refuse(text(decision.get("message")));
        }
    }
    match object.get("refused") {
        Some(Value::String(reason)) => refuse(Some(reason.clone())),
        Some(Value::Bool(true)) => refuse(None),
        _ => {}
    }
    let mut adds = Vec::new();
    adds.extend(text(specific.and_then(|s| s.get("additionalContext"))));
    adds.extend(text(object.get("adds")));
    adds.retain(|t| !t.trim().is_empty());
    let refusal = refusal.map(|reason| reason.filter(|r| !r.trim().is_empty()));
    (refusal, adds)
}

fn settle(said: Said, run: &Run<'_>) -> Outcome {
    match said {
        Said::Nothing => Outcome::new(Kind::Nothing),
        Said::Adds(adds) => Outcome {
            adds,
            ..Outcome::new(Kind::Adds)
        },
        Said::Refused {
            reason: Some(reason),
            adds,
        } => Outcome {
            reason: Some(reason),
            adds,
            ..Outcome::new(Kind::Refused)
        },
        Said::Refused { reason: None, adds } if crate::moment::is_stop(run.moment) => {
            // Sending the agent on with no instruction would only loop it: treat it as saying nothing.
            let kind = if adds.is_empty() {
                Kind::Nothing
            } else {
                Kind::Adds
            };
            Outcome {
                adds,
                warning: Some(format!(
                    "hook {} refused {} without a reason; counted as nothing",
                    run.hook, run.moment
                )),
                ..Outcome::new(kind)
            }
        }
        Said::Refused { reason: None, adds } => Outcome {
            reason: Some(format!("hook {} refused", run.hook)),
            adds,
            ..Outcome::new(Kind::Refused)
        },
        Said::Failed(error) => match run.on_failure {
            OnFailure::Ignore => Outcome {
                error: Some(error),
                ..Outcome::new(Kind::Failed)
            },
            OnFailure::Refuse => Outcome {
                reason: Some(format!("hook {} failed: {error}", run.hook)),
                error: Some(error),
                ..Outcome::new(Kind::Refused)
            },
        },
    }
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
        fn read(&self) -> Outcome {
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

    fn failed_with(outcome: &Outcome) -> &str {
        assert_eq!(outcome.kind, Kind::Failed, "{outcome:?}");
        outcome.error.as_deref().unwrap()
    }

    fn refused_with(outcome: &Outcome) -> &str {
        assert_eq!(outcome.kind, Kind::Refused, "{outcome:?}");
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
        assert_eq!(outcome.kind, Kind::Adds);
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
            assert_eq!(case(Exit::Code(0), stdout).read().kind, Kind::Nothing);
        }
        assert_eq!(
            case(Exit::Code(0), "").stderr("noise").read().kind,
            Kind::Nothing
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
                (Kind::Adds, vec!["T".to_string()]),
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
            r#"{"decision": "approve"}"#,
            r#"{"continue": true}"#,
            r#"{"refused": false}"#,
        ] {
            assert_eq!(
                case(Exit::Code(0), form).read().kind,
                Kind::Nothing,
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
            (Kind::Adds, vec!["branch: main".to_string()])
        );
        assert_eq!(
            case(Exit::Code(0), "[1, 2]").read().kind,
            Kind::Adds,
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
        assert_eq!(case(Exit::Code(1), "{}").read().kind, Kind::Nothing);
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
            Kind::Adds
        );
    }

    #[test]
    fn a_stop_refusal_with_nothing_to_say_is_nothing() {
        for moment in ["Stop", "SubagentStop"] {
            let outcome = case(Exit::Code(2), "").at(moment).read();
            assert_eq!(outcome.kind, Kind::Nothing);
            assert!(outcome.warning.is_some());
            let outcome = case(Exit::Code(0), r#"{"decision":"block","adds":"T"}"#)
                .at(moment)
                .read();
            assert_eq!(
                (outcome.kind, outcome.adds),
                (Kind::Adds, vec!["T".to_string()])
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

    fn outcome(kind: Kind, reason: Option<&str>, adds: &[&str]) -> Outcome {
        Outcome {
            kind,
            reason: reason.map(String::from),
            adds: adds.iter().map(|s| s.to_string()).collect(),
            error: None,
            warning: None,
        }
    }

    #[test]
    fn the_verdict_takes_the_first_refusal_in_settings_order() {
        let outcomes = [
            outcome(Kind::Adds, None, &["a"]),
            outcome(Kind::Refused, Some("first"), &["b"]),
            outcome(Kind::Failed, None, &[]),
            outcome(Kind::Refused, Some("second"), &[]),
            outcome(Kind::Adds, None, &["c", "d"]),
        ];
        let verdict = fold(&outcomes);
        assert!(verdict.refused);
        assert_eq!(verdict.reason.as_deref(), Some("first"));
        assert_eq!(verdict.adds, vec!["a", "b", "c", "d"]);
    }

    #[test]
    fn the_verdict_without_refusals_is_not_refused() {
        let verdict = fold(&[
            outcome(Kind::Nothing, None, &[]),
            outcome(Kind::Failed, None, &[]),
        ]);
        assert_eq!(verdict, Verdict::default());
        assert_eq!(fold(&[]), Verdict::default());
    }
}
