//! What a reload took away from the guard: the hooks the new settings removed, disabled, relaxed or
//! narrowed, and hookd's guard of itself turned off or narrowed. An agent that edits the settings (or a
//! person who edits them in a hurry) weakens the guard in exactly these ways, so each reload that does is
//! written to the journal and shown by `status` (docs/security.md, defence in depth).
//!
//! Pure: two settings in, the changes in words out. Hooks are matched by name and moment; a hook moved to
//! another moment is removed from the one it left. A hook that was disabled guarded nothing, so nothing
//! done to it weakens anything. Where a change may or may not guard less (a matcher rewritten), it is
//! counted as weakening: the record costs a line, a weakening missed costs a guard.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use crate::record::Weakening;
use crate::settings::{Hook, Matcher, OnFailure, Program, Settings};

/// Every way `new` guards less than `old`, hooks first (in `old`'s order), then the whole file's.
/// Linear in the hooks (it runs on the daemon's thread at every reload, and a file may hold ten thousand).
pub fn weakened(old: &Settings, new: &Settings) -> Vec<Weakening> {
    let mut changes = Vec::new();
    for (moment, hooks) in &old.hooks {
        let now = new.hooks_for(moment);
        let by_name: HashMap<&str, &Hook> = now.iter().map(|h| (h.name.as_str(), &**h)).collect();
        // Made only when the old settings have a hook without a name of its own: the identities of the
        // hooks at the moment, new and old.
        let mut twins: Option<(HashSet<String>, HashSet<String>)> = None;
        for before in hooks.iter().filter(|hook| hook.enabled) {
            let mut after = by_name.get(before.name.as_str()).copied();
            if unnamed(moment, &before.name) {
                // Its name is its place (`PreToolUse#2`): a hook added or taken out above it renames it.
                // Kept when the new settings hold the same hook at the moment, whatever its place; and the
                // hook now at its place is not it when that one is an old hook moved (this one is gone).
                let (in_new, in_old) =
                    twins.get_or_insert_with(|| (identities(now), identities(hooks)));
                if in_new.contains(&identity(before)) {
                    continue;
                }
                if after.is_some_and(|h| unnamed(moment, &h.name) && in_old.contains(&identity(h)))
                {
                    after = None;
                }
            }
            let of = |change: String| Weakening::of_hook(moment, &before.name, change);
            match after {
                None => changes.push(of("removed".to_string())),
                Some(after) if !after.enabled => {
                    changes.push(of("disabled (enabled = false)".to_string()));
                }
                Some(after) => changes.extend(hook_changes(before, after).into_iter().map(of)),
            }
        }
    }
    if old.protect.enabled && !new.protect.enabled {
        changes.push(Weakening::of_settings(
            "[protect] enabled turned off: hookd no longer guards its own files and process",
        ));
    }
    if !old.protect.live_hooks_allow && new.protect.live_hooks_allow {
        changes.push(Weakening::of_settings(
            "[protect] live_hooks_allow turned on: a live hook's allow now stands, and any process of the user may hang one",
        ));
    }
    if old.protect.enabled && new.protect.enabled {
        let kept: HashSet<&std::path::PathBuf> = new.protect.paths.iter().collect();
        let gone: Vec<String> = old
            .protect
            .paths
            .iter()
            .filter(|path| !kept.contains(path))
            .map(|path| path.display().to_string())
            .collect();
        if !gone.is_empty() {
            changes.push(Weakening::of_settings(format!(
                "[protect] paths reduced: {} no longer guarded",
                gone.join(", ")
            )));
        }
    }
    if old.record.enabled && !new.record.enabled {
        changes.push(Weakening::of_settings(
            "[record] enabled turned off: decisions are no longer journaled",
        ));
    }
    changes
}

/// Whether `name` is the one a hook without a `name` is given: `Moment#N`, its place at the moment.
fn unnamed(moment: &str, name: &str) -> bool {
    name.strip_prefix(moment)
        .and_then(|rest| rest.strip_prefix('#'))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The identities of the enabled hooks among `hooks`.
fn identities(hooks: &[std::sync::Arc<Hook>]) -> HashSet<String> {
    hooks
        .iter()
        .filter(|hook| hook.enabled)
        .map(|hook| identity(hook))
        .collect()
}

/// What a hook guards with, in one comparable text: two hooks of one moment with the same identity
/// guard alike.
fn identity(hook: &Hook) -> String {
    let program = match &hook.program {
        Program::Worker { argv, .. } => format!("worker {argv:?}"),
        other => format!("{other:?}"),
    };
    format!(
        "{program}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
        hook.matcher_source
            .as_deref()
            .filter(|m| !m.is_empty() && *m != "*"),
        (hook.condition.as_ref().map(|c| &c.source), hook.background),
        hook.on_failure,
        hook.agents,
        hook.timeout
    )
}

/// How one enabled hook, still enabled, guards less than it did, a change a line.
fn hook_changes(before: &Hook, after: &Hook) -> Vec<String> {
    let mut changes = Vec::new();
    if before.on_failure == OnFailure::Refuse && after.on_failure == OnFailure::Ignore {
        changes.push("on_failure relaxed from \"refuse\" to \"ignore\"".to_string());
    }
    if matcher_may_narrow(&before.matcher, &after.matcher) {
        changes.push(format!(
            "matcher changed from {} to {}",
            matcher_words(before),
            matcher_words(after)
        ));
    }
    let condition = |hook: &Hook| hook.condition.as_ref().map(|c| c.source.clone());
    if let (old, Some(new)) = (condition(before), condition(after))
        && old.as_deref() != Some(new.as_str())
    {
        // Two rules cannot be compared: any new or changed `if` may run the hook for fewer calls.
        changes.push(format!(
            "if changed from {:?} to {new:?}",
            old.as_deref().unwrap_or("(none: every call)")
        ));
    }
    if after.background && !before.background {
        // Its answer (an output redacted, advice given) is no longer read.
        changes.push("background turned on: its answer is no longer read".to_string());
    }
    if let Some(change) = agents_narrowed(before.agents.as_deref(), after.agents.as_deref()) {
        changes.push(change);
    }
    if after.timeout < before.timeout {
        changes.push(format!(
            "timeout shortened from {} to {}",
            seconds(before.timeout),
            seconds(after.timeout)
        ));
    }
    match (&before.program, &after.program) {
        (Program::Guard(old), Program::Guard(new)) => changes.extend(rules_relaxed(old, new)),
        (old, new) if !same_program(old, new) => changes.push("program changed".to_string()),
        _ => {}
    }
    changes
}

/// The built-in guard's rules that do less than they did: a refusal become an ask, or either turned off.
fn rules_relaxed(before: &crate::guard::Guard, after: &crate::guard::Guard) -> Vec<String> {
    use crate::guard::Action;
    let strength = |action: Action| match action {
        Action::Refuse => 2,
        Action::Ask => 1,
        Action::Off => 0,
    };
    crate::guard::RULES
        .iter()
        .filter_map(|rule| {
            let (old, new) = (before.action(rule.name), after.action(rule.name));
            (strength(new) < strength(old)).then(|| {
                format!(
                    "guard rule {} relaxed from \"{}\" to \"{}\"",
                    rule.name,
                    old.word(),
                    new.word()
                )
            })
        })
        .collect()
}

/// Whether `after` may match less than `before`. Only a matcher that matches everything, or a list of
/// names holding every name the old list held, surely does not; any other change is taken as narrowing
/// (two regular expressions cannot be compared).
fn matcher_may_narrow(before: &Matcher, after: &Matcher) -> bool {
    match (before, after) {
        (_, Matcher::Any) => false,
        (Matcher::Names(old), Matcher::Names(new)) => !old.iter().all(|name| new.contains(name)),
        (Matcher::Regex(old), Matcher::Regex(new)) => old.as_str() != new.as_str(),
        _ => true,
    }
}

/// The matcher as the file wrote it, quoted; `"*"` where it wrote none.
fn matcher_words(hook: &Hook) -> String {
    format!("{:?}", hook.matcher_source.as_deref().unwrap_or("*"))
}

/// How `after`'s agents leave out some that `before`'s ran for (`None`: every agent).
fn agents_narrowed(before: Option<&[String]>, after: Option<&[String]>) -> Option<String> {
    match (before, after) {
        (_, None) => None,
        (None, Some(after)) => Some(format!("agents narrowed from all to {}", after.join(", "))),
        (Some(before), Some(after)) => {
            let gone: Vec<&str> = before
                .iter()
                .filter(|agent| !after.contains(agent))
                .map(String::as_str)
                .collect();
            (!gone.is_empty()).then(|| format!("agents narrowed: {} removed", gone.join(", ")))
        }
    }
}

/// Whether two programs are the same one: a worker's process count is not its program.
fn same_program(before: &Program, after: &Program) -> bool {
    match (before, after) {
        (Program::Worker { argv: old, .. }, Program::Worker { argv: new, .. }) => old == new,
        _ => before == after,
    }
}

/// `5s`, `0.5s`.
fn seconds(duration: Duration) -> String {
    format!("{}s", duration.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn settings(text: &str) -> Settings {
        Settings::parse(Path::new("/h/hooks.toml"), "hooks.toml", text)
            .unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// One PreToolUse hook `guard` with `extra` lines, and the file's tables after it.
    fn guard(extra: &str) -> String {
        format!("[[hooks.PreToolUse]]\nname = \"guard\"\ncommand = \"/bin/guard\"\n{extra}\n")
    }

    fn words(old: &str, new: &str) -> Vec<String> {
        weakened(&settings(old), &settings(new))
            .iter()
            .map(Weakening::words)
            .collect()
    }

    const FULL: &str = "matcher = \"Bash|Edit\"\non_failure = \"refuse\"\nagents = [\"codex\", \"claude-code\"]\ntimeout = 5";

    #[test]
    fn the_same_settings_weaken_nothing() {
        assert!(words(&guard(FULL), &guard(FULL)).is_empty());
        assert!(words("# none\n", "# none\n").is_empty());
    }

    #[test]
    fn a_rule_of_the_built_in_guard_relaxed_is_said_and_one_tightened_is_not() {
        let builtin = |rules: &str| {
            format!(
                "[[hooks.PreToolUse]]\nname = \"g\"\nbuiltin = \"guard\"\nrules = {{ {rules} }}\n"
            )
        };
        assert_eq!(
            words(
                &builtin(""),
                &builtin("secrets = \"off\", git-discard = \"ask\"")
            ),
            [
                "PreToolUse g: guard rule git-discard relaxed from \"refuse\" to \"ask\"",
                "PreToolUse g: guard rule secrets relaxed from \"refuse\" to \"off\""
            ]
        );
        assert!(words(&builtin("secrets = \"ask\""), &builtin("")).is_empty());
    }

    #[test]
    fn an_if_added_or_changed_is_said_and_one_taken_away_is_not() {
        let hook = |rule: &str| {
            format!("[[hooks.PreToolUse]]\nname = \"g\"\ncommand = \"/bin/g\"\n{rule}\n")
        };
        assert_eq!(
            words(&hook(""), &hook("if = \"Bash(git push *)\"")),
            ["PreToolUse g: if changed from \"(none: every call)\" to \"Bash(git push *)\""]
        );
        assert_eq!(
            words(&hook("if = \"Bash\""), &hook("if = \"Bash(rm *)\"")),
            ["PreToolUse g: if changed from \"Bash\" to \"Bash(rm *)\""]
        );
        assert!(words(&hook("if = \"Bash\""), &hook("")).is_empty());
    }

    #[test]
    fn a_removed_hook_is_said_by_moment_and_name() {
        let two = format!(
            "{}[[hooks.Stop]]\nname = \"finish\"\ncommand = \"true\"\n",
            guard("")
        );
        assert_eq!(
            words(&two, "# none\n"),
            ["PreToolUse guard: removed", "Stop finish: removed"]
        );
        assert_eq!(words(&two, &guard("")), ["Stop finish: removed"]);
        let moved = "[[hooks.PostToolUse]]\nname = \"guard\"\ncommand = \"/bin/guard\"\n";
        assert_eq!(words(&guard(""), moved), ["PreToolUse guard: removed"]);
    }

    #[test]
    fn a_disabled_hook_is_said_once_whatever_else_changed() {
        assert_eq!(
            words(&guard(FULL), &guard("enabled = false\ntimeout = 1")),
            ["PreToolUse guard: disabled (enabled = false)"]
        );
    }

    #[test]
    fn a_hook_that_was_disabled_weakens_nothing() {
        let off = guard("enabled = false\non_failure = \"refuse\"");
        assert!(words(&off, "# none\n").is_empty());
        assert!(words(&off, &guard("")).is_empty());
    }

    #[test]
    fn on_failure_relaxed_is_a_weakening_and_strengthened_is_not() {
        let refuse = guard("on_failure = \"refuse\"");
        assert_eq!(
            words(&refuse, &guard("")),
            ["PreToolUse guard: on_failure relaxed from \"refuse\" to \"ignore\""]
        );
        assert_eq!(
            words(
                &refuse,
                &format!("[defaults]\non_failure = \"ignore\"\n{}", guard(""))
            ),
            ["PreToolUse guard: on_failure relaxed from \"refuse\" to \"ignore\""]
        );
        assert!(words(&guard(""), &refuse).is_empty());
        let by_default = format!("[defaults]\non_failure = \"refuse\"\n{}", guard(""));
        assert_eq!(
            words(&by_default, &guard("")),
            ["PreToolUse guard: on_failure relaxed from \"refuse\" to \"ignore\""],
            "the default the hook took counts"
        );
    }

    #[test]
    fn a_matcher_changed_is_a_weakening_unless_it_surely_matches_more() {
        let bash_edit = guard("matcher = \"Bash|Edit\"");
        assert_eq!(
            words(&bash_edit, &guard("matcher = \"Bash\"")),
            ["PreToolUse guard: matcher changed from \"Bash|Edit\" to \"Bash\""]
        );
        assert_eq!(
            words(&guard(""), &guard("matcher = \"Bash\"")),
            ["PreToolUse guard: matcher changed from \"*\" to \"Bash\""]
        );
        assert_eq!(
            words(
                &guard("matcher = \"Bash.*\""),
                &guard("matcher = \"Bas.*\"")
            ),
            ["PreToolUse guard: matcher changed from \"Bash.*\" to \"Bas.*\""],
            "two regular expressions cannot be compared"
        );
        assert_eq!(
            words(&bash_edit, &guard("matcher = \"Bash|Ed.*\"")).len(),
            1
        );
        for wider in [
            "",
            "matcher = \"*\"",
            "matcher = \"\"",
            "matcher = \"Edit, Bash, Write\"",
        ] {
            assert!(words(&bash_edit, &guard(wider)).is_empty(), "{wider}");
        }
        assert!(words(&guard("matcher = \"B.*\""), &guard("matcher = \"B.*\"")).is_empty());
    }

    #[test]
    fn agents_narrowed_is_a_weakening_and_widened_is_not() {
        let two = guard("agents = [\"codex\", \"claude-code\"]");
        assert_eq!(
            words(&guard(""), &guard("agents = [\"codex\"]")),
            ["PreToolUse guard: agents narrowed from all to codex"]
        );
        assert_eq!(
            words(&two, &guard("agents = [\"codex\", \"gemini-cli\"]")),
            ["PreToolUse guard: agents narrowed: claude-code removed"]
        );
        assert!(words(&two, &guard("")).is_empty());
        assert!(
            words(
                &two,
                &guard("agents = [\"claude-code\", \"codex\", \"gemini-cli\"]")
            )
            .is_empty()
        );
    }

    #[test]
    fn a_timeout_shortened_is_a_weakening_and_lengthened_is_not() {
        assert_eq!(
            words(&guard("timeout = 5"), &guard("timeout = 0.5")),
            ["PreToolUse guard: timeout shortened from 5s to 0.5s"]
        );
        assert!(words(&guard("timeout = 5"), &guard("timeout = 9")).is_empty());
        assert_eq!(
            words(&guard(""), &guard("timeout = 1")).len(),
            1,
            "below hookd's default"
        );
    }

    #[test]
    fn a_program_changed_is_a_weakening() {
        let other = "[[hooks.PreToolUse]]\nname = \"guard\"\ncommand = \"/bin/true\"\n";
        assert_eq!(
            words(&guard(""), other),
            ["PreToolUse guard: program changed"]
        );
        let argv = "[[hooks.PreToolUse]]\nname = \"guard\"\nargv = [\"/bin/guard\"]\n";
        assert_eq!(
            words(&guard(""), argv),
            ["PreToolUse guard: program changed"]
        );
        let worker = |count: usize, program: &str| {
            format!(
                "[[hooks.PreToolUse]]\nname = \"guard\"\nworker = [\"{program}\"]\nworkers = {count}\n"
            )
        };
        assert!(
            words(&worker(1, "/bin/w"), &worker(2, "/bin/w")).is_empty(),
            "more processes of the same worker"
        );
        assert_eq!(
            words(&worker(1, "/bin/w"), &worker(1, "/bin/x")),
            ["PreToolUse guard: program changed"]
        );
        assert_eq!(
            words(
                &guard(""),
                &format!("[defaults]\nshell = \"/bin/bash\"\n{}", guard(""))
            ),
            ["PreToolUse guard: program changed"],
            "another shell runs it"
        );
    }

    #[test]
    fn a_hook_without_a_name_is_kept_wherever_a_hook_above_it_puts_it() {
        let unnamed = |command: &str| format!("[[hooks.PreToolUse]]\ncommand = \"{command}\"\n");
        let one = unnamed("/bin/guard");
        let two = format!("{}{one}", unnamed("/bin/new"));
        assert!(
            words(&one, &two).is_empty(),
            "PreToolUse#1 is PreToolUse#2 now"
        );
        assert_eq!(
            words(&format!("{}{one}", unnamed("/bin/a")), &two),
            ["PreToolUse PreToolUse#1: program changed"]
        );
        assert_eq!(
            words(&two, &one),
            ["PreToolUse PreToolUse#1: removed"],
            "the first of two taken out: said by the name it had, not as the second changed"
        );
        assert_eq!(
            words(&one, "# none\n"),
            ["PreToolUse PreToolUse#1: removed"]
        );
        assert!(super::unnamed("PreToolUse", "PreToolUse#12"));
        for name in ["PreToolUse#", "PreToolUse#1a", "Stop#1", "guard"] {
            assert!(!super::unnamed("PreToolUse", name), "{name}");
        }
    }

    #[test]
    fn ten_thousand_hooks_removed_are_each_said_and_ten_thousand_kept_none() {
        let many = |prefix: &str| {
            (0..10_000)
                .map(|i| {
                    format!("[[hooks.PreToolUse]]\nname = \"{prefix}{i}\"\ncommand = \"true\"\n")
                })
                .collect::<String>()
        };
        let unnamed = "[[hooks.PreToolUse]]\ncommand = \"true\"\n".repeat(10_000);
        let (old, new) = (settings(&many("a")), settings(&many("b")));
        let (all_unnamed, none) = (settings(&unnamed), settings("# none\n"));
        assert_eq!(weakened(&old, &new).len(), 10_000);
        assert!(weakened(&all_unnamed, &all_unnamed).is_empty());
        assert_eq!(weakened(&all_unnamed, &none).len(), 10_000);
    }

    #[test]
    fn several_changes_of_one_hook_are_each_said() {
        assert_eq!(
            words(&guard(FULL), &guard("matcher = \"Bash\"\ntimeout = 1")),
            [
                "PreToolUse guard: on_failure relaxed from \"refuse\" to \"ignore\"",
                "PreToolUse guard: matcher changed from \"Bash|Edit\" to \"Bash\"",
                "PreToolUse guard: timeout shortened from 5s to 1s",
            ]
        );
    }

    #[test]
    fn protection_turned_off_or_narrowed_is_a_weakening() {
        let on = "[protect]\npaths = [\"/srv/a\", \"/srv/b\"]\n";
        assert_eq!(
            words(on, "[protect]\nenabled = false\n"),
            ["[protect] enabled turned off: hookd no longer guards its own files and process"]
        );
        assert_eq!(
            words("# default\n", "[protect]\nenabled = false\n").len(),
            1,
            "on by default"
        );
        assert_eq!(
            words(on, "[protect]\npaths = [\"/srv/b\"]\n"),
            ["[protect] paths reduced: /srv/a no longer guarded"]
        );
        assert!(
            words(
                on,
                "[protect]\npaths = [\"/srv/b\", \"/srv/a\", \"/srv/c\"]\n"
            )
            .is_empty()
        );
        assert!(words("[protect]\nenabled = false\n", "# default\n").is_empty());
    }

    #[test]
    fn the_journal_turned_off_is_a_weakening() {
        assert_eq!(
            words("# on\n", "[record]\nenabled = false\n"),
            ["[record] enabled turned off: decisions are no longer journaled"]
        );
        assert!(words("[record]\nenabled = false\n", "# on\n").is_empty());
    }

    #[test]
    fn adding_and_strengthening_weaken_nothing() {
        let stronger = format!(
            "{}[[hooks.Stop]]\nname = \"new\"\ncommand = \"true\"\n[protect]\npaths = [\"/srv\"]\n",
            guard("on_failure = \"refuse\"\ntimeout = 90\nmatcher = \"*\"")
        );
        assert!(words(&guard(FULL), &stronger).is_empty());
    }
}
