//! Starting a live trace: which backend, the fallback from eBPF to strace, and what the report
//! says about processes the trace cannot see. The policy lives here so that every front end
//! (the CLI today, an agent later) traces the same way.

#[cfg(feature = "ebpf")]
use crate::EbpfSource;
use crate::StraceSource;
use crate::{Error, Outcome, Sink, Source, StopWhen};
use std::path::PathBuf;
use std::time::Duration;
#[cfg(feature = "ebpf")]
use syslint_capture::ebpf;
use syslint_capture::live::Target;

/// Which backend traces.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// eBPF where it can start, else strace (saying why: [`start`]).
    Auto,
    Strace,
    Ebpf,
}

/// How to trace.
#[derive(Clone, Debug)]
pub struct Options {
    pub backend: Choice,
    /// Count in the kernel only (eBPF): no events, the kernel's counters are the table.
    pub summary_only: bool,
    /// Also record the capture (`.slr` with eBPF, else strace text).
    pub record: Option<PathBuf>,
    /// Payload bytes kept per call.
    pub payload_bytes: u16,
    /// `--summary-only`: print the kernel's counts this often.
    pub interval: Option<Duration>,
    /// The calls whose stacks to capture (`--stacks`): sampled in the kernel with eBPF, strace
    /// `-k` with strace.
    pub stacks: syslint_capture::live::StackCalls,
    /// `stacks` holds for strace too (asked for); false: eBPF samples them, strace records none
    /// (`-k` costs an unwind at every stop, and `-e` would limit what strace traces).
    pub stacks_with_strace: bool,
    /// eBPF: the bound of the records waiting for the analysis, in bytes (None: an eighth of
    /// the memory available; the agent gives what its memory budget leaves).
    pub queue_bytes: Option<usize>,
    /// eBPF: after `--for`, let the socket reads and polls already begun end, up to this long
    /// (the agent's windows; see [`EbpfSource::settle`]).
    pub settle: Option<Duration>,
    /// eBPF: end the capture once the kernel has sent this many records (the agent's windows;
    /// see [`EbpfSource::max_records`]).
    pub max_records: Option<u64>,
}

/// Start tracing `target`: eBPF where it works (or was asked for), else strace; when eBPF
/// cannot start and strace traces instead, `say` gets one line for the user saying why (before
/// strace starts, so it is said even when strace cannot trace either). The report names the
/// children of attached processes that were running before the attach (which the trace does
/// not follow).
pub fn start(target: &Target, o: &Options, say: &mut dyn FnMut(&str)) -> Result<Box<dyn Source>, Error> {
    if o.summary_only && o.backend == Choice::Strace {
        return Err(Error::SummaryNeedsEbpf);
    }
    let untraced = match target {
        Target::Pids(pids) => untraced_children(pids),
        Target::Command(_) => Vec::new(),
    };
    let note = untraced_note(&untraced);
    let record = o.record.as_deref();
    #[cfg(not(feature = "ebpf"))]
    if o.backend == Choice::Ebpf || o.summary_only {
        return Err(Error::NoEbpf);
    } else if o.backend == Choice::Auto {
        say("syslint: this build has no eBPF backend (built without the `ebpf` feature); tracing with strace (slower)");
    }
    #[cfg(feature = "ebpf")]
    if o.backend == Choice::Ebpf || o.backend == Choice::Auto {
        let stacks = ebpf_stacks(&o.stacks).filter(|_| !o.summary_only);
        match EbpfSource::start(target, o.summary_only, record, o.payload_bytes, stacks) {
            Ok(mut s) => {
                if o.summary_only {
                    s.interval = o.interval;
                }
                s.queue_bytes = o.queue_bytes;
                s.settle = o.settle;
                s.max_records = o.max_records;
                return Ok(Box::new(Noted { inner: s, note }));
            }
            Err(Error::Bpf(e)) if o.backend == Choice::Auto && !o.summary_only && ebpf::can_fall_back(&e) => {
                say(&fallback_line(&e));
            }
            Err(e) => return Err(e),
        }
    }
    let off = syslint_capture::live::StackCalls::Off;
    let s = StraceSource::start(target, record, o.payload_bytes, if o.stacks_with_strace { &o.stacks } else { &off })?;
    Ok(Box::new(Noted { inner: s, note }))
}

/// `--stacks` for the eBPF backend: the kernel samples stacks (the first calls of each thread
/// and syscall every second, then one in a thousand, the stride doubling after 64 such samples
/// in a second), of the syscalls the detectors watch
/// (`sampled`) or of all (`all`: every call gets one, which costs microseconds a call and loses
/// what the stack ring cannot hold, counted).
#[cfg(feature = "ebpf")]
fn ebpf_stacks(calls: &syslint_capture::live::StackCalls) -> Option<syslint_capture::ebpf::StackOptions> {
    use syslint_capture::live::StackCalls;
    let default = syslint_capture::ebpf::StackOptions::default();
    match calls {
        StackCalls::Off => None,
        StackCalls::All => Some(syslint_capture::ebpf::StackOptions {
            first: u32::MAX,
            every: 1,
            spacing: std::time::Duration::ZERO,
            ..default
        }),
        StackCalls::Only(names) => {
            let nrs = (0..1024u32)
                .filter(|&nr| syslint_event::syscalls::x86_64_name(nr).is_some_and(|n| names.iter().any(|w| w == n)))
                .collect();
            Some(syslint_capture::ebpf::StackOptions { syscalls: Some(nrs), ..default })
        }
    }
}

/// A source whose capture carries one more note.
struct Noted<S> {
    inner: S,
    note: Option<String>,
}

impl<S: Source> Source for Noted<S> {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn run(self: Box<Self>, sink: &mut (dyn Sink + Send), stop: &StopWhen) -> Result<Outcome, Error> {
        let Noted { inner, note } = *self;
        let mut outcome = Box::new(inner).run(sink, stop)?;
        outcome.capture.capture.notes.extend(note);
        Ok(outcome)
    }
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

/// Why eBPF could not start, and what to do about it, in one line.
#[cfg(feature = "ebpf")]
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

/// Run by scripts/test.sh's analyze-only step (`cargo test --no-default-features`).
#[cfg(all(test, not(feature = "ebpf")))]
mod tests {
    use super::*;

    /// Without the eBPF backend, asking for it (or for kernel counting) is an error that says
    /// so; `auto` traces with strace and says why.
    #[test]
    fn a_build_without_ebpf_says_so() {
        let target = Target::Command(vec!["true".into()]);
        let o = |backend, summary_only| Options {
            backend,
            summary_only,
            record: None,
            payload_bytes: 64,
            interval: None,
            stacks: Default::default(),
            stacks_with_strace: false,
            queue_bytes: None,
            settle: None,
            max_records: None,
        };
        let mut said = Vec::new();
        for (backend, summary) in [(Choice::Ebpf, false), (Choice::Auto, true)] {
            let e = start(&target, &o(backend, summary), &mut |l| said.push(l.to_string())).err();
            assert!(matches!(e, Some(Error::NoEbpf)), "{backend:?}: {e:?}");
        }
        assert!(said.is_empty(), "{said:?}");
        // strace runs `true` to its end (a machine without strace fails to start it: said too)
        let s = start(&target, &o(Choice::Auto, false), &mut |l| said.push(l.to_string()));
        if let Ok(s) = s {
            let mut analysis = crate::Analysis::new(Vec::new());
            let out = s.run(&mut analysis, &StopWhen::default()).expect("strace traces true");
            assert_eq!(out.capture.backend, Some(syslint_report::Backend::Strace), "{:?}", out.capture.backend);
        }
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("no eBPF backend") && said[0].contains("strace"), "{said:?}");
    }
}
