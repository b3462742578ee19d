//! Where reports go and how they look: colour and width decisions, broken pipes, and the exit
//! code a report means.

use crate::cli::{ColorChoice, Format, Level, ReportArgs};
use crate::cmd::{EXIT_CLEAN, EXIT_FINDINGS};
use std::io::{IsTerminal, Write};
use std::path::Path;
use syslint_report::printers::{json, markdown, table};
use syslint_report::{Report, Severity};

/// Print warnings to stderr and the report where the options say.
pub fn emit(report: &Report, r: &ReportArgs) -> anyhow::Result<()> {
    for w in &report.capture.warnings {
        eprintln!("syslint: warning: {w}");
    }
    let mut out = open(r.output_file.as_deref())?;
    match r.format {
        Format::Json => json::print(report, &mut out)?,
        Format::Markdown => markdown::print(report, &mut out)?,
        Format::Html => syslint_report::printers::html::print(report, &mut out)?,
        Format::Table => {
            let opt = table::TableOptions {
                color: color_enabled(r.color, r.output_file.is_some()),
                width: width(),
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

pub fn color_enabled(choice: ColorChoice, to_file: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            !to_file && std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// Terminal width, or $COLUMNS, or 100 when not a terminal.
pub fn width() -> usize {
    if let Some((terminal_size::Width(w), _)) = terminal_size::terminal_size() {
        return (w as usize).max(40);
    }
    std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).filter(|&w: &usize| w >= 40).unwrap_or(100)
}

/// The report's destination: stdout or a file.
pub fn open(path: Option<&Path>) -> anyhow::Result<Box<dyn Write>> {
    use anyhow::Context;
    Ok(match path {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot write {}", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    })
}

pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}
