//! Where the relays and the other clients find the daemon, and how long they wait for it: an
//! agent started without `XDG_RUNTIME_DIR` (`su -`, `sudo -u`, cron) still reaches the daemon serving in
//! `/run/user/$UID` or `/tmp/hookd-$UID`; a relay waits for a daemon that is restarting; and under
//! socket activation a daemon killed with SIGKILL still decides the relay's next call. Each through all
//! three relays: `hookd relay`, `hookd-relay` and `hookd-relay-lite`.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

use crate::common::*;

const T: Duration = Duration::from_secs(60);

/// Settings whose one hook refuses every tool call, written inline (no script file: the namespace test
/// hides the sandbox's own path).
const REFUSING: &str = "[[hooks.PreToolUse]]\nname = \"no\"\n\
                        command = \"cat >/dev/null; echo 'not today' >&2; exit 2\"\n";

/// A Claude Code tool call the hook refuses.
const RM: &str = r#"{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/tmp","tool_name":"Bash","tool_input":{"command":"rm -rf ~"}}"#;

/// The three relays, each as its program and the words before its options.
fn relays() -> [(&'static str, &'static [&'static str]); 3] {
    [(BIN, &["relay"]), (RELAY_BIN, &[]), (lite_relay(), &[])]
}

/// Claude Code's refusal of the tool call, as the relay writes it on stdout, with the hook's reason.
fn assert_denied(said: &Said, what: &str) {
    assert_eq!(said.code, 0, "{what}: {said:?}");
    let answer: Value = serde_json::from_str(said.stdout.trim())
        .unwrap_or_else(|e| panic!("{what}: no answer on stdout ({e}): {said:?}"));
    let specific = &answer["hookSpecificOutput"];
    assert_eq!(specific["permissionDecision"], "deny", "{what}: {said:?}");
    assert!(
        specific["permissionDecisionReason"]
            .as_str()
            .is_some_and(|reason| reason.contains("not today")),
        "{what}: the guard's reason, not the relay's own: {said:?}"
    );
}

/// A relay started on `RM` and left running: its stdin written and closed, its output kept.
fn spawn_relay(program: &str, words: &[&str], args: &[&str], state: &Path) -> Child {
    let mut child = Command::new(program)
        .args(words)
        .args(args)
        .env("XDG_STATE_HOME", state)
        .env_remove("HOOKD_SOCKET")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {program}: {e}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(RM.as_bytes())
        .unwrap();
    child
}

/// What a relay started by [`spawn_relay`] said, once it exits (by a deadline).
fn said_by(mut child: Child) -> Said {
    let deadline = Instant::now() + T;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the relay did not answer within {T:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    Said {
        code: code(&status),
        stdout,
        stderr,
    }
}

/// Whether process `pid` is asleep in `nanosleep`: the relay between two looks for its daemon.
fn sleeping(pid: u32) -> bool {
    #[cfg(target_arch = "x86_64")]
    const SLEEPS: [&str; 2] = ["35", "230"];
    #[cfg(target_arch = "aarch64")]
    const SLEEPS: [&str; 2] = ["101", "115"];
    std::fs::read_to_string(format!("/proc/{pid}/syscall"))
        .is_ok_and(|said| said.split(' ').next().is_some_and(|n| SLEEPS.contains(&n)))
}

/// Waits until a daemon accepts and answers on `socket`.
fn wait_answering(socket: &Path) {
    wait_until(READY, "the daemon to answer", || {
        UnixStream::connect(socket).is_ok()
    });
    let status = Client::connect(socket).request(&json!({"op": "status", "id": 1}));
    assert_eq!(status["ok"], true, "{status}");
}

#[test]
fn the_relay_waits_for_a_daemon_that_is_restarting() {
    let sb = Sandbox::new();
    sb.settings(REFUSING);
    let socket = sb.socket();
    let state = sb.p("state");
    let mut daemon = ChildGuard(serve_command(&sb, "daemon-0.log").spawn().unwrap());
    wait_answering(&socket);
    for (n, (program, words)) in relays().into_iter().enumerate() {
        // Stopped (its socket removed: nothing there) or killed (its socket left, refusing).
        let signal = [Signal::SIGTERM, Signal::SIGKILL][n % 2];
        kill(Pid::from_raw(daemon.0.id() as i32), signal).unwrap();
        daemon.0.wait().unwrap();
        assert_eq!(socket.exists(), signal == Signal::SIGKILL, "{signal}");
        let mut relay = spawn_relay(
            program,
            words,
            &[
                "--agent",
                "claude-code",
                "--socket",
                socket.to_str().unwrap(),
            ],
            &state,
        );
        // It found no daemon and waits for one (without the wait, it answered fail-open at once).
        let pid = relay.id();
        wait_until(T, "the relay to wait for the daemon, or answer", || {
            sleeping(pid) || relay.try_wait().unwrap().is_some()
        });
        if relay.try_wait().unwrap().is_some() {
            panic!(
                "{program} answered without waiting for the daemon: {:?}",
                said_by(relay)
            );
        }
        daemon = ChildGuard(
            serve_command(&sb, &format!("daemon-{}.log", n + 1))
                .spawn()
                .unwrap(),
        );
        assert_denied(&said_by(relay), &format!("{program} after {signal}"));
    }
}

/// `hookd serve` started on `listener` as systemd starts it for socket activation: the socket as
/// descriptor 3, `LISTEN_FDS=1`, `LISTEN_PID` its own pid.
fn activated(sb: &Sandbox, listener: &UnixListener, log: &str) -> ChildGuard {
    let log = std::fs::File::create(sb.p(log)).unwrap();
    let socket = listener.as_raw_fd();
    let mut command = Command::new("sh");
    command
        .args([
            "-c",
            "LISTEN_FDS=1 LISTEN_PID=$$ exec \"$0\" \"$@\"",
            BIN,
            "serve",
        ])
        .arg("--config")
        .arg(sb.config())
        // A socket it must not bind: it serves on the one it is given.
        .arg("--socket")
        .arg(sb.socket())
        .env("HOOKD_LOG", "debug")
        .env("XDG_STATE_HOME", sb.p("state"))
        .env_remove("HOOKD_SOCKET")
        .env_remove("HOOKD_CONFIG")
        .env_remove("JOURNAL_STREAM")
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log);
    for var in SYSTEMD_VARS {
        command.env_remove(var);
    }
    keep_home(&mut command, sb.path());
    // SAFETY: only fcntl and dup2, which are async-signal-safe, run between fork and exec.
    unsafe {
        command.pre_exec(move || {
            cloexec_from(3);
            if socket == 3 {
                nix::libc::fcntl(3, nix::libc::F_SETFD, 0);
            } else {
                nix::libc::dup2(socket, 3);
            }
            Ok(())
        });
    }
    ChildGuard(command.spawn().unwrap())
}

/// Whether a connection waits in `listener`'s queue, not yet accepted.
fn pending(listener: &UnixListener) -> bool {
    let mut poll = nix::libc::pollfd {
        fd: listener.as_raw_fd(),
        events: nix::libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one pollfd, which poll reads and writes.
    unsafe { nix::libc::poll(&mut poll, 1, 0) == 1 }
}

#[test]
fn kill_9_under_socket_activation_the_relays_next_call_is_decided_by_the_guard() {
    let sb = Sandbox::new();
    sb.settings(REFUSING);
    let folder = sb.p("sd");
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&folder)
        .unwrap();
    let socket = folder.join("hookd.sock");
    // The test is systemd: it holds the listening socket for good, across the service's restarts.
    let listener = UnixListener::bind(&socket).unwrap();
    let state = sb.p("state");
    let mut daemon = activated(&sb, &listener, "daemon-0.log");
    for (n, (program, words)) in relays().into_iter().enumerate() {
        wait_answering(&socket);
        let args = [
            "--agent",
            "claude-code",
            "--socket",
            socket.to_str().unwrap(),
        ];
        assert_denied(
            &said_by(spawn_relay(program, words, &args, &state)),
            &format!("{program}, the daemon up"),
        );
        kill(Pid::from_raw(daemon.0.id() as i32), Signal::SIGKILL).unwrap();
        daemon.0.wait().unwrap();
        // The next call: its connection queues on the socket systemd keeps.
        let relay = spawn_relay(program, words, &args, &state);
        wait_until(T, "the relay's connection to queue", || pending(&listener));
        // systemd starts the service again on the same socket.
        daemon = activated(&sb, &listener, &format!("daemon-{}.log", n + 1));
        assert_denied(&said_by(relay), &format!("{program} after kill -9"));
    }
}

/// Whether this process can make a mount namespace of its own (root; else through a user namespace).
fn mount_namespace_words() -> Option<Vec<&'static str>> {
    let words: Vec<&str> = if nix::unistd::geteuid().is_root() {
        vec!["--mount", "--propagation", "private"]
    } else {
        vec![
            "--user",
            "--map-current-user",
            "--mount",
            "--propagation",
            "private",
        ]
    };
    let mut probe = Command::new("unshare");
    probe
        .args(&words)
        .args(["sh", "-c", "mount -t tmpfs t /run"]);
    let out = run_with_deadline(probe, None, T);
    out.status.success().then_some(words)
}

/// Run inside a mount namespace of the test's own, where `/run` and `/tmp` are empty tmpfs, so that
/// `/run/user/$UID` and `/tmp/hookd-$UID` are the test's and never the user's: the sandbox is bound on
/// `/run/sb`; a daemon serves in `/run/user/$UID` (phase a) then in `/tmp/hookd-$UID` (phase b), and the
/// three relays and `hookd status` are run without `XDG_RUNTIME_DIR` (a) or with one where no daemon is
/// (b). What each said is left in `/run/sb/PHASE-N.{out,err,code}`.
const IN_THE_NAMESPACE: &str = r#"
set -eu
sb=$1 bin=$2 relay=$3 lite=$4
uid=$(id -u)
mount -t tmpfs -o mode=0755 hookd-test /run
mkdir /run/sb
mount --bind "$sb" /run/sb
mount -t tmpfs -o mode=1777 hookd-test /tmp
mkdir -p /run/user
mkdir -m 0700 /run/user/$uid /run/sb/elsewhere
export XDG_STATE_HOME=/run/sb/state HOME=/run/sb
unset HOOKD_SOCKET HOOKD_CONFIG
ask() {
    phase=$1 n=0
    shift
    for program in "$bin relay" "$relay" "$lite"; do
        n=$((n + 1))
        code=0
        env "$@" $program --agent claude-code < /run/sb/rm.json > /run/sb/$phase-$n.out 2> /run/sb/$phase-$n.err || code=$?
        echo $code > /run/sb/$phase-$n.code
    done
    code=0
    env "$@" "$bin" status --json > /run/sb/$phase-status.out 2> /run/sb/$phase-status.err || code=$?
    echo $code > /run/sb/$phase-status.code
}
serve() {
    socket=$1
    shift
    env "$@" "$bin" serve --config /run/sb/conf/hooks.toml > /run/sb/serve-$phase.log 2>&1 &
    pid=$!
    tries=0
    until [ -S "$socket" ]; do
        tries=$((tries + 1))
        [ $tries -lt 3000 ] || { echo "no daemon on $socket" >&2; kill $pid; exit 9; }
        sleep 0.01
    done
}
phase=a
serve /run/user/$uid/hookd/hookd.sock XDG_RUNTIME_DIR=/run/user/$uid
ask a -u XDG_RUNTIME_DIR
kill $pid
wait $pid || true
phase=b
serve /tmp/hookd-$uid/hookd.sock -u XDG_RUNTIME_DIR
ask b XDG_RUNTIME_DIR=/run/sb/elsewhere
kill $pid
wait $pid || true
ask c -u XDG_RUNTIME_DIR
"#;

#[test]
fn without_xdg_runtime_dir_every_client_finds_the_daemon() {
    let words = mount_namespace_words();
    if !require(
        words.is_some(),
        "unshare --mount (root, or user namespaces) to give /run/user and /tmp of the test's own",
    ) {
        return;
    }
    let sb = Sandbox::new();
    sb.settings(REFUSING);
    std::fs::write(sb.p("rm.json"), RM).unwrap();
    // The programs inside the sandbox (bound on /run/sb there): where they were built may be under
    // /tmp or /run, which the namespace hides (a checkout in /tmp ran no program at all). Linked, not
    // copied, where the file system allows, so that no write descriptor of them is open to make them
    // text file busy; the lite relay hands over to the hookd-relay beside it.
    let bin = sb.p("bin");
    std::fs::create_dir(&bin).unwrap();
    for (from, name) in [
        (BIN, "hookd"),
        (RELAY_BIN, "hookd-relay"),
        (lite_relay(), "hookd-relay-lite"),
    ] {
        if std::fs::hard_link(from, bin.join(name)).is_err() {
            std::fs::copy(from, bin.join(name)).unwrap();
        }
    }
    let mut command = Command::new("unshare");
    command
        .args(words.unwrap())
        .args(["sh", "-c", IN_THE_NAMESPACE, "sh"])
        .arg(sb.path())
        .args([
            "/run/sb/bin/hookd",
            "/run/sb/bin/hookd-relay",
            "/run/sb/bin/hookd-relay-lite",
        ]);
    let out = run_with_deadline(command, None, T);
    assert!(
        out.status.success(),
        "the namespace's script failed: {}\n{}",
        text(&out.stderr),
        sb.read("serve-a.log")
    );
    for phase in ["a", "b"] {
        for n in 1..=3 {
            let said = Said {
                code: sb
                    .read(&format!("{phase}-{n}.code"))
                    .trim()
                    .parse()
                    .unwrap(),
                stdout: sb.read(&format!("{phase}-{n}.out")),
                stderr: sb.read(&format!("{phase}-{n}.err")),
            };
            assert_denied(&said, &format!("phase {phase}, relay {n}"));
        }
        let status: Value = serde_json::from_str(&sb.read(&format!("{phase}-status.out")))
            .unwrap_or_else(|e| {
                panic!(
                    "phase {phase}: hookd status found no daemon ({e}): {}",
                    sb.read(&format!("{phase}-status.err"))
                )
            });
        assert_eq!(sb.read(&format!("{phase}-status.code")).trim(), "0");
        assert!(status["generation"].is_number(), "{status}");
    }
    // Phase c: both daemons stopped. Each relay looked everywhere, waited for them to come back (each
    // served there), and lets the agent go on, saying so alike.
    let said: Vec<(String, String, String)> = (1..=3)
        .map(|n| {
            (
                sb.read(&format!("c-{n}.code")),
                sb.read(&format!("c-{n}.out")),
                sb.read(&format!("c-{n}.err")),
            )
        })
        .collect();
    assert_eq!(said[0], said[1], "hookd relay and hookd-relay");
    assert_eq!(said[1], said[2], "hookd-relay and hookd-relay-lite");
    let (code, stdout, stderr) = &said[0];
    assert_eq!((code.trim(), stdout.as_str()), ("0", ""), "{said:?}");
    for told in ["/run/user/", "/tmp/hookd-", "waited", "fail-open"] {
        assert!(stderr.contains(told), "{told}: {stderr}");
    }
}
