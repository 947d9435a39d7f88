//! Reloading the settings: validate the whole new file, then swap it in atomically, or keep the last good
//! settings and say why (in the log, in `status`, and to the `reload` request).
//!
//! The daemon has one thread. Reading and validating a file (up to 4 MiB, tens of thousands of hooks) is
//! done on a blocking thread, so that fires go on being answered meanwhile (a fire waited 4.9 s behind the
//! validation of a 10,000-hook file); only the swap runs on the runtime.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::sync::Arc;

use crate::daemon::state::Daemon;
use crate::engine::Installed;
use crate::protocol::{LastReload, LastWeakened};
use crate::record::{Kind, Record, Weakening};
use crate::settings::{ConfigError, ConfigErrors, LoadError, Settings};
use crate::sync::lock;

/// What asked for a reload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// The `reload` request or SIGHUP: someone asked, so a new generation is made even when the file is
    /// unchanged, and the answer says which.
    Request,
    /// The file watcher saw the file change. A file that reads as the settings in force already (a
    /// `touch`, an editor saving unchanged) makes no new generation.
    Watch,
}

/// Serializes reloads from their read to their swap, so that generations are numbered without gaps and a
/// slower read of an older text never swaps in after a newer one. An async lock: it is held across the
/// wait for the blocking thread. (The engine serializes its installs on its own as well.)
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// What the blocking part of a reload found.
enum Prepared {
    /// The file reads as the settings in force (a watch trigger only).
    Unchanged,
    /// Valid settings, and the hash of their text.
    Valid(Box<Settings>, u64),
    Invalid(ConfigErrors),
}

/// What the blocking part found of the managed layer.
enum ManagedPrepared {
    /// Its files read as the layer in force.
    Unchanged,
    /// The layer whole (`None`: no managed file), and the hash of its texts.
    Valid(Option<Box<Settings>>, u64),
    Invalid(ConfigErrors),
}

/// Re-reads the settings file now. `Ok` is the generation in force afterwards; `Err` keeps the old
/// settings.
pub async fn reload(daemon: &Arc<Daemon>, trigger: Trigger) -> Result<u64, ConfigErrors> {
    let _serialized = SERIAL.lock().await;
    let in_force = *lock(&daemon.loaded_text);
    let (managed_in_force, managed_held) = {
        let layers = lock(&daemon.layers);
        (layers.managed_hash, layers.managed.is_some())
    };
    let path = daemon.config_path.clone();
    let managed_dir = daemon.managed_dir.clone();
    // The files `hookd setup` wrote the relay into are read again too (setup asks for a reload once it
    // wrote one), so that hookd's guard of itself keeps a file set up while the daemon runs.
    let read = tokio::task::spawn_blocking(move || {
        (
            (
                prepare(&path, trigger, in_force),
                prepare_managed(&managed_dir, managed_in_force, managed_held),
            ),
            crate::agents::setups::setup_files(),
        )
    })
    .await;
    let prepared = match read {
        Ok((prepared, set_up)) => {
            daemon.engine.guard_set_up_files(set_up);
            prepared
        }
        Err(e) => {
            tracing::error!("reading the settings file failed abnormally: {e}");
            (
                Prepared::Invalid(whole_file(
                    &daemon.config_path,
                    "reading the file failed abnormally; keeping the last good settings (see the daemon's log)",
                )),
                ManagedPrepared::Unchanged,
            )
        }
    };
    apply(daemon, prepared)
}

/// The blocking part of a reload for the managed layer: its files read and validated whole.
/// Unchanged whatever the trigger: a reload asked for makes its new generation from the user's file,
/// and must not make one of a managed layer as it was when the user's file is refused.
///
/// A layer in force whose every file is gone keeps its last good settings, as the user's file does: a
/// file an editor removes before writing it anew, or a folder a package upgrade moves aside, must not
/// leave the team's hooks out for the moment between. The admin takes the layer away by leaving a file
/// without it (or by restarting the daemon).
fn prepare_managed(dir: &Path, in_force: Option<u64>, held: bool) -> ManagedPrepared {
    match crate::layers::managed::read(dir) {
        Ok(read) if in_force == Some(read.hash) => ManagedPrepared::Unchanged,
        Ok(read) if read.settings.is_none() && held => ManagedPrepared::Invalid(whole_file(
            &dir.join(crate::layers::managed::MAIN_FILE),
            "the managed layer's files are gone; keeping its last good settings (to take the team's policy away, leave a managed.toml without it, or restart the daemon)",
        )),
        Ok(read) => ManagedPrepared::Valid(read.settings.map(Box::new), read.hash),
        Err(errors) => ManagedPrepared::Invalid(errors),
    }
}

/// What a reload found, put in force: the one place that a reload changes the daemon. The engine takes
/// the new settings (and starts, keeps or lets go of their workers), the connection slots and the http
/// listener follow them, `status` and systemd are told.
fn apply(
    daemon: &Arc<Daemon>,
    (prepared, managed): (Prepared, ManagedPrepared),
) -> Result<u64, ConfigErrors> {
    // Each layer on its own: an error keeps that layer's last good settings, and the other's change
    // is still taken.
    let mut errors = Vec::new();
    let mut changed = false;
    let mut user_hash = None;
    match prepared {
        Prepared::Unchanged => {}
        Prepared::Invalid(found) => errors.extend(found.0),
        Prepared::Valid(settings, hash) => {
            lock(&daemon.layers).user = *settings;
            user_hash = Some(hash);
            changed = true;
        }
    }
    match managed {
        ManagedPrepared::Unchanged => {}
        ManagedPrepared::Invalid(found) => errors.extend(found.0),
        ManagedPrepared::Valid(settings, hash) => {
            let mut layers = lock(&daemon.layers);
            layers.managed = settings.map(|settings| *settings);
            layers.managed_hash = Some(hash);
            changed = true;
        }
    }
    let errors = (!errors.is_empty()).then_some(ConfigErrors(errors));
    if !changed {
        return match errors {
            None => {
                // Back to (or still at) the settings in force: nothing to swap, but an earlier error
                // is over.
                *lock(&daemon.last_reload) = LastReload::now(None);
                Ok(daemon.engine.current().number)
            }
            Some(errors) => {
                refused(daemon, &errors);
                Err(errors)
            }
        };
    }
    let installed = install(daemon, daemon.folded(), user_hash);
    match errors {
        None => installed,
        Some(errors) => {
            refused(daemon, &errors);
            Err(errors)
        }
    }
}

/// A layer refused: the last good settings stay, and the log, `status` and the journal say why.
fn refused(daemon: &Arc<Daemon>, errors: &ConfigErrors) {
    daemon.notifier.reloading();
    tracing::error!("settings not reloaded, the last good ones stay:\n{errors}");
    *lock(&daemon.last_reload) = LastReload::now(Some(errors.to_string()));
    let mut record = crate::record::Record::new(crate::record::Kind::ReloadRefused);
    record.generation = Some(daemon.engine.current().number);
    record.error = Some(crate::record::cut(&errors.to_string(), 4000));
    crate::record::note(record);
    daemon.notifier.ready();
}

/// Folded settings put in force; `hash` the user's file's text when it was read anew.
fn install(
    daemon: &Arc<Daemon>,
    settings: Settings,
    hash: Option<u64>,
) -> Result<u64, ConfigErrors> {
    daemon.notifier.reloading();
    let summary = settings.summary();
    // A new max_processes or new workers move the reserve of descriptors hooks keep.
    daemon.descriptors.resize(&settings);
    let Installed {
        generation,
        dropped,
        weakened,
    } = daemon.engine.install(settings);
    #[cfg(feature = "otlp")]
    daemon.exporter.settings_changed();
    // Its error is logged and shown by `status`; the hooks of the new settings are in force.
    let _ = crate::daemon::http::apply(daemon);
    if let Some(hash) = hash {
        *lock(&daemon.loaded_text) = Some(hash);
    }
    crate::daemon::state::note_layers(&daemon.engine.current().settings);
    *lock(&daemon.last_reload) = LastReload::now(None);
    let mut record = crate::record::Record::new(crate::record::Kind::Reload);
    record.generation = Some(generation);
    record.summary = Some(crate::record::cut(&summary, 4000));
    record.error = (!dropped.is_empty()).then(|| format!("hooks dropped: {dropped}"));
    crate::record::note(record);
    if dropped.is_empty() {
        tracing::info!(generation, hooks = %summary, "settings reloaded");
    } else {
        // Said in so many words: a generation with fewer guards is what a half-written file looked like.
        tracing::info!(generation, hooks = %summary, %dropped, "settings reloaded; hooks dropped");
    }
    if !weakened.is_empty() {
        note_weakened(daemon, generation, weakened);
    }
    daemon.notifier.ready();
    Ok(generation)
}

/// A reload that made the settings guard less: one `weakened` record in the journal, a WARN line in the
/// log, and `status`'s `last_weakened`. An agent that edits the settings to get past a guard leaves this
/// trace, whichever way the reload came (the file watch, `hookd reload`, SIGHUP).
fn note_weakened(daemon: &Daemon, generation: u64, weakened: Vec<Weakening>) {
    let changes = Weakening::bounded(weakened);
    let file = daemon.config_path.display().to_string();
    let words = crate::record::weakened_words(&changes);
    tracing::warn!(
        generation,
        file = %file,
        "the settings reloaded guard less than before: {words}"
    );
    // `status` first: whoever reads the record in the journal finds `status` saying it too.
    *lock(&daemon.last_weakened) = Some(LastWeakened {
        generation,
        at: crate::time::now_rfc3339(),
        file: file.clone(),
        changes: changes.clone(),
    });
    let mut record = Record::new(Kind::Weakened);
    record.generation = Some(generation);
    record.file = Some(file);
    record.summary = Some(crate::record::cut(&words, crate::record::SUMMARY_CHARS));
    record.weakened = changes;
    crate::record::note(record);
}

/// The blocking part of a reload: read, check and validate the file.
fn prepare(path: &Path, trigger: Trigger, in_force: Option<u64>) -> Prepared {
    let text = match read_for_reload(path) {
        Ok(text) => text,
        Err(errors) => return Prepared::Invalid(errors),
    };
    let hash = text_hash(&text);
    if trigger == Trigger::Watch && in_force == Some(hash) {
        return Prepared::Unchanged;
    }
    match parse(path, &text) {
        Ok(settings) => Prepared::Valid(Box::new(settings), hash),
        Err(errors) => Prepared::Invalid(errors),
    }
}

fn whole_file(path: &Path, message: &str) -> ConfigErrors {
    ConfigErrors(vec![ConfigError::whole_file(
        &path.display().to_string(),
        message,
    )])
}

/// The settings file's text, or why it cannot be taken.
fn read_for_reload(path: &Path) -> Result<String, ConfigErrors> {
    match Settings::read(path) {
        // An empty file is refused as `check` refuses it (the watcher waits for the writer to close the
        // file; this is for `: > file`, and SIGHUP and `reload` sent in the middle of a write).
        Ok(text) => Settings::refuse_empty(&path.display().to_string(), &text).map(|()| text),
        Err(LoadError::NotFound) => Err(whole_file(
            path,
            "the file does not exist; keeping the last good settings",
        )),
        Err(LoadError::Invalid(errors)) => Err(errors),
    }
}

/// Validates settings text read from `path`, checks the programs its hooks run, and logs what is valid but
/// will not do what it seems to (a hook scoped to an agent on a moment that agent never fires). At
/// start-up and at every reload.
pub fn parse(path: &Path, text: &str) -> Result<Settings, ConfigErrors> {
    let settings = Settings::parse(path, &path.display().to_string(), text)?;
    settings.check_programs()?;
    for warning in crate::agents::settings_warnings(&settings) {
        tracing::warn!("{warning}");
    }
    Ok(settings)
}

/// Identifies a settings text, to tell a real change from a rewrite with the same content.
pub fn text_hash(text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}
