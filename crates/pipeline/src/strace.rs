//! Live strace: strace as a child process, its trace streamed into the parallel reader.

use crate::{captured, is_slr_name, Captured, Error, Outcome, Phases, Sink, Source, StopReason, StopWhen};
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;
use syslint_capture::live::{LiveError, StraceSession, Target, Tee};
use syslint_capture::procfs::{threads_of, Tasks};
use syslint_capture::{parallel, CaptureInfo};
use syslint_event::{Event, EventKind, Tgid, Tid};
use syslint_report::Backend;

/// A running strace on a command or processes; `-o FILE` keeps its text (compressed by the
/// file's ending).
pub struct StraceSource {
    session: StraceSession,
    stream: Tee<File>,
    attached: bool,
    /// The processes attached to (their threads are read from /proc once strace attached).
    pids: Vec<u32>,
}

impl StraceSource {
    /// Start strace keeping `payload_bytes` of each buffer; `record` keeps a copy of its output.
    /// `stacks`: the calls strace prints the stack of (`-k`).
    pub fn start(
        target: &Target,
        record: Option<&Path>,
        payload_bytes: u16,
        stacks: &syslint_capture::live::StackCalls,
    ) -> Result<StraceSource, Error> {
        if record.is_some_and(is_slr_name) {
            return Err(Error::SlrNeedsEbpf);
        }
        let mut session = StraceSession::start(target, payload_bytes, stacks)?;
        let attached = matches!(target, Target::Pids(_));
        let pids = match target {
            Target::Pids(p) => p.clone(),
            Target::Command(_) => Vec::new(),
        };
        let fifo = session.output().map_err(Error::StraceStream)?;
        let stream = Tee::new(fifo, record)?;
        Ok(StraceSource { session, stream, attached, pids })
    }
}

impl Source for StraceSource {
    fn name(&self) -> String {
        self.session.what.clone()
    }

    fn run(self: Box<Self>, sink: &mut (dyn Sink + Send), stop: &StopWhen) -> Result<Outcome, Error> {
        let StraceSource { mut session, mut stream, attached, pids } = *self;
        // who the attached threads are: strace shows no clone or execve of them
        let mut tasks = Tasks::default();
        for &p in &pids {
            threads_of(p, &mut tasks);
        }
        let mut tids: Vec<_> = tasks.into_iter().collect();
        tids.sort_unstable_by_key(|(tid, t)| (t.tgid, *tid));
        for (tid, t) in &tids {
            // the recording keeps them too: strace's text cannot say who attached threads are
            stream.record(&syslint_capture::procfs::recording_line(*tid, t));
            let kind = EventKind::TaskKnown { tgid: Tgid(t.tgid), parent: t.parent.map(Tgid), comm: &t.comm };
            sink.on_event(&Event { tid: Tid(*tid), ts_ns: None, kind });
        }
        let deadline = stop.deadline();
        let what = session.what.clone();
        let done = AtomicBool::new(false);
        let stopped = OnceLock::new();
        // a tracer without CAP_SYS_PTRACE makes set-user-ID programs run without their privileges
        let watch_setid = !syslint_capture::live::has_ptrace_cap();
        let mut setid = SetIdExecs::default();

        let (mut info, failed) = std::thread::scope(|scope| {
            // control: --for, Ctrl-C, SIGTERM detach strace; the stream then ends
            let (session, done, stopped) = (&session, &done, &stopped);
            scope.spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(20));
                    if stopped.get().is_some() {
                        continue;
                    }
                    if let Some(why) = stop.check(deadline, attached) {
                        let _ = stopped.set(why);
                        session.detach();
                    }
                }
            });
            let workers = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
            let o = parallel::read_parallel(&mut stream, &what, workers, parallel::CHUNK, 4 << 20, &mut |ev| {
                if watch_setid {
                    setid.see(ev);
                }
                sink.on_event(ev);
            });
            done.store(true, Ordering::Relaxed);
            let mut info = CaptureInfo { sources: vec![format!("strace: {what}")], ..Default::default() };
            info.bytes = o.bytes;
            info.cut_lines = o.cut_lines;
            let failed = o.error.map(|e| {
                let why = format!("trace stream ended early: {e}");
                info.warnings.push(why.clone());
                why
            });
            info.stats = o.stats;
            (info, failed)
        });
        sink.on_stop(&mut info.warnings);
        let st = session.wait()?;
        let msgs = session.messages();
        if let Err(e) = stream.finish() {
            info.warnings.push(format!("the recording is incomplete: {e}"));
        }
        if let Some(e) = stream.error.take() {
            info.warnings.push(format!("the recording stopped early: {e}"));
        }
        let stop = match (stopped.into_inner(), failed) {
            (Some(why), _) => why,
            (None, Some(e)) => StopReason::Failed(e),
            (None, None) => StopReason::Ended,
        };
        // strace could attach to none of the processes (another user's, gone): nothing was
        // traced, which is an error, not an empty report
        let refused: Vec<&str> = msgs.lines().filter(|l| l.contains("attach: ptrace(")).map(str::trim).collect();
        if attached && !pids.is_empty() && refused.len() >= pids.len() {
            let all = refused.join("; ");
            return Err(Error::Live(if all.contains("Operation not permitted") {
                LiveError::NotPermitted(format!("{all} (run as root, or trace a process of your own user)"))
            } else {
                LiveError::StraceFailed { status: st.to_string(), detail: format!(": {all}") }
            }));
        }
        stop.notes(attached, &mut info.notes);
        info.notes.extend(setid.note());
        info.notes.extend(crate::gone_note(&session.gone));
        info.notes.extend(session.stacks_note.take());
        for l in msgs.lines().filter(|l| l.contains("strace:") && !l.contains("attached") && !l.contains("detached")) {
            info.warnings.push(l.trim().to_string());
        }
        let stopped_ns = stop.requested().then(syslint_capture::live::time_of_day_now_ns);
        Ok(Outcome {
            stop,
            attached,
            exit_status: Some(st),
            capture: Captured { stopped_ns, ..captured(Backend::Strace, info) },
            not_strace: Vec::new(),
            phases: Phases::default(),
        })
    }
}

/// Set-user-ID and set-group-ID programs the traced processes ran. Under ptrace by a tracer
/// without privileges the kernel runs them without theirs: what the report shows of them may
/// not be what they do untraced, and the report says so.
#[derive(Default)]
struct SetIdExecs {
    /// The first set-ID programs, for the note.
    paths: Vec<String>,
    /// Set-ID programs beyond those.
    more: usize,
    /// Every program already looked at (a shell running `/bin/true` 10,000 times is looked at
    /// once), up to [`SetIdExecs::REMEMBERED`].
    seen: std::collections::HashSet<String>,
}

impl SetIdExecs {
    /// Programs remembered as looked at (a trace that runs more distinct programs looks at
    /// the rest each time they run: a `stat` each, still correct).
    const REMEMBERED: usize = 4096;

    fn see(&mut self, ev: &Event) {
        use std::os::unix::fs::PermissionsExt;
        let EventKind::Syscall(sc) = &ev.kind else { return };
        if !matches!(sc.sys, syslint_event::Sys::Execve | syslint_event::Sys::Execveat) || sc.ret.is_err() {
            return;
        }
        let Some(path) = sc.path().filter(|p| p.starts_with('/')) else { return };
        if self.seen.contains(&*path) {
            return;
        }
        if self.seen.len() < Self::REMEMBERED {
            self.seen.insert(path.to_string());
        } else if self.paths.iter().any(|p| *p == *path) {
            // past the memory: at least never count one program twice in the note
            return;
        }
        let setid = std::fs::metadata(&*path).is_ok_and(|m| m.permissions().mode() & 0o6000 != 0);
        if setid {
            if self.paths.len() < 5 {
                self.paths.push(path.to_string());
            } else {
                self.more += 1;
            }
        }
    }

    fn note(&self) -> Option<String> {
        let first = self.paths.first()?;
        let more = match self.paths.len() - 1 + self.more {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        Some(format!(
            "{first}{more} is set-user-ID or set-group-ID: traced by strace without root it ran without those \
             privileges (the kernel drops them under ptrace), so it may have failed or behaved otherwise than \
             untraced; the eBPF backend traces it as it runs"
        ))
    }
}
