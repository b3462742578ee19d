//! Counting in the kernel, per cgroup, for a while: the agent's counts between windows
//! (`syslint agent --count-between`), as tables of counts the detectors' counts rules read.
//! One hook (sys_exit), no per-thread state, so no durations: see `syslint_bpf::Counter`.

use std::time::Duration;
#[cfg(feature = "ebpf")]
use std::time::Instant;

#[cfg(feature = "ebpf")]
use syslint_bpf::Counter;
#[cfg(feature = "ebpf")]
use syslint_report::CountRow;
use syslint_report::Counts;

use super::BpfError;

/// What the kernel counted for each group.
#[derive(Debug, Default)]
pub struct Counted {
    /// (group name, its table), for each group counted, in the order given.
    pub tables: Vec<(String, Counts)>,
    /// Groups not counted: beyond what one counter holds (`syslint_bpf::Counter::GROUPS`
    /// groups, `Counter::PIDS` processes); the next period can count them.
    pub not_counted: Vec<String>,
}

/// The tool a table of these counts names.
pub const TOOL: &str = "syslint agent (counted in the kernel)";

/// Counts every syscall of the processes of each group (a name, its pids) for `period`, or
/// until `stopped()` says so (asked every 50 ms). Processes started meanwhile are not counted.
#[cfg(feature = "ebpf")]
pub fn count_groups(
    groups: &[(String, Vec<u32>)],
    period: Duration,
    stopped: &dyn Fn() -> bool,
) -> Result<Counted, BpfError> {
    let mut out = Counted::default();
    if groups.is_empty() {
        return Ok(out);
    }
    let mut counter = Counter::load()?;
    let pids: Vec<Vec<u32>> = groups.iter().map(|g| g.1.clone()).collect();
    let n = counter.watch(&pids)?;
    out.not_counted = groups[n..].iter().map(|g| g.0.clone()).collect();
    let began = Instant::now();
    while began.elapsed() < period && !stopped() {
        std::thread::sleep(Duration::from_millis(50).min(period.saturating_sub(began.elapsed())));
    }
    counter.detach();
    let secs = began.elapsed().as_secs_f64();
    for ((name, _), rows) in groups.iter().zip(counter.take()) {
        let mut rows: Vec<CountRow> = rows
            .into_iter()
            .map(|(nr, c)| CountRow {
                name: syslint_bpf::syscall_name(nr).map_or_else(|| format!("syscall_{nr}"), str::to_string),
                calls: c.calls,
                errors: c.errors,
                seconds: None,
            })
            .collect();
        rows.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.name.cmp(&b.name)));
        out.tables.push((
            name.clone(),
            Counts { tool: TOOL.into(), rows, errors_known: true, duration_s: Some(secs), ..Default::default() },
        ));
    }
    Ok(out)
}

/// Without the eBPF backend (an analyze-only build) nothing can be counted.
#[cfg(not(feature = "ebpf"))]
pub fn count_groups(
    _groups: &[(String, Vec<u32>)],
    _period: Duration,
    _stopped: &dyn Fn() -> bool,
) -> Result<Counted, BpfError> {
    Err(BpfError::Unsupported("this build of syslint has no eBPF backend".into()))
}
