//! What hookd knows of the agents it plugs into: their names, the moments each one fires, and Gemini
//! CLI's names for moments and tools, so that one settings file and one matcher serve every agent.

use crate::limits::RELAY_TIMEOUT_SECS;

pub mod dialect;
pub mod import;
pub mod snippet;

/// An agent with hook settings of its own, that `hookd relay` speaks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    ClaudeCode,
    Codex,
    GeminiCli,
}

/// Gemini CLI's event names and the moments they are (contract 12). Its other events (`BeforeModel`,
/// `AfterModel`, `BeforeToolSelection`) have no counterpart and keep their own names.
pub const GEMINI_MOMENTS: &[(&str, &str)] = &[
    ("BeforeTool", "PreToolUse"),
    ("AfterTool", "PostToolUse"),
    ("BeforeAgent", "UserPromptSubmit"),
    ("AfterAgent", "Stop"),
    ("PreCompress", "PreCompact"),
    ("SessionStart", "SessionStart"),
    ("SessionEnd", "SessionEnd"),
    ("Notification", "Notification"),
];

/// Gemini CLI's tool names and Claude Code's, which hooks see (contract 12).
pub const GEMINI_TOOLS: &[(&str, &str)] = &[
    ("run_shell_command", "Bash"),
    ("replace", "Edit"),
    ("write_file", "Write"),
    ("read_file", "Read"),
    ("grep_search", "Grep"),
    ("glob", "Glob"),
    ("list_directory", "LS"),
    ("web_fetch", "WebFetch"),
    ("google_web_search", "WebSearch"),
];

/// The moments Codex fires (seen on Codex CLI 0.171.0; `../shared/design/agents.md`).
const CODEX_MOMENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
];

impl Agent {
    pub const ALL: [Agent; 3] = [Agent::ClaudeCode, Agent::Codex, Agent::GeminiCli];

    /// The agent's name, as in `--agent` and in a hook's `agents`.
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::GeminiCli => "gemini-cli",
        }
    }

    pub fn from_name(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|agent| agent.name() == name)
    }

    /// The moments (hookd's names) this agent fires.
    pub fn moments(self) -> Vec<&'static str> {
        match self {
            Agent::ClaudeCode => crate::moment::KNOWN.iter().map(|m| m.name).collect(),
            Agent::Codex => CODEX_MOMENTS.to_vec(),
            Agent::GeminiCli => GEMINI_MOMENTS.iter().map(|(_, moment)| *moment).collect(),
        }
    }

    /// Whether this agent ever fires `moment`.
    pub fn fires(self, moment: &str) -> bool {
        self.moments().contains(&moment)
    }

    /// The moment an event of this agent is, from its `hook_event_name`.
    pub fn moment_of(self, event_name: &str) -> String {
        match self {
            Agent::GeminiCli => GEMINI_MOMENTS
                .iter()
                .find(|(gemini, _)| *gemini == event_name)
                .map_or(event_name, |(_, moment)| moment)
                .to_string(),
            _ => event_name.to_string(),
        }
    }

    /// The agent's own name for a moment (Gemini's `BeforeTool` for `PreToolUse`).
    pub fn event_name_of(self, moment: &str) -> &str {
        match self {
            Agent::GeminiCli => GEMINI_MOMENTS
                .iter()
                .find(|(_, m)| *m == moment)
                .map_or(moment, |(gemini, _)| gemini),
            _ => moment,
        }
    }
}

/// Claude Code's name for one of Gemini CLI's tools, when there is one.
pub fn claude_tool_name(gemini_tool: &str) -> Option<&'static str> {
    GEMINI_TOOLS
        .iter()
        .find(|(gemini, _)| *gemini == gemini_tool)
        .map(|(_, claude)| *claude)
}

/// A line for each hook that is valid but will not do what it seems to, for agents: one scoped to a known
/// agent on a moment that agent never fires, and one whose timeout is past what `hookd relay` waits by
/// default (the relay would give up first, letting the agent go on even when the hook would refuse).
pub fn settings_warnings(settings: &crate::settings::Settings) -> Vec<String> {
    let mut warnings = Vec::new();
    for (moment, hooks) in &settings.hooks {
        for hook in hooks.iter().filter(|h| h.enabled) {
            if hook.timeout.as_secs_f64() >= RELAY_TIMEOUT_SECS {
                warnings.push(format!(
                    "hook \"{}\" may run {}s, past the {}s hookd relay waits by default: raise the relay's --timeout (and the agent's own hook timeout above it)",
                    hook.name,
                    hook.timeout.as_secs_f64(),
                    RELAY_TIMEOUT_SECS
                ));
            }
            for name in hook.agents.iter().flatten() {
                if let Some(agent) = Agent::from_name(name).filter(|agent| !agent.fires(moment)) {
                    warnings.push(format!(
                        "hook \"{}\" is for {}, which never fires {moment}: it will not run for {}",
                        hook.name,
                        agent.name(),
                        agent.name()
                    ));
                }
            }
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_names_map_both_ways() {
        assert_eq!(Agent::GeminiCli.moment_of("BeforeTool"), "PreToolUse");
        assert_eq!(Agent::GeminiCli.moment_of("AfterAgent"), "Stop");
        assert_eq!(Agent::GeminiCli.moment_of("BeforeModel"), "BeforeModel");
        assert_eq!(
            Agent::GeminiCli.event_name_of("UserPromptSubmit"),
            "BeforeAgent"
        );
        assert_eq!(Agent::ClaudeCode.moment_of("BeforeTool"), "BeforeTool");
        assert_eq!(claude_tool_name("run_shell_command"), Some("Bash"));
        assert_eq!(claude_tool_name("Bash"), None);
    }

    #[test]
    fn warns_of_a_hook_scoped_to_an_agent_on_a_moment_it_never_fires() {
        let text = "[[hooks.PostToolUseFailure]]\nname = \"x\"\ncommand = \"true\"\nagents = [\"codex\", \"claude-code\", \"my-sdk-agent\"]\n";
        let settings =
            crate::settings::Settings::parse(std::path::Path::new("h.toml"), "h.toml", text)
                .unwrap();
        assert_eq!(
            settings_warnings(&settings),
            vec![
                "hook \"x\" is for codex, which never fires PostToolUseFailure: it will not run for codex"
            ]
        );
    }

    #[test]
    fn each_agent_fires_its_own_moments() {
        assert!(Agent::ClaudeCode.fires("PostToolUseFailure"));
        assert!(!Agent::Codex.fires("PostToolUseFailure"));
        assert!(Agent::Codex.fires("Stop"));
        assert!(Agent::GeminiCli.fires("PreCompact"));
        assert!(!Agent::GeminiCli.fires("PermissionRequest"));
        for agent in Agent::ALL {
            assert_eq!(Agent::from_name(agent.name()), Some(agent));
        }
    }
}
