//! Logs to stderr, filtered by `HOOKD_LOG` (`RUST_LOG` syntax, default `info`). Under systemd
//! (`JOURNAL_STREAM` set) without timestamps or colours: journald adds its own.

use tracing_subscriber::EnvFilter;

pub fn init() {
    let filter = EnvFilter::try_from_env("HOOKD_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false);
    if std::env::var_os("JOURNAL_STREAM").is_some() {
        builder.without_time().with_ansi(false).init();
    } else {
        builder
            .with_ansi(nix::unistd::isatty(std::io::stderr()).unwrap_or(false))
            .init();
    }
}
