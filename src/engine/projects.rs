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
    roots: Mutex<HashMap<String, (Instant, Vec<PathBuf>)>>,
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
    /// Hooks of each repository not yet trusted (any moment), with its root: for a session's start.
    pub waiting: Vec<(PathBuf, usize)>,
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
    /// The repositories at `cwd` (the nearest first), remembered per folder: those whose hooks file is
    /// found from it ([`project::find_all`]), and those the user trusted that hold it but whose hooks
    /// file is gone, whose trusted hooks are then reported as gone rather than fall silent.
    pub fn roots_of(&self, cwd: &str) -> Vec<PathBuf> {
        let now = Instant::now();
        if let Some((at, roots)) = lock(&self.roots).get(cwd)
            && now.duration_since(*at) < REMEMBERED
        {
            return roots.clone();
        }
        let mut roots = project::find_all(Path::new(cwd), &crate::paths::home());
        let real = std::fs::canonicalize(cwd).unwrap_or_else(|_| PathBuf::from(cwd));
        for trusted in self.store().projects.keys().map(PathBuf::from) {
            if real.starts_with(&trusted) && !roots.contains(&trusted) {
                roots.push(trusted);
            }
        }
        let mut remembered = lock(&self.roots);
        if remembered.len() >= MAX_FOLDERS {
            remembered.clear();
        }
        remembered.insert(cwd.to_string(), (now, roots.clone()));
        roots
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
    /// fitting `fits` (the agent, the matcher). Hooks that run as one of `others` (another layer's) are
    /// left out: the same hook runs once.
    ///
    /// What the user trusted never falls silent: a trusted hook changed since (its definition or a file
    /// it runs) is reported pending at every fire of its moment, whether or not it fits as it is now
    /// (an `enabled = false` or a matcher added to it is a change like any other), and a trusted hook
    /// taken out of the file, or the file gone, is reported as such.
    pub fn for_fire(
        &self,
        root: &Path,
        moment: &str,
        others: &[Arc<Hook>],
        fits: impl Fn(&Hook) -> bool,
    ) -> ForFire {
        let (project, _) = self.project(root);
        let store = self.store();
        let mut out = ForFire::default();
        let Some(project) = project else {
            out.pending = gone(&store, root, moment, &[]);
            return out;
        };
        let mut waiting = 0;
        for pinned in &project.hooks {
            let trusted = store.trusted(&project.root, &pinned.key);
            if pinned.hook.moment != moment {
                if trusted != Some(pinned.digest.as_str()) {
                    waiting += 1;
                }
                continue;
            }
            // Digested again now, just before it runs: a script changed after it was trusted (or
            // after the file was read) is pending from this fire on. (Digested first where it differs
            // from the trusted one as read: a hook that does not fit is reported if it changed.)
            let sequential = project.settings.is_sequential(moment);
            let mut now = None;
            let changed = match trusted {
                Some(digest) if digest != pinned.digest => {
                    let digested = pinned.digest_now(sequential);
                    let changed = digested != digest;
                    now = Some(digested);
                    changed
                }
                _ => false,
            };
            if !changed && (!pinned.hook.enabled || !fits(&pinned.hook)) {
                continue;
            }
            if !changed && others.iter().any(|other| other.runs_as(&pinned.hook)) {
                continue;
            }
            let now = now.unwrap_or_else(|| pinned.digest_now(sequential));
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
        let keys: Vec<&str> = project.hooks.iter().map(|p| p.key.as_str()).collect();
        let gone = gone(&store, &project.root, moment, &keys);
        waiting += gone.len();
        out.pending.extend(gone);
        if waiting > 0 {
            out.waiting.push((project.root.clone(), waiting));
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

/// The hooks of `moment` the user trusted in the repository at `root` that its file no longer holds
/// (`keys`: those it holds), each as a pending report: what was trusted to refuse must not vanish
/// without a word when the agent takes it out of the file. `hookd trust` again (or `--revoke`) accepts it.
fn gone(store: &Store, root: &Path, moment: &str, keys: &[&str]) -> Vec<(Arc<Hook>, String)> {
    let Some(trusted) = store.projects.get(&root.to_string_lossy().into_owned()) else {
        return Vec::new();
    };
    trusted
        .keys()
        .filter_map(|key| {
            let name = key.strip_prefix(moment)?.strip_prefix('/')?;
            if keys.contains(&key.as_str()) {
                return None;
            }
            // Reported only, never run: what it was is not known beyond its name and moment.
            let hook = Hook {
                name: crate::layers::fold::qualified(crate::settings::Layer::Project, name),
                moment: moment.to_string(),
                matcher: crate::settings::Matcher::Any,
                matcher_source: None,
                condition: None,
                program: crate::settings::Program::Argv(Vec::new()),
                timeout: Duration::ZERO,
                timeout_given: false,
                on_failure: crate::settings::OnFailure::Ignore,
                agents: None,
                env: Vec::new(),
                enabled: false,
                background: false,
                program_at: (0, 0),
                layer: crate::settings::Layer::Project,
                dir: Some(root.join(project::FOLDER)),
                span: (0, 0),
            };
            Some((
                Arc::new(hook),
                format!(
                    "pending: removed from the repository's hooks since the user trusted it (its file changed or is gone); not run, and said at every fire until the user runs `hookd trust {}` (or `hookd trust --revoke {}`)",
                    root.display(),
                    root.display()
                ),
            ))
        })
        .collect()
}
