//! `hookd import` and `hookd setup` over the hook settings files people committed to public repositories
//! (`../shared/corpus/agent-settings/`, beside the checkout as CI has it; its `index.json` names each
//! one's agent, repository, path and commit). The files are read where they are, never copied into the
//! repository, and nothing in them is run: import only converts a file, check only reads the result,
//! setup only merges text.
//!
//! Every file goes through the library in-process (the commands are thin shells over it): the import
//! is valid settings and complete, each hook carried over or its drop said in a comment; setup's merge
//! keeps every other key and user hook, a second merge changes nothing, and what `--undo` compares finds
//! nothing but hookd's hooks added, so that it gives the original bytes back. A sample goes through the
//! real binary too, as a user runs it: `hookd import`, `hookd check` on the import, `hookd setup AGENT
//! --file COPY` on a copy in a folder of its own (its own HOME and XDG folders), setup again, `--undo`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use hookd::agents::setup::{self, Wanted};
use hookd::agents::{Agent, SettingsFormat, import, snippet};
use hookd::settings::{Program, Settings};
use serde_json::Value;

use crate::common::*;

/// A safety net for one command (never a speed assertion).
const T: Duration = Duration::from_secs(30);

const HOOKD: &str = "/usr/local/bin/hookd";
const RELAY: &str = "/usr/local/bin/hookd-relay";
const CODEX_FILE: &str = "/home/me/.codex/config.toml";

/// One file of the corpus, as `index.json` names it.
struct Entry {
    /// Its name in the corpus (`claude-code/001.json`).
    file: String,
    agent: Agent,
    /// Its path in its repository (`.claude/settings.json`): what tells a TOML file from a JSON one.
    path: String,
    text: String,
}

/// The corpus's folder: `../shared/corpus/agent-settings` beside the checkout (where CI has it), or
/// under `HOOKD_TEST_SHARED` for a checkout elsewhere (a git worktree) that names the shared folder.
fn corpus_folder() -> PathBuf {
    let shared = std::env::var_os("HOOKD_TEST_SHARED")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    shared.join("corpus/agent-settings")
}

/// Every file of the corpus; `None` (the test then returns) when the corpus is not there and the tests
/// are not strict.
fn corpus() -> Option<Vec<Entry>> {
    let folder = corpus_folder();
    let index = folder.join("index.json");
    if !require(
        index.is_file(),
        &format!(
            "the corpus of agents' settings files is not at {} (CI has ../shared beside the checkout; HOOKD_TEST_SHARED names it elsewhere): import and setup go untested on the files people write",
            folder.display()
        ),
    ) {
        return None;
    }
    let index: Value = serde_json::from_str(&fs::read_to_string(&index).unwrap()).unwrap();
    let entries: Vec<Entry> = index["files"]
        .as_array()
        .expect("index.json lists files")
        .iter()
        .map(|f| {
            let file = f["file"].as_str().unwrap().to_string();
            let agent = Agent::from_name(f["agent"].as_str().unwrap()).unwrap();
            let text = fs::read_to_string(folder.join("files").join(&file))
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            Entry {
                file,
                agent,
                path: f["path"].as_str().unwrap().to_string(),
                text,
            }
        })
        .collect();
    assert!(entries.len() > 200, "{} files", entries.len());
    Some(entries)
}

/// The file's text as a JSON value (a TOML file converted).
fn value_of(entry: &Entry) -> Value {
    if entry.path.ends_with(".toml") {
        let table: toml::Table = entry.text.parse().unwrap();
        serde_json::to_value(table).unwrap()
    } else {
        serde_json::from_str(&entry.text).unwrap_or_else(|e| panic!("{}: {e}", entry.file))
    }
}

/// A hook's command as its agent's file gives it (Copilot CLI's `bash`).
fn command_of(hook: &Value) -> Option<&str> {
    hook.get("command")
        .or_else(|| hook.get("bash"))
        .and_then(Value::as_str)
}

/// Every hook of the file at its place as import names it (`hooks.Stop[0].hooks[1]`), with the places
/// of its group and its event, which may be what a drop names instead.
fn hook_places(entry: &Entry, root: &Value) -> Vec<(String, [String; 3], Option<String>)> {
    let mut places = Vec::new();
    let Some(events) = root.get("hooks").and_then(Value::as_object) else {
        return places;
    };
    let flat = entry.agent.row().settings.format == SettingsFormat::CopilotJson;
    for (event, groups) in events {
        if entry
            .agent
            .row()
            .import
            .setting_keys
            .contains(&event.as_str())
        {
            continue;
        }
        let event_place = format!("hooks.{event}");
        let odd_name = format!("hooks[{event:?}]");
        let Some(groups) = groups.as_array() else {
            places.push((
                event_place.clone(),
                [event_place, odd_name, String::new()],
                None,
            ));
            continue;
        };
        for (g, group) in groups.iter().enumerate() {
            let group_place = format!("{event_place}[{g}]");
            let covering = [event_place.clone(), odd_name.clone(), group_place.clone()];
            match group.get("hooks").and_then(Value::as_array) {
                Some(hooks) => {
                    for (h, hook) in hooks.iter().enumerate() {
                        places.push((
                            format!("{group_place}.hooks[{h}]"),
                            covering.clone(),
                            command_of(hook).map(String::from),
                        ));
                    }
                }
                None if flat && group.is_object() && group.get("hooks").is_none() => {
                    places.push((group_place, covering, command_of(group).map(String::from)));
                }
                None => places.push((group_place, covering, None)),
            }
        }
    }
    places
}

/// The place each `# not converted: PLACE ...` line of an import names.
fn dropped_places(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|line| line.strip_prefix("# not converted: "))
        .map(|rest| {
            // A place ends at the first space or colon outside quotes (hooks["weird event"] holds both).
            let mut quoted = false;
            let end = rest
                .char_indices()
                .find(|&(_, c)| {
                    if c == '"' {
                        quoted = !quoted;
                    }
                    !quoted && (c == ' ' || c == ':')
                })
                .map_or(rest.len(), |(i, _)| i);
            rest[..end].to_string()
        })
        .collect()
}

/// The import of one file: valid settings (as `hookd check` reads them), every hook of the file either
/// carried over (its command the same) or its drop said, and a too short timeout warned of.
fn import_holds(entry: &Entry, problems: &mut Vec<String>) {
    let label = format!("/corpus/{}", entry.path);
    let root = value_of(entry);
    let imported = match import::convert(&entry.text, &label, Some(entry.agent)) {
        Ok(imported) => imported,
        Err(e) => {
            // Refused only where there is nothing to import, and said on one line in the file's terms.
            let has_hooks = root.get("hooks").is_some_and(Value::is_object);
            let toml_terms = !entry.path.ends_with(".toml") || !e.contains('{');
            if has_hooks || e.lines().count() != 1 || !toml_terms {
                problems.push(format!("{}: import refused: {e}", entry.file));
            }
            return;
        }
    };
    let out = &imported.toml;
    let settings = match Settings::parse(Path::new("/corpus/hooks.toml"), "hooks.toml", out) {
        Ok(settings) => settings,
        Err(e) => {
            problems.push(format!(
                "{}: the import fails check: {e}\n{out}",
                entry.file
            ));
            return;
        }
    };
    let warnings = hookd::agents::settings_warnings(&settings);
    let dropped = dropped_places(out);
    let mut carried: Vec<String> = Vec::new();
    for (place, covering, command) in hook_places(entry, &root) {
        if out.contains(&format!("# from {place}\n")) {
            match command {
                Some(command) => carried.push(command),
                None => problems.push(format!("{}: {place} carried without a command", entry.file)),
            }
        } else if !dropped.contains(&place) && !covering.iter().any(|c| dropped.contains(c)) {
            problems.push(format!(
                "{}: {place} neither carried over nor said dropped:\n{out}",
                entry.file
            ));
        }
    }
    let mut imported_commands: Vec<String> = settings
        .hooks
        .iter()
        .flat_map(|(_, hooks)| hooks)
        .map(|hook| match &hook.program {
            Program::Shell { command, .. } => command.clone(),
            other => panic!("{}: import wrote {other:?}", entry.file),
        })
        .collect();
    carried.sort();
    imported_commands.sort();
    if carried != imported_commands {
        problems.push(format!(
            "{}: the commands carried over differ:\n{carried:?}\n{imported_commands:?}",
            entry.file
        ));
    }
    for hook in settings
        .hooks
        .iter()
        .flat_map(|(_, hooks)| hooks)
        .filter(|h| h.enabled)
    {
        let short = hook.timeout.as_secs_f64() < hookd::limits::SHORT_COMMAND_TIMEOUT_SECS;
        let checked = warnings
            .iter()
            .any(|w| w.starts_with(&format!("hook \"{}\" has a timeout of", hook.name)));
        let on_stderr = imported.warnings.iter().any(|w| w.contains("too short"));
        if short && !(checked && on_stderr) {
            problems.push(format!(
                "{}: hook {} given {:?} is not warned of ({warnings:?}, {:?})",
                entry.file, hook.name, hook.timeout, imported.warnings
            ));
        }
    }
}

/// The user's part of a file: every key but `hooks`, and under `hooks` every setting and every event's
/// list with hookd's hooks (and the groups left empty by taking them out) taken out. Codex's trust
/// records are compared as the records of the file as it was.
fn users_part(agent: Agent, root: &Value) -> Value {
    let mut root = root.clone();
    let flat = agent.row().settings.format == SettingsFormat::CopilotJson;
    let is_hookd =
        |hook: &Value| command_of(hook).is_some_and(|c| setup::is_hookd_command(c, HOOKD));
    if let Some(events) = root.get_mut("hooks").and_then(Value::as_object_mut) {
        for (event, list) in events.iter_mut() {
            if agent.row().import.setting_keys.contains(&event.as_str()) {
                continue;
            }
            let Some(items) = list.as_array_mut() else {
                continue;
            };
            items.retain_mut(|item| {
                if flat {
                    return !is_hookd(item);
                }
                let Some(hooks) = item.get_mut("hooks").and_then(Value::as_array_mut) else {
                    return true;
                };
                let before = hooks.len();
                hooks.retain(|h| !is_hookd(h));
                !(hooks.is_empty() && before > 0)
            });
        }
        // An event only hookd's hooks are under, which the file did not have, is none of the user's.
        events.retain(|_, list| !matches!(list, Value::Array(items) if items.is_empty()));
    }
    root
}

/// Setup's merge of one file, as `hookd setup AGENT --file COPY` makes it: refused only for a file of
/// the other format (said in its terms) or a `hooks` of a shape no agent reads; else every other key
/// and user hook kept, hookd's hooks on each of the agent's events, a second merge the same, and the
/// file as `--undo` compares it nothing but the original with hookd's hooks.
fn setup_holds(entry: &Entry, problems: &mut Vec<String>) {
    let agent = entry.agent;
    let label = format!("/corpus/{}", entry.path);
    if let Some(refusal) = setup::wrong_kind_of_file(agent, Path::new(&entry.path)) {
        if !(agent == Agent::Codex
            && entry.path.ends_with(".json")
            && refusal.contains("config.toml"))
        {
            problems.push(format!("{}: refused by its name: {refusal}", entry.file));
        }
        return;
    }
    let command = snippet::relay_command(agent, RELAY, &snippet::RelayFlags::default());
    let wanted = Wanted {
        agent,
        command: &command,
        hookd: HOOKD,
        codex_file: CODEX_FILE,
    };
    let merged = match setup::merge(&entry.text, &label, &wanted) {
        Ok(merged) => merged,
        Err(e) => {
            // A "hooks" of a shape no agent reads (an event that is an object, not a list) is refused.
            let odd = root_events(entry).iter().any(|(event, list)| {
                !list.is_array() && !agent.row().import.setting_keys.contains(&event.as_str())
            });
            if !odd || e.lines().count() != 1 || !e.contains("not a list") {
                problems.push(format!("{}: setup refused: {e}", entry.file));
            }
            return;
        }
    };
    match setup::merge(&merged, &label, &wanted) {
        Ok(again) if again == merged => {}
        Ok(_) => problems.push(format!("{}: a second setup changes the file", entry.file)),
        Err(e) => problems.push(format!("{}: a second setup refused: {e}", entry.file)),
    }
    match setup::without_hookd(&entry.text, &label, &wanted) {
        Ok(None) => {}
        other => problems.push(format!(
            "{}: the backup would not be the original bytes: {other:?}",
            entry.file
        )),
    }
    if !setup::same_apart_from_hookd(&merged, &entry.text, &wanted) {
        problems.push(format!(
            "{}: --undo would refuse right after setup",
            entry.file
        ));
    }
    match setup::drift(&merged, &label, &wanted) {
        Ok(drift) if drift.is_empty() => {}
        other => problems.push(format!(
            "{}: drift right after setup: {other:?}",
            entry.file
        )),
    }
    let found = setup::found_hooks(&merged, &label, &wanted).unwrap_or_default();
    let mut events: Vec<&str> = found.iter().map(|h| h.event.as_str()).collect();
    events.dedup();
    if found.len() != agent.moments().len() || events.len() != found.len() {
        problems.push(format!(
            "{}: {} of hookd's hooks, on {events:?}",
            entry.file,
            found.len()
        ));
    }
    if let Some(line) = layout_lost(&entry.text, &merged) {
        problems.push(format!(
            "{}: the file's layout was not kept (its line {line:?} is gone):\n{merged}",
            entry.file
        ));
    }
    let merged_value = if entry.path.ends_with(".toml") {
        serde_json::to_value(merged.parse::<toml::Table>().unwrap()).unwrap()
    } else {
        serde_json::from_str(&merged).unwrap()
    };
    let (before, after) = (value_of(entry), users_part(agent, &merged_value));
    if !kept(&before, &after, agent) {
        problems.push(format!(
            "{}: a key or user hook was not kept:\n{}\n---\n{merged}",
            entry.file, entry.text
        ));
    }
}

/// The first line of `original` that `merged` does not keep, in order (a comma added at its end
/// allowed: an entry now follows it); a file on one line must stay on one line. The lines the merge
/// must change are not looked for: an empty list (`"Stop": []`) that hookd's hook goes into, and the
/// closing brackets of a list that continues after them (`}]` in a file that cuddles its brackets).
fn layout_lost(original: &str, merged: &str) -> Option<String> {
    if original.trim_end().lines().count() == 1 && merged.trim_end().lines().count() != 1 {
        return Some(original.to_string());
    }
    let mut lines = merged.lines();
    let changed = |line: &str| {
        let line = line.trim().trim_end_matches(',');
        line.ends_with("[]") || line.starts_with("}]")
    };
    for line in original.lines().filter(|line| !changed(line)) {
        let with_comma = format!("{line},");
        if !lines.any(|m| m == line || m == with_comma) {
            return Some(line.to_string());
        }
    }
    None
}

/// The events of the file's `hooks` object.
fn root_events(entry: &Entry) -> BTreeMap<String, Value> {
    value_of(entry)
        .get("hooks")
        .and_then(Value::as_object)
        .map(|events| events.clone().into_iter().collect())
        .unwrap_or_default()
}

/// Whether the user's part `after` of the merged file holds everything of the original `before`:
/// equal, but for the events the original had as empty lists, Codex's trust records setup added, and
/// an empty `hooks` the original did not have.
fn kept(before: &Value, after: &Value, agent: Agent) -> bool {
    let mut before = before.clone();
    let mut after = after.clone();
    if let Some(events) = before.get_mut("hooks").and_then(Value::as_object_mut) {
        events.retain(|_, list| !matches!(list, Value::Array(items) if items.is_empty()));
    }
    if agent == Agent::Codex {
        // hookd's own records go; every record the file had stays as it was.
        let records = |v: &Value| v["hooks"]["state"].as_object().cloned().unwrap_or_default();
        let (had, has) = (records(&before), records(&after));
        if had.iter().any(|(k, v)| has.get(k) != Some(v)) {
            return false;
        }
        for v in [&mut before, &mut after] {
            if let Some(hooks) = v.get_mut("hooks").and_then(Value::as_object_mut) {
                hooks.remove("state");
            }
        }
    }
    for v in [&mut before, &mut after] {
        if let Some(root) = v.as_object_mut()
            && root
                .get("hooks")
                .is_some_and(|h| h.as_object().is_some_and(|h| h.is_empty()))
        {
            root.remove("hooks");
        }
    }
    before == after
}

/// Every file of the corpus through import (and check) and setup's merge, in-process: the properties
/// each must hold are in [`import_holds`] and [`setup_holds`]; every failure is listed, not only the first.
#[test]
fn every_file_people_wrote_imports_and_sets_up_keeping_all_of_it() {
    let Some(corpus) = corpus() else {
        return;
    };
    let mut problems = Vec::new();
    for entry in &corpus {
        import_holds(entry, &mut problems);
        setup_holds(entry, &mut problems);
    }
    assert!(
        problems.is_empty(),
        "{} problems in the corpus:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

// ---- the sample, through the real binary -----------------------------------------------------------

/// `hookd ARGS` in `home`: HOME, the XDG folders and hookd's socket all in it, no agent's variable.
fn hookd_in(home: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join(".state"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_RUNTIME_DIR", home.join(".run"))
        .env("HOOKD_SOCKET", home.join(".run/hookd.sock"))
        .env("HOOKD_CONFIG", home.join(".config/hookd/hooks.toml"));
    run_with_deadline(cmd, None, T)
}

/// The sample: the first file of each agent, a Codex hooks.json (which setup refuses, pointing at
/// config.toml), every file with an empty event list (which `--undo` once refused), and a Gemini CLI
/// file with a timeout too short to run.
fn sample(corpus: &[Entry]) -> Vec<&Entry> {
    let mut sample: Vec<&Entry> = Vec::new();
    for agent in Agent::ALL {
        sample.extend(corpus.iter().find(|e| e.agent == agent));
    }
    // A Codex hooks.json, which setup codex refuses, pointing at config.toml.
    sample.extend(
        corpus
            .iter()
            .find(|e| e.agent == Agent::Codex && e.path.ends_with(".json")),
    );
    let too_short = |entry: &Entry| {
        import::convert(&entry.text, &entry.path, Some(entry.agent))
            .is_ok_and(|i| i.warnings.iter().any(|w| w.contains("too short")))
    };
    let mut short_taken = false;
    for entry in corpus {
        let empty_list = root_events(entry)
            .values()
            .any(|list| list.as_array().is_some_and(Vec::is_empty));
        let short = !short_taken && entry.agent == Agent::GeminiCli && too_short(entry);
        short_taken |= short;
        if (empty_list || short) && !sample.iter().any(|e| e.file == entry.file) {
            sample.push(entry);
        }
    }
    sample
}

/// A sample of the corpus as a user runs it: `hookd import` then `hookd check` on what it printed, and
/// `hookd setup AGENT --file COPY` on a copy in a folder of its own, setup again (nothing changed), and
/// `setup --undo` (the original bytes back, the backup gone).
#[test]
fn a_sample_goes_through_the_real_binary_as_a_user_runs_it() {
    let Some(corpus) = corpus() else {
        return;
    };
    let folder = corpus_folder().join("files");
    let sample = sample(&corpus);
    assert!(
        sample.len() >= Agent::ALL.len() + 3,
        "{} files",
        sample.len()
    );
    for entry in sample {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        fs::create_dir_all(home.join(".run")).unwrap();
        fs::create_dir_all(home.join("proj")).unwrap();
        let name = Path::new(&entry.path).file_name().unwrap();
        let copy = home.join("proj").join(name);
        let original = fs::read(folder.join(&entry.file)).unwrap();
        fs::write(&copy, &original).unwrap();
        let copy_arg = copy.to_str().unwrap();
        let what = &entry.file;

        let out = hookd_in(home, &["import", "--agent", entry.agent.name(), copy_arg]);
        if code(&out.status) == 0 {
            let imported = home.join("imported.toml");
            fs::write(&imported, &out.stdout).unwrap();
            let check = hookd_in(home, &["check", "--config", imported.to_str().unwrap()]);
            assert_eq!(
                code(&check.status),
                0,
                "{what}: check: {}",
                text(&check.stderr)
            );
        } else {
            assert_eq!(
                text(&out.stderr).lines().count(),
                1,
                "{what}: {}",
                text(&out.stderr)
            );
        }

        let setup = ["setup", entry.agent.name(), "--file", copy_arg];
        let out = hookd_in(home, &setup);
        if code(&out.status) != 0 {
            assert_eq!(
                text(&out.stderr).lines().count(),
                1,
                "{what}: {}",
                text(&out.stderr)
            );
            if entry.agent == Agent::Codex && entry.path.ends_with(".json") {
                assert!(
                    text(&out.stderr).contains("hookd setup codex writes Codex's config.toml"),
                    "{what}: {}",
                    text(&out.stderr)
                );
            }
            assert_eq!(
                fs::read(&copy).unwrap(),
                original,
                "{what}: refused, yet changed"
            );
            continue;
        }
        let once = fs::read(&copy).unwrap();
        let out = hookd_in(home, &setup);
        assert_eq!(code(&out.status), 0, "{what}: {}", text(&out.stderr));
        assert!(
            text(&out.stdout).contains("nothing changed"),
            "{what}: {}",
            text(&out.stdout)
        );
        assert_eq!(
            fs::read(&copy).unwrap(),
            once,
            "{what}: the second setup changed it"
        );
        let undo = [&setup[..], &["--undo"]].concat();
        let out = hookd_in(home, &undo);
        assert_eq!(code(&out.status), 0, "{what}: undo: {}", text(&out.stderr));
        assert_eq!(
            fs::read(&copy).unwrap(),
            original,
            "{what}: undo left other bytes"
        );
        let mut backup = copy.as_os_str().to_owned();
        backup.push(".hookd-backup");
        assert!(!Path::new(&backup).exists(), "{what}: the backup is left");
    }
}
