//! HTML: one self-contained page (inline CSS and SVG, no script, no external asset, a
//! Content-Security-Policy that forbids loading anything) that reads on a laptop and prints.
//!
//! The page shows the findings with evidence and fixes, a lane per thread over time (time spent
//! inside syscalls in blue, call rate in orange, failures in red: a spinning loop is a solid
//! orange lane, a stall a long blue one, a herd a column of red ticks across worker lanes),
//! per-syscall latency distributions and the summary tables. Each finding links to its window
//! on the timeline and the timeline zooms, with links and CSS `:target` alone: a zoomed level,
//! or a finding's view of its window, is drawn beforehand and shown when its anchor is the
//! page's fragment (a few times the timeline's bytes; the herd lab's page is 340 kB).
//! Everything comes from the
//! [`Report`], which is bounded whatever the trace size (binned timeline, top-N tables), so a
//! gigabyte log still gives a page of a few hundred kilobytes.

use super::diff::{calls as per_unit_calls, change, num};
use super::{fmt_bytes, fmt_count, fmt_opt_secs, fmt_secs};
use crate::diff::{DiffReport, FindingDelta};
use crate::{Finding, Lane, Report, SyscallStats, Timeline, LATENCY_BOUNDS_S};
use std::fmt::Write as _;
use std::io::{self, Write};

/// Syscalls with a latency chart.
const LATENCY_CHARTS: usize = 12;
/// Rows per summary table.
const ROWS: usize = 25;

/// Text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => o.push('\u{FFFD}'),
            c => o.push(c),
        }
    }
    o
}

const CSS: &str = r#"
:root{--fg:#1d2430;--mute:#5b6575;--line:#d9dee7;--bg:#fff;--card:#f7f9fc;--err:#c62828;--warn:#b26a00;--info:#1565c0;--ok:#2e7d32;--busy:#1e64c8;--calls:#f08c00}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;padding:24px;max-width:1280px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 10px;border-bottom:1px solid var(--line);padding-bottom:4px}h3{font-size:15px;margin:0 0 6px}
.meta{color:var(--mute)}.verdict{font-size:17px;font-weight:600;margin:10px 0}
.card{background:var(--card);border:1px solid var(--line);border-left:5px solid var(--info);border-radius:6px;padding:12px 14px;margin:12px 0;break-inside:avoid}
.card.warning{border-left-color:var(--warn)}.card.error{border-left-color:var(--err)}.card.fixed{border-left-color:var(--ok)}
.sev{display:inline-block;font-size:12px;font-weight:700;text-transform:uppercase;padding:1px 6px;border-radius:4px;color:#fff;background:var(--info);margin-right:6px}
.sev.warning{background:var(--warn)}.sev.error{background:var(--err)}.sev.fixed{background:var(--ok)}.sev.new{background:var(--err)}.sev.persisting{background:var(--warn)}
code,pre{font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:#0f1720;color:#e6edf3;padding:8px 10px;border-radius:4px;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
table{border-collapse:collapse;margin:6px 0;font-size:13px}th,td{padding:3px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.kv td:first-child{color:var(--mute)}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(290px,1fr));gap:10px}
.side{display:grid;grid-template-columns:1fr 1fr;gap:10px 18px}.side h3{margin:0}.side .chart svg{max-height:130px}.side>div{min-width:0}
.chart{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:6px 8px}
svg text{font:11px system-ui,sans-serif;fill:var(--fg)}svg .mute{fill:var(--mute)}
.legend span{display:inline-block;margin-right:14px}.sw{display:inline-block;width:12px;height:12px;vertical-align:-2px;margin-right:4px;border-radius:2px}
.tl .lvl,.tl .win{display:none}.tl .lvl.base,.tl .lvl:target,.tl .win:target{display:block}.tl .lvl:target~.lvl.base{display:none}
.scroll{overflow-x:auto}.zoom a{margin-left:4px}.win{margin-top:10px}.card:target{outline:2px solid var(--info)}
.up{color:var(--err)}.down{color:var(--ok)}
@media print{body{padding:0;max-width:none;font-size:11px}.tl .lvl,.tl .win{display:none}.tl .lvl.base{display:block}.side{grid-template-columns:1fr}pre{background:#fff;color:#000;border:1px solid #999}h2{break-after:avoid}}
"#;

fn page_start(out: &mut dyn Write, title: &str) -> io::Result<()> {
    writeln!(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")?;
    // nothing may be fetched: no scripts, no images, no fonts, no connections
    writeln!(
        out,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
    )?;
    writeln!(out, "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")?;
    writeln!(out, "<title>{}</title>\n<style>{CSS}</style></head><body>", esc(title))
}

fn page_end(out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "<p class=\"meta\">Made by syslint {}. Self-contained: this page loads nothing from anywhere.</p>\n</body></html>",
        env!("CARGO_PKG_VERSION")
    )
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", fmt_count(n), if n == 1 { one } else { many })
}

fn sources(s: &[String]) -> String {
    match s.len() {
        0 => "no input".into(),
        1 => s[0].clone(),
        n => format!("{} and {} more", s[0], n - 1),
    }
}

fn metric_value(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Number(n) => match (n.as_u64(), n.as_f64()) {
            (Some(u), _) => fmt_count(u),
            (None, Some(f)) if f.abs() >= 100.0 => fmt_count(f.round() as u64),
            (None, Some(f)) => format!("{f:.3}").trim_end_matches('0').trim_end_matches('.').to_string(),
            _ => n.to_string(),
        },
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A finding's card; `id` is the anchor its timeline window links back to, and `window` the
/// anchor of its zoomed view on the timeline, when the page draws one.
fn finding_card(o: &mut String, f: &Finding, id: &str, window: Option<&str>) {
    let sev = f.severity.as_str();
    let _ = write!(
        o,
        "<div class=\"card {sev}\" id=\"{id}\" data-finding=\"{}\"{}><h3><span class=\"sev {sev}\">{sev}</span><code>{}</code> {}: {}{}</h3>",
        esc(&f.detector),
        if f.baselined { " data-baselined=\"true\"" } else { "" },
        esc(&f.code),
        esc(&f.detector),
        esc(&f.message),
        if f.baselined { " <span class=\"meta\">(baselined)</span>" } else { "" }
    );
    let _ = write!(o, "<table class=\"kv\"><tr><td>subject</td><td>{}</td></tr>", esc(&f.subject));
    if let Some(w) = f.window {
        let _ = write!(o, "<tr><td>when</td><td>{} long, from {:.3} s", fmt_secs(w.duration_s), w.start_s);
        if let Some(a) = window {
            let _ = write!(o, " · <a href=\"#{a}\">its window on the timeline</a>");
        }
        o.push_str("</td></tr>");
    }
    if let Some(c) = &f.cost {
        let _ = write!(o, "<tr><td>cost</td><td>{}</td></tr>", esc(c));
    }
    match &f.fix_for {
        Some(who) => {
            let _ = write!(o, "<tr><td>fix ({})</td><td>{}</td></tr>", esc(who), esc(&f.fix));
        }
        None => {
            let _ = write!(o, "<tr><td>fix</td><td>{}</td></tr>", esc(&f.fix));
        }
    }
    if let Some(g) = &f.fix_elsewhere {
        let _ = write!(
            o,
            "<tr><td></td><td><details><summary>other programs and runtimes</summary>{}</details></td></tr>",
            esc(g)
        );
    }
    if let Some(conf) = f.confidence {
        let why = f.confidence_reason.as_deref().map(|w| format!(": {w}")).unwrap_or_default();
        let _ = write!(o, "<tr><td>confidence</td><td>{}{}</td></tr>", conf.as_str(), esc(&why));
    }
    if let Some(c) = &f.confirm {
        let _ = write!(o, "<tr><td>confirm</td><td><code>{}</code></td></tr>", esc(c));
    }
    o.push_str("</table>");
    call_sites(o, f);
    if !f.metrics.is_empty() {
        o.push_str("<details><summary>metrics</summary><table class=\"kv\">");
        for (k, v) in &f.metrics {
            let _ = write!(o, "<tr><td>{}</td><td class=\"n\">{}</td></tr>", esc(k), esc(&metric_value(v)));
        }
        o.push_str("</table></details>");
    }
    if !f.evidence.is_empty() {
        o.push_str("<pre>");
        for e in f.evidence.iter().take(8) {
            o.push_str(&esc(e));
            o.push('\n');
        }
        o.push_str("</pre>");
    }
    let _ = write!(o, "<p class=\"meta\">syslint explain {}</p></div>", esc(&f.detector));
}

/// A finding's call sites, collapsed: the top one in the summary, each stack inside, the
/// frame the program owns in bold; or the command that would record them.
fn call_sites(o: &mut String, f: &Finding) {
    if let Some(c) = f.stacks_command.as_ref().filter(|_| f.call_sites.is_empty()) {
        let _ = write!(o, "<p class=\"meta\">call sites: not in this trace; record them: <code>{}</code></p>", esc(c));
        return;
    }
    let Some(top) = f.call_sites.first() else { return };
    let _ = write!(
        o,
        "<details class=\"sites\"><summary>called from {} ({})</summary>",
        esc(&top.summary(2)),
        esc(&top.share_words())
    );
    for site in &f.call_sites {
        let _ = write!(o, "<p class=\"meta\">{}</p><pre>", esc(&site.share_words()));
        for (i, fr) in site.frames.iter().enumerate() {
            if Some(i) == site.owner {
                let _ = writeln!(o, "<b>{}</b>", esc(&fr.describe()));
            } else {
                let _ = writeln!(o, "{}", esc(&fr.describe()));
            }
        }
        o.push_str("</pre>");
    }
    o.push_str("</details>");
}

/// A time axis step that gives 4 to 10 ticks.
fn tick_step(span: f64) -> f64 {
    if span <= 0.0 {
        return 1.0;
    }
    let raw = span / 6.0;
    let p = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if raw <= m * p {
            return m * p;
        }
    }
    10.0 * p
}

/// A finding's window drawn above the lanes of a timeline: its label, start and end in the
/// capture's clock, and where clicking it leads (the finding's own zoomed view).
#[derive(Clone, Debug)]
pub struct Mark {
    pub label: String,
    pub start_s: f64,
    pub end_s: f64,
    pub href: Option<String>,
}

/// What part of a timeline one SVG shows: the time from `from_s` to `to_s` (capture clock)
/// across `plot_w` pixels, the lanes at `lanes` (indexes, in order), and the marks above them.
struct View<'a> {
    from_s: f64,
    to_s: f64,
    plot_w: f64,
    lanes: &'a [usize],
    marks: &'a [Mark],
    /// Width attribute of the SVG: `100%` fits the page, pixels scroll sideways (zoomed).
    fit: bool,
}

/// Marks drawn above a timeline (and findings given a zoomed view of their window).
const MARKS: usize = 8;
/// Lanes in a finding's zoomed view: the busiest in its window.
const WINDOW_LANES: usize = 12;
/// How many times wider than the page the zoomed timelines are drawn.
const ZOOMS: [u32; 2] = [4, 16];
/// The widest a bin may be drawn at a zoom level worth offering (pixels).
const MAX_BIN_PX: f64 = 64.0;
/// The largest page-wide timeline (bytes of SVG) that still gets zoomed levels.
const ZOOM_BUDGET: usize = 256 * 1024;
const LABEL_W: f64 = 230.0;
const PLOT_W: f64 = 900.0;

/// The per-thread timeline as an SVG. `marks` are finding windows drawn above the lanes.
/// `scale_s` is the time the full plot width stands for (the timeline's own span, or the
/// longer of two runs so that both share one scale).
pub fn timeline_svg(t: &Timeline, marks: &[Mark], scale_s: f64) -> String {
    let lanes: Vec<usize> = (0..t.lanes.len()).collect();
    let span = t.bins.max(1) as f64 * t.bin_s;
    let to_s = t.start_s + scale_s.max(span).max(1e-12);
    view_svg(t, &View { from_s: t.start_s, to_s, plot_w: PLOT_W, lanes: &lanes, marks, fit: true })
}

fn view_svg(t: &Timeline, v: &View) -> String {
    const LANE_H: f64 = 18.0;
    const GAP: f64 = 3.0;
    let plot_w = v.plot_w;
    let shown = (v.to_s - v.from_s).max(1e-12);
    // the x of a time, clamped to the plot
    let x_of = |s: f64| LABEL_W + ((s - v.from_s) / shown * plot_w).clamp(0.0, plot_w);
    // the bins that overlap the view (a saved report may claim any number of bins; the
    // lanes' series are what there is)
    let bin_s = if t.bin_s.is_finite() && t.bin_s > 0.0 { t.bin_s } else { shown };
    let first = ((v.from_s - t.start_s) / bin_s).floor().max(0.0);
    let last = ((v.to_s - t.start_s) / bin_s).ceil().max(0.0);
    let (b0, b1) = (first.min(u32::MAX as f64) as usize, last.min(u32::MAX as f64) as usize);
    let bin_x = |b: usize| x_of(t.start_s + b as f64 * bin_s);
    let marks = &v.marks[..v.marks.len().min(MARKS)];
    let mark_h = if marks.is_empty() { 0.0 } else { 14.0 * marks.len() as f64 + 4.0 };
    let top = mark_h + 4.0;
    let h = top + v.lanes.len() as f64 * (LANE_H + GAP) + 24.0;
    let w = LABEL_W + plot_w + 10.0;
    let mut o = String::new();
    let width = if v.fit { "100%".to_string() } else { format!("{w:.0}") };
    let _ = write!(
        o,
        "<svg class=\"timeline\" viewBox=\"0 0 {w} {h}\" width=\"{width}\" role=\"img\" aria-label=\"per-thread timeline\" xmlns=\"http://www.w3.org/2000/svg\">"
    );
    for (i, m) in marks.iter().enumerate() {
        let (x0, x1) = (x_of(m.start_s), x_of(m.end_s));
        let y = 2.0 + i as f64 * 14.0;
        let (open, close) = match &m.href {
            Some(h) => (format!("<a href=\"{}\">", esc(h)), "</a>"),
            None => (String::new(), ""),
        };
        let _ = write!(
            o,
            "<g class=\"mark\">{open}<title>{}</title><rect x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"10\" fill=\"#c62828\" fill-opacity=\"0.25\" stroke=\"#c62828\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>{close}</g>",
            esc(&m.label),
            (x1 - x0).max(2.0),
            LABEL_W - 6.0,
            y + 9.0,
            esc(&m.label)
        );
    }
    let shown_lanes = || v.lanes.iter().filter_map(|&i| t.lanes.get(i));
    let max_calls = shown_lanes()
        .flat_map(|l| l.calls.get(b0.min(l.calls.len())..b1.min(l.calls.len())).unwrap_or(&[]).iter())
        .copied()
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    for (li, lane) in shown_lanes().enumerate() {
        let y = top + li as f64 * (LANE_H + GAP);
        let _ = write!(
            o,
            "<g class=\"lane\" data-tid=\"{}\"><title>{}: {} calls, {} inside syscalls</title><rect x=\"{LABEL_W}\" y=\"{y:.1}\" width=\"{plot_w}\" height=\"{LANE_H}\" fill=\"#eef1f6\"/>",
            lane.tid,
            esc(&lane.label),
            fmt_count(lane.total_calls),
            fmt_secs(lane.total_busy_s)
        );
        let label = if lane.label.chars().count() > 34 {
            format!("{}…", lane.label.chars().take(33).collect::<String>())
        } else {
            lane.label.clone()
        };
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LABEL_W - 6.0,
            y + 13.0,
            esc(&label)
        );
        // each series: runs of bins with one (quantised) value become one rectangle
        let runs = |len: usize, key: &dyn Fn(usize) -> u32, draw: &mut dyn FnMut(usize, usize, u32)| {
            let (mut i, end) = (b0.min(len), b1.min(len));
            while i < end {
                let k = key(i);
                let mut j = i + 1;
                while j < end && key(j) == k {
                    j += 1;
                }
                if k > 0 {
                    draw(i, j, k);
                }
                i = j;
            }
        };
        // time inside syscalls
        runs(lane.busy.len(), &|i| (lane.busy[i].clamp(0.0, 1.0) * 8.0).round() as u32, &mut |i, j, lv| {
            let _ = write!(
                o,
                "<rect class=\"busy\" x=\"{:.2}\" y=\"{y:.1}\" width=\"{:.2}\" height=\"{LANE_H}\" fill=\"#1e64c8\" fill-opacity=\"{:.3}\"/>",
                bin_x(i),
                bin_x(j) - bin_x(i),
                lv as f64 / 8.0 * 0.85
            );
        });
        // call rate: bars from the bottom, log scale
        let height = |c: u32| {
            if c == 0 {
                0
            } else {
                ((1.0 + (c as f64).ln()) / (1.0 + max_calls.ln()) * 10.0).ceil().clamp(1.0, 10.0) as u32
            }
        };
        runs(lane.calls.len(), &|i| height(lane.calls[i]), &mut |i, j, hv| {
            let bh = hv as f64 / 10.0 * (LANE_H - 4.0);
            let _ = write!(
                o,
                "<rect class=\"calls\" x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{bh:.2}\" fill=\"#f08c00\" fill-opacity=\"0.85\"/>",
                bin_x(i),
                y + LANE_H - bh,
                bin_x(j) - bin_x(i)
            );
        });
        // failures: a red tick on top of the lane
        runs(lane.errors.len(), &|i| u32::from(lane.errors[i] > 0), &mut |i, j, _| {
            let _ = write!(
                o,
                "<rect class=\"errors\" x=\"{:.2}\" y=\"{y:.1}\" width=\"{:.2}\" height=\"3\" fill=\"#c62828\"/>",
                bin_x(i),
                (bin_x(j) - bin_x(i)).max(1.0)
            );
        });
        o.push_str("</g>");
    }
    // time axis, in seconds from the timeline's start
    let ay = top + v.lanes.len() as f64 * (LANE_H + GAP) + 2.0;
    let _ = write!(
        o,
        "<line x1=\"{LABEL_W}\" y1=\"{ay:.1}\" x2=\"{:.1}\" y2=\"{ay:.1}\" stroke=\"#98a2b3\"/>",
        LABEL_W + plot_w
    );
    // a tick every 75 pixels or so, a dozen per page width at most whatever the numbers say
    let max_ticks = (12.0 * plot_w / PLOT_W).round().max(12.0) as u32;
    let step = tick_step(shown * PLOT_W / plot_w);
    let rel = v.from_s - t.start_s;
    let mut k = (rel / step).ceil() * step;
    let mut ticks = 0;
    while k <= rel + shown + 1e-12 && step.is_finite() && step > 0.0 && k.is_finite() && ticks < max_ticks {
        ticks += 1;
        let x = x_of(t.start_s + k);
        let _ = write!(
            o,
            "<line x1=\"{x:.1}\" y1=\"{ay:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#98a2b3\"/><text class=\"mute\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            ay + 4.0,
            ay + 16.0,
            if k.abs() < step * 1e-9 { "0".to_string() } else { fmt_secs(k) }
        );
        k += step;
    }
    o.push_str("</svg>");
    o
}

/// The findings of a report with a window, each with the id its zoomed view gets on the page
/// (`prefix` keeps the two runs of a diff apart): the finding's index and its mark.
fn window_marks(findings: &[Finding], prefix: &str) -> Vec<(usize, Mark)> {
    findings
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let w = f.window?;
            (w.start_s.is_finite() && w.end_s.is_finite()).then(|| {
                let label = format!("{} {}", f.code, f.detector);
                (i, Mark { label, start_s: w.start_s, end_s: w.end_s, href: Some(format!("#{prefix}win-{i}")) })
            })
        })
        .take(MARKS)
        .collect()
}

fn timeline_section(o: &mut String, t: Option<&Timeline>, findings: &[Finding], scale_s: f64, prefix: &str) {
    let Some(t) = t else {
        o.push_str("<p class=\"meta\">No timeline: the trace has no timestamps (record with <code>strace -tt</code> or newer).</p>");
        return;
    };
    let windows = window_marks(findings, prefix);
    let marks: Vec<Mark> = windows.iter().map(|(_, m)| m.clone()).collect();
    let span = t.bins.max(1) as f64 * t.bin_s;
    let scale_s = scale_s.max(span).max(1e-12);
    // zoom levels worth offering: while a bin is still narrower than MAX_BIN_PX
    let bins_across = (scale_s / t.bin_s).clamp(1.0, 1e9);
    let lanes: Vec<usize> = (0..t.lanes.len()).collect();
    let view = |plot_w: f64, fit: bool| View {
        from_s: t.start_s,
        to_s: t.start_s + scale_s,
        plot_w,
        lanes: &lanes,
        marks: &marks,
        fit,
    };
    let page_wide = view_svg(t, &view(PLOT_W, true));
    // each zoomed level costs about the page-wide one's bytes again: none for a timeline that
    // is already large (many busy lanes of noisy bins)
    let zooms: Vec<u32> = ZOOMS
        .into_iter()
        .filter(|&z| PLOT_W * z as f64 / bins_across <= MAX_BIN_PX && page_wide.len() <= ZOOM_BUDGET)
        .collect();
    let _ = write!(
        o,
        "<p class=\"legend\"><span><i class=\"sw\" style=\"background:#1e64c8\"></i>inside syscalls (blocked, waiting)</span><span><i class=\"sw\" style=\"background:#f08c00\"></i>calls per bin (log scale)</span><span><i class=\"sw\" style=\"background:#c62828\"></i>failed calls</span><span class=\"meta\">{} bins of {}; {} lanes</span>",
        t.bins,
        fmt_secs(t.bin_s),
        t.lanes.len()
    );
    if !zooms.is_empty() {
        let _ = write!(o, "<span class=\"zoom\">zoom: <a href=\"#{prefix}tl-x1\">1x</a>");
        for z in &zooms {
            let _ = write!(o, " <a href=\"#{prefix}tl-x{z}\">{z}x</a>");
        }
        o.push_str("</span>");
    }
    o.push_str("</p><div class=\"tl\">");
    // the zoomed levels first: a targeted one hides the page-wide one after it (CSS `~`)
    for z in &zooms {
        let _ = write!(
            o,
            "<div class=\"lvl chart\" id=\"{prefix}tl-x{z}\"><div class=\"scroll\">{}</div></div>",
            view_svg(t, &view(PLOT_W * *z as f64, false))
        );
    }
    let _ = write!(o, "<div class=\"lvl base chart\" id=\"{prefix}tl-x1\">{page_wide}</div>");
    // each finding's window, zoomed to it, shown when its link is followed
    for (i, m) in &windows {
        let dur = (m.end_s - m.start_s).max(0.0);
        let pad = (dur * 0.25).max(2.0 * t.bin_s);
        let from_s = (m.start_s - pad).max(t.start_s);
        let to_s = (m.end_s + pad).min(t.start_s + span).max(from_s + t.bin_s);
        let (b0, b1) = (
            ((from_s - t.start_s) / t.bin_s).floor().max(0.0) as usize,
            ((to_s - t.start_s) / t.bin_s).ceil().max(0.0) as usize,
        );
        // the busiest lanes in the window, in their order on the page
        let in_window = |l: &Lane| -> u64 {
            l.calls.get(b0.min(l.calls.len())..b1.min(l.calls.len())).unwrap_or(&[]).iter().map(|&c| c as u64).sum()
        };
        let mut busiest: Vec<(u64, usize)> =
            t.lanes.iter().enumerate().map(|(li, l)| (in_window(l), li)).filter(|(c, _)| *c > 0).collect();
        busiest.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        busiest.truncate(WINDOW_LANES);
        let mut shown: Vec<usize> = busiest.into_iter().map(|(_, li)| li).collect();
        shown.sort_unstable();
        let more = t.lanes.iter().filter(|l| in_window(l) > 0).count().saturating_sub(shown.len());
        let one = [Mark { href: Some(format!("#{prefix}f-{i}")), ..m.clone() }];
        let _ = write!(
            o,
            "<div class=\"win chart\" id=\"{prefix}win-{i}\"><h3>{}: {} from {}{}</h3><p class=\"meta\">{} in bins of {}{}. <a href=\"#{prefix}f-{i}\">the finding</a> · <a href=\"#{prefix}tl-x1\">whole timeline</a></p>{}</div>",
            esc(&m.label),
            fmt_secs(dur),
            fmt_secs(m.start_s - t.start_s),
            if dur > 0.0 { "" } else { " (one instant)" },
            plural(shown.len() as u64, "busiest lane", "busiest lanes"),
            fmt_secs(t.bin_s),
            if more > 0 { format!(" ({} more active)", fmt_count(more as u64)) } else { String::new() },
            view_svg(t, &View { from_s, to_s, plot_w: PLOT_W, lanes: &shown, marks: &one, fit: true })
        );
    }
    o.push_str("</div>");
}

fn bound_label(s: f64) -> String {
    if s >= 1.0 {
        format!("{s}s")
    } else if s >= 1e-3 {
        format!("{}ms", (s * 1e3 * 100.0).round() / 100.0)
    } else {
        format!("{}us", (s * 1e6 * 100.0).round() / 100.0)
    }
}

/// A small bar chart of one syscall's durations over the fixed buckets.
pub fn latency_svg(name: &str, buckets: &[u64], scale_max: u64) -> String {
    const W: f64 = 280.0;
    const H: f64 = 90.0;
    let n = LATENCY_BOUNDS_S.len() + 1;
    let bw = W / n as f64;
    let max = scale_max.max(1) as f64;
    let mut o = String::new();
    let _ = write!(
        o,
        "<svg class=\"latency\" viewBox=\"0 0 {W} {}\" width=\"100%\" role=\"img\" aria-label=\"{} latency\" xmlns=\"http://www.w3.org/2000/svg\">",
        H + 16.0,
        esc(name)
    );
    for (i, &c) in buckets.iter().enumerate().take(n) {
        let lo = if i == 0 { "0".to_string() } else { bound_label(LATENCY_BOUNDS_S[i - 1]) };
        let hi = LATENCY_BOUNDS_S.get(i).map(|&b| bound_label(b)).unwrap_or_else(|| "more".into());
        let bh = if c == 0 { 0.0 } else { ((c as f64).ln_1p() / max.ln_1p() * (H - 4.0)).max(1.5) };
        let _ = write!(
            o,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" fill=\"#1e64c8\"><title>{lo} to {hi}: {} calls</title></rect>",
            i as f64 * bw + 0.5,
            H - bh,
            bw - 1.0,
            fmt_count(c)
        );
    }
    let _ = write!(o, "<line x1=\"0\" y1=\"{H}\" x2=\"{W}\" y2=\"{H}\" stroke=\"#98a2b3\"/>");
    // decade labels under buckets 0 (1us), 2 (10us), ... every other bound
    for (i, b) in LATENCY_BOUNDS_S.iter().enumerate().step_by(4) {
        let x = (i + 1) as f64 * bw;
        let _ = write!(
            o,
            "<text class=\"mute\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            H + 12.0,
            bound_label(*b)
        );
    }
    o.push_str("</svg>");
    o
}

fn latency_card(o: &mut String, s: &SyscallStats, scale_max: u64, note: &str) {
    let _ = write!(
        o,
        "<div class=\"chart\" data-syscall=\"{}\"><h3><code>{}</code>{}</h3><div class=\"meta\">{} timed calls, p50 {}, p99 {}, max {}</div>{}</div>",
        esc(&s.name),
        esc(&s.name),
        note,
        fmt_count(s.timed_calls),
        fmt_opt_secs(s.p50_s),
        fmt_opt_secs(s.p99_s),
        fmt_opt_secs(s.max_s),
        latency_svg(&s.name, &s.latency, scale_max)
    );
}

fn latency_section(o: &mut String, r: &Report) {
    let timed: Vec<&SyscallStats> =
        r.summary.syscalls.iter().filter(|s| !s.latency.is_empty()).take(LATENCY_CHARTS).collect();
    if timed.is_empty() {
        o.push_str(
            "<p class=\"meta\">No durations: record with <code>strace -T</code> to see how long calls take.</p>",
        );
        return;
    }
    o.push_str("<p class=\"meta\">How long calls took, per syscall (busiest by total time first; bar heights on a log scale; hover a bar for its count).</p><div class=\"grid\">");
    for s in timed {
        let max = s.latency.iter().copied().max().unwrap_or(1);
        latency_card(o, s, max, "");
    }
    o.push_str("</div>");
}

fn tables(o: &mut String, r: &Report) {
    let s = &r.summary;
    if !s.syscalls.is_empty() {
        o.push_str("<h2>Syscalls</h2><table><tr><th>syscall</th><th class=\"n\">calls</th><th class=\"n\">errors</th><th>top errno</th><th class=\"n\">total</th><th class=\"n\">p50</th><th class=\"n\">p99</th><th class=\"n\">max</th><th class=\"n\">bytes</th></tr>");
        for x in s.syscalls.iter().take(ROWS) {
            let t = |v: f64| if x.timed_calls > 0 { fmt_secs(v) } else { "-".into() };
            let top = x
                .errnos
                .iter()
                .max_by_key(|(_, n)| **n)
                .map(|(e, n)| format!("{e} ({})", fmt_count(*n)))
                .unwrap_or_default();
            let _ = write!(
                o,
                "<tr><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(&x.name),
                fmt_count(x.calls),
                fmt_count(x.errors),
                esc(&top),
                t(x.total_s),
                fmt_opt_secs(x.p50_s),
                fmt_opt_secs(x.p99_s),
                fmt_opt_secs(x.max_s),
                x.bytes.map(fmt_bytes).unwrap_or_default()
            );
        }
        o.push_str("</table>");
        if s.syscalls.len() > ROWS {
            let _ = write!(o, "<p class=\"meta\">{} more syscalls in the JSON report.</p>", s.syscalls.len() - ROWS);
        }
    }
    if !s.processes.is_empty() {
        o.push_str("<h2>Processes</h2><table><tr><th class=\"n\">pid</th><th>program</th><th class=\"n\">parent</th><th class=\"n\">threads</th><th class=\"n\">calls</th><th class=\"n\">errors</th><th class=\"n\">in syscalls</th><th>end</th></tr>");
        for p in s.processes.iter().take(ROWS) {
            let _ = write!(
                o,
                "<tr><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
                p.pid,
                esc(p.comm.as_deref().unwrap_or("")),
                p.parent.map(|x| x.to_string()).unwrap_or_default(),
                p.threads,
                fmt_count(p.calls),
                fmt_count(p.errors),
                fmt_secs(p.total_s),
                esc(p.end.as_deref().unwrap_or("running"))
            );
        }
        o.push_str("</table>");
        if let Some(x) = &s.other_processes {
            let _ = write!(
                o,
                "<p class=\"meta\">and {} more short processes ({} calls).</p>",
                fmt_count(x.processes),
                fmt_count(x.calls)
            );
        }
    }
    if !s.endpoints.is_empty() {
        o.push_str("<h2>Endpoints</h2><table><tr><th>endpoint</th><th>proto</th><th>dir</th><th class=\"n\">connections</th><th class=\"n\">avg lifetime</th><th class=\"n\">sent</th><th class=\"n\">received</th><th class=\"n\">in connect</th></tr>");
        for e in s.endpoints.iter().take(ROWS) {
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(&e.endpoint),
                esc(&e.proto),
                esc(&e.direction),
                fmt_count(e.connections),
                fmt_secs(e.avg_lifetime_s),
                fmt_bytes(e.bytes_sent),
                fmt_bytes(e.bytes_received),
                fmt_secs(e.connect_s)
            );
        }
        o.push_str("</table>");
    }
    if !s.fd_targets.is_empty() {
        o.push_str("<h2>Files and sockets</h2><table><tr><th>target</th><th>kind</th><th class=\"n\">calls</th><th class=\"n\">errors</th><th class=\"n\">time</th><th class=\"n\">read</th><th class=\"n\">written</th></tr>");
        for t in s.fd_targets.iter().take(ROWS) {
            let _ = write!(
                o,
                "<tr><td><code>{}</code></td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(&t.target),
                esc(&t.kind),
                fmt_count(t.calls),
                fmt_count(t.errors),
                fmt_secs(t.total_s),
                fmt_bytes(t.bytes_read),
                fmt_bytes(t.bytes_written)
            );
        }
        o.push_str("</table>");
    }
}

fn capture_section(o: &mut String, r: &Report) {
    let c = &r.capture;
    o.push_str("<h2>Capture</h2><table class=\"kv\">");
    let mut row = |k: &str, v: String| {
        let _ = write!(o, "<tr><td>{k}</td><td>{}</td></tr>", esc(&v));
    };
    row("backend", c.backend.clone());
    row("sources", c.sources.join(", "));
    row(
        "events",
        format!("{} ({} syscalls) from {} lines", fmt_count(c.events), fmt_count(c.syscalls), fmt_count(c.lines)),
    );
    row("processes", format!("{}, {} threads", fmt_count(c.processes), fmt_count(c.threads)));
    row("clock", format!("{}{}", c.clock, if c.durations { ", call durations known" } else { ", no call durations" }));
    row("not understood", plural(c.unparsed_lines, "line", "lines"));
    row("lost", plural(c.lost_events, "event", "events"));
    o.push_str("</table>");
    if !c.unparsed_samples.is_empty() {
        o.push_str("<details><summary>lines not understood</summary><pre>");
        for u in &c.unparsed_samples {
            let _ = writeln!(o, "{}:{}: {}", esc(&u.source), u.line, esc(&u.text));
        }
        o.push_str("</pre></details>");
    }
}

fn header_line(r: &Report) -> String {
    let c = &r.capture;
    let span = c.window.map(|w| format!(" over {}", fmt_secs(w.duration_s))).unwrap_or_default();
    format!(
        "{}: {} from {}{span}.",
        sources(&c.sources),
        plural(c.syscalls, "syscall", "syscalls"),
        plural(c.processes, "process", "processes")
    )
}

pub fn print(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    let title = format!("syslint: {}", sources(&r.capture.sources));
    page_start(out, &title)?;
    let mut o = String::with_capacity(64 * 1024);
    let n = r.findings.len() as u64;
    let _ = write!(o, "<h1>syslint report</h1><p class=\"meta\">{}</p>", esc(&header_line(r)));
    let _ = write!(
        o,
        "<p class=\"verdict\" id=\"verdict\">{}</p>",
        if n == 0 { "No findings.".to_string() } else { format!("{}.", plural(n, "finding", "findings")) }
    );
    for w in &r.capture.warnings {
        let _ = write!(o, "<p class=\"card warning\">warning: {}</p>", esc(w));
    }
    for n in &r.capture.notes {
        let _ = write!(o, "<p class=\"meta\">note: {}</p>", esc(n));
    }
    if let Some(b) = &r.capture.basis {
        let _ = write!(
            o,
            "<p class=\"meta\" id=\"basis\">evidence: {} ({}); cannot show: {}; record next: <code>{}</code></p>",
            esc(b.kind.as_str()),
            esc(&b.from),
            esc(&b.cannot_show),
            esc(&b.record_next)
        );
    }
    if r.capture.lost_events > 0 {
        let _ = write!(
            o,
            "<p class=\"card error\">{} lost by the capture: counts are lower bounds.</p>",
            plural(r.capture.lost_events, "event was", "events were")
        );
    }
    o.push_str("<h2 id=\"findings\">Findings</h2>");
    if let Some(b) = r.baseline_line() {
        let _ = write!(o, "<p class=\"meta\" id=\"baseline\">{}</p>", esc(&b));
    }
    if r.findings.is_empty() {
        o.push_str("<p>Nothing to fix: no detector fired.</p>");
    }
    let windows: Vec<usize> =
        if r.timeline.is_some() { window_marks(&r.findings, "").into_iter().map(|(i, _)| i).collect() } else { vec![] };
    for (i, f) in r.findings.iter().enumerate() {
        let win = windows.contains(&i).then(|| format!("win-{i}"));
        finding_card(&mut o, f, &format!("f-{i}"), win.as_deref());
    }
    o.push_str("<h2 id=\"timeline\">Timeline</h2>");
    timeline_section(&mut o, r.timeline.as_ref(), &r.findings, 0.0, "");
    o.push_str("<h2 id=\"latency\">Latency</h2>");
    latency_section(&mut o, r);
    tables(&mut o, r);
    capture_section(&mut o, r);
    out.write_all(o.as_bytes())?;
    page_end(out)
}

fn delta_card(o: &mut String, kind: &str, f: &FindingDelta) {
    let msg = |s: &Option<crate::diff::FindingSide>| s.as_ref().map(|x| x.message.clone());
    let _ = write!(
        o,
        "<div class=\"card {kind}\" data-finding=\"{}\" data-status=\"{kind}\"><h3><span class=\"sev {kind}\">{kind}</span><code>{}</code> {} <span class=\"meta\">({})</span></h3>",
        esc(&f.detector),
        esc(&f.code),
        esc(&f.detector),
        esc(&f.subject)
    );
    let _ = write!(
        o,
        "<div class=\"side\"><div><b>before</b>: {}</div><div><b>after</b>: {}</div></div>",
        esc(&msg(&f.before).unwrap_or_else(|| "not found".into())),
        esc(&msg(&f.after).unwrap_or_else(|| "gone".into()))
    );
    let mut keys: Vec<&String> = f.before.iter().chain(f.after.iter()).flat_map(|s| s.metrics.keys()).collect();
    keys.sort();
    keys.dedup();
    if !keys.is_empty() {
        o.push_str("<table><tr><th>metric</th><th class=\"n\">before</th><th class=\"n\">after</th></tr>");
        for k in keys {
            let v = |s: &Option<crate::diff::FindingSide>| {
                s.as_ref().and_then(|x| x.metrics.get(k)).map(metric_value).unwrap_or_else(|| "-".into())
            };
            let _ = write!(
                o,
                "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(k),
                esc(&v(&f.before)),
                esc(&v(&f.after))
            );
        }
        o.push_str("</table>");
    }
    o.push_str("</div>");
}

/// The diff page: verdict, finding changes with metrics before and after, syscall changes,
/// then the two runs side by side (timeline and latency of the syscalls that changed most).
pub fn print_diff(d: &DiffReport, before: &Report, after: &Report, out: &mut dyn Write) -> io::Result<()> {
    page_start(out, &format!("syslint diff: {}", d.verdict))?;
    let mut o = String::with_capacity(64 * 1024);
    let _ = write!(o, "<h1>syslint diff</h1><p class=\"verdict\" id=\"verdict\">{}</p>", esc(&d.verdict));
    let _ =
        write!(o, "<p class=\"meta\">before: {}<br>after: {}</p>", esc(&header_line(before)), esc(&header_line(after)));
    if let Some(u) = &d.unit {
        let _ = write!(
            o,
            "<p>Per unit of work: <b>{}</b> ({} before, {} after); per-unit numbers below divide by it.</p>",
            esc(&u.name),
            num(u.before),
            num(u.after)
        );
    }
    o.push_str("<h2 id=\"findings\">Findings</h2>");
    let f = &d.findings;
    if f.fixed.is_empty() && f.new.is_empty() && f.persisting.is_empty() {
        o.push_str("<p>No findings before or after.</p>");
    }
    for x in &f.fixed {
        delta_card(&mut o, "fixed", x);
    }
    for x in &f.new {
        delta_card(&mut o, "new", x);
    }
    for x in &f.persisting {
        delta_card(&mut o, "persisting", x);
    }
    o.push_str("<h2 id=\"syscalls\">Syscall changes</h2>");
    if d.syscalls.is_empty() {
        o.push_str("<p>No syscall changed beyond noise.</p>");
    } else {
        let unit = d.unit.as_ref().map(|u| format!(" per {}", esc(&u.name))).unwrap_or_default();
        let _ = write!(
            o,
            "<table><tr><th>syscall</th><th class=\"n\">calls{unit} before</th><th class=\"n\">after</th><th class=\"n\">change</th><th class=\"n\">errors before</th><th class=\"n\">after</th><th class=\"n\">time before</th><th class=\"n\">after</th></tr>"
        );
        for s in &d.syscalls {
            let (b, a) = per_unit_calls(s);
            let ch = change(b, a);
            let cls = if a > b { "up" } else { "down" };
            let _ = write!(
                o,
                "<tr><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n {cls}\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(&s.name),
                num(b),
                num(a),
                esc(&ch),
                fmt_count(s.errors_before),
                fmt_count(s.errors_after),
                fmt_secs(s.total_s_before),
                fmt_secs(s.total_s_after)
            );
        }
        o.push_str("</table>");
        if d.folded > 0 {
            let _ = write!(
                o,
                "<p class=\"meta\">{} folded away as noise.</p>",
                plural(d.folded, "small change", "small changes")
            );
        }
    }
    // timelines one above the other on one time scale, so lengths compare at a glance
    o.push_str("<h2 id=\"timelines\">Timelines</h2>");
    let span = |r: &Report| r.timeline.as_ref().map_or(0.0, |t| t.bins as f64 * t.bin_s);
    let scale = span(before).max(span(after));
    if scale > 0.0 {
        let _ = write!(o, "<p class=\"meta\">Both runs on one time scale ({} across).</p>", fmt_secs(scale));
    }
    for (label, r) in [("Before", before), ("After", after)] {
        let _ = write!(o, "<div data-side=\"{}\"><h3>{label}</h3>", label.to_lowercase());
        timeline_section(&mut o, r.timeline.as_ref(), &r.findings, scale, &format!("{}-", label.to_lowercase()));
        o.push_str("</div>");
    }
    // the syscalls that changed most: before and after side by side, on one count scale
    let names: Vec<&str> = d.syscalls.iter().map(|s| s.name.as_str()).take(6).collect();
    if !names.is_empty() {
        o.push_str("<h2 id=\"latency\">Latency of the syscalls that changed most</h2><div class=\"side\"><h3>Before</h3><h3>After</h3>");
        for name in &names {
            let scale = [before, after]
                .iter()
                .flat_map(|x| x.summary.syscalls.iter().filter(|s| s.name == *name))
                .flat_map(|s| s.latency.iter().copied())
                .max()
                .unwrap_or(1);
            for r in [before, after] {
                match r.summary.syscalls.iter().find(|s| s.name == *name && !s.latency.is_empty()) {
                    Some(s) => latency_card(&mut o, s, scale, ""),
                    None => {
                        let _ = write!(o, "<div class=\"chart\" data-syscall=\"{}\"><h3><code>{}</code></h3><p class=\"meta\">no timed calls in this run</p></div>", esc(name), esc(name));
                    }
                }
            }
        }
        o.push_str("</div>");
    }
    out.write_all(o.as_bytes())?;
    page_end(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_everything_that_could_open_markup() {
        assert_eq!(esc("<script>\"a\" & 'b'</script>"), "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;");
        assert_eq!(esc("a\u{1b}[0m"), "a\u{FFFD}[0m");
    }

    #[test]
    fn runs_of_equal_bins_become_one_rect() {
        let lane = Lane {
            tid: 1,
            pid: 1,
            label: "pid 1 (spin)".into(),
            threads: 1,
            calls: vec![500; 200],
            errors: vec![0; 200],
            busy: vec![0.05; 200],
            total_calls: 100_000,
            total_busy_s: 0.01,
        };
        let t = Timeline { start_s: 0.0, bin_s: 0.01, bins: 200, lanes: vec![lane] };
        let svg = timeline_svg(&t, &[], 0.0);
        assert_eq!(svg.matches("class=\"calls\"").count(), 1, "{svg}");
        assert_eq!(svg.matches("class=\"busy\"").count(), 0);
        assert!(svg.contains("pid 1 (spin)"));
    }

    #[test]
    fn an_absurd_timeline_draws_a_dozen_ticks_at_most() {
        // bins of 1e300 s: the tick step is infinite, and the axis loop never ended
        let t = Timeline { start_s: 0.0, bin_s: 1e300, bins: u32::MAX, lanes: vec![] };
        let svg = timeline_svg(&t, &[], 1.0);
        assert!(svg.matches("<text").count() <= 12, "{} bytes", svg.len());
    }

    fn spin_lane(tid: u32, calls: Vec<u32>) -> Lane {
        let n = calls.len();
        Lane {
            tid,
            pid: tid,
            label: format!("pid {tid} (spin)"),
            threads: 1,
            total_calls: calls.iter().map(|&c| c as u64).sum(),
            calls,
            errors: vec![0; n],
            busy: vec![0.0; n],
            total_busy_s: 0.0,
        }
    }

    fn finding_at(start_s: f64, end_s: f64) -> Finding {
        let mut f: Finding = serde_json::from_value(serde_json::json!({
            "detector": "busy-poll", "code": "SL001", "severity": "warning", "message": "m",
            "subject": "s", "window": null, "metrics": {}, "evidence": [], "cost": null, "fix": "f"
        }))
        .expect("finding");
        f.window = Some(crate::Window { start_s, end_s, duration_s: end_s - start_s });
        f
    }

    #[test]
    fn a_findings_window_is_drawn_zoomed_with_the_lanes_active_in_it() {
        // 200 bins of 10 ms; lane 1 spins in bins 100..120 only, lane 2 all along, lane 3 never
        let mut one = vec![0; 200];
        one[100..120].fill(50);
        let t = Timeline {
            start_s: 5.0,
            bin_s: 0.01,
            bins: 200,
            lanes: vec![spin_lane(1, one), spin_lane(2, vec![3; 200]), spin_lane(3, vec![0; 200])],
        };
        let mut o = String::new();
        timeline_section(&mut o, Some(&t), &[finding_at(6.0, 6.2)], 0.0, "");
        let win = &o[o.find("id=\"win-0\"").expect("window view")..];
        assert!(win.contains("SL001 busy-poll: 200.0ms from 1.00s"), "{win}");
        assert!(win.contains("data-tid=\"1\"") && win.contains("data-tid=\"2\""));
        assert!(!win.contains("data-tid=\"3\""), "an idle lane is left out of the window");
        // it shows 0.95 s to 1.25 s of the trace: ticks there, none at the trace's start
        assert!(win.contains(">1.00s<") && win.contains(">1.20s<"), "{win}");
        assert!(!win.contains(">0<"), "{win}");
        // one spinning run across most of the plot: 20 bins of 30 drawn 900 px wide
        let run = win.split("class=\"calls\"").nth(1).expect("a calls run");
        let width: f64 =
            run.split("width=\"").nth(1).and_then(|w| w.split('"').next()).expect("width").parse().expect("f64");
        assert!((width - 600.0).abs() < 1.0, "{width}");
        // the finding's mark links to the view, the view back to the finding
        assert!(o.contains("<a href=\"#win-0\">") && win.contains("href=\"#f-0\""));
    }

    #[test]
    fn zoom_levels_are_offered_while_bins_stay_narrow() {
        let lanes = vec![spin_lane(1, vec![1; 240])];
        let t = Timeline { start_s: 0.0, bin_s: 0.01, bins: 240, lanes };
        let mut o = String::new();
        timeline_section(&mut o, Some(&t), &[], 0.0, "");
        // 240 bins: 4x draws 15 px bins, 16x 60 px: both
        assert!(o.contains("id=\"tl-x4\"") && o.contains("id=\"tl-x16\"") && o.contains("id=\"tl-x1\""));
        assert!(o.contains("width=\"3840\""), "4x is 3600 px of plot, scrolled sideways");
        // a 16x level has ticks 16 times as dense: a tick every 50 ms (2.4 s / 16 / 6 = 25 ms, rounded up to 1, 2 or 5)
        let x16 = &o[o.find("id=\"tl-x16\"").expect("16x")..o.find("id=\"tl-x1\"").expect("1x")];
        assert!(x16.contains(">50.0ms<") && x16.contains(">2.40s<"), "{x16}");
        // 30 bins: zooming would only stretch them
        let t = Timeline { start_s: 0.0, bin_s: 0.01, bins: 30, lanes: vec![spin_lane(1, vec![1; 30])] };
        let mut o = String::new();
        timeline_section(&mut o, Some(&t), &[], 0.0, "");
        assert!(!o.contains("tl-x4") && !o.contains("zoom:"), "{o}");
        // 48 lanes of noisy bins: the page-wide timeline is large already, and is drawn once
        let noisy = |i: u32| Lane {
            busy: (0..240).map(|b| (b % 2) as f32 * 0.5).collect(),
            errors: (0..240).map(|b| b % 2).collect(),
            ..spin_lane(i, (0..240).map(|b| 1 + (b % 2) * 999).collect())
        };
        let t = Timeline { start_s: 0.0, bin_s: 0.01, bins: 240, lanes: (1..=48).map(noisy).collect() };
        let mut o = String::new();
        timeline_section(&mut o, Some(&t), &[], 0.0, "");
        assert!(o.len() > ZOOM_BUDGET && !o.contains("tl-x4"), "{} bytes", o.len());
    }

    #[test]
    fn an_absurd_saved_timeline_stays_small_at_every_zoom() {
        // a saved report may claim anything: bins the lanes do not have, a window outside
        let t = Timeline { start_s: 0.0, bin_s: 1e-9, bins: u32::MAX, lanes: vec![spin_lane(1, vec![7; 10])] };
        let mut o = String::new();
        timeline_section(&mut o, Some(&t), &[finding_at(-1e300, 1e300), finding_at(f64::NAN, 1.0)], 0.0, "");
        assert!(o.len() < 200_000, "{} bytes", o.len());
        assert_eq!(o.matches("class=\"win chart\"").count(), 1, "the NaN window is left out");
    }

    #[test]
    fn tick_steps_are_round() {
        assert_eq!(tick_step(1.0), 0.2);
        assert_eq!(tick_step(0.03), 0.005);
        assert_eq!(tick_step(60.0), 10.0);
    }
}
