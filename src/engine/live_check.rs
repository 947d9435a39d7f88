//! A hook hung live over the socket (`attach`, docs/protocol.md), read from its JSON and checked as the
//! settings file's hooks are: its name, its moment (known or declared, with a did-you-mean), its matcher
//! (only where the moment has a field to match), its agents (a misspelt one refused), its timeout and
//! `on_failure` — and then whether it can ever run where it is hung ([`Hook::never_runs`]), since a live
//! hook that quietly never runs is a flow that quietly does not do what it says. Pure: whether its
//! session has already ended is [`super::live`]'s to say, which has seen the sessions end.

use serde_json::{Map, Value};

use crate::limits::{
    MAX_AGENT_NAME, MAX_HOOK_TIMEOUT_SECS, MAX_LIVE_NAME, MAX_SESSION_ID, MIN_HOOK_TIMEOUT_SECS,
};
use crate::settings::{Hook, Matcher, OnFailure, Program, RESERVED_NAME_PREFIX, Settings};
use crate::tables::moment;

/// The members a live hook may have.
const KEYS: &[&str] = &[
    "name",
    "moment",
    "matcher",
    "agents",
    "session",
    "timeout",
    "on_failure",
];

/// A live hook as checked: the hook, and the one session it is hung on (`None`: every session of its
/// agents).
#[derive(Debug, Clone)]
pub struct LiveSpec {
    pub hook: Hook,
    pub session: Option<String>,
}

/// Reads and checks one hook of an `attach`, for the client `client` on connection `connection`.
/// `Err` holds the hook's name as far as it could be read (empty when none) and why it is refused.
pub fn live_hook(
    spec: &Value,
    settings: &Settings,
    connection: u64,
    client: &str,
) -> Result<LiveSpec, (String, String)> {
    let Value::Object(spec) = spec else {
        return Err((String::new(), "a hook must be a JSON object".into()));
    };
    let name = match spec.get("name") {
        Some(Value::String(name))
            if !name.trim().is_empty()
                && name.len() <= MAX_LIVE_NAME
                && !name.chars().any(char::is_control) =>
        {
            name.clone()
        }
        Some(Value::String(name)) if name.len() > MAX_LIVE_NAME => {
            return Err((
                moment::shown(name),
                format!("\"name\" is {} bytes; at most {MAX_LIVE_NAME}", name.len()),
            ));
        }
        _ => {
            return Err((
                String::new(),
                "\"name\" must be a non-empty string without control characters (detach and the record name the hook by it)"
                    .into(),
            ));
        }
    };
    let refuse = |reason: String| (name.clone(), reason);
    if settings.policy.allow_managed_hooks_only {
        // A live hook is the user's (any process of the user, an agent's tool call included, may hang
        // one): where only the managed layer's hooks may run, it would be a door around that.
        return Err(refuse(
            "the managed layer sets allow_managed_hooks_only: only its hooks run, and no live hook may be hung"
                .into(),
        ));
    }
    if name.starts_with(RESERVED_NAME_PREFIX) {
        return Err(refuse(format!(
            "names beginning \"{}\" are hookd's own; choose another",
            RESERVED_NAME_PREFIX
        )));
    }
    if let Some(key) = spec.keys().find(|key| !KEYS.contains(&key.as_str())) {
        // A misspelt `session` would hang the hook on every session: refused, never ignored.
        let hint = match moment::did_you_mean(key, KEYS.iter().copied()) {
            Some(meant) => format!(" (did you mean \"{meant}\"?)"),
            None => format!(" (expected one of: {})", KEYS.join(", ")),
        };
        return Err(refuse(format!(
            "unknown member \"{}\"{hint}",
            moment::shown(key)
        )));
    }
    let moment_name = match spec.get("moment") {
        Some(Value::String(m)) if !m.is_empty() => m.clone(),
        _ => return Err(refuse("\"moment\" must be a non-empty string".into())),
    };
    if !settings.knows_moment(&moment_name) {
        let hint = moment::unknown_moment_hint(&moment_name, settings.moment_names());
        return Err(refuse(format!(
            "unknown moment \"{}\"{hint}",
            moment::shown(&moment_name)
        )));
    }
    let (matcher, matcher_source) = matcher(spec, &moment_name).map_err(&refuse)?;
    let agents = agents(spec).map_err(&refuse)?;
    let session = match spec.get("session") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.is_empty() && s.len() <= MAX_SESSION_ID => Some(s.clone()),
        Some(_) => {
            return Err(refuse(format!(
                "\"session\" must be a session id: a non-empty string of at most {MAX_SESSION_ID} bytes"
            )));
        }
    };
    let (timeout, timeout_given) = match spec.get("timeout") {
        None | Some(Value::Null) => (settings.defaults.timeout, settings.defaults.timeout_given),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(s) if (MIN_HOOK_TIMEOUT_SECS..=MAX_HOOK_TIMEOUT_SECS).contains(&s) => {
                (std::time::Duration::from_secs_f64(s), true)
            }
            _ => {
                return Err(refuse(format!(
                    "\"timeout\" must be from {MIN_HOOK_TIMEOUT_SECS} to {MAX_HOOK_TIMEOUT_SECS} seconds, not {n}"
                )));
            }
        },
        Some(_) => return Err(refuse("\"timeout\" must be a number of seconds".into())),
    };
    let on_failure = match spec.get("on_failure") {
        None | Some(Value::Null) => settings.defaults.on_failure,
        Some(Value::String(s)) if s == "ignore" => OnFailure::Ignore,
        Some(Value::String(s)) if s == "refuse" => OnFailure::Refuse,
        Some(_) => {
            return Err(refuse(
                "\"on_failure\" must be \"ignore\" or \"refuse\"".into(),
            ));
        }
    };
    let hook = Hook {
        name: name.clone(),
        moment: moment_name,
        matcher,
        matcher_source,
        condition: None,
        program: Program::Live {
            connection,
            client: client.to_string(),
        },
        timeout,
        timeout_given,
        on_failure,
        agents,
        env: Vec::new(),
        enabled: true,
        background: false,
        program_at: (0, 0),
        layer: crate::settings::Layer::User,
        dir: None,
        span: (0, 0),
    };
    if let Some(never) = hook.never_runs() {
        return Err(refuse(never.message));
    }
    Ok(LiveSpec { hook, session })
}

impl Hook {
    /// Whether it is a live hook (hung over the socket), not one of the settings'.
    pub fn is_live(&self) -> bool {
        matches!(self.program, Program::Live { .. })
    }

    /// Where the hook comes from when not the settings file, as the record and a fire's answer name it:
    /// `live:CLIENT` for a hook hung live over the socket.
    pub fn layer(&self) -> Option<String> {
        match &self.program {
            Program::Live { client, .. } => Some(format!("live:{client}")),
            _ => None,
        }
    }
}

/// Its matcher, read as the file's are; only where the moment has a field to match.
fn matcher(
    spec: &Map<String, Value>,
    moment_name: &str,
) -> Result<(Matcher, Option<String>), String> {
    let source = match spec.get("matcher") {
        None | Some(Value::Null) => return Ok((Matcher::Any, None)),
        Some(Value::String(source)) => source.clone(),
        Some(_) => return Err("\"matcher\" must be a string".into()),
    };
    if moment::known(moment_name).is_none_or(|m| m.matcher_field.is_none()) {
        return Err(format!(
            "{} has no field to match, so a matcher cannot be used there; remove it",
            moment::shown(moment_name)
        ));
    }
    match Matcher::parse(&source) {
        Ok(matcher) => Ok((matcher, Some(source))),
        Err(e) => {
            let detail = e.to_string();
            let detail = detail.lines().last().unwrap_or_default().trim();
            Err(format!(
                "invalid regex \"{}\" in matcher: {}",
                moment::shown(&source),
                detail.trim_start_matches("error: ")
            ))
        }
    }
}

/// Its agents: `None` for every agent; a name so close to one hookd knows that it is surely meant for it
/// is refused, as in the file.
fn agents(spec: &Map<String, Value>) -> Result<Option<Vec<String>>, String> {
    let items = match spec.get("agents") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(items)) if !items.is_empty() && items.len() <= 64 => items,
        Some(_) => {
            return Err(
                "\"agents\" must be a list of 1 to 64 agent names (leave it out for every agent)"
                    .into(),
            );
        }
    };
    let mut agents = Vec::with_capacity(items.len());
    for item in items {
        let name = match item {
            Value::String(name) if !name.is_empty() && name.len() <= MAX_AGENT_NAME => name,
            _ => {
                return Err(format!(
                    "\"agents\" must hold agent names: non-empty strings of at most {MAX_AGENT_NAME} bytes"
                ));
            }
        };
        if let Some(meant) = crate::settings::meant_agent(name) {
            return Err(format!(
                "unknown agent \"{}\" (did you mean \"{meant}\"?)",
                moment::shown(name)
            ));
        }
        agents.push(name.clone());
    }
    Ok(Some(agents))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings() -> Settings {
        Settings::parse(
            std::path::Path::new("h.toml"),
            "h.toml",
            "moments = [\"BeforeModel\"]\n",
        )
        .unwrap()
    }

    fn refused(spec: Value) -> String {
        match live_hook(&spec, &settings(), 1, "ide") {
            Ok(_) => panic!("taken: {spec}"),
            Err((_, reason)) => reason,
        }
    }

    #[test]
    fn a_live_hook_is_read_with_the_files_defaults() {
        let spec = json!({"name":"approve","moment":"PreToolUse","matcher":"Bash",
            "agents":["claude-code"],"session":"S1","timeout":30,"on_failure":"refuse"});
        let live = live_hook(&spec, &settings(), 7, "ide").unwrap();
        assert_eq!(live.session.as_deref(), Some("S1"));
        assert_eq!(live.hook.timeout, std::time::Duration::from_secs(30));
        assert_eq!(live.hook.on_failure, OnFailure::Refuse);
        assert_eq!(
            live.hook.program,
            Program::Live {
                connection: 7,
                client: "ide".into()
            }
        );
        let bare = live_hook(
            &json!({"name":"n","moment":"BeforeModel"}),
            &settings(),
            1,
            "c",
        )
        .unwrap();
        assert_eq!(bare.hook.on_failure, OnFailure::Ignore);
        assert_eq!(bare.session, None);
    }

    #[test]
    fn a_live_hook_that_can_never_run_is_refused_with_why() {
        assert_eq!(
            refused(json!({"name":"a","moment":"PreToolUze"})),
            "unknown moment \"PreToolUze\" (did you mean \"PreToolUse\"?)"
        );
        let never =
            refused(json!({"name":"a","moment":"PermissionRequest","agents":["gemini-cli"]}));
        assert!(
            never.starts_with("gemini-cli never fires PermissionRequest"),
            "{never}"
        );
        assert_eq!(
            refused(json!({"name":"a","moment":"Stop","matcher":"Bash"})),
            "Stop has no field to match, so a matcher cannot be used there; remove it"
        );
        assert!(
            refused(json!({"name":"a","moment":"PreToolUse","matcher":"|"})).contains("names no")
        );
        assert_eq!(
            refused(json!({"name":"a","moment":"Stop","sesion":"S1"})),
            "unknown member \"sesion\" (did you mean \"session\"?)"
        );
        assert!(
            refused(json!({"name":"a","moment":"Stop","agents":["claude"]}))
                .contains("did you mean \"claude-code\"")
        );
        assert!(refused(json!({"name":"hookd:x","moment":"Stop"})).contains("hookd's own"));
        assert!(refused(json!({"name":"a","moment":"Stop","timeout":0})).contains("timeout"));
        assert!(
            refused(json!({"name":"a","moment":"Stop","on_failure":"deny"})).contains("on_failure")
        );
        assert!(refused(json!({"moment":"Stop"})).contains("name"));
        assert!(refused(json!(["a"])).contains("object"));
    }
}
