//! `status` asked to hold every fire back. Any process of the user may ask for it over the socket, the
//! agent among them, and it tells each repository's hooks that wait for trust, which takes reading the
//! trust store and digesting every hook's scripts (up to 16 MiB each): on the daemon's one shared
//! thread, a trust store swapped for a FIFO, or scripts made large and `status` asked again and again,
//! held every fire back, and a relay that fails open let the tool call through. Each test here keeps a
//! user's hook that refuses, so that a fire held back is a refusal lost, in plain sight.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use crate::common::*;
use crate::layers_project::{bash, make_repo};

/// The user's settings: one hook that refuses every Bash call.
fn refusing_user(sb: &Sandbox) {
    sb.script("deny.sh", "echo 'the user says no' >&2; exit 2");
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"deny\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/deny.sh\"\n",
    );
}

/// A fire from `cwd` on a connection of its own, answered (within the client's read deadline) and
/// refused by the user's hook.
fn refused_from(d: &Daemon, cwd: &Path) {
    let mut client = d.connect();
    let answer = client.request(&json!({
        "op": "fire", "id": "guarded", "moment": "PreToolUse", "event": bash("rm -rf ~", cwd)
    }));
    assert_eq!(answer["id"], "guarded", "{answer}");
    assert_eq!(
        answer["refused"], true,
        "the user's hook refuses while status is asked: {answer}"
    );
}

/// What a `status` answer says of the repository at `repo`.
fn project_in(status: &Value, repo: &Path) -> Value {
    let root = fs::canonicalize(repo).unwrap();
    status["layers"]["projects"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["root"] == root.to_str().unwrap() || p["root"] == repo.to_str().unwrap())
        .cloned()
        .unwrap_or_else(|| panic!("status lists the repository {}: {status}", repo.display()))
}

#[test]
fn a_trust_store_swapped_for_a_fifo_holds_neither_status_nor_the_fires() {
    let sb = Sandbox::new();
    refusing_user(&sb);
    let repo = make_repo(
        &sb,
        "[[hooks.PreToolUse]]\nname = \"gate\"\nmatcher = \"Bash\"\ncommand = \"$HOOKD_CONFIG_DIR/gate.sh\"\n",
        &[("gate.sh", "exit 0")],
    );
    let d = Daemon::start(sb);
    // A fire from the repository: its hooks are read, and remembered for `status`.
    let first = d.fire("PreToolUse", bash("make", &repo.join("src")));
    assert_eq!(first["refused"], true, "{first}");
    assert_eq!(
        hook(&first, "project:gate")["outcome"],
        "skipped",
        "{first}"
    );
    // The agent puts a FIFO in the trust store's place: opened as a file is, it waits for a writer
    // that never comes.
    let store = state_home_for(&d.socket).join("hookd/trust.json");
    fs::create_dir_all(store.parent().unwrap()).unwrap();
    let _ = fs::remove_file(&store);
    nix::unistd::mkfifo(&store, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();

    let mut asking = d.connect();
    asking.send(&json!({"op": "status", "id": "status"}));
    // Another connection's fire is answered, refused, while `status` is asked...
    refused_from(&d, d.socket.parent().unwrap());
    // ... and from the repository, whose lookup reads the trust store too.
    refused_from(&d, &repo.join("src"));
    // `status` is answered as well: the store is refused (not a regular file), so nothing is trusted
    // and the repository's hook is listed as pending.
    let status = asking.recv();
    assert_eq!(status["id"], "status", "{status}");
    assert_eq!(status["ok"], true, "{status}");
    let project = project_in(&status, &repo);
    assert_eq!(project["pending"], json!(["PreToolUse/gate"]), "{status}");
}

/// Files in the repository's `.hookd/` as large as a script may be digested, holding zeros (sparse:
/// no disk is written); the names, as a hook's command names them.
fn large_files(repo: &Path, count: usize) -> String {
    (0..count)
        .map(|n| {
            let name = format!("large{n}");
            let file = fs::File::create(repo.join(".hookd").join(&name)).unwrap();
            file.set_len(16 * 1024 * 1024).unwrap();
            format!(" $HOOKD_CONFIG_DIR/{name}")
        })
        .collect()
}

/// How many `status` requests the agent sends at once in the test below. Each digested the hook's
/// 64 MiB on the shared thread, one after another (more than a second each in a debug build), so that
/// a fire behind them waited far past the client's read deadline; now one digest runs on a blocking
/// thread for all those that ask while it runs.
const ASKED: usize = 60;

#[test]
fn statuses_asked_again_and_again_over_large_scripts_hold_no_fire_back() {
    let sb = Sandbox::new();
    refusing_user(&sb);
    let repo = make_repo(&sb, "", &[("gate.sh", "exit 0")]);
    // A hook that waits for trust, on another moment than the fires below (they never digest it),
    // naming four files of 16 MiB: each `status` digests them.
    let named = large_files(&repo, 4);
    fs::write(
        repo.join(".hookd/hooks.toml"),
        format!(
            "[[hooks.PostToolUse]]\nname = \"large\"\ncommand = \"$HOOKD_CONFIG_DIR/gate.sh{named}\"\n"
        ),
    )
    .unwrap();
    let d = Daemon::start(sb);
    let first = d.fire("PreToolUse", bash("make", &repo.join("src")));
    assert_eq!(first["refused"], true, "{first}");

    let mut asking = d.connect();
    for n in 0..ASKED {
        asking.send(&json!({"op": "status", "id": n}));
    }
    refused_from(&d, d.socket.parent().unwrap());
    refused_from(&d, &repo.join("src"));
    // Every `status` is answered: the hook listed as pending, or, where the digest took longer than
    // `status` waits for it, its pending hooks said to be unknown, and why.
    for _ in 0..ASKED {
        let status = asking.recv();
        assert_eq!(status["ok"], true, "{status}");
        let project = project_in(&status, &repo);
        assert!(
            project["pending"] == json!(["PostToolUse/large"])
                || project["pending_unknown"]
                    .as_str()
                    .is_some_and(|why| why.contains("not digested within")),
            "{status}"
        );
    }
}
