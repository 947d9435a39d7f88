//! Every request and response of the socket protocol (docs/protocol.md): one JSON object per line, each way.
//! The types are in [`types`] (named from here too); a request line is read by [`decoder`] (by hand, for
//! clear errors), and an event too large or too deep to decode whole by [`head`].

pub mod decoder;
pub mod head;
pub mod types;

pub use types::*;
