//! Worker hooks: a hook kept running instead of started per event, so a fire pays no process start.
//!
//! The protocol: the daemon writes one event per line (the same JSON a hook gets on stdin) to the worker's
//! stdin and reads one answer per line from its stdout, a JSON object read by the rules of contract
//! section 7 (`{}` says nothing). Its stderr goes to the daemon's log with the hook's name.
//!
//! A worker hook has `workers` processes (slots), each driven by a task of its own that takes requests
//! from the hook's one queue: the first idle slot answers. A slot whose worker answers late is killed (by
//! group) and started again at once; one whose worker dies is started again after a pause that doubles
//! with each death in a row (100 ms up to 30 s), so a worker that keeps dying is not restarted in a tight
//! loop; `status` shows it as failing, with its last error.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::reaper::Reaper;
use crate::runner::{Group, OUTPUT_CAP, Ran, Runner, describe_spawn_error, hook_command};
use crate::settings::{Hook, Program};
use crate::state::lock;
use crate::verdict::Exit;

/// Fires waiting for a worker of one hook, beyond which a fire fails at once rather than queue.
const QUEUE: usize = 1024;

/// The first pause before restarting a worker that died; it doubles with each death in a row.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);

/// The longest pause between restarts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The longest line of a worker's stderr put in the log as one line.
const STDERR_LINE: usize = 4096;

/// Deaths in a row from which a worker is reported as failing.
const FAILING_AFTER: u32 = 3;

/// A worker hook's processes and the queue of fires waiting for them.
#[derive(Debug)]
pub struct Pool {
    /// What the pool was started from: a reload keeps the pool when this is unchanged.
    pub identity: String,
    queue: mpsc::Sender<Request>,
    slots: Arc<Vec<Mutex<SlotStatus>>>,
    stop: CancellationToken,
}

/// One fire's question to a worker.
struct Request {
    line: Arc<[u8]>,
    timeout: Duration,
    answer: oneshot::Sender<Ran>,
}

/// What `status` shows of one worker process.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct SlotStatus {
    /// `starting`, `running`, `restarting` (after a death, waiting its pause) or `failing` (dying again
    /// and again), `stopped`.
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    pub restarts: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// What a slot needs to start its worker.
#[derive(Debug)]
struct Spec {
    hook: Hook,
    config_dir: PathBuf,
}

impl Pool {
    /// Starts the worker processes of `hook` (a [`Program::Worker`]) now.
    pub fn start(hook: &Hook, config_dir: PathBuf, runner: &Runner) -> Arc<Pool> {
        let tasks = &runner.cleanups;
        let count = match &hook.program {
            Program::Worker { count, .. } => *count,
            _ => 1,
        };
        let (queue, requests) = mpsc::channel(QUEUE);
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
        let stop = CancellationToken::new();
        let spec = Arc::new(Spec {
            hook: hook.clone(),
            config_dir,
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
        if self
            .queue
            .try_send(Request {
                line,
                timeout,
                answer,
            })
            .is_err()
        {
            return broken(started, "every worker is busy and the queue is full");
        }
        // The slot bounds the wait for the answer; this bounds the wait for a free slot as well.
        match tokio::time::timeout(timeout * 2 + Duration::from_secs(1), answered).await {
            Ok(Ok(ran)) => ran,
            Ok(Err(_)) => broken(started, "the worker stopped before answering"),
            Err(_) => Ran::without_process(Exit::TimedOut(timeout), started),
        }
    }

    /// Stops every worker of the pool, by group, once it has answered what it is answering.
    pub fn stop(&self) {
        self.stop.cancel();
    }

    pub fn status(&self) -> Vec<SlotStatus> {
        self.slots.iter().map(|slot| lock(slot).clone()).collect()
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

/// A running worker.
struct Process {
    child: Child,
    group: Option<Group>,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Slot {
    async fn run(self) {
        let mut deaths_in_a_row = 0u32;
        let mut starts = 0u64;
        let mut process: Option<Process> = None;
        loop {
            let Some(worker) = process.as_mut() else {
                if deaths_in_a_row > 0 {
                    let pause = FIRST_BACKOFF
                        .saturating_mul(1 << (deaths_in_a_row - 1).min(10))
                        .min(MAX_BACKOFF);
                    tokio::select! {
                        _ = tokio::time::sleep(pause) => {}
                        _ = self.stop.cancelled() => break,
                    }
                }
                match self.spawn() {
                    Ok(started) => {
                        if starts > 0 {
                            self.update(|slot| slot.restarts += 1);
                        }
                        starts += 1;
                        process = Some(started);
                    }
                    Err(why) => {
                        deaths_in_a_row += 1;
                        self.record_death(&why, deaths_in_a_row);
                    }
                }
                continue;
            };
            // Idle: wait for a request, or notice the worker dying while it waits.
            let request = tokio::select! {
                request = async { self.requests.lock().await.recv().await } => request,
                status = worker.child.wait() => {
                    let why = match status {
                        Ok(status) => format!("the worker exited while idle ({status})"),
                        Err(e) => format!("the worker could not be waited for: {e}"),
                    };
                    deaths_in_a_row += 1;
                    self.record_death(&why, deaths_in_a_row);
                    if let Some(dead) = process.take() {
                        self.retire(dead);
                    }
                    continue;
                }
                _ = self.stop.cancelled() => break,
            };
            let Some(request) = request else { break };
            let started = Instant::now();
            let outcome = tokio::time::timeout(request.timeout, ask(worker, &request.line)).await;
            let ran = match outcome {
                Ok(Ok(answer)) => match read_answer(answer, started) {
                    Ok(ran) => {
                        deaths_in_a_row = 0;
                        ran
                    }
                    Err(why) => {
                        // Not an answer: the worker is out of step or confused; its next lines cannot be
                        // trusted to answer the next events.
                        deaths_in_a_row += 1;
                        self.record_death(&why, deaths_in_a_row);
                        if let Some(confused) = process.take() {
                            self.retire(confused);
                        }
                        broken(started, &why)
                    }
                },
                Ok(Err(why)) => {
                    // It died mid-answer, or broke the protocol: its next answer cannot be trusted.
                    deaths_in_a_row += 1;
                    self.record_death(&why, deaths_in_a_row);
                    if let Some(dead) = process.take() {
                        self.retire(dead);
                    }
                    broken(started, &why)
                }
                Err(_) => {
                    // Late: killed and started again at once (a slow answer is not a crash).
                    let why = format!(
                        "no answer within {}s; restarting the worker",
                        request.timeout.as_secs_f64()
                    );
                    tracing::warn!(hook = %self.spec.hook.name, "{why}");
                    self.update(|slot| slot.last_error = Some(why.clone()));
                    if let Some(late) = process.take() {
                        self.retire(late);
                    }
                    Ran::without_process(Exit::TimedOut(request.timeout), started)
                }
            };
            let _ = request.answer.send(ran);
        }
        if let Some(worker) = process.take() {
            self.retire(worker);
        }
        self.update(|slot| {
            slot.state = "stopped";
            slot.pid = None;
        });
    }

    fn spawn(&self) -> Result<Process, String> {
        let hook = &self.spec.hook;
        let working_dir = if self.spec.config_dir.is_dir() {
            self.spec.config_dir.clone()
        } else {
            PathBuf::from("/")
        };
        let mut child = hook_command(hook, &self.spec.config_dir, &working_dir, [])
            .spawn()
            .map_err(|e| format!("could not start: {}", describe_spawn_error(hook, &e)))?;
        let pid = child.id().ok_or("the worker vanished as it started")?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err("the worker's pipes could not be set up".into());
        };
        self.tasks.spawn(log_stderr(hook.name.clone(), stderr));
        self.update(|slot| {
            slot.state = "running";
            slot.pid = Some(pid);
        });
        tracing::info!(hook = %hook.name, pid, slot = self.index, "worker started");
        Ok(Process {
            child,
            group: Some(Group::led_by(pid, &self.reaper)),
            stdin,
            stdout: BufReader::new(stdout),
        })
    }

    fn record_death(&self, why: &str, deaths_in_a_row: u32) {
        let failing = deaths_in_a_row >= FAILING_AFTER;
        if failing {
            tracing::error!(hook = %self.spec.hook.name, deaths_in_a_row, "worker keeps failing: {why}");
        } else {
            tracing::warn!(hook = %self.spec.hook.name, "worker failed: {why}");
        }
        self.update(|slot| {
            slot.state = if failing { "failing" } else { "restarting" };
            slot.pid = None;
            slot.last_error = Some(why.to_string());
        });
    }

    /// Stops a worker by group (SIGTERM, SIGKILL a second later) and reaps it, in the background.
    fn retire(&self, mut worker: Process) {
        if let Some(group) = worker.group.take() {
            group.stop(worker.child, None, &self.tasks);
        }
    }

    fn update(&self, change: impl FnOnce(&mut SlotStatus)) {
        change(&mut lock(&self.slots[self.index]));
    }
}

/// Writes one event line and reads one answer line (at most [`OUTPUT_CAP`] bytes).
async fn ask(worker: &mut Process, line: &[u8]) -> Result<Vec<u8>, String> {
    worker
        .stdin
        .write_all(line)
        .await
        .map_err(|e| format!("the worker does not read its stdin: {e}"))?;
    worker
        .stdin
        .flush()
        .await
        .map_err(|e| format!("the worker does not read its stdin: {e}"))?;
    let mut answer = Vec::new();
    let read = (&mut worker.stdout)
        .take(OUTPUT_CAP as u64 + 1)
        .read_until(b'\n', &mut answer)
        .await;
    match read {
        Ok(0) => Err("the worker exited without answering".into()),
        Ok(_) if answer.last() != Some(&b'\n') && answer.len() > OUTPUT_CAP => Err(format!(
            "the worker's answer is longer than {OUTPUT_CAP} bytes"
        )),
        Ok(_) if answer.last() != Some(&b'\n') => {
            Err("the worker exited in the middle of an answer".into())
        }
        Ok(_) => Ok(answer),
        Err(e) => Err(format!("reading the worker's answer failed: {e}")),
    }
}

/// An answer line, to be read as a hook's stdout after exit 0: a JSON object, or nothing at all. Anything
/// else is no answer (rather than pass for context to add, as text would from a command hook).
fn read_answer(answer: Vec<u8>, started: Instant) -> Result<Ran, String> {
    let text = String::from_utf8_lossy(&answer);
    let trimmed = text.trim();
    let is_object =
        || serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(trimmed).is_ok();
    if !trimmed.is_empty() && !is_object() {
        let shown: String = trimmed.chars().take(80).collect();
        return Err(format!(
            "the worker answered something that is not a JSON object: {shown:?}"
        ));
    }
    Ok(Ran {
        exit: Exit::Answered,
        stdout: answer,
        stderr: Vec::new(),
        truncated: false,
        elapsed: started.elapsed(),
    })
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

    #[test]
    fn an_answer_must_be_a_json_object_or_nothing() {
        let now = Instant::now();
        assert_eq!(
            read_answer(b"{\"refused\":\"no\"}\n".to_vec(), now)
                .unwrap()
                .exit,
            Exit::Answered
        );
        assert_eq!(
            read_answer(b"\n".to_vec(), now).unwrap().exit,
            Exit::Answered
        );
        assert!(read_answer(b"hello\n".to_vec(), now).is_err());
        assert!(read_answer(b"{\"refused\": \n".to_vec(), now).is_err());
        assert!(read_answer(b"[1]\n".to_vec(), now).is_err());
    }
}
