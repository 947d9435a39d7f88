//! The real `hookd serve`: started on a sandbox, waited for, stopped and reaped on drop.

use std::fs;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

use super::{
    BIN, Client, NO_MANAGED_LAYER, READY, RESPONSE, Sandbox, as_nobody, bash_event,
    check_fire_shape, keep_home, run_with_deadline, text, wait_until,
};

/// A running `hookd serve`, killed (SIGTERM, then SIGKILL) and reaped on drop. On a failing test the
/// daemon's log is printed.
pub struct Daemon {
    pub sb: Sandbox,
    pub socket: PathBuf,
    pub config: PathBuf,
    pub log: PathBuf,
    child: Option<Child>,
    pid: u32,
}

/// `hookd serve` for this sandbox, not yet spawned, its output going to the file `log_name` in the
/// sandbox. See [`serve_command_at`].
pub fn serve_command(sb: &Sandbox, log_name: &str) -> Command {
    let mut cmd = serve_command_at(&sb.config(), &sb.socket());
    logged_in(&mut cmd, sb, log_name);
    cmd
}

/// `cmd`'s output to the file `log_name` in the sandbox.
fn logged_in(cmd: &mut Command, sb: &Sandbox, log_name: &str) {
    let log = fs::File::create(sb.p(log_name)).expect("creating the daemon log");
    cmd.stdout(log.try_clone().expect("cloning the log file"))
        .stderr(log);
}

/// `hookd serve --config CONFIG --socket SOCKET` at log level `debug`, stdin from /dev/null, not yet
/// spawned, in an environment of the test's own ([`daemons_places`]) without the variables that would
/// make it think systemd started it ([`SYSTEMD_VARS`], `JOURNAL_STREAM`). Inherited descriptors other than 0, 1
/// and 2 are marked close-on-exec in the child, so that the daemon starts with only its standard streams
/// (the test harness may itself have inherited stray descriptors, and the other tests of this binary open
/// their own) and whatever a hook sees beyond 0, 1, 2 is the daemon's own.
pub fn serve_command_at(config: &Path, socket: &Path) -> Command {
    serve_command_managed_at(config, socket, Path::new(NO_MANAGED_LAYER))
}

/// [`serve_command_at`] with the managed layer in `managed`.
pub fn serve_command_managed_at(config: &Path, socket: &Path, managed: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg("serve")
        .arg("--config")
        .arg(config)
        .arg("--socket")
        .arg(socket)
        .arg("--managed")
        .arg(managed)
        .env("HOOKD_LOG", "debug")
        .env_remove("JOURNAL_STREAM");
    for var in SYSTEMD_VARS {
        cmd.env_remove(var);
    }
    daemons_places(&mut cmd, config, socket);
    cmd.stdin(Stdio::null());
    unsafe {
        // Safety: only fcntl, which is async-signal-safe, runs between fork and exec.
        cmd.pre_exec(|| {
            cloexec_from(3);
            Ok(())
        });
    }
    cmd
}

/// The places of a daemon on `socket` with the settings `config`, and of the hooks it starts (they
/// inherit its environment): `$HOOKD_SOCKET` and `$HOOKD_CONFIG` its own, its record in
/// [`state_home_for`], and the other places in the socket's folder ([`keep_home`]): `home/`,
/// `runtime/`, `config/`, `cache/` beside the socket, which nothing makes until something writes there.
pub fn daemons_places(cmd: &mut Command, config: &Path, socket: &Path) {
    cmd.env("HOOKD_SOCKET", socket)
        .env("HOOKD_CONFIG", config)
        .env("XDG_STATE_HOME", state_home_for(socket));
    let folder = socket.parent().unwrap_or(Path::new("."));
    keep_home(cmd, folder);
}

/// Where a daemon on `socket` keeps its record in a test: `state/` beside the socket (the journal is
/// `state/hookd/journal.jsonl`).
pub fn state_home_for(socket: &Path) -> PathBuf {
    socket
        .parent()
        .map_or_else(|| PathBuf::from("state"), |dir| dir.join("state"))
}

/// The records of the journal file at `path` as they are now: each whole line parsed (one that is not
/// JSON fails the test), a last line the daemon is still writing left out; none when there is no file.
pub fn journal_records(path: &Path) -> Vec<Value> {
    let text = fs::read(path).unwrap_or_default();
    let whole = &text[..text
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1)];
    std::str::from_utf8(whole)
        .expect("the journal is UTF-8")
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("a journal line is not JSON ({e}): {line:?}"))
        })
        .collect()
}

/// Another user's client ([`Daemon::another_user_is_told_nothing`]): connects to the socket (argv 1),
/// sends argv 2, reads until the daemon closes, and prints whether anything came (`DATA`) or not
/// (`EMPTY`).
const ANOTHER_USER: &str = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.settimeout(10)
try:
    s.sendall(sys.argv[2].encode())
except OSError:
    pass
data = b""
try:
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
except ConnectionResetError:
    pass
except socket.timeout:
    # Left open: not what the daemon does to another user's connection.
    print("OPEN" if not data else "DATA")
    sys.exit(0)
print("DATA" if data else "EMPTY")
"#;

/// Waits (within [`RESPONSE`]) until a record of `d`'s journal satisfies `found`, and returns the first
/// that does: the record is written after the answer, so a test that reads it waits for it.
pub fn journaled(d: &Daemon, what: &str, found: impl Fn(&Value) -> bool) -> Value {
    let mut record = None;
    wait_until(RESPONSE, what, || {
        record = d.journal().into_iter().find(|record| found(record));
        record.is_some()
    });
    record.unwrap()
}

/// The variables systemd gives the daemon that no hook may inherit (contract section 6).
pub const SYSTEMD_VARS: [&str; 6] = [
    "NOTIFY_SOCKET",
    "LISTEN_FDS",
    "LISTEN_PID",
    "LISTEN_FDNAMES",
    "WATCHDOG_USEC",
    "WATCHDOG_PID",
];

/// Sets FD_CLOEXEC on every descriptor from `first` up (async-signal-safe).
pub fn cloexec_from(first: i32) {
    use nix::fcntl::{FcntlArg, FdFlag, fcntl};
    use std::os::fd::BorrowedFd;
    for fd in first..1024 {
        // Safety: the descriptor is only used for this one call; an unused number fails with EBADF.
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        let _ = fcntl(borrowed, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC));
    }
}

impl Daemon {
    /// Starts the daemon on the sandbox (its settings and scripts already written) and waits until the
    /// socket accepts a connection.
    pub fn start(sb: Sandbox) -> Daemon {
        Daemon::start_with(sb, |_| {})
    }

    /// A daemon whose settings are `toml`, with the scripts `(name, body)` written first.
    pub fn with_scripts(scripts: &[(&str, &str)], toml: &str) -> Daemon {
        let sb = Sandbox::new();
        for (name, body) in scripts {
            sb.script(name, body);
        }
        sb.settings(toml);
        Daemon::start(sb)
    }

    /// As `start`, with a chance to change the command (extra environment, ...). Its managed layer is
    /// none ([`NO_MANAGED_LAYER`]); [`Daemon::start_managed`] names one.
    pub fn start_with(sb: Sandbox, adjust: impl FnOnce(&mut Command)) -> Daemon {
        let cmd = serve_command(&sb, "daemon.log");
        Daemon::spawned(sb, cmd, adjust)
    }

    /// As `start`, with the managed layer in `dir`.
    pub fn start_managed(sb: Sandbox, dir: &Path) -> Daemon {
        let mut cmd = serve_command_managed_at(&sb.config(), &sb.socket(), dir);
        logged_in(&mut cmd, &sb, "daemon.log");
        Daemon::spawned(sb, cmd, |_| {})
    }

    fn spawned(sb: Sandbox, mut cmd: Command, adjust: impl FnOnce(&mut Command)) -> Daemon {
        remember_panics();
        adjust(&mut cmd);
        let child = cmd.spawn().expect("spawning hookd serve");
        let pid = child.id();
        let mut daemon = Daemon {
            socket: sb.socket(),
            config: sb.config(),
            log: sb.p("daemon.log"),
            sb,
            child: Some(child),
            pid,
        };
        daemon.wait_ready();
        daemon
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + READY;
        loop {
            if let Some(status) = self.child.as_mut().unwrap().try_wait().expect("try_wait") {
                self.child = None;
                panic!(
                    "hookd serve exited before it was ready ({status}); its log:\n{}",
                    self.log_text()
                );
            }
            if UnixStream::connect(&self.socket).is_ok() {
                return;
            }
            if Instant::now() >= deadline {
                panic!(
                    "hookd serve did not accept a connection on {:?} within {READY:?}",
                    self.socket
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Opens the socket up to other users (its folder 0755, the socket 0666), so that only the daemon's
    /// credential check stands between another user and the daemon; the sandbox itself must be 0755
    /// already.
    pub fn open_to_others(&self) {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(
            self.socket.parent().unwrap(),
            fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        fs::set_permissions(&self.socket, fs::Permissions::from_mode(0o666)).unwrap();
    }

    /// Sends `lines` (each a request) to the daemon as another user (nobody), the socket opened up to
    /// others first (the sandbox 0755, [`Daemon::open_to_others`]) so that only the daemon's check of
    /// its peer stands in the way, and asserts that the connection was closed with nothing said: no
    /// answer, no call answered, no hook hung.
    pub fn another_user_is_told_nothing(&self, lines: &[&str]) {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(self.sb.path(), fs::Permissions::from_mode(0o755)).unwrap();
        self.open_to_others();
        let mut py = as_nobody("/usr/bin/python3");
        py.args(["-I", "-c", ANOTHER_USER]).arg(&self.socket).arg(
            lines
                .iter()
                .map(|line| format!("{line}\n"))
                .collect::<String>(),
        );
        let out = run_with_deadline(py, None, RESPONSE);
        assert_eq!(text(&out.stdout).trim(), "EMPTY", "{}", text(&out.stderr));
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn log_text(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The daemon's journal file: `state/hookd/journal.jsonl` beside its socket ([`state_home_for`]).
    pub fn journal_file(&self) -> PathBuf {
        state_home_for(&self.socket).join("hookd/journal.jsonl")
    }

    /// The journal's records as they are now ([`journal_records`]).
    pub fn journal(&self) -> Vec<Value> {
        journal_records(&self.journal_file())
    }

    pub fn connect(&self) -> Client {
        Client::connect(&self.socket)
    }

    /// Fires `moment` with `event` as agent `claude-code` on a fresh connection; checks the response's
    /// shape and returns it.
    pub fn fire(&self, moment: &str, event: Value) -> Value {
        self.fire_req(json!({"op": "fire", "id": 1, "moment": moment, "agent": "claude-code", "event": event}))
    }

    /// Sends one fire request on a fresh connection and returns its (shape-checked) response.
    pub fn fire_req(&self, req: Value) -> Value {
        let mut c = self.connect();
        let resp = c.request(&req);
        assert_eq!(resp.get("id"), req.get("id"), "id not echoed: {resp}");
        check_fire_shape(&resp);
        resp
    }

    pub fn status(&self) -> Value {
        let resp = self.connect().request(&json!({"op": "status", "id": "st"}));
        assert_eq!(resp["ok"], true, "status failed: {resp}");
        resp
    }

    /// The port the daemon's HTTP listener is bound to (the real one when the settings said `:0`), from
    /// `status`; panics unless it is listening.
    pub fn http_port(&self) -> u16 {
        let status = self.status();
        assert_eq!(status["http"]["state"], "listening", "{status}");
        let listen = status["http"]["listen"].as_str().expect("http.listen");
        listen
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {listen:?}"))
    }

    pub fn reload(&self) -> Value {
        self.connect().request(&json!({"op": "reload", "id": "rl"}))
    }

    pub fn signal(&self, sig: Signal) {
        kill(Pid::from_raw(self.pid as i32), sig).expect("signalling the daemon");
    }

    /// Waits (with a deadline) for the daemon to exit and returns its status.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let child = self.child.as_mut().expect("daemon already reaped");
        let mut status = None;
        wait_until(timeout, "the daemon to exit", || {
            status = child.try_wait().expect("try_wait");
            status.is_some()
        });
        self.child = None;
        status.unwrap()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            stop_child(&mut child);
        }
        if std::thread::panicking() {
            eprintln!(
                "----- hookd serve log ({}) -----\n{}\n----- end of log -----",
                self.log.display(),
                self.log_text()
            );
            // Said again after the log and the backtrace: where a failure's output is shown cut in the
            // middle (CI's summary), its cause stays in sight.
            if let Some(panic) = this_threads_panic() {
                eprintln!("----- the test failed: {panic}");
            }
        }
    }
}

/// A child process stopped and reaped on drop (for daemons a test spawns by hand).
pub struct ChildGuard(pub Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        stop_child(&mut self.0);
    }
}

/// SIGTERM, wait up to 5 s, then SIGKILL; always reaps.
pub fn stop_child(child: &mut Child) {
    if child.try_wait().ok().flatten().is_some() {
        return;
    }
    let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if child.try_wait().ok().flatten().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Sets up a sandbox with one hook named `h` on `moment` that runs the script `body` (plus the extra
/// TOML keys in `extra`), starts the daemon, fires once, and returns the response.
pub fn fire_one(moment: &str, body: &str, extra: &str) -> Value {
    let sb = Sandbox::new();
    sb.script("h.sh", body);
    sb.settings(&format!(
        "[[hooks.{moment}]]\nname = \"h\"\ncommand = \"@DIR@/h.sh\"\n{extra}\n"
    ));
    let d = Daemon::start(sb);
    d.fire(moment, bash_event())
}

thread_local! {
    static THIS_THREADS_PANIC: std::cell::RefCell<Option<String>> =
        const { std::cell::RefCell::new(None) };
}

/// Keeps each thread's panic (where and what), for [`Daemon`]'s drop to say again after the log; the
/// default hook still prints it first. Installed once, by the first daemon a test starts.
fn remember_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let said = info.to_string();
            // `try_with`: a panic while the thread's locals are torn down has nowhere to be kept.
            let _ = THIS_THREADS_PANIC.try_with(|panic| *panic.borrow_mut() = Some(said));
            default(info);
        }));
    });
}

/// What this thread panicked with, if it did since [`remember_panics`].
fn this_threads_panic() -> Option<String> {
    THIS_THREADS_PANIC.with(|panic| panic.borrow_mut().take())
}

/// A daemon whose hooks refuse at the moments an agent's relay call can be refused (a tool call, a
/// permission, a Stop) and add a line at a prompt and a session's start: the relay tests' daemon.
pub fn refusing_daemon() -> Daemon {
    Daemon::with_scripts(
        &[
            ("no.sh", "cat >/dev/null\necho 'not today' >&2\nexit 2"),
            ("context.sh", "cat >/dev/null\necho 'branch: main'"),
        ],
        // The Stop cap out of the way: each input is asked several times, in one session.
        "[defaults]\nstop_refusal_cap = 1000\n\n\
         [[hooks.PreToolUse]]\nname = \"no-tool\"\ncommand = \"@DIR@/no.sh\"\n\n\
         [[hooks.UserPromptSubmit]]\nname = \"context\"\ncommand = \"@DIR@/context.sh\"\n\n\
         [[hooks.SessionStart]]\nname = \"context-start\"\ncommand = \"@DIR@/context.sh\"\n\n\
         [[hooks.PermissionRequest]]\nname = \"no-permission\"\ncommand = \"@DIR@/no.sh\"\n\n\
         [[hooks.Stop]]\nname = \"no-stop\"\ncommand = \"@DIR@/no.sh\"\n",
    )
}
