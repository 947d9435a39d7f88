//! The engine's state: the settings in force as numbered generations (a fire keeps the one it started
//! on), the processes running for them, and what fires share. A fire's own path is in `fire.rs`; this
//! is what it is run on.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::engine::runner::Runner;
use crate::engine::stoploop::StopLoops;
use crate::engine::weakened::weakened;
use crate::engine::worker::{self, Pool};
use crate::engine::{asks, protect, spawn};
use crate::settings::{Program, Settings};

/// How long, at shutdown, hooks still running in the background are waited for before they are
/// stopped: once the fires are answered, as long as the fires' hooks are given once abandoned.
const BACKGROUND_CLOSE: Duration = crate::limits::CLOSE_DEADLINE;

/// One whole settings file as loaded, numbered. A fire takes one and keeps it to its end, so a reload in
/// the middle of a fire never mixes two files.
#[derive(Debug)]
pub struct Generation {
    /// 1 for the settings the engine started with, then one more per installed settings.
    pub number: u64,
    pub settings: Settings,
    /// `max_processes` permits. Kept from one generation to the next while `max_processes` is unchanged,
    /// so that a reload does not let more processes run than the limit.
    pub slots: Arc<Semaphore>,
    /// The worker hooks' processes, by hook name. A reload keeps a pool whose settings did not change
    /// (its processes keep running); the others stop when the last fire that started on this generation
    /// ends, so that a fire is answered by the workers it started with (the pool stops when dropped).
    pub workers: HashMap<String, Arc<Pool>>,
    /// hookd's guard of itself for these settings (`protect`): the paths it keeps, made once.
    pub shield: Arc<protect::Shield>,
}

/// What installing new settings changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The new generation's number.
    pub generation: u64,
    /// The hooks the old settings had and the new ones do not, as `PreToolUse: a, b; Stop: c`; empty
    /// when none was dropped. Said in the log: a generation with fewer guards is what a half-written
    /// file looks like.
    pub dropped: String,
    /// Every way the new settings guard less than the old ones ([`weakened()`]): removed, disabled,
    /// relaxed or narrowed hooks, hookd's guard of itself turned off. Empty when they guard as much or
    /// more. The daemon journals it and `status` shows it: an agent that edits the settings weakens them
    /// in these ways.
    pub weakened: Vec<crate::record::Weakening>,
}

/// The settings in force, the processes running for them, and what fires share (the stop loops).
#[derive(Debug)]
pub struct Engine {
    pub(super) current: ArcSwap<Generation>,
    pub(super) runner: Runner,
    /// Consecutive refused Stops per agent and session.
    pub(super) stop_loops: StopLoops,
    /// Fires being worked on right now.
    pub(super) in_flight: AtomicUsize,
    /// Serializes installs, so that generations are numbered without gaps and none is lost to another
    /// install between its load and its store.
    pub(super) installing: std::sync::Mutex<()>,
    /// Cancelled when the fires still running are given up (the daemon's drain deadline): their hooks
    /// are stopped, and they are answered `NotDecided::ShuttingDown`.
    pub(super) abandoned: CancellationToken,
    /// The calls hookd answered "ask" for, waiting for what came of them (`asks.rs`).
    pub(super) asks: asks::Asks,
    /// The hooks running in the background (`background = true`), which no fire waits for.
    pub(super) background: tokio_util::task::TaskTracker,
    /// Hooks running in the background now, held to half of `max_processes` (`background.rs`).
    pub(super) background_hooks: std::sync::Arc<AtomicUsize>,
    /// Cancelled at shutdown once the hooks in the background had their time: stops them.
    pub(super) background_stop: CancellationToken,
    /// Cancelled at shutdown: stops every worker, of the generation in force and of any older one a fire
    /// still holds.
    pub(super) workers_stop: CancellationToken,
    /// Where hookd lives beyond its settings, which its guard of itself keeps (the daemon says them
    /// with [`Engine::guard_places`]).
    pub(super) places: std::sync::Mutex<Arc<protect::Places>>,
    /// The repositories fires came from, and their hooks (`projects.rs`).
    pub(super) projects: Arc<crate::engine::projects::Projects>,
    /// The hooks hung live over the socket, and their clients (`live.rs`).
    pub(super) live: crate::engine::live::Live,
}

impl Engine {
    /// An engine on `settings` (generation 1), with their worker hooks started. Needs a tokio runtime.
    pub fn new(settings: Settings) -> Arc<Engine> {
        spawn::keep_exits_waitable();
        let runner = Runner::default();
        let workers_stop = CancellationToken::new();
        let workers = start_workers(&settings, &HashMap::new(), &runner, &workers_stop);
        let places = Arc::new(protect::Places::of_this_user());
        Arc::new(Engine {
            current: ArcSwap::from_pointee(Generation {
                number: 1,
                slots: Arc::new(Semaphore::new(settings.defaults.max_processes)),
                shield: Arc::new(protect::Shield::new(&settings, &places)),
                settings,
                workers,
            }),
            places: std::sync::Mutex::new(places),
            runner,
            stop_loops: StopLoops::default(),
            in_flight: AtomicUsize::new(0),
            installing: std::sync::Mutex::new(()),
            abandoned: CancellationToken::new(),
            asks: asks::Asks::default(),
            background: tokio_util::task::TaskTracker::new(),
            background_stop: CancellationToken::new(),
            background_hooks: std::sync::Arc::new(AtomicUsize::new(0)),
            workers_stop,
            projects: Arc::new(crate::engine::projects::Projects::default()),
            live: crate::engine::live::Live::default(),
        })
    }

    /// The hooks hung live over the socket (docs/protocol.md, "Live hooks").
    pub fn live(&self) -> &crate::engine::live::Live {
        &self.live
    }

    /// Makes the engine the subreaper of every hook's descendants and starts sweeping for escapees
    /// (processes that leave their hook's group). Process-wide: the daemon does it once; an engine held in
    /// a test need not.
    pub fn start_reaper(&self) {
        self.runner.reaper.start(&self.runner.cleanups);
    }

    /// The settings in force now.
    pub fn current(&self) -> Arc<Generation> {
        self.current.load_full()
    }

    /// Swaps in new settings as the next generation. Worker hooks whose settings did not change keep
    /// their processes; new ones start; the ones dropped stop when the last fire holding them ends.
    pub fn install(&self, settings: Settings) -> Installed {
        let _installing = crate::sync::lock(&self.installing);
        let previous = self.current();
        let slots = if previous.settings.defaults.max_processes == settings.defaults.max_processes {
            previous.slots.clone()
        } else {
            Arc::new(Semaphore::new(settings.defaults.max_processes))
        };
        let dropped = dropped_hooks(&previous.settings, &settings);
        let weakened = weakened(&previous.settings, &settings);
        let generation = previous.number + 1;
        let workers = start_workers(
            &settings,
            &previous.workers,
            &self.runner,
            &self.workers_stop,
        );
        let places = crate::sync::lock(&self.places).clone();
        self.current.store(Arc::new(Generation {
            number: generation,
            shield: Arc::new(protect::Shield::new(&settings, &places)),
            settings,
            slots,
            workers,
        }));
        Installed {
            generation,
            dropped,
            weakened,
        }
    }

    /// Says where hookd lives beyond its settings (the socket it serves, its pid, the agents' settings
    /// that hold its relay), for its guard of itself: the generation in force is guarded by them at
    /// once, and every later one.
    pub fn guard_places(&self, places: protect::Places) {
        let _installing = crate::sync::lock(&self.installing);
        let places = Arc::new(places);
        *crate::sync::lock(&self.places) = places.clone();
        let current = self.current();
        self.current.store(Arc::new(Generation {
            number: current.number,
            settings: current.settings.clone(),
            slots: current.slots.clone(),
            workers: current.workers.clone(),
            shield: Arc::new(protect::Shield::new(&current.settings, &places)),
        }));
    }

    /// The files `hookd setup` wrote the relay into (its registry), for the guard of itself: taken in at
    /// once when they changed.
    pub fn guard_set_up_files(&self, files: Vec<std::path::PathBuf>) {
        let places = crate::sync::lock(&self.places).clone();
        if places.set_up_files == files {
            return;
        }
        let mut places = (*places).clone();
        places.set_up_files = files;
        self.guard_places(places);
    }

    /// Fires being worked on right now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// The repositories fires came from: their hooks, pending ones, errors (for `status`). Their
    /// scripts are digested on a blocking thread, within [`crate::limits::STATUS_DIGEST_WAIT`].
    pub async fn projects(&self) -> Vec<crate::engine::projects::ProjectState> {
        self.projects
            .states_within(crate::limits::STATUS_DIGEST_WAIT)
            .await
    }

    /// The token whose cancelling gives up every fire still running. A fire's own `cancel` (its client
    /// left) should be a child of it.
    pub fn abandoned(&self) -> &CancellationToken {
        &self.abandoned
    }

    /// Gives up every fire still running: their hooks are stopped.
    pub fn abandon(&self) {
        self.abandoned.cancel();
    }

    /// Stops every worker and waits up to `deadline` for the hooks being stopped (SIGKILL follows SIGTERM)
    /// to be reaped: at shutdown, once the fires are answered or abandoned.
    pub async fn shut_down(&self, deadline: Duration) {
        self.asks.stopping();
        // The hooks in the background first, while their workers still run: their time, then stopped.
        self.background.close();
        let waited = BACKGROUND_CLOSE.min(deadline);
        if tokio::time::timeout(waited, self.background.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                running = self.background.len(),
                "hooks in the background still running at shutdown: stopping them"
            );
            self.background_stop.cancel();
            let _ = tokio::time::timeout(deadline, self.background.wait()).await;
        }
        self.workers_stop.cancel();
        let cleanups = &self.runner.cleanups;
        cleanups.close();
        let _ = tokio::time::timeout(deadline, cleanups.wait()).await;
    }

    /// Counts a fire as in flight until the returned guard is dropped.
    pub(super) fn fire_started(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(self.clone())
    }
}

/// The pools for the settings' enabled worker hooks: those of `previous` whose settings are unchanged,
/// new ones for the rest.
fn start_workers(
    settings: &Settings,
    previous: &HashMap<String, Arc<Pool>>,
    runner: &Runner,
    stopping: &CancellationToken,
) -> HashMap<String, Arc<Pool>> {
    let mut workers = HashMap::new();
    for hook in settings.hooks.iter().flat_map(|(_, hooks)| hooks.iter()) {
        if !hook.enabled || !matches!(hook.program, Program::Worker { .. }) {
            continue;
        }
        let dir = hook.dir.clone().unwrap_or_else(|| settings.dir.clone());
        let pool = match previous.get(&hook.name) {
            Some(pool) if pool.identity == worker::identity(hook, &dir) => pool.clone(),
            _ => Pool::start(hook, dir, runner, stopping),
        };
        workers.insert(hook.name.clone(), pool);
    }
    workers
}

/// The hooks of `old` that `new` no longer has (by name, per moment), as `PreToolUse: a, b; Stop: c`;
/// empty when none was dropped.
pub fn dropped_hooks(old: &Settings, new: &Settings) -> String {
    let mut parts = Vec::new();
    for (moment, hooks) in &old.hooks {
        let kept: std::collections::HashSet<&str> = new
            .hooks_for(moment)
            .iter()
            .map(|h| h.name.as_str())
            .collect();
        let gone: Vec<&str> = hooks
            .iter()
            .map(|h| h.name.as_str())
            .filter(|name| !kept.contains(name))
            .collect();
        if !gone.is_empty() {
            parts.push(format!("{moment}: {}", gone.join(", ")));
        }
    }
    parts.join("; ")
}

/// One fire in flight; dropping it counts the fire as done.
pub(super) struct InFlight(Arc<Engine>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}
