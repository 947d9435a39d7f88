//! What a fire costs, beside what it replaces, measured in one run on this machine: `cargo bench --bench
//! fire` starts the real daemon on a socket in a temp folder and prints one table, every ratio against a
//! baseline measured in the same run, every target beside its figure.
//!
//! The rows, by letter (the table's ratios name them):
//! - A, C: spawning `/bin/true` and `sh -c true` directly, as an agent does for each hook (three pipes, the
//!   event written, the output read, the process reaped): the floors;
//! - B, D: a fire with one `argv = ["/bin/true"]` hook, and one with `command = "true"` (`/bin/sh`), round
//!   trip from a client on one connection, each against its floor;
//! - E: a fire that matches no hook: the daemon's own cost;
//! - F: a fire with 8 `command = "sleep 0.2"` hooks: they run at once, so the wall time is about 0.2 s;
//! - G, G0: the relay path: `hookd-relay` started as an agent starts it, firing at the daemon, with one
//!   `/bin/true` hook (against `sh -c true`, C: what the agent would start for a hook anyway) and with no
//!   matching hook (against `/bin/true`, A: the relay's own start and round trip); Gh, G0h the same
//!   through `hookd relay` (as settings written before hookd-relay call it); Gl, G0l through
//!   `hookd-relay-lite` (no libc, `lite/`, built by the bench); Gs, G0s through a static
//!   build (`cargo build-static`, or `HOOKD_BENCH_STATIC`), when there is one;
//! - H: reload latency: a settings file renamed over (as editors save) to the first fire with the new hooks;
//! - I, J, K: throughput of 32 threads at once, each in a loop: firing with no hook, each on a connection
//!   of its own (against one client in a loop: the rate of E); spawning `/bin/true` directly, without the
//!   daemon (against one thread: the rate of A); firing with one `/bin/true` hook (against J, and against
//!   one client: the rate of B);
//! - L, M, N: the daemon's resident memory idle after start, the most seen during I and K, and after them;
//! - O, P: a worker hook (one Python process answering an event per line) against spawning Python per
//!   event, measured only where this hookd accepts the `worker` key (see [`worker_rows`]);
//! - Q, R, S: an http hook decision (Claude Code's `"type": "http"`: POST the hook input to the daemon's
//!   `[http]` listener, on one kept-alive connection, read the answer): no matching hook, one
//!   `/bin/true` hook (beside A, C and the relay path G), and one worker hook (beside P);
//! - T, U: the engine held in this process (`hookd::engine::Engine`, no socket, no daemon): a decision
//!   with one `/bin/true` hook (beside A and B), and one with no matching hook (beside E: what the socket
//!   round trip adds).
//! - W, X: E and I again against a second daemon on the same settings with `[record] enabled = false`:
//!   what the record (a line for every fire, written by the journal's thread) costs a fire, E against W
//!   and I against X. The main daemon records, as every daemon does by default.
//!
//! - Y, Z: the example guard of `config/` (`deny-destructive.py`) deciding a shell command: started as
//!   a one-shot `command` hook, Python per call (as the guard ran before it became a worker), against
//!   the same script as the example settings run it, a `worker` (see [`guard_rows`]).
//!
//! - Ec, E0c, Ew, E0w: E again, but a Bash call (`cargo test && git status`, and `echo x >
//!   out.txt`, a write in the project) that matches no hook, with hookd's guard of itself judging it
//!   (on, as by default) against the same fire with `[protect] enabled = false`, two daemons of their
//!   own fired in turns ABBA; Uc, U0c, Uw, U0w the same decision by the engine in this process, and Jc,
//!   Jw the guard's judge alone (see [`protect_rows`]). Target: Ec and Ew within 5 % of E0c and E0w.
//!
//! - Jge, Jgr, Jgl, Jgf, Jgk, U0g, Ug, E0g, Eg, Cg, G0gl, Ggl: the built-in guard (`builtin = "guard"`,
//!   judged in the daemon's process): its judge alone on five calls (an everyday command, `rm -rf ~`, a
//!   2.3 KB script, a `Read` of a project file and of a private key; target: p50 and p99 under 0.2 ms);
//!   the engine in this process with the guard hooked against no hook (Ug, U0g), the same fire over the
//!   socket, two daemons in turns ABBA (Eg, E0g), and `hookd-relay-lite` deciding Claude Code's
//!   PreToolUse Bash call through the guarded daemon and the bare one (Ggl, G0gl) against spawning `sh -c
//!   true` in the same turns (Cg; target: Ggl under Cg). See [`builtin_rows`]; a few seconds at the
//!   default rounds.
//!
//! - Eo, E0o: E again, with the journal exported to an OpenTelemetry collector that is down (nothing
//!   listens on its port: the exporter retries with backoff) against the same fire with no export, two
//!   daemons of their own fired in turns ABBA, swapping roles halfway (see [`export_rows`]). Target: Eo
//!   within 5 % of E0o (the median of the rounds' ratios). `cargo bench --bench fire -- export` runs
//!   only these.
//!
//! - El, E1l: a fire that matches no hook with three layers loaded (a managed layer, the user's file,
//!   the fire's `cwd` in a repository with hooks of its own) against the user's file alone; target: El
//!   within 5 % of E1l. See [`layers_rows`]; `cargo bench --bench fire -- layers` runs only these.
//! - Es, Ws, E0, Ee, Is, Xs, I0, Ls, L0, As, Bs: the speed rows (see [`speed_rows`]): E, W, I, X and
//!   L again beside the earlier tree's daemon (built from [`EARLIER`] into `target/`) and a Unix
//!   socket echo, and a client asleep in `read` firing one hook against spawning it. `cargo bench
//!   --bench fire -- speed` runs only these: the rows to run for a change to the fire path.
//! - Lw, Ll: a hook hung live over the socket (`attach`; a client thread in this process answering each
//!   call at once) against a worker hook (one Python process answering `{}` per line), on one daemon,
//!   fired in turns ABBA (see [`live_rows`]). Target: Ll's p50 under 100 us above Lw's. `cargo bench
//!   --bench fire -- live` runs only these.
//!
//! `cargo bench --bench fire -- guard` runs only rows Y and Z (the machine may be shared; they need no
//! other row); `cargo bench --bench fire -- protect` only the guard of itself's rows, Ec to Jw;
//! `cargo bench --bench fire -- builtin` only the built-in guard's rows, Jge to Ggl.
//!
//! Rows that are compared alternate in small batches (the throughput rows I and X, J and K in turns of a
//! quarter each, ABBA), so that drift on a busy machine hits both alike.
//! `HOOKD_BENCH_ROUNDS` (default 40) scales every sample count; at 40 the run takes about half a minute
//! on two cores.

// The integration tests' helpers: the daemon is started as the tests start theirs. The bench uses only
// part of them.
#[allow(dead_code, unused_imports)]
#[path = "../tests/it/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The event every fire and every direct spawn hands over; the tool name picks the hook (see [`SETTINGS`]).
fn event(tool: &str) -> String {
    format!(
        r#"{{"session_id":"bench","cwd":"/","tool_name":"{tool}","tool_input":{{"command":"ls -la"}}}}"#
    )
}

/// The main daemon's settings: PreToolUse hooks told apart by their matchers, so that one daemon serves
/// every row. `Read` matches none of them (row E).
const SETTINGS: &str = r#"[defaults]
shell = "/bin/sh"

[http]
listen = "127.0.0.1:0"

[[hooks.PreToolUse]]
name = "argv-true"
matcher = "Bash"
argv = ["/bin/true"]

[[hooks.PreToolUse]]
name = "command-true"
matcher = "Write"
command = "true"
"#;

/// The tool names of the rows.
const ARGV_TOOL: &str = "Bash";
const COMMAND_TOOL: &str = "Write";
const SLEEP_TOOL: &str = "Task";
const NO_HOOK_TOOL: &str = "Read";
/// Row V: the worker daemon's hook that allows and rewrites.
const REWRITE_TOOL: &str = "Edit";

/// Row F: this many hooks, each sleeping this long.
const SLEEPERS: usize = 8;
const SLEEP: Duration = Duration::from_millis(200);

/// Rows I to K: threads at once, firing each on a connection of its own, or spawning.
const CLIENTS: usize = 32;

/// Spawning rows: samples per batch; the batches alternate.
const BATCH: usize = 50;

/// The daemon's quiet window for settings edits (`watch::QUIET`): the floor of row H.
const QUIET: Duration = Duration::from_millis(30);

/// How often the memory sampler reads `/proc/PID/status` during the load.
const SAMPLE_EVERY: Duration = Duration::from_millis(2);

/// A bound on waiting for the daemon to listen.
const START_DEADLINE: Duration = Duration::from_secs(10);

fn main() {
    let rounds: usize = std::env::var("HOOKD_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or(40);
    let dir = tempfile::tempdir().expect("temp dir");
    let mut table = Table::default();
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with('-'))
        .collect();
    /// The rows a filter runs alone: (filter, what they are, the rows).
    type Rows = fn(&mut Table, &Path, usize);
    const ALONE: [(&str, &str, Rows); 7] = [
        (
            "protect",
            "the guard of itself only (rows Ec to Jw)",
            protect_rows,
        ),
        (
            "builtin",
            "the built-in guard only (rows Jge to Ggl)",
            builtin_rows,
        ),
        ("export", "the export only (rows Eo and E0o)", export_rows),
        ("layers", "the layers only (rows El and E1l)", layers_rows),
        (
            "speed",
            "the speed rows only (Es, Ws, E0, Ee, Is, Xs, I0, Ls, L0, As, Bs)",
            speed_rows,
        ),
        ("live", "the live hook only (rows Lw and Ll)", live_rows),
        ("guard", "rows Y and Z only", guard_rows),
    ];
    let alone = match filters.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] => None,
        [filter] => ALONE.iter().find(|(name, _, _)| *name == filter),
        _ => None,
    };
    if let Some((name, what, rows)) = alone {
        println!(
            "machine: {} cores; HOOKD_BENCH_ROUNDS={rounds}; {what}",
            cores()
        );
        rows(&mut table, &dir.path().join(name), rounds);
        table.print();
        return;
    }
    if !filters.is_empty() {
        let known: Vec<String> = ALONE
            .iter()
            .map(|(name, what, _)| format!("`{name}` ({what})"))
            .collect();
        panic!(
            "unknown rows {filters:?}: give no filter (every row) or one of {}",
            known.join(", ")
        );
    }

    // The main daemon: rows A to G and I to N.
    let config = dir.path().join("hooks.toml");
    write_settings(&config, &main_settings());
    let daemon = Daemon::start(&config, dir.path().join("run/hookd.sock"));
    let mut client = daemon.connect();
    // Rows W and X: the same settings with the record off, in a daemon of its own.
    let unrecorded_config = dir.path().join("unrecorded/hooks.toml");
    std::fs::create_dir_all(unrecorded_config.parent().unwrap()).expect("a folder");
    write_settings(
        &unrecorded_config,
        &format!("{}\n[record]\nenabled = false\n", main_settings()),
    );
    let unrecorded = Daemon::start(
        &unrecorded_config,
        dir.path().join("unrecorded/run/hookd.sock"),
    );
    let mut unrecorded_client = unrecorded.connect();
    let idle_rss = rss_kib(daemon.pid());

    let argv_fire = fire_request(ARGV_TOOL);
    let command_fire = fire_request(COMMAND_TOOL);
    let sleep_fire = fire_request(SLEEP_TOOL);
    let no_hook_fire = fire_request(NO_HOOK_TOOL);
    let event_line = format!("{}\n", event(ARGV_TOOL));

    // Warm up every path, and check that each request runs the hooks it is meant to.
    for _ in 0..100 {
        spawn_directly(&mut Command::new("/bin/true"), &event_line);
        spawn_directly(Command::new("/bin/sh").args(["-c", "true"]), &event_line);
        client.fire(&argv_fire);
        client.fire(&command_fire);
        client.fire(&no_hook_fire);
        unrecorded_client.fire(&no_hook_fire);
    }
    expect_hooks(client.fire(&argv_fire), &["argv-true"]);
    expect_hooks(unrecorded_client.fire(&no_hook_fire), &[]);
    expect_hooks(client.fire(&command_fire), &["command-true"]);
    expect_hooks(client.fire(&no_hook_fire), &[]);
    let relays = relays();
    for _ in 0..20 {
        for relay in &relays {
            run_relay(relay, &daemon.socket, ARGV_TOOL);
            run_relay(relay, &daemon.socket, NO_HOOK_TOOL);
        }
    }
    let mut http = HttpClient::connect(&mut client);
    let http_argv = hook_input(ARGV_TOOL);
    let http_no_hook = hook_input(NO_HOOK_TOOL);
    for _ in 0..100 {
        http.post(&http_argv);
        http.post(&http_no_hook);
    }

    // The engine in this process, on the same settings as the daemon.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let settings = hookd::settings::Settings::parse(&config, "hooks.toml", &main_settings())
        .expect("the bench's settings");
    let engine = runtime.block_on(async { hookd::engine::Engine::new(settings) });
    let runtime = &runtime;
    let in_process = |tool: &str| {
        let fields: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&event(tool)).expect("the event");
        let engine = engine.clone();
        move || {
            let fire = hookd::engine::Fire {
                moment: "PreToolUse".into(),
                agent: None,
                event: fields.clone().into(),
            };
            let decided = runtime.block_on(engine.decide(fire, &engine.abandoned().child_token()));
            decided.expect("decided")
        }
    };
    let engine_argv = in_process(ARGV_TOOL);
    let engine_no_hook = in_process(NO_HOOK_TOOL);
    for _ in 0..100 {
        engine_argv();
        engine_no_hook();
    }
    let names = |decision: hookd::decision::Verdict| -> Vec<String> {
        decision.hooks.into_iter().map(|hook| hook.name).collect()
    };
    assert_eq!(names(engine_argv()), ["argv-true"]);
    assert!(names(engine_no_hook()).is_empty());

    eprintln!("fire: one hook beside spawning it directly ({rounds} rounds)");
    let mut s = Samples::default();
    for _ in 0..rounds {
        for _ in 0..BATCH {
            s.direct_true.push(timed(|| {
                spawn_directly(&mut Command::new("/bin/true"), &event_line)
            }));
        }
        for _ in 0..BATCH {
            s.argv.push(timed(|| {
                client.fire(&argv_fire);
            }));
        }
        for _ in 0..BATCH {
            s.direct_sh.push(timed(|| {
                spawn_directly(Command::new("/bin/sh").args(["-c", "true"]), &event_line)
            }));
        }
        for _ in 0..BATCH {
            s.command.push(timed(|| {
                client.fire(&command_fire);
            }));
        }
        for _ in 0..BATCH * 4 {
            s.no_hook.push(timed(|| {
                client.fire(&no_hook_fire);
            }));
        }
        for _ in 0..BATCH * 4 {
            s.unrecorded_no_hook.push(timed(|| {
                unrecorded_client.fire(&no_hook_fire);
            }));
        }
        for _ in 0..BATCH / 5 {
            for (relay, samples) in relays.iter().zip(&mut s.relays) {
                samples
                    .hook
                    .push(timed(|| run_relay(relay, &daemon.socket, ARGV_TOOL)));
                samples
                    .no_hook
                    .push(timed(|| run_relay(relay, &daemon.socket, NO_HOOK_TOOL)));
            }
        }
        for _ in 0..BATCH * 4 {
            s.http_no_hook.push(timed(|| http.post(&http_no_hook)));
        }
        for _ in 0..BATCH {
            s.http_argv.push(timed(|| http.post(&http_argv)));
        }
        for _ in 0..BATCH {
            s.engine_argv.push(timed(|| {
                engine_argv();
            }));
        }
        for _ in 0..BATCH * 4 {
            s.engine_no_hook.push(timed(|| {
                engine_no_hook();
            }));
        }
    }
    drop(http);

    eprintln!("fire: {SLEEPERS} hooks of sleep {}", secs(SLEEP));
    let sleepers = sleeper_names();
    let sleepers: Vec<&str> = sleepers.iter().map(String::as_str).collect();
    expect_hooks(client.fire(&sleep_fire), &sleepers);
    for _ in 0..(rounds / 2).max(3) {
        s.sleepers.push(timed(|| {
            client.fire(&sleep_fire);
        }));
    }
    drop(client);

    eprintln!("fire: {CLIENTS} clients at once");
    // One client in a loop, from the samples above: the baseline of the throughput rows.
    let serial_no_hook = rate(&s.no_hook);
    let serial_argv = rate(&s.argv);
    let serial_direct = rate(&s.direct_true);
    drop(unrecorded_client);
    // The rows compared as throughputs (I against X, K against J) are measured in turns, as the serial
    // rows alternate in batches: one long load after the other moved K against J from 0.69 to 0.98 run to
    // run, the machine's drift rather than the daemon's.
    let (no_hook_load, unrecorded_load) = in_turns(
        || {
            load(
                &daemon,
                rounds * 150 / TURNS,
                firing(&daemon, &no_hook_fire),
            )
        },
        || {
            load(
                &unrecorded,
                rounds * 150 / TURNS,
                firing(&unrecorded, &no_hook_fire),
            )
        },
    );
    drop(unrecorded);
    let (direct_load, argv_load) = in_turns(
        || {
            load(&daemon, (rounds * 4 / TURNS).max(1), || -> Work {
                let event_line = event_line.as_str();
                Box::new(move || {
                    spawn_directly(&mut Command::new("/bin/true"), event_line);
                })
            })
        },
        || {
            load(
                &daemon,
                (rounds * 4 / TURNS).max(1),
                firing(&daemon, &argv_fire),
            )
        },
    );
    let after_rss = rss_kib(daemon.pid());
    drop(daemon);

    eprintln!("fire: reload latency");
    let reloads = reload_latencies(&dir.path().join("reload"), rounds + rounds / 4);

    // Rows A to G.
    let direct_true = Summary::of(&mut s.direct_true);
    let direct_sh = Summary::of(&mut s.direct_sh);
    table.row(
        "A",
        "spawn `/bin/true` directly (3 pipes, event written, output read, reaped)",
        &direct_true,
        "1.00 (baseline of B, G0)".into(),
        None,
    );
    table.ratio_row(
        "B",
        "fire, one `argv = [\"/bin/true\"]` hook, one connection",
        &Summary::of(&mut s.argv),
        ("A", &direct_true),
        Some(1.10),
    );
    table.row(
        "C",
        "spawn `sh -c true` directly (as A)",
        &direct_sh,
        "1.00 (baseline of D, G)".into(),
        None,
    );
    table.ratio_row(
        "D",
        "fire, one `command = \"true\"` hook (`/bin/sh`), one connection",
        &Summary::of(&mut s.command),
        ("C", &direct_sh),
        Some(1.10),
    );
    let no_hook = Summary::of(&mut s.no_hook);
    let under_50us = no_hook.p50 < Duration::from_micros(50);
    table.row(
        "E",
        "fire that matches no hook (the daemon's own cost, round trip)",
        &no_hook,
        "-".into(),
        Some(("p50 < 50 us".into(), under_50us)),
    );
    let unrecorded_no_hook = Summary::of(&mut s.unrecorded_no_hook);
    let recorded_ratio = ratio(no_hook.p50, unrecorded_no_hook.p50);
    table.row(
        "W",
        "fire that matches no hook, `[record] enabled = false` (a daemon of its own)",
        &unrecorded_no_hook,
        format!("E is {recorded_ratio:.2} x W"),
        Some(("E within 10 % of W".into(), recorded_ratio <= 1.10)),
    );
    let sleepers = Summary::of(&mut s.sleepers);
    table.row(
        "F",
        &format!("fire, {SLEEPERS} `command = \"sleep 0.2\"` hooks (wall time, all at once)"),
        &sleepers,
        format!("{:.2} x 0.2 s", ratio(sleepers.p50, SLEEP)),
        Some((
            "p50 < 0.25 s".into(),
            sleepers.p50 < Duration::from_millis(250),
        )),
    );
    let mut relay = None;
    for (relay_program, samples) in relays.iter().zip(&mut s.relays) {
        let hook = Summary::of(&mut samples.hook);
        let no_hook = Summary::of(&mut samples.no_hook);
        table.ratio_row(
            &format!("G{}", relay_program.suffix),
            &format!(
                "{} process + daemon + one `/bin/true` hook (an agent's hook call)",
                relay_program.shown
            ),
            &hook,
            ("C", &direct_sh),
            Some(2.2),
        );
        table.ratio_row(
            &format!("G0{}", relay_program.suffix),
            &format!(
                "{} process + daemon, no matching hook (its own start and round trip)",
                relay_program.shown
            ),
            &no_hook,
            ("A", &direct_true),
            Some(1.3),
        );
        relay.get_or_insert(hook);
    }
    let relay = relay.expect("hookd-relay is measured");

    // Rows Q and R (S is with the worker rows).
    let http_no_hook = Summary::of(&mut s.http_no_hook);
    table.row(
        "Q",
        "http hook decision, no matching hook (POST on a kept-alive connection)",
        &http_no_hook,
        format!("{:.2} x E", ratio(http_no_hook.p50, no_hook.p50)),
        Some((
            "p50 < 0.2 ms".into(),
            http_no_hook.p50 < Duration::from_micros(200),
        )),
    );
    let http_argv = Summary::of(&mut s.http_argv);
    table.row(
        "R",
        "http hook decision, one `argv = [\"/bin/true\"]` hook",
        &http_argv,
        format!(
            "{:.2} x A; {:.2} x C; G is {:.1} x R",
            ratio(http_argv.p50, direct_true.p50),
            ratio(http_argv.p50, direct_sh.p50),
            ratio(relay.p50, http_argv.p50)
        ),
        None,
    );

    // Rows T and U.
    let engine_argv = Summary::of(&mut s.engine_argv);
    table.row(
        "T",
        "engine in this process, one `argv = [\"/bin/true\"]` hook (no socket)",
        &engine_argv,
        format!("{:.2} x A", ratio(engine_argv.p50, direct_true.p50)),
        None,
    );
    let engine_no_hook = Summary::of(&mut s.engine_no_hook);
    table.row(
        "U",
        "engine in this process, no matching hook (no socket)",
        &engine_no_hook,
        format!("E is {:.1} x U", ratio(no_hook.p50, engine_no_hook.p50)),
        None,
    );

    // Row H.
    let mut reloads = reloads;
    let reload = Summary::of(&mut reloads);
    table.row(
        "H",
        &format!(
            "reload: settings renamed over -> first fire with the new hooks ({} edits)",
            reload.count
        ),
        &reload,
        format!(
            "{:.2} x the {} quiet window",
            ratio(reload.p50, QUIET),
            ms(QUIET)
        ),
        None,
    );

    // Rows I to K.
    let no_hook_rate = no_hook_load.rate();
    table.rate_row(
        "I",
        "fire, no hook",
        &no_hook_load,
        true,
        format!(
            "{:.2} x one client (E in a loop: {} fires/s)",
            no_hook_rate / serial_no_hook,
            thousands(serial_no_hook)
        ),
        Some(("at least 20,000 fires/s".into(), no_hook_rate >= 20_000.0)),
    );
    let unrecorded_rate = unrecorded_load.rate();
    table.rate_row(
        "X",
        "fire, no hook, `[record] enabled = false` (as W)",
        &unrecorded_load,
        true,
        format!("I is {:.2} x X", no_hook_rate / unrecorded_rate),
        Some((
            "I at least 0.90 x X".into(),
            no_hook_rate >= 0.90 * unrecorded_rate,
        )),
    );
    table.rate_row(
        "J",
        "spawn `/bin/true` directly (as A; threads, no daemon)",
        &direct_load,
        false,
        format!(
            "{:.2} x one thread (A in a loop: {} spawns/s)",
            direct_load.rate() / serial_direct,
            thousands(serial_direct)
        ),
        None,
    );
    table.rate_row(
        "K",
        "fire, one `/bin/true` hook",
        &argv_load,
        true,
        format!(
            "{:.2} x J; {:.2} x one client (B in a loop: {} fires/s)",
            argv_load.rate() / direct_load.rate(),
            argv_load.rate() / serial_argv,
            thousands(serial_argv)
        ),
        Some((
            "at least 0.95 x J".into(),
            argv_load.rate() >= 0.95 * direct_load.rate(),
        )),
    );

    // Rows L to N.
    let load_rss = no_hook_load.max_rss_kib.max(argv_load.max_rss_kib);
    table.memory_row(
        "L",
        "daemon VmRSS, idle after start",
        idle_rss,
        "-".into(),
        Some(("< 10 MiB".into(), idle_rss < 10 * 1024)),
    );
    table.memory_row(
        "M",
        &format!(
            "daemon VmRSS, most seen during I and K (read every {})",
            ms(SAMPLE_EVERY)
        ),
        load_rss,
        format!("{:.2} x L", load_rss as f64 / idle_rss as f64),
        None,
    );
    table.memory_row(
        "N",
        "daemon VmRSS after I to K (clients gone)",
        after_rss,
        format!("{:.2} x L", after_rss as f64 / idle_rss as f64),
        None,
    );

    // Rows O and P.
    let python = if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    };
    let worker_dir = dir.path().join("worker");
    let worker_note = match worker_support(&worker_dir, python) {
        Support::Yes(worker_config) => {
            eprintln!("fire: a worker hook beside spawning python per event");
            worker_rows(&mut table, &worker_dir, &worker_config, python, rounds);
            None
        }
        Support::No => Some("worker hooks: not supported by this hookd".to_string()),
        Support::Unknown(why) => Some(format!(
            "worker hooks: not measured (`hookd check` did not say yes or no: {why})"
        )),
    };
    if let Some(note) = &worker_note {
        table.text_row(
            "O, P",
            "a worker hook beside spawning python per event",
            note,
        );
    }

    if worker_note.is_none() {
        eprintln!("fire: a live hook beside a worker hook");
        live_rows(&mut table, &dir.path().join("live"), rounds);
    }

    eprintln!("fire: the example guard, as a worker and as a command hook");
    guard_rows(&mut table, &dir.path().join("guard"), rounds);

    eprintln!("fire: hookd's guard of itself, on and off");
    protect_rows(&mut table, &dir.path().join("protect"), rounds);

    eprintln!(
        "fire: the built-in guard, alone, in the engine, over the socket and through the lite relay"
    );
    builtin_rows(&mut table, &dir.path().join("builtin"), rounds);

    eprintln!("fire: the journal exported to a collector that is down, and not exported");
    export_rows(&mut table, &dir.path().join("export"), rounds);

    eprintln!("fire: the speed rows: the record on and off, the earlier tree, a socket echo");
    speed_rows(&mut table, &dir.path().join("speed"), rounds);

    println!(
        "machine: {} cores; HOOKD_BENCH_ROUNDS={rounds}: {} samples per spawning row (A to D), {} for E, {} for F, {} for G; \
         a p99 of fewer than 100 samples is their worst",
        cores(),
        direct_true.count,
        no_hook.count,
        sleepers.count,
        relay.count
    );
    table.print();
    if let Some(note) = worker_note {
        println!("{note}");
    }
}

/// The main settings file: [`SETTINGS`] and the sleepers of row F.
fn main_settings() -> String {
    let mut text = SETTINGS.to_string();
    for name in sleeper_names() {
        text.push_str(&format!(
            "\n[[hooks.PreToolUse]]\nname = \"{name}\"\nmatcher = \"{SLEEP_TOOL}\"\ncommand = \"sleep {}\"\n",
            SLEEP.as_secs_f64()
        ));
    }
    text
}

fn sleeper_names() -> Vec<String> {
    (1..=SLEEPERS).map(|i| format!("sleep-{i}")).collect()
}

fn fire_request(tool: &str) -> String {
    format!(
        "{{\"op\":\"fire\",\"moment\":\"PreToolUse\",\"event\":{}}}\n",
        event(tool)
    )
}

#[derive(Default)]
struct Samples {
    direct_true: Vec<Duration>,
    argv: Vec<Duration>,
    direct_sh: Vec<Duration>,
    command: Vec<Duration>,
    no_hook: Vec<Duration>,
    /// Rows G and G0 of each of [`relays`], in its order.
    relays: [RelaySamples; 4],
    sleepers: Vec<Duration>,
    http_no_hook: Vec<Duration>,
    http_argv: Vec<Duration>,
    engine_argv: Vec<Duration>,
    engine_no_hook: Vec<Duration>,
    unrecorded_no_hook: Vec<Duration>,
}

/// Spawns a hook as an agent does: three pipes, the event written and stdin closed, stdout and stderr
/// read to their end, the process reaped.
fn spawn_directly(command: &mut Command, event_line: &str) -> Vec<u8> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {command:?}: {e}"));
    // A hook that does not read its stdin is normal: a broken pipe is no error.
    let _ = child.stdin.take().unwrap().write_all(event_line.as_bytes());
    let mut out = Vec::new();
    let _ = child.stdout.take().unwrap().read_to_end(&mut out);
    let mut err = Vec::new();
    let _ = child.stderr.take().unwrap().read_to_end(&mut err);
    let status = child.wait().expect("reap a directly spawned hook");
    assert!(status.success(), "{command:?} failed: {status}");
    out
}

/// A relay program measured by rows G and G0 (with `suffix` after the letters).
struct Relay {
    program: PathBuf,
    /// The first word after the program: `relay` for `hookd`, none for `hookd-relay`.
    word: Option<&'static str>,
    suffix: &'static str,
    shown: String,
}

/// The relays measured, in the order of their rows: this build's `hookd-relay` (what `setup` writes),
/// this build's `hookd relay` (what settings written before it call), and a static `hookd-relay`:
/// `HOOKD_BENCH_STATIC`, else the one `cargo build-static` makes, when it is there (the bench does not
/// build it: a static build takes minutes).
fn relays() -> Vec<Relay> {
    let mut relays = vec![
        Relay {
            program: common::RELAY_BIN.into(),
            word: None,
            suffix: "",
            shown: "`hookd-relay`".into(),
        },
        Relay {
            program: common::BIN.into(),
            word: Some("relay"),
            suffix: "h",
            shown: "`hookd relay`".into(),
        },
    ];
    let target = target_dir();
    let static_relay = match std::env::var_os("HOOKD_BENCH_STATIC").filter(|p| !p.is_empty()) {
        Some(path) => {
            let path = PathBuf::from(path);
            assert!(
                path.is_file(),
                "HOOKD_BENCH_STATIC: no file at {}",
                path.display()
            );
            Some(path)
        }
        None => Some(target.join("x86_64-unknown-linux-gnu/release/hookd-relay"))
            .filter(|path| path.is_file()),
    };
    if let Some(program) = static_relay {
        let shown = format!("static `hookd-relay` ({})", program.display());
        relays.push(Relay {
            program,
            word: None,
            suffix: "s",
            shown,
        });
    }
    relays.push(Relay {
        program: lite_relay(&target),
        word: None,
        suffix: "l",
        shown: "`hookd-relay-lite` (no libc)".into(),
    });
    relays
}

/// Cargo's target folder: where the bench looks for a static build and builds `hookd-relay-lite`.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// `hookd-relay-lite` (`lite/`), built here: a package of its own with no dependencies, seconds to build.
fn lite_relay(target: &Path) -> PathBuf {
    let target = target.join("lite");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("lite/Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .status()
        .expect("running cargo to build hookd-relay-lite");
    assert!(status.success(), "building hookd-relay-lite failed");
    target.join("release/hookd-relay-lite")
}

#[derive(Default)]
struct RelaySamples {
    hook: Vec<Duration>,
    no_hook: Vec<Duration>,
}

/// An agent's hook run: `relay` with Claude Code's PreToolUse input for `tool` on stdin, to its exit;
/// it must say nothing (a `/bin/true` hook, or none).
fn run_relay(relay: &Relay, socket: &Path, tool: &str) {
    let (status, out) = relay_output(relay, socket, &hook_input(tool));
    assert!(
        status.success() && out.is_empty(),
        "the relay said something: {}",
        String::from_utf8_lossy(&out)
    );
}

/// `relay` run as an agent runs it, Claude Code's hook `input` on stdin: how it exited and what it
/// printed on stdout.
fn relay_output(relay: &Relay, socket: &Path, input: &str) -> (std::process::ExitStatus, Vec<u8>) {
    let mut command = Command::new(&relay.program);
    command
        .args(relay.word)
        .args(["--agent", "claude-code", "--socket"])
        .arg(socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The relay's places (its spool above all) beside the daemon's, never the user's.
    common::keep_home(&mut command, socket.parent().unwrap());
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", relay.program.display()));
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    let mut out = Vec::new();
    let _ = child.stdout.take().unwrap().read_to_end(&mut out);
    let status = child.wait().expect("reap the relay");
    (status, out)
}

/// A daemon of our own, started as the tests start theirs (`common::serve_command_at`: no `HOOKD_*` or
/// systemd variables, no inherited descriptors) at log level `warn`, its output on ours; stopped (SIGTERM,
/// then SIGKILL after a grace period) and reaped when dropped, a panic included.
struct Daemon {
    child: common::ChildGuard,
    socket: PathBuf,
}

impl Daemon {
    fn start(config: &Path, socket: PathBuf) -> Daemon {
        Daemon::start_program(Path::new(common::BIN), config, socket)
    }

    /// [`Daemon::start`] with another build of hookd: the earlier tree's of the speed rows.
    fn start_program(program: &Path, config: &Path, socket: PathBuf) -> Daemon {
        let mut command = common::serve_command_at(config, &socket);
        if program != Path::new(common::BIN) {
            // The same arguments, environment and descriptors, another program; but `--managed`: the
            // earlier tree's daemon has no managed layer (nor the option).
            let mut other = Command::new(program);
            let mut args = command.get_args();
            while let Some(arg) = args.next() {
                if arg == "--managed" {
                    args.next();
                } else {
                    other.arg(arg);
                }
            }
            for (key, value) in command.get_envs() {
                match value {
                    Some(value) => other.env(key, value),
                    None => other.env_remove(key),
                };
            }
            other.stdin(Stdio::null());
            unsafe {
                // Safety: only fcntl, which is async-signal-safe, runs between fork and exec.
                other.pre_exec(|| {
                    common::cloexec_from(3);
                    Ok(())
                });
            }
            command = other;
        }
        command.env("HOOKD_LOG", "warn");
        let child = common::ChildGuard(command.spawn().expect("start hookd"));
        common::wait_until(START_DEADLINE, "hookd to listen on its socket", || {
            UnixStream::connect(&socket).is_ok()
        });
        Daemon { child, socket }
    }

    fn pid(&self) -> u32 {
        self.child.0.id()
    }

    /// A connection of our own: the tests' `common::Client` parses every response into JSON, which
    /// would add its cost to every round trip measured here.
    fn connect(&self) -> Client {
        let stream = UnixStream::connect(&self.socket).expect("connect to hookd");
        let reader = BufReader::new(stream.try_clone().expect("clone a unix stream"));
        Client {
            writer: stream,
            reader,
            line: String::new(),
        }
    }
}

struct Client {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
    line: String,
}

impl Client {
    /// Sends one request line and reads its response line.
    fn send(&mut self, request: &str) -> &str {
        self.writer
            .write_all(request.as_bytes())
            .expect("write to hookd");
        self.line.clear();
        self.reader.read_line(&mut self.line).expect("read hookd");
        &self.line
    }

    /// A fire that must be answered `ok`.
    fn fire(&mut self, request: &str) -> &str {
        let line = self.send(request);
        assert!(line.contains("\"ok\":true"), "unexpected response: {line}");
        line
    }
}

/// Checks that a fire ran exactly these hooks, in this order, and each said nothing.
fn expect_hooks(response: &str, names: &[&str]) {
    let value: serde_json::Value = serde_json::from_str(response).expect("a JSON response");
    let hooks = value["hooks"].as_array().expect("a hooks list");
    let ran: Vec<&str> = hooks.iter().filter_map(|h| h["name"].as_str()).collect();
    assert_eq!(ran, names, "the wrong hooks ran: {response}");
    assert!(
        hooks.iter().all(|h| h["outcome"] == "nothing"),
        "a hook did not answer cleanly: {response}"
    );
}

/// What the clients of a load saw.
struct Load {
    fires: usize,
    wall: Duration,
    latency: Summary,
    max_rss_kib: u64,
    /// The daemon's CPU time (user and system) over the load.
    daemon_cpu: Duration,
}

impl Load {
    /// The turns of one row as one load: wall and CPU time added, latencies pooled (one a fire), the
    /// most memory seen.
    fn joined(turns: Vec<Turn>) -> Load {
        let mut latencies: Vec<Duration> = Vec::new();
        let (mut wall, mut max_rss_kib, mut daemon_cpu) = (Duration::ZERO, 0, Duration::ZERO);
        for turn in turns {
            wall += turn.wall;
            max_rss_kib = max_rss_kib.max(turn.max_rss_kib);
            daemon_cpu += turn.daemon_cpu;
            latencies.extend(turn.latencies);
        }
        Load {
            fires: latencies.len(),
            wall,
            latency: Summary::of(&mut latencies),
            max_rss_kib,
            daemon_cpu,
        }
    }

    fn rate(&self) -> f64 {
        self.fires as f64 / self.wall.as_secs_f64()
    }

    /// How the daemon's time went: the share of one core it used, and its CPU time per fire.
    fn daemon_cpu(&self) -> String {
        format!(
            "daemon CPU {:.0} % of one core, {:.1} us per fire",
            ratio(self.daemon_cpu, self.wall) * 100.0,
            self.daemon_cpu.as_secs_f64() * 1e6 / self.fires as f64
        )
    }
}

/// One turn of a throughput row, as [`load`] measured it; [`Load::joined`] adds up a row's turns.
struct Turn {
    wall: Duration,
    /// One a fire (or a spawn).
    latencies: Vec<Duration>,
    max_rss_kib: u64,
    /// The daemon's CPU time (user and system) over the turn.
    daemon_cpu: Duration,
}

/// How many turns each of two compared throughput rows is measured in, see [`in_turns`].
const TURNS: usize = 4;

/// How many turns the speed rows' throughput (Is, Xs, I0) is measured in, each a quarter as long as one
/// of [`TURNS`] ([`SPEED_TURN_DIVISOR`]): their targets are on the median of the turns' own ratios. Many
/// short turns, not a few long ones: a turn's rate rides on where the scheduler put the daemon and the
/// 32 clients for it, so one daemon against itself went from 0.75 to 1.48 turn to turn, and turns twice
/// as long did not narrow that; the median of 36 short turns moved about half as much from run to run
/// as that of 9 long ones, in the same time.
const SPEED_TURNS: usize = 36;

/// How many times fewer fires a speed turn has than one of [`TURNS`].
const SPEED_TURN_DIVISOR: usize = 4;

/// Two loads measured in [`TURNS`] turns, in the order first, second, second, first, ..., each turn's
/// figures added to its row's: drift on the machine (another tenant, a clock change) then hits both
/// rows alike, and a steady one cancels out. The daemon's CPU time is read in ticks of 10 ms at each
/// turn's ends, so the CPU per fire of a short run is rough (at the default rounds, K's to about 5 %).
fn in_turns(mut first: impl FnMut() -> Turn, mut second: impl FnMut() -> Turn) -> (Load, Load) {
    let (mut firsts, mut seconds) = (Vec::new(), Vec::new());
    for turn in 0..TURNS {
        if turn % 2 == 0 {
            firsts.push(first());
            seconds.push(second());
        } else {
            seconds.push(second());
            firsts.push(first());
        }
    }
    (Load::joined(firsts), Load::joined(seconds))
}

/// A client of [`load`] firing `request` on a connection of its own.
fn firing<'a>(daemon: &'a Daemon, request: &'a str) -> impl Fn() -> Work<'a> {
    move || {
        let mut client = daemon.connect();
        Box::new(move || {
            client.fire(request);
        })
    }
}

/// A client thread's work: one fire, or one spawn; see [`load`].
type Work<'a> = Box<dyn FnMut() + Send + 'a>;

/// [`CLIENTS`] threads, each doing the work `client` makes for it (a connection of its own to fire on, or
/// a hook to spawn directly) until the first of them has done it `each` times, started together; the
/// daemon's resident memory is read from another thread meanwhile, and its CPU time before and after.
fn load<'a>(daemon: &Daemon, each: usize, client: impl Fn() -> Work<'a>) -> Turn {
    let start = Barrier::new(CLIENTS + 1);
    let running = AtomicBool::new(true);
    // Set by the first client done: the others stop after the work in hand, so that a turn's rate is
    // of all the clients at once, not of the last few stragglers (which left a turn's rate to chance:
    // one turn's ratio of two daemons went from 0.58 to 1.38 in one run).
    let stop = AtomicBool::new(false);
    let pid = daemon.pid();
    let cpu_before = cpu_time(pid);
    let (wall, latencies, max_rss_kib) = std::thread::scope(|scope| {
        let sampler = scope.spawn(|| {
            // Bounded: the load ends long before this deadline, and then `running` is cleared.
            let deadline = Instant::now() + Duration::from_secs(600);
            let mut max = rss_kib(pid);
            while running.load(Ordering::Relaxed) && Instant::now() < deadline {
                max = max.max(rss_kib(pid));
                std::thread::sleep(SAMPLE_EVERY);
            }
            max.max(rss_kib(pid))
        });
        let clients: Vec<_> = (0..CLIENTS)
            .map(|_| {
                let (start, stop, mut work) = (&start, &stop, client());
                scope.spawn(move || {
                    start.wait();
                    let mut latencies = Vec::with_capacity(each);
                    while latencies.len() < each && !stop.load(Ordering::Relaxed) {
                        latencies.push(timed(&mut work));
                    }
                    stop.store(true, Ordering::Relaxed);
                    latencies
                })
            })
            .collect();
        start.wait();
        let started = Instant::now();
        let latencies: Vec<Duration> = clients
            .into_iter()
            .flat_map(|client| client.join().expect("a client thread"))
            .collect();
        let wall = started.elapsed();
        running.store(false, Ordering::Relaxed);
        (wall, latencies, sampler.join().expect("the memory sampler"))
    });
    Turn {
        wall,
        latencies,
        max_rss_kib,
        daemon_cpu: cpu_time(pid).saturating_sub(cpu_before),
    }
}

/// A process's CPU time so far, user and system, from `/proc/PID/stat` (in clock ticks of 1/100 s: Linux's
/// `USER_HZ` is 100 on every architecture).
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read /proc stat");
    // The fields after the command name (which may hold spaces, hence the last ')'): state is the first,
    // utime the 12th, stime the 13th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| -> u64 {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .expect("utime and stime in /proc stat")
    };
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

/// Fires per second of one client firing in a loop: the samples' count over their sum.
fn rate(samples: &[Duration]) -> f64 {
    samples.len() as f64 / samples.iter().sum::<Duration>().as_secs_f64()
}

/// `VmRSS` of a process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmRSS line in /proc status")
}

/// Row H, on a daemon of its own in `dir`: each edit renames a new settings file over the old one (as vim
/// and VS Code save), then fires on one connection until one answers with the new hook.
fn reload_latencies(dir: &Path, edits: usize) -> Vec<Duration> {
    std::fs::create_dir_all(dir).expect("create the reload folder");
    let config = dir.join("hooks.toml");
    let version = |n: usize| format!("[[hooks.Stop]]\nargv = [\"/bin/echo\", \"v{n}\"]\n");
    write_settings(&config, &version(0));
    let daemon = Daemon::start(&config, dir.join("run/hookd.sock"));
    let mut client = daemon.connect();
    let request = "{\"op\":\"fire\",\"moment\":\"Stop\",\"event\":{}}\n";
    let mut latencies = Vec::with_capacity(edits);
    for n in 1..=edits {
        let expected = format!("[\"v{n}\"]");
        let started = write_settings(&config, &version(n));
        let deadline = started + Duration::from_secs(5);
        loop {
            if client.fire(request).contains(&expected) {
                latencies.push(started.elapsed());
                break;
            }
            assert!(Instant::now() < deadline, "edit {n} not seen within 5 s");
        }
    }
    latencies
}

/// Writes a settings file (mode 0644) the way editors save: a new file renamed over the old. Returns the
/// moment of the rename.
fn write_settings(path: &Path, text: &str) -> Instant {
    let temp = path.with_extension("toml.swp");
    std::fs::write(&temp, text).expect("write a settings file");
    std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(0o644)).expect("chmod 0644");
    std::fs::rename(&temp, path).expect("rename a settings file over");
    Instant::now()
}

/// Whether this hookd accepts the `worker` key, as `hookd check` says.
enum Support {
    /// Yes: the settings file that `check` accepted.
    Yes(PathBuf),
    /// `check` exited 1: the key is not known.
    No,
    /// Anything else, and why.
    Unknown(String),
}

/// Rows Lw and Ll: what a live hook's answer costs a fire beside a worker hook's. One daemon holds a
/// worker hook (`worker.py`, answering `{}` to each event line) on one tool and a live hook, hung by a
/// client thread of this process that answers each call with nothing to say as soon as it reads it, on
/// another; a client fires at each in turns, ABBA. Both hooks say nothing: what is measured is the way
/// to the hook and back (a pipe to a process, against the socket to a client), and the reading.
fn live_rows(table: &mut Table, dir: &Path, rounds: usize) {
    const WORKER_TOOL: &str = "WorkerTool";
    const LIVE_TOOL: &str = "LiveTool";
    std::fs::create_dir_all(dir).expect("create the live folder");
    let python = if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    };
    let worker = dir.join("worker.py");
    std::fs::write(
        &worker,
        "import sys\n\
         while True:\n    \
             line = sys.stdin.readline()\n    \
             if not line:\n        break\n    \
             sys.stdout.write('{}\\n')\n    \
             sys.stdout.flush()\n",
    )
    .expect("write worker.py");
    let config = dir.join("hooks.toml");
    write_settings(
        &config,
        &format!(
            "[[hooks.PreToolUse]]\nname = \"w\"\nmatcher = \"{WORKER_TOOL}\"\nworker = [\"{python}\", \"{}\"]\n",
            worker.display()
        ),
    );
    let daemon = Daemon::start(&config, dir.join("run/hookd.sock"));
    let mut client = daemon.connect();

    // The live client: hangs its hook, then answers every call at once, until the daemon closes.
    let mut live = daemon.connect();
    let attached = live
        .send(&format!(
            "{{\"op\":\"attach\",\"id\":1,\"client\":\"bench\",\"hooks\":[{{\"name\":\"l\",\"moment\":\"PreToolUse\",\"matcher\":\"{LIVE_TOOL}\"}}]}}\n"
        ))
        .to_string();
    if !attached.contains("\"attached\":[\"l\"]") {
        table.text_row(
            "Lw, Ll",
            "a live hook beside a worker hook",
            &format!("not measured: attach answered {}", attached.trim()),
        );
        return;
    }
    let answering = std::thread::spawn(move || {
        let Client {
            mut writer,
            mut reader,
            mut line,
        } = live;
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            // `{"op":"call","call":N,...`: the number, read as any client reads it.
            let Some(number) = line
                .strip_prefix("{\"op\":\"call\",\"call\":")
                .and_then(|rest| rest.split(',').next())
            else {
                continue;
            };
            let answer = format!("{{\"op\":\"answer\",\"call\":{number}}}\n");
            if writer.write_all(answer.as_bytes()).is_err() {
                return;
            }
        }
    });

    let worker_request = fire_request(WORKER_TOOL);
    let live_request = fire_request(LIVE_TOOL);
    // The first fires start the worker; both must answer as measured.
    for _ in 0..200 {
        client.fire(&worker_request);
        client.fire(&live_request);
    }
    expect_hooks(client.fire(&worker_request), &["w"]);
    expect_hooks(client.fire(&live_request), &["l"]);
    let mut samples: [Vec<Duration>; 2] = Default::default();
    for round in 0..rounds {
        let order = if round % 2 == 0 {
            [0, 1, 1, 0]
        } else {
            [1, 0, 0, 1]
        };
        for which in order {
            let request = if which == 0 {
                &worker_request
            } else {
                &live_request
            };
            for _ in 0..BATCH {
                samples[which].push(timed(|| {
                    client.fire(request);
                }));
            }
        }
    }
    let [mut worker_samples, mut live_samples] = samples;
    let worker = Summary::of(&mut worker_samples);
    let live = Summary::of(&mut live_samples);
    let beyond = live.p50.saturating_sub(worker.p50);
    table.row(
        "Lw",
        &format!(
            "fire, one `worker = [\"python3\", \"worker.py\"]` hook answering `{{}}` ({} samples)",
            worker.count
        ),
        &worker,
        "1.00 (baseline of Ll)".into(),
        None,
    );
    table.row(
        "Ll",
        &format!(
            "fire, one live hook whose client answers at once ({} samples; {} beyond Lw at p50)",
            live.count,
            duration(beyond)
        ),
        &live,
        format!("{:.2} x Lw", ratio(live.p50, worker.p50)),
        Some((
            "p50 under 100 us beyond Lw".into(),
            beyond < Duration::from_micros(100),
        )),
    );
    drop(daemon);
    let _ = answering.join();
}

/// Writes `worker.py` and `hook.py` into `dir`, and asks `hookd check` about a settings file with one
/// worker hook.
fn worker_support(dir: &Path, python: &str) -> Support {
    std::fs::create_dir_all(dir).expect("create the worker folder");
    let worker = dir.join("worker.py");
    std::fs::write(
        &worker,
        "import sys\n\
         while True:\n    \
             line = sys.stdin.readline()\n    \
             if not line:\n        break\n    \
             sys.stdout.write('{}\\n')\n    \
             sys.stdout.flush()\n",
    )
    .expect("write worker.py");
    // Row V's worker: it allows every call and rewrites its command, the new answers' whole path.
    std::fs::write(
        dir.join("rewriter.py"),
        "import sys\n\
         while True:\n    \
             line = sys.stdin.readline()\n    \
             if not line:\n        break\n    \
             sys.stdout.write('{\"allow\": \"read-only\", \"input\": {\"command\": \"ls -la --color=never\"}}\\n')\n    \
             sys.stdout.flush()\n",
    )
    .expect("write rewriter.py");
    std::fs::write(
        dir.join("hook.py"),
        "import sys\nsys.stdin.read()\nprint('{}')\n",
    )
    .expect("write hook.py");
    let config = dir.join("hooks.toml");
    write_settings(
        &config,
        &format!(
            "[http]\nlisten = \"127.0.0.1:0\"\n\n[[hooks.PreToolUse]]\nname = \"w\"\nmatcher = \"{ARGV_TOOL}\"\nworker = [\"{python}\", \"{}\"]\n\n\
             [[hooks.PreToolUse]]\nname = \"rewriter\"\nmatcher = \"{REWRITE_TOOL}\"\nworker = [\"{python}\", \"{}\"]\n",
            worker.display(),
            dir.join("rewriter.py").display()
        ),
    );
    let mut check = Command::new(common::BIN);
    check.args(["check", "--config"]).arg(&config);
    common::keep_home(&mut check, dir);
    let output = check.output().expect("run hookd check");
    match output.status.code() {
        Some(0) => Support::Yes(config),
        Some(1) => Support::No,
        _ => Support::Unknown(format!(
            "{}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )),
    }
}

/// Rows O and P: a fire to a worker hook (`worker.py`, started once, answering `{}` to each event line)
/// against spawning `python3 hook.py` for each event directly, as an agent does without hookd. Target: the
/// worker at least 100 times faster at p50.
///
/// Called only when [`worker_support`] says yes; `config` is the settings file `hookd check` accepted.
fn worker_rows(table: &mut Table, dir: &Path, config: &Path, python: &str, rounds: usize) {
    let daemon = Daemon::start(config, dir.join("run/hookd.sock"));
    let mut client = daemon.connect();
    let request = fire_request(ARGV_TOOL);
    let event_line = format!("{}\n", event(ARGV_TOOL));
    let hook_py = dir.join("hook.py");
    let direct_python = || {
        let out = spawn_directly(Command::new(python).arg(&hook_py), &event_line);
        assert_eq!(out, b"{}\n", "hook.py said something else");
    };

    // The first fires start the worker; a worker that does not answer as expected is reported, not timed.
    for _ in 0..5 {
        direct_python();
    }
    for _ in 0..100 {
        client.send(&request);
    }
    let response = client.send(&request).to_string();
    let answered = serde_json::from_str::<serde_json::Value>(&response).is_ok_and(|v| {
        v["ok"] == true && v["hooks"][0]["name"] == "w" && v["hooks"][0]["outcome"] == "nothing"
    });
    if !answered {
        table.text_row(
            "O, P",
            "a worker hook beside spawning python per event",
            &format!(
                "not measured: the worker hook's fire answered {}",
                response.trim()
            ),
        );
        return;
    }

    let rewrite_request = fire_request(REWRITE_TOOL);
    for _ in 0..100 {
        client.send(&rewrite_request);
    }
    let rewritten = serde_json::from_str::<serde_json::Value>(client.send(&rewrite_request))
        .is_ok_and(|v| {
            v["permission"] == "allow" && v["input"]["command"] == "ls -la --color=never"
        });
    let mut http = HttpClient::connect(&mut client);
    let input = hook_input(ARGV_TOOL);
    for _ in 0..100 {
        http.post(&input);
    }
    let (mut direct, mut worker, mut http_worker) = (Vec::new(), Vec::new(), Vec::new());
    let mut rewriting = Vec::new();
    for _ in 0..rounds {
        for _ in 0..BATCH / 10 {
            direct.push(timed(direct_python));
        }
        for _ in 0..BATCH {
            worker.push(timed(|| {
                client.fire(&request);
            }));
        }
        for _ in 0..BATCH {
            http_worker.push(timed(|| http.post(&input)));
        }
        if rewritten {
            for _ in 0..BATCH {
                rewriting.push(timed(|| {
                    client.fire(&rewrite_request);
                }));
            }
        }
    }
    let direct = Summary::of(&mut direct);
    let worker = Summary::of(&mut worker);
    let faster = ratio(direct.p50, worker.p50);
    table.row(
        "O",
        &format!(
            "spawn `python3 hook.py` directly per event (as A; {} samples)",
            direct.count
        ),
        &direct,
        "1.00 (baseline of P)".into(),
        None,
    );
    table.row(
        "P",
        &format!(
            "fire, one `worker = [\"python3\", \"worker.py\"]` hook ({} samples)",
            worker.count
        ),
        &worker,
        format!("O is {faster:.0} x P"),
        Some(("O at least 100 x P".into(), faster >= 100.0)),
    );
    if rewritten {
        let rewriting = Summary::of(&mut rewriting);
        table.row(
            "V",
            &format!(
                "fire, one worker hook that allows and rewrites the input ({} samples)",
                rewriting.count
            ),
            &rewriting,
            format!("{:.2} x P", ratio(rewriting.p50, worker.p50)),
            None,
        );
    } else {
        table.text_row(
            "V",
            "fire, one worker hook that allows and rewrites the input",
            "not measured: the rewriting worker did not answer with an allow and the rewrite",
        );
    }
    let http_worker = Summary::of(&mut http_worker);
    table.row(
        "S",
        &format!(
            "http hook decision, the worker hook of P ({} samples)",
            http_worker.count
        ),
        &http_worker,
        format!("{:.2} x P", ratio(http_worker.p50, worker.p50)),
        Some((
            "p50 < 0.5 ms".into(),
            http_worker.p50 < Duration::from_micros(500),
        )),
    );
}

/// Rows Y and Z, on a daemon of their own in `dir`: the example guard (`config/deny-destructive.py`,
/// copied) deciding a shell command it lets through, a fire each, as a one-shot `command` hook (Python
/// started per call) and as the example settings run it, a `worker`. Target: the worker's decision
/// under a millisecond at p50, a fire's round trip included.
fn guard_rows(table: &mut Table, dir: &Path, rounds: usize) {
    std::fs::create_dir_all(dir).expect("create the guard folder");
    let guard = dir.join("deny-destructive.py");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("config/deny-destructive.py"),
        &guard,
    )
    .expect("copy the example guard");
    std::fs::set_permissions(&guard, std::fs::Permissions::from_mode(0o755)).expect("chmod 0755");
    let config = dir.join("hooks.toml");
    // The worker's block as config/hooks.toml has it; the command hook on another tool name.
    write_settings(
        &config,
        "[[hooks.PreToolUse]]\nname = \"guard-worker\"\nmatcher = \"Bash\"\n\
         worker = [\"./deny-destructive.py\", \"--worker\"]\ntimeout = 5\non_failure = \"refuse\"\n\n\
         [[hooks.PreToolUse]]\nname = \"guard-once\"\nmatcher = \"Task\"\n\
         command = '\"$HOOKD_CONFIG_DIR/deny-destructive.py\"'\ntimeout = 5\non_failure = \"refuse\"\n",
    );
    let daemon = Daemon::start(&config, dir.join("run/hookd.sock"));
    let mut client = daemon.connect();
    // The agent's project, beside the settings' folder: inside it, hookd's guard of itself
    // refuses the command (it would give a path in the settings' folder to `cargo`).
    let project = dir.with_file_name("guard-project");
    std::fs::create_dir_all(project.join("src")).expect("create the guard's project folder");
    let fire = |tool: &str, command: &str| {
        format!(
            "{{\"op\":\"fire\",\"moment\":\"PreToolUse\",\"event\":{}}}\n",
            serde_json::json!({"session_id": "bench", "cwd": project, "tool_name": tool,
                               "tool_input": {"command": command}})
        )
    };
    // A command an agent runs every few seconds, and one the guard must refuse.
    let everyday = "cd src && cargo test --quiet 2>&1 | tail -n 20; git status --short";
    let worker_fire = fire("Bash", everyday);
    let once_fire = fire("Task", everyday);
    for _ in 0..5 {
        client.fire(&once_fire);
    }
    for _ in 0..100 {
        client.fire(&worker_fire);
    }
    expect_hooks(client.fire(&worker_fire), &["guard-worker"]);
    expect_hooks(client.fire(&once_fire), &["guard-once"]);
    for tool in ["Bash", "Task"] {
        let refused = client.fire(&fire(tool, "rm -rf ~")).to_string();
        assert!(
            refused.contains("\"refused\":true") && refused.contains("your home folder"),
            "the guard did not refuse rm -rf ~ as {tool}: {refused}"
        );
    }
    let (mut once, mut worker) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        for _ in 0..BATCH / 10 {
            once.push(timed(|| {
                client.fire(&once_fire);
            }));
        }
        for _ in 0..BATCH {
            worker.push(timed(|| {
                client.fire(&worker_fire);
            }));
        }
    }
    let once = Summary::of(&mut once);
    let worker = Summary::of(&mut worker);
    table.row(
        "Y",
        &format!(
            "fire, the example guard as a one-shot `command` hook (Python per call; {} samples)",
            once.count
        ),
        &once,
        "1.00 (baseline of Z)".into(),
        None,
    );
    table.row(
        "Z",
        &format!(
            "fire, the example guard as the example settings run it, a `worker` ({} samples)",
            worker.count
        ),
        &worker,
        format!("Y is {:.0} x Z", ratio(once.p50, worker.p50)),
        Some(("p50 < 1 ms".into(), worker.p50 < Duration::from_millis(1))),
    );
}

/// The settings of the guard's rows: hooks as a user has them (a script beside the settings, which the
/// guard then keeps too, and commands), none of them matching `Bash`, so that a Bash call is a no-hook
/// fire and what it costs beyond E is the guard's judging.
const PROTECT_SETTINGS: &str = r#"[defaults]
shell = "/bin/sh"

[[hooks.PreToolUse]]
name = "check-write"
matcher = "Write|Edit|MultiEdit"
argv = ["./check-write.sh"]

[[hooks.PreToolUse]]
name = "command-true"
matcher = "Task"
command = "true"

[[hooks.Stop]]
argv = ["/bin/true"]
"#;

/// The Bash commands of the guard's rows, by the letter after their row's: one an agent runs every few
/// seconds (`cargo` is no program the guard knows, so each of its words is looked up as a path it may
/// name; `git status` only reads), and one that writes a file in the project (the redirection's path is
/// made absolute against the call's folder and its links followed, then set against every guarded path).
const PROTECT_COMMANDS: [(&str, &str); 2] =
    [("c", "cargo test && git status"), ("w", "echo x > out.txt")];

/// Rows El and E1l: what the settings' layers cost a fire that matches no hook. El: a daemon with a
/// managed layer (`--managed`, a hook at Stop), the user's file, and the fire's `cwd` inside a
/// repository whose `.hookd/hooks.toml` holds a hook at Stop (found, read and remembered once), against
/// E1l: the user's file alone and a `cwd` in no repository. Two daemons fired in turns ABBA; the target
/// is El within 5 % of E1l (the median of the rounds' ratios). The managed layer must be root's: run
/// as root (`cargo bench --bench fire -- layers`).
fn layers_rows(table: &mut Table, dir: &Path, rounds: usize) {
    let start = |name: &str, managed: Option<&Path>| -> Daemon {
        let folder = dir.join(name);
        std::fs::create_dir_all(&folder).expect("create a daemon's folder");
        let config = folder.join("hooks.toml");
        write_settings(&config, SETTINGS);
        let socket = folder.join("run/hookd.sock");
        let mut command = match managed {
            Some(managed) => common::serve_command_managed_at(&config, &socket, managed),
            None => common::serve_command_at(&config, &socket),
        };
        command.env("HOOKD_LOG", "warn");
        let child = common::ChildGuard(command.spawn().expect("start hookd"));
        common::wait_until(START_DEADLINE, "hookd to listen on its socket", || {
            UnixStream::connect(&socket).is_ok()
        });
        Daemon { child, socket }
    };
    let managed = dir.join("managed");
    std::fs::create_dir_all(&managed).expect("the managed folder");
    write_settings(
        &managed.join("managed.toml"),
        "[[hooks.Stop]]\nname = \"team\"\ncommand = \"true\"\n",
    );
    let repo = dir.join("repo");
    std::fs::create_dir_all(repo.join(".git")).expect("a repository");
    std::fs::create_dir_all(repo.join(".hookd")).expect("its .hookd");
    write_settings(
        &repo.join(".hookd/hooks.toml"),
        "[[hooks.Stop]]\nname = \"tests\"\ncommand = \"true\"\n",
    );
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("a folder in no repository");
    let request = |cwd: &Path| {
        format!(
            "{{\"op\":\"fire\",\"moment\":\"PreToolUse\",\"event\":{{\"session_id\":\"bench\",\"cwd\":\"{}\",\"tool_name\":\"{NO_HOOK_TOOL}\",\"tool_input\":{{}}}}}}\n",
            cwd.display()
        )
    };
    let three = start("three", Some(&managed));
    let one = start("one", None);
    let (mut three_client, mut one_client) = (three.connect(), one.connect());
    let (three_request, one_request) = (request(&repo), request(&elsewhere));
    let status = three_client.send("{\"op\":\"status\"}\n").to_string();
    assert!(
        status.contains("managed.toml"),
        "the managed layer is not loaded (run as root: it must be root's): {status}"
    );
    for _ in 0..200 {
        three_client.fire(&three_request);
        one_client.fire(&one_request);
    }
    let status = three_client.send("{\"op\":\"status\"}\n").to_string();
    assert!(
        status.contains(&repo.display().to_string()),
        "the repository's hooks are not loaded: {status}"
    );
    let mut samples: [Vec<Duration>; 2] = Default::default();
    let mut round_ratios = Vec::new();
    for round in 0..rounds {
        let order = if round % 2 == 0 {
            [0, 1, 1, 0]
        } else {
            [1, 0, 0, 1]
        };
        let mut this_round: [Vec<Duration>; 2] = Default::default();
        for which in order {
            for _ in 0..BATCH * 2 {
                this_round[which].push(if which == 0 {
                    timed(|| {
                        three_client.fire(&three_request);
                    })
                } else {
                    timed(|| {
                        one_client.fire(&one_request);
                    })
                });
            }
        }
        round_ratios.push(ratio(
            Summary::of(&mut this_round[0]).p50,
            Summary::of(&mut this_round[1]).p50,
        ));
        for which in 0..2 {
            samples[which].append(&mut this_round[which]);
        }
    }
    drop((three, one));
    round_ratios.sort_by(f64::total_cmp);
    let median = round_ratios[round_ratios.len() / 2];
    let one_summary = Summary::of(&mut samples[1]);
    table.row(
        "El",
        "fire, no matching hook, three layers loaded (managed, user, the cwd's repository)",
        &Summary::of(&mut samples[0]),
        format!(
            "{median:.2} x E1l (median of {} rounds)",
            round_ratios.len()
        ),
        Some(("p50 within 5 % of E1l".into(), median <= 1.05)),
    );
    table.row(
        "E1l",
        "fire, no matching hook, the user's file alone, a cwd in no repository",
        &one_summary,
        "-".into(),
        None,
    );
}

/// Rows Eo and E0o: what exporting the journal to a collector that is down costs a fire that matches
/// no hook. The exporter reads the journal back from its files on a thread of its own, so the target
/// is nothing: Eo within 5 % of E0o.
fn export_rows(table: &mut Table, dir: &Path, rounds: usize) {
    // A port nothing listens on: the collector is down, and stays down.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a loopback port")
        .port();
    let exported =
        format!("{SETTINGS}\n[export.otlp]\nendpoint = \"http://127.0.0.1:{port}/v1/logs\"\n");
    let start = |name: &str, text: &str| -> (Daemon, PathBuf) {
        let folder = dir.join(name);
        std::fs::create_dir_all(&folder).expect("create a daemon's folder");
        let config = folder.join("hooks.toml");
        write_settings(&config, text);
        (
            Daemon::start(&config, folder.join("run/hookd.sock")),
            config,
        )
    };
    let (on, on_config) = start("on", &exported);
    let (off, off_config) = start("off", SETTINGS);
    let (mut on_client, mut off_client) = (on.connect(), off.connect());
    let request = fire_request(NO_HOOK_TOOL);
    let retrying = |client: &mut Client| {
        common::wait_until(
            START_DEADLINE,
            "the exporter to find the collector down",
            || {
                client.fire(&request);
                client
                    .send("{\"op\":\"status\"}\n")
                    .contains("\"state\":\"retrying\"")
            },
        );
    };
    retrying(&mut on_client);
    for _ in 0..200 {
        on_client.fire(&request);
        off_client.fire(&request);
    }
    let mut samples: [Vec<Duration>; 2] = Default::default();
    let mut round_ratios = Vec::new();
    let (mut exporting, mut plain) = (on_config.clone(), off_config.clone());
    for round in 0..rounds {
        if rounds > 1 && round == rounds / 2 {
            // Halfway the daemons swap roles, each reloaded: what one process pays for its place on
            // the machine falls on both sides alike.
            write_settings(&exporting, SETTINGS);
            write_settings(&plain, &exported);
            for client in [&mut on_client, &mut off_client] {
                let reloaded = client.send("{\"op\":\"reload\"}\n").to_string();
                assert!(reloaded.contains("\"ok\":true"), "reload: {reloaded}");
            }
            std::mem::swap(&mut on_client, &mut off_client);
            std::mem::swap(&mut exporting, &mut plain);
            retrying(&mut on_client);
        }
        let order = if round % 2 == 0 {
            [0, 1, 1, 0]
        } else {
            [1, 0, 0, 1]
        };
        let mut this_round: [Vec<Duration>; 2] = Default::default();
        for which in order {
            let client = if which == 0 {
                &mut on_client
            } else {
                &mut off_client
            };
            for _ in 0..BATCH * 2 {
                this_round[which].push(timed(|| {
                    client.fire(&request);
                }));
            }
        }
        round_ratios.push(ratio(
            Summary::of(&mut this_round[0]).p50,
            Summary::of(&mut this_round[1]).p50,
        ));
        for which in 0..2 {
            samples[which].append(&mut this_round[which]);
        }
    }
    // Still down, and still trying: the rows measured what they say.
    let status = on_client.send("{\"op\":\"status\"}\n").to_string();
    assert!(
        status.contains("\"state\":\"retrying\"") && status.contains("cannot connect"),
        "the exporter is not retrying against a collector that is down: {status}"
    );
    drop((on, off));
    round_ratios.sort_by(f64::total_cmp);
    let median = round_ratios[round_ratios.len() / 2];
    let off_summary = Summary::of(&mut samples[1]);
    table.row(
        "Eo",
        "fire, no matching hook, journal exported to a collector that is down",
        &Summary::of(&mut samples[0]),
        format!(
            "{median:.2} x E0o (median of {} rounds)",
            round_ratios.len()
        ),
        Some(("p50 within 5 % of E0o".into(), median <= 1.05)),
    );
    table.row(
        "E0o",
        "fire, no matching hook, no export",
        &off_summary,
        "-".into(),
        None,
    );
}

/// Rows Ec to Jw ("the protection check costs a no-hook fire under 5 %"): hookd's guard of
/// itself (`engine::protect`) judging a Bash call that matches no hook, for each of
/// [`PROTECT_COMMANDS`]:
/// - Ec against E0c (and Ew against E0w): the fire through a daemon of its own with the guard on (as by
///   default) against one on the same settings with `[protect] enabled = false`, in turns ABBA within
///   every round (batches of `2 x BATCH` fires, the order flipped each round), so that a busy machine's
///   drift hits both alike, and the two daemons' roles swapped halfway (each reloaded), so that what
///   one process pays for its place on the CPUs falls on both sides; the ratio of the pooled p50s, and
///   the median of the rounds' own ratios;
/// - Uc against U0c (Uw, U0w): the same decision by the engine held in this process, guard on and off;
/// - Jc, Jw: the guard's judge alone (`Shield::judge`) on the same call, against E0c's p50.
fn protect_rows(table: &mut Table, dir: &Path, rounds: usize) {
    let project = dir.join("project");
    std::fs::create_dir_all(&project).expect("create the project folder");
    let start = |name: &str, extra: &str| -> (Daemon, PathBuf) {
        let folder = dir.join(name);
        std::fs::create_dir_all(&folder).expect("create a daemon's folder");
        let script = folder.join("check-write.sh");
        std::fs::write(&script, "#!/bin/sh\nexit 0\n").expect("write the hook's script");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            .expect("chmod 0755");
        let config = folder.join("hooks.toml");
        write_settings(&config, &format!("{PROTECT_SETTINGS}{extra}"));
        (
            Daemon::start(&config, folder.join("run/hookd.sock")),
            config,
        )
    };
    let (on, on_config) = start("on", "");
    let (off, off_config) = start("off", "\n[protect]\nenabled = false\n");
    let (mut on_client, mut off_client) = (on.connect(), off.connect());
    let event = |command: &str| {
        serde_json::json!({"session_id": "bench", "cwd": project, "tool_name": "Bash",
                           "tool_input": {"command": command}})
    };
    let fire = |command: &str| {
        format!(
            "{{\"op\":\"fire\",\"moment\":\"PreToolUse\",\"event\":{}}}\n",
            event(command)
        )
    };

    // The guard is on in the one and off in the other: a write to each one's own settings.
    let refused = on_client
        .fire(&fire(&format!("echo x > {}", on_config.display())))
        .to_string();
    assert!(
        refused.contains("\"refused\":true") && refused.contains("hookd protects itself"),
        "the guard did not refuse a write to its settings: {refused}"
    );
    let let_through = off_client
        .fire(&fire(&format!("echo x > {}", off_config.display())))
        .to_string();
    assert!(
        !let_through.contains("\"refused\":true"),
        "[protect] enabled = false refused: {let_through}"
    );

    let requests: Vec<String> = PROTECT_COMMANDS.iter().map(|(_, c)| fire(c)).collect();
    for request in &requests {
        for _ in 0..200 {
            on_client.fire(request);
            off_client.fire(request);
        }
        expect_hooks(on_client.fire(request), &[]);
        expect_hooks(off_client.fire(request), &[]);
    }

    // The engine in this process, guard on and off, guarding the places of the daemon `on`.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let settings_of = |config: &Path| {
        let text = std::fs::read_to_string(config).expect("read the settings");
        hookd::settings::Settings::parse(config, "hooks.toml", &text).expect("the bench's settings")
    };
    let home = on.socket.parent().unwrap().join("home");
    let places = hookd::engine::protect::Places {
        socket: Some(on.socket.clone()),
        state_dir: Some(common::state_home_for(&on.socket).join("hookd")),
        units_dir: Some(home.join(".config/systemd/user")),
        set_up_files: Vec::new(),
        // As the daemon finds them (`setup::agent_files`): each agent's settings under the home folder.
        agent_files: [
            ("Claude Code", ".claude/settings.json"),
            ("Codex", ".codex/hooks.json"),
            ("Gemini CLI", ".gemini/settings.json"),
            ("Qwen Code", ".qwen/settings.json"),
            ("Copilot CLI", ".copilot/settings.json"),
        ]
        .iter()
        .map(|(agent, file)| (agent.to_string(), home.join(file)))
        .collect(),
        programs: vec![common::BIN.into(), common::RELAY_BIN.into()],
        daemon_pid: Some(on.pid() as i32),
        daemon_command_line: format!("{} serve --config {}", common::BIN, on_config.display()),
        vars: vec![("HOME".into(), home.to_string_lossy().into_owned())],
        home,
    };
    let shield = hookd::engine::protect::Shield::new(&settings_of(&on_config), &places);
    let engines = runtime.block_on(async {
        [&on_config, &off_config].map(|config| {
            let engine = hookd::engine::Engine::new(settings_of(config));
            engine.guard_places(places.clone());
            engine
        })
    });
    let decide = |engine: &std::sync::Arc<hookd::engine::Engine>,
                  fields: &serde_json::Map<String, serde_json::Value>| {
        let fire = hookd::engine::Fire {
            moment: "PreToolUse".into(),
            agent: None,
            event: fields.clone().into(),
        };
        runtime
            .block_on(engine.decide(fire, &engine.abandoned().child_token()))
            .expect("decided")
    };
    let events: Vec<serde_json::Map<String, serde_json::Value>> = PROTECT_COMMANDS
        .iter()
        .map(|(_, c)| match event(c) {
            serde_json::Value::Object(fields) => fields,
            _ => unreachable!("an object"),
        })
        .collect();
    let settings_write = match event(&format!("echo x > {}", on_config.display())) {
        serde_json::Value::Object(fields) => fields,
        _ => unreachable!("an object"),
    };
    assert!(shield.judge("PreToolUse", &settings_write).is_some());
    for fields in &events {
        assert_eq!(shield.judge("PreToolUse", fields), None);
        for engine in &engines {
            for _ in 0..200 {
                decide(engine, fields);
            }
            assert!(decide(engine, fields).hooks.is_empty());
        }
    }

    /// One command's samples: over the socket, in this process, the judge alone; guard on, then off.
    #[derive(Default)]
    struct Pair {
        fire: [Vec<Duration>; 2],
        fire_rounds: Vec<f64>,
        engine: [Vec<Duration>; 2],
        engine_rounds: Vec<f64>,
        judge: Vec<Duration>,
        /// The shell reader alone (`shell::read`), the first part of the judge's work.
        read: Vec<Duration>,
    }
    // The reader's variables as the guard gives them (`Shield::new`).
    let mut env = hookd::shell::Env {
        home: places.home.to_str().map(str::to_string),
        ..hookd::shell::Env::default()
    };
    env.vars.extend(places.vars.iter().cloned());
    let mut pairs: Vec<Pair> = PROTECT_COMMANDS.iter().map(|_| Pair::default()).collect();
    let (mut guarded_config, mut unguarded_config) = (on_config.clone(), off_config.clone());
    for round in 0..rounds {
        if rounds > 1 && round == rounds / 2 {
            // Halfway, the two daemons swap roles (the guard turned off in the one and on in the
            // other, each reloaded): what one process pays for its own place on the machine's two
            // vCPUs, which moved the ratio from 0.35 to 2.2 between runs, falls on both sides alike.
            write_settings(
                &guarded_config,
                &format!("{PROTECT_SETTINGS}\n[protect]\nenabled = false\n"),
            );
            write_settings(&unguarded_config, PROTECT_SETTINGS);
            for client in [&mut on_client, &mut off_client] {
                let reloaded = client.send("{\"op\":\"reload\"}\n").to_string();
                assert!(reloaded.contains("\"ok\":true"), "reload: {reloaded}");
            }
            std::mem::swap(&mut on_client, &mut off_client);
            std::mem::swap(&mut guarded_config, &mut unguarded_config);
            let refused = on_client
                .fire(&fire(&format!("echo x > {}", guarded_config.display())))
                .to_string();
            assert!(
                refused.contains("hookd protects itself"),
                "the guard is not on after the swap: {refused}"
            );
            let let_through = off_client
                .fire(&fire(&format!("echo x > {}", unguarded_config.display())))
                .to_string();
            assert!(
                !let_through.contains("\"refused\":true"),
                "the guard is not off after the swap: {let_through}"
            );
        }
        // ABBA, and BAAB the next round.
        let order = if round % 2 == 0 {
            [0, 1, 1, 0]
        } else {
            [1, 0, 0, 1]
        };
        for (((request, fields), pair), (_, command)) in requests
            .iter()
            .zip(&events)
            .zip(&mut pairs)
            .zip(PROTECT_COMMANDS)
        {
            let mut fires: [Vec<Duration>; 2] = Default::default();
            let mut decisions: [Vec<Duration>; 2] = Default::default();
            for which in order {
                let client = if which == 0 {
                    &mut on_client
                } else {
                    &mut off_client
                };
                for _ in 0..BATCH * 2 {
                    fires[which].push(timed(|| {
                        client.fire(request);
                    }));
                }
            }
            for which in order {
                for _ in 0..BATCH * 2 {
                    decisions[which].push(timed(|| decide(&engines[which], fields)));
                }
            }
            for _ in 0..BATCH * 2 {
                pair.judge
                    .push(timed(|| shield.judge("PreToolUse", fields)));
            }
            for _ in 0..BATCH * 2 {
                pair.read.push(timed(|| hookd::shell::read(command, &env)));
            }
            pair.fire_rounds.push(ratio(
                Summary::of(&mut fires[0]).p50,
                Summary::of(&mut fires[1]).p50,
            ));
            pair.engine_rounds.push(ratio(
                Summary::of(&mut decisions[0]).p50,
                Summary::of(&mut decisions[1]).p50,
            ));
            for which in 0..2 {
                pair.fire[which].append(&mut fires[which]);
                pair.engine[which].append(&mut decisions[which]);
            }
        }
    }
    drop((on, off));

    let median = |values: &mut Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    for ((letter, command), pair) in PROTECT_COMMANDS.iter().zip(&mut pairs) {
        let [fire_on, fire_off] = &mut pair.fire;
        let (fire_on, fire_off) = (Summary::of(fire_on), Summary::of(fire_off));
        let fire_ratio = ratio(fire_on.p50, fire_off.p50);
        let off_id = format!("E0{letter}");
        table.row(
            &off_id,
            &format!(
                "fire, Bash `{command}`, no matching hook, `[protect] enabled = false` (two daemons, the roles swapped halfway; {} samples)",
                fire_off.count
            ),
            &fire_off,
            format!("1.00 (baseline of E{letter})"),
            None,
        );
        table.row(
            &format!("E{letter}"),
            &format!(
                "the same with the guard of itself judging (on, as by default; fired in turns with {off_id}, the other daemon)"
            ),
            &fire_on,
            format!(
                "{fire_ratio:.3} x {off_id}; median of {} rounds' ratios {:.3}",
                pair.fire_rounds.len(),
                median(&mut pair.fire_rounds)
            ),
            Some((format!("p50 within 5 % of {off_id}"), fire_ratio <= 1.05)),
        );
        let [engine_on, engine_off] = &mut pair.engine;
        let (engine_on, engine_off) = (Summary::of(engine_on), Summary::of(engine_off));
        table.row(
            &format!("U0{letter}"),
            &format!("engine in this process, Bash `{command}`, no matching hook, guard off"),
            &engine_off,
            format!("1.00 (baseline of U{letter})"),
            None,
        );
        table.row(
            &format!("U{letter}"),
            "the same, guard on (in turns with the guard off)",
            &engine_on,
            format!(
                "{:.2} x U0{letter} (+{:.1} us); median of rounds' ratios {:.2}",
                ratio(engine_on.p50, engine_off.p50),
                engine_on.p50.saturating_sub(engine_off.p50).as_secs_f64() * 1e6,
                median(&mut pair.engine_rounds)
            ),
            None,
        );
        let judge = Summary::of(&mut pair.judge);
        let read = Summary::of(&mut pair.read);
        table.row(
            &format!("J{letter}"),
            &format!("the guard's judge alone (`Shield::judge`), Bash `{command}`"),
            &judge,
            format!(
                "{:.1} % of {off_id}; of it the shell reader (`shell::read`) {} at p50",
                ratio(judge.p50, fire_off.p50) * 100.0,
                duration(read.p50)
            ),
            None,
        );
    }
}

/// The settings of the built-in guard's rows: the guard hung as the example settings hang it (no
/// matcher: it judges every tool), and a `Stop` hook, which [`BARE_SETTINGS`] has too, so that the two
/// daemons differ by the guard alone.
const GUARDED_SETTINGS: &str = r#"[defaults]
shell = "/bin/sh"

[[hooks.PreToolUse]]
name = "guard"
builtin = "guard"
on_failure = "refuse"

[[hooks.Stop]]
argv = ["/bin/true"]
"#;

/// [`GUARDED_SETTINGS`] without the guard: a PreToolUse call matches no hook.
const BARE_SETTINGS: &str = r#"[defaults]
shell = "/bin/sh"

[[hooks.Stop]]
argv = ["/bin/true"]
"#;

/// The command an agent runs every few seconds, timed through the engine, the socket and the relay.
const EVERYDAY_COMMAND: &str = "cargo test && git status";

/// A long command line as agents write them (2.3 KB): a script of pipes, `$(...)`, `<(...)`, a loop, a
/// here-document, `sh -c`, that harms nothing.
const LONG_COMMAND: &str = r##"set -euo pipefail
cd "$(git rev-parse --show-toplevel)" && export RUST_BACKTRACE=1 CARGO_TERM_COLOR=never
base=$(git merge-base origin/main HEAD 2>/dev/null || git rev-list --max-parents=0 HEAD | tail -n 1)
changed=$(git diff --name-only "$base"...HEAD -- '*.rs' | sed -n 's#^src/\([a-z_]*\)/.*#\1#p' | sort -u | tr '\n' ' ')
echo "modules changed since ${base:0:12}: ${changed:-none}"
for module in $changed; do
  echo "== $module ($(git diff --stat "$base"...HEAD -- "src/$module" | tail -n 1))"
  cargo test --quiet --lib "$module::" 2>&1 | grep -E '^(test result|error(\[E[0-9]+\])?:|warning: unused)' | head -n 20 || true
done
cargo clippy --all-targets --message-format=short -- -D warnings 2>&1 | awk -F: '/^(src|tests)\// {n[$1]++} END {for (f in n) printf "%5d %s\n", n[f], f}' | sort -rn | head -n 15
sh -c 'find src tests -name "*.rs" -newer Cargo.lock -print0 | xargs -0 wc -l | sort -n | tail -n 5'
mkdir -p target/notes && cat > target/notes/summary.md <<'EOF'
# Test summary

Modules changed on this branch, the tests run for each, and clippy's findings by file.
Nothing in this document is run: $(date) and `uname -a` stay words, and so does rm -rf in a note.
EOF
git log --oneline --no-merges -n 30 --format='%h %<(12,trunc)%an %s' "$base"..HEAD | while read -r hash author subject; do
  printf '%s\t%s\t%s\n' "$hash" "$author" "${subject//|/\\|}"
done | column -t -s $'\t' >> target/notes/summary.md
jq -r '.packages[] | "\(.name) \(.version) \(.dependencies | length) deps"' <(cargo metadata --format-version 1 --no-deps) >> target/notes/summary.md
grep -rn --include='*.rs' -E 'TODO|FIXME|XXX' src tests | cut -d: -f1 | uniq -c | sort -rn | head -n 10 | tee -a target/notes/summary.md
for bin in hookd hookd-relay; do
  size=$(stat -c %s "target/release/$bin" 2>/dev/null || echo 0)
  printf '%-12s %8d bytes, built %s\n' "$bin" "$size" "$(date -r "target/release/$bin" +%H:%M 2>/dev/null || echo never)"
done | tee -a target/notes/summary.md
curl -fsS --max-time 5 -o /dev/null -w '%{http_code}\n' https://crates.io/api/v1/crates/serde || echo "crates.io unreachable"
du -sh target/debug target/release 2>/dev/null | sort -h; wc -lc target/notes/summary.md
test -s target/notes/summary.md && echo "summary written: $(wc -l < target/notes/summary.md) lines" || echo "no summary" >&2
"##;

/// One call the guard's judge is timed on alone (rows Jg.): its letter, how the row shows it, the
/// tool and its input, and whether the guard is meant to refuse it.
struct GuardCall {
    letter: &'static str,
    shown: String,
    tool: &'static str,
    input: serde_json::Value,
    refuse: bool,
}

/// The calls of rows Jge to Jgk, in a project folder in `home`.
fn guard_calls(home: &Path, project: &Path) -> Vec<GuardCall> {
    let bash = |command: &str| serde_json::json!({ "command": command });
    let read = |path: PathBuf| serde_json::json!({ "file_path": path });
    vec![
        GuardCall {
            letter: "e",
            shown: format!("Bash `{EVERYDAY_COMMAND}` (everyday)"),
            tool: "Bash",
            input: bash(EVERYDAY_COMMAND),
            refuse: false,
        },
        GuardCall {
            letter: "r",
            shown: "Bash `rm -rf ~` (to refuse)".into(),
            tool: "Bash",
            input: bash("rm -rf ~"),
            refuse: true,
        },
        GuardCall {
            letter: "l",
            shown: format!(
                "Bash, a script of {} lines, {:.1} KB (pipes, `$(...)`, a loop, a here-document, `sh -c`)",
                LONG_COMMAND.lines().count(),
                LONG_COMMAND.len() as f64 / 1000.0
            ),
            tool: "Bash",
            input: bash(LONG_COMMAND),
            refuse: false,
        },
        GuardCall {
            letter: "f",
            shown: "Read `src/main.rs` in the project (a file tool)".into(),
            tool: "Read",
            input: read(project.join("src/main.rs")),
            refuse: false,
        },
        GuardCall {
            letter: "k",
            shown: "Read `~/.ssh/id_rsa` (a file tool, to refuse)".into(),
            tool: "Read",
            input: read(home.join(".ssh/id_rsa")),
            refuse: true,
        },
    ]
}

/// A PreToolUse event of `tool` with `input`, from `cwd`, as a fire carries it.
fn tool_event(cwd: &Path, tool: &str, input: &serde_json::Value) -> serde_json::Value {
    serde_json::json!({"session_id": "bench", "cwd": cwd, "tool_name": tool, "tool_input": input})
}

/// What the guard said, for the table.
fn told(verdict: Option<&hookd::guard::Verdict>) -> String {
    match verdict {
        None => "let through".into(),
        Some(verdict) => format!(
            "{} ({})",
            match verdict.action {
                hookd::guard::Action::Ask => "asked",
                _ => "refused",
            },
            verdict.rule
        ),
    }
}

/// The built-in guard's rows (`builtin = "guard"`, judged in the daemon's own process: no program
/// started), against a target of 0.2 ms a decision and, through the lite relay, less than starting a
/// shell:
/// - Jge, Jgr, Jgl, Jgf, Jgk: the judge alone (`Guard::judge`, the guard as the settings make it by
///   default) on each of [`guard_calls`]: an everyday command, `rm -rf ~`, a long script, a `Read` of a
///   project file and one of a private key; the verdict is shown beside the figures (one other than
///   the one meant is flagged), with what of the judge's time reading the call and its command line
///   takes (`Call::read`, `Call::commands`: the shell reader), before any rule;
/// - Ug against U0g: the engine in this process deciding a PreToolUse Bash call of
///   [`EVERYDAY_COMMAND`] with the guard hook ([`GUARDED_SETTINGS`]) and with no hook ([`BARE_SETTINGS`]),
///   in turns ABBA: what the guard adds to a decision;
/// - Eg against E0g: the same fire over the socket, two daemons of their own (the one guarded, the
///   other bare), fired in turns ABBA within every round (BAAB the next), their roles swapped halfway
///   (each reloaded) so that what one process pays for its place on the CPUs falls on both sides;
/// - Ggl, G0gl against Cg: `hookd-relay-lite` started as Claude Code starts it, deciding the same call
///   (its hook input on stdin) against the guarded daemon and the bare one, beside spawning `sh -c true`
///   directly (as row C), all in turns: the guarded call must cost less than starting a shell.
///
/// The daemons' home folders are their own (`keep_home`), so the project (`dir/home/project`, the
/// calls' `cwd`) lies outside them; none of the timed calls deletes, so where home is changes nothing.
fn builtin_rows(table: &mut Table, dir: &Path, rounds: usize) {
    let home = dir.join("home");
    let project = home.join("project");
    std::fs::create_dir_all(project.join("src")).expect("create the project folder");
    assert!(
        (2000..=3072).contains(&LONG_COMMAND.len()),
        "the long command is {} bytes, not 2 to 3 KB",
        LONG_COMMAND.len()
    );
    let as_map = |value: serde_json::Value| match value {
        serde_json::Value::Object(fields) => fields,
        _ => unreachable!("an object"),
    };

    // The judge alone.
    let guard = hookd::guard::Guard::default();
    let calls = guard_calls(&home, &project);
    let call_events: Vec<serde_json::Map<String, serde_json::Value>> = calls
        .iter()
        .map(|call| as_map(tool_event(&project, call.tool, &call.input)))
        .collect();
    for event in &call_events {
        for _ in 0..200 {
            guard.judge(event, &home);
        }
    }

    // Two daemons, the one guarded and the other bare, each in a folder of its own.
    let start = |name: &str, settings: &str| -> (Daemon, PathBuf) {
        let folder = dir.join(name);
        std::fs::create_dir_all(&folder).expect("create a daemon's folder");
        let config = folder.join("hooks.toml");
        write_settings(&config, settings);
        (
            Daemon::start(&config, folder.join("run/hookd.sock")),
            config,
        )
    };
    let (first, first_config) = start("guarded", GUARDED_SETTINGS);
    let (second, second_config) = start("bare", BARE_SETTINGS);
    // Indexed 0 guarded, 1 bare, until the swap halfway.
    let mut daemons = [&first, &second];
    let mut clients = [first.connect(), second.connect()];
    let mut configs = [first_config, second_config];
    let everyday = tool_event(
        &project,
        "Bash",
        &serde_json::json!({ "command": EVERYDAY_COMMAND }),
    );
    let fire = |event: &serde_json::Value| {
        format!("{{\"op\":\"fire\",\"moment\":\"PreToolUse\",\"event\":{event}}}\n")
    };
    let everyday_fire = fire(&everyday);
    // A call the guard refuses (its secrets rule) and hookd's guard of itself lets go (it lets reads go
    // on): a `Read` of a private key in the home folder of the guarded daemon (`keep_home`'s), judged
    // here with that home as the daemon judges it.
    let key_read = |daemon: &Daemon| {
        let daemons_home = daemon.socket.parent().unwrap().join("home");
        let input = serde_json::json!({ "file_path": daemons_home.join(".ssh/id_rsa") });
        let event = tool_event(&project, "Read", &input);
        let judged = guard.judge(&as_map(event.clone()), &daemons_home);
        (event, judged)
    };
    // The hook answers as the judge does: it is the guard that runs in the guarded daemon, and only there.
    let check = |clients: &mut [Client; 2], daemons: &[&Daemon; 2]| {
        for _ in 0..200 {
            clients[0].fire(&everyday_fire);
            clients[1].fire(&everyday_fire);
        }
        expect_hooks(clients[0].fire(&everyday_fire), &["guard"]);
        expect_hooks(clients[1].fire(&everyday_fire), &[]);
        let (event, judged) = key_read(daemons[0]);
        let response = clients[0].fire(&fire(&event)).to_string();
        let value: serde_json::Value = serde_json::from_str(&response).expect("a JSON response");
        let outcome = value["hooks"]
            .as_array()
            .and_then(|hooks| hooks.iter().find(|hook| hook["name"] == "guard"))
            .map(|hook| hook["outcome"].clone());
        assert_eq!(
            outcome.as_ref().is_some_and(|outcome| outcome != "nothing"),
            judged.is_some(),
            "the guard hook answered a Read of a key otherwise than the judge ({}): {response}",
            told(judged.as_ref())
        );
    };
    check(&mut clients, &daemons);

    // The engine in this process, guarded and bare.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let engines = runtime.block_on(async {
        [
            (&configs[0], GUARDED_SETTINGS),
            (&configs[1], BARE_SETTINGS),
        ]
        .map(|(config, text)| {
            hookd::engine::Engine::new(
                hookd::settings::Settings::parse(config, "hooks.toml", text)
                    .expect("the bench's settings"),
            )
        })
    });
    let everyday_fields = as_map(everyday.clone());
    let decide = |engine: &std::sync::Arc<hookd::engine::Engine>| {
        let fire = hookd::engine::Fire {
            moment: "PreToolUse".into(),
            agent: None,
            event: everyday_fields.clone().into(),
        };
        runtime
            .block_on(engine.decide(fire, &engine.abandoned().child_token()))
            .expect("decided")
    };
    for engine in &engines {
        for _ in 0..200 {
            decide(engine);
        }
    }
    let ran = |engine: &std::sync::Arc<hookd::engine::Engine>| -> Vec<String> {
        decide(engine).hooks.into_iter().map(|h| h.name).collect()
    };
    assert_eq!(ran(&engines[0]), ["guard"]);
    assert!(ran(&engines[1]).is_empty());
    assert!(
        !decide(&engines[0]).refused,
        "the engine's guard refused {EVERYDAY_COMMAND}"
    );

    // The lite relay, as Claude Code starts it for a PreToolUse hook.
    let lite = Relay {
        program: lite_relay(&target_dir()),
        word: None,
        suffix: "l",
        shown: "`hookd-relay-lite`".into(),
    };
    let claude_input = |event: &serde_json::Value| {
        let mut input = event.clone();
        input["hook_event_name"] = "PreToolUse".into();
        input.to_string()
    };
    let relay_input = claude_input(&everyday);
    let relay_call = |socket: &Path| {
        let (status, out) = relay_output(&lite, socket, &relay_input);
        assert!(
            status.success() && out.is_empty(),
            "hookd-relay-lite did not let {EVERYDAY_COMMAND} through: {status}, {}",
            String::from_utf8_lossy(&out)
        );
    };
    // The relay passes the guard's answer on: a refusal (or an ask) where the judge gives one, nothing
    // where not.
    let relay_check = |daemons: &[&Daemon; 2]| {
        for _ in 0..10 {
            relay_call(&daemons[0].socket);
            relay_call(&daemons[1].socket);
        }
        let (event, judged) = key_read(daemons[0]);
        let (status, out) = relay_output(&lite, &daemons[0].socket, &claude_input(&event));
        let held = status.code() == Some(2) || !out.is_empty();
        assert_eq!(
            held,
            judged.is_some(),
            "hookd-relay-lite answered a Read of a key otherwise than the judge ({}): {status}, {}",
            told(judged.as_ref()),
            String::from_utf8_lossy(&out)
        );
    };
    relay_check(&daemons);
    let event_line = format!("{relay_input}\n");
    let shell = || spawn_directly(Command::new("/bin/sh").args(["-c", "true"]), &event_line);
    for _ in 0..20 {
        shell();
    }

    #[derive(Default)]
    struct GuardSamples {
        /// One a call of [`guard_calls`].
        judge: Vec<Vec<Duration>>,
        /// The call read and its command line read by the shell reader, the first part of the judge's
        /// work; one a call.
        read: Vec<Vec<Duration>>,
        /// Guarded, then bare.
        engine: [Vec<Duration>; 2],
        fire: [Vec<Duration>; 2],
        fire_rounds: Vec<f64>,
        relay: [Vec<Duration>; 2],
        shell: Vec<Duration>,
    }
    let mut s = GuardSamples {
        judge: calls.iter().map(|_| Vec::new()).collect(),
        read: calls.iter().map(|_| Vec::new()).collect(),
        ..GuardSamples::default()
    };
    for round in 0..rounds {
        if rounds > 1 && round == rounds / 2 {
            // Halfway, the daemons swap roles, each reloaded: the bare one is guarded now.
            write_settings(&configs[0], BARE_SETTINGS);
            write_settings(&configs[1], GUARDED_SETTINGS);
            for client in &mut clients {
                let reloaded = client.send("{\"op\":\"reload\"}\n").to_string();
                assert!(reloaded.contains("\"ok\":true"), "reload: {reloaded}");
            }
            clients.swap(0, 1);
            configs.swap(0, 1);
            daemons.swap(0, 1);
            check(&mut clients, &daemons);
            relay_check(&daemons);
        }
        // ABBA, and BAAB the next round.
        let order = if round % 2 == 0 {
            [0, 1, 1, 0]
        } else {
            [1, 0, 0, 1]
        };
        let mut fires: [Vec<Duration>; 2] = Default::default();
        for which in order {
            for _ in 0..BATCH {
                fires[which].push(timed(|| {
                    clients[which].fire(&everyday_fire);
                }));
            }
        }
        s.fire_rounds.push(ratio(
            Summary::of(&mut fires[0]).p50,
            Summary::of(&mut fires[1]).p50,
        ));
        for which in order {
            for _ in 0..BATCH {
                s.engine[which].push(timed(|| decide(&engines[which])));
            }
        }
        for ((event, judged), read) in call_events.iter().zip(&mut s.judge).zip(&mut s.read) {
            for _ in 0..BATCH {
                judged.push(timed(|| guard.judge(event, &home)));
            }
            for _ in 0..BATCH / 2 {
                read.push(timed(|| {
                    hookd::guard::Call::read(event, &home).map(|call| call.commands())
                }));
            }
        }
        // The shell, then the relay to each daemon, and back; the daemons' order flipped each round, so
        // that neither always follows the shell.
        let relays = if round % 2 == 0 {
            [2, 0, 1, 1, 0, 2]
        } else {
            [2, 1, 0, 0, 1, 2]
        };
        for which in relays {
            for _ in 0..BATCH / 5 {
                match which {
                    2 => s.shell.push(timed(shell)),
                    _ => s.relay[which].push(timed(|| relay_call(&daemons[which].socket))),
                }
            }
        }
        for (pooled, turn) in s.fire.iter_mut().zip(&mut fires) {
            pooled.append(turn);
        }
    }
    drop((first, second));

    let under = |d: Duration| d < Duration::from_micros(200);
    for (((call, event), samples), read) in calls
        .iter()
        .zip(&call_events)
        .zip(&mut s.judge)
        .zip(&mut s.read)
    {
        let judge = Summary::of(samples);
        let read = Summary::of(read);
        let verdict = guard.judge(event, &home);
        let meant = if call.refuse {
            "refused"
        } else {
            "let through"
        };
        let as_meant = verdict.is_some() == call.refuse;
        table.row(
            &format!("Jg{}", call.letter),
            &format!(
                "the built-in guard's judge alone (`Guard::judge`), {}",
                call.shown
            ),
            &judge,
            format!(
                "{}; of it the call and its command read (`Call::read`, `commands`) {} at p50",
                if as_meant {
                    told(verdict.as_ref())
                } else {
                    format!("{}, **meant to be {meant}**", told(verdict.as_ref()))
                },
                duration(read.p50)
            ),
            Some((
                "p50 and p99 < 0.2 ms".into(),
                under(judge.p50) && under(judge.p99),
            )),
        );
    }
    let [engine_guarded, engine_bare] = &mut s.engine;
    let (engine_guarded, engine_bare) = (Summary::of(engine_guarded), Summary::of(engine_bare));
    table.row(
        "U0g",
        &format!("engine in this process, Bash `{EVERYDAY_COMMAND}`, no matching hook"),
        &engine_bare,
        "1.00 (baseline of Ug)".into(),
        None,
    );
    table.row(
        "Ug",
        "the same, with the built-in guard hooked (`builtin = \"guard\"`; in turns with U0g)",
        &engine_guarded,
        format!(
            "{:.2} x U0g ({:+.1} us)",
            ratio(engine_guarded.p50, engine_bare.p50),
            micros_between(engine_guarded.p50, engine_bare.p50)
        ),
        Some(("p50 < 0.2 ms".into(), under(engine_guarded.p50))),
    );
    let [fire_guarded, fire_bare] = &mut s.fire;
    let (fire_guarded, fire_bare) = (Summary::of(fire_guarded), Summary::of(fire_bare));
    let added = fire_guarded.p50.saturating_sub(fire_bare.p50);
    s.fire_rounds.sort_by(f64::total_cmp);
    table.row(
        "E0g",
        &format!(
            "fire, Bash `{EVERYDAY_COMMAND}`, no matching hook (two daemons, the roles swapped halfway; {} samples)",
            fire_bare.count
        ),
        &fire_bare,
        "1.00 (baseline of Eg)".into(),
        None,
    );
    table.row(
        "Eg",
        "the same with the built-in guard hooked (fired in turns with E0g, the other daemon)",
        &fire_guarded,
        format!(
            "{:.2} x E0g ({:+.1} us); median of {} rounds' ratios {:.2}",
            ratio(fire_guarded.p50, fire_bare.p50),
            micros_between(fire_guarded.p50, fire_bare.p50),
            s.fire_rounds.len(),
            s.fire_rounds[s.fire_rounds.len() / 2]
        ),
        Some(("adds < 0.2 ms at p50".into(), under(added))),
    );
    let shell = Summary::of(&mut s.shell);
    table.row(
        "Cg",
        &format!(
            "spawn `sh -c true` directly (as C; in turns with Ggl and G0gl; {} samples)",
            shell.count
        ),
        &shell,
        "1.00 (baseline of Ggl, G0gl)".into(),
        None,
    );
    let [relay_guarded, relay_bare] = &mut s.relay;
    let (relay_guarded, relay_bare) = (Summary::of(relay_guarded), Summary::of(relay_bare));
    table.row(
        "G0gl",
        &format!(
            "`hookd-relay-lite` + daemon, Claude Code's PreToolUse Bash `{EVERYDAY_COMMAND}`, no matching hook"
        ),
        &relay_bare,
        format!("{:.2} x Cg", ratio(relay_bare.p50, shell.p50)),
        None,
    );
    table.row(
        "Ggl",
        "the same call through the guarded daemon: an agent's guarded call",
        &relay_guarded,
        format!(
            "{:.2} x Cg; {:+.1} us on G0gl",
            ratio(relay_guarded.p50, shell.p50),
            micros_between(relay_guarded.p50, relay_bare.p50)
        ),
        Some(("p50 below Cg".into(), relay_guarded.p50 < shell.p50)),
    );
}

/// `a - b` in microseconds, negative when `b` is the longer.
fn micros_between(a: Duration, b: Duration) -> f64 {
    (a.as_secs_f64() - b.as_secs_f64()) * 1e6
}

/// Claude Code's hook input for a PreToolUse of `tool`: what an http hook POSTs.
fn hook_input(tool: &str) -> String {
    event(tool).replacen('{', "{\"hook_event_name\":\"PreToolUse\",", 1)
}

/// An http hook's client as an agent keeps one: one kept-alive connection to the daemon's listener,
/// with the daemon's token, each POST answered before the next (no pipelining).
struct HttpClient {
    stream: std::net::TcpStream,
    token: String,
    port: u16,
    buffer: Vec<u8>,
}

impl HttpClient {
    /// Finds the listener's port and the token's file in `status` (asked on `client`).
    fn connect(client: &mut Client) -> HttpClient {
        let status: serde_json::Value =
            serde_json::from_str(client.send("{\"op\":\"status\"}\n")).expect("status JSON");
        let listen = status["http"]["listen"]
            .as_str()
            .unwrap_or_else(|| panic!("no http listener: {status}"));
        let port: u16 = listen
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("a port");
        let token_file = status["http"]["token_file"]
            .as_str()
            .expect("http.token_file");
        let token = std::fs::read_to_string(token_file)
            .unwrap_or_else(|e| panic!("reading {token_file}: {e}"))
            .trim()
            .to_string();
        let stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect over http");
        stream.set_nodelay(true).expect("TCP_NODELAY");
        HttpClient {
            stream,
            token,
            port,
            buffer: Vec::with_capacity(4096),
        }
    }

    /// POSTs one hook input to Claude Code's endpoint; the answer must be an empty 200 (nothing to say).
    fn post(&mut self, input: &str) {
        let request = format!(
            "POST /hooks/claude-code HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{input}",
            self.port,
            self.token,
            input.len()
        );
        self.stream
            .write_all(request.as_bytes())
            .expect("write a request");
        // Read to the end of the headers; an empty 200 has no body to read.
        self.buffer.clear();
        let mut chunk = [0u8; 1024];
        while !self.buffer.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = self.stream.read(&mut chunk).expect("read a response");
            assert!(n > 0, "the daemon closed the http connection");
            self.buffer.extend_from_slice(&chunk[..n]);
        }
        let head = String::from_utf8_lossy(&self.buffer).to_ascii_lowercase();
        assert!(
            head.starts_with("http/1.1 200") && head.contains("content-length: 0\r\n"),
            "not an empty 200: {head}"
        );
    }
}

/// The p50 and p99 of a row's samples.
struct Summary {
    count: usize,
    p50: Duration,
    p99: Duration,
}

impl Summary {
    fn of(samples: &mut [Duration]) -> Summary {
        assert!(!samples.is_empty(), "a row without samples");
        samples.sort();
        let at = |q: f64| samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)];
        Summary {
            count: samples.len(),
            p50: at(0.50),
            p99: at(0.99),
        }
    }
}

/// The one table, printed at the end, with its targets counted.
#[derive(Default)]
struct Table {
    rows: Vec<[String; 5]>,
    met: usize,
    missed: Vec<String>,
}

impl Table {
    fn push(
        &mut self,
        id: &str,
        measure: &str,
        cells: [String; 3],
        target: Option<(String, bool)>,
    ) {
        let [p50, p99, ratio] = cells;
        let target = match target {
            None => "-".to_string(),
            Some((what, true)) => {
                self.met += 1;
                format!("{what}: met")
            }
            Some((what, false)) => {
                self.missed.push(id.to_string());
                format!("{what}: **missed**")
            }
        };
        self.rows
            .push([format!("{id}. {measure}"), p50, p99, ratio, target]);
    }

    fn row(
        &mut self,
        id: &str,
        measure: &str,
        summary: &Summary,
        ratio: String,
        target: Option<(String, bool)>,
    ) {
        let cells = [duration(summary.p50), duration(summary.p99), ratio];
        self.push(id, measure, cells, target);
    }

    /// A row against a baseline row, with a target of at most `most` times the baseline at p50.
    fn ratio_row(
        &mut self,
        id: &str,
        measure: &str,
        summary: &Summary,
        (base_id, base): (&str, &Summary),
        most: Option<f64>,
    ) {
        let r = ratio(summary.p50, base.p50);
        let target = most.map(|most| {
            let said = if most < 1.5 {
                format!("p50 within {:.0} % of {base_id}", (most - 1.0) * 100.0)
            } else {
                format!("p50 at most {most:.1} x {base_id}")
            };
            (said, r <= most)
        });
        self.row(id, measure, summary, format!("{r:.2} x {base_id}"), target);
    }

    /// A throughput row: what [`CLIENTS`] clients did at once, the daemon's CPU if `cpu`.
    fn rate_row(
        &mut self,
        id: &str,
        what: &str,
        load: &Load,
        cpu: bool,
        ratio: String,
        target: Option<(String, bool)>,
    ) {
        let cpu = if cpu {
            format!("; {}", load.daemon_cpu())
        } else {
            String::new()
        };
        let measure = format!(
            "throughput, {CLIENTS} threads x {} (until the first is done), {what}: **{}/s** in {}{cpu} (p50, p99: latency of each)",
            load.fires / CLIENTS,
            thousands(load.rate()),
            secs(load.wall),
        );
        let cells = [
            duration(load.latency.p50),
            duration(load.latency.p99),
            ratio,
        ];
        self.push(id, &measure, cells, target);
    }

    fn memory_row(
        &mut self,
        id: &str,
        measure: &str,
        kib: u64,
        ratio: String,
        target: Option<(String, bool)>,
    ) {
        let value = format!("{:.1} MiB", kib as f64 / 1024.0);
        self.push(id, measure, [value, "-".into(), ratio], target);
    }

    fn text_row(&mut self, id: &str, measure: &str, text: &str) {
        self.push(id, measure, [text.into(), "-".into(), "-".into()], None);
    }

    fn print(&self) {
        println!("| measure | p50 (or value) | p99 | ratio (p50) | target |");
        println!("|---|---|---|---|---|");
        for [measure, p50, p99, ratio, target] in &self.rows {
            println!("| {measure} | {p50} | {p99} | {ratio} | {target} |");
        }
        let missed = if self.missed.is_empty() {
            String::new()
        } else {
            format!("; missed: {}", self.missed.join(", "))
        };
        println!(
            "targets: {} of {} met{missed}",
            self.met,
            self.met + self.missed.len()
        );
    }
}

/// How long `f` takes; what it returns is dropped after the clock stops.
fn timed<T>(f: impl FnOnce() -> T) -> Duration {
    let started = Instant::now();
    let result = f();
    let elapsed = started.elapsed();
    drop(result);
    elapsed
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

/// Microseconds below 1 ms, milliseconds above.
fn duration(d: Duration) -> String {
    if d < Duration::from_millis(1) {
        format!("{:.1} us", d.as_secs_f64() * 1e6)
    } else if d < Duration::from_millis(10) {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    } else {
        ms(d)
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn secs(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

/// `41234.5` as `41,235`.
fn thousands(x: f64) -> String {
    let digits = format!("{:.0}", x);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The earlier tree of the speed rows: the last commit before the record and the wave of features that
/// followed it (allow, ask, rewrites, the journal, the guards, the export), where a no-hook fire was
/// at its fastest. Its daemon is built once into `target/earlier-<commit>` (minutes; cached after).
const EARLIER: &str = "c679f6d3945f6fbd65509855651a8981e65257fb";

/// The earlier tree's daemon program, which [`earlier_hookd`] builds (and starts none: the rows start it
/// with their places, as every daemon of the bench).
const EARLIER_BIN: &str = "hookd";

/// The speed rows' settings: valid in the earlier tree as in this one. `Read` matches no hook.
const SPEED_SETTINGS: &str = r#"[defaults]
shell = "/bin/sh"

[[hooks.PreToolUse]]
name = "argv-true"
matcher = "Bash"
argv = ["/bin/true"]
"#;

/// The earlier tree's `hookd`: `HOOKD_BENCH_EARLIER`, else built from [`EARLIER`] (`git archive` of the
/// commit into a temp folder, `cargo build --release` there with its own Cargo.lock) into
/// `target/earlier-<commit>/release/hookd`, kept for the next run. `Err` says why there is none (not a
/// git checkout: a crate's source).
fn earlier_hookd() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("HOOKD_BENCH_EARLIER").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let target = target_dir().join(format!("earlier-{}", &EARLIER[..7]));
    let program = target.join("release/hookd");
    if program.is_file() {
        return Ok(program);
    }
    let source = tempfile::tempdir().map_err(|e| format!("a temp folder: {e}"))?;
    eprintln!(
        "fire: building the earlier tree ({}) into {} (once; minutes)",
        &EARLIER[..7],
        target.display()
    );
    let mut archive = Command::new("git")
        .arg("-C")
        .arg(env!("CARGO_MANIFEST_DIR"))
        .args(["archive", "--format=tar", EARLIER])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("git: {e}"))?;
    let tar = archive.stdout.take().expect("git's stdout");
    let unpacked = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(source.path())
        .stdin(tar)
        .status()
        .map_err(|e| format!("tar: {e}"))?;
    let archived = archive.wait().map_err(|e| format!("git: {e}"))?;
    if !unpacked.success() || !archived.success() {
        return Err(format!(
            "`git archive {EARLIER}` did not unpack (not a git checkout?)"
        ));
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let built = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--quiet",
            "--bin",
            EARLIER_BIN,
            "--target-dir",
        ])
        .arg(&target)
        .current_dir(source.path())
        .status()
        .map_err(|e| format!("cargo: {e}"))?;
    if !built.success() || !program.is_file() {
        return Err(format!("building the earlier tree {EARLIER} failed"));
    }
    Ok(program)
}

/// A Unix socket echo in this process: a thread that reads a line and writes it back, on one connection,
/// both sides asleep in `read` between lines as a fire's client and the daemon are. The floor of row E.
fn echo_server(dir: &Path) -> (PathBuf, std::thread::JoinHandle<()>) {
    let socket = dir.join("echo.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind the echo socket");
    let server = std::thread::spawn(move || {
        let Ok((stream, _)) = listener.accept() else {
            return;
        };
        let mut writer = stream.try_clone().expect("clone a unix stream");
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    if writer.write_all(line.as_bytes()).is_err() {
                        return;
                    }
                }
            }
        }
    });
    (socket, server)
}

/// Median of the rounds' own ratios.
fn median(mut ratios: Vec<f64>) -> f64 {
    ratios.sort_by(f64::total_cmp);
    let middle = ratios.len() / 2;
    // Of an even count, the mean of the two in the middle: the upper one alone leaned every target
    // measured on a median toward being met.
    if ratios.len().is_multiple_of(2) && middle > 0 {
        (ratios[middle - 1] + ratios[middle]) / 2.0
    } else {
        ratios[middle]
    }
}

/// The speed rows (`cargo bench --bench fire -- speed`), each a ratio in this one run, measured in turns
/// (the order reversed every round) so that a shared machine's drift hits every side alike:
/// - Es, Ws, E0, Ee: a no-hook fire (E and W again, in this row's turns) on one connection, to today's daemon (the record on, as by default),
///   to one with `[record] enabled = false`, to the earlier tree's daemon ([`EARLIER`]), and a Unix
///   socket echo of the same line (no daemon); targets Es at most 1.05 x Ws and 2.5 x Ee;
/// - Is, Xs, I0 (I and X again): their throughput, [`CLIENTS`] threads firing no-hook fires, each on a connection of its
///   own, in [`SPEED_TURNS`] turns; targets on the median of the turns' ratios: Is at least 0.95 x Xs and
///   1.0 x I0;
/// - Ls, L0: the daemons' VmRSS idle after start, today's and the earlier tree's; target Ls at most 5 MiB;
/// - As, Bs: a client asleep in `read` while it waits (as every relay is) spawning `/bin/true` directly,
///   and firing one `argv = ["/bin/true"]` hook; target Bs at most 1.15 x As.
fn speed_rows(table: &mut Table, dir: &Path, rounds: usize) {
    let start = |name: &str, program: &Path, text: &str| -> Daemon {
        let folder = dir.join(name);
        std::fs::create_dir_all(&folder).expect("create a daemon's folder");
        let config = folder.join("hooks.toml");
        write_settings(&config, text);
        Daemon::start_program(program, &config, folder.join("run/hookd.sock"))
    };
    let earlier = earlier_hookd();
    let on = start("on", Path::new(common::BIN), SPEED_SETTINGS);
    let off = start(
        "off",
        Path::new(common::BIN),
        &format!("{SPEED_SETTINGS}\n[record]\nenabled = false\n"),
    );
    let then = match &earlier {
        Ok(program) => Some(start("earlier", program, SPEED_SETTINGS)),
        Err(why) => {
            table.text_row(
                "E0, I0, L0",
                "the earlier tree's daemon",
                &format!("not measured: {why}"),
            );
            None
        }
    };
    // Idle after start, before any fire: what the daemon holds for nothing.
    std::thread::sleep(Duration::from_millis(300));
    let idle = |daemon: &Daemon| rss_kib(daemon.pid());
    let (idle_on, idle_then) = (idle(&on), then.as_ref().map(idle));

    let (echo_socket, echo_thread) = echo_server(dir);
    let mut echo = {
        let stream = UnixStream::connect(&echo_socket).expect("connect to the echo");
        let reader = BufReader::new(stream.try_clone().expect("clone a unix stream"));
        Client {
            writer: stream,
            reader,
            line: String::new(),
        }
    };
    let request = fire_request(NO_HOOK_TOOL);
    let argv_fire = fire_request(ARGV_TOOL);
    let event_line = format!("{}\n", event(ARGV_TOOL));
    let mut clients: Vec<Client> = [Some(&on), Some(&off), then.as_ref()]
        .into_iter()
        .flatten()
        .map(Daemon::connect)
        .collect();
    for _ in 0..200 {
        for client in &mut clients {
            client.fire(&request);
        }
        echo.send(&request);
    }
    for _ in 0..50 {
        clients[0].fire(&argv_fire);
        spawn_directly(&mut Command::new("/bin/true"), &event_line);
    }
    expect_hooks(clients[0].fire(&request), &[]);
    expect_hooks(clients[0].fire(&argv_fire), &["argv-true"]);

    eprintln!("fire: speed rows, one fire at a time ({rounds} rounds)");
    // Sides: 0 E (on), 1 W (off), 2 E0 (earlier, if any), last Ee (echo).
    let sides = clients.len() + 1;
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); sides];
    let (mut on_off, mut on_echo, mut on_then) = (Vec::new(), Vec::new(), Vec::new());
    let (mut spawned, mut fired, mut sleeping) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let mut order: Vec<usize> = (0..sides).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        let mut this_round: Vec<Vec<Duration>> = vec![Vec::new(); sides];
        for side in order {
            for _ in 0..BATCH * 2 {
                let took = if side == sides - 1 {
                    timed(|| {
                        echo.send(&request);
                    })
                } else {
                    let client = &mut clients[side];
                    timed(|| {
                        client.fire(&request);
                    })
                };
                this_round[side].push(took);
            }
        }
        let p50 = |s: &mut Vec<Duration>| Summary::of(s).p50;
        let e = p50(&mut this_round[0]);
        on_off.push(ratio(e, p50(&mut this_round[1])));
        on_echo.push(ratio(e, p50(&mut this_round[sides - 1])));
        if sides == 4 {
            on_then.push(ratio(e, p50(&mut this_round[2])));
        }
        for (side, batch) in this_round.iter_mut().enumerate() {
            samples[side].append(batch);
        }
        // The sleeping client: a direct spawn and a one-hook fire, in turns.
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for first in [round % 2 == 0, round % 2 == 1] {
            if first {
                for _ in 0..BATCH / 2 {
                    a.push(timed(|| {
                        spawn_directly(&mut Command::new("/bin/true"), &event_line)
                    }));
                }
            } else {
                for _ in 0..BATCH / 2 {
                    b.push(timed(|| {
                        clients[0].fire(&argv_fire);
                    }));
                }
            }
        }
        sleeping.push(ratio(Summary::of(&mut b).p50, Summary::of(&mut a).p50));
        spawned.append(&mut a);
        fired.append(&mut b);
    }
    drop(echo);
    let _ = echo_thread.join();

    eprintln!("fire: speed rows, {CLIENTS} clients at once");
    // At least 9 a client: `rounds` is at least 1.
    let each = rounds * 150 / TURNS / SPEED_TURN_DIVISOR;
    let mut loads: Vec<Vec<Turn>> = (1..sides).map(|_| Vec::new()).collect();
    let daemons: Vec<&Daemon> = [Some(&on), Some(&off), then.as_ref()]
        .into_iter()
        .flatten()
        .collect();
    // Each turn's own ratios, Is against Xs and against I0: a burst of the machine's other work lands
    // in one or two turns, and the median of the turns' ratios is not moved by it as the whole rates are.
    let (mut on_off_rates, mut on_then_rates) = (Vec::new(), Vec::new());
    for turn in 0..SPEED_TURNS {
        let mut order: Vec<usize> = (0..daemons.len()).collect();
        if turn % 2 == 1 {
            order.reverse();
        }
        for which in order {
            let daemon = daemons[which];
            loads[which].push(load(daemon, each, firing(daemon, &request)));
        }
        let rate_of = |which: usize| {
            let turn: &Turn = loads[which].last().expect("a turn just measured");
            turn.latencies.len() as f64 / turn.wall.as_secs_f64()
        };
        on_off_rates.push(rate_of(0) / rate_of(1));
        if sides == 4 {
            on_then_rates.push(rate_of(0) / rate_of(2));
        }
    }
    let loads: Vec<Load> = loads.into_iter().map(Load::joined).collect();
    // Turn by turn, to tell a steady ratio from one the machine's other work moved.
    let turns = |ratios: &[f64]| {
        ratios
            .iter()
            .map(|r| format!("{r:.2}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    eprintln!("fire: Is / Xs turn by turn: {}", turns(&on_off_rates));
    if sides == 4 {
        eprintln!("fire: Is / I0 turn by turn: {}", turns(&on_then_rates));
    }

    let summaries: Vec<Summary> = samples.iter_mut().map(|s| Summary::of(s)).collect();
    let (e, w, ee) = (&summaries[0], &summaries[1], &summaries[sides - 1]);
    let (r_off, r_echo) = (median(on_off), median(on_echo));
    table.row(
        "Es",
        "fire that matches no hook, record on (as by default), one connection",
        e,
        format!("{r_off:.2} x Ws, {r_echo:.2} x Ee (medians of {rounds} rounds' ratios)"),
        Some((
            "at most 1.05 x Ws and 2.5 x Ee".into(),
            r_off <= 1.05 && r_echo <= 2.5,
        )),
    );
    table.row(
        "Ws",
        "the same, `[record] enabled = false` (a daemon of its own)",
        w,
        "-".into(),
        None,
    );
    if sides == 4 {
        table.row(
            "E0",
            &format!("the same, the earlier tree's daemon ({})", &EARLIER[..7]),
            &summaries[2],
            format!(
                "Es is {:.2} x E0 (median of the rounds' ratios)",
                median(on_then)
            ),
            None,
        );
    }
    table.row(
        "Ee",
        "a Unix socket echo of the same request line (a thread of this process, no daemon)",
        ee,
        "-".into(),
        None,
    );
    let rate = |i: usize| loads[i].rate();
    let on_off_rate = median(on_off_rates);
    table.rate_row(
        "Is",
        "fire, no hook, record on",
        &loads[0],
        true,
        format!(
            "{on_off_rate:.2} x Xs (median of {SPEED_TURNS} turns' ratios; of the whole rates {:.2})",
            rate(0) / rate(1)
        ),
        Some(("at least 0.95 x Xs".into(), on_off_rate >= 0.95)),
    );
    table.rate_row(
        "Xs",
        "fire, no hook, `[record] enabled = false`",
        &loads[1],
        true,
        "-".into(),
        None,
    );
    if sides == 4 {
        let on_then_rate = median(on_then_rates);
        table.rate_row(
            "I0",
            &format!(
                "fire, no hook, the earlier tree's daemon ({})",
                &EARLIER[..7]
            ),
            &loads[2],
            true,
            format!(
                "Is is {on_then_rate:.2} x I0 (median of {SPEED_TURNS} turns' ratios; of the whole rates {:.2})",
                rate(0) / rate(2)
            ),
            Some(("Is at least 1.0 x I0".into(), on_then_rate >= 1.0)),
        );
    }
    table.memory_row(
        "Ls",
        "daemon VmRSS, idle after start",
        idle_on,
        "-".into(),
        Some(("at most 5 MiB".into(), idle_on <= 5 * 1024)),
    );
    if let Some(kib) = idle_then {
        table.memory_row(
            "L0",
            &format!(
                "the earlier tree's daemon VmRSS, idle after start ({})",
                &EARLIER[..7]
            ),
            kib,
            format!("Ls is {:.2} x L0", idle_on as f64 / kib as f64),
            None,
        );
    }
    let sleeping = median(sleeping);
    table.row(
        "As",
        "spawn `/bin/true` directly, the client asleep in `read` (as A)",
        &Summary::of(&mut spawned),
        "1.00 (baseline of Bs)".into(),
        None,
    );
    table.row(
        "Bs",
        "fire, one `argv = [\"/bin/true\"]` hook, the client asleep in `read` (in turns with As)",
        &Summary::of(&mut fired),
        format!("{sleeping:.2} x As (median of the rounds' ratios)"),
        Some(("at most 1.15 x As".into(), sleeping <= 1.15)),
    );
}
