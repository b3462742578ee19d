//! The eBPF backend: the kernel program of `syslint-bpf` records the traced processes'
//! syscalls; this module starts it on a command or running processes, turns its records into
//! [`Event`]s (see [`format`]), records them to a `.slr` file when asked (see [`slr`]) and says
//! how many were lost.

pub mod format;
pub mod slr;
pub mod snapshot;

use format::Formatter;
use std::ffi::OsString;
use std::path::Path;
use std::process::ExitStatus;
use std::time::Duration;
pub use syslint_bpf::{Error as BpfError, Lost, Options};
use syslint_bpf::{Probe, Record};
use syslint_event::Event;

/// What to trace.
pub enum Target {
    Command(Vec<OsString>),
    Pids(Vec<u32>),
}

pub struct EbpfSession {
    probe: Probe,
    child: Option<syslint_bpf::Child>,
    pids: Vec<u32>,
    formatter: Formatter,
    recorder: Option<slr::Writer>,
    /// Syscalls from summary-only counters, kept until the end.
    pub summary_only: bool,
    /// Human name of what is traced (`command ls`, `pids 12, 13`).
    pub what: String,
    /// Records received.
    pub records: u64,
    pub record_error: Option<String>,
}

impl EbpfSession {
    /// Load the kernel program and start or follow the target. `record`: a `.slr` path.
    pub fn start(target: &Target, opts: &Options, record: Option<&Path>) -> Result<EbpfSession, BpfError> {
        let mut probe = Probe::load(opts)?;
        let mut known = format::Known::default();
        let (child, pids, what) = match target {
            Target::Command(argv) => {
                let c = probe.spawn(argv)?;
                let what =
                    format!("command {}", argv.first().map(|a| a.to_string_lossy().into_owned()).unwrap_or_default());
                let pid = c.pid();
                (Some(c), vec![pid], what)
            }
            Target::Pids(pids) => {
                for &p in pids {
                    if !Path::new(&format!("/proc/{p}")).exists() {
                        return Err(BpfError::Other(format!("no process with pid {p}")));
                    }
                }
                for &p in pids {
                    // what the fds already open are, before their first event arrives
                    snapshot::fds_of(p, &mut known);
                    // threads of a followed process are covered by its tgid
                    probe.follow(p)?;
                }
                let list: Vec<String> = pids.iter().map(|p| p.to_string()).collect();
                (None, pids.clone(), format!("pid{} {}", if pids.len() == 1 { "" } else { "s" }, list.join(", ")))
            }
        };
        let recorder = match record {
            Some(p) => Some(
                slr::Writer::create(p, &what, opts, &known)
                    .map_err(|e| BpfError::Other(format!("cannot write {}: {e}", p.display())))?,
            ),
            None => None,
        };
        Ok(EbpfSession {
            probe,
            child,
            pids,
            formatter: Formatter::new(known),
            recorder,
            summary_only: opts.summary_only,
            what,
            records: 0,
            record_error: None,
        })
    }

    fn handle(
        formatter: &mut Formatter,
        recorder: &mut Option<slr::Writer>,
        record_error: &mut Option<String>,
        records: &mut u64,
        r: Record<'_>,
        sink: &mut dyn FnMut(&Event),
    ) {
        *records += 1;
        if let Some(w) = recorder.as_mut() {
            if let Err(e) = w.write(&r) {
                *record_error = Some(e.to_string());
                *recorder = None;
            }
        }
        formatter.on_record(&r, sink);
    }

    /// Wait up to `timeout` for records and hand their events to `sink`.
    pub fn pump(&mut self, timeout: Duration, sink: &mut dyn FnMut(&Event)) -> Result<usize, BpfError> {
        let (f, rec, err, n) = (&mut self.formatter, &mut self.recorder, &mut self.record_error, &mut self.records);
        self.probe.poll(timeout, &mut |r| Self::handle(f, rec, err, n, r, sink))
    }

    /// Everything still in the buffer and the runs the kernel has not reported yet.
    pub fn drain(&mut self, sink: &mut dyn FnMut(&Event)) -> Result<(), BpfError> {
        while self.pump(Duration::ZERO, sink)? > 0 {}
        let (f, rec, err, n) = (&mut self.formatter, &mut self.recorder, &mut self.record_error, &mut self.records);
        self.probe.flush_pending(&mut |r| Self::handle(f, rec, err, n, r, sink))?;
        while self.pump(Duration::ZERO, sink)? > 0 {}
        Ok(())
    }

    /// The command's exit status once it ended (None while it runs, or when attached).
    pub fn child_status(&mut self) -> Option<ExitStatus> {
        self.child.as_mut().and_then(|c| c.try_wait().ok().flatten())
    }

    /// Whether every attached process is gone.
    pub fn all_gone(&self) -> bool {
        self.child.is_none() && self.pids.iter().all(|p| !Path::new(&format!("/proc/{p}")).exists())
    }

    pub fn child_pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.pid())
    }

    /// Wait for the command to end (after a stop request the command still runs on).
    pub fn wait_child(&mut self) -> Option<ExitStatus> {
        self.child.as_mut().and_then(|c| c.wait().ok())
    }

    pub fn lost(&self) -> Lost {
        self.probe.lost()
    }

    /// Syscalls the formatter produced (Repeat records expanded).
    pub fn syscalls(&self) -> u64 {
        self.formatter.syscalls
    }

    pub fn events(&self) -> u64 {
        self.formatter.events
    }

    /// Per-syscall counters of summary-only mode: (name, calls, errors, total ns).
    pub fn summary(&self) -> Vec<(String, u64, u64, u64)> {
        self.probe
            .summary()
            .into_iter()
            .map(|(nr, c)| {
                let name = syslint_bpf::syscall_name(nr).map_or_else(|| format!("syscall_{nr}"), str::to_string);
                (name, c.calls, c.errors, c.dur_ns)
            })
            .collect()
    }

    /// Close the recording (with the lost counts); returns its problem if it failed.
    pub fn finish_recording(&mut self) -> Option<String> {
        let lost = self.probe.lost();
        if let Some(w) = self.recorder.take() {
            if let Err(e) = w.finish(lost) {
                return Some(e.to_string());
            }
        }
        self.record_error.take()
    }
}

/// Whether the error means "not allowed or not possible here": fall back to strace.
pub fn can_fall_back(e: &BpfError) -> bool {
    matches!(e, BpfError::PermissionDenied(_) | BpfError::Unsupported(_))
}
