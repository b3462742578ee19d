//! `syslint diff BEFORE AFTER`: compare two runs and state whether a fix worked.

use super::{EXIT_CLEAN, EXIT_FINDINGS};
use crate::cli::{DiffArgs, Format};
use crate::output;
use anyhow::{Context, Result};
use std::path::Path;
use syslint_report::printers::{diff as dp, json};
use syslint_report::Report;

pub fn run(a: DiffArgs) -> Result<u8> {
    if a.format == Format::Sarif {
        anyhow::bail!(
            "`syslint diff` prints table, markdown, json or html, not sarif: for code scanning, \
             `syslint analyze --format sarif` the second run (its findings, on their call sites)"
        );
    }
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
        Format::Sarif => unreachable!("refused above"),
    }
    out.finish()?;
    Ok(if a.fail_on_regression && d.regression { EXIT_FINDINGS } else { EXIT_CLEAN })
}

/// A saved JSON report as it is, anything else (a log, a directory of -ff files) analysed.
fn load(p: &Path, a: &DiffArgs) -> Result<Report> {
    if p.is_file() && starts_with_brace(p)? {
        // a report, read whole: bounded, as a log is not (a log is streamed through the analysis)
        let mut text = Vec::new();
        let f = std::fs::File::open(p).with_context(|| format!("cannot read {}", p.display()))?;
        f.take(MAX_REPORT + 1).read_to_end(&mut text).with_context(|| format!("cannot read {}", p.display()))?;
        if text.len() as u64 > MAX_REPORT {
            anyhow::bail!("{}: larger than {} MiB, too large for a syslint JSON report", p.display(), MAX_REPORT >> 20);
        }
        let text = String::from_utf8_lossy(&text);
        return json::parse(&text).with_context(|| format!("{}: not a syslint JSON report", p.display()));
    }
    // the config above BEFORE (else the working directory's, else the user's), for both sides
    let sides = [a.before.clone(), a.after.clone()];
    let config = syslint_pipeline::Config::load(&syslint_pipeline::Discovery::for_inputs(
        a.config.as_deref(),
        a.isolated,
        &sides,
    ))?;
    let detectors = config.detectors(&a.select, &a.ignore)?;
    let done = syslint_pipeline::analyze_logs(&[p.to_path_buf()], false, detectors)?;
    // comparing with nothing would call anything an improvement
    if !done.not_strace.is_empty() {
        anyhow::bail!("{} (is it a strace log?)", done.not_strace.join("; "));
    }
    Ok(done.report)
}

/// The largest saved JSON report `diff` reads (a report of 50,000 processes is 20 MB).
const MAX_REPORT: u64 = 512 << 20;

/// Whether the file's first non-blank byte is `{` (a saved JSON report), looking at no more
/// than its first 64 KiB: a 2 GB log is not read into memory to find out.
fn starts_with_brace(p: &Path) -> Result<bool> {
    let f = std::fs::File::open(p).with_context(|| format!("cannot read {}", p.display()))?;
    let mut head = Vec::with_capacity(64 << 10);
    f.take(64 << 10).read_to_end(&mut head).with_context(|| format!("cannot read {}", p.display()))?;
    Ok(head.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'{'))
}

use std::io::Read;
