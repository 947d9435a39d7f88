//! What `echo`, `printf` or `cat <<EOF` print when their words are known on the line: the next
//! command of a pipeline reads it as its input, and a command substitution of it is that text.

/// How much printf's format is repeated into, at most (its arguments taken in turn): sixteen times a
/// variable's longest value (`MAX_VALUE`), past which the rest is not read.
const MAX_PRINTED: usize = 64 * 1024;

/// What `program` (its name without its folder) prints, given its arguments (all known) and the
/// here-document or here-string on its input; `None` for any other program, or words it does not print
/// as they are (printf's own options).
pub(crate) fn printed(program: &str, args: &[&str], here: Option<&str>) -> Option<String> {
    match program {
        "echo" => {
            let words: Vec<&str> = args
                .iter()
                .copied()
                .skip_while(|w| {
                    w.len() > 1 && w.starts_with('-') && w[1..].chars().all(|c| "neE".contains(c))
                })
                .collect();
            // dash's `echo` reads escapes always, bash's only with `-e`: where the two differ
            // (`echo '\rm -rf ~'`: bash prints the backslash, and the shell it feeds reads `\rm` as
            // `rm`), both are read, one after the other, so that what either shell would run is seen.
            let literal = words.join(" ");
            let escaped = escapes(&literal);
            Some(if escaped == literal {
                literal
            } else {
                format!("{escaped}\n{literal}")
            })
        }
        "printf" => match args.split_first() {
            Some((&"--", rest)) if !rest.is_empty() => Some(printf(rest[0], &rest[1..])),
            Some((format, rest)) if !format.starts_with('-') => Some(printf(format, rest)),
            _ => None,
        },
        "cat" if args.is_empty() => here.map(str::to_string),
        _ => None,
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
pub(crate) fn printf(format: &str, args: &[&str]) -> String {
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
        if !took || next >= args.len() || out.len() > MAX_PRINTED {
            break;
        }
    }
    out
}
