//! `hookd check --config F` (contract sections 2 and 3): a valid file is listed per moment; every error of
//! an invalid file is printed as `FILE:LINE:COL: message`; the file's owner and mode are checked.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use crate::common::*;

struct Checked {
    code: i32,
    stdout: String,
    stderr: String,
    /// The `FILE:LINE:COL: message` lines of stderr, parsed.
    errors: Vec<(u32, u32, String)>,
}

fn check(sb: &Sandbox) -> Checked {
    let config = sb.config();
    let out = run_hookd(
        &["check", "--config", config.to_str().unwrap()],
        None,
        Duration::from_secs(20),
    );
    let stderr = text(&out.stderr);
    let prefix = format!("{}:", config.display());
    let errors = stderr
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix(&prefix)?;
            let mut parts = rest.splitn(3, ':');
            let line = parts.next()?.parse().ok()?;
            let col = parts.next()?.parse().ok()?;
            let msg = parts.next()?.strip_prefix(' ')?.to_string();
            Some((line, col, msg))
        })
        .collect();
    Checked {
        code: code(&out.status),
        stdout: text(&out.stdout),
        stderr,
        errors,
    }
}

/// Checks `toml`, expecting it invalid; returns the result.
fn invalid(toml: &str) -> Checked {
    let sb = Sandbox::new();
    sb.settings(toml);
    let c = check(&sb);
    assert_eq!(
        c.code, 1,
        "expected exit 1 for an invalid file; stdout {:?} stderr {:?}",
        c.stdout, c.stderr
    );
    assert!(
        !c.errors.is_empty(),
        "no FILE:LINE:COL: message line on stderr: {:?}",
        c.stderr
    );
    c
}

/// The error whose message contains every one of `words`.
fn find<'a>(c: &'a Checked, words: &[&str]) -> &'a (u32, u32, String) {
    c.errors
        .iter()
        .find(|(_, _, m)| words.iter().all(|w| m.contains(w)))
        .unwrap_or_else(|| panic!("no error mentioning {words:?} in {:?}", c.stderr))
}

#[test]
fn valid_file_lists_hooks_per_moment() {
    let sb = Sandbox::new();
    sb.settings(
        "[defaults]\ntimeout = 5\non_failure = \"ignore\"\nshell = \"/bin/sh\"\nmax_processes = 8\nstop_refusal_cap = 4\n\n\
         [[hooks.PreToolUse]]\nname = \"deny-rm\"\nmatcher = \"Bash\"\ncommand = \"true\"\ntimeout = 0.5\non_failure = \"refuse\"\n\n\
         [[hooks.PreToolUse]]\nargv = [\"/bin/true\"]\nagents = [\"codex\"]\nenv = { POLICY = \"strict\" }\nenabled = false\n\n\
         [[hooks.UserPromptSubmit]]\nname = \"git-context\"\ncommand = \"git status --short\"\n",
    );
    let c = check(&sb);
    assert_eq!(c.code, 0, "stderr: {}", c.stderr);
    for word in [
        "PreToolUse",
        "UserPromptSubmit",
        "deny-rm",
        "PreToolUse#2",
        "git-context",
    ] {
        assert!(c.stdout.contains(word), "{word} not listed: {}", c.stdout);
    }
}

#[test]
fn unknown_moment_with_suggestion() {
    let c = invalid("[[hooks.PreTooluse]]\nname = \"a\"\ncommand = \"true\"\n");
    let (line, _, msg) = find(&c, &["unknown moment \"PreTooluse\""]);
    assert_eq!(*line, 1, "{msg}");
    assert!(
        msg.contains("did you mean \"PreToolUse\""),
        "no suggestion: {msg}"
    );
}

#[test]
fn unknown_key_named_with_line_and_column() {
    let c = invalid(
        "[defaults]\ntimeout = 5\n\n[[hooks.PreToolUse]]\nname = \"a\"\ncommand = \"true\"\ntiemout = 3\n",
    );
    let (line, col, msg) = find(&c, &["tiemout"]);
    assert_eq!((*line, *col), (7, 1), "{msg}");
}

#[test]
fn unknown_key_in_defaults() {
    let c = invalid("[defaults]\n  time_out = 5\n");
    let (line, col, msg) = find(&c, &["time_out"]);
    assert_eq!((*line, *col), (2, 3), "{msg}");
}

#[test]
fn duplicate_hook_names() {
    let c = invalid(
        "[[hooks.PreToolUse]]\nname = \"dup\"\ncommand = \"true\"\n\n[[hooks.PreToolUse]]\nname = \"dup\"\ncommand = \"false\"\n",
    );
    let (_, _, msg) = find(&c, &["dup"]);
    assert!(msg.to_lowercase().contains("duplicate"), "{msg}");
}

#[test]
fn command_and_argv_together() {
    let c = invalid(
        "[[hooks.PreToolUse]]\nname = \"both\"\ncommand = \"true\"\nargv = [\"/bin/true\"]\n",
    );
    find(&c, &["command", "argv"]);
}

#[test]
fn neither_command_nor_argv() {
    let c = invalid("[[hooks.PreToolUse]]\nname = \"neither\"\nmatcher = \"Bash\"\n");
    find(&c, &["command", "argv"]);
}

#[test]
fn empty_argv() {
    let c = invalid("[[hooks.PreToolUse]]\nname = \"empty\"\nargv = []\n");
    find(&c, &["argv"]);
}

#[test]
fn matcher_on_moments_without_matcher_field() {
    let c = invalid(
        "[[hooks.UserPromptSubmit]]\nname = \"u\"\nmatcher = \"Bash\"\ncommand = \"true\"\n\n\
         [[hooks.Stop]]\nname = \"s\"\nmatcher = \"*\"\ncommand = \"true\"\n",
    );
    let matcher_errors: Vec<_> = c
        .errors
        .iter()
        .filter(|(_, _, m)| m.contains("matcher"))
        .collect();
    assert_eq!(
        matcher_errors.len(),
        2,
        "one error per misplaced matcher: {:?}",
        c.stderr
    );
    // Each error points into its own hook (lines 1-4 and 6-9).
    assert!(
        matcher_errors.iter().any(|(l, _, _)| (1..=4).contains(l)),
        "{:?}",
        c.stderr
    );
    assert!(
        matcher_errors.iter().any(|(l, _, _)| (6..=9).contains(l)),
        "{:?}",
        c.stderr
    );
}

#[test]
fn invalid_regex_names_hook_and_quotes_regex() {
    let c = invalid(
        "[[hooks.PreToolUse]]\nname = \"bad-re\"\nmatcher = \"mcp__(\"\ncommand = \"true\"\n",
    );
    let (_, _, msg) = find(&c, &["bad-re", "mcp__("]);
    assert!(
        msg.contains("\"mcp__(\"") || msg.contains("'mcp__('") || msg.contains("`mcp__(`"),
        "the regex is not quoted: {msg}"
    );
}

#[test]
fn toml_syntax_error() {
    let c = invalid("[[hooks.PreToolUse]]\nname = \"a\"\ncommand = \"unterminated\n");
    assert_eq!(c.errors[0].0, 3, "{:?}", c.stderr);
}

#[test]
fn several_errors_reported_at_once() {
    let c = invalid(
        "[[hooks.PreTooluse]]\ncommand = \"true\"\n\n\
         [[hooks.PreToolUse]]\nname = \"dup\"\ncommand = \"true\"\n\n\
         [[hooks.PreToolUse]]\nname = \"dup\"\ncommand = \"true\"\n\n\
         [[hooks.PostToolUse]]\nname = \"re\"\nmatcher = \"mcp__(\"\ncommand = \"true\"\n",
    );
    assert!(
        c.errors.len() >= 2,
        "only {} error(s) reported: {:?}",
        c.errors.len(),
        c.stderr
    );
    let lines: std::collections::BTreeSet<u32> = c.errors.iter().map(|e| e.0).collect();
    assert!(lines.len() >= 2, "all errors on one line: {:?}", c.stderr);
}

#[test]
fn writable_by_group_or_others_is_refused() {
    for mode in [0o666, 0o664, 0o646] {
        let sb = Sandbox::new();
        sb.settings("[[hooks.PreToolUse]]\nname = \"a\"\ncommand = \"true\"\n");
        fs::set_permissions(sb.config(), fs::Permissions::from_mode(mode)).unwrap();
        let c = check(&sb);
        assert_eq!(c.code, 1, "mode {mode:o} accepted: {}", c.stdout);
        let err = c.stderr.to_lowercase();
        assert!(
            err.contains("writable") || err.contains("mode") || err.contains(&format!("{mode:o}")),
            "mode {mode:o}: the error does not say why: {}",
            c.stderr
        );
    }
}

#[test]
fn file_owned_by_another_user_is_refused() {
    if !require_root("a settings file owned by another user") {
        return;
    }
    let sb = Sandbox::new();
    sb.settings("[[hooks.PreToolUse]]\nname = \"a\"\ncommand = \"true\"\n");
    std::os::unix::fs::chown(sb.config(), Some(65534), Some(65534)).unwrap();
    let c = check(&sb);
    assert_eq!(
        c.code, 1,
        "a file owned by uid 65534 accepted: {}",
        c.stdout
    );
    assert!(
        c.stderr.to_lowercase().contains("own"),
        "the error does not say why: {}",
        c.stderr
    );
}

/// A hook scoped to `"claude"` would never run (no agent is called that); the file is refused
/// at the name, with the name meant.
#[test]
fn an_agent_name_that_means_a_known_agent_is_an_error_with_the_name_meant() {
    let c = invalid("[[hooks.PreToolUse]]\ncommand = \"true\"\nagents = [\"codex\", \"claude\"]\n");
    assert_eq!(c.errors.len(), 1, "{}", c.stderr);
    let (line, col, msg) = find(&c, &["unknown agent \"claude\""]);
    assert_eq!((*line, *col), (3, 20), "{msg}");
    assert!(
        msg.contains("(did you mean \"claude-code\"?)"),
        "no suggestion: {msg}"
    );
}

/// An agent's own name for a moment is answered with the moment meant, not with advice to
/// declare it (a declared `BeforeTool` would never be fired by `hookd relay`).
#[test]
fn an_agents_own_moment_name_is_answered_with_the_moment_meant() {
    let c = invalid("[[hooks.BeforeTool]]\ncommand = \"true\"\n");
    let (line, col, msg) = find(&c, &["unknown moment \"BeforeTool\""]);
    assert_eq!((*line, *col), (1, 9), "{msg}");
    assert!(
        msg.contains("BeforeTool\": it is Gemini CLI's name for PreToolUse")
            && msg.contains("write [[hooks.PreToolUse]]"),
        "{msg}"
    );
    assert!(!msg.contains("moments = "), "advice to declare it: {msg}");
}

/// An empty file is refused by `check` as a reload refuses it (reload_live holds the reload's
/// side); a file with only a comment is valid and has no hooks.
#[test]
fn an_empty_file_is_refused_and_a_comment_is_the_way_to_have_no_hooks() {
    let c = invalid("");
    let (line, col, msg) = find(&c, &["the file is empty"]);
    assert_eq!((*line, *col), (1, 1), "{msg}");
    assert!(msg.contains("write a comment in it"), "{msg}");

    let sb = Sandbox::new();
    sb.settings("# no hooks for now\n");
    let c = check(&sb);
    assert_eq!(c.code, 0, "stderr: {}", c.stderr);
    assert!(c.stdout.contains("valid, 0 hooks"), "{}", c.stdout);
}

#[test]
fn declared_moments_are_valid() {
    let body = "[[hooks.WorktreeCreate]]\nname = \"watch\"\ncommand = \"true\"\n";
    invalid(body);

    let sb = Sandbox::new();
    sb.settings(&format!("moments = [\"WorktreeCreate\"]\n\n{body}"));
    let c = check(&sb);
    assert_eq!(c.code, 0, "stderr: {}", c.stderr);
    assert!(
        c.stdout.contains("WorktreeCreate") && c.stdout.contains("watch"),
        "{}",
        c.stdout
    );
}

// ----- Folders, programs, files that block or are huge, big files -----

/// Checks the sandbox's settings, expecting them refused; returns the result.
fn refused(sb: &Sandbox) -> Checked {
    let c = check(sb);
    assert_eq!(
        c.code, 1,
        "expected the file refused; stdout {:?} stderr {:?}",
        c.stdout, c.stderr
    );
    c
}

#[test]
fn a_settings_folder_others_can_write_is_refused_with_the_fix() {
    let sb = Sandbox::new();
    sb.settings("[[hooks.PreToolUse]]\nname = \"a\"\ncommand = \"true\"\n");
    for mode in [0o777, 0o775, 0o757] {
        fs::set_permissions(sb.config_dir(), fs::Permissions::from_mode(mode)).unwrap();
        let c = refused(&sb);
        let conf = sb.config_dir();
        let (line, col, message) = find(&c, &["writable by group or others"]);
        assert_eq!((*line, *col), (1, 1), "{}", c.stderr);
        assert!(
            message.contains(&format!("the folder {}", conf.display()))
                && message.contains(&format!("mode {mode:04o}"))
                && message.contains(&format!("chmod go-w {}", conf.display())),
            "{}",
            c.stderr
        );
    }
    fs::set_permissions(sb.config_dir(), fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(check(&sb).code, 0);
}

#[test]
fn a_hook_program_others_can_write_is_refused_at_its_hook() {
    let sb = Sandbox::new();
    let guard = sb.script("guard.sh", "exit 2");
    fs::create_dir(sb.p("bin")).unwrap();
    let tool = sb.script("bin/tool", "exit 0");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"guard\"\ncommand = \"@DIR@/guard.sh --strict\"\n\n\
         [[hooks.PreToolUse]]\nname = \"tool\"\nargv = [\"../bin/tool\", \"x\"]\n\n\
         [[hooks.PreToolUse]]\nname = \"later\"\ncommand = \"@DIR@/not-yet.sh\"\n",
    );
    assert_eq!(
        check(&sb).code,
        0,
        "a program that does not exist yet is not refused"
    );

    fs::set_permissions(&guard, fs::Permissions::from_mode(0o775)).unwrap();
    fs::set_permissions(sb.p("bin"), fs::Permissions::from_mode(0o777)).unwrap();
    let c = refused(&sb);
    assert_eq!(c.errors.len(), 2, "{}", c.stderr);
    let (line, col, message) = &c.errors[0];
    assert_eq!((*line, *col), (3, 11), "{}", c.stderr);
    assert!(
        message.starts_with("hook \"guard\": refused: the program ")
            && message.contains("mode 0775")
            && message.ends_with(&format!("(fix: chmod go-w {})", guard.display())),
        "{}",
        c.stderr
    );
    // A relative argv[0] is taken from the settings file's folder; the folder above it is open.
    let (line, col, message) = &c.errors[1];
    assert_eq!((*line, *col), (7, 8), "{}", c.stderr);
    assert!(
        message.starts_with("hook \"tool\": refused: the folder ")
            && message.contains(&format!("chmod go-w {}", sb.p("bin").display())),
        "{}",
        c.stderr
    );
    let _ = tool;
}

#[test]
fn a_symlinked_settings_file_whose_targets_folder_others_can_write_is_refused() {
    let sb = Sandbox::new();
    fs::create_dir(sb.p("store")).unwrap();
    fs::write(
        sb.p("store/hooks.toml"),
        "[[hooks.Stop]]\ncommand = \"true\"\n",
    )
    .unwrap();
    fs::set_permissions(sb.p("store/hooks.toml"), fs::Permissions::from_mode(0o644)).unwrap();
    std::os::unix::fs::symlink("../store/hooks.toml", sb.config()).unwrap();
    assert_eq!(check(&sb).code, 0);
    fs::set_permissions(sb.p("store"), fs::Permissions::from_mode(0o770)).unwrap();
    let c = refused(&sb);
    find(
        &c,
        &[
            &format!("chmod go-w {}", sb.p("store").display()),
            "mode 0770",
        ],
    );
}

#[test]
fn a_fifo_is_refused_at_once() {
    let sb = Sandbox::new();
    nix::unistd::mkfifo(
        &sb.config(),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    let c = refused(&sb);
    find(&c, &["FIFO", "not a regular file"]);
}

#[test]
fn a_huge_sparse_file_is_refused_at_once() {
    let sb = Sandbox::new();
    sb.settings("# big\n");
    fs::OpenOptions::new()
        .write(true)
        .open(sb.config())
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let c = refused(&sb);
    find(&c, &["1073741824 bytes", "more than the 4 MiB"]);
}

#[test]
fn ten_thousand_hooks_are_checked() {
    let sb = Sandbox::new();
    let text: String = (0..10_000)
        .map(|i| {
            format!("[[hooks.PreToolUse]]\nname = \"h{i}\"\nmatcher = \"Bash\"\ncommand = \"/bin/true\"\n")
        })
        .collect();
    sb.settings(&text);
    let c = check(&sb);
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(
        c.stdout.contains("valid, 10000 hooks"),
        "{}",
        &c.stdout[..200]
    );
}

// ----- Time limits per moment -----

#[test]
fn a_hook_that_cannot_finish_within_an_agents_limit_at_a_moment_is_warned_of() {
    // Claude Code waits at most 60 s for SessionEnd hooks (its cap on the largest `timeout`), and the relay
    // stops waiting half a second before that.
    let sb = Sandbox::new();
    sb.settings(
        "[[hooks.SessionEnd]]\nname = \"upload\"\ncommand = \"true\"\ntimeout = 90\n\n\
         [[hooks.SessionEnd]]\nname = \"quick\"\ncommand = \"true\"\ntimeout = 5\n\n\
         [[hooks.SessionEnd]]\nname = \"gemini-only\"\ncommand = \"true\"\ntimeout = 90\nagents = [\"gemini-cli\"]\n\n\
         [[hooks.PreToolUse]]\nname = \"slow-check\"\ncommand = \"true\"\ntimeout = 90\n",
    );
    let c = check(&sb);
    assert_eq!(c.code, 0, "stderr: {}", c.stderr);
    let warnings: Vec<&str> = c
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .collect();
    assert_eq!(
        warnings,
        [
            "warning: hook \"upload\" is given 90s, but Claude Code waits at most 60s for its hooks at \
             SessionEnd: hookd stops it there after 59s (its on_failure then decides), so that the verdict is \
             heard; give it a timeout of at most 59s (or scope it away from claude-code with agents)",
            "warning: hook \"upload\" is given 90s, but Codex waits at most 3s for its hooks at SessionEnd: \
             hookd stops it there after 2s (its on_failure then decides), so that the verdict is heard; give \
             it a timeout of at most 2s (or scope it away from codex with agents)",
            "warning: hook \"quick\" is given 5s, but Codex waits at most 3s for its hooks at SessionEnd: \
             hookd stops it there after 2s (its on_failure then decides), so that the verdict is heard; give \
             it a timeout of at most 2s (or scope it away from codex with agents)"
        ],
        "{}",
        c.stderr
    );
}

/// A file with a hook on every moment hookd knows, for every agent, is clean: no hook is
/// unreachable for the agents it applies to, and hookd's own timeout fits itself to each agent's limit.
#[test]
fn a_hook_on_every_moment_for_every_agent_checks_clean() {
    let sb = Sandbox::new();
    let mut toml = String::new();
    for moment in hookd::moment::KNOWN {
        for agent in hookd::agent::Agent::ALL
            .into_iter()
            .filter(|agent| agent.fires(moment.name))
        {
            toml.push_str(&format!(
                "[[hooks.{m}]]\nname = \"{a}-{m}\"\ncommand = \"true\"\nagents = [\"{a}\"]\n\n",
                m = moment.name,
                a = agent.name()
            ));
        }
    }
    sb.settings(&toml);
    let c = check(&sb);
    assert_eq!(c.code, 0, "stderr: {}", c.stderr);
    assert!(
        !c.stderr.contains("warning"),
        "a clean file warned:\n{}",
        c.stderr
    );
    // And every agent's every moment is there.
    for agent in hookd::agent::Agent::ALL {
        for moment in agent.moments() {
            assert!(
                c.stdout.contains(&format!("{}-{moment}", agent.name())),
                "{}",
                c.stdout
            );
        }
    }
}

// ----- A hook that can never run where it is hung -----

/// The hook of the examples below: Gemini CLI never fires PermissionRequest.
const NEVER_RUNS: &str =
    "[[hooks.PermissionRequest]]\nname = \"perm\"\nagents = [\"gemini-cli\"]\ncommand = \"true\"\n";

/// A hook none of whose agents ever fires its moment is refused as any invalid hook is: an error at its
/// `agents`, naming the agent, the moments it does fire and the agents that fire this one, with the
/// moment it most likely meant (Gemini CLI's BeforeTool is hookd's PreToolUse); `check` exits 1.
#[test]
fn a_hook_none_of_whose_agents_fires_its_moment_is_an_error_at_its_agents() {
    let c = invalid(NEVER_RUNS);
    assert_eq!(c.errors.len(), 1, "{}", c.stderr);
    let (line, col, msg) = &c.errors[0];
    assert_eq!((*line, *col), (3, 10), "at `agents`'s value: {}", c.stderr);
    assert_eq!(
        msg,
        "hook \"perm\": gemini-cli never fires PermissionRequest, so this hook would never run (did you \
         mean [[hooks.PreToolUse]], Gemini CLI's BeforeTool?); gemini-cli fires SessionStart, \
         UserPromptSubmit (its BeforeAgent), PreToolUse (its BeforeTool), PostToolUse (its AfterTool), \
         Notification, Stop (its AfterAgent), PreCompact (its PreCompress) and SessionEnd; \
         PermissionRequest is fired by claude-code, codex, qwen-code and copilot-cli"
    );
    assert!(c.stdout.is_empty(), "{}", c.stdout);
    assert!(!c.stderr.contains("warning"), "{}", c.stderr);

    // The same with --json: not ok, the error in the object, exit 1.
    let sb = Sandbox::new();
    sb.settings(NEVER_RUNS);
    let out = run_hookd(
        &["check", "--json", "--config", sb.config().to_str().unwrap()],
        None,
        Duration::from_secs(20),
    );
    assert_eq!(code(&out.status), 1, "{}", text(&out.stderr));
    let object: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(object["ok"], false, "{object}");
    let error = object["errors"][0].as_str().unwrap_or_default();
    assert!(
        error.ends_with(":3:10: hook \"perm\": gemini-cli never fires PermissionRequest, so this hook would never run (did you mean [[hooks.PreToolUse]], Gemini CLI's BeforeTool?); gemini-cli fires SessionStart, UserPromptSubmit (its BeforeAgent), PreToolUse (its BeforeTool), PostToolUse (its AfterTool), Notification, Stop (its AfterAgent), PreCompact (its PreCompress) and SessionEnd; PermissionRequest is fired by claude-code, codex, qwen-code and copilot-cli"),
        "{object}"
    );
}

/// Several agents, none firing the moment: each is named with what it fires; and every such hook of
/// the file is reported at once, each at its own `agents`.
#[test]
fn each_hook_that_can_never_run_is_reported_with_every_agent_it_names() {
    let c = invalid(
        "[[hooks.PostToolUseFailure]]\nname = \"fail\"\ncommand = \"true\"\nagents = [\"codex\", \"gemini-cli\"]\n\n\
         [[hooks.Stop]]\nname = \"fine\"\ncommand = \"true\"\nagents = [\"codex\"]\n\n\
         [[hooks.Elicitation]]\nname = \"ask\"\ncommand = \"true\"\nagents = [\"qwen-code\"]\n",
    );
    assert_eq!(c.errors.len(), 2, "{}", c.stderr);
    let (line, col, msg) = find(&c, &["\"fail\""]);
    assert_eq!((*line, *col), (4, 10));
    assert!(
        msg.starts_with("hook \"fail\": none of its agents (codex, gemini-cli) fires PostToolUseFailure, so this hook would never run (did you mean [[hooks.PostToolUse]], Gemini CLI's AfterTool?); codex fires SessionStart, "),
        "{msg}"
    );
    assert!(msg.contains("; gemini-cli fires SessionStart, "), "{msg}");
    assert!(
        msg.ends_with("; PostToolUseFailure is fired by claude-code, qwen-code and copilot-cli"),
        "{msg}"
    );
    let (line, col, msg) = find(&c, &["\"ask\""]);
    assert_eq!((*line, *col), (14, 10));
    assert!(
        msg.starts_with("hook \"ask\": qwen-code never fires Elicitation, so this hook would never run; qwen-code fires SessionStart, "),
        "no moment near Elicitation that Qwen Code fires, so no did-you-mean: {msg}"
    );
}

/// The same hook for an agent that fires its moment too can run: valid, with a warning for the agent
/// that never fires it.
#[test]
fn the_same_hook_for_an_agent_that_fires_its_moment_too_is_valid_with_a_warning() {
    let sb = Sandbox::new();
    sb.settings(&NEVER_RUNS.replace("[\"gemini-cli\"]", "[\"claude-code\", \"gemini-cli\"]"));
    let c = check(&sb);
    assert_eq!(c.code, 0, "stderr: {}", c.stderr);
    assert!(c.stdout.contains("valid, 1 hook"), "{}", c.stdout);
    let warnings: Vec<&str> = c
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .collect();
    assert_eq!(
        warnings,
        [
            "warning: hook \"perm\" is for gemini-cli, which never fires PermissionRequest: it will not run for gemini-cli"
        ],
        "{}",
        c.stderr
    );
    // A client's own agent may fire any moment; a hook switched off is not judged until it is switched on.
    for agents in [
        "[\"gemini-cli\", \"my-sdk-agent\"]",
        "[\"gemini-cli\"]\nenabled = false",
    ] {
        sb.settings(&NEVER_RUNS.replace("[\"gemini-cli\"]", agents));
        let c = check(&sb);
        assert_eq!(c.code, 0, "{agents}: {}", c.stderr);
    }
}

/// A matcher that names nothing (`"|"`: split on `|` and `,`, no name is left) fits no event: the hook
/// can never run, and the error is at the matcher.
#[test]
fn a_matcher_that_names_nothing_is_an_error_at_the_matcher() {
    let c =
        invalid("[[hooks.PreToolUse]]\nname = \"guard\"\nmatcher = \" | \"\ncommand = \"true\"\n");
    assert_eq!(c.errors.len(), 1, "{}", c.stderr);
    let (line, col, msg) = &c.errors[0];
    assert_eq!((*line, *col), (3, 11), "{}", c.stderr);
    assert!(
        msg.starts_with("hook \"guard\": matcher \" | \" names no tool_name: split on | and , it holds no name, so it fits no event of PreToolUse and this hook would never run"),
        "{msg}"
    );
}
