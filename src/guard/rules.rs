//! The guard's rules: each rule's name, what it does unless the settings say otherwise, and what it looks
//! for in a line; the actions a rule may be set to; and what a rule found. The files that judge a call
//! (delete, git, system, secrets, unknown) name their rules from here.

/// What a rule does when it finds what it looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The call is refused; the agent is told why and what to do instead.
    Refuse,
    /// A person is asked (at moments where the agent can ask; elsewhere hookd's fold makes it a refusal).
    Ask,
    /// The rule is not applied.
    Off,
}

impl Action {
    /// The action a settings word names: `"refuse"`, `"ask"` or `"off"`.
    pub fn parse(word: &str) -> Option<Action> {
        match word {
            "refuse" => Some(Action::Refuse),
            "ask" => Some(Action::Ask),
            "off" => Some(Action::Off),
            _ => None,
        }
    }

    /// The settings word for this action.
    pub fn word(self) -> &'static str {
        match self {
            Action::Refuse => "refuse",
            Action::Ask => "ask",
            Action::Off => "off",
        }
    }
}

/// One rule of the guard: its name in the settings, what it does unless told otherwise, and what it
/// looks for, in a line (for `hookd check` and docs/guard.md).
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub name: &'static str,
    pub default: Action,
    pub summary: &'static str,
}

/// Every rule, in the order a call is judged by them (the first refusal found is the one told).
pub const RULES: &[Rule] = &[
    Rule {
        name: DELETE_ROOT,
        default: Action::Refuse,
        summary: "recursive or forced deletes of /, a top-level folder, the home folder or above it",
    },
    Rule {
        name: DELETE_PROJECT,
        default: Action::Refuse,
        summary: "recursive deletes of the project (the working folder), everything in it, or a folder above it",
    },
    Rule {
        name: DELETE_OUTSIDE,
        default: Action::Refuse,
        summary: "recursive deletes outside the project and the temporary folders",
    },
    Rule {
        name: GIT_DISCARD,
        default: Action::Refuse,
        summary: "git that throws away uncommitted work: reset --hard, checkout -f or -- FILE, restore, clean -f, stash drop, ...",
    },
    Rule {
        name: GIT_HISTORY,
        default: Action::Refuse,
        summary: "git that loses commits or rewrites what others share: push --force, push --delete, branch -D, ...",
    },
    Rule {
        name: NETWORK_SHELL,
        default: Action::Refuse,
        summary: "a download run as code: curl URL | sh, bash <(curl URL), sh -c \"$(wget -O- URL)\"",
    },
    Rule {
        name: DISK,
        default: Action::Refuse,
        summary: "disks and devices: mkfs, dd of=/dev/..., writes to a block device, wipefs, partitioning",
    },
    Rule {
        name: SYSTEM,
        default: Action::Refuse,
        summary: "the system beyond repair: chmod or chown -R of / or the home folder, fork bombs, kill -9 -1",
    },
    Rule {
        name: SECRETS,
        default: Action::Refuse,
        summary: "reading secrets by any tool: .env files, private keys, cloud and registry credentials",
    },
    Rule {
        name: UNKNOWN,
        default: Action::Refuse,
        summary: "commands that cannot be known before they run: a program from input or a variable",
    },
];

pub const DELETE_ROOT: &str = "delete-root";
pub const DELETE_PROJECT: &str = "delete-project";
pub const DELETE_OUTSIDE: &str = "delete-outside";
pub const GIT_DISCARD: &str = "git-discard";
pub const GIT_HISTORY: &str = "git-history";
pub const NETWORK_SHELL: &str = "network-shell";
pub const DISK: &str = "disk";
pub const SYSTEM: &str = "system";
pub const SECRETS: &str = "secrets";
pub const UNKNOWN: &str = "unknown";

/// The rule named `name`, when there is one.
pub fn rule(name: &str) -> Option<&'static Rule> {
    RULES.iter().find(|rule| rule.name == name)
}

/// What a rule found: which rule, and the reason told to the agent (what was seen, why it is refused,
/// what to do instead).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: &'static str,
    pub reason: String,
}
