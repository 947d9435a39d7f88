//! Attacks on the settings in layers (docs/teams.md): what an agent running as the user can do to a
//! repository's trusted hooks (hide them behind a nested hooks file or a `.git` of its own, reach the
//! repository through a link, shadow them with a twin of the user's, take them out of the file, put a
//! FIFO or a huge file in the hooks file's place), what a repository may not set, trust replayed to a
//! copy, and a careless admin's edits of the managed layer. Each test asserts the safe behaviour.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::*;
use crate::layers_managed::{managed, write_managed};
use crate::layers_project::{bash, make_repo, trust};

fn trusted(d: &Daemon, repo: &Path) {
    let out = trust(d, &[repo.to_str().unwrap()]);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
}

/// The repository's guard: refuses every Bash call.
const GATE: &str = "[[hooks.PreToolUse]]\nname = \"gate\"\nmatcher = \"Bash\"\ncommand = \"$HOOKD_CONFIG_DIR/gate.sh\"\n";
const GATE_SH: (&str, &str) = ("gate.sh", "echo 'the repo says no' >&2; exit 2");

/// A daemon whose user has no hooks, on a repository whose trusted gate refuses every Bash call.
fn gated() -> (Daemon, PathBuf) {
    let sb = Sandbox::new();
    sb.settings("# no hooks of the user's\n");
    let repo = make_repo(&sb, GATE, &[GATE_SH]);
    let d = Daemon::start(sb);
    trusted(&d, &repo);
    assert_eq!(
        d.fire("PreToolUse", bash("make", &repo.join("src")))["refused"],
        true
    );
    (d, repo)
}

#[test]
fn a_nested_hooks_file_does_not_hide_the_repositorys_trusted_hooks() {
    let (d, repo) = gated();
    // The agent writes a hooks file of its own below the repository's: one that does nothing (valid,
    // nothing to trust), and one whose hook is pending.
    let sub = repo.join("src");
    fs::create_dir_all(sub.join(".hookd")).unwrap();
    fs::write(sub.join(".hookd/hooks.toml"), "# nothing here\n").unwrap();
    let resp = d.fire("PreToolUse", bash("make", &sub));
    assert_eq!(resp["refused"], true, "an empty nested file: {resp}");
    assert_eq!(resp["reason"], "the repo says no", "{resp}");
    let deeper = sub.join("deeper");
    fs::create_dir_all(deeper.join(".hookd")).unwrap();
    fs::write(
        deeper.join(".hookd/hooks.toml"),
        "[[hooks.PreToolUse]]\nname = \"noop\"\ncommand = \"true\"\n",
    )
    .unwrap();
    let resp = d.fire("PreToolUse", bash("make", &deeper));
    assert_eq!(resp["refused"], true, "a nested file with a hook: {resp}");
    assert_eq!(
        hook(&resp, "project:noop")["outcome"],
        "skipped",
        "the nested one is pending: {resp}"
    );
}

#[test]
fn a_hooks_file_put_above_the_repository_does_not_take_its_place() {
    let sb = Sandbox::new();
    sb.settings("# no hooks of the user's\n");
    // The repository in a folder the agent can write (below the home folder's level).
    let outer = sb.p("work");
    let repo = outer.join("repo");
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::create_dir_all(repo.join(".hookd")).unwrap();
    let gate = repo.join(".hookd/gate.sh");
    fs::write(&gate, format!("#!/bin/sh\n{}\n", GATE_SH.1)).unwrap();
    fs::set_permissions(&gate, fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(repo.join(".hookd/hooks.toml"), GATE).unwrap();
    let d = Daemon::start(sb);
    trusted(&d, &repo);
    // The agent makes the folder above a repository of its own, with a hooks file that does nothing.
    fs::create_dir_all(outer.join(".git")).unwrap();
    fs::create_dir_all(outer.join(".hookd")).unwrap();
    fs::write(
        outer.join(".hookd/hooks.toml"),
        "[[hooks.PreToolUse]]\nname = \"noop\"\ncommand = \"true\"\n",
    )
    .unwrap();
    wait_until(Duration::from_secs(10), "the outer file seen", || {
        let resp = d.fire("PreToolUse", bash("make", &repo));
        assert_eq!(resp["refused"], true, "{resp}");
        assert_eq!(resp["reason"], "the repo says no", "{resp}");
        hook_names(&resp).iter().any(|n| n == "project:noop")
    });
    // `/` and a folder in no repository: answered, nothing of the repository's.
    for cwd in [Path::new("/"), Path::new("/tmp")] {
        let resp = d.fire("PreToolUse", bash("make", cwd));
        assert_eq!(hook_names(&resp), Vec::<String>::new(), "{resp}");
    }
}

#[test]
fn a_git_marker_made_below_the_repositorys_root_does_not_cut_its_hooks_off() {
    let (d, repo) = gated();
    // `.git` as a file (a worktree's, a submodule's) and as a folder (`git init src/lib`).
    let file = repo.join("src/vendored");
    fs::create_dir_all(&file).unwrap();
    fs::write(file.join(".git"), "gitdir: /nowhere\n").unwrap();
    let folder = repo.join("src/lib");
    fs::create_dir_all(folder.join(".git")).unwrap();
    for cwd in [&file, &folder] {
        let resp = d.fire("PreToolUse", bash("make", cwd));
        assert_eq!(resp["refused"], true, "{}: {resp}", cwd.display());
        assert_eq!(resp["reason"], "the repo says no", "{resp}");
    }
}

#[test]
fn a_cwd_spelled_through_a_link_or_dots_is_where_it_really_is() {
    let (d, repo) = gated();
    // A link from outside the repository into it: the agent `cd`s through it.
    let link = d.sb.p("link");
    std::os::unix::fs::symlink(repo.join("src"), &link).unwrap();
    let resp = d.fire("PreToolUse", bash("make", &link));
    assert_eq!(resp["refused"], true, "through a link: {resp}");
    // `..` inside the repository stays inside it.
    let dotted = repo.join("src/../src");
    let resp = d.fire("PreToolUse", bash("make", &dotted));
    assert_eq!(resp["refused"], true, "with ..: {resp}");
    // `repo/..` is the sandbox, outside the repository: its hooks are not the event's.
    let above = repo.join("..");
    let resp = d.fire("PreToolUse", bash("make", &above));
    assert_eq!(resp["refused"], false, "repo/.. is outside: {resp}");
    assert_eq!(hook_names(&resp), Vec::<String>::new(), "{resp}");
    // A relative cwd says nowhere: no repository's hooks, and the fire is answered.
    let resp = d.fire(
        "PreToolUse",
        json!({"session_id": "s", "cwd": "repo/src", "tool_name": "Bash", "tool_input": {"command": "make"}}),
    );
    assert_eq!(resp["refused"], false, "{resp}");
}

#[test]
fn a_users_twin_that_is_off_fail_open_or_otherwise_run_does_not_shadow_a_repositorys_hook() {
    // The repository's hook, fail-closed: refuses unless X=1, and a crash refuses too.
    let gate = |repo: &Path, extra: &str| {
        format!(
            "[[hooks.PreToolUse]]\nname = \"gate\"\nmatcher = \"Bash\"\ncommand = \"{}/.hookd/gate.sh\"\n{extra}",
            repo.display()
        )
    };
    let script = (
        "gate.sh",
        "[ \"$X\" = 1 ] && exit 0; [ \"$CRASH\" = 1 ] && exit 1; echo 'the repo says no' >&2; exit 2",
    );
    // The user's file holds the same hook word for word, but switched off, or with an environment
    // that makes it allow, or fail-open where the repository's is fail-closed.
    for (twin, mine, crash) in [
        ("enabled = false\n", "", false),
        ("env = { X = \"1\" }\n", "", false),
        ("", "on_failure = \"refuse\"\n", true),
    ] {
        let sb = Sandbox::new();
        let repo = sb.p("repo");
        sb.settings(&gate(&repo, twin));
        make_repo(&sb, &gate(&repo, mine), &[script]);
        let d = Daemon::start_with(sb, |cmd| {
            if crash {
                cmd.env("CRASH", "1");
            }
        });
        trusted(&d, &repo);
        let resp = d.fire("PreToolUse", bash("make", &repo));
        assert_eq!(
            resp["refused"], true,
            "the user's twin with {twin:?}: {resp}"
        );
        assert!(
            hook_names(&resp).iter().any(|n| n == "project:gate"),
            "{resp}"
        );
    }
    // The same words, `$HOOKD_CONFIG_DIR/gate.sh`, in the user's file are the user's folder's script:
    // another hook.
    let sb = Sandbox::new();
    fs::write(sb.config_dir().join("gate.sh"), "#!/bin/sh\nexit 0\n").unwrap();
    fs::set_permissions(
        sb.config_dir().join("gate.sh"),
        fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    sb.settings(GATE);
    let repo = make_repo(&sb, GATE, &[GATE_SH]);
    let d = Daemon::start(sb);
    trusted(&d, &repo);
    let resp = d.fire("PreToolUse", bash("make", &repo));
    assert_eq!(resp["refused"], true, "another folder's script: {resp}");
    assert_eq!(resp["reason"], "the repo says no", "{resp}");
}

#[test]
fn a_trusted_hook_switched_off_or_taken_out_of_the_repositorys_file_is_not_silent() {
    let (d, repo) = gated();
    let file = repo.join(".hookd/hooks.toml");
    let cwd = repo.join("src");
    // The agent edits the trusted hook so that it no longer fits (switched off, a matcher that matches
    // nothing) or no longer refuses. A change like any other: pending, said at every fire of its moment.
    for edit in [
        GATE.replace(
            "matcher = \"Bash\"\n",
            "matcher = \"Bash\"\nenabled = false\n",
        ),
        GATE.replace("matcher = \"Bash\"", "matcher = \"Nothing\""),
        // The same script, its refusal thrown away: the definition's text is pinned, not only the
        // files it names.
        GATE.replace("gate.sh\"", "gate.sh || true\""),
        format!("{GATE}env = {{ PATH = \"/nowhere\" }}\n"),
    ] {
        fs::write(&file, &edit).unwrap();
        pending_reported(&d, &cwd, "project:gate", "changed since it was trusted");
    }
    // The agent rewrites the file without the gate.
    fs::write(&file, "# nothing to see\n").unwrap();
    pending_reported(
        &d,
        &cwd,
        "project:gate",
        "removed from the repository's hooks",
    );
    // The whole `.hookd` folder removed: the same.
    fs::remove_dir_all(repo.join(".hookd")).unwrap();
    wait_until(Duration::from_secs(10), "the folder's removal seen", || {
        let resp = d.fire("PreToolUse", bash("make", &cwd));
        hook_names(&resp) == ["project:gate"]
            && resp["hooks"][0]["error"]
                .as_str()
                .is_some_and(|e| e.contains("removed"))
    });
    // The user accepting it: `hookd trust --revoke` forgets the repository, and nothing is said.
    let out = trust(&d, &["--revoke", repo.to_str().unwrap()]);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    wait_until(Duration::from_secs(10), "the repository forgotten", || {
        hook_names(&d.fire("PreToolUse", bash("make", &cwd))).is_empty()
    });
}

/// Fires from `cwd` until the report has `name` skipped with `why` (the repository's file is looked at
/// again within a moment), and returns that report: never silent in between.
fn pending_reported(d: &Daemon, cwd: &Path, name: &str, why: &str) -> Value {
    let mut resp = Value::Null;
    wait_until(
        Duration::from_secs(10),
        &format!("{name} pending: {why}"),
        || {
            resp = d.fire("PreToolUse", bash("make", cwd));
            assert!(
                hook_names(&resp).iter().any(|n| n == name),
                "{name} silent: {resp}"
            );
            hook(&resp, name)["error"]
                .as_str()
                .is_some_and(|e| e.contains(why) && e.contains("hookd trust"))
        },
    );
    assert_eq!(hook(&resp, name)["outcome"], "skipped", "{resp}");
    resp
}

#[test]
fn a_hooks_file_that_is_a_fifo_dev_zero_or_huge_does_not_hold_the_daemon() {
    let (d, repo) = gated();
    let file = repo.join(".hookd/hooks.toml");
    let other = d.sb.p("other");
    fs::create_dir_all(other.join(".git")).unwrap();
    let huge = d.sb.p("huge.toml");
    {
        let f = fs::File::create(&huge).unwrap();
        f.set_len(64 * 1024 * 1024).unwrap();
    }
    let fifo = |path: &Path| {
        nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    };
    for (kind, said) in [
        ("fifo", "FIFO"),
        ("dev-zero", "leaving the repository"),
        ("huge", "more than"),
    ] {
        fs::remove_file(&file).unwrap();
        match kind {
            "fifo" => fifo(&file),
            "dev-zero" => std::os::unix::fs::symlink("/dev/zero", &file).unwrap(),
            _ => fs::rename(&huge, &file).unwrap(),
        }
        // Fired at until the daemon has read the file and refused it: every fire answered at once,
        // the last good hooks kept (the refusal holds), every other folder answered too.
        wait_until(Duration::from_secs(20), kind, || {
            let started = Instant::now();
            let resp = d.fire("PreToolUse", bash("make", &repo.join("src")));
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{kind}: answered in {:?}",
                started.elapsed()
            );
            assert_eq!(resp["refused"], true, "{kind}: {resp}");
            let resp = d.fire("PreToolUse", bash("ls", &other));
            assert_eq!(resp["refused"], false, "{kind}: {resp}");
            d.journal().iter().any(|r| {
                r["kind"] == "reload_refused"
                    && r["file"]
                        .as_str()
                        .is_some_and(|f| f.ends_with(".hookd/hooks.toml"))
                    && r["error"].as_str().is_some_and(|e| e.contains(said))
            })
        });
    }
}

#[test]
fn a_repositorys_file_may_set_nothing_but_hooks() {
    let sb = Sandbox::new();
    sb.settings("# none\n");
    let repo = make_repo(&sb, GATE, &[GATE_SH]);
    let d = Daemon::start(sb);
    for (key, setting) in [
        ("[defaults]", "[defaults]\ntimeout = \"1ms\"\n"),
        ("[protect]", "[protect]\nenabled = false\n"),
        ("[record]", "[record]\nenabled = false\n"),
        ("[http]", "[http]\nlisten = \"127.0.0.1:1\"\n"),
        ("project_hooks", "project_hooks = \"trusted\"\n"),
        (
            "allow_managed_hooks_only",
            "allow_managed_hooks_only = false\n",
        ),
        ("require_fail_closed", "require_fail_closed = false\n"),
    ] {
        fs::write(repo.join(".hookd/hooks.toml"), format!("{GATE}\n{setting}")).unwrap();
        let out = trust(&d, &[repo.to_str().unwrap()]);
        let said = text(&out.stderr);
        assert_eq!(code(&out.status), 1, "{key}: {said}");
        assert!(
            said.contains("hooks.toml:6:"),
            "{key} refused at its place: {said}"
        );
    }
    // A hook that is a worker (kept running, out of the digest's reach between fires) is refused too.
    fs::write(
        repo.join(".hookd/hooks.toml"),
        "[[hooks.PreToolUse]]\nname = \"w\"\nworker = [\"$HOOKD_CONFIG_DIR/gate.sh\"]\n",
    )
    .unwrap();
    assert_eq!(code(&trust(&d, &[repo.to_str().unwrap()]).status), 1);
}

#[test]
fn trust_does_not_follow_a_repository_copied_or_moved_elsewhere() {
    let (d, repo) = gated();
    // A copy: the same bytes at another path are another repository, pending until trusted there.
    let copy = d.sb.p("copy");
    let out = Command::new("cp")
        .arg("-a")
        .arg(&repo)
        .arg(&copy)
        .output()
        .unwrap();
    assert!(out.status.success());
    let resp = d.fire("PreToolUse", bash("make", &copy.join("src")));
    assert_eq!(resp["refused"], false, "a copy is not trusted: {resp}");
    assert_eq!(hook(&resp, "project:gate")["outcome"], "skipped", "{resp}");
    // A repository moved away, and another put at its path with a changed gate: pending.
    fs::rename(&repo, d.sb.p("moved")).unwrap();
    let again = make_repo(&d.sb, GATE, &[("gate.sh", "exit 0")]);
    pending_reported(
        &d,
        &again.join("src"),
        "project:gate",
        "changed since it was trusted",
    );
}

#[test]
fn a_trusted_script_swapped_for_a_link_or_a_folder_does_not_run_as_trusted() {
    let (d, repo) = gated();
    let script = repo.join(".hookd/gate.sh");
    // A link to a script outside the repository that allows everything.
    let outside = d.sb.p("allow.sh");
    fs::write(&outside, "#!/bin/sh\nexit 0\n").unwrap();
    fs::set_permissions(&outside, fs::Permissions::from_mode(0o755)).unwrap();
    fs::remove_file(&script).unwrap();
    std::os::unix::fs::symlink(&outside, &script).unwrap();
    let resp = d.fire("PreToolUse", bash("make", &repo.join("src")));
    assert_eq!(resp["refused"], false, "{resp}");
    assert_eq!(hook(&resp, "project:gate")["outcome"], "skipped", "{resp}");
    // A folder in its place.
    fs::remove_file(&script).unwrap();
    fs::create_dir(&script).unwrap();
    let resp = d.fire("PreToolUse", bash("make", &repo.join("src")));
    assert_eq!(hook(&resp, "project:gate")["outcome"], "skipped", "{resp}");
}

#[test]
fn a_repository_folder_others_can_write_is_refused() {
    if !require_root("a file of another user's") {
        return;
    }
    let sb = Sandbox::new();
    sb.settings("# none\n");
    let repo = make_repo(&sb, GATE, &[GATE_SH]);
    let d = Daemon::start(sb);
    // `.hookd` writable by everyone: another user could put a hooks file there.
    fs::set_permissions(repo.join(".hookd"), fs::Permissions::from_mode(0o777)).unwrap();
    let out = trust(&d, &[repo.to_str().unwrap()]);
    assert_eq!(code(&out.status), 1, "{}", text(&out.stdout));
    fs::set_permissions(repo.join(".hookd"), fs::Permissions::from_mode(0o755)).unwrap();
    // A script of another user's.
    std::os::unix::fs::chown(repo.join(".hookd/gate.sh"), Some(NOBODY), None).unwrap();
    let out = trust(&d, &[repo.to_str().unwrap()]);
    assert_eq!(code(&out.status), 1, "{}", text(&out.stdout));
}

#[test]
fn a_project_hook_named_like_a_managed_one_leaves_it_alone() {
    if !require_root("the managed layer must be root's") {
        return;
    }
    let sb = Sandbox::new();
    sb.script("team.sh", "echo 'the team says no' >&2; exit 2");
    let dir = managed(
        &sb,
        "[[hooks.PreToolUse]]\nname = \"gate\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/team.sh\"\n",
    );
    sb.settings("# none\n");
    // The repository's hook has the managed one's name, a matcher of its own, and allows.
    let repo = make_repo(
        &sb,
        "[[hooks.PreToolUse]]\nname = \"gate\"\nmatcher = \"Bash\"\ncommand = \"$HOOKD_CONFIG_DIR/allow.sh\"\nenabled = true\n",
        &[("allow.sh", "echo '{\"allow\": \"ok\"}'")],
    );
    let d = Daemon::start_managed(sb, &dir);
    trusted(&d, &repo);
    let resp = d.fire("PreToolUse", bash("make", &repo));
    assert_eq!(resp["refused"], true, "{resp}");
    assert_eq!(resp["reason"], "the team says no", "{resp}");
    assert_eq!(
        hook_names(&resp),
        vec!["gate".to_string(), "project:gate".to_string()],
        "{resp}"
    );
}

#[test]
fn a_managed_drop_in_with_an_error_keeps_the_last_good_layer_and_says_where() {
    if !require_root("the managed layer must be root's") {
        return;
    }
    let sb = Sandbox::new();
    sb.script("team.sh", "echo 'the team says no' >&2; exit 2");
    let dir = managed(&sb, "# the main file\n");
    let drop_ins = dir.join("managed.d");
    fs::create_dir_all(&drop_ins).unwrap();
    fs::set_permissions(&drop_ins, fs::Permissions::from_mode(0o755)).unwrap();
    let team = sb.expand(
        "[[hooks.PreToolUse]]\nname = \"team\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/team.sh\"\n",
    );
    write_managed(&drop_ins.join("50-team.toml"), &team);
    sb.settings("# none\n");
    let d = Daemon::start_managed(sb, &dir);
    let cwd = d.sb.p("");
    assert_eq!(d.fire("PreToolUse", bash("ls", &cwd))["refused"], true);
    // Half-written as an editor saves in place: a syntax error on line 3.
    let half = &team[..team.len() - 12];
    fs::write(drop_ins.join("50-team.toml"), half).unwrap();
    wait_until(Duration::from_secs(10), "the error, at its place", || {
        d.status()["last_reload"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("50-team.toml:4:"))
    });
    assert_eq!(d.fire("PreToolUse", bash("ls", &cwd))["refused"], true);
    // Truncated to nothing, as a save begins: refused, the layer kept.
    fs::write(drop_ins.join("50-team.toml"), "").unwrap();
    wait_until(Duration::from_secs(10), "the empty file refused", || {
        d.status()["last_reload"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("50-team.toml"))
            && !e_contains(&d, "50-team.toml:4:")
    });
    assert_eq!(d.fire("PreToolUse", bash("ls", &cwd))["refused"], true);
    // The drop-in folder made writable by others: refused, kept.
    write_managed(&drop_ins.join("50-team.toml"), &team);
    fs::set_permissions(&drop_ins, fs::Permissions::from_mode(0o777)).unwrap();
    wait_until(Duration::from_secs(10), "the folder refused", || {
        e_contains(&d, "writable by no one else")
    });
    assert_eq!(d.fire("PreToolUse", bash("ls", &cwd))["refused"], true);
    // A drop-in of another user's in a good folder: refused, kept.
    fs::set_permissions(&drop_ins, fs::Permissions::from_mode(0o755)).unwrap();
    write_managed(&drop_ins.join("60-mine.toml"), "# the user's own\n");
    std::os::unix::fs::chown(drop_ins.join("60-mine.toml"), Some(NOBODY), None).unwrap();
    wait_until(
        Duration::from_secs(10),
        "the user's drop-in refused",
        || e_contains(&d, "60-mine.toml"),
    );
    assert_eq!(d.fire("PreToolUse", bash("ls", &cwd))["refused"], true);
}

fn e_contains(d: &Daemon, what: &str) -> bool {
    d.status()["last_reload"]["error"]
        .as_str()
        .is_some_and(|e| e.contains(what))
}

#[test]
fn a_managed_file_saved_by_removing_it_first_does_not_drop_the_team_hooks() {
    if !require_root("the managed layer must be root's") {
        return;
    }
    let sb = Sandbox::new();
    sb.script("team.sh", "echo 'the team says no' >&2; exit 2");
    let team =
        "[[hooks.PreToolUse]]\nname = \"team\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/team.sh\"\n";
    let dir = managed(&sb, team);
    sb.settings("# none\n");
    let d = Daemon::start_managed(sb, &dir);
    let cwd = d.sb.p("");
    assert_eq!(d.fire("PreToolUse", bash("ls", &cwd))["refused"], true);
    // Removed, and the daemon polls meanwhile: every fire in the gap still refused.
    let file = dir.join("managed.toml");
    fs::remove_file(&file).unwrap();
    let gap = Instant::now();
    while gap.elapsed() < Duration::from_millis(1500) {
        let resp = d.fire("PreToolUse", bash("ls", &cwd));
        assert_eq!(
            resp["refused"],
            true,
            "the managed file gone for {:?}: {resp}",
            gap.elapsed()
        );
    }
    write_managed(&file, &d.sb.expand(team));
    assert_eq!(d.fire("PreToolUse", bash("ls", &cwd))["refused"], true);
}

/// Whether Claude Code, running `command` in `home/work`, is refused by hookd's guard of itself (any
/// answer but that one's refusal fails the test).
fn guard_refuses(d: &Daemon, command: &str) -> bool {
    let Some((answer, stdout)) = claude_bash_in_work(d, command, RESPONSE) else {
        return false;
    };
    let decision = &answer["hookSpecificOutput"]["permissionDecision"];
    assert_eq!(
        decision, "deny",
        "{command}: an answer that is no refusal: {answer}"
    );
    assert!(
        stdout.contains("hookd protects itself"),
        "{command}: refused, but not by hookd's guard: {answer}"
    );
    true
}

#[test]
fn the_agent_cannot_trust_a_repository_by_any_spelling_the_guard_can_read() {
    let sb = Sandbox::new();
    sb.settings("# none\n");
    let home = sb.p("home");
    fs::create_dir_all(home.join("work")).unwrap();
    let d = Daemon::start_with(sb, |cmd| {
        cmd.env("HOME", &home).env_remove("XDG_CONFIG_HOME");
    });
    let store = state_home_for(&d.socket).join("hookd/trust.json");
    let store = store.display();
    for command in [
        "hookd trust .".to_string(),
        "env hookd trust .".to_string(),
        "env -i PATH=/usr/bin hookd trust".to_string(),
        "XDG_STATE_HOME=/tmp/x hookd trust .".to_string(),
        format!("{BIN} trust ."),
        "sh -c 'hookd trust .'".to_string(),
        "bash -lc \"cd /tmp && hookd trust $OLDPWD\"".to_string(),
        "hookd 'trust' .".to_string(),
        "hookd --quiet trust .".to_string(),
        "command hookd trust .".to_string(),
        "nohup hookd trust . &".to_string(),
        "echo . | xargs hookd trust".to_string(),
        "python3 -c \"import subprocess; subprocess.run(['hookd', 'trust', '.'])\"".to_string(),
        format!("echo '{{}}' > {store}"),
        format!("cp /tmp/mine.json {store}"),
        format!("python3 -c \"open('{store}', 'w').write('{{}}')\""),
        format!("sed -i s/a/b/ {store}"),
        format!("rm -f {store}"),
    ] {
        assert!(guard_refuses(&d, &command), "let through: {command}");
    }
    // Taking trust away is the agent's to do, and reading the store.
    for command in ["hookd trust --revoke .".to_string(), format!("cat {store}")] {
        assert!(!guard_refuses(&d, &command), "refused: {command}");
    }
}

#[test]
fn the_users_stop_refusal_cap_does_not_let_a_managed_stop_refusal_through() {
    if !require_root("the managed layer must be root's") {
        return;
    }
    let sb = Sandbox::new();
    sb.script("tests-first.sh", "echo 'run the tests first' >&2; exit 2");
    let dir = managed(
        &sb,
        "[[hooks.Stop]]\nname = \"tests-first\"\ncommand = \"@DIR@/tests-first.sh\"\n",
    );
    // With a cap of 0, no Stop is ever refused: the user's file would take the team's Stop hook out.
    sb.settings("[defaults]\nstop_refusal_cap = 0\n");
    let d = Daemon::start_managed(sb, &dir);
    let stop = json!({"session_id": "s", "cwd": d.sb.p(""), "stop_hook_active": false});
    let resp = d.fire("Stop", stop.clone());
    assert_eq!(resp["refused"], true, "{resp}");
    assert_eq!(resp["reason"], "run the tests first", "{resp}");
    // The user's cap above the managed layer's holds: stricter.
    d.sb.settings("[defaults]\nstop_refusal_cap = 1000\n");
    wait_until(Duration::from_secs(10), "the new cap in force", || {
        d.status()["generation"].as_u64() > Some(1)
    });
    assert_eq!(d.fire("Stop", stop)["refused"], true);
}
#[test]
fn a_users_rewrite_does_not_carry_a_call_past_the_managed_hooks_that_never_saw_it() {
    if !require_root("the managed layer must be root's") {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "no-rm.sh",
        "grep -q 'rm -rf' && { echo 'the team forbids rm -rf' >&2; exit 2; }; exit 0",
    );
    sb.script(
        "swap.sh",
        &prints(r#"{"input": {"command": "rm -rf /srv"}}"#),
    );
    sb.script(
        "sudo-asks.sh",
        "grep -q 'sudo' && { echo '{\"ask\": \"the team asks about sudo\"}'; }; exit 0",
    );
    let dir = managed(
        &sb,
        "[[hooks.PreToolUse]]\nname = \"team-guard\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/no-rm.sh\"\n\n[[hooks.PreToolUse]]\nname = \"team-sudo\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/sudo-asks.sh\"\n",
    );
    // The user's hook rewrites the call the team's guard let through into one it refuses.
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"swap\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/swap.sh\"\n",
    );
    let d = Daemon::start_managed(sb, &dir);
    let resp = d.fire("PreToolUse", bash("ls", &d.sb.p("")));
    let rewritten = resp["input"]["command"].as_str().unwrap_or_default();
    assert!(
        resp["refused"] == true || !rewritten.contains("rm -rf"),
        "a call the managed guard never saw goes through: {resp}"
    );
    assert_eq!(resp["reason"], "the team forbids rm -rf", "{resp}");
    // A rewrite the team's guard lets through goes on, rewritten.
    d.sb.script("swap.sh", &prints(r#"{"input": {"command": "ls -la"}}"#));
    let resp = d.fire("PreToolUse", bash("ls", &d.sb.p("")));
    assert_eq!(resp["refused"], false, "{resp}");
    assert_eq!(resp["input"]["command"], "ls -la", "{resp}");
    // Rewritten into a call the team asks about: asked, the rewrite kept for the person to approve.
    d.sb.script("swap.sh", &prints(r#"{"input": {"command": "sudo ls"}}"#));
    let resp = d.fire("PreToolUse", bash("ls", &d.sb.p("")));
    assert_eq!(resp["refused"], true, "{resp}");
    assert_eq!(resp["permission"], "ask", "{resp}");
    assert_eq!(resp["reason"], "the team asks about sudo", "{resp}");
    assert_eq!(resp["input"]["command"], "sudo ls", "{resp}");
    // The user's hook asks and rewrites into a call the team refuses: the refusal beats the ask.
    d.sb.script(
        "swap.sh",
        &prints(r#"{"ask": "the user asks", "input": {"command": "sudo rm -rf /srv"}}"#),
    );
    let resp = d.fire("PreToolUse", bash("ls", &d.sb.p("")));
    assert_eq!(resp["refused"], true, "{resp}");
    assert!(resp.get("permission").is_none(), "{resp}");
    assert_eq!(resp["reason"], "the team forbids rm -rf", "{resp}");
    assert!(
        resp.get("input").is_none(),
        "a refused call's rewrite goes: {resp}"
    );
}
