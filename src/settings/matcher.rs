//! Matchers, read exactly as Claude Code reads them, so that a matcher copied from Claude Code's settings
//! behaves the same here (docs/settings.md, "Matchers").

use serde_json::{Map, Value};

/// What a hook's `matcher` selects.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Absent, `""` or `"*"`: every event of the moment.
    Any,
    /// Only letters, digits, `_`, `-`, space, `,` and `|`: exact names, split on `|` and `,`.
    Names(Vec<String>),
    /// Anything else: an unanchored regular expression.
    Regex(regex::Regex),
}

impl Matcher {
    /// Reads a matcher string. The only error is an invalid regular expression.
    pub fn parse(source: &str) -> Result<Matcher, regex::Error> {
        if source.is_empty() || source == "*" {
            return Ok(Matcher::Any);
        }
        let is_name_list = source
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | ',' | '|'));
        if is_name_list {
            let names = source
                .split(['|', ','])
                .map(str::trim)
                .filter(|name| !name.is_empty())
                .map(String::from)
                .collect();
            return Ok(Matcher::Names(names));
        }
        regex::Regex::new(source).map(Matcher::Regex)
    }

    /// Whether one value of the tested field fits.
    pub fn matches_value(&self, value: &str) -> bool {
        match self {
            Matcher::Any => true,
            Matcher::Names(names) => names.iter().any(|name| name == value),
            Matcher::Regex(regex) => regex.is_match(value),
        }
    }

    /// Whether an event fits, testing `field`. An event without the field, or with it empty (Claude Code
    /// once sent `agent_type: ""` at SubagentStop, which slipped past a matcher `.*` was not meant to let
    /// pass), fits no matcher but [`Matcher::Any`]: a value the agent did not give is no value to match.
    ///
    /// For `tool_name`, the agent's own tool name in `agent_tool_name` (set by the relay for agents whose tools
    /// are renamed, docs/agents.md) is tested too, so that a matcher fits when it matches either name.
    pub fn matches_event(&self, event: &Map<String, Value>, field: &str) -> bool {
        if let Matcher::Any = self {
            return true;
        }
        let fits = |key: &str| {
            event
                .get(key)
                .and_then(Value::as_str)
                .filter(|v| !v.is_empty())
                .is_some_and(|v| self.matches_value(v))
        };
        fits(field) || (field == "tool_name" && fits("agent_tool_name"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(source: &str) -> Matcher {
        Matcher::parse(source).unwrap()
    }

    #[test]
    fn empty_and_star_match_everything() {
        for source in ["", "*"] {
            assert!(m(source).matches_value("Bash"));
            assert!(
                m(source).matches_event(&Map::new(), "tool_name"),
                "an event without the field still fits {source:?}"
            );
        }
    }

    #[test]
    fn a_plain_name_is_exact() {
        assert!(m("Bash").matches_value("Bash"));
        assert!(!m("Bash").matches_value("BashOutput"));
        assert!(!m("Bash").matches_value("bash"));
    }

    #[test]
    fn names_split_on_pipe_and_comma_and_are_trimmed() {
        let matcher = m("Edit|Write");
        assert!(matcher.matches_value("Edit") && matcher.matches_value("Write"));
        assert!(!matcher.matches_value("NotebookEdit"));
        let matcher = m("Bash, Read");
        assert!(matcher.matches_value("Bash") && matcher.matches_value("Read"));
        assert!(!matcher.matches_value(" Read"));
    }

    #[test]
    fn other_characters_make_an_unanchored_regex() {
        assert!(m("mcp__.*").matches_value("mcp__github__create_issue"));
        assert!(
            m("Edit.*").matches_value("NotebookEdit"),
            "unanchored, as Claude Code reads it"
        );
        assert!(m("Notebook.*").matches_value("NotebookRead"));
        assert!(!m("^Edit$").matches_value("NotebookEdit"));
    }

    #[test]
    fn an_invalid_regex_is_an_error() {
        assert!(Matcher::parse("Edit(").is_err());
    }

    #[test]
    fn an_event_without_the_field_fits_no_matcher() {
        let event = json!({"session_id": "s"});
        assert!(!m("Bash").matches_event(event.as_object().unwrap(), "tool_name"));
        assert!(!m(".*").matches_event(event.as_object().unwrap(), "tool_name"));
    }

    #[test]
    fn an_empty_field_fits_no_matcher_but_any() {
        let event = json!({"agent_type": ""});
        let event = event.as_object().unwrap();
        for source in [".*", "^$", "x|", "Explore"] {
            assert!(!m(source).matches_event(event, "agent_type"), "{source}");
        }
        assert!(m("*").matches_event(event, "agent_type"));
    }

    #[test]
    fn the_agents_own_tool_name_fits_too() {
        let event = json!({"tool_name": "Bash", "agent_tool_name": "run_shell_command"});
        let event = event.as_object().unwrap();
        assert!(m("Bash").matches_event(event, "tool_name"));
        assert!(m("run_shell_command").matches_event(event, "tool_name"));
        assert!(!m("run_shell_command").matches_event(event, "source"));
    }
}
