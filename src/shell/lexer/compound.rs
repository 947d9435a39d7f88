//! The lexer's reading of what a compound command holds without taking commands from it: arithmetic,
//! `[[ ]]` tests, a function's body, here-documents.

use super::cursor::Lexer;
use super::token::{RedirectKind, Token};

impl Lexer<'_, '_> {
    /// `(( ... ))` at a command's start (its `((` read): arithmetic, read up to its `))`.
    pub(crate) fn arithmetic_command(&mut self) {
        let inner = self.balanced(')');
        if self.peek(0) == Some(')') {
            self.at += 1;
        }
        self.nest_substitutions(&inner);
    }

    /// An array's values after `NAME=(` (read): the text up to its `)`, the commands inside it read.
    pub(crate) fn array_values(&mut self) -> String {
        let inner = self.balanced(')');
        self.nest_substitutions(&inner);
        inner
    }

    /// `[[ ... ]]` (its `[[` read): a test, no program; its `&&`, `<`, `(` are its own, and the commands
    /// inside its words are read. It ends at `]]`, or at a `;` or newline that a test cannot hold.
    pub(crate) fn skip_test(&mut self) {
        loop {
            self.skip_blanks(false);
            match self.peek(0) {
                None | Some(';' | '\n') => break,
                Some('&' | '|' | '(' | ')' | '<' | '>' | '!') => self.at += 1,
                Some(_) => {
                    let start = self.at;
                    let word = self.word();
                    self.pending.clear();
                    if word.is_some_and(|w| w.text == "]]") {
                        break;
                    }
                    if self.at == start {
                        self.at += 1;
                    }
                }
            }
        }
    }

    /// After `NAME (`: the `)` of a function's definition, read when it follows.
    pub(crate) fn close_paren_follows(&mut self) -> bool {
        self.skip_blanks(false);
        if self.peek(0) == Some(')') {
            self.at += 1;
            return true;
        }
        false
    }

    /// After `function NAME`: an optional `()`.
    pub(crate) fn skip_empty_parens(&mut self) {
        self.skip_blanks(false);
        let at = self.at;
        if self.peek(0) == Some('(') {
            self.at += 1;
            self.skip_blanks(false);
            if self.peek(0) == Some(')') {
                self.at += 1;
                return;
            }
        }
        self.at = at;
    }

    /// A function's body (`{ ...; }` or `( ... )`), read past, as text: no command is taken from it
    /// here. `None` when what follows is neither (then it is read as commands).
    pub(crate) fn compound_body(&mut self) -> Option<String> {
        self.skip_blanks(true);
        match self.peek(0)? {
            '(' => {
                // Kept in its parentheses: the body runs in a subshell.
                self.at += 1;
                Some(format!("({})", self.balanced(')')))
            }
            '{' => {
                self.at += 1;
                let start = self.at;
                let dry = std::mem::replace(&mut self.dry, true);
                let mut level = 0usize;
                let mut command_start = true;
                let body = loop {
                    let before = self.at;
                    match self.next_token() {
                        Token::End => break self.chars[start..].iter().collect(),
                        Token::Word(word) if command_start && word.text == "{" => level += 1,
                        Token::Word(word) if command_start && word.text == "}" => {
                            if level == 0 {
                                break self.chars[start..before].iter().collect();
                            }
                            level -= 1;
                            command_start = false;
                        }
                        Token::Word(word) => {
                            command_start = command_start
                                && matches!(
                                    word.text.as_str(),
                                    "then"
                                        | "do"
                                        | "else"
                                        | "elif"
                                        | "if"
                                        | "while"
                                        | "until"
                                        | "!"
                                );
                        }
                        Token::Separator(_) => command_start = true,
                        Token::Redirect { kind, .. } => {
                            let target = self.next_word();
                            if let (RedirectKind::HereDoc { strip_tabs }, Some(target)) =
                                (kind, target)
                            {
                                self.take_here_body(&target.text, strip_tabs);
                            }
                            command_start = false;
                        }
                    }
                };
                self.pending.clear();
                self.dry = dry;
                Some(body)
            }
            _ => None,
        }
    }

    /// Where the next newline from `from` is (see [`Lexer::newline_cache`]).
    fn next_newline(&mut self, from: usize) -> Option<usize> {
        if let Some((searched, found)) = self.newline_cache
            && from >= searched
            && found.is_none_or(|at| from <= at)
        {
            return found;
        }
        let found = (from..self.chars.len()).find(|&i| self.chars[i] == '\n');
        self.newline_cache = Some((from, found));
        found
    }

    /// The body of a here-document opened at this point: the lines after the end of the current line
    /// (and after the bodies taken before it), up to the line that is `delimiter` (its quotes removed
    /// by the word reader already). The line reads on after its end; the next newline goes past the
    /// bodies.
    pub(crate) fn take_here_body(&mut self, delimiter: &str, strip_tabs: bool) -> String {
        let start = match self.here_resume {
            Some(resume) if resume > self.at => resume,
            _ => match self.next_newline(self.at) {
                Some(newline) => newline + 1,
                None => return String::new(),
            },
        };
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
        self.here_resume = Some(at);
        lines.join("\n")
    }
}
