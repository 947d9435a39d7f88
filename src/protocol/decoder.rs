//! A request line decoded by hand from a `serde_json::Value` rather than derived, so that every mistake
//! gets its own clear message and the request's `id` is echoed even when the rest of it is wrong; a line
//! too deep or too large to decode whole is read from its head ([`crate::protocol::head`]) as an
//! undecidable fire.

use serde_json::{Map, Value};

use crate::limits::{
    MAX_AGENT_NAME, MAX_DEPTH, MAX_HELLO_MOMENTS, MAX_ID, MAX_LIVE_HOOKS_PER_CONNECTION,
    MAX_LIVE_NAME,
};
use crate::protocol::types::{ErrorKind, ErrorResponse, Event, RelayRequest, Request, WatchFilter};

const OPS: &[&str] = &[
    "fire", "relay", "hello", "status", "reload", "watch", "attach", "answer", "detach",
];

/// The top-level members of a request read from a line that cannot be decoded whole.
const REQUEST_FIELDS: &[&str] = &["op", "id", "moment", "agent", "source", "fail_closed"];

/// Decodes one request line. On error, the `id` is given back when the line had one, to be echoed (read
/// from the line's head when the line is not JSON).
///
/// Lone surrogate escapes (`"\ud800"`, which Node's `JSON.stringify` writes) are read as U+FFFD. A fire
/// nested deeper than serde_json reads ([`MAX_DEPTH`]) is not dropped: it is decoded from its head as
/// undecidable ([`Event::undecidable`]).
pub fn decode(line: &[u8]) -> Result<(Option<Value>, Request), ErrorResponse> {
    if let Some(fire) = plain_fire(line) {
        return Ok(fire);
    }
    decode_whole(line)
}

/// [`decode`] of any request: the line read whole into a JSON value, and its members looked at one by
/// one.
fn decode_whole(line: &[u8]) -> Result<(Option<Value>, Request), ErrorResponse> {
    let value: Value = match crate::protocol::head::parse(line) {
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
            let fail_closed = match object.get("fail_closed") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(closed)) => *closed,
                Some(_) => return Err(bad("fire: \"fail_closed\" must be true or false".into())),
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
                    fail_closed,
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
        "attach" => {
            let bad = |m: String| bad(format!("attach: {m}"));
            let client = match object.get("client") {
                Some(Value::String(client))
                    if !client.trim().is_empty()
                        && client.len() <= MAX_LIVE_NAME
                        && !client.chars().any(char::is_control) =>
                {
                    client.clone()
                }
                _ => {
                    return Err(bad(format!(
                        "\"client\" must be a non-empty string of at most {MAX_LIVE_NAME} bytes, without control characters (the program hanging the hooks, as status and the record name it)"
                    )));
                }
            };
            let hooks = match object.remove("hooks") {
                Some(Value::Array(hooks)) if hooks.len() <= MAX_LIVE_HOOKS_PER_CONNECTION => hooks,
                Some(Value::Array(hooks)) => {
                    return Err(bad(format!(
                        "\"hooks\" lists {} hooks; a connection may hang at most {MAX_LIVE_HOOKS_PER_CONNECTION}",
                        hooks.len()
                    )));
                }
                _ => return Err(bad("\"hooks\" must be a list of hooks".into())),
            };
            Request::Attach { client, hooks }
        }
        "answer" => {
            object.remove("op");
            let call = object.remove("call");
            Request::Answer {
                call,
                answer: object,
            }
        }
        "detach" => {
            let hooks = match object.get("hooks") {
                None | Some(Value::Null) => None,
                Some(Value::Array(items)) if items.len() > MAX_LIVE_HOOKS_PER_CONNECTION => {
                    return Err(bad(format!(
                        "detach: \"hooks\" names {} hooks; a connection hangs at most {MAX_LIVE_HOOKS_PER_CONNECTION}",
                        items.len()
                    )));
                }
                Some(Value::Array(items)) => Some(
                    items
                        .iter()
                        .map(|item| item.as_str().map(str::to_string))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| {
                            bad("detach: \"hooks\" must be a list of hook names".into())
                        })?,
                ),
                Some(_) => {
                    return Err(bad("detach: \"hooks\" must be a list of hook names".into()));
                }
            };
            Request::Detach { hooks }
        }
        other => {
            let hint = crate::tables::moment::did_you_mean(other, OPS.iter().copied()).map_or_else(
                || format!(" (one of: {})", OPS.join(", ")),
                |op| format!(" (did you mean \"{op}\"?)"),
            );
            return Err(bad(format!(
                "unknown op \"{}\"{hint}",
                crate::tables::moment::shown(other)
            )));
        }
    };
    Ok((id, request))
}

/// A plain fire (the request nearly every line is) decoded straight into its parts, without the
/// request's own object: its members' names and values are not allocated, put in a map, looked up and
/// freed, which was a fifth of a no-hook fire's decoding. `None` for anything else, and for anything
/// unusual about a fire (a member this reading does not know, a member twice, a value of the wrong kind,
/// an `undecidable` fire, a line that is not JSON): [`decode`] then reads the line as it always did, so
/// that every request it accepts decodes to what [`decode`]'s whole reading makes of it, and every
/// mistake keeps its own message.
fn plain_fire(line: &[u8]) -> Option<(Option<Value>, Request)> {
    use serde::de::{Deserializer as _, Error as _, MapAccess, Visitor};
    use std::borrow::Cow;

    /// A member's name or string value: borrowed from the line unless it holds an escape.
    struct Text<'a>(Cow<'a, str>);
    impl<'de> serde::Deserialize<'de> for Text<'de> {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Reading;
            impl<'de> Visitor<'de> for Reading {
                type Value = Text<'de>;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("a string")
                }
                fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'de>, E> {
                    Ok(Text(Cow::Borrowed(v)))
                }
                fn visit_str<E>(self, v: &str) -> Result<Text<'de>, E> {
                    Ok(Text(Cow::Owned(v.to_string())))
                }
                fn visit_string<E>(self, v: String) -> Result<Text<'de>, E> {
                    Ok(Text(Cow::Owned(v)))
                }
            }
            d.deserialize_str(Reading)
        }
    }

    struct Plain {
        id: Option<Value>,
        moment: String,
        agent: Option<String>,
        event: Map<String, Value>,
        source: crate::record::Source,
        fail_closed: bool,
    }
    struct Reading;
    impl<'de> Visitor<'de> for Reading {
        type Value = Plain;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a plain fire")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<Plain, A::Error> {
            let unusual = || A::Error::custom("not a plain fire");
            let (mut id, mut op, mut moment, mut agent, mut event) =
                (None, false, None, None, None);
            let (mut source, mut fail_closed) = (None, None);
            while let Some(Text(name)) = members.next_key::<Text>()? {
                match name.as_ref() {
                    "id" if id.is_none() => id = Some(members.next_value::<Value>()?),
                    "op" if !op => {
                        let Text(value) = members.next_value::<Text>()?;
                        if value != "fire" {
                            return Err(unusual());
                        }
                        op = true;
                    }
                    "moment" if moment.is_none() => {
                        let Text(value) = members.next_value::<Text>()?;
                        if value.is_empty() {
                            return Err(unusual());
                        }
                        moment = Some(value.into_owned());
                    }
                    "agent" if agent.is_none() => {
                        agent = Some(members.next_value::<Option<Text>>()?.map(|Text(a)| a));
                    }
                    "event" if event.is_none() => {
                        event = Some(members.next_value::<Map<String, Value>>()?);
                    }
                    "source" if source.is_none() => {
                        let value = members.next_value::<Option<Text>>()?;
                        source = Some(match value.as_ref().map(|Text(s)| s.as_ref()) {
                            None | Some("socket") => crate::record::Source::Socket,
                            Some("relay") => crate::record::Source::Relay,
                            Some(_) => return Err(unusual()),
                        });
                    }
                    "fail_closed" if fail_closed.is_none() => {
                        fail_closed = Some(members.next_value::<Option<bool>>()?.unwrap_or(false));
                    }
                    _ => return Err(unusual()),
                }
            }
            let agent = match agent.flatten() {
                Some(agent) if agent.len() > MAX_AGENT_NAME => return Err(unusual()),
                Some(agent) => Some(agent.into_owned()).filter(|a| !a.is_empty()),
                None => None,
            };
            match (op, moment, event) {
                (true, Some(moment), Some(event)) => Ok(Plain {
                    id,
                    moment,
                    agent,
                    event,
                    source: source.unwrap_or(crate::record::Source::Socket),
                    fail_closed: fail_closed.unwrap_or(false),
                }),
                _ => Err(unusual()),
            }
        }
    }

    let mut reader = serde_json::Deserializer::from_slice(line);
    let plain = reader.deserialize_map(Reading).ok()?;
    reader.end().ok()?;
    if id_too_long(plain.id.as_ref()).is_some() {
        return None;
    }
    let request = Request::Fire {
        moment: plain.moment,
        agent: plain.agent,
        event: Event {
            fields: plain.event,
            undecidable: None,
            large: false,
            busy: false,
            source: plain.source,
            fail_closed: plain.fail_closed,
        },
    };
    Some((plain.id, request))
}

/// A line serde_json could not read. Too deep, and a fire whose head names its moment: an undecidable
/// fire. Otherwise `bad_json`, with the `id` when the head has one.
fn undecodable(
    line: &[u8],
    e: &serde_json::Error,
) -> Result<(Option<Value>, Request), ErrorResponse> {
    if crate::protocol::head::too_deep(e) {
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
    crate::protocol::head::Scanner::scan(REQUEST_FIELDS, None, line)
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
/// [`crate::protocol::head::EVENT_FIELDS`], for a request read a piece at a time and never held whole.
pub fn request_scanner() -> crate::protocol::head::Scanner {
    crate::protocol::head::Scanner::new(
        REQUEST_FIELDS,
        Some(("event", crate::protocol::head::EVENT_FIELDS)),
    )
}

/// [`decode_undecidable`] from a head already scanned ([`request_scanner`]).
pub fn undecidable_from_head(
    head: crate::protocol::head::Head,
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
                    // Read from the head as the whole line reads it: a fail-closed relay's event too
                    // large or too deep to decode whole is still its (and is not refused under
                    // `require_fail_closed`); anything but `true` is fail-open, the safe side.
                    fail_closed: head.fields.get("fail_closed") == Some(&Value::Bool(true)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Asking;

    /// The plain fire's reading takes the fires clients send, and whatever it takes decodes to what
    /// the whole reading makes of the line; anything unusual is left to the whole reading, with its
    /// messages.
    #[test]
    fn a_plain_fire_decodes_as_the_whole_reading_decodes_it() {
        let event = r#"{"session_id":"s","cwd":"/","tool_name":"Read","tool_input":{"command":"ls -la","n":1.50,"big":123456789012345678901234567890}}"#;
        let taken = [
            format!(r#"{{"op":"fire","moment":"PreToolUse","event":{event}}}"#),
            format!(
                r#"{{"id":7,"op":"fire","moment":"PreToolUse","agent":"codex","event":{event}}}"#
            ),
            format!(
                r#"{{"op":"fire","id":"a-string","moment":"PreToolUse","agent":null,"event":{event},"source":"relay","fail_closed":true}}"#
            ),
            format!(
                r#"  {{"event":{event},"moment":"Stop","op":"fire","source":null,"fail_closed":null,"id":null}}  "#
            ),
            format!(
                r#"{{"\u006fp":"fire","moment":"Pre\u0054oolUse","agent":"","event":{event},"source":"socket","fail_closed":false}}"#
            ),
            r#"{"op":"fire","moment":"Notification","event":{}}"#.to_string(),
            r#"{"op":"fire","moment":"PreToolUse","event":{"tool_name":"Bash","tool_name":"Read"}}"#
                .to_string(),
        ];
        for line in &taken {
            let plain = plain_fire(line.as_bytes());
            assert!(plain.is_some(), "a plain fire not taken: {line}");
            assert_eq!(plain.map(Ok), Some(decode_whole(line.as_bytes())), "{line}");
        }
        let long_id = format!(
            r#"{{"id":"{}","op":"fire","moment":"Stop","event":{{}}}}"#,
            "x".repeat(MAX_ID + 1)
        );
        let long_agent = format!(
            r#"{{"op":"fire","moment":"Stop","agent":"{}","event":{{}}}}"#,
            "a".repeat(MAX_AGENT_NAME + 1)
        );
        let deep = format!(
            r#"{{"op":"fire","moment":"PreToolUse","event":{{"tool_name":"Bash","x":{}{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let left = [
            r#"{"op":"fire","op":"fire","moment":"Stop","event":{}}"#.to_string(),
            r#"{"op":"status","moment":"Stop","event":{}}"#.to_string(),
            r#"{"op":"hello","agent":"codex"}"#.to_string(),
            r#"{"op":"fire","moment":"","event":{}}"#.to_string(),
            r#"{"op":"fire","moment":7,"event":{}}"#.to_string(),
            r#"{"op":"fire","event":{}}"#.to_string(),
            r#"{"op":"fire","moment":"Stop"}"#.to_string(),
            r#"{"op":"fire","moment":"Stop","event":[1]}"#.to_string(),
            r#"{"op":"fire","moment":"Stop","event":{},"agent":5}"#.to_string(),
            r#"{"op":"fire","moment":"Stop","event":{},"source":"elsewhere"}"#.to_string(),
            r#"{"op":"fire","moment":"Stop","event":{},"fail_closed":"yes"}"#.to_string(),
            r#"{"op":"fire","moment":"Stop","event":{},"undecidable":"too large"}"#.to_string(),
            r#"{"op":"fire","moment":"Stop","event":{},"unknown":{"a":[1,2]}}"#.to_string(),
            r#"{"op":"fire","moment":"Stop","event":{"text":"\ud800"}}"#.to_string(),
            r#"{"op":"fire","moment":"Stop","event":{}} trailing"#.to_string(),
            r#"{"op":"fire","moment":"Stop","event":{}"#.to_string(),
            r#"["op","fire"]"#.to_string(),
            long_id,
            long_agent,
            deep,
        ];
        for line in &left {
            assert!(
                plain_fire(line.as_bytes()).is_none(),
                "taken, not left: {line}"
            );
            assert_eq!(
                decode(line.as_bytes()),
                decode_whole(line.as_bytes()),
                "{line}"
            );
        }
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
                    fail_closed: false,
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
                    fail_closed: false,
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
                    fail_closed: false,
                },
            }
        );
        let (_, request) =
            decode(br#"{"op":"fire","moment":"Stop","event":{},"undecidable":"too big"}"#).unwrap();
        let Request::Fire { event, .. } = request else {
            panic!("not a fire")
        };
        assert_eq!(event.undecidable.as_deref(), Some("too big"));
        // A fail-closed relay's event read from its head is still the fail-closed relay's; anything
        // but `true` is fail-open.
        for (flag, closed) in [
            ("true", true),
            ("false", false),
            ("\"true\"", false),
            ("1", false),
        ] {
            let line = format!(
                r#"{{"op":"fire","moment":"PreToolUse","source":"relay","fail_closed":{flag},"event":{{"x":{}{}}}}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            );
            let Ok((_, Request::Fire { event, .. })) = decode(line.as_bytes()) else {
                panic!("not a fire: {flag}")
            };
            assert!(event.undecidable.is_some());
            assert_eq!(event.source, crate::record::Source::Relay);
            assert_eq!(event.fail_closed, closed, "{flag}");
        }
    }

    #[test]
    fn an_id_over_a_kibibyte_is_refused_and_never_echoed() {
        // Found in the second attack on the fixes: 24 connections sending `status` with a 60 MiB
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
}
