//! The walk of the settings' TOML tree: the walker that keeps every error it meets, each at its line
//! and column, and its readers of plain values (a table, a string, a list, a number in a range). What
//! each table of the settings means is read with them, in `parse.rs` and `export.rs`.

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::limits::SETTINGS_ERRORS;
use crate::settings::error::{ConfigError, ConfigErrors, LineIndex};
use crate::tables::moment;

/// A value of the tree, with its place in the text.
pub(super) type Value<'i> = Spanned<DeValue<'i>>;

/// Walks the tree, keeping every error it meets.
pub(super) struct Walker<'a> {
    pub(super) label: &'a str,
    pub(super) text: &'a str,
    /// Where each line starts, found once, to place every error and name.
    pub(super) lines: LineIndex<'a>,
    pub(super) errors: Vec<ConfigError>,
}

impl Walker<'_> {
    /// The 1-based line of a byte offset.
    pub(super) fn line_of(&self, offset: usize) -> usize {
        self.lines.line(offset)
    }

    /// The 1-based line and column (in characters) of a byte offset.
    pub(super) fn place(&self, offset: usize) -> (usize, usize) {
        self.lines.place(offset)
    }

    pub(super) fn error_at(&mut self, offset: usize, message: String) {
        let mut error = ConfigError::whole_file(self.label, message);
        (error.line, error.column) = self.place(offset);
        self.errors.push(error);
    }

    pub(super) fn error(&mut self, span: Range<usize>, message: String) {
        self.error_at(span.start, message);
    }

    pub(super) fn finish(mut self) -> ConfigErrors {
        self.errors.sort_by_key(|e| (e.line, e.column));
        self.errors.dedup();
        if self.errors.len() > SETTINGS_ERRORS {
            let more = self.errors.len() - SETTINGS_ERRORS;
            self.errors.truncate(SETTINGS_ERRORS);
            let last = &self.errors[SETTINGS_ERRORS - 1];
            let mut note =
                ConfigError::whole_file(self.label, format!("... and {more} more errors"));
            (note.line, note.column) = (last.line, last.column);
            self.errors.push(note);
        }
        ConfigErrors(self.errors)
    }

    pub(super) fn unknown_key(
        &mut self,
        key: &Spanned<std::borrow::Cow<'_, str>>,
        place: &str,
        expected: &[&str],
    ) {
        let name = key.get_ref().as_ref();
        let hint = match moment::did_you_mean(name, expected.iter().copied()) {
            Some(meant) => format!(" (did you mean \"{meant}\"?)"),
            None => format!(" (expected one of: {})", expected.join(", ")),
        };
        self.error(key.span(), format!("unknown key \"{name}\" {place}{hint}"));
    }

    pub(super) fn type_error(&mut self, value: &Value<'_>, field: &str, expected: &str) {
        let found = value.get_ref().type_str();
        self.error(
            value.span(),
            format!("{field} must be {expected}, not {}", with_article(found)),
        );
    }

    pub(super) fn table<'v, 'i>(
        &mut self,
        value: &'v Value<'i>,
        field: &str,
    ) -> Option<&'v DeTable<'i>> {
        let table = value.get_ref().as_table();
        if table.is_none() {
            self.type_error(value, field, "a table");
        }
        table
    }

    pub(super) fn string(&mut self, value: &Value<'_>, field: &str) -> Option<String> {
        let text = value.get_ref().as_str().map(str::to_string);
        if text.is_none() {
            self.type_error(value, field, "a string");
        } else if text.as_deref().is_some_and(|t| t.contains('\0')) {
            self.error(
                value.span(),
                format!("{field} must not contain a NUL character"),
            );
            return None;
        }
        text
    }

    pub(super) fn non_empty_string(&mut self, value: &Value<'_>, field: &str) -> Option<String> {
        let text = self.string(value, field)?;
        if text.trim().is_empty() {
            self.error(value.span(), format!("{field} must not be empty"));
            return None;
        }
        Some(text)
    }

    pub(super) fn strings(
        &mut self,
        value: &Value<'_>,
        field: &str,
        expected: &str,
    ) -> Option<Vec<String>> {
        let Some(items) = value.get_ref().as_array() else {
            self.type_error(value, field, expected);
            return None;
        };
        let mut out = Vec::with_capacity(items.len());
        for item in items.iter() {
            match item.get_ref().as_str() {
                Some(s) if !s.contains('\0') => out.push(s.to_string()),
                _ => {
                    self.error(item.span(), format!("{field} must be {expected}"));
                    return None;
                }
            }
        }
        Some(out)
    }

    pub(super) fn integer_in(
        &mut self,
        value: &Value<'_>,
        field: &str,
        min: i64,
        max: i64,
    ) -> Option<i64> {
        let DeValue::Integer(i) = value.get_ref() else {
            self.type_error(value, field, "a whole number");
            return None;
        };
        match i64::from_str_radix(i.as_str(), i.radix()) {
            Ok(n) if (min..=max).contains(&n) => Some(n),
            _ => {
                self.error(value.span(), format!("{field} must be from {min} to {max}"));
                None
            }
        }
    }
}

/// A value as written in the file, for messages.
pub(super) fn value_text(text: &str, span: Range<usize>) -> &str {
    text.get(span).unwrap_or_default().trim()
}

fn with_article(type_name: &str) -> String {
    let article = if type_name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {type_name}")
}
