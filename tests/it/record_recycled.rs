//! The journal's records filled again (a written record goes back to the fires' threads, its strings
//! kept): fires of every shape, from several connections at once, in rounds that each wait for the
//! last round's lines (so that later rounds' records are ones written before), across a reload. Each
//! fire has exactly one line, and its line says what that fire said and nothing any other fire said:
//! no hooks, verdict reason, error, agent or tool kept from the record's previous fire, no empty
//! strings for what the event did not say, and the digest of the settings it was decided on.

use std::collections::{BTreeSet, HashMap};
use std::fs;

use serde_json::{Value, json};

use crate::common::*;

/// The shapes of fire: (the request's moment, agent, event), by shape number.
fn request(shape: usize, session: &str, id: usize) -> Value {
    match shape {
        // Refused by the hook: hooks, a verdict with a reason, a tool, a summary, an agent.
        0 => json!({"op": "fire", "id": id, "moment": "PreToolUse", "agent": "codex",
            "event": {"session_id": session, "cwd": "/tmp/a", "tool_name": "Bash",
                "agent_tool_name": "shell", "tool_input": {"command": "rm -rf ~"}}}),
        // No hook at the moment, no agent, nothing but the session: nothing else on the line.
        1 => json!({"op": "fire", "id": id, "moment": "Stop", "event": {"session_id": session}}),
        // An unknown moment: an error, no hooks.
        2 => {
            json!({"op": "fire", "id": id, "moment": "NoSuchMoment", "event": {"session_id": session}})
        }
        // Allowed by the hook, with context added, another agent, no agent tool.
        _ => json!({"op": "fire", "id": id, "moment": "PreToolUse", "agent": "gemini-cli",
            "event": {"session_id": session, "tool_name": "Read", "tool_input": {"file_path": "/etc/x"}}}),
    }
}

const SHAPES: usize = 4;

/// What a line of each shape must say besides `v`, `time`, `kind`, `generation`, `digest`, `source`,
/// `ms`: its keys, exactly.
fn keys_of(shape: usize) -> BTreeSet<&'static str> {
    let base = [
        "v",
        "time",
        "kind",
        "generation",
        "digest",
        "source",
        "ms",
        "session",
        "moment",
    ];
    let more: &[&str] = match shape {
        0 => &[
            "agent",
            "cwd",
            "tool",
            "agent_tool",
            "summary",
            "verdict",
            "hooks",
        ],
        1 => &["verdict"],
        2 => &["error"],
        _ => &["agent", "tool", "summary", "verdict", "hooks"],
    };
    base.iter().chain(more).copied().collect()
}

#[test]
fn every_fire_has_one_line_with_its_own_fields_when_records_are_filled_again() {
    let sb = Sandbox::new();
    sb.script("guard.sh", crate::record_daemon::GUARD);
    let settings = |comment: &str| {
        format!(
            "# {comment}\n[[hooks.PreToolUse]]\nname = \"guard\"\ncommand = \"@DIR@/guard.sh\"\n"
        )
    };
    sb.settings(&settings("first"));
    let d = Daemon::start(sb);
    let path = d.journal_file();
    const ROUNDS: usize = 6;
    const THREADS: usize = 4;
    const EACH: usize = 12;
    let mut fired = 0;
    for round in 0..ROUNDS {
        if round == ROUNDS / 2 {
            d.sb.settings(&settings("second"));
            let answer = d.reload();
            assert_eq!(answer["ok"], true, "{answer}");
        }
        std::thread::scope(|scope| {
            for thread in 0..THREADS {
                let socket = d.socket.clone();
                scope.spawn(move || {
                    let mut c = Client::connect(&socket);
                    for i in 0..EACH {
                        let shape = (i + thread + round) % SHAPES;
                        let session = format!("r{round}-t{thread}-i{i}-s{shape}");
                        let answer = c.request(&request(shape, &session, i));
                        assert_eq!(answer["id"], i, "{answer}");
                    }
                });
            }
        });
        fired += THREADS * EACH;
        wait_until(RESPONSE, "the round's lines", || {
            journal_records(&path)
                .iter()
                .filter(|l| l["kind"] == "fire")
                .count()
                >= fired
        });
    }
    let lines: Vec<Value> = journal_records(&path)
        .into_iter()
        .filter(|l| l["kind"] == "fire")
        .collect();
    assert_eq!(lines.len(), fired, "one line per fire");
    let mut seen = HashMap::new();
    let mut digests: HashMap<u64, String> = HashMap::new();
    for line in &lines {
        let session = line["session"].as_str().unwrap_or_else(|| panic!("{line}"));
        assert!(
            seen.insert(session.to_string(), ()).is_none(),
            "written twice: {line}"
        );
        let shape: usize = session.rsplit("-s").next().unwrap().parse().unwrap();
        let keys: BTreeSet<&str> = line
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, keys_of(shape), "{line}");
        let (moment, agent) = match shape {
            0 => ("PreToolUse", Some("codex")),
            1 => ("Stop", None),
            2 => ("NoSuchMoment", None),
            _ => ("PreToolUse", Some("gemini-cli")),
        };
        assert_eq!(line["moment"], moment, "{line}");
        assert_eq!(line["agent"].as_str(), agent, "{line}");
        match shape {
            0 => {
                assert_eq!(line["verdict"]["refused"], true, "{line}");
                assert_eq!(line["summary"], "rm -rf ~", "{line}");
                assert_eq!(line["agent_tool"], "shell", "{line}");
                assert_eq!(line["cwd"], "/tmp/a", "{line}");
                assert_eq!(line["hooks"].as_array().unwrap().len(), 1, "{line}");
            }
            1 => assert_eq!(line["verdict"]["refused"], false, "{line}"),
            2 => assert!(
                line["error"].as_str().unwrap().contains("NoSuchMoment"),
                "{line}"
            ),
            _ => {
                assert_eq!(line["verdict"]["refused"], false, "{line}");
                assert!(line["verdict"].get("reason").is_none(), "{line}");
                assert_eq!(line["summary"], "/etc/x", "{line}");
                assert_eq!(line["tool"], "Read", "{line}");
                let hook = &line["hooks"][0];
                assert!(hook.get("stderr").is_none(), "{line}");
            }
        }
        // One digest per generation, another for each.
        let generation = line["generation"].as_u64().unwrap();
        let digest = line["digest"].as_str().unwrap().to_string();
        let kept = digests.entry(generation).or_insert_with(|| digest.clone());
        assert_eq!(*kept, digest, "{line}");
        let round: usize = session[1..session.find('-').unwrap()].parse().unwrap();
        assert_eq!(
            generation > 1,
            round >= ROUNDS / 2,
            "a fire after the reload on the new settings, before it on the old: {line}"
        );
    }
    let distinct: BTreeSet<&String> = digests.values().collect();
    assert_eq!(distinct.len(), digests.len(), "{digests:?}");
    assert_eq!(digests.len(), 2, "{digests:?}");
}

/// Thousands of fires pipelined on one connection into a journal that rotates every MiB, the daemon
/// stopped (SIGTERM) as soon as the last is answered: every fire has exactly one whole line across the
/// journal's files, each with its own command, none held back by the stop.
#[test]
fn fires_answered_before_a_stop_have_one_line_each_across_rotations() {
    let sb = Sandbox::new();
    sb.settings("[record]\nfile_size_mib = 1\nfiles = 8\n");
    let mut d = Daemon::start(sb);
    let n: usize = 6000;
    // About 500 bytes a line: 6000 lines fill three files and part of a fourth.
    let pad = "y".repeat(280);
    let stream = std::os::unix::net::UnixStream::connect(&d.socket).expect("connecting");
    let mut writer = stream.try_clone().expect("cloning the stream");
    let mut c = Client::from_stream(stream);
    let requests: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let mut line =
                serde_json::to_vec(&json!({"op": "fire", "id": i, "moment": "PreToolUse",
                "agent": if i.is_multiple_of(2) { json!("codex") } else { Value::Null },
                "event": {"session_id": format!("stop-{i}"), "tool_name": "Bash",
                    "tool_input": {"command": format!("echo {i} {pad}")}}}))
                .unwrap();
            line.push(b'\n');
            line
        })
        .collect();
    let sending = std::thread::spawn(move || {
        use std::io::Write;
        for line in requests {
            writer.write_all(&line).expect("sending a fire");
        }
    });
    for _ in 0..n {
        let answer = c.recv();
        assert!(answer["id"].is_u64(), "{answer}");
    }
    sending.join().unwrap();
    d.signal(nix::sys::signal::Signal::SIGTERM);
    d.wait_exit(RESPONSE);
    let dir = state_home_for(&d.socket).join("hookd");
    let mut lines = Vec::new();
    let mut files = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("journal") && name.ends_with(".jsonl") {
            files += 1;
            let text = fs::read_to_string(&path).unwrap();
            assert!(
                text.is_empty() || text.ends_with('\n'),
                "a cut line in {name}"
            );
            assert!(text.len() <= 1 << 20, "{name} is {} bytes", text.len());
            lines.extend(journal_records(&path));
        }
    }
    assert!(files >= 3, "the journal rotated: {files} files");
    let mut seen = vec![0u32; n];
    for line in lines.iter().filter(|l| l["kind"] == "fire") {
        let session = line["session"].as_str().unwrap_or_else(|| panic!("{line}"));
        let i: usize = session["stop-".len()..].parse().unwrap();
        seen[i] += 1;
        assert_eq!(
            line["summary"].as_str(),
            Some(format!("echo {i} {pad}").as_str()),
            "{line}"
        );
        assert_eq!(line.get("agent").is_some(), i.is_multiple_of(2), "{line}");
        assert!(
            line.get("hooks").is_none() && line.get("cut").is_none(),
            "{line}"
        );
    }
    let lost: Vec<usize> = (0..n).filter(|&i| seen[i] == 0).collect();
    let twice: Vec<usize> = (0..n).filter(|&i| seen[i] > 1).collect();
    assert!(
        lost.is_empty(),
        "{} fires without a line: {:?}",
        lost.len(),
        &lost[..lost.len().min(10)]
    );
    assert!(twice.is_empty(), "fires written twice: {twice:?}");
}
