//! The protocol's types: every request and response, as serde writes and reads them (docs/protocol.md).

/// The daemon's version, as `hello` and `status` report it (and `doctor` compares with its own).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::decision::{HookReport, Outcome, Permission, Verdict};
use crate::limits::MAX_EVENT;

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
    /// Hooks hung live on this connection by the client `client` (docs/protocol.md, "attach"): each
    /// hook as the client sent it, checked one by one, so that one refused does not refuse the others.
    Attach {
        client: String,
        hooks: Vec<Value>,
    },
    /// A live hook's answer to the call numbered `call` (as the client sent it: a call it does not
    /// echo is out of step), with the answer's members, read as a worker hook's JSON answer.
    Answer {
        call: Option<Value>,
        answer: Map<String, Value>,
    },
    /// This connection's live hooks taken down: those named, or all of them (`None`).
    Detach {
        hooks: Option<Vec<String>>,
    },
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
    /// matcher fields, the session: [`crate::protocol::head::EVENT_FIELDS`]).
    pub fields: Map<String, Value>,
    /// Why the event could not be decoded whole (too large, too deep), when it could not: its hooks are
    /// not run but read as failed, each with this reason, so `on_failure = "refuse"` refuses. Set by the
    /// request's `"undecidable"` field (the relay sends it for an input past [`MAX_EVENT`]), or by the
    /// daemon for a request nested past [`MAX_DEPTH`](crate::limits::MAX_DEPTH) levels.
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
    /// An `answer` that echoes no call pending on its connection (docs/protocol.md, "answer").
    OutOfStep,
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

/// A fire's response: its [`Verdict`]'s fields beside `id` and `ok`.
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
    #[serde(flatten)]
    pub verdict: Verdict,
}

/// A response is its verdict, with the request's `id`: read as one (`response.refused`).
impl std::ops::Deref for FireResponse {
    type Target = Verdict;

    fn deref(&self) -> &Verdict {
        &self.verdict
    }
}

impl std::ops::DerefMut for FireResponse {
    fn deref_mut(&mut self) -> &mut Verdict {
        &mut self.verdict
    }
}

/// `attach`'s response: the hooks hung, and each one refused with why.
///
/// ```json
/// {"id":1,"ok":true,"attached":["approve"],"refused":[{"name":"x","reason":"unknown moment \"Stp\" (did you mean \"Stop\"?)"}]}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttachResponse {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    pub ok: bool,
    pub attached: Vec<String>,
    pub refused: Vec<Refused>,
}

/// A live hook not hung, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Refused {
    pub name: String,
    pub reason: String,
}

/// `detach`'s response: the hooks taken down, and the names given that this connection had not hung.
///
/// ```json
/// {"id":2,"ok":true,"detached":["approve"]}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DetachResponse {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    pub ok: bool,
    pub detached: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<String>,
}

/// Live hooks taken down by the daemon, told to the client that hung them (a SessionEnd of their
/// session).
///
/// ```json
/// {"op":"detached","hooks":["approve"],"reason":"session S1 ended"}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Detached {
    pub op: String,
    pub hooks: Vec<String>,
    pub reason: String,
}

/// A live hook in `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveHookStatus {
    /// The name its client gave itself in `attach`.
    pub client: String,
    /// The client's process, as the kernel says (SO_PEERCRED).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    pub hook: String,
    pub moment: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<Vec<String>>,
    /// Calls sent to it since it was hung.
    pub calls: u64,
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
    /// The hooks hung live over the socket, in the order hung (docs/protocol.md, "attach").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub live: Vec<LiveHookStatus>,
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
    let verdict = Verdict {
        refused,
        permission: value
            .get("permission")
            .and_then(Value::as_str)
            .map(Permission::of_word),
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
                layer: hook
                    .get("layer")
                    .and_then(Value::as_str)
                    .map(str::to_string),
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
        conflict: None,
    };
    Ok(Ok(FireResponse {
        id: value.get("id").cloned(),
        ok: true,
        verdict,
    }))
}

/// A request as a client writes it: what [`super::decoder::decode`] reads back as a [`Request`] (a test holds the two
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

/// How the report of a hook starts when it could not be given its event: the relay looks for it.
pub const UNDECIDED: &str = "hookd could not give this hook the event: ";

#[cfg(test)]
mod tests {
    use super::*;

    /// What the daemon writes is what a client reads: each response type read back from its own line.
    #[test]
    fn what_the_daemon_writes_clients_read() {
        let fire = FireResponse {
            id: Some(7.into()),
            ok: true,
            verdict: Verdict {
                permission: None,
                input: None,
                output: None,
                refused: true,
                advisory: true,
                reason: Some("no".into()),
                adds: vec!["branch: main".into()],
                hooks: vec![HookReport {
                    layer: None,
                    rewrote: None,
                    name: "deny".into(),
                    outcome: Outcome::Refused,
                    exit: Some(2),
                    ms: 1.5,
                    error: None,
                    truncated: true,
                }],
                conflict: None,
            },
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
