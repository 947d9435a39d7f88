//! Security (contract sections 3, 6 and 11), from the angles the other test files leave open: what a
//! refused peer gets and leaves behind, the socket's modes whatever the umask, settings files others could
//! write or own (at start, at reload, behind a symlink), event data that tries to become a command or a
//! variable name, descriptors a hook could inherit, event bodies in the log, and systemd's variables.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::common::*;
use nix::sys::signal::Signal;
use serde_json::{Value, json};

/// How long the daemon may take to settle, exit, or log something: a safety net, not a speed assertion.
const SETTLE: Duration = Duration::from_secs(10);

/// A string found nowhere else: event data to look for where it must not be.
fn marker(what: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("hookdmark{what}{}x{nanos}", std::process::id())
}

/// Writes the settings file with `mode` (and, when given, owned by `owner`) before it is renamed into
/// place, so that a watching daemon never sees it otherwise.
fn put_settings(sb: &Sandbox, toml: &str, mode: u32, owner: Option<u32>) {
    let tmp = sb.p("hooks.toml.new");
    fs::write(&tmp, sb.expand(toml)).expect("writing the settings file");
    fs::set_permissions(&tmp, fs::Permissions::from_mode(mode)).expect("chmod");
    if let Some(uid) = owner {
        std::os::unix::fs::chown(&tmp, Some(uid), Some(uid)).expect("chown");
    }
    fs::rename(&tmp, sb.config()).expect("renaming the settings file into place");
}

/// A hook on PreToolUse that adds `word`.
fn says(word: &str) -> String {
    format!("[[hooks.PreToolUse]]\nname = \"say\"\ncommand = \"echo {word}\"\n")
}

/// Runs `hookd serve` on the sandbox expecting it to refuse to start: exit 1, no socket bound. Returns
/// its log.
fn serve_refused(sb: &Sandbox, log: &str) -> String {
    let mut guard = ChildGuard(
        serve_command(sb, log)
            .spawn()
            .expect("spawning hookd serve"),
    );
    let mut status = None;
    wait_until(SETTLE, "hookd serve to refuse to start", || {
        status = guard.0.try_wait().expect("try_wait");
        status.is_some()
    });
    let text = sb.read(log);
    assert_eq!(status.unwrap().code(), Some(1), "hookd serve: {text}");
    assert!(
        !sb.socket().exists(),
        "a daemon that refused its settings bound its socket: {text}"
    );
    text
}

/// The `errors` of a refused reload, in one string.
fn reload_refused(d: &Daemon) -> String {
    let r = d.reload();
    assert_eq!(r["ok"], false, "the reload was taken: {r}");
    assert_eq!(r["error"]["kind"], "invalid_settings", "{r}");
    r["error"]["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("no `errors` list: {r}"))
        .iter()
        .map(|e| e.as_str().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every process of the process group `pgid`.
fn group_members(pgid: i32) -> Vec<i32> {
    all_pids()
        .into_iter()
        .filter(|&p| stat_fields(p).is_some_and(|f| f.get(2) == Some(&pgid.to_string())))
        .collect()
}

/// A `NAME=value` environment block (NUL-separated) as pairs.
fn env_pairs(block: &[u8]) -> Vec<(String, String)> {
    block
        .split(|b| *b == 0)
        .filter(|v| !v.is_empty())
        .map(|v| {
            let v = String::from_utf8_lossy(v);
            match v.split_once('=') {
                Some((k, val)) => (k.to_string(), val.to_string()),
                None => (v.to_string(), String::new()),
            }
        })
        .collect()
}

// ---- peers of another uid --------------------------------------------------------------------------

/// Connects `n` times as `nobody`, sends a fire each time, and reads until the daemon closes. Prints
/// `EMPTY n` when every connection was closed without a byte.
const NOBODY_CLIENT: &str = r#"
import socket, sys
path, n = sys.argv[1], int(sys.argv[2])
empty = 0
for i in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.settimeout(10)
    try:
        s.sendall(b'{"op":"fire","id":1,"moment":"PreToolUse","agent":"claude-code","event":{"tool_name":"Bash"}}\n')
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
        print("TIMEOUT", i)
        sys.exit(4)
    if data:
        print("DATA", repr(data))
        sys.exit(5)
    empty += 1
    s.close()
print("EMPTY", empty)
"#;

#[test]
fn refused_peer_gets_no_answer_runs_no_hook_leaks_nothing_and_is_logged() {
    if !require_root("a client of another uid") {
        return;
    }
    let sb = Sandbox::new();
    sb.script("ran.sh", "cat > /dev/null\necho run >> @DIR@/ran\necho ran");
    sb.settings("[[hooks.PreToolUse]]\nname = \"ran\"\ncommand = \"@DIR@/ran.sh\"\n");
    fs::set_permissions(sb.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let d = Daemon::start(sb);
    // Open the path up so that only the credential check stands between nobody and the daemon.
    d.open_to_others();
    let before = idle_fds(d.pid(), SETTLE);

    const TRIES: usize = 20;
    let mut py = as_nobody("/usr/bin/python3");
    py.args(["-I", "-c", NOBODY_CLIENT])
        .arg(&d.socket)
        .arg(TRIES.to_string());
    let out = run_with_deadline(py, None, Duration::from_secs(60));
    let stdout = text(&out.stdout);
    assert_eq!(
        stdout.trim(),
        format!("EMPTY {TRIES}"),
        "nobody's connections were not all closed without an answer: {stdout} {}",
        text(&out.stderr)
    );
    assert!(
        !d.sb.p("ran").exists(),
        "a fire sent by another user ran a hook"
    );

    // The first refusal is logged at warn with the peer's uid; the flood after it is counted, not logged
    // line by line (339 lines in 3 s).
    let refusals = |log: &str| {
        log.lines()
            .filter(|l| l.contains("refused a connection from another user"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    wait_until(SETTLE, "the refused connection to be logged", || {
        !refusals(&d.log_text()).is_empty()
    });
    let log = d.log_text();
    let logged = refusals(&log);
    assert_eq!(
        logged.len(),
        1,
        "a flood of refusals logged line by line: {log}"
    );
    assert!(
        logged[0].contains(&format!("uid={NOBODY}")) && logged[0].contains("WARN"),
        "a refusal logged without the peer's uid, or below warning: {log}"
    );

    // The refused connections left no descriptor open, and root is still served.
    wait_until(SETTLE, "the daemon's descriptors back to before", || {
        fds(d.pid()).len() == before.len()
    });
    let r = d.fire("PreToolUse", bash_event());
    assert_eq!(adds(&r), vec!["ran"], "{r}");
    assert_eq!(d.sb.read("ran"), "run\n", "the hook ran once: for root");
}

/// A stand-in daemon another user runs on a socket they bound first: it answers every request "not
/// refused".
const FAKE_DAEMON: &str = r#"
import json, os, socket, sys
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o666)
s.listen(8)
open(path + ".ready", "w").close()
while True:
    c, _ = s.accept()
    try:
        c.makefile().readline()
        c.sendall(b'{"id":1,"ok":true,"refused":false,"adds":[],"hooks":[]}\n')
    except OSError:
        pass
    c.close()
"#;

#[test]
fn a_socket_another_user_listens_on_is_not_taken_for_hookd() {
    if !require_root("a socket another user listens on") {
        return;
    }
    // Beside a hole an attack found: where the socket's folder is not private (`/tmp/hookd-$UID` made
    // first by someone else), another user's process could answer the relay "go ahead".
    let sb = Sandbox::new();
    fs::set_permissions(sb.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let shared = sb.p("shared");
    fs::create_dir(&shared).unwrap();
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o777)).unwrap();
    let socket = shared.join("hookd.sock");
    let mut fake = as_nobody("/usr/bin/python3");
    fake.args(["-I", "-c", FAKE_DAEMON]).arg(&socket);
    let _fake = ChildGuard(fake.spawn().expect("starting the fake daemon as nobody"));
    wait_until(SETTLE, "the fake daemon to listen", || {
        shared.join("hookd.sock.ready").exists()
    });
    let event = r#"{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"rm -rf /"}}"#;
    let out = run_hookd(
        &[
            "relay",
            "--fail-closed",
            "--socket",
            socket.to_str().unwrap(),
        ],
        Some(event),
        SETTLE,
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        stdout.contains("\"deny\"") || code(&out.status) == 2,
        "the relay took another user's answer: exit {:?}, stdout {stdout}, stderr {stderr}",
        out.status.code()
    );
    assert!(
        stderr.contains(&format!("belongs to uid {NOBODY}"))
            || stdout.contains(&format!("belongs to uid {NOBODY}")),
        "the relay does not say why: {stdout} {stderr}"
    );
    // `hookd status` says so too, and fails.
    let out = run_hookd(
        &["status", "--socket", socket.to_str().unwrap()],
        None,
        SETTLE,
    );
    assert_ne!(code(&out.status), 0, "status took another user's daemon");
    assert!(
        text(&out.stderr).contains("not your hookd"),
        "{}",
        text(&out.stderr)
    );
}

// ---- the socket's modes ------------------------------------------------------------------------------

/// Starts a daemon whose umask is 000.
fn start_under_umask_000(sb: Sandbox) -> Daemon {
    Daemon::start_with(sb, |cmd| unsafe {
        // Safety: umask is async-signal-safe.
        cmd.pre_exec(|| {
            nix::libc::umask(0);
            Ok(())
        });
    })
}

fn mode_of(path: &Path) -> u32 {
    fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .mode()
        & 0o7777
}

#[test]
fn socket_folder_0700_and_socket_0600_right_after_start_even_under_umask_000() {
    let uid = nix::unistd::getuid().as_raw();
    // A folder the daemon creates.
    let sb = Sandbox::new();
    sb.settings(&says("hi"));
    let d = start_under_umask_000(sb);
    let folder = d.socket.parent().unwrap();
    assert_eq!(
        mode_of(folder),
        0o700,
        "socket folder created {:o}",
        mode_of(folder)
    );
    assert_eq!(mode_of(&d.socket), 0o600, "socket {:o}", mode_of(&d.socket));
    assert_eq!(fs::metadata(&d.socket).unwrap().uid(), uid, "socket owner");
    assert_eq!(fs::metadata(folder).unwrap().uid(), uid, "folder owner");

    // A folder that exists, open to everyone: refused, and left as it was (hookd changes no folder it
    // did not create: `--socket /tmp/x.sock` must not make /tmp private).
    for mode in [0o777, 0o1777, 0o775] {
        let sb = Sandbox::new();
        sb.settings(&says("hi"));
        fs::create_dir(sb.p("run")).unwrap();
        fs::set_permissions(sb.p("run"), fs::Permissions::from_mode(mode)).unwrap();
        let log = serve_refused(&sb, "serve.log");
        assert_eq!(
            mode_of(&sb.p("run")),
            mode,
            "the socket's folder was changed from {mode:04o}: {log}"
        );
        assert!(
            log.contains("writable by others") && log.contains(&format!("{mode:04o}")),
            "the refusal does not say why: {log}"
        );
    }

    // A folder of the user's that others cannot write (0755) is used as it is.
    let sb = Sandbox::new();
    sb.settings(&says("hi"));
    fs::create_dir(sb.p("run")).unwrap();
    fs::set_permissions(sb.p("run"), fs::Permissions::from_mode(0o755)).unwrap();
    let d = start_under_umask_000(sb);
    assert_eq!(mode_of(d.socket.parent().unwrap()), 0o755);
    assert_eq!(mode_of(&d.socket), 0o600, "socket {:o}", mode_of(&d.socket));
    assert_eq!(adds(&d.fire("PreToolUse", bash_event())), vec!["hi"]);
}

// ---- the settings file's mode and owner ---------------------------------------------------------------

#[test]
fn group_or_world_writable_settings_refused_at_start() {
    for mode in [0o664, 0o620, 0o646, 0o602, 0o666] {
        let sb = Sandbox::new();
        put_settings(&sb, &says("hi"), mode, None);
        let log = serve_refused(&sb, "serve.log");
        assert!(
            log.contains("writable by group or others")
                && log.contains(&format!("mode {mode:04o}")),
            "mode {mode:04o}: the message does not say why: {log}"
        );
        assert!(
            log.contains(sb.config().to_str().unwrap()),
            "mode {mode:04o}: the message does not name the file: {log}"
        );
    }
}

#[test]
fn group_or_world_writable_settings_refused_at_reload_and_old_kept() {
    let sb = Sandbox::new();
    sb.settings(&says("v1"));
    let d = Daemon::start(sb);
    let generation = d.status()["generation"].clone();

    for (mode, word) in [(0o664, "v2"), (0o646, "v3")] {
        put_settings(&d.sb, &says(word), mode, None);
        let errors = reload_refused(&d);
        assert!(
            errors.contains("writable by group or others")
                && errors.contains(&format!("mode {mode:04o}")),
            "mode {mode:04o}: {errors}"
        );
        assert_eq!(
            adds(&d.fire("PreToolUse", bash_event())),
            vec!["v1"],
            "mode {mode:04o}: the refused file's hooks run"
        );
        let status = d.status();
        assert_eq!(status["generation"], generation, "{status}");
        assert_eq!(status["last_reload"]["ok"], false, "{status}");
    }

    // SIGHUP refuses it too.
    let refusals = || d.log_text().matches("settings not reloaded").count();
    let before = refusals();
    d.signal(Signal::SIGHUP);
    wait_until(SETTLE, "the SIGHUP reload to be refused", || {
        refusals() > before
    });
    assert_eq!(adds(&d.fire("PreToolUse", bash_event())), vec!["v1"]);

    // Fixed, it is taken.
    fs::set_permissions(d.sb.config(), fs::Permissions::from_mode(0o644)).unwrap();
    let r = d.reload();
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(adds(&d.fire("PreToolUse", bash_event())), vec!["v3"]);
}

#[test]
fn settings_owned_by_another_user_refused_at_start_and_at_reload() {
    if !require_root("settings owned by another user") {
        return;
    }
    let sb = Sandbox::new();
    put_settings(&sb, &says("theirs"), 0o644, Some(NOBODY));
    let log = serve_refused(&sb, "serve.log");
    assert!(
        log.contains(&format!("owned by uid {NOBODY}")),
        "the message does not say whose the file is: {log}"
    );

    let sb = Sandbox::new();
    sb.settings(&says("mine"));
    let d = Daemon::start(sb);
    put_settings(&d.sb, &says("theirs"), 0o644, Some(NOBODY));
    let errors = reload_refused(&d);
    assert!(
        errors.contains(&format!("owned by uid {NOBODY}")),
        "{errors}"
    );
    assert_eq!(
        adds(&d.fire("PreToolUse", bash_event())),
        vec!["mine"],
        "the other user's hooks run"
    );
    std::os::unix::fs::chown(d.sb.config(), Some(0), Some(0)).unwrap();
    let r = d.reload();
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(adds(&d.fire("PreToolUse", bash_event())), vec!["theirs"]);
}

#[test]
fn mode_of_a_symlinked_settings_file_is_its_targets() {
    // A symlink is always 0777 itself: what counts is the file it points at.
    let sb = Sandbox::new();
    fs::create_dir(sb.p("store")).unwrap();
    fs::write(sb.p("store/hooks.toml"), says("linked")).unwrap();
    fs::set_permissions(sb.p("store/hooks.toml"), fs::Permissions::from_mode(0o666)).unwrap();
    std::os::unix::fs::symlink("../store/hooks.toml", sb.config()).unwrap();
    let log = serve_refused(&sb, "serve.log");
    assert!(log.contains("mode 0666"), "{log}");

    fs::set_permissions(sb.p("store/hooks.toml"), fs::Permissions::from_mode(0o644)).unwrap();
    let d = Daemon::start(sb);
    assert_eq!(adds(&d.fire("PreToolUse", bash_event())), vec!["linked"]);
}

// ---- event data stays data ------------------------------------------------------------------------------

#[test]
fn event_data_reaches_no_command_line_and_no_variable_name() {
    let sb = Sandbox::new();
    let mark = marker("cmd");
    fs::write(sb.p("canary"), "alive").unwrap();
    // Reads its event, writes its pid, then holds (bounded) until the test has looked at its processes.
    sb.script(
        "hold.sh",
        "cat > @DIR@/stdin.$1\n\
         sleep 300 &\n\
         echo $$ > @DIR@/pid.$1\n\
         for i in $(seq 3000); do [ -e @DIR@/release ] && break; sleep 0.01; done\n\
         kill $!\n\
         echo \"held $1\"",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"shell\"\ncommand = \"@DIR@/hold.sh shell\"\ntimeout = 60\n\n\
         [[hooks.PreToolUse]]\nname = \"argv\"\nargv = [\"@DIR@/hold.sh\", \"argv\"]\ntimeout = 60\n",
    );
    let dir = sb.path().to_str().unwrap().to_string();
    let pwn = |what: &str| format!("{dir}/pwned-{what}");
    let event = json!({
        "session_id": format!("{mark}$(touch {})", pwn("session")),
        "tool_name": "Bash",
        "cwd": format!("{dir}/{mark}`touch {}`", pwn("cwd")),
        "tool_input": {
            "command": format!("{mark} $(touch {}) `touch {}` ; touch {} ; rm -f {dir}/canary", pwn("subst"), pwn("tick"), pwn("semi")),
            "description": format!("'; touch {}; echo '{mark}", pwn("squote")),
            "file_path": format!("\"; touch {}; \"{mark}", pwn("dquote")),
            "lines": format!("{mark}\ntouch {}\n", pwn("newline")),
            "or": format!("|| touch {} && touch {} | {mark}", pwn("or"), pwn("and")),
        },
        format!("{mark}_$(touch {})", pwn("key")): "a key that is a payload",
        "prompt": format!("{mark}\u{0}$(touch {})", pwn("nul")),
    });
    let agent = format!("claude-code;touch {}{mark}", pwn("agent"));
    let d = Daemon::start(sb);
    let mut c = d.connect();
    c.send(&json!({"op": "fire", "id": 1, "moment": "PreToolUse", "agent": agent, "event": event}));

    let mut looked_at = 0;
    // How often the marker was seen in an allowed variable's value: proof that the look reaches it.
    let mut seen_in_values = 0;
    for name in ["shell", "argv"] {
        let pid = d.sb.wait_pid(&format!("pid.{name}"));
        let pgid: i32 = stat_fields(pid).expect("the hook runs")[2].parse().unwrap();
        let members = group_members(pgid);
        assert!(
            members.len() >= 2,
            "{name}: the hook's group holds only {members:?}"
        );
        for p in members {
            let cmdline = fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            assert!(
                !cmdline.contains(&mark),
                "{name}: event data in the command line of pid {p}: {cmdline}"
            );
            let env = env_pairs(&fs::read(format!("/proc/{p}/environ")).unwrap_or_default());
            if env.is_empty() {
                // Gone meanwhile (a `sleep 0.01` of the hold loop); the hook's own shell is not.
                assert_ne!(p, pid, "{name}: no environment read for the hook's shell");
                continue;
            }
            for (k, v) in &env {
                assert!(
                    !k.contains(&mark),
                    "{name}: event data in a variable name of pid {p}: {k}"
                );
                // Event data reaches hooks in the HOOKD_* variables only (and CLAUDE_PROJECT_DIR, the
                // event's cwd, as contract section 6 lists).
                if v.contains(&mark) {
                    seen_in_values += 1;
                    assert!(
                        ["HOOKD_SESSION", "HOOKD_AGENT", "CLAUDE_PROJECT_DIR"]
                            .contains(&k.as_str()),
                        "{name}: event data in {k} of pid {p}: {v}"
                    );
                }
            }
            looked_at += 1;
        }
    }
    assert!(
        seen_in_values > 0,
        "the marker was not even in HOOKD_SESSION: the environment was not read"
    );
    // No process anywhere has it in its command line.
    for p in all_pids() {
        let cmdline = fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&cmdline).contains(&mark),
            "event data in the command line of pid {p}"
        );
    }
    fs::write(d.sb.p("release"), "").unwrap();
    let r = c.recv();
    check_fire_shape(&r);
    assert_eq!(adds(&r), vec!["held shell", "held argv"], "{r}");

    // The hooks got the event intact on stdin.
    for name in ["shell", "argv"] {
        let got: Value = serde_json::from_str(&d.sb.read(&format!("stdin.{name}"))).unwrap();
        for key in ["session_id", "cwd", "tool_input", "prompt"] {
            assert_eq!(got[key], event[key], "{name}: {key} changed on the way");
        }
    }
    // And no payload ran.
    let pwned: Vec<String> = fs::read_dir(d.sb.path())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("pwned"))
        .collect();
    assert!(pwned.is_empty(), "payloads ran: {pwned:?}");
    assert_eq!(d.sb.read("canary"), "alive", "the canary was touched");
    println!("event data: {looked_at} hook processes looked at, no payload ran");
}

// ---- descriptors ----------------------------------------------------------------------------------------

/// `ls -l /proc/self/fd` output: descriptor -> target.
fn parse_ls_fds(listing: &str) -> BTreeMap<u32, String> {
    listing
        .lines()
        .filter_map(|l| {
            let (left, target) = l.split_once(" -> ")?;
            let fd = left.split_whitespace().last()?.parse().ok()?;
            Some((fd, target.trim().to_string()))
        })
        .collect()
}

#[test]
fn hook_sees_only_its_own_three_pipes() {
    let sb = Sandbox::new();
    // `holder` runs next to `lister` in the same fire, so the daemon holds another hook's pipes while it
    // starts `lister`; the test reads holder's descriptors while it runs, then lets it go.
    sb.script(
        "holder.sh",
        "echo $$ > @DIR@/holder.pid\n\
         for i in $(seq 3000); do [ -e @DIR@/release ] && break; sleep 0.01; done",
    );
    sb.script(
        "lister.sh",
        "for i in $(seq 3000); do [ -e @DIR@/holder.pid ] && break; sleep 0.01; done\n\
         exec ls -l /proc/self/fd",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"holder\"\nargv = [\"@DIR@/holder.sh\"]\n\n\
         [[hooks.PreToolUse]]\nname = \"lister\"\nargv = [\"@DIR@/lister.sh\"]\n",
    );
    let d = Daemon::start(sb);
    // Other connections open, one of them with a fire of its own waiting.
    let _idle = d.connect();
    let mut busy = d.connect();
    busy.send(&json!({"op": "fire", "id": "busy", "moment": "PreToolUse", "event": bash_event()}));
    let holder = d.sb.wait_pid("holder.pid");
    let holder_fds: BTreeSet<String> = fds(holder as u32).into_values().collect();
    fs::write(d.sb.p("release"), "").unwrap();
    let r = busy.recv();
    check_fire_shape(&r);
    let listing = parse_ls_fds(&adds(&r)[0]);

    let daemon_fds = fds(d.pid());
    let numbers: Vec<u32> = listing.keys().copied().collect();
    assert_eq!(
        numbers,
        vec![0, 1, 2, 3],
        "the hook sees descriptors {listing:?}"
    );
    let pipes: BTreeSet<&String> = listing.range(0..3).map(|(_, t)| t).collect();
    assert_eq!(
        pipes.len(),
        3,
        "stdin, stdout and stderr are not three pipes: {listing:?}"
    );
    for t in &pipes {
        assert!(
            t.starts_with("pipe:["),
            "a standard stream is not a pipe: {listing:?}"
        );
        assert!(
            !holder_fds.contains(*t),
            "the other hook's pipe {t} reached this one: {listing:?}"
        );
    }
    assert!(
        listing[&3].starts_with("/proc/") && listing[&3].ends_with("/fd"),
        "descriptor 3 is not the listing's own: {listing:?}"
    );
    for t in daemon_fds.values().filter(|t| !t.starts_with("pipe:[")) {
        assert!(
            !listing.values().any(|l| l == t),
            "the daemon's {t} reached the hook: {listing:?}"
        );
    }
}

// ---- the log ----------------------------------------------------------------------------------------------

const LOG_SETTINGS: &str = "\
[[hooks.PreToolUse]]\nname = \"refuser\"\nargv = [\"@DIR@/refuser.sh\"]\n\n\
[[hooks.PostToolUse]]\nname = \"failer\"\nargv = [\"@DIR@/failer.sh\"]\n\n\
[[hooks.UserPromptSubmit]]\nname = \"adder\"\nargv = [\"@DIR@/adder.sh\"]\n";

/// A daemon with a hook that refuses, one that fails and one that adds, none echoing its event; logging
/// at `level`.
fn log_daemon(level: &'static str) -> Daemon {
    let sb = Sandbox::new();
    sb.script(
        "refuser.sh",
        "cat > /dev/null\necho policy-says-no >&2\nexit 2",
    );
    sb.script(
        "failer.sh",
        "cat > /dev/null\necho failer-broke >&2\nexit 1",
    );
    sb.script("adder.sh", "cat > /dev/null\necho added-context");
    sb.settings(LOG_SETTINGS);
    Daemon::start_with(sb, move |cmd| {
        cmd.env("HOOKD_LOG", level);
    })
}

/// Sends event bodies holding `mark` every way: a refused fire, a failed one, one that adds, and
/// requests the daemon turns down. Checks the answers.
fn fire_marked(d: &Daemon, mark: &str) {
    let event = |extra: Value| {
        let mut e = json!({
            "session_id": "s-log",
            "tool_name": "Bash",
            "tool_input": {"command": format!("echo {mark}"), "secret": mark},
            mark: {"nested": [mark]},
        });
        if let (Some(e), Some(extra)) = (e.as_object_mut(), extra.as_object()) {
            e.extend(extra.clone());
        }
        e
    };
    let r = d.fire("PreToolUse", event(json!({})));
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(r["reason"], "policy-says-no", "{r}");
    let r = d.fire(
        "PostToolUse",
        event(json!({"tool_response": {"output": mark}})),
    );
    assert_eq!(hook(&r, "failer")["outcome"], "failed", "{r}");
    let r = d.fire("UserPromptSubmit", event(json!({"prompt": mark})));
    assert_eq!(adds(&r), vec!["added-context"], "{r}");

    let mut c = d.connect();
    let turned_down = [
        json!({"op": "fire", "id": "m1", "event": {"x": mark}}).to_string(),
        json!({"op": "fire", "id": "m2", "moment": "PreToolUse", "event": mark}).to_string(),
        json!({"op": "fire", "id": "m3", "moment": "NoSuchMoment", "event": {"x": mark}})
            .to_string(),
        format!("{{\"op\":\"fire\",\"id\":\"m4\",\"event\":{{\"x\":\"{mark}\""),
    ];
    for line in turned_down {
        c.send_raw(format!("{line}\n").as_bytes());
        let r = c.recv();
        assert_eq!(r["ok"], false, "{line} was taken: {r}");
    }
}

#[test]
fn event_bodies_never_logged_above_debug() {
    let mark = marker("log");
    let mut d = log_daemon("info");
    fire_marked(&d, &mark);
    d.signal(Signal::SIGTERM);
    d.wait_exit(SETTLE);
    let log = d.log_text();
    // The log was written, at info and above: the refusal and the failure are there...
    assert!(
        log.contains("policy-says-no") && log.contains("failer-broke"),
        "the info log lacks the refusal or the failure: {log}"
    );
    assert!(
        !log.contains("DEBUG"),
        "a debug line at HOOKD_LOG=info: {log}"
    );
    // ... and none of the events.
    assert!(
        !log.contains(&mark),
        "event data in the log at HOOKD_LOG=info:\n{}",
        log.lines()
            .filter(|l| l.contains(&mark))
            .collect::<Vec<_>>()
            .join("\n")
    );

    // At debug, the same fires are logged in more detail (event data may appear there).
    let mut d = log_daemon("debug");
    fire_marked(&d, &mark);
    d.signal(Signal::SIGTERM);
    d.wait_exit(SETTLE);
    let log = d.log_text();
    assert!(
        log.contains("DEBUG"),
        "no debug line at HOOKD_LOG=debug: {log}"
    );
    println!(
        "at debug, the event marker appears in the log: {}",
        log.contains(&mark)
    );
}

// ---- systemd's variables ------------------------------------------------------------------------------

#[test]
fn systemd_variables_of_the_daemon_do_not_reach_hooks() {
    const SYSTEMD_VARS: [(&str, &str); 6] = [
        ("NOTIFY_SOCKET", "/nonexistent"),
        ("LISTEN_PID", "1"),
        ("LISTEN_FDS", "1"),
        ("LISTEN_FDNAMES", "x"),
        ("WATCHDOG_USEC", "1"),
        ("WATCHDOG_PID", "1"),
    ];
    let sb = Sandbox::new();
    sb.script("dump.sh", "cat > /dev/null\nenv -0 > @DIR@/env.$1");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"shell\"\ncommand = \"@DIR@/dump.sh shell\"\n\n\
         [[hooks.PreToolUse]]\nname = \"argv\"\nargv = [\"@DIR@/dump.sh\", \"argv\"]\n",
    );
    let d = Daemon::start_with(sb, |cmd| {
        cmd.envs(SYSTEMD_VARS);
    });
    // Not for this pid: the daemon bound its own socket, and serves on it.
    assert_eq!(d.status()["pid"], d.pid());
    let r = d.fire("PreToolUse", bash_event());
    assert_eq!(hook(&r, "shell")["outcome"], "nothing", "{r}");
    assert_eq!(hook(&r, "argv")["outcome"], "nothing", "{r}");
    for name in ["shell", "argv"] {
        let env: BTreeMap<String, String> =
            env_pairs(&fs::read(d.sb.p(&format!("env.{name}"))).unwrap())
                .into_iter()
                .collect();
        assert_eq!(
            env.get("HOOKD_HOOK").map(String::as_str),
            Some(name),
            "{name}: not the hook's environment: {env:?}"
        );
        for (k, _) in SYSTEMD_VARS {
            assert!(
                !env.contains_key(k),
                "{name}: {k} reached the hook: {:?}",
                env.get(k)
            );
        }
    }
    // The daemon's own environment does hold them: they were really there to strip.
    let own = env_pairs(&fs::read(format!("/proc/{}/environ", d.pid())).unwrap());
    for (k, v) in SYSTEMD_VARS {
        assert!(
            own.iter().any(|(ok, ov)| ok == k && ov == v),
            "test set-up: the daemon was not given {k}={v}"
        );
    }
}

// ---- the folders above the settings file, and the programs hooks run ---------------

/// A guard that refuses every PreToolUse, named `name`.
fn refusing(name: &str) -> String {
    format!("[[hooks.PreToolUse]]\nname = \"{name}\"\ncommand = \"echo no >&2; exit 2\"\n")
}

fn rm_rf_refused(d: &Daemon) -> bool {
    let event = serde_json::json!({"session_id": "s1", "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}});
    d.fire("PreToolUse", event)["refused"] == true
}

/// Waits until the daemon's last reload failed with an error containing `words`; returns the error.
fn wait_reload_failed(d: &Daemon, words: &[&str]) -> String {
    let mut error = String::new();
    wait_until(SETTLE, &format!("a failed reload saying {words:?}"), || {
        let status = d.status();
        error = status["last_reload"]["error"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        status["last_reload"]["ok"] == false && words.iter().all(|w| error.contains(w))
    });
    error
}

#[test]
fn another_user_cannot_swap_the_settings_in_a_folder_others_can_write() {
    if !require_root("another user writing in the settings folder") {
        return;
    }
    // Regression: with the settings in a 0777 folder, another user replaced hooks.toml by a link to an
    // (empty) file of the user's own, and every hook was dropped.
    let sb = Sandbox::new();
    sb.settings(&refusing("guard"));
    fs::create_dir(sb.p("decoy")).unwrap();
    fs::write(sb.p("decoy/empty.toml"), "# nothing here\n").unwrap();
    fs::set_permissions(sb.p("decoy/empty.toml"), fs::Permissions::from_mode(0o644)).unwrap();
    let conf = sb.config_dir();
    let fix = format!("chmod go-w {}", conf.display());

    fs::set_permissions(&conf, fs::Permissions::from_mode(0o777)).unwrap();
    let log = serve_refused(&sb, "serve.log");
    assert!(
        log.contains(&fix) && log.contains("mode 0777"),
        "the start is not refused with the fix: {log}"
    );

    fs::set_permissions(&conf, fs::Permissions::from_mode(0o755)).unwrap();
    // Nobody may walk into the sandbox (to reach the folder), not write it.
    fs::set_permissions(sb.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let d = Daemon::start(sb);
    assert!(rm_rf_refused(&d));
    let generation = d.status()["generation"].clone();
    fs::set_permissions(&conf, fs::Permissions::from_mode(0o777)).unwrap();
    let mut ln = as_nobody("/bin/ln");
    ln.arg("-sfn")
        .arg(d.sb.p("decoy/empty.toml"))
        .arg(d.sb.config());
    let out = run_with_deadline(ln, None, SETTLE);
    assert!(out.status.success(), "ln as nobody: {}", text(&out.stderr));
    assert!(fs::symlink_metadata(d.sb.config()).unwrap().is_symlink());

    wait_reload_failed(&d, &[&fix]);
    assert!(rm_rf_refused(&d), "the swapped-in file dropped the guard");
    let errors = reload_refused(&d);
    assert!(errors.contains(&fix), "{errors}");
    assert_eq!(d.status()["generation"], generation);
}

#[test]
fn a_symlinked_settings_file_whose_targets_folder_is_group_writable_is_refused() {
    let sb = Sandbox::new();
    fs::create_dir(sb.p("store")).unwrap();
    fs::write(sb.p("store/hooks.toml"), refusing("linked")).unwrap();
    fs::set_permissions(sb.p("store/hooks.toml"), fs::Permissions::from_mode(0o644)).unwrap();
    fs::set_permissions(sb.p("store"), fs::Permissions::from_mode(0o775)).unwrap();
    std::os::unix::fs::symlink("../store/hooks.toml", sb.config()).unwrap();
    let log = serve_refused(&sb, "serve.log");
    assert!(
        log.contains(&format!("chmod go-w {}", sb.p("store").display())),
        "{log}"
    );

    // Fixed, it starts; made group-writable again, a reload is refused and the guard stays.
    fs::set_permissions(sb.p("store"), fs::Permissions::from_mode(0o755)).unwrap();
    let d = Daemon::start(sb);
    assert!(rm_rf_refused(&d));
    fs::set_permissions(d.sb.p("store"), fs::Permissions::from_mode(0o775)).unwrap();
    let errors = reload_refused(&d);
    assert!(errors.contains("mode 0775"), "{errors}");
    assert!(rm_rf_refused(&d));
}

#[test]
fn a_group_writable_hook_script_is_refused_at_start_and_at_reload() {
    // Regression: a group-writable copy of the example guard ran without a word.
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/deny-destructive.py");
    let sb = Sandbox::new();
    let guard = sb.p("conf/deny-destructive.py");
    fs::copy(&example, &guard).unwrap();
    fs::set_permissions(&guard, fs::Permissions::from_mode(0o775)).unwrap();
    let settings = "[[hooks.PreToolUse]]\nname = \"deny-destructive\"\nmatcher = \"Bash\"\n\
                    command = '\"$HOOKD_CONFIG_DIR/deny-destructive.py\"'\non_failure = \"refuse\"\n";
    sb.settings(settings);
    let log = serve_refused(&sb, "serve.log");
    let at = format!(
        "{}:4:11: hook \"deny-destructive\": refused: the program",
        sb.config().display()
    );
    assert!(
        log.contains(&at) && log.contains(&format!("(fix: chmod go-w {})", guard.display())),
        "{log}"
    );

    fs::set_permissions(&guard, fs::Permissions::from_mode(0o755)).unwrap();
    let d = Daemon::start(sb);
    assert!(rm_rf_refused(&d));
    let generation = d.status()["generation"].clone();
    // A new copy, group-writable, put in as the settings change to run it: refused, the last good stay.
    let copy = d.sb.p("conf/deny-copy.py");
    fs::copy(&example, &copy).unwrap();
    fs::set_permissions(&copy, fs::Permissions::from_mode(0o775)).unwrap();
    put_settings(
        &d.sb,
        &settings.replace("deny-destructive.py", "deny-copy.py"),
        0o644,
        None,
    );
    let error = wait_reload_failed(&d, &["mode 0775", "deny-copy.py"]);
    assert!(
        error.contains(&format!("{}:4:11: ", d.sb.config().display())),
        "{error}"
    );
    assert_eq!(d.status()["generation"], generation);
    assert!(rm_rf_refused(&d));
}
