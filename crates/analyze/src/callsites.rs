//! Call sites (issue 31): where in the program the calls a finding is about are made.
//!
//! One rule for every detector: the analyzer counts, per thread and syscall, the stacks its
//! calls came with ([`CallSites::on_call`], bounded); a finding's calls are the threads and
//! syscalls its evidence lines show ([`calls_of`]: every detector's evidence is strace lines,
//! `PID [TIME] name(...`); its call sites are the stacks of those calls, most first, each
//! with its share of them. The frame named first is the innermost one the program
//! owns: JIT code named by a runtime's perf map ([`Frame::is_jit`]: a JS function, a Java
//! method; not the runtime's own, [`Frame::is_runtime_jit`]), else the innermost not in the C library, the loader, the vDSO or libpthread
//! ([`Frame::is_runtime`]);
//! the whole stack is kept, down to the syscall.

use rustc_hash::FxHashMap as HashMap;
use syslint_event::{Frame, StackId, StackTable, Sys, Syscall, Tid};
use syslint_report::{CallSite, Finding, StackFrame};

/// (thread, syscall) pairs counted at most; calls of others are counted as dropped.
const MAX_KEYS: usize = 1 << 16;
/// Distinct stacks counted per thread and syscall; calls from others count as `other`.
const MAX_PER_KEY: usize = 32;

#[derive(Default, Debug)]
struct Sites {
    stacks: Vec<(StackId, u64)>,
    /// Calls from stacks beyond [`MAX_PER_KEY`].
    other: u64,
}

/// The stacks of the calls, counted per thread and syscall.
#[derive(Default, Debug)]
pub struct CallSites {
    counts: HashMap<(Tid, Sys), Sites>,
    /// Calls with a stack not counted ([`MAX_KEYS`] pairs counted already).
    pub dropped: u64,
    /// Calls with a stack.
    pub calls: u64,
    /// Threads learnt to be others (a log's pid-less lines): (was, is), for pairs detectors
    /// counted under the old name.
    aliases: Vec<(Tid, Tid)>,
}

impl CallSites {
    /// Count a call's stack, if it has one.
    #[inline]
    pub fn on_call(&mut self, tid: Tid, sc: &Syscall) {
        if let Some(s) = sc.stack() {
            self.add(tid, sc.sys, s, 1);
        }
    }

    /// Count `n` calls of `sys` by `tid` from stack `s` (a sampled stack stands for the calls
    /// its sample was weighed with: eBPF samples the first calls, then one in N).
    pub fn add(&mut self, tid: Tid, sys: Sys, s: StackId, n: u64) {
        self.calls += n;
        let full = self.counts.len() >= MAX_KEYS;
        let sites = match self.counts.get_mut(&(tid, sys)) {
            Some(x) => x,
            None if full => {
                self.dropped += n;
                return;
            }
            None => self.counts.entry((tid, sys)).or_default(),
        };
        let room = sites.stacks.len() < MAX_PER_KEY;
        match sites.stacks.iter_mut().find(|(id, _)| *id == s) {
            Some((_, m)) => *m += n,
            None if room => sites.stacks.push((s, n)),
            None => sites.other += n,
        }
    }

    /// Thread `old`'s calls are `new`'s (the pid-less lines of a log were `new`'s).
    pub fn rekey(&mut self, old: Tid, new: Tid) {
        if self.aliases.len() < 1024 {
            self.aliases.push((old, new));
        }
        let keys: Vec<(Tid, Sys)> = self.counts.keys().filter(|k| k.0 == old).copied().collect();
        for k in keys {
            if let Some(s) = self.counts.remove(&k) {
                let into = self.counts.entry((new, k.1)).or_default();
                for (id, n) in s.stacks {
                    match into.stacks.iter_mut().find(|(i, _)| *i == id) {
                        Some((_, m)) => *m += n,
                        None => into.stacks.push((id, n)),
                    }
                }
                into.other += s.other;
            }
        }
    }

    /// The call sites of `f`'s calls, most calls first, at most [`CallSite::MAX`].
    pub fn of(&self, f: &Finding, table: &StackTable) -> Vec<CallSite> {
        let mut keys = keys_of(f);
        for k in &mut keys {
            if let Some(&(_, new)) = self.aliases.iter().rev().find(|(old, _)| *old == k.0) {
                k.0 = new;
            }
        }
        keys.sort_unstable();
        keys.dedup();
        let mut by_stack: HashMap<StackId, u64> = HashMap::default();
        let mut total = 0u64;
        for k in &keys {
            let Some(s) = self.counts.get(k) else { continue };
            for &(id, n) in &s.stacks {
                *by_stack.entry(id).or_default() += n;
                total += n;
            }
            total += s.other;
        }
        let mut sites: Vec<(StackId, u64)> = by_stack.into_iter().collect();
        sites.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        sites
            .into_iter()
            .take(CallSite::MAX)
            .map(|(id, n)| {
                let frames: Vec<&Frame> = table.frames_of(id).collect();
                // a JS or Java function (JIT code named by a perf map) is the program's own
                // code, the runtime's native frames under it and its platform's methods (the
                // JDK's, node's) are not; where only those are named, the innermost of them
                // is the API the program called
                // (a Go binary holds its runtime and standard library: their functions are
                // told by package)
                let go = go_module(&frames);
                let runtime =
                    |f: &&Frame| f.is_runtime() || (go.is_some() && f.module.as_deref() == go && is_go_std(f));
                let owner = frames
                    .iter()
                    .position(|f| f.is_jit() && !f.is_runtime())
                    .or_else(|| frames.iter().position(|f| f.is_jit()))
                    .or_else(|| frames.iter().position(|f| !runtime(f)));
                CallSite {
                    calls: n,
                    share: n as f64 / total.max(1) as f64,
                    owner,
                    frames: frames.into_iter().map(wire).collect(),
                }
            })
            .collect()
    }
}

/// The module of a stack's Go code (its runtime's functions are in the program's binary).
fn go_module<'a>(frames: &[&'a Frame]) -> Option<&'a str> {
    frames
        .iter()
        .find(|f| {
            f.symbol.as_deref().is_some_and(|s| {
                s.starts_with("runtime.")
                    || s.starts_with("internal/runtime/")
                    || s.starts_with("internal/poll.")
                    || s.starts_with("syscall.Syscall")
                    || s.starts_with("syscall.RawSyscall")
            })
        })
        .and_then(|f| f.module.as_deref())
}

/// A Go function of the runtime, the standard library (whose import paths have no dot in
/// their first element: `syscall`, `internal/poll`, `net/http`) or golang.org/x/sys, not the
/// program's own (`main.main`, `github.com/org/app.Serve`).
fn is_go_std(f: &Frame) -> bool {
    let Some(s) = f.symbol.as_deref() else { return false };
    if s.starts_with("golang.org/x/sys/") {
        return true;
    }
    // the package path ends at the first dot after its last slash
    let last = s.rfind('/').map_or(0, |i| i + 1);
    let Some(dot) = s[last..].find('.') else { return false };
    let path = &s[..last + dot];
    let first = path.split('/').next().unwrap_or(path);
    path != "main" && !first.contains('.')
}

/// The (thread, syscall) pairs of the calls `f` counts: as its detector named them
/// ([`Finding::calls`]), else as its evidence lines show them.
fn keys_of(f: &Finding) -> Vec<(Tid, Sys)> {
    if f.calls.is_empty() {
        return calls_of(&f.evidence);
    }
    f.calls.iter().map(|&(t, s)| (Tid(t), Sys::from_name(s))).filter(|k| k.1 != Sys::Other).collect()
}

/// The (thread, syscall) pairs of evidence lines: `PID [TIME] name(...` as evidence renders
/// calls (a line without a pid column is thread 0's, as the reader names it), sorted, once each.
pub fn calls_of(evidence: &[String]) -> Vec<(Tid, Sys)> {
    let mut out: Vec<(Tid, Sys)> = evidence
        .iter()
        .filter_map(|l| {
            let mut words = l.split(' ').filter(|w| !w.is_empty()).peekable();
            let tid = match words.peek().and_then(|w| w.parse::<u32>().ok()) {
                Some(t) => {
                    words.next();
                    t
                }
                None => 0,
            };
            let mut w = words.next()?;
            if w.starts_with(|c: char| c.is_ascii_digit()) {
                // the time
                w = words.next()?;
            }
            let name = &w[..w.find('(')?];
            let sys = Sys::from_name(name);
            (sys != Sys::Other).then_some((Tid(tid), sys))
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The syscalls the detectors name in their interest (by name or class), sorted: what strace
/// traces with stacks under `trace --stacks sampled`. A detector that counts every call
/// (busy-poll's "calls that did nothing") sees only these then.
pub fn watched_syscalls(detectors: &[Box<dyn crate::registry::Detector>]) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = (0..Sys::COUNT)
        .map(Sys::from_index)
        .filter(|&s| s != Sys::Other)
        .filter(|&s| {
            detectors.iter().any(|d| {
                let i = &d.meta().interest;
                i.syscalls.contains(&s) || i.classes.iter().any(|&c| s.is(c))
            })
        })
        .map(Sys::name)
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

fn wire(f: &Frame) -> StackFrame {
    StackFrame {
        module: f.module.clone(),
        symbol: f.symbol.clone(),
        offset: f.offset,
        addr: f.addr,
        file: f.file.clone(),
        line: f.line,
        error: f.error.clone(),
    }
}

/// The command that records `f`'s calls with their stacks, for a finding from an input
/// without stacks: strace `-k` on the syscalls its evidence shows (`-k` on every call costs
/// an unwind per stop; `-e trace=` keeps it to these).
pub fn stacks_command(f: &Finding) -> Option<String> {
    let mut names: Vec<&str> = keys_of(f).into_iter().map(|(_, s)| s.name()).collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        return None;
    }
    Some(format!("strace -f -k -tt -T -e trace={} -o stacks.strace COMMAND (or -p PID)", names.join(",")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_standard_library_functions_are_told_from_the_programs() {
        let f = |s: &str| Frame { symbol: Some(s.into()), module: Some("/srv/app".into()), ..Default::default() };
        for std in [
            "internal/runtime/syscall/linux.Syscall6",
            "syscall.Syscall",
            "syscall.read",
            "internal/poll.(*FD).Read",
            "net/http.(*conn).serve",
            "runtime.goexit",
            "golang.org/x/sys/unix.Read",
        ] {
            assert!(is_go_std(&f(std)), "{std}");
        }
        for own in ["main.main", "main.main.func1", "github.com/org/app.Serve", "example.com/x/y.(*T).Run"] {
            assert!(!is_go_std(&f(own)), "{own}");
        }
        let frames = [f("syscall.Syscall"), f("syscall.read"), f("main.main")];
        let refs: Vec<&Frame> = frames.iter().collect();
        assert_eq!(go_module(&refs), Some("/srv/app"));
        let c = [f("wait_for_reply.constprop.0")];
        assert_eq!(go_module(&c.iter().collect::<Vec<_>>()), None, "a C function's clone is not Go");
    }
}
