//! `stat-storm` (SL014): the same few paths looked up successfully again and again
//! (stat/lstat/newfstatat/statx/access/readlink on the same files, thousands of times): path
//! resolution without a cache.
//!
//! Successful lookups only: lookups that fail are failed-lookup-storm's (SL007), so the two
//! never count the same call. Per program: a path is *hot* once the program looked it up
//! `hot_lookups` times; the repeats of hot paths (every lookup of one after its first) are
//! what the finding counts.

use super::EvidenceBuf;
use super::failed_lookup_storm::resolve;
use crate::host::{Few, Groups, Hosted, Merge, State};
use crate::kit::{Metrics, Span, Timing};
use crate::model::Model;
use crate::registry::{Ctx, FinishCtx};
use rustc_hash::FxHashMap as HashMap;
use std::hash::Hasher;
use syslint_event::{Class, Event, Ret, Sys, Syscall, Tgid, Tid};
use syslint_report::{Finding, Severity};

crate::detector!("stat_storm", StatStorm { cfg, paths: 0 });

#[derive(Clone)]
pub struct PathCount {
    /// Shown as, once hot: most paths are looked up once or twice, and rendering each of them
    /// cost more than all the counting (the benchmark log's compiler stats every header).
    path: Option<Box<str>>,
    n: u64,
    /// The lookups from the one that made the path hot, and the last (boxed: most paths never
    /// get hot, and an inline buffer tripled the size of every entry).
    evidence: Option<Box<EvidenceBuf>>,
}

/// A program's paths: hash of the path -> its lookups (bounded over all programs together:
/// [`MAX_PATHS`]).
#[derive(Clone, Default)]
pub struct Paths(HashMap<u64, PathCount>);

impl Merge for Paths {
    /// The same path under two programs that merged: added up, named by the first that
    /// rendered it.
    fn merge(&mut self, o: Self) {
        for (k, p) in o.0 {
            match self.0.entry(k) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    let b = e.into_mut();
                    b.n += p.n;
                    if b.path.is_none() {
                        b.path = p.path;
                        b.evidence = p.evidence;
                    }
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(p);
                }
            }
        }
    }
}

#[derive(Clone, Default)]
pub struct Group {
    lookups: u64,
    /// Of those, mkdir calls that failed with EEXIST.
    mkdir_eexist: u64,
    timing: Timing,
    span: Span,
    tgids: Few<Tgid, MAX_TGIDS>,
    paths: Paths,
}

crate::merge!(Group { lookups: sum, mkdir_eexist: sum, timing: merge, span: merge, tgids: merge, paths: merge });

#[derive(Clone)]
pub struct StatStorm {
    cfg: Config,
    /// (program, path) pairs followed, of [`MAX_PATHS`].
    paths: usize,
}

/// A hash of the path a lookup names, with the directory fd's path in front of a relative path
/// of an *at call: strace's `-yy` path, else the model's for an fd opened in the trace (a
/// directory walker reuses one fd number for directory after directory: `du` stats `copyright`
/// in 470 directories through fd 5), else the fd's number. `None` for a lookup of an fd itself
/// (an empty path).
fn path_key(model: &Model, tid: Tid, sc: &Syscall, p: &str) -> Option<u64> {
    if p.is_empty() {
        return None;
    }
    let mut h = rustc_hash::FxHasher::default();
    if !p.starts_with('/') && sc.sys.is(Class::AT) {
        match sc.dir_fd() {
            Some(fd) => match fd.deco {
                Some(d) => h.write(d.as_bytes()),
                None => match (fd.num >= 0).then(|| model.lookup_fd(tid, fd.num)).flatten() {
                    Some(t) => {
                        h.write_u8(1);
                        h.write(t.display.as_bytes());
                    }
                    None => h.write_i32(fd.num),
                },
            },
            None => h.write_u8(0),
        }
        h.write_u8(b'/');
    }
    h.write(p.as_bytes());
    Some(h.finish())
}

/// The path lookups that are not opens, of the excerpt and counts rules.
const STAT: &[Sys] = &[
    Sys::Stat,
    Sys::Lstat,
    Sys::Stat64,
    Sys::Lstat64,
    Sys::Newfstatat,
    Sys::Fstatat64,
    Sys::Statx,
    Sys::Access,
    Sys::Faccessat,
    Sys::Faccessat2,
    Sys::Readlink,
    Sys::Readlinkat,
];

impl Hosted for StatStorm {
    type Thread = ();
    type Program = Group;
    type Object = ();

    // ---- less than a full trace (issue 14): self-contained, nothing else in this file uses them ----

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        // successful lookups per (thread, path); failed ones are failed-lookup-storm's, and an
        // fd stat (an empty path) walks no path
        let mut by: std::collections::BTreeMap<(u32, &str), Vec<usize>> = Default::default();
        let mut lookups = 0u64;
        for (i, c) in x.calls.iter().enumerate() {
            let Some(p) = c.path.as_deref().filter(|p| !p.is_empty()) else { continue };
            if !c.is(STAT) || c.errno.is_some() {
                continue;
            }
            lookups += 1;
            by.entry((c.tid.0, p)).or_default().push(i);
        }
        // paths looked up at least 3 times; what is repeated is every lookup after the first
        let hot: Vec<(&str, Vec<usize>)> = by.into_iter().filter(|(_, v)| v.len() >= 3).map(|((_, p), v)| (p, v)).collect();
        let repeated: u64 = hot.iter().map(|(_, v)| v.len() as u64 - 1).sum();
        let n = x.calls.len() as u64;
        if repeated < 8 || lookups * 4 < n {
            return component_walk(x);
        }
        let strong = repeated >= 20 && lookups * 2 >= n;
        let Some((top, idx)) = hot.iter().max_by_key(|(_, v)| v.len()) else { return Vec::new() };
        let conf = Confidence::medium_if(strong);
        let why = if strong {
            format!("{repeated} successful lookups of paths already looked up, lookups half or more of the calls")
        } else {
            format!("{repeated} successful lookups of paths already looked up: too few lines to say it goes on")
        };
        META.finding(
            Severity::warning_if(strong),
            format!("the same paths looked up again and again: {repeated} repeated lookups of {} paths in {n} calls ({top} {} times)", hot.len(), idx.len()),
        )
        .metrics([
            ("repeated_lookups", repeated.into()),
            ("hot_paths", (hot.len() as u64).into()),
            ("lookups", lookups.into()),
        ])
        .lines(x.evidence(idx, 4))
        .in_excerpt(x, conf, &why)
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, per_second, SysRows, OPENS};
        use syslint_report::Confidence;
        // successful lookups: failed ones are failed-lookup-storm's (a table without errors
        // cannot tell them apart)
        let ok = c.calls_of(STAT).saturating_sub(c.errors_of(STAT));
        let total = c.total_calls();
        let opens = c.calls_of(OPENS);
        if ok < 500 || ok * 3 < total || ok < opens * 5 {
            return Vec::new();
        }
        let rate = per_second(c, ok, 0);
        META.finding(
            Severity::Info,
            format!("path lookups that succeed dominate: {ok} of {total} calls{rate}, {opens} opens"),
        )
        .metrics([("lookups", ok.into()), ("calls", total.into()), ("opens", opens.into())])
        .lines(count_lines(c, &[STAT, OPENS].concat()))
        .in_table(
            c,
            Confidence::Low,
            &format!("{ok} successful stat/access/readlink calls, {:.0}% of all calls and {}x the opens; a table cannot tell the same paths looked up again (a storm) from many paths looked up once (a scan)", ok as f64 * 100.0 / total.max(1) as f64, ok / opens.max(1)),
        )
    }

    fn on_syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        let mkdir = matches!(sc.sys, Sys::Mkdir | Sys::Mkdirat);
        if mkdir {
            // a directory created is no lookup; one that was there already is
            if sc.ret.errno() != Some("EEXIST") {
                return;
            }
        } else if !matches!(sc.ret, Ret::Ok { .. }) {
            return;
        }
        if sc.sys.is(Class::EXEC) {
            s.forget_program();
            return;
        }
        let Some(p) = (if mkdir { sc.mkdir_path() } else { sc.path() }) else { return };
        let Some(key) = path_key(cx.model, ev.tid, sc, &p) else { return };
        let gr = s.program();
        gr.lookups += 1;
        if mkdir {
            gr.mkdir_eexist += 1;
        }
        gr.timing.add(sc.dur_ns);
        gr.span.add(ev.ts_ns);
        gr.tgids.insert(cx.tgid);
        let pc = match gr.paths.0.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) if self.paths < MAX_PATHS => {
                self.paths += 1;
                e.insert(PathCount { path: None, n: 0, evidence: None })
            }
            std::collections::hash_map::Entry::Vacant(_) => return,
        };
        pc.n += 1;
        // nothing rendered or captured for the many paths a program looks up only a few times
        if pc.n >= self.cfg.hot_lookups.max(2) {
            if pc.path.is_none() {
                pc.path = resolve(cx.model, ev.tid, sc, &p).map(Into::into);
            }
            pc.evidence.get_or_insert_with(|| Box::new(EvidenceBuf::new(EVIDENCE))).push(ev);
        }
    }

    fn report(&mut self, groups: Groups<'_, Group>, cx: &FinishCtx) -> Vec<Finding> {
        // the calls of each process, for the share
        let mut calls_of: HashMap<Tgid, u64> = HashMap::default();
        for p in cx.model.procs.iter().filter(|p| !p.absorbed) {
            let n: u64 = p.tasks.iter().filter_map(|&t| cx.model.tasks.get(t)).map(|t| t.calls).sum();
            *calls_of.entry(p.pid).or_default() += n;
        }
        let hot = self.cfg.hot_lookups.max(2);
        groups.findings(cx.model, |g| {
            if g.paths.0.is_empty() {
                return None;
            }
            // in the order of their keys, so that ties below do not depend on a hash
            let mut paths: Vec<(u64, &PathCount)> = g.paths.0.iter().map(|(k, p)| (*k, p)).collect();
            paths.sort_by_key(|p| p.0);
            let mut paths: Vec<&PathCount> = paths.into_iter().map(|p| p.1).collect();
            let repeated: u64 = paths.iter().filter(|p| p.n >= hot).map(|p| p.n - 1).sum();
            if repeated < self.cfg.min_repeated.max(1) {
                return None;
            }
            let hot_paths = paths.iter().filter(|p| p.n >= hot).count();
            paths.sort_by(|a, b| b.n.cmp(&a.n).then_with(|| a.path.cmp(&b.path)));
            let calls: u64 = g.tgids.0.iter().filter_map(|t| calls_of.get(t)).sum();
            let share = g.lookups as f64 / calls.max(g.lookups).max(1) as f64;
            let severity = Severity::warning_if(repeated >= self.cfg.warn_repeated && share >= self.cfg.warn_share_of_calls);
            let top = &paths[0];
            let mut m = Metrics::new();
            m.count("lookups", g.lookups);
            if g.mkdir_eexist > 0 {
                m.count("mkdir_eexist", g.mkdir_eexist);
            }
            m.count("distinct_paths", paths.len());
            m.count("hot_paths", hot_paths);
            m.count("repeated", repeated);
            m.json(
                "top_paths",
                serde_json::Value::from(
                    paths.iter().filter_map(|p| p.path.as_deref()).take(5).map(str::to_string).collect::<Vec<_>>(),
                ),
            );
            m.count("top_path_lookups", top.n);
            m.value("share_of_calls", share);
            let span = g.span.seconds();
            if span > 0.0 {
                m.value("per_sec", g.lookups as f64 / span);
            }
            m.value_opt("seconds", g.timing.seconds());
            let mut message = format!(
                "{repeated} repeated successful lookups of {hot_paths} path{} ({} lookups of {} alone): the same \
paths resolved again and again (no cache, or one that checks the file on every use)",
                if hot_paths == 1 { "" } else { "s" },
                top.n,
                top.path.as_deref().unwrap_or("?")
            );
            if g.mkdir_eexist * 4 >= g.lookups {
                // mostly directories created again and again: say so
                message = format!(
                    "{repeated} repeated lookups of {hot_paths} path{}, {} of them mkdir of a directory that \
exists (EEXIST; {} lookups of {} alone): directories created again before every file",
                    if hot_paths == 1 { "" } else { "s" },
                    g.mkdir_eexist,
                    top.n,
                    top.path.as_deref().unwrap_or("?")
                );
            }
            let time = match g.timing.seconds() {
                Some(s) => format!("{s:.3} s inside them, {}", cx.tracer.measured()),
                None => "time unknown: no -T".to_string(),
            };
            let cost = format!(
                "{repeated} path walks that returned what the program already knew ({time}; natively about 1 us \
each on a local file system, so about {:.0} ms, and a server round trip each on NFS when attributes \
expire); lookups are {:.0}% of the program's system calls",
                repeated as f64 * 1e-3,
                share * 100.0
            );
            Some(META.finding(severity, message).over(&g.span).metrics(m).evidence(&top.evidence, cx.clock).cost(cost))
        })
    }
}

// The fixture tests are data: fixtures/stat-storm/expect.toml, run by src/check/fixtures.rs.

/// Paths resolved one component at a time (a user-space realpath() without a cache): the
/// excerpt shows lookups of `/a`, `/a/b`, `/a/b/c`... back to back on one thread. One walk is
/// all an excerpt may show of it (nirlevy's Drupal post: 10-15 lstat per included file, 2,500
/// per page); the full trace sees the prefixes looked up again for every file, which are the
/// repeats its rule counts. Info at low: the lines cannot show that it is done per file.
fn component_walk(x: &crate::basis::Excerpt) -> Vec<Finding> {
    use syslint_report::Confidence;
    const MIN_STEPS: usize = 6;
    // the longest walk: each lookup's path the previous one's plus one component
    let mut best: Vec<usize> = Vec::new();
    let mut walks = 0u64;
    let mut cur: Vec<usize> = Vec::new();
    let mut end = |cur: &mut Vec<usize>, best: &mut Vec<usize>| {
        if cur.len() >= MIN_STEPS {
            walks += 1;
            if cur.len() > best.len() {
                *best = cur.clone();
            }
        }
        cur.clear();
    };
    for (i, c) in x.calls.iter().enumerate() {
        let path = c.path.as_deref().filter(|p| p.starts_with('/') && p.len() > 1);
        let step = match (path, cur.last().map(|&j| &x.calls[j])) {
            (Some(p), Some(prev)) if c.is(STAT) && c.errno.is_none() && prev.tid == c.tid => {
                let q = prev.path.as_deref().unwrap_or("");
                p.strip_prefix(q).and_then(|rest| rest.strip_prefix('/')).is_some_and(|r| !r.is_empty() && !r.contains('/'))
            }
            _ => false,
        };
        if step {
            cur.push(i);
            continue;
        }
        if cur.last().is_some_and(|&j| x.calls[j].tid != c.tid) {
            // another thread's call between the steps does not end the walk
            continue;
        }
        end(&mut cur, &mut best);
        // a walk starts at a lookup of a path of one component
        if path.is_some_and(|p| c.is(STAT) && c.errno.is_none() && !p[1..].contains('/')) {
            cur.push(i);
        }
    }
    end(&mut cur, &mut best);
    let (Some(&first), Some(&last)) = (best.first(), best.last()) else { return Vec::new() };
    let steps = best.len() as u64;
    let (from, to) = (x.calls[first].path.as_deref().unwrap_or(""), x.calls[last].path.as_deref().unwrap_or(""));
    META.finding(
        Severity::Info,
        format!("a path resolved one component at a time: {steps} lookups from {from} to {to}, each the last one's path and one more component"),
    )
    .metrics([("walk_lookups", steps.into()), ("walks", walks.into())])
    .lines(x.evidence(&best, 4))
    .in_excerpt(
        x,
        Confidence::Low,
        &format!("{steps} lookups walking one path down, as realpath() without a cache does; one walk is all the lines show, and the cost is in doing it for every file opened"),
    )
}
