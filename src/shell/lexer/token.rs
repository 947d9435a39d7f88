//! What the lexer gives the parser: a word, an operator that ends a command, a redirection.

use crate::shell::command::Word;

/// An operator that ends a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sep {
    /// `;`
    Semi,
    /// `;;`, `;&`, `;;&`: the end of a `case` arm.
    DoubleSemi,
    Newline,
    /// `&`: what came before runs in the background.
    Amp,
    /// `&&`
    AndIf,
    /// `||`
    OrIf,
    /// `|`, `|&`
    Pipe,
    /// `(`
    Open,
    /// `((`: arithmetic, at a command's start.
    Arith,
    /// `)`
    Close,
}

/// One thing read from the line.
pub(crate) enum Token {
    Word(Word),
    Separator(Sep),
    Redirect { writes: bool, kind: RedirectKind },
    End,
}

/// What a redirection points at.
pub(crate) enum RedirectKind {
    File,
    HereDoc {
        strip_tabs: bool,
    },
    HereString,
    /// `>&2`, `2>&1`, `<&-`: another descriptor, no file.
    Duplicate,
}
