//! `hookd setup AGENT` through the real binary, in a temp HOME with the agents' own variables
//! (CLAUDE_CONFIG_DIR, CODEX_HOME, GEMINI_CLI_HOME, QWEN_HOME, COPILOT_HOME): the file each agent reads,
//! merged with what the user has there, holding exactly the hooks `hookd relay --print-settings` prints
//! (what the real-agent suites put in those same files and see the agents run); twice is once; the
//! backup, `--dry-run`, `--undo`; and the files it must refuse.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use hookd::agents::Agent;
use serde_json::Value;

use crate::common::*;

const TIMEOUT: Duration = Duration::from_secs(30);

/// The agents' variables, none of the machine's own: every test names where its files are.
const AGENT_VARS: &[&str] = &[
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "QWEN_HOME",
    "COPILOT_HOME",
    "XDG_CONFIG_HOME",
    "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
    "QWEN_CODE_SYSTEM_SETTINGS_PATH",
];

/// `hookd ARGS` with HOME `home` and the variables `envs`, no other agent variable; hookd's state (the
/// registry of setups) and runtime folder (the socket setup asks to reload) in `home` too, never the
/// user's.
pub(crate) fn hookd_in(home: &Path, args: &[&str], envs: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join(".state"))
        .env("XDG_RUNTIME_DIR", home.join(".run"));
    for var in AGENT_VARS {
        cmd.env_remove(var);
    }
    for (name, value) in envs {
        cmd.env(name, value);
    }
    run_with_deadline(cmd, None, TIMEOUT)
}

/// As [`hookd_in`], which must succeed; its stdout.
fn ok(home: &Path, args: &[&str], envs: &[(&str, &Path)]) -> String {
    succeeded(&hookd_in(home, args, envs))
}

/// The stdout of `out`, which must have succeeded.
pub(crate) fn succeeded(out: &Output) -> String {
    assert_eq!(
        code(&out.status),
        0,
        "hookd failed:\n{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// As [`hookd_in`], which must fail with one line on stderr; that line.
fn refused(home: &Path, args: &[&str], envs: &[(&str, &Path)]) -> String {
    let out = hookd_in(home, args, envs);
    let stderr = text(&out.stderr);
    assert_eq!(
        code(&out.status),
        1,
        "hookd {args:?} did not fail: {stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    stderr
}

/// `stderr` without the warning every setup of the tests' hookd gives (it is a build's, in
/// `target/debug`), which `a_relay_in_a_build_folder_is_warned_of_with_how_to_install` tests.
fn without_build_folder_warning(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|line| !line.contains("is in a cargo build folder"))
        .map(|line| format!("{line}\n"))
        .collect()
}

fn json(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn backup(file: &Path) -> PathBuf {
    PathBuf::from(format!("{}.hookd-backup", file.display()))
}

/// The relay command as written for `agent`: the relay's own program, built beside this binary.
fn relay(agent: &str) -> String {
    format!("{RELAY_BIN} --agent {agent}")
}

#[test]
fn claude_code_keeps_the_users_settings_and_hooks_and_twice_is_once() {
    let sb = Sandbox::new();
    let config = sb.p("claude");
    fs::create_dir(&config).unwrap();
    let file = config.join("settings.json");
    let original = r#"{
  "permissions": {"allow": ["Bash"]},
  "model": "opus",
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "grep -q 'hookd relay' notes.txt || ./guard.sh"}]}]
  },
  "env": {"A": "1"}
}
"#;
    fs::write(&file, original).unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).unwrap();
    let env = [("CLAUDE_CONFIG_DIR", config.as_path())];
    let said = ok(sb.path(), &["setup", "claude-code"], &env);
    assert!(
        said.starts_with(&format!(
            "wrote {}: hookd relay on {} events of Claude Code\n",
            file.display(),
            Agent::ClaudeCode.moments().len()
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!("backup: {}", backup(&file).display())),
        "{said}"
    );
    assert_eq!(fs::read_to_string(backup(&file)).unwrap(), original);
    assert_eq!(
        fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o640,
        "the file's mode is kept"
    );

    let written = fs::read_to_string(&file).unwrap();
    let keys: Vec<&str> = written
        .lines()
        .filter(|l| l.starts_with("  \""))
        .map(|l| l.trim().split('"').nth(1).unwrap())
        .collect();
    assert_eq!(keys, ["permissions", "model", "hooks", "env"], "{written}");
    let settings = json(&file);
    assert_eq!(settings["permissions"]["allow"][0], "Bash");
    let pre = settings["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2, "{written}");
    assert!(
        pre[0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .contains("./guard.sh")
    );
    // Every event but the user's holds what --print-settings prints, exactly.
    let printed: Value = serde_json::from_str(&ok(
        sb.path(),
        &["relay", "--print-settings", "claude-code"],
        &env,
    ))
    .unwrap();
    for (event, groups) in printed["hooks"].as_object().unwrap() {
        let mine = &settings["hooks"][event];
        if event == "PreToolUse" {
            assert_eq!(mine[1], groups[0]);
        } else {
            assert_eq!(mine, groups, "{event}");
        }
    }
    assert_eq!(
        settings["hooks"].as_object().unwrap().len(),
        printed["hooks"].as_object().unwrap().len()
    );

    let again = ok(sb.path(), &["setup", "claude-code"], &env);
    assert_eq!(
        again,
        format!(
            "{}: already set up for Claude Code (nothing changed)\n",
            file.display()
        )
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), written, "byte for byte");

    let undone = ok(sb.path(), &["setup", "claude-code", "--undo"], &env);
    assert!(
        undone.starts_with(&format!("restored {}", file.display())),
        "{undone}"
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), original);
    assert!(!backup(&file).exists());
    let twice = refused(sb.path(), &["setup", "claude-code", "--undo"], &env);
    assert!(twice.contains("no backup to restore"), "{twice}");
    assert_eq!(fs::read_to_string(&file).unwrap(), original);
}

/// Each agent's file where the agent reads it: under HOME, and under its own variable when set; and
/// the hooks in it those `--print-settings` prints for it.
#[test]
fn each_agent_gets_the_file_it_reads() {
    let sb = Sandbox::new();
    let home = sb.p("home");
    fs::create_dir(&home).unwrap();
    let cases: [(&str, &str, Option<&str>, &str); 5] = [
        (
            "claude-code",
            ".claude/settings.json",
            Some("CLAUDE_CONFIG_DIR"),
            "settings.json",
        ),
        (
            "codex",
            ".codex/config.toml",
            Some("CODEX_HOME"),
            "config.toml",
        ),
        (
            "gemini-cli",
            ".gemini/settings.json",
            Some("GEMINI_CLI_HOME"),
            ".gemini/settings.json",
        ),
        (
            "qwen-code",
            ".qwen/settings.json",
            Some("QWEN_HOME"),
            "settings.json",
        ),
        (
            "copilot-cli",
            ".copilot/settings.json",
            Some("COPILOT_HOME"),
            "settings.json",
        ),
    ];
    for (agent, under_home, var, under_var) in cases {
        let said = ok(&home, &["setup", agent], &[]);
        let file = home.join(under_home);
        assert!(
            said.starts_with(&format!("created {}:", file.display())),
            "{agent}: {said}"
        );
        assert_eq!(fs::read_to_string(backup(&file)).unwrap(), "", "{agent}");
        let var_dir = sb.p(&format!("{agent}-home"));
        fs::create_dir(&var_dir).unwrap();
        let env = [(var.unwrap(), var_dir.as_path())];
        ok(&home, &["setup", agent], &env);
        let file = var_dir.join(under_var);
        let printed = ok(&home, &["relay", "--print-settings", agent], &env);
        if agent == "codex" {
            let written: toml::Table = fs::read_to_string(&file).unwrap().parse().unwrap();
            let printed: toml::Table = printed.parse().unwrap();
            assert_eq!(written, printed, "{agent}");
        } else {
            let printed: Value = serde_json::from_str(&printed).unwrap();
            assert_eq!(json(&file)["hooks"], printed["hooks"], "{agent}");
        }
    }
    // A hooks file of Copilot's own (`.github/hooks/`) says its version, as the printed one does.
    let project = sb.p("project/.github/hooks/hookd.json");
    fs::create_dir_all(project.parent().unwrap()).unwrap();
    ok(
        &home,
        &["setup", "copilot-cli", "--file", project.to_str().unwrap()],
        &[],
    );
    let printed: Value = serde_json::from_str(&ok(
        &home,
        &["relay", "--print-settings", "copilot-cli"],
        &[],
    ))
    .unwrap();
    assert_eq!(json(&project), printed);
}

/// Codex's trust records name each hook's final place: after a user's own hook the group index is 1,
/// and the hash and key are those `--print-settings codex` writes (checked against the real Codex).
#[test]
fn codex_trusts_the_hooks_where_they_land_and_keeps_the_users_toml() {
    let sb = Sandbox::new();
    let real = sb.p("codex-real");
    fs::create_dir(&real).unwrap();
    // A symlinked CODEX_HOME: Codex names the file by its real folder.
    let codex_home = sb.p("codex-home");
    std::os::unix::fs::symlink(&real, &codex_home).unwrap();
    let original = "# my settings\nmodel = \"gpt-5.1-codex\"   # the fast one\napproval_policy = \"never\"\n\n[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"./guard.sh\"\n\n[hooks.state.\"@FILE@:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:users-own\"\n\n[model_providers.local]\nname = \"local\"   # keep\nbase_url = \"http://127.0.0.1:1/v1\"\n";
    let real_file = real.canonicalize().unwrap().join("config.toml");
    let original = original.replace("@FILE@", real_file.to_str().unwrap());
    fs::write(real.join("config.toml"), &original).unwrap();
    let env = [("CODEX_HOME", codex_home.as_path())];
    let said = ok(sb.path(), &["setup", "codex"], &env);
    assert!(said.contains("with a trust record each"), "{said}");
    let written = fs::read_to_string(real.join("config.toml")).unwrap();
    assert!(
        written.starts_with("# my settings\nmodel = \"gpt-5.1-codex\"   # the fast one\napproval_policy = \"never\"\n\n[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n"),
        "{written}"
    );
    assert!(written.contains("name = \"local\"   # keep\n"), "{written}");

    let printed: toml::Table = ok(sb.path(), &["relay", "--print-settings", "codex"], &env)
        .parse()
        .unwrap();
    let written_toml: toml::Table = written.parse().unwrap();
    let state = written_toml["hooks"]["state"].as_table().unwrap();
    let printed_state = printed["hooks"]["state"].as_table().unwrap();
    let prefix = format!("{}:", real_file.display());
    assert_eq!(
        state[&format!("{prefix}pre_tool_use:0:0")]["trusted_hash"].as_str(),
        Some("sha256:users-own")
    );
    for (key, record) in printed_state {
        assert!(key.starts_with(&prefix), "{key}");
        let ours = if key.ends_with(":pre_tool_use:0:0") {
            key.replace(":pre_tool_use:0:0", ":pre_tool_use:1:0")
        } else {
            key.clone()
        };
        assert_eq!(state.get(&ours), Some(record), "{ours}:\n{written}");
    }
    assert_eq!(state.len(), printed_state.len() + 1);
    let pre = written_toml["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre[0]["hooks"][0]["command"].as_str(), Some("./guard.sh"));
    assert_eq!(pre[1], printed["hooks"]["PreToolUse"][0]);

    // Twice is once; and a file the printed snippet was pasted into (as the real-agent suites do) is
    // taken over in place, to the same hooks and records.
    assert!(ok(sb.path(), &["setup", "codex"], &env).contains("already set up"));
    assert_eq!(
        fs::read_to_string(real.join("config.toml")).unwrap(),
        written
    );
    let other = sb.p("other-home");
    fs::create_dir(&other).unwrap();
    let env = [("CODEX_HOME", other.as_path())];
    let pasted = format!(
        "model = \"o3\"\n\n{}",
        ok(
            sb.path(),
            &[
                "relay",
                "--print-settings",
                "codex",
                "--socket",
                "/run/old.sock"
            ],
            &env
        )
    );
    fs::write(other.join("config.toml"), &pasted).unwrap();
    ok(sb.path(), &["setup", "codex"], &env);
    let taken: toml::Table = fs::read_to_string(other.join("config.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let printed: toml::Table = ok(sb.path(), &["relay", "--print-settings", "codex"], &env)
        .parse()
        .unwrap();
    assert_eq!(taken["hooks"], printed["hooks"]);
    assert_eq!(taken["model"].as_str(), Some("o3"));
}

#[test]
fn dry_run_prints_the_diff_and_writes_nothing() {
    let sb = Sandbox::new();
    let gemini = sb.p(".gemini");
    fs::create_dir(&gemini).unwrap();
    let file = gemini.join("settings.json");
    let original = "{\n  \"security\": {\n    \"auth\": {\n      \"selectedType\": \"gemini-api-key\"\n    }\n  }\n}\n";
    fs::write(&file, original).unwrap();
    let out = hookd_in(sb.path(), &["setup", "gemini-cli", "--dry-run"], &[]);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    let diff = text(&out.stdout);
    let shown = file.display();
    assert!(
        diff.starts_with(&format!("--- {shown}\n+++ {shown}\n@@ -3,5 +3,")),
        "{diff}"
    );
    assert!(
        diff.contains("\n+  \"hooks\": {\n+    \"SessionStart\": [\n"),
        "{diff}"
    );
    assert!(diff.contains("\"name\": \"hookd\""), "{diff}");
    assert_eq!(
        without_build_folder_warning(&text(&out.stderr)),
        "dry run: nothing written\n"
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), original);
    assert!(!backup(&file).exists());
    // The diff is the change: applied, the file is what setup writes.
    ok(sb.path(), &["setup", "gemini-cli"], &[]);
    let written = fs::read_to_string(&file).unwrap();
    let added: Vec<&str> = diff
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .map(|l| &l[1..])
        .collect();
    for line in added {
        assert!(written.contains(line), "{line}");
    }
    let again = ok(sb.path(), &["setup", "gemini-cli", "--dry-run"], &[]);
    assert!(again.contains("already set up for Gemini CLI"), "{again}");
    // --undo --dry-run shows the way back, and does not take it.
    let back = ok(
        sb.path(),
        &["setup", "gemini-cli", "--undo", "--dry-run"],
        &[],
    );
    assert!(back.contains("-  \"hooks\": {\n"), "{back}");
    assert_eq!(fs::read_to_string(&file).unwrap(), written);
    assert!(backup(&file).exists());
}

#[test]
fn undo_does_not_lose_what_the_user_wrote_since() {
    let sb = Sandbox::new();
    let file = sb.p(".qwen/settings.json");
    // No file at all before: the backup says so (empty), and undo removes the file.
    ok(sb.path(), &["setup", "qwen-code"], &[]);
    assert_eq!(
        fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let set_up = fs::read_to_string(&file).unwrap();
    let edited = set_up.replacen("{\n", "{\n  \"model\": {\"name\": \"mine\"},\n", 1);
    fs::write(&file, &edited).unwrap();
    let err = refused(sb.path(), &["setup", "qwen-code", "--undo"], &[]);
    assert!(
        err.contains("was changed since hookd setup wrote it"),
        "{err}"
    );
    assert!(err.contains("--force"), "{err}");
    assert_eq!(fs::read_to_string(&file).unwrap(), edited);

    // A setup now backs up the file as the user left it (the older backup no longer is their file),
    // without the hookd hooks it held: --undo must not put them back.
    let said = ok(sb.path(), &["setup", "qwen-code", "--fail-closed"], &[]);
    assert!(!said.contains("kept from the first setup"), "{said}");
    assert!(
        said.contains("with the hookd hooks it held taken out"),
        "{said}"
    );
    let user_only = serde_json::json!({"model": {"name": "mine"}, "hooks": {}});
    assert_eq!(json(&backup(&file)), user_only);
    let with_flag = fs::read_to_string(&file).unwrap();
    assert!(with_flag.contains("--fail-closed") && with_flag.contains("\"name\": \"mine\""));
    // Once more with other flags: nothing new of the user's, so that backup is kept.
    let said = ok(sb.path(), &["setup", "qwen-code"], &[]);
    assert!(said.contains("kept from the first setup"), "{said}");
    ok(sb.path(), &["setup", "qwen-code", "--undo"], &[]);
    assert_eq!(json(&file), user_only);

    // --force restores a backup over later edits; an empty backup removes the file setup created.
    let fresh = sb.p("fresh/settings.json");
    let fresh_arg = fresh.to_str().unwrap();
    ok(sb.path(), &["setup", "qwen-code", "--file", fresh_arg], &[]);
    fs::write(&fresh, "{\"mine\": true}\n").unwrap();
    refused(
        sb.path(),
        &["setup", "qwen-code", "--file", fresh_arg, "--undo"],
        &[],
    );
    let said = ok(
        sb.path(),
        &[
            "setup",
            "qwen-code",
            "--file",
            fresh_arg,
            "--undo",
            "--force",
        ],
        &[],
    );
    assert!(said.starts_with(&format!("removed {fresh_arg}")), "{said}");
    assert!(!fresh.exists() && !backup(&fresh).exists());
}

#[test]
fn files_it_cannot_edit_safely_are_refused_and_left_alone() {
    let sb = Sandbox::new();
    let dir = sb.p(".claude");
    fs::create_dir(&dir).unwrap();
    let file = dir.join("settings.json");
    for (content, said) in [
        (
            "{\n  \"hooks\": {\n    \"Stop\": [\n}\n",
            ":4:1: not JSON: ",
        ),
        (
            "{\n  // my comment\n  \"model\": \"opus\"\n}\n",
            "a comment",
        ),
        (
            "{\"hooks\": [\"Stop\"]}",
            "\"hooks\" is a list, not an object of events",
        ),
        (
            "{\"hooks\": {\"Stop\": {\"command\": \"x\"}}}",
            "\"hooks\".\"Stop\" is an object, not a list of hook groups",
        ),
        ("[]", "not a JSON object"),
    ] {
        fs::write(&file, content).unwrap();
        let err = refused(sb.path(), &["setup", "claude-code"], &[]);
        assert!(err.contains(said), "{content}: {err}");
        assert!(err.contains(&file.display().to_string()), "{err}");
        assert_eq!(fs::read_to_string(&file).unwrap(), content);
        assert!(!backup(&file).exists());
    }
    // A symbolic link: neither it nor its target is replaced.
    let target = sb.p("elsewhere.json");
    fs::write(&target, "{}").unwrap();
    fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&target, &file).unwrap();
    let err = refused(sb.path(), &["setup", "claude-code"], &[]);
    assert!(err.contains("is a symbolic link"), "{err}");
    assert_eq!(fs::read_to_string(&target).unwrap(), "{}");
    assert!(
        fs::symlink_metadata(&file)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A huge file.
    fs::remove_file(&file).unwrap();
    fs::write(&file, format!("{{\"x\": \"{}\"}}", "a".repeat(17 << 20))).unwrap();
    let err = refused(sb.path(), &["setup", "claude-code"], &[]);
    assert!(err.contains("bytes, more than the"), "{err}");
    // Codex: TOML that is not, and hooks written inline.
    let codex = sb.p(".codex");
    fs::create_dir(&codex).unwrap();
    for (content, said) in [
        (
            "model = \"o3\n",
            "config.toml:1:12: not TOML: invalid basic string",
        ),
        (
            "[hooks]\nStop = [{hooks = [{type = \"command\", command = \"x\"}]}]\n",
            "inline array",
        ),
    ] {
        fs::write(codex.join("config.toml"), content).unwrap();
        let err = refused(sb.path(), &["setup", "codex"], &[]);
        assert!(err.contains(said), "{content}: {err}");
        assert_eq!(
            fs::read_to_string(codex.join("config.toml")).unwrap(),
            content
        );
    }
}

#[test]
fn a_large_file_of_the_users_own_hooks_is_merged_once() {
    let sb = Sandbox::new();
    let dir = sb.p(".claude");
    fs::create_dir(&dir).unwrap();
    let file = dir.join("settings.json");
    let groups: Vec<String> = (0..5000)
        .map(|i| format!("{{\"matcher\": \"Tool{i}\", \"hooks\": [{{\"type\": \"command\", \"command\": \"./hook{i}.sh\"}}]}}"))
        .collect();
    fs::write(
        &file,
        format!(
            "{{\"hooks\": {{\"PreToolUse\": [{}]}}}}\n",
            groups.join(",\n")
        ),
    )
    .unwrap();
    ok(sb.path(), &["setup", "claude-code"], &[]);
    let written = fs::read_to_string(&file).unwrap();
    let settings = json(&file);
    let pre = settings["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 5001);
    assert_eq!(pre[4999]["hooks"][0]["command"], "./hook4999.sh");
    assert_eq!(
        pre[5000]["hooks"][0]["command"].as_str(),
        Some(relay("claude-code").as_str())
    );
    assert!(ok(sb.path(), &["setup", "claude-code"], &[]).contains("already set up"));
    assert_eq!(fs::read_to_string(&file).unwrap(), written);
}

/// A file of another user, and a folder setup cannot write in: refused, nothing left behind.
#[test]
fn another_users_file_and_a_read_only_folder() {
    if !require_root("a settings file owned by another user, and hookd run as nobody") {
        return;
    }
    let sb = Sandbox::new();
    fs::set_permissions(sb.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let dir = sb.p(".claude");
    fs::create_dir(&dir).unwrap();
    let file = dir.join("settings.json");
    fs::write(&file, "{}").unwrap();
    nix::unistd::chown(&file, Some(nix::unistd::Uid::from_raw(NOBODY)), None).unwrap();
    let err = refused(sb.path(), &["setup", "claude-code"], &[]);
    assert!(
        err.contains(&format!("belongs to uid {NOBODY}, not to you")),
        "{err}"
    );

    // nobody's own file in nobody's own folder, which is read-only.
    let nobody_home = sb.p("nobody");
    let dir = nobody_home.join(".claude");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("settings.json"), "{}\n").unwrap();
    for path in [&nobody_home, &dir, &dir.join("settings.json")] {
        nix::unistd::chown(
            path.as_path(),
            Some(nix::unistd::Uid::from_raw(NOBODY)),
            Some(nix::unistd::Gid::from_raw(NOBODY)),
        )
        .unwrap();
    }
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).unwrap();
    let mut cmd = as_nobody(BIN);
    cmd.args(["setup", "claude-code"]).env("HOME", &nobody_home);
    for var in AGENT_VARS {
        cmd.env_remove(var);
    }
    let out = run_with_deadline(cmd, None, TIMEOUT);
    let stderr = text(&out.stderr);
    assert_eq!(code(&out.status), 1, "{stderr}");
    assert!(
        stderr.contains("cannot write") && stderr.contains("Permission denied"),
        "{stderr}"
    );
    assert_eq!(
        fs::read_to_string(dir.join("settings.json")).unwrap(),
        "{}\n"
    );
    assert_eq!(
        fs::read_dir(&dir).unwrap().count(),
        1,
        "nothing left behind"
    );
}

/// `--print-settings AGENT --http` for an agent without http hooks says so first: before it looks for
/// a settings file or a port that do not matter.
#[test]
fn print_settings_http_says_first_which_agents_have_no_http_hooks() {
    let sb = Sandbox::new();
    for agent in Agent::ALL
        .into_iter()
        .filter(|a| !a.row().settings.http_hooks)
    {
        let err = refused(
            sb.path(),
            &[
                "relay",
                "--print-settings",
                agent.name(),
                "--http",
                "--config",
                sb.p("missing.toml").to_str().unwrap(),
            ],
            &[],
        );
        assert_eq!(
            err,
            format!(
                "hookd: {} has no http hooks: --http is for claude-code only; hookd relay --print-settings {} prints {}'s command hooks\n",
                agent.display_name(),
                agent.name(),
                agent.display_name()
            )
        );
    }
    // Claude Code has them: what it is missing then is the listener's port.
    let err = refused(
        sb.path(),
        &[
            "relay",
            "--print-settings",
            "claude-code",
            "--http",
            "--config",
            sb.p("missing.toml").to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        err.contains("no such settings file, to read [http] listen from"),
        "{err}"
    );
}

/// Hooks the agent's own settings switch off are written all the same, and said on stderr.
#[test]
fn hooks_switched_off_in_the_agent_are_warned_of() {
    let sb = Sandbox::new();
    let dir = sb.p(".claude");
    fs::create_dir(&dir).unwrap();
    let file = dir.join("settings.json");
    fs::write(&file, "{\"disableAllHooks\": true}\n").unwrap();
    let out = hookd_in(sb.path(), &["setup", "claude-code"], &[]);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    // The hint at the lite relay, which is not installed beside the tests' hookd, is tested on its own
    // (relay_lite.rs).
    let stderr = text(&out.stderr);
    let warnings: String = stderr
        .lines()
        .filter(|line| {
            !line.starts_with("hint: ")
                && !line.starts_with("warning: no hookd answers")
                && !line.contains("is in a cargo build folder")
        })
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(
        warnings,
        format!(
            "warning: {}: the file sets \"disableAllHooks\": true: Claude Code runs none of its hooks, hookd's included, until that is taken out\n",
            file.display()
        )
    );
    assert!(json(&file)["hooks"]["PreToolUse"].is_array());
    assert_eq!(json(&file)["disableAllHooks"], true);
}

/// Setup lists what it wrote in the registry of setups (`$XDG_STATE_HOME/hookd/setup.json`: the file,
/// the relay as written, fail-closed, the digest of the hooks) and asks the daemon on the relay's socket
/// to reload, so that its guard covers the file at once; with no daemon it says so. `--undo` takes the
/// entry out.
#[test]
fn setup_registers_the_file_and_asks_the_daemon_to_reload() {
    let d = Daemon::with_scripts(&[], "# no hooks\n");
    let home = d.sb.p("home");
    fs::create_dir(&home).unwrap();
    let file = home.join(".qwen/settings.json");
    let socket = d.socket.to_str().unwrap();
    let generation = d.status()["generation"].as_u64().unwrap();
    let out = hookd_in(
        &home,
        &["setup", "qwen-code", "--socket", socket, "--fail-closed"],
        &[],
    );
    let stderr = text(&out.stderr);
    assert_eq!(code(&out.status), 0, "{stderr}");
    // The tests' hookd is a build's: that warning is tested on its own.
    assert!(
        !without_build_folder_warning(&stderr).contains("warning"),
        "{stderr}"
    );
    assert_eq!(
        d.status()["generation"].as_u64().unwrap(),
        generation + 1,
        "the daemon was not asked to reload"
    );
    let registry = json(&home.join(".state/hookd/setup.json"));
    assert_eq!(registry["version"], 1, "{registry}");
    let entry = &registry["setups"][0];
    assert_eq!(entry["agent"], "qwen-code");
    assert_eq!(entry["file"], file.to_str().unwrap());
    assert_eq!(
        entry["relay"],
        format!("{} --socket {socket} --fail-closed", relay("qwen-code"))
    );
    assert_eq!(entry["fail_closed"], true);
    assert!(
        entry["hooks_sha256"]
            .as_str()
            .unwrap()
            .starts_with("sha256:"),
        "{entry}"
    );
    assert!(entry["at"].as_str().unwrap().ends_with('Z'), "{entry}");

    // A second agent's file joins it; no daemon on the default socket is said.
    let out = hookd_in(&home, &["setup", "gemini-cli"], &[]);
    assert_eq!(code(&out.status), 0);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "warning: no hookd answers on {}: until one does, Gemini CLI's relay lets every call through, unguarded",
            home.join(".run/hookd/hookd.sock").display()
        )),
        "{stderr}"
    );
    let registry = json(&home.join(".state/hookd/setup.json"));
    assert_eq!(
        registry["setups"].as_array().unwrap().len(),
        2,
        "{registry}"
    );

    ok(&home, &["setup", "qwen-code", "--undo"], &[]);
    let registry = json(&home.join(".state/hookd/setup.json"));
    let agents: Vec<&str> = registry["setups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["agent"].as_str().unwrap())
        .collect();
    assert_eq!(agents, ["gemini-cli"], "{registry}");
}

/// `--remove` is the way out of a setup once the file was edited again: the undo it refuses says so,
/// `--undo --dry-run` shows the diff instead of repeating the refusal, `--remove --dry-run` shows what
/// `--remove` does and writes nothing, and `--remove` takes out exactly what setup wrote (for Codex, its
/// trust records too), keeping the edits made since, the backup and the registry's entry gone.
#[test]
fn remove_takes_out_what_setup_wrote_and_keeps_the_edits_made_since() {
    let sb = Sandbox::new();
    let file = sb.p(".claude/settings.json");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(&file, "{\n  \"model\": \"opus\"\n}\n").unwrap();
    ok(sb.path(), &["setup", "claude-code"], &[]);
    let edited = fs::read_to_string(&file)
        .unwrap()
        .replace("\"opus\"", "\"sonnet\"")
        .replacen("{\n", "{\n  \"env\": {\n    \"A\": \"1\"\n  },\n", 1);
    fs::write(&file, &edited).unwrap();

    let err = refused(sb.path(), &["setup", "claude-code", "--undo"], &[]);
    assert!(
        err.contains("hookd setup claude-code --remove takes out only what setup wrote"),
        "{err}"
    );
    let out = hookd_in(
        sb.path(),
        &["setup", "claude-code", "--undo", "--dry-run"],
        &[],
    );
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("-  \"model\": \"sonnet\","),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains("--undo would refuse") && text(&out.stderr).contains("--remove"),
        "{}",
        text(&out.stderr)
    );

    let diff = ok(
        sb.path(),
        &["setup", "claude-code", "--remove", "--dry-run"],
        &[],
    );
    assert!(
        diff.contains(&format!(
            "-            \"command\": \"{}\",",
            relay("claude-code")
        )),
        "{diff}"
    );
    // The user's keys stay (the last one loses its comma, as hookd's hooks after it go).
    assert!(
        !diff.contains("-  \"env\"") && !diff.contains("-    \"A\""),
        "{diff}"
    );
    assert!(diff.contains("+  \"model\": \"sonnet\"\n"), "{diff}");
    assert_eq!(fs::read_to_string(&file).unwrap(), edited);

    let said = ok(sb.path(), &["setup", "claude-code", "--remove"], &[]);
    assert!(
        said.starts_with("removed hookd's relay hooks from"),
        "{said}"
    );
    assert_eq!(
        json(&file),
        serde_json::json!({"env": {"A": "1"}, "model": "sonnet"})
    );
    assert!(!backup(&file).exists());
    let registry = json(&sb.p(".state/hookd/setup.json"));
    assert_eq!(registry["setups"], serde_json::json!([]), "{registry}");
    let again = ok(sb.path(), &["setup", "claude-code", "--remove"], &[]);
    assert!(again.contains("no hooks of hookd's to remove"), "{again}");

    // Codex: the trust records go with the hooks; a hook the user added since stays, with its record
    // carried to the place it moves up to.
    let codex = sb.p(".codex/config.toml");
    fs::create_dir_all(codex.parent().unwrap()).unwrap();
    fs::write(&codex, "model = \"o3\" # mine\n").unwrap();
    let env = [("CODEX_HOME", sb.p(".codex"))];
    let env = [(env[0].0, env[0].1.as_path())];
    ok(sb.path(), &["setup", "codex"], &env);
    let named = fs::canonicalize(sb.p(".codex"))
        .unwrap()
        .join("config.toml");
    let mut text = fs::read_to_string(&codex).unwrap();
    text.push_str(&format!(
        "\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"./later.sh\"\n\n[hooks.state.\"{}:stop:1:0\"]\ntrusted_hash = \"sha256:later\"\n",
        named.display()
    ));
    fs::write(&codex, &text).unwrap();
    ok(sb.path(), &["setup", "codex", "--remove"], &env);
    let removed = fs::read_to_string(&codex).unwrap();
    assert!(removed.starts_with("model = \"o3\" # mine\n"), "{removed}");
    assert!(!removed.contains("relay"), "{removed}");
    let v: toml::Table = removed.parse().unwrap();
    assert_eq!(
        v["hooks"]["Stop"][0]["hooks"][0]["command"].as_str(),
        Some("./later.sh")
    );
    let state = v["hooks"]["state"].as_table().unwrap();
    assert_eq!(state.len(), 1, "{removed}");
    assert_eq!(
        state[&format!("{}:stop:0:0", named.display())]["trusted_hash"].as_str(),
        Some("sha256:later")
    );

    // A file setup created and nothing else was written into is removed, as --undo would.
    let fresh = sb.p("fresh/settings.json");
    let fresh_arg = fresh.to_str().unwrap();
    ok(sb.path(), &["setup", "qwen-code", "--file", fresh_arg], &[]);
    let said = ok(
        sb.path(),
        &["setup", "qwen-code", "--file", fresh_arg, "--remove"],
        &[],
    );
    assert!(
        said.starts_with(&format!(
            "removed {fresh_arg}, which hookd setup had created"
        )),
        "{said}"
    );
    assert!(!fresh.exists() && !backup(&fresh).exists());
}

/// A setup from a build (the tests' own hookd is in cargo's `target/debug`) says that the relay it
/// writes is in a build folder, which `cargo clean` takes away, and how to install hookd instead; the
/// same hookd and relay installed elsewhere say nothing of it. A dry run says it too.
#[test]
fn a_relay_in_a_build_folder_is_warned_of_with_how_to_install() {
    let sb = Sandbox::new();
    let file = sb.p("settings.json");
    let file_arg = file.to_str().unwrap();
    for args in [&["--dry-run"][..], &[]] {
        let out = hookd_in(
            sb.path(),
            &[&["setup", "claude-code", "--file", file_arg][..], args].concat(),
            &[],
        );
        assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
        let stderr = text(&out.stderr);
        let relay = Path::new(RELAY_BIN);
        assert!(
            stderr.contains(&format!(
                "warning: the relay written into Claude Code's settings, {}, is in a cargo build folder ({}): cargo clean",
                relay.display(),
                relay.parent().unwrap().parent().unwrap().display()
            )),
            "{stderr}"
        );
        assert!(
            stderr.contains("Install hookd instead, from its source: cargo install"),
            "{stderr}"
        );
        assert!(
            stderr.contains(&format!("/bin/hookd setup claude-code --file {file_arg}")),
            "{stderr}"
        );
        assert!(
            !stderr.contains("hint:"),
            "the install covers the lite relay: {stderr}"
        );
    }
    // Installed: hookd and its relay copied into a bin folder.
    let bin = sb.p("prefix/bin");
    fs::create_dir_all(&bin).unwrap();
    for (from, name) in [(BIN, "hookd"), (RELAY_BIN, "hookd-relay")] {
        fs::copy(from, bin.join(name)).unwrap();
    }
    let mut cmd = Command::new(bin.join("hookd"));
    cmd.args(["setup", "claude-code", "--file", file_arg, "--dry-run"])
        .env("HOME", sb.path())
        .env("XDG_STATE_HOME", sb.p(".state"))
        .env("XDG_RUNTIME_DIR", sb.p(".run"));
    let out = run_with_deadline(cmd, None, TIMEOUT);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("build folder"),
        "{}",
        text(&out.stderr)
    );
}

/// A settings file written on one line (as Copilot CLI's often is) stays one line, and `--undo` and
/// `--remove` give it back byte for byte.
#[test]
fn a_one_line_file_stays_one_line() {
    let sb = Sandbox::new();
    let file = sb.p(".copilot/settings.json");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    let one_line = "{\"model\": \"gpt-5\", \"trusted_folders\": [\"/src\"]}\n";
    fs::write(&file, one_line).unwrap();
    ok(sb.path(), &["setup", "copilot-cli"], &[]);
    let written = fs::read_to_string(&file).unwrap();
    assert_eq!(written.lines().count(), 1, "{written}");
    assert!(
        written.starts_with("{\"model\": \"gpt-5\", \"trusted_folders\": [\"/src\"], \"hooks\": {"),
        "{written}"
    );
    assert_eq!(
        json(&file)["hooks"].as_object().unwrap().len(),
        Agent::CopilotCli.moments().len()
    );
    ok(sb.path(), &["setup", "copilot-cli", "--remove"], &[]);
    assert_eq!(fs::read_to_string(&file).unwrap(), one_line);
}
