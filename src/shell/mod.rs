//! A shell command line read as a shell would split it, for judging what it does without running it.
//!
//! A guard reads an agent's `Bash` command to tell what it would touch. Reading it by splitting on spaces
//! misses what a shell does: quotes (`'rm' -rf`), `;`/`&&`/`|`, redirections (`echo > file`), commands
//! inside commands (`$(...)`, backquotes, `<(...)`), here-documents fed to a shell, variables set on the
//! line (`W=~/x; rm $W`), and wrappers that run another command (`sh -c`, `env`, `sudo`, `xargs`, `find
//! -exec`, ... in [`unwrap`]). This module reads all of those into a flat list of [`Command`]s: every
//! simple command the line could run, nested ones included, in order, each with its words after quote
//! removal and the expansions it can know, and its redirections.
//!
//! It is a reader for judging, not a shell: it never fails (what it cannot read it reads as words), and
//! where it cannot know a word (an unknown variable, a command's output) it says so ([`Word::known`]), so
//! that a judge can take the safe side. No crate reads shell this way: `shell-words` and `shlex` split one
//! simple command's words and stop at operators and substitutions, which are what a disguised command
//! hides behind.

pub mod unwrap;

use std::collections::HashMap;

/// How deep commands may nest (`sh -c "sh -c '...'"`, `$( $( ) )`) before the rest is read as words: a
/// line built to nest forever must not take the daemon's stack.
pub const MAX_DEPTH: usize = 12;

/// The longest value a variable set on the line keeps; a longer one is read as unknown.
pub const MAX_VALUE: usize = 4096;

/// One word of a command, as the shell would pass it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// After quote removal, `~` and the variables known expanded; what could not be known is left as
    /// written (`$FOO`, `$(...)`).
    pub text: String,
    /// Every part of it is known: no unknown variable, no command's output.
    pub known: bool,
    /// It holds an unquoted `*`, `?` or `[`: the shell would match it against file names.
    pub glob: bool,
}

/// Where a redirection points, and whether it writes there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// `>`, `>>`, `>|`, `&>`, `<>` and their numbered forms: the file is written (created, truncated or
    /// appended to).
    pub writes: bool,
    pub target: Word,
}

/// One simple command: its words (the program first) and redirections.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Command {
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
    /// Its stdin is a here-document or here-string, with this text.
    pub here: Option<String>,
    /// Feeds its output to the next command (`|`).
    pub piped: bool,
    /// Nested this many levels (inside `$(...)`, `sh -c`, ...).
    pub depth: usize,
    /// Its arguments are not all on the line: more come from its input (`xargs rm`, `parallel`).
    pub fed: bool,
}

impl Command {
    /// The program's name without its folder (`/usr/bin/rm` is `rm`), or "" when there is none.
    pub fn program(&self) -> &str {
        self.words
            .first()
            .map_or("", |w| w.text.rsplit('/').next().unwrap_or(&w.text))
    }

    /// The words after the program.
    pub fn args(&self) -> &[Word] {
        self.words.get(1..).unwrap_or(&[])
    }
}

/// What the reader knows of the world the line runs in: the variables it may expand.
#[derive(Debug, Clone, Default)]
pub struct Env {
    pub vars: HashMap<String, String>,
    /// Variables set on the line to what cannot be known (`P=$(pgrep hookd)`), with the text they
    /// were set to: a word that uses one is still unknown, but says where its value came from (`kill
    /// $P` reads as `kill $(pgrep hookd)`).
    pub unknown: HashMap<String, String>,
    /// The home folder, for `~`.
    pub home: Option<String>,
}

/// Reads `line` into every simple command it could run (see the module's comment), wrappers unwrapped.
pub fn read(line: &str, env: &Env) -> Vec<Command> {
    let mut env = env.clone();
    let mut out = Vec::new();
    parse_into(line, &mut env, 0, &mut out);
    out
}

/// Parses `line` at `depth`, appending its commands (nested ones before the command that holds them, as
/// they run first) to `out`.
pub(crate) fn parse_into(line: &str, env: &mut Env, depth: usize, out: &mut Vec<Command>) {
    if depth > MAX_DEPTH {
        // Too deep to read further: what is left is one command of unknown words, which a judge sees
        // as a command it cannot tell.
        out.push(Command {
            words: vec![Word {
                text: line.to_string(),
                known: false,
                glob: false,
            }],
            depth,
            ..Command::default()
        });
        return;
    }
    let mut lexer = Lexer {
        chars: line.chars().collect(),
        at: 0,
        env,
        depth,
        nested: Vec::new(),
        pending: std::collections::VecDeque::new(),
    };
    let mut current = Command {
        depth,
        ..Command::default()
    };
    loop {
        let token = lexer.next_token();
        match token {
            Token::End => {
                finish(&mut lexer, &mut current, out, depth);
                break;
            }
            Token::Separator { pipe } => {
                current.piped = pipe;
                finish(&mut lexer, &mut current, out, depth);
            }
            Token::Redirect { writes, kind } => {
                let target = lexer.next_word();
                match kind {
                    RedirectKind::File => {
                        if let Some(target) = target {
                            current.redirects.push(Redirect { writes, target });
                        }
                    }
                    RedirectKind::HereDoc { strip_tabs } => {
                        if let Some(target) = target {
                            let body = lexer.take_here_body(&target.text, strip_tabs);
                            match &mut current.here {
                                Some(here) => {
                                    here.push('\n');
                                    here.push_str(&body);
                                }
                                None => current.here = Some(body),
                            }
                        }
                    }
                    RedirectKind::HereString => {
                        current.here = target.map(|w| w.text);
                    }
                    RedirectKind::Duplicate => {}
                }
            }
            Token::Word(word) => current.words.push(word),
        }
    }
}

/// Ends the command being read: its leading assignments set variables (for the words after them), a
/// reserved word that opens a compound is skipped, and it is unwrapped into `out` with the nested
/// commands its words held.
fn finish(lexer: &mut Lexer<'_>, current: &mut Command, out: &mut Vec<Command>, depth: usize) {
    let mut command = std::mem::replace(
        current,
        Command {
            depth,
            ..Command::default()
        },
    );
    out.append(&mut lexer.nested);
    // Leading assignments: `A=1 B=2 cmd` (for cmd alone) or `A=1` alone (for the rest of the line).
    let assignments = command
        .words
        .iter()
        .take_while(|w| assignment(&w.text).is_some())
        .count();
    if assignments == command.words.len() {
        for word in &command.words {
            // A value past [`MAX_VALUE`] is not kept: `b=$a$a; c=$b$b; ...` must not double the
            // reader's memory with each word (found attacking issue 29).
            if let Some((name, value)) = assignment(&word.text)
                && word.known
                && value.len() <= MAX_VALUE
            {
                lexer.env.vars.insert(name.to_string(), value.to_string());
                lexer.env.unknown.remove(name);
            } else if let Some((name, value)) = assignment(&word.text) {
                lexer.env.vars.remove(name);
                if value.len() <= MAX_VALUE {
                    lexer
                        .env
                        .unknown
                        .insert(name.to_string(), value.to_string());
                } else {
                    lexer.env.unknown.remove(name);
                }
            }
        }
        if command.redirects.is_empty() {
            return;
        }
    }
    command.words.drain(..assignments);
    // Words that open or close a compound command are not programs: the command is what follows.
    while let Some(first) = command.words.first() {
        match first.text.as_str() {
            "if" | "then" | "else" | "elif" | "fi" | "do" | "done" | "while" | "until" | "!"
            | "{" | "}" | "time" | "esac" | "((" | "))" => {
                command.words.remove(0);
            }
            // `for x in a b`, `case w in`, `select x in ...`: words, not a command. A loop over
            // one word gives its variable that word (`for f in ~/.config/hookd/*; do rm "$f"`:
            // found attacking issue 29); over more, the variable cannot be told.
            "for" | "case" | "select" | "function" | "[[" => {
                if matches!(first.text.as_str(), "for" | "select")
                    && let Some(name) = command.words.get(1).map(|w| w.text.clone())
                {
                    let list: Vec<&Word> = command.words.iter().skip(3).collect();
                    match list.as_slice() {
                        [only] if only.known && command.words[2].text == "in" => {
                            lexer.env.vars.insert(name, only.text.clone());
                        }
                        _ => {
                            lexer.env.vars.remove(&name);
                        }
                    }
                }
                command.words.clear();
            }
            _ => break,
        }
    }
    if command.words.is_empty() && command.redirects.is_empty() {
        return;
    }
    unwrap::unwrap_into(command, lexer.env, out);
}

/// `NAME=value` as its two parts, when `text` is an assignment.
fn assignment(text: &str) -> Option<(&str, &str)> {
    let (name, value) = text.split_once('=')?;
    let name = name.strip_suffix('+').unwrap_or(name);
    let mut chars = name.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() || first == '_')
        .then_some(())
        .filter(|_| chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))?;
    Some((name, value))
}

/// How many words one brace expansion may make: enough for any command a person writes, and a line
/// built to explode (`{a,b}{a,b}...`) stays small. Beyond it the first ones are judged, and the rest as
/// the word unexpanded.
const MAX_BRACE_WORDS: usize = 256;

/// A word with unquoted braces at `braces` (byte offsets of `{`, `,` and `}` in `text`) expanded as the
/// shell does before anything else: `a{b,c}d` is `abd acd`, `{1..3}` is `1 2 3`, nested ones too (found
/// attacking issue 29: `mv ~/.config/hookd{,.off}` named no guarded path as written). A word too long
/// to expand cheaply is kept as it is.
fn brace_expand(text: &str, braces: &[usize]) -> Vec<String> {
    if text.len() > 4096 {
        return vec![text.to_string()];
    }
    let marked: Vec<(char, bool)> = text
        .char_indices()
        .map(|(at, c)| (c, braces.binary_search(&at).is_ok()))
        .collect();
    let mut out = Vec::new();
    expand_braces(marked, &mut out);
    if out.len() >= MAX_BRACE_WORDS {
        out.push(text.to_string());
    }
    out
}

fn expand_braces(word: Vec<(char, bool)>, out: &mut Vec<String>) {
    if out.len() >= MAX_BRACE_WORDS {
        return;
    }
    // Each `{` with its `}` and the commas between them at its own level, in one pass.
    let mut open_at = Vec::new();
    let mut pairs: Vec<(usize, usize, Vec<usize>)> = Vec::new();
    let mut commas_of: Vec<Vec<usize>> = Vec::new();
    for (k, item) in word.iter().enumerate() {
        match *item {
            ('{', true) => {
                open_at.push(k);
                commas_of.push(Vec::new());
            }
            ('}', true) => {
                if let (Some(open), Some(commas)) = (open_at.pop(), commas_of.pop()) {
                    pairs.push((open, k, commas));
                }
            }
            (',', true) => {
                if let Some(commas) = commas_of.last_mut() {
                    commas.push(k);
                }
            }
            _ => {}
        }
    }
    pairs.sort_by_key(|(open, _, _)| *open);
    for (open, close, commas) in pairs {
        let alternatives: Vec<Vec<(char, bool)>> = if commas.is_empty() {
            let inside: String = word[open + 1..close].iter().map(|(c, _)| *c).collect();
            match sequence(&inside) {
                Some(items) => items
                    .into_iter()
                    .map(|item| item.chars().map(|c| (c, false)).collect())
                    .collect(),
                None => continue,
            }
        } else {
            let mut bounds = vec![open];
            bounds.extend(&commas);
            bounds.push(close);
            bounds
                .windows(2)
                .map(|w| word[w[0] + 1..w[1]].to_vec())
                .collect()
        };
        for alternative in alternatives {
            let mut next = word[..open].to_vec();
            next.extend(alternative);
            next.extend_from_slice(&word[close + 1..]);
            expand_braces(next, out);
            if out.len() >= MAX_BRACE_WORDS {
                return;
            }
        }
        return;
    }
    out.push(word.into_iter().map(|(c, _)| c).collect());
}

/// `1..5`, `a..e`, `10..1..2`: the items of a brace sequence (at most [`MAX_BRACE_WORDS`]).
fn sequence(inside: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = inside.split("..").collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let step = match parts.get(2) {
        Some(step) => step.parse::<i64>().ok()?.unsigned_abs().max(1),
        None => 1,
    };
    let (from, to, letters) = match (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
        (Ok(a), Ok(b)) => (a, b, false),
        _ => {
            let a = single_char(parts[0])?;
            let b = single_char(parts[1])?;
            (i64::from(u32::from(a)), i64::from(u32::from(b)), true)
        }
    };
    let mut items = Vec::new();
    let mut at = from;
    loop {
        let item = if letters {
            char::from_u32(u32::try_from(at).ok()?)?.to_string()
        } else {
            at.to_string()
        };
        items.push(item);
        if at == to || items.len() >= MAX_BRACE_WORDS {
            break;
        }
        let next = if from <= to {
            at.checked_add(i64::try_from(step).ok()?)?
        } else {
            at.checked_sub(i64::try_from(step).ok()?)?
        };
        if (from <= to && next > to) || (from > to && next < to) {
            break;
        }
        at = next;
    }
    Some(items)
}

fn single_char(text: &str) -> Option<char> {
    let mut chars = text.chars();
    let c = chars.next().filter(char::is_ascii_alphabetic)?;
    chars.next().is_none().then_some(c)
}

enum Token {
    Word(Word),
    /// `;`, `&`, `&&`, `||`, `|`, `|&`, a newline, `(`, `)`: the command ends.
    Separator {
        pipe: bool,
    },
    Redirect {
        writes: bool,
        kind: RedirectKind,
    },
    End,
}

enum RedirectKind {
    File,
    HereDoc {
        strip_tabs: bool,
    },
    HereString,
    /// `>&2`, `2>&1`, `<&-`: another descriptor, no file.
    Duplicate,
}

struct Lexer<'e> {
    chars: Vec<char>,
    at: usize,
    env: &'e mut Env,
    depth: usize,
    /// Commands found inside the words read so far (`$(...)`), run before the command that holds them.
    nested: Vec<Command>,
    /// The words a brace expansion made beyond its first (`a{b,c}` is `ab ac`), given out next.
    pending: std::collections::VecDeque<Word>,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn next_token(&mut self) -> Token {
        if let Some(word) = self.pending.pop_front() {
            return Token::Word(word);
        }
        // Blanks, line continuations and comments.
        loop {
            match self.peek(0) {
                Some(' ' | '\t' | '\r') => self.at += 1,
                Some('\\') if self.peek(1) == Some('\n') => self.at += 2,
                Some('#') => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.at += 1;
                    }
                }
                _ => break,
            }
        }
        let Some(c) = self.peek(0) else {
            return Token::End;
        };
        match c {
            '\n' => {
                self.at += 1;
                Token::Separator { pipe: false }
            }
            ';' | '(' | ')' => {
                self.at += 1;
                while self.peek(0) == Some(';') || (c == '(' && self.peek(0) == Some('(')) {
                    self.at += 1;
                }
                if c == ';' && self.peek(0) == Some('&') {
                    self.at += 1;
                }
                Token::Separator { pipe: false }
            }
            '|' => {
                self.at += 1;
                let pipe = match self.peek(0) {
                    Some('|') => {
                        self.at += 1;
                        false
                    }
                    Some('&') => {
                        self.at += 1;
                        true
                    }
                    _ => true,
                };
                Token::Separator { pipe }
            }
            '&' => {
                if self.peek(1) == Some('>') {
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
                self.at += 1;
                if self.peek(0) == Some('&') {
                    self.at += 1;
                }
                Token::Separator { pipe: false }
            }
            '<' | '>' if self.peek(1) == Some('(') => {
                // A process substitution: a command of its own, and a word (its file) in this one.
                self.at += 2;
                let inner = self.balanced(')');
                self.nest(&inner);
                Token::Word(Word {
                    text: format!("/dev/fd/{inner}"),
                    known: false,
                    glob: false,
                })
            }
            '<' | '>' => self.redirect(),
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
                self.word_token()
            }
            _ => self.word_token(),
        }
    }

    fn word_token(&mut self) -> Token {
        match self.word() {
            Some(word) => Token::Word(word),
            None => {
                // A character no word starts with (cannot happen with the cases above): skip it.
                self.at += 1;
                self.next_token()
            }
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
    fn next_word(&mut self) -> Option<Word> {
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.at += 1;
        }
        self.word()
    }

    /// One word from here: quotes removed, escapes and expansions done.
    fn word(&mut self) -> Option<Word> {
        let start = self.at;
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
                    while let Some(q) = self.peek(0) {
                        self.at += 1;
                        if q == '\'' {
                            break;
                        }
                        text.push(q);
                    }
                }
                '"' => {
                    quoted_any = true;
                    self.at += 1;
                    self.double_quoted(&mut text, &mut known);
                }
                '`' => {
                    self.at += 1;
                    let inner = self.until_backquote();
                    self.nest(&inner);
                    text.push_str(&format!("$({inner})"));
                    known = false;
                }
                '$' => {
                    self.dollar(&mut text, &mut known, false);
                }
                '~' if self.at == start
                    || (text.ends_with('=')
                        && assignment(&text).is_some_and(|(_, v)| v.is_empty())) =>
                {
                    // `~` or `~/...` at the word's start: the home folder; `~USER` this user's too
                    // (found attacking issue 29: `rm ~me/.config/hookd/hooks.toml`); `~+` and `~-`
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
        if braces.len() >= 2 {
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
                    self.nest(&inner);
                    text.push_str(&format!("$({inner})"));
                    *known = false;
                }
                '$' => self.dollar(text, known, true),
                _ => {
                    text.push(c);
                    self.at += 1;
                }
            }
        }
    }

    /// A `$` expansion at `self.at`, into `text`.
    fn dollar(&mut self, text: &mut String, known: &mut bool, quoted: bool) {
        self.at += 1;
        match self.peek(0) {
            Some('(') => {
                self.at += 1;
                if self.peek(0) == Some('(') {
                    // `$((...))`: arithmetic, a number.
                    self.at += 1;
                    let inner = self.balanced(')');
                    if self.peek(0) == Some(')') {
                        self.at += 1;
                    }
                    text.push_str(&format!("$(({inner}))"));
                    *known = false;
                    return;
                }
                let inner = self.balanced(')');
                self.nest(&inner);
                text.push_str(&format!("$({inner})"));
                *known = false;
            }
            Some('{') => {
                self.at += 1;
                let inner = self.balanced('}');
                let name_end = inner
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(inner.len());
                let (name, rest) = inner.split_at(name_end);
                match (self.env.vars.get(name), rest.is_empty()) {
                    (Some(value), true) => text.push_str(value),
                    (None, true) if self.env.unknown.contains_key(name) => {
                        text.push_str(&self.env.unknown[name]);
                        *known = false;
                    }
                    _ => {
                        text.push_str(&format!("${{{inner}}}"));
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
                match (self.env.vars.get(&name), self.env.unknown.get(&name)) {
                    (Some(value), _) => text.push_str(value),
                    (None, Some(source)) => {
                        text.push_str(source);
                        *known = false;
                    }
                    (None, None) => {
                        text.push('$');
                        text.push_str(&name);
                        *known = false;
                    }
                }
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                self.at += 1;
                match self.env.vars.get(c.encode_utf8(&mut [0; 4]) as &str) {
                    Some(value) => text.push_str(value),
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
        let open = if close == ')' { '(' } else { '{' };
        let mut level = 0usize;
        let mut inner = String::new();
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match c {
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

    /// A command inside this one (`$(...)`): read, with this line's variables, at one level deeper.
    fn nest(&mut self, inner: &str) {
        let mut nested = Vec::new();
        let mut env = self.env.clone();
        parse_into(inner, &mut env, self.depth + 1, &mut nested);
        self.nested.append(&mut nested);
    }

    /// The body of a here-document opened at this point: the lines after the end of the current line,
    /// up to the line that is `delimiter` (its quotes removed by the word reader already). The body is
    /// taken out of what is left to read, so that the rest of the current line reads on as commands.
    fn take_here_body(&mut self, delimiter: &str, strip_tabs: bool) -> String {
        let Some(newline) = (self.at..self.chars.len()).find(|&i| self.chars[i] == '\n') else {
            return String::new();
        };
        let start = newline + 1;
        let mut at = start;
        let mut lines = Vec::new();
        while at < self.chars.len() {
            let end = (at..self.chars.len())
                .find(|&i| self.chars[i] == '\n')
                .unwrap_or(self.chars.len());
            let line: String = self.chars[at..end].iter().collect();
            at = (end + 1).min(self.chars.len());
            let compared = if strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line.as_str()
            };
            if compared == delimiter {
                break;
            }
            lines.push(compared.to_string());
        }
        self.chars.drain(start..at);
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        let mut env = Env {
            home: Some("/home/u".into()),
            ..Env::default()
        };
        env.vars.insert("HOME".into(), "/home/u".into());
        env
    }

    fn programs(line: &str) -> Vec<Vec<String>> {
        read(line, &env())
            .into_iter()
            .map(|c| c.words.into_iter().map(|w| w.text).collect())
            .collect()
    }

    #[test]
    fn operators_split_commands_and_quotes_join_words() {
        assert_eq!(
            programs("cd 'a b' && echo \"x y\"; ls|wc -l || true & sleep 1"),
            vec![
                vec!["cd", "a b"],
                vec!["echo", "x y"],
                vec!["ls"],
                vec!["wc", "-l"],
                vec!["true"],
                vec!["sleep", "1"],
            ]
        );
        assert_eq!(programs("'r''m' -rf x"), vec![vec!["rm", "-rf", "x"]]);
        assert_eq!(programs("r\\m -rf x"), vec![vec!["rm", "-rf", "x"]]);
        assert_eq!(
            programs("$'\\x72m' -rf x"),
            vec![vec!["rm", "-rf", "x"]],
            "ANSI-C quoting"
        );
    }

    #[test]
    fn home_and_known_variables_are_expanded_and_unknown_ones_marked() {
        let commands = read("rm ~/a $HOME/b ${HOME}/c $NOPE/d ~x", &env());
        let words: Vec<(&str, bool)> = commands[0]
            .words
            .iter()
            .map(|w| (w.text.as_str(), w.known))
            .collect();
        assert_eq!(
            words,
            vec![
                ("rm", true),
                ("/home/u/a", true),
                ("/home/u/b", true),
                ("/home/u/c", true),
                ("$NOPE/d", false),
                ("~x", true)
            ]
        );
        assert_eq!(
            programs("W=~/.config/hookd; rm -rf $W"),
            vec![vec!["rm", "-rf", "/home/u/.config/hookd"]],
            "a variable set on the line is known after it"
        );
    }

    #[test]
    fn redirections_are_read_with_their_targets() {
        let commands = read("echo hi > a 2>>b &>c 2>&1 >&2 < d >|e", &env());
        assert_eq!(commands.len(), 1);
        let redirects: Vec<(bool, &str)> = commands[0]
            .redirects
            .iter()
            .map(|r| (r.writes, r.target.text.as_str()))
            .collect();
        assert_eq!(
            redirects,
            vec![
                (true, "a"),
                (true, "b"),
                (true, "c"),
                (false, "d"),
                (true, "e")
            ]
        );
        assert_eq!(commands[0].words.len(), 2);
    }

    #[test]
    fn nested_commands_are_read_too() {
        assert_eq!(
            programs("echo $(rm -f a) `mv b c` \"$(cat <(ls d))\""),
            vec![
                vec!["rm", "-f", "a"],
                vec!["mv", "b", "c"],
                vec!["ls", "d"],
                vec!["cat", "/dev/fd/ls d"],
                vec!["echo", "$(rm -f a)", "$(mv b c)", "$(cat <(ls d))"],
            ]
        );
        assert_eq!(
            programs("if true; then rm x; fi; for f in a b; do rm $f; done"),
            vec![vec!["true"], vec!["rm", "x"], vec!["rm", "$f"]]
        );
    }

    #[test]
    fn here_documents_are_kept_with_their_command() {
        let commands = read("bash <<'EOF'\nrm -rf x\nEOF\necho done", &env());
        assert_eq!(commands.len(), 3, "{commands:?}");
        assert_eq!(commands[0].program(), "rm", "the shell's script is read");
        assert_eq!(commands[1].program(), "bash");
        assert_eq!(commands[2].program(), "echo");
        let commands = read("bash <<< 'rm -rf y'", &env());
        assert_eq!(commands[0].program(), "rm");
    }

    #[test]
    fn nothing_is_lost_on_odd_input() {
        for line in [
            "", "'", "\"", "$(", "`", "${", "a >", "<<", "\\", "$'\\x", "((", "))", "|||", ";;&",
            "x=1", "2>",
        ] {
            let _ = read(line, &env());
        }
        let deep = "sh -c ".repeat(200) + "x";
        assert!(!read(&deep, &env()).is_empty());
        let nested = "$(".repeat(5000);
        assert!(!read(&nested, &env()).is_empty());
    }
}
