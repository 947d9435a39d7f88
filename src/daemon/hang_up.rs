//! A client gone, seen while its connection is not being read: a second registration of the
//! connection's socket, for writability only, whose "write closed" says the client has closed its end.
//! The connection loop ([`crate::daemon::server`]) and a watch's stream ([`crate::daemon::watch`]) both
//! wait on it, each while it reads nothing from the client.

use std::os::fd::{AsFd, OwnedFd};

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::net::UnixStream;
use tokio::net::unix::OwnedWriteHalf;

/// A second registration of the connection's socket, for writability only, whose readiness can be
/// cleared without disturbing the writer. Its "write closed" (EPOLLHUP) comes only when the client has
/// closed its end entirely, not when it merely shut down its sending side after its last request.
pub fn probe(write: &OwnedWriteHalf) -> Option<AsyncFd<OwnedFd>> {
    let stream: &UnixStream = write.as_ref();
    let fd = stream.as_fd().try_clone_to_owned().ok()?;
    // SAFETY: `fd` is an `OwnedFd` the `AsyncFd` owns: open, the same file description, for its lifetime.
    unsafe { AsyncFd::register_with_interest(fd, Interest::WRITABLE) }.ok()
}

/// Resolves when the client behind `probe` has closed its end entirely; never without a probe.
pub async fn peer_gone(probe: Option<&AsyncFd<OwnedFd>>) {
    let Some(probe) = probe else {
        return std::future::pending().await;
    };
    loop {
        match probe.writable().await {
            Ok(mut guard) => {
                if guard.ready().is_write_closed() {
                    return;
                }
                guard.clear_ready();
            }
            Err(_) => return,
        }
    }
}
