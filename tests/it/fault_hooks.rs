//! Bad hooks (contract sections 6 and 7), each alone and several in one fire: a hook that hangs, ignores
//! SIGTERM, forks children that trap it, puts a child in a session of its own, floods its output, never
//! reads its stdin, closes its stdout, dies by a signal, or starts a hundred children.
//!
//! After each fire: the verdict comes in bounded time with the outcome that hook earned, the daemon answers
//! the next fire, and nothing of the hook is left: no process it started still runs, no zombie child of
//! the daemon remains, and the daemon holds as many file descriptors as before the fire.
//!
//! Each bad hook writes down the pids it creates; on top of that, every process a bad hook starts carries
//! `FAULT_TAG=<this test's sandbox name>` in its environment (the hook's `env`), so that the tests find
//! all of them in /proc (`yes`, `head`, subshells), not only the pids written down.

use std::collections::BTreeMap;
use std::fs;
use std::time::{Duration, Instant};

use crate::common::*;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

/// How long the daemon may take, after the verdict, to be rid of a bad hook's processes, zombies and
/// descriptors (it sends SIGKILL one second after SIGTERM). A safety net, not a speed assertion.
const CLEANUP: Duration = Duration::from_secs(10);

/// On top of the longest hook timeout: the bound on the verdict. Generous: this says "bounded", not
/// "fast".
const VERDICT_SLACK: Duration = Duration::from_secs(5);

/// The size of the event that hooks which never read stdin are given: well past a pipe's 64 KiB buffer,
/// so that the daemon's write blocks.
const BIG_EVENT: usize = 600 * 1024;

/// What the daemon must say about a bad hook (contract section 7).
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// `failed`, `timed out after Ns`.
    TimedOut,
    /// `failed` with this error (`killed by signal N (SIG...)`), and no exit code.
    Signal(&'static str),
    /// Exit 0 and nothing on stdout: `nothing`.
    Nothing,
    /// Exit 0 and text on stdout: `adds`.
    Adds,
}

/// How the hook's script is run.
#[derive(Clone, Copy, Debug)]
enum Form {
    /// `argv = [script]`: the script's shell is the hook's process (its `$$` is the group leader).
    Argv,
    /// `command = ". script"`: sourced by `sh -c`, so the `command` path is covered too and `$$` is still
    /// the leader.
    Sourced,
}

/// One bad hook. In `body`, `@PIDS@` is the file it writes pids to and `@DIR@` the sandbox.
struct Bad {
    name: &'static str,
    body: &'static str,
    form: Form,
    /// Its `timeout`, seconds.
    timeout: f64,
    expect: Expect,
    /// Whether its output must be reported `truncated`.
    truncated: bool,
    /// How many pids it writes down when it runs as meant.
    pids: usize,
}

/// Defines `lines N` in every script: waits (bounded, 10 s) until the pid file has N lines, so that a hook
/// that exits at once does so only after its children have written their pids.
const PRELUDE: &str = "lines() { n=0; while [ \"$(wc -l < @PIDS@)\" -lt \"$1\" ] && [ $n -lt 1000 ]; do n=$((n+1)); sleep 0.01; done; }\n";

const HANGS: Bad = Bad {
    name: "hangs",
    body: "echo $$ >> @PIDS@\nsleep 300 &\necho $! >> @PIDS@\nwait",
    form: Form::Sourced,
    timeout: 1.0,
    expect: Expect::TimedOut,
    truncated: false,
    pids: 2,
};

const IGNORES_TERM: Bad = Bad {
    name: "ignores_term",
    // SIG_IGN is inherited by the sleep: only SIGKILL ends either.
    body: "trap '' TERM\necho $$ >> @PIDS@\nsleep 300 &\necho $! >> @PIDS@\nwait",
    form: Form::Argv,
    timeout: 1.0,
    expect: Expect::TimedOut,
    truncated: false,
    pids: 2,
};

const CHILDREN_TRAP_TERM: Bad = Bad {
    name: "children_trap_term",
    // The hook exits at once, leaving two children in its group: one ignores SIGTERM, one handles it (and
    // writes down that it got it) and goes on. The first keeps stdout open.
    body: "echo $$ >> @PIDS@\n\
           sh -c 'trap \"\" TERM; echo $$ >> @PIDS@; exec sleep 300' &\n\
           sh -c 'trap \"echo term >> @DIR@/terms\" TERM; echo $$ >> @PIDS@; while :; do sleep 0.2; done' >/dev/null 2>&1 &\n\
           lines 3\n\
           exit 0",
    form: Form::Argv,
    timeout: 10.0,
    expect: Expect::Nothing,
    truncated: false,
    pids: 3,
};

const SETSID_EXITS: Bad = Bad {
    name: "setsid_exits",
    // A child in a session (and so a process group) of its own: the group kill does not reach it.
    body: "echo $$ >> @PIDS@\n\
           setsid sh -c 'echo $$ >> @PIDS@; exec sleep 300' &\n\
           lines 2\n\
           exit 0",
    form: Form::Argv,
    timeout: 10.0,
    expect: Expect::Nothing,
    truncated: false,
    pids: 2,
};

const SETSID_STAYS: Bad = Bad {
    name: "setsid_stays",
    body: "echo $$ >> @PIDS@\n\
           setsid sh -c 'echo $$ >> @PIDS@; exec sleep 300' &\n\
           sleep 300 &\n\
           echo $! >> @PIDS@\n\
           wait",
    form: Form::Argv,
    timeout: 1.0,
    expect: Expect::TimedOut,
    truncated: false,
    pids: 3,
};

const FLOODS: Bad = Bad {
    name: "floods",
    body: "echo $$ >> @PIDS@\n\
           yes flood >&2 &\n\
           echo $! >> @PIDS@\n\
           yes flood &\n\
           echo $! >> @PIDS@\n\
           wait",
    form: Form::Argv,
    timeout: 1.0,
    expect: Expect::TimedOut,
    truncated: true,
    pids: 3,
};

const FLOODS_50M: Bad = Bad {
    name: "floods_50m",
    body: "echo $$ >> @PIDS@\n\
           head -c 50000000 /dev/zero >&2 &\n\
           echo $! >> @PIDS@\n\
           head -c 50000000 /dev/zero | tr '\\0' a\n\
           wait",
    form: Form::Argv,
    timeout: 10.0,
    expect: Expect::Adds,
    truncated: true,
    pids: 2,
};

const NEVER_READS_STDIN: Bad = Bad {
    name: "never_reads_stdin",
    // Answers and exits without reading a byte of its 600 KB event; its child keeps the stdin pipe open,
    // so the daemon's write stays blocked until the child is gone.
    body: "echo $$ >> @PIDS@\nsleep 300 &\necho $! >> @PIDS@\necho ignored\nexit 0",
    form: Form::Argv,
    timeout: 10.0,
    expect: Expect::Adds,
    truncated: false,
    pids: 2,
};

const CLOSES_STDOUT: Bad = Bad {
    name: "closes_stdout",
    body: "exec >&-\necho $$ >> @PIDS@\nsleep 300 &\necho $! >> @PIDS@\nwait",
    form: Form::Sourced,
    timeout: 1.0,
    expect: Expect::TimedOut,
    truncated: false,
    pids: 2,
};

const CLOSES_ALL: Bad = Bad {
    name: "closes_all",
    // All three pipes closed at once: the daemon's reads and write end long before the hook does.
    body: "exec <&- >&- 2>&-\necho $$ >> @PIDS@\nsleep 300 &\necho $! >> @PIDS@\nwait",
    form: Form::Argv,
    timeout: 1.0,
    expect: Expect::TimedOut,
    truncated: false,
    pids: 2,
};

const SEGFAULTS: Bad = Bad {
    name: "segfaults",
    body: "echo $$ >> @PIDS@\nsleep 300 &\necho $! >> @PIDS@\nulimit -c 0\nkill -SEGV $$",
    form: Form::Argv,
    timeout: 10.0,
    expect: Expect::Signal("killed by signal 11 (SIGSEGV)"),
    truncated: false,
    pids: 2,
};

const KILLS_ITSELF: Bad = Bad {
    name: "kills_itself",
    body: "echo $$ >> @PIDS@\nsleep 300 &\necho $! >> @PIDS@\nkill -9 $$",
    form: Form::Sourced,
    timeout: 10.0,
    expect: Expect::Signal("killed by signal 9 (SIGKILL)"),
    truncated: false,
    pids: 2,
};

const HUNDRED_CHILDREN: Bad = Bad {
    name: "hundred_children",
    body: "echo $$ >> @PIDS@\n\
           for i in $(seq 100); do\n  sleep 300 &\n  echo $! >> @PIDS@\ndone\n\
           wait",
    form: Form::Argv,
    timeout: 2.0,
    expect: Expect::TimedOut,
    truncated: false,
    pids: 101,
};

/// Every bad hook, for the fires that run them all at once.
const ALL: [&Bad; 13] = [
    &HANGS,
    &IGNORES_TERM,
    &CHILDREN_TRAP_TERM,
    &SETSID_EXITS,
    &SETSID_STAYS,
    &FLOODS,
    &FLOODS_50M,
    &NEVER_READS_STDIN,
    &CLOSES_STDOUT,
    &CLOSES_ALL,
    &SEGFAULTS,
    &KILLS_ITSELF,
    &HUNDRED_CHILDREN,
];

/// A hook that answers, fired at `UserPromptSubmit` after each bad fire: the daemon still serves.
const PROBE: &str = "[[hooks.UserPromptSubmit]]\nname = \"probe\"\ncommand = \"echo alive\"\n";

/// A daemon running `bads` on PreToolUse (plus a well-behaved hook `good` when `with_good`), and the tag
/// its bad hooks' processes carry.
struct Rig {
    d: Daemon,
    tag: String,
    /// Kills whatever still carries the tag when the test ends, pass or fail: a daemon that leaves a
    /// `sleep 300` behind must not leave it to the machine.
    _reaper: Reaper,
}

fn rig(bads: &[&Bad], with_good: bool) -> Rig {
    let sb = Sandbox::new();
    let tag = sb
        .path()
        .file_name()
        .and_then(|n| n.to_str())
        .expect("a utf-8 sandbox name")
        .to_string();
    fs::create_dir(sb.p("work")).expect("creating the hooks' working folder");
    let mut toml = String::new();
    for bad in bads {
        let body = format!("{PRELUDE}{}", bad.body).replace("@PIDS@", &pid_file(bad));
        sb.script(&format!("{}.sh", bad.name), &body);
        fs::write(sb.p(&format!("{}.pids", bad.name)), "").expect("creating a pid file");
        let program = match bad.form {
            Form::Argv => format!("argv = [\"@DIR@/{}.sh\"]", bad.name),
            Form::Sourced => format!("command = \". @DIR@/{}.sh\"", bad.name),
        };
        toml.push_str(&format!(
            "[[hooks.PreToolUse]]\nname = \"{}\"\n{program}\ntimeout = {}\nenv = {{ FAULT_TAG = \"{tag}\" }}\n\n",
            bad.name, bad.timeout
        ));
    }
    if with_good {
        toml.push_str("[[hooks.PreToolUse]]\nname = \"good\"\ncommand = \"echo answered\"\n\n");
    }
    toml.push_str(PROBE);
    sb.settings(&toml);
    let reaper = Reaper(tag.clone());
    Rig {
        d: Daemon::start(sb),
        tag,
        _reaper: reaper,
    }
}

fn pid_file(bad: &Bad) -> String {
    format!("@DIR@/{}.pids", bad.name)
}

/// The event of a bad fire: run in the sandbox's `work` folder (not the watched settings folder), and
/// `BIG_EVENT` bytes long when `big`.
fn event(sb: &Sandbox, big: bool) -> Value {
    let mut event = json!({
        "session_id": "s1",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "cwd": sb.p("work"),
    });
    if big {
        event["tool_input"]["content"] = Value::String("x".repeat(BIG_EVENT));
    }
    event
}

/// The longest timeout of `bads`, plus the slack: how long their fire may take at most.
fn verdict_bound(bads: &[&Bad]) -> Duration {
    let longest = bads.iter().map(|b| b.timeout).fold(0.0, f64::max);
    Duration::from_secs_f64(longest) + VERDICT_SLACK
}

/// Fires `event` and checks that the verdict came within `bound`.
fn fire_bounded(d: &Daemon, event: Value, bound: Duration) -> Value {
    let start = Instant::now();
    let r = d.fire("PreToolUse", event);
    let took = start.elapsed();
    assert!(
        took < bound,
        "the verdict took {took:?}, past the bound of {bound:?}: {}",
        short(&r)
    );
    r
}

/// A response cut to a readable length (a flood's adds are a mebibyte).
fn short(r: &Value) -> String {
    let text = r.to_string();
    if text.len() > 2000 {
        format!("{}... ({} bytes)", &text[..2000], text.len())
    } else {
        text
    }
}

/// Checks what the response says of `bad`.
fn check_outcome(bad: &Bad, r: &Value) {
    let h = hook(r, bad.name);
    let h_short = short(h);
    match bad.expect {
        Expect::TimedOut => {
            assert_eq!(h["outcome"], "failed", "{}: {h_short}", bad.name);
            assert_eq!(
                h["error"],
                format!("timed out after {}s", bad.timeout),
                "{}: {h_short}",
                bad.name
            );
        }
        Expect::Signal(error) => {
            assert_eq!(h["outcome"], "failed", "{}: {h_short}", bad.name);
            assert_eq!(h["error"], error, "{}: {h_short}", bad.name);
            assert!(
                h.get("exit").is_none(),
                "{}: an exit code for a hook killed by a signal: {h_short}",
                bad.name
            );
        }
        Expect::Nothing => {
            assert_eq!(h["outcome"], "nothing", "{}: {h_short}", bad.name);
            assert_eq!(h["exit"], 0, "{}: {h_short}", bad.name);
        }
        Expect::Adds => {
            assert_eq!(h["outcome"], "adds", "{}: {h_short}", bad.name);
            assert_eq!(h["exit"], 0, "{}: {h_short}", bad.name);
        }
    }
    if bad.truncated {
        assert_eq!(
            h["truncated"], true,
            "{}: a flood not marked truncated: {h_short}",
            bad.name
        );
    } else {
        assert!(
            h.get("truncated").is_none(),
            "{}: `truncated` on a hook whose output was not cut: {h_short}",
            bad.name
        );
    }
}

/// The daemon answers the next fire.
fn probe(d: &Daemon) {
    let r = d.fire(
        "UserPromptSubmit",
        json!({"session_id": "s1", "prompt": "hi"}),
    );
    assert_eq!(
        adds(&r),
        vec!["alive"],
        "the daemon did not answer the fire after the bad one: {r}"
    );
}

/// The pids `bad` wrote down; at least as many as it writes when it runs as meant.
fn written_pids(sb: &Sandbox, bad: &Bad) -> Vec<i32> {
    let text = sb.read(&format!("{}.pids", bad.name));
    let pids: Vec<i32> = text
        .lines()
        .map(|l| {
            l.trim()
                .parse()
                .unwrap_or_else(|_| panic!("{}: not a pid: {l:?}", bad.name))
        })
        .collect();
    assert!(
        pids.len() >= bad.pids,
        "{}: wrote down {} pids, not {}: the hook did not run as meant",
        bad.name,
        pids.len(),
        bad.pids
    );
    pids
}

/// Waits until every hook of `bads` has written down all its pids.
fn wait_all_started(sb: &Sandbox, bads: &[&Bad]) {
    wait_until(
        RESPONSE,
        "every bad hook to have started its processes",
        || {
            bads.iter().all(|bad| {
                let text =
                    fs::read_to_string(sb.p(&format!("{}.pids", bad.name))).unwrap_or_default();
                text.lines().count() >= bad.pids
            })
        },
    );
}

// ---- /proc ----------------------------------------------------------------------------------------

/// Whether `pid` carries `FAULT_TAG=tag` in its environment (false once it is gone or a zombie).
fn has_tag(pid: i32, tag: &str) -> bool {
    let want = format!("FAULT_TAG={tag}");
    fs::read(format!("/proc/{pid}/environ"))
        .map(|env| env.split(|b| *b == 0).any(|var| var == want.as_bytes()))
        .unwrap_or(false)
}

fn comm(pid: i32) -> String {
    fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|c| c.trim().to_string())
        .unwrap_or_default()
}

/// Why `pid` counts as left behind by the daemon, or None when it does not: gone, a zombie whose parent
/// is not the daemon (see `common::process_gone`), or a reused pid now held by a process not of this hook.
fn left_over(pid: i32, daemon: u32, tag: &str) -> Option<String> {
    let (state, ppid) = proc_stat(pid)?;
    match state {
        'Z' | 'X' if ppid == daemon as i32 => Some(format!(
            "pid {pid} ({}): a zombie the daemon has not reaped",
            comm(pid)
        )),
        'Z' | 'X' => None,
        _ if has_tag(pid, tag) => Some(format!(
            "pid {pid} ({}): still running (state {state}, parent {ppid})",
            comm(pid)
        )),
        _ => None,
    }
}

/// What is left of the bad hooks: the pids they wrote down and every process carrying their tag.
fn leftovers(daemon: u32, tag: &str, pids: &[i32]) -> Vec<String> {
    let mut left = BTreeMap::new();
    let tagged = all_pids().into_iter().filter(|&p| has_tag(p, tag));
    for pid in pids.iter().copied().chain(tagged) {
        if let Some(why) = left_over(pid, daemon, tag) {
            left.insert(pid, why);
        }
    }
    left.into_values().collect()
}

/// The daemon's zombie children.
fn zombie_children(daemon: u32) -> Vec<i32> {
    all_pids()
        .into_iter()
        .filter(|&p| matches!(proc_stat(p), Some(('Z', ppid)) if ppid == daemon as i32))
        .collect()
}

/// The daemon's descriptors once it is idle: after a fire of the probe (so that whatever it opens on the
/// first fire is open), the same listing seen 10 polls in a row (the probe's connection and process are
/// closed by then).
fn idle_fds_after_probe(d: &Daemon) -> BTreeMap<u32, String> {
    probe(d);
    idle_fds(d.pid(), CLEANUP)
}

/// Nothing of the bad hooks is left: no process, no zombie child of the daemon, no extra descriptor.
fn nothing_left(rig: &Rig, pids: &[i32], before: &BTreeMap<u32, String>) {
    let d = &rig.d;
    let mut left = Vec::new();
    if let Err(e) = poll_until("the bad hooks' processes to be gone", || {
        left = leftovers(d.pid(), &rig.tag, pids);
        left.is_empty()
    }) {
        panic!("{e}; left behind: {left:#?}");
    }
    let mut zombies = Vec::new();
    if let Err(e) = poll_until("no zombie child of the daemon", || {
        zombies = zombie_children(d.pid());
        zombies.is_empty()
    }) {
        panic!("{e}; zombie children of the daemon: {zombies:?}");
    }
    let mut now = BTreeMap::new();
    if let Err(e) = poll_until(
        "the daemon's descriptor count to be back where it was",
        || {
            now = fds(d.pid());
            now.len() == before.len()
        },
    ) {
        panic!("{e}; descriptors before the fire: {before:#?}\nnow: {now:#?}");
    }
}

/// As `common::wait_until` with the `CLEANUP` deadline, but returning the failure instead of panicking,
/// so that the caller can say what it saw last.
fn poll_until(what: &str, mut cond: impl FnMut() -> bool) -> Result<(), String> {
    let deadline = Instant::now() + CLEANUP;
    loop {
        if cond() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!("timed out after {CLEANUP:?} waiting for {what}"));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// On drop, SIGKILLs every live process carrying the tag.
struct Reaper(String);

impl Drop for Reaper {
    fn drop(&mut self) {
        for pid in all_pids() {
            if has_tag(pid, &self.0) && !matches!(proc_stat(pid), Some(('Z', _))) {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
    }
}

// ---- the scenarios ----------------------------------------------------------------------------------

/// Runs `bad` alone in a fire and checks everything this file promises. Returns the rig for extra checks.
fn alone(bad: &Bad) -> Rig {
    let rig = rig(&[bad], false);
    let d = &rig.d;
    let before = idle_fds_after_probe(d);
    let big = matches!(bad.name, "never_reads_stdin");
    let r = fire_bounded(d, event(&d.sb, big), verdict_bound(&[bad]));
    check_outcome(bad, &r);
    probe(d);
    let pids = written_pids(&d.sb, bad);
    nothing_left(&rig, &pids, &before);
    println!("{}: {} pids written down, all gone", bad.name, pids.len());
    rig
}

#[test]
fn hook_that_hangs_times_out_and_leaves_nothing() {
    alone(&HANGS);
}

#[test]
fn hook_that_ignores_sigterm_is_killed_and_leaves_nothing() {
    alone(&IGNORES_TERM);
}

#[test]
fn children_that_trap_sigterm_get_it_then_are_killed() {
    let rig = alone(&CHILDREN_TRAP_TERM);
    // The child with a TERM handler wrote down that it got SIGTERM: the group was asked to stop before it
    // was killed.
    assert!(
        rig.d.sb.p("terms").exists(),
        "the child that handles SIGTERM never got it (killed without the grace?)"
    );
}

#[test]
fn child_in_its_own_session_of_an_exited_hook_is_killed() {
    alone(&SETSID_EXITS);
}

#[test]
fn child_in_its_own_session_of_a_timed_out_hook_is_killed() {
    alone(&SETSID_STAYS);
}

#[test]
fn endless_flood_on_stdout_and_stderr_is_truncated_and_timed_out() {
    alone(&FLOODS);
}

#[test]
fn fifty_megabytes_on_stdout_and_stderr_are_truncated_and_answered() {
    let rig = alone(&FLOODS_50M);
    // Checked again on a second fire, for the adds themselves: cut at the cap, the hook's own bytes.
    let r = rig.d.fire("PreToolUse", event(&rig.d.sb, false));
    let a = adds(&r);
    assert_eq!(a.len(), 1, "{}", short(&r));
    assert!(
        a[0].len() <= 1 << 20 && a[0].len() >= 1000,
        "adds of {} bytes: not cut at the 1 MiB cap",
        a[0].len()
    );
    assert!(
        a[0].bytes().all(|b| b == b'a'),
        "adds is not the hook's stdout"
    );
}

#[test]
fn hook_that_never_reads_a_600_kb_event_is_answered_and_leaves_nothing() {
    let rig = alone(&NEVER_READS_STDIN);
    let r = rig.d.fire("PreToolUse", event(&rig.d.sb, true));
    assert_eq!(adds(&r), vec!["ignored"], "{}", short(&r));
}

#[test]
fn hook_that_closes_stdout_and_runs_on_times_out() {
    alone(&CLOSES_STDOUT);
}

#[test]
fn hook_that_closes_all_its_pipes_and_runs_on_times_out() {
    alone(&CLOSES_ALL);
}

#[test]
fn hook_killed_by_sigsegv_failed_and_its_child_is_killed() {
    alone(&SEGFAULTS);
}

#[test]
fn hook_killed_by_sigkill_failed_and_its_child_is_killed() {
    alone(&KILLS_ITSELF);
}

#[test]
fn hook_with_a_hundred_children_times_out_and_leaves_none() {
    alone(&HUNDRED_CHILDREN);
}

#[test]
fn every_bad_hook_in_one_fire() {
    let rig = rig(&ALL, true);
    let d = &rig.d;
    let before = idle_fds_after_probe(d);
    let r = fire_bounded(d, event(&d.sb, true), verdict_bound(&ALL));
    for bad in ALL {
        check_outcome(bad, &r);
    }
    assert_eq!(hook(&r, "good")["outcome"], "adds", "{}", short(&r));
    assert_eq!(r["refused"], false, "{}", short(&r));
    let a = adds(&r);
    assert_eq!(
        a[1..],
        ["ignored", "answered"],
        "the adds, in the settings' order (the flood's first): {}",
        short(&r)
    );
    probe(d);
    let pids: Vec<i32> = ALL.iter().flat_map(|b| written_pids(&d.sb, b)).collect();
    nothing_left(&rig, &pids, &before);
    println!(
        "{} bad hooks in one fire: {} pids written down, all gone",
        ALL.len(),
        pids.len()
    );
}

#[test]
fn every_bad_hook_in_one_fire_whose_client_hangs_up() {
    let rig = rig(&ALL, true);
    let d = &rig.d;
    let before = idle_fds_after_probe(d);
    let mut c = d.connect();
    c.send(
        &json!({"op": "fire", "id": 1, "moment": "PreToolUse", "agent": "claude-code",
                   "event": event(&d.sb, true)}),
    );
    wait_all_started(&d.sb, &ALL);
    drop(c);
    probe(d);
    let pids: Vec<i32> = ALL.iter().flat_map(|b| written_pids(&d.sb, b)).collect();
    nothing_left(&rig, &pids, &before);
    let status = d.status();
    assert_eq!(status["in_flight"], 0, "{status}");
    println!(
        "{} bad hooks, client gone mid-fire: {} pids written down, all gone",
        ALL.len(),
        pids.len()
    );
}
