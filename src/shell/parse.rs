//! The parser: tokens into commands, with the compound commands that say where each runs (`( )`, `{ }`,
//! `if`, loops, `case`, `&&`/`||`, pipelines, `&`) and the functions defined on the line.

use super::command::{Command, Feed, Redirect, Word, assignment};
use super::context::{Ctx, Env, MAX_DEPTH, MAX_NAMES, positional, set_variable, unknowable};
use super::input::feed_of;
use super::lexer::{Lexer, RedirectKind, Sep, Token};
use super::unwrap;

/// How deep compound commands may nest (`{ { { ...`) before what is deeper is read as of that level.
const MAX_LEVELS: usize = 1024;

/// What kind of list a level of the parser reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Top,
    /// `{ ... }`
    Group,
    /// `( ... )`
    Subshell,
    /// `if ... fi`
    If,
    /// `while`, `until`, `for`, `select` ... `done`
    Loop,
    /// `case ... esac`
    Case,
}

/// One level of lists: the line, or the inside of a compound command.
struct Level {
    kind: Kind,
    /// What it holds may not run (a branch, a loop's body, a case's arm).
    conditional: bool,
    /// What it holds runs in a subshell.
    subshell: bool,
    /// The levels around it make what it holds conditional, or run in a subshell.
    outer_conditional: bool,
    outer_subshell: bool,
    /// Where in `out` the and-or list being read began (a `&` sends it all to the background).
    list_start: usize,
    /// Where in `out` the pipeline being read began.
    pipe_start: usize,
    /// The pipeline being read has more than one part.
    in_pipe: bool,
    /// Where in `out` the commands marked as a pipeline's end.
    marked: usize,
    /// A `&&` or `||` was read in the list: what follows may not run.
    after_and_or: bool,
    /// In a `case`: reading a pattern, up to its `)`.
    case_pattern: bool,
    /// What the previous part of the pipeline gives the next one's input.
    feed: Option<Feed>,
    /// A `for` loop over several known words: its body is read again for each after the first.
    replay: Option<Replay>,
}

/// A loop whose body is read once per value of its variable: the first value as the body is read, the
/// others again at its `done` (`for d in ~ /; do rm -rf "$d"; done` deletes both).
struct Replay {
    name: String,
    /// The values after the first.
    values: Vec<String>,
    /// Where the body begins in the line (after the header's separator).
    body_start: usize,
}

/// How many values of a loop's list are read: a loop over more is read for these.
const MAX_LOOP_VALUES: usize = 16;

impl Level {
    fn new(kind: Kind, at: usize) -> Level {
        Level {
            kind,
            conditional: false,
            subshell: kind == Kind::Subshell,
            outer_conditional: false,
            outer_subshell: false,
            list_start: at,
            pipe_start: at,
            in_pipe: false,
            marked: at,
            after_and_or: false,
            case_pattern: kind == Kind::Case,
            feed: None,
            replay: None,
        }
    }
}

/// Parses `line` at `depth`, appending its commands to `out` in the order they run (nested ones
/// before the command that holds them).
pub(crate) fn parse_into(
    line: &str,
    env: &mut Env,
    depth: usize,
    out: &mut Vec<Command>,
    ctx: Ctx<'_>,
) {
    if depth > MAX_DEPTH {
        // Too deep to read further: what is left is one command that cannot be known.
        out.push(unknowable(
            line,
            "nested too deep to read".into(),
            depth,
            ctx,
        ));
        return;
    }
    if !ctx.budget.spend(line.len()) {
        // One command says that the line was too much to read; what is left is not read.
        if ctx.budget.tell() {
            out.push(unknowable(line, "too much to read".into(), depth, ctx));
        }
        return;
    }
    let mut parser = Parser {
        lexer: Lexer::new(line, env, depth, ctx),
        stack: vec![Level::new(Kind::Top, out.len())],
        current: Command::default(),
        depth,
        ctx,
        function: false,
        open: [0; 6],
        timed: false,
    };
    parser.run(out);
}

struct Parser<'e, 'b> {
    lexer: Lexer<'e, 'b>,
    stack: Vec<Level>,
    current: Command,
    depth: usize,
    ctx: Ctx<'b>,
    /// After the reserved word `function`: its name comes next.
    function: bool,
    /// How many levels of each kind are open.
    open: [usize; 6],
    /// The reserved word `time` was just read (its `-p` may follow).
    timed: bool,
}

impl Parser<'_, '_> {
    fn level(&mut self) -> &mut Level {
        // The stack always holds the top level: it is never popped.
        let last = self.stack.len() - 1;
        &mut self.stack[last]
    }

    fn top(&self) -> &Level {
        &self.stack[self.stack.len() - 1]
    }

    fn conditional(&self) -> bool {
        let top = self.top();
        self.ctx.conditional || top.outer_conditional || top.conditional || top.after_and_or
    }

    fn subshell(&self) -> bool {
        let top = self.top();
        self.ctx.subshell || top.outer_subshell || top.subshell
    }

    /// At the start of a command: a reserved word here opens or closes a compound command.
    fn command_position(&self) -> bool {
        self.current.words.is_empty() && self.current.redirects.is_empty()
    }

    fn run(&mut self, out: &mut Vec<Command>) {
        loop {
            self.lexer.conditional = self.conditional();
            let token = self.lexer.next_token();
            let in_pattern = self.level().kind == Kind::Case && self.level().case_pattern;
            if in_pattern {
                // `case w in a|b) ...`: patterns are not commands; `esac` may end an empty case.
                match token {
                    Token::End => break,
                    Token::Word(word) if word.text == "esac" => self.close(Kind::Case, out),
                    Token::Separator(Sep::Close) => self.level().case_pattern = false,
                    _ => {}
                }
                continue;
            }
            match token {
                Token::End => {
                    self.end_command(false, out);
                    self.end_list(out);
                    break;
                }
                Token::Separator(sep) => self.separator(sep, out),
                Token::Redirect { writes, kind } => self.redirect(writes, kind),
                Token::Word(word) => self.word(word, out),
            }
        }
        // Whatever is still open ends with the line.
        while self.stack.len() > 1 {
            self.pop(out);
        }
        self.lexer.flush_nested(out);
    }

    fn separator(&mut self, sep: Sep, out: &mut Vec<Command>) {
        match sep {
            Sep::Pipe => self.end_command(true, out),
            Sep::AndIf | Sep::OrIf => {
                self.end_command(false, out);
                let at = out.len();
                let level = self.level();
                level.after_and_or = true;
                level.pipe_start = at;
                level.in_pipe = false;
            }
            Sep::Semi | Sep::Newline => {
                self.end_command(false, out);
                self.end_list(out);
            }
            Sep::DoubleSemi => {
                self.end_command(false, out);
                self.end_list(out);
                if self.level().kind == Kind::Case {
                    self.level().case_pattern = true;
                }
            }
            Sep::Amp => {
                self.end_command(false, out);
                let start = self.level().list_start;
                for command in out.get_mut(start..).unwrap_or(&mut []) {
                    command.subshell = true;
                }
                self.end_list(out);
            }
            Sep::Open => {
                if let Some(last) = self.current.words.last_mut()
                    && last.text.ends_with('=')
                    && assignment(&last.text).is_some()
                {
                    // `arr=(a b c)`: an array's values, not a command; kept as a value not known.
                    let values = self.lexer.array_values();
                    last.text.push('(');
                    last.text.push_str(&values);
                    last.text.push(')');
                    last.known = false;
                } else if let Some(name) = self.function_name_before_parens() {
                    self.define(name, out);
                } else if self.command_position() {
                    self.push(Kind::Subshell, out);
                }
            }
            Sep::Arith => {
                if self.command_position()
                    || self.current.words.first().is_some_and(|w| w.text == "for")
                {
                    // `(( i++ ))`, `for ((...))`: arithmetic, no program; a command inside it is
                    // read.
                    self.lexer.arithmetic_command();
                } else {
                    self.push(Kind::Subshell, out);
                }
            }
            Sep::Close => {
                self.end_command(false, out);
                self.close(Kind::Subshell, out);
            }
        }
    }

    fn redirect(&mut self, writes: bool, kind: RedirectKind) {
        let target = self.lexer.next_word();
        match kind {
            RedirectKind::File => {
                if let Some(target) = target {
                    self.current.redirects.push(Redirect { writes, target });
                }
            }
            RedirectKind::HereDoc { strip_tabs } => {
                if let Some(target) = target {
                    let body = self.lexer.take_here_body(&target.text, strip_tabs);
                    match &mut self.current.here {
                        Some(here) => {
                            here.push('\n');
                            here.push_str(&body);
                        }
                        None => self.current.here = Some(body),
                    }
                }
            }
            RedirectKind::HereString => {
                self.current.here = target.map(|w| w.text);
            }
            RedirectKind::Duplicate => {}
        }
    }

    fn word(&mut self, word: Word, out: &mut Vec<Command>) {
        if self.function {
            // `function NAME`: its body follows, after an optional `()`.
            self.function = false;
            self.lexer.skip_empty_parens();
            self.define(word.text, out);
            return;
        }
        if self.current.words.len() == 2
            && self.current.words[0].text == "case"
            && word.text == "in"
        {
            // `case WORD in`: its arms follow.
            self.current = Command::default();
            self.lexer.flush_nested(out);
            self.push(Kind::Case, out);
            self.level().conditional = true;
            return;
        }
        if !self.command_position() {
            self.current.words.push(word);
            return;
        }
        let timed = std::mem::take(&mut self.timed);
        let kind = self.level().kind;
        match word.text.as_str() {
            "{" => self.push(Kind::Group, out),
            "}" => self.close(Kind::Group, out),
            "if" => self.push(Kind::If, out),
            "then" | "elif" | "else" if kind == Kind::If => self.level().conditional = true,
            "fi" => self.close(Kind::If, out),
            "while" | "until" => self.push(Kind::Loop, out),
            "for" | "select" => {
                self.push(Kind::Loop, out);
                self.current.words.push(word);
            }
            "do" if kind == Kind::Loop => self.level().conditional = true,
            "done" => {
                let replay = self
                    .stack
                    .iter_mut()
                    .rev()
                    .find(|level| level.kind == Kind::Loop)
                    .and_then(|level| level.replay.take());
                let body_end = self.lexer.position();
                self.close(Kind::Loop, out);
                if let Some(replay) = replay {
                    self.replay(replay, body_end, out);
                }
            }
            "esac" => self.close(Kind::Case, out),
            "time" => self.timed = true,
            // `time -p CMD`: its option, not a program.
            "-p" if timed => {}
            "!" | "coproc" | "then" | "elif" | "else" | "do" => {}
            "[[" => self.lexer.skip_test(),
            "function" => self.function = true,
            _ => self.current.words.push(word),
        }
    }

    /// `NAME (`, at a `(` just read: the name of a function being defined, when the `)` follows.
    fn function_name_before_parens(&mut self) -> Option<String> {
        let [name] = self.current.words.as_slice() else {
            return None;
        };
        let valid = !name.text.is_empty()
            && name.known
            && name
                .text
                .chars()
                .all(|c| c.is_alphanumeric() || "_-.:".contains(c))
            && self.current.redirects.is_empty();
        if !valid || !self.lexer.close_paren_follows() {
            return None;
        }
        let name = name.text.clone();
        self.current = Command::default();
        Some(name)
    }

    /// A function's body, read where it is defined (its text kept, no command taken from it). Past
    /// [`MAX_NAMES`] functions, the body is read here, as if it ran.
    fn define(&mut self, name: String, out: &mut Vec<Command>) {
        let Some(body) = self.lexer.compound_body() else {
            return;
        };
        let functions = &mut self.lexer.env.functions;
        if functions.contains_key(&name) || functions.len() < MAX_NAMES {
            functions.insert(name, body);
            return;
        }
        let ctx = Ctx {
            subshell: self.subshell(),
            conditional: self.conditional(),
            ..self.ctx
        };
        parse_into(&body, self.lexer.env, self.depth + 1, out, ctx);
    }

    /// Reads a loop's body again for each of its variable's values after the first, as the loop runs
    /// it (each a pass that may not run, in the shell itself).
    fn replay(&mut self, replay: Replay, body_end: usize, out: &mut Vec<Command>) {
        let text = self.lexer.text_between(replay.body_start, body_end);
        let body = text.trim_end().strip_suffix("done").unwrap_or(&text);
        let ctx = Ctx {
            subshell: self.subshell(),
            conditional: true,
            ..self.ctx
        };
        for value in replay.values {
            let mut env = self.lexer.env.fork(self.ctx.budget);
            env.vars.insert(replay.name.clone(), value);
            parse_into(body, &mut env, self.depth + 1, out, ctx);
        }
    }

    fn push(&mut self, kind: Kind, out: &mut Vec<Command>) {
        self.lexer.flush_nested(out);
        if self.stack.len() >= MAX_LEVELS {
            // A line built to nest without end: what is deeper is read as of this level.
            return;
        }
        let mut level = Level::new(kind, out.len());
        level.outer_conditional = self.conditional();
        level.outer_subshell = self.subshell();
        self.open[kind as usize] += 1;
        self.stack.push(level);
    }

    /// A reserved word or `)` that ends a `kind` of compound: closes it (and what it holds that is
    /// still open); one that closes nothing is skipped.
    fn close(&mut self, kind: Kind, out: &mut Vec<Command>) {
        if self.open[kind as usize] == 0 {
            return;
        }
        self.end_command(false, out);
        while self.stack.len() > 1 {
            let top = self.level().kind;
            self.pop(out);
            if top == kind {
                break;
            }
        }
    }

    fn pop(&mut self, out: &[Command]) {
        self.end_list(out);
        if self.stack.len() > 1
            && let Some(level) = self.stack.pop()
        {
            self.open[level.kind as usize] -= 1;
        }
    }

    /// The end of an and-or list (`;`, a newline, `&`, the end of a compound).
    fn end_list(&mut self, out: &[Command]) {
        let at = out.len();
        let level = self.level();
        level.list_start = at;
        level.pipe_start = at;
        level.in_pipe = false;
        level.after_and_or = false;
        level.feed = None;
    }

    /// The end of one command of a pipeline (`piped` when a `|` follows).
    fn end_command(&mut self, piped: bool, out: &mut Vec<Command>) {
        self.current.piped = piped;
        let feed = self.level().feed.take();
        let next_feed = piped.then(|| feed_of(&self.current));
        self.finish(out, feed);
        let at = out.len();
        let level = self.level();
        if piped || level.in_pipe {
            // Every part of a pipeline of more than one runs in a subshell (each marked once).
            let from = level.pipe_start.max(level.marked);
            for command in out.get_mut(from..).unwrap_or(&mut []) {
                command.subshell = true;
            }
            level.marked = at;
        }
        level.feed = next_feed;
        level.in_pipe = piped;
        if !piped {
            level.pipe_start = at;
        }
    }

    /// Ends the command being read: its leading assignments set variables (for the words after them),
    /// a loop's header sets its variable, a function's call reads its body; the command is unwrapped
    /// into `out` after the nested commands its words held.
    fn finish(&mut self, out: &mut Vec<Command>, feed: Option<Feed>) {
        let mut command = std::mem::take(&mut self.current);
        command.depth = self.depth;
        command.subshell = self.subshell();
        command.conditional = self.conditional();
        self.lexer.flush_nested(out);
        let env = &mut *self.lexer.env;
        // Leading assignments: `A=1 B=2 cmd` (for cmd alone) or `A=1` alone (for the rest of the line).
        let assignments = command
            .words
            .iter()
            .take_while(|w| assignment(&w.text).is_some())
            .count();
        if assignments == command.words.len() {
            for word in &command.words {
                set_variable(env, word);
            }
            if command.redirects.is_empty() {
                return;
            }
        }
        command.words.drain(..assignments);
        if matches!(
            command.words.first().map(|w| w.text.as_str()),
            Some("for" | "select")
        ) {
            if let Some((name, values)) = loop_header(env, &command.words) {
                let body_start = self.lexer.position();
                if let Some(level) = self.stack.last_mut().filter(|l| l.kind == Kind::Loop) {
                    level.replay = Some(Replay {
                        name,
                        values,
                        body_start,
                    });
                }
            }
            return;
        }
        if command.words.is_empty() && command.redirects.is_empty() {
            return;
        }
        if let Some(first) = command.words.first()
            && first.known
            && let Some(body) = env.functions.get(&first.text).cloned()
        {
            call(command, &body, env, out, self.ctx);
            return;
        }
        unwrap::unwrap_into(command, env, out, self.ctx, feed.as_ref());
    }
}

/// `for x in a b`, `select x in ...`: the variable is given the first word of the list; the others,
/// given back, are read again at the loop's end (`for f in ~/.config/hookd/*; do rm "$f"`, `for d in ~
/// /; do rm -rf "$d"`: found attacking the guard). A list with a word that cannot be known leaves the
/// variable unknown.
fn loop_header(env: &mut Env, words: &[Word]) -> Option<(String, Vec<String>)> {
    let name = words.get(1).map(|w| w.text.clone())?;
    let list: Vec<&Word> = words.iter().skip(3).collect();
    let listed = words.get(2).is_some_and(|w| w.text == "in");
    match list.split_first() {
        Some((first, rest)) if listed && list.iter().all(|w| w.known) && env.may_set(&name) => {
            env.vars.insert(name.clone(), first.text.clone());
            let rest: Vec<String> = rest
                .iter()
                .take(MAX_LOOP_VALUES - 1)
                .map(|w| w.text.clone())
                .collect();
            (!rest.is_empty()).then_some((name, rest))
        }
        _ => {
            env.vars.remove(&name);
            None
        }
    }
}

/// A function's call: its body read here, one level deeper, in the shell itself, with the call's
/// arguments as `$1`...; then the call itself (its redirections). A function that is being called
/// already (recursion) is not read again.
fn call(command: Command, body: &str, env: &mut Env, out: &mut Vec<Command>, ctx: Ctx<'_>) {
    let name = command.words[0].text.clone();
    if !env.calling.contains(&name) {
        let saved = positional(env, Some(command.args().to_vec()));
        env.calling.push(name);
        parse_into(body, env, command.depth + 1, out, ctx.within(&command));
        env.calling.pop();
        positional(env, saved);
    }
    out.push(command);
}
