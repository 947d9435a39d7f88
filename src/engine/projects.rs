//! A repository's hooks for a fire (`layers::project`): the repository found from the event's `cwd`
//! (remembered per folder, so that a fire from a folder with none costs one lookup), its hooks file read
//! when a fire first comes from it and again whenever it changed, and each hook run only while its
//! digest is the one the user trusted (`hookd trust`). A pending hook is never silent: its fire's
//! report and the journal name it, `status` lists it, and a session that starts there is told.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::layers::project::{self, Project};
use crate::layers::trust::Store;
use crate::settings::Hook;
use crate::sync::lock;

/// How long a folder's repository (or its having none) is remembered before it is looked for again:
/// a repository cloned, or a hooks file added, is seen within this.
const REMEMBERED: Duration = Duration::from_secs(2);

/// How long a repository's hooks file is taken as unchanged without looking at it again: a change is in
/// force within this (as the user's file's, within the watcher's 150 ms), and a fire that comes sooner
/// pays no look at all.
const LOOKED_AT: Duration = Duration::from_millis(100);

/// Folders remembered at most; past it the memory starts over (an agent that wanders through many
/// folders costs lookups, never memory).
const MAX_FOLDERS: usize = 4096;

/// A file's identity and last change, to tell it changed without reading it.
type Stamp = Option<(u64, u64, u64, i64, i64)>;

fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
        meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
    ))
}

/// The repositories fires came from, their hooks, and what the user trusted.
#[derive(Debug, Default)]
pub(crate) struct Projects {
    roots: Mutex<HashMap<String, (Instant, Option<PathBuf>)>>,
    loaded: Mutex<HashMap<PathBuf, Loaded>>,
    store: Mutex<(Stamp, Arc<Store>, bool)>,
    /// The repositories whose hooks the managed layer keeps from running, each journaled once.
    skipped: Mutex<std::collections::HashSet<PathBuf>>,
}

/// One repository's hooks as last read.
#[derive(Debug, Clone)]
struct Loaded {
    stamps: (Stamp, Stamp),
    /// When the stamps were taken.
    looked: Instant,
    /// The last good read (a bad edit keeps it), `None` before any.
    project: Option<Arc<Project>>,
    /// Why the file as it is now is refused, at its file:line:col.
    error: Option<String>,
}

/// What a fire gets of a repository's hooks.
#[derive(Debug, Default)]
pub(crate) struct ForFire {
    /// The repository's trusted hooks that fit the fire, to run after the others.
    pub run: Vec<Arc<Hook>>,
    /// The ones that fit but are pending, with why: reported, never run.
    pub pending: Vec<(Arc<Hook>, String)>,
    /// Hooks of the repository not yet trusted (any moment), with its root: for a session's start.
    pub waiting: Option<(PathBuf, usize)>,
}

/// What `status` shows of one repository.
#[derive(Debug, Clone)]
pub struct ProjectState {
    pub root: PathBuf,
    pub hooks: usize,
    pub pending: Vec<String>,
    pub error: Option<String>,
}

impl Projects {
    /// The repository at `cwd`, remembered per folder.
    pub fn root_of(&self, cwd: &str) -> Option<PathBuf> {
        let now = Instant::now();
        if let Some((at, root)) = lock(&self.roots).get(cwd)
            && now.duration_since(*at) < REMEMBERED
        {
            return root.clone();
        }
        let root = project::find(Path::new(cwd), &crate::paths::home());
        let mut roots = lock(&self.roots);
        if roots.len() >= MAX_FOLDERS {
            roots.clear();
        }
        roots.insert(cwd.to_string(), (now, root.clone()));
        root
    }

    /// The repository's hooks, read again when its file changed; a bad edit keeps the last good ones
    /// and is journaled.
    fn project(&self, root: &Path) -> (Option<Arc<Project>>, Option<String>) {
        let file = root.join(project::FOLDER).join(project::FILE);
        if let Some(loaded) = lock(&self.loaded).get(root)
            && loaded.looked.elapsed() < LOOKED_AT
        {
            return (loaded.project.clone(), loaded.error.clone());
        }
        let stamps = (stamp(&file), stamp(&root.join(project::FOLDER)));
        if let Some(loaded) = lock(&self.loaded).get_mut(root)
            && loaded.stamps == stamps
        {
            loaded.looked = Instant::now();
            return (loaded.project.clone(), loaded.error.clone());
        }
        let read = project::read(root);
        let mut loaded = lock(&self.loaded);
        let before = loaded.get(root).and_then(|l| l.project.clone());
        let (project, error) = match read {
            Ok(project) => {
                let mut record = crate::record::Record::new(crate::record::Kind::Reload);
                record.file = Some(file.display().to_string());
                record.summary = Some(format!(
                    "a repository's hooks (layer project): {}",
                    project.settings.summary()
                ));
                crate::record::note(record);
                (Some(Arc::new(project)), None)
            }
            Err(errors) => {
                let text = errors.to_string();
                tracing::error!(
                    "a repository's hooks file refused, its last good hooks stay:\n{text}"
                );
                let mut record = crate::record::Record::new(crate::record::Kind::ReloadRefused);
                record.file = Some(file.display().to_string());
                record.error = Some(crate::record::cut(&text, 4000));
                crate::record::note(record);
                (before, Some(text))
            }
        };
        if loaded.len() >= MAX_FOLDERS {
            loaded.clear();
        }
        loaded.insert(
            root.to_path_buf(),
            Loaded {
                stamps,
                looked: Instant::now(),
                project: project.clone(),
                error: error.clone(),
            },
        );
        (project, error)
    }

    /// What the user trusted, read again when the store changed.
    fn store(&self) -> Arc<Store> {
        let path = crate::layers::trust::store_path();
        let now = stamp(&path);
        let mut seen = lock(&self.store);
        if !seen.2 || seen.0 != now {
            *seen = (now, Arc::new(Store::load(&path)), true);
        }
        seen.1.clone()
    }

    /// The repository's hooks for a fire at `moment` from `cwd`: those trusted and those pending, each
    /// fitting `fits` (the agent, the matcher). Hooks the same as one of `others` (another layer's) are
    /// left out: the same hook runs once.
    pub fn for_fire(
        &self,
        root: &Path,
        moment: &str,
        others: &[Arc<Hook>],
        fits: impl Fn(&Hook) -> bool,
    ) -> ForFire {
        let (project, _) = self.project(root);
        let Some(project) = project else {
            return ForFire::default();
        };
        // A fire none of the repository's hooks fits costs no more: the trust store is looked at only
        // for hooks to run or report, and for a session's start.
        let starts = moment == crate::tables::moment::SESSION_START;
        if !starts
            && !project
                .hooks
                .iter()
                .any(|pinned| pinned.hook.moment == moment && pinned.hook.enabled)
        {
            return ForFire::default();
        }
        let store = self.store();
        let mut out = ForFire::default();
        let mut waiting = 0;
        for pinned in &project.hooks {
            let trusted = store.trusted(&project.root, &pinned.key);
            if pinned.hook.moment != moment {
                if trusted != Some(pinned.digest.as_str()) {
                    waiting += 1;
                }
                continue;
            }
            if !pinned.hook.enabled || !fits(&pinned.hook) {
                continue;
            }
            if others.iter().any(|other| other.same_as(&pinned.hook)) {
                continue;
            }
            // Digested again now, just before it runs: a script changed after it was trusted (or
            // after the file was read) is pending from this fire on.
            let now = pinned.digest_now(project.settings.is_sequential(moment));
            match trusted {
                Some(digest) if digest == now => out.run.push(pinned.hook.clone()),
                Some(_) => {
                    waiting += 1;
                    out.pending.push((
                        pinned.hook.clone(),
                        format!(
                            "pending: changed since it was trusted (its definition or a file it runs); not run until the user runs `hookd trust {}`",
                            project.root.display()
                        ),
                    ));
                }
                None => {
                    waiting += 1;
                    out.pending.push((
                        pinned.hook.clone(),
                        format!(
                            "pending: a repository's hook not trusted yet; not run until the user runs `hookd trust {}`",
                            project.root.display()
                        ),
                    ));
                }
            }
        }
        if waiting > 0 {
            out.waiting = Some((project.root.clone(), waiting));
        }
        out
    }

    /// A fire from a repository whose hooks the managed layer keeps from running: journaled once per
    /// repository, with why.
    pub fn skipped(&self, root: &Path, policy: crate::settings::Policy) {
        if !lock(&self.skipped).insert(root.to_path_buf()) {
            return;
        }
        let why = if policy.allow_managed_hooks_only {
            "the managed layer sets allow_managed_hooks_only"
        } else {
            "the managed layer sets project_hooks = \"off\""
        };
        let mut record = crate::record::Record::new(crate::record::Kind::Reload);
        record.file = Some(
            root.join(project::FOLDER)
                .join(project::FILE)
                .display()
                .to_string(),
        );
        record.summary = Some(format!(
            "a repository's hooks (layer project) are not read and do not run: {why}"
        ));
        tracing::info!(root = %root.display(), "a repository's hooks do not run: {why}");
        crate::record::note(record);
    }

    /// The repositories fires came from, for `status` and `doctor`.
    pub fn states(&self) -> Vec<ProjectState> {
        let loaded: Vec<(PathBuf, Loaded)> = lock(&self.loaded)
            .iter()
            .map(|(root, loaded)| (root.clone(), loaded.clone()))
            .collect();
        let store = self.store();
        let mut states: Vec<ProjectState> = loaded
            .into_iter()
            .map(|(root, loaded)| {
                let (hooks, pending) = match &loaded.project {
                    Some(project) => (
                        project.hooks.len(),
                        project
                            .hooks
                            .iter()
                            .filter(|pinned| {
                                store.trusted(&project.root, &pinned.key)
                                    != Some(
                                        pinned
                                            .digest_now(
                                                project.settings.is_sequential(&pinned.hook.moment),
                                            )
                                            .as_str(),
                                    )
                            })
                            .map(|pinned| pinned.key.clone())
                            .collect(),
                    ),
                    None => (0, Vec::new()),
                };
                ProjectState {
                    root,
                    hooks,
                    pending,
                    error: loaded.error,
                }
            })
            .collect();
        states.sort_by(|a, b| a.root.cmp(&b.root));
        states
    }
}
