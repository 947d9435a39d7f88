//! The built-in guard: a hook the settings name (`builtin = "guard"`) that refuses, before a tool runs,
//! what would destroy work or a system beyond repair, or read secrets to the model (docs/guard.md).
//!
//! It is the guard a new user meets first, in the example settings, so it has to catch a command
//! however it is written: a tool call is read into a [`Call`] (which tool, what command line, which
//! files), the command line by [`crate::shell`] into every simple command it could run (wrappers,
//! carriers, functions where called, interpreters' one-liners), and each rule looks at what it knows
//! of: deletes (`delete.rs`), git (`git.rs`), downloads run as code, disks and the system (`system.rs`),
//! secrets (`secrets.rs`), and commands that cannot be known (`unknown.rs`). Every rule can be set to
//! refuse, ask or be off on its own; a refusal always says what was seen, why it is refused and what to
//! do instead, since the agent reads it and tries again.
//!
//! It runs in the daemon's own process, with no program to start: a decision costs microseconds (the
//! bench `fire -- guard`), so it can sit in front of every tool call.
//!
//! It is a seat belt, not a sandbox: docs/guard.md says what no guard that reads words can see.

pub mod call;
mod delete;
pub mod folders;
mod git;
pub mod rules;
mod secrets;
mod system;
mod unknown;
pub mod words;

use std::path::Path;

use serde_json::{Map, Value};

pub use call::Call;
pub use rules::{
    Action, DELETE_OUTSIDE, DELETE_PROJECT, DELETE_ROOT, DISK, Finding, GIT_DISCARD, GIT_HISTORY,
    NETWORK_SHELL, RULES, Rule, SECRETS, SYSTEM, UNKNOWN, rule,
};

/// The moments the guard may be hung on: those before a tool runs, where a refusal holds the call back
/// (the same as hookd's guard of itself).
pub const MOMENTS: &[&str] = &[
    crate::tables::moment::PRE_TOOL_USE,
    crate::tables::moment::PERMISSION_REQUEST,
    crate::tables::moment::PRE_SKILL_SHELL_COMMAND,
];

/// What the guard decided for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub action: Action,
    pub rule: &'static str,
    /// The reason, ready for the agent: the finding's, with how to turn the rule off.
    pub reason: String,
}

/// The guard as the settings set it: an action for each rule of [`RULES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    actions: Vec<Action>,
}

impl Default for Guard {
    fn default() -> Self {
        Guard {
            actions: RULES.iter().map(|rule| rule.default).collect(),
        }
    }
}

impl Guard {
    /// The guard with each rule's default but those `set` names (rule name, action); an unknown rule
    /// name is an error naming the rules (with a did-you-mean).
    pub fn with(set: &[(String, Action)]) -> Result<Guard, String> {
        let mut guard = Guard::default();
        for (name, action) in set {
            let Some(at) = RULES.iter().position(|rule| rule.name == name) else {
                let names = RULES.iter().map(|rule| rule.name);
                let hint = crate::tables::moment::did_you_mean(name, names.clone())
                    .map_or_else(String::new, |meant| format!(" (did you mean \"{meant}\"?)"));
                return Err(format!(
                    "unknown rule \"{name}\"{hint}; the guard's rules are {}",
                    names.collect::<Vec<_>>().join(", ")
                ));
            };
            guard.actions[at] = *action;
        }
        Ok(guard)
    }

    /// What this guard does for `rule`.
    pub fn action(&self, rule: &str) -> Action {
        RULES
            .iter()
            .position(|r| r.name == rule)
            .map_or(Action::Off, |at| self.actions[at])
    }

    /// The rules set otherwise than their default, for `hookd check`.
    pub fn changed(&self) -> Vec<(&'static str, Action)> {
        RULES
            .iter()
            .zip(&self.actions)
            .filter(|(rule, action)| rule.default != **action)
            .map(|(rule, action)| (rule.name, *action))
            .collect()
    }

    /// Judges one event (an agent's tool call, before it runs), `home` being the user's home folder. A
    /// refusal found by any rule wins over an ask; `None` lets the call through.
    pub fn judge(&self, event: &Map<String, Value>, home: &Path) -> Option<Verdict> {
        let call = Call::read(event, home)?;
        // The refusal told is the gravest found (the first in [`RULES`]' order: the root's delete before
        // one outside the project), then the first found; an ask only where nothing refuses.
        let rank = |finding: &Finding| RULES.iter().position(|r| r.name == finding.rule);
        let mut refused: Option<Finding> = None;
        let mut asked: Option<Finding> = None;
        for finding in findings(&call) {
            let slot = match self.action(finding.rule) {
                Action::Refuse => &mut refused,
                Action::Ask => &mut asked,
                Action::Off => continue,
            };
            if slot.as_ref().is_none_or(|kept| rank(&finding) < rank(kept)) {
                *slot = Some(finding);
            }
        }
        match (refused, asked) {
            (Some(finding), _) => Some(verdict(Action::Refuse, finding)),
            (None, Some(finding)) => Some(verdict(Action::Ask, finding)),
            (None, None) => None,
        }
    }
}

fn verdict(action: Action, finding: Finding) -> Verdict {
    let reason = format!(
        "{} (hookd's guard, rule {}; a person who means it can run it themselves, or set rules.{} = \"off\" in hookd's settings)",
        finding.reason, finding.rule, finding.rule
    );
    Verdict {
        action,
        rule: finding.rule,
        reason,
    }
}

/// Every finding of every rule for `call`, in the order of [`RULES`]' modules.
pub fn findings(call: &Call) -> Vec<Finding> {
    let mut found = Vec::new();
    let commands = call.commands();
    let seen = folders::Seen::new(call, &commands);
    delete::judge(&seen, &mut found);
    git::judge(&seen, &mut found);
    system::judge(&seen, &mut found);
    secrets::judge(call, &seen, &mut found);
    unknown::judge(&seen, &mut found);
    found
}

#[cfg(test)]
mod tests;
