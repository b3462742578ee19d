//! Live eBPF: the kernel program records the target's syscalls; a capture thread (the caller's)
//! copies the ring buffer into chunks, an analysis thread at nice 19 turns them into events for
//! the sink. When the analysis falls behind, chunks wait in a queue bounded in bytes; beyond
//! it the ring buffer fills and the kernel drops and counts: the traced program never waits.

use crate::log::formatter_stats;
use crate::sink::StraceText;
use crate::{captured, is_slr_name, Captured, Error, Outcome, Phases, Sink, Source, StopReason, StopWhen};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::time::{Duration, Instant};
use syslint_capture::ebpf::{self, format::Known, slr, Chunk, Consumer, EbpfSession, Options, Target};
use syslint_capture::CaptureInfo;
use syslint_report::Backend;

/// Records waiting for the analysis, at most: an eighth of the memory available when the
/// trace starts, between these bounds (or SYSLINT_QUEUE_BYTES, which tests use to provoke a
/// full queue). Beyond it the capture thread stops reading the ring buffer, and the kernel
/// drops and counts: the traced program never waits. nginx under a saturating load on the
/// 2-core development VM queued 180-205 MB in a 7 s trace (about 130 bytes a record while the
/// analysis was starved at nice 19), and one run of the benchmark lost 9,827 records with the
/// former fixed 256 MiB.
const QUEUE_MIN: usize = 64 << 20;
const QUEUE_MAX: usize = 1 << 30;
/// Where /proc/meminfo cannot be read.
const QUEUE_DEFAULT: usize = 256 << 20;

/// The queue's bound and what set it, for the warning when it is reached: `given` (the agent's
/// memory budget), else an eighth of the memory available.
fn queue_limit(given: Option<usize>) -> (usize, &'static str) {
    if let Some(b) = std::env::var("SYSLINT_QUEUE_BYTES").ok().and_then(|v| v.parse().ok()) {
        return (b, "SYSLINT_QUEUE_BYTES");
    }
    if let Some(b) = given {
        return (b, "what the agent's --memory-budget leaves");
    }
    let avail = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| mem_available(&m));
    (avail.map_or(QUEUE_DEFAULT, |avail| (avail / 8).clamp(QUEUE_MIN, QUEUE_MAX)), "an eighth of the memory available")
}

/// MemAvailable of a /proc/meminfo text, in bytes.
fn mem_available(meminfo: &str) -> Option<usize> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The most one handover holds (buffers of this size are reused).
const CHUNK_BYTES: usize = 1 << 20;
/// Emptied buffers kept for reuse (a fresh one costs a page fault per page).
const FREE_BUFFERS: usize = 64;

/// A live eBPF capture of a command or processes. `-o FILE.slr` records the kernel's records;
/// any other `-o FILE` gets strace text of the events.
pub struct EbpfSource {
    session: EbpfSession,
    slr: Option<slr::Writer>,
    text: Option<StraceText<Box<dyn Write + Send>>>,
    /// With `summary_only`: print the kernel's counts of the last interval every interval, on
    /// stderr (there are no events for [`crate::Interval`] to count).
    pub interval: Option<Duration>,
    /// The bound of the records waiting for the analysis, in bytes (None: an eighth of the
    /// memory available).
    pub queue_bytes: Option<usize>,
    /// At the `--for` deadline, wait up to this long for the socket reads and polls the traced
    /// threads are in to return, recording nothing new meanwhile ([`EbpfSession::waiting`]):
    /// the agent's short windows then see a wait that began inside them end (None: stop at
    /// the deadline).
    pub settle: Option<Duration>,
    /// End the capture, as at the `--for` deadline (settling included), once the kernel has
    /// sent this many records: an agent's window on a busy host costs what this many calls
    /// cost, however busy the host ([`StopReason::Bounded`]).
    pub max_records: Option<u64>,
}

impl EbpfSource {
    /// Load the kernel program and start or follow the target. [`Error::Bpf`] when eBPF
    /// itself failed (see [`ebpf::can_fall_back`]).
    /// `payload_bytes`: the bytes of each buffer the kernel copies (at most 4095).
    pub fn start(
        target: &Target,
        summary_only: bool,
        record: Option<&Path>,
        payload_bytes: u16,
        stacks: Option<ebpf::StackOptions>,
    ) -> Result<EbpfSource, Error> {
        let mut opts = Options { summary_only, payload_bytes, stacks, ..Options::default() };
        // tests shrink the kernel buffer to provoke drops
        if let Some(b) = std::env::var("SYSLINT_RING_BYTES").ok().and_then(|v| v.parse().ok()) {
            opts.ring_bytes = b;
        }
        let session = EbpfSession::start(target, &opts).map_err(Error::Bpf)?;
        let cannot_write = |p: &Path, source| Error::Record { path: p.into(), source };
        let (slr, text) = match record {
            Some(p) if is_slr_name(p) => {
                (Some(Consumer::recording(p, &session).map_err(|e| cannot_write(p, e))?), None)
            }
            Some(p) => {
                let w = syslint_capture::live::text_writer(p).map_err(|e| cannot_write(p, e))?;
                (None, Some(StraceText::new(w, session.realtime_offset_ns)))
            }
            None => (None, None),
        };
        Ok(EbpfSource { session, slr, text, interval: None, queue_bytes: None, settle: None, max_records: None })
    }
}

impl Source for EbpfSource {
    fn name(&self) -> String {
        format!("{} (eBPF)", self.session.what)
    }

    fn run(self: Box<Self>, sink: &mut (dyn Sink + Send), stop: &StopWhen) -> Result<Outcome, Error> {
        let EbpfSource { mut session, slr, text, interval, queue_bytes, settle, max_records } = *self;
        // monotonic to wall clock, once at the start (as the .slr header and -o text do)
        let local_offset_ns = ebpf::format::local_offset_ns(session.realtime_offset_ns);
        let child = session.child_pid();
        let attached = child.is_none();
        let deadline = stop.deadline();
        let stop_when_after = stop.after;
        let known = session.known().clone();
        let (tx, rx) = std::sync::mpsc::channel::<Chunk>();
        // emptied buffers go back to the capture thread
        let (free_tx, free_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(FREE_BUFFERS);
        let queued = AtomicUsize::new(0);
        let (queue_max, queue_why) = queue_limit(queue_bytes);
        // the capture thread hands records over as they lay in the ring buffer (one copy, the
        // least CPU taken from the traced program) while the queue is shorter than this;
        // beyond, the analysis is falling behind (a busy machine starves it at nice 19) and it
        // encodes them, about 2.5 times smaller (~40 bytes a record without payloads), so the
        // queue holds more before anything is lost
        let compact_from = queue_max / 2;
        // how long the ring buffer was left unread because the queue was full
        let mut full_for = Duration::ZERO;
        // when the settling after the deadline ends (`settle`), once it began
        let mut settling: Option<Instant> = None;
        // why the window began to close (the deadline, or the bound of records): its reason,
        // even when the deadline passes while it settles
        let mut closing: Option<StopReason> = None;
        let began = Instant::now();
        let mut phases = Phases::default();

        let (mut why, mut exit_status, mut failure, mut broke) = (None, None, None, false);
        // --interval with --summary-only: the kernel's counts, every interval
        let mut counting =
            interval.filter(|_| session.opts.summary_only).map(|every| (every, Instant::now() + every, Vec::new()));
        let analysis = std::thread::scope(|scope| {
            let worker = {
                let queued = &queued;
                scope.spawn(move || analyse(rx, free_tx, queued, (known, child), slr, text, sink))
            };
            // capture: poll the ring buffer, hand chunks over
            let fresh = || free_rx.try_recv().unwrap_or_else(|_| Vec::with_capacity(CHUNK_BYTES));
            let mut raw = fresh();
            loop {
                let q = queued.load(Ordering::Relaxed);
                if q < queue_max {
                    if let Err(e) = session.pump(Duration::from_millis(100), &mut raw, CHUNK_BYTES) {
                        failure = Some(e.to_string());
                        broke = true;
                        break;
                    }
                } else {
                    // the analysis is far behind: let the ring buffer fill (the kernel counts drops)
                    const PAUSE: Duration = Duration::from_millis(20);
                    std::thread::sleep(PAUSE);
                    full_for += PAUSE;
                }
                if !raw.is_empty() {
                    let chunk = if q >= compact_from {
                        let mut enc = fresh();
                        if let Err(e) = session.compact(&raw, &mut enc) {
                            failure.get_or_insert(format!("reading the ring buffer: {e}"));
                        }
                        raw.clear();
                        Chunk::Encoded(enc)
                    } else {
                        Chunk::Raw(std::mem::replace(&mut raw, fresh()))
                    };
                    queued.fetch_add(chunk.len(), Ordering::Relaxed);
                    if tx.send(chunk).is_err() {
                        break;
                    }
                }
                if let Some((every, next, last)) = counting.as_mut() {
                    if Instant::now() >= *next {
                        let now = session.summary();
                        eprintln!("{}", crate::sink::counts_line(every.as_secs_f64(), &now, last));
                        *last = now;
                        *next += *every;
                    }
                }
                why = stop.check(deadline, attached);
                if let Some(m) = max_records.filter(|&m| why.is_none() && session.records >= m) {
                    why = Some(StopReason::Bounded(m));
                }
                // the deadline with `settle`: no new call from now on; the waits already
                // begun may end (up to `settle`), then the window does
                if let (Some(r @ (StopReason::Elapsed(_) | StopReason::Bounded(_))), Some(grace)) =
                    (why.clone(), settle)
                {
                    why = Some(closing.get_or_insert(r).clone());
                    let until = *settling.get_or_insert_with(|| {
                        if let Err(e) = session.close_window() {
                            failure.get_or_insert(e.to_string());
                        }
                        Instant::now() + grace
                    });
                    if Instant::now() < until && session.waiting() > 0 {
                        why = None;
                        continue;
                    }
                }
                if why.is_some() {
                    break;
                }
                if attached {
                    if session.all_gone() {
                        break;
                    }
                } else if let Some(st) = session.child_status() {
                    exit_status = Some(st);
                    break;
                }
            }
            let loop_end = Instant::now();
            // the window closed `settle` before the settling's end
            let closed = settling.zip(settle).map_or(loop_end, |(until, grace)| until - grace);
            phases.traced = closed - began;
            phases.settling = loop_end - closed;
            match session.drain() {
                Ok(chunks) => {
                    for c in chunks {
                        let _ = tx.send(c);
                    }
                }
                Err(e) => {
                    failure.get_or_insert(e.to_string());
                }
            }
            drop(tx);
            let joined = worker.join();
            phases.catching_up = loop_end.elapsed();
            joined
        });
        let Ok((mut consumer, mut info)) = analysis else {
            return Err(Error::AnalysisThread);
        };
        let lost = session.lost();
        // unwound as they came, symbolized now (off the capture thread, after it), and kept
        // in the recording too
        let sampled_stacks = session.sampled_stacks();
        if let Some(e) = consumer.finish(lost, sampled_stacks.as_ref()) {
            info.warnings.push(format!("the recording is incomplete: {e}"));
        }
        let stop = match (why, broke.then(|| failure.clone()).flatten()) {
            (Some(why), _) => why,
            (None, Some(e)) => StopReason::Failed(format!("the capture stopped early: {e}")),
            (None, None) => StopReason::Ended,
        };
        if let Some(e) = failure {
            info.warnings.push(format!("the capture stopped early: {e}"));
        }
        if lost.records > 0 {
            info.warnings.push(format!(
                "the kernel buffer overflowed: {} records ({} syscalls) lost; counts are lower bounds",
                lost.records, lost.syscalls
            ));
        }
        if !full_for.is_zero() {
            info.warnings.push(format!(
                "the analysis fell behind: its queue reached its limit ({}, {queue_why}) \
                 and the kernel buffer was not read for {:.1} s",
                if queue_max >= 1 << 20 { format!("{} MiB", queue_max >> 20) } else { format!("{queue_max} bytes") },
                full_for.as_secs_f64()
            ));
        }
        stop.notes(attached, &mut info.notes);
        info.notes.extend(crate::gone_note(&session.gone));
        let kernel_counts = session.opts.summary_only.then(|| session.summary());
        let detach = Instant::now();
        drop(session); // detaches the kernel program
        phases.detaching = detach.elapsed();
        let stopped_ns = stop.requested().then(ebpf::monotonic_now_ns);
        // a window cut short by its bound: judged at its rate over the length it was to have
        let shortened = match (&stop, stop_when_after) {
            (StopReason::Bounded(_), Some(meant)) => Some(syslint_analyze::registry::Shortened {
                seen_s: phases.traced.as_secs_f64(),
                meant_s: meant.as_secs_f64(),
            }),
            _ => None,
        };
        let records_by_process = consumer.formatter.records_by_process();
        let mut capture = Captured {
            shortened,
            records_by_process,
            lost_events: lost.syscalls,
            kernel_counts,
            stopped_ns,
            local_offset_ns: Some(local_offset_ns),
            sampled_stacks,
            ..captured(Backend::Ebpf, info)
        };
        capture.capture.unread_s = full_for.as_secs_f64();
        Ok(Outcome { stop, attached, exit_status, capture, not_strace: Vec::new(), phases })
    }
}

/// The analysis thread: chunks of records until the capture side hangs up.
fn analyse(
    rx: Receiver<Chunk>,
    free: SyncSender<Vec<u8>>,
    queued: &AtomicUsize,
    (known, child): (Known, Option<u32>),
    slr: Option<slr::Writer>,
    mut text: Option<StraceText<Box<dyn Write + Send>>>,
    sink: &mut (dyn Sink + Send),
) -> (Consumer, CaptureInfo) {
    ebpf::lower_thread_priority();
    let mut consumer = Consumer::new(known, slr);
    consumer.before_exec = child;
    let mut damaged: Option<syslint_capture::ebpf::FeedError> = None;
    for chunk in rx {
        queued.fetch_sub(chunk.len(), Ordering::Relaxed);
        let mut each = |ev: &syslint_event::Event| {
            text.on_event(ev);
            sink.on_event(ev);
        };
        if let Err(e) = consumer.feed(&chunk, &mut each) {
            damaged.get_or_insert(e);
        }
        // a full pool: the buffer is freed instead
        let _ = free.try_send(chunk.into_buffer());
    }
    let mut info = CaptureInfo { sources: vec!["ebpf".to_string()], ..Default::default() };
    formatter_stats(&consumer.formatter, &mut info);
    text.on_stop(&mut info.warnings);
    sink.on_stop(&mut info.warnings);
    if let Some(e) = damaged {
        info.warnings.push(format!("internal: {e}"));
    }
    (consumer, info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_limit_follows_available_memory() {
        let m = "MemTotal:       24641536 kB\nMemFree:         1000 kB\nMemAvailable:   2097152 kB\n";
        assert_eq!(mem_available(m), Some(2 << 30));
        assert_eq!(mem_available("MemTotal: 5 kB\n"), None);
        assert_eq!(mem_available("MemAvailable: lots kB\n"), None);
        // the real machine: within the bounds
        let q = queue_limit(None).0;
        assert!((QUEUE_MIN..=QUEUE_MAX).contains(&q) || std::env::var_os("SYSLINT_QUEUE_BYTES").is_some(), "{q}");
    }
}
