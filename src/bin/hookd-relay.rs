//! `hookd-relay`: `hookd relay` as a program of its own, the command an agent starts on every tool call.
//!
//! It is the same relay (`hookd::commands::relay_process`), with the same options, reading and answering the
//! same way; only the program around it is small. A process of the whole `hookd` faults in pages of a
//! large binary (and, in the default build, loads and relocates it) before it does any work, and on a VM
//! every first touch of a page costs microseconds: that start was most of what a tool call paid for
//! the relay (BENCHMARKS.md, "The relay's start"). Linked on its own, the relay's code sits in a binary a
//! fifth the size, which faults in half the pages; built static (`cargo build-static`), it starts about
//! as fast as `/bin/true`.
//!
//! `hookd relay --print-settings` and `hookd setup` write this program into the agents' settings when it
//! is installed beside `hookd` (as `cargo install` puts it); settings that name `hookd relay` keep working.
//! `--print-settings` itself stays with `hookd relay`, which knows every agent's settings file.

use std::ffi::OsString;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Read as `hookd relay` reads its words, by the same code, so that both answer alike.
    let words: Vec<OsString> = std::iter::once(OsString::from("relay"))
        .chain(std::env::args_os().skip(1))
        .collect();
    hookd::commands::relay_main(&words, |_| {
        Err("hookd-relay cannot print settings: --print-settings is hookd's: run hookd relay --print-settings AGENT".into())
    })
}
