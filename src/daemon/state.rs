//! What the daemon's tasks share: the current generation of the settings, and the daemon's counters and
//! shutdown signals.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use arc_swap::ArcSwap;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::daemon::systemd::Notifier;
use crate::engine::runner::Runner;
use crate::engine::stoploop::StopLoops;
use crate::engine::worker::Pool;
use crate::protocol::LastReload;
use crate::settings::Settings;
pub use crate::sync::lock;

/// One whole settings file as loaded, numbered. A fire takes one and keeps it to its end, so a reload in
/// the middle of a fire never mixes two files.
#[derive(Debug)]
pub struct Generation {
    /// 1 for the settings the daemon started with, then one more per successful reload.
    pub number: u64,
    pub settings: Settings,
    /// `max_processes` permits. Kept from one generation to the next while `max_processes` is unchanged,
    /// so that a reload does not let more processes run than the limit.
    pub slots: Arc<Semaphore>,
    /// The worker hooks' processes, by hook name. A reload keeps a pool whose settings did not change
    /// (its processes keep running); the others stop when the last fire that started on this generation
    /// ends, so that a fire is answered by the workers it started with (the pool stops when dropped).
    pub workers: HashMap<String, Arc<Pool>>,
}

/// The daemon's shared state.
#[derive(Debug)]
pub struct Shared {
    /// The settings file, as the daemon was told it (absolute).
    pub config_path: PathBuf,
    current: ArcSwap<Generation>,
    /// Serializes reloads (the `reload` request, SIGHUP), so generations are numbered without gaps.
    pub(crate) reload_lock: Mutex<()>,
    pub(crate) last_reload: Mutex<LastReload>,
    /// A hash of the text the settings in force were read from: a change event that leaves the file as it
    /// was (a `touch`, an editor saving unchanged) does not make a new generation.
    pub(crate) loaded_text: Mutex<Option<u64>>,
    /// Tells systemd about reloads and shutdown; silent outside systemd.
    pub notifier: Notifier,
    /// Fires being worked on right now, for `status`.
    in_flight: AtomicUsize,
    pub started: Instant,
    pub runner: Runner,
    /// Consecutive refused Stops per agent and session.
    pub stop_loops: StopLoops,
    /// Cancelled when shutdown begins: no new requests are taken.
    pub draining: CancellationToken,
    /// Cancelled when the drain deadline passes: the hooks still running are killed.
    pub abandon: CancellationToken,
    /// The HTTP listener for agents' http hooks, started, moved and stopped by the settings.
    pub http: crate::daemon::http::Control,
    /// Connection slots left by the open-file limit once hooks have their reserve.
    pub descriptors: crate::daemon::descriptors::Descriptors,
    /// The requests and answers every connection holds, against the daemon's budget.
    pub memory: Arc<crate::daemon::memory::Memory>,
    /// Cancelled at shutdown: stops every worker, of the generation in force and of any older one a fire
    /// still holds.
    workers_stop: CancellationToken,
}

impl Shared {
    pub fn new(
        config_path: PathBuf,
        settings: Settings,
        loaded_text: Option<u64>,
        last_reload: LastReload,
        notifier: Notifier,
        http_token: PathBuf,
    ) -> Arc<Shared> {
        let slots = Arc::new(Semaphore::new(settings.defaults.max_processes));
        let runner = Runner::default();
        let descriptors = crate::daemon::descriptors::Descriptors::new(&settings);
        let workers_stop = CancellationToken::new();
        let workers = start_workers(&settings, &HashMap::new(), &runner, &workers_stop);
        Arc::new(Shared {
            config_path,
            current: ArcSwap::from_pointee(Generation {
                number: 1,
                settings,
                slots,
                workers,
            }),
            reload_lock: Mutex::new(()),
            last_reload: Mutex::new(last_reload),
            loaded_text: Mutex::new(loaded_text),
            notifier,
            in_flight: AtomicUsize::new(0),
            started: Instant::now(),
            runner,
            stop_loops: StopLoops::default(),
            draining: CancellationToken::new(),
            abandon: CancellationToken::new(),
            http: crate::daemon::http::Control::new(http_token),
            descriptors,
            memory: Arc::default(),
            workers_stop,
        })
    }

    /// The settings in force now.
    pub fn current(&self) -> Arc<Generation> {
        self.current.load_full()
    }

    /// Swaps in new settings as the next generation; returns its number. Callers hold `reload_lock`.
    pub(crate) fn install(&self, settings: Settings) -> u64 {
        let previous = self.current();
        let slots = if previous.settings.defaults.max_processes == settings.defaults.max_processes {
            previous.slots.clone()
        } else {
            Arc::new(Semaphore::new(settings.defaults.max_processes))
        };
        let number = previous.number + 1;
        // The pools not kept are not stopped here: the fires running on `previous` hold them until they
        // are answered, and dropping the last of them stops the workers.
        let workers = start_workers(
            &settings,
            &previous.workers,
            &self.runner,
            &self.workers_stop,
        );
        self.current.store(Arc::new(Generation {
            number,
            settings,
            slots,
            workers,
        }));
        number
    }

    /// Stops every worker (at shutdown, once the fires are answered or abandoned), whichever generation
    /// holds it.
    pub fn stop_workers(&self) {
        self.workers_stop.cancel();
    }

    pub fn last_reload(&self) -> LastReload {
        lock(&self.last_reload).clone()
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Counts a fire as in flight until the returned guard is dropped.
    pub fn fire_started(self: &Arc<Self>) -> InFlight {
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
        if !hook.enabled || !matches!(hook.program, crate::settings::Program::Worker { .. }) {
            continue;
        }
        let pool = match previous.get(&hook.name) {
            Some(pool) if pool.identity == crate::engine::worker::identity(hook, &settings.dir) => {
                pool.clone()
            }
            _ => Pool::start(hook, settings.dir.clone(), runner, stopping),
        };
        workers.insert(hook.name.clone(), pool);
    }
    workers
}

/// One fire in flight; dropping it counts the fire as done.
pub struct InFlight(Arc<Shared>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}
