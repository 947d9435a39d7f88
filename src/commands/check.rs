//! `hookd check`: a settings file validated as `serve` loads it, its hooks listed per moment (or, with
//! `--json`, as one object for scripts), its warnings said; an invalid file is every error, each once.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Value, json};

use crate::commands::style::{self, Style, printable};
use crate::settings::{LoadError, Program, Settings};

/// `hookd check`: the hooks per moment (or, with `--json`, one JSON object) and warnings; an invalid file
/// is every error, each said once.
pub fn check(config: &Path, managed: &Path, json: bool) -> Result<ExitCode, String> {
    let loaded = match Settings::load(config) {
        // Folded with the managed layer as the daemon folds them: each hook's layer shown, a hook two
        // layers hold named once. The managed layer's errors are its own, at its files' places.
        Ok(settings) => match crate::layers::managed::read(managed) {
            Ok(read) => Ok(crate::layers::fold::fold(read.settings.as_ref(), settings)),
            Err(errors) => Err(errors),
        },
        Err(LoadError::Invalid(errors)) => Err(errors),
        Err(LoadError::NotFound) => {
            let near = crate::settings::near_name(config).map_or_else(String::new, |near| {
                format!(" (did you mean {}?)", near.display())
            });
            return Err(format!("{}: no such settings file{near}", config.display()));
        }
    };
    let projects = loaded.as_ref().map(ProjectLayer::here).unwrap_or_default();
    let project_valid = !projects
        .iter()
        .any(|layer| matches!(layer, ProjectLayer::Refused { .. }));
    if json {
        let (valid, object) = match &loaded {
            Ok(settings) => {
                let mut object = check_json(settings);
                // `project`: the nearest repository's, as before nested ones were shown.
                object["project"] = projects.last().map_or(Value::Null, ProjectLayer::json);
                object["projects"] = projects.iter().map(ProjectLayer::json).collect();
                object["ok"] = json!(project_valid);
                (project_valid, object)
            }
            Err(errors) => (
                false,
                json!({
                    "ok": false,
                    "config": config.display().to_string(),
                    "errors": errors.0.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
                }),
            ),
        };
        println!("{object}");
        return Ok(if valid {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    match loaded {
        Ok(settings) => {
            let colour = style::colour_wanted(std::io::stdout().is_terminal());
            let text = describe(&settings);
            match text.split_once(": valid") {
                Some((path, rest)) if colour => {
                    print!(
                        "{path}: {}{rest}",
                        style::painted("valid", Style::Good, true)
                    )
                }
                _ => print!("{text}"),
            }
            for project in &projects {
                print!("{}", project.text());
            }
            for warning in crate::agents::settings_warnings(&settings) {
                eprintln!("warning: {warning}");
            }
            for project in &projects {
                if let ProjectLayer::Refused { file, errors } = project {
                    eprintln!("{errors}");
                    eprintln!(
                        "{}: the project layer is refused: {}",
                        printable(&file.display().to_string()),
                        errors.count()
                    );
                }
            }
            Ok(if project_valid {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Err(errors) => {
            let colour = style::colour_wanted(std::io::stderr().is_terminal());
            eprintln!("{errors}");
            eprintln!(
                "{}: {}",
                config.display(),
                style::painted(&errors.count(), Style::Alarm, colour)
            );
            Ok(ExitCode::FAILURE)
        }
    }
}

/// A valid file as `check --json` prints it: what `describe` says, for scripts.
fn check_json(settings: &Settings) -> Value {
    let mut moments = serde_json::Map::new();
    for (moment, hooks) in &settings.hooks {
        let hooks: Vec<Value> = hooks
            .iter()
            .map(|hook| {
                let mut entry = json!({
                    "name": hook.name,
                    "timeout_s": hook.timeout.as_secs_f64(),
                    "on_failure": match hook.on_failure {
                        crate::settings::OnFailure::Refuse => "refuse",
                        crate::settings::OnFailure::Ignore => "ignore",
                    },
                    "enabled": hook.enabled,
                });
                match &hook.program {
                    Program::Shell { command, .. } => entry["command"] = json!(command),
                    Program::Argv(argv) => entry["argv"] = json!(argv),
                    Program::Worker { argv, count } => {
                        entry["worker"] = json!(argv);
                        entry["workers"] = json!(count);
                    }
                    Program::Live { client, .. } => entry["live"] = json!(client),
                    Program::Guard(guard) => {
                        entry["builtin"] = json!("guard");
                        let rules: serde_json::Map<String, serde_json::Value> = guard
                            .changed()
                            .into_iter()
                            .map(|(rule, action)| (rule.to_string(), json!(action.word())))
                            .collect();
                        entry["rules"] = serde_json::Value::Object(rules);
                    }
                }
                if let Some(matcher) = &hook.matcher_source {
                    entry["matcher"] = json!(matcher);
                }
                if let Some(condition) = &hook.condition {
                    entry["if"] = json!(condition.source);
                }
                if hook.background {
                    entry["background"] = json!(true);
                }
                entry["layer"] = json!(hook.layer.name());
                if let Some(agents) = &hook.agents {
                    entry["agents"] = json!(agents);
                }
                entry
            })
            .collect();
        let sequential = settings.is_sequential(moment);
        moments.insert(
            moment.clone(),
            json!({ "sequential": sequential, "hooks": hooks }),
        );
    }
    json!({
        "ok": true,
        "config": settings.path.display().to_string(),
        "moments": moments,
        "http_listen": settings.http.listen.map(|a| a.to_string()),
        "warnings": crate::agents::settings_warnings(settings),
        "managed_files": settings.managed_files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        "layers": settings.layer_notes,
    })
}

/// The hooks per moment, as `check` prints them.
fn describe(settings: &Settings) -> String {
    let total: usize = settings.hooks.iter().map(|(_, hooks)| hooks.len()).sum();
    let mut out = format!(
        "{}: valid, {total} hook{}\n",
        printable(&settings.path.display().to_string()),
        if total == 1 { "" } else { "s" }
    );
    for file in &settings.managed_files {
        out.push_str(&format!(
            "managed layer: {} (root's; its hooks run first, nothing below can change them)\n",
            printable(&file.display().to_string())
        ));
    }
    for note in &settings.layer_notes {
        out.push_str(&format!("layers: {}\n", printable(note)));
    }
    if let Some(listen) = settings.http.listen {
        out.push_str(&format!(
            "http listener on {listen} (for agents' http hooks)\n"
        ));
    }
    for (moment, hooks) in &settings.hooks {
        let chained = if settings.is_sequential(moment) && hooks.len() > 1 {
            "  (sequential: one after another, each given the rewrites before it)"
        } else {
            ""
        };
        out.push_str(&format!("{}{chained}\n", printable(moment)));
        for hook in hooks {
            out.push_str(&hook_line(hook));
            out.push('\n');
        }
    }
    out
}

/// One hook as `check` lists it: its name, its layer when not the user's, and what it runs.
fn hook_line(hook: &crate::settings::Hook) -> String {
    let mut line = format!("  {}", printable(&hook.name));
    if hook.layer != crate::settings::Layer::User {
        line.push_str(&format!("  [{}]", hook.layer.name()));
    }
    if let Some(matcher) = &hook.matcher_source {
        line.push_str(&format!("  matcher {matcher:?}"));
    }
    if let Some(condition) = &hook.condition {
        line.push_str(&format!("  if {:?}", condition.source));
    }
    if hook.background {
        line.push_str("  background");
    }
    match &hook.program {
        Program::Shell { command, .. } => line.push_str(&format!("  command {command:?}")),
        Program::Argv(argv) => line.push_str(&format!("  argv {argv:?}")),
        Program::Worker { argv, count } => line.push_str(&format!("  worker {argv:?} x{count}")),
        Program::Live { client, .. } => line.push_str(&format!("  live {client:?}")),
        Program::Guard(guard) => {
            line.push_str("  builtin guard");
            for (rule, action) in guard.changed() {
                line.push_str(&format!("  {rule}={}", action.word()));
            }
        }
    }
    if !matches!(hook.program, Program::Guard(_)) {
        line.push_str(&format!("  timeout {}s", hook.timeout.as_secs_f64()));
    }
    if hook.on_failure == crate::settings::OnFailure::Refuse {
        line.push_str("  on_failure refuse");
    }
    if let Some(agents) = &hook.agents {
        line.push_str(&format!("  agents {}", printable(&agents.join(","))));
    }
    if !hook.enabled {
        line.push_str("  (disabled)");
    }
    line
}

/// The project layer of the folder `check` runs in: the repository's `.hookd/hooks.toml`, each hook
/// trusted or pending, as a fire from this folder would find it.
enum ProjectLayer {
    /// The managed layer keeps a repository's hooks from running.
    Off { file: PathBuf, why: &'static str },
    /// Read: each hook, and whether what it is now is what the user trusted.
    Read {
        project: Box<crate::layers::project::Project>,
        states: Vec<&'static str>,
    },
    /// The file refused: every error at its place (a fire from here runs none of its hooks).
    Refused {
        file: PathBuf,
        errors: crate::settings::ConfigErrors,
    },
}

impl ProjectLayer {
    /// The project layer of the current folder: every repository a fire from here takes hooks from
    /// ([`crate::layers::project::roots`], as the daemon finds them: a nested repository's hooks add
    /// to its parent's), the outermost first, as they run. Empty outside any repository with hooks.
    fn here(settings: &Settings) -> Vec<ProjectLayer> {
        use crate::layers::project;
        let Ok(cwd) = std::env::current_dir() else {
            return Vec::new();
        };
        let store = crate::layers::trust::Store::load(&crate::layers::trust::store_path());
        let roots = project::roots(
            &cwd,
            &crate::paths::home(),
            store.projects.keys().map(PathBuf::from),
        );
        roots
            .iter()
            .rev()
            .map(|root| ProjectLayer::at(root, settings, &store))
            .collect()
    }

    /// The hooks of the repository at `root`, each trusted or pending in `store`.
    fn at(root: &Path, settings: &Settings, store: &crate::layers::trust::Store) -> ProjectLayer {
        use crate::layers::project;
        let file = root.join(project::FOLDER).join(project::FILE);
        let policy = settings.policy;
        if policy.allow_managed_hooks_only {
            return ProjectLayer::Off {
                file,
                why: "the managed layer sets allow_managed_hooks_only",
            };
        }
        if policy.project_hooks == crate::settings::ProjectHooks::Off {
            return ProjectLayer::Off {
                file,
                why: "the managed layer sets project_hooks = \"off\"",
            };
        }
        match project::read(root) {
            Ok(project) => {
                let states = project
                    .hooks
                    .iter()
                    .map(|pinned| match store.trusted(&project.root, &pinned.key) {
                        Some(digest) if digest == pinned.digest => "trusted",
                        Some(_) => "pending: changed since it was trusted",
                        None => "pending: not trusted yet",
                    })
                    .collect();
                ProjectLayer::Read {
                    project: Box::new(project),
                    states,
                }
            }
            Err(errors) => ProjectLayer::Refused { file, errors },
        }
    }

    fn text(&self) -> String {
        match self {
            ProjectLayer::Off { file, why } => format!(
                "project layer: {} (not read, its hooks do not run: {why})\n",
                printable(&file.display().to_string())
            ),
            ProjectLayer::Refused { file, .. } => format!(
                "project layer: {} (refused: none of its hooks run; the errors below)\n",
                printable(&file.display().to_string())
            ),
            ProjectLayer::Read { project, states } => {
                let root_text = project.root.display().to_string();
                let root = printable(&root_text);
                let mut out = format!(
                    "project layer: {} ({} hook{}; they run after the user's for events in {root}, each once trusted: hookd trust {root})\n",
                    printable(&project.file.display().to_string()),
                    project.hooks.len(),
                    if project.hooks.len() == 1 { "" } else { "s" }
                );
                let mut moment = None;
                for (pinned, state) in project.hooks.iter().zip(states) {
                    if moment != Some(&pinned.hook.moment) {
                        moment = Some(&pinned.hook.moment);
                        out.push_str(&format!("{}\n", printable(&pinned.hook.moment)));
                    }
                    out.push_str(&format!("{}  {state}\n", hook_line(&pinned.hook)));
                }
                out
            }
        }
    }

    fn json(&self) -> Value {
        match self {
            ProjectLayer::Off { file, why } => json!({
                "file": file.display().to_string(),
                "off": why,
            }),
            ProjectLayer::Refused { file, errors } => json!({
                "file": file.display().to_string(),
                "errors": errors.0.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
            }),
            ProjectLayer::Read { project, states } => json!({
                "file": project.file.display().to_string(),
                "root": project.root.display().to_string(),
                "hooks": project.hooks.iter().zip(states).map(|(pinned, state)| json!({
                    "name": pinned.hook.name,
                    "moment": pinned.hook.moment,
                    "trusted": *state == "trusted",
                    "state": state,
                })).collect::<Vec<_>>(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_prints_control_characters_of_names_escaped() {
        let text = "[[hooks.PreToolUse]]\nname = \"evil\\u001b]0;pwned\\u0007\\u001b[2J\"\ncommand = \"x.sh\"\n";
        let settings = Settings::parse(Path::new("/etc/hooks.toml"), "hooks.toml", text).unwrap();
        let shown = describe(&settings);
        assert!(
            !shown.chars().any(|c| c.is_control() && c != '\n'),
            "{shown:?}"
        );
        assert!(
            shown.contains("evil\\u{1b}]0;pwned\\u{7}\\u{1b}[2J"),
            "{shown}"
        );
    }

    #[test]
    fn check_says_which_moments_are_sequential() {
        let text = "sequential = [\"PreToolUse\"]\n[[hooks.PreToolUse]]\ncommand = \"a.sh\"\n[[hooks.PreToolUse]]\ncommand = \"b.sh\"\n";
        let settings = Settings::parse(Path::new("/etc/hooks.toml"), "hooks.toml", text).unwrap();
        assert!(
            describe(&settings).contains("PreToolUse  (sequential: one after another"),
            "{}",
            describe(&settings)
        );
    }

    #[test]
    fn check_lists_hooks_per_moment() {
        let text = "[[hooks.PreToolUse]]\nname = \"deny\"\nmatcher = \"Bash\"\ncommand = \"x.sh\"\non_failure = \"refuse\"\n[[hooks.Stop]]\nargv = [\"/bin/true\"]\nenabled = false\n";
        let settings = Settings::parse(Path::new("/etc/hooks.toml"), "hooks.toml", text).unwrap();
        assert_eq!(
            describe(&settings),
            "/etc/hooks.toml: valid, 2 hooks\nPreToolUse\n  deny  matcher \"Bash\"  command \"x.sh\"  timeout 60s  on_failure refuse\nStop\n  Stop#1  argv [\"/bin/true\"]  timeout 60s  (disabled)\n"
        );
    }
}
