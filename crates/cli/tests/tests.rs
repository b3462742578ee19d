//! syslint's integration tests, one binary (like ripgrep's tests/tests.rs): one link, one
//! process, instead of one binary per file. Each file below is a module; `common` is the shared
//! harness (run the real binary, parse its JSON back).
//!
//! Tests that need what a machine may lack are marked `#[ignore]` by the build script
//! (build.rs) and shown as *ignored* with the reason, never silently passed:
//! - eBPF (root and a kernel with BTF): cfg `syslint_bpf`; force the skip with
//!   `SYSLINT_TEST_NO_BPF=1`;
//! - the real-world corpus `../shared/strace-corpus` beside the checkout (or the directory in
//!   `SYSLINT_SHARED`): cfg `syslint_corpus`;
//! - root (to run syslint as another user): cfg `syslint_root`.

#[path = "agent.rs"]
mod agent;
#[path = "analyze_only.rs"]
mod analyze_only;
#[path = "call_sites.rs"]
mod call_sites;
#[path = "common/mod.rs"]
mod common;
#[path = "config_baseline.rs"]
mod config_baseline;
#[path = "corpus.rs"]
mod corpus;
#[path = "deploy.rs"]
mod deploy;
#[path = "diff.rs"]
mod diff;
#[path = "ebpf_labs.rs"]
mod ebpf_labs;
#[path = "faults.rs"]
mod faults;
#[path = "fixtures.rs"]
mod fixtures;
#[path = "hostile.rs"]
mod hostile;
#[path = "html.rs"]
mod html;
#[path = "inert_reports.rs"]
mod inert_reports;
#[path = "inputs.rs"]
mod inputs;
#[path = "install.rs"]
mod install;
#[path = "lab_accept_herd.rs"]
mod lab_accept_herd;
#[path = "lab_busy_poll.rs"]
mod lab_busy_poll;
#[path = "lab_clock_syscalls.rs"]
mod lab_clock_syscalls;
#[path = "lab_connection_churn.rs"]
mod lab_connection_churn;
#[path = "lab_dns_timeout.rs"]
mod lab_dns_timeout;
#[path = "lab_epoll_ctl_churn.rs"]
mod lab_epoll_ctl_churn;
#[path = "lab_failed_lookup_storm.rs"]
mod lab_failed_lookup_storm;
#[path = "lab_fd_close_sweep.rs"]
mod lab_fd_close_sweep;
#[path = "lab_fs_walk_loop.rs"]
mod lab_fs_walk_loop;
#[path = "lab_fsync_storm.rs"]
mod lab_fsync_storm;
#[path = "lab_futex_contention.rs"]
mod lab_futex_contention;
#[path = "lab_keepalive_stall.rs"]
mod lab_keepalive_stall;
#[path = "lab_madvise_storm.rs"]
mod lab_madvise_storm;
#[path = "lab_memory_map_churn.rs"]
mod lab_memory_map_churn;
#[path = "lab_nagle_delay.rs"]
mod lab_nagle_delay;
#[path = "lab_reopen_churn.rs"]
mod lab_reopen_churn;
#[path = "lab_repeated_dns.rs"]
mod lab_repeated_dns;
#[path = "lab_retry_storm.rs"]
mod lab_retry_storm;
#[path = "lab_runtimes.rs"]
mod lab_runtimes;
#[path = "lab_sigmask_storm.rs"]
mod lab_sigmask_storm;
#[path = "lab_small_io.rs"]
mod lab_small_io;
#[path = "lab_spawn_per_task.rs"]
mod lab_spawn_per_task;
#[path = "lab_stat_storm.rs"]
mod lab_stat_storm;
#[path = "lab_timer_polling.rs"]
mod lab_timer_polling;
#[path = "lab_userspace_copy.rs"]
mod lab_userspace_copy;
#[path = "lab_yield_spin.rs"]
mod lab_yield_spin;
#[path = "labs.rs"]
mod labs;
#[path = "ordinary.rs"]
mod ordinary;
#[path = "ordinary_servers.rs"]
mod ordinary_servers;
#[path = "pasted.rs"]
mod pasted;
#[path = "pasted_labs.rs"]
mod pasted_labs;
#[path = "perfetto.rs"]
mod perfetto;
#[path = "process_models.rs"]
mod process_models;
#[path = "registry.rs"]
mod registry;
#[path = "sarif.rs"]
mod sarif;
#[path = "schema.rs"]
mod schema;
#[path = "secrets.rs"]
mod secrets;
#[path = "servers_live.rs"]
mod servers_live;
#[path = "strace7.rs"]
mod strace7;
#[path = "trace.rs"]
mod trace;
#[path = "trace_labs.rs"]
mod trace_labs;
