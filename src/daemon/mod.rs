//! `hookd serve`: load the settings, take the socket from systemd or bind it, serve until SIGTERM or
//! SIGINT, reload on SIGHUP and when the file changes, and leave nothing behind.

pub mod answer;
pub mod answer_cap;
pub mod descriptors;
pub mod file_changes;
pub mod hang_up;
pub mod http;
pub mod journal;
pub mod live;
pub mod managed_watch;
pub mod memory;
pub mod relay_request;
pub mod reload;
pub mod resident;
pub mod server;
pub mod socket;
pub mod state;
pub mod systemd;
pub mod tally;
pub mod watch;

use std::path::Path;
use std::process::ExitCode;

use tokio::signal::unix::{SignalKind, signal};

use crate::daemon::reload::{Trigger, text_hash};
use crate::daemon::state::Daemon;
use crate::daemon::systemd::Notifier;
use crate::settings::{LoadError, Settings};

/// `hookd serve`: the daemon on the settings at `config`, listening at `socket` (unless systemd passes a
/// socket); `places` says what its guard of itself keeps beyond the settings (engine::protect).
pub fn run(
    config: &Path,
    socket: &Path,
    managed_dir: &Path,
    mut places: crate::engine::protect::Places,
) -> Result<ExitCode, String> {
    crate::logging::init();
    // Descriptors inherited from whoever started the daemon must not reach hooks.
    close_inherited_on_exec();
    // Before anything can open a descriptor: systemd's socket is descriptor 3.
    let activated = crate::daemon::systemd::take_listener()?;
    raise_file_limit();
    let config = std::path::absolute(config).unwrap_or_else(|_| config.to_path_buf());
    let read_as = crate::daemon::file_changes::SeenAtStart::before_reading(&config);
    let (settings, loaded_text) = initial_settings(&config)?;
    let managed_dir =
        std::path::absolute(managed_dir).unwrap_or_else(|_| managed_dir.to_path_buf());
    let managed_seen = crate::layers::managed::fingerprint(&managed_dir);
    let managed = crate::layers::managed::read(&managed_dir).map_err(|errors| {
        format!(
            "the managed layer is invalid (it is not run without the policy it holds):\n{errors}"
        )
    })?;
    if let Some(layer) = &managed.settings {
        tracing::info!(managed = %managed_dir.display(), hooks = %layer.summary(), "managed layer loaded");
    }
    detach_from_terminal();
    // One thread: a hook's exit wakes its fire on the same thread, where a multi-threaded runtime paid a
    // cross-thread wake-up on every hook (about 250 us here, half again the cost of the spawn itself).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let mut socket_file = None;
    let result = runtime.block_on(async {
        // Signals are handled before the socket exists: once a client can connect, SIGTERM, SIGINT and
        // SIGHUP already do what they should, never the default (death, leaving the socket file behind).
        let mut terminate =
            signal(SignalKind::terminate()).map_err(|e| format!("cannot handle SIGTERM: {e}"))?;
        let mut interrupt =
            signal(SignalKind::interrupt()).map_err(|e| format!("cannot handle SIGINT: {e}"))?;
        let mut hangup =
            signal(SignalKind::hangup()).map_err(|e| format!("cannot handle SIGHUP: {e}"))?;
        let mut quit =
            signal(SignalKind::quit()).map_err(|e| format!("cannot handle SIGQUIT: {e}"))?;
        absorb_fatal_signals()?;
        let listener = match activated {
            Some(listener) => {
                tracing::info!("serving on the socket systemd passed (socket activation)");
                listener
            }
            None => {
                let (listener, file) = crate::daemon::socket::bind(socket)?;
                socket_file = Some(file);
                tracing::info!(socket = %socket.display(), "listening");
                listener
            }
        };
        if let Some(path) = listener
            .local_addr()
            .ok()
            .and_then(|address| address.as_pathname().map(Path::to_path_buf))
        {
            places.socket = Some(path);
        }
        let listener = tokio::net::UnixListener::from_std(listener)
            .map_err(|e| format!("cannot listen: {e}"))?;
        let daemon = Daemon::new(
            config.clone(),
            managed_dir.clone(),
            crate::daemon::state::Layers {
                managed: managed.settings,
                managed_hash: Some(managed.hash),
                user: settings,
            },
            loaded_text,
            Notifier::from_env(),
            crate::daemon::http::token::default_path(),
        );
        // A listener the settings ask for and that cannot start stops the start, as an invalid settings
        // file does: running without it would leave the agents' http hooks failing open without a word.
        crate::daemon::http::apply(&daemon)
            .map_err(|e| format!("the http listener cannot start: {e}"))?;
        let reloader = daemon.clone();
        tokio::spawn(async move {
            while hangup.recv().await.is_some() {
                tracing::info!("SIGHUP: reloading the settings");
                let _ = crate::daemon::reload::reload(&reloader, Trigger::Request).await;
            }
        });
        crate::daemon::file_changes::spawn(daemon.clone(), daemon.draining.clone(), read_as);
        crate::daemon::managed_watch::spawn(daemon.clone(), daemon.draining.clone(), managed_seen);
        places.daemon_pid = i32::try_from(std::process::id()).ok();
        places.daemon_command_line = std::fs::read("/proc/self/cmdline")
            .map(|line| {
                String::from_utf8_lossy(&line)
                    .replace('\0', " ")
                    .trim()
                    .to_string()
            })
            .unwrap_or_default();
        daemon.engine.guard_places(places);
        daemon.engine.start_reaper();
        let stopping = daemon.clone();
        let shutdown = async move {
            tokio::select! {
                _ = terminate.recv() => tracing::info!("SIGTERM received"),
                _ = interrupt.recv() => tracing::info!("SIGINT received"),
                _ = quit.recv() => tracing::info!("SIGQUIT received"),
            }
            stopping.notifier.stopping();
        };
        tracing::info!(pid = std::process::id(), "serving");
        daemon.notifier.ready();
        // Start-up is done: the code it ran is not kept mapped for an idle daemon.
        let dropped = crate::daemon::resident::drop_start_up_pages();
        tracing::debug!(
            bytes = dropped,
            "start-up's pages handed back to the page cache"
        );
        crate::daemon::server::serve(listener, daemon, shutdown).await;
        Ok::<(), String>(())
    });
    // Tasks still held by the runtime end here (a fire's record, dropped unfinished, is queued as cut
    // short); then what is queued is written before the process ends.
    drop(runtime);
    if let Some(recorder) = crate::record::get() {
        recorder.flush(std::time::Duration::from_secs(2));
    }
    if let Some(file) = socket_file {
        file.remove_file();
    }
    result?;
    tracing::info!("stopped");
    Ok(ExitCode::SUCCESS)
}

/// Signals whose default action ends or stops the process, other than those `serve` acts on (TERM, INT,
/// QUIT, HUP, CHLD). Sent by hand (`kill -USR1`, a tool that pokes every process of the user, ^Z in the
/// terminal that started it), each would end the daemon on the spot, leaving its socket behind, or freeze
/// it, and every agent would be without its guard. ABRT, TRAP and SYS are handled too: a real `abort()`
/// still ends the process (it raises again with the default in place), and hookd sets no breakpoint and no
/// seccomp filter.
const ABSORBED: &[i32] = &[
    nix::libc::SIGUSR1,
    nix::libc::SIGUSR2,
    nix::libc::SIGALRM,
    nix::libc::SIGVTALRM,
    nix::libc::SIGPROF,
    nix::libc::SIGIO,
    nix::libc::SIGPWR,
    nix::libc::SIGSTKFLT,
    nix::libc::SIGXCPU,
    nix::libc::SIGXFSZ,
    nix::libc::SIGTSTP,
    nix::libc::SIGABRT,
    nix::libc::SIGTRAP,
    nix::libc::SIGSYS,
];

/// Handles every signal of [`ABSORBED`] and every real-time signal by logging it. Handled rather than
/// ignored: a handler is reset to the default at exec, so hooks start with the dispositions they expect,
/// where an ignored signal would stay ignored in every hook. Two exceptions are ignored: SIGTTIN and
/// SIGTTOU, which the terminal sends a background process that reads or writes it, and which a handler
/// would not stop (the write restarts and is signalled again). FPE and ILL, which a real fault raises,
/// are absorbed only when another process sent them.
fn absorb_fatal_signals() -> Result<(), String> {
    use nix::sys::signal::{SigHandler, Signal};
    let realtime = nix::libc::SIGRTMIN()..=nix::libc::SIGRTMAX();
    for number in ABSORBED.iter().copied().chain(realtime) {
        let mut stream = signal(SignalKind::from_raw(number))
            .map_err(|e| format!("cannot handle signal {number}: {e}"))?;
        tokio::spawn(async move {
            while stream.recv().await.is_some() {
                tracing::info!(
                    signal = number,
                    "ignored a signal that would have stopped the daemon (stop it with SIGTERM)"
                );
            }
        });
    }
    for terminal in [Signal::SIGTTIN, Signal::SIGTTOU] {
        // SAFETY: SIG_IGN installs no code of ours.
        unsafe { nix::sys::signal::signal(terminal, SigHandler::SigIgn) }
            .map_err(|e| format!("cannot ignore {terminal}: {e}"))?;
    }
    for fault in [Signal::SIGFPE, Signal::SIGILL] {
        let action = nix::sys::signal::SigAction::new(
            SigHandler::SigAction(only_when_sent),
            nix::sys::signal::SaFlags::SA_SIGINFO | nix::sys::signal::SaFlags::SA_RESTART,
            nix::sys::signal::SigSet::empty(),
        );
        // SAFETY: the handler only reads its siginfo and calls sigaction, both async-signal-safe.
        unsafe { nix::sys::signal::sigaction(fault, &action) }
            .map_err(|e| format!("cannot handle {fault}: {e}"))?;
    }
    Ok(())
}

/// SIGFPE or SIGILL: sent by another process (`kill`: a code of 0 or below), it is ignored; raised by the
/// kernel for a real fault, the default action is put back, and the faulting instruction, run again on
/// return, ends the process as it would have.
extern "C" fn only_when_sent(
    signal: nix::libc::c_int,
    info: *mut nix::libc::siginfo_t,
    _context: *mut nix::libc::c_void,
) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let code = unsafe { (*info).si_code };
    if code > 0 {
        // SAFETY: sigaction-based reset to the default, async-signal-safe.
        unsafe { nix::libc::signal(signal, nix::libc::SIG_DFL) };
    }
}

/// Marks every descriptor from 3 up close-on-exec. A hook's exec closes only what is marked; a descriptor
/// the daemon inherited unmarked (a shell's stray one, a parent's pipe) would otherwise reach every hook.
fn close_inherited_on_exec() {
    // SAFETY: close_range with CLOSE_RANGE_CLOEXEC only sets a flag on open descriptors; it closes nothing.
    let result =
        unsafe { nix::libc::close_range(3, u32::MAX, nix::libc::CLOSE_RANGE_CLOEXEC as i32) };
    if result == 0 {
        return;
    }
    // Kernels before 5.11: mark them one by one.
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let fds: Vec<i32> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    for fd in fds.into_iter().filter(|fd| *fd > 2) {
        // SAFETY: F_SETFD on a descriptor number changes only its flag; an already-closed one fails harmlessly.
        unsafe { nix::libc::fcntl(fd, nix::libc::F_SETFD, nix::libc::FD_CLOEXEC) };
    }
}

/// The settings to start with, and a hash of their text. A file that does not exist yet means no hooks
/// until it appears, and so does an empty one (a file not written yet, which `check` and a reload
/// refuse: there are no last good settings to keep at a start); an invalid one stops the start, rather
/// than run without the policies it holds.
fn initial_settings(config: &Path) -> Result<(Settings, Option<u64>), String> {
    let shown = config.display();
    match Settings::read(config) {
        Ok(text) if text.is_empty() => {
            tracing::warn!(config = %shown, "the settings file is empty: serving with no hooks until it is written");
            Ok((Settings::empty(config), None))
        }
        Ok(text) => match crate::daemon::reload::parse(config, &text) {
            Ok(settings) => {
                tracing::info!(config = %shown, hooks = %settings.summary(), "settings loaded");
                Ok((settings, Some(text_hash(&text))))
            }
            Err(errors) => Err(format!("the settings file is invalid:\n{errors}")),
        },
        Err(LoadError::NotFound) => {
            // A typo in --config looks just like settings not written yet: name the file it surely meant.
            match crate::settings::near_name(config) {
                Some(near) => tracing::warn!(
                    config = %shown,
                    "no settings file yet: serving with no hooks until it appears; did you mean {}? (hookd serve --config {})",
                    near.display(),
                    near.display()
                ),
                None => {
                    tracing::warn!(config = %shown, "no settings file yet: serving with no hooks until it appears")
                }
            }
            Ok((Settings::empty(config), None))
        }
        Err(LoadError::Invalid(errors)) => Err(format!("the settings file is invalid:\n{errors}")),
    }
}

/// Gives up the controlling terminal, when `hookd serve` was started from one, so that no hook can open
/// `/dev/tty` and read from or write to the user's terminal. The daemon stays in its process group, so
/// Ctrl-C still reaches it.
fn detach_from_terminal() {
    use nix::sys::signal::{SigHandler, Signal, signal};
    use std::os::fd::AsRawFd;
    let Ok(tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        return; // no controlling terminal: nothing to give up
    };
    // A session leader giving up its terminal sends SIGHUP to the terminal's foreground group, which is
    // this daemon when it was started with `exec hookd serve`: ignore it for the moment it takes.
    // SAFETY: setting a signal's disposition to SIG_IGN and back to SIG_DFL installs no handler code; the
    // runtime that installs hookd's own SIGHUP handler does not exist yet.
    let previous = unsafe { signal(Signal::SIGHUP, SigHandler::SigIgn) };
    // SAFETY: TIOCNOTTY takes no argument and acts on the calling process only; the fd is open and valid.
    let result = unsafe { nix::libc::ioctl(tty.as_raw_fd(), nix::libc::TIOCNOTTY) };
    if result != 0 {
        tracing::debug!(
            "could not give up the controlling terminal: {}",
            std::io::Error::last_os_error()
        );
    }
    if let Ok(previous) = previous {
        // SAFETY: as above: a disposition, not a handler of ours.
        let _ = unsafe { signal(Signal::SIGHUP, previous) };
    }
}

/// The open-file limit the daemon wants: its connections (the socket's and the HTTP listener's caps)
/// and three pipes per running hook, with room to spare. The usual soft limit, 1024, is below the two
/// connection caps together: at that limit a flood of connections would leave no descriptor to accept
/// with, or to start a hook. Hooks inherit the limit; it is kept modest for programs that walk every
/// descriptor number up to it.
const WANTED_FILE_LIMIT: u64 = 8192;

/// Raises the soft open-file limit toward [`WANTED_FILE_LIMIT`], as far as the hard limit allows.
fn raise_file_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return;
    };
    let wanted = WANTED_FILE_LIMIT.min(hard);
    if soft < wanted {
        match setrlimit(Resource::RLIMIT_NOFILE, wanted, hard) {
            Ok(()) => tracing::debug!(from = soft, to = wanted, "raised the open-file limit"),
            Err(e) => tracing::warn!("cannot raise the open-file limit from {soft}: {e}"),
        }
    }
}
