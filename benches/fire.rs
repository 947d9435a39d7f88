//! The cost of a fire beside spawning the hook directly, measured in one run on this machine.
//!
//! `cargo bench --bench fire` starts the real daemon on a socket in a temp folder and prints one table:
//! - spawning `/bin/true` directly, as an agent does (pipes for stdin, stdout and stderr, the event
//!   written, the output read, the process reaped): the floor;
//! - a fire with one `argv = ["/bin/true"]` hook, round trip from a client on one connection;
//! - a fire that matches no hook: the daemon's own cost;
//! - the relay path: `hookd relay` started as an agent starts it (the event on stdin), firing at the daemon,
//!   which runs the one `/bin/true` hook.
//!
//! The two spawning measures alternate in small batches, so that drift on a busy machine hits both alike.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const EVENT: &str =
    r#"{"session_id":"bench","cwd":"/","tool_name":"Bash","tool_input":{"command":"ls -la"}}"#;

fn main() {
    let rounds: usize = std::env::var("HOOKD_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let batch = 50;
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("hooks.toml");
    std::fs::write(
        &config,
        "[[hooks.PreToolUse]]\nname = \"true\"\nargv = [\"/bin/true\"]\n",
    )
    .unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    let socket = dir.path().join("run/hookd.sock");
    let mut daemon = Command::new(env!("CARGO_BIN_EXE_hookd"))
        .args(["serve", "--config"])
        .arg(&config)
        .arg("--socket")
        .arg(&socket)
        .env("HOOKD_LOG", "warn")
        .spawn()
        .expect("start hookd");
    let mut client = connect(&socket);

    // Warm up both paths.
    for _ in 0..100 {
        spawn_directly();
        fire(&mut client, "PreToolUse");
    }
    let (mut direct, mut one_hook, mut relay) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        for _ in 0..batch {
            direct.push(timed(spawn_directly));
        }
        for _ in 0..batch {
            one_hook.push(timed(|| fire(&mut client, "PreToolUse")));
        }
        for _ in 0..batch / 5 {
            relay.push(timed(|| run_relay(&socket)));
        }
    }
    let mut no_hook: Vec<Duration> = (0..rounds * batch * 4)
        .map(|_| timed(|| fire(&mut client, "Stop")))
        .collect();

    let (direct_p50, direct_p99) = percentiles(&mut direct);
    let (hook_p50, hook_p99) = percentiles(&mut one_hook);
    let (none_p50, none_p99) = percentiles(&mut no_hook);
    let (relay_p50, relay_p99) = percentiles(&mut relay);
    println!(
        "machine: {} cores; {} samples per spawning row, {} for the no-hook row",
        cores(),
        direct.len(),
        no_hook.len()
    );
    println!("| measure | p50 | p99 | p50 ratio to direct |");
    println!("|---|---|---|---|");
    println!(
        "| spawn /bin/true directly (pipes, event, reap) | {} | {} | 1.00 |",
        us(direct_p50),
        us(direct_p99)
    );
    println!(
        "| fire, one argv /bin/true hook | {} | {} | {:.2} |",
        us(hook_p50),
        us(hook_p99),
        hook_p50.as_secs_f64() / direct_p50.as_secs_f64()
    );
    println!(
        "| fire, no matching hook | {} | {} | - |",
        us(none_p50),
        us(none_p99)
    );
    println!(
        "| relay process + daemon + one /bin/true hook ({} samples) | {} | {} | {:.2} |",
        relay.len(),
        us(relay_p50),
        us(relay_p99),
        relay_p50.as_secs_f64() / direct_p50.as_secs_f64()
    );

    let _ = nix_kill(daemon.id());
    let _ = daemon.wait();
}

fn spawn_directly() {
    let mut child = Command::new("/bin/true")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn /bin/true");
    let _ = child.stdin.take().unwrap().write_all(EVENT.as_bytes());
    let mut sink = Vec::new();
    let _ = child.stdout.take().unwrap().read_to_end(&mut sink);
    let _ = child.stderr.take().unwrap().read_to_end(&mut sink);
    child.wait().expect("reap /bin/true");
}

/// An agent's hook run: `hookd relay` with Claude Code's PreToolUse input on stdin, to its exit.
fn run_relay(socket: &Path) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hookd"))
        .args(["relay", "--agent", "claude-code", "--socket"])
        .arg(socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn hookd relay");
    let input = EVENT.replacen('{', "{\"hook_event_name\":\"PreToolUse\",", 1);
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    let mut out = Vec::new();
    let _ = child.stdout.take().unwrap().read_to_end(&mut out);
    let status = child.wait().expect("reap hookd relay");
    assert!(
        status.success() && out.is_empty(),
        "the relay said something: {}",
        String::from_utf8_lossy(&out)
    );
}

struct Client {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
    line: String,
}

fn connect(socket: &Path) -> Client {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(stream) = UnixStream::connect(socket) {
            let reader = BufReader::new(stream.try_clone().unwrap());
            return Client {
                writer: stream,
                reader,
                line: String::new(),
            };
        }
        assert!(
            Instant::now() < deadline,
            "hookd did not start listening on {}",
            socket.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn fire(client: &mut Client, moment: &str) {
    let request = format!("{{\"op\":\"fire\",\"moment\":\"{moment}\",\"event\":{EVENT}}}\n");
    client.writer.write_all(request.as_bytes()).unwrap();
    client.line.clear();
    client.reader.read_line(&mut client.line).unwrap();
    assert!(
        client.line.contains("\"ok\":true"),
        "unexpected response: {}",
        client.line
    );
}

fn timed(f: impl FnOnce()) -> Duration {
    let started = Instant::now();
    f();
    started.elapsed()
}

fn percentiles(samples: &mut [Duration]) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)];
    (at(0.50), at(0.99))
}

fn us(d: Duration) -> String {
    format!("{:.1} us", d.as_secs_f64() * 1e6)
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn nix_kill(pid: u32) -> std::io::Result<()> {
    let status = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()?;
    if status.success() {
        Ok(())
    } else {
        Err(std::io::Error::other("kill failed"))
    }
}
