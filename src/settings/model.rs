//! The settings' parts, as the file gives them with hookd's defaults applied: `[defaults]`, `[http]`,
//! `[record]`, `[protect]`, and each hook with the program it starts. The whole file is
//! [`Settings`](super::Settings), made of these.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::limits::DEFAULT_HOOK_TIMEOUT;
use crate::settings::condition::Condition;
use crate::settings::matcher::Matcher;

/// What a failed hook (crashed, timed out, unusable output) means for the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnFailure {
    /// It says nothing: the fail-open default, as the agents behave.
    Ignore,
    /// It refuses: fail-closed, for guards that must hold.
    Refuse,
}

/// The `[defaults]` table, with hookd's defaults where the file is silent.
#[derive(Debug, Clone, PartialEq)]
pub struct Defaults {
    pub timeout: Duration,
    /// Whether the file gives `timeout` in `[defaults]` (else hookd's own default).
    pub timeout_given: bool,
    pub on_failure: OnFailure,
    pub shell: String,
    pub max_processes: usize,
    pub stop_refusal_cap: u32,
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults {
            timeout: DEFAULT_HOOK_TIMEOUT,
            timeout_given: false,
            on_failure: OnFailure::Ignore,
            shell: "/bin/sh".to_string(),
            max_processes: 64,
            stop_refusal_cap: 8,
        }
    }
}

/// The `[http]` table: the HTTP listener for agents' http hooks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Http {
    /// Where to listen; `None` (the default): no listener.
    pub listen: Option<std::net::SocketAddr>,
    /// Set only by `allow_non_loopback = true`: a `listen` address other than loopback is accepted.
    pub allow_non_loopback: bool,
}

/// The `[record]` table: the journal of every decision (docs/record.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Whether fires are recorded at all (journal, `status` counts, `watch`).
    pub enabled: bool,
    /// A journal file is rotated once it passes this many MiB.
    pub file_size_mib: u64,
    /// How many files are kept, the one being written included: the journal never takes more than
    /// `files` × `file_size_mib` on disk.
    pub files: u32,
    /// Keep the whole tool input (or prompt) of every fire, not only a summary of it.
    pub full_inputs: bool,
}

impl Default for Record {
    fn default() -> Self {
        Record {
            enabled: true,
            file_size_mib: 10,
            files: 5,
            full_inputs: false,
        }
    }
}

/// The `[protect]` table: hookd's own guard of itself (docs/security.md). On by default, with no hook
/// needed: at every moment before a tool runs, a call that would write, move, delete or change the mode
/// of the settings, the programs its hooks run, hookd's state, socket and units, or an agent's settings
/// that hold the relay, or would stop or kill the daemon, is refused by the engine itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Protect {
    /// Whether the guard of hookd itself is on (`enabled = false` turns it off: only by hand, in this
    /// file, which the guard keeps the agent from editing).
    pub enabled: bool,
    /// More paths to guard as hookd's own files are guarded (a file, or a folder and all below it):
    /// `~/` and `$HOME/` expanded, a relative path taken from the settings file's folder.
    pub paths: Vec<PathBuf>,
    /// Whether a live hook's allow stands (`live_hooks_allow = true`). Off by default: any process of
    /// the user may hang a live hook over the socket, the agent's own tool calls included, and one that
    /// allows would let the agent approve its own calls past its permission prompt; off, a live hook's
    /// allow is read as nothing, as a repository hook's is (its refusals, asks, adds and rewrites hold).
    pub live_hooks_allow: bool,
}

impl Protect {
    /// The paths made absolute: `~/` and `$HOME/` from the user's home, the rest from `dir`.
    pub(super) fn resolved(mut self, dir: &Path) -> Protect {
        self.paths = self
            .paths
            .iter()
            .map(|path| {
                let text = path.to_string_lossy();
                let home = ["~/", "$HOME/", "${HOME}/"]
                    .iter()
                    .find_map(|prefix| text.strip_prefix(prefix));
                match home {
                    Some(rest) => crate::paths::home().join(rest),
                    None if text == "~" => crate::paths::home(),
                    None => dir.join(path),
                }
            })
            .collect();
        self
    }
}

impl Default for Protect {
    fn default() -> Self {
        Protect {
            enabled: true,
            paths: Vec::new(),
            live_hooks_allow: false,
        }
    }
}

/// How a hook is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// `shell -c command`.
    Shell { shell: String, command: String },
    /// Exec'd as it stands, without a shell.
    Argv(Vec<String>),
    /// Started once and kept running: one event per line on its stdin, one answer per line on its stdout,
    /// `count` processes for fires that overlap.
    Worker { argv: Vec<String>, count: usize },
    /// Run in the daemon's own process, with nothing to start: the built-in guard
    /// (`builtin = "guard"`, [`crate::guard`]), its rules as the hook sets them.
    Guard(crate::guard::Guard),
    /// Hung live over the socket by a client (`attach`, docs/protocol.md), never in the file: each event
    /// is sent to the client on its connection as a `call`, and its `answer` is read as a worker's.
    /// `connection` is the engine's number for the client's connection, `client` the name it gave.
    Live { connection: u64, client: String },
}

/// One hook of the settings file, with the defaults already applied.
#[derive(Debug, Clone)]
pub struct Hook {
    /// Unique across the file; `Moment#N` when the file gives none.
    pub name: String,
    pub moment: String,
    pub matcher: Matcher,
    /// The matcher as written, for `check` and logs; `None` when absent.
    pub matcher_source: Option<String>,
    /// Its `if`: a condition on what the tool was called with (`condition.rs`); a hook whose condition
    /// does not fit the call is not started. `None`: every call its matcher fits.
    pub condition: Option<Condition>,
    pub program: Program,
    pub timeout: Duration,
    /// Whether the file gives this hook's timeout (on the hook, or in `[defaults]`). One it does not is
    /// hookd's default, which fits itself to an agent that waits less at a moment (see
    /// [`crate::engine`]'s fire); one it does is warned of where it cannot fit.
    pub timeout_given: bool,
    pub on_failure: OnFailure,
    /// `None`: every agent (and fires with no agent). `Some`: only these agents.
    pub agents: Option<Vec<String>>,
    pub env: Vec<(String, String)>,
    pub enabled: bool,
    /// `background = true`: the fire is answered without waiting for it and its answer is never read;
    /// only where that loses no decision (`background.rs`). Its outcome goes to the journal.
    pub background: bool,
    /// Line and column of its `command`, `argv` or `worker` in the file, for the checks of the program it
    /// runs, made once the file is valid.
    pub program_at: (usize, usize),
    /// The layer whose file holds it: managed hooks run first, and nothing lower touches them.
    pub layer: crate::settings::layer::Layer,
    /// The folder of the file that holds it (`HOOKD_CONFIG_DIR`) where that is not the user's settings'
    /// folder: the managed layer's, a repository's `.hookd`. `None`: the settings' own folder.
    pub dir: Option<std::path::PathBuf>,
    /// Where its table is in its file (bytes): a project hook's trust is pinned to this text.
    pub span: (usize, usize),
}

impl Hook {
    /// Whether `other` is the same hook from another layer: the same program with the same words, at
    /// the same moment, with the same matcher and `if`. It runs once (the higher layer's).
    pub fn same_as(&self, other: &Hook) -> bool {
        self.moment == other.moment
            && self.program == other.program
            && self.matcher_source == other.matcher_source
            && self.condition.as_ref().map(|c| &c.source)
                == other.condition.as_ref().map(|c| &c.source)
            && self.agents == other.agents
    }

    /// Whether `other` runs as this hook does, so that one of them may stand for both: the same hook
    /// ([`Hook::same_as`]), both enabled and both heard (neither in the background), with the same
    /// environment, failure mode and timeout, and from the same folder where its program names
    /// `$HOOKD_CONFIG_DIR`. A twin that is off, unheard, fail-open, shorter-lived or meant for another
    /// folder's script must not stand for a hook that would refuse.
    pub fn runs_as(&self, other: &Hook) -> bool {
        self.same_as(other)
            && self.enabled
            && other.enabled
            && self.background == other.background
            && self.on_failure == other.on_failure
            && self.timeout == other.timeout
            && self.env == other.env
            && (self.dir == other.dir || !self.names_config_dir())
    }

    /// Whether its program names `HOOKD_CONFIG_DIR`, whose value is the folder of its file.
    fn names_config_dir(&self) -> bool {
        let words: Vec<&str> = match &self.program {
            Program::Shell { command, .. } => vec![command.as_str()],
            Program::Argv(argv) | Program::Worker { argv, .. } => {
                argv.iter().map(String::as_str).collect()
            }
            Program::Guard(_) | Program::Live { .. } => Vec::new(),
        };
        words.iter().any(|w| w.contains("HOOKD_CONFIG_DIR"))
    }

    /// Whether this hook runs for a fire from `agent`.
    pub fn applies_to_agent(&self, agent: Option<&str>) -> bool {
        match (&self.agents, agent) {
            (None, _) => true,
            (Some(agents), Some(agent)) => agents.iter().any(|a| a == agent),
            (Some(_), None) => false,
        }
    }
}
