//! The moments of an agent's turn that hookd knows, and the event field a `matcher` tests at each.
//!
//! One table, so that the settings validation, `check`, the fire path and the did-you-mean all agree.

/// A known moment: its name as Claude Code spells it and the event field its matchers test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moment {
    pub name: &'static str,
    /// The event field a `matcher` is tested against; `None` where a matcher makes no sense.
    pub matcher_field: Option<&'static str>,
}

/// Every moment hookd knows, in the order of an agent's turn (the order `check` prints them in).
pub const KNOWN: &[Moment] = &[
    Moment {
        name: "SessionStart",
        matcher_field: Some("source"),
    },
    Moment {
        name: "UserPromptSubmit",
        matcher_field: None,
    },
    Moment {
        name: "PreToolUse",
        matcher_field: Some("tool_name"),
    },
    Moment {
        name: "PermissionRequest",
        matcher_field: Some("tool_name"),
    },
    Moment {
        name: "PostToolUse",
        matcher_field: Some("tool_name"),
    },
    Moment {
        name: "PostToolUseFailure",
        matcher_field: Some("tool_name"),
    },
    Moment {
        name: "Notification",
        matcher_field: Some("notification_type"),
    },
    Moment {
        name: "SubagentStart",
        matcher_field: Some("agent_type"),
    },
    Moment {
        name: "SubagentStop",
        matcher_field: Some("agent_type"),
    },
    Moment {
        name: "Stop",
        matcher_field: None,
    },
    Moment {
        name: "PreCompact",
        matcher_field: Some("trigger"),
    },
    Moment {
        name: "PostCompact",
        matcher_field: Some("trigger"),
    },
    Moment {
        name: "SessionEnd",
        matcher_field: Some("reason"),
    },
];

/// Looks a moment up by its exact name.
pub fn known(name: &str) -> Option<&'static Moment> {
    KNOWN.iter().find(|m| m.name == name)
}

/// Position of a moment in [`KNOWN`], for ordering; extra (declared) moments sort after.
pub fn order(name: &str) -> usize {
    KNOWN
        .iter()
        .position(|m| m.name == name)
        .unwrap_or(KNOWN.len())
}

/// Whether a refusal with nothing to say should count as nothing: at `Stop` the agent would be sent on
/// with no instruction (contract 7).
pub fn is_stop(name: &str) -> bool {
    name == "Stop" || name == "SubagentStop"
}

/// Names longer than this get no suggestion.
const MAX_SUGGESTED_LEN: usize = 64;

/// A client-given name as it is shown in an error: cut at 100 characters.
pub fn shown(name: &str) -> String {
    match name.char_indices().nth(100) {
        Some((cut, _)) => format!("{}...", &name[..cut]),
        None => name.to_string(),
    }
}

/// The closest name among `candidates` to `name`, when it is close enough to be a likely typo.
///
/// Case is ignored first (`pretooluse` is surely `PreToolUse`), then an edit distance of at most a third
/// of the length decides: the optimal string alignment distance, which counts a swap of two neighbours
/// as one edit, the commonest typo (`Stpo`).
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    // Names come from clients too (up to a request line of 65 MiB): a long one is no typo of a short one, and the
    // distance costs the product of the lengths.
    if name.len() > MAX_SUGGESTED_LEN {
        return None;
    }
    let lower = name.to_ascii_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        let distance = if candidate.to_ascii_lowercase() == lower {
            0
        } else {
            strsim::osa_distance(&lower, &candidate.to_ascii_lowercase())
        };
        if best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.filter(|(d, c)| *d <= (c.len() / 3).max(1))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> impl Iterator<Item = &'static str> {
        KNOWN.iter().map(|m| m.name)
    }

    #[test]
    fn suggests_the_moment_a_typo_meant() {
        assert_eq!(did_you_mean("PreTooluse", names()), Some("PreToolUse"));
        assert_eq!(did_you_mean("pretooluse", names()), Some("PreToolUse"));
        assert_eq!(did_you_mean("PostToolUs", names()), Some("PostToolUse"));
        assert_eq!(did_you_mean("Stpo", names()), Some("Stop"));
    }

    #[test]
    fn a_huge_name_gets_no_suggestion_and_is_shown_cut() {
        let huge = "P".repeat(1 << 20);
        assert_eq!(did_you_mean(&huge, names()), None);
        assert_eq!(shown(&huge).len(), 103);
        assert_eq!(shown("Stop"), "Stop");
    }

    #[test]
    fn suggests_nothing_for_a_name_far_from_all() {
        assert_eq!(did_you_mean("BeforeTool", names()), None);
        assert_eq!(did_you_mean("x", names()), None);
    }

    #[test]
    fn matcher_fields_follow_the_contract() {
        assert_eq!(
            known("PreToolUse").unwrap().matcher_field,
            Some("tool_name")
        );
        assert_eq!(known("Stop").unwrap().matcher_field, None);
        assert_eq!(known("UserPromptSubmit").unwrap().matcher_field, None);
        assert_eq!(
            known("SubagentStop").unwrap().matcher_field,
            Some("agent_type")
        );
        assert!(known("BeforeTool").is_none());
    }
}
