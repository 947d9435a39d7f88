//! A record written as its journal line by hand: the keys are constants, every value goes straight into
//! the writer's batch, nothing is allocated per record. Serde's derive walked every field through its
//! generic machinery and escaped strings a byte at a time; that was most of the journal thread's work
//! under load, on a machine where every instruction it spends is taken from the fires.
//!
//! The line is byte for byte what `serde_json::to_writer` makes of the [`Record`] (its field order, its
//! `skip_serializing_if`s, its escapes): the tests below compare the two over many records, so that
//! the format (docs/record.md) cannot drift from the type that reads it back. What is rare and
//! arbitrary (a whole tool input kept by `full_inputs`, a float) is still written by `serde_json`.

use super::line::{Hook, Kind, Record, Source, Verdict, Weakening};

impl Record {
    /// The record as one line, with its `\n`, its `time` written first.
    pub fn to_line(&mut self) -> Vec<u8> {
        let mut line = Vec::new();
        self.write_line(&mut line, &mut crate::time::Stamps::default());
        line
    }

    /// The record as one line, with its `\n`, appended to `out` (the writer's batch, so that no line
    /// is a buffer of its own), its `time` written first by `stamps` (once a second the whole date).
    pub fn write_line(&mut self, out: &mut Vec<u8>, stamps: &mut crate::time::Stamps) {
        if let Some(at) = self.at.take() {
            stamps.write_millis(at, &mut self.time);
        }
        write_record(out, self);
        out.push(b'\n');
    }

    /// [`Record::write_line`], its origin (`kind` to `cwd`) copied from `repeated` where it is one of the
    /// last lines' written with it, else written and kept there.
    pub fn write_line_repeating(
        &mut self,
        out: &mut Vec<u8>,
        stamps: &mut crate::time::Stamps,
        repeated: &mut Repeated,
    ) {
        match self.at.take() {
            Some(at) => {
                stamps.write_millis(at, &mut self.time);
                write_head_of_stamped(out, self);
            }
            None => write_head(out, self),
        }
        let origin = Origin::of(self);
        if let Some(bytes) = repeated.bytes_of(&origin) {
            out.extend_from_slice(bytes);
        } else {
            let start = out.len();
            write_origin(out, &origin);
            repeated.keep(origin, &out[start..]);
        }
        write_tail(out, self);
        out.push(b'\n');
    }
}

/// What a line says of where its record came from, `kind` to `cwd`: the settings, the source, the agent,
/// the session and its folder, the same line after line of one session. Everything [`write_origin`]
/// writes is here, and compared whole by [`Repeated`]: a field cannot be written without being compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Origin<'a> {
    kind: Kind,
    generation: Option<u64>,
    digest: Option<&'a str>,
    source: Option<Source>,
    agent: Option<&'a str>,
    session: Option<&'a str>,
    cwd: Option<&'a str>,
}

impl<'a> Origin<'a> {
    fn of(record: &'a Record) -> Origin<'a> {
        Origin {
            kind: record.kind,
            generation: record.generation,
            digest: record.digest.as_deref(),
            source: record.source,
            agent: record.agent.as_deref(),
            session: record.session.as_deref(),
            cwd: record.cwd.as_deref(),
        }
    }
}

/// The origins of the last fires' lines written on a thread ([`Origin`]), each kept with its bytes: a
/// fire's line of a kept origin copies them, where writing them again (four texts scanned for escapes,
/// their keys) was a fifth of a no-hook fire's line's cost. Two are kept, so that two sessions firing in
/// turns (two agents at work side by side) both find theirs; a third replaces the one used least lately.
#[derive(Debug, Default)]
pub struct Repeated {
    kept: [KeptOrigin; 2],
    /// Which of `kept` was used last.
    last: usize,
}

impl Repeated {
    /// The bytes of the kept origin that is `origin`, if one is: it becomes the one used last.
    fn bytes_of(&mut self, origin: &Origin) -> Option<&[u8]> {
        let at = [self.last, 1 - self.last]
            .into_iter()
            .find(|&at| self.kept[at].origin().as_ref() == Some(origin))?;
        self.last = at;
        Some(&self.kept[at].bytes)
    }

    /// `bytes`, written from `origin`, kept in place of the origin used least lately.
    fn keep(&mut self, origin: Origin, bytes: &[u8]) {
        self.last = 1 - self.last;
        self.kept[self.last].keep(origin, bytes);
    }

    /// Whether `origin` is kept.
    #[cfg(test)]
    fn holds(&self, origin: &Origin) -> bool {
        self.kept
            .iter()
            .any(|kept| kept.origin().as_ref() == Some(origin))
    }
}

/// One origin kept, with its bytes. Its strings keep their room from line to line.
#[derive(Debug, Default)]
struct KeptOrigin {
    /// `None` until a first line is written.
    kind: Option<Kind>,
    generation: Option<u64>,
    digest: KeptText,
    source: Option<Source>,
    agent: KeptText,
    session: KeptText,
    cwd: KeptText,
    /// The origin as written from the fields above.
    bytes: Vec<u8>,
}

impl KeptOrigin {
    /// The origin kept, once a line was written.
    fn origin(&self) -> Option<Origin<'_>> {
        Some(Origin {
            kind: self.kind?,
            generation: self.generation,
            digest: self.digest.get(),
            source: self.source,
            agent: self.agent.get(),
            session: self.session.get(),
            cwd: self.cwd.get(),
        })
    }

    /// `bytes`, written from `origin`, kept to repeat.
    fn keep(&mut self, origin: Origin, bytes: &[u8]) {
        let Origin {
            kind,
            generation,
            digest,
            source,
            agent,
            session,
            cwd,
        } = origin;
        self.kind = Some(kind);
        self.generation = generation;
        self.digest.set(digest);
        self.source = source;
        self.agent.set(agent);
        self.session.set(session);
        self.cwd.set(cwd);
        self.bytes.clear();
        self.bytes.extend_from_slice(bytes);
    }
}

/// A text of a kept origin, or none: its string keeps its room while there is none, so that an origin
/// with a text and one without, in turns, allocate nothing.
#[derive(Debug, Default)]
struct KeptText {
    present: bool,
    text: String,
}

impl KeptText {
    fn get(&self) -> Option<&str> {
        self.present.then_some(self.text.as_str())
    }

    fn set(&mut self, text: Option<&str>) {
        self.text.clear();
        self.present = text.is_some();
        self.text.push_str(text.unwrap_or_default());
    }
}

/// The record's JSON object, as serde's derive writes it.
fn write_record(out: &mut Vec<u8>, record: &Record) {
    write_head(out, record);
    write_origin(out, &Origin::of(record));
    write_tail(out, record);
}

/// The object's start: the version and the time.
fn write_head(out: &mut Vec<u8>, record: &Record) {
    write_version(out, record);
    string(out, &record.time);
}

/// The object's start of a record whose `time` was just written by [`crate::time::Stamps`]: of digits
/// and `-:T.Z` only, it is copied with no scan for bytes to escape.
fn write_head_of_stamped(out: &mut Vec<u8>, record: &Record) {
    write_version(out, record);
    out.push(b'"');
    out.extend_from_slice(record.time.as_bytes());
    out.push(b'"');
}

/// The version, and the key of the time that follows it.
fn write_version(out: &mut Vec<u8>, record: &Record) {
    out.extend_from_slice(b"{\"v\":");
    unsigned(out, u64::from(record.v));
    out.extend_from_slice(b",\"time\":");
}

/// The record's [`Origin`].
fn write_origin(out: &mut Vec<u8>, origin: &Origin) {
    out.extend_from_slice(b",\"kind\":\"");
    out.extend_from_slice(origin.kind.word().as_bytes());
    out.push(b'"');
    if let Some(generation) = origin.generation {
        out.extend_from_slice(b",\"generation\":");
        unsigned(out, generation);
    }
    if let Some(digest) = origin.digest {
        key_string(out, b",\"digest\":", digest);
    }
    if let Some(source) = origin.source {
        out.extend_from_slice(b",\"source\":\"");
        out.extend_from_slice(source.word().as_bytes());
        out.push(b'"');
    }
    for (key, text) in [
        (&b",\"agent\":"[..], origin.agent),
        (b",\"session\":", origin.session),
        (b",\"cwd\":", origin.cwd),
    ] {
        if let Some(text) = text {
            key_string(out, key, text);
        }
    }
}

/// The rest: the moment and the tool, what was asked and what was decided.
fn write_tail(out: &mut Vec<u8>, record: &Record) {
    text(out, b",\"moment\":", &record.moment);
    text(out, b",\"tool\":", &record.tool);
    text(out, b",\"agent_tool\":", &record.agent_tool);
    text(out, b",\"summary\":", &record.summary);
    if let Some(input) = &record.input {
        out.extend_from_slice(b",\"input\":");
        by_serde(out, input);
    }
    if let Some(verdict) = &record.verdict {
        out.extend_from_slice(b",\"verdict\":");
        write_verdict(out, verdict);
    }
    if !record.hooks.is_empty() {
        out.extend_from_slice(b",\"hooks\":[");
        for (i, hook) in record.hooks.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_hook(out, hook);
        }
        out.push(b']');
    }
    if let Some(ms) = record.ms {
        out.extend_from_slice(b",\"ms\":");
        milliseconds(out, ms);
    }
    text(out, b",\"cut\":", &record.cut);
    text(out, b",\"error\":", &record.error);
    text(out, b",\"hook\":", &record.hook);
    if let Some(count) = record.count {
        out.extend_from_slice(b",\"count\":");
        unsigned(out, count);
    }
    text(out, b",\"relay\":", &record.relay);
    text(out, b",\"file\":", &record.file);
    if !record.weakened.is_empty() {
        out.extend_from_slice(b",\"weakened\":[");
        for (i, weakening) in record.weakened.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_weakening(out, weakening);
        }
        out.push(b']');
    }
    text(out, b",\"outcome\":", &record.outcome);
    text(out, b",\"settled_by\":", &record.settled_by);
    text(out, b",\"call\":", &record.call);
    text(out, b",\"asked\":", &record.asked);
    out.push(b'}');
}

fn write_verdict(out: &mut Vec<u8>, verdict: &Verdict) {
    out.extend_from_slice(b"{\"decision\":\"");
    out.extend_from_slice(verdict.decision.word().as_bytes());
    out.extend_from_slice(if verdict.refused {
        b"\",\"refused\":true"
    } else {
        b"\",\"refused\":false"
    });
    text(out, b",\"reason\":", &verdict.reason);
    out.extend_from_slice(b",\"adds\":");
    unsigned(out, verdict.adds as u64);
    if !verdict.rewrote.is_empty() {
        out.extend_from_slice(b",\"rewrote\":[");
        for (i, what) in verdict.rewrote.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.push(b'"');
            out.extend_from_slice(what.word().as_bytes());
            out.push(b'"');
        }
        out.push(b']');
    }
    if verdict.advisory {
        out.extend_from_slice(b",\"advisory\":true");
    }
    out.push(b'}');
}

fn write_hook(out: &mut Vec<u8>, hook: &Hook) {
    out.extend_from_slice(b"{\"name\":");
    string(out, &hook.name);
    out.extend_from_slice(b",\"outcome\":\"");
    out.extend_from_slice(hook.outcome.word().as_bytes());
    out.push(b'"');
    if let Some(exit) = hook.exit {
        out.extend_from_slice(b",\"exit\":");
        if exit < 0 {
            out.push(b'-');
        }
        unsigned(out, u64::from(exit.unsigned_abs()));
    }
    out.extend_from_slice(b",\"ms\":");
    milliseconds(out, hook.ms);
    text(out, b",\"error\":", &hook.error);
    text(out, b",\"stderr\":", &hook.stderr);
    text(out, b",\"layer\":", &hook.layer);
    out.push(b'}');
}

fn write_weakening(out: &mut Vec<u8>, weakening: &Weakening) {
    // Only `change` is always there: a comma goes before a key only once one is written.
    out.push(b'{');
    let mut first = true;
    for (key, value) in [
        (&b"\"moment\":"[..], &weakening.moment),
        (&b"\"hook\":"[..], &weakening.hook),
    ] {
        if let Some(value) = value {
            if !std::mem::take(&mut first) {
                out.push(b',');
            }
            key_string(out, key, value);
        }
    }
    if !first {
        out.push(b',');
    }
    key_string(out, b"\"change\":", &weakening.change);
    out.push(b'}');
}

/// `key` and the text, when there is one (a field serde skips when it is `None`).
fn text(out: &mut Vec<u8>, key: &[u8], value: &Option<String>) {
    if let Some(value) = value {
        key_string(out, key, value);
    }
}

fn key_string(out: &mut Vec<u8>, key: &[u8], value: &str) {
    out.extend_from_slice(key);
    string(out, value);
}

/// What is rare or arbitrary (a whole tool input, a float), written by serde_json itself. Writing into
/// a `Vec` cannot fail, nor can a `Value` or a float (a float that is not finite is `null`); were it to,
/// the line stays whole JSON with a `null` there.
fn by_serde(out: &mut Vec<u8>, value: &impl serde::Serialize) {
    let start = out.len();
    if serde_json::to_writer(&mut *out, value).is_err() {
        out.truncate(start);
        out.extend_from_slice(b"null");
    }
}

/// A time in milliseconds as serde writes an `f64`. Times are whole tenths of a millisecond
/// ([`crate::time::tenths_of_ms`]), whose shortest form, serde's, is `I.D`: written so here, without
/// the float formatter (a fifth of a no-hook fire's line's cost); any other value by serde.
fn milliseconds(out: &mut Vec<u8>, ms: f64) {
    /// Below this many tenths serde writes no exponent, and `I.D` is every such value's shortest form.
    const PLAIN_BELOW: f64 = 1e12;
    let tenths = (ms * 10.0).round();
    if (0.0..PLAIN_BELOW).contains(&tenths) && tenths / 10.0 == ms && ms.is_sign_positive() {
        let tenths = tenths as u64;
        unsigned(out, tenths / 10);
        out.push(b'.');
        out.push(b'0' + (tenths % 10) as u8);
    } else {
        by_serde(out, &ms);
    }
}

/// `value` in decimal.
fn unsigned(out: &mut Vec<u8>, mut value: u64) {
    if value < 10 {
        // Most are: the version, a count of adds, an early generation.
        out.push(b'0' + value as u8);
        return;
    }
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// `text` as a JSON string, escaped as serde_json escapes it: `"` and `\` with a backslash, the control
/// characters below U+0020 as `\b \t \n \f \r` or `\u00XX` (lowercase hex), everything else (DEL,
/// U+2028, any non-ASCII) as it is.
fn string(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut run = 0;
    let mut at = 0;
    while let Some(found) = next_escaped(bytes, at) {
        out.extend_from_slice(&bytes[run..found]);
        escape(out, bytes[found]);
        at = found + 1;
        run = at;
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

/// The first byte at or after `from` that a JSON string must escape. Eight bytes are looked at at once
/// while none of them is one (text is nearly all plain): a word's bytes below 0x20, or equal to `"` or
/// `\`, are found with the word's arithmetic (a byte of 0x80 and above is never taken for one), and only
/// a word that holds one is looked at byte by byte.
fn next_escaped(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |word: u64| word.wrapping_sub(ONES) & !word & HIGHS != 0;
    let plain = |chunk: &[u8]| {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let control = word.wrapping_sub(ONES * 0x20) & !word & HIGHS != 0;
        !(control || has_zero(word ^ (ONES * u64::from(b'"'))) || has_zero(word ^ (ONES * 0x5c)))
    };
    let mut at = from;
    while let Some(chunk) = bytes.get(at..at + 8) {
        if !plain(chunk) {
            break;
        }
        at += 8;
    }
    // A tail shorter than a word, in a text of a word or more: its last eight bytes looked at at once
    // (those before the tail were looked at already, and are plain).
    let len = bytes.len();
    if at < len && at + 8 > len && len >= 8 && plain(&bytes[len - 8..]) {
        return None;
    }
    bytes[at..]
        .iter()
        .position(|&b| b < 0x20 || b == b'"' || b == b'\\')
        .map(|i| at + i)
}

/// One byte that must be escaped, escaped.
fn escape(out: &mut Vec<u8>, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match byte {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        0x09 => b't',
        0x0a => b'n',
        0x0c => b'f',
        0x0d => b'r',
        _ => {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ]);
            return;
        }
    };
    out.extend_from_slice(&[b'\\', short]);
}

#[cfg(test)]
mod tests {
    use super::super::line::{Kind, Source};
    use super::*;
    use crate::decision::{Outcome, Rewrote, Ruling};
    use serde_json::{Value, json};
    use std::time::{Duration, SystemTime};

    /// Every kind of record.
    const KINDS: &[Kind] = &[
        Kind::Fire,
        Kind::Reload,
        Kind::ReloadRefused,
        Kind::WorkerRestart,
        Kind::StopCap,
        Kind::Dropped,
        Kind::Relay,
        Kind::Weakened,
        Kind::Background,
        Kind::Ask,
        Kind::Other,
    ];

    /// A small seeded generator (xorshift): the same records on every run, so a failure repeats.
    struct Seeded(u64);

    impl Seeded {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        fn chance(&mut self, in_four: u64) -> bool {
            self.below(4) < in_four
        }

        /// A text of every kind of character a JSON string escapes or keeps: each control character,
        /// quotes, backslashes, DEL, slashes, two-, three- and four-byte characters, U+2028, long plain
        /// runs (the eight-bytes-at-once path and its edges), sometimes very long.
        fn text(&mut self) -> String {
            const ODD: &[&str] = &[
                "\"",
                "\\",
                "/",
                "\u{7f}",
                "é",
                "中",
                "😀",
                "\u{2028}",
                "\u{2029}",
                "\u{feff}",
                "\u{fffd}",
                "\u{10ffff}",
                "\\u0000",
                "\\\"",
                "'",
                "<>&",
                " ",
            ];
            let len = match self.below(10) {
                0 => 0,
                1 => 2000 + self.below(20_000),
                _ => self.below(40),
            };
            let mut text = String::new();
            while text.len() < len as usize {
                match self.below(6) {
                    0 => text.push(char::from(self.below(0x20) as u8)),
                    1 => text.push_str(ODD[self.below(ODD.len() as u64) as usize]),
                    2 => {
                        let run = self.below(20) as usize;
                        text.push_str(&"abcdefghijklmnopqrstuvwxyz0123456789"[..run]);
                    }
                    _ => text.push(char::from(b' ' + self.below(95) as u8)),
                }
            }
            text
        }

        fn maybe_text(&mut self) -> Option<String> {
            self.chance(2).then(|| self.text())
        }

        fn float(&mut self) -> f64 {
            match self.below(8) {
                0 => 0.0,
                1 => f64::NAN,
                2 => f64::INFINITY,
                3 => -1.5e300,
                4 => (self.below(1_000_000) as f64) / 10.0,
                5 => f64::from_bits(self.next()),
                _ => self.below(100) as f64,
            }
        }

        fn value(&mut self, depth: u32) -> Value {
            match self.below(if depth > 2 { 4 } else { 6 }) {
                0 => Value::Null,
                1 => json!(self.chance(2)),
                2 => json!(self.next() as i64),
                3 => Value::String(self.text()),
                4 => Value::Array((0..self.below(4)).map(|_| self.value(depth + 1)).collect()),
                _ => Value::Object(
                    (0..self.below(4))
                        .map(|_| (self.text(), self.value(depth + 1)))
                        .collect(),
                ),
            }
        }

        fn record(&mut self) -> Record {
            const SOURCES: &[Source] = &[Source::Socket, Source::Relay, Source::Http];
            const RULINGS: &[Ruling] = &[
                Ruling::Refused,
                Ruling::Asked,
                Ruling::Allowed,
                Ruling::Rewrote,
                Ruling::None,
                Ruling::Unknown,
            ];
            const REWROTE: &[Rewrote] = &[Rewrote::Input, Rewrote::Output, Rewrote::Unknown];
            let pick = |rng: &mut Seeded, n: usize| rng.below(n as u64) as usize;
            let kind = KINDS[pick(self, KINDS.len())];
            let mut record = Record::new(kind);
            record.at = None;
            record.time = if self.chance(3) {
                crate::time::rfc3339_millis(
                    SystemTime::UNIX_EPOCH + Duration::from_millis(self.below(1 << 45)),
                )
            } else {
                self.text()
            };
            record.v = if self.chance(3) {
                1
            } else {
                self.next() as u32
            };
            record.generation = self.chance(2).then(|| self.next() >> self.below(64));
            record.digest = self.maybe_text().map(Into::into);
            record.source = self.chance(2).then(|| SOURCES[pick(self, SOURCES.len())]);
            record.agent = self.maybe_text();
            record.session = self.maybe_text();
            record.cwd = self.maybe_text();
            record.moment = self.maybe_text();
            record.tool = self.maybe_text();
            record.agent_tool = self.maybe_text();
            record.summary = self.maybe_text();
            record.input = self.chance(1).then(|| self.value(0));
            record.verdict = self.chance(2).then(|| Verdict {
                decision: RULINGS[pick(self, RULINGS.len())],
                refused: self.chance(2),
                reason: self.maybe_text(),
                adds: self.below(1 << 20) as usize,
                rewrote: (0..self.below(3))
                    .map(|_| REWROTE[pick(self, REWROTE.len())])
                    .collect(),
                advisory: self.chance(1),
            });
            record.hooks = (0..self.below(4))
                .map(|_| Hook {
                    name: self.text(),
                    outcome: Outcome::KNOWN
                        .iter()
                        .copied()
                        .chain([Outcome::Unknown])
                        .nth(self.below(9) as usize)
                        .unwrap_or(Outcome::Unknown),
                    exit: self.chance(2).then(|| self.next() as i32),
                    ms: self.float(),
                    error: self.maybe_text(),
                    stderr: self.maybe_text(),
                    layer: self.maybe_text(),
                })
                .collect();
            record.ms = self.chance(2).then(|| self.float());
            record.cut = self.maybe_text();
            record.error = self.maybe_text();
            record.hook = self.maybe_text();
            record.count = self.chance(2).then(|| self.next());
            record.relay = self.maybe_text();
            record.file = self.maybe_text();
            record.weakened = (0..self.below(4))
                .map(|_| Weakening {
                    moment: self.maybe_text(),
                    hook: self.maybe_text(),
                    change: self.text(),
                })
                .collect();
            record.outcome = self.maybe_text();
            record.settled_by = self.maybe_text();
            record.call = self.maybe_text();
            record.asked = self.maybe_text();
            record
        }
    }

    /// What serde_json makes of the record: the line the journal always had.
    #[test]
    fn times_in_tenths_of_a_millisecond_are_written_as_serde_writes_them() {
        let same = |ms: f64| {
            let mut ours = Vec::new();
            milliseconds(&mut ours, ms);
            assert_eq!(
                String::from_utf8_lossy(&ours),
                serde_json::to_string(&ms).unwrap(),
                "{ms:?}"
            );
        };
        for tenths in (0..300_000u64).chain((0..2_000).map(|i| i * 499_999_999 + 7)) {
            same(tenths as f64 / 10.0);
            same(crate::time::tenths_of_ms(std::time::Duration::from_nanos(
                tenths * 100_000 + 49_999,
            )));
        }
        for odd in [
            -0.0,
            -0.1,
            0.05,
            1e-7,
            0.30000000000000004,
            1e11,
            99_999_999_999.9,
            1e12,
            1e15,
            1e16,
            1e17,
            1.5e300,
            f64::NAN,
            f64::INFINITY,
            f64::MIN_POSITIVE,
        ] {
            same(odd);
        }
    }

    fn by_serde_json(record: &Record) -> Vec<u8> {
        let mut line = serde_json::to_vec(record).unwrap();
        line.push(b'\n');
        line
    }

    fn same_as_serde_json(record: &mut Record) {
        record.stamp();
        let expected = by_serde_json(record);
        let mut line = b"before".to_vec();
        record.write_line(&mut line, &mut crate::time::Stamps::default());
        assert_eq!(
            String::from_utf8_lossy(&line[6..]),
            String::from_utf8_lossy(&expected)
        );
        assert_eq!(&line[..6], b"before", "appended, nothing before it touched");
    }

    #[test]
    fn every_byte_is_escaped_as_serde_json_escapes_it() {
        let every_ascii: String = (0u8..0x80).map(char::from).collect();
        let mut texts = vec![String::new(), every_ascii.clone(), every_ascii.repeat(9)];
        // Each character that needs escaping at every place of an eight-byte word and its edges.
        for special in ['\0', '\x1f', '\n', '"', '\\', '\u{7f}', 'é', '😀'] {
            for before in 0..17 {
                for after in [0, 1, 7, 8, 9] {
                    texts.push(format!(
                        "{}{special}{}",
                        "a".repeat(before),
                        "b".repeat(after)
                    ));
                }
            }
        }
        // Bytes just below and above the bounds the word arithmetic tests, in runs.
        for byte in [0x1fu8, 0x20, 0x21, 0x22, 0x23, 0x5b, 0x5c, 0x5d, 0x7f] {
            texts.push(char::from(byte).to_string().repeat(17));
        }
        texts.push("é中😀\u{80}\u{7ff}\u{800}\u{ffff}".repeat(5));
        for text in texts {
            let mut line = Vec::new();
            string(&mut line, &text);
            assert_eq!(line, serde_json::to_vec(&text).unwrap(), "{text:?}");
        }
    }

    #[test]
    fn a_line_is_byte_for_byte_what_serde_json_writes_for_many_records() {
        let mut rng = Seeded(0x9e37_79b9_7f4a_7c15);
        for _ in 0..3000 {
            let mut record = rng.record();
            same_as_serde_json(&mut record);
        }
    }

    /// A fire's line written on its thread repeats the last line's origin ([`Repeated`]) when the
    /// fields it is written from are the same: every field a record serializes, changed alone between
    /// two lines (taken from another record, or left out), must give the line serde writes.
    #[test]
    fn a_line_repeating_the_last_ones_origin_is_what_serde_json_writes_field_by_field() {
        let mut rng = Seeded(0x2545_f491_4f6c_dd1d);
        let mut repeated = Repeated::default();
        let mut stamps = crate::time::Stamps::default();
        let mut repeats = 0;
        for _ in 0..200 {
            let base = serde_json::to_value(rng.record()).unwrap();
            let other = serde_json::to_value(rng.record()).unwrap();
            let (Value::Object(base_fields), Value::Object(other_fields)) = (&base, &other) else {
                panic!("a record is an object");
            };
            let mut keys: Vec<&String> = base_fields.keys().chain(other_fields.keys()).collect();
            keys.sort();
            keys.dedup();
            let mut lines = vec![base.clone(), base.clone()];
            for key in keys {
                let mut changed = base_fields.clone();
                match other_fields.get(key) {
                    Some(value) if Some(value) != base_fields.get(key) => {
                        changed.insert(key.clone(), value.clone());
                    }
                    _ => {
                        changed.remove(key);
                    }
                }
                lines.push(Value::Object(changed));
                lines.push(base.clone());
            }
            for line in lines {
                // Without `v`, `time` or `kind` it is no record.
                let Ok(mut record) = serde_json::from_value::<Record>(line) else {
                    continue;
                };
                if rng.chance(2) {
                    record.at =
                        Some(SystemTime::UNIX_EPOCH + Duration::from_millis(rng.below(1 << 45)));
                }
                repeats += usize::from(repeated.holds(&Origin::of(&record)));
                let mut written = b"before".to_vec();
                record.write_line_repeating(&mut written, &mut stamps, &mut repeated);
                assert_eq!(
                    String::from_utf8_lossy(&written[6..]),
                    String::from_utf8_lossy(&by_serde_json(&record))
                );
                assert_eq!(
                    &written[..6],
                    b"before",
                    "appended, nothing before it touched"
                );
            }
        }
        assert!(repeats > 1000, "the origin was repeated {repeats} times");
    }

    #[test]
    fn every_kind_source_and_word_is_named_as_serde_names_it() {
        let mut record = Record::new(Kind::Fire);
        record.at = Some(SystemTime::UNIX_EPOCH);
        same_as_serde_json(&mut record.clone());
        for &kind in KINDS {
            assert_eq!(
                serde_json::to_value(kind).unwrap(),
                json!(kind.word()),
                "{kind:?}"
            );
        }
        for source in [Source::Socket, Source::Relay, Source::Http] {
            assert_eq!(serde_json::to_value(source).unwrap(), json!(source.word()));
        }
        for outcome in Outcome::KNOWN.iter().chain([&Outcome::Unknown]) {
            assert_eq!(
                serde_json::to_value(outcome).unwrap(),
                json!(outcome.word())
            );
        }
    }

    #[test]
    fn records_cut_to_their_bounds_are_written_as_serde_json_writes_them() {
        let mut rng = Seeded(7);
        let huge = |rng: &mut Seeded| {
            let mut text = String::new();
            while text.len() < 200_000 {
                text.push_str(&rng.text());
                text.push_str("é\"\\\n\u{1}😀");
            }
            text
        };
        for _ in 0..20 {
            let mut record = rng.record();
            record.summary = Some(huge(&mut rng));
            record.error = Some(huge(&mut rng));
            record.session = Some(huge(&mut rng));
            if let Some(verdict) = record.verdict.as_mut() {
                verdict.reason = Some(huge(&mut rng));
            }
            for hook in &mut record.hooks {
                hook.stderr = Some(huge(&mut rng));
            }
            record.bound();
            same_as_serde_json(&mut record);
        }
    }

    #[test]
    fn a_line_reads_back_as_the_record_it_was_and_the_readers_take_it() {
        let mut rng = Seeded(42);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(crate::record::read::FILE);
        let mut journal = Vec::new();
        let mut written = Vec::new();
        let mut stamps = crate::time::Stamps::default();
        for i in 0..500 {
            let mut record = rng.record();
            // What reads back the same: a kind and floats a reader keeps as they were.
            if record.kind == Kind::Other {
                record.kind = Kind::Fire;
            }
            record.input = None;
            record.ms = record.ms.filter(|ms| ms.is_finite());
            for hook in &mut record.hooks {
                if !hook.ms.is_finite() {
                    hook.ms = 1.5;
                }
            }
            record.at = Some(SystemTime::UNIX_EPOCH + Duration::from_millis(i * 7919));
            record.write_line(&mut journal, &mut stamps);
            written.push(record);
        }
        std::fs::write(&path, &journal).unwrap();
        let mut read = Vec::new();
        let found = crate::record::read::each(&path, |line, record| {
            assert!(!line.contains('\n'));
            read.push(record);
            std::ops::ControlFlow::Continue(())
        });
        assert_eq!(found.unwrap().unreadable, 0);
        assert_eq!(read.len(), written.len());
        for (read, written) in read.iter().zip(&written) {
            let back: Record = serde_json::from_slice(&by_serde_json(written)).unwrap();
            assert_eq!(*read, back);
            assert_eq!(read.time, written.time);
        }
    }
}

/// Guards of the hand-written line against the type it writes: a field added to [`Record`] (or to
/// the types in it) must be written too, and any text must be escaped as serde_json escapes it.
#[cfg(test)]
mod guards {
    use super::super::line::{Kind, Source};
    use super::*;
    use crate::decision::{Outcome, Rewrote, Ruling};
    use serde_json::json;
    use std::time::SystemTime;

    /// Every field of every type in a line, set to something that is not its default, by struct
    /// literals without `..`: a field added to `Record`, `Verdict`, `Hook` or `Weakening` does not
    /// compile here until it is given a value, and then the line must carry it (the line read back
    /// must be the record, and serde's line must be the same bytes).
    fn every_field_set() -> Record {
        Record {
            v: 1,
            time: "2026-12-06T06:50:15.123Z".into(),
            at: None,
            kind: Kind::Fire,
            generation: Some(12),
            digest: Some("0123456789abcdef".into()),
            source: Some(Source::Http),
            agent: Some("codex".into()),
            session: Some("sess\u{2028}\"x\"".into()),
            cwd: Some("/tmp/é\\d".into()),
            moment: Some("PreToolUse".into()),
            tool: Some("Bash".into()),
            agent_tool: Some("shell".into()),
            summary: Some("rm -rf ~\t\u{1}".into()),
            input: Some(json!({"command": "rm -rf ~", "n": [1, 2.5, -3, null, true]})),
            verdict: Some(Verdict {
                decision: Ruling::Refused,
                refused: true,
                reason: Some("no \"rm\" here\n".into()),
                adds: 3,
                rewrote: vec![Rewrote::Input, Rewrote::Output],
                advisory: true,
            }),
            hooks: vec![Hook {
                name: "guard".into(),
                outcome: Outcome::Refused,
                exit: Some(-2),
                ms: 12.5,
                error: Some("it failed".into()),
                stderr: Some("no rm here\n".into()),
                layer: Some("managed".into()),
            }],
            ms: Some(13.25),
            cut: Some("the client left".into()),
            error: Some("unknown moment".into()),
            hook: Some("worker".into()),
            count: Some(u64::MAX),
            relay: Some("fail_closed".into()),
            file: Some("/home/u/.config/hookd/hookd.toml".into()),
            weakened: vec![Weakening {
                moment: Some("PreToolUse".into()),
                hook: Some("guard".into()),
                change: "removed".into(),
            }],
            outcome: Some("denied".into()),
            settled_by: Some("PostToolUse".into()),
            call: Some("toolu_01".into()),
            asked: Some("2026-12-06T06:50:14.000Z".into()),
        }
    }

    #[test]
    fn a_record_with_every_field_set_is_written_whole() {
        let record = every_field_set();
        let mut line = Vec::new();
        record
            .clone()
            .write_line(&mut line, &mut crate::time::Stamps::default());
        let mut serde_line = serde_json::to_vec(&record).unwrap();
        serde_line.push(b'\n');
        assert_eq!(
            String::from_utf8_lossy(&line),
            String::from_utf8_lossy(&serde_line)
        );
        let back: Record = serde_json::from_slice(&line).unwrap();
        assert_eq!(back, record, "a field the line left out");
        // Every key serde writes of it is there, none missing (a field left out of json.rs).
        let keys = |line: &[u8]| {
            let value: serde_json::Value = serde_json::from_slice(line).unwrap();
            let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
            keys.sort();
            keys
        };
        assert_eq!(keys(&line), keys(&serde_line));
    }

    /// A small xorshift, seeded: the same texts each run.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn random_texts_of_any_characters_are_escaped_as_serde_json_escapes_them() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..200_000 {
            let len = next(&mut state) % 40;
            let text: String = (0..len)
                .map(|_| {
                    let r = next(&mut state);
                    let code = match r % 5 {
                        0 => (r >> 8) % 0x20,
                        1 => 0x20 + (r >> 8) % 0x60,
                        2 => [0x22, 0x5c, 0x7f, 0x80, 0x2028, 0x2029][((r >> 8) % 6) as usize],
                        3 => (r >> 8) % 0x800,
                        _ => (r >> 8) % 0x11_0000,
                    } as u32;
                    char::from_u32(code).unwrap_or('\u{fffd}')
                })
                .collect();
            let mut line = Vec::new();
            string(&mut line, &text);
            assert_eq!(line, serde_json::to_vec(&text).unwrap(), "{text:?}");
        }
    }

    #[test]
    fn times_across_a_second_and_back_are_written_as_rfc3339_millis() {
        let mut stamps = crate::time::Stamps::default();
        let base = SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(1_796_000_000_999);
        let times = [
            base,
            base + std::time::Duration::from_millis(1),
            base,
            base - std::time::Duration::from_secs(86_400),
            base + std::time::Duration::from_millis(1),
            SystemTime::UNIX_EPOCH - std::time::Duration::from_secs(5),
            base,
        ];
        for at in times {
            let mut record = Record::new(Kind::Fire);
            record.at = Some(at);
            let mut line = Vec::new();
            record.write_line(&mut line, &mut stamps);
            assert_eq!(record.time, crate::time::rfc3339_millis(at));
            let mut stamped = Record::new(Kind::Fire);
            stamped.at = Some(at);
            stamped.stamp();
            let mut expected = serde_json::to_vec(&stamped).unwrap();
            expected.push(b'\n');
            assert_eq!(line, expected);
        }
    }
}
