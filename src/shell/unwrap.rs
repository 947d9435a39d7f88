//! Commands that run another command: the command they run is what a judge must see.
//!
//! `sudo rm x` runs `rm x`; `sh -c 'rm x'`, `eval`, `watch` and `trap` run their argument as a script;
//! `env`, `nice`, `timeout`, `xargs`, `find -exec` and their kind run the words after their own options.
//! Each wrapper is taken off, as many times as they are stacked, and the command inside read in its place.

use super::command::{Command, Feed, Word, assignment, is_name, plain_word};
use super::context::{
    Ctx, Env, MAX_DEPTH, MAX_NAMES, parse_into, positional, set_variable, unknowable,
};
use super::input::{printf, read_input, words_line};

pub use super::input::SHELLS;

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
    ("chroot", &["--userspec", "--groups"], 1),
    ("npx", &["-p", "--package", "-c", "--call"], 0),
    ("bunx", &["-p", "--package"], 0),
    ("pnpx", &[], 0),
    ("doas", &["-u", "-C"], 0),
    // pkexec runs its command as another user (root by default), as sudo does.
    ("pkexec", &["--user"], 0),
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
/// not a wrapper). `feed` is what its input is given by the command before it in a pipeline.
pub(crate) fn unwrap_into(
    mut command: Command,
    env: &mut Env,
    out: &mut Vec<Command>,
    ctx: Ctx<'_>,
    feed: Option<&Feed>,
) {
    let depth = command.depth;
    if depth > MAX_DEPTH {
        out.push(command);
        return;
    }
    let Some(first) = command.words.first().cloned() else {
        out.push(command);
        return;
    };
    // A program word with blanks in it came from a quoted expansion (`"$W"`) or a wrapper's words
    // joined: read here as a line of its own, as the shell would if it were split.
    if first.known && first.text.contains([' ', '\t', '\n']) {
        let line = words_line(&command.words);
        parse_into(
            &line,
            &mut env.fork(ctx.budget),
            depth + 1,
            out,
            ctx.under(&command),
        );
        out.push(command);
        return;
    }
    let program = command.program().to_string();
    let args: Vec<Word> = command.args().to_vec();
    if !first.known {
        unknown_program(command, &args, env, out, ctx, feed);
        return;
    }
    if SHELLS.contains(&program.as_str()) {
        shell(command, &args, env, out, ctx, feed);
        return;
    }
    if super::interpreters::read(&command, env, out, ctx, feed) {
        out.push(command);
        return;
    }
    if let Some((_, _, valued)) = RUNNERS
        .iter()
        .find(|(name, sub, _)| *name == program && args.first().is_some_and(|a| a.text == *sub))
    {
        // `uv run CMD`, `bundle exec CMD`, ...: CMD, after the subcommand's options.
        let rest = after_options(&args[1..], valued, 0);
        rerun(&command, rest, env, out, ctx.under(&command), feed);
        out.push(command);
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
            parse_into(&words_line(&rest), env, depth + 1, out, ctx.under(&command));
            out.push(command);
            return;
        }
        let rest = after_options(&args, valued, *plain);
        // The shell's own words run in the shell itself; the others start a process.
        let inner = if IN_SHELL.contains(&program.as_str()) {
            ctx.within(&command)
        } else {
            ctx.under(&command)
        };
        rerun(&command, rest, env, out, inner, feed);
        out.push(command);
        return;
    }
    match program.as_str() {
        "env" => env_command(command, &args, env, out, ctx, feed),
        // `sem` is GNU parallel's `parallel --semaphore`.
        "xargs" | "parallel" | "sem" => {
            fed(&command, &program, &args, env, out, ctx, feed);
            out.push(command);
        }
        "find" => {
            find(&command, &args, env, out, ctx);
            out.push(command);
        }
        "eval" if !args.is_empty() && args.iter().all(|a| is_output(&a.text)) => {
            // `eval "$(curl x)"`: what runs is a command's output (read already, where it ran).
            let line = words_line(&args);
            let why = format!("the line eval runs is {}", from(&line));
            out.push(unknowable(&line, why, depth + 1, ctx.within(&command)));
            out.push(command);
        }
        "eval" => {
            // `eval` runs its words as a line, in the shell itself.
            parse_into(
                &words_line(&args),
                env,
                depth + 1,
                out,
                ctx.within(&command),
            );
            out.push(command);
        }
        "source" | "." => {
            // `source <(curl x)`, `. $(...)`: a script that cannot be seen.
            if let Some(file) = args.first()
                && !file.known
            {
                let why = format!("the script {program} reads comes from {}", from(&file.text));
                out.push(unknowable(&file.text, why, depth + 1, ctx.within(&command)));
            }
            out.push(command);
        }
        "ssh" => {
            ssh(&command, &args, env, out, ctx);
            out.push(command);
        }
        "watch" => {
            let rest = after_options(
                &args,
                &["-n", "--interval", "-d", "-q", "--differences", "-c"],
                0,
            );
            parse_into(&words_line(&rest), env, depth + 1, out, ctx.under(&command));
            out.push(command);
        }
        "trap" => {
            // What it sets runs later (at exit, on a signal), maybe never.
            if let Some(script) = args.iter().find(|a| !a.text.starts_with('-')) {
                let later = Ctx {
                    subshell: true,
                    conditional: true,
                    ..ctx
                };
                parse_into(
                    &script.text,
                    &mut env.fork(ctx.budget),
                    depth + 1,
                    out,
                    later,
                );
            }
            out.push(command);
        }
        "alias" => {
            for word in &args {
                if let Some((name, script)) = word.text.split_once('=') {
                    // Kept as a function of the same name that passes its words on, so that the
                    // alias used later is read with its arguments (`alias r=rm; r -rf ~`).
                    let functions = &mut env.functions;
                    if !name.is_empty()
                        && (functions.contains_key(name) || functions.len() < MAX_NAMES)
                    {
                        functions.insert(name.to_string(), format!("{script} \"$@\""));
                    }
                    parse_into(
                        script,
                        &mut env.fork(ctx.budget),
                        depth + 1,
                        out,
                        ctx.under(&command),
                    );
                }
            }
            out.push(command);
        }
        // `su USER -c SCRIPT`, `script -c SCRIPT`: the script is a command line.
        "su" | "script" => {
            if let Some(script) = args
                .iter()
                .position(|a| {
                    // `-c`, `--command`, or a bundle ending in it (`script -qc`).
                    a.text == "--command"
                        || (a.text.starts_with('-')
                            && !a.text.starts_with("--")
                            && a.text.ends_with('c'))
                })
                .and_then(|at| args.get(at + 1))
            {
                parse_into(
                    &script.text,
                    &mut env.fork(ctx.budget),
                    depth + 1,
                    out,
                    ctx.under(&command),
                );
            }
            out.push(command);
        }
        // `echo 'rm x' | at now`, `at now <<EOF`: a script run later.
        "at" | "batch" => {
            let script = command.here.clone().or(match feed {
                Some(Feed::Text(text)) => Some(text.clone()),
                _ => None,
            });
            if let Some(script) = script {
                let later = Ctx {
                    subshell: true,
                    conditional: true,
                    ..ctx
                };
                parse_into(&script, &mut env.fork(ctx.budget), depth + 1, out, later);
            }
            out.push(command);
        }
        "read" => {
            read_into(&command, &args, env);
            out.push(command);
        }
        // `set -- a b` (or `set a b`): the positional parameters.
        "set"
            if args
                .first()
                .is_some_and(|a| a.text == "--" || !a.text.starts_with(['-', '+'])) =>
        {
            let from = usize::from(args[0].text == "--");
            positional(env, Some(args[from..].to_vec()));
            out.push(command);
        }
        // `printf -v NAME FORMAT ARGS`: NAME set to what printf would print.
        "printf" if args.first().is_some_and(|a| a.text == "-v") && args.len() >= 3 => {
            let name = args[1].text.clone();
            let rest: Vec<&str> = args[3..].iter().map(|w| w.text.as_str()).collect();
            let set = Word {
                text: format!("{name}={}", printf(&args[2].text, &rest)),
                known: args[1..].iter().all(|w| w.known),
                glob: false,
            };
            set_variable(env, &set);
            out.push(command);
        }
        "export" | "declare" | "typeset" | "local" | "readonly" => {
            for word in &args {
                set_variable(env, word);
            }
            out.push(command);
        }
        _ => {
            command.words.shrink_to_fit();
            out.push(command);
        }
    }
}

/// Tools whose subcommand runs the rest of their words as a command (a project's environment around
/// it), each with the subcommand's options that take a value.
const RUNNERS: &[(&str, &str, &[&str])] = &[
    (
        "uv",
        "run",
        &[
            "--with",
            "--python",
            "-p",
            "--project",
            "--directory",
            "--group",
        ],
    ),
    ("poetry", "run", &[]),
    ("pipenv", "run", &[]),
    ("pdm", "run", &[]),
    ("hatch", "run", &[]),
    ("bundle", "exec", &[]),
    ("npm", "exec", &["-p", "--package", "-c", "--call"]),
    ("pnpm", "exec", &[]),
    ("pnpm", "dlx", &[]),
    ("yarn", "exec", &[]),
    ("yarn", "dlx", &["-p", "--package"]),
    ("conda", "run", &["-n", "--name", "-p", "--prefix"]),
];

/// Wrappers that run their command in the shell itself, not in a process of their own.
const IN_SHELL: &[&str] = &["command", "builtin", "time", "exec"];

/// Where an unknown word's text says it came from, for a reason: `$(cat x)` is a command's output,
/// `/dev/fd/...` a process substitution's, `$X` a variable's.
fn from(text: &str) -> String {
    if let Some(inner) = text.strip_prefix("/dev/fd/") {
        return format!("the output of {inner}");
    }
    if text.starts_with("$(") || text.starts_with('`') {
        return format!("the output of {text}");
    }
    format!("{text}, which cannot be known")
}

/// Whether an unknown word is all of it a command's output (`$(curl x)`): read again as a line, it
/// would run that command twice.
fn is_output(text: &str) -> bool {
    (text.starts_with("$(") && text.ends_with(')') && !text.starts_with("$(("))
        || (text.len() > 1 && text.starts_with('`') && text.ends_with('`'))
}

/// A command whose program word is not known (`$CMD x`, `$(which rm) x`): what runs cannot be told.
/// `$SHELL -c SCRIPT` and its kind (a variable naming a shell, with `-c`) is read as a shell too.
fn unknown_program(
    mut command: Command,
    args: &[Word],
    env: &mut Env,
    out: &mut Vec<Command>,
    ctx: Ctx<'_>,
    feed: Option<&Feed>,
) {
    let text = command.words[0].text.clone();
    let shell_variable = ["SHELL", "BASH", "ZSH"]
        .iter()
        .any(|name| text == format!("${name}") || text == format!("${{{name}}}"));
    if shell_variable {
        // `$SHELL -c SCRIPT`, `curl x | $SHELL`: the user's shell, read as a shell.
        shell(command, args, env, out, ctx, feed);
        return;
    }
    let has_script = args
        .iter()
        .any(|a| a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('c'));
    if has_script {
        // `$X -c SCRIPT`: whatever the program, a script given so is read as one.
        shell_script(&command, args, env, out, ctx);
    }
    command.unknown_from = Some(format!("the program is {}", from(&text)));
    out.push(command);
}

/// A shell (`sh`, `bash`, ...): its script read where it can be seen (see [`shell_script`]); a script
/// it reads from input that cannot be known is a command that cannot be known.
fn shell(
    command: Command,
    args: &[Word],
    env: &mut Env,
    out: &mut Vec<Command>,
    ctx: Ctx<'_>,
    feed: Option<&Feed>,
) {
    match shell_script(&command, args, env, out, ctx) {
        Script::Read => {}
        Script::File(file) if !file.known => {
            // `bash <(curl x)`, `sh $(...)`: the script is a file that cannot be seen.
            let why = format!(
                "the script {} runs comes from {}",
                command.program(),
                from(&file.text)
            );
            out.push(unknowable(
                &file.text,
                why,
                command.depth + 1,
                ctx.under(&command),
            ));
        }
        Script::File(_) => {}
        Script::Input => {
            let program = command.program().to_string();
            read_input(
                &command,
                &program,
                env,
                out,
                ctx,
                feed,
                &mut |line, env, out| {
                    parse_into(line, env, command.depth + 1, out, ctx.under(&command));
                },
            );
        }
    }
    out.push(command);
}

/// Where a shell's script is.
enum Script {
    /// Given with `-c`, and read.
    Read,
    /// In a file, named by this word.
    File(Word),
    /// Read from its input.
    Input,
}

/// `-c SCRIPT [NAME ARGS...]` reads SCRIPT (with `$0`, `$1`, ... `"$@"` from what follows); otherwise
/// the script is a file named by its first word, or its input.
fn shell_script(
    command: &Command,
    args: &[Word],
    env: &mut Env,
    out: &mut Vec<Command>,
    ctx: Ctx<'_>,
) -> Script {
    let depth = command.depth;
    let mut i = 0;
    let mut script_at = None;
    let mut stdin = false;
    while i < args.len() {
        let text = args[i].text.as_str();
        if text == "--" || text == "-" {
            i += 1;
            stdin |= text == "-";
            break;
        }
        if text.starts_with('-') && !text.starts_with("--") && text.len() > 1 {
            if text.contains('c') {
                script_at = Some(i + 1);
                break;
            }
            stdin |= text.contains('s');
            // `-o NAME`, `-O NAME`: an option with its value.
            if text == "-o" || text == "-O" {
                i += 1;
            }
            i += 1;
            continue;
        }
        if text.starts_with("--") || text.starts_with('+') {
            if text == "+o" || text == "+O" {
                i += 1;
            }
            i += 1;
            continue;
        }
        break;
    }
    let Some(at) = script_at else {
        return match args.get(i) {
            Some(file) if !stdin => Script::File(file.clone()),
            _ => Script::Input,
        };
    };
    let Some(script) = args.get(at) else {
        if command.fed {
            // `xargs sh -c`: the script itself is the input.
            let why = format!(
                "the script {} -c runs is its input, given to xargs",
                command.program()
            );
            let text = format!("(input of {} -c)", command.program());
            out.push(unknowable(&text, why, depth + 1, ctx.under(command)));
        }
        return Script::Read;
    };
    let mut inner = env.fork(ctx.budget);
    positional(&mut inner, Some(args.get(at + 2..).unwrap_or(&[]).to_vec()));
    inner.vars.remove("0");
    if let Some(name) = args.get(at + 1).filter(|w| w.known) {
        inner.vars.insert("0".into(), name.text.clone());
    }
    if script.known {
        parse_into(&script.text, &mut inner, depth + 1, out, ctx.under(command));
    } else {
        // `sh -c "$X"`: a script that cannot be known (read as far as it goes).
        let start = out.len();
        if !is_output(&script.text) {
            parse_into(&script.text, &mut inner, depth + 1, out, ctx.under(command));
        }
        if out[start..].iter().all(|c| c.unknown_from.is_none()) {
            let why = format!(
                "the script {} -c runs is {}",
                command.program(),
                from(&script.text)
            );
            out.push(unknowable(&script.text, why, depth + 1, ctx.under(command)));
        }
    }
    Script::Read
}

/// `env [OPTIONS] [NAME=VALUE...] CMD`: the command it runs; `-S LINE` splits a line into one, `-C
/// DIR` runs it in DIR.
/// The most words `env -S` strings may split into, and how many of them are followed, before the
/// rest is left unread (as what cannot be known).
const MAX_SPLIT_WORDS: usize = 4096;
const MAX_SPLICES: usize = 16;

fn env_command(
    command: Command,
    args: &[Word],
    env: &mut Env,
    out: &mut Vec<Command>,
    ctx: Ctx<'_>,
    feed: Option<&Feed>,
) {
    let depth = command.depth;
    let inner_ctx = ctx.under(&command);
    let mut rest = Vec::new();
    let mut chdir = None;
    let mut args = args.to_vec();
    let mut splices = 0;
    let mut i = 0;
    while i < args.len() {
        let text = args[i].text.clone();
        let text = text.as_str();
        if text == "--" {
            i += 1;
            break;
        }
        // `env -S 'STRING' ARGS`: the string is split into words that take its place, options of
        // env's own among them (`env -S '-C dir' git ...`, `env -SPATH=/x git ...`), the rest after.
        let split = if text == "-S" || text == "--split-string" {
            args.get(i + 1).map(|w| (w.text.clone(), i + 2))
        } else {
            text.strip_prefix("-S")
                .or_else(|| text.strip_prefix("--split-string="))
                .map(|line| (line.to_string(), i + 1))
        };
        if let Some((line, after)) = split {
            splices += 1;
            let spliced: Vec<Word> = line.split_whitespace().map(plain_word).collect();
            if splices > MAX_SPLICES || args.len() + spliced.len() > MAX_SPLIT_WORDS {
                let why = "env -S strings nested past what hookd reads".to_string();
                out.push(unknowable(&line, why, depth + 1, inner_ctx));
                out.push(command);
                return;
            }
            args.splice(i..after.min(args.len()), spliced);
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
        if ["-u", "--unset", "-P"].contains(&text) {
            i += 2;
            continue;
        }
        if text.starts_with('-') || assignment(text).is_some() {
            i += 1;
            continue;
        }
        break;
    }
    rest.extend_from_slice(args.get(i..).unwrap_or(&[]));
    // `env -C DIR CMD`: CMD runs in DIR, read between a `pushd DIR` and a `popd` so that its
    // relative paths are judged from there (found attacking the guard).
    let mark = |words: Vec<Word>| Command {
        words,
        depth: depth + 1,
        subshell: true,
        conditional: command.conditional,
        ..Command::default()
    };
    if let Some(dir) = &chdir {
        out.push(mark(vec![plain_word("pushd"), dir.clone()]));
    }
    rerun(&command, rest, env, out, inner_ctx, feed);
    if chdir.is_some() {
        out.push(mark(vec![plain_word("popd")]));
    }
    out.push(command);
}

/// How many commands `xargs` or `parallel` given known input are read as (one per input line or
/// value), at most.
const MAX_FED: usize = 64;

/// `xargs CMD` and `parallel CMD`: CMD with the arguments they are given. `parallel ... ::: A B`
/// runs CMD once per value (`{}`, `{1}` standing for it, or it added at the end); `printf '/' |
/// xargs rm -rf` runs `rm -rf /`. Input that cannot be known leaves the command `fed`.
fn fed(
    command: &Command,
    program: &str,
    args: &[Word],
    env: &mut Env,
    out: &mut Vec<Command>,
    ctx: Ctx<'_>,
    feed: Option<&Feed>,
) {
    let valued: &[&str] = &[
        "-a",
        "-d",
        "-E",
        "-e",
        "-I",
        "-J",
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
        "--results",
        "--res",
        "--joblog",
        "--tmpdir",
        "--workdir",
        "--wd",
        "--delay",
        "--timeout",
        "--retries",
        "--colsep",
        "--tagstring",
        "--id",
    ];
    // `-I {}`, `-I{}`, `-i`, `--replace`: the string that stands for each input.
    // (`-J {}` is BSD xargs' own; `--replace=` with nothing after it is `{}`.) With `-a FILE` or
    // `--arg-file`, xargs reads its arguments from the file, not from what is piped to it.
    let mut replace: Option<String> = None;
    let mut from_file = false;
    for (at, arg) in args.iter().enumerate() {
        match arg.text.as_str() {
            "-I" | "-J" => replace = args.get(at + 1).map(|w| w.text.clone()),
            "-i" | "--replace" | "--replace=" => replace = Some("{}".into()),
            text if text.starts_with("-I") || text.starts_with("-J") => {
                replace = Some(text[2..].to_string())
            }
            text if text.starts_with("--replace=") => replace = Some(text[10..].to_string()),
            text if text.starts_with("-a") || text.starts_with("--arg-file") => from_file = true,
            _ => {}
        }
        if !arg.text.starts_with('-') {
            break;
        }
    }
    let mut rest = after_options(args, valued, 0);
    let mut values: Option<Vec<Word>> = None;
    if program == "parallel" {
        if let Some(at) = rest
            .iter()
            .position(|w| w.text == ":::" || w.text == ":::+")
        {
            // `parallel rm -rf {1} ::: /`: the values after `:::` are its arguments.
            let list: Vec<Word> = rest[at + 1..]
                .iter()
                .filter(|w| !w.text.starts_with(":::"))
                .cloned()
                .collect();
            rest.truncate(at);
            values = Some(list);
        } else if let Some(Feed::Text(text)) = feed {
            // `echo 'rm -rf /' | parallel bash -c {}`: one value per line of its input.
            values = Some(text.lines().map(plain_word).collect());
        }
        replace.get_or_insert_with(|| "{}".into());
    } else if let Some(Feed::Text(text)) = feed.filter(|_| !from_file) {
        let items: Vec<Word> = if replace.is_some() {
            text.lines().map(plain_word).collect()
        } else {
            text.split_whitespace().map(plain_word).collect()
        };
        values = Some(items);
    }
    let inner_ctx = Ctx {
        subshell: true,
        conditional: true,
        ..ctx
    };
    let base = Command {
        depth: command.depth + 1,
        subshell: true,
        conditional: true,
        ..Command::default()
    };
    let Some(values) = values else {
        if rest.is_empty() {
            rest.push(plain_word("echo"));
        }
        // The replacement string stands for input that cannot be known: a word holding it is
        // unknown, so that a shell's script made of input (`xargs -I{} bash -c {}`, or `bash -c
        // 'rm -rf {}'`, where a line of input is spliced into the code) is said to be one.
        if let Some(mark) = replace.as_deref().filter(|m| !m.is_empty()) {
            for word in rest.iter_mut().skip(1) {
                if word.text.contains(mark) {
                    word.known = false;
                }
            }
        }
        let inner = Command {
            words: rest,
            fed: true,
            ..base
        };
        unwrap_into(inner, env, out, inner_ctx, None);
        return;
    };
    if rest.is_empty() {
        // `parallel ::: 'rm x' 'ls'`: each value is a command line.
        for value in values.iter().take(MAX_FED) {
            parse_into(
                &value.text,
                &mut env.fork(ctx.budget),
                command.depth + 1,
                out,
                inner_ctx,
            );
        }
        return;
    }
    let placeholders = |w: &Word, value: &Word| -> Option<Word> {
        let marks: Vec<&str> = match &replace {
            Some(mark) if program == "parallel" => vec![mark.as_str(), "{1}", "{.}", "{/}", "{//}"],
            Some(mark) => vec![mark.as_str()],
            None => Vec::new(),
        };
        let mark = marks
            .iter()
            .find(|m| !m.is_empty() && w.text.contains(**m))?;
        Some(Word {
            text: w.text.replace(mark, &value.text),
            known: w.known && value.known,
            glob: w.glob || value.glob,
        })
    };
    if values.is_empty() {
        // `echo | xargs git reset --hard` (GNU xargs runs its command once, given input or not) and
        // `parallel git reset --hard :::`: the command as written, once.
        unwrap_into(
            Command {
                words: rest,
                ..base
            },
            env,
            out,
            inner_ctx,
            None,
        );
        return;
    }
    if program == "xargs" && replace.is_none() {
        // `xargs rm -rf` given `/ ~`: one command with all of them after its words.
        let mut words = rest.clone();
        words.extend(values.iter().take(MAX_FED * 4).cloned());
        unwrap_into(Command { words, ..base }, env, out, inner_ctx, None);
        return;
    }
    for value in values.iter().take(MAX_FED) {
        let mut replaced = false;
        let mut words: Vec<Word> = rest
            .iter()
            .map(|w| match placeholders(w, value) {
                Some(word) => {
                    replaced = true;
                    word
                }
                None => w.clone(),
            })
            .collect();
        if !replaced {
            words.push(value.clone());
        }
        if !ctx.budget.spend(words.len().saturating_mul(16)) {
            break;
        }
        let inner = Command {
            words,
            ..base.clone()
        };
        unwrap_into(inner, env, out, inner_ctx, None);
    }
}

/// `find PATHS... -exec CMD {} ;`: the command it runs, its `{}` standing for the paths searched (what
/// it may be given), so that a judge sees which folders it reaches.
fn find(command: &Command, args: &[Word], env: &mut Env, out: &mut Vec<Command>, ctx: Ctx<'_>) {
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
    let inner_ctx = Ctx {
        subshell: true,
        conditional: true,
        ..ctx
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
                    // `find ~ -name '*.toml' -exec rm {} +` reaches the settings (found attacking the
                    // guard), and what `-name` keeps cannot be told without walking.
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
                    subshell: true,
                    conditional: true,
                    ..Command::default()
                };
                unwrap_into(inner, env, out, inner_ctx, None);
            }
        }
        i += 1;
    }
}

/// The command a wrapper runs, with the wrapper's redirections and input, unwrapped in turn.
fn rerun(
    wrapper: &Command,
    words: Vec<Word>,
    env: &mut Env,
    out: &mut Vec<Command>,
    ctx: Ctx<'_>,
    feed: Option<&Feed>,
) {
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
        subshell: ctx.subshell,
        conditional: ctx.conditional,
        unknown_from: None,
    };
    unwrap_into(inner, env, out, ctx, feed);
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

/// `read [OPTIONS] NAME...`: each NAME set from the line read, when it is known (a here-string or a
/// here-document: `read -r X <<< "$HOME"`, found attacking the guard), the last taking what is left;
/// otherwise each NAME is one that cannot be known.
fn read_into(command: &Command, args: &[Word], env: &mut Env) {
    const VALUED: &[&str] = &["-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"];
    let mut names: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let text = args[i].text.as_str();
        if text == "--" {
            names.extend(args[i + 1..].iter().map(|w| w.text.as_str()));
            break;
        }
        if text.starts_with('-') && text.len() > 1 {
            i += if VALUED.contains(&text) { 2 } else { 1 };
            continue;
        }
        names.push(text);
        i += 1;
    }
    if names.is_empty() {
        names.push("REPLY");
    }
    let line = command
        .here
        .as_deref()
        .filter(|here| !here.contains(['$', '`']))
        .map(|here| here.lines().next().unwrap_or_default().to_string());
    let mut fields = line
        .as_deref()
        .map(|l| l.split_whitespace().collect::<Vec<_>>());
    for (n, name) in names.iter().enumerate() {
        if !is_name(name) || !env.may_set(name) {
            continue;
        }
        env.vars.remove(*name);
        env.unknown.remove(*name);
        match fields.as_mut() {
            Some(fields) => {
                let value = if n + 1 == names.len() {
                    fields.join(" ")
                } else if fields.is_empty() {
                    String::new()
                } else {
                    fields.remove(0).to_string()
                };
                if n + 1 == names.len() {
                    fields.clear();
                }
                env.vars.insert(name.to_string(), value);
            }
            None => {
                env.unknown.insert(name.to_string(), format!("${name}"));
            }
        }
    }
}

/// ssh's options that take a value (as the next word).
const SSH_VALUED: &[&str] = &[
    "-B", "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p",
    "-Q", "-R", "-S", "-W", "-w",
];

/// `ssh [OPTIONS] HOST CMD...`: the remote user's shell runs CMD's words, joined by blanks, as a line,
/// in the remote home. Read as `cd ~ && LINE`, so a relative path is placed in a home (where hookd
/// cannot tell whose files are) rather than in the local project. `-N` (no command), `-s` (a
/// subsystem) and `-W` (a forwarded port) run no shell line.
fn ssh(command: &Command, args: &[Word], env: &mut Env, out: &mut Vec<Command>, ctx: Ctx<'_>) {
    let options_end = args
        .iter()
        .position(|a| !a.text.starts_with('-') || a.text == "--")
        .unwrap_or(args.len());
    if args[..options_end]
        .iter()
        .any(|a| a.text.starts_with("-N") || a.text.starts_with("-s") || a.text == "-W")
    {
        return;
    }
    let remote = after_options(args, SSH_VALUED, 1);
    if remote.is_empty() {
        return;
    }
    let line = format!("cd ~ && {}", words_line(&remote));
    parse_into(
        &line,
        &mut env.fork(ctx.budget),
        command.depth + 1,
        out,
        ctx.under(command),
    );
}

#[cfg(test)]
mod tests;
