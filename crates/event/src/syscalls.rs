//! Syscall knowledge as data: one table, names as strace prints them on every
//! architecture we meet in logs (x86_64, i386, arm, aarch64), each with the classes the
//! analysis needs. `tests::table_is_consistent` checks the table.

/// Classes a syscall can belong to. A syscall may be in several.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Class(pub u32);

impl Class {
    pub const NONE: Class = Class(0);
    /// First argument is a file descriptor.
    pub const FD: Class = Class(1 << 0);
    /// Reads bytes into the process; the return value is a byte count.
    pub const READ: Class = Class(1 << 1);
    /// Writes bytes out of the process; the return value is a byte count.
    pub const WRITE: Class = Class(1 << 2);
    /// Waits for readiness of several fds with a timeout (poll, select, epoll).
    pub const POLL: Class = Class(1 << 3);
    /// Looks a path up in the file system (stat, access, open, readlink, ...).
    pub const LOOKUP: Class = Class(1 << 4);
    /// Creates a new fd referring to a path (open, openat, creat).
    pub const OPEN: Class = Class(1 << 5);
    /// Socket and network calls.
    pub const NET: Class = Class(1 << 6);
    /// Flushes data to stable storage.
    pub const SYNC: Class = Class(1 << 7);
    /// Creates a process or thread.
    pub const SPAWN: Class = Class(1 << 8);
    /// Replaces the program image.
    pub const EXEC: Class = Class(1 << 9);
    /// The path argument follows a directory fd (the *at family).
    pub const AT: Class = Class(1 << 10);
    /// Sleeps or waits for something other than fd readiness.
    pub const WAIT: Class = Class(1 << 11);
    /// Memory management.
    pub const MEM: Class = Class(1 << 12);
    /// Closes or duplicates fds.
    pub const FDMGMT: Class = Class(1 << 13);
    /// Ends the process or thread.
    pub const EXIT: Class = Class(1 << 14);

    pub const fn union(self, o: Class) -> Class {
        Class(self.0 | o.0)
    }
    pub const fn has(self, o: Class) -> bool {
        self.0 & o.0 == o.0 && o.0 != 0
    }
}

impl std::ops::BitOr for Class {
    type Output = Class;
    fn bitor(self, o: Class) -> Class {
        self.union(o)
    }
}

macro_rules! syscalls {
    ($( $id:ident = $name:literal $( : $($class:ident)|+ )? ;)*) => {
        /// A syscall known to syslint. `Sys::Other` stands for any name not in the table;
        /// the event keeps the name text so nothing is lost.
        #[repr(u16)]
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Sys { $($id,)* Other }

        /// `(Sys, name, classes)` for every known syscall, in `Sys` order.
        pub static TABLE: &[(Sys, &str, Class)] = &[
            $( (Sys::$id, $name, Class(0 $( $(| Class::$class.0)+ )?)), )*
        ];
    };
}

syscalls! {
    // I/O on fds
    Read = "read": FD | READ;
    Write = "write": FD | WRITE;
    Readv = "readv": FD | READ;
    Writev = "writev": FD | WRITE;
    Pread64 = "pread64": FD | READ;
    Pwrite64 = "pwrite64": FD | WRITE;
    Pread = "pread": FD | READ;
    Pwrite = "pwrite": FD | WRITE;
    Preadv = "preadv": FD | READ;
    Pwritev = "pwritev": FD | WRITE;
    Preadv2 = "preadv2": FD | READ;
    Pwritev2 = "pwritev2": FD | WRITE;
    Sendfile = "sendfile": FD | WRITE;
    Sendfile64 = "sendfile64": FD | WRITE;
    Splice = "splice": FD;
    Tee = "tee": FD;
    CopyFileRange = "copy_file_range": FD | WRITE;
    Lseek = "lseek": FD;
    Llseek = "_llseek": FD;
    Ioctl = "ioctl": FD;
    Fcntl = "fcntl": FD;
    Fcntl64 = "fcntl64": FD;
    Flock = "flock": FD;
    Ftruncate = "ftruncate": FD;
    Ftruncate64 = "ftruncate64": FD;
    Fallocate = "fallocate": FD;
    Fadvise64 = "fadvise64": FD;
    Fadvise6464 = "fadvise64_64": FD;
    Getdents = "getdents": FD;
    Getdents64 = "getdents64": FD;
    Fstat = "fstat": FD;
    Fstat64 = "fstat64": FD;
    Fstatfs = "fstatfs": FD;
    Fstatfs64 = "fstatfs64": FD;
    Fchmod = "fchmod": FD;
    Fchown = "fchown": FD;
    Fchdir = "fchdir": FD;
    Fgetxattr = "fgetxattr": FD;
    Fsetxattr = "fsetxattr": FD;
    Flistxattr = "flistxattr": FD;
    // sync
    Fsync = "fsync": FD | SYNC;
    Fdatasync = "fdatasync": FD | SYNC;
    SyncFileRange = "sync_file_range": FD | SYNC;
    SyncFileRange2 = "sync_file_range2": FD | SYNC;
    Sync = "sync": SYNC;
    Syncfs = "syncfs": FD | SYNC;
    // fd management
    Close = "close": FD | FDMGMT;
    CloseRange = "close_range": FDMGMT;
    Dup = "dup": FD | FDMGMT;
    Dup2 = "dup2": FD | FDMGMT;
    Dup3 = "dup3": FD | FDMGMT;
    Pipe = "pipe": FDMGMT;
    Pipe2 = "pipe2": FDMGMT;
    Eventfd = "eventfd": FDMGMT;
    Eventfd2 = "eventfd2": FDMGMT;
    Signalfd = "signalfd": FDMGMT;
    Signalfd4 = "signalfd4": FDMGMT;
    TimerfdCreate = "timerfd_create": FDMGMT;
    TimerfdSettime = "timerfd_settime": FD;
    TimerfdGettime = "timerfd_gettime": FD;
    InotifyInit = "inotify_init": FDMGMT;
    InotifyInit1 = "inotify_init1": FDMGMT;
    InotifyAddWatch = "inotify_add_watch": FD;
    MemfdCreate = "memfd_create": FDMGMT;
    PidfdOpen = "pidfd_open": FDMGMT;
    // polling
    Poll = "poll": POLL;
    Ppoll = "ppoll": POLL;
    Select = "select": POLL;
    NewSelect = "_newselect": POLL;
    Pselect6 = "pselect6": POLL;
    EpollCreate = "epoll_create": FDMGMT;
    EpollCreate1 = "epoll_create1": FDMGMT;
    EpollCtl = "epoll_ctl": FD;
    EpollWait = "epoll_wait": FD | POLL;
    EpollPwait = "epoll_pwait": FD | POLL;
    EpollPwait2 = "epoll_pwait2": FD | POLL;
    IoUringSetup = "io_uring_setup": FDMGMT;
    IoUringEnter = "io_uring_enter": FD | WAIT;
    IoUringRegister = "io_uring_register": FD;
    // path lookups
    Open = "open": LOOKUP | OPEN;
    Openat = "openat": LOOKUP | OPEN | AT;
    Openat2 = "openat2": LOOKUP | OPEN | AT;
    Creat = "creat": LOOKUP | OPEN;
    Stat = "stat": LOOKUP;
    Lstat = "lstat": LOOKUP;
    Stat64 = "stat64": LOOKUP;
    Lstat64 = "lstat64": LOOKUP;
    Newfstatat = "newfstatat": LOOKUP | AT;
    Fstatat64 = "fstatat64": LOOKUP | AT;
    Statx = "statx": LOOKUP | AT;
    Access = "access": LOOKUP;
    Faccessat = "faccessat": LOOKUP | AT;
    Faccessat2 = "faccessat2": LOOKUP | AT;
    Readlink = "readlink": LOOKUP;
    Readlinkat = "readlinkat": LOOKUP | AT;
    Statfs = "statfs": LOOKUP;
    Statfs64 = "statfs64": LOOKUP;
    Getxattr = "getxattr": LOOKUP;
    Lgetxattr = "lgetxattr": LOOKUP;
    Chdir = "chdir": LOOKUP;
    Chroot = "chroot": LOOKUP;
    Getcwd = "getcwd";
    Mkdir = "mkdir";
    Mkdirat = "mkdirat": AT;
    Rmdir = "rmdir";
    Unlink = "unlink";
    Unlinkat = "unlinkat": AT;
    Rename = "rename";
    Renameat = "renameat": AT;
    Renameat2 = "renameat2": AT;
    Link = "link";
    Linkat = "linkat": AT;
    Symlink = "symlink";
    Symlinkat = "symlinkat";
    Chmod = "chmod";
    Fchmodat = "fchmodat": AT;
    Chown = "chown";
    Lchown = "lchown";
    Fchownat = "fchownat": AT;
    Utimensat = "utimensat": AT;
    Utime = "utime";
    Utimes = "utimes";
    Truncate = "truncate";
    Mknod = "mknod";
    Mknodat = "mknodat": AT;
    Umask = "umask";
    // sockets
    Socket = "socket": NET | FDMGMT;
    Socketpair = "socketpair": NET | FDMGMT;
    Socketcall = "socketcall": NET;
    Connect = "connect": FD | NET;
    Accept = "accept": FD | NET;
    Accept4 = "accept4": FD | NET;
    Bind = "bind": FD | NET;
    Listen = "listen": FD | NET;
    Shutdown = "shutdown": FD | NET;
    Getsockname = "getsockname": FD | NET;
    Getpeername = "getpeername": FD | NET;
    Setsockopt = "setsockopt": FD | NET;
    Getsockopt = "getsockopt": FD | NET;
    Send = "send": FD | NET | WRITE;
    Sendto = "sendto": FD | NET | WRITE;
    Sendmsg = "sendmsg": FD | NET | WRITE;
    Sendmmsg = "sendmmsg": FD | NET;
    Recv = "recv": FD | NET | READ;
    Recvfrom = "recvfrom": FD | NET | READ;
    Recvmsg = "recvmsg": FD | NET | READ;
    Recvmmsg = "recvmmsg": FD | NET;
    // processes
    Clone = "clone": SPAWN;
    Clone3 = "clone3": SPAWN;
    Fork = "fork": SPAWN;
    Vfork = "vfork": SPAWN;
    Execve = "execve": EXEC | LOOKUP;
    Execveat = "execveat": EXEC | AT;
    Exit = "exit": EXIT;
    ExitGroup = "exit_group": EXIT;
    Wait4 = "wait4": WAIT;
    Waitid = "waitid": WAIT;
    Waitpid = "waitpid": WAIT;
    Kill = "kill";
    Tkill = "tkill";
    Tgkill = "tgkill";
    Prctl = "prctl";
    ArchPrctl = "arch_prctl";
    SetTidAddress = "set_tid_address";
    SetRobustList = "set_robust_list";
    Rseq = "rseq";
    Getpid = "getpid";
    Getppid = "getppid";
    Gettid = "gettid";
    Getuid = "getuid";
    Geteuid = "geteuid";
    Getgid = "getgid";
    Getegid = "getegid";
    Getuid32 = "getuid32";
    Geteuid32 = "geteuid32";
    Getgid32 = "getgid32";
    Getegid32 = "getegid32";
    Setuid = "setuid";
    Setgid = "setgid";
    Setsid = "setsid";
    Setpgid = "setpgid";
    Getpgrp = "getpgrp";
    Getrlimit = "getrlimit";
    Ugetrlimit = "ugetrlimit";
    Setrlimit = "setrlimit";
    Prlimit64 = "prlimit64";
    Getrusage = "getrusage";
    Uname = "uname";
    Sysinfo = "sysinfo";
    Getrandom = "getrandom";
    SchedYield = "sched_yield": WAIT;
    SchedGetaffinity = "sched_getaffinity";
    SchedSetaffinity = "sched_setaffinity";
    Capget = "capget";
    Capset = "capset";
    Seccomp = "seccomp";
    // signals
    RtSigaction = "rt_sigaction";
    RtSigprocmask = "rt_sigprocmask";
    RtSigreturn = "rt_sigreturn";
    Sigreturn = "sigreturn";
    RtSigsuspend = "rt_sigsuspend": WAIT;
    RtSigtimedwait = "rt_sigtimedwait": WAIT;
    Sigaltstack = "sigaltstack";
    Pause = "pause": WAIT;
    Alarm = "alarm";
    Setitimer = "setitimer";
    // time and sleep
    Nanosleep = "nanosleep": WAIT;
    ClockNanosleep = "clock_nanosleep": WAIT;
    ClockGettime = "clock_gettime";
    ClockGettime64 = "clock_gettime64";
    ClockGetres = "clock_getres";
    Gettimeofday = "gettimeofday";
    Time = "time";
    Futex = "futex": WAIT;
    FutexTime64 = "futex_time64": WAIT;
    RestartSyscall = "restart_syscall": WAIT;
    // memory
    Brk = "brk": MEM;
    Mmap = "mmap": MEM;
    Mmap2 = "mmap2": MEM;
    Munmap = "munmap": MEM;
    Mprotect = "mprotect": MEM;
    Mremap = "mremap": MEM;
    Madvise = "madvise": MEM;
    Mlock = "mlock": MEM;
    Msync = "msync": MEM | SYNC;
    Membarrier = "membarrier";
    SetTls = "set_tls";
    Semop = "semop": WAIT;
    Semget = "semget";
    Semctl = "semctl";
    Shmget = "shmget";
    Shmat = "shmat": MEM;
    // Names the counts rules ask a table for that the lines of a trace never needed. Kept at
    // the end, so no earlier syscall changes its number, and without classes, so the
    // full-trace detectors, which dispatch on classes, see these calls as before.
    // 32-bit arm's and i386's clock_nanosleep with 64-bit time
    ClockNanosleepTime64 = "clock_nanosleep_time64";
}

/// The x86_64 name of syscall number `nr`.
pub fn x86_64_name(nr: u32) -> Option<&'static str> {
    crate::syscalls_x86_64::NAMES.get(nr as usize).copied().flatten()
}

impl Sys {
    /// Resolve a name as strace prints it. Unknown names give `Sys::Other`.
    #[inline]
    pub fn from_name(name: &str) -> Sys {
        lookup::find(name)
    }

    /// The syscall with x86_64 number `nr` (the eBPF backend's records): `Sys::Other` for a
    /// number the table of known syscalls lacks (its name is [`x86_64_name`]).
    #[inline]
    pub fn from_x86_64(nr: u32) -> Sys {
        static BY_NR: std::sync::OnceLock<Box<[Sys]>> = std::sync::OnceLock::new();
        let t = BY_NR.get_or_init(|| {
            crate::syscalls_x86_64::NAMES.iter().map(|n| n.map_or(Sys::Other, Sys::from_name)).collect()
        });
        t.get(nr as usize).copied().unwrap_or(Sys::Other)
    }

    /// The canonical name (for `Sys::Other`, "?"; keep the event's own name text instead).
    pub fn name(self) -> &'static str {
        match TABLE.get(self as usize) {
            Some(e) => e.1,
            None => "?",
        }
    }

    pub fn class(self) -> Class {
        match TABLE.get(self as usize) {
            Some(e) => e.2,
            None => Class::NONE,
        }
    }

    #[inline]
    pub fn is(self, c: Class) -> bool {
        self.class().has(c)
    }

    /// Number of distinct values, including `Other`, for dense per-syscall arrays.
    pub const COUNT: usize = Sys::Other as usize + 1;

    pub fn from_index(i: usize) -> Sys {
        match TABLE.get(i) {
            Some(e) => e.0,
            None => Sys::Other,
        }
    }
}

mod lookup {
    //! Open-addressing hash table from name to `Sys`, built once. A per-line lookup must
    //! cost a few nanoseconds, not a binary search over strings.
    use super::{Sys, TABLE};
    use std::sync::OnceLock;

    const SLOTS: usize = 1024;

    #[inline]
    fn hash(s: &[u8]) -> usize {
        // FNV-1a: short keys, fine distribution for identifiers.
        let mut h: u32 = 0x811c_9dc5;
        for &b in s {
            h ^= b as u32;
            h = h.wrapping_mul(0x0100_0193);
        }
        h as usize
    }

    fn table() -> &'static [u16; SLOTS] {
        static T: OnceLock<Box<[u16; SLOTS]>> = OnceLock::new();
        T.get_or_init(|| {
            let mut t = Box::new([u16::MAX; SLOTS]);
            for (i, (_, name, _)) in TABLE.iter().enumerate() {
                let mut slot = hash(name.as_bytes()) % SLOTS;
                while t[slot] != u16::MAX {
                    slot = (slot + 1) % SLOTS;
                }
                t[slot] = i as u16;
            }
            t
        })
    }

    #[inline]
    pub fn find(name: &str) -> Sys {
        let t = table();
        let mut slot = hash(name.as_bytes()) % SLOTS;
        loop {
            let i = t[slot];
            if i == u16::MAX {
                return Sys::Other;
            }
            let e = &TABLE[i as usize];
            if e.1 == name {
                return e.0;
            }
            slot = (slot + 1) % SLOTS;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn x86_64_numbers_land_on_the_same_sys_as_names() {
        assert_eq!(x86_64_name(0), Some("read"));
        assert_eq!(x86_64_name(257), Some("openat"));
        assert_eq!(x86_64_name(335), None);
        assert_eq!(x86_64_name(100_000), None);
        assert_eq!(Sys::from_x86_64(7), Sys::Poll);
        assert_eq!(Sys::from_x86_64(110), Sys::Getppid);
        assert_eq!(Sys::from_x86_64(100_000), Sys::Other);
        let mut known = 0;
        for nr in 0..crate::syscalls_x86_64::NAMES.len() as u32 {
            let sys = Sys::from_x86_64(nr);
            if sys != Sys::Other {
                assert_eq!(Some(sys.name()), x86_64_name(nr), "nr {nr}");
                known += 1;
            }
        }
        // the syscalls the analysis knows by class are x86_64 ones too
        for s in [Sys::Read, Sys::Accept4, Sys::EpollWait, Sys::Fsync, Sys::Clone3, Sys::Newfstatat] {
            assert!((0..451).any(|nr| Sys::from_x86_64(nr) == s), "{s:?} has no x86_64 number");
        }
        assert!(known > 150, "{known} known x86_64 syscalls");
    }

    #[test]
    fn table_is_consistent() {
        let mut names = HashSet::new();
        for (i, (sys, name, class)) in TABLE.iter().enumerate() {
            assert_eq!(*sys as usize, i, "{name} out of order");
            assert!(names.insert(*name), "duplicate name {name}");
            assert_eq!(Sys::from_name(name), *sys);
            if class.has(Class::READ) || class.has(Class::WRITE) {
                // every byte-moving call names an fd first (sendfile's out fd included)
                assert!(class.has(Class::FD), "{name} moves bytes but has no FD class");
            }
            if class.has(Class::OPEN) {
                assert!(class.has(Class::LOOKUP), "{name} opens but is no lookup");
            }
        }
        assert!(TABLE.len() < 1024 / 2, "lookup table too full");
        assert_eq!(Sys::from_name("no_such_call"), Sys::Other);
        assert_eq!(Sys::Other.name(), "?");
    }
}
