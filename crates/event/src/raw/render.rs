//! Rendering raw arguments in strace's notation (evidence lines and `export` only: the analysis
//! asks [`RawArgs`](super::RawArgs) its questions directly).

use super::flags::*;
use super::{DataKind, RawArgs, RawData};
use crate::names::{EPOLL_EVENTS, FUTEX_OPS, SOCKOPT_NAMES, SOL_NAMES};
use crate::syscalls::{Class, Sys};
use std::fmt::Write as _;

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
