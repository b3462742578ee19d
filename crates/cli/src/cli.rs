//! Command-line arguments. Each subcommand's options live in its own struct.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "syslint",
    version,
    about = "Find syscall-level waste in Linux programs",
    long_about = "syslint reads how a program talks to the kernel (strace logs today; live tracing \
                  next), names the syscall-level waste in it (busy polling, accept herds, \
                  connection churn, repeated DNS, keep-alive stalls, small I/O, failed lookup \
                  storms, fsync storms), says what it costs and how to fix it.",
    after_help = "Examples:\n  \
        strace -f -tt -T -yy -o app.strace ./app   # record (more flags = more detail)\n  \
        syslint analyze app.strace                 # summary and findings\n  \
        syslint analyze --format json app.strace   # machine-readable (docs/json-schema.md)\n  \
        syslint analyze traces/                    # a directory of strace -ff files\n\n\
        Exit codes: 0 no finding at or above --fail-on, 1 findings, 2 error."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Analyse strace logs: summary, per-process and per-fd statistics, findings
    Analyze(AnalyzeArgs),
    /// Run a command or attach to processes and analyse them live (not yet available)
    Trace(TraceArgs),
    /// Compare two runs and state whether a fix worked (not yet available)
    Diff(DiffArgs),
    /// Print the documentation of a detector
    Explain(ExplainArgs),
    /// List the detectors
    Detectors(DetectorsArgs),
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum Format {
    /// Human-readable tables for a terminal
    Table,
    /// The versioned JSON document described in docs/json-schema.md
    Json,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal and NO_COLOR is not set
    Auto,
    Always,
    Never,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
    Error,
}

#[derive(Args, Debug)]
#[command(after_help = "Inputs: strace text logs, plain or compressed (gzip, zstd), `-` for \
    stdin, several files or a directory of `strace -ff -o DIR/trace` output (merged by \
    timestamp).\n\n\
    Any strace flags work; these give the most complete picture:\n  \
    strace -f -tt -T -yy -o app.strace ./app\n\
    (-f follow children and threads, -tt timestamps, -T time spent in each call, \
    -yy what every fd is: path or socket endpoints).\n\n\
    Exit codes: 0 no finding at or above --fail-on, 1 findings, 2 error.")]
pub struct AnalyzeArgs {
    /// strace log files, directories of -ff files, or - for stdin
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Exit with 1 when a finding at or above this severity exists
    #[arg(long, value_enum, default_value_t = Level::Warning, value_name = "LEVEL")]
    pub fail_on: Level,
    /// When to use colours in the table output
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
    /// Rows shown per table (syscalls, processes, fd targets, endpoints)
    #[arg(long, default_value_t = 15, value_name = "N")]
    pub top: usize,
    /// Write the report to this file instead of stdout
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// Run only these detectors (names or codes, comma-separated); preview ones included
    #[arg(long, value_delimiter = ',', value_name = "DETECTORS")]
    pub select: Vec<String>,
    /// Do not run these detectors (names or codes, comma-separated)
    #[arg(long, value_delimiter = ',', value_name = "DETECTORS")]
    pub ignore: Vec<String>,
    /// Thresholds per detector: a TOML file with a [detector-name] table each
    /// (`syslint explain NAME` lists the options); default ./syslint.toml if present
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// No progress bar
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct TraceArgs {
    /// Attach to these processes (comma-separated pids)
    #[arg(short = 'p', long = "pid", value_delimiter = ',', value_name = "PID")]
    pub pids: Vec<u32>,
    /// Stop after this long (e.g. 60s)
    #[arg(long = "for", value_name = "DURATION")]
    pub duration: Option<String>,
    /// Keep the recording in this file
    #[arg(short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The command to run, after --
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The run before the change
    pub before: PathBuf,
    /// The run after the change
    pub after: PathBuf,
}

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// Detector name (busy-poll) or code (SL001)
    pub detector: String,
}

#[derive(Args, Debug)]
pub struct DetectorsArgs {
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}
