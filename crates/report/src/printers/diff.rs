//! Printers for `syslint diff`: terminal table and Markdown (JSON is the serialised
//! [`DiffReport`](crate::diff::DiffReport)).

use super::{fmt_count, fmt_secs};
use crate::diff::{DiffReport, FindingDelta};
use std::io::{self, Write};

fn side_line(label: &str, s: &crate::diff::Side) -> String {
    let src = s.sources.first().cloned().unwrap_or_default();
    let more = if s.sources.len() > 1 { format!(" (+{})", s.sources.len() - 1) } else { String::new() };
    let span = s.window_s.map(|w| format!(" over {}", fmt_secs(w))).unwrap_or_default();
    format!(
        "{label} {src}{more}: {} syscalls{span}, {} finding{}",
        fmt_count(s.syscalls),
        s.findings,
        if s.findings == 1 { "" } else { "s" }
    )
}

fn finding_line(kind: &str, f: &FindingDelta) -> String {
    let sev = |s: &Option<crate::diff::FindingSide>| s.as_ref().map_or("-", |x| x.severity.as_str());
    let msg = f.after.as_ref().or(f.before.as_ref()).map(|s| s.message.clone()).unwrap_or_default();
    let at = f.call_site.as_deref().map(|s| format!(" at {s}")).unwrap_or_default();
    format!("{kind:<10} {} {} ({}){at}: {msg} [{} -> {}]", f.code, f.detector, f.subject, sev(&f.before), sev(&f.after))
}

/// Calls before and after, per unit of work when there is one.
pub(crate) fn calls(s: &crate::diff::SyscallDelta) -> (f64, f64) {
    match (s.per_unit_before, s.per_unit_after) {
        (Some(b), Some(a)) => (b, a),
        _ => (s.calls_before as f64, s.calls_after as f64),
    }
}

pub(crate) fn change(b: f64, a: f64) -> String {
    if b == 0.0 && a == 0.0 {
        return "0".into();
    }
    if b == 0.0 {
        return "new".into();
    }
    format!("{:+.0}%", (a - b) / b * 100.0)
}

pub(crate) fn num(v: f64) -> String {
    if v >= 100.0 {
        fmt_count(v.round() as u64)
    } else if v >= 1.0 || v <= 0.0 {
        format!("{v:.1}")
    } else {
        // three significant digits: a rate of 0.0118 MiB/s is not 0.0
        super::sig3(v)
    }
}

/// `syscalls per MiB on sockets 1,000 -> 545 (-45%); MiB on sockets per second 20 -> 44 (+120%)`:
/// what the verdict weighed.
fn measured(d: &DiffReport) -> Option<String> {
    let mut parts: Vec<String> = [&d.wall_s, &d.cost, &d.throughput, &d.per_exchange]
        .into_iter()
        .flatten()
        .map(|m| format!("{} {} -> {} ({})", m.name, num(m.before), num(m.after), change(m.before, m.after)))
        .collect();
    if let (Some(t), false) = (d.tolerance, parts.is_empty()) {
        let tp = d
            .throughput_tolerance
            .filter(|x| *x > t)
            .map(|x| format!(" ({:.0}% per second: the runs' rates wander)", x * 100.0));
        parts.push(format!("changes within {:.0}% count as unchanged{}", t * 100.0, tp.unwrap_or_default()));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

pub fn print_table(d: &DiffReport, out: &mut dyn Write) -> io::Result<()> {
    let d = &super::with_strings(d, &|s| super::inert_text(s).into_owned());
    writeln!(out, "syslint diff: {}", d.verdict)?;
    writeln!(out, "  {}", side_line("before", &d.before))?;
    writeln!(out, "  {}", side_line("after ", &d.after))?;
    if let Some(u) = &d.unit {
        writeln!(out, "  unit of work: {} ({} before, {} after)", u.name, num(u.before), num(u.after))?;
    }
    if let Some(m) = measured(d) {
        writeln!(out, "  measured: {m}")?;
    }
    writeln!(out)?;
    let f = &d.findings;
    if f.fixed.is_empty() && f.new.is_empty() && f.persisting.is_empty() {
        writeln!(out, "findings: none in either run")?;
    } else {
        writeln!(out, "findings")?;
        for x in &f.fixed {
            writeln!(out, "  {}", finding_line("fixed", x))?;
        }
        for x in &f.new {
            writeln!(out, "  {}", finding_line("NEW", x))?;
        }
        for x in &f.persisting {
            writeln!(out, "  {}", finding_line(if x.worse { "WORSE" } else { "persisting" }, x))?;
        }
    }
    writeln!(out)?;
    if d.syscalls.is_empty() {
        writeln!(out, "syscalls: no significant change ({} folded as noise)", d.folded)?;
        return Ok(());
    }
    let per = d.unit.as_ref().map(|u| format!("per {}", u.name));
    writeln!(out, "syscalls{}", per.as_ref().map(|p| format!(" (calls {p})")).unwrap_or_default())?;
    writeln!(
        out,
        "  {:<16} {:>12} {:>12} {:>8} {:>10} {:>10}",
        "syscall", "before", "after", "change", "time bef.", "time aft."
    )?;
    for s in d.syscalls.iter().take(20) {
        let (b, a) = calls(s);
        writeln!(
            out,
            "  {:<16} {:>12} {:>12} {:>8} {:>10} {:>10}",
            s.name,
            num(b),
            num(a),
            change(b, a),
            fmt_secs(s.total_s_before),
            fmt_secs(s.total_s_after)
        )?;
    }
    if d.folded > 0 {
        writeln!(out, "  ({} more syscalls changed too little to matter)", d.folded)?;
    }
    Ok(())
}

pub fn print_markdown(d: &DiffReport, out: &mut dyn Write) -> io::Result<()> {
    // every string is data (see markdown::inert): code and names too, not only free text
    let d = &super::with_strings(d, &|s| super::markdown::inert(s));
    writeln!(out, "## syslint diff: {}", d.verdict)?;
    writeln!(out)?;
    writeln!(out, "- {}", side_line("before:", &d.before))?;
    writeln!(out, "- {}", side_line("after:", &d.after))?;
    if let Some(u) = &d.unit {
        writeln!(out, "- unit of work: {} ({} before, {} after)", u.name, num(u.before), num(u.after))?;
    }
    if let Some(m) = measured(d) {
        writeln!(out, "- measured: {m}")?;
    }
    writeln!(out)?;
    let f = &d.findings;
    if !(f.fixed.is_empty() && f.new.is_empty() && f.persisting.is_empty()) {
        writeln!(out, "| | finding | subject | before | after |")?;
        writeln!(out, "|---|---|---|---|---|")?;
        let row = |kind: &str, x: &FindingDelta| {
            let m = |s: &Option<crate::diff::FindingSide>| {
                s.as_ref().map_or("—".to_string(), |s| format!("{}: {}", s.severity.as_str(), s.message))
            };
            format!("| {kind} | `{}` {} | {} | {} | {} |", x.code, x.detector, x.subject, m(&x.before), m(&x.after))
        };
        for x in &f.fixed {
            writeln!(out, "{}", row("✅ fixed", x))?;
        }
        for x in &f.new {
            writeln!(out, "{}", row("❌ new", x))?;
        }
        for x in &f.persisting {
            writeln!(out, "{}", row(if x.worse { "❌ worse" } else { "➖ persisting" }, x))?;
        }
        writeln!(out)?;
    }
    if !d.syscalls.is_empty() {
        let per = d.unit.as_ref().map(|u| format!(" per {}", u.name)).unwrap_or_default();
        writeln!(out, "| syscall | calls{per} before | after | change | time before | after |")?;
        writeln!(out, "|---|---:|---:|---:|---:|---:|")?;
        for s in d.syscalls.iter().take(12) {
            let (b, a) = calls(s);
            writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                s.name,
                num(b),
                num(a),
                change(b, a),
                fmt_secs(s.total_s_before),
                fmt_secs(s.total_s_after)
            )?;
        }
        if d.folded > 0 {
            writeln!(out)?;
            writeln!(out, "{} more syscalls changed too little to matter.", d.folded)?;
        }
    }
    Ok(())
}
