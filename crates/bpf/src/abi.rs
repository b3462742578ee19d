//! Rust mirrors of `src/bpf/syslint.h`, the only layout shared with the kernel program.
//! Every struct is `#[repr(C)]` with the same fields in the same order; the tests at the bottom
//! assert sizes and offsets against the numbers the C compiler gives the header.

use std::mem::size_of;

pub(crate) const NR_MAX: usize = 512;
pub(crate) const SLOT_MAX: usize = 4096;
/// SL_PID_WORDS: 64-bit words of the `traced` bitmap.
pub(crate) const PID_WORDS: usize = 1 << 16;
pub(crate) const SIG_DATA: usize = 16;
pub(crate) const SMALL_SLOT: usize = 32;

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
    /// Which `hist` entry is the newer (0 or 1).
    pub newest: u8,
    pub count: u32,
    pub first_ts: u64,
    pub last_ts: u64,
    pub dur_sum: u64,
    pub last_report: u64,
    pub part_ts_enter: u64,
    pub part_ts_exit: u64,
    pub tgid: u32,
    pub unqueried: u32,
    pub enter_small: [[u8; SMALL_SLOT]; 2],
    pub enter_small_len: [u8; 2],
    pub enter_small_flags: u8,
    pub _pad3: [u8; 5],
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
    use std::io::Write;
    use std::mem::offset_of;
    use std::process::Command;

    /// (C struct name, Rust size, [(field, Rust offset)]) for every shared struct.
    macro_rules! layouts {
        ($($rust:ty => $c:literal [$($f:ident),*]),* $(,)?) => {
            vec![$(($c, size_of::<$rust>(), vec![$((stringify!($f), offset_of!($rust, $f))),*])),*]
        };
    }

    /// (C struct, size, [(field, offset)])
    type Layout = (&'static str, usize, Vec<(&'static str, usize)>);

    fn layouts() -> Vec<Layout> {
        layouts![
            CapSlot => "sl_cap_slot" [kind, arg, len_src, len_arg, len, flags],
            CapSpec => "sl_cap_spec" [slot],
            SyscallRec => "sl_syscall_rec" [kind, flags, data1_kind, data2_kind, tgid, tid, nr, args, ret, ts_enter,
                ts_exit, data1_len, data2_len, _pad],
            RepeatRec => "sl_repeat_rec" [kind, period, _pad, tgid, tid, count, first_ts, last_ts, dur_sum],
            ForkRec => "sl_fork_rec" [kind, is_thread, _pad, parent_tgid, parent_tid, child_tgid, child_tid, _pad2, ts],
            ExecRec => "sl_exec_rec" [kind, truncated, filename_len, tgid, tid, old_tid, ts],
            ExitRec => "sl_exit_rec" [kind, group_dead, _pad, tgid, tid, exit_code, ts],
            LostCounts => "sl_lost" [records, syscalls],
            SummaryCounts => "sl_counts" [calls, errors, dur_ns],
            Sig => "sl_sig" [nr, len1, len2, kinds, coal, args, ret, data],
            ThreadState => "sl_thread" [args, ts_enter, nr, in_flight, hist, hist_n, period, partial, newest, count,
                first_ts, last_ts, dur_sum, last_report, part_ts_enter, part_ts_exit, tgid, unqueried, enter_small,
                enter_small_len, enter_small_flags, _pad3],
        ]
    }

    // Pinned numbers: also checked when no C compiler is around.
    #[test]
    fn sizes_are_pinned() {
        assert_eq!(size_of::<CapSpec>(), 16);
        assert_eq!(size_of::<SyscallRec>(), 96);
        assert_eq!(size_of::<RepeatRec>(), 40);
        assert_eq!(size_of::<ThreadState>(), 360);
        assert_eq!(offset_of!(SyscallRec, data1_len), 88);
        assert_eq!(offset_of!(ThreadState, tgid), 280);
    }

    /// Compiles a C program that prints every size and offset of syslint.h and compares.
    #[test]
    fn layout_matches_the_c_header() {
        let dir = std::env::temp_dir().join(format!("syslint-abi-check-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let mut c = String::from("#include <linux/types.h>\n#include <stdio.h>\n#include <stddef.h>\n");
        c += &format!("#include \"{}/src/bpf/syslint.h\"\nint main(void) {{\n", env!("CARGO_MANIFEST_DIR"));
        let mut want = String::new();
        for (st, size, fields) in layouts() {
            c += &format!("printf(\"{st} %zu\\n\", sizeof(struct {st}));\n");
            want += &format!("{st} {size}\n");
            for (f, off) in fields {
                c += &format!("printf(\"{st}.{f} %zu\\n\", offsetof(struct {st}, {f}));\n");
                want += &format!("{st}.{f} {off}\n");
            }
        }
        c += "return 0;\n}\n";
        std::fs::write(dir.join("check.c"), c).expect("write check.c");
        let exe = dir.join("check");
        match Command::new("cc").arg("-o").arg(&exe).arg(dir.join("check.c")).status() {
            Ok(s) => assert!(s.success(), "cc failed on the layout check"),
            Err(e) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "\n!!!!!!!! SKIPPED layout_matches_the_c_header: no cc: {e} !!!!!!!!\n"
                );
                return;
            }
        }
        let out = Command::new(&exe).output().expect("run the layout check");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(String::from_utf8_lossy(&out.stdout), want);
    }
}
