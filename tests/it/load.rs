//! The daemon under load (contract sections 9, 10 and 13): bad edits of the settings file while many
//! clients fire, tens of thousands of pipelined requests each answered exactly once, and SIGTERM in the
//! middle of such a run.
//!
//! Each test prints its figures (run with `--nocapture`) for the reliability report. None asserts a speed:
//! every wait is a poll with a generous deadline, there only so that a hang fails instead of hanging.
//! The loads are sized for a machine of two cores.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, BufWriter, ErrorKind, Write};
use std::net::Shutdown;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crate::common::*;
use nix::sys::signal::Signal;
use serde_json::{Value, json};

/// One load test at a time: each is sized for the machine's two cores on its own, and two at once would
/// only make both slower.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The daemon at log level `info`: at `debug` it writes a line per fire, most of its work under load.
fn start_quiet(sb: Sandbox) -> Daemon {
    Daemon::start_with(sb, |cmd| {
        cmd.env("HOOKD_LOG", "info");
    })
}

/// The daemon did not panic, whatever it went through.
fn no_panic_in_log(d: &Daemon) {
    let log = d.log_text();
    assert!(!log.contains("panicked"), "the daemon panicked:\n{log}");
}

// ---------------------------------------------------------------------------------------------------------
// 1. Bad edits under load
// ---------------------------------------------------------------------------------------------------------

/// The two good settings: one hook, which adds the letter of its variant.
const GOOD: [(&str, &str); 2] = [
    (
        "A",
        "[[hooks.PreToolUse]]\nname = \"a\"\nargv = [\"/bin/echo\", \"A\"]\n",
    ),
    (
        "B",
        "[[hooks.PreToolUse]]\nname = \"b\"\nargv = [\"/bin/echo\", \"B\"]\n",
    ),
];

/// Settings the daemon must refuse, each for another reason; each would drop or change the hook if taken.
const BAD: [&str; 5] = [
    // An unknown key.
    "[[hooks.PreToolUse]]\nname = \"a\"\nargv = [\"/bin/echo\", \"A\"]\ntiemout = 1\n",
    // Not TOML.
    "[[hooks.PreToolUse]\nname = \"b\"\n",
    // Empty, as an editor leaves it half-way through a save.
    "",
    // An unknown moment (and the known one gone).
    "[[hooks.PreTooluse]]\nargv = [\"/bin/echo\", \"C\"]\n",
    // An empty argv.
    "[[hooks.PreToolUse]]\nname = \"c\"\nargv = []\n",
];

/// How an edit reaches the file.
#[derive(Debug, Clone, Copy)]
enum How {
    /// A new file renamed over the old one (vim, VS Code, git).
    RenameOver,
    /// The file truncated and written in place (`>` in a shell, many editors).
    TruncateWrite,
}

#[derive(Debug, Clone, Copy)]
enum Edit {
    Good(usize, How),
    Bad(usize, How),
    Delete,
}

/// A small deterministic generator (xorshift), so that a failing sequence of edits can be replayed.
struct Rng(u64);

impl Rng {
    fn bit(&mut self) -> bool {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 & 1 == 1
    }
}

/// The edits, in cycles of four: good, bad, good, deleted. So the file is always good again before it is
/// made bad or deleted, and a good edit is sometimes the variant already in force (a restore).
fn edits(count: usize) -> Vec<Edit> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let how = |rng: &mut Rng| {
        if rng.bit() {
            How::RenameOver
        } else {
            How::TruncateWrite
        }
    };
    (0..count)
        .map(|k| match k % 4 {
            0 | 2 => Edit::Good(usize::from(rng.bit()), how(&mut rng)),
            1 => Edit::Bad(k / 4 % BAD.len(), how(&mut rng)),
            _ => Edit::Delete,
        })
        .collect()
}

/// Writes the settings file as `how` says, mode 0644. The new file of a rename is made outside the watched
/// folder.
fn write_settings(sb: &Sandbox, text: &str, how: How) {
    match how {
        How::RenameOver => {
            let tmp = sb.p("hooks.toml.new");
            fs::write(&tmp, text).expect("writing the new settings");
            fs::set_permissions(&tmp, fs::Permissions::from_mode(0o644)).expect("chmod 0644");
            fs::rename(&tmp, sb.config()).expect("renaming the settings into place");
        }
        How::TruncateWrite => {
            let mut file = fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o644)
                .open(sb.config())
                .expect("opening the settings");
            file.write_all(text.as_bytes())
                .expect("writing the settings");
        }
    }
}

/// A client that fires one request at a time until `done`, checking that each answer comes from one whole
/// generation: variant A's hook and its add, or variant B's, never a mix, never nothing. Returns the
/// answers it had from A and from B.
fn fire_until(socket: &Path, client: usize, done: &AtomicBool) -> [u64; 2] {
    let mut c = Client::connect(socket);
    let mut from = [0; 2];
    let mut n = 0u64;
    while !done.load(Ordering::SeqCst) {
        n += 1;
        let id = json!([client, n]);
        let r = c.request(&json!({"op": "fire", "id": id, "moment": "PreToolUse",
                                  "agent": "claude-code", "event": bash_event()}));
        assert_eq!(r.get("id"), Some(&id), "an answer for another request: {r}");
        check_fire_shape(&r);
        assert_eq!(r["refused"], false, "{r}");
        let whole = match (hook_names(&r).as_slice(), adds(&r).as_slice()) {
            ([hook], [add]) if hook == "a" && add == "A" => 0,
            ([hook], [add]) if hook == "b" && add == "B" => 1,
            _ => panic!("an answer not from one whole generation of A or B: {r}"),
        };
        from[whole] += 1;
    }
    from
}

#[test]
fn bad_edits_under_load_keep_every_fire_on_one_whole_generation() {
    const FIRING: usize = 32;
    const EDITS: usize = 200;
    /// How long one edit may take to be seen (a deadline against a hang, not a speed).
    const SEEN: Duration = Duration::from_secs(20);
    let _serial = one_at_a_time();
    let sb = Sandbox::new();
    write_settings(&sb, GOOD[0].1, How::RenameOver);
    let d = start_quiet(sb);
    let started = Instant::now();

    let done = Arc::new(AtomicBool::new(false));
    let firing: Vec<_> = (0..FIRING)
        .map(|client| {
            let (socket, done) = (d.socket.clone(), done.clone());
            thread::spawn(move || fire_until(&socket, client, &done))
        })
        .collect();

    // Each edit is made, then seen by the daemon before the next: a good one is taken (status says the last
    // reload went well and a fire has its hook), a bad one or a deletion is refused (status says it failed).
    let mut good = 0; // the variant in force
    let mut changes = 0; // edits that put the other variant in force
    let mut made: BTreeMap<&str, u32> = BTreeMap::new();
    for (k, edit) in edits(EDITS).into_iter().enumerate() {
        match edit {
            Edit::Good(variant, how) => {
                write_settings(&d.sb, GOOD[variant].1, how);
                *made
                    .entry(if variant == good {
                        "good, unchanged"
                    } else {
                        "good, changed"
                    })
                    .or_default() += 1;
                if variant != good {
                    changes += 1;
                }
                good = variant;
                let want = GOOD[variant].0;
                wait_until(SEEN, &format!("edit {k} ({edit:?}) to be taken"), || {
                    d.status()["last_reload"]["ok"] == true
                        && adds(&d.fire("PreToolUse", bash_event())) == [want]
                });
            }
            Edit::Bad(which, how) => {
                write_settings(&d.sb, BAD[which], how);
                *made.entry("bad").or_default() += 1;
                wait_until(SEEN, &format!("edit {k} ({edit:?}) to be refused"), || {
                    d.status()["last_reload"]["ok"] == false
                });
            }
            Edit::Delete => {
                fs::remove_file(&d.config).expect("deleting the settings");
                *made.entry("deleted").or_default() += 1;
                wait_until(SEEN, &format!("edit {k} (deleted) to be refused"), || {
                    d.status()["last_reload"]["ok"] == false
                });
            }
        }
        if let Edit::Good(_, how) | Edit::Bad(_, how) = edit {
            *made
                .entry(match how {
                    How::RenameOver => "by rename",
                    How::TruncateWrite => "by truncate-write",
                })
                .or_default() += 1;
        }
    }
    let edits_done = started.elapsed();

    done.store(true, Ordering::SeqCst);
    let mut from = [0; 2];
    for handle in firing {
        match handle.join() {
            Ok([a, b]) => {
                from[0] += a;
                from[1] += b;
            }
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    // The last edit deleted the file: the last good settings are in force, and status says why the file
    // was not taken.
    let s = d.status();
    assert_eq!(s["last_reload"]["ok"], false, "{s}");
    assert!(
        s["last_reload"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("exist")),
        "status does not say the file is gone: {s}"
    );
    let last = d.fire("PreToolUse", bash_event());
    assert_eq!(
        adds(&last),
        [GOOD[good].0],
        "not the last good settings: {last}"
    );
    let generation = s["generation"].as_u64().unwrap_or_else(|| panic!("{s}"));
    assert!(
        generation > changes,
        "generation {generation} after {changes} changes of the hooks in force: {s}"
    );
    assert!(
        from[0] > 0 && from[1] > 0,
        "the firing clients never saw both variants: {from:?}"
    );
    no_panic_in_log(&d);
    eprintln!(
        "figures: bad edits under load: {EDITS} edits ({made:?}) in {edits_done:?}, each seen by the daemon \
         before the next; {FIRING} clients fired {} times meanwhile ({} answers from A, {} from B), every one \
         ok and from one whole generation; generation {generation} at the end",
        from[0] + from[1],
        from[0],
        from[1]
    );
}

// ---------------------------------------------------------------------------------------------------------
// 2 and 3. Many pipelined requests, and SIGTERM in the middle of them
// ---------------------------------------------------------------------------------------------------------

/// Clients, each on its own connection (or connections), and the requests each sends.
const CLIENTS: u64 = 64;
const PER_CLIENT: u64 = 1000;

/// One request in this many fires the moment with the `/bin/true` hook; the rest fire a moment with no
/// hook. All 64,000 with the hook took 53 s on the two cores of the test machine (a debug daemon, the
/// test's 128 threads beside it; every one answered exactly once), most of the time budget of these
/// tests; this way every one of the 64,000 requests still goes through the whole path of a fire (decode,
/// match, fold, answer), and 8,000 of them start a hook.
const HOOK_EVERY: u64 = 8;

/// The hook on PreToolUse, and a slower one on PostToolUse (for the SIGTERM run, where fires must be
/// running when the signal comes). Notification has none.
const LOAD_SETTINGS: &str = "\
[[hooks.PreToolUse]]
name = \"t\"
argv = [\"/bin/true\"]

[[hooks.PostToolUse]]
name = \"nap\"
argv = [\"/bin/sleep\", \"0.2\"]
";

/// What a request fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// PreToolUse, one `/bin/true` hook.
    Hook,
    /// Notification, no hook.
    NoHook,
    /// PostToolUse, a hook that sleeps a little.
    Nap,
}

/// Which requests of a client fire which moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mix {
    /// One in [`HOOK_EVERY`] runs the `/bin/true` hook, the rest no hook.
    Load,
    /// As `Load`, and one in 64 the hook that sleeps: fires still running when SIGTERM comes.
    Signal,
    /// No hook at all: answered at once, so the client is always about to send its next request.
    Quick,
}

fn kind_of(mix: Mix, i: u64) -> Kind {
    match mix {
        Mix::Signal if i % 64 == 1 => Kind::Nap,
        Mix::Load | Mix::Signal if i.is_multiple_of(HOOK_EVERY) => Kind::Hook,
        _ => Kind::NoHook,
    }
}

/// Ids are unique across clients: the client's number, then the request's.
fn id_of(client: u64, i: u64) -> u64 {
    client * 1_000_000 + i
}

fn request_line(client: u64, i: u64, mix: Mix) -> String {
    let moment = match kind_of(mix, i) {
        Kind::Hook => "PreToolUse",
        Kind::NoHook => "Notification",
        Kind::Nap => "PostToolUse",
    };
    let request = json!({"op": "fire", "id": id_of(client, i), "moment": moment, "agent": "claude-code",
                         "event": {"session_id": format!("load-{client}"), "tool_name": "Bash",
                                   "notification_type": "idle", "n": i}});
    format!("{request}\n")
}

/// Checks a verdict for request `i`: not refused, nothing added, and exactly the hook its moment has.
fn check_verdict(r: &Value, i: u64, mix: Mix) {
    check_fire_shape(r);
    assert_eq!(r["refused"], false, "{r}");
    assert_eq!(r["adds"], json!([]), "{r}");
    let hooks = r["hooks"].as_array().unwrap();
    let expected = match kind_of(mix, i) {
        Kind::Hook => Some("t"),
        Kind::Nap => Some("nap"),
        Kind::NoHook => None,
    };
    match expected {
        None => assert!(hooks.is_empty(), "a hook ran for a moment without one: {r}"),
        Some(name) => {
            assert_eq!(hooks.len(), 1, "{r}");
            assert_eq!(
                (&hooks[0]["name"], &hooks[0]["outcome"], &hooks[0]["exit"]),
                (&json!(name), &json!("nothing"), &json!(0)),
                "{r}"
            );
        }
    }
}

/// The request number an answer is for, from its id; panics on an id this client never sent.
fn index_of(r: &Value, client: u64) -> u64 {
    r["id"]
        .as_u64()
        .and_then(|id| id.checked_sub(id_of(client, 0)))
        .filter(|i| *i < PER_CLIENT)
        .unwrap_or_else(|| panic!("client {client} got an answer with an id it never sent: {r}"))
}

/// Reads answer lines until the daemon closes the connection; `each` gets every one, parsed.
fn read_answers(stream: UnixStream, mut each: impl FnMut(Value)) {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => return,
            Ok(_) => {
                assert!(line.ends_with('\n'), "an answer cut short: {line:?}");
                each(
                    serde_json::from_str(&line)
                        .unwrap_or_else(|e| panic!("an answer that is not JSON ({e}): {line:?}")),
                );
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return,
            Err(e) => panic!("reading answers: {e} (after {RESPONSE:?} at most)"),
        }
    }
}

/// Counts of what happened to each request: how many answers it had.
fn count_problems(answers: &[u32]) -> (usize, usize) {
    let lost = answers.iter().filter(|&&n| n == 0).count();
    let twice = answers.iter().filter(|&&n| n > 1).count();
    (lost, twice)
}

#[test]
fn many_clients_pipelining_lose_no_request_and_get_none_twice() {
    let _serial = one_at_a_time();
    let sb = Sandbox::new();
    sb.settings(LOAD_SETTINGS);
    let d = start_quiet(sb);
    let started = Instant::now();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|client| {
            let stream = UnixStream::connect(&d.socket).expect("connecting");
            stream.set_read_timeout(Some(RESPONSE)).unwrap();
            stream.set_write_timeout(Some(RESPONSE)).unwrap();
            let writer = stream.try_clone().unwrap();
            // All of a client's requests, pipelined: the daemon takes 256 at a time from one connection
            // and the rest wait in the socket, so this also runs through its back-pressure.
            let writing = thread::spawn(move || {
                let mut out = BufWriter::new(&writer);
                for i in 0..PER_CLIENT {
                    out.write_all(request_line(client, i, Mix::Load).as_bytes())
                        .expect("sending a request");
                }
                out.flush().expect("sending requests");
                drop(out);
                // Done sending; the daemon closes once every answer is out.
                writer.shutdown(Shutdown::Write).expect("half-closing");
            });
            let reading = thread::spawn(move || {
                let mut answers = vec![0u32; PER_CLIENT as usize];
                read_answers(stream, |r| {
                    let i = index_of(&r, client);
                    check_verdict(&r, i, Mix::Load);
                    answers[i as usize] += 1;
                });
                answers
            });
            (client, writing, reading)
        })
        .collect();
    let (mut answered, mut hooks) = (0u64, 0u64);
    for (client, writing, reading) in clients {
        if let Err(panic) = writing.join() {
            std::panic::resume_unwind(panic);
        }
        let answers = reading
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let (lost, twice) = count_problems(&answers);
        assert_eq!(
            (lost, twice),
            (0, 0),
            "client {client}: (requests never answered, answered more than once) of {PER_CLIENT}"
        );
        answered += answers.iter().map(|&n| u64::from(n)).sum::<u64>();
        hooks += (0..PER_CLIENT)
            .filter(|&i| kind_of(Mix::Load, i) == Kind::Hook)
            .count() as u64;
    }
    let took = started.elapsed();
    assert_eq!(d.status()["in_flight"], 0);
    no_panic_in_log(&d);
    eprintln!(
        "figures: pipelined load: {CLIENTS} clients x {PER_CLIENT} requests = {} sent, {answered} answered, \
         each exactly once, every verdict correct; {hooks} of them ran the /bin/true hook; in {took:?}",
        CLIENTS * PER_CLIENT
    );
}

/// What became of one request, in the SIGTERM runs.
const NOT_WRITTEN: u8 = 0;
/// Written whole before the signal was sent: it must be answered.
const WRITTEN_BEFORE: u8 = 1;
/// Written, but maybe after the signal: it may go unanswered (the daemon closed the connection).
const WRITTEN_AFTER: u8 = 2;
/// The write failed (after the signal): part of it may have reached the daemon.
const WRITE_FAILED: u8 = 3;

/// One client's record of its requests.
struct Ledger {
    client: u64,
    mix: Mix,
    written: Vec<AtomicU8>,
    answers: Vec<AtomicU32>,
    shutting_down: AtomicU64,
}

impl Ledger {
    fn new(client: u64, mix: Mix) -> Ledger {
        Ledger {
            client,
            mix,
            written: (0..PER_CLIENT)
                .map(|_| AtomicU8::new(NOT_WRITTEN))
                .collect(),
            answers: (0..PER_CLIENT).map(|_| AtomicU32::new(0)).collect(),
            shutting_down: AtomicU64::new(0),
        }
    }

    /// Records an answer: a correct verdict, or `shutting_down`; nothing else is allowed.
    fn answer(&self, r: &Value, verdicts: &AtomicU64) {
        let i = index_of(r, self.client);
        if r["ok"] == false {
            assert_eq!(
                r["error"]["kind"], "shutting_down",
                "client {}: {r}",
                self.client
            );
            self.shutting_down.fetch_add(1, Ordering::SeqCst);
        } else {
            check_verdict(r, i, self.mix);
            verdicts.fetch_add(1, Ordering::SeqCst);
        }
        self.answers[i as usize].fetch_add(1, Ordering::SeqCst);
    }

    /// Records a write that returned: before the signal if the flag was still down after it (the flag
    /// goes up before the signal is sent).
    fn written(&self, i: u64, signalled: &AtomicBool) {
        let when = if signalled.load(Ordering::SeqCst) {
            WRITTEN_AFTER
        } else {
            WRITTEN_BEFORE
        };
        self.written[i as usize].store(when, Ordering::SeqCst);
    }

    /// Records a write that failed, which may only happen after the signal.
    fn write_failed(&self, i: u64, signalled: &AtomicBool, e: &std::io::Error) {
        assert!(
            signalled.load(Ordering::SeqCst),
            "client {}: a write failed before the signal: {e}",
            self.client
        );
        assert!(
            !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
            "client {}: the daemon neither read nor closed for {RESPONSE:?}: {e}",
            self.client
        );
        self.written[i as usize].store(WRITE_FAILED, Ordering::SeqCst);
    }
}

/// What the ledgers of a SIGTERM run add up to.
#[derive(Debug, Default)]
struct Tally {
    written_before: u64,
    written_after: u64,
    writes_failed: u64,
    answered: u64,
    shutting_down: u64,
    /// Each request mishandled, and how.
    problems: Vec<String>,
}

fn tally(ledgers: &[Arc<Ledger>]) -> Tally {
    let mut t = Tally::default();
    for ledger in ledgers {
        t.shutting_down += ledger.shutting_down.load(Ordering::SeqCst);
        for i in 0..PER_CLIENT {
            let written = ledger.written[i as usize].load(Ordering::SeqCst);
            let answers = ledger.answers[i as usize].load(Ordering::SeqCst);
            t.answered += u64::from(answers);
            match written {
                WRITTEN_BEFORE => t.written_before += 1,
                WRITTEN_AFTER => t.written_after += 1,
                WRITE_FAILED => t.writes_failed += 1,
                _ => {}
            }
            let problem = match (written, answers) {
                (_, n) if n > 1 => "answered more than once",
                (WRITTEN_BEFORE, 0) => "written whole before SIGTERM was sent, never answered",
                (NOT_WRITTEN, 1) => "answered, never sent",
                _ => continue,
            };
            t.problems.push(format!(
                "client {} request {i} (id {}): {problem}",
                ledger.client,
                id_of(ledger.client, i)
            ));
        }
    }
    t
}

/// A pipelining client for the SIGTERM run: a writer sends every request, one write each, and stops at
/// the first refused write (after the signal only); a reader takes the answers until the daemon closes.
fn pipelining_client(
    socket: &Path,
    ledger: Arc<Ledger>,
    signalled: Arc<AtomicBool>,
    verdicts: Arc<AtomicU64>,
) -> Vec<thread::JoinHandle<()>> {
    let stream = UnixStream::connect(socket).expect("connecting before the signal");
    stream.set_read_timeout(Some(RESPONSE)).unwrap();
    stream.set_write_timeout(Some(RESPONSE)).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let writing = {
        let ledger = ledger.clone();
        thread::spawn(move || {
            for i in 0..PER_CLIENT {
                let line = request_line(ledger.client, i, ledger.mix);
                if let Err(e) = writer.write_all(line.as_bytes()) {
                    ledger.write_failed(i, &signalled, &e);
                    return;
                }
                ledger.written(i, &signalled);
            }
            let _ = writer.shutdown(Shutdown::Write);
        })
    };
    let reading = thread::spawn(move || read_answers(stream, |r| ledger.answer(&r, &verdicts)));
    vec![writing, reading]
}

/// A client for the SIGTERM run that sends one request at a time and opens a new connection every few:
/// it is always about to send, and meets the closed connections and the refused connects after the
/// signal. Returns how many of its connects were refused (after the signal only).
fn reconnecting_client(
    socket: &Path,
    ledger: Arc<Ledger>,
    signalled: Arc<AtomicBool>,
    verdicts: Arc<AtomicU64>,
    refused: Arc<AtomicU64>,
) -> Vec<thread::JoinHandle<()>> {
    const PER_CONNECTION: u64 = 25;
    let socket = socket.to_path_buf();
    vec![thread::spawn(move || {
        let client = ledger.client;
        let mut connection: Option<(UnixStream, BufReader<UnixStream>)> = None;
        for i in 0..PER_CLIENT {
            if i.is_multiple_of(PER_CONNECTION) {
                drop(connection.take()); // the last one closed first
                match UnixStream::connect(&socket) {
                    Ok(stream) => {
                        stream.set_read_timeout(Some(RESPONSE)).unwrap();
                        stream.set_write_timeout(Some(RESPONSE)).unwrap();
                        let reader = BufReader::new(stream.try_clone().unwrap());
                        connection = Some((stream, reader));
                    }
                    Err(e) => {
                        assert!(
                            signalled.load(Ordering::SeqCst),
                            "client {client}: a connect refused before the signal: {e}"
                        );
                        refused.fetch_add(1, Ordering::SeqCst);
                        return;
                    }
                }
            }
            let Some((stream, reader)) = connection.as_mut() else {
                return;
            };
            if let Err(e) = stream.write_all(request_line(client, i, ledger.mix).as_bytes()) {
                ledger.write_failed(i, &signalled, &e);
                return;
            }
            ledger.written(i, &signalled);
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(_) if line.ends_with('\n') => {
                    let r: Value = serde_json::from_str(&line)
                        .unwrap_or_else(|e| panic!("an answer that is not JSON ({e}): {line:?}"));
                    ledger.answer(&r, &verdicts);
                }
                // Closed or reset without an answer: the daemon is stopping. Whether this request had to
                // be answered, the ledger says at the end.
                Ok(_) => {
                    let closed_after_signal = signalled.load(Ordering::SeqCst);
                    assert!(
                        closed_after_signal,
                        "client {client}: closed before the signal"
                    );
                    return;
                }
                Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                    let reset_after_signal = signalled.load(Ordering::SeqCst);
                    assert!(
                        reset_after_signal,
                        "client {client}: reset before the signal"
                    );
                    return;
                }
                Err(e) => panic!("client {client}: reading an answer: {e}"),
            }
        }
    })]
}

#[test]
fn sigterm_in_the_middle_of_a_run_answers_every_request_sent_before_it() {
    /// Of the clients, this many send one request at a time, with no hook, on a new connection every 25;
    /// the rest pipeline all their requests on one connection.
    const RECONNECTING: u64 = 16;
    let _serial = one_at_a_time();
    let sb = Sandbox::new();
    sb.settings(LOAD_SETTINGS);
    let mut d = start_quiet(sb);
    let started = Instant::now();
    let signalled = Arc::new(AtomicBool::new(false));
    let verdicts = Arc::new(AtomicU64::new(0));
    let refused = Arc::new(AtomicU64::new(0));
    let ledgers: Vec<Arc<Ledger>> = (0..CLIENTS)
        .map(|client| {
            let mix = if client < RECONNECTING {
                Mix::Quick
            } else {
                Mix::Signal
            };
            Arc::new(Ledger::new(client, mix))
        })
        .collect();
    let threads: Vec<_> = ledgers
        .iter()
        .flat_map(|ledger| {
            let (ledger, signalled, verdicts) =
                (ledger.clone(), signalled.clone(), verdicts.clone());
            if ledger.mix == Mix::Quick {
                reconnecting_client(&d.socket, ledger, signalled, verdicts, refused.clone())
            } else {
                pipelining_client(&d.socket, ledger, signalled, verdicts)
            }
        })
        .collect();

    // In the middle: a quarter of the run answered, fires arriving and hooks running.
    let quarter = CLIENTS * PER_CLIENT / 4;
    wait_until(RESPONSE * 4, "a quarter of the run to be answered", || {
        verdicts.load(Ordering::SeqCst) >= quarter
    });
    let in_flight = d.status()["in_flight"].clone();
    signalled.store(true, Ordering::SeqCst);
    let verdicts_at_signal = verdicts.load(Ordering::SeqCst);
    // How far each one-at-a-time client had got: a figure, and a sign of any client starved.
    let one_at_a_time_progress: Vec<u32> = ledgers[..RECONNECTING as usize]
        .iter()
        .map(|l| l.answers.iter().map(|a| a.load(Ordering::SeqCst)).sum())
        .collect();
    d.signal(Signal::SIGTERM);
    let signal_at = Instant::now();
    // Latecomers: new clients keep coming until a connect is refused; each that gets in is answered
    // (`shutting_down`, or a status if it beat the signal) or closed.
    let mut latecomers = (0u64, 0u64);
    wait_until(RESPONSE, "a connect to be refused after SIGTERM", || {
        let Ok(stream) = UnixStream::connect(&d.socket) else {
            return true;
        };
        stream.set_read_timeout(Some(RESPONSE)).unwrap();
        latecomers.0 += 1;
        let mut c = Client::from_stream(stream);
        if c.try_send(&json!({"op": "status", "id": "late"})).is_ok()
            && let Some(line) = c.read_line()
        {
            let r: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
            assert!(
                r["ok"] == true || r["error"]["kind"] == "shutting_down",
                "a latecomer's answer: {r}"
            );
            latecomers.1 += 1;
        }
        false
    });
    for handle in threads {
        if let Err(panic) = handle.join() {
            std::panic::resume_unwind(panic);
        }
    }
    let status = d.wait_exit(Duration::from_secs(30));
    let stopped_in = signal_at.elapsed();
    assert_eq!(
        status.code(),
        Some(0),
        "the daemon's exit after SIGTERM: {status}"
    );
    assert!(
        !d.socket.exists(),
        "the socket file is still there after the daemon stopped"
    );
    no_panic_in_log(&d);

    let t = tally(&ledgers);
    let deadline_passed = d.log_text().contains("killing their hooks");
    let summary = format!(
        "SIGTERM run: {CLIENTS} clients ({RECONNECTING} one request at a time, reconnecting every 25), \
         SIGTERM after {verdicts_at_signal} verdicts with {in_flight} fires in flight; requests written \
         whole before the signal {}, after it {}, writes refused after it {}; connects refused after it {} \
         (plus {} latecomers let in, {} of them answered); answers {} ({} verdicts, {} shutting_down); \
         daemon exited 0 {stopped_in:?} after the signal (drain deadline reached: {deadline_passed}; run \
         {:?} in all), socket file removed",
        t.written_before,
        t.written_after,
        t.writes_failed,
        refused.load(Ordering::SeqCst) + 1,
        latecomers.0,
        latecomers.1,
        t.answered,
        t.answered - t.shutting_down,
        t.shutting_down,
        started.elapsed()
    );
    eprintln!(
        "figures: {summary}; answers each one-at-a-time client had before the signal: {one_at_a_time_progress:?}"
    );
    assert!(
        t.problems.is_empty(),
        "{} requests mishandled; the first: {:#?}\n{summary}",
        t.problems.len(),
        &t.problems[..t.problems.len().min(20)]
    );
}

/// A request written whole just before SIGTERM, on a connection with nothing else pending, is answered
/// (`shutting_down` or a verdict), not dropped with the connection. Many daemons, many connections each:
/// the window is the moment between the request's arrival and the daemon's reading it.
#[test]
fn a_request_written_just_before_sigterm_is_answered_not_dropped() {
    const DAEMONS: u64 = 10;
    const CONNECTIONS: u64 = 16;
    let _serial = one_at_a_time();
    let mut dropped = Vec::new();
    let mut answered = 0;
    for round in 0..DAEMONS {
        let sb = Sandbox::new();
        sb.settings(LOAD_SETTINGS);
        let mut d = start_quiet(sb);
        let streams: Vec<UnixStream> = (0..CONNECTIONS)
            .map(|_| UnixStream::connect(&d.socket).expect("connecting"))
            .collect();
        // Connections are accepted in the order they came: once a later one is served, all are in.
        assert_eq!(d.status()["ok"], true);
        for (i, stream) in streams.iter().enumerate() {
            stream.set_read_timeout(Some(RESPONSE)).unwrap();
            (&*stream)
                .write_all(request_line(round, i as u64, Mix::Quick).as_bytes())
                .expect("sending a request");
        }
        d.signal(Signal::SIGTERM);
        for (i, stream) in streams.into_iter().enumerate() {
            let mut answers = Vec::new();
            let mut end = String::from("closed");
            let mut reader = BufReader::new(stream);
            loop {
                let mut line = String::new();
                match reader.read_line(&mut line) {
                    Ok(_) if line.ends_with('\n') => answers.push(line),
                    Ok(_) => break,
                    Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                        end = "reset".into();
                        break;
                    }
                    Err(e) => panic!("reading an answer: {e}"),
                }
            }
            match answers.as_slice() {
                [line] => {
                    let r: Value = serde_json::from_str(line).unwrap();
                    assert_eq!(r["id"], id_of(round, i as u64), "{r}");
                    if r["ok"] == true {
                        check_verdict(&r, i as u64, Mix::Quick);
                    } else {
                        assert_eq!(r["error"]["kind"], "shutting_down", "{r}");
                    }
                    answered += 1;
                }
                [] => dropped.push(format!(
                    "daemon {round}, connection {i}: {end} without an answer"
                )),
                more => panic!("one request, {} answers: {more:?}", more.len()),
            }
        }
        let status = d.wait_exit(Duration::from_secs(30));
        assert_eq!(
            status.code(),
            Some(0),
            "the daemon's exit after SIGTERM: {status}"
        );
        assert!(!d.socket.exists(), "the socket file is still there");
    }
    eprintln!(
        "figures: requests written just before SIGTERM: {} sent on {} daemons, {answered} answered, {} dropped",
        DAEMONS * CONNECTIONS,
        DAEMONS,
        dropped.len()
    );
    assert!(
        dropped.is_empty(),
        "{} of {} requests written whole before SIGTERM was sent were dropped with their connection:\n{}",
        dropped.len(),
        DAEMONS * CONNECTIONS,
        dropped.join("\n")
    );
}
