//! `syslint explain NAME|CODE`: the documentation of one detector.

use crate::cli::ExplainArgs;
use anyhow::{bail, Result};
use syslint_analyze::registry;

pub fn run(a: ExplainArgs) -> Result<u8> {
    let Some(m) = registry::find(&a.detector) else {
        let known: Vec<String> = registry::metas().iter().map(|m| format!("{} ({})", m.name, m.code)).collect();
        if known.is_empty() {
            bail!("no detector named {:?}: this version has no detectors yet", a.detector);
        }
        bail!("no detector named {:?}; known: {}", a.detector, known.join(", "));
    };
    let d = &m.docs;
    println!(
        "{} ({}) [{}, {:?}, default severity {}]\n",
        m.name,
        m.code,
        m.category,
        m.status,
        m.default_severity.as_str()
    );
    for (h, t) in [
        ("What it detects", d.what),
        ("Why it hurts", d.why),
        ("Evidence", d.evidence),
        ("Fix", d.fix),
        ("Example", d.example),
    ] {
        println!("## {h}\n{}\n", t.trim());
    }
    Ok(0)
}
