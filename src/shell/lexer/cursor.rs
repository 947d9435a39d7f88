//! The lexer's state: the line as characters and its place in it, the variables it expands, where
//! what it reads runs, and what it found nested in the words read so far. Read and moved by the lexer
//! (`lexer.rs`) and its reading of compound commands (`compound.rs`).

use std::collections::VecDeque;

use crate::shell::command::{Command, Word};
use crate::shell::context::{Ctx, Env};

/// Reads a line into tokens, one at a time, for the parser.
pub(crate) struct Lexer<'e, 'b> {
    pub(super) chars: Vec<char>,
    pub(super) at: usize,
    pub(crate) env: &'e mut Env,
    pub(super) depth: usize,
    pub(super) ctx: Ctx<'b>,
    /// What is read now may not run (set by the parser): the commands inside its words inherit it.
    pub(crate) conditional: bool,
    /// Commands found inside the words read so far (`$(...)`), run before the command that holds them.
    pub(super) nested: Vec<Command>,
    /// The words a brace expansion or a split made beyond its first (`a{b,c}` is `ab ac`), given out
    /// next.
    pub(super) pending: VecDeque<Word>,
    /// Where the line goes on after the here-documents taken so far: the next newline jumps there.
    pub(super) here_resume: Option<usize>,
    /// The last search for a newline: from where, and what it found (a line of many `<<X` must not
    /// search the rest of the line for each).
    pub(super) newline_cache: Option<(usize, Option<usize>)>,
    /// Byte ranges of the word being read that came from unquoted expansions: split there at blanks.
    pub(super) splits: Vec<(usize, usize)>,
    /// How many arithmetic expressions this one is inside (`$(( $(( ... ))`): bounded.
    pub(super) arithmetic: usize,
    /// Reading only to find where something ends (a function's body): no command is taken from it.
    pub(super) dry: bool,
}
