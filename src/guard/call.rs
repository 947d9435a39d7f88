//! A tool call read for what the guard judges: the command line a shell tool runs, or the files a file
//! tool reads or writes, whatever the agent names them (`Bash`, Gemini's `run_shell_command`, Codex's
//! `shell` with a list of words, Copilot's `toolArgs` sent as a JSON text).

use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

use crate::shell::{self, Command};

/// Shell tools by the names agents give them, when a dialect has not renamed them `Bash`.
pub const SHELL_TOOLS: &[&str] = &[
    "bash",
    "shell",
    "sh",
    "local_shell",
    "run_shell_command",
    "shell_command",
    "exec_command",
    "execute_command",
    "run_command",
    "run_terminal_cmd",
    "terminal",
    "powershell",
];

/// The fields a tool gives a command line in.
pub const COMMAND_FIELDS: &[&str] = &["command", "cmd", "script", "commandLine", "command_line"];

/// The fields a file tool names its file or folder by, across the agents. Not a search's `pattern` or
/// `glob`: a `Grep` for `id_rsa` reads no key, and a `Glob` lists names, not what the files hold.
pub const PATH_FIELDS: &[&str] = &[
    "file_path",
    "file_paths",
    "path",
    "paths",
    "notebook_path",
    "filePath",
    "absolute_path",
    "filename",
    "target_file",
    "dir_path",
    "directory",
    "file",
    "files",
    "uri",
    // Gemini CLI's read_many_files reads what these globs match, beside its `paths`.
    "include",
];

/// The fields a shell tool names the folder its command runs in (Codex's `shell` and `exec_command`
/// take `workdir`; Gemini CLI's `run_shell_command` a `directory` inside the project).
pub const WORKDIR_FIELDS: &[&str] = &[
    "workdir",
    "cwd",
    "working_directory",
    "workingDirectory",
    "directory",
];

/// The verbs of the text editor tools (`str_replace_based_edit_tool`, `str_replace_editor`): their
/// `command` field says what to do with the file its `path` names, and runs no shell.
const EDITOR_VERBS: &[&str] = &["view", "create", "str_replace", "insert", "undo_edit"];

/// What the call does, as far as the guard reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Does {
    /// A shell tool runs this command line.
    Shell(String),
    /// A file tool (Read, Grep, Edit, an MCP server's read_file, ...) names these paths.
    Files(Vec<String>),
}

/// One tool call, read.
#[derive(Debug, Clone)]
pub struct Call {
    /// The tool's name as the event gives it.
    pub tool: String,
    pub does: Does,
    /// The folder it runs in: the event's `cwd` when absolute, else the home folder.
    pub cwd: PathBuf,
    /// The user's home folder, for `~` and for what lies above it.
    pub home: PathBuf,
}

/// The tool's input (`tool_input`, or Copilot CLI's `toolArgs`): a JSON text is read as what it holds,
/// and a text that is not JSON as a shell tool's command.
pub fn tool_input(event: &Map<String, Value>) -> Option<std::borrow::Cow<'_, Value>> {
    use std::borrow::Cow;
    match event.get("tool_input").or_else(|| event.get("toolArgs"))? {
        Value::String(text) => Some(Cow::Owned(
            serde_json::from_str::<Value>(text)
                .ok()
                .filter(Value::is_object)
                .unwrap_or_else(|| serde_json::json!({ "command": text })),
        )),
        other => Some(Cow::Borrowed(other)),
    }
}

impl Call {
    /// Reads `event`; `None` when it is no tool call, or one with nothing the guard reads.
    pub fn read(event: &Map<String, Value>, home: &Path) -> Option<Call> {
        let tool = event
            .get("tool_name")
            .or_else(|| event.get("toolName"))
            .and_then(Value::as_str)?;
        let input = tool_input(event)?;
        let input = input.as_ref();
        let mut cwd = event
            .get("cwd")
            .and_then(Value::as_str)
            .filter(|cwd| cwd.starts_with('/'))
            .map_or_else(|| home.to_path_buf(), PathBuf::from);
        let shell_tool =
            tool == "Bash" || SHELL_TOOLS.contains(&tool.to_ascii_lowercase().as_str());
        // The first field that holds a command line: one left empty, null or of another type is no
        // command, and must not hide the next (`{"command": "", "cmd": "rm -rf ~"}`).
        let command = COMMAND_FIELDS
            .iter()
            .filter_map(|field| input.get(*field))
            .filter(|value| value.is_string() || value.is_array())
            .map(command_text)
            .find(|command| !command.trim().is_empty());
        let paths = paths_named(input);
        // A text editor's verb (`"command": "view"` beside a `path`) is no command line: the file is
        // what such a call reads.
        let editor_verb = |command: &str| !shell_tool && EDITOR_VERBS.contains(&command.trim());
        let does = match command {
            Some(command) if !editor_verb(&command) || paths.is_empty() => {
                // A shell tool runs its command in the folder it names, when it names one (relative
                // to the event's folder).
                if let Some(workdir) = WORKDIR_FIELDS
                    .iter()
                    .find_map(|field| input.get(*field).and_then(Value::as_str))
                    .filter(|workdir| !workdir.trim().is_empty())
                {
                    cwd = absolute(workdir, &cwd, home);
                }
                Does::Shell(command)
            }
            _ if !paths.is_empty() => Does::Files(paths),
            // An empty command runs nothing.
            _ => return None,
        };
        Some(Call {
            tool: tool.to_string(),
            does,
            cwd,
            home: home.to_path_buf(),
        })
    }

    /// The commands of a shell call, read as a shell would run them; none for a file tool.
    pub fn commands(&self) -> Vec<Command> {
        match &self.does {
            Does::Shell(line) => {
                let env = shell::Env {
                    home: Some(self.home.to_string_lossy().into_owned()),
                    vars: [
                        ("HOME", self.home.to_string_lossy().into_owned()),
                        ("PWD", self.cwd.to_string_lossy().into_owned()),
                    ]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect(),
                    ..shell::Env::default()
                };
                let mut commands = shell::read(line, &env);
                // A line left inside a quote (`'git reset --hard HEAD`, `rm -rf x 'y`) is an error
                // to a shell, which runs none of it; but what it was meant to run is judged too, read
                // with the quote that was never closed taken out, so that a slip of the quote hides
                // nothing.
                let open = |c: &Command| c.unknown_from.as_deref() == Some(shell::UNCLOSED_QUOTE);
                if commands.iter().any(open) {
                    commands.retain(|c| !open(c));
                    let quote = if line.matches('\'').count() % 2 == 1 {
                        '\''
                    } else {
                        '"'
                    };
                    let meant: String = line.chars().filter(|c| *c != quote).collect();
                    commands.extend(shell::read(&meant, &env).into_iter().filter(|c| !open(c)));
                }
                commands
            }
            Does::Files(_) => Vec::new(),
        }
    }
}

/// Every path `input` names in one of [`PATH_FIELDS`], as a text or a list of texts.
pub fn paths_named(input: &Value) -> Vec<String> {
    let mut paths = Vec::new();
    for field in PATH_FIELDS {
        match input.get(*field) {
            Some(Value::String(path)) => paths.push(path.clone()),
            Some(Value::Array(items)) => {
                paths.extend(items.iter().filter_map(Value::as_str).map(String::from))
            }
            _ => {}
        }
    }
    paths
}

/// A shell command as text: a list of words (as Codex sends it) joined back into a line, quoted.
pub fn command_text(value: &Value) -> String {
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

/// `text` as an absolute path, cleaned of `.` and `..` (as the kernel would resolve it without links),
/// `~` expanded.
pub fn absolute(text: &str, folder: &Path, home: &Path) -> PathBuf {
    let expanded = if text == "~" {
        home.to_path_buf()
    } else if let Some(rest) = text.strip_prefix("~/") {
        home.join(rest)
    } else {
        folder.join(text)
    };
    clean(&expanded)
}

/// `path` without `.` and `..` (`..` at the root stays at the root).
pub fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(part) => out.push(part),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}
