//! `syslint trace`: run a command or attach to processes, stream the trace into the analysis,
//! report when the program ends, when `--for` passes, or on Ctrl-C/SIGTERM. The pipeline (eBPF
//! or strace source, analysis, interval summaries, status line) is `syslint-pipeline`'s.

use super::{EXIT_CLEAN, EXIT_ERROR};
use crate::cli::{Backend, TraceArgs};
use crate::output::{emit, exit_code, fail_level, Stream};
use anyhow::{bail, Result};
use syslint_capture::ebpf;
use syslint_capture::live::{pids_by_name, Target};
use syslint_pipeline::status::StatusLine;
use syslint_pipeline::{Analysis, EbpfSource, Interval, Source, StopWhen, StraceSource};

pub fn run(a: TraceArgs) -> Result<u8> {
    let target = target_of(&a)?;
    if a.summary_only && a.backend == Backend::Strace {
        bail!("--summary-only counts in the kernel: it needs the eBPF backend (--backend ebpf or auto)");
    }
    // signals: remember them, act where the capture runs
    let stop = StopWhen { after: a.duration, ..StopWhen::default() };
    signal_hook::flag::register(signal_hook::consts::SIGINT, stop.interrupt.clone())?;
    signal_hook::flag::register(signal_hook::consts::SIGTERM, stop.terminate.clone())?;
    let r = &a.report;
    let detectors = syslint_pipeline::detectors(&r.select, &r.ignore, r.config.as_deref())?;

    // children running before the attach, which -p does not follow (nginx's workers under
    // its master, a server under the shell that started it): named in the report
    let untraced = match &target {
        Target::Pids(pids) => untraced_children(pids),
        Target::Command(_) => Vec::new(),
    };
    let source = source_of(&a, &target)?;
    let status = StatusLine::start(source.name(), r.quiet);
    // summary-only counts in the kernel: no detector runs
    let mut analysis = Analysis::new(if a.summary_only { Vec::new() } else { detectors });
    if let Some(s) = &status {
        analysis = analysis.with_status(s.feed());
    }
    // with --summary-only there are no events: the eBPF source prints the kernel's counts
    let interval = a.interval.filter(|_| !a.summary_only).map(Interval::new);
    let mut sinks = (analysis, interval);
    let outcome = source.run(&mut sinks, &stop)?;
    drop(status);
    let mut report = sinks.0.finish(outcome.capture);
    if let Some(n) = untraced_note(&untraced) {
        report.capture.notes.push(n);
    }
    let command = matches!(target, Target::Command(_));
    // with a command, stdout is the command's: the report goes beside it, on stderr
    emit(&report, r, if command { Stream::Stderr } else { Stream::Stdout })?;
    Ok(exit_of(command, r.fail_on.is_some(), exit_code(&report, fail_level(r)), &outcome.stop, outcome.exit_status))
}

/// Children of the processes given that were running before the attach and are not among
/// them: (parent, child, the child's program name).
fn untraced_children(pids: &[u32]) -> Vec<(u32, u32, String)> {
    let mut v = Vec::new();
    for &p in pids {
        for c in syslint_capture::procfs::children_of(p) {
            if !pids.contains(&c) && !v.iter().any(|&(_, k, _)| k == c) {
                v.push((p, c, syslint_capture::procfs::program_name(c).unwrap_or_default()));
            }
        }
    }
    v
}

/// What the report says about children it did not trace: who, and how to include them.
fn untraced_note(kids: &[(u32, u32, String)]) -> Option<String> {
    const SHOWN: usize = 8;
    if kids.is_empty() {
        return None;
    }
    let mut names: Vec<String> = kids
        .iter()
        .take(SHOWN)
        .map(|(_, c, n)| if n.is_empty() { c.to_string() } else { format!("{c} ({n})") })
        .collect();
    if kids.len() > SHOWN {
        names.push(format!("and {} more", kids.len() - SHOWN));
    }
    let mut parents: Vec<u32> = kids.iter().map(|k| k.0).collect();
    parents.dedup();
    let mut how = Vec::new();
    if parents.len() + kids.len() <= SHOWN + 1 {
        let all: Vec<String> = parents.iter().chain(kids.iter().map(|k| &k.1)).map(u32::to_string).collect();
        how.push(format!("-p {}", all.join(",")));
    }
    if let Some(c) = kids.iter().map(|k| k.2.as_str()).find(|n| !n.is_empty()) {
        how.push(format!("--comm {c}"));
    }
    let (n, s) = (kids.len(), if kids.len() == 1 { "" } else { "es" });
    let mut note = format!(
        "not traced: {n} child process{s} running before the attach (-p follows children born after it): {}",
        names.join(", ")
    );
    if !how.is_empty() {
        note.push_str(&format!("; to trace {} too: {}", if n == 1 { "it" } else { "them" }, how.join(" or ")));
    }
    Some(note)
}

/// The one exit rule of `trace`: with a command, the command's own status unless `--fail-on`
/// was given (then the findings decide, as for `analyze`); when syslint stopped first (`--for`,
/// SIGTERM) the command's status is unknown: 0. Attached, the findings decide.
fn exit_of(
    command: bool,
    fail_on_given: bool,
    findings: u8,
    stop: &syslint_pipeline::StopReason,
    status: Option<std::process::ExitStatus>,
) -> u8 {
    if !command || fail_on_given {
        return findings;
    }
    if stop.requested() {
        return EXIT_CLEAN;
    }
    command_status(status)
}

/// eBPF where it works (or was asked for), else strace.
fn source_of(a: &TraceArgs, target: &Target) -> Result<Box<dyn Source>> {
    let record = a.record.as_deref();
    if a.backend != Backend::Strace {
        match EbpfSource::start(target, a.summary_only, record, a.payload_bytes) {
            Ok(mut s) => {
                if a.summary_only {
                    s.interval = a.interval;
                }
                return Ok(Box::new(s));
            }
            Err(syslint_pipeline::Error::Bpf(e))
                if a.backend == Backend::Auto && !a.summary_only && ebpf::can_fall_back(&e) =>
            {
                eprintln!("{}", fallback_line(&e));
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Box::new(StraceSource::start(target, record, a.payload_bytes)?))
}

/// The traced command's own exit status as ours (128 + signal when killed), as strace passes
/// it on; 2 when it is unknown.
fn command_status(st: Option<std::process::ExitStatus>) -> u8 {
    let Some(st) = st else { return EXIT_ERROR };
    if let Some(c) = st.code() {
        return c.clamp(0, 255) as u8;
    }
    match std::os::unix::process::ExitStatusExt::signal(&st) {
        Some(sig) => (128 + sig).clamp(0, 255) as u8,
        None => EXIT_ERROR,
    }
}

fn target_of(a: &TraceArgs) -> Result<Target> {
    let modes = [!a.command.is_empty(), !a.pids.is_empty(), a.comm.is_some()].iter().filter(|x| **x).count();
    if modes == 0 {
        bail!("nothing to trace: give a command after --, or -p PID, or --comm NAME (see syslint trace --help)");
    }
    if modes > 1 {
        bail!("give only one of: a command after --, -p PID, --comm NAME");
    }
    if !a.command.is_empty() {
        // the same clear error whichever backend starts it
        let prog = a.command[0].to_string_lossy().into_owned();
        let found = if prog.contains('/') {
            std::path::Path::new(&prog).is_file()
        } else {
            syslint_capture::live::which(&prog).is_some()
        };
        if !found {
            bail!("command not found: {prog}");
        }
        return Ok(Target::Command(a.command.clone()));
    }
    if let Some(name) = &a.comm {
        let pids = pids_by_name(name);
        if pids.is_empty() {
            bail!("no process named {name:?} is running");
        }
        return Ok(Target::Pids(pids));
    }
    Ok(Target::Pids(a.pids.clone()))
}

/// Why eBPF could not start, and what to do about it, in one line.
fn fallback_line(e: &ebpf::BpfError) -> String {
    match e {
        ebpf::BpfError::PermissionDenied(_) => {
            "syslint: eBPF is not permitted here; tracing with strace instead (slower). \
             To use eBPF: run as root, or sudo setcap cap_bpf,cap_perfmon+ep $(command -v syslint)"
                .to_string()
        }
        _ => format!("syslint: eBPF is not available here ({e}); tracing with strace instead (slower)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;
    use syslint_pipeline::StopReason;

    #[test]
    fn one_exit_rule() {
        let exited = |c: i32| Some(ExitStatus::from_raw(c << 8));
        let ended = StopReason::Ended;
        // a command: its status, whatever was found
        assert_eq!(exit_of(true, false, 1, &ended, exited(3)), 3);
        assert_eq!(exit_of(true, false, 1, &ended, exited(0)), 0);
        assert_eq!(exit_of(true, false, 0, &ended, Some(ExitStatus::from_raw(9))), 128 + 9);
        assert_eq!(exit_of(true, false, 0, &ended, None), EXIT_ERROR);
        // --fail-on given: the findings
        assert_eq!(exit_of(true, true, 1, &ended, exited(0)), 1);
        assert_eq!(exit_of(true, true, 0, &ended, exited(3)), 0);
        // syslint stopped first: the status is unknown
        assert_eq!(exit_of(true, false, 1, &StopReason::Elapsed(std::time::Duration::from_secs(1)), None), 0);
        // attached: the findings
        assert_eq!(exit_of(false, false, 1, &StopReason::Interrupted, None), 1);
        assert_eq!(exit_of(false, false, 0, &ended, None), 0);
    }
}
