//! `syslint trace`: run a command or attach to processes, stream the trace into the analysis,
//! report when the program ends, when `--for` passes, or on Ctrl-C/SIGTERM. The pipeline (eBPF
//! or strace source, analysis, interval summaries, status line) is `syslint-pipeline`'s.

use super::{EXIT_CLEAN, EXIT_ERROR};
use crate::cli::{Backend, TraceArgs};
use crate::output::{emit, exit_code, fail_level, Stream};
use anyhow::{bail, Result};
use syslint_capture::live::{pids_by_name, Target};
use syslint_pipeline::status::StatusLine;
use syslint_pipeline::{live, Analysis, Interval, StopWhen};

pub fn run(a: TraceArgs) -> Result<u8> {
    let target = target_of(&a)?;
    // signals: remember them, act where the capture runs
    let stop = StopWhen { after: a.duration, ..StopWhen::default() };
    signal_hook::flag::register(signal_hook::consts::SIGINT, stop.interrupt.clone())?;
    signal_hook::flag::register(signal_hook::consts::SIGTERM, stop.terminate.clone())?;
    let r = &a.report;
    if a.record.as_deref().is_some_and(|p| p.as_os_str() == "-") {
        // it once made a file named `-`; stdout is the command's or the report's
        anyhow::bail!(
            "-o -: a recording needs a file name (stdout is {}); record to a file and `syslint export FILE` it to stdout",
            if a.command.is_empty() { "the report's" } else { "the traced command's" }
        );
    }
    let judging = super::Judging::load(r, syslint_pipeline::Discovery::for_cwd(r.config.as_deref(), r.isolated))?;
    let detectors = judging.detectors(r)?;
    let backend = match a.backend {
        Backend::Auto => live::Choice::Auto,
        Backend::Strace => live::Choice::Strace,
        Backend::Ebpf => live::Choice::Ebpf,
    };
    let opts = live::Options {
        backend,
        summary_only: a.summary_only,
        record: a.record.clone(),
        payload_bytes: a.payload_bytes,
        interval: a.interval,
        stacks: match a.stacks {
            crate::cli::Stacks::Off => syslint_capture::live::StackCalls::Off,
            crate::cli::Stacks::All => syslint_capture::live::StackCalls::All,
            crate::cli::Stacks::Sampled | crate::cli::Stacks::Auto => syslint_capture::live::StackCalls::Only(
                syslint_analyze::callsites::watched_syscalls(&detectors).into_iter().map(String::from).collect(),
            ),
        },
        stacks_with_strace: a.stacks != crate::cli::Stacks::Auto,
        queue_bytes: None,
        settle: None,
        max_records: None,
    };
    let source = live::start(&target, &opts, &mut |line| eprintln!("{line}"))?;
    let status = StatusLine::start(source.name(), r.quiet);
    // summary-only counts in the kernel: no call reaches the detectors, whose counts rules read
    // the kernel's table at the end (before, none ran, and a report said they had)
    let mut analysis = Analysis::new(detectors);
    if let Some(s) = &status {
        analysis = analysis.with_status(s.feed());
    }
    // with --summary-only there are no events: the eBPF source prints the kernel's counts
    let interval = a.interval.filter(|_| !a.summary_only).map(Interval::new);
    let mut sinks = (analysis, interval);
    let outcome = source.run(&mut sinks, &stop)?;
    drop(status);
    let mut report = sinks.0.finish(outcome.capture);
    judging.apply(&mut report, r)?;
    let command = matches!(target, Target::Command(_));
    // with a command, stdout is the command's: the report goes beside it, on stderr
    emit(&report, r, if command { Stream::Stderr } else { Stream::Stdout })?;
    Ok(exit_of(
        command,
        r.fail_on.is_some(),
        exit_code(&report, fail_level(r, &judging.config)),
        &outcome.stop,
        outcome.exit_status,
    ))
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
