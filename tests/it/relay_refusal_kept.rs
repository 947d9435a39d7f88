//! A refusal the relay cannot give as it was written is still given (the second attack): a
//! misspelt `--fail-closed` (or `--fail-closed` with help, or with `--print-settings` where it cannot
//! print) refuses instead of exiting 0 or 1, and an answer that cannot reach the agent on stdout (closed,
//! `/dev/full`, `/dev/null`) is refused on stderr with exit 2. Each through all three relays: `hookd
//! relay`, `hookd-relay` and `hookd-relay-lite`.

use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

use crate::common::*;

const T: Duration = Duration::from_secs(60);

/// A Claude Code tool call that a guard would refuse.
/// A call only a hook refuses (not `rm -rf ~`, which hookd's guard of itself refuses whatever the hooks
/// say: the home folder holds the agents' settings).
const RM: &str = r#"{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/tmp","tool_name":"Bash","tool_input":{"command":"rm -rf build"}}"#;

/// The three relays, each as its program and the words before its options.
fn relays() -> [(&'static str, &'static [&'static str]); 3] {
    [(BIN, &["relay"]), (RELAY_BIN, &[]), (lite_relay(), &[])]
}

/// A refusal every agent reads alike: exit 2, nothing on stdout that says otherwise, and `reason` on
/// stderr.
fn assert_refused(said: &Said, reason: &str, what: &str) {
    assert_eq!(said.code, 2, "{what}: {said:?}");
    assert!(said.stderr.contains(reason), "{what}: {said:?}");
}

#[test]
fn a_misspelt_fail_closed_refuses_instead_of_letting_every_call_through() {
    // A daemon with no hooks: a refusal here can only be the relay's, for its command line.
    let d = Daemon::with_scripts(&[], "");
    let socket = d.socket.to_str().unwrap();
    let state = d.sb.p("state");
    for (program, words) in relays() {
        // Spelt right, nothing refuses: the call goes on.
        let said = relay_said(
            program,
            words,
            &[
                "--agent",
                "claude-code",
                "--socket",
                socket,
                "--fail-closed",
            ],
            RM,
            &state,
            T,
        );
        assert_eq!((said.code, said.stdout.as_str()), (0, ""), "{said:?}");
        for spelling in [
            "--fail-close",
            "--fail-closd",
            "--fial-closed",
            "--FAIL-CLOSED",
            "\u{2014}fail-closed",
            "\u{2013}fail-closed",
            "\u{2013}\u{2013}fail-closed",
            "\u{2212}\u{2212}fail\u{2010}closed",
            "fail-closed",
        ] {
            let said = relay_said(
                program,
                words,
                &["--agent", "claude-code", "--socket", socket, spelling],
                RM,
                &state,
                T,
            );
            assert_refused(
                &said,
                "hookd could not answer",
                &format!("{program} {spelling}"),
            );
        }
        // Taken for a value (the plain form the fast paths read), the word left the relay fail-open.
        let said = relay_said(
            program,
            words,
            &[
                "--agent",
                "claude-code",
                "--socket",
                socket,
                "--event",
                "\u{2014}fail-closed",
            ],
            RM,
            &state,
            T,
        );
        assert_refused(
            &said,
            "which it does not read as --fail-closed",
            &format!("{program}: a value"),
        );
        // Help: said on stderr, and refused (it was exit 0, the help on stdout).
        for help in ["--help", "-h"] {
            let said = relay_said(
                program,
                words,
                &["--agent", "claude-code", "--fail-closed", help],
                RM,
                &state,
                T,
            );
            assert_refused(
                &said,
                "asked for its help",
                &format!("{program} --fail-closed {help}"),
            );
            assert!(said.stderr.contains("Usage"), "{said:?}");
            assert_eq!(said.stdout, "", "{said:?}");
        }
        // Without fail-closed, help is help.
        let said = relay_said(program, words, &["--help"], "", &state, T);
        assert_eq!(said.code, 0, "{said:?}");
        // --print-settings where it cannot be carried out (exit 1 before).
        let said = relay_said(
            program,
            words,
            &["--fail-closed", "--print-settings", "no-such-agent"],
            RM,
            &state,
            T,
        );
        assert_refused(
            &said,
            "hookd could not answer",
            &format!("{program} --print-settings no-such-agent"),
        );
    }
    // hookd-relay, and the lite relay handing it over, cannot print settings at all.
    for program in [RELAY_BIN, lite_relay()] {
        let said = relay_said(
            program,
            &[],
            &["--fail-closed", "--print-settings", "claude-code"],
            RM,
            &state,
            T,
        );
        assert_refused(&said, "cannot print settings", program);
    }
    // The lite relay alone, with nothing beside it to hand over to: it reads the words itself.
    let alone = d.sb.p("alone");
    std::fs::create_dir_all(&alone).unwrap();
    let lone = alone.join("hookd-relay-lite");
    std::fs::copy(lite_relay(), &lone).unwrap();
    for spelling in ["--fail-close", "\u{2014}fail-closed", "--fail-closd"] {
        let said = relay_said(
            lone.to_str().unwrap(),
            &[],
            &["--agent", "claude-code", "--socket", socket, spelling],
            RM,
            &state,
            T,
        );
        assert_refused(
            &said,
            "cannot start hookd-relay",
            &format!("the lite relay alone, {spelling}"),
        );
    }
    // hookd prints them, as asked: a person setting an agent up.
    let said = relay_said(
        BIN,
        &["relay"],
        &["--fail-closed", "--print-settings", "claude-code"],
        "",
        &state,
        T,
    );
    assert_eq!(said.code, 0, "{said:?}");
    assert!(said.stdout.contains("--fail-closed"), "{said:?}");
}

/// How a test leaves the relay's stdout.
#[derive(Debug, Clone, Copy)]
enum Stdout {
    Closed,
    Full,
    Null,
}

/// Runs `program words args` with `input` and its stdout as `stdout` says.
fn relay_without_stdout(
    program: &str,
    words: &[&str],
    args: &[&str],
    input: &str,
    state: &std::path::Path,
    stdout: Stdout,
) -> Said {
    let mut command = Command::new(program);
    command.args(words).args(args).env("XDG_STATE_HOME", state);
    // SAFETY: only open, dup2 and close, which are async-signal-safe, run between fork and exec.
    unsafe {
        command.pre_exec(move || {
            let device = match stdout {
                Stdout::Closed => None,
                Stdout::Full => Some(c"/dev/full"),
                Stdout::Null => Some(c"/dev/null"),
            };
            nix::libc::close(1);
            if let Some(device) = device {
                let fd = nix::libc::open(device.as_ptr(), nix::libc::O_WRONLY);
                if fd != 1 {
                    nix::libc::dup2(fd, 1);
                    nix::libc::close(fd);
                }
            }
            Ok(())
        });
    }
    let out = run_with_deadline(command, Some(input), T);
    Said {
        code: code(&out.status),
        stdout: text(&out.stdout),
        stderr: text(&out.stderr),
    }
}

#[test]
fn a_relay_whose_stdout_is_closed_or_full_refuses_on_stderr() {
    let d = refusing_daemon();
    let socket = d.socket.to_str().unwrap();
    let state = d.sb.p("state");
    let prompt =
        r#"{"hook_event_name":"UserPromptSubmit","session_id":"s","cwd":"/tmp","prompt":"hi"}"#;
    for (program, words) in relays() {
        for stdout in [Stdout::Closed, Stdout::Full, Stdout::Null] {
            let what = format!("{program} with stdout {stdout:?}");
            // The daemon's hook refuses: its deny on stdout would reach no one.
            let said = relay_without_stdout(
                program,
                words,
                &["--agent", "claude-code", "--socket", socket],
                RM,
                &state,
                stdout,
            );
            assert_refused(&said, "not today", &what);
            assert!(
                said.stderr.contains("could not reach the agent"),
                "{what}: {said:?}"
            );
            // Codex and Gemini CLI too (each writes its deny on stdout).
            let said = relay_without_stdout(
                program,
                words,
                &["--agent", "codex", "--socket", socket],
                &fixture("codex", "PreToolUse-1.json"),
                &state,
                stdout,
            );
            assert_refused(&said, "not today", &format!("{what}, codex"));
            // Nothing to hold back (a line of context): the agent goes on, told why it heard nothing.
            let said = relay_without_stdout(
                program,
                words,
                &["--agent", "claude-code", "--socket", socket],
                prompt,
                &state,
                stdout,
            );
            assert_eq!(said.code, 0, "{what}, context: {said:?}");
            assert!(
                said.stderr.contains("held nothing back"),
                "{what}: {said:?}"
            );
        }
        // --fail-closed with no daemon: its refusal too.
        let nowhere = d.sb.p("nothing/hookd.sock");
        let said = relay_without_stdout(
            program,
            words,
            &[
                "--agent",
                "claude-code",
                "--socket",
                nowhere.to_str().unwrap(),
                "--fail-closed",
            ],
            RM,
            &state,
            Stdout::Closed,
        );
        assert_refused(
            &said,
            "hookd is not running",
            &format!("{program}, daemon down"),
        );
    }
}
