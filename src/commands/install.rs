//! `hookd install`: the systemd user units (`hookd.service`, `hookd.socket`) for a hookd binary.
//!
//! A unit the user edited (a `Environment=` line, another `RestartSec`) is theirs: it is left as it is,
//! and the difference shown, unless `--force` says to replace it. A unit that is what this hookd would
//! write, or differs from it only in the binary `ExecStart` runs (a reinstall with another `--bin`), is
//! hookd's own, and is written.
//!
//! Units written where systemd reads the user's own (no `--dir`) are then enabled, `systemctl --user
//! enable --now hookd.socket` (unless `--no-enable`): systemd keeps the socket and queues connections
//! while it starts or restarts the service, so a killed daemon is back before the agent's next call is
//! lost. Without a user manager (a container; `su -` or ssh with no login session) it runs no
//! `systemctl`, says so, and prints what to do instead: lingering, or `hookd serve` without systemd.
//! Either way install then asks the socket for the daemon's status and warns when nothing answers.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The units as shipped in `systemd/`, compiled in so that `install` needs no source tree.
const SERVICE_UNIT: &str = include_str!("../../systemd/hookd.service");
const SOCKET_UNIT: &str = include_str!("../../systemd/hookd.socket");

/// The service units earlier hookds wrote (`systemd/previous/`): hookd's own, replaced by an upgrade
/// without `--force`, never taken for the user's edits.
const PREVIOUS_SERVICE_UNITS: &[&str] = &[include_str!("../../systemd/previous/hookd.service.1")];

pub fn install(
    bin: Option<PathBuf>,
    dir: Option<PathBuf>,
    force: bool,
    no_enable: bool,
) -> Result<ExitCode, String> {
    let bin = match bin {
        Some(bin) => {
            let bin = std::path::absolute(&bin).map_err(|e| format!("{}: {e}", bin.display()))?;
            if let Some(problem) = not_runnable(&bin) {
                eprintln!(
                    "warning: --bin {}: {problem}; hookd.service will fail to start until it is",
                    bin.display()
                );
            }
            bin
        }
        None => {
            std::env::current_exe().map_err(|e| format!("cannot tell where this hookd is: {e}"))?
        }
    };
    let bin_text = bin
        .to_str()
        .ok_or_else(|| format!("{}: not a UTF-8 path", bin.display()))?;
    if bin_text.contains(char::is_whitespace) || bin_text.contains('%') {
        return Err(format!(
            "{bin_text}: a path with spaces or % cannot go in ExecStart as is; pass --bin"
        ));
    }
    // Units written where systemd reads the user's own are enabled; elsewhere (--dir) they are not.
    let enable = dir.is_none() && !no_enable;
    let own_dir = dir.is_none();
    let dir = dir.unwrap_or_else(crate::paths::systemd_user_dir);
    let service = service_unit(bin_text);
    let units = [
        (dir.join("hookd.service"), service.as_str()),
        (dir.join("hookd.socket"), SOCKET_UNIT),
    ];
    // Every unit is looked at before any is written: never one replaced and the other refused.
    let mut edited = Vec::new();
    let mut plan = Vec::new();
    for (path, text) in &units {
        let existing = match std::fs::read_to_string(path) {
            Ok(existing) => Some(existing),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let state = match existing {
            None => State::New,
            Some(existing) if existing == *text => State::Same,
            Some(existing) if without_exec_start(&existing) == without_exec_start(text) => {
                State::OtherBinary
            }
            Some(existing) if is_previous(&existing) => State::OtherBinary,
            Some(existing) => {
                if !force {
                    eprintln!("{}", difference(path, &existing, text));
                    edited.push(path.display().to_string());
                }
                State::Edited
            }
        };
        plan.push((path, *text, state));
    }
    if !edited.is_empty() {
        return Err(format!(
            "not overwritten: {} differs from what this hookd writes (edited by hand?), as shown above; keep your edits, or pass --force to replace {}",
            edited.join(" and "),
            if edited.len() == 1 { "it" } else { "them" }
        ));
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (path, text, state) in plan {
        if state == State::Same {
            println!("unchanged {}", path.display());
            continue;
        }
        crate::commands::files::write_atomic(path, text, 0o644)?;
        match state {
            State::Edited => println!("replaced {} (--force: your edits are gone)", path.display()),
            _ => println!("wrote {}", path.display()),
        }
    }
    // Units in systemd's own folder with no manager to start them: say so, and what to do instead.
    let no_manager = own_dir.then(no_user_manager).flatten();
    let enabled = match (&no_manager, enable) {
        (Some(why), true) => {
            eprintln!("warning: hookd.socket not enabled: no systemd user manager here: {why}");
            false
        }
        (Some(why), false) => {
            eprintln!("warning: no systemd user manager here: {why}");
            false
        }
        (None, true) => match enable_socket() {
            Ok(()) => {
                println!(
                    "enabled hookd.socket: systemd holds the socket, starts hookd at the first connection, and again whenever it stops (connections wait meanwhile)"
                );
                true
            }
            Err(why) => {
                eprintln!("warning: hookd.socket not enabled: {why}");
                false
            }
        },
        (None, false) => false,
    };
    if !enabled {
        match no_manager {
            Some(_) => print!("{}", without_a_manager(bin_text)),
            None => println!("now run: {ENABLE_STEPS}"),
        }
    }
    if own_dir {
        say_if_nothing_answers(enabled);
    }
    Ok(ExitCode::SUCCESS)
}

/// What starts hookd under systemd once the units are written.
const ENABLE_STEPS: &str =
    "systemctl --user daemon-reload && systemctl --user enable --now hookd.socket";

/// Why no systemd user manager can be reached here, when none can: `systemctl --user` reaches the
/// user's manager through `$XDG_RUNTIME_DIR/systemd/private`, the socket every user manager makes, and
/// fails with "Failed to connect to bus" where there is none (a container; `su -`, `sudo -u`, cron, or
/// ssh where no login session started one and lingering is off).
fn no_user_manager() -> Option<String> {
    use std::os::unix::fs::FileTypeExt;
    let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").filter(|dir| !dir.is_empty()) else {
        return Some(
            "XDG_RUNTIME_DIR is not set, so systemctl --user cannot reach one (no login session: su -, sudo -u, cron, a container)"
                .to_string(),
        );
    };
    let private = Path::new(&runtime).join("systemd/private");
    match std::fs::metadata(&private) {
        Ok(meta) if meta.file_type().is_socket() => None,
        _ => Some(format!(
            "{} is not there, so systemctl --user cannot reach one (a container, or a session without one: ssh or su - without lingering)",
            private.display()
        )),
    }
}

/// What to do when no user manager runs: keep one for the user (lingering), or run `hookd serve`
/// without systemd; each as the exact line to run.
fn without_a_manager(bin: &str) -> String {
    let uid = nix::unistd::getuid();
    let user = nix::unistd::User::from_uid(uid)
        .ok()
        .flatten()
        .map_or_else(|| "$USER".to_string(), |user| user.name);
    let state = crate::paths::state_dir();
    let log = state.join("serve.log");
    let (state, log) = (quoted(&state), quoted(&log));
    format!(
        "now run one of these (docs/commands.md, \"Without systemd\"):\n\
         \x20 with systemd, kept running while you are logged out (as root if loginctl asks):\n\
         \x20   loginctl enable-linger {user} && export XDG_RUNTIME_DIR=/run/user/{uid} && {bin} install\n\
         \x20 without systemd, until the next reboot (then again, or from cron: @reboot):\n\
         \x20   mkdir -p {state} && nohup {bin} serve >>{log} 2>&1 </dev/null &\n"
    )
}

/// A path as a shell takes it: as it is when it holds only plain characters, else in single quotes.
fn quoted(path: &Path) -> String {
    let text = path.display().to_string();
    if text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c))
    {
        text
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// How long install waits for `systemctl`, and for the daemon to answer once the socket is enabled.
const SYSTEMCTL_WAIT: Duration = Duration::from_secs(30);
const ANSWER_WAIT: Duration = Duration::from_secs(10);

/// `systemctl --user daemon-reload`, then `systemctl --user enable --now hookd.socket`: the socket kept by
/// systemd, which queues connections while it (re)starts the service. An error says why (no systemctl,
/// no user manager: a container, a session without one).
fn enable_socket() -> Result<(), String> {
    systemctl(&["--user", "daemon-reload"])?;
    systemctl(&["--user", "enable", "--now", "hookd.socket"])
}

/// `systemctl ARGS`, at most [`SYSTEMCTL_WAIT`]; its first line of stderr as the error.
fn systemctl(args: &[&str]) -> Result<(), String> {
    let shown = format!("systemctl {}", args.join(" "));
    let mut child = std::process::Command::new("systemctl")
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    let deadline = Instant::now() + SYSTEMCTL_WAIT;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| format!("{shown}: {e}"))? {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{shown} did not finish within {SYSTEMCTL_WAIT:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if status.success() {
        return Ok(());
    }
    let mut said = String::new();
    if let Some(mut stderr) = child.stderr.take() {
        use std::io::Read;
        let _ = (&mut stderr).take(4096).read_to_string(&mut said);
    }
    let first = said.lines().next().unwrap_or_default().trim().to_string();
    Err(format!(
        "{shown} failed ({status}){}",
        if first.is_empty() {
            String::new()
        } else {
            format!(": {first}")
        }
    ))
}

/// Asks for the daemon's status on the default socket (which starts it, under socket activation);
/// says on stderr when nothing answers, and how to start it.
fn say_if_nothing_answers(enabled: bool) {
    use crate::protocol::Asking;
    let socket = crate::paths::default_socket();
    let deadline = Instant::now() + if enabled { ANSWER_WAIT } else { Duration::ZERO };
    loop {
        let asked =
            crate::commands::client::request(&socket, &Asking::Status { id: 1 }, Some(ANSWER_WAIT));
        if asked.is_ok() {
            return;
        }
        if Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let start = if enabled {
        "systemctl --user status hookd.socket hookd says why; journalctl --user -u hookd shows its log"
    } else {
        "start it as said above"
    };
    eprintln!(
        "warning: nothing answers on {} yet: the agents' relays find no hookd there; {start}; hookd doctor checks the whole chain",
        socket.display()
    );
}

/// What is found where a unit goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// No file yet.
    New,
    /// The very unit this hookd writes.
    Same,
    /// hookd's unit for another binary.
    OtherBinary,
    /// Anything else: the user's.
    Edited,
}

/// Why `bin` cannot be what the service runs, if it cannot: a missing file, or one that is not an
/// executable file (the user may be about to put it there, so this is a warning).
fn not_runnable(bin: &Path) -> Option<&'static str> {
    match std::fs::metadata(bin) {
        Err(_) => Some("no such file"),
        Ok(m) if !m.is_file() => Some("not a file"),
        Ok(m) if m.permissions().mode() & 0o111 == 0 => Some("not executable"),
        Ok(_) => None,
    }
}

/// The service unit with `ExecStart` running `bin`.
pub(super) fn service_unit(bin: &str) -> String {
    SERVICE_UNIT
        .lines()
        .map(|line| {
            if line.starts_with("ExecStart=") {
                format!("ExecStart={bin} serve")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Whether `unit` is a service unit an earlier hookd wrote, for any binary.
fn is_previous(unit: &str) -> bool {
    PREVIOUS_SERVICE_UNITS
        .iter()
        .any(|previous| without_exec_start(unit) == without_exec_start(previous))
}

/// A unit's lines but the `ExecStart` that runs `... serve`, the one line `install` fills in.
fn without_exec_start(unit: &str) -> Vec<&str> {
    unit.lines()
        .filter(|line| {
            !(line.starts_with("ExecStart=")
                && line.ends_with(" serve")
                && !line["ExecStart=".len()..line.len() - " serve".len()].contains(' '))
        })
        .collect()
}

/// How the unit at `path` differs from the one hookd writes, line by line (`-` yours, `+` hookd's),
/// for the user to decide whether to keep their edits.
fn difference(path: &Path, existing: &str, wanted: &str) -> String {
    let mut out = format!(
        "--- {} (as it is)\n+++ {} (as this hookd writes it)\n",
        path.display(),
        path.display()
    );
    // The changed lines, each with two lines around it; `...` for what is left out between.
    const AROUND: usize = 2;
    let lines = line_diff(existing, wanted);
    let changed: Vec<usize> = (0..lines.len())
        .filter(|&i| !lines[i].starts_with(' '))
        .collect();
    let mut last_shown = None;
    for (i, line) in lines.iter().enumerate() {
        if !changed.iter().any(|&c| c.abs_diff(i) <= AROUND) {
            continue;
        }
        if last_shown.is_some_and(|last| last + 1 < i) {
            out.push_str("...\n");
        }
        out.push_str(line);
        out.push('\n');
        last_shown = Some(i);
    }
    out.trim_end().to_string()
}

/// The lines of `old` and `new`, each marked ` ` (in both), `-` (only in old) or `+` (only in new), by
/// their longest common run of lines. A unit is a few dozen lines: the square table costs nothing.
fn line_diff(old: &str, new: &str) -> Vec<String> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    // common[i][j]: the longest common run of a[i..] and b[j..].
    let mut common = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            common[i][j] = if a[i] == b[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out.push(format!(" {}", a[i]));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || common[i + 1][j] >= common[i][j + 1]) {
            out.push(format!("-{}", a[i]));
            i += 1;
        } else {
            out.push(format!("+{}", b[j]));
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_installed_service_runs_the_given_binary() {
        let unit = service_unit("/opt/hookd/bin/hookd");
        assert!(
            unit.contains("\nExecStart=/opt/hookd/bin/hookd serve\n"),
            "{unit}"
        );
        assert_eq!(unit.matches("ExecStart=").count(), 1);
        assert!(unit.contains("Type=notify") && unit.contains("ExecReload=kill -HUP $MAINPID"));
    }

    #[test]
    fn a_unit_for_another_binary_is_hookds_own_and_an_edited_one_is_not() {
        let ours = service_unit("/usr/bin/hookd");
        let other = service_unit("/opt/hookd");
        assert_eq!(without_exec_start(&ours), without_exec_start(&other));
        let edited = other.replace("RestartSec=500ms", "RestartSec=5s");
        assert_ne!(without_exec_start(&ours), without_exec_start(&edited));
        // An ExecStart with more than the binary (a flag added) is an edit too.
        let flagged = other.replace("/opt/hookd serve", "/opt/hookd serve --config /x");
        assert_ne!(without_exec_start(&ours), without_exec_start(&flagged));
    }

    #[test]
    fn an_earlier_hookds_unit_is_hookds_own() {
        let earlier = PREVIOUS_SERVICE_UNITS[0].replace(
            "ExecStart=%h/.cargo/bin/hookd serve",
            "ExecStart=/opt/hookd serve",
        );
        assert!(earlier.contains("Restart=on-failure"), "{earlier}");
        assert!(is_previous(&earlier));
        assert!(!is_previous(
            &earlier.replace("RestartSec=1s", "RestartSec=5s")
        ));
        assert!(!is_previous(&service_unit("/opt/hookd")));
    }

    #[test]
    fn the_difference_shows_the_changed_lines_and_two_around_each() {
        let old: String = (1..=12).map(|n| format!("{n}\n")).collect();
        let new = old.replace("3\n", "three\n").replace("11\n", "eleven\n");
        assert_eq!(
            difference(Path::new("u"), &old, &new),
            "--- u (as it is)\n+++ u (as this hookd writes it)\n 1\n 2\n-3\n+three\n 4\n 5\n...\n 9\n 10\n-11\n+eleven\n 12"
        );
    }

    #[test]
    fn the_difference_marks_each_changed_line() {
        assert_eq!(
            line_diff("a\nb\nc\n", "a\nB\nc\nd\n"),
            [" a", "-b", "+B", " c", "+d"]
        );
        assert_eq!(line_diff("x\n", "x\n"), [" x"]);
        assert_eq!(line_diff("", "y\n"), ["+y"]);
        assert_eq!(line_diff("y\n", ""), ["-y"]);
    }
}
