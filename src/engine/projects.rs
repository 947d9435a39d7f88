//! A repository's hooks for a fire (`layers::project`): the repository found from the event's `cwd`
//! (remembered per folder, so that a fire from a folder with none costs one lookup), its hooks file read
//! when a fire first comes from it and again whenever it changed, and each hook run only while its
//! digest is the one the user trusted (`hookd trust`), from copies of the very bytes digested
//! (`layers::snapshot`). A pending hook is never silent: its fire's report and the journal name it,
//! `status` lists it, and a session that starts there is told.
//!
//! What touches the disk (the hooks file read and parsed, scripts of up to 16 MiB read and digested,
//! their copies written) runs on a blocking thread, never on the daemon's shared one; a fire from the
//! repository waits for it (within [`crate::limits::PROJECT_READ_WAIT`] in all, nested repositories
//! read side by side), and a read that fails or takes longer is said in the fire's report and the
//! journal, never passed over in silence. What a fire from a folder it saw last asks is answered from
//! memory, on the shared thread, without a lookup: what it needs ([`Attention`]) is worked out when the
//! repository's hooks are read, and again whenever the trust store was read anew since
//! (`Projects::store` numbers each read that found it changed).
//! `status` digests every remembered repository's hooks on a blocking thread too, one digest at a time
//! and within [`crate::limits::STATUS_DIGEST_WAIT`] (`Projects::states_within`): any client may ask
//! for it, again and again, and a fire must never wait behind it. The trust store is read without
//! waiting (a FIFO in its place is refused) and outside its lock, which the shared thread takes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
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

/// A file's [`Stamp`], and that of the file it leads to when it is a symbolic link: a link's own stamp
/// does not change when the file it names is edited (a hooks file linked to another file of the
/// repository, a trust store linked to the user's own copy), and an edit there must be seen as one
/// of the file itself.
type Stamps = (Stamp, Stamp);

/// [`Stamps`] of `path`: its own, and its target's (links followed).
fn stamps_through(path: &Path) -> Stamps {
    use std::os::unix::fs::MetadataExt;
    let target = std::fs::metadata(path).ok().map(|meta| {
        (
            meta.dev(),
            meta.ino(),
            meta.size(),
            meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
            meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
        )
    });
    (stamp(path), target)
}

/// A folder's repositories (the nearest first), when they were looked for, and the number of the trust
/// store they were looked for under ([`Seen::number`]: those the user trusted whose hooks file is gone
/// are among them).
type Found = (Instant, u64, Vec<PathBuf>);

/// The repositories fires came from, their hooks, and what the user trusted.
#[derive(Debug)]
pub(crate) struct Projects {
    /// The folder the last fire came from, and what was found for it: most fires of a session come
    /// from the same one, answered here without hashing a path.
    last: Mutex<Option<Last>>,
    /// Each folder's repositories.
    roots: Mutex<HashMap<String, Found>>,
    loaded: Mutex<HashMap<PathBuf, Loaded>>,
    store: Mutex<Seen>,
    /// The number of the trust store as last read ([`Seen::number`]), for what was worked out from it
    /// to be told stale without the store's lock: whatever was remembered under an earlier one is
    /// worked out again before a fire takes it.
    trust: AtomicU64,
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

/// The trust store as last read: the file's stamp, what it holds, and its number (one more at each
/// read that found it changed; 0 before the first).
#[derive(Debug, Default)]
struct Seen {
    stamp: Stamps,
    store: Arc<Store>,
    number: u64,
}

/// The folder the last fire came from: its repository (when it has one), and that repository's hooks
/// as last read well.
#[derive(Debug)]
struct Last {
    cwd: String,
    found: Instant,
    /// The trust store its repositories were looked for under.
    trust: u64,
    /// Its repositories, the nearest first ([`crate::layers::project::find_all`]).
    roots: Vec<PathBuf>,
    /// The hooks of its one repository, when it is in one alone.
    project: Option<(Instant, Hooks)>,
}

/// A repository's hooks as last read well, with what a fire needs of them under the trust store as
/// last read ([`Attention`]).
#[derive(Debug, Clone)]
pub(crate) struct Hooks {
    pub project: Arc<Project>,
    attention: Arc<Attention>,
}

impl Hooks {
    /// Whether a fire at `moment` has something of the repository's to report though none of its hooks
    /// fits: a hook the user trusted changed since (an `enabled = false` or a matcher added is a
    /// change like any other), or taken out of the file.
    pub fn to_report(&self, moment: &str) -> bool {
        self.attention.reported.iter().any(|at| **at == *moment)
    }
}

/// What fires need of a repository's hooks, worked out once per read of its hooks file and per read of
/// the trust store, so that a fire from the folder the last one came from is answered without a lock
/// of the store or a lookup of its root: the moments with a hook switched on, and those with
/// something to report. Worked out again, before any fire takes it, whenever the store was read anew
/// (`hookd trust`, `--revoke`, the file replaced): an answer left from an earlier store would report a
/// revoked hook, or pass over one to report in silence.
#[derive(Debug)]
struct Attention {
    /// The number of the trust store it was worked out under ([`Seen::number`]).
    trust: u64,
    /// The moments at which one of its hooks is switched on.
    hooked: Vec<Box<str>>,
    /// The moments at which something is to be reported whether or not a hook fits
    /// ([`Hooks::to_report`]).
    reported: Vec<Box<str>>,
}

impl Attention {
    fn of(project: &Project, store: &Store, trust: u64) -> Attention {
        let mut hooked: Vec<Box<str>> = Vec::new();
        let mut reported: Vec<Box<str>> = Vec::new();
        let add = |to: &mut Vec<Box<str>>, moment: &str| {
            if !to.iter().any(|at| **at == *moment) {
                to.push(moment.into());
            }
        };
        for pinned in &project.hooks {
            if pinned.hook.enabled {
                add(&mut hooked, &pinned.hook.moment);
            }
            if store
                .trusted(&project.root, &pinned.key)
                .is_some_and(|digest| digest != pinned.digest)
            {
                add(&mut reported, &pinned.hook.moment);
            }
        }
        for (moment, _) in gone_keys(store, project) {
            add(&mut reported, moment);
        }
        Attention {
            trust,
            hooked,
            reported,
        }
    }

    /// Nothing of the repository's to run or report at `moment`.
    fn idle_at(&self, moment: &str) -> bool {
        !self
            .hooked
            .iter()
            .chain(&self.reported)
            .any(|at| **at == *moment)
    }
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
    stamps: (Stamps, Stamp),
    /// When the stamps were taken.
    looked: Instant,
    /// The last good read (a bad edit keeps it), `None` before any.
    project: Option<Hooks>,
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
            trust: AtomicU64::new(0),
            skipped: Mutex::default(),
            copies,
            digesting: Arc::default(),
        }
    }

    /// What memory tells of a fire at `moment` from `cwd`, with one lock and no lookup when the fire
    /// comes from the folder the last one came from: what it needs was worked out when the folder's
    /// repository was remembered ([`Attention`]), and is not taken if the trust store was read anew
    /// since.
    pub fn quick(&self, cwd: &str, moment: &str) -> Quick {
        let last = lock(&self.last);
        let Some(last) = last.as_ref().filter(|last| last.cwd == cwd) else {
            return Quick::Look(None);
        };
        let now = Instant::now();
        let trust = self.trust.load(Ordering::Acquire);
        if now.duration_since(last.found) >= REMEMBERED || last.trust != trust {
            return Quick::Look(None);
        }
        let [root] = last.roots.as_slice() else {
            if last.roots.is_empty() {
                return Quick::Nothing;
            }
            return Quick::Look(Some(last.roots.clone()));
        };
        match &last.project {
            Some((looked, hooks))
                if now.duration_since(*looked) < LOOKED_AT
                    && moment != crate::tables::moment::SESSION_START
                    && hooks.attention.trust == trust
                    && hooks.attention.idle_at(moment) =>
            {
                Quick::NoneAt(root.clone())
            }
            _ => Quick::Look(Some(vec![root.clone()])),
        }
    }

    /// The repositories at `cwd`, remembered per folder. It may look at the disk: not on the shared
    /// thread unless remembered.
    pub fn roots_of(&self, cwd: &str) -> Vec<PathBuf> {
        let (trust, roots) = self.roots_of_folder(cwd);
        *lock(&self.last) = Some(Last {
            cwd: cwd.to_string(),
            found: Instant::now(),
            trust,
            roots: roots.clone(),
            project: None,
        });
        roots
    }

    /// The repository at `cwd` from memory, when it is remembered, recent and looked for under the
    /// trust store as last read (and kept as the last folder's).
    pub fn remembered_roots(&self, cwd: &str) -> Option<Vec<PathBuf>> {
        let (found, trust, roots) = lock(&self.roots)
            .get(cwd)
            .filter(|(at, trust, _)| {
                at.elapsed() < REMEMBERED && *trust == self.trust.load(Ordering::Acquire)
            })
            .cloned()?;
        *lock(&self.last) = Some(Last {
            cwd: cwd.to_string(),
            found,
            trust,
            roots: roots.clone(),
            project: None,
        });
        Some(roots)
    }

    /// Those of [`project::roots`]: whose hooks file is found from `cwd`, and those the user trusted
    /// that hold it but whose hooks file is gone; with the number of the trust store they were looked
    /// for under.
    fn roots_of_folder(&self, cwd: &str) -> (u64, Vec<PathBuf>) {
        let now = Instant::now();
        if let Some((at, trust, roots)) = lock(&self.roots).get(cwd)
            && now.duration_since(*at) < REMEMBERED
            && *trust == self.trust.load(Ordering::Acquire)
        {
            return (*trust, roots.clone());
        }
        let (store, trust) = self.store();
        let roots = project::roots(
            Path::new(cwd),
            &crate::paths::home(),
            store.projects.keys().map(PathBuf::from),
        );
        let mut remembered = lock(&self.roots);
        if remembered.len() >= MAX_FOLDERS {
            remembered.clear();
        }
        remembered.insert(cwd.to_string(), (now, trust, roots.clone()));
        (trust, roots)
    }

    /// The repository's hooks when they were looked at within [`LOOKED_AT`]: no disk.
    pub fn fresh(&self, root: &Path) -> Option<(Option<Hooks>, Option<String>)> {
        let (fresh, looked) = {
            let mut loaded = lock(&self.loaded);
            let loaded = loaded
                .get_mut(root)
                .filter(|loaded| loaded.looked.elapsed() < LOOKED_AT)?;
            (self.current(loaded), loaded.looked)
        };
        self.remember_project(root, &fresh, looked);
        Some(fresh)
    }

    /// The repository's hooks as last read, kept with the last folder when it is in it, as of when
    /// its file was `looked` at: memory answers from them only within [`LOOKED_AT`] of that look (as
    /// of the fire that remembered them, a change of the file would wait up to twice as long).
    fn remember_project(
        &self,
        root: &Path,
        read: &(Option<Hooks>, Option<String>),
        looked: Instant,
    ) {
        if let Some(last) = lock(&self.last).as_mut()
            && last.roots.len() == 1
            && last.roots[0] == root
        {
            last.project = match read {
                (Some(hooks), None) => Some((looked, hooks.clone())),
                _ => None,
            };
        }
    }

    /// What a fire gets of `loaded`: its hooks, their [`Attention`] worked out again first when the
    /// trust store was read anew since. No disk (the store as last read).
    fn current(&self, loaded: &mut Loaded) -> (Option<Hooks>, Option<String>) {
        if let Some(hooks) = &mut loaded.project
            && hooks.attention.trust != self.trust.load(Ordering::Acquire)
        {
            hooks.attention = Arc::new(self.attention(&hooks.project));
        }
        (loaded.project.clone(), loaded.error.clone())
    }

    /// [`Attention`] of `project` under the trust store as last read. No disk.
    fn attention(&self, project: &Project) -> Attention {
        let (store, trust) = {
            let seen = lock(&self.store);
            (seen.store.clone(), seen.number)
        };
        Attention::of(project, &store, trust)
    }

    /// The repository's hooks, read again when its file changed; a bad edit keeps the last good ones
    /// and is journaled. On the disk: for a blocking thread.
    pub fn project(&self, root: &Path) -> (Option<Hooks>, Option<String>) {
        let (read, looked) = self.project_read(root);
        self.remember_project(root, &read, looked);
        read
    }

    /// [`Projects::project`], with when the file was looked at.
    fn project_read(&self, root: &Path) -> ((Option<Hooks>, Option<String>), Instant) {
        let file = root.join(project::FOLDER).join(project::FILE);
        if let Some(loaded) = lock(&self.loaded).get_mut(root)
            && loaded.looked.elapsed() < LOOKED_AT
        {
            return (self.current(loaded), loaded.looked);
        }
        // The trust store looked at too, as often as the hooks file: what is to be said of the hooks
        // ([`Attention`]) is worked out under the store as it is now, not as a fire last read it (a
        // trust given, or a store put back, is in force as soon as an edit of the file is).
        self.store();
        let stamps = (stamps_through(&file), stamp(&root.join(project::FOLDER)));
        if let Some(loaded) = lock(&self.loaded).get_mut(root)
            && loaded.stamps == stamps
        {
            loaded.looked = Instant::now();
            return (self.current(loaded), loaded.looked);
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
                let hooks = Hooks {
                    attention: Arc::new(self.attention(&project)),
                    project: Arc::new(project),
                };
                (Some(hooks), None)
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
        let mut read = Loaded {
            stamps,
            looked: Instant::now(),
            project,
            error,
        };
        let answer = (self.current(&mut read), read.looked);
        loaded.insert(root.to_path_buf(), read);
        answer
    }

    /// What the user trusted, read again when the store changed, with its number ([`Seen::number`]);
    /// read outside the lock: [`Projects::quick`] and [`Projects::fresh`] take it on the shared thread,
    /// which must never wait for a read of the disk. Every read that finds it changed is numbered anew,
    /// and so makes stale whatever was worked out from the one before ([`Attention`], the remembered
    /// roots): this is the one place the daemon's answer to "is this hook trusted" changes.
    fn store(&self) -> (Arc<Store>, u64) {
        let path = crate::layers::trust::store_path();
        let now = stamps_through(&path);
        {
            let seen = lock(&self.store);
            if seen.number > 0 && seen.stamp == now {
                return (seen.store.clone(), seen.number);
            }
        }
        let store = Arc::new(Store::load(&path));
        let mut seen = lock(&self.store);
        seen.stamp = now;
        seen.store = store.clone();
        seen.number += 1;
        self.trust.store(seen.number, Ordering::Release);
        (store, seen.number)
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
        let (store, _) = self.store();
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
                        why: changed_since_trusted(&project.root),
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
                Some(_) => changed_since_trusted(&project.root),
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
        let gone = gone(&store, project, moment);
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
                hooks: loaded.project.as_ref().map_or(0, |h| h.project.hooks.len()),
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
        let (store, _) = self.store();
        let mut states: Vec<ProjectState> = loaded
            .into_iter()
            .map(|(root, loaded)| {
                let (hooks, pending) = match loaded.project.as_ref().map(|h| &h.project) {
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

/// Why a hook the user trusted is pending: it changed since (its definition, or a file it runs).
fn changed_since_trusted(root: &Path) -> String {
    format!(
        "pending: changed since it was trusted (its definition or a file it runs); not run until the user runs `hookd trust {}`",
        root.display()
    )
}

/// The hooks the user trusted in `project`'s repository that its file no longer holds, each as its
/// moment and its name (a trust store's key is `Moment/name`, and no moment's name holds a `/`).
fn gone_keys<'a>(
    store: &'a Store,
    project: &'a Project,
) -> impl Iterator<Item = (&'a str, &'a str)> {
    store
        .projects
        .get(&*project.root.to_string_lossy())
        .into_iter()
        .flat_map(|trusted| trusted.keys())
        .filter(|key| !project.hooks.iter().any(|pinned| pinned.key == **key))
        .filter_map(|key| key.split_once('/'))
}

/// The hooks of `moment` the user trusted in `project`'s repository that its file no longer holds
/// ([`gone_keys`]), each held with why: what was trusted to refuse must not vanish without a word when
/// the agent takes it out of the file. `hookd trust` again (or `--revoke`) accepts it.
fn gone(store: &Store, project: &Project, moment: &str) -> Vec<Held> {
    let root = &project.root;
    gone_keys(store, project)
        .filter(|(at, _)| *at == moment)
        .map(|(_, name)| Held {
            name: crate::layers::fold::qualified(crate::settings::Layer::Project, name),
            why: format!(
                "pending: removed from the repository's hooks since the user trusted it (its file changed or is gone); not run, and said at every fire until the user runs `hookd trust {}` (or `hookd trust --revoke {}`)",
                root.display(),
                root.display()
            ),
        })
        .collect()
}
