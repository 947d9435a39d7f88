//! Attacks on `hookd-relay`, the relay's hand-read command line, what setup writes, the
//! reaper's delay, as a careless user, a buggy agent, a hostile local user and a buggy hook would make
//! them. Each test names what fell and was fixed, or what held and must go on holding.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::common::*;

/// A safety net for one run (never a speed assertion).
const T: Duration = Duration::from_secs(30);

/// `program` (`words` first: `["relay"]` for hookd) with `args`, `input` on stdin, its spool in `state`.
fn run(program: &str, words: &[&str], args: &[&str], input: &str, state: &Path) -> Said {
    relay_said(program, words, args, input, state, T)
}

/// The same call through `hookd relay` and `hookd-relay`, which must answer alike: that answer.
fn alike(args: &[&str], input: &str, state: &Path) -> Said {
    let hookd = run(BIN, &["relay"], args, input, state);
    let program = run(RELAY_BIN, &[], args, input, state);
    assert_eq!(
        hookd, program,
        "hookd relay and hookd-relay differ on {args:?}"
    );
    program
}

const RM: &str = r#"{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/tmp","tool_name":"Bash","tool_input":{"command":"rm -rf /"}}"#;
const STOP: &str =
    r#"{"hook_event_name":"Stop","session_id":"s","cwd":"/tmp","stop_hook_active":false}"#;

// ---- the command line ------------------------------------------------------------------------------

#[test]
fn a_wrong_command_line_that_asks_for_fail_closed_still_refuses() {
    // Fell: every usage error exited 1, which every agent but Copilot reads as a hook that failed, and
    // goes on. `--socket $SOCKET --fail-closed` with $SOCKET empty, `--agent claude`, `--timeout 0`: a
    // relay set up to refuse when it cannot decide let every tool call through, in both programs.
    let sb = Sandbox::new();
    let state = sb.p("state");
    let socket = sb.p("nobody.sock");
    let socket = socket.to_str().unwrap();
    for args in [
        &["--agent", "claude-code", "--socket", "--fail-closed"][..],
        &["--agent", "claude", "--socket", socket, "--fail-closed"],
        &[
            "--agent",
            "codex",
            "--socket",
            socket,
            "--fail-closed",
            "--timeout",
            "0",
        ],
        &[
            "--agent",
            "codex",
            "--socket",
            socket,
            "--fail-closed",
            "--timeout",
            "soon",
        ],
        &["--agent", "codex", "--socket", socket, "--fail_closed"],
        &["--agent", "codex", "--socket", socket, "--fail-closed=yes"],
        &["--agent", "codex", "--fail-closed", "--fail-closed"],
        &["--fail-closed", "--", "--agent", "codex"],
        &["--agent=--x", "--fail-closed"],
    ] {
        let refused = alike(args, RM, &state);
        assert_eq!(refused.code, 2, "{args:?}: {refused:?}");
        assert!(
            refused.stderr.contains("hookd could not answer"),
            "{args:?}: {refused:?}"
        );
        // A Stop is let through, as with the daemon down: refusing it would keep the agent working.
        let stop = alike(args, STOP, &state);
        assert_eq!(stop.code, 0, "{args:?}: {stop:?}");
        assert!(
            stop.stderr.contains("letting the Stop through"),
            "{args:?}: {stop:?}"
        );
    }
    // Without --fail-closed a mistake is still exit 1: fail-open, said on stderr.
    let open = alike(&["--agent", "codex", "--socket"], RM, &state);
    assert_eq!(open.code, 1, "{open:?}");
    let open = alike(&["--agent", "claude"], RM, &state);
    assert_eq!(open.code, 1, "{open:?}");
}

#[test]
fn odd_command_lines_mean_the_same_to_both_programs() {
    // Held: the fast path gives up on whatever clap might read otherwise, so the two programs (whose
    // fast paths are the same code but whose fallbacks were written twice) answer alike.
    let sb = Sandbox::new();
    let state = sb.p("state");
    let socket = sb.p("nobody.sock");
    let socket = socket.to_str().unwrap();
    let long = "a".repeat(100_000);
    for args in [
        &["--agent", "codex", "--socket", socket][..],
        &["--agent=codex", "--socket", socket, "--fail-closed"],
        &["--socket", socket, "--agent", "codex", "--agent", "codex"],
        &["--socket", socket, "--agent", "-"],
        &["--socket", socket, "--agent", "codex", "--"],
        &["--socket", socket, "--agent", "codex", "stray"],
        &["--socket", socket, "--agent", "codex", "--timeout", "1e400"],
        &["--socket", socket, "--agent", "codex", "--timeout", "NaN"],
        &["--socket", socket, "--agent", "codex", "--timeout", "+3"],
        &["--socket", socket, "--agent", "codex", "--timeout=-1"],
        &[
            "--socket",
            socket,
            "--agent",
            "copilot-cli",
            "--event",
            "preToolUse",
        ],
        &[
            "--socket",
            socket,
            "--agent",
            "copilot-cli",
            "--event=preToolUse",
            "--fail-closed",
        ],
        &["--socket", socket, "--agent", &long],
        &["--socket", &long, "--agent", "codex", "--fail-closed"],
        &["--socket", socket, "--agent", "codex", "--http"],
        &["--socket", socket, "-h"],
    ] {
        alike(args, RM, &state);
    }
}

#[test]
fn a_non_utf8_socket_is_read_alike() {
    // Held: a word that is not UTF-8 is left to clap, which takes it as a path.
    use std::os::unix::ffi::OsStrExt;
    let sb = Sandbox::new();
    let socket = sb.path().join(std::ffi::OsStr::from_bytes(b"s\xff.sock"));
    let state = sb.p("state");
    let mut said = Vec::new();
    for (program, words) in [(BIN, &["relay"][..]), (RELAY_BIN, &[])] {
        let mut command = Command::new(program);
        command
            .args(words)
            .args(["--agent", "claude-code", "--fail-closed", "--socket"])
            .arg(&socket)
            .env("XDG_STATE_HOME", &state);
        let out = run_with_deadline(command, Some(RM), T);
        said.push((code(&out.status), text(&out.stdout)));
    }
    assert_eq!(said[0], said[1]);
    assert!(said[0].1.contains("hookd is not running"), "{said:?}");
}

// ---- the answers -----------------------------------------------------------------------------------

/// Every captured hook input, as (agent, --event for Copilot's native inputs, text), the file's name
/// first.
pub(crate) fn fixtures() -> Vec<(String, String, Option<String>, String)> {
    let mut found = Vec::new();
    let roots = [
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents"),
        PathBuf::from("/work/shared/fixtures/agents"),
    ];
    for root in roots {
        let Ok(agents) = fs::read_dir(&root) else {
            continue;
        };
        for agent in agents.flatten() {
            let name = agent.file_name().to_string_lossy().to_string();
            let Ok(files) = fs::read_dir(agent.path()) else {
                continue;
            };
            for file in files.flatten() {
                let file_name = file.file_name().to_string_lossy().to_string();
                if !file_name.ends_with(".json") {
                    continue;
                }
                let event = file_name
                    .strip_prefix("native-")
                    .map(|rest| rest.trim_end_matches(".json").to_string());
                let input = fs::read_to_string(file.path()).unwrap();
                found.push((file_name, name.clone(), event, input));
            }
        }
    }
    assert!(found.len() >= 40, "too few fixtures: {}", found.len());
    found
}

/// The relay's arguments for one fixture.
pub(crate) fn fixture_args<'a>(
    agent: &'a str,
    event: &'a Option<String>,
    socket: &'a str,
) -> Vec<&'a str> {
    let mut args = vec!["--agent", agent, "--socket", socket];
    if let Some(event) = event {
        args.extend(["--event", event]);
    }
    args
}

#[test]
fn every_captured_input_is_answered_alike_by_a_daemon_that_refuses() {
    // Held. Every moment refused, with context added: both programs, every agent's real input.
    let d = Daemon::with_scripts(
        &[("no.sh", "cat >/dev/null\necho 'not today' >&2\nexit 2")],
        "[[hooks.PreToolUse]]\nname = \"no-tool\"\ncommand = \"@DIR@/no.sh\"\n\n\
         [[hooks.UserPromptSubmit]]\nname = \"no-prompt\"\ncommand = \"@DIR@/no.sh\"\n\n\
         [[hooks.PermissionRequest]]\nname = \"no-permission\"\ncommand = \"@DIR@/no.sh\"\n\n\
         [[hooks.Stop]]\nname = \"no-stop\"\ncommand = \"@DIR@/no.sh\"\n",
    );
    let socket = d.socket.to_str().unwrap().to_string();
    let state = d.sb.p("state");
    for (_, agent, event, input) in fixtures() {
        let args = fixture_args(&agent, &event, &socket);
        alike(&args, &input, &state);
        let mut closed = args.clone();
        closed.push("--fail-closed");
        alike(&closed, &input, &state);
    }
}

#[test]
fn every_captured_input_is_answered_alike_with_no_daemon_or_a_bad_one() {
    // Held: the daemon down, answering garbage, answering half a line then closing, and silent past
    // --timeout; fail-open and --fail-closed; every agent's real input, then empty and huge inputs.
    let sb = Sandbox::new();
    let state = sb.p("state");
    let down = sb.p("down.sock");
    // Each agent's tool call, for the stand-ins (every input is tried with the daemon down).
    let mut cases: Vec<(String, Option<String>, String)> = Vec::new();
    let mut calls = Vec::new();
    for (file, agent, event, input) in fixtures() {
        if ["PreToolUse-1", "BeforeTool", "native-preToolUse"]
            .iter()
            .any(|call| file.starts_with(call))
        {
            calls.push((agent.clone(), event.clone(), input.clone()));
        }
        cases.push((agent, event, input));
    }
    cases.push(("claude-code".into(), None, String::new()));
    cases.push(("codex".into(), None, "{".into()));
    cases.push((
        "claude-code".into(),
        None,
        format!(
            r#"{{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{{"command":"{}"}}}}"#,
            "x".repeat(12 << 20)
        ),
    ));
    for (agent, event, input) in &cases {
        for closed in [false, true] {
            let mut args = fixture_args(agent, event, down.to_str().unwrap());
            if closed {
                args.push("--fail-closed");
            }
            alike(&args, input, &state);
        }
    }
    // Stand-in daemons: each connection answered `answer` (None: never answered) after its line.
    for answer in [
        Some("garbage\n"),
        Some("{\"id\":1,\"ok\":true}\n"),
        Some("{\"id\":1,\"refu"),
        Some("\n"),
        None,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("hookd.sock");
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let serving = std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let mut line = String::new();
                if BufReader::new(&stream).read_line(&mut line).is_err() || line == "stop\n" {
                    break;
                }
                match answer {
                    Some(answer) => {
                        let _ = (&stream).write_all(answer.as_bytes());
                    }
                    None => held.push(stream),
                }
            }
        });
        let socket_arg = socket.to_str().unwrap();
        for (agent, event, input) in &calls {
            for closed in [false, true] {
                let mut args = fixture_args(agent, event, socket_arg);
                args.extend(["--timeout", "0.3"]);
                if closed {
                    args.push("--fail-closed");
                }
                alike(&args, input, &state);
            }
        }
        let mut stop = std::os::unix::net::UnixStream::connect(&socket).unwrap();
        stop.write_all(b"stop\n").unwrap();
        serving.join().unwrap();
    }
}

// ---- what setup and --print-settings write ----------------------------------------------------------

/// `hookd` copied into `dir` (created), returned as its path.
fn hookd_in(dir: &Path) -> String {
    fs::create_dir_all(dir).unwrap();
    let hookd = dir.join("hookd");
    fs::copy(BIN, &hookd).unwrap();
    hookd.to_str().unwrap().to_string()
}

/// The relay command `hookd` writes for Claude Code with `--fail-closed`.
fn written_relay(hookd: &str, state: &Path) -> String {
    let said = run(
        hookd,
        &["relay"],
        &["--print-settings", "claude-code", "--fail-closed"],
        "",
        state,
    );
    assert_eq!(said.code, 0, "{said:?}");
    let settings: serde_json::Value = serde_json::from_str(&said.stdout).unwrap();
    settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Runs a command line as the agent does, through `sh -c`, `input` on stdin.
fn as_the_agent_runs(command: &str, input: &str, state: &Path) -> Said {
    run("sh", &["-c", command], &[], input, state)
}

#[test]
fn hookd_linked_or_copied_as_hookd_relay_is_the_relay() {
    // Fell: `ln -s hookd hookd-relay` (or a copy) beside hookd was written into the settings, and ran
    // hookd with `--agent claude-code --fail-closed`: a usage error, exit 1, on every tool call; the
    // agent went on unwatched, the refusal asked for lost.
    let sb = Sandbox::new();
    let state = sb.p("state");
    let socket = sb.p("nobody.sock");
    for how in ["symlink", "copy", "hard link"] {
        let dir = sb.p(&how.replace(' ', "-"));
        let hookd = hookd_in(&dir);
        let relay = dir.join("hookd-relay");
        match how {
            "symlink" => std::os::unix::fs::symlink("hookd", &relay).unwrap(),
            "copy" => drop(fs::copy(&hookd, &relay).unwrap()),
            _ => fs::hard_link(&hookd, &relay).unwrap(),
        }
        let command = written_relay(&hookd, &state);
        assert!(
            command.starts_with(relay.to_str().unwrap()),
            "{how}: {command}"
        );
        let command = format!("{command} --socket {}", socket.display());
        let said = as_the_agent_runs(&command, RM, &state);
        assert_eq!(said.code, 0, "{how}: {said:?}");
        assert!(
            said.stdout.contains("hookd is not running"),
            "{how}: {said:?}"
        );
        let real = run(
            RELAY_BIN,
            &[],
            &[
                "--agent",
                "claude-code",
                "--fail-closed",
                "--socket",
                socket.to_str().unwrap(),
            ],
            RM,
            &state,
        );
        assert_eq!(said, real, "{how}");
    }
}

#[test]
fn a_relay_program_someone_else_could_have_put_or_change_is_not_written() {
    // Fell: any file named hookd-relay with an x bit, beside hookd, went into the agents' settings, to
    // run on every tool call with its input. In a sticky shared folder another user cannot touch hookd
    // but can create hookd-relay beside it; a group- or world-writable one anyone could change. Now
    // those, and a directory, fall back to `hookd relay` (the same relay, only slower).
    let sb = Sandbox::new();
    let state = sb.p("state");
    for (name, mode) in [("world", 0o757), ("group", 0o775), ("plain-file", 0o644)] {
        let dir = sb.p(name);
        let hookd = hookd_in(&dir);
        let relay = dir.join("hookd-relay");
        fs::copy(RELAY_BIN, &relay).unwrap();
        fs::set_permissions(&relay, fs::Permissions::from_mode(mode)).unwrap();
        assert_eq!(
            written_relay(&hookd, &state),
            format!("{hookd} relay --agent claude-code --fail-closed"),
            "{name}"
        );
    }
    let dir = sb.p("directory");
    let hookd = hookd_in(&dir);
    fs::create_dir(dir.join("hookd-relay")).unwrap();
    assert!(written_relay(&hookd, &state).starts_with(&format!("{hookd} relay")));
    // The control: installed as cargo installs it, it is written.
    let dir = sb.p("installed");
    let hookd = hookd_in(&dir);
    fs::copy(RELAY_BIN, dir.join("hookd-relay")).unwrap();
    fs::set_permissions(dir.join("hookd-relay"), fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(
        written_relay(&hookd, &state),
        format!(
            "{} --agent claude-code --fail-closed",
            dir.join("hookd-relay").display()
        )
    );
    // Another user's file, or a link another user made to ours.
    if require_root("chown to another user") {
        let dir = sb.p("theirs");
        let hookd = hookd_in(&dir);
        let relay = dir.join("hookd-relay");
        fs::copy(RELAY_BIN, &relay).unwrap();
        fs::set_permissions(&relay, fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::chown(&relay, Some(NOBODY), Some(NOBODY)).unwrap();
        assert!(written_relay(&hookd, &state).starts_with(&format!("{hookd} relay")));
        let dir = sb.p("their-link");
        let hookd = hookd_in(&dir);
        fs::copy(RELAY_BIN, dir.join("real-relay")).unwrap();
        fs::set_permissions(dir.join("real-relay"), fs::Permissions::from_mode(0o755)).unwrap();
        let link = dir.join("hookd-relay");
        std::os::unix::fs::symlink("real-relay", &link).unwrap();
        std::os::unix::fs::lchown(&link, Some(NOBODY), Some(NOBODY)).unwrap();
        assert!(written_relay(&hookd, &state).starts_with(&format!("{hookd} relay")));
    }
}

/// `hookd setup claude-code --file FILE` (more `args`) with `hookd`; must succeed.
fn setup(hookd: &str, file: &Path, args: &[&str], state: &Path) -> Said {
    let mut all = vec!["claude-code", "--file", file.to_str().unwrap()];
    all.extend(args);
    let said = run(hookd, &["setup"], &all, "", state);
    assert_eq!(said.code, 0, "{said:?}");
    said
}

/// The commands at each moment of a Claude Code settings file.
fn commands_at(file: &Path, moment: &str) -> Vec<String> {
    let settings: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(file).unwrap()).unwrap();
    settings["hooks"][moment]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|group| group["hooks"].as_array().cloned().unwrap_or_default())
        .filter_map(|hook| hook["command"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn setup_from_hookd_with_and_without_its_relay_program_replaces_and_undoes() {
    // Held: setup from a hookd without hookd-relay, then from one with it, then without again: one
    // relay entry per moment each time, the user's hooks kept, and --undo gives back the user's file.
    let sb = Sandbox::new();
    let state = sb.p("state");
    let alone = hookd_in(&sb.p("alone"));
    let with = hookd_in(&sb.p("with"));
    let relay = sb.p("with/hookd-relay");
    fs::copy(RELAY_BIN, &relay).unwrap();
    fs::set_permissions(&relay, fs::Permissions::from_mode(0o755)).unwrap();
    let file = sb.p("settings.json");
    let mine = r#"{"theme": "dark", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./mine.sh"}]}]}}"#;
    fs::write(&file, mine).unwrap();
    for (hookd, fail_closed) in [
        (&alone, false),
        (&with, true),
        (&alone, true),
        (&with, false),
    ] {
        let args: &[&str] = if fail_closed { &["--fail-closed"] } else { &[] };
        setup(hookd, &file, args, &state);
        let commands = commands_at(&file, "PreToolUse");
        let ours: Vec<&String> = commands.iter().filter(|c| *c != "./mine.sh").collect();
        assert_eq!(ours.len(), 1, "{hookd}: {commands:?}");
        assert!(commands.contains(&"./mine.sh".to_string()), "{commands:?}");
        assert_eq!(ours[0].contains("--fail-closed"), fail_closed, "{ours:?}");
        let program = if hookd == &with {
            format!("{} --agent", relay.display())
        } else {
            format!("{alone} relay --agent")
        };
        assert!(ours[0].starts_with(&program), "{ours:?}");
        assert_eq!(commands_at(&file, "Stop").len(), 1);
    }
    setup(&alone, &file, &["--undo"], &state);
    assert_eq!(fs::read_to_string(&file).unwrap(), mine);
}

#[test]
fn import_leaves_out_hookd_relay_entries_and_keeps_the_users_own() {
    // Held: a settings file set up with hookd-relay, imported, gives the user's hooks and not hookd's
    // own relay (which, run as a hookd hook, would fire hookd from inside itself).
    let sb = Sandbox::new();
    let file = sb.p("settings.json");
    fs::write(
        &file,
        format!(
            r#"{{"hooks": {{"PreToolUse": [{{"matcher": "*", "hooks": [{{"type": "command", "command": "'{RELAY_BIN}' --agent claude-code --fail-closed"}}]}}, {{"matcher": "Bash", "hooks": [{{"type": "command", "command": "./mine.sh"}}]}}],
            "Stop": [{{"hooks": [{{"type": "command", "command": "HOOKD_SOCKET=/x hookd-relay --agent claude-code"}}]}}]}}}}"#
        ),
    )
    .unwrap();
    let out = run_hookd(
        &["import", file.to_str().unwrap(), "--agent", "claude-code"],
        None,
        T,
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("./mine.sh"), "{stdout}");
    let converted: Vec<&str> = stdout.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(
        !converted.iter().any(|l| l.contains("hookd-relay")),
        "{stdout}"
    );
    assert_eq!(
        stdout.matches("runs `hookd relay` already").count(),
        2,
        "{stdout}\n{stderr}"
    );
}

// ---- the reaper --------------------------------------------------------------------------------------

#[test]
fn a_burst_of_hooks_that_leave_escapees_leaves_nothing_behind() {
    // Held: with the sweep 20 ms after a SIGCHLD, a burst of hooks each leaving a process of its own
    // session (setsid, double fork), one that lives and one that dies at once, ends with every escapee
    // stopped and reaped: no process left, no zombie child of the daemon.
    // Each hook waits until its escapees have written their pids, so that its group's stop (when it
    // exits) does not catch them before they leave it; the third is a double fork, its parent a
    // subshell the hook waits for.
    let d = Daemon::with_scripts(
        &[(
            "leave.sh",
            "cat >/dev/null\n\
             me=$$\n\
             setsid sh -c \"echo \\$\\$ > @DIR@/t.$me.a; mv @DIR@/t.$me.a @DIR@/esc.$me.a; exec sleep 300\" >/dev/null 2>&1 &\n\
             setsid sh -c \"echo \\$\\$ > @DIR@/t.$me.b; mv @DIR@/t.$me.b @DIR@/esc.$me.b; exit 0\" >/dev/null 2>&1 &\n\
             (setsid sleep 300 >/dev/null 2>&1 & echo $! > @DIR@/t.$me.c; mv @DIR@/t.$me.c @DIR@/esc.$me.c)\n\
             until [ -e @DIR@/esc.$me.a ] && [ -e @DIR@/esc.$me.b ] && [ -e @DIR@/esc.$me.c ]; do sleep 0.01; done",
        )],
        "[[hooks.PreToolUse]]\nname = \"leave\"\ncommand = \"@DIR@/leave.sh\"\n",
    );
    let socket = d.socket.to_str().unwrap().to_string();
    let state = d.sb.p("state");
    let relays: Vec<_> = (0..24)
        .map(|_| {
            let socket = socket.clone();
            let state = state.clone();
            std::thread::spawn(move || {
                run(
                    RELAY_BIN,
                    &[],
                    &["--agent", "claude-code", "--socket", &socket],
                    RM,
                    &state,
                )
            })
        })
        .collect();
    for relay in relays {
        let said = relay.join().unwrap();
        assert_eq!(said.code, 0, "{said:?}");
    }
    let pids = |sb: &Sandbox| -> Vec<i32> {
        fs::read_dir(sb.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("esc."))
            .filter_map(|e| fs::read_to_string(e.path()).ok()?.trim().parse().ok())
            .collect()
    };
    assert_eq!(
        pids(&d.sb).len(),
        24 * 3,
        "every hook waited for its escapees"
    );
    wait_until(RESPONSE, "every escapee gone and reaped", || {
        pids(&d.sb)
            .into_iter()
            .all(|pid| process_gone(pid, d.pid()))
    });
    wait_until(RESPONSE, "no zombie child of the daemon", || {
        !all_pids()
            .into_iter()
            .any(|p| matches!(proc_stat(p), Some(('Z', ppid)) if ppid == d.pid() as i32))
    });
}
