//! Every limit a client, a hook or a settings file can meet, in one place, each with why it is what it
//! is. docs/limits.md lists them for users; a limit changed here is changed everywhere.
//!
//! Values that only tune how the daemon works inside (read sizes, how much of a line is quoted in the
//! log) stay beside the code they tune.

use std::time::Duration;

// ---- The timeout chain: each link gives up before the one that waits for it. ----

/// A hook's timeout when the settings give none. Below [`RELAY_TIMEOUT_SECS`], so that a hanging hook
/// is answered by the daemon (with its `on_failure`) before the relay gives up.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// How long `hookd relay` waits for a verdict by default. Above [`DEFAULT_HOOK_TIMEOUT`] (see there) and
/// below [`AGENT_TIMEOUT_SECS`], so that the relay answers in the agent's dialect (fail-open, or
/// `--fail-closed`) before the agent kills it.
pub const RELAY_TIMEOUT_SECS: f64 = 100.0;

/// The longest `--timeout` a `relay` request may ask for (a day): past it, a typo, not a wait.
pub const RELAY_TIMEOUT_MAX_SECS: f64 = 86_400.0;

/// How long the relay waits for a daemon that is not there, where one has served (its socket refusing
/// connections, or missing while its lock file is there: a daemon stopped or killed), before it answers
/// without it (fail-open, or `--fail-closed`). systemd restarts a failed `hookd.service` after its
/// `RestartSec` (1 s) and the daemon listens within milliseconds of starting: 3 s covers a restart with
/// room to spare, well within every agent's limit (the wait never outlasts the relay's own for the
/// moment, [`AGENT_LIMIT_MARGIN`] short of the agent's). Under socket activation there is nothing to wait
/// for: the socket stays, and a connection queues there until the daemon is back. `hookd-relay-lite` does
/// not wait itself: finding no daemon, it hands the call to the relay, which waits.
pub const RELAY_DAEMON_PATIENCE: Duration = Duration::from_secs(3);

/// The largest hook input a `relay` request carries: a small client sends it whole in one line, and one
/// larger goes through `hookd relay`, which reads any size (up to [`MAX_EVENT`] whole, past it by its
/// head). A tool call's input is a few hundred bytes to a few kilobytes; a big file written is more.
pub const RELAY_INPUT_MAX: usize = 1 << 20;

/// Seconds the agent is told to let the relay run, in the settings `--print-settings` writes for it.
/// Above [`RELAY_TIMEOUT_SECS`]: the relay always gives up first, never killed mid-way.
pub const AGENT_TIMEOUT_SECS: u64 = 120;

/// How much sooner than an agent's own limit at a moment (Claude Code's SessionEnd, say; the moment rows'
/// `within_ms`) the relay gives up waiting for the verdict: time for the relay to start, to answer in
/// the agent's dialect and for the agent to read it, before the agent stops listening. A hook whose
/// `timeout` does not fit in the limit less this margin gets a warning from `hookd check`.
pub const AGENT_LIMIT_MARGIN: Duration = Duration::from_millis(500);

/// How long before an agent's own limit at a moment hookd stops that moment's hooks for it (each is then
/// read as timed out, by its `on_failure`): more than [`AGENT_LIMIT_MARGIN`], so that the daemon's
/// verdict, a fast hook's refusal among it, reaches the relay before the relay gives up on the daemon.
pub const HOOK_LIMIT_MARGIN: Duration = Duration::from_millis(1000);

/// How long a fire from a repository waits for what the disk tells of its hooks (the repository looked
/// for, the hooks file read, scripts of up to 16 MiB digested and copied, on a blocking thread), in
/// all: nested repositories are read side by side within it, never one such wait after another. Far
/// longer than a healthy disk takes, far shorter than the relay waits. Past it the fire goes on and
/// says which repository's hooks did not run.
pub const PROJECT_READ_WAIT: Duration = Duration::from_secs(10);

/// How long `status` waits for the digest of every repository's hooks' scripts (on a blocking thread,
/// one digest at a time) before it answers with their pending hooks unknown: a healthy disk takes
/// milliseconds, and `doctor` waits 5 s for the whole answer.
pub const STATUS_DIGEST_WAIT: Duration = Duration::from_secs(2);

/// The longest timeout a hook may be given: a day. Anything longer is surely a typo (ms for seconds).
pub const MAX_HOOK_TIMEOUT_SECS: f64 = 86_400.0;

/// The shortest timeout a hook may be given: a millisecond. The runner's clock cannot honour less (a
/// `timeout = 1e-12` was taken as zero, and the hook failed at every fire without ever running).
pub const MIN_HOOK_TIMEOUT_SECS: f64 = 0.001;

/// A command hook's timeout below which `hookd check` and `hookd import` warn: starting a shell and a
/// program takes milliseconds alone, so such a hook times out at nearly every fire. Most often it is a
/// number meant as seconds read where milliseconds are (Gemini CLI's `"timeout": 10` is 10 ms).
pub const SHORT_COMMAND_TIMEOUT_SECS: f64 = 0.1;

/// Between SIGTERM and SIGKILL for a hook out of time: time for it to clean up after itself.
pub const KILL_GRACE: Duration = Duration::from_secs(1);

/// How long the daemon waits for a hook's pipes to close once the hook has exited: a background
/// grandchild that keeps stdout open must not hold the verdict back.
pub const PIPE_GRACE: Duration = Duration::from_millis(100);

// ---- What a hook may say. ----

/// Each of a hook's stdout and stderr is kept up to this size; the rest is read and dropped, so a flood
/// can neither fill the daemon's memory nor block the hook on a full pipe.
pub const HOOK_OUTPUT: usize = 1 << 20;

/// The most worker processes one worker hook may keep.
pub const MAX_WORKERS: i64 = 16;

/// Fires queued for the workers of one hook; more wait for room.
pub const WORKER_QUEUE: usize = 256;

// ---- The settings file. ----

/// The most bytes a settings file may hold: a thousand times a long hand-written one, and little enough
/// to read and validate in well under a second.
pub const SETTINGS_SIZE: u64 = 4 * 1024 * 1024;

/// The most errors reported for one file; past it, one line says how many more there were.
pub const SETTINGS_ERRORS: usize = 100;

/// The most bytes a file of policy test cases (`hookd test --cases`) may hold: room for a case whose
/// event is as large as the daemon decodes whole ([`MAX_EVENT`]), and a bound on what a mistaken path
/// (`/dev/zero`, a log still growing) can make hookd read.
pub const CASES_SIZE: u64 = MAX_EVENT as u64 + (1 << 20);

// ---- Requests. ----

/// The largest hook input an agent may send (to `hookd relay` or the http listener) and have decoded
/// whole. Events are shaped by the model: a `Write` of a large file is legitimate, and a refusal must
/// not be lost to its size. A larger one is still fired, as undecidable: its hooks are read as failed.
pub const MAX_EVENT: usize = 64 << 20;

/// The longest request line accepted, without its newline: an event of [`MAX_EVENT`] and the request
/// around it. A longer one is answered `too_large`, and the connection is closed, since the rest of the
/// line cannot be told from the next request.
pub const MAX_LINE: usize = MAX_EVENT + (1 << 20);

/// How deep `serde_json` reads (its recursion limit). A deeper event is undecidable.
pub const MAX_DEPTH: usize = 128;

/// The longest `id` taken, as JSON: it is echoed in the answer, which a client that does not read could
/// make the daemon hold, one per request.
pub const MAX_ID: usize = 1024;

/// The longest event value given to a hook in its environment (`HOOKD_SESSION`, `CLAUDE_PROJECT_DIR`):
/// Linux refuses to start a program with any one variable over 128 KiB, and a hook that cannot start
/// is a guard that does not run. A longer value is left out of the environment (empty, or unset); the
/// hook still has it whole in the event on its stdin. A real session id or folder is far shorter.
pub const MAX_ENV_VALUE: usize = 4096;

/// The longest agent name taken: it is written in the log with every hook's outcome.
pub const MAX_AGENT_NAME: usize = 256;

/// The most moments a `hello` may list: each is compared with every moment of the settings, on the
/// thread every client shares.
pub const MAX_HELLO_MOMENTS: usize = 1024;

/// The longest value kept for a member of an event decided from its head (one too large or too deep to
/// decode whole): enough for any moment, tool name, path or id; a longer one is cut (a cut value only
/// decides which hooks are read as failed).
pub const MAX_HEAD_VALUE: usize = 4096;

/// The longest answer line, in bytes: the adds are cut to fit, fairly, and the verdict is kept whole.
pub const MAX_ANSWER: usize = 2 << 20;

/// The largest rewritten tool input or output a fire's answer carries, as JSON: half an answer. A rewrite
/// cannot be cut (half a command is another command), so a larger one refuses the call rather than be
/// dropped, which would run the call as it was before the rewrite.
pub const MAX_REWRITE: usize = MAX_ANSWER / 2;

// ---- Connections and memory. ----

/// Socket connections served at once; more wait in the listen backlog until one closes.
pub const MAX_CONNECTIONS: usize = 1024;

/// HTTP connections served at once. Agents keep one or a few each; a quarter of the socket's cap keeps
/// both together well under the daemon's file limit.
pub const MAX_HTTP_CONNECTIONS: usize = MAX_CONNECTIONS / 4;

/// Fires one connection may have running at once; more requests wait unread until one is answered.
pub const MAX_PENDING: usize = 256;

/// A connection with nothing pending and nothing said for this long is closed.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// How long an answer may wait for its client to read it. A client that reads nothing for this long is
/// closed, and what its fires held (memory, a large-line permit) is freed: a client that pipelines and
/// never reads cannot hold the daemon's budgets for good.
pub const WRITE_DEADLINE: Duration = Duration::from_secs(30);

/// A request line longer than this is a large one: reading it needs a large-line permit. Below it, a
/// partial line is held without one: at most this much per connection.
pub const LARGE_LINE: usize = 256 << 10;

/// Large lines read at once, across every connection: each may buffer up to the longest line allowed.
pub const LARGE_LINES_AT_ONCE: usize = 8;

/// How long a large line waits for a permit before it is decided from its head instead (its hooks read
/// as failed, and refused whatever their `on_failure`: the daemon was too busy to hear them).
pub const PERMIT_WAIT: Duration = Duration::from_secs(2);

/// How long a client has to finish sending a large line once it holds a large-line permit: 64 MiB take
/// well under a second over a Unix socket.
pub const LARGE_LINE_DEADLINE: Duration = Duration::from_secs(10);

/// What one connection may hold: room for one request of the largest size, decoded, with its answer.
pub const CONNECTION_BUDGET: usize = 160 << 20;

/// What every connection together may hold before the daemon stops reading requests.
pub const TOTAL_BUDGET: usize = 1 << 30;

/// What a request is charged, beyond its own bytes, for its answer while it is pending: the most an
/// answer line can be.
pub const ANSWER_RESERVE: usize = MAX_ANSWER + (64 << 10);

/// A request longer than this is decoded (and sized) on a blocking thread: a line of tens of thousands
/// of tiny values takes milliseconds to decode, and the runtime's one thread serves every client.
pub const OFF_THREAD: usize = 64 << 10;

/// How long an HTTP client may take to send a request's headers, and a kept-alive connection may sit
/// idle between requests. Agents open a new connection after their own idle time (seconds), so this
/// only ever closes the stale and the slow.
pub const HTTP_HEADER_TIMEOUT: Duration = Duration::from_secs(30);

/// How long an HTTP client may take to send a body once its headers are in.
pub const HTTP_BODY_TIMEOUT: Duration = Duration::from_secs(30);

// ---- Stop loops. ----

/// Sessions whose refused Stops are counted at once. Past this, the session not heard from for the
/// longest is forgotten: a forgotten session only starts counting again from zero.
pub const STOP_LOOP_SESSIONS: usize = 4096;

// ---- Asks followed to their end. ----

/// Asks followed at once, waiting for what came of them (docs/record.md, asks). Past it, the oldest is
/// written as `unknown` to make room: a flood of asks with no word after them (an agent that fires no
/// PostToolUse) must not grow the daemon.
pub const ASKS_FOLLOWED: usize = 4096;

/// How long an ask is waited on for a word of what came of it (the call run, denied) before it is
/// written as `unknown`: a person may leave a prompt open a while, but not all day.
pub const ASK_OUTCOME_WAIT: Duration = Duration::from_secs(30 * 60);

// ---- Hooks hung live over the socket (`attach`). ----

/// The longest name a live hook or its client may be given: both are written in the log and the record
/// with every call.
pub const MAX_LIVE_NAME: usize = 256;

/// The longest session id a live hook may be hung on; real ones are tens of bytes.
pub const MAX_SESSION_ID: usize = 1024;

/// The most of a live client's `error` (its report that its hook failed) kept, in bytes: it is quoted in
/// the journal and in the agent's message, where an error of megabytes would be noise.
pub const MAX_CLIENT_ERROR: usize = 1024;

/// Live hooks one connection may hang at once: each is looked at by every fire of its moment.
pub const MAX_LIVE_HOOKS_PER_CONNECTION: usize = 64;

/// Live hooks hung at once across every connection: the daemon's own bound, whatever the number of
/// clients.
pub const MAX_LIVE_HOOKS: usize = 1024;

/// Calls waiting for one connection's answers at once. Past it, a call fails at once (its `on_failure`
/// decides): a client that answers nothing cannot make the daemon hold an event per fire for ever.
pub const MAX_LIVE_CALLS_PENDING: usize = 256;

/// The bytes of calls queued for one connection and not yet written to it (its client reads slower
/// than it is called, or not at all): past it, a call fails at once. A call always goes into an empty
/// queue, whatever its event's size.
pub const LIVE_QUEUE_BYTES: usize = 4 << 20;

/// Sessions remembered as ended (a SessionEnd fired for them), so that a live hook hung on one is
/// refused where it is hung; the oldest is forgotten past it.
pub const ENDED_SESSIONS: usize = 4096;

// ---- Shutdown. ----

/// How long running fires may take to finish once shutdown begins.
pub const DRAIN_DEADLINE: Duration = Duration::from_secs(10);

/// After the drain deadline: time for abandoned fires to be answered and their hooks to be stopped.
pub const CLOSE_DEADLINE: Duration = Duration::from_secs(3);

// Checked when the daemon is built: each link of the timeout chain gives up before the one that waits
// for it, and one request of the largest size fits a connection's budget with its answer, or the largest
// request could never be read.
const _: () = assert!(DEFAULT_HOOK_TIMEOUT.as_secs() < RELAY_TIMEOUT_SECS as u64);
const _: () = assert!((RELAY_TIMEOUT_SECS as u64) < AGENT_TIMEOUT_SECS);
const _: () = assert!(RELAY_DAEMON_PATIENCE.as_secs() < RELAY_TIMEOUT_SECS as u64);
const _: () = assert!(MAX_LINE + ANSWER_RESERVE < CONNECTION_BUDGET);
const _: () = assert!(CONNECTION_BUDGET < TOTAL_BUDGET);
const _: () = assert!(HOOK_LIMIT_MARGIN.as_millis() > AGENT_LIMIT_MARGIN.as_millis());
