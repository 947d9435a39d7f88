//! What a line is read into: each simple command it could run, with its words, its redirections and
//! where it runs; and what a command gives the next one of a pipeline to read.

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

/// What a command's input is, when the command before it in a pipeline gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Feed {
    /// Known text: what `echo WORDS`, `printf FORMAT ARGS` or `cat <<EOF` print.
    Text(String),
    /// What cannot be known: the command that prints it, as written (`curl x`).
    Unknown(String),
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
pub(crate) fn assignment(text: &str) -> Option<(&str, &str)> {
    let (name, value) = text.split_once('=')?;
    let name = name.strip_suffix('+').unwrap_or(name);
    is_name(name).then_some((name, value))
}

/// A shell variable's name: a letter or `_`, then letters, digits and `_`.
pub(crate) fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
