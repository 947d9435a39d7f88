//! `hookd setup AGENT`: hookd's relay hooks written into the agent's own settings file (docs/commands.md,
//! "setup"). The merge itself is pure ([`crate::agents::setup`]); here are the files: where each agent
//! reads its settings, the checks before touching one, the backup, the atomic write, the diff of
//! `--dry-run` and `--undo`.
//!
//! The backup, `FILE.hookd-backup`, is the file as it was before hookd setup first changed it: a later
//! setup keeps it as long as the file holds nothing new but hookd's hooks, so that `--undo` goes back to
//! the user's own file, not to an earlier hookd setup. An empty backup stands for a file that was not
//! there. `--undo` restores it only when the file holds nothing the user wrote since (else `--force`).
//!
//! The agent, or an editor, may save the file while setup merges it: just before the new file is
//! renamed over it, the file is read again (`changed_since`), and an edit found there is merged in turn
//! (a few times, then setup stops with nothing written), never written over. Once written, the file is
//! listed in the registry of setups ([`crate::agents::setups`]) and the daemon asked to reload.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::agents::setup::{
    Wanted, found_hooks, hooks_digest, merge, same_apart_from_hookd, warnings, without_hookd,
};
use crate::agents::setups;
use crate::agents::snippet::{self, RelayFlags};
use crate::agents::{Agent, SettingsFormat};
use crate::commands::cli::SetupArgs;
use crate::commands::files::{MAX_AGENT_FILE, Staged};
use crate::commands::managed;
use crate::commands::shared::{known_agent, relay_binary, this_binary};

/// The mode of a settings file setup creates: it may hold the user's keys (Codex's config.toml does).
const NEW_FILE_MODE: u32 = 0o600;

/// The most lines `--dry-run` compares line by line (the rest of a huge change is shown whole).
const DIFF_CELLS: usize = 4_000_000;

pub fn run(args: &SetupArgs) -> Result<ExitCode, String> {
    let agent = known_agent(&args.agent)?;
    let managed = if args.managed {
        Some(managed::managed_file(agent, args.managed_root.as_deref())?)
    } else {
        None
    };
    let file = match (&args.file, &managed) {
        (_, Some(managed)) => managed.file.clone(),
        (Some(file), None) => {
            std::path::absolute(file).map_err(|e| format!("{}: {e}", file.display()))?
        }
        (None, None) => default_file(agent)?,
    };
    if let Some(refusal) = crate::agents::setup::wrong_kind_of_file(agent, &file) {
        return Err(refusal);
    }
    if managed.is_some() {
        managed::check_folders(&file)?;
    }
    let hookd = this_binary()?;
    let flags = RelayFlags {
        socket: args.socket.clone(),
        fail_closed: args.fail_closed,
    };
    let relay = relay_binary()?;
    if managed.is_some() && !(args.remove || args.undo) {
        managed::check_program(Path::new(&relay))?;
        managed::check_program(Path::new(&hookd))?;
    }
    let command = snippet::relay_command(agent, &relay, &flags);
    let codex_file = match &managed {
        Some(managed) if agent.row().settings.format == SettingsFormat::CodexToml => {
            managed.name.clone()
        }
        Some(_) => String::new(),
        None => codex_file(agent, &file, args.file.is_some())?,
    };
    let wanted = Wanted {
        agent,
        command: &command,
        hookd: &hookd,
        codex_file: &codex_file,
    };
    let socket = args
        .socket
        .clone()
        .unwrap_or_else(crate::paths::default_socket);
    let edit = Edit {
        pins: managed.as_ref().map_or(&[][..], |m| m.place.pins),
        managed: managed.is_some(),
    };
    if args.remove {
        if remove(&file, &wanted, &edit, args)? && managed.is_none() {
            let file_text = registry_name(&file);
            if let Err(e) = setups::update(|r| {
                r.forget(agent.name(), &file_text);
            }) {
                eprintln!("warning: {e}: {} is still listed as set up", file.display());
            }
            ask_reload(&socket, None);
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.undo {
        if undo(&file, &wanted, &edit, args)? && managed.is_none() {
            let file_text = registry_name(&file);
            if let Err(e) = setups::update(|r| {
                r.forget(agent.name(), &file_text);
            }) {
                eprintln!("warning: {e}: {} is still listed as set up", file.display());
            }
            ask_reload(&socket, None);
        }
        return Ok(ExitCode::SUCCESS);
    }
    say_fail_closed_required(args)?;
    let done = setup(&file, &wanted, &edit, args)?;
    match (&done, &managed) {
        (Done::SetUp(text), None) => {
            register(&file, &wanted, args.fail_closed, text);
            ask_reload(&socket, Some((agent, args.fail_closed)));
            say_own_hooks(text, &file, agent);
        }
        // Root's file, for every user: no one user's registry or daemon is told of it.
        (Done::SetUp(text), Some(_)) => {
            for note in managed::notes(agent, text, &file.display().to_string()) {
                eprintln!("{note}");
            }
        }
        (Done::Nothing, _) => {}
    }
    let again = setup_again(args, &file, &flags);
    if let Some(warning) = build_folder_warning(agent, &relay, args.fail_closed, &again) {
        // Installing hookd is the fix, which brings the lite relay along: no hint about copying it in.
        eprintln!("{warning}");
    } else if !args.dry_run
        && let Some(hint) = lite_relay_hint(agent, &relay, &hookd, &again)
    {
        eprintln!("{hint}");
    }
    Ok(ExitCode::SUCCESS)
}

/// What setup says when hookd's managed layer sets `require_fail_closed` (hookd refuses every call from
/// a relay that is not fail-closed): a relay written without `--fail-closed` would have every call
/// refused, so setup refuses to write it; one with it is said to fit.
fn say_fail_closed_required(args: &SetupArgs) -> Result<(), String> {
    let file = match managed::requires_fail_closed(args.managed_root.as_deref()) {
        managed::FailClosed::No => return Ok(()),
        managed::FailClosed::By(file) => file,
        managed::FailClosed::Unknown(why) => {
            // A layer that does not load cannot be read for its policy: setup goes on, and says that
            // it could not tell (a relay with --fail-closed fits either way).
            if !args.fail_closed {
                eprintln!(
                    "warning: hookd's managed layer cannot be read ({why}): setup cannot tell whether it requires fail-closed relays (require_fail_closed), and the daemon keeps the layer's last good settings; if it does, hookd refuses every call from the relay this setup writes: run it with --fail-closed to be sure (`hookd check` says what is wrong with the layer)"
                );
            }
            return Ok(());
        }
    };
    let shown = file.display();
    if args.fail_closed {
        if !args.dry_run {
            eprintln!(
                "note: hookd's managed layer requires fail-closed relays (require_fail_closed in {shown}): this one is"
            );
        }
        return Ok(());
    }
    Err(format!(
        "hookd's managed layer requires fail-closed relays (require_fail_closed in {shown}): hookd would refuse every call from the relay this setup writes; run it again with --fail-closed"
    ))
}

/// What setup says of the agent's own hooks in the file it set up, which the agent runs beside hookd's
/// relay: those hookd's settings (the default file, as `hookd serve` reads it) hold too run twice, and
/// are warned of; others are pointed at `hookd import`, to move them into hookd. Never silent, never
/// changed: taking a user's hook out is the user's call.
fn say_own_hooks(text: &str, file: &Path, agent: Agent) {
    let shown = file.display().to_string();
    let config = crate::paths::default_config();
    let config_shown = config.display().to_string();
    let settings = crate::settings::Settings::load(&config).ok();
    let twice = settings
        .as_ref()
        .map(|settings| crate::agents::setup::runs_twice(text, &shown, agent, settings))
        .unwrap_or_default();
    if !twice.is_empty() {
        eprintln!(
            "warning: {}",
            crate::agents::setup::said_twice(&twice, agent, &shown, &config_shown)
        );
        return;
    }
    let own = crate::agents::import::convert(text, &shown, Some(agent))
        .map(|imported| imported.toml.matches("\n[[hooks.").count())
        .unwrap_or(0);
    if own > 0 {
        eprintln!(
            "hint: {shown} holds {own} hook{} of {}'s own, which {} runs beside hookd's relay; to have hookd run {} instead (one settings file for every agent, with its journal): hookd import {} >> {}, then take {} out of {shown}",
            if own == 1 { "" } else { "s" },
            agent.display_name(),
            agent.display_name(),
            if own == 1 { "it" } else { "them" },
            snippet::shell_quote(&shown),
            snippet::shell_quote(&config_shown),
            if own == 1 { "it" } else { "them" },
        );
    }
}

/// The cargo build folder `program` is in (`target/`, holding `CACHEDIR.TAG`, of which `program`'s folder
/// is a profile's, `target/release`, or a target's, `target/x86_64-unknown-linux-gnu/release`), when it
/// is in one.
fn build_folder(program: &Path) -> Option<PathBuf> {
    program.ancestors().skip(2).take(2).find_map(|folder| {
        let tag = std::fs::read_to_string(folder.join("CACHEDIR.TAG")).unwrap_or_default();
        let cargos = tag.starts_with("Signature: 8a477f597d28d172789f06886806bc55");
        (cargos || folder.file_name() == Some("target".as_ref())).then(|| folder.to_path_buf())
    })
}

/// What setup says when the relay it writes into the agent's settings is in a cargo build folder (as
/// after `cargo build` in a checkout, following the tour): `cargo clean`, or a build of another kind,
/// takes it away or changes it under the agent, and the agent's hooks then fail. Said with how to
/// install hookd from its source (the README's commands) and the setup to run again with the installed
/// hookd. `again` is that setup.
fn build_folder_warning(
    agent: Agent,
    relay: &str,
    fail_closed: bool,
    again: &str,
) -> Option<String> {
    let program = Path::new(relay);
    let target = build_folder(program)?;
    let then = if fail_closed {
        "every call refused"
    } else {
        "every call let through, unguarded"
    };
    let install = if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        "cargo install-static (or cargo install --path .) and cargo install --path lite"
    } else {
        "cargo install --path ."
    };
    let installed = cargo_install_root()
        .map(|root| root.join("bin/hookd").display().to_string())
        .unwrap_or_else(|| "hookd".to_string());
    let again = again.strip_prefix("hookd ").unwrap_or(again);
    Some(format!(
        "warning: the relay written into {}'s settings, {}, is in a cargo build folder ({}): cargo clean, or another build, takes it away or changes it, and {} then fails at every call ({then}). Install hookd instead, from its source: {install}; then run the installed hookd's setup: {} {again}",
        agent.display_name(),
        program.display(),
        target.display(),
        agent.display_name(),
        snippet::shell_quote(&installed),
    ))
}

/// The file as the registry names it: its absolute path, as text.
fn registry_name(file: &Path) -> String {
    file.to_string_lossy().into_owned()
}

/// The setup written into the registry of setups ([`setups`]): the file, the relay as written, and the
/// digest of hookd's hooks in `text` (the file as it now is). A registry that cannot be written is said,
/// not fatal: the agent's file is set up.
fn register(file: &Path, wanted: &Wanted, fail_closed: bool, text: &str) {
    let shown = file.display().to_string();
    let digest = match found_hooks(text, &shown, wanted) {
        Ok(hooks) => hooks_digest(&hooks),
        Err(e) => {
            eprintln!("warning: {e}");
            return;
        }
    };
    let setup = setups::Setup {
        agent: wanted.agent.name().to_string(),
        file: registry_name(file),
        relay: wanted.command.to_string(),
        fail_closed,
        hooks_sha256: digest,
        at: crate::time::now_rfc3339(),
    };
    if let Err(e) = setups::update(|r| r.record(setup)) {
        eprintln!(
            "warning: {e}: hookd doctor and the daemon's guard will not know of {shown} until it is written"
        );
    }
}

/// How long setup waits for the daemon's answer to its reload.
const RELOAD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Asks the daemon on `socket` to reload, so that it reads the registry again and its guard covers the
/// file just set up at once. Silent when it does; for a setup (`set_up`: the agent, and whether its relay
/// fails closed), a warning when no daemon answers, saying what the relay does meanwhile and how to
/// start one; after `--undo`, silent either way.
fn ask_reload(socket: &Path, set_up: Option<(Agent, bool)>) {
    use crate::commands::client::{self, ClientError};
    use crate::protocol::{Asking, ReloadResponse};
    let shown = socket.display();
    match client::request(socket, &Asking::Reload { id: 1 }, Some(RELOAD_TIMEOUT)) {
        Ok(response) => match response.read::<ReloadResponse>() {
            Ok(Ok(_)) => {}
            Ok(Err(refused)) if set_up.is_some() => eprintln!(
                "warning: hookd on {shown} did not reload ({}): it guards as before until its settings reload",
                refused.error.message
            ),
            Ok(Err(_)) => {}
            Err(e) => eprintln!("warning: hookd on {shown}: {e}"),
        },
        Err(_) if set_up.is_none() => {}
        Err(ClientError::NotRunning(_)) => {
            let (agent, fail_closed) = set_up.expect("a setup");
            let meanwhile = if fail_closed {
                "refuses every call"
            } else {
                "lets every call through, unguarded"
            };
            eprintln!(
                "warning: no hookd answers on {shown}: until one does, {}'s relay {meanwhile}; start it with systemctl --user enable --now hookd.socket (after hookd install), or hookd serve; hookd doctor checks the whole chain",
                agent.display_name()
            );
        }
        Err(e) => eprintln!("warning: hookd on {shown} did not answer: {e}"),
    }
}

/// What setup says when the relay it wrote is not `hookd-relay-lite` on a machine the lite relay runs
/// on: the agent starts the relay on every tool call, and there glibc's start-up alone is most of what a
/// call costs (BENCHMARKS.md, "The relay's start"). `cargo install --path .` does not install the lite
/// relay (a package of its own, `lite/`), so a user who installed hookd alone would never learn of it.
/// `again` is the setup to run once it is there.
fn lite_relay_hint(agent: Agent, relay: &str, hookd: &str, again: &str) -> Option<String> {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return None;
    }
    let program = Path::new(relay).file_name()?.to_str()?;
    if program == snippet::LITE_RELAY_PROGRAM {
        return None;
    }
    // `hookd relay` is written when hookd-relay is not beside hookd: the lite relay, which hands what it
    // does not carry to hookd-relay, is written only with it.
    let alone = relay == hookd;
    let started = if alone {
        format!("{program} relay")
    } else {
        program.to_string()
    };
    let missing = if alone {
        format!(
            "{} and {}",
            snippet::RELAY_PROGRAM,
            snippet::LITE_RELAY_PROGRAM
        )
    } else {
        snippet::LITE_RELAY_PROGRAM.to_string()
    };
    let folder = Path::new(hookd).parent()?;
    Some(format!(
        "hint: {} will start {started} on every tool call; {}, the relay with no libc, starts in a fraction of the time. Setup writes it when it and {} are in {}, beside hookd, yours and writable by no one else. To put {missing} there, from hookd's source: {}; then run {again} again",
        agent.display_name(),
        snippet::LITE_RELAY_PROGRAM,
        snippet::RELAY_PROGRAM,
        folder.display(),
        install_steps(folder, alone),
    ))
}

/// How to put the relays into `folder` from hookd's source (`with_relay`: hookd-relay too, which
/// `cargo install --path .` installs with hookd): `cargo install` into the root whose `bin` folder it is,
/// naming the root unless it is cargo's own; for any other folder (a checkout's `target/release`), a
/// build copied in.
fn install_steps(folder: &Path, with_relay: bool) -> String {
    let mut steps = Vec::new();
    match folder
        .parent()
        .filter(|_| folder.file_name() == Some("bin".as_ref()))
    {
        Some(root) => {
            let root_option = if cargo_install_root().is_some_and(|own| same_folder(root, &own)) {
                String::new()
            } else {
                format!(" --root {}", snippet::shell_quote(&root.to_string_lossy()))
            };
            if with_relay {
                steps.push(format!("cargo install --path .{root_option}"));
            }
            steps.push(format!("cargo install --path lite{root_option}"));
        }
        None => {
            let folder = snippet::shell_quote(&folder.to_string_lossy());
            if with_relay {
                steps.push(format!(
                    "cargo build --release && cp target/release/{} {folder}",
                    snippet::RELAY_PROGRAM
                ));
            }
            steps.push(format!(
                "cargo build --release --manifest-path lite/Cargo.toml && cp lite/target/release/{} {folder}",
                snippet::LITE_RELAY_PROGRAM
            ));
        }
    }
    steps.join(" and ")
}

/// Where `cargo install` puts programs without `--root`: `CARGO_INSTALL_ROOT`, else `CARGO_HOME`, else
/// `~/.cargo` (its `bin` folder).
fn cargo_install_root() -> Option<PathBuf> {
    let set = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    set("CARGO_INSTALL_ROOT")
        .or_else(|| set("CARGO_HOME"))
        .map(PathBuf::from)
        .or_else(|| set("HOME").map(|home| PathBuf::from(home).join(".cargo")))
}

/// Whether `a` and `b` are one folder, links resolved where they can be.
fn same_folder(a: &Path, b: &Path) -> bool {
    let resolved = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    resolved(a) == resolved(b)
}

/// The setup command line given, to run again: the same agent and file, and the relay's flags as they
/// were written into the relay's command, so that following the hint never rewrites the hooks without
/// them (a plain setup would turn a fail-closed relay fail-open, or point it at another socket).
fn setup_again(args: &SetupArgs, file: &Path, flags: &RelayFlags) -> String {
    let file = match args.file {
        Some(_) => format!(" --file {}", snippet::shell_quote(&file.to_string_lossy())),
        None => String::new(),
    };
    let managed = match (&args.managed, &args.managed_root) {
        (false, _) => String::new(),
        (true, None) => " --managed".to_string(),
        (true, Some(root)) => format!(
            " --managed --managed-root {}",
            snippet::shell_quote(&root.to_string_lossy())
        ),
    };
    format!(
        "hookd setup {}{file}{managed}{}",
        snippet::shell_quote(&args.agent),
        snippet::flag_words(flags)
    )
}

/// Every agent's user settings file, as setup writes it by default: what hookd's guard of itself keeps
/// (an agent rewriting its own hook settings takes the relay out).
pub(crate) fn agent_files() -> Vec<(String, PathBuf)> {
    Agent::ALL
        .iter()
        .filter_map(|agent| {
            Some((
                agent.row().display_name.to_string(),
                default_file(*agent).ok()?,
            ))
        })
        .collect()
}

/// Where `agent` reads its user settings, as the agent itself finds the file (its variables first).
pub(super) fn default_file(agent: Agent) -> Result<PathBuf, String> {
    match agent {
        // Named as Codex names it in its trust records, a path that must be UTF-8.
        Agent::Codex => Ok(PathBuf::from(snippet::codex_config_path()?)),
        _ => agent.row().settings.default_file.path(),
    }
}

/// The name Codex gives the file in its trust records: as `--print-settings codex` names its default,
/// and a file given by `--file` by its real folder (Codex resolves the folders it reads).
pub(super) fn codex_file(agent: Agent, file: &Path, given: bool) -> Result<String, String> {
    if agent.row().settings.format != SettingsFormat::CodexToml {
        return Ok(String::new());
    }
    let default = snippet::codex_config_path()?;
    if !given || file == Path::new(&default) {
        return Ok(default);
    }
    let named = match (file.parent().map(Path::canonicalize), file.file_name()) {
        (Some(Ok(dir)), Some(name)) => dir.join(name),
        _ => file.to_path_buf(),
    };
    named
        .to_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{}: not a UTF-8 path", named.display()))
}

/// The backup of `file`: beside it, so that it is found where the file is.
fn backup_of(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".hookd-backup");
    file.with_file_name(name)
}

/// A file as setup may edit it: its text and mode, `None` when there is none. Refused: a symbolic link
/// (writing would replace the link, or the file it points to, neither of which the user asked for),
/// anything but a regular file, a file of another user, one too large, one that is not UTF-8.
fn read(path: &Path) -> Result<Option<(String, u32)>, String> {
    Ok(seen(path)?.content)
}

/// How many times setup merges again a file that changed while it merged it, before it stops.
const MERGE_TRIES: usize = 8;

/// A file as setup read it: its text and mode, and what tells whether it changed since ([`Identity`]).
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    content: Option<(String, u32)>,
    identity: Option<Identity>,
}

impl Seen {
    fn text(&self) -> &str {
        self.content.as_ref().map_or("", |(text, _)| text.as_str())
    }
}

/// What the file system says of a file besides its bytes: which file it is (device, inode) and when it
/// was last written or changed (size, mtime, ctime, to the nanosecond). A file an editor saved by
/// renaming a new one over it is another inode; one rewritten in place has another mtime and ctime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Identity {
    fn of(meta: &std::fs::Metadata) -> Identity {
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

/// The file at `path` now, read through one handle whose identity is taken after the read, and checked
/// to be still the file at `path`: a file replaced while it was read is read again (a few times).
fn seen(path: &Path) -> Result<Seen, String> {
    use std::io::Read;
    let shown = path.display();
    for _ in 0..MERGE_TRIES {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Seen {
                    content: None,
                    identity: None,
                });
            }
            Err(e) => return Err(format!("cannot read {shown}: {e}")),
        };
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(path)
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            return Err(format!(
                "{shown} is a symbolic link (to {target}): hookd setup edits only a regular file; pass --file with the file it points to, if that is the one"
            ));
        }
        if !meta.is_file() {
            return Err(format!("{shown} is not a regular file"));
        }
        let me = nix::unistd::getuid().as_raw();
        if meta.uid() != me {
            return Err(format!(
                "{shown} belongs to uid {}, not to you (uid {me}): hookd setup edits only your own files",
                meta.uid()
            ));
        }
        if meta.len() > MAX_AGENT_FILE {
            return Err(format!(
                "{shown} is {} bytes, more than the {MAX_AGENT_FILE} hookd setup edits: not a settings file as agents write them; merge by hand",
                meta.len()
            ));
        }
        let cannot = |e: std::io::Error| format!("cannot read {shown}: {e}");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY | nix::libc::O_NOFOLLOW)
            .open(path)
            .map_err(cannot)?;
        let mut bytes = Vec::new();
        (&file)
            .take(MAX_AGENT_FILE + 1)
            .read_to_end(&mut bytes)
            .map_err(cannot)?;
        let read = Identity::of(&file.metadata().map_err(cannot)?);
        let now = std::fs::symlink_metadata(path)
            .ok()
            .map(|m| Identity::of(&m));
        if now != Some(read) || bytes.len() as u64 != read.size {
            // Replaced or written while it was read: read it again.
            continue;
        }
        let text = String::from_utf8(bytes).map_err(|_| format!("{shown} is not UTF-8 text"))?;
        return Ok(Seen {
            content: Some((text, meta.permissions().mode() & 0o7777)),
            identity: Some(read),
        });
    }
    Err(changing(path))
}

/// `None` when the file at `path` is still what was `seen` (the same file, unchanged, the same
/// bytes); else the file as it is now.
fn changed_since(path: &Path, before: &Seen) -> Result<Option<Seen>, String> {
    let now = seen(path)?;
    Ok((now != *before).then_some(now))
}

/// Why setup stopped with nothing written: the file kept changing while it merged it.
fn changing(path: &Path) -> String {
    format!(
        "{} kept changing while hookd setup merged it ({MERGE_TRIES} times): nothing written, so that no edit is lost; run hookd setup again once the agent or editor saving it is done",
        path.display()
    )
}

/// What setup writes beside the relay's hooks, and how: a managed file's pins
/// ([`crate::tables::agent::ManagedPlace::pins`]) and modes; nothing more for a user's file.
struct Edit<'a> {
    pins: &'a [(&'a [&'a str], bool)],
    managed: bool,
}

impl Edit<'_> {
    /// `text` with hookd's hooks merged in, and the pins set.
    fn merge(&self, text: &str, label: &str, wanted: &Wanted) -> Result<String, String> {
        let merged = merge(text, label, wanted)?;
        crate::agents::setup::pin(
            &merged,
            label,
            wanted.agent.row().settings.format,
            self.pins,
        )
    }

    /// Whether `a` and `b` are the same settings apart from what setup writes: hookd's hooks, and the
    /// pins (set in both before they are compared, so that undo does not take them for the user's edit).
    fn same_apart(&self, a: &str, b: &str, wanted: &Wanted) -> bool {
        let format = wanted.agent.row().settings.format;
        let pinned = |text: &str| {
            crate::agents::setup::pin(text, "", format, self.pins)
                .unwrap_or_else(|_| text.to_string())
        };
        same_apart_from_hookd(&pinned(a), &pinned(b), wanted)
    }

    /// The mode of a file setup creates: a managed one is read by every user's agent.
    fn new_file_mode(&self) -> u32 {
        if self.managed {
            managed::MANAGED_FILE_MODE
        } else {
            NEW_FILE_MODE
        }
    }

    /// The mode of a folder setup creates on the way to the file.
    fn new_folder_mode(&self) -> u32 {
        if self.managed {
            managed::MANAGED_FOLDER_MODE
        } else {
            0o700
        }
    }

    /// A managed file others may write is refused: it would not be managed.
    fn check(&self, file: &Path, seen: &Seen) -> Result<(), String> {
        match &seen.content {
            Some((_, mode)) if self.managed => managed::check_mode(file, *mode),
            _ => Ok(()),
        }
    }
}

/// What setup did to the file, for the registry.
enum Done {
    /// The file holds hookd's hooks (written now, or already there): its text.
    SetUp(String),
    /// Nothing was written (`--dry-run`).
    Nothing,
}

fn setup(file: &Path, wanted: &Wanted, edit: &Edit, args: &SetupArgs) -> Result<Done, String> {
    let shown = file.display().to_string();
    let agent = wanted.agent;
    let mut current = seen(file)?;
    edit.check(file, &current)?;
    // The file is read, merged and written; just before the new file is renamed over it, it is read
    // again: an edit saved meanwhile (the agent, an editor) is merged in turn, never written over.
    for _ in 0..MERGE_TRIES {
        let before = current.text();
        let existed = current.content.is_some();
        let merged = edit.merge(before, &shown, wanted)?;
        if existed && merged == before {
            warn(&merged, &shown, wanted);
            println!(
                "{shown}: already set up for {} (nothing changed)",
                agent.display_name()
            );
            return Ok(Done::SetUp(merged));
        }
        if args.dry_run {
            warn(&merged, &shown, wanted);
            print!("{}", unified_diff(before, &merged, &shown, existed));
            eprintln!("dry run: nothing written");
            return Ok(Done::Nothing);
        }
        let dir = file.parent().ok_or_else(|| format!("{shown}: no folder"))?;
        if !dir.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(edit.new_folder_mode())
                .create(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let backup = backup_of(file);
        // The backup already there is kept while it is the user's file apart from hookd's hooks.
        let kept = match read(&backup) {
            Ok(Some((old, _))) => edit.same_apart(&old, before, wanted),
            Ok(None) => false,
            Err(e) => return Err(format!("{e} (the backup of {shown})")),
        };
        // A file that holds hookd hooks already (an earlier setup of another hookd, or one the backup
        // could not be kept for) is backed up without them: --undo must not put hookd's hooks back.
        let stripped = if kept {
            None
        } else {
            without_hookd(before, &shown, wanted)?
        };
        let mode = current
            .content
            .as_ref()
            .map_or(edit.new_file_mode(), |(_, mode)| *mode);
        let staged_backup = if kept {
            None
        } else {
            Some(Staged::new(
                &backup,
                stripped.as_deref().unwrap_or(before),
                mode,
            )?)
        };
        let staged = Staged::new(file, &merged, mode)?;
        if let Some(now) = changed_since(file, &current)? {
            // Saved by someone else while this merged: merge again from what is there now. The staged
            // files are removed as they are dropped.
            current = now;
            continue;
        }
        if let Some(staged_backup) = staged_backup {
            staged_backup.commit()?;
        }
        staged.commit()?;
        warn(&merged, &shown, wanted);
        said_written(file, agent, existed, kept, stripped.is_some(), edit.managed);
        return Ok(Done::SetUp(merged));
    }
    Err(changing(file))
}

/// The warnings of the merged file, on stderr.
fn warn(merged: &str, shown: &str, wanted: &Wanted) {
    for warning in warnings(merged, wanted) {
        eprintln!("warning: {shown}: {warning}");
    }
}

/// What setup says once it wrote the file and its backup.
fn said_written(
    file: &Path,
    agent: Agent,
    existed: bool,
    kept: bool,
    stripped: bool,
    managed: bool,
) {
    let shown = file.display();
    let moments = agent.moments().len();
    let trust = if managed {
        // Seen on the pinned agents: a managed file's hooks run untrusted (Codex), and are not the
        // user's to switch off.
        ", in its managed settings".to_string()
    } else if agent.row().settings.format == SettingsFormat::CodexToml {
        ", with a trust record each (Codex runs only the hooks it trusts)".to_string()
    } else {
        String::new()
    };
    println!(
        "{} {shown}: hookd relay on {moments} events of {}{trust}",
        if existed { "wrote" } else { "created" },
        agent.display_name()
    );
    let then = if stripped {
        "the file as it was, with the hookd hooks it held taken out"
    } else if existed {
        "the file as it was before hookd setup"
    } else {
        "empty: there was no file before hookd setup"
    };
    println!(
        "backup: {} ({then}{}); hookd setup {} --undo restores it, --remove takes out only hookd's hooks",
        backup_of(file).display(),
        if kept {
            ", kept from the first setup"
        } else {
            ""
        },
        agent.name()
    );
}

fn undo(file: &Path, wanted: &Wanted, edit: &Edit, args: &SetupArgs) -> Result<bool, String> {
    let shown = file.display().to_string();
    let backup = backup_of(file);
    let backup_shown = backup.display().to_string();
    let Some((old, mode)) = read(&backup)? else {
        return Err(format!(
            "no backup to restore: {backup_shown} does not exist (hookd setup {} has not changed {shown}, or --undo restored it already)",
            wanted.agent.name()
        ));
    };
    let remove = old.is_empty();
    let mut current = seen(file)?;
    let agent = wanted.agent.name();
    for _ in 0..MERGE_TRIES {
        let now = current.text();
        let changed = !edit.same_apart(now, &old, wanted);
        if args.dry_run {
            // Shown even when the undo would be refused: the diff is how to see what it would lose.
            print!(
                "{}",
                unified_diff(now, &old, &shown, current.content.is_some())
            );
            if changed && !args.force {
                eprintln!(
                    "dry run: nothing written; --undo would refuse: {shown} was changed since hookd setup wrote it (the lines - above that are not hookd's), which restoring the backup loses; hookd setup {agent} --remove takes out only hookd's hooks and keeps them"
                );
            } else {
                eprintln!("dry run: nothing written");
            }
            return Ok(false);
        }
        if !args.force && changed {
            return Err(format!(
                "{shown} was changed since hookd setup wrote it (not only hookd's hooks): --undo would lose those changes; hookd setup {agent} --remove takes out only what setup wrote and keeps them (--remove --dry-run shows the diff); --undo --dry-run shows what the undo would change, and --undo --force restores the backup anyway"
            ));
        }
        let staged = if remove {
            None
        } else {
            Some(Staged::new(file, &old, mode)?)
        };
        // As in setup: an edit saved while this ran is looked at again, not written over.
        if let Some(changed) = changed_since(file, &current)? {
            current = changed;
            continue;
        }
        match staged {
            Some(staged) => staged.commit()?,
            None if current.content.is_some() => {
                std::fs::remove_file(file).map_err(|e| format!("cannot remove {shown}: {e}"))?
            }
            None => {}
        }
        std::fs::remove_file(&backup).map_err(|e| format!("cannot remove {backup_shown}: {e}"))?;
        if remove {
            println!("removed {shown}, which hookd setup had created; removed {backup_shown}");
        } else {
            println!(
                "restored {shown} from {backup_shown} (as it was before hookd setup); removed {backup_shown}"
            );
        }
        return Ok(true);
    }
    Err(changing(file))
}

/// `hookd setup AGENT --remove`: exactly what setup wrote taken out of the file
/// ([`crate::agents::setup::remove`]), everything else kept, and the backup removed (nothing of
/// hookd's is left to undo); whether the file was changed. A file setup created that holds nothing
/// else is removed, as `--undo` would. The file is looked at again before the write, as setup does.
fn remove(file: &Path, wanted: &Wanted, edit: &Edit, args: &SetupArgs) -> Result<bool, String> {
    let shown = file.display().to_string();
    let backup = backup_of(file);
    let created = matches!(read(&backup)?, Some((old, _)) if old.is_empty());
    let mut current = seen(file)?;
    for _ in 0..MERGE_TRIES {
        let now = current.text();
        let Some(stripped) = crate::agents::setup::remove(now, &shown, wanted)? else {
            println!(
                "{shown}: no hooks of hookd's to remove ({} is not set up there)",
                wanted.agent.display_name()
            );
            return Ok(false);
        };
        // Nothing but what setup wrote into a file it created: the file goes, as with --undo.
        // A hooks file of Copilot's own that setup created says its `version`, setup's too.
        let version_alone = wanted.agent.row().settings.format == SettingsFormat::CopilotJson
            && serde_json::from_str::<serde_json::Value>(&stripped)
                .ok()
                .and_then(|v| v.as_object().map(|o| o.keys().all(|k| k == "version")))
                == Some(true);
        let gone = created && (version_alone || edit.same_apart(&stripped, "", wanted));
        if args.dry_run {
            let after = if gone { "" } else { stripped.as_str() };
            print!("{}", unified_diff(now, after, &shown, true));
            eprintln!("dry run: nothing written");
            return Ok(false);
        }
        let mode = current
            .content
            .as_ref()
            .map_or(edit.new_file_mode(), |(_, m)| *m);
        let staged = if gone {
            None
        } else {
            Some(Staged::new(file, &stripped, mode)?)
        };
        if let Some(changed) = changed_since(file, &current)? {
            current = changed;
            continue;
        }
        match staged {
            Some(staged) => staged.commit()?,
            None => {
                std::fs::remove_file(file).map_err(|e| format!("cannot remove {shown}: {e}"))?
            }
        }
        let backup_note = match std::fs::remove_file(&backup) {
            Ok(()) => format!("; removed {}", backup.display()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => format!("; could not remove {}: {e}", backup.display()),
        };
        let trust = if wanted.agent.row().settings.format == SettingsFormat::CodexToml {
            " and their trust records"
        } else {
            ""
        };
        if gone {
            println!(
                "removed {shown}, which hookd setup had created and holds nothing else{backup_note}"
            );
        } else {
            println!(
                "removed hookd's relay hooks{trust} from {shown}, everything else kept{backup_note}"
            );
        }
        return Ok(true);
    }
    Err(changing(file))
}

/// `old` to `new` as a unified diff (`diff -u`, three lines of context), `label` naming the file.
fn unified_diff(old: &str, new: &str, label: &str, existed: bool) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = diff_lines(&a, &b);
    let mut out = format!(
        "--- {}\n+++ {}\n",
        if existed { label } else { "/dev/null" },
        if b.is_empty() { "/dev/null" } else { label }
    );
    const CONTEXT: usize = 3;
    // Indices of the ops that change something; hunks gather the ones within 2 * CONTEXT of each other.
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, op)| !matches!(op, Op::Same(..)))
        .map(|(i, _)| i)
        .collect();
    let mut i = 0;
    while i < changed.len() {
        let start = changed[i].saturating_sub(CONTEXT);
        let mut end = changed[i];
        while i + 1 < changed.len() && changed[i + 1] - end <= 2 * CONTEXT {
            i += 1;
            end = changed[i];
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        let (mut a_start, mut b_start) = (None, None);
        let (mut a_len, mut b_len) = (0, 0);
        let mut body = String::new();
        for op in &ops[start..end] {
            match *op {
                Op::Same(x, y) => {
                    a_start.get_or_insert(x);
                    b_start.get_or_insert(y);
                    a_len += 1;
                    b_len += 1;
                    body.push_str(&format!(" {}\n", a[x]));
                }
                Op::Del(x, y) => {
                    a_start.get_or_insert(x);
                    b_start.get_or_insert(y);
                    a_len += 1;
                    body.push_str(&format!("-{}\n", a[x]));
                }
                Op::Add(x, y) => {
                    a_start.get_or_insert(x);
                    b_start.get_or_insert(y);
                    b_len += 1;
                    body.push_str(&format!("+{}\n", b[y]));
                }
            }
        }
        // diff -u numbers a range from 1, and an empty range by the line before it.
        let range = |start: Option<usize>, len: usize| {
            let start = start.unwrap_or(0);
            if len == 0 {
                format!("{start},0")
            } else if len == 1 {
                format!("{}", start + 1)
            } else {
                format!("{},{len}", start + 1)
            }
        };
        out.push_str(&format!(
            "@@ -{} +{} @@\n{body}",
            range(a_start, a_len),
            range(b_start, b_len)
        ));
        i += 1;
    }
    out
}

/// One line of a diff: kept (at its index in both), taken out of the old (index in old, and in new where
/// it was), put into the new.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Same(usize, usize),
    Del(usize, usize),
    Add(usize, usize),
}

/// The lines of `a` and `b` matched by a longest common subsequence, after the common head and tail are
/// set aside (a merge changes a few places of a file); a middle too large to compare line by line is
/// shown taken out whole and put back whole.
fn diff_lines(a: &[&str], b: &[&str]) -> Vec<Op> {
    let head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let mut ops: Vec<Op> = (0..head).map(|i| Op::Same(i, i)).collect();
    if am.len().saturating_mul(bm.len()) > DIFF_CELLS {
        ops.extend((0..am.len()).map(|i| Op::Del(head + i, head)));
        ops.extend((0..bm.len()).map(|j| Op::Add(head + am.len(), head + j)));
    } else {
        // lcs[i][j]: the longest common subsequence of am[i..] and bm[j..].
        let w = bm.len() + 1;
        let mut lcs = vec![0u32; (am.len() + 1) * w];
        for i in (0..am.len()).rev() {
            for j in (0..bm.len()).rev() {
                lcs[i * w + j] = if am[i] == bm[j] {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < am.len() || j < bm.len() {
            if i < am.len() && j < bm.len() && am[i] == bm[j] {
                ops.push(Op::Same(head + i, head + j));
                i += 1;
                j += 1;
            } else if i < am.len() && (j == bm.len() || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1])
            {
                ops.push(Op::Del(head + i, head + j));
                i += 1;
            } else {
                ops.push(Op::Add(head + i, head + j));
                j += 1;
            }
        }
    }
    let (ae, be) = (a.len() - tail, b.len() - tail);
    ops.extend((0..tail).map(|k| Op::Same(ae + k, be + k)));
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What tells setup the file changed since it read it: another file renamed over it (even with the
    /// same bytes), a rewrite in place (even of the same size), a file taken away or put there.
    #[test]
    fn a_change_since_the_read_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        std::fs::write(&file, "{\"a\": 1}\n").unwrap();
        let before = seen(&file).unwrap();
        assert_eq!(before.text(), "{\"a\": 1}\n");
        assert_eq!(changed_since(&file, &before).unwrap(), None);

        let other = dir.path().join("new");
        std::fs::write(&other, "{\"a\": 1}\n").unwrap();
        std::fs::rename(&other, &file).unwrap();
        assert!(changed_since(&file, &before).unwrap().is_some());

        let before = seen(&file).unwrap();
        std::fs::write(&file, "{\"a\": 2}\n").unwrap();
        let now = changed_since(&file, &before).unwrap().unwrap();
        assert_eq!(now.text(), "{\"a\": 2}\n");

        std::fs::remove_file(&file).unwrap();
        let gone = changed_since(&file, &now).unwrap().unwrap();
        assert_eq!(gone.content, None);
        std::fs::write(&file, "").unwrap();
        assert!(changed_since(&file, &gone).unwrap().is_some());
    }

    /// A relay in a cargo build folder (a profile's, or a target's) is told; one installed is not.
    #[test]
    fn a_relay_in_a_build_folder_is_told() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("checkout/target");
        for folder in ["release", "x86_64-unknown-linux-gnu/release"] {
            std::fs::create_dir_all(target.join(folder)).unwrap();
        }
        // A target folder of another name, as CARGO_TARGET_DIR makes, is told by cargo's tag.
        let elsewhere = dir.path().join("build-cache");
        std::fs::create_dir_all(elsewhere.join("debug")).unwrap();
        std::fs::write(
            elsewhere.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by cargo.\n",
        )
        .unwrap();
        assert_eq!(
            build_folder(&target.join("release/hookd-relay")),
            Some(target.clone())
        );
        assert_eq!(
            build_folder(&target.join("x86_64-unknown-linux-gnu/release/hookd-relay")),
            Some(target.clone())
        );
        assert_eq!(
            build_folder(&elsewhere.join("debug/hookd")),
            Some(elsewhere.clone())
        );
        assert_eq!(
            build_folder(Path::new("/home/me/.cargo/bin/hookd-relay")),
            None
        );
        assert_eq!(build_folder(&dir.path().join("bin/hookd-relay")), None);
        let relay = target.join("release/hookd-relay");
        let said = build_folder_warning(
            Agent::ClaudeCode,
            relay.to_str().unwrap(),
            false,
            "hookd setup claude-code --fail-closed",
        )
        .unwrap();
        assert!(
            said.starts_with(&format!(
                "warning: the relay written into Claude Code's settings, {}, is in a cargo build folder ({}): cargo clean",
                relay.display(),
                target.display()
            )),
            "{said}"
        );
        assert!(
            said.contains("(every call let through, unguarded)"),
            "{said}"
        );
        assert!(said.contains("cargo install"), "{said}");
        assert!(
            said.ends_with("/bin/hookd setup claude-code --fail-closed"),
            "{said}"
        );
    }

    #[test]
    fn the_diff_is_diff_u() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\nk\n";
        assert_eq!(
            unified_diff(old, new, "f.txt", true),
            "--- f.txt\n+++ f.txt\n@@ -2,9 +2,10 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n i\n j\n+k\n"
        );
        assert_eq!(
            unified_diff("", "x\ny\n", "new.json", false),
            "--- /dev/null\n+++ new.json\n@@ -0,0 +1,2 @@\n+x\n+y\n"
        );
        let far = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n";
        let diff = unified_diff(
            far,
            &far.replace("2\n", "two\n").replace("11\n", "eleven\n"),
            "f",
            true,
        );
        assert_eq!(diff.matches("@@ -").count(), 2, "{diff}");
        assert_eq!(
            unified_diff("same\n", "same\n", "f", true),
            "--- f\n+++ f\n"
        );
    }

    #[test]
    fn a_huge_change_is_shown_whole_not_compared_line_by_line() {
        let old: String = (0..3000).map(|i| format!("old {i}\n")).collect();
        let new: String = (0..3000).map(|i| format!("new {i}\n")).collect();
        let diff = unified_diff(&old, &new, "f", true);
        assert_eq!(
            diff.lines()
                .filter(|l| l.starts_with('-') && !l.starts_with("---"))
                .count(),
            3000
        );
        assert_eq!(
            diff.lines()
                .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
                .count(),
            3000
        );
    }
}
