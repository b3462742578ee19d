//! `spawn-per-task` (SL016): one process starts the same program again and again, a short-lived
//! child per item or request (fork/clone + execve of the same binary hundreds of times): the
//! cost of starting a process dominates the work.
//!
//! A *task* is a child that a process forked and that ran a program (its last successful
//! execve) and started no process of its own. Tasks are counted per spawning process and
//! binary; a forked copy that runs no program (a shell's subshell for `$(...)`) passes its
//! tasks to its parent. A process with `min_spawns` tasks of one binary is reported, per program.
//!
//! A forked copy that runs no program, starts none and ends is a task too (issue 27: a process
//! per job or connection without exec: RQ's work-horse per job, PostgreSQL's backend per
//! connection, socketserver's ForkingTCPServer): `min_forks` of them from one process, mostly
//! short-lived, are reported, priced by their busy time (fork to exit less the time they spent
//! blocked waiting, plus the parent's fork call).

use super::EvidenceBuf;
use crate::kit::{Bounded, Metrics, Programs, Rekey, Span};
use crate::registry::{Ctx, Detector, FinishCtx, Meta};
use rustc_hash::FxHashMap as HashMap;
use std::hash::Hasher;
use syslint_event::{Class, CloneFlags, Event, Ret, Tgid};
use syslint_report::{Finding, Severity};

crate::detector!(
    "spawn_per_task",
    SpawnPerTask {
        cfg,
        children: Bounded::new(MAX_CHILDREN),
        tasks: Bounded::new(MAX_TASKS),
        programs: Programs::default(),
    },
    unhosted
);

/// A child: who forked it, what it runs.
#[derive(Clone, Default)]
struct Child {
    parent: Option<Tgid>,
    /// When it was forked (the parent's clone), else its first exec.
    start: Option<i64>,
    /// Its last successful execve: the binary's path hash and text, and the line.
    binary: Option<(u64, Box<str>)>,
    exec: Option<super::Evidence>,
    /// It started a process of its own, and one of those ran a program (a compiler driver
    /// running cc1 and as is no task; a helper forking a copy of itself still is).
    spawned: bool,
    spawned_exec: bool,
    /// It ended before its parent's fork returned (strace -f prints the child's lines first):
    /// its end, kept until the parent is known.
    ended: Option<Option<i64>>,
    /// Time it spent in blocking calls (reads, polls, waits), and the parent's fork call.
    blocked_ns: u64,
    fork_ns: u64,
}

/// The key and name of a process's forked copies that run no program.
const FORKED: &str = "(forked copies, no exec)";

/// The tasks of one binary started by one process.
#[derive(Clone)]
struct Tasks {
    group: u32,
    binary: Box<str>,
    spawns: u64,
    timed: u64,
    short: u64,
    /// Forked copies: their busy time (life less blocked time, plus the fork call), summed.
    busy_ns: u64,
    /// Lifetimes: counts per power-of-two bucket of microseconds.
    hist: [u32; 40],
    span: Span,
    evidence: EvidenceBuf,
}

#[derive(Clone)]
pub struct SpawnPerTask {
    cfg: Config,
    children: Bounded<Tgid, Child>,
    tasks: Bounded<(Tgid, u64), Tasks>,
    programs: Programs,
}

fn hash(s: &str) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    h.write(s.as_bytes());
    h.finish()
}

impl SpawnPerTask {
    /// Child `c` ended (or the trace did, `end` then `None`): count it as a task of its spawner.
    fn ended(&mut self, cx_model: &crate::model::Model, c: Tgid, end: Option<i64>) {
        let Some(mut ch) = self.children.remove(&c) else { return };
        // a process that started a program is not a task itself; one that only forked copies
        // of itself (a helper's own worker) is, when it ran a program
        if ch.spawned_exec || (ch.spawned && ch.binary.is_none()) {
            return;
        }
        if ch.parent.is_none() && ch.binary.is_some() && ch.ended.is_none() {
            // the parent's fork has not returned yet: wait for it
            ch.ended = Some(end);
            self.children.insert(c, ch);
            return;
        }
        let Some(mut spawner) = ch.parent else { return };
        // a forked copy that ran no program and started none: a task of its own kind
        let forked = ch.binary.is_none();
        let (bh, binary) = ch.binary.take().unwrap_or_else(|| (hash(FORKED), FORKED.into()));
        // a forked copy that runs no program passes its tasks up
        for _ in 0..MAX_UP {
            if forked {
                break;
            }
            match self.children.get(&spawner) {
                Some(p) if p.binary.is_none() && p.parent.is_some() => spawner = p.parent.unwrap_or(spawner),
                _ => break,
            }
        }
        let life_us = match (ch.start, end) {
            (Some(a), Some(b)) if b >= a => Some(((b - a) / 1000) as u64),
            _ => None,
        };
        let max_us = self.cfg.max_child_ms.saturating_mul(1000);
        let group = self.programs.group(cx_model, spawner.main_thread());
        let make = || Tasks {
            group,
            binary,
            spawns: 0,
            timed: 0,
            short: 0,
            busy_ns: 0,
            hist: [0; 40],
            span: Span::default(),
            evidence: EvidenceBuf::new(EVIDENCE),
        };
        let Some(t) = self.tasks.entry((spawner, bh), make) else { return };
        t.spawns += 1;
        t.span.add(ch.start);
        if let Some(us) = life_us {
            t.timed += 1;
            if us <= max_us {
                t.short += 1;
            }
            if forked {
                t.busy_ns += (us * 1000).saturating_sub(ch.blocked_ns) + ch.fork_ns;
            }
            let b = (64 - us.max(1).leading_zeros() as usize).min(39);
            t.hist[b] += 1;
        }
        if let Some(e) = ch.exec {
            if t.evidence.first.len() < t.evidence.cap {
                t.evidence.first.push(e);
            } else {
                t.evidence.last = Some(e);
            }
        }
    }
}

/// The fix for forked copies per job or connection.
const FORKED_FIX: &str = "keep long-lived workers and hand them the jobs or connections instead of forking a copy for each: a pre-forked or threaded pool (Python: socketserver's ThreadingTCPServer or a fixed pool of worker processes; RQ: `rq worker --worker-class rq.worker.SimpleWorker`, or a worker pool, when jobs need no isolation), a connection pool in front of a server that forks a process per connection (PgBouncer for PostgreSQL), and workers that live for many requests (gunicorn `--max-requests` in the thousands or 0; Apache `MaxConnectionsPerChild 0`)";

/// The median of a log2 histogram of microseconds, in ms (the bucket's middle).
fn median_ms(hist: &[u32; 40], n: u64) -> Option<f64> {
    if n == 0 {
        return None;
    }
    let mut seen = 0u64;
    for (b, &c) in hist.iter().enumerate() {
        seen += u64::from(c);
        if seen * 2 >= n {
            let lo = if b == 0 { 0.0 } else { (1u64 << (b - 1)) as f64 };
            let hi = (1u64 << b) as f64;
            return Some((lo + hi) / 2.0 / 1000.0);
        }
    }
    None
}

impl Detector for SpawnPerTask {
    fn meta(&self) -> &'static Meta {
        &META
    }

    // ---- less than a full trace (issue 14) ----

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        // children started in the excerpt, by whom; what each ran (its last exec); whether it
        // started a process of its own (then it is not a task); whether it was reaped
        struct Kid {
            parent: u32,
            binary: Option<String>,
            spawned: bool,
            reaped: bool,
            idx: usize,
        }
        let mut kids: HashMap<u32, Kid> = HashMap::default();
        for (i, c) in x.calls.iter().enumerate() {
            let t = c.tid.0;
            if let Some(pid) = c.spawned.and_then(|p| u32::try_from(p).ok()) {
                if let Some(k) = kids.get_mut(&t) {
                    k.spawned = true;
                }
                kids.insert(pid, Kid { parent: t, binary: None, spawned: false, reaped: false, idx: i });
            } else if c.sys.is(Class::EXEC) && c.ret == Some(0) {
                if let (Some(k), Some(p)) = (kids.get_mut(&t), c.path.as_deref()) {
                    k.binary = Some(p.to_string());
                }
            } else if c.sys.is(Class::WAIT) {
                if let Some(k) = c.ret.and_then(|r| u32::try_from(r).ok()).and_then(|r| kids.get_mut(&r)) {
                    k.reaped = true;
                }
            }
        }
        // tasks per (spawner, binary); children whose exec is not in the excerpt count when reaped
        let mut by: std::collections::BTreeMap<(u32, Option<String>), Vec<usize>> = Default::default();
        for k in kids.values().filter(|k| !k.spawned && (k.binary.is_some() || k.reaped)) {
            by.entry((k.parent, k.binary.clone())).or_default().push(k.idx);
        }
        let Some(((_, binary), mut idx)) = by.into_iter().max_by_key(|(k, v)| (v.len(), k.1.is_some())) else {
            return Vec::new();
        };
        let n = idx.len() as u64;
        if n < 3 {
            return Vec::new();
        }
        idx.sort_unstable();
        let strong = n >= 10 && binary.is_some();
        let what = binary.clone().unwrap_or_else(|| "a program the excerpt does not show".into());
        let about = syslint_report::Subject::new(syslint_report::SubjectKind::Program).name(what.clone());
        let (conf, why) = if strong {
            (Confidence::Medium, format!("{n} children of one process each running {what} and nothing else"))
        } else if binary.is_some() {
            (Confidence::Low, format!("{n} children running {what}: too few lines to say it goes on"))
        } else {
            (Confidence::Low, format!("{n} children started and reaped; the excerpt does not show what they ran (strace -f would)"))
        };
        META.finding(
            Severity::warning_if(strong),
            format!("a process per task: {n} children started{} by one process in {} calls", binary.as_deref().map(|b| format!(" to run {b}")).unwrap_or_default(), x.calls.len()),
        )
        .about(what, about)
        .metrics([("tasks", n.into())])
        .lines(x.evidence(&idx, 4))
        .in_excerpt(x, conf, &why)
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, per_second, SysRows};
        use syslint_event::Sys;
        use syslint_report::Confidence;
        let execs = c.calls_of(Class::EXEC).saturating_sub(c.errors_of(Class::EXEC));
        let spawns = c.calls_of(Class::SPAWN);
        let waits = c.calls_of(&[Sys::Wait4, Sys::Waitid, Sys::Waitpid]);
        // children reaped by a wait: processes, not threads (a thread is joined on a futex, so
        // a JVM's or a pool's thread creations have no waits beside them)
        if waits * 2 < spawns {
            return Vec::new();
        }
        // a child per exec (processes started to run one program each), or far more children
        // than execs: forked copies of the parent, one per job (a shell's `$(...)` subshells,
        // a forking server), with or without a program run by some of them
        let per_exec = execs >= self.cfg.min_spawns && spawns * 2 >= execs && spawns <= execs * 2;
        let copies = spawns >= self.cfg.min_spawns && spawns > execs * 2;
        if !per_exec && !copies {
            return Vec::new();
        }
        let lines = count_lines(c, &[Sys::Execve, Sys::Clone, Sys::Clone3, Sys::Fork, Sys::Vfork, Sys::Wait4, Sys::ExitGroup]);
        let metrics = [("execs", execs.into()), ("spawns", spawns.into()), ("waits", waits.into())];
        if per_exec {
            let rate = per_second(c, execs, 1);
            return META
                .finding(
                    Severity::Info,
                    format!("processes started one per task: {execs} execs{rate}, {spawns} forks/clones, {waits} waits"),
                )
                .metrics(metrics)
                .lines(lines)
                .in_table(
                    c,
                    Confidence::Low,
                    &format!("{execs} successful execs with as many forks and waits; a table cannot name the binaries, nor tell one program started per item from a build running many tools once"),
                );
        }
        let rate = per_second(c, spawns, 1);
        META.finding(
            Severity::Info,
            format!("processes started one per task: {spawns} forks{rate} and {waits} waits, only {execs} execs (forked copies, most running no program)"),
        )
        .metrics(metrics)
        .lines(lines)
        .in_table(
            c,
            Confidence::Low,
            &format!("{spawns} forks with as many waits: short-lived children (a shell's subshells, a process forked per job); a table cannot show what they did, nor how long each lived"),
        )
    }

    fn on_syscall(&mut self, cx: &Ctx, ev: &Event, sc: &syslint_event::Syscall) {
        if !sc.sys.is(Class::SPAWN) && !sc.sys.is(Class::EXEC) {
            // a child waiting (for a client, a lock, its own children) is not working
            if let (Some(d), false) = (sc.dur_ns, self.children.is_empty()) {
                if let Some(c) = self.children.get_mut(&cx.tgid) {
                    c.blocked_ns += d;
                }
            }
            return;
        }
        let Ret::Ok { val, .. } = sc.ret else { return };
        if sc.sys.is(Class::SPAWN) {
            if sc.clone_flags().is_some_and(|f| f.contains(CloneFlags::THREAD)) || val <= 0 {
                return;
            }
            let child = Tgid(val as u32);
            if let Some(me) = self.children.get_mut(&cx.tgid) {
                me.spawned = true;
            }
            let mut done = None;
            let mut ran = false;
            if let Some(c) = self.children.entry(child, Child::default) {
                // its exec came before the fork returned (strace -f prints it first)
                ran = c.binary.is_some();
                c.parent = Some(cx.tgid);
                c.fork_ns = sc.dur_ns.unwrap_or(0);
                // the fork shows a forked copy; a child that runs a program shows its exec
                if c.exec.is_none() {
                    c.exec = Some(super::Evidence::of(ev));
                }
                c.start = match (c.start, ev.ts_ns) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                done = c.ended;
            }
            if ran {
                if let Some(me) = self.children.get_mut(&cx.tgid) {
                    me.spawned_exec = true;
                }
            }
            if let Some(end) = done {
                self.ended(cx.model, child, end);
            }
            return;
        }
        // a successful exec: the program this child runs now, and its parent started a program
        let Some(path) = sc.path() else { return };
        self.programs.forget(cx.model, ev.tid);
        if let Some(p) = self.children.get(&cx.tgid).and_then(|c| c.parent) {
            if let Some(pc) = self.children.get_mut(&p) {
                pc.spawned_exec = true;
            }
        }
        if let Some(c) = self.children.entry(cx.tgid, Child::default) {
            if c.start.is_none() {
                c.start = ev.ts_ns;
            }
            c.binary = Some((hash(&path), path.as_ref().into()));
            c.exec = Some(super::Evidence::of(ev));
        }
    }

    fn on_exit(&mut self, cx: &Ctx, ev: &Event) {
        if ev.tid.leads(cx.tgid) {
            self.ended(cx.model, cx.tgid, ev.ts_ns);
        }
    }

    fn keyed(&mut self) -> Vec<&mut dyn Rekey> {
        vec![&mut self.children, &mut self.programs]
    }

    fn stretch(&mut self, by: f64) {
        crate::registry::Stretch::stretch(&mut self.cfg, by);
    }
    fn finish(&mut self, cx: &FinishCtx) -> Vec<Finding> {
        // children still running: tasks without a known end
        let open: Vec<Tgid> = self.children.keys().copied().collect();
        for c in open {
            if self.children.get(&c).is_some_and(|ch| ch.binary.is_some()) {
                self.ended(cx.model, c, None);
            }
        }
        let min = self.cfg.min_spawns.max(2);
        // per program: its (spawner, binary) task lists that qualify
        let mut per_group: HashMap<u32, Vec<(Tgid, Tasks)>> = HashMap::default();
        for ((spawner, _), t) in self.tasks.drain() {
            let short_enough = t.timed == 0 || t.short * 2 >= t.timed;
            let least = if &*t.binary == FORKED { self.cfg.min_forks.max(2) } else { min };
            if t.spawns >= least && short_enough {
                per_group.entry(t.group).or_default().push((spawner, t));
            }
        }
        let mut groups: Vec<(u32, Vec<(Tgid, Tasks)>)> = per_group.into_iter().collect();
        groups.sort_by_key(|(g, _)| *g);
        let mut out = Vec::new();
        for (g, mut list) in groups {
            // the top binary: most tasks over the program's processes
            let mut by_bin: HashMap<&str, u64> = HashMap::default();
            for (_, t) in &list {
                *by_bin.entry(&t.binary).or_default() += t.spawns;
            }
            let (top_bin, top_n) =
                by_bin.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map(|(b, n)| (b.to_string(), *n)).unwrap_or_default();
            let binaries = by_bin.len();
            list.sort_by_key(|(_, t)| std::cmp::Reverse(t.spawns));
            let spawns_all: u64 = list.iter().map(|(_, t)| t.spawns).sum();
            let mut spawners: Vec<Tgid> = list.iter().map(|(s, _)| *s).collect();
            spawners.sort();
            spawners.dedup();
            for s in &spawners {
                self.programs.count(g, *s);
            }
            let top: Vec<&Tasks> = list.iter().filter(|(_, t)| *t.binary == *top_bin).map(|(_, t)| t).collect();
            let largest = top.iter().map(|t| t.spawns).max().unwrap_or(0);
            let (mut timed, mut short, mut hist, mut span) = (0, 0, [0u32; 40], Span::default());
            let mut busy_ns = 0u64;
            for t in &top {
                timed += t.timed;
                short += t.short;
                busy_ns += t.busy_ns;
                for (h, x) in hist.iter_mut().zip(t.hist.iter()) {
                    *h += x;
                }
                span.merge(&t.span);
            }
            let forked = top_bin == FORKED;
            // forked copies: a warning when their busy time is measured (the cost rule then
            // keeps it only when that is a material share of the trace); helpers: by count
            let severity = match forked {
                true if timed > 0 => Severity::Warning,
                true => Severity::Info,
                false if largest >= self.cfg.warn_spawns => Severity::Warning,
                false => Severity::Info,
            };
            let mut m = Metrics::new();
            m.count("spawns", top_n);
            m.text("binary", &top_bin);
            m.count("binaries", binaries);
            m.count("spawns_all", spawns_all);
            m.count("spawners", spawners.len());
            let median = median_ms(&hist, timed);
            if timed > 0 {
                m.count("short_children", short);
                m.value_opt("median_child_ms", median);
            }
            let secs = span.seconds();
            if secs > 0.0 {
                m.value("spawns_per_sec", top_n as f64 / secs);
            }
            let life = match median {
                Some(ms) => format!(", each living about {ms:.1} ms"),
                None => String::new(),
            };
            if forked && timed > 0 {
                m.value("forked_busy_s", busy_ns as f64 / 1e9);
            }
            let comm = spawners.first().and_then(|s| cx.model.comm(s.main_thread())).unwrap_or("the program");
            let message = if forked {
                format!("{top_n} short-lived forked copies of {comm} (no exec){life}: a process per job or connection")
            } else {
                format!("{top_n} short-lived processes of {top_bin} started one after another{life}: a process per item")
            };
            let cost = if forked {
                match (timed > 0, median) {
                    (true, Some(ms)) => format!(
                        "{} busy in {top_n} forked copies (fork to exit less the time they waited, plus the fork calls; their start-up and their work, at most what a kept worker saves), median life {ms:.1} ms, {}",
                        crate::kit::secs(busy_ns as f64 / 1e9),
                        cx.tracer.measured()
                    ),
                    _ => format!("{top_n} forks and exits; their time is unknown: no timestamps"),
                }
            } else { format!(
                "{top_n} process starts (fork, execve, dynamic loading, exit; natively about 0.5-4 ms each, so \
about {:.0}-{:.0} ms) for work that usually takes microseconds in-process{}",
                top_n as f64 * 0.5,
                top_n as f64 * 4.0,
                match median {
                    Some(ms) => format!("; median child life {ms:.1} ms, {}", cx.tracer.measured()),
                    None => "; child lifetimes unknown: no timestamps".to_string(),
                }
            ) };
            out.push(
                META.finding(severity, message)
                    .about_program(&self.programs, cx.model, g)
                    .over(&span)
                    .metrics(m)
                    .evidence(&top.first().map(|t| &t.evidence), cx.clock)
                    .cost(cost)
                    .fix(if forked { FORKED_FIX } else { META.fix() })
                    .advice(forked.then_some("spawn-per-task/forked"))
                    .build(),
            );
        }
        out
    }
}

// The fixture tests are data: fixtures/spawn-per-task/expect.toml, run by src/check/fixtures.rs.
