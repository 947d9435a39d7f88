//! The tables hookd works from, a row each: every agent ([`agent`]: its names, tools, dialect, powers,
//! settings file, default settings file and timeout, import) and every moment ([`moment`]: its matcher
//! field, what a refusal does, how it is answered, what may be rewritten, its part in the stop loop, and
//! which agents fire it under which names). Facts only: they import nothing above the ground floor.

pub mod agent;
pub mod moment;
