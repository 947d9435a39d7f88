//! The layers settings come in, and what only the managed layer may set (docs/teams.md).
//!
//! A team's policy is the managed layer (`/etc/hookd/managed.toml` and `managed.d/`, root's): the user,
//! and so the agent running as the user, cannot change it. The user's own file adds to it; a
//! repository's `.hookd/hooks.toml` adds hooks that may only tighten, once the user trusted them.

/// Where a hook, or a setting, comes from. Ordered as the fold runs them: managed first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Layer {
    /// The team's: root's files, which nothing lower can disable, replace or weaken.
    Managed,
    /// The user's own settings file.
    #[default]
    User,
    /// A repository's `.hookd/hooks.toml`: hooks only, for events whose `cwd` is inside it, once trusted.
    Project,
}

impl Layer {
    /// The layer's word, in `check`, `status` and the journal.
    pub fn name(self) -> &'static str {
        match self {
            Layer::Managed => "managed",
            Layer::User => "user",
            Layer::Project => "project",
        }
    }
}

/// Whether a repository's hooks may run at all (`project_hooks`, managed only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProjectHooks {
    /// Never: a repository's `.hookd/hooks.toml` is not read.
    Off,
    /// Once the user trusted each hook, pinned to its content (`hookd trust`): the default.
    #[default]
    Trusted,
}

/// What only the managed layer may set: the policy over the layers below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Policy {
    /// Only the managed layer's hooks run: the user's and the projects' are skipped, and the journal
    /// says so.
    pub allow_managed_hooks_only: bool,
    pub project_hooks: ProjectHooks,
    /// A relay that does not hold the call back when it cannot reach hookd (`--fail-closed`) is refused.
    pub require_fail_closed: bool,
}

impl Policy {
    /// The keys only the managed layer may set, at the top level of its files.
    pub const KEYS: &'static [&'static str] = &[
        "allow_managed_hooks_only",
        "project_hooks",
        "require_fail_closed",
    ];

    /// Two managed files' policies as one: the stricter of each.
    pub fn stricter(self, other: Policy) -> Policy {
        Policy {
            allow_managed_hooks_only: self.allow_managed_hooks_only
                || other.allow_managed_hooks_only,
            project_hooks: if self.project_hooks == ProjectHooks::Off
                || other.project_hooks == ProjectHooks::Off
            {
                ProjectHooks::Off
            } else {
                ProjectHooks::Trusted
            },
            require_fail_closed: self.require_fail_closed || other.require_fail_closed,
        }
    }
}
