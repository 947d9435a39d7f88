//! Properties of the verdict (contract 8), checked with proptest over generated fires: each hook's run (how
//! it ended, what it printed) is read by `verdict::read` as `fire` reads it, and the outcomes are folded by
//! `verdict::fold` in the settings file's order.
//!
//! - The verdict does not depend on the order the hooks finish in: a real [`Engine`] in this process runs
//!   real shell hooks, each held until the test lets it go, in a random order, one after the other; the
//!   decision must be the fold of every hook's answer read in the settings file's order.
//! - The first refusal in settings order gives the reason; later refusals never replace it.
//! - Every hook's adds are kept, hook by hook in settings order, each hook's in its own order.
//! - The verdict refuses exactly when some hook refused, and then always with a reason.
//! - A hook that says nothing (or fails under `on_failure = "ignore"`) changes nothing, wherever it is.

use std::path::Path;
use std::time::{Duration, Instant};

use hookd::engine::{Engine, Fire as EngineFire};
use hookd::protocol::Event;
use hookd::settings::Settings;

use hookd::engine::verdict::{self, Exit, Kind, Outcome, Run, Verdict};
use hookd::settings::OnFailure;
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

/// A hook as the engine runs it: a shell command that waits for the test to let it go, then prints
/// `stdout` and `stderr` and exits with `code`.
#[derive(Debug, Clone)]
struct ShellHook {
    code: i32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    on_failure: OnFailure,
}

/// Up to 6 shell hooks, and an order for them to finish in (a permutation of their indices).
fn shell_fire() -> impl Strategy<Value = (&'static str, Vec<ShellHook>, Vec<usize>)> {
    let code = prop_oneof![4 => Just(0), 3 => Just(2), 1 => Just(1), 1 => Just(3), 1 => Just(127)];
    let hook =
        (code, stdout(), words(), on_failure()).prop_map(|(code, stdout, stderr, on_failure)| {
            ShellHook {
                code,
                stdout,
                stderr: stderr.into_bytes(),
                on_failure,
            }
        });
    (
        prop_oneof![Just("PreToolUse"), Just("Stop"), Just("UserPromptSubmit")],
        proptest::collection::vec(hook, 1..7),
    )
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
    let path = dir.join("hooks.toml");
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

/// What the hooks say, read in the settings file's order and folded: what the engine must decide.
fn expected(moment: &str, hooks: &[ShellHook]) -> Verdict {
    let outcomes: Vec<Outcome> = hooks
        .iter()
        .enumerate()
        .map(|(i, hook)| {
            verdict::read(Run {
                hook: &format!("hook-{i}"),
                moment,
                exit: &Exit::Code(hook.code),
                stdout: &hook.stdout,
                stderr: &hook.stderr,
                via_shell: true,
                on_failure: hook.on_failure,
            })
        })
        .collect();
    verdict::fold(&outcomes)
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
        prop_assert_eq!(decision.reason, expected.reason);
        prop_assert_eq!(decision.adds, expected.adds);
        let names: Vec<String> = decision.hooks.iter().map(|h| h.name.clone()).collect();
        let in_settings_order: Vec<String> = (0..hooks.len()).map(|i| format!("hook-{i}")).collect();
        prop_assert_eq!(names, in_settings_order);
    }
}
