//! The child's side of starting a hook, done by hand: `clone` with `CLONE_VM | CLONE_VFORK`, as glibc's
//! `posix_spawn` does, less what that call pays again on every spawn here.
//!
//! Measured (BENCHMARKS.md), glibc's `posix_spawn` maps and unmaps a new stack for the child on every
//! call (the unmap flushes the other CPUs' view of the daemon's memory), asks for the descriptor limit once
//! per file action, and the daemon then asks for a pidfd in a system call of its own. Here the stack is
//! made once per thread and kept, the file actions are plain `dup2`s, and the pidfd comes with the clone
//! (`CLONE_PIDFD`). A program spawning `/bin/true` this way took 0.92 to 0.95 of the time std's
//! `Command` took, where the engine through `posix_spawn` took 1.06.
//!
//! What the child does is what `posix_spawn` did for the daemon (see [`super::spawn`]): every signal with a
//! handler, and SIGPIPE, back to its default (ignored ones stay ignored); a process group of its own;
//! the three pipes onto 0, 1 and 2; the working folder; an empty signal mask; `execve`. It runs on the
//! daemon's memory while the daemon's thread waits (that is the vfork), so it calls nothing but the
//! kernel: no allocation, no libc (whose `errno` is the daemon thread's), no panic. A step that fails
//! leaves its error number where the parent reads it, and the child exits.
//!
//! The handlers are put back by the kernel where it can: `clone3` with `CLONE_CLEAR_SIGHAND` (Linux 5.5)
//! starts the child with every handled signal at its default, ignored ones still ignored, which is what
//! the child did by hand in two system calls a signal (a look, then a reset for each of the fifty-odd
//! signals the daemon handles: about 130 calls while the daemon's thread waited, on every hook). Where
//! `clone3` or the flag is refused (an older kernel, a container's filter), `clone` and the loop by hand.
//!
//! Only on x86-64 Linux; elsewhere, and where the kernel refuses the clone (a filter that forbids it),
//! [`launch`] says so and the caller uses `posix_spawn`. A kernel before 5.2 does not know
//! `CLONE_PIDFD` and ignores it (the old `clone` ignores flags it does not know): the child is started
//! all the same, with no pidfd, and the caller opens one, or watches SIGCHLD.

use std::ffi::CStr;
use std::io;
use std::os::fd::OwnedFd;

use nix::libc;

/// What the child needs, all in memory the caller keeps until [`launch`] returns.
pub struct Launch<'a> {
    /// The files to try, in order, as `execvp` tries a bare name's places in `PATH`: on to the next
    /// while a try finds nothing there (`ENOENT`, `ENOTDIR`, ...) or may not run it (`EACCES`, which is
    /// the error if nothing runs); any other error ends the search. NULL-terminated; one path, mostly.
    pub paths: &'a [*const libc::c_char],
    /// NULL-terminated.
    pub argv: &'a [*mut libc::c_char],
    /// NULL-terminated.
    pub envp: &'a [*mut libc::c_char],
    /// Put onto 0, 1 and 2; each above 2 (so that no `dup2` overwrites one still to be copied).
    pub stdio: [libc::c_int; 3],
    pub working_dir: &'a CStr,
}

/// The exec errors after which `execvp` goes on to the next place in `PATH` (beside `EACCES`, which it
/// goes past too but remembers): nothing there to run.
pub const LOOK_FURTHER: [i32; 5] = [
    libc::ENOENT,
    libc::ENOTDIR,
    libc::ESTALE,
    libc::ENODEV,
    libc::ETIMEDOUT,
];

/// A child that has exec'd: its pid and a pidfd for it (none from a kernel before 5.2).
pub struct Launched {
    pub pid: libc::pid_t,
    pub pidfd: Option<OwnedFd>,
}

/// Why a child could not become the program: the error of the step that failed, and for an exec, which
/// of [`Launch::paths`] gave it.
pub struct Failed {
    pub error: io::Error,
    pub path: Option<usize>,
}

/// Starts `launch`, blocking the calling thread until the child has exec'd or failed to. `Ok(None)`:
/// this way is not to be had here, use `posix_spawn`. `Err`: the child could not become the program
/// (it is reaped).
pub fn launch(launch: &Launch) -> Result<Option<Launched>, Failed> {
    imp::launch(launch)
}

#[cfg(all(
    target_os = "linux",
    target_arch = "x86_64",
    target_pointer_width = "64"
))]
mod imp {
    use std::arch::asm;
    use std::cell::Cell;
    use std::io;
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};

    use nix::libc;

    use super::{Failed, LOOK_FURTHER, Launch, Launched};

    /// The child's stack: its frames are small (a few `sigaction` structures), a guard page below.
    const STACK_SIZE: usize = 64 * 1024;
    const GUARD: usize = 4096;

    /// Set once the kernel has refused the clone: every later spawn goes to `posix_spawn` at once.
    static REFUSED: AtomicBool = AtomicBool::new(false);

    /// Set once the kernel has refused `clone3` with `CLONE_CLEAR_SIGHAND`: every later spawn uses
    /// `clone`, its child putting the handlers back by hand.
    static NO_CLEAR_SIGHAND: AtomicBool = AtomicBool::new(false);

    /// `clone3`'s flag (Linux 5.5): the child's handled signals at their defaults, ignored ones kept.
    const CLONE_CLEAR_SIGHAND: u64 = 0x1_0000_0000;

    /// The kernel's `struct clone_args`, its first version (64 bytes), all `clone3` needs here.
    #[repr(C)]
    struct CloneArgs {
        flags: u64,
        pidfd: u64,
        child_tid: u64,
        parent_tid: u64,
        exit_signal: u64,
        stack: u64,
        stack_size: u64,
        tls: u64,
    }

    /// What the child reads, and where it leaves an error.
    #[repr(C)]
    struct ChildArgs {
        paths: *const *const libc::c_char,
        argv: *const *mut libc::c_char,
        envp: *const *mut libc::c_char,
        stdio: [libc::c_int; 3],
        working_dir: *const libc::c_char,
        /// The error number of the step that failed; 0 while none has.
        error: AtomicI32,
        /// Which of `paths` gave it, when it was an exec; `usize::MAX` otherwise.
        failed_path: AtomicUsize,
        /// Whether the kernel has put the handlers back already (`CLONE_CLEAR_SIGHAND`).
        handlers_cleared: bool,
    }

    /// The kernel's `struct sigaction` on x86-64 (not libc's: its mask is 64 bits, no more).
    #[repr(C)]
    struct KernelSigaction {
        handler: usize,
        flags: u64,
        restorer: usize,
        mask: u64,
    }

    /// A system call by hand: libc's wrappers write `errno`, which in the child is the daemon thread's.
    ///
    /// # Safety
    /// The call and its arguments must be valid for the kernel.
    #[inline(always)]
    unsafe fn syscall4(number: libc::c_long, a: usize, b: usize, c: usize, d: usize) -> isize {
        let result: isize;
        // SAFETY: the `syscall` instruction clobbers rcx and r11 only; the caller vouches for the call.
        unsafe {
            asm!(
                "syscall",
                inlateout("rax") number as isize => result,
                in("rdi") a,
                in("rsi") b,
                in("rdx") c,
                in("r10") d,
                lateout("rcx") _,
                lateout("r11") _,
                options(nostack),
            );
        }
        result
    }

    /// The child, from the clone to the exec. Never returns: it becomes the program, or exits 127.
    extern "C" fn child(args: *const ChildArgs) -> ! {
        // SAFETY: `args` points to the parent's `ChildArgs`, alive while the parent waits (the vfork);
        // every pointer in it is to a NUL-terminated string or a NULL-terminated array the parent keeps;
        // each call below is a plain system call with valid arguments.
        unsafe {
            let args = &*args;
            let default = KernelSigaction {
                handler: 0, // SIG_DFL
                flags: 0,
                restorer: 0,
                mask: 0,
            };
            // With the handlers cleared by the kernel, only SIGPIPE is left to put back.
            let mut signal = if args.handlers_cleared {
                libc::SIGPIPE as usize
            } else {
                1
            };
            let last = if args.handlers_cleared { signal } else { 64 };
            while signal <= last {
                let mut current = KernelSigaction {
                    handler: 0,
                    flags: 0,
                    restorer: 0,
                    mask: 0,
                };
                let read = syscall4(
                    libc::SYS_rt_sigaction,
                    signal,
                    0,
                    &mut current as *mut KernelSigaction as usize,
                    8,
                );
                // A handler (anything but SIG_DFL, 0, and SIG_IGN, 1) is the daemon's code: not the
                // hook's. SIGPIPE, which Rust ignores, is the default again, as every program expects.
                let reset = current.handler > 1 || signal == libc::SIGPIPE as usize;
                if read == 0 && reset {
                    syscall4(
                        libc::SYS_rt_sigaction,
                        signal,
                        &default as *const KernelSigaction as usize,
                        0,
                        8,
                    );
                }
                signal += 1;
            }
            let mut result = syscall4(libc::SYS_setpgid, 0, 0, 0, 0);
            let mut onto = 0;
            while result >= 0 && onto < 3 {
                result = syscall4(
                    libc::SYS_dup2,
                    *args.stdio.as_ptr().add(onto) as usize,
                    onto,
                    0,
                    0,
                );
                onto += 1;
            }
            if result >= 0 {
                result = syscall4(libc::SYS_chdir, args.working_dir as usize, 0, 0, 0);
            }
            if result >= 0 {
                let empty: u64 = 0;
                result = syscall4(
                    libc::SYS_rt_sigprocmask,
                    libc::SIG_SETMASK as usize,
                    &empty as *const u64 as usize,
                    0,
                    8,
                );
            }
            let mut error = if result < 0 { -result } else { 0 };
            if result >= 0 {
                // As glibc's execvp: on past a place with nothing to run, EACCES remembered.
                let (mut index, mut denied) = (0, false);
                error = libc::ENOENT as isize;
                loop {
                    let path = *args.paths.add(index);
                    if path.is_null() {
                        if denied {
                            error = libc::EACCES as isize;
                        }
                        break;
                    }
                    let tried = syscall4(
                        libc::SYS_execve,
                        path as usize,
                        args.argv as usize,
                        args.envp as usize,
                        0,
                    );
                    let tried = -tried;
                    let mut further = tried == libc::EACCES as isize;
                    denied |= further;
                    let mut each = 0;
                    while each < LOOK_FURTHER.len() {
                        if tried == LOOK_FURTHER[each] as isize {
                            further = true;
                            // The last of these is the error when nothing runs (and none denied).
                            error = tried;
                        }
                        each += 1;
                    }
                    if !further {
                        error = tried;
                        args.failed_path.store(index, Ordering::SeqCst);
                        break;
                    }
                    index += 1;
                }
            }
            // Only a failure gets here; an error number is 1 to 4095.
            let error = if error > 0 && error < 4096 {
                error as i32
            } else {
                libc::EINVAL
            };
            args.error.store(error, Ordering::SeqCst);
            loop {
                syscall4(libc::SYS_exit, 127, 0, 0, 0);
            }
        }
    }

    /// A thread's stack for its children, made on its first spawn and kept: a vfork child is done with
    /// it (exec'd or exited) before the thread can start another.
    struct ChildStack {
        base: *mut libc::c_void,
    }

    impl ChildStack {
        fn new() -> Option<ChildStack> {
            // SAFETY: an anonymous private mapping; checked below.
            let base = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    GUARD + STACK_SIZE,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                    -1,
                    0,
                )
            };
            if base == libc::MAP_FAILED {
                return None;
            }
            let stack = ChildStack { base };
            // SAFETY: the lowest page of the mapping just made: an overflow faults rather than writes
            // into whatever lies below.
            if unsafe { libc::mprotect(base, GUARD, libc::PROT_NONE) } != 0 {
                return None;
            }
            Some(stack)
        }

        /// The lowest byte the child may use, above the guard page.
        fn low(&self) -> usize {
            self.base as usize + GUARD
        }

        /// The top, 16-byte aligned as the x86-64 ABI wants before a call.
        fn top(&self) -> usize {
            (self.base as usize + GUARD + STACK_SIZE) & !15
        }
    }

    impl Drop for ChildStack {
        fn drop(&mut self) {
            // SAFETY: the mapping made in `new`, unmapped once; no child runs on it (see the type).
            unsafe { libc::munmap(self.base, GUARD + STACK_SIZE) };
        }
    }

    thread_local! {
        static STACK: Cell<Option<ChildStack>> = const { Cell::new(None) };
    }

    pub fn launch(launch: &Launch) -> Result<Option<Launched>, Failed> {
        if REFUSED.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let Some(stack) = STACK.with(Cell::take).or_else(ChildStack::new) else {
            return Ok(None);
        };
        let mut result = Ok(None);
        if !NO_CLEAR_SIGHAND.load(Ordering::Relaxed) {
            result = launch_on(&stack, launch, true);
        }
        if matches!(result, Ok(None)) {
            result = launch_on(&stack, launch, false);
        }
        STACK.with(|cell| cell.set(Some(stack)));
        result
    }

    /// [`launch`] one way only: with `clone3` and `CLONE_CLEAR_SIGHAND` when `cleared`, else `clone`.
    #[cfg(test)]
    pub fn launch_one_way(launch: &Launch, cleared: bool) -> Result<Option<Launched>, Failed> {
        let stack = ChildStack::new().expect("a child's stack");
        launch_on(&stack, launch, cleared)
    }

    /// One try: with `clone3` and `CLONE_CLEAR_SIGHAND` when `cleared`, else with `clone`. `Ok(None)`:
    /// the kernel refused that way (and is not asked that way again).
    fn launch_on(
        stack: &ChildStack,
        launch: &Launch,
        cleared: bool,
    ) -> Result<Option<Launched>, Failed> {
        debug_assert!(launch.paths.last().is_some_and(|last| last.is_null()));
        debug_assert!(launch.argv.last().is_some_and(|last| last.is_null()));
        debug_assert!(launch.envp.last().is_some_and(|last| last.is_null()));
        debug_assert!(launch.stdio.iter().all(|&fd| fd > 2));
        let args = ChildArgs {
            paths: launch.paths.as_ptr(),
            argv: launch.argv.as_ptr(),
            envp: launch.envp.as_ptr(),
            stdio: launch.stdio,
            working_dir: launch.working_dir.as_ptr(),
            error: AtomicI32::new(0),
            failed_path: AtomicUsize::new(usize::MAX),
            handlers_cleared: cleared,
        };
        let mut pidfd: libc::c_int = -1;
        let flags =
            (libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PIDFD | libc::SIGCHLD) as usize;
        let clone_args = CloneArgs {
            flags: (libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PIDFD) as u64
                | CLONE_CLEAR_SIGHAND,
            pidfd: &mut pidfd as *mut libc::c_int as u64,
            child_tid: 0,
            parent_tid: 0,
            exit_signal: libc::SIGCHLD as u64,
            stack: stack.low() as u64,
            stack_size: (stack.top() - stack.low()) as u64,
            tls: 0,
        };
        // clone(flags, stack, parent_tid: the pidfd, child_tid, tls), or clone3(args, size).
        let (number, first, second, third) = if cleared {
            (
                libc::SYS_clone3,
                &clone_args as *const CloneArgs as usize,
                std::mem::size_of::<CloneArgs>(),
                0,
            )
        } else {
            (
                libc::SYS_clone,
                flags,
                stack.top(),
                &mut pidfd as *mut libc::c_int as usize,
            )
        };
        let all: u64 = !0;
        let mut old: u64 = 0;
        let pid: isize;
        // SAFETY: every signal is blocked around the clone (the child must run no handler of the
        // daemon's before it has put them back to their defaults), and the mask restored after. The
        // clone shares this memory with a child that runs on a stack of its own, calls `child` with
        // `args` and never returns; this thread waits until it has exec'd or exited (CLONE_VFORK), so
        // `args`, `launch` and the stack outlive its use of them. rbx and rbp are not touched by the
        // parent's path; the registers named are the syscall's and the two the child reads.
        unsafe {
            syscall4(
                libc::SYS_rt_sigprocmask,
                libc::SIG_BLOCK as usize,
                &all as *const u64 as usize,
                &mut old as *mut u64 as usize,
                8,
            );
            asm!(
                "syscall",
                "test rax, rax",
                "jnz 2f",
                // The child: on its own stack, no frame above it.
                "xor ebp, ebp",
                "mov rdi, r12",
                "and rsp, -16",
                "call r13",
                "ud2",
                "2:",
                inlateout("rax") number as isize => pid,
                in("rdi") first,
                in("rsi") second,
                in("rdx") third,
                in("r10") 0usize,
                in("r8") 0usize,
                in("r12") &args as *const ChildArgs as usize,
                in("r13") child as extern "C" fn(*const ChildArgs) -> ! as usize,
                lateout("rcx") _,
                lateout("r11") _,
            );
            syscall4(
                libc::SYS_rt_sigprocmask,
                libc::SIG_SETMASK as usize,
                &old as *const u64 as usize,
                0,
                8,
            );
        }
        if pid < 0 {
            let error = -pid as i32;
            return match error {
                // No such clone (a seccomp filter, an emulator, a kernel before `clone3` or its
                // flag): the next way, `clone` and then posix_spawn's.
                libc::EINVAL | libc::ENOSYS | libc::EPERM => {
                    let refused = if cleared { &NO_CLEAR_SIGHAND } else { &REFUSED };
                    refused.store(true, Ordering::Relaxed);
                    Ok(None)
                }
                _ => Err(Failed {
                    error: io::Error::from_raw_os_error(error),
                    path: None,
                }),
            };
        }
        let pid = pid as libc::pid_t;
        // SAFETY: the kernel wrote a new descriptor of ours there (CLONE_PIDFD), or left the -1 (a
        // kernel that does not know the flag).
        let pidfd = (pidfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(pidfd) });
        match args.error.load(Ordering::SeqCst) {
            0 => Ok(Some(Launched { pid, pidfd })),
            error => {
                // It exits: reaped here, so that no zombie is left for the sweep to take for an escapee.
                let mut status = 0;
                // SAFETY: waitpid on our own child, writing into a valid integer.
                while unsafe { libc::waitpid(pid, &mut status, 0) } == -1
                    && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
                {
                }
                let path = args.failed_path.load(Ordering::SeqCst);
                Err(Failed {
                    error: io::Error::from_raw_os_error(error),
                    path: (path != usize::MAX).then_some(path),
                })
            }
        }
    }
}

#[cfg(not(all(
    target_os = "linux",
    target_arch = "x86_64",
    target_pointer_width = "64"
)))]
mod imp {
    use super::{Failed, Launch, Launched};

    pub fn launch(_: &Launch) -> Result<Option<Launched>, Failed> {
        Ok(None)
    }
}

#[cfg(all(
    test,
    target_os = "linux",
    target_arch = "x86_64",
    target_pointer_width = "64"
))]
mod tests {
    use std::ffi::CString;
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    use super::*;
    use crate::engine::test_program::write_program;

    /// Starts the first of `places` that runs, with /dev/null for its stdio; its exit code, or the
    /// error and which place gave it.
    fn run(places: &[&Path]) -> Result<i32, (Option<i32>, Option<usize>)> {
        let null = std::fs::File::open("/dev/null").unwrap();
        let copies: Vec<OwnedFd> = (0..3)
            .map(|_| {
                // SAFETY: F_DUPFD_CLOEXEC on an open descriptor returns a new one above 2.
                let fd = unsafe { libc::fcntl(null.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
                assert!(fd > 2);
                // SAFETY: just made, owned by nobody else.
                unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) }
            })
            .collect();
        let places: Vec<CString> = places
            .iter()
            .map(|place| CString::new(place.as_os_str().as_bytes()).unwrap())
            .collect();
        let mut paths: Vec<*const libc::c_char> = places.iter().map(|p| p.as_ptr()).collect();
        paths.push(std::ptr::null());
        let argv = [places[0].as_ptr().cast_mut(), std::ptr::null_mut()];
        let envp = [std::ptr::null_mut()];
        let launched = launch(&Launch {
            paths: &paths,
            argv: &argv,
            envp: &envp,
            stdio: [0, 1, 2].map(|i| copies[i].as_raw_fd()),
            working_dir: c"/",
        });
        match launched {
            Ok(Some(launched)) => {
                assert!(
                    launched.pidfd.is_some(),
                    "a kernel of 5.2 or later gives a pidfd"
                );
                let mut status = 0;
                // SAFETY: waits for our own child.
                assert_eq!(
                    unsafe { libc::waitpid(launched.pid, &mut status, 0) },
                    launched.pid
                );
                Ok(libc::WEXITSTATUS(status))
            }
            Ok(None) => panic!("the clone was refused here"),
            Err(failed) => Err((failed.error.raw_os_error(), failed.path)),
        }
    }

    extern "C" fn a_handler_of_ours(_: libc::c_int) {}

    /// Both ways (the kernel clearing the handlers, the child clearing them by hand) start the program,
    /// with SIGPIPE at its default and no handler (the exec resets those; what the clearing guards is the
    /// moment between the unblocking and the exec, which no test can aim a signal at).
    #[test]
    fn both_ways_the_program_starts_with_sigpipe_at_its_default_and_no_handler() {
        // SAFETY: a handler that does nothing, for a signal nothing sends this test process.
        unsafe {
            libc::signal(
                libc::SIGUSR2,
                a_handler_of_ours as extern "C" fn(libc::c_int) as libc::sighandler_t,
            )
        };
        // SAFETY: SIG_IGN installs no code; the test process is Rust's, which ignores SIGPIPE already.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
        for cleared in [true, false] {
            let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
            let null = std::fs::File::open("/dev/null").unwrap();
            // SAFETY: F_DUPFD_CLOEXEC on open descriptors returns new ones above 2.
            let [stdin, stdout, stderr] = [null.as_raw_fd(), write.as_raw_fd(), null.as_raw_fd()]
                .map(|fd| unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) });
            // `cat`, which handles no signal of its own (`grep` handles SIGSEGV).
            let cat = c"/bin/cat";
            let words = [c"cat", c"/proc/self/status"];
            let mut argv: Vec<*mut libc::c_char> =
                words.iter().map(|w| w.as_ptr().cast_mut()).collect();
            argv.push(std::ptr::null_mut());
            let paths = [cat.as_ptr(), std::ptr::null()];
            let envp = [std::ptr::null_mut()];
            let launched = imp::launch_one_way(
                &Launch {
                    paths: &paths,
                    argv: &argv,
                    envp: &envp,
                    stdio: [stdin, stdout, stderr],
                    working_dir: c"/",
                },
                cleared,
            );
            for fd in [stdin, stdout, stderr] {
                // SAFETY: the copies made above, closed once.
                unsafe { libc::close(fd) };
            }
            drop(write);
            let Ok(Some(launched)) = launched else {
                panic!("the clone (clone3: {cleared}) was refused here");
            };
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::fs::File::from(read), &mut text).unwrap();
            let mut status = 0;
            // SAFETY: waits for our own child.
            unsafe { libc::waitpid(launched.pid, &mut status, 0) };
            let mask = |field: &str| {
                let line = text.lines().find(|l| l.starts_with(field)).unwrap();
                u64::from_str_radix(line[field.len()..].trim(), 16).unwrap()
            };
            assert_eq!(mask("SigCgt:"), 0, "clone3: {cleared}: {text}");
            assert_eq!(
                mask("SigIgn:") & (1 << (libc::SIGPIPE - 1)),
                0,
                "clone3: {cleared}: {text}"
            );
        }
    }

    #[test]
    fn the_places_of_a_bare_name_are_tried_as_execvp_tries_them() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, body: &str| {
            let path = dir.path().join(name);
            write_program(&path, body.as_bytes());
            path
        };
        let folder = dir.path().join("a-folder");
        std::fs::create_dir(&folder).unwrap();
        let missing = dir.path().join("missing");
        let no_interpreter = file("no-interpreter", "#!/no/such/interpreter\n");
        let runs = file("runs", "#!/bin/sh\nexit 7\n");
        let plain = file("plain", "exit 7\n");

        // Past a folder (EACCES), a missing file and a missing interpreter (ENOENT), to the one that runs.
        assert_eq!(run(&[&folder, &missing, &no_interpreter, &runs]), Ok(7));
        // Nothing runs: EACCES when a try was denied, else ENOENT; no one place is to blame.
        assert_eq!(run(&[&missing, &folder]), Err((Some(libc::EACCES), None)));
        assert_eq!(
            run(&[&missing, &no_interpreter]),
            Err((Some(libc::ENOENT), None))
        );
        // Any other error ends the search, and names the place: a script with no `#!` line.
        assert_eq!(
            run(&[&missing, &plain, &runs]),
            Err((Some(libc::ENOEXEC), Some(1)))
        );
    }
}
