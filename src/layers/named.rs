//! Where a repository's hook names the files it runs: each word of its command (or of its `argv`) that
//! is a plain path, with its place, so that the hook can be pointed at the copies of the bytes hookd
//! digested (`layers::snapshot`) instead of the files the agent can still write.
//!
//! A command's words are read here as the shell splits them, for the forms whose meaning is plain: bare
//! words, `'...'`, `"..."`, `$HOOKD_CONFIG_DIR` (`${...}`) and a leading `~/`. A word with anything else
//! (another variable, a backslash, a pattern) is not a plain path and is left alone; a file the hook's
//! digest holds that no plain word names cannot be pointed at its copy, and the hook is pending for it
//! (`Pinned::unplaced`).

use std::path::{Path, PathBuf};

/// Where a hook names a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Bytes `start..end` of the shell command (the whole word, its quotes too).
    Span(usize, usize),
    /// The `argv` word at this index.
    Arg(usize),
}

/// The plain words of a shell `command`, each with its bytes' place and its text (the settings'
/// folder in place of `$HOOKD_CONFIG_DIR`, `home` in place of a leading `~`).
pub fn shell_words(command: &str, config_dir: &str, home: &str) -> Vec<(Place, String)> {
    let bytes = command.as_bytes();
    let separator = |b: u8| b.is_ascii_whitespace() || b";&|<>()`".contains(&b);
    let mut words = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if separator(bytes[i]) {
            i += 1;
            continue;
        }
        if bytes[i] == b'#' {
            // A comment, to the end of its line.
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let start = i;
        let mut text = String::new();
        let mut plain = true;
        while i < bytes.len() && !separator(bytes[i]) {
            match bytes[i] {
                b'\'' => match command[i + 1..].find('\'') {
                    Some(end) => {
                        text.push_str(&command[i + 1..i + 1 + end]);
                        i += end + 2;
                    }
                    None => {
                        plain = false;
                        i = bytes.len();
                    }
                },
                b'"' => match command[i + 1..].find('"') {
                    Some(end) => {
                        let inside = &command[i + 1..i + 1 + end];
                        match expand(inside, config_dir) {
                            Some(expanded) if !inside.contains(['\\', '`']) => {
                                text.push_str(&expanded)
                            }
                            _ => plain = false,
                        }
                        i += end + 2;
                    }
                    None => {
                        plain = false;
                        i = bytes.len();
                    }
                },
                b'\\' | b'*' | b'?' | b'[' => {
                    plain = false;
                    i += 1;
                }
                _ => {
                    let end = command[i..]
                        .find(|c: char| c.is_ascii_whitespace() || ";&|<>()`'\"\\*?[".contains(c))
                        .map_or(bytes.len(), |n| i + n);
                    let mut bare = command[i..end].to_string();
                    if i == start && (bare == "~" || bare.starts_with("~/")) {
                        bare = format!("{home}{}", &bare[1..]);
                    }
                    match expand(&bare, config_dir) {
                        Some(expanded) => text.push_str(&expanded),
                        None => plain = false,
                    }
                    i = end;
                }
            }
        }
        if plain && !text.is_empty() {
            words.push((Place::Span(start, i), text));
        }
    }
    words
}

/// `$HOOKD_CONFIG_DIR` and `${HOOKD_CONFIG_DIR}` in `text` replaced by `dir`; `None` when another
/// `$` is in it (what only the shell can tell).
fn expand(text: &str, dir: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        if let Some(tail) = after.strip_prefix("${HOOKD_CONFIG_DIR}") {
            out.push_str(dir);
            rest = tail;
        } else if let Some(tail) = after.strip_prefix("$HOOKD_CONFIG_DIR")
            && !tail.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        {
            out.push_str(dir);
            rest = tail;
        } else {
            return None;
        }
    }
    out.push_str(rest);
    Some(out)
}

/// A word's file, as the hook's folder `dir` reads it: resolved through its links where it exists,
/// made absolute where it does not.
pub fn file_of(word: &str, dir: &Path) -> Option<PathBuf> {
    if word.is_empty() {
        return None;
    }
    let path = dir.join(word);
    std::fs::canonicalize(&path)
        .ok()
        .or_else(|| std::path::absolute(&path).ok())
}

/// `text` as one word of the shell, whatever it holds: in single quotes.
pub fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(command: &str) -> Vec<(String, String)> {
        shell_words(command, "/r/.hookd", "/home/u")
            .into_iter()
            .map(|(place, text)| match place {
                Place::Span(a, b) => (command[a..b].to_string(), text),
                Place::Arg(_) => unreachable!(),
            })
            .collect()
    }

    #[test]
    fn plain_words_are_found_with_their_quotes_and_the_config_dir_expanded() {
        assert_eq!(
            texts("bash gate.sh --x 'a b' \"$HOOKD_CONFIG_DIR/g.sh\"|tee ~/log"),
            vec![
                ("bash".into(), "bash".into()),
                ("gate.sh".into(), "gate.sh".into()),
                ("--x".into(), "--x".into()),
                ("'a b'".into(), "a b".into()),
                ("\"$HOOKD_CONFIG_DIR/g.sh\"".into(), "/r/.hookd/g.sh".into()),
                ("tee".into(), "tee".into()),
                ("~/log".into(), "/home/u/log".into()),
            ]
        );
        assert_eq!(
            texts("${HOOKD_CONFIG_DIR}/x.sh; ./y.sh # ./z.sh"),
            vec![
                ("${HOOKD_CONFIG_DIR}/x.sh".into(), "/r/.hookd/x.sh".into()),
                ("./y.sh".into(), "./y.sh".into()),
            ]
        );
    }

    #[test]
    fn what_only_the_shell_can_tell_is_no_plain_word() {
        for command in [
            "$FOO/x.sh",
            "x\\.sh",
            "*.sh",
            "\"$HOME/x\"",
            "'unclosed",
            "$HOOKD_CONFIG_DIRX",
        ] {
            assert!(
                shell_words(command, "/r", "/h").is_empty(),
                "{command}: {:?}",
                shell_words(command, "/r", "/h")
            );
        }
    }

    #[test]
    fn a_quoted_word_stays_one_word() {
        assert_eq!(quoted("/a b/it's"), "'/a b/it'\\''s'");
    }
}
