//! The managed layer: `managed.toml` and `managed.d/*.toml` (alphabetical) in `/etc/hookd`, or the
//! folder `serve --managed DIR` names. Every file, and every folder on its way, must be root's and
//! writable by no one else: a file the user owns the user can make writable again whatever its mode, and
//! the agent runs as the user. Not even the daemon's own user is taken (docs/teams.md says why).
//!
//! The layer is read whole or not at all: an error in one of its files keeps the layer's last good
//! settings (the user's layer is not touched), and is reported at its file:line:col.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::settings::{
    ConfigError, ConfigErrors, Layer, LoadError, Owners, Settings, Untrusted, resolve_owned,
};

/// Where the managed layer lives unless `serve --managed` says otherwise.
pub const DEFAULT_DIR: &str = "/etc/hookd";

/// The main file of the layer, in its folder.
pub const MAIN_FILE: &str = "managed.toml";

/// The folder of drop-ins beside it, read in their names' order after the main file.
pub const DROP_INS: &str = "managed.d";

/// The managed layer as read: its settings (`None`: the folder holds no managed file), and a hash of
/// the texts it was read from, to tell a real change from a touch.
#[derive(Debug, Clone)]
pub struct Read {
    pub settings: Option<Settings>,
    /// Each file's own policy, in the layer's order: which file sets what (the fold keeps the
    /// stricter), for what setup says.
    pub policies: Vec<(PathBuf, crate::settings::Policy)>,
    pub hash: u64,
}

/// The layer's files, in their order: `managed.toml`, then `managed.d/*.toml` by name. A drop-in folder
/// that someone other than root can write is refused: whoever can write it can add a file.
pub fn files(dir: &Path) -> Result<Vec<PathBuf>, ConfigErrors> {
    let mut files = Vec::new();
    let main = dir.join(MAIN_FILE);
    if std::fs::symlink_metadata(&main).is_ok() {
        files.push(main);
    }
    let drop_ins = dir.join(DROP_INS);
    let refused = |message: String| {
        ConfigErrors(vec![ConfigError::whole_file(
            &drop_ins.display().to_string(),
            message,
        )])
    };
    let resolved = match resolve_owned(&drop_ins, "the managed layer", Owners::RootOnly) {
        Ok(resolved) => resolved,
        Err(Untrusted::NotFound) => return Ok(files),
        Err(Untrusted::Refused(message)) => return Err(refused(message)),
    };
    let Ok(meta) = std::fs::metadata(&resolved) else {
        return Ok(files);
    };
    if !meta.is_dir() {
        return Ok(files);
    }
    if meta.uid() != 0 || meta.mode() & 0o022 != 0 {
        return Err(refused(format!(
            "refused: the managed layer's folder {} must be root's and writable by no one else (it is uid {}'s, mode {:04o}); whoever can write it can add a policy (fix: chown root: and chmod go-w)",
            resolved.display(),
            meta.uid(),
            meta.mode() & 0o7777
        )));
    }
    let entries = std::fs::read_dir(&resolved)
        .map_err(|e| refused(format!("cannot read the folder: {e}")))?;
    let mut more: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension().is_some_and(|ext| ext == "toml")
                && !path
                    .file_name()
                    .is_some_and(|name| name.to_string_lossy().starts_with('.'))
        })
        .collect();
    more.sort();
    files.extend(
        more.into_iter()
            .map(|path| drop_ins.join(path.file_name().unwrap_or_default())),
    );
    Ok(files)
}

/// Reads the managed layer in `dir`: every file checked (root's), validated as the managed layer,
/// its programs root's too, and all of them folded into one, in their order. `Err`: every error of
/// every file, and the layer keeps its last good settings.
pub fn read(dir: &Path) -> Result<Read, ConfigErrors> {
    let files = files(dir)?;
    let mut errors = Vec::new();
    let mut hasher = std::hash::DefaultHasher::new();
    let mut layer: Option<Settings> = None;
    let mut policies = Vec::new();
    for file in &files {
        use std::hash::Hash;
        let label = file.display().to_string();
        let text = match Settings::read_owned(file, Owners::RootOnly) {
            Ok(text) => text,
            Err(LoadError::NotFound) => continue, // gone since it was listed
            Err(LoadError::Invalid(found)) => {
                errors.extend(found.0);
                continue;
            }
        };
        file.hash(&mut hasher);
        text.hash(&mut hasher);
        if let Err(found) = Settings::refuse_empty(&label, &text) {
            errors.extend(found.0);
            continue;
        }
        let mut settings = match Settings::parse_layer(file, &label, &text, Layer::Managed) {
            Ok(settings) => settings,
            Err(found) => {
                errors.extend(found.0);
                continue;
            }
        };
        if let Err(found) = settings.check_programs_owned(Owners::RootOnly) {
            errors.extend(found.0);
            continue;
        }
        for (_, hooks) in &mut settings.hooks {
            for hook in hooks.iter_mut() {
                Arc::make_mut(hook).dir = Some(settings.dir.clone());
            }
        }
        policies.push((file.clone(), settings.policy));
        layer = match layer.take() {
            None => Some(settings),
            Some(before) => match join(before, settings, &label) {
                Ok(joined) => Some(joined),
                Err(failed) => {
                    let (before, error) = *failed;
                    errors.push(error);
                    Some(before)
                }
            },
        };
    }
    if !errors.is_empty() {
        return Err(ConfigErrors(errors));
    }
    if let Some(settings) = &mut layer {
        settings.managed_files = files;
    }
    use std::hash::Hasher;
    Ok(Read {
        settings: layer,
        policies,
        hash: hasher.finish(),
    })
}

/// A later managed file folded into the ones before it: its hooks after theirs, the stricter policy,
/// its tables where it gives them (a drop-in overrides), its `[protect]` paths added and hookd's guard
/// of itself on unless every file that says so turns it off.
fn join(
    mut before: Settings,
    later: Settings,
    label: &str,
) -> Result<Settings, Box<(Settings, ConfigError)>> {
    for (moment, hooks) in later.hooks {
        for hook in &hooks {
            if before
                .hooks
                .iter()
                .flat_map(|(_, hooks)| hooks)
                .any(|h| h.name == hook.name)
            {
                let mut error = ConfigError::whole_file(
                    label,
                    format!(
                        "duplicate hook name \"{}\": an earlier managed file has a hook of that name",
                        hook.name
                    ),
                );
                (error.line, error.column) = hook.program_at;
                return Err(Box::new((before, error)));
            }
        }
        match before.hooks.iter_mut().find(|(m, _)| *m == moment) {
            Some((_, list)) => list.extend(hooks),
            None => before.hooks.push((moment, hooks)),
        }
    }
    before.hooks.sort_by_key(|(name, _)| {
        (
            crate::tables::moment::order(name),
            before.extra_moments.iter().position(|m| m == name),
        )
    });
    for moment in later.extra_moments {
        if !before.extra_moments.contains(&moment) {
            before.extra_moments.push(moment);
        }
    }
    for moment in later.sequential {
        if !before.sequential.contains(&moment) {
            before.sequential.push(moment);
        }
    }
    before.policy = before.policy.stricter(later.policy);
    let gives = |key: &str| later.given.iter().any(|k| k == key);
    if gives("protect") {
        before.protect.enabled &= later.protect.enabled;
        before.protect.live_hooks_allow &= later.protect.live_hooks_allow;
        before.protect.paths.extend(later.protect.paths);
    }
    if gives("record") {
        before.record = later.record;
    }
    if gives("http") {
        before.http = later.http;
    }
    if gives("export") {
        before.export = later.export;
    }
    if gives("defaults") {
        before.defaults.max_processes = later.defaults.max_processes;
        before.defaults.stop_refusal_cap = later.defaults.stop_refusal_cap;
    }
    for key in later.given {
        if !before.given.contains(&key) {
            before.given.push(key);
        }
    }
    before.digest = format!("{}{}", before.digest, later.digest).into();
    Ok(before)
}

/// What the layer's files look like now (their names, inodes, sizes, times), for the daemon's watch:
/// an admin's change is rare, so the folder is polled, which no editor's way of saving can escape.
pub fn fingerprint(dir: &Path) -> Vec<(PathBuf, u64, u64, i64, i64)> {
    let mut seen = Vec::new();
    let mut look = |path: PathBuf| {
        if let Ok(meta) = std::fs::metadata(&path) {
            seen.push((
                path,
                meta.ino(),
                meta.size(),
                meta.mtime_nsec() + meta.mtime() * 1_000_000_000,
                meta.ctime_nsec() + meta.ctime() * 1_000_000_000,
            ));
        }
    };
    look(dir.join(MAIN_FILE));
    look(dir.join(DROP_INS));
    if let Ok(entries) = std::fs::read_dir(dir.join(DROP_INS)) {
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            look(path);
        }
    }
    seen
}
