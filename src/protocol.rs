//! Every request and response of the socket protocol (docs/protocol.md): one JSON object per line, each way.
//!
//! Requests are decoded by hand from a `serde_json::Value` rather than derived, so that every mistake gets
//! its own clear message and the request's `id` is echoed even when the rest of it is wrong.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::limits::{MAX_AGENT_NAME, MAX_DEPTH, MAX_EVENT, MAX_HELLO_MOMENTS, MAX_ID};

/// Why an event of `size` bytes is undecidable.
pub fn too_large(size: u64) -> String {
    format!(
        "the event is {size} bytes, over the {} MiB limit",
        MAX_EVENT >> 20
    )
}

/// A decoded request.
///
/// ```json
/// {"op":"fire","id":1,"moment":"PreToolUse","agent":"claude-code","event":{"tool_name":"Bash"}}
/// {"op":"hello","id":2,"agent":"my-agent","moments":["PreToolUse","Stop"]}
/// {"op":"status","id":3}
/// {"op":"reload","id":4}
/// {"op":"watch","id":5,"agent":"codex","refused":true}
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Fire {
        moment: String,
        agent: Option<String>,
        event: Event,
    },
    Hello {
        agent: Option<String>,
        moments: Option<Vec<String>>,
    },
    Status,
    Reload,
    /// Stream the record, a line per record that passes the filter, until the client closes.
    Watch(WatchFilter),
    /// An agent's raw hook input, answered as `hookd relay` would answer it (docs/protocol.md, "relay").
    Relay(RelayRequest),
}

/// A `relay` request: what `hookd relay` is told on its command line, and the agent's hook input.
#[derive(Debug, Clone, PartialEq)]
pub struct RelayRequest {
    /// `--agent`.
    pub agent: String,
    /// `--fail-closed`.
    pub fail_closed: bool,
    /// `--event`.
    pub event: Option<String>,
    /// `--timeout`, in seconds: positive and finite.
    pub timeout: f64,
    /// The socket the client reached the daemon on, as it names it: the relay's messages name it.
    pub socket: String,
    /// The agent's hook input, as it wrote it.
    pub input: String,
}

/// `relay`'s response: what `hookd relay` would write and exit with, to be written as they are.
///
/// ```json
/// {"id":1,"ok":true,"exit":2,"stdout":"","stderr":"rm -rf is not allowed\n"}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelayResponse {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    pub ok: bool,
    pub exit: u8,
    pub stdout: String,
    pub stderr: String,
    /// What the answer on `stdout` holds back (a refusal, an ask, a rewrite), as the reason a client that
    /// cannot write `stdout` (closed, `/dev/null`, a write that fails) refuses with instead: on stderr,
    /// exit 2. Absent when it holds nothing back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
}

/// Which records a watcher (or `hookd log`) is shown: every field given must match.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WatchFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moment: Option<String>,
    /// Only fires held back (refused, or asked).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
}

impl WatchFilter {
    /// Whether `record` passes. A record with no agent, session or moment (a reload) passes only a
    /// filter that names none.
    pub fn matches(&self, record: &crate::record::Record) -> bool {
        let same = |wanted: &Option<String>, have: &Option<String>| {
            wanted.is_none() || wanted.as_deref() == have.as_deref()
        };
        same(&self.agent, &record.agent)
            && same(&self.session, &record.session)
            && same(&self.moment, &record.moment)
            && (!self.refused || record.refused())
    }
}

/// A fire's event.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Event {
    /// The event as sent; for an undecidable one, what could be read of its head (the moment, the
    /// matcher fields, the session: [`crate::head::EVENT_FIELDS`]).
    pub fields: Map<String, Value>,
    /// Why the event could not be decoded whole (too large, too deep), when it could not: its hooks are
    /// not run but read as failed, each with this reason, so `on_failure = "refuse"` refuses. Set by the
    /// request's `"undecidable"` field (the relay sends it for an input past [`MAX_EVENT`]), or by the
    /// daemon for a request nested past [`MAX_DEPTH`] levels.
    pub undecidable: Option<String>,
    /// Decoded from more than [`LARGE_LINE`](crate::limits::LARGE_LINE) bytes: serializing it for the hooks and
    /// letting it go take milliseconds, done on a blocking thread rather than the runtime's one.
    pub large: bool,
    /// Not held because hookd was reading as many large events as it reads at once: the hooks it would
    /// have reached refuse it, whatever their `on_failure`. An event is never let through because hookd
    /// was busy (only a flood of large requests, which the permits are for, makes it so).
    pub busy: bool,
    /// Where it came from, for the record: the request's `"source"` (`"relay"` from `hookd relay`),
    /// else the socket; the http listener sets its own.
    pub source: crate::record::Source,
}

impl From<Map<String, Value>> for Event {
    fn from(fields: Map<String, Value>) -> Event {
        Event {
            fields,
            undecidable: None,
            large: false,
            busy: false,
            source: crate::record::Source::Socket,
        }
    }
}

/// The kinds of error a request can get.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The line is not JSON (or not UTF-8).
    BadJson,
    /// JSON, but not a request: a missing or wrong field, an unknown op.
    BadRequest,
    /// A fire for a moment neither known nor declared by the settings.
    UnknownMoment,
    /// A line over [`MAX_LINE`](crate::limits::MAX_LINE).
    TooLarge,
    /// The daemon is stopping and takes no new work.
    ShuttingDown,
    /// A `reload` found the settings file invalid; the old settings stay.
    InvalidSettings,
    /// The daemon failed in a way it should not (a bug): the request was not carried out.
    Internal,
    /// A watcher fell too far behind the record: it is dropped, told how many records it missed.
    TooSlow,
}

/// An error response.
///
/// ```json
/// {"id":7,"ok":false,"error":{"kind":"bad_request","message":"unknown op \"fier\" (did you mean \"fire\"?)"}}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorResponse {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    pub ok: bool,
    pub error: ErrorBody,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub kind: ErrorKind,
    pub message: String,
    /// Every validation error, as `file:line:col: message`, for `invalid_settings`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

impl ErrorResponse {
    pub fn new(id: Option<Value>, kind: ErrorKind, message: impl Into<String>) -> ErrorResponse {
        ErrorResponse {
            id,
            ok: false,
            error: ErrorBody {
                kind,
                message: message.into(),
                errors: Vec::new(),
            },
        }
    }
}

/// A fire's response.
///
/// ```json
/// {"id":1,"ok":true,"refused":true,"reason":"rm -rf is not allowed","adds":["branch: main"],
///  "hooks":[{"name":"deny-rm","outcome":"refused","exit":2,"ms":2.4}]}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FireResponse {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    pub ok: bool,
    /// The call must not go on unattended: a hook refused, or asked (`permission: "ask"`: a person may
    /// still approve it). A client that knows nothing of `permission` holds back, the safe side.
    pub refused: bool,
    /// `ask` or `allow`, when a hook gave one and none refused. Written only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission: Option<Permission>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default)]
    pub adds: Vec<String>,
    /// The tool input as the hooks rewrote it, whole: run this instead of the event's `tool_input`.
    /// Written only when a hook changed it and the call was not refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// What the model should see of the tool's result, whole, instead of the event's `tool_response`.
    /// Written only when a hook changed it and nothing refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// Every hook that ran, in the settings file's order.
    #[serde(default)]
    pub hooks: Vec<HookReport>,
    /// Refused at a moment where the fire's agent only takes advice (Gemini CLI at PreCompress): the
    /// agent will not stop. Written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub advisory: bool,
}

/// One hook's part in a fire's response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookReport {
    pub name: String,
    pub outcome: Outcome,
    /// `input` or `output`: what of the call this hook rewrote. Written only when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewrote: Option<Rewrote>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<i32>,
    #[serde(default)]
    pub ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// What one hook said, in a fire's response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Exit 0 with nothing to add.
    Nothing,
    /// Context to add to the agent's.
    Adds,
    /// It rewrote the tool's input or output, and took no side on whether the call may go on.
    Rewrote,
    /// It let the call go on without asking the user.
    Allowed,
    /// It asked for the user's approval.
    Asked,
    Refused,
    /// It crashed, timed out, or answered what cannot be read (its `on_failure` decided what it meant).
    Failed,
    /// Not run: an earlier hook of a sequential moment refused.
    Skipped,
    /// An outcome this hookd does not know, read from another version's answer. Never written.
    #[serde(other)]
    Unknown,
}

impl Outcome {
    /// The word the response writes the outcome with (`"refused"`), for text that says it too.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Nothing => "nothing",
            Outcome::Adds => "adds",
            Outcome::Rewrote => "rewrote",
            Outcome::Allowed => "allowed",
            Outcome::Asked => "asked",
            Outcome::Refused => "refused",
            Outcome::Failed => "failed",
            Outcome::Skipped => "skipped",
            Outcome::Unknown => "unknown",
        }
    }
}

/// A fire's word on whether the call may go on, short of a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Permission {
    /// Go on without asking the user.
    Allow,
    /// Ask the user first (`refused` is true: without a person to ask, the call does not go on).
    Ask,
    /// A word this hookd does not know, read from another version's answer. Never written; read as
    /// holding back.
    #[serde(other)]
    Unknown,
}

/// What of a tool call a hook rewrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rewrote {
    Input,
    Output,
    /// Read from another version's answer. Never written.
    #[serde(other)]
    Unknown,
}

/// `hello`'s response: the hooks that apply to this agent on moments it does not run.
///
/// ```json
/// {"id":2,"ok":true,"version":"0.1.0","unreachable":[{"hook":"x","moment":"PostToolUse"}]}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HelloResponse {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    pub ok: bool,
    pub version: String,
    pub unreachable: Vec<Unreachable>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unreachable {
    pub hook: String,
    pub moment: String,
}

/// `status`'s response.
///
/// ```json
/// {"id":3,"ok":true,"version":"0.1.0","pid":4242,"config":"/home/me/.config/hookd/hooks.toml","generation":3,
///  "hooks":{"PreToolUse":2},"last_reload":{"at":"2026-11-30T08:00:00Z","ok":true},"last_weakened":null,
///  "protect":{"enabled":true,"paths":0},"in_flight":0,"uptime_s":12}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusResponse {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    pub ok: bool,
    pub version: String,
    pub pid: u32,
    pub config: String,
    pub generation: u64,
    pub hooks: Map<String, Value>,
    pub last_reload: LastReload,
    /// The last reload since the daemon started that made the settings guard less (a hook removed,
    /// disabled, relaxed or narrowed, protection turned off); `null` when none did. Read as `null` from a
    /// daemon older than the field.
    #[serde(default)]
    pub last_weakened: Option<LastWeakened>,
    /// hookd's guard of itself in the settings in force; absent only from a daemon older than the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protect: Option<ProtectStatus>,
    pub in_flight: usize,
    pub uptime_s: u64,
    /// Each worker hook's processes: state, pid, restarts, answers out of step, last error.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub workers: Map<String, Value>,
    /// The HTTP listener for agents' http hooks.
    pub http: HttpStatus,
    /// Connections (socket and http) open now, and how many the open-file limit allows at once once
    /// hooks have their reserve.
    pub connections: ConnectionsStatus,
    /// The record: the journal, and what was counted since the daemon started (docs/record.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<RecordStatus>,
    /// The journal's export to an OpenTelemetry collector (docs/export.md); absent from a hookd built
    /// without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub export: Option<ExportStatus>,
}

/// The export in `status`:
///
/// ```json
/// {"state":"retrying","endpoint":"http://127.0.0.1:4318/v1/logs","protocol":"http/protobuf",
///  "backlog_bytes":5120,"sent":120,"refused":0,"last_sent":"2026-12-01T09:30:00.123Z",
///  "last_error":"cannot connect to http://127.0.0.1:4318/v1/logs: Connection refused (os error 111)"}
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportStatus {
    /// `off` (no `[export.otlp]`), `sending`, `caught_up` (nothing left to send), or `retrying` (the
    /// collector did not take the last batch; it is sent again after a pause).
    pub state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// Bytes of the journal not yet sent (before `kinds` and `decisions` leave some out).
    pub backlog_bytes: u64,
    /// Records the collector took since the daemon started.
    pub sent: u64,
    /// Records the collector refused for good (400) since the daemon started: not sent again.
    pub refused: u64,
    /// When a batch was last taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_sent: Option<String>,
    /// The last trouble (the collector's answer, no connection, a cursor not written), until a batch is
    /// taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// The record in `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordStatus {
    /// The journal file being written.
    pub journal: String,
    /// `[record] enabled`: whether fires are recorded.
    pub enabled: bool,
    /// Records written to the journal since start.
    pub written: u64,
    /// Records the writer could not keep up with, since start.
    pub dropped: u64,
    /// Clients watching now.
    pub watchers: usize,
    /// Why the journal cannot be written, when it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Fires since start, per moment.
    pub moments: std::collections::BTreeMap<String, MomentCounts>,
    /// Each hook's recent run times, by name.
    pub hooks: std::collections::BTreeMap<String, HookTimes>,
}

/// Fires of one moment since the daemon started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MomentCounts {
    pub fires: u64,
    /// Refused (asks not counted).
    pub refused: u64,
    /// Sent to a person.
    pub asked: u64,
    /// Fires in which a hook failed (crashed, timed out, gave what is not an answer).
    pub failed: u64,
}

/// One hook's recent run times (its last runs, up to a few hundred).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookTimes {
    /// Runs since start.
    pub runs: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

/// Connections in `status`: `{"open":3,"limit":1280}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnectionsStatus {
    pub open: usize,
    pub limit: usize,
}

/// The HTTP listener in `status`.
///
/// ```json
/// {"state":"listening","listen":"127.0.0.1:8787","token_file":"/run/user/1000/hookd/http-token"}
/// {"state":"off","token_file":"/run/user/1000/hookd/http-token"}
/// {"state":"error","listen":"127.0.0.1:8787","token_file":"...","error":"127.0.0.1:8788 is already in use ..."}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpStatus {
    pub state: HttpState,
    /// The address bound, with the real port when the settings said 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listen: Option<String>,
    /// Where the bearer token is (whether the listener is on or not).
    pub token_file: String,
    /// Whether connections from other users are closed at accept (the kernel can tell whose they are).
    pub peer_check: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The HTTP listener's state in `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HttpState {
    /// The settings ask for no listener.
    Off,
    Listening,
    /// Moving to another address on the port it held, once the old listener lets go of it.
    Moving,
    /// The settings' `[http]` could not be put in force (the listener named by `listen`, if any, is the
    /// one from before).
    Error,
}

/// When the settings were last (re)loaded, and how it went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LastReload {
    pub at: String,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl LastReload {
    /// A (re)load that happened now; `error` when it kept the last good settings.
    pub fn now(error: Option<String>) -> LastReload {
        LastReload {
            at: crate::time::now_rfc3339(),
            ok: error.is_none(),
            error,
        }
    }
}

/// The last reload that weakened the settings, in `status`: the generation it installed, when, the file
/// it read, and every change (as the journal's `weakened` record has them).
///
/// ```json
/// {"generation":4,"at":"2026-11-30T08:00:00Z","file":"/home/me/.config/hookd/hooks.toml",
///  "changes":[{"moment":"PreToolUse","hook":"deny-destructive","change":"removed"}]}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LastWeakened {
    pub generation: u64,
    pub at: String,
    pub file: String,
    pub changes: Vec<crate::record::Weakening>,
}

/// `[protect]` in force, in `status`: `{"enabled":true,"paths":2}`, `paths` counting the extra paths the
/// settings guard (hookd's own files are guarded whatever it says).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProtectStatus {
    pub enabled: bool,
    pub paths: usize,
}

/// `reload`'s response when the new settings were taken.
///
/// ```json
/// {"id":4,"ok":true,"generation":4}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReloadResponse {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    pub ok: bool,
    pub generation: u64,
}

/// The length of `value` written as JSON, counted without building it (it may be many megabytes).
pub fn json_len(value: &impl Serialize) -> usize {
    /// Bytes written, counted and dropped.
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// One response, written as one line with its `\n`.
pub fn to_line(response: &impl Serialize) -> Vec<u8> {
    // Serializing these types cannot fail: every map key is a string and no value is a float NaN.
    let mut line = serde_json::to_vec(response).unwrap_or_else(|_| b"{\"ok\":false}".to_vec());
    line.push(b'\n');
    line
}

/// A fire's response as a client reads it. Read as [`read_response`] reads it; a line with `"ok":true`
/// that does not have the shape this hookd writes (another version's daemon) is read loosely for what a
/// verdict needs, so that a refusal in it is never lost: `refused` (which must then be a boolean), the
/// `reason` and `adds` that are strings, the hooks' `error`s.
pub fn read_fire_response(line: &str) -> Result<Result<FireResponse, ErrorResponse>, String> {
    let strict = read_response::<FireResponse>(line);
    let Err(why) = strict else { return strict };
    let value: Value = serde_json::from_str(line).map_err(|_| why.clone())?;
    if value.get("ok") != Some(&Value::Bool(true)) {
        return Err(why);
    }
    let Some(refused) = value.get("refused").and_then(Value::as_bool) else {
        return Err(why);
    };
    let strings = |key: &str| -> Vec<Value> {
        value
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    Ok(Ok(FireResponse {
        id: value.get("id").cloned(),
        ok: true,
        refused,
        permission: value
            .get("permission")
            .and_then(Value::as_str)
            .map(|word| match word {
                "allow" => Permission::Allow,
                "ask" => Permission::Ask,
                _ => Permission::Unknown,
            }),
        input: value.get("input").filter(|v| !v.is_null()).cloned(),
        output: value.get("output").filter(|v| !v.is_null()).cloned(),
        advisory: value.get("advisory") == Some(&Value::Bool(true)),
        reason: value
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_string),
        adds: strings("adds")
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        hooks: strings("hooks")
            .iter()
            .map(|hook| HookReport {
                name: hook
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                outcome: Outcome::Unknown,
                rewrote: None,
                exit: None,
                ms: 0.0,
                error: hook
                    .get("error")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                truncated: false,
            })
            .collect(),
    }))
}

/// A request as a client writes it: what [`decode`] reads back as a [`Request`] (a test holds the two
/// to each other). The `id` is echoed in the response.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Asking<'a> {
    Fire {
        id: u64,
        moment: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        agent: Option<&'a str>,
        event: &'a Map<String, Value>,
        /// Why the event is only its head (too large to send whole): see [`Event::undecidable`].
        #[serde(skip_serializing_if = "Option::is_none")]
        undecidable: Option<&'a str>,
        /// `"relay"` from `hookd relay`: see [`Event::source`].
        #[serde(skip_serializing_if = "Option::is_none")]
        source: Option<&'a str>,
    },
    Hello {
        id: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        agent: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        moments: Option<&'a [String]>,
    },
    Status {
        id: u64,
    },
    Reload {
        id: u64,
    },
    Watch {
        id: u64,
        #[serde(flatten)]
        filter: &'a WatchFilter,
    },
}

impl Asking<'_> {
    /// The request as one line with its `\n`.
    pub fn to_line(&self) -> Vec<u8> {
        // Serializing these cannot fail: every map key is a string.
        to_line(self)
    }
}

/// A response line as a client reads it: `Ok` with the response `T` when the daemon said `"ok":true`,
/// `Err` with its error response when it said `"ok":false`; the outer `Err` says why the line is
/// neither.
pub fn read_response<T: DeserializeOwned>(line: &str) -> Result<Result<T, ErrorResponse>, String> {
    let value: Value =
        serde_json::from_str(line).map_err(|e| format!("the response is not JSON: {e}"))?;
    let unreadable = |e: serde_json::Error| format!("the response cannot be read: {e}");
    match value.get("ok") {
        Some(Value::Bool(true)) => Ok(Ok(T::deserialize(value).map_err(unreadable)?)),
        Some(Value::Bool(false)) => Ok(Err(ErrorResponse::deserialize(value).map_err(unreadable)?)),
        _ => Err("the response has no \"ok\"".into()),
    }
}

const OPS: &[&str] = &["fire", "relay", "hello", "status", "reload", "watch"];

/// The top-level members of a request read from a line that cannot be decoded whole.
const REQUEST_FIELDS: &[&str] = &["op", "id", "moment", "agent", "source"];

/// Decodes one request line. On error, the `id` is given back when the line had one, to be echoed (read
/// from the line's head when the line is not JSON).
///
/// Lone surrogate escapes (`"\ud800"`, which Node's `JSON.stringify` writes) are read as U+FFFD. A fire
/// nested deeper than serde_json reads ([`MAX_DEPTH`]) is not dropped: it is decoded from its head as
/// undecidable ([`Event::undecidable`]).
pub fn decode(line: &[u8]) -> Result<(Option<Value>, Request), ErrorResponse> {
    let value: Value = match crate::head::parse(line) {
        Ok(value) => value,
        Err(e) => return undecodable(line, &e),
    };
    let Value::Object(mut object) = value else {
        return Err(ErrorResponse::new(
            None,
            ErrorKind::BadRequest,
            "a request must be a JSON object",
        ));
    };
    let id = object.remove("id");
    if let Some(too_long) = id_too_long(id.as_ref()) {
        return Err(ErrorResponse::new(None, ErrorKind::BadRequest, too_long));
    }
    let bad = |message: String| ErrorResponse::new(id.clone(), ErrorKind::BadRequest, message);
    let op = match object.get("op") {
        Some(Value::String(op)) => op.as_str(),
        Some(_) => return Err(bad("\"op\" must be a string".into())),
        None => return Err(bad(format!("missing \"op\" (one of: {})", OPS.join(", ")))),
    };
    let request = match op {
        "fire" => {
            let moment = match object.get("moment") {
                Some(Value::String(moment)) if !moment.is_empty() => moment.clone(),
                Some(_) => return Err(bad("fire: \"moment\" must be a non-empty string".into())),
                None => return Err(bad("fire: missing \"moment\"".into())),
            };
            let agent = optional_string(&object, "agent").map_err(|m| bad(format!("fire: {m}")))?;
            let fields = match object.remove("event") {
                Some(Value::Object(event)) => event,
                Some(_) => return Err(bad("fire: \"event\" must be a JSON object".into())),
                None => return Err(bad("fire: missing \"event\" (a JSON object)".into())),
            };
            let undecidable = match object.get("undecidable") {
                None | Some(Value::Null) => None,
                Some(Value::String(why)) if !why.trim().is_empty() => Some(why.clone()),
                Some(_) => {
                    return Err(bad(
                        "fire: \"undecidable\" must be a non-empty string (why the event could not be sent whole)"
                            .into(),
                    ));
                }
            };
            let source = match object.get("source") {
                None | Some(Value::Null) => crate::record::Source::Socket,
                Some(Value::String(source)) if source == "socket" => crate::record::Source::Socket,
                Some(Value::String(source)) if source == "relay" => crate::record::Source::Relay,
                Some(_) => {
                    return Err(bad(
                        "fire: \"source\" must be \"relay\" or \"socket\" (where the fire came from, for the record)".into(),
                    ));
                }
            };
            Request::Fire {
                moment,
                agent,
                event: Event {
                    fields,
                    undecidable,
                    large: false,
                    busy: false,
                    source,
                },
            }
        }
        "hello" => {
            let agent =
                optional_string(&object, "agent").map_err(|m| bad(format!("hello: {m}")))?;
            let moments = match object.get("moments") {
                None | Some(Value::Null) => None,
                Some(Value::Array(items)) if items.len() > MAX_HELLO_MOMENTS => {
                    return Err(bad(format!(
                        "hello: \"moments\" lists {} moments; at most {MAX_HELLO_MOMENTS}",
                        items.len()
                    )));
                }
                Some(Value::Array(items)) => Some(
                    items
                        .iter()
                        .map(|item| item.as_str().map(str::to_string))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(
                            || bad("hello: \"moments\" must be a list of strings".into()),
                        )?,
                ),
                Some(_) => return Err(bad("hello: \"moments\" must be a list of strings".into())),
            };
            Request::Hello { agent, moments }
        }
        "relay" => {
            let bad = |m: &str| bad(format!("relay: {m}"));
            let agent = match object.get("agent") {
                Some(Value::String(agent)) if !agent.is_empty() => agent.clone(),
                _ => return Err(bad("\"agent\" must be a non-empty string (--agent)")),
            };
            let fail_closed = match object.get("fail_closed") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(bad("\"fail_closed\" must be true or false")),
            };
            let event = optional_string(&object, "event").map_err(|m| bad(&m))?;
            let timeout = match object.get("timeout") {
                None | Some(Value::Null) => crate::limits::RELAY_TIMEOUT_SECS,
                Some(Value::Number(n)) => match n.as_f64() {
                    Some(t)
                        if t > 0.0
                            && t.is_finite()
                            && t <= crate::limits::RELAY_TIMEOUT_MAX_SECS =>
                    {
                        t
                    }
                    _ => {
                        return Err(bad(
                            "\"timeout\" must be a positive number of seconds, at most a day",
                        ));
                    }
                },
                Some(_) => return Err(bad("\"timeout\" must be a number of seconds")),
            };
            let socket = match object.get("socket") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(socket)) if socket.len() <= 4096 => socket.clone(),
                Some(_) => return Err(bad("\"socket\" must be a path of at most 4096 bytes")),
            };
            let input = match object.remove("input") {
                Some(Value::String(input)) if input.len() <= crate::limits::RELAY_INPUT_MAX => {
                    input
                }
                Some(Value::String(input)) => {
                    return Err(bad(&format!(
                        "\"input\" is {} bytes; at most {} (run hookd relay with larger ones)",
                        input.len(),
                        crate::limits::RELAY_INPUT_MAX
                    )));
                }
                _ => return Err(bad("\"input\" must be a string (the agent's hook input)")),
            };
            Request::Relay(RelayRequest {
                agent,
                fail_closed,
                event,
                timeout,
                socket,
                input,
            })
        }
        "status" => Request::Status,
        "reload" => Request::Reload,
        "watch" => {
            let text =
                |key: &str| optional_string(&object, key).map_err(|m| bad(format!("watch: {m}")));
            let refused = match object.get("refused") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(bad("watch: \"refused\" must be true or false".into())),
            };
            Request::Watch(WatchFilter {
                agent: text("agent")?,
                session: text("session")?,
                moment: text("moment")?,
                refused,
            })
        }
        other => {
            let hint = crate::moment::did_you_mean(other, OPS.iter().copied()).map_or_else(
                || format!(" (one of: {})", OPS.join(", ")),
                |op| format!(" (did you mean \"{op}\"?)"),
            );
            return Err(bad(format!(
                "unknown op \"{}\"{hint}",
                crate::moment::shown(other)
            )));
        }
    };
    Ok((id, request))
}

/// A line serde_json could not read. Too deep, and a fire whose head names its moment: an undecidable
/// fire. Otherwise `bad_json`, with the `id` when the head has one.
fn undecodable(
    line: &[u8],
    e: &serde_json::Error,
) -> Result<(Option<Value>, Request), ErrorResponse> {
    if crate::head::too_deep(e) {
        let why = format!("the event is nested deeper than {MAX_DEPTH} levels");
        if let Ok(fire) = decode_undecidable(line, &why) {
            return Ok(fire);
        }
    }
    let id = request_id(line);
    let message = if std::str::from_utf8(line).is_err() {
        "the request is not valid UTF-8".to_string()
    } else {
        format!("the request is not valid JSON: {e}")
    };
    Err(ErrorResponse::new(id, ErrorKind::BadJson, message))
}

/// The `id` a line's head holds (a number or a string), for an error about a line that cannot be read.
fn request_id(line: &[u8]) -> Option<Value> {
    let whole_utf8 = std::str::from_utf8(line).is_ok();
    crate::head::Scanner::scan(REQUEST_FIELDS, None, line)
        .fields
        .get("id")
        .filter(|id| match id {
            Value::Number(_) => true,
            // An id whose own bytes were not UTF-8 (read with U+FFFD in their place) is not the one the
            // client sent: echoing it would match nothing.
            Value::String(id) => whole_utf8 || !id.contains('\u{FFFD}'),
            _ => false,
        })
        .filter(|id| id_too_long(Some(id)).is_none())
        .cloned()
}

/// A fire request that is not to be decoded whole (`why`: too deep, or too large for the memory a
/// connection may hold), read from its head as an undecidable fire: its hooks are chosen as usual and
/// each is read as failed. A line whose head is not a fire naming its moment is `too_large`.
pub fn decode_undecidable(
    line: &[u8],
    why: &str,
) -> Result<(Option<Value>, Request), ErrorResponse> {
    let mut scanner = request_scanner();
    scanner.feed(line);
    undecidable_from_head(scanner.finish(), why)
}

/// A scanner of a request's head: its `op`, `id`, `moment` and `agent`, and its event's
/// [`crate::head::EVENT_FIELDS`], for a request read a piece at a time and never held whole.
pub fn request_scanner() -> crate::head::Scanner {
    crate::head::Scanner::new(REQUEST_FIELDS, Some(("event", crate::head::EVENT_FIELDS)))
}

/// [`decode_undecidable`] from a head already scanned ([`request_scanner`]).
pub fn undecidable_from_head(
    head: crate::head::Head,
    why: &str,
) -> Result<(Option<Value>, Request), ErrorResponse> {
    let id = head
        .fields
        .get("id")
        .filter(|id| id.is_number() || id.is_string())
        .cloned();
    if let Some(too_long) = id_too_long(id.as_ref()) {
        return Err(ErrorResponse::new(None, ErrorKind::BadRequest, too_long));
    }
    let text = |key: &str| {
        head.fields
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    if text("op").as_deref() == Some("fire")
        && let Some(moment) = text("moment")
    {
        return Ok((
            id,
            Request::Fire {
                moment,
                agent: text("agent"),
                event: Event {
                    fields: head.inner,
                    undecidable: Some(why.to_string()),
                    large: false,
                    busy: false,
                    source: match text("source").as_deref() {
                        Some("relay") => crate::record::Source::Relay,
                        _ => crate::record::Source::Socket,
                    },
                },
            },
        ));
    }
    Err(ErrorResponse::new(
        id,
        ErrorKind::TooLarge,
        format!("the request cannot be read whole: {why}"),
    ))
}

/// Why `id` is refused, when it is longer than [`MAX_ID`] bytes as JSON.
pub fn id_too_long(id: Option<&Value>) -> Option<String> {
    let length = match id? {
        Value::String(id) => id.len(),
        Value::Null | Value::Bool(_) => return None,
        other => serde_json::to_string(other).map_or(usize::MAX, |id| id.len()),
    };
    (length > MAX_ID).then(|| format!("the id is {length} bytes long; at most {MAX_ID}"))
}

fn optional_string(object: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) if s.len() > MAX_AGENT_NAME => Err(format!(
            "\"{key}\" is {} bytes long; at most {MAX_AGENT_NAME}",
            s.len()
        )),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("\"{key}\" must be a string")),
    }
}

/// How the report of a hook starts when it could not be given its event: the relay looks for it.
pub const UNDECIDED: &str = "hookd could not give this hook the event: ";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcomes_word_is_the_one_the_response_writes() {
        for outcome in [
            Outcome::Nothing,
            Outcome::Adds,
            Outcome::Rewrote,
            Outcome::Allowed,
            Outcome::Asked,
            Outcome::Refused,
            Outcome::Failed,
            Outcome::Skipped,
        ] {
            assert_eq!(serde_json::to_value(outcome).unwrap(), outcome.word());
        }
        let unknown: Outcome = serde_json::from_str("\"vetoed\"").unwrap();
        assert_eq!(unknown.word(), "unknown");
    }

    /// What a client writes is what the daemon reads: each request, written by [`Asking`], decodes to
    /// the [`Request`] it means.
    #[test]
    fn what_clients_write_the_daemon_reads() {
        let event: Map<String, Value> =
            serde_json::from_str(r#"{"tool_name":"Bash","tool_input":{"command":"ls"}}"#).unwrap();
        let moments = vec!["PreToolUse".to_string(), "Stop".to_string()];
        let watch = WatchFilter {
            agent: Some("codex".into()),
            session: None,
            moment: Some("PreToolUse".into()),
            refused: true,
        };
        let cases = [
            (
                Asking::Fire {
                    id: 1,
                    moment: "PreToolUse",
                    agent: Some("codex"),
                    event: &event,
                    source: None,
                    undecidable: None,
                },
                Request::Fire {
                    moment: "PreToolUse".into(),
                    agent: Some("codex".into()),
                    event: Event::from(event.clone()),
                },
            ),
            (
                Asking::Fire {
                    id: 1,
                    moment: "Stop",
                    agent: None,
                    event: &event,
                    source: None,
                    undecidable: Some("too large"),
                },
                Request::Fire {
                    moment: "Stop".into(),
                    agent: None,
                    event: Event {
                        undecidable: Some("too large".into()),
                        ..Event::from(event.clone())
                    },
                },
            ),
            (
                Asking::Hello {
                    id: 1,
                    agent: Some("my-agent"),
                    moments: Some(&moments),
                },
                Request::Hello {
                    agent: Some("my-agent".into()),
                    moments: Some(moments.clone()),
                },
            ),
            (Asking::Status { id: 1 }, Request::Status),
            (Asking::Reload { id: 1 }, Request::Reload),
            (
                Asking::Watch {
                    id: 1,
                    filter: &watch,
                },
                Request::Watch(watch.clone()),
            ),
        ];
        for (asking, meant) in cases {
            let line = asking.to_line();
            let (id, request) = decode(&line[..line.len() - 1]).unwrap();
            assert_eq!(id, Some(Value::from(1)), "{asking:?}");
            assert_eq!(request, meant, "{asking:?}");
        }
    }

    /// What the daemon writes is what a client reads: each response type read back from its own line.
    #[test]
    fn what_the_daemon_writes_clients_read() {
        let fire = FireResponse {
            permission: None,
            input: None,
            output: None,
            id: Some(7.into()),
            ok: true,
            refused: true,
            advisory: true,
            reason: Some("no".into()),
            adds: vec!["branch: main".into()],
            hooks: vec![HookReport {
                rewrote: None,
                name: "deny".into(),
                outcome: Outcome::Refused,
                exit: Some(2),
                ms: 1.5,
                error: None,
                truncated: true,
            }],
        };
        let line = String::from_utf8(to_line(&fire)).unwrap();
        assert_eq!(read_response::<FireResponse>(&line), Ok(Ok(fire)));
        let mut error = ErrorResponse::new(Some(8.into()), ErrorKind::InvalidSettings, "bad");
        error.error.errors = vec!["h.toml:1:1: x".into()];
        let line = String::from_utf8(to_line(&error)).unwrap();
        assert_eq!(read_response::<FireResponse>(&line), Ok(Err(error)));
        let reload = ReloadResponse {
            id: None,
            ok: true,
            generation: 3,
        };
        let line = String::from_utf8(to_line(&reload)).unwrap();
        assert_eq!(read_response::<ReloadResponse>(&line), Ok(Ok(reload)));
        assert!(read_response::<ReloadResponse>("{}").is_err());
        // Another version's answer, in shapes this hookd does not write: a refusal in it is still heard.
        for line in [
            r#"{"ok":true,"refused":true,"reason":"x"}"#,
            r#"{"ok":true,"refused":true,"reason":"x","adds":[1,"a"],"hooks":[{"name":"h","outcome":"asked"}]}"#,
            r#"{"ok":true,"refused":true,"reason":"x","hooks":[{"outcome":3}]}"#,
        ] {
            let read = read_fire_response(line).unwrap().unwrap();
            assert!(read.refused, "{line}");
            assert_eq!(read.reason.as_deref(), Some("x"), "{line}");
        }
        // What cannot be read as a verdict is not guessed at.
        for line in [
            r#"{"ok":true,"refused":"true"}"#,
            r#"{"ok":true}"#,
            r#"{"refused":true}"#,
            "[]",
        ] {
            assert!(read_fire_response(line).is_err(), "{line}");
        }
        assert!(read_response::<ReloadResponse>("not json").is_err());
    }
    use serde_json::json;

    fn error_of(line: &str) -> ErrorResponse {
        decode(line.as_bytes()).expect_err(line)
    }

    #[test]
    fn decodes_every_op() {
        let (id, request) =
            decode(br#"{"op":"fire","id":1,"moment":"Stop","agent":"codex","event":{"a":1}}"#)
                .unwrap();
        assert_eq!(id, Some(json!(1)));
        assert_eq!(
            request,
            Request::Fire {
                moment: "Stop".into(),
                agent: Some("codex".into()),
                event: json!({"a":1}).as_object().unwrap().clone().into()
            }
        );
        let (_, request) = decode(br#"{"op":"hello","agent":"a","moments":["Stop"]}"#).unwrap();
        assert_eq!(
            request,
            Request::Hello {
                agent: Some("a".into()),
                moments: Some(vec!["Stop".into()])
            }
        );
        assert_eq!(
            decode(br#"{"op":"status","id":"x"}"#).unwrap(),
            (Some(json!("x")), Request::Status)
        );
        assert_eq!(
            decode(br#"{"op":"reload"}"#).unwrap(),
            (None, Request::Reload)
        );
    }

    #[test]
    fn bad_json_and_bad_utf8_are_bad_json() {
        assert_eq!(error_of("{\"op\":").error.kind, ErrorKind::BadJson);
        let error = decode(b"{\"op\":\"\xff\"}").unwrap_err();
        assert_eq!(error.error.kind, ErrorKind::BadJson);
        assert!(error.error.message.contains("UTF-8"));
    }

    #[test]
    fn bad_json_echoes_an_id_read_from_its_head() {
        for (line, id) in [
            (&br#"{"op":"fire","id":3,"#[..], Some(json!(3))),
            (br#"{"id":"x","op":"status",,}"#, Some(json!("x"))),
            (b"{\"id\":7,\"op\":\"\xff\"}", Some(json!(7))),
            (br#"{"event":{"id":1},"op":"#, None),
            (br#"{"id":{"a":1},"op":"#, None),
            (br#"not json, "id": 4"#, None),
        ] {
            let error = decode(line).unwrap_err();
            assert_eq!((error.error.kind, error.id), (ErrorKind::BadJson, id));
        }
    }

    #[test]
    fn lone_surrogates_are_read_as_replacement_characters() {
        let (_, request) =
            decode(br#"{"op":"fire","moment":"Stop","event":{"a":"x\ud800","b":"\\ud800"}}"#)
                .unwrap();
        let Request::Fire { event, .. } = request else {
            panic!("not a fire")
        };
        assert_eq!(
            Value::Object(event.fields),
            json!({"a": "x\u{fffd}", "b": "\\ud800"})
        );
    }

    #[test]
    fn a_fire_too_deep_is_undecidable_and_the_field_says_so_too() {
        let depth = 10_000;
        let line = format!(
            r#"{{"op":"fire","id":1,"moment":"PreToolUse","agent":"codex","event":{{"tool_name":"Bash","x":{}{}}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let (id, request) = decode(line.as_bytes()).unwrap();
        assert_eq!(id, Some(json!(1)));
        assert_eq!(
            request,
            Request::Fire {
                moment: "PreToolUse".into(),
                agent: Some("codex".into()),
                event: Event {
                    fields: json!({"tool_name": "Bash"}).as_object().unwrap().clone(),
                    undecidable: Some("the event is nested deeper than 128 levels".into()),
                    large: false,
                    busy: false,
                    source: crate::record::Source::Socket,
                },
            }
        );
        let (_, request) =
            decode(br#"{"op":"fire","moment":"Stop","event":{},"undecidable":"too big"}"#).unwrap();
        let Request::Fire { event, .. } = request else {
            panic!("not a fire")
        };
        assert_eq!(event.undecidable.as_deref(), Some("too big"));
    }

    #[test]
    fn an_id_over_a_kibibyte_is_refused_and_never_echoed() {
        // Found attacking the fixes again: 24 connections sending `status` with a 60 MiB
        // id, reading nothing, pinned 1.48 GB in unread answers.
        let long = "7".repeat(1025);
        for line in [
            format!(r#"{{"op":"status","id":"{long}"}}"#),
            format!(r#"{{"op":"status","id":{long}}}"#),
            format!(r#"{{"op":"status","id":["{long}"]}}"#),
        ] {
            let error = decode(line.as_bytes()).expect_err("taken");
            assert_eq!(
                (error.error.kind, &error.id),
                (ErrorKind::BadRequest, &None),
                "{line}"
            );
            assert!(error.error.message.contains("at most 1024"), "{error:?}");
        }
        let fits = "7".repeat(1000);
        let line = format!(r#"{{"op":"status","id":"{fits}"}}"#);
        assert_eq!(decode(line.as_bytes()).unwrap().0, Some(json!(fits)));
    }

    #[test]
    fn wrong_shapes_are_bad_requests_with_the_id_echoed() {
        for line in [
            r#"{"id":9}"#,
            r#"{"id":9,"op":1}"#,
            r#"{"id":9,"op":"fier"}"#,
            r#"{"id":9,"op":"fire","event":{}}"#,
            r#"{"id":9,"op":"fire","moment":"Stop"}"#,
            r#"{"id":9,"op":"fire","moment":"Stop","event":[]}"#,
            r#"{"id":9,"op":"fire","moment":"Stop","event":{},"agent":3}"#,
            r#"{"id":9,"op":"hello","moments":"Stop"}"#,
            &format!(
                r#"{{"id":9,"op":"fire","moment":"Stop","event":{{}},"agent":"{}"}}"#,
                "a".repeat(257)
            ),
            &format!(
                r#"{{"id":9,"op":"hello","moments":[{}]}}"#,
                vec!["\"Stop\""; 1025].join(",")
            ),
        ] {
            let error = error_of(line);
            assert_eq!(
                (error.error.kind, error.id),
                (ErrorKind::BadRequest, Some(json!(9))),
                "{line}"
            );
        }
        assert_eq!(error_of("[1]").error.kind, ErrorKind::BadRequest);
        assert!(
            error_of(r#"{"op":"fier"}"#)
                .error
                .message
                .contains("did you mean \"fire\"")
        );
    }

    #[test]
    fn responses_are_one_line_with_id_first() {
        let line = to_line(&ErrorResponse::new(
            Some(json!(1)),
            ErrorKind::TooLarge,
            "x",
        ));
        assert_eq!(
            line,
            b"{\"id\":1,\"ok\":false,\"error\":{\"kind\":\"too_large\",\"message\":\"x\"}}\n"
        );
        let line = to_line(&ErrorResponse::new(None, ErrorKind::BadJson, "x"));
        assert!(!String::from_utf8(line).unwrap().contains("\"id\""));
    }
}
