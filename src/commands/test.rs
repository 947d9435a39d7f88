//! `hookd test`: the hooks that fit one event, run as the daemon runs them, with no daemon and no socket.
//! The settings file is loaded and checked as `serve` loads it; the event is decided by the daemon's own
//! engine, held in hand ([`Engine::decide_showing`]): the same selection, runner, bounds (timeouts, output
//! limit, process slots) and fold. Each hook's outcome is shown with what it printed, then the verdict as
//! the daemon would answer it, and, for an agent, what `hookd relay` would answer that agent, by the
//! relay's own code. `hookd test --cases` (`cases.rs`) runs many such trials.
//!
//! What differs from the daemon, on purpose: nothing is written to the record, and the stop loops start
//! from nothing (a Stop is the first of its session); no subreaper is set up, so a process that leaves
//! its hook's process group is not stopped as the daemon stops it.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::agents::Agent;
use crate::agents::dialect::{Answer, CarryBack, another_agents_event, unknown_event};
use crate::commands::answer_text;
use crate::commands::event_input::{own_event, read_event};
use crate::commands::relay_process::{answer_for, read_translated, undecided_warning};
use crate::commands::shared::{EXIT_REFUSED, known_agent, misspelt_agent};
use crate::commands::style::{self, printable};
use crate::engine::{Engine, Fire, NotDecided, Printed};
use crate::protocol::{Event, FireResponse};
use crate::settings::{LoadError, Settings};

/// How long the worker hooks and the hooks being stopped get to end once a trial is decided.
const SHUT_DOWN: Duration = Duration::from_secs(2);

/// What `hookd test` was told on its command line.
pub struct Options {
    pub moment: Option<String>,
    pub agent: Option<String>,
    pub event: Option<PathBuf>,
    pub agent_event: Option<String>,
    pub config: PathBuf,
    pub json: bool,
}

pub fn test(options: Options) -> Result<ExitCode, String> {
    let settings = load(&options.config)?;
    let terminal = std::io::stdout().is_terminal();
    let json = options.json || !terminal;
    let input = read_event(options.event.as_deref())?;
    let trial = Trial::new(
        options.moment.as_deref(),
        options.agent.as_deref(),
        options.agent_event.as_deref(),
        &input,
    )?;
    let runtime = runtime()?;
    let tried = runtime.block_on(async { trial.run(settings, &interrupted()).await })?;
    if json {
        println!("{}", tried.to_json());
    } else {
        print!(
            "{}",
            tried.text(&options.config, style::colour_wanted(terminal))
        );
    }
    Ok(if tried.response.refused {
        ExitCode::from(EXIT_REFUSED)
    } else {
        ExitCode::SUCCESS
    })
}

/// The settings file, loaded and checked as `serve` loads it.
pub(crate) fn load(config: &Path) -> Result<Settings, String> {
    match Settings::load(config) {
        Ok(settings) => Ok(settings),
        Err(LoadError::NotFound) => Err(format!("{}: no such settings file", config.display())),
        Err(LoadError::Invalid(errors)) => {
            Err(format!("{} is invalid:\n{errors}", config.display()))
        }
    }
}

/// The async runtime the engine runs on: one thread, as the daemon's.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

/// Why a trial was not decided when Ctrl-C stopped it.
pub(crate) const INTERRUPTED: &str = "interrupted: the hooks were stopped";

/// Cancelled at the first Ctrl-C (SIGINT), for as long as the runtime runs: handled once for the whole
/// command, so that a Ctrl-C between two cases is not lost. Needs the runtime. The handler is in place
/// when this returns, not when the task that waits on it first runs: a Ctrl-C in between would
/// otherwise kill the command with its hooks still running.
pub(crate) fn interrupted() -> CancellationToken {
    use tokio::signal::unix::{SignalKind, signal};
    let token = CancellationToken::new();
    let cancel = token.clone();
    let Ok(mut sigint) = signal(SignalKind::interrupt()) else {
        return token;
    };
    tokio::spawn(async move {
        if sigint.recv().await.is_some() {
            cancel.cancel();
        }
    });
    token
}

/// One event to decide: what `hookd test` fires, and one case of `hookd test --cases`.
#[derive(Debug)]
pub(crate) struct Trial {
    pub moment: String,
    /// The fire's agent (hooks with `agents` fire only for theirs).
    pub agent: Option<String>,
    pub event: Event,
    /// For a known agent: how the relay answers it.
    relay: Option<Relay>,
}

/// What the relay needs to answer an agent for a verdict.
#[derive(Debug)]
struct Relay {
    agent: Agent,
    /// The agent's own name for the moment.
    event_name: String,
    carry_back: Option<CarryBack>,
}

impl Trial {
    /// With a `moment`, `input` is hookd's own event, fired as `hookd fire MOMENT --agent AGENT` fires
    /// it. Without one, it is `agent`'s raw hook input, translated as `hookd relay --agent AGENT
    /// [--event AGENT_EVENT]` translates it, its moment taken from it.
    pub fn new(
        moment: Option<&str>,
        agent: Option<&str>,
        agent_event: Option<&str>,
        input: &[u8],
    ) -> Result<Trial, String> {
        // A misspelt agent (`claude`) is no agent a hook's `agents` names: its hooks would not run, and
        // the trial would pass for one that nothing refuses, as the settings refuse the same name.
        misspelt_agent(agent)?;
        if let Some(moment) = moment {
            if agent_event.is_some() {
                return Err(
                    "--agent-event names the event of an agent's raw hook input: give it without a moment"
                        .into(),
                );
            }
            let known = agent.and_then(Agent::from_name);
            return Ok(Trial {
                moment: moment.to_string(),
                agent: agent.map(str::to_string),
                event: own_event(input)?,
                relay: known.map(|agent| Relay {
                    agent,
                    event_name: agent.event_name_of(moment).to_string(),
                    carry_back: None,
                }),
            });
        }
        let Some(agent) = agent else {
            return Err(
                "name the moment (hookd test PreToolUse) for hookd's own event, or the agent (--agent claude-code) whose raw hook input this is"
                    .into(),
            );
        };
        let agent = known_agent(agent)?;
        let translated = read_translated(input, agent, agent_event).map_err(|why| {
            let hint = if agent_event.is_none() && why.contains("--event") {
                " (hookd test takes the event as --agent-event)"
            } else {
                ""
            };
            format!(
                "hookd relay --agent {} cannot read it: {why}{hint}",
                agent.name()
            )
        })?;
        if let Some(why) = another_agents_event(agent, &translated.event_name) {
            return Err(format!(
                "hookd relay --agent {} would not fire it: {why}",
                agent.name()
            ));
        }
        Ok(Trial {
            moment: translated.moment,
            agent: Some(agent.name().to_string()),
            event: translated.event,
            relay: Some(Relay {
                agent,
                event_name: translated.event_name,
                carry_back: translated.carry_back,
            }),
        })
    }

    /// Decides the trial on a fresh engine on `settings` (so that no trial sees another's stop loops or
    /// workers), and stops its hooks and workers after. `interrupted` (Ctrl-C, [`interrupted`]) gives
    /// the trial up, stopping its hooks.
    pub async fn run(
        self,
        settings: Settings,
        interrupted: &CancellationToken,
    ) -> Result<Tried, String> {
        if interrupted.is_cancelled() {
            return Err(INTERRUPTED.into());
        }
        let engine = Engine::new(settings);
        let giving_up = {
            let (engine, interrupted) = (engine.clone(), interrupted.clone());
            tokio::spawn(async move {
                interrupted.cancelled().await;
                engine.abandon();
            })
        };
        let undecidable = self.event.undecidable.clone();
        let fire = Fire {
            moment: self.moment.clone(),
            agent: self.agent.clone(),
            event: self.event,
        };
        let decided = engine
            .decide_showing(fire, &engine.abandoned().child_token())
            .await;
        giving_up.abort();
        engine.shut_down(SHUT_DOWN).await;
        let (decision, printed) = decided.map_err(|not| match not {
            NotDecided::UnknownMoment(message) => match &self.relay {
                // As the relay says it: a real event nobody can hang hooks on, or a wrong name.
                Some(relay) => match unknown_event(relay.agent, &relay.event_name) {
                    Some(why) => format!("{message}: {why}"),
                    None => format!(
                        "{message}: a real event of {} that hookd has no moment for; the relay lets it through",
                        relay.agent.name()
                    ),
                },
                None => message,
            },
            NotDecided::ShuttingDown => INTERRUPTED.to_string(),
        })?;
        let response = crate::daemon::answer::fire_response(None, decision);
        let (answer, warning) = match &self.relay {
            Some(relay) => (
                Some(answer_for(
                    relay.agent,
                    &self.moment,
                    &relay.event_name,
                    &response,
                    relay.carry_back.as_ref(),
                )),
                undecided_warning(undecidable.as_deref(), &response),
            ),
            None => (None, None),
        };
        Ok(Tried {
            moment: self.moment,
            agent: self.agent,
            response,
            printed,
            answer,
            warning,
        })
    }
}

/// A trial decided.
#[derive(Debug)]
pub(crate) struct Tried {
    pub moment: String,
    pub agent: Option<String>,
    /// The verdict as the daemon would answer it on the socket.
    pub response: FireResponse,
    /// What each hook printed, one per hook of the response.
    pub printed: Vec<Printed>,
    /// What the relay would answer the agent, for a known agent.
    pub answer: Option<Answer>,
    /// What the relay would say on stderr of an undecidable event let through.
    pub warning: Option<String>,
}

impl Tried {
    /// As JSON: the daemon's response, each hook with its `stdout` and `stderr`, the `moment` and
    /// `agent`, and `relay`, what the relay would answer.
    pub fn to_json(&self) -> Value {
        let mut value = serde_json::to_value(&self.response).unwrap_or_default();
        if let Some(hooks) = value.get_mut("hooks").and_then(Value::as_array_mut) {
            for (hook, printed) in hooks.iter_mut().zip(&self.printed) {
                if let Value::Object(hook) = hook {
                    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
                    hook.insert("stdout".into(), text(&printed.stdout).into());
                    hook.insert("stderr".into(), text(&printed.stderr).into());
                }
            }
        }
        if let Value::Object(object) = &mut value {
            object.insert("moment".into(), self.moment.clone().into());
            if let Some(agent) = &self.agent {
                object.insert("agent".into(), agent.clone().into());
            }
            if let Some(answer) = &self.answer {
                object.insert(
                    "relay".into(),
                    serde_json::json!({
                        "stdout": answer.stdout,
                        "stderr": answer.stderr,
                        "exit": answer.exit,
                    }),
                );
            }
            if let Some(warning) = &self.warning {
                object.insert("relay_warning".into(), warning.clone().into());
            }
        }
        value
    }

    /// For people: what was fired, the verdict, and what the relay would answer.
    pub fn text(&self, config: &Path, colour: bool) -> String {
        let mut out = format!(
            "{}{} with {}\n",
            printable(&self.moment),
            self.agent
                .as_deref()
                .map(|agent| format!(" from {}", printable(agent)))
                .unwrap_or_default(),
            printable(&config.display().to_string())
        );
        out.push_str(&answer_text::verdict(
            &self.response,
            Some(&self.printed),
            colour,
        ));
        if let (Some(answer), Some(agent)) = (&self.answer, &self.agent) {
            out.push_str(&answer_text::relay_answer(agent, answer));
        }
        if let Some(warning) = &self.warning {
            out.push_str(&format!(
                "hookd relay would say on stderr: {}\n",
                printable(warning)
            ));
        }
        out
    }
}
