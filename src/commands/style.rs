//! How text for people looks on a terminal, in one place: whether to colour at all, the palette (one
//! style per meaning, so that a refusal is the same red everywhere), and text from outside (a settings
//! file, an event, a hook's output) made harmless before it is shown: an escape sequence in it must not
//! clear the screen, move the cursor or retitle the window.

/// Whether to colour: only on a terminal, and never with `NO_COLOR` set (<https://no-color.org>; set to
/// anything, even empty, it is taken as asked).
pub fn colour_wanted(terminal: bool) -> bool {
    terminal && std::env::var_os("NO_COLOR").is_none()
}

/// The palette: every colour hookd paints, named by what it says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Bold red: held back, failed, refused, off.
    Alarm,
    /// Bold yellow: asked, weakened, a trouble to look at.
    Caution,
    /// Bold green: all is well (running, valid, reloaded).
    Good,
    /// Plain green: went through (allowed, a passed check).
    Fine,
}

impl Style {
    /// The style's ANSI code.
    fn code(self) -> &'static str {
        match self {
            Style::Alarm => "1;31",
            Style::Caution => "1;33",
            Style::Good => "1;32",
            Style::Fine => "32",
        }
    }
}

/// `text` in `style` when colouring, else as it is.
pub fn painted(text: &str, style: Style, colour: bool) -> String {
    if colour {
        format!("\x1b[{}m{text}\x1b[0m", style.code())
    } else {
        text.to_string()
    }
}

/// `text` in an ANSI style named below this floor (a decision's colour, from
/// [`crate::decision::Outcome::colour`]) when colouring, else as it is.
pub fn painted_code(text: &str, code: &str, colour: bool) -> String {
    if colour {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// `text` on one line: every control character (a newline, a tab, an escape) a space.
pub fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// `text` as it is safe to print on a terminal: its control characters shown escaped.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return text.into();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn painted_is_plain_without_colour() {
        assert_eq!(painted("refused", Style::Alarm, false), "refused");
        assert_eq!(
            painted("refused", Style::Alarm, true),
            "\x1b[1;31mrefused\x1b[0m"
        );
        assert_eq!(
            painted("allowed", Style::Fine, true),
            "\x1b[32mallowed\x1b[0m"
        );
    }

    #[test]
    fn text_from_outside_is_made_harmless() {
        assert_eq!(clean("a\x1b[2J\nb"), "a [2J b");
        assert_eq!(printable("a\x1b[2J"), "a\\u{1b}[2J");
        assert!(matches!(printable("plain"), std::borrow::Cow::Borrowed(_)));
    }
}
