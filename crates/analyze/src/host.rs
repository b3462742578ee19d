//! State the analyzer keeps for a detector (issue 26: the analyzer owns detector state).
//!
//! A detector that keeps something per thread (or per process), per object of a process (a
//! futex address, an fd) and sums it per program implements [`Hosted`]: it declares its
//! `Thread`, `Object` and `Program` types (plain structs, the last with a
//! [`merge!`](crate::merge) rule per field) and writes only what is particular to its
//! pathology: what a call does to the state, what a thread or an object leaves to its program
//! when it ends, and the findings from the programs at the end. The host ([`Host`]) stores the
//! threads and the objects (bounded, and it says in the report how many calls the bounds left
//! out), follows pid aliases, ends a thread's state when the thread exits (a process's when
//! its main thread does), at an execve where asked and at the end, ends a process's objects
//! with it, merges the programs of unnamed processes into the ones they turn out to belong to,
//! and counts a program's processes. The model is the tracing crate's per-span extensions,
//! owned by its registry.

use crate::draft::Draft;
use crate::kit::{Bounded, Programs, Rekey, Shown};
use crate::registry::{self, Ctx, Detector, Entry, FinishCtx, Meta};
use syslint_event::{Clock, Event, Sys, Syscall, Tgid, Tid};
use syslint_report::{Counts, Finding};

/// How two values of per-program state add up (the merge of unnamed processes into their
/// program, and of a thread's share into its program's).
pub trait Merge {
    fn merge(&mut self, o: Self);
}

/// Field-by-field merge rules for a struct: `merge!(Group { calls: sum, longest: max, clocks:
/// or, timing: merge })`. Rules: `sum` (+=), `saturating_sum` (u64), `max`, `min`, `or` (|=, flags and bit sets), `first` (an `Option` keeps the value it has), `keep`,
/// `merge` (the field's own [`Merge`]).
#[macro_export]
macro_rules! merge {
    ($t:ty { $($f:ident: $rule:ident),* $(,)? }) => {
        impl $crate::host::Merge for $t {
            fn merge(&mut self, o: Self) {
                $( $crate::host::rule::$rule(&mut self.$f, o.$f); )*
            }
        }
    };
}

/// The rules [`merge!`](crate::merge) names.
pub mod rule {
    pub fn sum<T: std::ops::AddAssign>(a: &mut T, b: T) {
        *a += b;
    }
    pub fn saturating_sum(a: &mut u64, b: u64) {
        *a = a.saturating_add(b);
    }
    pub fn max<T: PartialOrd>(a: &mut T, b: T) {
        if b > *a {
            *a = b;
        }
    }
    pub fn min<T: PartialOrd>(a: &mut T, b: T) {
        if b < *a {
            *a = b;
        }
    }
    /// The value it has (what the other side holds is the same thing: a name).
    pub fn keep<T>(_a: &mut T, _b: T) {}
    /// The first value there is.
    pub fn first<T>(a: &mut Option<T>, b: Option<T>) {
        if a.is_none() {
            *a = b;
        }
    }
    pub fn or<T: std::ops::BitOrAssign>(a: &mut T, b: T) {
        *a |= b;
    }
    pub fn merge<T: super::Merge>(a: &mut T, b: T) {
        a.merge(b);
    }
}

/// The value that scored highest (the evidence of the largest window, run or burst): a merge
/// keeps the earlier one on a tie.
#[derive(Clone, Debug)]
pub struct Best<T> {
    pub score: u64,
    pub value: Option<T>,
}

impl<T> Default for Best<T> {
    fn default() -> Self {
        Best { score: 0, value: None }
    }
}

impl<T> Best<T> {
    pub fn new(score: u64, value: T) -> Self {
        Best { score, value: Some(value) }
    }
    pub fn get(&self) -> Option<&T> {
        self.value.as_ref()
    }
}

/// The best value's evidence (none: nothing scored).
impl<T: Shown> Shown for Best<T> {
    fn lines(&self, clock: Clock) -> Vec<String> {
        self.value.lines(clock)
    }
}

impl<T> Merge for Best<T> {
    fn merge(&mut self, o: Self) {
        if o.score > self.score {
            *self = o;
        }
    }
}

/// One kind of call a thread makes again and again (clock reads, mask changes, memory given
/// back), and where the thread's calls stand between its first and its last of them: the
/// thread state of a detector that weighs a call by its share of the thread's calls.
#[derive(Clone, Default)]
pub struct Repeats {
    pub calls: u64,
    /// The thread's call counter at its first and last such call.
    first_seq: u64,
    last_seq: u64,
    pub timing: crate::kit::Timing,
    pub span: crate::kit::Span,
    pub evidence: crate::kit::EvidenceBuf,
}

impl Repeats {
    /// Starting at the thread's call `seq`, keeping `evidence` lines.
    pub fn new(seq: u64, evidence: usize) -> Repeats {
        Repeats { first_seq: seq, evidence: crate::kit::EvidenceBuf::new(evidence), ..Repeats::default() }
    }

    /// One more, the thread's call `seq`.
    pub fn add(&mut self, seq: u64, ev: &Event, sc: &Syscall) {
        self.calls += 1;
        self.last_seq = seq;
        self.timing.add(sc.dur_ns);
        self.span.add(ev.ts_ns);
        self.evidence.push(ev);
    }

    /// The thread's calls from its first such call to its last; each counts itself, whatever
    /// the model counted (a resumed call).
    pub fn thread_calls(&self) -> u64 {
        (self.last_seq.saturating_sub(self.first_seq) + 1).max(self.calls)
    }
}

/// The [`Repeats`] of a program's threads.
#[derive(Clone, Default)]
pub struct RepeatTotals {
    pub calls: u64,
    /// Calls of the threads that made enough of them to be a storm on their own: threads with
    /// a few (an exit, a forked child restoring its state once) count toward the share, not
    /// toward a detector's minimum, or thousands of short processes doing one each would add
    /// up to a storm.
    pub storm_calls: u64,
    /// Calls of the threads between their first and last such call.
    pub thread_calls: u64,
    pub threads: u64,
    pub timing: crate::kit::Timing,
    pub span: crate::kit::Span,
    /// The evidence of the thread with the most.
    pub evidence: Best<crate::kit::EvidenceBuf>,
}

crate::merge!(RepeatTotals {
    evidence: merge,
    calls: sum,
    storm_calls: sum,
    thread_calls: sum,
    threads: sum,
    timing: merge,
    span: merge,
});

impl RepeatTotals {
    /// One thread's, which is a storm on its own from `storm` calls.
    pub fn of(r: Repeats, storm: u64) -> RepeatTotals {
        RepeatTotals {
            calls: r.calls,
            storm_calls: if r.calls >= storm { r.calls } else { 0 },
            thread_calls: r.thread_calls(),
            threads: 1,
            timing: r.timing,
            span: r.span,
            evidence: Best::new(r.calls, r.evidence),
        }
    }

    /// The calls' share of their threads' calls.
    pub fn share(&self) -> f64 {
        self.calls as f64 / self.thread_calls.max(1) as f64
    }

    /// Calls per second over the time they spanned, when it is known.
    pub fn rate(&self) -> Option<f64> {
        let secs = self.span.seconds();
        (self.span.first.is_some() && secs > 0.0).then(|| self.calls as f64 / secs)
    }
}

/// A map of at most `N` keys whose values merge key by key (a program's files): a key that
/// finds the map full is dropped.
#[derive(Clone, Debug)]
pub struct Capped<K, V, const N: usize>(pub rustc_hash::FxHashMap<K, V>);

impl<K, V, const N: usize> Default for Capped<K, V, N> {
    fn default() -> Self {
        Capped(rustc_hash::FxHashMap::default())
    }
}

impl<K: std::hash::Hash + Eq, V, const N: usize> Capped<K, V, N> {
    /// The value of `k`, made with `make` when absent and there is room.
    pub fn entry_or(&mut self, k: K, make: impl FnOnce() -> V) -> Option<&mut V> {
        use std::collections::hash_map::Entry;
        let full = self.0.len() >= N;
        match self.0.entry(k) {
            Entry::Occupied(e) => Some(e.into_mut()),
            Entry::Vacant(e) if !full => Some(e.insert(make())),
            Entry::Vacant(_) => None,
        }
    }
}

impl<K: std::hash::Hash + Eq, V: Merge, const N: usize> Merge for Capped<K, V, N> {
    fn merge(&mut self, o: Self) {
        for (k, v) in o.0 {
            let room = self.0.len() < N;
            match self.0.entry(k) {
                std::collections::hash_map::Entry::Occupied(mut e) => e.get_mut().merge(v),
                std::collections::hash_map::Entry::Vacant(e) if room => {
                    e.insert(v);
                }
                std::collections::hash_map::Entry::Vacant(_) => {}
            }
        }
    }
}

/// Up to `N` distinct values, in the order first seen (a program's processes): what a finding
/// counts, bounded. A merge adds the other side's values the same way.
#[derive(Clone, Debug)]
pub struct Few<T, const N: usize>(pub Vec<T>);

impl<T, const N: usize> Default for Few<T, N> {
    fn default() -> Self {
        Few(Vec::new())
    }
}

impl<T: PartialEq, const N: usize> Few<T, N> {
    pub fn insert(&mut self, t: T) {
        // the value of the last call again is the common case: no scan
        if self.0.last() == Some(&t) || self.0.len() >= N || self.0.contains(&t) {
            return;
        }
        self.0.push(t);
    }
}

impl<T: PartialEq, const N: usize> Merge for Few<T, N> {
    fn merge(&mut self, o: Self) {
        for t in o.0 {
            self.insert(t);
        }
    }
}

/// Nothing per program: a detector whose findings are per thread (or per process) keeps them
/// itself.
impl Merge for () {
    fn merge(&mut self, _o: Self) {}
}

impl Merge for crate::kit::Timing {
    fn merge(&mut self, o: Self) {
        crate::kit::Timing::merge(self, o);
    }
}

impl Merge for crate::kit::Span {
    fn merge(&mut self, o: Self) {
        crate::kit::Span::merge(self, &o);
    }
}

impl Merge for crate::hist::Histogram {
    fn merge(&mut self, o: Self) {
        crate::hist::Histogram::merge(self, &o);
    }
}

/// A detector whose per-thread and per-program state the analyzer keeps ([`Host`]).
/// Its config, metadata and constructor come from its declaration ([`registry::Declared`],
/// written by [`detector!`](crate::detector)).
pub trait Hosted: registry::Declared {
    /// What the detector follows in one thread.
    type Thread: Default + Clone + Send + 'static;
    /// What the threads of one program add up to.
    type Program: Default + Clone + Send + Merge + 'static;
    /// What it follows per object of a process (a futex address, an fd: any number the
    /// detector names), `()` when nothing: ended when the process ends, when the detector says
    /// ([`State::end_object`]) and at the end, bounded by [`MAX_OBJECTS`](Self::MAX_OBJECTS).
    type Object: Default + Clone + Send + 'static;
    /// Threads (processes) followed at once; the calls of those beyond are left out, and
    /// counted.
    const MAX_THREADS: usize = 20_000;
    /// Objects followed at once (all processes together).
    const MAX_OBJECTS: usize = 50_000;
    /// The state is the process's, not each thread's: kept under its process, ended when the
    /// process ends (its main thread's exit), at an execve (with `EXEC_ENDS_THREAD`) and at
    /// the end ("thread" in the names below then means the process).
    const PER_PROCESS: bool = false;
    /// A successful execve ends the thread's state (its program's share is folded as at an
    /// exit) and the process is looked up afresh: the thread runs another program now. The
    /// execve itself is not passed on.
    const EXEC_ENDS_THREAD: bool = false;
    /// A syscall the interest names, with the state of its thread.
    fn on_syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall);
    /// A signal delivered to the thread, or an attach or detach note (with `notes` in the
    /// interest), with the state of its thread.
    fn on_note(&mut self, _s: &mut State<'_, Self>, _cx: &Ctx, _ev: &Event) {}
    /// The thread ended (it exited, or the trace did): what is left of it goes to its program.
    fn end_thread(&mut self, _s: &mut State<'_, Self>) {}
    /// An object ended: what is left of it goes to the program it was first seen in
    /// ([`State::program`] is that program here).
    fn end_object(&mut self, _s: &mut State<'_, Self>, _id: u64, _o: Self::Object) {}
    /// The findings, from the programs' state (unnamed processes already merged).
    fn report(&mut self, programs: Groups<'_, Self::Program>, cx: &FinishCtx) -> Vec<Finding>;
    /// Maps the detector keeps itself, keyed by thread or process (re-keyed on a pid alias).
    fn keyed(&mut self) -> Vec<&mut dyn Rekey> {
        Vec::new()
    }
    /// See [`Detector::on_excerpt`].
    fn on_excerpt(&self, _x: &crate::basis::Excerpt) -> Vec<Finding> {
        Vec::new()
    }
    /// See [`Detector::on_counts`].
    fn on_counts(&self, _c: &Counts) -> Vec<Finding> {
        Vec::new()
    }
}

/// A thread's state and the program it belongs to.
#[derive(Clone)]
struct Slot<T> {
    group: u32,
    tgid: Tgid,
    /// Its process is counted among the program's already (a detector that takes the program
    /// at every call looks nothing up again).
    counted: bool,
    state: T,
}

impl<T> Slot<T> {
    fn new(group: u32, tgid: Tgid, state: T) -> Self {
        Slot { group, tgid, counted: false, state }
    }
}

/// What a hosted detector reaches from one event: the state of the event's thread (made on
/// first use) and that thread's program.
pub struct State<'a, D: Hosted> {
    /// The thread, or the process's main thread with `PER_PROCESS`.
    tid: Tid,
    tgid: Tgid,
    model: &'a crate::model::Model,
    threads: &'a mut Bounded<Tid, Slot<D::Thread>>,
    /// Objects under (their process's main thread, their number).
    objects: &'a mut Bounded<(Tid, u64), Slot<D::Object>>,
    programs: &'a mut Programs,
    groups: &'a mut Vec<D::Program>,
    /// Ending an object: its program and process.
    ending: Option<(u32, Tgid)>,
    /// The time of the event (the call, the exit) the state is reached from.
    at: Option<i64>,
}

impl<D: Hosted> State<'_, D> {
    /// The thread's state, when the detector follows it already.
    pub fn existing(&mut self) -> Option<&mut D::Thread> {
        self.threads.get_mut(&self.tid).map(|s| &mut s.state)
    }

    /// The ending thread's state, taken from the detector (in `end_thread`), when it `did`
    /// something worth keeping: `let Some(th) = s.take_ended(|t| t.calls > 0) else { return };`.
    pub fn take_ended(&mut self, did: impl FnOnce(&D::Thread) -> bool) -> Option<D::Thread> {
        self.existing().filter(|t| did(t)).map(std::mem::take)
    }

    /// The thread's state, made (with `make`) on first use; `None` when the detector follows as
    /// many threads as it may (the call is counted as left out).
    pub fn thread_or(&mut self, make: impl FnOnce() -> D::Thread) -> Option<&mut D::Thread> {
        // one lookup for a thread followed already (most calls)
        let (programs, model, tid, tgid) = (&mut *self.programs, self.model, self.tid, self.tgid);
        self.threads.entry(tid, || Slot::new(programs.group(model, tid), tgid, make())).map(|s| &mut s.state)
    }

    /// [`thread_or`](Self::thread_or) with the default state.
    pub fn thread(&mut self) -> Option<&mut D::Thread> {
        self.thread_or(D::Thread::default)
    }

    /// The program of the thread (of its process, when the detector keeps nothing for the
    /// thread), which now counts the thread's process among its own: a detector takes it when
    /// the thread contributes to a finding.
    pub fn program(&mut self) -> &mut D::Program {
        let g = match (self.ending, self.threads.get_mut(&self.tid)) {
            (Some((g, tgid)), _) => {
                self.programs.count(g, tgid);
                g
            }
            (None, Some(s)) => {
                if !s.counted {
                    s.counted = true;
                    self.programs.count(s.group, s.tgid);
                }
                s.group
            }
            (None, None) => self.programs.counted(self.model, self.tid, self.tgid),
        };
        self.group_mut(g)
    }

    /// The program of the thread's process, without counting the process among its own (for
    /// what a program does that is no finding's evidence by itself).
    pub fn program_uncounted(&mut self) -> &mut D::Program {
        let g = match (self.ending, self.threads.get(&self.tid)) {
            (Some((g, _)), _) => g,
            (None, Some(s)) => s.group,
            (None, None) => self.programs.group(self.model, self.tid),
        };
        self.group_mut(g)
    }

    fn group_mut(&mut self, g: u32) -> &mut D::Program {
        let gi = g as usize;
        if self.groups.len() <= gi {
            self.groups.resize_with(gi + 1, D::Program::default);
        }
        &mut self.groups[gi]
    }

    /// The thread's state begins a new piece of work (a lookup) that belongs to the program
    /// its process runs now, not to the one it ran when the state was made: the next
    /// [`program`](Self::program) is that one, and counts the process in it again.
    pub fn regroup(&mut self) {
        let group = self.programs.group(self.model, self.tid);
        if let Some(s) = self.threads.get_mut(&self.tid) {
            (s.group, s.tgid, s.counted) = (group, self.tgid, false);
        }
    }

    /// The process of the thread may run another program now (a successful execve): the next
    /// [`program`](Self::program) looks it up afresh.
    pub fn forget_program(&mut self) {
        self.programs.forget(self.model, self.tid);
    }

    /// End the thread's state now, as at its exit (`d.end_thread`, then it is dropped): a
    /// detector whose runs start and stop within a thread's life (the next
    /// [`thread`](Self::thread) starts afresh, its program looked up again).
    pub fn end(&mut self, d: &mut D) {
        if self.threads.contains_key(&self.tid) {
            d.end_thread(self);
            self.threads.remove(&self.tid);
        }
    }

    /// Object `id` of the thread's process, made (with `make`) on first use; `None` when the
    /// detector follows as many objects as it may (the call is counted as left out).
    pub fn object_or(&mut self, id: u64, make: impl FnOnce() -> D::Object) -> Option<&mut D::Object> {
        let key = (self.tgid.main_thread(), id);
        let (programs, model, tid, tgid) = (&mut *self.programs, self.model, self.tid, self.tgid);
        self.objects.entry(key, || Slot::new(programs.group(model, tid), tgid, make())).map(|s| &mut s.state)
    }

    /// Object `id` of the thread's process, when the detector follows it already.
    pub fn existing_object(&mut self, id: u64) -> Option<&mut D::Object> {
        self.objects.get_mut(&(self.tgid.main_thread(), id)).map(|s| &mut s.state)
    }

    /// Whether the detector follows any object now (of any process): one whose objects are
    /// rare passes over the calls that could only touch one.
    pub fn has_objects(&self) -> bool {
        !self.objects.is_empty()
    }

    /// End object `id` of the thread's process now (`d.end_object`, then it is dropped).
    pub fn end_object(&mut self, id: u64, d: &mut D) {
        if let Some(slot) = self.objects.remove(&(self.tgid.main_thread(), id)) {
            self.ended(d, id, slot);
        }
    }

    fn ended(&mut self, d: &mut D, id: u64, slot: Slot<D::Object>) {
        let before = self.ending.replace((slot.group, slot.tgid));
        d.end_object(self, id, slot.state);
        self.ending = before;
    }

    /// The thread this state is for (the main thread's id with `PER_PROCESS`).
    pub fn tid(&self) -> Tid {
        self.tid
    }

    /// The process of the thread.
    pub fn tgid(&self) -> Tgid {
        self.tgid
    }

    /// When this happens: the call's start, the exit's time (what ends with a process ends
    /// then); `None` at the end of the trace, or without timestamps.
    pub fn at(&self) -> Option<i64> {
        self.at
    }
}

impl<'a, D: Hosted> State<'a, D> {
    /// The model of the trace so far (a thread's name and label when it ends).
    pub fn model(&self) -> &'a crate::model::Model {
        self.model
    }
}

/// The programs' state at the end, for [`Hosted::report`].
pub struct Groups<'a, P> {
    programs: &'a Programs,
    groups: &'a [P],
}

impl<'a, P> Groups<'a, P> {
    /// Each program with state, by group number.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &'a P)> {
        self.groups.iter().enumerate().map(|(g, p)| (g as u32, p))
    }
    /// Processes of program `g` that contributed.
    pub fn processes(&self, g: u32) -> u64 {
        self.programs.processes[g as usize]
    }
    /// The programs, for a finding about one ([`Draft::about_program`]).
    pub fn programs(&self) -> &'a Programs {
        self.programs
    }
    /// The findings of a detector whose findings are per program: `rule` says what it finds in
    /// each program's state, in the order of the programs (`None`: nothing), and each finding is
    /// about its program, with the number of its processes ([`Draft::about_program`]).
    pub fn findings(&self, model: &crate::model::Model, mut rule: impl FnMut(&'a P) -> Option<Draft>) -> Vec<Finding> {
        self.iter().filter_map(|(g, p)| Some(rule(p)?.about_program(self.programs, model, g).build())).collect()
    }
}

/// The analyzer's keeper of a [`Hosted`] detector's state.
#[derive(Clone)]
pub struct Host<D: Hosted> {
    detector: D,
    threads: Bounded<Tid, Slot<D::Thread>>,
    objects: Bounded<(Tid, u64), Slot<D::Object>>,
    programs: Programs,
    groups: Vec<D::Program>,
}

impl<D: Hosted> Host<D> {
    pub fn new(detector: D) -> Self {
        Host {
            detector,
            threads: Bounded::new(D::MAX_THREADS),
            objects: Bounded::new(D::MAX_OBJECTS),
            programs: Programs::default(),
            groups: Vec::new(),
        }
    }

    /// The state of thread `tid` of `tgid`, reached from an event at `at` (`None`: the end).
    fn state<'a>(
        &'a mut self,
        model: &'a crate::model::Model,
        tid: Tid,
        tgid: Tgid,
        at: Option<i64>,
    ) -> (&'a mut D, State<'a, D>) {
        let tid = if D::PER_PROCESS { tgid.main_thread() } else { tid };
        let s = State {
            tid,
            tgid,
            model,
            threads: &mut self.threads,
            objects: &mut self.objects,
            programs: &mut self.programs,
            groups: &mut self.groups,
            ending: None,
            at,
        };
        (&mut self.detector, s)
    }

    /// End the objects of process `tgid` (it ended, `at`), or all of them (`None`: the trace
    /// did), in the order of their keys (so that which of two equal objects gives the evidence
    /// does not depend on a hash).
    fn end_objects(&mut self, model: &crate::model::Model, tgid: Option<Tgid>, at: Option<i64>) {
        let mut ended: Vec<_> = match tgid {
            Some(t) => self.objects.take_where(|k| k.0 == t.main_thread()),
            None => self.objects.drain().collect(),
        };
        ended.sort_unstable_by_key(|e| e.0);
        for ((main, id), slot) in ended {
            // the process its key names: re-keyed on a pid alias since the object was made
            let (d, mut s) = self.state(model, main, main.as_process(), at);
            s.ended(d, id, slot);
        }
    }

    /// End the state kept under `key` at the end of the trace.
    fn end(&mut self, model: &crate::model::Model, key: Tid) {
        let Some(tgid) = self.threads.get(&key).map(|s| s.tgid) else { return };
        let (d, mut s) = self.state(model, key, tgid, None);
        s.end(d);
    }
}

impl<D: Hosted> Detector for Host<D> {
    fn meta(&self) -> &'static Meta {
        D::META
    }
    fn wants_exits(&self) -> bool {
        true
    }
    fn on_syscall(&mut self, cx: &Ctx, ev: &Event, sc: &Syscall) {
        if D::EXEC_ENDS_THREAD
            && matches!(sc.sys, Sys::Execve | Sys::Execveat)
            && matches!(sc.ret, syslint_event::Ret::Ok { .. })
        {
            let (d, mut s) = self.state(cx.model, ev.tid, cx.tgid, ev.ts_ns);
            s.end(d);
            s.forget_program();
            return;
        }
        let (d, mut s) = self.state(cx.model, ev.tid, cx.tgid, ev.ts_ns);
        d.on_syscall(&mut s, cx, ev, sc);
    }
    fn on_note(&mut self, cx: &Ctx, ev: &Event) {
        let (d, mut s) = self.state(cx.model, ev.tid, cx.tgid, ev.ts_ns);
        d.on_note(&mut s, cx, ev);
    }
    fn on_exit(&mut self, cx: &Ctx, ev: &Event) {
        if !D::PER_PROCESS || ev.tid.leads(cx.tgid) {
            let (d, mut s) = self.state(cx.model, ev.tid, cx.tgid, ev.ts_ns);
            s.end(d);
        }
        if ev.tid.leads(cx.tgid) && !self.objects.is_empty() {
            self.end_objects(cx.model, Some(cx.tgid), ev.ts_ns);
        }
    }
    fn keyed(&mut self) -> Vec<&mut dyn Rekey> {
        let mut v: Vec<&mut dyn Rekey> = vec![&mut self.threads, &mut self.objects, &mut self.programs];
        v.extend(self.detector.keyed());
        v
    }
    fn finish(&mut self, cx: &FinishCtx) -> Vec<Finding> {
        let tids: Vec<Tid> = self.threads.keys().copied().collect();
        for t in tids {
            self.end(cx.model, t);
        }
        self.end_objects(cx.model, None, None);
        self.programs.merge_unnamed_groups(cx.model, &mut self.groups, Merge::merge);
        self.detector.report(Groups { programs: &self.programs, groups: &self.groups }, cx)
    }
    fn stretch(&mut self, by: f64) {
        registry::Stretch::stretch(self.detector.config_mut(), by);
    }
    fn dropped(&self) -> Option<String> {
        let what = if D::PER_PROCESS { "processes" } else { "threads" };
        let parts: Vec<String> =
            [(self.threads.overflow(), what, D::MAX_THREADS), (self.objects.overflow(), "objects", D::MAX_OBJECTS)]
                .into_iter()
                .filter(|p| p.0 > 0)
                .map(|(n, what, cap)| format!("{n} calls of {what} beyond the {cap} it follows at once"))
                .collect();
        (!parts.is_empty()).then(|| format!("{}: {} were left out of its findings", D::META.name, parts.join(", and ")))
    }
    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        self.detector.on_excerpt(x)
    }
    fn on_counts(&self, c: &Counts) -> Vec<Finding> {
        self.detector.on_counts(c)
    }
}

/// The registry entry of a hosted detector: `hosted::<YieldSpin>()`.
pub const fn hosted<D: Hosted>() -> Entry {
    Entry { meta: D::META, make: make_hosted::<D>, defaults: registry::defaults_of::<D::Config> }
}

fn make_hosted<D: Hosted>(v: Option<&toml::Value>) -> Result<Box<dyn Detector>, String> {
    Ok(Box::new(Host::new(D::new(registry::config_of::<D::Config>(v)?))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Declared;
    use crate::Analyzer;
    use std::sync::{atomic::AtomicU64, Arc};
    use syslint_event::EventKind;

    /// A toy detector: sched_yield calls per thread, added up per program; at most `CAP`
    /// threads followed.
    #[derive(Clone)]
    struct Toy<const CAP: usize>(crate::detectors::yield_spin::Config);

    #[derive(Clone, Default)]
    struct Calls {
        calls: u64,
        threads: u64,
    }
    crate::merge!(Calls { calls: sum, threads: sum });

    impl<const CAP: usize> Declared for Toy<CAP> {
        type Config = crate::detectors::yield_spin::Config;
        const META: &'static Meta = &crate::detectors::yield_spin::META;
        fn new(cfg: Self::Config) -> Self {
            Toy(cfg)
        }
        fn config_mut(&mut self) -> &mut Self::Config {
            &mut self.0
        }
    }

    impl<const CAP: usize> Hosted for Toy<CAP> {
        type Thread = u64;
        type Program = Calls;
        type Object = ();
        const MAX_THREADS: usize = CAP;
        fn on_syscall(&mut self, s: &mut State<'_, Self>, _cx: &Ctx, _ev: &Event, sc: &Syscall) {
            if sc.sys == Sys::SchedYield {
                if let Some(n) = s.thread() {
                    *n += 1;
                }
            }
        }
        fn end_thread(&mut self, s: &mut State<'_, Self>) {
            let n = s.existing().map_or(0, |n| *n);
            s.program().merge(Calls { calls: n, threads: 1 });
        }
        fn report(&mut self, groups: Groups<'_, Calls>, cx: &FinishCtx) -> Vec<Finding> {
            let mut m = crate::kit::Metrics::new();
            for (g, p) in groups.iter() {
                m.count("calls", p.calls);
                m.count("threads", p.threads);
                m.count("processes", groups.processes(g));
            }
            vec![Self::META
                .finding(syslint_report::Severity::Info, String::new())
                .metrics(m)
                .about_program(groups.programs(), cx.model, 0)
                .build()]
        }
    }

    /// The yield-spin lab's spinning program (7 threads yield; every thread exits), through the
    /// real reader, with one toy detector; also the yields each thread made, counted here.
    fn run(d: Box<dyn Detector>) -> (syslint_report::Report, std::collections::BTreeMap<Tid, u64>) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../lab/yield-spin/traces/c-spin.f-tt-T-yy.strace.gz");
        let src = syslint_capture::input::expand_sources(&[path]).expect("lab trace");
        let mut a = Analyzer::new(vec![d]);
        let mut seen = std::collections::BTreeMap::new();
        syslint_capture::read_strace(&src, Arc::new(AtomicU64::new(0)), |e| {
            if let EventKind::Syscall(sc) = &e.kind {
                if sc.sys == Sys::SchedYield {
                    *seen.entry(e.tid).or_insert(0) += 1;
                }
            }
            a.on_event(e);
        })
        .expect("read");
        (a.finish(syslint_report::Capture::default()), seen)
    }

    #[test]
    fn the_host_keeps_each_thread_until_it_ends_and_adds_them_up_per_program() {
        let (r, seen) = run(Box::new(Host::new(Toy::<20_000>(Default::default()))));
        assert_eq!(seen.len(), 7);
        let f = &r.findings[0];
        assert_eq!(f.metrics["calls"], seen.values().sum::<u64>());
        // each thread ended once (its exit), and they are one process of one program
        assert_eq!((f.metrics["threads"].as_u64(), f.metrics["processes"].as_u64()), (Some(7), Some(1)));
        assert_eq!(f.about.as_ref().and_then(|a| a.program.as_deref()), Some("lock"));
        assert!(r.capture.warnings.is_empty(), "{:?}", r.capture.warnings);
    }

    #[test]
    fn threads_beyond_the_bound_are_left_out_and_the_report_says_how_many_calls() {
        let (r, seen) = run(Box::new(Host::new(Toy::<2>(Default::default()))));
        let f = &r.findings[0];
        let kept = f.metrics["calls"].as_u64().expect("calls");
        // two at once: a thread that exits makes room for the next, and the rest are left out
        let threads = f.metrics["threads"].as_u64().expect("threads");
        assert!(threads > 2 && threads < 7, "{threads}");
        let left = seen.values().sum::<u64>() - kept;
        let w = r.capture.warnings.iter().find(|w| w.starts_with("yield-spin:")).expect("a warning");
        assert!(w.contains(&format!("{left} calls of threads beyond the 2 it follows at once")), "{w}");
    }

    #[test]
    fn merge_rules_apply_field_by_field() {
        #[derive(Default)]
        struct G {
            n: u64,
            longest: f64,
            bits: u16,
            best: Best<&'static str>,
        }
        crate::merge!(G { n: sum, longest: max, bits: or, best: merge });
        let mut a = G { n: 2, longest: 1.5, bits: 0b01, best: Best::new(3, "a") };
        a.merge(G { n: 5, longest: 0.5, bits: 0b10, best: Best::new(3, "tie keeps the first") });
        a.merge(G { n: 1, longest: 2.5, bits: 0, best: Best::new(4, "b") });
        assert_eq!((a.n, a.longest, a.bits, a.best.get().copied()), (8, 2.5, 0b11, Some("b")));
    }
}
