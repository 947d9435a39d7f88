//! The code that speaks to each agent: its dialect (reading its hook input, writing the answer), the
//! relay's logic ([`relay`]), `--print-settings` ([`snippet`]) and `hookd import` ([`import`]). What is data about an agent (its
//! names, tools, dialect, settings file) is its row in [`crate::tables::agent::AGENTS`]; which moments it fires,
//! and as what, is in the moment rows of [`crate::tables::moment::KNOWN`]. Re-exported here for the floors above.

use crate::limits::{HOOK_LIMIT_MARGIN, RELAY_TIMEOUT_SECS, SHORT_COMMAND_TIMEOUT_SECS};

pub mod dialect;
pub mod import;
pub mod relay;
pub mod setup;
pub mod setups;
pub mod snippet;

pub use crate::tables::agent::{AGENTS, Agent, AgentRow, Dialect, SettingsFormat};

/// A line for each hook that is valid but will not do what it seems to, for agents: one scoped to a known
/// agent on a moment that agent never fires, beside another of its agents that does (a hook none of
/// whose agents fires its moment is refused by the validation: `Hook::never_runs`), and one whose
/// timeout is past what `hookd relay` waits by default (the relay would give up first, letting the agent
/// go on even when the hook would refuse).
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
            if let Some(warning) = short_timeout_warning(hook) {
                warnings.push(warning);
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
    warnings.extend(advisory_warnings(settings));
    warnings.extend(declared_agent_names(settings));
    warnings
}

/// A line for each declared moment that is an agent's own name for one of hookd's (`moments =
/// ["BeforeTool"]`): the relay fires that agent's event as hookd's moment, so hooks on the declared
/// name run only for a client that fires that name itself. A warning, not an error: the file declares
/// it on purpose, and a client of its own may fire a moment of that name.
fn declared_agent_names(settings: &crate::settings::Settings) -> Vec<String> {
    settings
        .extra_moments
        .iter()
        .filter_map(|name| {
            let (agent, meant) = crate::tables::moment::agent_name_for(name)?;
            Some(format!(
                "the declared moment \"{name}\" is {}'s name for {meant}: hookd relay --agent {} fires it as {meant}, so hooks on {name} run only for a client that fires \"{name}\" itself; hooks for {} belong under [[hooks.{meant}]]",
                agent.display_name(),
                agent.name(),
                agent.display_name()
            ))
        })
        .collect()
}

/// A line for each hook meant to refuse (`on_failure = "refuse"`) on a moment where an agent it runs for
/// only takes advice ([`Agent::advisory`]): that agent goes on whatever the hook says, and hookd answers
/// it so (docs/agents.md). A hook with no `agents` runs for every agent; one naming only agents of
/// their own (an SDK's) is not warned of. Hooks that merely may refuse are not warned of: most hooks at
/// those moments add context, and a warning on each would be noise.
fn advisory_warnings(settings: &crate::settings::Settings) -> Vec<String> {
    let mut warnings = Vec::new();
    for (moment, hooks) in &settings.hooks {
        for hook in hooks.iter().filter(|h| h.enabled) {
            if hook.on_failure != crate::settings::OnFailure::Refuse {
                continue;
            }
            let advising: Vec<String> = Agent::ALL
                .into_iter()
                .filter(|agent| {
                    hook.agents
                        .as_ref()
                        .is_none_or(|names| names.iter().any(|n| n == agent.name()))
                })
                .filter(|agent| agent.advisory(moment))
                .map(|agent| {
                    format!(
                        "{} (its {})",
                        agent.display_name(),
                        agent.event_name_of(moment)
                    )
                })
                .collect();
            if !advising.is_empty() {
                let (who, takes, it) = match advising.len() {
                    1 => (advising[0].clone(), "takes", "it"),
                    n => (
                        format!("{} and {}", advising[..n - 1].join(", "), advising[n - 1]),
                        "take",
                        "them",
                    ),
                };
                warnings.push(format!(
                    "hook \"{}\" has on_failure = \"refuse\" on {moment}, where {who} only {takes} advice: a refusal there does not stop {it}, and hookd answers it as advice",
                    hook.name
                ));
            }
        }
    }
    warnings
}

/// A line for a command hook given a timeout too short for a command to start and answer
/// ([`SHORT_COMMAND_TIMEOUT_SECS`]): it would fail at nearly every fire. A worker is left alone: it is
/// running already, and may answer within a few milliseconds.
fn short_timeout_warning(hook: &crate::settings::Hook) -> Option<String> {
    use crate::settings::Program;
    let seconds = hook.timeout.as_secs_f64();
    let command = matches!(hook.program, Program::Shell { .. } | Program::Argv(_));
    if !command || !hook.timeout_given || seconds >= SHORT_COMMAND_TIMEOUT_SECS {
        return None;
    }
    Some(format!(
        "hook \"{}\" has a timeout of {seconds}s ({} ms): too short for a command to start and answer, so it times out at nearly every fire; a timeout is in seconds (was {} meant?)",
        hook.name,
        (seconds * 1000.0).round(),
        meant_seconds(seconds)
    ))
}

/// What a timeout read as milliseconds gives in seconds, as a person would have meant it: `0.01` s
/// (`10` read as ms) was `timeout = 10`.
fn meant_seconds(seconds: f64) -> String {
    let ms = (seconds * 1000.0 * 1000.0).round() / 1000.0;
    format!("timeout = {ms}")
}

/// A line for each agent `hook` applies to that waits less at `moment` than the file gives the hook
/// (Claude Code's SessionEnd, say). hookd stops the hook for that agent [`HOOK_LIMIT_MARGIN`] before the
/// agent's limit, so that its verdict is heard; a timeout hookd chose itself is fitted so without a word,
/// one the file gives is said to be cut.
fn time_limit_warnings(moment: &str, hook: &crate::settings::Hook, warnings: &mut Vec<String>) {
    if !hook.timeout_given {
        return;
    }
    let applies_to = |agent: &Agent| {
        hook.agents
            .as_ref()
            .is_none_or(|names| names.iter().any(|name| name == agent.name()))
    };
    for agent in Agent::ALL.iter().filter(|agent| applies_to(agent)) {
        let Some(limit) = agent.time_limit(moment) else {
            continue;
        };
        let fits = limit.saturating_sub(HOOK_LIMIT_MARGIN);
        if hook.timeout > fits {
            warnings.push(format!(
                "hook \"{}\" is given {}s, but {} waits at most {}s for its hooks at {moment}: hookd stops it there after {}s (its on_failure then decides), so that the verdict is heard; give it a timeout of at most {}s (or scope it away from {} with agents)",
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
        assert_eq!(
            Agent::GeminiCli.claude_tool_name("run_shell_command"),
            Some("Bash")
        );
        assert_eq!(Agent::GeminiCli.claude_tool_name("Bash"), None);
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

    /// A command hook given 10 ms (Gemini CLI's `"timeout": 10` imported as it counts) is warned of; a
    /// worker, a hook given 0.1 s, and one whose timeout the file does not give are not.
    #[test]
    fn warns_of_a_command_hook_with_a_timeout_too_short_to_start() {
        let text = "[[hooks.Stop]]\nname = \"ten-ms\"\ncommand = \"true\"\ntimeout = 0.01\n\n[[hooks.Stop]]\nname = \"argv\"\nargv = [\"true\"]\ntimeout = 0.05\n\n[[hooks.Stop]]\nname = \"enough\"\ncommand = \"true\"\ntimeout = 0.1\n\n[[hooks.Stop]]\nname = \"worker\"\nworker = [\"cat\"]\ntimeout = 0.01\n";
        let settings =
            crate::settings::Settings::parse(std::path::Path::new("h.toml"), "h.toml", text)
                .unwrap();
        assert_eq!(
            settings_warnings(&settings),
            vec![
                "hook \"ten-ms\" has a timeout of 0.01s (10 ms): too short for a command to start and answer, so it times out at nearly every fire; a timeout is in seconds (was timeout = 10 meant?)",
                "hook \"argv\" has a timeout of 0.05s (50 ms): too short for a command to start and answer, so it times out at nearly every fire; a timeout is in seconds (was timeout = 50 meant?)",
            ]
        );
    }

    #[test]
    fn warns_of_a_hook_meant_to_refuse_where_an_agent_only_advises() {
        let text = r#"
[[hooks.PreCompact]]
name = "guard"
command = "true"
on_failure = "refuse"

[[hooks.PreCompact]]
name = "for-claude"
command = "true"
on_failure = "refuse"
agents = ["claude-code"]

[[hooks.PreCompact]]
name = "context"
command = "true"

[[hooks.PreToolUse]]
name = "tools"
command = "true"
on_failure = "refuse"
"#;
        let settings =
            crate::settings::Settings::parse(std::path::Path::new("h.toml"), "h.toml", text)
                .unwrap();
        assert_eq!(
            settings_warnings(&settings),
            vec![
                "hook \"guard\" has on_failure = \"refuse\" on PreCompact, where Gemini CLI (its PreCompress), Qwen Code (its PreCompact) and Copilot CLI (its preCompact) only take advice: a refusal there does not stop them, and hookd answers it as advice"
            ]
        );
    }

    #[test]
    fn warns_of_an_agents_name_for_a_moment_declared_as_a_moment() {
        let text = "moments = [\"BeforeTool\", \"WorktreeCreate\"]\n[[hooks.BeforeTool]]\ncommand = \"true\"\n";
        let settings =
            crate::settings::Settings::parse(std::path::Path::new("h.toml"), "h.toml", text)
                .unwrap();
        assert_eq!(
            settings_warnings(&settings),
            vec![
                "the declared moment \"BeforeTool\" is Gemini CLI's name for PreToolUse: hookd relay --agent gemini-cli fires it as PreToolUse, so hooks on BeforeTool run only for a client that fires \"BeforeTool\" itself; hooks for Gemini CLI belong under [[hooks.PreToolUse]]"
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
