//! The relay's logic (docs/agents.md, "The relay"): an agent's hook input in, the daemon asked, the
//! agent answered in its dialect. When the daemon cannot answer, it fails open with one line on stderr,
//! or refuses with `--fail-closed`.
//!
//! No input or output of its own: it is given the input and a way to ask the daemon, and returns what
//! to say ([`Relayed`]). `hookd relay` ([`crate::commands::relay_process`]) gives it stdin and the socket and
//! writes the answer out as a process; the code is here, below the daemon's floor, so that anything that
//! answers an agent as the relay does answers by this one piece of code.

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::agents::dialect::{
    Answer, CarryBack, Translated, Transport, another_agents_event, answer, answer_to,
    read_translated, unknown_event,
};
use crate::limits::{AGENT_LIMIT_MARGIN, MAX_LINE};
use crate::protocol::head::EVENT_FIELDS;
use crate::protocol::{Asking, ErrorKind, ErrorResponse, Event, FireResponse, too_large};
use crate::record::{Kind, Record, Source};
use crate::tables::agent::Agent;
use crate::tables::moment::Refusal;

/// What the relay was told on its command line.
#[derive(Debug, Clone)]
pub struct Options {
    pub agent: Agent,
    pub socket: PathBuf,
    pub fail_closed: bool,
    /// `--event`: the agent's name for the event served, for an agent whose hook input names none
    /// (Copilot CLI's).
    pub event: Option<String>,
    pub timeout: Duration,
}

/// The reason given to the agent when `--fail-closed` refuses because the daemon is down or silent past
/// the relay's timeout (docs/agents.md, "The timeout chain").
pub const NOT_RUNNING: &str = "hookd is not running";

/// Why the daemon gave no verdict, as the one who asked it found.
#[derive(Debug, Clone)]
pub enum Unanswered {
    /// Nothing listens on the socket.
    NotRunning(String),
    /// The daemon took longer than the relay waits.
    TimedOut(String),
    /// Anything else: a broken connection, an unreadable response.
    Other(String),
}

impl std::fmt::Display for Unanswered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unanswered::NotRunning(m) | Unanswered::TimedOut(m) | Unanswered::Other(m) => {
                f.write_str(m)
            }
        }
    }
}

/// The daemon's answer to a fire request, or why there is none.
pub type Asked = Result<Result<FireResponse, ErrorResponse>, Unanswered>;

/// What the relay answers: the lines it says on stderr first, then the answer (stdout, stderr, exit
/// status), and what it keeps in its spool, having answered alone.
#[derive(Debug, Default)]
pub struct Relayed {
    pub notes: Vec<String>,
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    pub exit: u8,
    pub spooled: Option<Record>,
    /// What the answer on stdout holds back (a refusal, an ask, a rewrite), as the reason to refuse with
    /// on stderr, exit 2, should stdout not reach the agent (closed, `/dev/null`, a write that fails):
    /// written to nowhere, the refusal would be lost and the call would go on. `None` when the answer
    /// holds nothing back, or says it on stderr already.
    pub refusal: Option<String>,
}

impl Relayed {
    fn answered(mut self, answer: Answer, refusal: Option<String>) -> Relayed {
        self.refusal = refusal.filter(|_| answer.stdout.is_some());
        self.stdout = answer.stdout;
        self.stderr = answer.stderr;
        self.exit = answer.exit;
        self
    }

    fn note(&mut self, line: String) {
        self.notes.push(line);
    }
}

/// Relays one hook input: reads it from `input`, asks the daemon through `ask` (the fire request line,
/// and how long to wait for its answer), and returns what to answer the agent.
pub fn relay(
    options: &Options,
    input: impl Read,
    ask: impl FnOnce(Vec<u8>, Duration) -> Asked,
) -> Relayed {
    match begin(options, input) {
        Begun::Answered(relayed) => *relayed,
        Begun::Asking(mut asking) => {
            let line = std::mem::take(&mut asking.line);
            let asked = ask(line, asking.wait);
            finish(options, asking, asked)
        }
    }
}

/// A relay's first half: answered already (the input unreadable, another agent's), or a fire to ask.
pub enum Begun {
    Answered(Box<Relayed>),
    Asking(Pending),
}

/// A fire the relay asks the daemon for, and what it needs to answer once it has the verdict.
pub struct Pending {
    /// The fire request line.
    pub line: Vec<u8>,
    /// How long to wait for its answer ([`wait_for`]).
    pub wait: Duration,
    moment: String,
    agent_event_name: String,
    fields: Map<String, Value>,
    undecidable: Option<String>,
    carry_back: Option<CarryBack>,
}

/// Reads and translates the hook input, and says what to ask the daemon, if anything.
pub fn begin(options: &Options, input: impl Read) -> Begun {
    let Translated {
        moment,
        event_name: agent_event_name,
        event,
        carry_back,
    } = match read_translated(input, options.agent, options.event.as_deref()) {
        Ok(translated) => translated,
        Err(why) => {
            // An input that cannot be read is still placed by the event the relay was told, so that a
            // Stop (or a moment past refusing) is let through even with --fail-closed, as elsewhere.
            let told = options
                .event
                .as_deref()
                .filter(|event| options.agent.event_names().contains(event));
            let moment = told.map(|event| options.agent.moment_of(event));
            let placed = moment.as_deref().zip(told);
            return Begun::Answered(Box::new(cannot_answer(options, placed, &why, false, None)));
        }
    };
    if let Some(why) = another_agents_event(options.agent, &agent_event_name) {
        // The moment as the agent that sends this name means it (Gemini's AfterAgent is a Stop), so
        // that --fail-closed lets through what refusing would not hold back.
        let moment = moment_named(None, &agent_event_name).unwrap_or(moment);
        return Begun::Answered(Box::new(wrong_agent(options, &moment, &why, &event.fields)));
    }
    Begun::Asking(Pending {
        line: request_line(options.agent, &moment, &event, options.fail_closed),
        wait: wait_for(options.agent, &moment, options.timeout),
        moment,
        agent_event_name,
        undecidable: event.undecidable,
        fields: event.fields,
        carry_back,
    })
}

/// A relay's second half: the agent answered from the daemon's verdict, or from why there is none.
pub fn finish(options: &Options, asking: Pending, asked: Asked) -> Relayed {
    let Pending {
        wait,
        moment,
        agent_event_name,
        fields,
        undecidable,
        carry_back,
        ..
    } = asking;
    let shown = Some((moment.as_str(), agent_event_name.as_str()));
    let response = match asked {
        Ok(Ok(response)) => response,
        Ok(Err(error)) if error.error.kind == ErrorKind::UnknownMoment => {
            // A real event of this agent that nobody hangs hooks on: nothing to say. Anything else (a
            // wrong --agent, a misspelt name) would let every such event through unwatched: said, and
            // refused with --fail-closed.
            let Some(why) = unknown_event(options.agent, &agent_event_name) else {
                return Relayed::default();
            };
            return cannot_answer(options, shown, &why, false, Some(&fields));
        }
        Ok(Err(error)) => {
            let message = format!("hookd answered: {}", error.error.message);
            return cannot_answer(options, shown, &message, false, Some(&fields));
        }
        Err(error) => {
            let down = matches!(error, Unanswered::NotRunning(_) | Unanswered::TimedOut(_));
            let mut why = error.to_string();
            if let (Unanswered::TimedOut(_), Some(limit)) =
                (&error, options.agent.time_limit(&moment))
                && wait < options.timeout
            {
                // Cut short by the agent's own limit, not by --timeout: say so, or it reads as a bug.
                why.push_str(&format!(
                    " (within {}s: {} waits at most {}s for its hooks at {moment})",
                    wait.as_secs_f64(),
                    options.agent.display_name(),
                    limit.as_secs_f64()
                ));
            }
            return cannot_answer(options, shown, &why, down, Some(&fields));
        }
    };
    let mut relayed = Relayed::default();
    if let Some(warning) = undecided_warning(undecidable.as_deref(), &response) {
        relayed.note(format!("hookd relay: {warning}"));
    }
    let refusal = held_back(&response);
    relayed.answered(
        answer_for(
            options.agent,
            &moment,
            &agent_event_name,
            &response,
            carry_back.as_ref(),
        ),
        refusal,
    )
}

/// What the daemon's verdict holds back, as the reason to refuse with should the answer not reach the
/// agent ([`Relayed::refusal`]): a refusal's reason; an ask, which no one can be asked by exit 2; a
/// rewritten input, which lost would run the call as it was.
fn held_back(response: &FireResponse) -> Option<String> {
    if response.refused {
        let reason = crate::agents::dialect::refusal(true, response.reason.as_deref())
            .unwrap_or_default()
            .to_string();
        return Some(match response.permission {
            Some(crate::decision::Permission::Ask) => format!(
                "{reason} (hookd's hooks ask before this call, and the answer that asks could not reach the agent)"
            ),
            _ => reason,
        });
    }
    response.input.is_some().then(|| {
        "hookd rewrote this call's input, and the rewrite could not reach the agent: refused rather than run as it was".to_string()
    })
}

/// What the relay says on stderr when the event reached its hooks undecidable (too large or too deep
/// as the relay sent it, `undecidable`, or as the daemon found it) and nothing refused: every hook that
/// would have seen it was read as failed, none refusing on failure, and the agent goes on, but not
/// silently. `None` otherwise.
pub fn undecided_warning(undecidable: Option<&str>, response: &FireResponse) -> Option<String> {
    let found = response
        .hooks
        .iter()
        .filter_map(|hook| hook.error.as_deref())
        .find_map(|error| error.strip_prefix(crate::protocol::UNDECIDED));
    let why = undecidable.or(found)?;
    (!response.refused && !response.hooks.is_empty()).then(|| {
        format!(
            "{why}: {} hook(s) could not be given it and were read as failed (none has on_failure = \"refuse\"); letting the agent go on",
            response.hooks.len()
        )
    })
}

/// The daemon's verdict as the relay answers `agent` in a process hook: its rewritten input carried
/// back into the agent's terms, in the agent's dialect. `hookd test --agent` shows the same answer.
pub fn answer_for(
    agent: Agent,
    moment: &str,
    agent_event_name: &str,
    response: &FireResponse,
    carry_back: Option<&CarryBack>,
) -> Answer {
    answer_to(
        agent,
        moment,
        agent_event_name,
        response,
        carry_back,
        Transport::Process,
    )
}

/// How long to wait for the verdict at `moment`: `--timeout`, or less where the agent itself waits less
/// (its limit there, less [`AGENT_LIMIT_MARGIN`]), so that the relay answers in the agent's dialect as
/// when the daemon is late (fail-open, or `--fail-closed`) before the agent stops listening.
pub fn wait_for(agent: Agent, moment: &str, timeout: Duration) -> Duration {
    match agent.time_limit(moment) {
        Some(limit) => timeout.min(limit.saturating_sub(AGENT_LIMIT_MARGIN)),
        None => timeout,
    }
}

/// The fire request, as the line sent. The event re-serialized is never larger than the agent's input
/// (serde_json writes no more than it read, numbers being kept as written), so it fits the daemon's line
/// limit; should it not, the head is sent as undecidable rather than a line the daemon would refuse.
fn request_line(agent: Agent, moment: &str, event: &Event, fail_closed: bool) -> Vec<u8> {
    let line = Asking::Fire {
        id: 1,
        moment,
        agent: Some(agent.name()),
        event: &event.fields,
        undecidable: event.undecidable.as_deref(),
        source: Some("relay"),
        fail_closed,
    }
    .to_line();
    if line.len() <= MAX_LINE {
        return line;
    }
    let why = too_large(line.len() as u64);
    let head: Map<String, Value> = event
        .fields
        .iter()
        .filter(|(key, value)| EVENT_FIELDS.contains(&key.as_str()) && !value.is_object())
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    Asking::Fire {
        id: 1,
        moment,
        agent: Some(agent.name()),
        event: &head,
        undecidable: Some(&why),
        source: Some("relay"),
        fail_closed,
    }
    .to_line()
}

/// The daemon could not give a verdict: let the agent go on, saying so once on stderr, or with
/// `--fail-closed` refuse in the agent's dialect. `moment` is `None` when the input itself was unreadable;
/// `down` when the daemon is not running or did not answer in time.
///
/// A Stop is let through even with `--fail-closed`: refusing a Stop does not stop anything, it sends the
/// agent on working, and with no daemon there is no stop cap either. Seen with the real Codex: a daemon
/// gone mid-session made every Stop a refusal, 64 model calls in 3 s and no end (tests/it/e2e_codex.rs).
/// A SessionEnd too: the session is over, there is nothing left to hold back, and the agents only show
/// the refusal as a failed hook.
fn cannot_answer(
    options: &Options,
    moment: Option<(&str, &str)>,
    why: &str,
    down: bool,
    event: Option<&Map<String, Value>>,
) -> Relayed {
    let record = described(moment.map(|(moment, _)| moment), event);
    if !options.fail_closed {
        return fail_open(options.agent, record, why);
    }
    let reason = if down {
        NOT_RUNNING.to_string()
    } else {
        format!("hookd could not answer: {why}")
    };
    closed(
        Some(options.agent),
        moment.map(|(moment, _)| moment),
        record,
        why,
        reason,
        |reason| match moment {
            Some((moment, agent_event_name)) => answer(
                options.agent,
                moment,
                agent_event_name,
                Some(reason),
                &[],
                Transport::Process,
            ),
            None => refused_on_stderr(reason.to_string()),
        },
    )
}

/// Nothing decided and no `--fail-closed`: the agent goes on, told once on stderr, and the spool keeps it.
fn fail_open(agent: Agent, record: Record, why: &str) -> Relayed {
    let mut relayed = Relayed::default();
    relayed.note(format!(
        "hookd relay: {why}; letting the agent go on (fail-open)"
    ));
    relayed.spooled = Some(spooled(Some(agent), record, "fail_open", why));
    relayed
}

/// Nothing decided, with `--fail-closed`: let through at a `moment` where refusing holds nothing back
/// (`let_through_even_fail_closed`, which says so), else refused with `reason` as `refusal` answers;
/// the spool keeps either. The one place the three ways the relay answers alone (the daemon silent,
/// another agent's event, its own command line wrong) decide what `--fail-closed` means.
pub fn closed(
    agent: Option<Agent>,
    moment: Option<&str>,
    record: Record,
    why: &str,
    reason: String,
    refusal: impl FnOnce(&str) -> Answer,
) -> Relayed {
    let mut relayed = Relayed::default();
    if let Some(note) = moment.and_then(|moment| let_through_even_fail_closed(moment, why)) {
        relayed.note(note);
        relayed.spooled = Some(spooled(agent, record, "fail_open", why));
        return relayed;
    }
    relayed.spooled = Some(spooled(agent, record, "fail_closed", why));
    let answer = refusal(&reason);
    relayed.answered(answer, Some(reason))
}

/// The refusal every agent reads alike, whatever its dialect: the reason on stderr, exit 2.
pub fn refused_on_stderr(reason: String) -> Answer {
    Answer {
        stdout: None,
        stderr: Some(reason),
        exit: 2,
    }
}

/// The moment an agent's event `name` is: as `first` names it (when known), else as any agent that
/// sends that name does (Gemini CLI's AfterAgent is a Stop).
pub fn moment_named(first: Option<Agent>, name: &str) -> Option<String> {
    first
        .into_iter()
        .chain(Agent::ALL)
        .find(|sender| sender.event_names().contains(&name))
        .map(|sender| sender.moment_of(name))
}

/// An event of another agent (a wrong `--agent`): not fired, since its answer would be in a dialect the
/// real agent does not read. Said on stderr; with `--fail-closed`, refused with the reason on stderr and
/// exit 2, the one refusal every agent reads alike, except where refusing sends the agent on or comes too
/// late (as in [`cannot_answer`]).
fn wrong_agent(options: &Options, moment: &str, why: &str, event: &Map<String, Value>) -> Relayed {
    let record = described(Some(moment), Some(event));
    if !options.fail_closed {
        return fail_open(options.agent, record, why);
    }
    let reason = format!("hookd could not answer: {why}");
    closed(
        Some(options.agent),
        Some(moment),
        record,
        why,
        reason,
        |reason| refused_on_stderr(reason.to_string()),
    )
}

/// What the record says of a call the relay answers alone: its moment and, when the input could be
/// read, what it asked. Made only then: a call the daemon answers costs the relay nothing for the record.
pub fn described(moment: Option<&str>, event: Option<&Map<String, Value>>) -> Record {
    let mut record = Record::new(Kind::Relay);
    match (moment, event) {
        (Some(moment), Some(event)) => record.describe(moment, event, false),
        (Some(moment), None) => record.moment = Some(moment.to_string()),
        _ => {}
    }
    record
}

/// What the relay keeps of what it did alone, for the spool (and from there the daemon's journal, when it
/// next runs: docs/record.md).
fn spooled(agent: Option<Agent>, mut record: Record, did: &str, why: &str) -> Record {
    record.source = Some(Source::Relay);
    record.agent = agent.map(|agent| agent.name().to_string());
    record.relay = Some(did.to_string());
    record.error = Some(crate::record::cut(why, crate::record::STDERR_CHARS));
    record
}

/// Whether `moment` is let through even with `--fail-closed`, and if so the line that says why: where a
/// refusal holds nothing back (it sends the agent on with no stop cap, comes when the session or turn is
/// over, or ends the turn with nothing said).
fn let_through_even_fail_closed(moment: &str, why: &str) -> Option<String> {
    let because = match crate::tables::moment::refusal(moment) {
        Refusal::HoldsBack => return None,
        Refusal::SendsOn => "refusing it would keep the agent working, with no stop cap",
        Refusal::TooLate => "the session or the turn is over, nothing to refuse",
        Refusal::EndsTurn => {
            "refusing it would end the turn with nothing said; each tool call is refused before it runs"
        }
    };
    Some(format!(
        "hookd relay: {why}; letting the {moment} through even with --fail-closed ({because})"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_relay_waits_less_where_the_agent_does() {
        let timeout = Duration::from_secs(100);
        assert_eq!(
            wait_for(
                Agent::ClaudeCode,
                crate::tables::moment::SESSION_END,
                timeout
            ),
            Duration::from_millis(59_500)
        );
        assert_eq!(
            wait_for(
                Agent::ClaudeCode,
                crate::tables::moment::SESSION_END,
                Duration::from_secs(2)
            ),
            Duration::from_secs(2)
        );
        assert_eq!(
            wait_for(
                Agent::ClaudeCode,
                crate::tables::moment::PRE_TOOL_USE,
                timeout
            ),
            timeout
        );
        assert_eq!(wait_for(Agent::GeminiCli, "MyMoment", timeout), timeout);
    }
}
