//! The settings in layers (docs/teams.md): the team's managed layer (root's files, which the user and
//! the agent running as the user cannot change), the user's own file, and a repository's
//! `.hookd/hooks.toml`, trusted by content. One fold runs them all: managed first, then the user's,
//! then the project's, each in its file's order.

pub mod fold;
pub mod managed;
pub mod named;
pub mod project;
pub mod snapshot;
pub mod trust;
