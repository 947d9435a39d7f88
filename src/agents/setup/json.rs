//! The JSON of an agent's settings file as setup reads and writes it: a value that keeps its object
//! keys in the file's order and its numbers as written (serde_json's map would sort the keys and round
//! the numbers), read through serde, and a hook made from serde_json in the order people write it.

use std::collections::HashSet;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// A JSON value that keeps its object keys in the order of the file, and its numbers as written.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Json {
    Null,
    Bool(bool),
    Number(String),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

/// How serde_json, built with `arbitrary_precision` here, hands a number to a visitor: a map of one
/// entry under this key, the number's text its value.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Number(v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
        Ok(Json::Number(v.to_string()))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut entries: Vec<(String, Json)> = Vec::new();
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if entries.is_empty() && key == NUMBER_TOKEN {
                return Ok(Json::Number(map.next_value()?));
            }
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format!(
                    "the key \"{key}\" is given twice (which one counts differs between programs)"
                )));
            }
            let value = map.next_value()?;
            entries.push((key, value));
        }
        Ok(Json::Object(entries))
    }
}

impl Json {
    pub(super) fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        match self {
            Json::Object(entries) => entries.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub(super) fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub(super) fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(super) fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Number(_) => "a number",
            Json::Str(_) => "a string",
            Json::Array(_) => "a list",
            Json::Object(_) => "an object",
        }
    }

    /// A serde_json value (a hook as `--print-settings` makes it) with its keys in the order people
    /// write them (`name`, `type`, `command`, `timeout`; `matcher` before `hooks`), not sorted.
    pub(super) fn from_value(value: &Value) -> Json {
        const ORDER: &[&str] = &[
            "name",
            "matcher",
            "type",
            "command",
            "bash",
            "timeout",
            "timeoutSec",
            "hooks",
        ];
        match value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) => Json::Number(n.to_string()),
            Value::String(s) => Json::Str(s.clone()),
            Value::Array(items) => Json::Array(items.iter().map(Json::from_value).collect()),
            Value::Object(map) => {
                let mut entries: Vec<(String, Json)> = map
                    .iter()
                    .map(|(k, v)| (k.clone(), Json::from_value(v)))
                    .collect();
                entries
                    .sort_by_key(|(k, _)| ORDER.iter().position(|o| o == k).unwrap_or(ORDER.len()));
                Json::Object(entries)
            }
        }
    }
}

/// The text as JSON, an empty file as an empty object; errors as `LABEL:LINE:COL: not JSON: ...`.
pub(super) fn parse_json(text: &str, label: &str) -> Result<Json, String> {
    if text.trim().is_empty() {
        return Ok(Json::Object(Vec::new()));
    }
    serde_json::from_str(text).map_err(|e| {
        let comment = text.lines().nth(e.line().saturating_sub(1)).is_some_and(|line| {
            line.get(e.column().saturating_sub(1)..)
                .is_some_and(|rest| rest.starts_with("//") || rest.starts_with("/*"))
        });
        let hint = if comment {
            " (a comment: hookd setup writes plain JSON and cannot keep comments; take them out, or merge the output of hookd relay --print-settings by hand)"
        } else {
            ""
        };
        let message = e.to_string();
        let message = message.split(" at line ").next().unwrap_or(&message);
        format!("{label}:{}:{}: not JSON: {message}{hint}", e.line(), e.column())
    })
}

/// The indentation the file uses (its first indented line's), two spaces when it shows none.
pub(super) fn indent_of(text: &str) -> String {
    text.lines()
        .skip(1)
        .map(|line| &line[..line.len() - line.trim_start_matches([' ', '\t']).len()])
        .find(|lead| !lead.is_empty())
        .filter(|lead| lead.chars().all(|c| c == ' ') || lead.chars().all(|c| c == '\t'))
        .unwrap_or("  ")
        .to_string()
}

/// Pretty JSON as agents write their own settings (`JSON.stringify(v, null, 2)`): one entry a line.
pub(super) fn write_json(out: &mut String, value: &Json, indent: &str, level: usize) {
    let pad = |out: &mut String, level: usize| {
        for _ in 0..level {
            out.push_str(indent);
        }
    };
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) => out.push_str(n),
        Json::Str(s) => out.push_str(&serde_json::to_string(s).expect("a string serializes")),
        Json::Array(items) if items.is_empty() => out.push_str("[]"),
        Json::Object(entries) if entries.is_empty() => out.push_str("{}"),
        Json::Array(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                pad(out, level + 1);
                write_json(out, item, indent, level + 1);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            pad(out, level);
            out.push(']');
        }
        Json::Object(entries) => {
            out.push_str("{\n");
            for (i, (key, item)) in entries.iter().enumerate() {
                pad(out, level + 1);
                out.push_str(&serde_json::to_string(key).expect("a string serializes"));
                out.push_str(": ");
                write_json(out, item, indent, level + 1);
                out.push_str(if i + 1 < entries.len() { ",\n" } else { "\n" });
            }
            pad(out, level);
            out.push('}');
        }
    }
}
