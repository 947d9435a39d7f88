//! hookd: one per-user daemon that runs every coding agent's hooks from one settings file.
//!
//! A request comes in on the socket ([`daemon::server`]) or over HTTP ([`daemon::http`]), is decoded
//! ([`protocol`]) and handed to the [`engine`], which finds its hooks in the settings in force, runs them
//! all ([`engine::runner`], [`engine::worker`]) and folds what they said into a [`engine::Decision`]
//! ([`engine::verdict`]); the daemon answers it ([`daemon::answer`]), in the agent's dialect over HTTP
//! ([`agents::dialect`]).
//!
//! The layout, in floors. A module imports only from its own floor or the floors below it, never from
//! above, and there is no import cycle:
//!
//! 5. [`commands`]: the command line ([`commands::cli`]) and what each command does; the client side of
//!    the protocol ([`commands::client`]) and `hookd relay` as a process ([`commands::relay`]).
//! 4. [`daemon`]: `hookd serve`: the socket server, the HTTP listener, reload and the file watch,
//!    systemd, the budgets (memory, descriptors). It owns an engine and translates its decisions.
//! 3. `export` (the `otlp` feature, on by default): the journal followed from its files and sent to an
//!    OpenTelemetry collector as OTLP logs, on a thread of its own.
//! 3. [`engine`]: decides a fire from the settings in force: the generations, the runner, the workers,
//!    the reaper, the stop loops, the verdict. Knows nothing of sockets: a test can hold one in its hand.
//! 3. [`agents`]: the code that speaks each agent's dialect in and out, relays an agent's hook input
//!    ([`agents::relay`]: the relay's logic, given its input and a way to ask the daemon), prints its
//!    hook settings (`--print-settings`) and imports its existing hooks, reading the rows of [`agent`]
//!    and [`moment`].
//! 2. [`protocol`]: the socket protocol's requests and responses, written by the daemon and read by
//!    the clients. [`record`]: the journal's lines, the recorder they are handed to, the relay's spool. [`settings`]: the TOML model, its validation with `file:line:col` errors, the matchers,
//!    the trust in the file and its programs. [`guard`]: the built-in guard's rules, a tool call judged
//!    for what would destroy work or read secrets (pure).
//! 1. The ground floor, facts and small tools that import nothing above them: [`moment`] (every moment,
//!    one row each: matcher field, what a refusal does, how it is answered, which agents fire it and
//!    under which names), [`agent`] (every agent, one row each: names, tools, dialect, settings file,
//!    import), [`limits`] (every limit, with its reason), [`head`] (the head of an event too large
//!    to decode), [`lines`] (bounded lines), [`shell`] (a shell command line read as a shell splits it, for judging), [`logging`], [`paths`], [`sync`], [`time`].
//!
//! The reference for users is in `docs/` (the protocol, the settings, the agents, the limits).

pub mod agent;
pub mod agents;
pub mod commands;
pub mod daemon;
pub mod engine;
#[cfg(feature = "otlp")]
pub mod export;
pub mod guard;
pub mod head;
pub mod limits;
pub mod lines;
pub mod logging;
pub mod moment;
pub mod paths;
pub mod protocol;
pub mod record;
pub mod settings;
pub mod shell;
pub mod sync;
pub mod time;

/// The daemon's version, as `hello` and `status` report it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
