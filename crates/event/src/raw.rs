//! Arguments as the kernel gave them (the eBPF backend): six registers and up to two pieces of
//! user memory, and their rendering in strace's notation, which only evidence lines and
//! `export` need. x86_64 argument layouts.
//!
//! What the kernel copied (paths, socket addresses, timeouts, the first bytes of socket
//! payloads, epoll_event, pipe fds) is printed where strace prints it; memory it did not copy
//! is printed as an address, as strace does for pointers it does not decode.

use crate::names::{EPOLL_EVENTS, FUTEX_OPS, SOCKOPT_NAMES, SOL_NAMES};
use crate::syscalls::{Class, Sys};
use std::fmt::Write as _;

/// What a piece of copied user memory is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DataKind {
    /// Nothing was captured.
    #[default]
    None,
    /// A string (a path), without its NUL.
    Str,
    /// Raw bytes (payloads, timespecs, epoll_event, pipe fds).
    Bytes,
    /// A struct sockaddr as passed or received (family in the first two bytes).
    Sockaddr,
}

/// A piece of user memory copied with a syscall.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RawData<'a> {
    pub kind: DataKind,
    pub bytes: &'a [u8],
    /// Cut at the maximum. For strings: the string is at least that long.
    pub truncated: bool,
    /// The memory could not be read (bad pointer, page not present).
    pub fault: bool,
}

impl<'a> RawData<'a> {
    /// The bytes when they were copied as `kind` and could be read.
    pub fn get(self, kind: DataKind) -> Option<&'a [u8]> {
        (self.kind == kind && !self.fault).then_some(self.bytes)
    }
}

/// A call's arguments as the kernel saw them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RawArgs<'a> {
    /// The x86_64 syscall number.
    pub nr: u32,
    pub regs: [u64; 6],
    /// The raw return value (`-errno` on failure).
    pub ret: i64,
    pub data1: RawData<'a>,
    pub data2: RawData<'a>,
    /// For clone3, whose flags the kernel program does not copy: whether the child is a
    /// thread (from the fork hook), when known.
    pub thread: Option<bool>,
}

fn fd<'d>(o: &mut String, deco: &'d dyn Fn(i32) -> Option<&'d str>, v: u64) {
    let fd = v as i32;
    let _ = write!(o, "{fd}");
    if let Some(d) = deco(fd) {
        let _ = write!(o, "<{d}>");
    }
}

/// The arguments of call `sys` (named `name`, `syscall` for an unknown number) in strace's
/// notation, appended to `o`; `deco` gives the `-yy` decoration of an fd, if any.
pub fn render<'d>(o: &mut String, sys: Sys, name: &str, r: &RawArgs<'_>, deco: &'d dyn Fn(i32) -> Option<&'d str>) {
    if name == "syscall" {
        let _ = write!(o, "{}, ", r.nr);
    }
    render_args(o, sys, name, r, deco);
}

fn render_args<'d>(o: &mut String, sys: Sys, name: &str, r: &RawArgs<'_>, deco: &'d dyn Fn(i32) -> Option<&'d str>) {
    let ok = !(-4095..0).contains(&r.ret);
    let (a, d1, d2) = (&r.regs, &r.data1, &r.data2);
    match sys {
        Sys::Read | Sys::Recv => {
            fd(o, deco, a[0]);
            o.push_str(", ");
            buf(o, d1, a[1]);
            let _ = write!(o, ", {}", a[2]);
        }
        Sys::Write | Sys::Send => {
            fd(o, deco, a[0]);
            o.push_str(", ");
            buf(o, d1, a[1]);
            let _ = write!(o, ", {}", a[2]);
        }
        Sys::Pread64 | Sys::Pwrite64 => {
            fd(o, deco, a[0]);
            let _ = write!(o, ", {:#x}, {}, {}", a[1], a[2], a[3] as i64);
        }
        Sys::Readv | Sys::Writev => {
            fd(o, deco, a[0]);
            o.push_str(", [{iov_base=");
            buf(o, d1, a[1]);
            let _ = write!(o, ", iov_len={}}}], {}", d1.bytes.len(), a[2]);
        }
        Sys::Sendto | Sys::Recvfrom => {
            fd(o, deco, a[0]);
            o.push_str(", ");
            buf(o, d1, a[1]);
            let _ = write!(o, ", {}, {}, ", a[2], msg_flags(a[3]));
            if a[4] == 0 {
                o.push_str("NULL, ");
            } else {
                sockaddr(o, d2, a[4]);
                o.push_str(", ");
            }
            if sys == Sys::Sendto || a[5] == 0 {
                let _ = write!(o, "{}", if a[4] == 0 { 0 } else { a[5] });
            } else {
                let _ = write!(o, "[{}]", d2.bytes.len());
            }
        }
        Sys::Sendmsg | Sys::Recvmsg => {
            fd(o, deco, a[0]);
            o.push_str(", ");
            msghdr(o, d1, d2);
            let _ = write!(o, ", {}", msg_flags(a[2]));
        }
        Sys::Sendmmsg | Sys::Recvmmsg => {
            fd(o, deco, a[0]);
            o.push_str(", [{msg_hdr=");
            msghdr(o, d1, d2);
            let _ = write!(o, ", msg_len={}}}], {}, {}", d1.bytes.len(), a[2], msg_flags(a[3]));
        }
        Sys::Connect | Sys::Bind => {
            fd(o, deco, a[0]);
            o.push_str(", ");
            sockaddr(o, d1, a[1]);
            let _ = write!(o, ", {}", a[2]);
        }
        Sys::Accept | Sys::Accept4 | Sys::Getsockname | Sys::Getpeername => {
            fd(o, deco, a[0]);
            o.push_str(", ");
            if a[1] == 0 {
                o.push_str("NULL, NULL");
            } else {
                sockaddr(o, d1, a[1]);
                let _ = write!(o, ", [{}]", d1.bytes.len());
            }
            if sys == Sys::Accept4 {
                let _ = write!(o, ", {}", sock_flags(a[3]));
            }
        }
        Sys::Listen => {
            fd(o, deco, a[0]);
            let _ = write!(o, ", {}", a[1] as i32);
        }
        Sys::Socket => {
            let _ = write!(o, "{}, {}, {}", family(a[0]), sock_type(a[1]), ipproto(a[2]));
        }
        Sys::Socketpair => {
            let _ = write!(o, "{}, {}, {}, ", family(a[0]), sock_type(a[1]), a[2]);
            fd_pair(o, d1, a[3], ok);
        }
        Sys::Pipe => fd_pair(o, d1, a[0], ok),
        Sys::Pipe2 => {
            fd_pair(o, d1, a[0], ok);
            let _ = write!(o, ", {}", open_flags(a[1]));
        }
        Sys::Setsockopt | Sys::Getsockopt => {
            fd(o, deco, a[0]);
            let (level, opt) = sockopt(a[1], a[2]);
            let _ = write!(o, ", {level}, {opt}, ");
            if d1.bytes.len() >= 4 {
                let v = i32::from_le_bytes([d1.bytes[0], d1.bytes[1], d1.bytes[2], d1.bytes[3]]);
                // strace names getsockopt's SO_ERROR value: `[ECONNREFUSED]`
                match crate::errno::name(v.into()) {
                    Some(e) if sys == Sys::Getsockopt && (a[1], a[2]) == (1, 4) && (1..512).contains(&v) => {
                        let _ = write!(o, "[{e}], {}", a[4]);
                    }
                    _ => {
                        let _ = write!(o, "[{v}], {}", a[4]);
                    }
                }
            } else {
                let _ = write!(o, "{:#x}, {}", a[3], a[4]);
            }
        }
        Sys::Poll => {
            let _ = write!(o, "{:#x}, {}, {}", a[0], a[1], a[2] as i32);
        }
        Sys::Ppoll => {
            let _ = write!(o, "{:#x}, {}, ", a[0], a[1]);
            timespec(o, d1, a[2], "tv_nsec");
            let _ = write!(o, ", {}, {}", ptr(a[3]), a[4]);
        }
        Sys::Select | Sys::NewSelect | Sys::Pselect6 => {
            let _ = write!(o, "{}, {}, {}, {}, ", a[0] as i32, ptr(a[1]), ptr(a[2]), ptr(a[3]));
            timespec(o, d1, a[4], if sys == Sys::Pselect6 { "tv_nsec" } else { "tv_usec" });
            if sys == Sys::Pselect6 {
                let _ = write!(o, ", {}", ptr(a[5]));
            }
        }
        Sys::EpollWait | Sys::EpollPwait => {
            fd(o, deco, a[0]);
            let _ = write!(o, ", {:#x}, {}, {}", a[1], a[2] as i32, a[3] as i32);
            if sys == Sys::EpollPwait {
                let _ = write!(o, ", {}, {}", ptr(a[4]), a[5]);
            }
        }
        Sys::EpollPwait2 => {
            fd(o, deco, a[0]);
            let _ = write!(o, ", {:#x}, {}, ", a[1], a[2] as i32);
            timespec(o, d1, a[3], "tv_nsec");
            let _ = write!(o, ", {}, {}", ptr(a[4]), a[5]);
        }
        Sys::EpollCtl => {
            fd(o, deco, a[0]);
            let op = match a[1] {
                1 => "EPOLL_CTL_ADD",
                2 => "EPOLL_CTL_DEL",
                3 => "EPOLL_CTL_MOD",
                _ => "EPOLL_CTL_?",
            };
            let _ = write!(o, ", {op}, ");
            fd(o, deco, a[2]);
            o.push_str(", ");
            if d1.bytes.len() >= 12 {
                let b = d1.bytes;
                let ev = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                let data = u64::from_le_bytes([b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11]]);
                o.push_str("{events=");
                flags_into(o, ev as u64, EPOLL_EVENTS, "0");
                let _ = write!(o, ", data={{u32={}, u64={data}}}}}", data as u32);
            } else {
                o.push_str(&ptr(a[3]));
            }
        }
        Sys::Open => {
            path(o, d1, a[0]);
            open_tail(o, a[1], a[2]);
        }
        Sys::Creat => {
            path(o, d1, a[0]);
            let _ = write!(o, ", 0{:o}", a[1]);
        }
        Sys::Openat => {
            dirfd(o, a[0]);
            o.push_str(", ");
            path(o, d1, a[1]);
            open_tail(o, a[2], a[3]);
        }
        Sys::Openat2 => {
            dirfd(o, a[0]);
            o.push_str(", ");
            path(o, d1, a[1]);
            let _ = write!(o, ", {:#x}, {}", a[2], a[3]);
        }
        Sys::Execve => {
            path(o, d1, a[0]);
            let _ = write!(o, ", {}, {}", ptr(a[1]), ptr(a[2]));
        }
        Sys::Execveat => {
            dirfd(o, a[0]);
            o.push_str(", ");
            path(o, d1, a[1]);
            let _ = write!(o, ", {}, {}, {}", ptr(a[2]), ptr(a[3]), a[4]);
        }
        Sys::Clone => {
            let _ = write!(o, "child_stack={}, flags=", ptr(a[1]));
            flags_into(o, a[0] & !0xff, CLONE_FLAGS, "0");
            if a[0] & 0xff != 0 {
                let _ = write!(o, "|{}", signal_name((a[0] & 0xff) as u32));
            }
        }
        Sys::Clone3 => {
            // the flags live in a struct the kernel program does not copy; the Fork
            // record says whether the child is a thread
            o.push_str("{flags=");
            match r.thread {
                    Some(true) => o.push_str(
                        "CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID",
                    ),
                    _ => o.push_str("0, exit_signal=SIGCHLD"),
                }
            let _ = write!(o, "}}, {}", a[1]);
        }
        Sys::Fork | Sys::Vfork => {}
        Sys::ExitGroup | Sys::Exit => {
            let _ = write!(o, "{}", a[0] as i32);
        }
        Sys::Close | Sys::Fsync | Sys::Fdatasync | Sys::Syncfs | Sys::Dup | Sys::Fchdir | Sys::Fstat | Sys::Fstatfs => {
            fd(o, deco, a[0]);
            if matches!(sys, Sys::Fstat | Sys::Fstatfs) {
                let _ = write!(o, ", {}", ptr(a[1]));
            }
        }
        Sys::Dup2 | Sys::Dup3 => {
            fd(o, deco, a[0]);
            let _ = write!(o, ", {}", a[1] as i32);
            if sys == Sys::Dup3 {
                let _ = write!(o, ", {}", open_flags(a[2]));
            }
        }
        Sys::Fcntl => {
            fd(o, deco, a[0]);
            let cmd = match a[1] {
                0 => "F_DUPFD",
                1 => "F_GETFD",
                2 => "F_SETFD",
                3 => "F_GETFL",
                4 => "F_SETFL",
                1030 => "F_DUPFD_CLOEXEC",
                _ => "",
            };
            if cmd.is_empty() {
                let _ = write!(o, ", {}, {:#x}", a[1], a[2]);
            } else if matches!(a[1], 1 | 3) {
                let _ = write!(o, ", {cmd}");
            } else if a[1] == 4 {
                let _ = write!(o, ", {cmd}, {}", open_flags(a[2]));
            } else {
                let _ = write!(o, ", {cmd}, {}", a[2] as i64);
            }
        }
        Sys::Sendfile | Sys::Sendfile64 => {
            // out_fd, in_fd (the file sent: both decorated), the offset's address, the count
            fd(o, deco, a[0]);
            o.push_str(", ");
            fd(o, deco, a[1]);
            let _ = write!(o, ", {}, {}", ptr(a[2]), a[3]);
        }
        Sys::Lseek => {
            fd(o, deco, a[0]);
            let wh = ["SEEK_SET", "SEEK_CUR", "SEEK_END", "SEEK_DATA", "SEEK_HOLE"];
            let _ = write!(o, ", {}, {}", a[1] as i64, wh.get(a[2] as usize).copied().unwrap_or("?"));
        }
        Sys::SyncFileRange => {
            fd(o, deco, a[0]);
            let _ = write!(o, ", {}, {}, ", a[1] as i64, a[2] as i64);
            sync_range_flags(o, a[3]);
        }
        Sys::Newfstatat
        | Sys::Statx
        | Sys::Faccessat
        | Sys::Faccessat2
        | Sys::Unlinkat
        | Sys::Mkdirat
        | Sys::Fchmodat => {
            dirfd(o, a[0]);
            o.push_str(", ");
            path(o, d1, a[1]);
            o.push_str(", ");
            // names where strace prints names (its notation for each argument)
            match sys {
                Sys::Newfstatat => {
                    let _ = write!(o, "{}, ", ptr(a[2]));
                    flags_into(o, a[3], AT_FLAGS, "0");
                }
                Sys::Statx => {
                    if a[2] & AT_STATX_SYNC_TYPE == 0 {
                        o.push_str("AT_STATX_SYNC_AS_STAT");
                        if a[2] != 0 {
                            o.push('|');
                        }
                    }
                    if a[2] != 0 {
                        flags_into(o, a[2], AT_FLAGS, "0");
                    }
                    o.push_str(", ");
                    flags_into(o, a[3], STATX_MASK, "0");
                    let _ = write!(o, ", {}", ptr(a[4]));
                }
                Sys::Faccessat | Sys::Faccessat2 => {
                    flags_into(o, a[2], ACCESS_MODES, "F_OK");
                    if sys == Sys::Faccessat2 {
                        o.push_str(", ");
                        flags_into(o, a[3], AT_FLAGS, "0");
                    }
                }
                Sys::Unlinkat => flags_into(o, a[2], AT_FLAGS, "0"),
                _ => {
                    let _ = write!(o, "{:#o}", a[2]);
                }
            }
        }
        Sys::Renameat | Sys::Renameat2 | Sys::Linkat => {
            dirfd(o, a[0]);
            o.push_str(", ");
            path(o, d1, a[1]);
            o.push_str(", ");
            dirfd(o, a[2]);
            o.push_str(", ");
            path(o, d2, a[3]);
        }
        Sys::Readlinkat => {
            dirfd(o, a[0]);
            o.push_str(", ");
            path(o, d1, a[1]);
            o.push_str(", ");
            string(o, d2, a[2]);
            let _ = write!(o, ", {}", a[3]);
        }
        Sys::Readlink => {
            path(o, d1, a[0]);
            o.push_str(", ");
            string(o, d2, a[1]);
            let _ = write!(o, ", {}", a[2]);
        }
        Sys::Rename | Sys::Link | Sys::Symlink => {
            path(o, d1, a[0]);
            o.push_str(", ");
            path(o, d2, a[1]);
        }
        Sys::Stat
        | Sys::Lstat
        | Sys::Access
        | Sys::Unlink
        | Sys::Mkdir
        | Sys::Rmdir
        | Sys::Chdir
        | Sys::Chmod
        | Sys::Statfs => {
            path(o, d1, a[0]);
            match sys {
                Sys::Access => {
                    o.push_str(", ");
                    flags_into(o, a[1], ACCESS_MODES, "F_OK");
                }
                Sys::Mkdir | Sys::Chmod => {
                    let _ = write!(o, ", {:#o}", a[1]);
                }
                Sys::Stat | Sys::Lstat | Sys::Statfs => {
                    let _ = write!(o, ", {}", ptr(a[1]));
                }
                _ => {}
            }
        }
        Sys::Kill | Sys::Tgkill | Sys::Tkill => {
            let n = if sys == Sys::Tgkill { 2 } else { 1 };
            for (i, v) in a.iter().take(n).enumerate() {
                let _ = write!(o, "{}{}", if i > 0 { ", " } else { "" }, *v as i32);
            }
            let _ = write!(o, ", {}", signal_name(a[n] as u32));
        }
        Sys::Wait4 => {
            let _ = write!(o, "{}, {}, ", a[0] as i32, ptr(a[1]));
            flags_into(o, a[2], WAIT_OPTIONS, "0");
            let _ = write!(o, ", {}", ptr(a[3]));
        }
        Sys::Waitid => {
            let _ = write!(o, "{}, {}, {}, ", a[0] as i32, a[1] as i32, ptr(a[2]));
            flags_into(o, a[3], WAIT_OPTIONS, "0");
            let _ = write!(o, ", {}", ptr(a[4]));
        }
        Sys::Futex => {
            let _ = write!(o, "{:#x}, ", a[0]);
            match FUTEX_OPS.get((a[1] & FUTEX_CMD) as usize) {
                Some(op) => {
                    if a[1] & FUTEX_CLOCK_REALTIME != 0 {
                        o.push_str("FUTEX_CLOCK_REALTIME|");
                    }
                    o.push_str(op);
                    if a[1] & FUTEX_PRIVATE != 0 {
                        o.push_str("_PRIVATE");
                    }
                }
                None => {
                    let _ = write!(o, "{:#x}", a[1]);
                }
            }
            let _ = write!(o, ", {}, {}", a[2] as i32, ptr(a[3]));
        }
        Sys::Ioctl if a[1] == FIONREAD => {
            fd(o, deco, a[0]);
            let _ = write!(o, ", FIONREAD, {}", ptr(a[2]));
        }
        Sys::Ioctl => {
            fd(o, deco, a[0]);
            match IOCTLS.iter().find(|(_, v)| *v == a[1]) {
                Some((n, _)) => {
                    let _ = write!(o, ", {n}, {}", ptr(a[2]));
                }
                None => {
                    let _ = write!(o, ", {:#x}, {}", a[1], ptr(a[2]));
                }
            }
        }
        Sys::Mmap => {
            let _ = write!(o, "{}, {}, ", ptr(a[0]), a[1]);
            flags_into(o, a[2], PROT_FLAGS, "PROT_NONE");
            o.push_str(", ");
            flags_into(o, a[3], MAP_FLAGS, "0");
            o.push_str(", ");
            if a[4] as i32 >= 0 {
                fd(o, deco, a[4]);
            } else {
                let _ = write!(o, "{}", a[4] as i32);
            }
            if a[5] == 0 {
                o.push_str(", 0");
            } else {
                let _ = write!(o, ", {:#x}", a[5]);
            }
        }
        Sys::Getdents64 | Sys::Getdents => {
            fd(o, deco, a[0]);
            let _ = write!(o, ", {}, {}", ptr(a[1]), a[2]);
        }
        Sys::Mprotect => {
            let _ = write!(o, "{}, {}, ", ptr(a[0]), a[1]);
            flags_into(o, a[2], PROT_FLAGS, "PROT_NONE");
        }
        Sys::Munmap => {
            let _ = write!(o, "{}, {}", ptr(a[0]), a[1]);
        }
        Sys::Madvise => {
            let _ = write!(o, "{}, {}, ", ptr(a[0]), a[1]);
            match MADVICE.iter().find(|(_, v)| *v == a[2]) {
                Some((n, _)) => o.push_str(n),
                None => {
                    let _ = write!(o, "{:#x}", a[2]);
                }
            }
        }
        Sys::Mremap => {
            let _ = write!(o, "{}, {}, {}, ", ptr(a[0]), a[1], a[2]);
            flags_into(o, a[3], MREMAP_FLAGS, "0");
            if a[3] & 2 != 0 {
                let _ = write!(o, ", {}", ptr(a[4]));
            }
        }
        Sys::Brk | Sys::SetTidAddress => o.push_str(&ptr(a[0])),
        Sys::SetRobustList => {
            let _ = write!(o, "{}, {}", ptr(a[0]), a[1]);
        }
        Sys::Rseq => {
            let _ = write!(o, "{}, {:#x}, {}, {:#x}", ptr(a[0]), a[1], a[2] as i32, a[3] as u32);
        }
        Sys::ArchPrctl => {
            match ARCH_PRCTL.iter().find(|(_, v)| *v == a[0]) {
                Some((n, _)) => o.push_str(n),
                None => {
                    let _ = write!(o, "{:#x}", a[0]);
                }
            }
            let _ = write!(o, ", {}", ptr(a[1]));
        }
        Sys::Prlimit64 => {
            let _ = write!(o, "{}, ", a[0] as i32);
            match RLIMITS.get(a[1] as usize) {
                Some(n) => o.push_str(n),
                None => {
                    let _ = write!(o, "{:#x}", a[1]);
                }
            }
            let _ = write!(o, ", {}, {}", ptr(a[2]), ptr(a[3]));
        }
        Sys::Nanosleep => {
            timespec(o, d1, a[0], "tv_nsec");
            let _ = write!(o, ", {}", ptr(a[1]));
        }
        Sys::ClockNanosleep => {
            match crate::typed::CLOCK_NAMES.get(a[0] as usize) {
                Some(n) => o.push_str(n),
                None => {
                    let _ = write!(o, "{}", a[0] as i32);
                }
            }
            o.push_str(if a[1] & 1 != 0 { ", TIMER_ABSTIME, " } else { ", 0, " });
            timespec(o, d1, a[2], "tv_nsec");
            let _ = write!(o, ", {}", ptr(a[3]));
        }
        Sys::ClockGettime | Sys::ClockGettime64 | Sys::ClockGetres => {
            let id = a[0] as i32;
            match crate::typed::CLOCK_NAMES.get(id as usize) {
                Some(n) if id >= 0 => o.push_str(n),
                _ if id < 0 => {
                    // the kernel's encoding of a CPU clock of a pid or thread, or a clock fd
                    let owner = !(id >> 3);
                    match id & 7 {
                        3 => {
                            let _ = write!(o, "FD_TO_CLOCKID({owner})");
                        }
                        w => {
                            let f = if w & 4 != 0 { "MAKE_THREAD_CPUCLOCK" } else { "MAKE_PROCESS_CPUCLOCK" };
                            let c = ["CPUCLOCK_PROF", "CPUCLOCK_VIRT", "CPUCLOCK_SCHED", "3"][(w & 3) as usize];
                            let _ = write!(o, "{f}({owner}, {c})");
                        }
                    }
                }
                _ => {
                    let _ = write!(o, "{id}");
                }
            }
            let _ = write!(o, ", {}", ptr(a[1]));
        }
        Sys::Getrandom => {
            let _ = write!(o, "{}, {}, ", ptr(a[0]), a[1]);
            flags_into(o, a[2], GRND_FLAGS, "0");
        }
        _ if ZERO_ARG.contains(&name) => {}
        _ => {
            // not decoded: the first argument as a directory fd or an fd when it is one,
            // the next two raw
            if sys.is(Class::AT) {
                dirfd(o, a[0]);
            } else if sys.is(Class::FD) {
                fd(o, deco, a[0]);
            } else {
                let _ = write!(o, "{:#x}", a[0]);
            }
            let _ = write!(o, ", {:#x}, {:#x}", a[1], a[2]);
        }
    }
}

const ZERO_ARG: &[&str] = &[
    "sched_yield",
    "getpid",
    "getppid",
    "gettid",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getpgrp",
    "setsid",
    "pause",
    "sync",
    "fork",
    "vfork",
    "inotify_init",
    "restart_syscall",
    "munlockall",
    "vhangup",
];

fn ptr(v: u64) -> String {
    if v == 0 {
        "NULL".into()
    } else {
        format!("{v:#x}")
    }
}

fn dirfd(o: &mut String, v: u64) {
    let fd = v as i32;
    if fd == -100 {
        o.push_str("AT_FDCWD");
    } else {
        let _ = write!(o, "{fd}");
    }
}

/// strace's quoting: printable ASCII as is, C escapes, `\xHH` for the rest.
fn quote_into(o: &mut String, b: &[u8]) {
    o.push('"');
    for &c in b {
        match c {
            b'"' => o.push_str("\\\""),
            b'\\' => o.push_str("\\\\"),
            b'\n' => o.push_str("\\n"),
            b'\r' => o.push_str("\\r"),
            b'\t' => o.push_str("\\t"),
            0x20..=0x7e => o.push(c as char),
            _ => {
                let _ = write!(o, "\\x{c:02x}");
            }
        }
    }
    o.push('"');
}

/// A buffer: the bytes the kernel copied (`"..."...` when cut), else its address.
fn buf(o: &mut String, d: &RawData<'_>, addr: u64) {
    if d.kind == DataKind::None || d.fault {
        o.push_str(&ptr(addr));
        return;
    }
    quote_into(o, d.bytes);
    if d.truncated {
        o.push_str("...");
    }
}

fn path(o: &mut String, d: &RawData<'_>, addr: u64) {
    if d.kind == DataKind::Str && !d.fault {
        quote_into(o, d.bytes);
        if d.truncated {
            o.push_str("...");
        }
    } else {
        o.push_str(&ptr(addr));
    }
}

fn string(o: &mut String, d: &RawData<'_>, addr: u64) {
    if d.kind != DataKind::None && !d.fault {
        quote_into(o, d.bytes);
    } else {
        o.push_str(&ptr(addr));
    }
}

fn fd_pair(o: &mut String, d: &RawData<'_>, addr: u64, ok: bool) {
    if ok && d.bytes.len() >= 8 {
        let b = d.bytes;
        let x = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let y = i32::from_le_bytes([b[4], b[5], b[6], b[7]]);
        let _ = write!(o, "[{x}, {y}]");
    } else {
        o.push_str(&ptr(addr));
    }
}

fn timespec(o: &mut String, d: &RawData<'_>, addr: u64, frac: &str) {
    if addr == 0 {
        o.push_str("NULL");
    } else if d.bytes.len() >= 16 && !d.fault {
        let b = d.bytes;
        let sec = i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        let f = i64::from_le_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]);
        let _ = write!(o, "{{tv_sec={sec}, {frac}={f}}}");
    } else {
        o.push_str(&ptr(addr));
    }
}

fn sockaddr(o: &mut String, d: &RawData<'_>, addr: u64) {
    let b = d.bytes;
    if d.kind != DataKind::Sockaddr || d.fault || b.len() < 2 {
        o.push_str(&ptr(addr));
        return;
    }
    let fam = u16::from_le_bytes([b[0], b[1]]);
    match fam {
        2 if b.len() >= 8 => {
            let port = u16::from_be_bytes([b[2], b[3]]);
            let _ = write!(
                o,
                "{{sa_family=AF_INET, sin_port=htons({port}), sin_addr=inet_addr(\"{}.{}.{}.{}\")}}",
                b[4], b[5], b[6], b[7]
            );
        }
        10 if b.len() >= 24 => {
            let port = u16::from_be_bytes([b[2], b[3]]);
            let mut ip = [0u8; 16];
            ip.copy_from_slice(&b[8..24]);
            let scope = if b.len() >= 28 { u32::from_le_bytes([b[24], b[25], b[26], b[27]]) } else { 0 };
            let _ = write!(
                o,
                "{{sa_family=AF_INET6, sin6_port=htons({port}), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, \"{}\", &sin6_addr), sin6_scope_id={scope}}}",
                std::net::Ipv6Addr::from(ip)
            );
        }
        1 => {
            let p = &b[2..];
            o.push_str("{sa_family=AF_UNIX");
            if !p.is_empty() {
                o.push_str(", sun_path=");
                if p[0] == 0 {
                    o.push('@');
                    let end = p[1..].iter().position(|&c| c == 0).map_or(p.len(), |i| i + 1);
                    quote_into(o, &p[1..end]);
                } else {
                    let end = p.iter().position(|&c| c == 0).unwrap_or(p.len());
                    quote_into(o, &p[..end]);
                }
            }
            o.push('}');
        }
        16 if b.len() >= 12 => {
            let pid = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
            let groups = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
            let _ = write!(o, "{{sa_family=AF_NETLINK, nl_pid={pid}, nl_groups={groups:08x}}}");
        }
        f => {
            let _ = write!(o, "{{sa_family={}}}", family(f as u64));
        }
    }
}

fn msghdr(o: &mut String, d1: &RawData<'_>, d2: &RawData<'_>) {
    o.push_str("{msg_name=");
    if d2.kind == DataKind::Sockaddr && !d2.bytes.is_empty() {
        sockaddr(o, d2, 1);
        let _ = write!(o, ", msg_namelen={}", d2.bytes.len());
    } else {
        o.push_str("NULL, msg_namelen=0");
    }
    o.push_str(", msg_iov=[{iov_base=");
    buf(o, d1, 1);
    let _ = write!(o, ", iov_len={}}}], msg_iovlen=1, msg_controllen=0, msg_flags=0}}", d1.bytes.len());
}

fn family(v: u64) -> String {
    match v {
        0 => "AF_UNSPEC".into(),
        1 => "AF_UNIX".into(),
        2 => "AF_INET".into(),
        10 => "AF_INET6".into(),
        16 => "AF_NETLINK".into(),
        17 => "AF_PACKET".into(),
        n => format!("{n} /* AF_??? */"),
    }
}

fn sock_type(v: u64) -> String {
    let base = match v & 0xf {
        1 => "SOCK_STREAM",
        2 => "SOCK_DGRAM",
        3 => "SOCK_RAW",
        4 => "SOCK_RDM",
        5 => "SOCK_SEQPACKET",
        _ => "SOCK_???",
    };
    let mut o = base.to_string();
    if v & 0o4000 != 0 {
        o.push_str("|SOCK_NONBLOCK");
    }
    if v & 0o2000000 != 0 {
        o.push_str("|SOCK_CLOEXEC");
    }
    o
}

fn sock_flags(v: u64) -> String {
    let mut parts = Vec::new();
    if v & 0o4000 != 0 {
        parts.push("SOCK_NONBLOCK");
    }
    if v & 0o2000000 != 0 {
        parts.push("SOCK_CLOEXEC");
    }
    if parts.is_empty() {
        "0".into()
    } else {
        parts.join("|")
    }
}

fn ipproto(v: u64) -> String {
    match v {
        0 => "IPPROTO_IP".into(),
        6 => "IPPROTO_TCP".into(),
        17 => "IPPROTO_UDP".into(),
        58 => "IPPROTO_ICMPV6".into(),
        n => n.to_string(),
    }
}

fn msg_flags(v: u64) -> String {
    let mut o = String::new();
    flags_into(&mut o, v, MSG_FLAGS, "0");
    o
}

fn sockopt(level: u64, opt: u64) -> (String, String) {
    let l = SOL_NAMES.iter().find(|(_, v)| *v == level).map_or_else(|| level.to_string(), |(n, _)| n.to_string());
    let o = SOCKOPT_NAMES
        .iter()
        .find(|(lv, _, v)| *lv == level && *v == opt)
        .map_or_else(|| opt.to_string(), |(_, n, _)| n.to_string());
    (l, o)
}

/// `, FLAGS` and, when they create, `, 0MODE`.
fn open_tail(o: &mut String, flags: u64, mode: u64) {
    let _ = write!(o, ", {}", open_flags(flags));
    if flags & 0o100 != 0 {
        let _ = write!(o, ", 0{mode:o}");
    }
}

fn open_flags(v: u64) -> String {
    let mut o = String::from(match v & 3 {
        0 => "O_RDONLY",
        1 => "O_WRONLY",
        2 => "O_RDWR",
        _ => "O_ACCMODE",
    });
    let rest = v & !3 & !0o100000; // O_LARGEFILE is implied on 64-bit
    if rest != 0 {
        o.push('|');
        flags_into(&mut o, rest, OPEN_FLAGS, "");
    }
    o
}

/// `A|B|0x40` for the bits of `v`; `zero` when no bit is set.
fn flags_into(o: &mut String, v: u64, names: &[(&str, u64)], zero: &str) {
    if v == 0 {
        o.push_str(zero);
        return;
    }
    let mut left = v;
    let mut first = true;
    for &(n, bit) in names {
        if bit != 0 && left & bit == bit {
            if !first {
                o.push('|');
            }
            o.push_str(n);
            first = false;
            left &= !bit;
        }
    }
    if left != 0 {
        if !first {
            o.push('|');
        }
        let _ = write!(o, "{left:#x}");
    }
}

/// `*at` flags (the sync-type bits of statx are [`AT_STATX_SYNC_TYPE`]).
const AT_FLAGS: &[(&str, u64)] = &[
    ("AT_SYMLINK_NOFOLLOW", 0x100),
    ("AT_REMOVEDIR", 0x200),
    ("AT_SYMLINK_FOLLOW", 0x400),
    ("AT_NO_AUTOMOUNT", 0x800),
    ("AT_EMPTY_PATH", 0x1000),
    ("AT_STATX_FORCE_SYNC", 0x2000),
    ("AT_STATX_DONT_SYNC", 0x4000),
    ("AT_RECURSIVE", 0x8000),
];
const AT_STATX_SYNC_TYPE: u64 = 0x6000;

const STATX_MASK: &[(&str, u64)] = &[
    ("STATX_BASIC_STATS", 0x7ff),
    ("STATX_TYPE", 0x1),
    ("STATX_MODE", 0x2),
    ("STATX_NLINK", 0x4),
    ("STATX_UID", 0x8),
    ("STATX_GID", 0x10),
    ("STATX_ATIME", 0x20),
    ("STATX_MTIME", 0x40),
    ("STATX_CTIME", 0x80),
    ("STATX_INO", 0x100),
    ("STATX_SIZE", 0x200),
    ("STATX_BLOCKS", 0x400),
    ("STATX_BTIME", 0x800),
    ("STATX_MNT_ID", 0x1000),
];

const ACCESS_MODES: &[(&str, u64)] = &[("R_OK", 4), ("W_OK", 2), ("X_OK", 1)];

const PROT_FLAGS: &[(&str, u64)] = &[
    ("PROT_READ", 0x1),
    ("PROT_WRITE", 0x2),
    ("PROT_EXEC", 0x4),
    ("PROT_SEM", 0x8),
    ("PROT_GROWSDOWN", 0x0100_0000),
    ("PROT_GROWSUP", 0x0200_0000),
];

/// madvise's advice values (the common ones; others print as numbers, as strace does for
/// values it does not know).
const MADVICE: &[(&str, u64)] = &[
    ("MADV_NORMAL", 0),
    ("MADV_RANDOM", 1),
    ("MADV_SEQUENTIAL", 2),
    ("MADV_WILLNEED", 3),
    ("MADV_DONTNEED", 4),
    ("MADV_FREE", 8),
    ("MADV_REMOVE", 9),
    ("MADV_DONTFORK", 10),
    ("MADV_DOFORK", 11),
    ("MADV_MERGEABLE", 12),
    ("MADV_UNMERGEABLE", 13),
    ("MADV_HUGEPAGE", 14),
    ("MADV_NOHUGEPAGE", 15),
    ("MADV_DONTDUMP", 16),
    ("MADV_DODUMP", 17),
    ("MADV_WIPEONFORK", 18),
    ("MADV_KEEPONFORK", 19),
    ("MADV_COLD", 20),
    ("MADV_PAGEOUT", 21),
    ("MADV_POPULATE_READ", 22),
    ("MADV_POPULATE_WRITE", 23),
    ("MADV_DONTNEED_LOCKED", 24),
    ("MADV_COLLAPSE", 25),
];

const MREMAP_FLAGS: &[(&str, u64)] = &[("MREMAP_MAYMOVE", 1), ("MREMAP_FIXED", 2), ("MREMAP_DONTUNMAP", 4)];

/// The sharing type first (MAP_SHARED_VALIDATE is both of the others' bits).
const MAP_FLAGS: &[(&str, u64)] = &[
    ("MAP_SHARED_VALIDATE", 0x3),
    ("MAP_SHARED", 0x1),
    ("MAP_PRIVATE", 0x2),
    ("MAP_FIXED", 0x10),
    ("MAP_ANONYMOUS", 0x20),
    ("MAP_32BIT", 0x40),
    ("MAP_GROWSDOWN", 0x100),
    ("MAP_DENYWRITE", 0x800),
    ("MAP_EXECUTABLE", 0x1000),
    ("MAP_LOCKED", 0x2000),
    ("MAP_NORESERVE", 0x4000),
    ("MAP_POPULATE", 0x8000),
    ("MAP_NONBLOCK", 0x10000),
    ("MAP_STACK", 0x20000),
    ("MAP_HUGETLB", 0x40000),
    ("MAP_SYNC", 0x80000),
    ("MAP_FIXED_NOREPLACE", 0x100000),
];

const GRND_FLAGS: &[(&str, u64)] = &[("GRND_NONBLOCK", 0x1), ("GRND_RANDOM", 0x2), ("GRND_INSECURE", 0x4)];

const ARCH_PRCTL: &[(&str, u64)] = &[
    ("ARCH_SET_GS", 0x1001),
    ("ARCH_SET_FS", 0x1002),
    ("ARCH_GET_FS", 0x1003),
    ("ARCH_GET_GS", 0x1004),
    ("ARCH_GET_CPUID", 0x1011),
    ("ARCH_SET_CPUID", 0x1012),
];

const RLIMITS: &[&str] = &[
    "RLIMIT_CPU",
    "RLIMIT_FSIZE",
    "RLIMIT_DATA",
    "RLIMIT_STACK",
    "RLIMIT_CORE",
    "RLIMIT_RSS",
    "RLIMIT_NPROC",
    "RLIMIT_NOFILE",
    "RLIMIT_MEMLOCK",
    "RLIMIT_AS",
    "RLIMIT_LOCKS",
    "RLIMIT_SIGPENDING",
    "RLIMIT_MSGQUEUE",
    "RLIMIT_NICE",
    "RLIMIT_RTPRIO",
    "RLIMIT_RTTIME",
];

/// Terminal and file ioctls programs make at start-up (isatty, window size, O_NONBLOCK).
const IOCTLS: &[(&str, u64)] = &[
    ("TCGETS", 0x5401),
    ("TCSETS", 0x5402),
    ("TCSETSW", 0x5403),
    ("TCSETSF", 0x5404),
    ("TIOCGPGRP", 0x540f),
    ("TIOCSPGRP", 0x5410),
    ("TIOCGWINSZ", 0x5413),
    ("TIOCSWINSZ", 0x5414),
    ("FIONBIO", 0x5421),
    ("FIONCLEX", 0x5450),
    ("FIOCLEX", 0x5451),
    ("FIOASYNC", 0x5452),
];
/// sync_file_range's flags as strace shows them.
fn sync_range_flags(o: &mut String, v: u64) {
    const NAMES: &[(&str, u64)] =
        &[("SYNC_FILE_RANGE_WAIT_BEFORE", 1), ("SYNC_FILE_RANGE_WRITE", 2), ("SYNC_FILE_RANGE_WAIT_AFTER", 4)];
    flags_into(o, v, NAMES, "0");
}

const OPEN_FLAGS: &[(&str, u64)] = &[
    ("O_TMPFILE", 0o20200000),
    ("O_SYNC", 0o4010000),
    ("O_CREAT", 0o100),
    ("O_EXCL", 0o200),
    ("O_NOCTTY", 0o400),
    ("O_TRUNC", 0o1000),
    ("O_APPEND", 0o2000),
    ("O_NONBLOCK", 0o4000),
    ("O_DSYNC", 0o10000),
    ("O_ASYNC", 0o20000),
    ("O_DIRECT", 0o40000),
    ("O_DIRECTORY", 0o200000),
    ("O_NOFOLLOW", 0o400000),
    ("O_NOATIME", 0o1000000),
    ("O_CLOEXEC", 0o2000000),
    ("O_PATH", 0o10000000),
];

const MSG_FLAGS: &[(&str, u64)] = &[
    ("MSG_OOB", 0x1),
    ("MSG_PEEK", 0x2),
    ("MSG_DONTROUTE", 0x4),
    ("MSG_TRUNC", 0x20),
    ("MSG_DONTWAIT", 0x40),
    ("MSG_EOR", 0x80),
    ("MSG_WAITALL", 0x100),
    ("MSG_NOSIGNAL", 0x4000),
    ("MSG_MORE", 0x8000),
    ("MSG_CMSG_CLOEXEC", 0x40000000),
];

const WAIT_OPTIONS: &[(&str, u64)] = &[
    ("WNOHANG", 0x1),
    ("WUNTRACED", 0x2),
    ("WEXITED", 0x4),
    ("WCONTINUED", 0x8),
    ("WNOWAIT", 0x1000000),
    ("__WNOTHREAD", 0x20000000),
    ("__WALL", 0x40000000),
    ("__WCLONE", 0x80000000),
];

const FUTEX_PRIVATE: u64 = 128;
const FUTEX_CLOCK_REALTIME: u64 = 256;
const FUTEX_CMD: u64 = !(FUTEX_PRIVATE | FUTEX_CLOCK_REALTIME) & 0xffff_ffff;
const FIONREAD: u64 = 0x541b;

const CLONE_FLAGS: &[(&str, u64)] = &[
    ("CLONE_VM", 0x100),
    ("CLONE_FS", 0x200),
    ("CLONE_FILES", 0x400),
    ("CLONE_SIGHAND", 0x800),
    ("CLONE_PIDFD", 0x1000),
    ("CLONE_PTRACE", 0x2000),
    ("CLONE_VFORK", 0x4000),
    ("CLONE_PARENT", 0x8000),
    ("CLONE_THREAD", 0x10000),
    ("CLONE_NEWNS", 0x20000),
    ("CLONE_SYSVSEM", 0x40000),
    ("CLONE_SETTLS", 0x80000),
    ("CLONE_PARENT_SETTID", 0x100000),
    ("CLONE_CHILD_CLEARTID", 0x200000),
    ("CLONE_UNTRACED", 0x800000),
    ("CLONE_CHILD_SETTID", 0x1000000),
    ("CLONE_NEWNET", 0x40000000),
];

/// x86_64 signal names.
pub fn signal_name(n: u32) -> &'static str {
    const NAMES: [&str; 32] = [
        "0",
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];
    NAMES.get(n as usize).copied().unwrap_or("SIGRT")
}

// ---- the analysis' questions, answered from the kernel's values ----
//
// Each answer is the one the text accessors give on what `render` prints (a test checks it on
// every x86_64 call): the detectors behave the same on a recording and on its export.

use crate::args::{self, FdArg, SockAddr, Timeout};
use crate::typed::{
    CloneFlags, EpollCtl, FcntlCmd, Futex, FutexCmd, FutexOp, IoctlReq, MemKind, MemOp, MsgFlags, OpenFlags, SockOpt,
    WaitOptions,
};
use std::borrow::Cow;
use std::net::IpAddr;

fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn le64(b: &[u8], at: usize) -> Option<i64> {
    Some(i64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The argument `render` prints as a path from `data1`, by call.
fn path_at(sys: Sys) -> Option<usize> {
    Some(match sys {
        Sys::Open
        | Sys::Creat
        | Sys::Execve
        | Sys::Readlink
        | Sys::Rename
        | Sys::Link
        | Sys::Symlink
        | Sys::Stat
        | Sys::Lstat
        | Sys::Access
        | Sys::Unlink
        | Sys::Mkdir
        | Sys::Rmdir
        | Sys::Chdir
        | Sys::Chmod
        | Sys::Statfs => 0,
        Sys::Openat
        | Sys::Openat2
        | Sys::Execveat
        | Sys::Newfstatat
        | Sys::Statx
        | Sys::Faccessat
        | Sys::Faccessat2
        | Sys::Unlinkat
        | Sys::Mkdirat
        | Sys::Fchmodat
        | Sys::Renameat
        | Sys::Renameat2
        | Sys::Linkat
        | Sys::Readlinkat => 1,
        _ => return None,
    })
}

impl<'a> RawArgs<'a> {
    pub(crate) fn first_fd(&self) -> FdArg<'a> {
        FdArg { num: self.regs[0] as i32, deco: None }
    }

    pub(crate) fn path(&self, sys: Sys, idx: usize) -> Option<Cow<'a, str>> {
        if path_at(sys) != Some(idx) {
            return None;
        }
        self.data1.get(DataKind::Str).map(String::from_utf8_lossy)
    }

    pub(crate) fn timeout(&self, sys: Sys) -> Option<Timeout> {
        let a = &self.regs;
        let ms = |v: u64| {
            let v = v as i32;
            Some(if v < 0 { Timeout::Infinite } else { Timeout::Ns(v as u64 * 1_000_000) })
        };
        let ts = |addr: u64, micro: bool| {
            if addr == 0 {
                return Some(Timeout::Infinite);
            }
            let b = self.data1.bytes;
            if b.len() < 16 || self.data1.fault {
                return None;
            }
            let sec = u64::try_from(le64(b, 0)?).ok()?;
            let frac = u64::try_from(le64(b, 8)?).ok()?;
            let frac_ns = if micro { frac.saturating_mul(1000) } else { frac };
            Some(Timeout::Ns(sec.saturating_mul(1_000_000_000).saturating_add(frac_ns)))
        };
        match sys {
            Sys::Poll => ms(a[2]),
            Sys::EpollWait | Sys::EpollPwait => ms(a[3]),
            Sys::Ppoll => ts(a[2], false),
            Sys::EpollPwait2 => ts(a[3], false),
            Sys::Pselect6 => ts(a[4], false),
            Sys::Select | Sys::NewSelect => ts(a[4], true),
            _ => None,
        }
    }

    pub(crate) fn sockaddr(&self, sys: Sys) -> Option<SockAddr> {
        let d = match sys {
            Sys::Sendto | Sys::Recvfrom if self.regs[4] != 0 => &self.data2,
            Sys::Sendmsg | Sys::Recvmsg | Sys::Sendmmsg | Sys::Recvmmsg => &self.data2,
            Sys::Connect | Sys::Bind => &self.data1,
            Sys::Accept | Sys::Accept4 | Sys::Getsockname | Sys::Getpeername if self.regs[1] != 0 => &self.data1,
            _ => return None,
        };
        let b = d.get(DataKind::Sockaddr).filter(|b| b.len() >= 2)?;
        let port = || u16::from_be_bytes([b[2], b[3]]);
        match u16::from_le_bytes([b[0], b[1]]) {
            2 if b.len() < 8 => Some(SockAddr::Other { family: "AF_INET}".into() }),
            10 if b.len() < 24 => Some(SockAddr::Other { family: "AF_INET6}".into() }),
            2 => {
                let ip: [u8; 4] = b.get(4..8)?.try_into().ok()?;
                Some(SockAddr::Inet { ip: IpAddr::from(ip), port: port() })
            }
            10 => {
                let ip: [u8; 16] = b.get(8..24)?.try_into().ok()?;
                Some(SockAddr::Inet { ip: IpAddr::from(ip), port: port() })
            }
            1 => {
                let p = &b[2..];
                let path = match p.first() {
                    None => String::new(),
                    Some(0) => {
                        let end = p[1..].iter().position(|&c| c == 0).map_or(p.len(), |i| i + 1);
                        format!("@{}", String::from_utf8_lossy(&p[1..end]))
                    }
                    Some(_) => {
                        let end = p.iter().position(|&c| c == 0).unwrap_or(p.len());
                        String::from_utf8_lossy(&p[..end]).into_owned()
                    }
                };
                Some(SockAddr::Unix { path })
            }
            16 if b.len() >= 12 => Some(SockAddr::Netlink { pid: le32(b, 4).unwrap_or(0) }),
            // `{sa_family=AF_X}` alone: the text decoder reads the family with its brace
            f @ (0 | 16 | 17) => Some(SockAddr::Other { family: format!("{}}}", family(f as u64)) }),
            _ => Some(SockAddr::Other { family: "AF_???".into() }),
        }
    }

    pub(crate) fn socket_kind(&self) -> crate::TargetKind {
        let (fam, ty) = (self.regs[0], self.regs[1] & 0xf);
        crate::typed::socket_kind_of(fam == 2 || fam == 10, fam == 10, fam == 1, fam == 16, ty == 1, ty == 2)
    }

    pub(crate) fn open_flags(&self, sys: Sys) -> Option<OpenFlags> {
        let a = &self.regs;
        const NB_CX: u64 = 0o4000 | 0o2000000;
        Some(OpenFlags(match sys {
            Sys::Open | Sys::Pipe2 | Sys::Eventfd2 | Sys::TimerfdCreate => a[1],
            Sys::Socket => a[1] & (NB_CX | 0xf),
            Sys::Openat | Sys::Dup3 => a[2],
            Sys::Accept4 => a[3] & NB_CX,
            Sys::InotifyInit1 | Sys::EpollCreate1 => a[0],
            _ => return None,
        }))
    }

    pub(crate) fn msg_flags(&self, sys: Sys) -> Option<MsgFlags> {
        Some(MsgFlags(match sys {
            Sys::Sendto | Sys::Recvfrom | Sys::Sendmmsg | Sys::Recvmmsg => self.regs[3],
            Sys::Sendmsg | Sys::Recvmsg => self.regs[2],
            _ => return None,
        }))
    }

    pub(crate) fn clone_flags(&self, sys: Sys) -> CloneFlags {
        let both = CloneFlags::THREAD.0 | CloneFlags::FILES.0;
        CloneFlags(match sys {
            Sys::Clone => self.regs[0] & both,
            _ if self.thread == Some(true) => both,
            _ => 0,
        })
    }

    /// Register `i` (an argument) as it was.
    pub(crate) fn reg(&self, i: usize) -> u64 {
        self.regs.get(i).copied().unwrap_or(0)
    }

    pub(crate) fn wait_options(&self, sys: Sys) -> WaitOptions {
        WaitOptions(match sys {
            Sys::Wait4 => self.regs[2],
            Sys::Waitid => self.regs[3],
            _ => 0,
        })
    }

    pub(crate) fn futex_op(&self) -> FutexOp {
        // FUTEX_WAIT, FUTEX_LOCK_PI, FUTEX_WAIT_BITSET, FUTEX_WAIT_REQUEUE_PI, FUTEX_LOCK_PI2
        match self.regs[1] & FUTEX_CMD {
            0 | 6 | 9 | 11 | 13 => FutexOp::Wait,
            _ => FutexOp::Other,
        }
    }

    pub(crate) fn futex(&self) -> Futex {
        Futex { addr: self.regs[0], cmd: FutexCmd::of(self.regs[1] & FUTEX_CMD), val: i64::from(self.regs[2] as i32) }
    }

    pub(crate) fn mem_op(&self, kind: MemKind, ret: Option<i64>) -> MemOp {
        let a = &self.regs;
        let mut op = MemOp { kind, addr: a[0], len: a[1], new_len: 0, anon: false, stack: false, reserve: false };
        match kind {
            MemKind::Map => {
                op.addr = ret.map_or(0, |v| v as u64);
                op.anon = a[3] & 0x20 != 0;
                op.stack = a[3] & 0x20000 != 0;
                op.reserve = a[2] == 0;
            }
            MemKind::Brk => op.len = 0,
            MemKind::Remap => op.new_len = a[2],
            MemKind::Advise if matches!(a[2], 4 | 8 | 9) => op.kind = MemKind::Release,
            _ => {}
        }
        op
    }

    pub(crate) fn ioctl_req(&self) -> IoctlReq {
        if self.regs[1] == FIONREAD {
            IoctlReq::Fionread
        } else {
            IoctlReq::Other
        }
    }

    pub(crate) fn fcntl_cmd(&self, sys: Sys) -> FcntlCmd {
        match (sys, self.regs[1]) {
            (Sys::Fcntl, 0 | 1030) => FcntlCmd::Dup,
            (Sys::Fcntl, 1 | 3) => FcntlCmd::Get,
            _ => FcntlCmd::Other,
        }
    }

    pub(crate) fn fd_pair(&self) -> Option<(i32, i32)> {
        let b = self.data1.bytes;
        if (-4095..0).contains(&self.ret) || b.len() < 8 {
            return None;
        }
        Some((le32(b, 0)? as i32, le32(b, 4)? as i32))
    }

    pub(crate) fn sockopt(&self) -> SockOpt {
        let b = self.data1.bytes;
        // setsockopt's value in, getsockopt's out (copied at exit when it succeeded)
        let value = (b.len() >= 4).then(|| le32(b, 0).map(|v| v as i32 as i64)).flatten();
        SockOpt { level: Some(self.regs[1]), name: Some(self.regs[2]), value }
    }

    /// The request of nanosleep (arg 0) or clock_nanosleep (arg 2), when it was copied.
    pub(crate) fn sleep_ns(&self, sys: Sys) -> Option<u64> {
        let addr = match sys {
            Sys::Nanosleep => self.regs[0],
            Sys::ClockNanosleep => self.regs[2],
            _ => return None,
        };
        let b = self.data1.bytes;
        if addr == 0 || self.data1.fault || b.len() < 16 {
            return None;
        }
        let sec = u64::try_from(le64(b, 0)?).ok()?;
        let ns = u64::try_from(le64(b, 8)?).ok()?;
        Some(sec.saturating_mul(1_000_000_000).saturating_add(ns))
    }

    pub(crate) fn epoll_ctl(&self) -> EpollCtl {
        let b = self.data1.bytes;
        let op = if (1..=3).contains(&self.regs[1]) { self.regs[1] as u8 } else { 0 };
        EpollCtl { op, fd: self.regs[2] as i32, events: if b.len() >= 12 { le32(b, 0) } else { None } }
    }

    /// The payload `render` prints as the call's second argument, when it is simply `data1`
    /// (`None`: another layout, ask the rendered text).
    fn simple_payload(&self, sys: Sys) -> Option<Option<RawData<'a>>> {
        let printed = |d: RawData<'a>| (d.kind != DataKind::None && !d.fault).then_some(d);
        match sys {
            Sys::Read | Sys::Recv | Sys::Write | Sys::Send | Sys::Readv | Sys::Writev | Sys::Sendto | Sys::Recvfrom => {
                Some(printed(self.data1))
            }
            Sys::Pread64 | Sys::Pwrite64 => Some(None),
            Sys::Sendmsg | Sys::Recvmsg | Sys::Sendmmsg | Sys::Recvmmsg
                if self.data2.kind != DataKind::Sockaddr || self.data2.bytes.is_empty() =>
            {
                Some(printed(self.data1))
            }
            _ => None,
        }
    }

    pub(crate) fn payload_prefix(&self, sys: Sys, name: &str, out: &mut [u8]) -> usize {
        match self.simple_payload(sys) {
            Some(Some(d)) => {
                let n = d.bytes.len().min(out.len());
                out[..n].copy_from_slice(&d.bytes[..n]);
                n
            }
            Some(None) => 0,
            None => {
                let text = self.text(sys, name);
                let Some(arg) = args::split(&text).nth(1) else { return 0 };
                let Some(q) = arg.find('"') else { return 0 };
                args::unescape_prefix(&arg[q + 1..], out)
            }
        }
    }

    pub(crate) fn payloads(&self, sys: Sys, name: &str) -> Vec<(Vec<u8>, bool)> {
        match self.simple_payload(sys) {
            Some(Some(d)) => vec![(d.bytes.to_vec(), d.truncated)],
            Some(None) => Vec::new(),
            None => args::call_buffers(sys, &self.text(sys, name)),
        }
    }

    /// The arguments in strace's notation, without decorations.
    pub fn text(&self, sys: Sys, name: &str) -> String {
        let mut s = String::new();
        render(&mut s, sys, name, self, &|_| None);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::typed::{MsgFlags, OpenFlags};
    use crate::{Args, Ret, Syscall};

    fn data(kind: DataKind, bytes: &[u8], truncated: bool, fault: bool) -> RawData<'_> {
        RawData { kind, bytes, truncated, fault }
    }

    #[test]
    fn waits_are_decoded_from_the_kernel_values() {
        let call = |nr: u32, regs: [u64; 6]| RawArgs { nr, regs, ..Default::default() };
        let sc = |r: &'static RawArgs<'static>| {
            let sys = Sys::from_x86_64(r.nr);
            Syscall {
                sys,
                name: sys.name(),
                args: Args::Raw(r),
                ret: Ret::Unknown,
                dur_ns: None,
                resumed: false,
                pre: crate::Pre::NONE,
            }
        };
        let futex = Box::leak(Box::new(call(202, [0x7f00, 0x80, 2, 0, 0, 0])));
        assert_eq!(sc(futex).futex_op(), Some(crate::FutexOp::Wait));
        assert_eq!(futex.text(Sys::Futex, "futex"), "0x7f00, FUTEX_WAIT_PRIVATE, 2, NULL");
        let wake = Box::leak(Box::new(call(202, [0x7f00, 0x81, 1, 0, 0, 0])));
        assert_eq!(sc(wake).futex_op(), Some(crate::FutexOp::Other));
        let wait4 = Box::leak(Box::new(call(61, [u64::MAX, 0, 1, 0, 0, 0])));
        assert!(sc(wait4).wait_options().is_some_and(|o| o.contains(crate::WaitOptions::NOHANG)));
        assert_eq!(wait4.text(Sys::Wait4, "wait4"), "-1, NULL, WNOHANG, NULL");
        let ioctl = Box::leak(Box::new(call(16, [3, 0x541b, 0x7ff0, 0, 0, 0])));
        assert_eq!(sc(ioctl).ioctl_req(), Some(crate::IoctlReq::Fionread));
    }

    /// Every question the analysis asks, answered from raw values and from their rendering,
    /// for every x86_64 call and a spread of registers and copied memory: the same answers.
    #[test]
    fn raw_answers_equal_text_answers() {
        let inet = [2u8, 0, 0x1f, 0x90, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
        let mut inet6 = [0u8; 28];
        inet6[0] = 10;
        inet6[3] = 53;
        inet6[18..24].copy_from_slice(&[0xff, 0xff, 10, 0, 0, 1]);
        let unix = b"\x01\x00/run/x \"q\"\\.sock\x00junk";
        let abstract_ = b"\x01\x00\x00name\x00";
        let netlink = [16u8, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0];
        let mut ts = [0u8; 16];
        ts[0] = 1;
        ts[8..10].copy_from_slice(&500u16.to_le_bytes());
        let mut ev = [0u8; 12];
        ev[..4].copy_from_slice(&(1u32 | 1 << 28 | 0x40).to_le_bytes());
        let pair = [3u8, 0, 0, 0, 4, 0, 0, 0];
        let datas = [
            data(DataKind::None, b"", false, false),
            data(DataKind::Str, b"/etc/hosts", false, false),
            data(DataKind::Str, "caf\u{e9}/\x01\"x\\".as_bytes(), true, false),
            data(DataKind::Str, b"/x", false, true),
            data(DataKind::Bytes, b"\x16\x03\x01\x00\xa5\x01GET\r\n\x00\xff\"\\", true, false),
            data(DataKind::Bytes, &ts, false, false),
            data(DataKind::Bytes, &ev, false, false),
            data(DataKind::Bytes, &pair, false, false),
            data(DataKind::Sockaddr, &inet, false, false),
            data(DataKind::Sockaddr, &inet6, false, false),
            data(DataKind::Sockaddr, unix, false, false),
            data(DataKind::Sockaddr, abstract_, false, false),
            data(DataKind::Sockaddr, &netlink, false, false),
            data(DataKind::Sockaddr, &inet[..6], false, false),
            data(DataKind::Sockaddr, &[0u8, 0], false, false),
        ];
        let values: [u64; 18] = [
            0,
            1,
            2,
            3,
            6,
            10,
            15,
            16,
            1030,
            0o4000 | 1,
            0o4010101 | 0o2000000,
            0x10000 | 0x400 | 0x11,
            0x7ff0,
            u64::MAX,
            (-100i64) as u64,
            0x541b,
            0x80,
            0x189,
        ];
        let mut seed = 0x2545f4914f6cdd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut checked = 0;
        for nr in 0..crate::syscalls_x86_64::NAMES.len() as u32 {
            let sys = Sys::from_x86_64(nr);
            let name = if sys == Sys::Other { "syscall" } else { sys.name() };
            for round in 0..90 {
                let mut regs = [0u64; 6];
                for r in &mut regs {
                    *r = values[(next() % values.len() as u64) as usize];
                }
                let d1 = datas[round % datas.len()];
                let d2 = datas[(next() % datas.len() as u64) as usize];
                let ret = [0i64, 3, -11][(next() % 3) as usize];
                let thread = [None, Some(true), Some(false)][(next() % 3) as usize];
                let raw = RawArgs { nr, regs, ret, data1: d1, data2: d2, thread };
                let text = raw.text(sys, name);
                let ret = if ret < 0 {
                    Ret::Err { val: -1, errno: "EAGAIN" }
                } else {
                    Ret::Ok { val: ret, deco: None, note: "" }
                };
                let r = Syscall {
                    sys,
                    name,
                    args: Args::Raw(&raw),
                    ret: ret.clone(),
                    dur_ns: None,
                    resumed: false,
                    pre: crate::Pre::NONE,
                };
                // the text as read (each accessor splits it) and as the reader hands it on
                // (fd, path, flags, counts decoded once): both answer as the raw values do
                for decoded in [false, true] {
                    let mut t = Syscall {
                        sys,
                        name,
                        args: Args::Text(&text),
                        ret: ret.clone(),
                        dur_ns: None,
                        resumed: false,
                        pre: crate::Pre::NONE,
                    };
                    if decoded {
                        t.decode_pre();
                    }
                    let what = format!("{name}({text}) {raw:?} decoded={decoded}");
                    assert_eq!(r.fd(), t.fd(), "fd: {what}");
                    assert_eq!(r.path(), t.path(), "path: {what}");
                    assert_eq!(r.timeout(), t.timeout(), "timeout: {what}");
                    assert_eq!(r.sockaddr(), t.sockaddr(), "sockaddr: {what}");
                    for f in
                        [OpenFlags::CREAT, OpenFlags::NONBLOCK, OpenFlags::CLOEXEC, OpenFlags::SYNC, OpenFlags::DSYNC]
                    {
                        let has = |s: &Syscall| s.open_flags().map(|o| o.contains(f));
                        assert_eq!(has(&r), has(&t), "open_flags {f:?}: {what}");
                    }
                    for f in [MsgFlags::PEEK, MsgFlags::DONTWAIT, MsgFlags::OOB, MsgFlags::WAITALL] {
                        let has = |s: &Syscall| s.msg_flags().map(|o| o.contains(f));
                        assert_eq!(has(&r), has(&t), "msg_flags {f:?}: {what}");
                    }
                    assert_eq!(r.clone_flags(), t.clone_flags(), "clone_flags: {what}");
                    let nohang = |s: &Syscall| s.wait_options().map(|o| o.contains(crate::WaitOptions::NOHANG));
                    assert_eq!(nohang(&r), nohang(&t), "wait_options: {what}");
                    assert_eq!(r.futex_op(), t.futex_op(), "futex_op: {what}");
                    assert_eq!(r.futex(), t.futex(), "futex: {what}");
                    assert_eq!(r.mem_op(), t.mem_op(), "mem_op: {what}");
                    assert_eq!(r.fcntl_cmd(), t.fcntl_cmd(), "fcntl_cmd: {what}");
                    assert_eq!(r.sync_range_waits(), t.sync_range_waits(), "sync_range_waits: {what}");
                    assert_eq!(r.ioctl_req(), t.ioctl_req(), "ioctl_req: {what}");
                    assert_eq!(r.prctl_name(), t.prctl_name(), "prctl_name: {what}");
                    assert_eq!(r.memfd_name(), t.memfd_name(), "memfd_name: {what}");
                    assert_eq!(r.unlink_path(), t.unlink_path(), "unlink_path: {what}");
                    assert_eq!(r.mkdir_path(), t.mkdir_path(), "mkdir_path: {what}");
                    assert_eq!(r.dir_fd(), t.dir_fd(), "dir_fd: {what}");
                    assert_eq!(r.socket_kind(), t.socket_kind(), "socket_kind: {what}");
                    assert_eq!(r.fd_pair(), t.fd_pair(), "fd_pair: {what}");
                    assert_eq!(r.polled_fds(), t.polled_fds(), "polled_fds: {what}");
                    assert_eq!(r.sockopt(), t.sockopt(), "sockopt: {what}");
                    assert_eq!(r.epoll_ctl(), t.epoll_ctl(), "epoll_ctl: {what}");
                    assert_eq!(r.clock_id(), t.clock_id(), "clock_id: {what}");
                    assert_eq!(r.sleep_ns(), t.sleep_ns(), "sleep_ns: {what}");
                    assert_eq!(r.mmap_fd(), t.mmap_fd(), "mmap_fd: {what}");
                    assert_eq!(r.sendfile_in_fd(), t.sendfile_in_fd(), "sendfile_in_fd: {what}");
                    assert_eq!(r.requested_bytes(), t.requested_bytes(), "requested_bytes: {what}");
                    assert_eq!(r.offset(), t.offset(), "offset: {what}");
                    let (mut a, mut b) = ([0u8; 6], [0u8; 6]);
                    assert_eq!(r.payload_prefix(&mut a), t.payload_prefix(&mut b), "payload_prefix: {what}");
                    assert_eq!(a, b, "payload_prefix: {what}");
                    assert_eq!(r.payloads(), t.payloads(), "payloads: {what}");
                }
                checked += 1;
            }
        }
        assert!(checked > 5000, "{checked}");
    }
}
