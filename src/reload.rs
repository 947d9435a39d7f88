//! Reloading the settings: validate the whole new file, then swap it in atomically, or keep the last good
//! settings and say why (in the log, in `status`, and to the `reload` request).

use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::SystemTime;

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
pub fn reload(shared: &Shared, trigger: Trigger) -> Result<u64, ConfigErrors> {
    let _serialized = lock(&shared.reload_lock);
    let text = read_for_reload(shared);
    if trigger == Trigger::Watch
        && let Ok(text) = &text
        && *lock(&shared.loaded_text) == Some(text_hash(text))
    {
        // Back to (or still at) the settings in force: nothing to swap, but an earlier error is over.
        *lock(&shared.last_reload) = LastReload {
            at: now_rfc3339(),
            ok: true,
            error: None,
        };
        return Ok(shared.current().number);
    }
    shared.notifier.reloading();
    let path = &shared.config_path;
    let result = text.and_then(|text| {
        let settings = Settings::parse(path, &path.display().to_string(), &text)?;
        Ok((settings, text_hash(&text)))
    });
    let outcome = match result {
        Ok((settings, hash)) => {
            let summary = settings.summary();
            for warning in crate::agents::scoping_warnings(&settings) {
                tracing::warn!("{warning}");
            }
            let number = shared.install(settings);
            *lock(&shared.loaded_text) = Some(hash);
            *lock(&shared.last_reload) = LastReload {
                at: now_rfc3339(),
                ok: true,
                error: None,
            };
            tracing::info!(generation = number, hooks = %summary, "settings reloaded");
            Ok(number)
        }
        Err(errors) => {
            tracing::error!("settings not reloaded, the last good ones stay:\n{errors}");
            *lock(&shared.last_reload) = LastReload {
                at: now_rfc3339(),
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

/// Identifies a settings text, to tell a real change from a rewrite with the same content.
pub fn text_hash(text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// The current time as RFC 3339 in UTC, to the second (`2026-11-30T08:01:02Z`).
pub fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

fn rfc3339(time: SystemTime) -> String {
    let seconds = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_rfc3339_in_utc() {
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_026_862);
        assert_eq!(rfc3339(t), "2026-11-30T08:21:02Z");
        let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00Z");
    }
}
