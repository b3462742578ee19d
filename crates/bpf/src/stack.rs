//! User stacks of sampled calls ([`StackOptions`]): the kernel program copies, for a bounded
//! sample of the traced calls, the user registers and the top of the user stack into a ring
//! buffer of their own (`stack_events`), which [`StackRing`] reads, typically on a thread of
//! its own; unwinding and symbolization are user space's (crate `syslint-stacks`).
//!
//! Sampling, decided in the kernel per thread and syscall: the first [`StackOptions::first`]
//! calls of each [`StackOptions::window`], then one in [`StackOptions::every`]; each sample
//! says how many calls it stands for ([`StackSample::weight`]). tp_btf variant only: the raw_tp
//! fallback (no BTF) sends no stacks.

use std::time::Duration;

use crate::abi;

/// What the kernel program copies for a sampled call's stack, and how often.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StackOptions {
    /// Samples of each thread and syscall taken at the start of each window, as soon as
    /// `spacing` allows.
    pub first: u32,
    /// After those, one call in `every` gets one (0: none)...
    pub every: u32,
    /// ...and after each `cap` such samples in a window, one in twice as many (0: never): a
    /// thread making millions of calls a second costs a few hundred stacks a window.
    pub cap: u32,
    /// The least time between two samples of a thread: a loop's first calls are not all
    /// slowed by a stack copy (microseconds each), which would bend the gaps and rates the
    /// detectors measure. Zero: no limit. Each sample's weight is the calls of its thread and
    /// syscall since the previous one, so shares stay exact whatever is skipped.
    pub spacing: Duration,
    /// The window the `first` calls are counted in.
    pub window: Duration,
    /// Bytes of the user stack copied from the stack pointer upwards (at most 16 KiB): what
    /// `.eh_frame` unwinding can walk. perf's default for `--call-graph dwarf` is 8 KiB.
    pub bytes: u32,
    /// Also the kernel's frame-pointer walk (bpf_get_stack), for code built with frame pointers
    /// whose stack is deeper than the copy.
    pub frame_pointers: bool,
    /// Only these syscall numbers get stacks (None: all).
    pub syscalls: Option<Vec<u32>>,
    /// Size of the stack ring buffer in bytes (a power of two; rounded up).
    pub ring_bytes: u32,
}

impl Default for StackOptions {
    fn default() -> Self {
        StackOptions {
            first: 8,
            every: 1000,
            cap: 64,
            spacing: Duration::from_millis(1),
            window: Duration::from_secs(1),
            bytes: 8192,
            frame_pointers: true,
            syscalls: None,
            ring_bytes: 4 << 20,
        }
    }
}

impl StackOptions {
    /// The `opt_stack_nrs` bitmap the kernel program reads.
    #[cfg(feature = "load")]
    pub(crate) fn nr_bitmap(&self) -> [u64; abi::NR_MAX / 64] {
        match &self.syscalls {
            None => [u64::MAX; abi::NR_MAX / 64],
            Some(list) => {
                let mut m = [0u64; abi::NR_MAX / 64];
                for &nr in list {
                    if let Some(w) = m.get_mut(nr as usize / 64) {
                        *w |= 1 << (nr % 64);
                    }
                }
                m
            }
        }
    }
}

/// Counters of the stack sampling, summed over CPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StackStats {
    /// Calls chosen for a stack.
    pub sampled: u64,
    /// Stack records put in the ring.
    pub sent: u64,
    /// Stack records that did not fit in the ring (or met the per-CPU scratch in use): their
    /// calls have no stack. Never silently: reports say how many.
    pub lost: u64,
    /// Bytes of the records sent.
    pub bytes: u64,
}

/// One sampled call's stack as the kernel copied it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StackSample<'a> {
    pub tgid: u32,
    pub tid: u32,
    /// The syscall number.
    pub nr: u32,
    /// The call's exit time (CLOCK_MONOTONIC ns): its Syscall record's `ts_exit`, or the exit
    /// of one of the calls a Repeat record stands for.
    pub ts_exit: u64,
    /// How many calls of this thread and syscall the sample stands for.
    pub weight: u32,
    /// The address space (an opaque kernel address): a new one after exec.
    pub mm_id: u64,
    /// User registers at the call's return: the instruction after the syscall, the stack
    /// pointer, the frame pointer register.
    pub ip: u64,
    pub sp: u64,
    pub bp: u64,
    /// The kernel's frame-pointer walk (native-endian u64 addresses, the first being `ip`).
    fp: &'a [u8],
    /// The stack bytes from `sp` upwards.
    pub stack: &'a [u8],
    /// The copy stopped at the byte limit: the stack goes on above it.
    pub truncated: bool,
    /// The copy stopped at an unreadable page (normally the stack's top).
    pub fault: bool,
    /// The frame-pointer walk failed (or was not asked for): `fp_ips` is empty.
    pub fp_failed: bool,
}

impl StackSample<'_> {
    /// The kernel's frame-pointer walk: `ip`, then the return addresses it found.
    pub fn fp_ips(&self) -> impl Iterator<Item = u64> + '_ {
        self.fp.chunks_exact(8).map(|c| u64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
    }

    /// The stack's u64 at user address `addr`, when the copy holds it.
    pub fn read_u64(&self, addr: u64) -> Option<u64> {
        let off = usize::try_from(addr.checked_sub(self.sp)?).ok()?;
        let b = self.stack.get(off..off.checked_add(8)?)?;
        Some(u64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    }

    /// Bytes the record took in the ring.
    pub fn record_bytes(&self) -> usize {
        std::mem::size_of::<abi::StackRec>() + abi::STACK_IPS * 8 + self.stack.len()
    }

    /// A copy that owns its bytes (kept while what names it is awaited).
    pub fn to_owned_sample(&self) -> OwnedStackSample {
        OwnedStackSample {
            head: StackSample {
                tgid: self.tgid,
                tid: self.tid,
                nr: self.nr,
                ts_exit: self.ts_exit,
                weight: self.weight,
                mm_id: self.mm_id,
                ip: self.ip,
                sp: self.sp,
                bp: self.bp,
                fp: &[],
                stack: &[],
                truncated: self.truncated,
                fault: self.fault,
                fp_failed: self.fp_failed,
            },
            fp: self.fp.to_vec(),
            stack: self.stack.to_vec(),
        }
    }
}

/// A [`StackSample`] that owns its bytes.
#[derive(Clone, Debug)]
pub struct OwnedStackSample {
    head: StackSample<'static>,
    fp: Vec<u8>,
    stack: Vec<u8>,
}

impl OwnedStackSample {
    pub fn as_sample(&self) -> StackSample<'_> {
        StackSample { fp: &self.fp, stack: &self.stack, ..self.head }
    }
}

/// A stack record from its bytes; None for anything else or a record too short for its header.
pub fn parse_stack(b: &[u8]) -> Option<StackSample<'_>> {
    if *b.first()? != abi::REC_STACK {
        return None;
    }
    let h = abi::read::<abi::StackRec>(b)?;
    let ips = b.get(std::mem::size_of::<abi::StackRec>()..)?;
    let (slots, rest) = ips.split_at_checked(abi::STACK_IPS * 8)?;
    let n = usize::from(h.n_ips).min(abi::STACK_IPS);
    let len = (h.stack_len as usize).min(rest.len());
    Some(StackSample {
        tgid: h.tgid,
        tid: h.tid,
        nr: h.nr,
        ts_exit: h.ts_exit,
        weight: h.weight,
        mm_id: h.mm_id,
        ip: h.ip,
        sp: h.sp,
        bp: h.bp,
        fp: &slots[..n * 8],
        stack: &rest[..len],
        truncated: h.flags & abi::STK_TRUNC != 0,
        fault: h.flags & abi::STK_FAULT != 0,
        fp_failed: h.flags & abi::STK_FP_FAIL != 0,
    })
}

/// An executable file mapping of a process, as the kernel sent it before a thread's first
/// sample: what names the frames of a process gone before its `/proc/PID/maps` could be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelVma {
    pub tgid: u32,
    /// The address space ([`StackSample::mm_id`]).
    pub mm_id: u64,
    pub start: u64,
    pub end: u64,
    /// The offset in the file of `start`, in bytes.
    pub offset: u64,
    pub inode: u64,
    /// The file system's device (major, minor), as `/proc/PID/maps` and mountinfo print it.
    pub dev: (u32, u32),
    /// The file's path from its file system's root (`/usr/lib/x86_64-linux-gnu/libc.so.6` on
    /// the root file system; under another mount, relative to that file system's root). None
    /// when the chain of directories was longer than the kernel copies.
    pub fs_path: Option<String>,
}

/// An SL_REC_VMA record as a [`KernelVma`]; None for anything else (or a short record).
pub fn parse_vma(b: &[u8]) -> Option<KernelVma> {
    if *b.first()? != abi::REC_VMA {
        return None;
    }
    let h = abi::read::<abi::VmaRec>(b)?;
    let depth = usize::from(h.depth).min(abi::VMA_DEPTH);
    // the names as the record's bytes: VMA_NAME each, NUL-terminated
    let at = std::mem::offset_of!(abi::VmaRec, names);
    let name = |i: usize| -> String {
        let n = abi::VMA_NAME;
        let c = b.get(at + i * n..at + (i + 1) * n).unwrap_or(&[]);
        String::from_utf8_lossy(c.split(|&x| x == 0).next().unwrap_or(&[])).into_owned()
    };
    // names[0] is the file's, the last its file system root's ("/")
    let fs_path = (h.complete != 0 && depth > 0).then(|| {
        let parts: Vec<String> = (0..depth - 1).rev().map(name).collect();
        format!("/{}", parts.join("/"))
    });
    Some(KernelVma {
        tgid: h.tgid,
        mm_id: h.mm_id,
        start: h.start,
        end: h.end,
        offset: h.pgoff.saturating_mul(4096),
        inode: h.ino,
        dev: (h.dev >> 20, h.dev & 0xfffff),
        fs_path,
    })
}

/// What the stack ring holds.
#[derive(Debug)]
pub enum StackItem<'a> {
    Sample(StackSample<'a>),
    Vma(KernelVma),
}

/// The stack ring buffer, taken from the [`crate::Probe`] ([`crate::Probe::take_stack_ring`])
/// so a thread of its own can read it: the probe's capture thread never sees stacks.
#[cfg(feature = "load")]
pub struct StackRing {
    ring: crate::ring::Ring,
    // keeps the map's fd (which `ring` polls) open
    _map: libbpf_rs::MapHandle,
}

// SAFETY: the Ring's two mappings belong to this value alone and are only read or written
// through `&mut self`; the fd they come from is owned by `_map`, which moves with them.
#[cfg(feature = "load")]
unsafe impl Send for StackRing {}

#[cfg(feature = "load")]
impl StackRing {
    pub(crate) fn new(map: libbpf_rs::MapHandle) -> Result<StackRing, crate::Error> {
        use libbpf_rs::MapCore;
        use std::os::fd::AsFd;
        let ring = crate::ring::Ring::new(map.as_fd(), map.max_entries())?;
        Ok(StackRing { ring, _map: map })
    }

    /// Waits up to `timeout` for stack records (the kernel wakes this at each thread's first
    /// sample of a syscall, and when 64 KiB are waiting), then hands every one there to `f`,
    /// read in place. Returns how many.
    pub fn poll(&mut self, timeout: Duration, f: &mut dyn FnMut(StackSample<'_>)) -> Result<usize, crate::Error> {
        self.poll_items(timeout, &mut |i| {
            if let StackItem::Sample(s) = i {
                f(s);
            }
        })
    }

    /// [`StackRing::poll`] with the processes' mappings too (each before its thread's first
    /// sample). Returns how many samples.
    pub fn poll_items(&mut self, timeout: Duration, f: &mut dyn FnMut(StackItem<'_>)) -> Result<usize, crate::Error> {
        self.ring.wait(timeout)?;
        let mut n = 0;
        self.ring.read(&mut |b| {
            if let Some(s) = parse_stack(b) {
                f(StackItem::Sample(s));
                n += 1;
            } else if let Some(v) = parse_vma(b) {
                f(StackItem::Vma(v));
            }
        })?;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(n_ips: u16, ips: &[u64], stack: &[u8], flags: u8) -> Vec<u8> {
        let h = abi::StackRec {
            kind: abi::REC_STACK,
            flags,
            n_ips,
            tgid: 5,
            tid: 6,
            nr: 7,
            ts_exit: 99,
            mm_id: 1,
            ip: 0x1000,
            sp: 0x7000,
            bp: 0,
            stack_len: stack.len() as u32,
            weight: 3,
        };
        let mut b = abi::bytes(&h).to_vec();
        let mut slots = [0u64; abi::STACK_IPS];
        slots[..ips.len()].copy_from_slice(ips);
        for s in slots {
            b.extend_from_slice(&s.to_ne_bytes());
        }
        b.extend_from_slice(stack);
        b
    }

    #[test]
    fn a_stack_record_reads_back() {
        let stack: Vec<u8> = (0u64..4).flat_map(|v| (v * 0x10).to_ne_bytes()).collect();
        let b = record(2, &[0x1000, 0x2000, 0x3000], &stack, abi::STK_FAULT);
        let s = parse_stack(&b).expect("a stack record");
        assert_eq!((s.tgid, s.tid, s.nr, s.ts_exit, s.weight), (5, 6, 7, 99, 3));
        // n_ips says how many of the slots are the walk's
        assert_eq!(s.fp_ips().collect::<Vec<_>>(), vec![0x1000, 0x2000]);
        assert_eq!((s.fault, s.truncated, s.fp_failed), (true, false, false));
        assert_eq!(s.read_u64(0x7008), Some(0x10));
        assert_eq!(s.read_u64(0x7018), Some(0x30));
        assert_eq!(s.read_u64(0x7019), None, "past the copy");
        assert_eq!(s.read_u64(0x6ff8), None, "below sp");
        assert_eq!(s.record_bytes(), b.len());
    }

    #[test]
    fn short_or_other_records_are_not_stacks() {
        let b = record(0, &[], &[], 0);
        assert!(parse_stack(&b[..40]).is_none());
        assert!(parse_stack(&b[..70]).is_none(), "cut inside the ip slots");
        assert!(parse_stack(&[abi::REC_SYSCALL; 400]).is_none());
        // a stack_len beyond the record is cut to what is there
        let mut long = record(0, &[], &[1, 2, 3], 0);
        long.truncate(long.len() - 1);
        assert_eq!(parse_stack(&long).map(|s| s.stack.len()), Some(2));
    }

    #[test]
    #[cfg(feature = "load")]
    fn syscall_lists_become_the_kernel_bitmap() {
        assert_eq!(StackOptions::default().nr_bitmap(), [u64::MAX; 8]);
        let o = StackOptions { syscalls: Some(vec![7, 64, 511, 512, 100_000]), ..StackOptions::default() };
        let m = o.nr_bitmap();
        assert_eq!(m[0], 1 << 7);
        assert_eq!(m[1], 1);
        assert_eq!(m[7], 1 << 63);
        assert_eq!(m[2..7], [0; 5]);
    }
}
