//! Properties of the verdict (contract 8), checked with proptest over generated fires: each hook's run (how
//! it ended, what it printed) is read by `reading::read` as `fire` reads it, and the outcomes are folded by
//! `verdict::fold` in the settings file's order.
//!
//! - The verdict does not depend on the order the hooks finish in: a real [`Engine`] in this process runs
//!   real shell hooks, each held until the test lets it go, in a random order, one after the other; the
//!   decision (refused, permission, reason, adds, the rewritten input and output) must be the fold of
//!   every hook's answer read in the settings file's order.
//! - The first refusal in settings order gives the reason; later refusals never replace it.
//! - Every hook's adds are kept, hook by hook in settings order, each hook's in its own order.
//! - The verdict refuses exactly when some hook refused, and then always with a reason.
//! - A hook that says nothing (or fails under `on_failure = "ignore"`) changes nothing, wherever it is.
//!
//! And with the answers beyond refuse and add (allow, ask, a rewritten tool input or output, in hookd's
//! short fields and in Claude Code's, Gemini CLI's and Copilot CLI's words):
//!
//! - When the hooks rewrite different fields, even the fold in finishing order (no reassembly) gives the
//!   same refused, permission, input and output. (That the whole verdict does not depend on the order the
//!   hooks finish in, once put back in settings order, is the engine's property above, with these answers
//!   too.)
//! - A refusal anywhere refuses, with no permission and no rewrite; else an ask anywhere holds the call
//!   back with `permission` ask and the first ask's reason; else an allow allows.
//! - Rewrites of different fields compose to the same input in any order; two hooks that change one field
//!   to different values conflict, refused, and the message names both in settings order.
//! - In a chain (`sequential`), the result is each rewrite applied in turn.

use std::path::Path;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use hookd::engine::{Engine, Fire as EngineFire};
use hookd::protocol::Event;
use hookd::settings::Settings;

use hookd::decision::{Outcome, Permission, Verdict};
use hookd::engine::reading::{self, Exit, Run};
use hookd::engine::verdict::{self, Heard, Originals};
use hookd::settings::OnFailure;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Plenty for functions this small; no failure file is written (the shrunk case is in the test's output).
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 1000,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// One hook of a fire as the runner hands it over.
#[derive(Clone)]
struct HookRun {
    name: String,
    exit: Exit,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    via_shell: bool,
    on_failure: OnFailure,
}

/// Shown with its output as text, so that a failing case can be read.
impl std::fmt::Debug for HookRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookRun")
            .field("name", &self.name)
            .field("exit", &self.exit)
            .field("stdout", &String::from_utf8_lossy(&self.stdout))
            .field("stderr", &String::from_utf8_lossy(&self.stderr))
            .field("via_shell", &self.via_shell)
            .field("on_failure", &self.on_failure)
            .finish()
    }
}

/// A fire: its moment and its hooks' runs, in the settings file's order.
#[derive(Debug, Clone)]
struct Fire {
    moment: &'static str,
    runs: Vec<HookRun>,
}

impl Fire {
    /// Each run read as `fire` reads it, in the order given.
    fn outcomes(&self, runs: &[HookRun]) -> Vec<Heard> {
        runs.iter()
            .map(|run| {
                reading::read(Run {
                    hook: &run.name,
                    moment: self.moment,
                    exit: &run.exit,
                    stdout: &run.stdout,
                    stderr: &run.stderr,
                    via_shell: run.via_shell,
                    on_failure: run.on_failure,
                })
            })
            .collect()
    }
}

/// Short text, blank now and then: reasons and adds that are empty or white space are their own cases.
fn words() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(" \n".to_string()),
        "[a-z]{1,6}( [a-z]{1,6}){0,2}",
    ]
}

fn bytes(text: String) -> Vec<u8> {
    text.into_bytes()
}

/// What a hook prints on stdout: nothing, text, each JSON form hooks answer with, broken JSON, bytes.
fn stdout() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(Vec::new()),
        words().prop_map(bytes),
        words().prop_map(|r| bytes(format!(r#"{{"refused":{r:?}}}"#))),
        Just(bytes(r#"{"refused":true}"#.to_string())),
        (words(), words()).prop_map(|(r, a)| bytes(format!(r#"{{"refused":{r:?},"adds":{a:?}}}"#))),
        words().prop_map(|r| bytes(format!(r#"{{"decision":"block","reason":{r:?}}}"#))),
        words().prop_map(|r| bytes(format!(
            r#"{{"hookSpecificOutput":{{"permissionDecision":"deny","permissionDecisionReason":{r:?}}}}}"#
        ))),
        words().prop_map(|a| bytes(format!(r#"{{"adds":{a:?}}}"#))),
        (words(), words()).prop_map(|(a, b)| bytes(format!(
            r#"{{"hookSpecificOutput":{{"additionalContext":{a:?}}},"adds":{b:?}}}"#
        ))),
        words().prop_map(|r| bytes(format!(r#"{{"reason":{r:?}}}"#))),
        Just(bytes(r#"{"refused": "#.to_string())),
        proptest::collection::vec(any::<u8>(), 0..12),
    ]
}

/// How a hook's process ended; exits 0 and 2 most often, as in life.
fn exit() -> impl Strategy<Value = Exit> {
    prop_oneof![
        4 => Just(Exit::Code(0)),
        3 => Just(Exit::Code(2)),
        1 => prop_oneof![Just(1), Just(126), Just(127), any::<i32>()].prop_map(Exit::Code),
        1 => (1..32i32).prop_map(Exit::Signal),
        1 => (1..10_000u64).prop_map(|ms| Exit::TimedOut(Duration::from_millis(ms))),
        1 => words().prop_map(Exit::CouldNotStart),
        1 => Just(Exit::Cancelled("the client left")),
        1 => Just(Exit::Answered),
        1 => "[a-z ]{1,12}".prop_map(Exit::Broken),
    ]
}

fn on_failure() -> impl Strategy<Value = OnFailure> {
    prop_oneof![3 => Just(OnFailure::Ignore), 1 => Just(OnFailure::Refuse)]
}

/// A fire of up to 8 hooks, each named after its place in the settings file.
fn fire() -> impl Strategy<Value = Fire> {
    let run = (exit(), stdout(), words(), any::<bool>(), on_failure());
    (
        prop_oneof![Just("PreToolUse"), Just("Stop"), Just("UserPromptSubmit")],
        proptest::collection::vec(run, 0..8),
    )
        .prop_map(|(moment, runs)| Fire {
            moment,
            runs: runs
                .into_iter()
                .enumerate()
                .map(
                    |(i, (exit, stdout, stderr, via_shell, on_failure))| HookRun {
                        name: format!("hook-{i}"),
                        exit,
                        stdout,
                        stderr: stderr.into_bytes(),
                        via_shell,
                        on_failure,
                    },
                )
                .collect(),
        })
}

/// A fire and an order its hooks could finish in (a permutation of their indices).
fn fire_and_finishing_order() -> impl Strategy<Value = (Fire, Vec<usize>)> {
    fire().prop_flat_map(|fire| {
        let order: Vec<usize> = (0..fire.runs.len()).collect();
        (Just(fire), Just(order).prop_shuffle())
    })
}

/// Outcomes made directly rather than read: any kind, any reason (even none), any adds.
fn raw_outcomes() -> impl Strategy<Value = Vec<Heard>> {
    let kind = prop_oneof![
        Just(Outcome::Nothing),
        Just(Outcome::Adds),
        Just(Outcome::Refused),
        Just(Outcome::Failed)
    ];
    let outcome = (
        kind,
        proptest::option::of("[a-z]{0,4}"),
        proptest::collection::vec("[a-z]{1,3}", 0..3),
    )
        .prop_map(|(kind, reason, adds)| Heard {
            reason,
            adds,
            ..Heard::new(kind)
        });
    proptest::collection::vec(outcome, 0..10)
}

/// Outcomes of both sorts: read from generated runs, and made directly.
fn outcomes() -> impl Strategy<Value = Vec<Heard>> {
    prop_oneof![
        fire().prop_map(|fire| fire.outcomes(&fire.runs)),
        raw_outcomes()
    ]
}

/// Folds outcomes named after their place (hook-0, hook-1, ...), at a moment with nothing to rewrite.
fn fold(outcomes: &[Heard]) -> Verdict {
    let names: Vec<String> = (0..outcomes.len()).map(|i| format!("hook-{i}")).collect();
    verdict::fold(
        names.iter().map(String::as_str).zip(outcomes),
        verdict::Originals::default(),
        false,
    )
}

fn first_refusal(outcomes: &[Heard]) -> Option<&Heard> {
    outcomes.iter().find(|o| o.kind == Outcome::Refused)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn whether_it_refuses_does_not_depend_on_any_order(
        (fire, finishing_order) in fire_and_finishing_order()
    ) {
        // Folding in the finishing order itself (no reassembly) may pick another reason and order the adds
        // otherwise, but never changes whether the fire is refused.
        let in_settings_order = fold(&fire.outcomes(&fire.runs));
        let as_finished: Vec<HookRun> =
            finishing_order.iter().map(|&i| fire.runs[i].clone()).collect();
        let verdict = fold(&fire.outcomes(&as_finished));
        prop_assert_eq!(verdict.refused, in_settings_order.refused);
        let mut adds = verdict.adds;
        let mut expected = in_settings_order.adds;
        adds.sort();
        expected.sort();
        prop_assert_eq!(adds, expected, "the same adds, whatever their order");
    }

    #[test]
    fn the_first_refusal_in_settings_order_wins(outcomes in outcomes()) {
        let verdict = fold(&outcomes);
        let first = first_refusal(&outcomes);
        prop_assert_eq!(verdict.reason, first.and_then(|o| o.reason.clone()));
        // Nothing after the first refusal can change the reason, whatever it says.
        if let Some(at) = outcomes.iter().position(|o| o.kind == Outcome::Refused) {
            let mut later_changed = outcomes.clone();
            for later in &mut later_changed[at + 1..] {
                later.kind = Outcome::Refused;
                later.reason = Some("a later reason".into());
            }
            prop_assert_eq!(fold(&later_changed).reason, first.and_then(|o| o.reason.clone()));
        }
    }

    #[test]
    fn adds_keep_settings_order(outcomes in outcomes()) {
        let verdict = fold(&outcomes);
        let expected: Vec<String> = outcomes.iter().flat_map(|o| o.adds.iter().cloned()).collect();
        prop_assert_eq!(verdict.adds, expected);
    }

    #[test]
    fn refused_exactly_when_some_hook_refused(outcomes in outcomes()) {
        let verdict = fold(&outcomes);
        prop_assert_eq!(verdict.refused, outcomes.iter().any(|o| o.kind == Outcome::Refused));
        prop_assert_eq!(verdict.reason.is_some(), first_refusal(&outcomes).is_some_and(|o| o.reason.is_some()));
    }

    #[test]
    fn a_refused_fire_always_has_a_reason(fire in fire()) {
        // Outcomes as read from real answers: a refusal always says something.
        let verdict = fold(&fire.outcomes(&fire.runs));
        if verdict.refused {
            let reason = verdict.reason.unwrap_or_default();
            prop_assert!(!reason.trim().is_empty(), "refused with reason {:?}", reason);
        } else {
            prop_assert_eq!(verdict.reason, None);
        }
    }

    #[test]
    fn a_hook_that_says_nothing_changes_nothing(
        outcomes in outcomes(),
        at in any::<prop::sample::Index>(),
        failed in any::<bool>(),
    ) {
        let mut with_silent = outcomes.clone();
        let silent = Heard {
            error: failed.then(|| "exit 1".to_string()),
            ..Heard::new(if failed { Outcome::Failed } else { Outcome::Nothing })
        };
        with_silent.insert(at.index(outcomes.len() + 1), silent);
        prop_assert_eq!(fold(&with_silent), fold(&outcomes));
    }
}

// ---- answers beyond refuse and add: allow, ask, rewrites ----------------------------------------------

/// The fields of a tool input that the hooks of a fire may all rewrite (so that two may rewrite one).
const SHARED_INPUT_FIELDS: &[&str] = &["command", "timeout", "description"];

/// One field per hook, for fires whose hooks rewrite different fields: hook N rewrites the N-th only.
const OWN_INPUT_FIELDS: [&str; 8] = [
    "command",
    "timeout",
    "description",
    "file_path",
    "content",
    "pattern",
    "path",
    "url",
];

/// The fields of a tool output that the hooks of a fire may all rewrite.
const SHARED_OUTPUT_FIELDS: &[&str] = &["stdout", "stderr"];

/// One output field per hook.
const OWN_OUTPUT_FIELDS: [&str; 8] = [
    "stdout",
    "stderr",
    "exit_code",
    "interrupted",
    "isImage",
    "o5",
    "o6",
    "o7",
];

/// The tool input every generated fire's event carries (at a moment whose input can be rewritten).
static ORIGINAL_INPUT: LazyLock<Value> = LazyLock::new(
    || json!({"command": "rm x", "timeout": 5, "description": "d", "file_path": "/tmp/x"}),
);

/// The tool output every generated fire's event carries (at a moment whose output can be rewritten).
static ORIGINAL_OUTPUT: LazyLock<Value> =
    LazyLock::new(|| json!({"stdout": "token=abc", "stderr": "", "exit_code": 0}));

/// A value for a rewritten field, from a small set: the originals' values among them (so that a hook may
/// echo a field unchanged, and two hooks may change one the same way), and null (the field removed).
fn field_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(json!("rm x")),
        Just(json!("rm -i x")),
        Just(json!("mv x .trash")),
        Just(json!(5)),
        Just(json!(9)),
        Just(json!("d")),
        Just(json!("token=[REDACTED]")),
    ]
}

/// Some of `pool`'s fields (at least one), each with a value.
fn some_fields(pool: Vec<&'static str>) -> impl Strategy<Value = Map<String, Value>> {
    let most = pool.len();
    proptest::sample::subsequence(pool, 1..=most)
        .prop_flat_map(|names| {
            names
                .into_iter()
                .map(|name| (Just(name), field_value()))
                .collect::<Vec<_>>()
        })
        .prop_map(|pairs| {
            pairs
                .into_iter()
                .map(|(name, value)| (name.to_string(), value))
                .collect()
        })
}

/// Whose words an answer is written in.
#[derive(Debug, Clone, Copy)]
enum Dialect {
    /// hookd's own short fields: `allow`, `ask`, `refused`, `input`, `output`.
    Short,
    /// `hookSpecificOutput.permissionDecision`, `updatedInput`, `updatedToolOutput`.
    Claude,
    /// `decision`, `hookSpecificOutput.tool_input`.
    Gemini,
    /// A flat `permissionDecision`, `modifiedArgs`.
    Copilot,
}

fn dialect() -> impl Strategy<Value = Dialect> {
    prop_oneof![
        Just(Dialect::Short),
        Just(Dialect::Claude),
        Just(Dialect::Gemini),
        Just(Dialect::Copilot),
    ]
}

/// A hook's word on the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Word {
    Allow,
    Ask,
    Deny,
    /// Claude Code's "no opinion": read as nothing.
    Defer,
}

/// A hook's answer as JSON, each part in some agent's words.
#[derive(Debug, Clone)]
struct Answer {
    decision: Option<(Word, Dialect, Option<String>)>,
    /// The rewritten input: the fields it changes (null removes one), in whose words, and whether the
    /// original's other fields are echoed unchanged beside them (as Claude Code's `updatedInput` is
    /// written).
    input: Option<(Dialect, Map<String, Value>, bool)>,
    /// The rewritten output: as Claude Code's `updatedToolOutput` (else `output`), the value (an object's
    /// fields are laid over the original's when echoed), and whether the original's fields are echoed.
    output: Option<(bool, Value, bool)>,
    adds: Option<String>,
}

impl Answer {
    fn json(&self) -> Value {
        let mut top = Map::new();
        let mut specific = Map::new();
        if let Some((word, dialect, reason)) = &self.decision {
            let name = match word {
                Word::Allow => "allow",
                Word::Ask => "ask",
                Word::Deny => "deny",
                Word::Defer => "defer",
            };
            let (fields, word_key, reason_key) = match dialect {
                Dialect::Short => {
                    let key = match word {
                        Word::Allow => "allow",
                        Word::Ask => "ask",
                        Word::Deny => "refused",
                        // No short field says "defer": nothing is said.
                        Word::Defer => "defer",
                    };
                    top.insert(
                        key.into(),
                        reason.clone().map_or(Value::Bool(true), Value::String),
                    );
                    (None, "", "")
                }
                Dialect::Claude => (
                    Some(&mut specific),
                    "permissionDecision",
                    "permissionDecisionReason",
                ),
                Dialect::Gemini => (Some(&mut top), "decision", "reason"),
                Dialect::Copilot => (
                    Some(&mut top),
                    "permissionDecision",
                    "permissionDecisionReason",
                ),
            };
            if let Some(fields) = fields {
                fields.insert(word_key.into(), name.into());
                if let Some(reason) = reason {
                    fields.insert(reason_key.into(), reason.clone().into());
                }
            }
        }
        if let Some((dialect, changes, echo)) = &self.input {
            let rewrite = Value::Object(laid_over(&ORIGINAL_INPUT, changes, *echo));
            match dialect {
                Dialect::Short => top.insert("input".into(), rewrite),
                Dialect::Claude => specific.insert("updatedInput".into(), rewrite),
                Dialect::Gemini => specific.insert("tool_input".into(), rewrite),
                Dialect::Copilot => top.insert("modifiedArgs".into(), rewrite),
            };
        }
        if let Some((claude, value, echo)) = &self.output {
            let value = match value {
                Value::Object(changes) => {
                    Value::Object(laid_over(&ORIGINAL_OUTPUT, changes, *echo))
                }
                whole => whole.clone(),
            };
            if *claude {
                specific.insert("updatedToolOutput".into(), value);
            } else {
                top.insert("output".into(), value);
            }
        }
        if let Some(adds) = &self.adds {
            top.insert("adds".into(), adds.clone().into());
        }
        if !specific.is_empty() {
            top.insert("hookSpecificOutput".into(), Value::Object(specific));
        }
        Value::Object(top)
    }
}

/// `changes` laid over the original's fields when `echo`, else alone.
fn laid_over(original: &Value, changes: &Map<String, Value>, echo: bool) -> Map<String, Value> {
    let mut fields = match original {
        Value::Object(fields) if echo => fields.clone(),
        _ => Map::new(),
    };
    fields.extend(changes.clone());
    fields
}

/// Which fields a hook's rewrites may touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fields {
    /// The same few for every hook (and, for the output, the whole value now and then): hooks may
    /// rewrite one field differently.
    Shared,
    /// As `Shared`, but an output is always rewritten field by field, never whole.
    SharedFieldsOnly,
    /// Its own: no two hooks rewrite the same field.
    Own,
}

/// An answer of hook number `index`, its rewrites' fields as `fields` says.
fn answer(fields: Fields, index: usize) -> impl Strategy<Value = Answer> {
    let (inputs, outputs) = match fields {
        Fields::Shared | Fields::SharedFieldsOnly => {
            (SHARED_INPUT_FIELDS.to_vec(), SHARED_OUTPUT_FIELDS.to_vec())
        }
        Fields::Own => (
            vec![OWN_INPUT_FIELDS[index]],
            vec![OWN_OUTPUT_FIELDS[index]],
        ),
    };
    let word = prop_oneof![
        3 => Just(Word::Allow),
        2 => Just(Word::Ask),
        1 => Just(Word::Deny),
        1 => Just(Word::Defer),
    ];
    let decision =
        proptest::option::weighted(0.6, (word, dialect(), proptest::option::of(words())));
    let input = proptest::option::weighted(0.5, (dialect(), some_fields(inputs), any::<bool>()));
    let output_value = match fields {
        Fields::Shared => prop_oneof![
            3 => some_fields(outputs).prop_map(Value::Object),
            1 => prop_oneof![Just(json!("token=[REDACTED]")), Just(json!("short"))],
        ]
        .boxed(),
        Fields::Own | Fields::SharedFieldsOnly => {
            some_fields(outputs).prop_map(Value::Object).boxed()
        }
    };
    let output = proptest::option::weighted(0.3, (any::<bool>(), output_value, any::<bool>()));
    let adds = proptest::option::weighted(0.3, words());
    (decision, input, output, adds).prop_map(|(decision, input, output, adds)| Answer {
        decision,
        input,
        output,
        adds,
    })
}

/// What hook number `index` prints: mostly an answer in the new words, sometimes one of the older forms.
fn rich_stdout(fields: Fields, index: usize) -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        2 => stdout(),
        5 => answer(fields, index).prop_map(|answer| bytes(answer.json().to_string())),
    ]
    .boxed()
}

/// The moments a rich fire happens at: those that take rewrites, and two that take none.
fn rich_moment() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        3 => Just("PreToolUse"),
        2 => Just("PostToolUse"),
        1 => Just("PermissionRequest"),
        1 => Just("Stop"),
        1 => Just("UserPromptSubmit"),
    ]
}

/// A fire of up to 8 hooks whose answers include allows, asks and rewrites, their fields as `fields` says.
fn rich_fire(fields: Fields) -> impl Strategy<Value = Fire> {
    (rich_moment(), 0..8usize)
        .prop_flat_map(move |(moment, n)| {
            let runs: Vec<_> = (0..n)
                .map(|i| {
                    (
                        exit(),
                        rich_stdout(fields, i),
                        words(),
                        any::<bool>(),
                        on_failure(),
                    )
                })
                .collect();
            (Just(moment), runs)
        })
        .prop_map(|(moment, runs)| Fire {
            moment,
            runs: runs
                .into_iter()
                .enumerate()
                .map(
                    |(i, (exit, stdout, stderr, via_shell, on_failure))| HookRun {
                        name: format!("hook-{i}"),
                        exit,
                        stdout,
                        stderr: stderr.into_bytes(),
                        via_shell,
                        on_failure,
                    },
                )
                .collect(),
        })
}

fn rich_fire_and_finishing_order(fields: Fields) -> impl Strategy<Value = (Fire, Vec<usize>)> {
    rich_fire(fields).prop_flat_map(|fire| {
        let order: Vec<usize> = (0..fire.runs.len()).collect();
        (Just(fire), Just(order).prop_shuffle())
    })
}

/// Each hook's outcome beside its name, in the settings file's order.
fn named(fire: &Fire) -> Vec<(String, Heard)> {
    fire.runs
        .iter()
        .map(|run| run.name.clone())
        .zip(fire.outcomes(&fire.runs))
        .collect()
}

/// The originals a fire at `moment` is rewritten from: the generated event's input and output, each
/// where the moment takes that rewrite.
fn originals(moment: &str) -> Originals<'_> {
    Originals {
        moment,
        input: hookd::moment::rewrites_input(moment).then_some(&*ORIGINAL_INPUT),
        output: hookd::moment::rewrites_output(moment).then_some(&*ORIGINAL_OUTPUT),
    }
}

/// Folds named outcomes, in the order given, at `moment`.
fn fold_named(moment: &str, outcomes: &[(String, Heard)], chained: bool) -> Verdict {
    verdict::fold(
        outcomes
            .iter()
            .map(|(name, outcome)| (name.as_str(), outcome)),
        originals(moment),
        chained,
    )
}

/// `rewrite` applied to `current` as the docs say: an object's fields replace the current's (null
/// removes one), anything else replaces the whole value.
fn apply_rewrite(current: &mut Value, rewrite: &Value) {
    match (current, rewrite) {
        (Value::Object(current), Value::Object(fields)) => {
            for (field, value) in fields {
                if value.is_null() {
                    current.remove(field);
                } else {
                    current.insert(field.clone(), value.clone());
                }
            }
        }
        (current, whole) => *current = whole.clone(),
    }
}

/// Every rewrite of `part` (the input or the output) applied in the order given, from `original`:
/// `Some` when they changed it.
fn applied_in_order<'a>(
    original: &Value,
    rewrites: impl IntoIterator<Item = &'a Option<Value>>,
) -> Option<Value> {
    let mut current = original.clone();
    for rewrite in rewrites.into_iter().flatten() {
        apply_rewrite(&mut current, rewrite);
    }
    (current != *original).then_some(current)
}

/// Every rewrite applied as the changes it makes to `original` (a field it gives with the original's
/// value, echoed, changes nothing), in the order given: how rewrites of different fields compose.
fn changes_applied<'a>(
    original: &Value,
    rewrites: impl IntoIterator<Item = &'a Option<Value>>,
) -> Option<Value> {
    let changes = rewrites
        .into_iter()
        .flatten()
        .map(|rewrite| match (original, rewrite) {
            (Value::Object(before), Value::Object(after)) => Value::Object(
                after
                    .iter()
                    .filter(|(field, value)| {
                        before.get(*field) != (!value.is_null()).then_some(*value)
                    })
                    .map(|(field, value)| (field.clone(), value.clone()))
                    .collect(),
            ),
            (_, whole) => whole.clone(),
        });
    let changes: Vec<Option<Value>> = changes.map(Some).collect();
    applied_in_order(original, &changes)
}

fn any_kind(outcomes: &[(String, Heard)], kind: Outcome) -> bool {
    outcomes.iter().any(|(_, o)| o.kind == kind)
}

fn first_of_kind(outcomes: &[(String, Heard)], kind: Outcome) -> Option<&Heard> {
    outcomes.iter().map(|(_, o)| o).find(|o| o.kind == kind)
}

/// `outcomes` without those of `kinds`.
fn without(outcomes: Vec<(String, Heard)>, kinds: &[Outcome]) -> Vec<(String, Heard)> {
    outcomes
        .into_iter()
        .filter(|(_, o)| !kinds.contains(&o.kind))
        .collect()
}

/// What a hook that says nothing may print and how it may end: every way of saying nothing, and failing
/// under `on_failure = "ignore"`.
fn silent_run() -> impl Strategy<Value = (Exit, &'static str)> {
    prop_oneof![
        Just((Exit::Code(0), "")),
        Just((Exit::Code(0), " \n")),
        Just((Exit::Code(0), "{}")),
        Just((Exit::Code(0), r#"{"input": null, "output": null}"#)),
        Just((
            Exit::Code(0),
            r#"{"hookSpecificOutput": {"permissionDecision": "defer"}}"#
        )),
        Just((
            Exit::Code(0),
            r#"{"allow": false, "ask": false, "refused": false}"#
        )),
        Just((Exit::Code(1), "oops")),
        Just((Exit::Code(0), r#"{"refused": "#)),
        Just((Exit::Code(127), "")),
        Just((
            Exit::TimedOut(Duration::from_secs(3)),
            r#"{"refused": "late"}"#
        )),
        Just((Exit::Signal(9), r#"{"input": {"command": "x"}}"#)),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn with_different_fields_rewritten_not_even_the_finishing_order_changes_the_call(
        (fire, finishing_order) in rich_fire_and_finishing_order(Fields::Own),
    ) {
        // Folded as the hooks finished (no reassembly): the reason and the adds' order may differ, but
        // not whether the call goes on, with what permission, and as what input and output.
        let in_settings_order = named(&fire);
        let as_finished: Vec<(String, Heard)> =
            finishing_order.iter().map(|&i| in_settings_order[i].clone()).collect();
        let expected = fold_named(fire.moment, &in_settings_order, false);
        let verdict = fold_named(fire.moment, &as_finished, false);
        // A hook that failed after the tool ran and refuses on failure withholds the whole output, which
        // conflicts with any other rewrite of it (and the output stays withheld either way).
        let withholds = in_settings_order
            .iter()
            .any(|(_, o)| o.kind == Outcome::Refused && o.error.is_some() && o.output.is_some());
        if !withholds {
            prop_assert_eq!(&expected.conflict, &None, "hooks rewriting their own fields conflicted");
            prop_assert_eq!(&verdict.conflict, &None);
        }
        prop_assert_eq!(verdict.refused, expected.refused);
        prop_assert_eq!(verdict.permission, expected.permission);
        prop_assert_eq!(verdict.input, expected.input);
        prop_assert_eq!(verdict.output, expected.output);
    }

    #[test]
    fn whether_the_call_is_refused_does_not_depend_on_the_finishing_order(
        (fire, finishing_order) in rich_fire_and_finishing_order(Fields::SharedFieldsOnly),
    ) {
        // Even where hooks rewrite the same fields: a conflict is one whichever hook came first. (An
        // output rewritten whole beside one rewritten field by field is left to the test below.)
        let in_settings_order = named(&fire);
        let as_finished: Vec<(String, Heard)> =
            finishing_order.iter().map(|&i| in_settings_order[i].clone()).collect();
        let expected = fold_named(fire.moment, &in_settings_order, false);
        let verdict = fold_named(fire.moment, &as_finished, false);
        prop_assert_eq!(verdict.refused, expected.refused);
        prop_assert_eq!(verdict.permission, expected.permission);
        prop_assert_eq!(verdict.conflict.is_some(), expected.conflict.is_some());
    }

    #[test]
    fn a_refusal_anywhere_refuses_with_no_permission_and_no_rewrite(
        fire in rich_fire(Fields::Shared),
        at in any::<prop::sample::Index>(),
        chained in any::<bool>(),
    ) {
        let mut outcomes = named(&fire);
        let refusal = Heard { reason: Some("no".into()), ..Heard::new(Outcome::Refused) };
        outcomes.insert(at.index(outcomes.len() + 1), ("refuser".into(), refusal));
        let verdict = fold_named(fire.moment, &outcomes, chained);
        // (After the tool ran, a refusal cannot undo it: the output as hooks rewrote it still holds.)
        prop_assert!(verdict.refused);
        prop_assert_eq!(verdict.permission, None);
        prop_assert_eq!(verdict.input, None);
        prop_assert_eq!(verdict.reason, first_of_kind(&outcomes, Outcome::Refused).unwrap().reason.clone());
        // And as read, without one put in: the same whenever some hook refused.
        let outcomes = named(&fire);
        let verdict = fold_named(fire.moment, &outcomes, chained);
        if any_kind(&outcomes, Outcome::Refused) {
            prop_assert!(verdict.refused);
            prop_assert_eq!(verdict.permission, None);
            prop_assert_eq!(verdict.input, None);
        }
    }

    #[test]
    fn an_ask_anywhere_without_a_refusal_asks_with_the_first_asks_reason(
        fire in rich_fire(Fields::Own),
        at in any::<prop::sample::Index>(),
        reason in "[a-z]{1,6}",
        chained in any::<bool>(),
    ) {
        let mut outcomes = without(named(&fire), &[Outcome::Refused]);
        let ask = Heard { reason: Some(reason), ..Heard::new(Outcome::Asked) };
        outcomes.insert(at.index(outcomes.len() + 1), ("asker".into(), ask));
        let verdict = fold_named(fire.moment, &outcomes, chained);
        prop_assert!(verdict.refused, "an ask holds the call back");
        prop_assert_eq!(verdict.permission, Some(Permission::Ask));
        prop_assert!(verdict.reason.as_deref().is_some_and(|r| !r.trim().is_empty()));
        prop_assert_eq!(verdict.reason, first_of_kind(&outcomes, Outcome::Asked).unwrap().reason.clone());
    }

    #[test]
    fn asks_as_read_ask_unless_a_hook_refused_or_rewrites_conflict(fire in rich_fire(Fields::Shared)) {
        let outcomes = named(&fire);
        let verdict = fold_named(fire.moment, &outcomes, false);
        if !any_kind(&outcomes, Outcome::Refused) && verdict.conflict.is_none() {
            if let Some(first) = first_of_kind(&outcomes, Outcome::Asked) {
                prop_assert!(verdict.refused);
                prop_assert_eq!(verdict.permission, Some(Permission::Ask));
                prop_assert_eq!(verdict.reason, first.reason.clone());
            } else if let Some(first) = first_of_kind(&outcomes, Outcome::Allowed) {
                prop_assert!(!verdict.refused);
                // An allow stands for the call as it runs: every hook that changed the input allowed.
                let original = originals(fire.moment).input;
                let changers_allowed = outcomes.iter().all(|(_, o)| {
                    let changes = match (&o.input, original) {
                        (Some(Value::Object(rewrite)), Some(Value::Object(base))) => rewrite
                            .iter()
                            .any(|(field, value)| base.get(field) != (!value.is_null()).then_some(value)),
                        (Some(rewrite), Some(base)) => rewrite != base,
                        _ => false,
                    };
                    !changes || o.kind == Outcome::Allowed
                });
                if changers_allowed {
                    prop_assert_eq!(verdict.permission, Some(Permission::Allow));
                    prop_assert_eq!(verdict.reason, first.reason.clone());
                } else {
                    prop_assert_eq!(verdict.permission, None);
                }
            } else {
                prop_assert!(!verdict.refused);
                prop_assert_eq!(verdict.permission, None);
                prop_assert_eq!(verdict.reason, None);
            }
        }
    }

    #[test]
    fn only_allows_allow(
        fire in rich_fire(Fields::Own),
        at in any::<prop::sample::Index>(),
        reason in proptest::option::of("[a-z]{1,6}"),
        chained in any::<bool>(),
    ) {
        let mut outcomes = without(named(&fire), &[Outcome::Refused, Outcome::Asked]);
        // No rewrite of the input: an allow stands only for the call as it runs (see
        // `an_allow_stands_only_for_the_call_as_it_will_run` in verdict.rs).
        for (_, outcome) in &mut outcomes {
            outcome.input = None;
        }
        let allow = Heard { reason, ..Heard::new(Outcome::Allowed) };
        outcomes.insert(at.index(outcomes.len() + 1), ("allower".into(), allow));
        let verdict = fold_named(fire.moment, &outcomes, chained);
        prop_assert!(!verdict.refused, "{:?}", verdict);
        prop_assert_eq!(verdict.permission, Some(Permission::Allow));
        prop_assert_eq!(verdict.reason, first_of_kind(&outcomes, Outcome::Allowed).unwrap().reason.clone());
    }

    #[test]
    fn rewrites_of_different_fields_compose_in_any_order(
        (fire, finishing_order) in rich_fire_and_finishing_order(Fields::Own),
    ) {
        let in_settings_order = without(named(&fire), &[Outcome::Refused]);
        let order: Vec<usize> = finishing_order.iter().copied().filter(|&i| i < in_settings_order.len()).collect();
        let as_finished: Vec<(String, Heard)> =
            order.iter().map(|&i| in_settings_order[i].clone()).collect();
        let originals = originals(fire.moment);
        let expected_input = originals
            .input
            .and_then(|input| changes_applied(input, in_settings_order.iter().map(|(_, o)| &o.input)));
        let expected_output = originals
            .output
            .and_then(|output| changes_applied(output, in_settings_order.iter().map(|(_, o)| &o.output)));
        for outcomes in [&in_settings_order, &as_finished] {
            let verdict = fold_named(fire.moment, outcomes, false);
            prop_assert_eq!(&verdict.conflict, &None);
            prop_assert_eq!(&verdict.input, &expected_input);
            prop_assert_eq!(&verdict.output, &expected_output);
        }
    }

    #[test]
    fn two_values_for_one_field_conflict_and_name_both_hooks_in_settings_order(
        fire in rich_fire(Fields::Own),
        field in proptest::sample::select(SHARED_INPUT_FIELDS.to_vec()),
        values in proptest::sample::subsequence(vec![json!("a"), json!("b"), json!(7), Value::Null], 2),
        kinds in (
            proptest::sample::select(vec![Outcome::Rewrote, Outcome::Allowed, Outcome::Asked]),
            proptest::sample::select(vec![Outcome::Rewrote, Outcome::Allowed, Outcome::Asked]),
        ),
        first_at in any::<prop::sample::Index>(),
        second_at in any::<prop::sample::Index>(),
        shuffled in any::<bool>(),
    ) {
        // At PreToolUse; the other hooks leave the field alone.
        let moment = "PreToolUse";
        let mut outcomes: Vec<(String, Heard)> = named(&fire)
            .into_iter()
            .map(|(name, mut outcome)| {
                if let Some(Value::Object(fields)) = &mut outcome.input {
                    fields.remove(field);
                }
                (name, outcome)
            })
            .collect();
        let mut values = values;
        if shuffled {
            values.reverse();
        }
        let rewriting = |kind: Outcome, value: Value| Heard {
            input: Some(json!({ field: value })),
            reason: (kind == Outcome::Asked).then(|| "sure?".to_string()),
            ..Heard::new(kind)
        };
        let first = first_at.index(outcomes.len() + 1);
        outcomes.insert(first, ("early".into(), rewriting(kinds.0, values[0].clone())));
        let second = first + 1 + second_at.index(outcomes.len() - first);
        outcomes.insert(second, ("late".into(), rewriting(kinds.1, values[1].clone())));
        let verdict = fold_named(moment, &outcomes, false);
        let conflict = verdict.conflict.clone().expect("a conflict");
        prop_assert!(
            conflict.contains(&format!("hooks early and late rewrote tool_input.{field} differently")),
            "{}", conflict
        );
        prop_assert!(conflict.contains(r#"sequential = ["PreToolUse"]"#), "{}", conflict);
        prop_assert!(verdict.refused);
        prop_assert_eq!(verdict.permission, None);
        prop_assert_eq!(verdict.input, None);
        let expected_reason = match first_of_kind(&outcomes, Outcome::Refused) {
            Some(refusal) => refusal.reason.clone(),
            None => Some(conflict),
        };
        prop_assert_eq!(verdict.reason, expected_reason);
        // Chained, the later simply replaces the earlier: no conflict.
        let chained = fold_named(moment, &outcomes, true);
        prop_assert_eq!(chained.conflict, None);
    }

    #[test]
    fn a_hook_that_says_nothing_or_fails_ignored_changes_nothing_anywhere(
        fire in rich_fire(Fields::Shared),
        at in any::<prop::sample::Index>(),
        (exit, stdout) in silent_run(),
        chained in any::<bool>(),
    ) {
        let outcomes = named(&fire);
        let silent = reading::read(Run {
            hook: "silent",
            moment: fire.moment,
            exit: &exit,
            stdout: stdout.as_bytes(),
            stderr: b"",
            via_shell: true,
            on_failure: OnFailure::Ignore,
        });
        prop_assert!(matches!(silent.kind, Outcome::Nothing | Outcome::Failed), "{:?}", silent);
        let mut with_silent = outcomes.clone();
        with_silent.insert(at.index(outcomes.len() + 1), ("silent".into(), silent));
        prop_assert_eq!(
            fold_named(fire.moment, &with_silent, chained),
            fold_named(fire.moment, &outcomes, chained)
        );
    }

    #[test]
    fn a_chain_is_each_rewrite_applied_in_turn(fire in rich_fire(Fields::Shared)) {
        let outcomes = named(&fire);
        let verdict = fold_named(fire.moment, &outcomes, true);
        prop_assert_eq!(&verdict.conflict, &None, "a chain never conflicts");
        let refused = any_kind(&outcomes, Outcome::Refused);
        prop_assert_eq!(verdict.refused, refused || any_kind(&outcomes, Outcome::Asked));
        let originals = originals(fire.moment);
        let expected_input = originals
            .input
            .and_then(|input| applied_in_order(input, outcomes.iter().map(|(_, o)| &o.input)))
            .filter(|_| !refused);
        let expected_output = originals
            .output
            .and_then(|output| applied_in_order(output, outcomes.iter().map(|(_, o)| &o.output)))
            .map(|output| verdict::in_the_tools_shape(originals.output, output));
        prop_assert_eq!(verdict.input, expected_input);
        prop_assert_eq!(verdict.output, expected_output);
    }
}

#[test]
fn no_hooks_is_the_empty_verdict() {
    assert_eq!(fold(&[]), Verdict::default());
}

/// A hook as the engine runs it: a shell command that waits for the test to let it go, then prints
/// `stdout` and `stderr` and exits with `code`.
#[derive(Debug, Clone)]
struct ShellHook {
    code: i32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    on_failure: OnFailure,
}

/// Up to 6 shell hooks, and an order for them to finish in (a permutation of their indices). Their
/// answers include allows, asks and rewrites of the same fields (so that they may conflict), in every
/// agent's words, as well as the older forms.
fn shell_fire() -> impl Strategy<Value = (&'static str, Vec<ShellHook>, Vec<usize>)> {
    // Exit 0 most often, so that the allows, asks and rewrites are read, not refused by an exit 2.
    let code =
        || prop_oneof![7 => Just(0), 2 => Just(2), 1 => Just(1), 1 => Just(3), 1 => Just(127)];
    (rich_moment(), 1..7usize)
        .prop_flat_map(move |(moment, n)| {
            let hooks: Vec<_> = (0..n)
                .map(|i| {
                    (
                        code(),
                        rich_stdout(Fields::Shared, i),
                        words(),
                        on_failure(),
                    )
                        .prop_map(|(code, stdout, stderr, on_failure)| {
                            ShellHook {
                                code,
                                stdout,
                                stderr: stderr.into_bytes(),
                                on_failure,
                            }
                        })
                })
                .collect();
            (Just(moment), hooks)
        })
        .prop_flat_map(|(moment, hooks)| {
            let order: Vec<usize> = (0..hooks.len()).collect();
            (Just(moment), Just(hooks), Just(order).prop_shuffle())
        })
}

/// The settings of `hooks` on `moment`, each `hook-N` waiting on the FIFO `go-N` in `dir`, then printing
/// the files `out-N` and `err-N`, noting its pid in `pid-N`, and exiting with its code.
fn settings_for(dir: &Path, moment: &str, hooks: &[ShellHook]) -> Settings {
    let mut toml = String::new();
    for (i, hook) in hooks.iter().enumerate() {
        std::fs::write(dir.join(format!("out-{i}")), &hook.stdout).unwrap();
        std::fs::write(dir.join(format!("err-{i}")), &hook.stderr).unwrap();
        nix::unistd::mkfifo(&dir.join(format!("go-{i}")), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let on_failure = match hook.on_failure {
            OnFailure::Ignore => "ignore",
            OnFailure::Refuse => "refuse",
        };
        toml.push_str(&format!(
            "[[hooks.{moment}]]\nname = \"hook-{i}\"\ntimeout = 30\non_failure = \"{on_failure}\"\n\
             command = 'echo $$ > pid-{i}.new && mv pid-{i}.new pid-{i} && read go < go-{i}; cat out-{i}; cat err-{i} >&2; exit {}'\n",
            hook.code
        ));
    }
    // The settings in a folder of their own: the call's `rm x` in the hooks' folder is ordinary work,
    // where in the settings' folder hookd's guard of itself would refuse it.
    let path = dir.join("conf/hooks.toml");
    Settings::parse(&path, "hooks.toml", &toml).expect("valid settings")
}

/// Waits until `done` holds, for at most ten seconds.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Lets the hooks go in `order`, each once the one before it has exited (its pid is gone from /proc or
/// a zombie no more): the engine sees them finish in exactly that order.
fn release_in_order(dir: &Path, order: &[usize]) {
    for &i in order {
        let pid_file = dir.join(format!("pid-{i}"));
        wait_for(&format!("hook-{i} to start"), || pid_file.exists());
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Opening a FIFO for writing waits for its reader: the hook is at its `read`.
        let mut go = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join(format!("go-{i}")))
            .unwrap();
        std::io::Write::write_all(&mut go, b"go\n").unwrap();
        drop(go);
        wait_for(&format!("hook-{i} to exit"), || {
            match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                Err(_) => true,
                // A zombie has exited: its run is being collected.
                Ok(stat) => stat
                    .rsplit(')')
                    .next()
                    .is_some_and(|rest| rest.trim_start().starts_with('Z')),
            }
        });
    }
}

/// What the hooks say, read in the settings file's order and folded from the event's tool input and
/// output: what the engine must decide.
fn expected(moment: &str, hooks: &[ShellHook]) -> Verdict {
    let outcomes: Vec<(String, Heard)> = hooks
        .iter()
        .enumerate()
        .map(|(i, hook)| {
            let name = format!("hook-{i}");
            let outcome = reading::read(Run {
                hook: &name,
                moment,
                exit: &Exit::Code(hook.code),
                stdout: &hook.stdout,
                stderr: &hook.stderr,
                via_shell: true,
                on_failure: hook.on_failure,
            });
            (name, outcome)
        })
        .collect();
    fold_named(moment, &outcomes, false)
}

proptest! {
    // Each case starts real processes: fewer cases than the pure properties.
    #![proptest_config(ProptestConfig { cases: 40, ..config() })]

    #[test]
    fn the_engines_decision_does_not_depend_on_the_order_hooks_finish(
        (moment, hooks, order) in shell_fire()
    ) {
        let dir = tempfile::tempdir().unwrap();
        let settings = settings_for(dir.path(), moment, &hooks);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let decision = runtime.block_on(async {
            let engine = Engine::new(settings);
            let mut fields = serde_json::Map::new();
            fields.insert("cwd".into(), dir.path().to_str().unwrap().into());
            // A session of its own, so that no Stop loop from another case counts.
            fields.insert("session_id".into(), format!("{order:?}{hooks:?}").into());
            fields.insert("tool_name".into(), "Bash".into());
            fields.insert("tool_input".into(), ORIGINAL_INPUT.clone());
            fields.insert("tool_response".into(), ORIGINAL_OUTPUT.clone());
            let fire = EngineFire { moment: moment.to_string(), agent: None, event: Event::from(fields) };
            let releasing = {
                let (dir, order) = (dir.path().to_path_buf(), order.clone());
                std::thread::spawn(move || release_in_order(&dir, &order))
            };
            let decision = engine.decide(fire, &engine.abandoned().child_token()).await;
            releasing.join().expect("the hooks were let go in order");
            decision
        });
        let decision = decision.expect("decided");
        let expected = expected(moment, &hooks);
        prop_assert_eq!(decision.refused, expected.refused);
        prop_assert_eq!(decision.permission, expected.permission);
        prop_assert_eq!(decision.reason, expected.reason);
        prop_assert_eq!(decision.adds, expected.adds);
        prop_assert_eq!(decision.input, expected.input);
        prop_assert_eq!(decision.output, expected.output);
        let names: Vec<String> = decision.hooks.iter().map(|h| h.name.clone()).collect();
        let in_settings_order: Vec<String> = (0..hooks.len()).map(|i| format!("hook-{i}")).collect();
        prop_assert_eq!(names, in_settings_order);
    }

    #[test]
    fn the_engines_sequential_chain_is_the_chained_fold(
        (moment, hooks, _) in shell_fire()
    ) {
        // Each hook prints what it was generated to print, whatever it is given: the chain's decision must
        // be the chained fold of their answers in settings order, the hooks after a refusal skipped.
        let dir = tempfile::tempdir().unwrap();
        let mut toml = format!("sequential = [\"{moment}\"]\n\n");
        for (i, hook) in hooks.iter().enumerate() {
            std::fs::write(dir.path().join(format!("out-{i}")), &hook.stdout).unwrap();
            std::fs::write(dir.path().join(format!("err-{i}")), &hook.stderr).unwrap();
            let on_failure = match hook.on_failure {
                OnFailure::Ignore => "ignore",
                OnFailure::Refuse => "refuse",
            };
            toml.push_str(&format!(
                "[[hooks.{moment}]]\nname = \"hook-{i}\"\ntimeout = 30\non_failure = \"{on_failure}\"\n\
                 command = 'cat > in-{i}; cat out-{i}; cat err-{i} >&2; exit {}'\n",
                hook.code
            ));
        }
        // The settings in a folder of their own: the call's `rm x` in the hooks' folder is ordinary
        // work, where in the settings' folder hookd's guard of itself would refuse it.
        let settings = Settings::parse(&dir.path().join("conf/hooks.toml"), "hooks.toml", &toml)
            .expect("valid settings");
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let decision = runtime.block_on(async {
            let engine = Engine::new(settings);
            let mut fields = serde_json::Map::new();
            fields.insert("cwd".into(), dir.path().to_str().unwrap().into());
            fields.insert("session_id".into(), format!("chain {hooks:?}").into());
            fields.insert("tool_name".into(), "Bash".into());
            fields.insert("tool_input".into(), ORIGINAL_INPUT.clone());
            fields.insert("tool_response".into(), ORIGINAL_OUTPUT.clone());
            let fire = EngineFire { moment: moment.to_string(), agent: None, event: Event::from(fields) };
            engine.decide(fire, &engine.abandoned().child_token()).await
        });
        let decision = decision.expect("decided");
        let mut refused = false;
        let mut current_input = ORIGINAL_INPUT.clone();
        let mut current_output = ORIGINAL_OUTPUT.clone();
        let mut outcomes: Vec<(String, Heard)> = Vec::new();
        for (i, hook) in hooks.iter().enumerate() {
            let name = format!("hook-{i}");
            let given = dir.path().join(format!("in-{i}"));
            if refused {
                prop_assert!(!given.exists(), "hook-{} ran after a refusal", i);
                outcomes.push((name, Heard::skipped()));
                continue;
            }
            // Each hook is given the input (or output) as the hooks before it left it.
            let given: Value = serde_json::from_str(&std::fs::read_to_string(&given).unwrap()).unwrap();
            if hookd::moment::rewrites_input(moment) {
                prop_assert_eq!(&given["tool_input"], &current_input, "given to hook-{}", i);
            }
            if hookd::moment::rewrites_output(moment) {
                prop_assert_eq!(&given["tool_response"], &current_output, "given to hook-{}", i);
            }
            let outcome = reading::read(Run {
                hook: &name,
                moment,
                exit: &Exit::Code(hook.code),
                stdout: &hook.stdout,
                stderr: &hook.stderr,
                via_shell: true,
                on_failure: hook.on_failure,
            });
            refused = outcome.kind == Outcome::Refused;
            if !refused {
                if let Some(input) = &outcome.input {
                    apply_rewrite(&mut current_input, input);
                }
                if let Some(output) = &outcome.output {
                    apply_rewrite(&mut current_output, output);
                }
            }
            outcomes.push((name, outcome));
        }
        let expected = fold_named(moment, &outcomes, true);
        prop_assert_eq!(decision.refused, expected.refused);
        prop_assert_eq!(decision.permission, expected.permission);
        prop_assert_eq!(decision.reason, expected.reason);
        prop_assert_eq!(decision.adds, expected.adds);
        prop_assert_eq!(decision.input, expected.input);
        prop_assert_eq!(decision.output, expected.output);
        let kinds: Vec<Outcome> = decision.hooks.iter().map(|h| h.outcome).collect();
        let expected_kinds: Vec<Outcome> = outcomes.iter().map(|(_, o)| o.kind).collect();
        prop_assert_eq!(kinds, expected_kinds);
    }
}

/// Whole-value output rewrites beside field rewrites, in any order: see
/// `an_output_rewritten_whole_then_a_field_removed_is_a_conflict_not_null` for the case this finds.
#[test]
fn whether_the_call_is_refused_does_not_depend_on_the_finishing_order_with_whole_outputs() {
    let strategy = (
        Just("PostToolUse"),
        proptest::collection::vec(rich_stdout(Fields::Shared, 0), 2..6),
    )
        .prop_flat_map(|(moment, stdouts)| {
            let order: Vec<usize> = (0..stdouts.len()).collect();
            (Just(moment), Just(stdouts), Just(order).prop_shuffle())
        });
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 5000,
        ..config()
    });
    runner
        .run(&strategy, |(moment, stdouts, order)| {
            let in_settings_order: Vec<(String, Heard)> = stdouts
                .iter()
                .enumerate()
                .map(|(i, stdout)| {
                    let name = format!("hook-{i}");
                    let outcome = reading::read(Run {
                        hook: &name,
                        moment,
                        exit: &Exit::Code(0),
                        stdout,
                        stderr: b"",
                        via_shell: true,
                        on_failure: OnFailure::Ignore,
                    });
                    (name, outcome)
                })
                .collect();
            let as_finished: Vec<(String, Heard)> = order
                .iter()
                .map(|&i| in_settings_order[i].clone())
                .collect();
            let expected = fold_named(moment, &in_settings_order, false);
            let verdict = fold_named(moment, &as_finished, false);
            prop_assert_eq!(verdict.refused, expected.refused);
            prop_assert_eq!(verdict.conflict.is_some(), expected.conflict.is_some());
            Ok(())
        })
        .unwrap();
}

#[test]
fn an_output_rewritten_whole_then_a_field_removed_is_a_conflict_not_null() {
    let whole = Heard {
        output: Some(json!("token=[REDACTED]")),
        ..Heard::new(Outcome::Rewrote)
    };
    let removal = Heard {
        output: Some(json!({"stdout": null})),
        ..Heard::new(Outcome::Rewrote)
    };
    let whole_first = [
        ("a".to_string(), whole.clone()),
        ("b".to_string(), removal.clone()),
    ];
    let removal_first = [("b".to_string(), removal), ("a".to_string(), whole)];
    let removal_first = fold_named("PostToolUse", &removal_first, false);
    assert!(
        removal_first.refused && removal_first.conflict.is_some(),
        "{removal_first:?}"
    );
    let whole_first = fold_named("PostToolUse", &whole_first, false);
    assert_ne!(
        whole_first.output,
        Some(Value::Null),
        "the model would be shown null: {whole_first:?}"
    );
    assert!(
        whole_first.refused && whole_first.conflict.is_some(),
        "the same two rewrites conflict whichever comes first: {whole_first:?}"
    );
}
