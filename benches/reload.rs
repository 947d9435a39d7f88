//! Reload latency: from a settings file renamed over (as vim and VS Code save) to the first fire that
//! sees the new hooks. `cargo bench --bench reload` prints p50 and the worst of 50 edits, measured in one
//! run against the real daemon.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const EDITS: usize = 50;

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("hooks.toml");
    write_version(&config, 0);
    let socket = dir.path().join("run/hookd.sock");
    let mut daemon = Command::new(env!("CARGO_BIN_EXE_hookd"))
        .args(["serve", "--config"])
        .arg(&config)
        .arg("--socket")
        .arg(&socket)
        .env("HOOKD_LOG", "warn")
        .spawn()
        .expect("start hookd");
    let (mut writer, mut reader) = connect(&socket);
    let mut latencies = Vec::with_capacity(EDITS);
    for version in 1..=EDITS {
        let expected = format!("[\"v{version}\"]");
        let started = write_version(&config, version);
        let deadline = started + Duration::from_secs(5);
        loop {
            let response = fire(&mut writer, &mut reader);
            if response.contains(&expected) {
                latencies.push(started.elapsed());
                break;
            }
            assert!(
                Instant::now() < deadline,
                "edit {version} not seen within 5 s: {response}"
            );
        }
    }
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "| reload latency, rename over -> first fire with the new hooks ({EDITS} edits) | p50 | worst |"
    );
    println!("|---|---|---|");
    println!(
        "| inotify, 30 ms quiet window | {:.1} ms | {:.1} ms |",
        ms(latencies[EDITS / 2]),
        ms(latencies[EDITS - 1])
    );
    let _ = Command::new("kill")
        .args(["-TERM", &daemon.id().to_string()])
        .status();
    let _ = daemon.wait();
}

/// Writes a settings file whose one Stop hook adds `v{version}`, the way editors save: a new file renamed
/// over the old. Returns the moment of the rename.
fn write_version(config: &Path, version: usize) -> Instant {
    let temp = config.with_extension("toml.swp");
    std::fs::write(
        &temp,
        format!("[[hooks.Stop]]\nargv = [\"/bin/echo\", \"v{version}\"]\n"),
    )
    .unwrap();
    std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::rename(&temp, config).unwrap();
    Instant::now()
}

fn connect(socket: &Path) -> (UnixStream, BufReader<UnixStream>) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(stream) = UnixStream::connect(socket) {
            let reader = BufReader::new(stream.try_clone().unwrap());
            return (stream, reader);
        }
        assert!(Instant::now() < deadline, "hookd did not start listening");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn fire(writer: &mut UnixStream, reader: &mut BufReader<UnixStream>) -> String {
    writer
        .write_all(b"{\"op\":\"fire\",\"moment\":\"Stop\",\"event\":{}}\n")
        .unwrap();
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    line
}
