//! The built-in guard against its corpus (`tests/guard/*.toml`): commands and file reads with the
//! verdict expected and why, gathered from what guards and their users report. Each case is judged by
//! the guard as the example settings set it (every rule at its default); then every refused shell
//! command is wrapped in each carrier a shell offers (`sudo`, `sh -c`, `env`, `timeout`, a function, a
//! here-string, a pipe into a shell, ...) and must stay refused: a rule that holds only for the plain
//! spelling is no guard.
//!
//! A case:
//!
//! ```toml
//! [[case]]
//! command = "rm -rf ~"          # a shell tool's command; or `tool` and `path` for a file tool
//! verdict = "refuse"            # "refuse", "ask" or "allow"
//! rule = "delete-root"          # the rule expected to find it (refuse and ask)
//! why = "deletes the home folder"
//! cwd = "/home/user/project"    # optional: where the call is made (this is the default)
//! home = "/home/user"            # optional: the home folder (this is the default)
//! gap = true                    # optional: a known gap, the verdict meant but not given yet
//! ```

use std::path::{Path, PathBuf};

use hookd::guard::{Action, Guard};
use serde_json::{Map, Value, json};

/// The home folder and the project every case is judged in, unless it says otherwise.
const HOME: &str = "/home/user";
const PROJECT: &str = "/home/user/project";

#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    command: Option<String>,
    tool: Option<String>,
    path: Option<String>,
    verdict: String,
    rule: Option<String>,
    why: String,
    cwd: Option<String>,
    /// The home folder, when the case needs one of its own (default /home/user).
    home: Option<String>,
    /// Not wrapped in carriers (a case about a carrier itself, or one whose quoting a carrier changes).
    #[serde(default)]
    plain_only: bool,
    /// A known gap: the verdict the case states is the one meant, and the guard does not give it yet.
    /// Held the other way round, so that the day it is closed the test says to take the mark off.
    #[serde(default)]
    gap: bool,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CorpusFile {
    case: Vec<Case>,
}

/// Every case of every corpus file, with its file's name.
fn corpus() -> Vec<(String, Case)> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/guard");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let parsed: CorpusFile =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        cases.extend(parsed.case.into_iter().map(|case| (name.clone(), case)));
    }
    cases
}

fn event(case: &Case, command: Option<&str>) -> Map<String, Value> {
    let cwd = case.cwd.as_deref().unwrap_or(PROJECT);
    let value = match (command, &case.tool) {
        (Some(command), _) => {
            json!({"tool_name": "Bash", "tool_input": {"command": command}, "cwd": cwd})
        }
        (None, Some(tool)) => {
            json!({"tool_name": tool, "tool_input": {"file_path": case.path}, "cwd": cwd})
        }
        (None, None) => panic!("a case needs a command or a tool: {case:?}"),
    };
    value.as_object().unwrap().clone()
}

/// What the guard says of `event`: "refuse", "ask" or "allow", with the rule.
fn judged(guard: &Guard, case: &Case, event: &Map<String, Value>) -> (String, Option<String>) {
    match guard.judge(event, Path::new(case.home.as_deref().unwrap_or(HOME))) {
        None => ("allow".into(), None),
        Some(v) => (
            match v.action {
                Action::Refuse => "refuse",
                Action::Ask => "ask",
                Action::Off => "off",
            }
            .into(),
            Some(v.rule.to_string()),
        ),
    }
}

#[test]
fn the_guard_gives_every_case_of_its_corpus_the_verdict_expected() {
    let guard = Guard::default();
    let cases = corpus();
    assert!(
        cases.len() >= 10,
        "the corpus is missing: {} cases",
        cases.len()
    );
    let mut wrong = Vec::new();
    for (file, case) in &cases {
        let (verdict, rule) = judged(&guard, case, &event(case, case.command.as_deref()));
        let rule_ok = case.verdict == "allow" || case.rule.is_none() || rule == case.rule;
        let right = verdict == case.verdict && rule_ok;
        if case.gap {
            if right {
                wrong.push(format!(
                    "{file}: {:?}: a known gap now closed ({verdict}): take its `gap = true` off",
                    case.command
                        .as_deref()
                        .or(case.path.as_deref())
                        .unwrap_or("")
                ));
            }
            continue;
        }
        if !right {
            wrong.push(format!(
                "{file}: {:?}: expected {} ({}), got {verdict} ({})  [{}]",
                case.command
                    .as_deref()
                    .or(case.path.as_deref())
                    .unwrap_or(""),
                case.verdict,
                case.rule.as_deref().unwrap_or("-"),
                rule.as_deref().unwrap_or("-"),
                case.why
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cases judged wrong:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

/// The carriers a refused command is wrapped in: each gives the command run another way, or `None`
/// when its quoting cannot hold this command.
fn carriers(command: &str) -> Vec<(&'static str, String)> {
    let mut wrapped = vec![
        ("sudo", format!("sudo {command}")),
        ("env", format!("env {command}")),
        ("env -i", format!("env -i PATH=/usr/bin {command}")),
        ("timeout", format!("timeout 10 {command}")),
        ("nice", format!("nice -n 5 {command}")),
        ("nohup", format!("nohup {command}")),
        ("command", format!("command {command}")),
        ("and", format!("true && {command}")),
        ("or", format!("false || {command}")),
        ("list", format!("echo start; {command}")),
        ("subshell", format!("( {command} )")),
        ("group", format!("{{ {command}; }}")),
        // The space keeps `$((` apart: `$((cd x && rm y))` is arithmetic, an error that runs nothing.
        ("substitution", format!("echo $( {command})")),
        ("function", format!("f() {{ {command}; }}; f")),
        ("if", format!("if true; then {command}; fi")),
        ("here-doc", format!("bash <<'EOF'\n{command}\nEOF")),
    ];
    if !command.contains('\'') {
        wrapped.extend([
            ("sh -c", format!("sh -c '{command}'")),
            ("bash -lc", format!("bash -lc '{command}'")),
            ("eval", format!("eval '{command}'")),
            ("here-string", format!("bash <<< '{command}'")),
            ("pipe to sh", format!("echo '{command}' | sh")),
        ]);
    }
    if !command.contains(['"', '\\', '$', '`']) {
        wrapped.push(("sudo sh -c", format!("sudo sh -c \"{command}\"")));
    }
    wrapped
}

#[test]
fn a_refused_command_stays_refused_in_every_carrier() {
    let guard = Guard::default();
    let mut let_through = Vec::new();
    let mut tried = 0;
    for (file, case) in corpus() {
        let Some(command) = case.command.as_deref() else {
            continue;
        };
        if case.verdict != "refuse" || case.plain_only || case.gap || case.cwd.is_some() {
            continue;
        }
        for (carrier, wrapped) in carriers(command) {
            tried += 1;
            let (verdict, _) = judged(&guard, &case, &event(&case, Some(&wrapped)));
            if verdict != "refuse" {
                let_through.push(format!("{file}: {carrier}: {wrapped:?} was {verdict}"));
            }
        }
    }
    assert!(tried > 0);
    assert!(
        let_through.is_empty(),
        "{} of {tried} wrapped refusals went through:\n{}",
        let_through.len(),
        let_through.join("\n")
    );
}
