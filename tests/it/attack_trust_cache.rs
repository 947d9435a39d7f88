//! The project layer's answers remembered between fires (`Projects::quick`, the trust store's number),
//! attacked with files edited as editors and users edit them: a hooks file that is a link to another
//! file of the repository, a trust store that is a link to the user's own copy, a store put back from
//! a copy while fires come from one folder. A remembered "trusted" after a revoke would run what the
//! user revoked; a remembered "nothing to say" would pass over a hook in silence.

use std::fs;

use serde_json::Value;

use crate::common::*;
use crate::layers_project::{
    GATE, bash, make_repo, save_as_editors_do, trust, trust_store, trusted_gate,
};

/// A second one, that refuses.
const TIGHT: &str = "\n[[hooks.PreToolUse]]\nname = \"tight\"\nmatcher = \"Bash\"\ncommand = \"$HOOKD_CONFIG_DIR/tight.sh\"\n";

/// The report of the repository's hook `name` in `resp`, when it has one.
fn reported<'a>(resp: &'a Value, name: &str) -> Option<&'a Value> {
    resp["hooks"]
        .as_array()
        .and_then(|hooks| hooks.iter().find(|h| h["name"] == name))
}

/// Whether `resp` says `name` was not run, its error holding `words`.
fn said_pending(resp: &Value, name: &str, words: &str) -> bool {
    reported(resp, name).is_some_and(|h| {
        h["outcome"] == "skipped" && h["error"].as_str().is_some_and(|e| e.contains(words))
    })
}

/// A repository that keeps its hooks file elsewhere (`.hookd/hooks.toml` a link to `config/hooks.toml`,
/// inside the repository, which hookd accepts): an edit of the file it names is an edit of the hooks.
/// A link's own stamp does not change when the file it names does: remembered by the link alone, the
/// hooks would stay as first read for as long as the daemon runs, a hook added and trusted "removed
/// since trusted" and never run.
#[test]
fn a_hooks_file_linked_to_another_file_of_the_repository_is_read_again_when_that_file_is_edited() {
    let sb = Sandbox::new();
    sb.settings("# no hooks of the user's\n");
    let repo = make_repo(
        &sb,
        GATE,
        &[
            ("gate.sh", "exit 0"),
            ("tight.sh", "echo 'the repository tightened' >&2; exit 2"),
        ],
    );
    fs::create_dir_all(repo.join("config")).unwrap();
    let target = repo.join("config/hooks.toml");
    fs::rename(repo.join(".hookd/hooks.toml"), &target).unwrap();
    std::os::unix::fs::symlink("../config/hooks.toml", repo.join(".hookd/hooks.toml")).unwrap();
    let d = Daemon::start(sb);
    let cwd = repo.join("src");
    let at = repo.to_str().unwrap();
    let out = trust(&d, &[at]);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    let resp = d.fire("PreToolUse", bash("make", &cwd));
    assert_eq!(resp["refused"], false, "{resp}");
    assert_eq!(hook_names(&resp), ["project:gate"], "{resp}");
    // The file the link names saved by an editor: the new hook read, pending until trusted.
    save_as_editors_do(&target, format!("{GATE}{TIGHT}"));
    wait_until(RESPONSE, "the hook added through the link, pending", || {
        said_pending(
            &d.fire("PreToolUse", bash("make", &cwd)),
            "project:tight",
            "not trusted yet",
        )
    });
    let out = trust(&d, &[at]);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    let resp = d.fire("PreToolUse", bash("make", &cwd));
    assert_eq!(resp["refused"], true, "trusted, it runs: {resp}");
    assert_eq!(resp["reason"], "the repository tightened", "{resp}");
    // Written in place (truncated, written again): the refusing hook taken out is said at every fire.
    fs::write(&target, GATE).unwrap();
    wait_until(RESPONSE, "the hook taken out, said", || {
        said_pending(
            &d.fire("PreToolUse", bash("make", &cwd)),
            "project:tight",
            "removed from the repository's hooks",
        )
    });
}

/// The trust store a link to the user's own copy of it (kept with their dotfiles), and the trust
/// revoked by editing that copy: the revoked hook no longer runs. Remembered by the link's own stamp,
/// the store as first read would trust the hook for as long as the daemon runs.
#[test]
fn a_trust_store_that_is_a_link_is_read_again_when_the_file_it_names_is_edited() {
    let (d, repo) = trusted_gate();
    let cwd = repo.join("src");
    let store = trust_store(&d);
    let own = d.sb.p("dotfiles/trust.json");
    fs::create_dir_all(own.parent().unwrap()).unwrap();
    fs::rename(&store, &own).unwrap();
    std::os::unix::fs::symlink(&own, &store).unwrap();
    wait_until(RESPONSE, "the hook trusted through the link runs", || {
        d.fire("PreToolUse", bash("make", &cwd))["refused"] == true
    });
    // Revoked by hand in the file the link names, saved as an editor saves.
    save_as_editors_do(&own, "{\"projects\": {}}\n");
    wait_until(RESPONSE, "the revoked hook no longer runs", || {
        let resp = d.fire("PreToolUse", bash("make", &cwd));
        resp["refused"] == false && said_pending(&resp, "project:gate", "not trusted yet")
    });
    // And edited in place, trusted again as it was.
    let trusted = fs::read(&store).unwrap();
    assert_eq!(code(&trust(&d, &[repo.to_str().unwrap()]).status), 0);
    let again = fs::read(&store).unwrap();
    assert_ne!(trusted, again);
    assert!(
        !fs::symlink_metadata(&store).unwrap().is_symlink(),
        "hookd trust writes a file of its own"
    );
    fs::remove_file(&store).unwrap();
    fs::write(&own, "{\"projects\": {}}\n").unwrap();
    std::os::unix::fs::symlink(&own, &store).unwrap();
    wait_until(RESPONSE, "not trusted through the link", || {
        d.fire("PreToolUse", bash("make", &cwd))["refused"] == false
    });
    fs::write(&own, &again).unwrap();
    wait_until(RESPONSE, "trusted again through the link", || {
        d.fire("PreToolUse", bash("make", &cwd))["refused"] == true
    });
}

/// Whether the daemon journaled a read of a repository's hooks file holding a hook at `moment`.
fn read_with(d: &Daemon, moment: &str) -> bool {
    d.journal().iter().any(|r| {
        r["kind"] == "reload"
            && r["summary"]
                .as_str()
                .is_some_and(|s| s.contains("layer project") && s.contains(moment))
    })
}

/// A trusted hook switched off by the agent, trusted switched off by the user, and then the store put
/// back from a copy (the trust of the hook switched on): the hook is to be said at every fire of its
/// moment again. Fires come from one folder at that moment, which none of the repository's hooks is
/// on: memory answers them, and what it says of the repository was worked out under the store as a
/// fire last read it. The hooks file is looked at again within 100 ms; the store was read only where a
/// hook was about to run, or the folder's repository looked for again (every 2 s): a fire that read the
/// hooks file anew still said nothing, under the store as it was before. From the fire that reads the
/// hooks file again, the store is the one on disk.
#[test]
fn a_trust_store_put_back_is_in_force_from_the_fire_that_looks_at_the_hooks_file_again() {
    let (d, repo) = trusted_gate();
    let cwd = repo.join("src");
    let at = repo.to_str().unwrap();
    assert_eq!(d.fire("PreToolUse", bash("make", &cwd))["refused"], true);
    let store = trust_store(&d);
    let trusted_on = fs::read(&store).unwrap();
    let hooks = repo.join(".hookd/hooks.toml");
    fs::write(&hooks, format!("{GATE}enabled = false\n")).unwrap();
    assert_eq!(code(&trust(&d, &[at]).status), 0);
    wait_until(RESPONSE, "the hook trusted switched off, not said", || {
        hook_names(&d.fire("PreToolUse", bash("make", &cwd))).is_empty()
    });
    for _ in 0..10 {
        let resp = d.fire("PreToolUse", bash("make", &cwd));
        assert_eq!(hook_names(&resp), Vec::<String>::new(), "{resp}");
    }
    // The store put back, and the hooks file edited (a hook added at a moment no fire comes at:
    // nothing changes at PreToolUse, and its journal line tells this read from the ones before).
    save_as_editors_do(&store, &trusted_on);
    fs::write(
        &hooks,
        format!(
            "{GATE}enabled = false\n\n[[hooks.SessionEnd]]\nname = \"bye\"\ncommand = \"true\"\n"
        ),
    )
    .unwrap();
    // Fires until one read the hooks file again (its journal line): that one, and each after it, says
    // the hook.
    wait_until(RESPONSE, "the hooks file read again", || {
        let resp = d.fire("PreToolUse", bash("make", &cwd));
        let read_again = read_with(&d, "SessionEnd");
        if read_again {
            assert!(
                said_pending(&resp, "project:gate", "changed since it was trusted"),
                "the hooks file read again under the store put back: {resp}"
            );
        }
        read_again
    });
    for _ in 0..10 {
        let resp = d.fire("PreToolUse", bash("make", &cwd));
        assert!(
            said_pending(&resp, "project:gate", "changed since it was trusted"),
            "the trust put back, said at every fire: {resp}"
        );
    }
}

/// The store changed as a careless hand or tool changes it, each change in force at the very next
/// fire that would run the hook (its digest is checked against the store as it is, just before it
/// runs): edited in place to the same size with its modification time put back (only its change time
/// tells), put back the same way, deleted, written anew; each change within milliseconds of the last.
#[test]
fn a_trust_store_edited_in_place_with_its_time_put_back_deleted_or_written_anew_is_in_force_at_once()
 {
    let (d, repo) = trusted_gate();
    let cwd = repo.join("src");
    let refused = || d.fire("PreToolUse", bash("make", &cwd))["refused"] == true;
    assert!(refused(), "trusted, it runs");
    let store = trust_store(&d);
    let trusted = fs::read_to_string(&store).unwrap();
    let digest = trusted
        .split('"')
        .find(|word| word.len() == 64 && word.bytes().all(|b| b.is_ascii_hexdigit()))
        .expect("the hook's digest in the store")
        .to_owned();
    let revoked = trusted.replace(&digest, &"0".repeat(64));
    assert_eq!(revoked.len(), trusted.len());
    // In place, the same size, the modification time put back as it was.
    let in_place = |text: &str| {
        let modified = fs::metadata(&store).unwrap().modified().unwrap();
        fs::write(&store, text).unwrap();
        fs::File::options()
            .write(true)
            .open(&store)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        assert_eq!(fs::metadata(&store).unwrap().modified().unwrap(), modified);
    };
    in_place(&revoked);
    assert!(
        !refused(),
        "another digest trusted: pending at the next fire"
    );
    in_place(&trusted);
    assert!(refused(), "trusted again at the next fire");
    fs::remove_file(&store).unwrap();
    assert!(
        !refused(),
        "the store deleted: nothing trusted at the next fire"
    );
    fs::write(&store, &trusted).unwrap();
    assert!(refused(), "written anew: trusted at the next fire");
}

/// The repository's hooks file edited in place to the same size with its modification time put back
/// (a tool that keeps times, or an agent hiding its edit): the hook the user trusted renamed away is
/// said as removed at the fires from the folder the last came from, the renamed one pending; never
/// the old hooks taken as unchanged.
#[test]
fn a_hooks_file_edited_in_place_with_its_time_put_back_is_read_again() {
    let (d, repo) = trusted_gate();
    let cwd = repo.join("src");
    assert_eq!(d.fire("PreToolUse", bash("make", &cwd))["refused"], true);
    let hooks = repo.join(".hookd/hooks.toml");
    let modified = fs::metadata(&hooks).unwrap().modified().unwrap();
    let renamed = GATE.replace("\"gate\"", "\"gat2\"");
    assert_eq!(renamed.len(), GATE.len());
    fs::write(&hooks, &renamed).unwrap();
    fs::File::options()
        .write(true)
        .open(&hooks)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    wait_until(RESPONSE, "the edit seen", || {
        let resp = d.fire("PreToolUse", bash("make", &cwd));
        said_pending(&resp, "project:gate", "removed from the repository's hooks")
            && said_pending(&resp, "project:gat2", "not trusted yet")
    });
}
