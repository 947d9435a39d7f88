//! hookd: one per-user daemon that runs every coding agent's hooks from one settings file.
//!
//! A request comes in on the socket ([`daemon::server`]) or over HTTP ([`daemon::http`]), is decoded
//! ([`protocol::decoder`]) and handed to the [`engine`], which finds its hooks in the settings in force,
//! runs them all ([`engine::runner`], [`engine::worker`]), reads what each said ([`engine::reading`]) and
//! folds it into a [`decision::Verdict`] ([`engine::verdict`]); the daemon answers it
//! ([`daemon::answer`]), in the agent's dialect over HTTP
//! ([`agents::dialect::answer`](mod@agents::dialect::answer)).
//!
//! The layout is in one place, `docs/development.md` ("The map of the house"): every folder and file of
//! `src/` with what it holds, on its floor. A module imports only from its own floor or the floors
//! below it, never from above, and there is no import cycle; `tests/it/layering.rs` holds the code to
//! the floors and the map to the tree.
//!
//! The reference for users is in `docs/` (the protocol, the settings, the agents, the limits).

pub mod agents;
pub mod commands;
pub mod daemon;
pub mod decision;
pub mod engine;
#[cfg(feature = "otlp")]
pub mod export;
pub mod guard;
pub mod layers;
pub mod limits;
pub mod lines;
pub mod logging;
pub mod paths;
pub mod protocol;
pub mod record;
pub mod settings;
pub mod shell;
pub mod sync;
pub mod tables;
pub mod time;

/// The daemon's version, as `hello` and `status` report it: [`protocol::VERSION`], named here for the
/// binaries and the tests.
pub use protocol::VERSION;
