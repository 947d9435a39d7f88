//! What a fire asks of the engine ([`Fire`]), and what comes back beside or instead of its verdict:
//! what each hook printed ([`Printed`]), or why there was no verdict ([`NotDecided`]).

use crate::protocol::Event;

/// What a fire asks.
#[derive(Debug)]
pub struct Fire {
    pub moment: String,
    /// From the request, else the connection's `hello`.
    pub agent: Option<String>,
    /// The event, or for one that could not be decoded whole, its head and why.
    pub event: Event,
}

/// What one hook printed, as it was read (cut at the output limit, [`HookReport::truncated`](crate::decision::HookReport::truncated)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Printed {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Why a fire was not decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotDecided {
    /// A moment neither known nor declared by the settings; the message says so, with a suggestion.
    UnknownMoment(String),
    /// The fire was given up (the daemon is stopping) before its hooks finished.
    ShuttingDown,
}
