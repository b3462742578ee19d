//! Command-line arguments. Each subcommand's options live in its own struct.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "syslint",
    version = crate::version::text(),
    about = "Find syscall-level waste in Linux programs",
    long_about = "syslint watches how a program talks to the kernel (live with eBPF or strace, or \
                  from the strace logs you already have), names the syscall-level waste in it \
                  (busy polling, accept herds, connection churn, repeated DNS, keep-alive stalls, \
                  small I/O, failed lookup storms, fsync storms, fd close sweeps), says what it costs and \
                  how to fix it, and proves the fix by comparing two runs.",
    after_help = "Examples:\n  \
        syslint trace -- ./app                     # run it, trace it (eBPF, else strace), report\n  \
        syslint trace -p 1234 --for 30s            # attach to a running process for 30 s\n  \
        strace -f -tt -T -yy -o app.strace ./app   # or record (more flags = more detail)\n  \
        syslint analyze app.strace                 # summary and findings\n  \
        syslint analyze --format json app.strace   # machine-readable (docs/json-schema.md)\n  \
        syslint analyze traces/                    # a directory of strace -ff files\n  \
        syslint diff before.strace after.strace    # did the fix work?\n  \
        syslint explain busy-poll                  # what a detector looks for, and the fix\n\n\
        Reports go to stdout, except with `trace -- CMD`: stdout is the command's, the report goes \
        to stderr (or --output-file).\n\n\
        Config: the nearest syslint.toml or .syslint.toml above the input (trace: above the \
        working directory), else above the working directory, else \
        ~/.config/syslint/syslint.toml ($XDG_CONFIG_HOME); --config FILE chooses one, --isolated \
        none. It holds select, ignore, fail-on and per-detector thresholds.\n\n\
        CI with accepted findings: syslint analyze --write-baseline syslint-baseline.toml app.strace \
        once, then syslint analyze --baseline syslint-baseline.toml app.strace fails only on new \
        findings.\n\n\
        Exit codes: 0 no finding at or above --fail-on, 1 findings, 2 error; `trace -- CMD` exits \
        with the command's own status unless --fail-on is given (syslint trace --help)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Analyse strace logs: summary, per-process and per-fd statistics, findings
    Analyze(AnalyzeArgs),
    /// Run a command or attach to processes and analyse them live
    Trace(TraceArgs),
    /// Compare two runs and state whether a fix worked
    Diff(DiffArgs),
    /// Turn an eBPF recording (.slr) into strace text, or a timed trace into a Perfetto trace
    Export(ExportArgs),
    /// Keep diagnosing a host, its containers or chosen processes: short traces every minute,
    /// findings kept across them, served to Prometheus and sent to OpenTelemetry
    Agent(AgentArgs),
    /// Print the documentation of a detector
    Explain(ExplainArgs),
    /// List the detectors
    Detectors(DetectorsArgs),
    /// Print the shell completion script for bash, zsh, fish, elvish or powershell
    Completions(CompletionsArgs),
    /// Print or install the manual pages: syslint(1) and one per command (syslint-analyze(1), ...)
    Man(ManArgs),
    /// Print the JSON Schema of the report or the diff (the files in docs/schema/)
    #[command(hide = true)]
    Schema(SchemaArgs),
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum Format {
    /// Human-readable tables for a terminal
    Table,
    /// The versioned JSON document described in docs/json-schema.md
    Json,
    /// Markdown for a pull-request comment: findings first, summary folded
    Markdown,
    /// One self-contained HTML page (findings, per-thread timeline, latency charts); use
    /// with --output-file
    Html,
    /// SARIF 2.1.0 for code scanning (GitHub, GitLab, IDEs): each finding whose call sites
    /// reach a source file under --source-root, on that file's line; findings without such a
    /// call site are left out (said on stderr). Needs stacks with file:line (trace --stacks
    /// with eBPF on a program with debug info, or strace -kk)
    Sarif,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum ColorChoice {
    /// Colour when the report goes to a terminal (stdout; stderr for `trace -- CMD`) and
    /// NO_COLOR is not set
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

/// How a report is printed and judged (shared by analyze and trace).
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Exit with 1 when a finding at or above this severity exists, baselined ones aside
    /// [default: the config's fail-on, else warning]. With `trace -- CMD`, giving the flag makes
    /// the exit code syslint's (0/1/2) instead of the command's
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub fail_on: Option<Level>,
    /// When to use colours in the table output
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
    /// Rows shown per table (syscalls, processes, fd targets, endpoints). Columns are fitted
    /// to the terminal's width (or $COLUMNS), and a line names any left out; in a pipe or a
    /// file every column is shown
    #[arg(long, default_value_t = 15, value_name = "N")]
    pub top: usize,
    /// Show what the table folds away: beside a fix written for the program at hand (Apache's
    /// `AllowOverride None`, Java's `-Dsun.net.httpserver.nodelay=true`), the general advice for
    /// other programs and runtimes
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Write the report to this file instead of stdout (with `trace -- CMD`: instead of
    /// stderr, stdout being the command's)
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// With --format sarif: the source tree (repository) whose files findings are placed on;
    /// call-site frames in files elsewhere (the C library's sources) are not used
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub source_root: PathBuf,
    /// Run only these detectors (names or codes, comma-separated); preview ones included
    #[arg(long, value_delimiter = ',', value_name = "DETECTORS")]
    pub select: Vec<String>,
    /// Do not run these detectors (names or codes, comma-separated)
    #[arg(long, value_delimiter = ',', value_name = "DETECTORS")]
    pub ignore: Vec<String>,
    /// The config file to use instead of looking for one. Without it syslint uses the nearest
    /// syslint.toml or .syslint.toml in the first input's directory or above it (for trace: the
    /// working directory's), else above the working directory, else the user-level
    /// $XDG_CONFIG_HOME/syslint/syslint.toml (~/.config/syslint/syslint.toml); one file, never
    /// merged. It holds `select`, `ignore` and `fail-on` (as the flags; a flag given replaces
    /// the key) and a [detector-name] table of thresholds each (`syslint explain NAME` lists
    /// them). The report's notes name the file used
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Read no config file: the defaults and the flags only
    #[arg(long, visible_alias = "no-config", conflicts_with = "config")]
    pub isolated: bool,
    /// Findings accepted in this baseline file (written by --write-baseline) are still listed,
    /// marked baselined, but do not count for --fail-on: only new findings (another detector,
    /// or another program, path or endpoint) fail
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write every finding of this run to FILE as accepted (TOML, one [[finding]] per detector
    /// and subject; review it, commit it, pass it to --baseline). They count as baselined in
    /// this run's report and exit code
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// No progress bar or status line
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
#[command(after_help = "Inputs: strace text logs, plain or compressed (gzip, zstd), `-` for \
    stdin, several files or a directory of `strace -ff -o DIR/trace` output (merged by \
    timestamp).\n\n\
    Any strace flags work; these give the most complete picture:\n  \
    strace -f -tt -T -yy -o app.strace ./app\n\
    (-f follow children and threads, -tt timestamps, -T time spent in each call, \
    -yy what every fd is: path or socket endpoints).\n\n\
    Environment: SYSLINT_THREADS=N parses one large input with N threads (default: the cores \
    available; 1 reads it in one thread); SYSLINT_CHUNK=BYTES sets the size of \
    the pieces they read (for tests of piece borders; at least 256). The report is the same \
    whatever they are set to. A merged -ff set keeps at most SYSLINT_MAX_OPEN files open (default: \
    half of `ulimit -n`; others are reopened where they stood) and SYSLINT_DECOMPRESS_MIB of \
    decompressors (default 128; files beyond are decompressed once into a temporary directory).\n\n\
    Exit codes: 0 no finding at or above --fail-on, 1 findings, 2 error.")]
pub struct AnalyzeArgs {
    /// strace log files, directories of -ff files, or - for stdin
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// `syslint agent`: what to watch, how often, where to serve what it found.
#[derive(Args, Debug)]
#[command(after_long_help = "\
Every --every (60s by default) the agent traces what it watches with eBPF for --window (2s by
default, or until the kernel has sent --window-records records, 200000 by default: on a busy
host a window costs what that many calls cost, however busy the host; such a window is judged
at the rate it saw over the whole --window, and the processes that filled it sit out the next
window, so the quiet ones get a whole one), analyses that window with every detector, and
keeps each finding across windows: one
entry per detector, subject (the program and what it is about, not its pids) and cgroup, with
the windows it was seen in, first and last seen, the time its fix would have saved, and the
latest window's evidence. A finding not seen again in a later window of its program is no
longer active. The watched processes are grouped by cgroup: one window traces every cgroup at
once (one attach of the hooks a cycle) and analyses each cgroup's processes apart, so a finding
is about one program in one cgroup; a container's id and a Kubernetes pod's uid are read from
the cgroup's path.

With --metrics-listen ADDR it serves, over plain HTTP on ADDR (port 0 picks a free one, printed
on stderr):
  /metrics   Prometheus text (OpenMetrics): syslint_findings_total and syslint_finding_active
             by detector, severity, program, container, pod and cgroup;
             syslint_finding_saved_seconds_total; the windows, syscalls and lost events
             counted; the agent's own CPU time and where the windows' time went
             (syslint_window_seconds_total by phase)
  /findings  the findings kept, as JSON

What it watches: the processes of -p, the processes named by --comm, or, with neither, every
process of the host (kernel threads and the agent itself left out); --cgroup keeps those in
the cgroups given (a path as /proc/PID/cgroup shows it, and the cgroups below it).

With --otlp-endpoint URL (or $OTEL_EXPORTER_OTLP_ENDPOINT) it sends the findings as OTLP log
records (when one appears, comes back, worsens or goes) and the series as OTLP metrics, over
OTLP/HTTP, to an OpenTelemetry Collector.

`syslint agent status` asks a running agent (its --metrics-listen address) what it watches and
what it found.

Examples:
  syslint agent --metrics-listen 127.0.0.1:9464          # the whole host
  syslint agent --comm php-fpm --comm nginx --metrics-listen 127.0.0.1:9464
  syslint agent --cgroup /system.slice/nginx.service --otlp-endpoint http://127.0.0.1:4318
  syslint agent -p 1234 --window 5s --every 30s --for 1h
  syslint agent status --at 127.0.0.1:9464

Pods: the cgroup path gives a container's id and a pod's uid; the kubelet's pod log directories
(--pod-logs, /var/log/pods/NAMESPACE_NAME_UID) its name and namespace.

--count-between counts the watched processes' syscalls in the kernel between windows, per
cgroup, 2 s of every 10 s (calls and failures, no durations), and gives a cgroup whose counts
show something new a window at once; off by default, since while it counts every syscall on the
host pays for the hook (docs/agent.md). The agent keeps itself within
--cpu-budget (5% of a core) and --memory-budget (256M): beyond them it shortens or skips windows,
or lets the kernel drop a window's records, and says so. An https:// --otlp-endpoint is checked
against the built-in Mozilla roots, or --otlp-ca FILE for a private CA. With --config FILE, the
file's [agent] table holds these options (the flags win). Deployment: deploy/ (a systemd unit, a
Kubernetes DaemonSet and a Helm chart of it, a Grafana dashboard).")]
#[command(args_conflicts_with_subcommands = true)]
pub struct AgentArgs {
    #[command(subcommand)]
    pub action: Option<AgentAction>,
    /// Watch the processes in this cgroup and those below it, e.g.
    /// /system.slice/nginx.service (repeatable)
    #[arg(long, value_name = "PATH")]
    pub cgroup: Vec<String>,
    /// Watch these processes (comma-separated pids) and their new children
    #[arg(short = 'p', long = "pid", value_delimiter = ',', value_name = "PID")]
    pub pids: Vec<u32>,
    /// Watch every process with this name, looked up again at each window (repeatable)
    #[arg(long, value_name = "NAME")]
    pub comm: Vec<String>,
    /// How long each full-detail trace lasts [default: 2s]; a socket read or poll begun in it
    /// may end up to as long again after it (nothing new is recorded then)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub window: Option<std::time::Duration>,
    /// A window ends early, as at --window's end, once the kernel has sent this many records
    /// (a record is one call, or a run of identical calls): on a busy host a window then
    /// costs the traced programs and the agent's analysis what this many calls cost, not what
    /// --window of them does; 0 for no bound [default: 200000]
    #[arg(long, value_name = "N")]
    pub window_records: Option<u64>,
    /// How often a window starts (at least --window) [default: 60s]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub every: Option<std::time::Duration>,
    /// Serve /metrics (Prometheus) and /findings (JSON) on this address, e.g. 127.0.0.1:9464
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Export findings (as log records, when they appear, worsen or go) and the series of
    /// /metrics (as OTLP metrics, after each window) to an OpenTelemetry Collector's OTLP/HTTP
    /// receiver at this base URL, e.g. http://127.0.0.1:4318 (default:
    /// $OTEL_EXPORTER_OTLP_ENDPOINT when set)
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
    /// A header sent with every OTLP request, KEY=VALUE (repeat it for more): the API key or
    /// token a collector or vendor asks for. Also $OTEL_EXPORTER_OTLP_HEADERS
    /// (key1=value1,key2=value2, values percent-encoded); a flag wins over the variable for the
    /// same key. Values are never printed
    #[arg(long, value_name = "KEY=VALUE")]
    pub otlp_header: Vec<String>,
    /// For an https:// endpoint with a private or self-signed certificate: the CA
    /// certificate(s) to trust (PEM) instead of the built-in Mozilla roots (default:
    /// $OTEL_EXPORTER_OTLP_CERTIFICATE; the host's store is /etc/ssl/certs/ca-certificates.crt
    /// on Debian)
    #[arg(long, value_name = "FILE")]
    pub otlp_ca: Option<std::path::PathBuf>,
    /// For a collector that asks for a client certificate (mutual TLS): the agent's
    /// certificate chain, PEM (default: $OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE); needs
    /// --otlp-client-key
    #[arg(long, value_name = "FILE")]
    pub otlp_client_cert: Option<std::path::PathBuf>,
    /// The private key of --otlp-client-cert, PEM (default: $OTEL_EXPORTER_OTLP_CLIENT_KEY)
    #[arg(long, value_name = "FILE")]
    pub otlp_client_key: Option<std::path::PathBuf>,
    /// Stop after this long (default: until Ctrl-C or SIGTERM), and print the findings kept
    #[arg(long = "for", value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<std::time::Duration>,
    /// Call stacks for the findings: sampled in the kernel (the default) or none
    /// [default: sampled]
    #[arg(long, value_enum, value_name = "WHICH")]
    pub stacks: Option<AgentStacks>,
    /// Between windows, count the watched processes' syscalls in the kernel per cgroup (2 s of
    /// every 10 s) and give a cgroup whose counts show a pathology its latest window did not
    /// find a window at once (every syscall on the host pays while it counts: docs/agent.md)
    #[arg(long)]
    pub count_between: bool,
    /// The agent's own CPU, at most, as a share of one core averaged over a cycle (--every):
    /// when its windows' analysis would use more, it makes them shorter or skips them, and
    /// says so (`syslint_shed_windows_total`) [default: 5%]
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent)]
    pub cpu_budget: Option<f64>,
    /// The agent's own memory, at most, e.g. 256M or 1G: a window's records wait for the
    /// analysis in what this leaves beside what the agent holds; beyond it the kernel drops
    /// them, counted and said [default: 256M]
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory_budget: Option<u64>,
    /// Where the kubelet keeps pods' log directories (NAMESPACE_NAME_UID), read for the pod
    /// names and namespaces of the findings [default: /var/log/pods]
    #[arg(long, value_name = "DIR")]
    pub pod_logs: Option<std::path::PathBuf>,
    /// A configuration file (syslint.toml: thresholds, select, ignore, and an [agent] table of
    /// these options, which the flags override); default: none
    #[arg(long, value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,
}

/// `syslint agent status`.
#[derive(clap::Subcommand, Debug)]
pub enum AgentAction {
    /// Ask a running agent what it watches and what it found
    Status(AgentStatusArgs),
}

#[derive(Args, Debug)]
pub struct AgentStatusArgs {
    /// The agent's --metrics-listen address
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9464")]
    pub at: String,
    /// table (the findings, most costly first) or json (the agent's /findings as it is)
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = StatusFormat::Table)]
    pub format: StatusFormat,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum StatusFormat {
    Table,
    Json,
}

/// `agent --stacks`.
#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum AgentStacks {
    /// the syscalls the detectors watch, sampled in the kernel
    Sampled,
    /// none
    Off,
}

/// `trace --stacks`: which calls' stacks to record.
#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum Stacks {
    /// sampled with eBPF, none with strace (where a stack costs an unwind at every stop and
    /// -e limits what is traced)
    Auto,
    /// none
    Off,
    /// the syscalls the detectors watch, sampled (eBPF) or every call of them (strace: `-k -e
    /// trace=...`, only those traced)
    Sampled,
    /// every call (eBPF: a stack each, costly; strace -k)
    All,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum Backend {
    /// eBPF where permitted, else strace (with one line saying why)
    Auto,
    /// strace as a child process (ptrace: slower, works without BPF permissions)
    Strace,
    /// eBPF: syscalls recorded in the kernel (needs root or CAP_BPF+CAP_PERFMON)
    Ebpf,
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    syslint trace -- php fetch.php                        # run a command, report when it ends\n  \
    syslint trace -p 1234 --for 30s                       # attach to a running process for 30 s\n  \
    syslint trace --comm nginx --for 1m -o ng.strace.gz   # every nginx process; keep the recording\n  \
    syslint analyze ng.strace.gz                          # the same report again, from the recording\n  \
    syslint trace -o run.slr -- ./app                     # compact eBPF recording (analyze reads it)\n  \
    syslint trace --summary-only -- ./app                 # counts only, the cheapest (eBPF)\n\n\
    Backends: eBPF by default where permitted (root, or the binary given CAP_BPF and \
    CAP_PERFMON: sudo setcap cap_bpf,cap_perfmon+ep $(command -v syslint)); it costs the traced \
    program far less than strace and never stops it: when its buffer is full, events are \
    dropped and counted (capture.lost_events). Otherwise strace, with one line saying why.\n\n\
    Ctrl-C: with -p/--comm, syslint detaches and reports; the processes run on. With -- CMD, \
    Ctrl-C goes to the command as usual and syslint reports when it ends; SIGTERM to syslint \
    detaches and reports. If syslint itself is killed, the traced processes are detached and \
    run on.\n\n\
    The strace backend needs strace, and permission to trace: your own child processes always; \
    other processes as root, or with kernel.yama.ptrace_scope=0 for your own user; in a \
    container, CAP_SYS_PTRACE.\n\n\
    Where the report goes: with -- CMD, stdout and stdin stay the command's and the report \
    goes to stderr (as with strace, time and perf stat), or to --output-file; with -p/--comm \
    the report is the output, on stdout or in --output-file.\n\n\
    Exit codes: with -- CMD, the command's own exit status (128+N when signal N killed it, \
    0 when syslint stopped before it ended: --for, SIGTERM), so `syslint trace -- make && ...` \
    behaves like make; give --fail-on LEVEL to get syslint's verdict instead: 0 no finding \
    at or above LEVEL, 1 findings. With -p/--comm: 0, or 1 when a finding at or above \
    --fail-on (default warning) exists. 2 when syslint itself fails.")]
pub struct TraceArgs {
    /// Attach to these processes (comma-separated pids) and their new children. Children
    /// already running are not followed (the report names them): give their pids too, or --comm
    #[arg(short = 'p', long = "pid", value_delimiter = ',', value_name = "PID")]
    pub pids: Vec<u32>,
    /// Attach to every process with this name (like strace -p $(pgrep NAME))
    #[arg(long, value_name = "NAME")]
    pub comm: Option<String>,
    /// Stop after this long and report (e.g. 30s, 5m, 1h, 500ms); processes run on
    #[arg(long = "for", value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<std::time::Duration>,
    /// Keep the recording in this file: .slr is eBPF's compact recording; any other name gets
    /// strace text (.gz or .zst compress it)
    #[arg(short = 'o', long = "record", value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Count syscalls in the kernel and report only the summary: no detectors, the lowest
    /// cost (eBPF only)
    #[arg(long)]
    pub summary_only: bool,
    /// Also print a summary of the last interval every interval, on stderr (`10s`, `1m`, or
    /// plain seconds); with --summary-only, from the kernel's counts
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub interval: Option<std::time::Duration>,
    /// Capture backend
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
    /// Record the call stacks findings name their call sites from. eBPF: the kernel samples
    /// the stacks of the syscalls the detectors watch (sampled, the default: each thread's
    /// first 8 calls of a syscall every second, then one in 1,000, fewer for a thread spinning
    /// at millions a second) or of every call (all: microseconds a call), unwound from
    /// .eh_frame and named (DWARF file:line where the program has debug info) after the
    /// capture. strace: none unless asked; -k on those syscalls (sampled; strace then traces
    /// only those) or on every call (all), an unwind at every stop
    #[arg(long, value_enum, default_value_t = Stacks::Auto)]
    pub stacks: Stacks,
    /// Bytes kept of each buffer read or written (strace -s): the start of requests and
    /// answers, which some detectors decode (a TLS ClientHello, a MySQL greeting, an HTTP
    /// request's `Connection: close`). More shows longer request headers and costs the traced
    /// program more; reports never show the bytes themselves (0-4095)
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u16).range(0..=4095))]
    pub payload_bytes: u16,
    #[command(flatten)]
    pub report: ReportArgs,
    /// The command to run, after --
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<std::ffi::OsString>,
}

/// `30s`, `5m`, `1h`, `500ms`, or plain seconds.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, "s"),
    };
    let v: f64 = num.parse().map_err(|_| format!("{s:?} is not a duration (try 30s, 5m, 1h, 500ms)"))?;
    let secs = match unit {
        "ms" => v / 1000.0,
        "s" | "sec" => v,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        _ => return Err(format!("unknown unit {unit:?} in {s:?} (use ms, s, m or h)")),
    };
    if !(secs > 0.0 && secs.is_finite()) {
        return Err(format!("{s:?} must be longer than zero"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// A share of one core in percent: `5%` or `5`, `0.5%`; more than one core is `150%`.
pub fn parse_percent(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v: f64 =
        t.strip_suffix('%').unwrap_or(t).trim().parse().map_err(|_| format!("{s:?} is not a percentage (try 5%)"))?;
    if !(v > 0.0 && v <= 1000.0) {
        return Err(format!("{s:?}: between 0% and 1000% (ten cores), more than 0"));
    }
    Ok(v)
}

/// A size in bytes: `256M`, `1G`, `512MiB`, `65536` (bytes); K, M and G are powers of 1024.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let i = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let v: f64 = t[..i].parse().map_err(|_| format!("{s:?} is not a size (try 256M or 1G)"))?;
    let unit = t[i..].trim().to_ascii_lowercase();
    let scale: u64 = match unit.trim_end_matches("ib").trim_end_matches('b') {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        _ => return Err(format!("unknown unit {:?} in {s:?} (use K, M or G)", &t[i..])),
    };
    let bytes = v * scale as f64;
    if !(1.0..1e15).contains(&bytes) {
        return Err(format!("{s:?}: more than zero, less than a petabyte"));
    }
    Ok(bytes as u64)
}

#[derive(Args, Debug)]
#[command(after_help = "Each side is a strace log (any form analyze reads) or a saved JSON report \
    (syslint analyze --format json > before.json).\n\n\
    Example:\n  syslint diff before.strace after.strace --format markdown > review.md\n\n\
    Exit codes: 0, or 1 with --fail-on-regression when a finding is new or got worse; 2 error.")]
pub struct DiffArgs {
    /// The run before the change
    pub before: PathBuf,
    /// The run after the change
    pub after: PathBuf,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Exit with 1 when a finding is new or more severe than before
    #[arg(long)]
    pub fail_on_regression: bool,
    /// Write the comparison to this file instead of stdout
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// Detectors to run on logs (names or codes, comma-separated)
    #[arg(long, value_delimiter = ',', value_name = "DETECTORS")]
    pub select: Vec<String>,
    /// Detectors not to run on logs
    #[arg(long, value_delimiter = ',', value_name = "DETECTORS")]
    pub ignore: Vec<String>,
    /// The config file (select, ignore, thresholds) for the logs, as for analyze; without it,
    /// the nearest syslint.toml or .syslint.toml above BEFORE, else above the working
    /// directory, else the user-level file
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Read no config file
    #[arg(long, visible_alias = "no-config", conflicts_with = "config")]
    pub isolated: bool,
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

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum ExportFormat {
    /// strace -f -tt -T style lines (what `syslint analyze` and other tools read)
    Strace,
    /// Chrome trace JSON for ui.perfetto.dev: syscalls as slices on per-thread tracks,
    /// findings on a "syslint findings" track; from any input `analyze` reads that has
    /// timestamps (strace -tt or -ttt, .slr recordings)
    Perfetto,
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  syslint trace -o run.slr -- ./app\n  \
    syslint export run.slr | less\n  syslint export run.slr -o run.strace.gz\n  \
    syslint export --format perfetto run.strace > run.json    # open run.json in ui.perfetto.dev\n\n\
    --format perfetto reads what `syslint analyze` reads (logs, -ff directories, .slr, - for \
    stdin) when it has timestamps (strace -tt or -ttt), writes each syscall as a slice of its \
    thread (arguments as in report evidence: payload strings as their length, cut at 200 \
    characters) and ends with the findings of the analysis made in the same pass, each on a \
    track of the \"syslint findings\" process over its window. The config is found as for \
    analyze. Exit codes: 0 written, 2 error (no timestamps, not a trace, cannot write).")]
pub struct ExportArgs {
    /// The recording (.slr, written by syslint trace -o FILE.slr); with --format perfetto, any
    /// input `syslint analyze` reads (several files, a directory of -ff files, - for stdin)
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t = ExportFormat::Strace)]
    pub format: ExportFormat,
    /// Write to this file instead of stdout (.gz or .zst compress it)
    #[arg(short = 'o', long = "output-file", value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// Keep the payload bytes the recording holds (up to 64 per buffer of read, write and
    /// socket calls). Without it their strings show only their length, `"…32 bytes…"`, so
    /// the text can be shared without the tokens or passwords a program sent (--format strace
    /// only)
    #[arg(long)]
    pub payloads: bool,
}

#[derive(Args, Debug)]
#[command(after_help = "Install it where your shell looks for completions, then start a new shell:\n  \
    syslint completions bash > ~/.local/share/bash-completion/completions/syslint\n  \
    syslint completions zsh > ~/.zfunc/_syslint      # ~/.zshrc: fpath+=(~/.zfunc) before compinit\n  \
    syslint completions fish > ~/.config/fish/completions/syslint.fish\n  \
    echo 'eval (syslint completions elvish | slurp)' >> ~/.config/elvish/rc.elv\n  \
    echo 'syslint completions powershell | Out-String | Invoke-Expression' >> $PROFILE\n\n\
    The script completes commands, options and their values (formats, levels, backends, file \
    names); it is made from this binary's own options, so regenerate it after an upgrade.")]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    syslint man | man -l -                             # read syslint(1) now\n  \
    syslint man --dir ~/.local/share/man/man1          # install every page for your user\n  \
    sudo syslint man --dir /usr/local/share/man/man1   # for everyone\n\n\
    man finds a directory ../share/man beside any directory of your PATH: pages written to \
    ~/.local/share/man/man1 or (for `cargo install`) ~/.cargo/share/man/man1 are found by \
    `man syslint` and `man syslint-trace` with no configuration. The pages are made from this \
    binary's own help, so they match its options.")]
pub struct ManArgs {
    /// Write syslint.1 and one page per command (syslint-analyze.1, syslint-trace.1, ...) into
    /// this directory, made if missing, and print their paths; without it, print syslint.1 on
    /// stdout
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct SchemaArgs {
    /// Which document: the report (`analyze`/`trace --format json`) or the diff
    /// (`diff --format json`)
    #[arg(value_enum)]
    pub document: SchemaDocument,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum SchemaDocument {
    Report,
    Diff,
}
