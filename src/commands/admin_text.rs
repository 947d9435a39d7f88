//! The daemon's answers to `status` and `reload`, for people at a terminal: what `systemctl status` would
//! show of a service, and what a reload did. Scripts get the JSON line instead (`--json`, or stdout not a
//! terminal), unchanged. Every string that came from the settings file or an event (a path, a hook's name,
//! an error) is shown with its control characters made harmless.

use std::fmt::Write;

use serde_json::Value;

use crate::commands::record_text::ms;
use crate::commands::style::{Style, clean, painted};
use crate::protocol::{ErrorResponse, HttpState, ProtectStatus, StatusResponse};

const GREEN: Style = Style::Good;
const YELLOW: Style = Style::Caution;
const RED: Style = Style::Alarm;

/// The settings file the daemon serves, as this client finds it: not there, so that no settings file is
/// in force (the daemon serves no hooks until it appears), and the file a typo away, if one.
#[derive(Debug, Clone, Default)]
pub struct NoSettingsFile {
    pub near: Option<String>,
}

/// `hookd status` for people; `no_file` when the settings file it serves is not there.
pub fn status(
    status: &StatusResponse,
    socket: &str,
    no_file: Option<&NoSettingsFile>,
    colour: bool,
) -> String {
    let mut out = String::new();
    // A file gone after it was read keeps its settings in force: the refused reload says so already.
    let no_file = no_file.filter(|_| status.last_reload.ok);
    let mut troubles = troubles(status);
    if let Some(no_file) = no_file {
        troubles.insert(0, no_settings_file(&status.config, no_file));
    }
    let (dot, state) = if troubles.is_empty() {
        (
            painted("●", GREEN, colour),
            painted("running", GREEN, colour),
        )
    } else {
        (
            painted("●", YELLOW, colour),
            painted("running, with trouble", YELLOW, colour),
        )
    };
    let _ = writeln!(
        out,
        "{dot} hookd {} — {state} for {}, pid {}",
        clean(&status.version),
        duration(status.uptime_s),
        status.pid
    );
    let total: u64 = status.hooks.values().filter_map(Value::as_u64).sum();
    let per_moment: Vec<String> = status
        .hooks
        .iter()
        .filter_map(|(moment, n)| n.as_u64().filter(|n| *n > 0).map(|n| (moment, n)))
        .map(|(moment, n)| format!("{} {n}", clean(moment)))
        .collect();
    let mut field = |name: &str, value: String| {
        let _ = writeln!(out, "  {name:>11}: {value}");
    };
    field(
        "settings",
        match no_file {
            Some(_) => painted(
                &format!(
                    "{} (no such file: no settings in force)",
                    clean(&status.config)
                ),
                YELLOW,
                colour,
            ),
            None => clean(&status.config),
        },
    );
    let reload = &status.last_reload;
    field(
        "generation",
        format!(
            "{}, loaded {}",
            status.generation,
            clean(&reload.at.replace('T', " ").replace('Z', " UTC"))
        ),
    );
    if !reload.ok {
        field(
            "last edit",
            painted(
                &format!(
                    "refused, the settings above kept: {}",
                    clean(reload.error.as_deref().unwrap_or("invalid"))
                ),
                RED,
                colour,
            ),
        );
    }
    if let Some(weakened) = &status.last_weakened {
        // The generation and when on the field's line, then each change on a line of its own beneath.
        let mut value = painted(
            &format!(
                "generation {}, {}",
                weakened.generation,
                clean(&weakened.at.replace('T', " ").replace('Z', " UTC"))
            ),
            YELLOW,
            colour,
        );
        for change in &weakened.changes {
            let _ = write!(
                value,
                "\n{:15}{}",
                "",
                painted(&clean(&change.words()), YELLOW, colour)
            );
        }
        field("weakened", value);
    }
    if let Some(protect) = &status.protect {
        field("protect", protection(protect, colour));
    }
    field(
        "hooks",
        if per_moment.is_empty() {
            format!("{total}")
        } else {
            format!("{total}: {}", per_moment.join(", "))
        },
    );
    if let Some(layers) = &status.layers {
        for (name, value) in layer_fields(layers, colour) {
            field(name, value);
        }
    }
    field("socket", clean(socket));
    field(
        "connections",
        format!(
            "{} open (at most {}), {} fire{} in flight",
            status.connections.open,
            status.connections.limit,
            status.in_flight,
            plural(status.in_flight as u64)
        ),
    );
    field(
        "http",
        match status.http.state {
            HttpState::Listening => format!(
                "listening on {}",
                clean(status.http.listen.as_deref().unwrap_or("?"))
            ),
            HttpState::Off => "off".to_string(),
            HttpState::Moving => format!(
                "moving to {}",
                clean(status.http.listen.as_deref().unwrap_or("?"))
            ),
            HttpState::Error => painted(
                &format!(
                    "cannot listen on {}: {}",
                    clean(status.http.listen.as_deref().unwrap_or("?")),
                    clean(status.http.error.as_deref().unwrap_or("?"))
                ),
                RED,
                colour,
            ),
        },
    );
    for (hook, processes) in &status.workers {
        field("worker", worker(hook, processes, colour));
    }
    if let Some(export) = status.export.as_ref().filter(|e| e.state != "off") {
        field("export", export_text(export));
    }
    if let Some(record) = &status.record {
        let value = if !record.enabled {
            "off ([record] enabled = false)".to_string()
        } else {
            let mut value = format!(
                "{}, {} written, {} dropped, {} watching",
                clean(&record.journal),
                record.written,
                record.dropped,
                record.watchers
            );
            if let Some(error) = &record.error {
                value.push_str(&painted(
                    &format!("; cannot write: {}", clean(error)),
                    RED,
                    colour,
                ));
            }
            value
        };
        field("record", value);
        if !record.moments.is_empty() {
            let width = name_width(record.moments.keys());
            let _ = writeln!(
                out,
                "\n  {:<width$}  {:>7}  {:>7}  {:>7}  {:>7}",
                "FIRES SINCE START", "fires", "refused", "asked", "failed"
            );
            for (moment, counts) in &record.moments {
                let _ = writeln!(
                    out,
                    "  {:<width$}  {:>7}  {:>7}  {:>7}  {:>7}",
                    clean(moment),
                    counts.fires,
                    counts.refused,
                    counts.asked,
                    counts.failed
                );
            }
        }
        if !record.hooks.is_empty() {
            let width = name_width(record.hooks.keys());
            let _ = writeln!(
                out,
                "\n  {:<width$}  {:>7}  {:>9}  {:>9}",
                "HOOKS, RECENT RUNS", "runs", "p50", "p99"
            );
            for (hook, times) in &record.hooks {
                let _ = writeln!(
                    out,
                    "  {:<width$}  {:>7}  {:>9}  {:>9}",
                    clean(hook),
                    times.runs,
                    ms(times.p50_ms),
                    ms(times.p99_ms)
                );
            }
        }
    }
    if !troubles.is_empty() {
        let _ = writeln!(out);
        for trouble in troubles {
            let _ = writeln!(out, "{}", painted(&format!("! {trouble}"), YELLOW, colour));
        }
    }
    out
}

/// The layers' lines of `status`: the hooks per layer and the managed layer's files and policy, then a
/// line per repository fires came from, its pending hooks (never silent) and a refused hooks file.
fn layer_fields(layers: &Value, colour: bool) -> Vec<(&'static str, String)> {
    let mut lines = Vec::new();
    let mut parts: Vec<String> = ["managed", "user"]
        .iter()
        .filter_map(|layer| {
            layers["hooks"][*layer]
                .as_u64()
                .map(|n| format!("{layer} {n}"))
        })
        .collect();
    let files: Vec<String> = layers["managed"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(clean)
        .collect();
    if !files.is_empty() {
        parts.push(format!("managed files {}", files.join(", ")));
    }
    for policy in ["allow_managed_hooks_only", "require_fail_closed"] {
        if layers[policy] == true {
            parts.push(policy.to_string());
        }
    }
    if !parts.is_empty() {
        lines.push(("layers", parts.join("; ")));
    }
    for project in layers["projects"].as_array().into_iter().flatten() {
        let root = clean(project["root"].as_str().unwrap_or("?"));
        let hooks = project["hooks"].as_u64().unwrap_or(0);
        let pending: Vec<String> = project["pending"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(clean)
            .collect();
        let mut value = if let Some(why) = project["pending_unknown"].as_str() {
            painted(
                &format!(
                    "{root}: {hooks} hook{}, which of them are pending not known: {}",
                    plural(hooks),
                    clean(why)
                ),
                YELLOW,
                colour,
            )
        } else if pending.is_empty() {
            format!("{root}: {hooks} hook{}, trusted", plural(hooks))
        } else {
            painted(
                &format!(
                    "{root}: {hooks} hook{}, {} pending (not run until `hookd trust {root}`): {}",
                    plural(hooks),
                    pending.len(),
                    pending.join(", ")
                ),
                YELLOW,
                colour,
            )
        };
        if let Some(error) = project["error"].as_str() {
            let _ = write!(
                value,
                "\n{:15}{}",
                "",
                painted(
                    &format!(
                        "its hooks file refused (the last good hooks kept): {}",
                        clean(error.lines().next().unwrap_or(error))
                    ),
                    RED,
                    colour
                )
            );
        }
        lines.push(("project", value));
    }
    lines
}

/// The trouble of a settings file that is not there: what the daemon waits for, and the near name.
fn no_settings_file(config: &str, no_file: &NoSettingsFile) -> String {
    let mut said = format!(
        "no settings file is in force: hookd serves no hooks until {} appears",
        clean(config)
    );
    if let Some(near) = &no_file.near {
        let near = clean(near);
        let _ = write!(
            said,
            "; did you mean {near}? (start it with --config {near}, or rename the file)"
        );
    }
    said
}

/// The export in one line: where, how far, what went wrong last.
fn export_text(export: &crate::protocol::ExportStatus) -> String {
    let mut value = format!(
        "{} ({}): {}, {} sent, {} bytes of the journal to send",
        clean(export.endpoint.as_deref().unwrap_or("?")),
        clean(export.protocol.as_deref().unwrap_or("?")),
        export.state.replace('_', " "),
        export.sent,
        export.backlog_bytes
    );
    if let Some(last) = &export.last_sent {
        let _ = write!(value, ", last at {}", clean(last));
    }
    if export.refused > 0 {
        let _ = write!(value, ", {} refused by the collector", export.refused);
    }
    if let Some(error) = &export.last_error {
        let _ = write!(value, "; last error: {}", clean(error));
    }
    value
}

/// What in a status needs someone's attention, one line each.
fn troubles(status: &StatusResponse) -> Vec<String> {
    let mut troubles = Vec::new();
    if !status.last_reload.ok {
        troubles.push(
            "the last edit of the settings was refused: fix it (`hookd check` shows every error)"
                .to_string(),
        );
    }
    if status.http.state == HttpState::Error {
        troubles.push("the http listener is down: agents' http hooks get no answer".to_string());
    }
    if let Some(export) = status.export.as_ref().filter(|e| e.state == "retrying") {
        troubles.push(format!(
            "the export to {} is not getting through: records wait in the journal and are sent once it does",
            clean(export.endpoint.as_deref().unwrap_or("?"))
        ));
    }
    if let Some(record) = &status.record {
        if record.error.is_some() {
            troubles.push("the journal cannot be written: decisions go unrecorded".to_string());
        }
        if record.dropped > 0 {
            troubles.push(format!(
                "{} record{} dropped: the journal's writer fell behind",
                record.dropped,
                plural(record.dropped)
            ));
        }
    }
    for (hook, processes) in &status.workers {
        let failing = processes
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| p["state"] == "failing");
        if failing {
            troubles.push(format!(
                "worker hook {} keeps failing: see its last error",
                clean(hook)
            ));
        }
    }
    troubles
}

/// hookd's guard of itself: `on`, `on, 2 extra paths`, or `off` in red.
fn protection(protect: &ProtectStatus, colour: bool) -> String {
    match (protect.enabled, protect.paths) {
        (false, _) => painted(
            "off ([protect] enabled = false): agents may edit hookd's settings and stop it",
            RED,
            colour,
        ),
        (true, 0) => "on".to_string(),
        (true, n) => format!("on, {n} extra path{}", plural(n as u64)),
    }
}

/// A worker hook's processes on one line: `policy: running (pid 4243), 0 restarts`.
fn worker(hook: &str, processes: &Value, colour: bool) -> String {
    let shown: Vec<String> = processes
        .as_array()
        .into_iter()
        .flatten()
        .map(|process| {
            let state = process["state"].as_str().unwrap_or("?");
            let mut text = clean(state);
            if let Some(pid) = process["pid"].as_u64() {
                let _ = write!(text, " (pid {pid})");
            }
            let restarts = process["restarts"].as_u64().unwrap_or(0);
            let _ = write!(text, ", {restarts} restart{}", plural(restarts));
            if let Some(n) = process["out_of_step"].as_u64().filter(|n| *n > 0) {
                let _ = write!(text, ", {n} out of step");
            }
            if let Some(n) = process["banners"].as_u64().filter(|n| *n > 0) {
                let _ = write!(text, ", {n} banner{} dropped", plural(n));
            }
            if let Some(error) = process["last_error"].as_str() {
                let _ = write!(text, ", last error: {}", clean(error));
            }
            match state {
                "running" => text,
                "failing" | "stopped" => painted(&text, RED, colour),
                _ => painted(&text, YELLOW, colour),
            }
        })
        .collect();
    format!("{}: {}", clean(hook), shown.join("; "))
}

/// `hookd reload` for people, when it reloaded.
pub fn reloaded(generation: u64, colour: bool) -> String {
    format!(
        "{} the settings, now generation {generation}\n",
        painted("reloaded", GREEN, colour)
    )
}

/// `hookd reload` for people, when the daemon refused the file or could not reload: said once, every
/// error on its line. The daemon's message already says that the last good settings stay; a line of
/// ours saying it again would be the same thing said twice.
pub fn reload_refused(error: &ErrorResponse, colour: bool) -> String {
    let mut out = format!(
        "{} {}\n",
        painted("reload refused:", RED, colour),
        clean(&error.error.message)
    );
    for line in &error.error.errors {
        let _ = writeln!(out, "  {}", clean(line));
    }
    out
}

/// Seconds as `3d 4h`, `2h 5m`, `4m 10s` or `12s`: the two largest units.
fn duration(seconds: u64) -> String {
    let (d, h, m, s) = (
        seconds / 86_400,
        seconds / 3600 % 24,
        seconds / 60 % 60,
        seconds % 60,
    );
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{m}m {s}s"),
        (0, _, _) => format!("{h}h {m}m"),
        _ => format!("{d}d {h}h"),
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The width of a table's first column: its longest name, at least the title's.
fn name_width<'a>(names: impl Iterator<Item = &'a String>) -> usize {
    names
        .map(|name| clean(name).chars().count())
        .max()
        .unwrap_or(0)
        .max(18)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> StatusResponse {
        serde_json::from_str(
            r#"{"id":1,"ok":true,"version":"0.1.0","pid":11225,"config":"/home/me/.config/hookd/hooks.toml",
            "generation":3,"hooks":{"Notification":0,"PreToolUse":2,"Stop":1},
            "last_reload":{"at":"2026-12-02T01:11:17Z","ok":true},"in_flight":1,"uptime_s":7384,
            "workers":{"policy":[{"state":"running","pid":4243,"restarts":1,"out_of_step":0}]},
            "http":{"state":"off","token_file":"/run/user/1000/hookd/http-token","peer_check":false},
            "connections":{"open":2,"limit":1280},
            "record":{"journal":"/home/me/.local/state/hookd/journal.jsonl","enabled":true,"written":9,
            "dropped":0,"watchers":0,"moments":{"PreToolUse":{"fires":5,"refused":2,"asked":1,"failed":0}},
            "hooks":{"deny-destructive":{"runs":5,"p50_ms":0.4,"p99_ms":1.25}}}}"#,
        )
        .unwrap()
    }

    #[test]
    fn no_settings_file_in_force_is_said_with_the_near_name() {
        let no_file = NoSettingsFile {
            near: Some("/home/me/config/hooks.toml".into()),
        };
        let shown = status(&sample(), "/s", Some(&no_file), false);
        assert!(shown.contains("running, with trouble"), "{shown}");
        assert!(
            shown.contains(
                "     settings: /home/me/.config/hookd/hooks.toml (no such file: no settings in force)\n"
            ),
            "{shown}"
        );
        assert!(
            shown.contains("! no settings file is in force: hookd serves no hooks until /home/me/.config/hookd/hooks.toml appears; did you mean /home/me/config/hooks.toml? (start it with --config /home/me/config/hooks.toml, or rename the file)\n"),
            "{shown}"
        );
        // Gone after it was read: its settings stay in force, and the refused reload says so.
        let mut refused = sample();
        refused.last_reload.ok = false;
        refused.last_reload.error = Some("the file does not exist".into());
        let shown = status(&refused, "/s", Some(&no_file), false);
        assert!(!shown.contains("no settings file is in force"), "{shown}");
    }

    #[test]
    fn status_says_what_systemctl_would() {
        let shown = status(&sample(), "/run/user/1000/hookd/hookd.sock", None, false);
        for part in [
            "● hookd 0.1.0 — running for 2h 3m, pid 11225\n",
            "     settings: /home/me/.config/hookd/hooks.toml\n",
            "   generation: 3, loaded 2026-12-02 01:11:17 UTC\n",
            "        hooks: 3: PreToolUse 2, Stop 1\n",
            "  connections: 2 open (at most 1280), 1 fire in flight\n",
            "       worker: policy: running (pid 4243), 1 restart\n",
            "       record: /home/me/.local/state/hookd/journal.jsonl, 9 written, 0 dropped",
        ] {
            assert!(shown.contains(part), "{part:?} not in\n{shown}");
        }
        let rows: Vec<String> = shown
            .lines()
            .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        for row in [
            "FIRES SINCE START fires refused asked failed",
            "PreToolUse 5 2 1 0",
            "HOOKS, RECENT RUNS runs p50 p99",
            "deny-destructive 5 0.4 ms 1.2 ms",
        ] {
            assert!(rows.iter().any(|r| r == row), "{row:?} not in\n{shown}");
        }
        assert!(!shown.contains('!'), "no trouble: {shown}");
        assert!(!shown.contains('\x1b'));
    }

    #[test]
    fn the_export_has_its_line_and_a_collector_not_reached_is_a_trouble() {
        let mut down = sample();
        down.export = Some(crate::protocol::ExportStatus {
            state: "retrying".into(),
            endpoint: Some("http://127.0.0.1:4318/v1/logs".into()),
            protocol: Some("http/protobuf".into()),
            backlog_bytes: 512,
            sent: 3,
            last_error: Some("cannot connect".into()),
            ..Default::default()
        });
        let shown = status(&down, "/s", None, false);
        assert!(
            shown.contains("       export: http://127.0.0.1:4318/v1/logs (http/protobuf): retrying, 3 sent, 512 bytes of the journal to send; last error: cannot connect\n"),
            "{shown}"
        );
        assert!(
            shown.contains("! the export to http://127.0.0.1:4318/v1/logs is not getting through"),
            "{shown}"
        );
        let shown = status(&sample(), "/s", None, false);
        assert!(!shown.contains("export"), "no line without export: {shown}");
    }

    #[test]
    fn a_workers_dropped_banners_are_counted() {
        let processes = serde_json::json!([{"state": "running", "pid": 7, "restarts": 0, "out_of_step": 0, "banners": 2}]);
        let shown = worker("policy", &processes, false);
        assert!(
            shown.contains("running (pid 7), 0 restarts, 2 banners dropped"),
            "{shown}"
        );
    }

    #[test]
    fn a_refused_edit_and_a_failing_worker_stand_out() {
        let mut sick = sample();
        sick.last_reload.ok = false;
        sick.last_reload.error = Some("hooks.toml:3:1: unknown key \"colour\"\x1b[2J".into());
        sick.workers["policy"][0]["state"] = "failing".into();
        let shown = status(&sick, "/s", None, true);
        assert!(shown.contains("running, with trouble"), "{shown}");
        assert!(
            shown.contains("\x1b[1;31mrefused, the settings above kept: hooks.toml:3:1: unknown key \"colour\" [2J\x1b[0m"),
            "{shown:?}"
        );
        assert!(shown.contains("! the last edit of the settings was refused"));
        assert!(shown.contains("! worker hook policy keeps failing"));
        assert!(
            !shown.contains("\x1b[2J"),
            "the error's escape made harmless"
        );
    }

    #[test]
    fn status_shows_the_last_weakening_and_protection() {
        let plain = status(&sample(), "/s", None, false);
        assert!(
            !plain.contains("weakened") && !plain.contains("protect"),
            "an older daemon says neither: {plain}"
        );
        let mut weakened = sample();
        weakened.last_weakened = serde_json::from_str(
            r#"{"generation":4,"at":"2026-12-02T01:20:00Z","file":"/h/hooks.toml","changes":[
            {"moment":"PreToolUse","hook":"deny\u001b[2J","change":"removed"},
            {"change":"[protect] enabled turned off: hookd no longer guards its own files and process"}]}"#,
        )
        .unwrap();
        weakened.protect = Some(ProtectStatus {
            enabled: false,
            paths: 0,
        });
        let shown = status(&weakened, "/s", None, false);
        for part in [
            "     weakened: generation 4, 2026-12-02 01:20:00 UTC\n               PreToolUse deny [2J: removed\n               [protect] enabled turned off: hookd no longer guards its own files and process\n",
            "      protect: off ([protect] enabled = false)",
        ] {
            assert!(shown.contains(part), "{part:?} not in\n{shown}");
        }
        assert!(!shown.contains('\x1b'), "{shown:?}");
        let coloured = status(&weakened, "/s", None, true);
        assert!(
            coloured.contains("\x1b[1;31moff ([protect]"),
            "{coloured:?}"
        );
        assert!(coloured.contains("\x1b[1;33mgeneration 4"), "{coloured:?}");
        assert!(
            coloured.contains("\x1b[1;33mPreToolUse deny [2J: removed\x1b[0m"),
            "{coloured:?}"
        );
        for (paths, words) in [(0, "protect: on\n"), (2, "protect: on, 2 extra paths\n")] {
            weakened.protect = Some(ProtectStatus {
                enabled: true,
                paths,
            });
            let shown = status(&weakened, "/s", None, false);
            assert!(shown.contains(words), "{words:?} not in\n{shown}");
        }
    }

    #[test]
    fn a_refused_reload_says_every_error_once() {
        let error: ErrorResponse = serde_json::from_str(
            r#"{"id":1,"ok":false,"error":{"kind":"invalid_settings","message":"the settings file was not taken (2 errors); the last good settings stay","errors":["hooks.toml:3:1: a","hooks.toml:9:5: b"]}}"#,
        )
        .unwrap();
        assert_eq!(
            reload_refused(&error, false),
            "reload refused: the settings file was not taken (2 errors); the last good settings stay\n  hooks.toml:3:1: a\n  hooks.toml:9:5: b\n"
        );
    }

    #[test]
    fn the_layers_are_shown_with_each_layers_hooks_and_the_pending_ones() {
        let mut status = sample();
        status.layers = Some(serde_json::json!({
            "managed": ["/etc/hookd/managed.toml"],
            "allow_managed_hooks_only": false,
            "require_fail_closed": true,
            "hooks": {"managed": 2, "user": 3},
            "projects": [
                {"root": "/src/a", "hooks": 2, "pending": ["PreToolUse/gate"], "error": null},
                {"root": "/src/b", "hooks": 1, "pending": [], "error": "/src/b/.hookd/hooks.toml:1:2: expected"},
                {"root": "/src/c", "hooks": 3, "pending": [], "error": null, "pending_unknown": "not digested within 2.0 s"},
            ],
        }));
        let shown = super::status(&status, "/run/hookd.sock", None, false);
        for part in [
            "layers: managed 2; user 3; managed files /etc/hookd/managed.toml; require_fail_closed",
            "project: /src/a: 2 hooks, 1 pending (not run until `hookd trust /src/a`): PreToolUse/gate",
            "project: /src/b: 1 hook, trusted",
            "its hooks file refused (the last good hooks kept): /src/b/.hookd/hooks.toml:1:2: expected",
            // Not known is never shown as trusted.
            "project: /src/c: 3 hooks, which of them are pending not known: not digested within 2.0 s",
        ] {
            assert!(shown.contains(part), "{part:?} not in\n{shown}");
        }
        assert!(!shown.contains("/src/c: 3 hooks, trusted"), "{shown}");
    }

    #[test]
    fn durations_show_their_two_largest_units() {
        assert_eq!(duration(12), "12s");
        assert_eq!(duration(250), "4m 10s");
        assert_eq!(duration(7384), "2h 3m");
        assert_eq!(duration(3 * 86_400 + 4 * 3600 + 5), "3d 4h");
    }
}
