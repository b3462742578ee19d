//! syslint's eBPF capture backend: a kernel program that records the syscalls of chosen
//! processes (and their children and threads) into a ring buffer, and this loader.
//!
//! ```no_run
//! use std::time::Duration;
//! use syslint_bpf::{Options, Probe, Record};
//!
//! let mut probe = Probe::load(&Options::default())?;
//! let mut child = probe.spawn(&["ls".into(), "/".into()])?;
//! let mut on_record = |r: Record<'_>| println!("{r:?}");
//! while child.try_wait().map_err(syslint_bpf::Error::Io)?.is_none() {
//!     probe.poll(Duration::from_millis(100), &mut on_record)?;
//! }
//! probe.poll(Duration::ZERO, &mut on_record)?;
//! probe.flush_pending(&mut on_record)?;
//! # Ok::<(), syslint_bpf::Error>(())
//! ```
//!
//! # Records
//! Per thread, records arrive in the order the thread did things; across threads they are in
//! ring-buffer order (roughly, not strictly, time order: sort by timestamps if it matters).
//! - [`Record::Syscall`]: one call, sent at its exit (`ts_exit`), with up to two pieces of
//!   user memory (`data1`, `data2`) as the capture table (`src/caps.rs`) says. A call the thread
//!   never returned from (exit_group, or killed while blocked) comes with `unfinished` set when
//!   the thread ends. With [`Options::in_flight`] (attaching), a call a thread was already in
//!   when tracing began comes at its return with `began_before` set.
//! - [`Record::Repeat`]: in-kernel coalescing. "The last `period` Syscall records of this thread
//!   happened `count` more times", from `first_ts` (entry of the first repetition) to `last_ts`
//!   (exit of the last); `dur_sum_ns[i]` is the total duration of the calls in position `i` of
//!   the repetition (the older repeated record first; period 1 uses `[0]` only), so the two
//!   calls of an alternation keep their own durations. Period 1: `A A A A` arrives as
//!   `A, Repeat{1, 3}`. Period 2: `A B A B A B` arrives as `A, B, Repeat{2, 2}`. So a program
//!   making exactly N identical calls yields 1 Syscall plus Repeats whose counts sum to N - 1.
//!   Identical means same number, six arguments and return value and equal captured bytes
//!   (at most 16: timeouts, epoll_event, pipe fds); calls carrying payloads or paths are never
//!   coalesced. A Repeat is sent when the run breaks, when the thread ends, after 65536
//!   repetitions, or 100 ms after the run's last report; [`Probe::flush_pending`] drains the rest.
//! - [`Record::Fork`] is sent from inside the parent's clone, so it precedes the parent's clone
//!   Syscall record, and may follow records of the child. [`Record::Exec`] is sent inside
//!   execve (before its Syscall record). [`Record::Exit`] is each thread's last record.
//! - [`Record::Signal`]: a signal the thread is about to handle (or die of), from the
//!   `signal_deliver` tracepoint, before the handler's first call (tp_btf variant only).
//!
//! # Cost
//! `cargo run --release -p syslint-bpf --example overhead` (2,000,000 getppid, median of 7, on
//! the 2-core development VM, kernel 6.18): untraced 184 ns/call; any process while a probe is
//! attached but not tracing it 396 (the sys_enter/sys_exit hooks and one filter lookup);
//! summary-only 543; streaming with coalescing 599 (78 records for the whole run); streaming
//! without coalescing 800 (2,000,043 records, none lost with the default 16 MiB ring). The VM
//! is shared and noisy: a later run at load average 3.8 gave minima of 168, 364, 501, 513 and
//! 623 ns/call for the same five cases.
//!
//! The agent's `Counter` (one sys_exit hook, no durations), measured by the same example in
//! a later session (2026-12-01, same VM, slower that day): untraced 253 ns/call; any process
//! while the capture program is attached 488; while the counter is attached 358; counted by
//! the counter 417; counted by the capture program in summary-only 707; streaming 782.
//!
//! `cargo run --release -p syslint-bpf --example sockbench` runs an nginx-shaped loopback loop
//! (accept4, recvfrom, writev, epoll, openat, ... 19 calls per iteration) and reads the kernel's
//! per-program statistics. Medians of 7 interleaved runs, same VM: sl_sys_enter about 220 ns
//! per traced call in either mode; sl_sys_exit 140 ns summary-only and 390 ns with full detail
//! (480 before the ring was asked how full it is only every 16 KiB per thread and the socket
//! test used plain BTF loads). What remains is mostly one `bpf_probe_read_user` per captured
//! buffer (about 100 ns each on this VM) and reserving and committing the record.
//!
//! # Deviations from the first sketch of this API
//! - [`Options`] has `Default` and one more field, `force_no_btf`, to exercise the fallback.
//! - [`Error`] has `Io` (waiting on a child) besides the four planned kinds; `Spawn` carries the
//!   program and the `io::Error`.
//! - [`Data`] has `fault` (the pointer could not be read), [`Record::Syscall`] has `unfinished`.
//! - [`Probe::summary`] counts per syscall over all traced processes (not per process).
//!
//! # Limits
//! x86_64 syscall numbers only (32-bit compat processes' numbers are not translated). A thread
//! already blocked in a syscall when [`Probe::follow`] attaches is seen from its next call.
//! Capacity: 16384 traced processes, 32768 traced threads (a thread beyond that is counted in
//! [`Lost::syscalls`] call by call), 256 execve calls in flight at once (beyond, the path is
//! missing). Kernel memory: the ring plus about 16 MiB of maps (mostly the thread states). On kernels without BTF
//! (`raw_tp` fallback) children are added when clone returns in the parent (a child can run a
//! little before), a process's end is seen only through exit/exit_group (one killed by a
//! signal stays in the filter; its pid, if reused, would be traced), and socket payloads of
//! read/write/readv/writev are not captured (no socket test there).

mod abi;
#[cfg(feature = "load")]
mod caps;
#[cfg(feature = "load")]
mod counter;
#[cfg(feature = "load")]
mod probe;
mod record;
mod ring;
#[cfg(feature = "load")]
mod spawn;
mod stack;

#[cfg(feature = "load")]
pub use counter::Counter;
#[cfg(feature = "load")]
pub use probe::Probe;
pub use ring::{frames, ChunkError};
#[cfg(feature = "load")]
pub use stack::StackRing;
pub use stack::{
    parse_stack, parse_vma, KernelVma, OwnedStackSample, StackItem, StackOptions, StackSample, StackStats,
};

/// The records in a stretch [`Probe::poll_copy`] appended, in order, to `f`. Damage (which a
/// stretch copied whole cannot have) ends the walk with an error after the whole records.
pub fn parse_chunk(chunk: &[u8], f: &mut dyn FnMut(Record<'_>)) -> Result<u64, ChunkError> {
    let mut unreadable = 0u64;
    let n = frames(chunk, &mut |b| match record::parse(b) {
        Some(r) => f(r),
        None => unreadable += 1,
    })?;
    if unreadable > 0 {
        return Err(ChunkError::Unreadable { unreadable, records: n });
    }
    Ok(n - unreadable)
}
#[cfg(feature = "load")]
pub use spawn::Child;

/// What to capture and how much room to give it.
#[derive(Clone, Debug)]
pub struct Options {
    /// Ring buffer size in bytes; rounded up to a power of two of at least one page.
    pub ring_bytes: u32,
    /// How many bytes of socket payloads (reads, writes, sends, receives) to keep.
    pub payload_bytes: u16,
    /// How many bytes of paths to keep.
    pub path_bytes: u16,
    /// Fold identical consecutive calls into Repeat records in the kernel.
    pub coalesce: bool,
    /// No records at all: only per-syscall counters in the kernel ([`Probe::summary`]).
    /// Fork/Exec/Exit records are still sent.
    pub summary_only: bool,
    /// Load the no-BTF (`raw_tp`) variant even when the kernel has BTF.
    pub force_no_btf: bool,
    /// A call a thread was already in when it began to be traced (an attach to a blocked
    /// `accept`) is sent when it returns, with [`Record::Syscall::began_before`] set. Off for a
    /// spawned command (its start is traced; the gate it waits on before exec is not its call).
    pub in_flight: bool,
    /// User stacks for a sample of the traced calls, in a ring buffer of their own
    /// ([`Probe::take_stack_ring`]); None: no stacks (and no stack ring worth the name).
    pub stacks: Option<StackOptions>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            ring_bytes: 16 << 20,
            payload_bytes: 64,
            path_bytes: 256,
            coalesce: true,
            summary_only: false,
            force_no_btf: false,
            in_flight: false,
            stacks: None,
        }
    }
}

/// Why the backend could not start or run. The CLI falls back to strace on `PermissionDenied`
/// and `Unsupported`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The kernel refused (EPERM/EACCES); the message says what to enable.
    #[error("{0}")]
    PermissionDenied(String),
    /// The kernel lacks something needed (BPF, ring buffers, tracepoints).
    #[error("{0}")]
    Unsupported(String),
    /// The program to trace could not be started.
    #[error("cannot start {program}: {source}")]
    Spawn { program: String, source: std::io::Error },
    /// Waiting on a child failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Anything else (a map operation failed, a process does not exist, ...).
    #[error("{0}")]
    Other(String),
}

/// What a data slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataKind {
    /// Nothing was captured.
    None,
    /// A string (a path), without its NUL.
    Str,
    /// Raw bytes (payloads, timespecs, epoll_event, pipe fds).
    Bytes,
    /// A struct sockaddr as passed or received (family in the first two bytes).
    Sockaddr,
}

/// A piece of user memory copied with a syscall.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Data<'a> {
    pub kind: DataKind,
    pub bytes: &'a [u8],
    /// Cut at the maximum. For strings: the string is at least that long.
    pub truncated: bool,
    /// The memory could not be read (bad pointer, page not present).
    pub fault: bool,
}

impl Data<'_> {
    const NONE: Data<'static> = Data { kind: DataKind::None, bytes: &[], truncated: false, fault: false };
}

/// One record from the kernel; see the crate docs for their meaning and order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record<'a> {
    Syscall {
        tgid: u32,
        tid: u32,
        nr: u32,
        args: [u64; 6],
        /// The return value (raw: -errno on failure); 0 when `unfinished`.
        ret: i64,
        ts_enter: u64,
        ts_exit: u64,
        data1: Data<'a>,
        data2: Data<'a>,
        /// The thread ended inside this call; `ts_exit` is when it ended.
        unfinished: bool,
        /// The call was under way when tracing began ([`Options::in_flight`]): its start and
        /// duration are unknown (`ts_enter` is `ts_exit`), its arguments are the registers at
        /// its return.
        began_before: bool,
    },
    Repeat {
        tgid: u32,
        tid: u32,
        period: u8,
        count: u32,
        first_ts: u64,
        last_ts: u64,
        /// Summed durations per position in the repetition (`[1]` is 0 for period 1).
        dur_sum_ns: [u64; 2],
    },
    Fork {
        parent_tgid: u32,
        parent_tid: u32,
        child_tgid: u32,
        child_tid: u32,
        /// A new thread (same tgid), not a new process.
        is_thread: bool,
        ts: u64,
    },
    Exec {
        tgid: u32,
        tid: u32,
        /// The thread id before exec; differs from `tid` when a non-leader thread exec'd.
        old_tid: u32,
        filename: &'a [u8],
        truncated: bool,
        ts: u64,
    },
    /// A signal about to be handled by thread `tid` (its handler runs, or its default action is
    /// taken), as strace's `--- SIGSEGV {...} ---` line. Sent before the handler's first call;
    /// a run of coalesced calls before it is reported first, and none spans it. Not sent by the
    /// raw_tp variant (no BTF) or in summary-only mode.
    Signal {
        tgid: u32,
        tid: u32,
        sig: i32,
        /// `si_code`: > 0 set by the kernel (a fault's SEGV_MAPERR 1, ...; SI_KERNEL 0x80), <= 0 sent
        /// by a process (SI_USER 0, SI_TKILL -6, ...).
        code: i32,
        /// `si_addr` of a fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP with `code` > 0), else 0.
        addr: u64,
        ts: u64,
    },
    Exit {
        tgid: u32,
        tid: u32,
        /// Wait-status style: `(code << 8) | signal`.
        exit_code: i32,
        /// The process's last thread ended: the whole process is gone.
        process_ended: bool,
        ts: u64,
    },
}

impl Record<'_> {
    /// How many syscalls this record stands for (Syscall 1, Repeat count × period, others 0).
    pub fn syscalls(&self) -> u64 {
        match *self {
            Record::Syscall { .. } => 1,
            Record::Repeat { period, count, .. } => u64::from(period) * u64::from(count),
            _ => 0,
        }
    }

    /// The thread group (process) the record belongs to (for Fork: the parent).
    pub fn tgid(&self) -> u32 {
        match *self {
            Record::Syscall { tgid, .. }
            | Record::Repeat { tgid, .. }
            | Record::Exec { tgid, .. }
            | Record::Signal { tgid, .. }
            | Record::Exit { tgid, .. } => tgid,
            Record::Fork { parent_tgid, .. } => parent_tgid,
        }
    }
}

/// Records that did not fit in the ring buffer, and the syscalls they stood for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lost {
    pub records: u64,
    pub syscalls: u64,
}

/// Summary-only counters for one syscall.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub calls: u64,
    /// Calls that returned -4095..-1.
    pub errors: u64,
    /// Sum of (exit - entry) times.
    pub dur_ns: u64,
}

/// The x86_64 name of syscall `nr` (the one table, in `syslint-event`).
pub use syslint_event::syscalls::x86_64_name as syscall_name;

/// CLOCK_MONOTONIC now, in ns: the clock of every timestamp in records.
pub fn monotonic_now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes a timespec into valid memory; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(ts.tv_nsec as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(syscall_name(0), Some("read"));
        assert_eq!(syscall_name(7), Some("poll"));
        assert_eq!(syscall_name(110), Some("getppid"));
        assert_eq!(syscall_name(257), Some("openat"));
        assert_eq!(syscall_name(335), None);
        assert_eq!(syscall_name(100_000), None);
    }

    #[test]
    fn clock_moves() {
        let a = monotonic_now_ns();
        let b = monotonic_now_ns();
        assert!(a > 0 && b >= a);
    }
}
