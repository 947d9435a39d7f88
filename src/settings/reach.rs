//! Whether a hook can ever run where it is hung. A hook whose `agents` are all agents hookd knows, none of
//! which fires its moment, or whose matcher fits no event of its moment, is a policy that quietly does
//! nothing: found out hours later, or never. The settings file's validation refuses such a hook at its
//! place (`parse.rs`), as any invalid hook is refused: `hookd check` exits 1, and a reload keeps the last
//! good settings and says why.
//!
//! One question, [`Hook::never_runs`], asked of a whole hook, with no file behind it: whatever else comes
//! to hang hooks (a hook hung live over the socket, another layer of settings) asks it too, so that the
//! same hook is refused wherever it comes from.
//!
//! Only what is certain is refused. A hook naming any agent hookd does not know (a client's own) may run
//! for it; a hook on a declared moment may be fired by an agent newer than the table; a matcher is judged
//! only where it can fit no value at all. A hook that can run for one of its agents is valid, and warned
//! of for the others (`agents::settings_warnings`).

use super::matcher::Matcher;
use super::model::Hook;
use crate::tables::agent::Agent;
use crate::tables::moment::{self, Moment};

/// Why a hook can never run, and the key of the hook that makes it so (`agents` or `matcher`): where
/// the settings file's validation places the error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeverRuns {
    pub key: &'static str,
    pub message: String,
}

impl Hook {
    /// Why this hook can never run where it is hung, or `None` when it may run (see the module's doc).
    /// A hook switched off (`enabled = false`) runs nowhere by choice and is not judged: switched on, it
    /// is.
    pub fn never_runs(&self) -> Option<NeverRuns> {
        if !self.enabled {
            return None;
        }
        // A declared moment: which agents fire it, and with what, the table cannot say.
        let moment = moment::known(&self.moment)?;
        if let Some(agents) = &self.agents
            && let Some(message) = no_agent_fires(moment, agents)
        {
            return Some(NeverRuns {
                key: "agents",
                message,
            });
        }
        fits_nothing(moment, &self.matcher, self.matcher_source.as_deref()).map(|message| {
            NeverRuns {
                key: "matcher",
                message,
            }
        })
    }
}

/// When every name in `agents` is an agent hookd knows and none of them fires `moment`: why, naming the
/// moments they do fire, the agents that fire this one, and the moment most likely meant.
fn no_agent_fires(moment: &Moment, agents: &[String]) -> Option<String> {
    let mut named: Vec<Agent> = Vec::new();
    for name in agents {
        // A client's own agent (an SDK's) may fire any moment.
        let agent = Agent::from_name(name)?;
        if agent.fires(moment.name) {
            return None;
        }
        if !named.contains(&agent) {
            named.push(agent);
        }
    }
    let m = moment.name;
    let who = match named.as_slice() {
        [one] => format!("{} never fires {m}", one.name()),
        _ => format!(
            "none of its agents ({}) fires {m}",
            named
                .iter()
                .map(|a| a.name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let meant = meant_moment(m, &named)
        .map(|(meant, own)| match own.as_str() {
            "" => format!(" (did you mean [[hooks.{meant}]]?)"),
            own => format!(" (did you mean [[hooks.{meant}]], {own}?)"),
        })
        .unwrap_or_default();
    let theirs: Vec<String> = named
        .iter()
        .map(|agent| format!("{} fires {}", agent.name(), fired_by(*agent)))
        .collect();
    let firing: Vec<&str> = Agent::ALL
        .into_iter()
        .filter(|agent| agent.fires(m))
        .map(Agent::name)
        .collect();
    let by = match firing.is_empty() {
        true => format!("no agent hookd knows fires {m}"),
        false => format!("{m} is fired by {}", and_list(&firing)),
    };
    Some(format!(
        "{who}, so this hook would never run{meant}; {}; {by}",
        theirs.join("; ")
    ))
}

/// The moment a hook on `name` for `agents` most likely meant, among those at least one of them fires:
/// one near in meaning ([`moment::AKIN`]), else one near in spelling; with the agents' own names for it
/// where they differ (`Gemini CLI's BeforeTool`).
fn meant_moment(name: &str, agents: &[Agent]) -> Option<(&'static str, String)> {
    let fired = |m: &str| agents.iter().any(|agent| agent.fires(m));
    let meant = moment::akin(name).find(|m| fired(m)).or_else(|| {
        let theirs = moment::KNOWN
            .iter()
            .map(|m| m.name)
            .filter(|m| fired(m) && *m != name);
        moment::did_you_mean(name, theirs)
    })?;
    let own: Vec<String> = agents
        .iter()
        .filter(|agent| agent.fires(meant) && agent.event_name_of(meant) != meant)
        .map(|agent| format!("{}'s {}", agent.display_name(), agent.event_name_of(meant)))
        .collect();
    Some((meant, own.join(", ")))
}

/// The moments `agent` fires, in a turn's order, each with the agent's own name for it where it has
/// another: `UserPromptSubmit (its BeforeAgent)`.
fn fired_by(agent: Agent) -> String {
    let moments: Vec<String> = agent
        .moments()
        .into_iter()
        .map(|m| match agent.event_name_of(m) {
            own if own == m => m.to_string(),
            own => format!("{m} (its {own})"),
        })
        .collect();
    and_list(&moments)
}

/// `a, b and c`.
fn and_list(items: &[impl AsRef<str>]) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_string(),
        [rest @ .., last] => format!(
            "{} and {}",
            rest.iter()
                .map(AsRef::as_ref)
                .collect::<Vec<_>>()
                .join(", "),
            last.as_ref()
        ),
    }
}

/// Why `matcher` can fit no event of `moment`, when that is certain: a list of names with no name in it
/// (`"|"`, `","`, `" "`), which no value equals. A moment with no field to match takes no matcher at all
/// (the parser says so before this is asked); a regular expression is taken as it is, since what one
/// can fit is not judged here.
fn fits_nothing(moment: &Moment, matcher: &Matcher, source: Option<&str>) -> Option<String> {
    let field = moment.matcher_field?;
    match matcher {
        Matcher::Names(names) if names.is_empty() => Some(format!(
            "matcher \"{}\" names no {field}: split on | and , it holds no name, so it fits no event of {} and this hook would never run; remove it to run at every event, or name the {field} it is for",
            source.unwrap_or_default(),
            moment.name
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The first hook of a settings text, as validated.
    fn never_runs(text: &str) -> Option<NeverRuns> {
        let settings = super::super::Settings::parse(Path::new("h.toml"), "h.toml", text)
            .unwrap_or_else(|e| panic!("{e}"));
        let mut hook = (*settings.hooks[0].1[0]).clone();
        // Asked of a hook that is switched on, as one hung from elsewhere would be.
        hook.enabled = true;
        hook.never_runs()
    }

    fn hook(moment: &str, extra: &str) -> String {
        format!("[[hooks.{moment}]]\nname = \"h\"\ncommand = \"true\"\nenabled = false\n{extra}\n")
    }

    #[test]
    fn a_hook_no_agent_of_which_fires_its_moment_never_runs() {
        let never = never_runs(&hook("PermissionRequest", "agents = [\"gemini-cli\"]")).unwrap();
        assert_eq!(never.key, "agents");
        assert_eq!(
            never.message,
            "gemini-cli never fires PermissionRequest, so this hook would never run (did you mean \
             [[hooks.PreToolUse]], Gemini CLI's BeforeTool?); gemini-cli fires SessionStart, \
             UserPromptSubmit (its BeforeAgent), PreToolUse (its BeforeTool), PostToolUse (its AfterTool), \
             Notification, Stop (its AfterAgent), PreCompact (its PreCompress) and SessionEnd; \
             PermissionRequest is fired by claude-code, codex, qwen-code and copilot-cli"
        );
        let never = never_runs(&hook(
            "PostToolUseFailure",
            "agents = [\"codex\", \"gemini-cli\", \"codex\"]",
        ))
        .unwrap();
        assert!(
            never.message.starts_with(
                "none of its agents (codex, gemini-cli) fires PostToolUseFailure, so this hook would never run (did you mean [[hooks.PostToolUse]], Gemini CLI's AfterTool?); codex fires SessionStart, "
            ),
            "{}",
            never.message
        );
        assert!(never.message.contains("; gemini-cli fires SessionStart, "));
        // A suggestion only among the moments the agents fire; none where nothing is near.
        let never = never_runs(&hook("Elicitation", "agents = [\"codex\"]")).unwrap();
        assert!(!never.message.contains("did you mean"), "{}", never.message);
        let never = never_runs(&hook("PostCompact", "agents = [\"gemini-cli\"]")).unwrap();
        assert!(
            never
                .message
                .contains("(did you mean [[hooks.PreCompact]], Gemini CLI's PreCompress?)"),
            "{}",
            never.message
        );
    }

    #[test]
    fn a_hook_that_may_run_for_one_of_its_agents_or_a_client_is_not_refused() {
        for agents in [
            "[\"claude-code\", \"gemini-cli\"]",
            "[\"gemini-cli\", \"my-sdk-agent\"]",
        ] {
            assert_eq!(
                never_runs(&hook("PermissionRequest", &format!("agents = {agents}"))),
                None,
                "{agents}"
            );
        }
        assert_eq!(never_runs(&hook("PermissionRequest", "")), None);
        // A declared moment: the table cannot say who fires it.
        assert_eq!(
            never_runs(&format!(
                "moments = [\"BeforeModel\"]\n{}",
                hook("BeforeModel", "agents = [\"gemini-cli\"]")
            )),
            None
        );
        // Switched off, it is not judged.
        let text = hook("PermissionRequest", "agents = [\"gemini-cli\"]");
        let settings = super::super::Settings::parse(Path::new("h.toml"), "h.toml", &text).unwrap();
        assert_eq!(settings.hooks[0].1[0].never_runs(), None);
    }

    #[test]
    fn a_matcher_that_names_nothing_never_fits() {
        for source in ["|", ",", " ", " | , "] {
            let never =
                never_runs(&hook("PreToolUse", &format!("matcher = \"{source}\""))).unwrap();
            assert_eq!(never.key, "matcher");
            assert!(
                never.message.starts_with(&format!(
                    "matcher \"{source}\" names no tool_name: split on | and , it holds no name, so it fits no event of PreToolUse"
                )),
                "{}",
                never.message
            );
        }
        for source in ["", "*", "Bash", "Bash|", "mcp__.*", "^$"] {
            assert_eq!(
                never_runs(&hook("PreToolUse", &format!("matcher = \"{source}\""))),
                None,
                "{source}"
            );
        }
    }
}
