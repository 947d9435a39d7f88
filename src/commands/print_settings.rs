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
    if !args.fail_closed
        && let crate::commands::managed::FailClosed::By(file) =
            crate::commands::managed::requires_fail_closed(None)
    {
        // An http hook is fail-open in the agent unless it blocks: under the team's policy hookd
        // refuses every call these hooks make.
        eprintln!(
            "warning: hookd's managed layer requires fail-closed hooks (require_fail_closed in {}): hookd refuses every call from these http hooks; print them with --fail-closed (\"onFailure\": \"block\" and ?fail_closed=1 on each url)",
            file.display()
        );
    }
    Ok(ExitCode::SUCCESS)
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
