//! JSON output: the [`Report`](crate::Report) serialised as documented in docs/json-schema.md.

use crate::Report;
use std::io::{self, Write};

pub fn print(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report).map_err(io::Error::from)?;
    writeln!(out)
}

/// Read a report back (used by `diff` and by tests).
pub fn parse(text: &str) -> Result<Report, serde_json::Error> {
    serde_json::from_str(text)
}
