//! `syslint analyze`: read strace logs, analyse, print.

use crate::cli::AnalyzeArgs;
use crate::output::{emit, exit_code};
use anyhow::Result;

pub fn run(a: AnalyzeArgs) -> Result<u8> {
    let r = &a.report;
    let detectors = syslint_pipeline::detectors(&r.select, &r.ignore, r.config.as_deref())?;
    let report = syslint_pipeline::analyze_inputs(&a.inputs, !r.quiet, detectors)?;
    emit(&report, r)?;
    Ok(exit_code(&report, r.fail_on))
}
