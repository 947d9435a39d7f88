//! What a packaged command has: shell completions that a shell loads and completes with, and manual
//! pages made from the same definitions as `--help`.

use std::process::Command;

use crate::common::*;

/// What bash offers after `words`, the last being the word under the cursor, with hookd's completion
/// script loaded as a user loads it.
fn bash_offers(words: &[&str]) -> Vec<String> {
    let script = format!(
        "source <('{BIN}' completions bash) && complete -p hookd >/dev/null && \
         COMP_WORDS=({words}) && COMP_CWORD={cword} && _hookd hookd '{cur}' '{prev}' && \
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        words = words
            .iter()
            .map(|w| format!("'{w}'"))
            .collect::<Vec<_>>()
            .join(" "),
        cword = words.len() - 1,
        cur = words[words.len() - 1],
        prev = words[words.len() - 2],
    );
    let mut bash = Command::new("bash");
    bash.args(["--norc", "--noprofile", "-c", &script]);
    let out = run_with_deadline(bash, None, RESPONSE);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    text(&out.stdout).lines().map(str::to_string).collect()
}

#[test]
fn bash_completes_commands_and_their_values() {
    assert_eq!(bash_offers(&["hookd", "re"]), ["relay", "reload"]);
    let shells = bash_offers(&["hookd", "completions", ""]);
    for shell in ["bash", "zsh", "fish"] {
        assert!(shells.iter().any(|s| s == shell), "{shells:?}");
    }
    let options = bash_offers(&["hookd", "log", "--re"]);
    assert_eq!(options, ["--refused"]);
}

/// Completions offer the names hookd knows: agents wherever an agent is asked for, moments wherever a
/// moment is (none is checked by clap: hookd checks them itself, with its did-you-mean).
#[test]
fn completions_offer_agent_and_moment_names() {
    assert_eq!(bash_offers(&["hookd", "setup", "cl"]), ["claude-code"]);
    assert_eq!(
        bash_offers(&["hookd", "fire", "--agent", "ge"]),
        ["gemini-cli"]
    );
    assert_eq!(
        bash_offers(&["hookd", "relay", "--print-settings", "co"]),
        ["codex", "copilot-cli"]
    );
    assert_eq!(bash_offers(&["hookd", "fire", "PreTo"]), ["PreToolUse"]);
    assert_eq!(
        bash_offers(&["hookd", "log", "--moment", "Sto"]),
        ["Stop", "StopFailure"]
    );
    assert_eq!(
        bash_offers(&["hookd", "why", "--agent", "qw"]),
        ["qwen-code"]
    );
    let zsh = text(&run_hookd(&["completions", "zsh"], None, RESPONSE).stdout);
    assert!(
        zsh.contains(":AGENT:(claude-code codex gemini-cli qwen-code copilot-cli)"),
        "{zsh}"
    );
    let fish = text(&run_hookd(&["completions", "fish"], None, RESPONSE).stdout);
    assert!(
        fish.contains("-l agent")
            && fish.contains(r#""claude-code\t"#)
            && fish.contains(r"PreToolUse\t"),
        "{fish}"
    );
    // Still hookd's own check, not clap's: a near name is told what it surely means.
    let out = run_hookd(
        &["fire", "--agent", "claude", "PreToolUse"],
        Some("{}"),
        RESPONSE,
    );
    assert_eq!(code(&out.status), 1);
    assert!(
        text(&out.stderr).contains("did you mean \"claude-code\""),
        "{}",
        text(&out.stderr)
    );
}

/// `--help` is wrapped to the terminal it is shown on, up to 100 columns (as cargo's), and at 100
/// where no terminal says its width (a pipe).
#[test]
fn help_is_wrapped_to_the_terminal() {
    // A word longer than the line (a path) cannot be wrapped: a line of one word is as wrapped as it gets.
    let widest = |output: &[u8]| {
        text(output)
            .lines()
            .filter(|line| line.split_whitespace().count() > 1)
            .map(|line| line.chars().count())
            .max()
            .unwrap_or(0)
    };
    for args in [&["--help"][..], &["fire", "--help"], &["setup", "--help"]] {
        for columns in [60u16, 80] {
            let mut cmd = Command::new(BIN);
            cmd.args(args).env("NO_COLOR", "1").env_remove("COLUMNS");
            let out = run_on_terminal_of(cmd, None, RESPONSE, Some(columns));
            assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
            assert!(
                widest(&out.stdout) <= columns as usize,
                "{args:?} at {columns} columns:\n{}",
                text(&out.stdout)
            );
        }
        let out = run_hookd(args, None, RESPONSE);
        assert!(widest(&out.stdout) <= 100, "{}", text(&out.stdout));
    }
}

#[test]
fn zsh_and_fish_scripts_name_every_command() {
    for shell in ["zsh", "fish"] {
        let out = run_hookd(&["completions", shell], None, RESPONSE);
        assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
        let script = text(&out.stdout);
        for command in ["serve", "fire", "relay", "log", "why", "completions", "man"] {
            assert!(script.contains(command), "{shell}: no {command}");
        }
    }
    let out = run_hookd(&["completions", "tcsh"], None, RESPONSE);
    assert_eq!(
        code(&out.status),
        1,
        "an unknown shell is a usage error (1: 2 means refused)"
    );
    assert!(
        text(&out.stderr).contains("possible values"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn man_writes_a_page_per_command_that_man_can_read() {
    let sb = Sandbox::new();
    let dir = sb.p("man/man1");
    let out = run_hookd(&["man", "--dir", dir.to_str().unwrap()], None, RESPONSE);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    for page in [
        "hookd",
        "hookd-serve",
        "hookd-relay",
        "hookd-log",
        "hookd-man",
    ] {
        let text = std::fs::read_to_string(dir.join(format!("{page}.1")))
            .unwrap_or_else(|e| panic!("{page}.1: {e}"));
        assert!(text.contains(&format!("\n.TH {page} 1 ")), "{page}: {text}");
    }
    let relay = std::fs::read_to_string(dir.join("hookd-relay.1")).unwrap();
    assert!(
        relay.contains("fail\\-closed"),
        "the relay's options: {relay}"
    );
    // On stdout without --dir: the same hookd(1).
    let out = run_hookd(&["man"], None, RESPONSE);
    assert_eq!(
        text(&out.stdout),
        std::fs::read_to_string(dir.join("hookd.1")).unwrap()
    );
    if on_path("man") {
        let mut man = Command::new("man");
        man.arg("-l")
            .arg(dir.join("hookd-fire.1"))
            .env("MANPAGER", "cat");
        let shown = run_with_deadline(man, None, RESPONSE);
        assert_eq!(code(&shown.status), 0, "{}", text(&shown.stderr));
        assert!(
            text(&shown.stdout).contains("hookd fire"),
            "{}",
            text(&shown.stdout)
        );
    }
}

/// The package's metadata, which `cargo install`, crates.io and distribution packagers read, and the
/// license it names, in the repository and in what `cargo package` ships.
#[test]
fn the_package_names_its_license_and_ships_it() {
    assert!(!env!("CARGO_PKG_DESCRIPTION").is_empty());
    assert_eq!(env!("CARGO_PKG_LICENSE"), "MIT");
    assert!(
        env!("CARGO_PKG_REPOSITORY").starts_with("https://"),
        "{}",
        env!("CARGO_PKG_REPOSITORY")
    );
    let license = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/LICENSE"))
        .expect("a LICENSE at the top of the repository");
    assert!(license.starts_with("MIT License\n"), "{license}");
    assert!(license.contains("Permission is hereby granted, free of charge"));
    // The binary says the package's version, as packagers check it.
    let version = run_hookd(&["--version"], None, RESPONSE);
    assert_eq!(
        text(&version.stdout).trim(),
        format!("hookd {}", env!("CARGO_PKG_VERSION"))
    );
}

/// Python's bytecode, which a local run of the example scripts leaves in `__pycache__`, is neither in
/// the repository nor taken into it by a careless `git add`.
#[test]
fn no_python_bytecode_is_in_the_repository_or_would_be_added() {
    let top = env!("CARGO_MANIFEST_DIR");
    if !require(
        on_path("git") && std::path::Path::new(top).join(".git").exists(),
        "git and a git checkout, to list the repository's files",
    ) {
        return;
    }
    let git = |args: &[&str]| {
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(top).args(args);
        run_with_deadline(cmd, None, RESPONSE)
    };
    let listed = git(&["ls-files"]);
    assert_eq!(code(&listed.status), 0, "{}", text(&listed.stderr));
    let bytecode: Vec<String> = text(&listed.stdout)
        .lines()
        .filter(|path| path.contains("__pycache__") || path.ends_with(".pyc"))
        .map(str::to_string)
        .collect();
    assert_eq!(bytecode, Vec::<String>::new());
    for path in [
        "examples/__pycache__/sdk_client.cpython-313.pyc",
        "config/__pycache__/deny-destructive.cpython-313.pyc",
    ] {
        let ignored = git(&["check-ignore", "--no-index", "-q", path]);
        assert_eq!(code(&ignored.status), 0, "{path} is not ignored");
    }
}
