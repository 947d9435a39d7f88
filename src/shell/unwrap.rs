//! Commands that run another command: the command they run is what a judge must see.
//!
//! `sudo rm x` runs `rm x`; `sh -c 'rm x'`, `eval`, `watch` and `trap` run their argument as a script;
//! `env`, `nice`, `timeout`, `xargs`, `find -exec` and their kind run the words after their own options.
//! Each wrapper is taken off, as many times as they are stacked, and the command inside read in its place.

use super::{Command, Env, MAX_DEPTH, Word, parse_into};

/// The shells: `-c SCRIPT` runs the script; with no script and no file, they run their input.
pub const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "yash", "posh", "rbash",
];

/// Wrappers that run the rest of their words as a command, after options; each with its options that
/// take a value (as separate words), and how many plain words come before the command.
const PLAIN: &[(&str, &[&str], usize)] = &[
    ("nice", &["-n", "--adjustment"], 0),
    ("nohup", &[], 0),
    ("time", &["-f", "-o", "--format", "--output"], 0),
    ("command", &[], 0),
    ("builtin", &[], 0),
    ("exec", &["-a"], 0),
    ("stdbuf", &["-i", "-o", "-e"], 0),
    ("setsid", &[], 0),
    ("ionice", &["-c", "-n", "-p", "-P", "-u"], 0),
    ("chrt", &[], 1),
    ("taskset", &[], 1),
    ("timeout", &["-s", "-k", "--signal", "--kill-after"], 1),
    (
        "flock",
        &["-w", "-E", "--timeout", "--conflict-exit-code"],
        1,
    ),
    ("unbuffer", &[], 0),
    ("busybox", &[], 0),
    ("doas", &["-u", "-C"], 0),
    (
        "sudo",
        &[
            "-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-R",
        ],
        0,
    ),
    ("runuser", &["-u", "-g", "-G", "-w"], 0),
    ("catchsegv", &[], 0),
    ("strace", &["-o", "-e", "-p", "-s", "-u", "-E"], 0),
    ("ltrace", &["-o", "-e", "-p", "-s", "-u"], 0),
    ("firejail", &[], 0),
    ("proot", &[], 0),
    ("fakeroot", &[], 0),
    ("torsocks", &[], 0),
    ("nsenter", &["-t", "-S", "-G"], 0),
    ("unshare", &[], 0),
    (
        "systemd-run",
        &["-p", "-u", "-E", "--unit", "--property", "--setenv"],
        0,
    ),
];

/// Takes the wrappers off `command` and appends what it runs to `out` (the command itself when it is
/// not a wrapper).
pub(crate) fn unwrap_into(mut command: Command, env: &mut Env, out: &mut Vec<Command>) {
    let depth = command.depth;
    if depth > MAX_DEPTH {
        out.push(command);
        return;
    }
    // A program word with blanks in it came from an expansion (`W='rm -rf ~'; $W`): the shell splits
    // it into words, read here as a line of its own.
    if let Some(first) = command.words.first()
        && first.text.contains([' ', '\t', '\n'])
    {
        let line = words_line(&command.words);
        parse_into(&line, &mut env.clone(), depth + 1, out);
        out.push(command);
        return;
    }
    let program = command.program().to_string();
    let args: Vec<Word> = command.args().to_vec();
    if SHELLS.contains(&program.as_str()) {
        shell(command, &args, env, out);
        return;
    }
    if let Some((_, valued, plain)) = PLAIN.iter().find(|(name, _, _)| *name == program) {
        // `command -v x`, `command -V x`: a question, not a run.
        if program == "command"
            && args
                .first()
                .is_some_and(|a| a.text.starts_with("-v") || a.text.starts_with("-V"))
        {
            out.push(command);
            return;
        }
        if (program == "sudo" || program == "doas")
            && args.iter().any(|a| a.text == "-s" || a.text == "-i")
        {
            // `sudo -s CMD`, `sudo -i CMD`: the user's shell runs CMD as a script.
            let rest: Vec<Word> = args
                .iter()
                .skip_while(|a| a.text.starts_with('-'))
                .cloned()
                .collect();
            parse_into(&words_line(&rest), env, depth + 1, out);
            out.push(command);
            return;
        }
        let rest = after_options(&args, valued, *plain);
        rerun(&command, rest, env, out);
        out.push(command);
        return;
    }
    match program.as_str() {
        "env" => {
            let mut rest = Vec::new();
            let mut chdir = None;
            let mut i = 0;
            while i < args.len() {
                let text = args[i].text.as_str();
                if text == "--" {
                    i += 1;
                    break;
                }
                if text == "-S" || text == "--split-string" {
                    // `env -S 'rm -rf x'`: the string is split into a command line.
                    if let Some(line) = args.get(i + 1) {
                        parse_into(&line.text, env, depth + 1, out);
                    }
                    i += 2;
                    continue;
                }
                if let Some(line) = text
                    .strip_prefix("-S")
                    .or_else(|| text.strip_prefix("--split-string="))
                {
                    parse_into(line, env, depth + 1, out);
                    i += 1;
                    continue;
                }
                if ["-C", "--chdir"].contains(&text) {
                    chdir = args.get(i + 1).cloned();
                    i += 2;
                    continue;
                }
                if let Some(dir) = text.strip_prefix("--chdir=") {
                    chdir = Some(Word {
                        text: dir.to_string(),
                        ..args[i].clone()
                    });
                    i += 1;
                    continue;
                }
                if ["-u", "--unset"].contains(&text) {
                    i += 2;
                    continue;
                }
                if text.starts_with('-') || super::assignment(text).is_some() {
                    i += 1;
                    continue;
                }
                break;
            }
            rest.extend_from_slice(args.get(i..).unwrap_or(&[]));
            // `env -C DIR CMD`: CMD runs in DIR, read between a `pushd DIR` and a `popd` so that its
            // relative paths are judged from there (found attacking issue 29).
            if let Some(dir) = &chdir {
                out.push(Command {
                    words: vec![plain_word("pushd"), dir.clone()],
                    depth: depth + 1,
                    ..Command::default()
                });
            }
            rerun(&command, rest, env, out);
            if chdir.is_some() {
                out.push(Command {
                    words: vec![plain_word("popd")],
                    depth: depth + 1,
                    ..Command::default()
                });
            }
            out.push(command);
        }
        "xargs" | "parallel" => {
            let valued: &[&str] = &[
                "-a",
                "-d",
                "-E",
                "-e",
                "-I",
                "-L",
                "-l",
                "-n",
                "-P",
                "-s",
                "--arg-file",
                "--delimiter",
                "--max-args",
                "--max-procs",
                "-j",
                "--jobs",
                "-S",
                "--sshlogin",
            ];
            let mut rest = after_options(&args, valued, 0);
            if program == "parallel"
                && let Some(at) = rest.iter().position(|w| w.text.starts_with(":::"))
            {
                // `parallel rm -rf {1} ::: /`: the values after `:::` are its arguments.
                let values: Vec<Word> = rest[at + 1..]
                    .iter()
                    .filter(|w| !w.text.starts_with(":::"))
                    .cloned()
                    .collect();
                rest.truncate(at);
                rest.extend(values);
            }
            if rest.is_empty() {
                rest.push(plain_word("echo"));
            }
            let inner = Command {
                words: rest,
                fed: true,
                depth: depth + 1,
                ..Command::default()
            };
            unwrap_into(inner, env, out);
            out.push(command);
        }
        "find" => {
            find(&command, &args, env, out);
            out.push(command);
        }
        "eval" => {
            parse_into(&words_line(&args), env, depth + 1, out);
            out.push(command);
        }
        "watch" => {
            let rest = after_options(&args, &["-n", "--interval", "-d", "-q"], 0);
            parse_into(&words_line(&rest), env, depth + 1, out);
            out.push(command);
        }
        "trap" => {
            if let Some(script) = args.iter().find(|a| !a.text.starts_with('-')) {
                parse_into(&script.text, env, depth + 1, out);
            }
            out.push(command);
        }
        "alias" => {
            for word in &args {
                if let Some((_, script)) = word.text.split_once('=') {
                    parse_into(script, env, depth + 1, out);
                }
            }
            out.push(command);
        }
        // `su USER -c SCRIPT`, `script -c SCRIPT`: the script is a command line.
        "su" | "script" => {
            if let Some(script) = args
                .iter()
                .position(|a| a.text == "-c" || a.text == "--command")
                .and_then(|at| args.get(at + 1))
            {
                parse_into(&script.text, env, depth + 1, out);
            }
            out.push(command);
        }
        "export" | "declare" | "typeset" | "local" | "readonly" => {
            for word in &args {
                if let Some((name, value)) = super::assignment(&word.text) {
                    env.vars.remove(name);
                    env.unknown.remove(name);
                    if value.len() > super::MAX_VALUE {
                        continue;
                    }
                    if word.known {
                        env.vars.insert(name.to_string(), value.to_string());
                    } else {
                        env.unknown.insert(name.to_string(), value.to_string());
                    }
                }
            }
            out.push(command);
        }
        _ => {
            // `$SHELL -c ...` and their kind: a program that is a variable naming a shell.
            if command.words.first().is_some_and(|w| !w.known)
                && args.iter().any(|a| {
                    a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('c')
                })
            {
                shell(command, &args, env, out);
                return;
            }
            command.words.shrink_to_fit();
            out.push(command);
        }
    }
}

/// A shell: `-c SCRIPT [NAME ARGS...]` reads SCRIPT (with `$0`, `$1`, ... from what follows); a here-
/// document or here-string is its script when it has neither `-c` nor a file.
fn shell(command: Command, args: &[Word], env: &mut Env, out: &mut Vec<Command>) {
    let depth = command.depth;
    let mut i = 0;
    let mut script_at = None;
    while i < args.len() {
        let text = args[i].text.as_str();
        if text == "--" {
            i += 1;
            break;
        }
        if text.starts_with('-') && !text.starts_with("--") && text.len() > 1 {
            if text.contains('c') {
                script_at = Some(i + 1);
                break;
            }
            // `-o NAME`, `-O NAME`: an option with its value.
            if text == "-o" || text == "-O" || text == "+o" || text == "+O" {
                i += 1;
            }
            i += 1;
            continue;
        }
        if text.starts_with("--") || text.starts_with('+') {
            i += 1;
            continue;
        }
        break;
    }
    match script_at {
        Some(at) => {
            if let Some(script) = args.get(at) {
                let mut inner = env.clone();
                for (n, word) in args
                    .get(at + 1..)
                    .unwrap_or(&[])
                    .iter()
                    .enumerate()
                    .take(10)
                {
                    if word.known {
                        inner.vars.insert(n.to_string(), word.text.clone());
                    }
                }
                let positional = args.get(at + 2..).unwrap_or(&[]);
                let all: Vec<String> = positional.iter().map(|w| w.text.clone()).collect();
                if positional.iter().all(|w| w.known) {
                    inner.vars.insert("@".into(), all.join(" "));
                    inner.vars.insert("*".into(), all.join(" "));
                }
                parse_into(&script.text, &mut inner, depth + 1, out);
            }
        }
        None if i >= args.len() => {
            if let Some(here) = &command.here {
                parse_into(here, &mut env.clone(), depth + 1, out);
            }
        }
        None => {}
    }
    out.push(command);
}

/// `find PATHS... -exec CMD {} ;`: the command it runs, its `{}` standing for the paths searched (what
/// it may be given), so that a judge sees which folders it reaches.
fn find(command: &Command, args: &[Word], env: &mut Env, out: &mut Vec<Command>) {
    let starts: Vec<Word> = args
        .iter()
        .take_while(|a| !a.text.starts_with('-') && a.text != "!" && a.text != "(")
        .cloned()
        .collect();
    let starts = if starts.is_empty() {
        vec![plain_word(".")]
    } else {
        starts
    };
    let mut i = 0;
    while i < args.len() {
        if matches!(
            args[i].text.as_str(),
            "-exec" | "-execdir" | "-ok" | "-okdir"
        ) {
            let mut words = Vec::new();
            i += 1;
            while i < args.len() && args[i].text != ";" && args[i].text != "+" {
                if args[i].text.contains("{}") {
                    // Every path below each start (`START/**`, a pattern that takes the start too):
                    // `find ~ -name '*.toml' -exec rm {} +` reaches the settings (found attacking
                    // issue 29), and what `-name` keeps cannot be told without walking.
                    words.extend(starts.iter().map(|start| Word {
                        text: format!("{}/**", start.text.trim_end_matches('/')),
                        glob: true,
                        ..start.clone()
                    }));
                } else {
                    words.push(args[i].clone());
                }
                i += 1;
            }
            if !words.is_empty() {
                let inner = Command {
                    words,
                    depth: command.depth + 1,
                    ..Command::default()
                };
                unwrap_into(inner, env, out);
            }
        }
        i += 1;
    }
}

/// The command a wrapper runs, with the wrapper's redirections and input, unwrapped in turn.
fn rerun(wrapper: &Command, words: Vec<Word>, env: &mut Env, out: &mut Vec<Command>) {
    if words.is_empty() {
        return;
    }
    let inner = Command {
        words,
        redirects: Vec::new(),
        here: wrapper.here.clone(),
        piped: wrapper.piped,
        depth: wrapper.depth + 1,
        fed: wrapper.fed,
    };
    unwrap_into(inner, env, out);
}

/// The words after a wrapper's options (`valued` take the next word as their value; a word joined to
/// its value, `-n5` or `--signal=KILL`, is one word) and after `plain` leading words of its own.
fn after_options(args: &[Word], valued: &[&str], plain: usize) -> Vec<Word> {
    let mut i = 0;
    while i < args.len() {
        let text = args[i].text.as_str();
        if text == "--" {
            i += 1;
            break;
        }
        if !text.starts_with('-') || text == "-" {
            break;
        }
        i += if valued.contains(&text) { 2 } else { 1 };
    }
    args.get(i + plain..).unwrap_or(&[]).to_vec()
}

/// Words joined back into a line, each quoted so that it reads as the same word.
fn words_line(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

fn plain_word(text: &str) -> Word {
    Word {
        text: text.to_string(),
        known: true,
        glob: false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Env, read};

    fn programs(line: &str) -> Vec<String> {
        let env = Env {
            home: Some("/home/u".into()),
            ..Env::default()
        };
        read(line, &env)
            .into_iter()
            .map(|c| {
                c.words
                    .iter()
                    .map(|w| w.text.clone())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    #[test]
    fn wrappers_are_taken_off() {
        for (line, inner) in [
            ("sudo -u root rm -rf x", "rm -rf x"),
            ("env -i A=1 rm -rf x", "rm -rf x"),
            ("nice -n 5 nohup rm -rf x", "rm -rf x"),
            ("timeout -s KILL 5 rm -rf x", "rm -rf x"),
            ("sh -c 'rm -rf x'", "rm -rf x"),
            ("bash -lc \"rm -rf x\"", "rm -rf x"),
            ("/bin/bash -c 'sudo rm -rf x'", "rm -rf x"),
            ("eval 'rm -rf x'", "rm -rf x"),
            ("watch -n 1 rm -rf x", "rm -rf x"),
            ("trap 'rm -rf x' EXIT", "rm -rf x"),
            ("xargs -0 rm -rf", "rm -rf"),
            ("find /a -name b -exec rm -rf {} +", "rm -rf /a/**"),
            ("bash -c '$1' _ 'rm -rf x'", "rm -rf x"),
            ("W='rm -rf x'; $W", "rm -rf x"),
            ("$SHELL -c 'rm -rf x'", "rm -rf x"),
            ("env -S 'rm -rf x'", "rm -rf x"),
            ("parallel rm -rf {1} ::: /", "rm -rf {1} /"),
            ("busybox rm -rf x", "rm -rf x"),
            ("command rm -rf x", "rm -rf x"),
        ] {
            let read = programs(line);
            assert!(read.iter().any(|c| c == inner), "{line}: {read:?}");
        }
        assert_eq!(programs("command -v rm"), vec!["command -v rm"]);
    }
}
