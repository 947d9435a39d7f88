//! Bad clients (contract section 9): bytes that are not UTF-8, JSON of the wrong shape in every field, ids
//! of every JSON type, half lines left hanging, lines over the limit, a thousand connections at once and
//! more than the daemon takes, clients that never read, and clients that leave in the middle of a fire.
//!
//! Each bad client gets its error (or is closed, where the contract says so), and throughout each scenario
//! a witness client fires in a loop on a connection of its own and must get a correct answer every time:
//! one bad client never costs another client its service.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::{self, JoinHandle};
use std::time::Instant;

use crate::common::*;
use serde_json::{Value, json};

/// A quick hook for the witness (`w` at PreToolUse: adds "w"), and a slow one for the clients that leave
/// mid-fire (`slow` at PostToolUse: a shell and its child `sleep`, each writing its pid to a file named
/// after the event's session, then waiting). The scripts live outside the watched settings folder.
const SETTINGS: &str = "\
[[hooks.PreToolUse]]
name = \"w\"
argv = [\"/bin/echo\", \"w\"]

[[hooks.PostToolUse]]
name = \"slow\"
command = \"@DIR@/slow.sh\"
timeout = 60
";

/// `sleep 30` is a bound, not a wait: if the daemon failed to kill it, it still ends by itself.
const SLOW: &str = "sleep 30 &\n\
                    echo $! > @DIR@/$HOOKD_SESSION.child\n\
                    echo $$ > @DIR@/$HOOKD_SESSION.hook\n\
                    wait";

fn daemon() -> Daemon {
    let sb = Sandbox::new();
    sb.script("slow.sh", SLOW);
    sb.settings(SETTINGS);
    Daemon::start(sb)
}

/// The witness's own request, for the request number `n`.
fn witness_request(n: u64) -> Value {
    json!({"op": "fire", "id": format!("witness-{n}"), "moment": "PreToolUse", "agent": "claude-code",
           "event": bash_event()})
}

/// Checks one answer to a PreToolUse fire: the right id, a well-formed verdict, `w`'s add and nothing else.
fn check_served(r: &Value, id: &Value) {
    assert_eq!(r.get("id"), Some(id), "an answer for another request: {r}");
    check_fire_shape(r);
    assert_eq!(r["refused"], false, "{r}");
    assert_eq!(adds(r), ["w"], "{r}");
    assert_eq!(hook_names(r), ["w"], "{r}");
}

/// A client that fires in a loop, one request at a time, on a connection opened before the scenario
/// begins, and checks every answer. It panics (and so fails the test) on a wrong or missing answer.
struct Witness {
    stop: Arc<AtomicBool>,
    answered: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl Witness {
    fn start(d: &Daemon) -> Witness {
        let mut client = d.connect();
        let stop = Arc::new(AtomicBool::new(false));
        let answered = Arc::new(AtomicU64::new(0));
        let thread = {
            let (stop, answered) = (stop.clone(), answered.clone());
            thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    n += 1;
                    let request = witness_request(n);
                    let r = client.request(&request);
                    check_served(&r, &request["id"]);
                    answered.fetch_add(1, Ordering::SeqCst);
                }
            })
        };
        let witness = Witness {
            stop,
            answered,
            thread: Some(thread),
        };
        witness.served(1, "its start");
        witness
    }

    fn answered(&self) -> u64 {
        self.answered.load(Ordering::SeqCst)
    }

    /// Waits until the witness has had `n` more correct answers than it had on entry.
    fn served(&self, n: u64, during: &str) {
        let start = self.answered();
        wait_until(
            RESPONSE,
            &format!("the witness to be served {n} more times during {during}"),
            || {
                let thread = self.thread.as_ref().expect("the witness is running");
                assert!(
                    !thread.is_finished() || self.stop.load(Ordering::SeqCst),
                    "the witness stopped during {during}: it got a wrong answer or none (see its panic above)"
                );
                self.answered() >= start + n
            },
        );
    }

    /// Stops the witness; its panic, if it had one, fails the test. Returns how many answers it checked.
    fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take()
            && let Err(panic) = thread.join()
        {
            std::panic::resume_unwind(panic);
        }
        self.answered()
    }
}

impl Drop for Witness {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// After the bad requests, the same connection still serves a fire.
fn still_serves(c: &mut Client) {
    let request = witness_request(0);
    let r = c.request(&request);
    check_served(&r, &request["id"]);
}

/// The daemon that answers is the one the test started (it did not die and get replaced), and it did not
/// panic on the way.
fn still_the_same_daemon(d: &Daemon) {
    assert_eq!(d.status()["pid"], d.pid(), "another daemon answers");
    assert!(
        !d.log_text().contains("panicked"),
        "the daemon panicked:\n{}",
        d.log_text()
    );
}

/// Nothing has come back on `stream`, and it is not closed: reading would block.
fn nothing_to_read(stream: &UnixStream, what: &str) {
    stream.set_nonblocking(true).expect("non-blocking");
    let mut byte = [0u8; 1];
    match (&*stream).read(&mut byte) {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        Ok(0) => panic!("{what}: the daemon closed the connection"),
        Ok(_) => panic!("{what}: the daemon answered an incomplete line"),
        Err(e) => panic!("{what}: {e}"),
    }
    stream.set_nonblocking(false).expect("blocking");
}

#[test]
fn invalid_utf8_is_bad_json_and_the_connection_lives() {
    let d = daemon();
    let w = Witness::start(&d);
    let mut c = d.connect();
    let lines: &[&[u8]] = &[
        b"\xff\n",
        b"{\"op\":\"status\",\"id\":\"\xff\"}\n",
        b"{\"op\":\"status\",\"\xc3\":1}\n",
        b"{\"op\":\"status\",\"id\":\"\xc0\xaf\"}\n",
        b"{\"op\":\"status\",\"id\":\"\xed\xa0\x80\"}\n",
        b"{\"op\":\"status\",\"id\":\"\xf4\x90\x80\x80\"}\n",
        b"{\"op\":\"fire\",\"id\":1,\"moment\":\"PreToolUse\",\"event\":{\"tool_name\":\"Ba\x80sh\"}}\n",
        b"{\"op\":\"fire\",\"id\":2,\"moment\":\"PreToolUse\",\"event\":{\"tool_name\":\"Bash\"}}\xfe\n",
    ];
    // The ids that can be read whole from each line (an id that could be recovered
    // is echoed); none from an id that is itself not UTF-8.
    let ids = [
        None,
        None,
        None,
        None,
        None,
        None,
        Some(json!(1)),
        Some(json!(2)),
    ];
    // One at a time, then all at once: the same answers either way.
    for (line, id) in lines.iter().zip(&ids) {
        c.send_raw(line);
        let r = c.recv();
        assert_eq!(
            error_kind(&r),
            "bad_json",
            "{}: {r}",
            String::from_utf8_lossy(line)
        );
        assert_eq!(
            r.get("id"),
            id.as_ref(),
            "{}: the id echoed is not the one the line holds: {r}",
            String::from_utf8_lossy(line)
        );
        assert!(
            r["error"]["message"].as_str().unwrap().contains("UTF-8"),
            "the message does not say what is wrong: {r}"
        );
    }
    w.served(3, "lines that are not UTF-8");
    c.send_raw(&lines.concat());
    for _ in lines {
        assert_eq!(error_kind(&c.recv()), "bad_json");
    }
    still_serves(&mut c);
    w.served(3, "a batch of lines that are not UTF-8");
    still_the_same_daemon(&d);
    w.finish();
}

#[test]
fn json_of_the_wrong_shape_is_bad_request_with_its_id() {
    let d = daemon();
    let w = Witness::start(&d);
    let event = bash_event();
    let cases: Vec<(Value, &str)> = vec![
        // op
        (json!({}), "bad_request"),
        (json!({"op": 1}), "bad_request"),
        (json!({"op": null}), "bad_request"),
        (json!({"op": true}), "bad_request"),
        (json!({"op": ["fire"]}), "bad_request"),
        (json!({"op": {"fire": 1}}), "bad_request"),
        (json!({"op": ""}), "bad_request"),
        (json!({"op": "fier"}), "bad_request"),
        (json!({"op": "FIRE"}), "bad_request"),
        (json!({"op": "fire "}), "bad_request"),
        // moment
        (json!({"op": "fire", "event": event}), "bad_request"),
        (
            json!({"op": "fire", "moment": 7, "event": event}),
            "bad_request",
        ),
        (
            json!({"op": "fire", "moment": "", "event": event}),
            "bad_request",
        ),
        (
            json!({"op": "fire", "moment": null, "event": event}),
            "bad_request",
        ),
        (
            json!({"op": "fire", "moment": ["PreToolUse"], "event": event}),
            "bad_request",
        ),
        (
            json!({"op": "fire", "moment": {"PreToolUse": 1}, "event": event}),
            "bad_request",
        ),
        (
            json!({"op": "fire", "moment": true, "event": event}),
            "bad_request",
        ),
        (
            json!({"op": "fire", "moment": "NoSuchMoment", "event": event}),
            "unknown_moment",
        ),
        // event
        (json!({"op": "fire", "moment": "PreToolUse"}), "bad_request"),
        (
            json!({"op": "fire", "moment": "PreToolUse", "event": []}),
            "bad_request",
        ),
        (
            json!({"op": "fire", "moment": "PreToolUse", "event": [event]}),
            "bad_request",
        ),
        (
            json!({"op": "fire", "moment": "PreToolUse", "event": "Bash"}),
            "bad_request",
        ),
        (
            json!({"op": "fire", "moment": "PreToolUse", "event": 3}),
            "bad_request",
        ),
        (
            json!({"op": "fire", "moment": "PreToolUse", "event": null}),
            "bad_request",
        ),
        (
            json!({"op": "fire", "moment": "PreToolUse", "event": false}),
            "bad_request",
        ),
        // agent
        (
            json!({"op": "fire", "moment": "PreToolUse", "agent": 3, "event": event}),
            "bad_request",
        ),
        (
            json!({"op": "fire", "moment": "PreToolUse", "agent": true, "event": event}),
            "bad_request",
        ),
        (
            json!({"op": "fire", "moment": "PreToolUse", "agent": ["a"], "event": event}),
            "bad_request",
        ),
        (
            json!({"op": "fire", "moment": "PreToolUse", "agent": {}, "event": event}),
            "bad_request",
        ),
        (json!({"op": "hello", "agent": 3}), "bad_request"),
        // hello's moments
        (
            json!({"op": "hello", "moments": "PreToolUse"}),
            "bad_request",
        ),
        (json!({"op": "hello", "moments": 3}), "bad_request"),
        (
            json!({"op": "hello", "moments": {"PreToolUse": true}}),
            "bad_request",
        ),
        (json!({"op": "hello", "moments": true}), "bad_request"),
        (json!({"op": "hello", "moments": [1]}), "bad_request"),
        (
            json!({"op": "hello", "moments": ["PreToolUse", null]}),
            "bad_request",
        ),
        (
            json!({"op": "hello", "moments": [["PreToolUse"]]}),
            "bad_request",
        ),
    ];
    let mut c = d.connect();
    // One at a time: each answer, its kind and its id.
    for (i, (request, kind)) in cases.iter().enumerate() {
        let mut request = request.clone();
        request["id"] = json!(i);
        let r = c.request(&request);
        assert_eq!(error_kind(&r), *kind, "{request}: {r}");
        assert_eq!(r.get("id"), Some(&json!(i)), "{request}: {r}");
    }
    w.served(3, "requests of the wrong shape");
    // All at once, in one write: every one answered once, matched by id.
    let mut batch = String::new();
    for (i, (request, _)) in cases.iter().enumerate() {
        let mut request = request.clone();
        request["id"] = json!(format!("batch-{i}"));
        batch.push_str(&format!("{request}\n"));
    }
    c.send_raw(batch.as_bytes());
    let mut seen = vec![0; cases.len()];
    for _ in &cases {
        let r = c.recv();
        let i: usize = r["id"]
            .as_str()
            .and_then(|id| id.strip_prefix("batch-"))
            .and_then(|i| i.parse().ok())
            .unwrap_or_else(|| panic!("an answer with an id that was not sent: {r}"));
        assert_eq!(error_kind(&r), cases[i].1, "{}: {r}", cases[i].0);
        seen[i] += 1;
    }
    assert!(
        seen.iter().all(|&n| n == 1),
        "answers per request: {seen:?}"
    );
    still_serves(&mut c);
    w.served(3, "a batch of requests of the wrong shape");
    still_the_same_daemon(&d);
    w.finish();
}

#[test]
fn lines_that_are_not_requests_are_answered_without_an_id() {
    let d = daemon();
    let w = Witness::start(&d);
    // A fire of 100,000 levels of nesting: far past any parser's recursion limit, well under the line
    // limit.
    let deep = format!(
        "{{\"op\":\"fire\",\"id\":1,\"moment\":\"PreToolUse\",\"event\":{{\"a\":{}{}}}}}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"\n".to_vec(), "bad_json"),
        (b"   \t \n".to_vec(), "bad_json"),
        (b"\r\n".to_vec(), "bad_json"),
        (b"\0\n".to_vec(), "bad_json"),
        (b"{\n".to_vec(), "bad_json"),
        (b"{\"op\":\"status\",}\n".to_vec(), "bad_json"),
        (b"{'op':'status'}\n".to_vec(), "bad_json"),
        (b"{\"op\":\"status\",\"id\":NaN}\n".to_vec(), "bad_json"),
        (b"{\"op\":\"status\"} trailing\n".to_vec(), "bad_json"),
        (
            b"{\"op\":\"status\"}{\"op\":\"status\"}\n".to_vec(),
            "bad_json",
        ),
        (b"[1]\n".to_vec(), "bad_request"),
        (b"\"status\"\n".to_vec(), "bad_request"),
        (b"42\n".to_vec(), "bad_request"),
        (b"null\n".to_vec(), "bad_request"),
        (b"true\n".to_vec(), "bad_request"),
        (b"[{\"op\":\"status\",\"id\":1}]\n".to_vec(), "bad_request"),
    ];
    let mut c = d.connect();
    for (line, kind) in &cases {
        c.send_raw(line);
        let r = c.recv();
        let shown = String::from_utf8_lossy(&line[..line.len().min(80)]).into_owned();
        assert_eq!(error_kind(&r), *kind, "{shown:?}: {r}");
        assert!(
            r.get("id").is_none(),
            "{shown:?}: an id came from nowhere: {r}"
        );
    }
    // The fire nested too deep is no error: it is decided from its head, each hook it would have
    // reached read as failed.
    c.send_raw(deep.as_bytes());
    let r = c.recv();
    assert_eq!((&r["ok"], &r["id"]), (&json!(true), &json!(1)), "{r}");
    assert_eq!(hook(&r, "w")["outcome"], "failed", "{r}");
    still_serves(&mut c);
    w.served(3, "lines that are not requests");
    still_the_same_daemon(&d);
    w.finish();
}

#[test]
fn an_id_of_every_json_type_is_echoed_exactly() {
    let d = daemon();
    let w = Witness::start(&d);
    let ids = [
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(-1),
        json!(i64::MIN),
        json!(u64::MAX),
        json!(1.5),
        json!(-0.25),
        json!(1.0),
        json!(""),
        json!("text"),
        json!("üñí € 😀 \u{7f}"),
        json!("quote \" backslash \\ newline \n tab \t nul \u{0}"),
        json!([]),
        json!([1, "two", null, [3.5], {"k": false}]),
        json!({}),
        json!({"nested": {"deep": [1, {"x": "y"}]}, "n": null}),
    ];
    let mut c = d.connect();
    for id in &ids {
        let requests = [
            ("status", json!({"op": "status", "id": id})),
            (
                "hello",
                json!({"op": "hello", "id": id, "agent": "claude-code"}),
            ),
            ("reload", json!({"op": "reload", "id": id})),
            (
                "fire",
                json!({"op": "fire", "id": id, "moment": "PreToolUse", "event": bash_event()}),
            ),
            (
                "fire without an event",
                json!({"op": "fire", "id": id, "moment": "PreToolUse"}),
            ),
            ("an unknown op", json!({"op": "dance", "id": id})),
            ("no op", json!({"id": id})),
            (
                "an unknown moment",
                json!({"op": "fire", "id": id, "moment": "Nope", "event": {}}),
            ),
        ];
        for (what, request) in requests {
            let r = c.request(&request);
            assert_eq!(r.get("id"), Some(id), "{what} with id {id}: {r}");
            if what == "fire" {
                check_served(&r, id);
            }
        }
    }
    // Without an id, none comes back, whatever the answer.
    for request in [
        json!({"op": "status"}),
        json!({"op": "fire", "moment": "PreToolUse", "event": bash_event()}),
        json!({"op": "fire", "moment": "PreToolUse"}),
        json!({"op": "fire", "moment": "Nope", "event": {}}),
    ] {
        let r = c.request(&request);
        assert!(r.get("id").is_none(), "{request}: {r}");
    }
    w.served(3, "requests with ids of every type");
    still_the_same_daemon(&d);
    w.finish();
}

#[test]
fn a_half_line_then_silence_holds_up_only_its_own_connection() {
    let d = daemon();
    let w = Witness::start(&d);
    let waiting = UnixStream::connect(&d.socket).unwrap();
    let mut waiting_client = Client::from_stream(waiting.try_clone().unwrap());
    waiting_client.send_raw(br#"{"op":"fire","id":"half","moment":"PreToolUse","#);
    let silent = UnixStream::connect(&d.socket).unwrap();
    (&silent).write_all(br#"{"op":"status","id":"#).unwrap();

    w.served(20, "two connections each holding half a line");
    // A newcomer is served too.
    assert_eq!(d.status()["ok"], true);
    nothing_to_read(&waiting, "half a fire");
    nothing_to_read(&silent, "half a status");

    // The rest of the line, much later: the daemon was only waiting for it.
    waiting_client.send_raw(b"\"event\":{\"tool_name\":\"Bash\"}}\n");
    check_served(&waiting_client.recv(), &json!("half"));
    // The silent one is closed by its client, never answered.
    drop(silent);

    // A request dribbled one byte per write, then two requests split at odd places.
    let mut dribble = d.connect();
    for byte in br#"{"op":"status","id":"dribble"}"#.iter().chain(b"\n") {
        dribble.send_raw(&[*byte]);
    }
    assert_eq!(dribble.recv()["id"], "dribble");
    let two = b"{\"op\":\"status\",\"id\":\"one\"}\n{\"op\":\"status\",\"id\":\"two\"}\n";
    for piece in [&two[..5], &two[5..28], &two[28..29], &two[29..]] {
        dribble.send_raw(piece);
    }
    assert_eq!(dribble.recv()["id"], "one");
    assert_eq!(dribble.recv()["id"], "two");

    w.served(3, "the end of the half lines");
    still_the_same_daemon(&d);
    w.finish();
}

#[test]
fn a_half_line_then_a_hang_up_is_dropped_quietly() {
    let d = daemon();
    let w = Witness::start(&d);
    // Half a line, then gone; many times over, to catch a leak or a crash.
    for i in 0..200 {
        let stream = UnixStream::connect(&d.socket).unwrap();
        let half = format!(r#"{{"op":"fire","id":{i},"moment":"PreToolUse","event":{{"tool_"#);
        (&stream).write_all(half.as_bytes()).unwrap();
        drop(stream);
    }
    w.served(5, "200 clients that hung up after half a line");
    still_the_same_daemon(&d);

    // Half a line, then only the sending side shut (the client still listens): the end of input ends
    // the line, which is not JSON.
    let stream = UnixStream::connect(&d.socket).unwrap();
    let mut c = Client::from_stream(stream.try_clone().unwrap());
    c.send_raw(br#"{"op":"status","id":"#);
    stream.shutdown(Shutdown::Write).unwrap();
    assert_eq!(error_kind(&c.recv()), "bad_json");
    c.expect_eof();

    // A whole request without its newline, then the sending side shut: it is a request, and answered.
    let stream = UnixStream::connect(&d.socket).unwrap();
    let mut c = Client::from_stream(stream.try_clone().unwrap());
    c.send_raw(br#"{"op":"status","id":"tail"}"#);
    stream.shutdown(Shutdown::Write).unwrap();
    let r = c.recv();
    assert_eq!((&r["ok"], &r["id"]), (&json!(true), &json!("tail")), "{r}");
    c.expect_eof();

    w.served(3, "half-closed clients");
    still_the_same_daemon(&d);
    w.finish();
}

/// Writes `bytes` on a clone of `stream` from a thread: the daemon may close before it has read them all,
/// so the write may fail, and must not hold the test up.
fn write_in_background(stream: &UnixStream, bytes: Vec<u8>) -> JoinHandle<()> {
    let mut writer = stream.try_clone().unwrap();
    writer.set_write_timeout(Some(RESPONSE)).unwrap();
    thread::spawn(move || {
        let _ = writer.write_all(&bytes);
    })
}

#[test]
fn a_line_over_65_mib_is_too_large_and_closes_only_its_connection() {
    let d = daemon();
    let w = Witness::start(&d);

    // A fire, then a line of 66 MiB (the limit: an event of 64 MiB and 1 MiB around it): the fire is answered, the line is answered too_large, then the
    // connection is closed.
    let stream = UnixStream::connect(&d.socket).unwrap();
    let mut c = Client::from_stream(stream.try_clone().unwrap());
    c.send(&witness_request(1));
    let long = format!(
        "{{\"op\":\"status\",\"id\":\"long\",\"pad\":\"{}\"}}\n",
        "x".repeat(66 << 20)
    );
    let writer = write_in_background(&stream, long.into_bytes());
    let mut answers = [c.recv(), c.recv()];
    answers.sort_by_key(|r| r.get("id").is_some());
    assert_eq!(error_kind(&answers[0]), "too_large", "{answers:?}");
    assert!(
        answers[0].get("id").is_none(),
        "an id read from a line never read whole: {answers:?}"
    );
    check_served(&answers[1], &json!("witness-1"));
    c.expect_eof();
    writer.join().unwrap();
    w.served(3, "a line of 66 MiB");

    // 66 MiB with no newline at all, from a client that stays: answered once the limit is passed, without
    // waiting for a newline that never comes.
    let stream = UnixStream::connect(&d.socket).unwrap();
    let mut c = Client::from_stream(stream.try_clone().unwrap());
    let writer = write_in_background(&stream, vec![b'7'; 66 << 20]);
    assert_eq!(error_kind(&c.recv()), "too_large");
    c.expect_eof();
    writer.join().unwrap();

    w.served(3, "66 MiB without a newline");
    still_the_same_daemon(&d);
    w.finish();
}

/// The daemon started with `limit` open files, soft and hard (so it cannot raise it).
fn start_with_file_limit(sb: Sandbox, limit: u64) -> Daemon {
    use nix::sys::resource::{Resource, setrlimit};
    Daemon::start_with(sb, move |cmd| unsafe {
        // SAFETY: only setrlimit, a system call, runs between fork and exec.
        std::os::unix::process::CommandExt::pre_exec(cmd, move || {
            setrlimit(Resource::RLIMIT_NOFILE, limit, limit)?;
            Ok(())
        });
    })
}

/// The daemon's own limit on open files, from /proc.
fn open_files_limit_of(pid: u32) -> u64 {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("reading limits");
    limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|soft| soft.parse().ok())
        .unwrap_or_else(|| panic!("no open-files limit in:\n{limits}"))
}

/// Opens `n` connections at once, from a few threads at a time.
fn connect_many(socket: &Path, n: usize) -> Vec<UnixStream> {
    const THREADS: usize = 4;
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let socket = socket.to_path_buf();
            thread::spawn(move || {
                (t..n)
                    .step_by(THREADS)
                    .map(|i| {
                        let stream = UnixStream::connect(&socket)
                            .unwrap_or_else(|e| panic!("connection {i} of {n}: {e}"));
                        stream.set_read_timeout(Some(RESPONSE)).unwrap();
                        (i, stream)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut streams: Vec<(usize, UnixStream)> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    streams.sort_by_key(|(i, _)| *i);
    streams.into_iter().map(|(_, s)| s).collect()
}

/// Checks one status answer read from `line`.
fn check_status(line: &str, id: usize, pid: u32) {
    let r: Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"));
    assert_eq!(
        (&r["ok"], &r["id"], &r["pid"]),
        (&json!(true), &json!(id), &json!(pid)),
        "{r}"
    );
}

#[test]
fn a_thousand_connections_at_once_are_all_served() {
    const N: usize = 1000;
    // The test's connections, and the daemon's (it inherits the limit), plus room for the rest.
    let limit = raise_open_files(4096);
    assert!(
        limit >= 2 * N as u64,
        "the open-files limit is {limit}, too low for {N} connections"
    );
    let d = daemon();
    assert!(
        open_files_limit_of(d.pid()) >= 2 * N as u64,
        "the daemon's open-files limit is too low"
    );
    let w = Witness::start(&d);
    let started = Instant::now();
    let streams = connect_many(&d.socket, N);
    for (i, stream) in streams.iter().enumerate() {
        (&*stream)
            .write_all(format!("{{\"op\":\"status\",\"id\":{i}}}\n").as_bytes())
            .unwrap();
    }
    w.served(3, "a thousand connections");
    for (i, stream) in streams.iter().enumerate() {
        let mut line = String::new();
        BufReader::new(stream)
            .read_line(&mut line)
            .unwrap_or_else(|e| panic!("connection {i}: {e}"));
        check_status(&line, i, d.pid());
    }
    eprintln!(
        "figures: {N} connections opened at once, {N} status answers, in {:?}",
        started.elapsed()
    );
    drop(streams);
    w.served(3, "the end of a thousand connections");
    still_the_same_daemon(&d);
    w.finish();
}

#[test]
fn past_the_connection_limit_the_rest_wait_their_turn() {
    // More than the daemon serves at once (1,024, the witness among them): the rest wait to be accepted,
    // and are served as others close.
    const N: usize = 1100;
    let limit = raise_open_files(4096);
    assert!(
        limit >= 2 * N as u64,
        "the open-files limit is {limit}, too low for {N} connections"
    );
    let d = daemon();
    assert!(
        open_files_limit_of(d.pid()) >= 2 * N as u64,
        "the daemon's open-files limit is too low"
    );
    let w = Witness::start(&d);
    let started = Instant::now();
    let streams = connect_many(&d.socket, N);
    let mut readers: Vec<Option<(BufReader<UnixStream>, String)>> = streams
        .into_iter()
        .enumerate()
        .map(|(i, stream)| {
            (&stream)
                .write_all(format!("{{\"op\":\"status\",\"id\":{i}}}\n").as_bytes())
                .unwrap();
            stream.set_nonblocking(true).unwrap();
            Some((BufReader::new(stream), String::new()))
        })
        .collect();
    // Read whatever has come; close each connection once it is answered, which lets a waiting one in.
    let mut answered = 0;
    wait_until(RESPONSE, "every connection to be answered", || {
        for (i, slot) in readers.iter_mut().enumerate() {
            let Some((reader, line)) = slot else { continue };
            match reader.read_line(line) {
                Ok(_) if line.ends_with('\n') => {
                    check_status(line, i, d.pid());
                    *slot = None;
                    answered += 1;
                }
                Ok(0) => panic!("connection {i} closed without an answer"),
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => panic!("connection {i}: {e}"),
            }
        }
        answered == N
    });
    eprintln!(
        "figures: {N} connections opened at once (past the limit of 1024), {answered} status answers, in {:?}",
        started.elapsed()
    );
    w.served(3, "more connections than the limit");
    still_the_same_daemon(&d);
    w.finish();
}

#[test]
fn a_client_that_fires_and_hangs_up_has_its_hooks_killed() {
    const LEAVERS: usize = 8;
    let d = daemon();
    let w = Witness::start(&d);
    let leavers: Vec<Client> = (0..LEAVERS)
        .map(|n| {
            let mut c = d.connect();
            c.send(
                &json!({"op": "fire", "id": n, "moment": "PostToolUse", "agent": "claude-code",
                           "event": {"session_id": format!("s{n}"), "tool_name": "Bash"}}),
            );
            c
        })
        .collect();
    let pids: Vec<i32> = (0..LEAVERS)
        .flat_map(|n| {
            [
                d.sb.wait_pid(&format!("s{n}.hook")),
                d.sb.wait_pid(&format!("s{n}.child")),
            ]
        })
        .collect();
    w.served(5, "eight slow fires");
    for &pid in &pids {
        assert!(
            !process_gone(pid, d.pid()),
            "hook process {pid} ended before its client left"
        );
    }
    drop(leavers);
    wait_until(
        RESPONSE,
        "every hook process of the clients that left to be gone",
        || pids.iter().all(|&pid| process_gone(pid, d.pid())),
    );
    w.served(5, "the clients leaving");
    let served = w.finish();
    wait_until(RESPONSE, "no fire in flight", || {
        d.status()["in_flight"] == 0
    });
    still_the_same_daemon(&d);
    eprintln!(
        "figures: {LEAVERS} clients left mid-fire, {} hook processes killed, witness served {served} times",
        pids.len()
    );
}

#[test]
fn a_client_that_never_reads_holds_up_no_one_else() {
    let d = daemon();
    let w = Witness::start(&d);
    let stream = UnixStream::connect(&d.socket).unwrap();
    stream.set_nonblocking(true).unwrap();
    // Status requests, never read, until the daemon stops taking them (its answers fill the socket,
    // then ours do), within a bound.
    let batch: Vec<u8> = (0..64)
        .flat_map(|i| format!("{{\"op\":\"status\",\"id\":{i}}}\n").into_bytes())
        .collect();
    const BOUND: usize = 256 << 20;
    let (mut written, mut offset) = (0, 0);
    loop {
        match (&stream).write(&batch[offset..]) {
            Ok(n) => {
                written += n;
                offset = (offset + n) % batch.len();
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) => panic!("writing to the daemon: {e}"),
        }
        assert!(
            written < BOUND,
            "the daemon took {written} bytes from a client that reads nothing"
        );
    }
    w.served(10, "a client that never reads");
    assert_eq!(d.status()["ok"], true, "a newcomer is not served");
    drop(stream);
    w.served(3, "the client that never read leaving");
    still_the_same_daemon(&d);
    w.finish();
    eprintln!(
        "figures: a client that never read sent {written} bytes before the daemon stopped taking them"
    );
}

#[test]
fn idle_connections_never_take_the_descriptors_a_hook_needs() {
    // Under a low open-file limit, idle connections took every descriptor and the next
    // hook "could not start: too many open files". The daemon is started with a limit of 256 (soft and
    // hard, so it cannot raise it); 400 clients connect and sit idle.
    const LIMIT: u64 = 256;
    const IDLE: usize = 400;
    raise_open_files(4096);
    let sb = Sandbox::new();
    sb.settings(
        "[defaults]\nmax_processes = 8\n\
         [[hooks.PreToolUse]]\nname = \"ran\"\nargv = [\"/bin/echo\", \"ran\"]\n",
    );
    let d = start_with_file_limit(sb, LIMIT);
    assert_eq!(open_files_limit_of(d.pid()), LIMIT);
    let mut first = d.connect();
    // The rest connect without blocking: past the daemon's limit they wait in the backlog, or are
    // refused when even the backlog is full.
    let idle: Vec<UnixStream> = (0..IDLE)
        .filter_map(|_| connect_without_blocking(&d.socket))
        .collect();
    assert!(
        idle.len() > 100,
        "only {} connections could be made",
        idle.len()
    );
    // Every connection slot the limit allows is taken.
    let mut status = Value::Null;
    wait_until(
        RESPONSE,
        "the daemon to take every connection it allows",
        || {
            status = first.request(&json!({"op": "status", "id": "s"}));
            status["connections"]["open"].as_u64().is_some()
                && status["connections"]["open"] == status["connections"]["limit"]
        },
    );
    let allowed = status["connections"]["limit"].as_u64().unwrap();
    assert!(
        (4..LIMIT).contains(&allowed),
        "{allowed} connections allowed under a limit of {LIMIT}: {status}"
    );
    // Hooks still run: eight at once, the settings' max_processes.
    for id in 0..8 {
        first.send(&json!({"op": "fire", "id": id, "moment": "PreToolUse",
                           "event": {"tool_name": "Bash"}}));
    }
    for _ in 0..8 {
        let r = first.recv();
        assert_eq!(adds(&r), vec!["ran"], "a hook could not run: {r}");
    }
    // A client waiting in the backlog is let in as one closes.
    drop(idle);
    let mut late = d.connect();
    assert_eq!(late.request(&json!({"op": "status"}))["ok"], true);
    eprintln!("figures: open-file limit {LIMIT}: {allowed} connections at once, hooks ran");
}

/// The daemon's peak resident memory (VmHWM), in MiB.
fn peak_memory_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("reading status");
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kib| kib.parse::<u64>().ok())
        .map(|kib| kib / 1024)
        .unwrap_or_else(|| panic!("no VmHWM in:\n{status}"))
}

/// `FIRES` fires at the hook `flood`, pipelined on one line each.
fn flood_requests(fires: usize) -> Vec<u8> {
    (0..fires)
        .flat_map(|id| {
            let mut line = json!({"op": "fire", "id": id, "moment": "PreToolUse",
                                  "event": {"tool_name": "Flood"}})
            .to_string()
            .into_bytes();
            line.push(b'\n');
            line
        })
        .collect()
}

#[test]
fn a_client_that_pipelines_floods_and_never_reads_is_held_to_a_budget() {
    // A hook printing 1 MiB of control characters gives answers of about 6 MiB once
    // escaped; one client pipelining 256 such fires without reading made the daemon hold 1.58 GB. Now an
    // answer is at most 2 MiB, and what a connection holds is budgeted.
    const FIRES: usize = 256;
    // Each hook prints 448 KiB of control characters: 2.6 MiB once escaped, so every answer is cut to
    // 2 MiB as with the megabyte of the original report, for under half the daemon's work. With a
    // megabyte each, the whole suite running beside this test on two cores kept the daemon's one thread
    // busy past the witness's 30 s (seen in CI).
    const PRINTS: usize = 448 << 10;
    let sb = Sandbox::new();
    sb.script(
        "flood.sh",
        &format!("echo x >> @DIR@/runs\nhead -c {PRINTS} /dev/zero | tr '\\0' '\\1'"),
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"flood\"\nmatcher = \"Flood\"\ncommand = \"@DIR@/flood.sh\"\n\
         [[hooks.PreToolUse]]\nname = \"w\"\nmatcher = \"Bash\"\nargv = [\"/bin/echo\", \"w\"]\n",
    );
    let d = Daemon::start(sb);
    let w = Witness::start(&d);
    let runs = || {
        std::fs::read_to_string(d.sb.p("runs"))
            .map(|text| text.lines().count())
            .unwrap_or(0)
    };

    // A client that never reads. The daemon runs fires until the client's budget is spent, then stops
    // reading its requests; what it holds meanwhile is bounded. This client is never asked to read
    // afterwards: the daemon closes a connection whose answer waited WRITE_DEADLINE (30 s) unread, and
    // on a loaded machine the budget's some 80 hooks take longer than that to run (which is what made
    // this test fail under load, when it read only then: the connection was reset, by design).
    let never_reads = UnixStream::connect(&d.socket).unwrap();
    (&never_reads).write_all(&flood_requests(FIRES)).unwrap();
    // Some 80 hooks each print 448 KiB, and each answer is escaped to 2.6 MiB and cut to two: seconds on
    // an idle machine, tens of seconds on a loaded one. A deadline for a stuck daemon, not a speed.
    wait_until(4 * RESPONSE, "the budget to be spent", || {
        runs() > 16 && d.status()["in_flight"] == 0
    });
    let stalled_at = runs();
    assert!(
        stalled_at < FIRES,
        "every fire ran for a client that read nothing"
    );
    w.served(3, "a client flooding without reading");
    let peak = peak_memory_mib(d.pid());
    drop(never_reads);

    // A client that pipelines more than its budget holds and reads as it goes: every fire is answered,
    // in full or cut, never lost, its budget given back as it reads.
    const READ: usize = FIRES / 2;
    let stream = UnixStream::connect(&d.socket).unwrap();
    let writer = {
        let stream = stream.try_clone().unwrap();
        std::thread::spawn(move || (&stream).write_all(&flood_requests(READ)))
    };
    stream.set_read_timeout(Some(RESPONSE)).unwrap();
    let mut reader = BufReader::new(&stream);
    let mut ids = std::collections::BTreeSet::new();
    for _ in 0..READ {
        let mut line = String::new();
        reader.read_line(&mut line).expect("an answer");
        assert!(
            line.len() <= (2 << 20) + 1,
            "an answer of {} bytes",
            line.len()
        );
        let r: Value = serde_json::from_str(&line).expect("an answer in JSON");
        assert_eq!(r["ok"], true, "{r}");
        assert!(
            r["adds"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .as_str()
                .unwrap()
                .starts_with("hookd cut"),
            "the cut is not said"
        );
        ids.insert(r["id"].as_u64().unwrap());
    }
    assert_eq!(ids.len(), READ, "every fire answered once");
    writer
        .join()
        .unwrap()
        .expect("the daemon read every request");
    let peak = peak.max(peak_memory_mib(d.pid()));
    assert!(peak < 600, "the daemon's memory peaked at {peak} MiB");
    w.finish();
    eprintln!(
        "figures: {FIRES} pipelined fires of {:.1} MiB answers, unread: {stalled_at} ran before the daemon stopped reading; peak memory {peak} MiB",
        (PRINTS * 6) as f64 / f64::from(1 << 20)
    );
}

#[test]
fn a_long_tool_name_against_slow_matchers_holds_up_no_other_client() {
    // A regex matcher against a 0.9 MB tool_name stalled every client for 3.5 s. A
    // regular expression like `\w{100}Z` is slow on a long non-ASCII value (the lazy DFA gives up and a
    // slower engine takes over): four of them take a long while against 0.9 MB.
    let mut settings = String::new();
    for n in 0..4 {
        settings.push_str(&format!(
            "[[hooks.PreToolUse]]\nname = \"slow{n}\"\nmatcher = \"\\\\w{{100}}Z{n}\"\nargv = [\"/bin/echo\", \"slow\"]\n"
        ));
    }
    settings.push_str(
        "[[hooks.PreToolUse]]\nname = \"w\"\nmatcher = \"Bash\"\nargv = [\"/bin/echo\", \"w\"]\n",
    );
    let sb = Sandbox::new();
    sb.settings(&settings);
    let d = Daemon::start(sb);
    let long = "éa ".repeat(225_000);
    let slow = UnixStream::connect(&d.socket).unwrap();
    let mut line = json!({"op": "fire", "id": "long", "moment": "PreToolUse",
                          "event": {"tool_name": long}})
    .to_string();
    line.push('\n');
    (&slow).write_all(line.as_bytes()).unwrap();
    // Another client is answered while the long one is still being matched.
    let mut other = d.connect();
    let r = other.request(&json!({"op": "fire", "id": "quick", "moment": "PreToolUse",
                                  "event": {"tool_name": "Bash"}}));
    assert_eq!(adds(&r), vec!["w"], "{r}");
    slow.set_nonblocking(true).unwrap();
    let mut byte = [0u8; 1];
    assert!(
        matches!((&slow).read(&mut byte), Err(e) if e.kind() == ErrorKind::WouldBlock),
        "the long fire was answered before the quick one: the quick one waited behind its matching"
    );
    slow.set_nonblocking(false).unwrap();
    slow.set_read_timeout(Some(RESPONSE)).unwrap();
    // The long one is decided too: no matcher fits it, so no hook ran.
    let mut answer = String::new();
    BufReader::new(&slow).read_line(&mut answer).unwrap();
    let r: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(r["id"], "long", "{r}");
    assert_eq!(r["hooks"], json!([]), "{r}");
}

#[test]
fn clients_sending_large_lines_slowly_cannot_hold_up_a_large_event_for_long() {
    // A sibling of the hole above: a line over 256 KiB is read under one of eight permits. Clients
    // that start large lines and stall would hold every permit, and an agent's large event (a `Write` of
    // a big file) would wait for good. Now a large line that finds no permit within 2 s is decided from
    // its head (each hook it would reach refuses it: busy is never "go on"), and a stalled one has 10 s to
    // finish its line.
    let d = daemon();
    let stalled: Vec<UnixStream> = (0..8)
        .map(|_| {
            let stream = UnixStream::connect(&d.socket).unwrap();
            let mut partial =
                b"{\"op\":\"fire\",\"id\":0,\"moment\":\"PreToolUse\",\"event\":{\"x\":\"".to_vec();
            partial.resize(partial.len() + (1 << 20), b'a');
            (&stream).write_all(&partial).unwrap();
            stream
        })
        .collect();
    let big = format!(
        "{{\"op\":\"fire\",\"id\":\"big\",\"moment\":\"PreToolUse\",\"event\":{{\"tool_name\":\"Bash\",\"content\":\"{}\"}}}}\n",
        "b".repeat(2 << 20)
    );
    wait_until(RESPONSE, "the stalled lines to hold every permit", || {
        d.log_text().matches("large-line permit").count() >= 8
    });
    let mut c = d.connect();
    c.send_raw(big.as_bytes());
    let r = c.recv();
    assert_eq!(r["id"], "big", "{r}");
    // Busy is never "go on": the hook it would have reached refuses it, whatever its on_failure.
    let w = hook(&r, "w");
    assert_eq!(
        (&r["refused"], &w["outcome"]),
        (&json!(true), &json!("refused")),
        "{r}"
    );
    assert!(w["error"].as_str().unwrap().contains("did not hold"), "{r}");
    // The stalled clients are closed at their deadline; then a large event is decided whole.
    for stream in &stalled {
        stream.set_read_timeout(Some(RESPONSE)).unwrap();
        let mut rest = Vec::new();
        let _ = (&*stream).read_to_end(&mut rest);
    }
    assert!(
        d.log_text().contains("was not whole within"),
        "{}",
        d.log_text()
    );
    c.send_raw(big.as_bytes());
    let r = c.recv();
    assert_eq!(
        adds(&r),
        vec!["w"],
        "the large event was not decided whole: {r}"
    );
}

#[test]
fn half_closed_connections_with_fires_pending_never_take_a_hooks_descriptors() {
    // Found attacking the fixes: a connection that half-closes with fires pending takes a second
    // descriptor (to see the client hang up), which the connection budget did not count: 700 of them
    // took every descriptor of a daemon with a limit of 1,024.
    const LIMIT: u64 = 256;
    raise_open_files(4096);
    let sb = Sandbox::new();
    // A worker that never answers holds the pending fires without a process or descriptor each.
    std::fs::write(
        sb.p("mute.py"),
        "import sys, time\nfor line in sys.stdin:\n    time.sleep(3600)\n",
    )
    .unwrap();
    sb.settings(
        "[defaults]\nmax_processes = 8\n\
         [[hooks.Notification]]\nname = \"mute\"\nworker = [\"python3\", \"@DIR@/mute.py\"]\ntimeout = 3600\n\
         [[hooks.PreToolUse]]\nname = \"ran\"\nargv = [\"/bin/echo\", \"ran\"]\n",
    );
    let d = start_with_file_limit(sb, LIMIT);
    let mut first = d.connect();
    let limit = first.request(&json!({"op": "status"}))["connections"]["limit"]
        .as_u64()
        .unwrap();
    // Every other slot: a fire left pending, the sending side closed.
    let half_closed: Vec<UnixStream> = (1..limit)
        .map(|_| {
            let stream = UnixStream::connect(&d.socket).unwrap();
            (&stream)
                .write_all(b"{\"op\":\"fire\",\"id\":1,\"moment\":\"Notification\",\"event\":{}}\n")
                .unwrap();
            stream.shutdown(Shutdown::Write).unwrap();
            stream
        })
        .collect();
    wait_until(
        RESPONSE,
        "every connection to be taken, its fire pending",
        || {
            let status = first.request(&json!({"op": "status"}));
            status["connections"]["open"] == status["connections"]["limit"]
                && status["in_flight"].as_u64() >= Some(limit - 1)
        },
    );
    let r = first.request(&json!({"op": "fire", "id": "x", "moment": "PreToolUse",
                                  "event": {"tool_name": "Bash"}}));
    assert_eq!(adds(&r), vec!["ran"], "a hook could not run: {r}");
    drop(half_closed);
}

#[test]
fn clients_that_fill_the_daemons_memory_budget_hold_up_no_one_asking_one_thing() {
    // Found attacking the fixes again: 8 connections that never read, each pipelining 90
    // fires, filled the daemon-wide memory budget (each pending fire has room kept for its answer), and
    // every other client's next request waited unread: an agent's `rm -rf /` timed out in the relay.
    // A connection that holds nothing may always send one request; unread answers close their connection
    // after 30 s, freeing what it held.
    let sb = Sandbox::new();
    sb.settings("[[hooks.PostToolUse]]\nname = \"slow\"\ncommand = \"sleep 30\"\n");
    let d = Daemon::start(sb);
    let flooders: Vec<UnixStream> = (0..8)
        .map(|_| {
            let stream = UnixStream::connect(&d.socket).unwrap();
            let lines: Vec<u8> = (0..90)
                .flat_map(|id| {
                    format!(
                        "{{\"op\":\"fire\",\"id\":{id},\"moment\":\"PostToolUse\",\"event\":{{\"tool_name\":\"Bash\"}}}}\n"
                    )
                    .into_bytes()
                })
                .collect();
            (&stream).write_all(&lines).unwrap();
            stream
        })
        .collect();
    // The flood is taken until the daemon-wide budget is spent.
    wait_until(RESPONSE, "the flood to spend the daemon's budget", || {
        d.status()["in_flight"].as_u64() >= Some(400)
    });
    // A client asking one thing at a time is answered all the same (a fire with no hook, so that it does
    // not wait for a process behind the flood's hooks: what is tested is that its request is read).
    for _ in 0..3 {
        let r = d.fire("Stop", json!({"session_id": "s"}));
        assert_eq!(r["ok"], true, "{r}");
        assert_eq!(d.status()["ok"], true);
    }
    drop(flooders);
}

#[test]
fn a_client_that_does_not_read_keeps_no_large_line_permit() {
    // Found attacking the fixes again: a connection whose answer waits unread, with a
    // large line begun behind its request, kept its large-line permit for good (the 10 s deadline runs
    // only while the connection reads): eight such took every permit. A permit now goes back with its
    // line, and is taken again only to read on.
    let sb = Sandbox::new();
    sb.script("big.sh", "head -c 1500000 /dev/zero | tr '\\0' a");
    sb.settings(
        "[[hooks.PostToolUse]]\nname = \"big\"\ncommand = \"@DIR@/big.sh\"\n\
         [[hooks.PreToolUse]]\nname = \"w\"\nargv = [\"/bin/echo\", \"w\"]\n",
    );
    let d = Daemon::start(sb);
    let holders: Vec<UnixStream> = (0..8)
        .map(|_| {
            let stream = UnixStream::connect(&d.socket).unwrap();
            let mut bytes =
                b"{\"op\":\"fire\",\"id\":1,\"moment\":\"PostToolUse\",\"event\":{\"tool_name\":\"Bash\"}}\n"
                    .to_vec();
            bytes.extend_from_slice(b"{\"op\":\"fire\",\"id\":2,\"moment\":\"PreToolUse\",\"event\":{\"x\":\"");
            bytes.resize(bytes.len() + (300 << 10), b'a');
            (&stream).write_all(&bytes).unwrap();
            stream
        })
        .collect();
    // Their answers wait unread (1.5 MB each, more than a socket holds).
    wait_until(RESPONSE, "the holders' hooks to have run", || {
        d.log_text().matches("hook=big").count() >= 8 || d.status()["in_flight"] == 0
    });
    let big = format!(
        "{{\"op\":\"fire\",\"id\":\"big\",\"moment\":\"PreToolUse\",\"event\":{{\"tool_name\":\"Bash\",\"content\":\"{}\"}}}}\n",
        "b".repeat(2 << 20)
    );
    let mut c = d.connect();
    c.send_raw(big.as_bytes());
    let r = c.recv();
    assert_eq!(
        adds(&r),
        vec!["w"],
        "the large event was not read whole: {r}"
    );
    drop(holders);
}

#[test]
fn a_client_that_pipelines_past_its_budget_and_hangs_up_has_its_hooks_stopped() {
    // Found attacking the fixes again: past its memory budget a connection stops reading,
    // so it never saw its client hang up, and 128 hook processes ran on with nobody to answer.
    let sb = Sandbox::new();
    sb.script("slow.sh", "echo $$ >> @DIR@/pids\nexec sleep 30");
    sb.settings(
        "[[hooks.PostToolUse]]\nname = \"slow\"\ncommand = \"@DIR@/slow.sh\"\ntimeout = 60\n",
    );
    let d = Daemon::start(sb);
    let stream = UnixStream::connect(&d.socket).unwrap();
    let lines: Vec<u8> = (0..120)
        .flat_map(|id| {
            format!("{{\"op\":\"fire\",\"id\":{id},\"moment\":\"PostToolUse\",\"event\":{{}}}}\n")
                .into_bytes()
        })
        .collect();
    (&stream).write_all(&lines).unwrap();
    let pids = || -> Vec<i32> {
        std::fs::read_to_string(d.sb.p("pids"))
            .unwrap_or_default()
            .lines()
            .filter_map(|pid| pid.parse().ok())
            .collect()
    };
    // The connection's budget is spent (fewer than 120 taken), its hooks running.
    wait_until(RESPONSE, "the hooks to start", || pids().len() >= 32);
    drop(stream);
    // Well before the hooks' own `sleep 30` would end them.
    wait_until(
        std::time::Duration::from_secs(10),
        "every hook of the client that left to be stopped",
        || pids().iter().all(|&pid| process_gone(pid, d.pid())),
    );
    wait_until(RESPONSE, "no fire in flight", || {
        d.status()["in_flight"] == 0
    });
}
