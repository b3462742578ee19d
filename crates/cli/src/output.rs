//! Where reports go and how they look: colour and width decisions, broken pipes, and the exit
//! code a report means.

use crate::cli::{ColorChoice, Format, Level, ReportArgs};
use crate::cmd::{EXIT_CLEAN, EXIT_FINDINGS};
use std::io::{IsTerminal, Write};
use std::path::Path;
use syslint_report::printers::{json, markdown, table};
use syslint_report::{Report, Severity};

/// The stream a report goes to when no `--output-file` is given.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stream {
    /// `analyze`, `diff`, `trace -p`/`--comm`: the report is the output.
    Stdout,
    /// `trace -- CMD`: stdout is the command's, the report goes beside strace's, time's and
    /// perf stat's, on stderr.
    Stderr,
}

impl Stream {
    fn is_terminal(self) -> bool {
        match self {
            Stream::Stdout => std::io::stdout().is_terminal(),
            Stream::Stderr => std::io::stderr().is_terminal(),
        }
    }
}

/// Print the report where the options say (`--output-file`, else `stream`), and its warnings
/// once more on stderr when the report itself is not in front of the user: written to a file
/// or a pipe. A table on the terminal already shows them, and a report on stderr holds them.
pub fn emit(report: &Report, r: &ReportArgs, stream: Stream) -> anyhow::Result<()> {
    emit_except(report, r, stream, &[])
}

/// [`emit`], without repeating on stderr the warnings in `said` (the caller says them as
/// errors).
pub fn emit_except(report: &Report, r: &ReportArgs, stream: Stream, said: &[String]) -> anyhow::Result<()> {
    let to_file = r.output_file.is_some();
    if stream == Stream::Stdout && (to_file || !stream.is_terminal()) {
        for w in report.capture.warnings.iter().filter(|w| !said.contains(w)) {
            eprintln!("syslint: warning: {w}");
        }
    }
    let mut out = open_to(r.output_file.as_deref(), stream)?;
    match r.format {
        Format::Json => json::print(report, &mut out)?,
        Format::Markdown => markdown::print(report, &mut out)?,
        Format::Html => syslint_report::printers::html::print(report, &mut out)?,
        Format::Table => {
            let opt = table::TableOptions {
                color: color_enabled(r.color, to_file, stream),
                width: if to_file { table::UNLIMITED } else { width(stream) },
                top: r.top.max(1),
                verbose: r.verbose,
            };
            table::print(report, &mut out, &opt)?;
        }
    }
    out.flush()?;
    Ok(())
}

/// `--fail-on`, or `warning` when it was not given.
pub fn fail_level(r: &ReportArgs) -> Level {
    r.fail_on.unwrap_or(Level::Warning)
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

pub fn color_enabled(choice: ColorChoice, to_file: bool, stream: Stream) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            !to_file && stream.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// The width tables are fitted to: the terminal's, else `$COLUMNS`, else unlimited (a pipe
/// or a file gets every column: nothing is dropped where nobody chose a width).
pub fn width(stream: Stream) -> usize {
    let size = match stream {
        Stream::Stdout => terminal_size::terminal_size_of(std::io::stdout()),
        Stream::Stderr => terminal_size::terminal_size_of(std::io::stderr()),
    };
    if let Some((terminal_size::Width(w), _)) = size {
        return (w as usize).max(40);
    }
    std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).filter(|&w: &usize| w >= 40).unwrap_or(table::UNLIMITED)
}

/// The report's destination: stdout or a file.
pub fn open(path: Option<&Path>) -> anyhow::Result<Box<dyn Write>> {
    open_to(path, Stream::Stdout)
}

/// The report's destination: `stream` or a file.
pub fn open_to(path: Option<&Path>, stream: Stream) -> anyhow::Result<Box<dyn Write>> {
    use anyhow::Context;
    Ok(match (path, stream) {
        (Some(p), _) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot write {}", p.display()))?,
        )),
        (None, Stream::Stdout) => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
        (None, Stream::Stderr) => Box::new(std::io::BufWriter::new(std::io::stderr().lock())),
    })
}

pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}
