//! `hookd log`, `hookd watch` and `hookd why`: the record read back by people and
//! programs, against a real daemon's journal and against journals written by hand (rotated files, old
//! times, lines that are not records).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::common::*;

const T: Duration = Duration::from_secs(20);

/// A daemon whose `deny` refuses every Bash call, saying why on stderr, beside a `log` hook that says
/// nothing: a refused fire has two hooks, one to blame.
fn policy_daemon() -> Daemon {
    let sb = Sandbox::new();
    sb.script(
        "deny.sh",
        "echo 'no bash here' >&2\necho 'second line' >&2\nexit 2",
    );
    sb.script("log.sh", "cat >/dev/null");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"log\"\ncommand = \"@DIR@/log.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"deny\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/deny.sh\"\n",
    );
    Daemon::start(sb)
}

fn journal_of(d: &Daemon) -> PathBuf {
    state_home_for(&d.socket).join("hookd/journal.jsonl")
}

/// Waits until the journal holds `fires` fire records (the journal's own thread writes them just after
/// the fire is answered), and returns its lines.
fn wait_for_fires(journal: &Path, fires: usize) -> Vec<String> {
    let mut lines = Vec::new();
    wait_until(
        T,
        &format!("{fires} fires in {}", journal.display()),
        || {
            let text = std::fs::read_to_string(journal).unwrap_or_default();
            lines = text.lines().map(str::to_string).collect();
            lines
                .iter()
                .filter(|l| l.contains(r#""kind":"fire""#))
                .count()
                >= fires
        },
    );
    lines
}

fn fire_as(d: &Daemon, agent: &str, session: &str, tool: &str, command: &str) -> Value {
    d.fire_req(json!({"op": "fire", "id": 1, "moment": "PreToolUse", "agent": agent,
        "event": {"session_id": session, "cwd": "/p", "tool_name": tool, "tool_input": {"command": command}}}))
}

/// `hookd ARGS` with the journal's `--journal`; its exit code, stdout, stderr.
fn hookd(args: &[&str]) -> (i32, String, String) {
    let out = run_hookd(args, None, T);
    (code(&out.status), text(&out.stdout), text(&out.stderr))
}

fn records(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect()
}

#[test]
fn a_refused_fire_is_in_the_log_with_its_reason_and_command() {
    let d = policy_daemon();
    assert_eq!(
        fire_as(&d, "claude-code", "s1", "Bash", "rm -rf ~")["refused"],
        true
    );
    assert_eq!(
        fire_as(&d, "codex", "s2", "Read", "src/main.rs")["refused"],
        false
    );
    let journal = journal_of(&d);
    let stored = wait_for_fires(&journal, 2);

    // Piped: the records as stored, byte for byte; the default journal is $XDG_STATE_HOME's.
    let mut cmd = Command::new(BIN);
    cmd.args(["log", "--refused"])
        .env("XDG_STATE_HOME", state_home_for(&d.socket));
    let out = run_with_deadline(cmd, None, T);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let refused: Vec<&String> = stored.iter().filter(|l| l.contains("rm -rf ~")).collect();
    assert_eq!(stdout, format!("{}\n", refused[0]), "{stored:?}");
    let record = &records(&stdout)[0];
    assert_eq!(record["summary"], "rm -rf ~", "{record}");
    assert_eq!(record["agent"], "claude-code", "{record}");
    assert_eq!(record["verdict"]["decision"], "refused", "{record}");
    assert_eq!(
        record["verdict"]["reason"], "no bash here\nsecond line",
        "{record}"
    );

    // Without --refused, both fires, oldest first.
    let (code, stdout, err) = hookd(&["log", "--journal", journal.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let summaries: Vec<Value> = records(&stdout)
        .iter()
        .filter(|r| r["kind"] == "fire")
        .map(|r| r["summary"].clone())
        .collect();
    assert_eq!(summaries, [json!("rm -rf ~"), json!("src/main.rs")]);
}

/// Whether `script` (util-linux) is there, to run a command on a pseudo-terminal: the table people see.
fn have_script(what: &str) -> bool {
    let script = Command::new("script")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    require(
        script,
        &format!(
            "script (util-linux), to give {what} a terminal: its table goes untested end to end"
        ),
    )
}

/// Lines read from `from` on a thread of their own, so that a test can wait for them with a deadline.
fn lines_of(from: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                return;
            }
        }
    });
    received
}

#[test]
fn on_a_terminal_the_log_is_a_table() {
    let d = policy_daemon();
    assert_eq!(
        fire_as(&d, "claude-code", "s1", "Bash", "rm -rf ~")["refused"],
        true
    );
    assert_eq!(
        fire_as(&d, "codex", "s2", "Read", "README.md")["refused"],
        false
    );
    let journal = journal_of(&d);
    wait_for_fires(&journal, 2);
    let table = |no_color: bool| {
        let mut cmd = Command::new(BIN);
        cmd.arg("log").arg("--journal").arg(&journal);
        if no_color {
            cmd.env("NO_COLOR", "1");
        }
        let out = run_on_terminal(cmd, None, T);
        assert_eq!(code(&out.status), 0, "{}", text(&out.stdout));
        text(&out.stdout)
    };
    let plain = table(true);
    assert!(!plain.contains('\x1b'), "NO_COLOR yet colour: {plain:?}");
    let lines: Vec<&str> = plain.lines().collect();
    assert!(lines[0].starts_with("TIME (UTC)  "), "{plain}");
    let refused = lines
        .iter()
        .find(|l| l.contains("Bash: rm -rf ~"))
        .unwrap_or_else(|| panic!("no row for the refusal:\n{plain}"));
    for part in [
        "claude-code",
        "PreToolUse",
        "refused",
        "no bash here second line",
    ] {
        assert!(refused.contains(part), "{part:?} not in {refused:?}");
    }
    assert!(
        lines
            .iter()
            .any(|l| l.contains("codex") && l.contains("Read: README.md")),
        "{plain}"
    );
    let coloured = table(false);
    assert!(
        coloured.contains("\x1b[1;31mrefused\x1b[0m"),
        "{coloured:?}"
    );
}

/// A fire record, written by hand.
fn fire_line(
    time: &str,
    agent: &str,
    session: &str,
    moment: &str,
    summary: &str,
    refused: bool,
) -> String {
    let decision = if refused { "refused" } else { "none" };
    json!({"v": 1, "time": time, "kind": "fire", "agent": agent, "session": session, "moment": moment,
        "summary": summary, "verdict": {"decision": decision, "refused": refused, "adds": 0},
        "hooks": [{"name": "h", "outcome": decision, "ms": 1.0}], "ms": 1.5})
    .to_string()
}

/// A journal of three files (two rotated) in a fresh folder, with a line that is not a record.
fn written_journal(sb: &Sandbox) -> PathBuf {
    let now = hookd::time::rfc3339_millis(SystemTime::now());
    let hour_ago = hookd::time::rfc3339_millis(SystemTime::now() - Duration::from_secs(3600));
    let dir = sb.p("state");
    std::fs::create_dir_all(&dir).unwrap();
    let oldest = [
        fire_line(
            "2020-01-01T00:00:00.000Z",
            "codex",
            "a",
            "PreToolUse",
            "one",
            true,
        ),
        fire_line(
            "2020-01-01T00:00:01.000Z",
            "codex",
            "a",
            "Stop",
            "two",
            false,
        ),
    ];
    let middle = [
        fire_line(&hour_ago, "claude-code", "b", "PreToolUse", "three", true),
        "{\"torn".to_string(),
    ];
    let newest = [
        fire_line(&now, "claude-code", "c", "PreToolUse", "four", false),
        fire_line(&now, "gemini-cli", "c", "Stop", "five", true),
    ];
    for (name, lines) in [
        ("journal.2.jsonl", &oldest[..]),
        ("journal.1.jsonl", &middle[..]),
        ("journal.jsonl", &newest[..]),
    ] {
        std::fs::write(dir.join(name), lines.join("\n") + "\n").unwrap();
    }
    dir.join("journal.jsonl")
}

fn summaries(args: &[&str], journal: &Path) -> Vec<String> {
    let mut all = vec!["log", "--journal", journal.to_str().unwrap()];
    all.extend_from_slice(args);
    let (code, stdout, err) = hookd(&all);
    assert_eq!(code, 0, "{args:?}: {err}");
    assert!(err.contains("skipped 1 line of"), "{args:?}: {err}");
    records(&stdout)
        .iter()
        .map(|r| r["summary"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_rotated_files_are_read_oldest_first_and_the_filters_hold() {
    let sb = Sandbox::new();
    let journal = written_journal(&sb);
    let s = |args: &[&str]| summaries(args, &journal);
    assert_eq!(s(&[]), ["one", "two", "three", "four", "five"]);
    assert_eq!(s(&["--refused"]), ["one", "three", "five"]);
    assert_eq!(s(&["--agent", "codex"]), ["one", "two"]);
    assert_eq!(s(&["--session", "c"]), ["four", "five"]);
    assert_eq!(s(&["--moment", "Stop"]), ["two", "five"]);
    assert_eq!(s(&["--moment", "Stop", "--agent", "codex"]), ["two"]);
    assert_eq!(s(&["-n", "2"]), ["four", "five"]);
    assert_eq!(s(&["--refused", "-n", "2"]), ["three", "five"]);
    assert_eq!(s(&["-n", "0"]), Vec::<String>::new());
    assert_eq!(s(&["--since", "10m"]), ["four", "five"]);
    assert_eq!(s(&["--since", "2h"]), ["three", "four", "five"]);
    assert_eq!(
        s(&["--since", "2020-01-01T00:00:00.500Z"]),
        ["two", "three", "four", "five"]
    );
    assert_eq!(
        s(&["--since", "2020-01-01T01:00:01+01:00"]),
        ["two", "three", "four", "five"]
    );

    let (code, _, err) = hookd(&[
        "log",
        "--journal",
        journal.to_str().unwrap(),
        "--since",
        "soon",
    ]);
    assert_eq!(code, 1);
    assert!(err.starts_with("hookd: --since \"soon\""), "{err}");
}

#[test]
fn a_missing_journal_is_said_and_is_no_error() {
    let sb = Sandbox::new();
    let missing = sb.p("state/hookd/journal.jsonl");
    let (code, stdout, err) = hookd(&["log", "--journal", missing.to_str().unwrap()]);
    assert_eq!((code, stdout.as_str()), (0, ""), "{err}");
    assert_eq!(
        err,
        format!("hookd: no journal yet at {}\n", missing.display())
    );
    let (code, _, err) = hookd(&["why", "--journal", missing.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no journal yet"), "{err}");
}

#[test]
fn why_shows_the_refusing_hooks_stderr() {
    let d = policy_daemon();
    assert_eq!(
        fire_as(&d, "claude-code", "s1", "Bash", "git push --force")["refused"],
        true
    );
    assert_eq!(
        fire_as(&d, "codex", "s2", "Read", "README.md")["refused"],
        false
    );
    let journal = journal_of(&d);
    let stored = wait_for_fires(&journal, 2);
    let path = journal.to_str().unwrap();

    let (code, stdout, err) = hookd(&["why", "--journal", path]);
    assert_eq!(code, 0, "{err}");
    for part in [
        "refused at ",
        "  agent    claude-code\n",
        "  session  s1\n",
        "  moment   PreToolUse\n",
        "  tool     Bash\n",
        "  asked    git push --force\n",
        "refused by deny (exit 2, ",
        "  its stderr:\n    no bash here\n    second line\n",
        "hooks (2, the fire took ",
    ] {
        assert!(stdout.contains(part), "{part:?} not in:\n{stdout}");
    }
    let hooks: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("hooks ("))
        .skip(1)
        .collect();
    assert!(
        hooks[0].starts_with("  log   nothing   exit 0"),
        "{hooks:?}"
    );
    assert!(
        hooks[1].starts_with("  deny  refused   exit 2"),
        "{hooks:?}"
    );

    let (code, stdout, _) = hookd(&["why", "--journal", path, "--json"]);
    assert_eq!(code, 0);
    let refusal = stored.iter().find(|l| l.contains("git push")).unwrap();
    assert_eq!(stdout, format!("{refusal}\n"));

    let (code, stdout, err) = hookd(&["why", "--journal", path, "--agent", "codex"]);
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert!(err.contains("no refusal for agent codex"), "{err}");
}

#[test]
fn watch_sees_a_fire_made_by_another_client() {
    let d = policy_daemon();
    let mut watch = Command::new(BIN);
    watch
        .args(["watch", "--refused", "--socket", d.socket.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    keep_home(&mut watch, &this_tests_folder());
    let mut child = watch.spawn().expect("spawning hookd watch");
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let watch = ChildGuard(child);
    let received = lines_of(stdout);
    wait_until(T, "the watcher to be counted in status", || {
        d.status()["record"]["watchers"] == 1
    });
    assert_eq!(
        fire_as(&d, "codex", "s2", "Read", "README.md")["refused"],
        false
    );
    assert_eq!(
        fire_as(&d, "claude-code", "s1", "Bash", "rm -rf /")["refused"],
        true
    );
    let line = received.recv_timeout(T).expect("a line from hookd watch");
    let record: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    assert_eq!(
        record["summary"], "rm -rf /",
        "only the refusal passes --refused: {record}"
    );
    assert_eq!(record["verdict"]["reason"], "no bash here\nsecond line");

    // The daemon stops: the watch says so and ends.
    let mut d = d;
    d.signal(nix::sys::signal::Signal::SIGTERM);
    d.wait_exit(T);
    let mut watch = watch;
    let mut status = None;
    wait_until(T, "hookd watch to end with the daemon", || {
        status = watch.0.try_wait().unwrap();
        status.is_some()
    });
    let mut said = String::new();
    std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut said).unwrap();
    assert_eq!(status.unwrap().code(), Some(0), "{said}");
    assert!(
        said.contains("the daemon on") && said.contains("stopped"),
        "{said}"
    );
    assert!(received.try_recv().is_err(), "nothing more was refused");
}

#[test]
fn watch_without_a_daemon_fails_and_says_so() {
    let sb = Sandbox::new();
    let (code, stdout, err) = hookd(&["watch", "--socket", sb.socket().to_str().unwrap()]);
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert!(err.starts_with("hookd: hookd is not running on "), "{err}");
}

#[test]
fn on_a_terminal_watch_prints_rows() {
    if !have_script("hookd watch") {
        return;
    }
    let mut d = policy_daemon();
    let line = format!("{BIN} watch --socket '{}'", d.socket.display());
    let mut script = Command::new("script");
    script
        .args(["-qec", &line, "/dev/null"])
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    keep_home(&mut script, &this_tests_folder());
    let mut child = script.spawn().expect("spawning script");
    let received = lines_of(child.stdout.take().unwrap());
    let mut watch = ChildGuard(child);
    wait_until(T, "the watcher to be counted in status", || {
        d.status()["record"]["watchers"] == 1
    });
    assert_eq!(
        fire_as(&d, "claude-code", "s1", "Bash", "rm -rf /")["refused"],
        true
    );
    let mut seen = Vec::new();
    let row = loop {
        let line = received
            .recv_timeout(T)
            .unwrap_or_else(|_| panic!("no row for the fire; seen {seen:?}"));
        let line = line.replace('\r', "");
        if line.contains("Bash: rm -rf /") {
            break line;
        }
        seen.push(line);
    };
    assert!(seen[0].starts_with("TIME (UTC)  "), "{seen:?}");
    assert!(
        row.contains("claude-code") && row.contains("refused"),
        "{row}"
    );
    assert!(!row.contains('\x1b'), "NO_COLOR yet colour: {row:?}");
    d.signal(nix::sys::signal::Signal::SIGTERM);
    d.wait_exit(T);
    wait_until(T, "hookd watch to end with the daemon", || {
        watch.0.try_wait().unwrap().is_some()
    });
}

/// Texts of every kind a JSON string escapes or keeps as they are, from a client and from a refusing
/// hook's stderr: the journal's lines (written by hand, not by serde) are whole JSON, read back by
/// `hookd log` as stored, each text as it was sent, and each line is what serde writes of the record.
#[test]
fn odd_texts_reach_the_journal_and_the_log_as_they_were_sent() {
    let sb = Sandbox::new();
    sb.script(
        "deny.sh",
        "printf 'tab\\there \"quoted\" back\\\\slash \\001\\037 \\177 é 中 😀 \\342\\200\\250 end' >&2\nexit 2",
    );
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"deny \\\"odd\\\" \\\\ é\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/deny.sh\"\n",
    );
    let d = Daemon::start(sb);
    let controls: String = (1u8..0x20)
        .filter(|&b| b != b'\n')
        .map(char::from)
        .collect();
    let command = format!(
        "echo \"{controls}\" '\\' \u{7f} é中😀\u{2028}\u{2029}\u{feff} {}",
        "x".repeat(50)
    );
    let session = format!("s \"1\" \\ {controls}\n second line");
    let cwd = "/p/é/中/😀/\"q\"/\\b";
    let reply = d.fire_req(
        json!({"op": "fire", "id": 1, "moment": "PreToolUse", "agent": "claude-code",
        "event": {"session_id": session, "cwd": cwd, "tool_name": "Bash",
            "agent_tool_name": "shell \"x\"", "tool_input": {"command": command}}}),
    );
    assert_eq!(reply["refused"], true, "{reply}");
    let journal = journal_of(&d);
    let stored = wait_for_fires(&journal, 1);
    let line = stored
        .iter()
        .find(|l| l.contains(r#""kind":"fire""#))
        .expect("the fire's line");
    let record: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    assert_eq!(record["summary"], command.as_str(), "{line}");
    assert_eq!(record["session"], session.as_str(), "{line}");
    assert_eq!(record["cwd"], cwd, "{line}");
    assert_eq!(record["agent_tool"], "shell \"x\"", "{line}");
    assert_eq!(record["hooks"][0]["name"], "deny \"odd\" \\ é", "{line}");
    assert_eq!(
        record["hooks"][0]["stderr"],
        "tab\there \"quoted\" back\\slash \u{1}\u{1f} \u{7f} é 中 😀 \u{2028} end",
        "{line}"
    );
    // What serde writes of the record read back is the line as stored, byte for byte.
    let typed: hookd::record::Record = serde_json::from_str(line).unwrap();
    assert_eq!(&serde_json::to_string(&typed).unwrap(), line);

    let (code, stdout, err) = hookd(&["log", "--journal", journal.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let logged: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains(r#""kind":"fire""#))
        .collect();
    assert_eq!(logged, [line.as_str()], "the log gives the line as stored");
}
