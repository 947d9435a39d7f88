//! Each command of the command line, carried out. Every error comes back as one clear line; `main` prints
//! it and exits 1.

// std's printing macros, shadowed for every command: what is printed after the reader has gone (a closed
// pipe, `hookd log | head`) is dropped instead of panicking (see `output.rs`). Defined before the modules
// so that each of them prints through these.
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::commands::output::print($crate::commands::output::Stream::Out, format_args!($($arg)*))
    };
}
macro_rules! println {
    () => {
        print!("\n")
    };
    ($($arg:tt)*) => {
        print!("{}\n", format_args!($($arg)*))
    };
}
macro_rules! eprint {
    ($($arg:tt)*) => {
        $crate::commands::output::print($crate::commands::output::Stream::Err, format_args!($($arg)*))
    };
}
macro_rules! eprintln {
    () => {
        eprint!("\n")
    };
    ($($arg:tt)*) => {
        eprint!("{}\n", format_args!($($arg)*))
    };
}

mod admin_text;
mod answer_text;
mod cases;
pub mod cli;
pub mod client;
mod doctor;
mod event_input;
mod files;
mod fire;
mod install;
pub mod log;
mod manual;
pub mod output;
pub mod relay;
pub mod relay_argv;
mod render;
pub mod setup;
mod test;
pub mod watch;

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};

use crate::protocol::{Asking, ErrorResponse, ReloadResponse, StatusResponse};

use crate::commands::cli::Command;
use crate::settings::{LoadError, Program, Settings};

/// How long `status` and `reload` wait for the daemon.
const ADMIN_TIMEOUT: Duration = Duration::from_secs(30);

/// Exit status of `fire` when the verdict refused.
const EXIT_REFUSED: u8 = 2;

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
            check(&config.unwrap_or_else(crate::paths::default_config), json)
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
        } => test::test(test::Options {
            moment,
            agent,
            event,
            agent_event,
            config: config.unwrap_or_else(crate::paths::default_config),
            cases,
            json,
        }),
        Command::Status { socket, json } => {
            status(&client::daemon_socket(socket), for_people(json))
        }
        Command::Reload { socket, json } => {
            reload(&client::daemon_socket(socket), for_people(json))
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
            Some(agent) => print_settings(agent, &args),
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
        Command::Import { file, agent } => {
            let agent = agent.as_deref().map(known_agent).transpose()?;
            let text = files::read_agent_file(&file)?;
            let imported =
                crate::agents::import::convert(&text, &file.display().to_string(), agent)?;
            print!("{}", imported.toml);
            for warning in imported.warnings {
                eprintln!("warning: {warning}");
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Where the http hooks post: 127.0.0.1 and `--port`, else the settings file's `[http] listen`.
fn http_address(port: Option<u16>, config: &Path) -> Result<std::net::SocketAddr, String> {
    if let Some(port) = port {
        return Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    let shown = config.display();
    let settings = match Settings::load(config) {
        Ok(settings) => settings,
        Err(LoadError::NotFound) => {
            return Err(format!(
                "{shown}: no such settings file, to read [http] listen from; pass --port or --config"
            ));
        }
        Err(LoadError::Invalid(errors)) => return Err(format!("{shown} is invalid:\n{errors}")),
    };
    match settings.http.listen {
        None => Err(format!(
            "{shown} has no [http] listen, so the daemon runs no http listener; add [http] listen = \"127.0.0.1:8787\" to it, or pass --port"
        )),
        Some(address) if address.port() == 0 => Err(format!(
            "{shown} has [http] listen = \"{address}\": port 0 is a new port at every start, which settings.json cannot follow; give a fixed port, or pass --port"
        )),
        Some(address) => Ok(address),
    }
}

/// `hookd relay --print-settings AGENT` (with `--http`, Claude Code's http hooks): the snippet for the
/// agent's own settings, the relay's command in it as `setup` writes it.
fn print_settings(agent: &str, args: &cli::RelayArgs) -> Result<ExitCode, String> {
    let agent = known_agent(agent)?;
    let flags = |socket| crate::agents::snippet::RelayFlags {
        socket,
        fail_closed: args.fail_closed,
    };
    if !args.http {
        print!(
            "{}",
            crate::agents::snippet::for_agent(
                agent,
                &relay_binary()?,
                &flags(args.socket.clone())
            )?
        );
        return Ok(ExitCode::SUCCESS);
    }
    crate::agents::snippet::require_http(agent)?;
    let socket = args
        .socket
        .clone()
        .unwrap_or_else(crate::paths::default_socket);
    let config = args
        .config
        .clone()
        .unwrap_or_else(crate::paths::default_config);
    let address = http_address(args.port, &config)?;
    let token_file = crate::daemon::http::token::default_path();
    let relay =
        crate::agents::snippet::relay_command(agent, &relay_binary()?, &flags(Some(socket)));
    let (snippet, note) = crate::agents::snippet::http_snippet(
        agent,
        address,
        &token_file,
        &relay,
        args.fail_closed,
    )?;
    print!("{snippet}");
    eprint!("{note}");
    Ok(ExitCode::SUCCESS)
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
/// call ([`relay::refuse_for_its_command_line`]): exit 0 or 1 would let every tool call through.
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
    crate::commands::relay::refuse_for_its_command_line(
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
            return crate::commands::relay::refuse_for_its_command_line(
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
    crate::commands::relay::run(
        &crate::commands::relay::Options {
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
/// (said on stderr) ([`relay::refuse_for_its_command_line`]): exit 0 or 1 would let every tool call
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

fn known_agent(name: &str) -> Result<crate::agents::Agent, String> {
    crate::agents::Agent::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = crate::agents::Agent::ALL.iter().map(|a| a.name()).collect();
        let meant = crate::settings::meant_agent(name)
            .map(|meant| format!("did you mean \"{meant}\"? "))
            .unwrap_or_default();
        format!(
            "unknown agent \"{}\" ({meant}one of: {})",
            crate::moment::shown(name),
            names.join(", ")
        )
    })
}

/// The program to write into agents' settings for the relay, the fastest to start that is installed
/// beside this binary and may be trusted as hookd is ([`trusted_beside`]): `hookd-relay-lite` (no libc,
/// `lite/`), which hands what it cannot carry to `hookd-relay` beside it, so only with that one there
/// too; else `hookd-relay` (see `src/bin/hookd-relay.rs`); else this binary (`hookd relay`), which always
/// works.
fn relay_binary() -> Result<String, String> {
    use crate::agents::snippet::{LITE_RELAY_PROGRAM, RELAY_PROGRAM};
    let hookd = this_binary()?;
    let trusted = |name: &str| {
        let beside = Path::new(&hookd).with_file_name(name);
        trusted_beside(Path::new(&hookd), &beside)
            .then(|| beside.to_str().map(str::to_string))
            .flatten()
    };
    let relay = trusted(RELAY_PROGRAM);
    // The lite relay looks for hookd-relay beside its own file, links resolved (/proc/self/exe): a
    // link to a lite relay elsewhere must find one there too, or it could hand nothing over.
    let lite = relay
        .as_ref()
        .and_then(|_| trusted(LITE_RELAY_PROGRAM))
        .filter(|lite| {
            std::fs::canonicalize(lite).is_ok_and(|file| {
                trusted_beside(Path::new(&hookd), &file.with_file_name(RELAY_PROGRAM))
            })
        });
    Ok(lite.or(relay).unwrap_or(hookd))
}

/// Whether `relay`, found beside `hookd`, may go into agents' settings in hookd's place: a regular file
/// (or a link to one) that this user can run, owned, and the link too, by hookd's owner, and writable by
/// no one else. The agent runs it on every tool call with the call's input (secrets included), so a
/// file someone else put there or could change must not be written: in a shared folder with the sticky
/// bit (`/tmp`), another user cannot touch `hookd` but can create `hookd-relay` beside it. Nor one this
/// user cannot run (executable only by its owner, another user): the agent would fail to start it on
/// every call and, but for Copilot, go on unwatched. `hookd relay` is the same relay, only slower.
fn trusted_beside(hookd: &Path, relay: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let (Ok(hookd), Ok(link), Ok(file)) = (
        std::fs::metadata(hookd),
        std::fs::symlink_metadata(relay),
        std::fs::metadata(relay),
    ) else {
        return false;
    };
    let owner = hookd.uid();
    file.is_file()
        && link.uid() == owner
        && file.uid() == owner
        && file.mode() & 0o022 == 0
        && nix::unistd::access(relay, nix::unistd::AccessFlags::X_OK).is_ok()
}

/// Refuses an agent named on the command line (`fire --agent`, `test --agent`) that is none hookd knows
/// but surely means one (`claude`). Any name is a client's own to give, but the hooks scoped to the
/// agent meant would not run for this one, and the answer would read as that agent's: "not refused"
/// where the real agent is refused. The settings refuse the same name in `agents`.
fn misspelt_agent(agent: Option<&str>) -> Result<(), String> {
    match agent.and_then(crate::settings::meant_agent) {
        Some(meant) => Err(format!(
            "unknown agent \"{}\" (did you mean \"{meant}\"?): the hooks of {meant} would not run for it",
            crate::moment::shown(agent.unwrap_or_default())
        )),
        None => Ok(()),
    }
}

/// This binary's absolute path, for the commands written into agents' settings.
fn this_binary() -> Result<String, String> {
    let path =
        std::env::current_exe().map_err(|e| format!("cannot tell where this hookd is: {e}"))?;
    path.to_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{}: not a UTF-8 path", path.display()))
}

/// `hookd check`: the hooks per moment (or, with `--json`, one JSON object) and warnings; an invalid file
/// is every error, each said once.
fn check(config: &Path, json: bool) -> Result<ExitCode, String> {
    let loaded = match Settings::load(config) {
        Ok(settings) => Ok(settings),
        Err(LoadError::Invalid(errors)) => Err(errors),
        Err(LoadError::NotFound) => {
            let near = crate::settings::near_name(config).map_or_else(String::new, |near| {
                format!(" (did you mean {}?)", near.display())
            });
            return Err(format!("{}: no such settings file{near}", config.display()));
        }
    };
    if json {
        let (valid, object) = match &loaded {
            Ok(settings) => (true, check_json(settings)),
            Err(errors) => (
                false,
                json!({
                    "ok": false,
                    "config": config.display().to_string(),
                    "errors": errors.0.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
                }),
            ),
        };
        println!("{object}");
        return Ok(if valid {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    match loaded {
        Ok(settings) => {
            let colour = render::colour_wanted(std::io::stdout().is_terminal());
            let text = describe(&settings);
            match text.split_once(": valid") {
                Some((path, rest)) if colour => {
                    print!("{path}: {}{rest}", render::painted("valid", "1;32", true))
                }
                _ => print!("{text}"),
            }
            for warning in crate::agents::settings_warnings(&settings) {
                eprintln!("warning: {warning}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(errors) => {
            let colour = render::colour_wanted(std::io::stderr().is_terminal());
            eprintln!("{errors}");
            eprintln!(
                "{}: {}",
                config.display(),
                render::painted(&errors.count(), "1;31", colour)
            );
            Ok(ExitCode::FAILURE)
        }
    }
}

/// A valid file as `check --json` prints it: what `describe` says, for scripts.
fn check_json(settings: &Settings) -> Value {
    let mut moments = serde_json::Map::new();
    for (moment, hooks) in &settings.hooks {
        let hooks: Vec<Value> = hooks
            .iter()
            .map(|hook| {
                let mut entry = json!({
                    "name": hook.name,
                    "timeout_s": hook.timeout.as_secs_f64(),
                    "on_failure": match hook.on_failure {
                        crate::settings::OnFailure::Refuse => "refuse",
                        crate::settings::OnFailure::Ignore => "ignore",
                    },
                    "enabled": hook.enabled,
                });
                match &hook.program {
                    Program::Shell { command, .. } => entry["command"] = json!(command),
                    Program::Argv(argv) => entry["argv"] = json!(argv),
                    Program::Worker { argv, count } => {
                        entry["worker"] = json!(argv);
                        entry["workers"] = json!(count);
                    }
                    Program::Guard(guard) => {
                        entry["builtin"] = json!("guard");
                        let rules: serde_json::Map<String, serde_json::Value> = guard
                            .changed()
                            .into_iter()
                            .map(|(rule, action)| (rule.to_string(), json!(action.word())))
                            .collect();
                        entry["rules"] = serde_json::Value::Object(rules);
                    }
                }
                if let Some(matcher) = &hook.matcher_source {
                    entry["matcher"] = json!(matcher);
                }
                if let Some(condition) = &hook.condition {
                    entry["if"] = json!(condition.source);
                }
                if hook.background {
                    entry["background"] = json!(true);
                }
                if let Some(agents) = &hook.agents {
                    entry["agents"] = json!(agents);
                }
                entry
            })
            .collect();
        let sequential = settings.is_sequential(moment);
        moments.insert(
            moment.clone(),
            json!({ "sequential": sequential, "hooks": hooks }),
        );
    }
    json!({
        "ok": true,
        "config": settings.path.display().to_string(),
        "moments": moments,
        "http_listen": settings.http.listen.map(|a| a.to_string()),
        "warnings": crate::agents::settings_warnings(settings),
    })
}

/// A name from the settings file as it is safe to print on a terminal: control characters (an escape
/// sequence that would clear the screen, move the cursor or retitle the window) shown escaped.
fn printable(name: &str) -> std::borrow::Cow<'_, str> {
    if !name.chars().any(char::is_control) {
        return name.into();
    }
    name.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

/// The hooks per moment, as `check` prints them.
fn describe(settings: &Settings) -> String {
    let total: usize = settings.hooks.iter().map(|(_, hooks)| hooks.len()).sum();
    let mut out = format!(
        "{}: valid, {total} hook{}\n",
        printable(&settings.path.display().to_string()),
        if total == 1 { "" } else { "s" }
    );
    if let Some(listen) = settings.http.listen {
        out.push_str(&format!(
            "http listener on {listen} (for agents' http hooks)\n"
        ));
    }
    for (moment, hooks) in &settings.hooks {
        let chained = if settings.is_sequential(moment) && hooks.len() > 1 {
            "  (sequential: one after another, each given the rewrites before it)"
        } else {
            ""
        };
        out.push_str(&format!("{}{chained}\n", printable(moment)));
        for hook in hooks {
            let mut line = format!("  {}", printable(&hook.name));
            if let Some(matcher) = &hook.matcher_source {
                line.push_str(&format!("  matcher {matcher:?}"));
            }
            if let Some(condition) = &hook.condition {
                line.push_str(&format!("  if {:?}", condition.source));
            }
            if hook.background {
                line.push_str("  background");
            }
            match &hook.program {
                Program::Shell { command, .. } => line.push_str(&format!("  command {command:?}")),
                Program::Argv(argv) => line.push_str(&format!("  argv {argv:?}")),
                Program::Worker { argv, count } => {
                    line.push_str(&format!("  worker {argv:?} x{count}"))
                }
                Program::Guard(guard) => {
                    line.push_str("  builtin guard");
                    for (rule, action) in guard.changed() {
                        line.push_str(&format!("  {rule}={}", action.word()));
                    }
                }
            }
            if !matches!(hook.program, Program::Guard(_)) {
                line.push_str(&format!("  timeout {}s", hook.timeout.as_secs_f64()));
            }
            if hook.on_failure == crate::settings::OnFailure::Refuse {
                line.push_str("  on_failure refuse");
            }
            if let Some(agents) = &hook.agents {
                line.push_str(&format!("  agents {}", printable(&agents.join(","))));
            }
            if !hook.enabled {
                line.push_str("  (disabled)");
            }
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// Whether to print for people: stdout is a terminal and `--json` was not given. Scripts, which read
/// stdout through a pipe, get the JSON line unchanged.
fn for_people(json: bool) -> Option<bool> {
    (!json && std::io::stdout().is_terminal()).then(|| render::colour_wanted(true))
}

/// For scripts: the response line as it came, the error (if it is one) said there only, exit 1.
fn for_scripts(line: &str, ok: bool) -> ExitCode {
    println!("{line}");
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `hookd status`; `people` is `Some(colour)` to print for people.
fn status(socket: &Path, people: Option<bool>) -> Result<ExitCode, String> {
    let response = client::request(socket, &Asking::Status { id: 1 }, Some(ADMIN_TIMEOUT))?;
    let read = response.read::<StatusResponse>()?;
    let Some(colour) = people else {
        return Ok(for_scripts(&response.line, read.is_ok()));
    };
    match read {
        Ok(status) => {
            // Looked at here, on the daemon's machine as its user: the daemon serves what it read.
            let config = Path::new(&status.config);
            let no_file = (!config.exists()).then(|| admin_text::NoSettingsFile {
                near: crate::settings::near_name(config).map(|near| near.display().to_string()),
            });
            print!(
                "{}",
                admin_text::status(
                    &status,
                    &socket.display().to_string(),
                    no_file.as_ref(),
                    colour
                )
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => Err(error_message(&error)),
    }
}

/// `hookd reload`: the error said once, as JSON on stdout for scripts or as text on stderr for people.
fn reload(socket: &Path, people: Option<bool>) -> Result<ExitCode, String> {
    let response = client::request(socket, &Asking::Reload { id: 1 }, Some(ADMIN_TIMEOUT))?;
    let read = response.read::<ReloadResponse>()?;
    let Some(colour) = people else {
        return Ok(for_scripts(&response.line, read.is_ok()));
    };
    match read {
        Ok(reloaded) => {
            print!("{}", admin_text::reloaded(reloaded.generation, colour));
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            let colour = colour && std::io::stderr().is_terminal();
            eprint!("{}", admin_text::reload_refused(&error, colour));
            Ok(ExitCode::FAILURE)
        }
    }
}

fn error_message(response: &ErrorResponse) -> String {
    let kind = serde_json::to_value(response.error.kind).unwrap_or_default();
    format!(
        "{} ({})",
        response.error.message,
        kind.as_str().unwrap_or("unknown")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_prints_control_characters_of_names_escaped() {
        let text = "[[hooks.PreToolUse]]\nname = \"evil\\u001b]0;pwned\\u0007\\u001b[2J\"\ncommand = \"x.sh\"\n";
        let settings = Settings::parse(Path::new("/etc/hooks.toml"), "hooks.toml", text).unwrap();
        let shown = describe(&settings);
        assert!(
            !shown.chars().any(|c| c.is_control() && c != '\n'),
            "{shown:?}"
        );
        assert!(
            shown.contains("evil\\u{1b}]0;pwned\\u{7}\\u{1b}[2J"),
            "{shown}"
        );
    }

    #[test]
    fn check_says_which_moments_are_sequential() {
        let text = "sequential = [\"PreToolUse\"]\n[[hooks.PreToolUse]]\ncommand = \"a.sh\"\n[[hooks.PreToolUse]]\ncommand = \"b.sh\"\n";
        let settings = Settings::parse(Path::new("/etc/hooks.toml"), "hooks.toml", text).unwrap();
        assert!(
            describe(&settings).contains("PreToolUse  (sequential: one after another"),
            "{}",
            describe(&settings)
        );
    }

    #[test]
    fn check_lists_hooks_per_moment() {
        let text = "[[hooks.PreToolUse]]\nname = \"deny\"\nmatcher = \"Bash\"\ncommand = \"x.sh\"\non_failure = \"refuse\"\n[[hooks.Stop]]\nargv = [\"/bin/true\"]\nenabled = false\n";
        let settings = Settings::parse(Path::new("/etc/hooks.toml"), "hooks.toml", text).unwrap();
        assert_eq!(
            describe(&settings),
            "/etc/hooks.toml: valid, 2 hooks\nPreToolUse\n  deny  matcher \"Bash\"  command \"x.sh\"  timeout 60s  on_failure refuse\nStop\n  Stop#1  argv [\"/bin/true\"]  timeout 60s  (disabled)\n"
        );
    }
}
