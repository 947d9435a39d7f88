//! `hookd-relay-lite` (`lite/`), the relay with no libc, which pipes the call to the daemon's `relay`
//! request and hands anything else to `hookd-relay` beside it: held to `hookd relay`'s answers, byte for
//! byte, for every captured input of every agent, a daemon that refuses, none at all, one that hangs,
//! and the inputs and command lines it does not carry itself.

use std::path::Path;
use std::time::Duration;

use crate::attack_relay::{fixture_args, fixtures};
use crate::common::*;

/// A safety net for one run (never a speed assertion).
const T: Duration = Duration::from_secs(30);

/// The lite relay, installed beside `hookd` and `hookd-relay` (`common::hookd_installed_with_lite`).
fn lite() -> &'static str {
    lite_relay()
}

/// `hookd relay` and `hookd-relay-lite` answer `args` and `input` alike; the lite one's answer.
fn alike(args: &[&str], input: &str, state: &Path) -> Said {
    let relay = relay_said(BIN, &["relay"], args, input, state, T);
    let lite = relay_said(lite(), &[], args, input, state, T);
    assert_eq!(relay, lite, "{args:?}, {}", cut(input));
    lite
}

fn cut(input: &str) -> &str {
    &input[..input.floor_char_boundary(300)]
}

#[test]
fn every_captured_input_is_answered_as_hookd_relay_answers_it() {
    let d = refusing_daemon();
    let socket = d.socket.to_str().unwrap().to_string();
    let state = d.sb.p("state");
    let mut refused = 0;
    for (_, agent, event, input) in fixtures() {
        let args = fixture_args(&agent, &event, &socket);
        let said = alike(&args, &input, &state);
        refused += usize::from(format!("{}{}", said.stdout, said.stderr).contains("not today"));
        let mut closed = args.clone();
        closed.push("--fail-closed");
        alike(&closed, &input, &state);
    }
    assert!(refused >= 10, "only {refused} inputs were refused");
}

#[test]
fn the_call_is_carried_by_the_daemons_relay_request() {
    // Not handed over: the daemon's record says the fire came through the relay request, and the lite
    // relay never started hookd-relay (which would have fired it again).
    let d = refusing_daemon();
    let socket = d.socket.to_str().unwrap().to_string();
    let state = d.sb.p("state");
    let input = fixture("claude-code", "PreToolUse-1.json");
    let folder = Path::new(lite()).parent().unwrap().to_path_buf();
    // A folder with the lite relay and nothing beside it: a hand-over would fail, and say so.
    let alone = d.sb.p("alone");
    std::fs::create_dir_all(&alone).unwrap();
    let lone = alone.join("hookd-relay-lite");
    std::fs::copy(folder.join("hookd-relay-lite"), &lone).unwrap();
    let args = [
        "--agent",
        "claude-code",
        "--socket",
        socket.as_str(),
        "--fail-closed",
    ];
    let relay = relay_said(BIN, &["relay"], &args, &input, &state, T);
    let lone_said = relay_said(lone.to_str().unwrap(), &[], &args, &input, &state, T);
    assert_eq!(relay, lone_said);
    assert!(lone_said.stdout.contains("not today"), "{lone_said:?}");
}

#[test]
fn with_no_daemon_a_hung_one_or_an_old_one_the_relay_answers() {
    let sb = Sandbox::new();
    let state = sb.p("state");
    let input = fixture("claude-code", "PreToolUse-1.json");
    let down = sb.p("down.sock");
    for closed in [false, true] {
        let args = relay_words("claude-code", down.to_str().unwrap(), &[], closed);
        alike(&args, &input, &state);
    }
    // A daemon that takes the request and never answers: both answer as for a silent daemon, the
    // relay after its wait, the lite one a grace later; neither asks it twice.
    let hung = refusing_daemon();
    let socket = hung.socket.to_str().unwrap().to_string();
    hung.signal(nix::sys::signal::Signal::SIGSTOP);
    for closed in [false, true] {
        let args = relay_words("claude-code", &socket, &["--timeout", "0.3"], closed);
        let said = alike(&args, &input, &state);
        let told = format!("{}{}", said.stdout, said.stderr);
        let expected = if closed {
            "hookd is not running"
        } else {
            "did not answer in time"
        };
        assert!(told.contains(expected), "{said:?}");
    }
    // A large request the hung daemon does not read: the lite relay gives up on sending it by the same
    // deadline, and the relay answers as for a silent daemon.
    let large = format!(
        r#"{{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{{"command":"ls {}"}}}}"#,
        "x".repeat(900 << 10)
    );
    let args = [
        "--agent",
        "claude-code",
        "--socket",
        socket.as_str(),
        "--timeout",
        "0.3",
        "--fail-closed",
    ];
    let said = alike(&args, &large, &state);
    assert!(said.stdout.contains("hookd is not running"), "{said:?}");
    hung.signal(nix::sys::signal::Signal::SIGCONT);
    // A daemon that knows no `relay` request (an older one, here a stand-in that refuses it and
    // refuses every fire): the lite relay hands the call over, and the relay's fire is answered.
    let old = sb.p("old.sock");
    let listener = std::os::unix::net::UnixListener::bind(&old).unwrap();
    let serving = std::thread::spawn(move || {
        use std::io::{BufRead, BufReader, Write};
        for stream in listener.incoming() {
            let Ok(stream) = stream else { break };
            let mut line = String::new();
            if BufReader::new(&stream).read_line(&mut line).is_err() || line == "stop\n" {
                break;
            }
            let answer = if line.contains("\"op\":\"relay\"") {
                "{\"id\":1,\"ok\":false,\"error\":{\"kind\":\"bad_request\",\"message\":\"unknown op \\\"relay\\\"\"}}\n"
            } else {
                "{\"id\":1,\"ok\":true,\"refused\":true,\"reason\":\"old says no\",\"adds\":[],\"hooks\":[]}\n"
            };
            let _ = (&stream).write_all(answer.as_bytes());
        }
    });
    let args = ["--agent", "claude-code", "--socket", old.to_str().unwrap()];
    let said = alike(&args, &input, &state);
    assert!(said.stdout.contains("old says no"), "{said:?}");
    let mut stop = std::os::unix::net::UnixStream::connect(&old).unwrap();
    std::io::Write::write_all(&mut stop, b"stop\n").unwrap();
    serving.join().unwrap();
}

/// A stand-in daemon on `socket` that reads each connection's request line and answers `answer` (or
/// closes without a word when `None`), counting the requests it was sent; `stop` ends it.
fn stand_in(
    socket: &Path,
    answer: Option<&'static str>,
) -> (std::thread::JoinHandle<usize>, std::path::PathBuf) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::os::unix::net::UnixListener::bind(socket).unwrap();
    let serving = std::thread::spawn(move || {
        let mut requests = 0;
        for stream in listener.incoming() {
            let Ok(stream) = stream else { break };
            let mut line = String::new();
            if BufReader::new(&stream).read_line(&mut line).is_err() || line == "stop\n" {
                break;
            }
            requests += 1;
            if let Some(answer) = answer {
                let _ = (&stream).write_all(answer.as_bytes());
            }
        }
        requests
    });
    (serving, socket.to_path_buf())
}

fn stop(stand_in: (std::thread::JoinHandle<usize>, std::path::PathBuf)) -> usize {
    let mut stop = std::os::unix::net::UnixStream::connect(&stand_in.1).unwrap();
    std::io::Write::write_all(&mut stop, b"stop\n").unwrap();
    stand_in.0.join().unwrap()
}

#[test]
fn a_daemon_that_took_the_request_is_never_asked_twice() {
    // It may have fired the hooks: closed without an answer, an answer past reading, or one cut short,
    // the lite relay hands the call over as unanswered, and the relay answers without asking again.
    let sb = Sandbox::new();
    let state = sb.p("state");
    let input = fixture("claude-code", "PreToolUse-1.json");
    for (name, answer) in [
        ("closed", None),
        ("garbage", Some("garbage\n")),
        (
            "internal",
            Some("{\"id\":1,\"ok\":false,\"error\":{\"kind\":\"internal\",\"message\":\"x\"}}\n"),
        ),
        (
            "cut",
            Some("{\"id\":1,\"ok\":true,\"exit\":2,\"stdout\":\"\",\"std"),
        ),
    ] {
        let socket = sb.p(&format!("{name}.sock"));
        let daemon = stand_in(&socket, answer);
        for closed in [false, true] {
            let args = relay_words("claude-code", socket.to_str().unwrap(), &[], closed);
            let said = relay_said(lite(), &[], &args, &input, &state, T);
            // Refused with --fail-closed (the reason on stderr or in the agent's JSON), let through
            // otherwise, as the relay answers a daemon that could not answer.
            let told = format!("{}{}", said.stdout, said.stderr);
            assert_eq!(
                told.contains("hookd could not answer"),
                closed,
                "{name}: {said:?}"
            );
            assert!(
                told.contains("letting the agent go on") != closed,
                "{name}: {said:?}"
            );
        }
        assert_eq!(stop(daemon), 2, "{name}: each call asked the daemon once");
    }
}

#[test]
fn a_daemon_that_hangs_up_mid_request_or_an_agent_that_closed_stdout_do_not_kill_it() {
    // A peer that closes while a large request is being sent: no SIGPIPE, the call answered.
    let sb = Sandbox::new();
    let state = sb.p("state");
    let socket = sb.p("hangs-up.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let serving = std::thread::spawn(move || {
        use std::io::Read;
        for stream in listener.incoming().take(2) {
            let mut stream = stream.unwrap();
            let mut head = [0u8; 10];
            let _ = stream.read_exact(&mut head);
        }
    });
    let big = format!(
        r#"{{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{{"command":"rm -rf / {}"}}}}"#,
        "x".repeat(900 << 10)
    );
    for closed in [false, true] {
        let args = relay_words("claude-code", socket.to_str().unwrap(), &[], closed);
        let said = relay_said(lite(), &[], &args, &big, &state, T);
        assert_eq!(said.code, 0, "{said:?}");
        let told = format!("{}{}", said.stdout, said.stderr);
        assert_eq!(told.contains("hookd could not answer"), closed, "{said:?}");
    }
    serving.join().unwrap();
    // stdout closed by the agent: the answer is not sent to the daemon in its place, and the exit status
    // and what is said are the relay's (the refusal on stderr, exit 2).
    let d = refusing_daemon();
    let mut statuses = Vec::new();
    for (program, words) in [(BIN, &["relay"][..]), (lite(), &[][..])] {
        use std::os::unix::process::CommandExt;
        let mut command = std::process::Command::new(program);
        command
            .args(words)
            .args([
                "--agent",
                "claude-code",
                "--fail-closed",
                "--socket",
                d.socket.to_str().unwrap(),
            ])
            .env("XDG_STATE_HOME", &state);
        // SAFETY: close is async-signal-safe.
        unsafe {
            command.pre_exec(|| {
                nix::libc::close(1);
                Ok(())
            });
        }
        let out = run_with_deadline(command, Some(&fixture("codex", "PreToolUse-1.json")), T);
        statuses.push((code(&out.status), text(&out.stderr)));
    }
    assert_eq!(statuses[0], statuses[1]);
}

#[test]
fn inputs_and_command_lines_it_does_not_carry_are_the_relays() {
    let d = refusing_daemon();
    let socket = d.socket.to_str().unwrap().to_string();
    let state = d.sb.p("state");
    let rm = |padding: usize| {
        format!(
            r#"{{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{{"command":"rm -rf / {}"}}}}"#,
            "x".repeat(padding)
        )
    };
    // Past the request's 1 MiB, and past the relay's 64 MiB: the relay reads them from the memfd.
    for size in [(1 << 20) + 10, 65 << 20] {
        let said = alike(
            &["--agent", "claude-code", "--socket", &socket],
            &rm(size),
            &state,
        );
        assert!(
            !said.stdout.is_empty() || !said.stderr.is_empty(),
            "{said:?}"
        );
    }
    // Control characters, quotes and backslashes, and text past ASCII, carried in the request.
    let awkward = r#"{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"rm -rf \"/tmp/a b\" \\ \u0001\u001f é 🦀 \t"}}"#;
    alike(
        &["--agent", "claude-code", "--socket", &socket],
        awkward,
        &state,
    );
    // Words it leaves to the relay, and the ones it reads itself in another spelling.
    for args in [
        vec!["--help"],
        vec!["--agent", "claude", "--socket", &socket],
        vec!["--agent=codex", "--socket", &socket],
        vec!["--agent", "codex", "--socket", &socket, "--timeout", "1e1"],
        vec![
            "--agent",
            "codex",
            "--socket",
            &socket,
            "--timeout=2.5",
            "--fail-closed",
        ],
        vec!["--agent", "codex", "--socket", &socket, "--timeout", "0"],
        vec!["--agent", "codex", "--agent", "codex", "--socket", &socket],
        vec![
            "--agent",
            "codex",
            "--socket",
            &socket,
            "--fail-closed",
            "--bogus",
        ],
        vec![
            "--agent",
            "copilot-cli",
            "--event",
            "preToolUse",
            "--socket",
            &socket,
        ],
    ] {
        alike(&args, &rm(0), &state);
    }
    // The socket from the environment, as the relay finds it ($HOOKD_SOCKET is left out by the tests'
    // runner): $XDG_RUNTIME_DIR/hookd/hookd.sock, a link to the daemon's. With nobody there, both would
    // look on in /run/user/$UID and /tmp/hookd-$UID, the user's own: that is tested in a mount namespace
    // of the test's own (relay_reach::without_xdg_runtime_dir_every_client_finds_the_daemon).
    let runtime = d.sb.p("xdg");
    std::fs::create_dir_all(runtime.join("hookd")).unwrap();
    std::os::unix::fs::symlink(&d.socket, runtime.join("hookd/hookd.sock")).unwrap();
    let mut said = Vec::new();
    for (program, words) in [(BIN, &["relay"][..]), (lite(), &[][..])] {
        let mut command = std::process::Command::new(program);
        command
            .args(words)
            .args(["--agent", "claude-code"])
            .env("XDG_STATE_HOME", &state)
            .env_remove("HOOKD_SOCKET")
            .env("XDG_RUNTIME_DIR", &runtime);
        let out = run_with_deadline(command, Some(&rm(0)), T);
        said.push((code(&out.status), text(&out.stdout), text(&out.stderr)));
    }
    assert_eq!(said[0], said[1], "XDG_RUNTIME_DIR={}", runtime.display());
    assert!(said[1].1.contains("not today"), "{said:?}");
}

#[test]
fn print_settings_writes_the_lite_relay_where_it_and_hookd_relay_are_installed() {
    let sb = Sandbox::new();
    let state = sb.p("state");
    let printed = |dir: &Path, with_relay: bool| {
        std::fs::create_dir_all(dir).unwrap();
        let hookd = dir.join("hookd");
        std::fs::copy(BIN, &hookd).unwrap();
        std::fs::copy(lite(), dir.join("hookd-relay-lite")).unwrap();
        if with_relay {
            std::fs::copy(RELAY_BIN, dir.join("hookd-relay")).unwrap();
        }
        let said = relay_said(
            hookd.to_str().unwrap(),
            &["relay"],
            &["--print-settings", "claude-code"],
            "",
            &state,
            T,
        );
        assert_eq!(said.code, 0, "{said:?}");
        (hookd, said.stdout)
    };
    let both = sb.p("both");
    let (_, written) = printed(&both, true);
    let lite_command = format!(
        "{} --agent claude-code",
        both.join("hookd-relay-lite").display()
    );
    assert!(written.contains(&lite_command), "{written}");
    // A lite relay that is a link to one with no hookd-relay beside it could hand nothing over either
    // (it looks beside its own file): hookd-relay is written.
    let linked = sb.p("linked");
    std::fs::create_dir_all(&linked).unwrap();
    let lone = sb.p("lone");
    std::fs::create_dir_all(&lone).unwrap();
    std::fs::copy(lite(), lone.join("hookd-relay-lite")).unwrap();
    std::fs::copy(BIN, linked.join("hookd")).unwrap();
    std::fs::copy(RELAY_BIN, linked.join("hookd-relay")).unwrap();
    std::os::unix::fs::symlink(
        lone.join("hookd-relay-lite"),
        linked.join("hookd-relay-lite"),
    )
    .unwrap();
    let said = relay_said(
        linked.join("hookd").to_str().unwrap(),
        &["relay"],
        &["--print-settings", "claude-code"],
        "",
        &state,
        T,
    );
    let relay_command = format!(
        "{} --agent claude-code",
        linked.join("hookd-relay").display()
    );
    assert!(said.stdout.contains(&relay_command), "{said:?}");
    // Without hookd-relay beside it, the lite relay could hand nothing over: hookd relay is written.
    let (hookd, written) = printed(&sb.p("alone"), false);
    assert!(
        written.contains(&format!("{} relay --agent claude-code", hookd.display())),
        "{written}"
    );
}

/// `hookd setup` hints at the lite relay where it writes another, and says nothing of it where it
/// writes the lite one: `cargo install --path .` does not install it, and the hint is how a user learns.
#[test]
fn setup_hints_at_the_lite_relay_where_it_writes_another() {
    let sb = Sandbox::new();
    // hookd copied into `dir` with `programs` beside it, then `hookd setup claude-code ARGS` run with a
    // home of its own and `env`: what it said on stderr, and the settings it wrote.
    let setup = |dir: &Path, programs: &[(&str, &str)], args: &[&str], env: &[(&str, &Path)]| {
        std::fs::create_dir_all(dir).unwrap();
        let hookd = dir.join("hookd");
        if !hookd.exists() {
            std::fs::copy(BIN, &hookd).unwrap();
            for (name, from) in programs {
                std::fs::copy(from, dir.join(name)).unwrap();
            }
        }
        let home = sb.p(&format!("home-{}", dir.display()).replace('/', "_"));
        std::fs::create_dir_all(&home).unwrap();
        let mut command = std::process::Command::new(&hookd);
        // The daemon setup asks to reload, and the registry of setups, in the test's own folders.
        command
            .args(["setup", "claude-code"])
            .args(args)
            .env("HOME", &home)
            .env("XDG_RUNTIME_DIR", home.join(".run"))
            .env("XDG_STATE_HOME", home.join(".state"));
        for name in ["CLAUDE_CONFIG_DIR", "CARGO_HOME", "CARGO_INSTALL_ROOT"] {
            command.env_remove(name);
        }
        for (name, value) in env {
            command.env(name, value);
        }
        let out = run_with_deadline(command, None, T);
        assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
        let settings =
            std::fs::read_to_string(home.join(".claude/settings.json")).unwrap_or_default();
        // No daemon runs here: that warning is setup's own, tested in cli_setup.rs.
        let stderr: String = text(&out.stderr)
            .lines()
            .filter(|line| !line.starts_with("warning: no hookd answers"))
            .map(|line| format!("{line}\n"))
            .collect();
        (stderr, settings)
    };
    let all = sb.p("all");
    let (stderr, settings) = setup(
        &all,
        &[("hookd-relay", RELAY_BIN), ("hookd-relay-lite", lite())],
        &[],
        &[],
    );
    assert!(
        settings.contains("hookd-relay-lite --agent claude-code"),
        "{settings}"
    );
    assert_eq!(stderr, "");

    // A checkout's build folder: the programs missing are built and copied in, then setup run again.
    for (folder, programs, started, steps) in [
        (
            "relay",
            &[("hookd-relay", RELAY_BIN)][..],
            "hookd-relay",
            "To put hookd-relay-lite there, from hookd's source: cargo build --release --manifest-path lite/Cargo.toml && cp lite/target/release/hookd-relay-lite DIR; then run hookd setup claude-code again",
        ),
        (
            "alone",
            &[][..],
            "hookd relay",
            "To put hookd-relay and hookd-relay-lite there, from hookd's source: cargo build --release && cp target/release/hookd-relay DIR and cargo build --release --manifest-path lite/Cargo.toml && cp lite/target/release/hookd-relay-lite DIR; then run hookd setup claude-code again",
        ),
    ] {
        let dir = sb.p(folder);
        let (stderr, settings) = setup(&dir, programs, &[], &[]);
        assert!(!settings.contains("hookd-relay-lite"), "{settings}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!(
                "hint: Claude Code will start {started} on every tool call; hookd-relay-lite"
            )),
            "{stderr}"
        );
        assert!(
            stderr.contains(&format!("are in {}, beside hookd", dir.display())),
            "{stderr}"
        );
        assert!(
            stderr.ends_with(&format!(
                "{}\n",
                steps.replace("DIR", &dir.display().to_string())
            )),
            "{stderr}"
        );
        // Neither a dry run nor an undo says it.
        let (stderr, _) = setup(&dir, programs, &["--dry-run"], &[]);
        assert!(!stderr.contains("hint:"), "{stderr}");
        let (stderr, settings) = setup(&dir, programs, &["--undo"], &[]);
        assert_eq!((stderr.as_str(), settings.contains("hookd")), ("", false));
    }

    // A bin folder: cargo install into its root, named unless it is cargo's own; and the setup to run
    // again is the one given, its socket and --fail-closed kept (a plain one would fail open).
    let root = sb.p("prefix");
    let bin = root.join("bin");
    let socket = sb.p("my socket");
    let (stderr, settings) = setup(
        &bin,
        &[("hookd-relay", RELAY_BIN)],
        &["--socket", socket.to_str().unwrap(), "--fail-closed"],
        &[],
    );
    assert!(settings.contains("--fail-closed"), "{settings}");
    assert!(
        stderr.ends_with(&format!(
            "from hookd's source: cargo install --path lite --root {}; then run hookd setup claude-code --socket '{}' --fail-closed again\n",
            root.display(),
            socket.display()
        )),
        "{stderr}"
    );
    let (stderr, _) = setup(&bin, &[], &[], &[("CARGO_INSTALL_ROOT", &root)]);
    assert!(
        stderr.ends_with(
            "from hookd's source: cargo install --path lite; then run hookd setup claude-code again\n"
        ),
        "{stderr}"
    );
}

#[test]
fn a_stray_unanswered_variable_changes_nothing() {
    // Only the three values the lite relay sets count: an empty or stray export of the variable must not
    // make every call read as unanswered (let through, fail-open).
    let d = refusing_daemon();
    let state = d.sb.p("state");
    let input = fixture("claude-code", "PreToolUse-1.json");
    let socket = d.socket.to_str().unwrap();
    for value in ["", "0", "1", "Silent"] {
        for (program, words) in [(BIN, &["relay"][..]), (lite(), &[][..])] {
            let mut command = std::process::Command::new(program);
            command
                .args(words)
                .args(relay_words("claude-code", socket, &[], false))
                .env("XDG_STATE_HOME", &state)
                .env("HOOKD_RELAY_UNANSWERED", value);
            let out = run_with_deadline(command, Some(&input), T);
            assert!(
                text(&out.stdout).contains("not today"),
                "{program} with HOOKD_RELAY_UNANSWERED={value:?}: {}{}",
                text(&out.stdout),
                text(&out.stderr)
            );
        }
    }
}
