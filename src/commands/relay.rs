//! `hookd relay` as a process (docs/agents.md, "The relay"): the agent starts it for every hook moment
//! (so for every tool call). It reads the agent's hook input on stdin, fires it at the daemon over a
//! blocking socket (no async runtime, nothing done before it is needed), and writes the answer the
//! relay's logic ([`crate::agents::relay`]) gives: stdout, stderr, exit status, and the spool.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{Map, Value};

use crate::agents::Agent;
use crate::agents::relay::{
    Relayed, Unanswered, closed, described, moment_named, refused_on_stderr,
};
use crate::commands::client::ClientError;
use crate::limits::{MAX_EVENT, RELAY_DAEMON_PATIENCE};

pub use crate::agents::dialect::read_translated;
pub use crate::agents::relay::{NOT_RUNNING, Options, answer_for, undecided_warning, wait_for};

/// Set by `hookd-relay-lite` when it hands a call over after the daemon took its request and gave no
/// answer it could use: `silent` (none within the relay's wait), `closed` (the connection closed or broke
/// first) or `unreadable` (an answer it could not read). The daemon is not asked again, since its hooks
/// may have run: the call is answered as one the daemon could not answer. Not for people to set.
pub const UNANSWERED_VAR: &str = "HOOKD_RELAY_UNANSWERED";

/// Why the daemon gave no answer, as `hookd-relay-lite` found it ([`UNANSWERED_VAR`]). Only its three
/// values count: anything else (an empty or stray export) is no word from the lite relay, and the daemon
/// is asked as always. `hookd-relay-lite` reads the variable the same way.
fn unanswered_by_the_lite_relay(options: &Options) -> Option<Unanswered> {
    let found = std::env::var_os(UNANSWERED_VAR)?;
    let socket = options.socket.display();
    match found.to_str()? {
        "silent" => Some(Unanswered::TimedOut(format!(
            "hookd on {socket} did not answer in time"
        ))),
        "closed" => Some(Unanswered::Other(format!(
            "hookd on {socket} closed the connection without answering"
        ))),
        "unreadable" => Some(Unanswered::Other(format!(
            "hookd on {socket} sent an answer hookd-relay-lite could not read"
        ))),
        _ => None,
    }
}

/// Relays the hook input on stdin through the daemon at the first of `places` that answers (waiting a
/// little for one that is restarting: [`RELAY_DAEMON_PATIENCE`]); `options.socket` is the one named in
/// what the relay says.
pub fn run(options: &Options, places: &[PathBuf]) -> ExitCode {
    let unanswered = unanswered_by_the_lite_relay(options);
    let relayed = crate::agents::relay::relay(options, std::io::stdin().lock(), |line, wait| {
        if let Some(unanswered) = unanswered {
            return Err(unanswered);
        }
        crate::commands::client::request_line_from(places, line, wait, RELAY_DAEMON_PATIENCE)
            .and_then(|response| response.read_fire())
            .map_err(|error| match error {
                ClientError::NotRunning(why) => Unanswered::NotRunning(why),
                ClientError::TimedOut(why) => Unanswered::TimedOut(why),
                ClientError::Other(why) => Unanswered::Other(why),
            })
    });
    emit(relayed)
}

/// Writes what the relay answers out as a process does: its notes and the answer's stderr on stderr,
/// the answer on stdout, what it did alone in the spool, and the exit status. The spool is never in the
/// agent's way: an error writing it is ignored.
///
/// An answer that cannot reach the agent on stdout (stdout closed, `/dev/null`, `/dev/full`, a write
/// that fails) and holds the call back ([`Relayed::refusal`]) is refused on stderr with exit 2 instead,
/// which every agent reads as a refusal: written to nowhere and exit 0, it let the call go on.
pub fn emit(relayed: Relayed) -> ExitCode {
    for note in &relayed.notes {
        eprintln!("{note}");
    }
    if let Some(record) = &relayed.spooled {
        let _ = crate::record::spool::append(&crate::paths::state_dir(), record);
    }
    let lost = relayed.stdout.is_some_and(|out| !written(&out));
    if let Some(err) = relayed.stderr {
        eprintln!("{err}");
    }
    match (lost, relayed.refusal) {
        (true, Some(reason)) => {
            eprintln!("{reason}\n{LOST}: refused here instead (exit 2)");
            ExitCode::from(2)
        }
        (true, None) => {
            eprintln!("{LOST}; it held nothing back");
            ExitCode::from(relayed.exit)
        }
        (false, _) => ExitCode::from(relayed.exit),
    }
}

/// What the relay says when its answer cannot reach the agent; `hookd-relay-lite` says the same.
const LOST: &str = "hookd relay: the answer could not reach the agent on stdout (closed, /dev/null, or a write that failed)";

/// Writes the answer on stdout; whether it could reach the agent.
fn written(out: &str) -> bool {
    if stdout_leads_nowhere() {
        return false;
    }
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{out}")
        .and_then(|()| stdout.flush())
        .is_ok()
}

/// Whether stdout is `/dev/null`: what a closed stdout becomes before `main` (Rust's start-up opens
/// `/dev/null` on a standard descriptor found closed), and where no agent reads an answer.
fn stdout_leads_nowhere() -> bool {
    use nix::sys::stat::{SFlag, fstat, major, minor};
    fstat(std::io::stdout()).is_ok_and(|stat| {
        SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFCHR
            && (major(stat.st_rdev), minor(stat.st_rdev)) == (1, 3)
    })
}

/// The relay's own command line is wrong (`why`: a word clap cannot read, an unknown `--agent`, a
/// `--timeout` that is no time) and it asks for `--fail-closed`. Exiting 1, as a usage error does, would
/// lose the refusal on every call: every agent but Copilot reads exit 1 as a hook that failed and goes
/// on. One wrong word (`--socket $UNSET --fail-closed`, `--agent claude`) turned a relay meant to refuse
/// when it cannot decide into one that let everything through. So it refuses as `--fail-closed` does with
/// the daemon down, with the reason on stderr and exit 2, the one refusal every agent reads alike (its
/// dialect is not known when `--agent` is what is wrong), except at the moments let through even so.
/// The moment is read from `told` (`--event`) or the input's `hook_event_name`, as `agent` (when
/// known) or any agent names it.
pub fn refuse_for_its_command_line(
    agent: Option<Agent>,
    told: Option<&str>,
    why: &str,
) -> ExitCode {
    let mut input = Vec::new();
    let mut stdin = std::io::stdin().lock();
    // A terminal is a person (`hookd relay --fail-closed --help`), never an agent: not waited on.
    if !std::io::IsTerminal::is_terminal(&stdin) {
        let _ = (&mut stdin)
            .take(MAX_EVENT as u64 + 1)
            .read_to_end(&mut input);
        // The rest unread, so that the agent writing it is not cut off by a broken pipe.
        let _ = std::io::copy(&mut stdin, &mut std::io::sink());
    }
    let event = serde_json::from_slice::<Map<String, Value>>(&input).ok();
    let named = event
        .as_ref()
        .and_then(|event| event.get("hook_event_name"))
        .and_then(Value::as_str);
    let moment = told.or(named).and_then(|name| moment_named(agent, name));
    let record = described(moment.as_deref(), event.as_ref());
    let reason = format!("hookd could not answer: {why}");
    emit(closed(
        agent,
        moment.as_deref(),
        record,
        why,
        reason,
        |reason| refused_on_stderr(reason.to_string()),
    ))
}
