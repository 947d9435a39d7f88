//! What a command reads on its input: what the command before it in a pipeline gives it ([`feed_of`]),
//! and the code a shell or an interpreter takes from there ([`read_input`]); the shells, which run
//! their input; words joined back into a line.

use crate::shell::command::{Command, Feed, Word, assignment};
use crate::shell::context::{Ctx, Env, MAX_VALUE, unknowable};

/// The shells: `-c SCRIPT` runs the script; with no script and no file, they run their input.
pub const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "yash", "posh", "rbash",
];

/// What `command` gives the next command of a pipeline to read.
pub(crate) fn feed_of(command: &Command) -> Feed {
    let words: Vec<&Word> = command
        .words
        .iter()
        .skip_while(|w| assignment(&w.text).is_some())
        .collect();
    let written = || {
        let mut text = words
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        if text.len() > 200 {
            let mut end = 200;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
        }
        if text.is_empty() {
            text = "the commands before it".into();
        }
        Feed::Unknown(text)
    };
    let Some(program) = words.first() else {
        return written();
    };
    let program_name = program.text.rsplit('/').next().unwrap_or("");
    let args = &words[1..];
    if !program.known || !args.iter().all(|w| w.known) {
        return written();
    }
    match program_name {
        "echo" => {
            let words: Vec<&str> = args
                .iter()
                .map(|w| w.text.as_str())
                .skip_while(|w| {
                    w.len() > 1 && w.starts_with('-') && w[1..].chars().all(|c| "neE".contains(c))
                })
                .collect();
            // dash's `echo` reads escapes always, bash's only with `-e`: where the two differ
            // (`echo '\rm -rf ~'`: bash prints the backslash, and the shell it feeds reads `\rm` as
            // `rm`), both are read, one after the other, so that what either shell would run is seen.
            let literal = words.join(" ");
            let escaped = escapes(&literal);
            if escaped == literal {
                Feed::Text(literal)
            } else {
                Feed::Text(format!("{escaped}\n{literal}"))
            }
        }
        "printf" => {
            let texts: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
            match texts.split_first() {
                Some((&"--", rest)) if !rest.is_empty() => Feed::Text(printf(rest[0], &rest[1..])),
                Some((format, rest)) if !format.starts_with('-') => {
                    Feed::Text(printf(format, rest))
                }
                _ => written(),
            }
        }
        "cat" if args.is_empty() => match &command.here {
            Some(here) => Feed::Text(here.clone()),
            None => written(),
        },
        _ => written(),
    }
}

/// `\n`, `\t`, `\\` and their kind read as what they stand for.
fn escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some('c') => break,
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// What `printf FORMAT ARGS...` prints: the format (its escapes read) with `%s` and its kind taking
/// the arguments in turn, again while arguments are left, as printf does.
pub(super) fn printf(format: &str, args: &[&str]) -> String {
    let format = escapes(format);
    let mut out = String::new();
    let mut next = 0;
    loop {
        let mut chars = format.chars().peekable();
        let mut took = false;
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            // Flags, width and precision, then the conversion.
            while chars
                .peek()
                .is_some_and(|c| c.is_ascii_digit() || "-+ #.".contains(*c))
            {
                chars.next();
            }
            match chars.next() {
                Some('%') => out.push('%'),
                Some('b') => {
                    out.push_str(&escapes(args.get(next).copied().unwrap_or("")));
                    next += 1;
                    took = true;
                }
                Some(_) => {
                    out.push_str(args.get(next).copied().unwrap_or(""));
                    next += 1;
                    took = true;
                }
                None => out.push('%'),
            }
        }
        if !took || next >= args.len() || out.len() > MAX_VALUE * 16 {
            break;
        }
    }
    out
}

/// The code a shell or interpreter reads from its input: a here-document or here-string, what `echo`
/// or `printf` gives it through a pipe (read with `read`), or a command that cannot be known when the
/// input comes from elsewhere (`curl x | sh`) or from `xargs` (`xargs bash`: the script's name is
/// input).
pub(crate) fn read_input(
    command: &Command,
    program: &str,
    env: &mut Env,
    out: &mut Vec<Command>,
    ctx: Ctx<'_>,
    feed: Option<&Feed>,
    read: &mut dyn FnMut(&str, &mut Env, &mut Vec<Command>),
) {
    let depth = command.depth + 1;
    if let Some(here) = &command.here {
        read(here, &mut env.fork(ctx.budget), out);
        return;
    }
    match feed {
        Some(Feed::Text(text)) => read(text, &mut env.fork(ctx.budget), out),
        Some(Feed::Unknown(source)) => {
            let why = format!("the code {program} runs comes from its input, given by {source}");
            let text = format!("(stdin of {program} from {source})");
            out.push(unknowable(&text, why, depth, ctx.under(command)));
        }
        None if command.fed => {
            let why = format!("the code {program} runs is named by its input, given to xargs");
            let text = format!("(input of {program})");
            out.push(unknowable(&text, why, depth, ctx.under(command)));
        }
        None => {}
    }
}

/// Words joined back into a line.
pub(crate) fn words_line(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}
