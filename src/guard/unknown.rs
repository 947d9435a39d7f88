//! Commands that cannot be known before they run ([`super::rules::UNKNOWN`]): a program that comes from a
//! variable or from a command's output (`$CMD x`, `$(cat cmd.txt)`), or a shell or an interpreter whose
//! script comes from input (`xargs bash`, `xargs sh -c`, `cat x | python3`, `git show x | sh`).
//!
//! Only the program counts: a known program given words that cannot be known (`echo $X`, `cd $DIR`,
//! `rm -rf $X`) is judged by what it is. A program whose folder alone comes from a variable
//! (`$VENV/bin/python`, `$(dirname $0)/run.sh`) is known by its name, and so are the tools that print
//! their own shell set-up for `eval` (`eval "$(pyenv init -)"`). A download run as code is the
//! network-shell rule's; `echo ... | sh` and here-documents are read by the shell reader as the
//! commands they hold.

use crate::shell::Command;

use super::folders::Seen;
use super::rules::{Finding, UNKNOWN};
use super::system::{
    fed_by_download, input_from, producer, runs_scripts, script_from_input, script_words, shown,
};

/// Tools whose output is their own shell set-up, run with `eval "$(tool ...)"`.
const SETUP_PRINTERS: &[&str] = &[
    "ssh-agent",
    "gpg-agent",
    "keychain",
    "pyenv",
    "rbenv",
    "nodenv",
    "goenv",
    "jenv",
    "plenv",
    "direnv",
    "conda",
    "mamba",
    "micromamba",
    "opam",
    "brew",
    "fnm",
    "zoxide",
    "starship",
    "mise",
    "rtx",
    "asdf",
    "dircolors",
    "luarocks",
    "thefuck",
    "pixi",
    "uv",
    "rustup",
    "nvm",
];

pub(super) fn judge(seen: &Seen, found: &mut Vec<Finding>) {
    let commands = seen.commands;
    for (at, command) in commands.iter().enumerate() {
        let Some(first) = command.words.first() else {
            continue;
        };
        let reason = if !first.known {
            if named_program(&first.text)
                || sets_up_shell(&first.text)
                || users_shell(command)
                // A process substitution left where a redirection's target was read (`done <
                // <(cmd)`): its command is read on its own.
                || first.text.starts_with("/dev/fd/")
                || read_again(commands, command)
            {
                continue;
            }
            let from = if command.depth > crate::shell::MAX_DEPTH {
                "a line nested too deep to read"
            } else if first.text.starts_with('$') && !first.text.starts_with("$(") {
                "a variable"
            } else if first.text.contains("$(") || first.text.contains('`') {
                "a command's output"
            } else {
                "what is only known when it runs (its input, or a file it reads)"
            };
            format!(
                "`{}`: hookd cannot tell what it runs, since the program comes from {from}. Write \
                 the command out, with the program's own name",
                shown(command)
            )
        } else if let Some(script) = script_from_output(commands, at) {
            format!(
                "`{}` runs a script that is a command's output ({}): hookd cannot tell what it \
                 runs. Write the commands out, or save them to a file, read it, and run that file",
                shown(command),
                script
            )
        } else if command.fed && script_is_input(commands, at) {
            format!(
                "`{}` runs each line of its input as a script: hookd cannot tell what it runs. Run \
                 each script by its own name, or write the commands out",
                shown(command)
            )
        } else if runs_scripts(command.program()) && script_from_input(command) {
            if command.fed {
                format!(
                    "`{}` runs a script that comes from its input: hookd cannot tell what it runs. \
                     Run each script by its own name, or write the commands out",
                    shown(command)
                )
            } else if let Some(source) = unreadable_input(commands, at) {
                format!(
                    "`{} | {}` runs what `{source}` prints as a script: hookd cannot tell what it \
                     runs. Write the commands out, or save them to a file, read it, and run that file",
                    source,
                    shown(command)
                )
            } else {
                continue;
            }
        } else {
            continue;
        };
        found.push(Finding {
            rule: UNKNOWN,
            reason: format!("{reason}."),
        });
        return;
    }
}

/// `xargs -I{} sh -c '{}'`, `parallel bash -c {}`: a shell or interpreter fed by a wrapper whose whole
/// script is the placeholder the wrapper fills with each input.
fn script_is_input(commands: &[Command], at: usize) -> bool {
    let command = &commands[at];
    if !runs_scripts(command.program()) {
        return false;
    }
    let depth = command.depth;
    let wrapper = (at + 1..commands.len()).find(|&i| commands[i].depth < depth);
    let args = wrapper.map_or(&[][..], |i| commands[i].args());
    // The string `xargs -I X` (or `-iX`, `--replace=X`) replaces; `{}` by default.
    let mut placeholders = vec!["{}".to_string()];
    for (i, word) in args.iter().enumerate() {
        let text = word.text.as_str();
        if text == "-I" {
            placeholders.extend(args.get(i + 1).map(|w| w.text.clone()));
        } else if let Some(value) = text
            .strip_prefix("-I")
            .or_else(|| text.strip_prefix("--replace="))
            .or_else(|| text.strip_prefix("-i"))
            .filter(|v| !v.is_empty())
        {
            placeholders.push(value.to_string());
        }
    }
    script_words(command)
        .iter()
        .any(|w| placeholders.iter().any(|p| w.text.trim() == p))
}

/// `source <(cmd)`, `bash <(cmd)`, `bash < <(cmd)`, `python3 -c "$(cmd)"`: the script word of a shell, an interpreter,
/// `source` or `eval` that is a command's output, when it is neither a download (the network-shell
/// rule's), a tool's own set-up or completion script, nor a file named by its own name in a folder a
/// command prints (`bash "$(dirname $0)/x.sh"`). A script named by a variable (`python "$f"`) is a
/// file on disk, and let be.
fn script_from_output(commands: &[Command], at: usize) -> Option<String> {
    let command = &commands[at];
    let program = command.program();
    if !(runs_scripts(program) || matches!(program, "source" | "." | "eval")) {
        return None;
    }
    let input = if runs_scripts(program) && script_from_input(command) {
        input_from(commands, at)
    } else {
        None
    };
    script_words(command)
        .into_iter()
        .chain(input)
        .find_map(|word| {
            let text = word.text.as_str();
            let substituted =
                text.starts_with("/dev/fd/") || text.contains("$(") || text.contains('`');
            let inner = text.strip_prefix("/dev/fd/").unwrap_or(text);
            (!word.known
                && substituted
                && !named_program(text)
                && !sets_up_shell(inner)
                && !inner.contains(" completion"))
            .then(|| text.chars().take(60).collect())
        })
}

/// What feeds `commands[at]` through a pipe, shown, when it is not text the shell reader reads as the
/// script (`echo 'ls' | sh`, `cat <<EOF | sh`) nor a download (the network-shell rule's).
fn unreadable_input(commands: &[Command], at: usize) -> Option<String> {
    let range = producer(commands, at)?;
    if fed_by_download(commands, at) {
        return None;
    }
    let member = &commands[range.end - 1];
    let readable = commands[range].iter().any(|c| {
        (matches!(c.program(), "echo" | "printf") && c.args().iter().all(|w| w.known))
            || (c.program() == "cat" && c.args().is_empty() && c.here.is_some())
    });
    (!readable).then(|| shown(member))
}

/// Whether `command` is a line the reader gave up on as too deep, which is only a command read
/// already at a shallower depth (a program word with a blank in it is read again as a line, and the
/// same again): that command is judged, and nothing is lost. A line too deep for any other reason is
/// not so.
fn read_again(commands: &[Command], command: &Command) -> bool {
    let unquoted =
        |text: &str| -> String { text.chars().filter(|c| !matches!(c, '"' | '\'')).collect() };
    if command.depth <= crate::shell::MAX_DEPTH || command.words.len() != 1 {
        return false;
    }
    let line = unquoted(&command.words[0].text);
    commands.iter().any(|c| {
        c.depth <= crate::shell::MAX_DEPTH && {
            let words: Vec<&str> = c.words.iter().map(|w| w.text.as_str()).collect();
            unquoted(&words.join(" ")) == line
        }
    })
}

/// `"$SHELL" -c SCRIPT`: the user's shell by its variable, its script read by the shell reader.
fn users_shell(command: &Command) -> bool {
    matches!(
        command.words[0].text.as_str(),
        "$SHELL" | "${SHELL}" | "$BASH" | "${BASH}"
    ) && command.args().first().is_some_and(|w| {
        w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains('c')
    })
}

/// `$VENV/bin/python`, `${ROOT}/tool`, `$(dirname $0)/run.sh`: a program word whose folder alone
/// comes from a variable or a command's output, its own name written out (what follows a blank is
/// its arguments: a line read again from such a word, `$(dirname $0)/run.sh --check`).
fn named_program(text: &str) -> bool {
    let Some(after) = text.strip_prefix('$') else {
        return false;
    };
    // The end of the leading expansion.
    let end = if let Some(inner) = after.strip_prefix('(') {
        let mut level = 1usize;
        let mut close = None;
        for (i, c) in inner.char_indices() {
            match c {
                '(' => level += 1,
                ')' => {
                    level -= 1;
                    if level == 0 {
                        close = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        match close {
            Some(close) => 1 + close + 2,
            None => return false,
        }
    } else if let Some(inner) = after.strip_prefix('{') {
        match inner.find('}') {
            Some(close) => 1 + close + 2,
            None => return false,
        }
    } else {
        1 + after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len())
    };
    let rest = &text[end.min(text.len())..];
    let rest = rest.split_whitespace().next().unwrap_or("");
    let Some(path) = rest.strip_prefix('/') else {
        return false;
    };
    let name = path.rsplit('/').next().unwrap_or(path);
    !name.is_empty()
        && !path.contains(|c: char| c.is_whitespace() || "$`(){}*?[".contains(c))
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c))
}

/// `$(pyenv init -)` (or what is left of it once read too deep: `pyenv init -`): the output of a tool
/// that prints its own shell set-up.
fn sets_up_shell(text: &str) -> bool {
    let inner = text
        .strip_prefix("$(")
        .or_else(|| text.strip_prefix('`'))
        .unwrap_or(text)
        .trim_start();
    let program = inner.split_whitespace().next().unwrap_or("");
    let program = program.trim_end_matches([')', '`']);
    let name = program.rsplit('/').next().unwrap_or(program);
    SETUP_PRINTERS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_whose_folder_alone_is_unknown_is_known_by_its_name() {
        assert!(named_program("$VENV/bin/python"));
        assert!(named_program("${ROOT}/tools/run.sh"));
        assert!(named_program("$(dirname $0)/run.sh"));
        assert!(named_program("$(dirname \"$0\")/run.sh --check"));
        assert!(!named_program("$CMD"));
        assert!(!named_program("$(cat cmd.txt)"));
        assert!(!named_program("$DIR/$TOOL"));
        assert!(!named_program("$X/bin/*"));
        assert!(!named_program("/usr/bin/$TOOL"));
    }

    #[test]
    fn shell_setup_printers_are_told() {
        assert!(sets_up_shell("$(pyenv init -)"));
        assert!(sets_up_shell("pyenv init -"));
        assert!(sets_up_shell("$(/opt/homebrew/bin/brew shellenv)"));
        assert!(!sets_up_shell("$(cat cmd.txt)"));
        assert!(!sets_up_shell("$(curl -fsSL x)"));
    }
}
