//! `syslint detectors`: one line per detector.

use crate::cli::{DetectorsArgs, Format};
use anyhow::Result;
use std::io::Write;
use syslint_analyze::registry;

pub fn run(a: DetectorsArgs) -> Result<u8> {
    let metas = registry::metas();
    // written, not printed: a reader that leaves (`| head`) is an error returned, not a panic
    let mut out = std::io::stdout().lock();
    match a.format {
        Format::Json => {
            let v: Vec<serde_json::Value> = metas
                .iter()
                .map(|m| {
                    serde_json::json!({
                        "code": m.code, "name": m.name, "category": m.category.as_str(),
                        "status": m.status.as_str(), "summary": m.summary,
                    })
                })
                .collect();
            writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        }
        Format::Html => anyhow::bail!("`syslint detectors` prints table, markdown or json, not html"),
        Format::Sarif => anyhow::bail!("`syslint detectors` prints table, markdown or json, not sarif"),
        Format::Table | Format::Markdown => {
            if metas.is_empty() {
                writeln!(out, "no detectors in this version yet (syslint analyze prints the summary)")?;
            }
            for m in metas {
                writeln!(
                    out,
                    "{:6} {:22} {:10} {:8} {}",
                    m.code,
                    m.name,
                    m.category.as_str(),
                    m.status.as_str(),
                    m.summary
                )?;
            }
            writeln!(out, "\n`syslint explain NAME` documents one; preview detectors run only with --select.")?;
        }
    }
    out.flush()?;
    Ok(0)
}
