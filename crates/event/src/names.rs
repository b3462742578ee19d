//! The kernel's names for argument values that both the renderer of raw arguments
//! ([`crate::raw`]) and the readers of strace's text ([`crate::typed`]) use: one table each,
//! read both ways.

/// Socket levels by name.
pub(crate) const SOL_NAMES: &[(&str, u64)] = &[("SOL_SOCKET", 1), ("SOL_TCP", 6), ("SOL_IP", 0), ("SOL_IPV6", 41)];

/// Socket options by name: (level, name, value).
pub(crate) const SOCKOPT_NAMES: &[(u64, &str, u64)] = &[
    (1, "SO_DEBUG", 1),
    (1, "SO_REUSEADDR", 2),
    (1, "SO_TYPE", 3),
    (1, "SO_ERROR", 4),
    (1, "SO_SNDBUF", 7),
    (1, "SO_RCVBUF", 8),
    (1, "SO_KEEPALIVE", 9),
    (1, "SO_LINGER", 13),
    (1, "SO_REUSEPORT", 15),
    (1, "SO_RCVTIMEO_OLD", 20),
    (1, "SO_SNDTIMEO_OLD", 21),
    (6, "TCP_NODELAY", 1),
    (6, "TCP_CORK", 3),
    (6, "TCP_KEEPIDLE", 4),
    (6, "TCP_KEEPINTVL", 5),
    (6, "TCP_KEEPCNT", 6),
    (6, "TCP_DEFER_ACCEPT", 9),
    (6, "TCP_FASTOPEN", 23),
];

/// epoll event bits by name.
pub(crate) const EPOLL_EVENTS: &[(&str, u64)] = &[
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

/// futex operations by command number (`op & FUTEX_CMD`).
pub(crate) const FUTEX_OPS: &[&str] = &[
    "FUTEX_WAIT",
    "FUTEX_WAKE",
    "FUTEX_FD",
    "FUTEX_REQUEUE",
    "FUTEX_CMP_REQUEUE",
    "FUTEX_WAKE_OP",
    "FUTEX_LOCK_PI",
    "FUTEX_UNLOCK_PI",
    "FUTEX_TRYLOCK_PI",
    "FUTEX_WAIT_BITSET",
    "FUTEX_WAKE_BITSET",
    "FUTEX_WAIT_REQUEUE_PI",
    "FUTEX_CMP_REQUEUE_PI",
    "FUTEX_LOCK_PI2",
];
