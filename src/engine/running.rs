//! A fire's hooks run and each one's answer read: the event serialized as hooks are given it, every
//! hook started at once (the built-in guard judged in this process), each run read as an outcome and
//! logged. Shared by the fire that waits for its hooks ([`super::fire`]) and the hooks that do not hold
//! the turn ([`super::background`]).

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::decision::Outcome;
use crate::engine::reading::{self, Exit};
pub(super) use crate::engine::runner::Input;
use crate::engine::runner::Ran;
use crate::engine::state::{Engine, Generation};
use crate::engine::verdict::Heard;
use crate::settings::{Hook, Program};

/// The runs of an undecidable event's hooks (too large or too deep to decode): none is run, since none
/// could be given the event; each is read as failed with `why`, so that `on_failure = "refuse"` refuses
/// and `ignore` shows the failure in the response, rather than the event passing as if nothing watched it.
pub(super) fn undecided(
    hooks: &[Arc<Hook>],
    moment: &str,
    agent: Option<&str>,
    why: &str,
) -> Vec<Option<Ran>> {
    tracing::warn!(
        %moment,
        agent = agent.unwrap_or(""),
        hooks = hooks.len(),
        "an event hookd cannot decide: {why}; its hooks are read as failed"
    );
    let failed = format!("{}{why}", crate::protocol::UNDECIDED);
    hooks.iter().map(|_| Some(Ran::lost(&failed))).collect()
}

/// Runs every hook at once; the results come back in the settings file's order, whatever order they
/// finished in.
pub(super) async fn run_all(
    engine: &Arc<Engine>,
    generation: &Arc<Generation>,
    hooks: &[Arc<Hook>],
    input: &Arc<Input>,
    cancel: &CancellationToken,
) -> Vec<Option<Ran>> {
    if let [hook] = hooks {
        // One hook: no task to spawn.
        return vec![Some(run_one(engine, generation, hook, input, cancel).await)];
    }
    let mut tasks = tokio::task::JoinSet::new();
    for (index, hook) in hooks.iter().enumerate() {
        let (engine, generation, hook, input, cancel) = (
            engine.clone(),
            generation.clone(),
            hook.clone(),
            input.clone(),
            cancel.clone(),
        );
        tasks.spawn(async move {
            (
                index,
                run_one(&engine, &generation, &hook, &input, &cancel).await,
            )
        });
    }
    let mut runs: Vec<Option<Ran>> = hooks.iter().map(|_| None).collect();
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok((index, ran)) => runs[index] = Some(ran),
            Err(e) => tracing::error!("a hook's task ended abnormally: {e}"),
        }
    }
    runs.into_iter()
        .map(|ran| {
            Some(ran.unwrap_or_else(|| Ran::lost("the daemon lost this hook's task (see its log)")))
        })
        .collect()
}

/// One hook: a process started for this event, or a question to its workers.
pub(super) async fn run_one(
    engine: &Engine,
    generation: &Generation,
    hook: &Hook,
    input: &Input,
    cancel: &CancellationToken,
) -> Ran {
    if let Program::Guard(guard) = &hook.program {
        return judged_by_guard(guard, input);
    }
    let timeout = fitted_timeout(hook, input);
    if !matches!(hook.program, Program::Worker { .. }) {
        return engine
            .runner
            .run(hook, timeout, input, &generation.slots, cancel)
            .await;
    }
    let Some(pool) = generation.workers.get(&hook.name) else {
        return Ran::lost("the worker hook has no workers (see the daemon's log)");
    };
    tokio::select! {
        ran = pool.ask(input.event_line.clone(), timeout) => ran,
        _ = cancel.cancelled() => Ran::cancelled(),
    }
}

/// The built-in guard's answer to one event, judged here in the daemon's process and told as a worker's
/// answer line (`{"refused": R}`, `{"ask": R}`, or nothing), so that it is read, folded and recorded as
/// any hook's answer is.
fn judged_by_guard(guard: &crate::guard::Guard, input: &Input) -> Ran {
    let started = Instant::now();
    let said = match serde_json::from_slice::<Map<String, Value>>(&input.event_line) {
        Ok(event) => {
            guard
                .judge(&event, &crate::paths::home())
                .map(|verdict| match verdict.action {
                    crate::guard::Action::Ask => ("ask", verdict.reason),
                    _ => ("refused", verdict.reason),
                })
        }
        // The engine wrote this line from a map: it always reads back. Were it not to, the call is
        // refused, never let through unjudged.
        Err(e) => Some((
            "refused",
            format!("hookd's guard could not read the event ({e})"),
        )),
    };
    let answer = said.map_or_else(Vec::new, |(word, reason)| {
        let mut line = serde_json::to_vec(&serde_json::json!({ word: reason })).unwrap_or_default();
        line.push(b'\n');
        line
    });
    Ran {
        exit: Exit::Answered,
        stdout: answer,
        stderr: Vec::new(),
        truncated: false,
        elapsed: started.elapsed(),
    }
}

/// How `hook`'s run reads (docs/settings.md, "How a hook's answer is read"). An event hookd could only
/// take in part (`busy`: read while the daemon was short of memory) fails closed.
pub(super) fn read_outcome(hook: &Hook, moment: &str, ran: &Ran, busy: bool) -> Heard {
    // A JSON answer cut at the output limit cannot be read, and may have been a refusal or a redaction
    // too large to carry: it fails closed, whatever the hook's on_failure.
    let stdout = ran.stdout.trim_ascii_start();
    let stdout = stdout.strip_prefix(b"\xef\xbb\xbf").unwrap_or(stdout);
    let cut_answer = ran.truncated && stdout.starts_with(b"{");
    reading::read(reading::Run {
        hook: &hook.name,
        moment,
        exit: &ran.exit,
        stdout: &ran.stdout,
        stderr: &ran.stderr,
        via_shell: matches!(hook.program, Program::Shell { .. }),
        on_failure: if busy || cut_answer {
            crate::settings::OnFailure::Refuse
        } else {
            hook.on_failure
        },
    })
}

/// The event as hooks are given it. A large event (tens of megabytes) is serialized on a blocking
/// thread, not the runtime's, and handed back after; `Err` if that thread failed.
pub(super) async fn serialized(
    event: &mut Map<String, Value>,
    moment: &str,
    agent: Option<&str>,
    generation: &Arc<Generation>,
    large: bool,
) -> Result<Input, String> {
    let (moment, agent) = (moment.to_string(), agent.map(str::to_string));
    if !large {
        return Ok(input_for(event, moment, agent, &generation.settings));
    }
    let of = generation.clone();
    let taken = std::mem::take(event);
    let serializing = tokio::task::spawn_blocking(move || {
        let input = input_for(&taken, moment, agent, &of.settings);
        (input, taken)
    });
    match serializing.await {
        Ok((input, taken)) => {
            *event = taken;
            Ok(input)
        }
        Err(e) => Err(format!("the event could not be serialized ({e})")),
    }
}

/// The hook's timeout, fitted to its agent's own limit at the moment ([`Input::time_cap`]). `hookd
/// check` warns of a timeout the file gives that cannot fit.
fn fitted_timeout(hook: &Hook, input: &Input) -> std::time::Duration {
    input
        .time_cap
        .map_or(hook.timeout, |cap| hook.timeout.min(cap))
}

fn input_for(
    event: &Map<String, Value>,
    moment: String,
    agent: Option<String>,
    settings: &crate::settings::Settings,
) -> Input {
    let mut event_line = serde_json::to_vec(event).unwrap_or_else(|_| b"{}".to_vec());
    event_line.push(b'\n');
    let cwd = event
        .get("cwd")
        .and_then(Value::as_str)
        .filter(|cwd| !cwd.is_empty());
    let working_dir = match cwd.map(std::path::Path::new) {
        Some(dir) if dir.is_absolute() && dir.is_dir() => dir.to_path_buf(),
        _ if settings.dir.is_dir() => settings.dir.clone(),
        _ => "/".into(),
    };
    let time_cap = agent
        .as_deref()
        .and_then(crate::tables::agent::Agent::from_name)
        .and_then(|agent| agent.time_limit(&moment))
        .map(|limit| limit.saturating_sub(crate::limits::HOOK_LIMIT_MARGIN));
    Input {
        event_line: event_line.into(),
        moment,
        agent,
        session: event
            .get("session_id")
            .and_then(Value::as_str)
            .filter(|session| fits_the_environment(session))
            .unwrap_or_default()
            .to_string(),
        project_dir: cwd
            .filter(|cwd| fits_the_environment(cwd))
            .map(str::to_string),
        config_dir: settings.dir.clone(),
        working_dir,
        time_cap,
    }
}

/// Whether an event's value may be given to hooks in their environment: one past [`MAX_ENV_VALUE`], or
/// one holding a NUL byte (JSON allows `\u0000`; no C string can), would keep every hook from starting.
/// A value left out is still in the event on the hook's stdin.
///
/// [`MAX_ENV_VALUE`]: crate::limits::MAX_ENV_VALUE
fn fits_the_environment(value: &str) -> bool {
    value.len() <= crate::limits::MAX_ENV_VALUE && !value.contains('\0')
}

pub(super) fn log_outcome(
    hook: &Hook,
    moment: &str,
    agent: Option<&str>,
    outcome: &Heard,
    ms: f64,
) {
    let agent = agent.unwrap_or("");
    if let Some(warning) = &outcome.warning {
        tracing::warn!(hook = %hook.name, %moment, agent, "{warning}");
    }
    match outcome.kind {
        Outcome::Failed | Outcome::Refused if outcome.error.is_some() => {
            let error = outcome.error.as_deref().unwrap_or_default();
            tracing::warn!(hook = %hook.name, %moment, agent, ms, outcome = ?outcome.kind, "hook failed: {error}");
        }
        Outcome::Refused => {
            let reason = outcome.reason.as_deref().unwrap_or_default();
            tracing::info!(hook = %hook.name, %moment, agent, ms, "hook refused: {reason}");
        }
        _ => {
            tracing::debug!(hook = %hook.name, %moment, agent, ms, outcome = ?outcome.kind, "hook answered")
        }
    }
}
