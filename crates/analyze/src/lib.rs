//! syslint analysis: one streaming pass over events in time order that feeds the process/fd
//! model, the per-syscall statistics and the detectors, and produces a [`Report`].

pub mod advice;
pub mod basis;
pub mod callsites;
#[cfg(test)]
pub(crate) mod check;
pub mod detectors;
pub mod draft;
pub mod hist;
pub mod host;
pub mod kit;
pub mod model;
pub mod registry;
pub mod summary;
pub mod timeline;

use model::Model;
use registry::Detector;
use summary::SyscallTable;
use syslint_event::{Clock, Event, EventKind, Tid};
use syslint_report::{Capture, EndpointStats, OtherProcesses, ProcessStats, Report, Summary, TargetStats, Tool};

/// Rows kept per summary table in the report (the JSON has these; printers may show fewer).
pub const TOP_ROWS: usize = 50;

/// What a source knows about its capture, typed: with the events, all [`Analyzer::finish`]
/// needs to build the report.
#[derive(Clone, Debug, Default)]
pub struct Captured {
    /// Where the events came from (`None`: not said, as in unit tests that feed events).
    pub backend: Option<syslint_report::Backend>,
    /// What the reader knew, in the report's form: sources, lines, unparsed lines, warnings,
    /// notes.
    pub capture: Capture,
    /// A table of counts per syscall that came with the input (`strace -c`, `perf trace -s`,
    /// `syscount`, a `--summary-only` report).
    pub counts: Option<syslint_report::Counts>,
    /// The rows of an `strace -c` table at the end of a log.
    pub c_table: Vec<syslint_report::CountRow>,
    /// `--summary-only`: the kernel's counters, which are the syscall table.
    pub kernel_counts: Option<Vec<syslint_report::CountRow>>,
    /// Syscalls the kernel dropped.
    pub lost_events: u64,
    /// When syslint stopped a live capture (`--for`, Ctrl-C, SIGTERM: the processes run on),
    /// in the events' clock: connections still open count up to it.
    pub stopped_ns: Option<i64>,
    /// Monotonic timestamps (eBPF) plus this are local times: evidence shows times of day.
    pub local_offset_ns: Option<i64>,
    /// The stacks the calls' [`syslint_event::Pre::stack`] ids index (strace `-k`).
    pub stacks: Option<syslint_event::StackTable>,
    /// Stacks sampled apart from the calls (eBPF): each stands for `weight` calls of its
    /// thread and syscall.
    pub sampled_stacks: Option<syslint_event::SampledStacks>,
    /// A live window cut short by its bound of records: its findings are judged at the rate it
    /// saw, over the length it was meant to have ([`registry::Shortened`]).
    pub shortened: Option<registry::Shortened>,
    /// The records the kernel sent per process (eBPF), most first: who filled a window bounded
    /// by records (the agent leaves them out of its next window). Not part of the report.
    pub records_by_process: Vec<(u32, u64)>,
}

impl From<Capture> for Captured {
    fn from(capture: Capture) -> Captured {
        Captured { capture, ..Default::default() }
    }
}

pub struct Analyzer {
    model: Model,
    syscalls: SyscallTable,
    detectors: Vec<Box<dyn Detector>>,
    dispatch: Dispatch,
    seq: u64,
    timeline: timeline::Timeline,
    first_ts: Option<i64>,
    last_ts: Option<i64>,
    /// When a live capture was stopped (`--for`, Ctrl-C), if after the last event.
    stop_ts: Option<i64>,
    /// Monotonic timestamps plus this are local times (eBPF: known at the capture's start).
    local_offset_ns: Option<i64>,
    timed: bool,
    /// The threads seen, up to [`max_tasks`]; the events of any thread beyond go to
    /// [`FOLDED`], so per-thread state in the model and detectors stays bounded.
    seen: rustc_hash::FxHashSet<Tid>,
    /// The thread of the previous event, when it was in `seen` (events come in runs of one
    /// thread: most need no lookup at all).
    last_seen: Option<Tid>,
    max_tasks: usize,
    /// Distinct threads whose events were folded into [`FOLDED`].
    folded: std::collections::HashSet<Tid>,
    /// More threads than `folded` holds were folded.
    folded_more: bool,
    /// The calls of a short input, for excerpt rules, and whether it shows whole lives.
    collector: basis::Collector,
    /// A table of counts read from the input (or counted in the kernel), for counts rules.
    counts: Option<syslint_report::Counts>,
    /// The stacks of the calls, per thread and syscall (inputs with stacks only).
    sites: callsites::CallSites,
    stacks: Option<syslint_event::StackTable>,
    /// The window was cut short by its bound of records ([`Captured::shortened`]).
    shortened: Option<registry::Shortened>,
}

/// Threads analysed one by one at most (`SYSLINT_MAX_TASKS` to change it). A trace holds this
/// many only when it is hostile or enormous: the threads beyond are counted together, as one
/// thread of one process, and the report says how many.
pub const MAX_TASKS: usize = 100_000;

/// The thread the events of threads beyond [`MAX_TASKS`] are counted under.
pub const FOLDED: Tid = Tid(u32::MAX - 1);

fn max_tasks() -> usize {
    std::env::var("SYSLINT_MAX_TASKS").ok().and_then(|v| v.parse().ok()).unwrap_or(MAX_TASKS).max(1)
}

impl Default for Analyzer {
    /// Every stable detector with default thresholds.
    fn default() -> Self {
        Analyzer::new(registry::build(&[], &[], &toml::Table::new()).unwrap_or_default())
    }
}

impl Analyzer {
    pub fn new(detectors: Vec<Box<dyn Detector>>) -> Analyzer {
        Analyzer {
            model: Model::new(),
            syscalls: SyscallTable::default(),
            dispatch: Dispatch::new(&detectors),
            detectors,
            seq: 0,
            timeline: timeline::Timeline::new(),
            first_ts: None,
            last_ts: None,
            stop_ts: None,
            local_offset_ns: None,
            timed: false,
            seen: Default::default(),
            last_seen: None,
            max_tasks: max_tasks(),
            folded: Default::default(),
            folded_more: false,
            collector: Default::default(),
            counts: None,
            sites: Default::default(),
            stacks: None,
            shortened: None,
        }
    }

    /// `ev` as analysed: beyond [`MAX_TASKS`] threads, a new thread's events are [`FOLDED`]'s.
    fn fold<'a>(&mut self, ev: &Event<'a>) -> Option<Event<'a>> {
        if self.last_seen == Some(ev.tid) {
            return None;
        }
        if self.seen.len() < self.max_tasks {
            self.seen.insert(ev.tid);
            self.last_seen = Some(ev.tid);
            return None;
        }
        if self.seen.contains(&ev.tid) {
            self.last_seen = Some(ev.tid);
            return None;
        }
        // counting the distinct folded threads takes memory too: exactly up to a bound
        if self.folded.len() < self.max_tasks {
            self.folded.insert(ev.tid);
        } else if !self.folded.contains(&ev.tid) {
            self.folded_more = true;
        }
        Some(Event { tid: FOLDED, ..ev.clone() })
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    #[inline]
    pub fn on_event(&mut self, ev: &Event) {
        let folded;
        let ev = match self.fold(ev) {
            Some(f) => {
                folded = f;
                &folded
            }
            None => ev,
        };
        if let EventKind::FdKnown { .. } | EventKind::TaskKnown { .. } | EventKind::Spawning { .. } = ev.kind {
            // not something the program did: only the model learns from it
            self.model.on_event(ev);
            return;
        }
        if let Some(t) = ev.ts_ns {
            if self.first_ts.is_none_or(|f| t < f) {
                self.first_ts = Some(t);
            }
            let end = match &ev.kind {
                EventKind::Syscall(sc) => t.saturating_add(sc.dur_ns.unwrap_or(0) as i64),
                _ => t,
            };
            if self.last_ts.is_none_or(|l| end > l) {
                self.last_ts = Some(end);
            }
        }
        if let EventKind::Syscall(sc) = &ev.kind {
            if sc.pre.stack.is_some() {
                self.sites.on_call(ev.tid, sc);
            }
            self.syscalls.add(sc);
            self.timed |= sc.dur_ns.is_some();
            self.timeline.on_event(ev);
        }
        let target = self.model.on_event(ev);
        let shown = if self.collector.collecting() {
            target.and_then(|t| self.model.target(t)).map(|t| (t.display, t.kind))
        } else {
            None
        };
        self.collector.on_event(ev, shown);
        if let EventKind::Alias { old } = ev.kind {
            self.sites.rekey(old, ev.tid);
            // every detector's thread- and process-keyed state follows the alias
            for d in &mut self.detectors {
                for m in d.keyed() {
                    m.alias(old, ev.tid);
                }
            }
        }
        let seq = self.seq;
        self.seq += 1;
        let (wanted, kind) = match &ev.kind {
            EventKind::Syscall(sc) => (self.dispatch.syscall(sc.sys), Hook::Syscall(sc)),
            EventKind::Exited { .. } | EventKind::Killed { .. } => (&self.dispatch.exits[..], Hook::Exit),
            EventKind::Alias { old } => (&self.dispatch.aliases[..], Hook::Alias(*old)),
            EventKind::Signal { .. }
            | EventKind::Attached { .. }
            | EventKind::Detached
            | EventKind::FdKnown { .. }
            | EventKind::TaskKnown { .. }
            | EventKind::Spawning { .. } => (&self.dispatch.notes[..], Hook::Note),
        };
        if wanted.is_empty() {
            return;
        }
        let cx = registry::Ctx {
            model: &self.model,
            seq,
            target: target.and_then(|t| self.model.target(t)),
            tgid: self.model.last_tgid(),
            earlier_life: self.model.earlier_life(),
        };
        for &i in wanted {
            let d = &mut self.detectors[i as usize];
            match kind {
                Hook::Syscall(sc) => d.on_syscall(&cx, ev, sc),
                Hook::Exit => d.on_exit(&cx, ev),
                Hook::Alias(old) => d.on_alias(&cx, ev, old),
                Hook::Note => d.on_note(&cx, ev),
            }
        }
    }

    /// A live capture was stopped at `ts` (in the events' clock) with the traced processes
    /// running on: connections still open lived at least until then. Ignored when it is not
    /// after the last event (a time-of-day clock past midnight, or no event yet). The window
    /// stays the events' (a recording of the capture gives the same statistics).
    fn stopped_at(&mut self, ts: i64) {
        if let Some(l) = self.last_ts {
            // a stop is seconds after the last event, not hours: past midnight, leave it
            if ts > l && ts - l < 12 * 3600 * 1_000_000_000 {
                self.stop_ts = Some(ts);
            }
        }
    }

    /// How many findings the detectors would report if the trace ended now. Asked of copies
    /// of the detectors, so the analysis goes on unchanged (for live status lines).
    pub fn findings_so_far(&self) -> usize {
        let window = kit::window(self.first_ts, self.last_ts);
        let cx = registry::FinishCtx { model: &self.model, clock: Clock::None, window, tracer: Default::default() };
        self.detectors.iter().map(|d| d.clone_box().finish(&cx).len()).sum()
    }

    /// Finish the pass and build the report: the one place it is built. `c` carries what the
    /// source knows (the reader's facts, the tables of counts that came with the input or
    /// from the kernel, lost events, when a live capture stopped); the analyzer adds
    /// processes, threads, window, durations, statistics and the findings.
    pub fn finish(mut self, c: impl Into<Captured>) -> Report {
        let c: Captured = c.into();
        let mut capture = c.capture;
        if let Some(b) = c.backend {
            capture.backend = b.as_str().into();
        }
        // a capture given as the report's section names its backend there
        let backend = c.backend.or_else(|| syslint_report::Backend::from_name(&capture.backend));
        capture.lost_events = c.lost_events;
        if let Some(end) = c.stopped_ns {
            self.stopped_at(end);
        }
        self.local_offset_ns = c.local_offset_ns;
        self.stacks = c.stacks;
        self.shortened = c.shortened.filter(|s| s.factor() > 1.0);
        if let Some(sampled) = c.sampled_stacks {
            self.add_sampled(sampled, &mut capture);
        }
        // a table of counts: read from the input, from its strace -c rows, or counted in the
        // kernel (--summary-only); with no call in the input, the report is made from it and
        // the detectors' counts rules run
        let table = |tool: &str, rows: Vec<syslint_report::CountRow>| syslint_report::Counts {
            tool: tool.into(),
            rows,
            errors_known: true,
            ..Default::default()
        };
        self.counts = c
            .counts
            .or_else(|| (!c.c_table.is_empty()).then(|| table("strace -c", c.c_table.clone())))
            .or_else(|| {
                let rows = c.kernel_counts.as_ref()?.iter().filter(|r| r.calls > 0).cloned().collect();
                Some(table("syslint --summary-only", rows))
            })
            .filter(|c| !c.rows.is_empty());
        let mut report = self.build(capture, backend);
        report.summary.strace_c_table = c
            .c_table
            .into_iter()
            .map(|r| syslint_report::CTableRow {
                name: r.name,
                seconds: r.seconds.unwrap_or(0.0),
                calls: r.calls,
                errors: r.errors,
            })
            .collect();
        if report.capture.basis.as_ref().is_some_and(|b| b.kind == syslint_report::BasisKind::Counts)
            && !report.capture.summary_only
        {
            // the lines around the table (its header, the command line, program output) were
            // read by the table reader: not "not understood"
            report.capture.unparsed_lines = 0;
            report.capture.unparsed_samples.clear();
        }
        if let Some(rows) = c.kernel_counts {
            summary::kernel_rows(&mut report, rows);
        }
        report
    }

    /// Sampled stacks into the input's table, their samples into the call-site counts.
    fn add_sampled(&mut self, sampled: syslint_event::SampledStacks, capture: &mut Capture) {
        let table = self.stacks.get_or_insert_with(Default::default);
        let ids: Vec<Option<syslint_event::StackId>> = sampled
            .stacks
            .into_iter()
            .map(|frames| {
                let ids: Option<Vec<u32>> = frames.into_iter().map(|f| table.frame(f)).collect();
                ids.and_then(|ids| table.stack(&ids))
            })
            .collect();
        for (tid, sys, n, i) in sampled.samples {
            match ids.get(i).copied().flatten() {
                Some(id) => self.sites.add(tid, sys, id, n),
                None => table.dropped_stacks += n,
            }
        }
        capture.notes.extend(sampled.notes);
    }

    /// Each finding's call sites, from the input's stacks; without stacks, the command that
    /// would record them ([`callsites`]).
    fn call_sites(&mut self, findings: &mut [syslint_report::Finding], capture: &mut Capture) {
        match &self.stacks {
            Some(t) if !t.is_empty() => {
                let st = capture.stacks.get_or_insert_with(Default::default);
                st.calls = self.sites.calls;
                st.distinct = t.stacks() as u64;
                st.frames = t.frames() as u64;
                st.dropped = t.dropped_stacks + self.sites.dropped;
                st.truncated = t.truncated;
                for f in findings {
                    f.call_sites = self.sites.of(f, t);
                }
            }
            // strace text: strace can record them (eBPF's stacks are its own backend's)
            _ if capture.backend.starts_with("strace") => {
                for f in findings {
                    f.stacks_command = callsites::stacks_command(f);
                }
            }
            _ => {}
        }
    }

    fn build(mut self, mut capture: Capture, backend: Option<syslint_report::Backend>) -> Report {
        if !self.folded.is_empty() {
            capture.warnings.push(format!(
                "{}{} threads beyond the first {} were counted together, as thread {} of one process: totals include them, per-process rows do not tell them apart",
                self.folded.len(),
                if self.folded_more { " or more" } else { "" },
                self.max_tasks,
                FOLDED.0
            ));
        }
        let window = kit::window(self.first_ts, self.last_ts);
        let window_s = window.map_or(0.0, |w| w.duration_s);
        let clock = match (Clock::from_name(&capture.clock), self.local_offset_ns) {
            (Clock::Monotonic, Some(local_offset_ns)) => Clock::MonotonicAt { local_offset_ns },
            (c, _) => c,
        };
        let cx =
            registry::FinishCtx { model: &self.model, clock, window, tracer: registry::Tracer::of_backend(backend) };
        let mut findings = Vec::new();
        for d in &mut self.detectors {
            match self.shortened {
                // judged at the rate seen over the window's whole length; what that changed
                // is said in the finding's cost line
                Some(short) => {
                    let seen = d.clone_box().finish(&cx);
                    d.stretch(short.factor());
                    let mut judged = d.finish(&cx);
                    registry::explain_stretch(&mut judged, &seen, short);
                    findings.extend(judged);
                }
                None => findings.extend(d.finish(&cx)),
            }
            capture.warnings.extend(d.dropped());
        }
        if let Some(short) = self.shortened {
            capture.notes.push(format!(
                "the window ended at its bound of records after {:.2} s of the {:.1} s it was to last: amounts were judged at the rate seen, over {:.1} s (x{:.1})",
                short.seen_s,
                short.meant_s,
                short.meant_s,
                short.factor()
            ));
        }
        // less than a full trace: each detector's excerpt or counts rules, where its full-trace
        // rules found nothing
        let collector = std::mem::take(&mut self.collector);
        let traced = collector.syscalls;
        // a live trace (or its recording) is every call of the window, however short
        let live = backend.is_some_and(syslint_report::Backend::live);
        let excerpt = if live { None } else { collector.excerpt(capture.unparsed_lines, clock) };
        let counts = self.counts.take();
        let kind = match (&counts, &excerpt) {
            (Some(_), _) if traced == 0 => syslint_report::BasisKind::Counts,
            (_, Some(_)) => syslint_report::BasisKind::Excerpt,
            _ => syslint_report::BasisKind::FullTrace,
        };
        for d in &self.detectors {
            let name = d.meta().name;
            if findings.iter().any(|f| f.detector == name) {
                continue;
            }
            match (kind, &counts, &excerpt) {
                (syslint_report::BasisKind::Counts, Some(c), _) => {
                    findings.extend(
                        registry::counts_rule(d.as_ref(), c)
                            .into_iter()
                            .map(|f| basis::clamp(f, syslint_report::Confidence::Medium)),
                    );
                }
                (syslint_report::BasisKind::Excerpt, _, Some(x)) => {
                    findings.extend(
                        d.on_excerpt(x).into_iter().map(|f| basis::clamp(f, syslint_report::Confidence::Medium)),
                    );
                }
                _ => {}
            }
        }
        // severity from measured cost (issue 27): the seconds each fix would save, weighed
        // against the time traced (a table's duration, else its syscall time; an excerpt has none)
        let traced_s = match (kind, &counts) {
            (syslint_report::BasisKind::Counts, Some(c)) => {
                c.duration_s.or_else(|| Some(c.rows.iter().filter_map(|r| r.seconds).sum::<f64>()))
            }
            (syslint_report::BasisKind::Excerpt, _) => None,
            _ => Some(window_s),
        };
        for f in &mut findings {
            if let Some(d) = self.detectors.iter().find(|d| d.meta().name == f.detector) {
                registry::weigh(f, d.meta(), traced_s);
                advice::apply(f, d.meta());
            }
        }
        self.call_sites(&mut findings, &mut capture);
        findings.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.code.cmp(&b.code)).then(a.subject.cmp(&b.subject)));
        let m = &self.model;

        // one pass over tasks: per-process totals
        let mut per_proc: Vec<ProcessStats> = m
            .procs
            .iter()
            .map(|p| ProcessStats {
                pid: p.pid.0,
                comm: p.comm.clone(),
                parent: p.parent.map(|p| p.0),
                end: p.end.clone(),
                ..Default::default()
            })
            .collect();
        for t in m.tasks.iter().filter(|t| t.events > 0) {
            let ps = &mut per_proc[t.proc_];
            ps.threads += 1;
            ps.calls += t.calls;
            ps.errors += t.errors;
            ps.total_s += t.dur_ns as f64 / 1e9;
        }
        let mut procs: Vec<ProcessStats> = per_proc
            .into_iter()
            .zip(&m.procs)
            .filter(|(ps, p)| !p.absorbed && ps.threads > 0)
            .map(|(ps, _)| ps)
            .collect();
        procs.sort_by(|a, b| b.calls.cmp(&a.calls).then(a.pid.cmp(&b.pid)));

        let (socket_bytes, exchanges) = m
            .targets
            .iter()
            .filter(|t| t.kind.is_connection_socket())
            .fold((0u64, 0u64), |(b, x), t| (b + t.bytes_read + t.bytes_written, x + t.turns.div_ceil(2)));
        // the top rows chosen first, then built: a trace opens a file per request, and a row
        // (and a copy of its name) for each of 100,000 targets cost more than their sort
        let mut top: Vec<&model::TargetAgg> = m.targets.iter().filter(|t| t.calls > 0).collect();
        top.sort_by(|a, b| b.dur_ns.cmp(&a.dur_ns).then(b.calls.cmp(&a.calls)));
        top.truncate(TOP_ROWS);
        let targets: Vec<TargetStats> = top
            .into_iter()
            .map(|t| TargetStats {
                target: t.display.clone(),
                kind: t.kind.to_string(),
                calls: t.calls,
                errors: t.errors,
                total_s: t.dur_ns as f64 / 1e9,
                bytes_read: t.bytes_read,
                bytes_written: t.bytes_written,
            })
            .collect();

        // connections still open at the end live until the end of the trace: a server's
        // long-lived connections are not left out of the average life
        let mut open: Vec<(u64, u64, u64)> = vec![(0, 0, 0); m.endpoints.len()];
        for (ep, opened) in m.open_connections() {
            let o = &mut open[ep as usize];
            o.0 += 1;
            if let (Some(a), Some(end)) = (opened, self.stop_ts.or(self.last_ts)) {
                o.1 += end.saturating_sub(a).max(0) as u64;
                o.2 += 1;
            }
        }
        let mut endpoints: Vec<EndpointStats> = m
            .endpoints
            .iter()
            .zip(&open)
            .filter(|(e, _)| e.connections > 0 || e.bytes_sent > 0 || e.bytes_received > 0)
            .map(|(e, &(open_n, open_ns, open_timed))| EndpointStats {
                endpoint: e.endpoint.clone(),
                proto: e.proto.to_string(),
                direction: e.direction.as_str().to_string(),
                connections: e.connections,
                closed: e.closed,
                open_at_end: open_n,
                avg_lifetime_s: match e.lifetime_timed + open_timed {
                    0 => 0.0,
                    n => (e.lifetime_ns + open_ns) as f64 / n as f64 / 1e9,
                },
                bytes_sent: e.bytes_sent,
                bytes_received: e.bytes_received,
                connect_s: e.connect_ns as f64 / 1e9,
            })
            .collect();
        endpoints.sort_by(|a, b| {
            b.connections
                .cmp(&a.connections)
                .then((b.bytes_sent + b.bytes_received).cmp(&(a.bytes_sent + a.bytes_received)))
        });
        endpoints.truncate(TOP_ROWS);

        let f = &m.folded;
        capture.processes = procs.len() as u64 + f.processes;
        capture.threads = m.tasks.iter().filter(|t| t.events > 0).count() as u64 + f.threads;
        let other_processes = (f.processes > 0).then(|| OtherProcesses {
            processes: f.processes,
            threads: f.threads,
            calls: f.calls,
            errors: f.errors,
            total_s: f.dur_ns as f64 / 1e9,
        });
        capture.window = window;
        // durations: set by the backend (-T seen); a trace without -T still has some
        // durations (unfinished/resumed pairs), shown per syscall as timed_calls
        capture.durations |= self.timed && capture.backend.is_empty();
        let timeline = self.timeline.finish(|tid| (m.tgid(tid), m.label(tid)));
        let mut syscalls = self.syscalls.stats(window_s);
        let thread_s = self.timeline.thread_seconds();
        if thread_s > 0.0 {
            for s in syscalls.iter_mut().filter(|s| s.timed_calls > 0) {
                // a call's recorded duration can overlap the next one's start by rounding
                s.thread_share = Some((s.total_s / thread_s).min(1.0));
            }
        }
        capture.basis = Some(match (kind, &counts, &excerpt) {
            (syslint_report::BasisKind::Counts, Some(c), _) => basis::counts_basis(c),
            (syslint_report::BasisKind::Excerpt, _, Some(x)) => basis::excerpt_basis(x),
            _ => basis::full_trace_basis(traced, capture.processes, window.is_some(), capture.durations, backend),
        });
        if let Some(b) = &capture.basis {
            for f in &mut findings {
                basis::stamp_full(f, b);
            }
        }
        Report {
            timeline,
            baseline: None,
            version: syslint_report::SCHEMA_VERSION,
            tool: Tool::default(),
            capture,
            summary: Summary {
                syscalls,
                processes: procs,
                other_processes,
                fd_targets: targets,
                endpoints,
                strace_c_table: Vec::new(),
                socket_bytes: (socket_bytes > 0).then_some(socket_bytes),
                exchanges: (exchanges > 0).then_some(exchanges),
                counts,
            },
            findings,
        }
    }
}

/// Which detectors (indexes) each kind of event goes to, built once from their interests.
struct Dispatch {
    /// Indexed by `Sys as usize`; the last entry is `Sys::Other`.
    by_sys: Vec<Box<[u16]>>,
    exits: Box<[u16]>,
    aliases: Box<[u16]>,
    notes: Box<[u16]>,
}

#[derive(Copy, Clone)]
enum Hook<'e, 'a> {
    Syscall(&'e syslint_event::Syscall<'a>),
    Exit,
    Alias(syslint_event::Tid),
    Note,
}

impl Dispatch {
    fn new(detectors: &[Box<dyn Detector>]) -> Dispatch {
        let pick = |f: &dyn Fn(&registry::Interest) -> bool| -> Box<[u16]> {
            (0..detectors.len()).filter(|&i| f(&detectors[i].meta().interest)).map(|i| i as u16).collect()
        };
        let mut by_sys: Vec<Box<[u16]>> =
            syslint_event::syscalls::TABLE.iter().map(|&(sys, _, _)| pick(&|it| it.wants(sys))).collect();
        by_sys.push(pick(&|it| it.all_syscalls));
        let exits = (0..detectors.len()).filter(|&i| detectors[i].wants_exits()).map(|i| i as u16).collect();
        Dispatch { by_sys, exits, aliases: pick(&|it| it.aliases), notes: pick(&|it| it.notes) }
    }

    #[inline]
    fn syscall(&self, sys: syslint_event::Sys) -> &[u16] {
        // `Sys` is `repr(u16)` in table order with `Other` last
        let i = (sys as usize).min(self.by_sys.len() - 1);
        &self.by_sys[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{atomic::AtomicU64, Arc};
    use syslint_report::Severity;

    #[test]
    fn findings_so_far_are_asked_of_copies() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../lab/fsync-storm/traces/c-fsync-each.f-tt-T-yy.strace");
        let src = syslint_capture::input::expand_sources(&[path]).expect("lab trace");
        let mut a = Analyzer::default();
        let mut n = 0u64;
        let mut mid = Vec::new();
        syslint_capture::read_strace(&src, Arc::new(AtomicU64::new(0)), |e| {
            a.on_event(e);
            n += 1;
            if n.is_multiple_of(200) {
                mid.push(a.findings_so_far());
            }
        })
        .expect("read");
        let now = a.findings_so_far();
        let report = a.finish(Capture::default());
        // asking along the way changed nothing, and the last answer is the report's
        assert_eq!(now, report.findings.len());
        assert_eq!(report.findings.iter().filter(|f| f.detector == "fsync-storm").count(), 1);
        assert!(mid.first() == Some(&0) && mid.last() == Some(&1), "{mid:?}");
    }

    /// A window cut short by its bound of records is judged at the rate it saw, over the
    /// length it was to have: busy-poll's seconds of spinning, a real trace's, against a
    /// warning threshold three times what the trace holds: info as seen, a warning over ten
    /// times the trace's length (the cost line says why), and the error, at a hundred times,
    /// still out of reach.
    #[test]
    fn a_shortened_window_is_judged_at_its_rate() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../lab/busy-poll/traces/c-poll0.f-tt-T-yy.strace.gz");
        let src = syslint_capture::input::expand_sources(&[path]).expect("lab trace");
        let run = |config: &str, shortened: Option<registry::Shortened>| {
            let table: toml::Table = config.parse().expect("toml");
            let mut a = Analyzer::new(registry::build(&["busy-poll".into()], &[], &table).expect("busy-poll"));
            syslint_capture::read_strace(&src, Arc::new(AtomicU64::new(0)), |e| a.on_event(e)).expect("read");
            let report = a.finish(Captured { shortened, ..Default::default() });
            let f = report.findings.into_iter().find(|f| f.detector == "busy-poll").expect("a busy-poll finding");
            (f, report.capture.window.map(|w| w.duration_s), report.capture.notes)
        };
        let (plain, span, _) = run("", None);
        assert_eq!(plain.severity, Severity::Warning, "{plain:?}");
        let spun = plain.metrics["spin_seconds"].as_f64().expect("seconds spun");
        let span = span.expect("a timed trace");
        let config = format!("[busy-poll]\nwarn_seconds = {}\nerror_seconds = {}", 3.0 * spun, 100.0 * spun);
        let (seen, _, _) = run(&config, None);
        assert_eq!(seen.severity, Severity::Info, "{seen:?}");
        let short = registry::Shortened { seen_s: span, meant_s: 10.0 * span };
        let (judged, _, notes) = run(&config, Some(short));
        assert_eq!(judged.severity, Severity::Warning, "{judged:?}");
        let cost = judged.cost.as_deref().unwrap_or_default();
        assert!(
            cost.contains("warning at the rate seen in the") && cost.contains("(x10.0); info from those calls alone"),
            "{cost}"
        );
        assert!(notes.iter().any(|n| n.contains("ended at its bound of records")), "{notes:?}");
        // the same counts, not rescaled: only the thresholds moved
        assert_eq!(judged.metrics["spin_seconds"], plain.metrics["spin_seconds"]);
        // not shorter than meant: nothing changes
        let (same, _, notes) = run(&config, Some(registry::Shortened { seen_s: span, meant_s: span }));
        assert_eq!(same.severity, Severity::Info);
        assert!(same.cost == seen.cost && notes.is_empty(), "{same:?} {notes:?}");
    }
}
