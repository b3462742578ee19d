//! `fault-signal-loop` (SL028): a thread running into the same memory or arithmetic fault again
//! and again: a SIGSEGV (SIGBUS, SIGILL, SIGFPE) handler that returns to the instruction that
//! faulted without removing the cause, or a fault caught and turned into an exception on every
//! turn of a loop.
//!
//! One predicate decides what a fault is for all three rules ([`fault`]): one of those signals,
//! raised by the thread's own instruction (strace's `si_code` is not `SI_USER`, `SI_TKILL`, a
//! timer's or a queue's), at the address `si_addr` names. A fault *repeats* the thread's previous
//! one when the signal and the address are the same, no thread of the process changed a mapping
//! or a protection (mmap, mprotect, munmap, mremap, madvise, brk) and the thread did not wait
//! (a poll, a sleep, a futex wait) since: a handler that made the page accessible and moved on
//! (a collector's barrier, lazy mapping) faults next at another address, or after such a call,
//! and a thread stopped at a safepoint's protected page waits in its handler. A repeat is *back
//! to back* when the thread made at most [`HANDLER_CALLS`] calls since the previous fault:
//! nothing but the handler ran.
//!
//! Full traces: per thread, faults, repeats, back-to-back repeats and the longest run of one
//! fault; with timestamps, the time between the end of each handler pass (the thread's
//! rt_sigreturn, or the rt_sigprocmask of a siglongjmp) and the next fault is the time the thread
//! spent elsewhere, *quick* within [`QUICK_NS`]. A program is reported from `min_repeats`
//! repeats; a warning when most are back to back and (with timestamps) at least `warn_share` of
//! them quick. Signals sent with kill, timers (SIGALRM, SIGPROF) and a fault handled once stay
//! quiet. Signals come from
//! strace's `--- SIG... ---` lines and from the eBPF capture's signal records alike.

use super::EvidenceBuf;
use crate::host::{Best, Groups, Hosted, Merge, State};
use crate::kit::{Bounded, Metrics, Rekey, Span};
use crate::registry::{Ctx, FinishCtx};
use syslint_event::{Class, Event, EventKind, Sys, Syscall, Tid};
use syslint_report::{Finding, Severity};

crate::detector!("fault_signal_loop", FaultSignalLoop { cfg, remaps: Bounded::new(MAX_PROCESSES) });

/// The detector: its options, and per process that faulted (under its main thread) how many
/// times its mappings or protections changed since, which a thread's next fault compares with
/// the count at its previous one.
#[derive(Clone)]
pub struct FaultSignalLoop {
    cfg: Config,
    remaps: Bounded<Tid, u64>,
}

/// Processes that faulted whose mapping changes are counted (beyond it, a process's faults are
/// not followed: quiet rather than wrong).
const MAX_PROCESSES: usize = 65_536;

/// Measured natively (lab/fault-signal-loop/README.md, `fault bench`): a fault, its signal's
/// delivery, a handler making no call and rt_sigreturn take about 2 us (1.9 to 2.3 us on the
/// lab's VM; 2.7 us with a handler making three pipe calls; 2.2 us per recovered nil
/// dereference in Go).
const FAULT_NS: f64 = 2000.0;

/// Calls a handler pass may make for a repeat to be back to back (libuv's makes four, Go's
/// runtime one).
pub const HANDLER_CALLS: u64 = 16;

/// Calls that change what an address maps to or may do: a fault after one of them is a new one.
const REMAP: &[Sys] = &[Sys::Mmap, Sys::Munmap, Sys::Mprotect, Sys::Mremap, Sys::Madvise, Sys::Brk];

/// The calls that end a handler pass: returning from the handler, or leaving it with
/// siglongjmp (which restores the signal mask).
const PASS_END: &[Sys] = &[Sys::RtSigreturn, Sys::Sigreturn, Sys::RtSigprocmask];

/// A syscall in which a thread may wait (a poll, a sleep, a futex, a wait for a child); an
/// excerpt or a table cannot say which futex calls waited, so every futex call counts there.
pub fn may_wait(sys: Sys) -> bool {
    sys.is(Class::POLL) || (sys.is(Class::WAIT) && sys != Sys::SchedYield)
}

/// A call in which the thread waited or could have: a handler that waits is no loop (a thread
/// stopped at a safepoint waits in its handler). A futex call only when it is a wait.
pub fn waits(sc: &Syscall) -> bool {
    may_wait(sc.sys) && sc.futex().is_none_or(|f| f.cmd == syslint_event::FutexCmd::Wait)
}

/// A fault a thread's own instruction raised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault<'a> {
    /// `SIGSEGV`.
    pub signal: &'a str,
    /// `0x38`, as strace printed `si_addr` (`?` when it did not).
    pub addr: &'a str,
}

impl Fault<'_> {
    /// `SIGSEGV at si_addr=0x38`.
    pub fn describe(&self) -> String {
        format!("{} at si_addr={}", self.signal, self.addr)
    }
}

/// The one predicate of the three rules: signal `name` with strace's `info`
/// (`{si_signo=SIGSEGV, si_code=SEGV_MAPERR, si_addr=0x38}`) is a fault the thread raised itself.
pub fn fault<'a>(name: &'a str, info: &'a str) -> Option<Fault<'a>> {
    if !matches!(name, "SIGSEGV" | "SIGBUS" | "SIGILL" | "SIGFPE") {
        return None;
    }
    let field = |key: &str| {
        let at = info.find(key)? + key.len();
        let rest = &info[at..];
        Some(rest[..rest.find([',', '}']).unwrap_or(rest.len())].trim())
    };
    // sent with kill, tgkill, sigqueue, or by a timer or an AIO completion: not a fault
    if field("si_code=").is_some_and(|c| c.starts_with("SI_") && c != "SI_KERNEL") {
        return None;
    }
    Some(Fault { signal: name, addr: field("si_addr=").filter(|a| !a.is_empty()).unwrap_or("?") })
}

/// A thread's faults.
#[derive(Clone, Default)]
pub struct Thread {
    /// The previous fault: its signal and address.
    last: Option<(String, String)>,
    /// When it came, the thread's call counter and its process's mapping changes then.
    last_ts: Option<i64>,
    last_seq: u64,
    remaps_at: u64,
    /// The thread waited since the previous fault.
    waited: bool,
    /// When the thread's last handler pass ended (its rt_sigreturn or rt_sigprocmask), after
    /// the previous fault.
    pass_end: Option<i64>,
    t: Tally,
    /// Faults in the current run of one fault, and the longest run with its fault.
    run: u64,
    run_is_longest: bool,
    longest: u64,
    longest_fault: String,
    span: Span,
    evidence: EvidenceBuf,
}

/// What a thread's faults and a program's add up to.
#[derive(Clone, Copy, Default)]
pub struct Tally {
    faults: u64,
    repeats: u64,
    back_to_back: u64,
    /// Repeats with a time, those that came within [`QUICK_NS`] of the handler's end, and the
    /// time from the handler's end to the fault summed.
    timed: u64,
    quick: u64,
    outside_ns: u64,
}

crate::merge!(Tally { faults: sum, repeats: sum, back_to_back: sum, timed: sum, quick: sum, outside_ns: sum });

/// The faults of one program.
#[derive(Clone, Default)]
pub struct Program {
    t: Tally,
    threads: u64,
    span: Span,
    /// The longest run of one fault (its length and fault), and the evidence of the thread with
    /// the most repeats.
    longest: Best<String>,
    evidence: Best<EvidenceBuf>,
}

crate::merge!(Program { t: merge, threads: sum, span: merge, longest: merge, evidence: merge });

impl Hosted for FaultSignalLoop {
    type Thread = Thread;
    type Program = Program;
    type Object = ();

    fn on_syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        // no process has faulted (one that did has its count here before any thread state):
        // nothing to look up for the polls, waits and mappings of a trace without faults
        if self.remaps.is_empty() {
            return;
        }
        if REMAP.contains(&sc.sys) {
            // any thread's: the process's mappings are shared (counted from the process's first
            // fault on: a change before it cannot come between two faults)
            if let Some(n) = self.remaps.get_mut(&cx.tgid.main_thread()) {
                *n += 1;
            }
        }
        // only a thread that faulted is followed
        let Some(th) = s.existing() else { return };
        if waits(sc) {
            th.waited = true;
        } else if PASS_END.contains(&sc.sys) {
            th.pass_end = ev.ts_ns.or(th.pass_end);
        }
        if th.t.faults <= 3 {
            // how the first handler passes end, as evidence
            th.evidence.push(ev);
        }
    }

    fn on_note(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event) {
        let EventKind::Signal { name, info } = &ev.kind else { return };
        let Some(f) = fault(name, info) else { return };
        let seq = cx.model.thread_calls(ev.tid);
        // a process beyond those whose changes are counted is not followed: quiet, not wrong
        let Some(&mut remaps) = self.remaps.entry(cx.tgid.main_thread(), || 0) else { return };
        let make = || Thread { evidence: EvidenceBuf::new(EVIDENCE), ..Thread::default() };
        let Some(th) = s.thread_or(make) else { return };
        th.t.faults += 1;
        th.span.add(ev.ts_ns);
        let same = th.last.as_ref().is_some_and(|(sig, addr)| sig == f.signal && addr == f.addr);
        if same && remaps == th.remaps_at && !th.waited {
            th.t.repeats += 1;
            th.run += 1;
            if seq.saturating_sub(th.last_seq) <= HANDLER_CALLS {
                th.t.back_to_back += 1;
            }
            if let (Some(prev), Some(now)) = (th.last_ts, ev.ts_ns) {
                // the time from the end of the handler's pass to this fault was spent elsewhere
                // (all of the time since the previous fault when the pass's end is not known)
                let end = th.pass_end.filter(|e| *e >= prev).unwrap_or(prev);
                let outside = now.saturating_sub(end).max(0) as u64;
                th.t.timed += 1;
                th.t.quick += u64::from(outside <= QUICK_NS);
                th.t.outside_ns += outside;
            }
            if th.run > th.longest {
                th.longest = th.run;
                if !th.run_is_longest {
                    th.run_is_longest = true;
                    th.longest_fault = f.describe();
                }
            }
        } else {
            th.last = Some((f.signal.to_string(), f.addr.to_string()));
            th.run = 1;
            th.run_is_longest = false;
        }
        th.evidence.push(ev);
        th.last_ts = ev.ts_ns;
        th.last_seq = seq;
        th.remaps_at = remaps;
        th.waited = false;
        th.pass_end = None;
    }

    fn end_thread(&mut self, s: &mut State<'_, Self>) {
        let Some(th) = s.take_ended(|th| th.t.repeats > 0) else { return };
        s.program().merge(Program {
            t: th.t,
            threads: 1,
            span: th.span,
            longest: Best::new(th.longest, th.longest_fault),
            evidence: Best::new(th.t.repeats, th.evidence),
        });
    }

    fn keyed(&mut self) -> Vec<&mut dyn Rekey> {
        vec![&mut self.remaps]
    }

    fn report(&mut self, groups: Groups<'_, Program>, cx: &FinishCtx) -> Vec<Finding> {
        let cfg = &self.cfg;
        groups.findings(cx.model, |p| {
            if p.t.repeats < cfg.min_repeats.max(1) {
                return None;
            }
            // the share of the repeats that came right after the handler ended
            let quick = (p.t.timed > 0).then(|| p.t.quick as f64 / p.t.timed as f64);
            let tight = 2 * p.t.back_to_back >= p.t.repeats;
            let severity = Severity::warning_if(tight && quick.is_none_or(|s| s >= cfg.warn_share));
            let outside_us = (p.t.timed > 0).then(|| p.t.outside_ns as f64 / p.t.timed as f64 / 1e3);
            let saved = p.t.repeats as f64 * FAULT_NS * 1e-9;
            let secs = p.span.seconds();
            let rate = (p.span.first.is_some() && secs > 0.0).then(|| p.t.faults as f64 / secs);
            let what = p.longest.get().cloned().unwrap_or_default();
            let mut m = Metrics::new();
            m.count("faults", p.t.faults);
            m.count("repeats", p.t.repeats);
            m.count("back_to_back", p.t.back_to_back);
            m.count("longest_run", p.longest.score);
            m.count("threads", p.threads);
            m.value_opt("faults_per_sec", rate);
            m.value_opt("quick_share", quick);
            m.value_opt("outside_us", outside_us);
            m.value("seconds", saved);
            let per = rate.map(|r| format!(" ({r:.0}/s)")).unwrap_or_default();
            let between = if tight {
                "with nothing but the handler's calls between them"
            } else {
                "with other work between them"
            };
            let message = format!(
                "the same fault, {what}, raised {} times in a row{per} ({} repeated faults in all), {between}: the handler returns to the faulting code (or catches the fault as an exception) instead of removing its cause",
                p.longest.score, p.t.repeats
            );
            let share = match (quick, outside_us) {
                (Some(q), Some(o)) => format!(
                    "; {:.0}% of the faults came within 1 ms of the handler's end ({o:.0} us on average between the two, tracer stops included)",
                    q * 100.0
                ),
                _ => String::new(),
            };
            let cost = format!(
                "about {saved:.4} s natively (about 2 us per fault, signal delivery and return: lab/fault-signal-loop){share}"
            );
            Some(META.finding(severity, message).over(&p.span).metrics(m).evidence(&p.evidence, cx.clock).cost(cost))
        })
    }

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        // per thread, its last fault and the run of repeats that ends there (first signal, last
        // signal, repeats); the longest run of any thread
        let mut last_fault: std::collections::HashMap<Tid, usize> = std::collections::HashMap::new();
        let mut runs: std::collections::HashMap<Tid, (usize, usize, u64)> = std::collections::HashMap::new();
        let mut best: Option<(usize, usize, u64)> = None;
        let mut refault: Option<usize> = None; // a fault right after a handler returned, its pass again
        for (i, sg) in x.signals.iter().enumerate() {
            let Some(f) = fault(&sg.name, &sg.info) else { continue };
            let mine: Vec<usize> = (0..sg.at).filter(|&j| x.calls[j].tid == sg.tid).collect();
            // the same thread's previous fault
            if let Some(pi) = last_fault.insert(sg.tid, i) {
                let p = &x.signals[pi];
                let between: Vec<&crate::basis::Call> =
                    x.calls[p.at..sg.at].iter().filter(|c| c.tid == sg.tid).collect();
                // a mapping changed by any thread of the excerpt (its processes are not known)
                let remapped = x.calls[p.at..sg.at].iter().any(|c| c.is(REMAP));
                let same = fault(&p.name, &p.info) == Some(f);
                if same
                    && between.len() as u64 <= HANDLER_CALLS
                    && !remapped
                    && !between.iter().any(|c| may_wait(c.sys))
                {
                    let run = match runs.get(&sg.tid) {
                        Some(&(first, last, n)) if last == pi => (first, i, n + 1),
                        _ => (pi, i, 1),
                    };
                    runs.insert(sg.tid, run);
                    if best.is_none_or(|b| run.2 > b.2) {
                        best = Some(run);
                    }
                    continue;
                }
            }
            // one fault: the handler's pass before it (ending in rt_sigreturn just before the
            // signal) made the same calls as the pass after it
            let Some(&ret) = mine.last() else { continue };
            if !x.calls[ret].is(&[Sys::RtSigreturn, Sys::Sigreturn]) {
                continue;
            }
            let before: Vec<Sys> = mine[..mine.len() - 1]
                .iter()
                .rev()
                .take_while(|&&j| !x.calls[j].is(PASS_END) && !x.calls[j].is(REMAP))
                .map(|&j| x.calls[j].sys)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let after: Vec<Sys> = x.calls[sg.at..]
                .iter()
                .filter(|c| c.tid == sg.tid)
                .take_while(|c| !c.is(PASS_END))
                .map(|c| c.sys)
                .collect();
            let n = before.len().min(after.len());
            if n >= 2 && before[before.len() - n..] == after[..n] {
                refault.get_or_insert(i);
            }
        }
        if let Some((first, last, n)) = best {
            let f = &x.signals[last];
            let what = fault(&f.name, &f.info).map(|f| f.describe()).unwrap_or_default();
            let (severity, conf) =
                if n >= 2 { (Severity::Warning, Confidence::Medium) } else { (Severity::Info, Confidence::Low) };
            let lines = self::excerpt_lines(x, first, last);
            let pid = Some(f.tid).filter(|t| *t != syslint_event::Tid(0));
            return META
                .finding(severity, format!("the same fault, {what}, raised {} times in a row with only the handler's calls between", n + 1))
                .metrics([("faults", (n + 1).into())])
                .lines(lines)
                .confirm(confirm(pid))
                .in_excerpt(
                    x,
                    conf,
                    &format!("{} deliveries of {what} with at most {HANDLER_CALLS} calls between: a handler returning to the faulting code; the excerpt cannot show how long it goes on", n + 1),
                );
        }
        let Some(i) = refault else { return Vec::new() };
        let sg = &x.signals[i];
        let pid = Some(sg.tid).filter(|t| *t != syslint_event::Tid(0));
        let what = fault(&sg.name, &sg.info).map(|f| f.describe()).unwrap_or_default();
        META.finding(
            Severity::Info,
            format!("{what} raised again right after its handler returned, and the handler made the same calls again"),
        )
        .metrics([("faults", 1u64.into())])
        .lines(self::excerpt_lines(x, i, i))
        .confirm(confirm(pid))
        .in_excerpt(
            x,
            Confidence::Low,
            &format!("one {what}, between two identical handler passes with rt_sigreturn just before it: a handler that returns to the faulting code; one delivery cannot show a loop"),
        )
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, per_second, RowSys, SysRows};
        use syslint_report::Confidence;
        const RET: &[Sys] = &[Sys::RtSigreturn, Sys::Sigreturn];
        let passes = c.calls_of(RET);
        let total = c.total_calls();
        if passes < MIN_TABLE_PASSES || 5 * passes < total {
            return Vec::new();
        }
        // every other call a whole multiple of the handler's returns (within 1%, and a few
        // dozen for the start of a program counted whole): nothing but the handler ran; at
        // least one such call (a handler making no call is a profiler's timer as much as a fault)
        let others: Vec<&syslint_report::CountRow> = c.rows.iter().filter(|r| !RET.contains(&r.sys())).collect();
        let multiple = |n: u64| {
            let k = (n as f64 / passes as f64).round();
            k >= 1.0 && (n as f64 - k * passes as f64).abs() <= 0.01 * passes as f64 + 64.0
        };
        let in_pass: Vec<&&syslint_report::CountRow> = others.iter().filter(|r| multiple(r.calls)).collect();
        let rest: u64 = others.iter().filter(|r| !multiple(r.calls)).map(|r| r.calls).sum();
        // a handler that maps or unprotects a page per pass fixes each fault and moves on; a
        // process that waits (an event loop woken by a timer's signal) is not stuck at a fault
        let fixes = in_pass.iter().any(|r| REMAP.contains(&r.sys()));
        let waited: u64 = c.rows.iter().filter(|r| may_wait(r.sys())).map(|r| r.calls).sum();
        if in_pass.is_empty() || fixes || rest * 100 > total || waited * 100 > passes {
            return Vec::new();
        }
        let failing = in_pass.iter().filter(|r| r.errors > 0 && (r.errors as f64 - passes as f64).abs() <= 0.01 * passes as f64 + 64.0).map(|r| r.name.as_str()).collect::<Vec<_>>();
        let fail = if failing.is_empty() {
            String::new()
        } else {
            format!("; one {} per pass fails", failing.join(" and one "))
        };
        let names: Vec<&str> = in_pass.iter().map(|r| r.name.as_str()).collect();
        let mut m = Metrics::new();
        m.count("passes", passes);
        m.count("all_calls", total);
        META.finding(
            Severity::Info,
            format!(
                "a signal handler returned {passes} times{} and the process made no call outside it: {} in whole multiples of rt_sigreturn{fail}",
                per_second(c, passes, 0),
                names.join(", ")
            ),
        )
        .metrics(m)
        .lines(count_lines(c, RET).into_iter().chain(in_pass.iter().map(|r| {
            let e = if c.errors_known { format!(", {} errors", r.errors) } else { String::new() };
            format!("{}: {} calls{e}", r.name, r.calls)
        })).collect())
        .confirm(confirm(None))
        .in_table(
            c,
            Confidence::Low,
            "the handler's calls come in whole multiples of its returns and nothing else ran, as in a handler returning to a faulting instruction; the table cannot show which signal it was",
        )
    }
}

/// The command that would show the loop: a trace of the process (either backend records the
/// signals), or strace itself watching only the faults and the handlers' returns.
fn confirm(pid: Option<syslint_event::Tid>) -> String {
    let p = pid.map_or("PID".to_string(), |p| p.to_string());
    format!(
        "syslint trace -p {p} --for 10s (or: strace -f -tt -e trace=rt_sigreturn,rt_sigprocmask -e signal=SIGSEGV,SIGBUS,SIGILL,SIGFPE -p {p} for a few seconds): the same fault delivered again and again is the loop"
    )
}

/// The evidence lines of an excerpt's faults `first..=last`: each signal with the calls after
/// it up to the next one (the handler's pass), at most 12 lines.
fn excerpt_lines(x: &crate::basis::Excerpt, first: usize, last: usize) -> Vec<String> {
    let tid = x.signals[first].tid;
    let mut v = Vec::new();
    // the thread's calls up to its next signal after the last fault
    let end = x.signals[last + 1..].iter().find(|s| s.tid == tid).map_or(x.calls.len(), |s| s.at).max(x.signals[last].at);
    // the handler pass before the first fault, when it ended just before it
    let start = x.signals[first].at;
    let before: Vec<usize> = (0..start).rev().filter(|&j| x.calls[j].tid == tid).take(4).collect();
    for &j in before.iter().rev() {
        v.push(x.calls[j].evidence.render(x.clock));
    }
    // the thread's own signals only (another thread's may lie between)
    let mine: Vec<usize> = (first..=last).filter(|&k| x.signals[k].tid == tid).collect();
    let mut next = 0;
    for j in start..end.min(x.calls.len()) {
        while next < mine.len() && x.signals[mine[next]].at == j {
            v.push(x.signals[mine[next]].evidence.render(x.clock));
            next += 1;
        }
        if x.calls[j].tid == tid {
            v.push(x.calls[j].evidence.render(x.clock));
        }
    }
    for &k in &mine[next..] {
        v.push(x.signals[k].evidence.render(x.clock));
    }
    if v.len() > 12 {
        let tail = v.split_off(v.len() - 2);
        v.truncate(10);
        v.push("...".into());
        v.extend(tail);
    }
    v
}

/// A fault this soon after its handler ended came from code that did next to nothing in between
/// (under strace the time includes the tracer's stops, about 100 us each on a slow VM).
const QUICK_NS: u64 = 1_000_000;

/// Handler returns a table needs (a table has no addresses: only the count says it loops).
const MIN_TABLE_PASSES: u64 = 1000;

// The fixture tests are data: fixtures/fault-signal-loop/expect.toml, run by src/check/fixtures.rs.
