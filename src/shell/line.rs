//! A whole line read: where reading starts ([`read`]), with its budget and the grammar's entries, and
//! what the commands it gives say of one another ([`feeders`]).

use crate::shell::command::{Command, Word};
use crate::shell::context::{Budget, Ctx, Env, Grammar};
use crate::shell::{parse, unwrap};

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
        grammar: Grammar {
            parse_into: parse::parse_into,
            unwrap_into: unwrap::unwrap_into,
        },
    };
    parse::parse_into(line, &mut env, 0, &mut out, ctx);
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
