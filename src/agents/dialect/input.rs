//! An agent's hook input read as a fire (docs/agents.md), from the reader it is given: its event named by
//! hookd's moment, its tools and fields given Claude Code's names (what hooks are written for), Codex's
//! patches seen as edits, Copilot CLI's native input placed, an input too large or too deep read from its
//! head; and the way back, a rewritten tool input carried into the agent's own terms ([`agent_input`]).
//! What differs per agent is read from its row ([`crate::tables::agent::AGENTS`]: its names, its tools). Pure:
//! no I/O but the reader it is given.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::limits::{MAX_DEPTH, MAX_EVENT};
use crate::protocol::head::{Head, Scanner};
use crate::protocol::{Event, too_large};
use crate::tables::agent::{Agent, Dialect};

/// An agent's hook input, read as a fire.
#[derive(Debug, Clone, PartialEq)]
pub struct Translated {
    /// hookd's name for the moment.
    pub moment: String,
    /// The agent's own name for it (`hook_event_name`), to answer in.
    pub event_name: String,
    pub event: Event,
    /// Where the translation changed the tool input hooks see (Codex's patch given paths, Copilot CLI's
    /// `toolArgs` read as an object), what a rewrite of it needs to be carried back ([`agent_input`]).
    pub carry_back: Option<CarryBack>,
}

/// The tool input as the agent gave it and as hooks were given it, for a rewrite to be carried back.
#[derive(Debug, Clone, PartialEq)]
pub struct CarryBack {
    pub own: Value,
    pub sent: Value,
}

/// The agent's hook input as a fire: the moment, the agent's own name for it, and the event. Gemini CLI's
/// moments and tools are renamed to Claude Code's, keeping the tool's own name in `agent_tool_name`, so
/// that one matcher serves every agent.
///
/// `input` is at most [`MAX_EVENT`] bytes (past that, see [`translate_head`]). Lone
/// surrogate escapes are read as U+FFFD, bytes that are not UTF-8 as U+FFFD; an input nested deeper than
/// serde_json reads is translated from its head, as undecidable (its hooks are read as failed).
pub fn translate(agent: Agent, input: &[u8]) -> Result<Translated, String> {
    translate_as(agent, input, None)
}

/// As [`translate`], for a relay told the event it serves (`--event`): Copilot CLI's hook input names
/// none, so the command in its settings does.
pub fn translate_as(agent: Agent, input: &[u8], told: Option<&str>) -> Result<Translated, String> {
    // A byte-order mark is no part of the JSON (a tool or a shell may put one in front of it).
    let input = input.strip_prefix(b"\xef\xbb\xbf").unwrap_or(input);
    // An agent's own text, not UTF-8 somewhere (a file's bytes in a tool input): read as the nearest
    // UTF-8 rather than let the event through undecided. Whatever else is wrong with it is then judged
    // on that text: nested too deep, it is still decided from its head.
    let mended;
    let input = match std::str::from_utf8(input) {
        Ok(_) => input,
        Err(_) => {
            mended = String::from_utf8_lossy(input);
            mended.as_bytes()
        }
    };
    let value = match crate::protocol::head::parse(input) {
        Ok(value) => value,
        Err(e) if crate::protocol::head::too_deep(&e) => {
            let why = format!("the event is nested deeper than {} levels", MAX_DEPTH);
            let mut scanner = head_scanner();
            scanner.feed(input);
            return translate_head_as(agent, scanner.finish(), why, told);
        }
        Err(e) => return Err(format!("the hook input is not JSON: {e}")),
    };
    let Value::Object(event) = value else {
        return Err("the hook input is not a JSON object".into());
    };
    let (moment, event_name, fields, carry_back) = translate_object(agent, event, told)?;
    Ok(Translated {
        moment,
        event_name,
        event: fields.into(),
        carry_back,
    })
}

/// An input that cannot be decoded whole (`why`: too large, too deep) as an undecidable fire, from what
/// its head holds ([`EVENT_FIELDS`](crate::protocol::head::EVENT_FIELDS)).
pub fn translate_head(agent: Agent, head: Head, why: String) -> Result<Translated, String> {
    translate_head_as(agent, head, why, None)
}

/// [`EVENT_FIELDS`](crate::protocol::head::EVENT_FIELDS), and the same fields as Copilot CLI's native input names them (camelCase).
const HEAD_FIELDS: &[&str] = &[
    "hook_event_name",
    "session_id",
    "cwd",
    "tool_name",
    "agent_tool_name",
    "source",
    "notification_type",
    "agent_type",
    "trigger",
    "reason",
    "hookName",
    "sessionId",
    "toolName",
    "agentType",
    "agentName",
    "notificationType",
];

/// The scanner of an agent's hook input too large or too deep to decode whole: the fields that place
/// the event and pick its hooks, and the server and tool of an MCP call (Gemini CLI names its MCP tools
/// `mcp_<server>_<tool>`, which cannot be split right without them).
pub fn head_scanner() -> Scanner {
    Scanner::new(
        HEAD_FIELDS,
        Some(("mcp_context", &["server_name", "tool_name"])),
    )
}

/// As [`translate_head`], for a relay told the event it serves (`--event`).
pub fn translate_head_as(
    agent: Agent,
    head: Head,
    why: String,
    told: Option<&str>,
) -> Result<Translated, String> {
    if !head.object {
        return Err(format!("the hook input is not a JSON object ({why})"));
    }
    let mut fields = head.fields;
    if !head.inner.is_empty() {
        fields.insert("mcp_context".into(), Value::Object(head.inner));
    }
    let (moment, event_name, fields, _) =
        translate_object(agent, fields, told).map_err(|e| format!("{e} ({why})"))?;
    Ok(Translated {
        moment,
        event_name,
        event: Event {
            fields,
            undecidable: Some(why),
            large: false,
            busy: false,
            source: crate::record::Source::Socket,
            fail_closed: false,
        },
        // Undecidable: its hooks are read as failed, and nothing is rewritten.
        carry_back: None,
    })
}

/// Reads an agent's hook input and translates it. Up to [`MAX_EVENT`] bytes are read whole; past that,
/// the input is undecidable: the rest is read as it streams by, only for its head and its size, so that
/// a huge input costs no more memory than the limit. `hookd test --agent` reads an agent's hook input so.
pub fn read_translated(
    mut stdin: impl Read,
    agent: Agent,
    told: Option<&str>,
) -> Result<Translated, String> {
    let mut input = Vec::new();
    let cannot_read = |e: std::io::Error| format!("cannot read the hook input: {e}");
    (&mut stdin)
        .take(MAX_EVENT as u64 + 1)
        .read_to_end(&mut input)
        .map_err(cannot_read)?;
    if input.len() <= MAX_EVENT {
        return translate_as(agent, &input, told);
    }
    let mut scanner = head_scanner();
    scanner.feed(&input);
    let mut size = input.len() as u64;
    drop(input);
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        match stdin.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                size += n as u64;
                scanner.feed(&chunk[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(cannot_read(e)),
        }
    }
    translate_head_as(agent, scanner.finish(), too_large(size), told)
}

/// A translated event: the moment, the agent's name for it, the fields, and what carries a rewrite back.
type TranslatedParts = (String, String, Map<String, Value>, Option<CarryBack>);

fn translate_object(
    agent: Agent,
    mut event: Map<String, Value>,
    told: Option<&str>,
) -> Result<TranslatedParts, String> {
    // Only these translations change the tool input; the others leave it as the agent gave it.
    let changes_input = agent.dialect() == Dialect::CopilotCli || agent.row().patch_tool.is_some();
    let own_input = changes_input
        .then(|| {
            ["tool_input", "toolArgs", "toolInput"]
                .iter()
                .find_map(|key| event.get(*key).cloned())
        })
        .flatten();
    if agent.dialect() == Dialect::CopilotCli {
        copilot_input(agent, &mut event, told)?;
    } else if let Some(told) = told
        && !event.contains_key("hook_event_name")
    {
        event.insert("hook_event_name".into(), Value::String(told.into()));
    }
    let Some(event_name) = event
        .get("hook_event_name")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return Err("the hook input has no hook_event_name".into());
    };
    let moment = agent.moment_of(&event_name);
    // An agent with tool names of its own: each tool is seen under Claude Code's name where there is one
    // (its table, or for an MCP tool `mcp__<server>__<tool>`), else under its own; either way its own
    // name is kept in `agent_tool_name`, so that a hook can always tell it.
    if !agent.row().tools.is_empty()
        && let Some(tool) = event
            .get("tool_name")
            .and_then(Value::as_str)
            .map(str::to_string)
    {
        let seen = agent
            .claude_tool_name(&tool)
            .map(str::to_string)
            .or_else(|| mcp_tool_name(&tool, event.get("mcp_context")))
            .unwrap_or_else(|| tool.clone());
        event.insert("agent_tool_name".into(), Value::String(tool));
        event.insert("tool_name".into(), Value::String(seen));
    }
    if let Some(patch_tool) = agent.row().patch_tool {
        patch_as_edit(&mut event, patch_tool);
    }
    let carry_back = own_input
        .filter(|_| crate::tables::moment::rewrites_input(&moment))
        .and_then(|own| {
            let sent = event.get("tool_input")?;
            (*sent != own).then(|| CarryBack {
                own,
                sent: sent.clone(),
            })
        });
    Ok((moment, event_name, event, carry_back))
}

/// Claude Code's name for an MCP tool named the way Gemini CLI names them, `mcp_<server>_<tool>` (cut
/// to 63 characters, with `...` in the middle, when longer): `mcp__<server>__<tool>`, so that one
/// `mcp__github__.*` matcher serves both. The server and the tool are read from the input's
/// `mcp_context` (`server_name`, `tool_name`), which Gemini CLI gives whenever it knows the server;
/// without it, from the name as Gemini CLI itself reads one (the server up to the first `_`). Each
/// part is written as Claude Code writes it: characters other than letters, digits, `_` and `-` as `_`.
/// `None` for a name that is not an MCP tool's, or already Claude Code's (`mcp__...`).
fn mcp_tool_name(tool: &str, mcp_context: Option<&Value>) -> Option<String> {
    let rest = tool.strip_prefix("mcp_")?;
    if rest.starts_with('_') {
        return None;
    }
    let part = |key: &str| {
        mcp_context
            .and_then(|context| context.get(key))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let (server, name) = match (part("server_name"), part("tool_name")) {
        (Some(server), Some(name)) => (server, name),
        _ => rest
            .split_once('_')
            .filter(|(s, t)| !s.is_empty() && !t.is_empty())?,
    };
    let claude = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    Some(format!("mcp__{}__{}", claude(server), claude(name)))
}

/// Copilot CLI's native hook input as hookd's event: it names no event (the relay is told it, `--event`,
/// or a permissionRequest's `hookName` says it) and its fields are camelCase. Claude Code's names are
/// added beside Copilot's own (`toolName` -> `tool_name`, `toolArgs` -> `tool_input`, ...), which stay.
///
/// An input that names an event Copilot's native hooks do not send (`hook_event_name: "PreToolUse"`:
/// Copilot writes Claude Code's input for hooks written in Claude Code's layout, and reads Claude Code's
/// answers there) is refused a place rather than answered in the wrong dialect.
fn copilot_input(
    agent: Agent,
    event: &mut Map<String, Value>,
    told: Option<&str>,
) -> Result<(), String> {
    let own = agent.event_names();
    let named = event
        .get("hook_event_name")
        .or_else(|| event.get("hookName"))
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(named) = &named
        && !own.contains(&named.as_str())
    {
        return Err(format!(
            "the hook input names the event \"{}\", which Copilot CLI's native hooks do not send: hooks \
             written in Claude Code's layout get Claude Code's input and answers, so run those with \
             --agent claude-code (or use the hooks hookd relay --print-settings copilot-cli prints)",
            crate::tables::moment::shown(named)
        ));
    }
    // Told one event, the input naming another (a permissionRequest's `hookName`): the answer would be in
    // the shape of the wrong event, one Copilot does not read. Never a guess.
    if let (Some(told), Some(named)) = (told, &named)
        && told != named
    {
        return Err(format!(
            "the relay was told --event {} but the hook input is Copilot CLI's \"{}\": give each hook \
             its own event, as hookd relay --print-settings copilot-cli does",
            crate::tables::moment::shown(told),
            crate::tables::moment::shown(named)
        ));
    }
    let Some(name) = told.map(str::to_string).or(named) else {
        return Err(
            "Copilot CLI's hook input names no event: give the relay --event EVENT, as the \
             hooks hookd relay --print-settings copilot-cli prints do"
                .into(),
        );
    };
    // A misspelt --event would leave every such event unwatched: said, whether the daemon runs or not.
    if let Some(why) = unknown_event(agent, &name) {
        return Err(why);
    }
    event.insert("hook_event_name".into(), Value::String(name));
    const RENAMED: &[(&str, &str)] = &[
        ("sessionId", "session_id"),
        ("toolName", "tool_name"),
        ("toolArgs", "tool_input"),
        ("toolInput", "tool_input"),
        ("toolResult", "tool_response"),
        ("transcriptPath", "transcript_path"),
        ("stopReason", "stop_reason"),
        ("stopHookActive", "stop_hook_active"),
        ("agentType", "agent_type"),
        ("agentName", "agent_type"),
        ("initialPrompt", "initial_prompt"),
        ("notificationType", "notification_type"),
    ];
    for (own, claude) in RENAMED {
        if !event.contains_key(*claude)
            && let Some(value) = event.get(*own).cloned()
        {
            event.insert((*claude).into(), value);
        }
    }
    // Its public documentation shows `toolArgs` as a JSON string: read as the object it holds, so that
    // a hook finds `tool_input.command` as from any other agent.
    if let Some(Value::String(args)) = event.get("tool_input")
        && args.trim_start().starts_with('{')
    {
        // Read as the input itself is (lone surrogates mended); one that cannot be read is no
        // event to guess at, and one too deep to read cannot be given to its hooks.
        match crate::protocol::head::parse(args.as_bytes()) {
            Ok(Value::Object(parsed)) => {
                event.insert("tool_input".into(), Value::Object(parsed));
            }
            Ok(_) => {}
            Err(e) => {
                return Err(format!(
                    "Copilot CLI's toolArgs is a JSON string hookd cannot read ({e})"
                ));
            }
        }
    }
    // Its file tools name the file `path`; Claude Code's, which hooks are written for, `file_path`.
    if let Some(Value::Object(input)) = event.get_mut("tool_input")
        && !input.contains_key("file_path")
        && let Some(path) = input.get("path").cloned()
    {
        input.insert("file_path".into(), path);
    }
    Ok(())
}

/// A call of the agent's patch tool (Codex's `apply_patch`, [`AgentRow::patch_tool`](crate::tables::agent::AgentRow))
/// as Claude Code's edit tools, so that a matcher `Edit|Write` fires for it: `Write` when the patch only
/// adds files (what Claude Code's `Write` does), `Edit` when it changes, moves or deletes any (or cannot
/// be read). The tool's own name stays in `agent_tool_name`, and the patch in `tool_input.command`; the
/// paths it touches are added as `tool_input.file_path` (the first) and `tool_input.file_paths` (all),
/// made absolute against the event's `cwd` as Claude Code gives them.
fn patch_as_edit(event: &mut Map<String, Value>, patch_tool: &str) {
    let tool = event
        .get("tool_name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    // The patch tool called through the shell (`apply_patch <<'EOF'` ... in a `Bash` command, or
    // `cd DIR && apply_patch <<'EOF'` ..., which Codex also accepts, the patch's paths then from DIR):
    // seen as the edit it is, and, its own name kept in `agent_tool_name`, still as `Bash`, so that the
    // guards of both fire.
    let from = match tool.as_str() {
        "Bash" => event
            .get("tool_input")
            .and_then(|input| input.get("command"))
            .and_then(Value::as_str)
            .and_then(|command| shell_patch_call(command, patch_tool)),
        _ => None,
    };
    let through_shell = from.is_some();
    if tool != patch_tool && !through_shell {
        return;
    }
    // The patch as Codex gives it (`command`), or as other agents do: the argument itself, `input` or
    // `patch`; a command given as a list of words is read whole.
    let text = |value: &Value| -> Option<String> {
        match value {
            Value::String(text) => Some(text.clone()),
            Value::Array(words) => Some(
                words
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            _ => None,
        }
    };
    let patch = event.get("tool_input").and_then(|input| {
        text(input).or_else(|| {
            ["command", "input", "patch"]
                .iter()
                .find_map(|key| input.get(*key).and_then(text))
        })
    });
    let patch = patch.as_deref().map(read_patch);
    let mut cwd = event.get("cwd").and_then(Value::as_str).map(PathBuf::from);
    for folder in from.unwrap_or_default() {
        cwd = Some(match folder {
            Folder::Known(folder) => PathBuf::from(absolute_in(cwd.as_deref(), &folder)),
            // `cd $HOME/x`, `cd ~`: where that is, the shell knows; the paths are given from it as
            // written, which a hook can still match by name.
            Folder::AsWritten(folder) => PathBuf::from(folder),
        });
    }
    let name = match &patch {
        Some(patch) if !patch.files.is_empty() && patch.only_adds => "Write",
        _ => "Edit",
    };
    let own = if through_shell {
        tool.as_str()
    } else {
        patch_tool
    };
    event.insert("agent_tool_name".into(), Value::String(own.into()));
    event.insert("tool_name".into(), Value::String(name.into()));
    // A patch given as the argument itself is given as Codex gives it, so that the paths have a place.
    if let Some(Value::String(text)) = event.get("tool_input") {
        let text = text.clone();
        event.insert("tool_input".into(), json!({"command": text}));
    }
    let (Some(patch), Some(Value::Object(input))) = (patch, event.get_mut("tool_input")) else {
        return;
    };
    let paths: Vec<Value> = patch
        .files
        .iter()
        .map(|file| Value::String(absolute_in(cwd.as_deref(), file)))
        .collect();
    if let Some(first) = paths.first() {
        input.insert("file_path".into(), first.clone());
    }
    input.insert("file_paths".into(), Value::Array(paths));
}

/// A folder a shell command goes to (`cd DIR`) before it runs the patch tool.
#[derive(Debug, PartialEq)]
enum Folder {
    /// Its path, quotes and escapes taken out as the shell takes them.
    Known(String),
    /// Where the shell alone knows (a `$` expansion, a command's output, `~`): the word as written, but
    /// for its quotes.
    AsWritten(String),
}

/// Whether a shell command is a call of the patch tool (`patch_tool` or `applypatch`, given its patch in
/// a heredoc, `*** Begin Patch` ...), run as it stands or after `cd DIR &&`, as Codex runs
/// `cd DIR && apply_patch <<'EOF'` (DIR a word, `"DIR"` or `'DIR'`): `Some` of the folders it goes to
/// first, in order (none for the plain form). Also after `cd DIR;` and more than one `cd`, which Codex
/// leaves to the shell, where the patch tool on its `PATH` applies the patch all the same: an edit seen
/// where there is none only makes an `Edit` guard look at it; one missed lets it through unseen.
fn shell_patch_call(command: &str, patch_tool: &str) -> Option<Vec<Folder>> {
    let blank = [' ', '\t'];
    let mut rest = command.trim_start();
    let mut folders = Vec::new();
    loop {
        if [patch_tool, "applypatch"]
            .iter()
            .any(|name| rest.starts_with(name))
        {
            return rest.contains("*** Begin Patch").then_some(folders);
        }
        let after_cd = rest.strip_prefix("cd")?;
        let after_cd = after_cd.strip_prefix(blank)?.trim_start_matches(blank);
        let (folder, after) = shell_word(after_cd)?;
        let after = after.trim_start_matches(blank);
        let after = after
            .strip_prefix("&&")
            .or_else(|| after.strip_prefix(';'))?;
        folders.push(folder);
        rest = after.trim_start();
    }
}

/// The shell word at the start of `text` (up to a blank or an operator), read as the shell reads it:
/// `'...'` as it stands, `"..."` with its escapes, `\x` as `x`. `None` for no word. A word the shell
/// would expand (`$`, a backquote, a leading `~`) keeps its expansions as written.
fn shell_word(text: &str) -> Option<(Folder, &str)> {
    let mut word = String::new();
    let mut expands = text.starts_with('~');
    let mut chars = text.char_indices().peekable();
    let end = loop {
        let Some((at, c)) = chars.next() else {
            break text.len();
        };
        match c {
            ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => break at,
            '\'' => loop {
                match chars.next()?.1 {
                    '\'' => break,
                    c => word.push(c),
                }
            },
            '"' => loop {
                match chars.next()?.1 {
                    '"' => break,
                    '\\' => match chars.next()?.1 {
                        c @ ('"' | '\\' | '$' | '`') => word.push(c),
                        '\n' => {}
                        c => word.extend(['\\', c]),
                    },
                    c @ ('$' | '`') => {
                        expands = true;
                        word.push(c);
                    }
                    c => word.push(c),
                }
            },
            '\\' => match chars.next()?.1 {
                '\n' => {}
                c => word.push(c),
            },
            '$' | '`' => {
                expands = true;
                word.push(c);
                // A command's output, `$(...)`, is one word, blanks and all.
                if c == '$' && chars.next_if(|&(_, c)| c == '(').is_some() {
                    word.push('(');
                    let mut depth = 1;
                    while depth > 0 {
                        let c = chars.next()?.1;
                        match c {
                            '(' => depth += 1,
                            ')' => depth -= 1,
                            _ => {}
                        }
                        word.push(c);
                    }
                }
            }
            c => word.push(c),
        }
    };
    if end == 0 {
        return None;
    }
    let folder = if expands {
        Folder::AsWritten(word)
    } else {
        Folder::Known(word)
    };
    Some((folder, &text[end..]))
}

/// What a patch in Codex's format does to files.
#[derive(Debug, PartialEq)]
struct Patch {
    /// The paths it names, as written, in order, each once (a move's destination too).
    files: Vec<String>,
    /// It only adds files.
    only_adds: bool,
}

/// Reads the file operations of a patch: `*** Add File: P`, `*** Update File: P`, `*** Delete File: P`,
/// `*** Move to: P` between `*** Begin Patch` and `*** End Patch`. Lines are read trimmed, as Codex's
/// own parser is lenient: a path too many is harmless to a hook, a path missed is not.
fn read_patch(text: &str) -> Patch {
    let mut patch = Patch {
        files: Vec::new(),
        only_adds: true,
    };
    for line in text.lines().map(str::trim) {
        let (adds, path) = if let Some(path) = line.strip_prefix("*** Add File:") {
            (true, path)
        } else if let Some(path) = ["*** Update File:", "*** Delete File:", "*** Move to:"]
            .iter()
            .find_map(|marker| line.strip_prefix(marker))
        {
            (false, path)
        } else {
            continue;
        };
        patch.only_adds &= adds;
        let path = path.trim();
        if !path.is_empty() && !patch.files.iter().any(|seen| seen == path) {
            patch.files.push(path.to_string());
        }
    }
    patch
}

/// `path` made absolute against `cwd` (when it is relative and there is a cwd), with `.` and `..` taken
/// out as written, so that a hook testing a prefix is not led past it by `sub/../../etc`.
fn absolute_in(cwd: Option<&Path>, path: &str) -> String {
    let joined = match cwd {
        Some(cwd) if Path::new(path).is_relative() => cwd.join(path),
        _ => PathBuf::from(path),
    };
    let mut out = PathBuf::new();
    for part in joined.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(part);
                }
            }
            other => out.push(other),
        }
    }
    out.to_string_lossy().into_owned()
}

/// For an event the daemon has no moment for (`unknown_moment`): `None` when it is a real event of this
/// agent that nobody hangs hooks on (nothing to say), else what is wrong, naming the `--agent` that sends
/// such events or the event that was likely meant. The agent's event names are few and known here, so a
/// wrong `--agent` or a misspelt name is told from an event that is merely not watched.
pub fn unknown_event(agent: Agent, event_name: &str) -> Option<String> {
    let own = agent.event_names();
    if own.contains(&event_name) {
        return None;
    }
    let shown = crate::tables::moment::shown(event_name);
    let head = format!("\"{shown}\" is not an event {} sends", agent.name());
    for other in Agent::ALL.into_iter().filter(|other| *other != agent) {
        if other.event_names().contains(&event_name) {
            let moment = other.moment_of(event_name);
            let what = if moment == event_name {
                format!("it is {}'s", other.display_name())
            } else {
                format!("it is {}'s name for {moment}", other.display_name())
            };
            return Some(format!("{head}; {what}: use --agent {}", other.name()));
        }
    }
    match crate::tables::moment::did_you_mean(event_name, own.iter().copied()) {
        Some(meant) => Some(format!("{head} (did you mean \"{meant}\"?)")),
        None => Some(format!(
            "{head}, and the daemon has no moment of that name (its events are: {})",
            own.join(", ")
        )),
    }
}

/// For an event this agent never sends, sent only by agents that read answers in another dialect (Claude
/// Code's `PreToolUse` through `--agent gemini-cli`): what is wrong, as [`unknown_event`] says it. Such
/// an event may be of a moment the daemon knows, and its hooks would run, but the answer would be in a
/// dialect the real agent does not read, a refusal lost: the relay must not fire it. `None` for the
/// agent's own events; for a name an agent of the same dialect sends (the agent may be newer than its
/// row: Codex's PermissionRequest, answered as Claude Code's, is read all the same); and for names no
/// agent sends (a moment the settings may declare).
pub fn another_agents_event(agent: Agent, event_name: &str) -> Option<String> {
    if agent.event_names().contains(&event_name) {
        return None;
    }
    let senders: Vec<Agent> = Agent::ALL
        .into_iter()
        .filter(|other| *other != agent && other.event_names().contains(&event_name))
        .collect();
    if senders.is_empty()
        || senders
            .iter()
            .any(|other| other.dialect() == agent.dialect())
    {
        return None;
    }
    unknown_event(agent, event_name)
}

/// A rewritten tool input (`rewritten`, in the terms hooks were given) in the agent's own terms: each
/// field hooks changed is changed in the input as the agent gave it. A field the translation made
/// (Codex's patch paths) cannot be carried back: `Err`, and the call is refused rather than run as it
/// was before the rewrite. Copilot CLI's `path`, which hooks see as `file_path` too, is carried back to
/// `path`.
pub fn agent_input(carry_back: &CarryBack, rewritten: &Value) -> Result<Value, String> {
    let own = match &carry_back.own {
        // Copilot CLI's toolArgs as its documentation shows it: a JSON string of the object.
        Value::String(text) => match crate::protocol::head::parse(text.as_bytes()) {
            Ok(Value::Object(object)) => Value::Object(object),
            _ => Value::String(text.clone()),
        },
        own => own.clone(),
    };
    let (Value::Object(mut own), Value::Object(sent), Value::Object(rewritten)) =
        (own, &carry_back.sent, rewritten)
    else {
        return Err(
            "the hooks rewrote a tool input that hookd gave them in another shape than the agent's, \
             and cannot carry the rewrite back"
                .into(),
        );
    };
    let fields: std::collections::BTreeSet<&String> = sent.keys().chain(rewritten.keys()).collect();
    for field in fields {
        let (was, now) = (sent.get(field), rewritten.get(field));
        if was == now {
            continue;
        }
        let target = if own.get(field) == was {
            field.as_str()
        } else if field == "file_path" && own.contains_key("path") && own.get("path") == was {
            "path"
        } else {
            return Err(format!(
                "a hook rewrote tool_input.{field}, which hookd made for the hooks from the agent's input \
                 and cannot carry back; rewrite the fields the agent gave instead"
            ));
        };
        match now {
            Some(value) => own.insert(target.to_string(), value.clone()),
            None => own.remove(target),
        };
    }
    Ok(Value::Object(own))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_too_deep_and_not_utf8_is_still_decided_from_its_head() {
        // Found attacking the fixes: one stray byte before the deep part made the input "not
        // JSON", and the relay let it through.
        let mut input = b"{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"x\":\"\xff\",\"deep\":".to_vec();
        input.extend(std::iter::repeat_n(b'[', 10_000));
        input.extend(std::iter::repeat_n(b']', 10_000));
        input.extend(b"}}");
        let translated = translate(Agent::ClaudeCode, &input).expect("decided");
        assert_eq!(translated.moment, "PreToolUse");
        assert_eq!(translated.event.fields["tool_name"], "Bash");
        assert!(
            translated
                .event
                .undecidable
                .unwrap()
                .contains("deeper than 128")
        );
    }

    #[test]
    fn a_byte_order_mark_is_no_part_of_the_input() {
        let input = b"\xef\xbb\xbf{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\"}";
        let translated = translate(Agent::ClaudeCode, input).expect("decided");
        assert_eq!(translated.event.fields["tool_name"], "Bash");
        assert!(translated.event.undecidable.is_none());
    }

    #[test]
    fn gemini_input_gets_claude_names() {
        let input = include_str!("../../../tests/fixtures/agents/gemini-cli/BeforeTool.json");
        let t = translate(Agent::GeminiCli, input.as_bytes()).unwrap();
        assert_eq!(
            (t.moment.as_str(), t.event_name.as_str()),
            ("PreToolUse", "BeforeTool")
        );
        assert_eq!(t.event.fields["tool_name"], "Bash");
        assert_eq!(t.event.fields["agent_tool_name"], "run_shell_command");
        assert_eq!(t.event.undecidable, None);
    }

    #[test]
    fn qwen_code_input_keeps_claude_moments_and_gets_claude_tool_names() {
        let input = include_str!("../../../tests/fixtures/agents/qwen-code/PreToolUse-1.json");
        let t = translate(Agent::QwenCode, input.as_bytes()).unwrap();
        assert_eq!(
            (t.moment.as_str(), t.event_name.as_str()),
            ("PreToolUse", "PreToolUse")
        );
        assert_eq!(t.event.fields["tool_name"], "Bash");
        assert_eq!(t.event.fields["agent_tool_name"], "run_shell_command");
        // The second UserPromptSubmit of a turn, after a tool result: an empty prompt, read as is.
        let input =
            include_str!("../../../tests/fixtures/agents/qwen-code/UserPromptSubmit-2.json");
        let t = translate(Agent::QwenCode, input.as_bytes()).unwrap();
        assert_eq!(t.moment, "UserPromptSubmit");
        assert_eq!(t.event.fields["prompt"], "");
        assert_eq!(unknown_event(Agent::QwenCode, "TodoCreated"), None);
        assert!(
            unknown_event(Agent::ClaudeCode, "SessionDelete")
                .unwrap()
                .contains("use --agent qwen-code")
        );
    }

    #[test]
    fn a_codex_patch_that_adds_a_file_is_a_write_with_its_path() {
        let input =
            include_str!("../../../tests/fixtures/agents/codex/PreToolUse-apply_patch.json");
        let t = translate(Agent::Codex, input.as_bytes()).unwrap();
        assert_eq!(t.moment, "PreToolUse");
        let fields = &t.event.fields;
        assert_eq!(fields["tool_name"], "Write");
        assert_eq!(fields["agent_tool_name"], "apply_patch");
        assert_eq!(
            fields["tool_input"]["file_path"],
            "/home/user/project/hello.txt"
        );
        assert_eq!(
            fields["tool_input"]["file_paths"],
            json!(["/home/user/project/hello.txt"])
        );
        assert!(
            fields["tool_input"]["command"]
                .as_str()
                .unwrap()
                .starts_with("*** Begin Patch\n*** Add File: hello.txt")
        );
        let post =
            include_str!("../../../tests/fixtures/agents/codex/PostToolUse-apply_patch.json");
        let t = translate(Agent::Codex, post.as_bytes()).unwrap();
        assert_eq!(
            (t.moment.as_str(), &t.event.fields["tool_name"]),
            ("PostToolUse", &json!("Write"))
        );
    }

    #[test]
    fn gemini_mcp_tools_get_claude_names() {
        for fixture in [
            include_str!("../../../tests/fixtures/agents/gemini-cli/mcp-BeforeTool-1.json"),
            include_str!("../../../tests/fixtures/agents/gemini-cli/mcp-AfterTool-1.json"),
        ] {
            let t = translate(Agent::GeminiCli, fixture.as_bytes()).unwrap();
            assert_eq!(t.event.fields["tool_name"], "mcp__echo__echo_text");
            assert_eq!(t.event.fields["agent_tool_name"], "mcp_echo_echo_text");
        }
        let tool = |name: &str, context: Value| {
            let input =
                json!({"hook_event_name": "BeforeTool", "tool_name": name, "mcp_context": context});
            let t = translate(Agent::GeminiCli, input.to_string().as_bytes()).unwrap();
            t.event.fields["tool_name"].as_str().unwrap().to_string()
        };
        // The server's name from mcp_context, though it holds a `_` (the name alone would mislead).
        assert_eq!(
            tool(
                "mcp_my_server_get_issue",
                json!({"server_name": "my_server", "tool_name": "get_issue"})
            ),
            "mcp__my_server__get_issue"
        );
        // A name cut to 63 characters: mcp_context still has both whole.
        let long = "b".repeat(60);
        assert_eq!(
            tool(
                "mcp_github_bbbbbbbbbbbbbbbbbbbbbbbbb...bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
                json!({"server_name": "github", "tool_name": long})
            ),
            format!("mcp__github__{long}")
        );
        // Characters Claude Code would not keep in a name.
        assert_eq!(
            tool(
                "mcp_my_server_x",
                json!({"server_name": "my server.io", "tool_name": "x"})
            ),
            "mcp__my_server_io__x"
        );
        // Without mcp_context, read as Gemini CLI reads it.
        assert_eq!(
            tool("mcp_github_get_issue", Value::Null),
            "mcp__github__get_issue"
        );
        // Not an MCP tool's name, or one already Claude Code's: as it is.
        assert_eq!(tool("mcp_", Value::Null), "mcp_");
        assert_eq!(tool("mcp__github__x", Value::Null), "mcp__github__x");
    }

    #[test]
    fn every_gemini_tool_is_mapped_or_passed_through_with_its_own_name_kept() {
        for (own, claude) in [
            ("read_many_files", "Read"),
            ("write_todos", "TodoWrite"),
            ("ask_user", "AskUserQuestion"),
            ("invoke_agent", "Agent"),
            ("activate_skill", "Skill"),
            ("tracker_create_task", "tracker_create_task"),
            ("complete_task", "complete_task"),
        ] {
            let input = json!({"hook_event_name": "BeforeTool", "tool_name": own});
            let t = translate(Agent::GeminiCli, input.to_string().as_bytes()).unwrap();
            assert_eq!(t.event.fields["tool_name"], claude, "{own}");
            assert_eq!(t.event.fields["agent_tool_name"], own, "{own}");
        }
    }

    #[test]
    fn a_codex_patch_that_changes_moves_or_deletes_is_an_edit_with_every_path() {
        let patch = "*** Begin Patch\n*** Add File: new.txt\n+x\n*** Update File: src/a.rs\n*** Move to: src/b.rs\n@@\n-a\n+b\n  *** Delete File: /etc/old \n*** Update File: sub/../../escape.txt\n*** End Patch\n";
        let input = json!({"hook_event_name": "PreToolUse", "cwd": "/p", "tool_name": "apply_patch", "tool_input": {"command": patch}});
        let t = translate(Agent::Codex, input.to_string().as_bytes()).unwrap();
        let fields = &t.event.fields;
        assert_eq!(fields["tool_name"], "Edit");
        assert_eq!(fields["agent_tool_name"], "apply_patch");
        assert_eq!(fields["tool_input"]["command"], patch);
        assert_eq!(fields["tool_input"]["file_path"], "/p/new.txt");
        assert_eq!(
            fields["tool_input"]["file_paths"],
            json!([
                "/p/new.txt",
                "/p/src/a.rs",
                "/p/src/b.rs",
                "/etc/old",
                "/escape.txt"
            ])
        );
        // A patch hookd cannot read is still an edit: a matcher Edit|Write fires for it.
        let odd = json!({"hook_event_name": "PreToolUse", "tool_name": "apply_patch", "tool_input": {"patch": 1}});
        let t = translate(Agent::Codex, odd.to_string().as_bytes()).unwrap();
        assert_eq!(t.event.fields["tool_name"], "Edit");
        assert_eq!(t.event.fields["tool_input"], json!({"patch": 1}));
        let no_input = json!({"hook_event_name": "PermissionRequest", "tool_name": "apply_patch"});
        let t = translate(Agent::Codex, no_input.to_string().as_bytes()).unwrap();
        assert_eq!(t.event.fields["tool_name"], "Edit");
        // Only Codex has a patch tool; its shell tool is left alone.
        let claude = json!({"hook_event_name": "PreToolUse", "tool_name": "apply_patch", "tool_input": {"command": patch}});
        let t = translate(Agent::ClaudeCode, claude.to_string().as_bytes()).unwrap();
        assert_eq!(t.event.fields["tool_name"], "apply_patch");
        let bash = include_str!("../../../tests/fixtures/agents/codex/PreToolUse-1.json");
        let t = translate(Agent::Codex, bash.as_bytes()).unwrap();
        assert_eq!(t.event.fields["tool_name"], "Bash");
        assert!(t.event.fields.get("agent_tool_name").is_none());
    }

    #[test]
    fn codex_moments_of_its_own_are_known_by_their_names() {
        for (file, moment) in [
            ("Interrupt-1.json", "Interrupt"),
            ("PreModelRequest-1.json", "PreModelRequest"),
            ("PostModelRequest-1.json", "PostModelRequest"),
            ("PermissionRequest-1.json", "PermissionRequest"),
            ("SubagentStart-1.json", "SubagentStart"),
            ("PostCompact-1.json", "PostCompact"),
        ] {
            let path = format!(
                "{}/tests/fixtures/agents/codex/{file}",
                env!("CARGO_MANIFEST_DIR")
            );
            let input = std::fs::read(&path).unwrap();
            let t = translate(Agent::Codex, &input).unwrap();
            assert_eq!((t.moment.as_str(), t.event_name.as_str()), (moment, moment));
            assert!(Agent::Codex.fires(moment), "{moment}");
            assert_eq!(unknown_event(Agent::Codex, moment), None, "{moment}");
        }
    }

    #[test]
    fn claude_input_passes_through() {
        let input = include_str!("../../../tests/fixtures/agents/claude-code/PreToolUse-1.json");
        let t = translate(Agent::ClaudeCode, input.as_bytes()).unwrap();
        assert_eq!(t.moment, "PreToolUse");
        assert!(t.event.fields.get("agent_tool_name").is_none());
        assert!(translate(Agent::ClaudeCode, b"[]").is_err());
        assert!(
            translate(Agent::ClaudeCode, b"{\"x\":1}")
                .unwrap_err()
                .contains("hook_event_name")
        );
    }

    #[test]
    fn lone_surrogates_and_bytes_that_are_not_utf8_are_read_as_replacements() {
        let input =
            br#"{"hook_event_name":"PreToolUse","tool_input":{"command":"rm -rf / \ud800"}}"#;
        let t = translate(Agent::ClaudeCode, input).unwrap();
        assert_eq!(t.event.fields["tool_input"]["command"], "rm -rf / \u{fffd}");
        let input = b"{\"hook_event_name\":\"PreToolUse\",\"x\":\"\xff\"}";
        let t = translate(Agent::ClaudeCode, input).unwrap();
        assert_eq!(t.event.fields["x"], "\u{fffd}");
    }

    #[test]
    fn too_deep_input_is_translated_from_its_head_as_undecidable() {
        let depth = 10_000;
        let input = format!(
            r#"{{"hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{}{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let t = translate(Agent::GeminiCli, input.as_bytes()).unwrap();
        assert_eq!(t.moment, "PreToolUse");
        assert_eq!(t.event.fields["tool_name"], "Write");
        assert_eq!(t.event.fields["agent_tool_name"], "write_file");
        assert!(t.event.undecidable.unwrap().contains("deeper than 128"));
        let no_name = format!(
            r#"{{"tool_input":{}{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        assert!(
            translate(Agent::ClaudeCode, no_name.as_bytes())
                .unwrap_err()
                .contains("hook_event_name")
        );
    }

    #[test]
    fn unknown_events_name_the_agent_or_the_event_meant() {
        assert_eq!(
            unknown_event(Agent::ClaudeCode, "BeforeTool").unwrap(),
            "\"BeforeTool\" is not an event claude-code sends; it is Gemini CLI's name for PreToolUse: use --agent gemini-cli"
        );
        assert_eq!(
            unknown_event(Agent::ClaudeCode, "PreTooluse").unwrap(),
            "\"PreTooluse\" is not an event claude-code sends (did you mean \"PreToolUse\"?)"
        );
        assert!(
            unknown_event(Agent::Codex, "BeforeModel")
                .unwrap()
                .contains("use --agent gemini-cli")
        );
        assert!(
            unknown_event(Agent::GeminiCli, "PermissionRequest")
                .unwrap()
                .contains("use --agent claude-code")
        );
        assert!(
            unknown_event(Agent::ClaudeCode, "Zzz")
                .unwrap()
                .contains("Zzz")
        );
        // Real events of the agent, merely not watched: nothing to say.
        assert_eq!(unknown_event(Agent::GeminiCli, "BeforeModel"), None);
        assert_eq!(unknown_event(Agent::GeminiCli, "BeforeTool"), None);
        assert_eq!(unknown_event(Agent::ClaudeCode, "SubagentStart"), None);
    }

    #[test]
    fn copilot_native_input_is_read_as_the_event_the_relay_is_told() {
        let input =
            include_str!("../../../tests/fixtures/agents/copilot-cli/native-preToolUse.json");
        let t = translate_as(Agent::CopilotCli, input.as_bytes(), Some("preToolUse")).unwrap();
        assert_eq!(
            (t.moment.as_str(), t.event_name.as_str()),
            ("PreToolUse", "preToolUse")
        );
        let fields = &t.event.fields;
        assert_eq!(fields["tool_name"], "Bash");
        assert_eq!(fields["agent_tool_name"], "bash");
        assert_eq!(
            fields["tool_input"]["command"],
            "echo ran > marker.txt && echo TOOL-OUT"
        );
        assert_eq!(fields["session_id"], fields["sessionId"]);
        assert_eq!(
            fields["toolArgs"], fields["tool_input"],
            "the originals are kept"
        );
        let input =
            include_str!("../../../tests/fixtures/agents/copilot-cli/native-agentStop.json");
        let t = translate_as(Agent::CopilotCli, input.as_bytes(), Some("agentStop")).unwrap();
        assert_eq!(t.moment, "Stop");
        assert_eq!(t.event.fields["stop_hook_active"], false);
        let input = include_str!(
            "../../../tests/fixtures/agents/copilot-cli/native-userPromptSubmitted.json"
        );
        let t = translate_as(
            Agent::CopilotCli,
            input.as_bytes(),
            Some("userPromptSubmitted"),
        )
        .unwrap();
        assert_eq!(t.moment, "UserPromptSubmit");
        assert_eq!(t.event.fields["prompt"], "Please do the task.");
        // A permissionRequest names itself (hookName).
        let input = include_str!(
            "../../../tests/fixtures/agents/copilot-cli/native-permissionRequest.json"
        );
        let t = translate_as(Agent::CopilotCli, input.as_bytes(), None).unwrap();
        assert_eq!(t.moment, "PermissionRequest");
        assert_eq!(t.event.fields["tool_name"], "Bash");
        assert_eq!(
            t.event.fields["tool_input"]["command"],
            "echo ran > marker.txt && echo TOOL-OUT"
        );
    }

    #[test]
    fn copilot_input_with_no_event_or_one_it_never_sends_is_not_placed() {
        let input =
            include_str!("../../../tests/fixtures/agents/copilot-cli/native-preToolUse.json");
        let no_event = translate_as(Agent::CopilotCli, input.as_bytes(), None).unwrap_err();
        assert!(no_event.contains("--event"), "{no_event}");
        let typo =
            translate_as(Agent::CopilotCli, input.as_bytes(), Some("preToolUze")).unwrap_err();
        assert!(typo.contains("did you mean \"preToolUse\""), "{typo}");
        let claude = include_str!(
            "../../../tests/fixtures/agents/copilot-cli/claude-format-PreToolUse-1.json"
        );
        let claude = translate_as(Agent::CopilotCli, claude.as_bytes(), None).unwrap_err();
        assert!(claude.contains("--agent claude-code"), "{claude}");
    }

    /// Found attacking the moments: tools of Copilot CLI and Qwen Code that edit files or run shells, and
    /// that escaped `Edit|Write` and `Bash` matchers.
    #[test]
    fn every_edit_and_shell_tool_is_seen_as_one() {
        let copilot = |tool: &str, args: Value| {
            let input = json!({"cwd": "/p", "toolName": tool, "toolArgs": args});
            translate_as(
                Agent::CopilotCli,
                input.to_string().as_bytes(),
                Some("preToolUse"),
            )
            .unwrap()
            .event
            .fields
        };
        let patch = "*** Begin Patch\n*** Update File: /etc/passwd\n*** End Patch";
        for args in [
            json!(patch),
            json!({"input": patch}),
            json!({"patch": patch}),
        ] {
            let fields = copilot("apply_patch", args.clone());
            assert_eq!(fields["tool_name"], "Edit", "{args}");
            assert_eq!(fields["agent_tool_name"], "apply_patch", "{args}");
            assert_eq!(fields["tool_input"]["file_path"], "/etc/passwd", "{args}");
        }
        assert_eq!(
            copilot("str_replace", json!({"path": "/p/a"}))["tool_name"],
            "Edit"
        );
        for shell in ["powershell", "local_shell", "write_bash", "bash"] {
            assert_eq!(
                copilot(shell, json!({"command": "rm -rf ~"}))["tool_name"],
                "Bash",
                "{shell}"
            );
        }
        // Its file tools' `path` is given as Claude Code's `file_path` too.
        // `toolArgs` as a JSON string, as its documentation shows it.
        let shell = copilot("bash", json!(r#"{"command": "rm -rf ~"}"#));
        assert_eq!(shell["tool_input"]["command"], "rm -rf ~");
        let edit = copilot("edit", json!({"path": "/etc/passwd"}));
        assert_eq!(edit["tool_input"]["file_path"], "/etc/passwd");
        assert_eq!(edit["tool_input"]["path"], "/etc/passwd");
        let input = json!({"hook_event_name": "PreToolUse", "tool_name": "monitor", "tool_input": {"command": "rm -rf ~"}});
        let qwen = translate(Agent::QwenCode, input.to_string().as_bytes()).unwrap();
        assert_eq!(qwen.event.fields["tool_name"], "Bash");
        assert_eq!(qwen.event.fields["agent_tool_name"], "monitor");
    }

    /// Found attacking the moments: told one event while the input names another, the relay answered in
    /// the shape of the wrong one.
    #[test]
    fn a_copilot_input_naming_another_event_than_the_relay_was_told_is_not_placed() {
        let input = include_str!(
            "../../../tests/fixtures/agents/copilot-cli/native-permissionRequest.json"
        );
        let told = translate_as(Agent::CopilotCli, input.as_bytes(), Some("preToolUse"));
        assert!(told.is_err_and(|why| why.contains("--event preToolUse")));
        assert!(
            translate_as(
                Agent::CopilotCli,
                input.as_bytes(),
                Some("permissionRequest")
            )
            .is_ok()
        );
    }

    /// Found attacking the moments: Codex's patch tool called through its shell (`apply_patch <<'EOF'`)
    /// was seen only as `Bash`; now as the edit too, `Bash` kept where a matcher looks.
    #[test]
    fn a_patch_through_the_shell_is_an_edit_and_still_bash() {
        let command = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\nEOF";
        let input = json!({"hook_event_name": "PreToolUse", "cwd": "/p", "tool_name": "Bash", "tool_input": {"command": command}});
        let fields = translate(Agent::Codex, input.to_string().as_bytes())
            .unwrap()
            .event
            .fields;
        assert_eq!(fields["tool_name"], "Edit");
        assert_eq!(fields["agent_tool_name"], "Bash");
        assert_eq!(fields["tool_input"]["file_path"], "/p/a.txt");
        assert_eq!(fields["tool_input"]["command"], command);
        // A shell command that only mentions a patch is the shell it is.
        let input = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "echo apply_patch"}});
        let fields = translate(Agent::Codex, input.to_string().as_bytes())
            .unwrap()
            .event
            .fields;
        assert_eq!(fields["tool_name"], "Bash");
    }

    /// Found in the second outside attack: Codex applies `cd DIR && apply_patch <<'EOF'` as a
    /// patch whose paths are from DIR, and hookd left it `Bash`, so an `Edit|Write` guard never ran.
    #[test]
    fn a_patch_through_the_shell_after_cd_is_an_edit_with_its_paths_from_there() {
        let body = "<<'EOF'\n*** Begin Patch\n*** Update File: hooks.toml\n@@\n-a\n+b\n*** Add File: ../x/new.txt\n+x\n*** End Patch\nEOF";
        let codex = |command: &str, cwd: Option<&str>| {
            let mut input = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}});
            if let Some(cwd) = cwd {
                input["cwd"] = json!(cwd);
            }
            translate(Agent::Codex, input.to_string().as_bytes())
                .unwrap()
                .event
                .fields
        };
        for (prefix, cwd, folder) in [
            // What Codex itself reads as a patch: a word, a "string" or a 'raw string', then &&.
            (
                "cd /home/u/.config/hookd && ",
                Some("/p"),
                "/home/u/.config/hookd",
            ),
            (
                "cd .config/hookd && ",
                Some("/home/u"),
                "/home/u/.config/hookd",
            ),
            ("cd \"/home/u/my conf\" && ", Some("/p"), "/home/u/my conf"),
            ("cd '/home/u/my conf' &&  ", Some("/p"), "/home/u/my conf"),
            (
                "  cd\t../u/.config/hookd&&",
                Some("/home/x"),
                "/home/u/.config/hookd",
            ),
            // What the shell runs all the same: `;`, a line of its own, several `cd`s, escapes.
            ("cd /home/u; ", Some("/p"), "/home/u"),
            ("cd /home/u &&\n", Some("/p"), "/home/u"),
            (
                "cd /home && cd u/.config && ",
                Some("/p"),
                "/home/u/.config",
            ),
            ("cd /home/u/my\\ conf && ", Some("/p"), "/home/u/my conf"),
            ("cd \"/home/u/a\\\"b\" && ", Some("/p"), "/home/u/a\"b"),
            // Relative, without a cwd: relative still.
            ("cd conf && ", None, "conf"),
            // Where the shell alone knows: as written.
            ("cd ~/.config/hookd && ", Some("/p"), "~/.config/hookd"),
            (
                "cd \"$HOME/.config/hookd\" && ",
                Some("/p"),
                "$HOME/.config/hookd",
            ),
            ("cd $(dirname \"$F\") && ", Some("/p"), "$(dirname \"$F\")"),
        ] {
            for tool in ["apply_patch", "applypatch"] {
                let command = format!("{prefix}{tool} {body}");
                let fields = codex(&command, cwd);
                assert_eq!(fields["tool_name"], "Edit", "{command:?}");
                assert_eq!(fields["agent_tool_name"], "Bash", "{command:?}");
                assert_eq!(fields["tool_input"]["command"], command);
                let parent = Path::new(folder).parent().unwrap();
                let expected = [
                    format!("{folder}/hooks.toml"),
                    parent.join("x/new.txt").to_str().unwrap().to_string(),
                ];
                assert_eq!(
                    fields["tool_input"]["file_path"], expected[0],
                    "{command:?}"
                );
                assert_eq!(
                    fields["tool_input"]["file_paths"],
                    json!(expected),
                    "{command:?}"
                );
            }
        }
        // A shell command that goes somewhere and does something else is the shell it is.
        for command in [
            "cd /tmp && echo apply_patch",
            "cd /tmp || apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF",
            "cd && apply_patch",
            "cd /tmp && apply_patch_notes.sh",
            "cdx /tmp && apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF",
        ] {
            assert_eq!(
                codex(command, Some("/p"))["tool_name"],
                "Bash",
                "{command:?}"
            );
        }
    }

    /// The head of an input too large or too deep to decode keeps every field an event is placed and
    /// matched by, under Copilot CLI's names too (found in review: a deep Copilot input lost its
    /// `toolName`, and its guard never ran).
    #[test]
    fn the_head_keeps_every_event_field_and_copilots_names_for_them() {
        for field in crate::protocol::head::EVENT_FIELDS {
            assert!(HEAD_FIELDS.contains(field), "{field}");
        }
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        let input = format!(
            r#"{{"sessionId":"s","cwd":"/tmp","toolName":"bash","toolArgs":{{"command":"rm -rf /","x":{deep}}}}}"#
        );
        let t = translate_as(Agent::CopilotCli, input.as_bytes(), Some("preToolUse")).unwrap();
        assert!(t.event.undecidable.is_some());
        assert_eq!(t.event.fields["tool_name"], "Bash");
        // toolArgs as a string: mended like the input itself, and one too deep is not let through.
        let args = r#"{"command":"rm -rf /","x":"\ud800"}"#;
        let input = json!({"sessionId": "s", "toolName": "create", "toolArgs": args}).to_string();
        let t = translate_as(Agent::CopilotCli, input.as_bytes(), Some("preToolUse")).unwrap();
        assert_eq!(t.event.fields["tool_input"]["command"], "rm -rf /");
        let args = format!(r#"{{"command":"rm -rf /","x":{deep}}}"#);
        let input = json!({"sessionId": "s", "toolName": "create", "toolArgs": args}).to_string();
        assert!(translate_as(Agent::CopilotCli, input.as_bytes(), Some("preToolUse")).is_err());
    }

    #[test]
    fn a_rewrite_is_carried_back_to_the_agents_own_input() {
        // Codex's patch: hooks see its paths, which a rewrite cannot change.
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch";
        let input = json!({"hook_event_name": "PreToolUse", "cwd": "/p", "tool_name": "apply_patch",
            "tool_input": {"command": patch}});
        let translated = translate(Agent::Codex, input.to_string().as_bytes()).unwrap();
        let carry_back = translated
            .carry_back
            .expect("the translation changed the input");
        let mut rewritten = translated.event.fields["tool_input"].clone();
        rewritten["file_path"] = json!("/p/b.txt");
        assert!(agent_input(&carry_back, &rewritten).is_err());
        let mut rewritten = translated.event.fields["tool_input"].clone();
        rewritten["command"] = json!("*** Begin Patch\n*** End Patch");
        assert_eq!(
            agent_input(&carry_back, &rewritten).unwrap(),
            json!({"command": "*** Begin Patch\n*** End Patch"})
        );
        // Copilot CLI's toolArgs, a JSON string with `path`, seen as `file_path` too.
        let input = json!({"toolName": "edit", "toolArgs": "{\"path\": \"/p/a\", \"x\": 1}"});
        let translated = translate_as(
            Agent::CopilotCli,
            input.to_string().as_bytes(),
            Some("preToolUse"),
        )
        .unwrap();
        let carry_back = translated.carry_back.expect("toolArgs read as an object");
        let mut rewritten = translated.event.fields["tool_input"].clone();
        rewritten["file_path"] = json!("/p/b");
        assert_eq!(
            agent_input(&carry_back, &rewritten).unwrap(),
            json!({"path": "/p/b", "x": 1})
        );
        // Claude Code's input is given to hooks as it is: nothing to carry back.
        let input = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}});
        let translated = translate(Agent::ClaudeCode, input.to_string().as_bytes()).unwrap();
        assert_eq!(translated.carry_back, None);
    }
}
