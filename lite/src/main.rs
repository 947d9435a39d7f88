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
//! the input it read through a memfd, so that the answer is always the relay's. Before anything reached
//! the daemon, or when the daemon refused the request before firing anything, the relay asks the daemon
//! itself:
//! - a command line other than the plain forms `--print-settings` writes;
//! - an input over 1 MiB or not UTF-8;
//! - no daemon of the user's at any place it may listen (the relay looks again, and waits for one that is
//!   restarting);
//! - a daemon that refuses the request (an older one, an agent it does not know, one stopping).
//!
//! Once the daemon may have the request, it is never asked again (its hooks may have run). If it gives
//! no answer within the relay's wait, or the connection closes first, or the answer cannot be read, the
//! relay is told so (`HOOKD_RELAY_UNANSWERED`) and answers as for a daemon that could not answer,
//! fail-open or `--fail-closed`.
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
// No wait of its own for a daemon that is restarting (`RELAY_DAEMON_PATIENCE`): finding none at any
// place, it hands the call to the relay, which looks again and waits, so that the wait is one wait.

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

/// Why the call goes to `hookd relay`.
#[derive(Clone, Copy)]
enum HandOver {
    /// Nothing reached the daemon, or it refused the request before firing anything: the relay asks it.
    Ask,
    /// The daemon has the request, and its hooks may have run: the relay answers as for a daemon that
    /// could not answer, without asking again. The `HOOKD_RELAY_UNANSWERED` entry that says why.
    Unanswered(&'static [u8]),
}

const SILENT: HandOver = HandOver::Unanswered(b"HOOKD_RELAY_UNANSWERED=silent\0");
const CLOSED: HandOver = HandOver::Unanswered(b"HOOKD_RELAY_UNANSWERED=closed\0");
const UNREADABLE: HandOver = HandOver::Unanswered(b"HOOKD_RELAY_UNANSWERED=unreadable\0");

fn run(args: &[*const u8], env: &[*const u8]) -> i32 {
    sys::set_up();
    let words: &[*const u8] = args.get(1..).unwrap_or(&[]);
    let mut input = Buf::new(INPUT_MAX + 1);
    let whole = input.read_all_from(Fd::STDIN, INPUT_MAX + 1);
    let hand_over = |input: &mut Buf, why: HandOver| hand_over(args, env, input, whole, why);
    // Told already that the daemon did not answer (by a lite relay before this one): the relay's to say.
    // Only the values the relay acts on count, as it reads them.
    let told_unanswered = sys::env_var(env, sys::UNANSWERED)
        .is_some_and(|value| [&b"silent"[..], b"closed", b"unreadable"].contains(&value));
    if told_unanswered {
        return hand_over(&mut input, HandOver::Ask);
    }
    let Some(told) = read_words(words) else {
        return hand_over(&mut input, HandOver::Ask);
    };
    // A word that asks for fail-closed, read as a value (`--event —fail-closed`): the relay refuses.
    if !told.fail_closed && asks_fail_closed(words) {
        return hand_over(&mut input, HandOver::Ask);
    }
    if !whole || input.len() > INPUT_MAX || core::str::from_utf8(input.bytes()).is_err() {
        return hand_over(&mut input, HandOver::Ask);
    }
    let Some(timeout_ms) = timeout_ms(told.timeout) else {
        return hand_over(&mut input, HandOver::Ask);
    };
    let mut socket_path = Buf::new(256);
    // None there: the relay looks again, and waits for a daemon that is restarting.
    let Some(connection) = connect_to_daemon(&told, env, &mut socket_path) else {
        return hand_over(&mut input, HandOver::Ask);
    };
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
    match sys::send(connection, request.bytes(), deadline) {
        sys::Sent::All => {}
        // Nothing of it reached the daemon: it is asked again.
        sys::Sent::Broken(0) => return hand_over(&mut input, HandOver::Ask),
        // Part of it did, and the daemon reads a last line without its line end as a request: it may
        // have been fired.
        sys::Sent::Broken(_) => return hand_over(&mut input, CLOSED),
        sys::Sent::Late(_) => return hand_over(&mut input, SILENT),
    }
    let mut response = Buf::new(64 << 10);
    match sys::read_line(connection, &mut response, deadline) {
        sys::Line::Whole => {}
        sys::Line::Late => return hand_over(&mut input, SILENT),
        sys::Line::Broken => return hand_over(&mut input, CLOSED),
    }
    if json::refused_before_firing(response.bytes()) {
        // An older daemon, an agent it does not know, a daemon stopping: nothing was fired.
        return hand_over(&mut input, HandOver::Ask);
    }
    match json::relay_response(response.bytes_mut()) {
        Some(answer) => write_answer(&answer),
        None => hand_over(&mut input, UNREADABLE),
    }
}

/// Writes the daemon's answer out as the relay does (`emit` in src/commands/relay_process.rs): an answer that
/// cannot reach the agent on stdout (closed, `/dev/null`, a write that fails) and holds the call back is
/// refused on stderr with exit 2 instead; written to nowhere with exit 0, it let the call go on.
fn write_answer(answer: &json::Answer) -> i32 {
    let lost = !answer.stdout.is_empty()
        && (sys::is_dev_null(Fd::STDOUT) || !sys::write_all(Fd::STDOUT, answer.stdout, u64::MAX));
    sys::write_all(Fd::STDERR, answer.stderr, u64::MAX);
    if !lost {
        return answer.exit;
    }
    // Said as the relay says it (its `LOST`), since the answer is the relay's.
    const LOST: &[u8] = b"hookd relay: the answer could not reach the agent on stdout (closed, /dev/null, or a write that failed)";
    let mut said = Buf::new(4096);
    match answer.refusal {
        Some(reason) => {
            said.push(reason);
            said.push(b"\n");
            said.push(LOST);
            said.push(b": refused here instead (exit 2)\n");
            sys::write_all(Fd::STDERR, said.bytes(), u64::MAX);
            2
        }
        None => {
            said.push(LOST);
            said.push(b"; it held nothing back\n");
            sys::write_all(Fd::STDERR, said.bytes(), u64::MAX);
            answer.exit
        }
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

/// Connects to the daemon where `hookd relay` finds it (`paths::socket_places`): `--socket`, else
/// `$HOOKD_SOCKET` alone, else the first of `$XDG_RUNTIME_DIR/hookd/hookd.sock`,
/// `/run/user/$UID/hookd/hookd.sock` and `/tmp/hookd-$UID/hookd.sock` where a daemon of this user (or
/// root's) accepts; `path` is left holding where. `None` when none does, or a variable is set but not
/// UTF-8 (which the relay reads as unset): the relay then looks again itself, waiting for a daemon
/// that is restarting.
fn connect_to_daemon(told: &Words, env: &[*const u8], path: &mut Buf) -> Option<Fd> {
    let var = |name: &[u8]| -> Result<Option<&[u8]>, ()> {
        match sys::env_var(env, name) {
            Some(value) if core::str::from_utf8(value).is_err() => Err(()),
            Some(value) if !value.is_empty() => Ok(Some(value)),
            _ => Ok(None),
        }
    };
    let only = match told.socket {
        Some(socket) => Some(socket),
        None => var(b"HOOKD_SOCKET").ok()?,
    };
    if let Some(socket) = only {
        path.push(socket);
        return ours(path);
    }
    if let Some(runtime) = var(b"XDG_RUNTIME_DIR").ok()? {
        // Joined as a path is joined: no second slash after one the folder ends with.
        path.push(runtime);
        if !runtime.ends_with(b"/") {
            path.push_byte(b'/');
        }
        path.push(b"hookd/hookd.sock");
        if let Some(connection) = ours(path) {
            return Some(connection);
        }
    }
    let uid = u64::from(sys::getuid());
    let mut place = Buf::new(256);
    for (before, after) in [
        (&b"/run/user/"[..], &b"/hookd/hookd.sock"[..]),
        (b"/tmp/hookd-", b"/hookd.sock"),
    ] {
        place.clear();
        place.push(before);
        place.push_decimal(uid);
        place.push(after);
        if place.bytes() == path.bytes() {
            continue;
        }
        path.clear();
        path.push(place.bytes());
        if let Some(connection) = ours(path) {
            return Some(connection);
        }
    }
    None
}

/// A connection to the daemon at `path`, if one of this user's, or root's, accepts there.
fn ours(path: &Buf) -> Option<Fd> {
    let connection = sys::connect_unix(path.bytes())?;
    if sys::peer_is(connection, sys::getuid()) {
        return Some(connection);
    }
    sys::close(connection);
    None
}

/// Hands the call to `hookd relay`: `hookd-relay` beside this program, else `hookd relay`, with the same
/// words and the input (read whole, or what was read and the rest of stdin) on its stdin. Returns only
/// when neither can be started: then it answers as the relay does when it cannot answer, fail-open or,
/// with `--fail-closed` (spelt as the relay reads it), refused with the reason on stderr and exit 2.
fn hand_over(
    args: &[*const u8],
    env: &[*const u8],
    input: &mut Buf,
    whole: bool,
    why: HandOver,
) -> i32 {
    let given = sys::memfd_with(input.bytes()).and_then(|fd| {
        // Read again past its end, a terminal would wait for a second end of input.
        (whole || sys::copy_rest(Fd::STDIN, fd)).then_some(fd)
    });
    if let Some(fd) = given {
        sys::rewind_onto_stdin(fd);
    }
    let unanswered = match why {
        HandOver::Ask => None,
        HandOver::Unanswered(entry) => Some(entry),
    };
    let mut folder = Buf::new(4096);
    if sys::own_folder(&mut folder) {
        let mut relay = Buf::new(4096);
        relay.push(folder.bytes());
        relay.push(b"/hookd-relay\0");
        sys::exec(relay.bytes(), None, args, env, unanswered);
        let mut hookd = Buf::new(4096);
        hookd.push(folder.bytes());
        hookd.push(b"/hookd\0");
        sys::exec(hookd.bytes(), Some(b"relay\0"), args, env, unanswered);
    }
    let mut said = Buf::new(256);
    if asks_fail_closed(args.get(1..).unwrap_or(&[])) {
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

/// Whether a word asks for fail-closed, however it is spelt, as the relay reads its words
/// (`relay_argv::word_asks_fail_closed`): its name (before any `=`), its dashes of every kind,
/// underscores and spaces left out and read without case, is `failclosed` but for at most two letters,
/// or holds both `fail` and `clos`; a word with a `/` (a path) never does. Names of more than 64
/// letters are not read (none is within two letters of `failclosed`).
fn asks_fail_closed(words: &[*const u8]) -> bool {
    words.iter().any(|&word| {
        // SAFETY: the arguments are NUL-terminated strings the kernel placed.
        word_asks_fail_closed(unsafe { sys::c_str(word) })
    })
}

fn word_asks_fail_closed(word: &[u8]) -> bool {
    if word.contains(&b'/') {
        return false;
    }
    let name = word.split(|&b| b == b'=').next().unwrap_or_default();
    let mut letters = ['\0'; 64];
    let mut count = 0;
    for chunk in name.utf8_chunks() {
        let invalid = (!chunk.invalid().is_empty()).then_some(char::REPLACEMENT_CHARACTER);
        for c in chunk.valid().chars().chain(invalid) {
            if is_dash(c) || c == '_' || c.is_whitespace() {
                continue;
            }
            if count == letters.len() {
                return false;
            }
            letters[count] = c.to_ascii_lowercase();
            count += 1;
        }
    }
    let letters = &letters[..count];
    let holds = |part: &str| {
        let part: [char; 4] = core::array::from_fn(|i| part.as_bytes()[i] as char);
        letters.windows(4).any(|window| window == part)
    };
    (holds("fail") && holds("clos")) || edit_distance(letters, "failclosed") <= 2
}

/// A hyphen, a dash or a minus, as a web page or a word processor may put for `-`.
fn is_dash(c: char) -> bool {
    matches!(
        c,
        '-' | '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{fe58}' | '\u{fe63}' | '\u{ff0d}'
    )
}

/// The number of letters to add, remove or change to make `a` into `b` (at most 15 letters).
fn edit_distance(a: &[char], b: &str) -> usize {
    let mut row = [0usize; 16];
    let b = b.as_bytes();
    for (j, slot) in row.iter_mut().enumerate().take(b.len() + 1) {
        *slot = j;
    }
    for (i, &ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb as char))
                .min(above + 1)
                .min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // Nothing here panics by design; should it, exit 70 (not 2, which reads as a refusal, and not 0).
    sys::exit(70)
}
