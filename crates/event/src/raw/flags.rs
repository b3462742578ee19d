//! Flag and constant names of x86_64 Linux, as strace prints them.

use std::fmt::Write as _;

/// `, FLAGS` and, when they create, `, 0MODE`.
pub(super) fn open_tail(o: &mut String, flags: u64, mode: u64) {
    let _ = write!(o, ", {}", open_flags(flags));
    if flags & 0o100 != 0 {
        let _ = write!(o, ", 0{mode:o}");
    }
}

pub(super) fn open_flags(v: u64) -> String {
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
pub(super) fn flags_into(o: &mut String, v: u64, names: &[(&str, u64)], zero: &str) {
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
pub(super) const AT_FLAGS: &[(&str, u64)] = &[
    ("AT_SYMLINK_NOFOLLOW", 0x100),
    ("AT_REMOVEDIR", 0x200),
    ("AT_SYMLINK_FOLLOW", 0x400),
    ("AT_NO_AUTOMOUNT", 0x800),
    ("AT_EMPTY_PATH", 0x1000),
    ("AT_STATX_FORCE_SYNC", 0x2000),
    ("AT_STATX_DONT_SYNC", 0x4000),
    ("AT_RECURSIVE", 0x8000),
];
pub(super) const AT_STATX_SYNC_TYPE: u64 = 0x6000;

pub(super) const STATX_MASK: &[(&str, u64)] = &[
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

pub(super) const ACCESS_MODES: &[(&str, u64)] = &[("R_OK", 4), ("W_OK", 2), ("X_OK", 1)];

pub(super) const PROT_FLAGS: &[(&str, u64)] = &[
    ("PROT_READ", 0x1),
    ("PROT_WRITE", 0x2),
    ("PROT_EXEC", 0x4),
    ("PROT_SEM", 0x8),
    ("PROT_GROWSDOWN", 0x0100_0000),
    ("PROT_GROWSUP", 0x0200_0000),
];

/// madvise's advice values (the common ones; others print as numbers, as strace does for
/// values it does not know).
pub(super) const MADVICE: &[(&str, u64)] = &[
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

pub(super) const MREMAP_FLAGS: &[(&str, u64)] = &[("MREMAP_MAYMOVE", 1), ("MREMAP_FIXED", 2), ("MREMAP_DONTUNMAP", 4)];

/// The sharing type first (MAP_SHARED_VALIDATE is both of the others' bits).
pub(super) const MAP_FLAGS: &[(&str, u64)] = &[
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

pub(super) const GRND_FLAGS: &[(&str, u64)] = &[("GRND_NONBLOCK", 0x1), ("GRND_RANDOM", 0x2), ("GRND_INSECURE", 0x4)];

pub(super) const ARCH_PRCTL: &[(&str, u64)] = &[
    ("ARCH_SET_GS", 0x1001),
    ("ARCH_SET_FS", 0x1002),
    ("ARCH_GET_FS", 0x1003),
    ("ARCH_GET_GS", 0x1004),
    ("ARCH_GET_CPUID", 0x1011),
    ("ARCH_SET_CPUID", 0x1012),
];

pub(super) const RLIMITS: &[&str] = &[
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
pub(super) const IOCTLS: &[(&str, u64)] = &[
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
pub(super) fn sync_range_flags(o: &mut String, v: u64) {
    const NAMES: &[(&str, u64)] =
        &[("SYNC_FILE_RANGE_WAIT_BEFORE", 1), ("SYNC_FILE_RANGE_WRITE", 2), ("SYNC_FILE_RANGE_WAIT_AFTER", 4)];
    flags_into(o, v, NAMES, "0");
}

pub(super) const OPEN_FLAGS: &[(&str, u64)] = &[
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

pub(super) const MSG_FLAGS: &[(&str, u64)] = &[
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

pub(super) const WAIT_OPTIONS: &[(&str, u64)] = &[
    ("WNOHANG", 0x1),
    ("WUNTRACED", 0x2),
    ("WEXITED", 0x4),
    ("WCONTINUED", 0x8),
    ("WNOWAIT", 0x1000000),
    ("__WNOTHREAD", 0x20000000),
    ("__WALL", 0x40000000),
    ("__WCLONE", 0x80000000),
];

pub(super) const FUTEX_PRIVATE: u64 = 128;
pub(super) const FUTEX_CLOCK_REALTIME: u64 = 256;
pub(super) const FUTEX_CMD: u64 = !(FUTEX_PRIVATE | FUTEX_CLOCK_REALTIME) & 0xffff_ffff;
pub(super) const FIONREAD: u64 = 0x541b;

pub(super) const CLONE_FLAGS: &[(&str, u64)] = &[
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

/// A delivered signal's siginfo as strace prints it between the braces of its `--- SIG... {...} ---`
/// line, from what the eBPF capture keeps: the number, `si_code` and, for a fault, `si_addr`
/// (`{si_signo=SIGSEGV, si_code=SEGV_MAPERR, si_addr=0x38}`). strace's other fields (the
/// sender's pid and uid, a child's status) are not kept.
pub fn siginfo_text(sig: i32, code: i32, addr: u64) -> String {
    let name = signal_name(sig.max(0) as u32);
    let generic = match code {
        0 => Some("SI_USER"),
        0x80 => Some("SI_KERNEL"),
        -1 => Some("SI_QUEUE"),
        -2 => Some("SI_TIMER"),
        -3 => Some("SI_MESGQ"),
        -4 => Some("SI_ASYNCIO"),
        -5 => Some("SI_SIGIO"),
        -6 => Some("SI_TKILL"),
        _ => None,
    };
    // the kernel's codes for a fault (include/uapi/asm-generic/siginfo.h)
    let fault: &[&str] = match sig {
        4 => &[
            "ILL_ILLOPC",
            "ILL_ILLOPN",
            "ILL_ILLADR",
            "ILL_ILLTRP",
            "ILL_PRVOPC",
            "ILL_PRVREG",
            "ILL_COPROC",
            "ILL_BADSTK",
        ],
        5 => &["TRAP_BRKPT", "TRAP_TRACE", "TRAP_BRANCH", "TRAP_HWBKPT", "TRAP_UNK", "TRAP_PERF"],
        7 => &["BUS_ADRALN", "BUS_ADRERR", "BUS_OBJERR", "BUS_MCEERR_AR", "BUS_MCEERR_AO"],
        8 => &[
            "FPE_INTDIV",
            "FPE_INTOVF",
            "FPE_FLTDIV",
            "FPE_FLTOVF",
            "FPE_FLTUND",
            "FPE_FLTRES",
            "FPE_FLTINV",
            "FPE_FLTSUB",
        ],
        11 => {
            &["SEGV_MAPERR", "SEGV_ACCERR", "SEGV_BNDERR", "SEGV_PKUERR", "SEGV_ACCADI", "SEGV_ADIDERR", "SEGV_ADIPERR"]
        }
        _ => &[],
    };
    let child: &[&str] = if sig == 17 {
        &["CLD_EXITED", "CLD_KILLED", "CLD_DUMPED", "CLD_TRAPPED", "CLD_STOPPED", "CLD_CONTINUED"]
    } else {
        &[]
    };
    let specific = usize::try_from(code)
        .ok()
        .and_then(|c| c.checked_sub(1))
        .and_then(|i| fault.get(i).or_else(|| child.get(i)).copied());
    let code_text = match (generic, specific) {
        (Some(g), _) => g.to_string(),
        (None, Some(f)) => f.to_string(),
        (None, None) => code.to_string(),
    };
    // as strace: a kernel-set code (> 0, SI_KERNEL included) of a fault signal has an address
    if code > 0 && !fault.is_empty() {
        let a = if addr == 0 { "NULL".to_string() } else { format!("{addr:#x}") };
        format!("{{si_signo={name}, si_code={code_text}, si_addr={a}}}")
    } else {
        format!("{{si_signo={name}, si_code={code_text}}}")
    }
}

pub(super) fn family(v: u64) -> String {
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
