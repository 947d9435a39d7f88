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
