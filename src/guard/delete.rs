//! Deletes: `rm -r`, `rm -rf`, `find -delete`, `find -exec rm`, `xargs rm -rf`, `mv` of a folder away,
//! `rsync --delete`, and what a one-liner of another language deletes (read by [`crate::shell`] as the
//! `rm` it amounts to), judged by where they reach: the root, a top-level folder, the home folder
//! ([`super::rules::DELETE_ROOT`]), the project ([`super::rules::DELETE_PROJECT`]), or anywhere outside the project
//! and the temporary folders ([`super::rules::DELETE_OUTSIDE`]).
//!
//! A delete that cannot be placed (`rm -rf $X`) is let through: scripts do it all the time, and what `X`
//! holds is not on the line. One where an empty variable would make it the root (`rm -rf "$X/"`) is not.
//! A delete of files alone (`rm -f *.o`, `find . -exec rm -f {} \;`) is let through but where it takes
//! every file of the root, a top-level folder or the home folder (`rm -f ~/*`).

use std::path::{Path, PathBuf};

use crate::shell::{Command, Word};

use super::folders::{Place, Seen};
use super::rules::{DELETE_OUTSIDE, DELETE_PROJECT, DELETE_ROOT, Finding};
use super::system::{nested, producer, shown, wrapper_chain};
use super::words::{self, Spec};

/// GNU rm's options (uutils' are the same).
const RM: Spec = Spec {
    longs: &[
        "recursive",
        "force",
        "interactive",
        "no-preserve-root",
        "preserve-root",
        "one-file-system",
        "dir",
        "verbose",
        "help",
        "version",
    ],
    short_valued: "",
    long_valued: &[],
    stop_at_operand: false,
};

/// GNU mv's options.
const MV: Spec = Spec {
    longs: &[
        "backup",
        "debug",
        "exchange",
        "force",
        "interactive",
        "no-clobber",
        "no-copy",
        "no-target-directory",
        "strip-trailing-slashes",
        "suffix",
        "target-directory",
        "update",
        "verbose",
        "context",
        "help",
        "version",
    ],
    short_valued: "tS",
    long_valued: &["target-directory", "suffix"],
    stop_at_operand: false,
};

/// rsync's options that take a value as the next word (the common ones: an option missing here makes
/// its value an operand, and only the last operand, the destination, is judged).
const RSYNC: Spec = Spec {
    longs: &[],
    short_valued: "efTBM",
    long_valued: &[
        "exclude",
        "include",
        "filter",
        "exclude-from",
        "include-from",
        "files-from",
        "rsh",
        "rsync-path",
        "backup-dir",
        "suffix",
        "temp-dir",
        "partial-dir",
        "link-dest",
        "copy-dest",
        "compare-dest",
        "chmod",
        "chown",
        "timeout",
        "contimeout",
        "log-file",
        "password-file",
        "max-size",
        "min-size",
        "max-delete",
        "bwlimit",
        "out-format",
        "info",
        "debug",
        "port",
        "usermap",
        "groupmap",
        "skip-compress",
        "modify-window",
        "block-size",
    ],
    stop_at_operand: false,
};

/// `find`'s primaries that do not narrow what it finds: a `find` with only these before `-delete`
/// deletes everything under its start.
const FIND_NOT_TESTS: &[&str] = &[
    "-maxdepth",
    "-mindepth",
    "-depth",
    "-d",
    "-xdev",
    "-mount",
    "-follow",
    "-noleaf",
    "-regextype",
    "-daystart",
    "-ignore_readdir_race",
    "-noignore_readdir_race",
    "-warn",
    "-nowarn",
    "-true",
    "-print",
    "-print0",
    "-printf",
    "-fprint",
    "-fprint0",
    "-fprintf",
    "-ls",
    "-fls",
    "-delete",
    "-exec",
    "-execdir",
    "-ok",
    "-okdir",
    "-a",
    "-and",
    "-o",
    "-or",
    "-not",
    "-help",
    "--help",
];

/// `find`'s primaries that take the next word as their value.
const FIND_VALUED: &[&str] = &[
    "-maxdepth",
    "-mindepth",
    "-regextype",
    "-printf",
    "-fprint",
    "-fprint0",
    "-fls",
];

pub(super) fn judge(seen: &Seen, found: &mut Vec<Finding>) {
    let commands = seen.commands;
    // The `rm`s a `find -exec` runs on what it finds, judged with the `find` (its start, its tests).
    // For each command, the operands that are a `find`'s results (`START/**`), judged with it.
    let mut of_finds: Vec<Vec<String>> = vec![Vec::new(); commands.len()];
    let mut find_rm: Vec<Option<bool>> = vec![None; commands.len()];
    for (at, command) in commands.iter().enumerate() {
        if command.program() != "find" {
            continue;
        }
        let starts = find_starts(command);
        for inner in nested(commands, at) {
            let rm = &commands[inner];
            if rm.program() != "rm" {
                continue;
            }
            let opts = words::parse(rm.args(), &RM);
            let results: Vec<String> = starts
                .iter()
                .map(|s| format!("{}/**", s.text.trim_end_matches('/')))
                .filter(|r| opts.operands.iter().any(|w| w.glob && w.text == *r))
                .collect();
            if !results.is_empty() {
                of_finds[inner].extend(results);
                let recursive = recursive(&opts);
                find_rm[at] = Some(find_rm[at].unwrap_or(false) || recursive);
            }
        }
    }
    for (at, (command, folders)) in seen.each().enumerate() {
        match command.program() {
            "rm" => rm(seen, at, command, folders, &of_finds[at], found),
            "find" => {
                let delete = find_deletes(command);
                // `-delete` and `rm -r` take folders too; `rm` alone, files.
                let folders_too = delete || find_rm[at] == Some(true);
                if delete || find_rm[at].is_some() {
                    judge_find(seen, command, command, folders, folders_too, found);
                }
            }
            "mv" => mv(seen, command, folders, found),
            "rsync" => rsync(seen, command, folders, found),
            "shred" => shred(seen, command, folders, found),
            _ => {}
        }
    }
}

/// Whether `rm`'s options make it recursive.
fn recursive(opts: &words::Opts<'_>) -> bool {
    opts.short('r') || opts.short('R') || opts.long("recursive")
}

/// Whether `command` has the word `word` among its arguments.
/// Whether a `find` has `-delete` among its own words: not inside an `-exec ... ;` (or `+`), where it is
/// an argument of the program run (`find . -exec echo -delete \;` deletes nothing).
fn find_deletes(command: &Command) -> bool {
    let mut in_exec = false;
    for word in command.args() {
        match word.text.as_str() {
            "-exec" | "-execdir" | "-ok" | "-okdir" if !in_exec => in_exec = true,
            ";" | "+" if in_exec => in_exec = false,
            "-delete" if !in_exec => return true,
            _ => {}
        }
    }
    false
}

/// `rm`: where each operand reaches (but the results of a `find` it runs under, `of_find`, which are
/// judged with the `find`).
fn rm(
    seen: &Seen,
    at: usize,
    command: &Command,
    folders: &[PathBuf],
    of_find: &[String],
    found: &mut Vec<Finding>,
) {
    let opts = words::parse(command.args(), &RM);
    let recursive = recursive(&opts);
    let shown = shown(command);
    if opts.long("no-preserve-root") {
        found.push(Finding {
            rule: DELETE_ROOT,
            reason: format!(
                "`{shown}` asks rm to delete the root folder / if it is named (--no-preserve-root): \
                 nothing a project needs. Delete only what you mean, by its own path inside the project."
            ),
        });
        return;
    }
    // `xargs -I X rm -rf X`: X is filled from input too.
    let replace = if command.fed {
        replace_string(seen.commands, at)
    } else {
        None
    };
    let operands: Vec<&Word> = opts
        .operands
        .iter()
        .copied()
        .filter(|w| {
            !placeholder(&w.text) && !replace.as_deref().is_some_and(|r| w.text.contains(r))
        })
        .collect();
    // Its other operands, if any, are its own.
    let operands: Vec<&Word> = operands
        .into_iter()
        .filter(|w| !(w.glob && of_find.contains(&w.text)))
        .collect();
    // Its paths from input are judged by where the input comes from (`find`, `echo`, a here-string)
    // or refused as unknown, whether or not the line gives it paths of its own too (`xargs rm -rf
    // /tmp/x` deletes whatever its input names as well).
    if command.fed && recursive {
        from_input(seen, at, found);
    }
    if command.fed && operands.is_empty() {
        return;
    }
    if recursive {
        printed_paths(seen, at, &operands, folders, &shown, found);
    }
    let mut worst: Vec<(&'static str, String)> = Vec::new();
    for word in operands {
        for folder in folders {
            let place = placed(seen, word, folder);
            if recursive && let Some((place, rule)) = empty_reach(seen, word, folder, &place) {
                if !worst.iter().any(|(r, _)| *r == rule) {
                    let what = match place {
                        Place::Outside(_) => {
                            format!("{}, under {}", word.text, what(&place, seen, false))
                        }
                        _ => format!(
                            "{}, which is {} when the variable is empty or unset",
                            word.text,
                            what(&place, seen, false)
                        ),
                    };
                    worst.push((rule, what));
                }
                continue;
            }
            let rule = match rule_of(&place) {
                Some(rule) if recursive => rule,
                // Files alone: refused where they are every file of the root, a top-level folder
                // or the home folder.
                Some(DELETE_ROOT) if word.glob && whole_glob(&word.text) => DELETE_ROOT,
                _ => continue,
            };
            if !worst.iter().any(|(r, _)| *r == rule) {
                worst.push((rule, what(&place, seen, word.glob)));
            }
        }
    }
    for (rule, what) in order(worst) {
        found.push(Finding {
            rule,
            reason: reason(rule, &shown, &format!("deletes {what}")),
        });
    }
}

/// `xargs rm -rf` with no path of its own: where its input comes from (`find`, `printf`), or, when
/// that cannot be told, a refusal that says so.
fn from_input(seen: &Seen, at: usize, found: &mut Vec<Finding>) {
    let commands = seen.commands;
    // Shown as its wrapper runs it (`xargs -0 rm -rf`).
    let depth = commands[at].depth;
    let wrapper = (at + 1..commands.len()).find(|&i| commands[i].depth < depth);
    let shown_as = wrapper.map_or(&commands[at], |i| &commands[i]);
    let shown = &shown(shown_as);
    let folders = &seen.folders[at];
    // `xargs rm -rf <<< /`: the input is on the line.
    if let Some(here) = wrapper.and_then(|i| commands[i].here.as_deref()) {
        given_paths(seen, folders, here, "the here-string", shown, found);
        return;
    }
    // `xargs -a FILE`: its input is the file, whatever is piped to it.
    let from_file = wrapper.is_some_and(|i| {
        commands[i]
            .args()
            .iter()
            .any(|w| w.text == "-a" || w.text.starts_with("--arg-file"))
    });
    let source = if from_file {
        None
    } else {
        producer(commands, at)
    };
    if let Some(range) = source {
        for i in range.clone() {
            let source = &commands[i];
            match source.program() {
                "find" => {
                    judge_find(seen, source, shown_as, &seen.folders[i], true, found);
                    return;
                }
                "echo" | "printf" if source.args().iter().all(|w| w.known) => {
                    let text: Vec<&str> = source
                        .args()
                        .iter()
                        .map(|w| w.text.as_str())
                        .filter(|t| !t.starts_with('-') && !t.contains('%'))
                        .collect();
                    let from = format!("the path {} gives it", source.program());
                    given_paths(seen, folders, &text.join(" "), &from, shown, found);
                    return;
                }
                _ => {}
            }
        }
    }
    found.push(Finding {
        rule: DELETE_OUTSIDE,
        reason: format!(
            "`{shown}` deletes folders whose paths come from its input: hookd cannot tell where they \
             are. List them on the command line instead (rm -r build dist), by their paths inside \
             the project."
        ),
    });
}

/// `rm -rf $(echo ~)`, `rm -rf $(pwd)`, `rm -rf "$(realpath ..)"`: a path that is a command's output,
/// where that command only prints what is on the line (its words, or the folder it runs in), is
/// judged as those paths. Any other command's output (`rm -rf $(find . -name x)`) cannot be placed and
/// is let through, as a variable is.
fn printed_paths(
    seen: &Seen,
    at: usize,
    operands: &[&Word],
    folders: &[PathBuf],
    shown: &str,
    found: &mut Vec<Finding>,
) {
    let substitution = |w: &&&Word| {
        let text = w.text.trim();
        (text.starts_with("$(") && text.ends_with(')'))
            || (text.len() > 1 && text.starts_with('`') && text.ends_with('`'))
    };
    if operands.iter().filter(substitution).count() != 1 {
        return;
    }
    let commands = seen.commands;
    // The commands run for `commands[top]`'s words, but those of `chain`.
    let children = |top: usize, chain: &[usize]| -> Vec<usize> {
        let depth = commands[top].depth;
        nested(commands, top)
            .filter(|i| commands[*i].depth == depth + 1 && !chain.contains(i))
            .collect()
    };
    // Run by a wrapper (`sudo rm -rf $(echo ~)`), the substitution is the wrapper's word: its
    // commands are the wrapper's, beside the rm it runs.
    let chain = wrapper_chain(commands, at);
    let inner = chain
        .iter()
        .map(|&top| children(top, &chain))
        .find(|inner| !inner.is_empty())
        .unwrap_or_default();
    let [source] = inner[..] else {
        return;
    };
    let source = &commands[source];
    let args = source.args();
    if !args.iter().all(|w| w.known) {
        return;
    }
    let operands = || {
        args.iter()
            .map(|w| w.text.as_str())
            .filter(|t| !t.starts_with('-'))
    };
    let text = match source.program() {
        "echo" => operands().collect::<Vec<_>>().join(" "),
        "printf" if operands().all(|t| !t.contains('%')) => {
            operands().collect::<Vec<_>>().join(" ")
        }
        "pwd" => ".".to_string(),
        "realpath" | "readlink" => {
            let paths: Vec<&str> = operands().collect();
            if source.program() == "readlink" && !args.iter().any(|w| w.text.starts_with('-')) {
                return;
            }
            if paths.is_empty() {
                ".".to_string()
            } else {
                paths.join(" ")
            }
        }
        _ => return,
    };
    let from = format!("the path {} prints", source.program());
    given_paths(seen, folders, &text, &from, shown, found);
}

/// A recursive delete of the paths in `text` (blanks, `\n` or `\0` between them), which `from`
/// gives it.
fn given_paths(
    seen: &Seen,
    folders: &[PathBuf],
    text: &str,
    from: &str,
    shown: &str,
    found: &mut Vec<Finding>,
) {
    let text = text.replace("\\n", " ").replace("\\0", " ");
    let mut worst = Vec::new();
    for path in text.split_whitespace().take(256) {
        let word = Word {
            text: path.to_string(),
            known: true,
            glob: false,
        };
        for folder in folders {
            let place = placed(seen, &word, folder);
            if let Some(rule) = rule_of(&place)
                && !worst.iter().any(|(r, _)| *r == rule)
            {
                worst.push((rule, what(&place, seen, false)));
            }
        }
    }
    for (rule, what) in order(worst) {
        found.push(Finding {
            rule,
            reason: reason(rule, shown, &format!("deletes {what}, {from}")),
        });
    }
}

/// `find START... -delete` or `-exec rm ... {}`: from the root, a top-level folder or the home folder,
/// whatever its tests; from the project, above it or outside it, only when no test narrows what it
/// finds. `folders_too`: it deletes folders (`-delete`, `rm -r`), not files alone (`rm -f`).
fn judge_find(
    seen: &Seen,
    find: &Command,
    shown_as: &Command,
    folders: &[PathBuf],
    folders_too: bool,
    found: &mut Vec<Finding>,
) {
    let tests = find_tests(find);
    let shown = if std::ptr::eq(find, shown_as) {
        shown(find)
    } else {
        format!("{} | {}", shown(find), shown(shown_as))
    };
    let mut worst = Vec::new();
    for start in find_starts(find) {
        for folder in folders {
            let place = placed(seen, &start, folder);
            let rule = match rule_of(&place) {
                Some(DELETE_ROOT) => DELETE_ROOT,
                Some(rule) if folders_too && !tests => rule,
                _ => continue,
            };
            if !worst.iter().any(|(r, _)| *r == rule) {
                worst.push((rule, what(&place, seen, false)));
            }
        }
    }
    for (rule, what) in order(worst) {
        let how = if tests && rule == DELETE_ROOT {
            format!(
                "deletes what it finds under {what} (its tests cannot be checked before it runs)"
            )
        } else {
            format!("deletes everything it finds under {what}")
        };
        found.push(Finding {
            rule,
            reason: reason(rule, &shown, &how),
        });
    }
}

/// The folders a `find` starts from (`.` when it names none).
fn find_starts(find: &Command) -> Vec<Word> {
    let args = find.args();
    let mut i = 0;
    while i < args.len() {
        let text = args[i].text.as_str();
        if matches!(text, "-H" | "-L" | "-P") || text.starts_with("-O") {
            i += 1;
        } else if text == "-D" {
            i += 2;
        } else {
            break;
        }
    }
    let starts: Vec<Word> = args
        .get(i..)
        .unwrap_or(&[])
        .iter()
        .take_while(|a| !a.text.starts_with('-') && a.text != "!" && a.text != "(")
        .cloned()
        .collect();
    if starts.is_empty() {
        vec![Word {
            text: ".".into(),
            known: true,
            glob: false,
        }]
    } else {
        starts
    }
}

/// Whether a `find`'s expression holds a test that narrows what it finds (`-name`, `-type`,
/// `-mtime`, ...), before its first action that deletes.
fn find_tests(find: &Command) -> bool {
    let args = find.args();
    let mut i = 0;
    while i < args.len() {
        let text = args[i].text.as_str();
        if matches!(text, "-delete" | "-exec" | "-execdir" | "-ok" | "-okdir") {
            return false;
        }
        if text.starts_with('-') && text.len() > 1 && !FIND_NOT_TESTS.contains(&text) {
            return true;
        }
        i += if FIND_VALUED.contains(&text) { 2 } else { 1 };
    }
    false
}

/// `mv`: a source that is the root, a top-level folder, the home folder, or the project (or all that
/// is in it) moved away is deleted from where it was.
fn mv(seen: &Seen, command: &Command, folders: &[PathBuf], found: &mut Vec<Finding>) {
    let opts = words::parse(command.args(), &MV);
    let target = opts
        .short_values
        .iter()
        .find(|(c, _)| *c == 't')
        .map(|(_, v)| v.clone())
        .or_else(|| opts.long_value("target-directory").map(String::from));
    let (sources, destination): (&[&Word], Word) = match (&target, opts.operands.split_last()) {
        (Some(target), _) => (
            &opts.operands,
            Word {
                text: target.clone(),
                known: true,
                glob: false,
            },
        ),
        (None, Some((last, rest))) if !rest.is_empty() => (rest, (*last).clone()),
        _ => return,
    };
    let shown = shown(command);
    let mut worst = Vec::new();
    for word in sources {
        for folder in folders {
            let place = placed(seen, word, folder);
            let rule = match (&place, rule_of(&place)) {
                (Place::RootIfEmpty(_), _) => continue,
                (_, Some(DELETE_ROOT)) => DELETE_ROOT,
                (Place::ProjectOrAbove(_), _) => {
                    let to = placed(seen, &destination, folder);
                    if matches!(to, Place::Inside(_)) {
                        continue;
                    }
                    DELETE_PROJECT
                }
                _ => continue,
            };
            if !worst.iter().any(|(r, _)| *r == rule) {
                worst.push((rule, what(&place, seen, word.glob)));
            }
        }
    }
    for (rule, what) in order(worst) {
        found.push(Finding {
            rule,
            reason: reason(rule, &shown, &format!("moves {what} away")),
        });
    }
}

/// `rsync --delete SRC DEST`: DEST is made a copy of SRC, what it holds besides deleted; refused where
/// DEST is the root, a top-level folder, the home folder or the project.
fn rsync(seen: &Seen, command: &Command, folders: &[PathBuf], found: &mut Vec<Finding>) {
    let opts = words::parse(command.args(), &RSYNC);
    let deletes = opts.longs.iter().any(|(name, _)| name.starts_with("del"));
    if !deletes || opts.operands.len() < 2 {
        return;
    }
    let Some(destination) = opts.operands.last() else {
        return;
    };
    // A remote destination (`host:path`, `rsync://`) is another machine's.
    if destination
        .text
        .split('/')
        .next()
        .is_some_and(|first| first.contains(':'))
    {
        return;
    }
    let shown = shown(command);
    let mut worst = Vec::new();
    for folder in folders {
        let place = placed(seen, destination, folder);
        let rule = match rule_of(&place) {
            Some(DELETE_ROOT) => DELETE_ROOT,
            Some(DELETE_PROJECT) => DELETE_PROJECT,
            _ => continue,
        };
        if !worst.iter().any(|(r, _)| *r == rule) {
            worst.push((rule, what(&place, seen, false)));
        }
    }
    for (rule, what) in order(worst) {
        found.push(Finding {
            rule,
            reason: reason(
                rule,
                &shown,
                &format!("deletes whatever {what} holds that the source does not (--delete)"),
            ),
        });
    }
}

/// `shred -u`: files overwritten and deleted; refused where it takes every file of the root, a
/// top-level folder or the home folder (a device is the disk rule's).
fn shred(seen: &Seen, command: &Command, folders: &[PathBuf], found: &mut Vec<Finding>) {
    let spec = Spec {
        longs: &[
            "force",
            "iterations",
            "random-source",
            "size",
            "remove",
            "verbose",
            "exact",
            "zero",
        ],
        short_valued: "ns",
        long_valued: &[],
        stop_at_operand: false,
    };
    let opts = words::parse(command.args(), &spec);
    if !opts.either('u', "remove") {
        return;
    }
    let shown = shown(command);
    for word in &opts.operands {
        for folder in folders {
            let place = placed(seen, word, folder);
            if word.glob && whole_glob(&word.text) && rule_of(&place) == Some(DELETE_ROOT) {
                found.push(Finding {
                    rule: DELETE_ROOT,
                    reason: reason(
                        DELETE_ROOT,
                        &shown,
                        &format!("destroys every file of {}", what(&place, seen, false)),
                    ),
                });
                return;
            }
        }
    }
}

/// `rm -rf ~/$X`, `rm -rf ./$X`, `rm -rf ~/.cache/$X`: a path that cannot be known, but whose known
/// folder before the variable is the home folder or the project (which an empty variable deletes),
/// or lies outside the project (where whatever it is lies too). The folder, and the rule.
fn empty_reach(
    seen: &Seen,
    word: &Word,
    folder: &Path,
    place: &Place,
) -> Option<(Place, &'static str)> {
    let Place::Unknown(text) = place else {
        return None;
    };
    let text = text.trim_start_matches(['"', '\'']);
    let cut = text.find(['$', '`'])?;
    let prefix = text[..cut].trim_end_matches(['"', '\'']);
    if !prefix.ends_with('/') || text[cut..].contains(":?") || word.text.len() > 4096 {
        return None;
    }
    let known = Word {
        text: prefix.to_string(),
        known: true,
        glob: false,
    };
    let reached = seen.place(&known, folder);
    let rule = match &reached {
        Place::Outside(_) => DELETE_OUTSIDE,
        other => rule_of(other)?,
    };
    Some((reached, rule))
}

/// The string `xargs -I X` (or `-i`, `--replace`) puts each input in, for the command at `at` that
/// it runs.
fn replace_string(commands: &[Command], at: usize) -> Option<String> {
    let depth = commands[at].depth;
    let wrapper = (at + 1..commands.len()).find(|&i| commands[i].depth < depth)?;
    let xargs = &commands[wrapper];
    if xargs.program() != "xargs" {
        return None;
    }
    let args = xargs.args();
    for (i, word) in args.iter().enumerate() {
        let text = word.text.as_str();
        if !text.starts_with('-') {
            break;
        }
        if text == "-I" {
            return args.get(i + 1).map(|w| w.text.clone());
        }
        if let Some(value) = text.strip_prefix("-I").filter(|v| !v.is_empty()) {
            return Some(value.to_string());
        }
        if text == "-i" || text == "--replace" {
            return Some("{}".into());
        }
        if let Some(value) = text
            .strip_prefix("--replace=")
            .or_else(|| text.strip_prefix("-i"))
        {
            return Some(value.to_string());
        }
    }
    None
}

/// Where `word` points from `folder`, for a delete: as [`Seen::place`] says, but `${X:?}/` is no root
/// (an empty `X` stops the shell), and a pattern that picks some entries of the home folder (`~/x*`)
/// reaches those entries, not the home folder itself.
fn placed(seen: &Seen, word: &Word, folder: &Path) -> Place {
    let place = seen.place(word, folder);
    match place {
        Place::RootIfEmpty(text) if text.contains(":?") => Place::Unknown(text),
        Place::HomeOrAbove(path)
            if word.glob && !whole_glob(&word.text) && path == seen.call.home =>
        {
            Place::Outside(path)
        }
        other => other,
    }
}

/// The rule a recursive delete of `place` falls under, if any.
fn rule_of(place: &Place) -> Option<&'static str> {
    match place {
        Place::Root | Place::TopLevel(_) | Place::HomeOrAbove(_) | Place::RootIfEmpty(_) => {
            Some(DELETE_ROOT)
        }
        Place::ProjectOrAbove(_) => Some(DELETE_PROJECT),
        Place::Outside(_) => Some(DELETE_OUTSIDE),
        Place::Inside(_) | Place::Temp(_) | Place::Unknown(_) => None,
    }
}

/// Findings in the order of the rules (the first refusal is the one told).
fn order(mut worst: Vec<(&'static str, String)>) -> Vec<(&'static str, String)> {
    let rank = |rule: &str| {
        [DELETE_ROOT, DELETE_PROJECT, DELETE_OUTSIDE]
            .iter()
            .position(|r| *r == rule)
    };
    worst.sort_by_key(|(rule, _)| rank(rule));
    worst
}

/// What a place is, in words for the agent; `glob`: all that is in it.
fn what(place: &Place, seen: &Seen, glob: bool) -> String {
    let all = if glob { "everything in " } else { "" };
    match place {
        Place::Root => format!("{all}the root folder /"),
        Place::TopLevel(path) => format!("{all}{}, a top-level system folder", path.display()),
        Place::HomeOrAbove(path) if *path == seen.call.home => {
            format!("{all}your home folder ({})", path.display())
        }
        Place::HomeOrAbove(path) => {
            format!("{all}{}, which holds your home folder", path.display())
        }
        Place::RootIfEmpty(text) => format!(
            "{text}, which is the root folder / when the variable is empty or unset (${{VAR:?}}/ \
             stops the command instead)"
        ),
        Place::ProjectOrAbove(path) if *path == seen.call.cwd => {
            format!("{all}the project ({})", path.display())
        }
        Place::ProjectOrAbove(path) => {
            format!("{all}{}, which holds the project", path.display())
        }
        Place::Outside(path) | Place::Inside(path) | Place::Temp(path) => {
            format!("{all}{}", path.display())
        }
        Place::Unknown(text) => text.clone(),
    }
}

/// The reason for `rule`: what was seen, what it does, what to do instead.
fn reason(rule: &str, shown: &str, does: &str) -> String {
    let instead = match rule {
        DELETE_ROOT => "Delete only what you mean, by its own path inside the project.",
        DELETE_PROJECT => {
            "Delete the files you mean by their paths inside the project, or move them to the trash: \
             mkdir -p .trash && mv FILE .trash/"
        }
        _ => {
            "Delete only inside the project or a temporary folder (/tmp); ask the user to delete \
             anything else."
        }
    };
    let why = match rule {
        DELETE_ROOT => "every file under it, with no undo, and nothing a coding task needs",
        DELETE_PROJECT => "the project's work, committed or not, which may be nowhere else",
        _ => {
            "outside the project and the temporary folders, where hookd cannot tell whose files they are"
        }
    };
    format!("`{shown}` {does}: {why}. {instead}")
}

/// A placeholder `xargs -I{}` or `parallel` fills from its input (`{}`, `{1}`, `{.}`).
fn placeholder(text: &str) -> bool {
    text.len() <= 6 && text.starts_with('{') && text.ends_with('}')
}

/// Whether a pattern's first patterned component is all pattern (`*`, `.*`, `/**`, `~/*`): it takes
/// every entry of the folder it reaches into.
fn whole_glob(text: &str) -> bool {
    let Some(first) = text.find(['*', '?', '[']) else {
        return false;
    };
    let start = text[..first].rfind('/').map_or(0, |s| s + 1);
    let end = text[start..].find('/').map_or(text.len(), |e| start + e);
    text[start..end]
        .chars()
        .all(|c| matches!(c, '*' | '?' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_is_whole_when_its_first_patterned_part_is_all_pattern() {
        assert!(whole_glob("*"));
        assert!(whole_glob("/**"));
        assert!(whole_glob("/home/u/.*"));
        assert!(whole_glob("./*/x"));
        assert!(!whole_glob("*.o"));
        assert!(!whole_glob("/home/u/x*"));
        assert!(!whole_glob("build"));
    }

    #[test]
    fn placeholders_are_told_from_paths() {
        assert!(placeholder("{}"));
        assert!(placeholder("{1}"));
        assert!(placeholder("{.}"));
        assert!(!placeholder("/"));
        assert!(!placeholder("{a,b}/long-name"));
    }
}
