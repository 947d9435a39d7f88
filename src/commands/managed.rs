//! `hookd setup AGENT --managed`: the agent's managed (system) settings as setup writes them: where
//! each agent reads them, who may write them, the folders on the way, what setup says of what the user
//! can still do there, and whether hookd's own managed layer wants fail-closed relays (docs/agents.md,
//! "Managed setups").
//!
//! A managed file is root's: the user, and so the agent running as the user, must not be able to change
//! it, nor any folder above it (who can write a folder can rename another file over the one in it).
//! It must be readable by everyone, since every user's agent reads it. `--managed-root DIR` stands DIR
//! for `/`, for tests and unusual installs: the file is then written below DIR, and named in what setup
//! writes (Codex's trust records) as the agent will see it.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use crate::agents::Agent;
use crate::tables::agent::ManagedPlace;

/// The mode of a managed file setup creates: every user's agent reads it, only root writes it.
pub(super) const MANAGED_FILE_MODE: u32 = 0o644;

/// The mode of a folder setup creates on the way to a managed file.
pub(super) const MANAGED_FOLDER_MODE: u32 = 0o755;

/// Where hookd's own managed layer is (`/etc/hookd`), below the root `--managed-root` names.
const HOOKD_MANAGED: &str = "etc/hookd";

/// The agent's managed file, as setup writes it.
#[derive(Debug, Clone)]
pub(super) struct ManagedFile {
    /// Where setup writes it.
    pub file: PathBuf,
    /// The file as the agent names it (without `--managed-root`): what Codex's trust records name.
    pub name: String,
    pub place: ManagedPlace,
}

/// The managed file of `agent`: below `root` when given; else where the agent reads it (its variable
/// first, as the agent reads it), which only root may write: anyone else is refused, with how to go on.
/// An agent with no managed place is refused, saying so.
pub(super) fn managed_file(agent: Agent, root: Option<&Path>) -> Result<ManagedFile, String> {
    let who = agent.display_name();
    let place = agent.row().settings.managed.ok_or_else(|| {
        format!(
            "{who} has no managed settings: no file of an administrator's whose hooks the user's own settings cannot take out; hookd setup {} writes the user's settings (docs/agents.md, \"Managed setups\")",
            agent.name()
        )
    })?;
    if let Some(root) = root {
        let root = std::path::absolute(root).map_err(|e| format!("{}: {e}", root.display()))?;
        let file = root.join(place.file.trim_start_matches('/'));
        return Ok(ManagedFile {
            file,
            name: place.file.to_string(),
            place,
        });
    }
    let moved = (!place.var.is_empty())
        .then(|| std::env::var_os(place.var))
        .flatten()
        .filter(|value| !value.is_empty());
    let file = match moved {
        Some(path) => std::path::absolute(PathBuf::from(&path))
            .map_err(|e| format!("{} {}: {e}", place.var, Path::new(&path).display()))?,
        None => PathBuf::from(place.file),
    };
    if !nix::unistd::geteuid().is_root() {
        return Err(format!(
            "hookd setup {} --managed writes {who}'s managed settings, {}, which root alone may write (so that no user, nor an agent running as one, can take the relay out): run it as root (sudo hookd setup {} --managed), or give --managed-root DIR to write below DIR instead, for tests and unusual installs",
            agent.name(),
            file.display(),
            agent.name()
        ));
    }
    let name = file
        .to_str()
        .ok_or_else(|| format!("{}: not a UTF-8 path", file.display()))?
        .to_string();
    Ok(ManagedFile { file, name, place })
}

/// Checks every folder on the way to `file` that exists: a real folder (no symbolic link, which whoever
/// can write the link's folder could point elsewhere), root's or this user's, writable by nobody else
/// (a sticky folder of root's, `/tmp`, aside: there only a name's owner can move it).
pub(super) fn check_folders(file: &Path) -> Result<(), String> {
    let me = nix::unistd::getuid().as_raw();
    let mut folder = PathBuf::from("/");
    let parent = file.parent().unwrap_or(Path::new("/"));
    let mut names = parent.components().filter_map(|c| match c {
        Component::Normal(name) => Some(name.to_os_string()),
        _ => None,
    });
    loop {
        let meta = match std::fs::symlink_metadata(&folder) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(format!("cannot look at {}: {e}", folder.display())),
        };
        let shown = folder.display();
        if meta.file_type().is_symlink() {
            return Err(format!(
                "{shown}, a folder on the way to {}, is a symbolic link: hookd setup --managed writes only through real folders, so that the file is where the agent reads it and nobody but root can move it; give the folder it points to with --managed-root, or make it a folder",
                file.display()
            ));
        }
        if !meta.is_dir() {
            return Err(format!("{shown} is not a folder"));
        }
        if meta.uid() != me && meta.uid() != 0 {
            return Err(format!(
                "{shown}, a folder on the way to {}, belongs to uid {}: whoever owns it can replace the managed file; it must be root's",
                file.display(),
                meta.uid()
            ));
        }
        let mode = meta.permissions().mode();
        let sticky_roots = mode & 0o1000 != 0 && meta.uid() == 0;
        if mode & 0o022 != 0 && !sticky_roots {
            return Err(format!(
                "{shown}, a folder on the way to {}, is writable by group or others (mode {:04o}): anyone who can write it can replace the managed file (fix: chmod go-w {shown})",
                file.display(),
                mode & 0o7777
            ));
        }
        match names.next() {
            Some(name) => folder.push(name),
            None => return Ok(()),
        }
    }
}

/// Checks a program a managed file runs (the relay, and the hookd it hands over to): the file it is,
/// its links followed, root's (or this user's) and writable by nobody else, in folders that are too. A
/// relay a user could replace would take the managed relay out as surely as editing the file: root's
/// setup run from a user's `~/.cargo/bin` is refused, with what to do instead.
pub(super) fn check_program(program: &Path) -> Result<(), String> {
    let me = nix::unistd::getuid().as_raw();
    let shown = program.display();
    let real =
        std::fs::canonicalize(program).map_err(|e| format!("cannot resolve {shown}: {e}"))?;
    let install = "install hookd where only root can write (as root: cargo install --root /usr/local --path ., and cargo install --root /usr/local --path lite), then run that hookd's setup --managed";
    let refused = |why: String| {
        format!("{why}: a managed relay must be beyond every user's reach; {install}")
    };
    check_folders(program).map_err(&refused)?;
    check_folders(&real).map_err(&refused)?;
    let meta =
        std::fs::metadata(&real).map_err(|e| format!("cannot look at {}: {e}", real.display()))?;
    if meta.uid() != me && meta.uid() != 0 {
        return Err(refused(format!(
            "{shown} ({}) belongs to uid {}, who could replace what every user's agent runs",
            real.display(),
            meta.uid()
        )));
    }
    if meta.permissions().mode() & 0o022 != 0 {
        return Err(refused(format!(
            "{shown} ({}) is writable by group or others",
            real.display()
        )));
    }
    Ok(())
}

/// Refuses a managed file that others may write (`mode`, its permission bits): it would not be managed.
pub(super) fn check_mode(file: &Path, mode: u32) -> Result<(), String> {
    if mode & 0o022 != 0 {
        return Err(format!(
            "{} is writable by group or others (mode {:04o}): a managed file must be root's alone, or any user can take the relay out (fix: chmod go-w {})",
            file.display(),
            mode & 0o7777,
            file.display()
        ));
    }
    Ok(())
}

/// Whether hookd's own managed layer (`/etc/hookd`, below `root` when given) sets
/// `require_fail_closed = true`, read by the layer's own reader (`layers::managed::read`: the same
/// files, in the same order, with the same checks as the daemon's): hookd then refuses every call from
/// a relay that is not fail-closed.
pub(crate) enum FailClosed {
    /// It does not (or there is no managed layer).
    No,
    /// It does, in this file.
    By(PathBuf),
    /// The layer cannot be read (why): setup cannot tell, and the daemon keeps the layer's last good
    /// settings (or, starting, refuses to start). Said, never guessed either way.
    Unknown(String),
}

pub(crate) fn requires_fail_closed(root: Option<&Path>) -> FailClosed {
    let dir = match root {
        Some(root) => root.join(HOOKD_MANAGED),
        None => PathBuf::from("/").join(HOOKD_MANAGED),
    };
    match crate::layers::managed::read(&dir) {
        Ok(read) => read
            .policies
            .into_iter()
            .find(|(_, policy)| policy.require_fail_closed)
            .map_or(FailClosed::No, |(file, _)| FailClosed::By(file)),
        Err(errors) => FailClosed::Unknown(
            errors
                .0
                .first()
                .map_or_else(|| "invalid".to_string(), ToString::to_string),
        ),
    }
}

/// What setup says of a managed file it wrote (`text`) for `agent`: what the user can still do there.
pub(super) fn notes(agent: Agent, text: &str, shown: &str) -> Vec<String> {
    let mut notes = Vec::new();
    match agent {
        Agent::ClaudeCode => {
            let only = serde_json::from_str::<serde_json::Value>(text)
                .ok()
                .and_then(|v| v.get("allowManagedHooksOnly")?.as_bool())
                == Some(true);
            if !only {
                notes.push(format!(
                    "note: the users' own hooks (their settings, projects', plugins they installed) still run beside the relay; \"allowManagedHooksOnly\": true in {shown} runs only the managed hooks (and those of plugins the managed settings enable), which suits a team whose every hook is in hookd"
                ));
            }
        }
        Agent::GeminiCli => notes.push(format!(
            "note: Gemini CLI still lets a user's own settings switch one hook off by its name or command (hooksConfig.disabled is joined across the files, never overridden): {shown} cannot stop that; hookd's guard of itself keeps an agent from writing it there, not the user"
        )),
        Agent::QwenCode => notes.push(
            "note: Qwen Code started with --safe-mode or --bare (or QWEN_CODE_SAFE_MODE) runs no hooks, the managed ones included".to_string(),
        ),
        _ => {}
    }
    notes
}
