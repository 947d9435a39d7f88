//! `hookd serve`: load the settings, bind the socket, serve until SIGTERM or SIGINT, reload on SIGHUP,
//! and leave nothing behind.

use std::path::Path;
use std::process::ExitCode;

use tokio::signal::unix::{SignalKind, signal};

use crate::protocol::LastReload;
use crate::settings::{LoadError, Settings};
use crate::state::Shared;

pub fn run(config: &Path, socket: &Path) -> Result<ExitCode, String> {
    crate::logging::init();
    let config = std::path::absolute(config).unwrap_or_else(|_| config.to_path_buf());
    let settings = match Settings::load(&config) {
        Ok(settings) => {
            tracing::info!(config = %config.display(), hooks = %settings.summary(), "settings loaded");
            settings
        }
        Err(LoadError::NotFound) => {
            tracing::warn!(config = %config.display(), "no settings file yet: serving with no hooks until it appears");
            Settings::empty(&config)
        }
        Err(LoadError::Invalid(errors)) => {
            return Err(format!("the settings file is invalid:\n{errors}"));
        }
    };
    let (listener, socket_file) = crate::socket::bind(socket)?;
    detach_from_terminal();
    // One thread: a hook's exit wakes its fire on the same thread, where a multi-threaded runtime paid a
    // cross-thread wake-up on every hook (about 250 us here, half again the cost of the spawn itself).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let result = runtime.block_on(async {
        let listener = tokio::net::UnixListener::from_std(listener)
            .map_err(|e| format!("cannot listen: {e}"))?;
        let last_reload = LastReload {
            at: crate::reload::now_rfc3339(),
            ok: true,
            error: None,
        };
        let shared = Shared::new(config.clone(), settings, last_reload);
        let mut terminate =
            signal(SignalKind::terminate()).map_err(|e| format!("cannot handle SIGTERM: {e}"))?;
        let mut interrupt =
            signal(SignalKind::interrupt()).map_err(|e| format!("cannot handle SIGINT: {e}"))?;
        let mut hangup =
            signal(SignalKind::hangup()).map_err(|e| format!("cannot handle SIGHUP: {e}"))?;
        let reloader = shared.clone();
        tokio::spawn(async move {
            while hangup.recv().await.is_some() {
                tracing::info!("SIGHUP: reloading the settings");
                let _ = crate::reload::reload(&reloader);
            }
        });
        let shutdown = async {
            tokio::select! {
                _ = terminate.recv() => tracing::info!("SIGTERM received"),
                _ = interrupt.recv() => tracing::info!("SIGINT received"),
            }
        };
        tracing::info!(socket = %socket.display(), pid = std::process::id(), "serving");
        crate::server::serve(listener, shared, shutdown).await;
        Ok::<(), String>(())
    });
    socket_file.remove_file();
    result?;
    tracing::info!("stopped");
    Ok(ExitCode::SUCCESS)
}

/// Gives up the controlling terminal, when `hookd serve` was started from one, so that no hook can open
/// `/dev/tty` and read from or write to the user's terminal. The daemon stays in its process group, so
/// Ctrl-C still reaches it.
fn detach_from_terminal() {
    use std::os::fd::AsRawFd;
    let Ok(tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        return; // no controlling terminal: nothing to give up
    };
    // SAFETY: TIOCNOTTY takes no argument and acts on the calling process only; the fd is open and valid.
    let result = unsafe { nix::libc::ioctl(tty.as_raw_fd(), nix::libc::TIOCNOTTY) };
    if result != 0 {
        tracing::debug!(
            "could not give up the controlling terminal: {}",
            std::io::Error::last_os_error()
        );
    }
}
