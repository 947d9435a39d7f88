//! Starts a hook's process: with three pipes, in a process group of its own, in its working folder, with
//! an environment assembled from pieces made once; by hand ([`super::clone_exec`]) where that can be had,
//! else by `posix_spawn`.
//!
//! Why not `std::process::Command`: a `Command` given any variable copies the daemon's whole environment
//! into a sorted map and every entry into a new C string, on every spawn. Measured, that was 35 to 40 µs of
//! the daemon's CPU per hook, about a tenth of what spawning `/bin/true` costs here, the largest part of
//! what a fire with one hook cost beyond spawning it directly (BENCHMARKS.md). Here the daemon's own
//! variables are turned into C strings once; a spawn makes only the few it sets (`HOOKD_*`, the hook's
//! `env`) and an array of pointers.
//!
//! The process is started as `Command` starts it: a vfork (the caller's thread waits until the child has
//! exec'd), a process group of its own, an empty signal mask, every handler and SIGPIPE (ignored by Rust
//! programs) put back to the default (SIGTTIN and SIGTTOU stay ignored, as docs/settings.md says), a
//! bare program name looked up in `PATH` (in the hook's own here, before the spawn, when its `env` sets
//! one; else in the daemon's, place by place, as `execvp` looks), and a file that is neither a binary
//! nor a `#!` script run by `/bin/sh`, as `execvp` runs it (but never a `#!` script whose interpreter
//! could not run: that fails to start, naming the interpreter). Its exit is watched through a pidfd; the
//! daemon's reaper reaps a process whose handle was dropped unwaited (see [`crate::engine::reaper`]).

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::OnceLock;

use nix::libc;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::net::unix::pipe;

use super::clone_exec;

/// Variables of the daemon's own environment that must not reach hooks: they speak for the daemon to
/// systemd, and a hook that used them would confuse the service manager.
pub(crate) const STRIPPED_VARS: &[&str] = &[
    "NOTIFY_SOCKET",
    "LISTEN_FDS",
    "LISTEN_PID",
    "LISTEN_FDNAMES",
    "WATCHDOG_USEC",
    "WATCHDOG_PID",
];

/// What to start.
pub struct Spec<'a> {
    /// A path, or a bare name looked up in `PATH`.
    pub program: &'a str,
    /// The words after the program.
    pub args: &'a [&'a str],
    /// Set on top of the daemon's environment, in order: a later one of the same name wins.
    pub vars: &'a [(&'a str, &'a OsStr)],
    pub working_dir: &'a Path,
}

/// A process just started: made on any thread (a spawn may run on a blocking one), its exit watched on
/// the runtime's by [`Started::into_process`].
#[derive(Debug)]
pub struct Started {
    pid: libc::pid_t,
    /// Made with the process where it was started by hand ([`clone_exec`]).
    pidfd: Option<OwnedFd>,
    stdin: OwnedFd,
    stdout: OwnedFd,
    stderr: OwnedFd,
}

/// A hook's process: its pipes, and its exit once waited for.
///
/// Its output pipes start unwatched (non-blocking descriptors the runtime does not poll): a hook that
/// exits soon, as most do, has all it printed in them, read once its exit is seen. Watched from the
/// start, each pipe's close woke the daemon in the middle of the hook's exit, two wake-ups more per hook,
/// and cost four `epoll_ctl`. [`watched`] makes one asynchronous when the hook runs longer.
#[derive(Debug)]
pub struct HookProcess {
    pid: libc::pid_t,
    pub stdin: Option<Stdin>,
    pub stdout: Option<OwnedFd>,
    pub stderr: Option<OwnedFd>,
    /// Readable once the process has exited; `None` where pidfds are not to be had (then SIGCHLD).
    pidfd: Option<AsyncFd<OwnedFd>>,
    status: Option<ExitStatus>,
}

/// What a spawn needs, made into C strings: built on the runtime's thread, started on any.
pub struct Prepared {
    /// The program as found: a path, or a bare name to look for in `search`.
    path: CString,
    /// The daemon's `PATH` (which the hook shares), for a bare name not found in the hook's own.
    search: Option<&'static OsStr>,
    argv: Vec<CString>,
    environment: Environment,
    working_dir: CString,
}

// SAFETY: the raw pointers in `environment` point into C strings it owns or into the daemon's
// environment, made once and never changed or freed; nothing in it is shared mutably.
unsafe impl Send for Prepared {}

/// Makes `spec` ready to start: every string it needs, and the environment.
pub fn prepare(spec: &Spec) -> io::Result<Prepared> {
    let program = c_string(spec.program.as_bytes())?;
    let mut argv = Vec::with_capacity(spec.args.len() + 1);
    argv.push(program.clone());
    for arg in spec.args {
        argv.push(c_string(arg.as_bytes())?);
    }
    let environment = Environment::with(spec.vars)?;
    let (path, search) = match resolved(spec.program, spec.vars, spec.working_dir)? {
        Some(found) => (found, None),
        None if spec.program.contains('/') => (program, None),
        None => (program, Some(daemon_path())),
    };
    Ok(Prepared {
        path,
        search,
        argv,
        environment,
        working_dir: c_string(spec.working_dir.as_os_str().as_bytes())?,
    })
}

impl Prepared {
    /// Starts it. Blocks the calling thread until the child has exec'd (or failed to).
    pub fn start(self) -> io::Result<Started> {
        self.start_by(Way::Fastest)
    }

    fn start_by(self, way: Way) -> io::Result<Started> {
        // The daemon's ends are made non-blocking before the spawn, so that nothing can fail once a
        // process exists that the caller would not hear of.
        let (stdin_child, stdin) = pipe_pair()?;
        let (stdout, stdout_child) = pipe_pair()?;
        let (stderr, stderr_child) = pipe_pair()?;
        let (stdin, stdout, stderr) = (
            non_blocking(stdin)?,
            non_blocking(stdout)?,
            non_blocking(stderr)?,
        );
        let stdio = [&stdin_child, &stdout_child, &stderr_child];
        let words: Vec<&CString> = self.argv.iter().collect();
        let (pid, pidfd) = match self.spawn(way, &self.path, self.search, &words, stdio) {
            // A file that is executable but neither a binary nor a `#!` script: run by `sh`, as
            // `execvp` and every shell run it (a `command` hook's script already is, by its `sh -c`).
            // glibc's posix_spawn does not, and such a hook would never run, only fail to start.
            Err(SpawnFailed { error, file }) if error.raw_os_error() == Some(libc::ENOEXEC) => {
                let Some(script) = file else {
                    return Err(error);
                };
                // A `#!` script: the kernel read its line, and it is the interpreter that could not run.
                // Run by sh, the line a comment, the script would run as something it was never meant
                // to be, and say nothing.
                if let Some(why) = interpreter_fails(&script, &self.working_dir) {
                    return Err(why);
                }
                if !reads_as_a_shell_script(&script, &self.working_dir) {
                    return Err(error);
                }
                let shell = c"/bin/sh".to_owned();
                // A path sh would take for an option (`-x/guard`) is given as `./-x/guard`.
                let script = if script.as_bytes().starts_with(b"-") {
                    c_string(&[b"./", script.as_bytes()].concat())?
                } else {
                    script
                };
                let mut words = vec![&shell, &script];
                words.extend(self.argv.iter().skip(1));
                self.spawn(way, &shell, None, &words, stdio)
                    .map_err(|_| error)?
            }
            started => started.map_err(|failed| failed.error)?,
        };
        // The child's ends close here, in the daemon: the child has its copies.
        drop((stdin_child, stdout_child, stderr_child));
        Ok(Started {
            pid,
            pidfd,
            stdin,
            stdout,
            stderr,
        })
    }

    /// Starts `path` with `words`: by hand ([`clone_exec`]) where that can be had, else by `posix_spawn`.
    /// A bare name (with a `search` path) is tried at every place in it as `execvp` tries them, both
    /// ways. The pidfd comes with the first way. A failure to run a file found carries that file.
    fn spawn(
        &self,
        way: Way,
        path: &CString,
        search: Option<&OsStr>,
        words: &[&CString],
        stdio: [&OwnedFd; 3],
    ) -> Result<(libc::pid_t, Option<OwnedFd>), SpawnFailed> {
        let mut pointers: Vec<*mut libc::c_char> =
            words.iter().map(|word| word.as_ptr().cast_mut()).collect();
        pointers.push(std::ptr::null_mut());
        let places = match search {
            Some(search) => places_in_path(path, search).map_err(SpawnFailed::from)?,
            None => vec![path.clone()],
        };
        if way == Way::Fastest {
            let mut paths: Vec<*const libc::c_char> =
                places.iter().map(|place| place.as_ptr()).collect();
            paths.push(std::ptr::null());
            let launch = clone_exec::Launch {
                paths: &paths,
                argv: &pointers,
                envp: &self.environment.pointers,
                stdio: stdio.map(AsRawFd::as_raw_fd),
                working_dir: &self.working_dir,
            };
            match clone_exec::launch(&launch) {
                Ok(Some(launched)) => return Ok((launched.pid, launched.pidfd)),
                Ok(None) => {}
                Err(failed) => {
                    return Err(SpawnFailed {
                        error: failed.error,
                        file: failed.path.and_then(|index| places.get(index).cloned()),
                    });
                }
            }
        }
        // By glibc, a place at a time, on past one as the child by hand goes on (not `posix_spawnp`,
        // which does not say which place failed to run).
        let (mut denied, mut last) = (false, io::Error::from_raw_os_error(libc::ENOENT));
        for place in &places {
            match self.posix_spawn(place, &pointers, stdio) {
                Ok(pid) => return Ok((pid, None)),
                Err(error) => match error.raw_os_error() {
                    Some(libc::EACCES) => denied = true,
                    Some(code) if clone_exec::LOOK_FURTHER.contains(&code) => last = error,
                    _ => {
                        return Err(SpawnFailed {
                            error,
                            file: Some(place.clone()),
                        });
                    }
                },
            }
        }
        Err(SpawnFailed::from(if denied {
            io::Error::from_raw_os_error(libc::EACCES)
        } else {
            last
        }))
    }

    /// `posix_spawn`, where [`clone_exec`] cannot be had: the same steps, by glibc.
    fn posix_spawn(
        &self,
        path: &CString,
        pointers: &[*mut libc::c_char],
        stdio: [&OwnedFd; 3],
    ) -> io::Result<libc::pid_t> {
        let mut actions = FileActions::new()?;
        actions.dup2(stdio[0], 0)?;
        actions.dup2(stdio[1], 1)?;
        actions.dup2(stdio[2], 2)?;
        actions.chdir(&self.working_dir)?;
        let attributes = Attributes::new()?;
        let mut pid: libc::pid_t = 0;
        // SAFETY: every pointer is to a NUL-terminated string or a NULL-terminated array that outlives
        // the call; the file actions and attributes are initialised.
        let code = unsafe {
            libc::posix_spawn(
                &mut pid,
                path.as_ptr(),
                &actions.0,
                &attributes.0,
                pointers.as_ptr(),
                self.environment.pointers.as_ptr(),
            )
        };
        check(code).map(|()| pid)
    }
}

/// A spawn that failed, and for a file that could not be run, the file (by hand, where a bare name was
/// found in `PATH`).
struct SpawnFailed {
    error: io::Error,
    file: Option<CString>,
}

impl From<io::Error> for SpawnFailed {
    fn from(error: io::Error) -> SpawnFailed {
        SpawnFailed { error, file: None }
    }
}

/// The daemon's `PATH` (glibc's default when it has none), read once: the daemon does not change its
/// environment once started (as [`daemon_environment`]).
fn daemon_path() -> &'static OsStr {
    static PATH: OnceLock<OsString> = OnceLock::new();
    PATH.get_or_init(|| std::env::var_os("PATH").unwrap_or_else(|| "/bin:/usr/bin".into()))
}

/// Where `execvp` looks for a bare `name` in `path`: each entry with the name after it; an empty entry is
/// the working folder (`./name`). A relative entry stays relative: the child looks from the hook's
/// working folder, as the hook itself would.
fn places_in_path(name: &CString, path: &OsStr) -> io::Result<Vec<CString>> {
    path.as_bytes()
        .split(|&byte| byte == b':')
        .map(|dir| {
            let dir = if dir.is_empty() { &b"."[..] } else { dir };
            c_string(&[dir, b"/", name.as_bytes()].concat())
        })
        .collect()
}

/// How a process is started: by hand where that can be had, else by `posix_spawn`; or (the tests' way of
/// comparing the two) by `posix_spawn` only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    Fastest,
    #[cfg_attr(not(test), allow(dead_code))]
    PosixSpawn,
}

/// For a file that failed to start with `ENOEXEC` and starts with `#!`: why its interpreter could not run
/// (the kernel says only "exec format error"), as the error to fail the hook with. `None` for a file
/// without a `#!` line (or one that cannot be read).
fn interpreter_fails(path: &CString, working_dir: &CString) -> Option<io::Error> {
    let head = head_of(path, working_dir)?;
    let line = head.strip_prefix(b"#!")?;
    let line = line.split(|&byte| byte == b'\n').next().unwrap_or_default();
    // As the kernel reads it: past blanks, the interpreter runs to the next blank.
    let blank = |byte: &u8| *byte == b' ' || *byte == b'\t';
    let start = line
        .iter()
        .position(|byte| !blank(byte))
        .unwrap_or(line.len());
    let interpreter = &line[start..];
    let interpreter = &interpreter[..interpreter
        .iter()
        .position(blank)
        .unwrap_or(interpreter.len())];
    let shown = String::from_utf8_lossy(interpreter);
    let why = match c_string(interpreter)
        .ok()
        .and_then(|it| head_of(&it, working_dir))
    {
        _ if interpreter.is_empty() => "its #! line names no interpreter".to_string(),
        Some(its) if its.starts_with(b"\x7fELF") => format!(
            "its interpreter {shown:?} is not a program the kernel can run: a binary for another machine"
        ),
        Some(its) if its.starts_with(b"#!") => format!(
            "its interpreter {shown:?} is not a program the kernel can run: a script whose own \
             interpreter cannot run"
        ),
        Some(_) => format!(
            "its interpreter {shown:?} is not a program the kernel can run: it has no #! line"
        ),
        None => format!("its interpreter {shown:?} is not a program the kernel can run"),
    };
    Some(io::Error::new(io::ErrorKind::InvalidInput, why))
}

/// The first 256 bytes of a file, a relative path from the hook's working folder (where it was run, as a
/// relative `PATH` entry's or a relative `#!` interpreter is); `None` when it cannot be read.
fn head_of(path: &CString, working_dir: &CString) -> Option<Vec<u8>> {
    use std::io::Read;
    let path = Path::new(OsStr::from_bytes(working_dir.as_bytes()))
        .join(OsStr::from_bytes(path.as_bytes()));
    let file = std::fs::File::open(path).ok()?;
    let mut head = Vec::with_capacity(256);
    file.take(256).read_to_end(&mut head).ok()?;
    Some(head)
}

/// Whether a file that failed to start with `ENOEXEC` is a script for `sh`: not empty (a half-written
/// or truncated hook would otherwise run as nothing, and say nothing), not a binary (an ELF for another
/// machine, or a NUL byte before its first line ends, as bash tells a binary), and not text for
/// something else (a byte-order mark, before which a `#!` line goes unread, and bash syntax would run
/// under dash). Such files keep failing to start, and their hook's `on_failure` decides.
fn reads_as_a_shell_script(path: &CString, working_dir: &CString) -> bool {
    let Some(head) = head_of(path, working_dir).filter(|head| !head.is_empty()) else {
        return false;
    };
    let marked = [&b"\x7fELF"[..], b"\xef\xbb\xbf", b"\xfe\xff", b"\xff\xfe"]
        .iter()
        .any(|mark| head.starts_with(mark));
    let first_line = head.split(|&byte| byte == b'\n').next().unwrap_or_default();
    !marked && !first_line.contains(&0)
}

impl Started {
    pub fn id(&self) -> u32 {
        self.pid as u32
    }

    /// Its exit watched. Must run inside the runtime.
    pub fn into_process(self) -> HookProcess {
        let Started {
            pid,
            pidfd,
            stdin,
            stdout,
            stderr,
        } = self;
        // The descriptors are non-blocking pipes of the right direction: `Prepared::start` made them so.
        HookProcess {
            pid,
            stdin: Some(Stdin(stdin)),
            stdout: Some(stdout),
            stderr: Some(stderr),
            pidfd: watched_pidfd(pidfd, pid),
            status: None,
        }
    }
}

/// A hook's output pipe, watched by the runtime.
pub type OutputPipe = pipe::Receiver;

/// One of a hook's output pipes registered with the runtime, to be read as the hook prints. A
/// registration that fails (the runtime out of room) is an error, not a pipe given up: what the hook
/// prints there could be its refusal. Must run inside the runtime.
pub fn watched(pipe: OwnedFd) -> io::Result<OutputPipe> {
    // The descriptor is a non-blocking read end: `Prepared::start` made it so.
    pipe::Receiver::from_owned_fd_unchecked(pipe)
}

/// The write end of a hook's stdin, not yet registered with the runtime: most events fit in the pipe at
/// once, and then are written without it (an epoll registration, its removal and a turn of the loop less
/// per hook).
#[derive(Debug)]
pub struct Stdin(OwnedFd);

impl Stdin {
    /// Writes all of `bytes`, then closes the pipe (the hook sees the end of its input).
    pub async fn feed(self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            // SAFETY: write reads `bytes.len()` bytes from a valid slice into a descriptor we own.
            let written =
                unsafe { libc::write(self.0.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) };
            if written >= 0 {
                bytes = &bytes[written as usize..];
                continue;
            }
            let error = io::Error::last_os_error();
            match error.kind() {
                io::ErrorKind::Interrupted => {}
                io::ErrorKind::WouldBlock => {
                    // The pipe is full: the rest waits for the hook to read, without blocking the thread.
                    let mut pipe = pipe::Sender::from_owned_fd_unchecked(self.0)?;
                    return tokio::io::AsyncWriteExt::write_all(&mut pipe, bytes).await;
                }
                _ => return Err(error),
            }
        }
        Ok(())
    }
}

impl HookProcess {
    /// Waits for the process to exit and reaps it. Cancel-safe: called again, it goes on waiting.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let Some(pidfd) = &self.pidfd else {
            return self.wait_on_sigchld().await;
        };
        loop {
            let mut ready = pidfd.readable().await?;
            if let Some(status) = reap(self.pid)? {
                self.status = Some(status);
                return Ok(status);
            }
            ready.clear_ready();
        }
    }

    /// Without a pidfd (a kernel before 5.3, or one that refuses it): each SIGCHLD, a look.
    async fn wait_on_sigchld(&mut self) -> io::Result<ExitStatus> {
        let mut children = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::child())?;
        loop {
            if let Some(status) = reap(self.pid)? {
                self.status = Some(status);
                return Ok(status);
            }
            // A SIGCHLD may be missed by a process looking too late; a slow tick catches it.
            let _ =
                tokio::time::timeout(std::time::Duration::from_millis(100), children.recv()).await;
        }
    }
}

impl Drop for HookProcess {
    fn drop(&mut self) {
        // Dropped unwaited (its fire abandoned, its group killed): reaped now if it is dead already, else
        // by the reaper's sweep once it is (it is no longer tracked by then).
        if self.status.is_none() {
            let _ = reap(self.pid);
        }
    }
}

/// Makes sure the kernel leaves a child's exit status for `waitpid`: a daemon started with SIGCHLD
/// ignored (`SIG_IGN` is inherited across exec, and `SA_NOCLDWAIT` with it) would have every hook reaped
/// by the kernel, its exit read as an error, and an exit 2 (a refusal) lost. Resets such a disposition to
/// the default; a handler someone installed is left as it is. Process-wide; idempotent.
pub fn keep_exits_waitable() {
    // SAFETY: a zeroed sigaction is a valid value to be overwritten; with no new action given, sigaction
    // only reads the current one into it.
    let mut current: libc::sigaction = unsafe { std::mem::zeroed() };
    if unsafe { libc::sigaction(libc::SIGCHLD, std::ptr::null(), &mut current) } != 0 {
        return;
    }
    let unwaitable =
        current.sa_sigaction == libc::SIG_IGN || current.sa_flags & libc::SA_NOCLDWAIT != 0;
    if unwaitable {
        let default = nix::sys::signal::SigAction::new(
            nix::sys::signal::SigHandler::SigDfl,
            nix::sys::signal::SaFlags::empty(),
            nix::sys::signal::SigSet::empty(),
        );
        // SAFETY: SIG_DFL installs no code of ours.
        let _ = unsafe { nix::sys::signal::sigaction(nix::sys::signal::Signal::SIGCHLD, &default) };
    }
}

/// The exit status of `pid` if it has exited (and is now reaped), without blocking.
fn reap(pid: libc::pid_t) -> io::Result<Option<ExitStatus>> {
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: waitpid writes the status into a valid integer.
        let reaped = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        match reaped {
            0 => return Ok(None),
            -1 => {
                let error = io::Error::last_os_error();
                if error.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(error);
            }
            _ => return Ok(Some(ExitStatus::from_raw(status))),
        }
    }
}

/// `pidfd` (or, without one, a pidfd opened for `pid`) registered with the runtime, readable once the
/// process exits; `None` if that cannot be had.
fn watched_pidfd(pidfd: Option<OwnedFd>, pid: libc::pid_t) -> Option<AsyncFd<OwnedFd>> {
    let fd = match pidfd {
        Some(fd) => fd,
        None => {
            // SAFETY: pidfd_open takes a pid and flags, and returns a new descriptor or -1.
            let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
            if fd < 0 {
                return None;
            }
            // SAFETY: the descriptor was just returned by the kernel and is owned by nobody else.
            unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) }
        }
    };
    // SAFETY: `fd` is an `OwnedFd` the `AsyncFd` owns: open, the same pidfd, for its lifetime.
    unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }.ok()
}

/// A pipe as (read end, write end), both close-on-exec: the child gets its end through dup2, which
/// clears the flag on the copy.
fn pipe_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    Ok((above_stdio(read)?, above_stdio(write)?))
}

/// `fd` itself, or a copy numbered 3 or more when it is 0, 1 or 2 (a standard descriptor the process had
/// closed): a dup2 of a descriptor onto its own number leaves it close-on-exec, and the child would lose it.
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor we own returns a new one, or -1.
    let copy = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if copy < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just made and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(copy) })
}

/// The daemon's end of a pipe made non-blocking (the child's end stays blocking, as programs expect).
fn non_blocking(fd: OwnedFd) -> io::Result<OwnedFd> {
    // SAFETY: F_SETFL on a descriptor we own; O_NONBLOCK is the only status flag a pipe here has.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "nul byte found in provided data",
        )
    })
}

/// Where a bare program name is found when the hook's own `env` sets `PATH` (a `posix_spawnp` would
/// look in the daemon's): the first executable file of that name in it, a relative entry (an empty one
/// is `.`) taken from the hook's working folder, where the hook runs. `None`: use the program as given
/// (a path, or a name for `posix_spawnp` to look up in the daemon's `PATH`, which the hook shares). Not
/// found: "permission denied" when a file of that name was there but could not be run, as `execvp` says.
fn resolved(
    program: &str,
    vars: &[(&str, &OsStr)],
    working_dir: &Path,
) -> io::Result<Option<CString>> {
    if program.contains('/') {
        return Ok(None);
    }
    let Some((_, path)) = vars.iter().rev().find(|(name, _)| *name == "PATH") else {
        return Ok(None);
    };
    let mut denied = false;
    for dir in path.as_bytes().split(|&byte| byte == b':') {
        let dir = Path::new(OsStr::from_bytes(if dir.is_empty() { b"." } else { dir }));
        let candidate = working_dir.join(dir).join(program);
        let candidate = c_string(candidate.as_os_str().as_bytes())?;
        if !Path::new(OsStr::from_bytes(candidate.as_bytes())).is_file() {
            continue;
        }
        // SAFETY: access reads a NUL-terminated path.
        if unsafe { libc::access(candidate.as_ptr(), libc::X_OK) } == 0 {
            return Ok(Some(candidate));
        }
        denied = true;
    }
    Err(io::Error::from_raw_os_error(if denied {
        libc::EACCES
    } else {
        libc::ENOENT
    }))
}

/// The daemon's own variables less [`STRIPPED_VARS`], as `NAME=value` C strings: made once, on the first
/// spawn (the daemon does not change its environment once started).
fn daemon_environment() -> &'static [(OsString, CString)] {
    static VARS: OnceLock<Vec<(OsString, CString)>> = OnceLock::new();
    VARS.get_or_init(|| {
        let vars: Vec<(OsString, OsString)> = std::env::vars_os().collect();
        vars.iter()
            .enumerate()
            // A name the environment holds twice is given once, its last value, as `Command` gave it.
            .filter(|(index, (name, _))| !vars[index + 1..].iter().any(|(later, _)| later == name))
            .filter(|(_, (name, _))| !STRIPPED_VARS.iter().any(|stripped| name == *stripped))
            .filter_map(|(_, (name, value))| {
                let mut entry = name.clone().into_vec();
                entry.push(b'=');
                entry.extend_from_slice(value.as_bytes());
                CString::new(entry).ok().map(|entry| (name.clone(), entry))
            })
            .collect()
    })
}

/// One spawn's environment: pointers to the daemon's entries it keeps and to its own.
struct Environment {
    /// Owns the entries `pointers` points to beside the daemon's.
    _own: Vec<CString>,
    pointers: Vec<*mut libc::c_char>,
}

impl Environment {
    fn with(vars: &[(&str, &OsStr)]) -> io::Result<Environment> {
        let mut own: Vec<CString> = Vec::with_capacity(vars.len());
        for (index, (name, value)) in vars.iter().enumerate() {
            if vars[index + 1..].iter().any(|(later, _)| later == name) {
                continue; // a later one of the same name wins
            }
            if name.is_empty() || name.contains('=') {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("invalid environment variable name {name:?}"),
                ));
            }
            let mut entry = Vec::with_capacity(name.len() + 1 + value.len());
            entry.extend_from_slice(name.as_bytes());
            entry.push(b'=');
            entry.extend_from_slice(value.as_bytes());
            own.push(c_string(&entry)?);
        }
        let daemon = daemon_environment();
        let mut pointers = Vec::with_capacity(daemon.len() + own.len() + 1);
        for (name, entry) in daemon {
            if !vars
                .iter()
                .any(|(set, _)| name.as_bytes() == set.as_bytes())
            {
                pointers.push(entry.as_ptr().cast_mut());
            }
        }
        pointers.extend(own.iter().map(|entry| entry.as_ptr().cast_mut()));
        pointers.push(std::ptr::null_mut());
        Ok(Environment {
            _own: own,
            pointers,
        })
    }
}

/// `posix_spawn_file_actions_t`, destroyed on drop.
struct FileActions(libc::posix_spawn_file_actions_t);

impl FileActions {
    fn new() -> io::Result<FileActions> {
        let mut actions = std::mem::MaybeUninit::uninit();
        // SAFETY: init writes a valid object into the uninitialised memory.
        check(unsafe { libc::posix_spawn_file_actions_init(actions.as_mut_ptr()) })?;
        // SAFETY: initialised just above.
        Ok(FileActions(unsafe { actions.assume_init() }))
    }

    fn dup2(&mut self, fd: &OwnedFd, onto: libc::c_int) -> io::Result<()> {
        // SAFETY: an initialised object and a descriptor that stays open until the spawn.
        check(unsafe { libc::posix_spawn_file_actions_adddup2(&mut self.0, fd.as_raw_fd(), onto) })
    }

    fn chdir(&mut self, dir: &CString) -> io::Result<()> {
        // SAFETY: an initialised object; glibc copies the path.
        check(unsafe { libc::posix_spawn_file_actions_addchdir_np(&mut self.0, dir.as_ptr()) })
    }
}

impl Drop for FileActions {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`, destroyed once.
        unsafe { libc::posix_spawn_file_actions_destroy(&mut self.0) };
    }
}

/// `posix_spawnattr_t` set as `Command` sets it for `process_group(0)`, destroyed on drop.
struct Attributes(libc::posix_spawnattr_t);

impl Attributes {
    fn new() -> io::Result<Attributes> {
        let mut attributes = std::mem::MaybeUninit::uninit();
        // SAFETY: init writes a valid object into the uninitialised memory.
        check(unsafe { libc::posix_spawnattr_init(attributes.as_mut_ptr()) })?;
        // SAFETY: initialised just above.
        let mut attributes = Attributes(unsafe { attributes.assume_init() });
        // SAFETY: sigset_t is plain data, filled by sigemptyset/sigaddset before use.
        let mut signals: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointers to an initialised object and a sigset.
        unsafe {
            libc::sigemptyset(&mut signals);
            check(libc::posix_spawnattr_setsigmask(
                &mut attributes.0,
                &signals,
            ))?;
            libc::sigaddset(&mut signals, libc::SIGPIPE);
            check(libc::posix_spawnattr_setsigdefault(
                &mut attributes.0,
                &signals,
            ))?;
            check(libc::posix_spawnattr_setpgroup(&mut attributes.0, 0))?;
            let flags = libc::POSIX_SPAWN_SETPGROUP
                | libc::POSIX_SPAWN_SETSIGDEF
                | libc::POSIX_SPAWN_SETSIGMASK;
            check(libc::posix_spawnattr_setflags(
                &mut attributes.0,
                flags as libc::c_short,
            ))?;
        }
        Ok(attributes)
    }
}

impl Drop for Attributes {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`, destroyed once.
        unsafe { libc::posix_spawnattr_destroy(&mut self.0) };
    }
}

/// posix_spawn's functions return an error number rather than setting errno.
fn check(code: libc::c_int) -> io::Result<()> {
    if code == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(code))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_program::write_program;

    fn run(spec: &Spec) -> (ExitStatus, String, String) {
        run_by(spec, Way::Fastest)
    }

    /// Feeds, reads and waits for a started process, as `run_by` does.
    fn finish(started: Started) -> (ExitStatus, String, String) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            use tokio::io::AsyncReadExt;
            let mut process = started.into_process();
            let _ = process.stdin.take().unwrap().feed(b"in\n").await;
            let (mut out, mut err) = (String::new(), String::new());
            watched(process.stdout.take().unwrap())
                .unwrap()
                .read_to_string(&mut out)
                .await
                .unwrap();
            watched(process.stderr.take().unwrap())
                .unwrap()
                .read_to_string(&mut err)
                .await
                .unwrap();
            (process.wait().await.unwrap(), out, err)
        })
    }

    fn run_by(spec: &Spec, way: Way) -> (ExitStatus, String, String) {
        finish(
            prepare(spec)
                .and_then(|prepared| prepared.start_by(way))
                .expect("started"),
        )
    }

    #[test]
    fn a_process_gets_its_words_stdin_folder_variables_and_group() {
        let dir = std::env::temp_dir();
        let (status, out, err) = run(&Spec {
            program: "sh",
            args: &[
                "-c",
                "read line; echo \"$line $1 $(pwd -P) $HOOKD_X $A\"; echo oops >&2; \
                 [ \"$(cut -d' ' -f5 /proc/$$/stat)\" = \"$$\" ] || exit 9; exit 3",
                "sh",
                "word",
            ],
            vars: &[
                ("HOOKD_X", OsStr::new("first")),
                ("A", OsStr::new("a")),
                ("HOOKD_X", OsStr::new("later")),
            ],
            working_dir: &dir,
        });
        let here = dir.canonicalize().unwrap();
        assert_eq!(out, format!("in word {} later a\n", here.display()));
        assert_eq!(err, "oops\n");
        assert_eq!(status.code(), Some(3));
    }

    #[test]
    fn a_variable_the_hook_sets_replaces_the_daemons_own() {
        let (status, out, _) = run(&Spec {
            program: "/usr/bin/env",
            args: &[],
            vars: &[("HOME", OsStr::new("/set/for/the/hook"))],
            working_dir: Path::new("/"),
        });
        assert!(status.success());
        assert!(out.contains("HOME=/set/for/the/hook\n"), "{out}");
        assert_eq!(
            out.matches("\nHOME=").count() + usize::from(out.starts_with("HOME=")),
            1,
            "{out}"
        );
    }

    #[test]
    fn a_missing_program_or_folder_is_an_error_not_a_process() {
        let start = |spec: &Spec| prepare(spec).and_then(Prepared::start);
        let missing = start(&Spec {
            program: "/no/such/program",
            args: &[],
            vars: &[],
            working_dir: Path::new("/"),
        })
        .unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        let by_name = start(&Spec {
            program: "no-such-program-hookd",
            args: &[],
            vars: &[("PATH", OsStr::new("/bin:/usr/bin"))],
            working_dir: Path::new("/"),
        })
        .unwrap_err();
        assert_eq!(by_name.kind(), io::ErrorKind::NotFound);
        let nul = start(&Spec {
            program: "sh",
            args: &["-c\0"],
            vars: &[],
            working_dir: Path::new("/"),
        })
        .unwrap_err();
        assert_eq!(nul.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn a_hooks_own_path_finds_its_program() {
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("only-here");
        write_program(&program, b"#!/bin/sh\necho found\n");
        let (status, out, _) = run(&Spec {
            program: "only-here",
            args: &[],
            vars: &[("PATH", dir.path().as_os_str())],
            working_dir: Path::new("/"),
        });
        assert!(status.success());
        assert_eq!(out, "found\n");
    }

    #[test]
    fn a_script_without_a_hash_bang_is_run_by_sh_with_its_words() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("plain");
        write_program(&script, b"read line; echo \"$0 $1 $line\"; exit 2\n");
        let by_path = script.to_str().unwrap();
        let (status, out, _) = run(&Spec {
            program: by_path,
            args: &["word"],
            vars: &[],
            working_dir: Path::new("/"),
        });
        assert_eq!(
            (status.code(), out),
            (Some(2), format!("{by_path} word in\n"))
        );
        // Found by name in the hook's own PATH: the file found is what sh runs.
        let (status, out, _) = run(&Spec {
            program: "plain",
            args: &["word"],
            vars: &[("PATH", dir.path().as_os_str())],
            working_dir: Path::new("/"),
        });
        assert_eq!(
            (status.code(), out),
            (Some(2), format!("{by_path} word in\n"))
        );
    }

    #[test]
    fn an_empty_file_a_binary_or_a_marked_text_still_fails_to_start() {
        let dir = tempfile::tempdir().unwrap();
        for (name, body) in [
            ("empty", &b""[..]),
            ("elf", b"\x7fELF\x02\x01\x01\0\0\0\nexit 2\n"),
            ("nul", b"exit\x002\nexit 2\n"),
            ("bom", b"\xef\xbb\xbf#!/bin/bash\nexit 2\n"),
        ] {
            let path = dir.path().join(name);
            write_program(&path, body);
            let started = prepare(&Spec {
                program: path.to_str().unwrap(),
                args: &[],
                vars: &[],
                working_dir: Path::new("/"),
            })
            .and_then(Prepared::start);
            let error = started.map(|_| ()).expect_err(name);
            assert_eq!(error.raw_os_error(), Some(libc::ENOEXEC), "{name}: {error}");
        }
    }

    #[test]
    fn a_hash_bang_script_whose_interpreter_has_no_hash_bang_fails_to_start_both_ways() {
        // The kernel says ENOEXEC for the script: its interpreter is no program. Run by sh, the `#!` line
        // a comment, the script would run and exit 0: it must fail to start, saying why.
        let dir = tempfile::tempdir().unwrap();
        let interpreter = dir.path().join("Interp");
        write_program(&interpreter, b"exit 0\n");
        let ran = dir.path().join("ran");
        let script = dir.path().join("guard");
        write_program(
            &script,
            format!("#!{} -x\ntouch {}\n", interpreter.display(), ran.display()).as_bytes(),
        );
        let search = dir.path().as_os_str().to_owned();
        for way in [Way::Fastest, Way::PosixSpawn] {
            for (program, search) in [(script.to_str().unwrap(), None), ("guard", Some(&search))] {
                let mut prepared = prepare(&Spec {
                    program,
                    args: &[],
                    vars: &[],
                    working_dir: Path::new("/"),
                })
                .unwrap();
                if let Some(search) = search {
                    prepared.search = Some(Box::leak(search.clone().into_boxed_os_str()));
                }
                let error = prepared.start_by(way).map(|_| ()).expect_err(program);
                assert_eq!(
                    error.to_string(),
                    format!(
                        "its interpreter {:?} is not a program the kernel can run: it has no #! line",
                        interpreter.display().to_string()
                    ),
                    "{way:?} {program}"
                );
            }
        }
        assert!(!ran.exists(), "the script ran");
    }

    #[test]
    fn a_relative_path_entry_is_the_hooks_folders_and_an_unrunnable_file_is_denied() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("bin")).unwrap();
        let program = dir.path().join("bin/tool");
        write_program(&program, b"#!/bin/sh\necho project tool\n");
        let mode = |mode| std::os::unix::fs::PermissionsExt::from_mode(mode);
        let (status, out, _) = run(&Spec {
            program: "tool",
            args: &[],
            vars: &[("PATH", OsStr::new("bin:/usr/bin:/bin"))],
            working_dir: dir.path(),
        });
        assert!(status.success());
        assert_eq!(out, "project tool\n");
        std::fs::set_permissions(&program, mode(0o644)).unwrap();
        // No execute bit for anyone: not runnable, by root either.
        let denied = prepare(&Spec {
            program: "tool",
            args: &[],
            vars: &[("PATH", OsStr::new("bin"))],
            working_dir: dir.path(),
        })
        .err()
        .expect("not runnable");
        assert_eq!(denied.kind(), io::ErrorKind::PermissionDenied);
    }

    #[test]
    fn sigpipe_is_the_default_again_in_a_hook() {
        // Rust ignores SIGPIPE; a hook writing into a closed pipe must die of it as any program would.
        let (_, out, _) = run(&Spec {
            program: "sh",
            args: &["-c", "grep SigIgn /proc/self/status"],
            vars: &[],
            working_dir: Path::new("/"),
        });
        let ignored = u64::from_str_radix(out.trim().trim_start_matches("SigIgn:").trim(), 16)
            .expect("a hex mask");
        assert_eq!(
            ignored & (1 << (libc::SIGPIPE - 1)),
            0,
            "SIGPIPE is ignored: {out}"
        );
    }

    #[test]
    fn by_hand_and_by_posix_spawn_a_hook_starts_alike() {
        let dir = tempfile::tempdir().unwrap();
        // Its words, variables, folder, group and descriptors, then the signal state of a program that
        // installs no handler of its own.
        let script = "read line; echo \"$line $1 $A $(pwd -P)\"; \
             [ \"$(cut -d' ' -f5 /proc/$$/stat)\" = \"$$\" ] && echo own group; \
             ls /proc/self/fd | sort -n | tr '\\n' ' '; echo; \
             exec cat /proc/self/status";
        let spec = Spec {
            program: "sh",
            args: &["-c", script, "sh", "word"],
            vars: &[("A", OsStr::new("a"))],
            working_dir: dir.path(),
        };
        let mask = |out: &str, name: &str| -> u64 {
            let line = out
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .unwrap_or_else(|| panic!("no {name} in {out}"));
            u64::from_str_radix(line.trim_start_matches(':').trim(), 16).unwrap()
        };
        let [by_hand, by_glibc] = [Way::Fastest, Way::PosixSpawn].map(|way| {
            let (status, out, err) = run_by(&spec, way);
            assert!(status.success(), "{way:?}: {out} {err}");
            let words = out.lines().take(3).collect::<Vec<_>>().join("\n");
            (
                words,
                mask(&out, "SigBlk"),
                mask(&out, "SigIgn"),
                mask(&out, "SigCgt"),
            )
        });
        let here = dir.path().canonicalize().unwrap();
        assert!(
            by_hand.0.starts_with(&format!(
                "in word a {}\nown group\n0 1 2 3 ",
                here.display()
            )),
            "{}",
            by_hand.0
        );
        assert_eq!(
            by_hand.0, by_glibc.0,
            "the words, folder, group and descriptors"
        );
        assert_eq!((by_hand.1, by_glibc.1), (0, 0), "an empty signal mask");
        assert_eq!((by_hand.3, by_glibc.3), (0, 0), "no handler caught");
        // glibc's child also ignores its own two internal signals (32, 33), and exec keeps them ignored;
        // by hand they are left as the daemon has them, a handler of its put back to the default.
        let internal = (1 << 31) | (1 << 32);
        assert_eq!(
            by_hand.2 & !internal,
            by_glibc.2 & !internal,
            "ignored signals"
        );
        assert_eq!(by_hand.2 & (1 << (libc::SIGPIPE - 1)), 0, "SIGPIPE ignored");
    }

    #[test]
    fn by_hand_and_by_posix_spawn_a_start_fails_alike() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("/no/such/program", dir.path().to_path_buf()),
            ("sh", dir.path().join("no-such-folder")),
            ("no-such-program-hookd", dir.path().to_path_buf()),
        ];
        for (program, working_dir) in &cases {
            let spec = Spec {
                program,
                args: &[],
                vars: &[],
                working_dir,
            };
            let errors = [Way::Fastest, Way::PosixSpawn].map(|way| {
                prepare(&spec)
                    .and_then(|prepared| prepared.start_by(way))
                    .map(|_| ())
                    .expect_err(program)
                    .raw_os_error()
            });
            assert_eq!(
                errors,
                [Some(libc::ENOENT); 2],
                "{program} in {working_dir:?}"
            );
        }
    }

    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    #[test]
    fn by_hand_the_pidfd_comes_with_the_process() {
        let started = prepare(&Spec {
            program: "/bin/true",
            args: &[],
            vars: &[],
            working_dir: Path::new("/"),
        })
        .and_then(Prepared::start)
        .unwrap();
        assert!(
            started.pidfd.is_some(),
            "started by posix_spawn, not by hand"
        );
        let mut status = 0;
        // SAFETY: waits for our own child.
        assert_eq!(
            unsafe { libc::waitpid(started.pid, &mut status, 0) },
            started.pid
        );
        assert_eq!(status, 0);
    }

    #[test]
    fn by_hand_and_by_posix_spawn_a_bare_name_is_looked_for_alike() {
        let dir = tempfile::tempdir().unwrap();
        let place = |name: &str| {
            let folder = dir.path().join(name);
            std::fs::create_dir(&folder).unwrap();
            folder
        };
        let executable =
            |path: std::path::PathBuf, body: &str| write_program(&path, body.as_bytes());
        // In the daemon's PATH, in order: a folder named like the program, a script whose interpreter
        // is missing, a script with no `#!` line (run by sh), and one that would run too.
        let (folder, broken, plain, later) = (place("a"), place("b"), place("c"), place("d"));
        std::fs::create_dir(folder.join("zzhook")).unwrap();
        executable(
            broken.join("zzhook"),
            "#!/no/such/interpreter\necho wrong\n",
        );
        executable(plain.join("zzhook"), "echo \"plain $1\"\n");
        executable(later.join("zzhook"), "#!/bin/sh\necho later\n");
        let search = |dirs: &[&Path]| {
            let joined: Vec<&OsStr> = dirs.iter().map(|dir| dir.as_os_str()).collect();
            joined.join(OsStr::new(":"))
        };
        let started = |path: OsString, way: Way| {
            let mut prepared = prepare(&Spec {
                program: "zzhook",
                args: &["word"],
                vars: &[],
                working_dir: dir.path(),
            })
            .unwrap();
            prepared.search = Some(Box::leak(path.into_boxed_os_str()));
            prepared.start_by(way).map(|started| {
                let (status, out, _) = finish(started);
                (status.code(), out)
            })
        };
        for way in [Way::Fastest, Way::PosixSpawn] {
            let ran = started(search(&[&folder, &broken, &plain, &later]), way).unwrap();
            assert_eq!(ran, (Some(0), "plain word\n".to_string()), "{way:?}");
            let ran = started(search(&[&folder, &broken, &later]), way).unwrap();
            assert_eq!(ran, (Some(0), "later\n".to_string()), "{way:?}");
            let denied = started(search(&[&broken, &folder]), way).unwrap_err();
            assert_eq!(denied.raw_os_error(), Some(libc::EACCES), "{way:?}");
            let missing = started(search(&[&broken]), way).unwrap_err();
            assert_eq!(missing.raw_os_error(), Some(libc::ENOENT), "{way:?}");
        }
    }
}
