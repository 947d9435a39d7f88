//! The daemon's life (contract sections 2, 11, 13): the socket's folder and modes, a second daemon, a
//! stale socket file, and a clean shutdown on SIGTERM / SIGINT with fires in flight.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::Duration;

use crate::common::*;
use nix::sys::signal::Signal;
use serde_json::json;

#[test]
fn socket_folder_is_0700_and_socket_0600() {
    let sb = Sandbox::new();
    sb.settings("[defaults]\ntimeout = 5\n");
    let d = Daemon::start(sb);
    let dir_mode = fs::metadata(d.socket.parent().unwrap())
        .unwrap()
        .permissions()
        .mode()
        & 0o7777;
    assert_eq!(dir_mode, 0o700, "socket folder mode {dir_mode:o}");
    let sock_mode = fs::metadata(&d.socket).unwrap().permissions().mode() & 0o7777;
    assert_eq!(sock_mode, 0o600, "socket mode {sock_mode:o}");
}

#[test]
fn missing_settings_file_serves_with_no_hooks() {
    let sb = Sandbox::new();
    let d = Daemon::start(sb);
    let r = d.fire("PreToolUse", bash_event());
    assert_eq!(r["hooks"], json!([]), "{r}");
    assert_eq!(r["refused"], false, "{r}");
}

#[test]
fn second_daemon_on_a_live_socket_is_refused() {
    let sb = Sandbox::new();
    sb.settings("[[hooks.PreToolUse]]\nname = \"first\"\ncommand = \"echo first\"\n");
    let d = Daemon::start(sb);
    let mut second = serve_command(&d.sb, "second.log");
    let mut guard = ChildGuard(second.spawn().unwrap());
    let child = &mut guard.0;
    let mut status = None;
    wait_until(Duration::from_secs(10), "the second daemon to exit", || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    let log = d.sb.read("second.log");
    assert_eq!(status.unwrap().code(), Some(1), "second daemon: {log}");
    assert!(
        log.contains("already"),
        "second daemon does not say one is already running: {log}"
    );
    // The first one still serves, on its socket.
    assert!(
        d.socket.exists(),
        "the second daemon removed the live socket"
    );
    assert_eq!(adds(&d.fire("PreToolUse", bash_event())), vec!["first"]);
}

#[test]
fn stale_socket_file_is_replaced() {
    let sb = Sandbox::new();
    sb.settings("[[hooks.PreToolUse]]\nname = \"h\"\ncommand = \"echo served\"\n");
    fs::DirBuilder::new()
        .mode(0o700)
        .create(sb.p("run"))
        .unwrap();
    drop(UnixListener::bind(sb.socket()).unwrap());
    assert!(sb.socket().exists(), "test set-up: the stale socket file");
    let d = Daemon::start(sb);
    assert_eq!(adds(&d.fire("PreToolUse", bash_event())), vec!["served"]);
    assert_eq!(d.status()["pid"], d.pid());
}

/// Two daemons starting at once on one stale socket: the one that does not hold `<socket>.lock` must not
/// touch the socket, or it could remove the socket the other has just bound. The test holds the lock
/// itself, as a daemon still starting would, and starts one with a stale socket in place.
#[test]
fn a_daemon_starting_beside_one_that_holds_the_lock_leaves_the_socket_alone() {
    let sb = Sandbox::new();
    fs::DirBuilder::new()
        .mode(0o700)
        .create(sb.p("run"))
        .unwrap();
    drop(UnixListener::bind(sb.socket()).unwrap());
    let lock_file = fs::File::create(sb.p("run/hookd.sock.lock")).unwrap();
    let lock = nix::fcntl::Flock::lock(lock_file, nix::fcntl::FlockArg::LockExclusiveNonblock)
        .expect("taking the lock");
    let mut guard = ChildGuard(serve_command(&sb, "second.log").spawn().unwrap());
    let mut status = None;
    wait_until(Duration::from_secs(10), "the daemon to exit", || {
        status = guard.0.try_wait().unwrap();
        status.is_some()
    });
    let log = sb.read("second.log");
    assert_eq!(status.unwrap().code(), Some(1), "{log}");
    assert!(
        log.contains("already running, or starting"),
        "the daemon does not say why: {log}"
    );
    assert!(
        sb.socket().exists(),
        "the stale socket was removed without the lock"
    );
    // With the lock released, a daemon starts and replaces the stale socket.
    drop(lock);
    let d = Daemon::start(sb);
    assert_eq!(d.status()["pid"], d.pid());
}

#[test]
fn sigterm_lets_fires_in_flight_finish() {
    let sb = Sandbox::new();
    sb.script("one.sh", "touch @DIR@/started.$$\nsleep 1\necho done");
    sb.settings("[[hooks.PreToolUse]]\nname = \"one\"\ncommand = \"@DIR@/one.sh\"\n");
    let mut d = Daemon::start(sb);
    let mut clients: Vec<Client> = (0..3)
        .map(|i| {
            let mut c = d.connect();
            c.send(&json!({"op": "fire", "id": i, "moment": "PreToolUse", "event": bash_event()}));
            c
        })
        .collect();
    let started = || {
        fs::read_dir(d.sb.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("started.")
            })
            .count()
    };
    let mut idle = d.connect();
    wait_until(RESPONSE, "three hooks running", || started() == 3);
    d.signal(Signal::SIGTERM);
    // The daemon stops accepting; once it has (the signal is handled asynchronously), a new fire on a
    // connection that is still open is not run while the three drain: it is answered `shutting_down`,
    // or its connection is closed.
    wait_until(
        Duration::from_millis(1500),
        "the daemon to stop accepting connections",
        || UnixStream::connect(&d.socket).is_err(),
    );
    let late = json!({"op": "fire", "id": "late", "moment": "PreToolUse", "event": bash_event()});
    if idle.try_send(&late).is_err() {
        // Closed already.
    } else if let Some(line) = idle.read_line() {
        let r: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(r["ok"], false, "a fire sent after SIGTERM was run: {r}");
        assert_eq!(r["error"]["kind"], "shutting_down", "{r}");
        assert_eq!(r["id"], "late", "{r}");
    }
    for (i, c) in clients.iter_mut().enumerate() {
        let r = c.recv();
        check_fire_shape(&r);
        assert_eq!(r["id"], i, "{r}");
        assert_eq!(
            hook(&r, "one")["outcome"],
            "adds",
            "the hook was not let finish: {r}"
        );
        assert_eq!(adds(&r), vec!["done"], "{r}");
    }
    let status = d.wait_exit(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0), "exit after SIGTERM: {status}");
    assert!(!d.socket.exists(), "socket file left behind after shutdown");
}

#[test]
fn sigint_exits_cleanly() {
    let sb = Sandbox::new();
    sb.settings("[defaults]\ntimeout = 5\n");
    let mut d = Daemon::start(sb);
    d.signal(Signal::SIGINT);
    let status = d.wait_exit(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0), "exit after SIGINT: {status}");
    assert!(!d.socket.exists(), "socket file left behind after shutdown");
}

#[test]
fn signals_that_would_end_it_are_absorbed_and_sigquit_stops_it_cleanly() {
    // SIGUSR1 ended the daemon on the spot and left its socket behind.
    let sb = Sandbox::new();
    sb.settings("[[hooks.PreToolUse]]\nname = \"hi\"\ncommand = \"echo hi\"\n");
    let mut d = Daemon::start(sb);
    let pid = nix::unistd::Pid::from_raw(d.pid() as i32);
    let realtime = nix::libc::SIGRTMIN() + 3;
    for number in [
        nix::libc::SIGUSR1,
        nix::libc::SIGUSR2,
        nix::libc::SIGALRM,
        nix::libc::SIGVTALRM,
        nix::libc::SIGPROF,
        nix::libc::SIGIO,
        nix::libc::SIGPWR,
        nix::libc::SIGXCPU,
        // Found attacking the fixes: these killed the daemon (SYS, TRAP, ABRT, FPE, ILL) or
        // stopped it (TSTP, TTIN, TTOU).
        nix::libc::SIGSYS,
        nix::libc::SIGTRAP,
        nix::libc::SIGABRT,
        nix::libc::SIGFPE,
        nix::libc::SIGILL,
        nix::libc::SIGTSTP,
        nix::libc::SIGTTIN,
        nix::libc::SIGTTOU,
        realtime,
    ] {
        // SAFETY: kill(2) with a valid pid and signal number.
        assert_eq!(unsafe { nix::libc::kill(pid.as_raw(), number) }, 0);
        // Answered after each one: the daemon is alive and serving.
        let r = d.fire("PreToolUse", bash_event());
        assert_eq!(adds(&r), vec!["hi"], "after signal {number}: {r}");
    }
    wait_until(
        Duration::from_secs(5),
        "the realtime signal to be logged",
        || d.log_text().contains(&format!("signal={realtime}")),
    );
    d.signal(Signal::SIGQUIT);
    let status = d.wait_exit(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0), "exit after SIGQUIT: {status}");
    assert!(!d.socket.exists(), "socket file left behind after SIGQUIT");
}

#[test]
fn signal_as_soon_as_the_socket_accepts() {
    // Ready means the socket accepts a connection (what systemd's socket users and scripts see); from
    // then on SIGTERM must be a clean shutdown, not the default action that kills the process and leaves
    // the socket file. The window is short: connect in a tight loop (bounded by a deadline) and signal
    // the moment it succeeds, over several rounds.
    for round in 0..10 {
        let sb = Sandbox::new();
        sb.settings("[defaults]\ntimeout = 5\n");
        let mut guard = ChildGuard(serve_command(&sb, "daemon.log").spawn().unwrap());
        let child = &mut guard.0;
        let deadline = std::time::Instant::now() + READY;
        while UnixStream::connect(sb.socket()).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "round {round}: never ready"
            );
            assert!(
                child.try_wait().unwrap().is_none(),
                "round {round}: exited early: {}",
                sb.read("daemon.log")
            );
        }
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(child.id() as i32),
            Signal::SIGTERM,
        )
        .unwrap();
        let mut status = None;
        wait_until(Duration::from_secs(15), "the daemon to exit", || {
            status = child.try_wait().unwrap();
            status.is_some()
        });
        let status = status.unwrap();
        let log = sb.read("daemon.log");
        assert_eq!(
            status.code(),
            Some(0),
            "round {round}: exit after SIGTERM: {status}; log:\n{log}"
        );
        assert!(
            !sb.socket().exists(),
            "round {round}: socket file left behind; log:\n{log}"
        );
    }
}
