//! `hookd test --cases FILE`: policy tests. A TOML file of cases, each an event and what its verdict must
//! be (docs/commands.md, "Policy tests"), each decided as `hookd test` decides one event; reported as a
//! test runner reports, a line per case and a summary, exit 0 when every case passed.
//!
//! A case fails whenever its verdict could not be had (an unknown moment, an input the relay would not
//! fire, an event that is not an object): a case never passes for want of a verdict.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::process::ExitCode;

use serde::Deserialize;
use serde_json::{Value, json};
use toml::Spanned;

use crate::commands::answer_text::verdict_word;
use crate::commands::test::{INTERRUPTED, Trial, Tried, interrupted, runtime};
use crate::decision::Outcome;
use crate::limits::CASES_SIZE;
use crate::settings::{ConfigError, ConfigErrors, LineIndex, Settings};

/// The verdicts a case may expect. `not refused` is any verdict that lets the call go on (allowed
/// included); the others are exact.
const EXPECTED: &[&str] = &["refused", "asked", "allowed", "not refused"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    #[serde(default)]
    case: Vec<Spanned<Case>>,
}

/// One case as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: Spanned<String>,
    /// hookd's moment; without it, `event` is the agent's raw hook input.
    moment: Option<String>,
    agent: Option<String>,
    agent_event: Option<String>,
    event: Option<toml::Table>,
    event_json: Option<String>,
    expect: Spanned<String>,
    /// Text the reason must contain.
    reason: Option<String>,
    /// Text what the hooks add must contain.
    adds: Option<String>,
    /// The tool input as the hooks must have rewritten it, whole.
    input: Option<toml::Value>,
    /// The tool output as the hooks must have rewritten it, whole.
    output: Option<toml::Value>,
    /// Outcomes of hooks, by name.
    hooks: Option<BTreeMap<String, Spanned<String>>>,
    /// Text the relay's answer to the agent (stdout and stderr) must contain.
    answer: Option<String>,
}

/// A case checked and ready to run.
struct Ready {
    name: String,
    line: usize,
    moment: Option<String>,
    agent: Option<String>,
    agent_event: Option<String>,
    event: Vec<u8>,
    expect: String,
    reason: Option<String>,
    adds: Option<String>,
    input: Option<Value>,
    output: Option<Value>,
    hooks: BTreeMap<String, String>,
    answer: Option<String>,
}

pub fn run(settings: Settings, config: &Path, file: &Path, json: bool) -> Result<ExitCode, String> {
    let text = read_bounded(file)?;
    let label = file.display().to_string();
    let folder = std::path::absolute(file)
        .ok()
        .and_then(|file| file.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    let cases = match parse(&label, &text, &folder) {
        Ok(cases) => cases,
        Err(errors) => {
            eprintln!("{errors}");
            return Err(format!("{label}: {} (no case was run)", errors.count()));
        }
    };
    if !json {
        println!(
            "running {} case{} of {label} on {}",
            cases.len(),
            if cases.len() == 1 { "" } else { "s" },
            config.display()
        );
    }
    let colour = !json && crate::commands::render::colour_wanted(true);
    let runtime = runtime()?;
    let interrupted = runtime.block_on(async { interrupted() });
    let (mut passed, mut failed) = (0, 0);
    for case in &cases {
        let decided = runtime.block_on(decide(case, &settings, &interrupted));
        if interrupted.is_cancelled() {
            // Not a failure of the case: the run stops here, and passes not.
            return Err(format!(
                "{INTERRUPTED}, {passed} passed and {failed} failed before"
            ));
        }
        let (verdict, problems) = match decided {
            Ok(tried) => (Some(verdict_word(&tried.response)), check(case, &tried)),
            Err(why) => (None, vec![format!("no verdict: {why}")]),
        };
        if problems.is_empty() {
            passed += 1;
        } else {
            failed += 1;
        }
        if json {
            println!(
                "{}",
                json!({"case": case.name, "line": case.line, "ok": problems.is_empty(), "verdict": verdict, "problems": problems})
            );
        } else {
            print!("{}", report(case, &label, &problems, colour));
        }
    }
    if json {
        println!("{}", json!({"passed": passed, "failed": failed}));
    } else {
        println!("{passed} passed, {failed} failed");
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

async fn decide(
    case: &Ready,
    settings: &Settings,
    interrupted: &tokio_util::sync::CancellationToken,
) -> Result<Tried, String> {
    let trial = Trial::new(
        case.moment.as_deref(),
        case.agent.as_deref(),
        case.agent_event.as_deref(),
        &case.event,
    )?;
    trial.run(settings.clone(), interrupted).await
}

/// What differs between what `case` expects and what was decided; empty when the case passed.
/// The case file's text, read up to [`CASES_SIZE`]: `--cases /dev/zero`, or a file still being
/// written without end, read whole would take every byte of memory before failing.
fn read_bounded(file: &Path) -> Result<String, String> {
    use std::io::Read;
    let cannot = |e: std::io::Error| format!("cannot read {}: {e}", file.display());
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .map_err(cannot)?
        .take(CASES_SIZE + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > CASES_SIZE {
        return Err(format!(
            "{} is larger than a case file may be ({} MiB)",
            file.display(),
            CASES_SIZE >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let line = e.as_bytes()[..e.utf8_error().valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        format!("{}:{}: not UTF-8 text", file.display(), line + 1)
    })
}

fn check(case: &Ready, tried: &Tried) -> Vec<String> {
    let response = &tried.response;
    let mut problems = Vec::new();
    let word = verdict_word(response);
    let fits = match case.expect.as_str() {
        "not refused" => !response.refused,
        expected => word == expected,
    };
    if !fits {
        let why = response
            .reason
            .as_deref()
            .map(|reason| format!(": {reason}"))
            .unwrap_or_default();
        problems.push(format!("expected {}, got {word}{why}", case.expect));
    }
    if let Some(text) = &case.reason {
        match &response.reason {
            Some(reason) if reason.contains(text.as_str()) => {}
            Some(reason) => {
                problems.push(format!("the reason does not contain {text:?}: {reason}"))
            }
            None => problems.push(format!("no reason given, expected one containing {text:?}")),
        }
    }
    if let Some(text) = &case.adds {
        let adds = response.adds.join("\n");
        if !adds.contains(text.as_str()) {
            problems.push(format!(
                "what the hooks add does not contain {text:?}: {}",
                if adds.is_empty() {
                    "nothing added"
                } else {
                    &adds
                }
            ));
        }
    }
    for (what, expected, got) in [
        ("input", &case.input, &response.input),
        ("output", &case.output, &response.output),
    ] {
        if let Some(expected) = expected
            && got.as_ref() != Some(expected)
        {
            let got = got
                .as_ref()
                .map_or_else(|| "not rewritten".to_string(), Value::to_string);
            problems.push(format!(
                "expected the tool {what} rewritten to {expected}, got {got}"
            ));
        }
    }
    for (name, expected) in &case.hooks {
        match response.hooks.iter().find(|hook| &hook.name == name) {
            None => problems.push(format!("hook {name:?} did not run")),
            Some(hook) => {
                let got = serde_json::to_value(hook.outcome).unwrap_or_default();
                let got = got.as_str().unwrap_or("unknown");
                if got != expected {
                    problems.push(format!("expected hook {name:?} {expected}, got {got}"));
                }
            }
        }
    }
    if let Some(text) = &case.answer {
        match &tried.answer {
            None => problems.push("no relay answer (the case names no known agent)".into()),
            Some(answer) => {
                let said = [answer.stdout.as_deref(), answer.stderr.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join("\n");
                if !said.contains(text.as_str()) {
                    problems.push(format!(
                        "the relay's answer does not contain {text:?}: exit {}, {}",
                        answer.exit,
                        if said.is_empty() {
                            "nothing printed"
                        } else {
                            &said
                        }
                    ));
                }
            }
        }
    }
    problems
}

/// A case's lines in the report: `ok` or `FAILED` with its name, then what differed.
fn report(case: &Ready, label: &str, problems: &[String], colour: bool) -> String {
    let name = super::printable(&case.name);
    let (word, code) = if problems.is_empty() {
        ("ok    ", "32")
    } else {
        ("FAILED", "1;31")
    };
    let word = if colour {
        format!("\x1b[{code}m{word}\x1b[0m")
    } else {
        word.to_string()
    };
    let mut out = if problems.is_empty() {
        format!("{word}  {name}\n")
    } else {
        format!("{word}  {name}  ({label}:{})\n", case.line)
    };
    for problem in problems {
        for (i, line) in problem.lines().enumerate() {
            let lead = if i == 0 { "        - " } else { "          " };
            out.push_str(lead);
            out.push_str(&super::printable(line));
            out.push('\n');
        }
    }
    out
}

/// The cases of a file, checked: every error in it with its `file:line:col`, or none run. A relative
/// `cwd` in an event is taken in `folder`, the case file's.
fn parse(label: &str, text: &str, folder: &Path) -> Result<Vec<Ready>, ConfigErrors> {
    let places = Places::new(label, text);
    let file: CaseFile = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |span| span.start);
        ConfigErrors(vec![places.error(offset, e.message().trim().to_string())])
    })?;
    let mut errors = Vec::new();
    let mut ready = Vec::new();
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    for spanned in &file.case {
        let at = spanned.span();
        let case = spanned.get_ref();
        let mut wrong = |span: Range<usize>, message: String| {
            errors.push(places.error(span.start, message));
        };
        let name = case.name.get_ref().trim().to_string();
        if name.is_empty() {
            wrong(case.name.span(), "a case's name must not be empty".into());
        } else if let Some(line) = names.insert(name.clone(), places.line(at.start)) {
            wrong(
                case.name.span(),
                format!("a second case named {name:?} (the first is at line {line})"),
            );
        }
        let expect = case.expect.get_ref().as_str();
        if !EXPECTED.contains(&expect) {
            let hint = crate::moment::did_you_mean(expect, EXPECTED.iter().copied())
                .map_or_else(String::new, |meant| format!(" (did you mean \"{meant}\"?)"));
            wrong(
                case.expect.span(),
                format!(
                    "expect = {expect:?}: not a verdict{hint}; one of: {}",
                    EXPECTED.join(", ")
                ),
            );
        }
        let event = match (&case.event, &case.event_json) {
            (Some(_), Some(_)) => {
                wrong(
                    at.clone(),
                    "a case gives its event once: event or event_json, not both".into(),
                );
                None
            }
            (None, None) => {
                wrong(
                    at.clone(),
                    "a case needs its event: event = { ... } or event_json = '{...}'".into(),
                );
                None
            }
            (Some(table), None) => Some(in_folder(
                to_json(&toml::Value::Table(table.clone())),
                folder,
            )),
            (None, Some(json)) => Some(match serde_json::from_str(json) {
                Ok(value) => in_folder(value, folder),
                // Given as written: what is wrong with it is the case's verdict to say.
                Err(_) => json.clone(),
            }),
        };
        if case.moment.is_none() && case.agent.is_none() {
            wrong(
                at.clone(),
                "a case needs its moment (hookd's own event), or its agent (the agent's raw hook input)"
                    .into(),
            );
        }
        if case.answer.is_some() && case.agent.is_none() {
            wrong(
                at.clone(),
                "answer = ... needs the agent whose answer it is (agent = \"claude-code\")".into(),
            );
        }
        let mut hooks = BTreeMap::new();
        for (hook, outcome) in case.hooks.iter().flatten() {
            // The outcomes a case may expect of one hook, as the protocol writes them.
            if Outcome::of_word(outcome.get_ref()).is_none() {
                let words: Vec<&str> = Outcome::KNOWN.iter().map(|o| o.word()).collect();
                wrong(
                    outcome.span(),
                    format!(
                        "hooks.{hook} = {:?}: not an outcome; one of: {}",
                        outcome.get_ref(),
                        words.join(", ")
                    ),
                );
            }
            hooks.insert(hook.clone(), outcome.get_ref().clone());
        }
        if let Some(event) = event {
            ready.push(Ready {
                name,
                line: places.line(at.start),
                moment: case.moment.clone(),
                agent: case.agent.clone(),
                agent_event: case.agent_event.clone(),
                event: event.into_bytes(),
                expect: expect.to_string(),
                reason: case.reason.clone(),
                adds: case.adds.clone(),
                input: case.input.as_ref().map(to_json),
                output: case.output.as_ref().map(to_json),
                hooks,
                answer: case.answer.clone(),
            });
        }
    }
    if file.case.is_empty() {
        errors.push(places.error(
            0,
            "no cases: write each as [[case]] with name, moment, event and expect".into(),
        ));
    }
    if errors.is_empty() {
        Ok(ready)
    } else {
        errors.sort_by_key(|e| (e.line, e.column));
        Err(ConfigErrors(errors))
    }
}

/// The event's text, with a relative `cwd` (`"."`: the case file's folder) made absolute in `folder`,
/// so that a case file can name its project wherever it is checked out. The daemon takes only an
/// absolute `cwd`.
fn in_folder(mut event: Value, folder: &Path) -> String {
    if let Some(cwd) = event.get_mut("cwd")
        && let Some(relative) = cwd.as_str().filter(|cwd| !cwd.starts_with('/'))
    {
        let joined = folder.join(relative);
        let joined = std::fs::canonicalize(&joined).unwrap_or(joined);
        *cwd = Value::String(joined.to_string_lossy().into_owned());
    }
    event.to_string()
}

/// A TOML value as JSON: a datetime as its text.
fn to_json(value: &toml::Value) -> Value {
    match value {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => json!(i),
        toml::Value::Float(f) => json!(f),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(items) => Value::Array(items.iter().map(to_json).collect()),
        toml::Value::Table(table) => Value::Object(
            table
                .iter()
                .map(|(key, value)| (key.clone(), to_json(value)))
                .collect(),
        ),
    }
}

/// Lines and columns of byte offsets in the file, for its errors.
struct Places<'a> {
    label: &'a str,
    lines: LineIndex<'a>,
}

impl<'a> Places<'a> {
    fn new(label: &'a str, text: &'a str) -> Places<'a> {
        Places {
            label,
            lines: LineIndex::new(text),
        }
    }

    fn line(&self, offset: usize) -> usize {
        self.lines.line(offset)
    }

    fn error(&self, offset: usize, message: String) -> ConfigError {
        let mut error = ConfigError::whole_file(self.label, message);
        (error.line, error.column) = self.lines.place(offset);
        error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(text: &str) -> String {
        match parse("cases.toml", text, Path::new("/cases")) {
            Ok(_) => panic!("parsed: {text}"),
            Err(errors) => errors.to_string(),
        }
    }

    #[test]
    fn a_case_reads_with_its_event_as_a_table_or_json() {
        let cases = parse(
            "cases.toml",
            "[[case]]\nname = \"a\"\nmoment = \"PreToolUse\"\nevent = { tool_name = \"Bash\", tool_input = { command = \"ls\" } }\nexpect = \"not refused\"\n\n[[case]]\nname = \"b\"\nagent = \"gemini-cli\"\nevent_json = '{\"hook_event_name\": \"BeforeTool\"}'\nexpect = \"refused\"\nhooks = { guard = \"refused\" }\n",
            Path::new("/cases"),
        )
        .unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(
            serde_json::from_slice::<Value>(&cases[0].event).unwrap(),
            json!({"tool_name": "Bash", "tool_input": {"command": "ls"}})
        );
        let relative = parse(
            "cases.toml",
            "[[case]]\nname = \"a\"\nmoment = \"Stop\"\nevent = { cwd = \"sub\" }\nexpect = \"refused\"\n",
            Path::new("/nowhere/cases"),
        )
        .unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(&relative[0].event).unwrap()["cwd"],
            "/nowhere/cases/sub"
        );
        assert_eq!(cases[1].line, 7);
        assert_eq!(cases[1].hooks["guard"], "refused");
    }

    #[test]
    fn junk_is_an_error_at_its_place() {
        assert!(
            errors("[[case]]\nname = \"a\"\nthis is junk\n").starts_with("cases.toml:3:"),
            "{}",
            errors("[[case]]\nname = \"a\"\nthis is junk\n")
        );
        let unknown = errors(
            "[[case]]\nname = \"a\"\nmoment = \"Stop\"\nevent = {}\nexpect = \"refused\"\nexpected = \"x\"\n",
        );
        assert!(
            unknown.starts_with("cases.toml:6:1: unknown field `expected`"),
            "{unknown}"
        );
    }

    #[test]
    fn every_mistake_of_every_case_is_said() {
        let text = "[[case]]\nname = \"a\"\nmoment = \"Stop\"\nevent = {}\nexpect = \"refuse\"\n\n[[case]]\nname = \"a\"\nexpect = \"asked\"\nhooks = { g = \"denied\" }\n";
        let shown = errors(text);
        assert!(
            shown.contains(
                "cases.toml:5:10: expect = \"refuse\": not a verdict (did you mean \"refused\"?)"
            ),
            "{shown}"
        );
        assert!(
            shown.contains("cases.toml:8:8: a second case named \"a\" (the first is at line 1)"),
            "{shown}"
        );
        assert!(shown.contains("a case needs its event"), "{shown}");
        assert!(shown.contains("a case needs its moment"), "{shown}");
        assert!(
            shown.contains("hooks.g = \"denied\": not an outcome"),
            "{shown}"
        );
    }

    #[test]
    fn a_file_without_cases_is_an_error() {
        assert!(errors("# nothing\n").contains("no cases"));
    }
}
