//! What the daemon's tasks share: the engine, the settings file's reload state, and the daemon's own
//! connections, budgets and shutdown signal.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use crate::daemon::descriptors::Descriptors;
use crate::daemon::journal::Journal;
use crate::daemon::memory::Memory;
use crate::daemon::systemd::Notifier;
use crate::engine::Engine;
use crate::protocol::{LastReload, LastWeakened};
use crate::settings::Settings;
use crate::sync::lock;

/// The last good settings of each layer the daemon reads itself (a repository's are the engine's).
#[derive(Debug)]
pub struct Layers {
    /// The managed layer's (`None`: it has no file), and a hash of its texts.
    pub managed: Option<Settings>,
    pub managed_hash: Option<u64>,
    /// The user's file's, as read (not yet folded).
    pub user: Settings,
}

/// The daemon: an engine, and what serves it.
#[derive(Debug)]
pub struct Daemon {
    /// Decides every fire, on the settings in force.
    pub engine: Arc<Engine>,
    /// The settings file, as the daemon was told it (absolute).
    pub config_path: PathBuf,
    pub(crate) last_reload: Mutex<LastReload>,
    /// The last reload that made the settings guard less, for `status`.
    pub(crate) last_weakened: Mutex<Option<LastWeakened>>,
    /// A hash of the text the settings in force were read from: a change event that leaves the file as it
    /// was (a `touch`, an editor saving unchanged) does not make a new generation.
    pub(crate) loaded_text: Mutex<Option<u64>>,
    /// The managed layer's folder (`/etc/hookd`, or `serve --managed DIR`).
    pub managed_dir: PathBuf,
    /// Each layer's last good settings, folded into the engine's at every change of either: a layer's
    /// error keeps its own last good settings without touching the other's.
    pub(crate) layers: Mutex<Layers>,
    /// Tells systemd about reloads and shutdown; silent outside systemd.
    pub notifier: Notifier,
    pub started: Instant,
    /// Cancelled when shutdown begins: no new requests are taken.
    pub draining: CancellationToken,
    /// The HTTP listener for agents' http hooks, started, moved and stopped by the settings.
    pub http: crate::daemon::http::control::Control,
    /// Connection slots left by the open-file limit once hooks have their reserve.
    pub descriptors: Descriptors,
    /// The requests and answers every connection holds, against the daemon's budget.
    pub memory: Arc<Memory>,
    /// The record's writer: the journal, its counts, its watchers. `None` when this process has a
    /// recorder already.
    pub journal: Option<Arc<Journal>>,
    /// The journal's export to an OpenTelemetry collector (docs/export.md).
    #[cfg(feature = "otlp")]
    pub exporter: Arc<crate::export::Exporter>,
}

impl Daemon {
    pub fn new(
        config_path: PathBuf,
        managed_dir: PathBuf,
        layers: Layers,
        loaded_text: Option<u64>,
        notifier: Notifier,
        http_token: PathBuf,
    ) -> Arc<Daemon> {
        let settings = crate::layers::fold::fold(layers.managed.as_ref(), layers.user.clone());
        let descriptors = Descriptors::new(&settings);
        let engine = Engine::new(settings);
        // Before the journal's writer starts: the exporter's first place is the journal's end as it is
        // before this start writes anything.
        #[cfg(feature = "otlp")]
        let exporter = {
            let engine = engine.clone();
            crate::export::Exporter::start(
                crate::paths::state_dir(),
                Box::new(move || engine.current().settings.export.otlp.clone()),
            )
        };
        let journal = Journal::start(engine.clone(), crate::paths::state_dir());
        // Once the journal is there to take it.
        note_layers(&engine.current().settings);
        Arc::new(Daemon {
            engine,
            config_path,
            last_reload: Mutex::new(LastReload::now(None)),
            last_weakened: Mutex::new(None),
            loaded_text: Mutex::new(loaded_text),
            managed_dir,
            layers: Mutex::new(layers),
            notifier,
            started: Instant::now(),
            draining: CancellationToken::new(),
            http: crate::daemon::http::control::Control::new(http_token),
            descriptors,
            memory: Arc::default(),
            journal,
            #[cfg(feature = "otlp")]
            exporter,
        })
    }

    /// The managed layer and the user's file as last read, folded: what the engine runs.
    pub(crate) fn folded(&self) -> Settings {
        let layers = lock(&self.layers);
        crate::layers::fold::fold(layers.managed.as_ref(), layers.user.clone())
    }

    pub fn last_reload(&self) -> LastReload {
        lock(&self.last_reload).clone()
    }

    pub fn last_weakened(&self) -> Option<LastWeakened> {
        lock(&self.last_weakened).clone()
    }
}

/// What folding the layers did that a person should know (a hook run once for two layers, the user's
/// hooks skipped by the managed layer's policy): in the log, and in the journal with why.
pub(crate) fn note_layers(settings: &Settings) {
    for note in &settings.layer_notes {
        tracing::info!("layers: {note}");
    }
    if settings.layer_notes.is_empty() {
        return;
    }
    let mut record = crate::record::Record::new(crate::record::Kind::Reload);
    record.summary = Some(crate::record::cut(
        &format!("layers: {}", settings.layer_notes.join("; ")),
        4000,
    ));
    record.file = settings
        .managed_files
        .first()
        .map(|file| file.display().to_string());
    crate::record::note(record);
}
