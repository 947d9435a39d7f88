//! What several commands share: the exit status of a refusal, how long a command waits for the daemon
//! and how it tells its error, how it prints for people or for scripts, the agents named on the command
//! line, and the programs written into agents' settings (this binary, the relay beside it).

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use crate::commands::style;
use crate::protocol::ErrorResponse;

/// How long `status`, `reload` and `watch` wait for the daemon.
pub const ADMIN_TIMEOUT: Duration = Duration::from_secs(30);

/// Exit status of `fire` and `test` when the verdict refused.
pub const EXIT_REFUSED: u8 = 2;

/// An error response as one line for people: its message and its kind.
pub fn error_message(response: &ErrorResponse) -> String {
    let kind = serde_json::to_value(response.error.kind).unwrap_or_default();
    format!(
        "{} ({})",
        response.error.message,
        kind.as_str().unwrap_or("unknown")
    )
}

/// Whether to print for people: stdout is a terminal and `--json` was not given. Scripts, which read
/// stdout through a pipe, get the JSON line unchanged.
pub fn for_people(json: bool) -> Option<bool> {
    (!json && std::io::stdout().is_terminal()).then(|| style::colour_wanted(true))
}

/// For scripts: the response line as it came, the error (if it is one) said there only, exit 1.
pub fn for_scripts(line: &str, ok: bool) -> ExitCode {
    println!("{line}");
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// An agent named on the command line, as hookd knows it; else the names it knows, and the one meant.
pub fn known_agent(name: &str) -> Result<crate::agents::Agent, String> {
    crate::agents::Agent::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = crate::agents::Agent::ALL.iter().map(|a| a.name()).collect();
        let meant = crate::settings::meant_agent(name)
            .map(|meant| format!("did you mean \"{meant}\"? "))
            .unwrap_or_default();
        format!(
            "unknown agent \"{}\" ({meant}one of: {})",
            crate::tables::moment::shown(name),
            names.join(", ")
        )
    })
}

/// Refuses an agent named on the command line (`fire --agent`, `test --agent`) that is none hookd knows
/// but surely means one (`claude`). Any name is a client's own to give, but the hooks scoped to the
/// agent meant would not run for this one, and the answer would read as that agent's: "not refused"
/// where the real agent is refused. The settings refuse the same name in `agents`.
pub fn misspelt_agent(agent: Option<&str>) -> Result<(), String> {
    match agent.and_then(crate::settings::meant_agent) {
        Some(meant) => Err(format!(
            "unknown agent \"{}\" (did you mean \"{meant}\"?): the hooks of {meant} would not run for it",
            crate::tables::moment::shown(agent.unwrap_or_default())
        )),
        None => Ok(()),
    }
}

/// This binary's absolute path, for the commands written into agents' settings.
pub fn this_binary() -> Result<String, String> {
    let path =
        std::env::current_exe().map_err(|e| format!("cannot tell where this hookd is: {e}"))?;
    path.to_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{}: not a UTF-8 path", path.display()))
}

/// The program to write into agents' settings for the relay, the fastest to start that is installed
/// beside this binary and may be trusted as hookd is ([`trusted_beside`]): `hookd-relay-lite` (no libc,
/// `lite/`), which hands what it cannot carry to `hookd-relay` beside it, so only with that one there
/// too; else `hookd-relay` (see `src/bin/hookd-relay.rs`); else this binary (`hookd relay`), which always
/// works.
pub fn relay_binary() -> Result<String, String> {
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
