//! Hooks hung live over the socket by a client holding an agent (an IDE, a supervising script, a flow
//! written with an SDK), for as long as it holds it (docs/protocol.md, "Live hooks").
//!
//! A live hook is a hook like the file's (checked as they are, `settings::live_hook`), whose program is
//! its client: each event it is selected for is sent on the client's connection as a `call`, numbered
//! per connection, and the client's `answer` is read as a worker hook's JSON answer. A fire takes the
//! live hooks of its moment after the settings' own, in the order they were hung, and waits for each as
//! for any hook: bounded by its timeout (and the agent's own limit at the moment). A call that cannot be
//! answered — the client gone, too many of its calls pending, a client that reads nothing, an answer
//! out of step — fails at once, and its `on_failure` decides; a client that never answers is cut at its
//! timeout, and holds up no other client's fire.
//!
//! The hooks hung are one list swapped whole on each change ([`ArcSwap`]), so that a fire reads it
//! without a lock; changes (attach, detach, a client gone, a session ended) take one lock.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::engine::live_check::LiveSpec;
use crate::engine::reading::Exit;
use crate::engine::runner::{Input, Ran};
use crate::limits::{
    ENDED_SESSIONS, HOOK_OUTPUT, LIVE_QUEUE_BYTES, MAX_CLIENT_ERROR, MAX_LIVE_CALLS_PENDING,
    MAX_LIVE_HOOKS, MAX_LIVE_HOOKS_PER_CONNECTION,
};
use crate::protocol::{Detached, LiveHookStatus};
use crate::settings::{Hook, Program};
use crate::sync::lock;

/// Room on a connection's queue of lines to write beyond its calls pending: for `detached` notices.
const NOTICES: usize = 64;

/// Every live hook hung on the daemon, and their clients.
#[derive(Debug, Default)]
pub struct Live {
    /// What fires read.
    hung: ArcSwap<Hung>,
    /// Serializes changes, and remembers the sessions that ended.
    changing: Mutex<Changes>,
}

#[derive(Debug, Default)]
struct Hung {
    /// In the order hung.
    hooks: Vec<Arc<LiveHook>>,
    /// By connection.
    clients: HashMap<u64, Arc<Client>>,
}

#[derive(Debug, Default)]
struct Changes {
    next_connection: u64,
    /// Sessions a SessionEnd was fired for, oldest first, at most [`ENDED_SESSIONS`].
    ended: VecDeque<String>,
    ended_set: HashSet<String>,
}

/// One live hook hung.
#[derive(Debug)]
struct LiveHook {
    hook: Arc<Hook>,
    /// The one session it is hung on; `None`: every session of its agents.
    session: Option<String>,
    connection: u64,
    /// Calls sent to it.
    calls: AtomicU64,
}

/// A connection that hangs live hooks: where its calls are written, and the calls waiting for its
/// answers.
#[derive(Debug)]
pub struct Client {
    pub connection: u64,
    /// The client's process, as the kernel said when it connected.
    pub pid: Option<i32>,
    /// Lines for the connection to write: calls, and `detached` notices.
    out: mpsc::Sender<Line>,
    /// The bytes of the lines queued and not yet written, within [`LIVE_QUEUE_BYTES`].
    queued: AtomicUsize,
    pending: Mutex<Pending>,
    /// Cancelled when the connection ends: every call pending fails at once.
    gone: CancellationToken,
    /// Live hooks it has hung now.
    hung: AtomicUsize,
}

#[derive(Debug, Default)]
struct Pending {
    /// The last call number given; calls are numbered from 1.
    last: u64,
    waiting: HashMap<u64, oneshot::Sender<Reply>>,
}

/// A line for the connection to write to its client.
#[derive(Debug)]
pub struct Line {
    /// The call it carries; `None` for a notice.
    call: Option<u64>,
    bytes: Vec<u8>,
}

/// What became of a call.
#[derive(Debug)]
enum Reply {
    /// The answer's members, as JSON, and the failure its client reported in them (`error`), if any.
    Answer(Vec<u8>, Option<String>),
    Failed(String),
}

/// A connection's side of its live hooks: the client, and the lines the connection must write for it.
#[derive(Debug)]
pub struct Connected {
    pub client: Arc<Client>,
    pub lines: mpsc::Receiver<Line>,
}

/// Why an answer was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotTaken {
    /// It echoes a call that was pending once and is no longer (answered, timed out, failed): dropped.
    Late(String),
    /// It echoes no call this connection was sent: every call pending on it fails.
    OutOfStep(String),
}

impl Client {
    /// Live hooks this connection has hung now: a connection holding some is not idle.
    pub fn hung(&self) -> usize {
        self.hung.load(Ordering::Relaxed)
    }

    /// Calls waiting for this connection's answers now.
    pub fn pending(&self) -> usize {
        lock(&self.pending).waiting.len()
    }

    /// Takes the client's answer to call `call`, the answer's members in `answer`.
    pub fn answer(
        &self,
        call: Option<&Value>,
        answer: &Map<String, Value>,
    ) -> Result<(), NotTaken> {
        let number = call.and_then(Value::as_u64);
        let mut pending = lock(&self.pending);
        if let Some(reply) = number.and_then(|n| pending.waiting.remove(&n)) {
            drop(pending);
            let members = serde_json::to_vec(answer).unwrap_or_else(|_| b"{}".to_vec());
            // The call may have ended meanwhile (its fire gone): nobody to tell.
            let _ = reply.send(Reply::Answer(members, reported_failure(answer)));
            return Ok(());
        }
        match number {
            Some(n) if n >= 1 && n <= pending.last => Err(NotTaken::Late(format!(
                "call {n} is no longer pending (answered, timed out or failed): this answer is dropped"
            ))),
            _ => {
                let shown = call.map_or_else(|| "none".to_string(), |call| cut(&call.to_string()));
                let why = format!(
                    "an answer out of step: it echoes call {shown}, which this connection was never sent"
                );
                let failed = pending.waiting.len();
                for (_, reply) in pending.waiting.drain() {
                    let _ = reply.send(Reply::Failed(format!(
                        "the client's answers are out of step ({why})"
                    )));
                }
                Err(NotTaken::OutOfStep(format!(
                    "{why}; {failed} call(s) pending on this connection failed"
                )))
            }
        }
    }

    /// A line taken from the queue to be written: its bytes, or `None` for a call no longer pending (its
    /// fire already had its answer, or gave up on it), which is not written: a client back from a stall
    /// is not sent what nobody waits for.
    pub fn to_write(&self, line: Line) -> Option<Vec<u8>> {
        self.queued.fetch_sub(line.bytes.len(), Ordering::Relaxed);
        match line.call {
            Some(call) if !lock(&self.pending).waiting.contains_key(&call) => None,
            _ => Some(line.bytes),
        }
    }

    /// Queues a line for the connection to write, unless the client has left that much unread (a
    /// line always goes into an empty queue, whatever its size).
    fn queue(&self, call: Option<u64>, bytes: Vec<u8>) -> bool {
        let size = bytes.len();
        let queued = self.queued.fetch_add(size, Ordering::Relaxed);
        if queued > 0 && queued + size > LIVE_QUEUE_BYTES {
            self.queued.fetch_sub(size, Ordering::Relaxed);
            return false;
        }
        if self.out.try_send(Line { call, bytes }).is_err() {
            self.queued.fetch_sub(size, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Every call pending fails at once with `why` (the client sent what hookd could not read).
    pub fn fail_pending(&self, why: &str) -> usize {
        let mut pending = lock(&self.pending);
        let failed = pending.waiting.len();
        for (_, reply) in pending.waiting.drain() {
            let _ = reply.send(Reply::Failed(why.to_string()));
        }
        failed
    }
}

/// A call's place among its client's pending calls, given up when the call ends however it ends (its
/// fire dropped among them).
struct Waiting<'a> {
    client: &'a Client,
    number: u64,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        lock(&self.client.pending).waiting.remove(&self.number);
    }
}

impl Live {
    /// A connection starts hanging live hooks; `pid` is its peer's.
    pub fn connect(&self, pid: Option<i32>) -> Connected {
        let mut changes = lock(&self.changing);
        changes.next_connection += 1;
        let (out, lines) = mpsc::channel(MAX_LIVE_CALLS_PENDING + NOTICES);
        let client = Arc::new(Client {
            connection: changes.next_connection,
            pid,
            out,
            queued: AtomicUsize::new(0),
            pending: Mutex::new(Pending::default()),
            gone: CancellationToken::new(),
            hung: AtomicUsize::new(0),
        });
        let hung = self.hung.load();
        let mut clients = hung.clients.clone();
        clients.insert(client.connection, client.clone());
        self.hung.store(Arc::new(Hung {
            hooks: hung.hooks.clone(),
            clients,
        }));
        Connected { client, lines }
    }

    /// Hangs checked hooks for `client`, after every hook hung before; each one hung, or refused with
    /// why (its session ended, its name already hung by this client, a bound reached).
    pub fn attach(&self, client: &Client, specs: Vec<LiveSpec>) -> Vec<Result<String, String>> {
        let changes = lock(&self.changing);
        let hung = self.hung.load();
        let mut hooks = hung.hooks.clone();
        let mut results = Vec::with_capacity(specs.len());
        for LiveSpec { hook, session } in specs {
            let name = hook.name.clone();
            let mine = hooks
                .iter()
                .filter(|h| h.connection == client.connection)
                .count();
            let refusal = if let Some(session) =
                session.as_ref().filter(|s| changes.ended_set.contains(*s))
            {
                Some(format!(
                    "session {} has already ended (a SessionEnd was fired for it): the hook would never run",
                    crate::tables::moment::shown(session)
                ))
            } else if hooks
                .iter()
                .any(|h| h.connection == client.connection && h.hook.name == name)
            {
                Some(format!(
                    "this connection has already hung a hook named \"{}\"; detach it first, or choose another name",
                    crate::tables::moment::shown(&name)
                ))
            } else if mine >= MAX_LIVE_HOOKS_PER_CONNECTION {
                Some(format!(
                    "this connection has hung {MAX_LIVE_HOOKS_PER_CONNECTION} live hooks, as many as one may"
                ))
            } else if hooks.len() >= MAX_LIVE_HOOKS {
                Some(format!(
                    "the daemon holds {MAX_LIVE_HOOKS} live hooks, as many as it takes"
                ))
            } else {
                None
            };
            if let Some(refusal) = refusal {
                results.push(Err(refusal));
                continue;
            }
            hooks.push(Arc::new(LiveHook {
                hook: Arc::new(hook),
                session,
                connection: client.connection,
                calls: AtomicU64::new(0),
            }));
            client.hung.fetch_add(1, Ordering::Relaxed);
            results.push(Ok(name));
        }
        self.hung.store(Arc::new(Hung {
            hooks,
            clients: hung.clients.clone(),
        }));
        drop(changes);
        results
    }

    /// Takes down the hooks `names` of `connection` (all of them when `None`): the names taken down, and
    /// the names given that it had not hung.
    pub fn detach(&self, connection: u64, names: Option<&[String]>) -> (Vec<String>, Vec<String>) {
        let _changes = lock(&self.changing);
        let hung = self.hung.load();
        let (gone, kept): (Vec<_>, Vec<_>) = hung.hooks.iter().cloned().partition(|h| {
            h.connection == connection && names.is_none_or(|names| names.contains(&h.hook.name))
        });
        let detached: Vec<String> = gone.iter().map(|h| h.hook.name.clone()).collect();
        let unknown = names
            .unwrap_or_default()
            .iter()
            .filter(|name| !detached.contains(name))
            .cloned()
            .collect();
        if let Some(client) = hung.clients.get(&connection) {
            client.hung.fetch_sub(gone.len(), Ordering::Relaxed);
        }
        self.hung.store(Arc::new(Hung {
            hooks: kept,
            clients: hung.clients.clone(),
        }));
        (detached, unknown)
    }

    /// The connection ended: its hooks are taken down, and every call pending on it fails at once.
    pub fn disconnect(&self, connection: u64) {
        let _changes = lock(&self.changing);
        let hung = self.hung.load();
        let hooks: Vec<_> = hung
            .hooks
            .iter()
            .filter(|h| h.connection != connection)
            .cloned()
            .collect();
        let mut clients = hung.clients.clone();
        if let Some(client) = clients.remove(&connection) {
            client.gone.cancel();
            client.fail_pending("the client's connection ended before it answered");
            client.hung.store(0, Ordering::Relaxed);
        }
        self.hung.store(Arc::new(Hung { hooks, clients }));
    }

    /// A SessionEnd was fired for `session`: a hook hung on it later is refused, and those hung on it
    /// now are taken down, each client told.
    pub fn session_ended(&self, session: &str) {
        let mut changes = lock(&self.changing);
        if changes.ended_set.insert(session.to_string()) {
            changes.ended.push_back(session.to_string());
            while changes.ended.len() > ENDED_SESSIONS {
                if let Some(oldest) = changes.ended.pop_front() {
                    changes.ended_set.remove(&oldest);
                }
            }
        }
        let hung = self.hung.load();
        if !hung
            .hooks
            .iter()
            .any(|h| h.session.as_deref() == Some(session))
        {
            return;
        }
        let (gone, kept): (Vec<_>, Vec<_>) = hung
            .hooks
            .iter()
            .cloned()
            .partition(|h| h.session.as_deref() == Some(session));
        self.hung.store(Arc::new(Hung {
            hooks: kept,
            clients: hung.clients.clone(),
        }));
        drop(changes);
        let mut by_client: Vec<(u64, Vec<String>)> = Vec::new();
        for hook in gone {
            match by_client.iter_mut().find(|(c, _)| *c == hook.connection) {
                Some((_, names)) => names.push(hook.hook.name.clone()),
                None => by_client.push((hook.connection, vec![hook.hook.name.clone()])),
            }
        }
        for (connection, hooks) in by_client {
            let Some(client) = hung.clients.get(&connection) else {
                continue;
            };
            client.hung.fetch_sub(hooks.len(), Ordering::Relaxed);
            let notice = Detached {
                op: "detached".into(),
                hooks,
                reason: format!("session {} ended", crate::tables::moment::shown(session)),
            };
            if !client.queue(None, crate::protocol::to_line(&notice)) {
                tracing::warn!(
                    connection,
                    "a live client reads nothing: it was not told its hooks were taken down at SessionEnd"
                );
            }
        }
    }

    /// The live hooks of `moment` that apply to `agent` and to the event's `session`, in the order hung,
    /// for the fire to match as it matches the file's.
    pub fn candidates(
        &self,
        moment: &str,
        agent: Option<&str>,
        session: Option<&str>,
    ) -> Vec<Arc<Hook>> {
        let hung = self.hung.load();
        if hung.hooks.is_empty() {
            return Vec::new();
        }
        hung.hooks
            .iter()
            .filter(|h| {
                h.hook.moment == moment
                    && h.hook.applies_to_agent(agent)
                    && h.session
                        .as_deref()
                        .is_none_or(|hung_on| Some(hung_on) == session)
            })
            .map(|h| h.hook.clone())
            .collect()
    }

    /// Asks `hook`'s client for its answer to the event in `input`, within `timeout`; `cancel` ends the
    /// wait (the fire's client left, the daemon is stopping).
    pub async fn call(
        &self,
        hook: &Hook,
        input: &Input,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Ran {
        let started = Instant::now();
        let broken = |why: &str| Ran::without_process(Exit::Broken(why.to_string()), started);
        let Program::Live { connection, .. } = &hook.program else {
            return broken("hookd asked a hook that is not live as a live one (a bug)");
        };
        let client = {
            let hung = self.hung.load();
            if let Some(live) = hung
                .hooks
                .iter()
                .find(|h| std::ptr::eq(Arc::as_ptr(&h.hook), hook))
            {
                live.calls.fetch_add(1, Ordering::Relaxed);
            }
            match hung.clients.get(connection) {
                Some(client) => client.clone(),
                None => return broken("the client that hung this live hook has gone"),
            }
        };
        let (reply, replied) = oneshot::channel();
        let number = {
            let mut pending = lock(&client.pending);
            if pending.waiting.len() >= MAX_LIVE_CALLS_PENDING {
                return broken(&format!(
                    "the client has {MAX_LIVE_CALLS_PENDING} calls waiting for its answers, as many as one may"
                ));
            }
            pending.last += 1;
            let number = pending.last;
            pending.waiting.insert(number, reply);
            number
        };
        let _waiting = Waiting {
            client: &client,
            number,
        };
        let line = call_line(number, &hook.name, &input.moment, &input.event_line);
        if !client.queue(Some(number), line) {
            return broken(
                "the client is not reading its calls (those written to it wait unread, and more are queued)",
            );
        }
        tokio::select! {
            replied = replied => match replied {
                Ok(Reply::Answer(members, failed)) => answered(members, failed, started),
                Ok(Reply::Failed(why)) => broken(&why),
                Err(_) => broken("the client's connection ended before it answered"),
            },
            _ = tokio::time::sleep(timeout) => Ran::without_process(Exit::TimedOut(timeout), started),
            _ = cancel.cancelled() => Ran::cancelled(),
            _ = client.gone.cancelled() => broken("the client's connection ended before it answered"),
        }
    }

    /// Every live hook hung, in the order hung, for `status`.
    pub fn status(&self) -> Vec<LiveHookStatus> {
        let hung = self.hung.load();
        hung.hooks
            .iter()
            .map(|h| LiveHookStatus {
                client: match &h.hook.program {
                    Program::Live { client, .. } => client.clone(),
                    _ => String::new(),
                },
                pid: hung.clients.get(&h.connection).and_then(|c| c.pid),
                hook: h.hook.name.clone(),
                moment: h.hook.moment.clone(),
                session: h.session.clone(),
                agents: h.hook.agents.clone(),
                calls: h.calls.load(Ordering::Relaxed),
            })
            .collect()
    }
}

/// A call as the client reads it: `{"op":"call","call":N,"hook":H,"moment":M,"event":{...}}`, the event
/// as every hook is given it.
fn call_line(number: u64, hook: &str, moment: &str, event_line: &[u8]) -> Vec<u8> {
    let event = event_line.strip_suffix(b"\n").unwrap_or(event_line);
    let head = format!(
        "{{\"op\":\"call\",\"call\":{number},\"hook\":{},\"moment\":{},\"event\":",
        Value::String(hook.to_string()),
        Value::String(moment.to_string())
    );
    let mut line = Vec::with_capacity(head.len() + event.len() + 2);
    line.extend_from_slice(head.as_bytes());
    line.extend_from_slice(event);
    line.extend_from_slice(b"}\n");
    line
}

/// A client's answer as a worker's answer line is read; one past the output limit is cut, and read as a
/// worker's cut answer is (it fails closed). One that reports its hook failed (`failed`) is read as a
/// hook that exited non-zero: a refusal or an ask in it stands, the rest is the hook's failure.
fn answered(mut members: Vec<u8>, failed: Option<String>, started: Instant) -> Ran {
    let truncated = members.len() > HOOK_OUTPUT;
    members.truncate(HOOK_OUTPUT);
    Ran {
        exit: failed.map_or(Exit::Answered, Exit::Failed),
        stdout: members,
        stderr: Vec::new(),
        truncated,
        elapsed: started.elapsed(),
    }
}

/// The failure a client reports in its answer (`error`, not `null`): its text (a string's own, else its
/// JSON), cut at [`MAX_CLIENT_ERROR`] bytes, since the journal and the agent's message quote it.
fn reported_failure(answer: &Map<String, Value>) -> Option<String> {
    let error = match answer.get("error")? {
        Value::Null => return None,
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let error = error.trim();
    let error = if error.is_empty() {
        "(it gave no reason)"
    } else {
        error
    };
    if error.len() <= MAX_CLIENT_ERROR {
        return Some(error.to_string());
    }
    let mut cut = MAX_CLIENT_ERROR;
    while !error.is_char_boundary(cut) {
        cut -= 1;
    }
    Some(format!("{}...", &error[..cut]))
}

/// A client-given value as quoted in a message.
fn cut(text: &str) -> String {
    crate::tables::moment::shown(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn failure(answer: Value) -> Option<String> {
        reported_failure(answer.as_object().unwrap())
    }

    #[test]
    fn a_clients_error_is_its_text_cut_and_null_is_none() {
        assert_eq!(failure(json!({"refused": "no"})), None);
        assert_eq!(failure(json!({"error": null})), None);
        assert_eq!(failure(json!({"error": " boom "})).as_deref(), Some("boom"));
        assert_eq!(
            failure(json!({"error": {"code": 3}})).as_deref(),
            Some(r#"{"code":3}"#)
        );
        assert_eq!(
            failure(json!({"error": ""})).as_deref(),
            Some("(it gave no reason)")
        );
        // Cut at a character's boundary, and said to be cut.
        let long = failure(json!({"error": "é".repeat(MAX_CLIENT_ERROR)})).unwrap();
        assert!(long.len() <= MAX_CLIENT_ERROR + 3, "{}", long.len());
        assert!(long.ends_with("..."));
    }
}
