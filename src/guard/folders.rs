//! Where a command runs and what a path it names is: each command of a line with the folders it may
//! run in (a `cd` followed where it surely holds), and a path placed against the root, the home folder,
//! the project and the temporary folders. `cd build && rm -rf *` empties `build`; `cd .. && rm -rf
//! project` deletes the project; `(cd build); rm -rf *` empties the project, since the `cd` stayed in
//! its subshell.

use std::path::{Component, Path, PathBuf};

use crate::shell::{Command, Word};

use super::call::Call;

/// A call's commands, each with the folders it may run in.
pub struct Seen<'a> {
    pub call: &'a Call,
    pub commands: &'a [Command],
    /// For each command, every folder it may run in: one where each `cd` before it surely ran, more
    /// where one may not have.
    pub folders: Vec<Vec<PathBuf>>,
}

impl<'a> Seen<'a> {
    pub fn new(call: &'a Call, commands: &'a [Command]) -> Seen<'a> {
        let mut folders = Vec::with_capacity(commands.len());
        let mut now: Vec<PathBuf> = vec![call.cwd.clone()];
        for command in commands {
            folders.push(now.clone());
            let program = command.program();
            if !matches!(program, "cd" | "pushd") {
                continue;
            }
            let target = command
                .args()
                .iter()
                .find(|w| !w.text.starts_with('-') || w.text == "-");
            let moved: Vec<PathBuf> = match target {
                None => vec![call.home.clone()],
                Some(word) if word.known && !word.glob && word.text != "-" => now
                    .iter()
                    .map(|folder| absolute(&word.text, folder, &call.home))
                    .collect(),
                // Where to, cannot be known: the folders stay as they were, and are judged as before.
                Some(_) => continue,
            };
            // A cd that surely runs, at the line's own level, moves what follows. One that may not run
            // (after `||`, in an `if`) or may not carry (in a subshell, a substitution, under a wrapper:
            // `( cd ..; rm -rf build )` still deletes in `..`) leaves both folders possible, and what
            // follows is judged in each: the guard takes the side that refuses.
            if command.depth == 0 && !command.subshell && !command.conditional {
                now = moved;
            } else {
                for folder in moved {
                    if !now.contains(&folder) {
                        now.push(folder);
                    }
                }
            }
            now.truncate(8);
        }
        Seen {
            call,
            commands,
            folders,
        }
    }

    /// Each command with the folders it may run in.
    pub fn each(&self) -> impl Iterator<Item = (&Command, &[PathBuf])> {
        self.commands
            .iter()
            .zip(self.folders.iter().map(Vec::as_slice))
    }

    /// Where `word` points, run in `folder`.
    pub fn place(&self, word: &Word, folder: &Path) -> Place {
        // A line that sets TMPDIR itself (`TMPDIR=/ rm -rf $TMPDIR/x`, `env TMPDIR= ...`) makes
        // `$TMPDIR/` no temporary folder's: whatever it is set to, or the root when empty.
        if !word.known && tmpdir_word(&word.text) && self.sets_tmpdir() {
            // Set to a temporary folder (`TMPDIR=/tmp/x ...`), it is one still.
            return match self.tmpdir_set_to() {
                Some(value)
                    if temp_folders()
                        .iter()
                        .any(|t| clean(Path::new(&value)).starts_with(t))
                        && !value.split('/').any(|part| part == "..") =>
                {
                    Place::Temp(PathBuf::from(value))
                }
                _ => Place::RootIfEmpty(word.text.clone()),
            };
        }
        place(word, folder, &self.call.cwd, &self.call.home)
    }

    /// What the line sets TMPDIR to, when it sets it once, to a plain absolute path.
    fn tmpdir_set_to(&self) -> Option<String> {
        let super::call::Does::Shell(line) = &self.call.does else {
            return None;
        };
        let mut sets = line.match_indices("TMPDIR=");
        let (at, _) = sets.next()?;
        if sets.next().is_some() {
            return None;
        }
        let value: String = line[at + "TMPDIR=".len()..]
            .chars()
            .take_while(|c| !c.is_whitespace() && !";&|".contains(*c))
            .collect();
        (value.starts_with('/') && !value.contains(['$', '`', '"', '\''])).then_some(value)
    }

    /// Whether the call's command line assigns TMPDIR anywhere.
    fn sets_tmpdir(&self) -> bool {
        match &self.call.does {
            super::call::Does::Shell(line) => line.contains("TMPDIR="),
            super::call::Does::Files(_) => false,
        }
    }
}

/// What a path is, for a delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// `/`, or everything in it (`/*`).
    Root,
    /// The home folder or a folder above it (`/home`).
    HomeOrAbove(PathBuf),
    /// A folder right under `/` (`/usr`, `/etc`), or everything in one.
    TopLevel(PathBuf),
    /// The project (the folder the call was made in) or a folder above it, or everything in one.
    ProjectOrAbove(PathBuf),
    /// Inside the project.
    Inside(PathBuf),
    /// A temporary folder or inside one (`/tmp`, `/var/tmp`, `/dev/shm`, `$TMPDIR`).
    Temp(PathBuf),
    /// Anywhere else.
    Outside(PathBuf),
    /// What cannot be known before it runs, where an empty value would make it the root (`"$DIR/"`,
    /// `$DIR/*`): the word as written.
    RootIfEmpty(String),
    /// What cannot be known before it runs (`$X`, `$(cmd)`): the word as written.
    Unknown(String),
}

/// `text` as an absolute path, cleaned of `.` and `..` (as the kernel would resolve it without links),
/// `~` expanded.
pub fn absolute(text: &str, folder: &Path, home: &Path) -> PathBuf {
    let expanded = if text == "~" {
        home.to_path_buf()
    } else if let Some(rest) = text.strip_prefix("~/") {
        home.join(rest)
    } else {
        folder.join(text)
    };
    clean(&expanded)
}

/// `path` without `.` and `..` (`..` at the root stays at the root).
pub fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(part) => out.push(part),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// The temporary folders, where anything may be deleted.
fn temp_folders() -> Vec<PathBuf> {
    let mut folders = vec![
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
        PathBuf::from("/dev/shm"),
    ];
    if let Some(tmpdir) = std::env::var_os("TMPDIR").filter(|t| !t.is_empty()) {
        let tmpdir = clean(Path::new(&tmpdir));
        if tmpdir.components().count() > 2 {
            folders.push(tmpdir);
        }
    }
    folders
}

/// Whether `text` begins with the temporary folder's variable (`$TMPDIR/`, `"${TMPDIR}/`).
fn tmpdir_word(text: &str) -> bool {
    ["$TMPDIR/", "${TMPDIR}/", "\"$TMPDIR/", "\"${TMPDIR}/"]
        .iter()
        .any(|prefix| text.starts_with(prefix))
}

/// Where `word` points when run in `folder`, the call having been made in `project`. A glob counts as
/// the folder it reaches into (`/*/*/` is the root's content, `./*` the project's, `build/*.o` inside
/// `build`).
pub fn place(word: &Word, folder: &Path, project: &Path, home: &Path) -> Place {
    let text = word.text.as_str();
    // `$TMPDIR/x` is a temporary folder's, whatever TMPDIR is (and, unset, `/x` is no folder of the
    // user's worth a refusal: the temporary folder is what the writer meant).
    // One that climbs out of it (`$TMPDIR/../x`) is not.
    if tmpdir_word(text) && !text.split('/').any(|part| part == "..") {
        return Place::Temp(PathBuf::from(text));
    }
    // `~someone/x`: another user's home, somewhere outside.
    if text.starts_with('~') && !text.starts_with("~/") && text != "~" {
        let user = text[1..].split('/').next().unwrap_or_default();
        return Place::Outside(Path::new("/home").join(user));
    }
    if !word.known {
        let bare = text.trim_start_matches('"');
        // `"$(pwd)/build"`: pwd prints the folder it runs in, never nothing; the rest is placed from
        // there (when it is known itself).
        if let Some(rest) = ["$(pwd)", "`pwd`"]
            .iter()
            .find_map(|pwd| bare.strip_prefix(pwd))
            .map(|rest| rest.trim_end_matches('"'))
            .filter(|rest| !rest.contains(['$', '`', '"', '\'']))
        {
            let here = Word {
                text: format!("{}{rest}", folder.display()),
                known: true,
                glob: word.glob,
            };
            return place(&here, folder, project, home);
        }
        // "$DIR/", "$DIR/*", ${DIR}/x: the root, when DIR is empty or unset.
        let var_then_slash = bare.starts_with('$')
            && bare
                .find('/')
                .is_some_and(|slash| !bare[..slash].contains(' ') && !bare[..slash].contains(":-"));
        return if var_then_slash {
            Place::RootIfEmpty(text.to_string())
        } else {
            Place::Unknown(text.to_string())
        };
    }
    let reached = if word.glob {
        // The folder the first glob reaches into: the components before it.
        let first = text.find(['*', '?', '[']).unwrap_or(text.len());
        let fixed = &text[..first];
        let folder_part = fixed.rfind('/').map_or("", |slash| &fixed[..=slash]);
        let within = if folder_part.is_empty() {
            "."
        } else {
            folder_part
        };
        absolute(within, folder, home)
    } else {
        absolute(text, folder, home)
    };
    // A glob whose first component is all pattern reaches every entry of the folder (`*`, `/*`,
    // `.*`, `*/`): as wide as the folder itself. One with a fixed part (`build/*.o`, `~/x*`) is narrower,
    // and is placed as an entry of that folder would be.
    let whole = !word.glob || {
        let first = text.find(['*', '?', '[']).unwrap_or(0);
        let start = text[..first].rfind('/').map_or(0, |s| s + 1);
        let component_end = text[start..].find('/').map_or(text.len(), |e| start + e);
        text[start..component_end]
            .chars()
            .all(|c| matches!(c, '*' | '?' | '.'))
    };
    // A relative path that leaves the project (`../other`, `build` after `cd ..`) is the agent
    // reaching out of its work, wherever that lies: a project in a temporary folder does not make its
    // neighbours scratch. A project elsewhere has no neighbours there: a relative path in a temporary
    // folder is one the line went to (`cd /tmp/x && rm -rf *`), as scratch as `rm -rf /tmp/x/*`.
    let relative = !text.starts_with('/') && !text.starts_with('~');
    let escapes = relative && !reached.starts_with(project);
    let project_in_temp = temp_folders().iter().any(|t| project.starts_with(t));
    classify(
        &reached,
        whole,
        project,
        home,
        !(escapes && project_in_temp),
    )
}

/// What `path` is; `whole`: the delete takes the folder itself (or all of it), not only some of its
/// entries; `temp_counts`: a temporary folder may be deleted in.
fn classify(path: &Path, whole: bool, project: &Path, home: &Path, temp_counts: bool) -> Place {
    let depth = path.components().count() - 1;
    if depth == 0 {
        return if whole {
            Place::Root
        } else {
            Place::TopLevel(path.to_path_buf())
        };
    }
    if home.starts_with(path) && home != Path::new("/") {
        return Place::HomeOrAbove(path.to_path_buf());
    }
    // The project and what holds it come before the temporary folders: a project in /tmp is still the
    // project (`rm -rf .` there deletes it), and so is /tmp above it.
    if project.starts_with(path) && (whole || path != project) {
        return Place::ProjectOrAbove(path.to_path_buf());
    }
    // A call made at the root or in a top-level folder has no project to keep its deletes inside:
    // `rm -rf build` run in `/` deletes a top-level folder.
    // Nor does one made in the home folder (or above it): the home folder is no project.
    let project_counts = project.components().count() > 2 && !home.starts_with(project);
    if project_counts && path.starts_with(project) {
        return Place::Inside(path.to_path_buf());
    }
    // A home that lives in a temporary folder (a test's, a sandbox's) is a home still: what is in it is
    // the user's, not scratch.
    let in_home_in_temp = path.starts_with(home)
        && home.components().count() > 2
        && temp_folders().iter().any(|t| home.starts_with(t));
    if temp_counts && !in_home_in_temp && temp_folders().iter().any(|t| path.starts_with(t)) {
        return Place::Temp(path.to_path_buf());
    }
    if depth == 1 && whole {
        return Place::TopLevel(path.to_path_buf());
    }
    if !whole && home == path {
        return Place::HomeOrAbove(path.to_path_buf());
    }
    Place::Outside(path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(text: &str) -> Word {
        Word {
            text: text.to_string(),
            known: !text.contains('$'),
            glob: text.contains(['*', '?', '[']),
        }
    }

    fn at(text: &str) -> Place {
        place(
            &word(text),
            Path::new("/home/u/p"),
            Path::new("/home/u/p"),
            Path::new("/home/u"),
        )
    }

    #[test]
    fn paths_are_placed_against_root_home_project_and_temp() {
        assert_eq!(at("/"), Place::Root);
        assert_eq!(at("/*/*/"), Place::Root);
        assert_eq!(at("/usr"), Place::TopLevel("/usr".into()));
        assert_eq!(at("/usr/*"), Place::TopLevel("/usr".into()));
        assert_eq!(at("~"), Place::HomeOrAbove("/home/u".into()));
        assert_eq!(at("/home"), Place::HomeOrAbove("/home".into()));
        assert_eq!(at("~/*"), Place::HomeOrAbove("/home/u".into()));
        assert_eq!(at("."), Place::ProjectOrAbove("/home/u/p".into()));
        assert_eq!(at("*"), Place::ProjectOrAbove("/home/u/p".into()));
        assert_eq!(at("./*"), Place::ProjectOrAbove("/home/u/p".into()));
        assert_eq!(at(".."), Place::HomeOrAbove("/home/u".into()));
        assert_eq!(at("build"), Place::Inside("/home/u/p/build".into()));
        assert_eq!(at("build/*.o"), Place::Inside("/home/u/p/build".into()));
        assert_eq!(at("*.o"), Place::Inside("/home/u/p".into()));
        assert_eq!(at("../other"), Place::Outside("/home/u/other".into()));
        assert_eq!(at("~/projects"), Place::Outside("/home/u/projects".into()));
        assert_eq!(at("/tmp"), Place::Temp("/tmp".into()));
        assert_eq!(at("/tmp/x/*"), Place::Temp("/tmp/x".into()));
        assert_eq!(at("\"$DIR/\""), Place::RootIfEmpty("\"$DIR/\"".into()));
        assert_eq!(at("$DIR/*"), Place::RootIfEmpty("$DIR/*".into()));
        assert_eq!(at("$DIR"), Place::Unknown("$DIR".into()));
        // A temporary folder the line went to, from a project elsewhere.
        let in_tmp = |text: &str| {
            place(
                &word(text),
                Path::new("/tmp/x"),
                Path::new("/home/u/p"),
                Path::new("/home/u"),
            )
        };
        assert_eq!(in_tmp("*"), Place::Temp("/tmp/x".into()));
        // Neighbours of a project that lives in a temporary folder are not scratch.
        let from_tmp_project = |text: &str| {
            place(
                &word(text),
                Path::new("/tmp/p"),
                Path::new("/tmp/p"),
                Path::new("/home/u"),
            )
        };
        assert_eq!(
            from_tmp_project("../other"),
            Place::Outside("/tmp/other".into())
        );
        assert_eq!(
            at("\"$(pwd)/build\""),
            Place::Inside("/home/u/p/build".into())
        );
        assert_eq!(at("$(pwd)/.."), Place::HomeOrAbove("/home/u".into()));
    }
}
