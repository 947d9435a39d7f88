//! `hookd import FILE`: an agent's existing hook settings, printed as hookd settings.
//!
//! Claude Code's settings.json, Codex's hooks.json (and the `[hooks]` of its config.toml) and Gemini CLI's
//! settings.json all hold `{"hooks": {EVENT: [{"matcher": M, "hooks": [{"type": "command", ...}]}]}}`.
//! Each command hook becomes one `[[hooks.MOMENT]]`. The output is for a person to read before using it:
//! whatever could not be carried over, or changes meaning on the way, is said in a comment next to it,
//! and nothing is dropped without one. It always passes `hookd check`, alone or appended to an existing
//! settings file (`hookd import F >> hooks.toml`): it holds tables only, no top-level key that would land
//! inside the file's last table.

use std::collections::HashSet;
use std::path::{Component, Path};

use serde_json::{Map, Value};

use crate::limits::{MAX_HOOK_TIMEOUT_SECS, SHORT_COMMAND_TIMEOUT_SECS};
use crate::settings::Matcher;
use crate::tables::agent::{Agent, SettingsFormat};
use crate::tables::moment;

/// What an import makes: the hookd TOML, and what the user must hear of even if they never read it
/// (for stderr).
#[derive(Debug)]
pub struct Imported {
    pub toml: String,
    pub warnings: Vec<String>,
}

/// Converts the agent settings `text` (read from `label`) into hookd TOML.
pub fn convert(text: &str, label: &str, agent: Option<Agent>) -> Result<Imported, String> {
    let root = read_root(text, label)?;
    let Some(root) = root.as_object() else {
        return Err(format!(
            "{label}: no \"hooks\" object: the file is not a JSON object"
        ));
    };
    let hooks = match root.get("hooks") {
        Some(Value::Object(hooks)) => hooks,
        Some(other) => {
            return Err(format!(
                "{label}: \"hooks\" is {}, not an object of events",
                kind(other)
            ));
        }
        None => return Err(no_hooks(root, label)),
    };
    let (agent, guessed) = match agent {
        Some(agent) => (agent, None),
        None => {
            let (agent, why) = guess_agent(label, hooks);
            (agent, Some(why))
        }
    };
    let mut import = Import::new(agent);
    import.file_settings(root, hooks);
    for (event, groups) in hooks {
        import.event(event, groups);
    }
    Ok(import.render(label, guessed))
}

/// Why a file without hooks cannot be imported, in the file's own terms: a config.toml has no
/// `[hooks]` table (Codex's hooks may be in the hooks.json beside it); a JSON file whose top level holds
/// event names has them outside the `"hooks"` object the agents read them from.
fn no_hooks(root: &Map<String, Value>, label: &str) -> String {
    if label.ends_with(".toml") {
        return format!(
            "{label}: no [hooks] table, so no hooks to import: Codex's hooks are [[hooks.EVENT]] tables (with [[hooks.EVENT.hooks]] in each) in config.toml, or in the hooks.json beside it; import that file if it is there"
        );
    }
    let events: Vec<&str> = root
        .keys()
        .map(String::as_str)
        .filter(|key| {
            moment::known(key).is_some() || Agent::ALL.iter().any(|a| a.event_names().contains(key))
        })
        .take(3)
        .collect();
    if !events.is_empty() {
        return format!(
            "{label}: no \"hooks\" object: the file's top level holds {}, which agents read only inside one ({{\"hooks\": {{\"{}\": [...]}}}}); move them there to import them",
            events.join(", "),
            events[0]
        );
    }
    format!("{label}: no \"hooks\" object (expected {{\"hooks\": {{\"PreToolUse\": [...]}}}})")
}

/// The file as JSON; a `.toml` file (Codex's config.toml) is read as TOML and handled the same way.
fn read_root(text: &str, label: &str) -> Result<Value, String> {
    if label.ends_with(".toml") {
        let value: toml::Value = toml::from_str(text).map_err(|e| {
            let offset = e.span().map_or(0, |span| span.start);
            let (line, column) = crate::settings::line_and_column(text, offset);
            format!(
                "{label}:{line}:{column}: not TOML: {}",
                one_line(e.message())
            )
        })?;
        return serde_json::to_value(value).map_err(|e| format!("{label}: {e}"));
    }
    serde_json::from_str(text).map_err(|e| {
        let message = e.to_string();
        // serde_json ends its messages with " at line L column C"; the place goes in front instead.
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(m, _)| m);
        format!(
            "{label}:{}:{}: not JSON: {}",
            e.line(),
            e.column(),
            one_line(message)
        )
    })
}

/// Whose file it is, when `--agent` does not say, and why: an agent's event names of its own (Gemini
/// CLI's); a hooks.json or a config.toml is Codex's; the folder an agent keeps its settings in (its row's
/// `import.folder`); everything else is Claude Code's shape.
fn guess_agent(label: &str, hooks: &Map<String, Value>) -> (Agent, String) {
    for agent in Agent::ALL {
        // Its names that are no moment's: its names for moments, or events of its own.
        let own_names = agent
            .event_names()
            .into_iter()
            .filter(|event| moment::known(event).is_none());
        for event in own_names {
            if hooks.contains_key(event) {
                return (
                    agent,
                    format!("from its {} event {event}", agent.display_name()),
                );
            }
        }
    }
    let path = Path::new(label);
    let in_folder = |name: &str| {
        path.components()
            .any(|c| c == Component::Normal(name.as_ref()))
    };
    if path.file_name().is_some_and(|n| n == "hooks.json") || label.ends_with(".toml") {
        return (Agent::Codex, "from the file's name".into());
    }
    for agent in Agent::ALL {
        if let Some(folder) = agent.row().import.folder.filter(|folder| in_folder(folder)) {
            return (agent, format!("from its {folder} folder"));
        }
    }
    (
        Agent::ClaudeCode,
        "as nothing points elsewhere (no Gemini CLI event, hooks.json or .codex folder)".into(),
    )
}

/// One hook carried over.
struct Converted {
    moment: String,
    /// Where it was in the file (`hooks.PreToolUse[0].hooks[1]`), for the comment above it.
    source: String,
    matcher: Option<String>,
    /// Its condition on the call (`if`), kept as the agent wrote it when hookd reads it the same.
    condition: Option<String>,
    command: String,
    timeout: Option<f64>,
    enabled: bool,
    /// The agent ran it in the background (`async`), where hookd can too.
    background: bool,
    /// Comment lines above the hook: what changed on the way and why.
    notes: Vec<String>,
}

/// The conversion of one file, built up event by event, then rendered.
struct Import {
    agent: Agent,
    hooks: Vec<Converted>,
    /// `not converted: ...` lines: hooks (or parts of the file) that did not become hooks.
    skipped: Vec<String>,
    /// Notes about the file as a whole.
    notes: Vec<String>,
    /// Every hook of the file was off in the agent (`disableAllHooks`, `hooksConfig.enabled = false`).
    all_disabled: bool,
    /// Gemini CLI hook names switched off in its settings (`hooksConfig.disabled`).
    disabled_names: HashSet<String>,
    /// What the user must hear of on stderr, besides the comments (a timeout too short to run).
    warnings: Vec<String>,
}

impl Import {
    fn new(agent: Agent) -> Import {
        Import {
            agent,
            hooks: Vec::new(),
            skipped: Vec::new(),
            notes: Vec::new(),
            all_disabled: false,
            disabled_names: HashSet::new(),
            warnings: Vec::new(),
        }
    }

    /// The settings outside the events that decide whether the hooks ran at all: carried over as
    /// `enabled = false`, so that importing a file does not switch on what was off.
    fn file_settings(&mut self, root: &Map<String, Value>, hooks: &Map<String, Value>) {
        if root.get("disableAllHooks") == Some(&Value::Bool(true)) {
            self.all_disabled = true;
            self.notes.push(
                "the file sets disableAllHooks: its hooks were not running, so they are written with enabled = false".into(),
            );
        }
        if !self.agent.row().import.hooks_config {
            return;
        }
        let places = [
            (
                "hooksConfig",
                root.get("hooksConfig").and_then(Value::as_object),
            ),
            ("hooks", Some(hooks)),
        ];
        for (place, config) in places {
            let Some(config) = config else {
                continue;
            };
            if config.get("enabled") == Some(&Value::Bool(false)) {
                self.all_disabled = true;
                self.notes.push(format!(
                    "the file sets {place}.enabled = false: its hooks were not running, so they are written with enabled = false"
                ));
            }
            if let Some(names) = config.get("disabled").and_then(Value::as_array) {
                self.disabled_names
                    .extend(names.iter().filter_map(Value::as_str).map(String::from));
            }
        }
    }

    /// One event of the file: `EVENT: [group, ...]`.
    fn event(&mut self, event: &str, groups: &Value) {
        let place = format!("hooks.{event}");
        // Keys under `hooks` that are the agent's settings, not events (Qwen Code's `hooks.disabled`
        // is a list, of hook names).
        if self.agent.row().import.setting_keys.contains(&event) {
            self.notes.push(format!(
                "{place} is a {} setting, not an event: nothing to convert there",
                agent_title(self.agent)
            ));
            return;
        }
        let Some(groups) = groups.as_array() else {
            self.skipped.push(format!(
                "{place} is {}, not a list of matcher groups",
                kind(groups)
            ));
            return;
        };
        let bare = !event.is_empty()
            && event
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !bare {
            self.skipped.push(format!(
                "hooks[{event:?}]: not an event name hookd can take (letters, digits, _ and - only)"
            ));
            return;
        }
        let moment = self.agent.moment_of(event);
        for (g, group) in groups.iter().enumerate() {
            self.group(&moment, &format!("{place}[{g}]"), group);
        }
    }

    /// One matcher group: `{"matcher": M, "hooks": [...]}`.
    fn group(&mut self, moment: &str, place: &str, group: &Value) {
        let Some(group) = group.as_object() else {
            self.skipped
                .push(format!("{place} is {}, not a matcher group", kind(group)));
            return;
        };
        // Copilot CLI's own layout: a flat list of hooks per event, with no matcher (every tool).
        if self.agent.row().settings.format == SettingsFormat::CopilotJson
            && !group.contains_key("hooks")
        {
            let hook = Value::Object(group.clone());
            if let Some(converted) = self.hook(moment, place, &hook) {
                self.hooks.push(converted);
            }
            return;
        }
        let matcher = match group.get("matcher") {
            None | Some(Value::Null) => None,
            Some(Value::String(m)) => Some(m.as_str()),
            Some(other) => {
                self.skipped.push(format!(
                    "{place}: its matcher is {}, not a string",
                    kind(other)
                ));
                return;
            }
        };
        let Some(hooks) = group.get("hooks").and_then(Value::as_array) else {
            self.skipped.push(format!("{place} has no \"hooks\" list"));
            return;
        };
        let mut group_notes = Vec::new();
        for (key, value) in group {
            match key.as_str() {
                "matcher" | "hooks" => {}
                "sequential" => {
                    if value == &Value::Bool(true) {
                        group_notes.push(
                            "Gemini CLI ran this group's hooks one after another; hookd runs every hook at once".into(),
                        );
                    }
                }
                _ => group_notes.push(format!("not kept: group key {key:?} = {}", short(value))),
            }
        }
        for (h, hook) in hooks.iter().enumerate() {
            let source = format!("{place}.hooks[{h}]");
            if let Some(mut converted) = self.hook(moment, &source, hook) {
                converted.notes.splice(0..0, group_notes.iter().cloned());
                self.matcher(matcher, &mut converted);
                self.hooks.push(converted);
            }
        }
    }

    /// One hook of a group: a command becomes a hook; anything else is named as not converted.
    fn hook(&mut self, moment: &str, source: &str, hook: &Value) -> Option<Converted> {
        let Some(hook) = hook.as_object() else {
            self.skipped
                .push(format!("{source} is {}, not a hook", kind(hook)));
            return None;
        };
        match hook.get("type") {
            Some(Value::String(t)) if t == "command" => {}
            Some(Value::String(t)) => {
                self.skipped
                    .push(format!("{source} (type {t:?}): hookd runs commands only"));
                return None;
            }
            Some(other) => {
                self.skipped.push(format!(
                    "{source}: its type is {}, not a string",
                    kind(other)
                ));
                return None;
            }
            None => {
                self.skipped.push(format!(
                    "{source} has no type (\"command\" is the one hookd runs)"
                ));
                return None;
            }
        }
        // Copilot CLI names a hook's shell command `bash` (or `powershell`, which hookd does not run).
        let command_key = if self.agent.row().settings.format == SettingsFormat::CopilotJson
            && !hook.contains_key("command")
            && hook.contains_key("bash")
        {
            "bash"
        } else {
            "command"
        };
        let command = match hook.get(command_key) {
            Some(Value::String(c)) if !c.trim().is_empty() && !c.contains('\0') => c.clone(),
            Some(Value::String(_)) => {
                self.skipped
                    .push(format!("{source}: its command is empty or holds a NUL"));
                return None;
            }
            Some(other) => {
                self.skipped.push(format!(
                    "{source}: its command is {}, not a string",
                    kind(other)
                ));
                return None;
            }
            None => {
                self.skipped.push(format!("{source} has no command"));
                return None;
            }
        };
        if runs_hookd_relay(&command) {
            self.skipped.push(format!(
                "{source} runs `hookd relay` already ({}); as a hookd hook it would fire hookd from inside itself",
                short(&Value::String(command))
            ));
            return None;
        }
        let mut notes = Vec::new();
        let own_env = self.agent.row().import.own_env;
        if own_env.iter().any(|var| command.contains(var)) {
            let vars: Vec<String> = own_env.iter().map(|var| format!("${var}")).collect();
            notes.push(format!(
                "hookd does not set {}: use $CLAUDE_PROJECT_DIR and $HOOKD_SESSION",
                vars.join(" or ")
            ));
        }
        let mut converted = Converted {
            moment: moment.to_string(),
            source: source.to_string(),
            matcher: None,
            condition: None,
            command,
            timeout: None,
            enabled: !self.all_disabled,
            background: false,
            notes,
        };
        for (key, value) in hook {
            match key.as_str() {
                "type" | "command" => {}
                key if key == command_key => {}
                key if self.agent.row().import.timeout_keys.contains(&key) => {
                    self.timeout(value, &mut converted)
                }
                "name" if self.agent.row().settings.named_hooks => converted.notes.push(format!(
                    "{} name: {}",
                    self.agent.display_name(),
                    short(value)
                )),
                "description" | "statusMessage" => converted
                    .notes
                    .push(format!("{key}: {}", short(value))),
                "async" if value == &Value::Bool(false) => {}
                "async" if crate::settings::background_refused_at(moment).is_none() => {
                    converted.background = true;
                }
                "async" => converted.notes.push(format!(
                    "{} ran it in the background (async); hookd waits for it, and its answer counts",
                    agent_title(self.agent)
                )),
                // The same rule, read the same way on hookd's tool vocabulary (settings.md, `if`).
                "if" if value.as_str().is_some_and(|rule| {
                    crate::tables::moment::known(moment).and_then(|m| m.matcher_field) == Some("tool_name")
                        && crate::settings::Condition::parse(rule).is_ok()
                }) =>
                {
                    converted.condition = value.as_str().map(str::to_string);
                }
                "if" => {
                    converted.enabled = false;
                    converted.notes.push(format!(
                        "disabled: {} ran it only if {}, a condition hookd cannot express; enable it once the command checks that itself",
                        agent_title(self.agent),
                        short(value)
                    ));
                }
                _ => converted
                    .notes
                    .push(format!("not kept: {key:?} = {}", short(value))),
            }
        }
        // Gemini CLI names a hook by its name, else by its command, in `hooksConfig.disabled`.
        let gemini_name = hook.get("name").and_then(Value::as_str);
        if gemini_name
            .into_iter()
            .chain([converted.command.as_str()])
            .any(|name| self.disabled_names.contains(name))
        {
            converted.enabled = false;
            converted.notes.push(format!(
                "disabled in {} (hooksConfig.disabled), so written with enabled = false",
                self.agent.display_name()
            ));
        }
        Some(converted)
    }

    /// The timeout, in seconds: Claude Code and Codex count in seconds, Gemini CLI in milliseconds. A
    /// conversion is said above the hook, and one that leaves a command too little time to start (a
    /// Gemini CLI `"timeout": 10`, written as if in seconds, is 10 ms) on stderr too: it is kept as the
    /// agent read it, not guessed at, and the warning says what to write if seconds were meant.
    fn timeout(&mut self, value: &Value, converted: &mut Converted) {
        let in_ms = self.agent.row().settings.timeout_in_ms;
        let seconds = value.as_f64().map(|t| if in_ms { t / 1000.0 } else { t });
        let Some(s) = seconds.filter(|s| *s > 0.0 && *s <= MAX_HOOK_TIMEOUT_SECS) else {
            converted.notes.push(format!(
                "timeout {} left out (hookd takes more than 0 and at most a day): hookd's default applies",
                short(value)
            ));
            return;
        };
        converted.timeout = Some(s);
        let read = short(value);
        if in_ms {
            converted.notes.push(format!(
                "timeout {read} read as {} reads it, in milliseconds: timeout = {} (seconds)",
                self.agent.display_name(),
                seconds_text(s)
            ));
        }
        if s < SHORT_COMMAND_TIMEOUT_SECS {
            let who = self.agent.display_name();
            let meant = if in_ms {
                format!(
                    " ({read} ms: {who} cut it off as soon); kept as timeout = {}: if {read} seconds were meant, write timeout = {read} here (and \"timeout\": {} in {who}'s settings)",
                    seconds_text(s),
                    seconds_text(s * 1e6)
                )
            } else {
                format!(" ({who} cut it off as soon)")
            };
            let warning = format!(
                "{}: timeout {read} is too short for a command to start and answer, so the hook times out at nearly every fire{meant}",
                converted.source,
            );
            converted.notes.push(warning.clone());
            self.warnings.push(warning);
        }
    }

    /// The group's matcher, carried over as hookd reads matchers, or said in a comment where it cannot be.
    fn matcher(&self, matcher: Option<&str>, converted: &mut Converted) {
        let Some(matcher) = matcher.filter(|m| !matches!(m.trim(), "" | "*")) else {
            return;
        };
        let moment = converted.moment.as_str();
        let agent = agent_title(self.agent);
        match moment::known(moment) {
            None => {
                converted.notes.push(format!(
                    "matcher {matcher:?} left out: hookd takes no matcher on {moment}, so this hook now runs on every {moment}"
                ));
                return;
            }
            Some(m) if m.matcher_field.is_none() => {
                converted.notes.push(format!(
                    "matcher {matcher:?} left out: {moment} has nothing to match ({agent} ignored it too)"
                ));
                return;
            }
            Some(_) => {}
        }
        let mut kept = matcher.to_string();
        let tool_moment = is_tool_moment(moment);
        if !self.agent.row().tools.is_empty() && tool_moment && is_name_list(matcher) {
            kept = self.own_tool_names(matcher, converted);
        }
        if tool_moment && is_name_list(&kept) {
            kept = self.patch_aliases(kept, converted);
        }
        match Matcher::parse(&kept) {
            Ok(_) => converted.matcher = Some(kept),
            Err(e) => {
                let detail = e.to_string();
                let detail = detail.lines().last().unwrap_or_default().trim();
                converted.enabled = false;
                converted.notes.push(format!(
                    "disabled: its matcher {matcher:?} is not a regex hookd can read ({detail}); fix it and add it back"
                ));
            }
        }
    }

    /// A list of the agent's own tool names (Gemini CLI's), in Claude Code's names, which every agent's
    /// hooks see (docs/agents.md, tool names).
    fn own_tool_names(&self, matcher: &str, converted: &mut Converted) -> String {
        let names: Vec<&str> = matcher
            .split(['|', ','])
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        let mapped: Vec<&str> = names
            .iter()
            .map(|n| self.agent.claude_tool_name(n).unwrap_or(n))
            .collect();
        let kept = mapped.join("|");
        if kept != matcher {
            converted.notes.push(format!(
                "matcher was {matcher:?} ({}'s tool names); hookd's hooks see Claude Code's names for them",
                self.agent.display_name()
            ));
        }
        let unknown: Vec<String> = names
            .iter()
            .filter(|n| self.agent.claude_tool_name(n).is_none())
            .map(|n| format!("{n:?}"))
            .collect();
        if !unknown.is_empty() {
            converted.notes.push(format!(
                "{} read {} as a pattern (any tool name containing it); hookd matches a plain name exactly",
                self.agent.display_name(),
                unknown.join(", ")
            ));
        }
        kept
    }

    /// For an agent with a patch tool (Codex's `apply_patch`), whose own matcher reads `Edit` and `Write`
    /// as aliases of it: hookd sees a patch as `Write` when it only adds files and `Edit` otherwise
    /// (docs/agents.md, how the input is read), so a hook written for one of them would miss the other
    /// kind of patch. The tool's own name is added to a matcher naming one of them, which hookd's
    /// matcher tests in `agent_tool_name`.
    fn patch_aliases(&self, kept: String, converted: &mut Converted) -> String {
        let Some(patch_tool) = self.agent.row().patch_tool else {
            return kept;
        };
        let names: Vec<&str> = kept
            .split(['|', ','])
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        // With both names, every patch is matched already.
        let alias = names.contains(&"Edit") != names.contains(&"Write");
        if !alias || names.contains(&patch_tool) {
            return kept;
        }
        converted.notes.push(format!(
            "matcher was {kept:?}: {} reads Edit and Write as its {patch_tool}, which hookd sees as Edit or Write by what the patch does; {patch_tool} added so that every patch is matched",
            self.agent.display_name()
        ));
        format!("{}|{patch_tool}", names.join("|"))
    }

    /// The hookd TOML, hooks in the order of a turn (as `check` lists them), each with its comments, and
    /// the warnings for stderr.
    fn render(mut self, label: &str, guessed: Option<String>) -> Imported {
        let agent = self.agent.name();
        let mut out = String::new();
        let comment = |out: &mut String, text: &str| {
            out.push_str("# ");
            out.push_str(&comment_text(text));
            out.push('\n');
        };
        comment(
            &mut out,
            &format!("imported from {label} ({agent}) by hookd import"),
        );
        if let Some(why) = guessed {
            comment(
                &mut out,
                &format!("{agent} guessed {why}; pass --agent to say otherwise"),
            );
        }
        comment(
            &mut out,
            &format!(
                "These hooks now run for every agent that relays to hookd; add agents = [\"{agent}\"] to a hook to keep it to {agent}."
            ),
        );
        for line in timeout_note(self.agent) {
            comment(&mut out, &line);
        }
        for note in &self.notes {
            comment(&mut out, &format!("note: {note}"));
        }
        for skipped in &self.skipped {
            comment(&mut out, &format!("not converted: {skipped}"));
        }
        let mut warnings = std::mem::take(&mut self.warnings);
        if self.hooks.is_empty() {
            comment(&mut out, "no command hooks to convert");
            return Imported {
                toml: out,
                warnings,
            };
        }
        // A stable sort: hooks of one moment stay in the file's order.
        self.hooks.sort_by_key(|h| moment::order(&h.moment));
        // Each moment's hooks told once, on stderr, when no relay sends it.
        let mut unsent: Vec<&str> = Vec::new();
        for hook in &mut self.hooks {
            if let Some(note) = not_relayed(self.agent, &hook.moment) {
                if !unsent.contains(&hook.moment.as_str()) {
                    unsent.push(&hook.moment);
                    warnings.push(format!("{}: {note}", hook.moment));
                }
                hook.notes.push(note);
            } else if let Some(note) = not_fired_by(self.agent, &hook.moment) {
                hook.notes.push(note);
            }
        }
        // Names are `AGENT-MOMENT-N`, N counting per moment: unique, since N holds no `-` and so
        // always splits off the same way.
        let mut per_moment: Vec<(&str, usize)> = Vec::new();
        for hook in &self.hooks {
            let n = match per_moment.iter_mut().find(|(m, _)| *m == hook.moment) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    per_moment.push((&hook.moment, 1));
                    1
                }
            };
            let name = format!("{agent}-{}-{n}", hook.moment);
            out.push('\n');
            comment(&mut out, &format!("from {}", hook.source));
            for note in &hook.notes {
                comment(&mut out, note);
            }
            let declare = moment::known(&hook.moment).is_none();
            if declare {
                comment(
                    &mut out,
                    &format!(
                        "{} is no moment hookd knows: declare_moment = true declares it (as moments = [...] at the top of a file would)",
                        hook.moment
                    ),
                );
            }
            out.push_str(&format!("[[hooks.{}]]\n", hook.moment));
            out.push_str(&format!("name = {}\n", toml_string(&name)));
            if declare {
                out.push_str("declare_moment = true\n");
            }
            if let Some(matcher) = &hook.matcher {
                out.push_str(&format!("matcher = {}\n", toml_string(matcher)));
            }
            if let Some(condition) = &hook.condition {
                out.push_str(&format!("if = {}\n", toml_string(condition)));
            }
            if hook.background {
                out.push_str("background = true\n");
            }
            out.push_str(&format!("command = {}\n", toml_string(&hook.command)));
            if let Some(timeout) = hook.timeout {
                out.push_str(&format!("timeout = {}\n", seconds_text(timeout)));
            }
            if !hook.enabled {
                out.push_str("enabled = false\n");
            }
        }
        Imported {
            toml: out,
            warnings,
        }
    }
}

/// For a hook on a moment that no agent's relay sends to hookd, why it will not run as it did: no
/// agent's `--print-settings` routes that event to hookd (hookd does not know the moment, so no relay
/// fires it), so it runs only for a client that fires the moment itself.
fn not_relayed(agent: Agent, moment: &str) -> Option<String> {
    if Agent::ALL.iter().any(|a| a.fires(moment)) {
        return None;
    }
    Some(format!(
        "no relay sends {moment} to hookd: {} fires it, but `hookd relay --print-settings {}` routes no {moment} to hookd, so this hook runs only for a client that fires {moment} itself (hookd fire {moment}); keep it in {}'s own settings to have it run there",
        agent.display_name(),
        agent.name(),
        agent.display_name()
    ))
}

/// For a hook on a moment hookd knows that the file's agent never fires (the agent never ran it), which
/// agents it now runs for.
fn not_fired_by(agent: Agent, moment: &str) -> Option<String> {
    if agent.fires(moment) {
        return None;
    }
    let by: Vec<&str> = Agent::ALL
        .iter()
        .filter(|a| a.fires(moment))
        .map(|a| a.display_name())
        .collect();
    Some(format!(
        "{} never fires {moment}, so it never ran this hook; hookd runs it when {} does",
        agent.display_name(),
        by.join(" or ")
    ))
}

/// What becomes of a hook's timeout, for the header: the agent's own is kept (in seconds) where the file
/// gave one; where it gave none, hookd's default applies rather than the agent's, which is said with why.
fn timeout_note(agent: Agent) -> [String; 2] {
    let kept =
        "A hook's timeout is kept (converted to seconds) where the file gave one.".to_string();
    let hookd = format!(
        "A hook without one gets hookd's default, {} s unless [defaults] says otherwise",
        crate::limits::DEFAULT_HOOK_TIMEOUT.as_secs()
    );
    let name = agent.display_name();
    let relay_waits = crate::limits::RELAY_TIMEOUT_SECS;
    let default = match agent.row().settings.default_timeout_s {
        secs if secs as f64 > relay_waits => format!(
            "{hookd}, not {name}'s own default of {secs} s: that is longer than hookd relay waits for a verdict ({relay_waits} s), so such a hook would be cut off there."
        ),
        secs => format!("{hookd} ({name}'s own default is {secs} s)."),
    };
    [kept, default]
}

/// Whether a command line runs `hookd relay` (any path to a binary named hookd).
fn runs_hookd_relay(command: &str) -> bool {
    let words: Vec<&str> = command
        .split_whitespace()
        .map(|w| w.trim_matches(['\'', '"']))
        .collect();
    words
        .iter()
        .any(|word| crate::agents::snippet::is_relay_program(word))
        || words.windows(2).any(|pair| {
            Path::new(pair[0]).file_name().is_some_and(|n| n == "hookd") && pair[1] == "relay"
        })
}

/// The moments whose matcher tests the tool name, where an agent's own tool names (Gemini CLI's) differ
/// from Claude Code's.
fn is_tool_moment(moment: &str) -> bool {
    moment::known(moment).and_then(|m| m.matcher_field) == Some("tool_name")
}

/// A matcher made of plain names (docs/settings.md, matchers), which hookd reads as exact names, not as a regex.
fn is_name_list(matcher: &str) -> bool {
    matcher
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | ',' | '|'))
}

fn agent_title(agent: Agent) -> &'static str {
    agent.display_name()
}

/// "a string", "an array", ... for messages about a value of the wrong kind.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value as compact JSON, cut short for a comment.
fn short(value: &Value) -> String {
    const MAX_CHARS: usize = 80;
    let text = value.to_string();
    if text.chars().count() <= MAX_CHARS {
        text
    } else {
        let cut: String = text.chars().take(MAX_CHARS).collect();
        format!("{cut}...")
    }
}

/// Text safe on one comment line: TOML allows no control character but tab in a comment, and a newline
/// would end it.
fn comment_text(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A message on one line, for an error `main` prints as one.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A TOML string value, written by the toml crate so that every character is escaped as TOML wants.
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// Seconds as a person reads them: `0.01`, not `0.009999999999999998`.
fn seconds_text(value: f64) -> String {
    seconds((value * 1e9).round() / 1e9)
}

/// Seconds as TOML: a whole number when it is one (`30`), else a float (`1.5`).
fn seconds(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{}", value as u64)
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{Program, Settings};

    /// Converts, then checks the output as `hookd check` would; returns the text and the settings.
    fn import(text: &str, label: &str, agent: Option<Agent>) -> (String, Settings) {
        let out = convert(text, label, agent)
            .unwrap_or_else(|e| panic!("{e}"))
            .toml;
        let settings = Settings::parse(Path::new("/tmp/hooks.toml"), "hooks.toml", &out)
            .unwrap_or_else(|e| panic!("the output does not pass check:\n{e}\n---\n{out}"));
        (out, settings)
    }

    fn command(settings: &Settings, moment: &str, i: usize) -> String {
        match &settings.hooks_for(moment)[i].program {
            Program::Shell { command, .. } => command.clone(),
            other => panic!("not a shell command: {other:?}"),
        }
    }

    const CLAUDE: &str = r#"{
      "permissions": {"allow": ["Bash"]},
      "hooks": {
        "PreToolUse": [
          {"matcher": "Bash", "hooks": [
            {"type": "command", "command": "~/.claude/deny-rm.sh", "timeout": 30},
            {"type": "prompt", "prompt": "Is this safe? $ARGUMENTS"}
          ]},
          {"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "echo \"mcp\" \\ 'x'"}]}
        ],
        "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "cargo fmt", "timeout": 0.5}]}],
        "Stop": [{"matcher": "*", "hooks": [{"type": "command", "command": "./stop.sh"}]}],
        "UserPromptSubmit": [{"matcher": "x", "hooks": [{"type": "command", "command": "git status"}]}],
        "WorktreeCreate": [{"matcher": "*.rs", "hooks": [{"type": "command", "command": "make"}]}]
      }
    }"#;

    #[test]
    fn a_codex_edit_or_write_matcher_keeps_matching_every_patch() {
        let text = r#"{"hooks": {
            "PreToolUse": [
                {"matcher": "Edit", "hooks": [{"type": "command", "command": "a"}]},
                {"matcher": "apply_patch|Write", "hooks": [{"type": "command", "command": "b"}]},
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "c"}]},
                {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "d"}]}
            ]
        }}"#;
        let (out, settings) = import(text, "/home/me/.codex/hooks.json", Some(Agent::Codex));
        let pre = settings.hooks_for("PreToolUse");
        assert_eq!(pre[0].matcher_source.as_deref(), Some("Edit|apply_patch"));
        assert_eq!(pre[1].matcher_source.as_deref(), Some("apply_patch|Write"));
        assert_eq!(pre[2].matcher_source.as_deref(), Some("Bash"));
        assert_eq!(pre[3].matcher_source.as_deref(), Some("Write|Edit"));
        assert!(out.contains("apply_patch added"), "{out}");
        // Claude Code's Edit is its own tool: left as it is.
        let (_, settings) = import(
            text,
            "/home/me/.claude/settings.json",
            Some(Agent::ClaudeCode),
        );
        assert_eq!(
            settings.hooks_for("PreToolUse")[0]
                .matcher_source
                .as_deref(),
            Some("Edit")
        );
    }

    #[test]
    fn claude_code_hooks_become_hookd_hooks() {
        let (out, settings) = import(CLAUDE, "/home/me/.claude/settings.json", None);
        assert!(
            out.starts_with(
                "# imported from /home/me/.claude/settings.json (claude-code) by hookd import\n"
            ),
            "{out}"
        );
        let pre = settings.hooks_for("PreToolUse");
        assert_eq!(pre.len(), 2);
        assert_eq!(pre[0].name, "claude-code-PreToolUse-1");
        assert_eq!(pre[0].matcher_source.as_deref(), Some("Bash"));
        assert_eq!(pre[0].timeout, std::time::Duration::from_secs(30));
        assert_eq!(command(&settings, "PreToolUse", 0), "~/.claude/deny-rm.sh");
        assert_eq!(pre[1].matcher_source.as_deref(), Some("mcp__.*"));
        assert_eq!(command(&settings, "PreToolUse", 1), "echo \"mcp\" \\ 'x'");
        let post = settings.hooks_for("PostToolUse");
        assert_eq!(post[0].matcher_source.as_deref(), Some("Edit|Write"));
        assert_eq!(post[0].timeout, std::time::Duration::from_millis(500));
        assert_eq!(settings.hooks_for("Stop")[0].matcher_source, None);
        assert!(
            out.contains(
                "# not converted: hooks.PreToolUse[0].hooks[1] (type \"prompt\"): hookd runs commands only\n"
            ),
            "{out}"
        );
        assert!(
            out.contains("matcher \"x\" left out: UserPromptSubmit has nothing to match"),
            "{out}"
        );
        assert_eq!(settings.extra_moments, vec!["WorktreeCreate"]);
        assert_eq!(settings.hooks_for("WorktreeCreate")[0].matcher_source, None);
        assert!(
            out.contains("matcher \"*.rs\" left out: hookd takes no matcher on WorktreeCreate"),
            "{out}"
        );
        // Declared where the hook is, not by a top-level key that would land in a table.
        assert!(!out.contains("\nmoments = "), "{out}");
        assert!(
            out.contains("[[hooks.WorktreeCreate]]\nname = \"claude-code-WorktreeCreate-1\"\ndeclare_moment = true\n"),
            "{out}"
        );
        // No relay sends WorktreeCreate: said above the hook and on stderr, once.
        let warnings = convert(CLAUDE, "settings.json", None).unwrap().warnings;
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("WorktreeCreate: no relay sends WorktreeCreate to hookd"),
            "{warnings:?}"
        );
        assert!(
            out.contains("# no relay sends WorktreeCreate to hookd: Claude Code fires it, but"),
            "{out}"
        );
        // Claude Code's own default timeout (600 s) is not kept, and the header says why.
        assert!(
            out.contains(
                "not Claude Code's own default of 600 s: that is longer than hookd relay waits"
            ),
            "{out}"
        );
    }

    #[test]
    fn a_moment_the_agent_never_fires_says_who_does() {
        let text =
            r#"{"hooks": {"PreModelRequest": [{"hooks": [{"type": "command", "command": "x"}]}]}}"#;
        let (out, settings) = import(text, "settings.json", Some(Agent::ClaudeCode));
        assert_eq!(settings.hooks_for("PreModelRequest").len(), 1);
        assert!(
            out.contains("# Claude Code never fires PreModelRequest, so it never ran this hook; hookd runs it when Codex does"),
            "{out}"
        );
        assert!(
            convert(text, "s.json", Some(Agent::ClaudeCode))
                .unwrap()
                .warnings
                .is_empty()
        );
    }

    #[test]
    fn gemini_names_and_milliseconds_become_hookd_ones() {
        let text = r#"{"hooksConfig": {"disabled": ["quiet"]}, "hooks": {
          "BeforeTool": [
            {"matcher": "run_shell_command", "hooks": [{"name": "guard", "type": "command", "command": "g.sh \"$GEMINI_PROJECT_DIR\"", "timeout": 5000}]},
            {"matcher": "write_file|replace|my_tool", "hooks": [{"name": "quiet", "type": "command", "command": "q.sh", "timeout": 1500}]},
            {"matcher": "write_.*", "hooks": [{"type": "command", "command": "w.sh"}]}
          ],
          "AfterAgent": [{"hooks": [{"type": "command", "command": "after.sh"}]}],
          "BeforeModel": [{"hooks": [{"type": "command", "command": "model.sh"}]}],
          "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "/usr/bin/hookd relay --agent gemini-cli"}]}]
        }}"#;
        let (out, settings) = import(text, "settings.json", None);
        assert!(out.contains("(gemini-cli) by hookd import"), "{out}");
        assert!(
            out.contains("# gemini-cli guessed from its Gemini CLI event BeforeTool; pass --agent"),
            "{out}"
        );
        let pre = settings.hooks_for("PreToolUse");
        assert_eq!(pre[0].name, "gemini-cli-PreToolUse-1");
        assert_eq!(pre[0].matcher_source.as_deref(), Some("Bash"));
        assert_eq!(pre[0].timeout, std::time::Duration::from_secs(5));
        assert!(
            out.contains("matcher was \"run_shell_command\" (Gemini CLI's tool names)"),
            "{out}"
        );
        assert_eq!(pre[1].matcher_source.as_deref(), Some("Write|Edit|my_tool"));
        assert_eq!(pre[1].timeout, std::time::Duration::from_millis(1500));
        assert!(!pre[1].enabled, "disabled in Gemini stays disabled");
        assert!(
            out.contains("Gemini CLI read \"my_tool\" as a pattern"),
            "{out}"
        );
        assert!(
            out.contains("hookd does not set $GEMINI_PROJECT_DIR"),
            "{out}"
        );
        assert_eq!(pre[2].matcher_source.as_deref(), Some("write_.*"));
        assert_eq!(settings.hooks_for("Stop").len(), 1);
        assert_eq!(settings.extra_moments, vec!["BeforeModel"]);
        assert!(settings.hooks_for("SessionStart").is_empty());
        assert!(
            out.contains(
                "# not converted: hooks.SessionStart[0].hooks[0] runs `hookd relay` already"
            ),
            "{out}"
        );
    }

    /// Gemini CLI counts a hook's timeout in milliseconds: `10`, written as if in seconds, is 10 ms. It
    /// is kept as Gemini read it, with what was read and how said above the hook, and a warning on
    /// stderr saying what to write if seconds were meant; a timeout of 5000 is said, not warned of.
    #[test]
    fn a_gemini_timeout_too_short_to_run_is_said_not_silently_kept() {
        let text = r#"{"hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [
            {"type": "command", "command": "guard.sh", "timeout": 10},
            {"type": "command", "command": "slow.sh", "timeout": 5000}
        ]}]}}"#;
        let imported = convert(text, "/p/.gemini/settings.json", None).unwrap();
        let (out, settings) = import(text, "/p/.gemini/settings.json", None);
        let pre = settings.hooks_for("PreToolUse");
        assert_eq!(pre[0].timeout, std::time::Duration::from_millis(10));
        assert_eq!(pre[1].timeout, std::time::Duration::from_secs(5));
        assert!(out.contains("timeout = 0.01\n"), "{out}");
        assert!(
            out.contains("# timeout 10 read as Gemini CLI reads it, in milliseconds: timeout = 0.01 (seconds)\n"),
            "{out}"
        );
        assert!(
            out.contains("# timeout 5000 read as Gemini CLI reads it, in milliseconds: timeout = 5 (seconds)\n"),
            "{out}"
        );
        assert_eq!(
            imported.warnings,
            [
                "hooks.BeforeTool[0].hooks[0]: timeout 10 is too short for a command to start and answer, so the hook times out at nearly every fire (10 ms: Gemini CLI cut it off as soon); kept as timeout = 0.01: if 10 seconds were meant, write timeout = 10 here (and \"timeout\": 10000 in Gemini CLI's settings)"
            ]
        );
        // And check says so of the imported hook.
        let warned = crate::agents::settings_warnings(&settings);
        assert!(
            warned
                .iter()
                .any(|w| w.starts_with("hook \"gemini-cli-PreToolUse-1\" has a timeout of 0.01s")),
            "{warned:?}"
        );
    }

    #[test]
    fn qwen_code_hooks_keep_their_moments_and_get_claude_tool_names() {
        let text = r#"{"security": {"auth": {"selectedType": "openai"}}, "hooks": {
          "disabled": ["x"],
          "PreToolUse": [{"matcher": "run_shell_command|edit", "hooks": [{"type": "command", "command": "guard.sh \"$QWEN_PROJECT_DIR\"", "timeout": 30}]}],
          "Stop": [{"hooks": [{"type": "command", "command": "stop.sh"}]}],
          "SessionDelete": [{"hooks": [{"type": "command", "command": "gone.sh"}]}]
        }}"#;
        let (out, settings) = import(text, "/home/me/.qwen/settings.json", None);
        assert!(
            out.starts_with(
                "# imported from /home/me/.qwen/settings.json (qwen-code) by hookd import\n"
            ),
            "{out}"
        );
        let pre = settings.hooks_for("PreToolUse");
        assert_eq!(pre[0].name, "qwen-code-PreToolUse-1");
        assert_eq!(pre[0].matcher_source.as_deref(), Some("Bash|Edit"));
        assert_eq!(pre[0].timeout, std::time::Duration::from_secs(30));
        assert!(out.contains("(Qwen Code's tool names)"), "{out}");
        assert!(
            out.contains("hookd does not set $QWEN_PROJECT_DIR"),
            "{out}"
        );
        assert!(
            out.contains("hooks.disabled is a Qwen Code setting, not an event"),
            "{out}"
        );
        assert_eq!(settings.hooks_for("Stop").len(), 1);
        assert_eq!(settings.extra_moments, vec!["SessionDelete"]);
        // Its own event names tell a Qwen Code file from Claude Code's wherever it is.
        let (out, _) = import(text, "settings.json", None);
        assert!(
            out.contains("qwen-code guessed from its Qwen Code event SessionDelete"),
            "{out}"
        );
    }

    #[test]
    fn the_agent_is_guessed_from_the_file() {
        let claude =
            r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "x"}]}]}}"#;
        let agent_of = |text: &str, label: &str| {
            let out = convert(text, label, None).unwrap().toml;
            out.lines().next().unwrap().to_string()
        };
        assert!(
            agent_of(claude, "/home/me/.codex/hooks.json").ends_with("(codex) by hookd import")
        );
        assert!(agent_of(claude, "hooks.json").ends_with("(codex) by hookd import"));
        assert!(agent_of(claude, "/p/.codex/other.json").ends_with("(codex) by hookd import"));
        assert!(
            agent_of(claude, "/p/.claude/settings.json").ends_with("(claude-code) by hookd import")
        );
        assert!(
            agent_of(claude, "/p/.gemini/settings.json").ends_with("(gemini-cli) by hookd import")
        );
        let gemini = r#"{"hooks": {"AfterTool": []}}"#;
        assert!(
            agent_of(gemini, "/p/.claude/settings.json").ends_with("(gemini-cli) by hookd import")
        );
        let given = convert(claude, "hooks.json", Some(Agent::ClaudeCode))
            .unwrap()
            .toml;
        assert!(given.starts_with("# imported from hooks.json (claude-code) by hookd import\n"));
        assert!(!given.contains("guessed"));
    }

    #[test]
    fn codex_config_toml_is_read_too_and_its_trust_records_skipped() {
        let toml = "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"guard.sh\"\ntimeout = 9\n[hooks.state.\"/x/config.toml:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:00\"\n";
        let (out, settings) = import(toml, "/home/me/.codex/config.toml", None);
        assert!(out.contains("(codex) by hookd import"), "{out}");
        assert_eq!(
            settings.hooks_for("PreToolUse")[0].timeout,
            std::time::Duration::from_secs(9)
        );
        assert!(
            out.contains("note: hooks.state is a Codex setting, not an event"),
            "{out}"
        );
        // A config.toml without hooks is told in TOML's terms, and pointed at hooks.json.
        let err = convert(
            "model = \"o3\"\n[features]\ncodex_hooks = true\n",
            "/home/me/.codex/config.toml",
            None,
        )
        .unwrap_err();
        assert!(
            err.starts_with("/home/me/.codex/config.toml: no [hooks] table, so no hooks to import: Codex's hooks are [[hooks.EVENT]] tables"),
            "{err}"
        );
        assert!(err.contains("hooks.json") && !err.contains('{'), "{err}");
        let err = convert("[[hooks.x]\n", "config.toml", None).unwrap_err();
        assert!(err.starts_with("config.toml:1:"), "{err}");
        assert!(err.contains("not TOML"), "{err}");
    }

    #[test]
    fn what_cannot_be_converted_is_named() {
        let text = r#"{"disableAllHooks": true, "hooks": {
          "PreToolUse": [
            "oops",
            {"matcher": 3, "hooks": []},
            {"hooks": [7, {"command": "x"}, {"type": "command"}, {"type": "command", "command": "  "},
                       {"type": "http", "url": "http://x"}, {"type": "command", "command": "ok.sh", "timeout": -1, "async": true, "once": true}]},
            {"matcher": "Bash(", "hooks": [{"type": "command", "command": "bad-regex.sh"}]},
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "cond.sh", "if": "Bash(git *"}]}
          ],
          "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "log.sh", "if": "Bash(git *)", "async": true}]}],
          "Stop": {"not": "a list"},
          "weird event": [{"hooks": [{"type": "command", "command": "x"}]}]
        }}"#;
        let (out, settings) = import(text, "settings.json", Some(Agent::ClaudeCode));
        for expected in [
            "# not converted: hooks.PreToolUse[0] is a string, not a matcher group",
            "# not converted: hooks.PreToolUse[1]: its matcher is a number, not a string",
            "# not converted: hooks.PreToolUse[2].hooks[0] is a number, not a hook",
            "# not converted: hooks.PreToolUse[2].hooks[1] has no type",
            "# not converted: hooks.PreToolUse[2].hooks[2] has no command",
            "# not converted: hooks.PreToolUse[2].hooks[3]: its command is empty",
            "# not converted: hooks.PreToolUse[2].hooks[4] (type \"http\"): hookd runs commands only",
            "# not converted: hooks.Stop is an object, not a list of matcher groups",
            "# not converted: hooks[\"weird event\"]: not an event name hookd can take",
            "# note: the file sets disableAllHooks",
            "# timeout -1 left out",
            "ran it in the background (async)",
            "# not kept: \"once\" = true",
            "is not a regex hookd can read",
            "ran it only if \"Bash(git *\"",
            "matcher = \"Bash\"\nif = \"Bash(git *)\"\nbackground = true\ncommand = \"log.sh\"\n",
        ] {
            assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
        }
        let post = &settings.hooks_for("PostToolUse")[0];
        assert_eq!(post.condition.as_ref().unwrap().source, "Bash(git *)");
        assert!(post.background);
        let pre = settings.hooks_for("PreToolUse");
        assert_eq!(pre.len(), 3);
        assert!(
            pre.iter().all(|h| !h.enabled),
            "disableAllHooks keeps them off"
        );
        assert_eq!(
            pre[1].matcher_source, None,
            "an unreadable regex is not kept"
        );
    }

    #[test]
    fn errors_are_one_clear_line() {
        let err = convert("{\n  \"hooks\": [1,,]\n}", "s.json", None).unwrap_err();
        assert_eq!(err, "s.json:2:15: not JSON: expected value");
        let err = convert("", "s.json", None).unwrap_err();
        assert!(
            err.starts_with("s.json:1:0: not JSON: EOF while parsing"),
            "{err}"
        );
        let err = convert("{\"model\": \"x\"}", "s.json", None).unwrap_err();
        assert!(err.starts_with("s.json: no \"hooks\" object"), "{err}");
        let err = convert(
            "{\"PreToolUse\": [{\"hooks\": []}], \"x\": 1}",
            "hooks.json",
            None,
        )
        .unwrap_err();
        assert_eq!(
            err,
            "hooks.json: no \"hooks\" object: the file's top level holds PreToolUse, which agents read only inside one ({\"hooks\": {\"PreToolUse\": [...]}}); move them there to import them"
        );
        let err = convert("[1]", "s.json", None).unwrap_err();
        assert!(err.starts_with("s.json: no \"hooks\" object"), "{err}");
        let err = convert("{\"hooks\": []}", "s.json", None).unwrap_err();
        assert_eq!(
            err,
            "s.json: \"hooks\" is an array, not an object of events"
        );
        for err in [
            convert("nope", "s.json", None).unwrap_err(),
            convert("{\"hooks\": 1}", "a\nb.json", None).unwrap_err(),
        ] {
            assert_eq!(
                err.lines().count(),
                1 + usize::from(err.contains("a\nb")),
                "{err}"
            );
        }
    }

    #[test]
    fn an_empty_file_says_so_and_still_passes_check() {
        let (out, settings) = import("{\"hooks\": {}}", "s.json", Some(Agent::ClaudeCode));
        assert!(out.contains("# no command hooks to convert\n"), "{out}");
        assert!(settings.hooks.is_empty());
    }

    #[test]
    fn odd_text_is_quoted_for_toml_and_kept_out_of_comments() {
        let text = "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"printf '%s\\\\n' \\\"a\\\\\\\"b\\\"\\nline2\\u007f\\ttab\", \"weird\": \"x\\ny\"}]}]}}";
        let (out, settings) = import(text, "dir\nwith newline/s.json", Some(Agent::ClaudeCode));
        let original: Value = serde_json::from_str(text).unwrap();
        let expected = original["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap();
        assert_eq!(command(&settings, "PreToolUse", 0), expected);
        assert!(
            out.starts_with("# imported from dir\\nwith newline/s.json"),
            "{out}"
        );
    }

    #[test]
    fn names_stay_unique_and_timeouts_are_written_as_seconds() {
        assert_eq!(seconds(30.0), "30");
        assert_eq!(seconds(1.5), "1.5");
        assert_eq!(seconds(0.001), "0.001");
        assert!(runs_hookd_relay("/usr/local/bin/hookd relay --agent codex"));
        assert!(runs_hookd_relay("/usr/local/bin/hookd-relay --agent codex"));
        assert!(runs_hookd_relay("'/opt/my tools/hookd' relay"));
        assert!(runs_hookd_relay("hookd relay"));
        assert!(!runs_hookd_relay("hookd check"));
        assert!(!runs_hookd_relay("echo relay"));
        let text = r#"{"hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "a"}]}],
                                   "PreToolUse": [{"hooks": [{"type": "command", "command": "b"}, {"type": "command", "command": "c"}]}]}}"#;
        let (_, settings) = import(text, "s.json", Some(Agent::GeminiCli));
        let names: Vec<&str> = settings
            .hooks_for("PreToolUse")
            .iter()
            .map(|h| h.name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "gemini-cli-PreToolUse-1",
                "gemini-cli-PreToolUse-2",
                "gemini-cli-PreToolUse-3"
            ]
        );
    }
}
