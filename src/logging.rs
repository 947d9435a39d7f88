//! Logs to stderr, filtered by `HOOKD_LOG` (`RUST_LOG` syntax, default `info`). Under systemd
//! (`JOURNAL_STREAM` set) without timestamps or colours: journald adds its own.

use tracing_subscriber::EnvFilter;

pub fn init() {
    let filter = EnvFilter::try_from_env("HOOKD_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Not reporting a failed write of the log: tracing-subscriber reports it with `eprintln!`, to the
        // stderr that just failed, and `eprintln!` panics when it cannot write. With stderr on a full disk
        // (a log file, a file size limit) every event logged panicked in its task, and fires lost their
        // answers; a log that cannot be written is only lost.
        .log_internal_errors(false)
        .with_target(false);
    if std::env::var_os("JOURNAL_STREAM").is_some() {
        builder.without_time().with_ansi(false).init();
    } else {
        builder
            .with_ansi(nix::unistd::isatty(std::io::stderr()).unwrap_or(false))
            .init();
    }
}

/// A warning that others can cause at will (a connection from another user, one after another), said
/// at most once per [`Throttled::EVERY`], with how many were left unsaid since: the log stays readable
/// and a flood cannot fill the disk or the journal.
#[derive(Debug, Default)]
pub struct Throttled {
    state: std::sync::Mutex<(Option<std::time::Instant>, u64)>,
}

impl Throttled {
    pub const EVERY: std::time::Duration = std::time::Duration::from_secs(10);

    pub const fn new() -> Throttled {
        Throttled {
            state: std::sync::Mutex::new((None, 0)),
        }
    }

    /// `Some(n)` when this occurrence is to be logged, `n` being how many were suppressed before it;
    /// `None` when it is to be counted and not logged.
    pub fn allow(&self) -> Option<u64> {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = std::time::Instant::now();
        match state.0 {
            Some(last) if now.duration_since(last) < Self::EVERY => {
                state.1 += 1;
                None
            }
            _ => {
                let suppressed = std::mem::take(&mut state.1);
                state.0 = Some(now);
                Some(suppressed)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_said_once_then_counted() {
        let throttled = Throttled::new();
        assert_eq!(throttled.allow(), Some(0));
        for _ in 0..338 {
            assert_eq!(throttled.allow(), None);
        }
        let mut state = throttled.state.lock().unwrap();
        assert_eq!(state.1, 338);
        // As if the period had passed: the next one is said, with the count.
        state.0 = Some(std::time::Instant::now() - Throttled::EVERY);
        drop(state);
        assert_eq!(throttled.allow(), Some(338));
        assert_eq!(throttled.allow(), None);
    }
}
