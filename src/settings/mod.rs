//! The settings file: its model, its validation, and loading it with the owner and mode checks.
//!
//! A settings value is immutable once built: a reload builds a whole new one and swaps it in, so a fire
//! sees one generation from its start to its end.

mod error;
mod matcher;
mod parse;

pub use error::{ConfigError, ConfigErrors, line_and_column};
pub use matcher::Matcher;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::moment;

/// What a failed hook (crashed, timed out, unusable output) means for the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnFailure {
    /// It says nothing: the fail-open default, as the agents behave.
    Ignore,
    /// It refuses: fail-closed, for guards that must hold.
    Refuse,
}

/// The `[defaults]` table, with the contract's values where the file is silent.
#[derive(Debug, Clone, PartialEq)]
pub struct Defaults {
    pub timeout: Duration,
    pub on_failure: OnFailure,
    pub shell: String,
    pub max_processes: usize,
    pub stop_refusal_cap: u32,
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults {
            timeout: Duration::from_secs(60),
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
    pub program: Program,
    pub timeout: Duration,
    pub on_failure: OnFailure,
    /// `None`: every agent (and fires with no agent). `Some`: only these agents.
    pub agents: Option<Vec<String>>,
    pub env: Vec<(String, String)>,
    pub enabled: bool,
}

impl Hook {
    /// Whether this hook runs for a fire from `agent`.
    pub fn applies_to_agent(&self, agent: Option<&str>) -> bool {
        match (&self.agents, agent) {
            (None, _) => true,
            (Some(agents), Some(agent)) => agents.iter().any(|a| a == agent),
            (Some(_), None) => false,
        }
    }
}

/// A whole, valid settings file.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The settings file, as given (made absolute).
    pub path: PathBuf,
    /// Its folder: `HOOKD_CONFIG_DIR`, and the hooks' working directory when the event has no usable `cwd`.
    pub dir: PathBuf,
    pub defaults: Defaults,
    /// Moment names the file declares for agents newer than the daemon (`moments = [...]`).
    pub extra_moments: Vec<String>,
    /// Hooks per moment, each list in the file's order; moments in [`moment::KNOWN`] order, then declared.
    pub hooks: Vec<(String, Vec<Arc<Hook>>)>,
    /// The HTTP listener's settings.
    pub http: Http,
}

/// Why a settings file could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// There is no file (yet): not an error at start-up, where the daemon serves with no hooks.
    NotFound,
    /// The file is there but refused: every error found.
    Invalid(ConfigErrors),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::NotFound => write!(f, "the settings file does not exist"),
            LoadError::Invalid(errors) => write!(f, "{errors}"),
        }
    }
}

impl Settings {
    /// Settings with no hooks, for a daemon whose file does not exist yet.
    pub fn empty(path: &Path) -> Settings {
        let path = absolute(path);
        Settings {
            dir: folder_of(&path),
            path,
            defaults: Defaults::default(),
            extra_moments: Vec::new(),
            hooks: Vec::new(),
            http: Http::default(),
        }
    }

    /// Reads, checks and validates the file at `path`.
    pub fn load(path: &Path) -> Result<Settings, LoadError> {
        let text = Settings::read(path)?;
        Settings::parse(path, &path.display().to_string(), &text).map_err(LoadError::Invalid)
    }

    /// Reads the file at `path` after checking its owner and mode: its text, to be parsed.
    pub fn read(path: &Path) -> Result<String, LoadError> {
        use std::io::Read;
        let label = path.display().to_string();
        let cannot_read = |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::NotFound => LoadError::NotFound,
            _ => invalid(ConfigError::whole_file(
                &label,
                format!("cannot read the file: {e}"),
            )),
        };
        // Opened once, then checked and read through the same handle: a file swapped in between a check
        // by name and a read by name would be read unchecked.
        let mut file = std::fs::File::open(path).map_err(cannot_read)?;
        let metadata = file.metadata().map_err(cannot_read)?;
        if let Err(message) = check_owner_and_mode(&metadata) {
            return Err(invalid(ConfigError::whole_file(&label, message)));
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(cannot_read)?;
        String::from_utf8(bytes).map_err(|e| {
            let offset = e.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            invalid(ConfigError::at(
                &label,
                &text,
                offset,
                "the file is not valid UTF-8",
            ))
        })
    }

    /// Validates settings text; `label` names the file in errors.
    pub fn parse(path: &Path, label: &str, text: &str) -> Result<Settings, ConfigErrors> {
        let parsed = parse::parse(label, text)?;
        let path = absolute(path);
        Ok(Settings {
            dir: folder_of(&path),
            path,
            defaults: parsed.defaults,
            extra_moments: parsed.extra_moments,
            hooks: parsed.hooks,
            http: parsed.http,
        })
    }

    /// The hooks hung on `moment`, in the file's order (disabled ones included).
    pub fn hooks_for(&self, moment: &str) -> &[Arc<Hook>] {
        self.hooks
            .iter()
            .find(|(m, _)| m == moment)
            .map_or(&[], |(_, hooks)| hooks.as_slice())
    }

    /// Whether `name` is a moment these settings accept: a known one or one the file declares.
    pub fn knows_moment(&self, name: &str) -> bool {
        moment::known(name).is_some() || self.extra_moments.iter().any(|m| m == name)
    }

    /// Every moment name these settings accept, for suggestions.
    pub fn moment_names(&self) -> impl Iterator<Item = &str> {
        moment::KNOWN
            .iter()
            .map(|m| m.name)
            .chain(self.extra_moments.iter().map(String::as_str))
    }

    /// How many enabled hooks each moment has, for `status` and the reload summary.
    pub fn enabled_counts(&self) -> Vec<(&str, usize)> {
        self.hooks
            .iter()
            .map(|(moment, hooks)| (moment.as_str(), hooks.iter().filter(|h| h.enabled).count()))
            .collect()
    }

    /// One line: hooks per moment, for the log.
    pub fn summary(&self) -> String {
        let counts = self.enabled_counts();
        if counts.is_empty() {
            return "no hooks".to_string();
        }
        counts
            .iter()
            .map(|(moment, n)| format!("{moment}: {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn invalid(error: ConfigError) -> LoadError {
    LoadError::Invalid(ConfigErrors(vec![error]))
}

/// The rule ssh applies to its keys: owned by us or root, writable by nobody else. A file others can
/// write lets them run commands as us.
fn check_owner_and_mode(metadata: &std::fs::Metadata) -> Result<(), String> {
    let uid = nix::unistd::getuid().as_raw();
    if metadata.uid() != uid && metadata.uid() != 0 {
        return Err(format!(
            "refused: the file is owned by uid {}, not by this user (uid {uid}) or root; whoever owns it could run commands as you",
            metadata.uid()
        ));
    }
    let mode = metadata.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(format!(
            "refused: the file is writable by group or others (mode {mode:04o}); anyone who can write it could run commands as you (fix: chmod go-w)"
        ));
    }
    Ok(())
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

fn folder_of(path: &Path) -> PathBuf {
    path.parent()
        .map_or_else(|| PathBuf::from("/"), Path::to_path_buf)
}
