//! `reopen-churn` (SL015): a process opens the same file again and again, each time after it
//! closed the previous fd of it (open, read or write, close; and again): a config, a /proc or
//! /sys file, a certificate bundle, a log file appended to per request.
//!
//! Per process and file: an open is a *reopen* when the process had opened the file before and
//! holds no fd of it any more. A file is hot in a process once it was reopened `hot_reopens`
//! times; the reopens of hot files are summed per program. Opens of a file by many processes
//! (the loader's /etc/ld.so.cache in every child) are one per process and never count.

use super::EvidenceBuf;
use crate::host::{Capped, Few, Groups, Hosted, Merge, State};
use crate::kit::{Metrics, Span, Timing};
use crate::registry::{Ctx, FinishCtx};
use rustc_hash::FxHashMap as HashMap;
use syslint_event::{Class, Event, OpenFlags, Ret, Sys, Syscall, Tgid};
use syslint_report::{Finding, Severity};

crate::detector!("reopen_churn", struct ReopenChurn);

/// One file in one process.
#[derive(Clone)]
struct File {
    opens: u64,
    reopens: u64,
    /// Fds of it open now.
    open_now: u32,
    bytes_reread: u64,
    /// An fd of it was flushed: opened for durability, not to read it again.
    synced: bool,
    timing: Timing,
    /// When the open fd of a reopen was opened (timestamps), and the time reopened fds were
    /// held open: reading the file again and doing the work with it.
    reopened_at: Option<i64>,
    held_ns: u64,
    /// Bytes sendfile copied from a reopen's fd to a socket: the file served, not read.
    sendfiled: u64,
    span: Span,
    evidence: EvidenceBuf,
}

#[derive(Clone, Default)]
pub struct Proc {
    /// Target id (the model's) -> the file.
    files: HashMap<u32, File>,
    /// Fd -> target id, for the fds of followed files open now.
    fds: HashMap<i32, u32>,
    /// Bytes the process sent to sockets (and sendfile's).
    sent: u64,
}

/// A hot file of a program, summed over its processes.
#[derive(Clone, Default)]
struct GroupFile {
    reopens: u64,
    opens: u64,
    evidence: Option<EvidenceBuf>,
}

crate::merge!(GroupFile { reopens: sum, opens: sum, evidence: first });

#[derive(Clone, Default)]
pub struct Group {
    reopens: u64,
    opens: u64,
    bytes_reread: u64,
    /// Of those, bytes of processes that sent at least half as much to sockets: served.
    bytes_served: u64,
    /// Reopens of files sent with sendfile from the reopened fd (a static server's page).
    sendfiled_reopens: u64,
    timing: Timing,
    held_ns: u64,
    span: Span,
    files: GroupFiles,
    tgids: Few<Tgid, MAX_TGIDS>,
}

crate::merge!(Group {
    reopens: sum,
    opens: sum,
    bytes_reread: sum,
    bytes_served: sum,
    sendfiled_reopens: sum,
    timing: merge,
    held_ns: sum,
    span: merge,
    files: merge,
    tgids: merge,
});

/// A program's hot files by target id ([`MAX_GROUP_FILES`] at most), each with the evidence
/// seen first.
type GroupFiles = Capped<u32, GroupFile, MAX_GROUP_FILES>;

impl ReopenChurn {
    fn opened(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall, fd: i32) {
        // a directory opened for a listing is a walk, not a file re-read
        if sc.open_flags().is_some_and(|f| f.contains(OpenFlags::DIRECTORY)) {
            return;
        }
        let Some(target) = cx.model.lookup_fd(ev.tid, fd).map(|t| t.id) else { return };
        let Some(p) = s.thread() else { return };
        if p.files.len() >= MAX_FILES && !p.files.contains_key(&target) {
            return;
        }
        let f = p.files.entry(target).or_insert_with(|| File {
            opens: 0,
            reopens: 0,
            open_now: 0,
            bytes_reread: 0,
            synced: false,
            timing: Timing::default(),
            reopened_at: None,
            held_ns: 0,
            sendfiled: 0,
            span: Span::default(),
            evidence: EvidenceBuf::new(EVIDENCE),
        });
        if f.opens > 0 && f.open_now == 0 {
            f.reopens += 1;
            f.timing.add(sc.dur_ns);
            f.reopened_at = ev.ts_ns;
            f.span.add(ev.ts_ns);
            f.evidence.push(ev);
        }
        f.opens += 1;
        f.open_now += 1;
        // a number reused without a close seen (closed by exec, dup2): the old file lets go
        if let Some(old) = p.fds.insert(fd, target) {
            if old != target {
                if let Some(o) = p.files.get_mut(&old) {
                    o.open_now = o.open_now.saturating_sub(1);
                }
            }
        }
    }
}

impl Hosted for ReopenChurn {
    type Thread = Proc;
    type Program = Group;
    type Object = ();
    const MAX_THREADS: usize = MAX_PROCS;
    const PER_PROCESS: bool = true;
    /// A process that runs another program starts afresh in it.
    const EXEC_ENDS_THREAD: bool = true;

    /// A process ended or ran another program: its hot files join its program's.
    fn end_thread(&mut self, s: &mut State<'_, Self>) {
        let Some(p) = s.existing().map(std::mem::take) else { return };
        let hot = self.cfg.hot_reopens.max(1);
        let mut g = Group::default();
        let reread: u64 = p.files.values().filter(|f| f.reopens >= hot && !f.synced).map(|f| f.bytes_reread).sum();
        // served: what the process sent is about what it read again (at least half of it, and
        // the reread at least a quarter of what was sent); /etc/hosts read per request by a
        // program sending 8 KiB responses is reread, not served (issue 27)
        if reread > 0 && p.sent.saturating_mul(2) >= reread && reread.saturating_mul(4) >= p.sent {
            g.bytes_served += reread;
        }
        let mut files = GroupFiles::default();
        for (target, f) in p.files {
            if f.reopens < hot || f.synced {
                continue;
            }
            g.reopens += f.reopens;
            g.opens += f.opens;
            g.bytes_reread += f.bytes_reread;
            g.timing.merge(f.timing);
            g.held_ns += f.held_ns;
            if f.sendfiled > 0 {
                g.sendfiled_reopens += f.reopens;
            }
            g.span.merge(&f.span);
            files.0.insert(target, GroupFile { reopens: f.reopens, opens: f.opens, evidence: Some(f.evidence) });
        }
        if files.0.is_empty() {
            return;
        }
        g.files = files;
        g.tgids = Few(vec![s.tgid()]);
        s.program().merge(g);
    }

    // ---- less than a full trace (issue 14) ----

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        // per (thread, path): the successful opens of a file; a name unlinked in between is a
        // new file, an fd that is fsynced is durability (fsync-storm's), a directory is listed
        let mut opens: std::collections::BTreeMap<(u32, String), Vec<usize>> = Default::default();
        let mut fd_path: HashMap<(u32, i32), String> = HashMap::default();
        let mut excluded: std::collections::BTreeSet<(u32, String)> = Default::default();
        let mut churn_calls = 0u64;
        for (i, c) in x.calls.iter().enumerate() {
            let t = c.tid.0;
            if c.sys.is(Class::OPEN) && !c.dir_open {
                let (Some(p), Some(fd)) = (c.path.as_deref().filter(|p| !p.is_empty()), c.ret) else { continue };
                let key = c.target.clone().filter(|t| t.starts_with('/')).unwrap_or_else(|| p.to_string());
                churn_calls += 1;
                fd_path.insert((t, fd as i32), key.clone());
                opens.entry((t, key)).or_default().push(i);
            } else if matches!(c.sys, Sys::Unlink | Sys::Unlinkat | Sys::Rename | Sys::Renameat | Sys::Renameat2) {
                if let Some(p) = c.path.as_deref() {
                    excluded.insert((t, p.to_string()));
                }
            } else if matches!(c.sys, Sys::Fsync | Sys::Fdatasync) {
                if let Some(p) = c.fd.and_then(|fd| fd_path.get(&(t, fd))) {
                    excluded.insert((t, p.clone()));
                }
            } else if c.sys == Sys::Close && c.fd.is_some_and(|fd| fd_path.contains_key(&(t, fd))) {
                churn_calls += 1;
            }
        }
        let hot: Vec<(String, Vec<usize>)> = opens
            .into_iter()
            .filter(|(k, v)| v.len() >= 3 && !excluded.contains(k) && !excluded.iter().any(|(t, p)| *t == k.0 && k.1.ends_with(p.as_str())))
            .map(|((_, p), v)| (p, v))
            .collect();
        let reopens: u64 = hot.iter().map(|(_, v)| v.len() as u64 - 1).sum();
        let n = x.calls.len() as u64;
        if reopens < 2 {
            return Vec::new();
        }
        let share = churn_calls as f64 / n.max(1) as f64;
        // the cost is in how many reopens over time, which an excerpt cannot show (the
        // full-trace rule warns from `warn_reopens`): info, at medium when the shape is clear
        let strong = reopens >= 8 && share >= self.cfg.warn_share_of_calls;
        let Some((top, idx)) = hot.iter().max_by_key(|(_, v)| v.len()) else { return Vec::new() };
        let about = syslint_report::Subject::new(syslint_report::SubjectKind::File).name(top.clone());
        let conf = Confidence::medium_if(strong);
        let why = if strong {
            format!("{reopens} opens of files already opened and closed, opens and closes {:.0}% of the calls", share * 100.0)
        } else {
            format!("{reopens} opens of files already opened: too few lines to say it goes on")
        };
        META.finding(
            Severity::Info,
            format!("the same file opened again and again: {top} opened {} times in {n} calls ({reopens} reopens of {} files)", idx.len(), hot.len()),
        )
        .about(top, about)
        .metrics([
            ("reopens", reopens.into()),
            ("files", (hot.len() as u64).into()),
            ("opens_and_closes", churn_calls.into()),
        ])
        .lines(x.evidence(idx, 4))
        .in_excerpt(x, conf, &why)
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, per_second, SysRows, OPENS};
        use syslint_report::Confidence;
        let opens = c.calls_of(OPENS);
        let failed = c.errors_of(OPENS);
        let ok = opens.saturating_sub(failed);
        let closes = c.calls_of(&[Sys::Close]);
        let reads = c.calls_of(&[Sys::Read, Sys::Pread64, Sys::Write]);
        // opened, used and closed again, in the thousands, nearly all opens succeeding
        if ok < self.cfg.min_reopens || failed * 10 > opens || closes < ok * 9 / 10 || closes > ok * 2 || reads < ok / 2 {
            return Vec::new();
        }
        let rate = per_second(c, ok, 0);
        META.finding(
            Severity::Info,
            format!("files opened and closed again and again: {ok} successful opens{rate}, {closes} closes, {reads} reads and writes"),
        )
        .metrics([("opens", ok.into()), ("closes", closes.into())])
        .lines(count_lines(c, &[OPENS, &[Sys::Close, Sys::Read, Sys::Pread64, Sys::Write]].concat()))
        .in_table(
            c,
            Confidence::Low,
            &format!("{ok} opens with about as many closes and reads: a table cannot tell one file reopened from many files opened once"),
        )
    }

    fn on_syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        let Ret::Ok { val, .. } = sc.ret else { return };
        if sc.sys.is(Class::OPEN) {
            if let Ok(fd) = i32::try_from(val) {
                self.opened(s, cx, ev, sc, fd);
            }
            return;
        }
        let Some(p) = s.existing() else { return };
        if matches!(sc.sys, Sys::Unlink | Sys::Unlinkat) {
            if let Some(path) = sc.unlink_path() {
                removed(cx, p, &path);
            }
            return;
        }
        let Some(fd) = sc.fd_num() else { return };
        if sc.sys.is(Class::WRITE) {
            let to_socket = sc.sys == Sys::Sendfile
                || sc.sys == Sys::Sendfile64
                || cx.target.is_some_and(|t| t.kind.is_socket());
            if to_socket {
                p.sent = p.sent.saturating_add(u64::try_from(val).unwrap_or(0));
            }
            if let Some(t) = sc.sendfile_in_fd().and_then(|i| p.fds.get(&i)) {
                if let Some(f) = p.files.get_mut(t) {
                    if f.reopens > 0 {
                        f.sendfiled = f.sendfiled.saturating_add(u64::try_from(val).unwrap_or(0));
                    }
                }
            }
            return;
        }
        if matches!(sc.sys, Sys::Fsync | Sys::Fdatasync) {
            if let Some(f) = p.fds.get(&fd).and_then(|t| p.files.get_mut(t)) {
                f.synced = true;
            }
            return;
        }
        if sc.sys == Sys::Close {
            if let Some(t) = cx.closed_fd(sc).and_then(|fd| p.fds.remove(&fd)) {
                if let Some(f) = p.files.get_mut(&t) {
                    f.open_now = f.open_now.saturating_sub(1);
                    if let (Some(a), Some(b), 0) = (f.reopened_at, ev.ts_ns, f.open_now) {
                        f.held_ns = f.held_ns.saturating_add(u64::try_from(b - a).unwrap_or(0));
                        f.reopened_at = None;
                    }
                }
            }
            return;
        }
        // a read: bytes of a file read again (by a reopen's fd)
        let Some(t) = p.fds.get(&fd) else { return };
        if let Some(f) = p.files.get_mut(t) {
            if f.reopens > 0 {
                f.bytes_reread += u64::try_from(val).unwrap_or(0);
            }
        }
    }

    fn report(&mut self, groups: Groups<'_, Group>, cx: &FinishCtx) -> Vec<Finding> {
        let mut calls_of: HashMap<Tgid, u64> = HashMap::default();
        for p in cx.model.procs.iter().filter(|p| !p.absorbed) {
            let n: u64 = p.tasks.iter().filter_map(|&t| cx.model.tasks.get(t)).map(|t| t.calls).sum();
            *calls_of.entry(p.pid).or_default() += n;
        }
        groups.findings(cx.model, |g| {
            let unserved = g.bytes_reread - g.bytes_served;
            if g.reopens == 0 || (g.reopens < self.cfg.min_reopens && unserved < self.cfg.min_bytes_reread) {
                return None;
            }
            let calls: u64 = g.tgids.0.iter().filter_map(|t| calls_of.get(t)).sum();
            // an open and a close per open of the hot files
            let churn_calls = 2 * g.opens;
            let share = churn_calls as f64 / calls.max(churn_calls).max(1) as f64;
            // a file server opening the requested file per request reads it to send it: the
            // bytes are its work, and the opens are what open_file_cache-like caches save
            // (read and sent, or sent with sendfile from the fd without a read: Apache's
            // prefork and event MPMs open the page per request; an open is microseconds)
            let served = (g.bytes_served * 2 >= g.bytes_reread && g.bytes_reread > 0)
                || (g.bytes_reread == 0 && g.sendfiled_reopens * 2 >= g.reopens);
            let severity = if served {
                Severity::Info
            } else {
                Severity::warning_if(
                    (g.reopens >= self.cfg.warn_reopens && share >= self.cfg.warn_share_of_calls)
                        || g.bytes_reread >= self.cfg.warn_bytes_reread,
                )
            };
            let mut files: Vec<(&u32, &GroupFile)> = g.files.0.iter().collect();
            files.sort_by(|a, b| b.1.reopens.cmp(&a.1.reopens).then(a.0.cmp(b.0)));
            let name = |t: u32| cx.model.target(t).map_or_else(|| "?".to_string(), |v| v.display.to_string());
            let top: Vec<String> = files.iter().take(5).map(|(t, _)| name(**t)).collect();
            let (top_id, top_file) = files[0];
            let mut m = Metrics::new();
            m.count("reopens", g.reopens);
            m.count("opens", g.opens);
            m.count("hot_files", g.files.0.len());
            m.count("bytes_reread", g.bytes_reread);
            m.count("bytes_served", g.bytes_served);
            m.json("top_files", serde_json::Value::from(top.clone()));
            m.count("top_file_reopens", top_file.reopens);
            m.value("share_of_calls", share);
            let span = g.span.seconds();
            if span > 0.0 {
                m.value("reopens_per_sec", g.reopens as f64 / span);
            }
            m.value_opt("seconds", g.timing.seconds());
            // the opens, and the time the reopened file was held open: read again and worked on
            // (a file served per request is held open to send it, and one not read again was
            // held for something else: only their opens would be saved)
            let reworked = g.bytes_reread > 0 && !served;
            let redone = g.timing.seconds().map(|s| if reworked { s + g.held_ns as f64 / 1e9 } else { s });
            m.value_opt("redone_s", redone);
            let files_txt = if g.files.0.len() == 1 { "1 file".to_string() } else { format!("{} files", g.files.0.len()) };
            let message = format!(
                "{} reopens of {files_txt} after closing them ({} of {}), {} read again{}",
                g.reopens,
                top_file.reopens,
                name(*top_id),
                human_bytes(g.bytes_reread),
                if served { " and sent to sockets (a file served per request)" } else { "" }
            );
            let time = match (g.timing.seconds(), redone) {
                (Some(s), Some(r)) if reworked => {
                    format!("{s:.3} s inside the opens and {:.3} s with the files open again, {}", r - s, cx.tracer.measured())
                }
                (Some(s), _) => format!("{s:.3} s inside the opens, {}", cx.tracer.measured()),
                (None, _) => "time unknown: no -T".to_string(),
            };
            let cost = format!(
                "{} open/close pairs of files the process had had open before ({time}; natively a few us \
each, so about {:.1}-{:.1} ms), plus the work done again with what was read each time ({} read again: \
parsing it is usually the larger part)",
                g.reopens,
                g.reopens as f64 * 2e-3,
                g.reopens as f64 * 5e-3,
                human_bytes(g.bytes_reread)
            );
            Some(
                META.finding(severity, message)
                    .over(&g.span)
                    .metrics(m)
                    .evidence(&top_file.evidence, cx.clock)
                    .cost(cost),
            )
        })
    }
}

/// `path` was removed: the file of that name the process opened is gone, and opening the name
/// again makes a new file (a journal created and deleted per transaction), not a reopen.
fn removed(cx: &Ctx, p: &mut Proc, path: &str) {
    for (&t, f) in &mut p.files {
        let Some(v) = cx.model.target(t) else { continue };
        let d = v.display;
        let same = d == path
            || (d.len() > path.len() && d.ends_with(path) && d.as_bytes()[d.len() - path.len() - 1] == b'/')
            || (path.len() > d.len() && path.ends_with(d) && path.as_bytes()[path.len() - d.len() - 1] == b'/');
        if same {
            f.opens = 0;
        }
    }
}

/// `812 B`, `3.4 KiB`, `216.5 MiB`.
fn human_bytes(b: u64) -> String {
    match b {
        0..=1023 => format!("{b} B"),
        1024..=1_048_575 => format!("{:.1} KiB", b as f64 / 1024.0),
        _ => format!("{:.1} MiB", b as f64 / 1_048_576.0),
    }
}

// The fixture tests are data: fixtures/reopen-churn/expect.toml, run by src/check/fixtures.rs.
