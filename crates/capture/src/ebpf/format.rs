//! From kernel records to [`Event`]s: every syscall record becomes the event strace would
//! have produced for it, its arguments handed over as the kernel's values
//! ([`syslint_event::Args::Raw`]): the analysis asks them the same typed questions it asks
//! strace text, and nothing is printed unless text is wanted (evidence lines, `export`, a
//! live capture's text copy). Fds known from before an attach ride along with the arguments
//! ([`RawArgs::fds_before`]), so that any rendering decorates them as `-yy` would, while the
//! analysis reads the same kernel values with or without a text copy.
//!
//! Repeat records (in-kernel coalescing) are expanded: the last `period` calls of the thread
//! are replayed `count` times, repetitions spread evenly over the run, each call with the mean
//! duration of its position in the repetition (the kernel sums them per position: in an
//! alternation of a quick call and a long wait each keeps its own), so counts, rates and
//! per-syscall times are right and detectors need not know about coalescing.
//!
//! x86_64 argument layouts.

use rustc_hash::FxHashMap as HashMap;
use std::fmt::Write as _;
use syslint_bpf::{Data, Record};
use syslint_event::raw::{DataKind, RawArgs, RawData};
use syslint_event::{errno, Args, Event, EventKind, Ret, Sys, Syscall, Tgid, Tid};

/// The most calls one Repeat record stands for: the kernel program reports a longer run in
/// pieces of at most this many (`opt_max_run`).
const MAX_REPEAT: u32 = 65_536;

/// Thread and process ids as the kernel's records carry them.
type Pid = u32;

pub use syslint_event::raw::signal_name;

/// Copied memory kept for a replay (its buffer reused from call to call).
#[derive(Clone, Default)]
struct SavedData {
    kind: DataKind,
    bytes: Vec<u8>,
    truncated: bool,
    fault: bool,
}

impl SavedData {
    fn set(&mut self, d: &RawData<'_>) {
        self.kind = d.kind;
        self.bytes.clear();
        self.bytes.extend_from_slice(d.bytes);
        self.truncated = d.truncated;
        self.fault = d.fault;
    }

    fn view(&self) -> RawData<'_> {
        RawData { kind: self.kind, bytes: &self.bytes, truncated: self.truncated, fault: self.fault }
    }
}

/// A call kept to replay it for Repeat records.
#[derive(Clone)]
struct Saved {
    sys: Sys,
    name: &'static str,
    nr: u32,
    regs: [u64; 6],
    ret: i64,
    thread: Option<bool>,
    data1: SavedData,
    data2: SavedData,
}

impl Default for Saved {
    fn default() -> Self {
        Saved {
            sys: Sys::Other,
            name: "",
            nr: 0,
            regs: [0; 6],
            ret: 0,
            thread: None,
            data1: SavedData::default(),
            data2: SavedData::default(),
        }
    }
}

impl Saved {
    fn set(&mut self, sys: Sys, name: &'static str, r: &RawArgs<'_>) {
        self.sys = sys;
        self.name = name;
        self.nr = r.nr;
        self.regs = r.regs;
        self.ret = r.ret;
        self.thread = r.thread;
        self.data1.set(&r.data1);
        self.data2.set(&r.data2);
    }

    fn raw(&self) -> RawArgs<'_> {
        RawArgs {
            nr: self.nr,
            regs: self.regs,
            ret: self.ret,
            data1: self.data1.view(),
            data2: self.data2.view(),
            thread: self.thread,
            fds_before: &[],
        }
    }
}

#[derive(Default)]
struct ThreadState {
    /// The last two calls, newest last (`len` of them valid; buffers kept for reuse).
    last: [Saved; 2],
    len: usize,
}

impl ThreadState {
    fn push(&mut self, sys: Sys, name: &'static str, r: &RawArgs<'_>) {
        if self.len == 2 {
            self.last.swap(0, 1);
        } else {
            self.len += 1;
        }
        self.last[self.len - 1].set(sys, name, r);
    }

    fn calls(&self) -> &[Saved] {
        &self.last[..self.len]
    }
}

/// What /proc said when the capture attached, which the trace itself cannot show.
#[derive(Clone, Debug, Default)]
pub struct Known {
    /// What the fds that existed before the capture began are, as `-yy` would print them
    /// (`/var/log/x`, `TCP:[...]`), by (process, fd). The analysis cannot see their
    /// open/connect: each thread gets them as [`EventKind::FdKnown`] events before its first call.
    pub fds: HashMap<(Pid, i64), String>,
    /// Who the threads are (process, parent, program), by thread id: each thread is announced
    /// as [`EventKind::TaskKnown`] before its first call.
    pub tasks: crate::procfs::Tasks,
}

#[derive(Default)]
pub struct Formatter {
    threads: HashMap<Pid, ThreadState>,
    /// child tid -> is a thread (from Fork records, for clone3 whose flags the kernel did not copy)
    forks: HashMap<Pid, bool>,
    /// thread -> process
    tgid_of: HashMap<Pid, Pid>,
    known: Known,
    /// The fds each process held before the capture began, as `-yy` decorations, sorted by fd
    /// (from `known.fds`, kept in step with closes, dups and forks).
    before: HashMap<Pid, Vec<(i32, Box<str>)>>,
    /// Threads that got their [`EventKind::FdKnown`] events.
    announced: rustc_hash::FxHashSet<Pid>,
    /// Syscalls produced (Repeat records expanded).
    pub syscalls: u64,
    pub events: u64,
    /// Repeat records claiming more calls than the kernel program ever folds into one
    /// (a damaged or forged recording): skipped.
    pub bad_repeats: u64,
    /// Calls already under way when the capture attached: no duration.
    pub began_before: u64,
    /// Records (a call, or a repeat of calls the kernel folded) per process: what each sent
    /// toward a bound of records ([`Formatter::records_by_process`]).
    records: HashMap<Pid, u64>,
    /// The process of the latest records and how many it sent in a row, not yet in `records`
    /// (records come in runs of one thread: one map update a run, not one a record).
    run: (Pid, u64),
}

/// The mean duration of the replayed calls in each position of a repetition: the kernel sums
/// them per position (`sums`), so an alternation keeps each call's own duration. When fewer
/// calls are known than the period (`known` < `period`: a damaged recording), their durations
/// are the run's mean.
fn position_means(period: u8, known: usize, count: u32, sums: [u64; 2]) -> [u64; 2] {
    let count = u64::from(count.max(1));
    if usize::from(period) == known {
        [sums[0] / count, sums[1] / count]
    } else {
        let mean = (sums[0] + sums[1]) / (count * u64::from(period.max(1)));
        [mean, mean]
    }
}

fn errno_ret(ret: i64) -> Option<&'static str> {
    if (-4095..0).contains(&ret) {
        Some(errno::name(-ret).unwrap_or("E?"))
    } else {
        None
    }
}

fn ret_of(ret: i64) -> Ret<'static> {
    match errno_ret(ret) {
        Some(e) => Ret::Err { val: -1, errno: e },
        None => Ret::Ok { val: ret, deco: None, note: "" },
    }
}

fn data<'a>(d: &Data<'a>) -> RawData<'a> {
    let kind = match d.kind {
        syslint_bpf::DataKind::None => DataKind::None,
        syslint_bpf::DataKind::Str => DataKind::Str,
        syslint_bpf::DataKind::Bytes => DataKind::Bytes,
        syslint_bpf::DataKind::Sockaddr => DataKind::Sockaddr,
    };
    RawData { kind, bytes: d.bytes, truncated: d.truncated, fault: d.fault }
}

/// The fds process `tgid` held before the capture began, in `before`.
fn fds_of(before: &HashMap<Pid, Vec<(i32, Box<str>)>>, tgid: Pid) -> &[(i32, Box<str>)] {
    before.get(&tgid).map_or(&[], Vec::as_slice)
}

impl Formatter {
    pub fn new(mut known: Known) -> Self {
        let mut before: HashMap<Pid, Vec<(i32, Box<str>)>> = HashMap::default();
        for ((tgid, fd), deco) in known.fds.drain() {
            if let Ok(fd) = i32::try_from(fd) {
                before.entry(tgid).or_default().push((fd, deco.into_boxed_str()));
            }
        }
        for fds in before.values_mut() {
            fds.sort_unstable_by_key(|(fd, _)| *fd);
        }
        Formatter { known, before, ..Default::default() }
    }

    /// The fds process `tgid` held before the capture began (see [`RawArgs::fds_before`]).
    fn fds_before(&self, tgid: Pid) -> &[(i32, Box<str>)] {
        fds_of(&self.before, tgid)
    }

    /// The records each process sent (a call, or a repeat the kernel folded, is one), most
    /// first: which processes filled a window that ended at its bound of records (a process
    /// spinning on one call sends few records for many calls).
    pub fn records_by_process(&self) -> Vec<(u32, u64)> {
        let mut all = self.records.clone();
        if self.run.1 > 0 {
            *all.entry(self.run.0).or_default() += self.run.1;
        }
        let mut v: Vec<(u32, u64)> = all.into_iter().collect();
        v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }

    fn count_record(&mut self, tgid: Pid) {
        if self.run.0 != tgid && self.run.1 > 0 {
            *self.records.entry(self.run.0).or_default() += self.run.1;
            self.run.1 = 0;
        }
        self.run = (tgid, self.run.1 + 1);
    }

    /// Turn one record into events, handed to `sink` one by one.
    pub fn on_record(&mut self, r: &Record<'_>, sink: &mut dyn FnMut(&Event)) {
        match *r {
            Record::Syscall {
                tgid,
                tid,
                nr,
                args,
                ret,
                ts_enter,
                ts_exit,
                ref data1,
                ref data2,
                unfinished,
                began_before,
            } => {
                self.tgid_of.insert(tid, tgid);
                self.count_record(tgid);
                if (!self.before.is_empty() || !self.known.tasks.is_empty()) && !self.announced.contains(&tid) {
                    self.announce(tgid, tid, ts_enter, sink);
                }
                let sys = Sys::from_x86_64(nr);
                let name =
                    if sys == Sys::Other { syslint_bpf::syscall_name(nr).unwrap_or("syscall") } else { sys.name() };
                // clone3's flags are in a struct the kernel program does not copy: the Fork
                // record said whether the child is a thread
                let thread = if sys == Sys::Clone3 {
                    u32::try_from(ret).ok().and_then(|c| self.forks.get(&c).copied())
                } else {
                    None
                };
                // (the field, not `fds_before()`: the calls are saved below while it is borrowed)
                let fds_before = if self.before.is_empty() { &[][..] } else { fds_of(&self.before, tgid) };
                let raw = RawArgs { nr, regs: args, ret, data1: data(data1), data2: data(data2), thread, fds_before };
                let dur = ts_exit.saturating_sub(ts_enter);
                let sc = Syscall {
                    sys,
                    name,
                    args: Args::Raw(&raw),
                    ret: if unfinished { Ret::Unknown } else { ret_of(ret) },
                    // a call under way when the attach came: how long it lasted is unknown
                    dur_ns: if unfinished || began_before { None } else { Some(dur) },
                    resumed: false,
                    pre: syslint_event::Pre::NONE,
                };
                let ev = Event { tid: Tid(tid), ts_ns: Some(ts_enter as i64), kind: EventKind::Syscall(sc) };
                sink(&ev);
                self.syscalls += 1;
                self.began_before += u64::from(began_before);
                self.events += 1;
                if !unfinished {
                    self.threads.entry(tid).or_default().push(sys, name, &raw);
                }
                self.after_call(tgid, sys, &args, ret, unfinished);
            }
            Record::Repeat { tid, period, count, first_ts, last_ts, dur_sum_ns, .. } => {
                let tgid = self.tgid_of.get(&tid).copied().unwrap_or(tid);
                self.count_record(tgid);
                let Some(st) = self.threads.get(&tid) else { return };
                let calls = st.calls();
                let p = (period as usize).clamp(1, 2).min(calls.len());
                if p == 0 || count == 0 {
                    return;
                }
                if count > MAX_REPEAT {
                    self.bad_repeats += 1;
                    return;
                }
                let calls = &calls[calls.len() - p..];
                let before = self.fds_before(tgid);
                let raws: Vec<RawArgs<'_>> = calls.iter().map(|c| RawArgs { fds_before: before, ..c.raw() }).collect();
                let n = count as u64 * p as u64;
                let means = position_means(period, p, count, dur_sum_ns);
                // each repetition takes its share of the span; inside it, each call starts
                // after the ones before it (their mean durations) and an equal share of the gaps
                let rep = last_ts.saturating_sub(first_ts) / u64::from(count);
                let busy: u64 = means[..p].iter().sum();
                let gap = rep.saturating_sub(busy) / p as u64;
                for k in 0..u64::from(count) {
                    let mut t = first_ts + k * rep;
                    for (i, (c, r)) in calls.iter().zip(&raws).enumerate() {
                        let sc = Syscall {
                            sys: c.sys,
                            name: c.name,
                            args: Args::Raw(r),
                            ret: ret_of(c.ret),
                            dur_ns: Some(means[i]),
                            resumed: false,
                            pre: syslint_event::Pre::NONE,
                        };
                        sink(&Event { tid: Tid(tid), ts_ns: Some(t as i64), kind: EventKind::Syscall(sc) });
                        t += means[i] + gap;
                    }
                }
                self.syscalls += n;
                self.events += n;
            }
            Record::Fork { child_tid, child_tgid, parent_tid, is_thread, .. } => {
                self.forks.insert(child_tid, is_thread);
                self.tgid_of.insert(child_tid, child_tgid);
                if !is_thread {
                    // the child starts with a copy of the parent's table
                    let parent = self.tgid_of.get(&parent_tid).copied().unwrap_or(parent_tid);
                    if let Some(fds) = self.before.get(&parent).cloned() {
                        self.before.insert(child_tgid, fds);
                    }
                }
            }
            Record::Exec { tgid, tid, filename, ts, .. } => {
                // the kernel's own file name (bprm->filename), whose last part is what exec
                // makes the program's name: right even where the execve's path argument was
                // not copied (execveat of an fd, a fault)
                let name = String::from_utf8_lossy(filename.rsplit(|&b| b == b'/').next().unwrap_or(filename));
                if !name.is_empty() {
                    // a thread not yet announced must not be given the name from before
                    for t in self.known.tasks.values_mut().filter(|t| t.tgid == tgid) {
                        t.comm.clear();
                        t.comm.push_str(&name);
                    }
                    let kind = EventKind::TaskKnown { tgid: Tgid(tgid), parent: None, comm: &name };
                    // (not counted in `events`, like the fds announced: not something the program did)
                    sink(&Event { tid: Tid(tid), ts_ns: Some(ts as i64), kind });
                }
            }
            Record::Signal { tgid, tid, sig, code, addr, ts } => {
                // a thread's first event after an attach may be a signal: who it is comes first
                if (!self.before.is_empty() || !self.known.tasks.is_empty()) && !self.announced.contains(&tid) {
                    self.announce(tgid, tid, ts, sink);
                }
                let info = syslint_event::raw::siginfo_text(sig, code, addr);
                let kind = EventKind::Signal { name: signal_name(sig.max(0) as u32), info: &info };
                sink(&Event { tid: Tid(tid), ts_ns: Some(ts as i64), kind });
                self.events += 1;
            }
            Record::Exit { tid, exit_code, ts, .. } => {
                let kind = if exit_code & 0x7f != 0 {
                    EventKind::Killed {
                        signal: signal_name((exit_code & 0x7f) as u32),
                        core_dumped: exit_code & 0x80 != 0,
                    }
                } else {
                    EventKind::Exited { code: (exit_code >> 8) & 0xff }
                };
                sink(&Event { tid: Tid(tid), ts_ns: Some(ts as i64), kind });
                self.events += 1;
                self.threads.remove(&tid);
                self.forks.remove(&tid);
                self.announced.remove(&tid);
            }
        }
    }

    /// Tell the analysis who thread `tid` is and which fds from before the capture it holds,
    /// before its first call. Threads made during the capture are known to the model from
    /// their clone (process, program, and their process's table).
    fn announce(&mut self, tgid: Pid, tid: Pid, ts: u64, sink: &mut dyn FnMut(&Event)) {
        self.announced.insert(tid);
        if self.forks.get(&tid) == Some(&true) {
            return;
        }
        // (a child forked during the capture has a new tid, absent from the snapshot)
        if let Some(t) = self.known.tasks.get(&tid) {
            let kind = EventKind::TaskKnown { tgid: Tgid(t.tgid), parent: t.parent.map(Tgid), comm: &t.comm };
            sink(&Event { tid: Tid(tid), ts_ns: Some(ts as i64), kind });
        }
        for (fd, target) in self.fds_before(tgid) {
            sink(&Event { tid: Tid(tid), ts_ns: Some(ts as i64), kind: EventKind::FdKnown { fd: *fd, target } });
        }
    }

    /// Keep the table of fds known from before the capture in step with closes and dups.
    fn after_call(&mut self, tgid: Pid, sys: Sys, args: &[u64; 6], ret: i64, unfinished: bool) {
        // (no lookup at all in a capture that did not attach to running processes)
        if unfinished || ret < 0 || self.before.is_empty() {
            return;
        }
        let Some(fds) = self.before.get_mut(&tgid) else { return };
        let at = |fds: &[(i32, Box<str>)], fd: i32| fds.binary_search_by_key(&fd, |(f, _)| *f);
        let forget = |fds: &mut Vec<(i32, Box<str>)>, fd: i32| {
            if let Ok(i) = at(fds, fd) {
                fds.remove(i);
            }
        };
        let Ok(new) = i32::try_from(ret) else { return };
        match sys {
            Sys::Close => forget(fds, args[0] as i32),
            Sys::Dup | Sys::Dup2 | Sys::Dup3 => match at(fds, args[0] as i32).map(|i| fds[i].1.clone()) {
                Ok(d) => match at(fds, new) {
                    Ok(i) => fds[i].1 = d,
                    Err(i) => fds.insert(i, (new, d)),
                },
                Err(_) => forget(fds, new),
            },
            // a new fd of that number is not the old one
            _ if returns_fd(sys) => forget(fds, new),
            _ => {}
        }
    }
}

/// Syscalls whose result is a new fd (so an fd known from before is no longer that one).
fn returns_fd(sys: Sys) -> bool {
    use syslint_event::Class;
    sys.is(Class::OPEN)
        || matches!(
            sys,
            Sys::Socket
                | Sys::Accept
                | Sys::Accept4
                | Sys::EpollCreate
                | Sys::EpollCreate1
                | Sys::Eventfd
                | Sys::Eventfd2
                | Sys::TimerfdCreate
                | Sys::Signalfd
                | Sys::Signalfd4
                | Sys::MemfdCreate
                | Sys::Fcntl
        )
}

/// One event as a line of `strace -f -tt -T` output (`pid hh:mm:ss.micros name(args) = ret
/// <secs>`), times of day from the monotonic timestamps plus `realtime_offset_ns`, in local time.
pub fn strace_line(o: &mut String, ev: &Event, realtime_offset_ns: i64) {
    if let EventKind::TaskKnown { tgid, parent, comm } = ev.kind {
        // strace has no line for what /proc said of a thread caught running: syslint's own
        // (`#syslint task`, which its strace reader takes back), so that the text analyses as
        // the recording does (a HAProxy thread was a nameless process of its own)
        let facts = crate::procfs::TaskFacts { tgid: tgid.0, parent: parent.map(|p| p.0), comm: comm.to_string() };
        o.push_str(&crate::procfs::recording_line(ev.tid.0, &facts));
        return;
    }
    if let EventKind::FdKnown { .. } = ev.kind {
        // strace has no line for it: the decorations say it (see `RawArgs::fds_before`)
        return;
    }
    let _ = write!(o, "{} ", ev.tid);
    if let Some(t) = ev.ts_ns {
        let real = t + realtime_offset_ns;
        let secs = real.div_euclid(1_000_000_000);
        let micros = real.rem_euclid(1_000_000_000) / 1000;
        let mut tm: nix::libc::tm = unsafe_zeroed_tm();
        let tt: nix::libc::time_t = secs as nix::libc::time_t;
        // SAFETY: localtime_r reads one time_t and writes one struct tm, both valid locals.
        unsafe { nix::libc::localtime_r(&tt, &mut tm) };
        let _ = write!(o, "{:02}:{:02}:{:02}.{micros:06} ", tm.tm_hour, tm.tm_min, tm.tm_sec);
    }
    match &ev.kind {
        EventKind::Syscall(sc) => {
            o.push_str(sc.name);
            o.push('(');
            sc.render_args(o);
            o.push(')');
            match sc.ret {
                // addresses in hex, as strace prints them
                Ret::Ok { val, .. } if matches!(sc.sys, Sys::Mmap | Sys::Mmap2 | Sys::Brk | Sys::Mremap) => {
                    let _ = write!(o, " = {val:#x}");
                }
                Ret::Ok { val, .. } => {
                    let _ = write!(o, " = {val}");
                }
                Ret::Err { errno, .. } => {
                    let _ = write!(o, " = -1 {errno}");
                }
                Ret::Unknown | Ret::Unfinished => o.push_str(" = ?"),
            }
            if let Some(d) = sc.dur_ns {
                // to the nanosecond, as `strace -T --syscall-times=ns` prints: eBPF measures
                // calls that take 300 ns, which microseconds would round to nothing (an
                // epoll_ctl lab's cost read back from the text was a tenth of the recording's)
                let _ = write!(o, " <{}.{:09}>", d / 1_000_000_000, d % 1_000_000_000);
            }
        }
        EventKind::Exited { code } => {
            let _ = write!(o, "+++ exited with {code} +++");
        }
        EventKind::Killed { signal, core_dumped } => {
            let _ = write!(o, "+++ killed by {signal}{} +++", if *core_dumped { " (core dumped)" } else { "" });
        }
        EventKind::Signal { name, info } => {
            let _ = write!(o, "--- {name} {info} ---");
        }
        EventKind::Attached { .. }
        | EventKind::Detached
        | EventKind::Alias { .. }
        | EventKind::FdKnown { .. }
        | EventKind::TaskKnown { .. }
        | EventKind::Spawning { .. } => {}
    }
    o.push('\n');
}

/// `realtime_offset_ns` (CLOCK_REALTIME minus CLOCK_MONOTONIC) plus the local time zone's
/// offset from UTC at that time: monotonic timestamps plus the result are local times, whose
/// remainder by a day is the time of day strace -tt prints.
pub fn local_offset_ns(realtime_offset_ns: i64) -> i64 {
    // the zone's offset now (a recording read later: now, not then; they differ only across
    // a daylight-saving change)
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let mut tm: nix::libc::tm = unsafe_zeroed_tm();
    let tt: nix::libc::time_t = now as nix::libc::time_t;
    // SAFETY: localtime_r reads one time_t and writes one struct tm, both valid locals.
    unsafe { nix::libc::localtime_r(&tt, &mut tm) };
    realtime_offset_ns.saturating_add(i64::from(tm.tm_gmtoff as i32).saturating_mul(1_000_000_000))
}

fn unsafe_zeroed_tm() -> nix::libc::tm {
    // SAFETY: struct tm is plain integers (and a pointer that may be null): all-zero is valid.
    unsafe { std::mem::zeroed() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syslint_bpf::DataKind;
    use syslint_event::{SockAddr, Timeout};

    fn none() -> Data<'static> {
        Data { kind: DataKind::None, bytes: &[], truncated: false, fault: false }
    }

    fn one(nr: u32, args: [u64; 6], ret: i64, d1: Data<'_>, d2: Data<'_>) -> (String, Option<Event<'static>>) {
        let mut f = Formatter::default();
        let mut got = None;
        let rec = Record::Syscall {
            tgid: 7,
            tid: 7,
            nr,
            args,
            ret,
            ts_enter: 1000,
            ts_exit: 3000,
            data1: d1,
            data2: d2,
            unfinished: false,
            began_before: false,
        };
        let mut text = String::new();
        f.on_record(&rec, &mut |e: &Event| {
            if let EventKind::Syscall(sc) = &e.kind {
                text = format!("{}({})", sc.name, sc.args);
                got = Some(Event { tid: e.tid, ts_ns: e.ts_ns, kind: EventKind::Exited { code: 0 } });
            }
        });
        (text, got)
    }

    /// Reparse what the formatter wrote with the event crate's decoders, as the analysis will.
    fn reparse(text: &str) -> (Sys, String) {
        let name = &text[..text.find('(').unwrap()];
        let args = text[name.len() + 1..text.len() - 1].to_string();
        (Sys::from_name(name), args)
    }

    #[test]
    fn decoders_read_what_the_formatter_writes() {
        // connect(3, {AF_INET 127.0.0.1:8080}, 16) = -1 EINPROGRESS
        let sa = [2u8, 0, 0x1f, 0x90, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
        let d = Data { kind: DataKind::Sockaddr, bytes: &sa, truncated: false, fault: false };
        let (t, _) = one(42, [3, 0x7ff0, 16, 0, 0, 0], -115, d, none());
        assert_eq!(t, "connect(3, {sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr(\"127.0.0.1\")}, 16)");
        let (sys, args) = reparse(&t);
        let sc = Syscall {
            sys,
            name: "connect",
            args: Args::Text(&args),
            ret: Ret::Unknown,
            dur_ns: None,
            resumed: false,
            pre: syslint_event::Pre::NONE,
        };
        assert!(matches!(sc.sockaddr(), Some(SockAddr::Inet { port: 8080, .. })));
        assert_eq!(sc.fd().map(|f| f.num), Some(3));

        // poll(fds, 1, 0) and ppoll with a zero timespec
        let (t, _) = one(7, [0x7ff0, 1, 0, 0, 0, 0], 0, none(), none());
        let (sys, args) = reparse(&t);
        assert_eq!(syslint_event::args::poll_timeout(sys, &args), Some(Timeout::Ns(0)));
        let ts = [0u8; 16];
        let d = Data { kind: DataKind::Bytes, bytes: &ts, truncated: false, fault: false };
        let (t, _) = one(271, [0x7ff0, 1, 0x7ff8, 0, 8, 0], 0, d, none());
        let (sys, args) = reparse(&t);
        assert_eq!(syslint_event::args::poll_timeout(sys, &args), Some(Timeout::Ns(0)));
        // poll(-1) blocks
        let (t, _) = one(7, [0x7ff0, 1, u32::MAX as u64, 0, 0, 0], 1, none(), none());
        let (sys, args) = reparse(&t);
        assert_eq!(syslint_event::args::poll_timeout(sys, &args), Some(Timeout::Infinite));

        // openat(AT_FDCWD, "/tmp/x", O_WRONLY|O_CREAT|O_DSYNC, 0644)
        let p = b"/tmp/x";
        let d = Data { kind: DataKind::Str, bytes: p, truncated: false, fault: false };
        let (t, _) = one(257, [(-100i64) as u64, 0x7ff0, 0o10101, 0o644, 0, 0], 3, d, none());
        assert_eq!(t, "openat(AT_FDCWD, \"/tmp/x\", O_WRONLY|O_CREAT|O_DSYNC, 0644)");
        let (sys, args) = reparse(&t);
        let sc = Syscall {
            sys,
            name: "openat",
            args: Args::Text(&args),
            ret: Ret::Unknown,
            dur_ns: None,
            resumed: false,
            pre: syslint_event::Pre::NONE,
        };
        let f = sc.open_flags().unwrap();
        assert!(f.contains(syslint_event::OpenFlags::DSYNC) && !f.contains(syslint_event::OpenFlags::SYNC));
        assert_eq!(sc.path().as_deref(), Some("/tmp/x"));

        // epoll_ctl with EPOLLEXCLUSIVE, setsockopt SO_REUSEPORT, socket type flags
        let mut ev = [0u8; 12];
        ev[..4].copy_from_slice(&(1u32 | 1 << 28).to_le_bytes());
        let d = Data { kind: DataKind::Bytes, bytes: &ev, truncated: false, fault: false };
        let (t, _) = one(233, [5, 1, 3, 0x7ff0, 0, 0], 0, d, none());
        assert_eq!(t, "epoll_ctl(5, EPOLL_CTL_ADD, 3, {events=EPOLLIN|EPOLLEXCLUSIVE, data={u32=0, u64=0}})");
        let one_i = 1i32.to_le_bytes();
        let d = Data { kind: DataKind::Bytes, bytes: &one_i, truncated: false, fault: false };
        let (t, _) = one(54, [3, 1, 15, 0x7ff0, 4, 0], 0, d, none());
        assert_eq!(t, "setsockopt(3, SOL_SOCKET, SO_REUSEPORT, [1], 4)");
        let (t, _) = one(41, [2, 1 | 0o4000 | 0o2000000, 0, 0, 0, 0], 3, none(), none());
        assert_eq!(t, "socket(AF_INET, SOCK_STREAM|SOCK_NONBLOCK|SOCK_CLOEXEC, IPPROTO_IP)");

        // a socket write with its first bytes, cut
        let d = Data { kind: DataKind::Bytes, bytes: b"GET / HTTP/1.1\r\n", truncated: true, fault: false };
        let (t, _) = one(1, [4, 0x7ff0, 100, 0, 0, 0], 100, d, none());
        assert_eq!(t, "write(4, \"GET / HTTP/1.1\\r\\n\"..., 100)");
    }

    #[test]
    fn a_repeat_of_four_billion_calls_is_damage_not_work() {
        // a 206-byte recording with one such record ran for 12 minutes of CPU (issue 16)
        let mut f = Formatter::default();
        let mut n = 0u64;
        let mut sink = |_: &Event| n += 1;
        let call = Record::Syscall {
            tgid: 1,
            tid: 1,
            nr: 0,
            args: [0; 6],
            ret: 1,
            ts_enter: 1000,
            ts_exit: 1100,
            data1: none(),
            data2: none(),
            unfinished: false,
            began_before: false,
        };
        f.on_record(&call, &mut sink);
        let rep = |count| Record::Repeat {
            tgid: 1,
            tid: 1,
            period: 1,
            count,
            first_ts: 1200,
            last_ts: 9000,
            dur_sum_ns: [1, 0],
        };
        f.on_record(&rep(u32::MAX), &mut sink);
        assert_eq!((f.bad_repeats, f.syscalls), (1, 1));
        // the largest run the kernel program sends is still replayed
        f.on_record(&rep(65_536), &mut sink);
        assert_eq!((f.bad_repeats, f.syscalls), (1, 1 + 65_536));
        assert_eq!(n, 1 + 65_536);
    }

    #[test]
    fn repeats_replay_the_last_calls() {
        let mut f = Formatter::default();
        let mut seen: Vec<(String, i64, Option<u64>)> = Vec::new();
        let mut sink = |e: &Event| {
            if let EventKind::Syscall(sc) = &e.kind {
                seen.push((sc.name.to_string(), e.ts_ns.unwrap(), sc.dur_ns));
            }
        };
        let call_of = |pid: u32, nr: u32, t: u64| Record::Syscall {
            tgid: pid,
            tid: pid,
            nr,
            args: [0; 6],
            ret: 512,
            ts_enter: t,
            ts_exit: t + 100,
            data1: none(),
            data2: none(),
            unfinished: false,
            began_before: false,
        };
        let call = |nr: u32, t: u64| call_of(1, nr, t);
        f.on_record(&call(0, 1000), &mut sink);
        f.on_record(&call(1, 1200), &mut sink);
        f.on_record(
            &Record::Repeat {
                tgid: 1,
                tid: 1,
                period: 2,
                count: 3,
                first_ts: 1400,
                last_ts: 2600,
                dur_sum_ns: [300, 300],
            },
            &mut sink,
        );
        let names: Vec<&str> = seen.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(names, ["read", "write", "read", "write", "read", "write", "read", "write"]);
        assert_eq!(f.syscalls, 8);
        assert_eq!(seen[2].1, 1400);
        assert_eq!(seen[2].2, Some(100));
        assert!(seen.windows(2).all(|w| w[0].1 <= w[1].1), "{seen:?}");
        // three records (two calls and a repeat of six), not eight calls: what a bound of
        // records counts; another process's record after them is its own
        assert_eq!(f.records_by_process(), [(1, 3)]);
        let mut more = |_: &Event| {};
        f.on_record(&call_of(9, 39, 3000), &mut more);
        f.on_record(&call(0, 3200), &mut more);
        assert_eq!(f.records_by_process(), [(1, 4), (9, 1)]);
    }

    /// Issue 15: `fstat` (10 us) then a 1 s `select`, alternating: each call keeps its own
    /// duration after the replay (the run's mean had been given to both: 0.5 s each), and each
    /// starts after the one before it has returned.
    #[test]
    fn alternating_calls_keep_their_own_durations() {
        let mut f = Formatter::default();
        let mut seen: Vec<(String, u64, u64)> = Vec::new();
        let mut sink = |e: &Event| {
            if let EventKind::Syscall(sc) = &e.kind {
                seen.push((sc.name.to_string(), e.ts_ns.unwrap() as u64, sc.dur_ns.unwrap()));
            }
        };
        let ms = 1_000_000u64;
        let call = |nr: u32, t: u64, d: u64| Record::Syscall {
            tgid: 1,
            tid: 1,
            nr,
            args: [0; 6],
            ret: 0,
            ts_enter: t,
            ts_exit: t + d,
            data1: none(),
            data2: none(),
            unfinished: false,
            began_before: false,
        };
        // fstat is 5, select 23 on x86_64
        f.on_record(&call(5, 0, 10_000), &mut sink);
        f.on_record(&call(23, 20_000, 1000 * ms), &mut sink);
        let (t0, reps) = (1000 * ms + 30_000, 4u64);
        let rep_len = 1000 * ms + 30_000;
        f.on_record(
            &Record::Repeat {
                tgid: 1,
                tid: 1,
                period: 2,
                count: reps as u32,
                first_ts: t0,
                last_ts: t0 + reps * rep_len - 20_000,
                dur_sum_ns: [reps * 10_000, reps * 1000 * ms],
            },
            &mut sink,
        );
        assert_eq!(seen.len(), 10);
        for (i, (name, ts, dur)) in seen.iter().enumerate() {
            if i % 2 == 0 {
                assert_eq!((name.as_str(), *dur), ("fstat", 10_000), "{seen:?}");
            } else {
                assert_eq!((name.as_str(), *dur), ("select", 1000 * ms), "{seen:?}");
                // the select starts after its fstat returned
                assert!(*ts >= seen[i - 1].1 + 10_000, "{seen:?}");
            }
        }
        assert!(seen.windows(2).all(|w| w[0].1 + w[0].2 <= w[1].1), "calls overlap: {seen:?}");
        // the last call ends inside the run
        let (_, ts, dur) = seen[9];
        assert!(ts + dur <= t0 + reps * rep_len, "{seen:?}");
    }

    #[test]
    fn repeats_replay_kernel_values_and_text_alike() {
        let payload = b"ping";
        let rec = |d: Data<'static>| Record::Syscall {
            tgid: 1,
            tid: 1,
            nr: 44,
            args: [3, 0x7ff0, 4, 0, 0, 0],
            ret: 4,
            ts_enter: 1000,
            ts_exit: 1100,
            data1: d,
            data2: none(),
            unfinished: false,
            began_before: false,
        };
        let repeat = Record::Repeat {
            tgid: 1,
            tid: 1,
            period: 1,
            count: 2,
            first_ts: 1200,
            last_ts: 1400,
            dur_sum_ns: [200, 0],
        };
        // the analysis gets the kernel's values whatever is rendered; rendering shows the fd
        // known from before the capture as -yy would, in the call and in its replays
        let mut known = Known::default();
        known.fds.insert((1, 3), "UDP:[127.0.0.1:5000->127.0.0.1:53]".into());
        let mut f = Formatter::new(known);
        let mut seen = Vec::new();
        let mut sink = |e: &Event| {
            if let EventKind::Syscall(sc) = &e.kind {
                let mut head = [0u8; 4];
                let n = sc.payload_prefix(&mut head);
                seen.push((sc.args.text().is_some(), format!("{}({})", sc.name, sc.args), head[..n].to_vec()));
            }
        };
        let d = Data { kind: DataKind::Bytes, bytes: payload, truncated: false, fault: false };
        f.on_record(&rec(d), &mut sink);
        f.on_record(&repeat, &mut sink);
        let text = "sendto(3<UDP:[127.0.0.1:5000->127.0.0.1:53]>, \"ping\", 4, 0, NULL, 0)";
        assert_eq!(seen.len(), 3);
        for s in &seen {
            assert_eq!(s, &(false, text.to_string(), payload.to_vec()));
        }
    }

    /// Call `nr` of thread `tid` of process 7 on fd `a0`.
    fn fd_call(tid: u32, nr: u32, a0: u64, ret: i64) -> Record<'static> {
        Record::Syscall {
            tgid: 7,
            tid,
            nr,
            args: [a0, 0x10, 4, 0, 0, 0],
            ret,
            ts_enter: 1,
            ts_exit: 2,
            data1: none(),
            data2: none(),
            unfinished: false,
            began_before: false,
        }
    }

    #[test]
    fn known_fds_are_decorated_until_closed() {
        let mut known = Known::default();
        known.fds.insert((7, 3), "TCP:[127.0.0.1:80->127.0.0.1:5000]".into());
        let mut f = Formatter::new(known);
        let mut texts = Vec::new();
        let mut sink = |e: &Event| {
            if let EventKind::Syscall(sc) = &e.kind {
                texts.push(format!("{}({})", sc.name, sc.args));
            }
        };
        f.on_record(&fd_call(8, 0, 3, 4), &mut sink);
        f.on_record(&fd_call(8, 3, 3, 0), &mut sink);
        f.on_record(&fd_call(8, 0, 3, -9), &mut sink);
        assert_eq!(texts[0], "read(3<TCP:[127.0.0.1:80->127.0.0.1:5000]>, 0x10, 4)");
        assert_eq!(texts[1], "close(3<TCP:[127.0.0.1:80->127.0.0.1:5000]>)");
        assert_eq!(texts[2], "read(3, 0x10, 4)");
    }

    #[test]
    fn known_fds_are_announced_to_each_thread_before_its_first_call() {
        let mut known = Known::default();
        known.fds.insert((7, 3), "TCP:[127.0.0.1:80->127.0.0.1:5000]".into());
        known.fds.insert((7, 1), "/dev/pts/0".into());
        known.fds.insert((9, 4), "/other/process".into());
        let mut f = Formatter::new(known);
        let mut seen = Vec::new();
        let mut sink = |e: &Event| match &e.kind {
            EventKind::Syscall(sc) => seen.push(format!("{} {}({})", e.tid, sc.name, sc.args)),
            EventKind::FdKnown { fd, target } => seen.push(format!("{} fd {fd} {target}", e.tid)),
            _ => {}
        };
        f.on_record(&fd_call(7, 0, 3, 4), &mut sink);
        f.on_record(&fd_call(7, 0, 3, 4), &mut sink);
        f.on_record(&fd_call(7, 3, 3, 0), &mut sink);
        // a thread seen first after the close: fd 3 is no longer the connection
        f.on_record(&fd_call(8, 0, 1, 4), &mut sink);
        assert_eq!(
            seen,
            [
                "7 fd 1 /dev/pts/0",
                "7 fd 3 TCP:[127.0.0.1:80->127.0.0.1:5000]",
                "7 read(3<TCP:[127.0.0.1:80->127.0.0.1:5000]>, 0x10, 4)",
                "7 read(3<TCP:[127.0.0.1:80->127.0.0.1:5000]>, 0x10, 4)",
                "7 close(3<TCP:[127.0.0.1:80->127.0.0.1:5000]>)",
                "8 fd 1 /dev/pts/0",
                "8 read(1</dev/pts/0>, 0x10, 4)",
            ]
        );
        assert_eq!((f.syscalls, f.events), (4, 4));
    }

    /// Issue 15: threads found in /proc at attach are announced (their process, its parent and
    /// program) before their first call, ahead of their fds; a thread made during the capture
    /// is not (its clone says it); an exec names the program from the kernel's file name.
    #[test]
    fn known_threads_are_announced_before_their_first_call() {
        use crate::procfs::TaskFacts;
        let mut known = Known::default();
        known.fds.insert((7, 3), "/var/log/app.log".into());
        for tid in [7, 8] {
            known.tasks.insert(tid, TaskFacts { tgid: 7, parent: Some(1), comm: "postgres".into() });
        }
        let mut f = Formatter::new(known);
        let mut seen = Vec::new();
        let mut sink = |e: &Event| match &e.kind {
            EventKind::Syscall(sc) => seen.push(format!("{} {}", e.tid, sc.name)),
            EventKind::FdKnown { fd, target } => seen.push(format!("{} fd {fd} {target}", e.tid)),
            EventKind::TaskKnown { tgid, parent, comm } => {
                seen.push(format!("{} of {tgid} parent {parent:?} {comm}", e.tid));
            }
            _ => {}
        };
        f.on_record(&fd_call(8, 0, 3, 4), &mut sink);
        f.on_record(&fd_call(7, 1, 3, 4), &mut sink);
        f.on_record(
            &Record::Fork { parent_tgid: 7, parent_tid: 7, child_tgid: 7, child_tid: 9, is_thread: true, ts: 3 },
            &mut sink,
        );
        f.on_record(&fd_call(9, 0, 3, 4), &mut sink);
        f.on_record(
            &Record::Exec { tgid: 7, tid: 7, old_tid: 7, filename: b"/usr/bin/python3.11", truncated: false, ts: 4 },
            &mut sink,
        );
        assert_eq!(
            seen,
            [
                "8 of 7 parent Some(Tgid(1)) postgres",
                "8 fd 3 /var/log/app.log",
                "8 read",
                "7 of 7 parent Some(Tgid(1)) postgres",
                "7 fd 3 /var/log/app.log",
                "7 write",
                "9 read",
                "7 of 7 parent None python3.11",
            ]
        );

        // a process that execs before its first call is seen keeps the new name
        let mut known = Known::default();
        known.tasks.insert(5, TaskFacts { tgid: 5, parent: Some(1), comm: "sh".into() });
        let mut f = Formatter::new(known);
        let mut names = Vec::new();
        let mut sink = |e: &Event| {
            if let EventKind::TaskKnown { comm, .. } = e.kind {
                names.push(comm.to_string());
            }
        };
        f.on_record(
            &Record::Exec { tgid: 5, tid: 5, old_tid: 5, filename: b"/bin/sleep", truncated: false, ts: 1 },
            &mut sink,
        );
        f.on_record(&fd_call(5, 0, 3, 4), &mut sink);
        assert_eq!(names, ["sleep", "sleep"]);
    }

    /// A call already under way when the capture attached has no duration (its start was not
    /// seen), is counted as such, and is otherwise an ordinary call (here: the accept whose
    /// connection the workers then serve).
    #[test]
    fn a_call_under_way_at_attach_has_no_duration() {
        let mut f = Formatter::default();
        let mut seen = Vec::new();
        let mut sink = |e: &Event| {
            if let EventKind::Syscall(sc) = &e.kind {
                seen.push((sc.name.to_string(), e.ts_ns, sc.dur_ns, format!("{:?}", sc.ret)));
            }
        };
        let accept = Record::Syscall {
            tgid: 7,
            tid: 7,
            nr: 43,
            args: [4, 0, 0, 0, 0, 0],
            ret: 9,
            ts_enter: 5000,
            ts_exit: 5000,
            data1: none(),
            data2: none(),
            unfinished: false,
            began_before: true,
        };
        f.on_record(&accept, &mut sink);
        f.on_record(&fd_call(7, 0, 9, 4), &mut sink);
        let ok9 = format!("{:?}", Ret::Ok { val: 9, deco: None, note: "" });
        assert_eq!(seen[0], ("accept".to_string(), Some(5000), None, ok9));
        assert_eq!(seen[1].2, Some(1));
        assert_eq!((f.syscalls, f.began_before), (2, 1));
    }
}
