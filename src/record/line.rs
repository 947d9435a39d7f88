//! One line of the record, as a value: what kind of line it is, where the fire came from, the verdict
//! and each hook's part, what a reload weakened, and the cuts that keep a line bounded. The format
//! (docs/record.md) is stable: every line carries [`VERSION`], and a field once written keeps its name.

use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::decision::{Outcome, Rewrote, Ruling};

/// The version of the record's format, in every line's `v`.
pub const VERSION: u32 = 1;

/// The most characters of the input a summary keeps: enough to tell one command from another, never a
/// whole file's contents.
pub const SUMMARY_CHARS: usize = 300;

/// The most characters of a hook's stderr kept for `hookd why`.
pub const STDERR_CHARS: usize = 2000;

/// The most characters of a record's `error` (a refused reload's errors, one per line, are the longest).
pub const ERROR_CHARS: usize = 4 * STDERR_CHARS;

/// What a record is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A fire, decided or cut short.
    Fire,
    /// New settings installed.
    Reload,
    /// A settings file refused: the last good settings stay.
    ReloadRefused,
    /// A worker hook failed and is replaced.
    WorkerRestart,
    /// A Stop let through because it was refused `stop_refusal_cap` times in a row.
    StopCap,
    /// Records the writer could not keep up with, counted rather than written.
    Dropped,
    /// The relay answered an agent without the daemon (it was down or silent): taken from its spool.
    Relay,
    /// A reload took settings that guard less than the ones before (a hook removed, disabled, relaxed or
    /// narrowed, hookd's guard of itself turned off or narrowed): what changed, in `weakened`. Written
    /// even with `[record] enabled = false`, so that turning the journal off cannot hide it.
    Weakened,
    /// What came of a fire's hooks that ran in the background (`background = true`): written once they
    /// end, after the fire's own line, which did not wait for them.
    Background,
    /// What came of a call hookd answered "ask" for (ran, denied, unknown), once the agent told, or
    /// the session went on, or the wait ran out.
    Ask,
    /// Anything a newer hookd writes that this one does not know.
    #[serde(other)]
    Other,
}

impl Kind {
    /// The kind's name as the journal writes it (serde's `rename_all = "snake_case"`; a test in
    /// json.rs holds the two equal): the hand-written line and the export both name kinds by it.
    pub fn word(self) -> &'static str {
        match self {
            Kind::Fire => "fire",
            Kind::Reload => "reload",
            Kind::ReloadRefused => "reload_refused",
            Kind::WorkerRestart => "worker_restart",
            Kind::StopCap => "stop_cap",
            Kind::Dropped => "dropped",
            Kind::Relay => "relay",
            Kind::Weakened => "weakened",
            Kind::Background => "background",
            Kind::Ask => "ask",
            Kind::Other => "other",
        }
    }
}

/// Where a fire came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A client of the socket (`hookd fire`, an SDK).
    #[default]
    Socket,
    /// `hookd relay`, started by an agent's own hook settings.
    Relay,
    /// An agent's http hook, on the `[http]` listener.
    Http,
}

impl Source {
    /// The source's name as the journal writes it (serde's `rename_all = "snake_case"`; a test in
    /// json.rs holds the two equal).
    pub fn word(self) -> &'static str {
        match self {
            Source::Socket => "socket",
            Source::Relay => "relay",
            Source::Http => "http",
        }
    }
}

/// One line of the journal. Every field but `v`, `time` and `kind` is left out when it does not apply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub v: u32,
    /// When it happened, RFC 3339 in UTC with milliseconds (`2026-12-01T09:30:00.123Z`): strings of one
    /// width, so they sort as times do. Empty until [`Record::stamp`] writes it from `at`.
    pub time: String,
    /// When it happened, kept as a clock reading until the line is written: formatting the time is
    /// the journal thread's work, not the fire's.
    #[serde(skip)]
    pub at: Option<SystemTime>,
    pub kind: Kind,
    /// The settings' generation it was decided on (a fire), or installed (a reload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    /// The digest of the settings the fire was decided on (`crate::settings::Settings::digest`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<std::sync::Arc<str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moment: Option<String>,
    /// The tool, by hookd's (Claude Code's) name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The tool by the agent's own name, when it has another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_tool: Option<String>,
    /// What was asked, in short: a shell call's command, a file edit's path, a prompt's first line; at
    /// most [`SUMMARY_CHARS`] characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The whole tool input (or prompt), only with `full_inputs = true` in `[record]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Every hook that ran, in the settings file's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<Hook>,
    /// How long the fire took, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<f64>,
    /// Why a fire ended before its hooks had all answered (the client left, the daemon stopped): a fire
    /// that started always has its line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<String>,
    /// A fire that could not be decided (an unknown moment), a refused reload's errors, a worker's
    /// failure, the relay's reason for answering alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The worker hook restarted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook: Option<String>,
    /// How many records were dropped (a `dropped` record), or Stops refused in a row (a `stop_cap`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// What the relay did without the daemon: `fail_open` or `fail_closed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relay: Option<String>,
    /// The settings file a reload read (a `weakened` record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// What a reload weakened, one entry per change (a `weakened` record), at most
    /// [`MAX_WEAKENINGS`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub weakened: Vec<Weakening>,
    /// What came of an ask (an `ask` record): `ran`, `denied` or `unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// What told the outcome of an ask: the moment the agent fired for the call (`PostToolUse`,
    /// `PermissionDenied`, ...), or `next prompt`, `no word in time`, `daemon stopped`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled_by: Option<String>,
    /// The tool call's id as the agent gave it (`tool_use_id`), when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// When hookd asked (an `ask` record), as `time` is written: the fire line it pairs with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked: Option<String>,
}

/// The most changes a `weakened` record (and `status`'s `last_weakened`) lists; past it, a last entry
/// says how many more there were. A file of ten thousand hooks emptied stays one short line.
pub const MAX_WEAKENINGS: usize = 100;

/// One way a reload made the settings guard less: a hook's change (with its moment and name), or a
/// change of the whole file's (`[protect]`, `[record]`: no moment, no hook).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Weakening {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moment: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook: Option<String>,
    /// What changed, in words: `removed`, `disabled`, `matcher changed from "Bash" to "Edit"`...
    pub change: String,
}

impl Weakening {
    /// A change of the hook `hook` at `moment`.
    pub fn of_hook(moment: &str, hook: &str, change: impl Into<String>) -> Weakening {
        Weakening {
            moment: Some(moment.to_string()),
            hook: Some(hook.to_string()),
            change: change.into(),
        }
    }

    /// A change of the whole settings file's.
    pub fn of_settings(change: impl Into<String>) -> Weakening {
        Weakening {
            moment: None,
            hook: None,
            change: change.into(),
        }
    }

    /// `changes` kept to [`MAX_WEAKENINGS`], each text cut to [`SUMMARY_CHARS`]; a last entry says how
    /// many were left out.
    pub fn bounded(mut changes: Vec<Weakening>) -> Vec<Weakening> {
        let more = changes.len().saturating_sub(MAX_WEAKENINGS);
        changes.truncate(MAX_WEAKENINGS);
        for change in &mut changes {
            for text in [&mut change.moment, &mut change.hook].into_iter().flatten() {
                if text.len() > SUMMARY_CHARS {
                    *text = cut(text, SUMMARY_CHARS);
                }
            }
            if change.change.len() > SUMMARY_CHARS {
                change.change = cut(&change.change, SUMMARY_CHARS);
            }
        }
        if more > 0 {
            changes.push(Weakening::of_settings(format!(
                "and {more} more change{}",
                if more == 1 { "" } else { "s" }
            )));
        }
        changes
    }

    /// `PreToolUse deny: removed`, or the change alone for a change of the whole file's.
    pub fn words(&self) -> String {
        match (&self.moment, &self.hook) {
            (Some(moment), Some(hook)) => format!("{moment} {hook}: {}", self.change),
            (None, Some(hook)) => format!("{hook}: {}", self.change),
            _ => self.change.clone(),
        }
    }
}

/// A whole list of changes on one line, `; ` between them.
pub fn weakened_words(changes: &[Weakening]) -> String {
    changes
        .iter()
        .map(Weakening::words)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The verdict of a fire, as the agent was told it, in short: its word, its reason, how many adds, what
/// was rewritten (not the rewrites themselves).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Verdict {
    /// `refused`, `asked`, `allowed`, `rewrote` or `none`: the strongest thing the hooks said.
    pub decision: Ruling,
    /// Whether the call was held back (refused, or sent to a person).
    pub refused: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How many pieces of context were added.
    #[serde(default)]
    pub adds: usize,
    /// `input`, `output` or both, when the hooks rewrote them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rewrote: Vec<Rewrote>,
    /// Refused at a moment where the agent only takes advice.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub advisory: bool,
}

impl Verdict {
    /// A fire's verdict as the record keeps it.
    pub fn of(verdict: &crate::decision::Verdict) -> Verdict {
        let rewrote = [
            (verdict.input.is_some(), Rewrote::Input),
            (verdict.output.is_some(), Rewrote::Output),
        ];
        Verdict {
            decision: verdict.ruling(),
            refused: verdict.refused,
            reason: verdict.reason.clone(),
            adds: verdict.adds.len(),
            rewrote: rewrote
                .into_iter()
                .filter_map(|(rewrote, what)| rewrote.then_some(what))
                .collect(),
            advisory: verdict.advisory,
        }
    }
}

/// One hook's part in a fire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hook {
    pub name: String,
    /// As in the fire response: `nothing`, `adds`, `rewrote`, `allowed`, `asked`, `refused`, `failed`,
    /// `skipped`.
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<i32>,
    pub ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What it wrote on stderr, cut to [`STDERR_CHARS`], when it refused, asked or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// Where the hook comes from: `managed` or `project` (the layer whose file holds it), `live:CLIENT`
    /// for a hook hung live over the socket by the client CLIENT; absent: the user's settings file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer: Option<String>,
}

impl Record {
    /// A record of `kind`, now, with nothing else said; its `time` is written when it is
    /// ([`Record::stamp`]), off the fire's path.
    pub fn new(kind: Kind) -> Record {
        let mut record = Record::blank(kind);
        record.at = Some(SystemTime::now());
        record
    }

    /// A record of `kind` with nothing said, not even when: one to fill in again
    /// ([`Record::recycled`]), whose time its next fire writes.
    fn blank(kind: Kind) -> Record {
        Record {
            v: VERSION,
            time: String::new(),
            at: None,
            kind,
            generation: None,
            digest: None,
            source: None,
            agent: None,
            session: None,
            cwd: None,
            moment: None,
            tool: None,
            agent_tool: None,
            summary: None,
            input: None,
            verdict: None,
            hooks: Vec::new(),
            ms: None,
            cut: None,
            error: None,
            hook: None,
            count: None,
            relay: None,
            file: None,
            weakened: Vec::new(),
            outcome: None,
            settled_by: None,
            call: None,
            asked: None,
        }
    }

    /// A record of `kind` at `time`, its `time` written.
    pub fn at(kind: Kind, time: SystemTime) -> Record {
        let mut record = Record::new(kind);
        record.at = Some(time);
        record.stamp();
        record
    }

    /// Fills in what the event says of its session, folder, tool and input. Each text is written into
    /// the record's own string where it has one (a record taken again from the writer keeps them,
    /// emptied: [`Record::recycled`]), so that a fire's record allocates nothing once the daemon runs.
    pub fn describe(&mut self, moment: &str, event: &Map<String, Value>, full_inputs: bool) {
        self.describe_moment(moment);
        self.describe_event(event, full_inputs);
    }

    /// The moment, into the record's own string where it has one.
    pub fn describe_moment(&mut self, moment: &str) {
        put(&mut self.moment, Some(moment));
    }

    /// [`Record::describe`] but for the moment: what the event itself says.
    pub fn describe_event(&mut self, event: &Map<String, Value>, full_inputs: bool) {
        let fields = Fields::of(event);
        put(&mut self.session, fields.session);
        put(&mut self.cwd, fields.cwd);
        put(&mut self.tool, fields.tool);
        // Not written where it says what `tool` says (a string made only to be let go).
        put(
            &mut self.agent_tool,
            fields
                .agent_tool
                .filter(|agent_tool| fields.tool.is_none_or(|tool| !kept_alike(tool, agent_tool))),
        );
        summary_into(&mut self.summary, &fields);
        self.input = if full_inputs {
            fields.tool_input.or(fields.prompt).cloned()
        } else {
            None
        };
    }

    /// The agent that fired, cut to [`SUMMARY_CHARS`], into the record's own string where it has one.
    pub fn describe_agent(&mut self, agent: Option<&str>) {
        put(&mut self.agent, agent);
    }

    /// This record made ready to be a fire's record again ([`Record::describe`] writes its texts), by
    /// the journal's writer once it is written: its strings are kept, emptied, and go back to the
    /// thread that made them, so that neither thread allocates or frees them per fire (a string made on
    /// one thread and freed on another defeats the allocator's per-thread cache: the fire's thread then
    /// took its allocations from the shared arena, under its lock).
    pub fn recycled(mut self: Box<Record>) -> Box<Record> {
        let emptied = |text: &mut Option<String>| {
            text.take().map(|mut text| {
                text.clear();
                text
            })
        };
        let kept = [
            emptied(&mut self.moment),
            emptied(&mut self.session),
            emptied(&mut self.cwd),
            emptied(&mut self.tool),
            emptied(&mut self.summary),
            emptied(&mut self.agent),
        ];
        let mut time = std::mem::take(&mut self.time);
        time.clear();
        // The settings' digest is kept too: a fire on the same settings finds it there and leaves its
        // count alone (a count written by two threads in turn, per fire, passes between their cores).
        let digest = self.digest.take();
        *self = Record::blank(Kind::Fire);
        self.time = time;
        self.digest = digest;
        [
            self.moment,
            self.session,
            self.cwd,
            self.tool,
            self.summary,
            self.agent,
        ] = kept;
        self
    }

    /// Cuts every text of the record to its bound ([`SUMMARY_CHARS`] for names and the summary,
    /// [`STDERR_CHARS`] for a reason, a hook's error and stderr, [`ERROR_CHARS`] for `error`), whatever
    /// made it: a hook's refusal reason is the hook's whole stderr or stdout (hundreds of kilobytes),
    /// and a spooled record is read back from a file anyone with the user's rights can write. The
    /// journal's writer calls it on every record, so that no line passes these bounds (but `input`, which
    /// `full_inputs` keeps whole on purpose).
    pub fn bound(&mut self) {
        let short = |text: &mut Option<String>, chars: usize| {
            if let Some(t) = text.as_mut()
                && t.len() > chars
            {
                *t = cut(t, chars);
            }
        };
        short(&mut self.agent, SUMMARY_CHARS);
        short(&mut self.session, SUMMARY_CHARS);
        short(&mut self.cwd, SUMMARY_CHARS);
        short(&mut self.moment, SUMMARY_CHARS);
        short(&mut self.tool, SUMMARY_CHARS);
        short(&mut self.agent_tool, SUMMARY_CHARS);
        short(&mut self.summary, SUMMARY_CHARS);
        short(&mut self.hook, SUMMARY_CHARS);
        short(&mut self.relay, SUMMARY_CHARS);
        short(&mut self.cut, SUMMARY_CHARS);
        short(&mut self.file, SUMMARY_CHARS);
        if let Some(digest) = self.digest.as_mut()
            && digest.len() > SUMMARY_CHARS
        {
            *digest = cut(digest, SUMMARY_CHARS).into();
        }
        short(&mut self.error, ERROR_CHARS);
        short(&mut self.outcome, SUMMARY_CHARS);
        short(&mut self.settled_by, SUMMARY_CHARS);
        short(&mut self.call, SUMMARY_CHARS);
        short(&mut self.asked, SUMMARY_CHARS);
        if self.weakened.len() > MAX_WEAKENINGS + 1
            || self.weakened.iter().any(|w| {
                [&w.moment, &w.hook]
                    .into_iter()
                    .flatten()
                    .chain([&w.change])
                    .any(|t| t.len() > SUMMARY_CHARS)
            })
        {
            self.weakened = Weakening::bounded(std::mem::take(&mut self.weakened));
        }
        if self.time.len() > SUMMARY_CHARS {
            self.time = cut(&self.time, SUMMARY_CHARS);
        }
        if let Some(verdict) = self.verdict.as_mut() {
            short(&mut verdict.reason, STDERR_CHARS);
            verdict.rewrote.truncate(2);
        }
        for hook in &mut self.hooks {
            if hook.name.len() > SUMMARY_CHARS {
                hook.name = cut(&hook.name, SUMMARY_CHARS);
            }
            short(&mut hook.error, STDERR_CHARS);
            short(&mut hook.stderr, STDERR_CHARS);
        }
    }

    /// Whether the fire was held back: refused, or asked. An `ask` record carries its ask's verdict
    /// again, but is what came of the ask, not a second call held back (`hookd why` and `--refused`
    /// show the fire).
    pub fn refused(&self) -> bool {
        self.kind != Kind::Ask && self.verdict.as_ref().is_some_and(|v| v.refused)
    }

    /// Writes `time` from the clock reading taken when the record was made, if it is not written yet.
    pub fn stamp(&mut self) {
        if let Some(at) = self.at.take() {
            self.time = crate::time::rfc3339_millis(at);
        }
    }
}

/// What was asked, in short: the command of a shell call, the path of a file edit, the pattern of a
/// search, the address of a fetch, the first line of a prompt; else the tool input's first text field.
pub fn summary(event: &Map<String, Value>) -> Option<String> {
    let mut summary = None;
    summary_into(&mut summary, &Fields::of(event));
    summary
}

/// The fields of an event a record reads, found in one walk over a small event (a lookup each in the
/// event's map compared its keys a dozen times, on the fire's path), by lookups in a large one.
#[derive(Default)]
struct Fields<'a> {
    session: Option<&'a str>,
    cwd: Option<&'a str>,
    tool: Option<&'a str>,
    agent_tool: Option<&'a str>,
    tool_input: Option<&'a Value>,
    prompt: Option<&'a Value>,
    /// `message`, `reason`, `source`, `trigger`: what a summary is made of when nothing else is.
    others: [Option<&'a str>; 4],
}

/// The most fields of an event walked rather than looked up: an agent's event has about ten.
const WALKED: usize = 24;

impl<'a> Fields<'a> {
    const KEYS: [&'static str; 10] = [
        "session_id",
        "cwd",
        "tool_name",
        "agent_tool_name",
        "tool_input",
        "prompt",
        "message",
        "reason",
        "source",
        "trigger",
    ];

    fn of(event: &'a Map<String, Value>) -> Fields<'a> {
        let mut fields = Fields::default();
        if event.len() <= WALKED {
            for (key, value) in event {
                fields.take(key, value);
            }
        } else {
            for key in Fields::KEYS {
                if let Some(value) = event.get(key) {
                    fields.take(key, value);
                }
            }
        }
        fields
    }

    fn take(&mut self, key: &str, value: &'a Value) {
        match key {
            "session_id" => self.session = value.as_str(),
            "cwd" => self.cwd = value.as_str(),
            "tool_name" => self.tool = value.as_str(),
            "agent_tool_name" => self.agent_tool = value.as_str(),
            "tool_input" => self.tool_input = Some(value),
            "prompt" => self.prompt = Some(value),
            "message" => self.others[0] = value.as_str(),
            "reason" => self.others[1] = value.as_str(),
            "source" => self.others[2] = value.as_str(),
            "trigger" => self.others[3] = value.as_str(),
            _ => {}
        }
    }
}

/// [`summary`] written into `field`'s string, where it has one.
fn summary_into(field: &mut Option<String>, fields: &Fields) {
    // On the fire's path: only the head of a first line that may be megabytes long (a one-line file
    // written, a minified script) is copied, never the whole line; the head is long enough that the
    // result is the same as cutting the whole.
    let Some(text) = summarized(fields) else {
        *field = None;
        return;
    };
    let first = text.lines().next().unwrap_or_default();
    let more = first.len() < text.trim_end().len();
    // No more bytes than characters kept: nothing to count.
    let head = match (first.len() > SUMMARY_CHARS + 2)
        .then(|| first.char_indices().nth(SUMMARY_CHARS + 2))
        .flatten()
    {
        Some((end, _)) => &first[..end],
        None => first,
    };
    if more {
        put(field, Some(&format!("{head} …")));
    } else {
        put(field, Some(head));
    }
}

/// `text` cut to [`SUMMARY_CHARS`] into `field`: written into its string if it has one, else a new one;
/// `None` for no text.
fn put(field: &mut Option<String>, text: Option<&str>) {
    let Some(text) = text else {
        *field = None;
        return;
    };
    let into = field.get_or_insert_with(String::new);
    into.clear();
    // No more bytes than SUMMARY_CHARS, so no more characters: nothing to count.
    let past = (text.len() > SUMMARY_CHARS)
        .then(|| text.char_indices().nth(SUMMARY_CHARS))
        .flatten();
    match past {
        None => into.push_str(text),
        Some((end, _)) => {
            into.push_str(&text[..end]);
            into.push('…');
        }
    }
}

/// The text a summary is made of.
fn summarized<'a>(fields: &Fields<'a>) -> Option<&'a str> {
    if let Some(input) = fields.tool_input.and_then(Value::as_object) {
        for key in [
            "command",
            "file_path",
            "path",
            "notebook_path",
            "pattern",
            "url",
            "query",
            "prompt",
            "description",
        ] {
            if let Some(text) = input.get(key).and_then(Value::as_str) {
                return Some(text);
            }
        }
        return input.values().find_map(Value::as_str);
    }
    fields
        .prompt
        .and_then(Value::as_str)
        .or_else(|| fields.others.into_iter().flatten().next())
}

/// Whether [`put`] keeps the two texts alike: their first [`SUMMARY_CHARS`] characters, each cut or
/// neither.
fn kept_alike(one: &str, other: &str) -> bool {
    let kept = |text: &str| match (text.len() > SUMMARY_CHARS)
        .then(|| text.char_indices().nth(SUMMARY_CHARS))
        .flatten()
    {
        None => (text.len(), false),
        Some((end, _)) => (end, true),
    };
    let ((one_end, one_cut), (other_end, other_cut)) = (kept(one), kept(other));
    one_cut == other_cut && one[..one_end] == other[..other_end]
}

/// `text` cut to at most `chars` characters, with `…` where it was cut.
pub fn cut(text: &str, chars: usize) -> String {
    if text.len() <= chars {
        // No more bytes than `chars`, so no more characters: nothing to count.
        return text.to_string();
    }
    match text.char_indices().nth(chars) {
        None => text.to_string(),
        Some((end, _)) => format!("{}…", &text[..end]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn a_summary_is_the_command_the_path_or_the_prompts_first_line() {
        let bash = event(json!({"tool_input": {"command": "rm -rf ~", "description": "x"}}));
        assert_eq!(summary(&bash).as_deref(), Some("rm -rf ~"));
        let edit =
            event(json!({"tool_input": {"file_path": "/a/b.rs", "content": "fn main() {}"}}));
        assert_eq!(summary(&edit).as_deref(), Some("/a/b.rs"));
        let prompt = event(json!({"prompt": "fix the bug\nin main.rs\n"}));
        assert_eq!(summary(&prompt).as_deref(), Some("fix the bug …"));
        let one_line = event(json!({"prompt": "fix it\n"}));
        assert_eq!(summary(&one_line).as_deref(), Some("fix it"));
        assert_eq!(summary(&event(json!({"x": 1}))), None);
    }

    #[test]
    fn a_summary_never_holds_a_whole_file() {
        let big = "x".repeat(100_000);
        let write = event(json!({"tool_input": {"content": big}}));
        let shown = summary(&write).unwrap();
        assert_eq!(shown.chars().count(), SUMMARY_CHARS + 1);
        assert!(shown.ends_with('…'));
    }

    #[test]
    fn a_summary_of_a_long_first_line_is_cut_as_the_whole_would_be() {
        for (len, rest) in [
            (10, ""),
            (299, "\nmore"),
            (300, "\nmore"),
            (301, ""),
            (5_000_000, "\nx"),
        ] {
            let line = "é".repeat(len);
            let text = format!("{line}{rest}");
            let whole = if rest.is_empty() {
                line.clone()
            } else {
                format!("{line} …")
            };
            let prompt = event(json!({"prompt": text}));
            assert_eq!(summary(&prompt), Some(cut(&whole, SUMMARY_CHARS)), "{len}");
        }
    }

    #[test]
    fn a_large_event_is_described_as_a_small_one_with_the_same_fields() {
        let long_tool = "T".repeat(400);
        let events = [
            json!({"session_id": "s", "cwd": "/p", "tool_name": "Bash", "agent_tool_name": "shell",
                "tool_input": {"command": "ls"}}),
            json!({"session_id": 3, "tool_name": "Bash", "agent_tool_name": "Bash",
                "tool_input": "not an object", "prompt": "p", "message": "m"}),
            json!({"reason": "r", "source": "s", "trigger": "t"}),
            json!({"trigger": "t", "source": "s"}),
            json!({"prompt": {"x": 1}, "message": "m"}),
            // Alike once cut to SUMMARY_CHARS, but only one of them cut: both kept.
            json!({"tool_name": long_tool, "agent_tool_name": &long_tool[..SUMMARY_CHARS]}),
            json!({"tool_name": long_tool, "agent_tool_name": format!("{long_tool}x")}),
        ];
        let described = |event: &Value| {
            let mut record = Record::new(Kind::Fire);
            record.at = None;
            record.describe("PreToolUse", &event.as_object().unwrap().clone(), true);
            record
        };
        for event in &events {
            let mut large = event.clone();
            for i in 0..(2 * WALKED) {
                large[format!("zz{i}")] = json!("filler");
                large[format!("aa{i}")] = json!("filler");
            }
            assert_eq!(described(event), described(&large), "{event}");
        }
        assert_eq!(described(&events[1]).agent_tool, None, "said once");
        assert_eq!(described(&events[1]).summary.as_deref(), Some("p"));
        assert_eq!(described(&events[2]).summary.as_deref(), Some("r"));
        assert_eq!(described(&events[3]).summary.as_deref(), Some("s"));
        assert_eq!(described(&events[4]).summary.as_deref(), Some("m"));
        assert!(described(&events[5]).agent_tool.is_some());
        assert_eq!(
            described(&events[6]).agent_tool,
            None,
            "cut alike: said once"
        );
    }

    #[test]
    fn cutting_respects_characters() {
        assert_eq!(cut("héllo", 2), "hé…");
        assert_eq!(cut("héllo", 5), "héllo");
        assert_eq!(cut("", 0), "");
    }

    #[test]
    fn a_record_reads_back_as_written_and_skips_what_does_not_apply() {
        let mut record = Record::at(Kind::Fire, SystemTime::UNIX_EPOCH);
        record.describe(
            "PreToolUse",
            &event(json!({"session_id": "s1", "cwd": "/p", "tool_name": "Bash",
                "agent_tool_name": "shell", "tool_input": {"command": "ls"}})),
            false,
        );
        record.verdict = Some(Verdict {
            decision: Ruling::Refused,
            refused: true,
            reason: Some("no".into()),
            ..Verdict::default()
        });
        let line = record.clone().to_line();
        let text = std::str::from_utf8(&line).unwrap();
        assert!(text.starts_with(r#"{"v":1,"time":"1970-01-01T00:00:00.000Z","kind":"fire""#));
        assert!(!text.contains("\"input\""), "{text}");
        assert!(text.ends_with('\n') && !text[..text.len() - 1].contains('\n'));
        let back: Record = serde_json::from_str(text).unwrap();
        assert_eq!(back, record);
        assert_eq!(back.agent_tool.as_deref(), Some("shell"));
        assert!(back.refused());
    }

    #[test]
    fn a_recycled_record_described_again_writes_what_a_new_one_would() {
        let events = [
            json!({"session_id": "s1", "cwd": "/p", "tool_name": "Bash", "agent_tool_name": "shell",
                "tool_input": {"command": "ls\nmore"}}),
            json!({"session_id": "s2", "prompt": "é".repeat(400)}),
            json!({"x": 1}),
            json!({"tool_name": "Read", "agent_tool_name": "Read", "tool_input": {"file_path": "/a"}}),
        ];
        let mut used = Box::new(Record::new(Kind::Fire));
        used.describe("PreToolUse", &event(events[0].clone()), true);
        used.describe_agent(Some("claude-code"));
        used.generation = Some(3);
        used.digest = Some("0123456789abcdef".into());
        used.verdict = Some(Verdict {
            decision: Ruling::Refused,
            refused: true,
            reason: Some("no".into()),
            ..Verdict::default()
        });
        used.hooks.push(Hook {
            layer: None,
            name: "h".into(),
            outcome: Outcome::Refused,
            exit: Some(2),
            ms: 1.5,
            error: None,
            stderr: Some("e".into()),
        });
        used.cut = Some("the client left".into());
        used.ms = Some(2.0);
        used.to_line();
        for (i, fields) in events.into_iter().enumerate() {
            let fields = event(fields);
            let agent = (i % 2 == 0).then_some("codex");
            let mut recycled = used.clone().recycled();
            let mut new = Record::new(Kind::Fire);
            // The digest is the fire's to write (engine/recording.rs), not `describe`'s.
            new.digest = used.digest.clone();
            for record in [&mut *recycled, &mut new] {
                record.at = Some(SystemTime::UNIX_EPOCH);
                record.describe("Stop", &fields, false);
                record.describe_agent(agent);
            }
            assert_eq!(recycled.to_line(), new.to_line(), "event {i}");
            assert_eq!(*recycled, new, "event {i}");
        }
    }

    #[test]
    fn a_bound_record_has_no_text_past_its_bound() {
        let huge = "é".repeat(100_000);
        let mut record = Record::new(Kind::Fire);
        record.session = Some(huge.clone());
        record.summary = Some(huge.clone());
        record.error = Some(huge.clone());
        record.verdict = Some(Verdict {
            decision: Ruling::Refused,
            reason: Some(huge.clone()),
            rewrote: vec![Rewrote::Input; 5],
            ..Verdict::default()
        });
        record.hooks.push(Hook {
            layer: None,
            name: huge.clone(),
            outcome: Outcome::Refused,
            exit: Some(2),
            ms: 1.0,
            error: Some(huge.clone()),
            stderr: Some(huge),
        });
        record.bound();
        let line = record.to_line();
        assert!(line.len() < 40_000, "{} bytes", line.len());
        assert_eq!(
            record.verdict.unwrap().reason.unwrap().chars().count(),
            STDERR_CHARS + 1
        );
        let mut small = Record::new(Kind::Fire);
        small.session = Some("s1".into());
        let before = small.clone();
        small.bound();
        assert_eq!(small, before, "what is within its bound is left alone");
    }

    #[test]
    fn a_weakened_record_reads_back_and_says_what_changed() {
        let mut record = Record::at(Kind::Weakened, SystemTime::UNIX_EPOCH);
        record.generation = Some(4);
        record.file = Some("/h/hooks.toml".into());
        record.weakened = vec![
            Weakening::of_hook("PreToolUse", "deny", "removed"),
            Weakening::of_settings("[protect] enabled turned off"),
        ];
        let line = record.clone().to_line();
        let text = std::str::from_utf8(&line).unwrap();
        assert!(
            text.contains(r#""kind":"weakened","generation":4,"#)
                && text.contains(r#""file":"/h/hooks.toml","weakened":[{"moment":"PreToolUse","hook":"deny","change":"removed"},{"change":"[protect] enabled turned off"}]"#),
            "{text}"
        );
        let back: Record = serde_json::from_str(text).unwrap();
        assert_eq!(back, record);
        assert_eq!(
            weakened_words(&back.weakened),
            "PreToolUse deny: removed; [protect] enabled turned off"
        );
    }

    #[test]
    fn a_long_list_of_weakenings_is_bounded_and_says_how_many_more() {
        let many: Vec<Weakening> = (0..10_000)
            .map(|i| Weakening::of_hook("PreToolUse", &format!("h{i}"), "removed"))
            .collect();
        let kept = Weakening::bounded(many.clone());
        assert_eq!(kept.len(), MAX_WEAKENINGS + 1);
        assert_eq!(kept.last().unwrap().change, "and 9900 more changes");
        let mut record = Record::new(Kind::Weakened);
        record.weakened = many;
        record.weakened[0].hook = Some("é".repeat(10_000));
        record.bound();
        assert_eq!(record.weakened.len(), MAX_WEAKENINGS + 1);
        assert_eq!(
            record.weakened[0].hook.as_ref().unwrap().chars().count(),
            SUMMARY_CHARS + 1
        );
    }

    #[test]
    fn a_kind_from_a_newer_hookd_still_reads() {
        let back: Record =
            serde_json::from_str(r#"{"v":2,"time":"t","kind":"teleport","extra":1}"#).unwrap();
        assert_eq!(back.kind, Kind::Other);
    }
}
