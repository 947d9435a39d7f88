//! What the fuzz targets check: one function per target, taking the raw bytes of one input and panicking
//! when hookd breaks one of its promises on it (a panic is what libFuzzer reports as a crash).
//!
//! The same file is the library of the fuzz crate (fuzz/Cargo.toml) and a module of
//! `tests/it/fuzz_regressions.rs`, which replays every file of `fuzz/corpus/` and `fuzz/regressions/` through
//! these functions on each `cargo test`: a crash once found stays fixed without cargo fuzz.
//!
//! Beyond "does not panic", each checks what the rest of hookd relies on:
//!
//! - [`request`]: a connection's bytes, split into lines by `LineDecoder` as the server does, each line
//!   decoded by `protocol::decoder::decode`. The lines are exactly the input's lines, none longer than the limit;
//!   a request that does not decode gets an error response that is one line of JSON, echoes the request's
//!   `id` whenever the line was an object with one (or, for a line that is not JSON, whenever its head
//!   holds one), and says what is wrong in a bounded message. Only a fire nested too deep decodes from
//!   its head, as undecidable; the head scanner reads every line that is a JSON object as serde_json does.
//! - [`settings`]: the bytes as a settings file (`Settings::parse`). Every error is placed at a real line
//!   and column (both from 1), prints as `file:line:col: message` on one line, and the list is in file
//!   order; valid settings hold only what validation promises (unique names, timeouts in range, ...).
//! - [`answer`]: a few hook runs (how each ended, its stdout and stderr) read by `reading::read`, then
//!   folded by `verdict::fold`. A refusal and an ask always have a reason that says something (an allow
//!   may have one, never blank), a failure always has an error, a hook that did not exit by itself never
//!   adds nor refuses but by `on_failure`, and the verdict holds the call back exactly when a hook refused
//!   or asked, with the first refusal's reason (else the first ask's) and every add in order.
//! - [`guard`]: the bytes as a shell tool's command line (and as a file tool's path), judged by the
//!   built-in guard with every rule at its default. It never panics, answers the same twice, and a
//!   refusal's reason says something and names its rule.
//!
//! The input formats are in fuzz/README.md.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use bytes::BytesMut;
use hookd::decision::Outcome;
use hookd::engine::reading::{self, Exit, Run};
use hookd::engine::verdict::{self, Heard};
use hookd::limits::MAX_LINE;
use hookd::lines::{Frame, LineDecoder};
use hookd::protocol::head::{self, Scanner};
use hookd::protocol::{self, ErrorKind, Request};
use hookd::settings::{ConfigError, OnFailure, Program, Settings};
use serde_json::Value;
use tokio_util::codec::Decoder;

// ---- request -------------------------------------------------------------------------------------------

/// The longest error message a request may get. Client-given names are shown cut to 100 characters
/// (`moment::shown`) so that a bad request of a megabyte is not echoed back whole.
const MAX_ERROR_MESSAGE: usize = 1024;

/// The bytes of one connection, fed to `LineDecoder` and each line to `protocol::decoder::decode`.
pub fn request(data: &[u8]) {
    match data.first() {
        // A first byte of 0x80 or more (never the start of a JSON request) is a header: a small line limit
        // and a read size, so that the limit and reads that end mid-line are fuzzed too.
        Some(&b) if b >= 0x80 => {
            let max = usize::from(b & 0x7f) + 1;
            let chunk = data.get(1).map_or(1, |&c| usize::from(c) + 1);
            let stream = data.get(2..).unwrap_or_default();
            for line in split_lines(stream, max, chunk) {
                request_line(&line);
            }
        }
        _ => {
            // The server's own limit; the whole input in one read, and again in reads of 7 bytes.
            let lines = split_lines(data, MAX_LINE, data.len().max(1));
            assert_eq!(
                lines,
                split_lines(data, MAX_LINE, 7),
                "the lines must not depend on how the bytes were read"
            );
            for line in lines {
                request_line(&line);
            }
        }
    }
}

/// Splits `stream` as a connection that reads it `chunk` bytes at a time, checks the frames against the
/// plain split at `\n`, and gives the lines up to the first line over `max` (where the server hangs up).
fn split_lines(stream: &[u8], max: usize, chunk: usize) -> Vec<Vec<u8>> {
    let mut decoder = LineDecoder::new(max);
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    'reading: for piece in stream.chunks(chunk) {
        buf.extend_from_slice(piece);
        while let Some(frame) = decoder.decode(&mut buf).expect("LineDecoder never fails") {
            let too_long = frame == Frame::TooLong;
            frames.push(frame);
            if too_long {
                break 'reading;
            }
        }
        assert!(
            buf.len() <= max,
            "LineDecoder holds {} bytes of one line, over its limit of {max}",
            buf.len()
        );
    }
    if frames.last() != Some(&Frame::TooLong) {
        // The connection ends: tokio's FramedRead calls decode_eof until it gives nothing.
        while let Some(frame) = decoder
            .decode_eof(&mut buf)
            .expect("LineDecoder never fails")
        {
            let too_long = frame == Frame::TooLong;
            frames.push(frame);
            if too_long {
                break;
            }
        }
    }

    let expected = expected_frames(stream, max);
    assert_eq!(
        frames, expected,
        "LineDecoder(max {max}, reads of {chunk}) split the stream wrong"
    );
    frames
        .into_iter()
        .filter_map(|frame| match frame {
            Frame::Line(line) => Some(line.to_vec()),
            Frame::TooLong => None,
        })
        .collect()
}

/// The frames a connection carrying `stream` must give: each line without its `\n` (and the `\r` before
/// it), the last one even without a `\n`, up to and including the first line longer than `max`.
fn expected_frames(stream: &[u8], max: usize) -> Vec<Frame> {
    let mut frames = Vec::new();
    let mut rest = stream;
    while !rest.is_empty() {
        let (line, ended) = match rest.iter().position(|&b| b == b'\n') {
            Some(at) => (&rest[..at], true),
            None => (rest, false),
        };
        // The limit counts the line as sent, `\r` included.
        if line.len() > max {
            frames.push(Frame::TooLong);
            break;
        }
        let mut line = line;
        if ended {
            rest = &rest[line.len() + 1..];
            line = line.strip_suffix(b"\r").unwrap_or(line);
        } else {
            // A last line without `\n` is taken as it stands (a `\r` there is JSON white space anyway).
            rest = &[];
        }
        frames.push(Frame::Line(BytesMut::from(line)));
    }
    frames
}

/// Whether `id` stands in `line` as it is, between quotes: its bytes were UTF-8 as sent.
fn sent_as_is(line: &[u8], id: &str) -> bool {
    let quoted = format!("\"{id}\"");
    line.windows(quoted.len())
        .any(|window| window == quoted.as_bytes())
}

/// One request line through `protocol::decoder::decode`.
fn request_line(line: &[u8]) {
    // As the daemon reads JSON: lone surrogate escapes mended.
    let parsed = head::parse(line);
    let too_deep = parsed.as_ref().is_err_and(head::too_deep);
    let json: Option<Value> = parsed.ok();
    // A line that is not JSON: the id its head holds (a number or a string), which the error echoes;
    // not a string id whose own bytes were not UTF-8 (read with U+FFFD in their place: not the id sent).
    let whole_utf8 = std::str::from_utf8(line).is_ok();
    let scanned = Scanner::scan(&["id"], None, line)
        .fields
        .remove("id")
        .filter(|id| match id {
            Value::Number(_) => true,
            Value::String(id) => whole_utf8 || !id.contains('\u{FFFD}'),
            _ => false,
        });
    let id_sent = match &json {
        Some(json) => json.as_object().and_then(|o| o.get("id")),
        None => scanned.as_ref(),
    };
    // An id over the limit is refused, never echoed.
    let id_sent = id_sent.filter(|id| protocol::decoder::id_too_long(Some(id)).is_none());
    if let Some(object) = json.as_ref().and_then(Value::as_object) {
        head_agrees(line, object);
    }
    match protocol::decoder::decode(line) {
        Ok((id, request)) => {
            // Or, decoded from the head of a line with bad bytes elsewhere, an id holding a U+FFFD its
            // own bytes hold as sent (`"\u{FFFD}deep"` written out in UTF-8): the id sent, given back
            // (found by the fuzzer; an error for such a line gives none back, as the check expects).
            let as_sent = id.as_ref() == id_sent
                || (!whole_utf8
                    && matches!(id.as_ref(), Some(Value::String(text))
                        if text.contains('\u{FFFD}') && sent_as_is(line, text)));
            assert!(
                as_sent,
                "the id is given back as sent: {id:?}, sent {id_sent:?}"
            );
            let Some(object) = json.as_ref().and_then(Value::as_object) else {
                // Only a fire too deep to decode decodes from its head: as undecidable.
                assert!(too_deep, "only a JSON object, or one too deep, decodes");
                let Request::Fire { moment, event, .. } = request else {
                    panic!("a request too deep to decode can only be a fire");
                };
                assert!(!moment.is_empty(), "a fire's moment is never empty");
                assert!(
                    event.undecidable.is_some(),
                    "a fire too deep to decode is undecidable"
                );
                return;
            };
            match request {
                Request::Fire { moment, agent, .. } => {
                    assert_eq!(object.get("op"), Some(&Value::from("fire")));
                    assert!(!moment.is_empty(), "a fire's moment is never empty");
                    assert!(
                        agent.is_none_or(|a| !a.is_empty()),
                        "an empty agent is no agent"
                    );
                }
                Request::Hello { agent, .. } => {
                    assert_eq!(object.get("op"), Some(&Value::from("hello")));
                    assert!(
                        agent.is_none_or(|a| !a.is_empty()),
                        "an empty agent is no agent"
                    );
                }
                Request::Relay(relay) => {
                    assert_eq!(object.get("op"), Some(&Value::from("relay")));
                    assert!(!relay.agent.is_empty(), "a relay names its agent");
                    assert!(
                        relay.timeout > 0.0 && relay.timeout.is_finite(),
                        "a relay's timeout is a positive time"
                    );
                    assert!(
                        relay.input.len() <= hookd::limits::RELAY_INPUT_MAX,
                        "a relay's input is within its limit"
                    );
                }
                Request::Status => assert_eq!(object.get("op"), Some(&Value::from("status"))),
                Request::Reload => assert_eq!(object.get("op"), Some(&Value::from("reload"))),
                Request::Watch(filter) => {
                    assert_eq!(object.get("op"), Some(&Value::from("watch")));
                    for name in [&filter.agent, &filter.session, &filter.moment] {
                        assert!(
                            name.as_ref().is_none_or(|n| !n.is_empty()),
                            "an empty name is no filter"
                        );
                    }
                }
                Request::Attach { client, hooks } => {
                    assert_eq!(object.get("op"), Some(&Value::from("attach")));
                    assert!(!client.trim().is_empty(), "an attach names its client");
                    assert!(hooks.len() <= hookd::limits::MAX_LIVE_HOOKS_PER_CONNECTION);
                }
                Request::Answer { answer, .. } => {
                    assert_eq!(object.get("op"), Some(&Value::from("answer")));
                    assert!(
                        !answer.contains_key("op") && !answer.contains_key("call"),
                        "an answer's members are its own"
                    );
                }
                Request::Detach { .. } => {
                    assert_eq!(object.get("op"), Some(&Value::from("detach")))
                }
            }
        }
        Err(error) => {
            let kind = error.error.kind;
            match &json {
                None => assert_eq!(kind, ErrorKind::BadJson, "not JSON, so bad_json"),
                Some(_) => assert_eq!(kind, ErrorKind::BadRequest, "JSON, so bad_request"),
            }
            assert_eq!(
                error.id.as_ref(),
                id_sent,
                "an error echoes the request's id whenever it had one"
            );
            let message = &error.error.message;
            assert!(!message.trim().is_empty(), "an error says what is wrong");
            assert!(
                message.len() <= MAX_ERROR_MESSAGE,
                "an error message of {} bytes: the request is echoed back whole",
                message.len()
            );

            let response = protocol::to_line(&error);
            assert_eq!(response.last(), Some(&b'\n'), "a response ends its line");
            assert_eq!(
                response.iter().filter(|&&b| b == b'\n').count(),
                1,
                "a response is one line: {}",
                String::from_utf8_lossy(&response)
            );
            let back: Value = serde_json::from_slice(&response).expect("an error response is JSON");
            assert_eq!(back["ok"], Value::Bool(false));
            assert_eq!(
                back.get("id"),
                id_sent,
                "the id, read back from the response, is not the one sent: {}",
                String::from_utf8_lossy(&response).trim_end()
            );
            assert_eq!(back["error"]["message"].as_str(), Some(message.as_str()));
            assert!(back["error"]["kind"].is_string());
        }
    }
}

/// The head scanner (which reads what serde_json cannot: too large, too deep) reads every top-level string
/// member it is asked for, and those of the request's `event`, as serde_json does, whatever the pieces
/// the line arrives in.
fn head_agrees(line: &[u8], object: &serde_json::Map<String, Value>) {
    const TOP: &[&str] = &["op", "id", "moment", "agent", "reason", "tool_name"];
    fn strings<'a>(
        object: Option<&'a serde_json::Map<String, Value>>,
        wanted: &[&str],
    ) -> Vec<(&'a String, &'a str)> {
        object
            .into_iter()
            .flatten()
            .filter(|(key, _)| wanted.contains(&key.as_str()))
            .filter_map(|(key, value)| Some((key, value.as_str()?)))
            .filter(|(_, value)| value.len() <= hookd::limits::MAX_HEAD_VALUE)
            .collect()
    }
    let top = strings(Some(object), TOP);
    let inner = strings(
        object.get("event").and_then(Value::as_object),
        head::EVENT_FIELDS,
    );
    for piece in [line.len().max(1), 3] {
        let mut scanner = Scanner::new(TOP, Some(("event", head::EVENT_FIELDS)));
        for bytes in line.chunks(piece) {
            scanner.feed(bytes);
        }
        let found = scanner.finish();
        assert!(found.object, "a JSON object is read as one");
        for (fields, want) in [(&found.fields, &top), (&found.inner, &inner)] {
            for (key, value) in want {
                assert_eq!(
                    fields.get(*key).and_then(Value::as_str),
                    Some(*value),
                    "the head scanner read {key} otherwise than serde_json (pieces of {piece})"
                );
            }
        }
    }
}

// ---- settings ------------------------------------------------------------------------------------------

/// The name settings errors give the file.
const LABEL: &str = "fuzz/hooks.toml";

/// The most seconds a hook may be given (settings::parse's MAX_TIMEOUT_SECS: a day).
const MAX_TIMEOUT: Duration = Duration::from_secs(86_400);

/// The bytes as a settings file.
pub fn settings(data: &[u8]) {
    let text = match std::str::from_utf8(data) {
        Ok(text) => text.to_string(),
        Err(e) => {
            // What Settings::read says of such a file; the rest is parsed as the lossy text.
            let text = String::from_utf8_lossy(data).into_owned();
            let error =
                ConfigError::at(LABEL, &text, e.valid_up_to(), "the file is not valid UTF-8");
            config_error(&text, &error);
            text
        }
    };
    match Settings::parse(Path::new("/fuzz/hooks.toml"), LABEL, &text) {
        Err(errors) => {
            assert!(
                !errors.0.is_empty(),
                "a refused file has at least one error"
            );
            for error in &errors.0 {
                config_error(&text, error);
            }
            assert!(
                errors
                    .0
                    .windows(2)
                    .all(|w| (w[0].line, w[0].column) <= (w[1].line, w[1].column)),
                "errors are in the file's order"
            );
            assert_eq!(
                errors.to_string().lines().count(),
                errors.0.len(),
                "one error per line"
            );
        }
        Ok(settings) => valid_settings(&settings),
    }
}

/// One settings error: at a line and column that exist, printed `file:line:col: message` on one line.
fn config_error(text: &str, error: &ConfigError) {
    assert_eq!(error.file, LABEL);
    assert!(error.line >= 1, "line {} in {error:?}", error.line);
    assert!(error.column >= 1, "column {} in {error:?}", error.column);
    // The lines as line_and_column counts them: split at `\n` only.
    let line = text.split('\n').nth(error.line - 1);
    let line = line.unwrap_or_else(|| panic!("{error:?}: the file has no line {}", error.line));
    assert!(
        error.column <= line.chars().count() + 1,
        "{error:?}: line {} has no column {}",
        error.line,
        error.column
    );
    assert!(!error.message.trim().is_empty(), "{error:?}: no message");
    assert!(
        !error.message.contains(['\n', '\r']),
        "{error:?}: a message over several lines breaks `file:line:col: message`, one per line"
    );
    assert_eq!(
        error.to_string(),
        format!("{LABEL}:{}:{}: {}", error.line, error.column, error.message)
    );
}

/// What validation promises of settings it accepts.
fn valid_settings(settings: &Settings) {
    let d = &settings.defaults;
    assert!(
        !d.timeout.is_zero() && d.timeout <= MAX_TIMEOUT,
        "{:?}",
        d.timeout
    );
    assert!((1..=4096).contains(&d.max_processes), "{}", d.max_processes);
    assert!(d.stop_refusal_cap <= 1000, "{}", d.stop_refusal_cap);
    assert!(!d.shell.trim().is_empty());
    let mut names = HashSet::new();
    let mut moments = HashSet::new();
    for (moment, hooks) in &settings.hooks {
        assert!(
            settings.knows_moment(moment),
            "hooks on an unknown moment {moment:?}"
        );
        assert!(moments.insert(moment), "moment {moment:?} listed twice");
        assert!(std::ptr::eq(settings.hooks_for(moment), hooks.as_slice()));
        for hook in hooks {
            assert_eq!(&hook.moment, moment);
            assert!(
                names.insert(hook.name.clone()),
                "hook name {:?} twice",
                hook.name
            );
            assert!(!hook.name.trim().is_empty());
            assert!(!hook.timeout.is_zero() && hook.timeout <= MAX_TIMEOUT);
            match &hook.program {
                Program::Shell { shell, command } => {
                    assert!(!shell.trim().is_empty() && !command.trim().is_empty());
                }
                Program::Argv(argv) => assert!(argv.first().is_some_and(|p| !p.is_empty())),
                Program::Worker { argv, count } => {
                    assert!(argv.first().is_some_and(|p| !p.is_empty()));
                    assert!((1..=16).contains(count), "{count} workers");
                }
                Program::Guard(_) => assert!(
                    hookd::guard::MOMENTS.contains(&moment.as_str()),
                    "the built-in guard on {moment}"
                ),
                Program::Live { .. } => panic!("a settings file hangs no live hook"),
            }
            if let Some(agents) = &hook.agents {
                assert!(!agents.is_empty() && agents.iter().all(|a| !a.is_empty()));
            }
            // Matching never panics, whatever the matcher.
            for value in ["", "Bash", "mcp__x__y", "é"] {
                hook.matcher.matches_value(value);
            }
        }
    }
    for name in &settings.extra_moments {
        assert!(settings.knows_moment(name));
    }
    settings.summary();
}

// ---- answer --------------------------------------------------------------------------------------------

/// Moments a run is read at: Stop and SubagentStop have their own rule for empty refusals.
const MOMENTS: &[&str] = &[
    "PreToolUse",
    "Stop",
    "SubagentStop",
    "UserPromptSubmit",
    "PostToolUse",
    "FileChanged",
    "",
];

/// The most runs one input makes, a fire's worth.
const MAX_RUNS: usize = 8;

/// The bytes of a record's header (see fuzz/README.md).
const HEADER: usize = 11;

/// A few hook runs, each read, then folded.
pub fn answer(data: &[u8]) {
    let mut rest = data;
    let mut outcomes = Vec::new();
    while !rest.is_empty() && outcomes.len() < MAX_RUNS {
        let mut header = [0u8; HEADER];
        let taken = rest.len().min(HEADER);
        header[..taken].copy_from_slice(&rest[..taken]);
        rest = &rest[taken..];
        let value = i32::from_le_bytes([header[3], header[4], header[5], header[6]]);
        let stdout_len = usize::from(u16::from_le_bytes([header[7], header[8]])).min(rest.len());
        let (stdout, tail) = rest.split_at(stdout_len);
        let stderr_len = usize::from(u16::from_le_bytes([header[9], header[10]])).min(tail.len());
        let (stderr, tail) = tail.split_at(stderr_len);
        rest = tail;

        let text = || String::from_utf8_lossy(stderr).into_owned();
        let exit = match header[0] % 8 {
            0 | 7 => Exit::Code(value),
            1 => Exit::Signal(value),
            2 => Exit::TimedOut(Duration::from_millis(u64::from(value.unsigned_abs()))),
            3 => Exit::CouldNotStart(text()),
            4 => Exit::Cancelled(if value % 2 == 0 {
                "the client left"
            } else {
                ""
            }),
            5 => Exit::Answered,
            _ => Exit::Broken(text()),
        };
        let run = Run {
            hook: if header[1] & 4 == 0 { "guard" } else { "" },
            moment: MOMENTS[usize::from(header[2]) % MOMENTS.len()],
            exit: &exit,
            stdout,
            stderr,
            via_shell: header[1] & 1 != 0,
            on_failure: if header[1] & 2 != 0 {
                OnFailure::Refuse
            } else {
                OnFailure::Ignore
            },
        };
        let outcome = reading::read(run);
        check_outcome(&run, &outcome);
        assert_eq!(reading::read(run), outcome, "reading is deterministic");
        outcomes.push(outcome);
    }
    check_fold(&outcomes);
}

/// What any one hook's outcome promises.
fn check_outcome(run: &Run<'_>, outcome: &Heard) {
    let context = || format!("{run:?} read as {outcome:?}");
    match outcome.kind {
        // A refusal and an ask are always told with something to say.
        Outcome::Refused | Outcome::Asked => {
            let reason = outcome.reason.as_deref();
            let reason = reason.unwrap_or_else(|| panic!("no reason: {}", context()));
            assert!(!reason.trim().is_empty(), "a blank reason: {}", context());
        }
        // An allow's reason is optional, but never blank.
        Outcome::Allowed => assert!(
            outcome
                .reason
                .as_deref()
                .is_none_or(|r| !r.trim().is_empty()),
            "a blank allow reason: {}",
            context()
        ),
        _ => assert!(
            outcome.reason.is_none(),
            "a reason without a refusal, an ask or an allow: {}",
            context()
        ),
    }
    if outcome.kind == Outcome::Failed {
        let error = outcome.error.as_deref();
        let error = error.unwrap_or_else(|| panic!("a failure without an error: {}", context()));
        // A broken worker's text comes from the worker module as it stands.
        if !matches!(run.exit, Exit::Broken(_)) {
            assert!(!error.trim().is_empty(), "an empty error: {}", context());
        }
        assert_eq!(run.on_failure, OnFailure::Ignore, "{}", context());
    }
    if outcome.error.is_some() {
        assert!(
            outcome.kind == Outcome::Failed
                || (outcome.kind == Outcome::Refused && run.on_failure == OnFailure::Refuse),
            "an error on an outcome that did not fail: {}",
            context()
        );
    }
    match outcome.kind {
        Outcome::Nothing => assert!(outcome.adds.is_empty(), "{}", context()),
        Outcome::Adds => assert!(!outcome.adds.is_empty(), "{}", context()),
        _ => {}
    }
    assert!(
        outcome.adds.iter().all(|a| !a.trim().is_empty()),
        "a blank add: {}",
        context()
    );
    if outcome.warning.is_some() {
        assert!(hookd::tables::moment::is_stop(run.moment), "{}", context());
    }
    if !matches!(run.exit, Exit::Code(_) | Exit::Answered) {
        // Killed, timed out, never started, cancelled, broken: whatever it printed, it failed.
        assert!(outcome.adds.is_empty(), "{}", context());
        assert!(outcome.error.is_some(), "{}", context());
    }
}

/// What the verdict promises of the outcomes, in the settings file's order: a refusal over an ask, an
/// ask over an allow, the first of each giving the reason.
fn check_fold(outcomes: &[Heard]) {
    let names: Vec<String> = (0..outcomes.len()).map(|i| format!("hook-{i}")).collect();
    let verdict = verdict::fold(
        names.iter().map(String::as_str).zip(outcomes),
        verdict::Originals::default(),
        false,
    );
    let first = |kind: Outcome| outcomes.iter().find(|o| o.kind == kind);
    let first_refusal = first(Outcome::Refused);
    let first_ask = first(Outcome::Asked);
    assert_eq!(
        verdict.refused,
        first_refusal.is_some() || first_ask.is_some()
    );
    let deciding = first_refusal
        .or(first_ask)
        .or_else(|| first(Outcome::Allowed));
    assert_eq!(
        verdict.reason,
        deciding.and_then(|o| o.reason.clone()),
        "the reason of the first refusal, else ask, else allow"
    );
    let adds: Vec<String> = outcomes.iter().flat_map(|o| o.adds.clone()).collect();
    assert_eq!(verdict.adds, adds, "every add, in order");
    assert_eq!(verdict.input, None, "nothing to rewrite, nothing rewritten");
}

// ---- guard ---------------------------------------------------------------------------------------------

/// The bytes (as text, what is not UTF-8 replaced) as a Bash call's command line made in a project, and
/// as a Read's path, each judged twice by the built-in guard.
pub fn guard(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let guard = hookd::guard::Guard::default();
    let home = Path::new("/home/user");
    for input in [
        serde_json::json!({"tool_name": "Bash", "tool_input": {"command": text}, "cwd": "/home/user/project"}),
        serde_json::json!({"tool_name": "Read", "tool_input": {"file_path": text}, "cwd": "/home/user/project"}),
    ] {
        let event = input.as_object().expect("an object");
        let first = guard.judge(event, home);
        assert_eq!(first, guard.judge(event, home), "judged twice, two answers");
        if let Some(verdict) = first {
            assert!(
                hookd::guard::rule(verdict.rule).is_some(),
                "a verdict of no rule: {verdict:?}"
            );
            assert!(
                verdict.reason.contains(&format!("rule {}", verdict.rule))
                    && verdict.reason.trim().len() > 40,
                "a reason that says too little: {verdict:?}"
            );
        }
    }
}
