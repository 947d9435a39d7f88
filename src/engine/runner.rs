//! Runs one hook: spawn it in a process group of its own, feed it the event, capture what it prints within
//! bounds, stop it at its timeout, and leave nothing of it behind. The result is what the hook did; what
//! that *means* is the business of [`crate::engine::verdict`].

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};

use crate::engine::spawn::{self, HookProcess, STRIPPED_VARS};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::engine::reading::Exit;
use crate::engine::reaper::Reaper;
use crate::limits::{HOOK_OUTPUT, KILL_GRACE, PIPE_GRACE};
use crate::settings::{Hook, Program};
use crate::sync::lock;

/// How long a hook's output is left in its pipes before the daemon watches them: a hook that exits
/// sooner (most do) is read once, at its exit; one that prints more than a pipe holds (64 KiB) in this
/// time waits for the rest of it, and no longer.
const OUTPUT_UNWATCHED: Duration = Duration::from_millis(10);

/// The most read from a pipe at a hook's exit before the rest is left to the runtime: more than any
/// pipe holds (1 MiB for a user who enlarges it), so a writer still at it is all that reaches it.
const DRAIN_AT_ONCE: usize = 2 * 1024 * 1024;

/// How much is read from a pipe at once, at most.
const READ_CHUNK: usize = 64 * 1024;

/// The first read's room. Most hooks print a line or nothing: allocating (and freeing) 64 KiB per pipe
/// per hook cost more than the rest of the runner (glibc gives large frees back to the system).
const FIRST_READ: usize = 4 * 1024;

/// What every hook of one fire is given, computed once per fire.
#[derive(Debug, Clone)]
pub struct Input {
    /// The event as one JSON line, `\n` included, with `hook_event_name` set.
    pub event_line: Arc<[u8]>,
    pub moment: String,
    pub agent: Option<String>,
    /// `HOOKD_SESSION`: the event's `session_id`, or empty.
    pub session: String,
    /// `CLAUDE_PROJECT_DIR`: the event's `cwd`, when it has one.
    pub project_dir: Option<String>,
    /// `HOOKD_CONFIG_DIR`.
    pub config_dir: PathBuf,
    /// Where hooks run: the event's `cwd` when it is an existing folder, else the settings' folder.
    pub working_dir: PathBuf,
    /// The longest any hook of this fire may run, when its agent waits less at this moment than hooks'
    /// timeouts (Codex waits 3 s at SessionEnd): the agent's limit less
    /// [`HOOK_LIMIT_MARGIN`](crate::limits::HOOK_LIMIT_MARGIN), so that the verdict (a faster hook's
    /// refusal among it) is heard rather than lost with the relay giving up.
    pub time_cap: Option<Duration>,
}

/// What the daemon shares between all runs: the place cleanups are tracked.
#[derive(Debug, Clone, Default)]
pub struct Runner {
    /// The hook processes started and not yet reaped, told apart from escapees (see [`crate::engine::reaper`]).
    pub reaper: Arc<Reaper>,
    /// Cleanups that outlive a fire (SIGKILL one second after SIGTERM): tracked so that shutdown waits for
    /// them and leaves no process behind.
    pub cleanups: TaskTracker,
}

/// Counts a run in progress, with the reaper (which sweeps often while runs are in progress), until
/// dropped. Starting a process blocks the calling thread until the child has exec'd (a vfork): alone, a
/// hook is spawned right on the runtime's thread (fastest); beside others, on a blocking thread, so that
/// many hooks start in parallel rather than queue behind one thread.
struct Running {
    reaper: Arc<Reaper>,
    /// Whether no other run was in progress when this one started.
    alone: bool,
}

impl Running {
    fn start(reaper: &Arc<Reaper>) -> Running {
        Running {
            reaper: reaper.clone(),
            alone: reaper.run_started(),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.reaper.run_ended();
    }
}

/// What a hook did.
#[derive(Debug)]
pub struct Ran {
    pub exit: Exit,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Whether stdout or stderr went past [`HOOK_OUTPUT`].
    pub truncated: bool,
    /// From its start (after waiting for a process slot) to its outcome.
    pub elapsed: Duration,
}

impl Runner {
    /// Runs `hook` on `input` once a permit of `slots` (`max_processes`, daemon-wide) is free; `cancel`
    /// ends it early (the client left, the daemon is stopping).
    pub async fn run(
        &self,
        hook: &Hook,
        timeout: Duration,
        input: &Input,
        slots: &Arc<Semaphore>,
        cancel: &CancellationToken,
    ) -> Ran {
        let permit = tokio::select! {
            permit = slots.clone().acquire_owned() => permit.ok(),
            _ = cancel.cancelled() => return Ran::without_process(Exit::Cancelled(ABANDONED), Instant::now()),
        };
        let started = Instant::now();
        let running = Running::start(&self.reaper);
        let spawned = match prepared(hook, input) {
            Err(e) => Err(e),
            Ok(prepared) if running.alone => started_in_group(prepared, &self.reaper),
            Ok(prepared) => {
                let reaper = self.reaper.clone();
                let spawning = reaper.spawning();
                // The group is made on the blocking thread, with the process: if this run is dropped
                // while that thread works (its client gone), the result is dropped with it, and the
                // group's drop kills the hook and leaves it to the sweep rather than running unwatched
                // and never reaped.
                let job = Arc::new(std::sync::Mutex::new(Some(prepared)));
                let (for_thread, thread_reaper) = (job.clone(), reaper.clone());
                let on_thread = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    tokio::task::spawn_blocking(move || match lock(&for_thread).take() {
                        Some(prepared) => started_in_group(prepared, &thread_reaper),
                        None => Err(std::io::Error::other("the spawn was taken back")),
                    })
                }));
                let started = match on_thread {
                    Ok(handle) => handle
                        .await
                        .unwrap_or_else(|e| Err(std::io::Error::other(e))),
                    // Tokio panics when it has no thread and cannot start one (the user's process
                    // limit reached): the hook is started here instead, or fails to start, rather
                    // than the whole fire ending in an internal error.
                    Err(_) => match lock(&job).take() {
                        Some(prepared) => started_in_group(prepared, &reaper),
                        None => Err(std::io::Error::other("no thread to start it on")),
                    },
                };
                drop(spawning);
                started
            }
        };
        let (mut child, group) = match spawned {
            Ok((process, group)) => (process.into_process(), group),
            Err(e) => {
                return Ran::without_process(
                    Exit::CouldNotStart(describe_spawn_error(hook, &e)),
                    started,
                );
            }
        };

        let (stdin, mut out_pipe, mut err_pipe) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (mut stdout, mut stderr) = (Capture::default(), Capture::default());
        let event = input.event_line.clone();
        let mut feeding = Box::pin(feed(stdin, &event));
        let mut fed = false;
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        // First the outputs are left in their pipes, unwatched: most hooks exit before they print a
        // pipe's worth, and then all they printed is read at once (see `HookProcess`).
        let unwatched = tokio::time::sleep(OUTPUT_UNWATCHED);
        tokio::pin!(unwatched);
        let first = loop {
            tokio::select! {
                _ = &mut feeding, if !fed => fed = true,
                status = child.wait() => break Some(End::Exited(status)),
                _ = &mut unwatched => break None,
                _ = &mut deadline => break Some(End::Stopped(Exit::TimedOut(timeout))),
                _ = cancel.cancelled() => break Some(End::Stopped(Exit::Cancelled(ABANDONED))),
            }
        };
        let end = match first {
            Some(End::Exited(status)) => {
                // Whatever is in the pipes now is all the hook printed, unless a process it left
                // behind holds one open: that one is watched for its end, a grace period at most.
                let out_open = out_pipe.take().filter(|pipe| !stdout.drain(pipe));
                let err_open = err_pipe.take().filter(|pipe| !stderr.drain(pipe));
                if !fed || out_open.is_some() || err_open.is_some() {
                    // A pipe the runtime cannot watch is read no further: what it held is kept, and
                    // marked cut, so that a JSON answer in it fails closed rather than reading as
                    // whole (a refusal already read on the other pipe is still heard).
                    let out = watch(out_open).unwrap_or_else(|e| stdout.given_up(hook, &e));
                    let err = watch(err_open).unwrap_or_else(|e| stderr.given_up(hook, &e));
                    let rest =
                        rest_of_io(&mut feeding, fed, (&mut stdout, out), (&mut stderr, err));
                    let _ = tokio::time::timeout(PIPE_GRACE, rest).await;
                }
                End::Exited(status)
            }
            Some(stopped) => stopped,
            None => match (watch(out_pipe.take()), watch(err_pipe.take())) {
                (Ok(out), Ok(err)) => {
                    let mut io = Box::pin(rest_of_io(
                        &mut feeding,
                        fed,
                        (&mut stdout, out),
                        (&mut stderr, err),
                    ));
                    let mut io_done = false;
                    let end = loop {
                        tokio::select! {
                            _ = &mut io, if !io_done => io_done = true,
                            status = child.wait() => break End::Exited(status),
                            _ = &mut deadline => break End::Stopped(Exit::TimedOut(timeout)),
                            _ = cancel.cancelled() => break End::Stopped(Exit::Cancelled(ABANDONED)),
                        }
                    };
                    if matches!(end, End::Exited(_)) && !io_done {
                        let _ = tokio::time::timeout(PIPE_GRACE, &mut io).await;
                    }
                    end
                }
                (Err(e), _) | (_, Err(e)) => End::Stopped(Exit::Broken(unreadable(&e))),
            },
        };
        drop(feeding);
        let exit = match end {
            End::Exited(status) => {
                let exit = match status {
                    Ok(status) => match (
                        status.code(),
                        std::os::unix::process::ExitStatusExt::signal(&status),
                    ) {
                        (Some(code), _) => Exit::Code(code),
                        (None, Some(signal)) => Exit::Signal(signal),
                        (None, None) => Exit::Code(-1),
                    },
                    Err(e) => Exit::CouldNotStart(format!("waiting for it failed: {e}")),
                };
                // The leader is gone; whatever it left in its group goes too.
                group.finish(&self.cleanups);
                drop(permit);
                exit
            }
            End::Stopped(exit) => {
                group.stop(Leader::Hook(child), permit, &self.cleanups);
                exit
            }
        };
        Ran {
            exit,
            stdout: stdout.bytes,
            stderr: stderr.bytes,
            truncated: stdout.truncated || stderr.truncated,
            elapsed: started.elapsed(),
        }
    }
}

impl Ran {
    /// A run that produced no output: it never started, was cut short, or was a worker's non-answer.
    pub(crate) fn without_process(exit: Exit, started: Instant) -> Ran {
        Ran {
            exit,
            stdout: Vec::new(),
            stderr: Vec::new(),
            truncated: false,
            elapsed: started.elapsed(),
        }
    }
}

enum End {
    Exited(std::io::Result<std::process::ExitStatus>),
    Stopped(Exit),
}

/// Why a run was cut short by its fire's cancellation.
const ABANDONED: &str = "the fire was abandoned (its client left, or the daemon is stopping)";

/// A hook's process for this fire, ready to start: see [`hook_vars`] for what it is given.
fn prepared(hook: &Hook, input: &Input) -> std::io::Result<spawn::Prepared> {
    let mut event_vars = vec![
        ("HOOKD_MOMENT", OsStr::new(&input.moment)),
        (
            "HOOKD_AGENT",
            OsStr::new(input.agent.as_deref().unwrap_or("")),
        ),
        ("HOOKD_SESSION", OsStr::new(&input.session)),
    ];
    if let Some(project_dir) = &input.project_dir {
        event_vars.push(("CLAUDE_PROJECT_DIR", OsStr::new(project_dir)));
    }
    let (program, args) = program_and_args(hook);
    spawn::prepare(&spawn::Spec {
        program,
        args: &args,
        vars: &hook_vars(
            hook,
            hook.dir.as_deref().unwrap_or(&input.config_dir),
            event_vars,
        ),
        working_dir: &input.working_dir,
    })
}

/// Starts a prepared hook and makes its group at once: from then on, dropping the pair stops the process.
fn started_in_group(
    prepared: spawn::Prepared,
    reaper: &Arc<Reaper>,
) -> std::io::Result<(spawn::Started, Group)> {
    let started = prepared.start()?;
    let group = Group::led_by(started.id(), reaper);
    Ok((started, group))
}

/// The program a hook runs and the words after it.
fn program_and_args(hook: &Hook) -> (&str, Vec<&str>) {
    match &hook.program {
        Program::Shell { shell, command } => (shell, vec!["-c", command]),
        Program::Argv(argv) | Program::Worker { argv, .. } => {
            (&argv[0], argv[1..].iter().map(String::as_str).collect())
        }
        // Judged in the daemon's process (engine::fire), never started: a name no program has, so that
        // a mistake here fails the hook (and its on_failure decides) rather than running anything.
        Program::Guard(_) => ("hookd:guard", Vec::new()),
        // Asked of its client over the socket (engine::live), never started.
        Program::Live { .. } => ("hookd:live", Vec::new()),
    }
}

/// What every hook process is given on top of the daemon's environment (less systemd's variables), in
/// order, a later one of a name winning: `HOOKD_HOOK`, `HOOKD_CONFIG_DIR`, `vars`, the hook's own `env`.
fn hook_vars<'a>(
    hook: &'a Hook,
    config_dir: &'a Path,
    vars: impl IntoIterator<Item = (&'a str, &'a OsStr)>,
) -> Vec<(&'a str, &'a OsStr)> {
    let mut all = vec![
        ("HOOKD_HOOK", OsStr::new(&hook.name)),
        ("HOOKD_CONFIG_DIR", config_dir.as_os_str()),
    ];
    all.extend(vars);
    all.extend(hook.env.iter().map(|(k, v)| (k.as_str(), OsStr::new(v))));
    all
}

/// A worker's process, as a hook's is started ([`prepared`]), through tokio's `Command`: a worker starts
/// once and lives long, so the cost of `Command` does not matter, and its process is tokio's to reap.
pub(crate) fn hook_command(hook: &Hook, config_dir: &Path, working_dir: &Path) -> Command {
    let (program, args) = program_and_args(hook);
    let mut command = Command::new(program);
    command.args(args);
    for var in STRIPPED_VARS {
        command.env_remove(var);
    }
    command.envs(hook_vars(hook, config_dir, []));
    command
        .current_dir(working_dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // A process group of its own, so the whole group can be signalled. Not `setsid` in a `pre_exec`: that
    // forces fork instead of posix_spawn, much slower; the daemon gives up its controlling terminal at
    // start-up instead (`daemon::detach_from_terminal`), so workers have none either.
    command.process_group(0);
    command
}

/// Why a hook's process could not be started, naming the program.
pub(crate) fn describe_spawn_error(hook: &Hook, error: &std::io::Error) -> String {
    let (program, _) = program_and_args(hook);
    // The system's words are lowercased; hookd's own (which may name a file) are kept as they are.
    let text = match error.raw_os_error() {
        Some(_) => error.to_string().to_lowercase(),
        None => error.to_string(),
    };
    let text = text.split(" (os error").next().unwrap_or(&text);
    format!("\"{program}\": {text}")
}

/// Writes the event and closes stdin. A hook that does not read its stdin is normal: EPIPE is no error.
async fn feed(stdin: Option<spawn::Stdin>, event: &[u8]) {
    if let Some(stdin) = stdin {
        let _ = stdin.feed(event).await;
    }
}

/// What is left of a hook's I/O: the event's feed unless it is done (a finished future is not polled
/// again), and each output pipe still open read to its end.
async fn rest_of_io(
    feeding: &mut std::pin::Pin<Box<impl Future<Output = ()>>>,
    fed: bool,
    (stdout, out): (&mut Capture, Option<spawn::OutputPipe>),
    (stderr, err): (&mut Capture, Option<spawn::OutputPipe>),
) {
    let feed_rest = async {
        if !fed {
            feeding.await;
        }
    };
    tokio::join!(feed_rest, stdout.fill(out), stderr.fill(err));
}

/// An output pipe still open, made asynchronous to be read to its end.
fn watch(pipe: Option<OwnedFd>) -> std::io::Result<Option<spawn::OutputPipe>> {
    pipe.map(spawn::watched).transpose()
}

fn unreadable(error: &std::io::Error) -> String {
    format!("its output could not be watched: {error}")
}

/// One output pipe, read to its end, kept up to [`HOOK_OUTPUT`].
#[derive(Default)]
struct Capture {
    bytes: Vec<u8>,
    truncated: bool,
}

impl Capture {
    /// Reads what the pipe holds now, without waiting: whether its end was reached (every writer gone,
    /// or the pipe broken; then it is read no more). At most [`DRAIN_AT_ONCE`]: a process the hook left
    /// behind that keeps writing cannot hold the daemon's thread here; the rest is read asynchronously.
    fn drain(&mut self, pipe: &OwnedFd) -> bool {
        let mut scratch = [0u8; 4096];
        let mut budget = DRAIN_AT_ONCE;
        loop {
            let room = HOOK_OUTPUT - self.bytes.len();
            let read = if room > 0 {
                let want = room.min(self.bytes.len().clamp(FIRST_READ, READ_CHUNK));
                let kept = self.bytes.len();
                self.bytes.resize(kept + want, 0);
                let read = nix::unistd::read(pipe, &mut self.bytes[kept..]);
                self.bytes.truncate(kept + read.unwrap_or(0));
                read
            } else {
                let read = nix::unistd::read(pipe, &mut scratch);
                self.truncated |= matches!(read, Ok(n) if n > 0);
                read
            };
            match read {
                Ok(0) => return true,
                Ok(n) if n >= budget => return false,
                Ok(n) => budget -= n,
                Err(nix::errno::Errno::EINTR) => {}
                Err(nix::errno::Errno::EAGAIN) => return false,
                Err(_) => return true,
            }
        }
    }

    /// The pipe could not be watched: read no further, and marked cut.
    fn given_up(&mut self, hook: &Hook, error: &std::io::Error) -> Option<spawn::OutputPipe> {
        tracing::warn!(hook = %hook.name, "{}; what it printed after it exited is not read", unreadable(error));
        self.truncated = true;
        None
    }

    async fn fill(&mut self, pipe: Option<impl AsyncRead + Unpin>) {
        let Some(mut pipe) = pipe else { return };
        // Read straight into the kept bytes while there is room (most hooks print little: no big buffer
        // to allocate and zero per hook), then into a scratch buffer whose contents are dropped.
        let mut scratch: Vec<u8> = Vec::new();
        loop {
            let room = HOOK_OUTPUT - self.bytes.len();
            let read = if room > 0 {
                // Room doubles with what the hook prints, up to a chunk per read.
                let want = room.min(self.bytes.len().clamp(FIRST_READ, READ_CHUNK));
                self.bytes.reserve(want);
                let mut limited = (&mut pipe).take(want as u64);
                limited.read_buf(&mut self.bytes).await
            } else {
                scratch.clear();
                scratch.reserve(READ_CHUNK);
                let read = pipe.read_buf(&mut scratch).await;
                self.truncated |= matches!(read, Ok(n) if n > 0);
                read
            };
            if matches!(read, Ok(0) | Err(_)) {
                return;
            }
        }
    }
}

/// A hook's process group. Armed until the group has been dealt with, so that
/// a run dropped half-way (its fire abandoned) still kills what it started.
pub(crate) struct Group {
    pgid: Pid,
    armed: bool,
    /// Tracks the leader from its start until it is reaped.
    reaper: Arc<Reaper>,
}

impl Group {
    /// The group led by the process `pid` (started with `process_group(0)`), just started.
    pub(crate) fn led_by(pid: u32, reaper: &Arc<Reaper>) -> Group {
        reaper.track(pid);
        Group {
            pgid: Pid::from_raw(pid as i32),
            armed: true,
            reaper: reaper.clone(),
        }
    }

    fn leader(&self) -> u32 {
        self.pgid.as_raw() as u32
    }

    /// After the leader exited: SIGTERM to what is left of the group, SIGKILL a second later.
    fn finish(mut self, cleanups: &TaskTracker) {
        self.armed = false;
        self.reaper.untrack(self.leader()); // its run has reaped it
        if killpg(self.pgid, Signal::SIGTERM).is_ok() {
            let (pgid, reaper) = (self.pgid, self.reaper.clone());
            cleanups.spawn(async move {
                tokio::time::sleep(KILL_GRACE).await;
                let _ = killpg(pgid, Signal::SIGKILL);
                // The group's members were the leader's children: dead, they are the daemon's zombies
                // now, and the run that would have had them swept is over.
                reaper.look_soon();
            });
        }
    }

    /// The leader still runs (timeout, cancel): SIGTERM to the group, SIGKILL a second later or as soon as
    /// the leader is gone, then reap the leader. The verdict does not wait for this.
    pub(crate) fn stop(
        mut self,
        mut leader: Leader,
        permit: Option<tokio::sync::OwnedSemaphorePermit>,
        cleanups: &TaskTracker,
    ) {
        self.armed = false;
        let (pgid, pid, reaper) = (self.pgid, self.leader(), self.reaper.clone());
        let _ = killpg(pgid, Signal::SIGTERM);
        cleanups.spawn(async move {
            let _ = tokio::time::timeout(KILL_GRACE, leader.wait()).await;
            let _ = killpg(pgid, Signal::SIGKILL);
            leader.wait().await;
            reaper.untrack(pid);
            // What the group's members left, re-parented to the daemon once the leader died.
            reaper.look_soon();
            drop(permit);
        });
    }
}

/// A group's leader process: a hook's, or a worker's (started by tokio).
pub(crate) enum Leader {
    Hook(HookProcess),
    Worker(Child),
}

impl Leader {
    /// Until it has exited and is reaped.
    async fn wait(&mut self) {
        let _ = match self {
            Leader::Hook(process) => process.wait().await,
            Leader::Worker(child) => child.wait().await,
        };
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.armed {
            // The run was dropped mid-way: nothing will wait for a grace period, so kill outright. The
            // leader is reaped by the sweep once untracked (a worker's also by tokio's orphan queue).
            let _ = killpg(self.pgid, Signal::SIGKILL);
            self.reaper.untrack(self.leader());
            self.reaper.look_soon();
        }
    }
}

impl Ran {
    /// A run ended because its fire was abandoned.
    pub fn cancelled() -> Ran {
        Ran::without_process(Exit::Cancelled(ABANDONED), Instant::now())
    }

    /// A run whose result was lost (its task panicked, its workers are missing): failed, saying why.
    pub fn lost(why: &str) -> Ran {
        Ran::without_process(Exit::Broken(why.to_string()), Instant::now())
    }
}
