//! A repository's trusted hooks run the very bytes that were digested, on the real daemon: a script
//! rewritten after hookd read it (an agent racing the hook's start) changes nothing of what runs, in
//! each way a hook names its script; and a repository whose hooks cannot be read is said in the fire,
//! never passed over.

use std::fs;

use crate::common::*;
use crate::layers_project::{bash, make_repo, trust};

/// Three ways of naming a script: by `$HOOKD_CONFIG_DIR`, as an argument of an interpreter, as `argv`.
const THREE: &str = "[[hooks.PreToolUse]]\nname = \"by-dir\"\ncommand = \"$HOOKD_CONFIG_DIR/a.sh\"\n\n\
[[hooks.PreToolUse]]\nname = \"by-bash\"\ncommand = \"bash b.sh\"\n\n\
[[hooks.PreToolUse]]\nname = \"by-argv\"\nargv = [\"./c.sh\"]\n";

#[test]
fn a_script_rewritten_between_its_digest_and_its_start_does_not_run() {
    let sb = Sandbox::new();
    fs::create_dir_all(sb.p("out")).unwrap();
    let out = sb.p("out");
    let said = |name: &str| format!("echo \"trusted in $(pwd)\" > {}/{name}", out.display());
    let repo = make_repo(
        &sb,
        THREE,
        &[
            ("a.sh", &said("a")),
            ("b.sh", &said("b")),
            ("c.sh", &said("c")),
        ],
    );
    // The user's own hook runs first (the moment is sequential) and rewrites the repository's scripts
    // once hookd has read and digested them, as an agent racing the hooks' start would.
    let tamper = sb.script(
        "tamper.sh",
        &format!(
            "for s in a b c; do printf '#!/bin/sh\\necho tampered > {}/%s\\n' $s > {}/.hookd/$s.sh; done",
            out.display(),
            repo.display()
        ),
    );
    sb.settings(&format!(
        "sequential = [\"PreToolUse\"]\n\n[[hooks.PreToolUse]]\nname = \"tamper\"\ncommand = \"{}\"\n",
        tamper.display()
    ));
    let d = Daemon::start(sb);
    assert_eq!(code(&trust(&d, &[repo.to_str().unwrap()]).status), 0);
    let resp = d.fire("PreToolUse", bash("make", &repo.join("src")));
    for (name, hook_name) in [("a", "by-dir"), ("b", "by-bash"), ("c", "by-argv")] {
        let report = hook(&resp, &format!("project:{hook_name}"));
        assert!(report["error"].is_null(), "{resp}");
        let written = fs::read_to_string(out.join(name)).unwrap_or_default();
        assert_eq!(
            written.trim(),
            format!("trusted in {}", repo.join("src").display()),
            "{name}.sh ran what was digested, in the event's cwd: {resp}"
        );
    }
    // The scripts as they are now (rewritten) were never trusted: pending from the next fire on.
    let resp = d.fire("PreToolUse", bash("make", &repo.join("src")));
    for name in ["project:by-dir", "project:by-bash", "project:by-argv"] {
        assert!(
            hook(&resp, name)["error"]
                .as_str()
                .is_some_and(|e| e.contains("changed since it was trusted")),
            "{resp}"
        );
    }
}

#[test]
fn a_script_named_where_hookd_cannot_point_it_at_its_copy_is_held_and_said() {
    let sb = Sandbox::new();
    sb.settings("# none\n");
    let repo = make_repo(
        &sb,
        "[[hooks.PreToolUse]]\nname = \"wrapped\"\ncommand = \"sh -c 'sh gate.sh'\"\n",
        &[("gate.sh", "echo 'the repo says no' >&2; exit 2")],
    );
    let d = Daemon::start(sb);
    assert_eq!(code(&trust(&d, &[repo.to_str().unwrap()]).status), 0);
    let resp = d.fire("PreToolUse", bash("make", &repo));
    let report = hook(&resp, "project:wrapped");
    assert_eq!(report["outcome"], "skipped", "{resp}");
    assert!(
        report["error"]
            .as_str()
            .is_some_and(|e| e.contains("gate.sh") && e.contains("plain word")),
        "{resp}"
    );
}

#[test]
fn a_repository_whose_hooks_cannot_be_read_is_said_in_every_fire_from_it() {
    let sb = Sandbox::new();
    sb.settings("# none\n");
    let repo = make_repo(&sb, "[[hooks.PreToolUse]\nname = \"broken\n", &[]);
    let d = Daemon::start(sb);
    let resp = d.fire("PreToolUse", bash("make", &repo.join("src")));
    assert_eq!(resp["refused"], false, "{resp}");
    let report = hook(&resp, "project:hooks.toml");
    assert_eq!(report["outcome"], "skipped", "{resp}");
    assert!(
        report["error"]
            .as_str()
            .is_some_and(|e| e.contains("could not be read") && e.contains("hooks.toml:")),
        "{resp}"
    );
    journaled(&d, "the unread hooks in the fire's journal line", |r| {
        r["kind"] == "fire"
            && r["hooks"][0]["name"] == "project:hooks.toml"
            && r["hooks"][0]["layer"] == "project"
    });
    // Mended: its hooks are known (and pending) from then on.
    fs::write(
        repo.join(".hookd/hooks.toml"),
        "[[hooks.PreToolUse]]\nname = \"mended\"\ncommand = \"true\"\n",
    )
    .unwrap();
    wait_until(RESPONSE, "the mended hooks file read", || {
        let resp = d.fire("PreToolUse", bash("make", &repo.join("src")));
        hook_names(&resp).contains(&"project:mended".to_string())
    });
}

/// Every `project:` hook named in `check --json`'s `projects`, in their order.
fn checked_names(object: &serde_json::Value) -> Vec<String> {
    object["projects"]
        .as_array()
        .unwrap_or_else(|| panic!("check --json lists the projects: {object}"))
        .iter()
        .flat_map(|project| project["hooks"].as_array().cloned().unwrap_or_default())
        .map(|hook| hook["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn check_in_a_nested_repository_shows_every_repositorys_hooks_the_daemon_runs() {
    let sb = Sandbox::new();
    sb.settings("# no hooks of the user's\n");
    let outer = make_repo(
        &sb,
        "[[hooks.PreToolUse]]\nname = \"outer\"\ncommand = \"$HOOKD_CONFIG_DIR/outer.sh\"\n",
        &[("outer.sh", "exit 0")],
    );
    // A repository inside it (a submodule, a vendored one) with hooks of its own.
    let inner = outer.join("vendor/lib");
    fs::create_dir_all(inner.join(".git")).unwrap();
    fs::create_dir_all(inner.join(".hookd")).unwrap();
    fs::create_dir_all(inner.join("src")).unwrap();
    fs::write(
        inner.join(".hookd/hooks.toml"),
        "[[hooks.PreToolUse]]\nname = \"inner\"\ncommand = \"true\"\n",
    )
    .unwrap();
    let d = Daemon::start(sb);
    let cwd = inner.join("src");
    // What the daemon runs (here: reports, pending) for a fire from inside the inner one.
    let fired = d.fire("PreToolUse", bash("make", &cwd));
    let ran: Vec<String> = hook_names(&fired)
        .into_iter()
        .filter(|name| name.starts_with("project:"))
        .collect();
    assert_eq!(ran, ["project:outer", "project:inner"], "{fired}");
    // `check` from there shows the same hooks, in the same order, each repository's file named.
    let shown = text(&check_in(&d, &cwd, false).stdout);
    let at = |file: &std::path::Path| {
        shown
            .find(&format!(
                "project layer: {}",
                file.join(".hookd/hooks.toml").display()
            ))
            .unwrap_or_else(|| panic!("{} not shown in\n{shown}", file.display()))
    };
    assert!(at(&outer) < at(&inner), "the outermost first:\n{shown}");
    let out = check_in(&d, &cwd, true);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    let object: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(checked_names(&object), ran, "{object}");
    assert_eq!(
        object["project"]["root"],
        fs::canonicalize(&inner).unwrap().to_str().unwrap(),
        "`project` is the nearest: {object}"
    );
    // Trusting the outer one shows it trusted, the inner one still pending.
    assert_eq!(code(&trust(&d, &[outer.to_str().unwrap()]).status), 0);
    let object: serde_json::Value =
        serde_json::from_slice(&check_in(&d, &cwd, true).stdout).unwrap();
    let trusted: Vec<&serde_json::Value> = object["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|project| &project["hooks"][0]["trusted"])
        .collect();
    assert_eq!(
        trusted,
        [&serde_json::json!(true), &serde_json::json!(false)],
        "{object}"
    );
}

/// `hookd check` run in `dir`, with the daemon's state folder (where the trust store is).
fn check_in(d: &Daemon, dir: &std::path::Path, json: bool) -> std::process::Output {
    let mut cmd = std::process::Command::new(BIN);
    cmd.args(["check", "--config", d.config.to_str().unwrap()])
        .current_dir(dir)
        .env("XDG_STATE_HOME", state_home_for(&d.socket));
    if json {
        cmd.arg("--json");
    }
    run_with_deadline(cmd, None, RESPONSE)
}

#[test]
fn check_and_status_show_the_project_layer_its_hooks_trusted_or_pending() {
    let sb = Sandbox::new();
    sb.settings("[[hooks.Stop]]\nname = \"mine\"\ncommand = \"true\"\n");
    let repo = make_repo(
        &sb,
        "[[hooks.PreToolUse]]\nname = \"gate\"\ncommand = \"$HOOKD_CONFIG_DIR/gate.sh\"\n\n[[hooks.Stop]]\nname = \"tests\"\ncommand = \"true\"\n",
        &[("gate.sh", "exit 0")],
    );
    let d = Daemon::start(sb);
    let shown = text(&check_in(&d, &repo.join("src"), false).stdout);
    for part in [
        &format!(
            "project layer: {}",
            repo.join(".hookd/hooks.toml").display()
        ),
        "  project:gate  [project]  command \"$HOOKD_CONFIG_DIR/gate.sh\"  timeout 60s  pending: not trusted yet",
        "  project:tests  [project]  command \"true\"  timeout 60s  pending: not trusted yet",
    ] {
        assert!(shown.contains(part), "{part:?} not in\n{shown}");
    }
    let out = check_in(&d, &repo, true);
    let object: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(object["project"]["hooks"][0]["trusted"], false, "{object}");
    // Elsewhere: no project layer.
    let elsewhere = text(&check_in(&d, d.sb.path(), false).stdout);
    assert!(!elsewhere.contains("project layer"), "{elsewhere}");

    // The daemon saw a fire from it: `status` for people lists the repository and what is pending.
    d.fire("Stop", serde_json::json!({"session_id": "s", "cwd": repo}));
    let mut cmd = std::process::Command::new(BIN);
    cmd.args(["status", "--socket", d.socket.to_str().unwrap()])
        .env("NO_COLOR", "1");
    let status = text(&run_on_terminal(cmd, None, RESPONSE).stdout);
    assert!(status.contains("layers: user 1"), "{status}");
    assert!(
        status.contains(&format!(
            "project: {}: 2 hooks, 2 pending (not run until `hookd trust {}`): PreToolUse/gate, Stop/tests",
            repo.display(),
            repo.display()
        )),
        "{status}"
    );

    // Trusted: `check` says so, one changed byte makes it pending again.
    assert_eq!(code(&trust(&d, &[repo.to_str().unwrap()]).status), 0);
    let shown = text(&check_in(&d, &repo, false).stdout);
    assert!(shown.contains("timeout 60s  trusted\n"), "{shown}");
    fs::write(repo.join(".hookd/gate.sh"), "#!/bin/sh\nexit 1\n").unwrap();
    let shown = text(&check_in(&d, &repo, false).stdout);
    assert!(
        shown.contains("project:gate  [project]  command \"$HOOKD_CONFIG_DIR/gate.sh\"  timeout 60s  pending: changed since it was trusted"),
        "{shown}"
    );
    // A refused hooks file: every error, and a failing status.
    fs::write(repo.join(".hookd/hooks.toml"), "[[hooks.Stop]\n").unwrap();
    let out = check_in(&d, &repo, false);
    assert_eq!(code(&out.status), 1, "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("hooks.toml:1:"),
        "{}",
        text(&out.stderr)
    );
}
