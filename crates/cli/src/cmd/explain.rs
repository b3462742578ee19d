//! `syslint explain NAME|CODE`: the documentation of one detector.

use crate::cli::ExplainArgs;
use anyhow::{bail, Result};
use syslint_analyze::registry;

pub fn run(a: ExplainArgs) -> Result<u8> {
    let Some(e) = registry::find(&a.detector) else {
        let known: Vec<String> = registry::metas().iter().map(|m| format!("{} ({})", m.name, m.code)).collect();
        if known.is_empty() {
            bail!("no detector named {:?}: this version has no detectors yet", a.detector);
        }
        bail!("no detector named {:?}; known: {}", a.detector, known.join(", "));
    };
    // written, not printed: a reader that leaves (`| head`) is an error returned, not a panic
    let mut out = std::io::stdout().lock();
    std::io::Write::write_all(&mut out, render(e).as_bytes())?;
    std::io::Write::flush(&mut out)?;
    Ok(0)
}

/// The documentation page of a detector, as plain text with Markdown headings.
pub fn render(e: &registry::Entry) -> String {
    let m = e.meta;
    let d = &m.docs;
    let mut s = format!(
        "# {} ({})\n\n{}\n\ncategory: {}, status: {}\n\n",
        m.name,
        m.code,
        m.summary,
        m.category.as_str(),
        m.status.as_str()
    );
    for (h, t) in [
        ("What it detects", d.what),
        ("Why it hurts", d.why),
        ("Evidence", d.evidence),
        ("Fix", d.fix),
        ("Example", d.example),
    ] {
        s.push_str(&format!("## {h}\n{}\n\n", t.trim()));
    }
    // severity from measured cost (issue 27): one rule for every detector
    let c = &m.cost;
    s.push_str(
        "## Cost and severity
",
    );
    match c.metric {
        Some(metric) => s.push_str(&format!(
            "A finding's cost is {} (metric `{metric}`), weighed against the time traced: below {} of it \
a finding is at most info, below {} at most a warning, whatever its counts. JSON: `impact`.\n\n",
            c.model,
            registry::fmt_share(syslint_report::Impact::WARN_SHARE),
            registry::fmt_share(syslint_report::Impact::ERROR_SHARE),
        )),
        None => s.push_str(&format!("{}{}.\n\n", c.model[..1].to_uppercase(), &c.model[1..])),
    }
    // what an excerpt and a table of counts can show (issue 14): the detector's own words
    let l = &m.levels;
    s.push_str("## From less than a full trace\n");
    let none = "not declared: this detector reads full traces only";
    s.push_str(&format!("- excerpt: {}\n", if l.excerpt.is_empty() { none } else { l.excerpt }));
    let needs = match (l.table.every_syscall, l.table.errors) {
        (true, true) => " (asked only of a table that counts every syscall and their errors)",
        (true, false) => " (asked only of a table that counts every syscall, not one limited with -e trace=)",
        (false, true) => " (asked only of a table with an errors column)",
        (false, false) => "",
    };
    s.push_str(&format!("- counts: {}{needs}\n\n", if l.counts.is_empty() { none } else { l.counts }));
    if !m.options.is_empty() {
        let defaults = (e.defaults)();
        s.push_str(&format!("## Options (syslint.toml, table [{}])\n", m.name));
        for o in m.options {
            let v = defaults.get(o.name).map(std::string::ToString::to_string).unwrap_or_default();
            let amount = if o.amount { " (an amount: see below)" } else { "" };
            s.push_str(&format!("- `{} = {v}`: {}{amount}\n", o.name, o.meaning.trim()));
        }
        if m.options.iter().any(|o| o.amount) {
            s.push_str(
                "\nAmounts add up over a trace. A window of `syslint agent` that ends early at its bound of \
                 records (--window-records) is judged at the rate it saw, over the whole --window: \
                 the amounts are divided by how much longer the window was to last, and a finding \
                 this makes more severe says so in its cost line.\n",
            );
        }
        s.push('\n');
    }
    s
}
