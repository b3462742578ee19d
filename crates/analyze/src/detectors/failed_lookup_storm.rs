//! `failed-lookup-storm` (SL007): path lookups failing with ENOENT again and again, from a
//! search path walked on every use (PHP's include_path, a PATH search, LD_LIBRARY_PATH, a
//! program's own plugin path) or from the same missing path being probed over and over.
//!
//! Findings are per program: the processes that ran the same program (same name after
//! execve) are one subject, so a pool of workers gives one finding, not one per worker.

use super::{Evidence, EvidenceBuf, Span};
use crate::host::{Best, Capped, Groups, Hosted, Merge, State};
use crate::kit::{Calls, Metrics};
use crate::model::Model;
use crate::registry::{Ctx, FinishCtx};
use rustc_hash::FxHashMap as HashMap;
use syslint_event::{args, Class, Event, Ret, Syscall, TargetKind, Tid};
use syslint_report::{Finding, Severity};

crate::detector!("failed_lookup_storm", FailedLookupStorm { cfg, tracked_paths: 0 });

impl Group {
    /// Failures of a path that had already failed.
    fn repeated(&self) -> u64 {
        self.failed.saturating_sub(self.paths.0.len() as u64 + self.untracked)
    }
}

#[derive(Clone, Default)]
pub struct Group {
    failed: u64,
    timed: u64,
    failed_ns: u64,
    /// Failures of paths not remembered (over [`MAX_PATHS`]).
    untracked: u64,
    searches: u64,
    search_misses: u64,
    opens: u64,
    /// All syscalls of the program.
    calls: u64,
    span: Span,
    /// Failing path -> failures.
    paths: Paths,
    /// Directory -> failures in it.
    dirs: Capped<Box<str>, Failures, MAX_DIRS>,
    /// The first failures and the last (for programs whose failures are repeats without a
    /// search).
    evidence: Option<EvidenceBuf>,
    /// The longest search seen, scored by its misses: its first misses, its last miss and the
    /// hit.
    sample: Best<Vec<Evidence>>,
    /// Which threads' calls of which syscalls failed (the call sites' calls: the sample is one
    /// search, maybe not where most failures are).
    counted: Calls,
}

crate::merge!(Group {
    failed: sum,
    timed: sum,
    failed_ns: sum,
    untracked: sum,
    searches: sum,
    search_misses: sum,
    opens: sum,
    calls: sum,
    span: merge,
    paths: merge,
    dirs: merge,
    evidence: first,
    sample: merge,
    counted: merge,
});

/// Failing paths and their failures (bounded over all programs together: [`MAX_PATHS`]).
#[derive(Clone, Default)]
pub struct Paths(HashMap<Box<str>, u32>);

impl Merge for Paths {
    fn merge(&mut self, o: Self) {
        for (p, n) in o.0 {
            *self.0.entry(p).or_insert(0) += n;
        }
    }
}

/// Failures in one directory.
#[derive(Clone, Copy, Default)]
pub struct Failures(u64);

impl Merge for Failures {
    fn merge(&mut self, o: Self) {
        self.0 += o.0;
    }
}

/// A search in progress on one thread: one name failing in one directory after another.
#[derive(Clone, Default)]
pub struct Search {
    base: String,
    /// The last failed path (to recognise the directory checks between tries).
    last: String,
    misses: u64,
    /// Evidence: the first two misses and the latest one.
    first: Vec<Evidence>,
    latest: Option<Evidence>,
}

#[derive(Clone)]
pub struct FailedLookupStorm {
    cfg: Config,
    /// Failing paths remembered, of [`MAX_PATHS`].
    tracked_paths: usize,
}

impl FailedLookupStorm {
    fn failed(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        let Some(path) = full_path(cx.model, ev.tid, sc) else { return };
        let tracked = self.tracked_paths < MAX_PATHS;
        let gr = s.program();
        gr.failed += 1;
        gr.counted.add(ev.tid, sc.sys);
        if let Some(d) = sc.dur_ns {
            gr.timed += 1;
            gr.failed_ns += d;
        }
        gr.span.add(ev.ts_ns);
        if gr.sample.get().is_none() {
            // fallback evidence, for programs whose failures are repeats without a search
            gr.evidence.get_or_insert_with(|| EvidenceBuf::new(3)).push(ev);
        }
        match gr.paths.0.get_mut(path.as_str()) {
            Some(n) => *n = n.saturating_add(1),
            None if tracked => {
                gr.paths.0.insert(path.as_str().into(), 1);
                self.tracked_paths += 1;
            }
            None => gr.untracked += 1,
        }
        let (dir, base) = split(&path);
        match gr.dirs.0.get_mut(dir) {
            Some(n) => n.0 += 1,
            None => {
                if gr.dirs.0.len() < MAX_DIRS {
                    gr.dirs.0.insert(dir.into(), Failures(1));
                }
            }
        }
        // the search this failure belongs to (a thread's search ends at an execve: it runs
        // another program then)
        if let Some(search) = s.existing() {
            if search.base == base {
                search.misses += 1;
                search.last.clear();
                search.last.push_str(&path);
                if search.first.len() < 2 {
                    search.first.push(Evidence::of(ev));
                } else if let Some(l) = search.latest.as_mut() {
                    l.refill(ev);
                } else {
                    search.latest = Some(Evidence::of(ev));
                }
                return;
            }
            // a check of a directory on the way (the loader stats the directory it missed in)
            let last = &search.last;
            if last.len() > path.len() && last.starts_with(path.as_str()) && last.as_bytes()[path.len()] == b'/' {
                return;
            }
        }
        let base = base.to_string();
        let first = vec![Evidence::of(ev)];
        let search = Search { base, last: path, misses: 1, first, latest: None };
        match s.existing() {
            Some(old) => *old = search,
            None => {
                s.thread_or(|| search);
            }
        }
    }

    fn found(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        if sc.sys.is(Class::OPEN) {
            s.program().opens += 1;
        }
        let Some(search) = s.existing() else { return };
        // the name first: it does not depend on the directory the path is resolved in, and
        // most successful lookups are of other names (no path is built for those)
        let Some(p) = sc.path() else { return };
        if p.is_empty() || split(&p).1 != search.base {
            return;
        }
        let Some(path) = resolve(cx.model, ev.tid, sc, &p) else { return };
        let (dir, base) = split(&path);
        if base != search.base {
            return;
        }
        let search = std::mem::take(search);
        s.end(self);
        // found where it had just failed: created in between, not a search
        if split(&search.last).0 == dir {
            return;
        }
        let gr = s.program();
        gr.searches += 1;
        gr.search_misses += search.misses;
        if search.misses > gr.sample.score {
            let mut sample = search.first;
            sample.extend(search.latest);
            sample.push(Evidence::of(ev));
            gr.sample = Best::new(search.misses, sample);
        }
    }
}

/// The path a lookup names, made absolute with the directory fd's `-yy` path when strace
/// printed one (relative paths stay relative otherwise). `None` for fd-only calls (`""`).
fn full_path(model: &Model, pid: Tid, sc: &Syscall) -> Option<String> {
    let p = sc.path()?;
    resolve(model, pid, sc, &p)
}

/// `p`, a path argument of `sc`, made absolute with the directory fd's path (`-yy`, or the
/// model's when the fd was opened in the trace); relative paths of AT_FDCWD stay relative
/// unless strace printed the working directory. `None` for an empty path.
pub(crate) fn resolve(model: &Model, pid: Tid, sc: &Syscall, p: &str) -> Option<String> {
    if p.is_empty() {
        return None;
    }
    if p.starts_with('/') {
        return Some(p.to_string());
    }
    let dir = if sc.sys.is(Class::AT) {
        let fd = sc.dir_fd()?;
        match fd.deco {
            Some(d) => Some(args::unescape(d).into_owned()),
            None if fd.num >= 0 => {
                model.lookup_fd(pid, fd.num).filter(|t| t.kind == TargetKind::File).map(|t| t.display.to_string())
            }
            None => None,
        }
    } else {
        None
    };
    Some(match dir {
        Some(d) => format!("{}/{}", d.trim_end_matches('/'), p),
        None => p.to_string(),
    })
}

/// `/a/b/c` -> (`/a/b`, `c`); `c` -> (`.`, `c`); `/c` -> (`/`, `c`).
fn split(path: &str) -> (&str, &str) {
    match path.rsplit_once('/') {
        Some(("", b)) => ("/", b),
        Some((d, b)) => (d, b),
        None => (".", path),
    }
}

impl Hosted for FailedLookupStorm {
    /// The search in progress on the thread, if any.
    type Thread = Search;
    type Program = Group;
    type Object = ();
    const MAX_THREADS: usize = MAX_SEARCHES;

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        // an exec walks PATH: execve in each directory until the program is found, once per
        // command (a shell's or execvp's search, oils#44). One walk is a few failures of one
        // name in as many directories; only the same path failing again is a repeat
        let mut tried: std::collections::HashSet<(syslint_event::Tid, &str)> = Default::default();
        let walk: Vec<bool> = x
            .calls
            .iter()
            .map(|c| {
                c.sys.is(syslint_event::Class::EXEC) && c.path.as_deref().is_some_and(|p| tried.insert((c.tid, p)))
            })
            .collect();
        let lookup = |i: usize| {
            let c = &x.calls[i];
            c.sys.is(syslint_event::Class::LOOKUP) && c.path.is_some() && !walk[i]
        };
        let lookups = (0..x.calls.len()).filter(|&i| lookup(i)).count() as u64;
        // failed lookups per file name, and the directories it was missing from
        let mut by: std::collections::BTreeMap<String, (std::collections::BTreeSet<String>, Vec<usize>)> = Default::default();
        let mut failed = 0u64;
        for (i, c) in x.calls.iter().enumerate() {
            if !lookup(i) || !(c.failed("ENOENT") || c.failed("ENOTDIR")) {
                continue;
            }
            failed += 1;
            let p = c.path.as_deref().unwrap_or("");
            let (dir, base) = p.rsplit_once('/').unwrap_or(("", p));
            let e = by.entry(base.to_string()).or_default();
            e.0.insert(dir.to_string());
            e.1.push(i);
        }
        // the dynamic loader looks for each library in a few directories at start-up: that is
        // not a storm unless it goes on
        let Some((name, (dirs, idx))) = by
            .into_iter()
            .filter(|(n, v)| v.0.len() >= 3 && !(n.contains(".so") && v.1.len() < 20))
            .max_by_key(|(_, v)| v.1.len())
        else {
            return Vec::new();
        };
        if failed * 3 < lookups {
            return Vec::new();
        }
        // fewer than 6 failures: a search of one name along several directories (an
        // autoloader's, swoole#2419), named at low when it misses in at least 4 of them
        let short = failed < 6;
        if short && (dirs.len() < 4 || idx.len() < 4) {
            return Vec::new();
        }
        let about = syslint_report::Subject::new(syslint_report::SubjectKind::File).name(name.clone());
        let conf = Confidence::medium_if(!short);
        let why = if short {
            format!("{name} missing in {} directories, {failed} failed lookups: one search, too few lines to say it repeats", dirs.len())
        } else {
            format!("{name} missing in {} directories", dirs.len())
        };
        META.finding(
            if short { Severity::Info } else { Severity::Warning },
            format!("the same file looked for in {} directories and missing: {name} ({} failed lookups of it, {failed} of {lookups} lookups failed)", dirs.len(), idx.len()),
        )
        .about(name, about)
        .metrics([
            ("failed_lookups", failed.into()),
            ("lookups", lookups.into()),
            ("directories", (dirs.len() as u64).into()),
        ])
        .lines(x.evidence(&idx, 4))
        .in_excerpt(x, conf, &why)
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, per_second, SysRows};
        use syslint_event::Sys;
        use syslint_report::Confidence;
        const LOOKUP: &[Sys] = &[
            Sys::Stat, Sys::Lstat, Sys::Stat64, Sys::Lstat64, Sys::Newfstatat, Sys::Fstatat64, Sys::Statx, Sys::Access,
            Sys::Faccessat, Sys::Faccessat2, Sys::Open, Sys::Openat, Sys::Openat2, Sys::Readlink, Sys::Readlinkat,
        ];
        let calls = c.calls_of(LOOKUP);
        let errors = c.errors_of(LOOKUP);
        if errors < 1000 || errors * 5 < calls {
            return Vec::new();
        }
        let rate = per_second(c, errors, 0);
        META.finding(
            Severity::Warning,
            format!("path lookups fail again and again: {errors} of {calls} lookup calls failed{rate}"),
        )
        .metrics([("failed_lookups", errors.into()), ("lookups", calls.into())])
        .lines(count_lines(c, LOOKUP))
        .in_table(
            c,
            Confidence::Medium,
            &format!("{errors} failed lookups, {:.0}% of all lookups; the table shows no paths, so which search fails is unknown", errors as f64 * 100.0 / calls as f64),
        )
    }

    fn on_syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        s.program().calls += 1;
        if !(sc.sys.is(Class::LOOKUP) || sc.sys.is(Class::EXEC)) {
            return;
        }
        match &sc.ret {
            Ret::Err { errno, .. } if *errno == "ENOENT" || *errno == "ENOTDIR" => self.failed(s, cx, ev, sc),
            Ret::Ok { .. } => {
                self.found(s, cx, ev, sc);
                if sc.sys.is(Class::EXEC) {
                    // another program now: a search under way does not go on in it
                    s.end(self);
                    s.forget_program();
                }
            }
            _ => {}
        }
    }

    fn report(&mut self, groups: Groups<'_, Group>, cx: &FinishCtx) -> Vec<Finding> {
        let window_s = cx.window.map_or(0.0, |w| w.duration_s);
        groups.findings(cx.model, |g| {
            if g.failed == 0 {
                return None;
            }
            let repeated = g.repeated();
            let avoidable = repeated.max(g.search_misses);
            let per_open = g.failed as f64 / g.opens.max(1) as f64;
            if avoidable < self.cfg.min_avoidable || per_open < self.cfg.min_failed_per_open {
                return None;
            }
            let prog_calls = g.calls.max(g.failed);
            let share = g.failed as f64 / prog_calls.max(1) as f64;
            let distinct = g.paths.0.len().max(1) as f64;
            let repeats = g.failed as f64 / distinct;
            // durations of most calls (-T), not just of a few unfinished/resumed pairs
            let timed = g.timed > 0 && g.timed * 10 >= g.failed * 9;
            let failed_s = g.failed_ns as f64 / 1e9;

            let span_s = g.span.seconds();
            let rate_ok = span_s <= 0.0 || g.failed as f64 / span_s >= self.cfg.warn_per_sec;
            let mut severity =
                Severity::warning_if(avoidable >= self.cfg.warn_avoidable && share >= self.cfg.warn_share_of_calls && rate_ok);
            if severity == Severity::Warning
                && timed
                && failed_s >= self.cfg.error_seconds
                && window_s > 0.0
                && failed_s / window_s >= 0.2
            {
                severity = Severity::Error;
            }

            let mut dirs: Vec<(&str, u64)> = g.dirs.0.iter().map(|(d, n)| (&**d, n.0)).collect();
            dirs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            let top: Vec<&str> = dirs.iter().take(5).map(|d| d.0).collect();
            let avg_misses = if g.searches > 0 { g.search_misses as f64 / g.searches as f64 } else { 0.0 };

            let mut m = Metrics::new();
            m.count("failed_lookups", g.failed);
            m.count("avoidable_lookups", avoidable);
            m.count("repeated_failures", repeated);
            m.count("distinct_failed_paths", g.paths.0.len());
            m.value("repeats_per_path", repeats);
            m.count("searches", g.searches);
            m.count("search_misses", g.search_misses);
            m.value("avg_misses_per_search", avg_misses);
            m.count("successful_opens", g.opens);
            m.value("failed_per_open", per_open);
            m.value("share_of_calls", share);
            m.count("dirs_with_failures", g.dirs.0.len());
            m.json("top_dirs", serde_json::Value::from(top.clone()));
            if span_s > 0.0 {
                m.value("failed_per_sec", g.failed as f64 / span_s);
            }
            if timed {
                m.value("failed_time_s", failed_s);
            }

            let mut message = format!("{} failed lookups (ENOENT), {} avoidable", g.failed, avoidable);
            if g.searches > 0 {
                message.push_str(&format!(
                    ": {} searches missed {:.1} directories each before the hit",
                    g.searches, avg_misses
                ));
                if repeats >= 2.0 {
                    message.push_str(&format!(", each failing path tried {repeats:.0} times"));
                }
            } else {
                message.push_str(&format!(": {} paths failed {repeats:.0} times each", g.paths.0.len()));
            }
            if let Some(d) = top.first() {
                message.push_str(&format!("; most misses in {d}"));
                if top.len() > 1 {
                    message.push_str(&format!(" and {} more directories", g.dirs.0.len() - 1));
                }
            }

            let cost = if timed {
                let avg_us = failed_s * 1e6 / g.timed.max(1) as f64;
                format!(
                    "{failed_s:.3} s inside {} failed lookups ({avg_us:.1} µs each, {}); about {avoidable} \
could be avoided ({:.0}% of the program's syscalls are failed lookups)",
                    g.failed,
                    cx.tracer.measured(),
                    share * 100.0
                )
            } else {
                format!(
                    "time unknown (no -T); about {avoidable} of {} failed lookups could be avoided ({:.0}% of the program's \
syscalls); each is a path walk in the kernel, about a microsecond with a warm dentry cache, a server round trip on NFS",
                    g.failed,
                    share * 100.0
                )
            };

            // the longest search (its first misses, the last one, the hit), else the first and
            // last failures
            let evidence = match g.sample.get() {
                None => g.evidence.as_ref().map(|e| e.render(cx.clock)).unwrap_or_default(),
                Some(sample) => {
                    let n = sample.len();
                    let mut v: Vec<String> = sample.iter().map(|e| e.render(cx.clock)).collect();
                    if g.sample.score > 3 && n == 4 {
                    v.insert(2, "...".into());
                }
                v
                }
            };

            let mut fix = String::new();
            if let Some(d) = top.first() {
                fix.push_str(&format!(
                    "the search misses most in {d}: drop directories that never hold the file from the search path \
or put the one that does first. "
                ));
            }
            fix.push_str(META.docs.fix);

            Some(META.finding(severity, message).over(&g.span).metrics(m).lines(evidence).calls(&g.counted).cost(cost).fix(fix))
        })
    }
}

#[cfg(test)]
mod tests {
    // The fixture tests are data: fixtures/failed-lookup-storm/expect.toml, run by src/check/fixtures.rs.
    use super::*;

    #[test]
    fn splits_paths() {
        assert_eq!(split("/a/b/c.php"), ("/a/b", "c.php"));
        assert_eq!(split("/c"), ("/", "c"));
        assert_eq!(split("c"), (".", "c"));
        assert_eq!(split("lib/c"), ("lib", "c"));
    }
}
