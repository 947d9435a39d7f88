//! `hookd-relay`: `hookd relay` as a program of its own, the command an agent starts on every tool call.
//!
//! It is the same relay (`hookd::commands::relay`), with the same options, reading and answering the
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

use clap::Parser;
use hookd::commands::cli::RelayOnly;

fn main() -> ExitCode {
    // Read as `hookd relay` reads its words, so that both take the same command lines.
    let words: Vec<OsString> = std::iter::once(OsString::from("relay"))
        .chain(std::env::args_os().skip(1))
        .collect();
    let args = match hookd::commands::relay_argv::parse(&words) {
        Some(args) => args,
        // Help, a mistake, or a rare spelling: the full parser of the relay's options says what it is.
        None => match RelayOnly::try_parse_from(
            std::iter::once(OsString::from("hookd-relay")).chain(words.iter().skip(1).cloned()),
        ) {
            Ok(relay) if relay.args.print_settings.is_some() => {
                eprintln!(
                    "hookd-relay: --print-settings is hookd's: run hookd relay --print-settings AGENT"
                );
                return ExitCode::FAILURE;
            }
            Ok(relay) => relay.args,
            // As `hookd relay`: help exits 0, a mistake 1 (never 2, an agent's refusal), or refuses
            // when the command line asks for --fail-closed.
            Err(e) => return hookd::commands::relay_command_line_error(&words, e),
        },
    };
    hookd::commands::relay_for_an_agent(
        args.agent,
        args.socket,
        args.fail_closed,
        args.event,
        args.timeout,
    )
}
