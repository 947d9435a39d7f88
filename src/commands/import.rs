//! `hookd import FILE`: an agent's hook settings as hookd's, printed as TOML to add to hookd's file,
//! with a warning for each thing that does not carry over.

use std::path::Path;
use std::process::ExitCode;

use crate::commands::files;
use crate::commands::shared::known_agent;

/// `hookd import FILE [--agent AGENT]`: the agent told, or found from the file.
pub fn import(file: &Path, agent: Option<&str>) -> Result<ExitCode, String> {
    let agent = agent.map(known_agent).transpose()?;
    let text = files::read_agent_file(file)?;
    let imported = crate::agents::import::convert(&text, &file.display().to_string(), agent)?;
    print!("{}", imported.toml);
    for warning in imported.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(ExitCode::SUCCESS)
}
