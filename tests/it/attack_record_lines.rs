//! Fires' lines written on the fire's own thread while nobody watches (docs/record.md, "Nothing slows
//! down"), attacked: more moments in a tick than the fire's thread counts, fires with and without hooks
//! among reloads, fields of hundreds of kilobytes, the journal switched off and on by reloads while fires
//! come, a stop right after a burst. Each fire has its one line, in the order answered, the line the
//! journal's writer would have written, and `status` counts every fire once.

use std::fs;

use nix::sys::signal::Signal;
use serde_json::{Value, json};

use crate::common::*;

/// A fire request of `moment` for session `session`, from `/`.
fn fire_line(id: &str, moment: &str, session: &str) -> Vec<u8> {
    let mut line = serde_json::to_vec(&json!({
        "op": "fire", "id": id, "moment": moment, "agent": "claude-code",
        "event": {"session_id": session, "cwd": "/", "tool_name": "Bash", "tool_input": {"command": "ls"}}
    }))
    .unwrap();
    line.push(b'\n');
    line
}

/// The sessions of the journal's fire lines, in the journal's order.
fn fire_sessions(d: &Daemon) -> Vec<String> {
    d.journal()
        .iter()
        .filter(|r| r["kind"] == "fire")
        .map(|r| r["session"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// More moments than a tick counts on the fires' threads (64; the fires of a 65th go to the writer
/// whole), fired pipelined on one connection so that they fall in few ticks: every fire has one line,
/// and `status` counts each moment's fires exactly, none twice, none lost.
#[test]
fn fires_of_more_moments_than_a_tick_counts_each_have_one_line_and_are_counted_once() {
    let sb = Sandbox::new();
    let names: Vec<String> = (0..100).map(|n| format!("Made{n}")).collect();
    let declared: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    sb.settings(&format!("moments = [{}]\n", declared.join(", ")));
    let d = Daemon::start(sb);
    let rounds = 3;
    let mut batch = Vec::new();
    let mut sessions = Vec::new();
    for round in 0..rounds {
        for name in &names {
            let session = format!("{round}-{name}");
            batch.extend(fire_line(&session, name, &session));
            sessions.push(session);
        }
    }
    let mut client = d.connect();
    client.send_raw(&batch);
    for _ in 0..sessions.len() {
        let answer = client.recv();
        assert_eq!(answer["ok"], true, "{answer}");
        assert_eq!(answer["refused"], false, "{answer}");
    }
    let total = |status: &Value| -> u64 {
        names
            .iter()
            .map(|n| {
                status["record"]["moments"][n]["fires"]
                    .as_u64()
                    .unwrap_or(0)
            })
            .sum()
    };
    wait_until(RESPONSE, "every fire counted", || {
        total(&d.status()) >= sessions.len() as u64
    });
    let status = d.status();
    assert_eq!(total(&status), sessions.len() as u64, "{status}");
    for name in &names {
        let counts = &status["record"]["moments"][name];
        assert_eq!(counts["fires"], rounds, "{name}: {counts}");
        assert_eq!(counts["refused"], 0, "{name}: {counts}");
        assert_eq!(counts["asked"], 0, "{name}: {counts}");
    }
    let mut journaled = Vec::new();
    wait_until(RESPONSE, "every fire's line", || {
        journaled = fire_sessions(&d);
        journaled.len() >= sessions.len()
    });
    journaled.sort();
    let mut expected = sessions.clone();
    expected.sort();
    assert_eq!(journaled, expected, "each fire once");
}

/// Fires that run no hook (their lines written on their threads) and fires that run one (their records
/// handed over whole), among reloads that change the settings, on one connection one after the other:
/// the journal holds each fire once, in the order answered, and every reload's record among them.
#[test]
fn fires_with_and_without_hooks_among_reloads_are_journaled_once_each_in_the_order_answered() {
    let sb = Sandbox::new();
    sb.script("note.sh", "cat >/dev/null; echo noted");
    let settings = |n: usize| {
        format!(
            "# edit {n}\n[[hooks.PreToolUse]]\nname = \"edits\"\nmatcher = \"Edit\"\ncommand = \"$HOOKD_CONFIG_DIR/note.sh\"\n"
        )
    };
    sb.settings(&settings(0));
    let d = Daemon::start(sb);
    let mut order = Vec::new();
    for n in 0..60 {
        let session = format!("s{n}");
        let tool = if n % 3 == 0 { "Edit" } else { "Bash" };
        let event = json!({"session_id": session, "cwd": "/", "tool_name": tool, "tool_input": {"command": "ls", "file_path": "/tmp/x"}});
        let answer = d.fire("PreToolUse", event);
        assert_eq!(answer["ok"], true, "{answer}");
        assert_eq!(
            hook_names(&answer).len(),
            usize::from(tool == "Edit"),
            "{answer}"
        );
        order.push(session);
        if n % 10 == 9 {
            d.sb.settings(&settings(n));
            assert_eq!(d.reload()["ok"], true);
        }
    }
    let reloads = |records: &[Value]| records.iter().filter(|r| r["kind"] == "reload").count();
    let mut sessions = Vec::new();
    wait_until(RESPONSE, "every fire's line and every reload's", || {
        let records = d.journal();
        sessions = records
            .iter()
            .filter(|r| r["kind"] == "fire")
            .map(|r| r["session"].as_str().unwrap_or_default().to_owned())
            .collect();
        sessions.len() >= 60 && reloads(&records) >= 6
    });
    assert_eq!(sessions, order, "each fire once, in the order answered");
}

/// A field of the record replaced by a placeholder in a journal line (its `time`, the fire's `ms`).
fn without_times(line: &str) -> String {
    let time = regex::Regex::new(r#""time":"[^"]*""#).unwrap();
    let ms = regex::Regex::new(r#","ms":[0-9.eE+-]+"#).unwrap();
    ms.replace_all(&time.replace_all(line, "\"time\":\"T\""), "")
        .into_owned()
}

/// A fire whose session, folder, tool and command are hundreds of kilobytes (of two-byte characters):
/// its line is cut to the record's bounds on the fire's thread as the writer cuts it, byte for byte the
/// line of the same fire written whole while somebody watches (but for its time and duration), and the
/// watcher's line is the journal's.
#[test]
fn a_huge_fire_is_cut_on_its_thread_to_the_very_line_the_writer_writes() {
    let d = Daemon::start(Sandbox::new());
    let long = |c: &str, n: usize| c.repeat(n);
    let event = json!({
        "session_id": long("é", 60_000),
        "cwd": format!("/{}", long("d", 100_000)),
        "tool_name": format!("Bash{}", long("ü", 50_000)),
        "tool_input": {"command": format!("{}\nsecond line", long("c", 300_000))}
    });
    let unwatched = d.fire("PreToolUse", event.clone());
    assert_eq!(unwatched["ok"], true, "{unwatched}");
    let raw_lines = || -> Vec<String> {
        fs::read_to_string(d.journal_file())
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("\"kind\":\"fire\""))
            .map(str::to_owned)
            .collect()
    };
    wait_until(RESPONSE, "the first fire's line", || raw_lines().len() == 1);
    let mut watcher = d.connect();
    assert_eq!(
        watcher.request(&json!({"op": "watch", "id": "w"}))["watching"],
        true
    );
    let watched = d.fire("PreToolUse", event);
    assert_eq!(watched["ok"], true, "{watched}");
    let streamed = watcher.read_line().expect("the watched fire's line");
    let mut lines = Vec::new();
    wait_until(RESPONSE, "the second fire's line", || {
        lines = raw_lines();
        lines.len() == 2
    });
    assert_eq!(
        streamed.trim_end(),
        lines[1],
        "the watcher's line is the journal's"
    );
    for line in &lines {
        assert!(line.len() < 8 * 1024, "bounded: {} bytes", line.len());
        let record: Value = serde_json::from_str(line).unwrap();
        for field in ["session", "cwd", "tool", "summary"] {
            let text = record[field].as_str().unwrap_or_default();
            assert!(
                text.ends_with('…') && text.chars().count() <= 302,
                "{field} cut: {text:?}"
            );
        }
    }
    assert_eq!(
        without_times(&lines[0]),
        without_times(&lines[1]),
        "written on the fire's thread as the writer writes it"
    );
}

/// `[record] enabled` switched off and on again by reloads, fires coming pipelined: the fires answered
/// while it is off make nothing (no line, no count), those before and after have each their line once,
/// and are counted once.
#[test]
fn the_journal_switched_off_and_on_by_reloads_keeps_the_lines_of_fires_while_on_only() {
    let sb = Sandbox::new();
    sb.settings("# none\n");
    let d = Daemon::start(sb);
    let mut client = d.connect();
    let mut fire_burst = |from: usize, to: usize| {
        let mut batch = Vec::new();
        for n in from..to {
            batch.extend(fire_line(&n.to_string(), "PreToolUse", &format!("s{n}")));
        }
        client.send_raw(&batch);
        for _ in from..to {
            assert_eq!(client.recv()["ok"], true);
        }
    };
    let counted = || {
        d.status()["record"]["moments"]["PreToolUse"]["fires"]
            .as_u64()
            .unwrap_or(0)
    };
    fire_burst(0, 50);
    wait_until(RESPONSE, "the first fires counted", || counted() == 50);
    d.sb.settings("[record]\nenabled = false\n");
    assert_eq!(d.reload()["ok"], true);
    fire_burst(50, 100);
    d.sb.settings("# on again\n");
    assert_eq!(d.reload()["ok"], true);
    fire_burst(100, 150);
    wait_until(RESPONSE, "the fires on again counted", || counted() >= 100);
    let mut sessions = Vec::new();
    wait_until(RESPONSE, "the lines of the fires on again", || {
        sessions = fire_sessions(&d);
        sessions.len() >= 100
    });
    assert_eq!(counted(), 100, "the fires while off are not counted");
    sessions.sort();
    let mut expected: Vec<String> = (0..50).chain(100..150).map(|n| format!("s{n}")).collect();
    expected.sort();
    assert_eq!(
        sessions, expected,
        "each fire while on once, none while off"
    );
}

/// A burst of fires pipelined and SIGTERM as soon as the last is answered: every fire answered has its
/// line once the daemon has exited (pipelined fires waiting for the first lookup of their folder are
/// answered as they are decided, not in the order asked: the lines are compared as a set).
#[test]
fn a_burst_of_fires_then_sigterm_leaves_every_line() {
    let mut d = Daemon::start(Sandbox::new());
    let mut batch = Vec::new();
    for n in 0..500 {
        batch.extend(fire_line(&n.to_string(), "PreToolUse", &format!("s{n}")));
    }
    let mut client = d.connect();
    client.send_raw(&batch);
    for _ in 0..500 {
        assert_eq!(client.recv()["ok"], true);
    }
    d.signal(Signal::SIGTERM);
    assert!(d.wait_exit(RESPONSE).success());
    let mut sessions = fire_sessions(&d);
    sessions.sort();
    let mut expected: Vec<String> = (0..500).map(|n| format!("s{n}")).collect();
    expected.sort();
    assert_eq!(sessions, expected, "each fire once");
}
