//! JSON Schemas (draft 2020-12) of the two documents syslint prints as JSON: the report
//! ([`Report`], `analyze`/`trace --format json`) and the diff ([`DiffReport`], `diff --format
//! json`).
//!
//! They are derived with schemars from the same types serde prints (the JSON printer only
//! re-indents `serde_json`'s value), describing what is *written* (schemars' serialize contract):
//! a field serde skips when empty is optional, a field always written is required even when it
//! may be null. The doc comments of the types become the `description`s. The schemas ship as
//! `docs/schema/report.schema.json` and `docs/schema/diff.schema.json`, printed by the hidden
//! `syslint schema report|diff`; a unit test below holds the files to this code
//! (`UPDATE_SCHEMA=1` rewrites them), and the cli's test harness validates every report and
//! diff the tests read against the files.

use crate::diff::DiffReport;
use crate::Report;
use schemars::generate::SchemaSettings;
use schemars::transform::transform_subschemas;
use schemars::{JsonSchema, Schema};
use serde_json::Value;

/// The schema of the report (`docs/schema/report.schema.json`).
pub fn report() -> Value {
    generate::<Report>()
}

/// The schema of the diff (`docs/schema/diff.schema.json`).
pub fn diff() -> Value {
    generate::<DiffReport>()
}

/// The schema of `T` as serde writes it, tidied ([`tidy`]), `$schema`, `title` and
/// `description` first. No `$id`: syslint has no address to publish it at, and a schema without
/// one makes no validator look for anything on a network.
fn generate<T: JsonSchema>() -> Value {
    let settings = SchemaSettings::draft2020_12().for_serialize().with_transform(tidy as fn(&mut Schema));
    let Value::Object(mut rest) = settings.into_generator().into_root_schema_for::<T>().to_value() else {
        unreachable!("a struct's schema is an object")
    };
    let mut root = serde_json::Map::new();
    for k in ["$schema", "title", "description"] {
        if let Some(v) = rest.remove(k) {
            root.insert(k.into(), v);
        }
    }
    root.extend(rest);
    Value::Object(root)
}

/// What schemars gives, made to read and to say exactly what is written:
/// - descriptions are the doc comments with their line breaks (wrapped at 100 columns in the
///   source) taken out; a blank line still parts paragraphs;
/// - an optional property (one serde skips when empty or `None`) is never written as null, so
///   its `null` alternative goes: a reader finds the value or nothing.
fn tidy(schema: &mut Schema) {
    if let Some(obj) = schema.as_object_mut() {
        if let Some(Value::String(d)) = obj.get_mut("description") {
            *d = d
                .split("\n\n")
                .map(|p| p.split('\n').map(str::trim).collect::<Vec<_>>().join(" "))
                .collect::<Vec<_>>()
                .join("\n\n");
        }
        let required: Vec<String> = match obj.get("required") {
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_string).collect(),
            _ => Vec::new(),
        };
        if let Some(Value::Object(props)) = obj.get_mut("properties") {
            for (name, p) in props.iter_mut() {
                if !required.contains(name) {
                    not_null(p);
                }
            }
        }
    }
    transform_subschemas(&mut (tidy as fn(&mut Schema)), schema);
}

/// `p` without its `null` alternative (`"type": ["number", "null"]`, or `anyOf` a `null` schema).
fn not_null(p: &mut Value) {
    let Value::Object(m) = p else { return };
    if let Some(Value::Array(types)) = m.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let t = types.remove(0);
            m.insert("type".into(), t);
        }
    }
    let null = serde_json::json!({"type": "null"});
    if let Some(Value::Array(alts)) = m.get_mut("anyOf") {
        alts.retain(|a| *a != null);
        if alts.len() == 1 {
            let Some(Value::Object(only)) = alts.pop() else { return };
            m.remove("anyOf");
            for (k, v) in only {
                m.entry(k).or_insert(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    fn shipped(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema").join(name)
    }

    /// The committed schema files are what the code generates: change a wire type and this
    /// fails until `UPDATE_SCHEMA=1 cargo test -p syslint-report schema` rewrites them (or
    /// `syslint schema report > docs/schema/report.schema.json`).
    #[test]
    fn shipped_schemas_match_the_types() {
        for (name, v) in [("report.schema.json", super::report()), ("diff.schema.json", super::diff())] {
            let mut text = Vec::new();
            crate::printers::json::write_value(&v, &mut text).expect("print");
            let text = String::from_utf8(text).expect("utf8");
            let path = shipped(name);
            if std::env::var_os("UPDATE_SCHEMA").is_some() {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &text).unwrap();
                continue;
            }
            let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!("{}: {e}: run UPDATE_SCHEMA=1 cargo test -p syslint-report schema", path.display())
            });
            if want != text {
                let first = want.lines().zip(text.lines()).position(|(a, b)| a != b).unwrap_or(0);
                panic!(
                    "docs/schema/{name} is not what the types generate (line {}):\n want: {}\n  got: {}\n\
                     rewrite it with UPDATE_SCHEMA=1 cargo test -p syslint-report schema",
                    first + 1,
                    want.lines().nth(first).unwrap_or(""),
                    text.lines().nth(first).unwrap_or("")
                );
            }
        }
    }

    /// What the schemas promise about the version and the diff's kind.
    #[test]
    fn version_and_kind_are_pinned() {
        let r = super::report();
        assert_eq!(r["$schema"], "https://json-schema.org/draft/2020-12/schema");
        assert_eq!(r["properties"]["version"]["const"], crate::SCHEMA_VERSION);
        let d = super::diff();
        assert_eq!(d["properties"]["version"]["const"], crate::SCHEMA_VERSION);
        assert_eq!(d["properties"]["kind"]["const"], "diff");
        // a field written as null when unknown stays required; one skipped when empty does not
        let required = |v: &serde_json::Value, def: &str| -> Vec<String> {
            v["$defs"][def]["required"].as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
        };
        let capture = required(&r, "Capture");
        assert!(capture.contains(&"window".to_string()) && !capture.contains(&"notes".to_string()), "{capture:?}");
    }
}
