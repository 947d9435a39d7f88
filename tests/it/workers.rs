//! Worker hooks (`worker = [...]`, `workers = N`): hooks kept running, asked one event per line on stdin,
//! answering one line on stdout. Against the real daemon with real Python workers (and `sh` ones where a
//! shell is simpler): answers, a worker's pid kept across fires, late, crashing, garbage-writing and
//! always-dying workers and their restarts, workers out of step with the events (a banner, a blank line,
//! another event's `hookd_id`), overlapping fires on several processes, reloads that keep the unchanged
//! workers and let a replaced one answer the fires it holds, `on_failure`, the worker's stderr in the log,
//! shutdown, and `hookd check`.
//!
//! The one Python worker, `worker.py`, does what the event's `tool_input.command` says (`refuse:R`,
//! `add:T`, `pid`, `slow:S`, `half`, `garbage`, ...), so each test picks a behaviour per fire. Tests poll
//! `status` (or /proc) with deadlines; only the overlap test bounds a time, generously.

use std::fs;
use std::time::{Duration, Instant};

use crate::common::*;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

/// How long a worker may take to show in `status` as wanted (a safety net against a hung test, not a
/// speed assertion).
const SHOWS: Duration = Duration::from_secs(10);

/// The Python worker: one event per line in, one answer per line out, behaving as the event's
/// `tool_input.command` says. It appends its pid to `started.txt` once it is ready to read.
const WORKER_PY: &str = r#"
import json, os, sys, time

pid = str(os.getpid())

def say(text):
    sys.stdout.write(text)
    sys.stdout.flush()

def answer(obj):
    say(json.dumps(obj) + "\n")

with open("@DIR@/started.txt", "a") as started:
    started.write(pid + "\n")

while True:
    line = sys.stdin.readline()
    if not line:
        break
    event = json.loads(line)
    kind, _, arg = event.get("tool_input", {}).get("command", "").partition(":")
    if kind == "refuse":
        answer({"refused": arg})
    elif kind == "add":
        answer({"adds": arg})
    elif kind == "deny":
        answer({"hookSpecificOutput": {"hookEventName": event["hook_event_name"],
                "permissionDecision": "deny", "permissionDecisionReason": arg}})
    elif kind == "context":
        answer({"hookSpecificOutput": {"hookEventName": event["hook_event_name"],
                "additionalContext": arg}})
    elif kind == "empty":
        answer({})
    elif kind == "blank":
        say("\n")
    elif kind == "pid":
        answer({"adds": pid})
    elif kind == "event":
        answer({"adds": event["hook_event_name"] + " " + event["session_id"]})
    elif kind == "hook":
        answer({"adds": os.environ.get("HOOKD_HOOK", "")})
    elif kind == "env":
        answer({"adds": os.environ.get("POLICY", "")})
    elif kind == "argv":
        answer({"adds": " ".join(sys.argv[1:])})
    elif kind == "slow":
        time.sleep(float(arg))
        answer({"adds": pid})
    elif kind == "half":
        say('{"adds": "half an ans')
        os._exit(0)
    elif kind == "garbage":
        say("this is not json\n")
    elif kind == "badjson":
        say('{"adds": \n')
    elif kind == "gated":
        with open("@DIR@/gated.txt", "a") as gated:
            gated.write(pid + "\n")
        while not os.path.exists("@DIR@/go"):
            time.sleep(0.01)
        answer({"refused": "gated " + os.environ.get("POLICY", "") + " " + pid})
    elif kind == "id":
        answer({"hookd_id": event["hookd_id"], "adds": str(event["hookd_id"])})
    elif kind == "say":
        sys.stderr.write(arg + "\n")
        sys.stderr.flush()
        answer({})
    else:
        answer({"adds": "unknown directive " + kind})
"#;

/// Writes `worker.py` into the sandbox (outside the watched settings folder).
fn write_worker(sb: &Sandbox) {
    fs::write(sb.p("worker.py"), sb.expand(WORKER_PY)).expect("writing worker.py");
}

/// A sandbox with `worker.py` and the settings `toml`.
fn sandbox(toml: &str) -> Sandbox {
    let sb = Sandbox::new();
    write_worker(&sb);
    sb.settings(toml);
    sb
}

/// A PreToolUse hook `name` run by `worker.py`, with extra TOML keys.
fn py_hook(name: &str, extra: &str) -> String {
    format!(
        "[[hooks.PreToolUse]]\nname = \"{name}\"\nworker = [\"python3\", \"@DIR@/worker.py\"]\n{extra}\n"
    )
}

/// A Bash PreToolUse event whose command tells `worker.py` what to do.
fn ev(directive: &str) -> Value {
    ev_tool("Bash", directive)
}

fn ev_tool(tool: &str, directive: &str) -> Value {
    json!({"session_id": "s1", "tool_name": tool, "tool_input": {"command": directive}})
}

/// The status entries of the worker hook `name` (panics if it has none).
fn slots(d: &Daemon, name: &str) -> Vec<Value> {
    let status = d.status();
    status["workers"][name]
        .as_array()
        .unwrap_or_else(|| panic!("no workers for {name:?} in status: {status}"))
        .clone()
}

/// Polls `status` until `cond` holds of the slots of `name`; returns them.
fn wait_slots(d: &Daemon, name: &str, what: &str, cond: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let mut last = Vec::new();
    let deadline = Instant::now() + SHOWS;
    loop {
        let status = d.status();
        if let Some(found) = status["workers"][name].as_array() {
            if cond(found) {
                return found.clone();
            }
            last = found.clone();
        }
        if Instant::now() >= deadline {
            panic!(
                "after {SHOWS:?} the workers of {name:?} are still not {what}: {last:?}; status: {status}"
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn pid_of(slot: &Value) -> Option<i32> {
    slot["pid"].as_i64().map(|p| p as i32)
}

fn running(slot: &Value) -> bool {
    slot["state"] == "running" && pid_of(slot).is_some()
}

/// Waits until all `n` slots of `name` show as running with a pid; returns the pids.
fn wait_running(d: &Daemon, name: &str, n: usize) -> Vec<i32> {
    let found = wait_slots(d, name, &format!("{n} running"), |s| {
        s.len() == n && s.iter().all(running)
    });
    found.iter().map(|s| pid_of(s).unwrap()).collect()
}

/// Waits until the pid `pid` wrote its line into `started.txt` (a Python worker ready to read).
fn wait_ready(d: &Daemon, pid: i32) {
    wait_until(SHOWS, &format!("worker {pid} to be ready"), || {
        fs::read_to_string(d.sb.p("started.txt"))
            .unwrap_or_default()
            .lines()
            .any(|l| l == pid.to_string())
    });
}

/// The one running worker of `name`, once ready.
fn ready_worker(d: &Daemon, name: &str) -> i32 {
    let pid = wait_running(d, name, 1)[0];
    wait_ready(d, pid);
    pid
}

fn restarts(slot: &Value) -> u64 {
    slot["restarts"]
        .as_u64()
        .unwrap_or_else(|| panic!("no numeric restarts in {slot}"))
}

/// Waits until `pid` no longer runs.
fn wait_gone(d: &Daemon, pid: i32, what: &str) {
    wait_until(SHOWS, &format!("{what} (pid {pid}) to be gone"), || {
        process_gone(pid, d.pid())
    });
}

/// The error of hook `name` in a response, which must say it failed.
fn failed_with<'a>(r: &'a Value, name: &str) -> &'a str {
    let h = hook(r, name);
    assert_eq!(h["outcome"], "failed", "{r}");
    h["error"].as_str().unwrap()
}

mod answers {
    use super::*;

    #[test]
    fn python_worker_refuses_and_adds_from_one_process() {
        let d = Daemon::start(sandbox(&py_hook("policy", "timeout = 10")));
        let pid = ready_worker(&d, "policy");

        let r = d.fire("PreToolUse", ev("refuse:no rm here"));
        assert_eq!(r["refused"], true, "{r}");
        assert_eq!(r["reason"], "no rm here", "{r}");
        let h = hook(&r, "policy");
        assert_eq!(h["outcome"], "refused", "{r}");
        assert!(h.get("exit").is_none(), "a worker hook has no exit: {h}");

        let r = d.fire("PreToolUse", ev("add:the branch is main"));
        assert_eq!(r["refused"], false, "{r}");
        assert_eq!(adds(&r), vec!["the branch is main"], "{r}");
        assert_eq!(hook(&r, "policy")["outcome"], "adds", "{r}");
        assert!(hook(&r, "policy").get("exit").is_none(), "{r}");

        // Claude Code's fields, read by the same rules as a hook's stdout.
        let r = d.fire("PreToolUse", ev("deny:not in prod"));
        assert_eq!(r["refused"], true, "{r}");
        assert_eq!(r["reason"], "not in prod", "{r}");
        let r = d.fire("PreToolUse", ev("context:from the worker"));
        assert_eq!(adds(&r), vec!["from the worker"], "{r}");

        // The event line is the hook's stdin JSON, with hook_event_name; the worker has HOOKD_HOOK.
        let r = d.fire("PreToolUse", ev("event"));
        assert_eq!(adds(&r), vec!["PreToolUse s1"], "{r}");
        let r = d.fire("PreToolUse", ev("hook"));
        assert_eq!(adds(&r), vec!["policy"], "{r}");

        let r = d.fire("PreToolUse", ev("pid"));
        assert_eq!(
            adds(&r),
            vec![pid.to_string()],
            "not answered by the worker in status: {r}"
        );
        let s = slots(&d, "policy");
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(pid_of(&s[0]), Some(pid), "the worker changed: {s:?}");
        assert_eq!(s[0]["state"], "running", "{s:?}");
        assert_eq!(restarts(&s[0]), 0, "{s:?}");
    }

    #[test]
    fn empty_object_says_nothing() {
        let d = Daemon::start(sandbox(&py_hook("quiet", "timeout = 10")));
        let pid = ready_worker(&d, "quiet");
        for _ in 0..2 {
            let r = d.fire("PreToolUse", ev("empty"));
            assert_eq!(r["refused"], false, "{r}");
            assert!(adds(&r).is_empty(), "{r}");
            let h = hook(&r, "quiet");
            assert_eq!(h["outcome"], "nothing", "{r}");
            assert!(h.get("exit").is_none(), "{r}");
        }
        let s = slots(&d, "quiet");
        assert_eq!(pid_of(&s[0]), Some(pid), "{s:?}");
        assert_eq!(restarts(&s[0]), 0, "saying nothing is no failure: {s:?}");
        assert_eq!(s[0]["out_of_step"], 0, "{s:?}");
    }

    /// Each event a worker gets carries `hookd_id`, a number of its own; a worker echoing it is answered.
    /// A command hook of the same fire gets the event without it.
    #[test]
    fn events_are_numbered_for_workers_only() {
        let sb = Sandbox::new();
        write_worker(&sb);
        sb.settings(&format!(
            "{}\n[[hooks.PreToolUse]]\nname = \"plain\"\ncommand = \"cat >> @DIR@/plain.txt\"\n",
            py_hook("numbered", "timeout = 10")
        ));
        let d = Daemon::start(sb);
        ready_worker(&d, "numbered");
        let ids: Vec<u64> = (0..3)
            .map(|_| {
                let r = d.fire("PreToolUse", ev("id"));
                assert_eq!(hook(&r, "numbered")["outcome"], "adds", "{r}");
                adds(&r)[0].parse().expect("a number")
            })
            .collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        let plain = d.sb.read("plain.txt");
        assert_eq!(plain.lines().count(), 3, "{plain:?}");
        for line in plain.lines() {
            let event: Value = serde_json::from_str(line).expect("the command hook's stdin");
            assert!(event.get("hookd_id").is_none(), "{line}");
            assert_eq!(event["tool_input"]["command"], "id", "{line}");
        }
        assert_eq!(restarts(&slots(&d, "numbered")[0]), 0);
    }

    #[test]
    fn worker_stderr_goes_to_the_daemon_log() {
        let d = Daemon::start(sandbox(&py_hook("chatty", "timeout = 10")));
        ready_worker(&d, "chatty");
        let r = d.fire("PreToolUse", ev("say:checking the policy file"));
        assert_eq!(hook(&r, "chatty")["outcome"], "nothing", "{r}");
        wait_until(SHOWS, "the worker's stderr in the log", || {
            d.log_text().lines().any(|l| {
                l.contains("worker says: checking the policy file") && l.contains("chatty")
            })
        });
    }

    #[test]
    fn overlapping_fires_are_answered_by_two_workers() {
        let d = Daemon::start(sandbox(&py_hook("pool", "workers = 2\ntimeout = 10")));
        let pids = wait_running(&d, "pool", 2);
        for &pid in &pids {
            wait_ready(&d, pid);
        }
        let start = Instant::now();
        let (a, b) = std::thread::scope(|scope| {
            let a = scope.spawn(|| d.fire("PreToolUse", ev("slow:0.5")));
            let b = scope.spawn(|| d.fire("PreToolUse", ev("slow:0.5")));
            (a.join().unwrap(), b.join().unwrap())
        });
        let took = start.elapsed();
        let (a, b) = (adds(&a), adds(&b));
        assert_eq!(a.len(), 1, "{a:?}");
        assert_eq!(b.len(), 1, "{b:?}");
        assert_ne!(a, b, "both fires were answered by the same worker");
        for answered in [&a[0], &b[0]] {
            let pid: i32 = answered.parse().expect("a pid");
            assert!(pids.contains(&pid), "{pid} is not a worker of {pids:?}");
        }
        // One after the other they would take 1 s; side by side about 0.5 s. Bound stated generously.
        assert!(
            took < Duration::from_millis(950),
            "two 0.5 s answers took {took:?}: not answered side by side"
        );
    }
}

mod failures {
    use super::*;

    #[test]
    fn late_worker_fails_the_fire_and_is_replaced() {
        let d = Daemon::start(sandbox(&py_hook("late", "timeout = 1")));
        let old = ready_worker(&d, "late");

        let start = Instant::now();
        let r = d.fire("PreToolUse", ev("slow:30"));
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the timeout did not end the fire: {r}"
        );
        assert_eq!(r["refused"], false, "on_failure is ignore: {r}");
        let error = failed_with(&r, "late");
        assert!(error.starts_with("timed out after 1s"), "{r}");
        assert!(hook(&r, "late").get("exit").is_none(), "{r}");

        let r = d.fire("PreToolUse", ev("pid"));
        assert_eq!(hook(&r, "late")["outcome"], "adds", "{r}");
        let new: i32 = adds(&r)[0].parse().expect("a pid");
        assert_ne!(new, old, "the late worker answered again: {r}");
        wait_gone(&d, old, "the late worker");
        let s = slots(&d, "late");
        assert_eq!(pid_of(&s[0]), Some(new), "{s:?}");
        assert_eq!(s[0]["state"], "running", "{s:?}");
        assert!(
            restarts(&s[0]) >= 1,
            "a worker killed for lateness and started again counts a restart: {s:?}"
        );
    }

    #[test]
    fn late_worker_with_on_failure_refuse_refuses() {
        let d = Daemon::start(sandbox(&py_hook(
            "guard",
            "timeout = 1\non_failure = \"refuse\"",
        )));
        ready_worker(&d, "guard");
        let r = d.fire("PreToolUse", ev("slow:30"));
        assert_eq!(r["refused"], true, "{r}");
        assert_eq!(r["reason"], "hook guard failed: timed out after 1s", "{r}");
        // The replacement answers the next fire.
        let r = d.fire("PreToolUse", ev("add:back"));
        assert_eq!(r["refused"], false, "{r}");
        assert_eq!(adds(&r), vec!["back"], "{r}");
    }

    #[test]
    fn worker_crashing_mid_answer_fails_and_is_restarted() {
        let d = Daemon::start(sandbox(&py_hook("crashy", "timeout = 10")));
        let old = ready_worker(&d, "crashy");
        let r = d.fire("PreToolUse", ev("half"));
        failed_with(&r, "crashy");
        assert!(adds(&r).is_empty(), "half an answer was used: {r}");

        let r = d.fire("PreToolUse", ev("pid"));
        assert_eq!(hook(&r, "crashy")["outcome"], "adds", "{r}");
        let new: i32 = adds(&r)[0].parse().expect("a pid");
        assert_ne!(new, old, "{r}");
        wait_gone(&d, old, "the crashed worker");
        let s = slots(&d, "crashy");
        assert_eq!(pid_of(&s[0]), Some(new), "{s:?}");
        assert!(restarts(&s[0]) >= 1, "{s:?}");
        assert!(s[0]["last_error"].is_string(), "{s:?}");
    }

    /// Garbage of either kind: text that is no JSON, and a line that starts as JSON but is not.
    fn garbage_fails_and_restarts(directive: &str) {
        let d = Daemon::start(sandbox(&py_hook("babbler", "timeout = 10")));
        let old = ready_worker(&d, "babbler");
        let r = d.fire("PreToolUse", ev(directive));
        failed_with(&r, "babbler");
        assert!(adds(&r).is_empty(), "garbage was taken for adds: {r}");

        let r = d.fire("PreToolUse", ev("pid"));
        assert_eq!(hook(&r, "babbler")["outcome"], "adds", "{r}");
        let new: i32 = adds(&r)[0].parse().expect("a pid");
        assert_ne!(
            new, old,
            "the worker that wrote garbage ({directive}) was kept: {r}"
        );
        wait_gone(&d, old, "the garbage-writing worker");
        let s = slots(&d, "babbler");
        assert!(restarts(&s[0]) >= 1, "{s:?}");
    }

    #[test]
    fn worker_answering_text_is_failed_and_restarted() {
        garbage_fails_and_restarts("garbage");
    }

    #[test]
    fn worker_answering_broken_json_is_failed_and_restarted() {
        garbage_fails_and_restarts("badjson");
    }

    #[test]
    fn worker_killed_while_idle_is_restarted() {
        let d = Daemon::start(sandbox(&py_hook("victim", "timeout = 10")));
        let old = ready_worker(&d, "victim");
        kill(Pid::from_raw(old), Signal::SIGKILL).expect("killing the worker");
        let s = wait_slots(&d, "victim", "restarted", |s| {
            running(&s[0]) && pid_of(&s[0]) != Some(old)
        });
        assert!(restarts(&s[0]) >= 1, "{s:?}");
        wait_gone(&d, old, "the killed worker");
        let new = pid_of(&s[0]).unwrap();
        let r = d.fire("PreToolUse", ev("pid"));
        assert_eq!(adds(&r), vec![new.to_string()], "{r}");
    }

    #[test]
    fn worker_dying_at_start_is_failing_without_spinning() {
        let sb = Sandbox::new();
        write_worker(&sb);
        sb.settings(&format!(
            "[[hooks.PostToolUse]]\nname = \"doomed\"\nworker = [\"sh\", \"-c\", \"echo doomed to die >&2; exit 3\"]\ntimeout = 0.5\n\n\
             [[hooks.Notification]]\nname = \"missing\"\nworker = [\"@DIR@/no-such-worker\"]\n\n{}",
            py_hook("healthy", "timeout = 10")
        ));
        let d = Daemon::start(sb);
        let s = wait_slots(&d, "doomed", "failing", |s| s[0]["state"] == "failing");
        let at_failing = restarts(&s[0]);
        // Failing from the third death in a row: it was started again at least twice before.
        assert!(at_failing >= 2, "failing before 3 deaths: {s:?}");
        assert!(s[0]["last_error"].is_string(), "{s:?}");
        // A worker that cannot even be started fails the same way.
        let s = wait_slots(&d, "missing", "failing", |s| s[0]["state"] == "failing");
        assert!(
            s[0]["last_error"]
                .as_str()
                .is_some_and(|e| e.contains("no-such-worker")),
            "{s:?}"
        );

        // For about a second the daemon keeps answering the other hooks, and the doomed worker is not
        // restarted in a tight loop.
        let window = Instant::now();
        let mut answered = 0;
        while window.elapsed() < Duration::from_secs(1) {
            let r = d.fire("PreToolUse", ev("add:still here"));
            assert_eq!(adds(&r), vec!["still here"], "{r}");
            answered += 1;
        }
        assert!(answered > 0);
        let s = slots(&d, "doomed");
        assert!(
            restarts(&s[0]) <= 6,
            "the dying worker was restarted {} times by a second after it was failing: {s:?}",
            restarts(&s[0])
        );

        // A fire for the doomed hook fails rather than hang.
        let start = Instant::now();
        let r = d.fire("PostToolUse", ev("pid"));
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the fire waited for a dead worker: {r}"
        );
        failed_with(&r, "doomed");
        assert_eq!(
            wait_running(&d, "healthy", 1).len(),
            1,
            "the healthy worker suffered"
        );
        wait_until(SHOWS, "the dying worker's stderr in the log", || {
            d.log_text()
                .lines()
                .any(|l| l.contains("worker says: doomed to die") && l.contains("doomed"))
        });
    }
}

/// Workers whose answers are out of step with the events: a stray line must never
/// decide another event. Each worker here applies one policy (`rm -rf` refused, anything else let through
/// with an add naming the command, so an answer shows which event it belonged to) but writes one line too
/// many somewhere. Each test fires `rm -rf /` and `ls` in turn and checks every verdict: the event's own
/// answer, or a failure refused by `on_failure = "refuse"`, never another event's answer.
mod out_of_step {
    use super::*;

    /// The policy, and `ready()`, which notes the worker's pid in `started.txt` once it is ready to read.
    const POLICY_PY: &str = r#"
import json, os, sys

def policy(event):
    command = event.get("tool_input", {}).get("command", "")
    if "rm -rf" in command:
        return {"refused": "no: " + command}
    return {"adds": "ran " + command}

def ready():
    with open("@DIR@/started.txt", "a") as started:
        started.write(str(os.getpid()) + "\n")
"#;

    const RM: &str = "rm -rf /";
    const LS: &str = "ls";

    /// The daemon with one worker hook `guard` (`on_failure = "refuse"`) running the policy and `body`.
    fn guarded(body: &str) -> Daemon {
        let sb = Sandbox::new();
        fs::write(sb.p("guard.py"), sb.expand(&format!("{POLICY_PY}{body}")))
            .expect("writing guard.py");
        sb.settings(
            "[[hooks.PreToolUse]]\nname = \"guard\"\nworker = [\"python3\", \"@DIR@/guard.py\"]\n\
             timeout = 10\non_failure = \"refuse\"\n",
        );
        Daemon::start(sb)
    }

    /// Fires `command` on a worker ready to read (so that what a worker writes as it starts is written
    /// before the event is sent) and checks the verdict; returns whether the hook failed.
    fn fire_checked(d: &Daemon, command: &str) -> bool {
        ready_worker(d, "guard");
        let r = d.fire("PreToolUse", ev(command));
        let failed = hook(&r, "guard").get("error").is_some();
        if failed {
            assert_eq!(r["refused"], true, "on_failure is refuse: {r}");
            let reason = r["reason"].as_str().unwrap_or_default();
            assert!(reason.starts_with("hook guard failed: "), "{r}");
        } else if command.contains("rm -rf") {
            assert_eq!(r["refused"], true, "{command:?} was let through: {r}");
            assert_eq!(r["reason"], format!("no: {command}"), "{r}");
        } else {
            assert_eq!(
                r["refused"], false,
                "{command:?} was refused by another event's answer: {r}"
            );
            assert_eq!(
                adds(&r),
                vec![format!("ran {command}")],
                "{command:?} was answered by another event's answer: {r}"
            );
        }
        failed
    }

    /// `rm -rf /` and `ls` in turn, three times each; then the worker must have been found out of step:
    /// restarted, shown in `status`, and warned about in the log. Returns how many fires failed.
    fn interleave(d: &Daemon) -> usize {
        let failed = (0..3)
            .flat_map(|_| [RM, LS])
            .filter(|command| fire_checked(d, command))
            .count();
        let s = slots(d, "guard");
        assert!(s[0]["out_of_step"].as_u64() >= Some(1), "{s:?}");
        assert!(restarts(&s[0]) >= 1, "{s:?}");
        let error = s[0]["last_error"].as_str().unwrap_or_default();
        assert!(error.starts_with("out of step: "), "{s:?}");
        wait_until(SHOWS, "a warning about the worker out of step", || {
            d.log_text()
                .lines()
                .any(|l| l.contains("WARN") && l.contains("out of step") && l.contains("guard"))
        });
        failed
    }

    #[test]
    fn banner_before_the_first_event() {
        let d = guarded(
            r#"
print(json.dumps({"ready": True}), flush=True)   # a start-up banner: no event asked for it
ready()
for line in sys.stdin:
    print(json.dumps(policy(json.loads(line))), flush=True)
"#,
        );
        // Written before the worker read its first event: no answer to anything, dropped, and the worker
        // kept (restarting it would only write the banner again). Every event gets its own answer.
        for command in [RM, LS, RM, LS] {
            assert!(!fire_checked(&d, command), "{command:?} failed");
        }
        let s = slots(&d, "guard");
        assert_eq!(s[0]["banners"], 1, "{s:?}");
        assert_eq!(s[0]["out_of_step"], 0, "{s:?}");
        assert_eq!(restarts(&s[0]), 0, "{s:?}");
        wait_until(SHOWS, "a warning quoting the banner", || {
            d.log_text()
                .lines()
                .any(|l| l.contains("WARN") && l.contains("as it started") && l.contains("ready"))
        });
    }

    /// What `banner.sh` answers: a refusal, without `hookd_id`.
    const REFUSE: &str = r#"echo '{"refused": "banner worker says no"}'"#;

    /// A `sh` worker hook `banner` that runs `before`, writes `{}` (a banner), then `answers`; never
    /// echoing `hookd_id`. `on_failure` is left as it is (`allow`), so that a failed event would be let
    /// through too.
    fn banner_worker(before: &str, answers: &str) -> Daemon {
        let sb = Sandbox::new();
        fs::write(
            sb.p("banner.sh"),
            format!("{before}\necho '{{}}'\n{answers}\n"),
        )
        .expect("writing banner.sh");
        sb.settings(
            "[[hooks.PreToolUse]]\nname = \"banner\"\nworker = [\"sh\", \"@DIR@/banner.sh\"]\ntimeout = 10\n",
        );
        Daemon::start(sb)
    }

    fn refused_by_the_worker(r: &Value) {
        assert_eq!(r["refused"], true, "a refusal lost: {r}");
        assert_eq!(r["reason"], "banner worker says no", "{r}");
    }

    #[test]
    fn a_banner_worker_that_does_not_echo_refuses_every_event() {
        // Found in the second outside attack: a worker that writes a banner and does not echo
        // hookd_id lost 10 of 10 refusals, each restart writing the banner again. Fired at once, without
        // waiting for the worker: the banner may come before the event is sent, or as it is sent.
        let d = banner_worker("", &format!("while read -r line; do {REFUSE}; done"));
        for _ in 0..10 {
            refused_by_the_worker(&d.fire("PreToolUse", ev(RM)));
        }
        let s = slots(&d, "banner");
        assert_eq!(s[0]["banners"], 1, "{s:?}");
        assert_eq!(restarts(&s[0]), 0, "{s:?}");
    }

    #[test]
    fn a_banner_written_as_the_first_event_is_sent_is_not_its_answer() {
        // Each worker writes its banner (`{}`, which says nothing) a while after it starts, when its first
        // event has been sent, then answers that one event and exits: every event goes to a new worker,
        // and meets its banner. It is the answer only by the time it came.
        let d = banner_worker("sleep 0.2", &format!("read -r line; {REFUSE}"));
        let mut last = None;
        for _ in 0..10 {
            let s = wait_slots(&d, "banner", "running a new worker", |s| {
                running(&s[0]) && pid_of(&s[0]) != last
            });
            last = pid_of(&s[0]);
            refused_by_the_worker(&d.fire("PreToolUse", ev(RM)));
        }
        let s = wait_slots(&d, "banner", "counting 10 banners", |s| {
            s[0]["banners"] == 10
        });
        assert_eq!(s[0]["out_of_step"], 0, "{s:?}");
    }

    #[test]
    fn a_line_written_before_the_worker_read_the_event_is_not_its_answer() {
        // A heartbeat (`{}`, which says nothing) written a while after each answer, and the next event
        // read only later still: the event fired just after an answer is sent before the heartbeat comes,
        // and the heartbeat comes while the event still waits unread in the pipe to the worker. It was
        // taken as that event's answer, and `rm -rf /` went through.
        let d = guarded(
            r#"
import time
ready()
while True:
    line = sys.stdin.readline()
    if not line:
        break
    print(json.dumps(policy(json.loads(line))), flush=True)
    time.sleep(0.3)
    print(json.dumps({}), flush=True)   # a heartbeat, before the next event is read
    time.sleep(0.5)
"#,
        );
        for _ in 0..3 {
            assert!(!fire_checked(&d, RM), "the first event failed");
            assert!(
                fire_checked(&d, RM),
                "the heartbeat was taken for an answer"
            );
        }
        let s = slots(&d, "guard");
        assert!(s[0]["out_of_step"].as_u64() >= Some(3), "{s:?}");
    }

    #[test]
    fn blank_line_after_each_answer() {
        let d = guarded(
            r#"
ready()
for line in sys.stdin:
    print(json.dumps(policy(json.loads(line))) + "\n", flush=True)   # the common slip: two newlines
"#,
        );
        interleave(&d);
    }

    #[test]
    fn blank_line_after_each_answer_in_a_write_of_its_own() {
        // The blank line of each answer (an unbuffered `print(answer + "\n")` writes it apart) comes once
        // the answer is read, when the test creates `tail`, and before the next event is sent: that event
        // goes to a new worker, and is answered.
        let d = guarded(
            r#"
import time
ready()
for line in sys.stdin:
    print(json.dumps(policy(json.loads(line))), flush=True)
    while not os.path.exists("@DIR@/tail"):
        time.sleep(0.01)
    os.remove("@DIR@/tail")
    sys.stdout.write("\n")
    sys.stdout.flush()
    with open("@DIR@/tails.txt", "a") as tails:
        tails.write("written\n")
"#,
        );
        for (sent, command) in [RM, LS, RM, LS].into_iter().enumerate() {
            assert!(!fire_checked(&d, command), "{command:?} failed");
            fs::write(d.sb.p("tail"), "").expect("letting the worker write its blank line");
            wait_until(SHOWS, "the blank line after the answer", || {
                fs::read_to_string(d.sb.p("tails.txt"))
                    .unwrap_or_default()
                    .lines()
                    .count()
                    == sent + 1
            });
        }
        let s = slots(&d, "guard");
        assert_eq!(s[0]["out_of_step"], 3, "{s:?}");
        assert_eq!(restarts(&s[0]), 3, "{s:?}");
        assert!(running(&s[0]), "restarted at once, not failing: {s:?}");
        wait_until(SHOWS, "a warning about the blank line", || {
            d.log_text().lines().any(|l| {
                l.contains("WARN") && l.contains(r#"it wrote "\n" before the event was sent"#)
            })
        });
    }

    #[test]
    fn blank_line_written_late() {
        // The blank line of each answer comes only once the next event is read: it lands after that
        // event was sent, where its answer is due.
        let d = guarded(
            r#"
ready()
late = ""
for line in sys.stdin:
    sys.stdout.write(late + json.dumps(policy(json.loads(line))) + "\n")
    sys.stdout.flush()
    late = "\n"
"#,
        );
        interleave(&d);
    }

    #[test]
    fn line_before_each_answer_in_the_same_write() {
        // A note, then the answer, in one write: the line where the answer is due is not the answer, and
        // the one after it is not trusted either.
        let d = guarded(
            r#"
ready()
for line in sys.stdin:
    answer = policy(json.loads(line))
    sys.stdout.write(json.dumps({"note": "thinking"}) + "\n" + json.dumps(answer) + "\n")
    sys.stdout.flush()
"#,
        );
        assert_eq!(interleave(&d), 6, "a line followed by another was taken");
    }

    #[test]
    fn a_line_without_the_id_from_a_worker_that_echoes_it() {
        // Found attacking the fixes: a worker that echoes hookd_id, but writes a heartbeat (no id)
        // just before an answer, in a write of its own: the heartbeat was taken as the answer ("nothing")
        // and `rm -rf /` went through. Once a hook's workers have echoed the id, a line without it is out
        // of step.
        let d = guarded(
            r#"
import time
ready()
first = True
for line in sys.stdin:
    event = json.loads(line)
    answer = policy(event)
    answer["hookd_id"] = event["hookd_id"]
    if not first:
        print(json.dumps({"heartbeat": 1}), flush=True)
        time.sleep(0.05)
    first = False
    print(json.dumps(answer), flush=True)
"#,
        );
        let failed = interleave(&d);
        assert!(failed >= 1, "no heartbeat was caught");
    }

    #[test]
    fn a_progress_line_before_each_answer_from_a_worker_that_echoes() {
        // Found attacking the fixes again: a worker that echoes hookd_id but writes a
        // progress line (no id) before each answer, in a write of its own. Its answers were only ever
        // seen out of step, so the daemon never learned that it echoes, and every progress line passed
        // for "nothing". Now any line carrying the id teaches it; only the very first event, before
        // anything was learned, can be taken at the worker's word (README).
        let d = guarded(
            r#"
import time
ready()
for line in sys.stdin:
    event = json.loads(line)
    answer = policy(event)
    answer["hookd_id"] = event["hookd_id"]
    print(json.dumps({"progress": "thinking"}), flush=True)
    time.sleep(0.05)
    print(json.dumps(answer), flush=True)
"#,
        );
        let let_through = (0..8)
            .filter(|_| {
                ready_worker(&d, "guard");
                d.fire("PreToolUse", ev(RM))["refused"] != true
            })
            .count();
        assert!(
            let_through <= 1,
            "{let_through} of 8 `rm -rf /` let through"
        );
    }

    #[test]
    fn wrong_hookd_id_echoed() {
        // One answer behind, each answer echoing the number of the event it belongs to: the first answer
        // (one too many) belongs to no event.
        let d = guarded(
            r#"
ready()
behind = {"hookd_id": 0}
for line in sys.stdin:
    event = json.loads(line)
    answer = policy(event)
    answer["hookd_id"] = event.get("hookd_id")
    print(json.dumps(behind), flush=True)
    behind = answer
"#,
        );
        assert_eq!(interleave(&d), 6, "an answer one behind was taken");
    }

    #[test]
    fn worker_out_of_step_again_and_again_is_failing() {
        let d = Daemon::start(sandbox(&py_hook("blank", "timeout = 10")));
        ready_worker(&d, "blank");
        for _ in 0..3 {
            let r = d.fire("PreToolUse", ev("blank"));
            assert!(
                failed_with(&r, "blank").starts_with("out of step: "),
                "a blank line is no answer: {r}"
            );
        }
        // Failing from the third time in a row (the state lasts only until its pause ends: the log says it).
        let s = slots(&d, "blank");
        assert_eq!(s[0]["out_of_step"], 3, "{s:?}");
        wait_until(SHOWS, "the worker out of step reported as failing", || {
            d.log_text().lines().any(|l| {
                l.contains("ERROR")
                    && l.contains("keeps failing: out of step")
                    && l.contains("blank")
            })
        });
        // It is still started again (after a pause), and a good answer starts the count over.
        let r = d.fire("PreToolUse", ev("add:back"));
        assert_eq!(adds(&r), vec!["back"], "{r}");
        wait_slots(&d, "blank", "running", |s| running(&s[0]));
    }
}

mod lifecycle {
    use super::*;

    /// A PreToolUse worker hook `name` on tool `tool`, with extra TOML keys.
    fn on_tool(name: &str, tool: &str, extra: &str) -> String {
        format!(
            "[[hooks.PreToolUse]]\nname = \"{name}\"\nmatcher = \"{tool}\"\ntimeout = 10\n{extra}\n\n"
        )
    }

    #[test]
    fn reload_restarts_only_the_changed_workers() {
        let py = "worker = [\"python3\", \"@DIR@/worker.py\"";
        let v1 = [
            on_tool("args", "Bash", &format!("{py}, \"v1\"]")),
            on_tool("count", "Grep", &format!("{py}]")),
            on_tool(
                "env",
                "Glob",
                &format!("{py}]\nenv = {{ POLICY = \"v1\" }}"),
            ),
            on_tool("kept", "Read", &format!("{py}, \"kept\"]")),
            format!("[[hooks.PostToolUse]]\nname = \"removed\"\n{py}]\n"),
        ]
        .concat();
        // `args`, `count` and `env` get new arguments, a new count, a new environment; `kept` a new
        // matcher and timeout only; `removed` goes.
        let v2 = [
            on_tool("args", "Bash", &format!("{py}, \"v2\"]")),
            on_tool("count", "Grep", &format!("{py}]\nworkers = 2")),
            on_tool(
                "env",
                "Glob",
                &format!("{py}]\nenv = {{ POLICY = \"v2\" }}"),
            ),
            on_tool(
                "kept",
                "Read|Edit",
                &format!("{py}, \"kept\"]\ntimeout = 1"),
            )
            .replace("timeout = 10\n", ""),
        ]
        .concat();
        let d = Daemon::start(sandbox(&v1));
        let old: Vec<(&str, i32)> = ["args", "count", "env", "kept", "removed"]
            .into_iter()
            .map(|name| (name, ready_worker(&d, name)))
            .collect();
        let old_pid = |name: &str| old.iter().find(|(n, _)| *n == name).unwrap().1;
        assert_eq!(adds(&d.fire("PreToolUse", ev("argv"))), vec!["v1"]);
        assert_eq!(
            adds(&d.fire("PreToolUse", ev_tool("Glob", "env"))),
            vec!["v1"]
        );

        d.sb.settings(&v2);
        wait_until(SHOWS, "the edit to be loaded", || {
            d.status()["generation"].as_u64() >= Some(2)
        });
        for (name, n) in [("args", 1), ("count", 2), ("env", 1)] {
            let s = wait_slots(&d, name, "restarted", |s| {
                s.len() == n
                    && s.iter()
                        .all(|s| running(s) && pid_of(s) != Some(old_pid(name)))
            });
            for slot in &s {
                wait_ready(&d, pid_of(slot).unwrap());
            }
            wait_gone(&d, old_pid(name), &format!("the old worker of {name}"));
        }
        assert_eq!(
            adds(&d.fire("PreToolUse", ev("argv"))),
            vec!["v2"],
            "the worker does not run its new arguments"
        );
        assert_eq!(
            adds(&d.fire("PreToolUse", ev_tool("Glob", "env"))),
            vec!["v2"],
            "the worker does not have its new environment"
        );
        wait_gone(&d, old_pid("removed"), "the removed hook's worker");
        let status = d.status();
        assert!(
            status["workers"].get("removed").is_none(),
            "the removed hook still has workers: {status}"
        );

        let s = slots(&d, "kept");
        assert_eq!(
            pid_of(&s[0]),
            Some(old_pid("kept")),
            "a new matcher or timeout restarted the worker: {s:?}"
        );
        assert_eq!(restarts(&s[0]), 0, "{s:?}");
        // The kept worker answers under the new matcher and the new timeout.
        let r = d.fire("PreToolUse", ev_tool("Edit", "pid"));
        assert_eq!(adds(&r), vec![old_pid("kept").to_string()], "{r}");
        let r = d.fire("PreToolUse", ev_tool("Edit", "slow:30"));
        assert!(
            failed_with(&r, "kept").starts_with("timed out after 1s"),
            "the kept worker is not under the new timeout: {r}"
        );
    }

    /// The worker hook `gate`, run with `POLICY` set to `policy`.
    fn gate(policy: &str) -> String {
        py_hook(
            "gate",
            &format!("timeout = 30\nenv = {{ POLICY = \"{policy}\" }}"),
        )
    }

    /// A fire runs on one generation from start to end, so a reload that replaces a
    /// worker lets the old one answer the fires queued for it, then stops it.
    #[test]
    fn reload_lets_the_old_worker_answer_the_fires_it_holds() {
        let mut d = Daemon::start(sandbox(&gate("v1")));
        let old = ready_worker(&d, "gate");
        // Eight fires at once on one connection: the worker holds the first until `go` exists, the other
        // seven wait in its queue.
        let mut c = d.connect();
        for id in 0..8 {
            c.send(&json!({"op": "fire", "id": id, "moment": "PreToolUse", "agent": "claude-code", "event": ev("gated")}));
        }
        wait_until(
            SHOWS,
            "eight fires in flight, one of them with the worker",
            || d.status()["in_flight"] == 8 && d.sb.p("gated.txt").exists(),
        );

        d.sb.settings(&gate("v2"));
        let reloaded = d.reload();
        assert_eq!(reloaded["ok"], true, "{reloaded}");
        let new = wait_slots(&d, "gate", "replaced", |s| {
            running(&s[0]) && pid_of(&s[0]) != Some(old)
        });
        let new = pid_of(&new[0]).unwrap();
        wait_ready(&d, new);
        assert!(
            !process_gone(old, d.pid()),
            "the old worker was stopped with fires queued"
        );

        fs::write(d.sb.p("go"), "").expect("opening the gate");
        let mut answered: Vec<i64> = (0..8)
            .map(|_| {
                let r = c.recv();
                check_fire_shape(&r);
                assert_eq!(r["refused"], true, "a fire queued before the reload: {r}");
                assert_eq!(r["reason"], format!("gated v1 {old}"), "{r}");
                r["id"].as_i64().expect("an id")
            })
            .collect();
        answered.sort();
        assert_eq!(answered, (0..8).collect::<Vec<_>>());

        let r = d.fire("PreToolUse", ev("gated"));
        assert_eq!(r["reason"], format!("gated v2 {new}"), "{r}");
        wait_gone(&d, old, "the old worker, once its fires were answered");
        let s = slots(&d, "gate");
        assert_eq!(s.len(), 1, "status shows the old worker still: {s:?}");
        assert_eq!(pid_of(&s[0]), Some(new), "{s:?}");

        d.signal(Signal::SIGTERM);
        let status = d.wait_exit(Duration::from_secs(20));
        assert!(status.success(), "hookd serve exited with {status}");
        wait_gone(&d, new, "the new worker, at shutdown");
    }

    /// A worker replaced by a reload is stopped when the last fire it holds is abandoned (its client
    /// hung up), without waiting for its answer.
    #[test]
    fn a_replaced_worker_whose_last_fire_is_abandoned_is_stopped() {
        let d = Daemon::start(sandbox(&gate("v1")));
        let old = ready_worker(&d, "gate");
        let mut c = d.connect();
        c.send(&json!({"op": "fire", "id": 1, "moment": "PreToolUse", "agent": "claude-code", "event": ev("gated")}));
        wait_until(SHOWS, "the fire with the worker", || {
            d.sb.p("gated.txt").exists()
        });
        d.sb.settings(&gate("v2"));
        assert_eq!(d.reload()["ok"], true);
        let new = wait_slots(&d, "gate", "replaced", |s| {
            running(&s[0]) && pid_of(&s[0]) != Some(old)
        });
        assert!(
            !process_gone(old, d.pid()),
            "the old worker was stopped with a fire on it"
        );
        drop(c);
        wait_gone(&d, old, "the old worker, once its last fire was abandoned");
        let s = slots(&d, "gate");
        assert_eq!(pid_of(&s[0]), pid_of(&new[0]), "{s:?}");
        let r = d.fire("PreToolUse", ev("env"));
        assert_eq!(adds(&r), vec!["v2"], "{r}");
    }

    /// A worker replaced by a reload while a fire that started on it is still running is stopped at
    /// shutdown all the same.
    #[test]
    fn shutdown_stops_a_replaced_worker_still_answering() {
        let mut d = Daemon::start(sandbox(&gate("v1")));
        let old = ready_worker(&d, "gate");
        let mut c = d.connect();
        c.send(&json!({"op": "fire", "id": 1, "moment": "PreToolUse", "agent": "claude-code", "event": ev("gated")}));
        wait_until(SHOWS, "the fire with the worker", || {
            d.sb.p("gated.txt").exists()
        });
        d.sb.settings(&gate("v2"));
        assert_eq!(d.reload()["ok"], true);
        let new = wait_slots(&d, "gate", "replaced", |s| {
            running(&s[0]) && pid_of(&s[0]) != Some(old)
        });
        let new = pid_of(&new[0]).unwrap();

        d.signal(Signal::SIGTERM);
        let status = d.wait_exit(Duration::from_secs(30));
        assert!(status.success(), "hookd serve exited with {status}");
        for pid in [old, new] {
            wait_gone(&d, pid, "a worker, at shutdown");
        }
    }

    #[test]
    fn shutdown_leaves_no_worker_process() {
        let sb = Sandbox::new();
        write_worker(&sb);
        // A shell worker that ignores SIGTERM and leaves a child of its own (which ignores it too): only
        // the group's SIGKILL ends them.
        sb.script(
            "stubborn.sh",
            "trap '' TERM\n\
             sleep 300 &\n\
             echo $! > @DIR@/grandchild.pid\n\
             while read line; do echo '{}'; done",
        );
        sb.settings(&format!(
            "{}\n[[hooks.PostToolUse]]\nname = \"stubborn\"\nworker = [\"@DIR@/stubborn.sh\"]\n",
            py_hook("pool", "workers = 2\ntimeout = 10")
        ));
        let mut d = Daemon::start(sb);
        let mut pids = wait_running(&d, "pool", 2);
        for &pid in &pids {
            wait_ready(&d, pid);
        }
        pids.extend(wait_running(&d, "stubborn", 1));
        pids.push(d.sb.wait_pid("grandchild.pid"));
        let r = d.fire("PostToolUse", ev("x"));
        assert_eq!(hook(&r, "stubborn")["outcome"], "nothing", "{r}");

        d.signal(Signal::SIGTERM);
        let status = d.wait_exit(Duration::from_secs(20));
        assert!(status.success(), "hookd serve exited with {status}");
        for pid in pids {
            wait_until(SHOWS, &format!("worker process {pid} to be gone"), || {
                process_gone(pid, d.pid())
            });
        }
    }
}

mod check {
    use super::*;

    /// `hookd check` on `toml`: its exit code and stderr.
    fn check(toml: &str) -> (i32, String, String) {
        let sb = Sandbox::new();
        sb.settings(toml);
        let config = sb.config();
        let out = run_hookd(
            &["check", "--config", config.to_str().unwrap()],
            None,
            Duration::from_secs(20),
        );
        (code(&out.status), text(&out.stdout), text(&out.stderr))
    }

    /// Expects `toml` refused, with an error on line `line` saying every one of `words`.
    fn refused(toml: &str, line: u32, words: &[&str]) {
        let (code, stdout, stderr) = check(toml);
        assert_eq!(code, 1, "accepted: stdout {stdout:?} stderr {stderr:?}");
        let found = stderr.lines().any(|l| {
            let Some((_, rest)) = l.split_once("hooks.toml:") else {
                return false;
            };
            rest.starts_with(&format!("{line}:")) && words.iter().all(|w| rest.contains(w))
        });
        assert!(
            found,
            "no error on line {line} saying {words:?}: {stderr:?}"
        );
    }

    #[test]
    fn worker_and_workers_are_accepted() {
        let (code, stdout, stderr) = check(
            "[[hooks.PreToolUse]]\nname = \"policy\"\nworker = [\"python3\", \"/opt/policy.py\"]\nworkers = 2\ntimeout = 2\n\n\
             [[hooks.Stop]]\nname = \"one\"\nworker = [\"/opt/stop-worker\"]\nworkers = 16\n",
        );
        assert_eq!(code, 0, "stderr: {stderr}");
        assert!(stdout.contains("policy"), "{stdout}");
        assert!(stdout.contains("one"), "{stdout}");
    }

    #[test]
    fn workers_without_worker_is_refused() {
        refused(
            "[[hooks.PreToolUse]]\nname = \"a\"\ncommand = \"true\"\nworkers = 2\n",
            4,
            &["workers"],
        );
    }

    #[test]
    fn worker_with_command_or_argv_is_refused() {
        refused(
            "[[hooks.PreToolUse]]\nname = \"a\"\ncommand = \"true\"\nworker = [\"/bin/cat\"]\n",
            4,
            &["command", "worker"],
        );
        refused(
            "[[hooks.PreToolUse]]\nname = \"a\"\nworker = [\"/bin/cat\"]\nargv = [\"/bin/true\"]\n",
            3,
            &["argv", "worker"],
        );
    }

    #[test]
    fn workers_out_of_range_is_refused() {
        for n in [0, 17] {
            refused(
                &format!(
                    "[[hooks.PreToolUse]]\nname = \"a\"\nworker = [\"/bin/cat\"]\nworkers = {n}\n"
                ),
                4,
                &["workers", "1", "16"],
            );
        }
    }
}

mod load {
    use super::*;

    /// Answers each event after a pause, echoing its number: refuses `rm -rf`, adds the rest.
    const SLOW_GUARD_PY: &str = r#"
import json, sys, time
for line in sys.stdin:
    event = json.loads(line)
    time.sleep(0.002)
    command = event.get("tool_input", {}).get("command", "")
    answer = {"refused": "no"} if "rm -rf" in command else {}
    answer["hookd_id"] = event["hookd_id"]
    print(json.dumps(answer), flush=True)
"#;

    #[test]
    fn fires_past_a_full_queue_wait_their_turn_and_are_decided() {
        // Found attacking the fixes: past 1,024 fires queued for one worker hook, a fire failed at
        // once ("every worker is busy and the queue is full"), and under the default on_failure its
        // `rm -rf /` went through. It now waits its turn, as a command hook waits for a process slot.
        const CLIENTS: usize = 16;
        const EACH: usize = 80;
        let sb = Sandbox::new();
        fs::write(sb.p("guard.py"), SLOW_GUARD_PY).unwrap();
        sb.settings(
            "[[hooks.PreToolUse]]\nname = \"guard\"\nworker = [\"python3\", \"@DIR@/guard.py\"]\ntimeout = 30\n",
        );
        let d = Daemon::start(sb);
        let mut clients: Vec<Client> = (0..CLIENTS).map(|_| d.connect()).collect();
        for client in &mut clients {
            for id in 0..EACH {
                let command = if id == EACH - 1 { "rm -rf /" } else { "ls" };
                client.send(&json!({"op": "fire", "id": id, "moment": "PreToolUse",
                                    "event": ev(command)}));
            }
        }
        for client in &mut clients {
            for _ in 0..EACH {
                let r = client.recv();
                assert!(
                    hook(&r, "guard").get("error").is_none(),
                    "a fire failed: {r}"
                );
                let last = r["id"] == json!(EACH - 1);
                assert_eq!(r["refused"], last, "{r}");
            }
        }
    }
}
