//! OTLP's logs request, `ExportLogsServiceRequest` (opentelemetry-proto, `collector/logs/v1`), written by
//! hand in both its encodings: protobuf (`http/protobuf`) and OTLP's JSON mapping (`http/json`).
//!
//! Why by hand: the request hookd sends has one resource, one scope and flat log records; writing those
//! few messages takes a page, where the opentelemetry crates (SDK, exporter, prost, an HTTP client)
//! cost the build far more (the figures are in docs/export.md). The field numbers are the proto's, each
//! named where it is written; the tests decode what this writes with `opentelemetry-proto` (prost and
//! serde), which hookd did not write.

use serde_json::{Value, json};

/// An attribute's value: OTLP's `AnyValue`, the kinds hookd writes.
#[derive(Debug, Clone, PartialEq)]
pub enum Any {
    Str(String),
    Bool(bool),
    Int(i64),
    Double(f64),
    Array(Vec<Any>),
    Map(Vec<(String, Any)>),
}

/// One log record (`opentelemetry.proto.logs.v1.LogRecord`).
#[derive(Debug, Clone, PartialEq)]
pub struct LogRecord {
    pub time_unix_nano: u64,
    pub observed_time_unix_nano: u64,
    /// `SeverityNumber`: 9 INFO, 13 WARN, 17 ERROR.
    pub severity_number: i32,
    pub severity_text: &'static str,
    pub body: String,
    pub event_name: String,
    pub attributes: Vec<(String, Any)>,
}

/// The whole request: one resource (this hookd), one scope, its records.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub resource: Vec<(String, Any)>,
    pub scope_name: &'static str,
    pub scope_version: &'static str,
    pub records: Vec<LogRecord>,
}

// Protobuf: every field hookd writes is length-delimited (wire type 2), a varint (0), or fixed64 (1).

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn key(out: &mut Vec<u8>, field: u32, wire_type: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire_type));
}

fn bytes_field(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    key(out, field, 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A message field: written into a buffer of its own, then framed by its length.
fn message_field(out: &mut Vec<u8>, field: u32, write: impl FnOnce(&mut Vec<u8>)) {
    let mut inner = Vec::new();
    write(&mut inner);
    bytes_field(out, field, &inner);
}

fn fixed64_field(out: &mut Vec<u8>, field: u32, value: u64) {
    key(out, field, 1);
    out.extend_from_slice(&value.to_le_bytes());
}

fn any_value(out: &mut Vec<u8>, value: &Any) {
    // AnyValue: string_value = 1, bool_value = 2, int_value = 3, double_value = 4, array_value = 5,
    // kvlist_value = 6. A oneof is written even when it holds its type's default.
    match value {
        Any::Str(s) => bytes_field(out, 1, s.as_bytes()),
        Any::Bool(b) => {
            key(out, 2, 0);
            varint(out, u64::from(*b));
        }
        Any::Int(i) => {
            key(out, 3, 0);
            varint(out, *i as u64);
        }
        Any::Double(d) => fixed64_field(out, 4, d.to_bits()),
        // ArrayValue.values = 1
        Any::Array(items) => message_field(out, 5, |out| {
            for item in items {
                message_field(out, 1, |out| any_value(out, item));
            }
        }),
        // KeyValueList.values = 1
        Any::Map(pairs) => message_field(out, 6, |out| key_values(out, 1, pairs)),
    }
}

/// Repeated `KeyValue` (key = 1, value = 2) as field `field`.
fn key_values(out: &mut Vec<u8>, field: u32, pairs: &[(String, Any)]) {
    for (name, value) in pairs {
        message_field(out, field, |out| {
            bytes_field(out, 1, name.as_bytes());
            message_field(out, 2, |out| any_value(out, value));
        });
    }
}

impl Request {
    /// The request in protobuf.
    pub fn to_protobuf(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // ExportLogsServiceRequest.resource_logs = 1
        message_field(&mut out, 1, |out| {
            // ResourceLogs.resource = 1; Resource.attributes = 1
            message_field(out, 1, |out| key_values(out, 1, &self.resource));
            // ResourceLogs.scope_logs = 2
            message_field(out, 2, |out| {
                // ScopeLogs.scope = 1; InstrumentationScope.name = 1, version = 2
                message_field(out, 1, |out| {
                    bytes_field(out, 1, self.scope_name.as_bytes());
                    bytes_field(out, 2, self.scope_version.as_bytes());
                });
                // ScopeLogs.log_records = 2
                for record in &self.records {
                    message_field(out, 2, |out| record.write_protobuf(out));
                }
            });
        });
        out
    }

    /// The request in OTLP's JSON mapping: field names in lowerCamelCase, 64-bit integers as decimal
    /// strings, enums as numbers.
    pub fn to_json(&self) -> Vec<u8> {
        let records: Vec<Value> = self.records.iter().map(LogRecord::json).collect();
        let request = json!({
            "resourceLogs": [{
                "resource": {"attributes": json_key_values(&self.resource)},
                "scopeLogs": [{
                    "scope": {"name": self.scope_name, "version": self.scope_version},
                    "logRecords": records,
                }],
            }],
        });
        serde_json::to_vec(&request).unwrap_or_default()
    }
}

impl LogRecord {
    fn write_protobuf(&self, out: &mut Vec<u8>) {
        // LogRecord: time_unix_nano = 1 (fixed64), severity_number = 2, severity_text = 3, body = 5,
        // attributes = 6, observed_time_unix_nano = 11 (fixed64), event_name = 12.
        fixed64_field(out, 1, self.time_unix_nano);
        key(out, 2, 0);
        varint(out, self.severity_number as u64);
        bytes_field(out, 3, self.severity_text.as_bytes());
        message_field(out, 5, |out| any_value(out, &Any::Str(self.body.clone())));
        key_values(out, 6, &self.attributes);
        fixed64_field(out, 11, self.observed_time_unix_nano);
        bytes_field(out, 12, self.event_name.as_bytes());
    }

    fn json(&self) -> Value {
        json!({
            "timeUnixNano": self.time_unix_nano.to_string(),
            "observedTimeUnixNano": self.observed_time_unix_nano.to_string(),
            "severityNumber": self.severity_number,
            "severityText": self.severity_text,
            "body": {"stringValue": self.body},
            "attributes": json_key_values(&self.attributes),
            "eventName": self.event_name,
        })
    }
}

fn json_key_values(pairs: &[(String, Any)]) -> Value {
    Value::Array(
        pairs
            .iter()
            .map(|(name, value)| json!({"key": name, "value": json_any(value)}))
            .collect(),
    )
}

fn json_any(value: &Any) -> Value {
    match value {
        Any::Str(s) => json!({"stringValue": s}),
        Any::Bool(b) => json!({"boolValue": b}),
        Any::Int(i) => json!({"intValue": i.to_string()}),
        // JSON has no NaN or infinity; a duration is neither.
        Any::Double(d) if d.is_finite() => json!({"doubleValue": d}),
        Any::Double(_) => json!({"doubleValue": 0.0}),
        Any::Array(items) => {
            json!({"arrayValue": {"values": items.iter().map(json_any).collect::<Vec<_>>()}})
        }
        Any::Map(pairs) => json!({"kvlistValue": {"values": json_key_values(pairs)}}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_written_seven_bits_at_a_time() {
        let mut out = Vec::new();
        varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        out.clear();
        varint(&mut out, (-1i64) as u64);
        assert_eq!(out.len(), 10, "a negative int64 takes ten bytes");
    }

    #[test]
    fn a_string_attribute_is_a_key_value_message() {
        let mut out = Vec::new();
        key_values(&mut out, 6, &[("a".into(), Any::Str("b".into()))]);
        // field 6 (len 8): key "a" (field 1), value (field 2, len 3): string_value "b" (field 1)
        assert_eq!(out, [0x32, 8, 0x0a, 1, b'a', 0x12, 3, 0x0a, 1, b'b']);
    }
}
