//! The engine: given the settings in force, decides a fire. It picks the hooks that fit, runs them all
//! at once (processes, or questions to worker hooks), reads each answer and folds them into a
//! [`Verdict`](crate::decision::Verdict), in the settings file's order whatever order the hooks finished in.
//!
//! It knows nothing of sockets, HTTP or systemd: the daemon owns an engine and translates its decisions
//! into answers; tests and benchmarks hold one in their hand and fire at it in-process.
//!
//! ```no_run
//! # async fn example(settings: hookd::settings::Settings, event: hookd::protocol::Event) {
//! use hookd::engine::{Engine, Fire};
//! let engine = Engine::new(settings);
//! let fire = Fire { moment: "PreToolUse".into(), agent: None, event };
//! let decision = engine.decide(fire, &engine.abandoned().child_token()).await;
//! # }
//! ```

mod asks;
mod background;
mod clone_exec;
pub mod fire;
pub mod live;
pub mod live_check;
pub mod projects;
pub mod protect;
pub mod reading;
pub mod reaper;
mod recording;
mod request;
pub mod runner;
mod running;
mod spawn;
mod state;
pub mod stoploop;
#[cfg(test)]
mod test_program;
pub mod verdict;
pub mod weakened;
pub mod worker;

pub use recording::{AfterAnswer, answer_first};
pub use request::{Fire, NotDecided, Printed};
pub use state::{Engine, Generation, Installed, dropped_hooks};
pub use weakened::weakened;
