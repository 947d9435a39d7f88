//! A hook's `if` through the real daemon and the real relay: a hook whose rule does not fit the call is
//! never started (each hook here appends a line to a file when it runs, and the lines are counted), for
//! every agent's own shape of the call; a rule that cannot be read is refused at its place; and a
//! field an event sends empty fits only a matcher that fits anything.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::common::*;

/// How many times the hook that appends to `file` has run.
fn runs(file: &Path) -> usize {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .count()
}

/// A daemon whose one PreToolUse hook, with `rule` as its `if`, appends a line to `ran` and says nothing.
fn counting_daemon(rule: &str) -> Daemon {
    let sb = Sandbox::new();
    sb.script("count.sh", "cat >/dev/null; echo ran >> @DIR@/ran");
    sb.settings(&format!(
        "[[hooks.PreToolUse]]\nname = \"counted\"\nif = {rule:?}\ncommand = \"@DIR@/count.sh\"\n"
    ));
    Daemon::start(sb)
}

#[test]
fn a_git_push_rule_starts_its_hook_for_git_push_and_never_for_git_status() {
    let d = counting_daemon("Bash(git push *)");
    let ran = d.sb.p("ran");
    let cwd = d.sb.path().to_path_buf();
    for (command, fits) in [
        ("git push origin main", true),
        ("cd repo && git push", true),
        ("git status", false),
        ("git pushy", false),
        ("sh -c 'git fetch; git push --force'", true),
    ] {
        let before = runs(&ran);
        let (event, extra) = shell_call("claude-code", command, &cwd);
        let out = relay(&d, "claude-code", &event, &extra);
        assert_eq!(code(&out.status), 0, "{command}: {}", text(&out.stderr));
        assert_eq!(
            runs(&ran),
            before + usize::from(fits),
            "{command}: the hook should {}have started",
            if fits { "" } else { "not " }
        );
    }
    // The fire's own answer names no hook for a call that does not fit.
    let resp = d.fire(
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "git status"}}),
    );
    assert!(hook_names(&resp).is_empty(), "{resp}");
    let resp = d.fire(
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "git push"}}),
    );
    assert_eq!(hook_names(&resp), ["counted"], "{resp}");
}

#[test]
fn the_same_rule_fits_every_agents_shell_call() {
    let d = counting_daemon("Bash(git push *)");
    let ran = d.sb.p("ran");
    let cwd = d.sb.path().to_path_buf();
    for agent in [
        "codex",
        "gemini-cli",
        "qwen-code",
        "copilot-cli",
        "claude-code",
    ] {
        for (command, fits) in [("cd repo && git push origin", true), ("git status", false)] {
            let before = runs(&ran);
            let (event, extra) = shell_call(agent, command, &cwd);
            let out = relay(&d, agent, &event, &extra);
            assert_eq!(
                code(&out.status),
                0,
                "{agent} {command}: {}",
                text(&out.stderr)
            );
            assert_eq!(
                runs(&ran),
                before + usize::from(fits),
                "{agent}: {command} (event {event})"
            );
        }
    }
}

#[test]
fn an_edit_rule_fits_a_codex_patch_by_the_files_it_touches() {
    let d = counting_daemon("Edit(src/**)");
    let ran = d.sb.p("ran");
    let cwd = d.sb.path().to_path_buf();
    for (path, fits) in [
        ("src/a.rs", true),
        ("docs/a.md", false),
        ("src/deep/b.rs", true),
    ] {
        let before = runs(&ran);
        let (event, extra) = write_call("codex", Path::new(path), &cwd);
        let out = relay(&d, "codex", &event, &extra);
        assert_eq!(code(&out.status), 0, "{path}: {}", text(&out.stderr));
        assert_eq!(runs(&ran), before + usize::from(fits), "{path}");
    }
    // Claude Code's own Write of the same file, and Gemini CLI's write_file.
    for agent in ["claude-code", "gemini-cli", "copilot-cli"] {
        let before = runs(&ran);
        let (event, extra) = write_call(agent, &cwd.join("src/n.rs"), &cwd);
        let out = relay(&d, agent, &event, &extra);
        assert_eq!(code(&out.status), 0, "{agent}: {}", text(&out.stderr));
        assert_eq!(runs(&ran), before + 1, "{agent}: {event}");
    }
}

/// `hookd check` on `toml`: its exit code, stdout and stderr.
fn check(toml: &str) -> (i32, String, String, String) {
    let sb = Sandbox::new();
    sb.settings(toml);
    let config = sb.config();
    let out = run_hookd(
        &["check", "--config", config.to_str().unwrap()],
        None,
        Duration::from_secs(20),
    );
    (
        code(&out.status),
        text(&out.stdout),
        text(&out.stderr),
        config.display().to_string(),
    )
}

#[test]
fn a_rule_that_cannot_be_read_is_refused_at_its_place_and_check_shows_one_that_can() {
    let (status, _, stderr, file) =
        check("[[hooks.PreToolUse]]\nname = \"g\"\nif = \"Bash(git push *\"\ncommand = \"true\"\n");
    assert_eq!(status, 1, "{stderr}");
    // Line 3, at the `(` (column 6 is the opening quote, 7 the B).
    assert!(
        stderr.contains(&format!("{file}:3:11: hook \"g\": if \"Bash(git push *\" cannot be read: the ( after Bash is never closed")),
        "{stderr}"
    );
    let (status, _, stderr, file) =
        check("[[hooks.Stop]]\nname = \"s\"\nif = \"Bash(git push *)\"\ncommand = \"true\"\n");
    assert_eq!(status, 1, "{stderr}");
    assert!(
        stderr.contains(&format!("{file}:3:1: hook \"s\": Stop is no tool call")),
        "{stderr}"
    );
    let (status, stdout, stderr, _) = check(
        "[[hooks.PreToolUse]]\nname = \"g\"\nmatcher = \"Bash\"\nif = \"Bash(git push *)\"\ncommand = \"true\"\n",
    );
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stdout.contains("g  matcher \"Bash\"  if \"Bash(git push *)\"  command \"true\""),
        "{stdout}"
    );
}

/// An empty field (Claude Code once sent `agent_type: ""` at SubagentStop) fits only a matcher that fits
/// anything: not a list of names, not a pattern that an empty text would fit (`.*`), as a missing
/// field fits none of them.
#[test]
fn an_empty_or_missing_field_fits_only_a_matcher_that_fits_anything() {
    let sb = Sandbox::new();
    sb.script("count.sh", "cat >/dev/null; echo \"$1\" >> @DIR@/ran");
    let hook = |name: &str, matcher: &str| {
        format!(
            "[[hooks.SubagentStop]]\nname = \"{name}\"\nmatcher = {matcher:?}\nargv = [\"@DIR@/count.sh\", \"{name}\"]\n"
        )
    };
    sb.settings(
        &[
            hook("any", "*"),
            hook("empty", ""),
            hook("named", "Explore"),
            hook("pattern", ".*"),
            hook("anchored", "^$"),
        ]
        .concat(),
    );
    let d = Daemon::start(sb);
    for event in [
        json!({"session_id": "s", "agent_type": ""}),
        json!({"session_id": "s"}),
        json!({"session_id": "s", "agent_type": null}),
    ] {
        let resp = d.fire("SubagentStop", event.clone());
        assert_eq!(hook_names(&resp), ["any", "empty"], "{event}: {resp}");
    }
    let resp = d.fire("SubagentStop", json!({"agent_type": "Explore"}));
    assert_eq!(
        hook_names(&resp),
        ["any", "empty", "named", "pattern"],
        "{resp}"
    );
    // Counted: no other hook was started, whatever the fire reported.
    let ran = std::fs::read_to_string(d.sb.p("ran")).unwrap();
    assert_eq!(ran.lines().count(), 10, "{ran}");
}

/// An event hookd could read only in part (its head) is not judged by `if`: the hook is kept and read as
/// failed, so that a guard with `on_failure = "refuse"` refuses what hookd could not read, rather than
/// the call passing because its head names no path.
#[test]
fn an_if_does_not_let_an_event_hookd_could_not_read_slip_past_its_guard() {
    let sb = Sandbox::new();
    sb.script("count.sh", "cat >/dev/null; echo ran >> @DIR@/ran");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"src-guard\"\nif = \"Edit(src/**)\"\non_failure = \"refuse\"\ncommand = \"@DIR@/count.sh\"\n",
    );
    let d = Daemon::start(sb);
    let resp = d.fire_req(json!({
        "op": "fire", "id": 1, "moment": "PreToolUse", "agent": "claude-code",
        "event": {"session_id": "s", "tool_name": "Write"},
        "undecidable": "too large to read whole",
    }));
    assert_eq!(resp["refused"], true, "{resp}");
    assert_eq!(hook_names(&resp), ["src-guard"], "{resp}");
    // A call read whole that does not fit is not given to the hook.
    let resp = d.fire(
        "PreToolUse",
        json!({"tool_name": "Write", "cwd": "/p", "tool_input": {"file_path": "/p/docs/a.md"}}),
    );
    assert_eq!(resp["refused"], false, "{resp}");
    assert!(hook_names(&resp).is_empty(), "{resp}");
}

#[test]
fn a_guard_of_git_push_is_not_slipped_past_by_options_unknown_words_case_or_a_link() {
    let d = counting_daemon("Bash(git push *)");
    let ran = d.sb.p("ran");
    let cwd = d.sb.path().to_path_buf();
    for command in [
        "git -C elsewhere push",
        "git -c credential.helper= --no-pager push --force",
        "git $(printf push)",
        "git pus?",
        "xargs git < commands",
        "GIT push",
    ] {
        let before = runs(&ran);
        let (event, extra) = shell_call("claude-code", command, &cwd);
        let out = relay(&d, "claude-code", &event, &extra);
        assert_eq!(code(&out.status), 0, "{command}: {}", text(&out.stderr));
        assert_eq!(
            runs(&ran),
            before + 1,
            "{command}: the guard was not started"
        );
    }
    // An edit through a link made to the folder a rule guards.
    let sb = Sandbox::new();
    sb.script("count.sh", "cat >/dev/null; echo ran >> @DIR@/ran");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"counted\"\nif = \"Edit(src/**)\"\ncommand = \"@DIR@/count.sh\"\n",
    );
    let d = Daemon::start(sb);
    let project = d.sb.path().join("project");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::os::unix::fs::symlink(project.join("src"), project.join("lnk")).unwrap();
    let resp = d.fire(
        "PreToolUse",
        json!({"tool_name": "Edit", "cwd": project, "tool_input": {"file_path": "lnk/main.rs", "old_string": "a", "new_string": "b"}}),
    );
    assert_eq!(hook_names(&resp), ["counted"], "{resp}");
}
