//! `hookd relay --print-settings AGENT`: the snippet for an agent's own settings file that routes every
//! moment it has through `hookd relay --agent AGENT`.

use crate::agents::Agent;

/// The text to print for `agent`; `hookd` is the absolute path of the hookd binary.
pub fn for_agent(agent: Agent, hookd: &str) -> Result<String, String> {
    let _ = (agent, hookd);
    Err("not written yet".into())
}
