//! Git that loses work: [`super::rules::GIT_DISCARD`] (uncommitted work thrown away: `reset --hard`,
//! `checkout -- FILE`, `restore`, `clean -f`, `stash drop`, ...) and [`super::rules::GIT_HISTORY`] (commits
//! lost or shared history rewritten: `push --force`, `push --delete`, `branch -D`, `filter-branch`,
//! ...).
//!
//! Git's arguments are read as git reads them, since an agent (or a model imitating a person) writes
//! them every way git takes: global options before the subcommand (`git -C dir -c k=v --no-pager
//! reset --hard`), aliases given with `-c` (`git -c alias.x=reset x --hard`), long options abbreviated
//! to any unique prefix (`--ha` is `--hard`; but `push --forc` is no option at all, as git finds it
//! ambiguous), short flags bundled (`clean -fdx`, `branch -Df`, `push -fu`), options after operands
//! (`reset HEAD --hard`) and `--` ending them. Each subcommand's list of long options is git's own
//! (`git CMD --git-completion-helper-all`, git 2.47), so that a prefix resolves as git resolves it.
//!
//! What everyday git does stays allowed: `status`, `commit`, `pull`, `push -u`, `push
//! --force-with-lease` (the safe way to replace a branch), `checkout BRANCH`, `switch -c`, `branch -d`,
//! `stash`, `stash pop`, `restore --staged`, `reset` (soft or mixed), `rm -r --cached .`, `commit
//! --amend`, `rebase`. Where the line is drawn, and why, is said at each rule below.

use std::path::{Path, PathBuf};

use crate::shell::{Command, Word};

use super::call::absolute;
use super::folders::Seen;
use super::rules::{Finding, GIT_DISCARD, GIT_HISTORY};
use super::words::{self, Opts, Spec};

/// How many aliases may expand one into another before the rest is judged as it stands (git itself
/// stops at a loop).
const MAX_ALIASES: usize = 8;

pub(super) fn judge(seen: &Seen, found: &mut Vec<Finding>) {
    for (command, folders) in seen.each() {
        let folder = folders.first().unwrap_or(&seen.call.cwd);
        let finding = match command.run_words() {
            // `git CMD --help` (or `-h`) only shows the manual, whatever else is on the line.
            // hub is git with more (`alias git=hub` is how it is set up): judged as git.
            Some(("git" | "hub", args)) if asks_for_help(args) => None,
            Some(("git" | "hub", args)) => judge_git(args, folder, &seen.call.home, command.fed),
            // git-filter-repo is a program of its own, which `git filter-repo` runs.
            Some(("git-filter-repo", _)) => {
                judge_subcommand("filter-repo", &[], &Globals::default(), &seen.call.home)
            }
            _ => None,
        };
        if let Some(finding) = finding {
            found.push(finding);
        }
    }
}

/// Whether git is asked for its manual or usage (`--help`, `-h`, `help`) rather than to do anything:
/// git then shows it and stops, the rest of the line unread.
fn asks_for_help(args: &[Word]) -> bool {
    args.iter()
        .take_while(|w| w.text != "--")
        .any(|w| matches!(w.text.as_str(), "--help" | "-h"))
        || args.first().is_some_and(|w| w.text == "help")
}

/// What git's global options (before the subcommand) set that the rules need.
#[derive(Debug, Default)]
struct Globals {
    /// The folder git runs in (`-C` followed).
    folder: PathBuf,
    /// Aliases set with `-c alias.NAME=VALUE` (the name lowercased, as git's config keys are); `None`
    /// for a value that cannot be known before it runs (`--config-env`, a variable).
    aliases: Vec<(String, Option<String>)>,
    /// `-c clean.requireForce=false`: `git clean` deletes without `-f`.
    clean_unforced: bool,
    /// More arguments come from input (`xargs git branch -D`): none on the line is not none at all.
    fed: bool,
}

/// Judges `git ARGS` run in `folder`: the global options read, an alias expanded, the subcommand
/// judged.
fn judge_git(args: &[Word], folder: &Path, home: &Path, fed: bool) -> Option<Finding> {
    let mut globals = Globals {
        folder: folder.to_path_buf(),
        fed,
        ..Globals::default()
    };
    let mut args: Vec<Word> = args.to_vec();
    for _ in 0..MAX_ALIASES {
        let at = read_globals(&args, &mut globals, home);
        let sub = args.get(at)?;
        let rest = &args[at + 1..];
        // A subcommand git knows runs as itself (git never lets an alias hide a command); it is judged,
        // and so is an alias of that name, on the safe side.
        if let Some(finding) = judge_subcommand(&sub.text, rest, &globals, home) {
            return Some(finding);
        }
        let name = sub.text.to_ascii_lowercase();
        let alias = globals
            .aliases
            .iter()
            .rev()
            .find(|(alias, _)| *alias == name)?
            .1
            .clone();
        let Some(value) = alias.filter(|v| !v.trim_start().starts_with('!')) else {
            return Some(shell_alias(&sub.text));
        };
        let mut expanded: Vec<Word> = split_alias(&value)
            .into_iter()
            .map(|text| Word {
                text,
                known: true,
                glob: false,
            })
            .collect();
        expanded.extend_from_slice(rest);
        args = expanded;
    }
    None
}

/// Reads git's global options at the head of `args` into `globals`; the index of the subcommand.
fn read_globals(args: &[Word], globals: &mut Globals, home: &Path) -> usize {
    let mut at = 0;
    while let Some(word) = args.get(at) {
        let text = word.text.as_str();
        if !text.starts_with('-') {
            return at;
        }
        at += 1;
        // `-C dir` and `-c k=v` take the next word (git 2.47 takes no `-Cdir`; others may, and reading
        // it costs nothing).
        let value = match text {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix"
            | "--config-env" | "--attr-source" => {
                at += 1;
                args.get(at - 1)
            }
            _ => None,
        };
        let (name, value): (&str, Option<(&str, bool)>) = match (text, value) {
            (_, Some(word)) => (text, Some((word.text.as_str(), word.known))),
            _ if text.starts_with("--") => match text.split_once('=') {
                Some((name, value)) => (name, Some((value, word.known))),
                None => (text, None),
            },
            _ if text.len() > 2 && (text.starts_with("-C") || text.starts_with("-c")) => {
                (&text[..2], Some((&text[2..], word.known)))
            }
            _ => (text, None),
        };
        match (name, value) {
            ("-C", Some((dir, true))) => globals.folder = absolute(dir, &globals.folder, home),
            ("-c", Some((setting, known))) => read_setting(setting, known, globals),
            ("--config-env", Some((setting, _))) => {
                if let Some(alias) = alias_name(setting.split_once('=').map_or(setting, |s| s.0)) {
                    globals.aliases.push((alias, None));
                }
            }
            _ => {}
        }
    }
    at
}

/// Takes in one `-c key=value`.
fn read_setting(setting: &str, known: bool, globals: &mut Globals) {
    let (key, value) = setting.split_once('=').unwrap_or((setting, "true"));
    if let Some(alias) = alias_name(key) {
        globals
            .aliases
            .push((alias, known.then(|| value.to_string())));
    } else if key.eq_ignore_ascii_case("clean.requireForce") {
        globals.clean_unforced = matches!(
            value.to_ascii_lowercase().as_str(),
            "false" | "no" | "off" | "0" | ""
        );
    }
}

/// The alias a config key sets (`alias.X`, any case), lowercased.
fn alias_name(key: &str) -> Option<String> {
    let (section, name) = key.split_once('.')?;
    section
        .eq_ignore_ascii_case("alias")
        .then(|| name.to_ascii_lowercase())
}

/// An alias value split into words as git splits it (`split_cmdline`): blanks separate, single and
/// double quotes group, a backslash escapes the next character.
fn split_alias(value: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (_, '\\') if quote != Some('\'') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                }
                in_word = true;
            }
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (Some(q), _) if c == q => quote = None,
            (None, ' ' | '\t' | '\n') => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            _ => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// `names` joined for a reason, or `otherwise` when there are none (they come from input: `xargs`).
fn named_or(names: &[&str], otherwise: &str) -> String {
    if names.is_empty() {
        otherwise.to_string()
    } else {
        names.join(" ")
    }
}

fn discard(reason: String) -> Option<Finding> {
    Some(Finding {
        rule: GIT_DISCARD,
        reason,
    })
}

fn history(reason: String) -> Option<Finding> {
    Some(Finding {
        rule: GIT_HISTORY,
        reason,
    })
}

/// A `!` alias: git runs its value as a shell line, which this guard does not read as git would
/// hand it over; the agent can run the commands themselves, where each is judged.
fn shell_alias(name: &str) -> Finding {
    Finding {
        rule: GIT_HISTORY,
        reason: format!(
            "git {name} runs an alias set on the line (-c alias.{name}=...) whose value is a shell line \
             (`!...`) or cannot be known before it runs, which hookd's guard will not guess at. Run \
             the commands themselves instead, so that each can be judged."
        ),
    }
}

/// `args` split at the first `--`: the options and operands before it, and the paths after it (when
/// there is a `--`).
fn split_dashdash(args: &[Word]) -> (&[Word], Option<&[Word]>) {
    match args.iter().position(|w| w.text == "--") {
        Some(at) => (&args[..at], Some(&args[at + 1..])),
        None => (args, None),
    }
}

/// Whether a bool option ends up on: given (as `-c` or `--long`) and not negated with `--no-long`.
fn on(opts: &Opts, short: Option<char>, long: &str) -> bool {
    let given = short.is_some_and(|c| opts.short(c)) || opts.long(long);
    given && !opts.long(&format!("no-{long}"))
}

fn judge_subcommand(sub: &str, args: &[Word], globals: &Globals, home: &Path) -> Option<Finding> {
    match sub {
        "reset" => reset(args),
        "checkout" => checkout(args),
        "restore" => restore(args, globals.fed),
        "switch" => switch(args),
        "clean" => clean(args, globals),
        "stash" => stash(args),
        "rm" => rm(args, &globals.folder, home),
        "worktree" => worktree(args),
        "checkout-index" => checkout_index(args),
        "read-tree" => read_tree(args),
        "push" => push(args),
        "branch" => branch(args, globals.fed),
        "reflog" => reflog(args),
        "update-ref" => update_ref(args),
        "submodule" => submodule(args, &globals.folder, home),
        "filter-branch" | "filter-repo" => history(format!(
            "git {sub} rewrites the history: every commit it touches gets a new id, so what others \
             cloned no longer matches, and the old commits are gone once it is pushed. A person should \
             run it, knowing what it rewrites; to change recent commits of your own branch, use git \
             rebase -i or git commit --amend."
        )),
        _ => None,
    }
}

const RESET: Spec = Spec {
    longs: &[
        "quiet",
        "no-refresh",
        "mixed",
        "soft",
        "hard",
        "merge",
        "keep",
        "recurse-submodules",
        "patch",
        "intent-to-add",
        "pathspec-from-file",
        "pathspec-file-nul",
        "refresh",
        "no-quiet",
        "no-recurse-submodules",
        "no-patch",
        "no-intent-to-add",
        "no-pathspec-from-file",
        "no-pathspec-file-nul",
    ],
    short_valued: "",
    long_valued: &["pathspec-from-file"],
    stop_at_operand: false,
};

/// `reset --hard` throws away every uncommitted change; `--merge` throws away staged changes the
/// target lacks (git's own table in git-reset(1)). The last mode given is the one git uses. `--keep`
/// refuses when work would be lost, and `--soft`/`--mixed` touch no file.
fn reset(args: &[Word]) -> Option<Finding> {
    let (before, _) = split_dashdash(args);
    let opts = words::parse(before, &RESET);
    let mode = opts
        .longs
        .iter()
        .rev()
        .map(|(name, _)| name.as_str())
        .find(|name| ["mixed", "soft", "hard", "merge", "keep"].contains(name));
    match mode {
        Some("hard") => discard(
            "git reset --hard throws away every uncommitted change in the working tree and the index, \
             beyond git's reach to bring back. Save them first with git stash (git stash pop brings them \
             back), or move the branch without touching files: git reset --soft or git reset (mixed)."
                .into(),
        ),
        Some("merge") => discard(
            "git reset --merge throws away staged changes the target commit does not have. To abort a \
             merge, say git merge --abort; to keep the work, git stash first."
                .into(),
        ),
        _ => None,
    }
}

const CHECKOUT: Spec = Spec {
    longs: &[
        "guess",
        "overlay",
        "quiet",
        "recurse-submodules",
        "progress",
        "merge",
        "conflict",
        "detach",
        "track",
        "force",
        "orphan",
        "overwrite-ignore",
        "ignore-other-worktrees",
        "ours",
        "theirs",
        "patch",
        "ignore-skip-worktree-bits",
        "pathspec-from-file",
        "pathspec-file-nul",
        "no-guess",
        "no-overlay",
        "no-quiet",
        "no-recurse-submodules",
        "no-progress",
        "no-merge",
        "no-conflict",
        "no-detach",
        "no-track",
        "no-force",
        "no-orphan",
        "no-overwrite-ignore",
        "no-ignore-other-worktrees",
        "no-patch",
        "no-ignore-skip-worktree-bits",
        "no-pathspec-from-file",
        "no-pathspec-file-nul",
        "unified",
        "inter-hunk-context",
    ],
    short_valued: "bBU",
    long_valued: &[
        "conflict",
        "orphan",
        "pathspec-from-file",
        "unified",
        "inter-hunk-context",
    ],
    stop_at_operand: false,
};

/// `checkout` switches branches (fine) or overwrites files with their committed version (their
/// uncommitted changes gone for good): with `--` and paths, with more than one operand (`checkout REV
/// FILE...`), or with one operand that reads as a path (`.`, `src/`, `main.rs`). `-f` throws away
/// changes while switching; `-p` discards the hunks it is told to. A new branch (`-b`, `-B`,
/// `--orphan`) overwrites nothing.
fn checkout(args: &[Word]) -> Option<Finding> {
    let (before, paths) = split_dashdash(args);
    // A mode written apart from the option that takes it (`--track direct`, `--recurse-submodules
    // on-demand`) is the option's, not a branch or a path (git would take it as one and fail; read
    // as a path it would make `git checkout --track direct main` an overwrite of `main`).
    let before: Vec<Word> = {
        let mut kept = Vec::with_capacity(before.len());
        let mut previous = "";
        for word in before {
            let mode = match previous {
                "--track" | "-t" => matches!(word.text.as_str(), "direct" | "inherit"),
                "--recurse-submodules" => {
                    matches!(word.text.as_str(), "checkout" | "on-demand" | "yes" | "no")
                }
                _ => false,
            };
            previous = &word.text;
            if !mode {
                kept.push(word.clone());
            }
        }
        kept
    };
    let opts = words::parse(&before, &CHECKOUT);
    if on(&opts, Some('f'), "force") {
        return discard(
            "git checkout --force throws away the uncommitted changes to tracked files while it \
             switches. Save them with git stash first, or switch without --force (git then refuses \
             when work would be lost)."
                .into(),
        );
    }
    if on(&opts, Some('p'), "patch") {
        return discard(
            "git checkout --patch discards the changes of every hunk it is answered yes to, for good. \
             Save them with git stash first, or discard by hand the lines you mean."
                .into(),
        );
    }
    let creating = opts.short('b') || opts.short('B') || opts.long("orphan");
    let named: Vec<&str> = match paths {
        Some(paths) if !paths.is_empty() => paths.iter().map(|w| w.text.as_str()).collect(),
        Some(_) => Vec::new(),
        None if creating => Vec::new(),
        None if opts.operands.len() >= 2 => opts.operand_texts()[1..].to_vec(),
        None => opts
            .operands
            .iter()
            .filter(|w| path_like(w))
            .map(|w| w.text.as_str())
            .collect(),
    };
    let from_file = opts.long("pathspec-from-file");
    if named.is_empty() && !from_file {
        return None;
    }
    let what = if from_file {
        "the files listed in --pathspec-from-file".to_string()
    } else {
        named.join(" ")
    };
    discard(format!(
        "git checkout of {what} overwrites those files with their committed version, throwing away \
         their uncommitted changes for good. Keep the changes with git stash first (or save them with \
         git diff > FILE.patch); to only unstage, use git restore --staged FILE."
    ))
}

/// Whether a lone `checkout` operand names files rather than a branch or commit: `.`, a folder
/// (`src/`), a path from the root or the current folder, git's pathspec magic (`:/`), a pattern, a
/// dotfile, or a file name with an extension (`main.rs`; `v1.2.3` and `release-2.0` are versions, not files).
fn path_like(word: &Word) -> bool {
    let text = word.text.as_str();
    if matches!(text, "." | ".." | "*") || word.glob || text.contains('*') {
        return true;
    }
    if text.starts_with("./") || text.starts_with("../") || text.starts_with('/') {
        return true;
    }
    if text.starts_with(':') || text.ends_with('/') {
        return true;
    }
    let name = text.rsplit('/').next().unwrap_or(text);
    // No ref's component starts with a dot (git check-ref-format): `.gitignore` is a file.
    if name.starts_with('.') || ["Makefile", "Dockerfile", "README", "LICENSE"].contains(&name) {
        return true;
    }
    match name.rsplit_once('.') {
        Some((_, ext)) => {
            (1..=5).contains(&ext.len())
                && ext.starts_with(|c: char| c.is_ascii_alphabetic())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
        }
        None => false,
    }
}

const RESTORE: Spec = Spec {
    longs: &[
        "source",
        "staged",
        "worktree",
        "ignore-unmerged",
        "overlay",
        "quiet",
        "recurse-submodules",
        "progress",
        "merge",
        "conflict",
        "ours",
        "theirs",
        "patch",
        "ignore-skip-worktree-bits",
        "pathspec-from-file",
        "pathspec-file-nul",
        "no-source",
        "no-staged",
        "no-worktree",
        "no-ignore-unmerged",
        "no-overlay",
        "no-quiet",
        "no-recurse-submodules",
        "no-progress",
        "no-merge",
        "no-conflict",
        "no-patch",
        "no-ignore-skip-worktree-bits",
        "no-pathspec-from-file",
        "no-pathspec-file-nul",
    ],
    short_valued: "sU",
    long_valued: &["source", "conflict", "pathspec-from-file"],
    stop_at_operand: false,
};

/// `restore` overwrites the working tree's files (their uncommitted changes gone) unless it is told
/// to touch the index only: `--staged` without `--worktree`.
fn restore(args: &[Word], fed: bool) -> Option<Finding> {
    let (before, paths) = split_dashdash(args);
    let opts = words::parse(before, &RESTORE);
    let staged = on(&opts, Some('S'), "staged");
    let worktree = on(&opts, Some('W'), "worktree");
    if staged && !worktree {
        return None;
    }
    let mut named = opts.operand_texts();
    named.extend(paths.unwrap_or(&[]).iter().map(|w| w.text.as_str()));
    // With no path, on the line or from a file, git restores nothing: it stops, asking for one (but
    // `--patch` offers every change).
    let from_file = opts
        .longs
        .iter()
        .any(|(name, _)| name == "pathspec-from-file");
    if named.is_empty() && !fed && !from_file && !on(&opts, Some('p'), "patch") {
        return None;
    }
    let what = if named.is_empty() {
        "files".to_string()
    } else {
        named.join(" ")
    };
    discard(format!(
        "git restore of {what} in the working tree overwrites them with their version in the index \
         (or --source), throwing away their uncommitted changes for good. To only unstage, use git \
         restore --staged FILE; to keep the changes, git stash first."
    ))
}

const SWITCH: Spec = Spec {
    longs: &[
        "create",
        "force-create",
        "guess",
        "discard-changes",
        "quiet",
        "recurse-submodules",
        "progress",
        "merge",
        "conflict",
        "detach",
        "track",
        "force",
        "orphan",
        "overwrite-ignore",
        "ignore-other-worktrees",
        "no-create",
        "no-force-create",
        "no-guess",
        "no-discard-changes",
        "no-quiet",
        "no-recurse-submodules",
        "no-progress",
        "no-merge",
        "no-conflict",
        "no-detach",
        "no-track",
        "no-force",
        "no-orphan",
        "no-overwrite-ignore",
        "no-ignore-other-worktrees",
    ],
    short_valued: "cC",
    long_valued: &["create", "force-create", "conflict", "orphan"],
    stop_at_operand: false,
};

/// `switch --force` / `--discard-changes` throw away local changes; `switch -m` merges them instead.
fn switch(args: &[Word]) -> Option<Finding> {
    let (before, _) = split_dashdash(args);
    let opts = words::parse(before, &SWITCH);
    if on(&opts, Some('f'), "force") || on(&opts, None, "discard-changes") {
        return discard(
            "git switch --discard-changes (or --force) throws away the uncommitted changes to tracked \
             files. Save them with git stash first, or switch without it (git then refuses when work \
             would be lost)."
                .into(),
        );
    }
    None
}

const CLEAN: Spec = Spec {
    longs: &[
        "quiet",
        "dry-run",
        "force",
        "interactive",
        "exclude",
        "no-quiet",
        "no-dry-run",
        "no-force",
        "no-interactive",
    ],
    short_valued: "e",
    long_valued: &["exclude"],
    stop_at_operand: false,
};

/// `clean -f` deletes untracked files: never committed, so git cannot bring them back. A dry run
/// (`-n`, which git lets win over `-f`) is fine. `clean -i` is refused too: its prompts would be
/// answered by the agent itself, where no person reads them, and its end is the same deletion. Without
/// `-f` git refuses to clean, unless `clean.requireForce` is turned off on the line.
fn clean(args: &[Word], globals: &Globals) -> Option<Finding> {
    let (before, _) = split_dashdash(args);
    let opts = words::parse(before, &CLEAN);
    if on(&opts, Some('n'), "dry-run") {
        return None;
    }
    let interactive = on(&opts, Some('i'), "interactive");
    if !(on(&opts, Some('f'), "force") || interactive || globals.clean_unforced) {
        return None;
    }
    let mut what = String::from("untracked files");
    if opts.short('d') {
        what.push_str(" and folders");
    }
    if opts.short('x') || opts.short('X') {
        what.push_str(", ignored ones too (.env, local settings, build output)");
    }
    let how = if interactive {
        "git clean -i ends in deleting"
    } else {
        "git clean -f deletes"
    };
    discard(format!(
        "{how} {what}: they were never committed, so git cannot bring them back. See what would go \
         with git clean -n first, then delete only what you mean by its path."
    ))
}

/// `stash drop` and `stash clear` delete saved work that is committed nowhere else. The subcommand is
/// the first word (git takes no option before it).
fn stash(args: &[Word]) -> Option<Finding> {
    match args.first().map(|w| w.text.as_str()) {
        Some(sub @ ("drop" | "clear")) => discard(format!(
            "git stash {sub} deletes saved stashes: work committed nowhere else. Leave them (git stash \
             list shows them), or bring one back with git stash pop or git stash apply."
        )),
        _ => None,
    }
}

const RM: Spec = Spec {
    longs: &[
        "dry-run",
        "quiet",
        "cached",
        "force",
        "ignore-unmatch",
        "sparse",
        "pathspec-from-file",
        "pathspec-file-nul",
        "no-dry-run",
        "no-quiet",
        "no-cached",
        "no-force",
        "no-ignore-unmatch",
        "no-sparse",
        "no-pathspec-from-file",
        "no-pathspec-file-nul",
    ],
    short_valued: "",
    long_valued: &["pathspec-from-file"],
    stop_at_operand: false,
};

/// `git rm -r` of everything (`.`, `*`, `:/`, the folder it runs in or above) deletes every tracked
/// file with its uncommitted changes. `--cached` leaves the files (the everyday way to apply a new
/// .gitignore: `git rm -r --cached .`), and removing named files is the command's purpose.
fn rm(args: &[Word], folder: &Path, home: &Path) -> Option<Finding> {
    let (before, paths) = split_dashdash(args);
    let opts = words::parse(before, &RM);
    if on(&opts, None, "cached") || on(&opts, Some('n'), "dry-run") || !opts.short('r') {
        return None;
    }
    let whole = opts
        .operands
        .iter()
        .copied()
        .chain(paths.unwrap_or(&[]).iter())
        .find(|w| everything(w, folder, home))?;
    discard(format!(
        "git rm -r {} deletes every tracked file of the repository's tree there, with any uncommitted \
         changes to them. To stop tracking files but keep them, use git rm -r --cached; to delete some, \
         name them.",
        whole.text
    ))
}

/// Whether a pathspec takes everything of the folder git runs in: `.`, `*`, `:/` (the top), or a path
/// to the folder or one above it.
fn everything(word: &Word, folder: &Path, home: &Path) -> bool {
    let text = word.text.as_str();
    if !word.known {
        return false;
    }
    if text.chars().all(|c| c == '*') || text == "./*" {
        return true;
    }
    if let Some(magic) = text.strip_prefix(':') {
        let rest = magic
            .strip_prefix('/')
            .or_else(|| magic.strip_prefix("(top)"))
            .unwrap_or("x");
        return rest.is_empty() || rest == "*" || rest == ".";
    }
    !word.glob && folder.starts_with(absolute(text, folder, home))
}

/// `worktree remove --force` deletes a worktree with its uncommitted changes and untracked files.
fn worktree(args: &[Word]) -> Option<Finding> {
    if args.first().map(|w| w.text.as_str()) != Some("remove") {
        return None;
    }
    let (before, _) = split_dashdash(&args[1..]);
    let opts = words::parse(
        before,
        &Spec {
            longs: &["force", "no-force"],
            ..Spec::default()
        },
    );
    if !on(&opts, Some('f'), "force") {
        return None;
    }
    discard(
        "git worktree remove --force deletes a worktree together with its uncommitted changes and \
         untracked files. Commit or stash there first, then git worktree remove without --force."
            .into(),
    )
}

/// `checkout-index --force` overwrites working files with the index's version.
fn checkout_index(args: &[Word]) -> Option<Finding> {
    let (before, _) = split_dashdash(args);
    let opts = words::parse(
        before,
        &Spec {
            longs: &[
                "all",
                "ignore-skip-worktree-bits",
                "force",
                "quiet",
                "no-create",
                "index",
                "stdin",
                "temp",
                "prefix",
                "stage",
                "create",
            ],
            long_valued: &["prefix", "stage"],
            ..Spec::default()
        },
    );
    if !on(&opts, Some('f'), "force") {
        return None;
    }
    discard(
        "git checkout-index --force overwrites working files with their version in the index, throwing \
         away their uncommitted changes. Save them with git stash first."
            .into(),
    )
}

/// `read-tree --reset -u` overwrites the working tree with a tree, as `reset --hard` does.
fn read_tree(args: &[Word]) -> Option<Finding> {
    let (before, _) = split_dashdash(args);
    let opts = words::parse(
        before,
        &Spec {
            longs: &[
                "super-prefix",
                "index-output",
                "empty",
                "verbose",
                "trivial",
                "aggressive",
                "reset",
                "prefix",
                "exclude-per-directory",
                "dry-run",
                "no-sparse-checkout",
                "debug-unpack",
                "recurse-submodules",
                "quiet",
                "sparse-checkout",
            ],
            long_valued: &[
                "super-prefix",
                "index-output",
                "prefix",
                "exclude-per-directory",
            ],
            ..Spec::default()
        },
    );
    if !(on(&opts, None, "reset") && opts.short('u')) || on(&opts, Some('n'), "dry-run") {
        return None;
    }
    discard(
        "git read-tree --reset -u overwrites the working tree with the tree read, throwing away \
         uncommitted changes as git reset --hard does. Save them with git stash first."
            .into(),
    )
}

const PUSH: Spec = Spec {
    longs: &[
        "verbose",
        "quiet",
        "repo",
        "all",
        "branches",
        "mirror",
        "delete",
        "tags",
        "dry-run",
        "porcelain",
        "force",
        "force-with-lease",
        "force-if-includes",
        "recurse-submodules",
        "thin",
        "receive-pack",
        "exec",
        "set-upstream",
        "progress",
        "prune",
        "no-verify",
        "follow-tags",
        "signed",
        "atomic",
        "push-option",
        "ipv4",
        "ipv6",
        "verify",
        "no-verbose",
        "no-quiet",
        "no-repo",
        "no-all",
        "no-branches",
        "no-mirror",
        "no-delete",
        "no-tags",
        "no-dry-run",
        "no-porcelain",
        "no-force",
        "no-force-with-lease",
        "no-force-if-includes",
        "no-recurse-submodules",
        "no-thin",
        "no-receive-pack",
        "no-exec",
        "no-set-upstream",
        "no-progress",
        "no-prune",
        "no-follow-tags",
        "no-signed",
        "no-atomic",
        "no-push-option",
    ],
    short_valued: "o",
    long_valued: &[
        "repo",
        "recurse-submodules",
        "receive-pack",
        "exec",
        "push-option",
    ],
    stop_at_operand: false,
};

/// `push` that replaces or deletes what others share: `--force`/`-f` and `+REFSPEC` (unless a lease
/// is given: git then checks each leased ref whatever `--force` says, so `--force-with-lease` is the
/// safe way to replace a branch; `--force-if-includes` alone forces nothing; a lease naming one ref
/// leaves `--force` blind for the others), `--mirror`, `--delete`,
/// `:BRANCH`, `--prune`. A dry run pushes nothing.
fn push(args: &[Word]) -> Option<Finding> {
    let (before, after) = split_dashdash(args);
    let opts = words::parse(before, &PUSH);
    if on(&opts, Some('n'), "dry-run") {
        return None;
    }
    let mut refspecs = opts.operand_texts();
    refspecs.extend(after.unwrap_or(&[]).iter().map(|w| w.text.as_str()));
    let lease = on(&opts, None, "force-with-lease");
    if on(&opts, None, "mirror") {
        return history(
            "git push --mirror makes the remote match this repository exactly: it deletes the remote's \
             branches and tags that are not here and overwrites the rest. Push the branches you mean: \
             git push origin BRANCH."
                .into(),
        );
    }
    if on(&opts, Some('d'), "delete") {
        return history(format!(
            "git push --delete deletes {} on the remote, for everyone who shares it. Ask the user to \
             delete remote branches or tags themselves.",
            named_or(refspecs.get(1..).unwrap_or(&[]), "branches or tags")
        ));
    }
    if let Some(gone) = refspecs.iter().find(|r| r.len() > 1 && r.starts_with(':')) {
        return history(format!(
            "git push REMOTE {gone} (an empty source) deletes {} on the remote, for everyone who shares \
             it. Ask the user to delete remote branches themselves.",
            &gone[1..]
        ));
    }
    if on(&opts, None, "prune") {
        return history(
            "git push --prune deletes every remote branch that has no counterpart here, for everyone \
             who shares the remote. Push the branches you mean without --prune."
                .into(),
        );
    }
    // A lease with no refname protects every ref pushed; one naming a ref (`--force-with-lease=main`)
    // protects that ref alone, and `--force` forces the others blindly.
    let lease_all = lease
        && opts
            .longs
            .iter()
            .any(|(name, value)| name == "force-with-lease" && value.is_none());
    if on(&opts, Some('f'), "force") && !lease_all {
        return history(
            "git push --force overwrites the remote branch, dropping the commits others pushed that \
             are not here. Use git push --force-with-lease, which refuses when the remote moved since \
             your last fetch."
                .into(),
        );
    }
    if let Some(forced) = refspecs
        .iter()
        .find(|r| r.len() > 1 && r.starts_with('+') && !lease)
    {
        return history(format!(
            "git push REMOTE {forced} force-pushes {} (the + is --force), dropping the commits others \
             pushed that are not here. Use git push --force-with-lease REMOTE {}, which refuses when \
             the remote moved since your last fetch.",
            &forced[1..],
            &forced[1..]
        ));
    }
    None
}

const BRANCH: Spec = Spec {
    longs: &[
        "verbose",
        "quiet",
        "track",
        "set-upstream",
        "set-upstream-to",
        "unset-upstream",
        "color",
        "remotes",
        "contains",
        "no-contains",
        "with",
        "without",
        "abbrev",
        "all",
        "delete",
        "move",
        "omit-empty",
        "copy",
        "list",
        "show-current",
        "create-reflog",
        "edit-description",
        "force",
        "merged",
        "no-merged",
        "column",
        "sort",
        "points-at",
        "ignore-case",
        "recurse-submodules",
        "format",
        "no-verbose",
        "no-quiet",
        "no-track",
        "no-set-upstream",
        "no-set-upstream-to",
        "no-unset-upstream",
        "no-color",
        "no-abbrev",
        "no-delete",
        "no-move",
        "no-omit-empty",
        "no-copy",
        "no-list",
        "no-show-current",
        "no-create-reflog",
        "no-edit-description",
        "no-force",
        "no-column",
        "no-sort",
        "no-points-at",
        "no-ignore-case",
        "no-recurse-submodules",
        "no-format",
    ],
    short_valued: "u",
    long_valued: &["set-upstream-to", "sort", "points-at", "format"],
    stop_at_operand: false,
};

/// `branch -D` (`--delete --force`, `-df`) deletes a branch whose commits may be merged nowhere, with
/// its reflog. `-d` refuses an unmerged branch; a remote-tracking branch (`-r`) comes back with the
/// next fetch. `branch -M NAME` (the rename every new GitHub repository's instructions give) and
/// `branch -f` stay allowed: the rename overwrites a branch only where one of that name exists, and
/// `-f` leaves the old tip in the branch's reflog.
fn branch(args: &[Word], fed: bool) -> Option<Finding> {
    let (before, _) = split_dashdash(args);
    let opts = words::parse(before, &BRANCH);
    let delete = opts.short('D') || on(&opts, Some('d'), "delete");
    let force = opts.short('D') || on(&opts, Some('f'), "force");
    // With no branch named, git deletes nothing: it stops, asking for one.
    if !(delete && force) || on(&opts, Some('r'), "remotes") || (opts.operands.is_empty() && !fed) {
        return None;
    }
    history(format!(
        "git branch -D deletes {} even when {} commits are merged nowhere, losing them with the \
         reflog. Use git branch -d, which refuses a branch that is not merged.",
        named_or(&opts.operand_texts(), "the branches it is given"),
        if opts.operands.len() == 1 {
            "its"
        } else {
            "their"
        }
    ))
}

/// `reflog expire` with an expiry given (`--expire=now`) and `reflog delete` drop git's record of
/// where branches were: the one way back to commits lost by a reset or a rebase. The default expiry
/// (what `git gc` applies) is left alone, and `git gc --prune=now` is allowed: what the reflog holds
/// survives it.
fn reflog(args: &[Word]) -> Option<Finding> {
    match args.first().map(|w| w.text.as_str()) {
        Some("delete") => history(
            "git reflog delete drops entries of the reflog, git's record of where branches were: the \
             one way back to commits lost by a reset or a rebase. Leave the reflog to expire on its \
             own."
                .into(),
        ),
        Some("expire") => {
            let opts = words::parse(
                &args[1..],
                &Spec {
                    longs: &[
                        "dry-run",
                        "rewrite",
                        "updateref",
                        "verbose",
                        "expire",
                        "expire-unreachable",
                        "stale-fix",
                        "all",
                        "single-worktree",
                    ],
                    long_valued: &["expire", "expire-unreachable"],
                    ..Spec::default()
                },
            );
            let early = ["expire", "expire-unreachable"].iter().any(|name| {
                opts.long_value(name)
                    .is_some_and(|v| !matches!(v, "never" | "false"))
            });
            if !early || on(&opts, Some('n'), "dry-run") {
                return None;
            }
            history(
                "git reflog expire --expire=... drops the reflog, git's record of where branches were: \
                 the one way back to commits lost by a reset or a rebase, which a gc then deletes. Leave \
                 the reflog to expire on its own."
                    .into(),
            )
        }
        _ => None,
    }
}

/// `submodule foreach CMD` runs CMD in every submodule: a shell line when it is one word, the words
/// themselves otherwise (as git's submodule helper runs it). The git it runs is judged as any other
/// (`git submodule foreach 'git reset --hard'`); what else it runs, the other rules do not see here.
fn submodule(args: &[Word], folder: &Path, home: &Path) -> Option<Finding> {
    // `submodule deinit -f`: the submodules' working trees removed, changes in them and all.
    if let Some(at) = args.iter().position(|w| w.text == "deinit")
        && args[at + 1..]
            .iter()
            .take_while(|w| w.text != "--")
            .any(|w| {
                (w.text.len() > 3 && "--force".starts_with(w.text.as_str()))
                    || (w.text.starts_with('-')
                        && !w.text.starts_with("--")
                        && w.text.contains('f'))
            })
    {
        return discard(
            "`git submodule deinit -f` removes the submodules' working trees, their uncommitted changes \
             with them. Commit or stash inside each submodule first, or deinit without -f, which stops \
             where a submodule has changes"
                .into(),
        );
    }
    let foreach = args.iter().position(|w| w.text == "foreach")?;
    let mut run = &args[foreach + 1..];
    while let Some(first) = run.first() {
        match first.text.as_str() {
            "--recursive" | "-q" | "--quiet" => run = &run[1..],
            "--" => {
                run = &run[1..];
                break;
            }
            _ => break,
        }
    }
    let commands = match run {
        [line] => crate::shell::read(
            &line.text,
            &crate::shell::Env {
                home: Some(home.to_string_lossy().into_owned()),
                ..crate::shell::Env::default()
            },
        ),
        [] => Vec::new(),
        words => vec![Command {
            words: words.to_vec(),
            ..Command::default()
        }],
    };
    commands
        .iter()
        .filter_map(|command| {
            let (program, args) = command.run_words()?;
            (program == "git").then_some((args, command.fed))
        })
        .find_map(|(args, fed)| judge_git(args, folder, home, fed))
}

/// `update-ref -d` deletes a ref directly, with no check that its commits are kept anywhere.
fn update_ref(args: &[Word]) -> Option<Finding> {
    let (before, _) = split_dashdash(args);
    let opts = words::parse(
        before,
        &Spec {
            longs: &["no-deref", "stdin", "create-reflog", "deref"],
            short_valued: "m",
            ..Spec::default()
        },
    );
    if !opts.short('d') {
        return None;
    }
    history(format!(
        "git update-ref -d {} deletes the ref with no check that its commits are kept anywhere. Use git \
         branch -d for a branch (it refuses an unmerged one), or git tag -d for a tag.",
        opts.operand_texts().first().unwrap_or(&"")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Word> {
        split_alias(line)
            .into_iter()
            .map(|text| Word {
                known: !text.contains('$'),
                glob: false,
                text,
            })
            .collect()
    }

    fn rule(line: &str) -> Option<&'static str> {
        judge_git(
            &words(line),
            Path::new("/home/u/p"),
            Path::new("/home/u"),
            false,
        )
        .map(|f| f.rule)
    }

    #[test]
    fn odd_arguments_are_judged_without_a_panic() {
        for line in [
            "-c",
            "-C",
            "--config-env",
            "-c alias.x",
            "-c alias.x= x",
            "-c alias.=x",
            "push :",
            "push +",
            "push -o",
            "checkout --",
            "checkout é.rs",
            "rm -r ''",
            "stash",
            "reflog expire --expire",
            "submodule foreach",
            "submodule foreach ''",
            "-c alias.x='' x",
            "-c alias.x=\\ x",
        ] {
            let _ = rule(line);
        }
    }

    #[test]
    fn an_alias_value_splits_as_git_splits_it() {
        assert_eq!(split_alias("reset --hard"), ["reset", "--hard"]);
        assert_eq!(
            split_alias(r#"commit -m "two words" -m 'x y' a\ b"#),
            ["commit", "-m", "two words", "-m", "x y", "a b"]
        );
        assert_eq!(split_alias("  push   -f  "), ["push", "-f"]);
        assert_eq!(split_alias("x ''"), ["x", ""]);
    }

    #[test]
    fn global_options_are_passed_over_and_aliases_expanded() {
        assert_eq!(
            rule("-C /x -c a.b=c --no-pager reset --ha"),
            Some(GIT_DISCARD)
        );
        assert_eq!(
            rule("--git-dir x/.git --work-tree=x -p reset --hard"),
            Some(GIT_DISCARD)
        );
        assert_eq!(rule("-c alias.x=reset x --hard"), Some(GIT_DISCARD));
        assert_eq!(rule("-c Alias.Up='push -f' UP"), Some(GIT_HISTORY));
        // An alias that expands into another alias.
        assert_eq!(
            rule("-c alias.a=b -c alias.b='branch -D' a x"),
            Some(GIT_HISTORY)
        );
        // A loop of aliases ends.
        assert_eq!(rule("-c alias.a=b -c alias.b=a a"), None);
        assert_eq!(rule("-c alias.x='!echo hi' x"), Some(GIT_HISTORY));
        assert_eq!(rule("--config-env=alias.x=CMD x"), Some(GIT_HISTORY));
        // An alias not used is nothing.
        assert_eq!(rule("-c alias.x='!rm -rf /' status"), None);
        assert_eq!(rule("-c alias.x=reset status"), None);
    }

    #[test]
    fn a_lone_checkout_operand_is_a_path_only_when_it_reads_as_one() {
        let path = |t: &str| {
            path_like(&Word {
                text: t.into(),
                known: true,
                glob: false,
            })
        };
        for p in [
            ".",
            "src/",
            "./x",
            "main.rs",
            "README.md",
            ":/",
            "*.rs",
            "Makefile",
            ".gitignore",
        ] {
            assert!(path(p), "{p}");
        }
        for b in [
            "main",
            "origin/main",
            "v1.2.3",
            "release-2.0",
            "HEAD~1",
            "-",
            "@{-1}",
            "feature/x",
        ] {
            assert!(!path(b), "{b}");
        }
    }

    #[test]
    fn git_rm_everything_is_the_folder_it_runs_in_or_above() {
        let home = Path::new("/home/u");
        let at = |t: &str| {
            everything(
                &Word {
                    text: t.into(),
                    known: true,
                    glob: t.contains('*'),
                },
                Path::new("/home/u/p/sub"),
                home,
            )
        };
        for all in [".", "*", ":/", ":(top)", "..", "/home/u/p", "./"] {
            assert!(at(all), "{all}");
        }
        for some in ["src", "*.log", ":/docs", "../other"] {
            assert!(!at(some), "{some}");
        }
    }
}
