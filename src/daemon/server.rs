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
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use serde_json::{Map, Value};
use tokio::io::AsyncWriteExt;
use tokio::io::unix::AsyncFd;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::task::TaskTracker;

use crate::daemon::hang_up::{peer_gone, probe as hang_up_probe};
use crate::daemon::live::LiveSide;
use crate::daemon::memory::{self, Account, Memory};
use crate::daemon::state::Daemon;
use crate::engine::Fire;
use crate::limits::{
    ANSWER_RESERVE, CLOSE_DEADLINE, CONNECTION_BUDGET, DRAIN_DEADLINE, IDLE_TIMEOUT, LARGE_LINE,
    LARGE_LINE_DEADLINE, MAX_CONNECTIONS, MAX_LINE, MAX_PENDING, OFF_THREAD, PERMIT_WAIT,
    WRITE_DEADLINE,
};
use crate::lines::{Frame, LineDecoder};
use crate::protocol::{
    self, ErrorKind, ErrorResponse, HelloResponse, ReloadResponse, Request, StatusResponse,
    Unreachable, to_line,
};

/// Serves `listener` until `shutdown` completes, then drains: the whole life of `hookd serve`'s socket.
pub async fn serve(
    listener: UnixListener,
    daemon: Arc<Daemon>,
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
        // A descriptor for the connection, from what the hooks' reserve leaves.
        let descriptor = tokio::select! {
            descriptor = daemon.descriptors.connection() => descriptor,
            _ = &mut shutdown => break,
        };
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
        let daemon = daemon.clone();
        connections.spawn(async move {
            Connection::serve(stream, daemon).await;
            drop((permit, descriptor));
        });
    }
    serve_the_backlog(listener, &daemon, &connections);
    tracing::info!(
        in_flight = daemon.engine.in_flight(),
        "shutting down: no new connections; letting running fires finish"
    );
    daemon.draining.cancel();
    connections.close();
    let (sockets, http) = tokio::join!(
        tokio::time::timeout(DRAIN_DEADLINE, connections.wait()),
        crate::daemon::http::drain(&daemon, DRAIN_DEADLINE),
    );
    if sockets.is_err() || !http {
        tracing::warn!(
            in_flight = daemon.engine.in_flight(),
            "fires still running after {DRAIN_DEADLINE:?}: killing their hooks"
        );
        daemon.engine.abandon();
        let _ = tokio::time::timeout(CLOSE_DEADLINE, connections.wait()).await;
        let _ = crate::daemon::http::drain(&daemon, CLOSE_DEADLINE).await;
    }
    daemon.engine.shut_down(CLOSE_DEADLINE).await;
}

/// The most connections taken from the listen backlog at shutdown: the kernel's own cap on a backlog
/// (`net.core.somaxconn`) by default.
const BACKLOG_AT_SHUTDOWN: usize = 4096;

/// Serves the connections still waiting in the listen backlog when shutdown begins, then closes the
/// listener. Their clients connected, and may have written their requests, before the signal: each
/// request gets its answer (`shutting_down`, once the drain begins) rather than a reset connection.
fn serve_the_backlog(listener: UnixListener, daemon: &Arc<Daemon>, connections: &TaskTracker) {
    let Ok(listener) = listener.into_std() else {
        return;
    };
    for _ in 0..BACKLOG_AT_SHUTDOWN {
        // Non-blocking, as the listener was: WouldBlock once the backlog is empty.
        let Ok((stream, _)) = listener.accept() else {
            break;
        };
        let stream = stream
            .set_nonblocking(true)
            .and_then(|()| UnixStream::from_std(stream));
        let Ok(stream) = stream else { continue };
        let daemon = daemon.clone();
        connections.spawn(async move { Connection::serve(stream, daemon).await });
    }
}

/// What a request line leads to.
enum Action {
    /// An answer to write now.
    Respond(Vec<u8>),
    /// A fire to run as a task, the `id` its answer echoes, and what it is charged while pending.
    Fire(Option<Value>, Fire, usize),
    /// Work to run as a task, as a fire is (a reload, which reads and validates the file on a blocking
    /// thread): its answer, matched by `id`, comes when it is done, and other requests are served meanwhile.
    Later(
        Option<Value>,
        std::pin::Pin<Box<dyn Future<Output = Vec<u8>> + Send>>,
    ),
    /// The connection becomes a stream of the record, once its pending fires are answered.
    Watch(Box<crate::daemon::watch::Watch>),
    /// An agent's hook input to answer as the relay would: run as a task, and charged, as a fire is.
    Relay(Option<Value>, crate::protocol::RelayRequest, usize),
    /// Nothing to write: a live hook's answer, taken.
    Nothing,
}

/// A request line as decoded, and what a fire of it is charged while pending.
type Decoded = (Result<(Option<Value>, Request), ErrorResponse>, usize);

/// What the connection takes next from its client.
enum Incoming {
    /// The request held while the connection was paused, now to act on.
    Held(Decoded),
    /// What was read.
    Read(Option<std::io::Result<Got>>),
}

/// The request held while the connection was paused once the pause has ended, else the next frame read.
async fn next_request(
    lines: &mut Lines,
    memory: &Memory,
    held: &mut Option<Decoded>,
    paused: bool,
) -> Incoming {
    if !paused && let Some(decoded) = held.take() {
        return Incoming::Held(decoded);
    }
    Incoming::Read(lines.next(memory).await)
}

/// A request read while the connection is paused (as many fires pending as it may have, or its memory
/// spent), read only because its live hooks' calls wait for answers: what to act on now, or `None` when
/// it is held. An answer, and a request that leaves nothing pending (`attach`, `detach`, `hello`, a
/// line that cannot be read), are acted on at once; the first other one (`status` among them: it is a
/// task of its own, which a paused connection may not add) is held, to be acted
/// on as ever once the pause ends; past it, a fire is decided at once without running its hooks, each of
/// which it would have reached refusing it (hookd being busy never lets an event through, as for a large
/// line not held), and any other request is answered `bad_request`, to be sent again later.
fn past_the_pause((decoded, cost): Decoded, held: &mut Option<Decoded>) -> Past {
    const WHY: &str = "its connection had as many requests pending as it may, and another held, while its live hooks' calls waited for answers";
    let (id, request) = match decoded {
        Ok((
            _,
            Request::Answer { .. }
            | Request::Attach { .. }
            | Request::Detach { .. }
            | Request::Hello { .. },
        ))
        | Err(_) => return Past::Act((decoded, cost)),
        Ok(decoded) => decoded,
    };
    if held.is_none() {
        *held = Some((Ok((id, request)), cost));
        return Past::Held;
    }
    match request {
        Request::Fire {
            moment,
            agent,
            mut event,
        } => {
            event.undecidable = Some(format!("hookd did not run this event's hooks: {WHY}"));
            event.busy = true;
            let fire = Request::Fire {
                moment,
                agent,
                event,
            };
            Past::Act((Ok((id, fire)), cost))
        }
        _ => Past::Respond(to_line(&ErrorResponse::new(
            id,
            ErrorKind::BadRequest,
            format!("not carried out: {WHY}; send it again once some are answered"),
        ))),
    }
}

/// What becomes of a request read while the connection is paused.
enum Past {
    Act(Decoded),
    Respond(Vec<u8>),
    Held,
}

/// One client connection.
struct Connection {
    daemon: Arc<Daemon>,
    /// The agent named by this connection's `hello`, for fires that do not name one.
    agent: Option<String>,
    /// The live hooks this connection hung, and the calls to write for them.
    live: LiveSide,
}

impl Drop for Connection {
    /// However the connection ends (its client gone, the daemon stopping, its task failing), its live
    /// hooks are taken down and their calls pending fail at once.
    fn drop(&mut self) {
        self.live.end(&self.daemon);
    }
}

impl Connection {
    async fn serve(stream: UnixStream, daemon: Arc<Daemon>) {
        let peer = match stream.peer_cred() {
            Ok(cred) if crate::daemon::socket::peer_allowed(cred.uid()) => cred,
            Ok(cred) => {
                // Another user can connect as often as they like: said once per period, with a count.
                static OTHERS: crate::logging::Throttled = crate::logging::Throttled::new();
                if let Some(suppressed) = OTHERS.allow() {
                    tracing::warn!(
                        uid = cred.uid(),
                        pid = cred.pid(),
                        suppressed,
                        "refused a connection from another user (more are counted, not logged, for {:?})",
                        crate::logging::Throttled::EVERY
                    );
                }
                return;
            }
            Err(e) => {
                tracing::warn!("refused a connection whose peer could not be identified: {e}");
                return;
            }
        };
        let mut connection = Connection {
            daemon,
            agent: None,
            live: LiveSide {
                pid: peer.pid(),
                uid: Some(peer.uid()),
                ..LiveSide::default()
            },
        };
        connection.run(stream).await;
    }

    async fn run(&mut self, stream: UnixStream) {
        let (read, mut write) = stream.into_split();
        let mut lines = Lines::new(read);
        let memory = self.daemon.memory.clone();
        let mut account = Account::new(memory.clone());
        let cancel = self.daemon.engine.abandoned().child_token();
        let mut pending: JoinSet<Vec<u8>> = JoinSet::new();
        // The `id` of each pending fire (to answer it even if its task panics) and what it is charged, by
        // task.
        let mut pending_fires: HashMap<tokio::task::Id, (Option<Value>, usize)> = HashMap::new();
        let mut reading = true;
        // Set when reading ends with fires pending: tells a hang-up from a half-close.
        let mut hang_up: Option<AsyncFd<OwnedFd>> = None;
        // The idle clock: the time of the last activity, written per line; the timer is moved to its due
        // time only when it goes off early, rather than reset on every line (a timer wheel's work each).
        let mut active = tokio::time::Instant::now();
        let idle = tokio::time::sleep_until(active + IDLE_TIMEOUT);
        tokio::pin!(idle);
        // A `watch` asked for: requests after it are not read, and the stream starts once the fires
        // before it are answered.
        let mut watching: Option<Box<crate::daemon::watch::Watch>> = None;
        // The calls and notices for this connection's live hooks, once it hangs one.
        let mut calls: Option<tokio::sync::mpsc::Receiver<crate::engine::live::Line>> = None;
        // The daemon's drain, waited for by one future that stays registered from one request to the
        // next, rather than one registered and dropped again on every turn of the loop; once it began,
        // `drained` waits for this connection's live client too.
        let drain_began = self.daemon.draining.clone().cancelled_owned();
        tokio::pin!(drain_began);
        let mut draining = false;
        // A request read while the connection was paused, to be acted on once it is not: read only to
        // get at the live hooks' answers behind it (see `answers_awaited`).
        let mut held: Option<Decoded> = None;
        loop {
            if calls.is_none() {
                calls = self.live.lines.take();
            }
            // A request held while paused is answered even when reading ends (a half-close, an error, a
            // line too long) before the pause does: it was read, so its client waits for it.
            if !reading && pending.is_empty() && held.is_none() {
                if let Some(watch) = watching.take() {
                    let gone = hang_up.take().or_else(|| hang_up_probe(&write));
                    crate::daemon::watch::stream(&mut write, *watch, gone, &self.daemon.draining)
                        .await;
                }
                break;
            }
            // Out of room: registered for a wake-up before the budget is looked at again, so that memory
            // freed in between still wakes us. (With room, as nearly always, nothing is registered.)
            let freed = memory.freed();
            tokio::pin!(freed);
            let room = account.has_room() || {
                freed.as_mut().enable();
                account.has_room()
            };
            // Not reading (the client half-closed, or its requests wait for room): a hang-up would not be
            // seen as the end of its requests, so it is watched for another way, and its hooks stopped.
            let full = pending.len() >= MAX_PENDING || !room;
            let paused = reading && full;
            if (!reading || paused) && hang_up.is_none() {
                hang_up = hang_up_probe(&write);
            }
            // Paused, the connection still reads while its live hooks' calls wait for answers: the fires
            // that pause it may be the very ones waiting for them ([`past_the_pause`] says how what else
            // it sends meanwhile is taken, within the pause's bounds).
            let answers_awaited = paused
                && self
                    .live
                    .client
                    .as_ref()
                    .is_some_and(|client| client.pending() > 0);
            tokio::select! {
                // At most MAX_PENDING fires per connection, and what they hold within the connection's memory
                // budget and the daemon's: past either, the next line waits unread (backpressure), so one
                // client cannot make the daemon hold an unbounded number of fires or answers.
                frame = next_request(&mut lines, &memory, &mut held, paused), if (reading && (!paused || answers_awaited)) || (!reading && !full && held.is_some()) => {
                    active = tokio::time::Instant::now();
                    let frame = match frame {
                        Incoming::Held((decoded, cost)) => Ok(self.act(decoded, cost)),
                        Incoming::Read(frame) => Err(frame),
                    };
                    let action = match frame {
                        Ok(action) => action,
                        Err(frame) => match frame {
                        None | Some(Err(_)) => {
                            reading = false;
                            // A client that sends nothing more answers no call: its live hooks go now.
                            self.live.end(&self.daemon);
                            continue;
                        }
                        Some(Ok(Got::Line(Frame::TooLong))) => {
                            reading = false;
                            let message = format!("the request line is longer than {MAX_LINE} bytes; closing the connection");
                            Action::Respond(to_line(&ErrorResponse::new(None, ErrorKind::TooLarge, message)))
                        }
                        Some(Ok(Got::Line(Frame::Line(line)))) => {
                            let (decoded, cost) = self.decode(line.freeze()).await;
                            if paused {
                                match past_the_pause((decoded, cost), &mut held) {
                                    Past::Act((decoded, cost)) => self.act(decoded, cost),
                                    Past::Respond(response) => Action::Respond(response),
                                    Past::Held => continue,
                                }
                            } else {
                                self.act(decoded, cost)
                            }
                        }
                        Some(Ok(Got::Head(head))) => {
                            let why = "hookd was reading as many large requests as it reads at once, and did not hold this one";
                            let mut decided = protocol::decoder::undecidable_from_head(head, why);
                            if let Ok((_, Request::Fire { event, .. })) = &mut decided {
                                event.busy = true;
                            }
                            if paused {
                                match past_the_pause((decided, ANSWER_RESERVE), &mut held) {
                                    Past::Act((decided, cost)) => self.act(decided, cost),
                                    Past::Respond(response) => Action::Respond(response),
                                    Past::Held => continue,
                                }
                            } else {
                                self.act(decided, ANSWER_RESERVE)
                            }
                        }
                        },
                    };
                    match action {
                        Action::Respond(response) => {
                            lines.set_permit_aside();
                            if send(&mut write, &response).await.is_err() { break; }
                        }
                        Action::Fire(id, request, cost) => {
                            account.charge(cost);
                            let (engine, cancel, answered) = (self.daemon.engine.clone(), cancel.clone(), id.clone());
                            // Boxed: the task then holds a pointer, where it held the whole fire's state,
                            // which tokio moves whole when the task starts, ends and is read.
                            let mut fire = Box::pin(async move { crate::daemon::answer::fire_line(&engine, answered, request, cancel).await });
                            let (polled, after) = crate::engine::answer_first(|| first_poll(fire.as_mut()));
                            match polled {
                                FirstPoll::Ready(response) => {
                                    // Decided at once (no hook to run, as most fires): answered now, with
                                    // no task, no wake-up and no bookkeeping between the line and its answer;
                                    // its record finished once the answer is out.
                                    let response = response.unwrap_or_else(|| internal_error(id));
                                    lines.set_permit_aside();
                                    let written = send_then(&mut write, &response, after).await;
                                    drop(response);
                                    account.release(cost);
                                    if written.is_err() { break; }
                                }
                                FirstPoll::Pending => {
                                    // Nothing was decided, so nothing is left to finish.
                                    after.finish();
                                    let task = pending.spawn(fire);
                                    pending_fires.insert(task.id(), (id, cost));
                                }
                            }
                        }
                        Action::Later(id, work) => {
                            let task = pending.spawn(work);
                            pending_fires.insert(task.id(), (id, 0));
                        }
                        Action::Relay(id, relay, cost) => {
                            account.charge(cost);
                            let (engine, cancel, answered) = (self.daemon.engine.clone(), cancel.clone(), id.clone());
                            let task = pending.spawn(Box::pin(crate::daemon::relay_request::answer(engine, answered, relay, cancel)));
                            pending_fires.insert(task.id(), (id, cost));
                        }
                        Action::Watch(watch) => {
                            // A watcher reads no more requests, so answers no call: its live hooks go.
                            self.live.end(&self.daemon);
                            lines.set_permit_aside();
                            watching = Some(watch);
                            reading = false;
                        }
                        Action::Nothing => {}
                    }
                }
                // A call for one of this connection's live hooks (or a notice): written at once. A client
                // that does not read holds up only this connection: each call's wait is bounded by its
                // hook's timeout in the fire, and the write by WRITE_DEADLINE, past which the connection
                // closes and its hooks are taken down.
                Some(line) = next_call(&mut calls) => {
                    let Some(line) = self.live.to_write(line) else { continue };
                    lines.set_permit_aside();
                    if send(&mut write, &line).await.is_err() { break; }
                }
                _ = &mut freed, if (reading || held.is_some()) && !room => {} // look at the budget again
                Some(joined) = pending.join_next_with_id() => {
                    let task = match &joined {
                        Ok((task, _)) => *task,
                        Err(e) => e.id(),
                    };
                    let (id, cost) = pending_fires.remove(&task).unwrap_or_default();
                    let response = match joined {
                        Ok((_, response)) => response,
                        Err(e) => {
                            tracing::error!("a fire's task ended abnormally: {e}");
                            internal_error(id)
                        }
                    };
                    lines.set_permit_aside();
                    let written = send(&mut write, &response).await;
                    // The answer is out (or the client gone): what the fire held is free.
                    drop(response);
                    account.release(cost);
                    if written.is_err() { break; }
                    // A long fire is activity: the idle clock starts again from its answer.
                    active = tokio::time::Instant::now();
                }
                _ = peer_gone(hang_up.as_ref()), if hang_up.is_some() => {
                    tracing::debug!(pending = pending.len(), "client hung up with fires pending: stopping their hooks");
                    break;
                }
                _ = &mut idle, if reading && pending.is_empty() && !self.live.holds_hooks() => {
                    let due = active + IDLE_TIMEOUT;
                    if due > tokio::time::Instant::now() {
                        // Activity since it was set: idle only from the last of it.
                        idle.as_mut().reset(due);
                        continue;
                    }
                    break;
                }
                // A live client with calls pending is kept while the daemon drains: the fires still
                // running wait for its answers.
                _ = &mut drain_began, if !draining && reading && pending.is_empty() => draining = true,
                _ = drained(&self.daemon.draining, self.live.client.clone()), if draining && reading && pending.is_empty() && held.is_none() => {
                    // Requests the client wrote before the shutdown may sit unread: each gets its answer
                    // (`shutting_down`) rather than a closed connection.
                    for line in lines.unread() {
                        let Action::Respond(response) = self.handle(&line, 0) else { continue };
                        if send(&mut write, &response).await.is_err() { break; }
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

    /// One whole request line, decoded, with what a fire of it is charged while pending. A large line
    /// is sized and decoded on a blocking thread: tens of megabytes of JSON take tens of milliseconds,
    /// which on the one thread every connection shares would hold up every other client.
    async fn decode(&self, line: bytes::Bytes) -> Decoded {
        if line.len() <= OFF_THREAD {
            let cost = memory::request_cost(&line);
            return (protocol::decoder::decode(&line), cost);
        }
        let decoder = self.daemon.memory.decoder().await;
        let sized = line.clone();
        let cost = tokio::task::spawn_blocking(move || memory::request_cost(&sized))
            .await
            .unwrap_or(usize::MAX);
        // A request that would take more memory decoded than a connection may hold (millions of tiny
        // values) is not decoded: it is decided from its head, as a failure of each hook it would have
        // reached, so a hook that must refuse still refuses.
        let too_big = cost > CONNECTION_BUDGET;
        let decoding = tokio::task::spawn_blocking(move || {
            if too_big {
                let why = format!(
                    "the event would take about {} MiB of memory once decoded, over the {} MiB a connection may hold",
                    cost >> 20,
                    CONNECTION_BUDGET >> 20
                );
                protocol::decoder::decode_undecidable(&line, &why)
            } else {
                protocol::decoder::decode(&line)
            }
        });
        let cost = if too_big { ANSWER_RESERVE } else { cost };
        let decoded = decoding.await;
        drop(decoder);
        match decoded {
            Ok(mut decoded) => {
                if let Ok((_, Request::Fire { event, .. })) = &mut decoded {
                    event.large = true;
                }
                (decoded, cost)
            }
            Err(e) => {
                tracing::error!("decoding a request failed abnormally: {e}");
                let error = ErrorResponse::new(
                    None,
                    ErrorKind::Internal,
                    "internal error; see the daemon's log",
                );
                (Err(error), cost)
            }
        }
    }

    /// A request line decoded and acted on; `cost` is what a fire of it is charged while pending.
    fn handle(&mut self, line: &[u8], cost: usize) -> Action {
        self.act(protocol::decoder::decode(line), cost)
    }

    fn act(
        &mut self,
        decoded: Result<(Option<Value>, Request), ErrorResponse>,
        cost: usize,
    ) -> Action {
        let (id, request) = match decoded {
            Ok(decoded) => decoded,
            Err(error) => {
                self.live.unreadable_line(&error.error.message);
                return Action::Respond(to_line(&error));
            }
        };
        if self.daemon.draining.is_cancelled() {
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
                Action::Fire(
                    id,
                    Fire {
                        moment,
                        agent,
                        event,
                    },
                    cost,
                )
            }
            Request::Hello { agent, moments } => {
                self.agent = agent;
                Action::Respond(to_line(&self.hello(id, moments)))
            }
            Request::Relay(relay) => {
                // Charged as a fire is, and for its input too: the relay decodes it (a megabyte of
                // `[0,0,...]` takes tens of megabytes decoded), which the line's own cost does not count.
                let cost = cost.saturating_add(memory::request_cost(relay.input.as_bytes()));
                Action::Relay(id, relay, cost)
            }
            Request::Status => {
                // A task of its own: the repositories' scripts are digested on a blocking thread,
                // and the connection goes on meanwhile.
                let daemon = self.daemon.clone();
                Action::Later(
                    id.clone(),
                    Box::pin(async move {
                        let projects = daemon.engine.projects().await;
                        to_line(&status(&daemon, id, projects))
                    }),
                )
            }
            Request::Attach { client, hooks } => {
                Action::Respond(self.live.attach(&self.daemon, id, &client, &hooks))
            }
            Request::Answer { call, answer } => match self.live.answer(id, call, &answer) {
                Some(error) => Action::Respond(error),
                None => Action::Nothing,
            },
            Request::Detach { hooks } => {
                Action::Respond(self.live.detach(&self.daemon, id, hooks.as_deref()))
            }
            Request::Watch(filter) => match &self.daemon.journal {
                Some(journal) => Action::Watch(Box::new(crate::daemon::watch::Watch {
                    id,
                    filter,
                    records: journal.watch(),
                })),
                None => Action::Respond(to_line(&ErrorResponse::new(
                    id,
                    ErrorKind::Internal,
                    "this daemon keeps no record (another recorder holds the process)",
                ))),
            },
            Request::Reload => {
                // A task of its own, not the connection's: a reload asked for is carried out even if its
                // client hangs up before the answer (which stops the connection's pending tasks).
                let daemon = self.daemon.clone();
                let reloading = tokio::spawn(async move {
                    crate::daemon::reload::reload(&daemon, crate::daemon::reload::Trigger::Request)
                        .await
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
            let generation = self.daemon.engine.current();
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
            version: crate::protocol::VERSION.to_string(),
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

fn status(
    daemon: &Daemon,
    id: Option<Value>,
    projects: Vec<crate::engine::projects::ProjectState>,
) -> StatusResponse {
    let generation = daemon.engine.current();
    let hooks: Map<String, Value> = generation
        .settings
        .enabled_counts()
        .into_iter()
        .map(|(moment, n)| (moment.to_string(), n.into()))
        .collect();
    StatusResponse {
        id,
        ok: true,
        version: crate::protocol::VERSION.to_string(),
        pid: std::process::id(),
        config: daemon.config_path.display().to_string(),
        generation: generation.number,
        hooks,
        last_reload: daemon.last_reload(),
        last_weakened: daemon.last_weakened(),
        protect: Some(crate::protocol::ProtectStatus {
            enabled: generation.settings.protect.enabled,
            paths: generation.settings.protect.paths.len(),
        }),
        in_flight: daemon.engine.in_flight(),
        uptime_s: daemon.started.elapsed().as_secs(),
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
        http: daemon.http.status(),
        connections: {
            let (open, limit) = daemon.descriptors.connections();
            crate::protocol::ConnectionsStatus { open, limit }
        },
        record: daemon.journal.as_ref().map(|journal| {
            let written = journal.written();
            let tally = crate::sync::lock(&journal.tally);
            crate::protocol::RecordStatus {
                journal: journal.path.display().to_string(),
                enabled: generation.settings.record.enabled,
                written: written.records,
                dropped: written.dropped,
                watchers: journal.watchers(),
                error: written.last_error,
                moments: tally.moments(),
                hooks: tally.hooks(),
            }
        }),
        #[cfg(feature = "otlp")]
        export: Some(daemon.exporter.status()),
        #[cfg(not(feature = "otlp"))]
        export: None,
        layers: layers_status(daemon, projects),
        live: daemon.engine.live().status(),
    }
}

/// Once the daemon begins to drain, and then once no call waits for this connection's answers (a live
/// client's answers are what the fires still running wait for).
async fn drained(
    draining: &tokio_util::sync::CancellationToken,
    live: Option<Arc<crate::engine::live::Client>>,
) {
    draining.cancelled().await;
    if let Some(client) = live {
        while client.pending() > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// The next line to write for the connection's live hooks; never, while it has hung none.
async fn next_call(
    calls: &mut Option<tokio::sync::mpsc::Receiver<crate::engine::live::Line>>,
) -> Option<crate::engine::live::Line> {
    match calls {
        Some(calls) => calls.recv().await,
        None => std::future::pending().await,
    }
}

/// The layers in `status`: the managed layer's files, and the repositories fires came from.
fn layers_status(
    daemon: &Daemon,
    projects: Vec<crate::engine::projects::ProjectState>,
) -> Option<Value> {
    let managed: Vec<String> = daemon
        .engine
        .current()
        .settings
        .managed_files
        .iter()
        .map(|file| file.display().to_string())
        .collect();
    let projects: Vec<Value> = projects
        .into_iter()
        .map(|state| {
            let mut shown = serde_json::json!({
                "root": state.root.display().to_string(),
                "hooks": state.hooks,
                "pending": state.pending,
                "error": state.error,
            });
            if let Some(why) = state.pending_unknown {
                shown["pending_unknown"] = why.into();
            }
            shown
        })
        .collect();
    (!managed.is_empty() || !projects.is_empty()).then(|| {
        let generation = daemon.engine.current();
        let policy = generation.settings.policy;
        // The enabled hooks of the settings in force, per layer (a repository's are under `projects`).
        let mut hooks = serde_json::Map::new();
        for hook in generation
            .settings
            .hooks
            .iter()
            .flat_map(|(_, hooks)| hooks)
        {
            if hook.enabled {
                let count = hooks
                    .entry(hook.layer.name())
                    .or_insert(serde_json::json!(0));
                *count = serde_json::json!(count.as_u64().unwrap_or(0) + 1);
            }
        }
        serde_json::json!({
            "managed": managed,
            "allow_managed_hooks_only": policy.allow_managed_hooks_only,
            "require_fail_closed": policy.require_fail_closed,
            "hooks": hooks,
            "projects": projects,
        })
    })
}

/// What polling a fire once, in place, came to: see [`first_poll`].
enum FirstPoll {
    /// Its answer (`None`: it panicked, and said so in the log).
    Ready(Option<Vec<u8>>),
    /// It waits for something (its hooks): to be run as a task of its own.
    Pending,
}

/// Polls a fire once, on the connection's own task, before it is given a task of its own: a fire that
/// matches no hook is decided without waiting, and spawning it cost the shared thread a task's
/// allocation, two polls through the scheduler, a wake-up of this task and the join set's bookkeeping,
/// about a tenth of a no-hook fire's instructions (`valgrind --tool=callgrind`; BENCHMARKS.md). A fire
/// that waits is moved into its task as it is: every waker it registered here is replaced by the task's
/// at its next poll (tokio's resources keep what happened meanwhile, and are looked at again then). A
/// panic is caught, as the task would have caught it, and answered as an internal error.
fn first_poll(fire: std::pin::Pin<&mut (dyn Future<Output = Vec<u8>> + Send)>) -> FirstPoll {
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| fire.poll(&mut context)));
    match polled {
        Ok(std::task::Poll::Ready(response)) => FirstPoll::Ready(Some(response)),
        Ok(std::task::Poll::Pending) => FirstPoll::Pending,
        Err(_) => {
            tracing::error!("a fire ended abnormally (a panic) while it was decided");
            FirstPoll::Ready(None)
        }
    }
}

/// The answer to a request whose fire ended abnormally.
fn internal_error(id: Option<Value>) -> Vec<u8> {
    to_line(&ErrorResponse::new(
        id,
        ErrorKind::Internal,
        "internal error; see the daemon's log",
    ))
}

/// Writes a whole answer within [`WRITE_DEADLINE`].
async fn send(write: &mut OwnedWriteHalf, bytes: &[u8]) -> std::io::Result<()> {
    send_then(write, bytes, crate::engine::AfterAnswer::default()).await
}

/// [`send`], and `after` finished once the answer is handed to the socket: as soon as it is written
/// whole (nearly always at once), or before waiting for a client that reads slowly, so that a fire's
/// record never waits on its client.
async fn send_then(
    write: &mut OwnedWriteHalf,
    bytes: &[u8],
    after: crate::engine::AfterAnswer,
) -> std::io::Result<()> {
    // Nearly always the answer fits in the socket at once: no timer for that.
    let tried = write.try_write(bytes);
    after.finish();
    let rest = match tried {
        Ok(written) if written == bytes.len() => return Ok(()),
        Ok(written) => &bytes[written..],
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => bytes,
        Err(e) => return Err(e),
    };
    send_rest(write, rest).await
}

/// The rest of an answer the socket did not take at once, within [`WRITE_DEADLINE`].
async fn send_rest(write: &mut OwnedWriteHalf, rest: &[u8]) -> std::io::Result<()> {
    match tokio::time::timeout(WRITE_DEADLINE, write.write_all(rest)).await {
        Ok(written) => written,
        Err(_) => {
            tracing::warn!(
                "a client read none of its answer for {WRITE_DEADLINE:?}: closing its connection"
            );
            Err(std::io::ErrorKind::TimedOut.into())
        }
    }
}

/// A connection's requests, a line at a time. Reading a line past [`LARGE_LINE`] bytes needs one of the
/// daemon's few large-line permits: every connection may send a line of up to [`MAX_LINE`], but only a
/// few may buffer one at the same time.
struct Lines {
    read: OwnedReadHalf,
    buffer: BytesMut,
    decoder: LineDecoder,
    ended: bool,
    large: Option<tokio::sync::OwnedSemaphorePermit>,
    large_until: Option<tokio::time::Instant>,
    /// Reading a large line without holding it (no permit to be had in time): its head so far.
    scanning: Option<crate::protocol::head::Scanner>,
}

/// What a connection sent next.
enum Got {
    Line(Frame),
    /// The head of a line too large to hold while as many large lines as are read at once are read.
    Head(crate::protocol::head::Head),
}

impl Lines {
    fn new(read: OwnedReadHalf) -> Lines {
        Lines {
            read,
            buffer: BytesMut::new(),
            decoder: LineDecoder::new(MAX_LINE),
            ended: false,
            large: None,
            large_until: None,
            scanning: None,
        }
    }

    /// The next line; `None` at the end of the connection.
    async fn next(&mut self, memory: &Memory) -> Option<std::io::Result<Got>> {
        use bytes::Buf;
        use tokio::io::AsyncReadExt;
        use tokio_util::codec::Decoder;
        loop {
            if let Some(scanner) = &mut self.scanning {
                // A line not held: its head read as it passes, up to its end.
                let end = self.buffer.iter().position(|&b| b == b'\n');
                let whole = end.is_some() || self.ended;
                let upto = end.unwrap_or(self.buffer.len());
                scanner.feed(&self.buffer[..upto]);
                self.buffer.advance((upto + 1).min(self.buffer.len()));
                self.decoder = LineDecoder::new(MAX_LINE);
                if whole {
                    let head = self
                        .scanning
                        .take()
                        .map(crate::protocol::head::Scanner::finish)?;
                    return Some(Ok(Got::Head(head)));
                }
            } else {
                let frame = if self.ended {
                    self.decoder.decode_eof(&mut self.buffer)
                } else {
                    self.decoder.decode(&mut self.buffer)
                };
                match frame {
                    Ok(Some(frame)) => {
                        // The permit is given back with the line: the connection may not read again for
                        // a while (its answers unread, its budget spent), and a permit must not wait with
                        // it. A large line begun behind this one takes a permit again when read on.
                        self.large = None;
                        self.large_until = None;
                        // A large line's buffer is not kept for the small ones that follow.
                        if self.buffer.len() <= LARGE_LINE
                            && self.buffer.capacity() > 8 * READ_CHUNK
                        {
                            self.buffer = BytesMut::from(&self.buffer[..]);
                        }
                        return Some(Ok(Got::Line(frame)));
                    }
                    Ok(None) if self.ended => return None,
                    Ok(None) => {}
                    Err(e) => return Some(Err(e)),
                }
                if self.buffer.len() > LARGE_LINE && self.large.is_none() {
                    match tokio::time::timeout(PERMIT_WAIT, memory.large_line()).await {
                        Ok(permit) => {
                            tracing::debug!(
                                "a request line over {LARGE_LINE} bytes: read under a large-line permit"
                            );
                            self.large = Some(permit);
                            // One deadline per line, however often its permit is set aside meanwhile.
                            self.large_until
                                .get_or_insert(tokio::time::Instant::now() + LARGE_LINE_DEADLINE);
                        }
                        Err(_) => {
                            // As many large lines as are read at once are being read: this one is not
                            // held, but decided from its head, rather than wait past the agent's patience.
                            self.scanning = Some(protocol::decoder::request_scanner());
                            continue;
                        }
                    }
                }
            }
            self.buffer.reserve(READ_CHUNK);
            let read = self.read.read_buf(&mut self.buffer);
            let read = match (&self.large, self.large_until) {
                // A client that sends a large line slowly would keep a permit others need: it has a
                // deadline to finish the line, past which its connection is closed.
                (Some(_), Some(until)) => match tokio::time::timeout_at(until, read).await {
                    Ok(read) => read,
                    Err(_) => {
                        tracing::warn!(
                            "a request line over {LARGE_LINE} bytes was not whole within {LARGE_LINE_DEADLINE:?}: closing its connection"
                        );
                        return Some(Err(std::io::ErrorKind::TimedOut.into()));
                    }
                },
                _ => read.await,
            };
            match read {
                Ok(0) => self.ended = true,
                Ok(_) => {}
                Err(e) => return Some(Err(e)),
            }
        }
    }

    /// Gives back the large-line permit of a line being read, while the connection does something else
    /// (writes an answer its client may not read for a while); reading on takes one again.
    fn set_permit_aside(&mut self) {
        self.large = None;
    }

    /// Every whole line already sent on the connection and not yet read, read without waiting.
    ///
    /// Read with a plain non-blocking `recv`, not through tokio: tokio reads only once the reactor has
    /// seen the socket readable, and at shutdown that event may not have been processed yet.
    fn unread(&mut self) -> Vec<BytesMut> {
        use nix::sys::socket::{MsgFlags, recv};
        use std::os::fd::AsRawFd;
        use tokio_util::codec::Decoder;
        /// Enough for any client that was not flooding; the rest is dropped with the connection.
        const MOST: usize = 4 << 20;
        let fd = self.read.as_ref().as_raw_fd();
        let mut buffer = std::mem::take(&mut self.buffer);
        let mut chunk = vec![0u8; READ_CHUNK];
        while buffer.len() < MOST {
            match recv(fd, &mut chunk, MsgFlags::MSG_DONTWAIT) {
                Ok(0) | Err(_) => break,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
        let mut lines = Vec::new();
        while let Ok(Some(Frame::Line(line))) = self.decoder.decode(&mut buffer) {
            lines.push(line);
        }
        lines
    }
}

/// The room made in a connection's buffer before each read: small, since most requests are a few
/// hundred bytes and a thousand connections may be open; a long line grows the buffer as it comes.
const READ_CHUNK: usize = 8 * 1024;
