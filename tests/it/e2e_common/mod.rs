//! What the real-agent tests (`tests/it/e2e_*.rs`) share: the pinned agents, installed from the npm
//! registry on first use and cached between runs; the scripted model server (`tests/e2e/model_server.py`)
//! that stands in for each vendor's API on 127.0.0.1 and records every request; the agents' own hook
//! settings written by `hookd relay --print-settings`, as users are told to; and a runner that gives an
//! agent a deadline and leaves none of its processes behind.
//!
//! The agents run offline: their API is the model server, every other call home is turned off by the
//! environment or settings each test writes (`../shared/design/agents.md`), and each agent runs in a
//! network namespace whose only interface is the loopback, so nothing it tries can leave the machine.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::Value;

use crate::common::*;

/// One agent as published on the npm registry, pinned.
pub struct AgentPackage {
    /// hookd's name for the agent (`--agent`).
    pub agent: &'static str,
    pub package: &'static str,
    pub version: &'static str,
    /// The program, under `node_modules/.bin/`.
    pub bin: &'static str,
}

pub const CLAUDE_CODE: AgentPackage = AgentPackage {
    agent: "claude-code",
    package: "@anthropic-ai/claude-code",
    version: "2.1.332",
    bin: "claude",
};

pub const CODEX: AgentPackage = AgentPackage {
    agent: "codex",
    package: "@openai/codex",
    version: "0.171.0",
    bin: "codex",
};

pub const GEMINI_CLI: AgentPackage = AgentPackage {
    agent: "gemini-cli",
    package: "@google/gemini-cli",
    version: "0.61.0",
    bin: "gemini",
};

pub const QWEN_CODE: AgentPackage = AgentPackage {
    agent: "qwen-code",
    package: "@qwen-code/qwen-code",
    version: "0.24.4",
    bin: "qwen",
};

pub const COPILOT_CLI: AgentPackage = AgentPackage {
    agent: "copilot-cli",
    package: "@github/copilot",
    version: "1.0.102",
    bin: "copilot",
};

/// How long one npm install may take (Claude Code's native binary is about 400 MB).
const INSTALL: Duration = Duration::from_secs(600);

/// A safety net for one agent run (a scripted model answers at once; runs take seconds).
pub const AGENT_RUN: Duration = Duration::from_secs(120);

/// [`require`] that this process can make a network namespace (`unshare --net`: root or CAP_SYS_ADMIN),
/// in which each real agent runs beside its scripted model with only loopback. Asked once per run.
#[must_use = "a test must return when it cannot run"]
pub fn require_network_namespaces() -> bool {
    static CAN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let can = *CAN.get_or_init(|| {
        Command::new("unshare")
            .args(["--net", "--", "true"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    });
    require(
        can,
        "the real-agent suites run each agent in a network namespace of its own: `unshare --net` needs root or CAP_SYS_ADMIN",
    )
}

/// Where installed agents are kept between runs: `$HOOKD_E2E_CACHE`, else `~/.cache/hookd-e2e`.
pub fn cache_dir() -> PathBuf {
    match std::env::var_os("HOOKD_E2E_CACHE").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/hookd-e2e")
        }
    }
}

/// The agent's program, installed first if this machine does not have this version yet. Installs are
/// serialized by a lock file, so that test binaries running at once install each agent once.
pub fn installed(pkg: &AgentPackage) -> PathBuf {
    let cache = cache_dir();
    fs::create_dir_all(&cache).expect("creating the agent cache");
    let dir = cache.join(format!("{}-{}", pkg.agent, pkg.version));
    let program = dir.join("node_modules/.bin").join(pkg.bin);
    let done = dir.join(".installed");
    let lock_file = fs::File::create(cache.join(".lock")).expect("creating the cache lock");
    let _lock = nix::fcntl::Flock::lock(lock_file, nix::fcntl::FlockArg::LockExclusive)
        .expect("locking the agent cache");
    if !done.exists() {
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("creating the agent's folder");
        fs::write(dir.join("package.json"), "{\"private\": true}\n").expect("package.json");
        let mut npm = Command::new("npm");
        npm.current_dir(&dir).args([
            "install",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            &format!("{}@{}", pkg.package, pkg.version),
        ]);
        the_users_toolchain(&mut npm);
        let out = run_with_deadline(npm, None, INSTALL);
        assert!(
            out.status.success(),
            "npm install {}@{} failed ({}):\n{}{}",
            pkg.package,
            pkg.version,
            out.status,
            text(&out.stdout),
            text(&out.stderr)
        );
        fs::write(&done, "").expect("marking the install done");
    }
    assert!(
        program.exists(),
        "{} is not installed at {program:?}",
        pkg.package
    );
    program
}

/// The scripted model server, killed on drop. See `tests/e2e/model_server.py` for the script's shape.
pub struct ModelServer {
    child: Child,
    pub port: u16,
    pub record: PathBuf,
}

const MODEL_SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e/model_server.py");

impl ModelServer {
    /// Starts a server speaking `dialect` (`anthropic`, `openai`, `openai-chat` or `gemini`) that answers turns from
    /// `script`, keeping its files in `dir` under `name`.
    pub fn start(dialect: &str, script: &Value, dir: &Path, name: &str) -> ModelServer {
        let script_path = dir.join(format!("{name}.script.json"));
        fs::write(&script_path, script.to_string()).expect("writing the model script");
        let record = dir.join(format!("{name}.requests.jsonl"));
        let port_file = dir.join(format!("{name}.port"));
        let log = fs::File::create(dir.join(format!("{name}.server.log"))).expect("server log");
        // `unshare` execs the server in place, so the child's pid is the server's, and its namespace is
        // the one the agent joins (`run_agent`).
        let child = Command::new("unshare")
            .args(["--net", "--", "python3"])
            .arg(MODEL_SERVER)
            .arg("--bring-up-loopback")
            .args(["--dialect", dialect])
            .arg("--script")
            .arg(&script_path)
            .arg("--record")
            .arg(&record)
            .arg("--port-file")
            .arg(&port_file)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("starting the model server");
        let mut server = ModelServer {
            child,
            port: 0,
            record,
        };
        let log_path = dir.join(format!("{name}.server.log"));
        wait_until(READY, "the model server's port file", || {
            if let Ok(Some(status)) = server.child.try_wait() {
                // unshare --net needs root (or CAP_SYS_ADMIN): say so rather than time out.
                panic!(
                    "the model server exited ({status}) before it listened: {}\n\
                     (the real-agent tests run each agent in a network namespace of its own: \
                     `unshare --net` needs root or CAP_SYS_ADMIN)",
                    fs::read_to_string(&log_path).unwrap_or_default()
                );
            }
            port_file.exists()
        });
        server.port = fs::read_to_string(&port_file)
            .unwrap()
            .trim()
            .parse()
            .expect("a port number");
        server
    }

    /// The server's network namespace: only a loopback interface, on which the server listens.
    pub fn netns(&self) -> PathBuf {
        PathBuf::from(format!("/proc/{}/ns/net", self.child.id()))
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a recorded request"))
            .collect()
    }

    /// The requests that were answered from the script (model turns), in order.
    pub fn turns(&self) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| !r["turn"].is_null())
            .collect()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What `hookd relay --print-settings AGENT` prints, with `extra` flags (`--socket P`,
/// `--fail-closed`), in the environment `env` (Codex's snippet names `$CODEX_HOME/config.toml`). Run from
/// a folder where hookd is installed with `hookd-relay` and `hookd-relay-lite` beside it
/// (`common::hookd_installed_with_lite`), as a user who installed all three has it: the agents run the lite relay, and
/// the lite relay hands what it does not carry to `hookd-relay`.
pub fn print_settings(agent: &str, extra: &[&str], env: &[(&str, &Path)]) -> String {
    let mut cmd = Command::new(hookd_installed_with_lite().join("hookd"));
    cmd.args(["relay", "--print-settings", agent]).args(extra);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run_with_deadline(cmd, None, Duration::from_secs(20));
    assert!(
        out.status.success(),
        "relay --print-settings {agent} failed: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Runs an agent to completion in a process group of its own, stdin from /dev/null, with a deadline
/// (`AGENT_RUN`); whatever the agent started and left behind is killed with its group afterwards.
///
/// The agent runs inside `netns` (`ModelServer::netns`): it reaches the model server on 127.0.0.1 and
/// no other network at all. Its hooks still reach the daemon, whose socket is a path in the file system.
pub fn run_agent(mut cmd: Command, netns: &Path) -> Output {
    enter_netns(&mut cmd, netns);
    cmd.process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {cmd:?}: {e}"));
    let pgid = Pid::from_raw(child.id() as i32);
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(child.wait_with_output());
    });
    let result = done_rx.recv_timeout(AGENT_RUN);
    let _ = killpg(pgid, Signal::SIGKILL);
    match result {
        Ok(out) => out.expect("waiting for the agent"),
        Err(_) => panic!("{cmd:?} did not finish within {AGENT_RUN:?}"),
    }
}

/// Makes `cmd` start inside the network namespace `netns` (`ModelServer::netns`).
pub fn enter_netns(cmd: &mut Command, netns: &Path) {
    let namespace = fs::File::open(netns)
        .unwrap_or_else(|e| panic!("opening the model server's network namespace {netns:?}: {e}"));
    unsafe {
        // Safety: only setns, a system call, runs between fork and exec.
        cmd.pre_exec(move || {
            nix::sched::setns(&namespace, nix::sched::CloneFlags::CLONE_NEWNET)
                .map_err(std::io::Error::from)
        });
    }
}

/// Makes `cmd` start in a mount namespace of its own in which `etc` lies over the machine's `/etc` (an
/// overlay, read-only: `etc`'s files first, then `/etc`'s): an agent then reads its managed settings,
/// which no variable moves, from a folder of the test's own, and the real `/etc` is never written.
/// Needs root (or CAP_SYS_ADMIN), as the network namespaces do.
pub fn with_etc_over(cmd: &mut Command, etc: &Path) {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let mut options = b"lowerdir=".to_vec();
    options.extend_from_slice(etc.as_os_str().as_bytes());
    options.extend_from_slice(b":/etc");
    let options = CString::new(options).expect("a path without NUL");
    unsafe {
        // Safety: only unshare and mount, system calls, run between fork and exec, on strings made
        // before the fork.
        cmd.pre_exec(move || {
            let lib = nix::libc::unshare(nix::libc::CLONE_NEWNS);
            if lib != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Nothing mounted here reaches the machine's namespace.
            if nix::libc::mount(
                c"none".as_ptr(),
                c"/".as_ptr(),
                std::ptr::null(),
                nix::libc::MS_REC | nix::libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            if nix::libc::mount(
                c"overlay".as_ptr(),
                c"/etc".as_ptr(),
                c"overlay".as_ptr(),
                0,
                options.as_ptr().cast(),
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// All the text the model was sent, over every recorded request: where a test looks for a refusal's
/// reason or added context, whichever field the agent put it in.
pub fn everything_sent(requests: &[Value]) -> String {
    requests
        .iter()
        .map(|r| r["body"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The JSON lines a hook appended to `path` (one hook input each), none when it wrote nothing yet.
pub fn logged_events(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The secret the redaction tests' tool prints. The command builds it with `printf`, so that the whole
/// token is never in the command's text, which the model is sent back with the call.
pub const TOKEN: &str = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
pub const PRINTS_TOKEN: &str = "printf 'token=ghp_%s\\n' 0123456789abcdefghijklmnopqrstuvwxyzAB";

/// A PostToolUse hook in python3 that logs its input to `@DIR@/post.jsonl` and answers
/// `{"output": ...}`: the event's `tool_response`, whatever its shape, with every `ghp_` token in its
/// strings replaced by `[REDACTED]` (nothing when there is none).
pub const REDACT_PY: &str = r#"import json, re, sys
event = json.load(sys.stdin)
with open("@DIR@/post.jsonl", "a") as log:
    log.write(json.dumps(event) + "\n")
def redact(value):
    if isinstance(value, str):
        return re.sub(r"ghp_[A-Za-z0-9]+", "[REDACTED]", value)
    if isinstance(value, list):
        return [redact(v) for v in value]
    if isinstance(value, dict):
        return {k: redact(v) for k, v in value.items()}
    return value
response = event.get("tool_response")
redacted = redact(response)
if redacted != response:
    print(json.dumps({"output": redacted}))
"#;

/// The settings of `sb`: [`REDACT_PY`] as a PostToolUse hook on `Bash`.
pub fn redact_hook(sb: &Sandbox) {
    std::fs::write(sb.p("redact.py"), sb.expand(REDACT_PY)).expect("writing redact.py");
    sb.settings(
        "[[hooks.PostToolUse]]\nname = \"redact\"\nmatcher = \"Bash\"\ncommand = \"python3 @DIR@/redact.py\"\n",
    );
}

/// The settings of `sb`: [`REDACT_PY`] and, after it, a hook that refuses every Bash call's result
/// (exit 2, `E2E-JUDGE-7d1: ...` on stderr): a refusal after the tool ran, which must not cost the
/// redaction.
pub fn redact_and_refuse_hooks(sb: &Sandbox) {
    redact_hook(sb);
    sb.settings(
        "[[hooks.PostToolUse]]\nname = \"redact\"\nmatcher = \"Bash\"\ncommand = \"python3 @DIR@/redact.py\"\n\n\
         [[hooks.PostToolUse]]\nname = \"judge\"\nmatcher = \"Bash\"\ncommand = \"cat > /dev/null; echo E2E-JUDGE-7d1: that printed a secret >&2; exit 2\"\n",
    );
}

/// Asserts that the refusal an agent's session met is in the record as `hookd log --refused` shows it:
/// a fire of `agent`, through the relay, with the session id the agent gave (as the refusing hook saw it
/// in `hook_input`), the command, and the reason containing `reason`. The journal is written a tick
/// after the fire, so this waits for it (with a deadline).
pub fn assert_refusal_in_log(daemon: &Daemon, agent: &str, hook_input: &Value, reason: &str) {
    let session = hook_input["session_id"]
        .as_str()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| panic!("the hook was given no session id: {hook_input}"));
    let logged = || -> Vec<Value> {
        let mut cmd = Command::new(BIN);
        cmd.args([
            "log",
            "--json",
            "--refused",
            "--agent",
            agent,
            "--session",
            session,
        ])
        .env("XDG_STATE_HOME", state_home_for(&daemon.socket));
        let out = run_with_deadline(cmd, None, Duration::from_secs(20));
        assert!(out.status.success(), "hookd log failed: {out:?}");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
            .collect()
    };
    let mut found = Vec::new();
    wait_until(Duration::from_secs(10), "the refusal in hookd log", || {
        found = logged();
        !found.is_empty()
    });
    assert_eq!(found.len(), 1, "one refusal in this session: {found:?}");
    let record = &found[0];
    assert_eq!(record["kind"], "fire", "{record}");
    assert_eq!(record["source"], "relay", "{record}");
    assert_eq!(record["agent"], agent, "{record}");
    assert_eq!(record["session"], session, "{record}");
    assert_eq!(record["moment"], "PreToolUse", "{record}");
    assert_eq!(
        record["summary"], hook_input["tool_input"]["command"],
        "the command that was refused: {record}"
    );
    let said = record["verdict"]["reason"].as_str().unwrap_or_default();
    assert!(said.contains(reason), "the reason in the record: {record}");
}

/// The refused fires in the journal of `daemon`, in order, once `count` of them are written: each
/// one's tool, summary (the command of a shell call) and the names of the hooks that refused it
/// (`hookd:protect` for hookd's guard of itself).
pub fn refused_fires(daemon: &Daemon, count: usize) -> Vec<(String, String, Vec<String>)> {
    let journal = state_home_for(&daemon.socket).join("hookd/journal.jsonl");
    let read = || -> Vec<(String, String, Vec<String>)> {
        fs::read_to_string(&journal)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|r| r["kind"] == "fire" && r["verdict"]["refused"] == true)
            .map(|r| {
                let hooks = r["hooks"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|h| h["outcome"] == "refused")
                    .map(|h| h["name"].as_str().unwrap_or("").to_string())
                    .collect();
                let field = |name: &str| r[name].as_str().unwrap_or("").to_string();
                (field("tool"), field("summary"), hooks)
            })
            .collect()
    };
    let mut fires = Vec::new();
    wait_until(
        Duration::from_secs(10),
        "the refusals in the journal",
        || {
            fires = read();
            fires.len() >= count
        },
    );
    fires
}

/// What every real-agent test is marked with: `cargo test` leaves them out, and says so with this, since
/// they need root (network namespaces) and about 900 MB from the npm registry; `.ci/agents` runs them.
pub const LEFT_OUT: &str =
    "a real agent: bash .ci/agents, or cargo test --test it e2e_ -- --ignored (root, npm)";

/// Every test of the real-agent suites carries the `ignore` that `.ci/agents` lifts, with the text that
/// says how to run it: one without it would make `cargo test` need root and npm again.
#[test]
fn every_real_agent_test_is_left_to_the_explicit_step() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let mut suites = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !(name.starts_with("e2e_") && name.ends_with(".rs")) {
            continue;
        }
        suites += 1;
        let text = fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let mut tests = 0;
        for (i, line) in lines.iter().enumerate() {
            if line.trim() == "#[test]" {
                tests += 1;
                assert_eq!(
                    lines.get(i + 1).map(|l| l.trim()),
                    Some(format!("#[ignore = \"{LEFT_OUT}\"]").as_str()),
                    "{name}:{}: a real-agent test must be marked #[ignore = LEFT_OUT's text]",
                    i + 1
                );
            }
        }
        assert!(tests > 0, "{name} has no test");
    }
    assert_eq!(
        suites, 6,
        "one suite for each of the five agents, and the table of the scenarios they share"
    );
}
