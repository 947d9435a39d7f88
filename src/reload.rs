//! Reloading the settings: validate the whole new file, then swap it in atomically, or keep the last good
//! settings and say why (in the log, in `status`, and to the `reload` request).

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use crate::protocol::LastReload;
use crate::settings::{ConfigError, ConfigErrors, LoadError, Settings};
use crate::state::{Shared, lock};

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

/// Re-reads the settings file now. `Ok` is the generation in force afterwards; `Err` keeps the old
/// settings.
pub fn reload(shared: &Arc<Shared>, trigger: Trigger) -> Result<u64, ConfigErrors> {
    let _serialized = lock(&shared.reload_lock);
    let text = read_for_reload(shared);
    if trigger == Trigger::Watch
        && let Ok(text) = &text
        && *lock(&shared.loaded_text) == Some(text_hash(text))
    {
        // Back to (or still at) the settings in force: nothing to swap, but an earlier error is over.
        *lock(&shared.last_reload) = LastReload {
            at: crate::time::now_rfc3339(),
            ok: true,
            error: None,
        };
        return Ok(shared.current().number);
    }
    shared.notifier.reloading();
    let path = &shared.config_path;
    let result = text.and_then(|text| Ok((parse(path, &text)?, text_hash(&text))));
    let outcome = match result {
        Ok((settings, hash)) => {
            let summary = settings.summary();
            let number = shared.install(settings);
            // Its error is logged and shown by `status`; the hooks of the new settings are in force.
            let _ = crate::http::apply(shared);
            *lock(&shared.loaded_text) = Some(hash);
            *lock(&shared.last_reload) = LastReload {
                at: crate::time::now_rfc3339(),
                ok: true,
                error: None,
            };
            tracing::info!(generation = number, hooks = %summary, "settings reloaded");
            Ok(number)
        }
        Err(errors) => {
            tracing::error!("settings not reloaded, the last good ones stay:\n{errors}");
            *lock(&shared.last_reload) = LastReload {
                at: crate::time::now_rfc3339(),
                ok: false,
                error: Some(errors.to_string()),
            };
            Err(errors)
        }
    };
    shared.notifier.ready();
    outcome
}

/// The settings file's text, or why it cannot be taken.
fn read_for_reload(shared: &Shared) -> Result<String, ConfigErrors> {
    let path = &shared.config_path;
    let label = path.display().to_string();
    let whole_file = |message: &str| ConfigErrors(vec![ConfigError::whole_file(&label, message)]);
    match Settings::read(path) {
        // An editor that truncates then writes leaves an empty file for a moment; taking it would drop
        // every hook, letting through what they refuse. A file meant to have no hooks can say so with a
        // comment.
        Ok(text) if text.is_empty() => Err(whole_file(
            "the file is empty (half-written?); keeping the last good settings (to run with no hooks, write a comment in it)",
        )),
        Ok(text) => Ok(text),
        Err(LoadError::NotFound) => Err(whole_file(
            "the file does not exist; keeping the last good settings",
        )),
        Err(LoadError::Invalid(errors)) => Err(errors),
    }
}

/// Validates settings text read from `path`, and logs what is valid but will not do what it seems to
/// (a hook scoped to an agent on a moment that agent never fires). At start-up and at every reload.
pub fn parse(path: &std::path::Path, text: &str) -> Result<Settings, ConfigErrors> {
    let settings = Settings::parse(path, &path.display().to_string(), text)?;
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
