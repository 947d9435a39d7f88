//! A repository's own hooks: `.hookd/hooks.toml`, found from an event's `cwd` upwards, no higher than
//! the repository's root (the outermost folder that holds `.git`) and never the home folder or above it. It holds
//! hooks (and their `moments` and `sequential`), nothing else; its hooks run only for events whose
//! `cwd` is inside it, once the user trusted them (`layers::trust`), and they only tighten: their allow
//! is ignored.
//!
//! What a repository brings is checked where it is named: a hooks file that is a symbolic link leaving
//! the repository is refused, and so is a hook that runs, or names, a file outside it that the user could
//! change (a system program, root's, may be run).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::layers::named::{self, Place};
use crate::settings::{
    ConfigError, ConfigErrors, Hook, Layer, LoadError, Owners, Program, Settings, Untrusted,
    resolve_owned,
};

/// The folder of a repository's hookd files, and its hooks file in it.
pub const FOLDER: &str = ".hookd";
pub const FILE: &str = "hooks.toml";

/// The repository whose hooks `hookd trust` takes from `cwd`: the nearest of [`find_all`].
pub fn find(cwd: &Path, home: &Path) -> Option<PathBuf> {
    find_all(cwd, home).into_iter().next()
}

/// The repositories a fire from `cwd` takes hooks from, the nearest first: those of [`find_all`], then
/// each of `trusted` (the roots the user trusted) that holds `cwd` though no hooks file is found there
/// now (it or its `.git` gone), whose trusted hooks are then said not to run rather than fall silent.
/// What the daemon runs and what `hookd check` shows, alike.
pub fn roots(cwd: &Path, home: &Path, trusted: impl IntoIterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut roots = find_all(cwd, home);
    if cwd.is_absolute() {
        let real = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
        for trusted in trusted {
            if real.starts_with(&trusted) && !roots.contains(&trusted) {
                roots.push(trusted);
            }
        }
    }
    roots
}

/// Every repository whose hooks an event at `cwd` sees, the nearest first: each folder, from `cwd` up,
/// that holds `.hookd/hooks.toml`, no higher than the outermost folder holding `.git`, and never `home`
/// or above it. Empty: no repository's hooks here.
///
/// The agent writes in the repository, so nothing it can add there may hide the hooks the user trusted:
/// a hooks file of its own below the root adds its hooks (pending until trusted) to the root's rather
/// than taking their place, and a `.git` it makes in a subfolder does not end the repository there.
/// `cwd` is taken as spelled (`..` read as the shell reads it) and as it really is (its links
/// followed): a link from outside into the repository does not lead out of its hooks.
pub fn find_all(cwd: &Path, home: &Path) -> Vec<PathBuf> {
    if !cwd.is_absolute() {
        return Vec::new();
    }
    let mut homes = vec![home.to_path_buf()];
    if let Ok(real) = std::fs::canonicalize(home)
        && !homes.contains(&real)
    {
        homes.push(real);
    }
    // `.` and `..` read as the shell reads them (`a/b/..` is `a`), no link followed.
    let mut spellings = vec![crate::guard::call::clean(cwd)];
    if let Ok(real) = std::fs::canonicalize(cwd)
        && !spellings.contains(&real)
    {
        spellings.push(real);
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    for cwd in &spellings {
        for root in walk_up(cwd, &homes) {
            // One repository however its path was spelled: its hooks run once.
            let root = std::fs::canonicalize(&root).unwrap_or(root);
            if !roots.contains(&root) {
                roots.push(root);
            }
        }
    }
    roots
}

/// The folders holding a hooks file from `cwd` up, no higher than the outermost holding `.git`, below
/// every one of `homes`.
fn walk_up(cwd: &Path, homes: &[PathBuf]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut within = 0;
    let mut dir = cwd;
    loop {
        if homes
            .iter()
            .any(|home| dir == home || home.starts_with(dir))
        {
            break; // home, or above it: not a repository's
        }
        if std::fs::symlink_metadata(dir.join(FOLDER).join(FILE)).is_ok() {
            found.push(dir.to_path_buf());
        }
        if std::fs::symlink_metadata(dir.join(".git")).is_ok() {
            within = found.len();
        }
        match dir.parent() {
            Some(parent) => dir = parent,
            None => break,
        }
    }
    found.truncate(within);
    found
}

/// A repository's hooks, read and checked.
#[derive(Debug, Clone)]
pub struct Project {
    /// The repository's root (the folder that holds `.hookd`).
    pub root: PathBuf,
    /// Its hooks file, as found (`ROOT/.hookd/hooks.toml`).
    pub file: PathBuf,
    /// The file's settings: hooks only, each named `project:NAME`, run from `.hookd`.
    pub settings: Settings,
    /// Each hook with what its trust is pinned to.
    pub hooks: Vec<Pinned>,
}

/// One hook of a repository, and the digest of what it is now.
#[derive(Debug, Clone)]
pub struct Pinned {
    pub hook: Arc<Hook>,
    /// `Moment/name` (the name as the file gives it): what the trust store keys it by.
    pub key: String,
    /// Its table as written in the file, for `hookd trust` to show.
    pub definition: String,
    /// The files of the repository it runs or names, whose bytes its digest holds.
    pub files: Vec<PathBuf>,
    /// The digest of its definition and those files now.
    pub digest: String,
    /// Where its command (or `argv`) names each of `files` (by index): what is pointed at the copy of
    /// the bytes digested when it runs (`layers::snapshot`).
    pub places: Vec<(Place, usize)>,
    /// The files of `files` no plain word names (a wrapper's `sh -c '...'`, an escape): they cannot be
    /// pointed at their copy, and the hook cannot run (it is pending, with why).
    pub unplaced: Vec<PathBuf>,
}

impl Pinned {
    /// The digest again, from the files as they are now.
    pub fn digest_now(&self, sequential: bool) -> String {
        crate::layers::trust::hook_digest(
            &self.hook.moment,
            &self.definition,
            sequential,
            &self.files,
        )
    }
}

/// Reads the hooks of the repository at `root`. `Err`: every error, at its file:line:col.
pub fn read(root: &Path) -> Result<Project, ConfigErrors> {
    let file = root.join(FOLDER).join(FILE);
    let label = file.display().to_string();
    let refused = |message: String| ConfigErrors(vec![ConfigError::whole_file(&label, message)]);
    let canonical = std::fs::canonicalize(root)
        .map_err(|e| refused(format!("cannot tell where the repository is: {e}")))?;
    match resolve_owned(&file, "a repository's hooks file", Owners::UserOrRoot) {
        Ok(resolved) if resolved.starts_with(&canonical) => {}
        Ok(resolved) => {
            return Err(refused(format!(
                "refused: {} is a symbolic link leaving the repository (to {}): a repository's hooks file must be in it",
                file.display(),
                resolved.display()
            )));
        }
        Err(Untrusted::NotFound) => return Err(refused("the file does not exist".into())),
        Err(Untrusted::Refused(message)) => return Err(refused(message)),
    }
    let text = match Settings::read(&file) {
        Ok(text) => text,
        Err(LoadError::NotFound) => return Err(refused("the file does not exist".into())),
        Err(LoadError::Invalid(errors)) => return Err(errors),
    };
    let settings = Settings::parse_layer(&file, &label, &text, Layer::Project)?;
    // The programs as the user's own are held: the user's or root's, writable by no one else. A script
    // another user could write would be theirs to change between the digest and the run.
    settings.check_programs_owned(Owners::UserOrRoot)?;
    let mut errors = Vec::new();
    let mut pinned = Vec::new();
    let mut hooks = Vec::with_capacity(settings.hooks.len());
    for (moment, list) in &settings.hooks {
        let sequential = settings.is_sequential(moment);
        let mut renamed_list = Vec::with_capacity(list.len());
        for hook in list {
            let mut files = Vec::new();
            // The program when it is a path, and each word naming a file, each once.
            for path in settings.hook_files(hook) {
                match inside(&path, &canonical) {
                    Ok(Some(resolved)) => {
                        if !files.contains(&resolved) {
                            files.push(resolved);
                        }
                    }
                    Ok(None) => {}
                    Err(message) => {
                        let mut error = ConfigError::whole_file(
                            &label,
                            format!("hook \"{}\": {message}", hook.name),
                        );
                        (error.line, error.column) = hook.program_at;
                        errors.push(error);
                    }
                }
            }
            files.sort();
            let definition = text
                .get(hook.span.0..hook.span.1)
                .unwrap_or_default()
                .to_string();
            let key = format!("{moment}/{}", hook.name);
            let mut renamed = (**hook).clone();
            renamed.name = crate::layers::fold::qualified(Layer::Project, &hook.name);
            renamed.dir = Some(settings.dir.clone());
            let renamed = Arc::new(renamed);
            let digest = crate::layers::trust::hook_digest(moment, &definition, sequential, &files);
            let places = places(hook, &settings.dir, &files);
            let unplaced = files
                .iter()
                .enumerate()
                .filter(|(n, _)| !places.iter().any(|(_, file)| file == n))
                .map(|(_, file)| file.clone())
                .collect();
            pinned.push(Pinned {
                hook: renamed.clone(),
                key,
                definition,
                files,
                digest,
                places,
                unplaced,
            });
            renamed_list.push(renamed);
        }
        hooks.push((moment.clone(), renamed_list));
    }
    if !errors.is_empty() {
        errors.sort_by_key(|e| (e.line, e.column));
        return Err(ConfigErrors(errors));
    }
    let mut settings = settings;
    settings.hooks = hooks;
    Ok(Project {
        root: canonical,
        file,
        settings,
        hooks: pinned,
    })
}

/// Where `hook`'s command or `argv` names each of `files` (resolved), read from its folder `dir`.
fn places(hook: &Hook, dir: &Path, files: &[PathBuf]) -> Vec<(Place, usize)> {
    let words: Vec<(Place, String)> = match &hook.program {
        Program::Shell { command, .. } => named::shell_words(
            command,
            &dir.to_string_lossy(),
            &crate::paths::home().to_string_lossy(),
        ),
        Program::Argv(argv) | Program::Worker { argv, .. } => argv
            .iter()
            .enumerate()
            .map(|(n, word)| (Place::Arg(n), word.clone()))
            .collect(),
        Program::Guard(_) | Program::Live { .. } => Vec::new(),
    };
    words
        .into_iter()
        .filter_map(|(place, word)| {
            let file = named::file_of(&word, dir)?;
            files
                .iter()
                .position(|pinned| *pinned == file)
                .map(|n| (place, n))
        })
        .collect()
}

/// Where a file a repository's hook runs or names lies: `Some` (resolved) inside the repository, whose
/// bytes the hook's digest holds; `None` outside it but root's and out of the user's reach (a system
/// program), or not there at all (the hook fails when it runs, its digest saying the file is missing);
/// `Err` outside it where the user, or the agent, could change it.
fn inside(path: &Path, root: &Path) -> Result<Option<PathBuf>, String> {
    match resolve_owned(path, "a program", Owners::UserOrRoot) {
        Err(Untrusted::NotFound) => {
            // Not there (yet): inside the repository, pinned as missing; outside it, refused.
            let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
            if absolute.starts_with(root) {
                Ok(Some(absolute))
            } else {
                Err(outside(path, &absolute))
            }
        }
        Err(Untrusted::Refused(message)) => Err(message),
        Ok(resolved) if resolved.starts_with(root) => Ok(Some(resolved)),
        Ok(resolved) => {
            let system = SYSTEM_FOLDERS
                .iter()
                .any(|folder| resolved.starts_with(folder))
                && resolve_owned(&resolved, "a program", Owners::RootOnly).is_ok()
                && std::fs::metadata(&resolved).is_ok_and(|meta| {
                    use std::os::unix::fs::MetadataExt;
                    meta.uid() == 0 && meta.mode() & 0o022 == 0
                });
            if system {
                Ok(None)
            } else {
                Err(outside(path, &resolved))
            }
        }
    }
}

/// Where a system's programs live: a file outside the repository may be run from these alone (and only
/// when root's), never from a temporary folder or the user's own, whatever their owner.
const SYSTEM_FOLDERS: &[&str] = &[
    "/usr/",
    "/bin/",
    "/sbin/",
    "/lib/",
    "/lib64/",
    "/opt/",
    "/nix/store/",
    "/etc/",
];

fn outside(path: &Path, resolved: &Path) -> String {
    format!(
        "refused: {} is outside the repository ({}), where its bytes cannot be pinned by `hookd trust`: a repository's hooks run what the repository holds, or a system program (root's, in /usr, /bin, /opt, ...)",
        path.display(),
        resolved.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hooks_file(dir: &Path) {
        std::fs::create_dir_all(dir.join(FOLDER)).unwrap();
        std::fs::write(dir.join(FOLDER).join(FILE), "# hooks\n").unwrap();
    }

    /// Nothing the agent adds inside a repository takes its hooks away: a nested hooks file adds to
    /// the root's, a `.git` below the root does not end the repository, and a link from outside leads
    /// to where the folder really is.
    #[test]
    fn every_hooks_file_up_to_the_outermost_git_is_found() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let home = base.join("home");
        let repo = base.join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        hooks_file(&repo);
        let nested = repo.join("src/lib");
        std::fs::create_dir_all(nested.join(".git")).unwrap();
        hooks_file(&nested);
        let deep = nested.join("deep");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(find_all(&deep, &home), vec![nested.clone(), repo.clone()]);
        assert_eq!(find(&deep, &home), Some(nested.clone()));
        // Through a link from outside, and spelled with `..`.
        let link = base.join("link");
        std::os::unix::fs::symlink(&deep, &link).unwrap();
        assert_eq!(find_all(&link, &home), vec![nested.clone(), repo.clone()]);
        assert_eq!(find_all(&repo.join("src/.."), &home), vec![repo.clone()]);
        assert_eq!(find_all(&repo.join(".."), &home), Vec::<PathBuf>::new());
        // No `.git` at all: not a repository's. The home folder and above: never.
        let loose = base.join("loose");
        hooks_file(&loose);
        assert_eq!(find_all(&loose, &home), Vec::<PathBuf>::new());
        assert_eq!(find_all(&repo, &repo), Vec::<PathBuf>::new());
        assert_eq!(find_all(Path::new("repo"), &home), Vec::<PathBuf>::new());
    }
}
