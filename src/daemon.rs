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
    let runtime = tokio::runtime::Builder::new_multi_thread()
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
