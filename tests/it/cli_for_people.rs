//! What `status`, `reload` and `check` print for people on a terminal (through a pseudo-terminal), and
//! that scripts, reading through a pipe or with `--json`, get JSON as before; an error said once.

use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::common::*;

const T: Duration = Duration::from_secs(20);

fn daemon() -> Daemon {
    let sb = Sandbox::new();
    sb.script("deny.sh", "echo 'no bash here' >&2\nexit 2");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"deny\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/deny.sh\"\n",
    );
    Daemon::start(sb)
}

/// `hookd ARGS` on a terminal; `no_color` sets NO_COLOR.
fn on_terminal(args: &[&str], no_color: bool) -> std::process::Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    if no_color {
        cmd.env("NO_COLOR", "1");
    }
    run_on_terminal(cmd, None, T)
}

#[test]
fn status_on_a_terminal_reads_like_systemctl_and_piped_is_json() {
    let d = daemon();
    let socket = d.socket.to_str().unwrap();
    let refused = d.fire("PreToolUse", serde_json::json!({"tool_name": "Bash"}));
    assert_eq!(refused["refused"], true, "{refused}");
    // The record counts a fire once its writer has taken it, a moment after the answer.
    wait_until(RESPONSE, "the fire counted in the record", || {
        d.status()["record"]["moments"]["PreToolUse"]["fires"] == 1
    });
    let out = on_terminal(&["status", "--socket", socket], true);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    for part in [
        "● hookd ",
        " — running for ",
        &format!("settings: {}", d.config.display()),
        "hooks: 1: PreToolUse 1",
        &format!("socket: {socket}"),
        "FIRES SINCE START",
    ] {
        assert!(shown.contains(part), "{part:?} not in\n{shown}");
    }
    assert!(!shown.contains('{'), "no JSON for people: {shown}");
    assert!(!shown.contains('\x1b'), "NO_COLOR yet colour: {shown:?}");

    let coloured = text(&on_terminal(&["status", "--socket", socket], false).stdout);
    assert!(coloured.contains("\x1b[1;32m●\x1b[0m"), "{coloured:?}");

    // --json on a terminal, and a pipe without it: the status line, as scripts read it.
    for out in [
        on_terminal(&["status", "--socket", socket, "--json"], false),
        run_hookd(&["status", "--socket", socket], None, T),
    ] {
        let line = text(&out.stdout);
        let status: Value = serde_json::from_str(line.trim())
            .unwrap_or_else(|e| panic!("not one JSON line ({e}): {line:?}"));
        assert_eq!(status["ok"], true, "{status}");
        assert!(!line.contains('\x1b'), "{line:?}");
    }
}

#[test]
fn status_shows_a_refused_edit_as_trouble() {
    let d = daemon();
    let socket = d.socket.to_str().unwrap();
    d.sb.settings("[defaults]\ncolour = \"red\"\n");
    let out = run_hookd(&["reload", "--socket", socket], None, T);
    assert_eq!(code(&out.status), 1);
    let shown = text(&on_terminal(&["status", "--socket", socket], true).stdout);
    assert!(shown.contains("running, with trouble"), "{shown}");
    assert!(
        shown.contains("last edit: refused, the settings above kept: ") && shown.contains("colour"),
        "{shown}"
    );
}

#[test]
fn a_refused_reload_is_said_once() {
    let d = daemon();
    let socket = d.socket.to_str().unwrap();
    let out = on_terminal(&["reload", "--socket", socket], true);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "reloaded the settings, now generation 2\n"
    );

    d.sb.settings("[[hooks.PreToolUse]]\ncommand = \"true\"\nbogus = 1\n[defaults]\ncolour = 1\n");
    let location = format!("{}:3:", d.config.display());
    // For people: on stderr, each error once, nothing on stdout.
    let out = on_terminal(&["reload", "--socket", socket], true);
    assert_eq!(code(&out.status), 1);
    let said = text(&out.stderr);
    assert_eq!(text(&out.stdout), "", "stdout: {:?}", text(&out.stdout));
    assert!(said.starts_with("reload refused: "), "{said}");
    assert_eq!(said.matches(&location).count(), 1, "said once: {said}");
    assert_eq!(said.matches("colour").count(), 1, "said once: {said}");
    // What it means for the daemon, once too (it was said by the daemon and again by the client).
    assert_eq!(
        said.matches("last good settings").count(),
        1,
        "said once: {said}"
    );
    // For scripts: the JSON line on stdout, with every error, and nothing more on stderr.
    let out = run_hookd(&["reload", "--socket", socket], None, T);
    assert_eq!(code(&out.status), 1);
    assert_eq!(text(&out.stderr), "", "said once, on stdout");
    let answer: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(answer["error"]["kind"], "invalid_settings", "{answer}");
    let errors = answer["error"]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 2, "{answer}");
    assert!(
        errors[0].as_str().unwrap().starts_with(&location),
        "{answer}"
    );
}

#[test]
fn check_colours_only_on_a_terminal_and_says_json_when_asked() {
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"guard\"\nmatcher = \"Bash\"\nargv = [\"/bin/true\"]\n",
    );
    let config = sb.config();
    let config = config.to_str().unwrap();
    let coloured = text(&on_terminal(&["check", "--config", config], false).stdout);
    assert!(
        coloured.contains(": \x1b[1;32mvalid\x1b[0m, 1 hook"),
        "{coloured:?}"
    );
    let plain = text(&on_terminal(&["check", "--config", config], true).stdout);
    assert!(plain.contains(": valid, 1 hook\n"), "{plain:?}");
    let piped = run_hookd(&["check", "--config", config], None, T);
    assert_eq!(text(&piped.stdout), plain, "the same text through a pipe");

    let out = run_hookd(&["check", "--config", config, "--json"], None, T);
    assert_eq!(code(&out.status), 0);
    let valid: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(valid["ok"], true);
    assert_eq!(valid["moments"]["PreToolUse"]["hooks"][0]["name"], "guard");
    assert_eq!(
        valid["moments"]["PreToolUse"]["hooks"][0]["matcher"],
        "Bash"
    );
    assert_eq!(
        valid["moments"]["PreToolUse"]["hooks"][0]["argv"],
        serde_json::json!(["/bin/true"])
    );

    sb.settings("[[hooks.PreToolUse]]\nargv = [\"/bin/true\"]\nbogus = 1\n");
    let out = run_hookd(&["check", "--config", config, "--json"], None, T);
    assert_eq!(code(&out.status), 1);
    assert_eq!(text(&out.stderr), "", "said once, on stdout");
    let invalid: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(invalid["ok"], false);
    let error = invalid["errors"][0].as_str().unwrap();
    assert!(
        error.starts_with(&format!("{config}:3:")) && error.contains("bogus"),
        "{invalid}"
    );
}

#[test]
fn a_fire_the_daemon_cannot_decide_is_said_once() {
    let d = daemon();
    let socket = d.socket.to_str().unwrap();
    let args = ["fire", "PreTooluse", "--socket", socket];
    // For scripts: the error response on stdout, for the script, and one line on stderr, for the person
    // reading its log (as docs/commands.md says).
    let out = run_hookd(&args, Some("{}"), T);
    assert_eq!(code(&out.status), 1);
    let answer: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(answer["error"]["kind"], "unknown_moment", "{answer}");
    let said = text(&out.stderr);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.starts_with("hookd: unknown moment \"PreTooluse\" (did you mean \"PreToolUse\"?)"),
        "{said}"
    );
    // An agent's own name for a moment is told the moment it means, as `check` tells it.
    let out = run_hookd(&["fire", "BeforeTool", "--socket", socket], Some("{}"), T);
    assert_eq!(code(&out.status), 1);
    assert!(
        text(&out.stderr).contains("it is Gemini CLI's name for PreToolUse")
            && text(&out.stderr).contains("hookd fire PreToolUse --agent gemini-cli"),
        "{}",
        text(&out.stderr)
    );
    // For people: one line on stderr, nothing on the terminal.
    let mut cmd = Command::new(BIN);
    cmd.args(args).env("NO_COLOR", "1");
    let out = run_on_terminal(cmd, Some("{}"), T);
    assert_eq!(code(&out.status), 1);
    assert_eq!(text(&out.stdout), "", "{:?}", text(&out.stdout));
    let said = text(&out.stderr);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.contains("PreToolUse"), "did you mean: {said}");
}

/// A typo in `--config` serves with no hooks, as a daemon started before its settings are written must;
/// but loudly: the serve log names the file beside it a typo away, `status` and `doctor` say that no
/// settings file is in force, what the daemon waits for, and the near name.
#[test]
fn a_settings_file_that_is_not_there_is_said_with_the_name_it_surely_meant() {
    let sb = Sandbox::new();
    // The daemon is told conf/hooks.toml; the user's file is conf/hoks.toml.
    let near = sb.config_dir().join("hoks.toml");
    std::fs::write(&near, "# my hooks\n").unwrap();
    let d = Daemon::start(sb);
    let (config, near) = (d.config.display().to_string(), near.display().to_string());
    let socket = d.socket.to_str().unwrap();
    let log = d.log_text();
    assert!(
        log.contains("no settings file yet")
            && log.contains(&format!(
                "did you mean {near}? (hookd serve --config {near})"
            )),
        "{log}"
    );

    let out = on_terminal(&["status", "--socket", socket], true);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains("running, with trouble"), "{shown}");
    assert!(
        shown.contains(&format!(
            "settings: {config} (no such file: no settings in force)"
        )),
        "{shown}"
    );
    assert!(
        shown.contains(&format!(
            "! no settings file is in force: hookd serves no hooks until {config} appears; did you mean {near}?"
        )),
        "{shown}"
    );

    let out = run_hookd(&["doctor", "--json", "--socket", socket], None, T);
    let report: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    let settings = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "settings")
        .unwrap();
    assert_eq!(settings["status"], "warn", "{settings}");
    let message = settings["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!(
            "no settings file is in force: {config} does not exist (did you mean {near}?)"
        )),
        "{message}"
    );
    assert_eq!(
        settings["fix"],
        format!("start hookd with --config {near}, or rename it to {config}"),
        "{settings}"
    );

    // check says it too.
    let out = run_hookd(&["check", "--config", &config], None, T);
    assert_eq!(code(&out.status), 1);
    assert_eq!(
        text(&out.stderr),
        format!("hookd: {config}: no such settings file (did you mean {near}?)\n")
    );

    // With no daemon, doctor looks at the file a daemon would read, and says the same.
    let out = run_hookd(
        &[
            "doctor",
            "--json",
            "--socket",
            d.sb.p("none.sock").to_str().unwrap(),
            "--config",
            &config,
        ],
        None,
        T,
    );
    assert!(
        text(&out.stdout).contains(&format!(
            "no settings file at {config} (did you mean {near}?)"
        )),
        "{}",
        text(&out.stdout)
    );
}
