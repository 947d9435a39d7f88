//! The guarded paths, and how a path named in a call is told to be one of them: made absolute against
//! the call's folder, `.` and `..` taken out, and its links followed (as far as it exists), so that
//! `~/x/../.config/hookd`, a relative path and a link to the settings all name the same file.

use std::path::{Component, Path, PathBuf};

use crate::settings::Settings;

use super::Places;

/// One guarded path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guarded {
    /// As named (made absolute), and with its links followed when that differs.
    pub path: PathBuf,
    pub real: Option<PathBuf>,
    /// A folder: everything below it is guarded too.
    pub folder: bool,
    /// What it is, in a refusal ("hookd's settings file").
    pub what: String,
    /// The texts a command may name it by: the absolute path, the real one, and `~/...` and
    /// `$HOME/...` forms under the home folder.
    pub(super) names: Vec<String>,
}

impl Guarded {
    fn new(path: PathBuf, folder: bool, what: impl Into<String>, home: &Path) -> Guarded {
        let path = lexical(&path);
        let real = real(&path).filter(|real| *real != path);
        let mut names = Vec::new();
        for form in std::iter::once(&path).chain(real.as_ref()) {
            if let Some(text) = form.to_str() {
                names.push(text.to_string());
            }
            if let Ok(rest) = form.strip_prefix(home)
                && !rest.as_os_str().is_empty()
                && let Some(rest) = rest.to_str()
            {
                for prefix in ["~/", "$HOME/", "${HOME}/"] {
                    names.push(format!("{prefix}{rest}"));
                }
            }
        }
        names.dedup();
        Guarded {
            path,
            real,
            folder,
            what: what.into(),
            names,
        }
    }

    /// Whether `path` (absolute, lexical) is this one or, for a folder, below it.
    pub fn covers(&self, path: &Path) -> bool {
        let within = |guarded: &Path| path == guarded || (self.folder && path.starts_with(guarded));
        within(&self.path) || self.real.as_deref().is_some_and(within)
    }

    /// Whether `path` is a folder above this one (deleting or moving it takes this one along).
    pub fn is_below(&self, path: &Path) -> bool {
        let above = |guarded: &Path| guarded != path && guarded.starts_with(path);
        above(&self.path) || self.real.as_deref().is_some_and(above)
    }
}

/// Every guarded path for `settings` at `places` (docs/security.md, "What is guarded").
pub(super) fn guarded(settings: &Settings, places: &Places) -> Vec<Guarded> {
    let home = places.home.as_path();
    let mut out = Vec::new();
    let mut add = |path: PathBuf, folder: bool, what: &str| {
        if path.as_os_str().is_empty() || path == Path::new("/") {
            return;
        }
        let guarded = Guarded::new(path, folder, what, home);
        if !out.iter().any(|g: &Guarded| g.path == guarded.path) {
            out.push(guarded);
        }
    };
    add(settings.path.clone(), false, "hookd's settings file");
    add(
        settings.dir.clone(),
        true,
        "the folder of hookd's settings and the scripts beside them",
    );
    for program in settings.program_files() {
        if !is_system_program(&program) {
            add(program, false, "a program one of hookd's hooks runs");
        }
    }
    for path in &settings.protect.paths {
        add(path.clone(), true, "a path hookd's [protect] paths guards");
    }
    if let Some(dir) = &places.state_dir {
        add(dir.clone(), true, "hookd's state (its journal and spool)");
    }
    if let Some(socket) = &places.socket {
        // The socket's folder whole only where it is hookd's own (`$XDG_RUNTIME_DIR/hookd`,
        // `/tmp/hookd-UID`): a socket put in a folder of the user's (`--socket ./hookd.sock`) guards
        // only itself, not the work beside it.
        if let Some(dir) = socket.parent()
            && dir
                .file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("hookd"))
        {
            add(dir.to_path_buf(), true, "hookd's runtime folder");
        }
        add(socket.clone(), false, "hookd's socket");
    }
    if let Some(units) = &places.units_dir {
        for unit in ["hookd.service", "hookd.socket"] {
            add(units.join(unit), false, "hookd's systemd unit");
            add(
                units.join(format!("{unit}.d")),
                true,
                "hookd's systemd unit's drop-ins",
            );
            for wants in ["default.target.wants", "sockets.target.wants"] {
                add(
                    units.join(wants).join(unit),
                    false,
                    "the link that starts hookd's systemd unit",
                );
            }
        }
    }
    for (agent, file) in &places.agent_files {
        add(
            file.clone(),
            false,
            &format!("{agent}'s settings, which hold hookd's relay"),
        );
        let mut backup = file.as_os_str().to_os_string();
        backup.push(".hookd-backup");
        add(
            PathBuf::from(backup),
            false,
            &format!("the backup hookd setup keeps of {agent}'s settings"),
        );
    }
    for file in &places.set_up_files {
        add(
            file.clone(),
            false,
            "an agent's settings that hookd setup wrote the relay into",
        );
    }
    for program in &places.programs {
        add(
            program.clone(),
            false,
            "a hookd program (the daemon or a relay)",
        );
    }
    out
}

/// A program of the system's own (`/usr/bin/python3`), not one the user keeps beside the settings:
/// guarding it would refuse a package upgrade for nothing the agent could not do by other means.
fn is_system_program(path: &Path) -> bool {
    [
        "/usr/",
        "/bin/",
        "/sbin/",
        "/lib/",
        "/lib64/",
        "/opt/",
        "/nix/store/",
    ]
    .iter()
    .any(|prefix| path.starts_with(prefix))
}

/// `path` made absolute against `cwd`, with `.` and `..` taken out as written.
pub(super) fn absolute(cwd: &Path, path: &str) -> PathBuf {
    lexical(&cwd.join(path))
}

/// `.` and `..` taken out as written (`..` of `/` is `/`).
pub(super) fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

/// `path` with its links followed as far as it exists (the rest appended as written), or `None` when
/// nothing of it can be resolved.
pub(super) fn real(path: &Path) -> Option<PathBuf> {
    let mut existing = path;
    let mut rest = Vec::new();
    for _ in 0..64 {
        if let Ok(resolved) = std::fs::canonicalize(existing) {
            let mut out = resolved;
            for name in rest.iter().rev() {
                out.push(name);
            }
            return Some(out);
        }
        rest.push(existing.file_name()?.to_os_string());
        existing = existing.parent()?;
    }
    None
}

/// Whether a shell pattern (`*`, `?`, `[...]`) over a whole path matches `path`, component by
/// component, as the shell matches file names: a `*` never crosses a `/`, and a name that starts with a
/// dot is matched only by a pattern that starts with one.
pub(super) fn pattern_matches(pattern: &str, path: &Path) -> bool {
    let pattern = pattern.trim_end_matches('/');
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    let names: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    parts.len() == names.len()
        && parts.iter().zip(&names).all(|(part, name)| {
            (!name.starts_with('.') || part.starts_with('.'))
                && name_matches(part.as_bytes(), name.as_bytes())
        })
}

/// One name against one pattern.
fn name_matches(pattern: &[u8], name: &[u8]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => (0..=name.len()).any(|skip| name_matches(rest, &name[skip..])),
        Some((b'?', rest)) => !name.is_empty() && name_matches(rest, &name[1..]),
        Some((b'[', rest)) => {
            let Some(close) = rest.iter().skip(1).position(|&c| c == b']').map(|n| n + 1) else {
                return name.first() == Some(&b'[') && name_matches(rest, &name[1..]);
            };
            let Some((&first, name_rest)) = name.split_first() else {
                return false;
            };
            let set = &rest[..close];
            let (negated, set) = match set.split_first() {
                Some((b'!' | b'^', set)) => (true, set),
                _ => (false, set),
            };
            let mut matched = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == b'-' {
                    matched |= set[i] <= first && first <= set[i + 2];
                    i += 3;
                } else {
                    matched |= set[i] == first;
                    i += 1;
                }
            }
            matched != negated && name_matches(&rest[close + 1..], name_rest)
        }
        Some((&c, rest)) => name.first() == Some(&c) && name_matches(rest, &name[1..]),
    }
}

/// The agents' working folders with their links followed, kept a moment: an agent makes its calls from
/// one folder, which need not be resolved again on every call. An entry older than [`FOLDER_KEPT`] is
/// resolved again, so that a folder re-pointed (a link changed) is seen within that time.
#[derive(Debug, Default)]
pub struct Folders(std::sync::Mutex<Vec<(PathBuf, Option<PathBuf>, std::time::Instant)>>);

/// How long a resolved folder is kept.
pub const FOLDER_KEPT: std::time::Duration = std::time::Duration::from_secs(1);

/// How many folders are kept (agents' sessions at once).
const FOLDERS: usize = 16;

impl Folders {
    /// `folder` with its links followed (`None`: as it is, or not there).
    pub fn real(&self, folder: &Path) -> Option<PathBuf> {
        let now = std::time::Instant::now();
        let mut kept = crate::sync::lock(&self.0);
        if let Some((_, real, _)) = kept
            .iter()
            .find(|(known, _, at)| known == folder && now.duration_since(*at) < FOLDER_KEPT)
        {
            return real.clone();
        }
        let real = self::real(folder);
        kept.retain(|(known, _, at)| known != folder && now.duration_since(*at) < FOLDER_KEPT);
        if kept.len() >= FOLDERS {
            kept.remove(0);
        }
        kept.push((folder.to_path_buf(), real.clone(), now));
        real
    }
}
