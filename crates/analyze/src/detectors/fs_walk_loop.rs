//! `fs-walk-loop` (SL023): a directory walk that follows a symbolic-link cycle: paths that grow by
//! the same components again and again (`a/up/a/up/a/up/...`), the same directories opened and
//! listed under ever longer names, until the kernel refuses with ELOOP.
//!
//! Per call that names a path (open, stat family, access, readlink, chdir), the path's
//! components are searched for a block of one to four components repeated back to back; a path
//! where a block repeats `min_repeats` times or more (four for a single component) is a looping
//! path. Looping paths and ELOOP failures are summed per program.

use super::EvidenceBuf;
use crate::host::{Best, Groups, Hosted, Merge, State};
use crate::kit::{Metrics, Span};
use crate::registry::{Ctx, FinishCtx};
use syslint_event::{Event, OpenFlags, Syscall};
use syslint_report::{Finding, Severity};

crate::detector!("fs_walk_loop", struct FsWalkLoop);

/// Looping calls of one program.
#[derive(Clone, Default)]
pub struct Group {
    looping: u64,
    listings: u64,
    eloop: u64,
    /// The block repeated most often, scored by its repeats.
    cycle: Best<String>,
    longest: u64,
    span: Span,
    evidence: Option<EvidenceBuf>,
}

crate::merge!(Group {
    cycle: merge,
    evidence: first,
    looping: sum,
    listings: sum,
    eloop: sum,
    longest: max,
    span: merge,
});

impl Hosted for FsWalkLoop {
    type Thread = ();
    type Program = Group;
    type Object = ();
    fn on_syscall(&mut self, s: &mut State<'_, Self>, _cx: &Ctx, ev: &Event, sc: &Syscall) {
        let eloop = sc.ret.errno() == Some("ELOOP");
        let Some(path) = sc.path() else { return };
        // cheap first: a looping path has at least 5 separators (a/b/a/b/a/b)
        if !eloop && path.bytes().filter(|&b| b == b'/').count() < 5 {
            return;
        }
        let block = repeated_block(&path);
        let looping = block.as_ref().and_then(|(r, k, comps)| {
            let need = self.cfg.min_repeats.max(2) as usize + usize::from(*k == 1);
            (*r >= need).then(|| (*r as u64, comps.join("/")))
        });
        if looping.is_none() && !eloop {
            return;
        }
        let grp = s.program();
        if eloop {
            grp.eloop += 1;
        }
        if let Some((r, cycle)) = looping {
            grp.looping += 1;
            if sc.open_flags().is_some_and(|f| f.contains(OpenFlags::DIRECTORY)) {
                grp.listings += 1;
            }
            grp.cycle.merge(Best::new(r, cycle));
            grp.longest = grp.longest.max(path.len() as u64);
            grp.span.add(ev.ts_ns);
            grp.evidence.get_or_insert_with(|| EvidenceBuf::new(EVIDENCE)).push(ev);
        }
    }

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        let need = self.cfg.min_repeats.max(2) as usize;
        let (mut idx, mut repeats, mut cycle, mut eloop) = (Vec::new(), 0usize, String::new(), 0u64);
        for (i, c) in x.calls.iter().enumerate() {
            let Some(p) = c.path.as_deref() else { continue };
            let Some((r, k, comps)) = repeated_block(p) else { continue };
            if r < need + usize::from(k == 1) {
                continue;
            }
            idx.push(i);
            eloop += u64::from(c.failed("ELOOP"));
            if r > repeats {
                repeats = r;
                cycle = comps.join("/");
            }
        }
        if idx.len() < 3 {
            return Vec::new();
        }
        let n = idx.len() as u64;
        let severity = Severity::warning_if(eloop > 0);
        META.finding(
            severity,
            format!("a directory walk follows a link cycle: {n} lookups of paths repeating `{cycle}` up to {repeats} times in the excerpt"),
        )
        .metrics([("looping_calls", n.into()), ("repeats", (repeats as u64).into()), ("eloop", eloop.into())])
        .lines(x.evidence(&idx, 4))
        .in_excerpt(
            x,
            Confidence::Medium,
            &format!("{n} paths repeating `{cycle}` up to {repeats} times: a walk entering the same directories again through a link; the excerpt cannot show how far it goes"),
        )
    }

    fn report(&mut self, groups: Groups<'_, Group>, cx: &FinishCtx) -> Vec<Finding> {
        let cfg = &self.cfg;
        groups.findings(cx.model, |g| {
            if g.looping < cfg.min_calls.max(1) {
                return None;
            }
            let severity =
                Severity::warning_if(g.eloop > 0 || g.looping >= cfg.warn_calls);
            let mut m = Metrics::new();
            m.count("looping_calls", g.looping);
            m.count("listings", g.listings);
            m.count("eloop", g.eloop);
            m.count("repeats", g.cycle.score);
            m.count("longest_path", g.longest);
            let cycle = g.cycle.get().map_or("", String::as_str);
            m.text("cycle", cycle);
            let end = if g.eloop > 0 {
                let times = if g.eloop == 1 { "once".to_string() } else { format!("{} times", g.eloop) };
                format!(", until the kernel refused with ELOOP ({times})")
            } else {
                String::new()
            };
            let message = format!(
                "a directory walk follows a link cycle: {} lookups of paths repeating `{}` up to {} times ({} directories listed again){end}",
                g.looping, cycle, g.cycle.score, g.listings
            );
            let cost = format!(
                "every turn of the cycle lists the same directories again and returns their files again under a longer \
name: {} directory listings and {} lookups that a walk tracking visited directories would not make (and with two \
cycles in the tree the walk doubles at every level)",
                g.listings, g.looping
            );
            Some(META.finding(severity, message).over(&g.span).metrics(m).evidence(&g.evidence, cx.clock).cost(cost))
        })
    }
}

/// The block of components repeated most often back to back in `path` (one to four
/// components, never `.` or `..`), with how many times it repeats.
pub(crate) fn repeated_block(path: &str) -> Option<(usize, usize, Vec<&str>)> {
    let comps: Vec<&str> = path.split('/').filter(|c| !c.is_empty() && *c != ".").collect();
    let mut best: Option<(usize, usize, usize)> = None; // (repeats, k, start)
    for k in 1..=MAX_BLOCK {
        let mut i = 0;
        while i + 2 * k <= comps.len() {
            let block = &comps[i..i + k];
            if block.contains(&"..") {
                i += 1;
                continue;
            }
            let mut r = 1;
            while i + (r + 1) * k <= comps.len() && &comps[i + r * k..i + (r + 1) * k] == block {
                r += 1;
            }
            // a longer block wins only by repeating as often (a/a/a/a is `a` four times)
            if r >= 2 && best.is_none_or(|(br, _, _)| r > br) {
                best = Some((r, k, i));
            }
            i += if r >= 2 { (r - 1) * k + 1 } else { 1 };
        }
    }
    best.map(|(r, k, i)| (r, k, comps[i..i + k].to_vec()))
}

#[cfg(test)]
mod tests {
    // The fixture tests are data: fixtures/fs-walk-loop/expect.toml, run by src/check/fixtures.rs.
    use super::*;

    #[test]
    fn blocks_repeated_back_to_back() {
        let (r, k, b) = repeated_block("tree/a/up/a/up/a/up/b").unwrap();
        assert_eq!((r, k, b), (3, 2, vec!["a", "up"]));
        assert_eq!(repeated_block("x/a/a/a/a").map(|(r, k, _)| (r, k)), Some((4, 1)));
        // parents are not a cycle, nor distinct names
        assert!(repeated_block("../../../../../x").is_none());
        assert!(repeated_block("deep/d1/d2/d3/d4/d5/d6/d7").is_none());
        assert_eq!(repeated_block("/usr/lib/python3/dist-packages/x").map(|(r, _, _)| r), None);
    }
}
