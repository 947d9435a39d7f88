//! Shared helpers for the integration tests: a sandbox (a fresh temp dir holding the settings file, the
//! hook scripts and the socket), a guard that runs the real `hookd serve` and kills it on drop, a line
//! client for the socket protocol, and polling helpers (tests never sleep to wait for something).
//!
//! Each test binary uses only part of this module, hence the `dead_code` allowance.
#![allow(dead_code)]

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};
use tempfile::TempDir;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_hookd");

/// How long the daemon may take to accept its first connection.
pub const READY: Duration = Duration::from_secs(10);

/// How long a response may take before a read gives up (a safety net against a hung test, not a speed
/// assertion: every test that needs a response waits on this deadline).
pub const RESPONSE: Duration = Duration::from_secs(30);

/// Polls `cond` every 10 ms until it holds; panics with `what` at the deadline.
pub fn wait_until(timeout: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return;
        }
        if Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A fresh temp dir holding everything one test needs. `@DIR@` in settings and scripts is replaced by
/// its path.
pub struct Sandbox {
    pub dir: TempDir,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::Builder::new()
            .prefix("hookd-test-")
            .tempdir()
            .expect("creating a temp dir");
        fs::create_dir(dir.path().join("conf")).expect("creating the settings folder");
        Sandbox { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A path inside the sandbox.
    pub fn p(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// `@DIR@` replaced by the sandbox's path.
    pub fn expand(&self, text: &str) -> String {
        text.replace("@DIR@", self.path().to_str().expect("utf-8 temp path"))
    }

    /// The settings file. It has a folder of its own, `conf/`: the daemon watches the settings file's
    /// folder (contract section 10), and the scripts, logs and files hooks write stay out of it, so that
    /// only the tests' own edits of the settings file are changes there.
    pub fn config(&self) -> PathBuf {
        self.p("conf/hooks.toml")
    }

    /// The settings file's folder.
    pub fn config_dir(&self) -> PathBuf {
        self.p("conf")
    }

    /// The socket path; its folder `run/` does not exist until the daemon creates it.
    pub fn socket(&self) -> PathBuf {
        self.p("run/hookd.sock")
    }

    /// Writes an executable shell script `name` (a `#!/bin/sh` line is prepended) and returns its path.
    pub fn script(&self, name: &str, body: &str) -> PathBuf {
        let path = self.p(name);
        fs::write(&path, format!("#!/bin/sh\n{}\n", self.expand(body))).expect("writing a script");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod 0755");
        path
    }

    /// Writes the settings file (mode 0644, as the daemon demands), as editors do: a new file renamed
    /// over the old one, so that a watching daemon never reads it half-written.
    pub fn settings(&self, toml: &str) {
        let tmp = self.p("hooks.toml.new");
        fs::write(&tmp, self.expand(toml)).expect("writing the settings file");
        fs::set_permissions(&tmp, fs::Permissions::from_mode(0o644)).expect("chmod 0644");
        fs::rename(&tmp, self.config()).expect("renaming the settings file into place");
    }

    pub fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.p(rel)).unwrap_or_else(|e| panic!("reading {rel}: {e}"))
    }

    /// Reads a pid a hook wrote into `rel`, waiting until the file is complete.
    pub fn wait_pid(&self, rel: &str) -> i32 {
        let mut pid = None;
        wait_until(RESPONSE, &format!("a pid in {rel}"), || {
            let text = fs::read_to_string(self.p(rel)).unwrap_or_default();
            if text.ends_with('\n') {
                pid = text.trim().parse().ok();
            }
            pid.is_some()
        });
        pid.unwrap()
    }
}

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

/// `hookd serve` for this sandbox, not yet spawned. Inherited descriptors other than 0, 1 and 2 are
/// marked close-on-exec in the child, so that the daemon starts with only its standard streams (the test
/// harness may itself have inherited stray descriptors) and whatever a hook sees beyond 0, 1, 2 is the
/// daemon's own.
pub fn serve_command(sb: &Sandbox, log_name: &str) -> Command {
    let log = fs::File::create(sb.p(log_name)).expect("creating the daemon log");
    let mut cmd = Command::new(BIN);
    cmd.arg("serve")
        .arg("--config")
        .arg(sb.config())
        .arg("--socket")
        .arg(sb.socket())
        .env("HOOKD_LOG", "debug")
        .env_remove("HOOKD_SOCKET")
        .env_remove("HOOKD_CONFIG")
        .env_remove("JOURNAL_STREAM")
        .env_remove("NOTIFY_SOCKET")
        .env_remove("LISTEN_FDS")
        .env_remove("LISTEN_PID")
        .env_remove("LISTEN_FDNAMES")
        .env_remove("WATCHDOG_USEC")
        .env_remove("WATCHDOG_PID")
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("cloning the log file"))
        .stderr(log);
    unsafe {
        // Safety: only fcntl, which is async-signal-safe, runs between fork and exec.
        cmd.pre_exec(|| {
            cloexec_from(3);
            Ok(())
        });
    }
    cmd
}

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

    /// As `start`, with a chance to change the command (extra environment, ...).
    pub fn start_with(sb: Sandbox, adjust: impl FnOnce(&mut Command)) -> Daemon {
        let mut cmd = serve_command(&sb, "daemon.log");
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

    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn log_text(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
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

/// One connection speaking the line protocol.
pub struct Client {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
}

impl Client {
    pub fn connect(path: &Path) -> Client {
        let stream =
            UnixStream::connect(path).unwrap_or_else(|e| panic!("connecting to {path:?}: {e}"));
        Client::from_stream(stream)
    }

    pub fn from_stream(stream: UnixStream) -> Client {
        stream
            .set_read_timeout(Some(RESPONSE))
            .expect("read timeout");
        let reader = BufReader::new(stream.try_clone().expect("cloning the stream"));
        Client {
            writer: stream,
            reader,
        }
    }

    /// Sends raw bytes (a line must end in `\n`).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("writing to the socket");
    }

    /// Sends a request; an error (the daemon closed the connection) is returned, not a panic.
    pub fn try_send(&mut self, v: &Value) -> std::io::Result<()> {
        let mut line = serde_json::to_string(v).unwrap();
        line.push('\n');
        self.writer.write_all(line.as_bytes())
    }

    pub fn send(&mut self, v: &Value) {
        let mut line = serde_json::to_string(v).unwrap();
        line.push('\n');
        self.send_raw(line.as_bytes());
    }

    /// The next line, or None at EOF (a reset connection counts as EOF). Panics on the read deadline.
    pub fn read_line(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) => Some(line),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => None,
            Err(e) => panic!("reading a response line: {e} (after {RESPONSE:?} at most)"),
        }
    }

    /// The next response, parsed. Panics at EOF, on the deadline, or if the line is not JSON.
    pub fn recv(&mut self) -> Value {
        let line = self
            .read_line()
            .expect("the daemon closed the connection instead of answering");
        assert!(
            line.ends_with('\n'),
            "response line not terminated by \\n: {line:?}"
        );
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("response is not JSON ({e}): {line:?}"))
    }

    pub fn request(&mut self, v: &Value) -> Value {
        self.send(v);
        self.recv()
    }

    /// Reads until the daemon closes the connection; panics if more data comes first.
    pub fn expect_eof(&mut self) {
        let mut rest = Vec::new();
        match self.reader.read_to_end(&mut rest) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(e) => panic!("waiting for the daemon to close the connection: {e}"),
        }
        assert!(
            rest.is_empty(),
            "expected the connection closed, got more data: {:?}",
            String::from_utf8_lossy(&rest)
        );
    }
}

/// Checks a fire response against contract section 9: `ok`, `refused`, `adds`, `reason` exactly when
/// refused, and each hook entry's fields.
pub fn check_fire_shape(resp: &Value) {
    assert_eq!(resp["ok"], true, "fire failed: {resp}");
    let refused = resp["refused"]
        .as_bool()
        .unwrap_or_else(|| panic!("`refused` not a bool: {resp}"));
    assert!(resp["adds"].is_array(), "`adds` not an array: {resp}");
    assert!(
        resp["adds"]
            .as_array()
            .unwrap()
            .iter()
            .all(Value::is_string),
        "`adds` holds a non-string: {resp}"
    );
    if refused {
        assert!(
            resp["reason"].is_string(),
            "refused without a string `reason`: {resp}"
        );
    } else {
        assert!(
            resp.get("reason").is_none(),
            "`reason` present though not refused: {resp}"
        );
    }
    let hooks = resp["hooks"]
        .as_array()
        .unwrap_or_else(|| panic!("`hooks` not an array: {resp}"));
    for h in hooks {
        assert!(h["name"].is_string(), "hook without a name: {resp}");
        let outcome = h["outcome"]
            .as_str()
            .unwrap_or_else(|| panic!("hook without an outcome: {h}"));
        assert!(
            ["nothing", "adds", "refused", "failed"].contains(&outcome),
            "unknown outcome {outcome:?}: {h}"
        );
        assert!(h["ms"].is_number(), "hook without a numeric `ms`: {h}");
        if let Some(exit) = h.get("exit") {
            assert!(exit.is_i64(), "`exit` not an integer: {h}");
        }
        if outcome == "failed" {
            assert!(
                h["error"].is_string(),
                "failed hook without an `error`: {h}"
            );
        }
        if let Some(t) = h.get("truncated") {
            assert_eq!(
                t,
                &Value::Bool(true),
                "`truncated` present but not true: {h}"
            );
        }
    }
}

/// The entry for hook `name` in a fire response.
pub fn hook<'a>(resp: &'a Value, name: &str) -> &'a Value {
    resp["hooks"]
        .as_array()
        .and_then(|hs| hs.iter().find(|h| h["name"] == name))
        .unwrap_or_else(|| panic!("no hook {name:?} in the response: {resp}"))
}

/// The names of the hooks that ran, in the response's order.
pub fn hook_names(resp: &Value) -> Vec<String> {
    resp["hooks"]
        .as_array()
        .unwrap_or_else(|| panic!("no `hooks` array: {resp}"))
        .iter()
        .map(|h| h["name"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The `adds` of a fire response as strings.
pub fn adds(resp: &Value) -> Vec<String> {
    resp["adds"]
        .as_array()
        .unwrap_or_else(|| panic!("no `adds` array: {resp}"))
        .iter()
        .map(|a| a.as_str().unwrap_or("").to_string())
        .collect()
}

/// A plain PreToolUse event for the Bash tool.
pub fn bash_event() -> Value {
    json!({"session_id": "s1", "tool_name": "Bash", "tool_input": {"command": "ls"}})
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

/// A process's state letter and parent pid from /proc/PID/stat, or None when it does not exist.
pub fn proc_stat(pid: i32) -> Option<(char, i32)> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) S ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

/// True when `pid` no longer runs. A zombie counts as gone only when its parent is not the daemon: an
/// orphaned hook process is re-parented to PID 1, and PID 1 in this test machine does not reap orphans
/// (checked: an orphaned `sleep` stays `Z` under PID 1 for good), so such a zombie is dead and nothing the
/// daemon could reap. A zombie whose parent is the daemon is the daemon's to reap, so it is not gone.
pub fn process_gone(pid: i32, daemon_pid: u32) -> bool {
    match proc_stat(pid) {
        None => true,
        Some(('Z', ppid)) | Some(('X', ppid)) => ppid != daemon_pid as i32,
        Some(_) => false,
    }
}

/// The uid of `nobody`: another user, for the tests of what other users cannot do.
pub const NOBODY: u32 = 65534;

/// `program` run as `nobody` (uid and gid, no supplementary groups), arguments still to be added.
pub fn as_nobody(program: &str) -> Command {
    let mut cmd = Command::new("setpriv");
    cmd.args([
        &format!("--reuid={NOBODY}"),
        &format!("--regid={NOBODY}"),
        "--clear-groups",
        program,
    ]);
    cmd
}

/// Runs `hookd ARGS` with `stdin`, waiting at most `timeout`; returns its output.
pub fn run_hookd(args: &[&str], stdin: Option<&str>, timeout: Duration) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    run_with_deadline(cmd, stdin, timeout)
}

/// Runs a command to completion with `stdin`, killing it and panicking if it outlives `timeout`.
pub fn run_with_deadline(mut cmd: Command, stdin: Option<&str>, timeout: Duration) -> Output {
    cmd.env_remove("HOOKD_SOCKET")
        .env_remove("HOOKD_CONFIG")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {cmd:?}: {e}"));
    let writer = stdin.map(|text| {
        let mut pipe = child.stdin.take().unwrap();
        let text = text.to_string();
        std::thread::spawn(move || {
            let _ = pipe.write_all(text.as_bytes());
        })
    });
    let mut out_pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out_pipe.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err_pipe.read_to_end(&mut buf);
        buf
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    if let Some(w) = writer {
        let _ = w.join();
    }
    Output {
        status,
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    }
}

/// The exit code of a finished process, with a message naming the signal if it was killed.
pub fn code(status: &ExitStatus) -> i32 {
    status
        .code()
        .unwrap_or_else(|| panic!("killed by signal {:?}", status.signal()))
}

/// Text of a process's stdout / stderr.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Connects to `socket` without blocking: `None` when the listener's backlog is full (or nothing
/// listens), where a blocking connect would wait.
pub fn connect_without_blocking(socket: &Path) -> Option<UnixStream> {
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, UnixAddr};
    let fd = nix::sys::socket::socket(
        AddressFamily::Unix,
        SockType::Stream,
        SockFlag::SOCK_NONBLOCK,
        None,
    )
    .expect("a socket");
    let address = UnixAddr::new(socket).expect("a socket address");
    nix::sys::socket::connect(std::os::fd::AsRawFd::as_raw_fd(&fd), &address)
        .ok()
        .map(|()| UnixStream::from(fd))
}
