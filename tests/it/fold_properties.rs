//! Properties of the verdict (contract 8), checked with proptest over generated fires: each hook's run (how
//! it ended, what it printed) is read by `verdict::read` as `fire` reads it, and the outcomes are folded by
//! `verdict::fold` in the settings file's order.
//!
//! - The verdict does not depend on the order the hooks finish in: `fire::run_all` collects each hook's
//!   run as it finishes, tagged with the hook's index, and puts it back at that index. Modelled here by a
//!   random finishing order, reassembled by index, against the runs read in settings order.
//! - The first refusal in settings order gives the reason; later refusals never replace it.
//! - Every hook's adds are kept, hook by hook in settings order, each hook's in its own order.
//! - The verdict refuses exactly when some hook refused, and then always with a reason.
//! - A hook that says nothing (or fails under `on_failure = "ignore"`) changes nothing, wherever it is.

use std::time::Duration;

use hookd::settings::OnFailure;
use hookd::verdict::{self, Exit, Kind, Outcome, Run, Verdict};
use proptest::prelude::*;

/// Plenty for functions this small; no failure file is written (the shrunk case is in the test's output).
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 1000,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// One hook of a fire as the runner hands it over.
#[derive(Debug, Clone)]
struct HookRun {
    name: String,
    exit: Exit,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    via_shell: bool,
    on_failure: OnFailure,
}

/// A fire: its moment and its hooks' runs, in the settings file's order.
#[derive(Debug, Clone)]
struct Fire {
    moment: &'static str,
    runs: Vec<HookRun>,
}

impl Fire {
    /// Each run read as `fire` reads it, in the order given.
    fn outcomes(&self, runs: &[HookRun]) -> Vec<Outcome> {
        runs.iter()
            .map(|run| {
                verdict::read(Run {
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

/// What `fire::run_all` does: runs arrive in finishing order, each with its index, and each is put back
/// at its index.
fn reassemble(runs: &[HookRun], finishing_order: &[usize]) -> Vec<HookRun> {
    let arrivals: Vec<(usize, HookRun)> = finishing_order
        .iter()
        .map(|&index| (index, runs[index].clone()))
        .collect();
    let mut slots: Vec<Option<HookRun>> = vec![None; runs.len()];
    for (index, run) in arrivals {
        assert!(slots[index].is_none(), "hook {index} arrived twice");
        slots[index] = Some(run);
    }
    slots
        .into_iter()
        .map(|slot| slot.expect("every hook arrives once"))
        .collect()
}

/// Outcomes made directly rather than read: any kind, any reason (even none), any adds.
fn raw_outcomes() -> impl Strategy<Value = Vec<Outcome>> {
    let kind = prop_oneof![
        Just(Kind::Nothing),
        Just(Kind::Adds),
        Just(Kind::Refused),
        Just(Kind::Failed)
    ];
    let outcome = (
        kind,
        proptest::option::of("[a-z]{0,4}"),
        proptest::collection::vec("[a-z]{1,3}", 0..3),
    )
        .prop_map(|(kind, reason, adds)| Outcome {
            kind,
            reason,
            adds,
            error: None,
            warning: None,
        });
    proptest::collection::vec(outcome, 0..10)
}

/// Outcomes of both sorts: read from generated runs, and made directly.
fn outcomes() -> impl Strategy<Value = Vec<Outcome>> {
    prop_oneof![
        fire().prop_map(|fire| fire.outcomes(&fire.runs)),
        raw_outcomes()
    ]
}

fn first_refusal(outcomes: &[Outcome]) -> Option<&Outcome> {
    outcomes.iter().find(|o| o.kind == Kind::Refused)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_verdict_does_not_depend_on_the_order_hooks_finish(
        (fire, finishing_order) in fire_and_finishing_order()
    ) {
        let in_settings_order = verdict::fold(&fire.outcomes(&fire.runs));
        let reassembled = reassemble(&fire.runs, &finishing_order);
        prop_assert_eq!(verdict::fold(&fire.outcomes(&reassembled)), in_settings_order);
    }

    #[test]
    fn whether_it_refuses_does_not_depend_on_any_order(
        (fire, finishing_order) in fire_and_finishing_order()
    ) {
        // Folding in the finishing order itself (no reassembly) may pick another reason and order the adds
        // otherwise, but never changes whether the fire is refused.
        let in_settings_order = verdict::fold(&fire.outcomes(&fire.runs));
        let as_finished: Vec<HookRun> =
            finishing_order.iter().map(|&i| fire.runs[i].clone()).collect();
        let verdict = verdict::fold(&fire.outcomes(&as_finished));
        prop_assert_eq!(verdict.refused, in_settings_order.refused);
        let mut adds = verdict.adds;
        let mut expected = in_settings_order.adds;
        adds.sort();
        expected.sort();
        prop_assert_eq!(adds, expected, "the same adds, whatever their order");
    }

    #[test]
    fn the_first_refusal_in_settings_order_wins(outcomes in outcomes()) {
        let verdict = verdict::fold(&outcomes);
        let first = first_refusal(&outcomes);
        prop_assert_eq!(verdict.reason, first.and_then(|o| o.reason.clone()));
        // Nothing after the first refusal can change the reason, whatever it says.
        if let Some(at) = outcomes.iter().position(|o| o.kind == Kind::Refused) {
            let mut later_changed = outcomes.clone();
            for later in &mut later_changed[at + 1..] {
                later.kind = Kind::Refused;
                later.reason = Some("a later reason".into());
            }
            prop_assert_eq!(verdict::fold(&later_changed).reason, first.and_then(|o| o.reason.clone()));
        }
    }

    #[test]
    fn adds_keep_settings_order(outcomes in outcomes()) {
        let verdict = verdict::fold(&outcomes);
        let expected: Vec<String> = outcomes.iter().flat_map(|o| o.adds.iter().cloned()).collect();
        prop_assert_eq!(verdict.adds, expected);
    }

    #[test]
    fn refused_exactly_when_some_hook_refused(outcomes in outcomes()) {
        let verdict = verdict::fold(&outcomes);
        prop_assert_eq!(verdict.refused, outcomes.iter().any(|o| o.kind == Kind::Refused));
        prop_assert_eq!(verdict.reason.is_some(), first_refusal(&outcomes).is_some_and(|o| o.reason.is_some()));
    }

    #[test]
    fn a_refused_fire_always_has_a_reason(fire in fire()) {
        // Outcomes as read from real answers: a refusal always says something.
        let verdict = verdict::fold(&fire.outcomes(&fire.runs));
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
        let silent = Outcome {
            kind: if failed { Kind::Failed } else { Kind::Nothing },
            reason: None,
            adds: Vec::new(),
            error: failed.then(|| "exit 1".to_string()),
            warning: None,
        };
        with_silent.insert(at.index(outcomes.len() + 1), silent);
        prop_assert_eq!(verdict::fold(&with_silent), verdict::fold(&outcomes));
    }
}

#[test]
fn no_hooks_is_the_empty_verdict() {
    assert_eq!(verdict::fold(&[]), Verdict::default());
}
