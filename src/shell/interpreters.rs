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

mod calls;
mod lang;
mod tokens;

use calls::{Call, Does, call_of};
use lang::{Lang, PLACEHOLDER, language};
use tokens::{Tok, tokens};

use super::command::{Command, Feed, Word, plain_word};
use super::context::{Ctx, Env, parse_into, unknowable, unwrap_into};
use super::input::{SHELLS, read_input, words_line};

/// How many calls of one piece of code are read, at most.
const MAX_CALLS: usize = 64;
/// How many tokens one call's arguments may hold before the rest is not read.
const MAX_ARG_TOKENS: usize = 4096;

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
        if flags.contains(&text) {
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
    let contexts = calls::contexts(code);
    let mut reader = Reader {
        lang,
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

/// The calls that expand a pattern into the file names it matches, in the languages that delete by
/// name: perl's `glob`, python's `glob.glob`/`glob.iglob`, ruby's `Dir.glob` (and `Dir[...]`), php's
/// `glob`.
const GLOB_CALLS: &[&str] = &[
    "glob",
    "glob.glob",
    "glob.iglob",
    "Dir.glob",
    "File::Glob::bsd_glob",
];

/// A path argument that is a glob call on a literal pattern (`unlink glob("/etc/*")`): the pattern,
/// as a word the shell would match against file names; the files it names are what is deleted.
fn glob_call(tokens: &[Tok]) -> Option<Word> {
    let (name, rest) = tokens.split_first()?;
    let Tok::Name(name) = name else { return None };
    if !GLOB_CALLS.contains(&name.as_str()) && name != "Dir" {
        return None;
    }
    let pattern = match rest {
        [Tok::Punct('('), Tok::Str(text, true), Tok::Punct(')')] | [Tok::Str(text, true)] => text,
        // Ruby's `Dir["/etc/*"]`.
        [Tok::Punct('['), Tok::Str(text, true), Tok::Punct(']')] if name == "Dir" => text,
        _ => return None,
    };
    Some(Word {
        text: pattern.clone(),
        known: true,
        glob: pattern.contains(['*', '?', '[']),
    })
}

/// One word from an argument's tokens: a literal's text, known; a glob call on a literal pattern,
/// the pattern; else the expression as written, not known.
fn word_of(tokens: &[Tok]) -> Word {
    if let Some(word) = glob_call(tokens) {
        return word;
    }
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
                    let line = words_line(&words);
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
        if SHELLS.contains(&program) && !target.contains(" -c") {
            let printed: Vec<Tok> = statement[..pipe]
                .iter()
                .filter(|t| !matches!(t, Tok::Punct('(' | ')')))
                .cloned()
                .collect();
            match value(&printed) {
                Value::Text(text, known) if !text.is_empty() => self.line(&text, known, &text),
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

#[cfg(test)]
mod tests;
