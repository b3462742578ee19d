//! JSON output: the [`Report`](crate::Report) serialised as documented in docs/json-schema.md.
//!
//! Indented like `serde_json`'s pretty printer, except that arrays of plain numbers and strings
//! stay on one line: a timeline of 240 bins is one line per series, not 240.

use crate::Report;
use serde::Serialize;
use serde_json::Value;
use std::io::{self, Write};

pub fn print(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    write_value(report, out)
}

/// Any serialisable document in syslint's JSON layout, with a final newline.
pub fn write_value<T: Serialize>(doc: &T, out: &mut dyn Write) -> io::Result<()> {
    let v = serde_json::to_value(doc).map_err(io::Error::from)?;
    let mut s = Vec::with_capacity(64 * 1024);
    emit(&v, 0, &mut s)?;
    s.push(b'\n');
    out.write_all(&s)
}

fn scalar(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
}

fn indent(s: &mut Vec<u8>, n: usize) {
    s.push(b'\n');
    for _ in 0..n {
        s.extend_from_slice(b"  ");
    }
}

/// Scalars and keys serialised straight into the buffer (no string per value: a report of a
/// large log holds hundreds of thousands of numbers).
fn emit(v: &Value, depth: usize, s: &mut Vec<u8>) -> io::Result<()> {
    match v {
        Value::Array(a) if a.is_empty() => s.extend_from_slice(b"[]"),
        Value::Array(a) if a.iter().all(scalar) => {
            s.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    s.extend_from_slice(b", ");
                }
                serde_json::to_writer(&mut *s, x)?;
            }
            s.push(b']');
        }
        Value::Array(a) => {
            s.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    s.push(b',');
                }
                indent(s, depth + 1);
                emit(x, depth + 1, s)?;
            }
            indent(s, depth);
            s.push(b']');
        }
        Value::Object(m) if m.is_empty() => s.extend_from_slice(b"{}"),
        Value::Object(m) => {
            s.push(b'{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    s.push(b',');
                }
                indent(s, depth + 1);
                serde_json::to_writer(&mut *s, k)?;
                s.extend_from_slice(b": ");
                emit(x, depth + 1, s)?;
            }
            indent(s, depth);
            s.push(b'}');
        }
        x => serde_json::to_writer(&mut *s, x)?,
    }
    Ok(())
}

/// Read a report back (used by `diff` and by tests).
/// Read a saved report (for `diff`). A report of a later format version, or one whose
/// timeline could not have been written by syslint (bins of a non-finite or non-positive width,
/// more bins than it ever writes), is refused with the reason.
pub fn parse(text: &str) -> Result<Report, serde_json::Error> {
    use serde::de::Error as _;
    let r: Report = serde_json::from_str(text)?;
    if r.version > crate::SCHEMA_VERSION {
        return Err(serde_json::Error::custom(format!(
            "report format version {} is newer than this syslint reads ({}): upgrade syslint",
            r.version,
            crate::SCHEMA_VERSION
        )));
    }
    if let Some(t) = &r.timeline {
        if !(t.bin_s.is_finite() && t.bin_s > 0.0 && t.start_s.is_finite()) || t.bins > MAX_TIMELINE_BINS {
            return Err(serde_json::Error::custom(format!(
                "timeline with {} bins of {} s starting at {}: not a timeline syslint writes",
                t.bins, t.bin_s, t.start_s
            )));
        }
    }
    Ok(r)
}

/// More bins than any timeline syslint writes (it keeps at most a few hundred).
const MAX_TIMELINE_BINS: u32 = 100_000;

#[cfg(test)]
mod tests {
    #[test]
    fn number_arrays_on_one_line_and_round_trip() {
        let v = serde_json::json!({"a": [1, 2.5, 3], "b": [{"c": "x\"y"}], "d": {}, "e": []});
        let mut out = Vec::new();
        super::write_value(&v, &mut out).expect("write");
        let text = String::from_utf8(out).expect("utf8");
        assert!(text.contains("\"a\": [1, 2.5, 3]"), "{text}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).expect("parse"), v);
    }
}
