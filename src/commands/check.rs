//! `hookd check`: a settings file validated as `serve` loads it, its hooks listed per moment (or, with
//! `--json`, as one object for scripts), its warnings said; an invalid file is every error, each once.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use serde_json::{Value, json};

use crate::commands::style::{self, Style, printable};
use crate::settings::{LoadError, Program, Settings};

/// `hookd check`: the hooks per moment (or, with `--json`, one JSON object) and warnings; an invalid file
/// is every error, each said once.
pub fn check(config: &Path, json: bool) -> Result<ExitCode, String> {
    let loaded = match Settings::load(config) {
        Ok(settings) => Ok(settings),
        Err(LoadError::Invalid(errors)) => Err(errors),
        Err(LoadError::NotFound) => {
            let near = crate::settings::near_name(config).map_or_else(String::new, |near| {
                format!(" (did you mean {}?)", near.display())
            });
            return Err(format!("{}: no such settings file{near}", config.display()));
        }
    };
    if json {
        let (valid, object) = match &loaded {
            Ok(settings) => (true, check_json(settings)),
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
            for warning in crate::agents::settings_warnings(&settings) {
                eprintln!("warning: {warning}");
            }
            Ok(ExitCode::SUCCESS)
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
            let mut line = format!("  {}", printable(&hook.name));
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
                Program::Worker { argv, count } => {
                    line.push_str(&format!("  worker {argv:?} x{count}"))
                }
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
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
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
