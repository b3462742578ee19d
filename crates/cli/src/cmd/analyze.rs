//! `syslint analyze`: read strace logs, analyse, print.

use super::progress::Progress;
use super::{EXIT_CLEAN, EXIT_FINDINGS};
use crate::cli::{AnalyzeArgs, Format, Level, ReportArgs};
use crate::output;
use anyhow::{anyhow, Context, Result};
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use syslint_analyze::registry::{self, Detector};
use syslint_analyze::Analyzer;
use syslint_capture::{input, CaptureInfo};
use syslint_report::printers::{json, markdown, table};
use syslint_report::{CTableRow, Capture, Report, Severity, UnparsedLine};

pub fn run(a: AnalyzeArgs) -> Result<u8> {
    let r = &a.report;
    let detectors = detectors_for(&r.select, &r.ignore, r.config.as_deref())?;
    let report = analyze_inputs(&a.inputs, r.quiet, detectors)?;
    emit(&report, r)?;
    Ok(exit_code(&report, r.fail_on))
}

/// Print warnings to stderr and the report where the options say.
pub fn emit(report: &Report, r: &ReportArgs) -> Result<()> {
    for w in &report.capture.warnings {
        eprintln!("syslint: warning: {w}");
    }
    let mut out = output::open(r.output_file.as_deref())?;
    match r.format {
        Format::Json => json::print(report, &mut out)?,
        Format::Markdown => markdown::print(report, &mut out)?,
        Format::Html => syslint_report::printers::html::print(report, &mut out)?,
        Format::Table => {
            let opt = table::TableOptions {
                color: output::color_enabled(r.color, r.output_file.is_some()),
                width: output::width(),
                top: r.top.max(1),
            };
            table::print(report, &mut out, &opt)?;
        }
    }
    out.flush()?;
    Ok(())
}

pub fn exit_code(r: &Report, fail_on: Level) -> u8 {
    let level = match fail_on {
        Level::Info => Severity::Info,
        Level::Warning => Severity::Warning,
        Level::Error => Severity::Error,
    };
    if r.findings.iter().any(|f| f.severity >= level) {
        EXIT_FINDINGS
    } else {
        EXIT_CLEAN
    }
}

/// The detectors to run: --select/--ignore and the thresholds of --config (or ./syslint.toml).
pub fn detectors_for(select: &[String], ignore: &[String], config: Option<&Path>) -> Result<Vec<Box<dyn Detector>>> {
    let implicit = Path::new("syslint.toml");
    let path = match config {
        Some(p) => Some(p),
        None if implicit.is_file() => Some(implicit),
        None => None,
    };
    let table = match path {
        Some(p) => {
            let text = std::fs::read_to_string(p).with_context(|| format!("cannot read config {}", p.display()))?;
            text.parse::<toml::Table>().map_err(|e| anyhow!("{}: {}", p.display(), e.to_string().trim()))?
        }
        None => toml::Table::new(),
    };
    registry::build(select, ignore, &table).map_err(|e| match path {
        Some(p) if e.in_config() => anyhow!("{}: {e}", p.display()),
        _ => anyhow!(e),
    })
}

/// Read and analyse strace logs into a report.
pub fn analyze_inputs(inputs: &[std::path::PathBuf], quiet: bool, detectors: Vec<Box<dyn Detector>>) -> Result<Report> {
    if let [one] = inputs {
        if syslint_capture::ebpf::slr::is_slr(one) {
            return analyze_recording(one, detectors);
        }
    }
    let sources = input::expand_sources(inputs)?;
    let total: Option<u64> = sources.iter().map(|s| s.len()).sum();
    let done = Arc::new(AtomicU64::new(0));
    let progress = Progress::start(done.clone(), total, quiet);
    let mut analyzer = Analyzer::new(detectors);
    let info = syslint_capture::read_strace(&sources, done, |ev| analyzer.on_event(ev))?;
    drop(progress);
    Ok(finish(analyzer, info, "strace-log"))
}

/// An eBPF recording (.slr): its records through the same formatter as a live capture.
fn analyze_recording(p: &Path, detectors: Vec<Box<dyn Detector>>) -> Result<Report> {
    use syslint_capture::ebpf::{format::Formatter, slr};
    let rec = slr::open(p).with_context(|| format!("cannot read {}", p.display()))?;
    let mut f = Formatter::new(rec.known.clone());
    let mut analyzer = Analyzer::new(detectors);
    let rinfo = rec.replay(&mut |r| f.on_record(&r, &mut |ev| analyzer.on_event(ev)));
    let mut info = CaptureInfo { sources: vec![p.display().to_string()], ..Default::default() };
    info.stats.events = f.events;
    info.stats.syscalls = f.syscalls;
    info.stats.clock = syslint_event::Clock::Monotonic;
    info.stats.with_duration = f.syscalls;
    if let Some(problem) = rinfo.problem {
        info.warnings.push(format!("{}: {problem}", p.display()));
    }
    if rinfo.lost.records > 0 {
        info.warnings.push(format!(
            "the kernel buffer overflowed during the capture: {} records ({} syscalls) lost; counts are lower bounds",
            rinfo.lost.records, rinfo.lost.syscalls
        ));
    }
    let mut report = finish(analyzer, info, "ebpf-recording");
    report.capture.lost_events = rinfo.lost.syscalls;
    Ok(report)
}

/// The report of a finished capture.
pub fn finish(analyzer: Analyzer, info: CaptureInfo, backend: &str) -> Report {
    let table_rows = info.stats.strace_c_table.clone();
    let mut report = analyzer.finish(capture_of(info, backend));
    report.summary.strace_c_table = table_rows
        .into_iter()
        .map(|r| CTableRow { name: r.name, seconds: r.seconds, calls: r.calls, errors: r.errors })
        .collect();
    report
}

/// What the reader knows, in report form.
pub fn capture_of(info: CaptureInfo, backend: &str) -> Capture {
    let s = info.stats;
    let mut warnings = info.warnings;
    if info.cut_lines > 0 {
        warnings.push(format!("{} lines longer than 4 MiB were cut", info.cut_lines));
    }
    Capture {
        backend: backend.into(),
        sources: info.sources,
        lines: s.lines,
        events: s.events,
        syscalls: s.syscalls,
        unparsed_lines: s.unparsed,
        unparsed_samples: s
            .unparsed_samples
            .into_iter()
            .map(|u| UnparsedLine { source: u.source, line: u.line, text: u.text })
            .collect(),
        lost_events: 0,
        clock: s.clock.as_str().into(),
        durations: s.with_duration > 0,
        resumed_pairs: s.resumed_pairs,
        never_resumed: s.never_resumed,
        warnings,
        ..Default::default()
    }
}
