//! Typed answers about a call's arguments: the one set of accessors the model and the
//! detectors use (flags as bitsets, futex ops, wait options, polled fds, socket options...),
//! so none of them reads argument text. Each accessor decodes strace's notation, by name or,
//! for `-X raw` logs, by value.

use crate::args::{self, FdArg};
use crate::names::{EPOLL_EVENTS, FUTEX_OPS, SOCKOPT_NAMES, SOL_NAMES};
use crate::syscalls::{Class, Sys};
use crate::target::TargetKind;
use crate::{Args, Ret, Syscall};
use std::borrow::Cow;
use std::hash::{Hash, Hasher};

macro_rules! bitset {
    ($(#[$m:meta])* $name:ident { $($(#[$fm:meta])* $flag:ident = $v:expr;)* }) => {
        $(#[$m])*
        #[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
        pub struct $name(pub u64);
        impl $name {
            $($(#[$fm])* pub const $flag: $name = $name($v);)*
            /// Whether every bit of `f` is set.
            pub fn contains(self, f: $name) -> bool {
                self.0 & f.0 == f.0
            }
        }
    };
}

bitset!(
    /// The flags of a call that makes an fd (open/openat/creat, socket type, accept4, pipe2,
    /// dup3, eventfd2, epoll_create1, inotify_init1, timerfd_create, signalfd4): Linux's
    /// values (x86, x86_64, arm, aarch64), which O_, SOCK_ and EFD_ flags share.
    OpenFlags {
        CREAT = 0o100;
        EXCL = 0o200;
        TRUNC = 0o1000;
        APPEND = 0o2000;
        NONBLOCK = 0o4000;
        DSYNC = 0o10000;
        DIRECT = 0o40000;
        DIRECTORY = 0o200000;
        CLOEXEC = 0o2000000;
        /// O_SYNC includes O_DSYNC's bit.
        SYNC = 0o4010000;
    }
);

bitset!(
    /// `MSG_*` flags of send/recv-family calls.
    MsgFlags {
        OOB = 0x1;
        PEEK = 0x2;
        DONTWAIT = 0x40;
        WAITALL = 0x100;
        /// More data follows: the kernel holds a partial segment until the next send.
        MORE = 0x8000;
    }
);

bitset!(
    /// The `CLONE_*` flags of clone/clone3 that the model asks about.
    CloneFlags {
        FILES = 0x400;
        THREAD = 0x10000;
    }
);

bitset!(
    /// Options of wait4/waitid/waitpid.
    WaitOptions {
        NOHANG = 0x1;
    }
);

/// What a futex call does, as far as the analysis cares.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FutexOp {
    /// FUTEX_WAIT, FUTEX_WAIT_BITSET, FUTEX_WAIT_REQUEUE_PI, FUTEX_LOCK_PI(2): may block.
    Wait,
    /// Anything else (wake, requeue, unlock...).
    Other,
}

/// A futex call's command, as far as contention is concerned.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FutexCmd {
    /// May block until woken: FUTEX_WAIT, FUTEX_WAIT_BITSET, FUTEX_WAIT_REQUEUE_PI,
    /// FUTEX_LOCK_PI, FUTEX_LOCK_PI2.
    Wait,
    /// Wakes waiters of the address: FUTEX_WAKE, FUTEX_WAKE_BITSET, FUTEX_WAKE_OP,
    /// FUTEX_UNLOCK_PI, FUTEX_REQUEUE, FUTEX_CMP_REQUEUE, FUTEX_CMP_REQUEUE_PI.
    Wake,
    /// Anything else (FUTEX_TRYLOCK_PI, FUTEX_FD, unknown commands).
    Other,
}

/// A futex call: the address it names (`uaddr`), its command and its `val` argument (the
/// value a wait expects, the number of waiters a wake may wake; INT_MAX for a broadcast).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Futex {
    pub addr: u64,
    pub cmd: FutexCmd,
    pub val: i64,
}

impl FutexCmd {
    /// The command for `op & FUTEX_CMD_MASK` (0..=13).
    pub fn of(cmd: u64) -> FutexCmd {
        match cmd {
            0 | 6 | 9 | 11 | 13 => FutexCmd::Wait,
            1 | 3 | 4 | 5 | 7 | 10 | 12 => FutexCmd::Wake,
            _ => FutexCmd::Other,
        }
    }
}

/// What a memory-mapping call does to the address space.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MemKind {
    /// mmap/mmap2: a new mapping (`addr` is the address returned, when it succeeded).
    Map,
    /// munmap.
    Unmap,
    /// mremap: `len` is the old length, `new_len` the new one.
    Remap,
    /// madvise with MADV_DONTNEED, MADV_FREE or MADV_REMOVE: the pages are given back (they
    /// fault in again, zeroed, when touched).
    Release,
    /// Any other madvise.
    Advise,
    /// brk: `addr` is the break asked for (0: the query `brk(NULL)`).
    Brk,
}

/// A call that maps, unmaps, resizes or releases memory.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MemOp {
    pub kind: MemKind,
    pub addr: u64,
    pub len: u64,
    /// mremap's new length.
    pub new_len: u64,
    /// mmap of anonymous memory (MAP_ANONYMOUS), not of a file.
    pub anon: bool,
    /// mmap of a thread stack (MAP_STACK).
    pub stack: bool,
    /// mmap of address space only (PROT_NONE): reserved, not memory the program touches.
    pub reserve: bool,
}

/// The command of fcntl, as far as the analysis cares.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FcntlCmd {
    /// F_DUPFD, F_DUPFD_CLOEXEC: returns a new fd.
    Dup,
    /// F_GETFD, F_GETFL, ...: asks and changes nothing.
    Get,
    Other,
}

/// The request of ioctl, as far as the analysis cares.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IoctlReq {
    /// FIONREAD: how many bytes are waiting.
    Fionread,
    Other,
}

/// The fds a poll/ppoll/select/pselect6 waits on, as far as the trace shows them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PolledFds {
    /// The first fd of the poll array or of select's read set.
    pub first: i32,
    /// Whether it is the only fd waited on.
    pub only: bool,
}

/// Level and option of setsockopt/getsockopt, and the int value set (or got: getsockopt's
/// value when the call succeeded and the trace shows it).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SockOpt {
    pub level: Option<u64>,
    pub name: Option<u64>,
    /// The value when it is shown as an int (`[1]`); `None` when only an address is known.
    pub value: Option<i64>,
}

impl SockOpt {
    pub const SOL_SOCKET: u64 = 1;
    /// getsockopt(SOL_SOCKET, SO_ERROR): the error of a non-blocking connect (0: connected).
    pub const SO_ERROR: u64 = 4;
    pub const SO_REUSEPORT: u64 = 15;
    pub const SOL_TCP: u64 = 6;
    pub const TCP_NODELAY: u64 = 1;
    pub const TCP_CORK: u64 = 3;
}

/// An epoll_ctl call: what it does, the fd it adds, changes or removes and the events asked for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct EpollCtl {
    /// EPOLL_CTL_ADD (1), EPOLL_CTL_DEL (2), EPOLL_CTL_MOD (3); 0 when not known.
    pub op: u8,
    pub fd: i32,
    /// The `events` mask, when the event structure is known.
    pub events: Option<u32>,
}

impl EpollCtl {
    pub const ADD: u8 = 1;
    pub const DEL: u8 = 2;
    pub const MOD: u8 = 3;
    pub const EPOLLEXCLUSIVE: u32 = 1 << 28;
    pub const EPOLLONESHOT: u32 = 1 << 30;
    pub const EPOLLET: u32 = 1 << 31;
}

/// The clock names strace prints, by clockid_t (0..=11).
pub const CLOCK_NAMES: &[&str] = &[
    "CLOCK_REALTIME",
    "CLOCK_MONOTONIC",
    "CLOCK_PROCESS_CPUTIME_ID",
    "CLOCK_THREAD_CPUTIME_ID",
    "CLOCK_MONOTONIC_RAW",
    "CLOCK_REALTIME_COARSE",
    "CLOCK_MONOTONIC_COARSE",
    "CLOCK_BOOTTIME",
    "CLOCK_REALTIME_ALARM",
    "CLOCK_BOOTTIME_ALARM",
    "CLOCK_SGI_CYCLE",
    "CLOCK_TAI",
];

const MSG_NAMED: &[(&str, u64)] =
    &[("MSG_OOB", 0x1), ("MSG_PEEK", 0x2), ("MSG_DONTWAIT", 0x40), ("MSG_WAITALL", 0x100), ("MSG_MORE", 0x8000)];

/// A number as strace prints it: `15`, `0xf`, octal `0644`.
fn number(t: &str) -> Option<u64> {
    match t.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None if t.starts_with('0') && t.len() > 1 => u64::from_str_radix(&t[1..], 8).ok(),
        None => t.parse().ok(),
    }
}

/// The bits a flags argument stands for: names in `names` (anywhere, comments included), and
/// numbers outside `/* comments */` (`0x80800 /* SOCK_CLOEXEC|SOCK_NONBLOCK */`). One pass
/// over the bytes: it runs for every open and socket call of a log.
fn flag_bits(arg: &str, names: &[(&str, u64)]) -> u64 {
    flag_bits_by(arg, |t| names.iter().find(|(n, _)| *n == t).map_or(0, |&(_, bit)| bit))
}

/// [`flag_bits`] with the names looked up by `bit_of` (0: not a flag it knows).
/// Open flags from their text (`O_RDONLY|O_CLOEXEC`, a number, `0x80000 /* O_CLOEXEC */`).
pub(crate) fn open_flags_of_text(arg: &str) -> OpenFlags {
    // a program opens its files with the same few flag sets: the last one read is kept (per
    // thread: each parse worker has its own), and a compare costs a fraction of the name lookups
    thread_local! {
        static LAST: std::cell::RefCell<(String, u64)> = const { std::cell::RefCell::new((String::new(), 0)) };
    }
    if arg.len() > 160 {
        return OpenFlags(flag_bits_by(arg, args::flag_value));
    }
    LAST.with_borrow_mut(|(text, bits)| {
        if text != arg {
            *bits = flag_bits_by(arg, args::flag_value);
            text.clear();
            text.push_str(arg);
        }
        OpenFlags(*bits)
    })
}

fn flag_bits_by(arg: &str, bit_of: impl Fn(&str) -> u64) -> u64 {
    let b = arg.as_bytes();
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut v = 0u64;
    let mut comment = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if !is_ident(c) {
            if c == b'/' && b.get(i + 1) == Some(&b'*') {
                comment = true;
                i += 2;
            } else if c == b'*' && b.get(i + 1) == Some(&b'/') {
                comment = false;
                i += 2;
            } else {
                i += 1;
            }
            continue;
        }
        let start = i;
        while i < b.len() && is_ident(b[i]) {
            i += 1;
        }
        let t = &arg[start..i];
        if c.is_ascii_digit() {
            if !comment {
                v |= number(t).unwrap_or(0);
            }
        } else {
            v |= bit_of(t);
        }
    }
    v
}

/// A number as strace prints it raw, ignoring a `/* comment */` (`0xf /* SO_REUSEPORT */`).
fn leading_number(a: &str) -> Option<u64> {
    number(a.split_whitespace().next()?)
}

impl<'a> Syscall<'a> {
    /// The flags argument of a call that makes an fd (see [`OpenFlags`]).
    pub fn open_flags(&self) -> Option<OpenFlags> {
        if let Some(f) = self.pre.open_flags {
            return f;
        }
        let idx = self.open_flags_index()?;
        match self.args {
            Args::Text(_) => Some(open_flags_of_text(self.arg(idx)?)),
            Args::Raw(r) => r.open_flags(self.sys),
        }
    }

    /// Which argument holds the flags of a call that makes an fd.
    pub(crate) fn open_flags_index(&self) -> Option<usize> {
        Some(match self.sys {
            Sys::Open | Sys::Socket | Sys::Pipe2 | Sys::Eventfd2 | Sys::TimerfdCreate => 1,
            Sys::Openat | Sys::Dup3 => 2,
            Sys::Accept4 | Sys::Signalfd4 => 3,
            Sys::InotifyInit1 | Sys::EpollCreate1 => 0,
            _ => return None,
        })
    }

    /// The `MSG_*` flags of a send/recv-family call.
    pub fn msg_flags(&self) -> Option<MsgFlags> {
        let idx = match self.sys {
            Sys::Send | Sys::Recv | Sys::Sendto | Sys::Recvfrom | Sys::Sendmmsg | Sys::Recvmmsg => 3,
            Sys::Sendmsg | Sys::Recvmsg => 2,
            _ => return None,
        };
        match self.args {
            Args::Text(_) => Some(MsgFlags(flag_bits(self.arg(idx)?, MSG_NAMED))),
            Args::Raw(r) => r.msg_flags(self.sys),
        }
    }

    /// The flags of clone/clone3 (by name).
    pub fn clone_flags(&self) -> Option<CloneFlags> {
        if !matches!(self.sys, Sys::Clone | Sys::Clone3) {
            return None;
        }
        let t = match self.args {
            Args::Text(t) => t,
            Args::Raw(r) => return Some(r.clone_flags(self.sys)),
        };
        let mut v = 0;
        if t.contains("CLONE_THREAD") {
            v |= CloneFlags::THREAD.0;
        }
        if t.contains("CLONE_FILES") {
            v |= CloneFlags::FILES.0;
        }
        Some(CloneFlags(v))
    }

    /// The options of wait4/waitid/waitpid (by name in text).
    pub fn wait_options(&self) -> Option<WaitOptions> {
        if !matches!(self.sys, Sys::Wait4 | Sys::Waitid | Sys::Waitpid) {
            return None;
        }
        let t = match self.args {
            Args::Text(t) => t,
            Args::Raw(r) => return Some(r.wait_options(self.sys)),
        };
        Some(WaitOptions(if t.contains("WNOHANG") { WaitOptions::NOHANG.0 } else { 0 }))
    }

    /// Whether sync_file_range waits for the writeback to finish (SYNC_FILE_RANGE_WAIT_AFTER):
    /// only then is it a flush. SYNC_FILE_RANGE_WRITE alone starts writeback and returns.
    pub fn sync_range_waits(&self) -> Option<bool> {
        let i = match self.sys {
            Sys::SyncFileRange => 3,
            Sys::SyncFileRange2 => 1,
            _ => return None,
        };
        const WAIT_AFTER: u64 = 4;
        let a = match self.args {
            Args::Raw(r) => return Some(r.reg(i) & WAIT_AFTER != 0),
            Args::Text(_) => self.arg(i)?,
        };
        if a.contains("SYNC_FILE_RANGE_") {
            return Some(a.contains("WAIT_AFTER"));
        }
        let n = a.strip_prefix("0x").map_or_else(|| a.parse::<u64>().ok(), |h| u64::from_str_radix(h, 16).ok())?;
        Some(n & WAIT_AFTER != 0)
    }

    /// What a futex call does (by name in text).
    pub fn futex_op(&self) -> Option<FutexOp> {
        if !matches!(self.sys, Sys::Futex | Sys::FutexTime64) {
            return None;
        }
        let t = match self.args {
            Args::Text(t) => t,
            Args::Raw(r) => return Some(r.futex_op()),
        };
        let wait = t.contains("FUTEX_WAIT") || t.contains("FUTEX_LOCK_PI");
        Some(if wait { FutexOp::Wait } else { FutexOp::Other })
    }

    /// The address, command and value of a futex call (by name, or by number under `-X raw`).
    pub fn futex(&self) -> Option<Futex> {
        if !matches!(self.sys, Sys::Futex | Sys::FutexTime64) {
            return None;
        }
        if let Args::Raw(r) = self.args {
            return Some(r.futex());
        }
        let addr = number(self.arg(0)?.trim())?;
        let op = self.arg(1)?.trim();
        let cmd = match number(op.split_whitespace().next().unwrap_or("")) {
            Some(n) => FutexCmd::of(n & !0x180 & 0xffff_ffff),
            None => {
                let name =
                    op.split('|').find(|p| p.starts_with("FUTEX_") && *p != "FUTEX_CLOCK_REALTIME").unwrap_or("");
                let name = name.strip_suffix("_PRIVATE").unwrap_or(name);
                match FUTEX_OPS.iter().position(|n| *n == name) {
                    Some(i) => FutexCmd::of(i as u64),
                    None => FutexCmd::Other,
                }
            }
        };
        let val = self.arg(2).and_then(|v| v.trim().parse::<i64>().ok()).unwrap_or(0);
        Some(Futex { addr, cmd, val })
    }

    /// What an mmap/mmap2/munmap/mremap/madvise/brk call does, with its address and length.
    pub fn mem_op(&self) -> Option<MemOp> {
        let kind = match self.sys {
            Sys::Mmap | Sys::Mmap2 => MemKind::Map,
            Sys::Munmap => MemKind::Unmap,
            Sys::Mremap => MemKind::Remap,
            Sys::Madvise => MemKind::Advise,
            Sys::Brk => MemKind::Brk,
            _ => return None,
        };
        if let Args::Raw(r) = self.args {
            return Some(r.mem_op(kind, self.ret.value()));
        }
        let addr_of = |a: &str| if a.trim() == "NULL" { Some(0) } else { number(a.trim()) };
        let mut op = MemOp { kind, addr: 0, len: 0, new_len: 0, anon: false, stack: false, reserve: false };
        match kind {
            MemKind::Map => {
                op.addr = self.ret.value().map_or(0, |v| v as u64);
                op.len = number(self.arg(1)?.trim())?;
                let flags = self.arg(3).unwrap_or("");
                let bit = |name: &str, v: u64| flags.contains(name) || number(flags.trim()).is_some_and(|n| n & v != 0);
                op.anon = bit("MAP_ANONYMOUS", 0x20);
                op.stack = bit("MAP_STACK", 0x20000);
                let prot = self.arg(2).unwrap_or("").trim();
                op.reserve = prot == "PROT_NONE" || number(prot) == Some(0);
            }
            MemKind::Brk => op.addr = addr_of(self.arg(0)?)?,
            _ => {
                op.addr = addr_of(self.arg(0)?)?;
                op.len = number(self.arg(1)?.trim())?;
                if kind == MemKind::Remap {
                    op.new_len = number(self.arg(2)?.trim())?;
                } else if kind == MemKind::Advise {
                    let a = self.arg(2)?.trim();
                    let released = matches!(a, "MADV_DONTNEED" | "MADV_FREE" | "MADV_REMOVE")
                        || matches!(number(a), Some(4 | 8 | 9));
                    if released {
                        op.kind = MemKind::Release;
                    }
                }
            }
        }
        Some(op)
    }

    /// The command of fcntl/fcntl64.
    pub fn fcntl_cmd(&self) -> Option<FcntlCmd> {
        if !matches!(self.sys, Sys::Fcntl | Sys::Fcntl64) {
            return None;
        }
        if let Args::Raw(r) = self.args {
            return Some(r.fcntl_cmd(self.sys));
        }
        // only the command's first letters are read: the rest of the arguments need not be split
        let a = self.args_after_first()?.trim_ascii_start();
        if a.is_empty() {
            return None;
        }
        Some(if a.starts_with("F_DUPFD") {
            FcntlCmd::Dup
        } else if a.starts_with("F_GET") {
            FcntlCmd::Get
        } else {
            FcntlCmd::Other
        })
    }

    /// The request of ioctl (by name in text).
    pub fn ioctl_req(&self) -> Option<IoctlReq> {
        if self.sys != Sys::Ioctl {
            return None;
        }
        if let Args::Raw(r) = self.args {
            return Some(r.ioctl_req());
        }
        Some(if self.arg(1)?.starts_with("FIONREAD") { IoctlReq::Fionread } else { IoctlReq::Other })
    }

    /// The name `prctl(PR_SET_NAME, name)` gives the thread (strace logs: the kernel program
    /// does not copy it).
    pub fn prctl_name(&self) -> Option<Cow<'a, str>> {
        if self.sys != Sys::Prctl || !self.args.text()?.starts_with("PR_SET_NAME") {
            return None;
        }
        args::unquote(self.arg(1)?)
    }

    /// The name of a memfd_create (strace logs: the kernel program does not copy it).
    pub fn memfd_name(&self) -> Option<Cow<'a, str>> {
        if self.sys != Sys::MemfdCreate {
            return None;
        }
        args::unquote(self.arg(0)?)
    }

    /// The path unlink/unlinkat removes.
    pub fn unlink_path(&self) -> Option<Cow<'a, str>> {
        match (self.sys, self.args) {
            (Sys::Unlink, Args::Text(_)) => args::unquote(self.arg(0)?),
            (Sys::Unlink, Args::Raw(r)) => r.path(self.sys, 0),
            _ => self.path(),
        }
    }

    /// The path mkdir/mkdirat creates (mkdir has no lookup class: its path is asked for here).
    pub fn mkdir_path(&self) -> Option<Cow<'a, str>> {
        match (self.sys, self.args) {
            (Sys::Mkdir, Args::Text(_)) => args::unquote(self.arg(0)?),
            (Sys::Mkdir, Args::Raw(r)) => r.path(self.sys, 0),
            (Sys::Mkdirat, _) => self.path(),
            _ => None,
        }
    }

    /// The directory fd of an *at call (`AT_FDCWD` is -100).
    pub fn dir_fd(&self) -> Option<FdArg<'a>> {
        if !self.sys.is(Class::AT) {
            return None;
        }
        match self.args {
            // the first argument's number and decoration: nothing after them is read
            Args::Text(t) => args::parse_fd(t.trim_start()),
            Args::Raw(r) => Some(r.first_fd()),
        }
    }

    /// The protocol of the socket a `socket()` call makes (names or `-X raw` numbers).
    pub fn socket_kind(&self) -> Option<TargetKind> {
        if self.sys != Sys::Socket {
            return None;
        }
        let t = match self.args {
            Args::Text(t) => t,
            Args::Raw(r) => return Some(r.socket_kind()),
        };
        let mut it = args::split(t);
        let fam = it.next().unwrap_or("");
        let ty = it.next().unwrap_or("");
        let raw = |a: &str| -> Option<u64> {
            let t = a.split_whitespace().next()?;
            t.split('|').try_fold(0u64, |acc, part| {
                let v = match part.strip_prefix("0x") {
                    Some(h) => u64::from_str_radix(h, 16).ok()?,
                    None => part.parse().ok()?,
                };
                Some(acc | v)
            })
        };
        let fam = match raw(fam) {
            Some(1) => "AF_UNIX",
            Some(2) => "AF_INET",
            Some(10) => "AF_INET6",
            Some(16) => "AF_NETLINK",
            _ => fam,
        };
        let stream = ty.contains("SOCK_STREAM") || raw(ty).is_some_and(|t| t & 0xf == 1);
        let dgram = ty.contains("SOCK_DGRAM") || raw(ty).is_some_and(|t| t & 0xf == 2);
        let unix = fam.contains("UNIX") || fam.contains("LOCAL");
        Some(socket_kind_of(fam.contains("INET"), fam.contains("INET6"), unix, fam.contains("NETLINK"), stream, dgram))
    }

    /// The two fds pipe/pipe2/socketpair returned (`[3, 4]`).
    pub fn fd_pair(&self) -> Option<(i32, i32)> {
        let idx = match self.sys {
            Sys::Socketpair => 3,
            Sys::Pipe | Sys::Pipe2 => 0,
            _ => return None,
        };
        if let Args::Raw(r) = self.args {
            return r.fd_pair();
        }
        let inner = self.arg(idx)?.strip_prefix('[')?.strip_suffix(']')?;
        let mut it = args::split(inner);
        let a = args::parse_fd(it.next()?)?.num;
        let b = args::parse_fd(it.next()?)?.num;
        Some((a, b))
    }

    /// The fds poll/ppoll/select/pselect6 waits on, when the trace shows them (the kernel
    /// program does not copy fd arrays and sets).
    pub fn polled_fds(&self) -> Option<PolledFds> {
        let t = self.args.text()?;
        match self.sys {
            Sys::Poll | Sys::Ppoll => {
                let i = t.find("fd=")?;
                let first = args::parse_fd(&t[i + 3..])?.num;
                let only = self.arg(1).is_some_and(|n| n.trim() == "1");
                Some(PolledFds { first, only })
            }
            Sys::Select | Sys::NewSelect | Sys::Pselect6 => {
                // select(nfds, readfds, writefds, exceptfds, timeout)
                let read = self.arg(1)?.strip_prefix('[')?;
                let f = args::parse_fd(read)?;
                let only = read.strip_suffix(']').is_some_and(|inner| {
                    let used = f.num.to_string().len() + f.deco.map_or(0, |d| d.len() + 2);
                    inner.len() == used && [self.arg(2), self.arg(3)].iter().all(|a| matches!(a, Some("NULL" | "[]")))
                });
                Some(PolledFds { first: f.num, only })
            }
            _ => None,
        }
    }

    /// Level, option and value of setsockopt/getsockopt.
    pub fn sockopt(&self) -> Option<SockOpt> {
        if !matches!(self.sys, Sys::Setsockopt | Sys::Getsockopt) {
            return None;
        }
        if let Args::Raw(r) = self.args {
            return Some(r.sockopt());
        }
        let mut it = args::split(self.args_after_first()?);
        let (level, opt, val) = (it.next()?, it.next()?, it.next()?);
        let word = |a: &'a str| a.split_whitespace().next().unwrap_or("");
        let level = match SOL_NAMES.iter().find(|(n, _)| *n == word(level)) {
            Some(&(_, v)) => Some(v),
            None if level.contains("SOL_SOCKET") => Some(SockOpt::SOL_SOCKET),
            None => leading_number(level),
        };
        let name = match SOCKOPT_NAMES.iter().find(|(_, n, _)| *n == word(opt)) {
            Some(&(_, _, v)) => Some(v),
            None if opt.contains("SO_REUSEPORT") => Some(SockOpt::SO_REUSEPORT),
            None => leading_number(opt),
        };
        let v = val.trim_start_matches('[').trim_end_matches(']').trim();
        // getsockopt(SO_ERROR) shows the pending error by name: `[ECONNREFUSED]`
        let value = if v == "0" { Some(0) } else { v.parse().ok().or_else(|| crate::errno::number(v)) };
        Some(SockOpt { level, name, value })
    }

    /// The clock a clock_gettime/clock_gettime64/clock_getres call reads, as the kernel's
    /// clockid_t: 0..=11 for the named clocks (`CLOCK_MONOTONIC` is 1), negative for the CPU
    /// clock of a given process or thread (`MAKE_THREAD_CPUCLOCK(pid, CPUCLOCK_SCHED)`) or a
    /// clock fd (`FD_TO_CLOCKID(fd)`), computed as the kernel encodes them.
    pub fn clock_id(&self) -> Option<i64> {
        if !matches!(self.sys, Sys::ClockGettime | Sys::ClockGettime64 | Sys::ClockGetres) {
            return None;
        }
        let a = match self.args {
            Args::Raw(r) => return Some(i64::from(r.regs[0] as i32)),
            Args::Text(_) => self.arg(0)?.trim(),
        };
        if let Some(i) = CLOCK_NAMES.iter().position(|n| *n == a) {
            return Some(i as i64);
        }
        // MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_X), MAKE_THREAD_CPUCLOCK(...), FD_TO_CLOCKID(fd)
        if let Some((f, rest)) = a.split_once('(') {
            let inner = rest.strip_suffix(')')?;
            let mut it = inner.split(',').map(str::trim);
            let id: i64 = it.next()?.parse().ok()?;
            let which = match it.next() {
                Some("CPUCLOCK_PROF") => 0,
                Some("CPUCLOCK_VIRT") => 1,
                Some("CPUCLOCK_SCHED") => 2,
                Some(n) => n.parse().ok()?,
                None => 0,
            };
            let v = match f {
                "MAKE_PROCESS_CPUCLOCK" => (!id << 3) | which,
                "MAKE_THREAD_CPUCLOCK" => (!id << 3) | which | 4,
                "FD_TO_CLOCKID" => (!id << 3) | 3,
                _ => return None,
            };
            return Some(i64::from(v as i32));
        }
        match a.strip_prefix('-') {
            Some(n) => number(n).map(|v| -(v as i64)),
            None => number(a).map(|v| i64::from(v as i32)),
        }
    }

    /// How long a nanosleep or a relative clock_nanosleep asked to sleep, in nanoseconds (`None`
    /// for an absolute clock_nanosleep, TIMER_ABSTIME, and when the request is not known).
    pub fn sleep_ns(&self) -> Option<u64> {
        let (i, flags) = match self.sys {
            Sys::Nanosleep => (0, None),
            Sys::ClockNanosleep => (2, Some(1)),
            _ => return None,
        };
        if let Args::Raw(r) = self.args {
            if flags.is_some() && r.regs[1] & 1 != 0 {
                return None;
            }
            return r.sleep_ns(self.sys);
        }
        if let Some(f) = flags {
            let a = self.arg(f)?.trim();
            if a.contains("TIMER_ABSTIME") || number(a).is_some_and(|v| v & 1 != 0) {
                return None;
            }
        }
        let (sec, ns) = args::parse_time_struct(self.arg(i)?)?;
        Some(sec.saturating_mul(1_000_000_000).saturating_add(ns))
    }

    /// The fd an mmap maps (`None` for an anonymous mapping, fd -1).
    pub fn mmap_fd(&self) -> Option<i32> {
        if self.sys != Sys::Mmap {
            return None;
        }
        let fd = match self.args {
            Args::Text(_) => args::parse_fd(self.arg(4)?)?.num,
            Args::Raw(r) => r.regs[4] as i32,
        };
        (fd >= 0).then_some(fd)
    }

    /// The file a sendfile copies from (its second argument, `in_fd`).
    pub fn sendfile_in_fd(&self) -> Option<i32> {
        if !matches!(self.sys, Sys::Sendfile | Sys::Sendfile64) {
            return None;
        }
        let fd = match self.args {
            Args::Text(_) => args::parse_fd(self.arg(1)?)?.num,
            Args::Raw(r) => r.regs[1] as i32,
        };
        (fd >= 0).then_some(fd)
    }

    /// What a wait that returned ready reported, as one comparable string: epoll's events
    /// (`EPOLLIN, {u32=20, ...}` items, sorted, since the kernel's order varies), poll's
    /// `revents` items, select's `in [3], out [12]`. `None` when it returned nothing or the
    /// result is not shown (the kernel program does not copy it). Two waits with the same
    /// answer found the same fds ready in the same way.
    pub fn ready_set(&self) -> Option<String> {
        if self.ret.value().is_none_or(|v| v <= 0) {
            return None;
        }
        let items = |s: &'a str| -> Option<String> {
            let inner = s.trim().strip_prefix(['[', '{'])?.strip_suffix([']', '}'])?;
            let mut v: Vec<&str> = args::split(inner).filter(|i| !i.is_empty()).collect();
            if v.is_empty() || v.iter().any(|i| i.contains("...")) {
                return None;
            }
            v.sort_unstable();
            Some(v.join(", "))
        };
        let note = match self.ret {
            Ret::Ok { note, .. } => note.trim(),
            _ => "",
        };
        match self.sys {
            Sys::EpollWait | Sys::EpollPwait | Sys::EpollPwait2 => items(self.arg(1)?),
            Sys::Poll | Sys::Ppoll => items(note.strip_prefix('(')?.strip_suffix(')')?),
            Sys::Select | Sys::NewSelect | Sys::Pselect6 => {
                let n = note.strip_prefix('(')?.strip_suffix(')')?;
                let n = n.split(", left").next()?.trim();
                (!n.is_empty()).then(|| n.to_string())
            }
            _ => None,
        }
    }

    /// The soft limit on open fds (RLIMIT_NOFILE) a getrlimit/prlimit64 call read or set, when
    /// shown (`{rlim_cur=16*1024, ...}`; `RLIM_INFINITY` is `u64::MAX`): how far a close
    /// sweep that follows it goes.
    pub fn nofile_limit(&self) -> Option<u64> {
        if self.ret.value() != Some(0) {
            return None;
        }
        let lim = match self.sys {
            Sys::Getrlimit | Sys::Ugetrlimit | Sys::Setrlimit => {
                (self.arg(0)? == "RLIMIT_NOFILE").then(|| self.arg(1))??
            }
            Sys::Prlimit64 => {
                if self.arg(1)? != "RLIMIT_NOFILE" {
                    return None;
                }
                // the new limit when one was set, else the old one read
                match self.arg(2)? {
                    "NULL" => self.arg(3)?,
                    new => new,
                }
            }
            _ => return None,
        };
        let cur = lim.strip_prefix('{')?.split(',').next()?.trim().strip_prefix("rlim_cur=")?;
        if cur.contains("INFINITY") {
            return Some(u64::MAX);
        }
        cur.split('*').try_fold(1u64, |acc, f| acc.checked_mul(f.trim().parse().ok()?))
    }

    /// The fd and events of an epoll_ctl call.
    pub fn epoll_ctl(&self) -> Option<EpollCtl> {
        if self.sys != Sys::EpollCtl {
            return None;
        }
        if let Args::Raw(r) = self.args {
            return Some(r.epoll_ctl());
        }
        let mut it = args::split(self.args_after_first()?);
        let op = match it.next().map(str::trim) {
            Some("EPOLL_CTL_ADD" | "1") => EpollCtl::ADD,
            Some("EPOLL_CTL_DEL" | "2") => EpollCtl::DEL,
            Some("EPOLL_CTL_MOD" | "3") => EpollCtl::MOD,
            _ => 0,
        };
        let fd = args::parse_fd(it.next()?)?.num;
        let events = it.next().and_then(|ev| {
            // `{events=EPOLLIN, data=...}`: first, where strace puts it (a searcher's set-up
            // cost more than the whole call on these short arguments)
            let v = match ev.trim_start().strip_prefix("{events=") {
                Some(v) => v,
                None => &ev[memchr::memmem::find(ev.as_bytes(), b"events=")? + 7..],
            };
            let end = v.bytes().position(|c| c == b',' || c == b'}').unwrap_or(v.len());
            Some(flag_bits(&v[..end], EPOLL_EVENTS) as u32)
        });
        Some(EpollCtl { op, fd, events })
    }

    /// The byte count a read/write-family call asked for (its third argument: `count`,
    /// `len`, or for readv/writev the number of buffers).
    pub fn requested_bytes(&self) -> Option<u64> {
        if let Some(c) = self.pre.count {
            return c;
        }
        if !matches!(
            self.sys,
            Sys::Read
                | Sys::Write
                | Sys::Recv
                | Sys::Send
                | Sys::Sendto
                | Sys::Recvfrom
                | Sys::Pread64
                | Sys::Pwrite64
                | Sys::Pread
                | Sys::Pwrite
                | Sys::Readv
                | Sys::Writev
        ) {
            return None;
        }
        match self.args {
            // the count follows the buffer, whose text may be long: read it from the end
            Args::Text(t) => match self.sys {
                Sys::Read | Sys::Write | Sys::Readv | Sys::Writev => from_end(t, 0),
                Sys::Recv | Sys::Send | Sys::Pread64 | Sys::Pwrite64 | Sys::Pread | Sys::Pwrite => from_end(t, 1),
                _ => None,
            }
            .or_else(|| self.arg(2)?.trim().parse().ok()),
            Args::Raw(r) => Some(r.regs[2]),
        }
    }

    /// The file offset of pread64/pwrite64 (their fourth argument).
    pub fn offset(&self) -> Option<u64> {
        if !matches!(self.sys, Sys::Pread64 | Sys::Pwrite64 | Sys::Pread | Sys::Pwrite) {
            return None;
        }
        match self.args {
            Args::Text(t) => from_end(t, 0).or_else(|| self.arg(3)?.trim().parse().ok()),
            Args::Raw(r) => u64::try_from(r.regs[3] as i64).ok(),
        }
    }

    /// Up to `out.len()` first bytes of the buffer a write/read-family call moved (the first
    /// string of its second argument, as far as the trace shows it); how many were written.
    pub fn payload_prefix(&self, out: &mut [u8]) -> usize {
        if let Args::Raw(r) = self.args {
            return r.payload_prefix(self.sys, self.name, out);
        }
        let Some(arg) = self.arg(1) else { return 0 };
        let Some(q) = arg.find('"') else { return 0 };
        args::unescape_prefix(&arg[q + 1..], out)
    }

    /// The buffers of a send/recv-family call, one per message (sendmmsg/recvmmsg carry
    /// several), each the concatenation of its iovecs, with whether the trace cut it short.
    pub fn payloads(&self) -> Vec<(Vec<u8>, bool)> {
        match self.args {
            Args::Text(t) => args::call_buffers(self.sys, t),
            Args::Raw(r) => r.payloads(self.sys, self.name),
        }
    }

    /// Feed the first `n` arguments to `h`, leaving out fd decorations that may change
    /// (a socket getting connected): equal calls hash equal.
    pub fn hash_args<H: Hasher>(&self, n: usize, h: &mut H) {
        match self.args {
            Args::Text(t) => {
                for a in args::split(t).take(n) {
                    let a = a.split('<').next().unwrap_or(a);
                    a.hash(h);
                }
            }
            Args::Raw(r) => r.regs[..n.min(6)].hash(h),
        }
    }
}

pub(crate) fn socket_kind_of(inet: bool, v6: bool, unix: bool, netlink: bool, stream: bool, dgram: bool) -> TargetKind {
    if inet {
        match (stream, dgram, v6) {
            (true, _, false) => TargetKind::Tcp,
            (true, _, true) => TargetKind::Tcp6,
            (_, true, false) => TargetKind::Udp,
            (_, true, true) => TargetKind::Udp6,
            _ => TargetKind::Raw,
        }
    } else if unix {
        TargetKind::Unix
    } else if netlink {
        TargetKind::Netlink
    } else {
        TargetKind::Socket
    }
}

/// The `k`-th argument from the end as a number ([`args::plain_from_end`]).
fn from_end(t: &str, k: usize) -> Option<u64> {
    args::plain_from_end(t, k)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Ret;

    fn sc(sys: Sys, args: &str) -> Syscall<'_> {
        Syscall {
            sys,
            name: sys.name(),
            args: Args::Text(args),
            ret: Ret::Unknown,
            dur_ns: None,
            resumed: false,
            pre: crate::Pre::NONE,
        }
    }

    #[test]
    fn flags_by_name_and_value() {
        let f = |s, a| sc(s, a).open_flags().unwrap();
        assert!(f(Sys::Socket, "AF_INET, SOCK_STREAM|SOCK_NONBLOCK, 0").contains(OpenFlags::NONBLOCK));
        assert!(f(Sys::Socket, "AF_INET, 0x80801, 0").contains(OpenFlags::NONBLOCK));
        assert!(f(Sys::Socket, "AF_INET, 0x80800 /* SOCK_CLOEXEC|SOCK_NONBLOCK */, 0").contains(OpenFlags::NONBLOCK));
        assert!(!f(Sys::Openat, "AT_FDCWD, \"/x\", O_RDONLY|O_CLOEXEC").contains(OpenFlags::NONBLOCK));
        assert!(f(Sys::Openat, "AT_FDCWD, \"/x\", O_WRONLY|O_CREAT|O_SYNC, 0644").contains(OpenFlags::SYNC));
        assert!(f(Sys::Openat, "AT_FDCWD, \"/x\", 0x101041").contains(OpenFlags::SYNC));
        assert!(!f(Sys::Openat, "AT_FDCWD, \"/x\", 0x1041").contains(OpenFlags::SYNC));
        assert!(f(Sys::Openat, "AT_FDCWD, \"/x\", 0x1041").contains(OpenFlags::DSYNC));
        let peek = sc(Sys::Recvfrom, "3, \"\", 1, MSG_PEEK, NULL, NULL").msg_flags().unwrap();
        assert!(peek.contains(MsgFlags::PEEK));
        assert_eq!(sc(Sys::Recv, "3, 0x1, 1, 0x2").msg_flags(), Some(MsgFlags(2)));
    }

    #[test]
    fn sendfile_source() {
        // Apache's event MPM (tests/fixtures/servers/ordinary/apache-event.strace.gz)
        let a = sc(
            Sys::Sendfile,
            "11<TCP:[127.0.0.1:51045->127.0.0.1:33582]>, 13</tmp/syslint-apache.Cj7Tk5/htdocs/index.html>, [0] => [617], 617",
        );
        assert_eq!(a.sendfile_in_fd(), Some(13));
        assert_eq!(sc(Sys::Sendfile64, "5, 7, NULL, 4096").sendfile_in_fd(), Some(7));
        assert_eq!(sc(Sys::Write, "5, \"x\", 1").sendfile_in_fd(), None);
    }

    #[test]
    fn ready_sets_and_limits() {
        let w = |sys, a: &'static str, v: i64, note: &'static str| Syscall {
            ret: Ret::Ok { val: v, deco: None, note },
            ..sc(sys, a)
        };
        // beanstalkd#53 (pre-4.16 braces), the same three fds in another order
        let a = w(Sys::EpollWait, "4, {{EPOLLIN, {u32=20, u64=20}}, {EPOLLIN, {u32=26, u64=26}}}, 32, 998", 2, "");
        let b = w(Sys::EpollWait, "4, {{EPOLLIN, {u32=26, u64=26}}, {EPOLLIN, {u32=20, u64=20}}}, 32, 998", 2, "");
        assert!(a.ready_set().is_some());
        assert_eq!(a.ready_set(), b.ready_set());
        let c = w(Sys::EpollWait, "4, [{EPOLLOUT, {u32=26, u64=26}}], 32, 998", 1, "");
        assert_ne!(a.ready_set(), c.ready_set());
        assert_eq!(w(Sys::EpollWait, "3, [], 1024, 0", 0, "").ready_set(), None);
        // a hand-elided event says nothing about which
        assert_eq!(w(Sys::EpollWait, "3, [{EPOLLIN, ...}], 1024, 154", 1, "").ready_set(), None);
        let p = w(Sys::Poll, "[{fd=3, events=POLLIN}], 1, 100", 1, "([{fd=3, revents=POLLIN}])");
        assert_eq!(p.ready_set().as_deref(), Some("{fd=3, revents=POLLIN}"));
        let s = w(
            Sys::Pselect6,
            "4, [3], NULL, [3], {tv_sec=60, tv_nsec=0}, NULL",
            1,
            "(in [3], left {tv_sec=59, tv_nsec=999999180})",
        );
        assert_eq!(s.ready_set().as_deref(), Some("in [3]"));
        let l = |sys, a: &'static str| Syscall { ret: Ret::Ok { val: 0, deco: None, note: "" }, ..sc(sys, a) };
        assert_eq!(
            l(Sys::Getrlimit, "RLIMIT_NOFILE, {rlim_cur=16*1024, rlim_max=16*1024}").nofile_limit(),
            Some(16384)
        );
        assert_eq!(l(Sys::Getrlimit, "RLIMIT_NOFILE, {rlim_cur=999999, rlim_max=999999}").nofile_limit(), Some(999999));
        assert_eq!(
            l(Sys::Getrlimit, "RLIMIT_STACK, {rlim_cur=8192*1024, rlim_max=RLIM64_INFINITY}").nofile_limit(),
            None
        );
        let p = l(Sys::Prlimit64, "0, RLIMIT_NOFILE, NULL, {rlim_cur=1024, rlim_max=512*1024}");
        assert_eq!(p.nofile_limit(), Some(1024));
        let p = l(Sys::Prlimit64, "0, RLIMIT_NOFILE, {rlim_cur=RLIM64_INFINITY, rlim_max=RLIM64_INFINITY}, NULL");
        assert_eq!(p.nofile_limit(), Some(u64::MAX));
    }

    #[test]
    fn calls_by_kind() {
        let c = sc(Sys::Clone, "child_stack=NULL, flags=CLONE_VM|CLONE_FILES|CLONE_THREAD").clone_flags().unwrap();
        assert!(c.contains(CloneFlags::THREAD) && c.contains(CloneFlags::FILES));
        assert_eq!(sc(Sys::Futex, "0x7f, FUTEX_WAIT_PRIVATE, 2, NULL").futex_op(), Some(FutexOp::Wait));
        assert_eq!(sc(Sys::Futex, "0x7f, FUTEX_WAKE_PRIVATE, 1").futex_op(), Some(FutexOp::Other));
        assert!(sc(Sys::Wait4, "-1, 0x7ff, WNOHANG, NULL").wait_options().unwrap().contains(WaitOptions::NOHANG));
        assert_eq!(sc(Sys::Fcntl, "3, F_DUPFD_CLOEXEC, 0").fcntl_cmd(), Some(FcntlCmd::Dup));
        assert_eq!(sc(Sys::Fcntl, "3, F_GETFL").fcntl_cmd(), Some(FcntlCmd::Get));
        // strace's notation; only WAIT_AFTER waits for the data to be written
        assert_eq!(sc(Sys::SyncFileRange, "5</w/000001>, 0, 0, SYNC_FILE_RANGE_WRITE").sync_range_waits(), Some(false));
        let all = "5, 0, 8192, SYNC_FILE_RANGE_WAIT_BEFORE|SYNC_FILE_RANGE_WRITE|SYNC_FILE_RANGE_WAIT_AFTER";
        assert_eq!(sc(Sys::SyncFileRange, all).sync_range_waits(), Some(true));
        assert_eq!(sc(Sys::SyncFileRange, "5, 0, 0, 0x7").sync_range_waits(), Some(true));
        assert_eq!(sc(Sys::SyncFileRange2, "5, SYNC_FILE_RANGE_WRITE, 0, 0").sync_range_waits(), Some(false));
        assert_eq!(sc(Sys::Fsync, "5").sync_range_waits(), None);
        assert_eq!(sc(Sys::Prctl, "PR_SET_NAME, \"worker\"").prctl_name().as_deref(), Some("worker"));
        assert_eq!(sc(Sys::Socket, "AF_INET6, SOCK_DGRAM, 0").socket_kind(), Some(TargetKind::Udp6));
        assert_eq!(sc(Sys::Socket, "0x2, 0x1, 0").socket_kind(), Some(TargetKind::Tcp));
        assert_eq!(sc(Sys::Pipe2, "[3<pipe:[1]>, 4<pipe:[1]>], O_CLOEXEC").fd_pair(), Some((3, 4)));
        assert_eq!(
            sc(Sys::Poll, "[{fd=5, events=POLLIN}], 1, 0").polled_fds(),
            Some(PolledFds { first: 5, only: true })
        );
        assert_eq!(sc(Sys::Select, "6, [5], [5], NULL, NULL").polled_fds(), Some(PolledFds { first: 5, only: false }));
        let o = sc(Sys::Setsockopt, "3, SOL_SOCKET, SO_REUSEPORT, [1], 4").sockopt().unwrap();
        assert_eq!((o.level, o.name, o.value), (Some(1), Some(15), Some(1)));
        let e = sc(Sys::EpollCtl, "5, EPOLL_CTL_ADD, 3, {events=EPOLLIN|EPOLLEXCLUSIVE, data={u32=3}}").epoll_ctl();
        assert_eq!(e, Some(EpollCtl { op: EpollCtl::ADD, fd: 3, events: Some(1 | 1 << 28) }));
        let m =
            sc(Sys::EpollCtl, "4<anon_inode:[eventpoll]>, EPOLL_CTL_MOD, 5<TCP:[1]>, {events=EPOLLOUT, data={u32=5}}");
        assert_eq!(m.epoll_ctl(), Some(EpollCtl { op: EpollCtl::MOD, fd: 5, events: Some(4) }));
        let d = sc(Sys::EpollCtl, "4, EPOLL_CTL_DEL, 5, NULL").epoll_ctl();
        assert_eq!(d.map(|d| (d.op, d.fd, d.events)), Some((EpollCtl::DEL, 5, None)));
        let e = sc(Sys::EpollCtl, "5, EPOLL_CTL_ADD, 3, {events=0x10000001, data={u32=3}}").epoll_ctl();
        assert_eq!(e.and_then(|e| e.events), Some(1 | 1 << 28));
        // clocks as strace 6.1 prints them (lab/clock-syscalls traces)
        assert_eq!(sc(Sys::ClockGettime, "CLOCK_MONOTONIC, {tv_sec=1, tv_nsec=2}").clock_id(), Some(1));
        assert_eq!(sc(Sys::ClockGettime, "CLOCK_PROCESS_CPUTIME_ID, {tv_sec=0, tv_nsec=2}").clock_id(), Some(2));
        // glibc's clock_getcpuclockid(1234): MAKE_PROCESS_CPUCLOCK(1234, CPUCLOCK_SCHED) = ~1234 << 3 | 2
        let p = sc(Sys::ClockGettime, "MAKE_PROCESS_CPUCLOCK(1234, CPUCLOCK_SCHED), {tv_sec=0, tv_nsec=2}");
        assert_eq!(p.clock_id(), Some(-9878));
        let t = sc(Sys::ClockGettime, "MAKE_THREAD_CPUCLOCK(1234, CPUCLOCK_SCHED), {tv_sec=0, tv_nsec=2}");
        assert_eq!(t.clock_id(), Some(-9874));
        assert_eq!(sc(Sys::ClockGettime, "0x1, 0x7ffd0000").clock_id(), Some(1));
        assert_eq!(sc(Sys::Gettimeofday, "{tv_sec=1, tv_usec=2}, NULL").clock_id(), None);
        // sleeps as strace 6.1 prints them (lab/timer-polling traces)
        assert_eq!(sc(Sys::Nanosleep, "{tv_sec=0, tv_nsec=20000000}, NULL").sleep_ns(), Some(20_000_000));
        let c = sc(Sys::ClockNanosleep, "CLOCK_REALTIME, 0, {tv_sec=1, tv_nsec=5}, 0x7ffd0000");
        assert_eq!(c.sleep_ns(), Some(1_000_000_005));
        let a = sc(Sys::ClockNanosleep, "CLOCK_MONOTONIC, TIMER_ABSTIME, {tv_sec=20621, tv_nsec=5}, NULL");
        assert_eq!(a.sleep_ns(), None);
    }

    #[test]
    fn decoded_once_answers_as_decoded_each_time() {
        // what decode_pre keeps (the fd's decoration, a plain path) answers exactly as the
        // arguments split from the start do, including a decoration holding a comma and a
        // path holding an escape
        let cases = [
            (Sys::Fcntl, "3</srv/a,b.log>, F_GETFD"),
            (Sys::Fcntl, "3, F_DUPFD_CLOEXEC, 0"),
            (Sys::EpollCtl, "5<anon_inode:[eventpoll]>, EPOLL_CTL_MOD, 7<TCP:[127.0.0.1:80->127.0.0.1:5000]>, {events=EPOLLIN, data={u32=7, u64=7}}"),
            (Sys::Openat, "AT_FDCWD</var/www>, \"index.php\", O_RDONLY|O_CLOEXEC"),
            (Sys::Openat, "AT_FDCWD, \"/tmp/a\\\"b\", O_RDONLY"),
            (Sys::Newfstatat, "3</etc>, \"hosts\", {st_mode=S_IFREG|0644, st_size=221, ...}, 0"),
            (Sys::Stat, "@\"abstract\"..., 0x7ffd"),
            (Sys::Write, "4<pipe:[123]>, \"x, y\", 4"),
        ];
        for (sys, a) in cases {
            let plain = sc(sys, a);
            let mut pre = sc(sys, a);
            pre.decode_pre();
            for i in 0..4 {
                assert_eq!(pre.arg(i), plain.arg(i), "{a}: arg {i}");
            }
            assert_eq!(pre.path(), plain.path(), "{a}");
            assert_eq!(pre.dir_fd(), plain.dir_fd(), "{a}");
            assert_eq!(pre.fcntl_cmd(), plain.fcntl_cmd(), "{a}");
            assert_eq!(pre.epoll_ctl(), plain.epoll_ctl(), "{a}");
        }
        let mut p = sc(Sys::Openat, "AT_FDCWD, \"/tmp/a\\\"b\", O_RDONLY");
        p.decode_pre();
        assert_eq!(p.path().as_deref(), Some("/tmp/a\"b"));
        assert!(!p.pre.path_plain);
        let mut p = sc(Sys::Fcntl, "3</srv/a,b.log>, F_GETFD");
        p.decode_pre();
        assert_eq!(p.arg(1), Some("F_GETFD"));
    }
}
