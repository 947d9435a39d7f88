//! `hookd-relay-lite`: `hookd relay`, as the agent starts it on every tool call, in a program that does
//! no more than carry the call to the daemon and its answer back.
//!
//! Why it exists: on a VM, a process linked with glibc spends most of its start in glibc's own start-up
//! (it probes the CPU's caches with `cpuid`, which the VM traps: about 0.5 ms here, more than the rest of
//! a relay call). This program has no libc: its own `_start`, raw system calls, no allocator but `mmap`.
//! It knows nothing of the agents' dialects either. It sends the agent's input and its own words to the
//! daemon's `relay` request (docs/protocol.md), which answers with what `hookd relay` would write and
//! exit with, made by `hookd relay`'s own code, and writes that out.
//!
//! Everything else it hands to `hookd relay` (`hookd-relay` beside it, else `hookd relay`), giving it
//! the input it read through a memfd, so that the answer is always the relay's:
//! - a command line other than the plain forms `--print-settings` writes;
//! - an input over 1 MiB or not UTF-8;
//! - no daemon on the socket, or one that is not the user's;
//! - a daemon that refuses the request (an older one, an agent it does not know).
//!
//! Nothing has been fired then, and the relay asks the daemon itself. When the daemon took the request
//! and gave no answer within the relay's wait, the relay is told so (`HOOKD_RELAY_DAEMON_SILENT`): it
//! answers as for a silent daemon, fail-open or `--fail-closed`, without asking again.
//!
//! Linux on x86_64 only; elsewhere, `hookd-relay` is the relay.

#![no_std]
#![no_main]

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
compile_error!("hookd-relay-lite is for Linux on x86_64; elsewhere, use hookd-relay");

mod json;
mod sys;

use sys::{Buf, Fd};

/// The largest input carried in a `relay` request (the daemon's limit, `RELAY_INPUT_MAX`).
const INPUT_MAX: usize = 1 << 20;
/// The relay's default `--timeout`, in milliseconds (`RELAY_TIMEOUT_SECS`).
const DEFAULT_TIMEOUT_MS: u64 = 100_000;
/// The longest `--timeout` a `relay` request takes (`RELAY_TIMEOUT_MAX_SECS`), in milliseconds.
const TIMEOUT_MAX_MS: u64 = 86_400_000;
/// How long past the relay's wait this program waits for the daemon's answer: the daemon answers at the
/// wait itself (a fire not decided by then is answered as the relay answers a silent daemon), so this
/// only tells a daemon that hangs.
const GRACE_MS: u64 = 1_000;
/// The name `hookd relay` answers as when it hands a call over and cannot.
const NAME: &[u8] = b"hookd-relay-lite";

/// What the command line said, in the forms `hookd relay`'s own fast reading takes
/// (src/commands/relay_argv.rs); anything else is the relay's to read.
struct Words<'a> {
    agent: &'a [u8],
    socket: Option<&'a [u8]>,
    event: Option<&'a [u8]>,
    timeout: Option<&'a [u8]>,
    fail_closed: bool,
}

/// The entry point: the stack holds `argc`, the arguments, a null, the environment, a null.
///
/// # Safety
/// Called once, by `_start`, with the stack the kernel made.
#[unsafe(no_mangle)]
unsafe extern "C" fn start(stack: *const usize) -> ! {
    // SAFETY: the kernel's stack layout at `_start`, as the System V ABI gives it.
    let (args, env) = unsafe { sys::args_and_env(stack) };
    sys::exit(run(args, env))
}

fn run(args: &[*const u8], env: &[*const u8]) -> i32 {
    let words: &[*const u8] = args.get(1..).unwrap_or(&[]);
    let mut input = Buf::new(INPUT_MAX + 1);
    let whole = input.read_all_from(Fd::STDIN, INPUT_MAX + 1);
    let Some(told) = read_words(words) else {
        return hand_over(args, env, &mut input, false);
    };
    if !whole || input.len() > INPUT_MAX || core::str::from_utf8(input.bytes()).is_err() {
        return hand_over(args, env, &mut input, false);
    }
    let Some(timeout_ms) = timeout_ms(told.timeout) else {
        return hand_over(args, env, &mut input, false);
    };
    let mut socket_path = Buf::new(256);
    if !default_socket(&told, env, &mut socket_path) {
        return hand_over(args, env, &mut input, false);
    }
    let Some(connection) = sys::connect_unix(socket_path.bytes()) else {
        return hand_over(args, env, &mut input, false);
    };
    if !sys::peer_is(connection, sys::getuid()) {
        return hand_over(args, env, &mut input, false);
    }
    let mut request = Buf::new(input.len() + input.len() / 8 + 4096);
    request.push(b"{\"op\":\"relay\",\"id\":1,\"agent\":");
    json::string(&mut request, told.agent);
    request.push(b",\"socket\":");
    json::string(&mut request, socket_path.bytes());
    if told.fail_closed {
        request.push(b",\"fail_closed\":true");
    }
    if let Some(event) = told.event {
        request.push(b",\"event\":");
        json::string(&mut request, event);
    }
    if let Some(timeout) = told.timeout {
        request.push(b",\"timeout\":");
        request.push(timeout);
    }
    request.push(b",\"input\":");
    json::string(&mut request, input.bytes());
    request.push(b"}\n");
    let deadline = sys::now_ms() + timeout_ms + GRACE_MS;
    if !sys::write_all(connection, request.bytes(), deadline) {
        // Not all of it sent: the daemon may still have read a whole line (it cannot, without the line
        // end, which comes last), so nothing was fired.
        return hand_over(args, env, &mut input, false);
    }
    let mut response = Buf::new(64 << 10);
    match sys::read_line(connection, &mut response, deadline) {
        sys::Line::Whole => {}
        // Asked and not answered in time: the relay answers as for a silent daemon.
        sys::Line::Late => return hand_over(args, env, &mut input, true),
        // Closed or broken before a whole line: the relay asks again, and says what it finds.
        sys::Line::Broken => return hand_over(args, env, &mut input, false),
    }
    match json::relay_response(response.bytes_mut()) {
        Some(answer) => {
            sys::write_all(Fd::STDOUT, answer.stdout, u64::MAX);
            sys::write_all(Fd::STDERR, answer.stderr, u64::MAX);
            answer.exit
        }
        // An error (an older daemon, an agent it does not know), or a response this program cannot
        // read: nothing of this call is known to have run, and the relay asks again.
        None => hand_over(args, env, &mut input, false),
    }
}

/// The words, if they are the plain forms; `None` hands the call to the relay, which reads them all.
fn read_words(words: &[*const u8]) -> Option<Words<'_>> {
    let mut told = Words {
        agent: b"claude-code",
        socket: None,
        event: None,
        timeout: None,
        fail_closed: false,
    };
    let mut agent = None;
    let mut index = 0;
    while index < words.len() {
        // SAFETY: each argument is a NUL-terminated string the kernel placed.
        let word = unsafe { sys::c_str(words[index]) };
        index += 1;
        core::str::from_utf8(word).ok()?;
        let (name, inline) = match word.iter().position(|&b| b == b'=') {
            Some(at) => (&word[..at], Some(&word[at + 1..])),
            None => (word, None),
        };
        if name == b"--fail-closed" {
            if inline.is_some() || told.fail_closed {
                return None;
            }
            told.fail_closed = true;
            continue;
        }
        let slot = match name {
            b"--agent" => &mut agent,
            b"--socket" => &mut told.socket,
            b"--event" => &mut told.event,
            b"--timeout" => &mut told.timeout,
            _ => return None,
        };
        if slot.is_some() {
            return None;
        }
        let value = match inline {
            Some(value) => value,
            None => {
                let next = *words.get(index)?;
                index += 1;
                // SAFETY: as above.
                unsafe { sys::c_str(next) }
            }
        };
        if value.is_empty() || value[0] == b'-' || core::str::from_utf8(value).is_err() {
            return None;
        }
        *slot = Some(value);
    }
    if let Some(agent) = agent {
        told.agent = agent;
    }
    Some(told)
}

/// `--timeout` in milliseconds: digits, with a fraction or not, above zero and at most a day. Anything
/// else (`1e3`, `.5`, `inf`) is the relay's to read.
fn timeout_ms(timeout: Option<&[u8]>) -> Option<u64> {
    let Some(text) = timeout else {
        return Some(DEFAULT_TIMEOUT_MS);
    };
    let (whole, fraction) = match text.iter().position(|&b| b == b'.') {
        Some(at) => (&text[..at], &text[at + 1..]),
        None => (text, &b""[..]),
    };
    if whole.is_empty() || whole.len() > 6 || fraction.len() > 9 {
        return None;
    }
    if text.contains(&b'.') && fraction.is_empty() {
        return None;
    }
    let digits = |part: &[u8]| part.iter().all(u8::is_ascii_digit);
    if !digits(whole) || !digits(fraction) {
        return None;
    }
    let mut ms: u64 = 0;
    for &d in whole {
        ms = ms * 10 + u64::from(d - b'0');
    }
    ms *= 1000;
    let mut scale = 100;
    for &d in fraction.iter().take(3) {
        ms += u64::from(d - b'0') * scale;
        scale /= 10;
    }
    // A fraction of a millisecond still waits: rounded up.
    if fraction.iter().skip(3).any(|&d| d != b'0') || (ms == 0 && digits(fraction)) {
        ms += 1;
    }
    let zero = whole.iter().chain(fraction).all(|&d| d == b'0');
    (!zero && ms <= TIMEOUT_MAX_MS).then_some(ms)
}

/// The socket as `hookd relay` finds it: `--socket`, else `$HOOKD_SOCKET`, else
/// `$XDG_RUNTIME_DIR/hookd/hookd.sock`, else `/tmp/hookd-$UID/hookd.sock`. A variable that is set but
/// not UTF-8 (which the relay reads as unset) hands the call over.
fn default_socket(told: &Words, env: &[*const u8], path: &mut Buf) -> bool {
    if let Some(socket) = told.socket {
        path.push(socket);
        return true;
    }
    let var = |name: &[u8]| -> Result<Option<&[u8]>, ()> {
        match sys::env_var(env, name) {
            Some(value) if core::str::from_utf8(value).is_err() => Err(()),
            Some(value) if !value.is_empty() => Ok(Some(value)),
            _ => Ok(None),
        }
    };
    match (var(b"HOOKD_SOCKET"), var(b"XDG_RUNTIME_DIR")) {
        (Err(()), _) => false,
        (Ok(Some(socket)), _) => {
            path.push(socket);
            true
        }
        (Ok(None), Err(())) => false,
        (Ok(None), Ok(Some(runtime))) => {
            path.push(runtime);
            path.push(b"/hookd/hookd.sock");
            true
        }
        (Ok(None), Ok(None)) => {
            path.push(b"/tmp/hookd-");
            path.push_decimal(u64::from(sys::getuid()));
            path.push(b"/hookd.sock");
            true
        }
    }
}

/// Hands the call to `hookd relay`: `hookd-relay` beside this program, else `hookd relay`, with the same
/// words and the input read so far (and the rest of stdin) on its stdin. `silent`: the daemon took the
/// request and did not answer within the relay's wait. Returns only when neither can be started: then it
/// answers as the relay does when it cannot answer, fail-open or, with `--fail-closed`, refused.
fn hand_over(args: &[*const u8], env: &[*const u8], input: &mut Buf, silent: bool) -> i32 {
    let given = sys::memfd_with(input.bytes()).and_then(|fd| {
        // The rest of the input, if it was not read whole: the relay reads it from the same file.
        sys::copy_rest(Fd::STDIN, fd).then_some(fd)
    });
    if let Some(fd) = given {
        sys::rewind_onto_stdin(fd);
    }
    let mut folder = Buf::new(4096);
    if sys::own_folder(&mut folder) {
        let mut relay = Buf::new(4096);
        relay.push(folder.bytes());
        relay.push(b"/hookd-relay\0");
        sys::exec(relay.bytes(), None, args, env, silent);
        let mut hookd = Buf::new(4096);
        hookd.push(folder.bytes());
        hookd.push(b"/hookd\0");
        sys::exec(hookd.bytes(), Some(b"relay\0"), args, env, silent);
    }
    let fail_closed = read_words(args.get(1..).unwrap_or(&[])).is_some_and(|told| told.fail_closed)
        || args.iter().skip(1).any(|&arg| {
            // SAFETY: as in `read_words`.
            let word = unsafe { sys::c_str(arg) };
            word == b"--fail-closed"
        });
    let mut said = Buf::new(256);
    if fail_closed {
        said.push(b"hookd could not answer: ");
        said.push(NAME);
        said.push(b" cannot start hookd-relay or hookd beside it\n");
        sys::write_all(Fd::STDERR, said.bytes(), u64::MAX);
        2
    } else {
        said.push(NAME);
        said.push(
            b": cannot start hookd-relay or hookd beside it; letting the agent go on (fail-open)\n",
        );
        sys::write_all(Fd::STDERR, said.bytes(), u64::MAX);
        0
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // Nothing here panics by design; should it, exit 70 (not 2, which reads as a refusal, and not 0).
    sys::exit(70)
}
