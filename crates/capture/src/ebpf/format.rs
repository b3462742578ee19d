//! From kernel records to [`Event`]s: every syscall record becomes the event strace would
//! have produced for it, its arguments written in strace's syntax (without `-y` decorations:
//! the analysis rebuilds what each fd is from socket/connect/accept/open/dup/close, as it does
//! for plain `strace -f` logs), so every detector reads eBPF captures and strace logs alike.
//!
//! What the kernel copied (paths, socket addresses, timeouts, the first bytes of socket
//! payloads, epoll_event, pipe fds) is printed where strace prints it; memory it did not copy
//! is printed as an address, as strace does for pointers it does not decode.
//!
//! Repeat records (in-kernel coalescing) are expanded: the last `period` calls of the thread
//! are replayed `count` times with timestamps spread evenly over the run and the run's mean
//! duration, so counts and rates are exact and detectors need not know about coalescing.
//!
//! x86_64 argument layouts.

use rustc_hash::FxHashMap as HashMap;
use std::fmt::Write as _;
use syslint_bpf::{Data, DataKind, Record};
use syslint_event::{errno, Event, EventKind, Pid, Ret, Sys, Syscall};

/// A call kept to replay it for Repeat records.
#[derive(Clone)]
struct Saved {
    sys: Sys,
    name: &'static str,
    args: String,
    ret: i64,
}

#[derive(Default)]
struct ThreadState {
    /// The last two calls, newest last.
    last: Vec<Saved>,
}

/// What the fds that existed before the capture began (attach) are, as `-yy` would print them
/// (`/var/log/x`, `TCP:[...]`), by (process, fd). The analysis cannot see their open/connect:
/// each thread gets them as [`EventKind::FdKnown`] events before its first call.
pub type Known = HashMap<(Pid, i64), String>;

#[derive(Default)]
pub struct Formatter {
    threads: HashMap<Pid, ThreadState>,
    /// child tid -> is a thread (from Fork records, for clone3 whose flags the kernel did not copy)
    forks: HashMap<Pid, bool>,
    /// thread -> process
    tgid_of: HashMap<Pid, Pid>,
    known: Known,
    /// Threads that got their [`EventKind::FdKnown`] events.
    announced: rustc_hash::FxHashSet<Pid>,
    /// Print fds known from before the capture with their `-yy` decoration (for text output:
    /// `export`, a live capture's text copy); the analysis gets them as events.
    pub decorate: bool,
    args: String,
    /// Syscalls produced (Repeat records expanded).
    pub syscalls: u64,
    pub events: u64,
}

fn errno_ret(ret: i64) -> Option<&'static str> {
    if (-4095..0).contains(&ret) {
        Some(errno::name(-ret).unwrap_or("E?"))
    } else {
        None
    }
}

fn ret_of(ret: i64) -> Ret<'static> {
    match errno_ret(ret) {
        Some(e) => Ret::Err { val: -1, errno: e },
        None => Ret::Ok { val: ret, deco: None, note: "" },
    }
}

impl Formatter {
    pub fn new(known: Known) -> Self {
        Formatter { known, ..Default::default() }
    }

    /// Turn one record into events, handed to `sink` one by one.
    pub fn on_record(&mut self, r: &Record<'_>, sink: &mut dyn FnMut(&Event)) {
        match *r {
            Record::Syscall { tgid, tid, nr, args, ret, ts_enter, ts_exit, data1, data2, unfinished } => {
                self.tgid_of.insert(tid, tgid);
                if !self.known.is_empty() && !self.announced.contains(&tid) {
                    self.announce(tgid, tid, ts_enter, sink);
                }
                let sys = Sys::from_x86_64(nr);
                let name =
                    if sys == Sys::Other { syslint_bpf::syscall_name(nr).unwrap_or("syscall") } else { sys.name() };
                self.args.clear();
                let mut a = std::mem::take(&mut self.args);
                if name == "syscall" {
                    let _ = write!(a, "{nr}, ");
                }
                self.format_args(&mut a, tgid, sys, name, &args, ret, &data1, &data2);
                let dur = ts_exit.saturating_sub(ts_enter);
                let sc = Syscall {
                    sys,
                    name,
                    args: &a,
                    ret: if unfinished { Ret::Unknown } else { ret_of(ret) },
                    dur_ns: if unfinished { None } else { Some(dur) },
                    resumed: false,
                };
                self.after_call(tgid, sys, &args, ret, unfinished);
                let ev = Event { pid: tid, ts_ns: Some(ts_enter as i64), kind: EventKind::Syscall(sc) };
                sink(&ev);
                self.syscalls += 1;
                self.events += 1;
                if !unfinished {
                    let st = self.threads.entry(tid).or_default();
                    if st.last.len() == 2 {
                        st.last.remove(0);
                    }
                    st.last.push(Saved { sys, name, args: a.clone(), ret });
                }
                self.args = a;
            }
            Record::Repeat { tid, period, count, first_ts, last_ts, dur_sum_ns, .. } => {
                let Some(st) = self.threads.get(&tid) else { return };
                let p = (period as usize).clamp(1, 2).min(st.last.len());
                if p == 0 || count == 0 {
                    return;
                }
                let calls = st.last[st.last.len() - p..].to_vec();
                let n = count as u64 * p as u64;
                let mean = dur_sum_ns / n.max(1);
                let step = last_ts.saturating_sub(first_ts) / n.max(1);
                let mut t = first_ts;
                for _ in 0..count {
                    for c in &calls {
                        let sc = Syscall {
                            sys: c.sys,
                            name: c.name,
                            args: &c.args,
                            ret: ret_of(c.ret),
                            dur_ns: Some(mean),
                            resumed: false,
                        };
                        sink(&Event { pid: tid, ts_ns: Some(t as i64), kind: EventKind::Syscall(sc) });
                        t += step;
                    }
                }
                self.syscalls += n;
                self.events += n;
            }
            Record::Fork { child_tid, child_tgid, parent_tid, is_thread, .. } => {
                self.forks.insert(child_tid, is_thread);
                self.tgid_of.insert(child_tid, child_tgid);
                if !is_thread {
                    // the child starts with a copy of the parent's table
                    let parent = self.tgid_of.get(&parent_tid).copied().unwrap_or(parent_tid);
                    let inherited: Vec<(i64, String)> = self
                        .known
                        .iter()
                        .filter(|((p, _), _)| *p == parent)
                        .map(|((_, fd), d)| (*fd, d.clone()))
                        .collect();
                    for (fd, d) in inherited {
                        self.known.insert((child_tgid, fd), d);
                    }
                }
            }
            Record::Exec { .. } => {}
            Record::Exit { tid, exit_code, ts, .. } => {
                let kind = if exit_code & 0x7f != 0 {
                    EventKind::Killed {
                        signal: signal_name((exit_code & 0x7f) as u32),
                        core_dumped: exit_code & 0x80 != 0,
                    }
                } else {
                    EventKind::Exited { code: (exit_code >> 8) & 0xff }
                };
                sink(&Event { pid: tid, ts_ns: Some(ts as i64), kind });
                self.events += 1;
                self.threads.remove(&tid);
                self.forks.remove(&tid);
                self.announced.remove(&tid);
            }
        }
    }

    /// Tell the analysis which fds from before the capture thread `tid` holds, before its
    /// first call. Threads made during the capture get their process's table from the model
    /// (it saw the clone).
    fn announce(&mut self, tgid: Pid, tid: Pid, ts: u64, sink: &mut dyn FnMut(&Event)) {
        self.announced.insert(tid);
        if self.forks.get(&tid) == Some(&true) {
            return;
        }
        let mut fds: Vec<(i64, &str)> =
            self.known.iter().filter(|((p, _), _)| *p == tgid).map(|((_, fd), d)| (*fd, d.as_str())).collect();
        fds.sort_unstable();
        for (fd, target) in fds {
            let Ok(fd) = i32::try_from(fd) else { continue };
            sink(&Event { pid: tid, ts_ns: Some(ts as i64), kind: EventKind::FdKnown { fd, target } });
        }
    }

    /// Keep the table of fds known from before the capture in step with closes and dups.
    fn after_call(&mut self, tgid: Pid, sys: Sys, args: &[u64; 6], ret: i64, unfinished: bool) {
        if self.known.is_empty() || unfinished || ret < 0 {
            return;
        }
        match sys {
            Sys::Close => {
                self.known.remove(&(tgid, args[0] as i32 as i64));
            }
            Sys::Dup | Sys::Dup2 | Sys::Dup3 => {
                let new = ret;
                match self.known.get(&(tgid, args[0] as i32 as i64)).cloned() {
                    Some(d) => {
                        self.known.insert((tgid, new), d);
                    }
                    None => {
                        self.known.remove(&(tgid, new));
                    }
                }
            }
            _ if ret >= 0 && returns_fd(sys) => {
                // a new fd of that number is not the old one
                self.known.remove(&(tgid, ret));
            }
            _ => {}
        }
    }

    fn fd(&self, o: &mut String, tgid: Pid, v: u64) {
        let fd = v as i32 as i64;
        let _ = write!(o, "{fd}");
        if self.decorate {
            if let Some(d) = self.known.get(&(tgid, fd)) {
                let _ = write!(o, "<{d}>");
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn format_args(
        &mut self,
        o: &mut String,
        tgid: Pid,
        sys: Sys,
        name: &str,
        a: &[u64; 6],
        ret: i64,
        d1: &Data<'_>,
        d2: &Data<'_>,
    ) {
        let ok = errno_ret(ret).is_none();
        match sys {
            Sys::Read | Sys::Recv => {
                self.fd(o, tgid, a[0]);
                o.push_str(", ");
                buf(o, d1, a[1]);
                let _ = write!(o, ", {}", a[2]);
            }
            Sys::Write | Sys::Send => {
                self.fd(o, tgid, a[0]);
                o.push_str(", ");
                buf(o, d1, a[1]);
                let _ = write!(o, ", {}", a[2]);
            }
            Sys::Pread64 | Sys::Pwrite64 => {
                self.fd(o, tgid, a[0]);
                let _ = write!(o, ", {:#x}, {}, {}", a[1], a[2], a[3] as i64);
            }
            Sys::Readv | Sys::Writev => {
                self.fd(o, tgid, a[0]);
                o.push_str(", [{iov_base=");
                buf(o, d1, a[1]);
                let _ = write!(o, ", iov_len={}}}], {}", d1.bytes.len(), a[2]);
            }
            Sys::Sendto | Sys::Recvfrom => {
                self.fd(o, tgid, a[0]);
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
                self.fd(o, tgid, a[0]);
                o.push_str(", ");
                msghdr(o, d1, d2);
                let _ = write!(o, ", {}", msg_flags(a[2]));
            }
            Sys::Sendmmsg | Sys::Recvmmsg => {
                self.fd(o, tgid, a[0]);
                o.push_str(", [{msg_hdr=");
                msghdr(o, d1, d2);
                let _ = write!(o, ", msg_len={}}}], {}, {}", d1.bytes.len(), a[2], msg_flags(a[3]));
            }
            Sys::Connect | Sys::Bind => {
                self.fd(o, tgid, a[0]);
                o.push_str(", ");
                sockaddr(o, d1, a[1]);
                let _ = write!(o, ", {}", a[2]);
            }
            Sys::Accept | Sys::Accept4 | Sys::Getsockname | Sys::Getpeername => {
                self.fd(o, tgid, a[0]);
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
                self.fd(o, tgid, a[0]);
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
                self.fd(o, tgid, a[0]);
                let (level, opt) = sockopt(a[1], a[2]);
                let _ = write!(o, ", {level}, {opt}, ");
                if d1.bytes.len() >= 4 && sys == Sys::Setsockopt {
                    let v = i32::from_le_bytes([d1.bytes[0], d1.bytes[1], d1.bytes[2], d1.bytes[3]]);
                    let _ = write!(o, "[{v}], {}", a[4]);
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
                self.fd(o, tgid, a[0]);
                let _ = write!(o, ", {:#x}, {}, {}", a[1], a[2] as i32, a[3] as i32);
                if sys == Sys::EpollPwait {
                    let _ = write!(o, ", {}, {}", ptr(a[4]), a[5]);
                }
            }
            Sys::EpollPwait2 => {
                self.fd(o, tgid, a[0]);
                let _ = write!(o, ", {:#x}, {}, ", a[1], a[2] as i32);
                timespec(o, d1, a[3], "tv_nsec");
                let _ = write!(o, ", {}, {}", ptr(a[4]), a[5]);
            }
            Sys::EpollCtl => {
                self.fd(o, tgid, a[0]);
                let op = match a[1] {
                    1 => "EPOLL_CTL_ADD",
                    2 => "EPOLL_CTL_DEL",
                    3 => "EPOLL_CTL_MOD",
                    _ => "EPOLL_CTL_?",
                };
                let _ = write!(o, ", {op}, ");
                self.fd(o, tgid, a[2]);
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
            Sys::Open | Sys::Creat => {
                path(o, d1, a[0]);
                if sys == Sys::Open {
                    let _ = write!(o, ", {}", open_flags(a[1]));
                    if a[1] & 0o100 != 0 {
                        let _ = write!(o, ", 0{:o}", a[2]);
                    }
                } else {
                    let _ = write!(o, ", 0{:o}", a[1]);
                }
            }
            Sys::Openat | Sys::Openat2 => {
                dirfd(o, a[0]);
                o.push_str(", ");
                path(o, d1, a[1]);
                if sys == Sys::Openat {
                    let _ = write!(o, ", {}", open_flags(a[2]));
                    if a[2] & 0o100 != 0 {
                        let _ = write!(o, ", 0{:o}", a[3]);
                    }
                } else {
                    let _ = write!(o, ", {:#x}, {}", a[2], a[3]);
                }
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
                let thread = u32::try_from(ret).ok().and_then(|c| self.forks.get(&c).copied());
                o.push_str("{flags=");
                match thread {
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
            Sys::Close
            | Sys::Fsync
            | Sys::Fdatasync
            | Sys::Syncfs
            | Sys::Dup
            | Sys::Fchdir
            | Sys::Fstat
            | Sys::Fstatfs => {
                self.fd(o, tgid, a[0]);
                if matches!(sys, Sys::Fstat | Sys::Fstatfs) {
                    let _ = write!(o, ", {}", ptr(a[1]));
                }
            }
            Sys::Dup2 | Sys::Dup3 => {
                self.fd(o, tgid, a[0]);
                let _ = write!(o, ", {}", a[1] as i32);
                if sys == Sys::Dup3 {
                    let _ = write!(o, ", {}", open_flags(a[2]));
                }
            }
            Sys::Fcntl => {
                self.fd(o, tgid, a[0]);
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
            Sys::Lseek => {
                self.fd(o, tgid, a[0]);
                let wh = ["SEEK_SET", "SEEK_CUR", "SEEK_END", "SEEK_DATA", "SEEK_HOLE"];
                let _ = write!(o, ", {}, {}", a[1] as i64, wh.get(a[2] as usize).copied().unwrap_or("?"));
            }
            Sys::SyncFileRange => {
                self.fd(o, tgid, a[0]);
                let _ = write!(o, ", {}, {}, {}", a[1] as i64, a[2] as i64, a[3]);
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
                let _ = write!(o, ", {:#x}", a[2]);
                if matches!(sys, Sys::Newfstatat | Sys::Statx | Sys::Faccessat2) {
                    let _ = write!(o, ", {:#x}", a[3]);
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
                if !matches!(sys, Sys::Unlink | Sys::Rmdir | Sys::Chdir) {
                    let _ = write!(o, ", {:#x}", a[1]);
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
                let _ = write!(o, "{}, {}, {}, {}", a[0] as i32, ptr(a[1]), a[2], ptr(a[3]));
            }
            _ if ZERO_ARG.contains(&name) => {}
            _ => {
                // not decoded: the first argument as an fd when it is one, the next two raw
                if sys.is(syslint_event::Class::FD) {
                    self.fd(o, tgid, a[0]);
                } else {
                    let _ = write!(o, "{:#x}", a[0]);
                }
                let _ = write!(o, ", {:#x}, {:#x}", a[1], a[2]);
            }
        }
    }
}

/// Syscalls whose result is a new fd (so an fd known from before is no longer that one).
fn returns_fd(sys: Sys) -> bool {
    use syslint_event::Class;
    sys.is(Class::OPEN)
        || matches!(
            sys,
            Sys::Socket
                | Sys::Accept
                | Sys::Accept4
                | Sys::EpollCreate
                | Sys::EpollCreate1
                | Sys::Eventfd
                | Sys::Eventfd2
                | Sys::TimerfdCreate
                | Sys::Signalfd
                | Sys::Signalfd4
                | Sys::MemfdCreate
                | Sys::Fcntl
        )
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
fn buf(o: &mut String, d: &Data<'_>, addr: u64) {
    if d.kind == DataKind::None || d.fault {
        o.push_str(&ptr(addr));
        return;
    }
    quote_into(o, d.bytes);
    if d.truncated {
        o.push_str("...");
    }
}

fn path(o: &mut String, d: &Data<'_>, addr: u64) {
    if d.kind == DataKind::Str && !d.fault {
        quote_into(o, d.bytes);
        if d.truncated {
            o.push_str("...");
        }
    } else {
        o.push_str(&ptr(addr));
    }
}

fn string(o: &mut String, d: &Data<'_>, addr: u64) {
    if d.kind != DataKind::None && !d.fault {
        quote_into(o, d.bytes);
    } else {
        o.push_str(&ptr(addr));
    }
}

fn fd_pair(o: &mut String, d: &Data<'_>, addr: u64, ok: bool) {
    if ok && d.bytes.len() >= 8 {
        let b = d.bytes;
        let x = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let y = i32::from_le_bytes([b[4], b[5], b[6], b[7]]);
        let _ = write!(o, "[{x}, {y}]");
    } else {
        o.push_str(&ptr(addr));
    }
}

fn timespec(o: &mut String, d: &Data<'_>, addr: u64, frac: &str) {
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

fn sockaddr(o: &mut String, d: &Data<'_>, addr: u64) {
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

fn msghdr(o: &mut String, d1: &Data<'_>, d2: &Data<'_>) {
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
    match level {
        1 => {
            let n = match opt {
                1 => "SO_DEBUG",
                2 => "SO_REUSEADDR",
                3 => "SO_TYPE",
                4 => "SO_ERROR",
                7 => "SO_SNDBUF",
                8 => "SO_RCVBUF",
                9 => "SO_KEEPALIVE",
                13 => "SO_LINGER",
                15 => "SO_REUSEPORT",
                20 => "SO_RCVTIMEO_OLD",
                21 => "SO_SNDTIMEO_OLD",
                _ => "",
            };
            ("SOL_SOCKET".into(), if n.is_empty() { opt.to_string() } else { n.into() })
        }
        6 => {
            let n = match opt {
                1 => "TCP_NODELAY",
                4 => "TCP_KEEPIDLE",
                5 => "TCP_KEEPINTVL",
                6 => "TCP_KEEPCNT",
                9 => "TCP_DEFER_ACCEPT",
                23 => "TCP_FASTOPEN",
                _ => "",
            };
            ("SOL_TCP".into(), if n.is_empty() { opt.to_string() } else { n.into() })
        }
        0 => ("SOL_IP".into(), opt.to_string()),
        41 => ("SOL_IPV6".into(), opt.to_string()),
        l => (l.to_string(), opt.to_string()),
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

const EPOLL_EVENTS: &[(&str, u64)] = &[
    ("EPOLLIN", 0x1),
    ("EPOLLPRI", 0x2),
    ("EPOLLOUT", 0x4),
    ("EPOLLERR", 0x8),
    ("EPOLLHUP", 0x10),
    ("EPOLLRDNORM", 0x40),
    ("EPOLLRDBAND", 0x80),
    ("EPOLLWRNORM", 0x100),
    ("EPOLLWRBAND", 0x200),
    ("EPOLLMSG", 0x400),
    ("EPOLLRDHUP", 0x2000),
    ("EPOLLEXCLUSIVE", 1 << 28),
    ("EPOLLWAKEUP", 1 << 29),
    ("EPOLLONESHOT", 1 << 30),
    ("EPOLLET", 1 << 31),
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

/// One event as a line of `strace -f -tt -T` output (`pid hh:mm:ss.micros name(args) = ret
/// <secs>`), times of day from the monotonic timestamps plus `realtime_offset_ns`, in local time.
pub fn strace_line(o: &mut String, ev: &Event, realtime_offset_ns: i64) {
    if let EventKind::FdKnown { .. } = ev.kind {
        // strace has no line for it: the decorations say it (see `Formatter::decorate`)
        return;
    }
    let _ = write!(o, "{} ", ev.pid);
    if let Some(t) = ev.ts_ns {
        let real = t + realtime_offset_ns;
        let secs = real.div_euclid(1_000_000_000);
        let micros = real.rem_euclid(1_000_000_000) / 1000;
        let mut tm: nix::libc::tm = unsafe_zeroed_tm();
        let tt: nix::libc::time_t = secs as nix::libc::time_t;
        // SAFETY: localtime_r reads one time_t and writes one struct tm, both valid locals.
        unsafe { nix::libc::localtime_r(&tt, &mut tm) };
        let _ = write!(o, "{:02}:{:02}:{:02}.{micros:06} ", tm.tm_hour, tm.tm_min, tm.tm_sec);
    }
    match &ev.kind {
        EventKind::Syscall(sc) => {
            let _ = write!(o, "{}({})", sc.name, sc.args);
            match sc.ret {
                Ret::Ok { val, .. } => {
                    let _ = write!(o, " = {val}");
                }
                Ret::Err { errno, .. } => {
                    let _ = write!(o, " = -1 {errno}");
                }
                Ret::Unknown | Ret::Unfinished => o.push_str(" = ?"),
            }
            if let Some(d) = sc.dur_ns {
                let _ = write!(o, " <{}.{:06}>", d / 1_000_000_000, d % 1_000_000_000 / 1000);
            }
        }
        EventKind::Exited { code } => {
            let _ = write!(o, "+++ exited with {code} +++");
        }
        EventKind::Killed { signal, core_dumped } => {
            let _ = write!(o, "+++ killed by {signal}{} +++", if *core_dumped { " (core dumped)" } else { "" });
        }
        EventKind::Signal { name, info } => {
            let _ = write!(o, "--- {name} {info} ---");
        }
        EventKind::Attached { .. } | EventKind::Detached | EventKind::Alias { .. } | EventKind::FdKnown { .. } => {}
    }
    o.push('\n');
}

fn unsafe_zeroed_tm() -> nix::libc::tm {
    // SAFETY: struct tm is plain integers (and a pointer that may be null): all-zero is valid.
    unsafe { std::mem::zeroed() }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use syslint_event::{SockAddr, Timeout};

    fn none() -> Data<'static> {
        Data { kind: DataKind::None, bytes: &[], truncated: false, fault: false }
    }

    fn one(nr: u32, args: [u64; 6], ret: i64, d1: Data<'_>, d2: Data<'_>) -> (String, Option<Event<'static>>) {
        let mut f = Formatter::default();
        let mut got = None;
        let rec = Record::Syscall {
            tgid: 7,
            tid: 7,
            nr,
            args,
            ret,
            ts_enter: 1000,
            ts_exit: 3000,
            data1: d1,
            data2: d2,
            unfinished: false,
        };
        let mut text = String::new();
        f.on_record(&rec, &mut |e: &Event| {
            if let EventKind::Syscall(sc) = &e.kind {
                text = format!("{}({})", sc.name, sc.args);
                got = Some(Event { pid: e.pid, ts_ns: e.ts_ns, kind: EventKind::Exited { code: 0 } });
            }
        });
        (text, got)
    }

    /// Reparse what the formatter wrote with the event crate's decoders, as the analysis will.
    fn reparse(text: &str) -> (Sys, String) {
        let name = &text[..text.find('(').unwrap()];
        let args = text[name.len() + 1..text.len() - 1].to_string();
        (Sys::from_name(name), args)
    }

    #[test]
    fn decoders_read_what_the_formatter_writes() {
        // connect(3, {AF_INET 127.0.0.1:8080}, 16) = -1 EINPROGRESS
        let sa = [2u8, 0, 0x1f, 0x90, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
        let d = Data { kind: DataKind::Sockaddr, bytes: &sa, truncated: false, fault: false };
        let (t, _) = one(42, [3, 0x7ff0, 16, 0, 0, 0], -115, d, none());
        assert_eq!(t, "connect(3, {sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr(\"127.0.0.1\")}, 16)");
        let (sys, args) = reparse(&t);
        let sc = Syscall { sys, name: "connect", args: &args, ret: Ret::Unknown, dur_ns: None, resumed: false };
        assert!(matches!(sc.sockaddr(), Some(SockAddr::Inet { port: 8080, .. })));
        assert_eq!(sc.fd().map(|f| f.num), Some(3));

        // poll(fds, 1, 0) and ppoll with a zero timespec
        let (t, _) = one(7, [0x7ff0, 1, 0, 0, 0, 0], 0, none(), none());
        let (sys, args) = reparse(&t);
        assert_eq!(syslint_event::args::poll_timeout(sys, &args), Some(Timeout::Ns(0)));
        let ts = [0u8; 16];
        let d = Data { kind: DataKind::Bytes, bytes: &ts, truncated: false, fault: false };
        let (t, _) = one(271, [0x7ff0, 1, 0x7ff8, 0, 8, 0], 0, d, none());
        let (sys, args) = reparse(&t);
        assert_eq!(syslint_event::args::poll_timeout(sys, &args), Some(Timeout::Ns(0)));
        // poll(-1) blocks
        let (t, _) = one(7, [0x7ff0, 1, u32::MAX as u64, 0, 0, 0], 1, none(), none());
        let (sys, args) = reparse(&t);
        assert_eq!(syslint_event::args::poll_timeout(sys, &args), Some(Timeout::Infinite));

        // openat(AT_FDCWD, "/tmp/x", O_WRONLY|O_CREAT|O_DSYNC, 0644)
        let p = b"/tmp/x";
        let d = Data { kind: DataKind::Str, bytes: p, truncated: false, fault: false };
        let (t, _) = one(257, [(-100i64) as u64, 0x7ff0, 0o10101, 0o644, 0, 0], 3, d, none());
        assert_eq!(t, "openat(AT_FDCWD, \"/tmp/x\", O_WRONLY|O_CREAT|O_DSYNC, 0644)");
        let (sys, args) = reparse(&t);
        let sc = Syscall { sys, name: "openat", args: &args, ret: Ret::Unknown, dur_ns: None, resumed: false };
        let f = sc.open_flags().unwrap();
        assert!(f.contains(syslint_event::OpenFlags::DSYNC) && !f.contains(syslint_event::OpenFlags::SYNC));
        assert_eq!(sc.path().as_deref(), Some("/tmp/x"));

        // epoll_ctl with EPOLLEXCLUSIVE, setsockopt SO_REUSEPORT, socket type flags
        let mut ev = [0u8; 12];
        ev[..4].copy_from_slice(&(1u32 | 1 << 28).to_le_bytes());
        let d = Data { kind: DataKind::Bytes, bytes: &ev, truncated: false, fault: false };
        let (t, _) = one(233, [5, 1, 3, 0x7ff0, 0, 0], 0, d, none());
        assert_eq!(t, "epoll_ctl(5, EPOLL_CTL_ADD, 3, {events=EPOLLIN|EPOLLEXCLUSIVE, data={u32=0, u64=0}})");
        let one_i = 1i32.to_le_bytes();
        let d = Data { kind: DataKind::Bytes, bytes: &one_i, truncated: false, fault: false };
        let (t, _) = one(54, [3, 1, 15, 0x7ff0, 4, 0], 0, d, none());
        assert_eq!(t, "setsockopt(3, SOL_SOCKET, SO_REUSEPORT, [1], 4)");
        let (t, _) = one(41, [2, 1 | 0o4000 | 0o2000000, 0, 0, 0, 0], 3, none(), none());
        assert_eq!(t, "socket(AF_INET, SOCK_STREAM|SOCK_NONBLOCK|SOCK_CLOEXEC, IPPROTO_IP)");

        // a socket write with its first bytes, cut
        let d = Data { kind: DataKind::Bytes, bytes: b"GET / HTTP/1.1\r\n", truncated: true, fault: false };
        let (t, _) = one(1, [4, 0x7ff0, 100, 0, 0, 0], 100, d, none());
        assert_eq!(t, "write(4, \"GET / HTTP/1.1\\r\\n\"..., 100)");
    }

    #[test]
    fn repeats_replay_the_last_calls() {
        let mut f = Formatter::default();
        let mut seen: Vec<(String, i64, Option<u64>)> = Vec::new();
        let mut sink = |e: &Event| {
            if let EventKind::Syscall(sc) = &e.kind {
                seen.push((sc.name.to_string(), e.ts_ns.unwrap(), sc.dur_ns));
            }
        };
        let call = |nr: u32, t: u64| Record::Syscall {
            tgid: 1,
            tid: 1,
            nr,
            args: [0; 6],
            ret: 512,
            ts_enter: t,
            ts_exit: t + 100,
            data1: none(),
            data2: none(),
            unfinished: false,
        };
        f.on_record(&call(0, 1000), &mut sink);
        f.on_record(&call(1, 1200), &mut sink);
        f.on_record(
            &Record::Repeat { tgid: 1, tid: 1, period: 2, count: 3, first_ts: 1400, last_ts: 2600, dur_sum_ns: 600 },
            &mut sink,
        );
        let names: Vec<&str> = seen.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(names, ["read", "write", "read", "write", "read", "write", "read", "write"]);
        assert_eq!(f.syscalls, 8);
        assert_eq!(seen[2].1, 1400);
        assert_eq!(seen[2].2, Some(100));
        assert!(seen.windows(2).all(|w| w[0].1 <= w[1].1), "{seen:?}");
    }

    #[test]
    fn known_fds_are_decorated_until_closed() {
        let mut known = Known::default();
        known.insert((7, 3), "TCP:[127.0.0.1:80->127.0.0.1:5000]".into());
        let mut f = Formatter::new(known);
        f.decorate = true;
        let mut texts = Vec::new();
        let mut sink = |e: &Event| {
            if let EventKind::Syscall(sc) = &e.kind {
                texts.push(format!("{}({})", sc.name, sc.args));
            }
        };
        let rec = |nr: u32, a0: u64, ret: i64| Record::Syscall {
            tgid: 7,
            tid: 8,
            nr,
            args: [a0, 0x10, 4, 0, 0, 0],
            ret,
            ts_enter: 1,
            ts_exit: 2,
            data1: none(),
            data2: none(),
            unfinished: false,
        };
        f.on_record(&rec(0, 3, 4), &mut sink);
        f.on_record(&rec(3, 3, 0), &mut sink);
        f.on_record(&rec(0, 3, -9), &mut sink);
        assert_eq!(texts[0], "read(3<TCP:[127.0.0.1:80->127.0.0.1:5000]>, 0x10, 4)");
        assert_eq!(texts[1], "close(3<TCP:[127.0.0.1:80->127.0.0.1:5000]>)");
        assert_eq!(texts[2], "read(3, 0x10, 4)");
    }

    #[test]
    fn known_fds_are_announced_to_each_thread_before_its_first_call() {
        let mut known = Known::default();
        known.insert((7, 3), "TCP:[127.0.0.1:80->127.0.0.1:5000]".into());
        known.insert((7, 1), "/dev/pts/0".into());
        known.insert((9, 4), "/other/process".into());
        let mut f = Formatter::new(known);
        let mut seen = Vec::new();
        let mut sink = |e: &Event| match &e.kind {
            EventKind::Syscall(sc) => seen.push(format!("{} {}({})", e.pid, sc.name, sc.args)),
            EventKind::FdKnown { fd, target } => seen.push(format!("{} fd {fd} {target}", e.pid)),
            _ => {}
        };
        let rec = |tid: u32, nr: u32, a0: u64, ret: i64| Record::Syscall {
            tgid: 7,
            tid,
            nr,
            args: [a0, 0x10, 4, 0, 0, 0],
            ret,
            ts_enter: 1,
            ts_exit: 2,
            data1: none(),
            data2: none(),
            unfinished: false,
        };
        f.on_record(&rec(7, 0, 3, 4), &mut sink);
        f.on_record(&rec(7, 0, 3, 4), &mut sink);
        f.on_record(&rec(7, 3, 3, 0), &mut sink);
        // a thread seen first after the close: fd 3 is no longer the connection
        f.on_record(&rec(8, 0, 1, 4), &mut sink);
        assert_eq!(
            seen,
            [
                "7 fd 1 /dev/pts/0",
                "7 fd 3 TCP:[127.0.0.1:80->127.0.0.1:5000]",
                "7 read(3, 0x10, 4)",
                "7 read(3, 0x10, 4)",
                "7 close(3)",
                "8 fd 1 /dev/pts/0",
                "8 read(1, 0x10, 4)",
            ]
        );
        assert_eq!((f.syscalls, f.events), (4, 4));
    }
}
