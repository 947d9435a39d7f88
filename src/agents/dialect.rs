//! The agents' hook dialects: their hook input read as a fire, and a verdict written back as the agent
//! reads it (docs/agents.md, the agents' answers). What differs per agent is read from its row
//! ([`crate::agent::AGENTS`]: its names, its tools, its [`Dialect`]) and the moment's row
//! ([`crate::moment::KNOWN`]: its [`Shape`]); the code here has one arm per dialect and shape. Pure: `hookd relay` (a process the agent starts) and the HTTP listener (an
//! agent's http hook) both answer through [`answer`], so the two cannot drift apart.

use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::agent::{InputRewrite, OutputRewrite};
use crate::agents::{Agent, Dialect};
use crate::head::{Head, Scanner};
use crate::limits::MAX_DEPTH;
use crate::moment::Shape;
use crate::protocol::{Event, FireResponse, Permission};

/// How the answer reaches the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// A command hook: stdout, stderr and an exit status.
    Process,
    /// An http hook: a response body and nothing else. HTTP has no exit status, so where a process
    /// refuses with exit 2 and stderr ([`Shape::ExitTwo`]), the body says it in JSON: `systemMessage`
    /// (what Claude Code shows the user for an exit 2 at those moments), or Gemini CLI's `decision: "deny"`.
    Http,
}

/// What the agent reads: for a process (the relay), what it prints and how it exits; over HTTP, `stdout`
/// is the response body and the rest is always empty and 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    pub exit: u8,
}

impl Answer {
    pub fn nothing() -> Answer {
        Answer {
            stdout: None,
            stderr: None,
            exit: 0,
        }
    }
}

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
/// `input` is at most [`MAX_EVENT`](crate::limits::MAX_EVENT) bytes (past that, see [`translate_head`]). Lone
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
    let value = match crate::head::parse(input) {
        Ok(value) => value,
        Err(e) if crate::head::too_deep(&e) => {
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
/// its head holds ([`EVENT_FIELDS`]).
pub fn translate_head(agent: Agent, head: Head, why: String) -> Result<Translated, String> {
    translate_head_as(agent, head, why, None)
}

/// [`EVENT_FIELDS`](crate::head::EVENT_FIELDS), and the same fields as Copilot CLI's native input names them (camelCase).
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
        },
        // Undecidable: its hooks are read as failed, and nothing is rewritten.
        carry_back: None,
    })
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
        .filter(|_| crate::moment::rewrites_input(&moment))
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
            crate::moment::shown(named)
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
            crate::moment::shown(told),
            crate::moment::shown(named)
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
        match crate::head::parse(args.as_bytes()) {
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

/// The verdict as Copilot CLI's native hooks read it (checked with 1.0.102): flat JSON at the top level.
/// preToolUse `permissionDecision: "deny"` + `permissionDecisionReason`; permissionRequest `behavior:
/// "deny"` + `message`; agentStop and subagentStop `decision: "block"` + `reason` (sent on, the reason as
/// the next user message); userPromptSubmitted `decision: "block"` + `reason`; `additionalContext` where
/// Copilot takes it. Elsewhere a refusal is only a failed hook to Copilot: stderr and exit 2 (never exit 1,
/// which Copilot reads as a block too, so that no answer meant to let it go on can be read as one).
fn copilot_answer(
    shape: Shape,
    refusal: Option<&str>,
    context: Option<String>,
    transport: Transport,
) -> Answer {
    let json_answer = |value: Map<String, Value>| Answer {
        stdout: Some(Value::Object(value).to_string()),
        stderr: None,
        exit: 0,
    };
    let mut out = Map::new();
    let Some(reason) = refusal else {
        // At a stop, context reads as "keep going", and Copilot has nowhere to show it to the user.
        if let Some(context) = context.filter(|_| shape != Shape::Stop) {
            out.insert("additionalContext".into(), json!(context));
            return json_answer(out);
        }
        return Answer::nothing();
    };
    match shape {
        Shape::Stop => {
            let reason = match &context {
                Some(context) => format!("{reason}\n\n{context}"),
                None => reason.to_string(),
            };
            out.insert("decision".into(), json!("block"));
            out.insert("reason".into(), json!(reason));
            return json_answer(out);
        }
        Shape::PermissionDecision => {
            out.insert("permissionDecision".into(), json!("deny"));
            out.insert("permissionDecisionReason".into(), json!(reason));
        }
        Shape::PermissionBehavior => {
            out.insert("behavior".into(), json!("deny"));
            out.insert("message".into(), json!(reason));
        }
        Shape::ExitTwo if transport == Transport::Process => {
            return Answer {
                stdout: None,
                stderr: Some(reason.to_string()),
                exit: 2,
            };
        }
        // Copilot CLI has no elicitations, and no schema that a context beside a block would fail.
        Shape::Block | Shape::ExitTwo | Shape::BlockAlone | Shape::Decline => {
            out.insert("decision".into(), json!("block"));
            out.insert("reason".into(), json!(reason));
        }
    }
    if let Some(context) = context {
        out.insert("additionalContext".into(), json!(context));
    }
    json_answer(out)
}

/// A call of the agent's patch tool (Codex's `apply_patch`, [`AgentRow::patch_tool`](crate::agent::AgentRow))
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
    let shown = crate::moment::shown(event_name);
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
    match crate::moment::did_you_mean(event_name, own.iter().copied()) {
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

/// The reason to give the agent for a verdict: `None` when not refused; a refusal with no reason (or a
/// blank one) still gets one, since Gemini CLI and Codex let a refusal without a reason through.
pub fn refusal(refused: bool, reason: Option<&str>) -> Option<&str> {
    refused.then(|| {
        reason
            .filter(|r| !r.trim().is_empty())
            .unwrap_or("refused by hookd")
    })
}

/// The verdict in the agent's dialect: the moment's [`Shape`] as the agent's [`Dialect`] writes it
/// (docs/agents.md, the agents' answers). `refusal` is the reason when refused.
pub fn answer(
    agent: Agent,
    moment: &str,
    agent_event_name: &str,
    refusal: Option<&str>,
    adds: &[&str],
    transport: Transport,
) -> Answer {
    let mut context = (!adds.is_empty()).then(|| adds.join("\n\n"));
    // Where the agent would read `additionalContext` as a failed hook (Codex at PermissionRequest), what
    // hooks add follows the reason of a refusal, as at Stop, and is left out otherwise: a refusal must
    // never be lost for a text beside it.
    let folded = context
        .take_if(|_| agent.rejects_context(moment))
        .and_then(|added| refusal.map(|reason| format!("{reason}\n\n{added}")));
    let refusal = folded.as_deref().or(refusal);
    let shape = crate::moment::answer(moment);
    let dialect = agent.dialect();
    // Where the agent only takes advice, a refusal would be ignored: said as what it is instead.
    if let Some(reason) = refusal
        && agent.advisory(moment)
    {
        return advisory_refusal(agent, agent_event_name, reason, context, transport);
    }
    if dialect == Dialect::CopilotCli {
        return copilot_answer(shape, refusal, context, transport);
    }
    let json_answer = |value: Value| Answer {
        stdout: Some(value.to_string()),
        stderr: None,
        exit: 0,
    };
    let with_context = |mut specific: Map<String, Value>| {
        specific.insert(
            "hookEventName".into(),
            Value::String(agent_event_name.into()),
        );
        if let Some(context) = &context {
            specific.insert("additionalContext".into(), Value::String(context.clone()));
        }
        Value::Object(specific)
    };
    let Some(reason) = refusal else {
        return match context {
            None => Answer::nothing(),
            // At Stop, additionalContext reads as "keep going": what hooks add is shown to the user.
            Some(context) if matches!(shape, Shape::Stop | Shape::BlockAlone) => {
                json_answer(json!({"systemMessage": context}))
            }
            Some(_) => json_answer(json!({"hookSpecificOutput": with_context(Map::new())})),
        };
    };
    // The word of a JSON refusal.
    let decision = match dialect {
        Dialect::ClaudeCode => "block",
        Dialect::GeminiCli => "deny",
        Dialect::CopilotCli => unreachable!("answered by copilot_answer above"),
    };
    let mut out = Map::new();
    match (shape, dialect) {
        (Shape::ExitTwo, _) if transport == Transport::Process => {
            return Answer {
                stdout: None,
                stderr: Some(reason.to_string()),
                exit: 2,
            };
        }
        // Over HTTP, what Claude Code shows the user for an exit 2 at those moments.
        (Shape::ExitTwo, Dialect::ClaudeCode) => {
            out.insert("systemMessage".into(), json!(reason));
            if context.is_some() {
                out.insert("hookSpecificOutput".into(), with_context(Map::new()));
            }
        }
        (Shape::Stop | Shape::BlockAlone, _) => {
            // The reason is what the agent is sent on to do; what hooks add follows it.
            let reason = match &context {
                Some(context) => format!("{reason}\n\n{context}"),
                None => reason.to_string(),
            };
            return json_answer(json!({"decision": decision, "reason": reason}));
        }
        (Shape::PermissionDecision, Dialect::ClaudeCode) => {
            let mut specific = Map::new();
            specific.insert("permissionDecision".into(), json!("deny"));
            specific.insert("permissionDecisionReason".into(), json!(reason));
            out.insert("hookSpecificOutput".into(), with_context(specific));
        }
        (Shape::PermissionBehavior, Dialect::ClaudeCode) => {
            let mut specific = Map::new();
            specific.insert(
                "decision".into(),
                json!({"behavior": "deny", "message": reason}),
            );
            out.insert("hookSpecificOutput".into(), with_context(specific));
        }
        (Shape::Decline, Dialect::ClaudeCode) => {
            // Claude Code gives the user's side of an MCP elicitation a decline, with the reason.
            out.insert("reason".into(), json!(reason));
            let mut specific = Map::new();
            specific.insert("action".into(), json!("decline"));
            out.insert("hookSpecificOutput".into(), with_context(specific));
        }
        // Gemini CLI refuses every moment alike; over HTTP even where a process would exit 2.
        // (Copilot CLI is answered by copilot_answer above.)
        (Shape::Block, _) | (_, Dialect::GeminiCli) | (_, Dialect::CopilotCli) => {
            out.insert("decision".into(), json!(decision));
            out.insert("reason".into(), json!(reason));
            if context.is_some() {
                out.insert("hookSpecificOutput".into(), with_context(Map::new()));
            }
        }
    }
    json_answer(Value::Object(out))
}

/// A fire's verdict as the dialect code answers it: the socket's [`FireResponse`] with its rewritten
/// input already carried back into the agent's own terms ([`agent_input`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Said<'a> {
    /// The call must not go on unattended (a refusal, or an ask).
    pub refused: bool,
    pub permission: Option<Permission>,
    pub reason: Option<Cow<'a, str>>,
    pub adds: Vec<&'a str>,
    /// The tool input to run instead, in the agent's terms.
    pub input: Option<Value>,
    /// What the model should see of the tool's result instead.
    pub output: Option<&'a Value>,
}

impl<'a> Said<'a> {
    /// The response as said to `agent`: `Err` (the refusal to give) when a rewritten input cannot be
    /// carried back into the agent's terms.
    pub fn of(
        response: &'a FireResponse,
        carry_back: Option<&CarryBack>,
    ) -> Result<Said<'a>, String> {
        let input = match (&response.input, carry_back) {
            (Some(input), Some(carry_back))
                if !response.refused || response.permission == Some(Permission::Ask) =>
            {
                Some(agent_input(carry_back, input)?)
            }
            (input, _) => input.clone(),
        };
        Ok(Said {
            refused: response.refused,
            permission: response.permission,
            reason: response.reason.as_deref().map(Cow::Borrowed),
            adds: response.adds.iter().map(String::as_str).collect(),
            input,
            output: response.output.as_ref(),
        })
    }

    /// A refusal with `reason` and nothing else.
    pub fn refusal_owned(reason: String) -> Said<'static> {
        Said {
            refused: true,
            permission: None,
            reason: Some(Cow::Owned(reason)),
            adds: Vec::new(),
            input: None,
            output: None,
        }
    }
}

/// A rewritten tool input (`rewritten`, in the terms hooks were given) in the agent's own terms: each
/// field hooks changed is changed in the input as the agent gave it. A field the translation made
/// (Codex's patch paths) cannot be carried back: `Err`, and the call is refused rather than run as it
/// was before the rewrite. Copilot CLI's `path`, which hooks see as `file_path` too, is carried back to
/// `path`.
pub fn agent_input(carry_back: &CarryBack, rewritten: &Value) -> Result<Value, String> {
    let own = match &carry_back.own {
        // Copilot CLI's toolArgs as its documentation shows it: a JSON string of the object.
        Value::String(text) => match crate::head::parse(text.as_bytes()) {
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

/// The verdict in the agent's dialect, with what the agent can do of allow, ask and rewrites
/// ([`Powers`](crate::agent::Powers)); a plain refusal or adds as [`answer`]. Where the agent cannot do
/// what the verdict says, the safe side: an ask it cannot ask is a refusal that says approval is needed;
/// an allow it ignores is not sent; a rewritten input it cannot take refuses the call, giving the call
/// as rewritten; a rewrite it takes only with an allow is sent with one (no hook asked for caution, or
/// this would be an ask or a refusal).
pub fn answer_verdict(
    agent: Agent,
    moment: &str,
    agent_event_name: &str,
    said: &Said<'_>,
    transport: Transport,
) -> Answer {
    let shape = crate::moment::answer(moment);
    let powers = agent.powers();
    let before_tool = shape == Shape::PermissionDecision;
    let permission_request = shape == Shape::PermissionBehavior;
    let asked = said.refused && said.permission == Some(Permission::Ask);
    let plain = |refusal: Option<&str>| {
        answer(
            agent,
            moment,
            agent_event_name,
            refusal,
            &said.adds,
            transport,
        )
    };
    let rewritten_output = said
        .output
        .filter(|_| crate::moment::rewrites_output(moment));
    if said.refused && !asked {
        let reason = refusal(true, said.reason.as_deref());
        return match rewritten_output {
            Some(output) => output_answer(
                agent,
                moment,
                agent_event_name,
                output,
                reason,
                said,
                transport,
            ),
            None => plain(reason),
        };
    }
    let input = said
        .input
        .as_ref()
        .filter(|_| before_tool || permission_request);
    if asked {
        let reason = refusal(true, said.reason.as_deref()).unwrap_or_default();
        if before_tool
            && powers.ask
            && !agent.advisory(moment)
            && (input.is_none() || powers.input == InputRewrite::Alone)
        {
            return permission_answer(
                agent,
                agent_event_name,
                Some("ask"),
                Some(reason),
                input,
                &said.adds,
            );
        }
        if permission_request && input.is_none() {
            // The agent is about to ask the user: saying nothing lets it.
            return plain(None);
        }
        let why = match input {
            // Asked about, the call as the agent made it would run once approved: not the one hooks
            // rewrote it to.
            Some(input) if before_tool || permission_request => format!(
                "{reason} (a hook asks for a person's approval of this call as hooks rewrote it, and {} \
                 cannot ask about a rewritten call: refused; make this call instead, for approval: {input})",
                agent.display_name()
            ),
            _ => format!(
                "{reason} (a hook asks for a person's approval of this call, and {} cannot ask for it \
                 here: refused)",
                agent.display_name()
            ),
        };
        return match rewritten_output {
            Some(output) => output_answer(
                agent,
                moment,
                agent_event_name,
                output,
                Some(&why),
                said,
                transport,
            ),
            None => plain(Some(&why)),
        };
    }
    let allowed = said.permission == Some(Permission::Allow);
    if let Some(input) = input {
        let instead = || {
            format!(
                "hookd: the hooks rewrote this call, and {} cannot run a rewritten call here: make this \
                 call instead: {input}",
                agent.display_name()
            )
        };
        if permission_request {
            if allowed
                && powers.input == InputRewrite::Alone
                && agent.dialect() == Dialect::ClaudeCode
            {
                return permission_answer(
                    agent,
                    agent_event_name,
                    Some("allow"),
                    said.reason.as_deref(),
                    Some(input),
                    &said.adds,
                );
            }
            return plain(Some(&instead()));
        }
        return match powers.input {
            InputRewrite::Refused => plain(Some(&instead())),
            InputRewrite::Alone => {
                let word = (allowed && powers.allow).then_some("allow");
                permission_answer(
                    agent,
                    agent_event_name,
                    word,
                    said.reason.as_deref(),
                    Some(input),
                    &said.adds,
                )
            }
            InputRewrite::WithAllow => permission_answer(
                agent,
                agent_event_name,
                Some("allow"),
                said.reason.as_deref(),
                Some(input),
                &said.adds,
            ),
        };
    }
    if allowed && ((before_tool && powers.allow) || permission_request) {
        return permission_answer(
            agent,
            agent_event_name,
            Some("allow"),
            said.reason.as_deref(),
            None,
            &said.adds,
        );
    }
    if let Some(output) = rewritten_output {
        return output_answer(
            agent,
            moment,
            agent_event_name,
            output,
            None,
            said,
            transport,
        );
    }
    plain(None)
}

/// An allow or an ask (`word`; `None`: a rewrite alone), with the rewritten input where there is one, as
/// the agent's dialect writes it before a tool runs or at a permission request.
fn permission_answer(
    agent: Agent,
    agent_event_name: &str,
    word: Option<&str>,
    reason: Option<&str>,
    input: Option<&Value>,
    adds: &[&str],
) -> Answer {
    let moment = agent.moment_of(agent_event_name);
    // Where the agent reads `additionalContext` as a failed hook (Codex at PermissionRequest), what hooks
    // add is left out: beside it, the allow would be lost.
    let context = (!adds.is_empty() && !agent.rejects_context(&moment)).then(|| adds.join("\n\n"));
    let permission_request = moment == crate::moment::PERMISSION_REQUEST;
    let mut out = Map::new();
    match agent.dialect() {
        Dialect::CopilotCli => {
            if permission_request {
                if let Some(word) = word {
                    out.insert("behavior".into(), json!(word));
                }
            } else {
                if let Some(word) = word {
                    out.insert("permissionDecision".into(), json!(word));
                    if let Some(reason) = reason {
                        out.insert("permissionDecisionReason".into(), json!(reason));
                    }
                }
                if let Some(input) = input {
                    out.insert("modifiedArgs".into(), input.clone());
                }
            }
            if let Some(context) = context {
                out.insert("additionalContext".into(), json!(context));
            }
        }
        dialect => {
            let mut specific = Map::new();
            specific.insert("hookEventName".into(), json!(agent_event_name));
            if permission_request {
                let mut decision = Map::new();
                if let Some(word) = word {
                    decision.insert("behavior".into(), json!(word));
                }
                if let Some(input) = input {
                    decision.insert("updatedInput".into(), input.clone());
                }
                specific.insert("decision".into(), Value::Object(decision));
            } else {
                if let Some(word) = word {
                    specific.insert("permissionDecision".into(), json!(word));
                    if let Some(reason) = reason {
                        specific.insert("permissionDecisionReason".into(), json!(reason));
                    }
                }
                if let Some(input) = input {
                    let key = match dialect {
                        Dialect::GeminiCli => "tool_input",
                        _ => "updatedInput",
                    };
                    specific.insert(key.into(), input.clone());
                }
            }
            if let Some(context) = context {
                specific.insert("additionalContext".into(), json!(context));
            }
            out.insert("hookSpecificOutput".into(), Value::Object(specific));
        }
    }
    Answer {
        stdout: Some(Value::Object(out).to_string()),
        stderr: None,
        exit: 0,
    }
}

/// A rewritten tool output as the agent takes one ([`OutputRewrite`]), beside `refusal` when the verdict
/// refused after the tool ran: a refusal there cannot undo the call, and without the rewrite the model
/// would see the output as it was (the secret a redaction hid).
fn output_answer(
    agent: Agent,
    moment: &str,
    agent_event_name: &str,
    output: &Value,
    refusal: Option<&str>,
    said: &Said<'_>,
    transport: Transport,
) -> Answer {
    let plain = |reason: Option<&str>| {
        answer(
            agent,
            moment,
            agent_event_name,
            reason,
            &said.adds,
            transport,
        )
    };
    let base = match agent.powers().output {
        // All the model sees of the result is the reason of a block: the refusal's, else the output.
        OutputRewrite::AsReason => {
            return plain(Some(refusal.unwrap_or(&model_text(output))));
        }
        // The stopReason is what the model gets as the result: the refusal, then the output.
        OutputRewrite::ContinueFalse => {
            let text = model_text(output);
            let mut out = Map::new();
            out.insert("continue".into(), json!(false));
            let (stop_reason, stderr) = match refusal {
                Some(reason) => (format!("{reason}\n\n{text}"), plain(Some(reason)).stderr),
                None => (text, None),
            };
            out.insert("stopReason".into(), json!(stop_reason));
            if refusal.is_none() && !said.adds.is_empty() {
                out.insert(
                    "hookSpecificOutput".into(),
                    json!({"hookEventName": agent_event_name, "additionalContext": said.adds.join("\n\n")}),
                );
            }
            return Answer {
                stdout: Some(Value::Object(out).to_string()),
                stderr,
                exit: 0,
            };
        }
        OutputRewrite::Shaped | OutputRewrite::CopilotResult => plain(refusal),
    };
    if refusal.is_some() && base.stdout.is_none() {
        // A refusal on stderr and exit 2, kept as it is.
        return base;
    }
    let mut object = match base.stdout.as_deref().map(serde_json::from_str::<Value>) {
        Some(Ok(Value::Object(object))) => object,
        _ => Map::new(),
    };
    if agent.powers().output == OutputRewrite::CopilotResult {
        object.insert("modifiedResult".into(), copilot_result(output));
    } else if let Value::Object(specific) = object
        .entry("hookSpecificOutput")
        .or_insert_with(|| json!({"hookEventName": agent_event_name}))
    {
        specific.insert("updatedToolOutput".into(), output.clone());
    }
    Answer {
        stdout: Some(Value::Object(object).to_string()),
        stderr: base.stderr,
        exit: 0,
    }
}

/// A rewritten output as Copilot CLI's `modifiedResult`.
fn copilot_result(output: &Value) -> Value {
    match output {
        Value::Object(object) if object.contains_key("textResultForLlm") => output.clone(),
        _ => json!({"textResultForLlm": model_text(output), "resultType": "success"}),
    }
}

/// A tool's result as text, for an agent that takes a rewritten result only as text: a string as it is;
/// the text field of the agents' result objects (`llmContent`, `textResultForLlm`, `output`, `content`),
/// or `stdout` and `stderr`; anything else as JSON.
pub fn model_text(output: &Value) -> String {
    if let Value::String(text) = output {
        return text.clone();
    }
    // The field the model is given, whatever it holds (Gemini CLI's MCP results give parts, not text):
    // never the whole object, whose display fields (`returnDisplay`) the model never sees and a hook
    // may not have rewritten. The fields in the order the fold writes text into them.
    let field = |key: &str| output.get(key).and_then(Value::as_str);
    if let Some(key) = crate::engine::verdict::TEXT_FIELDS
        .iter()
        .find(|key| output.get(**key).is_some_and(|value| !value.is_null()))
    {
        if *key == "stdout" {
            return match (field("stdout"), field("stderr")) {
                (Some(out), Some(err)) if !err.is_empty() => format!("{out}\n{err}"),
                (Some(out), _) => out.to_string(),
                _ => output["stdout"].to_string(),
            };
        }
        return match &output[*key] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
    }
    match field("stderr") {
        Some(err) => err.to_string(),
        None => output.to_string(),
    }
}

/// What a refusal says at a moment where the agent only takes advice ([`Agent::advisory`]: Gemini CLI
/// at PreCompress, for one): not a deny the agent would ignore, so that nobody believes something was
/// held back, but a `systemMessage` that says the agent goes on (Claude Code, Codex and Gemini CLI all
/// show it to the user), what the hooks add kept as context, and for a process the same line on stderr.
pub fn advisory_refusal(
    agent: Agent,
    agent_event_name: &str,
    reason: &str,
    context: Option<String>,
    transport: Transport,
) -> Answer {
    let said = advisory_message(agent, agent_event_name, reason);
    let stderr = (transport == Transport::Process).then(|| format!("hookd relay: {said}"));
    if agent.dialect() == Dialect::CopilotCli && transport == Transport::Process {
        // Copilot CLI reads no message from a hook: the line on stderr says it, the context goes on.
        let stdout = context.map(|context| json!({"additionalContext": context}).to_string());
        return Answer {
            stdout,
            stderr,
            exit: 0,
        };
    }
    let mut out = Map::new();
    out.insert("systemMessage".into(), json!(said));
    if let Some(context) = context {
        out.insert(
            "hookSpecificOutput".into(),
            json!({"hookEventName": agent_event_name, "additionalContext": context}),
        );
    }
    Answer {
        stdout: Some(Value::Object(out).to_string()),
        stderr,
        exit: 0,
    }
}

/// The words for a refusal the agent will not heed (see [`advisory_refusal`]).
pub fn advisory_message(agent: Agent, agent_event_name: &str, reason: &str) -> String {
    format!(
        "{reason} (a refusal at {agent_event_name}, where {} only takes advice: it goes on)",
        agent.display_name()
    )
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

    /// The answer of a process (the relay's).
    fn answer(
        agent: Agent,
        moment: &str,
        event_name: &str,
        refusal: Option<&str>,
        adds: &[&str],
    ) -> Answer {
        super::answer(agent, moment, event_name, refusal, adds, Transport::Process)
    }

    fn parsed(answer: &Answer) -> Value {
        serde_json::from_str(answer.stdout.as_deref().expect("stdout")).expect("JSON")
    }

    #[test]
    fn claude_pre_tool_use_refusal_is_a_permission_deny() {
        let answer = answer(
            Agent::ClaudeCode,
            "PreToolUse",
            "PreToolUse",
            Some("no rm"),
            &[],
        );
        assert_eq!((answer.exit, answer.stderr.as_deref()), (0, None));
        assert_eq!(
            parsed(&answer),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no rm"}})
        );
    }

    #[test]
    fn codex_permission_request_refusal_carries_what_hooks_add_in_its_message() {
        let answer = answer(
            Agent::Codex,
            "PermissionRequest",
            "PermissionRequest",
            Some("R"),
            &["T1", "T2"],
        );
        assert_eq!(
            parsed(&answer),
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "R\n\nT1\n\nT2"}}})
        );
        let added = self::answer(
            Agent::Codex,
            "PermissionRequest",
            "PermissionRequest",
            None,
            &["T"],
        );
        assert_eq!(added, Answer::nothing());
        // Elsewhere Codex takes it as Claude Code does.
        let pre = self::answer(Agent::Codex, "PreToolUse", "PreToolUse", Some("R"), &["T"]);
        assert_eq!(parsed(&pre)["hookSpecificOutput"]["additionalContext"], "T");
    }

    #[test]
    fn claude_permission_request_refusal_denies_the_permission() {
        let answer = answer(
            Agent::ClaudeCode,
            "PermissionRequest",
            "PermissionRequest",
            Some("R"),
            &["T"],
        );
        assert_eq!(
            parsed(&answer),
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "R"}, "additionalContext": "T"}})
        );
    }

    #[test]
    fn block_moments_refuse_with_decision_block_and_keep_the_adds() {
        for moment in ["UserPromptSubmit", "PostToolUse", "PostToolUseFailure"] {
            let answer = answer(Agent::ClaudeCode, moment, moment, Some("R"), &["T1", "T2"]);
            assert_eq!(
                parsed(&answer),
                json!({"decision": "block", "reason": "R", "hookSpecificOutput": {"hookEventName": moment, "additionalContext": "T1\n\nT2"}}),
                "{moment}"
            );
        }
    }

    #[test]
    fn stop_refusals_carry_the_adds_after_the_reason() {
        for moment in ["Stop", "SubagentStop"] {
            let answer = answer(
                Agent::ClaudeCode,
                moment,
                moment,
                Some("tests fail"),
                &["T"],
            );
            assert_eq!(
                parsed(&answer),
                json!({"decision": "block", "reason": "tests fail\n\nT"})
            );
        }
    }

    #[test]
    fn stop_adds_without_refusal_go_to_the_user_not_the_model() {
        let answer = answer(Agent::ClaudeCode, "Stop", "Stop", None, &["T1", "T2"]);
        assert_eq!(parsed(&answer), json!({"systemMessage": "T1\n\nT2"}));
        let answer = self::answer(Agent::GeminiCli, "Stop", "AfterAgent", None, &["T"]);
        assert_eq!(parsed(&answer), json!({"systemMessage": "T"}));
    }

    #[test]
    fn an_elicitation_refused_is_declined_with_the_reason() {
        for moment in ["Elicitation", "ElicitationResult"] {
            for transport in [Transport::Process, Transport::Http] {
                let answer =
                    super::answer(Agent::ClaudeCode, moment, moment, Some("R"), &[], transport);
                assert_eq!(
                    parsed(&answer),
                    json!({"reason": "R", "hookSpecificOutput": {"hookEventName": moment, "action": "decline"}}),
                    "{moment}"
                );
            }
        }
    }

    #[test]
    fn claude_codes_other_moments_refuse_in_the_shape_it_reads_there() {
        for moment in ["PreModelSwitch", "PreSkillShellCommand"] {
            let answer = answer(Agent::ClaudeCode, moment, moment, Some("R"), &[]);
            assert_eq!(
                parsed(&answer)["hookSpecificOutput"]["permissionDecision"],
                "deny",
                "{moment}"
            );
        }
        for moment in ["UserPromptExpansion", "PostToolBatch"] {
            let answer = answer(Agent::ClaudeCode, moment, moment, Some("R"), &["T"]);
            assert_eq!(
                parsed(&answer),
                json!({"decision": "block", "reason": "R", "hookSpecificOutput": {"hookEventName": moment, "additionalContext": "T"}}),
                "{moment}"
            );
        }
        // Claude Code's schema has no hookSpecificOutput for these: nothing the refusal rides on may be
        // out of it, and what hooks add goes to the user. Found serving every moment: an answer naming one
        // (PreCompact's) is read as plain text, and a refusal with something added was lost.
        for moment in [
            "TaskCompleted",
            "TeammateIdle",
            "TaskCreated",
            "ConfigChange",
            "PreCompact",
        ] {
            let added = answer(Agent::ClaudeCode, moment, moment, None, &["T"]);
            assert_eq!(parsed(&added), json!({"systemMessage": "T"}), "{moment}");
            let answer = answer(Agent::ClaudeCode, moment, moment, Some("R"), &["T"]);
            assert_eq!(
                parsed(&answer),
                json!({"decision": "block", "reason": "R\n\nT"}),
                "{moment}"
            );
        }
    }

    #[test]
    fn other_moments_refuse_on_stderr_with_exit_2() {
        // Codex heeds a refusal at SessionStart (Claude Code only takes advice there: below).
        let answer = answer(
            Agent::Codex,
            "SessionStart",
            "SessionStart",
            Some("R"),
            &["T"],
        );
        assert_eq!(
            answer,
            Answer {
                stdout: None,
                stderr: Some("R".into()),
                exit: 2
            }
        );
    }

    #[test]
    fn adds_alone_are_additional_context() {
        let answer = answer(
            Agent::ClaudeCode,
            "UserPromptSubmit",
            "UserPromptSubmit",
            None,
            &["branch: main"],
        );
        assert_eq!(
            parsed(&answer),
            json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "branch: main"}})
        );
    }

    #[test]
    fn nothing_to_say_prints_nothing() {
        assert_eq!(
            answer(Agent::ClaudeCode, "PreToolUse", "PreToolUse", None, &[]),
            Answer::nothing()
        );
    }

    #[test]
    fn gemini_refusals_use_its_fields_and_event_names() {
        let answer = answer(
            Agent::GeminiCli,
            "PreToolUse",
            "BeforeTool",
            Some("R"),
            &["T"],
        );
        assert_eq!(
            parsed(&answer),
            json!({"decision": "deny", "reason": "R", "hookSpecificOutput": {"hookEventName": "BeforeTool", "additionalContext": "T"}})
        );
        let answer = self::answer(Agent::GeminiCli, "Stop", "AfterAgent", Some("R"), &[]);
        assert_eq!(parsed(&answer), json!({"decision": "deny", "reason": "R"}));
        let answer = self::answer(
            Agent::GeminiCli,
            "UserPromptSubmit",
            "BeforeAgent",
            None,
            &["T"],
        );
        assert_eq!(
            parsed(&answer),
            json!({"hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "T"}})
        );
    }

    #[test]
    fn a_refusal_where_the_agent_only_advises_says_it_goes_on() {
        for (moment, event_name) in [
            ("SessionStart", "SessionStart"),
            ("PreCompact", "PreCompress"),
            ("Notification", "Notification"),
            ("SessionEnd", "SessionEnd"),
        ] {
            let answer = answer(Agent::GeminiCli, moment, event_name, Some("R"), &["T"]);
            let said = format!(
                "R (a refusal at {event_name}, where Gemini CLI only takes advice: it goes on)"
            );
            assert_eq!(answer.exit, 0, "{moment}");
            assert_eq!(
                answer.stderr.as_deref(),
                Some(format!("hookd relay: {said}").as_str())
            );
            assert_eq!(
                parsed(&answer),
                json!({"systemMessage": said, "hookSpecificOutput": {"hookEventName": event_name, "additionalContext": "T"}}),
                "{moment}"
            );
        }
        // Where Gemini CLI heeds a refusal, it is still a deny; and so it is for an agent that heeds it.
        let answer = answer(Agent::GeminiCli, "PreToolUse", "BeforeTool", Some("R"), &[]);
        assert_eq!(parsed(&answer), json!({"decision": "deny", "reason": "R"}));
        let answer = self::answer(
            Agent::ClaudeCode,
            "PreCompact",
            "PreCompact",
            Some("R"),
            &[],
        );
        assert_eq!(parsed(&answer), json!({"decision": "block", "reason": "R"}));
    }

    #[test]
    fn gemini_input_gets_claude_names() {
        let input = include_str!("../../tests/fixtures/agents/gemini-cli/BeforeTool.json");
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
        let input = include_str!("../../tests/fixtures/agents/qwen-code/PreToolUse-1.json");
        let t = translate(Agent::QwenCode, input.as_bytes()).unwrap();
        assert_eq!(
            (t.moment.as_str(), t.event_name.as_str()),
            ("PreToolUse", "PreToolUse")
        );
        assert_eq!(t.event.fields["tool_name"], "Bash");
        assert_eq!(t.event.fields["agent_tool_name"], "run_shell_command");
        // The second UserPromptSubmit of a turn, after a tool result: an empty prompt, read as is.
        let input = include_str!("../../tests/fixtures/agents/qwen-code/UserPromptSubmit-2.json");
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
        let input = include_str!("../../tests/fixtures/agents/codex/PreToolUse-apply_patch.json");
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
        let post = include_str!("../../tests/fixtures/agents/codex/PostToolUse-apply_patch.json");
        let t = translate(Agent::Codex, post.as_bytes()).unwrap();
        assert_eq!(
            (t.moment.as_str(), &t.event.fields["tool_name"]),
            ("PostToolUse", &json!("Write"))
        );
    }

    #[test]
    fn qwen_code_reads_claude_code_answers() {
        // Checked against @qwen-code/qwen-code 0.24.4: `permissionDecision: "deny"` at PreToolUse,
        // `decision: "block"` at UserPromptSubmit and Stop, exit 2 with the reason on stderr elsewhere.
        for (moment, refusal) in [
            ("PreToolUse", Some("no rm")),
            ("UserPromptSubmit", Some("R")),
            ("Stop", Some("tests fail")),
            ("PermissionRequest", Some("R")),
            ("UserPromptSubmit", None),
        ] {
            assert_eq!(
                answer(Agent::QwenCode, moment, moment, refusal, &["T"]),
                answer(Agent::ClaudeCode, moment, moment, refusal, &["T"]),
                "{moment}"
            );
        }
    }

    #[test]
    fn gemini_mcp_tools_get_claude_names() {
        for fixture in [
            include_str!("../../tests/fixtures/agents/gemini-cli/mcp-BeforeTool-1.json"),
            include_str!("../../tests/fixtures/agents/gemini-cli/mcp-AfterTool-1.json"),
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
        let bash = include_str!("../../tests/fixtures/agents/codex/PreToolUse-1.json");
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
        let input = include_str!("../../tests/fixtures/agents/claude-code/PreToolUse-1.json");
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
        let input = include_str!("../../tests/fixtures/agents/copilot-cli/native-preToolUse.json");
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
        let input = include_str!("../../tests/fixtures/agents/copilot-cli/native-agentStop.json");
        let t = translate_as(Agent::CopilotCli, input.as_bytes(), Some("agentStop")).unwrap();
        assert_eq!(t.moment, "Stop");
        assert_eq!(t.event.fields["stop_hook_active"], false);
        let input =
            include_str!("../../tests/fixtures/agents/copilot-cli/native-userPromptSubmitted.json");
        let t = translate_as(
            Agent::CopilotCli,
            input.as_bytes(),
            Some("userPromptSubmitted"),
        )
        .unwrap();
        assert_eq!(t.moment, "UserPromptSubmit");
        assert_eq!(t.event.fields["prompt"], "Please do the task.");
        // A permissionRequest names itself (hookName).
        let input =
            include_str!("../../tests/fixtures/agents/copilot-cli/native-permissionRequest.json");
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
        let input = include_str!("../../tests/fixtures/agents/copilot-cli/native-preToolUse.json");
        let no_event = translate_as(Agent::CopilotCli, input.as_bytes(), None).unwrap_err();
        assert!(no_event.contains("--event"), "{no_event}");
        let typo =
            translate_as(Agent::CopilotCli, input.as_bytes(), Some("preToolUze")).unwrap_err();
        assert!(typo.contains("did you mean \"preToolUse\""), "{typo}");
        let claude =
            include_str!("../../tests/fixtures/agents/copilot-cli/claude-format-PreToolUse-1.json");
        let claude = translate_as(Agent::CopilotCli, claude.as_bytes(), None).unwrap_err();
        assert!(claude.contains("--agent claude-code"), "{claude}");
    }

    #[test]
    fn copilot_answers_are_flat_and_never_exit_1() {
        let a = |moment: &str, refusal: Option<&str>, adds: &[&str]| {
            let event = Agent::CopilotCli.event_name_of(moment).to_string();
            answer(Agent::CopilotCli, moment, &event, refusal, adds)
        };
        assert_eq!(
            parsed(&a("PreToolUse", Some("no rm"), &[])),
            json!({"permissionDecision": "deny", "permissionDecisionReason": "no rm"})
        );
        assert_eq!(
            parsed(&a("Stop", Some("tests fail"), &["T"])),
            json!({"decision": "block", "reason": "tests fail\n\nT"})
        );
        assert_eq!(
            parsed(&a("PermissionRequest", Some("R"), &[])),
            json!({"behavior": "deny", "message": "R"})
        );
        assert_eq!(
            parsed(&a("UserPromptSubmit", Some("R"), &["T"])),
            json!({"decision": "block", "reason": "R", "additionalContext": "T"})
        );
        assert_eq!(
            parsed(&a("UserPromptSubmit", None, &["T1", "T2"])),
            json!({"additionalContext": "T1\n\nT2"})
        );
        assert_eq!(a("Stop", None, &["T"]), Answer::nothing());
        for moment in Agent::CopilotCli.moments() {
            for refusal in [None, Some("R")] {
                let answer = a(moment, refusal, &["T"]);
                assert!(answer.exit == 0 || answer.exit == 2, "{moment}: {answer:?}");
            }
        }
    }

    #[test]
    fn over_http_every_refusal_is_json() {
        for agent in Agent::ALL {
            for moment in crate::moment::KNOWN.iter().map(|m| m.name) {
                let answer =
                    super::answer(agent, moment, moment, Some("R"), &["T"], Transport::Http);
                assert_eq!(
                    (answer.exit, answer.stderr.as_deref()),
                    (0, None),
                    "{moment}"
                );
                // The reason is a value of the body, or starts one (what hooks add may follow it); a
                // key would not do.
                fn holds(value: &Value, text: &str) -> bool {
                    match value {
                        Value::String(s) => s.starts_with(text),
                        Value::Object(map) => map.values().any(|v| holds(v, text)),
                        Value::Array(items) => items.iter().any(|v| holds(v, text)),
                        _ => false,
                    }
                }
                let body = parsed(&answer);
                assert!(holds(&body, "R"), "{agent:?} {moment}: {body}");
            }
        }
    }

    #[test]
    fn over_http_an_exit_2_moment_refuses_with_a_system_message() {
        let answer = super::answer(
            Agent::ClaudeCode,
            "SessionStart",
            "SessionStart",
            Some("R"),
            &["T"],
            Transport::Http,
        );
        // Claude Code only shows a refusal at SessionStart to the user: said as what it is.
        assert_eq!(
            parsed(&answer),
            json!({"systemMessage": "R (a refusal at SessionStart, where Claude Code only takes advice: it goes on)", "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "T"}})
        );
        // Gemini CLI ignores a refusal at SessionStart: said as what it is.
        let answer = super::answer(
            Agent::GeminiCli,
            "SessionStart",
            "SessionStart",
            Some("R"),
            &[],
            Transport::Http,
        );
        assert_eq!(
            parsed(&answer),
            json!({"systemMessage": "R (a refusal at SessionStart, where Gemini CLI only takes advice: it goes on)"})
        );
    }

    #[test]
    fn over_http_json_moments_answer_as_the_relay_does() {
        for moment in ["PreToolUse", "UserPromptSubmit", "Stop", "PostToolUse"] {
            for refusal in [None, Some("R")] {
                assert_eq!(
                    super::answer(
                        Agent::ClaudeCode,
                        moment,
                        moment,
                        refusal,
                        &["T"],
                        Transport::Http
                    ),
                    answer(Agent::ClaudeCode, moment, moment, refusal, &["T"]),
                    "{moment} {refusal:?}"
                );
            }
        }
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
        let input =
            include_str!("../../tests/fixtures/agents/copilot-cli/native-permissionRequest.json");
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
        for field in crate::head::EVENT_FIELDS {
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

    fn verdict(
        refused: bool,
        permission: Option<Permission>,
        reason: Option<&'static str>,
        input: Option<Value>,
        output: Option<&'static Value>,
    ) -> Said<'static> {
        Said {
            refused,
            permission,
            reason: reason.map(Cow::Borrowed),
            adds: Vec::new(),
            input,
            output,
        }
    }

    fn said_to(agent: Agent, moment: &str, said: &Said<'_>) -> Answer {
        let event_name = agent
            .event_names()
            .iter()
            .copied()
            .find(|name| agent.moment_of(name) == moment)
            .expect("the agent fires the moment");
        answer_verdict(agent, moment, event_name, said, Transport::Process)
    }

    fn allow() -> Said<'static> {
        verdict(
            false,
            Some(Permission::Allow),
            Some("read-only"),
            None,
            None,
        )
    }

    fn ask() -> Said<'static> {
        verdict(true, Some(Permission::Ask), Some("sure?"), None, None)
    }

    fn rewrite(allowed: bool) -> Said<'static> {
        verdict(
            false,
            allowed.then_some(Permission::Allow),
            None,
            Some(json!({"command": "mv x .trash/"})),
            None,
        )
    }

    #[test]
    fn an_allow_is_sent_only_to_agents_that_read_it() {
        let claude = parsed(&said_to(Agent::ClaudeCode, "PreToolUse", &allow()));
        assert_eq!(claude["hookSpecificOutput"]["permissionDecision"], "allow");
        assert_eq!(
            claude["hookSpecificOutput"]["permissionDecisionReason"],
            "read-only"
        );
        let copilot = parsed(&said_to(Agent::CopilotCli, "PreToolUse", &allow()));
        assert_eq!(copilot["permissionDecision"], "allow");
        for agent in [Agent::Codex, Agent::GeminiCli, Agent::QwenCode] {
            assert_eq!(
                said_to(agent, "PreToolUse", &allow()),
                Answer::nothing(),
                "{agent:?} ignores or fails on an allow: not sent"
            );
        }
        // At a permission request every agent that has one reads an allow.
        let codex = parsed(&said_to(Agent::Codex, "PermissionRequest", &allow()));
        assert_eq!(codex["hookSpecificOutput"]["decision"]["behavior"], "allow");
        let copilot = parsed(&said_to(Agent::CopilotCli, "PermissionRequest", &allow()));
        assert_eq!(copilot["behavior"], "allow");
    }

    #[test]
    fn an_allow_is_never_lost_for_a_text_beside_it() {
        let mut said = allow();
        said.adds = vec!["note"];
        let codex = parsed(&said_to(Agent::Codex, "PermissionRequest", &said));
        assert_eq!(codex["hookSpecificOutput"]["decision"]["behavior"], "allow");
        assert!(
            codex["hookSpecificOutput"]
                .get("additionalContext")
                .is_none(),
            "Codex reads additionalContext at PermissionRequest as a failed hook: {codex}"
        );
        let claude = parsed(&said_to(Agent::ClaudeCode, "PermissionRequest", &said));
        assert_eq!(claude["hookSpecificOutput"]["additionalContext"], "note");
    }

    #[test]
    fn an_ask_is_asked_where_the_agent_can_and_refused_where_it_cannot() {
        let claude = parsed(&said_to(Agent::ClaudeCode, "PreToolUse", &ask()));
        assert_eq!(claude["hookSpecificOutput"]["permissionDecision"], "ask");
        assert_eq!(
            claude["hookSpecificOutput"]["permissionDecisionReason"],
            "sure?"
        );
        let qwen = parsed(&said_to(Agent::QwenCode, "PreToolUse", &ask()));
        assert_eq!(qwen["hookSpecificOutput"]["permissionDecision"], "ask");
        let copilot = parsed(&said_to(Agent::CopilotCli, "PreToolUse", &ask()));
        assert_eq!(copilot["permissionDecision"], "ask");
        let codex = parsed(&said_to(Agent::Codex, "PreToolUse", &ask()));
        assert_eq!(codex["hookSpecificOutput"]["permissionDecision"], "deny");
        let reason = codex["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(
            reason.starts_with("sure?") && reason.contains("approval"),
            "{reason}"
        );
        let gemini = parsed(&said_to(Agent::GeminiCli, "PreToolUse", &ask()));
        assert_eq!(gemini["decision"], "deny", "Gemini CLI would wait forever");
        // At a permission request the agent is about to ask the user: nothing said lets it.
        assert_eq!(
            said_to(Agent::ClaudeCode, "PermissionRequest", &ask()),
            Answer::nothing()
        );
        // Elsewhere an ask is a refusal in the moment's own shape.
        let stop = parsed(&said_to(Agent::ClaudeCode, "Stop", &ask()));
        assert_eq!(stop["decision"], "block");
    }

    #[test]
    fn a_rewritten_input_goes_in_each_agents_field_or_refuses() {
        let claude = parsed(&said_to(Agent::ClaudeCode, "PreToolUse", &rewrite(false)));
        assert_eq!(
            claude["hookSpecificOutput"]["updatedInput"]["command"],
            "mv x .trash/"
        );
        assert!(
            claude["hookSpecificOutput"]
                .get("permissionDecision")
                .is_none()
        );
        let claude = parsed(&said_to(Agent::ClaudeCode, "PreToolUse", &rewrite(true)));
        assert_eq!(claude["hookSpecificOutput"]["permissionDecision"], "allow");
        let codex = parsed(&said_to(Agent::Codex, "PreToolUse", &rewrite(false)));
        assert_eq!(
            codex["hookSpecificOutput"]["permissionDecision"], "allow",
            "Codex takes a rewrite only beside an allow"
        );
        assert_eq!(
            codex["hookSpecificOutput"]["updatedInput"]["command"],
            "mv x .trash/"
        );
        let gemini = parsed(&said_to(Agent::GeminiCli, "PreToolUse", &rewrite(true)));
        assert_eq!(
            gemini["hookSpecificOutput"]["tool_input"]["command"],
            "mv x .trash/"
        );
        assert!(
            gemini["hookSpecificOutput"]
                .get("permissionDecision")
                .is_none()
        );
        let copilot = parsed(&said_to(Agent::CopilotCli, "PreToolUse", &rewrite(false)));
        assert_eq!(copilot["modifiedArgs"]["command"], "mv x .trash/");
        let qwen = parsed(&said_to(Agent::QwenCode, "PreToolUse", &rewrite(true)));
        assert_eq!(qwen["hookSpecificOutput"]["permissionDecision"], "deny");
        let reason = qwen["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(
            reason.contains("make this call instead") && reason.contains("mv x .trash/"),
            "{reason}"
        );
    }

    #[test]
    fn an_ask_with_a_rewrite_asks_about_the_rewritten_call() {
        let said = verdict(
            true,
            Some(Permission::Ask),
            Some("sure?"),
            Some(json!({"command": "mv x t"})),
            None,
        );
        let claude = parsed(&said_to(Agent::ClaudeCode, "PreToolUse", &said));
        assert_eq!(claude["hookSpecificOutput"]["permissionDecision"], "ask");
        assert_eq!(
            claude["hookSpecificOutput"]["updatedInput"]["command"],
            "mv x t"
        );
    }

    #[test]
    fn a_rewritten_output_reaches_each_agents_model_or_the_user_is_told() {
        static BASH: std::sync::LazyLock<Value> = std::sync::LazyLock::new(
            || json!({"stdout": "token=[REDACTED]", "stderr": "", "interrupted": false}),
        );
        let said = verdict(false, None, None, None, Some(&BASH));
        let claude = parsed(&said_to(Agent::ClaudeCode, "PostToolUse", &said));
        assert_eq!(claude["hookSpecificOutput"]["updatedToolOutput"], *BASH);
        let codex = parsed(&said_to(Agent::Codex, "PostToolUse", &said));
        assert_eq!(
            (&codex["decision"], &codex["reason"]),
            (&json!("block"), &json!("token=[REDACTED]"))
        );
        static GEMINI: std::sync::LazyLock<Value> = std::sync::LazyLock::new(
            || json!({"llmContent": "Output: [REDACTED]", "returnDisplay": "x"}),
        );
        let said = verdict(false, None, None, None, Some(&GEMINI));
        let gemini = parsed(&said_to(Agent::GeminiCli, "PostToolUse", &said));
        assert_eq!(
            (&gemini["decision"], &gemini["reason"]),
            (&json!("deny"), &json!("Output: [REDACTED]"))
        );
        let copilot = parsed(&said_to(Agent::CopilotCli, "PostToolUse", &said));
        assert_eq!(
            copilot["modifiedResult"]["textResultForLlm"],
            "Output: [REDACTED]"
        );
        let qwen = parsed(&said_to(Agent::QwenCode, "PostToolUse", &said));
        assert_eq!(
            (&qwen["continue"], &qwen["stopReason"]),
            (&json!(false), &json!("Output: [REDACTED]"))
        );
    }

    #[test]
    fn a_plain_refusal_and_adds_answer_as_before() {
        let said = verdict(true, None, Some("no"), None, None);
        assert_eq!(
            said_to(Agent::ClaudeCode, "PreToolUse", &said),
            answer(
                Agent::ClaudeCode,
                "PreToolUse",
                "PreToolUse",
                Some("no"),
                &[]
            )
        );
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

#[cfg(test)]
mod attack {
    use super::*;

    fn said_to(agent: Agent, moment: &str, said: &Said<'_>) -> Answer {
        let event_name = agent
            .event_names()
            .iter()
            .copied()
            .find(|name| agent.moment_of(name) == moment)
            .expect("the agent fires the moment");
        answer_verdict(agent, moment, event_name, said, Transport::Process)
    }

    #[test]
    fn attack_qwen_ask_with_rewrite_drops_the_rewrite() {
        let said = Said {
            refused: true,
            permission: Some(Permission::Ask),
            reason: Some(Cow::Borrowed("sure?")),
            adds: Vec::new(),
            input: Some(json!({"command": "mv x .trash/"})),
            output: None,
        };
        let answer = said_to(Agent::QwenCode, "PreToolUse", &said);
        let text =
            answer.stdout.clone().unwrap_or_default() + &answer.stderr.clone().unwrap_or_default();
        assert!(
            text.contains("mv x .trash/"),
            "the rewrite must be refused-with-the-rewritten-call, never dropped under an ask: {answer:?}"
        );
    }

    #[test]
    fn attack_claude_post_tool_use_ask_drops_the_redaction() {
        let redacted = json!({"stdout": "[REDACTED]", "stderr": ""});
        let said = Said {
            refused: true,
            permission: Some(Permission::Ask),
            reason: Some(Cow::Borrowed("sure?")),
            adds: Vec::new(),
            input: None,
            output: Some(&redacted),
        };
        let answer = said_to(Agent::ClaudeCode, "PostToolUse", &said);
        let stdout = answer.stdout.clone().unwrap_or_default();
        assert!(
            stdout.contains("updatedToolOutput"),
            "the redaction must reach the agent: {answer:?}"
        );
    }

    #[test]
    fn attack_gemini_mcp_redaction_leaks_return_display_to_the_model() {
        let redacted = json!({
            "llmContent": [{"text": "[REDACTED]"}],
            "returnDisplay": "token=abc123"
        });
        for agent in [Agent::GeminiCli, Agent::QwenCode] {
            let said = Said {
                refused: false,
                permission: None,
                reason: None,
                adds: Vec::new(),
                input: None,
                output: Some(&redacted),
            };
            let answer = said_to(agent, "PostToolUse", &said);
            let all = format!("{:?} {:?}", answer.stdout, answer.stderr);
            assert!(!all.contains("abc123"), "{agent:?}: {all}");
        }
    }
}
