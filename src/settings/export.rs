//! `[export.otlp]`: the journal sent on to a team's OpenTelemetry collector (docs/export.md). The model,
//! and the checks of the file it names (`headers_file`); parsed in `parse/export.rs`.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::error::ConfigError;

/// The `[export]` table: where the journal is sent besides the disk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Export {
    /// `[export.otlp]`, when the file has it and it is enabled.
    pub otlp: Option<Otlp>,
}

/// How the records are written on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `http/protobuf`: an `ExportLogsServiceRequest` in protobuf, OTLP's default.
    Protobuf,
    /// `http/json`: the same in OTLP's JSON mapping.
    Json,
}

impl Protocol {
    /// The name the settings and OpenTelemetry's own variables give it.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Protobuf => "http/protobuf",
            Protocol::Json => "http/json",
        }
    }
}

/// The records' kinds, as the journal names them, that `kinds` may list.
pub const KINDS: &[&str] = &[
    "fire",
    "reload",
    "reload_refused",
    "weakened",
    "worker_restart",
    "stop_cap",
    "dropped",
    "relay",
    "background",
    "ask",
];

/// A fire's decisions, as the journal names them, that `decisions` may list.
pub const DECISIONS: &[&str] = &["refused", "asked", "allowed", "rewrote", "none"];

/// `[export.otlp]`, with its defaults applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Otlp {
    /// The whole address records are posted to: `http://host:port/v1/logs`.
    pub endpoint: Endpoint,
    pub protocol: Protocol,
    /// A file of `Name: value` lines sent as headers with every request (a collector's token): secrets
    /// are never written in the settings, which agents read.
    pub headers_file: Option<PathBuf>,
    /// Line and column of `headers_file` in the settings file, for its check's error.
    pub headers_file_at: (usize, usize),
    /// The kinds of record sent; empty: every kind.
    pub kinds: Vec<String>,
    /// The decisions of the fires sent; empty: every decision. Records of other kinds are not filtered
    /// by it.
    pub decisions: Vec<String>,
    /// Leave out what was asked and what hooks said (the summary, a whole input, a refusal's reason, a
    /// hook's stderr and error): the decision, the tool and the hooks' names and outcomes stay.
    pub redact: bool,
}

impl Otlp {
    /// Whether a record of `kind`, with `decision` when it is a fire, is sent.
    pub fn sends(&self, kind: &str, decision: Option<&str>) -> bool {
        if !self.kinds.is_empty() && !self.kinds.iter().any(|k| k == kind) {
            return false;
        }
        match decision {
            Some(decision) if kind == "fire" && !self.decisions.is_empty() => {
                self.decisions.iter().any(|d| d == decision)
            }
            _ => true,
        }
    }
}

/// A plain-http address: hookd speaks HTTP/1.1 without TLS (a collector on this machine, or a sidecar,
/// is the usual place; one across the network is reached through it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `http://127.0.0.1:4318/v1/logs`, as given.
    pub url: String,
    pub host: String,
    pub port: u16,
    /// The path and query, `/v1/logs`.
    pub path: String,
}

impl Endpoint {
    /// Reads `http://host[:port][/path]`. An https address is refused with the way round it: TLS is not
    /// built in.
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let url = url.trim();
        let rest = match url.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
            Some((scheme, _)) if scheme.eq_ignore_ascii_case("https") => {
                return Err(format!(
                    "\"{url}\" is https: hookd sends plain http only; run an OpenTelemetry Collector on this machine (http://127.0.0.1:4318/v1/logs) and let it send on over TLS"
                ));
            }
            _ => {
                return Err(format!(
                    "\"{url}\" is not an http address such as \"http://127.0.0.1:4318/v1/logs\""
                ));
            }
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, "/"),
        };
        let path = if path.starts_with('?') {
            format!("/{path}")
        } else {
            path.to_string()
        };
        if authority.contains('@') {
            return Err(format!(
                "\"{url}\": a user or password in the address would be written in the settings; put an Authorization header in headers_file instead"
            ));
        }
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !port.contains(']') => {
                let port = port.parse::<u16>().map_err(|_| {
                    format!("\"{url}\": the port \"{port}\" is not a number up to 65535")
                })?;
                (host, port)
            }
            _ => (authority, 80),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() || path.chars().any(|c| c.is_control() || c == ' ') {
            return Err(format!("\"{url}\" has no host, or a space in its path"));
        }
        Ok(Endpoint {
            url: url.to_string(),
            host: host.to_string(),
            port,
            path,
        })
    }

    /// The endpoint when the settings give none, as OpenTelemetry's own exporters find it:
    /// `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT` as it stands, else `OTEL_EXPORTER_OTLP_ENDPOINT` with
    /// `/v1/logs` added, else `http://localhost:4318/v1/logs`. Gives the URL and where it came from.
    pub fn from_environment() -> (String, &'static str) {
        let var = |name| {
            std::env::var(name)
                .ok()
                .filter(|v: &String| !v.trim().is_empty())
        };
        if let Some(url) = var("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT") {
            return (url, "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT");
        }
        if let Some(base) = var("OTEL_EXPORTER_OTLP_ENDPOINT") {
            return (
                format!("{}/v1/logs", base.trim_end_matches('/')),
                "OTEL_EXPORTER_OTLP_ENDPOINT",
            );
        }
        (
            "http://localhost:4318/v1/logs".to_string(),
            "OpenTelemetry's default",
        )
    }
}

/// The headers in `path`: its `Name: value` lines, blank lines and `#` comments skipped; refused unless
/// it is a regular file of the user's own that nobody else may read or write.
pub fn read_headers(path: &Path) -> Result<Vec<(String, String)>, String> {
    let resolved = match super::trust::resolve(path, "headers_file") {
        Ok(resolved) => resolved,
        Err(super::trust::Untrusted::NotFound) => {
            return Err(format!("headers_file {} does not exist", path.display()));
        }
        Err(super::trust::Untrusted::Refused(message)) => return Err(message),
    };
    let metadata = std::fs::symlink_metadata(&resolved)
        .map_err(|e| format!("cannot read headers_file {}: {e}", resolved.display()))?;
    if !metadata.is_file() {
        return Err(format!(
            "headers_file {} is not a regular file",
            resolved.display()
        ));
    }
    let uid = nix::unistd::getuid().as_raw();
    if metadata.uid() != uid {
        return Err(format!(
            "refused: headers_file {} is owned by uid {}, not by this user (uid {uid}); it holds secrets sent to the collector",
            resolved.display(),
            metadata.uid()
        ));
    }
    let mode = metadata.mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "refused: headers_file {} may be read or written by group or others (mode {mode:04o}); it holds secrets sent to the collector (fix: chmod 600 {})",
            resolved.display(),
            resolved.display()
        ));
    }
    if metadata.len() > 64 * 1024 {
        return Err(format!(
            "headers_file {} is larger than 64 KiB: not a file of headers",
            resolved.display()
        ));
    }
    let text = std::fs::read_to_string(&resolved)
        .map_err(|e| format!("cannot read headers_file {}: {e}", resolved.display()))?;
    parse_headers(&text).map_err(|e| format!("headers_file {}: {e}", resolved.display()))
}

/// `Name: value` lines as headers; a line that is not one is an error naming its number (never its
/// text: it may hold a secret).
pub fn parse_headers(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut headers = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let header = line.split_once(':').and_then(|(name, value)| {
            let name = name.trim();
            let value = value.trim();
            let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
            let fine = !name.is_empty()
                && name.chars().all(token)
                && value.chars().all(|c| c == '\t' || (' '..='~').contains(&c));
            fine.then(|| (name.to_string(), value.to_string()))
        });
        match header {
            Some(header) => headers.push(header),
            None => {
                return Err(format!(
                    "line {} is not a header (Name: value, in plain ASCII)",
                    number + 1
                ));
            }
        }
    }
    Ok(headers)
}

impl Export {
    /// The file `[export.otlp]` names checked as a reload would send it, its error at its place.
    pub(super) fn check_files(&self, label: &str) -> Option<ConfigError> {
        let otlp = self.otlp.as_ref()?;
        let path = otlp.headers_file.as_ref()?;
        let message = read_headers(path).err()?;
        let mut error = ConfigError::whole_file(label, format!("export.otlp.{message}"));
        (error.line, error.column) = otlp.headers_file_at;
        Some(error)
    }

    /// `headers_file` made absolute: `~/` from the home folder, the rest from the settings' folder.
    pub(super) fn resolved(mut self, dir: &Path) -> Export {
        if let Some(otlp) = self.otlp.as_mut()
            && let Some(path) = otlp.headers_file.as_mut()
        {
            let text = path.to_string_lossy().into_owned();
            *path = match text.strip_prefix("~/") {
                Some(rest) => crate::paths::home().join(rest),
                None => dir.join(&*path),
            };
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_is_plain_http_with_its_port_and_path() {
        let e = Endpoint::parse("http://127.0.0.1:4318/v1/logs").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.path.as_str()),
            ("127.0.0.1", 4318, "/v1/logs")
        );
        let e = Endpoint::parse("http://collector").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.path.as_str()),
            ("collector", 80, "/")
        );
        let e = Endpoint::parse("http://[::1]:4318/x?y=1").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.path.as_str()),
            ("::1", 4318, "/x?y=1")
        );
        assert!(
            Endpoint::parse("https://c:4318/v1/logs")
                .unwrap_err()
                .contains("plain http only")
        );
        assert!(Endpoint::parse("c:4318").is_err());
        assert!(
            Endpoint::parse("http://u:p@c/")
                .unwrap_err()
                .contains("headers_file")
        );
        assert!(Endpoint::parse("http://c:99999/").is_err());
    }

    #[test]
    fn headers_are_name_colon_value_and_a_bad_line_is_named_by_number_only() {
        assert_eq!(
            parse_headers("# token\nAuthorization: Bearer abc\n\nX-Team:ops\n").unwrap(),
            [
                ("Authorization".to_string(), "Bearer abc".to_string()),
                ("X-Team".to_string(), "ops".to_string())
            ]
        );
        let error = parse_headers("Authorization Bearer secret\n").unwrap_err();
        assert!(
            error.contains("line 1") && !error.contains("secret"),
            "{error}"
        );
    }

    #[test]
    fn kinds_and_decisions_choose_what_is_sent() {
        let mut otlp = Otlp {
            endpoint: Endpoint::parse("http://c/").unwrap(),
            protocol: Protocol::Json,
            headers_file: None,
            headers_file_at: (0, 0),
            kinds: Vec::new(),
            decisions: Vec::new(),
            redact: false,
        };
        assert!(otlp.sends("reload", None) && otlp.sends("fire", Some("allowed")));
        otlp.decisions = vec!["refused".into(), "asked".into()];
        assert!(otlp.sends("fire", Some("refused")) && !otlp.sends("fire", Some("allowed")));
        assert!(otlp.sends("weakened", None));
        otlp.kinds = vec!["fire".into()];
        assert!(!otlp.sends("weakened", None));
    }
}
