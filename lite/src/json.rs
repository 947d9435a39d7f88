//! The JSON this program writes (strings) and the one response it reads, in the exact shape the daemon
//! writes it: `{"id":1,"ok":true,"exit":N,"stdout":"...","stderr":"..."}`, then `"refusal":"..."` when
//! there is one (the fields of `RelayResponse`, in order). Anything else is not read, and the call goes to the relay.

use crate::sys::Buf;

/// `text` (valid UTF-8) as a JSON string.
pub fn string(out: &mut Buf, text: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push_byte(b'"');
    let mut plain = 0;
    for (at, &byte) in text.iter().enumerate() {
        let escaped: Option<&[u8]> = match byte {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            b'\n' => Some(b"\\n"),
            b'\r' => Some(b"\\r"),
            b'\t' => Some(b"\\t"),
            0..=0x1f => None,
            _ => continue,
        };
        out.push(&text[plain..at]);
        match escaped {
            Some(escaped) => out.push(escaped),
            None => out.push(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 15)],
            ]),
        }
        plain = at + 1;
    }
    out.push(&text[plain..]);
    out.push_byte(b'"');
}

/// Whether `line` is the daemon's error for a request it refused before firing anything: a request it
/// could not read or take (`bad_request`, `bad_json`, `too_large`) or one that came while it stops
/// (`shutting_down`). In a JSON text, `"kind":"..."` with bare quotes can only be a member, never text
/// inside a string (whose quotes are escaped).
pub fn refused_before_firing(line: &[u8]) -> bool {
    let has = |needle: &[u8]| line.windows(needle.len()).any(|window| window == needle);
    line.starts_with(b"{")
        && has(b"\"ok\":false")
        && [
            &b"\"kind\":\"bad_request\""[..],
            b"\"kind\":\"bad_json\"",
            b"\"kind\":\"too_large\"",
            b"\"kind\":\"shutting_down\"",
        ]
        .iter()
        .any(|kind| has(kind))
}

/// The daemon's answer to a `relay` request.
pub struct Answer<'a> {
    pub exit: i32,
    pub stdout: &'a [u8],
    pub stderr: &'a [u8],
    /// What `stdout` holds back, as the reason to refuse with on stderr (exit 2) should `stdout` not
    /// reach the agent (`RelayResponse::refusal`).
    pub refusal: Option<&'a [u8]>,
}

/// Reads `line` (the response, its line end included), decoding the two strings in place.
pub fn relay_response(line: &mut [u8]) -> Option<Answer<'_>> {
    let rest = line.strip_prefix(b"{\"id\":1,\"ok\":true,\"exit\":")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 3 {
        return None;
    }
    let mut exit: i32 = 0;
    for &d in &rest[..digits] {
        exit = exit * 10 + i32::from(d - b'0');
    }
    if exit > 255 {
        return None;
    }
    let start = line.len() - rest.len() + digits;
    let (stdout, after) = field(line, start, b",\"stdout\":\"")?;
    let (stderr, after) = field(line, after, b",\"stderr\":\"")?;
    let (refusal, after) = match field(line, after, b",\"refusal\":\"") {
        Some((refusal, after)) => (Some(refusal), after),
        None => (None, after),
    };
    if &line[after..] != b"}\n" {
        return None;
    }
    // Each string was decoded within its own place: the three never overlap.
    let line: &[u8] = line;
    let at = |(start, len): (usize, usize)| &line[start..start + len];
    Some(Answer {
        exit,
        stdout: at(stdout),
        stderr: at(stderr),
        refusal: refusal.map(at),
    })
}

/// The string after `key` (which ends with its opening quote) at `at`, decoded in place: its start and
/// decoded length, and where the text after its closing quote starts.
fn field(line: &mut [u8], at: usize, key: &[u8]) -> Option<((usize, usize), usize)> {
    if !line.get(at..)?.starts_with(key) {
        return None;
    }
    let start = at + key.len();
    let mut read = start;
    let mut write = start;
    loop {
        let byte = *line.get(read)?;
        read += 1;
        match byte {
            b'"' => return Some(((start, write - start), read)),
            b'\\' => {
                let escape = *line.get(read)?;
                read += 1;
                let plain = match escape {
                    b'"' => b'"',
                    b'\\' => b'\\',
                    b'/' => b'/',
                    b'b' => 8,
                    b'f' => 12,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'u' => {
                        let mut code = hex4(line.get(read..read + 4)?)?;
                        read += 4;
                        if (0xd800..0xdc00).contains(&code) {
                            // A surrogate pair: its second half must follow.
                            if line.get(read..read + 2)? != b"\\u" {
                                return None;
                            }
                            let low = hex4(line.get(read + 2..read + 6)?)?;
                            if !(0xdc00..0xe000).contains(&low) {
                                return None;
                            }
                            read += 6;
                            code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
                        } else if (0xdc00..0xe000).contains(&code) {
                            return None;
                        }
                        let mut utf8 = [0u8; 4];
                        let encoded = char::from_u32(code)?.encode_utf8(&mut utf8).len();
                        // Never longer than the escape it replaces (six bytes, or twelve for a pair).
                        line[write..write + encoded].copy_from_slice(&utf8[..encoded]);
                        write += encoded;
                        continue;
                    }
                    _ => return None,
                };
                line[write] = plain;
                write += 1;
            }
            0..=0x1f => return None,
            _ => {
                line[write] = byte;
                write += 1;
            }
        }
    }
}

fn hex4(digits: &[u8]) -> Option<u32> {
    let mut value = 0;
    for &d in digits {
        let v = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            b'A'..=b'F' => d - b'A' + 10,
            _ => return None,
        };
        value = value * 16 + u32::from(v);
    }
    Some(value)
}
