//! `hookd import FILE`: an agent's existing hook settings, printed as hookd settings.

use crate::agents::Agent;

/// Converts the agent settings `text` (read from `label`) into hookd TOML.
pub fn convert(text: &str, label: &str, agent: Option<Agent>) -> Result<String, String> {
    let _ = (text, label, agent);
    Err("not written yet".into())
}
