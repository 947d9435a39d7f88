//! `hookd test`: one event decided with no daemon, each hook's output, the verdict and the relay's answer;
//! `hookd test --cases`: policy tests, the shipped `config/cases.toml` among them; and `hookd fire` read
//! by a person on a terminal. The real binary throughout, and a pseudo-terminal where the output is for
//! people.

use std::fs;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::*;

/// A safety net for one run (never a speed assertion).
const T: Duration = Duration::from_secs(60);

const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/config");

/// A sandbox with a guard that refuses Bash (saying why on stderr), a hook adding context for Read, and
/// one that refuses Write for codex only.
fn policy() -> Sandbox {
    let sb = Sandbox::new();
    sb.script(
        "deny.sh",
        "echo 'note on stdout'\necho 'no bash here' >&2\nexit 2",
    );
    sb.script("ctx.sh", "echo 'some context'");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"deny\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/deny.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"ctx\"\nmatcher = \"Read\"\ncommand = \"@DIR@/ctx.sh\"\n\n\
         [[hooks.PreToolUse]]\nname = \"codex-deny\"\nmatcher = \"Write\"\nagents = [\"codex\"]\ncommand = \"@DIR@/deny.sh\"\n",
    );
    sb
}

fn test_cmd(sb: &Sandbox, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg("test")
        .args(args)
        .args(["--config", sb.config().to_str().unwrap()])
        .env("XDG_STATE_HOME", sb.p("state"));
    cmd
}

/// `hookd test ARGS` with `stdin`, piped: exit status, stdout, stderr.
fn run_test(sb: &Sandbox, args: &[&str], stdin: &str) -> (i32, String, String) {
    let out = run_with_deadline(test_cmd(sb, args), Some(stdin), T);
    (code(&out.status), text(&out.stdout), text(&out.stderr))
}

fn json_of(stdout: &str) -> Value {
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

// ---- one event -------------------------------------------------------------------------------------------

#[test]
fn test_decides_an_event_without_a_daemon_and_shows_what_each_hook_printed() {
    let sb = policy();
    let (status, out, err) = run_test(&sb, &["PreToolUse"], r#"{"tool_name": "Bash"}"#);
    assert_eq!(status, 2, "{out} {err}");
    let v = json_of(&out);
    assert_eq!(v["refused"], true, "{v}");
    assert_eq!(v["reason"], "no bash here", "{v}");
    assert_eq!(v["moment"], "PreToolUse", "{v}");
    assert_eq!(hook_names(&v), vec!["deny"], "{v}");
    assert_eq!(hook(&v, "deny")["stdout"], "note on stdout\n", "{v}");
    assert_eq!(hook(&v, "deny")["stderr"], "no bash here\n", "{v}");

    let (status, out, err) = run_test(&sb, &["PreToolUse"], r#"{"tool_name": "Read"}"#);
    assert_eq!(status, 0, "{out} {err}");
    assert_eq!(adds(&json_of(&out)), vec!["some context"], "{out}");
}

#[test]
fn test_on_a_terminal_reads_as_text_with_colour_unless_no_color() {
    let sb = policy();
    let out = run_on_terminal(
        test_cmd(&sb, &["PreToolUse", "--agent", "claude-code"]),
        Some(r#"{"tool_name": "Bash"}"#),
        T,
    );
    let shown = text(&out.stdout);
    assert_eq!(code(&out.status), 2, "{shown}");
    for part in [
        "PreToolUse from claude-code with ",
        "\x1b[1;31mrefused\x1b[0m: no bash here\n",
        "hooks:\n  deny  ",
        "exit 2",
        "      stdout: note on stdout\n",
        "      stderr: no bash here\n",
        "hookd relay --agent claude-code would answer: exit 0\n",
        "\"permissionDecision\":\"deny\"",
    ] {
        assert!(shown.contains(part), "{part:?} not in:\n{shown}");
    }
    let mut cmd = test_cmd(&sb, &["PreToolUse"]);
    cmd.env("NO_COLOR", "1");
    let out = run_on_terminal(cmd, Some(r#"{"tool_name": "Bash"}"#), T);
    let shown = text(&out.stdout);
    assert!(shown.contains("refused: no bash here"), "{shown}");
    assert!(!shown.contains('\x1b'), "colour with NO_COLOR: {shown:?}");
    // --json on a terminal: JSON all the same.
    let out = run_on_terminal(
        test_cmd(&sb, &["PreToolUse", "--json"]),
        Some(r#"{"tool_name": "Bash"}"#),
        T,
    );
    assert_eq!(json_of(&text(&out.stdout))["refused"], true);
}

#[test]
fn test_reads_the_event_from_a_file_and_passes_the_agent() {
    let sb = policy();
    fs::write(sb.p("event.json"), r#"{"tool_name": "Write"}"#).unwrap();
    let file = sb.p("event.json");
    let file = file.to_str().unwrap();
    let (status, out, _) = run_test(
        &sb,
        &["PreToolUse", "--agent", "codex", "--event", file],
        "",
    );
    assert_eq!(status, 2, "{out}");
    assert_eq!(hook_names(&json_of(&out)), vec!["codex-deny"]);
    let (status, out, _) = run_test(&sb, &["PreToolUse", "--event", file], "");
    assert_eq!(status, 0, "{out}");
    assert_eq!(hook_names(&json_of(&out)), Vec::<String>::new());
}

/// The agent's raw hook input, translated and answered as the relay does: the answer `hookd test`
/// shows is the one the real relay gives, against a daemon on the same settings.
#[test]
fn test_answers_an_agents_raw_input_as_the_relay_does() {
    let sb = policy();
    let config = sb.config();
    let d = Daemon::start(sb);
    let input = json!({"hook_event_name": "BeforeTool", "session_id": "s", "cwd": "/tmp",
        "tool_name": "run_shell_command", "tool_input": {"command": "ls"}})
    .to_string();
    let mut cmd = Command::new(BIN);
    cmd.args(["test", "--agent", "gemini-cli", "--config"])
        .arg(&config);
    let tested = run_with_deadline(cmd, Some(&input), T);
    assert_eq!(code(&tested.status), 2, "{}", text(&tested.stderr));
    let v = json_of(&text(&tested.stdout));
    assert_eq!(v["moment"], "PreToolUse", "{v}");
    assert_eq!(hook_names(&v), vec!["deny"], "{v}");
    let relayed = run_hookd(
        &[
            "relay",
            "--agent",
            "gemini-cli",
            "--socket",
            d.socket.to_str().unwrap(),
        ],
        Some(&input),
        T,
    );
    assert_eq!(
        v["relay"]["stdout"].as_str().unwrap_or("<none>"),
        text(&relayed.stdout).trim_end(),
        "{v}"
    );
    assert_eq!(v["relay"]["exit"], code(&relayed.status), "{v}");
    assert!(
        v["relay"]["stdout"]
            .as_str()
            .unwrap()
            .contains("\"decision\":\"deny\""),
        "{v}"
    );
}

/// What the daemon would not decide is an error, exit 1, never a verdict that lets the call go on.
#[test]
fn test_says_what_it_cannot_decide_and_exits_1() {
    let sb = policy();
    for (args, stdin, said) in [
        (&["PreToolUse"][..], "", "no event on stdin"),
        (&["PreToolUse"][..], " \n\t\n", "no event on stdin"),
        (&["PreToolUse"][..], "[1, 2]", "must be a JSON object"),
        (&["PreToolUse"][..], "{\"tool_name\": ", "not JSON"),
        (&["PreTooluse"][..], "{}", "unknown moment \"PreTooluse\""),
        (&[][..], "{}", "name the moment"),
        (
            &["--agent", "gemini-cli"][..],
            r#"{"hook_event_name": "PreToolUse", "tool_name": "Bash"}"#,
            "would not fire it",
        ),
        (
            &["--agent", "claude-code"][..],
            "not json",
            "cannot read it",
        ),
        (&["--agent", "claude"][..], "{}", "unknown agent"),
    ] {
        let (status, out, err) = run_test(&sb, args, stdin);
        assert_eq!(status, 1, "{args:?} {stdin:?}: {out} {err}");
        assert!(err.contains(said), "{args:?} {stdin:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "not one line: {err}");
        assert!(out.is_empty(), "{args:?}: printed {out}");
    }
}

/// A hook that floods its output and one that hangs are bounded as in the daemon: the output cut at
/// its limit (a cut JSON answer fails closed), the hang killed at its timeout.
#[test]
fn test_bounds_a_hook_that_floods_or_hangs() {
    let sb = Sandbox::new();
    sb.script(
        "flood.sh",
        "printf '{'\nexec yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    );
    sb.script("hang.sh", "exec sleep 100");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"flood\"\ncommand = \"@DIR@/flood.sh\"\ntimeout = 2\n\n\
         [[hooks.PreToolUse]]\nname = \"hang\"\ncommand = \"@DIR@/hang.sh\"\ntimeout = 1\n",
    );
    let (status, out, err) = run_test(&sb, &["PreToolUse"], "{}");
    assert_eq!(status, 2, "{err}");
    let v = json_of(&out);
    let flood = hook(&v, "flood");
    assert_eq!(flood["outcome"], "refused", "{flood}");
    assert_eq!(flood["truncated"], true, "{flood}");
    assert!(
        flood["stdout"].as_str().unwrap().len() <= 1 << 20,
        "more than the output limit"
    );
    let hang = hook(&v, "hang");
    assert_eq!(hang["outcome"], "failed", "{hang}");
    assert!(
        hang["error"].as_str().unwrap().contains("timed out"),
        "{hang}"
    );
    // On a terminal the flood is cut to a few lines.
    let out = run_on_terminal(test_cmd(&sb, &["PreToolUse"]), Some("{}"), T);
    let shown = text(&out.stdout);
    assert!(shown.contains("more lines (--json shows all)"), "{shown}");
    assert!(
        shown.lines().count() < 60,
        "{} lines",
        shown.lines().count()
    );
}

// ---- policy tests ------------------------------------------------------------------------------------------

/// The shipped cases hold for the shipped settings (so CI runs them).
#[test]
fn the_example_cases_pass_on_the_example_settings() {
    let sb = Sandbox::with_example_config();
    let cases = format!("{CONFIG}/cases.toml");
    let out = run_on_terminal(test_cmd(&sb, &["--cases", &cases]), None, T);
    let shown = text(&out.stdout);
    assert_eq!(code(&out.status), 0, "{shown}\n{}", text(&out.stderr));
    assert!(!shown.contains("FAILED"), "{shown}");
    let summary = shown.lines().last().unwrap_or_default();
    assert!(
        summary.ends_with(" passed, 0 failed") && !summary.starts_with("0 "),
        "{shown}"
    );
}

const CASES: &str = r#"
[[case]]
name = "bash is refused"
moment = "PreToolUse"
event = { tool_name = "Bash" }
expect = "refused"
reason = "no bash"

[[case]]
name = "bash goes through"
moment = "PreToolUse"
event = { tool_name = "Bash" }
expect = "not refused"
hooks = { deny = "nothing" }

[[case]]
name = "read gets context"
moment = "PreToolUse"
event_json = '{"tool_name": "Read"}'
expect = "not refused"
adds = "some context"
"#;

#[test]
fn a_failing_case_is_reported_with_what_differed_and_exits_1() {
    let sb = policy();
    fs::write(sb.p("cases.toml"), CASES).unwrap();
    let file = sb.p("cases.toml");
    let file = file.to_str().unwrap();
    let out = run_on_terminal(test_cmd(&sb, &["--cases", file]), None, T);
    let shown = text(&out.stdout);
    assert_eq!(code(&out.status), 1, "{shown}");
    for part in [
        "running 3 cases of ",
        "ok    \x1b[0m  bash is refused\n",
        &format!("FAILED\x1b[0m  bash goes through  ({file}:9)\n"),
        "        - expected not refused, got refused: no bash here\n",
        "        - expected hook \"deny\" nothing, got refused\n",
        "ok    \x1b[0m  read gets context\n",
        "2 passed, 1 failed\n",
    ] {
        assert!(shown.contains(part), "{part:?} not in:\n{shown}");
    }
    // Piped: a JSON line per case, then the counts.
    let (status, out, _) = run_test(&sb, &["--cases", file], "");
    assert_eq!(status, 1, "{out}");
    let lines: Vec<Value> = out.lines().map(json_of).collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!(lines[1]["case"], "bash goes through");
    assert_eq!(lines[1]["ok"], false);
    assert_eq!(lines[1]["verdict"], "refused");
    assert_eq!(lines[3], json!({"passed": 2, "failed": 1}));
}

/// A case whose verdict cannot be had fails: it never passes for want of a verdict, "not refused" least
/// of all.
#[test]
fn a_case_without_a_verdict_fails() {
    let sb = policy();
    fs::write(
        sb.p("cases.toml"),
        r#"
[[case]]
name = "not an object"
moment = "PreToolUse"
event_json = '[1]'
expect = "not refused"

[[case]]
name = "not json"
moment = "PreToolUse"
event_json = '{"tool_name": '
expect = "not refused"

[[case]]
name = "unknown moment"
moment = "PreTooluse"
event = { tool_name = "Bash" }
expect = "not refused"

[[case]]
name = "another agent's event"
agent = "gemini-cli"
event = { hook_event_name = "PreToolUse", tool_name = "Bash" }
expect = "not refused"
"#,
    )
    .unwrap();
    let (status, out, _) = run_test(&sb, &["--cases", sb.p("cases.toml").to_str().unwrap()], "");
    assert_eq!(status, 1, "{out}");
    let lines: Vec<Value> = out.lines().map(json_of).collect();
    for line in &lines[..4] {
        assert_eq!(line["ok"], false, "{line}");
        assert!(
            line["problems"][0]
                .as_str()
                .unwrap()
                .starts_with("no verdict: "),
            "{line}"
        );
    }
    assert_eq!(lines[4], json!({"passed": 0, "failed": 4}));
}

#[test]
fn a_bad_case_file_is_an_error_at_its_place_and_runs_nothing() {
    let sb = policy();
    for (text, place, said) in [
        ("[[case]]\nname = \"a\"\nthis is junk\n", ":3:", ""),
        (
            "[[case]]\nname = \"a\"\nmoment = \"PreToolUse\"\nevent = {}\nexpect = \"refuse\"\n",
            ":5:10:",
            "did you mean \"refused\"?",
        ),
        ("# no cases\n", ":1:1:", "no cases"),
    ] {
        fs::write(sb.p("cases.toml"), text).unwrap();
        let file = sb.p("cases.toml");
        let (status, out, err) = run_test(&sb, &["--cases", file.to_str().unwrap()], "");
        assert_eq!(status, 1, "{text}: {out} {err}");
        assert!(
            err.starts_with(&format!("{}{place}", file.display())),
            "{text}: {err}"
        );
        assert!(err.contains(said), "{text}: {err}");
        assert!(out.is_empty(), "{text}: ran something: {out}");
    }
}

/// Attack: `--cases /dev/zero`, a mistaken path that never ends, was read whole into memory,
/// without end; a case file in another encoding failed with no place. Both are refused at once.
#[test]
fn a_case_file_without_end_or_not_text_is_refused_at_once() {
    let sb = policy();
    let (status, out, err) = run_test(&sb, &["--cases", "/dev/zero"], "");
    assert_eq!(status, 1, "{out} {err}");
    assert!(
        err.contains("/dev/zero is larger than a case file may be (65 MiB)"),
        "{err}"
    );
    assert!(out.is_empty(), "ran something: {out}");

    let file = sb.p("cases.toml");
    fs::write(&file, b"# cases\n[[case]]\nname = \"caf\xe9\"\n").unwrap();
    let (status, out, err) = run_test(&sb, &["--cases", file.to_str().unwrap()], "");
    assert_eq!(status, 1, "{out} {err}");
    assert!(
        err.contains(&format!("{}:3: not UTF-8 text", file.display())),
        "{err}"
    );
    assert!(out.is_empty(), "ran something: {out}");
}

// ---- hookd fire ------------------------------------------------------------------------------------------

#[test]
fn fire_of_an_empty_stdin_is_an_error() {
    let d = Daemon::start(policy());
    let socket = d.socket.to_str().unwrap();
    for stdin in ["", "\n  \n"] {
        let out = run_hookd(&["fire", "PreToolUse", "--socket", socket], Some(stdin), T);
        assert_eq!(code(&out.status), 1, "{stdin:?}: {}", text(&out.stdout));
        assert!(
            text(&out.stderr).contains("no event on stdin"),
            "{}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn fire_on_a_terminal_reads_as_text_and_as_json_with_json() {
    let d = Daemon::start(policy());
    let socket = d.socket.to_str().unwrap();
    let fire = |extra: &[&str], no_color: bool| {
        let mut cmd = Command::new(BIN);
        cmd.args(["fire", "PreToolUse", "--socket", socket])
            .args(extra);
        if no_color {
            cmd.env("NO_COLOR", "");
        }
        let out = run_on_terminal(cmd, Some(r#"{"tool_name": "Bash"}"#), T);
        (code(&out.status), text(&out.stdout))
    };
    let (status, shown) = fire(&[], false);
    assert_eq!(status, 2, "{shown}");
    assert!(
        shown.starts_with("\x1b[1;31mrefused\x1b[0m: no bash here\nhooks:\n  deny  "),
        "{shown:?}"
    );
    assert!(
        shown.contains("exit 2") && shown.contains(" ms\n"),
        "{shown}"
    );
    let (status, shown) = fire(&[], true);
    assert_eq!(status, 2);
    assert!(shown.starts_with("refused: no bash here\n"), "{shown:?}");
    assert!(!shown.contains('\x1b'), "{shown:?}");
    // --json: the response line as the daemon wrote it, also on a terminal.
    let (status, shown) = fire(&["--json"], false);
    assert_eq!(status, 2);
    let v = json_of(&shown);
    assert_eq!(v["refused"], true, "{v}");
    assert_eq!(v["id"], 1, "{v}");
    assert_eq!(shown.trim_end().lines().count(), 1, "{shown}");
}

/// Ctrl-C stops `hookd test --cases` at once, hooks and all, and is no pass: exit 1, and the cases after
/// are not run.
#[test]
fn ctrl_c_stops_the_cases_and_their_hooks() {
    let sb = Sandbox::new();
    sb.script("hang.sh", "echo $$ > @DIR@/hang.pid\nexec sleep 100");
    sb.settings("[[hooks.Stop]]\nname = \"hang\"\ncommand = \"@DIR@/hang.sh\"\ntimeout = 100\n");
    let case =
        "[[case]]\nname = \"CASE\"\nmoment = \"Stop\"\nevent = {}\nexpect = \"not refused\"\n";
    fs::write(
        sb.p("cases.toml"),
        format!("{}{}", case.replace("CASE", "a"), case.replace("CASE", "b")),
    )
    .unwrap();
    let mut cmd = test_cmd(&sb, &["--cases", sb.p("cases.toml").to_str().unwrap()]);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    keep_home(&mut cmd, &this_tests_folder());
    let mut child = cmd.spawn().unwrap();
    let pid = child.id();
    let hook = sb.wait_pid("hang.pid");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let mut status = None;
    wait_until(T, "hookd test to end after SIGINT", || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&status.unwrap()), 1, "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("interrupted"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        !text(&out.stdout).contains("\"passed\""),
        "{}",
        text(&out.stdout)
    );
    wait_until(T, "the hook to be stopped", || process_gone(hook, pid));
}
