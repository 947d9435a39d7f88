//! Downloads run as code ([`super::rules::NETWORK_SHELL`]), disks and devices ([`super::rules::DISK`]), and the system
//! beyond repair ([`super::rules::SYSTEM`]).
//!
//! A download is code run when it reaches a shell or an interpreter that reads its script from its
//! input (`curl URL | sh`, `wget -O- URL | sudo bash -s`, `curl URL | tee f | python3`), or is that
//! script itself (`sh -c "$(curl URL)"`, `bash <(curl URL)`, `source <(wget -O- URL)`, `eval "$(curl
//! URL)"`). A download to a file (`curl -o f URL`), or read by a program that does not run it (`curl
//! URL | jq`), is not.
//!
//! A disk is what lies under `/dev` (an image file is not: `mkfs.ext4 disk.img` makes a file system in
//! a file). The system: permissions or owners changed through the root or the home folder, fork bombs,
//! every process killed, the crontab removed, system files overwritten or deleted, the machine shut
//! down.

use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::shell::unwrap::SHELLS;
use crate::shell::{Command, Word};

use super::call::absolute;
use super::folders::{Place, Seen};
use super::rules::{DISK, Finding, NETWORK_SHELL, SYSTEM};
use super::words::{self, Spec};

/// Programs that fetch from the network and can write what they fetch to their output.
const DOWNLOADERS: &[&str] = &[
    "curl",
    "curlie",
    "wget",
    "wget2",
    "fetch",
    "http",
    "https",
    "xh",
    "xhs",
    "aria2c",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "lynx",
    "w3m",
    "iwr",
    "irm",
    "Invoke-WebRequest",
    "Invoke-RestMethod",
];

/// Interpreters that run a script from their input when given none (`python3`, `python3 -`).
const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "pypy",
    "pypy3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "bun",
    "deno",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "Rscript",
    "osascript",
    "pwsh",
    "powershell",
    "jshell",
    "groovy",
];

/// PowerShell's way of running text as code (`irm URL | iex`).
const EVALUATORS: &[&str] = &["iex", "Invoke-Expression"];

/// Files a device is named by that are no disk: writing them loses nothing.
const HARMLESS_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
    "/dev/console",
];

/// What a block device or the machine's memory is named by, under `/dev`.
const BLOCK_DEVICES: &[&str] = &[
    "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "md", "dm-", "loop", "nbd", "sr", "disk/",
    "mapper/", "mem", "kmem", "port", "root", "zram", "rbd", "bcache",
];

/// System folders a redirection must not write into.
const SYSTEM_FOLDERS: &[&str] = &[
    "/etc", "/usr", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

pub(super) fn judge(seen: &Seen, found: &mut Vec<Finding>) {
    network_shell(seen, found);
    disk(seen, found);
    system(seen, found);
}

// ---- what the pipes and wrappers of a line tell ----

/// The indexes of the commands `commands[at]` holds or runs: the ones right before it, read deeper.
pub(super) fn nested(commands: &[Command], at: usize) -> Range<usize> {
    let depth = commands[at].depth;
    let mut start = at;
    while start > 0 && commands[start - 1].depth > depth {
        start -= 1;
    }
    start..at
}

/// The command that feeds `commands[at]` through a pipe, with what it holds or runs (its last index is
/// the pipe's member itself): for a command run by a wrapper (`xargs rm`, `sudo bash`), the one piped
/// into the outermost wrapper.
pub(super) fn producer(commands: &[Command], at: usize) -> Option<Range<usize>> {
    let mut member = at;
    for _ in 0..crate::shell::MAX_DEPTH + 2 {
        let start = nested(commands, member).start;
        if start > 0 {
            let before = start - 1;
            if commands[before].depth == commands[member].depth && commands[before].piped {
                return Some(nested(commands, before).start..before + 1);
            }
        }
        // The wrapper that runs this one: the next command read shallower. A shell that reads its
        // script from its input (`echo 'xargs rm -rf' | sh`) gives the commands of the script no
        // input of the pipe's: what they read is the rest of the script.
        let depth = commands[member].depth;
        member = (member + 1..commands.len()).find(|&i| commands[i].depth < depth)?;
        let wrapper = &commands[member];
        if runs_scripts(wrapper.program()) && script_from_input(wrapper) {
            return None;
        }
    }
    None
}

/// Whether the input of `commands[at]` is a redirection from a word that cannot be known (`bash <
/// <(curl URL)`, `sudo bash < <(...)`, on the command or a wrapper that runs it): that word.
pub(super) fn input_from(commands: &[Command], at: usize) -> Option<&Word> {
    let mut member = at;
    for _ in 0..crate::shell::MAX_DEPTH + 2 {
        let command = &commands[member];
        if let Some(redirect) = command.redirects.iter().find(|r| !r.writes) {
            return (!redirect.target.known).then_some(&redirect.target);
        }
        let depth = command.depth;
        member = (member + 1..commands.len()).find(|&i| commands[i].depth < depth)?;
        let wrapper = &commands[member];
        if runs_scripts(wrapper.program()) && script_from_input(wrapper) {
            return None;
        }
    }
    None
}

/// Whether `program` is a shell or an interpreter: it runs a script.
pub(super) fn runs_scripts(program: &str) -> bool {
    SHELLS.contains(&program)
        || INTERPRETERS.contains(&program)
        || EVALUATORS.contains(&program)
        || versioned(program, "python")
        || versioned(program, "pypy")
        || versioned(program, "perl")
        || versioned(program, "ruby")
        || versioned(program, "php")
        || versioned(program, "node")
        || versioned(program, "lua")
}

/// `python3.12`, `perl5.36`, `php8.2`: `name` with a version after it.
fn versioned(program: &str, name: &str) -> bool {
    program
        .strip_prefix(name)
        .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Whether `command`, a shell or an interpreter, takes its script from its input rather than from
/// its words: no `-c SCRIPT` (or `-e`, `-r`, `-m`: a word after them is taken for its script) and no
/// script file, or `-s`, `-`, `/dev/stdin`.
pub(super) fn script_from_input(command: &Command) -> bool {
    let program = command.program();
    if EVALUATORS.contains(&program) {
        return true;
    }
    let shell = SHELLS.contains(&program);
    let args = command.args();
    let mut i = 0;
    while i < args.len() {
        let text = args[i].text.as_str();
        if text == "--" {
            i += 1;
            break;
        }
        if text == "-" || !text.starts_with('-') {
            break;
        }
        if shell && !text.starts_with("--") {
            if text.contains('c') {
                // The script is the next word; with none, it comes from input (`xargs sh -c`).
                return args.get(i + 1).is_none();
            }
            if text.contains('s') {
                return true;
            }
            if matches!(text, "-o" | "-O") {
                i += 1;
            }
        }
        i += 1;
    }
    match args.get(i) {
        None => true,
        Some(first) => first.text == "-" || stdin_file(&first.text),
    }
}

/// `at` and the wrappers that run it (`sudo`, `timeout 10`, `env`): each is the next command, less
/// deep, whose words end with the one it runs. Their redirections and the commands of their words
/// are the wrapped command's too (`sudo curl URL > f`).
pub(super) fn wrapper_chain(commands: &[Command], at: usize) -> Vec<usize> {
    let mut chain = vec![at];
    let mut top = at;
    while chain.len() <= crate::shell::MAX_DEPTH {
        let runs_it = commands.get(top + 1).is_some_and(|w| {
            w.depth < commands[top].depth
                && w.words.len() > commands[top].words.len()
                && w.words.ends_with(&commands[top].words)
        });
        if !runs_it {
            break;
        }
        top += 1;
        chain.push(top);
    }
    chain
}

/// Whether `path` names the standard input as a file.
fn stdin_file(path: &str) -> bool {
    matches!(path, "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0")
}

/// The files a downloader on the line writes what it fetched to (`curl -o F`, `wget -O F`, `curl URL
/// > F`), as absolute paths from the call's folder.
fn downloaded_files(seen: &Seen) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let (cwd, home) = (&seen.call.cwd, &seen.call.home);
    for (at, command) in seen.commands.iter().enumerate() {
        let program = command.program();
        if !DOWNLOADERS.contains(&program) {
            continue;
        }
        let (short, long) = if program.starts_with("wget") {
            ('O', "--output-document")
        } else {
            ('o', "--output")
        };
        let args = command.args();
        for (i, word) in args.iter().enumerate() {
            let text = word.text.as_str();
            // `-o F`, `-oF`, and bundled with flags before it: `curl -fsSLo F`.
            let bundled = text
                .strip_prefix('-')
                .filter(|rest| !rest.starts_with('-'))
                .and_then(|rest| rest.find(short).map(|at| &rest[at + 1..]));
            let file = if text == long {
                args.get(i + 1).map(|w| w.text.as_str())
            } else if let Some(value) = text.strip_prefix(&format!("{long}=")) {
                Some(value)
            } else if let Some(rest) = bundled {
                if rest.is_empty() {
                    args.get(i + 1).map(|w| w.text.as_str())
                } else {
                    Some(rest)
                }
            } else {
                None
            };
            files.extend(file.filter(|f| *f != "-").map(|f| absolute(f, cwd, home)));
        }
        for redirect in wrapper_chain(seen.commands, at)
            .into_iter()
            .flat_map(|i| &seen.commands[i].redirects)
            .filter(|r| r.writes && r.target.known)
        {
            files.push(absolute(&redirect.target.text, cwd, home));
        }
    }
    files
}

/// Whether `command` runs one of `files` as its script or as itself (`sh i.sh`, `./i.sh`,
/// `source i.sh`).
fn runs_file(seen: &Seen, command: &Command, files: &[PathBuf]) -> bool {
    let (cwd, home) = (&seen.call.cwd, &seen.call.home);
    let is_file = |w: &Word| w.known && files.contains(&absolute(&w.text, cwd, home));
    let program = command.words.first();
    program.is_some_and(|w| w.text.contains('/') && is_file(w))
        || script_words(command).into_iter().any(is_file)
}

/// The words of `command` that are its script or the file of it: the word after `-c` for a shell, the
/// first operand, and for an interpreter every word up to it (the values of `-c`, `-e`, `-r`).
pub(super) fn script_words(command: &Command) -> Vec<&Word> {
    let args = command.args();
    match command.program() {
        "eval" => args.iter().collect(),
        "source" | "." => args.iter().take(1).collect(),
        program if SHELLS.contains(&program) => {
            let mut out = Vec::new();
            for (i, word) in args.iter().enumerate() {
                let text = word.text.as_str();
                if text.starts_with('-') && !text.starts_with("--") && text.contains('c') {
                    out.extend(args.get(i + 1));
                    break;
                }
                if !text.starts_with('-') {
                    out.push(word);
                    break;
                }
            }
            out
        }
        program if runs_scripts(program) => {
            let first = args
                .iter()
                .position(|w| !w.text.starts_with('-'))
                .map_or(args.len(), |i| i + 1);
            args[..first].iter().collect()
        }
        _ => Vec::new(),
    }
}

/// Whether a word that cannot be known before it runs holds a download's output (`$(curl URL)`,
/// `<(wget -O- URL)`, read as `/dev/fd/...`): a downloader in a command's place inside it (after a
/// separator, past `sudo`, `env` and assignments). Read from the text, with no second read of it.
fn holds_download(word: &Word) -> bool {
    if word.known || word.text.len() > 4096 {
        return false;
    }
    let text = word.text.strip_prefix("/dev/fd/").unwrap_or(&word.text);
    let mut at_command = true;
    let mut token = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        let separator = ";&|()`\n".contains(c);
        if c.is_whitespace() || separator || c == '"' || c == '\'' || c == '$' {
            if !token.is_empty() {
                let name = token.rsplit('/').next().unwrap_or(&token);
                if at_command {
                    if DOWNLOADERS.contains(&name) {
                        return true;
                    }
                    let wrapper =
                        matches!(name, "sudo" | "env" | "command" | "exec" | "nohup" | "time")
                            || token.contains('=');
                    at_command = wrapper;
                }
                token.clear();
            }
            if separator {
                at_command = true;
            }
        } else {
            token.push(c);
        }
    }
    false
}

/// Whether a command or what it holds fetches from the network.
fn downloads(commands: &[Command], range: Range<usize>) -> bool {
    commands[range]
        .iter()
        .any(|c| DOWNLOADERS.contains(&c.program()))
}

/// Whether anything up the pipe that feeds `commands[at]` fetches from the network
/// (`curl URL | tee f | sh`).
pub(super) fn fed_by_download(commands: &[Command], at: usize) -> bool {
    let mut member = at;
    for _ in 0..64 {
        let Some(range) = producer(commands, member) else {
            return false;
        };
        if downloads(commands, range.clone()) {
            return true;
        }
        member = range.end - 1;
    }
    false
}

// ---- network-shell ----

fn network_shell(seen: &Seen, found: &mut Vec<Finding>) {
    let commands = seen.commands;
    let files = downloaded_files(seen);
    for (at, command) in commands.iter().enumerate() {
        let program = command.program();
        // `curl URL > >(bash)`: a shell reading its input inside a downloader's words.
        if DOWNLOADERS.contains(&program) && {
            let chain = wrapper_chain(commands, at);
            chain.iter().any(|&top| {
                nested(commands, top).any(|i| {
                    !chain.contains(&i)
                        && runs_scripts(commands[i].program())
                        && script_from_input(&commands[i])
                })
            })
        } {
            found.push(Finding {
                rule: NETWORK_SHELL,
                reason: format!(
                    "runs a download as code: `{}` hands what the network sent to a shell or an \
                     interpreter. Download it to a file (curl -fsSL URL -o install.sh), read it, and \
                     run that file if it does what it should.",
                    shown(command)
                ),
            });
            return;
        }
        // `curl -o i.sh URL && sh i.sh`: the file downloaded is run on the same line, unread.
        if !files.is_empty() && runs_file(seen, command, &files) {
            found.push(Finding {
                rule: NETWORK_SHELL,
                reason: format!(
                    "runs a download as code: `{}` runs the file a download on the same line just \
                     wrote, before anyone has read it. Download it in one call, read it, and run it \
                     in another if it does what it should.",
                    shown(command)
                ),
            });
            return;
        }
        let runs = runs_scripts(program) || matches!(program, "source" | "." | "eval");
        if !runs {
            continue;
        }
        // `curl URL | source /dev/stdin`.
        let sources_input = matches!(program, "source" | ".")
            && command.args().first().is_some_and(|w| stdin_file(&w.text));
        let reads_input = sources_input || (runs_scripts(program) && script_from_input(command));
        let piped_in = reads_input
            && (fed_by_download(commands, at)
                || input_from(commands, at).is_some_and(holds_download));
        let substituted = script_words(command).into_iter().any(holds_download);
        if piped_in || substituted {
            let shown = shown(command);
            let how = if piped_in {
                format!(
                    "runs a download as code: `{shown}` reads its script from what the network sent"
                )
            } else {
                format!("runs a download as code: `{shown}` takes its script from a download")
            };
            found.push(Finding {
                rule: NETWORK_SHELL,
                reason: format!(
                    "{how}, which no one has read and which can change between two fetches. \
                     Download it to a file (curl -fsSL URL -o install.sh), read it, and run that \
                     file if it does what it should."
                ),
            });
            return;
        }
    }
}

// ---- disk ----

/// Each folder a command may run in, or the call's own when none is known.
fn each_folder<'a>(folders: &'a [PathBuf], cwd: &'a Path) -> impl Iterator<Item = &'a Path> {
    let own = folders.is_empty().then_some(cwd);
    folders.iter().map(PathBuf::as_path).chain(own)
}

/// Whether `path` (absolute) names a device that is not harmless to write (a disk, a partition, the
/// memory, a terminal's is harmless).
fn device(path: &str) -> bool {
    let Some(rest) = path.strip_prefix("/dev/") else {
        return false;
    };
    !(HARMLESS_DEVICES.contains(&path)
        || rest.starts_with("fd/")
        || rest.starts_with("pts/")
        || rest.starts_with("shm/")
        || rest.starts_with("tty")
        || rest.starts_with("std")
        || rest.is_empty())
}

/// Whether `path` names a block device or the memory (what a redirection or `tee` must not write).
fn block_device(path: &str) -> bool {
    path.strip_prefix("/dev/")
        .is_some_and(|rest| BLOCK_DEVICES.iter().any(|b| rest.starts_with(b)))
}

/// A word as the path it names from `folder` (a word that cannot be known, as written).
/// A known one is made absolute and clean, so that `/dev/./sda`, `/dev//sda` and `//dev/sda` are the
/// `/dev/sda` they open.
fn path_text(word: &Word, folder: &Path, home: &Path) -> String {
    resolved(&word.text, word.known, folder, home)
}

/// `text` as the path it names from `folder` when it is `known`; as written otherwise.
fn resolved(text: &str, known: bool, folder: &Path, home: &Path) -> String {
    if !known {
        return text.to_string();
    }
    absolute(text, folder, home).to_string_lossy().into_owned()
}

fn disk(seen: &Seen, found: &mut Vec<Finding>) {
    let home = seen.call.home.as_path();
    // Every folder a command may run in (`true && cd / && dd of=dev/sda` may run in the project or
    // in the root).
    for (command, folder) in seen.each().flat_map(|(command, folders)| {
        each_folder(folders, &seen.call.cwd).map(move |f| (command, f))
    }) {
        let path = |w: &Word| path_text(w, folder, home);
        let shown = shown(command);
        let mut hit: Option<String> = None;
        for redirect in &command.redirects {
            if redirect.writes && block_device(&path(&redirect.target)) {
                hit = Some(format!(
                    "`{shown} > {}` writes straight onto a disk or the memory",
                    redirect.target.text
                ));
            }
        }
        let args = command.args();
        let operands: Vec<&Word> = args.iter().filter(|w| !w.text.starts_with('-')).collect();
        let any_device = || operands.iter().any(|w| device(&path(w)));
        let program = command.program();
        let what = match program {
            p if p == "mkfs"
                || p.starts_with("mkfs.")
                || matches!(
                    p,
                    "mke2fs" | "mkswap" | "mkdosfs" | "mkntfs" | "mkexfatfs" | "mkfs_msdos"
                ) =>
            {
                // An image file is no disk; a target that cannot be known may be one (the target
                // is the last operand but a block count: `mkfs.ext4 -L "$LABEL" disk.img` is no
                // disk).
                let target = operands
                    .iter()
                    .rev()
                    .find(|w| !w.text.chars().all(|c| c.is_ascii_digit()));
                (any_device() || target.is_some_and(|w| !w.known)).then(|| {
                    "makes a new file system on a device, erasing what it holds".to_string()
                })
            }
            "wipefs" => {
                let short = |w: &Word, c: char| {
                    w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains(c)
                };
                let erases = args.iter().any(|w| {
                    matches!(w.text.as_str(), "--all" | "--offset")
                        || w.text.starts_with("--offset=")
                        || short(w, 'a')
                        || short(w, 'o')
                });
                let dry = args.iter().any(|w| w.text == "--no-act" || short(w, 'n'));
                (erases && !dry && (any_device() || operands.iter().any(|w| !w.known)))
                    .then(|| "erases the signatures that make a disk's file systems and partitions readable".to_string())
            }
            "fdisk" | "gdisk" | "cfdisk" | "cgdisk" => {
                let lists = args
                    .iter()
                    .any(|w| matches!(w.text.as_str(), "-l" | "--list" | "-L"));
                (!lists && any_device()).then(|| "rewrites a disk's partition table".to_string())
            }
            "sfdisk" => {
                let reading = [
                    "-l",
                    "--list",
                    "-d",
                    "--dump",
                    "-J",
                    "--json",
                    "-V",
                    "--verify",
                    "-s",
                    "--show-size",
                    "-g",
                    "--show-geometry",
                    "-T",
                    "--list-types",
                    "-F",
                    "--list-free",
                ];
                let reads = args.iter().any(|w| reading.contains(&w.text.as_str()));
                (!reads && any_device()).then(|| "rewrites a disk's partition table".to_string())
            }
            "sgdisk" => {
                let reading = [
                    "-p",
                    "--print",
                    "-i",
                    "--info",
                    "-v",
                    "--verify",
                    "-L",
                    "--list-types",
                    "-b",
                    "--backup",
                    "-O",
                    "--print-mbr",
                ];
                let changes = args.iter().filter(|w| w.text.starts_with('-')).any(|w| {
                    !reading
                        .iter()
                        .any(|r| w.text == *r || w.text.starts_with(&format!("{r}=")))
                });
                (changes && any_device()).then(|| "rewrites a disk's partition table".to_string())
            }
            "parted" => {
                let verbs = [
                    "mklabel",
                    "mktable",
                    "mkpart",
                    "mkpartfs",
                    "rm",
                    "resizepart",
                    "resize",
                    "move",
                    "name",
                    "set",
                    "toggle",
                    "rescue",
                    "mkfs",
                    "cp",
                    "disk_set",
                    "disk_toggle",
                ];
                let changes = args.iter().any(|w| verbs.contains(&w.text.as_str()));
                let reads = args.iter().any(|w| {
                    matches!(
                        w.text.as_str(),
                        "-l" | "--list"
                            | "print"
                            | "p"
                            | "unit"
                            | "-h"
                            | "--help"
                            | "-v"
                            | "--version"
                    )
                });
                ((changes || !reads) && any_device())
                    .then(|| "rewrites a disk's partitions".to_string())
            }
            "blkdiscard" => (any_device() || operands.iter().any(|w| !w.known))
                .then(|| "discards every block of a device: its data is gone".to_string()),
            "dd" => args
                .iter()
                .find_map(|w| w.text.strip_prefix("of=").map(|target| (target, w.known)))
                .filter(|(target, known)| device(&resolved(target, *known, folder, home)))
                .map(|(target, _)| {
                    format!("writes raw data onto {target}, over whatever it holds")
                }),
            "shred" => any_device().then(|| "overwrites a whole device with noise".to_string()),
            "tee" => operands
                .iter()
                .any(|w| block_device(&path(w)))
                .then(|| "writes straight onto a disk or the memory".to_string()),
            "cp" => operands
                .last()
                .filter(|w| block_device(&path(w)))
                .map(|_| "copies straight onto a disk, over whatever it holds".to_string()),
            "cryptsetup" => args
                .iter()
                .any(|w| {
                    matches!(
                        w.text.as_str(),
                        "luksFormat" | "erase" | "luksErase" | "reencrypt"
                    )
                })
                .then(|| {
                    "formats or erases an encrypted disk's keys: its data is gone".to_string()
                }),
            "lvremove" | "vgremove" | "pvremove" => {
                Some("removes a volume and the data on it".to_string())
            }
            "zpool" | "zfs" => args
                .first()
                .filter(|w| matches!(w.text.as_str(), "destroy" | "labelclear"))
                .map(|_| "destroys a pool or data set and what it holds".to_string()),
            "nvme" => args
                .first()
                .filter(|w| matches!(w.text.as_str(), "format" | "sanitize"))
                .map(|_| "formats or sanitizes a drive: its data is gone".to_string()),
            "badblocks" => args
                .iter()
                .any(|w| {
                    w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains('w')
                })
                .then(|| "writes test patterns over a whole device".to_string()),
            _ => None,
        };
        if let Some(what) = what {
            hit = Some(format!("`{shown}` {what}"));
        }
        if let Some(hit) = hit {
            found.push(Finding {
                rule: DISK,
                reason: format!(
                    "{hit}: a disk's data has no undo. Work on an image file instead (truncate -s 1G \
                     disk.img, then mkfs or dd on disk.img), or ask the user to run it."
                ),
            });
            return;
        }
    }
}

// ---- system ----

/// chmod's options (a mode may start with `-`: `chmod -w f`).
const CHMOD: Spec = Spec {
    longs: &[
        "changes",
        "silent",
        "quiet",
        "verbose",
        "no-preserve-root",
        "preserve-root",
        "reference",
        "recursive",
        "help",
        "version",
    ],
    short_valued: "",
    long_valued: &["reference"],
    stop_at_operand: false,
};

/// chown's and chgrp's options.
const CHOWN: Spec = Spec {
    longs: &[
        "changes",
        "dereference",
        "no-dereference",
        "from",
        "no-preserve-root",
        "preserve-root",
        "quiet",
        "silent",
        "reference",
        "recursive",
        "verbose",
        "help",
        "version",
    ],
    short_valued: "",
    long_valued: &["from", "reference"],
    stop_at_operand: false,
};

fn system(seen: &Seen, found: &mut Vec<Finding>) {
    if let super::call::Does::Shell(line) = &seen.call.does
        && let Some(name) = fork_bomb(line)
    {
        found.push(Finding {
            rule: SYSTEM,
            reason: format!(
                "the function `{name}` is a fork bomb: it starts two of itself, and each of those two \
                 more, until the machine has no process left to give and must be restarted. Run what you mean once, or in a \
                 loop that ends."
            ),
        });
        return;
    }
    let home = seen.call.home.as_path();
    for (command, folders) in seen.each() {
        let shown = shown(command);
        let mut hit: Option<String> = None;
        let writes = command
            .redirects
            .iter()
            .filter(|redirect| redirect.writes && redirect.target.known);
        for (redirect, folder) in writes.flat_map(|redirect| {
            each_folder(folders, &seen.call.cwd).map(move |folder| (redirect, folder))
        }) {
            let path = absolute(&redirect.target.text, folder, home);
            if SYSTEM_FOLDERS.iter().any(|f| path.starts_with(f))
                || path == Path::new("/proc/sysrq-trigger")
            {
                hit = Some(format!(
                    "`{shown}` writes {} by a redirection, a system file the machine needs to start \
                     and run. Write to a file of the project; ask the user to change system files",
                    path.display()
                ));
            }
        }
        let args = command.args();
        let program = command.program();
        match program {
            // `echo c | sudo tee /proc/sysrq-trigger`: the kernel's own trigger, by another name than a
            // redirection. (A system file written by tee is a setup step, let through.)
            "tee" => {
                let system_file = args
                    .iter()
                    .filter(|w| w.known && !w.text.starts_with('-'))
                    .find_map(|w| {
                        each_folder(folders, &seen.call.cwd)
                            .map(|folder| absolute(&w.text, folder, home))
                            .find(|path| path == Path::new("/proc/sysrq-trigger"))
                    });
                if let Some(path) = system_file {
                    hit = Some(format!(
                        "`{shown}` writes {}, which stops or crashes the machine at once. Ask \
                         the user to restart it",
                        path.display()
                    ));
                }
            }
            "chmod" | "chown" | "chgrp" => {
                if let Some(what) = permissions(seen, command, folders) {
                    hit = Some(format!(
                        "`{shown}` {what}. Change only the files you mean, by their paths inside the \
                         project"
                    ));
                }
            }
            "kill" if kills_every_process(args) => {
                hit = Some(format!(
                    "`{shown}` signals every process you may signal (-1): your session, the agent, \
                     every program you run. Kill the process you mean by its pid"
                ));
            }
            // A system file deleted or emptied (a folder of them is the delete rules').
            "rm" | "unlink" | "shred" | "truncate" => {
                let system_file = args
                    .iter()
                    .filter(|w| w.known && !w.text.starts_with('-'))
                    .find(|w| {
                        each_folder(folders, &seen.call.cwd).any(|folder| {
                            let path = absolute(&w.text, folder, home);
                            SYSTEM_FOLDERS
                                .iter()
                                .any(|f| path.starts_with(f) && path != Path::new(f))
                        })
                    });
                if let Some(file) = system_file {
                    hit = Some(format!(
                        "`{shown}` deletes or empties {}, a system file the machine needs to start and \
                         run. Ask the user to change system files",
                        file.text
                    ));
                }
            }
            "killall5" => {
                hit = Some(format!(
                    "`{shown}` signals every process on the machine. Kill the process you mean by its pid"
                ));
            }
            "crontab"
                if args.iter().any(|w| {
                    w.text == "--remove"
                        || (!w.text.starts_with("--")
                            && w.text.starts_with('-')
                            && w.text.contains('r'))
                }) =>
            {
                hit = Some(format!(
                    "`{shown}` removes your whole crontab, every scheduled job, with no copy kept. Save \
                     it first (crontab -l > crontab.bak) and edit it (crontab -e) instead"
                ));
            }
            _ => {}
        }
        if let Some(what) = stops_machine(command) {
            hit = Some(format!(
                "`{shown}` {what}: a coding task has no reason to, and every program running is \
                 stopped. Ask the user to do it"
            ));
        }
        if runs_scripts(program)
            && script_words(command).iter().any(|w| {
                let code = w.text.as_str();
                code.contains("fork")
                    && (code.contains("while") || code.contains("for(;;)") || code.contains("loop"))
            })
        {
            hit = Some(format!(
                "`{shown}` forks in a loop that does not end: a fork bomb, until the machine must be \
                 restarted. Run what you mean once"
            ));
        }
        if let Some(hit) = hit {
            found.push(Finding {
                rule: SYSTEM,
                reason: format!("{hit}."),
            });
            return;
        }
    }
}

/// chmod, chown or chgrp through the root, a top-level folder or the home folder (recursive), or of
/// the root itself: what it does, when it does that.
fn permissions(seen: &Seen, command: &Command, folders: &[PathBuf]) -> Option<String> {
    let args = command.args();
    let chmod = command.program() == "chmod";
    // `chmod -w f`: a mode, not options.
    let mode_word = |w: &Word| {
        chmod
            && w.text.len() > 1
            && w.text.starts_with('-')
            && w.text[1..]
                .chars()
                .all(|c| "rwxXstugoa+=,01234567".contains(c))
    };
    let modes = args.iter().filter(|w| mode_word(w)).count();
    let rest: Vec<Word> = args.iter().filter(|w| !mode_word(w)).cloned().collect();
    let opts = words::parse(&rest, if chmod { &CHMOD } else { &CHOWN });
    let recursive = opts.either('R', "recursive");
    let skip = usize::from(modes == 0 && !opts.long("reference"));
    let what = if chmod {
        "changes the permissions of"
    } else {
        "changes the owner of"
    };
    if opts.long("no-preserve-root") {
        return Some(format!(
            "{what} the root folder / when named (--no-preserve-root)"
        ));
    }
    for word in opts.operands.iter().skip(skip) {
        // What a `find` runs it on (`find ~ -exec chmod 000 {} +`, read as `chmod 000 ~/**`) is every
        // file under the folder, as -R would be.
        let recursive = recursive
            || (word.glob && word.text.ends_with("/**") && !find_narrowed(seen.commands, command));
        for folder in folders {
            let place = seen.place(word, folder);
            let reach = match &place {
                Place::Root => "the root folder /, every file on the machine".to_string(),
                Place::TopLevel(path) if recursive => {
                    format!("{}, a top-level system folder", path.display())
                }
                Place::HomeOrAbove(path) if recursive => {
                    format!("{}, your home folder or one holding it", path.display())
                }
                Place::RootIfEmpty(text) if recursive && !text.contains(":?") => {
                    format!("{text}, the root folder / when the variable is empty")
                }
                _ => continue,
            };
            let all = if recursive {
                " and everything in it"
            } else {
                ""
            };
            return Some(format!(
                "{what} {reach}{all}: programs, keys and logins depend on them, and they cannot be put back"
            ));
        }
    }
    None
}

/// Whether the `find` that runs `command` (`find ~ -name '*.sh' -exec chmod +x {} +`) picks files by a
/// test of their names, times or owners: then it runs on some files, not on everything under its
/// start (`-type f` alone, or `-maxdepth`, still takes everything of a kind).
fn find_narrowed(commands: &[Command], command: &Command) -> bool {
    const NOT_NARROWING: &[&str] = &[
        "-type",
        "-xtype",
        "-maxdepth",
        "-mindepth",
        "-depth",
        "-d",
        "-xdev",
        "-mount",
        "-follow",
        "-noleaf",
        "-L",
        "-H",
        "-P",
        "-print",
        "-print0",
        "-true",
    ];
    let Some(at) = commands.iter().position(|c| std::ptr::eq(c, command)) else {
        return false;
    };
    let Some(find) = commands[at + 1..]
        .iter()
        .find(|c| c.depth < command.depth)
        .filter(|c| c.program() == "find")
    else {
        return false;
    };
    find.args()
        .iter()
        .take_while(|w| !matches!(w.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"))
        .any(|w| w.text.starts_with('-') && !NOT_NARROWING.contains(&w.text.as_str()))
}

/// `kill -9 -1`, `kill -KILL -1`, `kill -- -1`: a pid of -1 is every process the user may signal.
fn kills_every_process(args: &[Word]) -> bool {
    let mut i = 0;
    match args.first().map(|w| w.text.as_str()) {
        Some("-s" | "-n" | "--signal") => i = 2,
        Some("-l" | "-L" | "--list" | "--table") => return false,
        Some("--") => {}
        Some(first) if first.starts_with('-') && first.len() > 1 => i = 1,
        _ => {}
    }
    if args.get(i).is_some_and(|w| w.text == "--") {
        i += 1;
    }
    args.get(i..).unwrap_or(&[]).iter().any(|w| w.text == "-1")
}

/// Whether `command` shuts the machine down, restarts or suspends it: what it does.
fn stops_machine(command: &Command) -> Option<&'static str> {
    let args = command.args();
    let first = args
        .iter()
        .find(|w| !w.text.starts_with('-'))
        .map(|w| w.text.as_str());
    match command.program() {
        "shutdown" => {
            // `shutdown -c` cancels one; `-k` only warns.
            let cancels = args
                .iter()
                .any(|w| matches!(w.text.as_str(), "-c" | "-k" | "--help"));
            (!cancels).then_some("shuts the machine down")
        }
        "reboot" | "halt" | "poweroff" => (!args.iter().any(|w| w.text == "--help"))
            .then_some("shuts down or restarts the machine"),
        "init" | "telinit" => matches!(first, Some("0" | "6" | "1" | "s" | "S"))
            .then_some("changes the machine's run level: it stops or restarts"),
        "systemctl" | "loginctl" => match first {
            Some(
                "poweroff"
                | "reboot"
                | "halt"
                | "kexec"
                | "soft-reboot"
                | "suspend"
                | "hibernate"
                | "hybrid-sleep"
                | "suspend-then-hibernate"
                | "emergency"
                | "rescue",
            ) => Some("shuts down, restarts or suspends the machine"),
            Some("isolate") => args
                .iter()
                .any(|w| {
                    ["poweroff", "reboot", "halt", "rescue", "emergency"]
                        .iter()
                        .any(|t| w.text.starts_with(t))
                })
                .then_some("shuts down or restarts the machine"),
            _ => None,
        },
        _ => None,
    }
}

/// A fork bomb on the line: a function whose body pipes itself into itself, or starts itself twice
/// (`:(){ :|:& };:`, `bomb() { bomb | bomb & }; bomb`): its name. Read from the line's text, so that
/// no carrier (a substitution, `sh -c`, a here-document) hides it.
fn fork_bomb(line: &str) -> Option<String> {
    if line.len() > 16 * 1024 {
        return None;
    }
    let name_char = |c: char| !c.is_whitespace() && !";&|(){}'\"`<>$".contains(c);
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut names: Vec<&str> = Vec::new();
    for (k, &(at, c)) in chars.iter().enumerate() {
        if names.len() >= 32 {
            break;
        }
        // `NAME()` or `NAME ( )`: the name before the parentheses.
        if c == '(' {
            let closes = chars[k + 1..]
                .iter()
                .find(|(_, n)| !n.is_whitespace())
                .is_some_and(|(_, n)| *n == ')');
            let before = line[..at].trim_end();
            let start = before
                .char_indices()
                .rev()
                .find(|(_, c)| !name_char(*c))
                .map_or(0, |(i, c)| i + c.len_utf8());
            if closes && start < before.len() {
                names.push(&before[start..]);
            }
        }
        // `function NAME`: the name after the reserved word.
        if line[at..].starts_with("function")
            && (at == 0 || !name_char(line[..at].chars().next_back().unwrap_or(' ')))
        {
            let rest = line[at + "function".len()..].trim_start();
            if rest.len() < line.len() - at - "function".len() {
                let end = rest.find(|c: char| !name_char(c)).unwrap_or(rest.len());
                if end > 0 {
                    names.push(&rest[..end]);
                }
            }
        }
    }
    let squeezed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    names.into_iter().find_map(|name| {
        let piped = format!("{name}|{name}");
        let twice = format!("{name}&{name}");
        (squeezed.contains(&piped) || squeezed.contains(&twice)).then(|| name.to_string())
    })
}

/// A command shown in a reason: its words, cut short past 80 characters.
pub(super) fn shown(command: &Command) -> String {
    let mut text = command
        .words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    if text.is_empty() {
        text = command
            .redirects
            .iter()
            .map(|r| format!(">{}", r.target.text))
            .collect::<Vec<_>>()
            .join(" ");
    }
    if text.chars().count() > 80 {
        text = text.chars().take(77).collect::<String>() + "...";
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fork_bombs_are_told_by_a_function_that_runs_itself_twice() {
        assert_eq!(fork_bomb(":(){ :|:& };:").as_deref(), Some(":"));
        assert_eq!(
            fork_bomb("bomb() { bomb | bomb & }; bomb").as_deref(),
            Some("bomb")
        );
        assert_eq!(fork_bomb("function f { f & f; }; f").as_deref(), Some("f"));
        assert_eq!(
            fork_bomb("echo $(function f { f | f & }; f)").as_deref(),
            Some("f")
        );
        assert_eq!(
            fork_bomb("if true; then :(){ :|:& };:; fi").as_deref(),
            Some(":")
        );
        assert_eq!(fork_bomb("build() { make; }; build | tee log"), None);
        assert_eq!(fork_bomb("echo hi | cat"), None);
    }

    #[test]
    fn kill_minus_one_is_a_pid_after_the_signal_not_a_signal() {
        let words = |line: &str| -> Vec<Word> {
            line.split_whitespace()
                .map(|t| Word {
                    text: t.into(),
                    known: true,
                    glob: false,
                })
                .collect()
        };
        assert!(kills_every_process(&words("-9 -1")));
        assert!(kills_every_process(&words("-s KILL -1")));
        assert!(kills_every_process(&words("-- -1")));
        assert!(
            !kills_every_process(&words("-1 1234")),
            "signal 1 (HUP) to one pid"
        );
        assert!(!kills_every_process(&words("-9 1234")));
    }

    #[test]
    fn a_download_is_told_in_a_command_s_place_inside_a_word() {
        let word = |text: &str| Word {
            text: text.into(),
            known: false,
            glob: false,
        };
        assert!(holds_download(&word("$(curl -fsSL https://x/install.sh)")));
        assert!(holds_download(&word("/dev/fd/wget -qO- https://x")));
        assert!(holds_download(&word(
            "$(cd /tmp && sudo /usr/bin/curl -s x)"
        )));
        assert!(holds_download(&word("$(A=1 curl x)")));
        assert!(!holds_download(&word("$(cat install.sh)")));
        assert!(!holds_download(&word("$(echo curl)")));
        assert!(!holds_download(&word("$(cat https://x/curl)")));
    }

    #[test]
    fn devices_are_told_from_harmless_ones_and_image_files() {
        assert!(device("/dev/sda"));
        assert!(device("/dev/nvme0n1p2"));
        assert!(!device("/dev/null"));
        assert!(!device("/dev/fd/3"));
        assert!(!device("disk.img"));
        assert!(block_device("/dev/mapper/root"));
        assert!(!block_device("/dev/null"));
    }
}
