//! The one event type every syslint capture backend produces, and the syscall knowledge the
//! analysis needs (names, classes, argument decoding). No I/O here.
//!
//! Events borrow from the backend's buffer (`'a`): the strace reader hands out slices of the
//! line it just read, the eBPF formatter the record's registers and copied memory
//! ([`Args::Raw`]), so neither allocates per event. Anything a consumer keeps beyond the
//! callback must be copied. Arguments are asked through [`Syscall`]'s typed accessors, which
//! answer alike for both backings.

pub mod args;
pub mod errno;
pub mod ids;
mod names;
pub mod raw;
pub mod redact;
pub mod stack;
pub mod syscalls;
pub mod syscalls_x86_64;
pub mod target;
pub mod typed;

pub use args::{FdArg, SockAddr, Timeout};
pub use ids::{Tgid, Tid};
pub use raw::{DataKind, RawArgs, RawData};
pub use stack::{Frame, SampledStacks, StackId, StackTable};
pub use syscalls::{Class, Sys};
pub use target::{Direction, TargetKind};
pub use typed::{
    CloneFlags, EpollCtl, FcntlCmd, Futex, FutexCmd, FutexOp, IoctlReq, MemKind, MemOp, MsgFlags, OpenFlags, PolledFds,
    SockOpt, WaitOptions,
};

/// One thing that happened in the traced program.
#[derive(Clone, Debug, PartialEq)]
pub struct Event<'a> {
    /// The thread (task) it happened on.
    pub tid: Tid,
    /// When it started, in nanoseconds of the capture's clock (see [`Clock`]); `None` when the
    /// trace has no timestamps.
    pub ts_ns: Option<i64>,
    pub kind: EventKind<'a>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum EventKind<'a> {
    Syscall(Syscall<'a>),
    /// `--- SIGCHLD {si_signo=SIGCHLD, ...} ---`
    Signal {
        name: &'a str,
        info: &'a str,
    },
    /// `+++ exited with 3 +++`
    Exited {
        code: i32,
    },
    /// `+++ killed by SIGKILL (core dumped) +++`
    Killed {
        signal: &'a str,
        core_dumped: bool,
    },
    /// `Process 123 attached` (with `threads` when strace said "attached with N threads").
    Attached {
        threads: Option<u32>,
    },
    /// `Process 123 detached`
    Detached,
    /// This pid is the one earlier events showed as `old` (a strace log that gained its pid
    /// column only when a second process appeared: the earlier lines had none).
    Alias {
        old: Tid,
    },
    /// An fd this thread holds that was opened before the capture began (an attach), and
    /// what it is, in the notation of a `-yy` decoration (`/var/log/x`,
    /// `TCP:[127.0.0.1:80->127.0.0.1:5000]`). Announced before the thread's first call.
    FdKnown {
        fd: i32,
        target: &'a str,
    },
    /// Who this thread is, as /proc said when the capture attached: a thread of process
    /// `tgid` (itself when it is the main thread), whose parent is `parent` and whose program
    /// is `comm` (empty when unknown). A trace begun mid-life never shows the clone and execve
    /// that would say it. Announced before the thread's first call.
    TaskKnown {
        tgid: Tgid,
        parent: Option<Tgid>,
        comm: &'a str,
    },
    /// This thread began a clone, fork or vfork that strace printed unfinished: the task it
    /// makes may show calls before the call returns with its id (`thread`: CLONE_THREAD, a
    /// thread of this process; `files`: CLONE_FILES, the fd table shared).
    Spawning {
        thread: bool,
        files: bool,
    },
}

/// The arguments after the first, when the first was read as an fd, bare or with a
/// decoration (`3</path/to,file>`, in `t`): splitting there does not scan the decoration again (fcntl's,
/// epoll_ctl's and a write's later arguments were split from the start for every consumer).
pub(crate) fn after_fd<'a>(fd: Option<FdArg<'a>>, t: &'a str) -> Option<&'a str> {
    let Some(d) = fd?.deco else {
        // a bare number (or AT_FDCWD) and its comma
        return args::parse_fd_num(t)?.1.strip_prefix(',');
    };
    let start = (d.as_ptr() as usize).checked_sub(t.as_ptr() as usize)?;
    // the decoration lies inside these arguments, followed by its `>` and a comma
    let end = start + d.len() + 1;
    (end < t.len() && t.as_bytes()[end] == b',').then(|| &t[end + 1..])
}

/// A finished (or never finished) system call.
#[derive(Clone, Debug, PartialEq)]
pub struct Syscall<'a> {
    pub sys: Sys,
    /// The name as printed (kept for syscalls not in the table).
    pub name: &'a str,
    /// The arguments: strace's text, or the kernel's values. Ask the accessors below
    /// ([`fd`](Self::fd), [`path`](Self::path), [`open_flags`](Self::open_flags), ...), which
    /// answer alike for both; [`render_args`](Self::render_args) gives the text.
    pub args: Args<'a>,
    pub ret: Ret<'a>,
    /// Time spent in the call (`-T`, or the gap between an unfinished line and its resumption).
    pub dur_ns: Option<u64>,
    /// Merged from an `<unfinished ...>` line and its `<... resumed>` line.
    pub resumed: bool,
    /// Answers decoded once, by the reader, for the accessors many consumers ask.
    pub pre: Pre<'a>,
}

/// What the text reader decoded once, ahead of the consumers (the parallel reader does it on
/// its worker threads, off the analysis thread): the fd argument and the path argument, which
/// the model and several detectors ask of the same call. `None`: not decoded here, the
/// accessors decode from the arguments.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Pre<'a> {
    /// [`Syscall::fd`], once decoded.
    pub fd: Option<Option<FdArg<'a>>>,
    /// The path argument's text as printed (quoted), once found ([`Syscall::path`] unquotes);
    /// with [`path_plain`](Self::path_plain), already the unquoted path.
    pub path: Option<Option<&'a str>>,
    /// `path` holds the path between its quotes, which has no escape to undo: five consumers
    /// ask each lookup's path, and finding its closing quote each time cost ~200 instructions.
    pub path_plain: bool,
    /// [`Syscall::open_flags`], once decoded.
    pub open_flags: Option<Option<typed::OpenFlags>>,
    /// [`Syscall::requested_bytes`], once decoded.
    pub count: Option<Option<u64>>,
    /// [`Syscall::timeout`], once decoded.
    pub timeout: Option<Option<args::Timeout>>,
    /// Where the call was made from: its user-space stack in the input's
    /// [`StackTable`](stack::StackTable), when the backend captured one (strace `-k`, eBPF's
    /// sampled stacks). Not decoded from the arguments: attached by the backend, and kept by
    /// [`Syscall::decode_pre`].
    pub stack: Option<stack::StackId>,
}

impl Pre<'_> {
    /// Nothing decoded ahead.
    pub const NONE: Pre<'static> =
        Pre { fd: None, path: None, path_plain: false, open_flags: None, count: None, timeout: None, stack: None };
}

/// The arguments of a call, as the backend has them.
#[derive(Copy, Clone, PartialEq)]
pub enum Args<'a> {
    /// The text between the outer parentheses, as strace printed it.
    Text(&'a str),
    /// The registers and copied memory the kernel program sent (eBPF).
    Raw(&'a RawArgs<'a>),
}

impl<'a> Args<'a> {
    /// The strace text, for text-backed arguments.
    pub fn text(&self) -> Option<&'a str> {
        match self {
            Args::Text(t) => Some(t),
            Args::Raw(_) => None,
        }
    }
}

impl std::fmt::Debug for Args<'_> {
    /// Text shows as the string it is (as before arguments had two backings).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Args::Text(t) => t.fmt(f),
            Args::Raw(r) => r.fmt(f),
        }
    }
}

impl std::fmt::Display for Args<'_> {
    /// The text; raw arguments rendered in strace's notation (as for their x86_64 number).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Args::Text(t) => f.write_str(t),
            Args::Raw(r) => {
                let sys = Sys::from_x86_64(r.nr);
                let name = if sys == Sys::Other { "syscall" } else { sys.name() };
                f.write_str(&r.text(sys, name))
            }
        }
    }
}

/// What a syscall returned.
#[derive(Clone, Debug, PartialEq)]
pub enum Ret<'a> {
    /// Success: the value, the `-y` decoration of a returned fd (`3</etc/hosts>` gives
    /// `/etc/hosts`) and any note strace added in parentheses (`(Timeout)`, `([{fd=5, ...}])`).
    Ok { val: i64, deco: Option<&'a str>, note: &'a str },
    /// Failure: `-1 ENOENT (No such file or directory)`; `ERESTARTSYS` and friends come with
    /// `val` 0 and `= ?` in the text.
    Err { val: i64, errno: &'a str },
    /// `= ?`: the call did not return (exit, execve in another thread, the process died).
    Unknown,
    /// Still in progress when the trace ended (an `<unfinished ...>` with no resumption).
    Unfinished,
}

impl<'a> Ret<'a> {
    pub fn is_err(&self) -> bool {
        matches!(self, Ret::Err { .. })
    }
    pub fn errno(&self) -> Option<&'a str> {
        match self {
            Ret::Err { errno, .. } => Some(errno),
            _ => None,
        }
    }
    /// The return value when the call succeeded.
    pub fn value(&self) -> Option<i64> {
        match self {
            Ret::Ok { val, .. } => Some(*val),
            _ => None,
        }
    }
}

/// What the timestamps in a capture mean.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Clock {
    /// No timestamps.
    #[default]
    None,
    /// `-t`/`-tt`: time of day (nanoseconds since local midnight, carried over midnight).
    TimeOfDay,
    /// `-ttt`: seconds since the Unix epoch.
    Epoch,
    /// `-r`: relative; the reader accumulates the deltas, so 0 is the first event.
    Relative,
    /// A monotonic kernel clock (live backends).
    Monotonic,
    /// [`Clock::Monotonic`] with the offset to local time of day known (a live capture or a
    /// recording converts once at its start): evidence shows times of day, as strace -tt.
    MonotonicAt {
        /// Added to a timestamp: nanoseconds since the epoch in local time.
        local_offset_ns: i64,
    },
}

impl Clock {
    /// The clock named by [`as_str`](Self::as_str) (unknown names: `None`).
    pub fn from_name(s: &str) -> Clock {
        match s {
            "time-of-day" => Clock::TimeOfDay,
            "epoch" => Clock::Epoch,
            "relative" => Clock::Relative,
            "monotonic" => Clock::Monotonic,
            _ => Clock::None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Clock::None => "none",
            Clock::TimeOfDay => "time-of-day",
            Clock::Epoch => "epoch",
            Clock::Relative => "relative",
            Clock::Monotonic | Clock::MonotonicAt { .. } => "monotonic",
        }
    }
}

impl<'a> Syscall<'a> {
    /// The first argument as an fd, for syscalls whose first argument is one.
    #[inline]
    pub fn fd(&self) -> Option<FdArg<'a>> {
        if let Some(f) = self.pre.fd {
            return f;
        }
        if !self.sys.is(Class::FD) {
            return None;
        }
        match self.args {
            // parse_fd reads only the leading number and its decoration
            Args::Text(t) => args::parse_fd(t),
            Args::Raw(r) => Some(r.first_fd()),
        }
    }

    /// The first argument's fd number, for syscalls whose first argument is one, without
    /// reading its decoration ([`fd`](Self::fd) has both): what most callers need, and cheaper.
    #[inline]
    pub fn fd_num(&self) -> Option<i32> {
        if let Some(f) = self.pre.fd {
            return f.map(|f| f.num);
        }
        if !self.sys.is(Class::FD) {
            return None;
        }
        match self.args {
            Args::Text(t) => args::parse_fd_num(t).map(|(n, _)| n),
            Args::Raw(r) => Some(r.first_fd().num),
        }
    }

    /// Argument `i` (0-based) as strace printed it (text-backed arguments only: for raw ones
    /// ask the typed accessors, or [`render_args`](Self::render_args)).
    pub fn arg(&self, i: usize) -> Option<&'a str> {
        match i.checked_sub(1) {
            Some(j) => args::split(self.args_after_first()?).nth(j),
            None => args::split(self.args.text()?).next(),
        }
    }

    /// The text-backed arguments after the first: from the end of the fd the reader decoded
    /// ([`after_fd`]: its decoration is not scanned again), else split off; `None` for raw
    /// arguments or none at all.
    pub(crate) fn args_after_first(&self) -> Option<&'a str> {
        let t = self.args.text()?;
        after_fd(self.pre.fd.flatten(), t).or_else(|| {
            let mut s = args::split(t);
            s.next()?;
            Some(s.rest())
        })
    }

    /// The arguments in strace's notation, appended to `o` (raw ones rendered, decorated only
    /// where the process held the fd before the capture began: [`raw::RawArgs::fds_before`]).
    pub fn render_args(&self, o: &mut String) {
        match self.args {
            Args::Text(t) => o.push_str(t),
            Args::Raw(r) => raw::render(o, self.sys, self.name, r, &|fd| r.fd_before(fd)),
        }
    }

    /// The path a lookup/open/exec call names, unescaped.
    pub fn path(&self) -> Option<std::borrow::Cow<'a, str>> {
        let c = self.sys.class();
        let idx = if c.has(Class::AT) { 1 } else { 0 };
        if !(c.has(Class::LOOKUP) || c.has(Class::EXEC) || c.has(Class::AT)) {
            return None;
        }
        match self.args {
            Args::Text(_) => match self.pre.path {
                Some(p) if self.pre.path_plain => p.map(std::borrow::Cow::Borrowed),
                Some(p) => args::unquote(p?),
                None => args::unquote(self.arg(idx)?),
            },
            Args::Raw(r) => r.path(self.sys, idx),
        }
    }

    /// Decode what [`Pre`] holds, once: for a text reader to call before handing the call
    /// on (a call with raw arguments answers from them directly and is left as it is).
    pub fn decode_pre(&mut self) {
        if !matches!(self.args, Args::Text(_)) {
            return;
        }
        let stack = self.pre.stack;
        self.pre = Pre::NONE;
        let fd = self.fd();
        let c = self.sys.class();
        let path_idx = if c.has(Class::AT) { 1 } else { 0 };
        let wants_path = c.has(Class::LOOKUP) || c.has(Class::EXEC) || c.has(Class::AT);
        let flags_idx = self.open_flags_index();
        // the arguments are split once, up to the last one asked for (each `arg(i)` would
        // split from the start again: openat's path and flags cost two passes over its fd's
        // decoration and its path)
        let last = match (wants_path, flags_idx) {
            (true, Some(f)) => Some(f.max(path_idx)),
            (true, None) => Some(path_idx),
            (false, f) => f,
        };
        let mut first: [Option<&'a str>; 4] = [None; 4];
        if let (Some(last), Args::Text(t)) = (last, self.args) {
            // an fd's decoration was just read: start after it instead of reading it again
            match after_fd(fd, t) {
                Some(rest) if last > 0 => {
                    first[0] = Some(&t[..t.len() - rest.len() - 1]);
                    for (slot, a) in first[1..].iter_mut().zip(args::split(rest)).take(last) {
                        *slot = Some(a);
                    }
                }
                _ => {
                    for (slot, a) in first.iter_mut().zip(args::split(t)).take(last + 1) {
                        *slot = Some(a);
                    }
                }
            }
        }
        let path = if wants_path { first[path_idx] } else { None };
        // a quoted path without escapes is its own unquoted form: keep that
        let plain = path.and_then(args::plain_quoted);
        // each asked only of its own syscalls: `None` elsewhere costs nothing to keep
        let open_flags = Some(flags_idx.and_then(|i| first[i]).map(typed::open_flags_of_text));
        let count = Some(self.requested_bytes());
        let timeout = Some(self.timeout());
        self.pre = Pre {
            fd: Some(fd),
            path: Some(plain.or(path)),
            path_plain: plain.is_some(),
            open_flags,
            count,
            timeout,
            stack,
        };
    }

    /// The call's stack in the input's [`StackTable`], when the backend captured one.
    #[inline]
    pub fn stack(&self) -> Option<StackId> {
        self.pre.stack
    }

    /// Bytes moved by a read/write-family call (its return value).
    pub fn bytes(&self) -> Option<u64> {
        if self.sys.is(Class::READ) || self.sys.is(Class::WRITE) {
            match self.ret {
                Ret::Ok { val, .. } if val >= 0 => Some(val as u64),
                _ => None,
            }
        } else {
            None
        }
    }

    /// The timeout of a poll/select/epoll wait.
    pub fn timeout(&self) -> Option<Timeout> {
        if let Some(t) = self.pre.timeout {
            return t;
        }
        match self.args {
            Args::Text(t) => args::poll_timeout(self.sys, t),
            Args::Raw(r) => r.timeout(self.sys),
        }
    }

    /// The socket address of connect/bind/accept/sendto/recvfrom.
    pub fn sockaddr(&self) -> Option<SockAddr> {
        match self.args {
            Args::Text(t) => args::find_sockaddr(t),
            Args::Raw(r) => r.sockaddr(self.sys),
        }
    }
}
