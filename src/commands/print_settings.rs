//! `hookd relay --print-settings AGENT`: the hook settings for an agent's own file that call hookd,
//! the relay's command in them as `setup` writes it; with `--http`, Claude Code's http hooks, posting to
//! the daemon's HTTP listener.

use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;

use crate::commands::cli;
use crate::commands::shared::{known_agent, relay_binary};
use crate::settings::{LoadError, Settings};

/// `hookd relay --print-settings AGENT` (with `--http`, Claude Code's http hooks): the snippet for the
/// agent's own settings, the relay's command in it as `setup` writes it.
pub fn print_settings(agent: &str, args: &cli::RelayArgs) -> Result<ExitCode, String> {
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
        warn_if_fail_closed_required(args);
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
    warn_if_fail_closed_required(args);
    Ok(ExitCode::SUCCESS)
}

/// Said on stderr when what was printed is fail-open (no `--fail-closed`) and hookd's managed layer
/// requires fail-closed relays and hooks (`require_fail_closed`, docs/teams.md): hookd would refuse
/// every call they make at a moment whose refusal holds something back, whichever way they reach it.
fn warn_if_fail_closed_required(args: &cli::RelayArgs) {
    if args.fail_closed {
        return;
    }
    let required = crate::commands::managed::requires_fail_closed(None);
    if let Some(warning) = fail_closed_warning(&required, args.http) {
        eprintln!("{warning}");
    }
}

/// The warning for fail-open settings (a relay's command, or with `http` Claude Code's http hooks) under
/// the managed layer's requirement as read; `None` where it requires nothing. A layer that cannot be
/// read is said too: whether it requires fail-closed hooks cannot be told, and the daemon keeps its last
/// good settings.
fn fail_closed_warning(
    required: &crate::commands::managed::FailClosed,
    http: bool,
) -> Option<String> {
    use crate::commands::managed::FailClosed;
    // An http hook is fail-open in the agent unless it blocks; a relay, unless --fail-closed.
    let (these, fix) = if http {
        (
            "these http hooks",
            "print them with --fail-closed (\"onFailure\": \"block\" and ?fail_closed=1 on each url)",
        )
    } else {
        (
            "the relay these settings run",
            "print them with --fail-closed (the relay's command then holds the call back when hookd cannot answer)",
        )
    };
    match required {
        FailClosed::No => None,
        FailClosed::By(file) => Some(format!(
            "warning: hookd's managed layer requires fail-closed hooks (require_fail_closed in {}): hookd refuses every call from {these}; {fix}",
            file.display()
        )),
        FailClosed::Unknown(why) => Some(format!(
            "warning: hookd's managed layer cannot be read ({why}): whether it requires fail-closed hooks (require_fail_closed) cannot be told, and the daemon keeps the layer's last good settings; if it does, hookd refuses every call from {these}: {fix} to be sure (`hookd check` says what is wrong with the layer)"
        )),
    }
}

/// Where the http hooks post: 127.0.0.1 and `--port`, else the settings file's `[http] listen`.
fn http_address(port: Option<u16>, config: &Path) -> Result<SocketAddr, String> {
    if let Some(port) = port {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
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

#[cfg(test)]
mod tests {
    use super::fail_closed_warning;
    use crate::commands::managed::FailClosed;

    /// The relay's settings are warned of as the http hooks are: under `require_fail_closed`, both
    /// fail-open, every call they make is refused.
    #[test]
    fn fail_open_settings_are_warned_of_on_every_path_where_the_layer_requires_fail_closed() {
        let file = std::path::PathBuf::from("/etc/hookd/managed.d/50-relays.toml");
        for http in [false, true] {
            assert_eq!(fail_closed_warning(&FailClosed::No, http), None);
            let by = fail_closed_warning(&FailClosed::By(file.clone()), http).unwrap();
            assert!(
                by.contains("require_fail_closed in /etc/hookd/managed.d/50-relays.toml")
                    && by.contains("refuses every call")
                    && by.contains("--fail-closed"),
                "{by}"
            );
            assert_eq!(by.contains("http hooks"), http, "{by}");
            let unknown = fail_closed_warning(
                &FailClosed::Unknown("10-typo.toml:1:1: unknown key".into()),
                http,
            )
            .unwrap();
            assert!(
                unknown.contains("cannot be read (10-typo.toml:1:1")
                    && unknown.contains("--fail-closed"),
                "{unknown}"
            );
        }
    }
}
