//! The few system calls the program makes, raw (Linux, x86_64), and the memory it uses: buffers mapped
//! with `mmap` and never freed (the process lives for one call).

use core::arch::{asm, global_asm};

global_asm!(
    ".globl _start",
    "_start:",
    "xor ebp, ebp",
    "mov rdi, rsp",
    "and rsp, -16",
    "call start",
    "ud2",
);

const READ: usize = 0;
const WRITE: usize = 1;
const OPEN: usize = 2;
const CLOSE: usize = 3;
const FSTAT: usize = 5;
const POLL: usize = 7;
const LSEEK: usize = 8;
const RT_SIGACTION: usize = 13;
const MMAP: usize = 9;
const MREMAP: usize = 25;
const DUP2: usize = 33;
const SOCKET: usize = 41;
const CONNECT: usize = 42;
const GETSOCKOPT: usize = 55;
const EXECVE: usize = 59;
const FCNTL: usize = 72;
const READLINK: usize = 89;
const GETUID: usize = 102;
const CLOCK_GETTIME: usize = 228;
const EXIT_GROUP: usize = 231;
const MEMFD_CREATE: usize = 319;

const EINTR: isize = -4;
const EAGAIN: isize = -11;
const EBADF: isize = -9;

/// A raw system call with up to six arguments; a negative result is `-errno`.
///
/// # Safety
/// The arguments must be what the call expects: pointers to memory of the sizes it reads or writes.
unsafe fn call(n: usize, a: [usize; 6]) -> isize {
    let result: isize;
    // SAFETY: the System V system call convention; the kernel clobbers rcx and r11 only.
    unsafe {
        asm!(
            "syscall",
            inlateout("rax") n as isize => result,
            in("rdi") a[0], in("rsi") a[1], in("rdx") a[2], in("r10") a[3], in("r8") a[4], in("r9") a[5],
            lateout("rcx") _, lateout("r11") _,
            options(nostack),
        );
    }
    result
}

fn call3(n: usize, a: usize, b: usize, c: usize) -> isize {
    // SAFETY: every caller passes what its call reads, as documented at each.
    unsafe { call(n, [a, b, c, 0, 0, 0]) }
}

pub fn exit(code: i32) -> ! {
    loop {
        // exit_group does not return; the loop only tells the compiler so.
        call3(EXIT_GROUP, code as usize, 0, 0);
    }
}

/// Makes the process safe to run in whatever state it was started: stdin, stdout and stderr open (on
/// `/dev/null` where they were closed, so that the socket never takes their place and an answer is never
/// written to it), and SIGPIPE ignored (a peer that hangs up is an error to handle, not the end of the
/// process: a relay killed by it would answer nothing).
pub fn set_up() {
    for fd in 0..3 {
        if call3(FCNTL, fd, 1, 0) == EBADF {
            let null = call3(OPEN, c"/dev/null".as_ptr() as usize, 2, 0);
            if null < 0 {
                // Left closed, a descriptor opened later would take its place: better no answer.
                exit(70);
            }
            if null as usize != fd {
                call3(DUP2, null as usize, fd, 0);
                call3(CLOSE, null as usize, 0, 0);
            }
        }
    }
    // struct sigaction: handler SIG_IGN (1), flags, restorer, mask.
    let ignore = [1usize, 0, 0, 0];
    // SAFETY: rt_sigaction reads one kernel sigaction and a mask size of 8 bytes.
    unsafe { call(RT_SIGACTION, [13, ignore.as_ptr() as usize, 0, 8, 0, 0]) };
}

/// Whether `fd` is `/dev/null` (the character device 1:3), where an answer reaches no one: a stdout
/// closed at the start is `/dev/null` too ([`set_up`]).
pub fn is_dev_null(fd: Fd) -> bool {
    // struct stat on x86_64: st_mode (u32) at byte 24, st_rdev (u64) at byte 40; 144 bytes in all.
    let mut stat = [0u64; 18];
    // SAFETY: fstat writes one struct stat (144 bytes) to `stat`.
    if call3(FSTAT, fd.0 as usize, stat.as_mut_ptr() as usize, 0) != 0 {
        return false;
    }
    let mode = (stat[3] & 0xffff_ffff) as u32;
    let rdev = stat[5];
    mode & 0o170000 == 0o020000 && rdev == (1 << 8 | 3)
}

/// Closes `fd`.
pub fn close(fd: Fd) {
    call3(CLOSE, fd.0 as usize, 0, 0);
}

/// A file descriptor.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Fd(pub i32);

impl Fd {
    pub const STDIN: Fd = Fd(0);
    pub const STDOUT: Fd = Fd(1);
    pub const STDERR: Fd = Fd(2);
}

/// The arguments and the environment, from the stack at `_start`.
///
/// # Safety
/// `stack` is the stack pointer the kernel gave `_start`.
pub unsafe fn args_and_env(stack: *const usize) -> (&'static [*const u8], &'static [*const u8]) {
    // SAFETY: argc, then argc pointers and a null, then the environment's pointers and a null.
    unsafe {
        let argc = *stack;
        let args = stack.add(1) as *const *const u8;
        let env = args.add(argc + 1);
        let mut count = 0;
        while !(*env.add(count)).is_null() {
            count += 1;
        }
        (
            core::slice::from_raw_parts(args, argc),
            core::slice::from_raw_parts(env, count),
        )
    }
}

/// The bytes of a NUL-terminated string, without the NUL.
///
/// # Safety
/// `s` points to a NUL-terminated string that lives as long as the program.
pub unsafe fn c_str(s: *const u8) -> &'static [u8] {
    let mut len = 0;
    // SAFETY: read up to the NUL, which the caller vouches for.
    unsafe {
        while core::ptr::read_volatile(s.add(len)) != 0 {
            len += 1;
        }
        core::slice::from_raw_parts(s, len)
    }
}

/// `name`'s value in the environment, if it is there.
pub fn env_var(env: &[*const u8], name: &[u8]) -> Option<&'static [u8]> {
    // The first entry of that name, as the relay's `std::env::var` finds it.
    env.iter().find_map(|&entry| {
        // SAFETY: the environment's entries are NUL-terminated strings the kernel placed.
        let entry = unsafe { c_str(entry) };
        let rest = entry.strip_prefix(name)?;
        rest.strip_prefix(b"=")
    })
}

pub fn getuid() -> u32 {
    call3(GETUID, 0, 0, 0) as u32
}

/// Milliseconds on the monotonic clock.
pub fn now_ms() -> u64 {
    let mut time = [0i64; 2];
    // SAFETY: clock_gettime writes one timespec (two 64-bit words) to `time`.
    call3(CLOCK_GETTIME, 1, time.as_mut_ptr() as usize, 0);
    (time[0] as u64) * 1000 + (time[1] as u64) / 1_000_000
}

/// A growing buffer of bytes in memory of its own (`mmap`), never freed.
pub struct Buf {
    ptr: *mut u8,
    len: usize,
    cap: usize,
}

impl Buf {
    pub fn new(cap: usize) -> Buf {
        let cap = cap.max(4096).next_multiple_of(4096);
        // SAFETY: an anonymous private mapping, read and write, of `cap` bytes.
        let ptr = unsafe { call(MMAP, [0, cap, 3, 0x22, usize::MAX, 0]) };
        if ptr < 0 {
            exit(71);
        }
        Buf {
            ptr: ptr as *mut u8,
            len: 0,
            cap,
        }
    }

    fn reserve(&mut self, more: usize) {
        if self.len + more <= self.cap {
            return;
        }
        let cap = (self.len + more).max(self.cap * 2).next_multiple_of(4096);
        // SAFETY: grows this buffer's own mapping, which may move (MREMAP_MAYMOVE); the contents follow.
        let ptr = unsafe { call(MREMAP, [self.ptr as usize, self.cap, cap, 1, 0, 0]) };
        if ptr < 0 {
            exit(71);
        }
        self.ptr = ptr as *mut u8;
        self.cap = cap;
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.reserve(bytes.len());
        // SAFETY: `reserve` made room for `bytes` past `len`; the two never overlap.
        unsafe {
            core::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.add(self.len), bytes.len())
        };
        self.len += bytes.len();
    }

    pub fn push_byte(&mut self, byte: u8) {
        self.push(&[byte]);
    }

    pub fn push_decimal(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.push(&digits[at..]);
    }

    pub fn clear(&mut self) {
        self.len = 0;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the first `len` bytes are written.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as `bytes`, and this buffer is borrowed mutably.
        unsafe { core::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    /// One `read` of at most `most` bytes from `fd` onto the end of the buffer, kept; what it returned
    /// (a count, 0 at the end, or `-errno`).
    fn read_once(&mut self, fd: Fd, most: usize) -> isize {
        self.reserve(most);
        // SAFETY: `reserve` made room for `most` bytes past `len`; the kernel writes at most that many.
        let n = unsafe {
            call(
                READ,
                [
                    fd.0 as usize,
                    self.ptr.add(self.len) as usize,
                    most,
                    0,
                    0,
                    0,
                ],
            )
        };
        if n > 0 {
            self.len += n as usize;
        }
        n
    }

    /// Reads `fd` to its end, or until `most` bytes are in; whether it reached the end.
    pub fn read_all_from(&mut self, fd: Fd, most: usize) -> bool {
        while self.len < most {
            match self.read_once(fd, (most - self.len).min(64 << 10)) {
                0 => return true,
                EINTR => continue,
                n if n < 0 => return false,
                _ => {}
            }
        }
        false
    }
}

/// A Unix stream socket connected to `path`, non-blocking; `None` if nothing accepts there now (a full
/// backlog included: the relay waits for it, up to its deadline).
pub fn connect_unix(path: &[u8]) -> Option<Fd> {
    if path.is_empty() || path.len() >= 108 || path.contains(&0) {
        return None;
    }
    // AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC.
    let fd = call3(SOCKET, 1, 1 | 0o4000 | 0o2000000, 0);
    if fd < 0 {
        return None;
    }
    let mut address = [0u8; 110];
    address[0] = 1; // AF_UNIX
    address[2..2 + path.len()].copy_from_slice(path);
    let connected = call3(
        CONNECT,
        fd as usize,
        address.as_ptr() as usize,
        2 + path.len() + 1,
    );
    if connected < 0 {
        call3(CLOSE, fd as usize, 0, 0);
        return None;
    }
    Some(Fd(fd as i32))
}

/// Whether the process listening on `connection` runs as `uid` or as root, as the relay requires.
pub fn peer_is(connection: Fd, uid: u32) -> bool {
    let mut credentials = [0u32; 3]; // pid, uid, gid
    let mut len: u32 = 12;
    // SAFETY: SOL_SOCKET, SO_PEERCRED writes a `struct ucred` (12 bytes) and its length.
    let got = unsafe {
        call(
            GETSOCKOPT,
            [
                connection.0 as usize,
                1,
                17,
                credentials.as_mut_ptr() as usize,
                (&raw mut len) as usize,
                0,
            ],
        )
    };
    got == 0 && len == 12 && (credentials[1] == uid || credentials[1] == 0)
}

/// Waits until `fd` is ready for `events`, or `deadline` (ms) passes; whether it is ready.
fn ready(fd: Fd, events: i16, deadline: u64) -> bool {
    loop {
        let now = now_ms();
        if now >= deadline {
            return false;
        }
        let wait = (deadline - now).min(i32::MAX as u64) as usize;
        let mut poll = [fd.0 as i64 | ((events as i64) << 32)];
        let n = call3(POLL, poll.as_mut_ptr() as usize, 1, wait);
        if n > 0 {
            return true;
        }
        if n < 0 && n != EINTR {
            return false;
        }
    }
}

/// How writing ended.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    All,
    /// The deadline passed first, after this many bytes.
    Late(usize),
    /// The file closed or broke first, after this many bytes.
    Broken(usize),
}

/// Writes all of `bytes` to `fd` by `deadline` (ms).
pub fn send(fd: Fd, bytes: &[u8], deadline: u64) -> Sent {
    let mut sent = 0;
    while sent < bytes.len() {
        let rest = &bytes[sent..];
        let n = call3(WRITE, fd.0 as usize, rest.as_ptr() as usize, rest.len());
        match n {
            EINTR => continue,
            EAGAIN => {
                if !ready(fd, 4, deadline) {
                    return Sent::Late(sent);
                }
            }
            n if n <= 0 => return Sent::Broken(sent),
            n => sent += n as usize,
        }
    }
    Sent::All
}

/// Writes all of `bytes` to `fd` by `deadline` (ms); whether it did.
pub fn write_all(fd: Fd, bytes: &[u8], deadline: u64) -> bool {
    send(fd, bytes, deadline) == Sent::All
}

/// How reading a response line ended.
pub enum Line {
    Whole,
    /// The deadline passed first.
    Late,
    /// The connection closed or broke first.
    Broken,
}

/// Reads up to and including the first line end into `into`, by `deadline` (ms).
pub fn read_line(fd: Fd, into: &mut Buf, deadline: u64) -> Line {
    loop {
        let start = into.len;
        match into.read_once(fd, 64 << 10) {
            EINTR => continue,
            EAGAIN => {
                if !ready(fd, 1, deadline) {
                    return Line::Late;
                }
            }
            n if n <= 0 => return Line::Broken,
            _ => {
                if into.bytes()[start..].contains(&b'\n') {
                    return Line::Whole;
                }
            }
        }
    }
}

/// A memfd holding `bytes`, which an exec keeps.
pub fn memfd_with(bytes: &[u8]) -> Option<Fd> {
    let fd = call3(MEMFD_CREATE, c"hookd-relay-input".as_ptr() as usize, 0, 0);
    if fd < 0 {
        return None;
    }
    let fd = Fd(fd as i32);
    write_all(fd, bytes, u64::MAX).then_some(fd)
}

/// Copies what is left of `from` to `to`; whether it got to the end.
pub fn copy_rest(from: Fd, to: Fd) -> bool {
    let mut chunk = Buf::new(64 << 10);
    loop {
        chunk.len = 0;
        if chunk.read_all_from(from, 64 << 10) {
            return write_all(to, chunk.bytes(), u64::MAX);
        }
        if chunk.len == 0 || !write_all(to, chunk.bytes(), u64::MAX) {
            return false;
        }
    }
}

/// Puts `fd` at its start on stdin.
pub fn rewind_onto_stdin(fd: Fd) {
    call3(LSEEK, fd.0 as usize, 0, 0);
    call3(DUP2, fd.0 as usize, 0, 0);
    call3(CLOSE, fd.0 as usize, 0, 0);
}

/// The folder this program's file is in (from `/proc/self/exe`); whether it could be read.
pub fn own_folder(into: &mut Buf) -> bool {
    into.reserve(4096);
    // SAFETY: readlink writes at most 4095 bytes into the buffer's free part.
    let n = unsafe {
        call(
            READLINK,
            [
                c"/proc/self/exe".as_ptr() as usize,
                into.ptr as usize,
                4095,
                0,
                0,
                0,
            ],
        )
    };
    if n <= 0 {
        return false;
    }
    into.len = n as usize;
    match into.bytes().iter().rposition(|&b| b == b'/') {
        Some(at) => {
            into.len = at;
            true
        }
        None => false,
    }
}

/// The variable that tells `hookd relay` why the daemon gave no answer (its `UNANSWERED_VAR`).
pub const UNANSWERED: &[u8] = b"HOOKD_RELAY_UNANSWERED";

/// Runs `program` (NUL-terminated) with `first` (NUL-terminated) before `args[1..]`, and the environment
/// with, when given, `unanswered` (a whole NUL-terminated `NAME=value` entry) in place of any
/// [`UNANSWERED`] it holds. Returns only if it cannot.
pub fn exec(
    program: &[u8],
    first: Option<&[u8]>,
    args: &[*const u8],
    env: &[*const u8],
    unanswered: Option<&[u8]>,
) {
    let mut argv = Buf::new((args.len() + 3) * 8);
    let mut pointer = |p: *const u8| argv.push(&(p as usize).to_ne_bytes());
    pointer(program.as_ptr());
    if let Some(first) = first {
        pointer(first.as_ptr());
    }
    for &arg in args.iter().skip(1) {
        pointer(arg);
    }
    pointer(core::ptr::null());
    let mut envp = Buf::new((env.len() + 2) * 8);
    let mut entry = |p: *const u8| envp.push(&(p as usize).to_ne_bytes());
    if let Some(unanswered) = unanswered {
        entry(unanswered.as_ptr());
    }
    for &variable in env {
        // SAFETY: the environment's entries are NUL-terminated strings.
        let named = unsafe { c_str(variable) }
            .strip_prefix(UNANSWERED)
            .is_some_and(|rest| rest.starts_with(b"="));
        if unanswered.is_some() && named {
            continue;
        }
        entry(variable);
    }
    entry(core::ptr::null());
    call3(
        EXECVE,
        program.as_ptr() as usize,
        argv.bytes().as_ptr() as usize,
        envp.bytes().as_ptr() as usize,
    );
}

// What the compiler calls for copies and comparisons, which libc would give.

#[unsafe(no_mangle)]
unsafe extern "C" fn memcpy(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    // SAFETY: the compiler's contract for memcpy: `n` bytes, not overlapping.
    unsafe { memmove(dest, src, n) }
}

#[unsafe(no_mangle)]
unsafe extern "C" fn memmove(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    // SAFETY: the compiler's contract for memmove: `n` bytes each; a volatile copy is never turned back
    // into a call to this function.
    unsafe {
        if (dest as usize) <= (src as usize) {
            for i in 0..n {
                core::ptr::write_volatile(dest.add(i), core::ptr::read_volatile(src.add(i)));
            }
        } else {
            for i in (0..n).rev() {
                core::ptr::write_volatile(dest.add(i), core::ptr::read_volatile(src.add(i)));
            }
        }
    }
    dest
}

#[unsafe(no_mangle)]
unsafe extern "C" fn memset(dest: *mut u8, byte: i32, n: usize) -> *mut u8 {
    // SAFETY: the compiler's contract for memset.
    unsafe {
        for i in 0..n {
            core::ptr::write_volatile(dest.add(i), byte as u8);
        }
    }
    dest
}

#[unsafe(no_mangle)]
unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: the compiler's contract for memcmp.
    unsafe {
        for i in 0..n {
            let (x, y) = (
                core::ptr::read_volatile(a.add(i)),
                core::ptr::read_volatile(b.add(i)),
            );
            if x != y {
                return i32::from(x) - i32::from(y);
            }
        }
    }
    0
}

#[unsafe(no_mangle)]
unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: as memcmp.
    unsafe { memcmp(a, b, n) }
}
