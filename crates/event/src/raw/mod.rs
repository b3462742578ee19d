//! Arguments as the kernel gave them (the eBPF backend): six registers and up to two pieces of
//! user memory, and their rendering in strace's notation, which only evidence lines and
//! `export` need. x86_64 argument layouts.
//!
//! What the kernel copied (paths, socket addresses, timeouts, the first bytes of socket
//! payloads, epoll_event, pipe fds) is printed where strace prints it; memory it did not copy
//! is printed as an address, as strace does for pointers it does not decode.

mod flags;
mod render;

use crate::syscalls::Sys;
use flags::{family, FIONREAD, FUTEX_CMD};
pub use flags::{siginfo_text, signal_name};
pub use render::render;

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
    /// What the process's fds opened before the capture began are, in the notation of a
    /// `-yy` decoration (`/var/log/x`, `TCP:[...]`), sorted by fd. Only rendering reads them
    /// (a live capture's text copy, `export`, evidence lines), so that text shows them as
    /// `strace -yy` would; the analysis learns them once, from [`crate::EventKind::FdKnown`].
    pub fds_before: &'a [(i32, Box<str>)],
}

impl<'a> RawArgs<'a> {
    /// The decoration of fd `fd` when the process held it before the capture began.
    pub fn fd_before(&self, fd: i32) -> Option<&'a str> {
        let i = self.fds_before.binary_search_by_key(&fd, |(f, _)| *f).ok()?;
        Some(&self.fds_before[i].1)
    }
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

    /// The arguments in strace's notation, decorated only where the process held the fd before
    /// the capture began ([`RawArgs::fds_before`]).
    pub fn text(&self, sys: Sys, name: &str) -> String {
        let mut s = String::new();
        render(&mut s, sys, name, self, &|fd| self.fd_before(fd));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn siginfo_reads_as_strace_prints_it() {
        // the lab's fault and strace 6.1's line for it (lab/fault-signal-loop/traces)
        assert_eq!(siginfo_text(11, 1, 0x38), "{si_signo=SIGSEGV, si_code=SEGV_MAPERR, si_addr=0x38}");
        assert_eq!(siginfo_text(11, 1, 0), "{si_signo=SIGSEGV, si_code=SEGV_MAPERR, si_addr=NULL}");
        assert_eq!(siginfo_text(7, 2, 0x7f00), "{si_signo=SIGBUS, si_code=BUS_ADRERR, si_addr=0x7f00}");
        assert_eq!(siginfo_text(8, 1, 0x401000), "{si_signo=SIGFPE, si_code=FPE_INTDIV, si_addr=0x401000}");
        // a general protection fault (SI_KERNEL: strace prints its address, NULL); a timer's
        // and a sent signal
        assert_eq!(siginfo_text(11, 0x80, 0), "{si_signo=SIGSEGV, si_code=SI_KERNEL, si_addr=NULL}");
        assert_eq!(siginfo_text(27, 0x80, 0), "{si_signo=SIGPROF, si_code=SI_KERNEL}");
        assert_eq!(siginfo_text(15, 0, 0), "{si_signo=SIGTERM, si_code=SI_USER}");
        assert_eq!(siginfo_text(11, -6, 0), "{si_signo=SIGSEGV, si_code=SI_TKILL}");
        assert_eq!(siginfo_text(17, 1, 0), "{si_signo=SIGCHLD, si_code=CLD_EXITED}");
        assert_eq!(siginfo_text(17, 9, 0), "{si_signo=SIGCHLD, si_code=9}");
        assert_eq!(siginfo_text(11, 99, 8), "{si_signo=SIGSEGV, si_code=99, si_addr=0x8}");
    }

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
                let raw = RawArgs { nr, regs, ret, data1: d1, data2: d2, thread, fds_before: &[] };
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
