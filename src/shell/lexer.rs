//! The lexer: characters into words (quotes removed, expansions done, unquoted expansions split into
//! fields), operators and redirections.

mod compound;
mod cursor;
mod token;

use std::collections::VecDeque;

use super::braces::brace_expand;
use super::command::{Command, Feed, Word, assignment};
use super::context::{Ctx, Env, MAX_DEPTH, parse_into, unknowable};
use super::input::feed_of;
pub(super) use cursor::Lexer;
pub(super) use token::{RedirectKind, Sep, Token};

impl<'e, 'b> Lexer<'e, 'b> {
    /// Where the lexer is in the line (in chars): a loop's body is read again from here.
    pub(super) fn position(&self) -> usize {
        self.at
    }

    /// The line's text between two positions.
    pub(super) fn text_between(&self, from: usize, to: usize) -> String {
        self.chars
            .get(from..to.min(self.chars.len()))
            .unwrap_or_default()
            .iter()
            .collect()
    }

    pub(super) fn new(line: &str, env: &'e mut Env, depth: usize, ctx: Ctx<'b>) -> Self {
        Lexer {
            chars: line.chars().collect(),
            at: 0,
            env,
            depth,
            ctx,
            conditional: ctx.conditional,
            nested: Vec::new(),
            pending: VecDeque::new(),
            here_resume: None,
            newline_cache: None,
            splits: Vec::new(),
            arithmetic: 0,
            dry: false,
        }
    }
}

impl Lexer<'_, '_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    /// Moves the commands found inside the words read so far to `out`.
    pub(super) fn flush_nested(&mut self, out: &mut Vec<Command>) {
        out.append(&mut self.nested);
    }

    fn skip_blanks(&mut self, newlines: bool) {
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' => self.at += 1,
                '\n' if newlines => self.newline(),
                '\\' if self.peek(1) == Some('\n') => self.at += 2,
                _ => break,
            }
        }
    }

    /// Past a newline, and past the here-documents it starts.
    fn newline(&mut self) {
        self.at += 1;
        if let Some(resume) = self.here_resume.take()
            && resume > self.at
        {
            self.at = resume;
        }
    }

    pub(super) fn next_token(&mut self) -> Token {
        loop {
            if let Some(word) = self.pending.pop_front() {
                return Token::Word(word);
            }
            // Blanks, line continuations and comments.
            loop {
                self.skip_blanks(false);
                if self.peek(0) == Some('#') {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.at += 1;
                    }
                    continue;
                }
                break;
            }
            let Some(c) = self.peek(0) else {
                return Token::End;
            };
            let sep = |lexer: &mut Self, n: usize, sep: Sep| {
                lexer.at += n;
                Token::Separator(sep)
            };
            let next = self.peek(1);
            match c {
                '\n' => {
                    self.newline();
                    return Token::Separator(Sep::Newline);
                }
                ';' => {
                    return match (next, self.peek(2)) {
                        (Some(';'), Some('&')) => sep(self, 3, Sep::DoubleSemi),
                        (Some(';' | '&'), _) => sep(self, 2, Sep::DoubleSemi),
                        _ => sep(self, 1, Sep::Semi),
                    };
                }
                '(' if next == Some('(') => return sep(self, 2, Sep::Arith),
                '(' => return sep(self, 1, Sep::Open),
                ')' => return sep(self, 1, Sep::Close),
                '|' => {
                    return match next {
                        Some('|') => sep(self, 2, Sep::OrIf),
                        Some('&') => sep(self, 2, Sep::Pipe),
                        _ => sep(self, 1, Sep::Pipe),
                    };
                }
                '&' => {
                    if next == Some('>') {
                        // `&>file`, `&>>file`: stdout and stderr to the file.
                        self.at += 2;
                        if self.peek(0) == Some('>') {
                            self.at += 1;
                        }
                        return Token::Redirect {
                            writes: true,
                            kind: RedirectKind::File,
                        };
                    }
                    if next == Some('&') {
                        return sep(self, 2, Sep::AndIf);
                    }
                    return sep(self, 1, Sep::Amp);
                }
                '<' | '>' if next == Some('(') => return Token::Word(self.process_substitution()),
                '<' | '>' => return self.redirect(),
                c if c.is_ascii_digit() => {
                    // `2>file`: a descriptor number right before a redirection.
                    let mut n = 0;
                    while self.peek(n).is_some_and(|c| c.is_ascii_digit()) {
                        n += 1;
                    }
                    if matches!(self.peek(n), Some('<' | '>')) && self.peek(n + 1) != Some('(') {
                        self.at += n;
                        return self.redirect();
                    }
                }
                _ => {}
            }
            let start = self.at;
            if let Some(word) = self.word() {
                return Token::Word(word);
            }
            if self.at == start {
                // A character no word starts with (cannot happen with the cases above): skip it.
                self.at += 1;
            }
            // A word that expanded to nothing (`$EMPTY`): none.
        }
    }

    /// A redirection operator at `<` or `>` (its descriptor number already read).
    fn redirect(&mut self) -> Token {
        let c = self.peek(0).unwrap_or('>');
        self.at += 1;
        if c == '<' {
            match self.peek(0) {
                Some('<') => {
                    self.at += 1;
                    if self.peek(0) == Some('<') {
                        self.at += 1;
                        return Token::Redirect {
                            writes: false,
                            kind: RedirectKind::HereString,
                        };
                    }
                    let strip_tabs = self.peek(0) == Some('-');
                    if strip_tabs {
                        self.at += 1;
                    }
                    return Token::Redirect {
                        writes: false,
                        kind: RedirectKind::HereDoc { strip_tabs },
                    };
                }
                Some('>') => {
                    self.at += 1;
                    return Token::Redirect {
                        writes: true,
                        kind: RedirectKind::File,
                    };
                }
                Some('&') => {
                    self.at += 1;
                    return self.duplicate(false);
                }
                _ => {
                    return Token::Redirect {
                        writes: false,
                        kind: RedirectKind::File,
                    };
                }
            }
        }
        match self.peek(0) {
            Some('>' | '|') => self.at += 1,
            Some('&') => {
                self.at += 1;
                return self.duplicate(true);
            }
            _ => {}
        }
        Token::Redirect {
            writes: true,
            kind: RedirectKind::File,
        }
    }

    /// After `>&` or `<&`: a descriptor (`2`, `-`) duplicates it; a file name (`>&file`, bash's `&>`)
    /// is written.
    fn duplicate(&mut self, writes: bool) -> Token {
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.at += 1;
        }
        let mut n = 0;
        while self.peek(n).is_some_and(|c| c.is_ascii_digit() || c == '-') {
            n += 1;
        }
        let ends = self
            .peek(n)
            .is_none_or(|c| c.is_whitespace() || ";&|()<>".contains(c));
        if n > 0 && ends {
            self.at += n;
            return Token::Redirect {
                writes: false,
                kind: RedirectKind::Duplicate,
            };
        }
        Token::Redirect {
            writes,
            kind: RedirectKind::File,
        }
    }

    /// The next word, after blanks (a redirection's target, a here-document's delimiter).
    pub(super) fn next_word(&mut self) -> Option<Word> {
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.at += 1;
        }
        if matches!(self.peek(0), Some('<' | '>')) && self.peek(1) == Some('(') {
            // `exec > >(tee log)`: the file a process substitution gives.
            return Some(self.process_substitution());
        }
        self.word()
    }

    /// A process substitution at `<(` or `>(`: a command of its own, and a word (its file) in this
    /// one.
    fn process_substitution(&mut self) -> Word {
        self.at += 2;
        let inner = self.balanced(')');
        self.nest(&inner);
        Word {
            text: format!("/dev/fd/{inner}"),
            known: false,
            glob: false,
        }
    }

    /// One word from here: quotes removed, escapes and expansions done.
    fn word(&mut self) -> Option<Word> {
        let start = self.at;
        self.splits.clear();
        let mut text = String::new();
        let mut known = true;
        let mut glob = false;
        let mut quoted_any = false;
        // Where in `text` an unquoted `{`, `,` or `}` is: what brace expansion works on.
        let mut braces: Vec<usize> = Vec::new();
        while let Some(c) = self.peek(0) {
            match c {
                '(' if text.ends_with(['@', '!', '+', '*', '?'])
                    && self.at > start
                    && text != "!" =>
                {
                    // extglob's `@(a|b)` and its kind: a pattern, read whole (found attacking issue
                    // 29: `rm ~/.config/@(hookd)/hooks.toml` was read as three words). A `!(` that
                    // starts a word is bash's `! (list)`, a subshell, as it runs without extglob; a
                    // command inside the pattern (`@($(...))`) is read too.
                    self.at += 1;
                    let inner = self.balanced(')');
                    if inner.contains(['$', '`']) {
                        self.nest(&inner);
                    }
                    text.push('(');
                    text.push_str(&inner);
                    text.push(')');
                    glob = true;
                }
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => {
                    // `(` right after `$` or in `name(`: handled below; here it ends the word.
                    break;
                }
                '\\' => {
                    self.at += 1;
                    match self.peek(0) {
                        Some('\n') => self.at += 1,
                        Some(next) => {
                            text.push(next);
                            self.at += 1;
                        }
                        None => {}
                    }
                }
                '\'' => {
                    quoted_any = true;
                    self.at += 1;
                    let mut closed = false;
                    while let Some(q) = self.peek(0) {
                        self.at += 1;
                        if q == '\'' {
                            closed = true;
                            break;
                        }
                        text.push(q);
                    }
                    self.unclosed(closed);
                }
                '"' => {
                    quoted_any = true;
                    self.at += 1;
                    self.double_quoted(&mut text, &mut known);
                }
                '`' => {
                    self.at += 1;
                    let inner = self.until_backquote();
                    self.substitution(&mut text, &mut known, &inner, false);
                }
                '$' => {
                    self.dollar(&mut text, &mut known, false);
                }
                '~' if self.at == start
                    || (text.ends_with('=')
                        && assignment(&text).is_some_and(|(_, v)| v.is_empty())) =>
                {
                    // `~` or `~/...` at the word's start: the home folder; `~USER` this user's too
                    // (found attacking the guard: `rm ~me/.config/hookd/hooks.toml`); `~+` and `~-`
                    // the folder the shell is in or was in, which the reader cannot know.
                    let mut name = String::new();
                    let mut len = 0;
                    while len < 64
                        && let Some(n) = self
                            .peek(1 + len)
                            .filter(|n| n.is_alphanumeric() || "._-+".contains(*n))
                    {
                        name.push(n);
                        len += 1;
                        if name == "+" || name == "-" {
                            break;
                        }
                    }
                    let after = self.peek(1 + len);
                    let ends = after
                        .is_none_or(|n| n == '/' || n.is_whitespace() || ";&|<>()".contains(n));
                    if ends && (name.is_empty() || self.is_this_user(&name)) {
                        self.at += 1 + len;
                        match &self.env.home {
                            Some(home) => text.push_str(home),
                            None => {
                                text.push('~');
                                known = false;
                            }
                        }
                    } else if ends && (name == "+" || name == "-") {
                        self.at += 2;
                        text.push('~');
                        text.push_str(&name);
                        known = false;
                    } else {
                        text.push('~');
                        self.at += 1;
                    }
                }
                '*' | '?' | '[' => {
                    glob = true;
                    text.push(c);
                    self.at += 1;
                }
                _ => {
                    if matches!(c, '{' | ',' | '}') {
                        braces.push(text.len());
                    }
                    text.push(c);
                    self.at += 1;
                }
            }
        }
        if !(self.at > start || quoted_any) {
            return None;
        }
        if !self.splits.is_empty() {
            // `W='rm -rf'; $W x`: an unquoted expansion is split at blanks into words (and `"$@"`
            // at its arguments).
            let splits = std::mem::take(&mut self.splits);
            // The line may set IFS (`IFS=,; cmd=rm,-rf,~; $cmd`): split where it says.
            let ifs = self.env.vars.get("IFS").map_or(" \t\n", String::as_str);
            let mut fields = split_fields(&text, &splits, ifs).into_iter();
            let first = fields.next().or_else(|| quoted_any.then(String::new));
            self.pending
                .extend(fields.map(|text| Word { text, known, glob }));
            return first.map(|text| Word { text, known, glob });
        }
        if braces.len() >= 2
            && self
                .ctx
                .budget
                .spend(text.len().saturating_mul(braces.len()).saturating_mul(8))
        {
            let home = self.env.home.clone();
            let mut words = brace_expand(&text, &braces).into_iter().map(|text| {
                // `{~/a,b}`: each word's `~` is expanded after the braces, as the shell does.
                let text = match (&home, text.strip_prefix('~')) {
                    (Some(home), Some(rest)) if rest.is_empty() || rest.starts_with('/') => {
                        format!("{home}{rest}")
                    }
                    _ => text,
                };
                Word { text, known, glob }
            });
            let first = words.next();
            self.pending.extend(words);
            return first;
        }
        Some(Word { text, known, glob })
    }

    /// Whether `~name` names this user (its `USER` or `LOGNAME`, or its home folder's name).
    fn is_this_user(&self, name: &str) -> bool {
        ["USER", "LOGNAME"]
            .iter()
            .any(|var| self.env.vars.get(*var).is_some_and(|v| v == name))
            || self.env.home.as_deref().is_some_and(|home| {
                std::path::Path::new(home)
                    .file_name()
                    .is_some_and(|base| base == name)
            })
    }

    /// The inside of `"..."` (the opening quote read), into `text`.
    fn double_quoted(&mut self, text: &mut String, known: &mut bool) {
        while let Some(c) = self.peek(0) {
            match c {
                '"' => {
                    self.at += 1;
                    return;
                }
                '\\' => {
                    self.at += 1;
                    match self.peek(0) {
                        Some(next @ ('$' | '`' | '"' | '\\')) => {
                            text.push(next);
                            self.at += 1;
                        }
                        Some('\n') => self.at += 1,
                        _ => text.push('\\'),
                    }
                }
                '`' => {
                    self.at += 1;
                    let inner = self.until_backquote();
                    self.substitution(text, known, &inner, true);
                }
                '$' => self.dollar(text, known, true),
                _ => {
                    text.push(c);
                    self.at += 1;
                }
            }
        }
        self.unclosed(false);
    }

    /// Notes a quote that the line ended inside (`closed` false), when the line is read at its own
    /// level: a quote left open inside a nested line (`sh -c "'x"`) is that shell's error, and runs
    /// nothing of it.
    fn unclosed(&mut self, closed: bool) {
        if !closed && self.depth == 0 && !self.dry {
            self.env.unclosed_quote = true;
        }
    }

    /// A `$` expansion at `self.at`, into `text`.
    fn dollar(&mut self, text: &mut String, known: &mut bool, quoted: bool) {
        self.at += 1;
        match self.peek(0) {
            Some('(') => {
                self.at += 1;
                if self.peek(0) == Some('(') {
                    // `$((...))`: arithmetic, a number; no command, but those inside it.
                    self.at += 1;
                    let inner = self.balanced(')');
                    if self.peek(0) == Some(')') {
                        self.at += 1;
                    }
                    self.nest_substitutions(&inner);
                    text.push_str(&format!("$(({inner}))"));
                    *known = false;
                    return;
                }
                let inner = self.balanced(')');
                self.substitution(text, known, &inner, quoted);
            }
            Some('[') => {
                // `$[...]`: bash's old arithmetic.
                self.at += 1;
                let inner = self.balanced(']');
                self.nest_substitutions(&inner);
                text.push_str(&format!("$[{inner}]"));
                *known = false;
            }
            Some('{') => {
                self.at += 1;
                let inner = self.balanced('}');
                let name_end = inner
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(inner.len());
                let (name, rest) = inner.split_at(name_end);
                let name = if name.is_empty() && matches!(rest, "@" | "*" | "#") {
                    rest
                } else {
                    name
                };
                let whole = rest.is_empty() || name == rest;
                if whole && self.positional(text, known, name, quoted) {
                    return;
                }
                let written = format!("${{{inner}}}");
                // `${X:-default}`, `${X-default}`: X's value when it is known and set (not empty,
                // with the colon).
                // `${X:=default}`, `${X=default}` the same, and they set X to the default.
                let defaulted = [(":-", true, false), (":=", true, true), ("-", false, false)]
                    .into_iter()
                    .chain([("=", false, true)])
                    .find_map(|(op, colon, sets)| rest.strip_prefix(op).map(|d| (d, colon, sets)));
                if let (Some((_, colon, _)), Some(value)) =
                    (defaulted, self.env.vars.get(name).cloned())
                    && !(colon && value.is_empty())
                {
                    self.value(text, known, &value, &written, quoted);
                    return;
                }
                // X not set on the line: the default is what it is when X is not set in the
                // environment either, which a guard must consider (`rm -rf "${X:=~}"`, found
                // attacking the guard). A default that is itself an expansion stays unknown.
                if let Some((default, _, sets)) = defaulted
                    && !self.env.unknown.contains_key(name)
                    && !default.contains(['$', '`', '"', '\'', '\\'])
                {
                    let default = match (default.strip_prefix('~'), &self.env.home) {
                        (Some(after), Some(home)) if after.is_empty() || after.starts_with('/') => {
                            format!("{home}{after}")
                        }
                        _ => default.to_string(),
                    };
                    if sets && self.env.may_set(name) {
                        self.env.vars.insert(name.to_string(), default.clone());
                    }
                    self.value(text, known, &default, &written, quoted);
                    return;
                }
                match (self.env.vars.get(name).cloned(), whole) {
                    (Some(value), true) => self.value(text, known, &value, &written, quoted),
                    (None, true) if self.env.unknown.contains_key(name) => {
                        text.push_str(&self.env.unknown[name]);
                        *known = false;
                    }
                    _ => {
                        text.push_str(&written);
                        *known = false;
                    }
                }
            }
            Some('\'') if !quoted => {
                // `$'...'`: ANSI-C quoting.
                self.at += 1;
                self.ansi_c(text);
            }
            Some('"') if !quoted => {
                // `$"..."`: a translated string, read as a double-quoted one.
                self.at += 1;
                self.double_quoted(text, known);
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let mut name = String::new();
                while let Some(c) = self
                    .peek(0)
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    name.push(c);
                    self.at += 1;
                }
                let written = format!("${name}");
                match (
                    self.env.vars.get(&name).cloned(),
                    self.env.unknown.get(&name),
                ) {
                    (Some(value), _) => self.value(text, known, &value, &written, quoted),
                    (None, Some(source)) => {
                        text.push_str(source);
                        *known = false;
                    }
                    (None, None) => {
                        text.push_str(&written);
                        *known = false;
                    }
                }
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                self.at += 1;
                let name = c.to_string();
                if self.positional(text, known, &name, quoted) {
                    return;
                }
                match self.env.vars.get(&name).cloned() {
                    Some(value) => self.value(text, known, &value, &format!("${c}"), quoted),
                    None => {
                        text.push('$');
                        text.push(c);
                        *known = false;
                    }
                }
            }
            _ => text.push('$'),
        }
    }

    /// `$@` or `$*` when the positional parameters are known: each a word of its own in `"$@"`, split
    /// at blanks unquoted. False when `name` is neither or they are not known.
    fn positional(
        &mut self,
        text: &mut String,
        known: &mut bool,
        name: &str,
        quoted: bool,
    ) -> bool {
        if !matches!(name, "@" | "*") {
            return false;
        }
        let Some(args) = self.env.args.clone() else {
            return false;
        };
        if !args.iter().all(|w| w.known) {
            return false;
        }
        if !quoted || name == "*" {
            let all: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
            let joined = all.join(" ");
            self.value(text, known, &joined, &format!("${name}"), quoted);
            return true;
        }
        for (n, arg) in args.iter().enumerate() {
            if n > 0 {
                self.splits.push((text.len(), text.len() + 1));
                text.push(' ');
            }
            text.push_str(&arg.text);
        }
        true
    }

    /// A variable's known value into `text` (`written` as it was written, kept instead when reading
    /// it would take more work than is left): unquoted, it is split at blanks into words.
    fn value(
        &mut self,
        text: &mut String,
        known: &mut bool,
        value: &str,
        written: &str,
        quoted: bool,
    ) {
        if !self.ctx.budget.spend(value.len()) {
            text.push_str(written);
            *known = false;
            return;
        }
        let start = text.len();
        text.push_str(value);
        if !quoted {
            // Split at blanks; and a word that was only this, empty, is no word.
            self.splits.push((start, text.len()));
        }
    }

    /// The inside of `$'...'` (the quote read), escapes done, into `text`.
    fn ansi_c(&mut self, text: &mut String) {
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match c {
                '\'' => return,
                '\\' => {
                    let Some(e) = self.peek(0) else { return };
                    self.at += 1;
                    match e {
                        'n' => text.push('\n'),
                        't' => text.push('\t'),
                        'r' => text.push('\r'),
                        'a' => text.push('\x07'),
                        'b' => text.push('\x08'),
                        'e' | 'E' => text.push('\x1b'),
                        'f' => text.push('\x0c'),
                        'v' => text.push('\x0b'),
                        'x' | 'u' | 'U' => {
                            let max = match e {
                                'x' => 2,
                                'u' => 4,
                                _ => 8,
                            };
                            let mut digits = String::new();
                            while digits.len() < max
                                && let Some(d) = self.peek(0).filter(char::is_ascii_hexdigit)
                            {
                                digits.push(d);
                                self.at += 1;
                            }
                            if let Some(ch) = u32::from_str_radix(&digits, 16)
                                .ok()
                                .and_then(char::from_u32)
                            {
                                text.push(ch);
                            }
                        }
                        '0'..='7' => {
                            let mut digits = String::from(e);
                            while digits.len() < 3
                                && let Some(d) = self.peek(0).filter(|d| ('0'..='7').contains(d))
                            {
                                digits.push(d);
                                self.at += 1;
                            }
                            if let Some(ch) = u32::from_str_radix(&digits, 8)
                                .ok()
                                .and_then(char::from_u32)
                            {
                                text.push(ch);
                            }
                        }
                        other => text.push(other),
                    }
                }
                _ => text.push(c),
            }
        }
    }

    /// The text up to the `close` that balances an opening already read (quotes and nesting minded);
    /// the closing character is consumed.
    fn balanced(&mut self, close: char) -> String {
        let open = match close {
            ')' => '(',
            ']' => '[',
            _ => '{',
        };
        let mut level = 0usize;
        let mut inner = String::new();
        // A `case WORD in` inside `$( )`: its patterns' `)` do not end the substitution, until `esac`
        // (`$(case x in x) rm -rf ~;; esac)`, found attacking the guard).
        let mut cases = 0usize;
        let mut case_words = 0u8;
        let mut word = String::new();
        while let Some(c) = self.peek(0) {
            self.at += 1;
            if close == ')' {
                if c.is_ascii_alphanumeric() || c == '_' {
                    word.push(c);
                } else if !word.is_empty() {
                    match (case_words, word.as_str()) {
                        (0, "case") => case_words = 1,
                        (0, "esac") => cases = cases.saturating_sub(1),
                        (1, _) => case_words = 2,
                        (2, "in") => {
                            cases += 1;
                            case_words = 0;
                        }
                        _ => case_words = 0,
                    }
                    word.clear();
                }
            }
            match c {
                ')' if level == 0 && cases > 0 => inner.push(c),
                '\\' => {
                    inner.push(c);
                    if let Some(next) = self.peek(0) {
                        inner.push(next);
                        self.at += 1;
                    }
                }
                '\'' | '"' => {
                    inner.push(c);
                    while let Some(q) = self.peek(0) {
                        self.at += 1;
                        inner.push(q);
                        if q == '\\' && c == '"' {
                            if let Some(next) = self.peek(0) {
                                inner.push(next);
                                self.at += 1;
                            }
                        } else if q == c {
                            break;
                        }
                    }
                }
                c if c == open => {
                    level += 1;
                    inner.push(c);
                }
                c if c == close => {
                    if level == 0 {
                        return inner;
                    }
                    level -= 1;
                    inner.push(c);
                }
                _ => inner.push(c),
            }
        }
        inner
    }

    /// The text up to the closing backquote (read), `\`` unescaped.
    fn until_backquote(&mut self) -> String {
        let mut inner = String::new();
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match c {
                '`' => break,
                '\\' if matches!(self.peek(0), Some('`' | '\\' | '$')) => {
                    inner.push(self.peek(0).unwrap_or('\\'));
                    self.at += 1;
                }
                _ => inner.push(c),
            }
        }
        inner
    }

    /// A command substitution (`$(inner)`, or in backquotes) into `text`: its commands read, nested;
    /// and the word is what it prints when that is known: a lone `echo` or `printf` of words known on
    /// the line (`$(echo ls)` runs `ls`, `$(printf rm) -rf ~` is `rm -rf ~`). Else it stays as written,
    /// a command's output, not known.
    fn substitution(&mut self, text: &mut String, known: &mut bool, inner: &str, quoted: bool) {
        let start = self.nested.len();
        self.nest(inner);
        let output = match &self.nested[start..] {
            [only] if only.depth == self.depth + 1 && only.redirects.is_empty() && !only.piped => {
                match feed_of(only) {
                    Feed::Text(out) if matches!(only.program(), "echo" | "printf") => {
                        // The shell drops the output's last newlines; a newline left inside (echo's
                        // two readings of an escape) is not one text.
                        let out = out.trim_end_matches('\n');
                        (!out.contains('\n')).then(|| out.to_string())
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        match output {
            Some(out) => {
                let written = format!("$({inner})");
                self.value(text, known, &out, &written, quoted);
            }
            None => {
                text.push_str(&format!("$({inner})"));
                *known = false;
            }
        }
    }

    /// A command inside this one (`$(...)`): read, with this line's variables, at one level deeper,
    /// in a subshell.
    fn nest(&mut self, inner: &str) {
        if self.dry {
            return;
        }
        let ctx = Ctx {
            subshell: true,
            conditional: self.conditional,
            ..self.ctx
        };
        if self.ctx.budget.spent() {
            if self.ctx.budget.tell() {
                let why = "too much to read".to_string();
                self.nested
                    .push(unknowable(inner, why, self.depth + 1, ctx));
            }
            return;
        }
        let mut env = self.env.fork(self.ctx.budget);
        parse_into(inner, &mut env, self.depth + 1, &mut self.nested, ctx);
    }

    /// The commands inside an arithmetic expression (`$(( $(cat n) + 1 ))`): it runs no program, but
    /// those run.
    fn nest_substitutions(&mut self, inner: &str) {
        if self.dry || !inner.contains(['$', '`']) || self.arithmetic >= MAX_DEPTH {
            return;
        }
        let mut sub = Lexer::new(inner, self.env, self.depth, self.ctx);
        sub.conditional = self.conditional;
        sub.arithmetic = self.arithmetic + 1;
        let mut scratch = String::new();
        let mut known = true;
        while let Some(c) = sub.peek(0) {
            match c {
                '$' => sub.dollar(&mut scratch, &mut known, true),
                '`' => {
                    sub.at += 1;
                    let inner = sub.until_backquote();
                    sub.nest(&inner);
                }
                _ => sub.at += 1,
            }
            scratch.clear();
        }
        let mut nested = std::mem::take(&mut sub.nested);
        self.nested.append(&mut nested);
    }
}

/// `text` split into words at the blanks inside `splits` (sorted byte ranges that came from unquoted
/// expansions), or at the characters of `ifs` when the line sets IFS; empty words dropped.
fn split_fields(text: &str, splits: &[(usize, usize)], ifs: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut range = 0;
    for (at, c) in text.char_indices() {
        while range < splits.len() && splits[range].1 <= at {
            range += 1;
        }
        let split = ifs.contains(c) && range < splits.len() && splits[range].0 <= at;
        if split {
            if !field.is_empty() {
                fields.push(std::mem::take(&mut field));
            }
        } else {
            field.push(c);
        }
    }
    if !field.is_empty() {
        fields.push(field);
    }
    fields
}
