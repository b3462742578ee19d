//! `clock-syscalls` (SL011): clock reads (`clock_gettime`, `gettimeofday`, `time`) that reach
//! the kernel as system calls. On x86_64 (and aarch64, and ARM32 since Linux 4.1) the vDSO answers
//! them in user space, so a program that makes them as system calls at a high rate either runs
//! where the vDSO cannot serve them (a clocksource other than tsc, some sandboxes and emulators,
//! an old kernel) or bypasses it (`syscall(SYS_clock_gettime)`), or reads CPU-time clocks, which
//! only the kernel can read.
//!
//! Counted per thread (with the thread's share of its syscalls that are clock reads), summed per
//! program.

use crate::host::{Groups, Hosted, Merge, RepeatTotals, Repeats, State};
use crate::kit::Metrics;
use crate::registry::{Ctx, FinishCtx};
use syslint_event::typed::CLOCK_NAMES;
use syslint_event::{Event, Sys, Syscall, Tid};
use syslint_report::{Finding, Severity};

crate::detector!("clock_syscalls", struct ClockSyscalls);

/// Whether the vDSO serves a clock (x86_64, aarch64: the clocks of the kernel's vdso
/// implementation; CPU-time clocks, alarm clocks and clock fds always enter the kernel).
fn vdso_serves(id: i64) -> bool {
    matches!(id, 0 | 1 | 4 | 5 | 6 | 7 | 11)
}

/// A thread's clock reads.
#[derive(Clone, Default)]
pub struct Thread {
    r: Repeats,
    /// Reads of clocks the vDSO answers (the rest read CPU-time clocks).
    vdso: u64,
    /// Clocks read (bit i: clock id i; bit 12: gettimeofday; 13: time; 14: CPU clocks of a pid).
    clocks: u16,
}

/// The clock reads of one program.
#[derive(Clone, Default)]
pub struct Group {
    r: RepeatTotals,
    vdso: u64,
    clocks: u16,
}

crate::merge!(Group { r: merge, vdso: sum, clocks: or });

impl Group {
    /// Reads of CPU-time clocks.
    fn cpu(&self) -> u64 {
        self.r.calls - self.vdso
    }
}

/// The names of the clocks in a `clocks` bit set, for the message.
fn clock_names(bits: u16) -> Vec<String> {
    let mut v = Vec::new();
    for (i, n) in CLOCK_NAMES.iter().enumerate() {
        if bits & (1 << i) != 0 {
            v.push(format!("clock_gettime({n})"));
        }
    }
    if bits & (1 << 14) != 0 {
        v.push("clock_gettime(a pid's or thread's CPU clock)".into());
    }
    if bits & (1 << 12) != 0 {
        v.push("gettimeofday".into());
    }
    if bits & (1 << 13) != 0 {
        v.push("time".into());
    }
    v
}

/// The clock reads, as the excerpt and counts rules name them.
const CLOCKS: &[Sys] = &[Sys::ClockGettime, Sys::ClockGettime64, Sys::Gettimeofday, Sys::Time];

impl Hosted for ClockSyscalls {
    type Thread = Thread;
    type Program = Group;
    type Object = ();

    // ---- less than a full trace (issue 14) ----

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        // per thread: reads of clocks the vDSO serves, of CPU-time clocks, and all calls
        let mut by: std::collections::BTreeMap<Tid, (u64, u64, u64, Vec<usize>)> = Default::default();
        for (i, c) in x.calls.iter().enumerate() {
            let t = by.entry(c.tid).or_default();
            t.2 += 1;
            if !c.is(CLOCKS) {
                continue;
            }
            if (c.sys != Sys::ClockGettime && c.sys != Sys::ClockGettime64) || c.clock.is_some_and(vdso_serves) {
                t.0 += 1;
            } else {
                t.1 += 1;
            }
            t.3.push(i);
        }
        let Some((_, (vdso, cpu, calls, idx))) = by.into_iter().max_by_key(|(_, t)| t.0 + t.1) else { return Vec::new() };
        let reads = vdso + cpu;
        // an event loop reads the clock once per wake-up: only a thread that does little else;
        // 10 to 19 reads that are nearly all its calls are named at low
        let short = reads < 20;
        if reads < 10 || reads * 2 < calls || (short && reads * 4 < calls * 3) {
            return Vec::new();
        }
        let served = vdso * 2 >= reads && !short;
        let (conf, why) = if short {
            (Confidence::Low, format!("{reads} clock reads in a row as system calls: too few lines to say how often"))
        } else if served {
            (Confidence::Medium, format!("{vdso} reads of clocks the vDSO serves appear as system calls, half or more of the thread's calls"))
        } else {
            (Confidence::Low, format!("{cpu} reads of CPU-time clocks, which always need the kernel: a cost only at a high rate, which the excerpt cannot show"))
        };
        META.finding(
            Severity::warning_if(served),
            format!("clock reads reach the kernel: {reads} of {calls} calls ({vdso} of clocks the vDSO serves, {cpu} of CPU-time clocks)"),
        )
        .about_the_thread()
        .metrics([("calls", reads.into()), ("vdso_clock_calls", vdso.into()), ("cpu_clock_calls", cpu.into())])
        .lines(x.evidence(&idx, 4))
        .in_excerpt(x, conf, &why)
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, per_second, SysRows};
        use syslint_report::Confidence;
        let reads = c.calls_of(CLOCKS);
        let total = c.total_calls();
        if reads < self.cfg.min_calls || (reads as f64) < self.cfg.warn_share * total as f64 {
            return Vec::new();
        }
        let warn = reads >= self.cfg.warn_calls;
        let rate = per_second(c, reads, 0);
        META.finding(
            Severity::warning_if(warn),
            format!("clock reads reach the kernel: {reads} of {total} calls{rate}"),
        )
        .metrics([("calls", reads.into()), ("all_calls", total.into())])
        .lines(count_lines(c, CLOCKS))
        .in_table(
            c,
            Confidence::Low,
            &format!("{reads} clock reads counted as system calls, {:.0}% of all calls; the table cannot show which clocks (CPU-time clocks always need the kernel; the others should not)", reads as f64 * 100.0 / total.max(1) as f64),
        )
    }

    fn on_syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        let (bit, vdso) = match sc.sys {
            Sys::Gettimeofday => (12, true),
            Sys::Time => (13, true),
            _ => match sc.clock_id() {
                Some(id) if (0..12).contains(&id) => (id as u16, vdso_serves(id)),
                Some(_) => (14, false),
                None => return,
            },
        };
        let seq = cx.model.thread_calls(ev.tid);
        let Some(th) = s.thread_or(|| Thread { r: Repeats::new(seq, EVIDENCE), ..Thread::default() }) else { return };
        th.r.add(seq, ev, sc);
        th.vdso += u64::from(vdso);
        th.clocks |= 1 << bit;
    }

    fn end_thread(&mut self, s: &mut State<'_, Self>) {
        let Some(th) = s.take_ended(|t| t.r.calls > 0) else { return };
        s.program().merge(Group { r: RepeatTotals::of(th.r, 0), vdso: th.vdso, clocks: th.clocks });
    }

    fn report(&mut self, groups: Groups<'_, Group>, cx: &FinishCtx) -> Vec<Finding> {
        let cfg = &self.cfg;
        groups.findings(cx.model, |g| {
            let calls = g.r.calls;
            if calls == 0 || calls < cfg.min_calls {
                return None;
            }
            let share = g.r.share();
            let severity = Severity::warning_if(g.vdso >= cfg.warn_calls && share >= cfg.warn_share);
            let rate = g.r.rate();
            let mut m = Metrics::new();
            m.count("calls", calls);
            m.count("vdso_clock_calls", g.vdso);
            m.count("cpu_clock_calls", g.cpu());
            m.value("share_of_calls", share);
            m.count("threads", g.r.threads);
            m.value_opt("calls_per_sec", rate);
            m.value_opt("seconds", g.r.timing.seconds());
            let names = clock_names(g.clocks).join(", ");
            let which = match (g.vdso, g.cpu()) {
                (_, 0) => "clocks the vDSO answers in user space".to_string(),
                (0, _) => "CPU-time clocks, which only the kernel can read".to_string(),
                (v, c) => format!("{v} of clocks the vDSO answers, {c} of CPU-time clocks"),
            };
            let per = rate.map(|r| format!(", {r:.0}/s")).unwrap_or_default();
            let message = format!(
                "{calls} clock reads entered the kernel ({names}{per}; {which}), {:.0}% of the calls of the threads that made them",
                share * 100.0
            );
            let inside = match g.r.timing.seconds() {
                Some(s) => format!("{s:.3} s inside them ({})", cx.tracer.measured()),
                None => "time inside them unknown: no -T".to_string(),
            };
            let cost = if g.vdso > 0 {
                format!(
                    "{inside}; through the vDSO the {} reads would cost about 25 ns each instead of 250 ns (tsc) to \
several us (hpet, acpi_pm): about {:.1} ms saved here with tsc",
                    g.vdso,
                    g.vdso as f64 * 0.225e-3
                )
            } else {
                format!("{inside}; a CPU-time clock read is a system call (about 250 ns) wherever it runs: read it less often")
            };
            // CPU-time clocks have no vDSO path: advice about the clocksource and libc would
            // send the reader after a cause that is not there
            let fix = if g.vdso == 0 { CPU_CLOCK_FIX } else { META.fix() };
            Some(
                META.finding(severity, message)
                    .over(&g.r.span)
                    .metrics(m)
                    .evidence(&g.r.evidence, cx.clock)
                    .cost(cost)
                    .fix(fix),
            )
        })
    }
}

/// The fix when every read was of a CPU-time clock.
const CPU_CLOCK_FIX: &str = "read the CPU-time clock less often: CLOCK_THREAD_CPUTIME_ID and \
CLOCK_PROCESS_CPUTIME_ID (Python's time.process_time() and time.thread_time()) have no vDSO path \
on any clocksource, so each read is a system call; sample them per batch or per event-loop turn, \
not per item, or use CLOCK_MONOTONIC (answered in user space) where elapsed time is what is \
measured";

#[cfg(test)]
mod tests {
    // The fixture tests are data: fixtures/clock-syscalls/expect.toml, run by src/check/fixtures.rs.
    use super::*;

    #[test]
    fn clocks_the_vdso_serves() {
        for id in [0, 1, 4, 5, 6, 7, 11] {
            assert!(vdso_serves(id), "{}", CLOCK_NAMES[id as usize]);
        }
        for id in [2, 3, 8, 9, 10, -9878, -9874] {
            assert!(!vdso_serves(id), "{id}");
        }
    }
}
