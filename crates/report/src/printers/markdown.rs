//! Markdown: fits a pull-request comment. Findings first with evidence in code blocks, then a
//! compact summary.

use super::{fmt_bytes, fmt_count, fmt_opt_secs, fmt_secs};
use crate::Report;
use std::io::{self, Write};

/// Rows per summary table.
const ROWS: usize = 10;

/// `s` as Markdown text that renders as itself and nothing more: control characters written out
/// (`super::inert_text`), every ASCII character that can open markup backslash-escaped (HTML tags,
/// links, images, emphasis, code spans, table cells, headings at a line's start), and the
/// autolinks GitHub makes of bare text broken (`http://`, `www.`, `user@host`). A report is made
/// for pull-request comments, where a path or a socket name the traced program chose must not
/// become a tracking pixel, a link or a heading.
pub fn inert(s: &str) -> String {
    let s = super::inert_text(s);
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len() + 8);
    for (i, c) in s.char_indices() {
        let escape = match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '!' | '#' | '|' | '~' | '&' | '(' | ')' | '{' | '}'
            | '+' | '@' => true,
            // `http://x`: the colon of a scheme; `www.x`: the dot after www
            ':' => b[i + 1..].starts_with(b"//"),
            '.' => i >= 3 && b[..i].to_ascii_lowercase().ends_with(b"www"),
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn esc(s: &str) -> String {
    inert(s)
}

/// `s` as an inline code span that no backtick inside it can close: delimited by one backtick
/// more than its longest run of them, padded with a space when it starts or ends with one.
fn code(s: &str) -> String {
    let longest = longest_run(s, '`');
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{s}{pad}{fence}")
}

fn longest_run(s: &str, c: char) -> usize {
    let (mut best, mut cur) = (0, 0);
    for x in s.chars() {
        cur = if x == c { cur + 1 } else { 0 };
        best = best.max(cur);
    }
    best
}

pub fn print(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    // control characters out of every field first; each field is then escaped for where it goes
    let r = &super::with_strings(r, &|s| super::inert_text(s).into_owned());
    let c = &r.capture;
    let src = match c.sources.len() {
        0 => "no input".to_string(),
        1 => code(&c.sources[0]),
        n => format!("{} and {} more", code(&c.sources[0]), n - 1),
    };
    let span = c.window.map(|w| format!(" over {}", fmt_secs(w.duration_s))).unwrap_or_default();
    writeln!(
        out,
        "## syslint: {}",
        if r.findings.is_empty() {
            "no findings".to_string()
        } else {
            format!("{} finding{}", r.findings.len(), if r.findings.len() == 1 { "" } else { "s" })
        }
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "{src}: {} syscalls from {} process{}{span}.",
        fmt_count(c.syscalls),
        c.processes,
        if c.processes == 1 { "" } else { "es" }
    )?;
    if c.unparsed_lines > 0 || c.lost_events > 0 {
        writeln!(
            out,
            "> {} lines not understood, {} events lost.",
            fmt_count(c.unparsed_lines),
            fmt_count(c.lost_events)
        )?;
    }
    for w in &c.warnings {
        writeln!(out, "> warning: {}", esc(w))?;
    }
    for n in &c.notes {
        writeln!(out, "> note: {}", esc(n))?;
    }
    if let Some(b) = r.baseline_line() {
        writeln!(out, "> {}.", esc(&b))?;
    }
    if let Some(b) = &c.basis {
        writeln!(out)?;
        writeln!(out, "**Evidence:** {} ({})  ", b.kind.as_str(), esc(&b.from))?;
        writeln!(out, "**Cannot show:** {}  ", esc(&b.cannot_show))?;
        writeln!(out, "**Record next:** {}", code(&b.record_next))?;
    }
    writeln!(out)?;
    for f in &r.findings {
        let accepted = if f.baselined { " (baselined)" } else { "" };
        writeln!(
            out,
            "### {} {} {}: {}{accepted}",
            f.severity.as_str(),
            code(&f.code),
            esc(&f.detector),
            esc(&f.message)
        )?;
        writeln!(out)?;
        writeln!(out, "**Subject:** {}  ", esc(&f.subject))?;
        if let Some(cost) = &f.cost {
            writeln!(out, "**Cost:** {}  ", esc(cost))?;
        }
        match &f.fix_for {
            Some(who) => writeln!(out, "**Fix ({}):** {}  ", esc(who), esc(&f.fix))?,
            None => writeln!(out, "**Fix:** {}  ", esc(&f.fix))?,
        }
        if let Some(conf) = f.confidence {
            let why = f.confidence_reason.as_deref().map(|w| format!(": {}", esc(w))).unwrap_or_default();
            writeln!(out, "**Confidence:** {}{why}  ", conf.as_str())?;
        }
        if let Some(c) = &f.confirm {
            writeln!(out, "**Confirm:** {}  ", esc(c))?;
        }
        call_sites(out, f)?;
        if let Some(g) = &f.fix_elsewhere {
            writeln!(out)?;
            writeln!(out, "<details><summary>Other programs and runtimes</summary>")?;
            writeln!(out)?;
            writeln!(out, "{}", esc(g))?;
            writeln!(out)?;
            writeln!(out, "</details>")?;
        }
        if !f.metrics.is_empty() {
            let m: Vec<String> =
                f.metrics.iter().map(|(k, v)| format!("{} = {}", esc(k), esc(&v.to_string()))).collect();
            writeln!(out)?;
            writeln!(out, "Metrics: {}", m.join(", "))?;
        }
        if !f.evidence.is_empty() {
            writeln!(out)?;
            // a fence longer than any run of backticks in the lines: a payload cannot close it
            let shown: Vec<&String> = f.evidence.iter().take(6).collect();
            let fence = "`".repeat(shown.iter().map(|e| longest_run(e, '`')).max().unwrap_or(0).max(2) + 1);
            writeln!(out, "{fence}")?;
            for e in shown {
                writeln!(out, "{e}")?;
            }
            writeln!(out, "{fence}")?;
        }
        writeln!(out)?;
    }
    let s = &r.summary;
    if !s.syscalls.is_empty() {
        writeln!(out, "<details><summary>Top syscalls</summary>")?;
        writeln!(out)?;
        writeln!(out, "| syscall | calls | errors | total | p50 | p99 |")?;
        writeln!(out, "|---|---:|---:|---:|---:|---:|")?;
        for x in s.syscalls.iter().take(ROWS) {
            let t = |v: f64| if x.timed_calls > 0 { fmt_secs(v) } else { "-".into() };
            let top =
                x.errnos.iter().max_by_key(|(_, n)| **n).map(|(e, _)| format!(" ({})", esc(e))).unwrap_or_default();
            writeln!(
                out,
                "| {} | {} | {}{} | {} | {} | {} |",
                esc(&x.name),
                fmt_count(x.calls),
                fmt_count(x.errors),
                top,
                t(x.total_s),
                fmt_opt_secs(x.p50_s),
                fmt_opt_secs(x.p99_s)
            )?;
        }
        writeln!(out)?;
        writeln!(out, "</details>")?;
        writeln!(out)?;
    }
    if let Some(counts) = s.counts.as_ref().filter(|c| s.syscalls.is_empty() && !c.rows.is_empty()) {
        writeln!(out, "<details><summary>Counts ({})</summary>", esc(&counts.tool))?;
        writeln!(out)?;
        writeln!(out, "| syscall | calls | errors | seconds |")?;
        writeln!(out, "|---|---:|---:|---:|")?;
        for x in counts.rows.iter().take(ROWS) {
            let e = if counts.errors_known { fmt_count(x.errors) } else { "-".into() };
            writeln!(
                out,
                "| {} | {} | {e} | {} |",
                esc(&x.name),
                fmt_count(x.calls),
                x.seconds.map_or_else(|| "-".into(), fmt_secs)
            )?;
        }
        writeln!(out)?;
        writeln!(out, "</details>")?;
        writeln!(out)?;
    }
    if !s.endpoints.is_empty() {
        writeln!(out, "<details><summary>Endpoints</summary>")?;
        writeln!(out)?;
        writeln!(out, "| endpoint | dir | connections | sent | received |")?;
        writeln!(out, "|---|---|---:|---:|---:|")?;
        for e in s.endpoints.iter().take(ROWS) {
            writeln!(
                out,
                "| {} {} | {} | {} | {} | {} |",
                esc(&e.proto),
                esc(&e.endpoint),
                esc(&e.direction),
                fmt_count(e.connections),
                fmt_bytes(e.bytes_sent),
                fmt_bytes(e.bytes_received)
            )?;
        }
        writeln!(out)?;
        writeln!(out, "</details>")?;
    }
    Ok(())
}

/// A finding's call sites: the top one in a line, every one with its stack folded away; or
/// the command that would record them.
fn call_sites(out: &mut dyn Write, f: &crate::Finding) -> io::Result<()> {
    if let Some(c) = f.stacks_command.as_ref().filter(|_| f.call_sites.is_empty()) {
        return writeln!(out, "**Call sites:** not in this trace; record them: `{}`  ", c.replace('`', "'"));
    }
    let Some(top) = f.call_sites.first() else { return Ok(()) };
    writeln!(out, "**Called from:** `{}` ({})  ", top.summary(2).replace('`', "'"), top.share_words())?;
    writeln!(out)?;
    writeln!(out, "<details><summary>Call sites ({})</summary>", f.call_sites.len())?;
    writeln!(out)?;
    for site in &f.call_sites {
        writeln!(out, "- {}:", site.share_words())?;
        writeln!(out)?;
        writeln!(out, "  ```")?;
        for (i, fr) in site.frames.iter().enumerate() {
            let mark = if Some(i) == site.owner { "*" } else { " " };
            // (a backtick in a name cannot close the fence)
            writeln!(out, "  {mark} {}", fr.describe().replace('`', "'"))?;
        }
        writeln!(out, "  ```")?;
    }
    writeln!(out)?;
    writeln!(out, "</details>")
}
