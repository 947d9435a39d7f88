//! hookd: one per-user daemon that runs every coding agent's hooks from one settings file.
//!
//! A request comes in on the socket ([`server`]), is decoded ([`protocol`]), finds its hooks in the
//! current generation of the settings ([`settings`], [`state`]), each hook runs ([`runner`]), the outcomes
//! fold into a verdict ([`verdict`], driven by [`fire`]), and the verdict goes back. Nothing below imports
//! anything above it.
//!
//! - [`cli`], [`commands`]: the command line and what each command does; [`client`] is the client side.
//! - [`relay`]: hookd inside an agent's own hook settings; [`http`]: the same over HTTP, for agents'
//!   http hooks; both speak the agents' [`dialect`]s. [`snippet`] prints those settings, [`import`]
//!   turns an agent's existing hooks into hookd's.
//! - [`daemon`]: `hookd serve` start to finish; [`socket`] binds safely; [`logging`] sets up the logs.
//! - [`moment`]: the moments, one row each (matcher field, what a refusal does, how it is answered, which
//!   agents fire it and under which names); [`agent`]: the agents, one row each (names, tools, dialect,
//!   settings file); [`agents`]: the code that speaks each dialect.
//! - [`settings`]: the TOML model, its validation with `file:line:col` errors, the matchers.
//! - [`reload`]: re-reading the settings and swapping them in atomically; [`watch`] does it when the file
//!   changes.
//! - [`systemd`]: socket activation and sd_notify, silent outside systemd.
//! - [`stoploop`]: the count of refused Stops per session, and its cap.
//! - [`worker`]: worker hooks, kept running and asked one event per line; [`reaper`]: what escapes a
//!   hook's process group is stopped and reaped all the same.
//! - [`lines`]: bounded request lines; [`paths`]: the default paths; [`time`]: RFC 3339 time stamps.

pub mod agent;
pub mod agents;
pub mod commands;
pub mod daemon;
pub mod engine;
pub mod head;
pub mod limits;
pub mod lines;
pub mod logging;
pub mod moment;
pub mod paths;
pub mod protocol;
pub mod settings;
pub mod sync;
pub mod time;

/// The daemon's version, as `hello` and `status` report it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
