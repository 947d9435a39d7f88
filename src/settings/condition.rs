//! A hook's `if`: a condition on what a tool was called with, in the syntax of Claude Code's permission
//! rules (`Bash(git push *)`, `Edit(src/**)`, `Read(./.env)`, `mcp__github__*`, `WebFetch(domain:x.com)`),
//! so that a hook that guards `git push` is not started for every other shell call. A hook whose `if`
//! does not fit the call is not started at all: it costs nothing, and has no part in the verdict.
//!
//! It means the same for every agent, because it is read on the call as hookd gives it to hooks: each
//! agent's tools under Claude Code's names (Gemini CLI's `run_shell_command` is `Bash`, Codex's
//! `apply_patch` an `Edit` or `Write` naming the patch's files in `tool_input.file_paths`, Copilot CLI's
//! `toolArgs` its `tool_input`), the command line read as the built-in guard reads it
//! ([`crate::guard::call`]), with hookd's own shell reader.
//!
//! - `Tool` alone: every call of the tool. `Edit` stands for every tool that edits a file (`Edit`,
//!   `Write`, `MultiEdit`, `NotebookEdit`), `Read` for those that read one (`Read`, `Grep`, `Glob`, `LS`,
//!   `NotebookRead`), `Bash` for every shell tool (`Bash`, and agents' own names for theirs); another
//!   name is that tool, by hookd's name for it or the agent's own (`agent_tool_name`), with `*` standing
//!   for any characters in it (`mcp__github__*`); `mcp__server` alone is every tool of that server.
//! - `Bash(pattern)`: the whole command line, or any simple command of it (`cd x && git push`, `sh -c
//!   '...'`, `sudo ...`: each command the shell would run, wrappers unwrapped, its program named without
//!   its folder and assignments before it left out), is the pattern, `*` standing for any characters.
//!   A pattern ending in ` *` also fits the command with nothing after it (`git push *` fits `git push`
//!   and `git push origin main`, not `git pushy`); the older `:*` ending means the same. A command hookd
//!   cannot read (its program is a variable, a script piped into a shell) fits every pattern: the hook
//!   is given what hookd could not judge; nor does one with too many options after its program. The
//!   options right after the program may stand before what the pattern names (`git -C x push`), a word
//!   hookd cannot know may be any text (`git $(printf push)`), and case is not told apart (`GIT push`
//!   runs git where the file system does not tell it): each only fits more, so a guard is not slipped
//!   past.
//! - `Edit(path)`, `Read(path)`, `Write(path)`, ...: a path the call names fits, in gitignore's syntax:
//!   `*` within one folder, `**` across folders, `?`, `[abc]`; a pattern without a `/` fits a name at
//!   any depth; a pattern that fits a folder fits everything below it. Where it starts: `//path` from
//!   the root of the file system, `~/path` from the home folder, `/path`, `./path` and `path` from the
//!   call's `cwd` (the agent's project: hookd's settings are not in a project, so Claude Code's "project
//!   root" and "current folder" are both the folder the agent runs in).
//! - `WebFetch(domain:example.com)`: a fetch of that host (`*.example.com`: of any host below it).

use std::path::{Path, PathBuf};

use regex::Regex;
use serde_json::{Map, Value};

use crate::guard::call::{self, Call, Does};

/// The tools that edit a file, all of which an `Edit` rule stands for (as in Claude Code).
const EDIT_TOOLS: &[&str] = &["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// The tools that read a file, all of which a `Read` rule stands for (as in Claude Code, best effort).
const READ_TOOLS: &[&str] = &["Read", "Grep", "Glob", "LS", "NotebookRead"];

/// The tools that name files by path, whose rules take a path pattern.
const PATH_TOOLS: &[&str] = &[
    "Edit",
    "Write",
    "MultiEdit",
    "NotebookEdit",
    "Read",
    "Grep",
    "Glob",
    "LS",
    "NotebookRead",
];

/// A hook's `if`, read.
#[derive(Debug, Clone)]
pub struct Condition {
    /// As the file wrote it, for `check` and messages.
    pub source: String,
    tool: Tools,
    argument: Option<Argument>,
}

/// Which tools a rule is about.
#[derive(Debug, Clone)]
enum Tools {
    /// Every shell tool.
    Shell,
    /// Any of these names.
    Named(&'static [&'static str]),
    /// One name, `*` standing for any characters (an anchored pattern).
    Pattern(Regex),
}

/// What a rule asks of the call's arguments.
#[derive(Debug, Clone)]
enum Argument {
    /// A command line's pattern: anchored, and as its pieces for a command with words that cannot
    /// be known.
    Command { pattern: Regex, glob: Glob },
    /// A path pattern, from where it starts; with, for a search of a folder, the part of it before
    /// its first wildcard (as written, lowercase) and whether it fits a name at any depth.
    Path {
        from: Start,
        pattern: Regex,
        literal: String,
        any_depth: bool,
    },
    /// A fetched address's host: exactly this, or (`*.x`) any host below `x`.
    Domain { host: String, below: bool },
}

/// Where a path pattern starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    Root,
    Home,
    Cwd,
}

/// Why a rule cannot be read: at which character of it (counted in bytes of the rule), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    pub at: usize,
    pub message: String,
}

fn unreadable(at: usize, message: impl Into<String>) -> Unreadable {
    Unreadable {
        at,
        message: message.into(),
    }
}

impl Condition {
    /// Reads a rule; an error says where in it, and what hookd would read there.
    pub fn parse(source: &str) -> Result<Condition, Unreadable> {
        let trimmed_start = source.len() - source.trim_start().len();
        let rule = source.trim();
        if rule.is_empty() {
            return Err(unreadable(
                0,
                "the rule is empty: write a tool (Bash), or a tool and what it is called with (Bash(git push *)); remove `if` to run at every call",
            ));
        }
        let (name, inner) = match rule.find('(') {
            None => (rule, None),
            Some(open) => {
                if !rule.ends_with(')') {
                    return Err(unreadable(
                        trimmed_start + open,
                        format!(
                            "the ( after {} is never closed: a rule is Tool or Tool(what it is called with), such as Bash(git push *)",
                            &rule[..open]
                        ),
                    ));
                }
                (&rule[..open], Some((open, &rule[open + 1..rule.len() - 1])))
            }
        };
        if let Some(bad) = name
            .char_indices()
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*' | '.')))
        {
            return Err(unreadable(
                trimmed_start + bad.0,
                format!(
                    "{:?} cannot be in a tool's name: a rule is Tool or Tool(what it is called with), such as Bash(git push *) or Edit(src/**)",
                    bad.1
                ),
            ));
        }
        if name.is_empty() {
            return Err(unreadable(
                trimmed_start,
                "the rule names no tool: write it as Tool(...), such as Bash(git push *)",
            ));
        }
        let tool = tools(name);
        let argument = match inner {
            None => None,
            Some((open, inner)) => {
                let at = trimmed_start + open + 1;
                Some(argument(name, &tool, inner, at)?)
            }
        };
        Ok(Condition {
            source: source.to_string(),
            tool,
            argument,
        })
    }

    /// Whether the event's call fits the rule: `call` as [`ToolCall::read`] gave it, `None` for an event
    /// that names no tool (or not as a text) although a rule is only on a moment of a tool call. hookd
    /// cannot tell what such an event's call is, so it fits: a guard is not skipped for an agent that
    /// names its tool in a field hookd does not read.
    pub fn fits_event(&self, call: Option<&ToolCall>) -> bool {
        call.is_none_or(|call| self.fits(call))
    }

    /// Whether the call fits the rule.
    pub fn fits(&self, call: &ToolCall) -> bool {
        let tool_fits = match &self.tool {
            Tools::Shell => call.shell_tool,
            Tools::Named(names) => names.contains(&call.tool.as_str()),
            Tools::Pattern(pattern) => {
                pattern.is_match(&call.tool)
                    || call
                        .agent_tool
                        .as_deref()
                        .is_some_and(|own| pattern.is_match(own))
            }
        };
        if !tool_fits {
            return false;
        }
        match &self.argument {
            None => true,
            Some(Argument::Command { pattern, glob }) => {
                call.line
                    .as_deref()
                    .is_some_and(|line| pattern.is_match(line.trim()))
                    || call.commands.iter().any(|command| match command {
                        Simple::Read(texts) => texts.iter().any(|text| pattern.is_match(text)),
                        Simple::Partly(texts) => texts.iter().any(|text| glob.fits(text)),
                        Simple::Unknown => true,
                    })
            }
            Some(Argument::Path {
                from,
                pattern,
                literal,
                any_depth,
            }) => {
                // No cwd given (or not an absolute one): where the rule starts cannot be told.
                if *from == Start::Cwd && call.cwd_unknown && !call.paths.is_empty() {
                    return true;
                }
                let (base, real_base) = match from {
                    Start::Root => (Path::new("/"), None),
                    Start::Home => (call.home.as_path(), call.real_home.as_deref()),
                    Start::Cwd => (call.cwd.as_path(), call.real_cwd.as_deref()),
                };
                let searches = SEARCH_TOOLS.contains(&call.tool.as_str());
                // A search with no path searches the cwd.
                let cwd = [call.cwd.clone()];
                let paths = match searches && call.paths.is_empty() {
                    true => &cwd[..],
                    false => &call.paths[..],
                };
                let search = |base: &Path, path: &Path| {
                    searches && search_may_fit(literal, *any_depth, base, path)
                };
                paths.iter().any(|path| {
                    path_fits(pattern, base, path)
                        || search(base, path)
                        || real_base.is_some_and(|real| {
                            path_fits(pattern, real, path) || search(real, path)
                        })
                })
            }
            Some(Argument::Domain { host, below }) => call.host.as_deref().is_some_and(|h| {
                let h = h.to_ascii_lowercase();
                match below {
                    true => h.ends_with(&format!(".{host}")),
                    false => h == *host,
                }
            }),
        }
    }
}

/// The tools a rule's name stands for.
fn tools(name: &str) -> Tools {
    if name == "Bash" || call::SHELL_TOOLS.contains(&name.to_ascii_lowercase().as_str()) {
        return Tools::Shell;
    }
    match name {
        "Edit" => return Tools::Named(EDIT_TOOLS),
        "Read" => return Tools::Named(READ_TOOLS),
        _ => {}
    }
    // `mcp__server` alone: every tool of the server, as in Claude Code.
    let is_server = name
        .strip_prefix("mcp__")
        .is_some_and(|rest| !rest.is_empty() && !rest.contains("__"));
    let mut pattern = String::from("^");
    for part in name.split('*') {
        if pattern.len() > 1 {
            pattern.push_str(".*");
        }
        pattern.push_str(&regex::escape(part));
    }
    if is_server {
        pattern.push_str("__.*");
    }
    pattern.push('$');
    // Only escaped text and `.*`: it always compiles.
    Tools::Pattern(Regex::new(&pattern).unwrap_or_else(|_| Regex::new("^$").expect("a regex")))
}

/// What a rule asks of the call's arguments, read from the text between its parentheses (at byte `at`
/// of the rule).
fn argument(name: &str, tool: &Tools, inner: &str, at: usize) -> Result<Argument, Unreadable> {
    if inner.trim().is_empty() {
        return Err(unreadable(
            at,
            format!(
                "{name}() says nothing between its parentheses: write {name} alone to fit every call of it"
            ),
        ));
    }
    match tool {
        Tools::Shell => {
            let pattern = command_pattern(inner, at)?;
            Ok(Argument::Command {
                pattern,
                glob: Glob::new(inner),
            })
        }
        _ if PATH_TOOLS.contains(&name) => path_pattern(inner, at),
        _ if name == "WebFetch" => domain(inner, at),
        _ => Err(unreadable(
            at,
            format!(
                "hookd reads what a call is called with only for Bash (a command: Bash(git push *)), the file tools (a path: {}) and WebFetch (domain:example.com); write {name} alone to fit every call of it",
                PATH_TOOLS
                    .iter()
                    .map(|t| format!("{t}(src/**)"))
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// A command line's pattern as an anchored regular expression: `*` any characters, a final ` *` (or
/// the older `:*`) also nothing at all, `\*` a star.
fn command_pattern(inner: &str, at: usize) -> Result<Regex, Unreadable> {
    let (body, open_end) = match inner.strip_suffix(":*") {
        Some(body) => (body, true),
        None => match inner.strip_suffix(" *") {
            Some(body) if !body.ends_with('\\') => (body, true),
            _ => (inner, false),
        },
    };
    // Case is not told apart: on a file system that does not (macOS's), `GIT push` runs git.
    let mut pattern = String::from("(?i)^");
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '*' => pattern.push_str(".*"),
            '\\' => match chars.next() {
                Some((_, escaped)) => pattern.push_str(&regex::escape(&escaped.to_string())),
                None => {
                    return Err(unreadable(
                        at + i,
                        "the pattern ends in a lone \\: write \\* for a star, \\\\ for a backslash",
                    ));
                }
            },
            c => pattern.push_str(&regex::escape(&c.to_string())),
        }
    }
    if open_end {
        pattern.push_str("( .*)?");
    }
    pattern.push('$');
    Regex::new(&pattern).map_err(|e| unreadable(at, format!("the pattern cannot be read ({e})")))
}

/// A path pattern (gitignore's syntax), with where it starts.
fn path_pattern(inner: &str, at: usize) -> Result<Argument, Unreadable> {
    let (from, rest, skipped) = if let Some(rest) = inner.strip_prefix("//") {
        (Start::Root, rest, 2)
    } else if let Some(rest) = inner.strip_prefix("~/") {
        (Start::Home, rest, 2)
    } else if let Some(rest) = inner.strip_prefix("./") {
        (Start::Cwd, rest, 2)
    } else if let Some(rest) = inner.strip_prefix('/') {
        (Start::Cwd, rest, 1)
    } else {
        (Start::Cwd, inner, 0)
    };
    let anchored = skipped > 0;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.is_empty() {
        return Err(unreadable(
            at,
            format!(
                "{inner:?} names no file: write a path or a pattern after it, such as {inner}**"
            ),
        ));
    }
    // A pattern with no `/` but at its end fits a name at any depth (gitignore).
    let any_depth = !anchored && !rest.contains('/');
    // Case is not told apart: on a file system that does not (macOS's), `SRC/a.rs` is `src/a.rs`.
    let mut pattern = String::from("(?i)^");
    if any_depth {
        pattern.push_str("(?:.*/)?");
    }
    glob_into(rest, at + skipped, &mut pattern)?;
    pattern.push('$');
    let pattern = Regex::new(&pattern)
        .map_err(|e| unreadable(at, format!("the pattern cannot be read ({e})")))?;
    let literal = rest
        .split(['*', '?', '[', '\\'])
        .next()
        .unwrap_or_default()
        .to_lowercase();
    Ok(Argument::Path {
        from,
        pattern,
        literal,
        any_depth,
    })
}

/// A gitignore glob, as regular expression text appended to `out`; `at` is its place in the rule.
fn glob_into(glob: &str, at: usize, out: &mut String) -> Result<(), Unreadable> {
    let chars: Vec<(usize, char)> = glob.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (offset, c) = chars[i];
        match c {
            '*' if chars.get(i + 1).is_some_and(|(_, c)| *c == '*') => {
                let at_start = i == 0 || chars[i - 1].1 == '/';
                let slash_after = chars.get(i + 2).is_some_and(|(_, c)| *c == '/');
                let at_end = i + 2 == chars.len();
                if at_start && slash_after {
                    // `**/`: any folders, or none.
                    out.push_str("(?:.*/)?");
                    i += 3;
                    continue;
                }
                if at_end && i > 0 && chars[i - 1].1 == '/' {
                    // `x/**`: everything inside x (the `/` is written already).
                    out.push_str(".+");
                } else {
                    out.push_str(".*");
                }
                i += 2;
                continue;
            }
            '*' => out.push_str("[^/]*"),
            '?' => out.push_str("[^/]"),
            '[' => {
                let close = chars[i + 1..]
                    .iter()
                    .enumerate()
                    .skip(1)
                    .find(|(_, (_, c))| *c == ']')
                    .map(|(n, _)| i + 1 + n);
                let Some(close) = close else {
                    return Err(unreadable(
                        at + offset,
                        "this [ is never closed: [abc] is one of a, b or c; write \\[ for a bracket",
                    ));
                };
                out.push('[');
                for (n, (_, c)) in chars[i + 1..close].iter().enumerate() {
                    match c {
                        '!' | '^' if n == 0 => out.push('^'),
                        '\\' | '[' | ']' | '&' | '~' => {
                            out.push('\\');
                            out.push(*c);
                        }
                        c => out.push(*c),
                    }
                }
                out.push(']');
                i = close + 1;
                continue;
            }
            '\\' => match chars.get(i + 1) {
                Some((_, escaped)) => {
                    out.push_str(&regex::escape(&escaped.to_string()));
                    i += 2;
                    continue;
                }
                None => {
                    return Err(unreadable(
                        at + offset,
                        "the pattern ends in a lone \\: write \\* for a star",
                    ));
                }
            },
            c => out.push_str(&regex::escape(&c.to_string())),
        }
        i += 1;
    }
    Ok(())
}

/// `domain:example.com`, `domain:*.example.com`.
fn domain(inner: &str, at: usize) -> Result<Argument, Unreadable> {
    let Some(host) = inner.strip_prefix("domain:") else {
        return Err(unreadable(
            at,
            format!(
                "WebFetch({inner}): hookd reads a fetch's rule as domain:HOST, such as WebFetch(domain:example.com)"
            ),
        ));
    };
    let host = host.trim().to_ascii_lowercase();
    let (host, below) = match host.strip_prefix("*.") {
        Some(rest) => (rest.to_string(), true),
        None => (host, false),
    };
    if host.is_empty() || host.contains(['/', ' ', '*', ':']) {
        return Err(unreadable(
            at + "domain:".len(),
            format!(
                "{host:?} is not a host name: write domain:example.com, or domain:*.example.com for the hosts below it"
            ),
        ));
    }
    Ok(Argument::Domain { host, below })
}

/// The tools that search a folder (or read a file) by a path: a search of a folder reads what is in it.
const SEARCH_TOOLS: &[&str] = &["Grep", "Glob", "LS"];

/// Whether a search of `path` (a folder, or a file) may read something a path rule fits, from `base`:
/// the search covers `base` whole (it is `base` or above it), or the rule fits a name at any depth
/// below it, or the rule's path (`literal`, before its first wildcard) goes through or past it.
fn search_may_fit(literal: &str, any_depth: bool, base: &Path, path: &Path) -> bool {
    if base.starts_with(path) {
        return true;
    }
    let Ok(relative) = path.strip_prefix(base) else {
        return false;
    };
    if any_depth {
        return true;
    }
    let relative = relative.to_string_lossy().to_lowercase();
    let folder = literal.rsplit_once('/').map_or("", |(folder, _)| folder);
    literal.starts_with(&format!("{relative}/"))
        || (!folder.is_empty() && format!("{relative}/").starts_with(&format!("{folder}/")))
}

/// Whether `path` (absolute, cleaned) fits `pattern` taken from `base`: the path or one of the folders
/// above it, down from `base` (a pattern that fits a folder fits everything in it, as in gitignore).
fn path_fits(pattern: &Regex, base: &Path, path: &Path) -> bool {
    let Ok(relative) = path.strip_prefix(base) else {
        return false;
    };
    let relative = relative.to_string_lossy();
    if relative.is_empty() {
        return false;
    }
    let mut end = relative.len();
    loop {
        if pattern.is_match(&relative[..end]) {
            return true;
        }
        match relative[..end].rfind('/') {
            Some(slash) => end = slash,
            None => return false,
        }
    }
}

/// One simple command of a shell call, as a rule's pattern is matched against it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Simple {
    /// Its program (without its folder) and arguments, one space between them; and the same past each
    /// of the options right after the program (`git -C x push` is also `git x push` and `git push`),
    /// which may stand between a program and the words a pattern names.
    Read(Vec<String>),
    /// The same, with words that cannot be known (`git $(printf push)`): each may be any text.
    Partly(Vec<Vec<Piece>>),
    /// What runs cannot be known.
    Unknown,
}

/// How many places past the options after a program are tried: a command with more options before
/// its first other word is taken as one that cannot be known (it fits every pattern).
const MAX_OPTION_STARTS: usize = 32;

/// How many characters of texts a call's commands may be read into beyond one each: the texts past
/// options (each a copy), and those with words that cannot be known (each matched piece by piece, at
/// a cost of its length times the pattern's, for each hook's `if`). Past it, a command fits every
/// pattern: a line cannot make the reading of it grow without bound.
const MAX_PARTLY: usize = 256 * 1024;

/// A simple command as [`Simple`]; `partly` is what is left of [`MAX_PARTLY`] for the call.
fn simple(command: &crate::shell::Command, partly: &mut usize) -> Simple {
    if command.unknown_from.is_some() {
        return Simple::Unknown;
    }
    let Some((program, args)) = command.run_words() else {
        return Simple::Read(vec![String::new()]);
    };
    let is_option = |n: usize| args[n].text.starts_with('-');
    let mut starts = vec![0];
    if !args.is_empty() && is_option(0) {
        for start in 1..=args.len() {
            // Still among the options: an option, or the word after one (its value, perhaps).
            if !(is_option(start - 1) || (start >= 2 && is_option(start - 2))) {
                break;
            }
            if starts.len() > MAX_OPTION_STARTS {
                return Simple::Unknown;
            }
            starts.push(start);
        }
    }
    // A word that cannot be known, or that the shell matches against file names (`pus?` is `push`
    // where a file is so named), may be any text; so may the words a command is fed (`xargs git < f`).
    let any = |word: &crate::shell::Word| !word.known || word.glob;
    if !command.fed && !args.iter().any(any) {
        let length: usize = program.len() + args.iter().map(|w| w.text.len() + 1).sum::<usize>();
        match partly.checked_sub(length.saturating_mul(starts.len() - 1)) {
            Some(left) => *partly = left,
            None => return Simple::Unknown,
        }
        return Simple::Read(
            starts
                .iter()
                .map(|&start| {
                    std::iter::once(program)
                        .chain(args[start..].iter().map(|w| w.text.as_str()))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect(),
        );
    }
    let mut texts = Vec::with_capacity(starts.len());
    for start in starts {
        let mut text: Vec<Piece> = program.chars().map(Piece::Char).collect();
        for word in &args[start..] {
            text.push(Piece::Char(' '));
            if !word.known {
                text.push(Piece::Any);
            } else if word.glob {
                glob_pieces(&word.text, &mut text);
            } else {
                text.extend(word.text.chars().map(Piece::Char));
            }
        }
        if command.fed {
            text.push(Piece::Any);
        }
        match partly.checked_sub(text.len()) {
            Some(left) => *partly = left,
            None => return Simple::Unknown,
        }
        texts.push(text);
    }
    Simple::Partly(texts)
}

/// A word the shell matches against file names, as pieces: `*`, `?` and `[...]` each any text (more
/// than they can match, and the file names it may become, one or many, or itself when none fits).
/// `x/**` (the reader's word for what `find x` gives `-exec`) is `x` itself too.
fn glob_pieces(word: &str, out: &mut Vec<Piece>) {
    let word = match word.strip_suffix("/**") {
        Some(folder) if !folder.is_empty() => {
            out.extend(folder.chars().map(Piece::Char));
            out.push(Piece::Any);
            return;
        }
        _ => word,
    };
    let mut in_class = false;
    for c in word.chars() {
        match (in_class, c) {
            (true, ']') => in_class = false,
            (true, _) => {}
            (false, '[') => {
                in_class = true;
                out.push(Piece::Any);
            }
            (false, '*' | '?') => out.push(Piece::Any),
            (false, c) => out.push(Piece::Char(c)),
        }
    }
}

/// A piece of a command's text, or of a pattern: a character, or any text at all (a word that cannot
/// be known, a pattern's `*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    Char(char),
    Any,
}

/// A command pattern as pieces, to match a command with words that cannot be known: it fits when some
/// value of those words would make the command fit.
#[derive(Debug, Clone)]
struct Glob {
    body: Vec<Piece>,
    /// It ended in ` *` or `:*`: the body alone fits too.
    open_end: bool,
}

impl Glob {
    /// Read as [`command_pattern`] reads it (which has said already whether it can be read).
    fn new(inner: &str) -> Glob {
        let (body, open_end) = match inner.strip_suffix(":*") {
            Some(body) => (body, true),
            None => match inner.strip_suffix(" *") {
                Some(body) if !body.ends_with('\\') => (body, true),
                _ => (inner, false),
            },
        };
        let mut pieces = Vec::new();
        let mut chars = body.chars();
        while let Some(c) = chars.next() {
            pieces.push(match c {
                '*' => Piece::Any,
                '\\' => Piece::Char(chars.next().unwrap_or('\\')),
                c => Piece::Char(c),
            });
        }
        Glob {
            body: pieces,
            open_end,
        }
    }

    fn fits(&self, text: &[Piece]) -> bool {
        if both_fit(&self.body, text) {
            return true;
        }
        if !self.open_end {
            return false;
        }
        let mut open = self.body.clone();
        open.extend([Piece::Char(' '), Piece::Any]);
        both_fit(&open, text)
    }
}

/// Whether some text fits both `pattern` and `text`, each a run of characters and of any text.
fn both_fit(pattern: &[Piece], text: &[Piece]) -> bool {
    let same = |a: char, b: char| a == b || a.to_lowercase().eq(b.to_lowercase());
    let width = text.len() + 1;
    // fits[i * width + j]: the first i pieces of the pattern and the first j of the text can be the
    // same text.
    let mut fits = vec![false; (pattern.len() + 1) * width];
    fits[0] = true;
    for i in 0..=pattern.len() {
        for j in 0..=text.len() {
            if !fits[i * width + j] {
                continue;
            }
            let p = pattern.get(i).copied();
            let t = text.get(j).copied();
            if p == Some(Piece::Any) {
                fits[(i + 1) * width + j] = true;
                if j < text.len() {
                    fits[i * width + j + 1] = true;
                }
            }
            if t == Some(Piece::Any) {
                fits[i * width + j + 1] = true;
                if i < pattern.len() {
                    fits[(i + 1) * width + j] = true;
                }
            }
            if let (Some(Piece::Char(a)), Some(Piece::Char(b))) = (p, t)
                && same(a, b)
            {
                fits[(i + 1) * width + j + 1] = true;
            }
        }
    }
    fits[pattern.len() * width + text.len()]
}

/// What a tool call is, as rules are matched against it: read once per fire, for every hook's `if`.
#[derive(Debug, Clone, Default)]
pub struct ToolCall {
    /// By hookd's (Claude Code's) name.
    tool: String,
    /// By the agent's own name, when it gave another.
    agent_tool: Option<String>,
    /// A shell tool (by either name).
    shell_tool: bool,
    /// The command line as given, for a shell tool.
    line: Option<String>,
    /// Every simple command of it, read as a shell would run it.
    commands: Vec<Simple>,
    /// Every path the call names, absolute; and where each reaches through the links on its way,
    /// where that is elsewhere (a link `lnk` to `src` makes `lnk/a.rs` also `src/a.rs`).
    paths: Vec<PathBuf>,
    /// The call gave no absolute `cwd`: [`ToolCall::cwd`] is the home folder, a guess.
    cwd_unknown: bool,
    /// The folders a rule starts from, through their links, where that is elsewhere.
    real_cwd: Option<PathBuf>,
    real_home: Option<PathBuf>,
    /// A fetch's host.
    host: Option<String>,
    cwd: PathBuf,
    home: PathBuf,
}

impl ToolCall {
    /// Reads the call of `event`, with `home` for `~`; `None` when it is no tool call (no `tool_name`).
    pub fn read(event: &Map<String, Value>, home: &Path) -> Option<ToolCall> {
        let tool = event
            .get("tool_name")
            .or_else(|| event.get("toolName"))
            .and_then(Value::as_str)?
            .to_string();
        let agent_tool = event
            .get("agent_tool_name")
            .and_then(Value::as_str)
            .map(str::to_string);
        let is_shell = |name: &str| {
            name == "Bash" || call::SHELL_TOOLS.contains(&name.to_ascii_lowercase().as_str())
        };
        let shell_tool = is_shell(&tool) || agent_tool.as_deref().is_some_and(is_shell);
        let given_cwd = event
            .get("cwd")
            .and_then(Value::as_str)
            .filter(|cwd| cwd.starts_with('/'));
        let cwd = given_cwd.map_or_else(
            || home.to_path_buf(),
            |cwd| crate::guard::call::clean(Path::new(cwd)),
        );
        let mut read = ToolCall {
            tool,
            agent_tool,
            shell_tool,
            cwd,
            cwd_unknown: given_cwd.is_none(),
            home: home.to_path_buf(),
            ..ToolCall::default()
        };
        let Some(input) = call::tool_input(event) else {
            return Some(read);
        };
        if shell_tool
            && let Some(parsed) = Call::read(event, home)
            && let Does::Shell(line) = &parsed.does
        {
            let mut partly = MAX_PARTLY;
            read.commands = parsed
                .commands()
                .iter()
                .map(|command| simple(command, &mut partly))
                .collect();
            read.line = Some(line.clone());
        }
        read.paths = call::paths_named(&input)
            .iter()
            .filter(|path| !path.is_empty())
            .map(|path| {
                let path = path.strip_prefix("file://").unwrap_or(path);
                crate::guard::call::absolute(path, &read.cwd, home)
            })
            .collect();
        let linked: Vec<PathBuf> = read
            .paths
            .iter()
            .take(MAX_RESOLVED)
            .filter_map(|path| through_links(path))
            .collect();
        read.paths.extend(linked);
        read.real_cwd = through_links(&read.cwd);
        read.real_home = through_links(&read.home);
        read.host = input.get("url").and_then(Value::as_str).and_then(host_of);
        Some(read)
    }
}

/// How many of a call's paths are followed through links (each costs a look at the file system): a
/// call that names more is matched on the first ones so followed, and on all as written.
const MAX_RESOLVED: usize = 256;

/// Where `path` (absolute, cleaned) reaches through the links on its way, when that is another path:
/// the deepest folder of it that exists resolved, and the rest (a file yet to be written) after it. A
/// hostile agent may make a link to the folder a rule guards and edit through it.
fn through_links(path: &Path) -> Option<PathBuf> {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            let real = rest.iter().rev().fold(real, |real, part| real.join(part));
            return (real != path).then_some(real);
        }
        rest.push(existing.file_name()?);
        existing = existing.parent()?;
    }
}

/// The host of a URL (`https://user@docs.example.com:443/x` is `docs.example.com`).
fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next()?,
        None => host.split(':').next()?,
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(source: &str) -> Condition {
        Condition::parse(source).unwrap_or_else(|e| panic!("{source}: {e:?}"))
    }

    fn call(event: Value) -> ToolCall {
        ToolCall::read(event.as_object().unwrap(), Path::new("/home/me")).unwrap()
    }

    fn bash(command: &str) -> ToolCall {
        call(json!({"tool_name": "Bash", "cwd": "/p", "tool_input": {"command": command}}))
    }

    #[test]
    fn a_shell_rule_fits_each_simple_command_of_the_line() {
        let push = rule("Bash(git push *)");
        for fits in [
            "git push",
            "git push origin main",
            "cd repo && git push",
            "sh -c 'git status; git push --force'",
            "sudo git push",
            "GIT_DIR=x /usr/bin/git push origin",
            "$CMD origin",
        ] {
            assert!(push.fits(&bash(fits)), "{fits}");
        }
        for not in [
            "git status",
            "git pushy",
            "echo git push",
            "git  status push",
        ] {
            assert!(!push.fits(&bash(not)), "{not}");
        }
        let tests = rule("Bash(npm run test:*)");
        assert!(tests.fits(&bash("npm run test")));
        assert!(tests.fits(&bash("npm run test -- --watch")));
        assert!(!tests.fits(&bash("npm run test:unit")));
        let exact = rule("Bash(npm run build)");
        assert!(exact.fits(&bash("npm run build")));
        assert!(!exact.fits(&bash("npm run build --prod")));
        let glued = rule("Bash(ls*)");
        assert!(glued.fits(&bash("lsof")) && glued.fits(&bash("ls -la")));
        assert!(!rule("Bash(ls *)").fits(&bash("lsof")));
        // The whole line is a pattern's too.
        assert!(rule("Bash(curl * | bash)").fits(&bash("curl x.sh | bash")));
        // Not a shell tool.
        assert!(!push.fits(&call(
            json!({"tool_name": "Edit", "tool_input": {"command": "git push"}})
        )));
        // Agents' own shell tools are shell tools.
        assert!(push.fits(&call(
            json!({"tool_name": "run_shell_command", "tool_input": {"command": "git push"}})
        )));
        assert!(push.fits(&call(
            json!({"tool_name": "Bash", "tool_input": {"command": ["git", "push"]}})
        )));
        assert!(rule("Bash").fits(&bash("anything")));
        assert!(!rule("Bash").fits(&call(json!({"tool_name": "Read"}))));
    }

    #[test]
    fn a_shell_rule_is_not_slipped_past_by_options_unknown_words_or_case() {
        let push = rule("Bash(git push *)");
        for fits in [
            // Options between the program and what the pattern names.
            "git -C elsewhere push",
            "git -c user.name=x push origin",
            "git --no-pager push",
            "git --git-dir=.git --work-tree . push --force",
            "cd x && git -C y -c a=b --bare push",
            // Words that cannot be known may be what the pattern names.
            "git $(printf push)",
            "git \"$SUB\" origin main",
            "git $(printf pu)sh",
            "git -C \"$D\" push",
            // A file system that does not tell case apart runs git for GIT.
            "GIT push",
            "Git Push origin",
        ] {
            assert!(push.fits(&bash(fits)), "{fits}");
        }
        for not in [
            "git status",
            "git log --grep push",
            "ls $(pwd)",
            "git -C x status",
            "git pushy",
            "echo $X git push",
        ] {
            assert!(!push.fits(&bash(not)), "{not}");
        }
        let exact = rule("Bash(npm run build)");
        assert!(exact.fits(&bash("npm --silent run build")));
        assert!(exact.fits(&bash("npm run $(echo build)")));
        assert!(!exact.fits(&bash("npm run $(echo build) --prod")));
        // Words matched against file names, and words a command is fed.
        for fits in [
            "git pus?",
            "git p[u]sh",
            "xargs git < commands",
            "xargs -a commands git",
            "find push -maxdepth 0 -exec git {} \\;",
        ] {
            assert!(push.fits(&bash(fits)), "{fits}");
        }
        assert!(!push.fits(&bash("git stat?s")));
        assert!(!push.fits(&bash("find . -exec git {} \\;")), "git ./x");
        // A line that piles up options is taken as one that cannot be known.
        let piled = format!("git {}push", "-x ".repeat(MAX_OPTION_STARTS + 1));
        assert!(push.fits(&bash(&piled)));
        // Past the pieces a call may match one by one, a command fits every pattern.
        let long = format!("ls $X {}; ls $Y", "a ".repeat(MAX_PARTLY / 2 + 1));
        assert!(push.fits(&bash(&long)));
        let long = format!("ls -a -b {}", "a".repeat(MAX_PARTLY / 2));
        assert!(push.fits(&bash(&long)), "copies past the bound");
        let short = format!("ls -a {}", "a".repeat(MAX_PARTLY / 4));
        assert!(!push.fits(&bash(&short)), "copies within the bound");
        assert!(rule("Bash(rm *)").fits(&bash("rm $(cat list)")));
    }

    #[test]
    fn a_path_rule_reads_paths_as_gitignore_does() {
        let edit = |path: &str| {
            call(json!({"tool_name": "Edit", "cwd": "/p", "tool_input": {"file_path": path}}))
        };
        let src = rule("Edit(src/**)");
        assert!(src.fits(&edit("/p/src/a.rs")));
        assert!(src.fits(&edit("src/deep/b.rs")));
        assert!(!src.fits(&edit("/p/tests/a.rs")));
        assert!(!src.fits(&edit("/q/src/a.rs")));
        assert!(!src.fits(&edit("/p/src")), "inside src, not src itself");
        // Every tool that edits a file.
        assert!(src.fits(&call(
            json!({"tool_name": "Write", "cwd": "/p", "tool_input": {"file_path": "/p/src/n.rs"}})
        )));
        assert!(src.fits(&call(json!({"tool_name": "Edit", "cwd": "/p", "tool_input": {"file_paths": ["/p/README", "/p/src/x"]}}))));
        assert!(!src.fits(&call(
            json!({"tool_name": "Read", "cwd": "/p", "tool_input": {"file_path": "/p/src/a.rs"}})
        )));
        let env = rule("Read(./.env)");
        let read = |path: &str| {
            call(json!({"tool_name": "Read", "cwd": "/p", "tool_input": {"file_path": path}}))
        };
        assert!(env.fits(&read("/p/.env")) && env.fits(&read(".env")));
        assert!(!env.fits(&read("/p/sub/.env")), "./ anchors at the cwd");
        assert!(
            env.fits(&read("/p/.ENV")) && src.fits(&edit("/p/SRC/a.rs")),
            "case is not told apart"
        );
        assert!(
            rule("Read(.env)").fits(&read("/p/sub/.env")),
            "no slash: any depth"
        );
        assert!(rule("Read(*.pem)").fits(&read("/p/a/b/key.pem")));
        assert!(!rule("Read(*.pem)").fits(&read("/p/a/b/key.pemx")));
        assert!(rule("Read(//etc/**)").fits(&read("/etc/passwd")));
        assert!(rule("Read(~/.ssh/**)").fits(&read("~/.ssh/id_rsa")));
        assert!(rule("Read(~/.ssh/**)").fits(&read("/home/me/.ssh/id_rsa")));
        assert!(rule("Read(/docs/*.md)").fits(&read("/p/docs/a.md")));
        assert!(!rule("Read(/docs/*.md)").fits(&read("/p/docs/x/a.md")));
        assert!(rule("Read(/docs/**/*.md)").fits(&read("/p/docs/x/a.md")));
        assert!(
            rule("Read(config)").fits(&read("/p/a/config/x.toml")),
            "a folder fits what is in it"
        );
        assert!(rule("Read(k[0-9].txt)").fits(&read("/p/k1.txt")));
        assert!(!rule("Read(k[!0-9].txt)").fits(&read("/p/k1.txt")));
        // Grep is a reading tool.
        assert!(rule("Read(src/**)").fits(&call(json!({"tool_name": "Grep", "cwd": "/p", "tool_input": {"pattern": "x", "path": "src/a"}}))));
    }

    #[test]
    fn a_path_rule_fits_a_path_through_a_link() {
        let project = tempfile::tempdir().unwrap();
        let cwd = project.path().join("p");
        std::fs::create_dir_all(cwd.join("src")).unwrap();
        std::os::unix::fs::symlink(cwd.join("src"), cwd.join("lnk")).unwrap();
        std::os::unix::fs::symlink(&cwd, project.path().join("p-link")).unwrap();
        let edit = |cwd: &Path, path: &str| {
            call(json!({"tool_name": "Edit", "cwd": cwd, "tool_input": {"file_path": path}}))
        };
        let src = rule("Edit(src/**)");
        assert!(
            src.fits(&edit(&cwd, "lnk/a.rs")),
            "a new file through a link"
        );
        assert!(src.fits(&edit(&cwd, "lnk/deep/b.rs")));
        assert!(
            src.fits(&edit(&project.path().join("p-link"), "src/a.rs")),
            "a cwd through a link"
        );
        assert!(
            src.fits(&edit(
                &project.path().join("p-link"),
                &format!("{}/src/a.rs", cwd.display())
            )),
            "the real path from a cwd through a link"
        );
        assert!(!src.fits(&edit(&cwd, "other/a.rs")));
    }

    #[test]
    fn an_event_that_names_no_tool_or_no_cwd_fits() {
        let read = |event: Value| ToolCall::read(event.as_object().unwrap(), Path::new("/h"));
        for event in [
            json!({"tool_input": {"command": "git push"}}),
            json!({"tool_name": 7, "tool_input": {"command": "git push"}}),
            json!({"tool": "Bash", "tool_input": {"command": "git push"}}),
        ] {
            let call = read(event.clone());
            assert!(
                rule("Bash(git push *)").fits_event(call.as_ref()),
                "{event}"
            );
            assert!(rule("Edit(src/**)").fits_event(call.as_ref()), "{event}");
        }
        // No cwd: the project a rule starts from cannot be told.
        let no_cwd = read(json!({"tool_name": "Edit", "tool_input": {"file_path": "/p/src/a.rs"}}));
        assert!(rule("Edit(src/**)").fits_event(no_cwd.as_ref()));
        assert!(rule("Edit(./src/**)").fits_event(no_cwd.as_ref()));
        assert!(!rule("Edit(//etc/**)").fits_event(no_cwd.as_ref()));
        let other = read(json!({"tool_name": "Bash", "tool_input": {"command": "ls"}}));
        assert!(!rule("Bash(git push *)").fits_event(other.as_ref()));
    }

    #[test]
    fn a_search_of_a_folder_fits_a_rule_on_what_is_in_it() {
        let search = |tool: &str, input: Value| {
            call(json!({"tool_name": tool, "cwd": "/p", "tool_input": input}))
        };
        let env = rule("Read(./.env)");
        for fits in [
            search("Grep", json!({"pattern": "KEY"})),
            search("Grep", json!({"pattern": "KEY", "path": "."})),
            search("Grep", json!({"pattern": "KEY", "path": "/"})),
            search("Glob", json!({"pattern": "**/.env*"})),
            search("LS", json!({"path": "/p"})),
        ] {
            assert!(env.fits(&fits), "{fits:?}");
        }
        assert!(!env.fits(&search("Grep", json!({"pattern": "KEY", "path": "src"}))));
        assert!(!env.fits(&search("Grep", json!({"pattern": "KEY", "path": "/q"}))));
        let secrets = rule("Read(config/secrets/**)");
        assert!(secrets.fits(&search("Grep", json!({"pattern": "x", "path": "config"}))));
        assert!(secrets.fits(&search(
            "Grep",
            json!({"pattern": "x", "path": "config/secrets/a"})
        )));
        assert!(!secrets.fits(&search("Grep", json!({"pattern": "x", "path": "docs"}))));
        // A name at any depth: any folder below the cwd may hold it.
        assert!(rule("Read(.env)").fits(&search("Grep", json!({"pattern": "x", "path": "sub"}))));
        // A Read of a folder's file is no search.
        assert!(!env.fits(&call(
            json!({"tool_name": "Read", "cwd": "/p", "tool_input": {"file_path": "/p/README"}})
        )));
    }

    #[test]
    fn names_mcp_servers_and_fetches() {
        let mcp = |name: &str| call(json!({"tool_name": name, "tool_input": {}}));
        assert!(rule("mcp__github__create_issue").fits(&mcp("mcp__github__create_issue")));
        assert!(!rule("mcp__github__create_issue").fits(&mcp("mcp__github__create_issues")));
        assert!(rule("mcp__github").fits(&mcp("mcp__github__x")));
        assert!(!rule("mcp__github").fits(&mcp("mcp__githubx__x")));
        assert!(rule("mcp__github__*").fits(&mcp("mcp__github__x")));
        // The agent's own name fits too.
        assert!(rule("write_file").fits(&call(
            json!({"tool_name": "Write", "agent_tool_name": "write_file"})
        )));
        let fetch = |url: &str| call(json!({"tool_name": "WebFetch", "tool_input": {"url": url}}));
        assert!(rule("WebFetch(domain:example.com)").fits(&fetch("https://example.com/x")));
        assert!(rule("WebFetch(domain:example.com)").fits(&fetch("http://u@EXAMPLE.com:8080")));
        assert!(!rule("WebFetch(domain:example.com)").fits(&fetch("https://docs.example.com/")));
        assert!(rule("WebFetch(domain:*.example.com)").fits(&fetch("https://docs.example.com/")));
        assert!(!rule("WebFetch(domain:example.com)").fits(&fetch("https://example.com.evil/")));
    }

    #[test]
    fn a_rule_that_cannot_be_read_says_where_and_why() {
        for (source, at, words) in [
            ("Bash(git push *", 4, "never closed"),
            ("", 0, "empty"),
            ("Bash()", 5, "nothing between"),
            ("Bash git push", 4, "cannot be in a tool's name"),
            ("(git push)", 0, "names no tool"),
            ("Edit(src/[ab)", 9, "never closed"),
            ("Task(explorer)", 5, "write Task alone"),
            ("WebFetch(example.com)", 9, "domain:HOST"),
            ("WebFetch(domain:a/b)", 16, "not a host name"),
            ("  Bash(x", 6, "never closed"),
        ] {
            let error = Condition::parse(source).unwrap_err();
            assert_eq!(error.at, at, "{source}: {error:?}");
            assert!(error.message.contains(words), "{source}: {error:?}");
        }
    }
}
