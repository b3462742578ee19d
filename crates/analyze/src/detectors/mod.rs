//! The detectors, one file each (see docs/detectors.md), and what they share: evidence lines
//! with payloads redacted, time windows, number formatting.

/// The registry: one line per detector (its module, whose `ENTRY` joins [`ENTRIES`] in this
/// order, which is the order `syslint detectors` lists them in).
macro_rules! detectors {
    ($($module:ident),* $(,)?) => {
        $(pub mod $module;)*
        /// All detectors, in registry order.
        pub static ENTRIES: &[crate::registry::Entry] = &[$($module::ENTRY),*];
    };
}

detectors! {
    busy_poll,
    accept_herd,
    connection_churn,
    repeated_dns,
    keepalive_stall,
    small_io,
    failed_lookup_storm,
    fsync_storm,
    fd_close_sweep,
    yield_spin,
    clock_syscalls,
    timer_polling,
    epoll_ctl_churn,
    stat_storm,
    reopen_churn,
    spawn_per_task,
    retry_storm,
    userspace_copy,
    dns_timeout,
    nagle_delay,
    futex_contention,
    memory_map_churn,
    fs_walk_loop,
    madvise_storm,
    sigmask_storm,
    ioctl_poll,
    inotify_per_file,
    fault_signal_loop,
}

pub use crate::kit::evidence::render_call_into;
pub use crate::kit::{redact, redact_into, Evidence, EvidenceBuf, Span};
