//! A shell command line read as a shell would run it, for judging what it does without running it.
//!
//! A guard reads an agent's `Bash` command to tell what it would touch. Reading it by splitting on spaces
//! misses what a shell does, and each thing it misses is a way to disguise a command. This module reads
//! into a flat list of [`Command`]s every simple command the line could run, wherever it would run, in
//! the order it runs (a command nested in another comes just before it), each with its words after
//! quote removal and the expansions it can know, its redirections, and where it runs:
//!
//! - the grammar (`parse.rs`, `lexer.rs`): quotes, escapes and `$'...'`; `;`, `&&`, `||`, `|`, `&`;
//!   redirections; `$(...)`, backquotes and `<(...)` (a backquote inside single quotes is a character);
//!   `( )`, `{ }`, `if`, `while`, `until`, `for`, `case`, `[[ ]]`; arithmetic (`$(( ))`, `$[ ]`, `(( ))`),
//!   which runs no program but the commands inside it; here-documents and here-strings; variables set
//!   on the line (`W=~/x; rm $W`), unquoted ones split into words (`W='rm -rf'; $W /`), `"$@"`; brace
//!   expansion (`braces.rs`); functions, whose body is read where each call is (one level deeper, with
//!   the call's arguments as `$1`...), never where it is defined, and not again inside itself;
//! - where each command runs: [`Command::subshell`] (a `cd` there does not move what follows) and
//!   [`Command::conditional`] (it may not run), for a judge that follows the working folder;
//! - commands that run another ([`unwrap`]): `sudo`, `doas`, `env` (its options, `-S`, `-C`), `nice`,
//!   `ionice`, `timeout`, `stdbuf`, `nohup`, `setsid`, `chroot`, `busybox`, `command`, `builtin`,
//!   `exec`, `time`, `npx`, `uv run`, `bundle exec` and their kind, `eval`, `watch`, `trap`, `find
//!   -exec`/`-execdir`/`-ok`, `xargs` and `parallel` (with the arguments they are given, when known:
//!   `printf / | xargs rm -rf`, `parallel rm ::: / ~`),
//!   shells given a script by `-c` (with `$0`, `$1`, `"$@"`), a here-document, or a pipe from `echo` or
//!   `printf` (`echo rm -rf / | sh`), `$SHELL -c`;
//! - code given to interpreters ([`interpreters`]): awk's `system()` and `print | "sh"`, `python -c`,
//!   `node -e`, `perl -e`, `ruby -e`, `php -r`, `deno eval`, `bun -e`, `lua -e` and code fed to them:
//!   the shell calls in it read as commands, and deletes made without a shell (`shutil.rmtree(P)`,
//!   `fs.rmSync(P, {recursive: true})`) as the `rm` they amount to.
//!
//! It is a reader for judging, not a shell: it never fails and never panics (what it cannot read it
//! reads as words), its work on any line is bounded (a depth, [`MAX_DEPTH`]; a number of names; and a
//! budget of work per character, past which one command says the rest could not be read), and where it
//! cannot know a word (an unknown variable, a command's output) it says so ([`Word::known`]), and where
//! it cannot know what runs (the program is a variable, a script comes from the network or from input:
//! `$CMD x`, `curl x | sh`, `xargs bash`, `source <(curl x)`, `python3 -c "os.system(cmd)"`) it gives a
//! command that says why ([`Command::unknown_from`]), so that a judge can take the safe side.
//!
//! It is written here rather than taken from a crate because no crate reads shell this way:
//! `shell-words` and `shlex` split one simple command's words and stop at operators and substitutions;
//! the shell-grammar parsers give a syntax tree, but not what a wrapper (`xargs`, `sh -c`, `find -exec`,
//! `env -S`), a function's call or an interpreter's code runs, which are what a disguised command hides
//! behind, and which are most of this module.

mod braces;
pub mod interpreters;
mod lexer;
mod parse;
mod printed;
pub mod unwrap;

use std::cell::Cell;
use std::collections::HashMap;

pub(crate) use parse::parse_into;

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

/// One simple command: its words (the program first) and redirections, and where it runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Command {
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
    /// Its stdin is a here-document or here-string, with this text.
    pub here: Option<String>,
    /// Feeds its output to the next command (`|`).
    pub piped: bool,
    /// Nested this many levels (inside `$(...)`, `sh -c`, a function's body, ...).
    pub depth: usize,
    /// Its arguments are not all on the line: more come from its input (`xargs rm`, `parallel`).
    pub fed: bool,
    /// It runs in a process of its own, so that a `cd` in it does not move what follows on the line:
    /// inside `( )`, `$( )`, backquotes or `<( )`, a part of a pipeline of more than one command, a
    /// background (`&`) job, or run by another program (a wrapper such as `sudo` or `xargs`, `sh -c`, an
    /// interpreter's code, a `trap`). Not so in a `{ }` group, a function's body, `eval`, `source`,
    /// `command`, `builtin` or `time`, which run in the shell itself.
    pub subshell: bool,
    /// It may not run even though the line does: after `&&` or `||`, in the branches of `if`, the
    /// bodies of `while`, `until`, `for` and `select`, the arms of `case`, under `find -exec`,
    /// `xargs`, `parallel` or a `trap`. A `cd` that is conditional leaves the folder uncertain.
    pub conditional: bool,
    /// What runs cannot be known, and why: the program word is an unknown variable or a command's
    /// output (`$CMD x`, `$(cat f) x`), or the command stands for a script that comes from input or
    /// elsewhere (`curl x | sh`, `xargs bash`, `cat x | python3`, `source <(curl x)`, `python -c
    /// "os.system(cmd)"`), or the line was too deep or too long to read. Its words say what is known
    /// (the program word is then not [`Word::known`]). `None` for a command read in full.
    pub unknown_from: Option<String>,
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

    /// The program it runs (without its folder) and its arguments, past the assignments before them
    /// (`GIT_DIR=x git ...`), which the reader leaves in place inside a group, an `if` or after `sudo`.
    pub fn run_words(&self) -> Option<(&str, &[Word])> {
        let first = self
            .words
            .iter()
            .position(|w| assignment(&w.text).is_none())?;
        let text = self.words[first].text.as_str();
        Some((
            text.rsplit('/').next().unwrap_or(text),
            &self.words[first + 1..],
        ))
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
    /// Functions defined on the line, by name: their bodies, read where they are called (and not
    /// where they are defined).
    pub functions: HashMap<String, String>,
    /// The positional parameters (`$1`..., `"$@"`), when they are known: inside `sh -c SCRIPT NAME
    /// ARGS` or a function's call.
    pub args: Option<Vec<Word>>,
    /// The functions being called, innermost last: a call of one of them again is not read again,
    /// so that recursion ends.
    pub calling: Vec<String>,
    /// The line, read at its own level, ended inside a quote it opened (`rm -rf x 'y`): a shell
    /// refuses it as written, and what it was meant to run cannot be told.
    pub unclosed_quote: bool,
}

/// How many variables and functions the line may set, each: a line that sets more is not followed
/// past it (a variable it does not keep reads as unknown; a function's body is read where it is
/// defined, as if it ran there).
pub(crate) const MAX_NAMES: usize = 1024;

impl Env {
    /// A copy for what runs apart (a subshell, a wrapper's command), its cost taken from `budget`:
    /// with too little left, one that knows nothing but the home folder.
    pub(crate) fn fork(&self, budget: &Budget) -> Env {
        if !budget.spent() && budget.spend(self.weight()) {
            return self.clone();
        }
        Env {
            home: self.home.clone(),
            ..Env::default()
        }
    }

    /// Whether a variable named `name` may be set (see [`MAX_NAMES`]).
    pub(crate) fn may_set(&self, name: &str) -> bool {
        self.vars.contains_key(name)
            || self.unknown.contains_key(name)
            || self.vars.len() + self.unknown.len() < MAX_NAMES
    }

    /// What cloning it costs, roughly: its names and values.
    pub(crate) fn weight(&self) -> usize {
        let map = |m: &HashMap<String, String>| {
            m.iter().map(|(k, v)| k.len() + v.len() + 8).sum::<usize>()
        };
        map(&self.vars) + map(&self.unknown) + map(&self.functions) + 64
    }
}

/// Reads `line` into every simple command it could run (see the module's comment), wrappers unwrapped.
pub fn read(line: &str, env: &Env) -> Vec<Command> {
    let mut env = env.clone();
    let mut out = Vec::new();
    let budget = Budget::new(
        line.len()
            .saturating_mul(WORK_PER_CHAR)
            .saturating_add(MIN_WORK),
    );
    let ctx = Ctx {
        subshell: false,
        conditional: false,
        budget: &budget,
    };
    parse_into(line, &mut env, 0, &mut out, ctx);
    if env.unclosed_quote {
        out.push(Command {
            words: vec![Word {
                text: "(a line left inside a quote)".into(),
                known: false,
                glob: false,
            }],
            unknown_from: Some(UNCLOSED_QUOTE.into()),
            ..Command::default()
        });
    }
    out
}

/// What a line that ends inside a quote it opened is said to be, as the last command [`read`] gives.
pub const UNCLOSED_QUOTE: &str = "the line ends inside a quote it opened: a shell refuses it as written, and what it was meant to run cannot be told";

/// The commands whose output the command at `at` of `commands` (as [`read`] gives them) reads through
/// a pipe, nearest first: the parts of its pipeline before it, past the commands nested in them or in
/// it (`echo x | sh` reads `rm -rf /` from `echo` even though the `rm` it runs comes between them).
pub fn feeders(commands: &[Command], at: usize) -> Vec<&Command> {
    let Some(command) = commands.get(at) else {
        return Vec::new();
    };
    commands[..at]
        .iter()
        .rev()
        .filter(|c| c.depth <= command.depth)
        .take_while(|c| c.piped && c.depth == command.depth)
        .collect()
}

/// How much work (characters read, expanded or copied) reading a line may take per character of it,
/// besides [`MIN_WORK`]: what nests reads its text again (`sh -c "sh -c '...'"`), a function's body is
/// read at each call, a variable's value at each use. Past it, what is left is read as a command that
/// cannot be known: a line built to multiply the work (`f(){ f1;f1; }`, `$W $W $W` with a long `W`)
/// costs at most this much, and a judge sees that it could not be read.
const WORK_PER_CHAR: usize = 8;
const MIN_WORK: usize = 1 << 20;

/// The work left for reading one line (see [`WORK_PER_CHAR`]).
#[derive(Debug)]
pub(crate) struct Budget {
    left: Cell<usize>,
    /// A command that says the line was too much to read was given already (one is enough).
    told: Cell<bool>,
}

impl Budget {
    fn new(work: usize) -> Budget {
        Budget {
            left: Cell::new(work),
            told: Cell::new(false),
        }
    }

    /// Nothing is left.
    pub(crate) fn spent(&self) -> bool {
        self.left.get() == 0
    }

    /// The first time it is asked after all was spent: true (then a command says so).
    pub(crate) fn tell(&self) -> bool {
        !self.told.replace(true)
    }

    /// Takes `work` from what is left: false (and nothing left) when there was not that much.
    pub(crate) fn spend(&self, work: usize) -> bool {
        let left = self.left.get();
        if left < work {
            self.left.set(0);
            return false;
        }
        self.left.set(left - work);
        true
    }
}

/// Where the commands being read run: what every command read in this context inherits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx<'b> {
    pub subshell: bool,
    pub conditional: bool,
    pub budget: &'b Budget,
}

impl<'b> Ctx<'b> {
    /// The context of what `command` runs in a process of its own (`sh -c`, `sudo`, ...).
    pub(crate) fn under(self, command: &Command) -> Ctx<'b> {
        Ctx {
            subshell: true,
            conditional: command.conditional,
            budget: self.budget,
        }
    }

    /// The context of what `command` runs in the shell itself (`eval`, a function's body).
    pub(crate) fn within(self, command: &Command) -> Ctx<'b> {
        Ctx {
            subshell: command.subshell,
            conditional: command.conditional,
            budget: self.budget,
        }
    }
}

/// A command that stands for what cannot be known: one word, `text` (cut short), not known.
pub(crate) fn unknowable(text: &str, why: String, depth: usize, ctx: Ctx<'_>) -> Command {
    let mut end = text.len().min(256);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Command {
        words: vec![Word {
            text: text[..end].to_string(),
            known: false,
            glob: false,
        }],
        depth,
        subshell: ctx.subshell,
        conditional: ctx.conditional,
        unknown_from: Some(why),
        ..Command::default()
    }
}

/// A word as written, known, with no pattern in it.
pub(crate) fn plain_word(text: &str) -> Word {
    Word {
        text: text.to_string(),
        known: true,
        glob: false,
    }
}

/// `NAME=value` as its two parts, when `text` is an assignment.
fn assignment(text: &str) -> Option<(&str, &str)> {
    let (name, value) = text.split_once('=')?;
    let name = name.strip_suffix('+').unwrap_or(name);
    is_name(name).then_some((name, value))
}

/// A shell variable's name: a letter or `_`, then letters, digits and `_`.
fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests;
