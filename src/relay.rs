//! `hookd relay`: hookd inside an agent's own hook settings (contract 12).
//!
//! The agent starts the relay for every hook moment (so for every tool call): it reads the agent's hook
//! input on stdin, fires it at the daemon over a blocking socket (no async runtime, nothing done before it
//! is needed), and answers in the agent's dialect. When the daemon cannot answer, it fails open with one
//! line on stderr, or refuses with `--fail-closed`.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};

use crate::agents::Agent;
use crate::client::ClientError;
use crate::dialect::{Answer, Transport, answer, refusal, translate};

/// What the relay was told on its command line.
#[derive(Debug, Clone)]
pub struct Options {
    pub agent: Agent,
    pub socket: PathBuf,
    pub fail_closed: bool,
    pub timeout: Duration,
}

/// How long the relay waits for a verdict by default. Above the daemon's default hook timeout (60 s), so
/// that a hanging hook is answered by the daemon (with its `on_failure`) before the relay gives up, and
/// below the 120 s that `--print-settings` gives the agent, so the relay answers before the agent kills it.
pub const DEFAULT_TIMEOUT_SECS: f64 = 100.0;

/// The reason given to the agent when `--fail-closed` refuses because the daemon is down or silent past
/// the relay's timeout (contract 12).
pub const NOT_RUNNING: &str = "hookd is not running";

pub fn run(options: &Options) -> ExitCode {
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        return cannot_answer(
            options,
            None,
            &format!("cannot read the hook input: {e}"),
            false,
        );
    }
    let (moment, agent_event_name, event) = match translate(options.agent, &input) {
        Ok(translated) => translated,
        Err(why) => return cannot_answer(options, None, &why, false),
    };
    let request = json!({"op": "fire", "id": 1, "moment": moment, "agent": options.agent.name(), "event": event});
    let response = match crate::client::request(&options.socket, &request, Some(options.timeout)) {
        Ok(response) => response.value,
        Err(error) => {
            let down = matches!(error, ClientError::NotRunning(_) | ClientError::TimedOut(_));
            return cannot_answer(
                options,
                Some((&moment, &agent_event_name)),
                &error.to_string(),
                down,
            );
        }
    };
    if response["ok"] != json!(true) {
        if response["error"]["kind"] == "unknown_moment" {
            // A moment nobody hangs hooks on (one hookd does not know, not declared): nothing to say.
            return ExitCode::SUCCESS;
        }
        let message = response["error"]["message"].as_str().unwrap_or("an error");
        return cannot_answer(
            options,
            Some((&moment, &agent_event_name)),
            &format!("hookd answered: {message}"),
            false,
        );
    }
    let refusal = refusal(
        response["refused"] == json!(true),
        response["reason"].as_str(),
    );
    let adds: Vec<&str> = response["adds"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    answer(
        options.agent,
        &moment,
        &agent_event_name,
        refusal,
        &adds,
        Transport::Process,
    )
    .emit()
}

/// The daemon could not give a verdict: let the agent go on, saying so once on stderr, or with
/// `--fail-closed` refuse in the agent's dialect. `moment` is `None` when the input itself was unreadable;
/// `down` when the daemon is not running or did not answer in time.
///
/// A Stop is let through even with `--fail-closed`: refusing a Stop does not stop anything, it sends the
/// agent on working, and with no daemon there is no stop cap either. Seen with the real Codex: a daemon
/// gone mid-session made every Stop a refusal, 64 model calls in 3 s and no end (tests/e2e_codex.rs).
/// A SessionEnd too: the session is over, there is nothing left to hold back, and the agents only show
/// the refusal as a failed hook.
fn cannot_answer(
    options: &Options,
    moment: Option<(&str, &str)>,
    why: &str,
    down: bool,
) -> ExitCode {
    if !options.fail_closed {
        eprintln!("hookd relay: {why}; letting the agent go on (fail-open)");
        return ExitCode::SUCCESS;
    }
    if let Some((moment, _)) = moment {
        if crate::moment::is_stop(moment) {
            eprintln!(
                "hookd relay: {why}; letting the {moment} through even with --fail-closed \
                 (refusing it would keep the agent working, with no stop cap)"
            );
            return ExitCode::SUCCESS;
        }
        if moment == "SessionEnd" {
            eprintln!("hookd relay: {why}; the session is over, nothing to refuse");
            return ExitCode::SUCCESS;
        }
    }
    let reason = if down {
        NOT_RUNNING.to_string()
    } else {
        format!("hookd could not answer: {why}")
    };
    match moment {
        Some((moment, agent_event_name)) => answer(
            options.agent,
            moment,
            agent_event_name,
            Some(&reason),
            &[],
            Transport::Process,
        )
        .emit(),
        None => Answer {
            stdout: None,
            stderr: Some(reason),
            exit: 2,
        }
        .emit(),
    }
}

/// Writing an answer out as a process does: stdout, stderr, exit status.
trait Emit {
    fn emit(self) -> ExitCode;
}

impl Emit for Answer {
    fn emit(self) -> ExitCode {
        if let Some(out) = self.stdout {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{out}");
            let _ = stdout.flush();
        }
        if let Some(err) = self.stderr {
            eprintln!("{err}");
        }
        ExitCode::from(self.exit)
    }
}
