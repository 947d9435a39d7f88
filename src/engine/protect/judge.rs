//! A tool call read for what of hookd's it would touch: the paths it would write, move, delete or
//! change the mode of, and the daemon's process it would stop. What it would only read is let go.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::guard::call::{COMMAND_FIELDS, SHELL_TOOLS, command_text};
use crate::shell::{self, Command, Word};

use super::kept::Kept;
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
pub(super) fn judge(shield: &Kept, event: &Map<String, Value>) -> Option<String> {
    let tool = event.get("tool_name").and_then(Value::as_str).unwrap_or("");
    // A tool input sent as a JSON text (as Copilot CLI sends its `toolArgs`) is read as what it
    // holds; a text that is not JSON, as a shell tool's command.
    let decoded = crate::guard::call::tool_input(event);
    let input = decoded.as_deref();
    let cwd = event
        .get("cwd")
        .and_then(Value::as_str)
        .filter(|cwd| cwd.starts_with('/'))
        .map_or_else(|| shield.home.clone(), PathBuf::from);
    let judge = Judge {
        shield,
        real_folder: std::cell::RefCell::new(None),
        looked: std::cell::RefCell::new(None),
        resolved: std::cell::Cell::new(0),
        nested: std::cell::Cell::new(0),
        content_seen: std::cell::Cell::new(false),
    };
    if tool == "Bash"
        || tool == "PowerShell"
        || SHELL_TOOLS.contains(&tool.to_ascii_lowercase().as_str())
    {
        let command = input
            .and_then(|i| COMMAND_FIELDS.iter().find_map(|f| i.get(*f)))
            .map(command_text)?;
        return judge.shell(&command, &cwd);
    }
    if READ_ONLY_TOOLS.contains(&tool) || read_only_mcp(tool) {
        return None;
    }
    let input = input?;
    // The paths a file tool names, `~/` and `$HOME/` as the agent's tool would expand them (found
    // attacking the guard: a `Write` of `~/.config/hookd/hooks.toml` was judged relative to the folder).
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
    // An agent's project settings (`.claude/settings.local.json`) can switch its hooks off
    // (`"disableAllHooks": true`): a file tool's write there is refused when its text speaks of hooks.
    let file_tool = matches!(tool, "Write" | "Edit" | "MultiEdit" | "NotebookEdit");
    if file_tool || !named.is_empty() {
        let mut written = Vec::new();
        for field in CONTENT_FIELDS {
            if let Some(value) = input.get(*field) {
                collect_strings(value, 0, &mut written);
            }
        }
        let speaks_of_hooks = written
            .iter()
            .any(|text| text.to_ascii_lowercase().contains("hook"));
        judge.content_seen.set(!speaks_of_hooks);
    }
    for path in &named {
        let text = ["~/", "$HOME/", "${HOME}/"]
            .iter()
            .find_map(|prefix| path.strip_prefix(prefix))
            .map_or_else(
                || path.clone(),
                |rest| shield.home.join(rest).to_string_lossy().into_owned(),
            );
        let word = Word {
            text,
            known: true,
            glob: false,
        };
        if let Some(found) = judge.target(&word, &cwd, false) {
            return Some(format!("write {found}"));
        }
    }
    if !named.is_empty() && matches!(tool, "Write" | "Edit" | "MultiEdit" | "NotebookEdit") {
        return None;
    }
    // A tool that runs a command line it is given (an MCP server's `execute_command`): the line is
    // judged as a shell's (found attacking the guard: `pkill hookd` named no path, and went through).
    for field in COMMAND_FIELDS {
        if let Some(command) = input.get(*field).filter(|v| v.is_string() || v.is_array())
            && let Some(found) = judge.shell(&command_text(command), &cwd)
        {
            return Some(found);
        }
    }
    // Any other tool (an MCP server's, a new one): whatever path of hookd's it names, outside what
    // it writes into a file (a README that names the settings is no change to them).
    let mut strings = Vec::new();
    match input {
        Value::Object(map) => map
            .iter()
            .filter(|(key, _)| named.is_empty() || !CONTENT_FIELDS.contains(&key.as_str()))
            .for_each(|(_, value)| collect_strings(value, 1, &mut strings)),
        other => collect_strings(other, 0, &mut strings),
    }
    strings.iter().find_map(|text| {
        judge
            .mentions(text, &cwd)
            .map(|found| format!("name {found}, which a {tool} call may change"))
    })
}

/// The fields a file tool gives the text it writes in: what the file will say, not where it goes.
const CONTENT_FIELDS: &[&str] = &[
    "content",
    "contents",
    "text",
    "new_string",
    "old_string",
    "new_str",
    "old_str",
    "file_text",
    "new_source",
    "edits",
    "insert_text",
    "body",
];

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
    "shellcheck",
];

/// Programs that run a command line given among their words, elsewhere or later (a terminal, a
/// multiplexer's session, a login to this machine).
const SCRIPT_RUNNERS: &[&str] = &[
    "tmux",
    "screen",
    "ssh",
    "dtach",
    "abduco",
    "xterm",
    "gnome-terminal",
    "konsole",
    "kitty",
    "alacritty",
    "wezterm",
    "foot",
    "flatpak-spawn",
    "distrobox-host-exec",
    "machinectl",
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

/// What `Judge::real` saw of a path: `None`, not there; else its number of names and whether it is a
/// folder.
type Seen = Option<(u64, bool)>;

struct Judge<'s> {
    shield: &'s Kept,
    /// The last folder a path was resolved in, with its links followed: a call's words are mostly in
    /// one folder, which is resolved once, not once per word.
    real_folder: std::cell::RefCell<Option<(PathBuf, Option<PathBuf>)>>,
    /// The last path `real` looked at, with what it saw of it (`None`: not there; else its number of
    /// names and whether it is a folder), so that `same_file` does not look again.
    looked: std::cell::RefCell<Option<(PathBuf, Seen)>>,
    /// How many paths of this call had their links followed ([`MAX_RESOLVED`]).
    resolved: std::cell::Cell<usize>,
    /// How many lines found inside this call's were judged ([`MAX_NESTED`]).
    nested: std::cell::Cell<usize>,
    /// The call is a file tool's whose written text is judged on its own (an agent's project settings
    /// written without a word of hooks are let go): [`project_agent_settings`].
    content_seen: std::cell::Cell<bool>,
}

/// How many command lines found inside a call's (a script piped to a shell, a `tmux` session's) are
/// judged, in all.
const MAX_NESTED: usize = 64;

/// File names too common to tell a folder by (see [`Judge::by_tail`]).
const COMMON_NAMES: &[&str] = &[
    "config.toml",
    "config.json",
    "settings.json",
    "settings.local.json",
    "config",
];

/// How many paths of one call are looked up on the file system (links followed, hard links compared).
const MAX_RESOLVED: usize = 256;

impl Judge<'_> {
    /// A shell command line: every command it could run, in order, with the folder `cd` leaves.
    fn shell(&self, line: &str, cwd: &Path) -> Option<String> {
        let commands = shell::read(line, &self.shield.env);
        let mut folders = Folders {
            now: cwd.to_path_buf(),
            before: None,
            stack: Vec::new(),
        };
        for (at, command) in commands.iter().enumerate() {
            if let Some(found) = self.command(command, &commands[..at], &mut folders) {
                return Some(found);
            }
        }
        None
    }

    /// One command, after the ones before it on the line (`before`).
    fn command(
        &self,
        command: &Command,
        before: &[Command],
        folders: &mut Folders,
    ) -> Option<String> {
        let program = command.program();
        let args = command.args();
        if matches!(program, "cd" | "pushd" | "popd" | "chdir") {
            folders.change(program, args, &self.shield.home, &self.shield.guarded);
        }
        let cwd = folders.now.clone();
        let cwd = &cwd;
        for redirect in command.redirects.iter().filter(|r| r.writes) {
            if let Some(found) = self.target(&redirect.target, cwd, false) {
                return Some(format!("write {found}"));
            }
        }
        if matches!(program, "cd" | "pushd" | "popd" | "chdir") {
            return None;
        }
        if let Some(found) = self.signals(command) {
            return Some(found);
        }
        if command.fed
            && matches!(program, "kill" | "Stop-Process" | "spps")
            && before
                .iter()
                .rev()
                .take_while(|c| c.piped)
                .any(|c| self.lists_daemon(c))
        {
            // `pgrep hookd | xargs kill` (found attacking the guard).
            return Some("stop or kill the hookd daemon".into());
        }
        if program == "patch" {
            // `patch -p1 < x` writes the files the patch names, from its folder (`-d DIR`).
            let dir = args
                .iter()
                .position(|a| a.text == "-d" || a.text == "--directory")
                .and_then(|at| args.get(at + 1))
                .cloned()
                .unwrap_or_else(|| Word {
                    text: ".".into(),
                    known: true,
                    glob: false,
                });
            if let Some(found) = self.target(&dir, cwd, true) {
                return Some(format!("patch files in {found}"));
            }
        }
        if command.fed && !READERS.contains(&program) && !matches!(program, "sed" | "awk") {
            // `... | xargs rm`: what it is given comes from the commands before it (`xargs grep`
            // only reads what it is given).
            let everything = before.iter().chain(std::iter::once(command));
            for word in everything.flat_map(|c| c.words.iter()) {
                if let Some(found) = self.mentions(&word.text, cwd) {
                    return Some(format!("give {found} to {program}, which may change it"));
                }
            }
            // `find ~/.config -type f | xargs rm`: a folder a lister walks gives what is below it.
            for feeder in before.iter().rev().take_while(|c| c.piped) {
                if !matches!(
                    feeder.program(),
                    "find" | "fd" | "fdfind" | "ls" | "tree" | "du"
                ) {
                    continue;
                }
                for word in feeder.args().iter().filter(|w| !w.text.starts_with('-')) {
                    if let Some(found) = self.target(word, cwd, true) {
                        return Some(format!("give {found} to {program}, which may change it"));
                    }
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
                        && a.text.contains('i'))
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
        if program == "git"
            && let Some(dir) = git_folder(args, cwd)
        {
            // `git -C ~ checkout -- .config/hookd/hooks.toml`: its paths are from the folder it goes to.
            for word in args {
                if let Some(found) = self.mentions(&word.text, &dir) {
                    return Some(format!("give {found} to git, which may change it"));
                }
            }
        }
        if program == "hookd" {
            return self.hookd(args);
        }
        if READERS.contains(&program) {
            return None;
        }
        if matches!(program, "sed" | "gsed" | "awk" | "gawk" | "mawk" | "nawk") {
            return self.filter(program, args, cwd);
        }
        if let Some(found) = self.archive(program, args, cwd) {
            return Some(found);
        }
        if let Some(made) = self.packs(program, args, cwd) {
            return made;
        }
        if let Some(found) = self.later(command, before, program, args, cwd) {
            return Some(found);
        }
        let interpreter =
            shell::unwrap::SHELLS.contains(&program) || INTERPRETERS.contains(&program);
        if INTERPRETERS.contains(&program)
            && let Some(found) = self.code_stops_daemon(command, args)
        {
            return Some(found);
        }
        let runs_input =
            interpreter && before.last().is_some_and(|c| c.piped) && reads_its_input(program, args);
        if runs_input {
            // `echo 'rm ~/.config/hookd/hooks.toml' | sh`: what comes down the pipe is code.
            let feeders: Vec<&Command> = before.iter().rev().take_while(|c| c.piped).collect();
            for word in feeders.iter().flat_map(|c| c.words.iter()) {
                if let Some(found) = self.mentions(&word.text, cwd) {
                    return Some(format!("run code that names {found}"));
                }
            }
            // `echo pkill hookd | sh`: what `echo` or `printf` prints is read as the script.
            if shell::unwrap::SHELLS.contains(&program) {
                for feeder in feeders
                    .iter()
                    .filter(|c| matches!(c.program(), "echo" | "printf"))
                {
                    let script = feeder
                        .args()
                        .iter()
                        .filter(|w| !w.text.starts_with('-'))
                        .map(|w| w.text.as_str())
                        .collect::<Vec<_>>()
                        .join(" ");
                    if let Some(found) = self.nested_line(&script, cwd) {
                        return Some(found);
                    }
                }
            }
        }
        if program.starts_with("python")
            && let Some(at) = args.iter().position(|a| a.text == "-m")
            && args.get(at + 1).is_some_and(|m| m.text == "json.tool")
        {
            // `python3 -m json.tool IN [OUT]`: reads IN, writes OUT.
            let out = args[at + 2..]
                .iter()
                .filter(|a| !a.text.starts_with('-'))
                .nth(1);
            return out
                .and_then(|out| self.target(out, cwd, false))
                .map(|found| format!("write {found}"));
        }
        if interpreter
            && !args
                .iter()
                .any(|a| a.text.starts_with("-c") || a.text == "-e")
        {
            // `python3 ~/.config/hookd/deny.py`, `bash -n guard.sh`: the script is read, not changed;
            // the words after it are judged as any program's.
            let script = args.iter().position(|a| !a.text.starts_with('-'));
            for (at, word) in args.iter().enumerate() {
                if Some(at) == script {
                    continue;
                }
                if let Some(found) = self.mentions(&word.text, cwd) {
                    return Some(format!("give {found} to {program}, which may change it"));
                }
            }
            return self.here_names(command, program, cwd);
        }
        // A program hookd cannot tell, run in a guarded folder (`cd ~/.config/hookd && git apply x`,
        // `make`, `python3 -c "open('hooks.toml', 'w')"`): what it writes there cannot be told.
        if let Some(guarded) = self
            .shield
            .guarded
            .iter()
            .find(|guarded| guarded.folder && guarded.covers(cwd))
        {
            return Some(format!(
                "run {program} in {}, which may change it",
                describe_at(guarded, cwd)
            ));
        }
        // A program hookd cannot tell: whatever path of hookd's its words name (but a commit's
        // message, which only says it: `git commit -m 'explain ~/.config/hookd/hooks.toml'`).
        let message = |at: usize| {
            program == "git"
                && at > 0
                && command
                    .words
                    .get(at - 1)
                    .is_some_and(|w| w.text == "-m" || w.text == "--message")
        };
        // Its own name only when it is a path: `cargo` is found on PATH, not in the call's folder.
        for (at, word) in command.words.iter().enumerate() {
            if (at == 0 && !word.text.contains('/'))
                || message(at)
                || (program == "git" && word.text.starts_with("--message="))
            {
                continue;
            }
            if let Some(found) = self.mentions(&word.text, cwd) {
                return Some(format!("give {found} to {program}, which may change it"));
            }
        }
        self.here_names(command, program, cwd)
    }

    /// `tar -c` and `zip`, packing files into an archive: they read what they pack and write only the
    /// archive (found attacking the guard: `tar -czf backup.tgz ~/.config/hookd` was refused), unless
    /// they move what they pack (`zip -m`, `tar --remove-files`). `None` when `program` is neither, or
    /// `tar` unpacks (see [`Judge::archive`]).
    fn packs(&self, program: &str, args: &[Word], cwd: &Path) -> Option<Option<String>> {
        let operands: Vec<&Word> = args.iter().filter(|a| !a.text.starts_with('-')).collect();
        let (archive, moves) = match program {
            "tar" | "bsdtar" | "gtar" => {
                let unpacks = tar_unpacks(args);
                if unpacks {
                    return None;
                }
                let archive = args.iter().enumerate().find_map(|(at, a)| {
                    if let Some(file) = a.text.strip_prefix("--file=") {
                        return Some(Word {
                            text: file.into(),
                            ..a.clone()
                        });
                    }
                    let short = (a.text.starts_with('-') && !a.text.starts_with("--"))
                        || (at == 0 && !a.text.starts_with('-'));
                    (a.text == "--file" || (short && a.text.ends_with('f')))
                        .then(|| args.get(at + 1).cloned())
                        .flatten()
                });
                (archive, args.iter().any(|a| a.text == "--remove-files"))
            }
            "zip" => (
                operands.first().map(|w| (*w).clone()),
                args.iter().any(|a| {
                    a.text == "--move"
                        || (a.text.starts_with('-')
                            && !a.text.starts_with("--")
                            && a.text.contains('m'))
                }),
            ),
            _ => return None,
        };
        if moves {
            for operand in &operands {
                if let Some(found) = self.target(operand, cwd, true) {
                    return Some(Some(format!("move {found} into an archive")));
                }
            }
        }
        Some(
            archive
                .and_then(|file| self.target(&file, cwd, false))
                .map(|found| format!("write {found}")),
        )
    }

    /// A command that runs a command line elsewhere or later: `at`, `batch` and `crontab` read one
    /// from their input (a here-document, or `echo ... |`), and `tmux`, `screen`, `ssh` and terminals
    /// take one among their words (found attacking the guard: `echo pkill hookd | at now`, `tmux new
    /// -d 'pkill hookd'`). Each is judged as a line of its own.
    fn later(
        &self,
        command: &Command,
        before: &[Command],
        program: &str,
        args: &[Word],
        cwd: &Path,
    ) -> Option<String> {
        if matches!(program, "at" | "batch" | "crontab") {
            let mut scripts: Vec<String> = command.here.iter().cloned().collect();
            if before.last().is_some_and(|c| c.piped) {
                for feeder in before.iter().rev().take_while(|c| c.piped) {
                    let words: Vec<&str> = feeder
                        .args()
                        .iter()
                        .filter(|w| !w.text.starts_with('-'))
                        .map(|w| w.text.as_str())
                        .collect();
                    scripts.push(words.join(" "));
                }
            }
            for script in scripts {
                for line in script.replace("\\n", "\n").lines() {
                    // A crontab line's command comes after its five times (or an `@daily`).
                    let line = if program == "crontab" {
                        let skip = if line.trim_start().starts_with('@') {
                            1
                        } else {
                            5
                        };
                        line.split_whitespace()
                            .skip(skip)
                            .collect::<Vec<_>>()
                            .join(" ")
                    } else {
                        line.to_string()
                    };
                    if let Some(found) = self.nested_line(&line, cwd) {
                        return Some(found);
                    }
                }
            }
            return None;
        }
        if !SCRIPT_RUNNERS.contains(&program) {
            return None;
        }
        for from in 0..args.len().min(32) {
            let line = args[from..]
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            if let Some(found) = self.nested_line(&line, cwd) {
                return Some(found);
            }
        }
        None
    }

    /// Code given to an interpreter (`-c`, `-e`, a here-document) that signals the daemon by its pid
    /// (`os.kill(PID, 9)`) or runs a command that names it with a stop (`subprocess.run(['pkill',
    /// 'hookd'])`): found attacking the guard. Code that builds the pid or the name is a disguise
    /// (docs/security.md).
    fn code_stops_daemon(&self, command: &Command, args: &[Word]) -> Option<String> {
        let pid = self.shield.daemon_pid.map(|p| p.to_string());
        let codes = args
            .iter()
            .map(|a| a.text.as_str())
            .chain(command.here.as_deref());
        for code in codes {
            let by_pid = pid.as_deref().is_some_and(|pid| {
                code.match_indices(pid).any(|(at, _)| {
                    let before = code[..at].chars().next_back();
                    let after = code[at + pid.len()..].chars().next();
                    before.is_some_and(|c| !c.is_alphanumeric() && c != '.')
                        && after.is_none_or(|c| !c.is_alphanumeric() && c != '.')
                        && code.contains("kill")
                })
            });
            let lower = code.to_ascii_lowercase();
            let by_name = lower.contains("hookd")
                && ["kill", "systemctl", "terminate", "signal", "stop"]
                    .iter()
                    .any(|verb| lower.contains(verb));
            if by_pid || by_name {
                return Some("stop or kill the hookd daemon".into());
            }
        }
        None
    }

    /// A here-document or here-string that names a guarded path, given to `program`.
    fn here_names(&self, command: &Command, program: &str, cwd: &Path) -> Option<String> {
        let here = command.here.as_deref()?;
        let found = self.mentions(here, cwd)?;
        Some(format!("give {found} to {program}, which may change it"))
    }

    /// A line of shell found inside another command (a script piped to a shell), judged from `cwd`.
    /// At most [`MAX_NESTED`] such lines per call: `tmux tmux tmux ...` must not judge a line for each
    /// way of splitting it, nested without end.
    fn nested_line(&self, line: &str, cwd: &Path) -> Option<String> {
        let used = self.nested.get();
        if line.len() > 64 * 1024 || used >= MAX_NESTED {
            return None;
        }
        self.nested.set(used + 1);
        self.shell(line, cwd)
    }

    /// `sed` and `awk` without `-i`: they read their files, but a script may write one (`sed 'w
    /// FILE'`, `awk '{print > FILE}'`, `system(...)`): a script that can write has all its words judged
    /// as any program's; else only a path named inside it (found attacking the guard: `sed -n 1,20p
    /// hooks.toml`, a read, was refused).
    fn filter(&self, program: &str, args: &[Word], cwd: &Path) -> Option<String> {
        let awk = program.ends_with("awk");
        // The script: `-e SCRIPT` (sed), or the first word that is not an option; the rest are files.
        let mut scripts = Vec::new();
        let mut files = Vec::new();
        let mut at = 0;
        while let Some(arg) = args.get(at) {
            at += 1;
            let text = arg.text.as_str();
            if (!awk && (text == "-e" || text == "--expression")) || (awk && text == "-v") {
                if let Some(value) = args.get(at) {
                    scripts.push(value);
                }
                at += 1;
            } else if text == "-f" || text == "--file" {
                at += 1;
            } else if text.starts_with('-') && text != "-" {
                continue;
            } else {
                files.push(arg);
            }
        }
        if scripts.is_empty() && !files.is_empty() {
            scripts.push(files.remove(0));
        }
        for script in &scripts {
            if let Some(found) = self.named_in(&script.text) {
                return Some(format!(
                    "give {} to {program}, which may change it",
                    describe(found)
                ));
            }
        }
        let writes = scripts.iter().any(|s| {
            if awk {
                s.text.contains(['>', '|']) || s.text.contains("system")
            } else {
                s.text.contains("w ") || s.text.contains("W ") || s.text.contains('e')
            }
        });
        if !writes {
            return None;
        }
        for file in &files {
            if let Some(found) = self.mentions(&file.text, cwd) {
                return Some(format!("give {found} to {program}, which may change it"));
            }
        }
        if !awk {
            // `sed 'w FILE'`: the file a `w` command writes, relative to the folder.
            for script in &scripts {
                for (at, _) in script.text.match_indices(['w', 'W']) {
                    let Some(rest) = script.text[at + 1..].strip_prefix(' ') else {
                        continue;
                    };
                    let file = rest.split(['\n', ';']).next().unwrap_or("").trim();
                    let word = Word {
                        text: file.to_string(),
                        known: script.known,
                        glob: false,
                    };
                    if let Some(found) = self.target(&word, cwd, false) {
                        return Some(format!("write {found}"));
                    }
                }
            }
        }
        None
    }

    /// `tar -x`, `unzip`, `bsdtar -x`, `7z x`, `cpio -i`: an archive unpacked into a folder that is
    /// guarded or holds a guarded path, whose names cannot be told from the line (found attacking the
    /// guard: `tar -xf evil.tar -C ~` could unpack `.config/hookd/hooks.toml`).
    fn archive(&self, program: &str, args: &[Word], cwd: &Path) -> Option<String> {
        let valued = |names: &[&str]| {
            args.iter().enumerate().find_map(|(at, a)| {
                names.iter().find_map(|name| {
                    if a.text == *name {
                        args.get(at + 1).cloned()
                    } else {
                        a.text.strip_prefix(&format!("{name}=")).map(|dir| Word {
                            text: dir.into(),
                            ..a.clone()
                        })
                    }
                })
            })
        };
        let (unpacks, dir) = match program {
            "tar" | "bsdtar" | "gtar" => {
                let unpacks = tar_unpacks(args);
                (unpacks, valued(&["-C", "--directory"]))
            }
            "unzip" => (true, valued(&["-d"])),
            "7z" | "7za" | "7zr" => (
                args.first().is_some_and(|a| a.text == "x" || a.text == "e"),
                args.iter().find_map(|a| {
                    a.text.strip_prefix("-o").map(|dir| Word {
                        text: dir.into(),
                        ..a.clone()
                    })
                }),
            ),
            "cpio" => (
                args.iter().any(|a| {
                    a.text == "--extract" || (a.text.starts_with('-') && a.text.contains('i'))
                }),
                valued(&["-D", "--directory"]),
            ),
            _ => return None,
        };
        if !unpacks {
            return None;
        }
        let dir = dir.unwrap_or_else(|| Word {
            text: ".".into(),
            known: true,
            glob: false,
        });
        let found = self.target(&dir, cwd, true)?;
        Some(format!("unpack an archive into {found}"))
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
            "chmod" => recursive || grants_others_write(args) || takes_from_owner(args),
            "chown" | "chgrp" | "setfacl" => true,
            _ => whole,
        };
        // A copy only reads its sources, and a move or a link lands in its destination: the
        // destination is judged below, as the place written.
        // A copy that links instead (`cp -l`, `cp -s`, `rsync --link-dest`) makes a second name for
        // its source: writing that name later writes the source (found attacking the guard).
        let links = program == "cp"
            && args.iter().any(|a| {
                a.text == "--link"
                    || a.text == "--symbolic-link"
                    || (a.text.starts_with('-')
                        && !a.text.starts_with("--")
                        && a.text.contains(['l', 's']))
            });
        let (sources, last) = match program {
            "cp" if links && operands.len() > 1 => {
                (&operands[..operands.len() - 1], operands.last())
            }
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
            if a.text == "-t" || a.text == "--target-directory" {
                args.get(at + 1).cloned()
            } else if let Some(dir) = a.text.strip_prefix("-t").filter(|d| !d.is_empty()) {
                Some(Word {
                    text: dir.into(),
                    ..a.clone()
                })
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
                // `rsync -a src/ ~/` and `cp -r src/. ~/` copy what is inside the source into the
                // destination itself, whose names cannot be told: the destination counts whole.
                let contents = sources.iter().any(|s| {
                    s.text.ends_with("/.")
                        || (program == "rsync" && s.text.ends_with('/'))
                        || s.glob
                });
                let deletes = contents
                    || args.iter().any(|a| {
                        a.text.starts_with("--delete") || a.text == "--remove-destination"
                    });
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
                            glob: source.glob,
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
            // An unknown path (`$X/f`) cannot be told; the text may still name a guarded path whole,
            // or end in the names of one (`"$(dirname ...)"/hooks.toml`, `~-/hooks.toml`).
            return self
                .named_in(&word.text)
                .or_else(|| self.by_tail(known_tail(&word.text)?, false))
                .map(describe);
        }
        let unknown = Path::new(UNKNOWN_FOLDER);
        if cwd.starts_with(unknown) && !word.text.starts_with('/') {
            // Relative to a folder that cannot be told (`cd "$X" && rm hooks.toml`): by its names.
            let rest = cwd.strip_prefix(unknown).unwrap_or(Path::new(""));
            let tail = format!("/{}", rest.join(&word.text).to_string_lossy());
            return self.by_tail(&tail, word.glob).map(describe);
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
        let path = through_proc_self(&cwd.join(&word.text), cwd);
        // Links are followed for the first targets of a line only: a line of a million words must not
        // cost a million walks of the file system (the names as written are still judged).
        // Links under /dev and /proc are never followed: resolved in the daemon, `/dev/fd/3`,
        // `/dev/stdout` and `/proc/self/...` would name the daemon's own process, not the agent's
        // (found attacking the guard: `done < <(curl ...)` was refused as a change to the daemon).
        let budget = if path.starts_with("/dev") || path.starts_with("/proc") {
            MAX_RESOLVED
        } else {
            self.resolved.get()
        };
        let resolving = resolve && budget < MAX_RESOLVED;
        let (real, kernel) = if resolving {
            self.resolved.set(budget + 1);
            // `..` after a link is the link's parent's, as the kernel reads it, not the one written.
            let kernel = word
                .text
                .contains("..")
                .then(|| std::fs::canonicalize(cwd.join(&word.text)).ok())
                .flatten();
            (self.real(&path, cwd), kernel)
        } else {
            (None, None)
        };
        if resolving && let Some(found) = self.same_file(&path) {
            return Some(found);
        }
        for form in std::iter::once(&path)
            .chain(real.as_ref())
            .chain(kernel.as_ref())
        {
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
            if !self.content_seen.get()
                && let Some(what) = project_agent_settings(form)
            {
                return Some(format!("{} ({what})", path.display()));
            }
        }
        None
    }

    /// The guarded path whose trailing names are `tail` (`/hooks.toml`, `/.config/hookd/x.py`), or that
    /// is a guarded folder holding it: what a path below a folder that cannot be told may be. A pattern
    /// is matched only when it holds a letter or a digit (`*.toml`), not when it is all wildcards (`*`
    /// in a folder that cannot be told is let go: docs/security.md).
    fn by_tail(&self, tail: &str, glob: bool) -> Option<&Guarded> {
        let parts: Vec<&str> = tail
            .split('/')
            .filter(|p| !p.is_empty() && *p != ".")
            .collect();
        // A bare name that projects use as often as agents do (`config.toml`, `settings.json`) is
        // not enough to take a folder that cannot be told for an agent's (`cd "$(git rev-parse
        // --show-toplevel)" && sed -i ... config.toml` is ordinary work).
        let common = parts.len() == 1 && COMMON_NAMES.contains(&parts[0]);
        if parts.is_empty()
            || common
            || parts.contains(&"..")
            || (glob && !tail.chars().any(char::is_alphanumeric))
        {
            return None;
        }
        let hits = |form: &Path, folder: bool| {
            let names: Vec<String> = form
                .components()
                .filter_map(|c| match c {
                    std::path::Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
                    _ => None,
                })
                .collect();
            (1..=parts.len()).any(|k| {
                if (k < parts.len() && !folder) || k > names.len() {
                    return false;
                }
                let last = &names[names.len() - k..];
                if glob {
                    paths::pattern_matches(&parts[..k].join("/"), Path::new(&last.join("/")))
                } else {
                    parts[..k].iter().zip(last).all(|(p, n)| p == n)
                }
            })
        };
        self.shield.guarded.iter().find(|g| {
            hits(&g.path, g.folder) || g.real.as_deref().is_some_and(|r| hits(r, g.folder))
        })
    }

    /// A file that is a guarded file under another name (a hard link made earlier: `cp -l`, `ln`), so
    /// that writing it writes the guarded one (found attacking the guard).
    fn same_file(&self, path: &Path) -> Option<String> {
        use std::os::unix::fs::MetadataExt;
        if let Some((looked, seen)) = self.looked.borrow().as_ref()
            && looked == path
        {
            // Looked at already, no link: not there, a folder, or a file with one name only.
            match seen {
                None => return None,
                Some((links, folder)) if *links < 2 || *folder => return None,
                Some(_) => {}
            }
        }
        let meta = std::fs::metadata(path).ok()?;
        if meta.nlink() < 2 || meta.is_dir() {
            return None;
        }
        self.shield
            .guarded
            .iter()
            .filter(|g| !g.folder)
            .find_map(|g| {
                let theirs = std::fs::metadata(&g.path).ok()?;
                (theirs.dev() == meta.dev() && theirs.ino() == meta.ino())
                    .then(|| format!("{}, a hard link to {}", path.display(), describe(g)))
            })
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
        let (mut last, mut missing) = (None, false);
        for name in names.by_ref() {
            resolved.push(name);
            match std::fs::symlink_metadata(&resolved) {
                Ok(meta) if meta.file_type().is_symlink() => return paths::real(path),
                Ok(meta) => last = Some(meta),
                // Not there (yet): nothing below it can be a link.
                Err(_) => {
                    missing = true;
                    break;
                }
            }
        }
        // What was seen of the path itself, no link: `same_file` need not look at it again.
        let seen = if missing {
            Some(None)
        } else {
            last.map(|meta| {
                use std::os::unix::fs::MetadataExt;
                Some((meta.nlink(), meta.is_dir()))
            })
        };
        if let Some(seen) = seen {
            *self.looked.borrow_mut() = Some((path.to_path_buf(), seen));
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
            "kill"
                if args
                    .iter()
                    .any(|a| a.text.eq_ignore_ascii_case("-Name") || a.text == "-ProcessName") =>
            {
                args.iter()
                    .any(|a| a.text.eq_ignore_ascii_case("hookd"))
                    .then(stop)
            }
            "kill" => {
                let mut probe = false;
                let mut after_dashes = false;
                let mut i = 0;
                while i < args.len() {
                    let text = args[i].text.as_str();
                    i += 1;
                    // `kill -9 -$(pgrep hookd)`: the daemon's group, a command's output after a `-`
                    // that an option would be read as (found attacking the guard).
                    if !args[i - 1].known
                        && text.starts_with("-$")
                        && !probe
                        && self.finds_daemon(&text[1..])
                    {
                        return Some(stop());
                    }
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
            // Tools that take hold of a running process by its pid (`prlimit --pid PID --nofile=0`
            // leaves the daemon no descriptor to answer with; `gdb -p PID` can stop it).
            "prlimit" | "gdb" | "lldb" | "strace" | "ltrace" | "gcore" | "perf" | "criu" => {
                let pid = self.shield.daemon_pid?.to_string();
                args.iter()
                    .any(|a| {
                        a.text == pid
                            || a.text.strip_prefix("--pid=") == Some(&pid)
                            || a.text.strip_prefix("-p") == Some(&pid)
                            || (!a.known && self.finds_daemon(&a.text))
                    })
                    .then(stop)
            }
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
                    "preset",
                    "link",
                    "reenable",
                ];
                let words: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
                if words.iter().any(|w| {
                    ["exit", "halt", "poweroff", "reboot", "kexec", "soft-reboot"].contains(w)
                }) && words.contains(&"--user")
                {
                    return Some(stop());
                }
                // The verb is the first word that is neither an option nor an option's value
                // (found attacking the guard: `systemctl --user -s KILL kill hookd`).
                let mut verb = None;
                let mut at = 0;
                while let Some(word) = words.get(at) {
                    at += 1;
                    if !word.starts_with('-') {
                        verb = Some(word);
                        break;
                    }
                    if SYSTEMCTL_VALUED.contains(word) {
                        at += 1;
                    }
                }
                let after_verb = || {
                    args.iter()
                        .skip_while(|a| Some(&a.text.as_str()) != verb)
                        .skip(1)
                };
                if verb.is_some_and(|v| verbs.contains(v))
                    && after_verb().any(|unit| {
                        !unit.text.starts_with('-')
                            && (names_hookd_unit(&unit.text)
                                || unit.text.starts_with("user@")
                                // `stop $(systemctl --user list-units | grep hook ...)`
                                || (!unit.known && self.finds_daemon(&unit.text)))
                    })
                {
                    return Some(stop());
                }
                // `systemctl --user set-environment HOOKD_CONFIG=/tmp/x`, then a restart: the daemon
                // back on settings of the agent's choosing (found attacking the guard).
                if verb == Some(&"isolate") {
                    // `isolate` stops every unit the target does not want, hookd's perhaps among them.
                    return Some(stop());
                }
                let environment = ["set-environment", "unset-environment", "import-environment"];
                if verb.is_some_and(|v| environment.contains(v)) {
                    let names: Vec<&Word> =
                        after_verb().filter(|a| !a.text.starts_with('-')).collect();
                    if names.is_empty()
                        || names
                            .iter()
                            .any(|a| !a.known || a.text.to_ascii_uppercase().contains("HOOKD"))
                    {
                        return Some("change the environment hookd's service starts with".into());
                    }
                }
                None
            }
            // PowerShell's `Stop-Process -Name hookd` (`spps`, and `kill` above is its alias there).
            "Stop-Process" | "spps" | "stop-process" => args
                .iter()
                .any(|a| {
                    a.text.eq_ignore_ascii_case("hookd")
                        || a.text.parse::<i64>().ok() == self.shield.daemon_pid.map(i64::from)
                        || (!a.known && self.finds_daemon(&a.text))
                })
                .then(stop),
            // `busctl`/`gdbus`/`dbus-send` calling systemd's `StopUnit` (or its kind) on hookd's unit.
            "busctl" | "gdbus" | "dbus-send" | "qdbus" => {
                let words: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
                let stops = words.iter().any(|w| {
                    [
                        "StopUnit",
                        "KillUnit",
                        "DisableUnitFiles",
                        "MaskUnitFiles",
                        "Exit",
                    ]
                    .iter()
                    .any(|m| w.ends_with(m))
                });
                let names = words
                    .iter()
                    .any(|w| names_hookd_unit(w.trim_matches(['"', '\''])) || w.contains("hookd"));
                (stops && names).then(stop)
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
            .any(|c| self.lists_daemon(c))
    }

    /// Whether a command prints the daemon's pid or unit (`pgrep hookd`, `pidof hookd`, `grep hook[d]`):
    /// what a `kill` given its output would signal.
    fn lists_daemon(&self, c: &Command) -> bool {
        match c.program() {
            "pgrep" => self.pkill("pkill", c.args()),
            "pidof" => c
                .args()
                .iter()
                .any(|a| a.text.rsplit('/').next() == Some("hookd")),
            "systemctl" => c.args().iter().any(|a| names_hookd_unit(&a.text)),
            // `ps aux | grep hook[d] | awk ...`: a pattern that finds hookd's name.
            "grep" | "egrep" | "fgrep" | "rg" | "awk" => c.args().iter().any(|a| {
                a.text.contains("hookd")
                    || regex::RegexBuilder::new(a.text.trim_matches('/'))
                        .case_insensitive(true)
                        .size_limit(1 << 20)
                        .build()
                        .is_ok_and(|re| re.is_match("hookd") && !re.is_match("x"))
            }),
            _ => c.words.iter().any(|w| w.text.contains("hookd")),
        }
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
            // `hookd install --bin /tmp/fake --force`: the units rewritten to start another program
            // as the daemon (found attacking the guard).
            "install"
                if args.iter().any(|a| {
                    a.text == "--bin" || a.text.starts_with("--bin=") || a.text == "--force"
                }) =>
            {
                Some("rewrite hookd's systemd units (hookd install --bin or --force)".into())
            }
            // `hookd setup AGENT --socket /tmp/nowhere.sock`: the relay pointed at a socket nothing
            // answers, where it lets every call through (found attacking the guard).
            "setup" => {
                let dry = args.iter().any(|a| a.text == "--dry-run");
                let socket = args.iter().enumerate().find_map(|(at, a)| {
                    if a.text == "--socket" {
                        args.get(at + 1).cloned()
                    } else {
                        a.text.strip_prefix("--socket=").map(|s| Word {
                            text: s.into(),
                            ..a.clone()
                        })
                    }
                });
                let ours = |word: &Word| {
                    word.known
                        && self.shield.guarded.iter().any(|g| {
                            g.what == "hookd's socket"
                                && paths::absolute(&self.shield.home, &word.text) == g.path
                        })
                };
                match socket {
                    Some(socket) if !dry && !ours(&socket) => Some(format!(
                        "point hookd's relay at another socket ({}) (hookd setup --socket)",
                        socket.text
                    )),
                    _ => None,
                }
            }
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

/// `systemctl`'s options that take the next word as their value.
const SYSTEMCTL_VALUED: &[&str] = &[
    "-t",
    "--type",
    "-s",
    "--signal",
    "-p",
    "--property",
    "-P",
    "-n",
    "--lines",
    "-o",
    "--output",
    "-H",
    "--host",
    "-M",
    "--machine",
    "--state",
    "--job-mode",
    "--kill-whom",
    "--kill-value",
    "--root",
    "--image",
    "--what",
    "--timestamp",
    "--preset-mode",
    "--drop-in",
    "--message",
    "--when",
    "--reboot-argument",
    "--boot-loader-entry",
    "--boot-loader-menu",
    "--image-policy",
];

/// Whether a `chmod` mode may take reading or searching from the owner (`000`, `a-x`, `u=w`): on a
/// folder above the settings, hookd could no longer read them when it restarts (found attacking issue
/// 29: `chmod 000 ~/.config`).
fn takes_from_owner(args: &[Word]) -> bool {
    let Some(mode) = args.iter().find(|a| {
        !a.text.starts_with('-') || a.text.len() > 1 && a.text[1..].starts_with(['r', 'w', 'x'])
    }) else {
        return false;
    };
    let mode = mode.text.as_str();
    if mode.chars().all(|c| c.is_ascii_digit()) {
        let digits: Vec<u32> = mode.chars().filter_map(|c| c.to_digit(8)).collect();
        let owner = digits.len().checked_sub(3).and_then(|at| digits.get(at));
        return owner.is_some_and(|d| d & 5 != 5);
    }
    mode.split(',').any(|clause| {
        let at = clause.find(['+', '-', '=']).unwrap_or(clause.len());
        let (who, rest) = clause.split_at(at);
        let owner = who.is_empty() || who.contains(['u', 'a']);
        owner
            && (rest.starts_with('-') && rest.contains(['r', 'x'])
                || rest.starts_with('=') && !(rest.contains('r') && rest.contains('x')))
    })
}

/// Whether a `tar` command line unpacks (`-x`, `--extract`, `--get`, or `x` in its first word's old-style
/// mode letters).
fn tar_unpacks(args: &[Word]) -> bool {
    let mode = args.first().map_or("", |a| a.text.as_str());
    args.iter().any(|a| {
        a.text == "--extract"
            || a.text == "--get"
            || (a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('x'))
    }) || (!mode.starts_with('-') && mode.contains('x'))
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

/// The folder a command line is in as it goes: `cd`, `cd -`, `pushd` and `popd` followed (found attacking the
/// guard: `cd ~/.config/hookd; cd /tmp; cd -; rm hooks.toml`). A folder that cannot be told (`cd
/// "$X"`) is [`UNKNOWN_FOLDER`], where a relative path is judged by its names alone.
struct Folders {
    now: PathBuf,
    before: Option<PathBuf>,
    stack: Vec<PathBuf>,
}

/// The folder of a line after a `cd` to a place that cannot be told: no path is below it, and a path
/// relative to it is matched by its trailing names against the guarded paths ([`Judge::target`]).
const UNKNOWN_FOLDER: &str = "/\u{0}unknown-folder";

impl Folders {
    fn change(&mut self, program: &str, args: &[Word], home: &Path, guarded: &[Guarded]) {
        let operand = args
            .iter()
            .find(|a| !a.text.starts_with('-') || a.text == "-");
        let next = match (program, operand) {
            ("popd", _) => self
                .stack
                .pop()
                .unwrap_or_else(|| PathBuf::from(UNKNOWN_FOLDER)),
            (_, None) if program == "pushd" => match self.stack.pop() {
                Some(top) => {
                    self.stack.push(self.now.clone());
                    top
                }
                None => PathBuf::from(UNKNOWN_FOLDER),
            },
            (_, None) => home.to_path_buf(),
            (_, Some(dir)) if dir.text == "-" => self
                .before
                .clone()
                .unwrap_or_else(|| PathBuf::from(UNKNOWN_FOLDER)),
            (_, Some(dir)) if !dir.known || dir.text.starts_with('+') => {
                // `cd "$(dirname ~/.config/hookd/hooks.toml)"`: a folder that cannot be told, but
                // that names a guarded path: the folder it is in (or it, a folder).
                guarded
                    .iter()
                    .find(|g| g.names.iter().any(|name| dir.text.contains(name.as_str())))
                    .map_or_else(
                        || PathBuf::from(UNKNOWN_FOLDER),
                        |g| {
                            if g.folder {
                                g.path.clone()
                            } else {
                                g.path
                                    .parent()
                                    .map_or_else(|| g.path.clone(), Path::to_path_buf)
                            }
                        },
                    )
            }
            (_, Some(dir)) if dir.glob => {
                // `cd ~/.config/hook*`: the guarded folder (or one above it) the pattern matches, as
                // the shell would find it; else a folder that cannot be told.
                let pattern = paths::absolute(&self.now, &dir.text);
                let pattern = pattern.to_string_lossy();
                guarded
                    .iter()
                    .flat_map(|g| {
                        g.path
                            .ancestors()
                            .chain(g.real.iter().flat_map(|r| r.ancestors()))
                    })
                    .find(|above| paths::pattern_matches(&pattern, above))
                    .map_or_else(|| PathBuf::from(UNKNOWN_FOLDER), Path::to_path_buf)
            }
            (_, Some(dir))
                if self.now == Path::new(UNKNOWN_FOLDER) && !dir.text.starts_with('/') =>
            {
                self.now.join(&dir.text)
            }
            (_, Some(dir)) => paths::absolute(&self.now, &dir.text),
        };
        if program == "pushd" && operand.is_some() {
            self.stack.push(self.now.clone());
        }
        self.before = Some(std::mem::replace(&mut self.now, next));
    }
}

/// Whether an interpreter run as `program ARGS` takes its script from its input: no `-c` script, no
/// `-m` module, no script file (`sh`, `bash -s`, `python3 -`).
fn reads_its_input(program: &str, args: &[Word]) -> bool {
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        let text = arg.text.as_str();
        if text == "-" || text == "-s" || text == "--" {
            return true;
        }
        if !text.starts_with('-') {
            return false;
        }
        if text.starts_with("-c")
            || text == "-e"
            || text == "-m"
            || text == "-E" && program == "perl"
        {
            return false;
        }
        at += 1;
    }
    true
}

/// What of an unknown word is known at its end, from a `/` on (`$X/hooks.toml` gives `/hooks.toml`):
/// the names a path below a folder that cannot be told ends in.
fn known_tail(text: &str) -> Option<&str> {
    let start = text.rfind(['$', ')', '}', '`', '~']).map_or(0, |at| at + 1);
    let tail = &text[start..];
    let tail = &tail[tail.find('/')?..];
    (tail.len() > 1).then_some(tail)
}

/// The folder `git -C DIR` (each one from the last) or `--work-tree DIR` works in, when given.
fn git_folder(args: &[Word], cwd: &Path) -> Option<PathBuf> {
    let mut dir = None;
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        let text = arg.text.as_str();
        let value = match text {
            "-C" | "--work-tree" => {
                at += 1;
                args.get(at).map(|w| w.text.as_str())
            }
            _ => text.strip_prefix("--work-tree="),
        };
        if let Some(value) = value {
            let from = dir.clone().unwrap_or_else(|| cwd.to_path_buf());
            dir = Some(paths::absolute(&from, value));
        } else if !text.starts_with('-') {
            break;
        }
        at += 1;
    }
    dir
}

/// An agent's settings file of a project (or any folder), whose hooks the agent merges with the user's
/// and which can switch them all off (Claude Code's `disableAllHooks`): what it is, in a refusal (found
/// attacking the guard: `.claude/settings.local.json` written with `"disableAllHooks": true` silenced
/// the relay that the user's settings hold).
fn project_agent_settings(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?;
    let folder = path.parent()?.file_name()?.to_str()?;
    match (folder, name) {
        (".claude", "settings.json" | "settings.local.json") => {
            Some("Claude Code's settings there, which can switch hookd's relay off")
        }
        (".gemini", "settings.json") => {
            Some("Gemini CLI's settings there, which can switch hookd's relay off")
        }
        (".qwen", "settings.json") => {
            Some("Qwen Code's settings there, which can switch hookd's relay off")
        }
        (".codex", "config.toml") => {
            Some("Codex's settings there, which can switch hookd's relay off")
        }
        _ => None,
    }
}

/// `path` made lexical, where `/proc/self/root/X` is `/X` and `/proc/self/cwd/X` is `X` in the
/// command's folder, as the agent's shell reads them (the daemon following those links would find its
/// own root and folder).
fn through_proc_self(path: &Path, cwd: &Path) -> PathBuf {
    for own in ["/proc/self", "/proc/thread-self"] {
        if let Ok(rest) = path.strip_prefix(Path::new(own).join("root")) {
            return paths::lexical(&Path::new("/").join(rest));
        }
        if let Ok(rest) = path.strip_prefix(Path::new(own).join("cwd")) {
            return paths::lexical(&cwd.join(rest));
        }
    }
    paths::lexical(path)
}
