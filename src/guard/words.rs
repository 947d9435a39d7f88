//! A program's arguments read as the program reads them: short flags bundled (`-rf`, `-qf`), long
//! options abbreviated to any unique prefix as GNU getopt and git allow (`--recur`, `--ha`), values
//! given in the same word or the next (`-C dir`, `--git-dir=x`), options after operands (`rm / -rf`),
//! and `--` ending the options. A guard that looked for `-r` and `--recursive` only would let
//! `rm -Rf`, `rm --rec` and `git reset --ha` through.

use crate::shell::Word;

/// What a program's options are: its long options (full names, for abbreviations), and which of its
/// options take a value.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spec {
    /// Every long option the program knows, without `--`: an abbreviation counts only when it is the
    /// prefix of one of these alone (as getopt decides).
    pub longs: &'static [&'static str],
    /// Short options that take a value (`-C dir`, `-Cdir`).
    pub short_valued: &'static str,
    /// Long options that take a value (`--git-dir x`, `--git-dir=x`).
    pub long_valued: &'static [&'static str],
    /// Whether options stop at the first operand (POSIX; git's subcommand, `find`'s expression), or
    /// may come after operands too (GNU: `rm / -rf`).
    pub stop_at_operand: bool,
}

/// The arguments read.
#[derive(Debug, Clone, Default)]
pub struct Opts<'w> {
    /// Every short option given, bundled or not, in order.
    pub shorts: Vec<char>,
    /// Every long option given, its name expanded where the abbreviation is unique (kept as given
    /// otherwise), with its value if it took one.
    pub longs: Vec<(String, Option<String>)>,
    /// The operands, in order.
    pub operands: Vec<&'w Word>,
    /// Short options that took a value, with it.
    pub short_values: Vec<(char, String)>,
}

impl Opts<'_> {
    /// Whether the short option `c` was given.
    pub fn short(&self, c: char) -> bool {
        self.shorts.contains(&c)
    }

    /// Whether the long option `name` (its full name) was given.
    pub fn long(&self, name: &str) -> bool {
        self.longs.iter().any(|(given, _)| given == name)
    }

    /// Whether `-c` or `--name` was given.
    pub fn either(&self, c: char, name: &str) -> bool {
        self.short(c) || self.long(name)
    }

    /// The value of the long option `name`, when given with one.
    pub fn long_value(&self, name: &str) -> Option<&str> {
        self.longs
            .iter()
            .find(|(given, _)| given == name)
            .and_then(|(_, value)| value.as_deref())
    }

    /// The operands' texts.
    pub fn operand_texts(&self) -> Vec<&str> {
        self.operands.iter().map(|w| w.text.as_str()).collect()
    }
}

/// The full name a long option `given` abbreviates among `longs`: itself when it is one, the one name
/// it is a prefix of when there is exactly one, else itself.
pub fn expand_long(given: &str, longs: &[&str]) -> String {
    if longs.contains(&given) || given.is_empty() {
        return given.to_string();
    }
    let mut matches = longs.iter().filter(|long| long.starts_with(given));
    match (matches.next(), matches.next()) {
        (Some(only), None) => (*only).to_string(),
        _ => given.to_string(),
    }
}

/// Reads `args` by `spec`.
pub fn parse<'w>(args: &'w [Word], spec: &Spec) -> Opts<'w> {
    let mut opts = Opts::default();
    let mut at = 0;
    let mut options_over = false;
    while at < args.len() {
        let word = &args[at];
        at += 1;
        let text = word.text.as_str();
        if options_over || text == "-" || !text.starts_with('-') {
            opts.operands.push(word);
            if spec.stop_at_operand {
                options_over = true;
            }
            continue;
        }
        if text == "--" {
            options_over = true;
            continue;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value.to_string())),
                None => (long, None),
            };
            let name = expand_long(name, spec.longs);
            let value = if inline.is_some() {
                inline
            } else if spec.long_valued.contains(&name.as_str()) && at < args.len() {
                at += 1;
                Some(args[at - 1].text.clone())
            } else {
                None
            };
            opts.longs.push((name, value));
            continue;
        }
        // A bundle of short options: each letter one, up to one that takes a value (the rest of the
        // word, or the next word).
        let letters: Vec<char> = text[1..].chars().collect();
        for (i, c) in letters.iter().enumerate() {
            opts.shorts.push(*c);
            if spec.short_valued.contains(*c) {
                let rest: String = letters[i + 1..].iter().collect();
                let value = if !rest.is_empty() {
                    rest
                } else if at < args.len() {
                    at += 1;
                    args[at - 1].text.clone()
                } else {
                    String::new()
                };
                opts.short_values.push((*c, value));
                break;
            }
        }
    }
    opts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Word> {
        line.split_whitespace()
            .map(|t| Word {
                text: t.to_string(),
                known: true,
                glob: false,
            })
            .collect()
    }

    const RM: Spec = Spec {
        longs: &[
            "recursive",
            "force",
            "interactive",
            "no-preserve-root",
            "preserve-root",
            "dir",
            "verbose",
        ],
        short_valued: "",
        long_valued: &[],
        stop_at_operand: false,
    };

    #[test]
    fn bundled_short_options_and_options_after_operands_count() {
        let args = words("/ -Rf");
        let opts = parse(&args, &RM);
        assert!(opts.short('R') && opts.short('f'));
        assert_eq!(opts.operand_texts(), ["/"]);
    }

    #[test]
    fn a_unique_prefix_of_a_long_option_is_that_option() {
        let args = words("--rec --no-p x");
        let opts = parse(&args, &RM);
        assert!(opts.long("recursive"));
        assert!(opts.long("no-preserve-root"));
        // `--p` is ambiguous for neither: only preserve-root starts with p.
        assert_eq!(expand_long("p", RM.longs), "preserve-root");
        // An ambiguous prefix stays as given.
        assert_eq!(expand_long("in", &["interactive", "include"]), "in");
    }

    #[test]
    fn a_double_dash_ends_the_options_and_values_are_taken() {
        let spec = Spec {
            longs: &["git-dir", "work-tree"],
            short_valued: "C",
            long_valued: &["git-dir"],
            stop_at_operand: true,
        };
        let args = words("-C /x --git-dir y reset --hard -- -f");
        let opts = parse(&args, &spec);
        assert_eq!(opts.short_values, [('C', "/x".to_string())]);
        assert_eq!(opts.long_value("git-dir"), Some("y"));
        // Past the first operand (the subcommand) everything is an operand, `--` among them.
        assert_eq!(opts.operand_texts(), ["reset", "--hard", "--", "-f"]);
    }
}
