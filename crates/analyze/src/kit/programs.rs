//! Processes grouped by the program they run (the model's comm, set by execve), so the
//! workers of one program are one subject of a finding, whatever their number.

use crate::model::Model;
use rustc_hash::FxHashMap as HashMap;
use syslint_event::{Tgid, Tid};
use syslint_report::{Subject, SubjectKind};

/// Most programs told apart; the rest share one `(other programs)` group.
const MAX_PROGRAMS: usize = 256;
/// Processes remembered per program (for the subject line).
const MAX_PIDS_SHOWN: usize = 5;
/// Process-to-program cache size (cleared when full).
const MAX_TGIDS: usize = 65_536;

/// Processes grouped by program name (the model's comm, set by execve), so workers of one
/// program are one subject. A process whose name is unknown is a program of its own.
#[derive(Clone, Default)]
pub struct Programs {
    of_tgid: HashMap<Tgid, u32>,
    by_key: HashMap<String, u32>,
    /// Program name, `pid N` when unknown, or `(other programs)`.
    pub keys: Vec<String>,
    /// Whether the key is a program name (several processes may share it).
    named: Vec<bool>,
    /// First few processes seen, and how many.
    pids: Vec<Vec<Tgid>>,
    pub processes: Vec<u64>,
    /// The processes counted in each program (so a process counts once, however often a
    /// detector says it contributed), up to [`MAX_TGIDS`].
    counted: rustc_hash::FxHashSet<(Tgid, u32)>,
    /// The process [`counted`](Self::counted) answered for last, and its program.
    last: Option<(Tgid, u32)>,
}

impl Programs {
    /// The program process `tgid` (thread `pid`'s) runs now, the process counted as one of its
    /// processes. The last process asked about is remembered (consecutive calls mostly come
    /// from one: a detector that counts every call of a program asks once per call) until
    /// [`forget`](Self::forget) or a pid alias.
    pub fn counted(&mut self, model: &Model, pid: Tid, tgid: Tgid) -> u32 {
        if let Some((t, g)) = self.last {
            if t == tgid {
                return g;
            }
        }
        let g = self.group(model, pid);
        self.count(g, tgid);
        self.last = Some((tgid, g));
        g
    }

    /// The program a thread's process runs now, without counting the process in it yet (for a
    /// detector that learns only later whether the process matters: [`Programs::count`]).
    pub fn group(&mut self, model: &Model, pid: Tid) -> u32 {
        let tgid = model.tgid(pid);
        if let Some(&g) = self.of_tgid.get(&tgid) {
            return g;
        }
        let (key, named) = match model.comm(tgid.main_thread()) {
            Some(c) => (c.to_string(), true),
            None => (model.label(tgid.main_thread()), false),
        };
        let g = match self.by_key.get(&key) {
            Some(&g) => g,
            None => {
                let (key, named) = if self.keys.len() + 1 >= MAX_PROGRAMS {
                    ("(other programs)".to_string(), true)
                } else {
                    (key, named)
                };
                match self.by_key.get(&key) {
                    Some(&g) => g,
                    None => {
                        let g = self.keys.len() as u32;
                        self.by_key.insert(key.clone(), g);
                        self.keys.push(key);
                        self.named.push(named);
                        self.pids.push(Vec::new());
                        self.processes.push(0);
                        g
                    }
                }
            }
        };
        if self.of_tgid.len() >= MAX_TGIDS {
            self.of_tgid.clear();
        }
        self.of_tgid.insert(tgid, g);
        g
    }

    /// Process `tgid` is one of program `g`'s (counted once).
    pub fn count(&mut self, g: u32, tgid: Tgid) {
        let gi = g as usize;
        if gi >= self.pids.len() || self.pids[gi].contains(&tgid) {
            return;
        }
        if self.counted.contains(&(tgid, g)) {
            return;
        }
        if self.counted.len() < MAX_TGIDS {
            self.counted.insert((tgid, g));
        }
        self.processes[gi] += 1;
        if self.pids[gi].len() < MAX_PIDS_SHOWN {
            self.pids[gi].push(tgid);
        }
    }

    /// The process of `pid` may run another program now (a successful execve).
    pub fn forget(&mut self, model: &Model, pid: Tid) {
        self.last = None;
        self.of_tgid.remove(&model.tgid(pid));
    }

    /// At the end: a process first seen without a name (a vfork child searching PATH before
    /// its execve, a child whose fork had not returned yet) joins its parent's program, or its
    /// own once it has a name. Returns the group each group merges into (itself when it
    /// stays); targets always stay.
    pub fn merge_unnamed(&mut self, model: &Model) -> Vec<usize> {
        let mut target: Vec<usize> = (0..self.keys.len()).collect();
        let mut parent_of: HashMap<Tgid, Option<Tgid>> = HashMap::default();
        if self.named.iter().any(|n| !n) {
            for p in model.procs.iter().filter(|p| !p.absorbed) {
                parent_of.insert(p.pid, p.parent);
            }
        }
        #[allow(clippy::needless_range_loop)] // g indexes five parallel vectors
        for g in 0..self.keys.len() {
            if self.named[g] {
                continue;
            }
            let Some(&tgid) = self.pids[g].first() else { continue };
            let parent = parent_of.get(&tgid).copied().flatten();
            let keys = [
                parent.and_then(|p| model.comm(p.main_thread()).map(str::to_string)),
                model.comm(tgid.main_thread()).map(str::to_string),
            ];
            let existing =
                keys.iter().flatten().find_map(|k| self.by_key.get(k).copied().filter(|&t| self.named[t as usize]));
            match existing {
                Some(t) => {
                    let t = t as usize;
                    target[g] = t;
                    self.processes[t] += self.processes[g];
                    for p in std::mem::take(&mut self.pids[g]) {
                        if self.pids[t].len() < MAX_PIDS_SHOWN && !self.pids[t].contains(&p) {
                            self.pids[t].push(p);
                        }
                    }
                    self.processes[g] = 0;
                }
                None => {
                    // becomes a program of its own name
                    if let Some(k) = keys.into_iter().flatten().next() {
                        self.by_key.remove(&self.keys[g]);
                        self.by_key.insert(k.clone(), g as u32);
                        self.keys[g] = k;
                        self.named[g] = true;
                    }
                }
            }
        }
        target
    }

    /// The group as data: the program, when it has a name.
    pub fn about(&self, g: u32) -> Subject {
        let gi = g as usize;
        Subject::new(SubjectKind::Program).program(self.named[gi].then_some(self.keys[gi].as_str()))
    }

    /// [`merge_unnamed`](Self::merge_unnamed), and each merged group's counts in `groups`
    /// (indexed by group) taken into the group it joins with `absorb`.
    pub fn merge_unnamed_groups<G: Default>(&mut self, model: &Model, groups: &mut [G], absorb: impl Fn(&mut G, G)) {
        let target = self.merge_unnamed(model);
        for (g, &t) in target.iter().enumerate() {
            if t != g && g < groups.len() && t < groups.len() {
                let o = std::mem::take(&mut groups[g]);
                absorb(&mut groups[t], o);
            }
        }
    }

    /// `pid 12 (php)` for one process, `4 processes of search (pids 12, 13, 14, 15)` for more.
    pub fn subject(&self, model: &Model, g: u32) -> String {
        let gi = g as usize;
        let n = self.processes[gi];
        match self.pids[gi].as_slice() {
            [one] if n == 1 => model.label(one.main_thread()),
            pids => {
                let list: Vec<String> = pids.iter().map(std::string::ToString::to_string).collect();
                let more = if n as usize > pids.len() { ", ..." } else { "" };
                format!("{n} processes of {} (pids {}{more})", self.keys[gi], list.join(", "))
            }
        }
    }
}

/// The process first shown as `old` is `new` (a pid alias): its cached program and its place
/// in the subject's pid list follow.
impl super::Rekey for Programs {
    fn alias(&mut self, old: Tid, new: Tid) {
        self.last = None;
        self.of_tgid.alias(old, new);
        self.counted.alias(old, new);
        for pids in &mut self.pids {
            for p in pids.iter_mut().filter(|p| old.leads(**p)) {
                *p = new.as_process();
            }
        }
    }
}
