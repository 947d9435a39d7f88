//! Running hook processes (contract section 6): parallelism, process groups and what is left of them
//! after a timeout, an exit or a client's disconnect, stdin and output limits, the environment, the
//! working directory and file descriptors a hook gets.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::os::unix::net::UnixDatagram;
use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{Value, json};

#[test]
fn four_half_second_hooks_run_in_parallel() {
    let sb = Sandbox::new();
    sb.script("half.sh", "sleep 0.5\necho \"$HOOKD_HOOK\"");
    let mut toml = String::new();
    for i in 1..=4 {
        toml.push_str(&format!(
            "[[hooks.PreToolUse]]\nname = \"h{i}\"\ncommand = \"@DIR@/half.sh\"\n\n"
        ));
    }
    sb.settings(&toml);
    let d = Daemon::start(sb);
    let start = Instant::now();
    let r = d.fire("PreToolUse", bash_event());
    let took = start.elapsed();
    assert_eq!(adds(&r), vec!["h1", "h2", "h3", "h4"], "{r}");
    // Run one after another they would take 2 s; in parallel about 0.5 s. Bound stated generously.
    assert!(
        took < Duration::from_millis(1800),
        "four 0.5 s hooks took {took:?}: not in parallel"
    );
}

#[test]
fn timed_out_hook_leaves_no_process_of_its_group() {
    let sb = Sandbox::new();
    sb.script(
        "slow.sh",
        "echo $$ > @DIR@/main.pid\n\
         sh -c 'echo $$ > @DIR@/child.pid; exec sleep 30' &\n\
         sleep 30",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"slow\"\ncommand = \"@DIR@/slow.sh\"\ntimeout = 0.5\n",
    );
    let d = Daemon::start(sb);
    let start = Instant::now();
    let r = d.fire("PreToolUse", bash_event());
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "the timeout did not end the fire: {r}"
    );
    assert_eq!(hook(&r, "slow")["outcome"], "failed", "{r}");
    assert!(
        hook(&r, "slow")["error"]
            .as_str()
            .unwrap()
            .starts_with("timed out after"),
        "{r}"
    );

    let main = d.sb.wait_pid("main.pid");
    let child = d.sb.wait_pid("child.pid");
    wait_until(
        Duration::from_secs(5),
        "the timed-out hook's processes to be gone",
        || process_gone(main, d.pid()) && process_gone(child, d.pid()),
    );
}

#[test]
fn background_grandchild_cannot_hold_the_verdict() {
    let sb = Sandbox::new();
    // The grandchild inherits stdout and keeps it open for 30 s; the hook waits until it has written its
    // pid, then answers and exits.
    sb.script(
        "bg.sh",
        "sh -c 'echo $$ > @DIR@/gc.pid; exec sleep 30' &\n\
         while [ ! -s @DIR@/gc.pid ]; do sleep 0.01; done\n\
         echo 'answered'\n\
         exit 0",
    );
    sb.settings("[[hooks.PreToolUse]]\nname = \"bg\"\ncommand = \"@DIR@/bg.sh\"\n");
    let d = Daemon::start(sb);
    let start = Instant::now();
    let r = d.fire("PreToolUse", bash_event());
    let took = start.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "a background grandchild held the verdict for {took:?}"
    );
    let h = hook(&r, "bg");
    assert_eq!(h["outcome"], "adds", "{r}");
    assert_eq!(h["exit"], 0, "{r}");
    assert_eq!(adds(&r), vec!["answered"], "{r}");

    let gc = d.sb.wait_pid("gc.pid");
    wait_until(
        Duration::from_secs(5),
        "the background grandchild to be killed",
        || process_gone(gc, d.pid()),
    );
}

#[test]
fn client_disconnect_kills_its_hooks() {
    let sb = Sandbox::new();
    sb.script(
        "long.sh",
        "sh -c 'echo $$ > @DIR@/child.pid; exec sleep 30' &\n\
         echo $$ > @DIR@/main.pid\n\
         sleep 30",
    );
    sb.settings("[[hooks.PreToolUse]]\nname = \"long\"\ncommand = \"@DIR@/long.sh\"\n");
    let d = Daemon::start(sb);
    let mut c = d.connect();
    c.send(&json!({"op": "fire", "id": 1, "moment": "PreToolUse", "agent": "claude-code", "event": bash_event()}));
    let main = d.sb.wait_pid("main.pid");
    let child = d.sb.wait_pid("child.pid");
    assert!(!process_gone(main, d.pid()), "the hook is not running");
    drop(c);
    wait_until(
        Duration::from_secs(10),
        "the disconnected client's hooks to be killed",
        || process_gone(main, d.pid()) && process_gone(child, d.pid()),
    );
    // The daemon carries on.
    let status = d.status();
    assert_eq!(status["in_flight"], 0, "{status}");
}

#[test]
fn hook_that_never_reads_a_large_event_is_answered() {
    let sb = Sandbox::new();
    sb.script("ignore.sh", "sleep 0.2\necho ignored");
    sb.script("count.sh", "wc -c | tr -d ' '");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"ignore\"\ncommand = \"@DIR@/ignore.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"count\"\ncommand = \"@DIR@/count.sh\"\n",
    );
    let d = Daemon::start(sb);
    let big = "x".repeat(600 * 1024);
    let r = d.fire(
        "PreToolUse",
        json!({"session_id": "s1", "tool_name": "Write", "tool_input": {"content": big}}),
    );
    assert_eq!(
        r["refused"],
        false,
        "{}",
        &r.to_string()[..500.min(r.to_string().len())]
    );
    let ignore = hook(&r, "ignore");
    assert_eq!(ignore["outcome"], "adds", "{ignore}");
    assert_eq!(ignore["exit"], 0, "{ignore}");
    let a = adds(&r);
    assert_eq!(a[0], "ignored", "{a:?}");
    let counted: usize = a[1]
        .parse()
        .unwrap_or_else(|_| panic!("count hook said {:?}", a[1]));
    assert!(
        counted > 600 * 1024,
        "the reading hook got only {counted} bytes of the event"
    );
}

#[test]
fn stdout_flood_is_truncated_and_answered() {
    let sb = Sandbox::new();
    sb.script(
        "flood.sh",
        "(head -c 20000000 /dev/zero | tr '\\0' e >&2) &\n\
         head -c 20000000 /dev/zero | tr '\\0' a\n\
         wait",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"flood\"\ncommand = \"@DIR@/flood.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"quiet\"\ncommand = \"echo quiet\"\n",
    );
    let d = Daemon::start(sb);
    let start = Instant::now();
    let r = d.fire("PreToolUse", bash_event());
    let took = start.elapsed();
    assert!(
        took < Duration::from_secs(20),
        "a 20 MB flood took {took:?} to answer"
    );
    let h = hook(&r, "flood");
    assert_eq!(h["truncated"], true, "flood hook: {h}");
    assert_eq!(
        h["exit"], 0,
        "the hook was not let run to its end (its output must be read): {h}"
    );
    assert_eq!(h["outcome"], "adds", "{h}");
    assert!(
        hook(&r, "quiet").get("truncated").is_none(),
        "`truncated` on a hook whose output was not cut: {}",
        hook(&r, "quiet")
    );
    let a = adds(&r);
    assert_eq!(a.len(), 2);
    assert_eq!(a[1], "quiet");
    assert!(
        a[0].len() <= 1024 * 1024,
        "adds of {} bytes: over the 1 MiB cap",
        a[0].len()
    );
    assert!(a[0].len() >= 1000, "adds of only {} bytes", a[0].len());
    assert!(
        a[0].bytes().all(|b| b == b'a'),
        "adds is not the hook's stdout"
    );
}

/// A hook's output is left in its pipes for its first milliseconds, and read at its exit: one that prints
/// more than a pipe holds and then refuses is blocked on the full pipe until the daemon reads, and its
/// refusal is still heard. At another moment, a hook that prints past a pipe's worth on both pipes at
/// once, and one that prints a line and exits at once (read only at its exit): both heard whole.
#[test]
fn a_hook_that_prints_more_than_a_pipe_holds_then_refuses_is_heard_whole() {
    let sb = Sandbox::new();
    sb.script(
        "long.sh",
        "head -c 300000 /dev/zero | tr '\\0' a\necho 'too long to read' >&2\nexit 2",
    );
    sb.script(
        "both.sh",
        "head -c 200000 /dev/zero | tr '\\0' e >&2 &\nhead -c 200000 /dev/zero | tr '\\0' o\nwait",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"long\"\ncommand = \"@DIR@/long.sh\"\n\n\
         [[hooks.PostToolUse]]\nname = \"both\"\ncommand = \"@DIR@/both.sh\"\n\n\
         [[hooks.PostToolUse]]\nname = \"line\"\nargv = [\"/bin/echo\", \"a line\"]\n",
    );
    let d = Daemon::start(sb);
    for _ in 0..3 {
        let r = d.fire("PreToolUse", bash_event());
        let text = r.to_string();
        assert_eq!(r["refused"], true, "{}", &text[..300.min(text.len())]);
        assert_eq!(
            r["reason"],
            "too long to read",
            "{}",
            &text[..300.min(text.len())]
        );
        assert_eq!(hook(&r, "long")["exit"], 2, "{}", hook(&r, "long"));

        let r = d.fire("PostToolUse", bash_event());
        assert_eq!(hook(&r, "both")["exit"], 0, "{}", hook(&r, "both"));
        assert_eq!(hook(&r, "line")["outcome"], "adds", "{}", hook(&r, "line"));
        let lengths: Vec<usize> = adds(&r).iter().map(String::len).collect();
        assert_eq!(
            lengths,
            vec![200_000, "a line".len()],
            "the adds of both and line, whole"
        );
    }
}

#[test]
fn event_reaches_stdin_as_one_line_with_hook_event_name() {
    let sb = Sandbox::new();
    sb.script("cat.sh", "cat > @DIR@/stdin.json");
    sb.settings(
        "[[hooks.PostToolUse]]\nname = \"cat\"\ncommand = \"@DIR@/cat.sh\"\n\n\
         [[hooks.UserPromptSubmit]]\nname = \"cat2\"\ncommand = \"@DIR@/cat.sh\"\n",
    );
    let d = Daemon::start(sb);
    let event = json!({
        "session_id": "s1",
        "tool_name": "Bash",
        "hook_event_name": "Wrong",
        "tool_input": {"command": "printf 'a\\nb'"},
        "nested": {"list": [1, 2.5, null, true], "text": "line1\nline2 ünïcode"}
    });
    let r = d.fire("PostToolUse", event.clone());
    assert_eq!(hook(&r, "cat")["outcome"], "nothing", "{r}");
    let got = d.sb.read("stdin.json");
    assert!(got.ends_with('\n'), "stdin not ended by a newline: {got:?}");
    assert_eq!(
        got.matches('\n').count(),
        1,
        "stdin is not one line: {got:?}"
    );
    let v: Value = serde_json::from_str(&got).unwrap();
    assert_eq!(v["hook_event_name"], "PostToolUse", "{v}");
    for key in ["session_id", "tool_name", "tool_input", "nested"] {
        assert_eq!(v[key], event[key], "{key} changed on the way: {v}");
    }

    // Added when absent.
    d.fire(
        "UserPromptSubmit",
        json!({"session_id": "s1", "prompt": "hi"}),
    );
    let v: Value = serde_json::from_str(&d.sb.read("stdin.json")).unwrap();
    assert_eq!(v["hook_event_name"], "UserPromptSubmit", "{v}");
    assert_eq!(v["prompt"], "hi", "{v}");
}

/// Parses `env` output into a map.
fn parse_env(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn hook_environment() {
    let sb = Sandbox::new();
    fs::create_dir(sb.p("project")).unwrap();
    sb.script("env.sh", "env > @DIR@/env.txt");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"envhook\"\ncommand = \"@DIR@/env.sh\"\nenv = { POLICY = \"strict\" }\n",
    );
    // The systemd variables are set for the daemon; the notify socket is a real datagram socket so that
    // a daemon that talks to it succeeds.
    let notify = UnixDatagram::bind(sb.p("notify.sock")).unwrap();
    let notify_path = sb.p("notify.sock");
    let d = Daemon::start_with(sb, |cmd| {
        cmd.env("NOTIFY_SOCKET", &notify_path)
            .env("LISTEN_FDS", "0")
            .env("LISTEN_PID", "1")
            .env("LISTEN_FDNAMES", "none")
            .env("WATCHDOG_USEC", "0")
            .env("WATCHDOG_PID", "1")
            .env("HOOKD_TEST_MARK", "inherited")
            .env_remove("CLAUDE_PROJECT_DIR");
    });
    let project = d.sb.p("project");
    let r = d.fire(
        "PreToolUse",
        json!({"session_id": "sess-42", "tool_name": "Bash", "cwd": project}),
    );
    assert_eq!(hook(&r, "envhook")["outcome"], "nothing", "{r}");
    let env = parse_env(&d.sb.read("env.txt"));
    let get = |k: &str| {
        env.get(k)
            .cloned()
            .unwrap_or_else(|| panic!("{k} not set in the hook: {env:?}"))
    };
    assert_eq!(get("HOOKD_MOMENT"), "PreToolUse");
    assert_eq!(get("HOOKD_HOOK"), "envhook");
    assert_eq!(get("HOOKD_AGENT"), "claude-code");
    assert_eq!(get("HOOKD_SESSION"), "sess-42");
    assert_eq!(get("CLAUDE_PROJECT_DIR"), project.to_str().unwrap());
    let config_dir = get("HOOKD_CONFIG_DIR");
    assert!(
        config_dir == d.sb.config_dir().to_str().unwrap()
            || config_dir
                == fs::canonicalize(d.sb.config_dir())
                    .unwrap()
                    .to_str()
                    .unwrap(),
        "HOOKD_CONFIG_DIR={config_dir:?}, settings folder {:?}",
        d.sb.config_dir()
    );
    assert_eq!(get("POLICY"), "strict", "the hook's own env");
    assert_eq!(
        get("HOOKD_TEST_MARK"),
        "inherited",
        "the daemon's environment is passed on"
    );
    for k in SYSTEMD_VARS {
        assert!(
            !env.contains_key(k),
            "{k} leaked into the hook: {:?}",
            env.get(k)
        );
    }

    // No agent, no session, no cwd: HOOKD_AGENT and HOOKD_SESSION empty (or unset), no
    // CLAUDE_PROJECT_DIR.
    let r = d.fire_req(
        json!({"op": "fire", "id": 2, "moment": "PreToolUse", "event": {"tool_name": "Bash"}}),
    );
    assert_eq!(hook(&r, "envhook")["outcome"], "nothing", "{r}");
    let env = parse_env(&d.sb.read("env.txt"));
    for k in ["HOOKD_AGENT", "HOOKD_SESSION"] {
        assert!(
            env.get(k).is_none_or(|v| v.is_empty()),
            "{k}={:?} for a fire without one",
            env[k]
        );
    }
    assert!(
        !env.contains_key("CLAUDE_PROJECT_DIR"),
        "CLAUDE_PROJECT_DIR set for an event without cwd: {:?}",
        env["CLAUDE_PROJECT_DIR"]
    );
    drop(notify);
}

#[test]
fn hook_working_directory() {
    let sb = Sandbox::new();
    fs::create_dir(sb.p("project")).unwrap();
    sb.script("pwd.sh", "pwd -P");
    sb.settings("[[hooks.PreToolUse]]\nname = \"pwd\"\ncommand = \"@DIR@/pwd.sh\"\n");
    let d = Daemon::start(sb);
    let project = fs::canonicalize(d.sb.p("project")).unwrap();
    let settings_dir = fs::canonicalize(d.sb.config_dir()).unwrap();

    let r = d.fire(
        "PreToolUse",
        json!({"tool_name": "Bash", "cwd": d.sb.p("project")}),
    );
    assert_eq!(adds(&r), vec![project.to_str().unwrap()], "event cwd: {r}");

    let r = d.fire(
        "PreToolUse",
        json!({"tool_name": "Bash", "cwd": d.sb.p("no-such-dir")}),
    );
    assert_eq!(
        adds(&r),
        vec![settings_dir.to_str().unwrap()],
        "missing cwd: {r}"
    );

    let r = d.fire("PreToolUse", json!({"tool_name": "Bash"}));
    assert_eq!(
        adds(&r),
        vec![settings_dir.to_str().unwrap()],
        "no cwd: {r}"
    );
}

/// A hook starts with no handler of the daemon's (it handles TERM, INT, HUP, QUIT, USR1, the real-time
/// signals, ...), nothing blocked, and SIGPIPE at its default (Rust ignores it); the daemon's child puts
/// SIGPIPE back, the kernel the handlers (at the clone, and again at the exec): `cat`, exec'd by the hook, shows its
/// own dispositions, which are the ones it was started with (`cat` handles no signal; `grep` would
/// handle SIGSEGV).
#[test]
fn hooks_start_with_default_signal_dispositions() {
    let sb = Sandbox::new();
    sb.script("signals.sh", "exec cat /proc/self/status");
    sb.settings("[[hooks.PreToolUse]]\nname = \"signals\"\ncommand = \"@DIR@/signals.sh\"\n");
    let d = Daemon::start(sb);
    let daemon_status = fs::read_to_string(format!("/proc/{}/status", d.pid())).unwrap();
    let caught = |text: &str, field: &str| -> u64 {
        let line = text
            .lines()
            .find(|l| l.starts_with(field))
            .unwrap_or_else(|| panic!("no {field} in {text}"));
        u64::from_str_radix(line[field.len()..].trim(), 16).unwrap()
    };
    assert!(
        caught(&daemon_status, "SigCgt:") & (1 << (libc_signal::USR1 - 1)) != 0,
        "the daemon handles SIGUSR1 (else this test shows nothing): {daemon_status}"
    );
    let r = d.fire("PreToolUse", bash_event());
    let a = adds(&r);
    assert_eq!(a.len(), 1, "{r}");
    let hook = &a[0];
    assert_eq!(
        caught(hook, "SigCgt:"),
        0,
        "a handler reached the hook: {hook}"
    );
    assert_eq!(
        caught(hook, "SigBlk:"),
        0,
        "the hook starts with signals blocked: {hook}"
    );
    assert_eq!(
        caught(hook, "SigIgn:") & (1 << (libc_signal::PIPE - 1)),
        0,
        "the hook starts with SIGPIPE ignored: {hook}"
    );
}

/// Signal numbers on Linux, for reading `/proc/PID/status` masks.
mod libc_signal {
    pub const USR1: u32 = 10;
    pub const PIPE: u32 = 13;
}

/// The descriptor numbers a hook sees, listed by `ls /proc/self/fd` exec'd from the hook.
fn hook_fds(d: &Daemon) -> BTreeSet<u32> {
    let r = d.fire("PreToolUse", bash_event());
    let a = adds(&r);
    assert_eq!(a.len(), 1, "{r}");
    a[0].lines().map(|l| l.trim().parse().unwrap()).collect()
}

#[test]
fn no_daemon_descriptor_leaks_into_hooks() {
    let sb = Sandbox::new();
    sb.script("fds.sh", "exec ls /proc/self/fd");
    sb.settings("[[hooks.PreToolUse]]\nname = \"fds\"\ncommand = \"@DIR@/fds.sh\"\n");
    let d = Daemon::start(sb);
    // Hold other connections open so the daemon has more descriptors than its listener.
    let _c1 = d.connect();
    let _c2 = d.connect();
    let fds = hook_fds(&d);
    // 0, 1, 2 and the one `ls` opened to read the folder.
    assert_eq!(fds.len(), 4, "the hook sees descriptors {fds:?}");
    assert!(
        fds.contains(&0) && fds.contains(&1) && fds.contains(&2),
        "{fds:?}"
    );
}

#[test]
fn descriptor_inherited_by_the_daemon_does_not_reach_hooks() {
    // Under systemd the daemon inherits descriptors without close-on-exec (socket activation); they are
    // the daemon's, and a hook must not get them either.
    let sb = Sandbox::new();
    sb.script("fds.sh", "exec ls /proc/self/fd");
    sb.settings("[[hooks.PreToolUse]]\nname = \"fds\"\ncommand = \"@DIR@/fds.sh\"\n");
    let extra = fs::File::open(sb.config()).unwrap();
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let raw = extra.as_raw_fd();
    let d = Daemon::start_with(sb, move |cmd| unsafe {
        // Safety: dup2 is async-signal-safe. Runs after the close-on-exec sweep of serve_command.
        cmd.pre_exec(move || {
            if nix::libc::dup2(raw, 7) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    });
    let fds = hook_fds(&d);
    drop(extra);
    assert!(
        !fds.contains(&7),
        "descriptor 7, inherited by the daemon, reached the hook: {fds:?}"
    );
    assert_eq!(fds.len(), 4, "the hook sees descriptors {fds:?}");
}

#[test]
fn max_processes_limits_hooks_running_at_once() {
    let sb = Sandbox::new();
    // Each hook takes a lock folder for 0.3 s; finding it taken means two ran at once. With a 0.5 s
    // timeout, the second would also time out if its clock started while it waited its turn.
    sb.script(
        "one.sh",
        "if mkdir @DIR@/lock 2>/dev/null; then sleep 0.3; rmdir @DIR@/lock; echo alone; else echo overlap; fi",
    );
    let mut toml = String::from("[defaults]\nmax_processes = 1\ntimeout = 0.5\n\n");
    for i in 1..=2 {
        toml.push_str(&format!(
            "[[hooks.PreToolUse]]\nname = \"h{i}\"\ncommand = \"@DIR@/one.sh\"\n\n"
        ));
    }
    sb.settings(&toml);
    let d = Daemon::start(sb);
    let r = d.fire("PreToolUse", bash_event());
    assert_eq!(hook(&r, "h1")["outcome"], "adds", "{r}");
    assert_eq!(
        hook(&r, "h2")["outcome"],
        "adds",
        "a waiting hook's timeout ran while it waited: {r}"
    );
    assert_eq!(
        adds(&r),
        vec!["alone", "alone"],
        "max_processes = 1 let two hooks run at once: {r}"
    );
}

#[test]
fn hook_ignoring_sigterm_is_killed_after_the_grace() {
    let sb = Sandbox::new();
    // SIG_IGN for TERM is inherited by the `sleep`s too: only the SIGKILL a second later ends them.
    sb.script(
        "stubborn.sh",
        "trap '' TERM\n\
         echo $$ > @DIR@/main.pid\n\
         sh -c 'echo $$ > @DIR@/child.pid; exec sleep 30' &\n\
         sleep 30",
    );
    sb.settings("[[hooks.PreToolUse]]\nname = \"stubborn\"\ncommand = \"@DIR@/stubborn.sh\"\ntimeout = 0.3\n");
    let d = Daemon::start(sb);
    let start = Instant::now();
    let r = d.fire("PreToolUse", bash_event());
    let took = start.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "a hook ignoring SIGTERM held the fire {took:?}"
    );
    let h = hook(&r, "stubborn");
    assert_eq!(h["outcome"], "failed", "{r}");
    assert!(
        h["error"].as_str().unwrap().starts_with("timed out after"),
        "{r}"
    );
    let main = d.sb.wait_pid("main.pid");
    let child = d.sb.wait_pid("child.pid");
    wait_until(
        Duration::from_secs(5),
        "the stubborn hook's processes to be gone",
        || process_gone(main, d.pid()) && process_gone(child, d.pid()),
    );
}

#[test]
fn shell_setting_runs_commands() {
    let sb = Sandbox::new();
    sb.script("myshell", "echo \"myshell got: $*\"");
    sb.settings(
        "[defaults]\nshell = \"@DIR@/myshell\"\n\n[[hooks.PreToolUse]]\nname = \"h\"\ncommand = \"echo hi\"\n",
    );
    let d = Daemon::start(sb);
    let r = d.fire("PreToolUse", bash_event());
    assert_eq!(adds(&r), vec!["myshell got: -c echo hi"], "{r}");
}

#[test]
fn an_escapee_that_ignores_sigterm_is_stopped_and_reported_once() {
    // While an escapee ignoring SIGTERM waited for its SIGKILL, every sweep (any hook's
    // exit) signalled and reported it again.
    let sb = Sandbox::new();
    // The hook waits until its escapee has left the group, so the group's stop does not catch it.
    sb.script(
        "leave.sh",
        "setsid sh -c 'trap \"\" TERM; echo $$ > @DIR@/escapee.pid.tmp; mv @DIR@/escapee.pid.tmp @DIR@/escapee.pid; exec sleep 300' >/dev/null 2>&1 &\n\
         while [ ! -s @DIR@/escapee.pid ]; do sleep 0.01; done",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"leaves\"\nmatcher = \"Leave\"\ncommand = \"@DIR@/leave.sh\"\n\
         [[hooks.PreToolUse]]\nname = \"quick\"\nmatcher = \"Bash\"\ncommand = \"true\"\n",
    );
    let d = Daemon::start(sb);
    d.fire("PreToolUse", json!({"tool_name": "Leave"}));
    let escapee = d.sb.wait_pid("escapee.pid");
    // Hooks exiting meanwhile make the daemon sweep again and again while the escapee waits for its
    // SIGKILL.
    wait_until(Duration::from_secs(10), "the escapee to be gone", || {
        d.fire("PreToolUse", bash_event());
        process_gone(escapee, d.pid())
    });
    let log = d.log_text();
    let reports = log
        .lines()
        .filter(|l| l.contains("left behind") && l.contains(&format!("pid={escapee}")))
        .count();
    assert_eq!(
        reports, 1,
        "the escapee was reported {reports} times:\n{log}"
    );
}

/// A timed-out hook whose leader takes its time to die (a TERM trap) and whose member ignores SIGTERM:
/// the member dies of the group's SIGKILL after the run has ended, a zombie re-parented to the daemon,
/// and is reaped by the sweep that SIGKILL asks for, not left for the slow tick (seconds).
#[test]
fn a_timed_out_hooks_member_killed_after_its_run_is_reaped_soon() {
    let sb = Sandbox::new();
    sb.script(
        "trap.sh",
        "trap 'sleep 0.5; exit 0' TERM\n\
         sh -c 'trap \"\" TERM; echo $$ > @DIR@/child.pid.tmp; mv @DIR@/child.pid.tmp @DIR@/child.pid; exec sleep 30' &\n\
         wait",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"t\"\ncommand = \"exec @DIR@/trap.sh\"\ntimeout = 0.3\n",
    );
    let d = Daemon::start(sb);
    let r = d.fire("PreToolUse", bash_event());
    assert_eq!(hook(&r, "t")["outcome"], "failed", "{r}");
    let child = d.sb.wait_pid("child.pid");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut zombie_since: Option<Instant> = None;
    loop {
        match proc_stat(child) {
            Some(('Z', parent)) if parent == d.pid() as i32 => {
                let since = *zombie_since.get_or_insert_with(Instant::now);
                assert!(
                    since.elapsed() < Duration::from_secs(1),
                    "the member stayed a zombie of the daemon for a second"
                );
            }
            None => break,
            _ => {}
        }
        assert!(Instant::now() < deadline, "the member still exists");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A daemon started by a parent that ignores SIGCHLD (which exec keeps) still reads each hook's exit:
/// otherwise the kernel reaps hooks itself, and an exit 2 reads as a hook that could not be waited for
/// (with `on_failure = "ignore"`, the refusal lost).
#[test]
fn a_daemon_started_with_sigchld_ignored_still_hears_an_exit_2() {
    use std::os::unix::process::CommandExt;
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"no\"\ncommand = \"echo 'stderr says no' >&2; exit 2\"\non_failure = \"ignore\"\n",
    );
    let d = Daemon::start_with(sb, |command| {
        // SAFETY: signal() with SIG_IGN is async-signal-safe and installs no code.
        unsafe {
            command.pre_exec(|| {
                nix::sys::signal::signal(
                    nix::sys::signal::Signal::SIGCHLD,
                    nix::sys::signal::SigHandler::SigIgn,
                )
                .map(|_| ())
                .map_err(std::io::Error::from)
            });
        }
    });
    for _ in 0..3 {
        let r = d.fire("PreToolUse", bash_event());
        assert_eq!(r["refused"], true, "{r}");
        assert_eq!(r["reason"], "stderr says no", "{r}");
        assert_eq!(hook(&r, "no")["exit"], 2, "{r}");
    }
}

/// An `argv` hook whose script has no `#!` line is run by `/bin/sh`, as `execvp` and every shell run
/// it, whether named by its path or found by name in the daemon's `PATH`: its refusal is heard, where
/// the hook used to fail to start ("exec format error") and be let through under `on_failure = "ignore"`.
#[test]
fn an_argv_script_without_a_hash_bang_runs_and_its_refusal_is_heard() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    fs::create_dir(sb.p("bin")).unwrap();
    let script = sb.p("bin/plain-guard");
    fs::write(&script, "echo \"$1 is not allowed\" >&2\nexit 2\n").unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    sb.settings(&format!(
        "[[hooks.PreToolUse]]\nname = \"by-path\"\nargv = [\"{}\", \"path\"]\n\n\
         [[hooks.PreToolUse]]\nname = \"by-name\"\nargv = [\"plain-guard\", \"name\"]\n",
        script.display()
    ));
    let bin = sb.p("bin");
    let d = Daemon::start_with(sb, move |command| {
        let path = std::env::var("PATH").unwrap_or_default();
        command.env("PATH", format!("{}:{path}", bin.display()));
    });
    let r = d.fire("PreToolUse", bash_event());
    assert_eq!(r["refused"], true, "{r}");
    assert_eq!(r["reason"], "path is not allowed", "{r}");
    for name in ["by-path", "by-name"] {
        assert_eq!(hook(&r, name)["outcome"], "refused", "{r}");
        assert_eq!(hook(&r, name)["exit"], 2, "{r}");
    }
}

/// Found in the second outside attack: an `argv` hook whose `#!` interpreter is itself a script
/// without `#!`. The kernel cannot run the interpreter (ENOEXEC), and the script was run by `/bin/sh` as a
/// script without `#!` is, its `#!` line a comment: the guard meant for its interpreter ran as a shell
/// script that said nothing, under `on_failure = "refuse"` too. Now it fails to start, saying why, and
/// `on_failure` decides.
#[test]
fn an_argv_script_whose_interpreter_is_a_script_without_a_hash_bang_fails_to_start() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let interpreter = sb.p("policy-interp");
    fs::write(&interpreter, "echo \"$@\" >&2\nexit 2\n").unwrap();
    fs::set_permissions(&interpreter, fs::Permissions::from_mode(0o755)).unwrap();
    let script = sb.p("guard");
    fs::write(
        &script,
        format!(
            "#!{}\n# the policy, for its interpreter\nexit 0\n",
            interpreter.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    sb.settings(&format!(
        "[[hooks.PreToolUse]]\nname = \"guard\"\nargv = [\"{}\"]\non_failure = \"refuse\"\n",
        script.display()
    ));
    let d = Daemon::start(sb);
    let r = d.fire("PreToolUse", bash_event());
    assert_eq!(r["refused"], true, "a refusal lost: {r}");
    let reason = r["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("hook guard failed: could not start: "),
        "{r}"
    );
    let error = hook(&r, "guard")["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(&format!(
            "its interpreter {:?} is not a program the kernel can run: it has no #! line",
            interpreter.display().to_string()
        )),
        "{r}"
    );
}
