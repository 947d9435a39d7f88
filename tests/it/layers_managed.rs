//! The managed layer on the real daemon: its hooks first and out of the user's reach, its policy
//! (`allow_managed_hooks_only`, `require_fail_closed`), a hook two layers hold run once, and a managed
//! file that is not root's refused with the layer's last good settings kept.
//!
//! The managed layer must be root's (docs/teams.md): these tests write it as root, and skip loudly
//! (fail in CI) as another user.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::*;

/// The managed folder of a sandbox, with `managed.toml` written (root's, 0644).
pub fn managed(sb: &Sandbox, toml: &str) -> PathBuf {
    let dir = sb.p("managed");
    fs::create_dir_all(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    write_managed(
        &dir.join("managed.toml"),
        &toml.replace("@DIR@", &sb.dir.path().display().to_string()),
    );
    dir
}

/// Writes a managed file as an admin's tool does: a new file renamed into place, 0644.
pub fn write_managed(path: &Path, text: &str) {
    let temp = path.with_extension("new");
    fs::write(&temp, text).unwrap();
    fs::set_permissions(&temp, fs::Permissions::from_mode(0o644)).unwrap();
    fs::rename(&temp, path).unwrap();
}

fn bash(command: &str, cwd: &Path) -> Value {
    json!({"session_id": "s", "cwd": cwd, "tool_name": "Bash", "tool_input": {"command": command}})
}

#[test]
fn managed_hooks_run_first_and_a_users_enabled_false_cannot_touch_them() {
    if !require_root("the managed layer must be root's") {
        return;
    }
    let sb = Sandbox::new();
    sb.script(
        "no-rm.sh",
        "grep -q 'rm -rf' && { echo 'the team forbids rm -rf' >&2; exit 2; }; exit 0",
    );
    sb.script("note.sh", &prints(r#"{"additionalContext": "user note"}"#));
    let dir = managed(
        &sb,
        "[[hooks.PreToolUse]]\nname = \"team-guard\"\ncommand = \"@DIR@/no-rm.sh\"\n",
    );
    // The user's file names the managed hook to switch it off, and adds one of its own.
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"team-guard\"\ncommand = \"true\"\nenabled = false\n\n[[hooks.PreToolUse]]\nname = \"note\"\ncommand = \"@DIR@/note.sh\"\n",
    );
    let d = Daemon::start_managed(sb, &dir);
    let resp = d.fire("PreToolUse", bash("rm -rf build", d.sb.p("").as_path()));
    assert_eq!(resp["refused"], true, "{resp}");
    assert_eq!(resp["reason"], "the team forbids rm -rf", "{resp}");
    assert_eq!(
        hook_names(&resp),
        vec!["team-guard".to_string(), "note".to_string()],
        "the managed hook first, the user's disabled namesake another hook: {resp}"
    );
    let line = journaled(&d, "the fire's journal line", |r| {
        r["kind"] == "fire" && r["hooks"][0]["name"] == "team-guard"
    });
    assert_eq!(line["hooks"][0]["layer"], "managed", "{line}");
    assert!(
        line["hooks"][1].get("layer").is_none(),
        "the user's: {line}"
    );
    // `check` shows the layer of each hook.
    let out = run_hookd(
        &[
            "check",
            "--config",
            d.config.to_str().unwrap(),
            "--managed",
            dir.to_str().unwrap(),
        ],
        None,
        RESPONSE,
    );
    let said = text(&out.stdout);
    assert!(said.contains("team-guard  [managed]"), "{said}");
    assert!(said.contains("user:team-guard"), "{said}");
}

#[test]
fn allow_managed_hooks_only_skips_user_and_project_hooks_and_the_journal_says_why() {
    if !require_root("the managed layer must be root's") {
        return;
    }
    let sb = Sandbox::new();
    sb.script("deny.sh", "echo 'no' >&2; exit 2");
    sb.script("note.sh", &prints(r#"{"additionalContext": "team"}"#));
    let dir = managed(
        &sb,
        "allow_managed_hooks_only = true\n\n[[hooks.PreToolUse]]\nname = \"team\"\ncommand = \"@DIR@/note.sh\"\n",
    );
    sb.settings("[[hooks.PreToolUse]]\nname = \"mine\"\ncommand = \"@DIR@/deny.sh\"\n");
    let repo = sb.p("repo");
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::create_dir_all(repo.join(".hookd")).unwrap();
    fs::write(
        repo.join(".hookd/hooks.toml"),
        format!(
            "[[hooks.PreToolUse]]\nname = \"theirs\"\ncommand = \"{}\"\n",
            sb.p("deny.sh").display()
        ),
    )
    .unwrap();
    let d = Daemon::start_managed(sb, &dir);
    let resp = d.fire("PreToolUse", bash("ls", &repo));
    assert_eq!(resp["refused"], false, "{resp}");
    assert_eq!(hook_names(&resp), vec!["team".to_string()], "{resp}");
    journaled(&d, "the user's hooks skipped, and why", |r| {
        r["summary"].as_str().is_some_and(|s| {
            s.contains("user's 1 hook(s) do not run") && s.contains("allow_managed_hooks_only")
        })
    });
    journaled(&d, "the repository's hooks skipped, and why", |r| {
        r["summary"].as_str().is_some_and(|s| {
            s.contains("a repository's hooks") && s.contains("allow_managed_hooks_only")
        })
    });
}

#[test]
fn the_same_hook_in_two_layers_runs_once_and_check_names_the_duplicate() {
    if !require_root("the managed layer must be root's") {
        return;
    }
    let sb = Sandbox::new();
    sb.script("count.sh", "echo x >> @DIR@/count");
    let hook =
        "[[hooks.PreToolUse]]\nname = \"NAME\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/count.sh\"\n";
    let dir = managed(&sb, &hook.replace("NAME", "team-count"));
    sb.settings(&hook.replace("NAME", "my-count"));
    let d = Daemon::start_managed(sb, &dir);
    let resp = d.fire("PreToolUse", bash("ls", d.sb.p("").as_path()));
    assert_eq!(hook_names(&resp), vec!["team-count".to_string()], "{resp}");
    assert_eq!(fs::read_to_string(d.sb.p("count")).unwrap(), "x\n");
    let out = run_hookd(
        &[
            "check",
            "--config",
            d.config.to_str().unwrap(),
            "--managed",
            dir.to_str().unwrap(),
        ],
        None,
        RESPONSE,
    );
    let said = text(&out.stdout);
    assert!(
        said.contains("the user's hook \"my-count\" is the managed hook \"team-count\"")
            && said.contains("runs once"),
        "{said}"
    );
}

#[test]
fn require_fail_closed_refuses_a_fail_open_relay() {
    if !require_root("the managed layer must be root's") {
        return;
    }
    let sb = Sandbox::new();
    let dir = managed(&sb, "require_fail_closed = true\n");
    sb.settings("# no hooks\n");
    let d = Daemon::start_managed(sb, &dir);
    let (event, extra) = shell_call("claude-code", "ls", d.sb.p("").as_path());
    let open = relay(&d, "claude-code", &event, &extra);
    let refused = refusal("claude-code", &open);
    assert!(
        refused
            .as_deref()
            .is_some_and(|r| r.contains("require_fail_closed")),
        "a fail-open relay: {open:?}"
    );
    let mut closed_args = extra.clone();
    closed_args.push("--fail-closed");
    let closed = relay(&d, "claude-code", &event, &closed_args);
    assert_eq!(refusal("claude-code", &closed), None, "{closed:?}");
    // The relay request (hookd-relay-lite's way) says so too.
    let input = event.to_string();
    let resp = d
        .connect()
        .request(&json!({"op": "relay", "id": 1, "agent": "claude-code", "input": input}));
    assert!(
        resp["stdout"]
            .as_str()
            .unwrap_or_default()
            .contains("require_fail_closed"),
        "{resp}"
    );
    let resp = d.connect().request(&json!({"op": "relay", "id": 1, "agent": "claude-code", "input": input, "fail_closed": true}));
    // Answered (an error answer has no stdout either), and let through: nothing refuses it.
    assert_eq!(resp["ok"], true, "{resp}");
    assert_eq!(resp["exit"], 0, "{resp}");
    assert!(resp.get("refusal").is_none(), "{resp}");
    assert!(
        !resp["stdout"]
            .as_str()
            .unwrap_or_default()
            .contains("require_fail_closed"),
        "{resp}"
    );
}

#[test]
fn a_managed_file_not_roots_is_refused_and_the_layer_keeps_its_last_good_settings() {
    if !require_root("the managed layer must be root's, and a file chowned to another user refused")
    {
        return;
    }
    let sb = Sandbox::new();
    sb.script("deny.sh", "echo 'team says no' >&2; exit 2");
    let dir = managed(
        &sb,
        "[[hooks.PreToolUse]]\nname = \"team\"\ncommand = \"@DIR@/deny.sh\"\n",
    );
    sb.settings("# no hooks\n");
    let d = Daemon::start_managed(sb, &dir);
    assert_eq!(
        d.fire("PreToolUse", bash("ls", d.sb.p("").as_path()))["refused"],
        true
    );
    // Rewritten empty of hooks, and given to another user: refused, the last good layer stays.
    let file = dir.join("managed.toml");
    write_managed(&file, "# nothing\n");
    std::os::unix::fs::chown(&file, Some(65534), None).unwrap();
    wait_until(Duration::from_secs(10), "the refusal in status", || {
        d.status()["last_reload"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("owned by uid 65534, not by root"))
    });
    assert_eq!(
        d.fire("PreToolUse", bash("ls", d.sb.p("").as_path()))["refused"],
        true
    );
    // Group-writable: refused the same.
    std::os::unix::fs::chown(&file, Some(0), None).unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o664)).unwrap();
    wait_until(Duration::from_secs(10), "the refusal in status", || {
        d.status()["last_reload"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("writable by group or others"))
    });
    assert_eq!(
        d.fire("PreToolUse", bash("ls", d.sb.p("").as_path()))["refused"],
        true
    );
    // Made right by the admin: taken.
    fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
    wait_until(
        Duration::from_secs(10),
        "the layer without hooks taken",
        || d.fire("PreToolUse", bash("ls", d.sb.p("").as_path()))["refused"] == false,
    );
}

#[test]
fn a_policy_key_in_the_users_file_is_an_error_at_its_place() {
    let sb = Sandbox::new();
    sb.settings("# mine\nallow_managed_hooks_only = false\n");
    let out = run_hookd(
        &[
            "check",
            "--config",
            sb.config().to_str().unwrap(),
            "--managed",
            sb.p("none").to_str().unwrap(),
        ],
        None,
        RESPONSE,
    );
    let said = text(&out.stderr);
    assert_eq!(code(&out.status), 1, "{said}");
    assert!(
        said.contains("hooks.toml:2:1") && said.contains("only the managed layer"),
        "{said}"
    );
}

/// A fail-closed relay's event too deep to decode whole is read from its head: the head carries the
/// relay's `fail_closed`, so `require_fail_closed` does not refuse it (its hooks' `on_failure` decides,
/// as for any undecidable event); a fail-open relay's is refused.
#[test]
fn require_fail_closed_reads_the_relays_flag_from_an_undecidable_events_head() {
    if !require_root("the managed layer must be root's") {
        return;
    }
    let sb = Sandbox::new();
    let dir = managed(&sb, "require_fail_closed = true\n");
    sb.settings("# no hooks\n");
    let d = Daemon::start_managed(sb, &dir);
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let line = |flag: &str| {
        format!(
            "{{\"op\":\"fire\",\"id\":1,\"moment\":\"PreToolUse\",\"agent\":\"claude-code\",\"source\":\"relay\"{flag},\"event\":{{\"session_id\":\"s\",\"tool_name\":\"Bash\",\"tool_input\":{{\"command\":\"ls\",\"deep\":{deep}}}}}}}\n"
        )
    };
    let mut client = d.connect();
    client.send_raw(line(",\"fail_closed\":true").as_bytes());
    let closed = client.recv();
    assert_eq!(closed["ok"], true, "{closed}");
    assert_eq!(closed["refused"], false, "a fail-closed relay's: {closed}");
    client.send_raw(line("").as_bytes());
    let open = client.recv();
    assert_eq!(open["refused"], true, "{open}");
    assert!(
        open["reason"]
            .as_str()
            .is_some_and(|r| r.contains("require_fail_closed")),
        "{open}"
    );
}
