//! A settings error, always placed at a file, a line and a column.

use std::fmt;

/// One problem found in a settings file, printed as `file:line:col: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl ConfigError {
    /// An error about the file as a whole (its mode, its owner, reading it): placed at its start, so that
    /// every error has the same shape for editors and scripts.
    pub fn whole_file(file: &str, message: impl Into<String>) -> ConfigError {
        ConfigError {
            file: file.to_string(),
            line: 1,
            column: 1,
            message: one_line(message.into()),
        }
    }

    /// An error at byte `offset` of `text`.
    pub fn at(file: &str, text: &str, offset: usize, message: impl Into<String>) -> ConfigError {
        let (line, column) = line_and_column(text, offset);
        ConfigError {
            file: file.to_string(),
            line,
            column,
            message: one_line(message.into()),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

/// A message with its control characters escaped: names quoted from the file may hold a newline (a TOML
/// quoted key can), and one error must stay one line.
fn one_line(message: String) -> String {
    if !message.contains(char::is_control) {
        return message;
    }
    message
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
thread_local! {
    /// Bytes [`line_and_column`] has scanned on this thread: the tests count them to show that validating
    /// a file does not rescan it from its start for every name it places.
    pub(crate) static SCANNED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// 1-based line and column (in characters) of a byte offset. It scans the text up to the offset: fine for
/// one error, quadratic when called for every name of a file (the walker has its own line index).
pub fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    #[cfg(test)]
    SCANNED.with(|scanned| scanned.set(scanned.get() + offset));
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// Where each line of a text starts, found once, to place many offsets in it by a binary search:
/// placing every name of a file by scanning the text from its start ([`line_and_column`]) made a
/// 10,000-hook file take 9 s to check. The settings' walker and `hookd test --cases` place with it.
#[derive(Debug)]
pub struct LineIndex<'a> {
    text: &'a str,
    /// The byte offset where each line starts.
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> LineIndex<'a> {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { text, starts }
    }

    /// The 1-based line of a byte offset.
    pub fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|&start| start <= offset)
    }

    /// The 1-based line and column (in characters) of a byte offset.
    pub fn place(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line(offset);
        let column = self.text[self.starts[line - 1]..offset].chars().count() + 1;
        (line, column)
    }
}

/// Every error of a file, for printing one per line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

impl ConfigErrors {
    /// "1 error", "3 errors".
    pub fn count(&self) -> String {
        match self.0.len() {
            1 => "1 error".to_string(),
            n => format!("{n} errors"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_with_a_newline_keeps_the_error_on_one_line() {
        let error = ConfigError::at("h.toml", "x", 0, "unknown moment \"Pre\nTool\r\"");
        assert_eq!(
            error.to_string(),
            "h.toml:1:1: unknown moment \"Pre\\nTool\\r\""
        );
    }

    #[test]
    fn lines_and_columns_are_one_based() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(line_and_column(text, 0), (1, 1));
        assert_eq!(line_and_column(text, 6), (2, 1));
        assert_eq!(
            line_and_column(text, 9),
            (2, 3),
            "columns count characters, not bytes"
        );
        assert_eq!(line_and_column(text, 999), (3, 1));
    }
}
