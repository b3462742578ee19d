//! The capture table: which user memory the kernel program copies for each syscall (x86_64
//! numbers). This is data: `Probe::load` writes it into the `caps` array map, indexed by
//! syscall number, and the BPF program only interprets it. To capture something new, add a
//! row here (and, when a new way of finding a buffer is needed, a flag in syslint.h).
//!
//! Each syscall has up to two slots. A slot says what kind of data (string, bytes, sockaddr),
//! which argument holds the pointer, where the length comes from (fixed, another argument, the
//! return value, or a `socklen_t *` argument read at exit), the maximum (0: the option's
//! default, `path_bytes` for strings, `payload_bytes` for bytes, 128 for sockaddrs) and flags.
//! Everything is copied at syscall exit, when input buffers are still valid and output buffers
//! are filled, except execve/execveat's path, copied at entry (gone after a successful exec),
//! and the timeouts of select/pselect6/ppoll/epoll_pwait2, copied at entry because the first
//! three overwrite them with the time left. Entry copies of at most 16 bytes live in the
//! thread's state (cheap enough for busy-poll loops); larger ones in a per-thread hash entry.

use crate::abi::*;

const fn slot(kind: u8, arg: u8, len_src: u8, len_arg: u8, len: u16, flags: u16) -> CapSlot {
    CapSlot { kind, arg, len_src, len_arg, len, flags }
}

const NONE: CapSlot = slot(DATA_NONE, 0, 0, 0, 0, 0);

/// A path (NUL-terminated string) in argument `arg`.
const fn path(arg: u8) -> CapSlot {
    slot(DATA_STR, arg, LEN_FIXED, 0, 0, 0)
}

/// `len` bytes at argument `arg` (a struct the call only reads: epoll_event).
const fn fixed(arg: u8, len: u16) -> CapSlot {
    slot(DATA_BYTES, arg, LEN_FIXED, 0, len, 0)
}

/// A timeout struct of `len` bytes at argument `arg`, copied at entry: ppoll, select and
/// pselect6 overwrite it with the time left, and the requested timeout is what matters.
const fn timeout(arg: u8, len: u16) -> CapSlot {
    slot(DATA_BYTES, arg, LEN_FIXED, 0, len, CAP_AT_ENTER)
}

/// `len` bytes the call wrote at argument `arg` (pipe's int[2]): only when it succeeded.
const fn out_fixed(arg: u8, len: u16) -> CapSlot {
    slot(DATA_BYTES, arg, LEN_FIXED, 0, len, CAP_IF_OK)
}

/// A sockaddr the program passes: pointer in `arg`, length in argument `len_arg`.
const fn sockaddr_in(arg: u8, len_arg: u8) -> CapSlot {
    slot(DATA_SOCKADDR, arg, LEN_ARG, len_arg, 0, 0)
}

/// A sockaddr the kernel fills: pointer in `arg`, `socklen_t *` in `len_arg`, read at exit.
const fn sockaddr_out(arg: u8, len_arg: u8) -> CapSlot {
    slot(DATA_SOCKADDR, arg, LEN_ARG_PTR, len_arg, 0, CAP_IF_OK)
}

/// The first bytes of a payload sent: buffer in `arg`, length in argument `len_arg`.
const fn sent(arg: u8, len_arg: u8, flags: u16) -> CapSlot {
    slot(DATA_BYTES, arg, LEN_ARG, len_arg, 0, CAP_NO_COALESCE | flags)
}

/// The first bytes of a payload received: buffer in `arg`, length = the return value.
const fn received(arg: u8, flags: u16) -> CapSlot {
    slot(DATA_BYTES, arg, LEN_RET, 0, 0, CAP_NO_COALESCE | CAP_IF_OK | flags)
}

/// (syscall number, slot 1, slot 2). Numbers are x86_64 (arch/x86/entry/syscalls/syscall_64.tbl).
pub(crate) const TABLE: &[(u32, CapSlot, CapSlot)] = &[
    // socket payloads: read/write on files and pipes capture nothing (and so can coalesce)
    (0, received(1, CAP_SOCK_ONLY), NONE),              // read
    (1, sent(1, 2, CAP_SOCK_ONLY), NONE),               // write
    (19, received(1, CAP_SOCK_ONLY | CAP_IOVEC), NONE), // readv: first iovec
    (20, slot(DATA_BYTES, 1, LEN_RET, 0, 0, CAP_NO_COALESCE | CAP_SOCK_ONLY | CAP_IOVEC), NONE), // writev
    (44, sent(1, 2, 0), sockaddr_in(4, 5)),             // sendto
    (45, received(1, 0), sockaddr_out(4, 5)),           // recvfrom
    (
        46,
        slot(DATA_BYTES, 1, LEN_FIXED, 0, 0, CAP_NO_COALESCE | CAP_MSGHDR),
        slot(DATA_SOCKADDR, 1, LEN_FIXED, 0, 0, CAP_MSGNAME),
    ), // sendmsg
    (47, received(1, CAP_MSGHDR), slot(DATA_SOCKADDR, 1, LEN_FIXED, 0, 0, CAP_MSGNAME | CAP_IF_OK)), // recvmsg
    (
        307,
        slot(DATA_BYTES, 1, LEN_FIXED, 0, 0, CAP_NO_COALESCE | CAP_MSGHDR),
        slot(DATA_SOCKADDR, 1, LEN_FIXED, 0, 0, CAP_MSGNAME),
    ), // sendmmsg: first message
    // sockaddrs
    (42, sockaddr_in(1, 2), NONE),                      // connect
    (49, sockaddr_in(1, 2), NONE),                      // bind
    (43, sockaddr_out(1, 2), NONE),                     // accept
    (288, sockaddr_out(1, 2), NONE),                    // accept4
    (51, sockaddr_out(1, 2), NONE),                     // getsockname
    (52, sockaddr_out(1, 2), NONE),                     // getpeername
    (54, slot(DATA_BYTES, 3, LEN_ARG, 4, 16, 0), NONE), // setsockopt optval, optlen arg 4, max 16
    (55, out_fixed(3, 4), NONE),                        // getsockopt optval: the int (SO_ERROR of a connect)
    (53, out_fixed(3, 8), NONE),                        // socketpair int[2]
    (22, out_fixed(0, 8), NONE),                        // pipe int[2]
    (293, out_fixed(0, 8), NONE),                       // pipe2 int[2]
    // timeouts (poll and epoll_wait take theirs as a plain argument)
    (23, timeout(4, 16), NONE),  // select: struct timeval *
    (270, timeout(4, 16), NONE), // pselect6: struct timespec *
    (271, timeout(2, 16), NONE), // ppoll: struct timespec *
    (441, timeout(3, 16), NONE), // epoll_pwait2: struct timespec *
    (35, timeout(0, 16), NONE),  // nanosleep: struct timespec * (the request)
    (230, timeout(2, 16), NONE), // clock_nanosleep: struct timespec * (the request)
    (233, fixed(3, 12), NONE),   // epoll_ctl: struct epoll_event (packed on x86_64)
    // paths
    (2, path(0), NONE),                                            // open
    (4, path(0), NONE),                                            // stat
    (6, path(0), NONE),                                            // lstat
    (21, path(0), NONE),                                           // access
    (59, slot(DATA_STR, 0, LEN_FIXED, 0, 0, CAP_AT_ENTER), NONE),  // execve
    (80, path(0), NONE),                                           // chdir
    (82, path(0), path(1)),                                        // rename
    (83, path(0), NONE),                                           // mkdir
    (84, path(0), NONE),                                           // rmdir
    (85, path(0), NONE),                                           // creat
    (86, path(0), path(1)),                                        // link
    (87, path(0), NONE),                                           // unlink
    (88, path(0), path(1)),                                        // symlink
    (89, path(0), received_str(1)),                                // readlink: path, then the target
    (90, path(0), NONE),                                           // chmod
    (92, path(0), NONE),                                           // chown
    (94, path(0), NONE),                                           // lchown
    (137, path(0), NONE),                                          // statfs
    (257, path(1), NONE),                                          // openat
    (258, path(1), NONE),                                          // mkdirat
    (262, path(1), NONE),                                          // newfstatat
    (263, path(1), NONE),                                          // unlinkat
    (264, path(1), path(3)),                                       // renameat
    (265, path(1), path(3)),                                       // linkat
    (266, path(0), path(2)),                                       // symlinkat
    (267, path(1), received_str(2)),                               // readlinkat: path, then the target
    (268, path(1), NONE),                                          // fchmodat
    (269, path(1), NONE),                                          // faccessat
    (316, path(1), path(3)),                                       // renameat2
    (322, slot(DATA_STR, 1, LEN_FIXED, 0, 0, CAP_AT_ENTER), NONE), // execveat
    (332, path(1), NONE),                                          // statx
    (437, path(1), NONE),                                          // openat2
    (439, path(1), NONE),                                          // faccessat2
];

/// The bytes readlink wrote (not NUL-terminated): `ret` bytes at argument `arg`.
const fn received_str(arg: u8) -> CapSlot {
    slot(DATA_BYTES, arg, LEN_RET, 0, 0, CAP_IF_OK)
}

/// Calls that return a new fd (x86_64): when they succeed they are never coalesced. A run is
/// reported only when it breaks (or 100 ms on), and meanwhile another thread may already use
/// the fd: a server thread looping `accept` = 7, hand over, `accept` = 7 (the fd reused after a
/// worker closed it) held its accepts back while the workers' reads of fd 7 went out, so the
/// analysis saw reads of an fd it had never seen opened.
pub(crate) const NEW_FD: &[u32] = &[
    2,   // open
    22,  // pipe
    32,  // dup
    33,  // dup2
    41,  // socket
    43,  // accept
    53,  // socketpair
    85,  // creat
    213, // epoll_create
    253, // inotify_init
    257, // openat
    282, // signalfd
    283, // timerfd_create
    284, // eventfd
    288, // accept4
    289, // signalfd4
    290, // eventfd2
    291, // epoll_create1
    292, // dup3
    293, // pipe2
    294, // inotify_init1
    298, // perf_event_open
    300, // fanotify_init
    304, // open_by_handle_at
    319, // memfd_create
    323, // userfaultfd
    425, // io_uring_setup
    434, // pidfd_open
    437, // openat2
];

/// The table as the `caps` map wants it: one spec per syscall number below NR_MAX, with
/// [`NEW_FD`]'s calls flagged.
pub(crate) fn specs() -> Vec<(u32, CapSpec)> {
    let mut specs: Vec<(u32, CapSpec)> = TABLE.iter().map(|&(nr, a, b)| (nr, CapSpec { slot: [a, b] })).collect();
    for &nr in NEW_FD {
        match specs.iter_mut().find(|(n, _)| *n == nr) {
            Some((_, s)) => s.slot[0].flags |= CAP_NEW_FD,
            None => specs.push((nr, CapSpec { slot: [slot(DATA_NONE, 0, 0, 0, 0, CAP_NEW_FD), NONE] })),
        }
    }
    specs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syscall_name;

    #[test]
    fn table_is_consistent() {
        let mut seen = std::collections::HashSet::new();
        for &(nr, a, b) in TABLE {
            assert!((nr as usize) < NR_MAX, "{nr} beyond the map");
            assert!(seen.insert(nr), "{nr} twice");
            assert!(syscall_name(nr).is_some(), "{nr} is no x86_64 syscall");
            for s in [a, b] {
                assert!(s.arg <= 5 && s.len_arg <= 5);
                assert!((s.len as usize) < SLOT_MAX);
                assert!(s.kind != DATA_NONE || s == NONE);
                assert!(s.flags & CAP_AT_ENTER == 0 || s.flags & CAP_IF_OK == 0, "no return value at entry");
            }
        }
    }

    #[test]
    fn new_fd_calls_are_flagged() {
        let specs = specs();
        for &nr in NEW_FD {
            assert!(syscall_name(nr).is_some(), "{nr} is no x86_64 syscall");
            let s = specs.iter().find(|(n, _)| *n == nr).expect("a spec");
            assert!(s.1.slot[0].flags & CAP_NEW_FD != 0, "{nr}");
        }
        let name = |nr| syscall_name(nr).unwrap_or("?");
        let names: Vec<&str> = NEW_FD.iter().map(|&nr| name(nr)).collect();
        for want in ["open", "openat", "accept", "accept4", "socket", "dup", "dup2", "dup3", "pipe2", "epoll_create1"] {
            assert!(names.contains(&want), "{want}");
        }
        assert_eq!(specs.iter().filter(|(_, s)| s.slot[0].flags & CAP_NEW_FD != 0).count(), NEW_FD.len());
    }

    #[test]
    fn names_the_rows_mean() {
        let name = |nr| syscall_name(nr).unwrap_or("?");
        let rows: Vec<&str> = TABLE.iter().map(|&(nr, _, _)| name(nr)).collect();
        for want in [
            "open",
            "openat",
            "openat2",
            "creat",
            "stat",
            "lstat",
            "newfstatat",
            "statx",
            "access",
            "faccessat",
            "faccessat2",
            "readlink",
            "readlinkat",
            "execve",
            "execveat",
            "unlink",
            "unlinkat",
            "mkdir",
            "rename",
            "renameat2",
            "chdir",
            "connect",
            "bind",
            "sendto",
            "accept",
            "accept4",
            "recvfrom",
            "getsockname",
            "getpeername",
            "ppoll",
            "select",
            "pselect6",
            "epoll_pwait2",
            "epoll_ctl",
            "setsockopt",
            "getsockopt",
            "pipe",
            "pipe2",
            "socketpair",
            "write",
            "writev",
            "sendmsg",
            "sendmmsg",
            "read",
            "recvmsg",
        ] {
            assert!(rows.contains(&want), "{want} has no capture row");
        }
    }
}
