//! The tokens of an interpreter's code: string literals read as the language reads them, names with
//! their qualifiers, punctuation; comments skipped. Linear in the code.

use super::lang::{Lang, PLACEHOLDER};

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    /// A string literal: its text, and whether all of it is known (no interpolation).
    Str(String, bool),
    /// A command in backquotes (perl, ruby, php, a shell's): its text, known or not.
    Run(String, bool),
    /// A name, with its dotted or `::` qualifiers (`os.path.join`, `File::Path::rmtree`).
    Name(String),
    Punct(char),
    /// Anything else (a number, an operator's other characters), as written.
    Other(String),
}

/// The tokens of `code` in `lang`: its string literals read (escapes done), names with their
/// qualifiers, punctuation; comments skipped.
pub(super) fn tokens(lang: Lang, code: &str) -> Vec<Tok> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        // Comments.
        let line_comment = match lang {
            Lang::Python | Lang::Ruby | Lang::Awk => c == '#',
            Lang::Perl => c == '#' && !(i > 0 && chars[i - 1] == '$'),
            Lang::Php => c == '#' || (c == '/' && next == Some('/')),
            Lang::Js => c == '/' && next == Some('/'),
            Lang::Lua => c == '-' && next == Some('-'),
        };
        if line_comment {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') && matches!(lang, Lang::Js | Lang::Php) {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i += 2;
            continue;
        }
        if c == '\n' {
            out.push(Tok::Punct('\n'));
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        // Python's string prefixes: r"", b"", f"" (an f-string's `{...}` is not known).
        if lang == Lang::Python && matches!(c.to_ascii_lowercase(), 'r' | 'b' | 'f' | 'u') {
            let mut n = 1;
            while n < 3 && chars.get(i + n).is_some_and(|p| "rRbBfFuU".contains(*p)) {
                n += 1;
            }
            if chars.get(i + n).is_some_and(|q| *q == '\'' || *q == '"')
                && (i == 0 || !is_name_char(chars[i - 1]))
            {
                let prefix: String = chars[i..i + n]
                    .iter()
                    .collect::<String>()
                    .to_ascii_lowercase();
                let (text, known, end) = string(&chars, i + n, lang, prefix.contains('r'));
                if prefix.contains('f') && text.contains('{') {
                    out.push(Tok::Str(placeholders(&text, "{"), false));
                } else {
                    out.push(Tok::Str(text, known));
                }
                i = end;
                continue;
            }
        }
        // Perl's q(), qq(), qx(); ruby's %x(), %q(), %Q(), %().
        if let Some((kind, open_at)) = quote_operator(lang, &chars, i) {
            let (text, end) = delimited(&chars, open_at);
            let known = kind == 'q' || !interpolates(lang, &text);
            out.push(if kind == 'x' {
                Tok::Run(text, known)
            } else {
                Tok::Str(text, known)
            });
            i = end;
            continue;
        }
        match c {
            '\'' | '"' => {
                let (text, known, end) = string(&chars, i, lang, false);
                let known = known && (c == '\'' || !interpolates(lang, &text));
                let text = if lang == Lang::Ruby && c == '"' && text.contains("#{") {
                    placeholders(&text, "#{")
                } else {
                    text
                };
                out.push(Tok::Str(text, known));
                i = end;
            }
            '`' => {
                let (text, known, end) = string(&chars, i, lang, false);
                let known = known && !interpolates(lang, &text);
                if lang == Lang::Js {
                    out.push(Tok::Str(text, known));
                } else {
                    out.push(Tok::Run(text, known));
                }
                i = end;
            }
            '[' if lang == Lang::Lua && matches!(next, Some('[' | '=')) => {
                // `[[long string]]`
                let mut j = i + 1;
                while chars.get(j) == Some(&'=') {
                    j += 1;
                }
                if chars.get(j) != Some(&'[') {
                    out.push(Tok::Punct('['));
                    i += 1;
                    continue;
                }
                let level = j - i - 1;
                let close: Vec<char> = std::iter::once(']')
                    .chain(std::iter::repeat_n('=', level))
                    .chain(std::iter::once(']'))
                    .collect();
                let start = j + 1;
                let end = (start..chars.len())
                    .find(|&k| chars[k..].starts_with(&close))
                    .unwrap_or(chars.len());
                out.push(Tok::Str(chars[start..end].iter().collect(), true));
                i = (end + close.len()).min(chars.len());
            }
            c if is_name_start(c)
                || (c == '$' && matches!(lang, Lang::Js | Lang::Php | Lang::Perl)) =>
            {
                let mut name = String::new();
                let mut j = i;
                loop {
                    while j < chars.len() && (is_name_char(chars[j]) || (j == i && chars[j] == '$'))
                    {
                        name.push(chars[j]);
                        j += 1;
                    }
                    // Qualifiers: `a.b`, `A::B`, `$obj->m`.
                    if chars.get(j) == Some(&'.')
                        && chars.get(j + 1).is_some_and(|n| is_name_start(*n))
                        && lang != Lang::Perl
                        && lang != Lang::Php
                    {
                        name.push('.');
                        j += 1;
                        continue;
                    }
                    if chars.get(j) == Some(&':')
                        && chars.get(j + 1) == Some(&':')
                        && chars.get(j + 2).is_some_and(|n| is_name_start(*n))
                    {
                        name.push_str("::");
                        j += 2;
                        continue;
                    }
                    break;
                }
                if name.is_empty() {
                    out.push(Tok::Punct(c));
                    i += 1;
                } else {
                    out.push(Tok::Name(name));
                    i = j;
                }
            }
            '.' if next.is_some_and(is_name_start)
                && matches!(out.last(), Some(Tok::Punct(')' | ']')))
                && lang != Lang::Perl
                && lang != Lang::Php =>
            {
                // A method on what came before (`require('child_process').execSync(...)`): the
                // name alone.
                i += 1;
            }
            c if c.is_ascii_punctuation() => {
                out.push(Tok::Punct(c));
                i += 1;
            }
            _ => {
                let mut text = String::new();
                while i < chars.len()
                    && !chars[i].is_whitespace()
                    && !chars[i].is_ascii_punctuation()
                {
                    text.push(chars[i]);
                    i += 1;
                }
                if text.is_empty() {
                    i += 1;
                } else {
                    out.push(Tok::Other(text));
                }
            }
        }
    }
    out
}

/// `text` with each interpolation opened by `open` and closed by `}` (`{x}` in a python f-string,
/// `#{x}` in ruby) replaced by the placeholder of an unknown expression (`{{` is a brace).
fn placeholders(text: &str, open: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(open) {
        if open == "{" && rest[at..].starts_with("{{") {
            out.push_str(&rest[..at + 1]);
            rest = &rest[at + 2..];
            continue;
        }
        out.push_str(&rest[..at]);
        out.push('$');
        out.push_str(PLACEHOLDER);
        rest = match rest[at..].find('}') {
            Some(close) => &rest[at + close + 1..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether a double-quoted string's text in `lang` holds an interpolation (`$x`, `#{x}`, `${x}`).
fn interpolates(lang: Lang, text: &str) -> bool {
    match lang {
        Lang::Perl | Lang::Php => {
            let bytes = text.as_bytes();
            bytes.windows(2).any(|w| {
                (w[0] == b'$' || w[0] == b'@')
                    && (w[1].is_ascii_alphabetic() || w[1] == b'_' || w[1] == b'{')
            })
        }
        Lang::Ruby => text.contains("#{"),
        Lang::Js => text.contains("${"),
        Lang::Python | Lang::Lua | Lang::Awk => false,
    }
}

/// A quote operator at `at` (perl's `q(`, `qq{`, `qx/`; ruby's `%x(`, `%q[`, `%(`): its kind (`q`
/// for no interpolation, `Q` for interpolation, `x` for a command) and where its delimiter is.
fn quote_operator(lang: Lang, chars: &[char], at: usize) -> Option<(char, usize)> {
    let before_ok = at == 0 || !is_name_char(chars[at - 1]);
    if !before_ok {
        return None;
    }
    let word: String = chars[at..chars.len().min(at + 3)].iter().collect();
    match lang {
        Lang::Perl => {
            let (kind, len) = if word.starts_with("qq") {
                ('Q', 2)
            } else if word.starts_with("qx") {
                ('x', 2)
            } else if word.starts_with('q') && !word.starts_with("qw") {
                ('q', 1)
            } else {
                return None;
            };
            let delimiter = *chars.get(at + len)?;
            ("({[</|!#".contains(delimiter)).then_some((kind, at + len))
        }
        Lang::Ruby => {
            if chars[at] != '%' {
                return None;
            }
            let (kind, len) = match chars.get(at + 1) {
                Some('x') => ('x', 2),
                Some('q') => ('q', 2),
                Some('Q') => ('Q', 2),
                Some('(' | '{' | '[') => ('Q', 1),
                _ => return None,
            };
            let delimiter = *chars.get(at + len)?;
            ("({[</|!".contains(delimiter)).then_some((kind, at + len))
        }
        _ => None,
    }
}

/// The text between the delimiter at `open` and its close (brackets nested); the index past it.
fn delimited(chars: &[char], open: usize) -> (String, usize) {
    let start = chars[open];
    let close = match start {
        '(' => ')',
        '{' => '}',
        '[' => ']',
        '<' => '>',
        other => other,
    };
    let mut level = 0usize;
    let mut text = String::new();
    let mut i = open + 1;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            text.push(chars[i + 1]);
            i += 2;
            continue;
        }
        if c == close && level == 0 {
            return (text, i + 1);
        }
        if c == start && start != close {
            level += 1;
        } else if c == close {
            level = level.saturating_sub(1);
        }
        text.push(c);
        i += 1;
    }
    (text, i)
}

/// A string literal starting at the quote at `at` (a triple quote in python): its text with escapes
/// read (none when `raw`), whether it was closed, and the index past it.
fn string(chars: &[char], at: usize, lang: Lang, raw: bool) -> (String, bool, usize) {
    let quote = chars[at];
    let triple = lang == Lang::Python
        && chars.get(at + 1) == Some(&quote)
        && chars.get(at + 2) == Some(&quote);
    let mut i = at + if triple { 3 } else { 1 };
    let mut text = String::new();
    // Single quotes in perl, ruby and php take no escapes but `\'` and `\\`.
    let plain = quote == '\'' && matches!(lang, Lang::Perl | Lang::Ruby | Lang::Php);
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            let e = chars[i + 1];
            if raw || (plain && e != '\'' && e != '\\') {
                text.push('\\');
                text.push(e);
            } else {
                match e {
                    'n' => text.push('\n'),
                    't' => text.push('\t'),
                    'r' => text.push('\r'),
                    '0' => text.push('\0'),
                    '\n' => {}
                    other => text.push(other),
                }
            }
            i += 2;
            continue;
        }
        if c == quote {
            if !triple {
                return (text, true, i + 1);
            }
            if chars.get(i + 1) == Some(&quote) && chars.get(i + 2) == Some(&quote) {
                return (text, true, i + 3);
            }
        }
        text.push(c);
        i += 1;
    }
    (text, false, i)
}
