//! The socket server: accepts connections, checks who is calling, reads request lines, answers each one,
//! and drains on shutdown.
//!
//! The protocol, step by step:
//! 1. A client connects; its peer credentials are checked (our uid or root, else closed and logged).
//! 2. It sends requests, one JSON object per line, and may send many without waiting.
//! 3. `hello`, `status` and `reload` are answered at once; each `fire` runs as a task of its own, and its
//!    response is written when it finishes, so responses come in any order, matched by `id`.
//! 4. A bad line gets an error response and the connection lives on; a line over [`MAX_LINE`] is answered
//!    `too_large` and the connection is closed once its pending fires are answered.
//! 5. A client that hangs up with fires pending has their hooks killed: a run ended by hand ends its hooks.
//! 6. On shutdown, no new connection is accepted and new requests get `shutting_down`; running fires have
//!    [`DRAIN_DEADLINE`] to finish, then their hooks are killed.

use std::collections::HashMap;
use std::future::Future;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncWriteExt, Interest};
use tokio::net::unix::OwnedWriteHalf;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::codec::FramedRead;
use tokio_util::task::TaskTracker;

use crate::fire::{self, Fire};
use crate::lines::{Frame, LineDecoder};
use crate::protocol::{
    self, ErrorKind, ErrorResponse, HelloResponse, MAX_LINE, ReloadResponse, Request,
    StatusResponse, Unreachable, to_line,
};
use crate::state::Shared;

/// Connections served at once; more wait in the listen backlog until one closes.
pub const MAX_CONNECTIONS: usize = 1024;

/// Fires one connection may have running at once; more requests wait unread until one is answered.
pub const MAX_PENDING: usize = 256;

/// A connection with nothing pending and nothing said for this long is closed.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// How long running fires may take to finish once shutdown begins.
pub const DRAIN_DEADLINE: Duration = Duration::from_secs(10);

/// After the drain deadline: time for abandoned fires to be answered and their hooks to be stopped.
const CLOSE_DEADLINE: Duration = Duration::from_secs(3);

/// Serves `listener` until `shutdown` completes, then drains. Tests and `hookd serve` both call this.
pub async fn serve(
    listener: UnixListener,
    shared: Arc<Shared>,
    shutdown: impl Future<Output = ()>,
) {
    let connections = TaskTracker::new();
    let limit = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = limit.clone().acquire_owned() => permit,
            _ = &mut shutdown => break,
        };
        let Ok(permit) = permit else { break };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors, most likely: wait a little rather than spin.
                    tracing::warn!("accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let shared = shared.clone();
        connections.spawn(async move {
            Connection::serve(stream, shared).await;
            drop(permit);
        });
    }
    drop(listener);
    tracing::info!(
        in_flight = shared.in_flight(),
        "shutting down: no new connections; letting running fires finish"
    );
    shared.draining.cancel();
    connections.close();
    let (sockets, http) = tokio::join!(
        tokio::time::timeout(DRAIN_DEADLINE, connections.wait()),
        crate::http::drain(&shared, DRAIN_DEADLINE),
    );
    if sockets.is_err() || !http {
        tracing::warn!(
            in_flight = shared.in_flight(),
            "fires still running after {DRAIN_DEADLINE:?}: killing their hooks"
        );
        shared.abandon.cancel();
        let _ = tokio::time::timeout(CLOSE_DEADLINE, connections.wait()).await;
        let _ = crate::http::drain(&shared, CLOSE_DEADLINE).await;
    }
    shared.stop_workers();
    let cleanups = &shared.runner.cleanups;
    cleanups.close();
    let _ = tokio::time::timeout(CLOSE_DEADLINE, cleanups.wait()).await;
}

/// What a request line leads to.
enum Action {
    /// An answer to write now.
    Respond(Vec<u8>),
    /// A fire to run as a task.
    Fire(Fire),
    /// Work to run as a task, as a fire is (a reload, which reads and validates the file on a blocking
    /// thread): its answer, matched by `id`, comes when it is done, and other requests are served meanwhile.
    Later(
        Option<Value>,
        std::pin::Pin<Box<dyn Future<Output = Vec<u8>> + Send>>,
    ),
}

/// One client connection.
struct Connection {
    shared: Arc<Shared>,
    /// The agent named by this connection's `hello`, for fires that do not name one.
    agent: Option<String>,
}

impl Connection {
    async fn serve(stream: UnixStream, shared: Arc<Shared>) {
        match stream.peer_cred() {
            Ok(cred) if peer_allowed(cred.uid()) => {}
            Ok(cred) => {
                tracing::warn!(
                    uid = cred.uid(),
                    pid = cred.pid(),
                    "refused a connection from another user"
                );
                return;
            }
            Err(e) => {
                tracing::warn!("refused a connection whose peer could not be identified: {e}");
                return;
            }
        }
        let mut connection = Connection {
            shared,
            agent: None,
        };
        connection.run(stream).await;
    }

    async fn run(&mut self, stream: UnixStream) {
        let (read, mut write) = stream.into_split();
        let mut frames = FramedRead::new(read, LineDecoder::new(MAX_LINE));
        let cancel = self.shared.abandon.child_token();
        let mut pending: JoinSet<Vec<u8>> = JoinSet::new();
        // The `id` of each pending fire, by task, to answer it even if its task panics.
        let mut pending_ids: HashMap<tokio::task::Id, Option<Value>> = HashMap::new();
        let mut reading = true;
        // Set when reading ends with fires pending: tells a hang-up from a half-close.
        let mut hang_up: Option<AsyncFd<OwnedFd>> = None;
        let idle = tokio::time::sleep(IDLE_TIMEOUT);
        tokio::pin!(idle);
        loop {
            if !reading && pending.is_empty() {
                break;
            }
            if !reading && hang_up.is_none() {
                hang_up = hang_up_probe(&write);
            }
            tokio::select! {
                // At most MAX_PENDING fires per connection: past that, the next line waits (backpressure),
                // so one client cannot make the daemon hold an unbounded number of fires.
                frame = next(&mut frames), if reading && pending.len() < MAX_PENDING => {
                    idle.as_mut().reset(tokio::time::Instant::now() + IDLE_TIMEOUT);
                    let action = match frame {
                        None | Some(Err(_)) => { reading = false; continue; }
                        Some(Ok(Frame::TooLong)) => {
                            reading = false;
                            let message = format!("the request line is longer than {MAX_LINE} bytes; closing the connection");
                            Action::Respond(to_line(&ErrorResponse::new(None, ErrorKind::TooLarge, message)))
                        }
                        Some(Ok(Frame::Line(line))) => self.handle(&line),
                    };
                    match action {
                        Action::Respond(response) => {
                            if write.write_all(&response).await.is_err() { break; }
                        }
                        Action::Fire(request) => {
                            let (shared, cancel, id) = (self.shared.clone(), cancel.clone(), request.id.clone());
                            let task = pending.spawn(async move { fire::fire(&shared, request, cancel).await });
                            pending_ids.insert(task.id(), id);
                        }
                        Action::Later(id, work) => {
                            let task = pending.spawn(work);
                            pending_ids.insert(task.id(), id);
                        }
                    }
                }
                Some(joined) = pending.join_next_with_id() => {
                    let response = match joined {
                        Ok((task, response)) => {
                            pending_ids.remove(&task);
                            response
                        }
                        Err(e) => {
                            tracing::error!("a fire's task ended abnormally: {e}");
                            let id = pending_ids.remove(&e.id()).flatten();
                            to_line(&ErrorResponse::new(id, ErrorKind::Internal, "internal error; see the daemon's log"))
                        }
                    };
                    if write.write_all(&response).await.is_err() { break; }
                    // A long fire is activity: the idle clock starts again from its answer.
                    idle.as_mut().reset(tokio::time::Instant::now() + IDLE_TIMEOUT);
                }
                _ = peer_gone(hang_up.as_ref()), if hang_up.is_some() => {
                    tracing::debug!(pending = pending.len(), "client hung up with fires pending: stopping their hooks");
                    break;
                }
                _ = &mut idle, if reading && pending.is_empty() => break,
                _ = self.shared.draining.cancelled(), if reading && pending.is_empty() => {
                    // Requests the client wrote before the shutdown may sit unread: each gets its answer
                    // (`shutting_down`) rather than a closed connection.
                    for line in unread_lines(&mut frames) {
                        let Action::Respond(response) = self.handle(&line) else { continue };
                        if write.write_all(&response).await.is_err() { break; }
                    }
                    break;
                }
            }
        }
        // Whatever is still running has nobody to answer: stop its hooks, gracefully, and wait briefly.
        cancel.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            while pending.join_next().await.is_some() {}
        })
        .await;
    }

    fn handle(&mut self, line: &[u8]) -> Action {
        let (id, request) = match protocol::decode(line) {
            Ok(decoded) => decoded,
            Err(error) => return Action::Respond(to_line(&error)),
        };
        if self.shared.draining.is_cancelled() {
            let error =
                ErrorResponse::new(id, ErrorKind::ShuttingDown, "the daemon is shutting down");
            return Action::Respond(to_line(&error));
        }
        match request {
            Request::Fire {
                moment,
                agent,
                event,
            } => {
                let agent = agent.or_else(|| self.agent.clone());
                Action::Fire(Fire {
                    id,
                    moment,
                    agent,
                    event,
                })
            }
            Request::Hello { agent, moments } => {
                self.agent = agent;
                Action::Respond(to_line(&self.hello(id, moments)))
            }
            Request::Status => Action::Respond(to_line(&status(&self.shared, id))),
            Request::Reload => {
                // A task of its own, not the connection's: a reload asked for is carried out even if its
                // client hangs up before the answer (which stops the connection's pending tasks).
                let shared = self.shared.clone();
                let reloading = tokio::spawn(async move {
                    crate::reload::reload(&shared, crate::reload::Trigger::Request).await
                });
                Action::Later(
                    id.clone(),
                    Box::pin(async move { reload_answer(reloading.await, id) }),
                )
            }
        }
    }

    /// The hooks that apply to this agent on moments it says it does not run (or, for an agent hookd knows,
    /// that it never fires): policies that would quietly not hold.
    fn hello(&self, id: Option<Value>, moments: Option<Vec<String>>) -> HelloResponse {
        let mut unreachable = Vec::new();
        // Without a list, a known agent's own moments are used.
        let moments = moments.or_else(|| {
            let agent = crate::agents::Agent::from_name(self.agent.as_deref()?)?;
            Some(agent.moments().into_iter().map(String::from).collect())
        });
        if let Some(moments) = moments {
            let generation = self.shared.current();
            for (moment, hooks) in &generation.settings.hooks {
                if moments.contains(moment) {
                    continue;
                }
                for hook in hooks
                    .iter()
                    .filter(|h| h.enabled && h.applies_to_agent(self.agent.as_deref()))
                {
                    tracing::warn!(
                        hook = %hook.name,
                        moment = %moment,
                        agent = self.agent.as_deref().unwrap_or(""),
                        "this agent never fires this hook's moment: the hook will not run for it"
                    );
                    unreachable.push(Unreachable {
                        hook: hook.name.clone(),
                        moment: moment.clone(),
                    });
                }
            }
        }
        HelloResponse {
            id,
            ok: true,
            version: crate::VERSION,
            unreachable,
        }
    }
}

/// The answer to a `reload` request.
fn reload_answer(
    outcome: Result<Result<u64, crate::settings::ConfigErrors>, tokio::task::JoinError>,
    id: Option<Value>,
) -> Vec<u8> {
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(e) => {
            tracing::error!("a reload's task ended abnormally: {e}");
            let error = ErrorResponse::new(
                id,
                ErrorKind::Internal,
                "internal error; see the daemon's log",
            );
            return to_line(&error);
        }
    };
    match outcome {
        Ok(generation) => to_line(&ReloadResponse {
            id,
            ok: true,
            generation,
        }),
        Err(errors) => {
            let mut error = ErrorResponse::new(
                id,
                ErrorKind::InvalidSettings,
                format!(
                    "the settings file was not taken ({}); the last good settings stay",
                    errors.count()
                ),
            );
            error.error.errors = errors.0.iter().map(ToString::to_string).collect();
            to_line(&error)
        }
    }
}

fn status(shared: &Shared, id: Option<Value>) -> StatusResponse {
    let generation = shared.current();
    let hooks: Map<String, Value> = generation
        .settings
        .enabled_counts()
        .into_iter()
        .map(|(moment, n)| (moment.to_string(), n.into()))
        .collect();
    StatusResponse {
        id,
        ok: true,
        version: crate::VERSION,
        pid: std::process::id(),
        config: shared.config_path.display().to_string(),
        generation: generation.number,
        hooks,
        last_reload: shared.last_reload(),
        in_flight: shared.in_flight(),
        uptime_s: shared.started.elapsed().as_secs(),
        workers: generation
            .workers
            .iter()
            .map(|(name, pool)| {
                (
                    name.clone(),
                    serde_json::to_value(pool.status()).unwrap_or_default(),
                )
            })
            .collect(),
        http: shared.http.status(),
    }
}

/// Our own uid, or root: anyone else could make our hooks run, or learn our policies.
pub(crate) fn peer_allowed(uid: u32) -> bool {
    uid == nix::unistd::getuid().as_raw() || uid == 0
}

/// A second registration of the connection's socket, for writability only, whose readiness can be
/// cleared without disturbing the writer. Its "write closed" (EPOLLHUP) comes only when the client has
/// closed its end entirely, not when it merely shut down its sending side after its last request.
fn hang_up_probe(write: &OwnedWriteHalf) -> Option<AsyncFd<OwnedFd>> {
    let stream: &UnixStream = write.as_ref();
    let fd = stream.as_fd().try_clone_to_owned().ok()?;
    // SAFETY: `fd` is an `OwnedFd` the `AsyncFd` owns: open, the same file description, for its lifetime.
    unsafe { AsyncFd::register_with_interest(fd, Interest::WRITABLE) }.ok()
}

async fn peer_gone(probe: Option<&AsyncFd<OwnedFd>>) {
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

/// Every whole line already sent on the connection and not yet read, read without waiting.
///
/// Read with a plain non-blocking `recv`, not through tokio: tokio reads only once the reactor has seen
/// the socket readable, and at shutdown that event may not have been processed yet.
fn unread_lines(
    frames: &mut FramedRead<tokio::net::unix::OwnedReadHalf, LineDecoder>,
) -> Vec<bytes::BytesMut> {
    use nix::sys::socket::{MsgFlags, recv};
    use std::os::fd::AsRawFd;
    use tokio_util::codec::Decoder;
    /// Enough for any client that was not flooding; the rest is dropped with the connection.
    const MOST: usize = 4 * MAX_LINE;
    let fd = frames.get_ref().as_ref().as_raw_fd();
    let mut buffer = std::mem::take(frames.read_buffer_mut());
    let mut chunk = vec![0u8; 64 * 1024];
    while buffer.len() < MOST {
        match recv(fd, &mut chunk, MsgFlags::MSG_DONTWAIT) {
            Ok(0) | Err(_) => break,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
    let mut lines = Vec::new();
    while let Ok(Some(Frame::Line(line))) = frames.decoder_mut().decode(&mut buffer) {
        lines.push(line);
    }
    lines
}

/// The next frame of a connection (`StreamExt::next`, without a streams crate for one method).
async fn next<R, D>(frames: &mut FramedRead<R, D>) -> Option<Result<D::Item, D::Error>>
where
    R: tokio::io::AsyncRead + Unpin,
    D: tokio_util::codec::Decoder,
{
    std::future::poll_fn(|cx| futures_core::Stream::poll_next(std::pin::Pin::new(&mut *frames), cx))
        .await
}
