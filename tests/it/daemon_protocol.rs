//! The socket protocol (contract section 9): errors and what they leave of the connection, ids (echoed
//! from bad JSON too), pipelining, hello, status, reload (with SIGHUP), and peer credentials (section 11).
//! Fires that cannot be decoded whole (too deep, or `undecidable`) fail their hooks; lone surrogates are
//! read as U+FFFD.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::time::Duration;
use std::{fs, thread};

use crate::common::*;
use nix::sys::signal::Signal;
use serde_json::{Value, json};

/// A daemon with one PreToolUse hook that adds "fine".
fn simple_daemon() -> Daemon {
    let sb = Sandbox::new();
    sb.script("fine.sh", "echo fine");
    sb.settings("[[hooks.PreToolUse]]\nname = \"fine\"\ncommand = \"@DIR@/fine.sh\"\n");
    Daemon::start(sb)
}

/// After an error, the same connection still answers a valid fire.
fn still_answers(c: &mut Client) {
    let r = c.request(
        &json!({"op": "fire", "id": "after", "moment": "PreToolUse", "event": bash_event()}),
    );
    check_fire_shape(&r);
    assert_eq!(r["id"], "after", "{r}");
    assert_eq!(adds(&r), vec!["fine"], "{r}");
}

#[test]
fn bad_json_is_answered_and_connection_stays() {
    let d = simple_daemon();
    let mut c = d.connect();
    c.send_raw(b"this is not json\n");
    let r = c.recv();
    assert_eq!(error_kind(&r), "bad_json", "{r}");
    assert!(
        r.get("id").is_none(),
        "no id can be echoed from bad JSON: {r}"
    );
    c.send_raw(b"{\"op\": \"fire\", \"id\": 3, \n");
    let r = c.recv();
    assert_eq!(error_kind(&r), "bad_json", "{r}");
    c.send_raw(b"\xff\xfe not utf-8\n");
    let r = c.recv();
    assert_eq!(error_kind(&r), "bad_json", "{r}");
    still_answers(&mut c);
}

#[test]
fn bad_json_echoes_the_id_its_head_holds() {
    let d = simple_daemon();
    let mut c = d.connect();
    for (line, id) in [
        (&b"{\"op\": \"fire\", \"id\": 3, \n"[..], json!(3)),
        (b"{\"id\":\"req-7\",\"op\":\"status\",,}\n", json!("req-7")),
        (
            b"{\"event\":{\"id\":1},\"id\":-2.5e1,\"op\":\xff}\n",
            json!(-25.0),
        ),
    ] {
        c.send_raw(line);
        let r = c.recv();
        assert_eq!(error_kind(&r), "bad_json", "{r}");
        assert!(!r["id"].is_null(), "{r}");
        assert_eq!(r["id"].as_f64(), id.as_f64(), "{r}");
        assert_eq!(r["id"].as_str(), id.as_str(), "{r}");
    }
    // An id that is an object or a list is no id to echo from a line that does not parse.
    c.send_raw(b"{\"id\":{\"a\":1},\"op\":\n");
    let r = c.recv();
    assert_eq!(error_kind(&r), "bad_json", "{r}");
    assert!(r.get("id").is_none(), "{r}");
    still_answers(&mut c);
}

/// A daemon whose PreToolUse hooks are `guard` (on_failure = "refuse") and `quiet` (the default), both
/// for Bash, and `writes`, for Write; each would let anything through if run.
fn guarded_daemon() -> Daemon {
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"guard\"\nmatcher = \"Bash\"\non_failure = \"refuse\"\ncommand = \"exit 0\"\n\n\
         [[hooks.PreToolUse]]\nname = \"quiet\"\nmatcher = \"Bash\"\ncommand = \"exit 0\"\n\n\
         [[hooks.PreToolUse]]\nname = \"writes\"\nmatcher = \"Write\"\ncommand = \"exit 0\"\n",
    );
    Daemon::start(sb)
}

/// Each hook of `resp` failed with `error`, not run; `guard` made it a refusal.
fn assert_undecided(resp: &Value, error: &str) {
    check_fire_shape(resp);
    assert_eq!(hook_names(resp), vec!["guard", "quiet"], "{resp}");
    assert_eq!(hook(resp, "guard")["outcome"], "refused", "{resp}");
    assert_eq!(hook(resp, "quiet")["outcome"], "failed", "{resp}");
    for name in ["guard", "quiet"] {
        assert_eq!(hook(resp, name)["error"], error, "{resp}");
        assert!(hook(resp, name).get("exit").is_none(), "not run: {resp}");
    }
    assert_eq!(resp["refused"], true, "{resp}");
    assert_eq!(
        resp["reason"],
        format!("hook guard failed: {error}"),
        "{resp}"
    );
}

#[test]
fn a_fire_nested_too_deep_is_decided_as_a_failure_of_its_hooks() {
    let d = guarded_daemon();
    let mut c = d.connect();
    let depth = 10_000;
    let line = format!(
        "{{\"op\":\"fire\",\"id\":\"deep\",\"moment\":\"PreToolUse\",\"agent\":\"claude-code\",\"event\":{{\"tool_name\":\"Bash\",\"tool_input\":{}{}}}}}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    c.send_raw(line.as_bytes());
    let r = c.recv();
    assert_eq!(r["id"], "deep", "{r}");
    assert_undecided(
        &r,
        "hookd could not give this hook the event: the event is nested deeper than 128 levels",
    );
    // A request that deep but no fire is bad JSON, with its id.
    let line = format!(
        "{{\"op\":\"status\",\"id\":4,\"x\":{}{}}}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    c.send_raw(line.as_bytes());
    let r = c.recv();
    assert_eq!((error_kind(&r), &r["id"]), ("bad_json", &json!(4)), "{r}");
    // The connection lives on, and a fire it can decode runs its hooks.
    let r =
        c.request(&json!({"op": "fire", "id": 5, "moment": "PreToolUse", "event": bash_event()}));
    assert_eq!(
        (r["refused"].clone(), hook(&r, "guard")["exit"].clone()),
        (json!(false), json!(0)),
        "{r}"
    );
    wait_until(RESPONSE, "the daemon to log the undecidable event", || {
        d.log_text().contains("an event hookd cannot decide")
    });
}

#[test]
fn an_undecidable_fire_fails_each_hook_it_would_have_reached() {
    let d = guarded_daemon();
    let mut c = d.connect();
    let why = "the event is 70000000 bytes, over the 64 MiB limit";
    let r = c.request(&json!({"op": "fire", "id": 1, "moment": "PreToolUse", "event": {"tool_name": "Bash"}, "undecidable": why}));
    assert_undecided(
        &r,
        &format!("hookd could not give this hook the event: {why}"),
    );
    // No hook for its tool: nothing to fail.
    let r = c.request(&json!({"op": "fire", "id": 2, "moment": "PreToolUse", "event": {"tool_name": "Read"}, "undecidable": "too big"}));
    check_fire_shape(&r);
    assert_eq!(r["refused"], false, "{r}");
    assert!(hook_names(&r).is_empty(), "{r}");
    for bad in [json!(3), json!(""), json!({"why": "x"})] {
        let r = c.request(&json!({"op": "fire", "id": 3, "moment": "PreToolUse", "event": {}, "undecidable": bad}));
        assert_eq!(
            (error_kind(&r), &r["id"]),
            ("bad_request", &json!(3)),
            "{r}"
        );
    }
}

#[test]
fn a_lone_surrogate_in_a_request_is_read_as_a_replacement_character() {
    let sb = Sandbox::new();
    sb.settings("[[hooks.PreToolUse]]\nname = \"keep\"\ncommand = \"cat > @DIR@/seen.json\"\n");
    let d = Daemon::start(sb);
    let mut c = d.connect();
    // As Node's JSON.stringify writes half an emoji; an escaped backslash before "ud800" is text.
    c.send_raw(
        br#"{"op":"fire","id":"s","moment":"PreToolUse","event":{"tool_name":"Bash","tool_input":{"command":"rm -rf / \ud83d","text":"\\ud800"}}}
"#,
    );
    let r = c.recv();
    check_fire_shape(&r);
    assert_eq!(r["id"], "s", "{r}");
    assert_eq!(hook(&r, "keep")["outcome"], "nothing", "{r}");
    let seen: Value = serde_json::from_str(&d.sb.read("seen.json")).unwrap();
    assert_eq!(seen["tool_input"]["command"], "rm -rf / \u{fffd}", "{seen}");
    assert_eq!(seen["tool_input"]["text"], "\\ud800", "{seen}");
}

#[test]
fn unknown_op_is_bad_request_and_connection_stays() {
    let d = simple_daemon();
    let mut c = d.connect();
    let r = c.request(&json!({"op": "dance", "id": "x1"}));
    assert_eq!(error_kind(&r), "bad_request", "{r}");
    assert_eq!(r["id"], "x1", "{r}");
    let r = c.request(&json!({"id": "x2"}));
    assert_eq!(error_kind(&r), "bad_request", "missing op: {r}");
    assert_eq!(r["id"], "x2", "{r}");
    still_answers(&mut c);
}

#[test]
fn missing_or_wrong_fields_are_bad_request() {
    let d = simple_daemon();
    let mut c = d.connect();
    for (i, req) in [
        json!({"op": "fire", "event": bash_event()}),
        json!({"op": "fire", "moment": "PreToolUse", "event": "not an object"}),
        json!({"op": "fire", "moment": 7, "event": {}}),
    ]
    .into_iter()
    .enumerate()
    {
        let mut req = req;
        req["id"] = json!(i);
        let r = c.request(&req);
        assert_eq!(error_kind(&r), "bad_request", "{req}: {r}");
        assert_eq!(r["id"], json!(i), "{r}");
    }
    still_answers(&mut c);
}

#[test]
fn unknown_moment_is_answered_and_connection_stays() {
    let d = simple_daemon();
    let mut c = d.connect();
    let r =
        c.request(&json!({"op": "fire", "id": 5, "moment": "PreTooluse", "event": bash_event()}));
    assert_eq!(error_kind(&r), "unknown_moment", "{r}");
    assert_eq!(r["id"], 5, "{r}");
    still_answers(&mut c);
}

#[test]
fn line_over_65_mib_is_too_large_then_closed() {
    let d = simple_daemon();
    let stream = UnixStream::connect(&d.socket).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut c = Client::from_stream(stream);
    // Written from a thread: the daemon may stop reading (and close) before it has all 66 MiB.
    let sender = thread::spawn(move || {
        use std::io::Write;
        // The limit: an event of 64 MiB, and 1 MiB for the request around it.
        let line = format!(
            "{{\"op\":\"status\",\"id\":1,\"pad\":\"{}\"}}\n",
            "x".repeat(66 * 1024 * 1024)
        );
        let _ = writer.write_all(line.as_bytes());
    });
    let r = c.recv();
    assert_eq!(error_kind(&r), "too_large", "{r}");
    c.expect_eof();
    sender.join().unwrap();
    // The daemon itself is fine.
    assert_eq!(d.status()["ok"], true);
}

#[test]
fn line_just_under_one_mib_is_accepted() {
    let d = simple_daemon();
    let mut c = d.connect();
    let pad = "x".repeat(1024 * 1024 - 200);
    let r = c.request(&json!({"op": "fire", "id": "big", "moment": "PreToolUse", "event": {"tool_name": "Bash", "pad": pad}}));
    check_fire_shape(&r);
    assert_eq!(adds(&r), vec!["fine"], "{r}");
}

#[test]
fn id_is_echoed_whatever_its_type_and_absent_without_one() {
    let d = simple_daemon();
    let mut c = d.connect();
    for id in [
        json!(42),
        json!("abc"),
        json!({"k": [1, "two"]}),
        json!(1.5),
        json!([]),
    ] {
        let r = c.request(&json!({"op": "status", "id": id}));
        assert_eq!(r["ok"], true, "{r}");
        assert_eq!(r["id"], id, "{r}");
    }
    let r = c.request(&json!({"op": "status"}));
    assert_eq!(r["ok"], true, "{r}");
    assert!(
        r.get("id").is_none(),
        "id present though the request had none: {r}"
    );
    let r = c.request(&json!({"op": "fire", "moment": "PreToolUse", "event": bash_event()}));
    check_fire_shape(&r);
    assert!(
        r.get("id").is_none(),
        "id present though the request had none: {r}"
    );
}

#[test]
fn pipelined_requests_are_matched_by_id() {
    let sb = Sandbox::new();
    sb.script(
        "which.sh",
        "ev=$(cat)\n\
         case \"$ev\" in\n\
         *'\"n\":1'*) sleep 0.5; echo one ;;\n\
         *'\"n\":2'*) echo two ;;\n\
         *) echo three ;;\n\
         esac",
    );
    sb.settings("[[hooks.PreToolUse]]\nname = \"which\"\ncommand = \"@DIR@/which.sh\"\n");
    let d = Daemon::start(sb);
    let mut c = d.connect();
    let mut batch = String::new();
    for (id, n) in [("a", 1), ("b", 2), ("c", 3)] {
        let req = json!({"op": "fire", "id": id, "moment": "PreToolUse", "event": {"tool_name": "Bash", "n": n}});
        batch.push_str(&req.to_string());
        batch.push('\n');
    }
    c.send_raw(batch.as_bytes());
    let mut got = Vec::new();
    for _ in 0..3 {
        let r = c.recv();
        check_fire_shape(&r);
        got.push(r);
    }
    let by_id = |id: &str| {
        got.iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no answer for {id}: {got:?}"))
    };
    assert_eq!(adds(by_id("a")), vec!["one"]);
    assert_eq!(adds(by_id("b")), vec!["two"]);
    assert_eq!(adds(by_id("c")), vec!["three"]);
    // Answered as they finish: the slow first one comes last.
    assert_eq!(
        got[2]["id"], "a",
        "the slow request held the others back: {got:?}"
    );
}

#[test]
fn hello_lists_unreachable_hooks() {
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"pre\"\ncommand = \"true\"\n\n\
         [[hooks.PostToolUse]]\nname = \"post\"\ncommand = \"true\"\n\n\
         [[hooks.PostToolUse]]\nname = \"post-codex\"\nagents = [\"codex\"]\ncommand = \"true\"\n\n\
         [[hooks.Stop]]\nname = \"stop\"\ncommand = \"true\"\n",
    );
    let d = Daemon::start(sb);
    let mut c = d.connect();
    let r = c.request(
        &json!({"op": "hello", "id": 2, "agent": "claude-code", "moments": ["PreToolUse", "Stop"]}),
    );
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["id"], 2, "{r}");
    assert_eq!(r["version"], "0.1.0", "{r}");
    assert_eq!(
        r["unreachable"],
        json!([{"hook": "post", "moment": "PostToolUse"}]),
        "only hooks that apply to this agent on moments it does not run: {r}"
    );
    let r = c.request(&json!({"op": "hello", "id": 3, "agent": "codex", "moments": ["PreToolUse", "PostToolUse", "Stop"]}));
    assert_eq!(r["unreachable"], json!([]), "{r}");
}

#[test]
fn status_fields() {
    let sb = Sandbox::new();
    sb.script("wait.sh", "touch @DIR@/started\nsleep 0.8");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"a\"\ncommand = \"@DIR@/wait.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"b\"\ncommand = \"true\"\n\n\
         [[hooks.Stop]]\nname = \"c\"\ncommand = \"true\"\n",
    );
    let d = Daemon::start(sb);
    let s = d.status();
    assert_eq!(s["id"], "st", "{s}");
    assert_eq!(s["version"], "0.1.0", "{s}");
    assert_eq!(s["pid"], d.pid(), "{s}");
    let config = s["config"]
        .as_str()
        .unwrap_or_else(|| panic!("config not a string: {s}"));
    assert!(
        config == d.config.to_str().unwrap()
            || config == fs::canonicalize(&d.config).unwrap().to_str().unwrap(),
        "config {config:?} is not {:?}",
        d.config
    );
    assert_eq!(s["generation"], 1, "{s}");
    assert_eq!(s["hooks"]["PreToolUse"], 2, "{s}");
    assert_eq!(s["hooks"]["Stop"], 1, "{s}");
    assert!(s["hooks"].get("PostToolUse").is_none_or(|v| v == 0), "{s}");
    let at = s["last_reload"]["at"]
        .as_str()
        .unwrap_or_else(|| panic!("last_reload.at: {s}"));
    assert!(looks_rfc3339(at), "last_reload.at {at:?} is not RFC 3339");
    assert_eq!(s["last_reload"]["ok"], true, "{s}");
    assert_eq!(s["in_flight"], 0, "{s}");
    assert!(
        s["uptime_s"].as_f64().is_some_and(|u| u >= 0.0),
        "uptime_s: {s}"
    );

    // A fire in flight shows.
    let mut c = d.connect();
    c.send(&json!({"op": "fire", "id": 1, "moment": "PreToolUse", "event": bash_event()}));
    wait_until(RESPONSE, "the hook to start", || d.sb.p("started").exists());
    let s = d.status();
    assert_eq!(s["in_flight"], 1, "{s}");
    check_fire_shape(&c.recv());
    wait_until(RESPONSE, "in_flight back to 0", || {
        d.status()["in_flight"] == 0
    });
}

/// `YYYY-MM-DDTHH:MM:SS` then a fraction and/or an offset (`Z` or `±HH:MM`).
fn looks_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| r.clone().all(|i| b.get(i).is_some_and(u8::is_ascii_digit));
    let date_time = b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && (b[10] == b'T' || b[10] == b't')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    date_time
        && (s.ends_with('Z') || s.ends_with('z') || s[19..].contains('+') || s[19..].contains('-'))
}

const FIRST: &str = "[[hooks.PreToolUse]]\nname = \"old\"\ncommand = \"echo old\"\n";
const SECOND: &str = "[[hooks.PreToolUse]]\nname = \"new\"\ncommand = \"echo new\"\n";

// The daemon also watches the settings file's folder (contract section 10): an edit of the file may be
// reloaded by the watcher as well as by the request or signal under test. The tests below count on exact
// generations only where the file did not change; after an edit they ask for "at least".

#[test]
fn reload_ok_bumps_generation_and_swaps_hooks() {
    let sb = Sandbox::new();
    sb.settings(FIRST);
    let d = Daemon::start(sb);
    assert_eq!(adds(&d.fire("PreToolUse", bash_event())), vec!["old"]);
    // Asked for, a reload makes a new generation even of an unchanged file: one per successful reload.
    let r = d.reload();
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["id"], "rl", "{r}");
    assert_eq!(r["generation"], 2, "{r}");
    assert_eq!(d.reload()["generation"], 3);
    assert_eq!(adds(&d.fire("PreToolUse", bash_event())), vec!["old"]);

    d.sb.settings(SECOND);
    let r = d.reload();
    assert_eq!(r["ok"], true, "{r}");
    let generation = r["generation"].as_u64().unwrap_or_else(|| panic!("{r}"));
    assert!(generation >= 4, "{r}");
    assert_eq!(adds(&d.fire("PreToolUse", bash_event())), vec!["new"]);
    let s = d.status();
    assert!(s["generation"].as_u64() >= Some(generation), "{s}");
    assert_eq!(s["last_reload"]["ok"], true, "{s}");
}

#[test]
fn reload_refused_keeps_old_settings() {
    let sb = Sandbox::new();
    sb.settings(FIRST);
    let d = Daemon::start(sb);
    // Line 4 holds an unknown key; line 6 an unknown moment.
    d.sb.settings(
        "[[hooks.PreToolUse]]\nname = \"new\"\ncommand = \"echo new\"\ntiemout = 3\n\n[[hooks.PreTooluse]]\ncommand = \"true\"\n",
    );
    let r = d.reload();
    assert_eq!(error_kind(&r), "invalid_settings", "{r}");
    assert_eq!(r["id"], "rl", "{r}");
    let errors = r["error"]["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("no errors array: {r}"));
    assert!(!errors.is_empty(), "{r}");
    let config = d.config.to_str().unwrap();
    for e in errors {
        let e = e
            .as_str()
            .unwrap_or_else(|| panic!("error not a string: {r}"));
        let loc = e
            .strip_prefix(config)
            .and_then(|rest| rest.strip_prefix(':'));
        let loc = loc.unwrap_or_else(|| panic!("error {e:?} does not start with {config}:"));
        let mut parts = loc.splitn(3, ':');
        let line = parts.next().unwrap();
        let col = parts.next().unwrap_or("");
        assert!(
            line.parse::<u32>().is_ok() && col.parse::<u32>().is_ok(),
            "error {e:?} is not FILE:LINE:COL: message"
        );
    }
    assert!(
        errors.iter().any(|e| e.as_str().unwrap().contains(":4:")),
        "the unknown key on line 4: {r}"
    );

    // The old settings stay.
    assert_eq!(adds(&d.fire("PreToolUse", bash_event())), vec!["old"]);
    let s = d.status();
    assert_eq!(s["generation"], 1, "{s}");
    assert_eq!(s["last_reload"]["ok"], false, "{s}");
    assert!(
        !s["last_reload"]["error"].is_null() && s["last_reload"]["error"] != "",
        "status shows no reload error: {s}"
    );

    // A later good reload works and counts on from the last good generation (by one, or by two if the
    // watcher took the new file first).
    d.sb.settings(SECOND);
    let r = d.reload();
    assert_eq!(r["ok"], true, "{r}");
    let generation = r["generation"].as_u64();
    assert!(generation == Some(2) || generation == Some(3), "{r}");
    assert_eq!(d.status()["last_reload"]["ok"], true);
    assert_eq!(adds(&d.fire("PreToolUse", bash_event())), vec!["new"]);
}

#[test]
fn reload_of_an_empty_or_deleted_file_keeps_the_settings() {
    let sb = Sandbox::new();
    sb.settings(FIRST);
    let d = Daemon::start(sb);
    // Empty (an editor half-way through a save), then gone (replaced by rename, not there yet).
    fs::write(&d.config, "").unwrap();
    let r = d.reload();
    assert_eq!(r["ok"], false, "an empty file was taken: {r}");
    assert_eq!(adds(&d.fire("PreToolUse", bash_event())), vec!["old"]);
    fs::remove_file(&d.config).unwrap();
    let r = d.reload();
    assert_eq!(r["ok"], false, "a deleted file was taken: {r}");
    assert_eq!(adds(&d.fire("PreToolUse", bash_event())), vec!["old"]);
    let s = d.status();
    assert_eq!(s["generation"], 1, "{s}");
    assert_eq!(s["last_reload"]["ok"], false, "{s}");
}

#[test]
fn sighup_reloads() {
    let sb = Sandbox::new();
    sb.settings(FIRST);
    let d = Daemon::start(sb);
    // The file unchanged, so only the signal can make generation 2.
    d.signal(Signal::SIGHUP);
    wait_until(Duration::from_secs(10), "generation 2 after SIGHUP", || {
        d.status()["generation"] == 2
    });

    d.sb.settings(SECOND);
    d.signal(Signal::SIGHUP);
    wait_until(
        Duration::from_secs(10),
        "the new hooks after SIGHUP",
        || adds(&d.fire("PreToolUse", bash_event())) == vec!["new"],
    );

    // An invalid file on SIGHUP: refused, the settings stay, status says why.
    d.sb.settings("[[hooks.PreToolUse]]\nname = \"broken\"\nargv = []\n");
    d.signal(Signal::SIGHUP);
    wait_until(
        Duration::from_secs(10),
        "status to show the failed reload",
        || d.status()["last_reload"]["ok"] == false,
    );
    let s = d.status();
    assert!(
        s["last_reload"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("argv")),
        "{s}"
    );
    assert_eq!(adds(&d.fire("PreToolUse", bash_event())), vec!["new"]);
}

#[test]
fn half_closed_client_still_gets_its_answer() {
    // Shutting down only the write side (as `nc -N` does) is not a disconnect.
    let sb = Sandbox::new();
    sb.script("slowish.sh", "sleep 0.3\necho answered");
    sb.settings("[[hooks.PreToolUse]]\nname = \"h\"\ncommand = \"@DIR@/slowish.sh\"\n");
    let d = Daemon::start(sb);
    let stream = UnixStream::connect(&d.socket).unwrap();
    let mut c = Client::from_stream(stream.try_clone().unwrap());
    c.send(&json!({"op": "fire", "id": 1, "moment": "PreToolUse", "event": bash_event()}));
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    let r = c.recv();
    check_fire_shape(&r);
    assert_eq!(adds(&r), vec!["answered"], "{r}");
}

#[test]
fn peer_of_another_uid_is_refused() {
    if !require_root("a client of another uid") {
        return;
    }
    let sb = Sandbox::new();
    sb.settings(FIRST);
    fs::set_permissions(sb.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let d = Daemon::start(sb);
    // Open the path up so that only the credential check stands between nobody and the daemon.
    d.open_to_others();

    let script = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("CONNECT_FAILED", e); sys.exit(3)
print("CONNECTED", flush=True)
s.settimeout(10)
try:
    s.sendall(b'{"op":"status","id":1}\n')
except OSError:
    pass
data = b""
try:
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    print("EOF", repr(data))
except socket.timeout:
    print("TIMEOUT", repr(data))
except ConnectionResetError:
    print("EOF", repr(data))
"#;
    let mut py = as_nobody("/usr/bin/python3");
    py.args(["-I", "-c", script]).arg(&d.socket);
    let out = run_with_deadline(py, None, Duration::from_secs(20));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("CONNECTED"),
        "nobody could not even connect (test set-up): {stdout} {}",
        text(&out.stderr)
    );
    assert!(
        stdout.contains("EOF b''"),
        "nobody's connection was not closed without an answer: {stdout}"
    );

    let mut cli = as_nobody(BIN);
    cli.args(["status", "--socket"]).arg(&d.socket);
    let out = run_with_deadline(cli, None, Duration::from_secs(20));
    assert_eq!(
        code(&out.status),
        1,
        "hookd status as nobody: {} {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        !text(&out.stdout).contains("\"pid\""),
        "nobody got a status: {}",
        text(&out.stdout)
    );

    // Root still gets in.
    assert_eq!(d.status()["ok"], true);
}
