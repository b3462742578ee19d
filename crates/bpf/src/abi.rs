//! The layout shared with the kernel program: constants and `#[repr(C)]` structs generated at
//! build time by bindgen from `src/bpf/syslint.h` (see build.rs), so the header is the only
//! place they are written. Names follow one rule: `SL_REC_EXIT` → `REC_EXIT`, `struct
//! sl_exec_rec` → `ExecRec`. The generated code asserts at compile time that every struct has
//! the size, alignment and field offsets clang gives the C one.

use std::mem::size_of;

#[allow(dead_code, non_camel_case_types, clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/abi.rs"));
}
pub(crate) use generated::*;

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
unsafe impl Pod for SignalRec {}
// SAFETY: as above.
unsafe impl Pod for Lost {}
// SAFETY: as above.
unsafe impl Pod for Counts {}
// SAFETY: as above.
unsafe impl Pod for Thread {}

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

    /// Pinned numbers: a change to the header that moves the records is a change of the
    /// protocol between the two sides, never an accident (the generated asserts only say that
    /// both sides agree).
    #[test]
    fn sizes_are_pinned() {
        assert_eq!(size_of::<CapSpec>(), 16);
        assert_eq!(size_of::<SyscallRec>(), 96);
        assert_eq!(size_of::<RepeatRec>(), 48);
        assert_eq!(size_of::<Thread>(), 368);
        assert_eq!(offset_of!(SyscallRec, data1_len), 88);
        assert_eq!(offset_of!(Thread, tgid), 288);
    }
}
