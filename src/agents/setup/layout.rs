//! The merged settings written in the file's own layout: what the merge left as it was is written back
//! byte for byte (its indentation, its one-line objects, its numbers as written, its blank lines), and
//! only the containers the merge changed are written anew, each in the style it had (on one line, or an
//! entry a line at the file's indentation); what the merge adds (hookd's hooks, an event) takes the style
//! the file gives its hooks at that depth. A one-line file stays one line.
//!
//! The original text is scanned once for where each value lies ([`Spanned`]); serde_json has read it
//! already, so the scan only finds bounds. Anything the scan does not expect gives up on the layout, and
//! the file is written an entry a line, as agents write theirs.

use super::json::{Json, indent_of, parse_json, write_json};

/// Where a value lies in the original text, and where its members do.
#[derive(Debug)]
struct Spanned {
    start: usize,
    end: usize,
    shape: Shape,
}

#[derive(Debug)]
enum Shape {
    Scalar,
    /// Its items, and the blank text before its closing bracket.
    Array(Vec<Member>, (usize, usize)),
    /// Its members by key, and the blank text before its closing brace.
    Object(Vec<(String, Member)>, (usize, usize)),
}

/// A member of a container: the blank text before it (after the bracket or the comma: a line end and
/// its indentation, a blank line, a space), and its value.
#[derive(Debug)]
struct Member {
    lead: (usize, usize),
    value: Spanned,
}

impl Shape {
    fn is_empty(&self) -> bool {
        match self {
            Shape::Scalar => true,
            Shape::Array(items, _) => items.is_empty(),
            Shape::Object(members, _) => members.is_empty(),
        }
    }
}

/// The bounds of every value of a JSON text serde_json has accepted.
struct Scanner<'a> {
    text: &'a str,
    at: usize,
}

impl Scanner<'_> {
    fn byte(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn blank(&mut self) {
        while matches!(self.byte(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        self.blank();
        (self.byte()? == byte).then(|| self.at += 1)
    }

    /// A string's text, quotes included, at the cursor.
    fn string(&mut self) -> Option<String> {
        let start = self.at;
        (self.byte()? == b'"').then_some(())?;
        self.at += 1;
        loop {
            match self.byte()? {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    break;
                }
                _ => self.at += 1,
            }
        }
        serde_json::from_str(self.text.get(start..self.at)?).ok()
    }

    fn value(&mut self) -> Option<Spanned> {
        self.blank();
        let start = self.at;
        let shape = match self.byte()? {
            open @ (b'{' | b'[') => {
                let close = if open == b'{' { b'}' } else { b']' };
                self.at += 1;
                let mut members = Vec::new();
                let mut lead = self.at;
                self.blank();
                let tail = loop {
                    if self.byte()? == close && members.is_empty() {
                        break (lead, self.at);
                    }
                    self.blank();
                    let key = if open == b'{' {
                        let at = self.at;
                        let key = self.string()?;
                        self.expect(b':')?;
                        Some((key, at))
                    } else {
                        None
                    };
                    let value = self.value()?;
                    let lead_end = key.as_ref().map_or(value.start, |(_, at)| *at);
                    members.push((
                        key.map(|(k, _)| k),
                        Member {
                            lead: (lead, lead_end),
                            value,
                        },
                    ));
                    let after = self.at;
                    self.blank();
                    match self.byte()? {
                        b',' => {
                            self.at += 1;
                            lead = self.at;
                        }
                        byte if byte == close => break (after, self.at),
                        _ => return None,
                    }
                };
                self.at += 1;
                if open == b'{' {
                    let members = members
                        .into_iter()
                        .map(|(k, m)| k.map(|k| (k, m)))
                        .collect::<Option<Vec<_>>>()?;
                    Shape::Object(members, tail)
                } else {
                    Shape::Array(members.into_iter().map(|(_, m)| m).collect(), tail)
                }
            }
            b'"' => {
                self.string()?;
                Shape::Scalar
            }
            _ => {
                while !matches!(
                    self.byte(),
                    None | Some(b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.at += 1;
                }
                (self.at > start).then_some(())?;
                Shape::Scalar
            }
        };
        Some(Spanned {
            start,
            end: self.at,
            shape,
        })
    }
}

/// How the file is written: what a container written anew follows.
struct Style<'a> {
    text: &'a str,
    /// One level of indentation (the file's first indented line's).
    indent: String,
    /// The line end (`\r\n` in a file that uses it).
    newline: &'static str,
    /// The space after a comma and a colon on one line (none in a file written without).
    space: &'static str,
    /// `{ "a": 1 }` rather than `{"a": 1}`.
    padded: bool,
    /// For each depth under `hooks` (the root 0, `hooks` 1, an event's list 2, ...): whether the file
    /// writes its containers there on one line, as its first non-empty one there shows.
    one_line_at: Vec<Option<bool>>,
}

impl Style<'_> {
    fn one_line(&self, span: &Spanned) -> bool {
        !self.text[span.start..span.end].contains('\n')
    }

    fn slice(&self, (start, end): (usize, usize)) -> &str {
        &self.text[start..end]
    }

    fn learn(&mut self, span: &Spanned, depth: usize) {
        let members: Vec<&Spanned> = match &span.shape {
            Shape::Scalar => return,
            Shape::Array(items, _) => items.iter().map(|m| &m.value).collect(),
            Shape::Object(members, _) => members.iter().map(|(_, m)| &m.value).collect(),
        };
        if members.is_empty() {
            return;
        }
        if self.one_line_at.len() <= depth {
            self.one_line_at.resize(depth + 1, None);
        }
        if self.one_line_at[depth].is_none() {
            self.one_line_at[depth] = Some(self.one_line(span));
        }
        for member in members {
            self.learn(member, depth + 1);
        }
    }
}

/// `root` (the merged settings) written in the layout of `original`, the text it was merged from;
/// `None` when the original gives no layout to keep (empty, or not scanned).
pub(super) fn keep(root: &Json, original: &str) -> Option<String> {
    if original.trim().is_empty() {
        return None;
    }
    let before = parse_json(original, "").ok()?;
    let mut scanner = Scanner {
        text: original,
        at: 0,
    };
    let span = scanner.value()?;
    scanner.blank();
    if scanner.at != original.len() {
        return None;
    }
    let compact = !original.contains(": ") && !original.contains(", ");
    let mut style = Style {
        text: original,
        indent: indent_of(original),
        newline: if original.contains("\r\n") {
            "\r\n"
        } else {
            "\n"
        },
        space: if compact { "" } else { " " },
        padded: original.contains("{ \""),
        one_line_at: vec![Some(!original[span.start..span.end].contains('\n'))],
    };
    if let Shape::Object(members, _) = &span.shape
        && let Some((_, hooks)) = members.iter().find(|(k, _)| k == "hooks")
    {
        style.learn(&hooks.value, 1);
    }
    let mut out = String::with_capacity(original.len() + 4096);
    out.push_str(&original[..span.start]);
    write(
        &mut out,
        root,
        Some((&before, &span)),
        (0, 0),
        false,
        &style,
    );
    out.push_str(&original[span.end..]);
    Some(out)
}

/// A member to write: its key (none in a list), its value, and what it was in the original (its value
/// and where it lay), when it was there.
type Entry<'a> = (Option<&'a str>, &'a Json, Option<(&'a Json, &'a Member)>);

/// One value at `depth` (how deep in the settings it is) and `level` (its indentation): as it was, when it is the original's unchanged; else
/// its container written anew in its own style (or the depth's, for a new one; on one line inside a
/// one-line container), each member kept or written the same way.
fn write(
    out: &mut String,
    value: &Json,
    was: Option<(&Json, &Spanned)>,
    (depth, level): (usize, usize),
    inside_one_line: bool,
    style: &Style,
) {
    if let Some((old, span)) = was
        && old == value
    {
        out.push_str(&style.text[span.start..span.end]);
        return;
    }
    // A container keeps its own style; one that was empty, or is new, takes its depth's.
    let own = was
        .filter(|(_, span)| !span.shape.is_empty())
        .map(|(_, span)| style.one_line(span));
    let one_line = inside_one_line
        || own
            .or_else(|| style.one_line_at.get(depth).copied().flatten())
            .unwrap_or(false);
    let tail = was.and_then(|(_, span)| match &span.shape {
        Shape::Array(items, tail) if !items.is_empty() => Some(*tail),
        Shape::Object(members, tail) if !members.is_empty() => Some(*tail),
        _ => None,
    });
    match value {
        Json::Array(items) if !items.is_empty() => {
            let old_items: Vec<(&Json, &Member)> = match was {
                Some((
                    Json::Array(old),
                    Spanned {
                        shape: Shape::Array(spans, _),
                        ..
                    },
                )) => old.iter().zip(spans).collect(),
                _ => Vec::new(),
            };
            // Items are kept in order: each is matched with the next original item equal to it.
            let mut next = 0;
            let members: Vec<Entry> = items
                .iter()
                .map(|item| {
                    let found = old_items[next..].iter().position(|(old, _)| *old == item);
                    let kept = found.map(|i| {
                        next += i + 1;
                        old_items[next - 1]
                    });
                    (None, item, kept)
                })
                .collect();
            container(
                out,
                ('[', ']'),
                &members,
                tail,
                (depth, level),
                one_line,
                style,
            );
        }
        Json::Object(entries) if !entries.is_empty() => {
            let old_members: Vec<(&str, &Json, &Member)> = match was {
                Some((
                    Json::Object(old),
                    Spanned {
                        shape: Shape::Object(spans, _),
                        ..
                    },
                )) => old
                    .iter()
                    .zip(spans)
                    .map(|((k, v), (_, m))| (k.as_str(), v, m))
                    .collect(),
                _ => Vec::new(),
            };
            let members: Vec<Entry> = entries
                .iter()
                .map(|(key, item)| {
                    let kept = old_members
                        .iter()
                        .find(|(k, _, _)| k == key)
                        .map(|(_, v, m)| (*v, *m));
                    (Some(key.as_str()), item, kept)
                })
                .collect();
            container(
                out,
                ('{', '}'),
                &members,
                tail,
                (depth, level),
                one_line,
                style,
            );
        }
        _ => {
            let mut fresh = String::new();
            write_json(&mut fresh, value, &style.indent, level);
            out.push_str(&fresh);
        }
    }
}

/// A container written anew: each member the original had after the blank text it had before it (its
/// line end and indentation, a blank line), each new one on a line of its own at the file's
/// indentation, or after a space on one line; the closing bracket after the blank text it had.
fn container(
    out: &mut String,
    (open, close): (char, char),
    members: &[Entry],
    tail: Option<(usize, usize)>,
    (depth, level): (usize, usize),
    one_line: bool,
    style: &Style,
) {
    out.push(open);
    // A new member in a container of many lines is led as the original's later members are (`}, {` in
    // a file that cuddles its brackets), else on a line of its own.
    let kept_leads: Vec<&str> = members
        .iter()
        .filter_map(|(_, _, was)| was.map(|(_, m)| style.slice(m.lead)))
        .collect();
    let new_lead = kept_leads
        .get(1)
        .copied()
        .or_else(|| kept_leads.first().copied().filter(|l| l.contains('\n')))
        .or_else(|| (!kept_leads.is_empty()).then_some(" "));
    // In a file that cuddles its brackets (`[{` on one line), the members of such a container are
    // indented as the container is.
    let cuddled = !one_line && kept_leads.first().is_some_and(|l| !l.contains('\n'));
    let inner = if cuddled { level } else { level + 1 };
    for (i, (key, value, was)) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match was {
            Some((_, member)) => out.push_str(style.slice(member.lead)),
            None if one_line => {
                if i > 0 || style.padded {
                    out.push_str(if i > 0 { style.space } else { " " });
                }
            }
            None => match new_lead {
                Some(lead) => out.push_str(lead),
                None => {
                    out.push_str(style.newline);
                    for _ in 0..inner {
                        out.push_str(&style.indent);
                    }
                }
            },
        }
        match (key, was) {
            // The key as written, its colon and the blank text around it.
            (Some(_), Some((_, member))) => {
                out.push_str(style.slice((member.lead.1, member.value.start)))
            }
            (Some(key), None) => {
                out.push_str(&serde_json::to_string(key).expect("a string serializes"));
                out.push(':');
                out.push_str(style.space);
            }
            (None, _) => {}
        }
        write(
            out,
            value,
            was.map(|(old, member)| (old, &member.value)),
            (depth + 1, inner),
            one_line,
            style,
        );
    }
    match tail {
        Some(tail) => out.push_str(style.slice(tail)),
        None if one_line => {
            if style.padded {
                out.push(' ');
            }
        }
        None => {
            out.push_str(style.newline);
            for _ in 0..level {
                out.push_str(&style.indent);
            }
        }
    }
    out.push(close);
}
