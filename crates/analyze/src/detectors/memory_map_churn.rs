//! `memory-map-churn` (SL022): a process gives large blocks of memory back to the kernel and
//! takes them again, request after request: anonymous mmap/munmap of the same big buffer, the
//! heap's break moved up and down (brk), madvise(MADV_DONTNEED) on the same region again.
//!
//! Per process, memory released (a munmap of an anonymous mapping of at least `min_block` bytes
//! that the trace saw made, a brk that shrinks the heap by that much, a madvise release of that
//! much) is kept as a debt; a later mapping or heap growth of at least `min_block` takes memory
//! back against it: a cycle, its bytes churned. A madvise release of a region already released
//! before is a cycle too (the pages were touched and faulted in again in between). Cycles are
//! summed per program.

use super::EvidenceBuf;
use crate::host::{Best, Groups, Hosted, Merge, State};
use crate::kit::{Metrics, Span, Timing};
use crate::registry::{Ctx, FinishCtx};
use syslint_event::{Event, MemKind, Syscall};
use syslint_report::{Finding, Severity};

crate::detector!("memory_map_churn", struct MemoryMapChurn);

/// How memory went back (bits).
const VIA_MUNMAP: u8 = 1;
const VIA_BRK: u8 = 2;
const VIA_MADVISE: u8 = 4;

/// One process's releases and take-backs.
#[derive(Clone, Default)]
pub struct Proc {
    /// The heap's break as last seen (0: unknown).
    brk: u64,
    /// Bytes released and not yet taken back.
    debt: u64,
    /// The size of the last block released.
    last_release: u64,
    c: Churn,
    evidence: EvidenceBuf,
}

/// What a process's releases and take-backs came to, added up per program.
#[derive(Clone, Default)]
pub struct Churn {
    cycles: u64,
    churned: u64,
    maps: u64,
    releases: u64,
    largest: u64,
    via: u8,
    timing: Timing,
    span: Span,
}

crate::merge!(Churn {
    cycles: sum,
    churned: sum,
    maps: sum,
    releases: sum,
    largest: max,
    via: or,
    timing: merge,
    span: merge,
});

/// Cycles of one program.
#[derive(Clone, Default)]
pub struct Group {
    c: Churn,
    /// The evidence of the process that churned most.
    evidence: Best<EvidenceBuf>,
}

crate::merge!(Group { evidence: merge, c: merge });

/// The length kept for a thread stack or a reservation: its release is not counted.
const NOT_MEMORY: u64 = u64::MAX;

/// Marks a madvise-released region's key apart from a mapping's.
const ADVISED: u64 = 1 << 63;

impl MemoryMapChurn {
    /// Region `addr` of the process, taken out (unmapped, or moved by mremap).
    fn take(&mut self, s: &mut State<'_, Self>, addr: u64) -> Option<u64> {
        let l = s.existing_object(addr).copied()?;
        s.end_object(addr, self);
        Some(l)
    }
}

impl Hosted for MemoryMapChurn {
    type Thread = Proc;
    type Program = Group;
    /// A region of the process (its start address): an anonymous mapping of at least
    /// `min_block` the trace saw made -> its length; a madvise release (the start with
    /// [`ADVISED`] set) -> times released.
    type Object = u64;
    const MAX_THREADS: usize = MAX_PROCS;
    const MAX_OBJECTS: usize = MAX_MAPPINGS;
    const PER_PROCESS: bool = true;

    /// A process ended: its cycles join its program's.
    fn end_thread(&mut self, s: &mut State<'_, Self>) {
        let Some(p) = s.take_ended(|p| p.c.cycles > 0) else { return };
        s.program().merge(Group {
            evidence: Best::new(p.c.churned, p.evidence),
            c: p.c,
        });
    }

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        const MIN: u64 = 1 << 20;
        // per thread: the size last released and the break last seen
        let mut last: Vec<(syslint_event::Tid, u64, u64)> = Vec::new();
        let (mut cycles, mut bytes, mut largest) = (0u64, 0u64, 0u64);
        let mut idx = Vec::new();
        for (i, c) in x.calls.iter().enumerate() {
            let Some(op) = c.mem else { continue };
            if c.errno.is_some() {
                continue;
            }
            let j = match last.iter().position(|l| l.0 == c.tid) {
                Some(j) => j,
                None => {
                    last.push((c.tid, 0, 0));
                    last.len() - 1
                }
            };
            let (released, taken) = match op.kind {
                MemKind::Unmap if op.len >= MIN => (op.len, 0),
                MemKind::Map if op.anon && !op.stack && !op.reserve && op.len >= MIN => (0, op.len),
                MemKind::Brk => {
                    let now = c.ret.unwrap_or(0) as u64;
                    let before = std::mem::replace(&mut last[j].2, now);
                    match (before, op.addr) {
                        (0, _) | (_, 0) => continue,
                        (b, _) if b > now && b - now >= MIN => (b - now, 0),
                        (b, _) if now > b && now - b >= MIN => (0, now - b),
                        _ => continue,
                    }
                }
                _ => continue,
            };
            if released > 0 {
                last[j].1 = released;
                idx.push(i);
            } else if taken > 0 {
                let r = last[j].1;
                if r > 0 && taken <= r + 8192 && taken + r / 16 >= r {
                    cycles += 1;
                    bytes += taken;
                    largest = largest.max(taken);
                    idx.push(i);
                }
            }
        }
        if cycles < 3 {
            return Vec::new();
        }
        let mib = largest as f64 / 1_048_576.0;
        META.finding(
            Severity::Info,
            format!("memory returned to the kernel and taken back {cycles} times in the excerpt, in blocks of {mib:.1} MiB"),
        )
        .metrics([("cycles", cycles.into()), ("churned_bytes", bytes.into()), ("block_bytes", largest.into())])
        .lines(x.evidence(&idx, 4))
        .in_excerpt(
            x,
            Confidence::Medium,
            &format!("{cycles} blocks of {mib:.1} MiB released and taken back, each a page fault per 4 KiB to fill again; the excerpt cannot show how often it happens"),
        )
    }

    fn on_syscall(&mut self, s: &mut State<'_, Self>, _cx: &Ctx, ev: &Event, sc: &Syscall) {
        let Some(op) = sc.mem_op() else { return };
        if sc.ret.is_err() || sc.ret.value().is_none() {
            return;
        }
        let min = self.cfg.min_block.max(1);
        if s.thread_or(|| Proc { evidence: EvidenceBuf::new(EVIDENCE), ..Proc::default() }).is_none() {
            return;
        }
        // (bytes taken, bytes released, how)
        let (taken, released, via) = match op.kind {
            // a thread stack (threads come and go: glibc caches stacks and releases their pages
            // with madvise, ordinary) or address space reserved (PROT_NONE: malloc's arenas) is
            // remembered so that its munmap or madvise is not counted
            MemKind::Map if op.anon && op.len >= min && (op.stack || op.reserve) => {
                if let Some(r) = s.object_or(op.addr, u64::default) {
                    *r = NOT_MEMORY;
                }
                return;
            }
            MemKind::Map if op.anon && op.len >= min => {
                if let Some(r) = s.object_or(op.addr, u64::default) {
                    *r = op.len;
                }
                (op.len, 0, 0)
            }
            MemKind::Unmap if op.len >= min => match self.take(s, op.addr) {
                Some(l) if l != NOT_MEMORY => (0, op.len, VIA_MUNMAP),
                _ => return,
            },
            // realloc of a mapped block: followed, not counted (a shrink gives back pages the
            // program never touched: CPython's recv(262144) maps 256 KiB and shrinks it to what
            // arrived)
            MemKind::Remap => {
                if let Some(l) = self.take(s, op.addr) {
                    if let Some(to) = sc.ret.value() {
                        if let Some(r) = s.object_or(to as u64, u64::default) {
                            *r = if l == NOT_MEMORY { l } else { op.new_len };
                        }
                    }
                }
                return;
            }
            MemKind::Release if op.len >= min && s.existing_object(op.addr).copied() == Some(NOT_MEMORY) => return,
            MemKind::Release if op.len >= min => {
                let again = s.object_or(op.addr | ADVISED, u64::default).map(|n| {
                    *n += 1;
                    *n > 1
                });
                let Some(p) = s.existing() else { return };
                p.c.releases += 1;
                p.c.via |= VIA_MADVISE;
                if again == Some(true) {
                    // released before: its pages were touched and faulted in again since
                    p.c.cycles += 1;
                    p.c.churned += op.len;
                    p.c.largest = p.c.largest.max(op.len);
                }
                p.c.timing.add(sc.dur_ns);
                p.c.span.add(ev.ts_ns);
                p.evidence.push(ev);
                return;
            }
            MemKind::Brk => {
                let Some(now) = sc.ret.value().map(|v| v as u64) else { return };
                let Some(p) = s.existing() else { return };
                let before = std::mem::replace(&mut p.brk, now);
                if before == 0 || op.addr == 0 {
                    return;
                }
                if now > before && now - before >= min {
                    (now - before, 0, 0)
                } else if before > now && before - now >= min {
                    (0, before - now, VIA_BRK)
                } else {
                    return;
                }
            }
            _ => return,
        };
        let Some(p) = s.existing() else { return };
        if released > 0 {
            p.debt = p.debt.saturating_add(released);
            p.last_release = released;
            p.c.releases += 1;
            p.c.via |= via;
        }
        if taken > 0 {
            p.c.maps += 1;
            // the size just released again (up to 1/16 smaller, at most two pages larger): a
            // buffer that grows maps a larger block and releases the smaller one each time,
            // which is growth, not churn (and a growth that starts over small after a large
            // release is neither)
            let back = taken.min(p.debt);
            let same = taken <= p.last_release + 8192 && taken + p.last_release / 16 >= p.last_release;
            if back > 0 && same {
                p.debt -= back;
                p.c.cycles += 1;
                p.c.churned += back;
                p.c.largest = p.c.largest.max(taken);
            }
        }
        // evidence and time: the calls of the churn, from the first release on
        if p.c.releases > 0 {
            p.c.timing.add(sc.dur_ns);
            p.c.span.add(ev.ts_ns);
            p.evidence.push(ev);
        }
    }

    fn report(&mut self, groups: Groups<'_, Group>, cx: &FinishCtx) -> Vec<Finding> {
        let cfg = &self.cfg;
        groups.findings(cx.model, |g| {
            if g.c.cycles < cfg.min_cycles.max(1) || g.c.churned < cfg.min_bytes {
                return None;
            }
            let severity = Severity::warning_if(g.c.churned >= cfg.warn_bytes);
            let via: Vec<&str> = [(VIA_MUNMAP, "mmap/munmap"), (VIA_BRK, "brk"), (VIA_MADVISE, "madvise")]
                .iter()
                .filter(|(b, _)| g.c.via & b != 0)
                .map(|(_, n)| *n)
                .collect();
            let via = via.join("+");
            let faults = g.c.churned / 4096;
            let mut m = Metrics::new();
            m.count("cycles", g.c.cycles);
            m.count("churned_bytes", g.c.churned);
            m.count("page_faults_min", faults);
            m.count("block_bytes", g.c.largest);
            m.count("maps", g.c.maps);
            m.count("releases", g.c.releases);
            m.text("via", &via);
            m.value_opt("syscall_seconds", g.c.timing.seconds());
            let mib = |b: u64| b as f64 / 1_048_576.0;
            let message = format!(
                "memory returned to the kernel and taken back {} times ({via}): {:.0} MiB churned in blocks of up to {:.1} MiB",
                g.c.cycles,
                mib(g.c.churned),
                mib(g.c.largest)
            );
            let inside = match g.c.timing.seconds() {
                Some(s) => format!("; {s:.3} s inside the mapping calls ({})", cx.tracer.measured()),
                None => String::new(),
            };
            let cost = format!(
                "at least {faults} page faults to fill the memory again, each page zeroed by the kernel first \
(natively about 2 us per page in the lab, zeroing included: about {:.2} s){inside}",
                faults as f64 * 2e-6
            );
            Some(META.finding(severity, message).over(&g.c.span).metrics(m).evidence(&g.evidence, cx.clock).cost(cost))
        })
    }
}

// The fixture tests are data: fixtures/memory-map-churn/expect.toml, run by src/check/fixtures.rs.
