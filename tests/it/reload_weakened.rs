//! A reload that weakens the guard leaves a trace (defence in depth): the settings file edited
//! as editors (and agents) edit it, a new file renamed over it, and the real daemon reloading it. Each
//! weakening (a hook removed, disabled, its `on_failure` relaxed, its matcher narrowed, `[protect]`
//! turned off) is one `weakened` record in the journal saying what changed, read back by `hookd log`,
//! and `hookd status` (for people and `--json`) shows the last one; a reload that only adds or
//! strengthens writes none.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::{Value, json};

use crate::common::*;

const T: Duration = Duration::from_secs(20);

/// The refusing guard of every test: `guard.sh` refuses a command that holds `rm`.
const GUARD_SCRIPT: &str = r#"input=$(cat)
case "$input" in
  *'"rm '*) echo "no rm here" >&2; exit 2 ;;
esac"#;

/// A PreToolUse hook `name` running the guard, with `extra` lines.
fn hook(name: &str, extra: &str) -> String {
    format!("[[hooks.PreToolUse]]\nname = \"{name}\"\ncommand = \"@DIR@/guard.sh\"\n{extra}\n")
}

/// A daemon on `toml`, the guard script beside it.
fn daemon(toml: &str) -> Daemon {
    Daemon::with_scripts(&[("guard.sh", GUARD_SCRIPT)], toml)
}

fn of_kind(d: &Daemon, kind: &str) -> Vec<Value> {
    d.journal()
        .into_iter()
        .filter(|record| record["kind"] == kind)
        .collect()
}

/// Waits for the journal's `reload` record of `generation` (every record a reload makes is queued
/// before it is done, so whatever that reload wrote is in the journal by the time a later one's is).
fn wait_reload(d: &Daemon, generation: u64) {
    wait_until(
        T,
        &format!("the reload record of generation {generation}"),
        || {
            of_kind(d, "reload")
                .iter()
                .any(|record| record["generation"] == generation)
        },
    );
}

/// Waits for a `weakened` record and returns the only one there is.
fn wait_weakened(d: &Daemon) -> Value {
    wait_until(T, "a weakened record in the journal", || {
        !of_kind(d, "weakened").is_empty()
    });
    let weakened = of_kind(d, "weakened");
    assert_eq!(weakened.len(), 1, "one record per weakening: {weakened:?}");
    weakened[0].clone()
}

/// `hookd status` on a terminal, without colour.
fn status_for_people(d: &Daemon) -> String {
    let mut cmd = Command::new(BIN);
    cmd.args(["status", "--socket", d.socket.to_str().unwrap()])
        .env("NO_COLOR", "1");
    let out = run_on_terminal(cmd, None, T);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    text(&out.stdout)
}

/// `hookd status --json`, parsed.
fn status_json(d: &Daemon) -> Value {
    let out = run_hookd(
        &["status", "--socket", d.socket.to_str().unwrap(), "--json"],
        None,
        T,
    );
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    serde_json::from_str(text(&out.stdout).trim()).expect("status --json is one JSON line")
}

/// Edits the settings from `before` to `after` (as an editor saves: a new file renamed over it) and
/// checks what the weakening left: the journal's one `weakened` record listing `changes` (each
/// `[moment, hook, change]`, or `["", "", change]` for the whole file's), `hookd log` reading it back,
/// `hookd status --json`'s `last_weakened` and the status for people saying `words`. Returns the status.
fn weakens(d: &Daemon, after: &str, changes: &[[&str; 3]], words: &str) -> Value {
    let before = d.status()["generation"].as_u64().unwrap();
    d.sb.settings(after);
    let record = wait_weakened(d);
    let generation = record["generation"]
        .as_u64()
        .unwrap_or_else(|| panic!("no generation in {record}"));
    assert!(generation > before, "{record}");
    assert_eq!(record["v"], 1, "{record}");
    assert_eq!(record["file"], d.config.display().to_string(), "{record}");
    let want: Vec<Value> = changes
        .iter()
        .map(|[moment, hook, change]| {
            let mut one = json!({"change": change});
            if !moment.is_empty() {
                one["moment"] = json!(moment);
                one["hook"] = json!(hook);
            }
            one
        })
        .collect();
    assert_eq!(record["weakened"], json!(want), "{record}");

    // `hookd log` reads it back: as JSON lines, and as a row of its table on a terminal.
    let journal = d.journal_file();
    let out = run_hookd(
        &["log", "--journal", journal.to_str().unwrap(), "--json"],
        None,
        T,
    );
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    let logged: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("hookd log --json gives JSON lines"))
        .collect();
    assert!(logged.contains(&record), "{logged:?}");
    assert!(
        !text(&out.stderr).contains("skipped"),
        "{}",
        text(&out.stderr)
    );
    let mut table = Command::new(BIN);
    table
        .args(["log", "--journal", journal.to_str().unwrap()])
        .env("NO_COLOR", "1");
    let table = text(&run_on_terminal(table, None, T).stdout);
    let row = table
        .lines()
        .find(|line| line.contains("weakened"))
        .unwrap_or_else(|| panic!("no weakened row in\n{table}"));
    assert!(row.contains(&words[..words.len().min(20)]), "{row}");

    let status = status_json(d);
    let last = &status["last_weakened"];
    assert_eq!(last["generation"], generation, "{status}");
    assert_eq!(last["changes"], json!(want), "{status}");
    assert_eq!(last["file"], d.config.display().to_string(), "{status}");
    assert!(
        last["at"].as_str().is_some_and(|at| at.ends_with('Z')),
        "{status}"
    );
    let shown = status_for_people(d);
    assert!(
        shown.contains(&format!("weakened: generation {generation}, ")) && shown.contains(words),
        "{words:?} not in\n{shown}"
    );
    status
}

#[test]
fn a_removed_hook_is_journaled_and_shown_by_status() {
    let d = daemon(&format!("{}{}", hook("guard", ""), hook("other", "")));
    assert_eq!(d.status()["last_weakened"], Value::Null);
    assert!(status_json(&d)["last_weakened"].is_null());
    assert!(!status_for_people(&d).contains("weakened"));
    weakens(
        &d,
        &hook("other", ""),
        &[["PreToolUse", "guard", "removed"]],
        "PreToolUse guard: removed",
    );
    assert!(
        d.log_text()
            .contains("guard less than before: PreToolUse guard: removed"),
        "a WARN line in the log:\n{}",
        d.log_text()
    );
}

#[test]
fn a_disabled_hook_reloaded_by_hookd_reload_is_journaled_once() {
    let d = daemon(&hook("guard", ""));
    let before = d.status()["generation"].as_u64().unwrap();
    d.sb.settings(&hook("guard", "enabled = false"));
    // Asked as well as watched: whichever takes the file first, the other finds nothing weaker.
    let out = run_hookd(&["reload", "--socket", d.socket.to_str().unwrap()], None, T);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    let record = wait_weakened(&d);
    assert_eq!(
        record["weakened"],
        json!([{"moment": "PreToolUse", "hook": "guard", "change": "disabled (enabled = false)"}])
    );
    assert!(record["generation"].as_u64().unwrap() > before);
    // A later reload of the same file weakens nothing more.
    let again = d.reload()["generation"].as_u64().unwrap();
    wait_reload(&d, again);
    assert_eq!(of_kind(&d, "weakened").len(), 1);
    assert!(status_for_people(&d).contains("PreToolUse guard: disabled (enabled = false)"));
}

#[test]
fn on_failure_relaxed_is_journaled_and_shown_by_status() {
    let d = daemon(&hook("guard", "on_failure = \"refuse\""));
    weakens(
        &d,
        &hook("guard", "on_failure = \"ignore\""),
        &[[
            "PreToolUse",
            "guard",
            "on_failure relaxed from \"refuse\" to \"ignore\"",
        ]],
        "PreToolUse guard: on_failure relaxed from \"refuse\" to \"ignore\"",
    );
}

#[test]
fn a_matcher_narrowed_on_sighup_is_journaled_and_shown_by_status() {
    let d = daemon(&hook("guard", "matcher = \"Bash|Edit|Write\""));
    let sb = &d.sb;
    sb.settings(&hook("guard", "matcher = \"Edit\""));
    d.signal(Signal::SIGHUP);
    let record = wait_weakened(&d);
    let change = "matcher changed from \"Bash|Edit|Write\" to \"Edit\"";
    assert_eq!(
        record["weakened"],
        json!([{"moment": "PreToolUse", "hook": "guard", "change": change}])
    );
    assert_eq!(
        status_json(&d)["last_weakened"]["changes"][0]["change"],
        change
    );
    // And the reload was real: `rm` in Bash goes through now (of a folder that holds nothing of hookd's:
    // `rm -rf ~` hookd's guard of itself refuses, whatever the hooks).
    let answer = d.fire(
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "rm -rf ~/build"}}),
    );
    assert_eq!(answer["refused"], false, "{answer}");
}

#[test]
fn protection_turned_off_is_journaled_and_status_says_it_is_off() {
    let d = daemon(&format!(
        "{}[protect]\npaths = [\"/srv/a\", \"/srv/b\"]\n",
        hook("guard", "")
    ));
    let status = status_json(&d);
    assert_eq!(
        status["protect"],
        json!({"enabled": true, "paths": 2}),
        "{status}"
    );
    assert!(status_for_people(&d).contains("protect: on, 2 extra paths"));
    let status = weakens(
        &d,
        &format!("{}[protect]\nenabled = false\n", hook("guard", "")),
        &[[
            "",
            "",
            "[protect] enabled turned off: hookd no longer guards its own files and process",
        ]],
        "[protect] enabled turned off",
    );
    assert_eq!(
        status["protect"],
        json!({"enabled": false, "paths": 0}),
        "{status}"
    );
    assert!(status_for_people(&d).contains("protect: off ([protect] enabled = false)"));
}

#[test]
fn hooks_removed_with_the_journal_turned_off_are_journaled_all_the_same() {
    let d = daemon(&hook("guard", ""));
    d.sb.settings("[record]\nenabled = false\n");
    let record = wait_weakened(&d);
    assert_eq!(
        record["weakened"],
        json!([
            {"moment": "PreToolUse", "hook": "guard", "change": "removed"},
            {"change": "[record] enabled turned off: decisions are no longer journaled"}
        ])
    );
    assert!(
        of_kind(&d, "reload")
            .iter()
            .all(|r| r["generation"] != record["generation"]),
        "only the weakening is written with the journal off"
    );
}

#[test]
fn a_reload_that_only_adds_or_strengthens_writes_no_weakened_record() {
    let d = daemon(&hook("guard", "matcher = \"Bash\"\ntimeout = 5"));
    // Stronger: on_failure refuse, a wider matcher, a longer timeout, one hook more, a protected path.
    let stronger = format!(
        "{}{}[protect]\npaths = [\"/srv/a\"]\n",
        hook(
            "guard",
            "matcher = \"Bash|Edit\"\ntimeout = 9\non_failure = \"refuse\""
        ),
        hook("another", "")
    );
    d.sb.settings(&stronger);
    wait_until(T, "the stronger settings in force", || {
        d.status()["hooks"]["PreToolUse"] == 2
    });
    // A reload after it: whatever the first wrote is in the journal once this one's record is.
    let generation = d.reload()["generation"].as_u64().unwrap();
    wait_reload(&d, generation);
    assert!(of_kind(&d, "weakened").is_empty(), "{:?}", d.journal());
    let status = status_json(&d);
    assert!(status["last_weakened"].is_null(), "{status}");
    assert_eq!(
        status["protect"],
        json!({"enabled": true, "paths": 1}),
        "{status}"
    );
    assert!(!status_for_people(&d).contains("weakened"));
    assert!(!d.log_text().contains("guard less than before"));
}

/// The journal path helper agrees with what `status` says.
#[test]
fn the_journal_read_here_is_the_daemons() {
    let d = daemon(&hook("guard", ""));
    assert_eq!(
        Path::new(d.status()["record"]["journal"].as_str().unwrap()),
        d.journal_file()
    );
}
