//! The settings file: its model, its validation, and loading it with the owner and mode checks.
//!
//! A settings value is immutable once built: a reload builds a whole new one and swaps it in, so a fire
//! sees one generation from its start to its end.

mod background;
mod condition;
mod error;
pub mod export;
mod layer;
mod matcher;
mod model;
mod near;
mod parse;
mod reach;
mod trust;

pub use background::refused_at as background_refused_at;
pub use condition::{Condition, ToolCall, Unreadable};
pub use error::{ConfigError, ConfigErrors, LineIndex, line_and_column};
pub use export::Export;
pub use layer::{Layer, Policy, ProjectHooks};
pub use matcher::Matcher;
pub use model::{Defaults, Hook, Http, OnFailure, Program, Protect, Record};
pub use near::near_name;
/// The start of a name hookd keeps for its own hooks (`hookd:protect`).
pub use parse::RESERVED_NAME_PREFIX;
/// The agent a misspelt name surely means (`claude` for claude-code): settings and `hookd test` refuse it.
pub(crate) use parse::meant_agent;
pub use reach::NeverRuns;
pub(crate) use trust::{Owners, Untrusted, resolve_owned};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::limits::SETTINGS_SIZE;
use crate::tables::moment;

/// Why an empty settings file is refused, and what to write instead; the same words from `check` and a
/// reload.
pub const EMPTY_FILE: &str = "the file is empty (half-written?): hookd does not take it, and a reload keeps the last good settings; to have no hooks, write a comment in it";

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
    /// Moments whose hooks run one after another, each given what the hooks before it rewrote
    /// (`sequential = [...]`).
    pub sequential: Vec<String>,
    /// Hooks per moment, each list in the file's order; moments in [`moment::KNOWN`] order, then declared.
    pub hooks: Vec<(String, Vec<Arc<Hook>>)>,
    /// The HTTP listener's settings.
    pub http: Http,
    /// The journal's settings.
    pub record: Record,
    /// hookd's guard of itself.
    pub protect: Protect,
    /// Where the journal is sent besides the disk (`[export.otlp]`, docs/export.md).
    pub export: Export,
    /// The first 16 hex digits of the SHA-256 of the file's text (`sha256sum hooks.toml | cut -c1-16`),
    /// in every fire's record: which settings decided it, across machines and restarts, where the
    /// generation only counts reloads since the daemon started. Empty for settings read from no file.
    pub digest: std::sync::Arc<str>,
    /// What only the managed layer sets: its defaults where there is none.
    pub policy: Policy,
    /// The top-level keys the file gives (for the managed layer's tables to hold over the user's).
    pub given: Vec<String>,
    /// What folding the layers did that a person should know: a hook that runs once because another
    /// layer has it too, the user's hooks skipped by `allow_managed_hooks_only`, a user's setting the
    /// managed layer holds. Shown by `check`, journaled at each load.
    pub layer_notes: Vec<String>,
    /// The managed layer's files in force, in their order (none: no managed layer).
    pub managed_files: Vec<PathBuf>,
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
            sequential: Vec::new(),
            hooks: Vec::new(),
            http: Http::default(),
            record: Record::default(),
            protect: Protect::default(),
            export: Export::default(),
            digest: std::sync::Arc::from(""),
            policy: Policy::default(),
            given: Vec::new(),
            layer_notes: Vec::new(),
            managed_files: Vec::new(),
        }
    }

    /// Reads, checks and validates the file at `path`, and checks the programs its hooks run, as a
    /// reload would: an empty file is refused here too (see [`Settings::refuse_empty`]), so that `check`
    /// never calls valid a file the daemon would not take.
    pub fn load(path: &Path) -> Result<Settings, LoadError> {
        let text = Settings::read(path)?;
        let label = path.display().to_string();
        Settings::refuse_empty(&label, &text).map_err(LoadError::Invalid)?;
        let settings = Settings::parse(path, &label, &text).map_err(LoadError::Invalid)?;
        settings.check_programs().map_err(LoadError::Invalid)?;
        Ok(settings)
    }

    /// Reads the file at `path` after checking it, its folders and its links (see [`trust`]): its text,
    /// to be parsed. Whatever is at the path, this returns at once: a FIFO, a device or a file in /proc is
    /// refused without being read (a FIFO froze the daemon for good), and so is a file bigger than
    /// [`SETTINGS_SIZE`] (a 1 GB sparse file took 14 s and 1 GB of memory).
    pub fn read(path: &Path) -> Result<String, LoadError> {
        Settings::read_owned(path, Owners::UserOrRoot)
    }

    /// As [`Settings::read`], with the file and its folders held to `owners` (root alone for the
    /// managed layer).
    pub(crate) fn read_owned(path: &Path, owners: Owners) -> Result<String, LoadError> {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let label = path.display().to_string();
        let refused = |message: String| invalid(ConfigError::whole_file(&label, message));
        let cannot_read = |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::NotFound => LoadError::NotFound,
            _ => refused(format!("cannot read the file: {e}")),
        };
        let resolved = match trust::resolve_owned(path, "the settings file", owners) {
            Ok(resolved) => resolved,
            Err(trust::Untrusted::NotFound) => return Err(LoadError::NotFound),
            Err(trust::Untrusted::Refused(message)) => return Err(refused(message)),
        };
        // Opened once, then checked and read through the same handle: a file swapped in between a check
        // by name and a read by name would be read unchecked. Not blocking: opening a FIFO with no writer
        // waits for one, forever.
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOFOLLOW | nix::libc::O_NOCTTY)
            .open(&resolved)
            .map_err(cannot_read)?;
        let metadata = file.metadata().map_err(cannot_read)?;
        if !metadata.file_type().is_file() {
            return Err(refused(format!(
                "refused: {} is {}, not a regular file",
                resolved.display(),
                kind_of(&metadata)
            )));
        }
        if let Some(kind) = pseudo_filesystem(&file) {
            return Err(refused(format!(
                "refused: {} is in {kind}, not a regular file",
                resolved.display()
            )));
        }
        if let Err(message) =
            trust::check_file_owned(&metadata, &resolved, "the settings file", owners)
        {
            return Err(refused(message));
        }
        if metadata.len() > SETTINGS_SIZE {
            return Err(refused(too_big(metadata.len())));
        }
        let mut bytes = Vec::new();
        file.by_ref()
            .take(SETTINGS_SIZE + 1)
            .read_to_end(&mut bytes)
            .map_err(cannot_read)?;
        if bytes.len() as u64 > SETTINGS_SIZE {
            // It grew while it was read.
            return Err(refused(too_big(bytes.len() as u64)));
        }
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

    /// An empty file (zero bytes) is refused, by `check` and at every reload alike: an editor that
    /// truncates then writes leaves one for a moment, and taking it would drop every hook, letting through
    /// what they refuse. A file meant to have no hooks says so with a comment.
    pub fn refuse_empty(label: &str, text: &str) -> Result<(), ConfigErrors> {
        if !text.is_empty() {
            return Ok(());
        }
        Err(ConfigErrors(vec![ConfigError::whole_file(
            label, EMPTY_FILE,
        )]))
    }

    /// Validates settings text; `label` names the file in errors.
    pub fn parse(path: &Path, label: &str, text: &str) -> Result<Settings, ConfigErrors> {
        Settings::parse_layer(path, label, text, Layer::User)
    }

    /// Validates settings text read for `layer`: what it may set, each hook marked with it.
    pub fn parse_layer(
        path: &Path,
        label: &str,
        text: &str,
        layer: Layer,
    ) -> Result<Settings, ConfigErrors> {
        let parsed = parse::parse(label, text, layer)?;
        let path = absolute(path);
        let dir = folder_of(&path);
        Ok(Settings {
            protect: parsed.protect.resolved(&dir),
            export: parsed.export.resolved(&dir),
            dir,
            path,
            defaults: parsed.defaults,
            extra_moments: parsed.extra_moments,
            sequential: parsed.sequential,
            hooks: parsed.hooks,
            http: parsed.http,
            record: parsed.record,
            digest: digest_of(text).into(),
            policy: parsed.policy,
            given: parsed.given,
            layer_notes: Vec::new(),
            managed_files: Vec::new(),
        })
    }

    /// Checks the programs the enabled hooks run, as the settings file is checked (see [`trust`]): an
    /// `argv[0]` or `worker[0]` that is a path, a `command` whose first word is one, and the shell of a
    /// `command`. Anyone who can write such a program, or a folder above it, could run commands as you
    /// (a group-writable copy of the example guard ran without a word). A relative path is taken from the
    /// settings file's folder, where a hook runs when its event has no usable `cwd`. A program that does not
    /// exist (yet) is not refused here: the hook fails when it runs, and its `on_failure` decides; nor is a
    /// first word that only the shell can tell (`$VAR/x`, other than `$HOOKD_CONFIG_DIR`). The secrets
    /// file `[export.otlp]` names is checked here too: the user's own, and unreadable by anyone else.
    pub fn check_programs(&self) -> Result<(), ConfigErrors> {
        self.check_programs_owned(Owners::UserOrRoot)
    }

    /// As [`Settings::check_programs`], the programs held to `owners`: a managed hook's program must be
    /// root's, or the user (and the agent) could change what the team's hook runs.
    pub(crate) fn check_programs_owned(&self, owners: Owners) -> Result<(), ConfigErrors> {
        let label = self.path.display().to_string();
        let mut verdicts: std::collections::HashMap<PathBuf, Option<String>> =
            std::collections::HashMap::new();
        let mut errors = Vec::new();
        for hook in self.hooks.iter().flat_map(|(_, hooks)| hooks) {
            if !hook.enabled {
                continue;
            }
            for program in programs_of(&hook.program, &self.dir) {
                let verdict = verdicts
                    .entry(program.clone())
                    .or_insert_with(|| check_program(&program, owners));
                if let Some(message) = verdict {
                    let mut error = ConfigError::whole_file(
                        &label,
                        format!("hook \"{}\": {message}", hook.name),
                    );
                    (error.line, error.column) = hook.program_at;
                    errors.push(error);
                }
            }
        }
        errors.extend(self.export.check_files(&label));
        if errors.is_empty() {
            Ok(())
        } else {
            errors.sort_by_key(|e| (e.line, e.column));
            Err(ConfigErrors(errors))
        }
    }

    /// The files the hooks run, as far as they can be told without running them: each program that is
    /// a path (as [`Settings::check_programs`] finds them), and each word of an `argv`, a `worker` or a
    /// `command` that names a file that exists (`python3 guard.py`, `"$HOOKD_CONFIG_DIR/x.sh"`), a
    /// relative one taken from the settings' folder. What hookd's guard of itself keeps the agent from
    /// changing (docs/security.md).
    pub fn program_files(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for hook in self.hooks.iter().flat_map(|(_, hooks)| hooks) {
            for path in self.hook_files(hook) {
                if !files.contains(&path) {
                    files.push(path);
                }
            }
        }
        files
    }

    /// The files one hook runs, as [`Settings::program_files`] finds them: the program when it is a
    /// path, and each of its words that names a file that exists, taken from the settings' folder.
    pub fn hook_files(&self, hook: &Hook) -> Vec<PathBuf> {
        let mut env = crate::shell::Env {
            home: Some(crate::paths::home().to_string_lossy().into_owned()),
            ..crate::shell::Env::default()
        };
        if let Some(dir) = self.dir.to_str() {
            env.vars.insert("HOOKD_CONFIG_DIR".into(), dir.to_string());
        }
        let mut files = Vec::new();
        let mut add = |path: PathBuf| {
            if !files.contains(&path) {
                files.push(path);
            }
        };
        for program in programs_of(&hook.program, &self.dir) {
            add(program);
        }
        let words: Vec<String> = match &hook.program {
            Program::Argv(argv) | Program::Worker { argv, .. } => argv.clone(),
            Program::Guard(_) | Program::Live { .. } => Vec::new(),
            Program::Shell { command, .. } => crate::shell::read(command, &env)
                .into_iter()
                .flat_map(|c| c.words.into_iter().filter(|w| w.known).map(|w| w.text))
                .collect(),
        };
        for word in words {
            if word.starts_with('-') || word.is_empty() {
                continue;
            }
            let path = self.dir.join(&word);
            if path.is_file() {
                add(path);
            }
        }
        files
    }

    /// The hooks hung on `moment`, in the file's order (disabled ones included).
    pub fn hooks_for(&self, moment: &str) -> &[Arc<Hook>] {
        self.hooks
            .iter()
            .find(|(m, _)| m == moment)
            .map_or(&[], |(_, hooks)| hooks.as_slice())
    }

    /// Whether the hooks of `moment` run one after another (`sequential = [...]`).
    pub fn is_sequential(&self, moment: &str) -> bool {
        self.sequential.iter().any(|m| m == moment)
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

/// The files a hook's program runs from, as far as they can be told before it runs.
fn programs_of(program: &Program, dir: &Path) -> Vec<PathBuf> {
    let path = |word: &str| word.contains('/').then(|| dir.join(word));
    match program {
        Program::Shell { shell, command } => path(shell)
            .into_iter()
            .chain(first_word(command, dir))
            .collect(),
        Program::Argv(argv) | Program::Worker { argv, .. } => argv
            .first()
            .and_then(|word| path(word))
            .into_iter()
            .collect(),
        Program::Guard(_) | Program::Live { .. } => Vec::new(),
    }
}

/// The first word of a shell command line, when it is a path the shell would run as it stands (a
/// leading `$HOOKD_CONFIG_DIR` or `~/` expanded as the shell would).
fn first_word(command: &str, dir: &Path) -> Option<PathBuf> {
    let command = command.trim_start();
    let word = match command.chars().next()? {
        quote @ ('"' | '\'') => command[1..].split(quote).next()?,
        _ => command
            .split(|c: char| c.is_whitespace() || ";&|<>()".contains(c))
            .next()?,
    };
    let dir_text = dir.to_str()?;
    let word = if let Some(rest) = word
        .strip_prefix("$HOOKD_CONFIG_DIR")
        .or_else(|| word.strip_prefix("${HOOKD_CONFIG_DIR}"))
    {
        format!("{dir_text}{rest}")
    } else if let Some(rest) = word.strip_prefix("~/") {
        format!("{}/{rest}", std::env::var("HOME").ok()?)
    } else {
        word.to_string()
    };
    // What only the shell can tell: other variables, substitutions, patterns, an assignment.
    if !word.contains('/') || word.contains(['$', '`', '*', '?', '[', '=', '\\']) {
        return None;
    }
    Some(dir.join(word))
}

/// Why a program cannot be trusted to run, or `None`.
fn check_program(program: &Path, owners: Owners) -> Option<String> {
    let what = format!("the program {}", program.display());
    match trust::resolve_owned(program, &what, owners) {
        Err(trust::Untrusted::NotFound) => None,
        Err(trust::Untrusted::Refused(message)) => Some(message),
        Ok(resolved) => {
            let metadata = std::fs::metadata(&resolved).ok()?;
            trust::check_file_owned(&metadata, &resolved, "the program", owners).err()
        }
    }
}

fn invalid(error: ConfigError) -> LoadError {
    LoadError::Invalid(ConfigErrors(vec![error]))
}

fn too_big(size: u64) -> String {
    format!(
        "refused: the file is {size} bytes, more than the {} MiB a settings file may be",
        SETTINGS_SIZE / (1024 * 1024)
    )
}

/// What a file that is not a regular one is, for messages.
fn kind_of(metadata: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = metadata.file_type();
    if kind.is_dir() {
        "a folder"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

/// Whether an open file is in /proc or /sys, whose "regular" files are the kernel's: their size says 0
/// and a read may block (`/proc/kmsg`) or take what others were meant to read.
fn pseudo_filesystem(file: &std::fs::File) -> Option<&'static str> {
    use std::os::fd::AsRawFd;
    const PROC_SUPER_MAGIC: i64 = 0x9fa0;
    const SYSFS_MAGIC: i64 = 0x6265_6572;
    // SAFETY: fstatfs writes one statfs struct through a valid pointer; the descriptor is open (borrowed
    // from `file`, alive for the call).
    let mut stat: nix::libc::statfs = unsafe { std::mem::zeroed() };
    let result = unsafe { nix::libc::fstatfs(file.as_raw_fd(), &mut stat) };
    if result != 0 {
        return None;
    }
    match stat.f_type as i64 {
        PROC_SUPER_MAGIC => Some("/proc"),
        SYSFS_MAGIC => Some("/sys"),
        _ => None,
    }
}

/// The first 16 hex digits of the SHA-256 of `text`: enough to tell settings apart, short in every line.
fn digest_of(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

fn folder_of(path: &Path) -> PathBuf {
    path.parent()
        .map_or_else(|| PathBuf::from("/"), Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_word_of_a_command_is_checked_when_it_is_a_path() {
        let dir = Path::new("/etc/hookd");
        let word = |command: &str| first_word(command, dir);
        assert_eq!(
            word("/usr/bin/guard --x"),
            Some(PathBuf::from("/usr/bin/guard"))
        );
        assert_eq!(
            word("./guard.sh;x"),
            Some(PathBuf::from("/etc/hookd/./guard.sh"))
        );
        assert_eq!(
            word("\"$HOOKD_CONFIG_DIR/my guard.sh\" a"),
            Some(PathBuf::from("/etc/hookd/my guard.sh"))
        );
        assert_eq!(
            word("${HOOKD_CONFIG_DIR}/g.sh"),
            Some(PathBuf::from("/etc/hookd/g.sh"))
        );
        assert_eq!(word("echo /x"), None, "a program found on PATH");
        assert_eq!(word("$OTHER/g.sh"), None, "only the shell can tell");
        assert_eq!(word("X=1 /bin/g"), None);
        assert_eq!(word("   "), None);
    }

    #[test]
    fn argv_and_the_shell_are_programs_too() {
        let dir = Path::new("/etc/hookd");
        let shell = Program::Shell {
            shell: "/bin/sh".into(),
            command: "g.sh".into(),
        };
        assert_eq!(programs_of(&shell, dir), vec![PathBuf::from("/bin/sh")]);
        let argv = Program::Argv(vec!["bin/g".into(), "/x".into()]);
        assert_eq!(
            programs_of(&argv, dir),
            vec![PathBuf::from("/etc/hookd/bin/g")]
        );
        let worker = Program::Worker {
            argv: vec!["python3".into()],
            count: 1,
        };
        assert!(programs_of(&worker, dir).is_empty());
    }
}
