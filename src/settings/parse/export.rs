//! `[export]` read from the tree: `[export.otlp]`, its endpoint (or OpenTelemetry's own variables), its
//! protocol, its headers file, what it sends, and `redact`, each mistake at its place.

use super::walker::{Value, Walker};
use crate::settings::export::{DECISIONS, Endpoint, Export, KINDS, Otlp, Protocol};

pub(super) const EXPORT_KEYS: &[&str] = &["otlp"];
pub(super) const OTLP_KEYS: &[&str] = &[
    "enabled",
    "endpoint",
    "protocol",
    "headers_file",
    "kinds",
    "decisions",
    "redact",
];

impl Walker<'_> {
    pub(super) fn export(&mut self, value: &Value<'_>) -> Export {
        let mut export = Export::default();
        let Some(table) = self.table(value, "export") else {
            return export;
        };
        for (key, value) in table.iter() {
            match key.get_ref().as_ref() {
                "otlp" => export.otlp = self.otlp(value),
                _ => self.unknown_key(key, "in [export]", EXPORT_KEYS),
            }
        }
        export
    }

    fn otlp(&mut self, value: &Value<'_>) -> Option<Otlp> {
        let table = self.table(value, "export.otlp")?;
        let mut enabled = true;
        let mut endpoint = None;
        let mut protocol = Protocol::Protobuf;
        let mut headers_file = None;
        let mut headers_file_at = (0, 0);
        let mut kinds = Vec::new();
        let mut decisions = Vec::new();
        let mut redact = false;
        for (key, value) in table.iter() {
            match key.get_ref().as_ref() {
                "enabled" => match value.get_ref().as_bool() {
                    Some(b) => enabled = b,
                    None => self.type_error(value, "export.otlp.enabled", "true or false"),
                },
                "redact" => match value.get_ref().as_bool() {
                    Some(b) => redact = b,
                    None => self.type_error(value, "export.otlp.redact", "true or false"),
                },
                "endpoint" => {
                    if let Some(text) = self.string(value, "export.otlp.endpoint") {
                        match Endpoint::parse(&text) {
                            Ok(parsed) => endpoint = Some(parsed),
                            Err(e) => self.error(value.span(), format!("export.otlp.endpoint {e}")),
                        }
                    }
                }
                "protocol" => match value.get_ref().as_str() {
                    Some("http/protobuf") => protocol = Protocol::Protobuf,
                    Some("http/json") => protocol = Protocol::Json,
                    Some(other) => self.error(
                        value.span(),
                        format!("export.otlp.protocol must be \"http/protobuf\" or \"http/json\", not \"{other}\" (gRPC is not built in: a local Collector takes http and sends on over gRPC)"),
                    ),
                    None => self.type_error(
                        value,
                        "export.otlp.protocol",
                        "\"http/protobuf\" or \"http/json\"",
                    ),
                },
                "headers_file" => {
                    if let Some(path) = self.non_empty_string(value, "export.otlp.headers_file") {
                        headers_file = Some(std::path::PathBuf::from(path));
                        headers_file_at = self.place(value.span().start);
                    }
                }
                "kinds" => kinds = self.names_of(value, "export.otlp.kinds", KINDS),
                "decisions" => {
                    decisions = self.names_of(value, "export.otlp.decisions", DECISIONS)
                }
                _ => self.unknown_key(key, "in [export.otlp]", OTLP_KEYS),
            }
        }
        let endpoint = match endpoint {
            Some(endpoint) => endpoint,
            None => {
                let (url, from) = Endpoint::from_environment();
                match Endpoint::parse(&url) {
                    Ok(endpoint) => endpoint,
                    Err(e) => {
                        if enabled {
                            self.error(
                                value.span(),
                                format!("export.otlp has no endpoint, and {from} gives {e}; write endpoint = \"http://...\" in [export.otlp]"),
                            );
                        }
                        return None;
                    }
                }
            }
        };
        if enabled && !cfg!(feature = "otlp") {
            self.error(
                value.span(),
                "[export.otlp]: this hookd was built without its exporter (the cargo feature \"otlp\"); build it with the feature, or write enabled = false".into(),
            );
            return None;
        }
        enabled.then_some(Otlp {
            endpoint,
            protocol,
            headers_file,
            headers_file_at,
            kinds,
            decisions,
            redact,
        })
    }

    /// A list of names, each one of `known`.
    fn names_of(&mut self, value: &Value<'_>, field: &str, known: &[&str]) -> Vec<String> {
        let expected = format!("a list of: {}", known.join(", "));
        let Some(items) = value.get_ref().as_array() else {
            self.type_error(value, field, &expected);
            return Vec::new();
        };
        let mut names = Vec::new();
        for item in items.iter() {
            match item.get_ref().as_str() {
                Some(name) if known.contains(&name) => names.push(name.to_string()),
                Some(name) => {
                    let hint = crate::tables::moment::did_you_mean(name, known.iter().copied())
                        .map_or_else(String::new, |meant| format!(" (did you mean \"{meant}\"?)"));
                    self.error(
                        item.span(),
                        format!("{field}: unknown \"{name}\"{hint}; {expected}"),
                    );
                }
                None => self.error(item.span(), format!("{field} must be {expected}")),
            }
        }
        names
    }
}

#[cfg(feature = "otlp")]
#[cfg(test)]
mod tests {
    use super::super::parse;
    use crate::settings::export::Protocol;

    fn errors(text: &str) -> Vec<String> {
        match parse("hooks.toml", text) {
            Ok(_) => Vec::new(),
            Err(errors) => errors.0.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn export_is_off_unless_the_file_has_export_otlp() {
        let parsed = parse("hooks.toml", "# none\n").ok().unwrap();
        assert_eq!(parsed.export.otlp, None);
        let parsed = parse(
            "hooks.toml",
            "[export.otlp]\nendpoint = \"http://127.0.0.1:4318/v1/logs\"\nprotocol = \"http/json\"\nkinds = [\"fire\"]\ndecisions = [\"refused\", \"asked\"]\nredact = true\n",
        )
        .ok()
        .unwrap();
        let otlp = parsed.export.otlp.unwrap();
        assert_eq!(otlp.protocol, Protocol::Json);
        assert_eq!(otlp.endpoint.port, 4318);
        assert_eq!(otlp.kinds, ["fire"]);
        assert!(otlp.redact);
        let off = parse("hooks.toml", "[export.otlp]\nenabled = false\n")
            .ok()
            .unwrap();
        assert_eq!(off.export.otlp, None);
    }

    #[test]
    fn export_mistakes_are_placed() {
        let errors = errors(
            "[export.otlp]\nendpoint = \"https://c:4318/v1/logs\"\nprotocol = \"grpc\"\nkinds = [\"fires\"]\nredcat = true\n",
        );
        assert!(
            errors[0].starts_with(
                "hooks.toml:2:12: export.otlp.endpoint \"https://c:4318/v1/logs\" is https"
            ),
            "{errors:?}"
        );
        assert!(
            errors[1].starts_with("hooks.toml:3:12: export.otlp.protocol must be"),
            "{errors:?}"
        );
        assert!(
            errors[2].starts_with(
                "hooks.toml:4:10: export.otlp.kinds: unknown \"fires\" (did you mean \"fire\"?)"
            ),
            "{errors:?}"
        );
        assert!(
            errors[3].starts_with(
                "hooks.toml:5:1: unknown key \"redcat\" in [export.otlp] (did you mean \"redact\"?)"
            ),
            "{errors:?}"
        );
    }
}
