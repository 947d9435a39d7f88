//! `hookd setup AGENT --managed` through the real binary: the relay written into each agent's managed
//! (system) settings below a root of the test's own (`--managed-root`, never the real `/etc`), with
//! what keeps it on against the user's own settings; backup, undo and remove as for a user's file; and
//! what it must refuse: links and folders others can write on the way, a file others can write, a
//! fail-open relay where hookd's managed layer wants fail-closed ones, and anyone but root without a
//! root of their own. That each agent runs the relay from there is `e2e_scenarios`' row
//! `a_managed_relay_refuses_and_the_users_own_settings_cannot_take_it_out`.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::{Value, json};

use crate::cli_setup::{hookd_in, succeeded};
use crate::common::*;

const TIMEOUT: Duration = Duration::from_secs(30);

/// Each agent's managed file, below the root, and the settings setup pins there beside the relay.
const PLACES: &[(&str, &str)] = &[
    ("claude-code", "etc/claude-code/managed-settings.json"),
    ("codex", "etc/codex/requirements.toml"),
    ("gemini-cli", "etc/gemini-cli/settings.json"),
    ("qwen-code", "etc/qwen-code/settings.json"),
    ("copilot-cli", "etc/github-copilot/policy.d/hookd.json"),
];

/// `hookd setup AGENT --managed --managed-root ROOT [--socket SOCKET] EXTRA...`.
fn managed_setup(home: &Path, root: &Path, agent: &str, extra: &[&str]) -> Output {
    let socket = home.join("hookd.sock");
    let mut args = vec![
        "setup",
        agent,
        "--managed",
        "--managed-root",
        root.to_str().unwrap(),
    ];
    // The relay's flags are for writing it; --undo and --remove take none.
    if !extra.iter().any(|a| *a == "--undo" || *a == "--remove") {
        args.extend(["--socket", socket.to_str().unwrap()]);
    }
    args.extend_from_slice(extra);
    hookd_in(home, &args, &[])
}

/// The refusal of `out`: exit 1, its stderr.
fn refusal(out: &Output) -> String {
    assert_eq!(
        code(&out.status),
        1,
        "not refused:\n{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stderr)
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// A root for one test: a folder of root's (the test's user's), writable by it alone.
fn new_root() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let home = dir.path().join("home");
    fs::create_dir_all(&home).unwrap();
    fs::create_dir(&root).unwrap();
    fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
    (dir, root, home)
}

/// `hookd relay --print-settings AGENT --socket SOCKET`'s hooks: what the managed file must hold.
fn printed_hooks(home: &Path, agent: &str) -> Value {
    let socket = home.join("hookd.sock");
    let out = hookd_in(
        home,
        &[
            "relay",
            "--print-settings",
            agent,
            "--socket",
            socket.to_str().unwrap(),
        ],
        &[],
    );
    let printed: Value = serde_json::from_str(&succeeded(&out)).unwrap();
    printed["hooks"].clone()
}

/// Each agent's managed file is created below the root, readable by every user and written by root
/// alone, holding the relay's hooks as `--print-settings` prints them and the settings that keep the
/// user's own settings from switching them off; not listed in the user's registry of setups; twice is
/// once; and `--remove` takes away the file it created.
#[test]
fn each_agent_gets_its_managed_file_with_what_keeps_the_relay_on() {
    let (_dir, root, home) = new_root();
    for (agent, place) in PLACES {
        let file = root.join(place);
        let out = managed_setup(&home, &root, agent, &[]);
        let said = succeeded(&out);
        assert!(
            said.contains(&format!("created {}", file.display())),
            "{agent}: {said}"
        );
        assert_eq!(mode(&file), 0o644, "{agent}: read by every user's agent");
        assert_eq!(mode(file.parent().unwrap()), 0o755, "{agent}");
        let text = fs::read_to_string(&file).unwrap();
        if *agent == "codex" {
            let table: toml::Table = text.parse().unwrap();
            assert_eq!(
                table["features"]["hooks"].as_bool(),
                Some(true),
                "Codex's hooks pinned on against a user's [features] hooks = false:\n{text}"
            );
            let hooks = table["hooks"].as_table().unwrap();
            let relay_hooks: Vec<&str> = hooks
                .iter()
                .filter(|(event, _)| *event != "state")
                .flat_map(|(_, groups)| groups.as_array().unwrap())
                .flat_map(|group| group["hooks"].as_array().unwrap())
                .map(|hook| hook["command"].as_str().unwrap())
                .collect();
            assert!(relay_hooks.len() > 5, "{text}");
            assert!(
                relay_hooks
                    .iter()
                    .all(|c| c.contains("--agent codex --socket")),
                "{text}"
            );
            // Named as Codex names the file, not where the test's root put it.
            assert!(
                hooks["state"]
                    .as_table()
                    .unwrap()
                    .keys()
                    .all(|k| k.starts_with("/etc/codex/requirements.toml:")),
                "{text}"
            );
        } else {
            let written: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(written["hooks"], printed_hooks(&home, agent), "{agent}");
            let pinned = match *agent {
                "gemini-cli" => json!({"hooksConfig": {"enabled": true}}),
                "qwen-code" => json!({"disableAllHooks": false}),
                _ => json!({}),
            };
            for (key, value) in pinned.as_object().unwrap() {
                assert_eq!(&written[key], value, "{agent}: {text}");
            }
        }
        let again = succeeded(&managed_setup(&home, &root, agent, &[]));
        assert!(again.contains("already set up"), "{agent}: {again}");
    }
    assert!(
        !home.join(".state/hookd/setup.json").exists(),
        "a managed file is root's, for every user: no one user's registry lists it"
    );
    for (agent, place) in PLACES {
        let file = root.join(place);
        let said = succeeded(&managed_setup(&home, &root, agent, &["--remove"]));
        assert!(said.contains("removed"), "{agent}: {said}");
        assert!(!file.exists(), "{agent}: the file setup created is gone");
    }
}

/// An administrator's managed file keeps everything of theirs; `--undo` right after setup gives it
/// back byte for byte (the pinned settings are setup's, not an edit); once another administrator added
/// to it, `--undo` refuses to lose that, and `--remove` takes out the relay alone, keeping both.
#[test]
fn undo_and_remove_never_lose_an_administrators_entries() {
    let (_dir, root, home) = new_root();
    let file = root.join("etc/gemini-cli/settings.json");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    let admins = "{\n  \"general\": {\"enableAutoUpdate\": false},\n  \"hooks\": {\"BeforeTool\": [{\"matcher\": \"run_shell_command\", \"hooks\": [{\"name\": \"audit\", \"type\": \"command\", \"command\": \"/usr/local/bin/audit\"}]}]}\n}\n";
    fs::write(&file, admins).unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();

    succeeded(&managed_setup(&home, &root, "gemini-cli", &[]));
    let merged: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(merged["general"]["enableAutoUpdate"], false);
    assert_eq!(merged["hooksConfig"]["enabled"], true);
    assert_eq!(
        merged["hooks"]["BeforeTool"][0]["hooks"][0]["name"], "audit",
        "the administrator's hook first, where it was: {merged}"
    );
    assert_eq!(mode(&file), 0o644, "the file's own mode kept");

    succeeded(&managed_setup(&home, &root, "gemini-cli", &["--undo"]));
    assert_eq!(fs::read_to_string(&file).unwrap(), admins);

    succeeded(&managed_setup(&home, &root, "gemini-cli", &[]));
    let mut edited: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    edited["hooks"]["AfterTool"] = json!([{"hooks": [{"name": "other-admin", "type": "command", "command": "/usr/local/bin/log"}]}]);
    fs::write(&file, serde_json::to_string_pretty(&edited).unwrap()).unwrap();
    let said = refusal(&managed_setup(&home, &root, "gemini-cli", &["--undo"]));
    assert!(
        said.contains("was changed since hookd setup wrote it"),
        "{said}"
    );
    assert!(fs::read_to_string(&file).unwrap().contains("other-admin"));

    succeeded(&managed_setup(&home, &root, "gemini-cli", &["--remove"]));
    let left: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        left["hooks"]["AfterTool"][0]["hooks"][0]["name"],
        "other-admin"
    );
    assert_eq!(left["hooks"]["BeforeTool"][0]["hooks"][0]["name"], "audit");
    assert!(
        !left.to_string().contains("hookd-relay"),
        "no relay left: {left}"
    );
}

/// What a managed setup refuses, with nothing written: a folder on the way that is a link or that
/// others can write, a managed file that is a link or that others can write, `--file` beside
/// `--managed`, a relay in a folder others can write, and a relay that is not fail-closed where hookd's managed layer requires fail-closed
/// relays (said, and let through, with `--fail-closed`).
#[test]
fn what_a_managed_setup_refuses() {
    let (dir, root, home) = new_root();

    // The agent's folder a link to a folder the user could own.
    let elsewhere = dir.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    fs::create_dir_all(root.join("etc")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, root.join("etc/claude-code")).unwrap();
    let said = refusal(&managed_setup(&home, &root, "claude-code", &[]));
    assert!(said.contains("is a symbolic link"), "{said}");
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
    fs::remove_file(root.join("etc/claude-code")).unwrap();

    // The managed file a link.
    fs::create_dir_all(root.join("etc/claude-code")).unwrap();
    let target = elsewhere.join("managed.json");
    fs::write(&target, "{}\n").unwrap();
    std::os::unix::fs::symlink(&target, root.join("etc/claude-code/managed-settings.json"))
        .unwrap();
    let said = refusal(&managed_setup(&home, &root, "claude-code", &[]));
    assert!(said.contains("is a symbolic link"), "{said}");
    assert_eq!(fs::read_to_string(&target).unwrap(), "{}\n");
    fs::remove_file(root.join("etc/claude-code/managed-settings.json")).unwrap();

    // The managed file writable by others.
    let file = root.join("etc/claude-code/managed-settings.json");
    fs::write(&file, "{}\n").unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o666)).unwrap();
    let said = refusal(&managed_setup(&home, &root, "claude-code", &[]));
    assert!(said.contains("writable by group or others"), "{said}");
    assert_eq!(fs::read_to_string(&file).unwrap(), "{}\n");
    fs::remove_file(&file).unwrap();

    // A folder on the way writable by others.
    fs::set_permissions(root.join("etc"), fs::Permissions::from_mode(0o777)).unwrap();
    let said = refusal(&managed_setup(&home, &root, "claude-code", &[]));
    assert!(said.contains("is writable by group or others"), "{said}");
    assert!(!file.exists());
    fs::set_permissions(root.join("etc"), fs::Permissions::from_mode(0o755)).unwrap();

    // --file and --managed name two places: clap says so.
    let out = hookd_in(
        &home,
        &["setup", "claude-code", "--managed", "--file", "/tmp/x.json"],
        &[],
    );
    let said = refusal(&out);
    assert!(
        said.contains("'--managed' cannot be used with '--file"),
        "{said}"
    );

    // A hookd in a folder others can write: the relay it writes could be replaced by any of them.
    let loose = dir.path().join("loose-bin");
    fs::create_dir(&loose).unwrap();
    fs::copy(BIN, loose.join("hookd")).unwrap();
    fs::set_permissions(&loose, fs::Permissions::from_mode(0o777)).unwrap();
    let mut cmd = Command::new(loose.join("hookd"));
    cmd.args([
        "setup",
        "claude-code",
        "--managed",
        "--managed-root",
        root.to_str().unwrap(),
    ])
    .env("HOME", &home)
    .env("XDG_STATE_HOME", home.join(".state"));
    let said = refusal(&run_with_deadline(cmd, None, TIMEOUT));
    assert!(
        said.contains("loose-bin, a folder on the way to")
            && said.contains("a managed relay must be beyond every user's reach"),
        "{said}"
    );
    assert!(!file.exists());

    // hookd's managed layer requires fail-closed relays: read only where the layer is root's.
    if !require_root("hookd's managed layer is read only when it is root's") {
        return;
    }
    fs::create_dir_all(root.join("etc/hookd/managed.d")).unwrap();
    fs::write(
        root.join("etc/hookd/managed.d/50-relays.toml"),
        "require_fail_closed = true\n",
    )
    .unwrap();
    let said = refusal(&managed_setup(&home, &root, "claude-code", &[]));
    assert!(
        said.contains("requires fail-closed relays (require_fail_closed in")
            && said.contains("50-relays.toml")
            && said.contains("--fail-closed"),
        "{said}"
    );
    assert!(!file.exists());
    let out = managed_setup(&home, &root, "claude-code", &["--fail-closed"]);
    succeeded(&out);
    assert!(
        text(&out.stderr).contains("requires fail-closed relays"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        fs::read_to_string(&file).unwrap().contains("--fail-closed"),
        "the relay written fails closed"
    );
}

/// Setup reads hookd's managed layer as the daemon does (its own reader): a file the layer leaves out
/// (a hidden drop-in) requires nothing, a file it reads does; and a layer that does not load is said,
/// setup going on, since it cannot tell.
#[test]
fn setup_reads_require_fail_closed_as_the_daemons_layer_does() {
    if !require_root("the managed layer's files must be root's") {
        return;
    }
    let (_dir, root, home) = new_root();
    let drop_ins = root.join("etc/hookd/managed.d");
    fs::create_dir_all(&drop_ins).unwrap();
    // Left out by the layer (a hidden file, an editor's): the daemon does not require fail-closed.
    fs::write(
        drop_ins.join(".50-relays.toml"),
        "require_fail_closed = true\n",
    )
    .unwrap();
    let out = managed_setup(&home, &root, "codex", &["--dry-run"]);
    succeeded(&out);
    assert!(
        !text(&out.stderr).contains("require_fail_closed"),
        "{}",
        text(&out.stderr)
    );
    // The layer does not load (an unknown key in one of its files): said, and setup goes on.
    fs::write(drop_ins.join("10-typo.toml"), "require_fail_closd = true\n").unwrap();
    let out = managed_setup(&home, &root, "codex", &["--dry-run"]);
    succeeded(&out);
    let said = text(&out.stderr);
    assert!(
        said.contains("managed layer cannot be read")
            && said.contains("10-typo.toml")
            && said.contains("--fail-closed"),
        "{said}"
    );
    // Mended, and requiring it: refused without --fail-closed, naming the file.
    fs::write(
        drop_ins.join("10-typo.toml"),
        "require_fail_closed = true\n",
    )
    .unwrap();
    let said = refusal(&managed_setup(&home, &root, "codex", &["--dry-run"]));
    assert!(said.contains("10-typo.toml"), "{said}");
}

/// Anyone but root, without a root of their own, is refused, with how to go on; nothing is written.
#[test]
fn a_managed_setup_needs_root() {
    let setpriv = Path::new("/usr/bin/setpriv");
    if !require(
        nix::unistd::geteuid().is_root() && setpriv.exists(),
        "runs setup as another user: needs root and setpriv",
    ) {
        return;
    }
    let existed = Path::new("/etc/claude-code").exists();
    let mut cmd = Command::new(setpriv);
    cmd.args([
        "--reuid",
        "65534",
        "--regid",
        "65534",
        "--clear-groups",
        BIN,
        "setup",
        "claude-code",
        "--managed",
    ])
    .env("HOME", "/nonexistent");
    let out = run_with_deadline(cmd, None, TIMEOUT);
    let said = refusal(&out);
    assert!(
        said.contains("which root alone may write") && said.contains("--managed-root DIR"),
        "{said}"
    );
    assert_eq!(Path::new("/etc/claude-code").exists(), existed);
}
