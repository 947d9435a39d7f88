//! The guard as a whole: the actions set per rule, and the reason's shape. The rules' own cases are the
//! corpus (`tests/guard/*.toml`, run by `tests/it/guard_corpus.rs`).

use std::path::Path;

use serde_json::json;

use super::*;

fn event(command: &str) -> Map<String, Value> {
    json!({"tool_name": "Bash", "tool_input": {"command": command}, "cwd": "/home/u/p"})
        .as_object()
        .unwrap()
        .clone()
}

#[test]
fn an_unknown_rule_is_an_error_with_a_did_you_mean() {
    let e = Guard::with(&[("delete-rot".into(), Action::Off)]).unwrap_err();
    assert!(e.contains("did you mean \"delete-root\""), "{e}");
    assert!(e.contains("git-discard"), "{e}");
}

#[test]
fn every_rule_has_a_distinct_name_and_the_defaults_are_what_the_table_says() {
    let guard = Guard::default();
    for (i, rule) in RULES.iter().enumerate() {
        assert_eq!(guard.action(rule.name), rule.default);
        assert!(RULES[i + 1..].iter().all(|r| r.name != rule.name));
    }
    assert!(guard.changed().is_empty());
    let set = Guard::with(&[(SECRETS.into(), Action::Ask)]).unwrap();
    assert_eq!(set.changed(), [(SECRETS, Action::Ask)]);
}

#[test]
fn a_rule_turned_off_lets_its_finds_through_and_ask_asks() {
    let home = Path::new("/home/u");
    let refused = Guard::default().judge(&event("rm -rf /"), home).unwrap();
    assert_eq!(
        (refused.action, refused.rule),
        (Action::Refuse, DELETE_ROOT)
    );
    assert!(
        refused.reason.contains("rules.delete-root = \"off\""),
        "{}",
        refused.reason
    );
    let off = Guard::with(&[(DELETE_ROOT.into(), Action::Off)]).unwrap();
    assert_eq!(off.judge(&event("rm -rf /"), home), None);
    let ask = Guard::with(&[(DELETE_ROOT.into(), Action::Ask)]).unwrap();
    assert_eq!(
        ask.judge(&event("rm -rf /"), home).unwrap().action,
        Action::Ask
    );
}

#[test]
fn a_call_that_is_no_tool_call_is_let_through() {
    let home = Path::new("/home/u");
    let prompt = json!({"prompt": "rm -rf /"});
    assert_eq!(
        Guard::default().judge(prompt.as_object().unwrap(), home),
        None
    );
}

fn judged(event: Value) -> Option<&'static str> {
    Guard::default()
        .judge(event.as_object().unwrap(), Path::new("/home/user"))
        .map(|v| v.rule)
}

#[test]
fn a_command_field_left_empty_or_of_another_type_does_not_hide_the_next() {
    for empty in [
        json!(""),
        json!(null),
        json!(5),
        json!({"a": 1}),
        json!("  "),
    ] {
        let event = json!({"tool_name": "Bash", "cwd": "/home/user/project",
            "tool_input": {"command": empty, "cmd": "rm -rf ~"}});
        assert_eq!(judged(event), Some(DELETE_ROOT), "command = {empty}");
    }
}

#[test]
fn a_text_editor_s_verb_is_no_command_line_and_its_path_is_judged() {
    for tool in ["str_replace_based_edit_tool", "str_replace_editor"] {
        let event = json!({"tool_name": tool, "cwd": "/home/user/project",
            "tool_input": {"command": "view", "path": "/home/user/.ssh/id_rsa"}});
        assert_eq!(judged(event), Some(SECRETS), "{tool}");
        let event = json!({"tool_name": tool, "cwd": "/home/user/project",
            "tool_input": {"command": "view", "path": "src/main.rs"}});
        assert_eq!(judged(event), None, "{tool}");
    }
    // A shell tool's one word stays a command.
    let event = json!({"tool_name": "Bash", "cwd": "/home/user/project",
        "tool_input": {"command": "view", "path": "/home/user/.ssh/id_rsa"}});
    assert_eq!(judged(event), None);
}

#[test]
fn a_shell_tool_runs_in_the_folder_its_input_names() {
    // Codex's shell: a list of words and a workdir.
    let event = json!({"tool_name": "shell", "cwd": "/home/user/project",
        "tool_input": {"command": ["rm", "-rf", "*"], "workdir": "/"}});
    assert_eq!(judged(event), Some(DELETE_ROOT));
    // Gemini CLI's run_shell_command: a directory inside the project, relative to it.
    let event = json!({"tool_name": "run_shell_command", "cwd": "/home/user/project",
        "tool_input": {"command": "rm -rf *", "directory": ".."}});
    assert_eq!(judged(event), Some(DELETE_ROOT));
    let event = json!({"tool_name": "run_shell_command", "cwd": "/home/user/project",
        "tool_input": {"command": "rm -rf out", "directory": "build"}});
    assert_eq!(judged(event), None);
    let event = json!({"tool_name": "run_shell_command", "cwd": "/home/user/project",
        "tool_input": {"command": "rm -rf ../..", "directory": "build"}});
    assert_eq!(judged(event), Some(DELETE_ROOT));
}

#[test]
fn a_file_tool_s_file_or_uri_field_is_judged() {
    let event = json!({"tool_name": "read_file", "cwd": "/home/user/project",
        "tool_input": {"file": "/home/user/.ssh/id_rsa"}});
    assert_eq!(judged(event), Some(SECRETS));
    let event = json!({"tool_name": "mcp__fs__read_resource", "cwd": "/home/user/project",
        "tool_input": {"uri": "file:///home/user/.ssh/id_rsa"}});
    assert_eq!(judged(event), Some(SECRETS));
    let event = json!({"tool_name": "read_many_files", "cwd": "/home/user/project",
        "tool_input": {"paths": ["src/**"], "include": ["**/.env"]}});
    assert_eq!(judged(event), Some(SECRETS));
}

/// A line far larger or deeper than any agent sends is judged, and the guard returns (whatever it
/// decides): it never panics, and its loops are bounded.
#[test]
fn a_pathological_line_is_judged_and_the_guard_returns() {
    let home = Path::new("/home/u");
    let lines = [
        format!("echo {}", "a".repeat(1 << 20)),
        format!("{}rm -rf ~{}", "(".repeat(10_000), ")".repeat(10_000)),
        ";".repeat(100_000),
        "true;".repeat(100_000),
        format!("{}true{}", "$(".repeat(10_000), ")".repeat(10_000)),
        format!("{}true{}", "{ ".repeat(10_000), "; }".repeat(10_000)),
        "'".repeat(100_001),
        format!("rm -rf {}", "{a,".repeat(10_000)),
        "a | ".repeat(50_000) + "sh",
        "x=$x$x$x$x; ".repeat(20_000),
    ];
    for line in &lines {
        let _ = Guard::default().judge(&event(line), home);
    }
}
