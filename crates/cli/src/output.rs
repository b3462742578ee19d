//! Where reports go and how they look: colour and width decisions, broken pipes, and the exit
//! code a report means.

use crate::cli::{ColorChoice, Format, Level, ReportArgs};
use crate::cmd::{EXIT_CLEAN, EXIT_FINDINGS};
use std::io::{IsTerminal, Write};
use std::path::Path;
use syslint_report::printers::{json, markdown, sarif, table};
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
    let to_file = r.output_file.as_deref().is_some_and(|p| p != Path::new("-"));
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
        Format::Sarif => {
            let root = std::path::absolute(&r.source_root)
                .map_err(|e| anyhow::anyhow!("--source-root {}: {e}", r.source_root.display()))?;
            let root = std::fs::canonicalize(&root).unwrap_or(root);
            let left = sarif::print(report, &root, &mut out)?;
            if left > 0 {
                eprintln!(
                    "syslint: {left} of {} findings have no call site in a file under {}: left out of the SARIF log{}",
                    report.findings.len(),
                    root.display(),
                    if report.capture.stacks.is_none() {
                        " (the input has no stacks: trace --stacks sampled, or strace -kk)"
                    } else {
                        ""
                    }
                );
            }
        }
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
    out.finish()
}

/// `--fail-on`, else the config file's `fail-on`, else `warning`.
pub fn fail_level(r: &ReportArgs, config: &syslint_pipeline::Config) -> Level {
    let from_file = config.fail_on.map(|s| match s {
        Severity::Info => Level::Info,
        Severity::Warning => Level::Warning,
        Severity::Error => Level::Error,
    });
    r.fail_on.or(from_file).unwrap_or(Level::Warning)
}

pub fn exit_code(r: &Report, fail_on: Level) -> u8 {
    let level = match fail_on {
        Level::Info => Severity::Info,
        Level::Warning => Severity::Warning,
        Level::Error => Severity::Error,
    };
    // baselined findings are accepted: listed, never failed on
    if r.findings.iter().any(|f| f.severity >= level && !f.baselined) {
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
pub fn open(path: Option<&Path>) -> anyhow::Result<Dest> {
    open_to(path, Stream::Stdout)
}

/// The report's destination: `stream`, stdout for `-`, or a file. A regular file is written
/// beside its name and renamed into place by [`Dest::finish`], so a failed write (a full disk,
/// a file size limit) leaves no cut report behind, nor a 0-byte file; what cannot be renamed
/// into (a device such as /dev/full, a FIFO) is written in place. Write errors name the file.
pub fn open_to(path: Option<&Path>, stream: Stream) -> anyhow::Result<Dest> {
    use anyhow::Context;
    let std_out = || Box::new(std::io::BufWriter::new(std::io::stdout().lock())) as Box<dyn Write>;
    let (w, file) = match (path, stream) {
        (Some(p), _) if p == Path::new("-") => (std_out(), None),
        (Some(p), _) => {
            let special = std::fs::symlink_metadata(p).is_ok_and(|m| !m.is_file());
            let tmp = (!special).then(|| {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                p.with_file_name(format!(".{name}.syslint-{}.tmp", std::process::id()))
            });
            // a file one may write in a directory one may not: written in place
            let (f, tmp) = match tmp.map(|t| (std::fs::File::create(&t), t)) {
                Some((Ok(f), t)) => (f, Some(t)),
                _ => (std::fs::File::create(p).with_context(|| format!("cannot write {}", p.display()))?, None),
            };
            (Box::new(std::io::BufWriter::new(f)) as Box<dyn Write>, Some((p.to_path_buf(), tmp)))
        }
        (None, Stream::Stdout) => (std_out(), None),
        (None, Stream::Stderr) => (Box::new(std::io::BufWriter::new(std::io::stderr().lock())) as Box<dyn Write>, None),
    };
    Ok(Dest { w, file, done: false })
}

/// Where a report is being written: [`open_to`].
pub struct Dest {
    w: Box<dyn Write>,
    /// The file asked for, and the file written until [`Dest::finish`] renames it
    file: Option<(std::path::PathBuf, Option<std::path::PathBuf>)>,
    done: bool,
}

impl Dest {
    /// Flush, and put the file in place.
    pub fn finish(mut self) -> anyhow::Result<()> {
        use anyhow::Context;
        self.flush()?;
        if let Some((p, Some(tmp))) = &self.file {
            std::fs::rename(tmp, p).with_context(|| format!("cannot write {}", p.display()))?;
        }
        self.done = true;
        Ok(())
    }

    fn named(&self, e: std::io::Error) -> std::io::Error {
        match &self.file {
            Some((p, _)) => std::io::Error::new(e.kind(), format!("cannot write {}: {e}", p.display())),
            None => e,
        }
    }
}

impl Write for Dest {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.w.write(buf).map_err(|e| self.named(e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush().map_err(|e| self.named(e))
    }
}

impl Drop for Dest {
    fn drop(&mut self) {
        if let (false, Some((_, Some(tmp)))) = (self.done, &self.file) {
            std::fs::remove_file(tmp).ok();
        }
    }
}

pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}
