//! systemd support (contract section 13) against the real daemon: socket activation through
//! `systemd-socket-activate` (which binds the socket, waits for a first connection, then execs the daemon
//! with `LISTEN_FDS=1` and `LISTEN_PID` = its own pid), the sd_notify messages received on a datagram
//! socket the test binds, the variables hooks must not see, and `hookd install`'s units checked by
//! `systemd-analyze verify`.
//!
//! Needs Debian's `systemd` package (`systemd-socket-activate`, `systemd-analyze`).

use std::fs;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt};
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

/// How long anything here may take before the test gives up (a safety net, not a speed assertion).
const DEADLINE: Duration = Duration::from_secs(10);

/// `hookd serve` launched by `systemd-socket-activate` on `socket`, killed and reaped on drop (its log is
/// printed when the test fails).
struct Activated {
    sb: Sandbox,
    /// The socket systemd-socket-activate binds and passes as descriptor 3.
    socket: PathBuf,
    log: PathBuf,
    child: Option<Child>,
}

impl Activated {
    /// Starts `systemd-socket-activate -l SOCKET [-E NAME=VALUE...] hookd serve ...` and waits until the
    /// socket file is there. The daemon itself starts only at the first connection.
    fn start(sb: Sandbox, env: &[(&str, &str)]) -> Activated {
        let folder = sb.p("sd");
        fs::DirBuilder::new().mode(0o700).create(&folder).unwrap();
        let socket = folder.join("hookd.sock");
        let log = sb.p("activated.log");
        let log_file = fs::File::create(&log).unwrap();
        let mut cmd = Command::new("systemd-socket-activate");
        cmd.arg("--listen").arg(&socket).arg("--fdname=hookd");
        cmd.arg("--setenv=HOOKD_LOG=debug");
        // systemd-socket-activate passes on PATH, TERM, USER and HOME of its own environment and what
        // --setenv says, nothing else: the daemon's places (its journal above all) are given that way,
        // in the folder of the socket it serves on, as `serve_command_at` gives them, the test's own
        // `env` first; and its HOME is set on systemd-socket-activate too, which would pass on its own.
        let mut places = Command::new(BIN);
        for (name, value) in env {
            places.env(name, value);
        }
        daemons_places(&mut places, &sb.config(), &socket);
        for (name, value) in places.get_envs() {
            let (name, value) = (name.to_str().unwrap(), value.map(|v| v.to_str().unwrap()));
            match value {
                Some(value) => cmd.arg(format!("--setenv={name}={value}")),
                None => cmd.env_remove(name),
            };
            if name == "HOME" {
                cmd.env("HOME", value.unwrap());
            }
        }
        // --socket names a path the daemon must not bind: it serves on the socket it is given.
        cmd.arg(BIN)
            .arg("serve")
            .arg("--config")
            .arg(sb.config())
            .arg("--socket")
            .arg(sb.socket())
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().unwrap())
            .stderr(log_file);
        without_the_machines_managed_layer(&mut cmd);
        let child = cmd.spawn().unwrap_or_else(|e| {
            panic!("cannot run systemd-socket-activate ({e}): install Debian's `systemd` package")
        });
        let mut activated = Activated {
            sb,
            socket,
            log,
            child: Some(child),
        };
        let socket = activated.socket.clone();
        let child = activated.child.as_mut().unwrap();
        wait_until(
            DEADLINE,
            "systemd-socket-activate to bind the socket",
            || {
                if let Some(status) = child.try_wait().unwrap() {
                    panic!("systemd-socket-activate exited early ({status})");
                }
                fs::symlink_metadata(&socket).is_ok_and(|m| m.file_type().is_socket())
            },
        );
        activated
    }

    fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    fn connect(&self) -> Client {
        Client::connect(&self.socket)
    }

    fn status(&self) -> Value {
        let resp = self.connect().request(&json!({"op": "status", "id": 1}));
        assert_eq!(resp["ok"], true, "status: {resp}");
        resp
    }

    fn fire(&self) -> Value {
        let resp = self.connect().request(&json!({
            "op": "fire", "id": 2, "moment": "PreToolUse", "agent": "claude-code", "event": bash_event()
        }));
        check_fire_shape(&resp);
        resp
    }

    fn sigterm_and_wait(&mut self) -> ExitStatus {
        kill(Pid::from_raw(self.pid() as i32), Signal::SIGTERM).unwrap();
        let child = self.child.as_mut().unwrap();
        let mut status = None;
        wait_until(DEADLINE, "the daemon to exit after SIGTERM", || {
            status = child.try_wait().unwrap();
            status.is_some()
        });
        self.child = None;
        status.unwrap()
    }

    fn log_text(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Activated {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            stop_child(&mut child);
        }
        if std::thread::panicking() {
            eprintln!(
                "----- activated hookd log -----\n{}\n----- end of log -----",
                self.log_text()
            );
        }
    }
}

/// A datagram socket bound where `NOTIFY_SOCKET` will point, as systemd binds one.
fn notify_socket(sb: &Sandbox) -> (UnixDatagram, PathBuf) {
    let path = sb.p("notify.sock");
    let socket = UnixDatagram::bind(&path).expect("binding the notify socket");
    (socket, path)
}

/// Every datagram waiting on `socket`, without waiting for more.
fn drain(socket: &UnixDatagram) -> Vec<String> {
    socket.set_nonblocking(true).unwrap();
    let mut messages = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match socket.recv(&mut buf) {
            Ok(n) => messages.push(String::from_utf8_lossy(&buf[..n]).into_owned()),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return messages,
            Err(e) => panic!("reading the notify socket: {e}"),
        }
    }
}

/// CLOCK_MONOTONIC in microseconds, the clock sd_notify's MONOTONIC_USEC is read on.
fn monotonic_usec() -> u64 {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).unwrap();
    t.tv_sec() as u64 * 1_000_000 + t.tv_nsec() as u64 / 1_000
}

fn poll_status(d: &Daemon, what: &str, cond: impl Fn(&Value) -> bool) {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let status = d.status();
        if cond(&status) {
            return;
        }
        if Instant::now() >= deadline {
            panic!("after {DEADLINE:?} still not {what}: {status}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn socket_activation_serves_on_the_passed_socket_and_leaves_it_to_systemd() {
    let sb = Sandbox::new();
    sb.settings("[[hooks.PreToolUse]]\nname = \"h\"\ncommand = \"echo activated\"\n");
    let mut d = Activated::start(sb, &[]);
    let pid = d.pid();

    // The first connection makes systemd-socket-activate exec the daemon, in the same process.
    let status = d.status();
    assert_eq!(
        status["pid"], pid,
        "the daemon is the activated process: {status}"
    );
    assert_eq!(status["generation"], 1, "{status}");
    let resp = d.fire();
    assert_eq!(adds(&resp), ["activated"], "{resp}");
    // Its record is the test's own, beside the socket it serves on, never the user's journal.
    let journal = state_home_for(&d.socket).join("hookd/journal.jsonl");
    wait_until(DEADLINE, "the fire in the test's own journal", || {
        fs::read_to_string(&journal).is_ok_and(|text| text.contains("\"kind\":\"fire\""))
    });
    assert!(
        d.log_text().contains("socket activation"),
        "the log says where it serves: {}",
        d.log_text()
    );
    assert!(
        !d.sb.socket().exists() && !d.sb.p("run").exists(),
        "with a socket from systemd the daemon binds none of its own"
    );

    let exit = d.sigterm_and_wait();
    assert_eq!(exit.code(), Some(0), "a clean shutdown exits 0: {exit}");
    // systemd-socket-activate bound it and execs (nothing of it is left to clean up): the socket file
    // belongs to systemd, and the daemon leaves it.
    let meta = fs::symlink_metadata(&d.socket).expect("the socket file is still there");
    assert!(meta.file_type().is_socket());
}

#[test]
fn hooks_see_no_systemd_variables_and_no_systemd_socket() {
    let sb = Sandbox::new();
    let (_notify, notify_path) = notify_socket(&sb);
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"h\"\n\
         command = \"env > @DIR@/env.txt; ls -l /proc/self/fd > @DIR@/fds.txt; echo ran\"\n",
    );
    let notify = notify_path.to_str().unwrap();
    let mut d = Activated::start(
        sb,
        &[
            ("NOTIFY_SOCKET", notify),
            ("WATCHDOG_USEC", "600000000"),
            ("WATCHDOG_PID", "1"),
        ],
    );
    let resp = d.fire();
    assert_eq!(adds(&resp), ["ran"], "{resp}");

    let env = d.sb.read("env.txt");
    assert!(env.contains("HOOKD_MOMENT=PreToolUse"), "{env}");
    // The daemon's places, which its hooks inherit, are the test's own.
    for (var, _) in PLACES
        .iter()
        .chain(&[("HOOKD_SOCKET", ""), ("HOOKD_CONFIG", "")])
    {
        let value = env
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{var}=")))
            .unwrap_or_else(|| panic!("a hook has no {var}:\n{env}"));
        assert!(
            Path::new(value).starts_with(d.sb.path()),
            "{var}={value} is not the test's:\n{env}"
        );
    }
    for var in SYSTEMD_VARS {
        assert!(
            !env.lines().any(|l| l.starts_with(&format!("{var}="))),
            "a hook sees {var}:\n{env}"
        );
    }
    // The listening socket (descriptor 3 in the daemon) and its connections stay in the daemon.
    let fds = d.sb.read("fds.txt");
    assert!(
        !fds.contains("socket:"),
        "a socket leaked into the hook:\n{fds}"
    );
    assert_eq!(d.sigterm_and_wait().code(), Some(0));
}

#[test]
fn sd_notify_says_ready_reloading_ready_and_stopping() {
    let sb = Sandbox::new();
    sb.settings("[[hooks.PreToolUse]]\nname = \"v1\"\ncommand = \"echo v1\"\n");
    let (notify, notify_path) = notify_socket(&sb);
    let mut d = Daemon::start_with(sb, |cmd| {
        cmd.env("NOTIFY_SOCKET", &notify_path);
    });
    // Each reload's window on the test's clock: MONOTONIC_USEC must fall inside it.
    let mut windows = Vec::new();

    // SIGHUP.
    let start = monotonic_usec();
    d.signal(Signal::SIGHUP);
    poll_status(&d, "generation 2", |s| s["generation"] == 2);
    windows.push((start, monotonic_usec()));

    // The reload request.
    let start = monotonic_usec();
    let resp = d.reload();
    assert_eq!(resp["generation"], 3, "{resp}");
    windows.push((start, monotonic_usec()));

    // The file changed (renamed over, as an editor saves).
    let start = monotonic_usec();
    let tmp = d.sb.p("conf/.hooks.toml.tmp");
    fs::write(
        &tmp,
        "[[hooks.PreToolUse]]\nname = \"v2\"\ncommand = \"echo v2\"\n",
    )
    .unwrap();
    fs::rename(&tmp, &d.config).unwrap();
    poll_status(&d, "generation 4", |s| s["generation"] == 4);
    windows.push((start, monotonic_usec()));

    // An invalid file: the reload fails, the old settings stay, and systemd is still told it is over.
    let start = monotonic_usec();
    fs::write(&tmp, "[[hooks.PreToolUse]]\nbogus = 1\n").unwrap();
    fs::rename(&tmp, &d.config).unwrap();
    poll_status(&d, "a failed reload", |s| s["last_reload"]["ok"] == false);
    windows.push((start, monotonic_usec()));

    d.signal(Signal::SIGTERM);
    let exit = d.wait_exit(DEADLINE);
    assert_eq!(exit.code(), Some(0), "{exit}");

    // The daemon is gone: every message it sent is waiting.
    let messages = drain(&notify);
    let shown = format!("{messages:?}");
    assert_eq!(
        messages.len(),
        2 + 2 * windows.len(),
        "expected READY, 4 x (RELOADING, READY), STOPPING: {shown}"
    );
    assert_eq!(messages[0], "READY=1", "{shown}");
    for (i, (from, to)) in windows.iter().enumerate() {
        let reloading = &messages[1 + 2 * i];
        let usec: u64 = reloading
            .strip_prefix("RELOADING=1\nMONOTONIC_USEC=")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| {
                panic!("not RELOADING=1 + MONOTONIC_USEC: {reloading:?} in {shown}")
            });
        assert!(
            (*from..=*to).contains(&usec),
            "MONOTONIC_USEC={usec} is not on CLOCK_MONOTONIC during the reload ({from}..={to})"
        );
        assert_eq!(messages[2 + 2 * i], "READY=1", "{shown}");
    }
    assert_eq!(messages[messages.len() - 1], "STOPPING=1", "{shown}");
}

#[test]
fn sd_notify_reaches_an_abstract_socket() {
    // NOTIFY_SOCKET=@name: an abstract socket, as systemd uses in containers.
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::SocketAddr;
    let sb = Sandbox::new();
    let name = format!("hookd-test-notify-{}", sb.path().display());
    let notify =
        UnixDatagram::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap()).unwrap();
    notify.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut d = Daemon::start_with(sb, |cmd| {
        cmd.env("NOTIFY_SOCKET", format!("@{name}"));
    });
    let mut buf = [0u8; 256];
    let n = notify
        .recv(&mut buf)
        .expect("READY=1 on the abstract socket");
    assert_eq!(&buf[..n], b"READY=1");
    d.signal(Signal::SIGTERM);
    assert_eq!(d.wait_exit(DEADLINE).code(), Some(0));
    let n = notify
        .recv(&mut buf)
        .expect("STOPPING=1 on the abstract socket");
    assert_eq!(&buf[..n], b"STOPPING=1");
}

#[test]
fn listen_fds_meant_for_another_process_are_ignored() {
    // LISTEN_PID names another process (the variables leaked from a parent): the daemon binds its own
    // socket, and its hooks still do not see the variables.
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"h\"\ncommand = \"env > @DIR@/env.txt; echo own\"\n",
    );
    let d = Daemon::start_with(sb, |cmd| {
        cmd.env("LISTEN_FDS", "1").env("LISTEN_PID", "1");
    });
    assert!(
        fs::symlink_metadata(&d.socket).is_ok_and(|m| m.file_type().is_socket()),
        "the daemon bound its own socket"
    );
    assert_eq!(adds(&d.fire("PreToolUse", bash_event())), ["own"]);
    let env = d.sb.read("env.txt");
    assert!(
        !env.lines().any(|l| l.starts_with("LISTEN_")),
        "a hook sees LISTEN_*:\n{env}"
    );
}

/// Runs `systemd-analyze --user verify` on the units in `dir` (see `require` for where it is missing).
fn verify(dir: &Path, runtime: &Path) -> std::process::Output {
    let mut cmd = Command::new("systemd-analyze");
    cmd.args(["--user", "verify"])
        .arg(dir.join("hookd.service"))
        .arg(dir.join("hookd.socket"))
        .env("XDG_RUNTIME_DIR", runtime)
        .env("SYSTEMD_LOG_COLOR", "0");
    run_with_deadline(cmd, None, Duration::from_secs(60))
}

#[test]
fn install_writes_units_that_systemd_analyze_verifies() {
    let sb = Sandbox::new();
    let runtime = sb.p("runtime");
    fs::DirBuilder::new().mode(0o700).create(&runtime).unwrap();
    let units = sb.p("units");
    let out = run_hookd(
        &["install", "--dir", units.to_str().unwrap(), "--bin", BIN],
        None,
        DEADLINE,
    );
    assert_eq!(code(&out.status), 0, "install: {}", text(&out.stderr));

    let service = fs::read_to_string(units.join("hookd.service")).unwrap();
    let lines: Vec<&str> = service.lines().collect();
    for want in [
        format!("ExecStart={BIN} serve"),
        "Type=notify".into(),
        "ExecReload=kill -HUP $MAINPID".into(),
        // Back after any exit, a kill -9 included, at once, and never given up on.
        "Restart=always".into(),
        "RestartSec=500ms".into(),
        "StartLimitIntervalSec=0".into(),
    ] {
        assert!(
            lines.contains(&want.as_str()),
            "no line {want:?} in:\n{service}"
        );
    }
    assert_eq!(service.matches("ExecStart=").count(), 1, "{service}");
    let socket = fs::read_to_string(units.join("hookd.socket")).unwrap();
    let lines: Vec<&str> = socket.lines().collect();
    for want in [
        "ListenStream=%t/hookd/hookd.sock",
        "SocketMode=0600",
        "DirectoryMode=0700",
    ] {
        assert!(lines.contains(&want), "no line {want:?} in:\n{socket}");
    }

    if !require(
        on_path("systemd-analyze"),
        "systemd-analyze is not installed: the units were not verified",
    ) {
        return;
    }
    let out = verify(&units, &runtime);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "systemd-analyze verify ({}): {}{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );

    // The check bites: the same units with ExecStart on a missing binary fail it.
    let broken = sb.p("broken");
    let missing = sb.p("nowhere/hookd");
    let out = run_hookd(
        &[
            "install",
            "--dir",
            broken.to_str().unwrap(),
            "--bin",
            missing.to_str().unwrap(),
        ],
        None,
        DEADLINE,
    );
    assert_eq!(code(&out.status), 0, "install: {}", text(&out.stderr));
    let out = verify(&broken, &runtime);
    assert!(
        !out.status.success() && text(&out.stderr).contains("nowhere/hookd"),
        "systemd-analyze verify should fail on a missing ExecStart binary ({}): {}",
        out.status,
        text(&out.stderr)
    );
}

#[test]
fn install_defaults_to_this_binary_and_the_xdg_config_folder() {
    let sb = Sandbox::new();
    let config_home = sb.p("xdg");
    let runtime = sb.p("runtime");
    let _manager = a_user_manager_in(&runtime);
    let mut cmd = Command::new(BIN);
    // --no-enable: no systemctl is run (the user's own manager is never touched by a test).
    cmd.args(["install", "--no-enable"])
        .env("XDG_CONFIG_HOME", &config_home)
        .env("XDG_RUNTIME_DIR", &runtime);
    let out = run_with_deadline(cmd, None, DEADLINE);
    assert_eq!(code(&out.status), 0, "install: {}", text(&out.stderr));
    let units = config_home.join("systemd/user");
    let service = fs::read_to_string(units.join("hookd.service")).unwrap();
    let bin = fs::canonicalize(BIN).unwrap();
    let exec = service
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .unwrap_or_else(|| panic!("no ExecStart in:\n{service}"));
    let exec_bin = exec
        .strip_suffix(" serve")
        .unwrap_or_else(|| panic!("{exec}"));
    assert_eq!(fs::canonicalize(exec_bin).unwrap(), bin, "{service}");
    assert!(units.join("hookd.socket").is_file());
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&units.join("hookd.service").display().to_string()),
        "{stdout}"
    );
    assert!(
        stdout.ends_with(
            "now run: systemctl --user daemon-reload && systemctl --user enable --now hookd.socket\n"
        ),
        "{stdout}"
    );
    assert!(
        text(&out.stderr).contains(&format!(
            "warning: nothing answers on {} yet",
            runtime.join("hookd/hookd.sock").display()
        )),
        "{}",
        text(&out.stderr)
    );
}

/// Stands in for a systemd user manager in `runtime`: the socket `systemctl --user` reaches it by,
/// `$XDG_RUNTIME_DIR/systemd/private` (install asks systemctl nothing where there is none).
fn a_user_manager_in(runtime: &Path) -> std::os::unix::net::UnixListener {
    fs::create_dir_all(runtime.join("systemd")).unwrap();
    std::os::unix::net::UnixListener::bind(runtime.join("systemd/private")).unwrap()
}

/// `hookd install` (no `--dir`) with a `systemctl` of the test's own first on PATH, which logs what it
/// is asked and, by `mode`, fails as it does with no user manager (`fail`), succeeds (`quiet`), or
/// succeeds and starts the daemon on the socket as socket activation would (`start`). Returns install's
/// output, what systemctl was asked, and the pid of a daemon it started.
fn install_with_systemctl(
    sb: &Sandbox,
    mode: &str,
    manager: bool,
) -> (std::process::Output, String, Option<i32>) {
    let bin_dir = sb.p("fake-bin");
    fs::create_dir_all(&bin_dir).unwrap();
    let log = sb.p("systemctl.log");
    let pid_file = sb.p("daemon.pid");
    let runtime = sb.p("runtime");
    let _manager = manager.then(|| a_user_manager_in(&runtime));
    let config_home = sb.p("xdg");
    fs::create_dir_all(config_home.join("hookd")).unwrap();
    fs::write(config_home.join("hookd/hooks.toml"), "# no hooks\n").unwrap();
    let script = format!(
        "#!/bin/sh\necho \"$*\" >> '{log}'\ncase '{mode}' in\n  fail) echo 'Failed to connect to bus: No medium found' >&2; exit 1 ;;\n  start) case \"$*\" in *'enable --now hookd.socket'*) '{bin}' serve >'{daemon_log}' 2>&1 </dev/null & echo $! > '{pid}' ;; esac ;;\nesac\nexit 0\n",
        log = log.display(),
        bin = BIN,
        daemon_log = sb.p("daemon.log").display(),
        pid = pid_file.display(),
    );
    let fake = bin_dir.join("systemctl");
    fs::write(&fake, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new(BIN);
    cmd.arg("install")
        .env("PATH", path)
        .env("HOME", sb.path())
        .env("XDG_CONFIG_HOME", &config_home)
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("XDG_STATE_HOME", sb.p("state"));
    let out = run_with_deadline(cmd, None, Duration::from_secs(60));
    let asked = fs::read_to_string(&log).unwrap_or_default();
    let pid = fs::read_to_string(&pid_file)
        .ok()
        .and_then(|p| p.trim().parse().ok());
    (out, asked, pid)
}

/// A daemon a test's systemctl started, stopped and reaped... by pid, on drop.
struct StartedBySystemctl(Option<i32>);

impl Drop for StartedBySystemctl {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
}

#[test]
fn install_enables_the_socket_unit_and_says_when_nothing_answers() {
    // The socket enabled, and the daemon answering on it: nothing to say.
    let sb = Sandbox::new();
    let (out, asked, pid) = install_with_systemctl(&sb, "start", true);
    let _daemon = StartedBySystemctl(pid);
    let stderr = text(&out.stderr);
    assert_eq!(code(&out.status), 0, "{stderr}");
    assert_eq!(
        asked, "--user daemon-reload\n--user enable --now hookd.socket\n",
        "what systemctl was asked"
    );
    let stdout = text(&out.stdout);
    assert!(stdout.contains("enabled hookd.socket"), "{stdout}");
    assert!(!stdout.contains("now run"), "{stdout}");
    assert!(!stderr.contains("warning"), "{stderr}");

    // Enabled, but nothing answers: said, with where to look.
    let sb = Sandbox::new();
    let (out, _, _) = install_with_systemctl(&sb, "quiet", true);
    let stderr = text(&out.stderr);
    assert_eq!(code(&out.status), 0, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "warning: nothing answers on {} yet",
            sb.p("runtime/hookd/hookd.sock").display()
        )) && stderr.contains("systemctl --user status hookd.socket hookd says why"),
        "{stderr}"
    );

    // No user manager: said, and the steps printed as before.
    let sb = Sandbox::new();
    let (out, asked, _) = install_with_systemctl(&sb, "fail", true);
    let stderr = text(&out.stderr);
    assert_eq!(code(&out.status), 0, "{stderr}");
    assert_eq!(asked, "--user daemon-reload\n");
    assert!(
        stderr.contains("warning: hookd.socket not enabled: systemctl --user daemon-reload failed (exit status: 1): Failed to connect to bus: No medium found"),
        "{stderr}"
    );
    assert!(
        text(&out.stdout).ends_with(
            "now run: systemctl --user daemon-reload && systemctl --user enable --now hookd.socket\n"
        ),
        "{}",
        text(&out.stdout)
    );
    assert!(stderr.contains("warning: nothing answers on"), "{stderr}");
}

/// Where no user manager runs (a container; `su -`, or ssh without lingering: no
/// `$XDG_RUNTIME_DIR/systemd/private`, or no `XDG_RUNTIME_DIR` at all), install asks systemctl nothing,
/// which could only fail with "Failed to connect to bus", says why, and prints what to do instead, each
/// as the exact line to run: lingering, or `hookd serve` without systemd.
#[test]
fn install_without_a_user_manager_says_what_to_do_instead() {
    let sb = Sandbox::new();
    let (out, asked, _) = install_with_systemctl(&sb, "fail", false);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(code(&out.status), 0, "{stderr}");
    assert_eq!(asked, "", "systemctl was asked, with no manager to answer");
    assert!(
        stderr.contains(&format!(
            "warning: hookd.socket not enabled: no systemd user manager here: {} is not there",
            sb.p("runtime/systemd/private").display()
        )),
        "{stderr}"
    );
    assert!(!stdout.contains("now run: systemctl"), "{stdout}");
    let bin = fs::canonicalize(BIN).unwrap();
    let uid = nix::unistd::getuid();
    assert!(
        stdout.contains("loginctl enable-linger ")
            && stdout.contains(&format!(
                "&& export XDG_RUNTIME_DIR=/run/user/{uid} && {} install\n",
                bin.display()
            )),
        "{stdout}"
    );
    let state = sb.p("state/hookd");
    assert!(
        stdout.contains(&format!(
            "mkdir -p {} && nohup {} serve >>{}/serve.log 2>&1 </dev/null &\n",
            state.display(),
            bin.display(),
            state.display()
        )),
        "{stdout}"
    );
    assert!(stdout.contains("\"Without systemd\""), "{stdout}");

    // The line runs as printed, and starts a daemon that answers: no step the docs do not name.
    let line = stdout
        .lines()
        .find(|line| line.contains("nohup"))
        .unwrap()
        .trim()
        .to_string();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "{line} echo $! > {}",
            sb.p("started.pid").display()
        ))
        .env("XDG_RUNTIME_DIR", sb.p("runtime"))
        .env("XDG_STATE_HOME", sb.p("state"))
        .env("XDG_CONFIG_HOME", sb.p("xdg"))
        .env("HOME", sb.path());
    let out = run_with_deadline(cmd, None, DEADLINE);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    let _daemon = StartedBySystemctl(
        fs::read_to_string(sb.p("started.pid"))
            .ok()
            .and_then(|pid| pid.trim().parse().ok()),
    );
    let socket = sb.p("runtime/hookd/hookd.sock");
    wait_until(READY, "the daemon started as install said", || {
        run_hookd(
            &["status", "--socket", socket.to_str().unwrap()],
            None,
            DEADLINE,
        )
        .status
        .success()
    });

    // No XDG_RUNTIME_DIR at all (su -, cron): said as such.
    let sb = Sandbox::new();
    let mut cmd = Command::new(BIN);
    cmd.args(["install", "--no-enable"])
        .env("XDG_CONFIG_HOME", sb.p("xdg"))
        .env("HOOKD_SOCKET", sb.p("nobody.sock"))
        .env_remove("XDG_RUNTIME_DIR");
    let out = run_with_deadline(cmd, None, DEADLINE);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("no systemd user manager here: XDG_RUNTIME_DIR is not set"),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stdout).contains("loginctl enable-linger"));
}
