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
mod command;
mod context;
mod input;
pub mod interpreters;
mod lexer;
mod line;
mod parse;
pub mod unwrap;

pub use command::{Command, Redirect, Word};
pub use context::{Env, MAX_DEPTH, MAX_VALUE};
pub use line::{UNCLOSED_QUOTE, feeders, read};

#[cfg(test)]
mod tests;
