//! `hookd import` as a user runs it: its output appended to a settings file that already has
//! hooks (`hookd import F >> hooks.toml`) stays valid and keeps the file's meaning; a hook on a moment
//! no relay sends is flagged in the output and on stderr; the agents' own timeouts are kept, in seconds.

use std::fs;
use std::time::Duration;

use crate::common::*;

/// A safety net for one command (never a speed assertion).
const T: Duration = Duration::from_secs(20);

/// A Claude Code settings.json: a guard with a timeout, a Stop hook without one, and a hook on
/// WorktreeCreate, an event of Claude Code's own that no relay sends.
const CLAUDE: &str = r#"{"hooks": {
  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 10}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "./stop.sh"}]}],
  "WorktreeCreate": [{"hooks": [{"type": "command", "command": "make"}]}]
}}"#;

/// A Gemini CLI settings.json: its timeouts in milliseconds, one hook without any, and BeforeModel, an
/// event of its own.
const GEMINI: &str = r#"{"hooks": {
  "BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"name": "g", "type": "command", "command": "g.sh", "timeout": 1500}]}],
  "AfterAgent": [{"hooks": [{"type": "command", "command": "after.sh"}]}],
  "BeforeModel": [{"hooks": [{"type": "command", "command": "model.sh", "timeout": 30000}]}]
}}"#;

/// A settings file whose last thing is a hook table, and which declares a moment and a sequential one
/// at its top: anything bare appended to it would land in `mine-last`.
const EXISTING: &str = "moments = [\"WorktreeCreate\"]\nsequential = [\"PreToolUse\"]\n\n\
                        [[hooks.PreToolUse]]\nname = \"mine\"\ncommand = \"true\"\n\n\
                        [[hooks.Stop]]\nname = \"mine-last\"\ncommand = \"true\"\ntimeout = 5\n";

/// `hookd import FILE --agent AGENT` on `json`, which must succeed: (stdout, stderr).
fn import(sb: &Sandbox, agent: &str, json: &str) -> (String, String) {
    let file = sb.p(&format!("{agent}.json"));
    fs::write(&file, json).unwrap();
    let out = run_hookd(
        &["import", file.to_str().unwrap(), "--agent", agent],
        None,
        T,
    );
    assert_eq!(code(&out.status), 0, "import: {}", text(&out.stderr));
    (text(&out.stdout), text(&out.stderr))
}

/// `hookd check` on the sandbox's settings, which must pass: its listing.
fn check_passes(sb: &Sandbox) -> String {
    let out = run_hookd(
        &["check", "--config", sb.config().to_str().unwrap()],
        None,
        T,
    );
    assert_eq!(
        code(&out.status),
        0,
        "check refused:\n{}\n---\n{}",
        text(&out.stderr),
        fs::read_to_string(sb.config()).unwrap()
    );
    text(&out.stdout)
}

/// The listing's line for hook `name`.
fn line_of<'a>(listing: &'a str, name: &str) -> &'a str {
    listing
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no hook {name} in:\n{listing}"))
}

#[test]
fn imports_appended_to_a_file_ending_in_a_hook_table_stay_valid_and_keep_its_meaning() {
    let sb = Sandbox::new();
    let (claude, _) = import(&sb, "claude-code", CLAUDE);
    let (gemini, _) = import(&sb, "gemini-cli", GEMINI);
    // `cat existing.toml; hookd import ...` >> hooks.toml, twice.
    sb.settings(&format!("{EXISTING}{claude}{gemini}"));
    let listing = check_passes(&sb);
    assert!(listing.contains(": valid, 8 hooks\n"), "{listing}");
    // The file's own hooks are as they were: nothing landed in the last table.
    assert_eq!(
        line_of(&listing, "mine-last").trim(),
        "mine-last  command \"true\"  timeout 5s"
    );
    assert_eq!(
        line_of(&listing, "mine").trim(),
        "mine  command \"true\"  timeout 60s"
    );
    // And the file's top-level keys still mean what they meant, read as TOML.
    let merged: toml::Table = fs::read_to_string(sb.config()).unwrap().parse().unwrap();
    assert_eq!(merged["moments"].as_array().unwrap().len(), 1);
    let last = &merged["hooks"]["Stop"].as_array().unwrap()[0];
    assert_eq!(last.as_table().unwrap().len(), 3, "{last}");
    // The imported moments hookd does not know are declared by their hooks.
    line_of(&listing, "claude-code-WorktreeCreate-1");
    line_of(&listing, "gemini-cli-BeforeModel-1");

    // Each import alone passes too.
    for alone in [&claude, &gemini] {
        sb.settings(alone);
        check_passes(&sb);
    }
}

#[test]
fn a_hook_on_a_moment_no_relay_sends_is_flagged_in_the_output_and_on_stderr() {
    let sb = Sandbox::new();
    let (out, stderr) = import(&sb, "claude-code", CLAUDE);
    let warnings: Vec<&str> = stderr.lines().collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].starts_with("warning: WorktreeCreate: no relay sends WorktreeCreate to hookd"),
        "{stderr}"
    );
    let hook = out
        .split("\n\n")
        .find(|block| block.contains("[[hooks.WorktreeCreate]]"))
        .unwrap_or_else(|| panic!("no WorktreeCreate hook in:\n{out}"));
    assert!(
        hook.contains("# no relay sends WorktreeCreate to hookd"),
        "{hook}"
    );
    // Moments the relays send are not flagged.
    for block in out.split("\n\n").filter(|b| !b.contains("WorktreeCreate")) {
        assert!(!block.contains("no relay sends"), "{block}");
    }
    let (_, stderr) = import(&sb, "gemini-cli", GEMINI);
    assert!(
        stderr.contains("warning: BeforeModel: no relay sends BeforeModel"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn imported_hooks_keep_the_agents_own_timeouts_in_seconds() {
    let sb = Sandbox::new();
    let (claude, _) = import(&sb, "claude-code", CLAUDE);
    let (gemini, _) = import(&sb, "gemini-cli", GEMINI);
    sb.settings(&format!("[defaults]\ntimeout = 7\n\n{claude}{gemini}"));
    let listing = check_passes(&sb);
    // Claude Code's seconds, Gemini CLI's milliseconds.
    assert!(
        line_of(&listing, "claude-code-PreToolUse-1").ends_with("timeout 10s"),
        "{listing}"
    );
    assert!(
        line_of(&listing, "gemini-cli-PreToolUse-1").ends_with("timeout 1.5s"),
        "{listing}"
    );
    assert!(
        line_of(&listing, "gemini-cli-BeforeModel-1").ends_with("timeout 30s"),
        "{listing}"
    );
    // Where the agent gave none, nothing is written, and the file's default applies; the header says
    // what the agent's own default was.
    assert!(
        line_of(&listing, "claude-code-Stop-1").ends_with("timeout 7s"),
        "{listing}"
    );
    assert!(
        line_of(&listing, "gemini-cli-Stop-1").ends_with("timeout 7s"),
        "{listing}"
    );
    assert!(
        claude.contains("not Claude Code's own default of 600 s"),
        "{claude}"
    );
    assert!(
        gemini.contains("(Gemini CLI's own default is 60 s)"),
        "{gemini}"
    );
}

/// Attack: `hookd import` of a FIFO (a path given by mistake, or `<(...)` with nothing yet
/// written) waited for a writer forever, and of `/dev/zero` read it into memory without end. Each is
/// refused at once; a symbolic link to a settings file (a dotfiles checkout) is read as the file.
#[test]
fn import_refuses_what_is_no_settings_file_at_once_and_follows_a_link() {
    let sb = Sandbox::new();
    let fifo = sb.p("settings.json");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    for path in [fifo.to_str().unwrap(), "/dev/zero"] {
        let out = run_hookd(&["import", path, "--agent", "claude-code"], None, T);
        assert_eq!(code(&out.status), 1, "{path}: {}", text(&out.stdout));
        assert_eq!(
            text(&out.stderr),
            format!("hookd: {path} is not a regular file\n")
        );
        assert!(out.stdout.is_empty(), "{path}: {}", text(&out.stdout));
    }
    let real = sb.p("dotfiles/claude.json");
    fs::create_dir_all(real.parent().unwrap()).unwrap();
    fs::write(&real, CLAUDE).unwrap();
    let link = sb.p("linked.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = run_hookd(&["import", link.to_str().unwrap()], None, T);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("command = \"guard.sh\""));
}
