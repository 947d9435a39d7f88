//! Live reload (contract section 10) against the real daemon: the settings file edited the ways editors,
//! shells, `sed`, `git` and dotfile managers edit it, and the daemon picking each edit up.
//!
//! Every settings file here holds one PreToolUse hook named after its version that says its name (`echo
//! v2`), so a fire's `adds` tells which generation answered. Tests poll a fire (or `status`) every 20 ms
//! until the new settings show, with a deadline; none asserts how fast a reload is.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::*;
use nix::sys::signal::Signal;
use serde_json::{Value, json};

/// How long an edit may take to show (a safety net against a hung test, not a speed assertion).
const SHOWS: Duration = Duration::from_secs(5);

/// How often a test looks again.
const POLL: Duration = Duration::from_millis(20);

/// A settings file whose one hook, named `word`, adds `word`.
fn says(word: &str) -> String {
    format!("[[hooks.PreToolUse]]\nname = \"{word}\"\ncommand = \"echo {word}\"\n")
}

/// The `adds` of one PreToolUse fire.
fn fire_adds(d: &Daemon) -> Vec<String> {
    adds(&d.fire("PreToolUse", bash_event()))
}

/// Fires every 20 ms until the adds are `want`; panics at the deadline with the last answer and status.
fn wait_adds(d: &Daemon, want: &[&str]) {
    let deadline = Instant::now() + SHOWS;
    loop {
        let resp = d.fire("PreToolUse", bash_event());
        if adds(&resp) == want {
            return;
        }
        if Instant::now() >= deadline {
            panic!(
                "after {SHOWS:?} fires still answer {resp}, not adds {want:?}; status: {}",
                d.status()
            );
        }
        std::thread::sleep(POLL);
    }
}

/// Asks `status` every 20 ms until `cond` holds; returns that status.
fn wait_status(d: &Daemon, what: &str, cond: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + SHOWS;
    loop {
        let status = d.status();
        if cond(&status) {
            return status;
        }
        if Instant::now() >= deadline {
            panic!("after {SHOWS:?} still not {what}; status: {status}");
        }
        std::thread::sleep(POLL);
    }
}

fn generation(d: &Daemon) -> u64 {
    let status = d.status();
    status["generation"]
        .as_u64()
        .unwrap_or_else(|| panic!("no numeric generation in {status}"))
}

/// Waits until the daemon answers with the hook `word` and its last reload went well; checks that the
/// edit made exactly one new generation since `before`.
fn expect_picked_up(d: &Daemon, word: &str, before: u64) {
    wait_adds(d, &[word]);
    let status = wait_status(d, "last_reload ok", |s| s["last_reload"]["ok"] == true);
    assert_eq!(
        status["generation"],
        before + 1,
        "one edit to {word:?} should make exactly one new generation: {status}"
    );
}

/// As vim and VS Code save: a new file in the same folder, renamed over the settings file.
fn rename_over(path: &Path, text: &str) {
    let name = path.file_name().unwrap().to_str().unwrap();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    fs::write(&tmp, text).expect("writing the new file");
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o644)).expect("chmod 0644");
    fs::rename(&tmp, path).expect("renaming over the settings file");
}

/// Truncates and rewrites the file where it is (same inode), in one write.
fn write_in_place(path: &Path, text: &str) {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .expect("opening the settings file for writing");
    file.write_all(text.as_bytes())
        .expect("writing the settings file");
}

/// Creates a new file (mode 0644), failing if one is there.
fn create_new(path: &Path, text: &str) {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(path)
        .expect("creating the settings file");
    fs::set_permissions(path, fs::Permissions::from_mode(0o644)).expect("chmod 0644");
    file.write_all(text.as_bytes())
        .expect("writing the settings file");
}

/// Runs a shell command line under umask 022 (so files it creates are 0644); panics unless it exits 0.
fn sh(script: &str, args: &[&Path]) {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("umask 022; {script}"))
        .arg("sh")
        .args(args);
    let out = run_with_deadline(cmd, None, Duration::from_secs(30));
    assert!(
        out.status.success(),
        "`{script}` failed ({}): {}{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// Puts a folder `name` holding a settings file saying `word` in the sandbox.
fn settings_folder(sb: &Sandbox, name: &str, word: &str) -> PathBuf {
    let folder = sb.p(name);
    fs::create_dir(&folder).unwrap();
    create_new(&folder.join("hooks.toml"), &says(word));
    folder
}

fn start_saying(word: &str) -> Daemon {
    let sb = Sandbox::new();
    sb.settings(&says(word));
    let d = Daemon::start(sb);
    assert_eq!(fire_adds(&d), [word]);
    d
}

#[test]
fn rename_over_from_the_same_folder_is_picked_up() {
    let d = start_saying("v1");
    let before = generation(&d);
    rename_over(&d.config, &says("v2"));
    expect_picked_up(&d, "v2", before);
}

#[test]
fn cp_and_shell_redirection_truncate_and_write_in_place() {
    let d = start_saying("v1");
    let new = d.sb.p("new.toml");
    fs::write(&new, says("v2")).unwrap();
    let before = generation(&d);
    sh(r#"cp "$1" "$2""#, &[&new, &d.config]);
    expect_picked_up(&d, "v2", before);

    let before = generation(&d);
    sh(
        &format!(r#"printf '%s' '{}' > "$1""#, says("v3")),
        &[&d.config],
    );
    expect_picked_up(&d, "v3", before);
}

#[test]
fn unlink_and_create_is_picked_up() {
    let d = start_saying("v1");
    let before = generation(&d);
    fs::remove_file(&d.config).unwrap();
    create_new(&d.config, &says("v2"));
    expect_picked_up(&d, "v2", before);
}

#[test]
fn git_checkout_of_another_branch_is_picked_up() {
    let sb = Sandbox::new();
    let conf = sb.config_dir();
    let git = r#"git -c user.name=t -c user.email=t@t -c init.defaultBranch=main -C "$1""#;
    sb.settings(&says("v1"));
    sh(
        &format!(
            "{git} init -q && {git} add hooks.toml && {git} commit -qm v1 && {git} checkout -qb next"
        ),
        &[&conf],
    );
    sb.settings(&says("v2"));
    sh(
        &format!("{git} commit -qam v2 && {git} checkout -q main"),
        &[&conf],
    );
    let d = Daemon::start(sb);
    assert_eq!(fire_adds(&d), ["v1"]);

    let before = generation(&d);
    sh(&format!("{git} checkout -q next"), &[&conf]);
    expect_picked_up(&d, "v2", before);
    let before = generation(&d);
    sh(&format!("{git} checkout -q main"), &[&conf]);
    expect_picked_up(&d, "v1", before);
}

#[test]
fn sed_in_place_is_picked_up() {
    let d = start_saying("v1");
    let before = generation(&d);
    sh("sed -i 's/v1/v2/g' \"$1\"", &[&d.config]);
    expect_picked_up(&d, "v2", before);
    let mode = fs::metadata(&d.config).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644, "sed -i kept the mode");
}

#[test]
fn a_symlink_into_a_subfolder_is_repointed_and_its_target_edited() {
    let sb = Sandbox::new();
    let versions = sb.p("conf/versions");
    fs::create_dir(&versions).unwrap();
    for word in ["v1", "v2"] {
        create_new(&versions.join(format!("{word}.toml")), &says(word));
    }
    std::os::unix::fs::symlink("versions/v1.toml", sb.config()).unwrap();
    let d = Daemon::start(sb);
    assert_eq!(fire_adds(&d), ["v1"]);

    // ln -sfn: the link itself replaced, pointing at another file.
    let before = generation(&d);
    sh(
        r#"cd "$1" && ln -sfn versions/v2.toml hooks.toml"#,
        &[&d.sb.config_dir()],
    );
    expect_picked_up(&d, "v2", before);

    // The new target edited in place (as vim writes through a symlink), then renamed over in its folder.
    let target = d.sb.p("conf/versions/v2.toml");
    let before = generation(&d);
    write_in_place(&target, &says("v3"));
    expect_picked_up(&d, "v3", before);
    let before = generation(&d);
    rename_over(&target, &says("v4"));
    expect_picked_up(&d, "v4", before);
}

#[test]
fn a_chain_of_links_into_other_folders_is_followed() {
    // As GNU stow lays out dotfiles: the settings file links to ../dotfiles/hooks.toml, itself a link into
    // a third folder. Every folder of the chain is watched.
    let sb = Sandbox::new();
    for folder in ["dotfiles", "store"] {
        fs::create_dir(sb.p(folder)).unwrap();
    }
    create_new(&sb.p("store/v1.toml"), &says("v1"));
    create_new(&sb.p("store/v2.toml"), &says("v2"));
    std::os::unix::fs::symlink("../store/v1.toml", sb.p("dotfiles/hooks.toml")).unwrap();
    std::os::unix::fs::symlink("../dotfiles/hooks.toml", sb.config()).unwrap();
    let d = Daemon::start(sb);
    assert_eq!(fire_adds(&d), ["v1"]);

    let before = generation(&d);
    rename_over(&d.sb.p("store/v1.toml"), &says("v3"));
    expect_picked_up(&d, "v3", before);

    // The middle link re-pointed.
    let before = generation(&d);
    sh(
        r#"cd "$1" && ln -sfn ../store/v2.toml hooks.toml"#,
        &[&d.sb.p("dotfiles")],
    );
    expect_picked_up(&d, "v2", before);

    // And the new end of the chain edited.
    let before = generation(&d);
    write_in_place(&d.sb.p("store/v2.toml"), &says("v4"));
    expect_picked_up(&d, "v4", before);
}

#[test]
fn a_burst_of_100_writes_ends_on_the_last_one() {
    let d = start_saying("v0");
    let before = generation(&d);
    for i in 1..=100 {
        rename_over(&d.config, &says(&format!("b{i}")));
    }
    wait_adds(&d, &["b100"]);
    let status = wait_status(&d, "last_reload ok", |s| s["last_reload"]["ok"] == true);
    let after = status["generation"].as_u64().unwrap();
    assert!(
        after > before && after <= before + 10,
        "a burst of 100 writes made {} generations (from {before} to {after}): not batched",
        after - before
    );
}

#[test]
fn an_invalid_edit_keeps_the_old_hooks_until_it_is_fixed() {
    let d = start_saying("v1");
    let before = generation(&d);
    let bad = "[[hooks.PreToolUse]]\nname = \"bad\"\ncommand = \"echo bad\"\nbogus = 1\n";
    rename_over(&d.config, bad);
    let status = wait_status(&d, "last_reload failed", |s| {
        s["last_reload"]["ok"] == false
    });
    let error = status["last_reload"]["error"]
        .as_str()
        .unwrap_or_else(|| panic!("last_reload.error is not a string: {status}"));
    let at = format!("{}:4:1: ", d.config.display());
    assert!(
        error.contains(&at) && error.contains("bogus"),
        "the error should be `{at}unknown key \"bogus\"...`, got {error:?}"
    );
    assert!(status["last_reload"]["at"].is_string(), "{status}");
    assert_eq!(status["generation"], before, "{status}");
    assert_eq!(status["hooks"]["PreToolUse"], 1, "{status}");
    let resp = d.fire("PreToolUse", bash_event());
    assert_eq!(adds(&resp), ["v1"], "the old hooks answer: {resp}");
    assert_eq!(hook_names(&resp), ["v1"], "{resp}");

    rename_over(&d.config, &says("v2"));
    expect_picked_up(&d, "v2", before);
    let status = d.status();
    assert!(
        status["last_reload"]
            .get("error")
            .is_none_or(Value::is_null),
        "{status}"
    );
}

/// An edit that hangs a hook no agent of which ever fires its moment (Gemini CLI never fires
/// PermissionRequest) is refused as any invalid edit is: the old hooks keep answering, and `status`
/// (the request and `hookd status`) says why, at the hook's `agents`. Named for Claude Code too, the hook
/// can run, and the edit is taken.
#[test]
fn an_edit_hanging_a_hook_that_can_never_run_keeps_the_old_hooks() {
    let d = start_saying("v1");
    let before = generation(&d);
    let with = |agents: &str| {
        format!(
            "{}\n[[hooks.PermissionRequest]]\nname = \"perm\"\nagents = {agents}\ncommand = \"true\"\n",
            says("v2")
        )
    };
    rename_over(&d.config, &with("[\"gemini-cli\"]"));
    let status = wait_status(&d, "last_reload failed", |s| {
        s["last_reload"]["ok"] == false
    });
    let error = status["last_reload"]["error"].as_str().unwrap_or_default();
    let at = format!(
        "{}:7:10: hook \"perm\": gemini-cli never fires PermissionRequest, so this hook would never run (did you mean [[hooks.PreToolUse]], Gemini CLI's BeforeTool?)",
        d.config.display()
    );
    assert!(error.starts_with(&at), "expected {at:?}..., got {error:?}");
    assert_eq!(status["generation"], before, "{status}");
    assert_eq!(status["hooks"].get("PermissionRequest"), None, "{status}");
    let resp = d.fire("PreToolUse", bash_event());
    assert_eq!(adds(&resp), ["v1"], "the old hooks answer: {resp}");

    // `hookd status` as people read it, on a terminal.
    let mut cmd = Command::new(BIN);
    cmd.args(["status", "--socket", d.socket.to_str().unwrap()])
        .env("NO_COLOR", "1");
    let out = run_on_terminal(cmd, None, SHOWS);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(
        shown.lines().any(
            |l| l.contains("last edit: refused, the settings above kept: ")
                && l.contains("gemini-cli never fires PermissionRequest")
        ),
        "{shown}"
    );

    rename_over(&d.config, &with("[\"claude-code\", \"gemini-cli\"]"));
    expect_picked_up(&d, "v2", before);
    assert_eq!(d.status()["hooks"]["PermissionRequest"], 1);
}

#[test]
fn an_emptied_file_keeps_the_old_hooks() {
    let d = start_saying("v1");
    let before = generation(&d);
    sh(r#": > "$1""#, &[&d.config]);
    let status = wait_status(&d, "last_reload failed", |s| {
        s["last_reload"]["ok"] == false
    });
    let error = status["last_reload"]["error"].as_str().unwrap_or_default();
    assert!(
        error.starts_with(&format!("{}:1:1: ", d.config.display())) && error.contains("empty"),
        "{status}"
    );
    assert_eq!(status["generation"], before, "{status}");
    assert_eq!(fire_adds(&d), ["v1"]);

    write_in_place(&d.config, &says("v2"));
    expect_picked_up(&d, "v2", before);
}

/// `hookd check` and a reload say the same of an empty file, in the same words: it is refused
/// (a reload keeps the last good settings), and a comment is the way to have no hooks.
#[test]
fn check_and_a_reload_refuse_an_empty_file_alike() {
    let d = start_saying("v1");
    let before = generation(&d);
    sh(r#": > "$1""#, &[&d.config]);
    let status = wait_status(&d, "last_reload failed", |s| {
        s["last_reload"]["ok"] == false
    });
    let reload_error = status["last_reload"]["error"].as_str().unwrap_or_default();
    assert_eq!(fire_adds(&d), ["v1"], "the empty file was taken");
    let out = run_hookd(
        &["check", "--config", d.config.to_str().unwrap()],
        None,
        SHOWS,
    );
    assert_eq!(code(&out.status), 1, "check took the empty file");
    let stderr = text(&out.stderr);
    let check_error = stderr.lines().next().unwrap_or_default();
    assert_eq!(check_error, reload_error, "check and reload disagree");
    assert!(
        check_error.contains("write a comment in it"),
        "{check_error}"
    );

    // The way it says: a comment, taken by both.
    write_in_place(&d.config, "# no hooks for now\n");
    wait_status(&d, "the commented file taken", |s| {
        s["last_reload"]["ok"] == true && s["generation"].as_u64() > Some(before)
    });
    assert!(fire_adds(&d).is_empty());
    let out = run_hookd(
        &["check", "--config", d.config.to_str().unwrap()],
        None,
        SHOWS,
    );
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
}

/// An empty file at start-up is a file not written yet, as a missing one is: the daemon serves with no
/// hooks (there are no last good settings to keep), says so in its log, and takes the file once written.
#[test]
fn an_empty_file_at_start_up_means_no_hooks_until_it_is_written() {
    let sb = Sandbox::new();
    sb.settings("");
    let d = Daemon::start(sb);
    assert!(fire_adds(&d).is_empty());
    assert!(
        d.log_text().contains("the settings file is empty"),
        "{}",
        d.log_text()
    );
    let before = generation(&d);
    write_in_place(&d.config, &says("v1"));
    expect_picked_up(&d, "v1", before);
}

#[test]
fn reverting_to_the_settings_in_force_makes_no_new_generation() {
    let d = start_saying("v1");
    let before = generation(&d);
    rename_over(&d.config, "[[hooks.PreToolUse]]\ncommand = \n");
    wait_status(&d, "last_reload failed", |s| {
        s["last_reload"]["ok"] == false
    });
    // Back to exactly the text in force: the error is over, but nothing new was loaded.
    rename_over(&d.config, &says("v1"));
    let status = wait_status(&d, "last_reload ok", |s| s["last_reload"]["ok"] == true);
    assert_eq!(status["generation"], before, "{status}");
    assert_eq!(fire_adds(&d), ["v1"]);
}

#[test]
fn a_deleted_file_keeps_the_old_hooks_and_its_recreation_is_picked_up() {
    let d = start_saying("v1");
    let before = generation(&d);
    fs::remove_file(&d.config).unwrap();
    let status = wait_status(&d, "last_reload failed", |s| {
        s["last_reload"]["ok"] == false
    });
    let error = status["last_reload"]["error"].as_str().unwrap_or_default();
    assert!(
        error.starts_with(&format!("{}:", d.config.display())) && error.contains("not exist"),
        "{status}"
    );
    assert_eq!(status["generation"], before, "{status}");
    assert_eq!(fire_adds(&d), ["v1"]);

    // The scenario: the file stays away a while (a branch switch, a reinstall), then comes back.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(fire_adds(&d), ["v1"]);
    create_new(&d.config, &says("v2"));
    expect_picked_up(&d, "v2", before);
}

#[test]
fn a_fire_in_flight_finishes_on_the_generation_it_started_with() {
    let sb = Sandbox::new();
    // v1's hook says it started, then holds until the test releases it.
    sb.settings(
        "[[hooks.PreToolUse]]\nname = \"v1\"\ntimeout = 30\n\
         command = \"touch @DIR@/started; while [ ! -e @DIR@/release ]; do sleep 0.02; done; echo v1\"\n",
    );
    let d = Daemon::start(sb);
    let before = generation(&d);
    let socket = d.socket.clone();
    let in_flight = std::thread::spawn(move || {
        Client::connect(&socket).request(&json!({
            "op": "fire", "id": "slow", "moment": "PreToolUse", "agent": "claude-code",
            "event": bash_event(),
        }))
    });
    wait_until(SHOWS, "the v1 hook to start", || d.sb.p("started").exists());

    rename_over(&d.config, &format!("{}{}", says("v2"), says("v2b")));
    wait_status(&d, "the v2 generation", |s| s["generation"] == before + 1);
    let resp = d.fire("PreToolUse", bash_event());
    assert_eq!(adds(&resp), ["v2", "v2b"], "a new fire uses v2: {resp}");
    assert_eq!(d.status()["in_flight"], 1, "the v1 fire is still running");

    fs::write(d.sb.p("release"), "").unwrap();
    let resp = in_flight.join().expect("the in-flight fire's thread");
    check_fire_shape(&resp);
    assert_eq!(adds(&resp), ["v1"], "the in-flight fire kept v1: {resp}");
    assert_eq!(hook_names(&resp), ["v1"], "{resp}");
}

#[test]
fn a_file_created_after_start_is_picked_up() {
    let sb = Sandbox::new();
    let d = Daemon::start(sb);
    let resp = d.fire("PreToolUse", bash_event());
    assert_eq!(resp["hooks"], json!([]), "no file yet: no hooks: {resp}");
    let before = generation(&d);
    rename_over(&d.config, &says("v1"));
    expect_picked_up(&d, "v1", before);
}

#[test]
fn a_folder_created_after_start_is_picked_up() {
    let sb = Sandbox::new();
    fs::remove_dir(sb.config_dir()).unwrap();
    let d = Daemon::start(sb);
    let resp = d.fire("PreToolUse", bash_event());
    assert_eq!(resp["hooks"], json!([]), "no folder yet: no hooks: {resp}");
    wait_until(SHOWS, "the log to say the folder is looked for", || {
        d.log_text().contains("does not exist yet")
    });
    let before = generation(&d);
    fs::create_dir(d.sb.config_dir()).unwrap();
    create_new(&d.config, &says("v1"));
    expect_picked_up(&d, "v1", before);
    // Once found, the folder is watched: a later edit shows too.
    let before = generation(&d);
    rename_over(&d.config, &says("v2"));
    expect_picked_up(&d, "v2", before);
}

#[test]
fn polling_mode_picks_up_a_rename_over() {
    let sb = Sandbox::new();
    sb.settings(&says("v1"));
    let d = Daemon::start_with(sb, |cmd| {
        cmd.env("HOOKD_WATCH", "poll");
    });
    wait_until(SHOWS, "the log to say it polls", || {
        d.log_text().contains("polling")
    });
    assert_eq!(fire_adds(&d), ["v1"]);
    let before = generation(&d);
    rename_over(&d.config, &says("v2"));
    expect_picked_up(&d, "v2", before);
    let before = generation(&d);
    sh("sed -i 's/v2/v3/g' \"$1\"", &[&d.config]);
    expect_picked_up(&d, "v3", before);
}

#[test]
fn sighup_and_the_reload_request_make_a_new_generation() {
    let d = start_saying("v1");
    let before = generation(&d);
    d.signal(Signal::SIGHUP);
    let status = wait_status(&d, "a new generation after SIGHUP", |s| {
        s["generation"] == before + 1
    });
    assert_eq!(status["last_reload"]["ok"], true, "{status}");
    assert_eq!(fire_adds(&d), ["v1"]);

    let resp = d.reload();
    assert_eq!(resp["ok"], true, "{resp}");
    assert_eq!(resp["generation"], before + 2, "{resp}");
    assert_eq!(generation(&d), before + 2);
    assert!(d.log_text().contains("SIGHUP"), "{}", d.log_text());
}

#[test]
fn vim_backup_rename_then_new_file_is_picked_up() {
    // vim's default save on Linux (backupcopy=auto, writebackup): the file is renamed to `hooks.toml~`,
    // a new one is written in its place, then the backup is deleted.
    let d = start_saying("v1");
    let before = generation(&d);
    let backup = d.sb.p("conf/hooks.toml~");
    fs::rename(&d.config, &backup).unwrap();
    create_new(&d.config, &says("v2"));
    fs::remove_file(&backup).unwrap();
    expect_picked_up(&d, "v2", before);
}

#[test]
fn a_settings_folder_removed_and_recreated_is_watched_anew() {
    // A deploy script or a dotfiles tool replacing the whole folder: the folder watched before is gone,
    // and so is its watch. Edits in the new folder must still be seen.
    let d = start_saying("v1");
    let new = settings_folder(&d.sb, "newconf", "v2");
    let before = generation(&d);
    sh(
        r#"rm -rf "$1" && mv "$2" "$1""#,
        &[&d.sb.config_dir(), &new],
    );
    expect_picked_up(&d, "v2", before);
    let before = generation(&d);
    rename_over(&d.config, &says("v3"));
    expect_picked_up(&d, "v3", before);
}

#[test]
fn a_settings_folder_swapped_by_renames_is_watched_anew() {
    let d = start_saying("v1");
    let new = settings_folder(&d.sb, "newconf", "v2");
    let before = generation(&d);
    sh(
        r#"mv "$1" "$1.old" && mv "$2" "$1""#,
        &[&d.sb.config_dir(), &new],
    );
    expect_picked_up(&d, "v2", before);
    let before = generation(&d);
    rename_over(&d.config, &says("v3"));
    expect_picked_up(&d, "v3", before);
}

#[test]
fn a_symlinked_settings_folder_repointed_is_picked_up() {
    // GNU stow folds a package into one link to its folder: ~/.config/hookd -> ../dotfiles/hookd.
    let sb = Sandbox::new();
    fs::remove_dir(sb.config_dir()).unwrap();
    settings_folder(&sb, "pkg1", "v1");
    settings_folder(&sb, "pkg2", "v2");
    std::os::unix::fs::symlink("pkg1", sb.config_dir()).unwrap();
    let d = Daemon::start(sb);
    assert_eq!(fire_adds(&d), ["v1"]);
    let before = generation(&d);
    rename_over(&d.config, &says("v3"));
    expect_picked_up(&d, "v3", before);

    let before = generation(&d);
    sh(r#"cd "$1" && ln -sfn pkg2 conf"#, &[d.sb.path()]);
    expect_picked_up(&d, "v2", before);
}

#[test]
fn a_dangling_link_repointed_to_a_real_file_is_picked_up() {
    // The link points into a folder that does not exist, then is fixed to point at a real file.
    let sb = Sandbox::new();
    std::os::unix::fs::symlink("../nowhere/hooks.toml", sb.config()).unwrap();
    settings_folder(&sb, "real", "v1");
    let d = Daemon::start(sb);
    let resp = d.fire("PreToolUse", bash_event());
    assert_eq!(resp["hooks"], json!([]), "no file yet: no hooks: {resp}");
    let before = generation(&d);
    sh(
        r#"cd "$1" && ln -sfn ../real/hooks.toml hooks.toml"#,
        &[&d.sb.config_dir()],
    );
    expect_picked_up(&d, "v1", before);
}

#[test]
fn a_group_writable_file_is_refused_until_its_mode_is_fixed() {
    let d = start_saying("v1");
    let before = generation(&d);
    fs::set_permissions(&d.config, fs::Permissions::from_mode(0o664)).unwrap();
    let status = wait_status(&d, "last_reload failed", |s| {
        s["last_reload"]["ok"] == false
    });
    let error = status["last_reload"]["error"].as_str().unwrap_or_default();
    assert!(
        error.starts_with(&format!("{}:", d.config.display())) && error.contains("writable"),
        "{status}"
    );
    assert_eq!(fire_adds(&d), ["v1"]);
    fs::set_permissions(&d.config, fs::Permissions::from_mode(0o644)).unwrap();
    let status = wait_status(&d, "last_reload ok", |s| s["last_reload"]["ok"] == true);
    assert_eq!(
        status["generation"], before,
        "the same text again: {status}"
    );
}

// ----- A file is taken only once its writer is done with it -----

/// A guard named `name` that refuses every PreToolUse.
fn guard(name: &str) -> String {
    format!("[[hooks.PreToolUse]]\nname = \"{name}\"\ncommand = \"echo no >&2; exit 2\"\n")
}

/// An event an agent must never be let through with.
fn rm_rf_event() -> Value {
    json!({"session_id": "s1", "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}})
}

/// Fires `rm -rf /` in a loop on one connection, from another thread, until the returned flag is set;
/// the thread's result is (fires, fires let through).
fn fire_rm_in_a_loop(
    d: &Daemon,
) -> (
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    std::thread::JoinHandle<(u64, u64)>,
) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    let socket = d.socket.clone();
    let firing = std::thread::spawn(move || {
        let mut client = Client::connect(&socket);
        let (mut fires, mut let_through) = (0, 0);
        while !stopped.load(Ordering::Acquire) {
            let resp = client.request(&json!({
                "op": "fire", "id": fires, "moment": "PreToolUse", "agent": "claude-code",
                "event": rm_rf_event(),
            }));
            assert_eq!(resp["ok"], true, "{resp}");
            fires += 1;
            if resp["refused"] != true {
                let_through += 1;
            }
        }
        (fires, let_through)
    });
    (stop, firing)
}

/// Runs `write` (which rewrites the settings file to guard `name`) while `rm -rf /` is fired in a loop,
/// waits until the guard `name` answers, and checks that no fire was let through meanwhile.
fn no_fire_let_through_while(d: &Daemon, name: &str, write: impl FnOnce()) {
    let (stop, firing) = fire_rm_in_a_loop(d);
    write();
    let deadline = Instant::now() + SHOWS;
    loop {
        let resp = d.fire("PreToolUse", rm_rf_event());
        if hook_names(&resp) == [name] {
            break;
        }
        if Instant::now() >= deadline {
            panic!("after {SHOWS:?} the guard {name:?} is not in force: {resp}");
        }
        std::thread::sleep(POLL);
    }
    stop.store(true, std::sync::atomic::Ordering::Release);
    let (fires, let_through) = firing.join().expect("the firing thread");
    assert!(fires > 0, "no fire was made during the write");
    assert_eq!(
        let_through,
        0,
        "{let_through} of {fires} `rm -rf /` fires were let through while the settings were written; log:\n{}",
        d.log_text()
    );
    eprintln!(
        "figures: {fires} `rm -rf /` fires while the settings were written, {let_through} let through"
    );
}

/// As a program that truncates the file, writes its first part (a valid comment), keeps the file open
/// 300 ms, then writes the rest and closes it.
fn write_with_a_pause(path: &Path, first: &str, rest: &str) {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .expect("opening the settings file for writing");
    file.write_all(first.as_bytes()).expect("writing");
    // The writer's own pause (what is tested), not a wait for the daemon.
    std::thread::sleep(Duration::from_millis(300));
    file.write_all(rest.as_bytes()).expect("writing");
}

/// As a program that writes the file line by line, flushing each, a moment apart: on the way it is valid
/// with no PreToolUse hook twice (comments only, then one Stop hook only).
fn write_line_by_line(path: &Path, guard_name: &str) {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .expect("opening the settings file for writing");
    let text = format!(
        "# the guards\n# nothing gets rm -rf / past them\n[[hooks.Stop]]\nname = \"quiet\"\ncommand = \"true\"\n{}",
        guard(guard_name)
    );
    for line in text.split_inclusive('\n') {
        file.write_all(line.as_bytes()).expect("writing");
        file.flush().expect("flushing");
        // The writer's own pace (what is tested), not a wait for the daemon.
        std::thread::sleep(Duration::from_millis(60));
    }
}

fn start_guarded(poll: bool) -> Daemon {
    let sb = Sandbox::new();
    sb.settings(&guard("guard0"));
    let d = Daemon::start_with(sb, |cmd| {
        if poll {
            cmd.env("HOOKD_WATCH", "poll");
        }
    });
    assert_eq!(hook_names(&d.fire("PreToolUse", rm_rf_event())), ["guard0"]);
    d
}

#[test]
fn a_file_written_with_a_pause_is_taken_only_once_closed() {
    // Regression: the comment written first was loaded as "no hooks" during the pause.
    let d = start_guarded(false);
    for round in 1..=2 {
        let name = format!("guard{round}");
        no_fire_let_through_while(&d, &name, || {
            write_with_a_pause(&d.config, "# the guards\n", &guard(&name))
        });
    }
}

#[test]
fn a_file_written_line_by_line_is_taken_only_once_closed() {
    let d = start_guarded(false);
    no_fire_let_through_while(&d, "guard1", || write_line_by_line(&d.config, "guard1"));
}

#[test]
fn polling_takes_a_file_only_once_it_stays_the_same() {
    let d = start_guarded(true);
    wait_until(SHOWS, "the log to say it polls", || {
        d.log_text().contains("polling")
    });
    // Each round starts just after the poll that took the previous one: the writes start later and later
    // in the 500 ms period, so that polls fall in the 300 ms pause (the writer's own timing, not a wait).
    for (round, start_after_ms) in [(1, 0), (2, 250), (3, 400)] {
        let name = format!("guard{round}");
        no_fire_let_through_while(&d, &name, || {
            std::thread::sleep(Duration::from_millis(start_after_ms));
            write_with_a_pause(&d.config, "# the guards\n", &guard(&name))
        });
    }
    no_fire_let_through_while(&d, "guard4", || write_line_by_line(&d.config, "guard4"));
}

#[test]
fn a_writer_that_keeps_the_file_open_long_is_taken_when_it_closes() {
    let d = start_guarded(false);
    let mut file = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&d.config)
        .expect("opening the settings file for writing");
    file.write_all(b"# the guards\n").unwrap();
    // Still open: nothing is taken, however long the writer takes (a status round trip proves the
    // daemon answered meanwhile; the old guard still answers).
    for _ in 0..20 {
        assert_eq!(hook_names(&d.fire("PreToolUse", rm_rf_event())), ["guard0"]);
        std::thread::sleep(POLL);
    }
    let before = generation(&d);
    file.write_all(guard("guard1").as_bytes()).unwrap();
    fs::set_permissions(&d.config, fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(hook_names(&d.fire("PreToolUse", rm_rf_event())), ["guard0"]);
    drop(file);
    wait_until(SHOWS, "the guard written to show", || {
        hook_names(&d.fire("PreToolUse", rm_rf_event())) == ["guard1"]
    });
    assert_eq!(generation(&d), before + 1);
}

#[test]
fn a_generation_that_drops_hooks_says_which() {
    let d = start_saying("v1");
    rename_over(&d.config, &format!("{}{}", says("v2"), guard("g")));
    wait_adds(&d, &["v2"]);
    rename_over(&d.config, &says("v2"));
    // The log's line for it, at info, names the hook (per moment) that the new generation dropped.
    wait_until(SHOWS, "the log to name the dropped hook", || {
        d.log_text()
            .lines()
            .any(|l| l.contains("INFO") && l.ends_with("dropped=PreToolUse: g"))
    });
}

// ----- Files that block or are huge -----

fn mkfifo(path: &Path) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600))
        .unwrap_or_else(|e| panic!("mkfifo {}: {e}", path.display()));
}

#[test]
fn a_fifo_as_the_settings_file_stops_the_start_at_once() {
    // Regression: opening a FIFO with no writer froze the daemon for good.
    let sb = Sandbox::new();
    mkfifo(&sb.config());
    let mut child = ChildGuard(
        serve_command(&sb, "serve.log")
            .spawn()
            .expect("spawning hookd serve"),
    );
    let mut status = None;
    wait_until(SHOWS, "hookd serve to refuse its settings", || {
        status = child.0.try_wait().expect("try_wait");
        status.is_some()
    });
    let log = sb.read("serve.log");
    assert_eq!(status.unwrap().code(), Some(1), "{log}");
    assert!(
        log.contains(&format!("{}:1:1: refused:", sb.config().display()))
            && log.contains("a FIFO (named pipe), not a regular file"),
        "{log}"
    );
}

#[test]
fn a_fifo_put_in_place_is_refused_and_the_daemon_serves_and_stops() {
    let mut d = start_saying("v1");
    let fifo = d.sb.p("conf/.hooks.toml.fifo");
    mkfifo(&fifo);
    fs::rename(&fifo, &d.config).unwrap();
    let status = wait_status(&d, "last_reload failed", |s| {
        s["last_reload"]["ok"] == false
    });
    assert!(
        status["last_reload"]["error"]
            .as_str()
            .unwrap_or_default()
            .contains("FIFO"),
        "{status}"
    );
    let resp = d.reload();
    assert_eq!(resp["ok"], false, "{resp}");
    assert_eq!(fire_adds(&d), ["v1"]);
    d.signal(Signal::SIGTERM);
    let exit = d.wait_exit(SHOWS);
    assert!(exit.success(), "{exit}");
}

#[test]
fn a_huge_sparse_file_is_refused_at_once() {
    // Regression: a 1 GB sparse file was read whole (14 s, 1 GB of memory) on the only thread.
    let d = start_saying("v1");
    let big = d.sb.p("conf/.big.toml");
    let file = fs::File::create(&big).unwrap();
    file.set_len(1 << 30).unwrap();
    drop(file);
    fs::set_permissions(&big, fs::Permissions::from_mode(0o644)).unwrap();
    fs::rename(&big, &d.config).unwrap();
    let status = wait_status(&d, "last_reload failed", |s| {
        s["last_reload"]["ok"] == false
    });
    assert!(
        status["last_reload"]["error"]
            .as_str()
            .unwrap_or_default()
            .contains("1073741824 bytes, more than the 4 MiB"),
        "{status}"
    );
    assert_eq!(fire_adds(&d), ["v1"]);
}

// ----- Reloads do not hold up fires -----

#[test]
fn a_fire_is_answered_while_a_big_reload_is_read_and_validated() {
    // Regression: the reload was read and validated on the daemon's only thread, and a fire sent after it
    // waited 4.9 s behind a 10,000-hook file. Here a reload of a file near the 4 MiB cap is asked, then a
    // fire on the same connection: the fire's answer comes first (answers are matched by id).
    let d = start_saying("v1");
    let mut text = says("v2");
    let mut i = 0;
    while text.len() < 4_000_000 {
        text.push_str(&format!(
            "[[hooks.PostToolUse]]\nname = \"h{i}\"\nmatcher = \"Bash\"\ncommand = \"/bin/true\"\n"
        ));
        i += 1;
    }
    rename_over(&d.config, &text);
    let mut client = d.connect();
    client.send(&json!({"op": "reload", "id": "rl"}));
    client.send(&json!({"op": "fire", "id": "fire", "moment": "Stop", "agent": "claude-code", "event": {"session_id": "s1"}}));
    let first = client.recv();
    let second = client.recv();
    assert_eq!(
        first["id"], "fire",
        "the fire waited for the reload: {first}"
    );
    assert_eq!(first["ok"], true, "{first}");
    assert_eq!(second["id"], "rl", "{second}");
    assert_eq!(second["ok"], true, "{second}");
    assert_eq!(fire_adds(&d), ["v2"]);
    assert_eq!(
        d.status()["hooks"]["PostToolUse"],
        i,
        "all {i} hooks are in force"
    );
}

#[test]
fn reloads_asked_at_once_make_generations_without_gaps() {
    // Reloads are read on a blocking thread now; they still run one at a time, each its own generation.
    let d = start_saying("v1");
    let before = generation(&d);
    let mut clients: Vec<Client> = (0..8).map(|_| d.connect()).collect();
    for (i, client) in clients.iter_mut().enumerate() {
        client.send(&json!({"op": "reload", "id": i}));
    }
    let mut generations: Vec<u64> = clients
        .iter_mut()
        .map(|client| {
            let resp = client.recv();
            assert_eq!(resp["ok"], true, "{resp}");
            resp["generation"].as_u64().unwrap()
        })
        .collect();
    generations.sort_unstable();
    assert_eq!(
        generations,
        (before + 1..=before + 8).collect::<Vec<_>>(),
        "each reload its own generation, numbered without gaps"
    );
    assert_eq!(generation(&d), before + 8);
}

#[test]
fn an_edit_saved_while_the_daemon_starts_is_picked_up() {
    // The daemon reads its settings, then listens, then watches the file: an edit saved in between was
    // taken for the settings read, and never loaded. An editor saving over and over until the socket
    // answers makes its last edit in that window most times; a few starts, each must end on it.
    for _ in 0..4 {
        let sb = Sandbox::new();
        sb.settings(&says("v0"));
        let (config, socket) = (sb.config(), sb.socket());
        let editor = std::thread::spawn(move || {
            let deadline = Instant::now() + SHOWS;
            let mut n = 0;
            loop {
                n += 1;
                rename_over(&config, &says(&format!("v{n}")));
                if std::os::unix::net::UnixStream::connect(&socket).is_ok()
                    || Instant::now() > deadline
                {
                    return n;
                }
            }
        });
        let d = Daemon::start(sb);
        let last = format!("v{}", editor.join().expect("the editor"));
        wait_adds(&d, &[last.as_str()]);
    }
}

#[test]
fn a_daemon_started_with_no_file_or_an_empty_one_counts_no_refused_edit() {
    // Both are normal starts ("serving with no hooks until it appears"): the watcher's first look must
    // not take them for a refused edit (a reload_refused record, `status` in trouble).
    for text in [None, Some("")] {
        let sb = Sandbox::new();
        if let Some(text) = text {
            sb.settings(text);
        }
        let d = Daemon::start(sb);
        rename_over(&d.config, &says("v1"));
        wait_adds(&d, &["v1"]);
        let journal = state_home_for(&d.socket).join("hookd/journal.jsonl");
        let mut kinds = Vec::new();
        let deadline = Instant::now() + SHOWS;
        while !kinds.iter().any(|kind| kind == "reload") {
            assert!(Instant::now() < deadline, "no reload record in {kinds:?}");
            std::thread::sleep(POLL);
            kinds = fs::read_to_string(&journal)
                .unwrap_or_default()
                .lines()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .filter_map(|record| record["kind"].as_str().map(str::to_owned))
                .collect();
        }
        assert!(
            !kinds.iter().any(|kind| kind == "reload_refused"),
            "{text:?}: {kinds:?}"
        );
        assert_eq!(d.status()["last_reload"]["ok"], true);
    }
}
