//! A tool call read for what of hookd's it would touch: the paths it would write, move, delete or
//! change the mode of, and the daemon's process it would stop. What it would only read is let go.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::shell::{self, Command, Word};

use super::Shield;
use super::paths::{self, Guarded};

/// Tools that only read, ask or plan: nothing of theirs is judged.
const READ_ONLY_TOOLS: &[&str] = &[
    "Read",
    "Grep",
    "Glob",
    "LS",
    "NotebookRead",
    "WebFetch",
    "WebSearch",
    "TodoWrite",
    "TodoRead",
    "Task",
    "Agent",
    "AskUserQuestion",
    "ExitPlanMode",
    "EnterPlanMode",
    "BashOutput",
    "KillShell",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
    "Skill",
    "SlashCommand",
];

/// The fields a file tool names its file by, across the agents (Claude Code's `file_path`, Copilot
/// CLI's `path`, a Codex patch's `file_paths`, ...).
const PATH_FIELDS: &[&str] = &[
    "file_path",
    "file_paths",
    "path",
    "paths",
    "notebook_path",
    "filePath",
    "filename",
    "target_file",
    "destination",
    "source",
];

/// What the call would do to hookd, in words ("write /x/hooks.toml (hookd's settings file)"), or
/// `None`.
pub(super) fn judge(shield: &Shield, event: &Map<String, Value>) -> Option<String> {
    let tool = event.get("tool_name").and_then(Value::as_str).unwrap_or("");
    let input = event.get("tool_input");
    let cwd = event
        .get("cwd")
        .and_then(Value::as_str)
        .filter(|cwd| cwd.starts_with('/'))
        .map_or_else(|| shield.home.clone(), PathBuf::from);
    let judge = Judge {
        shield,
        real_folder: std::cell::RefCell::new(None),
    };
    if tool == "Bash" || tool == "PowerShell" {
        let command = input.and_then(|i| i.get("command")).map(command_text)?;
        return judge.shell(&command, &cwd);
    }
    if READ_ONLY_TOOLS.contains(&tool) || read_only_mcp(tool) {
        return None;
    }
    let input = input?;
    if matches!(tool, "Write" | "Edit" | "MultiEdit" | "NotebookEdit") {
        let mut named = Vec::new();
        for field in PATH_FIELDS {
            match input.get(*field) {
                Some(Value::String(path)) => named.push(path.clone()),
                Some(Value::Array(paths)) => {
                    named.extend(paths.iter().filter_map(Value::as_str).map(str::to_string));
                }
                _ => {}
            }
        }
        for path in &named {
            let word = Word {
                text: path.clone(),
                known: true,
                glob: false,
            };
            if let Some(found) = judge.target(&word, &cwd, false) {
                return Some(format!("write {found}"));
            }
        }
        if !named.is_empty() {
            return None;
        }
    }
    // Any other tool (an MCP server's, a new one): whatever path of hookd's it names.
    let mut strings = Vec::new();
    collect_strings(input, 0, &mut strings);
    strings.iter().find_map(|text| {
        judge
            .mentions(text, &cwd)
            .map(|found| format!("name {found}, which a {tool} call may change"))
    })
}

/// A shell command as text: a list of words (as some agents send it) joined back into a line.
fn command_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(words) => words
            .iter()
            .filter_map(Value::as_str)
            .map(|w| {
                if w.is_empty()
                    || w.contains(|c: char| !c.is_ascii_alphanumeric() && !"-_./=:@%+,".contains(c))
                {
                    format!("'{}'", w.replace('\'', "'\\''"))
                } else {
                    w.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// An MCP tool whose name says it only reads (`mcp__fs__read_file`, `mcp__gh__list_issues`).
fn read_only_mcp(tool: &str) -> bool {
    let Some(own) = tool
        .strip_prefix("mcp__")
        .and_then(|rest| rest.rsplit("__").next())
    else {
        return false;
    };
    let own = own.to_ascii_lowercase();
    [
        "read", "get", "list", "search", "view", "find", "fetch", "query", "describe", "show",
    ]
    .iter()
    .any(|verb| own.starts_with(verb))
}

/// Every string in `value`, bounded (a tool input of a million strings is judged on its first ones
/// and its paths are still found, since paths come first in every tool's input seen).
fn collect_strings<'v>(value: &'v Value, depth: usize, out: &mut Vec<&'v str>) {
    if depth > 16 || out.len() > 4096 {
        return;
    }
    match value {
        Value::String(text) => out.push(text),
        Value::Array(items) => items
            .iter()
            .for_each(|v| collect_strings(v, depth + 1, out)),
        Value::Object(map) => map
            .values()
            .for_each(|v| collect_strings(v, depth + 1, out)),
        _ => {}
    }
}

/// Programs that only read (or print, or ask): their words are not judged, only their redirections.
const READERS: &[&str] = &[
    "cat",
    "tac",
    "less",
    "more",
    "most",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "ls",
    "ll",
    "dir",
    "stat",
    "file",
    "wc",
    "diff",
    "cmp",
    "comm",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "realpath",
    "readlink",
    "basename",
    "dirname",
    "test",
    "[",
    "echo",
    "printf",
    "jq",
    "yq",
    "bat",
    "batcat",
    "od",
    "xxd",
    "hexdump",
    "strings",
    "nl",
    "column",
    "cut",
    "tr",
    "tree",
    "du",
    "df",
    "namei",
    "getfacl",
    "lsattr",
    "id",
    "whoami",
    "ps",
    "pgrep",
    "pidof",
    "top",
    "uptime",
    "date",
    "which",
    "type",
    "whereis",
    "true",
    "false",
    "pwd",
    "sleep",
    "seq",
    "fold",
    "fmt",
    "paste",
    "join",
    "expand",
    "unexpand",
    "rev",
    "look",
    "journalctl",
    "lsof",
    "fuser",
    "hostname",
    "uname",
    "locale",
    "printenv",
    "tput",
    "clear",
    "man",
    "info",
    "help",
    "cd",
    "pushd",
    "popd",
    "set",
    "shopt",
    "unset",
    "wait",
    "jobs",
    "read",
    ":",
    "let",
    "hash",
    "getent",
];

/// Programs that change the files they are given.
struct Writer {
    names: &'static [&'static str],
    /// Whether the paths it is given are changed whole, folders and all below them (a folder above a
    /// guarded path counts), or only written into (a folder named is harmless).
    whole: bool,
}

const WRITERS: &[Writer] = &[
    Writer {
        names: &[
            "rm",
            "rmdir",
            "unlink",
            "shred",
            "srm",
            "trash",
            "trash-put",
            "gio",
            "mv",
            "chmod",
            "chown",
            "chgrp",
            "chattr",
            "setfacl",
            "cp",
            "install",
            "rsync",
            "ln",
            "link",
        ],
        whole: true,
    },
    Writer {
        names: &[
            "touch",
            "truncate",
            "mkdir",
            "mkfifo",
            "mknod",
            "tee",
            "sponge",
            "vi",
            "vim",
            "nvim",
            "view",
            "nano",
            "pico",
            "emacs",
            "emacsclient",
            "ed",
            "ex",
            "micro",
            "joe",
            "kak",
            "hx",
            "code",
            "gedit",
            "kate",
            "subl",
            "mcedit",
            "vis",
            "patch",
            "split",
            "csplit",
        ],
        whole: false,
    },
];

/// Programs that edit their files in place with `-i` (and otherwise read them).
const IN_PLACE: &[&str] = &["sed", "gsed", "perl", "ruby", "gawk"];

/// Interpreters: their arguments may be code that does anything.
const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "deno",
    "bun",
    "php",
    "lua",
    "tclsh",
    "Rscript",
    "osascript",
    "pwsh",
    "powershell",
];

struct Judge<'s> {
    shield: &'s Shield,
    /// The last folder a path was resolved in, with its links followed: a call's words are mostly in
    /// one folder, which is resolved once, not once per word.
    real_folder: std::cell::RefCell<Option<(PathBuf, Option<PathBuf>)>>,
}

impl Judge<'_> {
    /// A shell command line: every command it could run, in order, with the folder `cd` leaves.
    fn shell(&self, line: &str, cwd: &Path) -> Option<String> {
        let commands = shell::read(line, &self.shield.env);
        let mut cwd = cwd.to_path_buf();
        for (at, command) in commands.iter().enumerate() {
            if let Some(found) = self.command(command, &commands[..at], &mut cwd) {
                return Some(found);
            }
        }
        None
    }

    /// One command, after the ones before it on the line (`before`).
    fn command(&self, command: &Command, before: &[Command], cwd: &mut PathBuf) -> Option<String> {
        for redirect in command.redirects.iter().filter(|r| r.writes) {
            if let Some(found) = self.target(&redirect.target, cwd, false) {
                return Some(format!("write {found}"));
            }
        }
        let program = command.program();
        let args = command.args();
        if program == "cd" || program == "pushd" {
            if let Some(dir) = args.iter().find(|a| !a.text.starts_with('-'))
                && dir.known
            {
                *cwd = paths::absolute(cwd, &dir.text);
            } else if args.is_empty() {
                *cwd = self.shield.home.clone();
            }
            return None;
        }
        if let Some(found) = self.signals(command) {
            return Some(found);
        }
        if command.fed {
            // `... | xargs rm`: what it is given comes from the commands before it.
            let everything = before.iter().chain(std::iter::once(command));
            for word in everything.flat_map(|c| c.words.iter()) {
                if let Some(found) = self.mentions(&word.text, cwd) {
                    return Some(format!("give {found} to {program}, which may change it"));
                }
            }
        }
        if let Some(writer) = WRITERS.iter().find(|w| w.names.contains(&program)) {
            return self.writes(program, args, writer.whole, cwd);
        }
        if IN_PLACE.contains(&program)
            && args.iter().any(|a| {
                a.text.starts_with("-i")
                    || a.text == "--in-place"
                    || a.text.starts_with("--in-place=")
                    || (a.text.starts_with('-')
                        && !a.text.starts_with("--")
                        && a.text.contains('i')
                        && program != "sed")
            })
        {
            for arg in args.iter().filter(|a| !a.text.starts_with('-')) {
                if let Some(found) = self.target(arg, cwd, false) {
                    return Some(format!("edit {found} in place"));
                }
            }
            return None;
        }
        if program == "dd" {
            for arg in args {
                if let Some(file) = arg.text.strip_prefix("of=") {
                    let word = Word {
                        text: file.to_string(),
                        ..arg.clone()
                    };
                    if let Some(found) = self.target(&word, cwd, false) {
                        return Some(format!("write {found}"));
                    }
                }
            }
            return None;
        }
        if program == "find" {
            let deletes = args.iter().any(|a| a.text == "-delete");
            if deletes {
                // `-name PATTERN`: only what the pattern names is deleted; a guarded file whose name
                // it does not match is safe (a guarded folder's files cannot be told, and count).
                let names: Vec<&str> = args
                    .windows(2)
                    .filter(|pair| pair[0].text == "-name")
                    .map(|pair| pair[1].text.as_str())
                    .collect();
                let named = |guarded: &Guarded| {
                    names.is_empty()
                        || guarded.folder
                        || guarded.path.file_name().is_some_and(|name| {
                            names
                                .iter()
                                .any(|pattern| paths::pattern_matches(pattern, Path::new(name)))
                        })
                };
                for start in args.iter().take_while(|a| !a.text.starts_with('-')) {
                    if !start.known {
                        continue;
                    }
                    let start = paths::absolute(cwd, &start.text);
                    let hit = self.shield.guarded.iter().find(|guarded| {
                        (guarded.covers(&start) || guarded.is_below(&start)) && named(guarded)
                    });
                    if let Some(guarded) = hit {
                        return Some(format!("delete {}", describe(guarded)));
                    }
                }
            }
            return None;
        }
        if program == "sort" || program == "uniq" {
            for (at, arg) in args.iter().enumerate() {
                let file = match arg.text.strip_prefix("--output=") {
                    Some(file) => Some(Word {
                        text: file.into(),
                        ..arg.clone()
                    }),
                    None if arg.text == "-o" => args.get(at + 1).cloned(),
                    None => None,
                };
                if let Some(found) = file.and_then(|f| self.target(&f, cwd, false)) {
                    return Some(format!("write {found}"));
                }
            }
            if program == "uniq"
                && let Some(out) = args.iter().filter(|a| !a.text.starts_with('-')).nth(1)
                && let Some(found) = self.target(out, cwd, false)
            {
                return Some(format!("write {found}"));
            }
            return None;
        }
        if program == "git" && git_only_reads(args) {
            return None;
        }
        if program == "hookd" {
            return self.hookd(args);
        }
        if READERS.contains(&program) {
            return None;
        }
        let runs_input = (shell::unwrap::SHELLS.contains(&program)
            || INTERPRETERS.contains(&program))
            && before.last().is_some_and(|c| c.piped);
        if runs_input {
            // `echo 'rm ~/.config/hookd/hooks.toml' | sh`: what comes down the pipe is code.
            for word in before
                .iter()
                .rev()
                .take_while(|c| c.piped)
                .flat_map(|c| c.words.iter())
            {
                if let Some(found) = self.mentions(&word.text, cwd) {
                    return Some(format!("run code that names {found}"));
                }
            }
        }
        // A program hookd cannot tell: whatever path of hookd's its words name (its own name only when
        // it is a path: `cargo` is found on PATH, not in the call's folder).
        let named = command.words.iter().enumerate();
        for (_, word) in named.filter(|(at, word)| *at > 0 || word.text.contains('/')) {
            if let Some(found) = self.mentions(&word.text, cwd) {
                return Some(format!("give {found} to {program}, which may change it"));
            }
        }
        if let Some(here) = &command.here
            && let Some(found) = self.mentions(here, cwd)
        {
            return Some(format!("give {found} to {program}, which may change it"));
        }
        None
    }

    /// A writer's paths: each word that is not an option (a folder above a guarded path counts when
    /// the writer changes its paths whole); for `cp`, `mv`, `ln`, `install` and `rsync`, also what
    /// lands in a destination folder.
    fn writes(&self, program: &str, args: &[Word], whole: bool, cwd: &Path) -> Option<String> {
        let verb = match program {
            "rm" | "rmdir" | "unlink" | "shred" | "srm" | "trash" | "trash-put" | "gio" => "delete",
            "mv" => "move",
            "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" => "change the owner or mode of",
            "cp" | "install" | "rsync" | "ln" | "link" => "replace",
            _ => "write",
        };
        let operands: Vec<&Word> = args
            .iter()
            .filter(|a| !a.text.starts_with('-') || a.text == "-")
            .collect();
        // Whether a folder named is changed with all below it: `rm` and `chmod`/`chown` only when
        // recursive; a mode or owner change of a folder above the settings that lets others write it
        // makes hookd refuse its settings (settings::trust), which switches every hook off as surely.
        let recursive = args.iter().any(|a| {
            a.text == "--recursive"
                || (a.text.starts_with('-')
                    && !a.text.starts_with("--")
                    && a.text.contains(['r', 'R']))
        });
        let whole = match program {
            "rm" => recursive,
            "chmod" => recursive || grants_others_write(args),
            "chown" | "chgrp" | "setfacl" => true,
            _ => whole,
        };
        // A copy only reads its sources, and a move or a link lands in its destination: the
        // destination is judged below, as the place written.
        let (sources, last) = match program {
            "cp" | "install" | "rsync" => (&[][..], None),
            "mv" | "ln" | "link" if operands.len() > 1 => {
                (&operands[..operands.len() - 1], operands.last())
            }
            _ => (&operands[..], None),
        };
        for operand in sources {
            if let Some(found) = self.target(operand, cwd, whole) {
                return Some(format!("{verb} {found}"));
            }
        }
        if let Some(found) = last.and_then(|dest| self.target(dest, cwd, false)) {
            return Some(format!("{verb} {found}"));
        }
        // `-t DIR` and `--target-directory=DIR`, and a destination folder that already exists: each
        // source lands in it under its own name.
        let named_target = args.iter().enumerate().find_map(|(at, a)| {
            if a.text == "-t" {
                args.get(at + 1).cloned()
            } else {
                a.text.strip_prefix("--target-directory=").map(|dir| Word {
                    text: dir.into(),
                    ..a.clone()
                })
            }
        });
        let copies = matches!(program, "cp" | "mv" | "ln" | "install" | "rsync");
        if copies {
            let (dest, sources) = match &named_target {
                Some(dir) => (Some(dir.clone()), operands.clone()),
                None => match operands.split_last() {
                    Some((last, rest)) if !rest.is_empty() => {
                        (Some((*last).clone()), rest.to_vec())
                    }
                    _ => (None, Vec::new()),
                },
            };
            if let Some(dest) = &dest {
                let deletes = args
                    .iter()
                    .any(|a| a.text.starts_with("--delete") || a.text == "--remove-destination");
                if let Some(found) = self.target(dest, cwd, deletes) {
                    return Some(format!("{verb} {found}"));
                }
            }
            if let Some(dest) = dest.filter(|d| d.known && !d.glob) {
                let dir = paths::absolute(cwd, &dest.text);
                if dir.is_dir() || dest.text.ends_with('/') || named_target.is_some() {
                    for source in sources {
                        let Some(name) = Path::new(source.text.trim_end_matches('/')).file_name()
                        else {
                            continue;
                        };
                        let landed = dir.join(name);
                        let word = Word {
                            text: landed.to_string_lossy().into_owned(),
                            known: true,
                            glob: false,
                        };
                        if let Some(found) = self.target(&word, cwd, true) {
                            return Some(format!("{verb} {found}"));
                        }
                    }
                }
            }
        }
        None
    }

    /// The guarded path `word` names as a path changed (a folder above one counts when `whole`), as
    /// "PATH (what it is)".
    fn target(&self, word: &Word, cwd: &Path, whole: bool) -> Option<String> {
        self.target_resolved(word, cwd, whole, true)
    }

    /// As [`Judge::target`]; with `resolve` false, the path as written only, its links not followed
    /// (no look at the filesystem).
    fn target_resolved(
        &self,
        word: &Word,
        cwd: &Path,
        whole: bool,
        resolve: bool,
    ) -> Option<String> {
        if !word.known || word.text.is_empty() {
            // An unknown path (`$X/f`) cannot be told; the text may still name a guarded path whole.
            return self.named_in(&word.text).map(describe);
        }
        if word.glob {
            let pattern = paths::absolute(cwd, &word.text);
            let pattern = pattern.to_string_lossy();
            return self.shield.guarded.iter().find_map(|guarded| {
                let hits = |path: &Path| {
                    paths::pattern_matches(&pattern, path)
                        || (whole || guarded.folder)
                            && path
                                .ancestors()
                                .any(|above| paths::pattern_matches(&pattern, above))
                };
                (hits(&guarded.path) || guarded.real.as_deref().is_some_and(hits))
                    .then(|| describe(guarded))
            });
        }
        let path = paths::absolute(cwd, &word.text);
        let real = resolve.then(|| self.real(&path, cwd)).flatten();
        for form in std::iter::once(&path).chain(real.as_ref()) {
            for guarded in &self.shield.guarded {
                if guarded.covers(form) {
                    return Some(describe_at(guarded, &path));
                }
                if whole && guarded.is_below(form) {
                    return Some(format!(
                        "{}, which holds {}",
                        path.display(),
                        describe(guarded)
                    ));
                }
            }
        }
        None
    }

    /// The guarded path a text names: as a path (relative to `cwd` when it looks like one), or
    /// anywhere inside it by one of its names (`open('~/.config/hookd/hooks.toml', 'w')`).
    fn mentions(&self, text: &str, cwd: &Path) -> Option<String> {
        if let Some(found) = self.named_in(text) {
            return Some(describe(found));
        }
        // A file's name, or a path: a plain word (`test`, `-la`, `.`) names nothing of hookd's, even
        // in its folder.
        let file_name = |t: &str| {
            t.rsplit_once('.')
                .is_some_and(|(stem, ext)| !stem.is_empty() && !ext.is_empty())
        };
        let looks_like_path = !text.is_empty()
            && (text.contains('/') || file_name(text))
            && text.len() < 4096
            && !text.contains([
                '\n', ' ', '\'', '"', '(', ')', '$', '`', ';', '|', '&', '<', '>',
            ]);
        if looks_like_path {
            let word = Word {
                text: text.to_string(),
                known: true,
                glob: text.contains(['*', '?', '[']),
            };
            // As written: a word handed to a program hookd cannot tell is not a path it is known to
            // change, and a link to a guarded file could only have been made by a call refused already
            // (`ln` naming it) or one hookd cannot see anyway (docs/security.md).
            return self.target_resolved(&word, cwd, false, false);
        }
        None
    }

    /// `path` (absolute, lexical) with its links followed, or `None` where that is `path` itself. A path
    /// in the call's folder costs one look per name below the folder (usually one), the folder itself
    /// being resolved once per call.
    fn real(&self, path: &Path, cwd: &Path) -> Option<PathBuf> {
        let Ok(rest) = path.strip_prefix(cwd) else {
            return paths::real(path).filter(|real| real != path);
        };
        let folder = {
            let mut cached = self.real_folder.borrow_mut();
            match cached.as_ref() {
                Some((known, real)) if known == cwd => real.clone(),
                _ => {
                    let real = self.shield.folders.real(cwd);
                    *cached = Some((cwd.to_path_buf(), real.clone()));
                    real
                }
            }
        };
        let mut resolved = folder.unwrap_or_else(|| cwd.to_path_buf());
        let mut names = rest.components();
        for name in names.by_ref() {
            resolved.push(name);
            match std::fs::symlink_metadata(&resolved) {
                Ok(meta) if meta.file_type().is_symlink() => return paths::real(path),
                Ok(_) => {}
                // Not there (yet): nothing below it can be a link.
                Err(_) => break,
            }
        }
        resolved.extend(names);
        (resolved != path).then_some(resolved)
    }

    /// The guarded path one of whose names appears in `text`, ending there (not a longer name that
    /// only begins the same: `hookd.off`).
    fn named_in(&self, text: &str) -> Option<&Guarded> {
        // Every name is a path with a `/` in it: most words (`cargo`, `test`, `-la`) are none.
        if !text.contains('/') {
            return None;
        }
        self.shield.guarded.iter().find(|guarded| {
            guarded.names.iter().any(|name| {
                name.len() <= text.len()
                    && text.match_indices(name.as_str()).any(|(at, _)| {
                        let next = text[at + name.len()..].chars().next();
                        next.is_none_or(|c| !(c.is_alphanumeric() || "._-".contains(c)))
                    })
            })
        })
    }

    /// A command that would stop or signal the daemon: `kill` of its pid, `pkill`/`killall` by a name
    /// or pattern it answers to (or every process of the user), `systemctl --user stop hookd` and the
    /// like.
    fn signals(&self, command: &Command) -> Option<String> {
        let program = command.program();
        let args = command.args();
        let stop = || "stop or kill the hookd daemon".to_string();
        match program {
            "kill" => {
                let mut probe = false;
                let mut after_dashes = false;
                let mut i = 0;
                while i < args.len() {
                    let text = args[i].text.as_str();
                    i += 1;
                    if !after_dashes {
                        if text == "--" {
                            after_dashes = true;
                            continue;
                        }
                        if text == "-s" || text == "-n" || text == "--signal" {
                            probe |= args.get(i).is_some_and(|s| s.text == "0");
                            i += 1;
                            continue;
                        }
                        if text == "-l" || text == "-L" || text == "--list" {
                            return None;
                        }
                        if let Some(signal) = text.strip_prefix('-')
                            && !signal.is_empty()
                            && (i == 1
                                || !signal.chars().all(|c| c.is_ascii_digit())
                                || signal == "0")
                        {
                            probe |= signal == "0";
                            continue;
                        }
                    }
                    if probe {
                        continue;
                    }
                    if !args[i - 1].known {
                        if self.finds_daemon(text) {
                            return Some(stop());
                        }
                        continue;
                    }
                    if let Ok(pid) = text.parse::<i64>() {
                        let daemon = self.shield.daemon_pid.map(i64::from);
                        if pid == -1 || daemon == Some(pid) || daemon == Some(-pid) {
                            return Some(stop());
                        }
                    }
                }
                None
            }
            "pkill" | "killall" => self.pkill(program, args).then(stop),
            "killall5" => Some(stop()),
            "systemctl" => {
                let verbs = [
                    "stop",
                    "kill",
                    "disable",
                    "mask",
                    "edit",
                    "revert",
                    "set-property",
                    "freeze",
                    "clean",
                    "isolate",
                    "unlink",
                    "try-restart",
                    "condstop",
                ];
                let words: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
                if words.iter().any(|w| {
                    ["exit", "halt", "poweroff", "reboot", "kexec", "soft-reboot"].contains(w)
                }) && words.contains(&"--user")
                {
                    return Some(stop());
                }
                let verb = words.iter().find(|w| !w.starts_with('-'));
                if verb.is_some_and(|v| verbs.contains(v))
                    && words
                        .iter()
                        .skip_while(|w| Some(*w) != verb)
                        .skip(1)
                        .any(|unit| {
                            !unit.starts_with('-')
                                && (names_hookd_unit(unit) || unit.starts_with("user@"))
                        })
                {
                    return Some(stop());
                }
                None
            }
            "service" => (args.first().is_some_and(|a| names_hookd_unit(&a.text))
                && args.get(1).is_some_and(|a| a.text == "stop"))
            .then(stop),
            "loginctl" => args
                .iter()
                .any(|a| {
                    [
                        "terminate-user",
                        "kill-user",
                        "terminate-session",
                        "kill-session",
                    ]
                    .contains(&a.text.as_str())
                })
                .then(stop),
            _ => None,
        }
    }

    /// Whether `pkill`/`killall` with `args` would signal the daemon: a pattern it answers to (its name,
    /// or its command line with `-f`), or no pattern but a selection of processes (`-u me`) that takes
    /// every process of the user, the daemon among them.
    fn pkill(&self, program: &str, args: &[Word]) -> bool {
        let valued: &[&str] = if program == "pkill" {
            &[
                "-s",
                "-u",
                "-U",
                "-g",
                "-G",
                "-P",
                "-t",
                "-F",
                "--signal",
                "--euid",
                "--uid",
                "--group",
                "--pgroup",
                "--parent",
                "--terminal",
                "--session",
                "--pidfile",
                "--ns",
                "--nslist",
            ]
        } else {
            &[
                "-s",
                "-u",
                "--signal",
                "--user",
                "-o",
                "-y",
                "--older-than",
                "--younger-than",
                "-n",
                "--ns",
                "-Z",
                "--context",
            ]
        };
        let mut full = false;
        let mut regex = program == "pkill";
        let mut exact = program == "killall";
        let mut ignore_case = false;
        let mut selected = false;
        let mut patterns = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let word = &args[i];
            let text = word.text.as_str();
            i += 1;
            if text == "--" {
                patterns.extend(args[i..].iter());
                break;
            }
            if valued.contains(&text) {
                selected |= text != "-s" && text != "--signal";
                if text == "-F" || text == "--pidfile" {
                    // A pid file: whose pid it holds cannot be told; one in hookd's folders is the daemon's.
                    if args
                        .get(i)
                        .is_some_and(|f| self.named_in(&f.text).is_some())
                    {
                        return true;
                    }
                }
                i += 1;
                continue;
            }
            if let Some(long) = text.strip_prefix("--") {
                match long {
                    "full" => full = true,
                    "regexp" => regex = true,
                    "exact" => exact = true,
                    "ignore-case" => ignore_case = true,
                    _ => selected |= long.starts_with("user=") || long.starts_with("uid="),
                }
                continue;
            }
            if let Some(flags) = text.strip_prefix('-').filter(|f| !f.is_empty()) {
                if flags.chars().all(|c| c.is_ascii_digit())
                    || flags.chars().all(|c| c.is_ascii_uppercase())
                {
                    continue; // a signal: -9, -KILL
                }
                full |= program == "pkill" && flags.contains('f');
                exact |= flags.contains('x');
                ignore_case |= flags.contains('i') || flags.contains('I');
                regex |= program == "killall" && flags.contains('r');
                continue;
            }
            patterns.push(word);
        }
        if patterns.is_empty() {
            return selected;
        }
        let name = "hookd";
        let line = if self.shield.daemon_command_line.is_empty() {
            "hookd serve".to_string()
        } else {
            self.shield.daemon_command_line.clone()
        };
        patterns.iter().any(|pattern| {
            if !pattern.known {
                return pattern.text.contains("hookd");
            }
            let text = pattern.text.as_str();
            if !regex {
                let base = text.rsplit('/').next().unwrap_or(text);
                return if ignore_case {
                    base.eq_ignore_ascii_case(name)
                } else {
                    base == name
                };
            }
            let source = if exact {
                format!("^(?:{text})$")
            } else {
                text.to_string()
            };
            let Ok(re) = regex::RegexBuilder::new(&source)
                .case_insensitive(ignore_case)
                .size_limit(1 << 20)
                .build()
            else {
                return false;
            };
            re.is_match(name) || (full && re.is_match(&line))
        })
    }

    /// Whether a `kill` argument that is a command's output (`$(pgrep hookd)`, `$(cat .../hookd.pid)`)
    /// finds the daemon.
    fn finds_daemon(&self, text: &str) -> bool {
        if self.named_in(text).is_some() {
            return true;
        }
        shell::read(text.trim_start_matches('$'), &self.shield.env)
            .iter()
            .any(|c| match c.program() {
                "pgrep" => self.pkill("pkill", c.args()),
                "pidof" => c
                    .args()
                    .iter()
                    .any(|a| a.text.rsplit('/').next() == Some("hookd")),
                "systemctl" => c.args().iter().any(|a| names_hookd_unit(&a.text)),
                _ => c.words.iter().any(|w| w.text.contains("hookd")),
            })
    }

    /// `hookd setup AGENT --undo` takes the relay out of an agent's settings; `hookd install --undo`
    /// (or an uninstall) takes the service away.
    fn hookd(&self, args: &[Word]) -> Option<String> {
        let command = args.iter().find(|a| !a.text.starts_with('-'))?;
        let undoes = args
            .iter()
            .any(|a| a.text == "--undo" || a.text == "--uninstall" || a.text == "--remove");
        match command.text.as_str() {
            "setup" if undoes => {
                Some("take hookd's relay out of an agent's settings (hookd setup --undo)".into())
            }
            "install" if undoes => Some("take hookd's service away (hookd install --undo)".into()),
            _ => None,
        }
    }
}

/// Whether a `chmod` mode lets the group or others write (`777`, `g+w`, `o=rwx`, `a+w`, `+w`).
fn grants_others_write(args: &[Word]) -> bool {
    let Some(mode) = args
        .iter()
        .find(|a| !a.text.starts_with('-') || a.text.starts_with("-w"))
    else {
        return false;
    };
    let mode = mode.text.as_str();
    if mode.chars().all(|c| c.is_ascii_digit()) {
        let digits: Vec<u32> = mode.chars().filter_map(|c| c.to_digit(8)).collect();
        return digits.iter().rev().take(2).any(|d| d & 2 != 0);
    }
    mode.split(',').any(|clause| {
        let (who, rest) = clause.split_at(clause.find(['+', '=']).unwrap_or(clause.len()));
        rest.contains('w') && (who.is_empty() || who.contains(['g', 'o', 'a']))
    })
}

/// `hookd`, `hookd.service`, `hookd.socket`, or a pattern that matches one of them.
fn names_hookd_unit(unit: &str) -> bool {
    ["hookd", "hookd.service", "hookd.socket"]
        .iter()
        .any(|name| unit == *name || paths::pattern_matches(unit, Path::new(name)))
}

/// `git` subcommands that only read the work tree.
fn git_only_reads(args: &[Word]) -> bool {
    let mut i = 0;
    while i < args.len() {
        let text = args[i].text.as_str();
        if text == "-C" || text == "-c" || text == "--git-dir" || text == "--work-tree" {
            i += 2;
            continue;
        }
        if text.starts_with('-') {
            i += 1;
            continue;
        }
        return [
            "status",
            "log",
            "diff",
            "show",
            "blame",
            "grep",
            "ls-files",
            "rev-parse",
            "shortlog",
            "describe",
            "cat-file",
            "ls-tree",
            "reflog",
            "whatchanged",
            "annotate",
        ]
        .contains(&text);
    }
    true
}

/// `path`, inside the guarded folder `guarded` (or that guarded path itself), in words.
fn describe_at(guarded: &Guarded, path: &Path) -> String {
    if path == guarded.path {
        describe(guarded)
    } else {
        format!(
            "{} (in {}: {})",
            path.display(),
            guarded.path.display(),
            guarded.what
        )
    }
}

fn describe(guarded: &Guarded) -> String {
    format!("{} ({})", guarded.path.display(), guarded.what)
}
