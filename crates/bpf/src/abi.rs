//! Rust mirrors of `src/bpf/syslint.h`, the only layout shared with the kernel program.
//! Every struct is `#[repr(C)]` with the same fields in the same order; the tests at the bottom
//! assert sizes and offsets against the numbers the C compiler gives the header.

use std::mem::size_of;

pub(crate) const NR_MAX: usize = 512;
pub(crate) const SLOT_MAX: usize = 4096;
pub(crate) const SIG_DATA: usize = 16;

pub(crate) const REC_SYSCALL: u8 = 1;
pub(crate) const REC_REPEAT: u8 = 2;
pub(crate) const REC_FORK: u8 = 3;
pub(crate) const REC_EXEC: u8 = 4;
pub(crate) const REC_EXIT: u8 = 5;

pub(crate) const DATA_NONE: u8 = 0;
pub(crate) const DATA_STR: u8 = 1;
pub(crate) const DATA_BYTES: u8 = 2;
pub(crate) const DATA_SOCKADDR: u8 = 3;

pub(crate) const LEN_FIXED: u8 = 0;
pub(crate) const LEN_ARG: u8 = 1;
pub(crate) const LEN_RET: u8 = 2;
pub(crate) const LEN_ARG_PTR: u8 = 3;

pub(crate) const CAP_SOCK_ONLY: u16 = 0x01;
pub(crate) const CAP_AT_ENTER: u16 = 0x02;
pub(crate) const CAP_NO_COALESCE: u16 = 0x04;
pub(crate) const CAP_IF_OK: u16 = 0x08;
pub(crate) const CAP_IOVEC: u16 = 0x10;
pub(crate) const CAP_MSGHDR: u16 = 0x20;
pub(crate) const CAP_MSGNAME: u16 = 0x40;

pub(crate) const F_TRUNC1: u8 = 0x01;
pub(crate) const F_TRUNC2: u8 = 0x02;
pub(crate) const F_FAULT1: u8 = 0x04;
pub(crate) const F_FAULT2: u8 = 0x08;
pub(crate) const F_UNFINISHED: u8 = 0x10;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CapSlot {
    pub kind: u8,
    pub arg: u8,
    pub len_src: u8,
    pub len_arg: u8,
    pub len: u16,
    pub flags: u16,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CapSpec {
    pub slot: [CapSlot; 2],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SyscallRec {
    pub kind: u8,
    pub flags: u8,
    pub data1_kind: u8,
    pub data2_kind: u8,
    pub tgid: u32,
    pub tid: u32,
    pub nr: u32,
    pub args: [u64; 6],
    pub ret: i64,
    pub ts_enter: u64,
    pub ts_exit: u64,
    pub data1_len: u16,
    pub data2_len: u16,
    pub _pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RepeatRec {
    pub kind: u8,
    pub period: u8,
    pub _pad: u16,
    pub tgid: u32,
    pub tid: u32,
    pub count: u32,
    pub first_ts: u64,
    pub last_ts: u64,
    pub dur_sum: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ForkRec {
    pub kind: u8,
    pub is_thread: u8,
    pub _pad: u16,
    pub parent_tgid: u32,
    pub parent_tid: u32,
    pub child_tgid: u32,
    pub child_tid: u32,
    pub _pad2: u32,
    pub ts: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ExecRec {
    pub kind: u8,
    pub truncated: u8,
    pub filename_len: u16,
    pub tgid: u32,
    pub tid: u32,
    pub old_tid: u32,
    pub ts: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ExitRec {
    pub kind: u8,
    pub group_dead: u8,
    pub _pad: u16,
    pub tgid: u32,
    pub tid: u32,
    pub exit_code: i32,
    pub ts: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LostCounts {
    pub records: u64,
    pub syscalls: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SummaryCounts {
    pub calls: u64,
    pub errors: u64,
    pub dur_ns: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Sig {
    pub nr: u32,
    pub len1: u8,
    pub len2: u8,
    pub kinds: u8,
    pub coal: u8,
    pub args: [u64; 6],
    pub ret: i64,
    pub data: [u8; SIG_DATA],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ThreadState {
    pub args: [u64; 6],
    pub ts_enter: u64,
    pub nr: u32,
    pub in_flight: u32,
    pub hist: [Sig; 2],
    pub hist_n: u8,
    pub period: u8,
    pub partial: u8,
    pub _pad: u8,
    pub count: u32,
    pub first_ts: u64,
    pub last_ts: u64,
    pub dur_sum: u64,
    pub last_report: u64,
    pub part_ts_enter: u64,
    pub part_ts_exit: u64,
    pub tgid: u32,
    pub _pad2: u32,
}

/// Plain old data: `#[repr(C)]` structs of integers (and arrays of them) with no padding the
/// compiler could treat as uninitialised, for which every bit pattern is a valid value.
///
/// # Safety
/// Implement only for types that satisfy the above.
pub(crate) unsafe trait Pod: Copy + Default {}

// SAFETY: each is #[repr(C)], made only of integer fields with explicit padding fields.
unsafe impl Pod for CapSpec {}
// SAFETY: as above.
unsafe impl Pod for SyscallRec {}
// SAFETY: as above.
unsafe impl Pod for RepeatRec {}
// SAFETY: as above.
unsafe impl Pod for ForkRec {}
// SAFETY: as above.
unsafe impl Pod for ExecRec {}
// SAFETY: as above.
unsafe impl Pod for ExitRec {}
// SAFETY: as above.
unsafe impl Pod for LostCounts {}
// SAFETY: as above.
unsafe impl Pod for SummaryCounts {}
// SAFETY: as above.
unsafe impl Pod for ThreadState {}

/// Reads a `T` from the start of `b`, or `None` when `b` is too short.
pub(crate) fn read<T: Pod>(b: &[u8]) -> Option<T> {
    if b.len() < size_of::<T>() {
        return None;
    }
    // SAFETY: `b` holds at least size_of::<T>() readable bytes; read_unaligned copes with any
    // alignment; T: Pod accepts every bit pattern.
    Some(unsafe { std::ptr::read_unaligned(b.as_ptr().cast::<T>()) })
}

/// The bytes of a `T`, as a map update wants them.
pub(crate) fn bytes<T: Pod>(v: &T) -> &[u8] {
    // SAFETY: T: Pod has no uninitialised padding (every gap is an explicit field), so all
    // size_of::<T>() bytes behind the reference are initialised and live as long as `v`.
    unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), size_of::<T>()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    // The numbers on the right are what clang gives the C structs in syslint.h (x86_64 and
    // BPF agree: natural alignment, no packing).
    #[test]
    fn sizes_match_the_c_header() {
        assert_eq!(size_of::<CapSlot>(), 8);
        assert_eq!(size_of::<CapSpec>(), 16);
        assert_eq!(size_of::<SyscallRec>(), 96);
        assert_eq!(size_of::<RepeatRec>(), 40);
        assert_eq!(size_of::<ForkRec>(), 32);
        assert_eq!(size_of::<ExecRec>(), 24);
        assert_eq!(size_of::<ExitRec>(), 24);
        assert_eq!(size_of::<LostCounts>(), 16);
        assert_eq!(size_of::<SummaryCounts>(), 24);
        assert_eq!(size_of::<Sig>(), 80);
        assert_eq!(size_of::<ThreadState>(), 288);
    }

    #[test]
    fn offsets_match_the_c_header() {
        assert_eq!(offset_of!(CapSlot, len), 4);
        assert_eq!(offset_of!(CapSlot, flags), 6);
        assert_eq!(offset_of!(SyscallRec, tgid), 4);
        assert_eq!(offset_of!(SyscallRec, nr), 12);
        assert_eq!(offset_of!(SyscallRec, args), 16);
        assert_eq!(offset_of!(SyscallRec, ret), 64);
        assert_eq!(offset_of!(SyscallRec, ts_enter), 72);
        assert_eq!(offset_of!(SyscallRec, ts_exit), 80);
        assert_eq!(offset_of!(SyscallRec, data1_len), 88);
        assert_eq!(offset_of!(SyscallRec, data2_len), 90);
        assert_eq!(offset_of!(RepeatRec, count), 12);
        assert_eq!(offset_of!(RepeatRec, first_ts), 16);
        assert_eq!(offset_of!(RepeatRec, dur_sum), 32);
        assert_eq!(offset_of!(ForkRec, child_tid), 16);
        assert_eq!(offset_of!(ForkRec, ts), 24);
        assert_eq!(offset_of!(ExecRec, old_tid), 12);
        assert_eq!(offset_of!(ExecRec, ts), 16);
        assert_eq!(offset_of!(ExitRec, exit_code), 12);
        assert_eq!(offset_of!(ExitRec, ts), 16);
        assert_eq!(offset_of!(Sig, args), 8);
        assert_eq!(offset_of!(Sig, ret), 56);
        assert_eq!(offset_of!(Sig, data), 64);
        assert_eq!(offset_of!(ThreadState, ts_enter), 48);
        assert_eq!(offset_of!(ThreadState, nr), 56);
        assert_eq!(offset_of!(ThreadState, hist), 64);
        assert_eq!(offset_of!(ThreadState, hist_n), 224);
        assert_eq!(offset_of!(ThreadState, count), 228);
        assert_eq!(offset_of!(ThreadState, first_ts), 232);
        assert_eq!(offset_of!(ThreadState, part_ts_enter), 264);
        assert_eq!(offset_of!(ThreadState, tgid), 280);
    }
}
