//! `hookd setup AGENT`: hookd's relay hooks merged into the agent's own settings file, as pure functions
//! of the file's text (the command, `commands/setup.rs`, reads and writes the files).
//!
//! The merge keeps everything that is not hookd's where it is: the other settings, the user's own hooks,
//! their order, and for Codex's TOML the comments and layout (`toml_edit`). A hook is hookd's when its
//! command runs `hookd relay` (any binary named `hookd`, or this one) or when it is one of the http
//! hooks `--print-settings --http` writes; every such hook is taken out, wherever it is, and hookd's
//! group put back at the place of the first one (else at the end), so that a second run changes
//! nothing. For Codex the trust records follow: each names its hook by place (`FILE:EVENT:GROUP:HOOK`),
//! so hookd's are written for the places its hooks end up in, the stale ones removed, and those of the
//! user's own hooks that moved carried to their new places (a hook whose record names another place is
//! skipped by Codex without a word).
//!
//! JSON is kept in the file's key order by a small ordered tree of its own (`Json`, `setup/json.rs`): serde_json's map
//! here sorts its keys, which the Codex trust hash relies on.

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;
use toml_edit::{ArrayOfTables, DocumentMut, Item, Table};

use crate::agents::snippet;
use crate::tables::agent::{Agent, SettingsFormat};

mod json;
mod layout;

use json::{Json, indent_of, parse_json, write_json};

/// The hooks to write: the relay `command` (as [`snippet::relay_command`] makes it), `hookd` the path
/// of this binary (its earlier hooks are recognised by it too), and for Codex `codex_file`, the name of
/// the settings file as Codex puts it in its trust records.
#[derive(Debug, Clone, Copy)]
pub struct Wanted<'a> {
    pub agent: Agent,
    pub command: &'a str,
    pub hookd: &'a str,
    pub codex_file: &'a str,
}

/// Why `file` cannot be `agent`'s settings file by its name, before it is read: Codex's setup writes
/// config.toml (TOML, with trust records), never its hooks.json; the other agents read JSON. Said in
/// those terms, rather than as the parse error the other format gives.
pub fn wrong_kind_of_file(agent: Agent, file: &Path) -> Option<String> {
    let extension = file.extension()?.to_str()?.to_ascii_lowercase();
    let shown = file.display();
    let who = agent.display_name();
    match (agent.row().settings.format, extension.as_str()) {
        (SettingsFormat::CodexToml, "json") => Some(format!(
            "{shown}: hookd setup {} writes {who}'s config.toml ([[hooks.EVENT]] tables, each with the trust record {who} needs to run it), not a JSON hooks file: give --file the config.toml ({who} reads $CODEX_HOME/config.toml, else ~/.codex/config.toml), or leave --file out; the hooks in {shown} keep running beside hookd's (hookd import {shown} converts them)",
            agent.name()
        )),
        (SettingsFormat::Json | SettingsFormat::CopilotJson, "toml") => Some(format!(
            "{shown}: {who} reads its hooks from a JSON settings file, not TOML: give --file that file, or leave --file out for the one {who} reads"
        )),
        _ => None,
    }
}

/// `text` (the settings file as it is; empty when there is none) with hookd's hooks merged in; `label`
/// names the file in errors.
pub fn merge(text: &str, label: &str, wanted: &Wanted) -> Result<String, String> {
    edit(text, label, wanted, true)
}

/// Whether `a` and `b` are the same settings once hookd's hooks are taken out of both: what tells
/// `--undo` that the file holds nothing the user wrote since the backup. Unreadable text is never the same.
pub fn same_apart_from_hookd(a: &str, b: &str, wanted: &Wanted) -> bool {
    let strip = |text: &str| edit(text, "", wanted, false);
    match (strip(a), strip(b)) {
        (Ok(a), Ok(b)) => match wanted.agent.row().settings.format {
            SettingsFormat::CodexToml => {
                match (a.parse::<toml::Table>(), b.parse::<toml::Table>()) {
                    (Ok(a), Ok(b)) => without_empty_tables(a) == without_empty_tables(b),
                    _ => false,
                }
            }
            SettingsFormat::Json | SettingsFormat::CopilotJson => {
                match (parse_json(&a, ""), parse_json(&b, "")) {
                    (Ok(a), Ok(b)) => {
                        canonical(without_empty_hooks(a)) == canonical(without_empty_hooks(b))
                    }
                    _ => false,
                }
            }
        },
        _ => false,
    }
}

/// `text` with hookd's hooks taken out, when it holds any (`None` when it holds none): what a backup
/// keeps of a file an earlier hookd setup (of another binary, say) had written into, so that `--undo`
/// leaves no hookd hook behind.
pub fn without_hookd(text: &str, label: &str, wanted: &Wanted) -> Result<Option<String>, String> {
    let stripped = edit(text, label, wanted, false)?;
    let same = match wanted.agent.row().settings.format {
        SettingsFormat::CodexToml => text.parse::<toml::Table>().ok() == stripped.parse().ok(),
        SettingsFormat::Json | SettingsFormat::CopilotJson => {
            match (parse_json(text, ""), parse_json(&stripped, "")) {
                (Ok(a), Ok(b)) => canonical(a) == canonical(b),
                _ => false,
            }
        }
    };
    Ok((!same).then_some(stripped))
}

/// `text` with exactly what setup wrote taken out (`hookd setup AGENT --remove`): every hook of hookd's,
/// the events left with none, and for Codex the trust records of hookd's hooks (the records of the
/// user's hooks that move up carried with them); everything else kept as it is, later edits included.
/// `None` when the file holds none of hookd's hooks.
pub fn remove(text: &str, label: &str, wanted: &Wanted) -> Result<Option<String>, String> {
    if found_hooks(text, label, wanted)?.is_empty() {
        return Ok(None);
    }
    let stripped = edit(text, label, wanted, false)?;
    // A `"hooks": {}` left with nothing in it is setup's too, when the file had hooks hookd's alone.
    let stripped = match wanted.agent.row().settings.format {
        SettingsFormat::CodexToml => stripped,
        SettingsFormat::Json | SettingsFormat::CopilotJson => {
            let root = parse_json(&stripped, label)?;
            if matches!(root.get("hooks"), Some(Json::Object(events)) if events.is_empty()) {
                let Json::Object(mut entries) = root else {
                    unreachable!("a root with a key is an object")
                };
                entries.retain(|(k, _)| k != "hooks");
                render_json(&Json::Object(entries), text)
            } else {
                stripped
            }
        }
    };
    Ok(Some(stripped))
}

/// `text` with each of `pins` set (a key path, and its value): what a managed setup writes beside the
/// relay, so that the user's own settings cannot switch every hook off (`ManagedPlace::pins`). The keys
/// are put where the file has them, else at the end of their table; everything else is kept as it is.
pub fn pin(
    text: &str,
    label: &str,
    format: SettingsFormat,
    pins: &[(&[&str], bool)],
) -> Result<String, String> {
    if pins.is_empty() {
        return Ok(text.to_string());
    }
    match format {
        SettingsFormat::CodexToml => {
            let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
                format!("{label}: not TOML: {}", e.message().trim())
            })?;
            for (path, on) in pins {
                let Some((last, tables)) = path.split_last() else {
                    continue;
                };
                let mut table = doc.as_table_mut();
                for key in tables {
                    if !table.contains_key(key) {
                        table.insert(key, Item::Table(Table::new()));
                    }
                    table = table[*key].as_table_mut().ok_or_else(|| {
                        format!(
                            "{label}: `{key}` is not a table, where setup sets {}",
                            path.join(".")
                        )
                    })?;
                }
                table.insert(last, toml_edit::value(*on));
            }
            Ok(doc.to_string())
        }
        SettingsFormat::Json | SettingsFormat::CopilotJson => {
            let mut root = if text.trim().is_empty() {
                Json::Object(Vec::new())
            } else {
                parse_json(text, label)?
            };
            for (path, on) in pins {
                let mut at = &mut root;
                for (depth, key) in path.iter().enumerate() {
                    let kind = at.kind();
                    let Json::Object(entries) = at else {
                        return Err(format!(
                            "{label}: {} is {kind}, where setup sets {}",
                            if depth == 0 {
                                "the file".to_string()
                            } else {
                                format!("\"{}\"", path[..depth].join("."))
                            },
                            path.join(".")
                        ));
                    };
                    let last = depth + 1 == path.len();
                    let i = match entries.iter().position(|(k, _)| k == key) {
                        Some(i) => i,
                        None => {
                            let value = if last {
                                Json::Bool(*on)
                            } else {
                                Json::Object(Vec::new())
                            };
                            entries.push((key.to_string(), value));
                            entries.len() - 1
                        }
                    };
                    if last {
                        entries[i].1 = Json::Bool(*on);
                    }
                    at = &mut entries[i].1;
                }
            }
            Ok(render_json(&root, text))
        }
    }
}

/// What in the merged settings `text` keeps the agent from running hookd's hooks all the same: Claude
/// Code's `disableAllHooks`, Gemini CLI's `hooksConfig` (`enabled = false`, or hookd's hook by name in
/// `disabled`). Said, not changed: the user switched them off, and may mean it.
pub fn warnings(text: &str, wanted: &Wanted) -> Vec<String> {
    let mut warnings = Vec::new();
    if wanted.agent.row().settings.format == SettingsFormat::CodexToml {
        return warnings;
    }
    let Ok(root) = parse_json(text, "") else {
        return warnings;
    };
    let who = wanted.agent.display_name();
    if root.get("disableAllHooks") == Some(&Json::Bool(true)) {
        warnings.push(format!(
            "the file sets \"disableAllHooks\": true: {who} runs none of its hooks, hookd's included, until that is taken out"
        ));
    }
    for place in ["hooksConfig", "hooks"] {
        let Some(config) = root.get(place) else {
            continue;
        };
        if config.get("enabled") == Some(&Json::Bool(false)) {
            warnings.push(format!(
                "the file sets {place}.enabled = false: {who} runs none of its hooks, hookd's included, until that is taken out"
            ));
        }
        if let Some(Json::Array(names)) = config.get("disabled")
            && names.iter().any(|n| {
                n.as_str()
                    .is_some_and(|n| n == "hookd" || n == wanted.command)
            })
        {
            warnings.push(format!(
                "{place}.disabled names hookd's hook: {who} skips it until that name is taken out"
            ));
        }
    }
    warnings
}

/// A hook of the agent's own, in its settings file, that hookd's settings hold too: the agent runs it,
/// and the relay has hookd run it again, so it runs twice at each of its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunsTwice {
    /// The agent's name for the event.
    pub event: String,
    pub command: String,
    /// The name of hookd's hook that runs the same command at the same moment.
    pub hookd_hook: String,
}

/// The agent's own hooks in `text` (as `hookd import` reads them: command hooks the agent runs, not
/// hookd's relay, not one it switched off) that `settings` also runs for the agent, at the same moment
/// with the same command: each would run twice. None for a file import cannot read.
pub fn runs_twice(
    text: &str,
    label: &str,
    agent: Agent,
    settings: &crate::settings::Settings,
) -> Vec<RunsTwice> {
    use crate::settings::{Program, Settings};
    let command_of = |program: &Program| match program {
        Program::Shell { command, .. } => Some(command.clone()),
        _ => None,
    };
    let Ok(imported) = crate::agents::import::convert(text, label, Some(agent)) else {
        return Vec::new();
    };
    let Ok(own) = Settings::parse(Path::new(label), label, &imported.toml) else {
        return Vec::new();
    };
    let mut twice = Vec::new();
    for (moment, hooks) in &own.hooks {
        for hook in hooks.iter().filter(|h| h.enabled) {
            let Some(command) = command_of(&hook.program) else {
                continue;
            };
            let theirs = settings.hooks_for(moment).iter().find(|h| {
                h.enabled
                    && command_of(&h.program).as_deref() == Some(command.as_str())
                    && h.agents
                        .as_ref()
                        .is_none_or(|names| names.iter().any(|n| n == agent.name()))
            });
            if let Some(theirs) = theirs {
                twice.push(RunsTwice {
                    event: agent.event_name_of(moment).to_string(),
                    command,
                    hookd_hook: theirs.name.clone(),
                });
            }
        }
    }
    twice
}

/// What setup and doctor say of hooks that run twice: which, and how to have each run once.
pub fn said_twice(twice: &[RunsTwice], agent: Agent, file: &str, config: &str) -> String {
    let who = agent.display_name();
    let listed: Vec<String> = twice
        .iter()
        .map(|t| format!("{} `{}` (hookd's \"{}\")", t.event, t.command, t.hookd_hook))
        .collect();
    format!(
        "{} of {who}'s own hooks in {file} are in hookd's settings ({config}) too, so each runs twice, once by {who} and once through hookd: {}; take them out of {file} (hookd runs them for {who} now), or out of {config}",
        twice.len(),
        listed.join(", ")
    )
}

/// One of hookd's hooks as an agent's settings file holds it: what `hookd doctor` compares with what
/// setup wrote, and what the registry's digest is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundHook {
    /// The agent's name for the event.
    pub event: String,
    /// The command it runs (an http hook's url).
    pub command: String,
    /// The hook as written, with its group's matcher, as canonical text (keys sorted).
    pub written: String,
    /// Codex only: whether the trust record at the hook's place holds the hash Codex computes for the
    /// hook as it is (Codex skips a hook whose record does not match, without a word).
    pub trusted: Option<bool>,
}

/// hookd's hooks in `text`, in the order of the file; an error for a file that is not the agent's
/// settings (not JSON, not TOML, a `hooks` of another shape).
pub fn found_hooks(text: &str, label: &str, wanted: &Wanted) -> Result<Vec<FoundHook>, String> {
    match wanted.agent.row().settings.format {
        SettingsFormat::CodexToml => found_codex_hooks(text, label, wanted),
        SettingsFormat::Json | SettingsFormat::CopilotJson => found_json_hooks(text, label, wanted),
    }
}

/// The digest of hookd's hooks (`sha256:` and hex), as the registry of setups keeps it: the same
/// hooks, written the same way, give the same digest in whatever order the file holds them (for Codex,
/// each with the trust record at its place).
pub fn hooks_digest(hooks: &[FoundHook]) -> String {
    use sha2::{Digest, Sha256};
    let mut written: Vec<&str> = hooks.iter().map(|hook| hook.written.as_str()).collect();
    written.sort_unstable();
    let mut hasher = Sha256::new();
    for hook in written {
        hasher.update(hook.as_bytes());
        hasher.update(b"\n");
    }
    let hex: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// How hookd's hooks in a file differ from what `hookd setup` would write there now, event by event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drift {
    /// The event has none of hookd's hooks where setup writes one (taken out).
    Missing { event: String },
    /// The event's hookd hooks are not the ones setup writes (another command, matcher or timeout, or
    /// one too many); `command` is the one found.
    Changed { event: String, command: String },
}

/// How hookd's hooks in `text` differ from what [`merge`] would make of it (none: they are as setup
/// writes them), compared as hooks, not as text: the user's own edits and the file's layout are no drift.
pub fn drift(text: &str, label: &str, wanted: &Wanted) -> Result<Vec<Drift>, String> {
    let now = found_hooks(text, label, wanted)?;
    let want = found_hooks(&merge(text, label, wanted)?, label, wanted)?;
    Ok(drift_between(&now, &want))
}

/// How the hooks found (`now`) differ, event by event, from the hooks wanted there (`want`): the same
/// hooks as written, in any order, or drift.
pub fn drift_between(now: &[FoundHook], want: &[FoundHook]) -> Vec<Drift> {
    let mut events: Vec<&str> = Vec::new();
    for hook in want.iter().chain(now) {
        if !events.contains(&hook.event.as_str()) {
            events.push(&hook.event);
        }
    }
    let at = |hooks: &[FoundHook], event: &str| {
        let mut written: Vec<(String, String)> = hooks
            .iter()
            .filter(|h| h.event == event)
            .map(|h| (h.written.clone(), h.command.clone()))
            .collect();
        written.sort();
        written
    };
    let mut drift = Vec::new();
    for event in events {
        let (now, want) = (at(now, event), at(want, event));
        if now == want {
            continue;
        }
        drift.push(match now.iter().find(|found| !want.contains(found)) {
            Some((_, command)) => Drift::Changed {
                event: event.to_string(),
                command: command.clone(),
            },
            None if now.is_empty() => Drift::Missing {
                event: event.to_string(),
            },
            None => Drift::Changed {
                event: event.to_string(),
                command: now[0].1.clone(),
            },
        });
    }
    drift
}

/// The command of hookd's first hook in `text`, when it holds one: the relay as written there.
pub fn relay_written(text: &str, label: &str, wanted: &Wanted) -> Option<String> {
    found_hooks(text, label, wanted)
        .ok()?
        .into_iter()
        .map(|hook| hook.command)
        .next()
}

fn canonical_text(value: Json) -> String {
    let mut out = String::new();
    write_json(&mut out, &canonical(value), "", 0);
    out.replace('\n', "")
}

fn found_json_hooks(text: &str, label: &str, wanted: &Wanted) -> Result<Vec<FoundHook>, String> {
    let root = parse_json(text, label)?;
    let mut found = Vec::new();
    let Some(Json::Object(events)) = root.get("hooks") else {
        return Ok(found);
    };
    let flat = wanted.agent.row().settings.format == SettingsFormat::CopilotJson;
    let setting_keys = wanted.agent.row().import.setting_keys;
    let command_of = |hook: &Json| {
        ["command", "bash", "url"]
            .iter()
            .find_map(|key| hook.get(key).and_then(Json::as_str))
            .unwrap_or_default()
            .to_string()
    };
    for (event, list) in events {
        if setting_keys.contains(&event.as_str()) {
            continue;
        }
        let Json::Array(items) = list else { continue };
        for item in items {
            let (matcher, hooks) = if flat {
                (None, std::slice::from_ref(item))
            } else {
                match item.get("hooks") {
                    Some(Json::Array(hooks)) => (item.get("matcher"), hooks.as_slice()),
                    _ => continue,
                }
            };
            for hook in hooks.iter().filter(|h| is_hookd_json_hook(h, wanted.hookd)) {
                let mut entry = vec![
                    ("event".to_string(), Json::Str(event.clone())),
                    ("hook".to_string(), hook.clone()),
                ];
                if let Some(matcher) = matcher {
                    entry.push(("matcher".to_string(), matcher.clone()));
                }
                found.push(FoundHook {
                    event: event.clone(),
                    command: command_of(hook),
                    written: canonical_text(Json::Object(entry)),
                    trusted: None,
                });
            }
        }
    }
    Ok(found)
}

fn found_codex_hooks(text: &str, label: &str, wanted: &Wanted) -> Result<Vec<FoundHook>, String> {
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("{label}: not TOML: {}", e.message().trim()))?;
    let mut found = Vec::new();
    let Some(toml::Value::Table(hooks)) = table.get("hooks") else {
        return Ok(found);
    };
    let state = hooks.get("state").and_then(toml::Value::as_table);
    for (event, groups) in hooks {
        if event == "state" {
            continue;
        }
        let Some(groups) = groups.as_array() else {
            continue;
        };
        for (g, group) in groups.iter().enumerate() {
            let matcher = group.get("matcher").and_then(toml::Value::as_str);
            let Some(list) = group.get("hooks").and_then(toml::Value::as_array) else {
                continue;
            };
            for (h, hook) in list.iter().enumerate() {
                let Some(command) = hook.get("command").and_then(toml::Value::as_str) else {
                    continue;
                };
                if !is_hookd_command(command, wanted.hookd) {
                    continue;
                }
                let event_label = snippet::codex_event_label(event);
                let timeout = hook
                    .get("timeout")
                    .and_then(toml::Value::as_integer)
                    .and_then(|t| u64::try_from(t).ok())
                    .unwrap_or_else(|| snippet::codex_timeout(event));
                let key = format!("{}:{event_label}:{g}:{h}", wanted.codex_file);
                let record = state
                    .and_then(|state| state.get(&key))
                    .and_then(|record| record.get("trusted_hash"))
                    .and_then(toml::Value::as_str);
                let hash = snippet::codex_trusted_hash(&event_label, matcher, command, timeout);
                let mut entry =
                    serde_json::json!({ "event": event, "hook": hook, "trusted_hash": record });
                if let Some(matcher) = matcher {
                    entry["matcher"] = Value::from(matcher);
                }
                found.push(FoundHook {
                    event: event.clone(),
                    command: command.to_string(),
                    written: entry.to_string(),
                    trusted: Some(record == Some(hash.as_str())),
                });
            }
        }
    }
    Ok(found)
}

fn edit(text: &str, label: &str, wanted: &Wanted, add: bool) -> Result<String, String> {
    match wanted.agent.row().settings.format {
        SettingsFormat::CodexToml => codex(text, label, wanted, add),
        SettingsFormat::Json | SettingsFormat::CopilotJson => json(text, label, wanted, add),
    }
}

/// Whether a hook's command line runs hookd's relay: its first word (after any `NAME=value`) is this
/// binary or a file named `hookd`, and its second is `relay`; or its first word is a file named
/// `hookd-relay` (the relay as a program of its own). Not a hook that merely mentions hookd (`echo hookd
/// relay`, `hookd-guard relay`, `hookd fire Stop`), which is the user's.
pub fn is_hookd_command(command: &str, hookd: &str) -> bool {
    let mut words = shell_words(command).into_iter().skip_while(|word| {
        word.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    });
    let Some(program) = words.next() else {
        return false;
    };
    if snippet::is_relay_program(&program) {
        return true;
    }
    let Some(sub) = words.next() else {
        return false;
    };
    let named_hookd = program == hookd
        || Path::new(&program)
            .file_name()
            .is_some_and(|n| n == "hookd");
    named_hookd && sub == "relay"
}

/// The first words of a command line as the shell reads them: quotes and backslashes undone, stopping at
/// the first character that ends a simple command (`;`, `|`, `&`, a redirection, a newline).
fn shell_words(command: &str) -> Vec<String> {
    words_of(command, 8)
}

/// Every word of a hook's command line as the shell reads it, up to the first character that ends a
/// simple command: what tells which program a relay hook runs, and with which flags (`--fail-closed`,
/// `--socket`).
pub fn command_words(command: &str) -> Vec<String> {
    words_of(command, usize::MAX)
}

/// The program a hook's command line runs: its first word after any `NAME=value`.
pub fn command_program(command: &str) -> Option<String> {
    command_words(command).into_iter().find(|word| {
        !word.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    })
}

/// The first `most` words of a command line (see [`shell_words`]).
fn words_of(command: &str, most: usize) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(next @ ('"' | '\\' | '$' | '`')) => word.push(next),
                            Some(next) => {
                                word.push('\\');
                                word.push(next);
                            }
                            None => break,
                        },
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(next) = chars.next() {
                    word.push(next);
                }
            }
            c if c == ' ' || c == '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
                if words.len() >= most {
                    return words;
                }
            }
            ';' | '|' | '&' | '<' | '>' | '\n' | '(' | ')' => break,
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

// ---- JSON: Claude Code, Gemini CLI, Qwen Code, Copilot CLI ------------------------------------------------

/// Whether a hook in a JSON settings file is hookd's: a command hook running the relay (Copilot's runs
/// it in `bash`), or an http hook of `--print-settings --http` (the one sending hookd's token).
fn is_hookd_json_hook(hook: &Json, hookd: &str) -> bool {
    let runs_relay = ["command", "bash"].iter().any(|key| {
        hook.get(key)
            .and_then(Json::as_str)
            .is_some_and(|command| is_hookd_command(command, hookd))
    });
    let hookd_http = hook.get("type").and_then(Json::as_str) == Some("http")
        && matches!(hook.get("allowedEnvVars"), Some(Json::Array(vars)) if vars.iter().any(|v| v.as_str() == Some(snippet::TOKEN_VAR)));
    runs_relay || hookd_http
}

/// hookd's entry for each event of `agent`, as `--print-settings` writes it: a group (matcher, one hook)
/// in a settings.json, the flat hook in Copilot's.
fn json_entries(wanted: &Wanted) -> Vec<(String, Json)> {
    let agent = wanted.agent;
    agent
        .moments()
        .into_iter()
        .map(|moment| {
            let event = agent.event_name_of(moment).to_string();
            let entry = match agent.row().settings.format {
                SettingsFormat::CopilotJson => snippet::copilot_hook(wanted.command, &event),
                _ => {
                    let mut group = serde_json::json!({ "hooks": [snippet::command_hook(agent, wanted.command)] });
                    if let Some(matcher) = snippet::match_all(moment) {
                        group["matcher"] = Value::from(matcher);
                    }
                    group
                }
            };
            (event, Json::from_value(&entry))
        })
        .collect()
}

fn json(text: &str, label: &str, wanted: &Wanted, add: bool) -> Result<String, String> {
    let mut root = parse_json(text, label)?;
    let Json::Object(entries) = &mut root else {
        return Err(format!(
            "{label}: the file is {}, not a JSON object of settings",
            root.kind()
        ));
    };
    let flat = wanted.agent.row().settings.format == SettingsFormat::CopilotJson;
    if !entries.iter().any(|(k, _)| k == "hooks") {
        if !add {
            return Ok(render_json(&root, text));
        }
        entries.push(("hooks".to_string(), Json::Object(Vec::new())));
    }
    let wanted_entries = if add {
        json_entries(wanted)
    } else {
        Vec::new()
    };
    let hooks = root.get_mut("hooks").expect("just made");
    let kind = hooks.kind();
    let Json::Object(events) = hooks else {
        return Err(format!(
            "{label}: \"hooks\" is {kind}, not an object of events"
        ));
    };
    let setting_keys = wanted.agent.row().import.setting_keys;
    let mut placed = HashSet::new();
    let mut emptied = Vec::new();
    for (event, list) in events.iter_mut() {
        if setting_keys.contains(&event.as_str()) {
            continue;
        }
        let kind = list.kind();
        let Json::Array(items) = list else {
            return Err(format!(
                "{label}: \"hooks\".{} is {kind}, not a list of {}",
                serde_json::to_string(event).unwrap_or_default(),
                if flat { "hooks" } else { "hook groups" }
            ));
        };
        let before = items.len();
        let at = strip_json_list(items, flat, wanted.hookd);
        let mine = wanted_entries.iter().find(|(e, _)| e == event);
        match mine {
            Some((_, entry)) => {
                items.insert(at.unwrap_or(items.len()).min(items.len()), entry.clone());
                placed.insert(event.clone());
            }
            None if items.is_empty() && before > 0 => emptied.push(event.clone()),
            None => {}
        }
    }
    events.retain(|(event, _)| !emptied.contains(event));
    for (event, entry) in wanted_entries {
        if !placed.contains(&event) {
            events.push((event, Json::Array(vec![entry])));
        }
    }
    if flat && text.trim().is_empty() && add && !label.ends_with("settings.json") {
        // A hooks file of its own (`.github/hooks/*.json`) says its version; settings.json has none.
        if let Json::Object(entries) = &mut root {
            entries.insert(0, ("version".to_string(), Json::Number("1".to_string())));
        }
    }
    Ok(render_json(&root, text))
}

/// Takes hookd's hooks out of one event's list; returns where hookd's entry goes back: the place of the
/// group that held the first of them (after it, when the group holds other hooks too and stays).
fn strip_json_list(items: &mut Vec<Json>, flat: bool, hookd: &str) -> Option<usize> {
    let mut at = None;
    let mut kept = Vec::with_capacity(items.len());
    for mut item in std::mem::take(items) {
        if flat {
            if is_hookd_json_hook(&item, hookd) {
                at.get_or_insert(kept.len());
                continue;
            }
        } else if let Some(Json::Array(hooks)) = item.get_mut("hooks") {
            let before = hooks.len();
            hooks.retain(|hook| !is_hookd_json_hook(hook, hookd));
            if hooks.len() < before {
                if hooks.is_empty() {
                    at.get_or_insert(kept.len());
                    continue;
                }
                at.get_or_insert(kept.len() + 1);
            }
        }
        kept.push(item);
    }
    *items = kept;
    at
}

/// The settings as text in the layout of `original` ([`layout`]): what the merge left as it was kept
/// byte for byte, the rest written as the file writes it; a file with no layout to keep (none, or
/// empty) written an entry a line, ending in a newline.
fn render_json(root: &Json, original: &str) -> String {
    if let Some(kept) = layout::keep(root, original) {
        return kept;
    }
    let mut out = String::new();
    write_json(&mut out, root, &indent_of(original), 0);
    if original.is_empty() || original.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// Object keys sorted, at every level: JSON objects compared as sets.
fn canonical(value: Json) -> Json {
    match value {
        Json::Array(items) => Json::Array(items.into_iter().map(canonical).collect()),
        Json::Object(entries) => {
            let mut entries: Vec<(String, Json)> = entries
                .into_iter()
                .map(|(k, v)| (k, canonical(v)))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Json::Object(entries)
        }
        other => other,
    }
}

/// A `"hooks": {}` left by taking hookd's out is no setting, nor an event's empty list (`"Stop": []`):
/// setup puts hookd's hook into a list the file held empty, and taking it out again removes the event
/// (it cannot tell that list from one setup added), so that an empty list and no list must compare the
/// same, or `--undo` refuses a file the user never touched.
fn without_empty_hooks(mut root: Json) -> Json {
    if let Json::Object(entries) = &mut root {
        if let Some((_, Json::Object(events))) = entries.iter_mut().find(|(k, _)| k == "hooks") {
            events.retain(|(_, list)| !matches!(list, Json::Array(items) if items.is_empty()));
        }
        entries.retain(|(k, v)| !(k == "hooks" && matches!(v, Json::Object(e) if e.is_empty())));
    }
    root
}

// ---- TOML: Codex's config.toml -----------------------------------------------------------------------

/// One hook of a Codex settings file, at its place: the event, the group's index under it, the hook's
/// index in the group, and whether it is hookd's.
#[derive(Debug, Clone, PartialEq)]
struct Place {
    event: String,
    group: usize,
    hook: usize,
    hookd: bool,
}

impl Place {
    /// The place as a trust record's key names it (`FILE:EVENT_LABEL:GROUP:HOOK`), without `FILE:`.
    fn key(&self) -> String {
        format!(
            "{}:{}:{}",
            snippet::codex_event_label(&self.event),
            self.group,
            self.hook
        )
    }
}

/// The command of a hook in a Codex group, a table or an inline table.
fn toml_command(hook: &dyn toml_edit::TableLike) -> Option<&str> {
    hook.get("command").and_then(Item::as_str)
}

/// Every hook of the file at its place, in the order of the file; an error for a `hooks` of a shape
/// hookd cannot edit in place.
fn places(doc: &DocumentMut, label: &str, hookd: &str) -> Result<Vec<Place>, String> {
    let mut places = Vec::new();
    let Some(hooks) = doc.get("hooks") else {
        return Ok(places);
    };
    let Some(hooks) = hooks.as_table() else {
        return Err(format!(
            "{label}: \"hooks\" is not a [hooks] table (hookd setup edits [[hooks.EVENT]] tables; merge by hand, or write it so)"
        ));
    };
    for (event, item) in hooks.iter() {
        if event == "state" {
            if !item.is_table() {
                return Err(format!(
                    "{label}: hooks.state is not a table of [hooks.state.\"...\"] records (hookd setup edits those; merge by hand, or write it so)"
                ));
            }
            continue;
        }
        let Some(groups) = item.as_array_of_tables() else {
            return Err(format!(
                "{label}: hooks.{event} is not a list of [[hooks.{event}]] tables (an inline array, or a value: hookd setup edits only [[hooks.{event}]] tables; write it so, or merge by hand)"
            ));
        };
        for (g, group) in groups.iter().enumerate() {
            let commands: Vec<Option<&str>> = match group.get("hooks") {
                None => Vec::new(),
                Some(Item::ArrayOfTables(list)) => list.iter().map(|h| toml_command(h)).collect(),
                Some(Item::Value(toml_edit::Value::Array(list))) => list
                    .iter()
                    .map(|h| h.as_inline_table().and_then(|t| toml_command(t)))
                    .collect(),
                Some(_) => {
                    return Err(format!(
                        "{label}: hooks.{event}[{g}].hooks is not a list of hooks"
                    ));
                }
            };
            for (h, command) in commands.into_iter().enumerate() {
                places.push(Place {
                    event: event.to_string(),
                    group: g,
                    hook: h,
                    hookd: command.is_some_and(|c| is_hookd_command(c, hookd)),
                });
            }
        }
    }
    Ok(places)
}

fn codex(text: &str, label: &str, wanted: &Wanted, add: bool) -> Result<String, String> {
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        let (line, col) = crate::settings::line_and_column(text, e.span().map_or(0, |s| s.start));
        format!("{label}:{line}:{col}: not TOML: {}", e.message().trim())
    })?;
    let before = places(&doc, label, wanted.hookd)?;
    if before.is_empty() && !add {
        return Ok(doc.to_string());
    }
    if doc.get("hooks").is_none() {
        let mut hooks = Table::new();
        hooks.set_implicit(true);
        doc.insert("hooks", Item::Table(hooks));
    }
    let hooks = doc["hooks"].as_table_mut().expect("checked by places");
    let moments = if add {
        Agent::Codex.moments()
    } else {
        Vec::new()
    };
    let events: Vec<String> = hooks
        .iter()
        .map(|(k, _)| k.to_string())
        .filter(|k| k != "state")
        .collect();
    for event in &events {
        let groups = hooks[event.as_str()]
            .as_array_of_tables_mut()
            .expect("checked by places");
        let at = strip_codex_groups(groups, wanted.hookd);
        if let Some(moment) = moments.iter().find(|m| *m == event) {
            groups.insert(
                at.unwrap_or(groups.len()).min(groups.len()),
                codex_group(moment, wanted.command),
            );
        } else if groups.is_empty() && before.iter().any(|p| &p.event == event) {
            hooks.remove(event);
        }
    }
    for moment in moments.iter().filter(|m| !events.iter().any(|e| e == *m)) {
        let mut groups = ArrayOfTables::new();
        groups.push(codex_group(moment, wanted.command));
        hooks.insert(moment, Item::ArrayOfTables(groups));
    }
    // The places as the file will be read: rendered and parsed back, so that the records name the
    // places Codex counts, whatever order the tables print in.
    let rendered = doc.to_string();
    let mut doc: DocumentMut = rendered.parse().map_err(|e| {
        format!("{label}: the merged file does not parse back ({e}); merge by hand")
    })?;
    let after = places(&doc, label, wanted.hookd)?;
    retrust(&mut doc, &before, &after, wanted);
    let text = doc.to_string();
    let check: DocumentMut = text.parse().map_err(|e| {
        format!("{label}: the merged file does not parse back ({e}); merge by hand")
    })?;
    if places(&check, label, wanted.hookd)? != after {
        return Err(format!(
            "{label}: hookd's hooks would not land where their trust records say; merge by hand"
        ));
    }
    Ok(text)
}

/// hookd's group at `moment`: the matcher that lets everything through where there is one, and the relay
/// with the timeout Codex will use (and hash).
fn codex_group(moment: &str, command: &str) -> Table {
    let mut group = Table::new();
    if let Some(matcher) = snippet::match_all(moment) {
        group.insert("matcher", toml_edit::value(matcher));
    }
    let mut hook = Table::new();
    hook.insert("type", toml_edit::value("command"));
    hook.insert("command", toml_edit::value(command));
    hook.insert(
        "timeout",
        toml_edit::value(snippet::codex_timeout(moment) as i64),
    );
    let mut list = ArrayOfTables::new();
    list.push(hook);
    group.insert("hooks", Item::ArrayOfTables(list));
    group
}

/// Takes hookd's hooks out of one event's groups, as [`strip_json_list`] does.
fn strip_codex_groups(groups: &mut ArrayOfTables, hookd: &str) -> Option<usize> {
    let mut at = None;
    let mut g = 0;
    while g < groups.len() {
        let group = groups.get_mut(g).expect("in range");
        let (removed, left) = match group.get_mut("hooks") {
            Some(Item::ArrayOfTables(list)) => {
                let before = list.len();
                list.retain(|h| !toml_command(h).is_some_and(|c| is_hookd_command(c, hookd)));
                (before - list.len(), list.len())
            }
            Some(Item::Value(toml_edit::Value::Array(list))) => {
                let before = list.len();
                list.retain(|h| {
                    !h.as_inline_table()
                        .and_then(|t| toml_command(t))
                        .is_some_and(|c| is_hookd_command(c, hookd))
                });
                if list.len() < before {
                    // The spaces around what was taken out would be left behind.
                    list.fmt();
                }
                (before - list.len(), list.len())
            }
            _ => (0, 1),
        };
        if removed > 0 && left == 0 {
            at.get_or_insert(g);
            groups.remove(g);
            continue;
        }
        if removed > 0 {
            at.get_or_insert(g + 1);
        }
        g += 1;
    }
    at
}

/// The trust records of this file made to fit the hooks' new places: hookd's old ones removed, each user
/// hook's carried to where it moved, and one for each of hookd's hooks where it now is.
fn retrust(doc: &mut DocumentMut, before: &[Place], after: &[Place], wanted: &Wanted) {
    let prefix = format!("{}:", wanted.codex_file);
    let user_before = before.iter().filter(|p| !p.hookd);
    let user_after = after.iter().filter(|p| !p.hookd);
    let moves: Vec<(String, String)> = user_before
        .zip(user_after)
        .filter(|(a, b)| a.key() != b.key())
        .map(|(a, b)| (a.key(), b.key()))
        .collect();
    let hookd_before: HashSet<String> = before.iter().filter(|p| p.hookd).map(Place::key).collect();
    let hooks = doc["hooks"].as_table_mut().expect("made above");
    if hooks.get("state").is_none() {
        if !after.iter().any(|p| p.hookd) {
            return;
        }
        let mut state = Table::new();
        state.set_implicit(true);
        hooks.insert("state", Item::Table(state));
    }
    let state = hooks["state"].as_table_mut().expect("checked by places");
    let keys: Vec<String> = state
        .iter()
        .map(|(k, _)| k.to_string())
        .filter(|k| k.starts_with(&prefix))
        .collect();
    let mut carried = Vec::new();
    for key in keys {
        let place = &key[prefix.len()..];
        if hookd_before.contains(place) {
            state.remove(&key);
        } else if let Some((_, to)) = moves.iter().find(|(from, _)| from == place)
            && let Some(item) = state.remove(&key)
        {
            carried.push((format!("{prefix}{to}"), item));
        }
    }
    for (key, item) in carried {
        state.insert(&key, item);
    }
    for place in after.iter().filter(|p| p.hookd) {
        let moment = place.event.as_str();
        let label = snippet::codex_event_label(moment);
        let hash = snippet::codex_trusted_hash(
            &label,
            snippet::match_all(moment),
            wanted.command,
            snippet::codex_timeout(moment),
        );
        let mut record = Table::new();
        record.insert("trusted_hash", toml_edit::value(hash));
        state.insert(&format!("{prefix}{}", place.key()), Item::Table(record));
    }
    if state.is_empty() {
        hooks.remove("state");
    }
}

/// Tables left empty by taking hookd's hooks out (`[hooks]`, `[hooks.state]`) are no setting.
fn without_empty_tables(mut table: toml::Table) -> toml::Table {
    if let Some(toml::Value::Table(hooks)) = table.get_mut("hooks") {
        hooks.retain(|_, v| !matches!(v, toml::Value::Table(t) if t.is_empty()));
        if hooks.is_empty() {
            table.remove("hooks");
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOOKD: &str = "/usr/local/bin/hookd";
    const FILE: &str = "/home/me/.codex/config.toml";

    fn wanted(agent: Agent, command: &'static str) -> Wanted<'static> {
        Wanted {
            agent,
            command,
            hookd: HOOKD,
            codex_file: FILE,
        }
    }

    const CLAUDE: &str = "/usr/local/bin/hookd relay --agent claude-code";
    const CODEX: &str = "/usr/local/bin/hookd relay --agent codex";

    fn value(text: &str) -> Value {
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// A managed file's pins are set where the file has them, else added at the end of their table;
    /// everything else is kept as written; pinning twice is pinning once.
    #[test]
    fn pins_are_set_in_place_and_the_rest_kept() {
        let pins: &[(&[&str], bool)] = &[(&["hooksConfig", "enabled"], true)];
        let text = "{\n  \"general\": {\"vimMode\": true},\n  \"hooksConfig\": {\"enabled\": false, \"disabled\": []}\n}\n";
        let pinned = pin(text, "f", SettingsFormat::Json, pins).unwrap();
        assert_eq!(
            pinned,
            "{\n  \"general\": {\"vimMode\": true},\n  \"hooksConfig\": {\"enabled\": true, \"disabled\": []}\n}\n"
        );
        assert_eq!(
            pin(&pinned, "f", SettingsFormat::Json, pins).unwrap(),
            pinned
        );
        let added = pin("{\"a\": 1}\n", "f", SettingsFormat::Json, pins).unwrap();
        assert_eq!(
            value(&added),
            serde_json::json!({"a": 1, "hooksConfig": {"enabled": true}})
        );
        assert!(pin("[1]", "f", SettingsFormat::Json, pins).is_err());

        let toml_pins: &[(&[&str], bool)] = &[(&["features", "hooks"], true)];
        let text = "# the admin's\n[features]\nhooks = false # off\nplugins = false\n";
        let pinned = pin(text, "f", SettingsFormat::CodexToml, toml_pins).unwrap();
        assert!(
            pinned.starts_with("# the admin's\n[features]\n"),
            "{pinned}"
        );
        let table: toml::Table = pinned.parse().unwrap();
        assert_eq!(table["features"]["hooks"].as_bool(), Some(true));
        assert_eq!(table["features"]["plugins"].as_bool(), Some(false));
        let fresh = pin("", "f", SettingsFormat::CodexToml, toml_pins).unwrap();
        assert_eq!(
            fresh.parse::<toml::Table>().unwrap()["features"]["hooks"].as_bool(),
            Some(true)
        );
        assert_eq!(
            pin(text, "f", SettingsFormat::CodexToml, &[]).unwrap(),
            text
        );
    }

    #[test]
    fn into_nothing_it_writes_what_print_settings_prints() {
        let w = wanted(Agent::ClaudeCode, CLAUDE);
        let merged = merge("", "settings.json", &w).unwrap();
        let printed =
            snippet::for_agent(Agent::ClaudeCode, HOOKD, &snippet::RelayFlags::default()).unwrap();
        assert_eq!(value(&merged), value(&printed));
        assert!(merged.starts_with("{\n  \"hooks\": {\n    \"SessionStart\": [\n      {\n        \"matcher\": \"*\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n"), "{merged}");
        for agent in [Agent::GeminiCli, Agent::QwenCode, Agent::CopilotCli] {
            let command = snippet::relay_command(agent, HOOKD, &snippet::RelayFlags::default());
            let w = Wanted {
                agent,
                command: &command,
                hookd: HOOKD,
                codex_file: FILE,
            };
            let merged = merge("", "settings.json", &w).unwrap();
            let printed =
                value(&snippet::for_agent(agent, HOOKD, &snippet::RelayFlags::default()).unwrap());
            assert_eq!(value(&merged)["hooks"], printed["hooks"], "{agent:?}");
        }
    }

    #[test]
    fn the_users_settings_and_hooks_stay_where_they_are() {
        let file = r#"{
    "permissions": {"allow": ["Bash"]},
    "model": "opus",
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "./check.sh", "timeout": 1.50}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo hookd relay >> log"}]}]
    },
    "zeta": 1e3
}"#;
        let merged = merge(file, "s.json", &wanted(Agent::ClaudeCode, CLAUDE)).unwrap();
        // What the merge did not change stays as written: one-line objects, numbers, indentation.
        assert!(merged.starts_with("{\n    \"permissions\": {\"allow\": [\"Bash\"]},\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"./check.sh\", \"timeout\": 1.50}]}, {\"hooks\": [{\"type\": \"command\", \"command\": \"/usr/local/bin/hookd relay --agent claude-code\", \"timeout\": 120}]}],\n"), "{merged}");
        assert!(
            merged.ends_with("\n    },\n    \"zeta\": 1e3\n}"),
            "{merged}"
        );
        let v = value(&merged);
        // The user's own hooks first, hookd's after them; the word hookd in a user hook is not hookd's.
        assert_eq!(v["hooks"]["Stop"][0]["hooks"][0]["command"], "./check.sh");
        assert_eq!(v["hooks"]["Stop"][1]["hooks"][0]["command"], CLAUDE);
        assert_eq!(
            v["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "echo hookd relay >> log"
        );
        assert_eq!(v["hooks"]["PreToolUse"][1]["hooks"][0]["command"], CLAUDE);
        // Stop and PreToolUse first, in the file's order, then the events hookd adds.
        let events: Vec<&String> = v["hooks"].as_object().unwrap().keys().collect();
        assert_eq!(events.len(), Agent::ClaudeCode.moments().len());
        let order: Vec<usize> = ["\"Stop\"", "\"PreToolUse\"", "\"PostToolUse\""]
            .iter()
            .map(|k| merged.find(k).unwrap())
            .collect();
        assert!(order[0] < order[1] && order[1] < order[2], "{merged}");
    }

    #[test]
    fn twice_is_once() {
        for agent in Agent::ALL {
            let command = snippet::relay_command(agent, HOOKD, &snippet::RelayFlags::default());
            let w = Wanted {
                agent,
                command: &command,
                hookd: HOOKD,
                codex_file: FILE,
            };
            let start = if agent == Agent::Codex {
                "model = \"o3\" # mine\n\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"./mine.sh\"\n"
            } else {
                "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"./mine.sh\"}]}]}}\n"
            };
            let once = merge(start, "settings.json", &w).unwrap();
            let twice = merge(&once, "settings.json", &w).unwrap();
            assert_eq!(once, twice, "{agent:?}");
            assert!(once.contains("./mine.sh"), "{agent:?}");
            assert!(same_apart_from_hookd(start, &once, &w), "{agent:?}");
            assert!(
                !same_apart_from_hookd(start, &once.replace("./mine.sh", "./yours.sh"), &w),
                "{agent:?}"
            );
        }
    }

    /// An event's empty list (`"Stop": []`) gets hookd's hook, and loses the list when it is taken out
    /// again: still the user's file, which `--undo` must restore without `--force`.
    #[test]
    fn empty_event_lists_are_no_change_to_undo() {
        for agent in [Agent::ClaudeCode, Agent::GeminiCli, Agent::CopilotCli] {
            let command = snippet::relay_command(agent, HOOKD, &snippet::RelayFlags::default());
            let w = Wanted {
                agent,
                command: &command,
                hookd: HOOKD,
                codex_file: FILE,
            };
            let event = agent.event_name_of(crate::tables::moment::STOP);
            let file = format!(
                "{{\"hooks\": {{\"{event}\": [], \"Unknown\": [], \"Notification\": []}}, \"model\": \"x\"}}\n"
            );
            let merged = merge(&file, "settings.json", &w).unwrap();
            assert!(
                same_apart_from_hookd(&file, &merged, &w),
                "{agent:?}: {merged}"
            );
            assert!(same_apart_from_hookd(&merged, &file, &w), "{agent:?}");
            assert!(
                !same_apart_from_hookd(&file, &merged.replace("\"x\"", "\"y\""), &w),
                "{agent:?}"
            );
        }
    }

    #[test]
    fn an_older_hookd_entry_is_replaced_in_its_place() {
        let file = r#"{"hooks": {
  "PreToolUse": [
    {"matcher": "Bash", "hooks": [{"type": "command", "command": "./first.sh"}]},
    {"matcher": "*", "hooks": [{"type": "command", "command": "/old/target/debug/hookd relay --agent claude-code --socket /run/old.sock", "timeout": 60}]},
    {"matcher": "Edit", "hooks": [{"type": "command", "command": "./last.sh"}, {"type": "command", "command": "'/my tools/hookd' relay --agent claude-code"}]}
  ],
  "WorktreeCreate": [{"hooks": [{"type": "command", "command": "hookd relay --agent claude-code"}]}],
  "Notification": [{"hooks": [{"type": "http", "url": "http://127.0.0.1:8787/hooks/claude-code", "allowedEnvVars": ["HOOKD_TOKEN"]}]}]
}}"#;
        let merged = merge(file, "s.json", &wanted(Agent::ClaudeCode, CLAUDE)).unwrap();
        let v = value(&merged);
        let pre = v["hooks"]["PreToolUse"].as_array().unwrap();
        let commands: Vec<&str> = pre
            .iter()
            .flat_map(|g| g["hooks"].as_array().unwrap())
            .map(|h| h["command"].as_str().unwrap())
            .collect();
        assert_eq!(commands, ["./first.sh", CLAUDE, "./last.sh"], "{merged}");
        assert_eq!(pre[2]["matcher"], "Edit");
        assert!(
            v["hooks"].get("WorktreeCreate").is_none(),
            "an event only hookd had is gone: {merged}"
        );
        let notification = v["hooks"]["Notification"].as_array().unwrap();
        assert_eq!(notification.len(), 1);
        assert_eq!(notification[0]["hooks"][0]["command"], CLAUDE);
        assert_eq!(
            merged.matches("hookd relay").count(),
            Agent::ClaudeCode.moments().len()
        );
    }

    #[test]
    fn hookd_is_told_from_hooks_that_mention_it() {
        for yes in [
            "/usr/local/bin/hookd relay --agent codex",
            "hookd relay",
            "'/opt/my tools/hookd' relay --agent gemini-cli",
            "\"/opt/x/hookd\" relay",
            "HOOKD_SOCKET=/x hookd relay",
            "/usr/local/bin/hookd relay --agent copilot-cli --event preToolUse",
            "/usr/local/bin/hookd-relay --agent codex",
            "'/opt/my tools/hookd-relay' --agent gemini-cli --fail-closed",
            "HOOKD_SOCKET=/x hookd-relay",
        ] {
            assert!(is_hookd_command(yes, HOOKD), "{yes}");
        }
        assert!(is_hookd_command(
            "/tmp/build/hookd-bin relay",
            "/tmp/build/hookd-bin"
        ));
        for no in [
            "echo hookd relay",
            "hookd-guard relay",
            "hookd fire Stop",
            "hookd",
            "",
            "./hookd.sh relay",
            "cat hookd; hookd relay",
            "grep 'hookd relay' log",
            "echo hookd-relay",
            "./hookd-relay.sh --agent codex",
        ] {
            assert!(!is_hookd_command(no, HOOKD), "{no}");
        }
    }

    #[test]
    fn files_of_the_wrong_shape_are_refused() {
        let w = wanted(Agent::ClaudeCode, CLAUDE);
        let err = merge("{\n  \"a\": 1,\n}", "s.json", &w).unwrap_err();
        assert!(err.starts_with("s.json:3:1: not JSON: "), "{err}");
        let err = merge("{\n  // mine\n  \"a\": 1\n}", "s.json", &w).unwrap_err();
        assert!(err.contains("a comment"), "{err}");
        assert!(
            merge("[1]", "s.json", &w)
                .unwrap_err()
                .contains("is a list, not a JSON object")
        );
        assert!(
            merge("{\"hooks\": []}", "s.json", &w)
                .unwrap_err()
                .contains("\"hooks\" is a list, not an object of events")
        );
        assert!(
            merge("{\"hooks\": {\"Stop\": {}}}", "s.json", &w)
                .unwrap_err()
                .contains("\"hooks\".\"Stop\" is an object, not a list")
        );
        assert!(
            merge("{\"a\": 1, \"a\": 2}", "s.json", &w)
                .unwrap_err()
                .contains("given twice")
        );
        let c = wanted(Agent::Codex, CODEX);
        assert!(
            merge("a = ", "c.toml", &c)
                .unwrap_err()
                .starts_with("c.toml:1:5: not TOML")
        );
        assert!(
            merge("hooks = 1", "c.toml", &c)
                .unwrap_err()
                .contains("not a [hooks] table")
        );
        assert!(
            merge("[hooks]\nStop = [{hooks = []}]", "c.toml", &c)
                .unwrap_err()
                .contains("inline array")
        );
        // Gemini's own settings under hooks are left alone.
        let g = wanted(
            Agent::GeminiCli,
            "/usr/local/bin/hookd relay --agent gemini-cli",
        );
        let merged = merge(
            "{\"hooks\": {\"enabled\": true, \"disabled\": [\"x\"]}}",
            "s.json",
            &g,
        )
        .unwrap();
        assert!(
            merged.starts_with(
                "{\"hooks\": {\"enabled\": true, \"disabled\": [\"x\"], \"SessionStart\": [{"
            ),
            "{merged}"
        );
    }

    /// `--remove` takes out hookd's hooks and Codex's records of them, and nothing else: a user's hook
    /// added after setup, and its record, stay.
    #[test]
    fn remove_takes_out_what_setup_wrote_and_keeps_later_edits() {
        let w = wanted(Agent::ClaudeCode, CLAUDE);
        let start = "{\"model\": \"opus\"}\n";
        let merged = merge(start, "s.json", &w).unwrap();
        assert_eq!(remove(&merged, "s.json", &w).unwrap().unwrap(), start);
        let edited = merged.replace("\"opus\"", "\"sonnet\"").replacen(
            "\"hooks\": {",
            "\"hooks\": {\n    \"WorktreeCreate\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"./later.sh\"}]}],",
            1,
        );
        let removed = remove(&edited, "s.json", &w).unwrap().unwrap();
        let v = value(&removed);
        assert_eq!(v["model"], "sonnet");
        assert_eq!(v["hooks"].as_object().unwrap().len(), 1, "{removed}");
        assert_eq!(
            v["hooks"]["WorktreeCreate"][0]["hooks"][0]["command"],
            "./later.sh"
        );
        assert_eq!(remove(&removed, "s.json", &w).unwrap(), None);
        assert_eq!(remove("", "s.json", &w).unwrap(), None);

        let c = wanted(Agent::Codex, CODEX);
        let merged = merge("model = \"o3\" # mine\n", "c.toml", &c).unwrap();
        let later = format!(
            "{merged}\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"./later.sh\"\n\n[hooks.state.\"{FILE}:stop:1:0\"]\ntrusted_hash = \"sha256:later\"\n"
        );
        let removed = remove(&later, "c.toml", &c).unwrap().unwrap();
        assert!(removed.starts_with("model = \"o3\" # mine\n"), "{removed}");
        assert!(!removed.contains("hookd"), "{removed}");
        let v: toml::Table = removed.parse().unwrap();
        assert_eq!(
            v["hooks"]["Stop"][0]["hooks"][0]["command"].as_str(),
            Some("./later.sh")
        );
        let state = v["hooks"]["state"].as_table().unwrap();
        assert_eq!(state.len(), 1, "{removed}");
        assert_eq!(
            state[&format!("{FILE}:stop:0:0")]["trusted_hash"].as_str(),
            Some("sha256:later"),
            "the user's record follows its hook to its new place"
        );
    }

    /// A hook of the agent's own that hookd's settings also run for that agent, at the same moment with
    /// the same command, runs twice; one scoped to another agent, on another moment, switched off in
    /// the agent, or hookd's relay, does not.
    #[test]
    fn hooks_in_both_places_are_found_to_run_twice() {
        let file = r#"{"hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}, {"type": "command", "command": "./other.sh"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "./stop.sh"}, {"type": "command", "command": "/usr/local/bin/hookd relay --agent claude-code"}]}]
        }}"#;
        let settings = crate::settings::Settings::parse(
            Path::new("h.toml"),
            "h.toml",
            "[[hooks.PreToolUse]]\nname = \"guard\"\ncommand = \"./guard.sh\"\n\n[[hooks.PreToolUse]]\nname = \"other\"\ncommand = \"./other.sh\"\nagents = [\"codex\"]\n\n[[hooks.PostToolUse]]\nname = \"stop-elsewhere\"\ncommand = \"./stop.sh\"\n",
        )
        .unwrap();
        let twice = runs_twice(file, "settings.json", Agent::ClaudeCode, &settings);
        assert_eq!(
            twice,
            [RunsTwice {
                event: "PreToolUse".into(),
                command: "./guard.sh".into(),
                hookd_hook: "guard".into()
            }]
        );
        let said = said_twice(&twice, Agent::ClaudeCode, "s.json", "h.toml");
        assert_eq!(
            said,
            "1 of Claude Code's own hooks in s.json are in hookd's settings (h.toml) too, so each runs twice, once by Claude Code and once through hookd: PreToolUse `./guard.sh` (hookd's \"guard\"); take them out of s.json (hookd runs them for Claude Code now), or out of h.toml"
        );
        // Gemini CLI's own event name, for hookd's moment.
        let gemini = r#"{"hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "./guard.sh"}]}]}}"#;
        let twice = runs_twice(gemini, "settings.json", Agent::GeminiCli, &settings);
        assert_eq!(twice.len(), 1);
        assert_eq!(twice[0].event, "BeforeTool");
        assert!(runs_twice("not json", "s.json", Agent::ClaudeCode, &settings).is_empty());
    }

    /// A file of the other format is refused by its name, in words that point at the right file.
    #[test]
    fn a_file_of_the_other_format_is_named_as_such() {
        let err = wrong_kind_of_file(Agent::Codex, Path::new("/h/.codex/hooks.json")).unwrap();
        assert!(
            err.starts_with("/h/.codex/hooks.json: hookd setup codex writes Codex's config.toml"),
            "{err}"
        );
        assert!(
            err.contains("give --file the config.toml") && !err.contains("not TOML"),
            "{err}"
        );
        assert!(
            wrong_kind_of_file(Agent::ClaudeCode, Path::new("config.toml"))
                .unwrap()
                .contains("Claude Code reads its hooks from a JSON settings file, not TOML")
        );
        assert_eq!(
            wrong_kind_of_file(Agent::Codex, Path::new("config.toml")),
            None
        );
        assert_eq!(
            wrong_kind_of_file(Agent::Codex, Path::new("my-config")),
            None
        );
        assert_eq!(
            wrong_kind_of_file(Agent::CopilotCli, Path::new(".github/hooks/h.json")),
            None
        );
    }

    #[test]
    fn codex_trust_follows_the_final_places() {
        let file = "# my config\nmodel = \"o3\"\n\n[[hooks.PreToolUse]] # guard\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"./guard.sh\"\n\n[hooks.state.\"/home/me/.codex/config.toml:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:mine\"\n";
        let merged = merge(file, "c.toml", &wanted(Agent::Codex, CODEX)).unwrap();
        assert!(
            merged.starts_with("# my config\nmodel = \"o3\"\n\n[[hooks.PreToolUse]] # guard\n"),
            "{merged}"
        );
        let v: toml::Table = merged.parse().unwrap();
        let pre = v["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre[0]["hooks"][0]["command"].as_str(), Some("./guard.sh"));
        assert_eq!(pre[1]["hooks"][0]["command"].as_str(), Some(CODEX));
        let state = v["hooks"]["state"].as_table().unwrap();
        assert_eq!(
            state[&format!("{FILE}:pre_tool_use:0:0")]["trusted_hash"].as_str(),
            Some("sha256:mine")
        );
        assert_eq!(
            state[&format!("{FILE}:pre_tool_use:1:0")]["trusted_hash"]
                .as_str()
                .unwrap(),
            snippet::codex_trusted_hash("pre_tool_use", Some("*"), CODEX, 120)
        );
        assert_eq!(
            state[&format!("{FILE}:stop:0:0")]["trusted_hash"]
                .as_str()
                .unwrap(),
            snippet::codex_trusted_hash("stop", None, CODEX, 120)
        );
        assert_eq!(state.len(), Agent::Codex.moments().len() + 1);
        assert_eq!(
            merge(&merged, "c.toml", &wanted(Agent::Codex, CODEX)).unwrap(),
            merged
        );
    }

    #[test]
    fn codex_stale_records_go_and_moved_ones_follow() {
        // The pasted snippet first (group 0), the user's hook after it (group 1) with its record; an old
        // hookd with a second copy at group 2.
        let file = format!(
            "[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"/old/hookd relay --agent codex\"\ntimeout = 120\n\n\
             [[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"./mine.sh\"\n\n\
             [[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"/old/hookd relay --agent codex\"\n\n\
             [hooks.state.\"{FILE}:stop:0:0\"]\ntrusted_hash = \"sha256:old\"\n\
             [hooks.state.\"{FILE}:stop:1:0\"]\ntrusted_hash = \"sha256:mine\"\n\
             [hooks.state.\"{FILE}:stop:2:0\"]\ntrusted_hash = \"sha256:old2\"\n\
             [hooks.state.\"/elsewhere/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:other\"\n"
        );
        let merged = merge(&file, "c.toml", &wanted(Agent::Codex, CODEX)).unwrap();
        let v: toml::Table = merged.parse().unwrap();
        let stop = v["hooks"]["Stop"].as_array().unwrap();
        assert_eq!(stop.len(), 2, "{merged}");
        assert_eq!(stop[0]["hooks"][0]["command"].as_str(), Some(CODEX));
        assert_eq!(stop[1]["hooks"][0]["command"].as_str(), Some("./mine.sh"));
        let state = v["hooks"]["state"].as_table().unwrap();
        assert_eq!(
            state[&format!("{FILE}:stop:1:0")]["trusted_hash"].as_str(),
            Some("sha256:mine")
        );
        assert_eq!(
            state[&format!("{FILE}:stop:0:0")]["trusted_hash"]
                .as_str()
                .unwrap(),
            snippet::codex_trusted_hash("stop", None, CODEX, 120)
        );
        assert!(!merged.contains("sha256:old"), "{merged}");
        assert!(merged.contains("sha256:other"));
        assert!(!state.contains_key(&format!("{FILE}:stop:2:0")));
    }

    #[test]
    fn the_files_indentation_is_kept() {
        let merged = merge(
            "{\n\t\"model\": \"opus\"\n}",
            "s.json",
            &wanted(Agent::ClaudeCode, CLAUDE),
        )
        .unwrap();
        assert!(
            merged.starts_with(
                "{\n\t\"model\": \"opus\",\n\t\"hooks\": {\n\t\t\"SessionStart\": [\n\t\t\t{\n"
            ),
            "{merged}"
        );
        assert!(
            merged.ends_with("\n}"),
            "no newline at the end, as before: {merged:?}"
        );
        let compact = merge(
            "{\"model\":\"opus\"}\n",
            "s.json",
            &wanted(Agent::ClaudeCode, CLAUDE),
        )
        .unwrap();
        assert!(
            compact.starts_with("{\"model\":\"opus\",\"hooks\":{\"SessionStart\":[{\"matcher\":\"*\",\"hooks\":[{\"type\":\"command\",")
                && compact.ends_with("}]}]}}\n")
                && compact.lines().count() == 1,
            "a file written on one line stays one line: {compact}"
        );
    }

    /// Setup keeps the file's own layout: every part the merge did not change byte for byte (blank
    /// lines, one-line objects, numbers, CRLF line ends), and what it adds written as the file writes
    /// its hooks at that depth (a group on one line in a file that writes them so); a one-line file
    /// stays one line; taking hookd's hooks out gives the file back as it was.
    #[test]
    fn the_files_own_layout_is_kept() {
        let c = wanted(Agent::ClaudeCode, CLAUDE);
        let file = "{\n  \"env\": {\"A\": \"1\",   \"B\": 2.50},\n\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./guard.sh\"}]}\n    ]\n  }\n}\n";
        let merged = merge(file, "s.json", &c).unwrap();
        assert!(
            merged.starts_with("{\n  \"env\": {\"A\": \"1\",   \"B\": 2.50},\n\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./guard.sh\"}]},\n      {\"matcher\": \"*\", \"hooks\": [{\"type\": \"command\", \"command\": \"/usr/local/bin/hookd relay --agent claude-code\", \"timeout\": 120}]}\n    ],\n    \"SessionStart\": [\n      {\"matcher\": \"*\", \"hooks\": [{\"type\""),
            "{merged}"
        );
        assert_eq!(merge(&merged, "s.json", &c).unwrap(), merged);
        assert_eq!(remove(&merged, "s.json", &c).unwrap().unwrap(), file);

        // Copilot CLI's one-line file stays one line, and comes back as it was.
        let p = wanted(
            Agent::CopilotCli,
            "/usr/local/bin/hookd relay --agent copilot-cli",
        );
        let one_line = "{\"model\": \"gpt-5\", \"trusted_folders\": [\"/src\"]}\n";
        let merged = merge(one_line, "settings.json", &p).unwrap();
        assert_eq!(merged.lines().count(), 1, "{merged}");
        assert!(
            merged.starts_with(
                "{\"model\": \"gpt-5\", \"trusted_folders\": [\"/src\"], \"hooks\": {\""
            ),
            "{merged}"
        );
        assert_eq!(
            remove(&merged, "settings.json", &p).unwrap().unwrap(),
            one_line
        );

        // Brackets cuddled (`[{`): hookd's group follows as `}, {`, indented as the file's groups are.
        let cuddled = "{\n\t\"hooks\": {\n\t\t\"Stop\": [{\n\t\t\t\"hooks\": [{\n\t\t\t\t\"type\": \"command\",\n\t\t\t\t\"command\": \"./stop.sh\"\n\t\t\t}]\n\t\t}]\n\t}\n}\n";
        let merged = merge(cuddled, "s.json", &c).unwrap();
        assert!(
            merged.contains("\t\t\t}]\n\t\t}, {\n\t\t\t\"hooks\": [\n\t\t\t\t{\n\t\t\t\t\t\"type\": \"command\",\n"),
            "{merged}"
        );
        assert_eq!(remove(&merged, "s.json", &c).unwrap().unwrap(), cuddled);

        // CRLF line ends stay CRLF, in what is kept and in what is added.
        let crlf = "{\r\n  \"model\": \"opus\"\r\n}\r\n";
        let merged = merge(crlf, "s.json", &c).unwrap();
        assert!(
            merged.starts_with(
                "{\r\n  \"model\": \"opus\",\r\n  \"hooks\": {\r\n    \"SessionStart\": [\r\n"
            ),
            "{merged:?}"
        );
        assert!(!merged.replace("\r\n", "").contains('\n'), "{merged:?}");
        assert_eq!(remove(&merged, "s.json", &c).unwrap().unwrap(), crlf);
    }

    #[test]
    fn hooks_switched_off_in_the_agent_are_warned_of() {
        let g = wanted(
            Agent::GeminiCli,
            "/usr/local/bin/hookd relay --agent gemini-cli",
        );
        let text = "{\"hooksConfig\": {\"enabled\": false, \"disabled\": [\"hookd\"]}}";
        let warned = warnings(&merge(text, "s.json", &g).unwrap(), &g);
        assert_eq!(warned.len(), 2, "{warned:?}");
        assert!(warned[0].contains("hooksConfig.enabled = false: Gemini CLI runs none"));
        assert!(warned[1].contains("hooksConfig.disabled names hookd's hook"));
        let c = wanted(Agent::ClaudeCode, CLAUDE);
        assert!(warnings("{\"disableAllHooks\": true}", &c)[0].contains("disableAllHooks"));
        assert!(warnings("{\"disableAllHooks\": false, \"hooks\": {}}", &c).is_empty());
    }

    /// Numbers as written, in the part of the file setup leaves as it was.
    #[test]
    fn json_numbers_keep_their_text() {
        let merged = merge(
            "{\"n\": 1.0, \"big\": 123456789012345678901234567890, \"e\": -2E-3}\n",
            "s.json",
            &wanted(Agent::ClaudeCode, CLAUDE),
        )
        .unwrap();
        assert!(
            merged.starts_with(
                "{\"n\": 1.0, \"big\": 123456789012345678901234567890, \"e\": -2E-3, \"hooks\": {"
            ),
            "{merged}"
        );
    }
}
