//! `syslint analyze`: read strace logs, analyse, print.

use super::EXIT_ERROR;
use crate::cli::AnalyzeArgs;
use crate::output::{emit_except, exit_code, fail_level, Stream};
use anyhow::{bail, Result};

pub fn run(a: AnalyzeArgs) -> Result<u8> {
    let r = &a.report;
    let judging =
        super::Judging::load(r, syslint_pipeline::Discovery::for_inputs(r.config.as_deref(), r.isolated, &a.inputs))?;
    let detectors = judging.detectors(r)?;
    let mut done = syslint_pipeline::analyze_logs(&a.inputs, !r.quiet, detectors)?;
    let report = &done.report;
    // an input that is not a strace log is an error; with several inputs, the others are
    // still analysed and reported
    if !done.not_strace.is_empty() && done.not_strace.len() >= report.capture.sources.len() {
        bail!("{} (is it a strace log?)", done.not_strace.join("; "));
    }
    judging.apply(&mut done.report, r)?;
    let report = &done.report;
    emit_except(report, r, Stream::Stdout, &done.not_strace)?;
    for e in &done.not_strace {
        eprintln!("syslint: error: {e} (is it a strace log?)");
    }
    let code = exit_code(report, fail_level(r, &judging.config));
    Ok(if done.not_strace.is_empty() { code } else { EXIT_ERROR })
}
