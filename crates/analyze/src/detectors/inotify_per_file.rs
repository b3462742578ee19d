//! `inotify-per-file` (SL027): a program watching a tree with an inotify watch per file (or per
//! directory of a huge tree): inotify_add_watch by the thousand, each a path lookup, until
//! fs.inotify.max_user_watches is reached (ENOSPC).
//!
//! Per program, inotify_add_watch calls are counted, with those that failed because the path
//! is not a directory (ENOTDIR: a directory watch offered a file, so every entry of the tree is
//! tried) and those that hit the watch limit (ENOSPC). A program is reported from
//! `min_watches` calls, or from one ENOSPC.

use super::EvidenceBuf;
use crate::host::{Best, Groups, Hosted, Merge, State};
use crate::kit::{secs, Metrics, Span, Timing};
use crate::registry::{Ctx, FinishCtx};
use syslint_event::{Event, Sys, Syscall};
use syslint_report::{Finding, Severity};

crate::detector!("inotify_per_file", struct InotifyPerFile);

/// Native cost of one inotify_add_watch on a file of a warm ext4 tree, measured without strace
/// (lab/inotify-per-file/README.md: 4.25 us with the watch made, 3.29 us failing ENOTDIR).
const NATIVE_WATCH_NS: f64 = 4_250.0;

/// Watches of a thread, then of a program.
#[derive(Clone, Default)]
pub struct Watches {
    calls: u64,
    made: u64,
    enotdir: u64,
    enospc: u64,
    threads: u64,
    timing: Timing,
    span: Span,
}

crate::merge!(Watches { calls: sum, made: sum, enotdir: sum, enospc: sum, threads: sum, timing: merge, span: merge });

/// One thread.
#[derive(Clone, Default)]
pub struct Thread {
    w: Watches,
    evidence: EvidenceBuf,
}

/// A program's watches.
#[derive(Clone, Default)]
pub struct Group {
    w: Watches,
    evidence: Best<EvidenceBuf>,
}

crate::merge!(Group { w: merge, evidence: merge });

impl InotifyPerFile {
    /// The seconds a fix saves: the time inside the calls (when every one was timed), else the
    /// calls at their native cost.
    fn seconds(w: &Watches) -> f64 {
        w.timing.seconds().unwrap_or(w.calls as f64 * NATIVE_WATCH_NS / 1e9)
    }
}

impl Hosted for InotifyPerFile {
    type Thread = Thread;
    type Program = Group;
    type Object = ();

    // ---- less than a full trace (issue 14) ----

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        let mut paths: Vec<&str> = Vec::new();
        let (mut calls, mut enotdir, mut enospc) = (0u64, 0u64, 0u64);
        let mut idx = Vec::new();
        for (i, c) in x.calls.iter().enumerate() {
            if c.sys != Sys::InotifyAddWatch {
                continue;
            }
            calls += 1;
            idx.push(i);
            if c.failed("ENOTDIR") {
                enotdir += 1;
            }
            if c.failed("ENOSPC") {
                enospc += 1;
            }
            if let Some(p) = c.watch_path.as_deref() {
                if !paths.contains(&p) {
                    paths.push(p);
                }
            }
        }
        let distinct = paths.len() as u64;
        let lines = x.evidence(&idx, 4);
        let metrics = [("watch_calls", calls.into()), ("paths", distinct.into()), ("enotdir", enotdir.into()), ("enospc", enospc.into())];
        if enospc > 0 {
            let why = format!("inotify_add_watch failed with ENOSPC {enospc} times: fs.inotify.max_user_watches is reached, so the program watches less than it thinks; the excerpt cannot show how many watches it holds");
            return META
                .finding(Severity::Warning, format!("inotify watch limit reached: {enospc} inotify_add_watch failed with ENOSPC"))
                .metrics(metrics)
                .lines(lines)
                .in_excerpt(x, Confidence::Medium, &why);
        }
        if distinct >= 100 {
            let why = format!("{distinct} distinct paths watched in {} calls: a watch per file or per directory of a large tree, each a path lookup", x.calls.len());
            return META
                .finding(Severity::Info, format!("a watch per path: inotify_add_watch on {distinct} distinct paths"))
                .metrics(metrics)
                .lines(lines)
                .in_excerpt(x, Confidence::Medium, &why);
        }
        // an editor watches the files it has open (20 in the lab's near miss): more than that in a
        // few lines is a walk
        if distinct >= 24 || enotdir > 0 {
            let why = if enotdir > 0 {
                format!("{enotdir} inotify_add_watch calls failed with ENOTDIR: a directory watch was offered a file, so the program tries every entry of the tree, each a path lookup; the excerpt cannot show how many")
            } else {
                format!("inotify_add_watch on {distinct} distinct paths: more than an editor watching its open files, but a watcher of a project's directories does this too; the excerpt cannot show how many watches follow")
            };
            return META
                .finding(Severity::Info, format!("inotify watches added path by path: {calls} inotify_add_watch on {distinct} paths ({enotdir} not directories)"))
                .metrics(metrics)
                .lines(lines)
                .in_excerpt(x, Confidence::Low, &why);
        }
        Vec::new()
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, SysRows};
        use syslint_report::Confidence;
        let calls = c.calls_of(&[Sys::InotifyAddWatch]);
        if calls < self.cfg.min_watches.max(1) {
            return Vec::new();
        }
        let errors = if c.errors_known { format!(", {} of them failed (ENOTDIR: files offered as directories; ENOSPC: the watch limit)", c.errors_of(&[Sys::InotifyAddWatch])) } else { String::new() };
        let why = format!("{calls} inotify_add_watch calls{errors}: a watch per file or per directory of a large tree; a table cannot show the paths, nor whether the tree needs them all");
        META.finding(Severity::Info, format!("inotify_add_watch {calls} times: a watch per path"))
            .metrics([("watch_calls", calls.into())])
            .lines(count_lines(c, &[Sys::InotifyAddWatch, Sys::InotifyInit1, Sys::InotifyInit, Sys::Getdents64]))
            .in_table(c, Confidence::Low, &why)
    }

    fn on_syscall(&mut self, s: &mut State<'_, Self>, _cx: &Ctx, ev: &Event, sc: &Syscall) {
        let Some(th) = s.thread_or(|| Thread { evidence: EvidenceBuf::new(EVIDENCE), ..Thread::default() }) else { return };
        let w = &mut th.w;
        w.calls += 1;
        match sc.ret.errno() {
            None => w.made += 1,
            Some("ENOTDIR") => w.enotdir += 1,
            Some("ENOSPC") => w.enospc += 1,
            Some(_) => {}
        }
        w.timing.add(sc.dur_ns);
        w.span.add(ev.ts_ns);
        th.evidence.push(ev);
    }

    fn end_thread(&mut self, s: &mut State<'_, Self>) {
        let Some(mut th) = s.take_ended(|th| th.w.calls > 0) else { return };
        th.w.threads = 1;
        s.program().merge(Group { evidence: Best::new(th.w.calls, th.evidence), w: th.w });
    }

    fn report(&mut self, groups: Groups<'_, Group>, cx: &FinishCtx) -> Vec<Finding> {
        let cfg = &self.cfg;
        groups.findings(cx.model, |g| {
            let w = &g.w;
            if w.calls < cfg.min_watches.max(1) && w.enospc == 0 {
                return None;
            }
            let saved = Self::seconds(w);
            let mut m = Metrics::new();
            m.count("watch_calls", w.calls);
            m.count("watches_made", w.made);
            m.count("enotdir", w.enotdir);
            m.count("enospc", w.enospc);
            m.count("threads", w.threads);
            m.value_opt("syscall_seconds", w.timing.seconds());
            m.value("watch_seconds", saved);
            let mut tail = String::new();
            if w.enotdir > 0 {
                tail.push_str(&format!(", {} of them files offered as directories (ENOTDIR)", w.enotdir));
            }
            if w.enospc > 0 {
                tail.push_str(&format!(", {} refused: the watch limit was reached (ENOSPC)", w.enospc));
            }
            let message = format!("inotify watches added path by path: {} inotify_add_watch calls{tail}", w.calls);
            let inside = match w.timing.seconds() {
                Some(s) => format!("{} inside inotify_add_watch ({})", secs(s), cx.tracer.measured()),
                None => format!("{} calls at about 4 us each natively on a local disk: about {} (time unknown: no -T)", w.calls, secs(saved)),
            };
            let cost = format!(
                "{inside}, a path lookup each (far more on sshfs or NFS), and about 1 KiB of unswappable kernel memory per watch made ({} made)",
                w.made
            );
            let severity = Severity::warning_if(w.calls >= cfg.warn_watches || w.enospc > 0);
            Some(META.finding(severity, message).over(&w.span).metrics(m).evidence(&g.evidence, cx.clock).cost(cost))
        })
    }
}

// The fixture tests are data: fixtures/inotify-per-file/expect.toml, run by src/check/fixtures.rs.
