//! What a packaged command has beside `--help`: shell completions and manual pages, both made from the
//! command line's own definitions ([`crate::commands::cli`]), so they can never disagree with `--help`.

use std::path::Path;
use std::process::ExitCode;

use clap::CommandFactory;

use crate::commands::cli::Cli;

/// `hookd completions SHELL`: the script on stdout.
pub fn completions(shell: clap_complete::Shell) -> Result<ExitCode, String> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "hookd", &mut out);
    print_bytes(&out)
}

/// `hookd man [--dir DIR]`: hookd(1) on stdout, or every page written into `dir`.
pub fn man(dir: Option<&Path>) -> Result<ExitCode, String> {
    let Some(dir) = dir else {
        return print_bytes(&page(Cli::command())?);
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (name, text) in pages()? {
        let path = dir.join(format!("{name}.1"));
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Every page: hookd(1), then hookd-COMMAND(1) for each command but `help`, named as `git` names its own.
fn pages() -> Result<Vec<(String, Vec<u8>)>, String> {
    let top = Cli::command();
    let mut pages = vec![("hookd".to_string(), page(top.clone())?)];
    for sub in top.get_subcommands().filter(|sub| sub.get_name() != "help") {
        let name = format!("hookd-{}", sub.get_name());
        let command = sub
            .clone()
            .name(name.clone())
            .bin_name(format!("hookd {}", sub.get_name()));
        pages.push((name, render(command, sub.get_name())?));
    }
    Ok(pages)
}

fn page(command: clap::Command) -> Result<Vec<u8>, String> {
    render(command, "")
}

/// A page as clap_mangen renders it, section by section, with EXAMPLES (the command's, from
/// [`EXAMPLES`]) and SEE ALSO after the options, as cargo's and git's pages have them. `sub` is the
/// command's name, or empty for hookd(1).
fn render(command: clap::Command, sub: &str) -> Result<Vec<u8>, String> {
    let has_subcommands = command.get_subcommands().next().is_some();
    let has_version = command.get_version().is_some();
    let man = clap_mangen::Man::new(command).source(concat!("hookd ", env!("CARGO_PKG_VERSION")));
    let mut out = Vec::new();
    let failed = |e: std::io::Error| format!("cannot render the manual page: {e}");
    man.render_title(&mut out).map_err(failed)?;
    man.render_name_section(&mut out).map_err(failed)?;
    man.render_synopsis_section(&mut out).map_err(failed)?;
    man.render_description_section(&mut out).map_err(failed)?;
    man.render_options_section(&mut out).map_err(failed)?;
    if has_subcommands {
        man.render_subcommands_section(&mut out).map_err(failed)?;
    }
    out.extend_from_slice(examples_section(sub).as_bytes());
    out.extend_from_slice(see_also_section(sub).as_bytes());
    if has_version {
        man.render_version_section(&mut out).map_err(failed)?;
    }
    Ok(out)
}

/// Each command's examples: the line to type, and what it does. The first group is hookd(1)'s own: the
/// way from nothing to a guarded agent.
const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "",
        &[
            (
                "hookd install",
                "Run hookd as a systemd user service, started at the first connection (without a systemd user session it says what to do instead).",
            ),
            (
                "hookd check",
                "Validate the settings file, ~/.config/hookd/hooks.toml, and list its hooks per moment.",
            ),
            (
                "hookd setup claude-code",
                "Put Claude Code's calls through hookd: its relay hooks merged into ~/.claude/settings.json, a backup first.",
            ),
            (
                "hookd doctor",
                "Check the whole chain an agent's call goes through, a line each with what to fix.",
            ),
            (
                "hookd log --refused --since 1h",
                "What the hooks held back in the last hour.",
            ),
        ],
    ),
    (
        "serve",
        &[
            (
                "hookd serve",
                "Run the daemon in the foreground on the default settings and socket; Ctrl-C stops it.",
            ),
            (
                "hookd serve --config config/hooks.toml",
                "Serve the example settings of hookd's source.",
            ),
            (
                "nohup hookd serve >>~/.local/state/hookd/serve.log 2>&1 </dev/null &",
                "Run it in the background where there is no systemd user session.",
            ),
        ],
    ),
    (
        "check",
        &[
            (
                "hookd check",
                "Validate the default settings file and list its hooks.",
            ),
            (
                "hookd check --config config/hooks.toml --json",
                "The same as one JSON object, for a script or CI.",
            ),
        ],
    ),
    (
        "fire",
        &[
            (
                "echo '{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"rm -rf ~\"}}' | hookd fire PreToolUse",
                "Ask the running daemon what it decides of a call, as an agent would; exit 2 when refused.",
            ),
            (
                "hookd fire PreToolUse --agent codex --json < event.json",
                "As Codex, with the daemon's response line as JSON.",
            ),
        ],
    ),
    (
        "test",
        &[
            (
                "echo '{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"rm -rf ~\"}}' | hookd test PreToolUse --agent claude-code",
                "Run the hooks that fit the event, with no daemon, and show what each printed and what Claude Code would be told.",
            ),
            (
                "hookd test --agent gemini-cli --event before-tool.json",
                "Gemini CLI's raw hook input, translated as the relay translates it.",
            ),
            (
                "hookd test --cases config/cases.toml --config config/hooks.toml",
                "Run policy test cases, for CI.",
            ),
        ],
    ),
    (
        "status",
        &[
            (
                "hookd status",
                "The daemon's state, as systemctl status shows a service.",
            ),
            ("hookd status --json", "Its status line, for a script."),
        ],
    ),
    (
        "relay",
        &[
            (
                "hookd relay --print-settings claude-code",
                "The snippet for Claude Code's settings that sends every moment through hookd.",
            ),
            (
                "hookd relay --agent codex --fail-closed",
                "What an agent's hook runs: its hook input on stdin, the verdict in its dialect; refuse when hookd cannot answer.",
            ),
        ],
    ),
    (
        "import",
        &[
            (
                "hookd import ~/.claude/settings.json >> ~/.config/hookd/hooks.toml",
                "Move Claude Code's own hooks into hookd's settings.",
            ),
            (
                "hookd import ~/.codex/hooks.json --agent codex",
                "Codex's hooks, printed as hookd settings.",
            ),
        ],
    ),
    (
        "setup",
        &[
            (
                "hookd setup claude-code --dry-run",
                "Show, as a diff, what setup would write into Claude Code's settings.",
            ),
            (
                "hookd setup codex --fail-closed",
                "Put Codex's calls through hookd, refused when hookd cannot answer.",
            ),
            (
                "hookd setup gemini-cli --undo",
                "Restore Gemini CLI's settings as they were before setup.",
            ),
        ],
    ),
    (
        "doctor",
        &[
            (
                "hookd doctor",
                "Check the daemon, the settings, protection and every agent's relay hooks; exit 1 when a call could go through unguarded.",
            ),
            ("hookd doctor --json", "The same checks as one JSON object."),
        ],
    ),
    (
        "install",
        &[
            (
                "hookd install",
                "Write hookd.service and hookd.socket to ~/.config/systemd/user and enable the socket.",
            ),
            (
                "hookd install --dir pkg/usr/lib/systemd/user --bin /usr/bin/hookd",
                "Write the units for a package, enabling nothing.",
            ),
        ],
    ),
    (
        "log",
        &[
            ("hookd log", "The last 20 records, as a table."),
            (
                "hookd log --refused --since 1h",
                "What was held back in the last hour.",
            ),
            (
                "hookd log --agent codex --json | jq .",
                "All of Codex's records, as the journal holds them.",
            ),
        ],
    ),
    (
        "watch",
        &[
            (
                "hookd watch --refused",
                "Refusals as they happen, until Ctrl-C.",
            ),
            (
                "hookd watch --agent claude-code --json",
                "Claude Code's records as JSON lines, live.",
            ),
        ],
    ),
    (
        "why",
        &[
            (
                "hookd why",
                "The last refusal in full: what was asked, the reason, the hook and its stderr.",
            ),
            (
                "hookd why --agent codex --moment PreToolUse",
                "The last of Codex's refusals before a tool ran.",
            ),
        ],
    ),
    (
        "trust",
        &[
            (
                "hookd trust",
                "Show this repository's own hooks (.hookd/hooks.toml) and trust them as they are now.",
            ),
            (
                "hookd trust ~/src/app --revoke",
                "Forget the trust given to that repository's hooks: they wait again.",
            ),
        ],
    ),
    (
        "reload",
        &[(
            "hookd reload",
            "Read the settings again now (the daemon also does when the file changes).",
        )],
    ),
    (
        "completions",
        &[
            (
                "hookd completions bash > ~/.local/share/bash-completion/completions/hookd",
                "Install bash's completions for yourself.",
            ),
            (
                "hookd completions fish > ~/.config/fish/completions/hookd.fish",
                "And fish's.",
            ),
        ],
    ),
    (
        "man",
        &[(
            "hookd man --dir ~/.local/share/man/man1",
            "Install every page for yourself: then man hookd, man hookd-setup.",
        )],
    ),
];

/// The examples of `sub` ("" for hookd's own).
fn examples_of(sub: &str) -> &'static [(&'static str, &'static str)] {
    EXAMPLES
        .iter()
        .find(|(name, _)| *name == sub)
        .map_or(&[], |(_, examples)| examples)
}

/// The EXAMPLES section of `sub`'s page: each line as typed, in bold, with what it does beneath.
fn examples_section(sub: &str) -> String {
    let examples = examples_of(sub);
    if examples.is_empty() {
        return String::new();
    }
    let mut out = String::from(".SH EXAMPLES\n");
    for (line, what) in examples {
        out.push_str(&format!(".TP\n\\fB{}\\fR\n{}\n", roff(line), roff(what)));
    }
    out
}

/// SEE ALSO: hookd(1) on a command's page; on hookd(1), each command's page.
fn see_also_section(sub: &str) -> String {
    let pages: Vec<String> = if sub.is_empty() {
        Cli::command()
            .get_subcommands()
            .filter(|c| c.get_name() != "help")
            .map(|c| format!("hookd\\-{}(1)", c.get_name()))
            .collect()
    } else {
        vec!["hookd(1)".to_string()]
    };
    format!(".SH \"SEE ALSO\"\n{}\n", pages.join(", "))
}

/// Text as roff shows it as is: backslashes and hyphens escaped, and a line that starts with `.` or `'`
/// (a request, to roff) started with a zero-width character.
fn roff(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with(['.', '\'']) {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

fn print_bytes(bytes: &[u8]) -> Result<ExitCode, String> {
    crate::commands::output::write_stdout(bytes)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn there_is_a_page_for_every_command_and_each_names_its_options() {
        let pages = pages().unwrap();
        let commands: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|sub| sub.get_name().to_string())
            .filter(|name| name != "help")
            .collect();
        assert_eq!(pages.len(), commands.len() + 1);
        let top = String::from_utf8(pages[0].1.clone()).unwrap();
        assert!(top.contains("\n.TH hookd 1 "), "{top}");
        for command in &commands {
            assert!(top.contains(command.as_str()), "hookd(1) lacks {command}");
        }
        let fire = pages
            .iter()
            .find(|(name, _)| name == "hookd-fire")
            .map(|(_, text)| String::from_utf8(text.clone()).unwrap())
            .unwrap();
        assert!(fire.contains("\n.TH hookd-fire 1 "), "{fire}");
        assert!(fire.contains("\\fBhookd fire\\fR"), "the synopsis: {fire}");
        assert!(fire.contains("\\-\\-agent"), "{fire}");
        // Every page has its examples and its see-also, as cargo's and git's do.
        for (name, text) in &pages {
            let text = String::from_utf8(text.clone()).unwrap();
            assert!(text.contains("\n.SH EXAMPLES\n.TP\n\\fB"), "{name}: {text}");
            assert!(text.contains("\n.SH \"SEE ALSO\"\n"), "{name}");
        }
        assert!(
            fire.contains(
                "\\fBhookd fire PreToolUse \\-\\-agent codex \\-\\-json < event.json\\fR\n"
            ),
            "{fire}"
        );
        assert!(top.contains("hookd\\-setup(1)"), "{top}");
    }

    /// Each example runs a command as it is: its `hookd ...` words parse, as that command.
    #[test]
    fn every_example_is_a_command_line_hookd_reads() {
        let commands: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|sub| sub.get_name().to_string())
            .filter(|name| name != "help")
            .collect();
        for command in &commands {
            assert!(
                !examples_of(command).is_empty(),
                "no examples for {command}"
            );
        }
        for (sub, examples) in EXAMPLES {
            assert!(sub.is_empty() || commands.iter().any(|c| c == sub), "{sub}");
            for (line, _) in *examples {
                let at = line.find("hookd ").unwrap_or_else(|| panic!("{line}"));
                let words: Vec<&str> = line[at..]
                    .split_whitespace()
                    .take_while(|word| {
                        !["|", "<", ">", ">>", "&"].contains(word) && !word.starts_with(">>")
                    })
                    .collect();
                if let Err(e) = <Cli as clap::Parser>::try_parse_from(&words) {
                    panic!("{line}: {e}");
                }
                if !sub.is_empty() {
                    assert_eq!(words[1], *sub, "{line}");
                }
            }
        }
    }

    #[test]
    fn completions_offer_every_command() {
        for shell in [
            clap_complete::Shell::Bash,
            clap_complete::Shell::Zsh,
            clap_complete::Shell::Fish,
        ] {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "hookd", &mut out);
            let script = String::from_utf8(out).unwrap();
            for sub in Cli::command().get_subcommands() {
                assert!(
                    script.contains(sub.get_name()),
                    "{shell}: no {}",
                    sub.get_name()
                );
            }
        }
    }
}
