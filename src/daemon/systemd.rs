//! systemd integration: socket activation and sd_notify. Outside systemd (no `LISTEN_FDS` for this process,
//! no `NOTIFY_SOCKET`) every function here does nothing.
//!
//! Hand-written, not the `sd-notify` crate (0.5.0, checked): it connects to `NOTIFY_SOCKET` as
//! a path, so the abstract `@name` socket systemd uses in containers is never reached, and it ends every
//! message with a newline. Its `listen_fds` would save only the parsing of two variables: the descriptor
//! would still be a raw number to take, check and make non-blocking here.

use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::net::{UnixDatagram, UnixListener};

use nix::fcntl::{FcntlArg, FdFlag, fcntl};
use nix::sys::socket::{getsockopt, sockopt};

/// The first file descriptor systemd passes (`SD_LISTEN_FDS_START`).
const LISTEN_FDS_START: i32 = 3;

/// The listening socket systemd passed to this process, if it did.
///
/// Read before the async runtime starts, while nothing else can have taken descriptor 3. The socket is
/// made close-on-exec (so no hook inherits it) and non-blocking (for tokio).
pub fn take_listener() -> Result<Option<UnixListener>, String> {
    let for_us = std::env::var("LISTEN_PID")
        .ok()
        .and_then(|pid| pid.parse::<u32>().ok())
        == Some(std::process::id());
    let count = std::env::var("LISTEN_FDS")
        .ok()
        .and_then(|n| n.parse::<i32>().ok())
        .unwrap_or(0);
    if !for_us || count < 1 {
        return Ok(None);
    }
    if count > 1 {
        tracing::warn!(
            count,
            "systemd passed several sockets; serving on the first only"
        );
    }
    // SAFETY: systemd guarantees descriptors 3..3+LISTEN_FDS are open and ours when LISTEN_PID is our pid,
    // and nothing in this process has opened or taken descriptor 3 yet.
    let fd = unsafe { OwnedFd::from_raw_fd(LISTEN_FDS_START) };
    fcntl(&fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))
        .map_err(|e| format!("the socket from systemd: {e}"))?;
    if !getsockopt(&fd, sockopt::AcceptConn).unwrap_or(false) {
        return Err("the descriptor systemd passed is not a listening socket (is hookd.socket ListenStream=?)".into());
    }
    let listener = UnixListener::from(fd);
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("the socket from systemd: {e}"))?;
    Ok(Some(listener))
}

/// Sends sd_notify messages to the service manager, when there is one.
#[derive(Debug)]
pub struct Notifier {
    target: Option<(UnixDatagram, std::os::unix::net::SocketAddr)>,
}

impl Notifier {
    /// From `NOTIFY_SOCKET`: a path, or `@name` for an abstract socket.
    pub fn from_env() -> Notifier {
        let target = std::env::var("NOTIFY_SOCKET")
            .ok()
            .filter(|s| !s.is_empty())
            .and_then(|name| {
                let address = if let Some(abstract_name) = name.strip_prefix('@') {
                    use std::os::linux::net::SocketAddrExt;
                    std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes())
                } else {
                    std::os::unix::net::SocketAddr::from_pathname(&name)
                };
                let socket = UnixDatagram::unbound().ok()?;
                Some((socket, address.ok()?))
            });
        Notifier { target }
    }

    fn send(&self, message: &str) {
        if let Some((socket, address)) = &self.target
            && let Err(e) = socket.send_to_addr(message.as_bytes(), address)
        {
            tracing::debug!("sd_notify {message:?} failed: {e}");
        }
    }

    /// The daemon serves.
    pub fn ready(&self) {
        self.send("READY=1");
    }

    /// A reload begins; [`Notifier::ready`] says it ended.
    pub fn reloading(&self) {
        if self.target.is_some() {
            let now = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
                .map(|t| t.tv_sec() as u64 * 1_000_000 + t.tv_nsec() as u64 / 1_000)
                .unwrap_or(0);
            self.send(&format!("RELOADING=1\nMONOTONIC_USEC={now}"));
        }
    }

    /// Shutdown begins.
    pub fn stopping(&self) {
        self.send("STOPPING=1");
    }
}
