//! The eBPF backend: the kernel program of `syslint-bpf` records the traced processes'
//! syscalls; this module starts it on a command or running processes, turns its records into
//! [`Event`]s (see [`format`]), records them to a `.slr` file when asked (see [`slr`]) and says
//! how many were lost. Without the `ebpf` feature (an analyze-only build) only the record
//! format is here: reading and replaying `.slr` recordings.

pub mod count;
pub mod format;
pub mod slr;
#[cfg(feature = "ebpf")]
pub mod snapshot;

use format::Formatter;

#[cfg(feature = "ebpf")]
use std::path::Path;
#[cfg(feature = "ebpf")]
use std::process::ExitStatus;
#[cfg(feature = "ebpf")]
use std::time::Duration;
#[cfg(feature = "ebpf")]
use syslint_bpf::Probe;
pub use syslint_bpf::{Error as BpfError, Lost, Options, StackOptions};
use syslint_event::Event;
#[cfg(feature = "ebpf")]
pub use syslint_stacks::{Frame, Sample as StackSample, Stack, StackId, StackTable};

/// What to trace: the same for both live backends.
pub use crate::live::Target;

#[cfg(feature = "ebpf")]
pub struct EbpfSession {
    probe: Probe,
    child: Option<syslint_bpf::Child>,
    pids: Vec<u32>,
    encoder: slr::Encoder,
    known: format::Known,
    pub opts: Options,
    /// Human name of what is traced (`command ls`, `pids 12, 13`).
    pub what: String,
    /// Processes given that exited before they could be attached to (skipped).
    pub gone: Vec<u32>,
    /// Records received.
    pub records: u64,
    /// CLOCK_REALTIME minus CLOCK_MONOTONIC at the start: the one conversion to wall-clock
    /// time the live report, the .slr header and a text recording share.
    pub realtime_offset_ns: i64,
    /// The thread unwinding and symbolizing sampled stacks ([`Options::stacks`]).
    stacks: Option<syslint_stacks::Collector>,
}

#[cfg(feature = "ebpf")]
impl EbpfSession {
    /// Load the kernel program and start or follow the target.
    pub fn start(target: &Target, opts: &Options) -> Result<EbpfSession, BpfError> {
        // before the (slow) load: no process to attach to is a quick, clear error. One of
        // several that is gone (a backend of a busy server that exited between `--comm`'s scan
        // and the attach) is skipped, and the report says so
        if let Target::Pids(pids) = target {
            if !pids.iter().any(|&p| crate::procfs::running(p)) {
                return Err(BpfError::Other(format!("no process with pid {}", pids.first().copied().unwrap_or(0))));
            }
        }
        // attaching: calls the threads are already in are reported when they return (the
        // blocked accept whose connection the trace would otherwise never see opened)
        let opts = &Options { in_flight: matches!(target, Target::Pids(_)), ..opts.clone() };
        let mut probe = Probe::load(opts)?;
        // before the command starts: its first sample must find the collector reading
        let stacks = match probe.take_stack_ring()? {
            Some(ring) => {
                Some(syslint_stacks::Collector::start(ring, syslint_stacks::Limits::default()).map_err(BpfError::Io)?)
            }
            None => None,
        };
        let mut known = format::Known::default();
        let mut sockets = snapshot::Sockets::default();
        let mut gone = Vec::new();
        let (child, pids, what) = match target {
            Target::Command(argv) => {
                let c = probe.spawn(argv)?;
                let what =
                    format!("command {}", argv.first().map(|a| a.to_string_lossy().into_owned()).unwrap_or_default());
                let pid = c.pid();
                (Some(c), vec![pid], what)
            }
            Target::Pids(given) => {
                let mut pids = Vec::with_capacity(given.len());
                for &p in given {
                    // who the threads are and what the fds already open are, before their
                    // first event arrives
                    crate::procfs::threads_of(p, &mut known.tasks);
                    // a thread's id given: its process is what is followed (the filter is by
                    // process) and whose fds are named
                    let tgid = known.tasks.get(&p).map_or(p, |t| t.tgid);
                    snapshot::fds_of(tgid, &mut known, &mut sockets);
                    // threads of a followed process are covered by its tgid; one that exited
                    // meanwhile is skipped (`gone`)
                    match probe.follow(tgid) {
                        Ok(()) => pids.push(p),
                        Err(_) if !crate::procfs::running(tgid) => gone.push(p),
                        Err(e) => return Err(e),
                    }
                }
                if pids.is_empty() {
                    return Err(BpfError::Other(format!(
                        "no process with pid {}: every process given exited before the attach",
                        given.first().copied().unwrap_or(0)
                    )));
                }
                let list: Vec<String> = pids.iter().map(std::string::ToString::to_string).collect();
                let what = format!("pid{} {}", if pids.len() == 1 { "" } else { "s" }, list.join(", "));
                (None, pids, what)
            }
        };
        Ok(EbpfSession {
            probe,
            child,
            pids,
            encoder: slr::Encoder::default(),
            known,
            opts: opts.clone(),
            what,
            gone,
            records: 0,
            realtime_offset_ns: slr::realtime_offset_ns(),
            stacks,
        })
    }

    /// The sampled stacks, unwound and symbolized, with the kernel's counts (sampled, sent,
    /// lost): call once the traced processes ended or were left (after [`EbpfSession::drain`]).
    /// None when stacks were not asked for or the kernel program cannot send them (no BTF).
    pub fn finish_stacks(&mut self) -> Option<Result<StackTable, String>> {
        let c = self.stacks.take()?;
        let kernel = self.probe.stack_stats();
        Some(c.finish().map(|mut t| {
            if kernel.lost > 0 {
                t.notes.push(format!(
                    "{} of {} sampled stacks were lost (the stack ring buffer was full): those calls have none",
                    kernel.lost, kernel.sampled
                ));
            }
            t.kernel = Some(kernel);
            t
        }))
    }

    /// [`EbpfSession::finish_stacks`] in the analyzer's terms: frames as strace `-k` gives
    /// them (the address as the offset in the module's file, so one place in a library is one
    /// frame whatever process mapped it where), samples by thread and syscall with the calls
    /// each stands for, and what could not be named or kept as notes (the same note once).
    pub fn sampled_stacks(&mut self) -> Option<syslint_event::SampledStacks> {
        let t = match self.finish_stacks()? {
            Ok(t) => t,
            Err(e) => {
                return Some(syslint_event::SampledStacks {
                    notes: vec![format!("the sampled stacks could not be read: {e}")],
                    ..Default::default()
                })
            }
        };
        Some(into_sampled(t))
    }

    /// What the fds open before an attach are (for the [`Consumer`]).
    pub fn known(&self) -> &format::Known {
        &self.known
    }

    /// Wait up to `timeout` for records and append them to `out` as they lie in the kernel's
    /// ring buffer, about `max` bytes at most: one copy, no per-record work (the capture thread
    /// must keep up with the kernel; parsing, formatting and analysis happen in a [`Consumer`],
    /// possibly on another thread). Returns how many records.
    pub fn pump(&mut self, timeout: Duration, out: &mut Vec<u8>, max: usize) -> Result<usize, BpfError> {
        let n = self.probe.poll_copy(timeout, out, max)?;
        self.records += n as u64;
        Ok(n)
    }

    /// Encode the records of `raw` (from [`EbpfSession::pump`]) into `out`: about 2.5 times
    /// smaller, for when records must wait long in memory. Encoded chunks must reach the
    /// [`Consumer`] in the order they were encoded (timestamps are deltas).
    pub fn compact(&mut self, raw: &[u8], out: &mut Vec<u8>) -> Result<(), syslint_bpf::ChunkError> {
        let enc = &mut self.encoder;
        syslint_bpf::parse_chunk(raw, &mut |r| enc.encode(&r, out)).map(drop)
    }

    /// Everything still in the buffer and the runs the kernel has not reported yet, in order.
    pub fn drain(&mut self) -> Result<Vec<Chunk>, BpfError> {
        // the programs first: attached to a busy process they refill the ring as fast as it is
        // read, and the trace (`--for 2s`, an agent's window) went on until the load stopped,
        // its whole cost to the traced process included
        self.probe.detach();
        let mut out = Vec::new();
        self.drain_ring(&mut out)?;
        let (enc, n, mut encoded) = (&mut self.encoder, &mut self.records, Vec::new());
        self.probe.flush_pending(&mut |r| {
            *n += 1;
            enc.encode(&r, &mut encoded);
        })?;
        if !encoded.is_empty() {
            out.push(Chunk::Encoded(encoded));
        }
        self.drain_ring(&mut out)?;
        Ok(out)
    }

    /// What the ring buffer holds now, as one raw chunk (none when it is empty).
    fn drain_ring(&mut self, out: &mut Vec<Chunk>) -> Result<(), BpfError> {
        let mut raw = Vec::new();
        while self.pump(Duration::ZERO, &mut raw, usize::MAX)? > 0 {}
        if !raw.is_empty() {
            out.push(Chunk::Raw(raw));
        }
        Ok(())
    }

    /// Close the window (see [`EbpfSession::waiting`]): no new call is recorded from now on.
    pub fn close_window(&self) -> Result<(), BpfError> {
        self.probe.close_window()
    }

    /// How many traced threads are still in a wait that began inside the window and whose end
    /// a detector needs to see: a read on a socket (read, readv, recvfrom, recvmsg), or a poll
    /// of a few fds with a timeout (poll, ppoll, select, pselect6), where a client waits for
    /// the rest of a response or for the peer to close (keepalive-stall; PHP's streams poll
    /// with default_socket_timeout). Not a poll without a timeout (a program idle until work
    /// comes: the timer-polling lab's GOOD selects on a pipe), nor epoll_wait (an event loop
    /// sits there all the time, and it names no socket): the window would only grow.
    pub fn waiting(&self) -> usize {
        self.probe.waiting(&mut |tgid, nr, args| match syslint_bpf::syscall_name(nr) {
            Some("read" | "readv" | "recvfrom" | "recvmsg") => {
                std::fs::read_link(format!("/proc/{tgid}/fd/{}", args[0]))
                    .is_ok_and(|l| l.as_os_str().as_encoded_bytes().starts_with(b"socket:"))
            }
            // poll(fds, nfds, ms): a timeout in ms, -1 for none
            Some("poll") => (1..=8).contains(&args[1]) && (args[2] as i32) > 0,
            // ppoll(fds, nfds, timeout *, ...); select and pselect6(nfds, r, w, e, timeout *, ...):
            // a NULL timeout is none
            Some("ppoll") => (1..=8).contains(&args[1]) && args[2] != 0,
            Some("select" | "pselect6") => (1..=1024).contains(&args[0]) && args[4] != 0,
            _ => false,
        })
    }

    /// The command's exit status once it ended (None while it runs, or when attached).
    pub fn child_status(&mut self) -> Option<ExitStatus> {
        self.child.as_mut().and_then(|c| c.try_wait().ok().flatten())
    }

    /// Whether every attached process is gone.
    pub fn all_gone(&self) -> bool {
        self.child.is_none() && self.pids.iter().all(|&p| !crate::procfs::running(p))
    }

    pub fn child_pid(&self) -> Option<u32> {
        self.child.as_ref().map(syslint_bpf::Child::pid)
    }

    pub fn lost(&self) -> Lost {
        self.probe.lost()
    }

    /// Per-syscall counters of summary-only mode: (name, calls, errors, total ns).
    pub fn summary(&self) -> Vec<syslint_report::CountRow> {
        self.probe
            .summary()
            .into_iter()
            .map(|(nr, c)| {
                let name = syslint_bpf::syscall_name(nr).map_or_else(|| format!("syscall_{nr}"), str::to_string);
                syslint_report::CountRow {
                    name,
                    calls: c.calls,
                    errors: c.errors,
                    seconds: Some(c.dur_ns as f64 / 1e9),
                }
            })
            .collect()
    }
}

/// Records on their way from the capture side to a [`Consumer`].
pub enum Chunk {
    /// As they lay in the ring buffer ([`EbpfSession::pump`]).
    Raw(Vec<u8>),
    /// Encoded by the session ([`EbpfSession::compact`], and the runs [`EbpfSession::drain`]
    /// flushed), in order.
    Encoded(Vec<u8>),
}

impl Chunk {
    pub fn len(&self) -> usize {
        match self {
            Chunk::Raw(b) | Chunk::Encoded(b) => b.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The buffer, emptied, to fill again.
    pub fn into_buffer(self) -> Vec<u8> {
        let (Chunk::Raw(mut b) | Chunk::Encoded(mut b)) = self;
        b.clear();
        b
    }
}

/// The other end: records in, events out (and the `.slr` recording written).
/// Why a queued chunk could not be read whole (the records before the damage were analysed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeedError {
    #[error(transparent)]
    Ring(#[from] syslint_bpf::ChunkError),
    #[error(transparent)]
    Recording(#[from] slr::Damaged),
}

pub struct Consumer {
    decoder: slr::Decoder,
    pub formatter: Formatter,
    writer: Option<slr::Writer>,
    /// Why the recording stopped, if it did.
    pub record_error: Option<String>,
    /// The command syslint started, until it execs: its syscalls before are syslint's own
    /// (after the fork, waiting on the gate pipe and closing syslint's fds 3-5), not the
    /// command's, and are left out of the analysis and the recording, as strace leaves them.
    pub before_exec: Option<u32>,
}

impl Consumer {
    pub fn new(known: format::Known, writer: Option<slr::Writer>) -> Consumer {
        Consumer {
            decoder: slr::Decoder::default(),
            formatter: Formatter::new(known),
            writer,
            record_error: None,
            before_exec: None,
        }
    }

    /// A `.slr` writer for a session (header and fd snapshot written now).
    #[cfg(feature = "ebpf")]
    pub fn recording(path: &Path, s: &EbpfSession) -> std::io::Result<slr::Writer> {
        slr::Writer::create_at(path, &s.what, &s.opts, &s.known, s.realtime_offset_ns)
    }

    /// The chunks of one session, in order.
    pub fn feed(&mut self, chunk: &Chunk, sink: &mut dyn FnMut(&Event)) -> Result<(), FeedError> {
        let (f, writer, record_error) = (&mut self.formatter, &mut self.writer, &mut self.record_error);
        let before_exec = &mut self.before_exec;
        let mut each = |r: syslint_bpf::Record<'_>| {
            if let Some(pid) = *before_exec {
                match r {
                    syslint_bpf::Record::Exec { tgid, .. } if tgid == pid => *before_exec = None,
                    syslint_bpf::Record::Syscall { tgid, .. }
                    | syslint_bpf::Record::Repeat { tgid, .. }
                    | syslint_bpf::Record::Signal { tgid, .. }
                        if tgid == pid =>
                    {
                        return;
                    }
                    _ => {}
                }
            }
            if let Some(w) = writer.as_mut() {
                if let Err(e) = w.write(&r) {
                    *record_error = Some(e.to_string());
                    *writer = None;
                }
            }
            f.on_record(&r, sink);
        };
        match chunk {
            Chunk::Raw(b) => syslint_bpf::parse_chunk(b, &mut each).map(drop).map_err(FeedError::from),
            Chunk::Encoded(b) => self.decoder.decode(b, &mut each).map_err(FeedError::from),
        }
    }

    /// Close the recording with the sampled stacks and the lost counts; its problem if it
    /// failed.
    pub fn finish(&mut self, lost: Lost, stacks: Option<&syslint_event::SampledStacks>) -> Option<String> {
        if let Some(w) = self.writer.take() {
            if let Err(e) = w.finish(lost, stacks) {
                return Some(e.to_string());
            }
        }
        self.record_error.take()
    }
}

/// Lower the calling thread's CPU priority to the least (nice 19): the analysis of a live
/// capture must not take CPU from the traced program when the machine is busy; it catches up
/// when the CPU is free (records wait in memory, or the kernel drops and counts them).
pub fn lower_thread_priority() {
    // SAFETY: setpriority with PRIO_PROCESS and 0 changes only the calling thread on Linux;
    // it reads no memory.
    unsafe {
        nix::libc::setpriority(nix::libc::PRIO_PROCESS, 0, 19);
    }
}

/// Whether the error means "not allowed or not possible here": fall back to strace.
pub fn can_fall_back(e: &BpfError) -> bool {
    matches!(e, BpfError::PermissionDenied(_) | BpfError::Unsupported(_))
}

/// Now in the clock of the kernel's records (CLOCK_MONOTONIC, nanoseconds).
pub fn monotonic_now_ns() -> i64 {
    syslint_bpf::monotonic_now_ns() as i64
}

/// A [`StackTable`] of the collector as [`syslint_event::SampledStacks`].
#[cfg(feature = "ebpf")]
pub fn into_sampled(t: StackTable) -> syslint_event::SampledStacks {
    use syslint_event::{Sys, Tid};
    let stacks = t
        .stacks
        .iter()
        .map(|s| {
            s.frames
                .iter()
                .map(|f| syslint_event::Frame {
                    addr: if f.module.is_some() { f.module_offset } else { f.addr },
                    module: f.module.clone(),
                    symbol: f.symbol.clone(),
                    offset: f.symbol_offset,
                    file: f.file.clone(),
                    line: f.line,
                    error: None,
                })
                .collect()
        })
        .collect();
    let samples = t
        .samples
        .iter()
        .map(|s| (Tid(s.tid), Sys::from_x86_64(s.nr), u64::from(s.weight.max(1)), s.stack as usize))
        .collect();
    let mut notes: Vec<String> = t.notes;
    notes.extend(stack_notes(&t.stacks));
    syslint_event::SampledStacks { stacks, samples, notes }
}

/// What the stacks could not give, summed up in two notes at most: a note per stack (a Python
/// service has dozens) buried the header. Which stacks end early and why, counted; which
/// modules have frames without a symbol, most first.
#[cfg(feature = "ebpf")]
fn stack_notes(stacks: &[syslint_stacks::Stack]) -> Vec<String> {
    fn tally(counts: &mut Vec<(String, usize)>, key: String) {
        match counts.iter_mut().find(|c| c.0 == key) {
            Some(c) => c.1 += 1,
            None => counts.push((key, 1)),
        }
    }
    fn listed(mut counts: Vec<(String, usize)>, unit: &str) -> String {
        counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let more = counts.len().saturating_sub(6);
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let mut parts: Vec<String> =
            counts.iter().take(6).map(|(k, n)| format!("{k} ({n} {unit}{})", plural(*n))).collect();
        if more > 0 {
            parts.push(format!("{more} more"));
        }
        parts.join(", ")
    }
    let mut notes = Vec::new();
    let mut cuts: Vec<(String, usize)> = Vec::new();
    for c in stacks.iter().filter_map(|s| s.cut.clone()) {
        tally(&mut cuts, c);
    }
    let cut: usize = cuts.iter().map(|c| c.1).sum();
    if cut > 0 {
        notes.push(format!(
            "{cut} of {} sampled stacks end before the thread's first frame: {}; their call sites show the frames \
             up to there",
            stacks.len(),
            listed(cuts, "stack")
        ));
    }
    let mut modules: Vec<(String, usize)> = Vec::new();
    let mut with = 0;
    for s in stacks {
        let mut unnamed = s.frames.iter().filter(|f| f.symbol.is_none()).peekable();
        if unnamed.peek().is_some() {
            with += 1;
        }
        for f in unnamed {
            let name = match &f.module {
                Some(m) => m.rsplit('/').next().unwrap_or(m).to_string(),
                None => "anonymous memory".to_string(),
            };
            tally(&mut modules, name);
        }
    }
    if with > 0 {
        notes.push(format!(
            "{with} of {} sampled stacks have frames no symbol names, in {}: a stripped module keeps only its \
             exported symbols (its debug package names the rest: docs/stacks.md); anonymous memory is JIT code \
             without a perf map, or a map not read",
            stacks.len(),
            listed(modules, "frame")
        ));
    }
    notes
}

#[cfg(all(test, feature = "ebpf"))]
mod tests {
    use super::*;

    fn stack(cut: Option<&str>, unnamed: &[Option<&str>]) -> Stack {
        Stack {
            tgid: 1,
            frames: unnamed
                .iter()
                .map(|m| Frame {
                    addr: 0x1000,
                    module: m.map(str::to_string),
                    module_offset: 0,
                    symbol: None,
                    symbol_offset: 0,
                    file: None,
                    line: None,
                })
                .collect(),
            method: syslint_stacks::Method::Cfi,
            complete: cut.is_none(),
            note: cut.map(str::to_string),
            cut: cut.map(str::to_string),
        }
    }

    #[test]
    fn stack_notes_sum_up_instead_of_one_per_stack() {
        let past = "the stack goes on past the 8192 bytes copied of it";
        let fp = "unwinding stopped: Frame pointer unwinding moved backwards";
        let bash = Some("/usr/bin/bash");
        let stacks = vec![
            stack(Some(past), &[bash, bash, None]),
            stack(Some(past), &[bash]),
            stack(Some(fp), &[Some("/usr/lib/x86_64-linux-gnu/libc.so.6")]),
            stack(None, &[]),
        ];
        let notes = stack_notes(&stacks);
        assert_eq!(notes.len(), 2, "{notes:#?}");
        assert!(
            notes[0].starts_with(&format!(
                "3 of 4 sampled stacks end before the thread's first frame: {past} (2 stacks), {fp} (1 stack)"
            )),
            "{}",
            notes[0]
        );
        assert!(notes[1].starts_with("3 of 4 sampled stacks have frames no symbol names, in bash (3 frames), anonymous memory (1 frame), libc.so.6 (1 frame)"), "{}", notes[1]);
        assert!(stack_notes(&[stack(None, &[])]).is_empty());
        // a module list stays bounded
        let distinct: Vec<String> = (0..9).map(|i| format!("/m/lib{i}.so")).collect();
        let many: Vec<Stack> = distinct.iter().map(|m| stack(None, &[Some(m.as_str())])).collect();
        assert!(stack_notes(&many)[0].contains("3 more"), "{:?}", stack_notes(&many));
    }
}
