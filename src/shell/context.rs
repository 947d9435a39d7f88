//! What reading a line carries as it goes down what nests: the variables it knows ([`Env`]), the work
//! it may still do ([`Budget`]), where the commands being read run ([`Ctx`]), the bounds, and the two
//! entries of the grammar that what nests reads its inside with ([`Grammar`]).
//!
//! The grammar's entries travel in the context rather than being imported: the lexer's `$(...)`, a
//! wrapper's `sh -c`, an interpreter's `os.system(...)` read their inside as a line, and the parser
//! unwraps what each command runs; passed down, each of those files stands below the one that calls
//! it, and none imports the parser back.

use std::cell::Cell;
use std::collections::HashMap;

use crate::shell::command::{Command, Feed, Word, assignment};

/// How deep commands may nest (`sh -c "sh -c '...'"`, `$( $( ) )`) before the rest is read as words: a
/// line built to nest forever must not take the daemon's stack.
pub const MAX_DEPTH: usize = 12;

/// The longest value a variable set on the line keeps; a longer one is read as unknown.
pub const MAX_VALUE: usize = 4096;

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

/// `NAME=value` (or `NAME+=value`) setting a variable for what follows. A value past [`MAX_VALUE`]
/// is not kept: `b=$a$a; c=$b$b; ...` must not double the reader's memory with each word (found
/// attacking the guard).
pub(crate) fn set_variable(env: &mut Env, word: &Word) {
    let Some((name, value)) = assignment(&word.text) else {
        return;
    };
    let may_set = env.may_set(name);
    env.vars.remove(name);
    env.unknown.remove(name);
    if value.len() > MAX_VALUE || !may_set {
        return;
    }
    if word.known {
        env.vars.insert(name.to_string(), value.to_string());
    } else {
        env.unknown.insert(name.to_string(), value.to_string());
    }
}

/// How many positional parameters, and how many bytes of them, are kept as known: more (`set -- "$@"
/// "$@"` again and again doubles them) are kept as one word that cannot be known, so that a line cannot
/// make the reader's time and memory grow without bound.
pub(crate) const MAX_POSITIONAL: usize = 1024;

/// Sets the positional parameters (`$1`..`$9`, `$@`, `$*`, `$#`) to `args` (unset when `None`),
/// giving back what they were.
pub(crate) fn positional(env: &mut Env, args: Option<Vec<Word>>) -> Option<Vec<Word>> {
    let args = args.map(|args| {
        let bytes: usize = args.iter().map(|w| w.text.len()).sum();
        if args.len() <= MAX_POSITIONAL && bytes <= MAX_VALUE * 16 {
            return args;
        }
        vec![Word {
            text: "$@".into(),
            known: false,
            glob: false,
        }]
    });
    for n in 1..=9 {
        env.vars.remove(&n.to_string());
    }
    for name in ["@", "*", "#"] {
        env.vars.remove(name);
    }
    if let Some(args) = &args {
        for (n, word) in args.iter().take(9).enumerate() {
            if word.known {
                env.vars.insert((n + 1).to_string(), word.text.clone());
            }
        }
        env.vars.insert("#".into(), args.len().to_string());
        if args.iter().all(|w| w.known) {
            let all: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
            env.vars.insert("*".into(), all.join(" "));
            env.vars.insert("@".into(), all.join(" "));
        }
    }
    std::mem::replace(&mut env.args, args)
}

/// The work left for reading one line (see [`WORK_PER_CHAR`]).
#[derive(Debug)]
pub(crate) struct Budget {
    left: Cell<usize>,
    /// A command that says the line was too much to read was given already (one is enough).
    told: Cell<bool>,
}

impl Budget {
    pub(crate) fn new(work: usize) -> Budget {
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
    /// The grammar's entries, for what nests to read its inside with.
    pub grammar: Grammar,
}

impl<'b> Ctx<'b> {
    /// The context of what `command` runs in a process of its own (`sh -c`, `sudo`, ...).
    pub(crate) fn under(self, command: &Command) -> Ctx<'b> {
        Ctx {
            subshell: true,
            conditional: command.conditional,
            ..self
        }
    }

    /// The context of what `command` runs in the shell itself (`eval`, a function's body).
    pub(crate) fn within(self, command: &Command) -> Ctx<'b> {
        Ctx {
            subshell: command.subshell,
            conditional: command.conditional,
            ..self
        }
    }
}

/// The grammar's two entries, given to what nests so that it can read its inside: a text read as a line
/// of commands, one level deeper (`parse.rs`'s `parse_into`), and a simple command unwrapped, with
/// what runs inside it read in its place (`unwrap.rs`'s `unwrap_into`). Set once, where a line's
/// reading starts (`line.rs`).
#[derive(Clone, Copy)]
pub(crate) struct Grammar {
    pub parse_into: fn(&str, &mut Env, usize, &mut Vec<Command>, Ctx<'_>),
    pub unwrap_into: fn(Command, &mut Env, &mut Vec<Command>, Ctx<'_>, Option<&Feed>),
}

impl std::fmt::Debug for Grammar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Grammar")
    }
}

/// Reads `text` into `out` as a line of commands at `depth`, with the grammar `ctx` carries.
pub(crate) fn parse_into(
    text: &str,
    env: &mut Env,
    depth: usize,
    out: &mut Vec<Command>,
    ctx: Ctx<'_>,
) {
    (ctx.grammar.parse_into)(text, env, depth, out, ctx);
}

/// Unwraps `command` into `out` (what it runs read in its place), with the grammar `ctx` carries.
pub(crate) fn unwrap_into(
    command: Command,
    env: &mut Env,
    out: &mut Vec<Command>,
    ctx: Ctx<'_>,
    feed: Option<&Feed>,
) {
    (ctx.grammar.unwrap_into)(command, env, out, ctx, feed);
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
