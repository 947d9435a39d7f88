//! `background = true` through the real daemon: the fire is answered while the hook still runs, the
//! hook's outcome reaches the journal after, as a `background` record; a reload while it runs leaves it
//! be; at shutdown it is stopped and reaped, and its record says so; on a moment where a hook decides,
//! `background` is refused with the reason.

use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::{Value, json};

use crate::common::*;

/// A daemon with one PostToolUse hook in the background that writes its pid, waits until the test
/// makes the file `go`, then writes `done` and says something a foreground hook would be heard for.
fn gated() -> Daemon {
    let sb = Sandbox::new();
    sb.script(
        "gated.sh",
        "cat >/dev/null; echo $$ > @DIR@/pid; while [ ! -e @DIR@/go ]; do sleep 0.02; done; echo done > @DIR@/done; echo '{\"adds\": \"never read\"}'",
    );
    sb.settings(
        "[[hooks.PostToolUse]]\nname = \"shipper\"\nbackground = true\ntimeout = 60\ncommand = \"@DIR@/gated.sh\"\n",
    );
    Daemon::start(sb)
}

fn post_tool_use(session: &str) -> Value {
    json!({"session_id": session, "tool_name": "Bash", "tool_input": {"command": "make"}, "tool_response": "ok"})
}

#[test]
fn a_background_hooks_fire_answers_before_it_ends_and_its_record_arrives_after() {
    let d = gated();
    let resp = d.fire("PostToolUse", post_tool_use("bg-1"));
    // Answered while the hook still waits for `go`: the fire did not wait for it.
    let pid = d.sb.wait_pid("pid");
    assert!(!d.sb.p("done").exists());
    assert_eq!(resp["ok"], true, "{resp}");
    assert!(hook_names(&resp).is_empty(), "{resp}");
    assert!(
        adds(&resp).is_empty(),
        "a background hook is never heard: {resp}"
    );
    let path = d.journal_file();
    wait_until(RESPONSE, "the fire's own line", || {
        journal_records(&path)
            .iter()
            .any(|l| l["kind"] == "fire" && l["session"] == "bg-1")
    });
    assert!(
        !journal_records(&path)
            .iter()
            .any(|l| l["kind"] == "background"),
        "no background record before the hook ends"
    );
    std::fs::write(d.sb.p("go"), "").unwrap();
    let mut record = None;
    wait_until(RESPONSE, "the background record", || {
        record = journal_records(&path)
            .into_iter()
            .find(|l| l["kind"] == "background" && l["session"] == "bg-1");
        record.is_some()
    });
    let record = record.unwrap();
    assert_eq!(record["moment"], "PostToolUse", "{record}");
    assert_eq!(record["tool"], "Bash", "{record}");
    assert_eq!(record["hooks"][0]["name"], "shipper", "{record}");
    assert_eq!(record["hooks"][0]["outcome"], "adds", "{record}");
    assert_eq!(record["hooks"][0]["exit"], 0, "{record}");
    assert!(record.get("cut").is_none(), "{record}");
    assert!(d.sb.p("done").exists());
    wait_until(RESPONSE, "the hook reaped", || process_gone(pid, d.pid()));
}

#[test]
fn a_reload_leaves_a_background_hook_running_and_a_shutdown_stops_and_reaps_it() {
    let mut d = gated();
    d.fire("PostToolUse", post_tool_use("bg-2"));
    let pid = d.sb.wait_pid("pid");
    // A reload while it runs: the hook goes on, on the settings it started with.
    d.sb.settings(
        "[[hooks.PostToolUse]]\nname = \"other\"\nbackground = true\ncommand = \"true\"\n",
    );
    let reloaded = d.reload();
    assert_eq!(reloaded["ok"], true, "{reloaded}");
    assert!(!process_gone(pid, d.pid()), "the reload stopped the hook");
    // A shutdown while it runs: stopped, reaped, its record written with why.
    d.signal(Signal::SIGTERM);
    let status = d.wait_exit(RESPONSE);
    assert!(status.success(), "{status}");
    assert!(process_gone(pid, d.pid()), "the hook outlived the daemon");
    assert!(!d.sb.p("done").exists());
    let record = journal_records(&d.journal_file())
        .into_iter()
        .find(|l| l["kind"] == "background" && l["session"] == "bg-2")
        .expect("the background record, written before the daemon exits");
    assert_eq!(
        record["cut"], "the daemon stopped before the hooks finished",
        "{record}"
    );
    assert!(
        d.log_text()
            .contains("hooks in the background still running at shutdown")
    );
}

#[test]
fn background_is_refused_where_a_hook_decides_with_the_reason() {
    let sb = Sandbox::new();
    sb.settings("[[hooks.PreToolUse]]\nname = \"guard\"\nbackground = true\ncommand = \"true\"\n");
    let config = sb.config();
    let out = run_hookd(
        &["check", "--config", config.to_str().unwrap()],
        None,
        Duration::from_secs(20),
    );
    assert_eq!(code(&out.status), 1);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{}:3:14: hook \"guard\": background: a hook in the background is never heard, and at PreToolUse claude-code, codex, gemini-cli, qwen-code, copilot-cli read a hook's verdict (a refusal there holds something back)",
            config.display()
        )),
        "{stderr}"
    );
    // Where no verdict is read, it is taken.
    sb.settings("[[hooks.SessionEnd]]\nbackground = true\ncommand = \"true\"\n[[hooks.Notification]]\nbackground = true\ncommand = \"true\"\n");
    let out = run_hookd(
        &["check", "--config", config.to_str().unwrap()],
        None,
        Duration::from_secs(20),
    );
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
}

/// Hooks in the background take at most half of `max_processes`: past it they are not run (their
/// record says why), and the hooks fires wait for always find a slot.
#[test]
fn hooks_in_the_background_never_take_the_slots_a_guard_waits_for() {
    let sb = Sandbox::new();
    sb.script(
        "gated.sh",
        "cat >/dev/null; echo $$ > @DIR@/pid; while [ ! -e @DIR@/go ]; do sleep 0.02; done",
    );
    sb.script("guard.sh", "cat >/dev/null; echo no >&2; exit 2");
    sb.settings(
        "[defaults]\nmax_processes = 2\n[[hooks.PostToolUse]]\nname = \"shipper\"\nbackground = true\ncommand = \"@DIR@/gated.sh\"\n[[hooks.PreToolUse]]\nname = \"guard\"\ncommand = \"@DIR@/guard.sh\"\n",
    );
    let d = Daemon::start(sb);
    d.fire("PostToolUse", post_tool_use("bg-3"));
    d.sb.wait_pid("pid");
    // The share (1 of 2) is taken: the next is not run, and says so.
    d.fire("PostToolUse", post_tool_use("bg-4"));
    let path = d.journal_file();
    let mut record = None;
    wait_until(RESPONSE, "the record of the hook not run", || {
        record = journal_records(&path)
            .into_iter()
            .find(|l| l["kind"] == "background" && l["session"] == "bg-4");
        record.is_some()
    });
    let record = record.unwrap();
    assert_eq!(record["hooks"][0]["outcome"], "failed", "{record}");
    assert!(
        record["hooks"][0]["error"]
            .as_str()
            .unwrap()
            .contains("half of max_processes"),
        "{record}"
    );
    // A guard still finds its slot at once, and refuses.
    let event = json!({"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}});
    let resp = d.fire("PreToolUse", event);
    assert_eq!(resp["refused"], true, "{resp}");
    std::fs::write(d.sb.p("go"), "").unwrap();
}
