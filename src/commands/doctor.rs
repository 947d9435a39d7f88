//! `hookd doctor`: the whole chain a user relies on, checked, a line each with what to fix
//! (docs/commands.md, "hookd doctor"): the daemon answering, and where; the settings valid and in force;
//! hookd's protection of itself on; and for each agent set up (the registry of setups, and each agent's
//! own settings file when it holds hookd's relay hooks), that the file still holds the relay hooks as
//! setup wrote them (drift: an agent or a worm took them out or changed them), that the relay program
//! they run is there and is this hookd's version, that Codex's trust records still match, and whether the
//! relay fails closed.
//!
//! A check fails (exit 1) when it means a call could go through unguarded: no daemon answering a relay
//! that fails open, drift, a relay program missing, protection off, no agent set up. Anything else that
//! wants attention is a warning.

use std::io::IsTerminal;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use crate::agents::setup::{
    Drift, FoundHook, Wanted, command_program, command_words, drift, drift_between, found_hooks,
    hooks_digest, is_hookd_command, warnings,
};
use crate::agents::setups::{self, Setup};
use crate::agents::{Agent, SettingsFormat};
use crate::commands::client::{self, ClientError};
use crate::commands::shared::this_binary;
use crate::commands::style::{self, Style};
use crate::commands::{files, setup};
use crate::protocol::Asking;
use crate::settings::{LoadError, Settings};

/// How long doctor waits for the daemon, and for a relay program's `--version`.
const WAIT: Duration = Duration::from_secs(5);

pub struct Options {
    pub socket: Option<PathBuf>,
    pub config: Option<PathBuf>,
    pub json: bool,
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    Ok,
    Warn,
    Fail,
}

/// One line of the report.
#[derive(Debug, Clone, Serialize)]
struct Check {
    /// What was checked: `daemon`, `settings`, `protect`, `export`, `agents`, and per agent `hooks`, `trust`,
    /// `relay`, `fail_closed`, `switched_off`.
    check: &'static str,
    status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
}

impl Check {
    fn new(check: &'static str, status: Status, message: impl Into<String>) -> Check {
        Check {
            check,
            status,
            agent: None,
            file: None,
            message: message.into(),
            fix: None,
        }
    }

    fn fix(mut self, fix: impl Into<String>) -> Check {
        self.fix = Some(fix.into());
        self
    }

    fn of(mut self, agent: Agent, file: &Path) -> Check {
        self.agent = Some(agent.name().to_string());
        self.file = Some(file.display().to_string());
        self
    }
}

/// One agent's settings file that holds (or should hold) hookd's relay hooks.
struct AgentFile {
    agent: Agent,
    file: PathBuf,
    /// The registry's entry, when setup wrote it.
    registered: Option<Setup>,
}

pub fn doctor(options: Options) -> Result<ExitCode, String> {
    let socket = options
        .socket
        .clone()
        .unwrap_or_else(crate::paths::default_socket);
    let mut checks = Vec::new();
    let status = daemon_status(&socket);
    let daemon_at = checks.len();
    checks.push(match &status {
        Ok(status) => {
            let version = status["version"].as_str().unwrap_or("?");
            let mut check = Check::new(
                "daemon",
                Status::Ok,
                format!(
                    "hookd {version} answers on {} (pid {})",
                    socket.display(),
                    status["pid"]
                ),
            );
            if version != crate::protocol::VERSION {
                check.status = Status::Warn;
                check
                    .message
                    .push_str(&format!(", not this hookd's version ({})", crate::protocol::VERSION));
                check.fix = Some("restart it: systemctl --user restart hookd".into());
            }
            check
        }
        Err(why) => Check::new(
            "daemon",
            Status::Fail,
            format!("no hookd answers on {} ({why})", socket.display()),
        )
        .fix("hookd install (without a systemd user session it says what to do instead), or run hookd serve"),
    });
    checks.push(settings_check(
        status.as_ref().ok(),
        options.config.as_deref(),
    ));
    if let Ok(status) = &status {
        checks.push(protect_check(status));
        checks.extend(export_check(status));
        checks.extend(layers_checks(status));
    }
    let require_fail_closed = status
        .as_ref()
        .ok()
        .is_some_and(|s| s["layers"]["require_fail_closed"] == true);
    let agents = agent_files();
    let mut fail_open = agents.is_empty();
    if agents.is_empty() {
        checks.push(
            Check::new(
                "agents",
                Status::Fail,
                "no agent is set up: its calls do not reach hookd at all",
            )
            .fix("hookd setup AGENT (claude-code, codex, gemini-cli, qwen-code, copilot-cli)"),
        );
    }
    // hookd's settings as in force (the daemon's file), else as `hookd serve` would read them.
    let config = status
        .as_ref()
        .ok()
        .and_then(|s| s["config"].as_str().map(PathBuf::from))
        .or_else(|| options.config.clone())
        .unwrap_or_else(crate::paths::default_config);
    let settings = Settings::load(&config).ok();
    for agent_file in &agents {
        let listener = status.as_ref().ok().map(|status| &status["http"]);
        let (agent_checks, closed) = agent_checks(agent_file, &socket, listener);
        fail_open |= !closed;
        checks.extend(agent_checks);
        if require_fail_closed && !closed {
            checks.push(
                Check::new(
                    "layers",
                    Status::Fail,
                    "the team's managed settings require a fail-closed relay (require_fail_closed): this agent's relay is fail-open, and hookd refuses its calls",
                )
                .of(agent_file.agent, &agent_file.file)
                .fix(setup_again(agent_file.agent, &agent_file.file, Some("--fail-closed"))),
            );
        }
        if let Some(settings) = &settings {
            checks.extend(twice_check(agent_file, settings, &config));
        }
    }
    // No daemon is a hole only where a relay lets calls through without it.
    if status.is_err() && !fail_open {
        let daemon = &mut checks[daemon_at];
        daemon.status = Status::Warn;
        daemon
            .message
            .push_str(": every relay fails closed, so calls are refused until it answers");
    }
    let ok = checks.iter().all(|c| c.status != Status::Fail);
    if options.json {
        println!(
            "{}",
            json!({ "ok": ok, "socket": socket.display().to_string(), "version": crate::protocol::VERSION, "checks": checks })
        );
    } else {
        print!("{}", report(&checks, ok, std::io::stdout().is_terminal()));
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The daemon's `status` on `socket`, as JSON (read loosely: fields another hookd adds, `protect`, are
/// read where they are), or why there is none.
fn daemon_status(socket: &Path) -> Result<Value, String> {
    let response =
        client::request(socket, &Asking::Status { id: 1 }, Some(WAIT)).map_err(|e| match e {
            ClientError::NotRunning(m) | ClientError::TimedOut(m) | ClientError::Other(m) => m,
        })?;
    let status: Value = serde_json::from_str(&response.line)
        .map_err(|e| format!("its status is not JSON ({e})"))?;
    if status["ok"] != true {
        return Err(format!("its status is an error: {}", response.line.trim()));
    }
    Ok(status)
}

/// The settings: the file the daemon serves, valid and in force (its generation), or the file a daemon
/// would serve when none runs.
fn settings_check(status: Option<&Value>, config: Option<&Path>) -> Check {
    let Some(status) = status else {
        let config = config.map_or_else(crate::paths::default_config, Path::to_path_buf);
        let shown = config.display();
        return match Settings::load(&config) {
            Ok(_) => Check::new(
                "settings",
                Status::Ok,
                format!("{shown} is valid (in force once the daemon runs)"),
            ),
            Err(LoadError::NotFound) => {
                let check = Check::new(
                    "settings",
                    Status::Warn,
                    format!(
                        "no settings file at {shown}{}: the daemon would run none of your hooks",
                        did_you_mean(&config)
                    ),
                );
                match crate::settings::near_name(&config) {
                    Some(near) => check.fix(format!(
                        "hookd serve --config {}, or rename it to {shown}",
                        near.display()
                    )),
                    None => check
                        .fix("copy config/ from hookd's source there, or write your hooks in it"),
                }
            }
            Err(LoadError::Invalid(errors)) => Check::new(
                "settings",
                Status::Fail,
                format!(
                    "{shown} is invalid ({}): hookd serve will not start with it",
                    errors.count()
                ),
            )
            .fix(format!("hookd check --config {shown}")),
        };
    };
    let config = status["config"].as_str().unwrap_or_default();
    let generation = &status["generation"];
    let last = &status["last_reload"];
    if last["ok"] == false {
        return Check::new(
            "settings",
            Status::Warn,
            format!(
                "{config}: its last edit was refused ({}); generation {generation}, read before it, is in force",
                last["error"].as_str().unwrap_or("invalid")
            ),
        )
        .fix(format!("hookd check --config {config}, then save it again"));
    }
    match Settings::load(Path::new(config)) {
        Ok(_) => Check::new(
            "settings",
            Status::Ok,
            format!("{config} is valid and in force (generation {generation})"),
        ),
        Err(LoadError::NotFound) => {
            let check = Check::new(
                "settings",
                Status::Warn,
                format!(
                    "no settings file is in force: {config} does not exist{}, and the daemon serves generation {generation}, with none of your hooks, until it appears",
                    did_you_mean(Path::new(config))
                ),
            );
            match crate::settings::near_name(Path::new(config)) {
                Some(near) => check.fix(format!(
                    "start hookd with --config {}, or rename it to {config}",
                    near.display()
                )),
                None => check.fix(format!("write your hooks in {config}")),
            }
        }
        Err(LoadError::Invalid(errors)) => Check::new(
            "settings",
            Status::Warn,
            format!(
                "{config} is invalid now ({}): generation {generation}, read before, stays in force",
                errors.count()
            ),
        )
        .fix(format!("hookd check --config {config}")),
    }
}

/// ` (did you mean NEAR?)` for a settings file that is not there but a typo away from one, else nothing.
fn did_you_mean(config: &Path) -> String {
    crate::settings::near_name(config).map_or_else(String::new, |near| {
        format!(" (did you mean {}?)", near.display())
    })
}

/// hookd's protection of itself, as the daemon's `status` says (`"protect": {"enabled": ...}`).
fn protect_check(status: &Value) -> Check {
    match status.get("protect").and_then(|p| p.get("enabled")) {
        Some(Value::Bool(true)) => Check::new(
            "protect",
            Status::Ok,
            "protection on: an agent's call that would switch hookd off is refused",
        ),
        Some(Value::Bool(false)) => Check::new(
            "protect",
            Status::Fail,
            "protection off: an agent can edit hookd's settings, its relay hooks or stop the daemon with one call",
        )
        .fix("take [protect] enabled = false out of the settings file"),
        _ => Check::new(
            "protect",
            Status::Warn,
            "protection unknown: this daemon's status does not say",
        )
        .fix("run a hookd that protects itself (restart the daemon after upgrading)"),
    }
}

/// The layers, as the daemon's `status` says: each repository with hooks waiting for `hookd trust`, and
/// each whose hooks file is refused (docs/teams.md).
fn layers_checks(status: &Value) -> Vec<Check> {
    let mut checks = Vec::new();
    let projects = status["layers"]["projects"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for project in projects {
        let root = project["root"].as_str().unwrap_or("?");
        let pending: Vec<&str> = project["pending"]
            .as_array()
            .map(|p| p.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !pending.is_empty() {
            checks.push(
                Check::new(
                    "layers",
                    Status::Warn,
                    format!(
                        "the repository {root} has hooks waiting for trust, which do not run: {}",
                        pending.join(", ")
                    ),
                )
                .fix(format!("read them, then: hookd trust {root}")),
            );
        }
        if let Some(why) = project["pending_unknown"].as_str() {
            checks.push(
                Check::new(
                    "layers",
                    Status::Warn,
                    format!("the repository {root}'s hooks waiting for trust are not known: {why}"),
                )
                .fix("run `hookd doctor` again; if it stays, see `hookd check` in the repository"),
            );
        }
        if let Some(error) = project["error"].as_str() {
            checks.push(
                Check::new(
                    "layers",
                    Status::Warn,
                    format!("the repository {root}'s hooks file is refused: {error}"),
                )
                .fix("correct it where the error says; its last good hooks stay"),
            );
        }
    }
    checks
}

/// The journal's export to a collector, as the daemon's `status` says (docs/export.md); no line when
/// there is none. A collector that does not take the records is a warning: they wait in the journal.
fn export_check(status: &Value) -> Option<Check> {
    let export = status.get("export")?;
    let state = export["state"].as_str().unwrap_or("off");
    let endpoint = export["endpoint"].as_str().unwrap_or("?");
    if state == "off" {
        return None;
    }
    let error = export["last_error"].as_str().unwrap_or("no answer");
    Some(if state == "retrying" {
        Check::new(
            "export",
            Status::Warn,
            format!(
                "the export to {endpoint} is not getting through ({error}): {} bytes of the journal wait to be sent",
                export["backlog_bytes"]
            ),
        )
        .fix(format!("start the collector at {endpoint}, or correct endpoint in [export.otlp]"))
    } else if export["refused"].as_u64().unwrap_or(0) > 0 {
        Check::new(
            "export",
            Status::Warn,
            format!(
                "the collector at {endpoint} refused {} records for good ({error})",
                export["refused"]
            ),
        )
        .fix("see the collector's own log for why it could not read them")
    } else {
        Check::new(
            "export",
            Status::Ok,
            format!(
                "the journal goes to {endpoint}: {} records sent since start",
                export["sent"]
            ),
        )
    })
}

/// The agents' files to check: each in the registry of setups, then each agent's own settings file
/// that holds hookd's relay hooks though setup did not list it (set up by an older hookd, or by hand).
fn agent_files() -> Vec<AgentFile> {
    let mut files: Vec<AgentFile> = Vec::new();
    for setup in setups::load().map(|r| r.setups).unwrap_or_default() {
        let Some(agent) = Agent::from_name(&setup.agent) else {
            continue;
        };
        files.push(AgentFile {
            agent,
            file: PathBuf::from(&setup.file),
            registered: Some(setup),
        });
    }
    let hookd = this_binary().unwrap_or_default();
    for agent in Agent::ALL {
        let Ok(file) = setup::default_file(agent) else {
            continue;
        };
        if files.iter().any(|f| f.file == file) {
            continue;
        }
        let Ok(text) = files::read_agent_file(&file) else {
            continue;
        };
        let codex_file = setup::codex_file(agent, &file, false).unwrap_or_default();
        let wanted = Wanted {
            agent,
            command: "",
            hookd: &hookd,
            codex_file: &codex_file,
        };
        if found_hooks(&text, "", &wanted).is_ok_and(|hooks| !hooks.is_empty()) {
            files.push(AgentFile {
                agent,
                file,
                registered: None,
            });
        }
    }
    files
}

/// The agent's own hooks in its file that hookd's settings hold too, which run twice (a warning: both
/// run, the guard is whole, but a hook that counts, writes or notifies does so twice).
fn twice_check(agent_file: &AgentFile, settings: &Settings, config: &Path) -> Option<Check> {
    let text = files::read_agent_file(&agent_file.file).ok()?;
    let shown = agent_file.file.display().to_string();
    let twice = crate::agents::setup::runs_twice(&text, &shown, agent_file.agent, settings);
    if twice.is_empty() {
        return None;
    }
    let config = config.display().to_string();
    Some(
        Check::new(
            "twice",
            Status::Warn,
            crate::agents::setup::said_twice(&twice, agent_file.agent, &shown, &config),
        )
        .fix(format!(
            "take those hooks out of {shown} (hookd import {shown} shows them as hookd has them)"
        ))
        .of(agent_file.agent, &agent_file.file),
    )
}

/// The checks of one agent's file, and whether its relay fails closed.
fn agent_checks(
    agent_file: &AgentFile,
    socket: &Path,
    listener: Option<&Value>,
) -> (Vec<Check>, bool) {
    let AgentFile {
        agent,
        file,
        registered,
    } = agent_file;
    let agent = *agent;
    let shown = file.display().to_string();
    let name = agent.display_name();
    let again = |relay: Option<&str>| setup_again(agent, file, relay);
    let mut checks = Vec::new();
    let text = match files::read_agent_file(file) {
        Ok(text) => text,
        Err(e) => {
            checks.push(
                Check::new(
                    "hooks",
                    Status::Fail,
                    format!("drift: {name}'s settings cannot be read ({e}): it runs none of hookd's hooks"),
                )
                .fix(again(registered.as_ref().map(|r| r.relay.as_str())))
                .of(agent, file),
            );
            return (checks, false);
        }
    };
    let hookd = this_binary().unwrap_or_default();
    let given = setup::default_file(agent).map_or(true, |default| default != *file);
    let codex_file = setup::codex_file(agent, file, given).unwrap_or_default();
    let probe = Wanted {
        agent,
        command: "",
        hookd: &hookd,
        codex_file: &codex_file,
    };
    let found = match found_hooks(&text, &shown, &probe) {
        Ok(found) => found,
        Err(e) => {
            checks.push(
                Check::new(
                    "hooks",
                    Status::Fail,
                    format!("drift: {e}: {name} cannot read its settings, nor run hookd's hooks"),
                )
                .fix(format!(
                    "mend the file, then {}",
                    again(registered.as_ref().map(|r| r.relay.as_str()))
                ))
                .of(agent, file),
            );
            return (checks, false);
        }
    };
    // The relay as setup wrote it (the registry), else as the file holds it (Copilot's without the
    // `--event` each hook adds).
    let relay = registered
        .as_ref()
        .map(|r| r.relay.clone())
        .or_else(|| {
            found.first().map(|hook| {
                let command = hook.command.as_str();
                match agent.row().settings.format {
                    SettingsFormat::CopilotJson => command
                        .rsplit_once(" --event ")
                        .map_or(command, |(relay, _)| relay),
                    _ => command,
                }
                .to_string()
            })
        })
        .unwrap_or_default();
    let wanted = Wanted {
        command: &relay,
        ..probe
    };
    let fix = again(Some(&relay));
    // Hooks as written.
    if found.is_empty() {
        checks.push(
            Check::new(
                "hooks",
                Status::Fail,
                format!("drift: {shown} holds none of hookd's relay hooks: {name}'s calls go through unguarded"),
            )
            .fix(fix.clone())
            .of(agent, file),
        );
    } else if found.iter().any(|hook| is_http(&hook.command)) {
        // Written from `hookd relay --print-settings claude-code --http`, which setup does not write:
        // looked at for what makes them work, not compared with setup's command hooks.
        checks.push(http_hooks_check(&wanted, &shown, &found, listener).of(agent, file));
    } else {
        match drift(&text, &shown, &wanted) {
            Ok(drifted) if !drifted.is_empty() => checks.push(
                Check::new(
                    "hooks",
                    Status::Fail,
                    format!(
                        "drift: {shown} no longer holds the relay hooks as written: {}",
                        said_drift(&drifted)
                    ),
                )
                .fix(fix.clone())
                .of(agent, file),
            ),
            Ok(_) => {
                let digest = hooks_digest(&found);
                match registered {
                    Some(setup) if setup.hooks_sha256 != digest => checks.push(
                        Check::new(
                            "hooks",
                            Status::Fail,
                            format!(
                                "drift: hookd's hooks in {shown} changed since hookd setup wrote them ({})",
                                setup.at
                            ),
                        )
                        .fix(fix.clone())
                        .of(agent, file),
                    ),
                    _ => checks.push(
                        Check::new(
                            "hooks",
                            Status::Ok,
                            format!(
                                "{shown} holds the relay hooks as written ({} events of {name})",
                                found.len()
                            ),
                        )
                        .of(agent, file),
                    ),
                }
            }
            Err(e) => checks.push(
                Check::new("hooks", Status::Fail, format!("drift: {e}"))
                    .fix(fix.clone())
                    .of(agent, file),
            ),
        }
    }
    // Hooks the agent is told not to run.
    for warning in warnings(&text, &wanted) {
        checks.push(
            Check::new("switched_off", Status::Fail, warning)
                .fix(format!("take that setting out of {shown}"))
                .of(agent, file),
        );
    }
    // Codex's trust.
    if agent.row().settings.format == SettingsFormat::CodexToml && !found.is_empty() {
        let untrusted: Vec<&str> = found
            .iter()
            .filter(|hook| hook.trusted == Some(false))
            .map(|hook| hook.event.as_str())
            .collect();
        checks.push(if untrusted.is_empty() {
            Check::new(
                "trust",
                Status::Ok,
                "Codex's trust records match each of hookd's hooks",
            )
            .of(agent, file)
        } else {
            Check::new(
                "trust",
                Status::Fail,
                format!(
                    "Codex skips hookd's hooks at {} without a word: their trust records do not match",
                    untrusted.join(", ")
                ),
            )
            .fix(fix.clone())
            .of(agent, file)
        });
    }
    // The relay program, and this version.
    let commands: Vec<&str> = {
        let mut commands: Vec<&str> = Vec::new();
        for hook in &found {
            if is_hookd_command(&hook.command, &hookd) && !commands.contains(&hook.command.as_str())
            {
                commands.push(&hook.command);
            }
        }
        commands
    };
    let mut programs: Vec<String> = Vec::new();
    for command in &commands {
        if let Some(program) = command_program(command)
            && !programs.contains(&program)
        {
            programs.push(program);
        }
    }
    for program in &programs {
        checks.push(relay_program_check(program, &fix).of(agent, file));
    }
    // Fail-closed, and the socket each relay asks.
    let closed = !commands.is_empty()
        && commands
            .iter()
            .all(|c| command_words(c).iter().any(|w| w == "--fail-closed"));
    checks.push(if closed {
        Check::new(
            "fail_closed",
            Status::Ok,
            "the relay fails closed: when hookd cannot answer, calls are refused",
        )
        .of(agent, file)
    } else {
        Check::new(
            "fail_closed",
            Status::Warn,
            "the relay fails open: when hookd cannot answer, calls go through unguarded",
        )
        .fix(format!(
            "{} --fail-closed, where the guard must hold",
            setup_again(agent, file, None)
        ))
        .of(agent, file)
    });
    for command in &commands {
        let words = command_words(command);
        if let Some(other) = words
            .iter()
            .position(|w| w == "--socket")
            .and_then(|i| words.get(i + 1))
            .map(PathBuf::from)
            .filter(|other| other != socket)
            && let Err(why) = daemon_status(&other)
        {
            checks.push(
                Check::new(
                    "daemon",
                    if closed { Status::Warn } else { Status::Fail },
                    format!(
                        "the relay asks the daemon on {}, where none answers: {why}",
                        other.display()
                    ),
                )
                .fix(format!(
                    "run hookd serve --socket {}, or {}",
                    other.display(),
                    setup_again(agent, file, None)
                ))
                .of(agent, file),
            );
        }
    }
    (checks, closed)
}

/// Whether a hook's command is an http hook's url.
fn is_http(command: &str) -> bool {
    command.starts_with("http://") || command.starts_with("https://")
}

/// hookd's http hooks in an agent's settings (`--print-settings --http`): each posts to the daemon's
/// listener as it is (`status`'s `http`, `listener`; `None`: no daemon answered, said above), every
/// moment of the agent has one of hookd's hooks (SessionStart the relay's command), and each is as
/// `--print-settings --http` prints it for that listener (matcher, timeout, `onFailure`, headers).
fn http_hooks_check(
    wanted: &Wanted,
    shown: &str,
    found: &[FoundHook],
    listener: Option<&Value>,
) -> Check {
    let agent = wanted.agent;
    let name = agent.display_name();
    let fix = format!(
        "hookd relay --print-settings {} --http, into {shown} (or hookd setup {} for command hooks)",
        agent.name(),
        agent.name()
    );
    let missing: Vec<&str> = agent
        .moments()
        .into_iter()
        .map(|moment| agent.event_name_of(moment))
        .filter(|event| !found.iter().any(|hook| hook.event == *event))
        .collect();
    if !missing.is_empty() {
        return Check::new(
            "hooks",
            Status::Fail,
            format!(
                "drift: {shown} holds no hook of hookd's at {}: {name}'s calls there go through unguarded",
                missing.join(", ")
            ),
        )
        .fix(fix);
    }
    let urls: Vec<&str> = {
        let mut urls: Vec<&str> = Vec::new();
        for hook in found.iter().filter(|hook| is_http(&hook.command)) {
            let url = hook.command.split('?').next().unwrap_or_default();
            if !urls.contains(&url) {
                urls.push(url);
            }
        }
        urls
    };
    let Some(listener) = listener else {
        return Check::new(
            "hooks",
            Status::Warn,
            format!(
                "{shown} holds hookd's http hooks ({}): no hookd answers to say where it listens",
                urls.join(", ")
            ),
        );
    };
    let listen = listener["listen"].as_str().unwrap_or_default();
    if listener["state"] != "listening" {
        let why = match listener["error"].as_str() {
            Some(error) => format!("cannot listen ({error})"),
            None => "does not listen ([http] listen is not set in its settings)".to_string(),
        };
        return Check::new(
            "hooks",
            Status::Fail,
            format!(
                "{shown} holds hookd's http hooks, but hookd {why}: each fails, and {name} lets the call through (or refuses it, with onFailure \"block\")"
            ),
        )
        .fix(format!(
            "set [http] listen in hookd's settings (the port the hooks post to), or hookd setup {} for command hooks",
            agent.name()
        ));
    }
    let port = listen.rsplit_once(':').map_or("", |(_, port)| port);
    let path = format!("/hooks/{}", agent.name());
    let elsewhere: Vec<&str> = urls
        .iter()
        .copied()
        .filter(|url| {
            let after_scheme = url.split_once("://").map_or("", |(_, rest)| rest);
            let (authority, url_path) = after_scheme
                .split_once('/')
                .map_or((after_scheme, ""), |(authority, rest)| (authority, rest));
            let url_port = authority.rsplit_once(':').map_or("", |(_, port)| port);
            url_port != port || format!("/{url_path}") != path
        })
        .collect();
    if !elsewhere.is_empty() {
        return Check::new(
            "hooks",
            Status::Fail,
            format!(
                "drift: {shown}'s http hooks post to {}, but hookd listens on {listen} at {path}: each fails, and {name}'s calls go through unguarded",
                elsewhere.join(", ")
            ),
        )
        .fix(fix);
    }
    // As printed for this listener, the relay at the moments without http hooks as the file has it,
    // fail-closed where the file's urls say so.
    let printed = listen.parse().ok().and_then(|address| {
        let relay = found
            .iter()
            .find(|hook| !is_http(&hook.command))
            .map_or("", |hook| hook.command.as_str());
        let fail_closed = found
            .iter()
            .any(|hook| hook.command.contains("?fail_closed=1"));
        let (text, _) =
            crate::agents::snippet::http_snippet(agent, address, Path::new(""), relay, fail_closed)
                .ok()?;
        found_hooks(&text, shown, wanted).ok()
    });
    if let Some(printed) = printed {
        let drifted = drift_between(found, &printed);
        if !drifted.is_empty() {
            return Check::new(
                "hooks",
                Status::Fail,
                format!(
                    "drift: {shown} no longer holds hookd's http hooks as printed: {}",
                    said_drift(&drifted)
                ),
            )
            .fix(fix);
        }
    }
    Check::new(
        "hooks",
        Status::Ok,
        format!(
            "{shown} holds hookd's http hooks ({} events of {name}), posting to its listener on {listen}",
            found.len()
        ),
    )
}

/// The drift, said: the events with no hookd hook, then those whose hook is not as written.
fn said_drift(drifted: &[Drift]) -> String {
    let missing: Vec<&str> = drifted
        .iter()
        .filter_map(|d| match d {
            Drift::Missing { event } => Some(event.as_str()),
            Drift::Changed { .. } => None,
        })
        .collect();
    let mut said = Vec::new();
    if !missing.is_empty() {
        said.push(format!("no relay hook at {}", missing.join(", ")));
    }
    for drift in drifted {
        if let Drift::Changed { event, command } = drift {
            said.push(format!(
                "at {event} a hook not as written ({})",
                style::clean(command)
            ));
        }
    }
    said.join("; ")
}

/// The relay program a hook runs: there, runnable, and this hookd's version. `hookd relay` answers
/// `--version` itself; `hookd-relay` and `hookd-relay-lite` are built with the `hookd` beside them,
/// which answers for them when they do not.
fn relay_program_check(program: &str, fix: &str) -> Check {
    let path = Path::new(program);
    let shown = style::clean(program);
    if !path.is_absolute() {
        return Check::new(
            "relay",
            Status::Warn,
            format!("the relay program {shown} is found through the agent's PATH, which hookd cannot check"),
        )
        .fix(fix.to_string());
    }
    let runnable = std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false);
    if !runnable {
        return Check::new(
            "relay",
            Status::Fail,
            format!("the relay program {shown} is missing or cannot run: the agent cannot start its hooks, and its calls go through unguarded"),
        )
        .fix(format!("install hookd there again, or {fix}"));
    }
    // Run on every call with the call's input: it must be the user's (or root's), and no one else's to
    // change. Not started by doctor otherwise.
    if let Ok(meta) = std::fs::metadata(path) {
        use std::os::unix::fs::MetadataExt;
        let me = nix::unistd::getuid().as_raw();
        if (meta.uid() != me && meta.uid() != 0) || meta.mode() & 0o022 != 0 {
            return Check::new(
                "relay",
                Status::Fail,
                format!("the relay program {shown} belongs to uid {} or is writable by others: whoever can change it sees and answers every call", meta.uid()),
            )
            .fix(format!("install hookd yourself, writable by you alone, then {fix}"));
        }
    }
    let version = version_of(path).or_else(|| {
        crate::agents::snippet::is_relay_program(program)
            .then(|| version_of(&path.with_file_name("hookd")))
            .flatten()
    });
    match version {
        Some(version) if version == crate::protocol::VERSION => Check::new(
            "relay",
            Status::Ok,
            format!("the relay program {shown} is there, hookd {version}"),
        ),
        Some(version) => Check::new(
            "relay",
            Status::Warn,
            format!(
                "the relay program {shown} is hookd {version}, not this hookd's version ({})",
                crate::protocol::VERSION
            ),
        )
        .fix(fix.to_string()),
        None => Check::new(
            "relay",
            Status::Warn,
            format!("the relay program {shown} is there, of a version it does not say"),
        )
        .fix(fix.to_string()),
    }
}

/// What `program --version` says its version is (`hookd 0.1.0`: the last word), when it says one
/// within [`WAIT`].
fn version_of(program: &Path) -> Option<String> {
    let mut child = std::process::Command::new(program)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + WAIT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    let mut out = String::new();
    use std::io::Read;
    child
        .stdout
        .take()?
        .take(4096)
        .read_to_string(&mut out)
        .ok()?;
    out.split_whitespace().last().map(str::to_string)
}

/// The setup that writes the relay hooks again, as they were: its `--file` when it is not the agent's
/// own, and the `--socket` and `--fail-closed` of `relay` (the command written), when given.
fn setup_again(agent: Agent, file: &Path, relay: Option<&str>) -> String {
    use crate::agents::snippet::shell_quote;
    let mut again = format!("hookd setup {}", agent.name());
    if setup::default_file(agent).map_or(true, |default| default != *file) {
        again.push_str(&format!(" --file {}", shell_quote(&file.to_string_lossy())));
    }
    if let Some(relay) = relay {
        let words = command_words(relay);
        if let Some(socket) = words
            .iter()
            .position(|w| w == "--socket")
            .and_then(|i| words.get(i + 1))
        {
            again.push_str(&format!(" --socket {}", shell_quote(socket)));
        }
        if words.iter().any(|w| w == "--fail-closed") {
            again.push_str(" --fail-closed");
        }
    }
    again
}

/// The report for people: a line a check (`ok`, `warn`, `FAIL`), its fix under it, and the verdict.
fn report(checks: &[Check], ok: bool, colour: bool) -> String {
    let colour = style::colour_wanted(colour);
    let mut out = String::new();
    for check in checks {
        let (word, look) = match check.status {
            Status::Ok => ("ok  ", Style::Fine),
            Status::Warn => ("warn", Style::Caution),
            Status::Fail => ("FAIL", Style::Alarm),
        };
        let who = check
            .agent
            .as_deref()
            .and_then(Agent::from_name)
            .map(|a| format!("{}: ", a.display_name()))
            .unwrap_or_default();
        out.push_str(&format!(
            "{} {who}{}\n",
            style::painted(word, look, colour),
            style::clean(&check.message)
        ));
        if let Some(fix) = &check.fix {
            out.push_str(&format!("     fix: {}\n", style::clean(fix)));
        }
    }
    out.push_str(if ok {
        "hookd guards every call of the agents set up\n"
    } else {
        "a call could go through unguarded: fix what FAIL says\n"
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repository_whose_pending_hooks_are_not_known_is_a_warning_never_silence() {
        let status = serde_json::json!({"layers": {"projects": [
            {"root": "/src/c", "hooks": 3, "pending": [], "error": null,
             "pending_unknown": "their scripts were not digested within 2.0 s"},
            {"root": "/src/d", "hooks": 1, "pending": [], "error": null},
        ]}});
        let checks = layers_checks(&status);
        assert_eq!(checks.len(), 1, "only /src/c has something to say");
        assert!(matches!(checks[0].status, Status::Warn));
        assert!(
            checks[0].message.contains("/src/c") && checks[0].message.contains("not digested"),
            "{}",
            checks[0].message
        );
    }

    #[test]
    fn the_setup_to_run_again_keeps_the_relays_flags() {
        let again = setup_again(
            Agent::Codex,
            Path::new("/nowhere/config.toml"),
            Some("/bin/hookd-relay --agent codex --socket '/run/my sock' --fail-closed"),
        );
        assert_eq!(
            again,
            "hookd setup codex --file /nowhere/config.toml --socket '/run/my sock' --fail-closed"
        );
    }

    #[test]
    fn protection_is_read_from_status_where_it_is() {
        let on = json!({"protect": {"enabled": true, "paths": []}});
        assert_eq!(protect_check(&on).status, Status::Ok);
        let off = json!({"protect": {"enabled": false}});
        assert_eq!(protect_check(&off).status, Status::Fail);
        let unknown = json!({"ok": true});
        let check = protect_check(&unknown);
        assert_eq!(check.status, Status::Warn);
        assert!(check.message.contains("unknown"), "{}", check.message);
    }

    #[test]
    fn the_export_is_checked_where_it_is_on() {
        assert!(export_check(&json!({"ok": true})).is_none());
        assert!(export_check(&json!({"export": {"state": "off"}})).is_none());
        let fine = json!({"export": {"state": "caught_up", "endpoint": "http://c/v1/logs", "sent": 3, "refused": 0}});
        assert_eq!(export_check(&fine).unwrap().status, Status::Ok);
        let down = json!({"export": {"state": "retrying", "endpoint": "http://c/v1/logs",
            "last_error": "cannot connect", "backlog_bytes": 10, "sent": 0, "refused": 0}});
        let check = export_check(&down).unwrap();
        assert_eq!(check.status, Status::Warn);
        assert!(
            check.message.contains("cannot connect") && check.fix.is_some(),
            "{}",
            check.message
        );
    }

    #[test]
    fn drift_is_said_event_by_event() {
        let said = said_drift(&[
            Drift::Missing {
                event: "PreToolUse".into(),
            },
            Drift::Missing {
                event: "Stop".into(),
            },
            Drift::Changed {
                event: "PostToolUse".into(),
                command: "/tmp/x --agent claude-code".into(),
            },
        ]);
        assert_eq!(
            said,
            "no relay hook at PreToolUse, Stop; at PostToolUse a hook not as written (/tmp/x --agent claude-code)"
        );
    }
}
