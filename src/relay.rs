//! `hookd relay`: hookd inside an agent's own hook settings (contract 12).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::agents::Agent;

/// What the relay was told on its command line.
#[derive(Debug, Clone)]
pub struct Options {
    pub agent: Agent,
    pub socket: PathBuf,
    pub fail_closed: bool,
    pub timeout: Duration,
}

pub fn run(options: &Options) -> ExitCode {
    let _ = options;
    ExitCode::SUCCESS
}
