//! JSON text that `serde_json` cannot take whole, read anyway, so that no event goes undecided.
//!
//! An agent's hook input is shaped by the model: a `Write` of a large file, a tool input nested past
//! `serde_json`'s 128 levels, a lone surrogate escape (`"\ud800"`, which Node's `JSON.stringify` writes
//! for half an emoji). Each once made hookd fail open: the event was dropped, so its refusal was lost.
//!
//! - [`mend_surrogates`] rewrites lone surrogate escapes as `\ufffd`, in place, so the text parses.
//! - [`Scanner`] reads the head of a JSON object of any size and depth: the top-level members it is asked
//!   for (the moment, the matcher fields, the session), from a byte stream, in bounded memory and without
//!   recursion. An event too large or too deep to decode is still fired from its head, as *undecidable*:
//!   every hook that would have seen it is read as failed, so `on_failure = "refuse"` still refuses.

use crate::limits::MAX_HEAD_VALUE;
use serde_json::{Map, Value};

/// The longest key looked at; a longer one is no key anybody asks for.
const MAX_KEY: usize = 256;

/// The members of an agent's event that an undecidable fire needs: the moment, what `moment.rs`'s
/// matchers test, what the stop-loop count and a hook's environment use.
pub const EVENT_FIELDS: &[&str] = &[
    "hook_event_name",
    "session_id",
    "cwd",
    "tool_name",
    "agent_tool_name",
    "source",
    "notification_type",
    "agent_type",
    "trigger",
    "reason",
];

/// Rewrites each `\uD800`-`\uDFFF` escape that is not half of a high-low pair as `\uFFFD` (the same
/// length, so in place); returns whether anything changed. Only escapes are looked at (`\\ud800` is a
/// backslash and then text), and only their text changes, so valid JSON stays valid and means the same
/// but for the lone halves, which no Rust string can hold.
pub fn mend_surrogates(text: &mut [u8]) -> bool {
    let mut changed = false;
    let mut i = 0;
    while let Some(offset) = text[i..].iter().position(|&b| b == b'\\') {
        i += offset;
        match unit_at(text, i) {
            Some(0xD800..=0xDBFF) => {
                if matches!(unit_at(text, i + 6), Some(0xDC00..=0xDFFF)) {
                    i += 12; // a valid pair
                } else {
                    text[i + 2..i + 6].copy_from_slice(b"fffd");
                    changed = true;
                    i += 6;
                }
            }
            Some(0xDC00..=0xDFFF) => {
                text[i + 2..i + 6].copy_from_slice(b"fffd");
                changed = true;
                i += 6;
            }
            Some(_) => i += 6,
            // Any other escape is two bytes: `\\` among them, whose second backslash escapes nothing.
            None => i += 2,
        }
        if i >= text.len() {
            break;
        }
    }
    changed
}

/// Parses JSON text as serde_json does, but reads lone surrogate escapes as U+FFFD. The common text
/// parses at once; only text that fails is copied, mended and tried again.
pub fn parse(text: &[u8]) -> Result<Value, serde_json::Error> {
    match serde_json::from_slice(text) {
        Ok(value) => Ok(value),
        Err(e) => {
            let mut mended = text.to_vec();
            if mend_surrogates(&mut mended) {
                serde_json::from_slice(&mended)
            } else {
                Err(e)
            }
        }
    }
}

/// Whether serde_json stopped at its recursion limit (nesting past [`MAX_DEPTH`](crate::limits::MAX_DEPTH)).
pub fn too_deep(e: &serde_json::Error) -> bool {
    e.to_string().starts_with("recursion limit exceeded")
}

/// The code unit of a `\uXXXX` escape starting at `at`, if one does.
fn unit_at(text: &[u8], at: usize) -> Option<u16> {
    let escape = text.get(at..at + 6)?;
    if escape[0] != b'\\' || escape[1] != b'u' {
        return None;
    }
    let hex = std::str::from_utf8(&escape[2..]).ok()?;
    u16::from_str_radix(hex, 16).ok()
}

/// What a [`Scanner`] found.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Head {
    /// Whether the text starts as a JSON object (after white space).
    pub object: bool,
    /// The asked-for top-level members whose values are strings, numbers, booleans or null.
    pub fields: Map<String, Value>,
    /// The same, within the object that is the value of the nested member (a request's `event`).
    pub inner: Map<String, Value>,
}

/// Reads the head of a JSON object from its bytes, given piece by piece. Never recursive (nesting is a
/// counter), never holds more than one key and one value of [`MAX_HEAD_VALUE`] at a time besides what it keeps,
/// never fails: on text that is not JSON it keeps what it found before.
#[derive(Debug)]
pub struct Scanner {
    wanted: &'static [&'static str],
    /// A top-level member whose object value is read too, and what to keep of it.
    nested: Option<(&'static str, &'static [&'static str])>,
    lex: Lex,
    depth: u64,
    started: bool,
    done: bool,
    top: Level,
    inner: Level,
    /// Whether depth 2 is the nested member's object.
    in_nested: bool,
    head: Head,
}

/// Where the parser is in one object it reads.
#[derive(Debug, Default)]
struct Level {
    expect: Expect,
    key: Option<String>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Expect {
    #[default]
    Key,
    Colon,
    Value,
    Comma,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Top,
    Inner,
}

/// What a string or a scalar is for.
#[derive(Debug)]
enum Role {
    Key(Which),
    Value(Which),
    Skip,
}

#[derive(Debug)]
enum Lex {
    Between,
    Str {
        role: Role,
        escape: Escape,
        text: Vec<u8>,
        /// A high surrogate waiting for its low half.
        high: Option<u16>,
        cut: bool,
    },
    Scalar {
        role: Role,
        text: Vec<u8>,
    },
}

#[derive(Debug, Clone, Copy)]
enum Escape {
    None,
    Backslash,
    Unicode { digits: u8, unit: u16 },
}

impl Scanner {
    /// A scanner keeping the top-level members named in `wanted`, and with `nested`, the members named
    /// in its list within that top-level member's object.
    pub fn new(
        wanted: &'static [&'static str],
        nested: Option<(&'static str, &'static [&'static str])>,
    ) -> Scanner {
        Scanner {
            wanted,
            nested,
            lex: Lex::Between,
            depth: 0,
            started: false,
            done: false,
            top: Level::default(),
            inner: Level::default(),
            in_nested: false,
            head: Head::default(),
        }
    }

    /// Reads `text` whole, at once.
    pub fn scan(
        wanted: &'static [&'static str],
        nested: Option<(&'static str, &'static [&'static str])>,
        text: &[u8],
    ) -> Head {
        let mut scanner = Scanner::new(wanted, nested);
        scanner.feed(text);
        scanner.finish()
    }

    /// Whether the object has ended (or the text is no object): the rest need not be fed.
    pub fn done(&self) -> bool {
        self.done
    }

    /// Reads the next piece of the text.
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut at = 0;
        while at < bytes.len() && !self.done {
            if let Lex::Str {
                role: Role::Skip,
                escape: Escape::None,
                ..
            } = self.lex
            {
                // Inside a string nobody asked for (a file's content, most of a big event): only a quote
                // or a backslash matters.
                match bytes[at..].iter().position(|&b| b == b'"' || b == b'\\') {
                    Some(skip) => at += skip,
                    None => return,
                }
            }
            self.byte(bytes[at]);
            at += 1;
        }
    }

    /// What was found.
    pub fn finish(mut self) -> Head {
        // A scalar at the very end has no byte after it to end it.
        if matches!(self.lex, Lex::Scalar { .. }) {
            self.end_scalar();
        }
        self.head
    }

    fn level(&mut self, which: Which) -> &mut Level {
        match which {
            Which::Top => &mut self.top,
            Which::Inner => &mut self.inner,
        }
    }

    /// The object being read at this depth, if it is one whose members are kept.
    fn here(&self) -> Option<Which> {
        match self.depth {
            1 => Some(Which::Top),
            2 if self.in_nested => Some(Which::Inner),
            _ => None,
        }
    }

    fn wanted_in(&self, which: Which) -> &'static [&'static str] {
        match which {
            Which::Top => self.wanted,
            Which::Inner => self.nested.map_or(&[], |(_, wanted)| wanted),
        }
    }

    fn byte(&mut self, b: u8) {
        match &mut self.lex {
            Lex::Between => self.between(b),
            Lex::Scalar { text, .. } => {
                if b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.') {
                    if text.len() < MAX_HEAD_VALUE {
                        text.push(b);
                    }
                } else {
                    self.end_scalar();
                    self.between(b);
                }
            }
            Lex::Str {
                escape,
                text,
                high,
                cut,
                ..
            } => {
                if string_byte(escape, text, high, cut, b) {
                    self.end_string();
                }
            }
        }
    }

    /// A byte between tokens.
    fn between(&mut self, b: u8) {
        if b.is_ascii_whitespace() {
            return;
        }
        if !self.started {
            self.started = true;
            if b == b'{' {
                self.head.object = true;
                self.depth = 1;
            } else {
                self.done = true;
            }
            return;
        }
        let here = self.here();
        match b {
            b'{' | b'[' => {
                if let Some(which) = here {
                    let nested = self.nested.map(|(name, _)| name);
                    let level = self.level(which);
                    let opens_nested = which == Which::Top
                        && b == b'{'
                        && level.expect == Expect::Value
                        && level.key.is_some()
                        && level.key.as_deref() == nested;
                    level.expect = Expect::Comma;
                    if opens_nested {
                        self.in_nested = true;
                        self.inner = Level::default();
                    }
                }
                self.depth = self.depth.saturating_add(1);
            }
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                match self.depth {
                    0 => self.done = true,
                    1 => self.in_nested = false,
                    _ => {}
                }
            }
            b':' => {
                if let Some(which) = here {
                    let level = self.level(which);
                    if level.expect == Expect::Colon {
                        level.expect = Expect::Value;
                    }
                }
            }
            b',' => {
                if let Some(which) = here {
                    *self.level(which) = Level::default();
                }
            }
            b'"' => {
                let role = self.role(here, true);
                self.lex = Lex::Str {
                    role,
                    escape: Escape::None,
                    text: Vec::new(),
                    high: None,
                    cut: false,
                };
            }
            _ => {
                let role = self.role(here, false);
                self.lex = Lex::Scalar {
                    role,
                    text: vec![b],
                };
            }
        }
    }

    /// What a string (or scalar) starting here is for.
    fn role(&mut self, here: Option<Which>, string: bool) -> Role {
        let Some(which) = here else {
            return Role::Skip;
        };
        let wanted = self.wanted_in(which);
        let level = self.level(which);
        match level.expect {
            Expect::Key if string => Role::Key(which),
            Expect::Value => {
                let keep = level.key.as_deref().is_some_and(|k| wanted.contains(&k));
                level.expect = Expect::Comma;
                if keep { Role::Value(which) } else { Role::Skip }
            }
            _ => Role::Skip,
        }
    }

    fn end_string(&mut self) {
        let Lex::Str {
            role, text, cut, ..
        } = std::mem::replace(&mut self.lex, Lex::Between)
        else {
            return;
        };
        match role {
            Role::Key(which) => {
                let level = self.level(which);
                level.key = (!cut && text.len() <= MAX_KEY)
                    .then(|| String::from_utf8_lossy(&text).into_owned());
                level.expect = Expect::Colon;
            }
            Role::Value(which) => {
                let value = Value::String(String::from_utf8_lossy(&text).into_owned());
                self.keep(which, value);
            }
            Role::Skip => {}
        }
    }

    fn end_scalar(&mut self) {
        let Lex::Scalar { role, text } = std::mem::replace(&mut self.lex, Lex::Between) else {
            return;
        };
        if let Role::Value(which) = role
            && let Ok(value) = serde_json::from_slice::<Value>(&text)
        {
            self.keep(which, value);
        }
    }

    fn keep(&mut self, which: Which, value: Value) {
        let Some(key) = self.level(which).key.take() else {
            return;
        };
        // As serde_json reads a repeated key: the last one counts.
        match which {
            Which::Top => self.head.fields.insert(key, value),
            Which::Inner => self.head.inner.insert(key, value),
        };
    }
}

/// One byte of a string being read, decoded into `text` (at most [`MAX_HEAD_VALUE`] bytes, `cut` past that);
/// returns whether it was the closing quote.
fn string_byte(
    escape: &mut Escape,
    text: &mut Vec<u8>,
    high: &mut Option<u16>,
    cut: &mut bool,
    b: u8,
) -> bool {
    let mut push = |bytes: &[u8]| {
        if text.len() + bytes.len() <= MAX_HEAD_VALUE {
            text.extend_from_slice(bytes);
        } else {
            *cut = true;
        }
    };
    const LONE: &[u8] = "\u{fffd}".as_bytes();
    match *escape {
        Escape::None => {
            // A high half waits for a `\uDC00` escape: anything else makes it lone.
            if b != b'\\' && high.take().is_some() {
                push(LONE);
            }
            match b {
                b'"' => return true,
                b'\\' => *escape = Escape::Backslash,
                _ => push(&[b]),
            }
        }
        Escape::Backslash => {
            *escape = Escape::None;
            if b == b'u' {
                *escape = Escape::Unicode { digits: 0, unit: 0 };
                return false;
            }
            if high.take().is_some() {
                push(LONE);
            }
            let plain = match b {
                b'n' => b'\n',
                b't' => b'\t',
                b'r' => b'\r',
                b'b' => 0x08,
                b'f' => 0x0c,
                other => other, // `"`, `\`, `/`, and whatever else was there
            };
            push(&[plain]);
        }
        Escape::Unicode { digits, unit } => {
            let Some(digit) = (b as char).to_digit(16) else {
                // Not an escape after all.
                *escape = Escape::None;
                if high.take().is_some() {
                    push(LONE);
                }
                push(LONE);
                return b == b'"';
            };
            let unit = (unit << 4) | digit as u16;
            if digits < 3 {
                *escape = Escape::Unicode {
                    digits: digits + 1,
                    unit,
                };
                return false;
            }
            *escape = Escape::None;
            let mut utf8 = [0u8; 4];
            match unit {
                0xD800..=0xDBFF => {
                    if high.replace(unit).is_some() {
                        push(LONE);
                    }
                }
                0xDC00..=0xDFFF => {
                    let c = high
                        .take()
                        .and_then(|h| {
                            char::from_u32(
                                0x10000
                                    + ((u32::from(h) - 0xD800) << 10)
                                    + (u32::from(unit) - 0xDC00),
                            )
                        })
                        .unwrap_or('\u{fffd}');
                    push(c.encode_utf8(&mut utf8).as_bytes());
                }
                _ => {
                    if high.take().is_some() {
                        push(LONE);
                    }
                    let c = char::from_u32(u32::from(unit)).unwrap_or('\u{fffd}');
                    push(c.encode_utf8(&mut utf8).as_bytes());
                }
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mended(text: &str) -> String {
        let mut bytes = text.as_bytes().to_vec();
        mend_surrogates(&mut bytes);
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        assert_eq!(mended(r#""\ud800""#), r#""\ufffd""#);
        assert_eq!(mended(r#""\uDC00x""#), r#""\ufffdx""#);
        assert_eq!(mended(r#""\ud800\ud800""#), r#""\ufffd\ufffd""#);
        // A high half then a low half, the other way round: both lone.
        assert_eq!(mended(r#""\udc00\ud800""#), r#""\ufffd\ufffd""#);
        assert_eq!(mended(r#""\ud800" "#), r#""\ufffd" "#);
        // At the very end, cut short.
        assert_eq!(mended(r#""\ud800"#), r#""\ufffd"#);
        assert_eq!(mended(r#""\ud8"#), r#""\ud8"#);
    }

    #[test]
    fn pairs_escaped_backslashes_and_other_escapes_are_kept() {
        for text in [
            r#""\ud83d\ude00""#,
            r#""\\ud800""#,
            r#""\\\\ud800""#,
            r#""\u00e9\n\"\\""#,
            r#""plain""#,
            r#""\\""#,
        ] {
            assert_eq!(mended(text), text);
        }
        // An escaped backslash, then a real lone escape.
        assert_eq!(mended(r#""\\\ud800""#), r#""\\\ufffd""#);
    }

    #[test]
    fn mended_text_parses_and_keeps_everything_else() {
        let mut text = br#"{"a":"x\ud800y","b":"\ud83d\ude00","c":"\\ud800"}"#.to_vec();
        assert!(serde_json::from_slice::<Value>(&text).is_err());
        assert!(mend_surrogates(&mut text));
        let value: Value = serde_json::from_slice(&text).unwrap();
        assert_eq!(
            value,
            json!({"a": "x\u{fffd}y", "b": "\u{1f600}", "c": "\\ud800"})
        );
    }

    /// Property-style: every string of escapes and text, mended, parses when quoted, and mending twice
    /// changes nothing more; valid JSON strings come back equal.
    #[test]
    fn mending_any_mix_of_escapes_gives_a_parseable_string() {
        let pieces = [
            r"\ud800", r"\udbff", r"\udc00", r"\udfff", r"\ud83d", r"\ude00", r"\\", r"\u0041",
            r"\n", "a", "é", r"\u", "u", "d800",
        ];
        let n = pieces.len();
        // Every sequence of up to 4 pieces: 14^4 = 38416 strings.
        for len in 0..=4u32 {
            for mut code in 0..n.pow(len) {
                let mut inner = String::new();
                for _ in 0..len {
                    inner.push_str(pieces[code % n]);
                    code /= n;
                }
                let quoted = format!("\"{inner}\"");
                let mut bytes = quoted.clone().into_bytes();
                let changed = mend_surrogates(&mut bytes);
                let parses_raw = serde_json::from_str::<String>(&quoted).is_ok();
                let parsed = serde_json::from_slice::<String>(&bytes);
                // `\u` not followed by four hex digits is no JSON at all: mending does not fix that.
                if !inner.contains(r"\u") || parses_raw || changed {
                    let bare_u = inner.replace(r"\\", "").contains(r"\u")
                        && serde_json::from_slice::<String>(&bytes).is_err();
                    assert!(parsed.is_ok() || bare_u, "{quoted}");
                }
                if parses_raw {
                    assert!(!changed, "valid JSON was changed: {quoted}");
                }
                let mut again = bytes.clone();
                assert!(!mend_surrogates(&mut again), "{quoted}");
            }
        }
    }

    fn scan(text: &str) -> Head {
        Scanner::scan(EVENT_FIELDS, None, text.as_bytes())
    }

    #[test]
    fn reads_top_level_strings_and_skips_the_rest() {
        let head = scan(
            r#" {"tool_input":{"tool_name":"no","command":"x"},"hook_event_name":"PreToolUse",
               "tool_name":"Bash","list":["cwd",{"cwd":"no"}],"cwd":"/w\"q\\","session_id":"s\u00e9",
               "other":"x"}"#,
        );
        assert!(head.object);
        assert_eq!(
            Value::Object(head.fields),
            json!({"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/w\"q\\","session_id":"sé"})
        );
    }

    #[test]
    fn any_depth_in_small_pieces() {
        let depth = 1_000_000;
        let mut text = String::from(r#"{"hook_event_name":"PreToolUse","tool_input":"#);
        text.push_str(&"[".repeat(depth));
        text.push_str(&"]".repeat(depth));
        text.push_str(r#","tool_name":"Write"}"#);
        let mut scanner = Scanner::new(EVENT_FIELDS, None);
        for piece in text.as_bytes().chunks(7) {
            scanner.feed(piece);
        }
        assert!(scanner.done());
        let head = scanner.finish();
        assert_eq!(head.fields["tool_name"], "Write");
        assert_eq!(head.fields["hook_event_name"], "PreToolUse");
    }

    #[test]
    fn values_are_capped_and_surrogates_replaced() {
        let long = "x".repeat(10 * MAX_HEAD_VALUE);
        let head = scan(&format!(
            r#"{{"cwd":"{long}","tool_name":"a\ud800b\ud83d\ude00","session_id":"\udc00"}}"#
        ));
        assert_eq!(head.fields["cwd"].as_str().unwrap().len(), MAX_HEAD_VALUE);
        assert_eq!(head.fields["tool_name"], "a\u{fffd}b\u{1f600}");
        assert_eq!(head.fields["session_id"], "\u{fffd}");
    }

    #[test]
    fn not_an_object_or_not_json_finds_nothing_and_never_panics() {
        assert!(!scan("[1,2]").object);
        assert!(!scan("").object);
        assert!(!scan("nope").object);
        for text in [
            "{",
            "{\"",
            "{\"tool_name\"",
            "{\"tool_name\":",
            "{\"tool_name\":\"ab",
            "{:::,,,}}}]]",
            "{\"tool_name\":\"\\u12",
            "{\"tool_name\":\"\\uzz\"}",
            "{\"a\" \"tool_name\" : \"x\"",
        ] {
            let head = scan(text);
            assert!(head.object, "{text}");
        }
        assert_eq!(
            scan("{\"tool_name\":\"ab").fields.get("tool_name"),
            None,
            "an unfinished value is not kept"
        );
    }

    #[test]
    fn numbers_and_the_nested_object() {
        const REQUEST: &[&str] = &["op", "id", "moment"];
        let text = br#"{"id":42,"op":"fire","event":{"tool_name":"Bash","deep":[[[{"tool_name":"no"}]]],"cwd":"/"},"moment":"Stop","x":{"tool_name":"no"}}"#;
        let head = Scanner::scan(REQUEST, Some(("event", EVENT_FIELDS)), text);
        assert_eq!(
            Value::Object(head.fields),
            json!({"id": 42, "op": "fire", "moment": "Stop"})
        );
        assert_eq!(
            Value::Object(head.inner),
            json!({"tool_name": "Bash", "cwd": "/"})
        );
        let head = Scanner::scan(REQUEST, None, br#"{"id":-1.5e3}"#);
        assert_eq!(
            head.fields["id"],
            serde_json::from_str::<Value>("-1.5e3").unwrap()
        );
        let head = Scanner::scan(REQUEST, None, br#"{"id":"x\"y", "op":"#);
        assert_eq!(head.fields["id"], "x\"y");
    }

    /// Property-style: for valid JSON objects that serde_json can read, the scanner agrees with it on
    /// every asked-for string member, whatever the pieces the text arrives in.
    #[test]
    fn agrees_with_serde_json_on_what_it_can_read() {
        let samples = [
            json!({"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}),
            json!({"tool_input":{"tool_name":["x",{"cwd":"y"}]},"cwd":"/tmp/a b","reason":"é\n\t\u{1}"}),
            json!({"source":"startup","session_id":"\u{1f600}\\\"","nested":[[],{},"",0,null,true]}),
        ];
        for sample in samples {
            let text = serde_json::to_string_pretty(&sample).unwrap();
            for chunk in [1, 2, 3, 5, 64, text.len()] {
                let mut scanner = Scanner::new(EVENT_FIELDS, None);
                for piece in text.as_bytes().chunks(chunk) {
                    scanner.feed(piece);
                }
                let head = scanner.finish();
                let want: Map<String, Value> = sample
                    .as_object()
                    .unwrap()
                    .iter()
                    .filter(|(k, v)| EVENT_FIELDS.contains(&k.as_str()) && v.is_string())
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                assert_eq!(head.fields, want, "{text} in pieces of {chunk}");
            }
        }
    }
}
