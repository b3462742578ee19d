//! Sources that read what was recorded: strace logs and `.slr` recordings.

use crate::status::Progress;
use crate::{captured, Captured, Error, Outcome, Phases, Sink, Source, StopReason, StopWhen};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use syslint_capture::ebpf::{format::Formatter, slr};
use syslint_capture::{input, CaptureInfo};
use syslint_report::Backend;

/// strace logs, plain or compressed: one file or stdin (read by parallel workers), or several
/// (an `strace -ff` set, merged by timestamp).
pub struct LogSource {
    sources: Vec<input::Source>,
    progress: bool,
    /// The one input, a stream already opened to look into (and the bytes read from it).
    opened: Option<(Box<dyn Read + Send>, Arc<AtomicU64>)>,
    /// What the expansion left out (links inside a directory), said in the report.
    skipped: Vec<String>,
}

impl LogSource {
    /// The inputs, expanded (a directory is its files); fails when one does not exist.
    /// `progress`: a progress bar on a terminal when the inputs are large.
    pub fn open(inputs: &[PathBuf], progress: bool) -> Result<LogSource, Error> {
        let (sources, skipped) = input::expand_sources_noting(inputs)?;
        Ok(LogSource { sources, progress, opened: None, skipped })
    }
}

impl Source for LogSource {
    fn name(&self) -> String {
        self.sources.iter().map(syslint_capture::input::Source::name).collect::<Vec<_>>().join(", ")
    }

    fn run(self: Box<Self>, sink: &mut (dyn Sink + Send), _stop: &StopWhen) -> Result<Outcome, Error> {
        let total: Option<u64> = self.sources.iter().map(syslint_capture::input::Source::len).sum();
        let (opened, done) = match self.opened {
            Some((r, done)) => (Some(r), done),
            None => (None, Arc::new(AtomicU64::new(0))),
        };
        let progress = Progress::start(done.clone(), total, !self.progress);
        let mut info = match (opened, &self.sources[..]) {
            (Some(r), [one]) => syslint_capture::read_strace_opened(one, r, |ev| sink.on_event(ev)),
            _ => syslint_capture::read_strace(&self.sources, done, |ev| sink.on_event(ev))?,
        };
        drop(progress);
        info.warnings.extend(self.skipped);
        sink.on_stop(&mut info.warnings);
        let not_strace = std::mem::take(&mut info.not_strace);
        Ok(Outcome { not_strace, ..ended(captured(Backend::StraceLog, info)) })
    }
}

/// An eBPF recording (`.slr`): its records through the same formatter as a live capture.
pub struct RecordingSource {
    /// The file's path, or `<stdin>`.
    path: PathBuf,
    rec: slr::Recording,
}

impl RecordingSource {
    pub fn open(path: &Path) -> Result<RecordingSource, Error> {
        let rec = slr::open(path).map_err(|source| Error::ReadRecording { path: path.into(), source })?;
        Ok(RecordingSource { path: path.into(), rec })
    }

    /// A recording from a stream (stdin, a FIFO) already opened: `r` gives its decompressed
    /// bytes from the first.
    pub fn from_stream(name: &str, r: Box<dyn Read + Send>) -> Result<RecordingSource, Error> {
        let rec = slr::Recording::from_reader(r, None)
            .map_err(|source| Error::ReadRecording { path: name.into(), source })?;
        Ok(RecordingSource { path: name.into(), rec })
    }

    /// Monotonic to wall-clock time when the recording was made, in ns.
    pub fn realtime_offset_ns(&self) -> i64 {
        self.rec.header.realtime_offset_ns
    }

    /// Every event into `sink`; what the recording says about itself (lost records, damage).
    /// The counts of events and syscalls go to `info` when given. The events carry the
    /// kernel's values; their text, wherever rendered (`export`, evidence), shows fds from
    /// before an attach with `-yy` decorations.
    pub fn replay(&mut self, sink: &mut dyn Sink, info: Option<&mut CaptureInfo>) -> slr::ReadInfo {
        let mut f = Formatter::new(self.rec.known.clone());
        let read = self.rec.replay(&mut |r| f.on_record(&r, &mut |ev| sink.on_event(ev)));
        if let Some(info) = info {
            formatter_stats(&f, info);
        }
        read
    }
}

impl Source for RecordingSource {
    fn name(&self) -> String {
        self.path.display().to_string()
    }

    fn run(self: Box<Self>, sink: &mut (dyn Sink + Send), _stop: &StopWhen) -> Result<Outcome, Error> {
        let mut this = *self;
        let mut info = CaptureInfo { sources: vec![this.path.display().to_string()], ..Default::default() };
        let read = this.replay(sink, Some(&mut info));
        let p = &this.path;
        if let Some(problem) = read.problem {
            info.warnings.push(format!("{}: {problem}", p.display()));
        }
        if read.lost.records > 0 {
            info.warnings.push(format!(
                "the kernel buffer overflowed during the capture: {} records ({} syscalls) lost; counts are lower bounds",
                read.lost.records, read.lost.syscalls
            ));
        }
        sink.on_stop(&mut info.warnings);
        let local_offset_ns = Some(syslint_capture::ebpf::format::local_offset_ns(this.realtime_offset_ns()));
        Ok(ended(Captured {
            lost_events: read.lost.syscalls,
            local_offset_ns,
            sampled_stacks: read.stacks,
            ..captured(Backend::EbpfRecording, info)
        }))
    }
}

/// What the eBPF formatter counted, as a reader's statistics (eBPF times are monotonic and
/// every syscall has its duration).
pub(crate) fn formatter_stats(f: &Formatter, info: &mut CaptureInfo) {
    info.stats.events = f.events;
    info.stats.syscalls = f.syscalls;
    info.stats.clock = syslint_event::Clock::Monotonic;
    info.stats.with_duration = f.syscalls - f.began_before;
    if f.bad_repeats > 0 {
        info.warnings.push(format!(
            "{} repeat records claimed more than 65,536 calls each (a damaged recording): skipped",
            f.bad_repeats
        ));
    }
}

fn ended(capture: Captured) -> Outcome {
    Outcome {
        stop: StopReason::Ended,
        attached: false,
        exit_status: None,
        capture,
        not_strace: Vec::new(),
        phases: Phases::default(),
    }
}

/// What `syslint analyze` reads: one `.slr` recording, or strace logs. One input that is a
/// stream (stdin, a FIFO) is opened here, once, and what its first bytes hold decides.
pub fn open_inputs(inputs: &[PathBuf], progress: bool) -> Result<Box<dyn Source>, Error> {
    if let [one] = inputs {
        if slr::is_slr(one) {
            return Ok(Box::new(RecordingSource::open(one)?));
        }
    }
    let mut logs = LogSource::open(inputs, progress)?;
    if let [one] = &logs.sources[..] {
        if input::is_stream(one) {
            match open_stream(one)? {
                Stream::Recording(rec) => return Ok(rec),
                Stream::Text(r, done) => logs.opened = Some((r, done)),
            }
        } else if input::gzip_around_zstd(&one.path) {
            // a recording compressed again (`gzip rec.slr`, a CI artifact): as from a stream
            if let Stream::Recording(rec) = open_stream(one)? {
                return Ok(rec);
            }
        }
    }
    Ok(Box::new(logs))
}

/// What a stream (stdin, a FIFO: [`input::is_stream`]) holds, opened once.
pub enum Stream {
    Recording(Box<RecordingSource>),
    /// Text (decompressed), and the bytes read from the stream so far.
    Text(Box<dyn Read + Send>, Arc<AtomicU64>),
}

/// Open a stream and look at its first bytes: a recording is a zstd stream whose text begins
/// with its magic. The bytes looked at are given back to whichever reader takes the stream.
pub fn open_stream(one: &input::Source) -> Result<Stream, Error> {
    let done = Arc::new(AtomicU64::new(0));
    let (mut r, mut comp) = input::open(one, done.clone())?;
    if comp == input::Compression::Gzip {
        // a gzipped recording: the zstd stream inside the gzip one
        let (head, err) = input::peek(&mut r, 4);
        let zstd = input::Compression::sniff(&head) == input::Compression::Zstd;
        r = Box::new(input::Peeked::new(head, err, r));
        if zstd {
            r = input::zstd_reader(r)?;
            comp = input::Compression::Zstd;
        }
    }
    let (head, err) = if comp == input::Compression::Zstd { input::peek(&mut r, 4) } else { (Vec::new(), None) };
    if let (Some(e), true) = (&err, head.len() < 4) {
        // a zstd stream cut or damaged before its first bytes: nothing says what it held, and
        // read as text it would be "empty"; by name it says this (a cut recording on stdin)
        return Err(Error::ReadRecording {
            path: PathBuf::from(one.name()),
            source: std::io::Error::new(
                e.kind(),
                format!("the compressed stream is damaged or cut short after {} decompressed bytes ({e})", head.len()),
            ),
        });
    }
    let magic = slr::has_magic(&head);
    let r: Box<dyn Read + Send> = Box::new(input::Peeked::new(head, err, r));
    Ok(if magic {
        Stream::Recording(Box::new(RecordingSource::from_stream(&one.name(), r)?))
    } else {
        Stream::Text(r, done)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use syslint_event::Event;

    #[derive(Default)]
    struct Count(u64, bool);

    impl Sink for Count {
        fn on_event(&mut self, _: &Event<'_>) {
            self.0 += 1;
        }
        fn on_stop(&mut self, w: &mut Vec<String>) {
            self.1 = true;
            w.push("count stopped".into());
        }
    }

    #[test]
    fn a_log_pushes_every_event_into_composed_sinks_and_ends() {
        let p = std::env::temp_dir().join(format!("syslint-pipeline-test-{}.strace", std::process::id()));
        let text = "1 10:00:00.000000 openat(AT_FDCWD, \"/etc/hosts\", O_RDONLY) = 3 <0.000010>\n\
                    1 10:00:00.000100 close(3) = 0 <0.000002>\n";
        std::fs::write(&p, text).expect("temp file");
        let source = open_inputs(std::slice::from_ref(&p), false);
        let mut sinks = (Count::default(), Some(Count::default()));
        let outcome = source.and_then(|s| s.run(&mut sinks, &StopWhen::default()));
        let _ = std::fs::remove_file(&p);
        let outcome = outcome.expect("runs");
        assert_eq!(outcome.stop, StopReason::Ended);
        assert!(!outcome.attached && outcome.exit_status.is_none());
        assert_eq!(outcome.capture.backend, Some(syslint_report::Backend::StraceLog));
        assert_eq!(outcome.capture.capture.syscalls, 2);
        let (a, b) = sinks;
        assert_eq!((a.0, a.1), (2, true));
        assert!(b.is_some_and(|b| b.0 == 2 && b.1));
        assert_eq!(outcome.capture.capture.warnings, ["count stopped", "count stopped"]);
    }

    #[test]
    fn a_missing_input_is_an_error_before_anything_runs() {
        let e = open_inputs(&[PathBuf::from("/nonexistent/syslint.strace")], false).err();
        assert!(matches!(e, Some(Error::Input(_))), "{e:?}");
    }
}
