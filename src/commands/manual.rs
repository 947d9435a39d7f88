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
        let man =
            clap_mangen::Man::new(command).source(concat!("hookd ", env!("CARGO_PKG_VERSION")));
        pages.push((name, render(man)?));
    }
    Ok(pages)
}

fn page(command: clap::Command) -> Result<Vec<u8>, String> {
    render(clap_mangen::Man::new(command))
}

fn render(man: clap_mangen::Man) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    man.render(&mut out)
        .map_err(|e| format!("cannot render the manual page: {e}"))?;
    Ok(out)
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
