//! The optional HTTP listener, for agents' http hooks (Claude Code's `"type": "http"`): a decision
//! without a process per tool call.
//!
//! Off unless the settings say `[http] listen = "127.0.0.1:8787"`. A request is answered in-process, by
//! the same fire as the socket's ([`crate::engine::fire`]), in the same dialect as `hookd relay`
//! ([`crate::agents::dialect`]); [`handler`] says who may ask and how. A reload that changes `[http]` starts,
//! stops or moves the listener ([`apply`]); one that cannot be carried out (the port is taken, the token
//! file is refused) leaves the listener as it was, and says why in the log and in `status`.

pub mod control;
pub mod handler;
pub mod peer;
pub mod token;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::daemon::state::Daemon;
use crate::limits::{HTTP_HEADER_TIMEOUT, MAX_HTTP_CONNECTIONS};
use crate::sync::lock;
pub use control::Control;
use control::{Running, State};
use token::Token;

/// Brings the listener in line with the settings in force: starts, stops or moves it. Called at start-up
/// (where an error stops the daemon) and after every reload (where the old listener stays and the error
/// is shown). Must run on the daemon's runtime.
pub fn apply(daemon: &Arc<Daemon>) -> Result<(), String> {
    let http = daemon.engine.current().settings.http.clone();
    let control = &daemon.http;
    let mut state = lock(&control.state);
    if state.moving {
        // The pending move reads the settings when the port is free: these, or any after them.
        return Ok(());
    }
    let Some(wanted) = http.listen else {
        state.error = None;
        if let Some(running) = state.running.take() {
            running.stop.cancel();
            tracing::info!(listen = %running.bound, "http: listener stopped (no [http] listen in the settings)");
        }
        return Ok(());
    };
    // The token is read again at every reload, so that removing its file (to rotate a token that
    // leaked) and reloading puts a new one in force without a restart.
    let token = match Token::load_or_create(&control.token_path) {
        Ok(token) => token,
        Err(e) => return keep_going(&mut state, e),
    };
    let renewed = control
        .token
        .load()
        .as_deref()
        .is_some_and(|old| !old.same_as(&token));
    control.token.store(Some(Arc::new(token)));
    if renewed {
        // Loud on purpose: agents started with the old token are refused (and so fail open) until
        // they are given the new one. A runtime folder wiped by a logout or a cleaner does this too.
        tracing::warn!(token_file = %control.token_path.display(), "http: a new token is in force; agents must be given it");
    }
    // Unchanged, or now naming the port that `:0` picked: the listener stays as it is, and which Host
    // names are taken changes in place (no new socket for the same address).
    if let Some(running) = state.running.as_mut()
        && (running.configured == wanted || running.bound == wanted)
    {
        running.configured = wanted;
        control
            .any_ip_host
            .store(http.allow_non_loopback, Ordering::Relaxed);
        state.error = None;
        return Ok(());
    }
    let listener = match bind(wanted) {
        Ok(listener) => listener,
        Err((kind, _))
            if kind == std::io::ErrorKind::AddrInUse
                && state
                    .running
                    .as_ref()
                    .is_some_and(|r| overlap(r.bound, wanted)) =>
        {
            // The port is this listener's own: it must be given up before the new address can have it.
            move_on_same_port(daemon, &mut state);
            return Ok(());
        }
        Err((_, e)) => return keep_going(&mut state, e),
    };
    start(
        daemon,
        &mut state,
        wanted,
        listener,
        http.allow_non_loopback,
    );
    Ok(())
}

/// A change of `[http]` that cannot be carried out: what is in force stays, the log says so, and `status`
/// shows `error`.
fn keep_going(state: &mut State, error: String) -> Result<(), String> {
    let kept = match &state.running {
        Some(running) => format!("; still listening on {}", running.bound),
        None => "; no http listener".to_string(),
    };
    tracing::error!("http: {error}{kept}");
    state.error = Some(error.clone());
    Err(error)
}

/// Whether a listener on `a` holds the port that binding `b` needs: the same port, on the same address
/// or where one of them is every address (`0.0.0.0`, `[::]`). Only then is a move on the same port ours
/// to make; any other "in use" is another program's.
fn overlap(a: SocketAddr, b: SocketAddr) -> bool {
    a.port() == b.port() && (a.ip() == b.ip() || a.ip().is_unspecified() || b.ip().is_unspecified())
}

/// Moves the listener to another address on the port it holds (`127.0.0.1:P` to `0.0.0.0:P`): the old
/// listener is stopped, and once its accept loop has ended (the port is free) the settings in force
/// then are put in place (the address of the reload that asked, or of any reload since, or none); if the
/// new address cannot be bound, the old one is bound again. Meanwhile `status` says `moving`, and
/// reloads leave the listener to this move.
fn move_on_same_port(daemon: &Arc<Daemon>, state: &mut State) {
    let Some(old) = state.running.take() else {
        return;
    };
    old.stop.cancel();
    state.moving = true;
    state.error = None;
    tracing::info!(old = %old.bound, "http: moving the listener on the same port");
    let daemon = daemon.clone();
    tokio::spawn(async move {
        let _ = old.task.await;
        let mut state = lock(&daemon.http.state);
        if !state.moving || daemon.draining.is_cancelled() {
            return; // the daemon is stopping
        }
        state.moving = false;
        let http = daemon.engine.current().settings.http.clone();
        let Some(wanted) = http.listen else {
            tracing::info!("http: listener stopped (no [http] listen in the settings)");
            return;
        };
        match bind(wanted) {
            Ok(listener) => start(
                &daemon,
                &mut state,
                wanted,
                listener,
                http.allow_non_loopback,
            ),
            Err((_, e)) => match bind(old.bound) {
                Ok(listener) => {
                    start(
                        &daemon,
                        &mut state,
                        old.configured,
                        listener,
                        old.allow_non_loopback,
                    );
                    tracing::error!(
                        "http: cannot listen on {wanted}: {e}; back on {}",
                        old.bound
                    );
                    state.error = Some(e);
                }
                Err((_, again)) => {
                    let e = format!(
                        "{e}; and {} could not be bound again: {again}; no http listener",
                        old.bound
                    );
                    tracing::error!("http: cannot listen on {wanted}: {e}");
                    state.error = Some(e);
                }
            },
        }
    });
}

/// Puts `listener` (bound for the settings' `wanted`) in force in place of any listener before it.
fn start(
    daemon: &Arc<Daemon>,
    state: &mut State,
    wanted: SocketAddr,
    listener: TcpListener,
    allow_non_loopback: bool,
) {
    let control = &daemon.http;
    let bound = listener.local_addr().unwrap_or(wanted);
    control
        .any_ip_host
        .store(allow_non_loopback, Ordering::Relaxed);
    let peer_check = peer::lookup_works();
    if !peer_check {
        tracing::warn!(
            "http: this kernel cannot say whose a TCP connection is (sock_diag); other users' connections are not closed at accept, only refused without the token"
        );
    }
    control.peer_check.store(peer_check, Ordering::Relaxed);
    if let Some(old) = state.running.take() {
        old.stop.cancel();
        tracing::info!(old = %old.bound, new = %bound, "http: listener moved");
    }
    let stop = daemon.draining.child_token();
    let task = tokio::spawn(accept(listener, daemon.clone(), stop.clone()));
    state.running = Some(Running {
        configured: wanted,
        allow_non_loopback,
        task,
        bound,
        stop,
    });
    state.error = None;
    tracing::info!(listen = %bound, token_file = %control.token_path.display(), "http: listening");
}

/// Stops the listener for good and waits (at most `deadline`) for its connections' fires to be answered.
pub async fn drain(daemon: &Daemon, deadline: Duration) -> bool {
    daemon.http.stop();
    daemon.http.connections.close();
    tokio::time::timeout(deadline, daemon.http.connections.wait())
        .await
        .is_ok()
}

/// Binds `address`, with the error said plainly.
fn bind(address: SocketAddr) -> Result<TcpListener, (std::io::ErrorKind, String)> {
    let listener = std::net::TcpListener::bind(address).map_err(|e| {
        let message = match e.kind() {
            std::io::ErrorKind::AddrInUse => {
                format!("{address} is already in use (another program, or another hookd)")
            }
            std::io::ErrorKind::AddrNotAvailable => {
                format!("{address} is not an address of this machine")
            }
            _ => format!("cannot listen on {address}: {e}"),
        };
        (e.kind(), message)
    })?;
    let set_up = |e: std::io::Error| (e.kind(), format!("cannot set up {address}: {e}"));
    listener.set_nonblocking(true).map_err(set_up)?;
    TcpListener::from_std(listener).map_err(set_up)
}

/// Accepts connections until `stop`, at most [`MAX_HTTP_CONNECTIONS`] at once.
async fn accept(listener: TcpListener, daemon: Arc<Daemon>, stop: CancellationToken) {
    let limit = Arc::new(Semaphore::new(MAX_HTTP_CONNECTIONS));
    loop {
        let permit = tokio::select! {
            permit = limit.clone().acquire_owned() => permit,
            _ = stop.cancelled() => break,
        };
        let Ok(permit) = permit else { break };
        // A descriptor for the connection, from what the hooks' reserve leaves (daemon with the socket).
        let descriptor = tokio::select! {
            descriptor = daemon.descriptors.connection() => descriptor,
            _ = stop.cancelled() => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, most likely: wait a little rather than spin.
                    tracing::warn!("http: accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = stop.cancelled() => break,
        };
        // Another user's connection is closed at once, as the socket closes one (SO_PEERCRED): without
        // the token it could do nothing but hold one of the connection slots, and enough of them would
        // leave the agents' http hooks unanswered.
        if daemon.http.peer_check.load(Ordering::Relaxed)
            && let Err(why) = stream
                .local_addr()
                .map_err(|e| e.to_string())
                .and_then(|local| peer::allowed(peer, local))
        {
            static OTHERS: crate::logging::Throttled = crate::logging::Throttled::new();
            if let Some(suppressed) = OTHERS.allow() {
                tracing::warn!(%peer, suppressed, "http: closed a connection that is not this user's: {why}");
            }
            drop(stream);
            continue;
        }
        // An answer is one small write: sent at once, not held back for more (Nagle).
        let _ = stream.set_nodelay(true);
        let context = Arc::new(handler::Context {
            daemon: daemon.clone(),
            peer,
        });
        let stop = stop.clone();
        daemon.http.connections.spawn(async move {
            serve_connection(stream, context, stop).await;
            drop((permit, descriptor));
        });
    }
}

/// One connection: HTTP/1.1, kept alive, until the client closes it, it idles past
/// [`HTTP_HEADER_TIMEOUT`], or `stop` (then its request in progress is answered first).
async fn serve_connection(
    stream: tokio::net::TcpStream,
    context: Arc<handler::Context>,
    stop: CancellationToken,
) {
    let service = service_fn(move |request| {
        let context = context.clone();
        async move { Ok::<_, Infallible>(handler::handle(&context, request).await) }
    });
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HTTP_HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(e) = result {
                tracing::debug!("http: connection ended: {e}");
            }
        }
        _ = stop.cancelled() => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
}
