//! The command line carried out: each command to the file that carries it out ([`run`]), and the relay's
//! command line, read on its own path ([`relay_main`]). Every error comes back as one clear line; `main`
//! prints it and exits 1.

// First, so that every module after it prints through its macros (`print!`, `println!`, `eprint!`,
// `eprintln!`), which drop what is printed once the reader has gone instead of panicking.
#[macro_use]
pub mod output;

mod admin_text;
mod answer_text;
mod cases;
mod check;
pub mod cli;
pub mod client;
mod doctor;
mod event_input;
mod files;
mod fire;
mod import;
mod install;
pub mod log;
mod managed;
mod manual;
mod print_settings;
mod record_text;
pub mod relay_argv;
pub mod relay_process;
mod reload;
pub mod setup;
mod shared;
mod status;
pub mod style;
mod test;
pub mod watch;

use std::process::ExitCode;

use crate::commands::cli::Command;
use crate::commands::shared::{for_people, known_agent};

pub fn run(command: Command) -> Result<ExitCode, String> {
    match command {
        Command::Serve { config, socket } => {
            let socket = socket.unwrap_or_else(crate::paths::default_socket);
            let places = crate::engine::protect::Places {
                socket: Some(std::path::absolute(&socket).unwrap_or_else(|_| socket.clone())),
                agent_files: setup::agent_files(),
                set_up_files: crate::agents::setups::setup_files(),
                ..crate::engine::protect::Places::of_this_user()
            };
            crate::daemon::run(
                &config.unwrap_or_else(crate::paths::default_config),
                &socket,
                places,
            )
        }
        Command::Check { config, json } => {
            check::check(&config.unwrap_or_else(crate::paths::default_config), json)
        }
        Command::Fire {
            moment,
            agent,
            socket,
            json,
        } => fire::fire(fire::Options {
            socket: &client::daemon_socket(socket),
            moment,
            agent,
            json,
        }),
        Command::Test {
            moment,
            agent,
            event,
            agent_event,
            config,
            cases,
            json,
        } => {
            let config = config.unwrap_or_else(crate::paths::default_config);
            match cases {
                Some(cases) => cases::run_file(&config, &cases, json),
                None => test::test(test::Options {
                    moment,
                    agent,
                    event,
                    agent_event,
                    config,
                    json,
                }),
            }
        }
        Command::Status { socket, json } => {
            status::status(&client::daemon_socket(socket), for_people(json))
        }
        Command::Reload { socket, json } => {
            reload::reload(&client::daemon_socket(socket), for_people(json))
        }
        Command::Install {
            bin,
            dir,
            force,
            no_enable,
        } => install::install(bin, dir, force, no_enable),
        Command::Setup(args) => setup::run(&args),
        Command::Doctor {
            socket,
            config,
            json,
        } => doctor::doctor(doctor::Options {
            socket,
            config,
            json,
        }),
        Command::Relay(args) => match args.print_settings.as_deref() {
            Some(agent) => print_settings::print_settings(agent, &args),
            None => Ok(relay_for_an_agent(args)),
        },
        Command::Log {
            filter,
            since,
            last,
            asks,
            json,
            journal,
        } => log::log(log::Log {
            filter,
            since,
            last,
            asks,
            json,
            journal,
        }),
        Command::Watch {
            filter,
            json,
            socket,
        } => watch::watch(&client::daemon_socket(socket), &filter, json),
        Command::Why {
            agent,
            session,
            moment,
            json,
            journal,
        } => log::why(log::Why {
            agent,
            session,
            moment,
            json,
            journal,
        }),
        Command::Completions { shell } => manual::completions(shell),
        Command::Man { dir } => manual::man(dir.as_deref()),
        Command::Import { file, agent } => import::import(&file, agent.as_deref()),
    }
}

/// The relay's command line (`words`, the first of them `relay`) carried out, one path for `hookd relay`
/// and `hookd-relay` so that the two answer alike: the plain forms hookd writes read without clap
/// ([`relay_argv`]), anything else by the relay's options alone ([`cli::RelayOnly`]), never every
/// command's. A command line that asks for more than relaying (`--print-settings`) goes to `other`:
/// `hookd` prints the settings, `hookd-relay` (which leaves that code out, to stay small) says to ask
/// `hookd`.
///
/// A command line that asks for fail-closed in any spelling ([`relay_argv::asks_fail_closed_as`]) and
/// cannot relay as asked (help, `--print-settings` that fails, a misspelt `--fail-closed`) refuses the
/// call ([`crate::commands::relay_process::refuse_for_its_command_line`]): exit 0 or 1 would let every tool call through.
pub fn relay_main(
    words: &[std::ffi::OsString],
    other: impl FnOnce(cli::RelayArgs) -> Result<ExitCode, String>,
) -> ExitCode {
    use clap::Parser;
    let args = match relay_argv::parse(words) {
        Some(args) => args,
        None => match cli::RelayOnly::try_parse_from(words) {
            Ok(relay) if relay.args.print_settings.is_some() => {
                return match other(relay.args) {
                    Ok(code) => code,
                    Err(why) if relay_argv::asks_fail_closed(words) => {
                        refuse_for_the_relays_words(words, &why)
                    }
                    Err(why) => {
                        eprintln!("hookd: {why}");
                        ExitCode::FAILURE
                    }
                };
            }
            Ok(relay) => relay.args,
            Err(e) => return relay_command_line_error(words, e),
        },
    };
    if !args.fail_closed
        && let Some(word) = relay_argv::asks_fail_closed_as(words)
    {
        // Read as a value (`--event —fail-closed`), the word left the relay fail-open.
        let why = format!(
            "the relay's command line asks for fail-closed as {:?}, which it does not read as --fail-closed; write --fail-closed",
            word.to_string_lossy()
        );
        return refuse_for_the_relays_words(words, &why);
    }
    relay_for_an_agent(args)
}

/// The relay's command line asks for fail-closed and cannot relay as asked (`why`): refused, placed by
/// the agent and event its words name.
fn refuse_for_the_relays_words(words: &[std::ffi::OsString], why: &str) -> ExitCode {
    crate::commands::relay_process::refuse_for_its_command_line(
        relay_argv::value_of(words, "--agent").and_then(crate::agents::Agent::from_name),
        relay_argv::value_of(words, "--event"),
        why,
    )
}

/// `hookd relay` as an agent runs it: one event relayed. Kept out of [`run`], whose every command LTO
/// inlines into one large function, so that the relay started on every tool call touches (and faults in)
/// only its own code.
#[inline(never)]
fn relay_for_an_agent(args: cli::RelayArgs) -> ExitCode {
    let timeout = std::time::Duration::try_from_secs_f64(args.timeout)
        .ok()
        .filter(|t| !t.is_zero())
        .ok_or("--timeout must be a positive number of seconds");
    let (agent, timeout) = match known_agent(&args.agent).and_then(|agent| Ok((agent, timeout?))) {
        Ok(known) => known,
        // Exit 1 would let the agent go on: the refusal asked for must not be lost to a wrong option.
        Err(why) if args.fail_closed => {
            return crate::commands::relay_process::refuse_for_its_command_line(
                crate::agents::Agent::from_name(&args.agent),
                args.event.as_deref(),
                &why,
            );
        }
        // Said as the relay says everything else, so that `hookd relay` and `hookd-relay` say it alike.
        Err(why) => {
            eprintln!("hookd relay: {why}");
            return ExitCode::FAILURE;
        }
    };
    // Told a socket, only there; else every place the daemon may listen, whatever this process's
    // environment (an agent started without XDG_RUNTIME_DIR still finds the daemon).
    let places = match args.socket {
        Some(socket) => vec![socket],
        None => crate::paths::socket_places(),
    };
    crate::commands::relay_process::run(
        &crate::commands::relay_process::Options {
            agent,
            socket: places[0].clone(),
            fail_closed: args.fail_closed,
            event: args.event,
            timeout,
        },
        &places,
    )
}

/// A relay's command line that clap could not read (`error`), in `hookd relay` and `hookd-relay` alike:
/// said as clap says it, then help exits 0 and a mistake 1, never clap's 2, which an agent reads as a
/// refusal; but a command line that asks for `--fail-closed` in any spelling refuses, help included
/// (said on stderr) ([`crate::commands::relay_process::refuse_for_its_command_line`]): exit 0 or 1 would let every tool call
/// through.
fn relay_command_line_error(words: &[std::ffi::OsString], error: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let asks_fail_closed = relay_argv::asks_fail_closed(words);
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion if asks_fail_closed => {
            // The help on stderr, where a person still sees it and no agent reads it as an answer.
            eprint!("{}", error.render());
            refuse_for_the_relays_words(
                words,
                "the relay was asked for its help or version (-h, --help, -V, --version), not to relay",
            )
        }
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = error.print();
            ExitCode::SUCCESS
        }
        _ if asks_fail_closed => {
            let _ = error.print();
            let said = error.render().to_string();
            let first = said.lines().next().unwrap_or_default();
            let why = format!(
                "the relay's command line is wrong: {}",
                first.strip_prefix("error: ").unwrap_or(first)
            );
            refuse_for_the_relays_words(words, &why)
        }
        _ => {
            let _ = error.print();
            ExitCode::FAILURE
        }
    }
}
