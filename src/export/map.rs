//! A journal record as an OTLP log record: its event name, its attributes (OpenTelemetry's names where
//! a convention has one, `hookd.*` for the rest), its severity and a short body. docs/export.md lists
//! every attribute with its meaning and stability.

use std::time::{SystemTime, UNIX_EPOCH};

use super::wire::{Any, LogRecord, Request};
use crate::record::{Kind, Record};

/// The event name of a record of `kind`: `hookd.decision` for a fire, `hookd.<kind>` for the others.
pub fn event_name(kind: &str) -> String {
    if kind == "fire" {
        "hookd.decision".to_string()
    } else {
        format!("hookd.{kind}")
    }
}

/// Who sends: this hookd, on this host, for this user (the request's resource).
pub fn resource() -> Vec<(String, Any)> {
    let uid = nix::unistd::getuid();
    let mut resource = vec![
        ("service.name".to_string(), Any::Str("hookd".into())),
        (
            "service.version".to_string(),
            Any::Str(crate::protocol::VERSION.into()),
        ),
    ];
    // The kernel's host name, as `hostname` prints it.
    if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        resource.push(("host.name".to_string(), Any::Str(host.trim().to_string())));
    }
    if let Ok(Some(user)) = nix::unistd::User::from_uid(uid) {
        resource.push(("user.name".to_string(), Any::Str(user.name)));
    }
    resource.push(("user.id".to_string(), Any::Str(uid.to_string())));
    resource.push((
        "process.pid".to_string(),
        Any::Int(i64::from(std::process::id())),
    ));
    resource
}

/// A request of `records`, from this hookd.
pub fn request(resource: Vec<(String, Any)>, records: Vec<LogRecord>) -> Request {
    Request {
        resource,
        scope_name: "hookd",
        scope_version: crate::protocol::VERSION,
        records,
    }
}

fn unix_nanos(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The log record of one journal record; `redact` leaves out what was asked and what hooks said.
pub fn log_record(record: &Record, redact: bool) -> LogRecord {
    let kind = record.kind.word();
    let mut attributes: Vec<(String, Any)> = Vec::new();
    let mut text = |name: &str, value: &Option<String>| {
        if let Some(value) = value {
            attributes.push((name.to_string(), Any::Str(value.clone())));
        }
    };
    text("session.id", &record.session);
    text("gen_ai.agent.name", &record.agent);
    text("gen_ai.tool.name", &record.tool);
    text("hookd.agent_tool", &record.agent_tool);
    text("hookd.moment", &record.moment);
    text("hookd.cwd", &record.cwd);
    text("hookd.cut", &record.cut);
    text("hookd.error", &record.error);
    text("hookd.relay", &record.relay);
    text("hookd.file", &record.file);
    text(
        "hookd.settings.digest",
        &record.digest.as_deref().map(str::to_string),
    );
    if !redact {
        text("hookd.summary", &record.summary);
    }
    if kind == "worker_restart" {
        text("hookd.hook", &record.hook);
    }
    attributes.push(("hookd.record.kind".to_string(), Any::Str(kind.into())));
    if let Some(source) = record.source {
        attributes.push(("hookd.source".to_string(), Any::Str(source.word().into())));
    }
    if let Some(generation) = record.generation {
        attributes.push((
            "hookd.settings.generation".to_string(),
            Any::Int(i64::try_from(generation).unwrap_or(i64::MAX)),
        ));
    }
    if let Some(ms) = record.ms {
        attributes.push(("hookd.duration_ms".to_string(), Any::Double(ms)));
    }
    if let Some(count) = record.count {
        attributes.push((
            "hookd.count".to_string(),
            Any::Int(i64::try_from(count).unwrap_or(i64::MAX)),
        ));
    }
    if !redact && let Some(input) = &record.input {
        attributes.push(("hookd.input".to_string(), Any::Str(input.to_string())));
    }
    let decision = record.verdict.as_ref().map(|v| v.decision.word());
    if let Some(verdict) = &record.verdict {
        attributes.push((
            "hookd.decision".to_string(),
            Any::Str(verdict.decision.word().into()),
        ));
        attributes.push(("hookd.held_back".to_string(), Any::Bool(verdict.refused)));
        if !redact && let Some(reason) = &verdict.reason {
            attributes.push(("hookd.reason".to_string(), Any::Str(reason.clone())));
        }
        if verdict.advisory {
            attributes.push(("hookd.advisory".to_string(), Any::Bool(true)));
        }
        if !verdict.rewrote.is_empty() {
            attributes.push((
                "hookd.rewrote".to_string(),
                Any::Array(
                    verdict
                        .rewrote
                        .iter()
                        .map(|r| Any::Str(r.word().into()))
                        .collect(),
                ),
            ));
        }
        // The hook that decided: the first, in the settings' order, whose outcome is the decision.
        if let Some(hook) = record
            .hooks
            .iter()
            .find(|h| h.outcome.word() == verdict.decision.word())
        {
            attributes.push(("hookd.hook".to_string(), Any::Str(hook.name.clone())));
        }
    }
    if !record.hooks.is_empty() {
        let hooks = record
            .hooks
            .iter()
            .map(|hook| {
                let mut fields = vec![
                    ("name".to_string(), Any::Str(hook.name.clone())),
                    ("outcome".to_string(), Any::Str(hook.outcome.word().into())),
                    ("ms".to_string(), Any::Double(hook.ms)),
                ];
                if let Some(exit) = hook.exit {
                    fields.push(("exit".to_string(), Any::Int(i64::from(exit))));
                }
                if !redact {
                    for (name, value) in [("error", &hook.error), ("stderr", &hook.stderr)] {
                        if let Some(value) = value {
                            fields.push((name.to_string(), Any::Str(value.clone())));
                        }
                    }
                }
                Any::Map(fields)
            })
            .collect();
        attributes.push(("hookd.hooks".to_string(), Any::Array(hooks)));
    }
    if !record.weakened.is_empty() {
        attributes.push((
            "hookd.weakened".to_string(),
            Any::Array(
                record
                    .weakened
                    .iter()
                    .map(|w| Any::Str(w.words()))
                    .collect(),
            ),
        ));
    }
    let failed = record
        .hooks
        .iter()
        .any(|h| h.outcome == crate::decision::Outcome::Failed);
    let warn = match record.kind {
        Kind::Fire => decision == Some("refused") || failed || record.cut.is_some(),
        Kind::Background => failed || record.cut.is_some(),
        Kind::Reload | Kind::StopCap | Kind::Ask | Kind::Other => false,
        Kind::WorkerRestart => true,
        Kind::ReloadRefused | Kind::Weakened | Kind::Dropped | Kind::Relay => true,
    };
    let (severity_number, severity_text) = if warn { (13, "WARN") } else { (9, "INFO") };
    let time = crate::time::parse_rfc3339(&record.time).unwrap_or_else(SystemTime::now);
    LogRecord {
        time_unix_nano: unix_nanos(time),
        observed_time_unix_nano: unix_nanos(SystemTime::now()),
        severity_number,
        severity_text,
        body: body(record, kind, redact),
        event_name: event_name(kind),
        attributes: {
            let mut all = vec![("event.name".to_string(), Any::Str(event_name(kind)))];
            all.extend(attributes);
            all
        },
    }
}

/// A line for people: `refused Bash: rm -rf ~`; what was asked left out when redacted.
fn body(record: &Record, kind: &str, redact: bool) -> String {
    let what = record
        .tool
        .as_deref()
        .or(record.moment.as_deref())
        .unwrap_or_default();
    let head = match (&record.verdict, kind) {
        (Some(verdict), _) => format!("{} {what}", verdict.decision.word()),
        (None, "fire") => format!("fire {what}"),
        (None, _) => kind.replace('_', " "),
    };
    let detail = if redact {
        None
    } else {
        record.summary.as_deref().or(record.error.as_deref())
    };
    match detail {
        Some(detail) => format!("{}: {detail}", head.trim_end()),
        None => head.trim_end().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Hook, Verdict};

    fn refused() -> Record {
        let mut record = Record::at(
            Kind::Fire,
            UNIX_EPOCH + std::time::Duration::from_millis(1500),
        );
        record.session = Some("s1".into());
        record.agent = Some("claude-code".into());
        record.tool = Some("Bash".into());
        record.summary = Some("rm -rf ~".into());
        record.generation = Some(3);
        record.verdict = Some(Verdict {
            decision: crate::decision::Ruling::Refused,
            refused: true,
            reason: Some("no".into()),
            ..Verdict::default()
        });
        record.hooks = vec![Hook {
            layer: None,
            name: "deny".into(),
            outcome: crate::decision::Outcome::Refused,
            exit: Some(2),
            ms: 0.5,
            error: None,
            stderr: Some("no\n".into()),
        }];
        record
    }

    fn attribute<'r>(record: &'r LogRecord, name: &str) -> Option<&'r Any> {
        record
            .attributes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    #[test]
    fn a_refusal_is_a_hookd_decision_with_its_hook_and_session() {
        let log = log_record(&refused(), false);
        assert_eq!(log.event_name, "hookd.decision");
        assert_eq!(log.time_unix_nano, 1_500_000_000);
        assert_eq!((log.severity_number, log.severity_text), (13, "WARN"));
        assert_eq!(log.body, "refused Bash: rm -rf ~");
        assert_eq!(attribute(&log, "session.id"), Some(&Any::Str("s1".into())));
        assert_eq!(
            attribute(&log, "hookd.hook"),
            Some(&Any::Str("deny".into()))
        );
        assert_eq!(
            attribute(&log, "hookd.reason"),
            Some(&Any::Str("no".into()))
        );
        assert_eq!(
            attribute(&log, "hookd.settings.generation"),
            Some(&Any::Int(3))
        );
    }

    #[test]
    fn redacted_the_decision_stays_and_what_was_asked_and_said_goes() {
        let log = log_record(&refused(), true);
        assert_eq!(log.body, "refused Bash");
        assert_eq!(
            attribute(&log, "hookd.decision"),
            Some(&Any::Str("refused".into()))
        );
        assert_eq!(attribute(&log, "hookd.summary"), None);
        assert_eq!(attribute(&log, "hookd.reason"), None);
        let Some(Any::Array(hooks)) = attribute(&log, "hookd.hooks") else {
            panic!("no hooks");
        };
        let Any::Map(fields) = &hooks[0] else {
            panic!()
        };
        assert!(
            fields.iter().all(|(name, _)| name != "stderr"),
            "{fields:?}"
        );
    }
}
