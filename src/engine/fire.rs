//! A fire, from request to decision: pick the hooks that fit, run them all at once, read each answer,
//! and fold the verdict.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::decision::{HookReport, Outcome, Rewrote, Verdict};
use crate::engine::projects::{ForFire, Projects, Quick};
use crate::engine::protect;
use crate::engine::reading::Exit;
use crate::engine::recording::FireRecord;
use crate::engine::request::{Fire, NotDecided, Printed};
use crate::engine::runner::Ran;
use crate::engine::running::{log_outcome, read_outcome, run_all, run_one, serialized, undecided};
use crate::engine::state::{Engine, Generation};
use crate::engine::verdict::{self, Heard, Rewrites};
use crate::protocol::Event;
use crate::settings::{Hook, Layer, ProjectHooks};
use crate::tables::moment;

impl Engine {
    /// Runs a fire to its decision. `cancel` ends the hooks early (the client left); make it a child of
    /// [`Engine::abandoned`], so that giving up every fire ends this one too.
    pub async fn decide(
        self: &Arc<Self>,
        request: Fire,
        cancel: &CancellationToken,
    ) -> Result<Verdict, NotDecided> {
        Ok(self.decide_keeping_runs(request, cancel).await?.0)
    }

    /// As [`Engine::decide`], with what each hook printed, for `hookd test` to show: the runs the
    /// decision was read from, handed out instead of dropped, so that the daemon's fire costs nothing
    /// more for it. One [`Printed`] per hook of [`Verdict::hooks`], in the same order (empty for a hook
    /// not run), each as bounded as the daemon reads it (the output limit, the hook's timeout).
    pub async fn decide_showing(
        self: &Arc<Self>,
        request: Fire,
        cancel: &CancellationToken,
    ) -> Result<(Verdict, Vec<Printed>), NotDecided> {
        let (decision, runs) = self.decide_keeping_runs(request, cancel).await?;
        let printed = runs
            .into_iter()
            .map(|ran| match ran {
                Some(ran) => Printed {
                    stdout: ran.stdout,
                    stderr: ran.stderr,
                },
                None => Printed::default(),
            })
            .collect();
        Ok((decision, printed))
    }

    async fn decide_keeping_runs(
        self: &Arc<Self>,
        request: Fire,
        cancel: &CancellationToken,
    ) -> Result<(Verdict, Vec<Option<Ran>>), NotDecided> {
        let Fire {
            moment,
            agent,
            event:
                Event {
                    fields: mut event,
                    undecidable,
                    large,
                    busy,
                    source,
                    fail_closed,
                },
        } = request;
        let generation = self.current();
        let settings = &generation.settings;
        let started = Instant::now();
        let mut record = FireRecord::begin_lazily(
            source,
            &moment,
            agent.as_deref(),
            &event,
            &generation,
            started,
        );
        if !settings.knows_moment(&moment) {
            let hint = moment::unknown_moment_hint(&moment, settings.moment_names());
            let unknown = NotDecided::UnknownMoment(format!(
                "unknown moment \"{}\"{hint}",
                moment::shown(&moment)
            ));
            record.describe(&event);
            record.not_decided(&unknown);
            return Err(unknown);
        }
        event.insert("hook_event_name".into(), Value::String(moment.clone()));
        // The number a worker's event carries is the engine's to give (worker.rs): a client's own is
        // dropped, so the line can be numbered without being read again.
        event.remove(crate::engine::worker::ID_FIELD);
        // Judged on the call as the agent made it, before any hook rewrites it (a rewrite that keeps a
        // write to hookd's files is no less one), and folded in after the hooks: their refusal, more
        // particular, is kept; anything short of one becomes hookd's.
        // An event too large or too deep to decode whole is judged on its head, what of it could be
        // read (docs/security.md says what that leaves: its hooks' `on_failure` decides the rest).
        let protected = generation.shield.judge(&moment, &event);
        let stop_loop = StopLoop::begin(self, &moment, agent.as_deref(), &mut event);
        let field = moment::known(&moment).and_then(|m| m.matcher_field);
        let project = describing_if_waiting(
            &mut record,
            &event,
            self.project_hooks(&generation, &moment, agent.as_deref(), field, &event),
        )
        .await;
        let unclosed = unclosed_relay(&generation, &moment, source, fail_closed);
        // The live hooks of the moment come after the settings' (the file's, then the repository's), in
        // the order hung.
        let session = event.get("session_id").and_then(Value::as_str);
        // None where only the managed layer's hooks may run (one hung before it said so included).
        let live = if settings.policy.allow_managed_hooks_only {
            Vec::new()
        } else {
            self.live.candidates(&moment, agent.as_deref(), session)
        };
        // A long matched value is matched on a blocking thread, and the fire waits for it.
        let hooks = describing_if_waiting(
            &mut record,
            &event,
            select_hooks(
                &generation,
                &project.run,
                live,
                &moment,
                agent.as_deref(),
                field,
                &event,
            ),
        )
        .await;
        if !hooks.is_empty() {
            // Its hooks may change the event, and the fire waits for them: its record says now what
            // the event said.
            record.describe(&event);
        }
        let hooks = keep_fitting(hooks, &mut event, large, undecidable.is_some()).await;
        let (background, hooks): (Vec<_>, Vec<_>) =
            hooks.into_iter().partition(|hook| hook.background);
        if !background.is_empty() {
            let started = crate::engine::background::Started {
                moment: &moment,
                agent: agent.as_deref(),
                source,
                large,
                undecidable: undecidable.as_deref(),
            };
            started
                .start(self, &generation, background, &mut event)
                .await;
        }
        let _in_flight = (!hooks.is_empty()).then(|| self.fire_started());
        let runs: Vec<Option<Ran>> = if let Some(why) = &undecidable {
            undecided(&hooks, &moment, agent.as_deref(), why)
        } else if hooks.is_empty() {
            Vec::new() // the common case, kept cheap: nothing to serialize, nothing to spawn
        } else if hooks.len() > 1 && settings.is_sequential(&moment) {
            let chain = Chain {
                moment: &moment,
                agent: agent.as_deref(),
                busy,
                large,
            };
            chain
                .run(self, &generation, &hooks, &mut event, cancel)
                .await
        } else {
            match serialized(&mut event, &moment, agent.as_deref(), &generation, large).await {
                Ok(input) => run_all(self, &generation, &hooks, &Arc::new(input), cancel).await,
                Err(e) => hooks.iter().map(|_| Some(Ran::lost(&e))).collect(),
            }
        };
        if self.abandoned.is_cancelled()
            && runs
                .iter()
                .flatten()
                .any(|ran| matches!(ran.exit, Exit::Cancelled(_)))
        {
            record.describe(&event);
            record.not_decided(&NotDecided::ShuttingDown);
            return Err(NotDecided::ShuttingDown);
        }

        let mut outcomes = Vec::with_capacity(hooks.len());
        let mut reports = Vec::with_capacity(hooks.len());
        for (hook, ran) in hooks.iter().zip(&runs) {
            let Some(ran) = ran else {
                reports.push(HookReport {
                    name: hook.name.clone(),
                    layer: hook.layer(),
                    outcome: Outcome::Skipped,
                    rewrote: None,
                    exit: None,
                    ms: 0.0,
                    error: None,
                    truncated: false,
                });
                outcomes.push(Heard::skipped());
                continue;
            };
            let mut outcome = read_outcome(hook, &moment, ran, busy);
            if outcome.kind == Outcome::Allowed {
                if hook.layer == Layer::Project {
                    ignore_allow(
                        &mut outcome,
                        "its allow is ignored: a repository's hooks may refuse, ask, add and rewrite, never allow",
                    );
                } else if hook.is_live() && !settings.protect.live_hooks_allow {
                    ignore_allow(
                        &mut outcome,
                        "its allow is ignored: a live hook's allow stands only where the settings say [protect] live_hooks_allow = true (any process of the user may hang one, the agent's own tool calls included)",
                    );
                }
            }
            let ms = crate::time::tenths_of_ms(ran.elapsed);
            if matches!(ran.exit, Exit::Cancelled(_)) {
                // Nobody is waiting for this answer: not worth a warning per hook.
                tracing::debug!(hook = %hook.name, %moment, "hook stopped: its fire was abandoned");
            } else {
                log_outcome(hook, &moment, agent.as_deref(), &outcome, ms);
            }
            reports.push(HookReport {
                name: hook.name.clone(),
                layer: hook.layer(),
                outcome: outcome.kind,
                rewrote: outcome.rewrote(),
                exit: ran.exit.code(),
                ms,
                error: outcome.error.clone(),
                truncated: ran.truncated,
            });
            outcomes.push(outcome);
        }
        record.hooks(&reports, &runs);
        record.layers(&hooks);
        let mut verdict = if outcomes.is_empty() {
            // The common case, kept cheap: nothing to fold.
            Verdict::default()
        } else {
            let named = hooks
                .iter()
                .zip(&outcomes)
                .map(|(h, outcome)| (h.name.as_str(), outcome, !h.is_live()));
            let chained = settings.is_sequential(&moment);
            verdict::fold_hooks(named, originals(&moment, &event), chained)
        };
        if let Some(conflict) = &verdict.conflict {
            tracing::warn!(moment = %moment, agent = agent.as_deref().unwrap_or(""), "rewrites conflict: {conflict}");
        }
        if let Some(stop_loop) = stop_loop {
            stop_loop.finish(self, settings.defaults.stop_refusal_cap, &mut verdict);
        }
        let mut runs = runs;
        // A lower layer's rewrite of the input is a call the managed hooks never saw: nothing below
        // them may carry a call past them, so they judge it too before it goes on, or before a person
        // is asked to approve it (a refused call carries no rewrite).
        if verdict.input.is_some()
            && hooks
                .iter()
                .zip(&outcomes)
                .any(|(hook, heard)| hook.layer != Layer::Managed && heard.input.is_some())
        {
            let managed: Vec<Arc<Hook>> = hooks
                .iter()
                .filter(|hook| hook.layer == Layer::Managed)
                .cloned()
                .collect();
            // Cloned only when there is a managed hook to judge it (an input may be megabytes).
            if let (false, Some(input)) = (managed.is_empty(), verdict.input.clone()) {
                let again = Again {
                    moment: &moment,
                    agent: agent.as_deref(),
                    large,
                    busy,
                };
                again
                    .judge(
                        self,
                        &generation,
                        &managed,
                        &event,
                        input,
                        cancel,
                        (&mut record, &mut reports, &mut runs),
                        &mut verdict,
                    )
                    .await;
            }
        }
        for held in &project.pending {
            // Never run, never silent: in the fire's report and its journal line.
            let report = HookReport {
                name: held.name.clone(),
                layer: None,
                outcome: Outcome::Skipped,
                rewrote: None,
                exit: None,
                ms: 0.0,
                error: Some(held.why.clone()),
                truncated: false,
            };
            record.hooks(std::slice::from_ref(&report), &[None]);
            record.layer_of_last(Layer::Project);
            reports.push(report);
            runs.push(None);
        }
        for (root, waiting) in project
            .waiting
            .iter()
            .filter(|_| moment == moment::SESSION_START)
        {
            verdict.adds.push(format!(
                "This repository ({}) has {waiting} hook(s) of its own (.hookd/hooks.toml) waiting for the user to trust them: they do not run until the user reviews them and runs `hookd trust {}` (an agent must not run it).",
                root.display(),
                root.display()
            ));
        }
        if let Some(reason) = unclosed {
            tracing::warn!(%moment, agent = agent.as_deref().unwrap_or(""), "{reason}");
            refused_by_hookd(
                REQUIRE_FAIL_CLOSED_HOOK,
                reason,
                &mut record,
                &mut reports,
                &mut runs,
                &mut verdict,
            );
        }
        // The call as the hooks rewrote it is judged too: a hook (a live one, which any process of the
        // user may hang, the agent's own tool calls included) must not turn a harmless call into one the
        // guard refuses.
        let protected = protected.or_else(|| {
            let rewritten = verdict.input.clone()?;
            let original = event.insert("tool_input".into(), rewritten);
            let judged = generation.shield.judge(&moment, &event);
            match original {
                Some(original) => event.insert("tool_input".into(), original),
                None => event.remove("tool_input"),
            };
            judged
        });
        // A plain refusal of the hooks stands as it is: hookd's guard adds nothing to it.
        let protected = protected.filter(|_| !verdict.refused || verdict.permission.is_some());
        if let Some(reason) = protected {
            tracing::warn!(%moment, agent = agent.as_deref().unwrap_or(""), "{reason}");
            refused_by_hookd(
                protect::PROTECT_HOOK,
                reason,
                &mut record,
                &mut reports,
                &mut runs,
                &mut verdict,
            );
        }
        tracing::debug!(
            moment = %moment,
            agent = agent.as_deref().unwrap_or(""),
            hooks = hooks.len(),
            refused = verdict.refused,
            ms = started.elapsed().as_secs_f64() * 1000.0,
            "fire answered"
        );
        self.asks.told(crate::engine::asks::Told {
            moment: &moment,
            agent: agent.as_deref(),
            event: &event,
            asked: verdict.refused && verdict.permission == Some(crate::decision::Permission::Ask),
            refused: verdict.refused
                && verdict.permission != Some(crate::decision::Permission::Ask),
            reason: verdict.reason.as_deref(),
            generation: generation.number,
            source,
            recording: settings.record.enabled,
        });
        if moment == moment::SESSION_END
            && let Some(session) = event.get("session_id").and_then(Value::as_str)
        {
            // Its live hooks ran for this SessionEnd, and are taken down after it.
            self.live.session_ended(session);
        }
        if large && !event.is_empty() {
            // A tree of values of tens of megabytes to let go: not on the runtime's thread. Only now,
            // once the fold has read the tool input and output the rewrites change.
            record.describe(&event);
            let event = std::mem::take(&mut event);
            tokio::task::spawn_blocking(move || drop(event));
        }
        let advisory = advisory(agent.as_deref(), &moment, verdict.refused);
        if advisory {
            tracing::info!(
                moment = %moment,
                agent = agent.as_deref().unwrap_or(""),
                "refused where the agent only takes advice: it goes on"
            );
        }
        verdict.hooks = reports;
        verdict.advisory = advisory;
        record.decided(&verdict, event);
        Ok((verdict, runs))
    }
}

/// The name a refusal of `require_fail_closed` has in the report and the journal: hookd's own.
pub const REQUIRE_FAIL_CLOSED_HOOK: &str = "hookd:require-fail-closed";

/// Why a fire is refused under the managed layer's `require_fail_closed`: it came from a relay, or an
/// agent's http hook, that does not hold the call back when it cannot reach hookd, at a moment whose
/// refusal holds something back (a Stop refused would only send the agent on working).
fn unclosed_relay(
    generation: &Generation,
    moment: &str,
    source: crate::record::Source,
    fail_closed: bool,
) -> Option<String> {
    use crate::record::Source;
    let holds_back =
        moment::known(moment).is_some_and(|known| known.refusal == moment::Refusal::HoldsBack);
    if !generation.settings.policy.require_fail_closed || fail_closed || !holds_back {
        return None;
    }
    match source {
        Source::Relay => Some(
            "the team's managed settings require a fail-closed relay (require_fail_closed), and this agent's relay is fail-open: it would let calls through whenever hookd cannot answer. Set the relay up with --fail-closed (hookd setup AGENT --fail-closed; `hookd doctor` names the files)".to_string(),
        ),
        Source::Http => Some(
            "the team's managed settings require fail-closed hooks (require_fail_closed), and this agent's http hook is fail-open: the agent lets calls through whenever hookd cannot answer. Print its settings with hookd relay --print-settings AGENT --http --fail-closed (each hook gets \"onFailure\": \"block\" and its url ?fail_closed=1)".to_string(),
        ),
        Source::Socket => None,
    }
}

/// The managed hooks of a fire run again on the input as a lower layer's hook rewrote it.
struct Again<'a> {
    moment: &'a str,
    agent: Option<&'a str>,
    large: bool,
    busy: bool,
}

impl Again<'_> {
    /// Runs `managed` on `event` with `input` for its `tool_input`, each reported (and journaled) as
    /// run again; a refusal or an ask of theirs is the verdict's, the rewritten call withheld.
    #[allow(clippy::too_many_arguments)]
    async fn judge(
        &self,
        engine: &Arc<Engine>,
        generation: &Arc<Generation>,
        managed: &[Arc<Hook>],
        event: &Map<String, Value>,
        input: Value,
        cancel: &CancellationToken,
        (record, reports, runs): (&mut FireRecord, &mut Vec<HookReport>, &mut Vec<Option<Ran>>),
        verdict: &mut Verdict,
    ) {
        // The event as it is but for its input (the one it had not copied: it may be megabytes).
        let mut rewritten: Map<String, Value> = event
            .iter()
            .filter(|(key, _)| *key != "tool_input")
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        rewritten.insert("tool_input".into(), input);
        let ran = match serialized(
            &mut rewritten,
            self.moment,
            self.agent,
            generation,
            self.large,
        )
        .await
        {
            Ok(input) => run_all(engine, generation, managed, &Arc::new(input), cancel).await,
            Err(e) => managed.iter().map(|_| Some(Ran::lost(&e))).collect(),
        };
        // The verdict so far comes first in the fold: its refusal, or its ask, stays before theirs.
        let so_far = Heard {
            reason: verdict.reason.clone(),
            ..Heard::new(if verdict.asks() {
                Outcome::Asked
            } else if verdict.refused {
                Outcome::Refused
            } else {
                Outcome::Nothing
            })
        };
        let mut heard_all = vec![("", so_far)];
        for (hook, ran) in managed.iter().zip(ran) {
            let Some(ran) = ran else { continue };
            let heard = read_outcome(hook, self.moment, &ran, self.busy);
            let ms = crate::time::tenths_of_ms(ran.elapsed);
            log_outcome(hook, self.moment, self.agent, &heard, ms);
            let report = HookReport {
                name: hook.name.clone(),
                layer: hook.layer(),
                outcome: heard.kind,
                rewrote: None,
                exit: ran.exit.code(),
                ms,
                error: Some(
                    heard
                        .error
                        .clone()
                        .map_or_else(|| AGAIN.to_string(), |e| format!("{AGAIN}: {e}")),
                ),
                truncated: ran.truncated,
            };
            let ran = Some(ran);
            record.hooks(std::slice::from_ref(&report), std::slice::from_ref(&ran));
            record.layer_of_last(Layer::Managed);
            reports.push(report);
            runs.push(ran);
            heard_all.push((hook.name.as_str(), heard));
        }
        // Only their refusals and asks count: what they rewrite, add or allow of a call they see a
        // second time is not taken.
        let folded = verdict::fold(
            heard_all.iter().map(|(name, heard)| (*name, heard)),
            verdict::Originals {
                moment: self.moment,
                input: None,
                output: None,
            },
            false,
        );
        if folded.refused {
            verdict.refused = true;
            verdict.reason = folded.reason;
            verdict.permission = folded.permission;
            if verdict.permission.is_none() {
                // Refused: nothing of the call runs, its rewrite neither.
                verdict.input = None;
            }
        }
    }
}

/// What the report of a managed hook run again says.
const AGAIN: &str =
    "run again on the call as a lower layer's hook rewrote it (a call the managed hooks never saw)";

/// A hook that only tightens (a repository's; a live one unless the settings let it allow): its allow is
/// read as what else it said (a rewrite, context, or nothing), and the journal says `why`.
fn ignore_allow(outcome: &mut Heard, why: &str) {
    outcome.kind = if outcome.input.is_some() || outcome.output.is_some() {
        Outcome::Rewrote
    } else if outcome.adds.is_empty() {
        Outcome::Nothing
    } else {
        Outcome::Adds
    };
    outcome.reason = None;
    outcome.error = Some(why.into());
}

impl Engine {
    /// A repository's hooks for this fire, when its `cwd` is in one and the managed layer lets them run:
    /// the trusted ones that fit, and the pending ones, to report. What memory tells is answered here;
    /// what needs the disk (the repository looked for, its hooks file read, scripts digested and
    /// copied) runs on a blocking thread, and the fire waits for it, bounded by one deadline for the
    /// whole ([`crate::limits::PROJECT_READ_WAIT`]), each repository of a nested one read side by side
    /// (a hung one holds the fire no longer than one would): hooks that could not be known in time are
    /// reported, never skipped in silence.
    async fn project_hooks(
        &self,
        generation: &Generation,
        moment: &str,
        agent: Option<&str>,
        field: Option<&'static str>,
        event: &Map<String, Value>,
    ) -> ForFire {
        let Some(cwd) = event
            .get("cwd")
            .and_then(Value::as_str)
            .filter(|cwd| !cwd.is_empty())
        else {
            return ForFire::default();
        };
        let policy = generation.settings.policy;
        let off = policy.allow_managed_hooks_only || policy.project_hooks == ProjectHooks::Off;
        let deadline = tokio::time::Instant::now() + crate::limits::PROJECT_READ_WAIT;
        let roots = match self.projects.quick(cwd, moment) {
            Quick::Nothing => return ForFire::default(),
            Quick::NoneAt(_) if !off => return ForFire::default(),
            Quick::NoneAt(root) => vec![root],
            Quick::Look(Some(roots)) => roots,
            Quick::Look(None) => match self.projects.remembered_roots(cwd) {
                Some(found) => found,
                None => {
                    let projects = self.projects.clone();
                    let folder = cwd.to_string();
                    match on_disk(deadline, move || projects.roots_of(&folder)).await {
                        Ok(found) => found,
                        Err(why) => {
                            return self.projects.unknown(Path::new(cwd), &why);
                        }
                    }
                }
            },
        };
        if off {
            for root in roots.iter().rev() {
                self.projects.skipped(root, policy);
            }
            return ForFire::default();
        }
        // Every repository the folder is in (a nested one's hooks add to its parent's, never take
        // their place), the outermost first; most folders are in one.
        let at =
            |root| self.project_hooks_at(root, deadline, generation, moment, agent, field, event);
        let found = match <[PathBuf; 1]>::try_from(roots) {
            Ok([root]) => return at(root).await,
            Err(roots) => side_by_side(roots.into_iter().rev().map(at).collect()).await,
        };
        let mut all = ForFire::default();
        for found in found {
            all.run.extend(found.run);
            all.pending.extend(found.pending);
            all.waiting.extend(found.waiting);
        }
        all
    }

    /// The hooks of the repository at `root` for this fire, what needs the disk waited for until
    /// `deadline` (see [`Engine::project_hooks`]).
    #[allow(clippy::too_many_arguments)]
    async fn project_hooks_at(
        &self,
        root: PathBuf,
        deadline: tokio::time::Instant,
        generation: &Generation,
        moment: &str,
        agent: Option<&str>,
        field: Option<&'static str>,
        event: &Map<String, Value>,
    ) -> ForFire {
        let read = match self.projects.fresh(&root) {
            Some(read) => read,
            None => {
                let projects = self.projects.clone();
                let at = root.clone();
                match on_disk(deadline, move || projects.project(&at)).await {
                    Ok(read) => read,
                    Err(why) => return self.projects.unknown(&root, &why),
                }
            }
        };
        let hooks = match read {
            (Some(hooks), _) => hooks,
            (None, error) => {
                let why = error.unwrap_or_else(|| "unknown".into());
                return self.projects.unknown(&root, &why);
            }
        };
        let chosen = Projects::candidates(
            &hooks.project,
            moment,
            generation.settings.hooks_for(moment),
            |hook| {
                hook.applies_to_agent(agent)
                    && field.is_none_or(|field| hook.matcher.matches_event(event, field))
            },
        );
        if chosen.is_empty() && moment != moment::SESSION_START && !hooks.to_report(moment) {
            return ForFire::default();
        }
        let projects = self.projects.clone();
        let at_moment = moment.to_string();
        let judged = hooks.project;
        match on_disk(deadline, move || {
            projects.judge(&judged, &at_moment, &chosen)
        })
        .await
        {
            Ok(for_fire) => for_fire,
            Err(why) => self.projects.unknown(&root, &why),
        }
    }
}

/// `future` awaited, the fire's `record` first told what the `event` says if the future has to wait:
/// a record left to describe after the answer ([`FireRecord::begin_lazily`]) is described before the
/// fire waits, since a fire that waits may be cut short, its record written without its event.
async fn describing_if_waiting<F: std::future::Future>(
    record: &mut FireRecord,
    event: &Map<String, Value>,
    future: F,
) -> F::Output {
    let mut future = std::pin::pin!(future);
    std::future::poll_fn(|context| {
        let polled = future.as_mut().poll(context);
        if polled.is_pending() {
            record.describe(event);
        }
        polled
    })
    .await
}

/// `work` (it reads the disk) on a blocking thread, waited for until `deadline` (a fire's one deadline
/// for every repository it is in, [`crate::limits::PROJECT_READ_WAIT`] from its start): `Err` says why
/// it gave no answer (it may still finish, and what it read is then remembered for the next fire).
async fn on_disk<T: Send + 'static>(
    deadline: tokio::time::Instant,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let late = || {
        format!(
            "reading them did not end within the {:.1} s a fire waits for the disk, for every repository it is in (a slow or hung file system)",
            crate::limits::PROJECT_READ_WAIT.as_secs_f64()
        )
    };
    if tokio::time::Instant::now() >= deadline {
        // Not begun: the fire's time for the disk is spent.
        return Err(late());
    }
    match tokio::time::timeout_at(deadline, tokio::task::spawn_blocking(work)).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(e)) => Err(format!("reading them failed ({e})")),
        Err(_) => Err(late()),
    }
}

/// `futures` run side by side on this task (none is spawned: they may borrow), their outputs in the
/// order given, whichever finished first.
async fn side_by_side<F: std::future::Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<std::pin::Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|context| {
        let mut waiting = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(context) {
                    std::task::Poll::Ready(done) => *output = Some(done),
                    std::task::Poll::Pending => waiting = true,
                }
            }
        }
        if waiting {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

/// A refusal hookd makes itself (the managed layer's `require_fail_closed`, its guard of itself), as
/// a hook of that name that refused: in the fire's report and its record, and the verdict's reason,
/// over whatever the hooks said (no allow, no rewrite of the input beside it).
fn refused_by_hookd(
    name: &str,
    reason: String,
    record: &mut FireRecord,
    reports: &mut Vec<HookReport>,
    runs: &mut Vec<Option<Ran>>,
    verdict: &mut Verdict,
) {
    let report = HookReport {
        name: name.to_string(),
        layer: None,
        outcome: Outcome::Refused,
        rewrote: None,
        exit: None,
        ms: 0.0,
        error: None,
        truncated: false,
    };
    record.hooks(std::slice::from_ref(&report), &[None]);
    reports.push(report);
    runs.push(None);
    verdict.reason = Some(reason);
    verdict.refused = true;
    verdict.permission = None;
    verdict.input = None;
}

/// Refused where the fire's agent only takes advice at `moment`: it will not stop for it.
fn advisory(agent: Option<&str>, moment: &str, refused: bool) -> bool {
    refused
        && agent
            .and_then(crate::tables::agent::Agent::from_name)
            .is_some_and(|agent| agent.advisory(moment))
}

/// What the rewrites of a fire at `moment` rewrite: the event's `tool_input` where the call has not run
/// yet, its `tool_response` where it has, each `None` where the moment takes no such rewrite.
fn originals<'a>(moment: &'a str, event: &'a Map<String, Value>) -> verdict::Originals<'a> {
    verdict::Originals {
        moment,
        input: moment::rewrites_input(moment)
            .then(|| event.get("tool_input").unwrap_or_else(|| &NO_INPUT)),
        output: moment::rewrites_output(moment)
            .then(|| event.get("tool_response").unwrap_or(&NO_OUTPUT)),
    }
}

/// What a rewrite of the input rewrites when the event has no `tool_input`: an input with no fields,
/// so that the rewrites still compose field by field rather than be dropped for want of something to
/// change.
static NO_INPUT: std::sync::LazyLock<Value> =
    std::sync::LazyLock::new(|| Value::Object(Map::new()));

/// What a rewrite of the output rewrites when the event has no `tool_response`: nothing, replaced whole.
static NO_OUTPUT: Value = Value::Null;

/// A matched value longer than this (tool names are tens of bytes) is matched on a blocking thread: a
/// regular expression against a value of a megabyte can take seconds, and on the runtime's one thread
/// that would hold up every other client.
const LONG_MATCHED_VALUE: usize = 256;

/// Besides the moment's matcher field, the one a matcher looks at: the agent's own tool name.
const MATCHED_TOO: &str = "agent_tool_name";

/// Whether a value a matcher looks at is long enough to be matched on a blocking thread
/// ([`select_hooks`] then waits for it).
fn matched_long(event: &Map<String, Value>, field: &str) -> bool {
    [field, MATCHED_TOO].iter().any(|key| {
        event
            .get(*key)
            .and_then(Value::as_str)
            .is_some_and(|value| value.len() > LONG_MATCHED_VALUE)
    })
}

/// The enabled hooks of `moment` that apply to `agent` and whose matcher fits the event, in the settings
/// file's order, then the repository's hooks that fit (`project`), then the live ones (`live`), in the
/// order hung.
async fn select_hooks(
    generation: &Arc<Generation>,
    project: &[Arc<Hook>],
    live: Vec<Arc<Hook>>,
    moment: &str,
    agent: Option<&str>,
    field: Option<&'static str>,
    event: &Map<String, Value>,
) -> Vec<Arc<Hook>> {
    let candidates = generation
        .settings
        .hooks_for(moment)
        .iter()
        .filter(|hook| hook.enabled && hook.applies_to_agent(agent))
        .chain(project.iter())
        .chain(live.iter());
    let Some(field) = field else {
        return candidates.cloned().collect();
    };
    if !matched_long(event, field) {
        return candidates
            .filter(|hook| hook.matcher.matches_event(event, field))
            .cloned()
            .collect();
    }
    let matched: Map<String, Value> = [field, MATCHED_TOO]
        .into_iter()
        .filter_map(|key| Some((key.to_string(), event.get(key)?.clone())))
        .collect();
    let candidates: Vec<Arc<Hook>> = candidates.cloned().collect();
    let to_match = candidates.clone();
    let selecting = tokio::task::spawn_blocking(move || {
        to_match
            .into_iter()
            .filter(|hook| hook.matcher.matches_event(&matched, field))
            .collect()
    });
    selecting.await.unwrap_or_else(|e| {
        // Never silently none: a hook that should have run and did not is a policy that did not hold.
        tracing::error!("matching hooks failed abnormally ({e}): running every hook of the moment");
        candidates
    })
}

/// The hooks whose `if` fits the call (and those with none), in the same order: the call is read once,
/// for all of them, and only when one has an `if`; a large event's on a blocking thread, as its
/// serialization is (a command line of megabytes is read in milliseconds, not on the runtime's one
/// thread). An undecidable event (only its head was read) is not judged: its hooks are kept, to be read
/// as failed, so that their `on_failure` decides what hookd could not read, as for a hook without one.
async fn keep_fitting(
    mut hooks: Vec<Arc<Hook>>,
    event: &mut Map<String, Value>,
    large: bool,
    undecidable: bool,
) -> Vec<Arc<Hook>> {
    if undecidable || hooks.iter().all(|hook| hook.condition.is_none()) {
        return hooks;
    }
    let home = crate::paths::home();
    let call = if large {
        let taken = std::mem::take(event);
        let reading = tokio::task::spawn_blocking(move || {
            let call = crate::settings::ToolCall::read(&taken, &home);
            (call, taken)
        });
        match reading.await {
            Ok((call, taken)) => {
                *event = taken;
                call
            }
            Err(e) => {
                // The event went with the thread: every hook is kept, and none can be given it whole.
                tracing::error!(
                    "reading a tool call for the hooks' `if` failed abnormally ({e}): running every hook of the moment"
                );
                return hooks;
            }
        }
    } else {
        crate::settings::ToolCall::read(event, &home)
    };
    hooks.retain(|hook| match &hook.condition {
        None => true,
        Some(condition) => condition.fits_event(call.as_ref()),
    });
    hooks
}

/// A Stop (of a session) in the count of refused Stops in a row (docs/settings.md, "Stop loops").
struct StopLoop {
    agent: String,
    session: String,
    /// Stops of this session refused in a row before this one.
    refusals: u32,
}

impl StopLoop {
    /// Tells Stop hooks the count (`stop_refusals`), and starts the count over on a new prompt. `Some`
    /// for a Stop whose verdict must be counted.
    fn begin(
        engine: &Engine,
        moment: &str,
        agent: Option<&str>,
        event: &mut Map<String, Value>,
    ) -> Option<StopLoop> {
        // Most moments are apart from the count: nothing looked up or copied for them.
        let stop_loop = moment::stop_loop(moment);
        if matches!(stop_loop, moment::StopLoop::Apart) {
            return None;
        }
        let session = event
            .get("session_id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let agent = agent.unwrap_or_default().to_string();
        match stop_loop {
            moment::StopLoop::StartsOver => {
                let prompt = event
                    .get("prompt")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                engine.stop_loops.prompt_submitted(&agent, &session, prompt);
                None
            }
            moment::StopLoop::Counted => {
                let refusals = engine.stop_loops.refusals(&agent, &session);
                event.insert("stop_refusals".into(), refusals.into());
                Some(StopLoop {
                    agent,
                    session,
                    refusals,
                })
            }
            moment::StopLoop::Apart => None,
        }
    }

    /// Past the cap, the Stop is let through whatever the hooks said, and the adds say why; then the
    /// verdict is counted.
    fn finish(self, engine: &Engine, cap: u32, verdict: &mut Verdict) {
        if verdict.refused && self.refusals >= cap {
            let reason = verdict.reason.take().unwrap_or_default();
            verdict.refused = false;
            // Let through: not an ask either (nobody is asked about a Stop hookd lets through).
            verdict.permission = None;
            verdict.adds.push(format!(
                "hookd let this Stop through: Stop was refused {} times in a row in this session (stop_refusal_cap = {cap}); the last refusal said: {reason}",
                self.refusals
            ));
            // The session id is the client's data: only at debug level.
            tracing::warn!(agent = %self.agent, refusals = self.refusals, "stop_refusal_cap reached: letting the Stop through");
            tracing::debug!(session = %self.session, "the session whose Stop was let through");
            crate::engine::recording::stop_cap(&self.agent, &self.session, self.refusals, &reason);
        }
        engine.stop_loops.record_stop(
            &self.agent,
            &self.session,
            verdict
                .refused
                .then(|| verdict.reason.as_deref().unwrap_or_default()),
        );
    }
}

/// The hooks of a sequential moment (`sequential = [...]`): run one after another in the settings
/// file's order, each given the tool input (or output) as the hooks before it rewrote it. A refusal ends
/// the chain (the hooks after it are skipped: the call will not run, whatever they say). The agent's time
/// limit at the moment holds for the whole chain, not each hook: a chain that outlived it would have its
/// verdict lost with the relay giving up.
struct Chain<'a> {
    moment: &'a str,
    agent: Option<&'a str>,
    busy: bool,
    /// The event is large: serialized off the runtime's thread.
    large: bool,
}

impl Chain<'_> {
    async fn run(
        &self,
        engine: &Arc<Engine>,
        generation: &Arc<Generation>,
        hooks: &[Arc<Hook>],
        event: &mut Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Vec<Option<Ran>> {
        let originals = originals(self.moment, event);
        let field = match (originals.input, originals.output) {
            (Some(input), _) => Some(("tool_input", Rewrote::Input, input)),
            (None, Some(output)) => Some(("tool_response", Rewrote::Output, output)),
            (None, None) => None,
        }
        .map(|(name, rewritten, original)| {
            let rewrites = Rewrites::new(original, name, self.moment, true);
            ((name, rewritten), rewrites)
        });
        let (field, mut rewrites) = field.unzip();
        let started = Instant::now();
        let mut runs: Vec<Option<Ran>> = Vec::with_capacity(hooks.len());
        let mut refused = false;
        let mut lost: Option<String> = None;
        for hook in hooks {
            if refused {
                runs.push(None);
                continue;
            }
            if let Some(why) = &lost {
                runs.push(Some(Ran::lost(why)));
                continue;
            }
            if cancel.is_cancelled() {
                // Not run because nobody waits for the verdict (or the daemon is stopping): never read
                // as skipped after a refusal, which would decide the fire without its guards.
                runs.push(Some(Ran::cancelled()));
                continue;
            }
            let mut input =
                match serialized(event, self.moment, self.agent, generation, self.large).await {
                    Ok(input) => input,
                    Err(e) => {
                        // The event went with the thread that failed: no hook after can be given it.
                        lost = Some(e);
                        runs.push(Some(Ran::lost(lost.as_deref().unwrap_or_default())));
                        continue;
                    }
                };
            if let Some(cap) = input.time_cap {
                let left = cap.saturating_sub(started.elapsed());
                if left.is_zero() {
                    runs.push(Some(Ran::lost(
                        "not run: the hooks before it in the sequential chain used the agent's time limit",
                    )));
                    continue;
                }
                input.time_cap = Some(left);
            }
            let ran = run_one(engine, generation, hook, &input, cancel).await;
            let outcome = read_outcome(hook, self.moment, &ran, self.busy);
            refused = outcome.kind == Outcome::Refused;
            let rewrite = match field {
                Some((_, Rewrote::Input)) => outcome.input.as_ref(),
                Some((_, Rewrote::Output)) => outcome.output.as_ref(),
                Some((_, Rewrote::Unknown)) | None => None,
            };
            if let (Some(rewrites), Some(rewrite), Some((name, _))) =
                (rewrites.as_mut(), rewrite, field)
                && !refused
                && rewrites.apply(&hook.name, rewrite, !hook.is_live()).is_ok()
            {
                event.insert(name.to_string(), rewrites.current().clone());
            }
            runs.push(Some(ran));
        }
        // The fold reads the rewrites against the event as the first hook was given it.
        if let (Some(rewrites), Some((name, _))) = (rewrites, field) {
            event.insert(name.to_string(), rewrites.into_original());
        }
        runs
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::time::Instant;

    /// What the disk does not tell in time, or tells by failing, is an answer of its own (said in the
    /// fire), never a wait without end or a fire that passes as if there were nothing to read; and the
    /// deadline is the fire's, not each read's: a read begun once it passed is not waited for.
    #[tokio::test]
    async fn a_read_too_slow_or_failing_is_said() {
        let slow = super::on_disk(Instant::now() + Duration::from_millis(20), || {
            std::thread::sleep(Duration::from_millis(300));
        })
        .await;
        assert!(
            slow.as_ref()
                .is_err_and(|why| why.contains("did not end within")),
            "{slow:?}"
        );
        let failed = super::on_disk(Instant::now() + Duration::from_secs(5), || -> u8 {
            panic!("the disk read failed");
        })
        .await;
        assert!(
            failed
                .as_ref()
                .is_err_and(|why| why.contains("reading them failed")),
            "{failed:?}"
        );
        assert_eq!(
            super::on_disk(Instant::now() + Duration::from_secs(5), || 7).await,
            Ok(7)
        );
        let passed = super::on_disk(Instant::now() - Duration::from_millis(1), || 7).await;
        assert!(passed.is_err(), "{passed:?}");
    }

    /// The repositories of a nested one are read side by side under the fire's one deadline: one that
    /// hangs is said not to have come in time, and does not hold back the others, which come in the
    /// order given.
    #[tokio::test]
    async fn nested_repositories_are_read_side_by_side_within_one_deadline() {
        let deadline = Instant::now() + Duration::from_secs(1);
        let (release, hung) = std::sync::mpsc::channel::<()>();
        let reads = vec![
            Box::pin(super::on_disk(deadline, || "outer"))
                as std::pin::Pin<Box<dyn std::future::Future<Output = Result<&str, String>>>>,
            Box::pin(super::on_disk(deadline, move || {
                let _ = hung.recv();
                "hung"
            })),
            Box::pin(super::on_disk(deadline, || "inner")),
        ];
        let read = super::side_by_side(reads).await;
        release.send(()).unwrap();
        assert_eq!(read.len(), 3, "{read:?}");
        assert_eq!(read[0], Ok("outer"));
        assert!(
            read[1]
                .as_ref()
                .is_err_and(|why| why.contains("did not end within")),
            "{read:?}"
        );
        assert_eq!(read[2], Ok("inner"), "not held behind the hung one");
    }
}
