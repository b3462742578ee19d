//! `small-io` (SL006): a transfer done in many small reads or writes on one fd, or many tiny
//! writes (unbuffered logging).
//!
//! Per process, fd and direction it follows runs of consecutive small calls: reads or writes
//! that asked for at most `max_request_bytes` (the count argument, not what came back: a
//! socket read that returns less than it asked because that is all that had arrived is not the
//! program's fault, and is not counted at all). A run ends at a call in the other direction on
//! the same fd (writev and sendfile included), a seek, a
//! non-sequential pread/pwrite, a large call, EOF or close. In each run, the calls a 64 KiB
//! buffer would not need are calls that could be saved; they are summed per process and file
//! (or endpoint) and direction.

use super::{Evidence, Span};
use crate::host::{Groups, Hosted, State};
use crate::kit::Metrics;
use crate::kit::{Rekey, Typical};
use crate::registry::{Ctx, FinishCtx};
use rustc_hash::FxHashMap as HashMap;
use syslint_event::{Class, Event, MsgFlags, Tgid, Ret, Sys, Syscall, TargetKind};
use syslint_report::printers::fmt_count;
use syslint_report::{Finding, Severity, Subject, SubjectKind};

crate::detector!("small_io", SmallIo { cfg, aggs: HashMap::default() });

/// A small call (16 KiB or less) that took this long (131 µs) waited for something: a reader
/// draining a pipe, a peer, a disk. By itself such a call takes a few microseconds (4 KiB
/// reads under strace -T: 11 µs median in lab/small-io's c-4k).
const WAIT_NS: u64 = 1 << 17;
/// A run's evidence starts at this call.
const EVIDENCE_FROM: u64 = 16;

const KIB64: u64 = 64 * 1024;
const MIB: u64 = 1024 * 1024;

/// A run's object number in its process: the fd, and the direction in the low bit.
fn run_id(fd: i32, write: bool) -> u64 {
    (u64::from(fd as u32) << 1) | u64::from(write)
}

/// What the fd referred to: the model's target id, or the fd number when unknown.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
enum Tgt {
    Id(u32),
    Fd(i32),
}

/// (process, target, write?)
type AggKey = (Tgid, Tgt, bool);

/// A run of small calls on one fd in one direction (an object of its process).
#[derive(Clone, Default)]
pub struct Run {
    tgt: Option<Tgt>,
    calls: u64,
    bytes: u64,
    asked: u64,
    dur_ns: u64,
    timed: u64,
    typical: Typical,
    /// Where a sequential pread/pwrite would continue.
    next_off: Option<u64>,
    span: Span,
    evidence: Vec<Evidence>,
}

#[derive(Clone, Default)]
struct Agg {
    calls: u64,
    bytes: u64,
    asked: u64,
    saved_64k: u64,
    saved_1m: u64,
    dur_ns: u64,
    timed: u64,
    typical: Typical,
    runs: u64,
    longest_run: u64,
    span: Span,
    evidence: Vec<Evidence>,
    subject: String,
    /// Processes of one program whose calls on the same file are merged here (prefork
    /// children writing the log they inherited), besides the key's own.
    more_procs: u64,
}

impl Agg {
    /// Another process's calls on the same file.
    fn absorb(&mut self, o: Agg) {
        self.calls += o.calls;
        self.bytes += o.bytes;
        self.asked += o.asked;
        self.saved_64k += o.saved_64k;
        self.saved_1m += o.saved_1m;
        self.dur_ns += o.dur_ns;
        self.timed += o.timed;
        self.typical.merge(&o.typical);
        self.runs += o.runs;
        self.longest_run = self.longest_run.max(o.longest_run);
        self.span.merge(&o.span);
        self.more_procs += 1 + o.more_procs;
    }
}

/// The runs are the host's objects (fd and direction) of each process; the totals are kept
/// per process and target here, since a finding is about one file (the processes of one program
/// on the same file are merged at the end, by name).
#[derive(Clone)]
pub struct SmallIo {
    cfg: Config,
    aggs: HashMap<AggKey, Agg>,
}

impl SmallIo {
    /// End the run of object `id` of the thread's process (it stays, empty, for the next run).
    fn flush(&mut self, s: &mut State<'_, Self>, id: u64) {
        let tgid = s.tgid();
        if let Some(r) = s.existing_object(id) {
            self.flush_run(tgid, id & 1 == 1, r);
        }
    }

    /// End run `r` (of process `tgid`, writes or reads), leaving it empty.
    fn flush_run(&mut self, tgid: Tgid, write: bool, r: &mut Run) {
        if r.calls > 0 {
            self.keep(tgid, write, std::mem::take(r));
        }
    }

    /// A run ended: its calls join the totals of its process, target and direction.
    fn keep(&mut self, tgid: Tgid, write: bool, run: Run) {
        if run.calls == 0 || run.calls < self.cfg.min_run_calls {
            return;
        }
        let needed_64k = run.bytes.div_ceil(KIB64).max(1);
        let needed_1m = run.bytes.div_ceil(MIB).max(1);
        if run.calls <= needed_64k {
            return;
        }
        let Some(tgt) = run.tgt else {
            return;
        };
        let akey = (tgid, tgt, write);
        if !self.aggs.contains_key(&akey) && self.aggs.len() >= MAX_AGGS {
            return;
        }
        let a = self.aggs.entry(akey).or_default();
        a.calls += run.calls;
        a.bytes += run.bytes;
        a.asked += run.asked;
        a.saved_64k += run.calls - needed_64k;
        a.saved_1m += run.calls.saturating_sub(needed_1m);
        a.dur_ns += run.dur_ns;
        a.timed += run.timed;
        a.typical.merge(&run.typical);
        a.runs += 1;
        a.span.add(run.span.first);
        a.span.add(run.span.last);
        if run.calls > a.longest_run {
            a.longest_run = run.calls;
            a.evidence = run.evidence;
        }
    }

    fn syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        let class = sc.sys.class();
        if !class.has(Class::FD) {
            return;
        }
        let (write, offset_arg) = match sc.sys {
            Sys::Read | Sys::Recv | Sys::Recvfrom => (false, false),
            Sys::Write | Sys::Send | Sys::Sendto => (true, false),
            Sys::Pread64 | Sys::Pread => (false, true),
            Sys::Pwrite64 | Sys::Pwrite => (true, true),
            Sys::Lseek | Sys::Llseek | Sys::Close => {
                let fd = if sc.sys == Sys::Close { cx.closed_fd(sc) } else { sc.fd_num() };
                if let Some(fd) = fd {
                    s.end_object(run_id(fd, false), self);
                    s.end_object(run_id(fd, true), self);
                }
                return;
            }
            _ => {
                // writev, sendmsg, sendfile, readv, recvmsg...: the other direction used on this
                // fd ends the run (a server that answers with writev or sendfile is having a
                // conversation, not streaming)
                if class.has(Class::READ) || class.has(Class::WRITE) {
                    if let Some(fd) = sc.fd_num() {
                        self.flush(s, run_id(fd, !class.has(Class::WRITE)));
                    }
                }
                return;
            }
        };
        let Some(fd) = sc.fd_num() else {
            return;
        };
        // datagram, netlink and unix sockets: every write is a message
        let kind = cx.target.map_or(TargetKind::Unknown, |t| t.kind);
        if !(kind.is_tcp()
            || matches!(kind, TargetKind::File | TargetKind::Pipe | TargetKind::Unknown | TargetKind::Memfd))
        {
            return;
        }
        let got = match &sc.ret {
            Ret::Ok { val, .. } => *val,
            // EAGAIN and friends move nothing and end nothing
            _ => return,
        };
        if matches!(sc.sys, Sys::Recv | Sys::Recvfrom | Sys::Sendto | Sys::Send)
            && (sc.msg_flags().is_some_and(|f| f.contains(MsgFlags::PEEK))
                || (sc.sys == Sys::Sendto && sc.sockaddr().is_some()))
        {
            return;
        }
        let asked = sc.requested_bytes();
        let tgid = cx.tgid;
        let key = run_id(fd, write);
        // the other direction on the same fd ends this direction's run
        self.flush(s, run_id(fd, !write));
        let size = asked.unwrap_or(got.max(0) as u64);
        // a read from a stream socket or a pipe that got less than it asked for got all that
        // was there (a whole request, a reply): its buffer was not what made it small. It is
        // not counted, and ends nothing: the next read may fill its buffer again
        let stream = kind.is_tcp()
            || kind == TargetKind::Pipe
            || (kind == TargetKind::Unknown && matches!(sc.sys, Sys::Recv | Sys::Recvfrom));
        if !write && stream && got > 0 && (got as u64) < size {
            return;
        }
        if got <= 0 || size > self.cfg.max_request_bytes {
            // EOF or a large call: the run ends here
            self.flush(s, key);
            return;
        }
        let off = if offset_arg { sc.offset() } else { None };
        let tgt = cx.target.map(|t| Tgt::Id(t.id)).unwrap_or(Tgt::Fd(fd));
        let Some(r) = s.object_or(key, Run::default) else { return };
        // a pread/pwrite elsewhere than where the last one stopped, or another file behind the
        // fd, starts a new run
        if offset_arg && r.calls > 0 && (off.is_none() || r.next_off != off) {
            self.flush_run(tgid, write, r);
        }
        if r.tgt != Some(tgt) {
            self.flush_run(tgid, write, r);
            r.tgt = Some(tgt);
        }
        r.calls += 1;
        r.bytes += got as u64;
        r.asked += size;
        if let Some(d) = sc.dur_ns {
            r.dur_ns += d;
            r.timed += 1;
            r.typical.add(d);
        }
        r.next_off = off.map(|o| o + got as u64);
        r.span.add(ev.ts_ns);
        // evidence once a run is long enough to matter: short runs (most files are read in a
        // few calls) cost no allocation
        if r.calls >= EVIDENCE_FROM && r.evidence.len() < EVIDENCE {
            r.evidence.push(Evidence::of(ev));
        }
    }

    fn finding(&self, cx: &FinishCtx, key: &AggKey, a: &Agg) -> Finding {
        let write = key.2;
        let mib = a.bytes as f64 / MIB as f64;
        let avg = a.bytes as f64 / a.calls as f64;
        let avg_req = a.asked as f64 / a.calls as f64;
        let per_mib = if a.bytes > 0 { a.calls as f64 / mib } else { 0.0 };
        let verb = if write { "wrote" } else { "read" };
        let prep = if write { "to" } else { "from" };
        let label = match (a.more_procs, cx.model.comm(key.0.main_thread())) {
            (0, _) | (_, None) => cx.model.label(key.0.main_thread()),
            (n, Some(comm)) => format!("{} processes of {comm}", n + 1),
        };
        let message = format!(
            "{label} {verb} {} {prep} {} in {} calls of {} on average ({:.0} per MiB)",
            size(a.bytes as f64),
            a.subject,
            fmt_count(a.calls),
            size(avg),
            per_mib
        );
        let mut metrics = Metrics::new();
        metrics.count("calls", a.calls);
        metrics.count("bytes", a.bytes);
        metrics.value("avg_bytes", avg);
        metrics.value("avg_request_bytes", avg_req);
        metrics.value("calls_per_mib", per_mib);
        metrics.count("saved_calls_64k", a.saved_64k);
        metrics.count("saved_calls_1m", a.saved_1m);
        metrics.count("runs", a.runs);
        // durations of only some calls (-tt without -T gives them to unfinished/resumed pairs
        // alone) would understate the time: report it when every call had one
        let time = if a.timed == a.calls {
            let t = a.dur_ns as f64 / 1e9;
            metrics.value("time_in_calls_s", t);
            // the saved calls would have cost about a typical call each: the median of the
            // calls that did not wait, not the mean; the time of calls that waited for the other
            // end (tar writing into a pipe that xz drains: 22 s in 4,769 writes, all of 2 ms or
            // more) is that end's pace, which bigger buffers do not change
            let waited = a.typical.waited(WAIT_NS);
            let mean = t / a.timed as f64;
            let waiting = if waited > 0 {
                format!(" ({} of the calls took 131 µs or more: waiting, not saved)", fmt_count(waited))
            } else {
                String::new()
            };
            metrics.count("waited_calls", waited);
            let saved_t = a.typical.median_ns(WAIT_NS).map(|m| (m / 1e9).min(mean) * a.saved_64k as f64);
            metrics.value("saved_time_s", saved_t.unwrap_or(0.0));
            match saved_t {
                Some(saved_t) => {
                    format!(
                        "; {} inside these calls, about {} of it in calls that could be saved{waiting}",
                        crate::kit::secs(t),
                        crate::kit::secs(saved_t)
                    )
                }
                None => format!(
                    "; {} inside these calls, all of them 131 µs or more: waiting for the other end, which \
bigger buffers do not save",
                    crate::kit::secs(t)
                ),
            }
        } else {
            "; time inside them unknown (recorded without -T)".to_string()
        };
        // output to a terminal is line-buffered by design and paced by a reader: at most info
        let tty = a.subject.starts_with("/dev/pts/") || a.subject.starts_with("/dev/tty");
        let severity = if tty {
            Severity::Info
        } else if a.saved_64k >= self.cfg.error_saved_calls {
            Severity::Error
        } else {
            Severity::warning_if(a.saved_64k >= self.cfg.warn_saved_calls)
        };
        let cost = format!(
            "{} calls where {} would do with 64 KiB buffers ({} with 1 MiB){time}",
            fmt_count(a.calls),
            fmt_count(a.calls - a.saved_64k),
            fmt_count(a.calls - a.saved_1m)
        );
        let about = Subject::new(SubjectKind::File).program(cx.model.comm(key.0.main_thread())).name(a.subject.as_str());
        META.finding(severity, message)
            .about(a.subject.clone(), about)
            .over(&a.span)
            .metrics(metrics)
            .evidence(&a.evidence, cx.clock)
            .cost(cost)
            .fix(META.docs.fix)
            .build()
    }
}

impl Hosted for SmallIo {
    type Thread = ();
    type Program = ();
    type Object = Run;
    const MAX_OBJECTS: usize = MAX_RUNS;

    fn on_syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        self.syscall(s, cx, ev, sc);
    }

    /// The fd was closed or sought, its process ended, or the trace did: the run ends.
    fn end_object(&mut self, s: &mut State<'_, Self>, id: u64, r: Run) {
        self.keep(s.tgid(), id & 1 == 1, r);
    }

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        // per fd and direction: calls that moved little, and all calls
        /// small calls, calls, bytes, the small calls' indexes
        type Tally = (u64, u64, u64, Vec<usize>);
        let mut by: std::collections::BTreeMap<(u32, i32, bool), Tally> = Default::default();
        for (i, c) in x.calls.iter().enumerate() {
            let read = c.sys.is(syslint_event::Class::READ);
            let write = c.sys.is(syslint_event::Class::WRITE);
            let (Some(fd), Some(ret)) = (c.fd, c.ret) else { continue };
            if !(read || write) || ret <= 0 {
                continue;
            }
            let e = by.entry((c.tid.0, fd, write)).or_default();
            e.1 += 1;
            e.2 += ret as u64;
            // a read asking for a few bytes and getting them; a write of a short line
            let small = if write { ret <= 512 } else { ret <= 16 && c.requested.is_some_and(|r| r <= 16) };
            if small {
                e.0 += 1;
                e.3.push(i);
            }
        }
        let n = x.calls.len() as u64;
        // the waits a reader makes before each read (rsync's pselect6 per byte) are part of its
        // loop, not other work
        let busy = x.calls.iter().filter(|c| !c.sys.is(syslint_event::Class::POLL)).count() as u64;
        // reads that ask for one byte and get it: a line read a byte at a time (an unbuffered
        // reader), short of the 8 small calls the rule needs: named, at low confidence; so are
        // writes of one byte each (a line written a byte at a time: fish#7979's `echo 123`)
        let bytewise: std::collections::BTreeSet<(u32, i32, bool)> = x
            .calls
            .iter()
            .filter(|c| {
                (c.sys.is(syslint_event::Class::READ) && c.ret == Some(1) && c.requested == Some(1))
                    || (c.sys.is(syslint_event::Class::WRITE) && c.ret == Some(1))
            })
            .filter_map(|c| Some((c.tid.0, c.fd?, c.sys.is(syslint_event::Class::WRITE))))
            .collect();
        let one_byte_each = |k: &(u32, i32, bool), v: &Tally| bytewise.contains(k) && v.2 == v.1;
        let few = |k: &(u32, i32, bool), v: &Tally| {
            one_byte_each(k, v) && (4..8).contains(&v.0) && v.0 == v.1 && v.0 * 2 >= busy
        };
        let Some(((_, fd, write), (small, all, bytes, idx))) = by
            .into_iter()
            .filter(|(k, v)| (v.0 >= 8 && v.0 * 10 >= v.1 * 9 && v.0 * 2 >= n) || few(k, v))
            .max_by_key(|(_, v)| v.0)
        else {
            return Vec::new();
        };
        let short = small < 8;
        let target = x.calls[idx[0]].target.clone();
        let file = target.as_deref().is_some_and(|t| t.starts_with('/') && !t.starts_with("/dev/") && !t.starts_with("/proc/") && !t.starts_with("/sys/"));
        let unknown = target.as_deref().is_none_or(|t| t.starts_with("fd ") || t.contains("opened before"));
        // writes to a terminal, pipe or socket are often meant to go out at once; a read of a
        // byte at a time is small wherever it reads from (sysfs excepted)
        let (sev, conf) = if !write {
            if target.as_deref().is_some_and(|t| t.starts_with("/sys/") || t.starts_with("/proc/")) {
                return Vec::new();
            }
            if short {
                (Severity::Info, Confidence::Low)
            } else {
                (Severity::Warning, Confidence::Medium)
            }
        } else if short {
            // 4 to 7 writes of a byte each: a hint, whatever they write to
            (Severity::Info, Confidence::Low)
        } else if file {
            (Severity::Warning, Confidence::Medium)
        } else if unknown {
            (Severity::Info, Confidence::Low)
        } else {
            return Vec::new();
        };
        let what = target.clone().unwrap_or_else(|| format!("fd {fd}"));
        let dir = if write { "writes" } else { "reads" };
        let about = syslint_report::Subject::new(syslint_report::SubjectKind::File).name(what.clone());
        let why = if short && write {
            format!("{small} writes of one byte each on one fd: a writer without a buffer; too few lines to say how long it goes on")
        } else if short {
            format!("{small} reads of one byte each on one fd, each asking for one: a reader without a buffer; too few lines to say how long it goes on")
        } else if unknown && write {
            format!("{small} small {dir} on one fd; the excerpt does not say what the fd is (-yy would), and a terminal or socket may want each at once")
        } else {
            format!("{small} small {dir} on one fd")
        };
        META.finding(
            sev,
            format!("small {dir}: {small} of {all} {dir} on {what} moved {bytes} bytes in all ({} bytes each on average)", bytes / all.max(1)),
        )
        .about(what, about)
        .metrics([("calls", all.into()), ("small_calls", small.into()), ("bytes", bytes.into())])
        .lines(x.evidence(&idx, 4))
        .in_excerpt(x, conf, &why)
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{per_second, RowSys, SysRows};
        use syslint_report::Confidence;
        const IO: &[Sys] = &[
            Sys::Read, Sys::Write, Sys::Readv, Sys::Writev, Sys::Pread64, Sys::Pwrite64, Sys::Recvfrom, Sys::Sendto,
            Sys::Send, Sys::Recv,
        ];
        let total = c.total_calls();
        let Some(r) = c.rows_of(IO).max_by_key(|r| r.calls) else {
            return Vec::new();
        };
        if r.calls < 10_000 || r.calls * 2 < total {
            return Vec::new();
        }
        let rate = per_second(c, r.calls, 0);
        META.finding(
            Severity::Info,
            format!("{} dominates: {} of {total} calls{rate}; if each moves a few bytes, this is small I/O", r.name, r.calls),
        )
        .metrics([("calls", r.calls.into()), ("all_calls", total.into())])
        .lines(crate::basis::count_lines(c, &[r.sys()]))
        .in_table(
            c,
            Confidence::Low,
            "many calls of one I/O syscall; the table has no byte counts, so their sizes are unknown",
        )
    }

    fn keyed(&mut self) -> Vec<&mut dyn Rekey> {
        vec![&mut self.aggs]
    }

    fn report(&mut self, _: Groups<'_, ()>, cx: &FinishCtx) -> Vec<Finding> {
        let mut all: Vec<(AggKey, Agg)> = self.aggs.drain().filter(|(_, a)| a.calls > 0).collect();
        // in a fixed order: the lowest pid of a program keeps the merged finding
        all.sort_by_key(|(k, _)| (k.0, k.2, match k.1 {
            Tgt::Id(id) => (0, i64::from(id)),
            Tgt::Fd(fd) => (1, i64::from(fd)),
        }));
        // processes of one program on the same file (prefork children writing the access log
        // they inherited) are one finding, as threads of one process are
        let mut aggs: Vec<(AggKey, Agg)> = Vec::new();
        let mut same: HashMap<(String, String, bool), usize> = HashMap::default();
        for (k, mut a) in all {
            let (subject, named) = match k.1 {
                Tgt::Id(id) => {
                    let d = cx.model.target(id).map(|t| t.display.to_string()).unwrap_or_default();
                    let named = !d.is_empty();
                    (d, named)
                }
                Tgt::Fd(fd) => (format!("fd {fd}"), false),
            };
            a.subject = if subject.is_empty() { "(unknown fd)".into() } else { subject };
            let group = cx.model.comm(k.0.main_thread()).filter(|_| named).map(|c| (c.to_string(), a.subject.clone(), k.2));
            match group.as_ref().and_then(|g| same.get(g)) {
                Some(&i) => aggs[i].1.absorb(a),
                None => {
                    if let Some(g) = group {
                        same.insert(g, aggs.len());
                    }
                    aggs.push((k, a));
                }
            }
        }
        aggs.retain(|(_, a)| a.saved_64k >= self.cfg.min_saved_calls);
        aggs.sort_by(|a, b| b.1.saved_64k.cmp(&a.1.saved_64k).then(a.0 .0.cmp(&b.0 .0)).then(a.0 .2.cmp(&b.0 .2)));
        aggs.iter().map(|(k, a)| self.finding(cx, k, a)).collect()
    }
}

fn size(b: f64) -> String {
    if b >= MIB as f64 {
        format!("{:.1} MiB", b / MIB as f64)
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b:.0} bytes")
    }
}

#[cfg(test)]
mod tests {
    // The fixture tests are data: fixtures/small-io/expect.toml, run by src/check/fixtures.rs.
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(size(104857600.0), "100.0 MiB");
        assert_eq!(size(4096.0), "4.0 KiB");
        assert_eq!(size(65.0), "65 bytes");
    }
}
