//! Code given to an interpreter on the command line (`python3 -c`, `node -e`, `perl -e`, `ruby -e`,
//! `php -r`, `deno eval`, `bun -e`, `lua -e`, an `awk` program), or fed to it (`python3 - <<EOF`,
//! `echo CODE | node`): the shell commands it runs, and the files it deletes without a shell.
//!
//! A pragmatic scanner over the code's string literals, not a parser of each language: it finds the
//! calls that run a command (`os.system("...")`, `subprocess.run([...])`, `execSync(...)`, `system`,
//! backquotes, `%x()`, awk's `system()` and `print | "sh"`) and reads their argument as a shell line
//! (a string) or as a command's words (a list of strings); it turns deletes made without a shell
//! (`shutil.rmtree(P)`, `fs.rmSync(P, {recursive: true})`, `FileUtils.rm_rf(P)`, `unlink`) into the
//! `rm` or `rmdir` they amount to, so that a judge's rules need not know every language. A literal
//! it can read is a known word; any other expression is an unknown one (its text, not known), and a
//! command to run that is no literal at all is a command that cannot be known. Its work is linear in
//! the code, with a bound on the calls it reads.

use super::unwrap::{Feed, read_input, unwrap_into};
use super::{Command, Ctx, Env, Word, parse_into, plain_word, unknowable};

/// How many calls of one piece of code are read, at most.
const MAX_CALLS: usize = 64;
/// How many tokens one call's arguments may hold before the rest is not read.
const MAX_ARG_TOKENS: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Python,
    Js,
    Perl,
    Ruby,
    Php,
    Lua,
    Awk,
}

/// The language `program` runs, by its name (`python3.12`, `nodejs`, `gawk`).
fn language(program: &str) -> Option<Lang> {
    let base = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match base {
        "python" | "pypy" => Lang::Python,
        "node" | "nodejs" | "deno" | "bun" => Lang::Js,
        "perl" => Lang::Perl,
        "ruby" => Lang::Ruby,
        "php" => Lang::Php,
        "lua" | "luajit" => Lang::Lua,
        "awk" | "gawk" | "mawk" | "nawk" => Lang::Awk,
        _ => return None,
    })
}

/// Reads the code `command` runs, when it is an interpreter's, into `out` (one level deeper, each
/// command in a process of its own). False when it is no interpreter.
pub(crate) fn read(
    command: &Command,
    env: &mut Env,
    out: &mut Vec<Command>,
    ctx: Ctx<'_>,
    feed: Option<&Feed>,
) -> bool {
    let program = command.program().to_string();
    let Some(lang) = language(&program) else {
        return false;
    };
    let args = command.args();
    match code_of(lang, &program, args) {
        Code::Given(codes) => {
            for code in codes {
                scan(lang, &code, command, env, out, ctx);
            }
        }
        Code::File => {}
        Code::Input => {
            read_input(
                command,
                &program,
                env,
                out,
                ctx,
                feed,
                &mut |code, env, out| scan_text(lang, code, command, env, out, ctx),
            );
        }
    }
    true
}

/// Where an interpreter's code is.
enum Code {
    /// On the command line (`-c`, `-e`, awk's program).
    Given(Vec<Word>),
    /// In a file (or a module): not read here.
    File,
    /// Its input.
    Input,
}

/// The code given to `program` in `args`.
fn code_of(lang: Lang, program: &str, args: &[Word]) -> Code {
    if lang == Lang::Awk {
        return awk_program(args);
    }
    if program == "deno" {
        // `deno eval CODE`; `deno run -` reads its input.
        return match args.first().map(|w| w.text.as_str()) {
            Some("eval") => args
                .iter()
                .skip(1)
                .find(|w| !w.text.starts_with('-'))
                .map_or(Code::File, |w| Code::Given(vec![w.clone()])),
            Some("run") if args.iter().any(|w| w.text == "-") => Code::Input,
            _ => Code::File,
        };
    }
    let flags: &[&str] = match lang {
        Lang::Python => &["-c"],
        Lang::Js => &["-e", "--eval", "-p", "--print"],
        Lang::Perl | Lang::Ruby => &["-e", "-E"],
        Lang::Php => &["-r"],
        Lang::Lua => &["-e"],
        Lang::Awk => &[],
    };
    // Options that take the next word as their value, which is no code and no file.
    let valued: &[&str] = match lang {
        Lang::Python => &["-W", "-X", "-m"],
        Lang::Js => &["-r", "--require", "--import", "--loader"],
        Lang::Perl => &["-I", "-M", "-m"],
        Lang::Ruby => &["-I", "-r", "-C"],
        Lang::Php => &["-d", "-c"],
        Lang::Lua => &["-l"],
        Lang::Awk => &[],
    };
    let mut codes = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let text = args[i].text.as_str();
        if text == "--" {
            break;
        }
        if text == "-" {
            return Code::Input;
        }
        if lang == Lang::Python && text == "-m" {
            return Code::File;
        }
        if let Some(flag) = flags.iter().find(|f| text == **f) {
            let _ = flag;
            if let Some(code) = args.get(i + 1) {
                codes.push(code.clone());
            }
            if lang == Lang::Python {
                // What follows `-c CODE` are its arguments.
                break;
            }
            i += 2;
            continue;
        }
        if let Some(value) = text
            .strip_prefix("--eval=")
            .or(text.strip_prefix("--print="))
        {
            codes.push(Word {
                text: value.to_string(),
                ..args[i].clone()
            });
            i += 1;
            continue;
        }
        if text.starts_with('-') && !text.starts_with("--") && text.len() > 1 {
            // Bundled short options ending in the code's flag (`perl -ne CODE`, `perl -le`,
            // `python3 -Bc CODE`), or joined to it (`perl -e'CODE'`).
            let letters = &text[1..];
            let code_letter = flags.iter().find_map(|f| {
                let letter = f.strip_prefix('-').filter(|l| l.len() == 1)?;
                letters.find(letter).map(|at| (at, letter.len()))
            });
            if let Some((at, len)) = code_letter
                && letters[..at].chars().all(|c| c.is_ascii_alphabetic())
            {
                let joined = &letters[at + len..];
                if joined.is_empty() {
                    if let Some(code) = args.get(i + 1) {
                        codes.push(code.clone());
                    }
                    i += 2;
                } else {
                    codes.push(Word {
                        text: joined.to_string(),
                        ..args[i].clone()
                    });
                    i += 1;
                }
                if lang == Lang::Python {
                    break;
                }
                continue;
            }
            i += if valued.contains(&text) { 2 } else { 1 };
            continue;
        }
        if text.starts_with("--") {
            i += 1;
            continue;
        }
        // A script's file: its arguments follow.
        return if codes.is_empty() {
            Code::File
        } else {
            Code::Given(codes)
        };
    }
    if codes.is_empty() {
        Code::Input
    } else {
        Code::Given(codes)
    }
}

/// An awk program: the first word that is no option (`-f FILE` gives it in a file).
fn awk_program(args: &[Word]) -> Code {
    let mut i = 0;
    let mut codes = Vec::new();
    while i < args.len() {
        let text = args[i].text.as_str();
        match text {
            "--" => {
                i += 1;
                break;
            }
            "-f" | "--file" => return Code::File,
            "-F" | "-v" | "--assign" | "--field-separator" => i += 2,
            "-e" | "--source" => {
                if let Some(code) = args.get(i + 1) {
                    codes.push(code.clone());
                }
                i += 2;
            }
            _ if text.starts_with('-') && text.len() > 1 => i += 1,
            _ => break,
        }
    }
    if codes.is_empty()
        && let Some(program) = args.get(i)
    {
        codes.push(program.clone());
    }
    if codes.is_empty() {
        Code::File
    } else {
        Code::Given(codes)
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A string literal: its text, and whether all of it is known (no interpolation).
    Str(String, bool),
    /// A command in backquotes (perl, ruby, php, a shell's): its text, known or not.
    Run(String, bool),
    /// A name, with its dotted or `::` qualifiers (`os.path.join`, `File::Path::rmtree`).
    Name(String),
    Punct(char),
    /// Anything else (a number, an operator's other characters), as written.
    Other(String),
}

/// What one call found in the code does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Does {
    /// Runs its first argument: a string as a shell line, a list as a command's words (a list's
    /// first string as a line with `shell=True`); several arguments (perl's, ruby's `system("rm",
    /// "-rf", "/")`) are a command's words.
    Run,
    /// Runs its first argument, a program, with the list that follows as its arguments (node's
    /// `spawn("rm", ["-rf", "/"])`).
    Spawn,
    /// `os.execvp(file, [argv0, args...])`: the list is the command's words.
    Exec,
    /// Deletes its arguments, as `rm` with these options.
    Delete(&'static str),
    /// Deletes its first argument: `rm -r` when the options it is given say `recursive`, else
    /// `rmdir` (node's `fs.rmdirSync`, `Deno.remove`) or `rm` (`fs.rmSync`).
    DeleteOptions(&'static str),
    Rmdir,
}

/// A call that runs or deletes: its names (as written with their qualifiers), its last part alone
/// (accepted also under another qualifier, or none) when the code mentions `context`.
struct Call {
    lang: Lang,
    names: &'static [&'static str],
    bare: Option<(&'static str, &'static str)>,
    does: Does,
}

const CALLS: &[Call] = &[
    // Python
    Call {
        lang: Lang::Python,
        names: &["os.system", "os.popen", "pty.spawn", "commands.getoutput"],
        bare: Some(("system", "import")),
        does: Does::Run,
    },
    Call {
        lang: Lang::Python,
        names: &[
            "subprocess.run",
            "subprocess.call",
            "subprocess.check_call",
            "subprocess.check_output",
            "subprocess.Popen",
            "subprocess.getoutput",
            "subprocess.getstatusoutput",
        ],
        bare: None,
        does: Does::Run,
    },
    Call {
        lang: Lang::Python,
        names: &[
            "check_output",
            "check_call",
            "Popen",
            "getoutput",
            "getstatusoutput",
            "popen",
        ],
        bare: None,
        does: Does::Run,
    },
    Call {
        lang: Lang::Python,
        names: &[
            "os.execvp",
            "os.execv",
            "os.execvpe",
            "os.execve",
            "os.spawnvp",
            "os.spawnv",
        ],
        bare: None,
        does: Does::Exec,
    },
    Call {
        lang: Lang::Python,
        names: &["shutil.rmtree", "rmtree"],
        bare: None,
        does: Does::Delete("-r"),
    },
    Call {
        lang: Lang::Python,
        names: &["os.remove", "os.unlink"],
        bare: None,
        does: Does::Delete(""),
    },
    Call {
        lang: Lang::Python,
        names: &["os.rmdir", "os.removedirs"],
        bare: None,
        does: Does::Rmdir,
    },
    // JavaScript (node, deno, bun)
    Call {
        lang: Lang::Js,
        names: &["execSync", "child_process.exec", "child_process.execSync"],
        bare: Some(("exec", "child_process")),
        does: Does::Run,
    },
    Call {
        lang: Lang::Js,
        names: &[
            "spawnSync",
            "execFileSync",
            "child_process.spawn",
            "child_process.execFile",
        ],
        bare: Some(("spawn", "child_process")),
        does: Does::Spawn,
    },
    Call {
        lang: Lang::Js,
        names: &["execFile"],
        bare: None,
        does: Does::Spawn,
    },
    Call {
        lang: Lang::Js,
        names: &["Bun.spawn", "Bun.spawnSync"],
        bare: None,
        does: Does::Run,
    },
    Call {
        lang: Lang::Js,
        names: &["rmSync", "fs.rm", "fs.promises.rm", "fsp.rm"],
        bare: Some(("rm", "fs")),
        does: Does::DeleteOptions(""),
    },
    Call {
        lang: Lang::Js,
        names: &["rmdirSync", "fs.rmdir", "fs.promises.rmdir"],
        bare: None,
        does: Does::DeleteOptions("rmdir"),
    },
    Call {
        lang: Lang::Js,
        names: &["Deno.remove", "Deno.removeSync"],
        bare: None,
        does: Does::DeleteOptions(""),
    },
    Call {
        lang: Lang::Js,
        names: &["unlinkSync", "fs.unlink", "fs.promises.unlink"],
        bare: None,
        does: Does::Delete(""),
    },
    // Perl
    Call {
        lang: Lang::Perl,
        names: &["system", "exec"],
        bare: None,
        does: Does::Run,
    },
    Call {
        lang: Lang::Perl,
        names: &[
            "rmtree",
            "remove_tree",
            "File::Path::rmtree",
            "File::Path::remove_tree",
        ],
        bare: None,
        does: Does::Delete("-r"),
    },
    Call {
        lang: Lang::Perl,
        names: &["unlink"],
        bare: None,
        does: Does::Delete(""),
    },
    Call {
        lang: Lang::Perl,
        names: &["rmdir"],
        bare: None,
        does: Does::Rmdir,
    },
    // Ruby
    Call {
        lang: Lang::Ruby,
        names: &[
            "system",
            "exec",
            "spawn",
            "Kernel.system",
            "Kernel.exec",
            "Process.spawn",
            "IO.popen",
            "Open3.capture2",
            "Open3.capture2e",
            "Open3.capture3",
            "Open3.popen3",
            "Open3.popen2",
        ],
        bare: None,
        does: Does::Run,
    },
    Call {
        lang: Lang::Ruby,
        names: &[
            "FileUtils.rm_rf",
            "FileUtils.rm_r",
            "FileUtils.remove_dir",
            "FileUtils.remove_entry",
            "FileUtils.remove_entry_secure",
            "FileUtils.rmtree",
        ],
        bare: None,
        does: Does::Delete("-rf"),
    },
    Call {
        lang: Lang::Ruby,
        names: &[
            "FileUtils.rm",
            "FileUtils.rm_f",
            "FileUtils.remove",
            "File.delete",
            "File.unlink",
        ],
        bare: None,
        does: Does::Delete("-f"),
    },
    Call {
        lang: Lang::Ruby,
        names: &["Dir.rmdir", "Dir.delete", "Dir.unlink", "FileUtils.rmdir"],
        bare: None,
        does: Does::Rmdir,
    },
    // PHP
    Call {
        lang: Lang::Php,
        names: &[
            "system",
            "exec",
            "shell_exec",
            "passthru",
            "popen",
            "proc_open",
        ],
        bare: None,
        does: Does::Run,
    },
    Call {
        lang: Lang::Php,
        names: &["unlink"],
        bare: None,
        does: Does::Delete(""),
    },
    Call {
        lang: Lang::Php,
        names: &["rmdir"],
        bare: None,
        does: Does::Rmdir,
    },
    // Lua
    Call {
        lang: Lang::Lua,
        names: &["os.execute", "io.popen"],
        bare: None,
        does: Does::Run,
    },
    Call {
        lang: Lang::Lua,
        names: &["os.remove"],
        bare: None,
        does: Does::Delete(""),
    },
    // awk
    Call {
        lang: Lang::Awk,
        names: &["system"],
        bare: None,
        does: Does::Run,
    },
];

/// The call `name` stands for in `lang`, in code that mentions the `contexts` given.
fn call_of(lang: Lang, name: &str, contexts: &[&str]) -> Option<&'static Call> {
    let last = name.rsplit(['.', ':']).next().unwrap_or(name);
    // A module's alias (`cp.execSync`, `sp.check_output`): an unqualified name of the table under
    // any qualifier, in the languages whose modules are named so.
    let aliased = matches!(lang, Lang::Python | Lang::Js);
    CALLS.iter().find(|call| {
        call.lang == lang
            && (call.names.contains(&name)
                || (aliased
                    && call
                        .names
                        .iter()
                        .any(|n| !n.contains(['.', ':']) && *n == last))
                || call
                    .bare
                    .is_some_and(|(bare, context)| bare == last && contexts.contains(&context)))
    })
}

/// Reads `code` in `lang`, given to `command`: the commands it runs, into `out`.
fn scan(
    lang: Lang,
    code: &Word,
    command: &Command,
    env: &mut Env,
    out: &mut Vec<Command>,
    ctx: Ctx<'_>,
) {
    scan_text(lang, &code.text, command, env, out, ctx);
}

fn scan_text(
    lang: Lang,
    code: &str,
    command: &Command,
    env: &mut Env,
    out: &mut Vec<Command>,
    ctx: Ctx<'_>,
) {
    if !ctx.budget.spend(code.len()) {
        if !ctx.budget.tell() {
            return;
        }
        let why = format!("the code {} runs is too much to read", command.program());
        out.push(unknowable(code, why, command.depth + 1, ctx.under(command)));
        return;
    }
    let tokens = tokens(lang, code);
    // The words the code mentions that allow a call's bare name, looked for once.
    let contexts: Vec<&str> = CALLS
        .iter()
        .filter_map(|call| call.bare.map(|(_, context)| context))
        .filter(|context| code.contains(context))
        .collect();
    let mut reader = Reader {
        lang,
        code,
        command,
        env,
        out,
        ctx,
        calls: 0,
    };
    let mut i = 0;
    while i < tokens.len() && reader.calls < MAX_CALLS {
        match &tokens[i] {
            Tok::Run(text, known) => {
                reader.calls += 1;
                reader.line(text, *known, text);
            }
            Tok::Name(name) if lang == Lang::Js && name == "$" => {
                // Bun's shell: $`rm -rf x`.
                if let Some(Tok::Str(text, known)) = tokens.get(i + 1) {
                    reader.calls += 1;
                    reader.line(text, *known, text);
                }
            }
            Tok::Name(name) if lang == Lang::Awk && matches!(name.as_str(), "print" | "printf") => {
                reader.awk_print(&tokens, i);
            }
            Tok::Punct('|') if lang == Lang::Awk => {
                // `"cmd" | getline`: the string before is a command line.
                if let (Some(Tok::Str(text, known)), Some(Tok::Name(next))) = (
                    i.checked_sub(1).and_then(|at| tokens.get(at)),
                    tokens.get(i + 1),
                ) && next == "getline"
                {
                    reader.calls += 1;
                    reader.line(text, *known, text);
                }
            }
            Tok::Name(name) => {
                // `$db->exec(...)`: a method of an object, not the function.
                let method =
                    i >= 2 && tokens[i - 1] == Tok::Punct('>') && tokens[i - 2] == Tok::Punct('-');
                if !method && let Some(call) = call_of(lang, name, &contexts) {
                    let args = arguments(&tokens, i + 1, lang);
                    reader.calls += 1;
                    reader.call(call, name, &args);
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// The arguments of a call whose name ends before `at`: in parentheses, or (perl, ruby) up to the end
/// of the statement. Each argument is its tokens.
fn arguments(tokens: &[Tok], at: usize, lang: Lang) -> Vec<Vec<Tok>> {
    let mut args: Vec<Vec<Tok>> = Vec::new();
    let mut current = Vec::new();
    let (start, parens) = match tokens.get(at) {
        Some(Tok::Punct('(')) => (at + 1, true),
        Some(Tok::Str(..) | Tok::Name(_) | Tok::Punct('['))
            if matches!(lang, Lang::Perl | Lang::Ruby) =>
        {
            (at, false)
        }
        _ => return args,
    };
    let mut level = 0usize;
    for token in tokens.iter().skip(start).take(MAX_ARG_TOKENS) {
        match token {
            Tok::Punct('(' | '[' | '{') => level += 1,
            Tok::Punct(')' | ']' | '}') if level == 0 => break,
            Tok::Punct(')' | ']' | '}') => level -= 1,
            Tok::Punct(';' | '\n') if !parens && level == 0 => break,
            Tok::Punct(',') if level == 0 => {
                args.push(std::mem::take(&mut current));
                continue;
            }
            Tok::Name(name)
                if !parens
                    && level == 0
                    && matches!(name.as_str(), "or" | "and" | "if" | "unless") =>
            {
                break;
            }
            _ => {}
        }
        if !matches!(token, Tok::Punct('\n')) {
            current.push(token.clone());
        }
    }
    if !current.is_empty() {
        args.push(current);
    }
    args
}

/// What an argument's tokens are.
enum Value {
    /// A string, maybe built of literals and other expressions: its text (each expression as a
    /// placeholder word), and whether all of it is known.
    Text(String, bool),
    /// A list (`[...]`, `(...)`) of such.
    List(Vec<Word>),
}

/// A placeholder for an expression that is no literal, inside a line read as shell: it reads as an
/// unknown variable, and every word holding it is marked unknown.
const PLACEHOLDER: &str = "__hookd_expression";

fn value(tokens: &[Tok]) -> Value {
    if let Some(Tok::Punct(open @ ('[' | '('))) = tokens.first() {
        let close = if *open == '[' { ']' } else { ')' };
        if tokens.last() == Some(&Tok::Punct(close)) && tokens.len() >= 2 {
            let inner = &tokens[1..tokens.len() - 1];
            let mut words = Vec::new();
            for item in inner.split(|t| *t == Tok::Punct(',')) {
                if item.is_empty() {
                    continue;
                }
                words.push(word_of(item));
            }
            return Value::List(words);
        }
    }
    let mut text = String::new();
    let mut known = true;
    for token in tokens {
        match token {
            Tok::Str(part, part_known) => {
                text.push_str(part);
                known &= *part_known;
            }
            // Joining operators: `+`, `.`, `..`.
            Tok::Punct('+' | '.') => {}
            _ => {
                if !text.ends_with(PLACEHOLDER) {
                    text.push('$');
                    text.push_str(PLACEHOLDER);
                }
                known = false;
            }
        }
    }
    Value::Text(text, known)
}

/// One word from an argument's tokens: a literal's text, known; else the expression as written, not
/// known.
fn word_of(tokens: &[Tok]) -> Word {
    match value(tokens) {
        Value::Text(text, true) => plain_word(&text),
        _ => Word {
            text: written(tokens),
            known: false,
            glob: false,
        },
    }
}

fn written(tokens: &[Tok]) -> String {
    let mut text = String::new();
    for token in tokens.iter().take(64) {
        match token {
            Tok::Str(s, _) | Tok::Run(s, _) => {
                text.push('"');
                text.push_str(s);
                text.push('"');
            }
            Tok::Name(s) | Tok::Other(s) => text.push_str(s),
            Tok::Punct(c) => text.push(*c),
        }
    }
    text
}

struct Reader<'a, 'e, 'b> {
    lang: Lang,
    code: &'a str,
    command: &'a Command,
    env: &'e mut Env,
    out: &'e mut Vec<Command>,
    ctx: Ctx<'b>,
    calls: usize,
}

impl<'b> Reader<'_, '_, 'b> {
    fn inner_ctx(&self) -> Ctx<'b> {
        self.ctx.under(self.command)
    }

    /// A shell line the code runs (`known` when every part of it is a literal).
    fn line(&mut self, text: &str, known: bool, written: &str) {
        let depth = self.command.depth + 1;
        let ctx = self.ctx.under(self.command);
        let start = self.out.len();
        let mut env = self.env.fork(self.ctx.budget);
        env.unknown
            .insert(PLACEHOLDER.to_string(), PLACEHOLDER.to_string());
        parse_into(text, &mut env, depth, self.out, ctx);
        for command in &mut self.out[start..] {
            for word in &mut command.words {
                if word.text.contains(PLACEHOLDER) {
                    word.known = false;
                    word.text = word.text.replace(PLACEHOLDER, "(expression)");
                }
            }
            for redirect in &mut command.redirects {
                if redirect.target.text.contains(PLACEHOLDER) {
                    redirect.target.known = false;
                }
            }
        }
        let program_unknown = self.out[start..]
            .iter()
            .any(|c| c.words.first().is_some_and(|w| !w.known));
        if !known && (program_unknown || self.out.len() == start) {
            for command in &mut self.out[start..] {
                if command.words.first().is_some_and(|w| !w.known) && command.unknown_from.is_none()
                {
                    command.unknown_from = Some(format!(
                        "the command {} runs is built by its code: {written}",
                        self.command.program()
                    ));
                }
            }
            if self.out.len() == start {
                let why = format!(
                    "the command {} runs is built by its code: {written}",
                    self.command.program()
                );
                self.out.push(unknowable(written, why, depth, ctx));
            }
        }
    }

    /// A command's words the code runs without a shell.
    fn words(&mut self, words: Vec<Word>) {
        if words.is_empty() {
            return;
        }
        let ctx = self.inner_ctx();
        let command = Command {
            words,
            depth: self.command.depth + 1,
            subshell: ctx.subshell,
            conditional: ctx.conditional,
            ..Command::default()
        };
        let mut env = self.env.fork(self.ctx.budget);
        unwrap_into(command, &mut env, self.out, ctx, None);
    }

    /// A command the code runs that cannot be read (`os.system(cmd)`).
    fn unknown(&mut self, name: &str, args: &[Vec<Tok>]) {
        let text = format!(
            "{name}({})",
            args.iter()
                .map(|a| written(a))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let why = format!(
            "the command {} runs is built by its code: {text}",
            self.command.program()
        );
        let ctx = self.inner_ctx();
        self.out
            .push(unknowable(&text, why, self.command.depth + 1, ctx));
    }

    fn call(&mut self, call: &Call, name: &str, args: &[Vec<Tok>]) {
        let Some(first) = args.first() else {
            return;
        };
        match call.does {
            Does::Run if args.len() > 1 && matches!(self.lang, Lang::Perl | Lang::Ruby) => {
                // `system("rm", "-rf", "/")`: the words of a command (ruby's may start with an
                // environment hash, which is no word).
                let words: Vec<Word> = args
                    .iter()
                    .filter(|a| !matches!(a.first(), Some(Tok::Punct('{'))))
                    .map(|a| word_of(a))
                    .collect();
                match value(&args[0]) {
                    Value::Text(text, known) if words.len() == 1 => self.line(&text, known, &text),
                    _ => self.words(words),
                }
            }
            Does::Run => {
                let shell = args.iter().skip(1).any(|a| {
                    let text = written(a).replace(' ', "");
                    text.contains("shell=True") || text.contains("shell:true")
                });
                match value(first) {
                    Value::Text(text, known) if known || text != format!("${PLACEHOLDER}") => {
                        self.line(&text, known, &written(first))
                    }
                    Value::List(words) if shell => match words.first() {
                        Some(line) if line.known => {
                            let text = line.text.clone();
                            self.line(&text, true, &text)
                        }
                        _ => self.unknown(name, args),
                    },
                    Value::List(words) => self.words(words),
                    Value::Text(..) => self.unknown(name, args),
                }
            }
            Does::Spawn => {
                let mut words = vec![word_of(first)];
                if let Some(Value::List(rest)) = args.get(1).map(|a| value(a)) {
                    words.extend(rest);
                }
                let shell = args
                    .iter()
                    .skip(1)
                    .any(|a| written(a).replace(' ', "").contains("shell:true"));
                if shell {
                    let line = super::unwrap::words_line(&words);
                    let known = words.iter().all(|w| w.known);
                    self.line(&line, known, &line);
                } else if let Value::List(list) = value(first) {
                    // `Bun.spawn(["rm", "-rf", "x"])`-like: the list is the command.
                    self.words(list);
                } else {
                    self.words(words);
                }
            }
            Does::Exec => {
                if let Some(Value::List(words)) = args.get(1).map(|a| value(a)) {
                    self.words(words);
                } else {
                    self.unknown(name, args);
                }
            }
            Does::Delete(options) => {
                let mut words = vec![plain_word("rm")];
                if !options.is_empty() {
                    words.push(plain_word(options));
                }
                for arg in args {
                    match value(arg) {
                        Value::List(list) => words.extend(list),
                        Value::Text(..) => words.push(word_of(arg)),
                    }
                }
                self.synthetic(words);
            }
            Does::DeleteOptions(without) => {
                let recursive = args.iter().skip(1).any(|a| {
                    let text = written(a).replace(' ', "");
                    text.contains("recursive:true") || text.contains("\"recursive\":true")
                });
                let mut words = match (recursive, without) {
                    (true, _) => vec![plain_word("rm"), plain_word("-r")],
                    (false, "rmdir") => vec![plain_word("rmdir")],
                    (false, _) => vec![plain_word("rm")],
                };
                words.push(word_of(first));
                self.synthetic(words);
            }
            Does::Rmdir => {
                let mut words = vec![plain_word("rmdir")];
                words.extend(args.iter().map(|a| word_of(a)));
                self.synthetic(words);
            }
        }
    }

    /// A command that stands for what the code does without a shell (`shutil.rmtree(P)` is `rm -r
    /// P`).
    fn synthetic(&mut self, words: Vec<Word>) {
        let ctx = self.inner_ctx();
        self.out.push(Command {
            words,
            depth: self.command.depth + 1,
            subshell: ctx.subshell,
            conditional: ctx.conditional,
            ..Command::default()
        });
    }

    /// awk's `print EXPR | "CMD"`: CMD is a shell line awk runs; when it is a shell, EXPR is its
    /// script.
    fn awk_print(&mut self, tokens: &[Tok], at: usize) {
        let end = tokens[at + 1..]
            .iter()
            .take(MAX_ARG_TOKENS)
            .position(|t| {
                matches!(t, Tok::Punct(';' | '}' | '\n'))
                    || matches!(t, Tok::Name(name) if name == "print" || name == "printf")
            })
            .map_or(tokens.len().min(at + 1 + MAX_ARG_TOKENS), |n| at + 1 + n);
        let statement = &tokens[at + 1..end];
        let Some(pipe) = statement.iter().position(|t| *t == Tok::Punct('|')) else {
            return;
        };
        let Some(Tok::Str(target, target_known)) = statement.get(pipe + 1) else {
            return;
        };
        self.calls += 1;
        let target = target.clone();
        self.line(&target, *target_known, &target);
        let program = target.split_whitespace().next().unwrap_or("");
        let program = program.rsplit('/').next().unwrap_or(program);
        if super::unwrap::SHELLS.contains(&program) && !target.contains(" -c") {
            let printed: Vec<Tok> = statement[..pipe]
                .iter()
                .filter(|t| !matches!(t, Tok::Punct('(' | ')')))
                .cloned()
                .collect();
            match value(&printed) {
                Value::Text(text, known) if !text.is_empty() => {
                    let code = self.code;
                    let _ = code;
                    self.line(&text, known, &text)
                }
                _ => {
                    let text = written(&printed);
                    let why = format!("the script {program} runs is printed by awk: {text}");
                    let ctx = self.inner_ctx();
                    self.out
                        .push(unknowable(&text, why, self.command.depth + 1, ctx));
                }
            }
        }
    }
}

/// The tokens of `code` in `lang`: its string literals read (escapes done), names with their
/// qualifiers, punctuation; comments skipped.
fn tokens(lang: Lang, code: &str) -> Vec<Tok> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        // Comments.
        let line_comment = match lang {
            Lang::Python | Lang::Ruby | Lang::Awk => c == '#',
            Lang::Perl => c == '#' && !(i > 0 && chars[i - 1] == '$'),
            Lang::Php => c == '#' || (c == '/' && next == Some('/')),
            Lang::Js => c == '/' && next == Some('/'),
            Lang::Lua => c == '-' && next == Some('-'),
        };
        if line_comment {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') && matches!(lang, Lang::Js | Lang::Php) {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i += 2;
            continue;
        }
        if c == '\n' {
            out.push(Tok::Punct('\n'));
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        // Python's string prefixes: r"", b"", f"" (an f-string's `{...}` is not known).
        if lang == Lang::Python && matches!(c.to_ascii_lowercase(), 'r' | 'b' | 'f' | 'u') {
            let mut n = 1;
            while n < 3 && chars.get(i + n).is_some_and(|p| "rRbBfFuU".contains(*p)) {
                n += 1;
            }
            if chars.get(i + n).is_some_and(|q| *q == '\'' || *q == '"')
                && (i == 0 || !is_name_char(chars[i - 1]))
            {
                let prefix: String = chars[i..i + n]
                    .iter()
                    .collect::<String>()
                    .to_ascii_lowercase();
                let (text, known, end) = string(&chars, i + n, lang, prefix.contains('r'));
                if prefix.contains('f') && text.contains('{') {
                    out.push(Tok::Str(placeholders(&text, "{"), false));
                } else {
                    out.push(Tok::Str(text, known));
                }
                i = end;
                continue;
            }
        }
        // Perl's q(), qq(), qx(); ruby's %x(), %q(), %Q(), %().
        if let Some((kind, open_at)) = quote_operator(lang, &chars, i) {
            let (text, end) = delimited(&chars, open_at);
            let known = kind == 'q' || !interpolates(lang, &text);
            out.push(if kind == 'x' {
                Tok::Run(text, known)
            } else {
                Tok::Str(text, known)
            });
            i = end;
            continue;
        }
        match c {
            '\'' | '"' => {
                let (text, known, end) = string(&chars, i, lang, false);
                let known = known && (c == '\'' || !interpolates(lang, &text));
                let text = if lang == Lang::Ruby && c == '"' && text.contains("#{") {
                    placeholders(&text, "#{")
                } else {
                    text
                };
                out.push(Tok::Str(text, known));
                i = end;
            }
            '`' => {
                let (text, known, end) = string(&chars, i, lang, false);
                let known = known && !interpolates(lang, &text);
                if lang == Lang::Js {
                    out.push(Tok::Str(text, known));
                } else {
                    out.push(Tok::Run(text, known));
                }
                i = end;
            }
            '[' if lang == Lang::Lua && matches!(next, Some('[' | '=')) => {
                // `[[long string]]`
                let mut j = i + 1;
                while chars.get(j) == Some(&'=') {
                    j += 1;
                }
                if chars.get(j) != Some(&'[') {
                    out.push(Tok::Punct('['));
                    i += 1;
                    continue;
                }
                let level = j - i - 1;
                let close: Vec<char> = std::iter::once(']')
                    .chain(std::iter::repeat_n('=', level))
                    .chain(std::iter::once(']'))
                    .collect();
                let start = j + 1;
                let end = (start..chars.len())
                    .find(|&k| chars[k..].starts_with(&close))
                    .unwrap_or(chars.len());
                out.push(Tok::Str(chars[start..end].iter().collect(), true));
                i = (end + close.len()).min(chars.len());
            }
            c if is_name_start(c)
                || (c == '$' && matches!(lang, Lang::Js | Lang::Php | Lang::Perl)) =>
            {
                let mut name = String::new();
                let mut j = i;
                loop {
                    while j < chars.len() && (is_name_char(chars[j]) || (j == i && chars[j] == '$'))
                    {
                        name.push(chars[j]);
                        j += 1;
                    }
                    // Qualifiers: `a.b`, `A::B`, `$obj->m`.
                    if chars.get(j) == Some(&'.')
                        && chars.get(j + 1).is_some_and(|n| is_name_start(*n))
                        && lang != Lang::Perl
                        && lang != Lang::Php
                    {
                        name.push('.');
                        j += 1;
                        continue;
                    }
                    if chars.get(j) == Some(&':')
                        && chars.get(j + 1) == Some(&':')
                        && chars.get(j + 2).is_some_and(|n| is_name_start(*n))
                    {
                        name.push_str("::");
                        j += 2;
                        continue;
                    }
                    break;
                }
                if name.is_empty() {
                    out.push(Tok::Punct(c));
                    i += 1;
                } else {
                    out.push(Tok::Name(name));
                    i = j;
                }
            }
            '.' if next.is_some_and(is_name_start)
                && matches!(out.last(), Some(Tok::Punct(')' | ']')))
                && lang != Lang::Perl
                && lang != Lang::Php =>
            {
                // A method on what came before (`require('child_process').execSync(...)`): the
                // name alone.
                i += 1;
            }
            c if c.is_ascii_punctuation() => {
                out.push(Tok::Punct(c));
                i += 1;
            }
            _ => {
                let mut text = String::new();
                while i < chars.len()
                    && !chars[i].is_whitespace()
                    && !chars[i].is_ascii_punctuation()
                {
                    text.push(chars[i]);
                    i += 1;
                }
                if text.is_empty() {
                    i += 1;
                } else {
                    out.push(Tok::Other(text));
                }
            }
        }
    }
    out
}

/// `text` with each interpolation opened by `open` and closed by `}` (`{x}` in a python f-string,
/// `#{x}` in ruby) replaced by the placeholder of an unknown expression (`{{` is a brace).
fn placeholders(text: &str, open: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(open) {
        if open == "{" && rest[at..].starts_with("{{") {
            out.push_str(&rest[..at + 1]);
            rest = &rest[at + 2..];
            continue;
        }
        out.push_str(&rest[..at]);
        out.push('$');
        out.push_str(PLACEHOLDER);
        rest = match rest[at..].find('}') {
            Some(close) => &rest[at + close + 1..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether a double-quoted string's text in `lang` holds an interpolation (`$x`, `#{x}`, `${x}`).
fn interpolates(lang: Lang, text: &str) -> bool {
    match lang {
        Lang::Perl | Lang::Php => {
            let bytes = text.as_bytes();
            bytes.windows(2).any(|w| {
                (w[0] == b'$' || w[0] == b'@')
                    && (w[1].is_ascii_alphabetic() || w[1] == b'_' || w[1] == b'{')
            })
        }
        Lang::Ruby => text.contains("#{"),
        Lang::Js => text.contains("${"),
        Lang::Python | Lang::Lua | Lang::Awk => false,
    }
}

/// A quote operator at `at` (perl's `q(`, `qq{`, `qx/`; ruby's `%x(`, `%q[`, `%(`): its kind (`q`
/// for no interpolation, `Q` for interpolation, `x` for a command) and where its delimiter is.
fn quote_operator(lang: Lang, chars: &[char], at: usize) -> Option<(char, usize)> {
    let before_ok = at == 0 || !is_name_char(chars[at - 1]);
    if !before_ok {
        return None;
    }
    let word: String = chars[at..chars.len().min(at + 3)].iter().collect();
    match lang {
        Lang::Perl => {
            let (kind, len) = if word.starts_with("qq") {
                ('Q', 2)
            } else if word.starts_with("qx") {
                ('x', 2)
            } else if word.starts_with('q') && !word.starts_with("qw") {
                ('q', 1)
            } else {
                return None;
            };
            let delimiter = *chars.get(at + len)?;
            ("({[</|!#".contains(delimiter)).then_some((kind, at + len))
        }
        Lang::Ruby => {
            if chars[at] != '%' {
                return None;
            }
            let (kind, len) = match chars.get(at + 1) {
                Some('x') => ('x', 2),
                Some('q') => ('q', 2),
                Some('Q') => ('Q', 2),
                Some('(' | '{' | '[') => ('Q', 1),
                _ => return None,
            };
            let delimiter = *chars.get(at + len)?;
            ("({[</|!".contains(delimiter)).then_some((kind, at + len))
        }
        _ => None,
    }
}

/// The text between the delimiter at `open` and its close (brackets nested); the index past it.
fn delimited(chars: &[char], open: usize) -> (String, usize) {
    let start = chars[open];
    let close = match start {
        '(' => ')',
        '{' => '}',
        '[' => ']',
        '<' => '>',
        other => other,
    };
    let mut level = 0usize;
    let mut text = String::new();
    let mut i = open + 1;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            text.push(chars[i + 1]);
            i += 2;
            continue;
        }
        if c == close && level == 0 {
            return (text, i + 1);
        }
        if c == start && start != close {
            level += 1;
        } else if c == close {
            level = level.saturating_sub(1);
        }
        text.push(c);
        i += 1;
    }
    (text, i)
}

/// A string literal starting at the quote at `at` (a triple quote in python): its text with escapes
/// read (none when `raw`), whether it was closed, and the index past it.
fn string(chars: &[char], at: usize, lang: Lang, raw: bool) -> (String, bool, usize) {
    let quote = chars[at];
    let triple = lang == Lang::Python
        && chars.get(at + 1) == Some(&quote)
        && chars.get(at + 2) == Some(&quote);
    let mut i = at + if triple { 3 } else { 1 };
    let mut text = String::new();
    // Single quotes in perl, ruby and php take no escapes but `\'` and `\\`.
    let plain = quote == '\'' && matches!(lang, Lang::Perl | Lang::Ruby | Lang::Php);
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            let e = chars[i + 1];
            if raw || (plain && e != '\'' && e != '\\') {
                text.push('\\');
                text.push(e);
            } else {
                match e {
                    'n' => text.push('\n'),
                    't' => text.push('\t'),
                    'r' => text.push('\r'),
                    '0' => text.push('\0'),
                    '\n' => {}
                    other => text.push(other),
                }
            }
            i += 2;
            continue;
        }
        if c == quote {
            if !triple {
                return (text, true, i + 1);
            }
            if chars.get(i + 1) == Some(&quote) && chars.get(i + 2) == Some(&quote) {
                return (text, true, i + 3);
            }
        }
        text.push(c);
        i += 1;
    }
    (text, false, i)
}

#[cfg(test)]
mod tests;
