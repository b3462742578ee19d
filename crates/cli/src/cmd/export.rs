//! `syslint export`: an eBPF recording (.slr) as strace text, for people and other tools; or
//! any timed trace as a Perfetto (Chrome trace JSON) timeline with the findings on it.

use crate::cli::{ExportArgs, ExportFormat};
use anyhow::{bail, Context, Result};
use std::io::Write;
use syslint_capture::ebpf::slr;
use syslint_capture::input;
use syslint_pipeline::{open_stream, RecordingSource, StraceText, Stream};

pub fn run(a: ExportArgs) -> Result<u8> {
    if a.format == ExportFormat::Perfetto {
        return perfetto(&a);
    }
    let [input] = &a.inputs[..] else {
        bail!("--format strace exports one recording ({} inputs given)", a.inputs.len());
    };
    let not_one =
        || format!("{}: not a syslint recording (.slr files come from syslint trace -o FILE.slr)", input.display());
    // stdin or a FIFO is opened once, and looked into then
    let src = input::Source { path: input.clone(), pid: None };
    let mut rec = if input::is_stream(&src) {
        match open_stream(&src)? {
            Stream::Recording(rec) => *rec,
            Stream::Text(..) => bail!(not_one()),
        }
    } else if slr::is_slr(input) {
        RecordingSource::open(input)?
    } else {
        bail!(not_one());
    };
    let out = output(&a)?;
    let mut text = StraceText::new(out, rec.realtime_offset_ns());
    text.payloads = a.payloads;
    // fds from before an attach keep their -yy decoration in the text
    let info = rec.replay(&mut text, None);
    text.finish()?;
    if let Some(p) = info.problem {
        eprintln!("syslint: warning: {}: {p}", input.display());
    }
    if info.lost.records > 0 {
        eprintln!(
            "syslint: warning: {} records ({} syscalls) were lost during the capture",
            info.lost.records, info.lost.syscalls
        );
    }
    Ok(0)
}

/// Where the export goes: `-o FILE` (`.gz`, `.zst` compress), else stdout (`-o -` too).
fn output(a: &ExportArgs) -> Result<Box<dyn Write + Send>> {
    Ok(match &a.output_file {
        Some(p) if p.as_os_str() != "-" => {
            syslint_capture::live::text_writer(p).with_context(|| format!("cannot write {}", p.display()))?
        }
        _ => Box::new(std::io::BufWriter::new(std::io::stdout())),
    })
}

/// `--format perfetto`: the trace and the analysis in one read, the findings at the end.
fn perfetto(a: &ExportArgs) -> Result<u8> {
    if a.payloads {
        bail!(
            "--payloads is for --format strace: a Perfetto trace shows payloads as report evidence does (their length)"
        );
    }
    let names = a.inputs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
    let config = syslint_pipeline::Config::load(&syslint_pipeline::Discovery::for_inputs(None, false, &a.inputs))?;
    let detectors = config.detectors(&[], &[])?;
    let out = output(a)?;
    let (done, not_strace) = syslint_pipeline::perfetto::export(&a.inputs, true, detectors, out)?;
    let file = a.output_file.as_ref().filter(|p| p.as_os_str() != "-");
    let done = match done {
        Ok(d) => d,
        Err(e) => {
            // no half-written or empty trace is left behind
            if let Some(p) = file {
                let _ = std::fs::remove_file(p);
            }
            if !not_strace.is_empty() && not_strace.len() >= a.inputs.len() {
                bail!("{} (is it a strace log?)", not_strace.join("; "));
            }
            return Err(anyhow::Error::new(e).context(names));
        }
    };
    for e in &not_strace {
        eprintln!("syslint: error: {e} (is it a strace log?)");
    }
    if done.untimed > 0 {
        eprintln!("syslint: warning: {names}: {} calls without a timestamp were left out of the trace", done.untimed);
    }
    if done.whole_seconds {
        eprintln!(
            "syslint: warning: {names}: the timestamps are whole seconds (strace -t): record with -tt or -ttt for a timeline"
        );
    }
    for w in &done.report.capture.warnings {
        eprintln!("syslint: warning: {w}");
    }
    if let Some(p) = file {
        eprintln!(
            "syslint: wrote {} ({} syscalls, {} finding{}): open it in ui.perfetto.dev",
            p.display(),
            done.slices,
            done.report.findings.len(),
            if done.report.findings.len() == 1 { "" } else { "s" }
        );
    }
    Ok(if not_strace.is_empty() { super::EXIT_CLEAN } else { super::EXIT_ERROR })
}
