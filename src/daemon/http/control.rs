//! What the daemon holds of its HTTP listener: the token, the listener running and what `status` shows
//! of it. Apart from the listener's code, so that the daemon's state can hold it without a loop.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use arc_swap::ArcSwapOption;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::token::Token;
use crate::protocol::{HttpState, HttpStatus};
use crate::sync::lock;

/// The listener's part of the daemon's state.
#[derive(Debug)]
pub struct Control {
    /// The bearer token's file, in the state folder; shown by `status`.
    pub token_path: PathBuf,
    /// The token requests must carry: read from `token_path` whenever the settings are applied.
    pub token: ArcSwapOption<Token>,
    /// Whether `Host` may also be a non-loopback IP address (`allow_non_loopback`).
    pub any_ip_host: AtomicBool,
    /// Whether connections are checked for their owner ([`peer`](super::peer)): checked when a listener starts, off
    /// (and said in the log and `status`) where the kernel cannot tell.
    pub peer_check: AtomicBool,
    pub(super) state: Mutex<State>,
    /// Every HTTP connection's task, so that shutdown lets their fires finish as the socket's do.
    pub connections: TaskTracker,
}

#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) running: Option<Running>,
    /// A move to another address on the port the old listener held is pending (see
    /// [`move_on_same_port`]): the settings in force when the port is free say where it goes.
    pub(super) moving: bool,
    /// Why the settings' `[http]` is not in force, when it is not.
    pub(super) error: Option<String>,
}

#[derive(Debug)]
pub(super) struct Running {
    /// The address as the settings gave it (port 0 included), to tell a change from a reload that left
    /// `[http]` alone.
    pub(super) configured: SocketAddr,
    /// `allow_non_loopback` as it was when this listener started (to put it back after a failed move).
    pub(super) allow_non_loopback: bool,
    /// The accept loop, which owns the listening socket: the port is free once it has ended.
    pub(super) task: tokio::task::JoinHandle<()>,
    /// The address bound (the real port when the settings said 0).
    pub(super) bound: SocketAddr,
    /// Stops this listener and closes its connections once their requests are answered.
    pub(super) stop: CancellationToken,
}

impl Control {
    pub fn new(token_path: PathBuf) -> Control {
        Control {
            token_path,
            token: ArcSwapOption::empty(),
            any_ip_host: AtomicBool::new(false),
            peer_check: AtomicBool::new(false),
            state: Mutex::new(State::default()),
            connections: TaskTracker::new(),
        }
    }

    /// What `status` shows.
    pub fn status(&self) -> HttpStatus {
        let state = lock(&self.state);
        HttpStatus {
            state: match (&state.running, &state.error, state.moving) {
                (_, Some(_), _) => HttpState::Error,
                (Some(_), None, _) => HttpState::Listening,
                (None, None, true) => HttpState::Moving,
                (None, None, false) => HttpState::Off,
            },
            listen: state.running.as_ref().map(|r| r.bound.to_string()),
            token_file: self.token_path.display().to_string(),
            peer_check: state.running.is_some() && self.peer_check.load(Ordering::Relaxed),
            error: state.error.clone(),
        }
    }

    /// Stops the listener (at shutdown, or when the settings turn it off).
    pub(super) fn stop(&self) {
        let mut state = lock(&self.state);
        state.moving = false;
        if let Some(running) = state.running.take() {
            running.stop.cancel();
        }
    }
}
