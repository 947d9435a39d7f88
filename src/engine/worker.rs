//! Worker hooks: a hook kept running instead of started per event, so a fire pays no process start.
//!
//! The protocol (docs/settings.md, "The worker protocol"): the daemon writes one event per line to the
//! worker's stdin (the JSON a command hook gets, with one more field first, `"hookd_id": N`, a number
//! no other event to that slot carries) and reads one answer per line from its stdout, a JSON object
//! read by the rules of docs/settings.md, "JSON answers" (`{}` says nothing). Its stderr goes to the
//! daemon's log with the hook's name.
//!
//! An answer must belong to its event: a refusal read as the answer to another event is a refusal lost.
//! What a new worker writes before it has read its first event (a banner) is no answer: the first event
//! is written but for its newline, and what the worker wrote by the time it read the rest is dropped
//! (logged, counted in `status`), the worker kept. Past its first event, a worker is *out of step* when it
//! wrote anything before the event was sent (the rest of an earlier answer, a stray line), when a line
//! comes while some of the event is still unread in the pipe to it, when it answers with a blank line,
//! when its answer echoes another `hookd_id`, or when more follows its answer line. The worker is replaced, and the event whose answer cannot be trusted
//! fails (its `on_failure` decides); an event not sent because white space was waiting goes to the next
//! worker instead.
//!
//! A worker hook has `workers` processes (slots), each driven by a task of its own that takes requests
//! from the hook's one queue: the first idle slot answers. A slot whose worker answers late, or is out of
//! step, is killed (by group) and started again at once; one whose worker dies, or keeps failing its
//! events out of step, is started again after a pause that doubles with each failure in a row (100 ms up
//! to 30 s), so it is not restarted in a tight loop; `status` shows it as failing, with its last error.
//!
//! A pool lives as long as a generation of the settings holds it, and every fire holds its generation to
//! its end: a reload that replaces a worker lets the old one answer the fires that started on it, and
//! stops it once the last of them is answered.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::engine::reading::Exit;
use crate::engine::reaper::Reaper;
use crate::engine::runner::{Group, Leader, Ran, Runner, describe_spawn_error, hook_command};
use crate::limits::{HOOK_OUTPUT, WORKER_QUEUE};
use crate::settings::{Hook, Program};
use crate::sync::lock;

/// The first pause before restarting a worker that died; it doubles with each failure in a row.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);

/// The longest pause between restarts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The longest line of a worker's stderr put in the log as one line.
const STDERR_LINE: usize = 4096;

/// Failures in a row from which a worker is reported as failing.
const FAILING_AFTER: u32 = 3;

/// How much of what a worker wrote out of step is quoted in the log and `status` (characters).
const SHOWN: usize = 80;

/// The field of an event line that numbers it, and that a worker may echo in its answer.
pub const ID_FIELD: &str = "hookd_id";

/// A worker hook's processes and the queue of fires waiting for them. Dropping the last handle (the last
/// generation and the last fire that held it) stops its workers once they have answered what they hold.
#[derive(Debug)]
pub struct Pool {
    /// What the pool was started from: a reload keeps the pool when this is unchanged.
    pub identity: String,
    queue: mpsc::Sender<Request>,
    slots: Arc<Vec<Mutex<SlotStatus>>>,
    /// Cancelled when the pool is dropped, or by the daemon-wide token it was started under (shutdown).
    stop: CancellationToken,
}

/// One fire's question to a worker.
struct Request {
    line: Arc<[u8]>,
    timeout: Duration,
    answer: oneshot::Sender<Ran>,
}

/// A count `status` leaves out while it is 0 (serde's `skip_serializing_if`).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What `status` shows of one worker process.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct SlotStatus {
    /// `starting`, `running`, `restarting` (after a failure, waiting its pause) or `failing` (failing
    /// again and again), `stopped`.
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    pub restarts: u64,
    /// How many times a worker of this slot was found out of step (and replaced).
    pub out_of_step: u64,
    /// How many times a worker of this slot wrote something as it started, before it read its first
    /// event (a banner): dropped, never taken for an answer.
    #[serde(skip_serializing_if = "is_zero")]
    pub banners: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// What a slot needs to start its worker.
#[derive(Debug)]
struct Spec {
    hook: Hook,
    config_dir: PathBuf,
    /// Set once a worker of this hook has echoed `hookd_id`: from then on an answer without it is out of
    /// step (a heartbeat or a banner written as an event was sent would otherwise pass for its answer).
    echoes: std::sync::atomic::AtomicBool,
}

impl Pool {
    /// Starts the worker processes of `hook` (a [`Program::Worker`]) now. `stopping` stops them all at
    /// once (shutdown), whichever generations still hold the pool.
    pub fn start(
        hook: &Hook,
        config_dir: PathBuf,
        runner: &Runner,
        stopping: &CancellationToken,
    ) -> Arc<Pool> {
        let tasks = &runner.cleanups;
        let count = match &hook.program {
            Program::Worker { count, .. } => *count,
            _ => 1,
        };
        let (queue, requests) = mpsc::channel(WORKER_QUEUE);
        let requests = Arc::new(tokio::sync::Mutex::new(requests));
        let slots: Arc<Vec<Mutex<SlotStatus>>> = Arc::new(
            (0..count)
                .map(|_| {
                    Mutex::new(SlotStatus {
                        state: "starting",
                        ..SlotStatus::default()
                    })
                })
                .collect(),
        );
        let stop = stopping.child_token();
        let spec = Arc::new(Spec {
            hook: hook.clone(),
            config_dir,
            echoes: std::sync::atomic::AtomicBool::new(false),
        });
        for index in 0..count {
            let slot = Slot {
                index,
                spec: spec.clone(),
                requests: requests.clone(),
                slots: slots.clone(),
                stop: stop.clone(),
                tasks: tasks.clone(),
                reaper: runner.reaper.clone(),
            };
            tasks.spawn(slot.run());
        }
        Arc::new(Pool {
            identity: identity(hook, &spec.config_dir),
            queue,
            slots,
            stop,
        })
    }

    /// Asks a worker about one event: its answer, read as a hook's stdout after exit 0.
    pub async fn ask(&self, line: Arc<[u8]>, timeout: Duration) -> Ran {
        let started = Instant::now();
        let (answer, answered) = oneshot::channel();
        // Under load a fire waits its turn, as a command hook waits for a process slot: failing it at
        // once would let its event through under the default `on_failure`. Each turn is bounded by the
        // hook's timeout, which its slot enforces on the worker; the fire's own cancellation (its client
        // gone, the daemon stopping) ends the wait.
        let request = Request {
            line,
            timeout,
            answer,
        };
        if self.queue.send(request).await.is_err() {
            return broken(started, "the worker hook is stopping");
        }
        match answered.await {
            Ok(ran) => ran,
            Err(_) => broken(started, "the worker stopped before answering"),
        }
    }

    pub fn status(&self) -> Vec<SlotStatus> {
        self.slots.iter().map(|slot| lock(slot).clone()).collect()
    }
}

impl Drop for Pool {
    /// Nobody can ask this pool anything any more: its slots answer what is queued (fires already gone,
    /// so nobody is waiting for those answers), stop their workers and end.
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// What makes two worker hooks the same processes: a reload restarts a worker only when this changes.
/// (The timeout is not part of it: it is given with each request.)
pub fn identity(hook: &Hook, config_dir: &std::path::Path) -> String {
    format!("{:?}|{:?}|{:?}", hook.program, hook.env, config_dir)
}

fn broken(started: Instant, why: &str) -> Ran {
    Ran::without_process(Exit::Broken(why.to_string()), started)
}

/// Why a worker is replaced, which decides how soon the next one starts.
#[derive(Debug, PartialEq)]
enum Fault {
    /// It died, could not start, or answered what is no answer: replaced after a pause that doubles with
    /// each failure in a row.
    Died(String),
    /// What it wrote is not in step with the events: replaced at once the first time in a row, then like
    /// a dying one (a worker that always prints a banner must not be restarted in a tight loop).
    OutOfStep(String),
    /// It did not answer in time: killed and replaced at once (slowness is not a crash).
    Late(String),
}

impl Fault {
    fn why(&self) -> &str {
        match self {
            Fault::Died(why) | Fault::OutOfStep(why) | Fault::Late(why) => why,
        }
    }

    fn out_of_step(what: impl std::fmt::Display) -> Fault {
        Fault::OutOfStep(format!("out of step: {what}"))
    }

    /// The pause before the next worker starts, after this fault made `failures` in a row.
    fn pause(&self, failures: u32) -> Duration {
        let doublings = match self {
            Fault::Died(_) => failures,
            Fault::OutOfStep(_) => failures.saturating_sub(1),
            Fault::Late(_) => 0,
        };
        if doublings == 0 {
            return Duration::ZERO;
        }
        FIRST_BACKOFF
            .saturating_mul(1 << (doublings - 1).min(10))
            .min(MAX_BACKOFF)
    }
}

/// One worker process slot, as a task.
struct Slot {
    index: usize,
    spec: Arc<Spec>,
    requests: Arc<tokio::sync::Mutex<mpsc::Receiver<Request>>>,
    slots: Arc<Vec<Mutex<SlotStatus>>>,
    stop: CancellationToken,
    tasks: TaskTracker,
    reaper: Arc<Reaper>,
}

/// A slot's count of its workers' lives.
#[derive(Default)]
struct Life {
    /// Failures in a row (deaths, events failed out of step), back to 0 at the first answer.
    failures: u32,
    /// Before the next worker starts.
    pause: Duration,
    /// Workers started so far.
    starts: u64,
    /// The last `hookd_id` given: never given twice by a slot, whatever worker it runs.
    last_id: u64,
}

/// What came to an idle slot first.
enum Idle {
    Asked(Request),
    /// The worker died; why.
    Died(String),
    /// The pool is stopping, or dropped with its queue drained.
    Stop,
}

/// A running worker.
struct Process {
    child: Child,
    group: Option<Group>,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// Whether an event was written to it yet: what a worker writes before its first event is a banner.
    asked: bool,
}

impl Slot {
    async fn run(self) {
        let mut life = Life::default();
        let mut process: Option<Process> = None;
        // A request not sent to the worker just replaced, for the next one (at most once per request).
        let mut held: Option<Request> = None;
        loop {
            let Some(worker) = process.as_mut() else {
                if !self.pause(life.pause).await {
                    break;
                }
                self.start(&mut life, &mut process);
                continue;
            };
            let (request, retried) = match held.take().filter(|held| !held.answer.is_closed()) {
                Some(request) => (request, true),
                None => match self.idle(worker).await {
                    Idle::Asked(request) => (request, false),
                    Idle::Died(why) => {
                        self.failed(&mut life, Fault::Died(why));
                        self.retire(process.take());
                        continue;
                    }
                    Idle::Stop => break,
                },
            };
            // A worker never asked anything yet may have written a banner as it started: its first exchange
            // drops it (see `settle`). Past its first event, anything waiting is out of step.
            if worker.asked
                && let Some(stray) = stray(worker)
            {
                note_echo(&stray, &self.spec.echoes);
                // Written before the event is sent: not its answer, but whatever the worker answers next
                // may be the answer to something else, so the event is not sent to it. White space (the
                // tail of an answer, `print(answer + "\n")`) cannot pass for an answer from the next
                // worker: that one gets the event. Anything else may be a banner, which the next worker
                // may write just as the event is sent: the event fails.
                let fault = Fault::out_of_step(format!(
                    "it wrote {} before the event was sent",
                    shown(&stray)
                ));
                if stray.trim_ascii().is_empty() && !retried {
                    held = Some(request);
                } else {
                    let _ = request.answer.send(broken(Instant::now(), fault.why()));
                }
                self.failed(&mut life, fault);
                self.retire(process.take());
                continue;
            }
            life.last_id += 1;
            let Some((ran, fault)) = self.ask(worker, &request, life.last_id).await else {
                let stopped = "the worker was stopped before it answered";
                let _ = request.answer.send(broken(Instant::now(), stopped));
                break;
            };
            // An answer, even one followed by something out of step, starts the count of failures over:
            // only a worker that keeps failing its events is restarted after a pause.
            if ran.exit == Exit::Answered {
                life.failures = 0;
            }
            let _ = request.answer.send(ran);
            if let Some(fault) = fault {
                self.failed(&mut life, fault);
                self.retire(process.take());
            }
        }
        self.retire(process.take());
        self.update(|slot| {
            slot.state = "stopped";
            slot.pid = None;
        });
    }

    /// Starts a worker into `process`, or counts the failure.
    fn start(&self, life: &mut Life, process: &mut Option<Process>) {
        match self.spawn() {
            Ok(started) => {
                if life.starts > 0 {
                    self.update(|slot| slot.restarts += 1);
                }
                life.starts += 1;
                *process = Some(started);
            }
            Err(why) => self.failed(life, Fault::Died(why)),
        }
    }

    /// Waits for a request, noticing the worker dying meanwhile.
    async fn idle(&self, worker: &mut Process) -> Idle {
        tokio::select! {
            biased;
            _ = self.stop.cancelled() => Idle::Stop,
            status = worker.child.wait() => Idle::Died(match status {
                Ok(status) => format!("the worker exited while idle ({status})"),
                Err(e) => format!("the worker could not be waited for: {e}"),
            }),
            request = self.next_request() => request.map_or(Idle::Stop, Idle::Asked),
        }
    }

    /// Asks the worker about the request's event, numbered `id`, within its timeout: the answer and the
    /// fault for which the worker must be replaced, if any; `None` when the pool stops meanwhile.
    async fn ask(
        &self,
        worker: &mut Process,
        request: &Request,
        id: u64,
    ) -> Option<(Ran, Option<Fault>)> {
        let started = Instant::now();
        let asked = tokio::time::timeout(
            request.timeout,
            exchange(
                worker,
                &request.line,
                id,
                &self.spec.echoes,
                started,
                |banner| self.dropped(banner),
            ),
        );
        tokio::select! {
            biased;
            done = asked => Some(done.unwrap_or_else(|_| late(request.timeout, started))),
            _ = self.stop.cancelled() => None,
        }
    }

    /// Waits `pause` before a worker starts; false when the pool stops meanwhile.
    async fn pause(&self, pause: Duration) -> bool {
        if pause.is_zero() {
            return !self.stop.is_cancelled();
        }
        tokio::select! {
            _ = tokio::time::sleep(pause) => true,
            _ = self.stop.cancelled() => false,
        }
    }

    /// The next request someone still waits for; `None` once the pool is dropped and its queue drained.
    async fn next_request(&self) -> Option<Request> {
        let mut requests = self.requests.lock().await;
        loop {
            let request = requests.recv().await?;
            // Its fire was abandoned (the client left, or it waited too long for a free slot).
            if !request.answer.is_closed() {
                return Some(request);
            }
        }
    }

    fn spawn(&self) -> Result<Process, String> {
        let hook = &self.spec.hook;
        let working_dir = if self.spec.config_dir.is_dir() {
            self.spec.config_dir.clone()
        } else {
            PathBuf::from("/")
        };
        let mut child = hook_command(hook, &self.spec.config_dir, &working_dir)
            .spawn()
            .map_err(|e| format!("could not start: {}", describe_spawn_error(hook, &e)))?;
        let pid = child.id().ok_or("the worker vanished as it started")?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err("the worker's pipes could not be set up".into());
        };
        self.tasks.spawn(log_stderr(hook.name.clone(), stderr));
        let process = Process {
            child,
            group: Some(Group::led_by(pid, &self.reaper)),
            stdin,
            stdout: BufReader::new(stdout),
            asked: false,
        };
        if let Err(e) = keep_nonblocking(process.stdout.get_ref()) {
            self.retire(Some(process));
            return Err(format!(
                "the worker's stdout could not be made non-blocking: {e}"
            ));
        }
        self.update(|slot| {
            slot.state = "running";
            slot.pid = Some(pid);
        });
        tracing::info!(hook = %hook.name, pid, slot = self.index, "worker started");
        Ok(process)
    }

    /// What a worker wrote as it started, before it read its first event: no answer to anything. Logged,
    /// counted in `status`, and dropped; the worker is kept.
    fn dropped(&self, banner: &[u8]) {
        tracing::warn!(
            hook = %self.spec.hook.name,
            "worker wrote {} as it started, before reading its first event: not an answer, dropped",
            shown(banner)
        );
        self.update(|slot| slot.banners += 1);
    }

    /// Counts a fault, logs it, shows it in `status`, and sets the pause before the next worker.
    fn failed(&self, life: &mut Life, fault: Fault) {
        let name = &self.spec.hook.name;
        let why = fault.why();
        if matches!(fault, Fault::Late(_)) {
            tracing::warn!(hook = %name, "{why}");
        } else {
            life.failures += 1;
        }
        life.pause = fault.pause(life.failures);
        let failing = life.failures >= FAILING_AFTER && !matches!(fault, Fault::Late(_));
        match &fault {
            Fault::Late(_) => {}
            _ if failing => {
                tracing::error!(hook = %name, failures_in_a_row = life.failures, "worker keeps failing: {why}")
            }
            Fault::OutOfStep(_) => tracing::warn!(hook = %name, "worker {why}; restarting it"),
            Fault::Died(_) => tracing::warn!(hook = %name, "worker failed: {why}"),
        }
        if crate::record::get().is_some() {
            let mut record = crate::record::Record::new(crate::record::Kind::WorkerRestart);
            record.hook = Some(name.clone());
            record.error = Some(crate::record::cut(why, crate::record::STDERR_CHARS));
            record.count = Some(u64::from(life.failures));
            crate::record::note(record);
        }
        self.update(|slot| {
            slot.state = if failing { "failing" } else { "restarting" };
            slot.pid = None;
            slot.last_error = Some(why.to_string());
            if matches!(fault, Fault::OutOfStep(_)) {
                slot.out_of_step += 1;
            }
        });
    }

    /// Stops a worker by group (SIGTERM, SIGKILL a second later) and reaps it, in the background.
    fn retire(&self, worker: Option<Process>) {
        if let Some(Process {
            child,
            group: Some(group),
            ..
        }) = worker
        {
            group.stop(Leader::Worker(child), None, &self.tasks);
        }
    }

    fn update(&self, change: impl FnOnce(&mut SlotStatus)) {
        change(&mut lock(&self.slots[self.index]));
    }
}

/// A request its worker did not answer in time: failed, and the worker replaced.
fn late(timeout: Duration, started: Instant) -> (Ran, Option<Fault>) {
    let why = format!(
        "no answer within {}s; restarting the worker",
        timeout.as_secs_f64()
    );
    (
        Ran::without_process(Exit::TimedOut(timeout), started),
        Some(Fault::Late(why)),
    )
}

/// Asks the worker about one event numbered `id`: the answer (or a failure, for `on_failure` to decide),
/// and the fault for which the worker must be replaced, if any. `echoes`: whether this hook's workers
/// are known to echo `hookd_id` (learned here from the first that does).
async fn exchange(
    worker: &mut Process,
    line: &[u8],
    id: u64,
    echoes: &std::sync::atomic::AtomicBool,
    started: Instant,
    dropped: impl FnOnce(&[u8]),
) -> (Ran, Option<Fault>) {
    let answer = match talk(worker, line, id, dropped).await {
        Ok(answer) => answer,
        Err(fault) => return (broken(started, fault.why()), Some(fault)),
    };
    note_echo(&answer, echoes);
    // An answer comes after its event was read, all of it: a line that came while some of the event was
    // still waiting in the pipe to the worker was written before it (a heartbeat, a stray line), whatever
    // it says. (A line written just after the worker read the event is not told apart this way; the echo
    // of `hookd_id` tells it.)
    match unread_by_worker(&worker.stdin) {
        Ok(0) => {}
        Ok(unread) => {
            let fault = Fault::out_of_step(format!(
                "it wrote {} while {unread} bytes of the event were still unread",
                shown(&answer)
            ));
            return (broken(started, fault.why()), Some(fault));
        }
        Err(e) => {
            let fault = Fault::Died(format!("the worker's stdin could not be looked at: {e}"));
            return (broken(started, fault.why()), Some(fault));
        }
    }
    let (ran, echoed) = match read_answer(answer, id, started) {
        Ok(read) => read,
        Err(fault) => return (broken(started, fault.why()), Some(fault)),
    };
    if echoed {
        echoes.store(true, std::sync::atomic::Ordering::Relaxed);
    } else if echoes.load(std::sync::atomic::Ordering::Relaxed) {
        let fault = Fault::out_of_step(format!(
            "its answer carries no {ID_FIELD}, though this hook's workers echo it"
        ));
        return (broken(started, fault.why()), Some(fault));
    }
    let after = stray(worker);
    if let Some(after) = &after {
        note_echo(after, echoes);
    }
    let Some(after) = after else {
        return (ran, None);
    };
    let fault = Fault::out_of_step(format!("it wrote {} after its answer", shown(&after)));
    // The answer line came first after the event, with nothing before it: it stands when what follows is
    // only white space (`print(answer + "\n")`) or it carries this event's number. Another line after it
    // may be the real answer (a banner written as the event was sent, then the answer): it does not.
    if echoed || after.trim_ascii().is_empty() {
        (ran, Some(fault))
    } else {
        (broken(started, fault.why()), Some(fault))
    }
}

/// Any output that carries a number (an answer, even to another event, or one seen out of step) shows that
/// this hook's workers echo it: from then on an answer without one is out of step.
fn note_echo(output: &[u8], echoes: &std::sync::atomic::AtomicBool) {
    let key = ID_FIELD.as_bytes();
    let quoted = output
        .windows(key.len() + 2)
        .any(|w| w[0] == b'"' && w[w.len() - 1] == b'"' && &w[1..w.len() - 1] == key);
    if quoted {
        echoes.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// What the worker wrote that nobody asked for: bytes left in the buffer past the last answer, or waiting
/// in the pipe right now (read without waiting: tokio keeps the pipe non-blocking). Read only to be shown:
/// a worker that wrote them is replaced.
fn stray(worker: &mut Process) -> Option<Vec<u8>> {
    let mut seen = worker.stdout.buffer().to_vec();
    let mut waiting = [0u8; 4 * SHOWN];
    // Nothing waiting (EAGAIN), or the end of its stdout, adds nothing: the write or the read says what
    // happened. Read even past buffered white space, which may be followed by more.
    if let Ok(n) = nix::unistd::read(worker.stdout.get_ref(), &mut waiting) {
        seen.extend_from_slice(&waiting[..n]);
    }
    (!seen.is_empty()).then_some(seen)
}

/// Makes sure a worker's stdout is non-blocking, as tokio leaves it: [`stray`] reads it without waiting,
/// and a read that waited would stop the whole daemon.
fn keep_nonblocking(stdout: &ChildStdout) -> nix::Result<()> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    let flags = OFlag::from_bits_truncate(fcntl(stdout, FcntlArg::F_GETFL)?);
    if !flags.contains(OFlag::O_NONBLOCK) {
        fcntl(stdout, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    }
    Ok(())
}

/// The start of what a worker wrote, quoted, for the log and `status`.
fn shown(bytes: &[u8]) -> String {
    let text: String = String::from_utf8_lossy(bytes).chars().take(SHOWN).collect();
    format!("{text:?}")
}

/// Writes one event line numbered `id` and reads one answer line (at most [`HOOK_OUTPUT`] bytes). To a
/// worker never asked anything, the line is written but for its newline until the worker has read the rest
/// ([`settle`]): what it wrote before then is no answer, and goes to `dropped`.
async fn talk(
    worker: &mut Process,
    line: &[u8],
    id: u64,
    dropped: impl FnOnce(&[u8]),
) -> Result<Vec<u8>, Fault> {
    let (head, rest) = numbered(line, id);
    if worker.asked {
        send(worker, &head, rest).await?;
    } else {
        worker.asked = true;
        // The line ends with its newline, in `rest` or, for an event that is no object, in `head`.
        let (head, rest, newline) = match rest.split_last() {
            Some((_, body)) => (&head[..], body, &rest[body.len()..]),
            None => (&head[..head.len() - 1], rest, &head[head.len() - 1..]),
        };
        send(worker, head, rest).await?;
        let banner = settle(worker).await?;
        if !banner.is_empty() {
            if banner.last() != Some(&b'\n') {
                return Err(Fault::out_of_step(format!(
                    "it wrote {} as it started, not ending the line",
                    shown(&banner)
                )));
            }
            dropped(&banner);
        }
        send(worker, newline, &[]).await?;
    }
    let mut answer = Vec::new();
    let read = (&mut worker.stdout)
        .take(HOOK_OUTPUT as u64 + 1)
        .read_until(b'\n', &mut answer)
        .await;
    let died = |why: String| Err(Fault::Died(why));
    match read {
        Ok(0) => died("the worker exited without answering".into()),
        Ok(_) if answer.last() != Some(&b'\n') && answer.len() > HOOK_OUTPUT => died(format!(
            "the worker's answer is longer than {HOOK_OUTPUT} bytes"
        )),
        Ok(_) if answer.last() != Some(&b'\n') => {
            died("the worker exited in the middle of an answer".into())
        }
        Ok(_) => Ok(answer),
        Err(e) => died(format!("reading the worker's answer failed: {e}")),
    }
}

/// Writes `head` then `rest` to the worker, in one write (writev) as far as the pipe takes it.
async fn send(worker: &mut Process, head: &[u8], rest: &[u8]) -> Result<(), Fault> {
    let unread =
        |e: std::io::Error| Fault::Died(format!("the worker does not read its stdin: {e}"));
    let mut event = bytes::Buf::chain(head, rest);
    worker
        .stdin
        .write_all_buf(&mut event)
        .await
        .map_err(unread)?;
    worker.stdin.flush().await.map_err(unread)
}

/// Waits until a new worker has read all that was written to its stdin (its first event but the newline
/// that ends it), and returns what it wrote on stdout meanwhile: a banner, never an answer, since the
/// worker cannot have read the whole event yet.
///
/// Timing alone cannot tell a banner from an answer: one written just after the event was sent looks like
/// its answer, and a worker that does not echo `hookd_id` is taken at its word. But the worker writes its
/// banner before it reads its stdin, so once the pipe to it is empty (it read the event), the banner is
/// already in the pipe from it, and is read here; the newline, and so the event, comes after.
async fn settle(worker: &mut Process) -> Result<Vec<u8>, Fault> {
    let mut wrote = Vec::new();
    let mut pause = Duration::from_micros(100);
    loop {
        // In this order: once the worker has read its stdin, all it wrote before is waiting.
        let unread = unread_by_worker(&worker.stdin)
            .map_err(|e| Fault::Died(format!("the worker's stdin could not be looked at: {e}")))?;
        drain(worker, &mut wrote)?;
        if unread == 0 {
            return Ok(wrote);
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(5));
    }
}

/// How many bytes written to the worker's stdin it has not read yet (FIONREAD, which a pipe answers at
/// either end).
fn unread_by_worker(stdin: &ChildStdin) -> nix::Result<usize> {
    use std::os::fd::AsRawFd;
    let mut unread: nix::libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer, to a local that outlives the call; the
    // descriptor is the worker's stdin, open while `stdin` is borrowed.
    let done = unsafe { nix::libc::ioctl(stdin.as_raw_fd(), nix::libc::FIONREAD, &mut unread) };
    nix::errno::Errno::result(done)?;
    Ok(usize::try_from(unread).unwrap_or(0))
}

/// Reads all the worker's stdout holds right now into `wrote`, without waiting (its stdout is
/// non-blocking), up to [`HOOK_OUTPUT`] bytes.
fn drain(worker: &mut Process, wrote: &mut Vec<u8>) -> Result<(), Fault> {
    let mut chunk = [0u8; 4096];
    loop {
        match nix::unistd::read(worker.stdout.get_ref(), &mut chunk) {
            Ok(0) => return Err(Fault::Died("the worker exited without answering".into())),
            Ok(n) => wrote.extend_from_slice(&chunk[..n]),
            Err(nix::errno::Errno::EAGAIN) => return Ok(()),
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => {
                return Err(Fault::Died(format!(
                    "reading the worker's stdout failed: {e}"
                )));
            }
        }
        if wrote.len() > HOOK_OUTPUT {
            return Err(Fault::Died(format!(
                "the worker wrote more than {HOOK_OUTPUT} bytes before reading its first event"
            )));
        }
    }
}

/// The event line with `"hookd_id":N` as its first field, as a head to write before the rest of the
/// line. The event is not serialized again (it may be large, and the line is shared with the command
/// hooks, which do not get the field). A fire drops any `hookd_id` a client put at the top of its event,
/// so the daemon's is the only one.
fn numbered(line: &[u8], id: u64) -> (Vec<u8>, &[u8]) {
    match line.split_first() {
        Some((b'{', rest)) => {
            let comma = if rest.first() == Some(&b'}') { "" } else { "," };
            (format!("{{\"{ID_FIELD}\":{id}{comma}").into_bytes(), rest)
        }
        // Not an object (never, from a fire): numbered as an empty event rather than sent unnumbered.
        _ => (format!("{{\"{ID_FIELD}\":{id}}}\n").into_bytes(), &[]),
    }
}

/// An answer line, to be read as a hook's stdout after exit 0, and whether it echoed its event's
/// number. A JSON object is an answer (`{}` says nothing); a blank line or another event's `hookd_id` is
/// out of step; anything else is no answer (rather than pass for context to add, as text would from a
/// command hook).
fn read_answer(answer: Vec<u8>, id: u64, started: Instant) -> Result<(Ran, bool), Fault> {
    let text = String::from_utf8_lossy(&answer);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(Fault::out_of_step(
            "it wrote a blank line where an answer was due ({} says nothing)",
        ));
    }
    let Ok(object) = serde_json::from_str::<Map<String, Value>>(trimmed) else {
        return Err(Fault::Died(format!(
            "the worker answered something that is not a JSON object: {}",
            shown(trimmed.as_bytes())
        )));
    };
    let echoed = match object.get(ID_FIELD) {
        None => false,
        Some(echo) if echo.as_u64() == Some(id) => true,
        Some(echo) => {
            return Err(Fault::out_of_step(format!(
                "its answer carries {ID_FIELD} {} where {id} was asked",
                shown(echo.to_string().as_bytes())
            )));
        }
    };
    Ok((
        Ran {
            exit: Exit::Answered,
            stdout: answer,
            stderr: Vec::new(),
            truncated: false,
            elapsed: started.elapsed(),
        },
        echoed,
    ))
}

/// A worker's stderr, a line at a time (cut at [`STDERR_LINE`] bytes), into the daemon's log.
async fn log_stderr(hook: String, stderr: tokio::process::ChildStderr) {
    let mut stderr = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut stderr)
            .take(STDERR_LINE as u64)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                tracing::info!(hook = %hook, "worker says: {}", text.trim_end());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(answer: &str, id: u64) -> Result<(Exit, bool), Fault> {
        read_answer(answer.as_bytes().to_vec(), id, Instant::now()).map(|(ran, e)| (ran.exit, e))
    }

    #[test]
    fn an_answer_must_be_a_json_object() {
        assert_eq!(
            read("{\"refused\":\"no\"}\n", 1),
            Ok((Exit::Answered, false))
        );
        assert_eq!(read("{}\n", 1), Ok((Exit::Answered, false)));
        for garbage in ["hello\n", "{\"refused\": \n", "[1]\n"] {
            assert!(
                matches!(read(garbage, 1), Err(Fault::Died(_))),
                "{garbage:?}"
            );
        }
    }

    #[test]
    fn a_blank_line_is_out_of_step_not_nothing() {
        for blank in ["\n", "  \n", "\r\n"] {
            assert!(
                matches!(read(blank, 1), Err(Fault::OutOfStep(_))),
                "{blank:?}"
            );
        }
    }

    #[test]
    fn an_echoed_hookd_id_must_be_the_events() {
        assert_eq!(
            read("{\"hookd_id\":7,\"refused\":\"no\"}\n", 7),
            Ok((Exit::Answered, true))
        );
        for wrong in ["6", "8", "null", "\"7\"", "7.5", "-1"] {
            let answer = format!("{{\"hookd_id\":{wrong},\"refused\":\"no\"}}\n");
            let Err(Fault::OutOfStep(why)) = read(&answer, 7) else {
                panic!("{answer:?} was taken as the answer to event 7");
            };
            assert!(why.starts_with("out of step: "), "{why}");
        }
    }

    /// The numbered line as the worker reads it.
    fn numbered_event(line: &[u8], id: u64) -> Map<String, Value> {
        let (head, rest) = numbered(line, id);
        let whole = [head.as_slice(), rest].concat();
        assert_eq!(whole.last(), Some(&b'\n'), "{whole:?}");
        assert_eq!(whole.iter().filter(|&&b| b == b'\n').count(), 1);
        serde_json::from_slice(&whole).expect("the numbered line is a JSON object")
    }

    #[test]
    fn the_event_line_is_numbered_without_being_serialized_again() {
        let line = b"{\"hook_event_name\":\"PreToolUse\",\"tool_input\":{\"command\":\"ls\"}}\n";
        let (head, rest) = numbered(line, 42);
        assert_eq!(head, b"{\"hookd_id\":42,");
        assert_eq!(rest.as_ptr(), line[1..].as_ptr(), "the event was copied");
        let event = numbered_event(line, 42);
        assert_eq!(event["hookd_id"], 42);
        assert_eq!(event["tool_input"]["command"], "ls");
        assert_eq!(numbered_event(b"{}\n", 1)["hookd_id"], 1);
    }

    #[test]
    fn an_event_is_numbered_first_and_keeps_its_nested_fields() {
        // A fire drops a top-level `hookd_id` of the client's (fire.rs); one nested deeper stays.
        let line = b"{\"a\":\"\\\"hookd_id\\\":\",\"x\":{\"hookd_id\":3}}\n";
        let event = numbered_event(line, 9);
        assert_eq!(event["hookd_id"], 9);
        assert_eq!(event["x"]["hookd_id"], 3);
        assert_eq!(event["a"], "\"hookd_id\":");
        // A value that merely contains the key, escaped, is not mistaken for it.
        let (head, _) = numbered(b"{\"a\":\"\\\"hookd_id\\\":1\"}\n", 2);
        assert_eq!(head, b"{\"hookd_id\":2,");
    }

    #[test]
    fn out_of_step_restarts_at_once_then_backs_off() {
        let out = Fault::OutOfStep(String::new());
        let died = Fault::Died(String::new());
        assert_eq!(out.pause(1), Duration::ZERO);
        assert_eq!(out.pause(2), FIRST_BACKOFF);
        assert_eq!(out.pause(3), FIRST_BACKOFF * 2);
        assert_eq!(died.pause(1), FIRST_BACKOFF);
        assert_eq!(died.pause(40), MAX_BACKOFF);
        assert_eq!(Fault::Late(String::new()).pause(5), Duration::ZERO);
    }
}
