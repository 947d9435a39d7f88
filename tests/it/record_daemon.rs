//! The record (docs/record.md) through the real daemon, as users meet it: the journal's lines for fires
//! decided and cut short, `watch` on the socket, slow watchers, the relay's spool, rotation, `kill -9`,
//! reloads, `status`'s counts, `[record] enabled = false`; then the record attacked (planted links and
//! FIFOs, huge fields, garbage from hooks, an unwritable state folder): a fire never loses its answer
//! because of it.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::{Value, json};

use crate::common::*;

/// The daemon's state folder (`$XDG_STATE_HOME/hookd`) for a daemon on `socket`.
fn state_dir(socket: &Path) -> PathBuf {
    state_home_for(socket).join("hookd")
}

/// Every line of the journal file at `path`, parsed; panics on a line that is not whole JSON.
fn lines_of(path: &Path) -> Vec<Value> {
    let text = fs::read(path).unwrap_or_default();
    let text = String::from_utf8(text).expect("the journal is UTF-8");
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "a partial last line in {path:?}"
    );
    text.lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("a journal line is not JSON ({e}): {line:?}"))
        })
        .collect()
}

fn fire_as(d: &Daemon, agent: &str, event: Value) -> Value {
    d.fire_req(
        json!({"op": "fire", "id": 1, "moment": "PreToolUse", "agent": agent, "event": event}),
    )
}

fn bash(session: &str, command: &str) -> Value {
    json!({"session_id": session, "cwd": "/tmp", "tool_name": "Bash", "tool_input": {"command": command}})
}

/// A hook that refuses commands that hold `rm` (its reason on stderr) and adds a line of context to the
/// others.
pub const GUARD: &str = r#"input=$(cat)
case "$input" in
  *'"rm '*) echo "no rm here" >&2; exit 2 ;;
  *) echo "checked" ;;
esac"#;

/// A sandbox whose one hook `guard` refuses commands that hold `rm` (its reason on stderr) and adds a
/// line of context to the others.
fn guarded(extra: &str) -> Sandbox {
    let sb = Sandbox::new();
    sb.script("guard.sh", GUARD);
    sb.settings(&format!(
        "{extra}\n[[hooks.PreToolUse]]\nname = \"guard\"\ncommand = \"@DIR@/guard.sh\"\n"
    ));
    sb
}

/// Fires `n` events pipelined on one connection (ids 0..n) and returns the responses, each checked.
fn fire_many(socket: &Path, n: usize, event: impl Fn(usize) -> Value) -> Vec<Value> {
    let stream = std::os::unix::net::UnixStream::connect(socket).expect("connecting");
    let mut writer = stream.try_clone().expect("cloning the stream");
    let mut c = Client::from_stream(stream);
    let requests: Vec<Value> = (0..n)
        .map(|i| json!({"op": "fire", "id": i, "moment": "PreToolUse", "agent": "claude-code", "event": event(i)}))
        .collect();
    let sending = std::thread::spawn(move || {
        use std::io::Write;
        for request in requests {
            let mut line = serde_json::to_vec(&request).unwrap();
            line.push(b'\n');
            writer.write_all(&line).expect("sending a fire");
        }
    });
    let responses: Vec<Value> = (0..n).map(|_| c.recv()).collect();
    sending.join().unwrap();
    for r in &responses {
        check_fire_shape(r);
    }
    responses
}

#[test]
fn a_refused_fire_and_an_added_one_have_their_lines_in_a_private_journal() {
    let d = Daemon::start(guarded(""));
    let refused = fire_as(&d, "codex", bash("sess-refused", "rm -rf ~"));
    assert_eq!(refused["refused"], true, "{refused}");
    let added = fire_as(&d, "claude-code", bash("sess-added", "ls -la"));
    assert_eq!(adds(&added), ["checked"], "{added}");

    let line = journaled(&d, "the refused fire's line", |l| {
        l["session"] == "sess-refused"
    });
    assert_eq!(line["v"], 1);
    assert_eq!(line["kind"], "fire");
    assert_eq!(line["agent"], "codex");
    assert_eq!(line["source"], "socket");
    assert_eq!(line["moment"], "PreToolUse");
    assert_eq!(line["tool"], "Bash");
    assert_eq!(line["summary"], "rm -rf ~");
    assert_eq!(line["verdict"]["decision"], "refused");
    assert_eq!(line["verdict"]["refused"], true);
    assert_eq!(line["verdict"]["reason"], refused["reason"]);
    let hook = &line["hooks"][0];
    assert_eq!(hook["name"], "guard");
    assert_eq!(hook["outcome"], "refused");
    assert_eq!(hook["exit"], 2);
    assert_eq!(hook["stderr"], "no rm here\n");
    assert!(
        line["ms"].is_number() && line.get("cut").is_none(),
        "{line}"
    );
    assert_eq!(line["time"].as_str().unwrap().len(), 24, "{line}");

    let line = journaled(&d, "the added fire's line", |l| {
        l["session"] == "sess-added"
    });
    assert_eq!(line["agent"], "claude-code");
    assert_eq!(line["summary"], "ls -la");
    assert_eq!(line["verdict"]["decision"], "none");
    assert_eq!(line["verdict"]["refused"], false);
    assert_eq!(line["verdict"]["adds"], 1);
    assert_eq!(line["hooks"][0]["outcome"], "adds");
    assert!(
        line["hooks"][0].get("stderr").is_none(),
        "stderr kept only when a hook refused, asked or failed: {line}"
    );

    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&d.journal_file()), 0o600);
    assert_eq!(mode(&state_dir(&d.socket)), 0o700);
    assert_eq!(
        d.status()["record"]["journal"],
        d.journal_file().display().to_string()
    );
}

#[test]
fn a_fire_whose_client_hung_up_has_its_line_cut() {
    let sb = Sandbox::new();
    sb.script("slow.sh", "echo $$ > @DIR@/slow.pid; exec sleep 60");
    sb.settings("[[hooks.PreToolUse]]\nname = \"slow\"\ncommand = \"@DIR@/slow.sh\"\n");
    let d = Daemon::start(sb);
    let mut c = d.connect();
    c.send(
        &json!({"op": "fire", "id": 1, "moment": "PreToolUse", "agent": "claude-code",
        "event": bash("sess-cut", "make")}),
    );
    let pid = d.sb.wait_pid("slow.pid");
    drop(c);
    let line = journaled(&d, "the cut fire's line", |l| l["session"] == "sess-cut");
    assert_eq!(line["kind"], "fire");
    let cut = line["cut"]
        .as_str()
        .unwrap_or_else(|| panic!("no cut: {line}"));
    assert!(cut.contains("client"), "{line}");
    assert_eq!(line["summary"], "make");
    wait_until(RESPONSE, "the hook stopped", || process_gone(pid, d.pid()));
}

#[test]
fn a_fire_still_running_when_the_daemon_stops_has_its_line() {
    // DRAIN_DEADLINE is 10 s: the hook outlives it, the stop cuts the fire, the line is written before
    // the daemon exits.
    let sb = Sandbox::new();
    sb.script("slow.sh", "echo $$ > @DIR@/slow.pid; exec sleep 60");
    sb.settings("[[hooks.PreToolUse]]\nname = \"slow\"\ncommand = \"@DIR@/slow.sh\"\n");
    let mut d = Daemon::start(sb);
    let mut c = d.connect();
    c.send(
        &json!({"op": "fire", "id": 1, "moment": "PreToolUse", "agent": "claude-code",
        "event": bash("sess-stop", "make")}),
    );
    d.sb.wait_pid("slow.pid");
    d.signal(Signal::SIGTERM);
    let answer = c.recv();
    assert_eq!(answer["id"], 1, "the fire is answered still: {answer}");
    d.wait_exit(RESPONSE);
    let lines = lines_of(&d.journal_file());
    let line = lines
        .iter()
        .find(|l| l["session"] == "sess-stop")
        .unwrap_or_else(|| panic!("no line for the fire cut by the stop: {lines:?}"));
    assert!(line["cut"].is_string(), "{line}");
}

#[test]
fn watch_sees_other_clients_fires_through_its_filter() {
    let d = Daemon::start(guarded(""));
    let mut w = d.connect();
    let first = w.request(&json!({"op": "watch", "id": "w", "agent": "codex", "refused": true}));
    assert_eq!(first["watching"], true, "{first}");
    assert_eq!(first["id"], "w");
    wait_until(RESPONSE, "the watcher counted", || {
        d.status()["record"]["watchers"] == 1
    });
    // Neither passes the filter: another agent's refusal, codex's allowed call.
    fire_as(&d, "claude-code", bash("s-other-agent", "rm -rf /x"));
    fire_as(&d, "codex", bash("s-not-refused", "ls"));
    fire_as(&d, "codex", bash("s-shown", "rm -rf /y"));
    let seen = w.recv();
    assert_eq!(seen["session"], "s-shown", "the first line shown: {seen}");
    assert_eq!(seen["agent"], "codex");
    assert_eq!(seen["verdict"]["refused"], true);
    // And an unfiltered watcher sees them all, in order.
    let mut all = d.connect();
    assert_eq!(
        all.request(&json!({"op": "watch", "id": 2}))["watching"],
        true
    );
    wait_until(RESPONSE, "both watchers counted", || {
        d.status()["record"]["watchers"] == 2
    });
    fire_as(&d, "gemini-cli", bash("s-a", "ls"));
    fire_as(&d, "codex", bash("s-b", "ls"));
    assert_eq!(all.recv()["session"], "s-a");
    assert_eq!(all.recv()["session"], "s-b");
}

#[test]
fn a_watcher_that_never_reads_is_dropped_and_fires_go_on() {
    let d = Daemon::start(Sandbox::new());
    // One watcher reads nothing ever; the other reads only once the fires are done, past the
    // broadcast's 4096 records.
    let mut never = d.connect();
    assert_eq!(never.request(&json!({"op": "watch"}))["watching"], true);
    let mut late = d.connect();
    assert_eq!(
        late.request(&json!({"op": "watch", "id": "late"}))["watching"],
        true
    );
    wait_until(RESPONSE, "two watchers", || {
        d.status()["record"]["watchers"] == 2
    });
    let long = "x".repeat(280);
    let n = 6000;
    let answers = fire_many(&d.socket, n, |i| bash(&format!("slow-w-{i}"), &long));
    assert_eq!(answers.len(), n);
    // Answers come in the order they are ready (docs/protocol.md): the first fire from a folder waits
    // for its repository to be looked up, those after it may be answered first. Every id once.
    let mut ids: Vec<u64> = answers
        .iter()
        .map(|a| a["id"].as_u64().expect("an id"))
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..n as u64).collect::<Vec<_>>());
    wait_until(RESPONSE, "every fire in the journal", || {
        journal_records(&d.journal_file())
            .iter()
            .filter(|l| {
                l["session"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("slow-w-"))
            })
            .count()
            == n
    });
    // The late reader gets what fitted, then the too_slow line with how many it missed.
    let mut too_slow = None;
    while let Some(line) = late.read_line() {
        let v: Value = serde_json::from_str(&line).expect("a watch line is JSON");
        if v["ok"] == false {
            too_slow = Some(v);
            break;
        }
    }
    let too_slow = too_slow.expect("the lagging watcher is told it is dropped");
    assert_eq!(error_kind(&too_slow), "too_slow", "{too_slow}");
    assert_eq!(too_slow["id"], "late");
    assert!(too_slow["missed"].as_u64().unwrap() > 0, "{too_slow}");
    late.expect_eof();
    // The one that never reads is dropped once its write has waited WRITE_DEADLINE (30 s).
    wait_until(
        Duration::from_secs(90),
        "the silent watcher dropped",
        || d.status()["record"]["watchers"] == 0,
    );
    drop(never);
    assert_eq!(fire_as(&d, "codex", bash("after", "ls"))["ok"], true);
}

#[test]
fn the_relays_fail_open_is_spooled_and_taken_into_the_journal() {
    let sb = Sandbox::new();
    sb.settings("");
    let socket = sb.socket();
    let state_home = state_home_for(&socket);
    let input = json!({"session_id": "sess-relay-down", "hook_event_name": "PreToolUse",
        "cwd": "/tmp", "transcript_path": "/tmp/t.jsonl", "permission_mode": "default",
        "tool_name": "Bash", "tool_input": {"command": "cargo test"}});
    let mut cmd = Command::new(BIN);
    cmd.args(["relay", "--agent", "claude-code", "--socket"])
        .arg(&socket)
        .env("XDG_STATE_HOME", &state_home);
    let out = run_with_deadline(cmd, Some(&input.to_string()), RESPONSE);
    assert_eq!(code(&out.status), 0, "fail-open: {}", text(&out.stderr));
    let spool = state_dir(&socket).join("relay-spool.jsonl");
    let spooled = lines_of(&spool);
    assert_eq!(spooled.len(), 1, "{spooled:?}");

    let d = Daemon::start(sb);
    let line = journaled(&d, "the relay's line", |l| l["kind"] == "relay");
    assert_eq!(line["relay"], "fail_open");
    assert_eq!(line["session"], "sess-relay-down");
    assert_eq!(line["agent"], "claude-code");
    assert_eq!(line["source"], "relay");
    assert_eq!(line["summary"], "cargo test");
    assert!(line["error"].is_string(), "{line}");
    wait_until(RESPONSE, "the spool taken", || !spool.exists());
}

#[test]
fn rotation_keeps_the_journal_within_its_bound() {
    let sb = Sandbox::new();
    sb.settings("[record]\nfile_size_mib = 1\nfiles = 2\n");
    let d = Daemon::start(sb);
    let long = "y".repeat(290);
    // About 500 bytes a line: 6000 lines pass 2 MiB.
    let n = 6000;
    fire_many(&d.socket, n, |i| bash(&format!("rot-{i}"), &long));
    let dir = state_dir(&d.socket);
    wait_until(RESPONSE, "the last fire in the journal", || {
        journal_records(&d.journal_file())
            .iter()
            .any(|l| l["session"] == format!("rot-{}", n - 1))
    });
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("journal"))
        .collect();
    names.sort();
    assert_eq!(names, ["journal.1.jsonl", "journal.jsonl"]);
    for name in &names {
        let path = dir.join(name);
        let len = fs::metadata(&path).unwrap().len();
        assert!(len <= 1 << 20, "{name} is {len} bytes");
        assert!(!lines_of(&path).is_empty());
    }
}

/// A second daemon on a stopped daemon's settings and socket: stopped and reaped on drop, its log
/// printed when the test fails.
struct Second {
    _child: ChildGuard,
    log: PathBuf,
}

impl Drop for Second {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "----- the second daemon's log -----\n{}",
                fs::read_to_string(&self.log).unwrap_or_default()
            );
        }
    }
}

fn restart(d: &Daemon) -> Second {
    let log = d.sb.p("daemon2.log");
    let start = || {
        let file = fs::File::create(&log).unwrap();
        let mut cmd = serve_command_at(&d.config, &d.socket);
        cmd.stdout(file.try_clone().unwrap()).stderr(file);
        ChildGuard(cmd.spawn().expect("spawning the second daemon"))
    };
    let mut child = start();
    // Not a bare connect: for a moment after a `kill -9` the dead daemon's listener may still take
    // connections (held by a hook's process between its fork and its exec, seen 1 time in 30 here), and a
    // request sent into it is lost with it. The second daemon is ready once it answers with its own pid.
    // Each try waits a second for its answer at most (a live daemon answers `status` at once; a try
    // that reached the dead one's listener is given up and made again), all of them RESPONSE, with the
    // second daemon's log said if it never answers. In the same moment the second daemon itself may find
    // the socket (or its lock) still held and stop, saying a daemon is running: it is started again, as
    // systemd's Restart= would.
    let deadline = std::time::Instant::now() + RESPONSE;
    while status_pid(&d.socket, Duration::from_secs(1)) != Some(child.0.id()) {
        let said = || fs::read_to_string(&log).unwrap_or_default();
        assert!(
            std::time::Instant::now() < deadline,
            "the second daemon did not answer status within {RESPONSE:?}; its log:\n{}",
            said()
        );
        if let Ok(Some(status)) = child.0.try_wait() {
            assert!(
                said().contains("already running"),
                "the second daemon stopped ({status}); its log:\n{}",
                said()
            );
            child = start();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Second { _child: child, log }
}

/// The pid `status` on `socket` answers with within `wait`, or `None` when nothing answers.
fn status_pid(socket: &Path, wait: Duration) -> Option<u32> {
    use std::io::{BufRead, Write};
    let mut stream = std::os::unix::net::UnixStream::connect(socket).ok()?;
    stream.set_read_timeout(Some(wait)).ok()?;
    stream.write_all(b"{\"op\":\"status\",\"id\":1}\n").ok()?;
    let mut line = String::new();
    std::io::BufReader::new(stream).read_line(&mut line).ok()?;
    let status: Value = serde_json::from_str(&line).ok()?;
    status["pid"]
        .as_u64()
        .and_then(|pid| u32::try_from(pid).ok())
}

#[test]
fn kill_9_under_load_leaves_whole_lines_and_a_restart_appends_cleanly() {
    let mut d = Daemon::start(guarded(""));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let socket = d.socket.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut i = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let Ok(stream) = std::os::unix::net::UnixStream::connect(&socket) else {
                        return;
                    };
                    let mut c = Client::from_stream(stream);
                    let request = json!({"op": "fire", "id": i, "moment": "PreToolUse",
                        "agent": "claude-code", "event": bash(&format!("k{t}-{i}"), "ls")});
                    if c.try_send(&request).is_err() || c.read_line().is_none() {
                        return;
                    }
                    i += 1;
                }
            })
        })
        .collect();
    wait_until(RESPONSE, "lines in the journal", || {
        journal_records(&d.journal_file()).len() > 50
    });
    d.signal(Signal::SIGKILL);
    d.wait_exit(RESPONSE);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    // Every whole line parses; only a last line without its `\n` may be there.
    let text = fs::read_to_string(d.journal_file()).unwrap();
    let whole = &text[..text.rfind('\n').map_or(0, |at| at + 1)];
    for line in whole.lines() {
        serde_json::from_str::<Value>(line)
            .unwrap_or_else(|e| panic!("a line after kill -9 ({e}): {line:?}"));
    }

    let _again = restart(&d);
    let answer = Client::connect(&d.socket).request(&json!({"op": "fire", "id": "after",
        "moment": "PreToolUse", "agent": "claude-code", "event": bash("after-restart", "ls")}));
    check_fire_shape(&answer);
    journaled(&d, "the fire after the restart", |l| {
        l["session"] == "after-restart"
    });
    // lines_of panics on any line that does not parse, a torn one included.
    assert!(lines_of(&d.journal_file()).len() > 50);
}

#[test]
fn reloads_and_refused_reloads_are_recorded_and_status_counts() {
    let sb = guarded("");
    let d = Daemon::start(sb);
    fire_as(&d, "codex", bash("st-1", "rm -rf ~"));
    fire_as(&d, "codex", bash("st-2", "ls"));
    d.sb.settings(
        "[[hooks.PreToolUse]]\nname = \"guard\"\ncommand = \"@DIR@/guard.sh\"\n\
         [[hooks.Stop]]\nname = \"g2\"\ncommand = \"@DIR@/guard.sh\"\n",
    );
    assert_eq!(d.reload()["ok"], true);
    let reload = journaled(&d, "a reload line", |l| l["kind"] == "reload");
    assert!(reload["generation"].as_u64().unwrap() >= 2, "{reload}");
    d.sb.settings("[defaults]\ncolour = \"red\"\n");
    assert_eq!(d.reload()["ok"], false);
    let refused = journaled(&d, "a reload_refused line", |l| {
        l["kind"] == "reload_refused"
    });
    let error = refused["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("hooks.toml:") && error.contains("colour"),
        "{refused}"
    );
    assert!(refused["generation"].is_u64(), "{refused}");

    let mut record = Value::Null;
    wait_until(RESPONSE, "both fires counted", || {
        record = d.status()["record"].clone();
        record["moments"]["PreToolUse"]["fires"] == 2
    });
    assert_eq!(record["moments"]["PreToolUse"]["refused"], 1, "{record}");
    assert_eq!(record["enabled"], true);
    assert!(record["written"].as_u64().unwrap() >= 4, "{record}");
    let guard = &record["hooks"]["guard"];
    assert_eq!(guard["runs"], 2, "{record}");
    assert!(guard["p50_ms"].as_f64().unwrap() > 0.0, "{record}");
    assert!(guard["p99_ms"].as_f64().unwrap() >= guard["p50_ms"].as_f64().unwrap());
}

#[test]
fn a_disabled_record_records_no_fire_at_all() {
    let d = Daemon::start(guarded("[record]\nenabled = false\n"));
    let mut w = d.connect();
    assert_eq!(w.request(&json!({"op": "watch"}))["watching"], true);
    wait_until(RESPONSE, "the watcher", || {
        d.status()["record"]["watchers"] == 1
    });
    let refused = fire_as(&d, "codex", bash("off-1", "rm -rf ~"));
    assert_eq!(
        refused["refused"], true,
        "the hooks still decide: {refused}"
    );
    // A reload is still streamed: the first line the watcher gets after the fire is the reload's, so the
    // fire made none.
    let mut client = d.connect();
    assert_eq!(client.request(&json!({"op": "reload"}))["ok"], true);
    let next = w.recv();
    assert_eq!(next["kind"], "reload", "the fire was recorded: {next}");
    let record = d.status()["record"].clone();
    assert_eq!(record["enabled"], false, "{record}");
    assert_eq!(record["moments"], json!({}), "no fire counted: {record}");
    assert!(
        !d.journal_file().exists(),
        "a journal written though disabled"
    );
}

// ---- attacks ---------------------------------------------------------------------------------------------

/// The sandbox's `run/state/hookd`, made (0700, as the daemon makes it) before the daemon starts, for a
/// test to plant things in.
fn planted_state(sb: &Sandbox) -> PathBuf {
    let dir = state_dir(&sb.socket());
    fs::create_dir_all(&dir).unwrap();
    for d in [sb.p("run"), state_home_for(&sb.socket()), dir.clone()] {
        fs::set_permissions(&d, fs::Permissions::from_mode(0o700)).unwrap();
    }
    dir
}

/// Fires and expects the usual answers while the record cannot be written; status says why.
fn fires_answered_and_status_says(d: &Daemon, said: &str) {
    for i in 0..5 {
        let refused = fire_as(d, "codex", bash(&format!("att-{i}"), "rm -rf ~"));
        assert_eq!(refused["refused"], true, "{refused}");
    }
    let mut record = Value::Null;
    wait_until(RESPONSE, "status to say the journal's error", || {
        record = d.status()["record"].clone();
        record["error"].as_str().is_some_and(|e| e.contains(said))
            && record["moments"]["PreToolUse"]["fires"] == 5
    });
}

#[test]
fn a_journal_planted_as_a_link_is_not_followed() {
    let sb = guarded("");
    let dir = planted_state(&sb);
    let victim = sb.p("victim.txt");
    fs::write(&victim, "mine\n").unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("journal.jsonl")).unwrap();
    let d = Daemon::start(sb);
    fires_answered_and_status_says(&d, "journal.jsonl");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "mine\n");
    assert!(
        fs::symlink_metadata(dir.join("journal.jsonl"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn a_journal_planted_as_a_fifo_does_not_hang_the_record() {
    let sb = guarded("");
    let dir = planted_state(&sb);
    nix::unistd::mkfifo(&dir.join("journal.jsonl"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let d = Daemon::start(sb);
    fires_answered_and_status_says(&d, "not a regular file");
    // The writer is not stuck: a watcher still gets the next record.
    let mut w = d.connect();
    assert_eq!(w.request(&json!({"op": "watch"}))["watching"], true);
    wait_until(RESPONSE, "the watcher", || {
        d.status()["record"]["watchers"] == 1
    });
    fire_as(&d, "codex", bash("fifo-after", "ls"));
    assert_eq!(w.recv()["session"], "fifo-after");
}

#[test]
fn an_unwritable_state_folder_leaves_the_daemon_serving() {
    // Root writes through modes: the folder is a file instead, which nobody can write into.
    let sb = guarded("");
    let home = state_home_for(&sb.socket());
    fs::create_dir_all(&home).unwrap();
    fs::set_permissions(sb.p("run"), fs::Permissions::from_mode(0o700)).unwrap();
    fs::write(home.join("hookd"), "not a folder\n").unwrap();
    let d = Daemon::start(sb);
    fires_answered_and_status_says(&d, "cannot write");
    assert_eq!(
        fs::read_to_string(home.join("hookd")).unwrap(),
        "not a folder\n"
    );
}

/// `hookd relay` with the daemon down on `sb`'s socket, its state in the sandbox; returns its exit code.
fn relay_down(sb: &Sandbox, session: &str) -> i32 {
    let input = json!({"session_id": session, "hook_event_name": "PreToolUse", "cwd": "/tmp",
        "tool_name": "Bash", "tool_input": {"command": "ls"}});
    let mut cmd = Command::new(BIN);
    cmd.args(["relay", "--agent", "claude-code", "--socket"])
        .arg(sb.socket())
        .env("XDG_STATE_HOME", state_home_for(&sb.socket()));
    code(&run_with_deadline(cmd, Some(&input.to_string()), RESPONSE).status)
}

#[test]
fn a_spool_planted_as_a_fifo_does_not_hang_the_relay() {
    let sb = Sandbox::new();
    sb.settings("");
    let dir = planted_state(&sb);
    nix::unistd::mkfifo(
        &dir.join("relay-spool.jsonl"),
        nix::sys::stat::Mode::S_IRWXU,
    )
    .unwrap();
    // run_with_deadline panics if the relay blocks opening the FIFO for writing.
    assert_eq!(relay_down(&sb, "fifo-spool"), 0);
    let d = Daemon::start(sb);
    assert_eq!(fire_as(&d, "codex", bash("x", "ls"))["ok"], true);
}

#[test]
fn a_spool_of_garbage_links_and_lies_is_taken_safely() {
    let sb = Sandbox::new();
    sb.settings("");
    let dir = planted_state(&sb);
    // A link as the spool: the relay does not write through it, the daemon does not read it.
    let victim = sb.p("victim.jsonl");
    let lie = json!({"v": 1, "time": "2026-12-01T09:30:00.123Z", "kind": "relay", "session": "from-the-link"});
    fs::write(&victim, format!("{lie}\n")).unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("relay-spool.jsonl")).unwrap();
    assert_eq!(relay_down(&sb, "via-link"), 0);
    assert_eq!(fs::read_to_string(&victim).unwrap(), format!("{lie}\n"));
    // A spool left by a take cut short, of garbage, invalid UTF-8 and one real line.
    let real = json!({"v": 1, "time": "2026-12-01T09:30:00.123Z", "kind": "relay",
        "relay": "fail_open", "session": "real-one"});
    let mut taking = b"not json\n\xff\xfe\x00garbage\n{\"v\":1,\n".to_vec();
    taking.extend_from_slice(format!("{real}\n").as_bytes());
    fs::write(dir.join("relay-spool.taking"), taking).unwrap();
    let d = Daemon::start(sb);
    assert_eq!(fire_as(&d, "codex", bash("spool-x", "ls"))["ok"], true);
    journaled(&d, "the fire after the spool", |l| {
        l["session"] == "spool-x"
    });
    let lines = lines_of(&d.journal_file());
    assert!(
        lines.iter().all(|l| l["session"] != "from-the-link"),
        "a linked spool was read: {lines:?}"
    );
    assert_eq!(fs::read_to_string(&victim).unwrap(), format!("{lie}\n"));
}

#[test]
fn huge_fields_from_clients_and_hooks_are_cut_in_the_record() {
    let sb = Sandbox::new();
    sb.script(
        "loud.sh",
        "cat > /dev/null; head -c 300000 /dev/zero | tr '\\0' 'e' >&2; exit 2",
    );
    sb.script(
        "garbled.sh",
        "cat > /dev/null; printf 'bad \\377\\376 bytes\\n' >&2; exit 2",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"loud\"\ncommand = \"@DIR@/loud.sh\"\n\
         [[hooks.PreToolUse]]\nname = \"garbled\"\ncommand = \"@DIR@/garbled.sh\"\n",
    );
    let d = Daemon::start(sb);
    let huge = "s".repeat(100_000);
    let event = json!({"session_id": huge, "cwd": huge, "tool_name": huge, "agent_tool_name": "x",
        "tool_input": {"command": huge}});
    let answer = d.fire_req(json!({"op": "fire", "id": 1, "moment": "PreToolUse",
        "agent": "a".repeat(256), "event": event}));
    assert_eq!(answer["refused"], true, "{answer}");
    let path = d.journal_file();
    wait_until(RESPONSE, "the fire's line", || {
        !fs::read_to_string(&path).unwrap_or_default().is_empty()
    });
    let text = fs::read_to_string(&path).unwrap();
    let line = text.lines().next().unwrap();
    assert!(
        line.len() < 32 * 1024,
        "a line of {} bytes: the record's fields are not bounded",
        line.len()
    );
    let v: Value = serde_json::from_str(line).unwrap();
    let garbled = v["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == "garbled")
        .unwrap();
    assert!(
        garbled["stderr"].as_str().unwrap().contains('\u{fffd}'),
        "{garbled}"
    );
}

#[test]
fn many_watchers_and_a_chatty_one_leave_fires_alone() {
    let d = Daemon::start(guarded(""));
    let mut watchers: Vec<Client> = (0..64)
        .map(|i| {
            let mut w = d.connect();
            assert_eq!(
                w.request(&json!({"op": "watch", "id": i}))["watching"],
                true
            );
            w
        })
        .collect();
    // One more sends requests after its watch, and a megabyte of junk: none is read or answered, the
    // stream goes on.
    let mut chatty = d.connect();
    chatty.send_raw(b"{\"op\":\"watch\",\"id\":\"c\"}\n{\"op\":\"status\",\"id\":\"s\"}\n");
    assert_eq!(chatty.recv()["watching"], true);
    wait_until(RESPONSE, "65 watchers", || {
        d.status()["record"]["watchers"] == 65
    });
    let refused = fire_as(&d, "codex", bash("many-w", "rm -rf ~"));
    assert_eq!(refused["refused"], true);
    for w in &mut watchers {
        assert_eq!(w.recv()["session"], "many-w");
    }
    let seen = chatty.recv();
    assert_eq!(
        seen["session"], "many-w",
        "the status after watch is not answered: {seen}"
    );
    drop(watchers);
    drop(chatty);
    wait_until(RESPONSE, "the watchers gone", || {
        d.status()["record"]["watchers"] == 0
    });
}

#[test]
fn a_huge_spool_keeps_the_journal_within_its_bound() {
    let sb = Sandbox::new();
    sb.settings("[record]\nfile_size_mib = 1\nfiles = 2\n");
    let dir = planted_state(&sb);
    // A spool as big as a take reads (2 MiB from a take cut short, 1 MiB more), and lines of it with
    // fields far past any bound.
    let record = |i: usize, pad: usize| {
        json!({"v": 1, "time": "2026-12-01T09:30:00.123Z", "kind": "relay", "relay": "fail_open",
            "session": format!("sp-{i}"), "summary": "z".repeat(pad)})
        .to_string()
    };
    let mut taking = String::new();
    let mut i = 0;
    while taking.len() < (2 << 20) - 4096 {
        taking.push_str(&record(i, 900));
        taking.push('\n');
        i += 1;
    }
    fs::write(dir.join("relay-spool.taking"), &taking).unwrap();
    fs::write(
        dir.join("relay-spool.jsonl"),
        format!("{}\n", record(i, 900_000)),
    )
    .unwrap();
    let d = Daemon::start(sb);
    assert_eq!(fire_as(&d, "codex", bash("after-spool", "ls"))["ok"], true);
    journaled(&d, "the fire after the spool", |l| {
        l["session"] == "after-spool"
    });
    for entry in fs::read_dir(&dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("journal") {
            let len = entry.metadata().unwrap().len();
            assert!(
                len <= 1 << 20,
                "{name} is {len} bytes, past file_size_mib = 1"
            );
            lines_of(&entry.path());
        }
    }
}

#[test]
fn a_full_disk_leaves_fires_answered_and_whole_lines() {
    // A file size limit stands in for a full disk: past it, a write is cut short and then fails (EFBIG;
    // the daemon absorbs SIGXFSZ).
    const LIMIT: u64 = 128 * 1024;
    let d = Daemon::start_with(guarded(""), |cmd| {
        // The daemon's own log, a file too, would meet the limit first.
        cmd.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        limit_file_size(cmd, LIMIT);
    });
    let long = "q".repeat(250);
    let n = 1500;
    let answers = fire_many(&d.socket, n, |i| bash(&format!("full-{i}"), &long));
    assert_eq!(answers.len(), n);
    let mut record = Value::Null;
    wait_until(RESPONSE, "status to say the write failed", || {
        record = d.status()["record"].clone();
        record["error"].is_string() && record["moments"]["PreToolUse"]["fires"] == n
    });
    assert!(
        fs::metadata(d.journal_file()).unwrap().len() <= LIMIT,
        "{record}"
    );
    let text = fs::read(d.journal_file()).unwrap();
    let whole = &text[..text
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1)];
    for line in String::from_utf8_lossy(whole).lines() {
        serde_json::from_str::<Value>(line)
            .unwrap_or_else(|e| panic!("a line after the disk filled ({e}): {line:?}"));
    }
    assert_eq!(
        fire_as(&d, "codex", bash("after-full", "rm -rf ~"))["refused"],
        true
    );
}

#[test]
fn a_loose_journal_is_made_private_and_its_torn_tail_cut() {
    let sb = guarded("");
    let dir = planted_state(&sb);
    let journal = dir.join("journal.jsonl");
    fs::write(&journal, "{\"v\":1,\"kind\":\"fire\"}\n{\"v\":1,\"ki").unwrap();
    fs::set_permissions(&journal, fs::Permissions::from_mode(0o644)).unwrap();
    let d = Daemon::start(sb);
    fire_as(&d, "codex", bash("after-torn", "ls"));
    journaled(&d, "the fire after the torn tail", |l| {
        l["session"] == "after-torn"
    });
    assert_eq!(lines_of(&journal).len(), 2);
    assert_eq!(
        fs::metadata(&journal).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

#[test]
fn a_full_disk_under_the_daemons_own_log_loses_no_answer() {
    // The daemon's log (its stderr, a file here) meets a file size limit first, at debug level within a
    // few fires: tracing-subscriber's report of the failed write, an `eprintln!` to that same stderr,
    // panicked, and every fire that logged lost its answer.
    const LIMIT: u64 = 16 * 1024;
    let d = Daemon::start_with(guarded(""), |cmd| {
        limit_file_size(cmd, LIMIT);
    });
    let answers = fire_many(&d.socket, 300, |i| bash(&format!("log-full-{i}"), "ls"));
    assert_eq!(answers.len(), 300);
    assert!(fs::metadata(&d.log).unwrap().len() >= LIMIT - 4096);
    assert_eq!(
        fire_as(&d, "codex", bash("after", "rm -rf ~"))["refused"],
        true
    );
}

#[test]
fn a_watcher_that_half_closes_still_streams_and_is_told_of_the_stop() {
    let mut d = Daemon::start(guarded(""));
    let stream = std::os::unix::net::UnixStream::connect(&d.socket).unwrap();
    let mut w = Client::from_stream(stream.try_clone().unwrap());
    // As `echo '{"op":"watch"}' | nc -U` does: the request, then the end of what the client sends.
    w.send(&json!({"op": "watch", "id": "hc"}));
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(w.recv()["watching"], true);
    wait_until(RESPONSE, "the watcher", || {
        d.status()["record"]["watchers"] == 1
    });
    fire_as(&d, "codex", bash("half-closed", "ls"));
    assert_eq!(w.recv()["session"], "half-closed");
    d.signal(Signal::SIGTERM);
    let last = w.recv();
    assert_eq!(error_kind(&last), "shutting_down", "{last}");
    assert_eq!(last["id"], "hc");
    w.expect_eof();
    assert!(d.wait_exit(RESPONSE).success());
}

#[test]
fn a_relay_whose_state_folder_is_unwritable_still_answers() {
    let sb = Sandbox::new();
    let home = state_home_for(&sb.socket());
    fs::create_dir_all(&home).unwrap();
    fs::write(home.join("hookd"), "not a folder\n").unwrap();
    assert_eq!(relay_down(&sb, "no-spool"), 0);
    assert_eq!(
        fs::read_to_string(home.join("hookd")).unwrap(),
        "not a folder\n"
    );
}

/// Starts `cmd` with a file size limit of `limit` bytes: past it a write is cut short, then fails, as on
/// a full disk.
fn limit_file_size(cmd: &mut std::process::Command, limit: u64) {
    use std::os::unix::process::CommandExt;
    unsafe {
        // Safety: only setrlimit, async-signal-safe, between fork and exec.
        cmd.pre_exec(move || {
            nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_FSIZE, limit, limit)
                .map_err(std::io::Error::from)
        });
    }
}

/// A fire that matches no hook is decided in place, on its connection's own task, and its record is
/// finished only once its answer is written: each such fire still gets its own answer (its id, no hook,
/// not refused), a fire with a hook among them still refuses, a request that is not a plain fire still
/// gets its own error on a connection that lives on, and every fire's journal line says what its event
/// said (session, folder, tool, summary), even a fire of an unknown moment.
#[test]
fn fires_decided_in_place_are_answered_one_by_one_and_each_has_its_whole_line() {
    let sb = Sandbox::new();
    sb.script("refuse.sh", "echo \"no bash here\" >&2\nexit 2");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"no-bash\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/refuse.sh\"\n",
    );
    let d = Daemon::start(sb);
    let read = |i: usize| {
        // One folder for all: a folder seen first is looked up on disk (its repository), and the fire
        // waits for that; the fires after it are decided in place.
        json!({"session_id": format!("in-place-{i}"), "cwd": "/tmp", "tool_name": "Read",
               "tool_input": {"file_path": format!("/tmp/file-{i}.txt")}})
    };
    // Pipelined, so that fires decided in place follow one another on the connection with no wait.
    let n = 200;
    let responses = fire_many(&d.socket, n, |i| {
        if i == n / 2 {
            bash("in-place-bash", "ls")
        } else {
            read(i)
        }
    });
    let mut ids: Vec<u64> = responses.iter().filter_map(|r| r["id"].as_u64()).collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        (0..n as u64).collect::<Vec<_>>(),
        "each fire answered once"
    );
    for response in &responses {
        // The fire with a hook is answered when its hook ends, the others at once: by id.
        let i = response["id"].as_u64().unwrap() as usize;
        if i == n / 2 {
            assert_eq!(
                response["refused"], true,
                "the hook still refuses: {response}"
            );
            assert_eq!(hook_names(response), ["no-bash"], "{response}");
        } else {
            assert_eq!(response["refused"], false, "{response}");
            assert!(hook_names(response).is_empty(), "{response}");
        }
    }

    // Not plain fires, on one connection that lives through them all.
    let mut c = d.connect();
    let unknown = c.request(&json!({"op": "fire", "id": "u", "moment": "NoSuchMoment",
        "event": {"session_id": "in-place-unknown", "cwd": "/tmp/unknown", "tool_name": "Read"}}));
    assert_eq!(unknown["ok"], false, "{unknown}");
    assert_eq!(unknown["id"], "u", "{unknown}");
    assert_eq!(unknown["error"]["kind"], "unknown_moment", "{unknown}");
    let not_an_object =
        c.request(&json!({"op": "fire", "id": 2, "moment": "PreToolUse", "event": 5}));
    assert_eq!(
        not_an_object["error"]["kind"], "bad_request",
        "{not_an_object}"
    );
    assert_eq!(not_an_object["id"], 2, "{not_an_object}");
    c.send_raw(b"{\"op\":\"fire\",\"id\":3,\"moment\":\"PreToolUse\",\"event\":{\n");
    let torn = c.recv();
    assert_eq!(torn["error"]["kind"], "bad_json", "{torn}");
    let twice = c.request(
        &json!({"op": "fire", "id": 4, "moment": "PreToolUse", "agent": "codex",
        "event": read(n + 1), "undecidable": null, "extra": {"kept": "out"}}),
    );
    assert_eq!(twice["ok"], true, "{twice}");
    assert_eq!(twice["id"], 4, "{twice}");
    let after =
        c.request(&json!({"op": "fire", "id": 5, "moment": "PreToolUse", "event": read(n + 2)}));
    assert_eq!(after["ok"], true, "the connection lives on: {after}");

    for i in (0..n).filter(|&i| i != n / 2).chain([n + 1, n + 2]) {
        let session = format!("in-place-{i}");
        let line = journaled(&d, &format!("fire {i}'s line"), |l| {
            l["session"] == session.as_str()
        });
        assert_eq!(line["kind"], "fire", "{line}");
        assert_eq!(line["moment"], "PreToolUse", "{line}");
        assert_eq!(line["tool"], "Read", "{line}");
        assert_eq!(line["cwd"], "/tmp", "{line}");
        assert_eq!(line["summary"], format!("/tmp/file-{i}.txt"), "{line}");
        assert_eq!(line["verdict"]["decision"], "none", "{line}");
        assert_eq!(line["verdict"]["refused"], false, "{line}");
        assert!(
            line.get("cut").is_none() && line["ms"].is_number(),
            "{line}"
        );
    }
    let codex = journaled(&d, "the fire with an agent", |l| {
        l["session"] == format!("in-place-{}", n + 1).as_str()
    });
    assert_eq!(codex["agent"], "codex", "{codex}");
    let refused = journaled(&d, "the refused fire's line", |l| {
        l["session"] == "in-place-bash"
    });
    assert_eq!(refused["verdict"]["refused"], true, "{refused}");
    assert_eq!(refused["hooks"][0]["stderr"], "no bash here\n", "{refused}");
    let unknown = journaled(&d, "the unknown moment's line", |l| {
        l["session"] == "in-place-unknown"
    });
    assert_eq!(unknown["moment"], "NoSuchMoment", "{unknown}");
    assert_eq!(unknown["tool"], "Read", "{unknown}");
    assert_eq!(unknown["cwd"], "/tmp/unknown", "{unknown}");
    assert!(
        unknown["error"]
            .as_str()
            .is_some_and(|e| e.contains("unknown moment")),
        "{unknown}"
    );
}

/// Fires with no hook made before, while and after somebody watches: nobody watching, their lines are
/// written on the fire's thread and only the bytes go to the journal's writer; somebody watching, their
/// records go whole, for the watcher. Each fire has its line, in the order answered, the watcher sees
/// every fire made while it watches, and `status` counts them all.
#[test]
fn fires_before_while_and_after_a_watcher_each_have_their_line_in_order_and_are_counted() {
    let d = Daemon::start(Sandbox::new());
    let fire = |n: usize| {
        let answer = d.fire("PreToolUse", bash(&format!("s{n}"), "ls"));
        assert_eq!(answer["ok"], true, "{answer}");
    };
    (0..40).for_each(fire);
    let mut watcher = d.connect();
    assert_eq!(
        watcher.request(&json!({"op": "watch", "id": "w"}))["watching"],
        true
    );
    (40..80).for_each(fire);
    for n in 40..80 {
        assert_eq!(
            watcher.recv()["session"],
            format!("s{n}"),
            "watched in order"
        );
    }
    drop(watcher);
    wait_until(RESPONSE, "the watcher gone", || {
        d.status()["record"]["watchers"] == 0
    });
    (80..120).for_each(fire);
    wait_until(RESPONSE, "every fire counted", || {
        d.status()["record"]["moments"]["PreToolUse"]["fires"] == 120
    });
    let path = d.journal_file();
    let mut sessions = Vec::new();
    wait_until(RESPONSE, "every fire's line", || {
        sessions = journal_records(&path)
            .iter()
            .filter(|line| line["kind"] == "fire")
            .map(|line| line["session"].as_str().unwrap_or_default().to_owned())
            .collect();
        sessions.len() >= 120
    });
    let expected: Vec<String> = (0..120).map(|n| format!("s{n}")).collect();
    assert_eq!(sessions, expected, "each fire once, in the order answered");
}
