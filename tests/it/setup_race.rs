//! `hookd setup` against a real concurrent writer: an edit the agent or an editor saves
//! while setup merges a large settings file is never written over. The writer here is a thread that
//! watches the file's folder with inotify and saves a new version of the file (a new file renamed over
//! it, as editors and agents save) each time a reader closes the file, a few times: so its edits land
//! while setup merges what it read, every time, with no delay hook in setup. Without the check before
//! the rename, setup wrote its merge of the first version over the writer's edit.

use std::fs;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use nix::libc;
use serde_json::{Value, json};

use crate::common::*;

/// How many edits the writer saves at most: fewer than the times setup merges again before it stops.
const EDITS: u32 = 3;

/// Entries in the large settings file: about 3.8 MB.
const LARGE: usize = 30_000;

/// The settings file of a user with many settings: a few MiB, so that merging it takes setup long
/// enough for the writer's save to land in the middle, with the writer's `edit` counter.
fn large_settings(edit: u32, entries: usize) -> String {
    let bulk: Vec<Value> = (0..entries)
        .map(|i| json!({"name": format!("entry {i}"), "allow": ["Bash(git status)", "Read"], "n": i}))
        .collect();
    let settings = json!({
        "edit": edit,
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./mine.sh"}]}]},
        "bulk": bulk,
    });
    serde_json::to_string_pretty(&settings).unwrap() + "\n"
}

/// Saves `text` as an editor does: a new file beside it, renamed over it.
fn save(file: &Path, text: &str) {
    let tmp = file.with_extension("json.writer");
    fs::write(&tmp, text).unwrap();
    fs::rename(&tmp, file).unwrap();
}

/// The writer: on each close of `file` by a reader (inotify's IN_CLOSE_NOWRITE on its folder), saves
/// the next edit of a file of `entries`, up to `edits`, until `stop`. Returns the last edit it saved.
fn writer(
    file: PathBuf,
    stop: Arc<AtomicBool>,
    edits: u32,
    entries: usize,
) -> std::thread::JoinHandle<u32> {
    let dir = file.parent().unwrap().to_path_buf();
    let name = file.file_name().unwrap().to_str().unwrap().to_string();
    let inotify = unsafe { libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK) };
    assert!(inotify >= 0, "inotify_init1");
    // Safety: a descriptor just made, owned here alone.
    let inotify = unsafe { OwnedFd::from_raw_fd(inotify) };
    let path = std::ffi::CString::new(dir.to_str().unwrap()).unwrap();
    let watch = unsafe {
        libc::inotify_add_watch(inotify.as_raw_fd(), path.as_ptr(), libc::IN_CLOSE_NOWRITE)
    };
    assert!(watch >= 0, "inotify_add_watch");
    // Each edit the same text but its counter: a save is then a write and a rename, done long before
    // setup has merged.
    let base = large_settings(0, entries);
    let edit_of = move |n: u32| base.replacen("\"edit\": 0", &format!("\"edit\": {n}"), 1);
    std::thread::spawn(move || {
        let mut edit = 0;
        let mut buf = [0u8; 4096];
        while edit < edits && !stop.load(Ordering::SeqCst) {
            let mut poll = libc::pollfd {
                fd: inotify.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            if unsafe { libc::poll(&mut poll, 1, 20) } <= 0 {
                continue;
            }
            let n = unsafe { libc::read(inotify.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                continue;
            }
            // Each event: wd (i32), mask (u32), cookie (u32), len (u32), then a name of len bytes.
            let mut at = 0;
            let mut closed = false;
            while at + 16 <= n as usize {
                let len = u32::from_ne_bytes(buf[at + 12..at + 16].try_into().unwrap()) as usize;
                let raw = &buf[at + 16..at + 16 + len];
                let event_name = String::from_utf8_lossy(raw);
                closed |= event_name.trim_end_matches('\0') == name;
                at += 16 + len;
            }
            if closed {
                edit += 1;
                save(&file, &edit_of(edit));
            }
        }
        edit
    })
}

#[test]
fn an_edit_saved_while_setup_merges_is_kept() {
    let sb = Sandbox::new();
    let dir = sb.p("claude");
    fs::create_dir(&dir).unwrap();
    let file = dir.join("settings.json");
    fs::write(&file, large_settings(0, LARGE)).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = writer(file.clone(), stop.clone(), EDITS, LARGE);
    let out = setup(&sb, &file);
    stop.store(true, Ordering::SeqCst);
    let last = writer.join().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(code(&out.status), 0, "setup failed: {stderr}");
    assert!(last >= 1, "the writer never saw setup read the file");

    let settings: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        settings["edit"], last,
        "the writer's last edit ({last}) was written over by setup"
    );
    let relay = format!("{RELAY_BIN} --agent claude-code");
    let pre = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"].clone();
    assert_eq!(pre, relay.as_str(), "hookd's hooks are not in");
    assert_eq!(
        settings["hooks"]["Stop"][0]["hooks"][0]["command"],
        "./mine.sh"
    );
    assert_eq!(settings["bulk"].as_array().unwrap().len(), LARGE);
}

/// `hookd setup claude-code --file FILE`, in the sandbox's own folders.
fn setup(sb: &Sandbox, file: &Path) -> std::process::Output {
    let mut cmd = Command::new(BIN);
    cmd.args(["setup", "claude-code", "--file", file.to_str().unwrap()])
        .env("HOME", sb.path())
        .env("XDG_STATE_HOME", sb.p("state"))
        .env("XDG_RUNTIME_DIR", sb.p("runtime"));
    run_with_deadline(cmd, None, Duration::from_secs(300))
}

/// A file saved again each time setup reads it: setup stops, says so, and writes nothing (the writer's
/// last edit stands, no backup is left).
#[test]
fn a_file_that_keeps_changing_is_left_to_its_writer() {
    let sb = Sandbox::new();
    let file = sb.p("settings.json");
    let entries = LARGE / 4;
    fs::write(&file, large_settings(0, entries)).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = writer(file.clone(), stop.clone(), 1_000, entries);
    let out = setup(&sb, &file);
    stop.store(true, Ordering::SeqCst);
    let last = writer.join().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(code(&out.status), 1, "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "hookd: {} kept changing while hookd setup merged it (8 times): nothing written, so that no edit is lost; run hookd setup again once the agent or editor saving it is done\n",
            file.display()
        )
    );
    let settings: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(settings["edit"], last);
    assert!(
        settings["hooks"].get("PreToolUse").is_none(),
        "{}",
        settings["hooks"]
    );
    assert!(!sb.p("settings.json.hookd-backup").exists());
    assert!(
        !sb.p("state/hookd/setup.json").exists(),
        "registered, though not set up"
    );
}
