//! `madvise-storm` (SL024): an allocator giving freed memory back to the kernel with
//! madvise(MADV_DONTNEED/MADV_FREE) operation after operation, and faulting it in again when
//! the next operation touches it.
//!
//! Per thread, madvise releases smaller than memory-map-churn's `min_block` (larger blocks
//! released and taken back are that detector's) are counted with the thread's share of its
//! calls between its first and last release; a release of a range the process released before
//! counts its pages as faulted in again (the range was given back, touched and given back once
//! more). Summed per program; a program is reported from `min_releases` releases making
//! `min_share` of its releasing threads' calls. A few large releases at the end of a phase are
//! not a storm.

use crate::host::{Groups, Hosted, Merge, RepeatTotals, Repeats, State};
use crate::kit::Metrics;
use crate::registry::{Ctx, FinishCtx};
use syslint_event::{Event, MemKind, Sys, Syscall};
use syslint_report::{Finding, Severity};

crate::detector!("madvise_storm", struct MadviseStorm);

/// Releases a thread needs to count toward `min_releases` (see `end_thread`).
const MIN_THREAD_RELEASES: u64 = 20;

/// Measured natively (lab/madvise-storm/README.md, `storm bench`): a madvise(MADV_DONTNEED)
/// costs about 1 us, plus about 0.4 us per resident page it frees; each page given back and
/// touched again costs about 3 us more (the fault, the page zeroed; 2.5 to 2.9 us on the lab's
/// VM when idle, up to 5 us when loaded).
const CALL_NS: f64 = 1_000.0;
const FREE_PAGE_NS: f64 = 400.0;
const REFAULT_PAGE_NS: f64 = 3_000.0;
const PAGE: u64 = 4096;

/// Releases at least this large are memory-map-churn's (a large block released and taken back
/// is its pattern, with its own cost): one cost, one owner.
fn owned_by_memory_map_churn(len: u64) -> bool {
    len >= super::memory_map_churn::Config::default().min_block
}

/// A thread's releases.
#[derive(Clone, Default)]
pub struct Thread {
    r: Repeats,
    pages: u64,
    /// Pages of ranges the process had released before.
    again_pages: u64,
}

/// The releases of one program.
#[derive(Clone, Default)]
pub struct Program {
    r: RepeatTotals,
    pages: u64,
    again_pages: u64,
}

crate::merge!(Program { r: merge, pages: sum, again_pages: sum });

impl Hosted for MadviseStorm {
    type Thread = Thread;
    type Program = Program;
    /// A range of the process released before (its start address).
    type Object = ();

    fn on_syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        let Some(op) = sc.mem_op() else { return };
        if op.kind != MemKind::Release || sc.ret.is_err() || op.len == 0 || owned_by_memory_map_churn(op.len) {
            return;
        }
        let again = s.existing_object(op.addr).is_some();
        if !again {
            // remembered so that its next release counts as memory faulted in again (when the
            // bound is reached, later ranges are not remembered: fewer re-faults, never more)
            let _ = s.object_or(op.addr, || ());
        }
        let seq = cx.model.thread_calls(ev.tid);
        let Some(th) = s.thread_or(|| Thread { r: Repeats::new(seq, EVIDENCE), ..Thread::default() }) else { return };
        let pages = op.len.div_ceil(PAGE);
        th.r.add(seq, ev, sc);
        th.pages += pages;
        if again {
            th.again_pages += pages;
        }
    }

    fn end_thread(&mut self, s: &mut State<'_, Self>) {
        let Some(th) = s.take_ended(|th| th.r.calls > 0) else { return };
        // a storm is one thread releasing again and again: threads with a few releases (an
        // exit, a phase end) count toward the share but not toward `min_releases`
        s.program().merge(Program { r: RepeatTotals::of(th.r, MIN_THREAD_RELEASES), pages: th.pages, again_pages: th.again_pages });
    }

    fn report(&mut self, groups: Groups<'_, Program>, cx: &FinishCtx) -> Vec<Finding> {
        let cfg = &self.cfg;
        groups.findings(cx.model, |p| {
            let share = p.r.share();
            if p.r.storm_calls < cfg.min_releases.max(1) || share < cfg.min_share {
                return None;
            }
            let severity = Severity::warning_if(share >= cfg.warn_share);
            let native_calls = p.r.calls as f64 * CALL_NS + p.pages as f64 * FREE_PAGE_NS;
            let inside = p.r.timing.seconds();
            let refault_s = p.again_pages as f64 * REFAULT_PAGE_NS * 1e-9;
            let secs = p.r.span.seconds();
            // an estimate never claims more than the time the releases spanned
            let mut saved = inside.unwrap_or(native_calls * 1e-9) + refault_s;
            if p.r.span.first.is_some() && secs > 0.0 {
                saved = saved.min(secs);
            }
            let rate = p.r.rate();
            let mut m = Metrics::new();
            m.count("releases", p.r.calls);
            m.count("pages_released", p.pages);
            m.count("pages_released_again", p.again_pages);
            m.value("share_of_calls", share);
            m.count("threads", p.r.threads);
            m.value_opt("releases_per_sec", rate);
            m.value_opt("syscall_seconds", inside);
            m.value("seconds", saved);
            let per = rate.map(|r| format!(", {r:.0}/s")).unwrap_or_default();
            let avg_kib = p.pages as f64 * 4.0 / p.r.calls as f64;
            let message = format!(
                "memory given back to the kernel with madvise {} times ({:.0} KiB on average{per}), {:.0}% of the calls of the threads that did it",
                p.r.calls,
                avg_kib,
                share * 100.0
            );
            let calls = match inside {
                Some(s) => format!("{s:.3} s inside the madvise calls ({})", cx.tracer.measured()),
                None => format!(
                    "about {:.3} s inside the madvise calls (natively about 1 us each plus 0.4 us per page freed; no -T)",
                    native_calls * 1e-9
                ),
            };
            let cost = format!(
                "{calls}; {} pages of ranges given back before were faulted in and zeroed again, about 3 us each natively: {:.3} s; about {:.3} s in all",
                p.again_pages, refault_s, saved
            );
            Some(META.finding(severity, message).over(&p.r.span).metrics(m).evidence(&p.r.evidence, cx.clock).cost(cost))
        })
    }

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        let mut idx = Vec::new();
        let mut starts: Vec<u64> = Vec::new();
        let mut again = 0u64;
        for (i, c) in x.calls.iter().enumerate() {
            let Some(op) = c.mem else { continue };
            if op.kind != MemKind::Release || c.errno.is_some() || op.len == 0 || owned_by_memory_map_churn(op.len) {
                continue;
            }
            if starts.contains(&op.addr) {
                again += 1;
            } else {
                starts.push(op.addr);
            }
            idx.push(i);
        }
        let n = idx.len() as u64;
        let all = x.calls.len() as u64;
        // most of the lines are releases, and most of those hit ranges released earlier in the
        // lines: an allocator purging the memory each operation uses
        let (severity, conf) = if n >= 20 && 2 * n >= all && 2 * again >= n {
            (Severity::Warning, Confidence::Medium)
        } else if n >= 8 && 3 * n >= all && again >= 2 {
            (Severity::Info, Confidence::Low)
        } else {
            return Vec::new();
        };
        META.finding(
            severity,
            format!("memory given back to the kernel with madvise {n} times in {all} calls of the excerpt, {again} of them ranges given back before"),
        )
        .metrics([("releases", n.into()), ("releases_again", again.into()), ("calls", all.into())])
        .lines(x.evidence(&idx, 4))
        .in_excerpt(
            x,
            conf,
            &format!("{n} madvise releases in {all} calls, {again} of ranges released before: each page given back and touched again is a page fault and a page zeroed; the excerpt cannot show how often it happens"),
        )
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::TableShare;
        const MADVISE: &[Sys] = &[Sys::Madvise];
        let Some(t) = TableShare::of(c, MADVISE) else { return Vec::new() };
        let (calls, share) = (t.calls, t.share);
        if calls < self.cfg.min_releases.max(1) {
            return Vec::new();
        }
        let top = c.rows.iter().map(|r| r.calls).max().unwrap_or(0) == calls;
        if share < self.cfg.min_share || !(top || share >= self.cfg.warn_share) {
            return Vec::new();
        }
        let why = format!(
            "madvise is {:.0}% of the calls{}: an allocator giving memory back at this rate faults it in again when it is used; the table cannot show the advice (MADV_DONTNEED, MADV_FREE or another) nor the ranges",
            share * 100.0,
            if top { " and the most called syscall" } else { "" }
        );
        // `seconds`: what the table measured inside madvise; the re-faults after it are in no row
        t.finding(&META, c, MADVISE, "releases", share >= self.cfg.warn_share, &why)
    }
}

// The fixture tests are data: fixtures/madvise-storm/expect.toml, run by src/check/fixtures.rs.
