//! Hooks with `background = true` (settings/background.rs): started with the fire, under the same
//! limits as every hook (their timeout, the output limit, `max_processes`), but the fire is answered
//! without waiting for them and what they say is never read. What came of them goes to the journal, as
//! a `background` record of its own once the last of them ends (docs/record.md).
//!
//! They are tracked by the engine, not by a connection: a reload leaves them running on the generation
//! they started on (it is kept until they end); at shutdown, once the fires are answered, they are given
//! the close deadline to end, then stopped like any abandoned hook (their process group killed and
//! reaped), and their record says so.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Map, Value};

use crate::decision::HookReport;
use crate::engine::reading::Exit;
use crate::engine::recording::FireRecord;
use crate::engine::runner::Ran;
use crate::engine::running;
use crate::engine::state::{Engine, Generation};
use crate::record::Source;
use crate::settings::Hook;

/// What a fire hands its background hooks.
pub(super) struct Started<'a> {
    pub moment: &'a str,
    pub agent: Option<&'a str>,
    pub source: Source,
    pub large: bool,
    /// Why the event could not be read whole: the hooks are not run but recorded as failed.
    pub undecidable: Option<&'a str>,
}

impl Started<'_> {
    /// Starts `hooks` on `event` and returns at once: the event is serialized for them here (it is
    /// given back), the rest runs on a task the engine keeps.
    pub(super) async fn start(
        self,
        engine: &Arc<Engine>,
        generation: &Arc<Generation>,
        hooks: Vec<Arc<Hook>>,
        event: &mut Map<String, Value>,
    ) {
        let record =
            FireRecord::background(self.source, self.moment, self.agent, event, generation);
        let share = (generation.settings.defaults.max_processes / 2).max(1);
        let running = Running::take(&engine.background_hooks, hooks.len(), share);
        let ready: Result<running::Input, Vec<Option<Ran>>> = match (self.undecidable, &running) {
            (_, None) => {
                tracing::warn!(moment = %self.moment, hooks = hooks.len(), "hooks in the background not run: {share} are running already (half of max_processes)");
                let why = format!(
                    "not run: {share} hooks were running in the background already (half of max_processes, the rest kept for the hooks fires wait for)"
                );
                Err(hooks.iter().map(|_| Some(Ran::lost(&why))).collect())
            }
            (Some(why), _) => Err(running::undecided(&hooks, self.moment, self.agent, why)),
            (None, Some(_)) => {
                match running::serialized(event, self.moment, self.agent, generation, self.large)
                    .await
                {
                    // Nobody waits for them: the agent's own time limit at the moment is not theirs.
                    Ok(input) => Ok(running::Input {
                        time_cap: None,
                        ..input
                    }),
                    Err(e) => Err(hooks.iter().map(|_| Some(Ran::lost(&e))).collect()),
                }
            }
        };
        let (moment, agent) = (self.moment.to_string(), self.agent.map(str::to_string));
        let (engine, generation) = (engine.clone(), generation.clone());
        let cancel = engine.background_stop.child_token();
        tracing::debug!(%moment, hooks = hooks.len(), "hooks started in the background");
        engine.clone().background.spawn(async move {
            let runs = match ready {
                Ok(input) => {
                    running::run_all(&engine, &generation, &hooks, &Arc::new(input), &cancel).await
                }
                Err(runs) => runs,
            };
            let mut reports = Vec::with_capacity(hooks.len());
            for (hook, ran) in hooks.iter().zip(&runs) {
                let Some(ran) = ran else { continue };
                let outcome = running::read_outcome(hook, &moment, ran, false);
                let ms = crate::time::tenths_of_ms(ran.elapsed);
                if !matches!(ran.exit, Exit::Cancelled(_)) {
                    running::log_outcome(hook, &moment, agent.as_deref(), &outcome, ms);
                }
                reports.push(HookReport {
                    name: hook.name.clone(),
                    outcome: outcome.kind,
                    rewrote: None,
                    exit: ran.exit.code(),
                    ms,
                    error: outcome.error.clone(),
                    truncated: ran.truncated,
                });
            }
            let stopped = runs
                .iter()
                .flatten()
                .any(|ran| matches!(ran.exit, Exit::Cancelled(_)));
            let mut record = record;
            record.hooks(&reports, &runs);
            record.ended(stopped);
            drop(running);
        });
    }
}

/// Hooks counted as running in the background until dropped. Held to a share of `max_processes`, so
/// that slow hooks nobody waits for (a notifier fired at every tool call) can never take every process
/// slot from the hooks a fire waits for: a guard kept waiting for a slot past the relay's timeout would
/// be a refusal lost. Past the share, they are not run, and their record says why.
struct Running {
    count: Arc<AtomicUsize>,
    hooks: usize,
}

impl Running {
    fn take(count: &Arc<AtomicUsize>, hooks: usize, share: usize) -> Option<Running> {
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
                (now + hooks <= share).then_some(now + hooks)
            })
            .ok()?;
        Some(Running {
            count: count.clone(),
            hooks,
        })
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.count.fetch_sub(self.hooks, Ordering::AcqRel);
    }
}
