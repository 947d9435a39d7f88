//! A reader that leaves early (`hookd setup AGENT --dry-run 2>&1 | head -1`, `hookd log | head`, `hookd
//! --help | head`) is a normal way for a command's output to end: every command ends quietly then, with
//! the status it would have had, and never panics (exit 101), as cargo and ripgrep do. Its work is done
//! all the same (setup writes the file and lists it).

use std::io::{BufRead, BufReader};
use std::os::fd::OwnedFd;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

const T: Duration = Duration::from_secs(60);

/// Where a command's output goes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Reader {
    /// A pipe whose reader has already gone: every write fails, the first one included.
    Gone,
    /// The same, for stderr too (`2>&1 | head -0`).
    GoneBoth,
    /// A pipe read to its end: the status the command has when nobody leaves.
    Stays,
}

/// What a command did with `reader` on the other end of its stdout: its exit status and what it said on
/// stderr (nothing to read when stderr went with stdout).
fn run(sb: &Sandbox, args: &[&str], stdin: Option<&str>, reader: Reader) -> (ExitStatus, String) {
    let mut cmd = Command::new(BIN);
    cmd.args(args).current_dir(sb.path());
    keep_home(&mut cmd, &this_tests_folder());
    cmd.stdin(match stdin {
        Some(text) => {
            let file = sb.p("stdin.json");
            std::fs::write(&file, text).unwrap();
            Stdio::from(std::fs::File::open(file).unwrap())
        }
        None => Stdio::null(),
    });
    let closed = || -> OwnedFd {
        let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
        drop(read);
        write
    };
    match reader {
        Reader::Gone => {
            cmd.stdout(Stdio::from(closed())).stderr(Stdio::piped());
        }
        Reader::GoneBoth => {
            let write = closed();
            cmd.stdout(Stdio::from(write.try_clone().unwrap()))
                .stderr(Stdio::from(write));
        }
        Reader::Stays => {
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        }
    }
    let child = cmd.spawn().unwrap();
    drop(cmd);
    let out = wait_for_output(child);
    (out.status, text(&out.stderr))
}

/// The child's output, killing it past [`T`] (a safety net, never a timing).
fn wait_for_output(mut child: std::process::Child) -> std::process::Output {
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watch = {
        let done = done.clone();
        std::thread::spawn(move || {
            let deadline = Instant::now() + T;
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                if Instant::now() >= deadline {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid as i32),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let _ = child.stdin.take();
    let out = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    watch.join().unwrap();
    out
}

/// Every command that prints, with what it needs to print something.
fn commands(sb: &Sandbox) -> Vec<(Vec<String>, Option<String>)> {
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"guard\"\nmatcher = \"Bash\"\ncommand = \"echo checked >&2\"\n",
    );
    let config = sb.config().display().to_string();
    let agent_file = sb.p("claude/settings.json").display().to_string();
    std::fs::create_dir_all(sb.p("claude")).unwrap();
    std::fs::write(
        &agent_file,
        r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"echo mine"}]}]}}"#,
    )
    .unwrap();
    let socket = sb.p("nobody/hookd.sock").display().to_string();
    let event = r#"{"cwd":"/tmp","tool_name":"Bash","tool_input":{"command":"ls"}}"#.to_string();
    let words = |line: &str| line.split(' ').map(str::to_string).collect::<Vec<_>>();
    vec![
        (words("--help"), None),
        (words("help setup"), None),
        (words("fire --help"), None),
        (words("--version"), None),
        (words(&format!("check --config {config}")), None),
        (words(&format!("check --config {config} --json")), None),
        (words(&format!("check --config {config}.missing")), None),
        (
            words(&format!("setup claude-code --dry-run --file {agent_file}")),
            None,
        ),
        (words(&format!("import {agent_file}")), None),
        (words("relay --print-settings claude-code"), None),
        (words("relay --print-settings copilot-cli"), None),
        (
            words(&format!("test PreToolUse --config {config}")),
            Some(event.clone()),
        ),
        (
            words(&format!("fire PreToolUse --socket {socket}")),
            Some(event),
        ),
        (words(&format!("status --socket {socket}")), None),
        (
            words(&format!("doctor --socket {socket} --config {config}")),
            None,
        ),
        (words("log --journal nowhere.jsonl"), None),
        (words("why --journal nowhere.jsonl"), None),
        (words("completions bash"), None),
        (words("completions zsh"), None),
        (words("man"), None),
        (words("bogus-command"), None),
    ]
}

#[test]
fn a_reader_that_has_gone_ends_every_command_quietly_with_its_own_status() {
    let sb = Sandbox::new();
    for (args, stdin) in commands(&sb) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (expected, _) = run(&sb, &args, stdin.as_deref(), Reader::Stays);
        for reader in [Reader::Gone, Reader::GoneBoth] {
            let what = format!("hookd {} with {reader:?}", args.join(" "));
            let (status, stderr) = run(&sb, &args, stdin.as_deref(), reader);
            assert_eq!(status.code(), expected.code(), "{what}: {status} {stderr}");
            assert!(
                !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
                "{what}: {stderr}"
            );
        }
    }
}

/// `hookd setup` whose reader has gone still writes the agent's file and lists it: a closed pipe never
/// leaves a command's work half done.
#[test]
fn setup_with_no_reader_still_writes_and_lists_the_file() {
    let sb = Sandbox::new();
    let file = sb.p("settings.json");
    std::fs::write(&file, "{}\n").unwrap();
    let (status, _) = run(
        &sb,
        &["setup", "claude-code", "--file", file.to_str().unwrap()],
        None,
        Reader::GoneBoth,
    );
    assert_eq!(status.code(), Some(0), "{status}");
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains(" --agent claude-code"),
        "not written"
    );
    // Listed in the registry of setups (this thread's own state folder, as for every program it runs).
    let out = run_hookd(
        &[
            "doctor",
            "--json",
            "--socket",
            sb.p("none.sock").to_str().unwrap(),
        ],
        None,
        T,
    );
    assert!(
        text(&out.stdout).contains(file.to_str().unwrap()),
        "doctor does not see the setup: {}",
        text(&out.stdout)
    );
}

/// `hookd setup --dry-run 2>&1 | head -1`, as people type it, many times: the reader leaves while the
/// diff is being written, at a different moment each run, and no run panics.
#[test]
fn head_of_a_dry_run_never_panics_however_the_race_falls() {
    let sb = Sandbox::new();
    let file = sb.p("settings.json");
    for run in 0..50 {
        // A diff of a few hundred bytes to some 100 KiB, past the pipe's buffer: the reader leaves
        // before, while or after the diff is written, and before the note on stderr.
        std::fs::write(
            &file,
            format!("{{\"notes\": \"{}\"}}", "x".repeat(run * 2048)),
        )
        .unwrap();
        let mut cmd = Command::new(BIN);
        cmd.args([
            "setup",
            "claude-code",
            "--dry-run",
            "--file",
            file.to_str().unwrap(),
        ]);
        keep_home(&mut cmd, &this_tests_folder());
        let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
        cmd.stdin(Stdio::null())
            .stdout(Stdio::from(write.try_clone().unwrap()))
            .stderr(Stdio::from(write));
        let child = cmd.spawn().unwrap();
        drop(cmd);
        // `head -1`: one line read, then the reader is gone.
        let mut first = String::new();
        BufReader::new(std::fs::File::from(read))
            .read_line(&mut first)
            .unwrap();
        let status = wait_for_output(child).status;
        assert_eq!(
            status.code(),
            Some(0),
            "run {run}: {status}; read {first:?}"
        );
    }
}

/// A stdout that cannot be written for another reason than a reader gone (`> /dev/full`) is an error
/// said once on stderr, exit 1: never a panic, and never a silent success.
#[test]
fn a_stdout_that_cannot_be_written_is_said_and_exits_1() {
    let sb = Sandbox::new();
    sb.settings("[[hooks.PreToolUse]]\ncommand = \"true\"\n");
    let config = sb.config();
    for args in [
        vec!["check", "--config", config.to_str().unwrap()],
        vec!["completions", "bash"],
        vec!["relay", "--print-settings", "codex"],
    ] {
        let mut cmd = Command::new(BIN);
        cmd.args(&args);
        keep_home(&mut cmd, &this_tests_folder());
        cmd.stdin(Stdio::null())
            .stdout(Stdio::from(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            ))
            .stderr(Stdio::piped());
        let out = wait_for_output(cmd.spawn().unwrap());
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(
            stderr, "hookd: cannot write to stdout: No space left on device (os error 28)\n",
            "{args:?}"
        );
    }
}
