//! `syslint diff BEFORE AFTER`: compare two runs and state whether a fix worked.

use super::{EXIT_CLEAN, EXIT_FINDINGS};
use crate::cli::{DiffArgs, Format};
use crate::output;
use anyhow::{Context, Result};
use std::path::Path;
use syslint_report::printers::{diff as dp, json};
use syslint_report::Report;

pub fn run(a: DiffArgs) -> Result<u8> {
    let before = load(&a.before, &a)?;
    let after = load(&a.after, &a)?;
    let d = syslint_report::diff::diff(&before, &after);
    let mut out = output::open(a.output_file.as_deref())?;
    match a.format {
        Format::Json => {
            json::write_value(&d, &mut out)?;
        }
        Format::Markdown => dp::print_markdown(&d, &mut out)?,
        Format::Html => syslint_report::printers::html::print_diff(&d, &before, &after, &mut out)?,
        Format::Table => dp::print_table(&d, &mut out)?,
    }
    out.flush()?;
    Ok(if a.fail_on_regression && d.regression { EXIT_FINDINGS } else { EXIT_CLEAN })
}

/// A saved JSON report as it is, anything else (a log, a directory of -ff files) analysed.
fn load(p: &Path, a: &DiffArgs) -> Result<Report> {
    if p.is_file() {
        let head = std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?;
        if head.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'{') {
            let text = String::from_utf8_lossy(&head);
            return json::parse(&text).with_context(|| format!("{}: not a syslint JSON report", p.display()));
        }
    }
    let detectors = syslint_pipeline::detectors(&a.select, &a.ignore, a.config.as_deref())?;
    let done = syslint_pipeline::analyze_logs(&[p.to_path_buf()], false, detectors)?;
    // comparing with nothing would call anything an improvement
    if !done.not_strace.is_empty() {
        anyhow::bail!("{} (is it a strace log?)", done.not_strace.join("; "));
    }
    Ok(done.report)
}

use std::io::Write;
