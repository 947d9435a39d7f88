//! From TOML text to validated settings, collecting every error with its place in the file.
//!
//! The file is parsed into toml's spanned tree rather than deserialized with serde, so that one pass can
//! report every problem (not only the first) with its line and column, and suggest what was meant.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::settings::condition::Condition;
use crate::settings::error::{ConfigErrors, LineIndex};
use crate::settings::export::Export;
use crate::settings::layer::{Layer, Policy, ProjectHooks};
use crate::settings::matcher::Matcher;
use crate::settings::model::{Defaults, Hook, Http, OnFailure, Program, Protect, Record};

mod export;
mod walker;

use crate::limits::{MAX_HOOK_TIMEOUT_SECS, MAX_WORKERS, MIN_HOOK_TIMEOUT_SECS};
use crate::tables::moment;
use walker::{Value, Walker, value_text};

const TOP_LEVEL_KEYS: &[&str] = &[
    "defaults",
    "hooks",
    "moments",
    "sequential",
    "http",
    "record",
    "protect",
    "export",
];
/// What a repository's `.hookd/hooks.toml` may hold: hooks, and the moments they need, nothing else.
const PROJECT_KEYS: &[&str] = &["hooks", "moments", "sequential"];
const HTTP_KEYS: &[&str] = &["listen", "allow_non_loopback"];
const RECORD_KEYS: &[&str] = &["enabled", "file_size_mib", "files", "full_inputs"];
/// Hook names hookd keeps for itself, so that a record naming one was hookd's own doing.
pub const RESERVED_NAME_PREFIX: &str = "hookd:";
const PROTECT_KEYS: &[&str] = &["enabled", "paths", "live_hooks_allow"];
const DEFAULTS_KEYS: &[&str] = &[
    "timeout",
    "on_failure",
    "shell",
    "max_processes",
    "stop_refusal_cap",
];

const HOOK_KEYS: &[&str] = &[
    "name",
    "matcher",
    "if",
    "command",
    "argv",
    "worker",
    "workers",
    "timeout",
    "on_failure",
    "agents",
    "env",
    "enabled",
    "background",
    "declare_moment",
    "builtin",
    "rules",
];

/// What [`parse`] hands back to the settings model.
pub(super) struct Parsed {
    pub defaults: Defaults,
    pub extra_moments: Vec<String>,
    pub sequential: Vec<String>,
    pub hooks: Vec<(String, Vec<Arc<Hook>>)>,
    pub http: Http,
    pub record: Record,
    pub protect: Protect,
    pub export: Export,
    /// What only the managed layer may set (its defaults elsewhere).
    pub policy: Policy,
    /// The top-level keys the file gives, for the managed layer's tables to hold over the user's.
    pub given: Vec<String>,
}

pub(super) fn parse(label: &str, text: &str, layer: Layer) -> Result<Parsed, ConfigErrors> {
    let mut walker = Walker {
        label,
        text,
        lines: LineIndex::new(text),
        errors: Vec::new(),
        layer,
    };
    let (root, syntax_errors) = DeTable::parse_recoverable(text);
    if !syntax_errors.is_empty() {
        // The tree after a syntax error is a guess: report only what the parser saw.
        for error in syntax_errors {
            let offset = error.span().map_or(0, |span| span.start);
            walker.error_at(offset, error.message().trim().to_string());
        }
        return Err(walker.finish());
    }
    let root = root.into_inner();
    let mut policy = Policy::default();
    let mut given = Vec::new();
    for (key, value) in root.iter() {
        let name = key.get_ref().as_ref();
        given.push(name.to_string());
        if Policy::KEYS.contains(&name) {
            if layer == Layer::Managed {
                walker.policy(name, value, &mut policy);
            } else {
                walker.error(
                    key.span(),
                    format!(
                        "`{name}` is a team's policy: only the managed layer (/etc/hookd/managed.toml, root's) may set it, not {} (docs/teams.md)",
                        match layer {
                            Layer::Project => "a repository's .hookd/hooks.toml",
                            _ => "the user's settings file",
                        }
                    ),
                );
            }
        } else if !TOP_LEVEL_KEYS.contains(&name) {
            walker.unknown_key(key, "at the top level", TOP_LEVEL_KEYS);
        } else if layer == Layer::Project && !PROJECT_KEYS.contains(&name) {
            walker.error(
                key.span(),
                format!("a repository's .hookd/hooks.toml holds hooks (and `moments`, `sequential`), nothing else: `{name}` belongs in the user's settings file"),
            );
        }
    }
    let mut extra_moments = root
        .get("moments")
        .map(|v| walker.moments(v))
        .unwrap_or_default();
    if let Some(hooks) = root.get("hooks") {
        for name in declared_by_hooks(hooks) {
            if !extra_moments.contains(&name) {
                extra_moments.push(name);
            }
        }
    }
    let sequential = root
        .get("sequential")
        .map(|v| walker.sequential(v, &extra_moments))
        .unwrap_or_default();
    let defaults = root
        .get("defaults")
        .map(|v| walker.defaults(v))
        .unwrap_or_default();
    let hooks = root
        .get("hooks")
        .map(|v| walker.hooks(v, &defaults, &extra_moments))
        .unwrap_or_default();
    let http = root.get("http").map(|v| walker.http(v)).unwrap_or_default();
    let record = root
        .get("record")
        .map(|v| walker.record(v))
        .unwrap_or_default();
    let protect = root
        .get("protect")
        .map(|v| walker.protect(v))
        .unwrap_or_default();
    let export = root
        .get("export")
        .map(|v| walker.export(v))
        .unwrap_or_default();
    if walker.errors.is_empty() {
        Ok(Parsed {
            defaults,
            extra_moments,
            sequential,
            hooks,
            http,
            record,
            protect,
            export,
            policy,
            given,
        })
    } else {
        Err(walker.finish())
    }
}

impl Walker<'_> {
    /// One of the managed layer's policy keys.
    fn policy(&mut self, name: &str, value: &Value<'_>, policy: &mut Policy) {
        match name {
            "allow_managed_hooks_only" => {
                if let Some(on) = self.boolean(value, name) {
                    policy.allow_managed_hooks_only = on;
                }
            }
            "require_fail_closed" => {
                if let Some(on) = self.boolean(value, name) {
                    policy.require_fail_closed = on;
                }
            }
            _ => match value.get_ref().as_str() {
                Some("off") => policy.project_hooks = ProjectHooks::Off,
                Some("trusted") => policy.project_hooks = ProjectHooks::Trusted,
                _ => self.error(
                    value.span(),
                    format!("{name} must be \"off\" or \"trusted\""),
                ),
            },
        }
    }

    fn boolean(&mut self, value: &Value<'_>, field: &str) -> Option<bool> {
        match value.get_ref() {
            DeValue::Boolean(b) => Some(*b),
            _ => {
                self.type_error(value, field, "true or false");
                None
            }
        }
    }
}

impl Walker<'_> {
    /// `moments = ["FileChanged", ...]`: extra moment names for agents newer than the daemon.
    fn moments(&mut self, value: &Value<'_>) -> Vec<String> {
        let Some(names) = self.strings(value, "moments", "a list of moment names") else {
            return Vec::new();
        };
        names
            .into_iter()
            .filter(|name| {
                if moment::known(name).is_some() {
                    self.error(
                        value.span(),
                        format!("\"{name}\" in moments is already a known moment; remove it"),
                    );
                    false
                } else {
                    true
                }
            })
            .collect()
    }

    /// `sequential = ["PreToolUse", ...]`: moments whose hooks run one after another, in the file's
    /// order, each given the tool input (or output) as the hooks before it rewrote it.
    fn sequential(&mut self, value: &Value<'_>, extra_moments: &[String]) -> Vec<String> {
        let Some(names) = self.strings(value, "sequential", "a list of moment names") else {
            return Vec::new();
        };
        // Each error is placed at its name in the list (the list's items, in the same order).
        let spans: Vec<Range<usize>> = value
            .get_ref()
            .as_array()
            .map(|items| items.iter().map(|item| item.span()).collect())
            .unwrap_or_default();
        let mut kept = Vec::with_capacity(names.len());
        for (index, name) in names.into_iter().enumerate() {
            let span = spans.get(index).cloned().unwrap_or_else(|| value.span());
            let declared = extra_moments.contains(&name);
            if moment::known(&name).is_some() || declared {
                if !kept.contains(&name) {
                    kept.push(name);
                }
                continue;
            }
            let message = match moment::agent_name_for(&name) {
                Some((agent, meant)) => format!(
                    "\"{name}\" in sequential is {}'s name for {meant}; write \"{meant}\"",
                    agent.display_name()
                ),
                None => {
                    let names = moment::KNOWN
                        .iter()
                        .map(|m| m.name)
                        .chain(extra_moments.iter().map(String::as_str));
                    let hint = moment::did_you_mean(&name, names)
                        .map_or_else(String::new, |meant| format!(" (did you mean \"{meant}\"?)"));
                    format!(
                        "unknown moment \"{}\" in sequential{hint}",
                        moment::shown(&name)
                    )
                }
            };
            self.error(span, message);
        }
        kept
    }

    fn defaults(&mut self, value: &Value<'_>) -> Defaults {
        let mut defaults = Defaults::default();
        let Some(table) = self.table(value, "defaults") else {
            return defaults;
        };
        for (key, value) in table.iter() {
            match key.get_ref().as_ref() {
                "timeout" => {
                    if let Some(timeout) = self.seconds(value, "defaults.timeout") {
                        defaults.timeout = timeout;
                        defaults.timeout_given = true;
                    }
                }
                "on_failure" => {
                    if let Some(on_failure) = self.on_failure(value, "defaults.on_failure") {
                        defaults.on_failure = on_failure;
                    }
                }
                "shell" => {
                    if let Some(shell) = self.non_empty_string(value, "defaults.shell") {
                        defaults.shell = shell;
                    }
                }
                "max_processes" => {
                    if let Some(n) = self.integer_in(value, "defaults.max_processes", 1, 4096) {
                        defaults.max_processes = n as usize;
                    }
                }
                "stop_refusal_cap" => {
                    if let Some(n) = self.integer_in(value, "defaults.stop_refusal_cap", 0, 1000) {
                        defaults.stop_refusal_cap = n as u32;
                    }
                }
                _ => self.unknown_key(key, "in [defaults]", DEFAULTS_KEYS),
            }
        }
        defaults
    }

    /// `[http]`: the optional HTTP listener for agents' http hooks. Off unless `listen` is given; on a
    /// loopback address unless `allow_non_loopback = true` says otherwise in so many words, since the
    /// endpoint runs the user's hooks for whoever holds the token.
    fn http(&mut self, value: &Value<'_>) -> Http {
        let mut http = Http::default();
        let Some(table) = self.table(value, "http") else {
            return http;
        };
        let mut listen = None;
        for (key, value) in table.iter() {
            match key.get_ref().as_ref() {
                "listen" => {
                    let Some(text) = self.string(value, "http.listen") else {
                        continue;
                    };
                    match text.trim().parse::<std::net::SocketAddr>() {
                        Ok(address) => listen = Some((address, value.span())),
                        Err(_) => self.error(
                            value.span(),
                            format!("http.listen must be an IP address and a port, such as \"127.0.0.1:8787\" or \"[::1]:8787\", not \"{text}\""),
                        ),
                    }
                }
                "allow_non_loopback" => match value.get_ref().as_bool() {
                    Some(b) => http.allow_non_loopback = b,
                    None => self.type_error(value, "http.allow_non_loopback", "true or false"),
                },
                _ => self.unknown_key(key, "in [http]", HTTP_KEYS),
            }
        }
        if let Some((address, span)) = listen {
            if !address.ip().is_loopback() && !http.allow_non_loopback {
                self.error(
                    span,
                    format!("http.listen {address} is not a loopback address: anyone who can reach it could try the token; use 127.0.0.1 or [::1], or write allow_non_loopback = true in [http] if you mean it"),
                );
            } else {
                http.listen = Some(address);
            }
        }
        http
    }

    /// `[record]`: the journal. On by default, with bounds a user never needs to touch.
    fn record(&mut self, value: &Value<'_>) -> Record {
        let mut record = Record::default();
        let Some(table) = self.table(value, "record") else {
            return record;
        };
        for (key, value) in table.iter() {
            match key.get_ref().as_ref() {
                "enabled" => match value.get_ref().as_bool() {
                    Some(b) => record.enabled = b,
                    None => self.type_error(value, "record.enabled", "true or false"),
                },
                "full_inputs" => match value.get_ref().as_bool() {
                    Some(b) => record.full_inputs = b,
                    None => self.type_error(value, "record.full_inputs", "true or false"),
                },
                "file_size_mib" => {
                    if let Some(n) = self.integer_in(value, "record.file_size_mib", 1, 1024) {
                        record.file_size_mib = n as u64;
                    }
                }
                "files" => {
                    if let Some(n) = self.integer_in(value, "record.files", 1, 100) {
                        record.files = n as u32;
                    }
                }
                _ => self.unknown_key(key, "in [record]", RECORD_KEYS),
            }
        }
        record
    }

    /// `[protect]`: hookd's guard of itself, on by default (docs/security.md).
    fn protect(&mut self, value: &Value<'_>) -> Protect {
        let mut protect = Protect::default();
        let Some(table) = self.table(value, "protect") else {
            return protect;
        };
        for (key, value) in table.iter() {
            match key.get_ref().as_ref() {
                "enabled" => match value.get_ref().as_bool() {
                    Some(b) => protect.enabled = b,
                    None => self.type_error(value, "protect.enabled", "true or false"),
                },
                "live_hooks_allow" => match value.get_ref().as_bool() {
                    Some(b) => protect.live_hooks_allow = b,
                    None => self.type_error(value, "protect.live_hooks_allow", "true or false"),
                },
                "paths" => {
                    let expected = "a list of paths";
                    if let Some(paths) = self.strings(value, "protect.paths", expected) {
                        if paths.iter().any(|p| p.trim().is_empty()) {
                            self.error(
                                value.span(),
                                "protect.paths must not hold an empty path".into(),
                            );
                        } else {
                            protect.paths =
                                paths.into_iter().map(std::path::PathBuf::from).collect();
                        }
                    }
                }
                _ => self.unknown_key(key, "in [protect]", PROTECT_KEYS),
            }
        }
        protect
    }

    fn hooks(
        &mut self,
        value: &Value<'_>,
        defaults: &Defaults,
        extra: &[String],
    ) -> Vec<(String, Vec<Arc<Hook>>)> {
        let Some(table) = self.table(value, "hooks") else {
            return Vec::new();
        };
        self.duplicate_names(table);
        let mut all = Vec::new();
        for (key, value) in table.iter() {
            let moment_name = key.get_ref().as_ref();
            if moment::known(moment_name).is_none() && !extra.iter().any(|m| m == moment_name) {
                if let Some(message) = agents_own_name(moment_name) {
                    self.error(key.span(), message);
                    continue;
                }
                let candidates = moment::KNOWN
                    .iter()
                    .map(|m| m.name)
                    .chain(extra.iter().map(String::as_str));
                let hint = match moment::did_you_mean(moment_name, candidates) {
                    Some(meant) => format!("did you mean \"{meant}\"?"),
                    None => format!(
                        "an agent's newer moment must be declared: moments = [\"{moment_name}\"]"
                    ),
                };
                self.error(
                    key.span(),
                    format!("unknown moment \"{moment_name}\" ({hint})"),
                );
                continue;
            }
            let entries = match value.get_ref() {
                DeValue::Array(entries) if entries.iter().all(|e| e.get_ref().is_table()) => {
                    entries
                }
                _ => {
                    self.error(
                        value.span(),
                        format!("hooks.{moment_name} must be a list of tables: write each hook as [[hooks.{moment_name}]]"),
                    );
                    continue;
                }
            };
            let mut hooks = Vec::new();
            for (index, entry) in entries.iter().enumerate() {
                if let Some(hook) = self.hook(entry, moment_name, index, defaults) {
                    hooks.push(Arc::new(hook));
                }
            }
            all.push((moment_name.to_string(), hooks));
        }
        // The order `check` prints and `status` lists: a turn's order, then declared moments as declared.
        all.sort_by_key(|(name, _)| (moment::order(name), extra.iter().position(|m| m == name)));
        all
    }

    /// Hook names must be unique across the file. Checked in the file's order (the tree is sorted by
    /// moment name), so that "first used" points at the first one.
    fn duplicate_names(&mut self, hooks: &DeTable<'_>) {
        let mut named: Vec<(String, Range<usize>)> = Vec::new();
        for (moment_name, entries) in hooks.iter() {
            let Some(entries) = entries.get_ref().as_array() else {
                continue;
            };
            for (index, entry) in entries.iter().enumerate() {
                let Some(table) = entry.get_ref().as_table() else {
                    continue;
                };
                match table.get("name") {
                    Some(name) => {
                        if let Some(text) = name.get_ref().as_str() {
                            named.push((text.to_string(), name.span()));
                        }
                    }
                    None => named.push((
                        format!("{}#{}", moment_name.get_ref(), index + 1),
                        entry.span(),
                    )),
                }
            }
        }
        named.sort_by_key(|(_, span)| span.start);
        let mut first_lines: HashMap<&str, usize> = HashMap::new();
        for (name, span) in &named {
            let line = self.line_of(span.start);
            match first_lines.get(name.as_str()) {
                Some(first) => self.error(
                    span.clone(),
                    format!("duplicate hook name \"{name}\" (first used on line {first})"),
                ),
                None => {
                    first_lines.insert(name, line);
                }
            }
        }
    }

    fn hook(
        &mut self,
        entry: &Value<'_>,
        moment_name: &str,
        index: usize,
        defaults: &Defaults,
    ) -> Option<Hook> {
        let table = entry.get_ref().as_table()?;
        let errors_before = self.errors.len();
        let default_name = format!("{moment_name}#{}", index + 1);
        let name = match table.get("name") {
            Some(value) => match self.non_empty_string(value, "name") {
                Some(name) if name.starts_with(RESERVED_NAME_PREFIX) => {
                    self.error(
                        value.span(),
                        format!("hook name \"{name}\": names beginning \"{RESERVED_NAME_PREFIX}\" are hookd's own (its record names its guard of itself \"hookd:protect\"); choose another"),
                    );
                    name
                }
                Some(name) => name,
                None => default_name,
            },
            None => default_name,
        };
        let what = format!("hook \"{name}\"");

        let mut matcher = Matcher::Any;
        let mut matcher_source = None;
        let mut condition = None;
        let mut command = None;
        let mut argv = None;
        let mut worker = None;
        let mut workers = None;
        let mut builtin = None;
        let mut rules = Vec::new();
        let mut timeout = defaults.timeout;
        let mut timeout_given = defaults.timeout_given;
        let mut on_failure = defaults.on_failure;
        let mut agents = None;
        let mut env = Vec::new();
        let mut enabled = true;
        let mut background = false;
        for (key, value) in table.iter() {
            let field = format!("{what}: {}", key.get_ref());
            match key.get_ref().as_ref() {
                "name" => {}
                "matcher" => {
                    let Some(source) = self.string(value, &field) else {
                        continue;
                    };
                    if moment::known(moment_name).is_some_and(|m| m.matcher_field.is_none())
                        || moment::known(moment_name).is_none()
                    {
                        self.error(
                            key.span(),
                            format!("{what}: {moment_name} has no field to match, so a matcher cannot be used there; remove it"),
                        );
                        continue;
                    }
                    match Matcher::parse(&source) {
                        Ok(parsed) => matcher = parsed,
                        Err(e) => {
                            let detail = e
                                .to_string()
                                .lines()
                                .last()
                                .unwrap_or_default()
                                .trim()
                                .trim_start_matches("error: ")
                                .to_string();
                            self.error(
                                value.span(),
                                format!("{what}: invalid regex \"{source}\" in matcher: {detail}"),
                            );
                        }
                    }
                    matcher_source = Some(source);
                }
                "if" => condition = self.condition(key, value, &what, moment_name),
                "command" => command = self.non_empty_string(value, &field),
                "argv" => argv = self.program_words(value, &field),
                "worker" => worker = self.program_words(value, &field),
                "builtin" => builtin = self.builtin(value, &field, moment_name),
                "rules" => rules = self.guard_rules(value, &field),
                "workers" => {
                    workers = self
                        .integer_in(value, &field, 1, MAX_WORKERS)
                        .map(|n| n as usize)
                }
                "timeout" => {
                    timeout = self.seconds(value, &field).unwrap_or(timeout);
                    timeout_given = true;
                }
                "on_failure" => on_failure = self.on_failure(value, &field).unwrap_or(on_failure),
                "agents" => {
                    if let Some(list) = self.strings(value, &field, "a list of agent names") {
                        if list.is_empty() || list.iter().any(String::is_empty) {
                            self.error(
                                value.span(),
                                format!("{field} must name at least one agent (remove it to run for every agent)"),
                            );
                        } else {
                            self.agent_names(value, &field);
                            agents = Some(list);
                        }
                    }
                }
                "env" => env = self.env(value, &field),
                "enabled" => match value.get_ref().as_bool() {
                    Some(b) => enabled = b,
                    None => self.type_error(value, &field, "true or false"),
                },
                "background" => match value.get_ref().as_bool() {
                    Some(true) => match super::background::refused_at(moment_name) {
                        Some(why) => self.error(value.span(), format!("{field}: {why}")),
                        None => background = true,
                    },
                    Some(false) => {}
                    None => self.type_error(value, &field, "true or false"),
                },
                // Read before the hooks are (see `declared_by_hooks`); checked here.
                "declare_moment" => match value.get_ref().as_bool() {
                    Some(true) if moment::known(moment_name).is_some() => self.error(
                        key.span(),
                        format!("{what}: declare_moment: {moment_name} is already a known moment; remove it"),
                    ),
                    Some(_) => {}
                    None => self.type_error(value, &field, "true or false"),
                },
                _ => self.unknown_key(key, &format!("in {what}"), HOOK_KEYS),
            }
        }
        let forms: Vec<&str> = ["command", "argv", "worker", "builtin"]
            .into_iter()
            .filter(|k| table.get(*k).is_some())
            .collect();
        if forms.len() > 1 {
            let span = table.get(forms[1]).map_or(entry.span(), |v| v.span());
            self.error(
                span,
                format!("{what} has both {} and {}; keep one", forms[0], forms[1]),
            );
            return None;
        }
        if forms.is_empty() {
            self.error(
                entry.span(),
                format!("{what} needs a command (a shell line), an argv (a program and its arguments), a worker (a program kept running) or builtin = \"guard\" (hookd's own guard)"),
            );
            return None;
        }
        if let (Some(value), None) = (table.get("workers"), table.get("worker")) {
            self.error(
                value.span(),
                format!("{what}: workers applies only to a worker hook (worker = [...])"),
            );
            return None;
        }
        if let (Some(value), None) = (table.get("rules"), table.get("builtin")) {
            self.error(
                value.span(),
                format!("{what}: rules applies only to the built-in guard (builtin = \"guard\")"),
            );
            return None;
        }
        let program = match (command, argv, worker) {
            _ if table.get("builtin").is_some() => {
                builtin?;
                // The guard itself never fails: its on_failure only ever decides an event hookd
                // could not give it (too large or too deep to read whole). Padding a call so
                // would otherwise slip it past a guard hung with [defaults]' "ignore": unless the
                // hook says otherwise, it refuses what it could not judge.
                if table.get("on_failure").is_none() {
                    on_failure = OnFailure::Refuse;
                }
                match crate::guard::Guard::with(&rules) {
                    Ok(guard) => Program::Guard(guard),
                    Err(_) => return None, // each unknown rule was reported at its key
                }
            }
            (Some(command), _, _) => Program::Shell {
                shell: defaults.shell.clone(),
                command,
            },
            (_, Some(argv), _) => Program::Argv(argv),
            (_, _, Some(argv)) => Program::Worker {
                argv,
                count: workers.unwrap_or(1),
            },
            _ => return None, // the bad value was reported above
        };
        if self.errors.len() > errors_before {
            return None;
        }
        let program_at = table
            .get(forms[0])
            .map_or((0, 0), |value| self.place(value.span().start));
        if self.layer == Layer::Project && table.get("worker").is_some() {
            let span = table.get("worker").map_or(entry.span(), |v| v.span());
            self.error(
                span,
                format!("{what}: a repository's hooks run a `command` or an `argv`, not a `worker` (a process kept running from a repository's files)"),
            );
            return None;
        }
        let hook = Hook {
            layer: self.layer,
            dir: None,
            span: (entry.span().start, table_end(entry)),
            name,
            moment: moment_name.to_string(),
            matcher,
            matcher_source,
            condition,
            program,
            timeout,
            timeout_given,
            on_failure,
            agents,
            env,
            enabled,
            background,
            program_at,
        };
        // A hook that can never run where it is hung is refused at the key that makes it so.
        if let Some(never) = hook.never_runs() {
            let span = table.get(never.key).map_or(entry.span(), |v| v.span());
            self.error(span, format!("{what}: {}", never.message));
            return None;
        }
        Some(hook)
    }

    /// An error for each name in a hook's `agents` that is no agent hookd knows but is so close to one
    /// that it is surely meant for it (`gemini`, `Claude-Code`, `codx`): such a hook would silently never
    /// run for that agent. Other names are a client's own agents (an SDK's), and are taken.
    fn agent_names(&mut self, value: &Value<'_>, field: &str) {
        let Some(items) = value.get_ref().as_array() else {
            return;
        };
        for item in items.iter() {
            let Some(name) = item.get_ref().as_str() else {
                continue;
            };
            if let Some(meant) = meant_agent(name) {
                self.error(
                    item.span(),
                    format!("{field}: unknown agent \"{}\" (did you mean \"{meant}\"?); the agents hookd knows are {}", moment::shown(name), crate::tables::agent::Agent::ALL.map(|a| a.name()).join(", ")),
                );
            }
        }
    }

    /// `if = "Bash(git push *)"`: a condition on what a tool was called with (`condition.rs`), only at a
    /// moment of a tool call. A rule that cannot be read is an error at the character that stops it.
    fn condition(
        &mut self,
        key: &Spanned<std::borrow::Cow<'_, str>>,
        value: &Value<'_>,
        what: &str,
        moment_name: &str,
    ) -> Option<Condition> {
        let source = self.string(value, &format!("{what}: if"))?;
        if moment::known(moment_name).and_then(|m| m.matcher_field) != Some("tool_name") {
            self.error(
                key.span(),
                format!("{what}: {moment_name} is no tool call, so an `if` (a rule on what a tool is called with) cannot be used there; remove it, or hang the hook on PreToolUse, PostToolUse or another moment of a tool call"),
            );
            return None;
        }
        match Condition::parse(&source) {
            Ok(condition) => Some(condition),
            Err(e) => {
                // At the character itself when the value is written as it reads (no escapes in it).
                let span = value.span();
                let raw = self.text.get(span.clone()).unwrap_or_default();
                let offset = match raw.get(1..raw.len().saturating_sub(1)) {
                    Some(inner) if inner == source => span.start + 1 + e.at,
                    _ => span.start,
                };
                self.error_at(
                    offset,
                    format!(
                        "{what}: if {:?} cannot be read: {}",
                        moment::shown(&source),
                        e.message
                    ),
                );
                None
            }
        }
    }

    /// A program and its arguments (`argv`, `worker`).
    fn program_words(&mut self, value: &Value<'_>, field: &str) -> Option<Vec<String>> {
        let words = self.strings(
            value,
            field,
            "a list of strings (the program, then its arguments)",
        )?;
        if words.first().is_none_or(String::is_empty) {
            self.error(
                value.span(),
                format!("{field} must start with the program to run"),
            );
            return None;
        }
        Some(words)
    }

    /// `builtin = "guard"`: the only built-in hook, and only where a tool call is about to run (it
    /// judges tool calls; hung anywhere else it would never find one, and so silently never guard).
    fn builtin(&mut self, value: &Value<'_>, field: &str, moment_name: &str) -> Option<()> {
        let name = self.string(value, field)?;
        if name != "guard" {
            self.error(
                value.span(),
                format!(
                    "{field}: unknown built-in hook \"{}\"; the one built-in hook is \"guard\"",
                    moment::shown(&name)
                ),
            );
            return None;
        }
        if !crate::guard::MOMENTS.contains(&moment_name) {
            self.error(
                value.span(),
                format!("{field}: the built-in guard judges a tool call before it runs, which {} never is; hang it on {}", moment::shown(moment_name), crate::guard::MOMENTS.join(", ")),
            );
            return None;
        }
        Some(())
    }

    /// `rules = { delete-outside = "ask", secrets = "off" }`: each rule's action, every other rule at
    /// its default; an unknown rule or action is an error at its key or value.
    fn guard_rules(
        &mut self,
        value: &Value<'_>,
        field: &str,
    ) -> Vec<(String, crate::guard::Action)> {
        let Some(table) = self.table(value, field) else {
            return Vec::new();
        };
        let mut rules = Vec::new();
        for (key, action) in table.iter() {
            let name = key.get_ref().to_string();
            if let Err(e) = crate::guard::Guard::with(&[(name.clone(), crate::guard::Action::Off)])
            {
                self.error(key.span(), format!("{field}: {e}"));
                continue;
            }
            match action
                .get_ref()
                .as_str()
                .and_then(crate::guard::Action::parse)
            {
                Some(action) => rules.push((name, action)),
                None => self.error(
                    action.span(),
                    format!(
                        "{field}.{name} must be \"refuse\", \"ask\" or \"off\", not {}",
                        value_text(self.text, action.span())
                    ),
                ),
            }
        }
        rules
    }

    fn seconds(&mut self, value: &Value<'_>, field: &str) -> Option<Duration> {
        let seconds = match value.get_ref() {
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
                .ok()
                .map(|i| i as f64),
            DeValue::Float(f) => f.as_str().parse::<f64>().ok(),
            _ => {
                self.type_error(value, field, "a number of seconds");
                return None;
            }
        };
        match seconds {
            Some(s) if (MIN_HOOK_TIMEOUT_SECS..=MAX_HOOK_TIMEOUT_SECS).contains(&s) => {
                Some(Duration::from_secs_f64(s))
            }
            _ => {
                self.error(
                    value.span(),
                    format!("{field} must be from {MIN_HOOK_TIMEOUT_SECS} seconds (1 ms, the shortest the runner can honour) to {MAX_HOOK_TIMEOUT_SECS} seconds (a day), not {}", value_text(self.text, value.span())),
                );
                None
            }
        }
    }

    fn on_failure(&mut self, value: &Value<'_>, field: &str) -> Option<OnFailure> {
        match value.get_ref().as_str() {
            Some("ignore") => Some(OnFailure::Ignore),
            Some("refuse") => Some(OnFailure::Refuse),
            Some(other) => {
                self.error(
                    value.span(),
                    format!("{field} must be \"ignore\" or \"refuse\", not \"{other}\""),
                );
                None
            }
            None => {
                self.type_error(value, field, "\"ignore\" or \"refuse\"");
                None
            }
        }
    }

    fn env(&mut self, value: &Value<'_>, field: &str) -> Vec<(String, String)> {
        let Some(table) = self.table(value, field) else {
            return Vec::new();
        };
        let mut vars = Vec::new();
        for (key, value) in table.iter() {
            let name = key.get_ref().as_ref();
            if name.is_empty() || name.contains(['=', '\0']) {
                self.error(
                    key.span(),
                    format!("{field}: \"{name}\" is not a valid environment variable name"),
                );
                continue;
            }
            if let Some(text) = self.string(value, &format!("{field}.{name}")) {
                vars.push((name.to_string(), text));
            }
        }
        vars
    }
}

/// The moments declared by their own hooks (`declare_moment = true` in a `[[hooks.MOMENT]]`), in the
/// file's order: a declaration that is valid wherever it is written, so that hooks on a moment hookd does
/// not know can be appended to a file (a top-level `moments = [...]` after a table would land inside it).
/// A moment hookd knows is not declared (the hook says so, in [`Walker::hook`]).
fn declared_by_hooks(hooks: &Value<'_>) -> Vec<String> {
    let Some(table) = hooks.get_ref().as_table() else {
        return Vec::new();
    };
    let mut declared: Vec<(usize, String)> = table
        .iter()
        .filter(|(name, _)| moment::known(name.get_ref()).is_none())
        .filter_map(|(name, entries)| {
            let entries = entries.get_ref().as_array()?;
            let first = entries.iter().find(|entry| {
                entry
                    .get_ref()
                    .as_table()
                    .and_then(|t| t.get("declare_moment"))
                    .and_then(|v| v.get_ref().as_bool())
                    == Some(true)
            })?;
            Some((first.span().start, name.get_ref().to_string()))
        })
        .collect();
    declared.sort();
    declared.into_iter().map(|(_, name)| name).collect()
}

/// For a moment name that is an agent's own (`[[hooks.BeforeTool]]`, Copilot CLI's `preToolUse`), the
/// error that names the moment it means, or says how to declare an event of the agent's own.
fn agents_own_name(name: &str) -> Option<String> {
    if let Some((agent, meant)) = moment::agent_name_for(name) {
        return Some(format!(
            "unknown moment \"{name}\": it is {}'s name for {meant}; hookd names moments as Claude Code does, and hookd relay --agent {} fires {name} as {meant}: write [[hooks.{meant}]] (with agents = [\"{}\"] to keep it to {})",
            agent.display_name(),
            agent.name(),
            agent.name(),
            agent.display_name()
        ));
    }
    let agent = crate::tables::agent::Agent::ALL
        .into_iter()
        .find(|agent| agent.row().own_events.contains(&name))?;
    Some(format!(
        "unknown moment \"{name}\": it is an event of {}'s own, with no moment of hookd's; declare it to hang hooks on it: moments = [\"{name}\"]",
        agent.display_name()
    ))
}

/// The agent hookd knows that `name` surely means, when it is none of them: a near spelling, or the
/// same letters with other case and punctuation, or the start of one, or one and a short tail (`gemini`,
/// `claude_code`, `codex-cli`).
pub(crate) fn meant_agent(name: &str) -> Option<&'static str> {
    use crate::tables::agent::Agent;
    if Agent::from_name(name).is_some() {
        return None;
    }
    let bare = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let own = bare(name);
    let names = Agent::ALL.map(|agent| agent.name());
    names
        .into_iter()
        .find(|known| {
            let known = bare(known);
            // A name that only begins with an agent's (`claude-code-sdk-bot`) may be a client's own.
            own.len() >= 4
                && (known.starts_with(&own)
                    || (own.starts_with(&known) && own.len() <= known.len() + 3))
        })
        .or_else(|| moment::did_you_mean(name, names))
}

/// Where a table's text ends: past the last of its keys and values, those of the tables and arrays in
/// it included. A `[[hooks.X]]` entry's own span is its header alone; a repository's hook is pinned to
/// its whole text (`hookd trust`), or a matcher, an `enabled = false` or a `|| true` added to it would
/// leave its digest as trusted.
fn table_end(value: &Value<'_>) -> usize {
    let mut end = value.span().end;
    match value.get_ref() {
        DeValue::Table(table) => {
            for (key, value) in table.iter() {
                end = end.max(key.span().end).max(table_end(value));
            }
        }
        DeValue::Array(items) => {
            for item in items.iter() {
                end = end.max(table_end(item));
            }
        }
        _ => {}
    }
    end
}

#[cfg(test)]
mod tests {
    /// A hook's span is its whole table (a repository's hook is pinned to this text): its keys, and a
    /// sub-table of it written further down, not its `[[hooks.X]]` header alone.
    #[test]
    fn a_hooks_span_is_its_whole_table() {
        let text = "[[hooks.PreToolUse]]\nname = \"a\"\ncommand = \"x.sh || true\"\nenabled = false\n\n[hooks.PreToolUse.env]\nX = \"1\"\n\n[[hooks.PreToolUse]]\nname = \"b\"\ncommand = \"y\"\n";
        let settings = crate::settings::Settings::parse_layer(
            std::path::Path::new("/r/.hookd/hooks.toml"),
            "hooks.toml",
            text,
            crate::settings::Layer::Project,
        )
        .unwrap();
        let hooks = settings.hooks_for("PreToolUse");
        let of = |i: usize| &text[hooks[i].span.0..hooks[i].span.1];
        assert!(of(0).starts_with("[[hooks.PreToolUse]]"), "{}", of(0));
        for part in ["|| true", "enabled = false", "X = \"1\""] {
            assert!(of(0).contains(part), "{part} in {}", of(0));
        }
        assert!(of(1).contains("command = \"y\""), "{}", of(1));
        assert!(!of(1).contains("name = \"a\""), "{}", of(1));
    }

    /// The example settings file lists every key the parser takes, each in its own table, so that a
    /// reader of its comment knows all there is: a key added to the parser fails this until it is listed.
    #[test]
    fn the_example_settings_list_every_key() {
        let example = include_str!("../../config/hooks.toml");
        let start = example
            .find("# Keys: ")
            .expect("config/hooks.toml has a # Keys: paragraph");
        let end = example[start..]
            .find("\n\n")
            .map_or(example.len(), |n| start + n);
        let listed: String = example[start..end]
            .lines()
            .flat_map(|line| line.trim_start_matches('#').split_whitespace())
            .collect::<Vec<_>>()
            .join(" ");
        for (table, keys) in [
            ("top level", TOP_LEVEL_KEYS),
            ("in [defaults]", DEFAULTS_KEYS),
            ("in [http]", HTTP_KEYS),
            ("in [record]", RECORD_KEYS),
            ("in [protect]", PROTECT_KEYS),
            ("in [export.otlp]", export::OTLP_KEYS),
            ("in a hook", HOOK_KEYS),
        ] {
            let at = listed
                .find(table)
                .unwrap_or_else(|| panic!("the Keys comment has no {table:?}: {listed}"));
            let rest = &listed[at + table.len()..];
            let part = rest.split(';').next().unwrap_or(rest);
            let part = part.split(". ").next().unwrap_or(part);
            for key in keys.iter() {
                assert!(
                    part.contains(&format!("`{key}`")),
                    "config/hooks.toml's Keys comment lacks `{key}` {table}: {part}"
                );
            }
        }
    }

    use super::*;
    use crate::limits::SETTINGS_ERRORS;

    fn errors(text: &str) -> Vec<String> {
        match parse("hooks.toml", text, Layer::User) {
            Ok(_) => Vec::new(),
            Err(errors) => errors.0.iter().map(ToString::to_string).collect(),
        }
    }

    fn hooks(text: &str) -> Vec<(String, Vec<Arc<Hook>>)> {
        match parse("hooks.toml", text, Layer::User) {
            Ok(parsed) => parsed.hooks,
            Err(errors) => panic!("unexpected errors:\n{errors}"),
        }
    }

    #[test]
    fn the_built_in_guard_is_a_hook_with_its_rules_set_one_by_one() {
        let hooks = hooks(
            "[[hooks.PreToolUse]]\nname = \"g\"\nbuiltin = \"guard\"\nrules = { secrets = \"ask\", unknown = \"off\" }\n",
        );
        let Program::Guard(guard) = &hooks[0].1[0].program else {
            panic!("not the guard: {:?}", hooks[0].1[0].program);
        };
        use crate::guard::Action;
        assert_eq!(guard.action("secrets"), Action::Ask);
        assert_eq!(guard.action("unknown"), Action::Off);
        assert_eq!(guard.action("delete-root"), Action::Refuse);
    }

    #[test]
    fn the_built_in_guard_refuses_what_it_could_not_judge_unless_it_says_otherwise() {
        let text = |extra: &str| {
            format!(
                "[defaults]\non_failure = \"ignore\"\n\n[[hooks.PreToolUse]]\nname = \"g\"\nbuiltin = \"guard\"\n{extra}"
            )
        };
        assert_eq!(hooks(&text(""))[0].1[0].on_failure, OnFailure::Refuse);
        let ignoring = hooks(&text("on_failure = \"ignore\"\n"));
        assert_eq!(ignoring[0].1[0].on_failure, OnFailure::Ignore);
    }

    #[test]
    fn the_built_in_guard_s_mistakes_are_errors_at_their_place() {
        let hook = |body: &str| format!("[[hooks.PreToolUse]]\nname = \"g\"\n{body}\n");
        let cases: &[(String, &str)] = &[
            (
                hook("builtin = \"gaurd\""),
                "hooks.toml:3:11: hook \"g\": builtin: unknown built-in hook \"gaurd\"; the one built-in hook is \"guard\"",
            ),
            (
                hook("builtin = \"guard\"\nrules = { delete-rot = \"off\" }"),
                "hooks.toml:4:11: hook \"g\": rules: unknown rule \"delete-rot\" (did you mean \"delete-root\"?)",
            ),
            (
                hook("builtin = \"guard\"\nrules = { secrets = \"warn\" }"),
                "hooks.toml:4:21: hook \"g\": rules.secrets must be \"refuse\", \"ask\" or \"off\", not \"warn\"",
            ),
            (
                hook("command = \"x\"\nrules = { secrets = \"off\" }"),
                "hooks.toml:4:9: hook \"g\": rules applies only to the built-in guard (builtin = \"guard\")",
            ),
            (
                hook("command = \"x\"\nbuiltin = \"guard\""),
                "hooks.toml:4:11: hook \"g\" has both command and builtin; keep one",
            ),
            (
                "[[hooks.Stop]]\nname = \"g\"\nbuiltin = \"guard\"\n".to_string(),
                "hooks.toml:3:11: hook \"g\": builtin: the built-in guard judges a tool call before it runs, which Stop never is; hang it on PreToolUse, PermissionRequest, PreSkillShellCommand",
            ),
        ];
        for (text, expected) in cases {
            let errors = errors(text);
            assert!(
                errors.iter().any(|e| e.starts_with(expected)),
                "{text}\nexpected: {expected}\ngot: {errors:#?}"
            );
        }
    }

    #[test]
    fn a_full_example_loads_with_defaults_applied() {
        let parsed = parse(
            "hooks.toml",
            r#"
[defaults]
timeout = 0.5
on_failure = "refuse"
shell = "/bin/bash"
max_processes = 8

[[hooks.PreToolUse]]
name = "deny-rm"
matcher = "Bash"
command = "deny.sh"
timeout = 5

[[hooks.PreToolUse]]
argv = ["/usr/bin/python3", "policy.py"]
agents = ["codex"]
env = { POLICY = "strict" }
enabled = false
on_failure = "ignore"

[[hooks.UserPromptSubmit]]
command = "git status"
"#,
            Layer::User,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.defaults.max_processes, 8);
        let pre = &parsed.hooks[1].1;
        assert_eq!(
            parsed.hooks[0].0, "UserPromptSubmit",
            "moments in a turn's order"
        );
        assert_eq!(parsed.hooks[1].0, "PreToolUse");
        assert_eq!(pre[0].name, "deny-rm");
        assert_eq!(pre[0].timeout, Duration::from_secs(5));
        assert_eq!(pre[0].on_failure, OnFailure::Refuse);
        assert_eq!(
            pre[0].program,
            Program::Shell {
                shell: "/bin/bash".into(),
                command: "deny.sh".into()
            }
        );
        assert_eq!(pre[1].name, "PreToolUse#2");
        assert_eq!(pre[1].timeout, Duration::from_millis(500));
        assert_eq!(pre[1].on_failure, OnFailure::Ignore);
        assert_eq!(pre[1].agents, Some(vec!["codex".to_string()]));
        assert_eq!(
            pre[1].env,
            vec![("POLICY".to_string(), "strict".to_string())]
        );
        assert!(!pre[1].enabled);
    }

    #[test]
    fn an_agents_own_name_for_a_moment_is_answered_with_the_name_it_means() {
        assert_eq!(
            errors("[[hooks.BeforeTool]]\ncommand = \"x\"\n"),
            vec![
                "hooks.toml:1:9: unknown moment \"BeforeTool\": it is Gemini CLI's name for PreToolUse; hookd names moments as Claude Code does, and hookd relay --agent gemini-cli fires BeforeTool as PreToolUse: write [[hooks.PreToolUse]] (with agents = [\"gemini-cli\"] to keep it to Gemini CLI)"
            ]
        );
        assert!(
            errors("[[hooks.AfterAgent]]\ncommand = \"x\"\n")[0]
                .contains("Gemini CLI's name for Stop")
        );
        assert_eq!(
            errors("[[hooks.BeforeModel]]\ncommand = \"x\"\n"),
            vec![
                "hooks.toml:1:9: unknown moment \"BeforeModel\": it is an event of Gemini CLI's own, with no moment of hookd's; declare it to hang hooks on it: moments = [\"BeforeModel\"]"
            ]
        );
        // Declared, it is taken (and `check` warns where an agent's name for a moment is declared).
        assert_eq!(
            errors(
                "moments = [\"BeforeModel\", \"BeforeTool\"]\n[[hooks.BeforeModel]]\ncommand = \"x\"\n[[hooks.BeforeTool]]\ncommand = \"x\"\n"
            ),
            Vec::<String>::new()
        );
    }

    #[test]
    fn an_agent_name_close_to_a_known_agent_is_an_error() {
        let hook = |agents: &str| {
            errors(&format!(
                "[[hooks.PreToolUse]]\nname = \"h\"\ncommand = \"x\"\nagents = {agents}\n"
            ))
        };
        let errors = hook("[\"codex\", \"gemini\"]");
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].starts_with("hooks.toml:4:20: hook \"h\": agents: unknown agent \"gemini\" (did you mean \"gemini-cli\"?); the agents hookd knows are claude-code, codex, gemini-cli"),
            "{errors:?}"
        );
        for near in [
            "claude",
            "Claude-Code",
            "claude_code",
            "codx",
            "codex-cli",
            "GeminiCLI",
        ] {
            assert_eq!(hook(&format!("[\"{near}\"]")).len(), 1, "{near}");
        }
        // A client's own agents, and the known ones: taken.
        for own in [
            "my-sdk-agent",
            "claude-code-sdk-bot",
            "ci",
            "codex",
            "gemini-cli",
        ] {
            assert_eq!(hook(&format!("[\"{own}\"]")), Vec::<String>::new(), "{own}");
        }
    }

    #[test]
    fn an_unknown_moment_suggests_the_one_meant() {
        let errors = errors("[[hooks.PreTooluse]]\ncommand = \"x\"\n");
        assert_eq!(
            errors,
            vec!["hooks.toml:1:9: unknown moment \"PreTooluse\" (did you mean \"PreToolUse\"?)"]
        );
    }

    #[test]
    fn a_hook_may_declare_its_own_moment_wherever_it_is_written() {
        let text = "[[hooks.PreToolUse]]\ncommand = \"x\"\n[[hooks.WorktreeCreate]]\ncommand = \"y\"\ndeclare_moment = true\n[[hooks.WorktreeCreate]]\ncommand = \"z\"\n";
        let parsed = parse("hooks.toml", text, Layer::User).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.extra_moments, ["WorktreeCreate"]);
        assert_eq!(parsed.hooks[1].0, "WorktreeCreate");
        assert_eq!(
            parsed.hooks[1].1.len(),
            2,
            "the moment is declared for all its hooks"
        );
        // With `moments` too, it is declared once; `sequential` may name it.
        let both =
            format!("moments = [\"WorktreeCreate\"]\nsequential = [\"WorktreeCreate\"]\n{text}");
        let parsed = parse("hooks.toml", &both, Layer::User).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.extra_moments, ["WorktreeCreate"]);
        // On a known moment, or not a boolean: an error at the key. `false` declares nothing.
        assert_eq!(
            errors("[[hooks.PreToolUse]]\nname = \"a\"\ncommand = \"x\"\ndeclare_moment = true\n"),
            [
                "hooks.toml:4:1: hook \"a\": declare_moment: PreToolUse is already a known moment; remove it"
            ]
        );
        for value in ["false", "\"yes\""] {
            let errors = errors(&format!(
                "[[hooks.X]]\ncommand = \"x\"\ndeclare_moment = {value}\n"
            ));
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert!(errors[0].contains("unknown moment \"X\""), "{errors:?}");
        }
        assert_eq!(
            errors(
                "[[hooks.X]]\ncommand = \"x\"\ndeclare_moment = true\n[[hooks.X]]\ncommand = \"x\"\ndeclare_moment = 1\n"
            ),
            ["hooks.toml:6:18: hook \"X#2\": declare_moment must be true or false, not an integer"]
        );
        // A declared moment still takes no matcher.
        assert!(
            errors("[[hooks.X]]\nmatcher = \"a\"\ncommand = \"x\"\ndeclare_moment = true\n")[0]
                .contains("has no field to match")
        );
    }

    #[test]
    fn declared_moments_are_accepted() {
        let hooks =
            hooks("moments = [\"WorktreeCreate\"]\n[[hooks.WorktreeCreate]]\ncommand = \"x\"\n");
        assert_eq!(hooks[0].0, "WorktreeCreate");
    }

    #[test]
    fn unknown_keys_are_named_with_their_place() {
        let errors =
            errors("[defaults]\ntimeuot = 5\n[[hooks.Stop]]\ncommand = \"x\"\ncomand = \"y\"\n");
        assert_eq!(
            errors,
            vec![
                "hooks.toml:2:1: unknown key \"timeuot\" in [defaults] (did you mean \"timeout\"?)",
                "hooks.toml:5:1: unknown key \"comand\" in hook \"Stop#1\" (did you mean \"command\"?)",
            ]
        );
    }

    #[test]
    fn every_error_is_reported_at_once() {
        let errors = errors(
            "[[hooks.Stop]]\nname = \"a\"\nmatcher = \"x\"\ncommand = \"x\"\n[[hooks.PreToolUse]]\nname = \"a\"\nargv = [\"x\"]\ncommand = \"y\"\n[[hooks.PostToolUse]]\nmatcher = \"Edit(\"\ncommand = \"x\"\n",
        );
        assert_eq!(errors.len(), 4, "{errors:#?}");
        assert!(
            errors[0].starts_with("hooks.toml:3:1: hook \"a\": Stop has no field to match"),
            "{}",
            errors[0]
        );
        assert!(
            errors[1].contains("duplicate hook name \"a\" (first used on line 2)"),
            "{}",
            errors[1]
        );
        assert!(
            errors[2].contains("has both command and argv"),
            "{}",
            errors[2]
        );
        assert!(
            errors[3].contains("hook \"PostToolUse#1\": invalid regex \"Edit(\""),
            "{}",
            errors[3]
        );
    }

    #[test]
    fn a_hook_needs_a_command_or_an_argv() {
        let errors = errors("[[hooks.Stop]]\ntimeout = 3\n");
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].contains("hook \"Stop#1\" needs a command"),
            "{}",
            errors[0]
        );
        assert!(errors[0].starts_with("hooks.toml:1:"), "{}", errors[0]);
        assert_eq!(self::errors("[[hooks.Stop]]\nargv = []\n").len(), 1);
    }

    #[test]
    fn values_of_the_wrong_type_or_range_are_errors() {
        let errors = errors(
            "[defaults]\ntimeout = \"5\"\non_failure = \"deny\"\nmax_processes = 0\n[[hooks.Stop]]\ncommand = \"x\"\ntimeout = -1\nenabled = \"yes\"\n",
        );
        assert_eq!(errors.len(), 5, "{errors:#?}");
        assert_eq!(
            errors[0],
            "hooks.toml:2:11: defaults.timeout must be a number of seconds, not a string"
        );
    }

    #[test]
    fn a_syntax_error_has_its_place() {
        let errors = errors("[[hooks.Stop]]\ncommand = \"x\n");
        assert_eq!(errors.len(), 1, "{errors:#?}");
        assert!(errors[0].starts_with("hooks.toml:2:"), "{}", errors[0]);
    }

    #[test]
    fn a_single_table_instead_of_a_list_is_explained() {
        let errors = errors("[hooks.Stop]\ncommand = \"x\"\n");
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].contains("write each hook as [[hooks.Stop]]"),
            "{}",
            errors[0]
        );
    }

    #[test]
    fn many_errors_are_placed_quickly_and_capped() {
        let text = "x\n".repeat(40_000);
        let errors = errors(&text);
        assert_eq!(errors.len(), SETTINGS_ERRORS + 1);
        assert!(errors[0].starts_with("hooks.toml:1:"), "{}", errors[0]);
        assert!(
            errors[SETTINGS_ERRORS].ends_with("more errors"),
            "{}",
            errors[SETTINGS_ERRORS]
        );
    }

    #[test]
    fn errors_are_placed_at_their_line_and_column() {
        let errors = errors("[defaults]\n  tiemout = 5\n");
        assert!(
            errors[0].starts_with("hooks.toml:2:3: unknown key"),
            "{}",
            errors[0]
        );
    }

    #[test]
    fn an_empty_file_has_no_hooks() {
        assert!(hooks("").is_empty());
        assert!(hooks("# nothing yet\n").is_empty());
    }

    #[test]
    fn the_record_is_on_by_default_and_its_keys_are_checked() {
        let parsed = parse("hooks.toml", "", Layer::User).unwrap();
        assert_eq!(parsed.record, Record::default());
        assert!(parsed.record.enabled);
        let parsed = parse(
            "hooks.toml",
            "[record]\nenabled = false\nfiles = 2\nfile_size_mib = 1\nfull_inputs = true\n",
            Layer::User,
        )
        .unwrap();
        assert_eq!(
            parsed.record,
            Record {
                enabled: false,
                file_size_mib: 1,
                files: 2,
                full_inputs: true
            }
        );
        let errors = errors("[record]\nfiles = 0\nenabeld = true\n");
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors[0].starts_with("hooks.toml:2:9: record.files"),
            "{errors:?}"
        );
        assert!(errors[1].contains("did you mean \"enabled\""), "{errors:?}");
    }

    #[test]
    fn http_is_off_unless_listen_is_given() {
        let parsed = parse("hooks.toml", "", Layer::User).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.http, Http::default());
        let parsed = parse(
            "hooks.toml",
            "[http]\nlisten = \"127.0.0.1:8787\"\n",
            Layer::User,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.http.listen, Some("127.0.0.1:8787".parse().unwrap()));
        let parsed = parse("hooks.toml", "[http]\nlisten = \"[::1]:0\"\n", Layer::User)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.http.listen, Some("[::1]:0".parse().unwrap()));
    }

    #[test]
    fn http_refuses_a_non_loopback_address_unless_told_in_so_many_words() {
        let errors = errors("[http]\nlisten = \"0.0.0.0:8787\"\n");
        assert_eq!(errors.len(), 1, "{errors:#?}");
        assert!(
            errors[0]
                .starts_with("hooks.toml:2:10: http.listen 0.0.0.0:8787 is not a loopback address"),
            "{}",
            errors[0]
        );
        let parsed = parse(
            "hooks.toml",
            "[http]\nlisten = \"0.0.0.0:8787\"\nallow_non_loopback = true\n",
            Layer::User,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.http.listen, Some("0.0.0.0:8787".parse().unwrap()));
    }

    #[test]
    fn http_mistakes_are_placed() {
        let errors = errors("[http]\nlisten = \"localhost:8787\"\nlsiten = 1\n");
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert!(
            errors[0].starts_with("hooks.toml:2:10: http.listen must be an IP address and a port"),
            "{}",
            errors[0]
        );
        assert!(
            errors[1].starts_with(
                "hooks.toml:3:1: unknown key \"lsiten\" in [http] (did you mean \"listen\"?)"
            ),
            "{}",
            errors[1]
        );
    }

    /// A file of `n` hooks, each named, on PreToolUse.
    fn many_hooks(n: usize) -> String {
        (0..n)
            .map(|i| format!("[[hooks.PreToolUse]]\nname = \"h{i}\"\nmatcher = \"Bash\"\ncommand = \"/bin/true\"\n"))
            .collect()
    }

    #[test]
    fn ten_thousand_hooks_are_validated_without_rescanning_the_file_per_name() {
        // Regression: each duplicate-name check placed its name by scanning the text from its start, so a
        // 10,000-hook file took 9 s to check on the daemon's only thread. Counted, not timed.
        let text = many_hooks(10_000);
        super::super::error::SCANNED.with(|s| s.set(0));
        let parsed = parse("hooks.toml", &text, Layer::User).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.hooks[0].1.len(), 10_000);
        let scanned = super::super::error::SCANNED.with(std::cell::Cell::get);
        assert!(
            scanned <= text.len(),
            "validating {} bytes scanned {scanned} bytes to place names",
            text.len()
        );
        // A duplicate at the end is still placed, with the line of its first use.
        let text = format!("{text}[[hooks.Stop]]\nname = \"h0\"\ncommand = \"x\"\n");
        let errors = errors(&text);
        assert_eq!(
            errors,
            vec!["hooks.toml:40002:8: duplicate hook name \"h0\" (first used on line 2)"]
        );
    }

    #[test]
    fn a_timeout_the_runner_cannot_honour_is_refused() {
        for (value, col) in [
            ("1e-12", 11),
            ("0.0009", 11),
            ("0", 11),
            ("86401", 11),
            ("nan", 11),
            ("inf", 11),
        ] {
            let errors = errors(&format!(
                "[[hooks.Stop]]\ncommand = \"x\"\ntimeout = {value}\n"
            ));
            assert_eq!(errors.len(), 1, "{value}: {errors:#?}");
            assert!(
                errors[0].starts_with(&format!(
                    "hooks.toml:3:{col}: hook \"Stop#1\": timeout must be from 0.001 seconds (1 ms"
                )),
                "{}",
                errors[0]
            );
            assert!(
                errors[0].ends_with(&format!("not {value}")),
                "{}",
                errors[0]
            );
            let errors = errors_in_defaults(value);
            assert_eq!(errors.len(), 1, "{value}: {errors:#?}");
            assert!(
                errors[0]
                    .starts_with("hooks.toml:2:11: defaults.timeout must be from 0.001 seconds"),
                "{}",
                errors[0]
            );
        }
        let shortest = hooks("[defaults]\ntimeout = 0.001\n[[hooks.Stop]]\ncommand = \"x\"\n");
        assert_eq!(shortest[0].1[0].timeout, Duration::from_millis(1));
        let longest = hooks("[[hooks.Stop]]\ncommand = \"x\"\ntimeout = 86400\n");
        assert_eq!(longest[0].1[0].timeout, Duration::from_secs(86_400));
    }

    fn errors_in_defaults(value: &str) -> Vec<String> {
        errors(&format!("[defaults]\ntimeout = {value}\n"))
    }
}
