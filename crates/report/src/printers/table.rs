//! The terminal report: findings first, then the summary tables, fitted to the width.

use super::{fmt_bytes, fmt_count, fmt_opt_secs, fmt_secs};
use crate::{Finding, Report, Severity};
use std::io::{self, Write};

/// A width for output nobody sized (a pipe, a file): every column is shown.
pub const UNLIMITED: usize = 1 << 16;

#[derive(Clone, Debug)]
pub struct TableOptions {
    /// Emit ANSI colours.
    pub color: bool,
    /// Terminal width in columns ([`UNLIMITED`]: no column is dropped). When columns must be
    /// dropped to fit, a line under the table names them.
    pub width: usize,
    /// Rows per table (syscalls, targets, endpoints, processes).
    pub top: usize,
    /// Show what is folded away: the general advice beside a program's own.
    pub verbose: bool,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions { color: false, width: 100, top: 15, verbose: false }
    }
}

struct Style {
    on: bool,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
    fn sev(&self, sev: Severity) -> String {
        match sev {
            Severity::Error => self.paint("1;31", "error"),
            Severity::Warning => self.paint("1;33", "warning"),
            Severity::Info => self.paint("1;36", "info"),
        }
    }
}

/// A column: header, right-aligned or not, priority (lower is dropped first when narrow).
struct Col {
    head: &'static str,
    right: bool,
    keep: u8,
}

fn table(out: &mut dyn Write, st: &Style, width: usize, cols: &[Col], rows: &[Vec<String>]) -> io::Result<()> {
    let n = cols.len();
    let mut w: Vec<usize> = cols.iter().map(|c| c.head.len()).collect();
    for r in rows {
        for (i, cell) in r.iter().enumerate().take(n) {
            w[i] = w[i].max(cell.chars().count());
        }
    }
    // long names (paths) give way first, down to a reasonable width
    let mut shown: Vec<bool> = vec![true; n];
    let first_cap = (width * 45 / 100).max(24);
    let total0: usize = 2 + w.iter().map(|w| w + 2).sum::<usize>();
    if total0 > width && w[0] > first_cap {
        w[0] = first_cap.max(w[0].saturating_sub(total0 - width));
    }
    // then drop the least important columns until it fits (never the first)
    let total = |shown: &[bool], w: &[usize]| -> usize {
        2 + shown.iter().zip(w).filter(|(s, _)| **s).map(|(_, w)| w + 2).sum::<usize>()
    };
    let mut prio: Vec<usize> = (1..n).collect();
    prio.sort_by_key(|&i| cols[i].keep);
    for &i in &prio {
        if total(&shown, &w) <= width {
            break;
        }
        shown[i] = false;
    }
    // the first column (names) is cut if it is still too wide
    let over = total(&shown, &w).saturating_sub(width);
    if over > 0 {
        w[0] = w[0].saturating_sub(over).max(12);
    }
    let line = |cells: Vec<String>| -> String {
        let mut s = String::from("  ");
        for (i, c) in cells.into_iter().enumerate() {
            if !shown[i] {
                continue;
            }
            let c = cut(&c, w[i]);
            let pad = w[i].saturating_sub(c.chars().count());
            if cols[i].right {
                s.push_str(&" ".repeat(pad));
                s.push_str(&c);
            } else {
                s.push_str(&c);
                s.push_str(&" ".repeat(pad));
            }
            s.push_str("  ");
        }
        s.trim_end().to_string()
    };
    let head = line(cols.iter().map(|c| c.head.to_string()).collect());
    writeln!(out, "{}", st.dim(&head))?;
    for r in rows {
        writeln!(out, "{}", line(r.clone()))?;
    }
    // never silently: say what did not fit, and how to see it
    let hidden: Vec<&str> = cols.iter().zip(&shown).filter(|(_, s)| !**s).map(|(c, _)| c.head).collect();
    if !hidden.is_empty() {
        let note = format!(
            "(not shown at width {width}: {}; widen the terminal, set COLUMNS, or use --format json)",
            hidden.join(", ")
        );
        writeln!(out, "  {}", st.dim(&note))?;
    }
    Ok(())
}

fn cut(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        s.to_string()
    } else if w <= 1 {
        s.chars().take(w).collect()
    } else {
        // keep the end of paths and endpoints: it is the distinctive part
        let tail: String = s.chars().rev().take(w - 1).collect::<Vec<_>>().into_iter().rev().collect();
        format!("…{tail}")
    }
}

fn cut_end(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(w.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

fn secs_or_dash(timed: bool, s: f64) -> String {
    if timed {
        fmt_secs(s)
    } else {
        "-".into()
    }
}

pub fn print(r: &Report, out: &mut dyn Write, opt: &TableOptions) -> io::Result<()> {
    // what the traced program or the log chose is printed as data, never as terminal codes
    let r = &super::with_strings(r, &|s| super::inert_text(s).into_owned());
    let st = Style { on: opt.color };
    let c = &r.capture;
    let srcs = match c.sources.len() {
        0 => "no input".to_string(),
        1 => c.sources[0].clone(),
        n => format!("{} (+{} files)", c.sources[0], n - 1),
    };
    let span = match &c.window {
        Some(w) => format!(" over {}", fmt_secs(w.duration_s)),
        None => String::new(),
    };
    writeln!(out, "{} {}", st.bold("syslint"), cut(&srcs, opt.width.saturating_sub(9).max(20)))?;
    // what was not seen is not printed as zero (an attach in --summary-only sees no process
    // start or end)
    let from = if c.processes > 0 {
        format!(
            " from {} process{} ({} thread{})",
            c.processes,
            if c.processes == 1 { "" } else { "es" },
            c.threads,
            if c.threads == 1 { "" } else { "s" }
        )
    } else {
        String::new()
    };
    let counted = if c.summary_only { " counted in the kernel" } else { "" };
    if c.syscalls == 0 && !c.summary_only && c.basis.as_ref().is_some_and(|b| b.kind == crate::BasisKind::Counts) {
        writeln!(out, "  a table of counts, no single syscall")?;
    } else {
        writeln!(out, "  {} syscalls{counted}{from}{span}", fmt_count(c.syscalls))?;
    }
    let mut notes = vec![format!("clock: {}", c.clock)];
    notes.push(if c.summary_only {
        "durations: totals only".into()
    } else if c.durations {
        "durations: yes".into()
    } else {
        "durations: no (record with -T)".into()
    });
    if c.resumed_pairs > 0 {
        notes.push(format!("{} unfinished/resumed pairs merged", fmt_count(c.resumed_pairs)));
    }
    if c.lost_events > 0 {
        notes.push(st.paint("1;31", &format!("{} events LOST", fmt_count(c.lost_events))));
    }
    writeln!(out, "  {}", st.dim(&notes.join(", ")))?;
    if c.unparsed_lines > 0 {
        writeln!(
            out,
            "  {} {} of {} lines not understood{}",
            st.paint("33", "note:"),
            fmt_count(c.unparsed_lines),
            fmt_count(c.lines),
            if c.unparsed_samples.is_empty() { "" } else { ", first:" }
        )?;
        for u in c.unparsed_samples.iter().take(3) {
            writeln!(out, "    {}:{}: {}", u.source, u.line, cut(&u.text, opt.width.saturating_sub(12).max(20)))?;
        }
    }
    for w in &c.warnings {
        writeln!(out, "  {} {}", st.paint("33", "warning:"), w)?;
    }
    for n in &c.notes {
        writeln!(out, "  {}", st.dim(&format!("note: {n}")))?;
    }
    if let Some(s) = &c.stacks {
        writeln!(out, "  stacks: {}", s.words())?;
    }
    if let Some(b) = &c.basis {
        writeln!(out, "  evidence: {} ({})", b.kind.as_str(), b.from)?;
        writeln!(out, "  {}", st.dim(&format!("cannot show: {}", b.cannot_show)))?;
        writeln!(out, "  {}", st.dim(&format!("record next: {}", b.record_next)))?;
    }
    writeln!(out)?;

    // findings first: they are why syslint exists
    if r.findings.is_empty() {
        writeln!(out, "{}", st.bold("findings: none"))?;
        if let Some(b) = r.baseline_line() {
            writeln!(out, "{}", st.dim(&b))?;
        }
    } else {
        writeln!(out, "{}", st.bold(&format!("findings: {}", r.findings.len())))?;
        if let Some(b) = r.baseline_line() {
            writeln!(out, "{}", st.dim(&b))?;
        }
        for f in &r.findings {
            let accepted = if f.baselined { " [baselined]" } else { "" };
            writeln!(
                out,
                "{}[{}] {}: {} ({}){accepted}",
                st.sev(f.severity),
                f.code,
                f.detector,
                f.message,
                f.subject
            )?;
            for e in f.evidence.iter().take(6) {
                // evidence keeps its start (pid, time, call): cut the end
                writeln!(out, "    {}", st.dim(&cut_end(e, opt.width.saturating_sub(4).max(20))))?;
            }
            if let Some(cost) = &f.cost {
                writeln!(out, "  cost: {cost}")?;
            }
            match &f.fix_for {
                Some(who) => writeln!(out, "  fix ({who}): {}", f.fix)?,
                None => writeln!(out, "  fix: {}", f.fix)?,
            }
            if let Some(g) = f.fix_elsewhere.as_ref().filter(|_| opt.verbose) {
                writeln!(out, "  elsewhere: {g}")?;
            }
            if let Some(conf) = f.confidence {
                match &f.confidence_reason {
                    Some(why) => writeln!(out, "  confidence: {}: {why}", conf.as_str())?,
                    None => writeln!(out, "  confidence: {}", conf.as_str())?,
                }
            }
            if let Some(c) = &f.confirm {
                writeln!(out, "  confirm: {c}")?;
            }
            call_sites(out, f, opt.verbose)?;
        }
    }
    writeln!(out)?;

    let s = &r.summary;
    if !s.syscalls.is_empty() {
        writeln!(out, "{}", st.bold("syscalls"))?;
        let cols = [
            Col { head: "syscall", right: false, keep: 9 },
            Col { head: "calls", right: true, keep: 9 },
            Col { head: "errors", right: true, keep: 8 },
            Col { head: "top errno", right: false, keep: 2 },
            Col { head: "total", right: true, keep: 7 },
            Col { head: "avg", right: true, keep: 1 },
            Col { head: "p50", right: true, keep: 4 },
            Col { head: "p90", right: true, keep: 0 },
            Col { head: "p99", right: true, keep: 5 },
            Col { head: "max", right: true, keep: 3 },
            Col { head: "thread%", right: true, keep: 6 },
        ];
        let rows: Vec<Vec<String>> = s
            .syscalls
            .iter()
            .take(opt.top)
            .map(|x| {
                let t = x.timed_calls > 0;
                let top = x.errnos.iter().max_by_key(|(_, n)| **n).map(|(e, n)| format!("{e} {}", fmt_count(*n)));
                vec![
                    x.name.clone(),
                    fmt_count(x.calls),
                    if x.errors > 0 { fmt_count(x.errors) } else { String::new() },
                    top.unwrap_or_default(),
                    secs_or_dash(t, x.total_s),
                    secs_or_dash(t, x.avg_s),
                    fmt_opt_secs(x.p50_s),
                    fmt_opt_secs(x.p90_s),
                    fmt_opt_secs(x.p99_s),
                    fmt_opt_secs(x.max_s),
                    x.thread_share.map_or_else(|| "-".into(), |s| format!("{:.1}", s * 100.0)),
                ]
            })
            .collect();
        table(out, &st, opt.width, &cols, &rows)?;
        if s.syscalls.len() > opt.top {
            writeln!(
                out,
                "  {}",
                st.dim(&format!("... {} more syscalls (--format json has all)", s.syscalls.len() - opt.top))
            )?;
        }
        let splits: Vec<String> = s
            .syscalls
            .iter()
            .filter(|x| !x.returns.is_empty())
            .take(6)
            .map(|x| {
                let parts: Vec<String> = x.returns.iter().map(|(k, v)| format!("{k} {}", fmt_count(*v))).collect();
                format!("{}: {}", x.name, parts.join(", "))
            })
            .collect();
        if !splits.is_empty() {
            writeln!(out, "  {}", st.dim("returns:"))?;
            for l in splits {
                writeln!(out, "    {l}")?;
            }
        }
        writeln!(out)?;
    } else if let Some(counts) = s.counts.as_ref().filter(|c| !c.rows.is_empty()) {
        writeln!(out, "{}", st.bold(&format!("syscalls (from the {} table in the input)", counts.tool)))?;
        let cols = [
            Col { head: "syscall", right: false, keep: 9 },
            Col { head: "calls", right: true, keep: 9 },
            Col { head: "errors", right: true, keep: 8 },
            Col { head: "seconds", right: true, keep: 7 },
        ];
        let rows: Vec<Vec<String>> = counts
            .rows
            .iter()
            .take(opt.top)
            .map(|x| {
                vec![
                    x.name.clone(),
                    fmt_count(x.calls),
                    if counts.errors_known { fmt_count(x.errors) } else { "-".into() },
                    x.seconds.map_or_else(|| "-".into(), fmt_secs),
                ]
            })
            .collect();
        table(out, &st, opt.width, &cols, &rows)?;
        if counts.rows.len() > opt.top {
            writeln!(
                out,
                "  {}",
                st.dim(&format!("... {} more syscalls (--format json has all)", counts.rows.len() - opt.top))
            )?;
        }
        writeln!(out)?;
    } else if !s.strace_c_table.is_empty() {
        writeln!(out, "{}", st.bold("syscalls (from the strace -c table in the input)"))?;
        let cols = [
            Col { head: "syscall", right: false, keep: 9 },
            Col { head: "calls", right: true, keep: 9 },
            Col { head: "errors", right: true, keep: 8 },
            Col { head: "seconds", right: true, keep: 7 },
        ];
        let rows: Vec<Vec<String>> = s
            .strace_c_table
            .iter()
            .take(opt.top)
            .map(|x| vec![x.name.clone(), fmt_count(x.calls), fmt_count(x.errors), fmt_secs(x.seconds)])
            .collect();
        table(out, &st, opt.width, &cols, &rows)?;
        writeln!(out)?;
    }

    if !s.processes.is_empty() {
        writeln!(out, "{}", st.bold("processes"))?;
        let cols = [
            Col { head: "pid", right: true, keep: 9 },
            Col { head: "program", right: false, keep: 8 },
            Col { head: "parent", right: true, keep: 2 },
            Col { head: "threads", right: true, keep: 3 },
            Col { head: "calls", right: true, keep: 7 },
            Col { head: "errors", right: true, keep: 5 },
            Col { head: "time", right: true, keep: 6 },
            Col { head: "end", right: false, keep: 4 },
        ];
        let rows: Vec<Vec<String>> = s
            .processes
            .iter()
            .take(opt.top)
            .map(|p| {
                vec![
                    p.pid.to_string(),
                    p.comm.clone().unwrap_or_else(|| "?".into()),
                    p.parent.map(|x| x.to_string()).unwrap_or_default(),
                    p.threads.to_string(),
                    // --summary-only counts per syscall, not per process: not zeros, unknown
                    if c.summary_only { "-".into() } else { fmt_count(p.calls) },
                    if c.summary_only { "-".into() } else { fmt_count(p.errors) },
                    secs_or_dash(c.durations && !c.summary_only, p.total_s),
                    p.end.clone().unwrap_or_else(|| "running".into()),
                ]
            })
            .collect();
        table(out, &st, opt.width, &cols, &rows)?;
        let more =
            s.processes.len().saturating_sub(opt.top) as u64 + s.other_processes.as_ref().map_or(0, |o| o.processes);
        if more > 0 {
            writeln!(out, "  {}", st.dim(&format!("... {} more processes", fmt_count(more))))?;
        }
        writeln!(out)?;
    }

    if !s.fd_targets.is_empty() {
        writeln!(out, "{}", st.bold("busiest fd targets"))?;
        let cols = [
            Col { head: "target", right: false, keep: 9 },
            Col { head: "kind", right: false, keep: 3 },
            Col { head: "calls", right: true, keep: 8 },
            Col { head: "errors", right: true, keep: 2 },
            Col { head: "time", right: true, keep: 7 },
            Col { head: "read", right: true, keep: 5 },
            Col { head: "written", right: true, keep: 5 },
        ];
        let rows: Vec<Vec<String>> = s
            .fd_targets
            .iter()
            .take(opt.top)
            .map(|t| {
                vec![
                    t.target.clone(),
                    t.kind.clone(),
                    fmt_count(t.calls),
                    if t.errors > 0 { fmt_count(t.errors) } else { String::new() },
                    secs_or_dash(c.durations, t.total_s),
                    if t.bytes_read > 0 { fmt_bytes(t.bytes_read) } else { String::new() },
                    if t.bytes_written > 0 { fmt_bytes(t.bytes_written) } else { String::new() },
                ]
            })
            .collect();
        table(out, &st, opt.width, &cols, &rows)?;
        writeln!(out)?;
    }

    if !s.endpoints.is_empty() {
        writeln!(out, "{}", st.bold("endpoints"))?;
        let cols = [
            Col { head: "endpoint", right: false, keep: 9 },
            Col { head: "proto", right: false, keep: 3 },
            Col { head: "dir", right: false, keep: 7 },
            Col { head: "conns", right: true, keep: 8 },
            Col { head: "avg life", right: true, keep: 5 },
            Col { head: "open", right: true, keep: 2 },
            Col { head: "connect", right: true, keep: 4 },
            Col { head: "sent", right: true, keep: 6 },
            Col { head: "received", right: true, keep: 6 },
        ];
        let rows: Vec<Vec<String>> = s
            .endpoints
            .iter()
            .take(opt.top)
            .map(|e| {
                vec![
                    e.endpoint.clone(),
                    e.proto.clone(),
                    e.direction.clone(),
                    fmt_count(e.connections),
                    if e.closed + e.open_at_end > 0 && c.clock != "none" {
                        fmt_secs(e.avg_lifetime_s)
                    } else {
                        "-".into()
                    },
                    // still open at the end: their life counts up to the end of the trace
                    if e.open_at_end > 0 { fmt_count(e.open_at_end) } else { String::new() },
                    secs_or_dash(c.durations, e.connect_s),
                    fmt_bytes(e.bytes_sent),
                    fmt_bytes(e.bytes_received),
                ]
            })
            .collect();
        table(out, &st, opt.width, &cols, &rows)?;
        writeln!(out)?;
    }
    Ok(())
}

/// A finding's call sites: the top one (all of them, with their whole stacks, `verbose`), or
/// the command that would record them.
fn call_sites(out: &mut dyn Write, f: &Finding, verbose: bool) -> io::Result<()> {
    if let Some(c) = f.stacks_command.as_ref().filter(|_| f.call_sites.is_empty()) {
        return writeln!(out, "  call sites: not in this trace; record them: {c}");
    }
    let shown = if verbose { f.call_sites.len() } else { 1 };
    for (i, site) in f.call_sites.iter().take(shown).enumerate() {
        let head = if i == 0 { "called from" } else { "     and from" };
        writeln!(out, "  {head}: {} ({})", site.summary(if verbose { 8 } else { 2 }), site.share_words())?;
        let below = site.below();
        if verbose && !below.is_empty() {
            writeln!(out, "      via {below}")?;
        }
    }
    if !verbose && f.call_sites.len() > 1 {
        writeln!(out, "  ({} more call sites: --verbose)", f.call_sites.len() - 1)?;
    }
    Ok(())
}
