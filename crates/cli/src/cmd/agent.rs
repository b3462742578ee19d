//! `syslint agent` (issue 32, first step): short full-detail eBPF traces of what it watches,
//! duty-cycled (`--window` every `--every`), each analysed by every detector; the findings kept
//! across windows ([`syslint_pipeline::agent::Store`]) and served to Prometheus (`/metrics`,
//! encoded by the prometheus-client crate) and as JSON (`/findings`) on `--metrics-listen`.
//!
//! The agent never stops what it watches: each window detaches like `trace -p ... --for`, and
//! Ctrl-C or SIGTERM ends the current window the same way before the agent exits.

use super::otlp::{AgentCounts, Otlp, Tls, WINDOW_PHASES};
use super::EXIT_CLEAN;
use crate::cli::{AgentAction, AgentArgs, AgentStacks, AgentStatusArgs, StatusFormat};
use anyhow::{bail, Context, Result};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use syslint_capture::ebpf::count;
use syslint_capture::live::{pids_by_name, Target};
use syslint_pipeline::agent::{self, ByCgroup, Store, Window};
use syslint_pipeline::budget::{self, CpuBudget, Plan};
use syslint_pipeline::{live, Analysis, StopWhen};
use syslint_report::Report;

/// The records a window may take at most (`--window-records`): see docs/agent.md.
const WINDOW_RECORDS: u64 = 200_000;

/// The agent's options: its flags, else the config file's `[agent]` table, else the defaults.
struct Settings {
    pids: Vec<u32>,
    comm: Vec<String>,
    cgroup: Vec<String>,
    window: Duration,
    /// None: no bound.
    window_records: Option<u64>,
    every: Duration,
    metrics_listen: Option<std::net::SocketAddr>,
    otlp_endpoint: Option<String>,
    otlp_headers: Vec<String>,
    otlp_tls: Tls,
    duration: Option<Duration>,
    stacks: AgentStacks,
    count_between: bool,
    pod_logs: std::path::PathBuf,
    /// A share of one core, in percent.
    cpu_budget: f64,
    /// Bytes.
    memory_budget: u64,
    config: Option<std::path::PathBuf>,
}

impl Settings {
    fn of(a: AgentArgs) -> Result<Settings> {
        let file = match &a.config {
            Some(p) => {
                let found = syslint_pipeline::config::ConfigFile {
                    path: p.clone(),
                    found: syslint_pipeline::config::Found::Given,
                };
                syslint_pipeline::config::Config::read(found)?.agent.unwrap_or_default()
            }
            None => Default::default(),
        };
        let path = a.config.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
        let bad = |key: &str, e: String| anyhow::anyhow!("{path}: [agent] {key}: {e}");
        let duration = |key: &str, v: &Option<String>| -> Result<Option<Duration>> {
            v.as_deref().map(|t| crate::cli::parse_duration(t).map_err(|e| bad(key, e))).transpose()
        };
        let or = |flag: Vec<String>, file: Vec<String>| if flag.is_empty() { file } else { flag };
        let stacks = match file.stacks.as_deref() {
            None => None,
            Some("sampled") => Some(AgentStacks::Sampled),
            Some("off") => Some(AgentStacks::Off),
            Some(o) => return Err(bad("stacks", format!("{o:?}: expected \"sampled\" or \"off\""))),
        };
        let cpu = file
            .cpu_budget
            .as_deref()
            .map(|t| crate::cli::parse_percent(t).map_err(|e| bad("cpu-budget", e)))
            .transpose()?;
        let memory = file
            .memory_budget
            .as_deref()
            .map(|t| crate::cli::parse_size(t).map_err(|e| bad("memory-budget", e)))
            .transpose()?;
        let listen = file
            .metrics_listen
            .as_deref()
            .map(|t| t.parse::<std::net::SocketAddr>().map_err(|e| bad("metrics-listen", format!("{t:?}: {e}"))))
            .transpose()?;
        Ok(Settings {
            pids: if a.pids.is_empty() { file.pid } else { a.pids },
            comm: or(a.comm, file.comm),
            cgroup: or(a.cgroup, file.cgroup),
            window: a.window.or(duration("window", &file.window)?).unwrap_or(Duration::from_secs(2)),
            window_records: Some(a.window_records.or(file.window_records).unwrap_or(WINDOW_RECORDS)).filter(|&n| n > 0),
            every: a.every.or(duration("every", &file.every)?).unwrap_or(Duration::from_secs(60)),
            metrics_listen: a.metrics_listen.or(listen),
            otlp_endpoint: a.otlp_endpoint.or(file.otlp_endpoint),
            otlp_headers: or(a.otlp_header, file.otlp_header),
            otlp_tls: Tls {
                ca: a.otlp_ca.or(file.otlp_ca.map(Into::into)),
                client_cert: a.otlp_client_cert.or(file.otlp_client_cert.map(Into::into)),
                client_key: a.otlp_client_key.or(file.otlp_client_key.map(Into::into)),
            },
            duration: a.duration,
            stacks: a.stacks.or(stacks).unwrap_or(AgentStacks::Sampled),
            count_between: a.count_between || file.count_between.unwrap_or(false),
            pod_logs: a.pod_logs.or(file.pod_logs.map(Into::into)).unwrap_or_else(|| "/var/log/pods".into()),
            cpu_budget: a.cpu_budget.or(cpu).unwrap_or(5.0),
            memory_budget: a.memory_budget.or(memory).unwrap_or(256 << 20),
            config: a.config,
        })
    }
}

pub fn run(a: AgentArgs) -> Result<u8> {
    if let Some(AgentAction::Status(s)) = &a.action {
        return status(s);
    }
    let a = Settings::of(a)?;
    if !cfg!(feature = "ebpf") {
        bail!("syslint agent traces with eBPF, and this build has no eBPF backend (built without the `ebpf` feature)");
    }
    if let Some(c) = a.cgroup.iter().find(|c| !c.starts_with('/')) {
        bail!("--cgroup {c:?}: a cgroup path starts with / (as /proc/PID/cgroup shows it, e.g. /system.slice/nginx.service)");
    }
    if a.window.is_zero() {
        bail!("--window must be longer than 0");
    }
    if a.every < a.window {
        bail!("--every ({:?}) must be at least --window ({:?})", a.every, a.window);
    }
    // the configuration is read once: an error in it stops the agent at start, not at a window
    syslint_pipeline::detectors(&[], &[], a.config.as_deref())?;
    let least = budget::least_memory(budget::resident_bytes());
    if a.memory_budget < least {
        bail!(
            "--memory-budget {} MiB is less than the agent needs: {} MiB (its code and tables now, {} MiB for a \
             window's kernel buffers and analysis, {} MiB of records)",
            a.memory_budget >> 20,
            least.div_ceil(1 << 20),
            budget::WINDOW_BYTES >> 20,
            budget::MIN_QUEUE_BYTES >> 20
        );
    }
    let stop = StopWhen::default();
    signal_hook::flag::register(signal_hook::consts::SIGINT, stop.interrupt.clone())?;
    signal_hook::flag::register(signal_hook::consts::SIGTERM, stop.terminate.clone())?;
    let endpoint =
        a.otlp_endpoint.clone().or_else(|| std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").ok().filter(|e| !e.is_empty()));
    let otlp = match endpoint.as_deref() {
        Some(e) => {
            let env = std::env::var("OTEL_EXPORTER_OTLP_HEADERS").unwrap_or_default();
            let headers = crate::cmd::otlp::headers(&a.otlp_headers, &env)?;
            let tls = a.otlp_tls.clone().or_env(|name| std::env::var(name).ok());
            Some(Mutex::new(Otlp::new(e, headers, &tls).context("--otlp-endpoint")?))
        }
        None if !a.otlp_headers.is_empty() => {
            bail!("--otlp-header is for an OTLP export: give --otlp-endpoint (or $OTEL_EXPORTER_OTLP_ENDPOINT) too")
        }
        None => match a.otlp_tls.given() {
            Some(flag) => {
                bail!("{flag} is for an OTLP export: give --otlp-endpoint (or $OTEL_EXPORTER_OTLP_ENDPOINT) too")
            }
            None => None,
        },
    };
    let shared = Arc::new(Shared {
        store: Mutex::default(),
        failed: AtomicU64::default(),
        otlp,
        count_periods: AtomicU64::default(),
        candidates: AtomicU64::default(),
        pods: Mutex::new(agent::Pods::new(&a.pod_logs)),
        watching: Mutex::default(),
        shortened: AtomicU64::default(),
        skipped: AtomicU64::default(),
        unread: AtomicU64::default(),
        phases: Mutex::default(),
        bounded: AtomicU64::default(),
        quiet_turns: AtomicU64::default(),
    });
    if let Some(addr) = a.metrics_listen {
        let server = tiny_http::Server::http(addr).map_err(|e| anyhow::anyhow!("--metrics-listen {addr}: {e}"))?;
        let at = server.server_addr().to_ip().context("--metrics-listen: not an IP address")?;
        eprintln!("syslint agent: serving http://{at}/metrics and http://{at}/findings");
        let s = shared.clone();
        std::thread::Builder::new().name("syslint-http".into()).spawn(move || serve(&server, &s))?;
    }
    if let Some(e) = &endpoint {
        eprintln!("syslint agent: exporting findings and series over OTLP/HTTP to {}", e.trim_end_matches('/'));
    }
    let mut what: Vec<String> = Vec::new();
    if !a.pids.is_empty() {
        what.push(format!("pids {}", a.pids.iter().map(u32::to_string).collect::<Vec<_>>().join(",")));
    }
    if !a.comm.is_empty() {
        what.push(format!("processes named {}", a.comm.join(", ")));
    }
    if what.is_empty() {
        what.push("every process of the host".into());
    }
    if !a.cgroup.is_empty() {
        what.push(format!("in cgroup {}", a.cgroup.join(", ")));
    }
    eprintln!(
        "syslint agent: watching {}: {:?} windows every {:?}, within {}% of a core and {} MiB",
        what.join(" "),
        a.window,
        a.every,
        a.cpu_budget,
        a.memory_budget >> 20
    );
    let bucket = CpuBudget::new(a.cpu_budget / 100.0, a.every, own_cpu_seconds(), Instant::now());
    let mut cpu = Shedding { budget: bucket, said: Plan::Full };
    let began = Instant::now();
    let stopped = || stop.interrupt.load(Ordering::Relaxed) || stop.terminate.load(Ordering::Relaxed);
    let over = |now: Instant| a.duration.is_some_and(|d| now.duration_since(began) >= d);
    // --count-between, until counting fails (no BTF, eBPF refused)
    let mut counting = a.count_between;
    // the processes that filled the last cycle's window, when it ended at its bound of records
    let mut filled: Vec<u32> = Vec::new();
    while !stopped() && !over(Instant::now()) {
        let cycle = Instant::now();
        let groups = targets(&a);
        if let Ok(mut w) = shared.watching.lock() {
            *w =
                groups.iter().map(|(cg, pids)| (cg.clone(), pids.iter().map(|&p| (p, comm_of(p))).collect())).collect();
        }
        if groups.is_empty() {
            if let Ok(mut s) = shared.store.lock() {
                s.idle();
            }
        } else {
            // one window a cycle for every watched cgroup at once, each analysed apart: the
            // hooks are attached once, not once per cgroup
            let left = a.duration.map(|d| d.saturating_sub(began.elapsed()));
            let window = left.map_or(a.window, |l| l.min(a.window));
            if !stopped() && !window.is_zero() {
                if let Some(window) = cpu.window(window, &a, &shared) {
                    // after a window that ended at its bound, the processes that filled it sit
                    // this one out: the others get a whole window (a slow pathology needs more
                    // than the bounded part of one), the busy ones the next
                    let turn = agent::leaving_out(&groups, &filled);
                    let left_out =
                        groups.iter().map(|g| g.1.len()).sum::<usize>() - turn.iter().map(|g| g.1.len()).sum::<usize>();
                    if left_out > 0 {
                        shared.quiet_turns.fetch_add(1, Ordering::Relaxed);
                        let names: std::collections::BTreeSet<String> =
                            filled.iter().map(|&p| comm_of(p)).filter(|c| !c.is_empty()).collect();
                        let who = match left_out {
                            1 => "the process that filled it".to_string(),
                            n => format!("the {n} processes that filled it"),
                        };
                        eprintln!(
                            "syslint agent: the last window ended at its bound of records: {who} ({}) {} this one out",
                            names.into_iter().collect::<Vec<_>>().join(", "),
                            if left_out == 1 { "sits" } else { "sit" }
                        );
                    }
                    filled = one_window(&a, &stop, window, &turn, &shared, &mut cpu.budget);
                } else {
                    filled.clear();
                }
            }
        }
        // until the next cycle (--count-between): every watched process counted in the kernel,
        // per cgroup, for COUNT_FOR every COUNT_EVERY; a cgroup whose counts show something its
        // latest window did not find gets a window at once (one a cycle); else nothing traced
        let mut triggered: Vec<String> = Vec::new();
        while counting && !stopped() && !over(Instant::now()) {
            let round = Instant::now();
            let left = a
                .every
                .saturating_sub(cycle.elapsed())
                .min(a.duration.map_or(Duration::MAX, |d| d.saturating_sub(began.elapsed())));
            if left < Duration::from_millis(500) {
                break;
            }
            let groups = targets(&a);
            let counted = match count::count_groups(&groups, left.min(COUNT_FOR), &stopped) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("syslint agent: not counting between windows from now on: {e}");
                    counting = false;
                    break;
                }
            };
            shared.count_periods.fetch_add(1, Ordering::Relaxed);
            for (cgroup, table) in counted.tables {
                if stopped() || triggered.contains(&cgroup) {
                    continue;
                }
                let detectors = syslint_pipeline::detectors(&[], &[], a.config.as_deref())?;
                let report = Analysis::new(detectors).finish(syslint_analyze::Captured {
                    backend: Some(syslint_report::Backend::Ebpf),
                    counts: Some(table),
                    ..Default::default()
                });
                let mut new: Vec<String> = match shared.store.lock() {
                    Ok(s) => report
                        .findings
                        .iter()
                        .filter(|f| {
                            !s.entries().any(|(k, e)| {
                                e.active && k.detector == f.detector && k.cgroup.as_deref() == Some(cgroup.as_str())
                            })
                        })
                        .map(|f| f.detector.clone())
                        .collect(),
                    Err(_) => Vec::new(),
                };
                new.sort_unstable();
                new.dedup();
                if new.is_empty() {
                    continue;
                }
                let window = a.duration.map_or(a.window, |d| d.saturating_sub(began.elapsed()).min(a.window));
                if window.is_zero() {
                    break;
                }
                let Some(window) = cpu.window(window, &a, &shared) else { continue };
                let Some(group) = groups.iter().find(|g| g.0 == cgroup) else { continue };
                eprintln!(
                    "syslint agent: the counts of cgroup {cgroup} look like {}: a window at once",
                    new.join(", ")
                );
                shared.candidates.fetch_add(1, Ordering::Relaxed);
                triggered.push(cgroup.clone());
                one_window(&a, &stop, window, std::slice::from_ref(group), &shared, &mut cpu.budget);
            }
            // the rest of the round uncounted: counting costs every syscall of the host
            while !stopped() && !over(Instant::now()) && cycle.elapsed() < a.every && round.elapsed() < COUNT_EVERY {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        while !stopped() && !over(Instant::now()) && cycle.elapsed() < a.every {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let store = shared.store.lock().map_err(|_| anyhow::anyhow!("the findings store was poisoned"))?;
    let n = |count: u64, one: &str, many: &str| format!("{count} {}", if count == 1 { one } else { many });
    eprintln!(
        "syslint agent: {} ({} with nothing to watch, {} not traced), {} kept",
        n(store.windows, "window", "windows"),
        store.idle_windows,
        shared.failed.load(Ordering::Relaxed),
        n(store.len() as u64, "finding", "findings")
    );
    let c = shared.counts();
    if store.windows > 0 {
        let each: Vec<String> =
            WINDOW_PHASES.iter().zip(c.window_phases_s).map(|(p, s)| format!("{p} {s:.2} s")).collect();
        eprintln!("  the windows' time: {}", each.join(", "));
        eprintln!(
            "  {} seen, {} lost; {} ended early at --window-records ({}), {} left out the processes that filled the one before",
            n(store.syscalls, "syscall", "syscalls"),
            store.lost_events,
            n(c.bounded_windows, "window", "windows"),
            a.window_records.map_or("none".to_string(), |r| r.to_string()),
            c.rotated_windows
        );
    }
    let (shortened, skipped, unread) = (
        shared.shortened.load(Ordering::Relaxed),
        shared.skipped.load(Ordering::Relaxed),
        shared.unread.load(Ordering::Relaxed),
    );
    if shortened + skipped > 0 {
        eprintln!(
            "  CPU budget ({}% of a core): {} shortened, {} skipped",
            a.cpu_budget,
            n(shortened, "window", "windows"),
            skipped
        );
    }
    if unread > 0 {
        eprintln!(
            "  memory budget ({} MiB): {} left the kernel buffer unread (records lost, counted)",
            a.memory_budget >> 20,
            n(unread, "window", "windows")
        );
    }
    if let Some(Ok(o)) = shared.otlp.as_ref().map(|o| o.lock()) {
        eprintln!("  OTLP: {} finding records sent, {} exports failed", o.sent_logs, o.errors);
    }
    for (k, e) in store.entries() {
        eprintln!(
            "  {}{} {} in {}: {}, {:.3} s to save{}",
            if e.active { "" } else { "(gone) " },
            k.detector,
            format!("{:?}", e.worst).to_lowercase(),
            k.program.as_deref().unwrap_or("?"),
            n(e.windows, "window", "windows"),
            e.saved_s,
            k.name.as_deref().map(|n| format!(" ({n})")).unwrap_or_default()
                + &k.cgroup.as_deref().filter(|c| *c != "/").map(|c| format!(" [cgroup {c}]")).unwrap_or_default()
        );
    }
    Ok(EXIT_CLEAN)
}

/// `syslint agent status`: a running agent's /findings, as a table or as it is.
fn status(s: &AgentStatusArgs) -> Result<u8> {
    let addr = s.at.trim_start_matches("http://").trim_end_matches('/');
    let url = format!("http://{addr}/findings");
    let config = ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(10))).build();
    let http: ureq::Agent = config.into();
    let body =
        http.get(&url).call().and_then(|mut r| r.body_mut().read_to_string()).with_context(|| {
            format!("no agent answered at {url} (is `syslint agent --metrics-listen {addr}` running?)")
        })?;
    // written, not printed: a reader that leaves (`| head`) is an error returned, not a panic
    let mut out = std::io::stdout().lock();
    if s.format == StatusFormat::Json {
        writeln!(out, "{}", body.trim_end())?;
        return Ok(EXIT_CLEAN);
    }
    let v: serde_json::Value =
        serde_json::from_str(&body).with_context(|| format!("{url} did not answer with the agent's JSON"))?;
    let procs: usize =
        v["watching"].as_array().map_or(0, |w| w.iter().map(|c| c["processes"].as_array().map_or(0, Vec::len)).sum());
    let cgroups = v["watching"].as_array().map_or(0, Vec::len);
    writeln!(
        out,
        "agent at {addr}: {} windows ({} idle, {} failed); watching {procs} processes in {cgroups} cgroups",
        v["windows"], v["idle_windows"], v["failed_windows"]
    )?;
    let mut list: Vec<&serde_json::Value> = v["findings"].as_array().map(|l| l.iter().collect()).unwrap_or_default();
    if list.is_empty() {
        writeln!(out, "no findings")?;
        return Ok(EXIT_CLEAN);
    }
    // active first, then by the time their fixes would have saved
    let saved = |f: &serde_json::Value| f["saved_s"].as_f64().unwrap_or(0.0);
    list.sort_by(|a, b| b["active"].as_bool().cmp(&a["active"].as_bool()).then(saved(b).total_cmp(&saved(a))));
    writeln!(out, "STATE   SEVERITY DETECTOR               PROGRAM          WINDOWS     SAVED  WHERE")?;
    for f in list {
        let place =
            f["container"].as_str().map(|c| format!("container {}", &c[..c.len().min(12)])).unwrap_or_else(|| {
                f["cgroup"]
                    .as_str()
                    .filter(|c| *c != "/")
                    .map(|c| format!("cgroup {c}"))
                    .unwrap_or_else(|| "host".into())
            });
        writeln!(
            out,
            "{:<7} {:<8} {:<22} {:<16} {:>7} {:>8.3}s  {}",
            if f["active"].as_bool() == Some(true) { "active" } else { "gone" },
            f["severity"].as_str().unwrap_or("?"),
            f["detector"].as_str().unwrap_or("?"),
            f["program"].as_str().unwrap_or("?"),
            f["windows"],
            saved(f),
            place
        )?;
    }
    Ok(EXIT_CLEAN)
}

/// --count-between: the watched processes are counted in the kernel for COUNT_FOR at the start
/// of every COUNT_EVERY between windows (a fifth of the time: counting costs every syscall on
/// the host while it runs, see `syslint_bpf::Counter`).
const COUNT_FOR: Duration = Duration::from_secs(2);
const COUNT_EVERY: Duration = Duration::from_secs(10);

impl Shared {
    fn counts(&self) -> AgentCounts {
        AgentCounts {
            failed_windows: self.failed.load(Ordering::Relaxed),
            count_periods: self.count_periods.load(Ordering::Relaxed),
            candidate_windows: self.candidates.load(Ordering::Relaxed),
            cpu_s: own_cpu_seconds(),
            shortened_windows: self.shortened.load(Ordering::Relaxed),
            skipped_windows: self.skipped.load(Ordering::Relaxed),
            unread_windows: self.unread.load(Ordering::Relaxed),
            resident_bytes: budget::resident_bytes(),
            window_phases_s: self.phases.lock().map(|p| *p).unwrap_or_default(),
            bounded_windows: self.bounded.load(Ordering::Relaxed),
            rotated_windows: self.quiet_turns.load(Ordering::Relaxed),
        }
    }
}

/// A cgroup and its processes (pid, name), as a cycle watched them.
type Watched = (String, Vec<(u32, String)>);

/// What the windows and the HTTP thread share.
struct Shared {
    store: Mutex<Store>,
    /// Windows whose trace could not start (the processes gone, eBPF refused).
    failed: AtomicU64,
    /// Where findings and series are exported over OTLP (`--otlp-endpoint`).
    otlp: Option<Mutex<Otlp>>,
    /// Periods counted in the kernel between windows (--count-between), and the windows their
    /// counts started at once.
    count_periods: AtomicU64,
    candidates: AtomicU64,
    /// Pod names by uid (the kubelet's log directories, --pod-logs).
    pods: Mutex<agent::Pods>,
    /// What the latest cycle watched: cgroups and their processes (pid, name).
    watching: Mutex<Vec<Watched>>,
    /// Windows made shorter or skipped to stay within the CPU budget, and windows whose
    /// records reached what the memory budget leaves (the kernel buffer unread meanwhile).
    shortened: AtomicU64,
    skipped: AtomicU64,
    unread: AtomicU64,
    /// Seconds the windows spent in each of [`WINDOW_PHASES`].
    phases: Mutex<[f64; WINDOW_PHASES.len()]>,
    /// Windows ended early at --window-records.
    bounded: AtomicU64,
    /// Windows that left out the processes which filled the one before ([`agent::filled_by`]).
    quiet_turns: AtomicU64,
}

/// The CPU budget, and what the agent last said about it (it speaks when that changes).
struct Shedding {
    budget: CpuBudget,
    said: Plan,
}

impl Shedding {
    /// How long the next window may be (`window` asked for), None to skip it; counted, and
    /// said when it changes from the last (whole, shortened, skipped).
    fn window(&mut self, window: Duration, a: &Settings, shared: &Shared) -> Option<Duration> {
        let plan = self.budget.plan(window, own_cpu_seconds(), Instant::now());
        let kind = |p: &Plan| std::mem::discriminant(p);
        if kind(&plan) != kind(&self.said) {
            let pct = a.cpu_budget;
            match plan {
                Plan::Full => eprintln!("syslint agent: within its CPU budget ({pct}% of a core) again: whole windows"),
                Plan::Short(d) => eprintln!(
                    "syslint agent: over its CPU budget ({pct}% of a core): windows of {:.2} s instead of {:?} until it refills",
                    d.as_secs_f64(),
                    window
                ),
                Plan::Skip => eprintln!(
                    "syslint agent: over its CPU budget ({pct}% of a core): windows skipped until it refills"
                ),
            }
            self.said = plan;
        }
        match plan {
            Plan::Full => Some(window),
            Plan::Short(d) => {
                shared.shortened.fetch_add(1, Ordering::Relaxed);
                Some(d)
            }
            Plan::Skip => {
                shared.skipped.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }
}

/// The processes to watch now (the pids given that still run, and every process of each
/// name; with neither, every process of the host but kernel threads and the agent), by the
/// cgroup each is in ([`agent::cgroup_path`]), kept when under a `--cgroup` given; cgroups
/// sorted.
fn targets(a: &Settings) -> Vec<(String, Vec<u32>)> {
    let mut pids: Vec<u32> = a.pids.iter().copied().filter(|&p| syslint_capture::procfs::running(p)).collect();
    for name in &a.comm {
        pids.extend(pids_by_name(name));
    }
    if a.pids.is_empty() && a.comm.is_empty() {
        let me = std::process::id();
        let all = std::fs::read_dir("/proc").into_iter().flatten().flatten();
        pids.extend(
            all.filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok()).filter(|&p| p != me && !kernel_thread(p)),
        );
    }
    pids.sort_unstable();
    pids.dedup();
    let mut by: std::collections::BTreeMap<String, Vec<u32>> = std::collections::BTreeMap::new();
    for p in pids {
        // gone since: its cgroup does not matter
        let Ok(text) = std::fs::read_to_string(format!("/proc/{p}/cgroup")) else { continue };
        let cg = agent::cgroup_path(&text);
        if a.cgroup.is_empty() || a.cgroup.iter().any(|c| under(&cg, c)) {
            by.entry(cg).or_default().push(p);
        }
    }
    by.into_iter().collect()
}

/// Whether cgroup `path` is `top` or below it.
fn under(path: &str, top: &str) -> bool {
    let top = top.trim_end_matches('/');
    top.is_empty() || path == top || path.strip_prefix(top).is_some_and(|r| r.starts_with('/'))
}

/// Whether pid is a kernel thread (PF_KTHREAD in /proc/PID/stat's flags): nothing to trace.
fn kernel_thread(pid: u32) -> bool {
    const PF_KTHREAD: u64 = 0x0020_0000;
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return true };
    // after the command name's closing parenthesis: state is field 3, flags field 9
    let flags = stat.rsplit_once(')').and_then(|r| r.1.split_whitespace().nth(6)?.parse::<u64>().ok());
    flags.is_none_or(|f| f & PF_KTHREAD != 0)
}

/// A process's program name (procfs::program_name: its comm, completed when cut), empty when
/// gone.
fn comm_of(pid: u32) -> String {
    syslint_capture::procfs::program_name(pid).unwrap_or_default()
}

/// One full-detail eBPF trace (a window) of the watched processes of `groups` (cgroups and
/// their processes) for `dur`: one attach for all, a report per cgroup that had calls.
fn trace(a: &Settings, stop: &StopWhen, dur: Duration, groups: &[(String, Vec<u32>)]) -> Result<Traced> {
    let config = syslint_pipeline::config::load(a.config.as_deref())?;
    let detectors = config.detectors(&[], &[])?;
    let stacks = match a.stacks {
        AgentStacks::Sampled => syslint_capture::live::StackCalls::Only(
            syslint_analyze::callsites::watched_syscalls(&detectors).into_iter().map(String::from).collect(),
        ),
        _ => syslint_capture::live::StackCalls::Off,
    };
    let opts = live::Options {
        // never strace: stopping every call of a production process is not an agent's to do
        backend: live::Choice::Ebpf,
        summary_only: false,
        record: None,
        payload_bytes: 64,
        interval: None,
        stacks,
        stacks_with_strace: false,
        // what the memory budget leaves beside what the agent holds now
        queue_bytes: usize::try_from(budget::queue_bytes(a.memory_budget, budget::resident_bytes())).ok(),
        // a wait that began inside the window (a client reading until a keep-alive server
        // closes) is seen to its end: up to one more window length, recording nothing new
        settle: Some(dur),
        max_records: a.window_records,
    };
    let bounded = StopWhen { interrupt: stop.interrupt.clone(), terminate: stop.terminate.clone(), after: Some(dur) };
    let pids: Vec<u32> = groups.iter().flat_map(|(_, p)| p.iter().copied()).collect();
    let attach = Instant::now();
    let source = live::start(&Target::Pids(pids), &opts, &mut |line| eprintln!("{line}"))?;
    let attach = attach.elapsed();
    // the same configuration as the first (already built once: building it again cannot fail)
    let mut first = Some(detectors);
    let make = move || Analysis::new(first.take().unwrap_or_else(|| config.detectors(&[], &[]).unwrap_or_default()));
    let mut split = ByCgroup::new(groups, Box::new(make));
    let mut outcome = source.run(&mut split, &bounded)?;
    let records = std::mem::take(&mut outcome.capture.records_by_process);
    let ended_at_bound = matches!(outcome.stop, syslint_pipeline::StopReason::Bounded(_));
    let analyse = Instant::now();
    let reports = split.finish(&outcome.capture);
    let p = outcome.phases;
    let phases = [attach, p.traced, p.settling, p.catching_up, p.detaching, analyse.elapsed()].map(|d| d.as_secs_f64());
    let filled = if ended_at_bound { agent::filled_by(&records) } else { Vec::new() };
    Ok(Traced { reports, phases, bounded: ended_at_bound, filled })
}

/// What one window traced: a report per cgroup that had calls, the seconds of each of
/// [`WINDOW_PHASES`], and whether it ended at `--window-records`.
struct Traced {
    reports: Vec<(Option<String>, Report)>,
    phases: [f64; WINDOW_PHASES.len()],
    bounded: bool,
    /// The processes that filled it, when it ended at its bound ([`agent::filled_by`]).
    filled: Vec<u32>,
}

/// One full-detail trace of the watched processes of `groups` (cgroups and their processes),
/// for `window`, into the store: one window, each cgroup's part analysed apart.
/// Returns the processes that filled the window, when it ended at its bound of records
/// ([`agent::filled_by`]; else none).
fn one_window(
    a: &Settings,
    stop: &StopWhen,
    window: Duration,
    groups: &[(String, Vec<u32>)],
    shared: &Shared,
    cpu: &mut CpuBudget,
) -> Vec<u32> {
    let cpu_before = own_cpu_seconds();
    let result = trace(a, stop, window, groups);
    cpu.spent(window, cpu_before, own_cpu_seconds(), Instant::now());
    match result {
        Ok(Traced { reports, phases, bounded, filled }) => {
            if let Ok(mut p) = shared.phases.lock() {
                p.iter_mut().zip(phases).for_each(|(t, s)| *t += s);
            }
            if bounded {
                shared.bounded.fetch_add(1, Ordering::Relaxed);
            }
            if reports.iter().any(|(_, r)| r.capture.unread_s > 0.0) {
                shared.unread.fetch_add(1, Ordering::Relaxed);
            }
            let parts: Vec<Window> =
                reports.iter().map(|(cgroup, r)| Window { cgroup: cgroup.clone(), ..Window::of(r) }).collect();
            // the OTLP messages are made under the store's lock and sent after it
            let mut bodies = (None, None);
            if let Ok(mut s) = shared.store.lock() {
                let changes = s.add_parts(&parts, SystemTime::now());
                if let Some(Ok(o)) = shared.otlp.as_ref().map(|o| o.lock()) {
                    let mut pods = shared.pods.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    bodies = (o.logs(&s, &changes, &mut pods), Some(o.metrics(&s, &shared.counts())));
                }
            }
            if let Some(Ok(mut o)) = shared.otlp.as_ref().map(|o| o.lock()) {
                if let Some(b) = bodies.0 {
                    o.send_logs(b);
                }
                if let Some(b) = bodies.1 {
                    o.send_metrics(b);
                }
            }
            filled
        }
        Err(e) => {
            eprintln!("syslint agent: window not traced: {e}");
            shared.failed.fetch_add(1, Ordering::Relaxed);
            Vec::new()
        }
    }
}

/// Serves `/metrics` and `/findings` (tiny_http: HTTP/1.1 parsing, keep-alive, its own
/// bounded worker) until the process ends.
fn serve(server: &tiny_http::Server, shared: &Shared) {
    for req in server.incoming_requests() {
        let path = req.url().split('?').next().unwrap_or_default().to_string();
        let get = *req.method() == tiny_http::Method::Get;
        let (code, kind, body) = match path.as_str() {
            "/metrics" if get => (200, "application/openmetrics-text; version=1.0.0; charset=utf-8", metrics(shared)),
            "/findings" if get => (200, "application/json", findings_json(shared)),
            "/metrics" | "/findings" => (405, "text/plain", "syslint agent: GET only\n".to_string()),
            _ => (404, "text/plain", "syslint agent: /metrics or /findings\n".to_string()),
        };
        let mut r = tiny_http::Response::from_string(body).with_status_code(code);
        if let Ok(h) = tiny_http::Header::from_bytes(&b"Content-Type"[..], kind.as_bytes()) {
            r = r.with_header(h);
        }
        let _ = req.respond(r);
    }
}

type Labels = Vec<(&'static str, String)>;

/// The store as Prometheus text (a registry made for each scrape from the store's state).
fn metrics(shared: &Shared) -> String {
    let mut r = Registry::with_prefix("syslint");
    let found = Family::<Labels, Counter>::default();
    let active = Family::<Labels, Gauge>::default();
    let saved = Family::<Labels, Counter<f64, std::sync::atomic::AtomicU64>>::default();
    let windows = Counter::<u64>::default();
    let idle = Counter::<u64>::default();
    let failed = Counter::<u64>::default();
    let syscalls = Counter::<u64>::default();
    let lost = Counter::<u64>::default();
    let evicted = Counter::<u64>::default();
    let cpu = Counter::<f64, std::sync::atomic::AtomicU64>::default();
    let periods = Counter::<u64>::default();
    let candidates = Counter::<u64>::default();
    let shed = Family::<Labels, Counter>::default();
    let resident = Gauge::<i64>::default();
    let c = shared.counts();
    shed.get_or_create(&vec![("budget", "cpu".into()), ("how", "shortened".into())]).inc_by(c.shortened_windows);
    shed.get_or_create(&vec![("budget", "cpu".into()), ("how", "skipped".into())]).inc_by(c.skipped_windows);
    shed.get_or_create(&vec![("budget", "memory".into()), ("how", "unread".into())]).inc_by(c.unread_windows);
    resident.set(i64::try_from(c.resident_bytes).unwrap_or(i64::MAX));
    periods.inc_by(c.count_periods);
    candidates.inc_by(c.candidate_windows);
    let phases = Family::<Labels, Counter<f64, std::sync::atomic::AtomicU64>>::default();
    for (p, secs) in WINDOW_PHASES.iter().zip(c.window_phases_s) {
        phases.get_or_create(&vec![("phase", (*p).to_string())]).inc_by(secs);
    }
    let program_calls = Family::<Labels, Counter>::default();
    let program_errors = Family::<Labels, Counter>::default();
    let program_traced = Family::<Labels, Counter<f64, std::sync::atomic::AtomicU64>>::default();
    if let (Ok(s), Ok(mut pods)) = (shared.store.lock(), shared.pods.lock()) {
        for ((program, cgroup), c) in &s.programs {
            let place = place_labels(program, cgroup.as_deref(), &mut pods);
            program_calls.get_or_create(&place).inc_by(c.calls);
            program_errors.get_or_create(&place).inc_by(c.errors);
            program_traced.get_or_create(&place).inc_by(c.traced_s);
        }
        for (k, e) in s.entries() {
            let place = place_labels(k.program.as_deref().unwrap_or_default(), k.cgroup.as_deref(), &mut pods);
            let what = [("detector", k.detector.clone()), ("severity", format!("{:?}", e.worst).to_lowercase())];
            let labels: Labels = what.iter().cloned().chain(place.iter().cloned()).collect();
            found.get_or_create(&labels).inc_by(e.windows);
            active.get_or_create(&labels).set(i64::from(e.active));
            let by_detector: Labels = what[..1].iter().cloned().chain(place).collect();
            saved.get_or_create(&by_detector).inc_by(e.saved_s);
        }
        windows.inc_by(s.windows);
        idle.inc_by(s.idle_windows);
        syscalls.inc_by(s.syscalls);
        lost.inc_by(s.lost_events);
        evicted.inc_by(s.evicted);
    }
    failed.inc_by(c.failed_windows);
    cpu.inc_by(c.cpu_s);
    r.register("findings", "Windows each finding (detector, program) was found in", found);
    r.register("finding_active", "1 while the finding was seen in the latest window of its program", active);
    r.register("finding_saved_seconds", "Seconds the finding's fix would have saved over its windows", saved);
    r.register("windows", "Full-detail windows made", windows);
    r.register("idle_windows", "Windows with no process to watch", idle);
    let bounded = Counter::<u64>::default();
    bounded.inc_by(c.bounded_windows);
    r.register("bounded_windows", "Windows ended early because they reached --window-records", bounded);
    let rotated = Counter::<u64>::default();
    rotated.inc_by(c.rotated_windows);
    r.register("rotated_windows", super::otlp::ROTATED_HELP, rotated);
    r.register(
        "window_seconds",
        "Seconds the windows spent in each phase: attach (loading and attaching the programs), trace, settle \
         (calls under way returning, nothing new recorded), catch_up (detached, the records left read and \
         analysed), detach (the programs and maps freed), analyse (each cgroup's report finished, its findings \
         kept)",
        phases,
    );
    r.register("failed_windows", "Windows whose trace could not start", failed);
    r.register("syscalls", "Syscalls seen in the windows", syscalls);
    r.register("lost_events", "Events the windows' captures lost", lost);
    r.register("evicted_findings", "Findings dropped to keep the store bounded", evicted);
    r.register("agent_cpu_seconds", "CPU time of the agent itself (user and system)", cpu);
    r.register("agent_resident_bytes", "Memory of the agent itself (resident)", resident);
    r.register(
        "shed_windows",
        "Windows the agent shortened or skipped to stay within its CPU budget (budget=cpu), or whose records \
         reached what its memory budget leaves, the kernel buffer unread meanwhile (budget=memory)",
        shed,
    );
    r.register("program_syscalls", "Syscalls of each program in the windows that watched it", program_calls);
    r.register(
        "program_syscall_errors",
        "Failed syscalls of each program in the windows that watched it",
        program_errors,
    );
    r.register(
        "program_traced_seconds",
        "Seconds each program was traced in full detail (its syscall rate: syscalls over these)",
        program_traced,
    );
    r.register("count_periods", "Periods a cgroup was counted in the kernel between windows", periods);
    r.register(
        "candidate_windows",
        "Windows started at once because a cgroup's counts showed something new",
        candidates,
    );
    let mut out = String::new();
    if encode(&mut out, &r).is_err() {
        out = "# the metrics could not be encoded\n".into();
    }
    out
}

/// Where a program ran, as labels: the program, its container's short id (12 hex digits, as
/// its runtime shows it), its pod (the name where the kubelet's log directories say it, else
/// the uid), the pod's namespace and the cgroup; empty where none.
fn place_labels(program: &str, cgroup: Option<&str>, pods: &mut agent::Pods) -> Labels {
    let cgroup = cgroup.unwrap_or_default().to_string();
    let uid = agent::pod_uid(&cgroup);
    let named = uid.as_deref().and_then(|u| pods.of(u));
    vec![
        ("program", program.to_string()),
        ("container", agent::container_id(&cgroup).map(|c| c[..12].to_string()).unwrap_or_default()),
        ("pod", named.as_ref().map(|n| n.1.clone()).or(uid).unwrap_or_default()),
        ("namespace", named.map(|n| n.0).unwrap_or_default()),
        ("cgroup", cgroup),
    ]
}

/// The agent's own CPU time (utime + stime of /proc/self/stat), in seconds.
fn own_cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // after the command name's closing parenthesis: state is field 3, utime 14, stime 15
    let rest = stat.rsplit_once(')').map_or("", |r| r.1);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / USER_HZ
}

/// Clock ticks per second in /proc (the kernel's USER_HZ, `getconf CLK_TCK`): 100 on x86_64,
/// the one architecture syslint traces.
const USER_HZ: f64 = 100.0;

/// The findings kept, as JSON.
fn findings_json(shared: &Shared) -> String {
    let secs = |t: SystemTime| t.duration_since(SystemTime::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
    let list: Vec<serde_json::Value> = match (shared.store.lock(), shared.pods.lock()) {
        (Ok(s), Ok(mut pods)) => s
            .entries()
            .map(|(k, e)| {
                let uid = k.cgroup.as_deref().and_then(agent::pod_uid);
                let named = uid.as_deref().and_then(|u| pods.of(u));
                serde_json::json!({
                    "detector": k.detector,
                    "program": k.program,
                    "subject": e.latest.subject,
                    "name": k.name,
                    "cgroup": k.cgroup,
                    "container": k.cgroup.as_deref().and_then(agent::container_id),
                    "pod": named.as_ref().map(|n| n.1.clone()),
                    "namespace": named.as_ref().map(|n| n.0.clone()),
                    "pod_uid": uid,
                    "severity": format!("{:?}", e.worst).to_lowercase(),
                    "active": e.active,
                    "windows": e.windows,
                    "first_seen": secs(e.first_seen),
                    "last_seen": secs(e.last_seen),
                    "saved_s": e.saved_s,
                    "latest": e.latest,
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    let watching: Vec<serde_json::Value> = shared
        .watching
        .lock()
        .map(|w| {
            w.iter()
                .map(|(cg, procs)| {
                    let procs: Vec<_> = procs.iter().map(|(p, c)| serde_json::json!({ "pid": p, "comm": c })).collect();
                    serde_json::json!({ "cgroup": cg, "container": agent::container_id(cg), "processes": procs })
                })
                .collect()
        })
        .unwrap_or_default();
    let (windows, idle) = shared.store.lock().map(|s| (s.windows, s.idle_windows)).unwrap_or_default();
    serde_json::to_string_pretty(&serde_json::json!({
        "windows": windows,
        "idle_windows": idle,
        "failed_windows": shared.failed.load(Ordering::Relaxed),
        "shed_windows": {
            "cpu_shortened": shared.shortened.load(Ordering::Relaxed),
            "cpu_skipped": shared.skipped.load(Ordering::Relaxed),
            "memory_unread": shared.unread.load(Ordering::Relaxed),
        },
        "watching": watching,
        "findings": list,
    }))
    .unwrap_or_else(|_| "{}".into())
}

#[cfg(test)]
mod tests {
    use super::under;

    #[test]
    fn cgroups_below_the_one_given_are_in_it() {
        assert!(under("/system.slice/nginx.service", "/system.slice"));
        assert!(under("/system.slice", "/system.slice/"));
        assert!(!under("/system.slice2/x", "/system.slice"));
        assert!(under("/anything", "/"));
    }
}
