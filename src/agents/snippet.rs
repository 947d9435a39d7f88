//! `hookd relay --print-settings AGENT`: the snippet for an agent's own settings file that routes every
//! moment it has through `hookd relay --agent AGENT`.
//!
//! Each agent reads its hooks in its own shape (its row's [`AgentSettings`](crate::tables::agent::AgentSettings);
//! docs/agents.md): Claude Code and Gemini CLI from JSON (Gemini with its own event names, named hooks
//! and a timeout in milliseconds), Codex from TOML, where a hook also needs a trust record or Codex skips
//! it without a word. The snippet is printed, never written:
//! the user's settings file holds other things that only they should merge.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::limits::AGENT_TIMEOUT_SECS;
use crate::tables::agent::{Agent, SettingsFormat};
use crate::tables::moment;

/// The relay options given beside `--print-settings`, carried into the printed command so that the
/// agent runs the relay exactly as the user asked for it.
#[derive(Debug, Default, Clone)]
pub struct RelayFlags {
    /// `--socket PATH`: needed whenever the daemon is not on the default socket, because the agents
    /// do not all pass the environment on to their hooks (Gemini CLI cleans it), so `XDG_RUNTIME_DIR`
    /// cannot be relied on to find it.
    pub socket: Option<PathBuf>,
    /// `--fail-closed`.
    pub fail_closed: bool,
}

/// The text to print for `agent`; `hookd` is the absolute path of the hookd binary.
pub fn for_agent(agent: Agent, hookd: &str, flags: &RelayFlags) -> Result<String, String> {
    let command = relay_command(agent, hookd, flags);
    Ok(match agent.row().settings.format {
        SettingsFormat::Json => json_snippet(agent, &command),
        SettingsFormat::CodexToml => codex_snippet(&command, &codex_config_path()?),
        SettingsFormat::CopilotJson => copilot_snippet(agent, &command),
    })
}

/// `<hookd> relay --agent <name>`, or `<hookd-relay> --agent <name>` when `hookd` is the relay's own
/// program ([`RELAY_PROGRAM`]), with the path quoted for the shell when it needs it: every agent runs the
/// command through a shell (`/bin/sh -c`, `bash -c`, `$SHELL -lc`).
pub fn relay_command(agent: Agent, hookd: &str, flags: &RelayFlags) -> String {
    let relay = if is_relay_program(hookd) {
        ""
    } else {
        " relay"
    };
    format!(
        "{}{relay} --agent {}{}",
        shell_quote(hookd),
        agent.name(),
        flag_words(flags)
    )
}

/// `flags` as command-line words, each after a space: for the relay's command, and for a setup to run
/// again with the same ones.
pub fn flag_words(flags: &RelayFlags) -> String {
    let mut words = String::new();
    if let Some(socket) = &flags.socket {
        // Absolute: the agent runs the command in its own project folder, not where this was printed.
        let socket = std::path::absolute(socket).unwrap_or_else(|_| socket.clone());
        words.push_str(" --socket ");
        words.push_str(&shell_quote(&socket.to_string_lossy()));
    }
    if flags.fail_closed {
        words.push_str(" --fail-closed");
    }
    words
}

/// The file name of `hookd relay` as a program of its own (`src/bin/hookd-relay.rs`), installed beside
/// `hookd`.
pub const RELAY_PROGRAM: &str = "hookd-relay";

/// The file name of the relay with no libc (`lite/`), which pipes the call to the daemon's `relay`
/// request and hands anything else to [`RELAY_PROGRAM`]; installed beside `hookd` with
/// `cargo install --path lite`.
pub const LITE_RELAY_PROGRAM: &str = "hookd-relay-lite";

/// Whether `program` (a path, or a bare name) is [`RELAY_PROGRAM`] or [`LITE_RELAY_PROGRAM`]: the relay,
/// with the same command line, and no `relay` word before it.
pub fn is_relay_program(program: &str) -> bool {
    std::path::Path::new(program)
        .file_name()
        .is_some_and(|name| name == RELAY_PROGRAM || name == LITE_RELAY_PROGRAM)
}

/// A word as the shell reads it back: as is when it holds only characters the shell leaves alone, else
/// in single quotes.
pub(crate) fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The matcher that lets every event through, on the moments that have a field to match. Claude Code and
/// Gemini CLI both read `"*"` as "everything"; on moments without a matcher field it is left out, as
/// Claude Code's documentation writes them.
pub(crate) fn match_all(moment: &str) -> Option<&'static str> {
    moment::known(moment)
        .and_then(|m| m.matcher_field)
        .map(|_| "*")
}

/// An agent's settings.json (Claude Code's, Gemini CLI's) with `command` as the hook of every moment.
fn json_snippet(agent: Agent, command: &str) -> String {
    settings_json(agent, &command_hook(agent, command))
}

/// One command hook in `agent`'s settings.json.
pub(crate) fn command_hook(agent: Agent, command: &str) -> Value {
    let settings = agent.row().settings;
    let timeout = if settings.timeout_in_ms {
        AGENT_TIMEOUT_SECS * 1000
    } else {
        AGENT_TIMEOUT_SECS
    };
    let mut hook = json!({"type": "command", "command": command, "timeout": timeout});
    // Gemini CLI names its hooks (in its logs and `hooksConfig.disabled`).
    if settings.named_hooks {
        hook["name"] = json!("hookd");
    }
    hook
}

/// `{"hooks": {EVENT: [{matcher?, hooks: [hook]}]}}`, for every moment `agent` fires.
fn settings_json(agent: Agent, hook: &Value) -> String {
    settings_json_with(agent, |_| hook.clone())
}

/// As `settings_json`, with the hook chosen per moment.
fn settings_json_with(agent: Agent, hook_for: impl Fn(&str) -> Value) -> String {
    let mut events = Map::new();
    for moment in agent.moments() {
        let mut group = json!({ "hooks": [hook_for(moment)] });
        if let Some(matcher) = match_all(moment) {
            group["matcher"] = json!(matcher);
        }
        events.insert(agent.event_name_of(moment).to_string(), json!([group]));
    }
    let settings = json!({ "hooks": events });
    // A `Value` is always representable as JSON: its keys are strings and its numbers finite.
    let mut text = serde_json::to_string_pretty(&settings).expect("a JSON value serializes");
    text.push('\n');
    text
}

/// GitHub Copilot CLI's hooks file ([`SettingsFormat::CopilotJson`]): `{"version": 1, "hooks": {event:
/// [hook]}}`, a flat list per event (no matcher: every tool), each hook's command telling the relay its
/// event with `--event`, since Copilot's hook input names none. The same object is what the `hooks` of
/// `~/.copilot/settings.json` holds.
fn copilot_snippet(agent: Agent, command: &str) -> String {
    let mut events = Map::new();
    for moment in agent.moments() {
        let event = agent.event_name_of(moment);
        events.insert(event.to_string(), json!([copilot_hook(command, event)]));
    }
    let settings = json!({"version": 1, "hooks": events});
    let mut text = serde_json::to_string_pretty(&settings).expect("a JSON value serializes");
    text.push('\n');
    text
}

/// One of Copilot CLI's flat hooks: `command` told the event it serves.
pub(crate) fn copilot_hook(command: &str, event: &str) -> Value {
    json!({
        "type": "command",
        "bash": format!("{command} --event {event}"),
        "timeoutSec": AGENT_TIMEOUT_SECS,
    })
}

/// The environment variable Claude Code fills the `Authorization` header from (`allowedEnvVars`).
pub const TOKEN_VAR: &str = "HOOKD_TOKEN";

/// Refuses `--http` for an agent that runs no http hooks: said first, before anything else is looked
/// up (the settings file's listener, the port), so that the user learns what matters.
pub(crate) fn require_http(agent: Agent) -> Result<(), String> {
    if !agent.row().settings.http_hooks {
        let with_http: Vec<&str> = Agent::ALL
            .into_iter()
            .filter(|a| a.row().settings.http_hooks)
            .map(Agent::name)
            .collect();
        return Err(format!(
            "{} has no http hooks: --http is for {} only; hookd relay --print-settings {} prints {}'s command hooks",
            agent.display_name(),
            with_http.join(", "),
            agent.name(),
            agent.display_name()
        ));
    }
    Ok(())
}

/// `hookd relay --print-settings claude-code --http`: Claude Code's settings.json with an http hook on
/// every moment, posting to the daemon's listener at `address` (the relay's command `relay_command` on the
/// moments Claude Code runs only command hooks on); and, for stderr (JSON has no comments), how the token
/// reaches Claude Code's environment, `token_file` being where the daemon keeps it.
pub fn http_snippet(
    agent: Agent,
    address: std::net::SocketAddr,
    token_file: &Path,
    relay_command: &str,
    fail_closed: bool,
) -> Result<(String, String), String> {
    require_http(agent)?;
    // A listener on every address (0.0.0.0, ::) is reached on loopback, which the Host check takes.
    let host = match address.ip() {
        std::net::IpAddr::V4(ip) if ip.is_unspecified() => "127.0.0.1".to_string(),
        std::net::IpAddr::V6(ip) if ip.is_unspecified() => "[::1]".to_string(),
        std::net::IpAddr::V4(ip) => ip.to_string(),
        std::net::IpAddr::V6(ip) => format!("[{ip}]"),
    };
    let url = format!("http://{host}:{}/hooks/{}", address.port(), agent.name());
    let hook = json!({
        "type": "http",
        "url": url,
        "headers": {"Authorization": format!("Bearer ${TOKEN_VAR}")},
        "allowedEnvVars": [TOKEN_VAR],
        "timeout": AGENT_TIMEOUT_SECS,
    });
    let token = shell_quote(&token_file.to_string_lossy());
    let note = format!(
        "# Claude Code fills ${TOKEN_VAR} in the Authorization header from its own environment (allowedEnvVars):\n\
         # start it from a shell where\n\
         #   export {TOKEN_VAR}=\"$(cat {token})\"\n\
         # (hookd makes that file, mode 0600, when its http listener first starts, and keeps it across\n\
         # restarts and reboots; it changes only when you remove it).\n{}",
        if fail_closed {
            "# hookd down, its listener off, or an answer it cannot read: onFailure \"block\" refuses the tool\n\
             # (and the prompt); Stop, SubagentStop and SessionEnd go on, as with hookd relay --fail-closed.\n"
        } else {
            "# hookd down, or its listener off: Claude Code reports a non-blocking hook error and the tool runs.\n\
             # To refuse instead: hookd relay --print-settings claude-code --http --fail-closed\n"
        }
    );
    let command_hook = command_hook(agent, relay_command);
    let settings = settings_json_with(agent, |moment| {
        if agent.command_only(moment) {
            command_hook.clone()
        } else if fail_closed && refusal_holds_back(agent, moment) {
            // The url says so too: the agent does not tell hookd how it treats a failed hook, and the
            // managed layer's `require_fail_closed` refuses an http hook that does not say it blocks.
            let mut hook = hook.clone();
            hook["onFailure"] = json!("block");
            hook["url"] = json!(format!("{url}?fail_closed=1"));
            hook
        } else {
            hook.clone()
        }
    });
    Ok((settings, note))
}

/// Whether a refusal of `agent` at `moment` holds something back: where `--fail-closed` refuses when
/// hookd cannot answer. Not at a Stop (it would send the agent on, with no stop cap), nor once the
/// session is over, nor where the agent only takes advice (as `hookd relay --fail-closed`).
fn refusal_holds_back(agent: Agent, moment: &str) -> bool {
    let advisory = moment::known(moment).is_some_and(|m| {
        m.fired_by
            .iter()
            .any(|fired| fired.agent == agent && fired.advisory)
    });
    moment::refusal(moment) == moment::Refusal::HoldsBack && !advisory
}

/// Codex's name for a moment in its trust keys and hashes: `PreToolUse` -> `pre_tool_use`.
pub(crate) fn codex_event_label(moment: &str) -> String {
    let mut label = String::new();
    for (i, c) in moment.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                label.push('_');
            }
            label.push(c.to_ascii_lowercase());
        } else {
            label.push(c);
        }
    }
    label
}

/// The hash Codex records to trust one hook: sha256 over the compact, key-sorted JSON of the hook's
/// normalized identity (agents.md, checked on Codex 0.171.0). serde_json's `Map` is a `BTreeMap`, so
/// `to_string` of a `json!` value is exactly that.
pub fn codex_trusted_hash(
    event_label: &str,
    matcher: Option<&str>,
    command: &str,
    timeout: u64,
) -> String {
    let mut identity = json!({
        "event_name": event_label,
        "hooks": [{"type": "command", "command": command, "timeout": timeout, "async": false}],
    });
    if let Some(matcher) = matcher {
        identity["matcher"] = Value::String(matcher.to_string());
    }
    let compact = serde_json::to_string(&identity).expect("a JSON value serializes");
    let digest = Sha256::digest(compact.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`, as Codex finds it: it canonicalizes
/// `CODEX_HOME` (so a symlinked home is named by its target in the trust keys) and takes `~/.codex` as is.
pub(crate) fn codex_config_path() -> Result<String, String> {
    let path = Agent::Codex.row().settings.default_file.path()?;
    path.to_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{}: not a UTF-8 path", path.display()))
}

/// The timeout of Codex's hook at `moment`, in seconds: the relay's, or the shorter limit Codex holds its
/// hooks to there (SessionEnd, Interrupt: 3 s). Codex clamps a longer one and hashes the clamped value
/// into the trust record (seen on 0.171.0: a record hashed with 120 left the hook untrusted, skipped
/// without a word), so the snippet writes what Codex will use.
pub(crate) fn codex_timeout(moment: &str) -> u64 {
    Agent::Codex
        .time_limit(moment)
        .map_or(AGENT_TIMEOUT_SECS, |limit| {
            limit.as_secs().clamp(1, AGENT_TIMEOUT_SECS)
        })
}

/// A TOML string value, written by the toml crate so that every character is escaped as TOML wants.
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// A quoted TOML key: always a one-line basic string (a value may be written multi-line, a key may not).
fn toml_key(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Codex's config.toml ([`SettingsFormat::CodexToml`]): one group per moment, then the trust records that make Codex run them.
fn codex_snippet(command: &str, config_path: &str) -> String {
    let agent = Agent::Codex;
    let mut groups = String::new();
    let mut trust = String::new();
    for moment in agent.moments() {
        let event = agent.event_name_of(moment);
        let matcher = match_all(moment);
        groups.push_str(&format!("[[hooks.{event}]]\n"));
        if let Some(matcher) = matcher {
            groups.push_str(&format!("matcher = {}\n", toml_string(matcher)));
        }
        let timeout = codex_timeout(moment);
        groups.push_str(&format!(
            "\n[[hooks.{event}.hooks]]\ntype = \"command\"\ncommand = {}\ntimeout = {timeout}\n\n",
            toml_string(command)
        ));
        let label = codex_event_label(moment);
        // This group is the first under its event and holds one hook: index 0:0.
        let key = format!("{config_path}:{label}:0:0");
        let hash = codex_trusted_hash(&label, matcher, command, timeout);
        trust.push_str(&format!(
            "[hooks.state.{}]\ntrusted_hash = {}\n\n",
            toml_key(&key),
            toml_string(&hash)
        ));
    }
    let file = Path::new(config_path).display();
    let mut text = format!(
        "# hookd relay for Codex CLI: paste this into {file}\n\
         # ({}).\n\
         #\n\
         # Codex runs only the hooks it trusts and skips the others without a word: the\n\
         # [hooks.state.\"FILE:EVENT:GROUP:HOOK\"] records at the end are that trust. They name this\n\
         # file and each hook's place in it (0 is the first), so they hold only while each group below\n\
         # is the first of its event in this file: paste it above any [[hooks.EVENT]] already there,\n\
         # or change the GROUP index in its record.\n\n",
        agent.row().settings.file
    );
    text.push_str(&groups);
    text.push_str(&trust);
    text.truncate(text.trim_end().len());
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOOKD: &str = "/usr/local/bin/hookd";

    fn json(agent: Agent) -> Value {
        let text = for_agent(agent, HOOKD, &RelayFlags::default()).unwrap();
        assert!(text.ends_with("}\n"), "{text}");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}:\n{text}"))
    }

    #[test]
    fn claude_code_gets_every_moment_with_a_matcher_only_where_one_applies() {
        let settings = json(Agent::ClaudeCode);
        let events = settings["hooks"].as_object().unwrap();
        assert_eq!(events.len(), Agent::ClaudeCode.moments().len());
        for m in moment::KNOWN
            .iter()
            .filter(|m| Agent::ClaudeCode.fires(m.name))
        {
            let group = &events[m.name][0];
            let hook = &group["hooks"][0];
            assert_eq!(
                hook,
                &json!({"type": "command", "command": "/usr/local/bin/hookd relay --agent claude-code", "timeout": 120}),
                "{}",
                m.name
            );
            match m.matcher_field {
                Some(_) => assert_eq!(group["matcher"], "*", "{}", m.name),
                None => assert!(group.get("matcher").is_none(), "{}", m.name),
            }
        }
    }

    #[test]
    fn gemini_cli_gets_its_own_event_names_and_milliseconds() {
        let settings = json(Agent::GeminiCli);
        let events = settings["hooks"].as_object().unwrap();
        let mut names: Vec<&str> = events.keys().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "AfterAgent",
                "AfterTool",
                "BeforeAgent",
                "BeforeTool",
                "Notification",
                "PreCompress",
                "SessionEnd",
                "SessionStart"
            ]
        );
        assert_eq!(
            events["BeforeTool"][0],
            json!({"matcher": "*", "hooks": [{"name": "hookd", "type": "command", "command": "/usr/local/bin/hookd relay --agent gemini-cli", "timeout": 120000}]})
        );
        assert!(events["BeforeAgent"][0].get("matcher").is_none());
    }

    #[test]
    fn qwen_code_gets_claude_event_names_and_seconds() {
        let settings = json(Agent::QwenCode);
        let events = settings["hooks"].as_object().unwrap();
        let names: Vec<&str> = events.keys().map(String::as_str).collect();
        let mut moments = Agent::QwenCode.moments();
        moments.sort_unstable();
        assert_eq!(names, moments, "each moment under hookd's own name");
        assert!(names.contains(&"PermissionRequest") && names.contains(&"Stop"));
        assert_eq!(
            events["PreToolUse"][0],
            json!({"matcher": "*", "hooks": [{"type": "command", "command": "/usr/local/bin/hookd relay --agent qwen-code", "timeout": 120}]})
        );
        assert!(events["Stop"][0].get("matcher").is_none());
    }

    #[test]
    fn codex_gets_its_moments_and_a_trust_record_for_each() {
        let command = relay_command(Agent::Codex, HOOKD, &RelayFlags::default());
        let text = codex_snippet(&command, "/home/me/.codex/config.toml");
        assert!(
            text.starts_with(
                "# hookd relay for Codex CLI: paste this into /home/me/.codex/config.toml\n"
            ),
            "{text}"
        );
        let value: toml::Value = toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let hooks = value["hooks"].as_table().unwrap();
        let state = hooks["state"].as_table().unwrap();
        for moment in Agent::Codex.moments() {
            let group = &hooks[moment].as_array().unwrap()[0];
            let hook = &group["hooks"].as_array().unwrap()[0];
            assert_eq!(hook["type"].as_str(), Some("command"));
            assert_eq!(
                hook["command"].as_str(),
                Some("/usr/local/bin/hookd relay --agent codex")
            );
            // Codex holds SessionEnd and Interrupt hooks to 3 s, and hashes the 3.
            let timeout = if ["SessionEnd", "Interrupt"].contains(&moment) {
                3
            } else {
                120
            };
            assert_eq!(hook["timeout"].as_integer(), Some(timeout), "{moment}");
            let matcher = group.get("matcher").and_then(toml::Value::as_str);
            let label = codex_event_label(moment);
            let record = &state[&format!("/home/me/.codex/config.toml:{label}:0:0")];
            assert_eq!(
                record["trusted_hash"].as_str().unwrap(),
                codex_trusted_hash(&label, matcher, &command, timeout as u64)
            );
        }
        assert_eq!(hooks.len(), Agent::Codex.moments().len() + 1);
        for event in [
            "PreToolUse",
            "PermissionRequest",
            "PostToolUse",
            "PreCompact",
            "PostCompact",
            "UserPromptSubmit",
            "SubagentStart",
            "SubagentStop",
            "Stop",
            "SessionStart",
            "SessionEnd",
            "Interrupt",
            "PreModelRequest",
            "PostModelRequest",
        ] {
            assert!(hooks.contains_key(event), "{event} missing:\n{text}");
        }
        assert_eq!(state.len(), Agent::Codex.moments().len());
        assert_eq!(
            hooks["PreToolUse"][0]["matcher"].as_str(),
            Some("*"),
            "a tool moment matches every tool"
        );
        assert!(hooks["Stop"][0].get("matcher").is_none());
        // Codex takes no matcher at a model request, and leaves one out of the trust hash.
        assert!(hooks["PreModelRequest"][0].get("matcher").is_none());
        assert!(hooks["PostModelRequest"][0].get("matcher").is_none());
        assert_eq!(hooks["SessionEnd"][0]["matcher"].as_str(), Some("*"));
    }

    #[test]
    fn the_codex_hash_is_the_one_codex_computes() {
        // Computed independently, once:
        // python3 -c 'import hashlib,json; d={"event_name":"pre_tool_use","matcher":"*","hooks":[{"type":"command","command":"/usr/local/bin/hookd relay --agent codex","timeout":120,"async":False}]}; print(hashlib.sha256(json.dumps(d,sort_keys=True,separators=(",",":")).encode()).hexdigest())'
        assert_eq!(
            codex_trusted_hash(
                "pre_tool_use",
                Some("*"),
                "/usr/local/bin/hookd relay --agent codex",
                120
            ),
            "sha256:8c739b5040cc2352363eb2e3f0b5efad24b94a8a2042bc96abca603b66c4fe87"
        );
        // python3 -c 'import hashlib,json; d={"event_name":"stop","hooks":[{"type":"command","command":"/usr/local/bin/hookd relay --agent codex","timeout":120,"async":False}]}; print(hashlib.sha256(json.dumps(d,sort_keys=True,separators=(",",":")).encode()).hexdigest())'
        assert_eq!(
            codex_trusted_hash(
                "stop",
                None,
                "/usr/local/bin/hookd relay --agent codex",
                120
            ),
            "sha256:bf7ddcfb3067b07a5a28313ca75e6e88cd59a3a1201f8a46b0bb4f8a32517742"
        );
    }

    #[test]
    fn http_snippet_posts_every_moment_but_session_start_which_goes_through_the_relay() {
        let relay = format!("{HOOKD} relay --agent claude-code --socket /run/h.sock");
        let (text, note) = http_snippet(
            Agent::ClaudeCode,
            "127.0.0.1:8787".parse().unwrap(),
            Path::new("/run/http-token"),
            &relay,
            false,
        )
        .unwrap();
        let settings: Value = serde_json::from_str(&text).unwrap();
        let hooks = settings["hooks"].as_object().unwrap();
        assert!(hooks.len() > 5, "{text}");
        for (event, groups) in hooks {
            let hook = &groups[0]["hooks"][0];
            if event == "SessionStart" {
                assert_eq!(hook["type"], "command", "{text}");
                assert_eq!(hook["command"], relay.as_str(), "{text}");
            } else {
                assert_eq!(hook["type"], "http", "{event}: {text}");
                assert_eq!(hook["url"], "http://127.0.0.1:8787/hooks/claude-code");
                assert_eq!(hook["headers"]["Authorization"], "Bearer $HOOKD_TOKEN");
                assert_eq!(hook["allowedEnvVars"], json!(["HOOKD_TOKEN"]));
                assert!(hook.get("onFailure").is_none(), "{event}: fail-open");
            }
        }
        assert!(note.contains("/run/http-token"), "{note}");
        let refused = http_snippet(
            Agent::Codex,
            "127.0.0.1:8787".parse().unwrap(),
            Path::new("/t"),
            &relay,
            false,
        );
        assert!(refused.is_err());
    }

    #[test]
    fn relay_flags_are_carried_into_the_command() {
        let flags = RelayFlags {
            socket: Some(PathBuf::from("/run/user/1000/my hookd/s.sock")),
            fail_closed: true,
        };
        assert_eq!(
            relay_command(Agent::GeminiCli, HOOKD, &flags),
            format!(
                "{HOOKD} relay --agent gemini-cli --socket '/run/user/1000/my hookd/s.sock' --fail-closed"
            )
        );
        let text = for_agent(Agent::ClaudeCode, HOOKD, &flags).unwrap();
        assert!(text.contains("--fail-closed"), "{text}");
        let relative = RelayFlags {
            socket: Some(PathBuf::from("run/s.sock")),
            fail_closed: false,
        };
        let command = relay_command(Agent::Codex, HOOKD, &relative);
        let written = command.rsplit(' ').next().unwrap();
        assert!(
            Path::new(written).is_absolute() && written.ends_with("/run/s.sock"),
            "{command}"
        );
    }

    #[test]
    fn copilot_cli_gets_a_flat_hook_per_native_event_each_naming_its_event() {
        let settings = json(Agent::CopilotCli);
        assert_eq!(settings["version"], 1);
        let events = settings["hooks"].as_object().unwrap();
        assert_eq!(events.len(), Agent::CopilotCli.moments().len());
        assert_eq!(
            events["preToolUse"],
            json!([{"type": "command", "bash": "/usr/local/bin/hookd relay --agent copilot-cli --event preToolUse", "timeoutSec": 120}])
        );
        for name in [
            "agentStop",
            "permissionRequest",
            "userPromptSubmitted",
            "sessionEnd",
        ] {
            let bash = events[name][0]["bash"].as_str().unwrap();
            assert!(bash.ends_with(&format!(" --event {name}")), "{bash}");
        }
    }

    #[test]
    fn event_labels_are_snake_case() {
        assert_eq!(codex_event_label("PreToolUse"), "pre_tool_use");
        assert_eq!(codex_event_label("UserPromptSubmit"), "user_prompt_submit");
        assert_eq!(codex_event_label("Stop"), "stop");
        assert_eq!(codex_event_label("SessionStart"), "session_start");
    }

    #[test]
    fn an_odd_binary_path_is_quoted_for_the_shell_and_for_toml() {
        assert_eq!(
            relay_command(
                Agent::ClaudeCode,
                "/opt/my tools/it's/hookd",
                &RelayFlags::default()
            ),
            r"'/opt/my tools/it'\''s/hookd' relay --agent claude-code"
        );
        let command = relay_command(Agent::Codex, "/opt/\"q\"\\/hookd", &RelayFlags::default());
        let text = codex_snippet(&command, "/home/\"me\"\\x/.codex/config.toml");
        let value: toml::Value = toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(
            value["hooks"]["Stop"][0]["hooks"][0]["command"].as_str(),
            Some(command.as_str())
        );
        assert!(
            value["hooks"]["state"]
                .as_table()
                .unwrap()
                .contains_key("/home/\"me\"\\x/.codex/config.toml:stop:0:0")
        );
    }
}
