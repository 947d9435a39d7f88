//! The engine: decides a fire from the settings in force.

pub mod fire;
pub mod reaper;
pub mod runner;
pub mod stoploop;
pub mod verdict;
pub mod worker;
