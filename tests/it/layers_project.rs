//! A repository's own hooks on the real daemon: pending until trusted, pinned to their content, only
//! for events whose `cwd` is inside, only tightening; and what a hostile repository (or agent) tries:
//! a hooks file that links out of the repository, a script outside it, the trust store edited.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::common::*;

/// A repository in the sandbox (`repo/`, with `.git`), its `.hookd/hooks.toml` and scripts written.
pub(crate) fn make_repo(sb: &Sandbox, toml: &str, scripts: &[(&str, &str)]) -> PathBuf {
    let repo = sb.p("repo");
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::create_dir_all(repo.join(".hookd")).unwrap();
    fs::create_dir_all(repo.join("src")).unwrap();
    for (name, body) in scripts {
        let path = repo.join(".hookd").join(name);
        fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }
    fs::write(repo.join(".hookd/hooks.toml"), toml).unwrap();
    repo
}

/// `hookd trust ARGS` as the user runs it, with the daemon's state folder.
pub(crate) fn trust(d: &Daemon, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(BIN);
    cmd.arg("trust")
        .args(args)
        .env("XDG_STATE_HOME", state_home_for(&d.socket));
    run_with_deadline(cmd, None, RESPONSE)
}

pub(crate) fn bash(command: &str, cwd: &Path) -> Value {
    json!({"session_id": "s", "cwd": cwd, "tool_name": "Bash", "tool_input": {"command": command}})
}

/// A hook of PostToolUse that says nothing.
const NOTE: &str = "[[hooks.PostToolUse]]\nname = \"note\"\ncommand = \"true\"\n";

/// A daemon whose user settings hold no hook, and a repository whose one hook, [`GATE`], refuses
/// ("the repo says no"), trusted by `hookd trust`: the daemon and the repository.
pub(crate) fn trusted_gate() -> (Daemon, PathBuf) {
    let (d, repo) = untrusted_gate();
    let out = trust(&d, &[repo.to_str().unwrap()]);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    (d, repo)
}

/// As [`trusted_gate`], the repository not trusted yet.
fn untrusted_gate() -> (Daemon, PathBuf) {
    let sb = Sandbox::new();
    sb.settings("# no hooks of the user's\n");
    let repo = make_repo(
        &sb,
        GATE,
        &[("gate.sh", "echo 'the repo says no' >&2; exit 2")],
    );
    (Daemon::start(sb), repo)
}

/// `text` written over `path` as an editor saves: a new file beside it, renamed over it.
pub(crate) fn save_as_editors_do(path: &Path, text: impl AsRef<[u8]>) {
    let temp = path.with_extension("swp");
    fs::write(&temp, text).unwrap();
    fs::rename(&temp, path).unwrap();
}

/// The trust store of `d`'s daemon.
pub(crate) fn trust_store(d: &Daemon) -> PathBuf {
    state_home_for(&d.socket).join("hookd/trust.json")
}

pub(crate) const GATE: &str = "[[hooks.PreToolUse]]\nname = \"gate\"\nmatcher = \"Bash\"\ncommand = \"$HOOKD_CONFIG_DIR/gate.sh\"\n";

#[test]
fn an_untrusted_project_hook_does_not_run_runs_after_trust_and_is_pending_after_one_byte() {
    let (d, repo) = untrusted_gate();
    let cwd = repo.join("src");
    let resp = d.fire("PreToolUse", bash("make", &cwd));
    assert_eq!(resp["refused"], false, "not trusted yet: {resp}");
    let pending = hook(&resp, "project:gate");
    assert_eq!(pending["outcome"], "skipped", "{resp}");
    assert!(
        pending["error"].as_str().unwrap().contains("hookd trust"),
        "{resp}"
    );
    journaled(&d, "the pending hook in the journal", |r| {
        r["kind"] == "fire"
            && r["hooks"][0]["name"] == "project:gate"
            && r["hooks"][0]["layer"] == "project"
            && r["hooks"][0]["error"]
                .as_str()
                .is_some_and(|e| e.contains("pending"))
    });
    // A session starting there is told, as context.
    let start = d.fire(
        "SessionStart",
        json!({"session_id": "s", "cwd": cwd, "source": "startup"}),
    );
    assert!(
        adds(&start)
            .iter()
            .any(|a| a.contains("waiting") && a.contains("hookd trust")),
        "{start}"
    );
    let out = trust(&d, &[repo.to_str().unwrap()]);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("gate.sh"),
        "shows what it runs: {}",
        text(&out.stdout)
    );
    let resp = d.fire("PreToolUse", bash("make", &cwd));
    assert_eq!(resp["refused"], true, "trusted: {resp}");
    assert_eq!(resp["reason"], "the repo says no");
    // One byte of its script changed: pending again.
    let script = repo.join(".hookd/gate.sh");
    let mut bytes = fs::read(&script).unwrap();
    bytes.push(b'\n');
    fs::write(&script, bytes).unwrap();
    let resp = d.fire("PreToolUse", bash("make", &cwd));
    assert_eq!(resp["refused"], false, "changed since trusted: {resp}");
    assert!(
        hook(&resp, "project:gate")["error"]
            .as_str()
            .unwrap()
            .contains("changed since it was trusted"),
        "{resp}"
    );
    // Trusted again, then revoked.
    assert_eq!(code(&trust(&d, &[repo.to_str().unwrap()]).status), 0);
    assert_eq!(d.fire("PreToolUse", bash("make", &cwd))["refused"], true);
    assert_eq!(
        code(&trust(&d, &["--revoke", repo.to_str().unwrap()]).status),
        0
    );
    assert_eq!(d.fire("PreToolUse", bash("make", &cwd))["refused"], false);
    // `status` lists the pending hook.
    let status = d.status();
    assert!(status.to_string().contains("PreToolUse/gate"), "{status}");
}

#[test]
fn a_project_allow_is_ignored_while_its_refusal_holds() {
    let sb = Sandbox::new();
    sb.settings("# none\n");
    let toml = "[[hooks.PreToolUse]]\nname = \"allow-all\"\ncommand = \"$HOOKD_CONFIG_DIR/allow.sh\"\n\n[[hooks.PreToolUse]]\nname = \"no-rm\"\ncommand = \"$HOOKD_CONFIG_DIR/no-rm.sh\"\n";
    let repo = make_repo(
        &sb,
        toml,
        &[
            ("allow.sh", "echo '{\"allow\": \"fine by the repo\"}'"),
            (
                "no-rm.sh",
                "grep -q 'rm -rf' && { echo 'no rm here' >&2; exit 2; }; exit 0",
            ),
        ],
    );
    let d = Daemon::start(sb);
    assert_eq!(code(&trust(&d, &[repo.to_str().unwrap()]).status), 0);
    let resp = d.fire("PreToolUse", bash("ls", &repo));
    assert_eq!(resp["refused"], false, "{resp}");
    assert!(
        resp.get("permission").is_none(),
        "a repository cannot allow: {resp}"
    );
    let allow = hook(&resp, "project:allow-all");
    assert_eq!(allow["outcome"], "nothing", "{resp}");
    assert!(
        allow["error"]
            .as_str()
            .unwrap()
            .contains("allow is ignored"),
        "{resp}"
    );
    let resp = d.fire("PreToolUse", bash("rm -rf build", &repo));
    assert_eq!(resp["refused"], true, "{resp}");
    assert_eq!(resp["reason"], "no rm here");
}

#[test]
fn an_event_whose_cwd_is_outside_the_project_does_not_see_its_hooks() {
    let sb = Sandbox::new();
    sb.settings("# none\n");
    let repo = make_repo(&sb, GATE, &[("gate.sh", "echo 'no' >&2; exit 2")]);
    let outside = sb.p("elsewhere");
    fs::create_dir_all(outside.join(".git")).unwrap();
    let d = Daemon::start(sb);
    assert_eq!(code(&trust(&d, &[repo.to_str().unwrap()]).status), 0);
    assert_eq!(d.fire("PreToolUse", bash("ls", &repo))["refused"], true);
    let resp = d.fire("PreToolUse", bash("ls", &outside));
    assert_eq!(resp["refused"], false, "{resp}");
    assert_eq!(hook_names(&resp), Vec::<String>::new(), "{resp}");
    let resp = d.fire("PreToolUse", bash("ls", d.sb.p("").as_path()));
    assert_eq!(hook_names(&resp), Vec::<String>::new(), "{resp}");
}

#[test]
fn a_hooks_file_linking_out_of_the_repository_or_a_script_outside_it_is_refused_where_named() {
    let sb = Sandbox::new();
    sb.settings("# none\n");
    sb.script("outside.sh", "echo 'from outside' >&2; exit 2");
    let repo = make_repo(&sb, GATE, &[("gate.sh", "exit 0")]);
    let d = Daemon::start(sb);
    // A script outside the repository.
    let toml = format!(
        "[[hooks.PreToolUse]]\nname = \"out\"\ncommand = \"{}\"\n",
        d.sb.p("outside.sh").display()
    );
    fs::write(repo.join(".hookd/hooks.toml"), &toml).unwrap();
    let out = trust(&d, &[repo.to_str().unwrap()]);
    assert_eq!(code(&out.status), 1);
    let said = text(&out.stderr);
    assert!(
        said.contains("hooks.toml:3:11") && said.contains("outside the repository"),
        "{said}"
    );
    assert_eq!(
        said.matches("hooks.toml:3:11").count(),
        1,
        "said once, the program named once: {said}"
    );
    // The hooks file a link out of the repository.
    let elsewhere = d.sb.p("elsewhere.toml");
    fs::write(&elsewhere, GATE).unwrap();
    fs::remove_file(repo.join(".hookd/hooks.toml")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, repo.join(".hookd/hooks.toml")).unwrap();
    let out = trust(&d, &[repo.to_str().unwrap()]);
    assert_eq!(code(&out.status), 1);
    assert!(
        text(&out.stderr).contains("symbolic link leaving the repository"),
        "{}",
        text(&out.stderr)
    );
    // Nothing of it runs, and the fire says so.
    let resp = d.fire("PreToolUse", bash("ls", &repo));
    assert_eq!(hook_names(&resp), vec!["project:hooks.toml"], "{resp}");
    assert!(
        hook(&resp, "project:hooks.toml")["error"]
            .as_str()
            .is_some_and(|e| e.contains("symbolic link leaving")),
        "{resp}"
    );
    journaled(&d, "the refusal in the journal", |r| {
        r["kind"] == "reload_refused"
            && r["error"]
                .as_str()
                .is_some_and(|e| e.contains("symbolic link leaving"))
    });
}

#[test]
fn the_trust_store_edited_by_hand_does_not_trust_a_changed_hook() {
    let sb = Sandbox::new();
    sb.settings("# none\n");
    let repo = make_repo(&sb, GATE, &[("gate.sh", "echo 'no' >&2; exit 2")]);
    let d = Daemon::start(sb);
    // A store naming the hook with any digest but its own trusts nothing.
    let store = trust_store(&d);
    fs::create_dir_all(store.parent().unwrap()).unwrap();
    let root = fs::canonicalize(&repo).unwrap();
    fs::write(
        &store,
        json!({"projects": {root.to_str().unwrap(): {"PreToolUse/gate": "0".repeat(64)}}})
            .to_string(),
    )
    .unwrap();
    let resp = d.fire("PreToolUse", bash("ls", &repo));
    assert_eq!(hook(&resp, "project:gate")["outcome"], "skipped", "{resp}");
    // The managed layer can switch repositories' hooks off altogether.
    if !require_root("the managed layer must be root's") {
        return;
    }
    drop(d);
    let sb = Sandbox::new();
    sb.settings("# none\n");
    let repo_off = make_repo(&sb, GATE, &[("gate.sh", "echo 'no' >&2; exit 2")]);
    let dir = crate::layers_managed::managed(&sb, "project_hooks = \"off\"\n");
    let d = Daemon::start_managed(sb, &dir);
    assert_eq!(code(&trust(&d, &[repo_off.to_str().unwrap()]).status), 0);
    let resp = d.fire("PreToolUse", bash("ls", &repo_off));
    assert_eq!(hook_names(&resp), Vec::<String>::new(), "{resp}");
}

/// A trust store that cannot be read (a bad edit, a torn write) is not taken as empty by `hookd trust`:
/// written back, it would take away every other repository's trust. It is refused, left as it was.
#[test]
fn hookd_trust_does_not_write_over_a_store_it_cannot_read() {
    let sb = Sandbox::new();
    sb.settings("# none\n");
    let repo = make_repo(&sb, GATE, &[("gate.sh", "echo 'no' >&2; exit 2")]);
    let d = Daemon::start(sb);
    let store = trust_store(&d);
    fs::create_dir_all(store.parent().unwrap()).unwrap();
    let torn = "{\"projects\": {\"/elsewhere\": {\"PreToolUse/gate\": \"00";
    fs::write(&store, torn).unwrap();
    for args in [
        vec![repo.to_str().unwrap()],
        vec!["--revoke", repo.to_str().unwrap()],
    ] {
        let out = trust(&d, &args);
        assert_ne!(code(&out.status), 0, "{args:?}: {}", text(&out.stdout));
        assert!(
            text(&out.stderr).contains("not written over"),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(fs::read_to_string(&store).unwrap(), torn);
    }
}

/// Whether `resp` reports the repository's hook `gate` as changed since it was trusted (not run).
fn gate_changed_since_trusted(resp: &Value) -> bool {
    resp["hooks"].as_array().is_some_and(|hooks| {
        hooks.iter().any(|h| {
            h["name"] == "project:gate"
                && h["outcome"] == "skipped"
                && h["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("changed since it was trusted"))
        })
    })
}

/// What a fire from the folder the last one came from needs of its repository is worked out once and
/// remembered; a change of the trust store between two fires from that same folder (`hookd trust`, the
/// store put back as it was, `--revoke`) is in force all the same: a trusted hook switched off is said
/// at every fire of its moment while its trust stands, and not once it is trusted switched off or
/// revoked. Fires come from one folder throughout, at the moment whose only hook is switched off (the
/// fires that memory alone answers).
#[test]
fn a_change_of_trust_between_fires_from_one_folder_is_in_force() {
    let (d, repo) = trusted_gate();
    let cwd = repo.join("src");
    let at = repo.to_str().unwrap();
    assert_eq!(d.fire("PreToolUse", bash("make", &cwd))["refused"], true);
    let store = trust_store(&d);
    let trusted_on = fs::read(&store).unwrap();
    // Switched off by the agent: said (not run) at every fire of its moment.
    fs::write(
        repo.join(".hookd/hooks.toml"),
        format!("{GATE}enabled = false\n"),
    )
    .unwrap();
    wait_until(RESPONSE, "the switched-off hook said at a fire", || {
        gate_changed_since_trusted(&d.fire("PreToolUse", bash("make", &cwd)))
    });
    // The user trusts it switched off; then the file gains a hook of another moment, pending (the file
    // read again, under the store that trusts the hook switched off): nothing to say at PreToolUse any
    // more, fire after fire.
    assert_eq!(code(&trust(&d, &[at]).status), 0);
    wait_until(RESPONSE, "the hook trusted switched off, not said", || {
        hook_names(&d.fire("PreToolUse", bash("make", &cwd))).is_empty()
    });
    fs::write(
        repo.join(".hookd/hooks.toml"),
        format!("{GATE}enabled = false\n\n{NOTE}"),
    )
    .unwrap();
    wait_until(RESPONSE, "the new hook read, pending", || {
        hook_names(&d.fire("PostToolUse", bash("make", &cwd))) == ["project:note"]
    });
    for _ in 0..20 {
        let resp = d.fire("PreToolUse", bash("make", &cwd));
        assert_eq!(hook_names(&resp), Vec::<String>::new(), "{resp}");
    }
    // The store put back as it was (the trust of the hook switched on): said again.
    save_as_editors_do(&store, &trusted_on);
    wait_until(
        RESPONSE,
        "the hook said again under the store put back",
        || gate_changed_since_trusted(&d.fire("PreToolUse", bash("make", &cwd))),
    );
    // Revoked: not trusted, switched off, nothing to say.
    assert_eq!(code(&trust(&d, &["--revoke", at]).status), 0);
    wait_until(RESPONSE, "the revoked hook no longer said", || {
        hook_names(&d.fire("PreToolUse", bash("make", &cwd))).is_empty()
    });
    // Trusted again as it is (switched off), then switched on: it runs, and refuses.
    assert_eq!(code(&trust(&d, &[at]).status), 0);
    fs::write(repo.join(".hookd/hooks.toml"), GATE).unwrap();
    wait_until(RESPONSE, "the hook switched on said, not run", || {
        let resp = d.fire("PreToolUse", bash("make", &cwd));
        assert_eq!(resp["refused"], false, "trusted switched off only: {resp}");
        gate_changed_since_trusted(&resp)
    });
    assert_eq!(code(&trust(&d, &[at]).status), 0);
    assert_eq!(d.fire("PreToolUse", bash("make", &cwd))["refused"], true);
}
