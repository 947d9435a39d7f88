//! The code that speaks to each agent: its dialect (reading its hook input, writing the answer),
//! `--print-settings` ([`snippet`]) and `hookd import` ([`import`]). What is data about an agent (its
//! names, tools, dialect, settings file) is its row in [`crate::agent::AGENTS`]; which moments it fires,
//! and as what, is in the moment rows of [`crate::moment::KNOWN`]. Re-exported here for the floors above.

use crate::limits::{AGENT_LIMIT_MARGIN, RELAY_TIMEOUT_SECS};

pub mod dialect;
pub mod import;
pub mod snippet;

pub use crate::agent::{AGENTS, Agent, AgentRow, Dialect, SettingsFormat};

/// Claude Code's name for another agent's tool (Gemini CLI's `run_shell_command`), when there is one.
pub fn claude_tool_name(tool: &str) -> Option<&'static str> {
    Agent::ALL
        .into_iter()
        .find_map(|agent| agent.claude_tool_name(tool))
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
            time_limit_warnings(moment, hook, &mut warnings);
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

/// A line for each agent `hook` applies to that waits less at `moment` than the hook may run (Claude
/// Code's SessionEnd, say): the relay stops waiting before the agent does ([`AGENT_LIMIT_MARGIN`]
/// sooner), and the hook is stopped with it.
fn time_limit_warnings(moment: &str, hook: &crate::settings::Hook, warnings: &mut Vec<String>) {
    let applies_to = |agent: &Agent| {
        hook.agents
            .as_ref()
            .is_none_or(|names| names.iter().any(|name| name == agent.name()))
    };
    for agent in Agent::ALL.iter().filter(|agent| applies_to(agent)) {
        let Some(limit) = agent.time_limit(moment) else {
            continue;
        };
        let fits = limit.saturating_sub(AGENT_LIMIT_MARGIN);
        if hook.timeout > fits {
            warnings.push(format!(
                "hook \"{}\" may run {}s, but {} waits at most {}s for its hooks at {moment}: hookd relay stops waiting after {}s and the hook is stopped with it; give it a timeout of at most {}s (or scope it away from {} with agents)",
                hook.name,
                hook.timeout.as_secs_f64(),
                agent.display_name(),
                limit.as_secs_f64(),
                fits.as_secs_f64(),
                fits.as_secs_f64(),
                agent.name()
            ));
        }
    }
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
