//! A repository's hooks for a fire (`layers::project`): the repository found from the event's `cwd`
//! (remembered per folder, so that a fire from a folder with none costs one lookup), its hooks file read
//! when a fire first comes from it and again whenever it changed, and each hook run only while its
//! digest is the one the user trusted (`hookd trust`), from copies of the very bytes digested
//! (`layers::snapshot`). A pending hook is never silent: its fire's report and the journal name it,
//! `status` lists it, and a session that starts there is told.
//!
//! What touches the disk (the hooks file read and parsed, scripts of up to 16 MiB read and digested,
//! their copies written) runs on a blocking thread, never on the daemon's shared one; a fire from the
//! repository waits for it (within [`crate::limits::PROJECT_READ_WAIT`]), and a read that fails or
//! takes longer is said in the fire's report and the journal, never passed over in silence. What a fire
//! from a folder it saw last asks is answered from memory, on the shared thread, without a lookup.
//! `status` digests every remembered repository's hooks on a blocking thread too, one digest at a time
//! and within [`crate::limits::STATUS_DIGEST_WAIT`] (`Projects::states_within`): any client may ask
//! for it, again and again, and a fire must never wait behind it. The trust store is read without
//! waiting (a FIFO in its place is refused) and outside its lock, which the shared thread takes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::layers::project::{self, Project};
use crate::layers::snapshot::{self, Copies, stamp};
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

/// A file's identity and last change, `None` when it is not there.
type Stamp = Option<snapshot::Stamp>;

/// The repositories fires came from, their hooks, and what the user trusted.
#[derive(Debug)]
pub(crate) struct Projects {
    /// The folder the last fire came from, and what was found for it: most fires of a session come
    /// from the same one, answered here without hashing a path.
    last: Mutex<Option<Last>>,
    roots: Mutex<HashMap<String, (Instant, Vec<PathBuf>)>>,
    loaded: Mutex<HashMap<PathBuf, Loaded>>,
    store: Mutex<(Stamp, Arc<Store>, bool)>,
    /// The repositories whose hooks the managed layer keeps from running, each journaled once.
    skipped: Mutex<std::collections::HashSet<PathBuf>>,
    /// The copies trusted hooks run from.
    copies: Copies,
    /// Held while `status`'s digest of every repository's scripts runs ([`Projects::states_within`]):
    /// one at a time, however many clients ask, so that asking again and again costs one blocking
    /// thread, never one per request.
    digesting: Arc<tokio::sync::Mutex<()>>,
}

impl Default for Projects {
    fn default() -> Projects {
        Projects::with_copies(Copies::in_state())
    }
}

/// The folder the last fire came from: its repository (when it has one), and that repository's hooks
/// as last read well.
#[derive(Debug)]
struct Last {
    cwd: String,
    found: Instant,
    /// Its repositories, the nearest first ([`crate::layers::project::find_all`]).
    roots: Vec<PathBuf>,
    /// The hooks of its one repository, when it is in one alone.
    project: Option<(Instant, Arc<Project>)>,
}

/// What memory alone tells of a fire from a folder.
#[derive(Debug)]
pub(crate) enum Quick {
    /// The folder is in no repository with hooks.
    Nothing,
    /// It is in this repository alone, none of whose hooks is hung on the fire's moment, nor has
    /// anything to report there.
    NoneAt(PathBuf),
    /// Not known from memory alone: the repositories at these roots (`None`: to be looked for).
    Look(Option<Vec<PathBuf>>),
}

/// One of a repository's hooks that fit a fire but did not run: pending (not trusted, or changed), or
/// its repository's hooks could not be read. Said in the fire's report and its journal line.
#[derive(Debug, Clone)]
pub(crate) struct Held {
    pub name: String,
    pub why: String,
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
    pub pending: Vec<Held>,
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
    /// Why `pending` could not be known this time (its scripts not digested in time), `None` when it
    /// was: an empty `pending` then means nothing, and says so rather than "all trusted".
    pub pending_unknown: Option<String>,
}

impl Projects {
    pub fn with_copies(copies: Copies) -> Projects {
        Projects {
            last: Mutex::new(None),
            roots: Mutex::default(),
            loaded: Mutex::default(),
            store: Mutex::default(),
            skipped: Mutex::default(),
            copies,
            digesting: Arc::default(),
        }
    }

    /// What memory tells of a fire at `moment` from `cwd`, with one lock and no lookup when the fire
    /// comes from the folder the last one came from.
    pub fn quick(&self, cwd: &str, moment: &str) -> Quick {
        let last = lock(&self.last);
        let Some(last) = last.as_ref().filter(|last| last.cwd == cwd) else {
            return Quick::Look(None);
        };
        let now = Instant::now();
        if now.duration_since(last.found) >= REMEMBERED {
            return Quick::Look(None);
        }
        let [root] = last.roots.as_slice() else {
            if last.roots.is_empty() {
                return Quick::Nothing;
            }
            return Quick::Look(Some(last.roots.clone()));
        };
        match &last.project {
            Some((looked, project))
                if now.duration_since(*looked) < LOOKED_AT
                    && moment != crate::tables::moment::SESSION_START
                    && !project
                        .hooks
                        .iter()
                        .any(|pinned| pinned.hook.enabled && pinned.hook.moment == moment)
                    && !self.to_report(project, moment) =>
            {
                Quick::NoneAt(root.clone())
            }
            _ => Quick::Look(Some(vec![root.clone()])),
        }
    }

    /// The repositories at `cwd`, remembered per folder. It may look at the disk: not on the shared
    /// thread unless remembered.
    pub fn roots_of(&self, cwd: &str) -> Vec<PathBuf> {
        let roots = self.roots_of_folder(cwd);
        *lock(&self.last) = Some(Last {
            cwd: cwd.to_string(),
            found: Instant::now(),
            roots: roots.clone(),
            project: None,
        });
        roots
    }

    /// The repository at `cwd` from memory, when it is remembered and recent (and kept as the last
    /// folder's).
    pub fn remembered_roots(&self, cwd: &str) -> Option<Vec<PathBuf>> {
        let (found, roots) = lock(&self.roots)
            .get(cwd)
            .filter(|(at, _)| at.elapsed() < REMEMBERED)
            .cloned()?;
        *lock(&self.last) = Some(Last {
            cwd: cwd.to_string(),
            found,
            roots: roots.clone(),
            project: None,
        });
        Some(roots)
    }

    /// Those of [`project::roots`]: whose hooks file is found from `cwd`, and those the user trusted
    /// that hold it but whose hooks file is gone.
    fn roots_of_folder(&self, cwd: &str) -> Vec<PathBuf> {
        let now = Instant::now();
        if let Some((at, roots)) = lock(&self.roots).get(cwd)
            && now.duration_since(*at) < REMEMBERED
        {
            return roots.clone();
        }
        let store = self.store();
        let roots = project::roots(
            Path::new(cwd),
            &crate::paths::home(),
            store.projects.keys().map(PathBuf::from),
        );
        let mut remembered = lock(&self.roots);
        if remembered.len() >= MAX_FOLDERS {
            remembered.clear();
        }
        remembered.insert(cwd.to_string(), (now, roots.clone()));
        roots
    }

    /// The repository's hooks when they were looked at within [`LOOKED_AT`]: no disk.
    pub fn fresh(&self, root: &Path) -> Option<(Option<Arc<Project>>, Option<String>)> {
        let fresh = lock(&self.loaded)
            .get(root)
            .filter(|loaded| loaded.looked.elapsed() < LOOKED_AT)
            .map(|loaded| (loaded.project.clone(), loaded.error.clone()))?;
        self.remember_project(root, &fresh);
        Some(fresh)
    }

    /// The repository's hooks as last read, kept with the last folder when it is in it.
    fn remember_project(&self, root: &Path, read: &(Option<Arc<Project>>, Option<String>)) {
        if let Some(last) = lock(&self.last).as_mut()
            && last.roots.len() == 1
            && last.roots[0] == root
        {
            last.project = match read {
                (Some(project), None) => Some((Instant::now(), project.clone())),
                _ => None,
            };
        }
    }

    /// The repository's hooks, read again when its file changed; a bad edit keeps the last good ones
    /// and is journaled. On the disk: for a blocking thread.
    pub fn project(&self, root: &Path) -> (Option<Arc<Project>>, Option<String>) {
        let read = self.project_read(root);
        self.remember_project(root, &read);
        read
    }

    fn project_read(&self, root: &Path) -> (Option<Arc<Project>>, Option<String>) {
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

    /// Whether a fire at `moment` has something of `project`'s to report though none of its hooks
    /// fits: a hook the user trusted changed since (an `enabled = false` or a matcher added is a change
    /// like any other), or taken out of the file. From the store as last read (each lookup of a folder
    /// reads it again when it changed): no disk, for the shared thread.
    pub fn to_report(&self, project: &Project, moment: &str) -> bool {
        let store = lock(&self.store).1.clone();
        let keys: Vec<&str> = project.hooks.iter().map(|p| p.key.as_str()).collect();
        project.hooks.iter().any(|pinned| {
            pinned.hook.moment == moment
                && store
                    .trusted(&project.root, &pinned.key)
                    .is_some_and(|digest| digest != pinned.digest)
        }) || !gone(&store, &project.root, moment, &keys).is_empty()
    }

    /// What the user trusted, read again when the store changed; read outside the lock: [`Projects::to_report`] takes it on the shared thread, which must never
    /// wait for a read of the disk.
    fn store(&self) -> Arc<Store> {
        let path = crate::layers::trust::store_path();
        let now = stamp(&path);
        {
            let seen = lock(&self.store);
            if seen.2 && seen.0 == now {
                return seen.1.clone();
            }
        }
        let store = Arc::new(Store::load(&path));
        *lock(&self.store) = (now, store.clone(), true);
        store
    }

    /// Which of `project`'s hooks a fire at `moment` would run: enabled, on the moment, fitting `fits`
    /// (the agent, the matcher), and not the same as one of `others` (another layer's: the same hook
    /// runs once). Pure and cheap: for the shared thread.
    pub fn candidates(
        project: &Project,
        moment: &str,
        others: &[Arc<Hook>],
        fits: impl Fn(&Hook) -> bool,
    ) -> Vec<usize> {
        project
            .hooks
            .iter()
            .enumerate()
            .filter(|(_, pinned)| {
                pinned.hook.moment == moment
                    && pinned.hook.enabled
                    && fits(&pinned.hook)
                    && !others.iter().any(|other| other.runs_as(&pinned.hook))
            })
            .map(|(n, _)| n)
            .collect()
    }

    /// The repository's hooks for a fire at `moment`, of `chosen` ([`Projects::candidates`]): those
    /// trusted, pointed at copies of the bytes just digested, and those pending, with why; and for a
    /// session's start, how many of its hooks wait for trust. Reads the disk: for a blocking thread.
    pub fn judge(&self, project: &Project, moment: &str, chosen: &[usize]) -> ForFire {
        let store = self.store();
        let mut out = ForFire::default();
        let mut waiting = 0;
        for (n, pinned) in project.hooks.iter().enumerate() {
            let trusted = store.trusted(&project.root, &pinned.key);
            if !chosen.contains(&n) {
                if trusted != Some(pinned.digest.as_str()) {
                    waiting += 1;
                }
                // A trusted hook changed so that it no longer fits (switched off, a matcher added)
                // is a change like any other: pending, and said at every fire of its moment.
                if pinned.hook.moment == moment
                    && trusted.is_some_and(|digest| {
                        digest != pinned.digest
                            && digest != pinned.digest_now(project.settings.is_sequential(moment))
                    })
                {
                    out.pending.push(Held {
                        name: pinned.hook.name.clone(),
                        why: format!(
                            "pending: changed since it was trusted (its definition or a file it runs); not run until the user runs `hookd trust {}`",
                            project.root.display()
                        ),
                    });
                }
                continue;
            }
            // Read and digested once, now, just before it runs; and what runs is a copy of the bytes
            // digested: a script changed after it was trusted is pending from this fire on, and one
            // changed after this digest changes nothing of what runs.
            let snapshot = snapshot::take(pinned, project.settings.is_sequential(moment));
            let why = match trusted {
                Some(digest) if digest == snapshot.digest => {
                    match snapshot.runnable(pinned, &self.copies) {
                        Ok(hook) => {
                            out.run.push(hook);
                            continue;
                        }
                        Err(why) => why,
                    }
                }
                Some(_) => format!(
                    "pending: changed since it was trusted (its definition or a file it runs); not run until the user runs `hookd trust {}`",
                    project.root.display()
                ),
                None => format!(
                    "pending: a repository's hook not trusted yet; not run until the user runs `hookd trust {}`",
                    project.root.display()
                ),
            };
            waiting += 1;
            out.pending.push(Held {
                name: pinned.hook.name.clone(),
                why,
            });
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

    /// A fire from the repository at `root` whose hooks could not be known (`why`: not read, or not
    /// in time): said in its report and its journal line, never passed over in silence.
    pub fn unknown(&self, root: &Path, why: &str) -> ForFire {
        let file = root.join(project::FOLDER).join(project::FILE);
        tracing::warn!(file = %file.display(), "a repository's hooks did not run: {why}");
        ForFire {
            pending: vec![Held {
                name: crate::layers::fold::qualified(
                    crate::settings::Layer::Project,
                    project::FILE,
                ),
                why: format!(
                    "not run: the repository's hooks ({}) could not be read: {why}",
                    file.display()
                ),
            }],
            ..ForFire::default()
        }
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

    /// [`Projects::states`] for `status`, on a blocking thread and within `wait`: the digest reads
    /// every pending hook's scripts (up to 16 MiB each), and any client of the socket may ask, so on
    /// the daemon's shared thread it would hold every fire back. One digest at a time (a `status` that
    /// comes meanwhile waits for its turn, within the same `wait`); past `wait`, each repository as
    /// memory has it, its pending hooks said to be unknown, and why.
    pub async fn states_within(self: &Arc<Self>, wait: Duration) -> Vec<ProjectState> {
        if lock(&self.loaded).is_empty() {
            return Vec::new();
        }
        let projects = self.clone();
        let digest = async move {
            // The turn goes with the work, not with this wait: a digest given up on still holds it
            // until it ends, so that no second one starts beside it.
            let turn = projects.digesting.clone().lock_owned().await;
            tokio::task::spawn_blocking(move || {
                let states = projects.states();
                drop(turn);
                states
            })
            .await
        };
        let why = match tokio::time::timeout(wait, digest).await {
            Ok(Ok(states)) => return states,
            Ok(Err(e)) => format!("digesting their scripts failed ({e})"),
            Err(_) => format!(
                "their scripts were not digested within {:.1} s (very large scripts, a slow file system, or another `status` digesting them)",
                wait.as_secs_f64()
            ),
        };
        // Debug, not warn: any client may ask again and again, and `status` itself says it.
        tracing::debug!("status: the repositories' pending hooks are not known: {why}");
        self.remembered_states(&why)
    }

    /// Each repository as memory has it, with no disk: its hooks counted, whether they are pending
    /// not known (`why`).
    fn remembered_states(&self, why: &str) -> Vec<ProjectState> {
        let mut states: Vec<ProjectState> = lock(&self.loaded)
            .iter()
            .map(|(root, loaded)| ProjectState {
                root: root.clone(),
                hooks: loaded.project.as_ref().map_or(0, |p| p.hooks.len()),
                pending: Vec::new(),
                error: loaded.error.clone(),
                pending_unknown: Some(why.to_string()),
            })
            .collect();
        states.sort_by(|a, b| a.root.cmp(&b.root));
        states
    }

    /// The repositories fires came from, for `status` and `doctor`. Reads the trust store and digests
    /// every hook's scripts: for a blocking thread ([`Projects::states_within`]).
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
                    pending_unknown: None,
                }
            })
            .collect();
        states.sort_by(|a, b| a.root.cmp(&b.root));
        states
    }
}

/// The hooks of `moment` the user trusted in the repository at `root` that its file no longer holds
/// (`keys`: those it holds), each held with why: what was trusted to refuse must not vanish without a
/// word when the agent takes it out of the file. `hookd trust` again (or `--revoke`) accepts it.
fn gone(store: &Store, root: &Path, moment: &str, keys: &[&str]) -> Vec<Held> {
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
            Some(Held {
                name: crate::layers::fold::qualified(crate::settings::Layer::Project, name),
                why: format!(
                    "pending: removed from the repository's hooks since the user trusted it (its file changed or is gone); not run, and said at every fire until the user runs `hookd trust {}` (or `hookd trust --revoke {}`)",
                    root.display(),
                    root.display()
                ),
            })
        })
        .collect()
}
