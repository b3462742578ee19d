//! What `syslint agent` keeps between its windows (issue 32): each finding's story across the
//! short full-detail captures it makes, deduplicated by what the finding is about, not by the
//! process ids of one window.
//!
//! A finding is the same one in another window when its detector and its subject (kind,
//! program, name: `busy-poll` in `php-fpm`, `connection-churn` to `10.0.0.5:5432`) are the
//! same; pids are not part of it (workers come and go). Each entry counts the windows it was
//! seen in, keeps when it was first and last seen, sums the time its fix would have saved, and
//! keeps the latest window's finding as its evidence. An entry is *active* while it was seen
//! in the latest window that watched its program. The store is bounded ([`Store::MAX`]): when
//! full, the entry seen longest ago makes room, counted in [`Store::evicted`].

use std::collections::BTreeMap;
use std::time::SystemTime;
use syslint_report::{Finding, Report, Severity, SubjectKind};

/// What makes a finding the same one across windows.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    pub detector: String,
    pub kind: Option<SubjectKind>,
    /// The program the finding is about (its process name), when the report names it.
    pub program: Option<String>,
    /// The file, endpoint, listener or DNS name it is about.
    pub name: Option<String>,
    /// The cgroup its window watched ([`cgroup_path`]): the same program in two containers is
    /// two findings.
    pub cgroup: Option<String>,
}

impl Key {
    pub fn of(f: &Finding, cgroup: Option<&str>) -> Key {
        let about = f.about.as_ref();
        Key {
            detector: f.detector.clone(),
            kind: about.map(|a| a.kind),
            program: about.and_then(|a| a.program.clone()),
            name: about.and_then(|a| a.name.clone()),
            cgroup: cgroup.map(str::to_string),
        }
    }
}

/// The cgroup of a process from its `/proc/PID/cgroup` text: the unified (v2) hierarchy's path
/// (`0::PATH`) unless that is the root, else systemd's v1 hierarchy's, else the first v1
/// controller's not at its root (hybrid hosts keep containers in v1 controllers); `/` when
/// every line is at the root.
pub fn cgroup_path(text: &str) -> String {
    let mut v1: Option<&str> = None;
    let mut systemd: Option<&str> = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(ctrl), Some(path)) = (parts.next(), parts.next(), parts.next()) else { continue };
        if path == "/" || path.is_empty() {
            continue;
        }
        if id == "0" && ctrl.is_empty() {
            return path.to_string();
        }
        if ctrl == "name=systemd" {
            systemd = Some(path);
        } else if v1.is_none() {
            v1 = Some(path);
        }
    }
    systemd.or(v1).unwrap_or("/").to_string()
}

/// The container a cgroup path names, by the 64-hex id container runtimes put in it
/// (`docker-ID.scope`, `libpod-ID.scope`, `cri-containerd-ID.scope`, `crio-ID.scope`, or a bare
/// `/docker/ID` with the cgroupfs driver): the innermost such component.
pub fn container_id(path: &str) -> Option<String> {
    path.rsplit('/').find_map(|c| {
        let c = c.strip_suffix(".scope").unwrap_or(c);
        let id = c.rsplit(['-', ':']).next()?;
        (id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit())).then(|| id.to_ascii_lowercase())
    })
}

/// The Kubernetes pod a cgroup path names: the uid in its `pod<UID>` component
/// (`kubepods-burstable-pod<UID>.slice` with the systemd driver, `/kubepods/burstable/pod<UID>`
/// with cgroupfs; the systemd form writes the uid's dashes as underscores).
pub fn pod_uid(path: &str) -> Option<String> {
    path.split('/').find_map(|c| {
        let c = c.strip_suffix(".slice").unwrap_or(c);
        let uid = c.strip_prefix("pod").or_else(|| c.rsplit_once("-pod").map(|x| x.1))?;
        (uid.len() == 36 || uid.len() == 32).then(|| uid.replace('_', "-"))
    })
}

/// Pod names and namespaces by pod uid, from the directories the kubelet keeps a pod's logs in
/// (`/var/log/pods/NAMESPACE_NAME_UID/`, kubelet's `BuildPodLogsDirectory`; neither a
/// namespace nor a pod name can hold `_`): reading them needs that directory mounted read-only,
/// no access to the API server. Listed again when a uid is not known (at most every 10 s).
#[derive(Debug)]
pub struct Pods {
    root: std::path::PathBuf,
    names: std::collections::HashMap<String, (String, String)>,
    listed: Option<std::time::Instant>,
}

impl Pods {
    /// At most this many pods are kept (a node runs a few hundred at most).
    pub const MAX: usize = 4096;

    pub fn new(root: impl Into<std::path::PathBuf>) -> Pods {
        Pods { root: root.into(), names: std::collections::HashMap::new(), listed: None }
    }

    /// (namespace, pod name) of the pod with this uid, if its log directory is there.
    pub fn of(&mut self, uid: &str) -> Option<(String, String)> {
        if !self.names.contains_key(uid)
            && self.listed.is_none_or(|t| t.elapsed() >= std::time::Duration::from_secs(10))
        {
            self.list();
        }
        self.names.get(uid).cloned()
    }

    fn list(&mut self) {
        self.listed = Some(std::time::Instant::now());
        let Ok(dir) = std::fs::read_dir(&self.root) else { return };
        self.names.clear();
        for e in dir.flatten().take(Self::MAX) {
            let name = e.file_name();
            let Some(name) = name.to_str() else { continue };
            let mut parts = name.splitn(3, '_');
            if let (Some(ns), Some(pod), Some(uid)) = (parts.next(), parts.next(), parts.next()) {
                if !ns.is_empty() && !pod.is_empty() && uid.len() == 36 {
                    self.names.insert(uid.to_string(), (ns.to_string(), pod.to_string()));
                }
            }
        }
    }
}

/// One finding's story across the windows.
#[derive(Clone, Debug)]
pub struct Entry {
    pub first_seen: SystemTime,
    pub last_seen: SystemTime,
    /// Windows it was found in.
    pub windows: u64,
    /// The highest severity it had.
    pub worst: Severity,
    /// Seconds its fix would have saved, summed over the windows that weighed it.
    pub saved_s: f64,
    /// Seen in the latest window.
    pub active: bool,
    /// The latest window's finding (its message, evidence, call sites, fix).
    pub latest: Finding,
}

/// What one window's report adds.
#[derive(Clone, Debug, Default)]
pub struct Window {
    pub findings: Vec<Finding>,
    /// The programs (process names) it watched.
    pub programs: Vec<String>,
    pub syscalls: u64,
    pub lost_events: u64,
    /// The cgroup whose processes it watched, when the agent traced one cgroup's processes.
    pub cgroup: Option<String>,
    /// Per program: its syscalls and failed syscalls in the window.
    pub calls: Vec<(String, u64, u64)>,
    /// How long the window traced, in seconds (0 when the capture has no clock).
    pub traced_s: f64,
}

impl Window {
    pub fn of(r: &Report) -> Window {
        let mut programs: Vec<String> = r.summary.processes.iter().filter_map(|p| p.comm.clone()).collect();
        programs.sort_unstable();
        programs.dedup();
        let mut calls: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for p in &r.summary.processes {
            let c = calls.entry(p.comm.clone().unwrap_or_default()).or_default();
            c.0 += p.calls;
            c.1 += p.errors;
        }
        Window {
            findings: r.findings.clone(),
            programs,
            syscalls: r.capture.syscalls,
            lost_events: r.capture.lost_events,
            cgroup: None,
            calls: calls.into_iter().map(|(p, (c, e))| (p, c, e)).collect(),
            traced_s: r.capture.window.as_ref().map_or(0.0, |w| w.duration_s),
        }
    }
}

/// What a window changed about an entry: what the agent tells an event pipeline (OTLP log
/// records), where a finding seen again in the same state is no news.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Seen for the first time.
    Found,
    /// Seen again after a window of its program did not find it.
    Back,
    /// Seen at a higher severity than it had.
    Worse,
    /// Its program was watched again and it was not found.
    Gone,
}

impl Change {
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Found => "found",
            Change::Back => "back",
            Change::Worse => "worse",
            Change::Gone => "gone",
        }
    }
}

/// The findings of every window so far, and what the windows themselves saw.
#[derive(Debug, Default)]
pub struct Store {
    entries: BTreeMap<Key, Entry>,
    /// Entries dropped to stay within [`Store::MAX`].
    pub evicted: u64,
    /// Windows analysed.
    pub windows: u64,
    /// Windows that found no process to watch.
    pub idle_windows: u64,
    /// Syscalls and lost events over all windows.
    pub syscalls: u64,
    pub lost_events: u64,
    /// Per (program, cgroup): syscalls, failed syscalls and seconds traced over its windows
    /// (a rate is calls over traced seconds: between windows nothing is counted). Bounded like
    /// the findings; programs not kept for want of room are counted in `evicted_programs`.
    pub programs: BTreeMap<(String, Option<String>), ProgramCalls>,
    pub evicted_programs: u64,
}

/// A program's syscalls over the windows that watched it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProgramCalls {
    pub calls: u64,
    pub errors: u64,
    pub traced_s: f64,
}

impl Store {
    /// Entries kept at most.
    pub const MAX: usize = 4096;

    /// A window's findings join their entries (or start new ones); entries of the programs it
    /// watched that it did not find again are no longer active. What changed, by key (an
    /// entry seen again as it was is not a change).
    pub fn add(&mut self, w: &Window, now: SystemTime) -> Vec<(Key, Change)> {
        self.add_parts(std::slice::from_ref(w), now)
    }

    /// One window that watched several cgroups at once, analysed apart (a part each): one
    /// window counted, the kernel's lost events once (each part's report carries the whole
    /// capture's), each part's findings and programs as [`add`](Self::add) takes them.
    pub fn add_parts(&mut self, parts: &[Window], now: SystemTime) -> Vec<(Key, Change)> {
        self.windows += 1;
        self.lost_events += parts.iter().map(|w| w.lost_events).max().unwrap_or(0);
        let mut changes = Vec::new();
        for w in parts {
            changes.extend(self.add_part(w, now));
        }
        changes
    }

    fn add_part(&mut self, w: &Window, now: SystemTime) -> Vec<(Key, Change)> {
        self.syscalls += w.syscalls;
        for (program, calls, errors) in &w.calls {
            let key = (program.clone(), w.cgroup.clone());
            if !self.programs.contains_key(&key) && self.programs.len() >= Self::MAX {
                self.evicted_programs += 1;
                continue;
            }
            let p = self.programs.entry(key).or_default();
            p.calls += calls;
            p.errors += errors;
            p.traced_s += w.traced_s;
        }
        let mut was: BTreeMap<Key, (bool, Severity)> = BTreeMap::new();
        for (k, e) in &mut self.entries {
            // a program this window watched and did not find it in (or no program named):
            // gone for now, unless found again below
            let same_place = k.cgroup == w.cgroup;
            if same_place && k.program.as_deref().is_none_or(|p| w.programs.iter().any(|q| q == p)) {
                was.insert(k.clone(), (e.active, e.worst));
                e.active = false;
            }
        }
        let mut changes = Vec::new();
        for f in &w.findings {
            let key = Key::of(f, w.cgroup.as_deref());
            if !self.entries.contains_key(&key) && self.entries.len() >= Self::MAX {
                self.evict_oldest();
            }
            let saved = f.impact.as_ref().map_or(0.0, |i| i.saved_s);
            let change = match (self.entries.get(&key), was.get(&key)) {
                (None, _) => Some(Change::Found),
                (Some(e), _) if f.severity > e.worst => Some(Change::Worse),
                (Some(_), Some((false, _))) => Some(Change::Back),
                // active before this window (or seen earlier in it): no news
                (Some(_), _) => None,
            };
            if let Some(c) = change {
                changes.retain(|(k, _): &(Key, Change)| *k != key);
                changes.push((key.clone(), c));
            }
            let e = self.entries.entry(key).or_insert_with(|| Entry {
                first_seen: now,
                last_seen: now,
                windows: 0,
                worst: f.severity,
                saved_s: 0.0,
                active: true,
                latest: f.clone(),
            });
            e.last_seen = now;
            e.windows += 1;
            e.worst = e.worst.max(f.severity);
            e.saved_s += saved;
            e.active = true;
            e.latest = f.clone();
        }
        for (k, (active, _)) in was {
            if active && self.entries.get(&k).is_some_and(|e| !e.active) {
                changes.push((k, Change::Gone));
            }
        }
        changes
    }

    /// The entry of a key, if kept.
    pub fn get(&self, k: &Key) -> Option<&Entry> {
        self.entries.get(k)
    }

    /// A window that had nothing to watch.
    pub fn idle(&mut self) {
        self.windows += 1;
        self.idle_windows += 1;
    }

    fn evict_oldest(&mut self) {
        let oldest = self.entries.iter().min_by_key(|(_, e)| e.last_seen).map(|(k, _)| k.clone());
        if let Some(k) = oldest {
            self.entries.remove(&k);
            self.evicted += 1;
        }
    }

    pub fn entries(&self) -> impl Iterator<Item = (&Key, &Entry)> {
        self.entries.iter()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// One window over the processes of several cgroups, analysed apart: each event goes to the
/// analysis of its thread's cgroup, so the agent attaches once per cycle for every cgroup it
/// watches (each attach costs every syscall of the host while it lasts) and still keeps each
/// cgroup's findings, programs and rates its own.
///
/// A thread's cgroup: its process's, from the processes the window was given (the source
/// announces who a thread is before its first call); a task made during the window, its
/// parent's once the parent's clone has returned (a fork or clone starts in its parent's
/// cgroup); else what `/proc/TID/cgroup` says while the task lives, else unknown (`None`: a
/// task whose calls came before its parent's clone returned, and that had exited).
pub struct ByCgroup {
    groups: Vec<(Option<String>, Option<crate::Analysis>)>,
    of_process: std::collections::HashMap<u32, usize>,
    of_task: std::collections::HashMap<u32, usize>,
    make: Box<dyn FnMut() -> crate::Analysis + Send>,
}

impl ByCgroup {
    /// `groups`: each cgroup and the processes (tgids) the window traces in it; `make`: a new
    /// analysis, made for a cgroup at its first event.
    pub fn new(groups: &[(String, Vec<u32>)], make: Box<dyn FnMut() -> crate::Analysis + Send>) -> ByCgroup {
        let mut of_process = std::collections::HashMap::new();
        for (i, (_, pids)) in groups.iter().enumerate() {
            for &p in pids {
                of_process.insert(p, i);
            }
        }
        ByCgroup {
            groups: groups.iter().map(|(cg, _)| (Some(cg.clone()), None)).collect(),
            of_process,
            of_task: std::collections::HashMap::new(),
            make,
        }
    }

    /// Each cgroup that had events, and its report (every one built from the same capture:
    /// its lost events and notes are the whole window's).
    pub fn finish(self, c: &crate::Captured) -> Vec<(Option<String>, Report)> {
        self.groups.into_iter().filter_map(|(cg, a)| Some((cg, a?.finish(c.clone())))).collect()
    }

    /// The group of a cgroup path, added when new.
    fn group(&mut self, cgroup: Option<String>) -> usize {
        match self.groups.iter().position(|(cg, _)| *cg == cgroup) {
            Some(i) => i,
            None => {
                self.groups.push((cgroup, None));
                self.groups.len() - 1
            }
        }
    }

    fn group_of(&mut self, ev: &syslint_event::Event<'_>) -> usize {
        let tid = ev.tid.0;
        if let syslint_event::EventKind::TaskKnown { tgid, .. } = ev.kind {
            if let Some(&g) = self.of_process.get(&tgid.0) {
                self.of_task.insert(tid, g);
                return g;
            }
        }
        if let Some(&g) = self.of_task.get(&tid) {
            return g;
        }
        let g = match std::fs::read_to_string(format!("/proc/{tid}/cgroup")) {
            Ok(text) => self.group(Some(cgroup_path(&text))),
            Err(_) => self.group(None),
        };
        self.of_task.insert(tid, g);
        g
    }
}

impl crate::Sink for ByCgroup {
    fn on_event(&mut self, ev: &syslint_event::Event<'_>) {
        use syslint_event::{EventKind, Sys};
        let g = self.group_of(ev);
        match &ev.kind {
            // the task it made starts in this cgroup
            EventKind::Syscall(sc) if matches!(sc.sys, Sys::Clone | Sys::Clone3 | Sys::Fork | Sys::Vfork) => {
                if let Some(child) = sc.ret.value().and_then(|v| u32::try_from(v).ok()).filter(|&v| v > 0) {
                    self.of_task.insert(child, g);
                }
            }
            EventKind::Exited { .. } | EventKind::Killed { .. } => {
                self.of_task.remove(&ev.tid.0);
            }
            _ => {}
        }
        let make = &mut self.make;
        self.groups[g].1.get_or_insert_with(make).on_event(ev);
    }
}

/// The share of a bounded window's records whose senders sit out the next window
/// ([`filled_by`]).
pub const FILLED_SHARE: f64 = 0.8;

/// The processes that filled a window which ended at its bound of records: the most records
/// first, until they sent [`FILLED_SHARE`] of them (`records`: per process, most first, as
/// the eBPF source counts them). The agent leaves them out of its next window, so that on a
/// busy host the quiet processes get a whole window every other cycle (a slow pathology needs
/// more than the bounded part of a window to show) while the busy ones still get one.
pub fn filled_by(records: &[(u32, u64)]) -> Vec<u32> {
    let total: u64 = records.iter().map(|r| r.1).sum();
    let mut sent = 0u64;
    let mut out = Vec::new();
    for &(pid, n) in records {
        #[allow(clippy::cast_precision_loss)]
        if total == 0 || sent as f64 >= FILLED_SHARE * total as f64 {
            break;
        }
        sent += n;
        out.push(pid);
    }
    out
}

/// `groups` without the processes `out` (a group left empty is dropped); all of `groups` when
/// nothing would be left to trace.
pub fn leaving_out(groups: &[(String, Vec<u32>)], out: &[u32]) -> Vec<(String, Vec<u32>)> {
    let kept: Vec<(String, Vec<u32>)> = groups
        .iter()
        .map(|(cg, pids)| (cg.clone(), pids.iter().copied().filter(|p| !out.contains(p)).collect::<Vec<u32>>()))
        .filter(|(_, pids)| !pids.is_empty())
        .collect();
    if kept.is_empty() {
        groups.to_vec()
    } else {
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_processes_that_filled_a_bounded_window_sit_out_the_next() {
        // one busy neighbour sent nearly everything: only it
        assert_eq!(filled_by(&[(7, 190_000), (3, 9_000), (9, 1_000)]), vec![7]);
        // a server's workers and its load generator, then the quiet rest
        assert_eq!(filled_by(&[(10, 70_000), (11, 69_000), (12, 50_000), (2, 11_000)]), vec![10, 11, 12]);
        assert!(filled_by(&[]).is_empty());
        assert!(filled_by(&[(1, 0)]).is_empty());
        let groups = vec![("/a".to_string(), vec![7, 3]), ("/b".to_string(), vec![7])];
        assert_eq!(leaving_out(&groups, &[7]), vec![("/a".to_string(), vec![3])]);
        // nothing else to watch: everyone, rather than an empty window
        assert_eq!(leaving_out(&groups, &[7, 3]), groups);
        assert_eq!(leaving_out(&groups, &[]), groups);
    }
    use std::time::Duration;
    use syslint_report::Subject;

    fn finding(detector: &str, program: &str, severity: Severity, saved: f64) -> Finding {
        Finding {
            detector: detector.into(),
            severity,
            about: Some(Subject { kind: SubjectKind::Program, program: Some(program.into()), name: None }),
            impact: Some(syslint_report::Impact { saved_s: saved, traced_s: Some(2.0), share: Some(saved / 2.0) }),
            ..Default::default()
        }
    }

    fn report(findings: Vec<Finding>, comms: &[&str]) -> Window {
        Window {
            findings,
            programs: comms.iter().map(ToString::to_string).collect(),
            syscalls: 100,
            lost_events: 0,
            cgroup: None,
            calls: comms.iter().map(|c| ((*c).to_string(), 50, 5)).collect(),
            traced_s: 2.0,
        }
    }

    #[test]
    fn one_entry_per_detector_and_subject_across_windows() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        let t1 = t0 + Duration::from_secs(60);
        let mut s = Store::default();
        s.add(&report(vec![finding("busy-poll", "php", Severity::Info, 0.1)], &["php"]), t0);
        s.add(
            &report(
                vec![
                    finding("busy-poll", "php", Severity::Warning, 0.5),
                    finding("small-io", "php", Severity::Info, 0.0),
                ],
                &["php"],
            ),
            t1,
        );
        assert_eq!(s.len(), 2);
        let (_, e) = s.entries().find(|(k, _)| k.detector == "busy-poll").unwrap();
        assert_eq!((e.windows, e.worst, e.first_seen, e.last_seen, e.active), (2, Severity::Warning, t0, t1, true));
        assert!((e.saved_s - 0.6).abs() < 1e-9);
        assert_eq!((s.windows, s.syscalls), (2, 200));
        let php = s.programs[&("php".to_string(), None)];
        assert_eq!((php.calls, php.errors, php.traced_s), (100, 10, 4.0));
    }

    #[test]
    fn a_window_of_several_cgroups_is_one_window_with_its_parts_apart() {
        let t = SystemTime::UNIX_EPOCH;
        let mut s = Store::default();
        let part = |cgroup: &str, findings| Window {
            cgroup: Some(cgroup.into()),
            lost_events: 7,
            ..report(findings, &["php"])
        };
        s.add(&part("/a", vec![finding("busy-poll", "php", Severity::Warning, 0.5)]), t);
        // the same program in /a and /b, one window: /a's spin gone, /b's found
        let changes = s
            .add_parts(&[part("/a", vec![]), part("/b", vec![finding("busy-poll", "php", Severity::Warning, 0.5)])], t);
        assert_eq!((s.windows, s.syscalls, s.lost_events), (2, 300, 14), "each capture's lost events once");
        let cg = |c: &[(Key, Change)], want: Change| -> Vec<String> {
            c.iter().filter(|x| x.1 == want).filter_map(|x| x.0.cgroup.clone()).collect()
        };
        assert_eq!((cg(&changes, Change::Gone), cg(&changes, Change::Found)), (vec!["/a".into()], vec!["/b".into()]));
        assert_eq!(s.programs.len(), 2, "php in /a and php in /b");
    }

    #[test]
    fn a_finding_not_seen_again_in_its_program_is_no_longer_active() {
        let t = SystemTime::UNIX_EPOCH;
        let mut s = Store::default();
        s.add(&report(vec![finding("busy-poll", "php", Severity::Warning, 0.5)], &["php"]), t);
        // another program's window: php was not watched, its finding stays active
        s.add(&report(vec![], &["nginx"]), t);
        assert!(s.entries().all(|(_, e)| e.active));
        // php watched again, the spin gone
        s.add(&report(vec![], &["php"]), t);
        assert!(s.entries().all(|(_, e)| !e.active));
        assert_eq!(s.len(), 1, "kept, with its history");
    }

    #[test]
    fn a_window_says_what_changed() {
        let t = SystemTime::UNIX_EPOCH;
        let mut s = Store::default();
        let kinds = |c: Vec<(Key, Change)>| c.into_iter().map(|(k, c)| (k.detector, c)).collect::<Vec<_>>();
        let bp = |sev| finding("busy-poll", "php", sev, 0.5);
        assert_eq!(kinds(s.add(&report(vec![bp(Severity::Info)], &["php"]), t)), [("busy-poll".into(), Change::Found)]);
        assert!(s.add(&report(vec![bp(Severity::Info)], &["php"]), t).is_empty(), "seen again as it was");
        assert_eq!(
            kinds(s.add(&report(vec![bp(Severity::Warning)], &["php"]), t)),
            [("busy-poll".into(), Change::Worse)]
        );
        // another program watched: php's finding is no news
        assert!(s.add(&report(vec![], &["nginx"]), t).is_empty());
        assert_eq!(kinds(s.add(&report(vec![], &["php"]), t)), [("busy-poll".into(), Change::Gone)]);
        assert!(s.add(&report(vec![], &["php"]), t).is_empty(), "gone once");
        assert_eq!(kinds(s.add(&report(vec![bp(Severity::Info)], &["php"]), t)), [("busy-poll".into(), Change::Back)]);
    }

    #[test]
    fn the_same_program_in_two_cgroups_is_two_findings() {
        let t = SystemTime::UNIX_EPOCH;
        let mut s = Store::default();
        let mut a = report(vec![finding("busy-poll", "php", Severity::Warning, 0.5)], &["php"]);
        a.cgroup = Some("/a".into());
        let mut b = a.clone();
        b.cgroup = Some("/b".into());
        s.add(&a, t);
        s.add(&b, t);
        assert_eq!(s.len(), 2);
        // /a watched again without it: only /a's is gone
        let mut quiet = report(vec![], &["php"]);
        quiet.cgroup = Some("/a".into());
        s.add(&quiet, t);
        let active: Vec<_> = s.entries().filter(|(_, e)| e.active).map(|(k, _)| k.cgroup.clone()).collect();
        assert_eq!(active, [Some("/b".to_string())]);
    }

    #[test]
    fn cgroups_containers_and_pods_are_read_from_their_paths() {
        // pure v2, hybrid (v2 at the root, a container in v1 controllers), all at the root
        assert_eq!(cgroup_path("0::/system.slice/nginx.service\n"), "/system.slice/nginx.service");
        let hybrid = "9:name=systemd:/machine.slice/libpod-abc.scope\n4:memory:/machine.slice/libpod-abc.scope\n0::/\n";
        assert_eq!(cgroup_path(hybrid), "/machine.slice/libpod-abc.scope");
        assert_eq!(cgroup_path("4:memory:/process_api/x\n1:cpu:/\n0::/\n"), "/process_api/x");
        assert_eq!(cgroup_path("1:cpu:/\n0::/\n"), "/");
        let id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        for p in [
            format!("/system.slice/docker-{id}.scope"),
            format!("/machine.slice/libpod-{id}.scope/container"),
            format!("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c3d4e_5f60_7a8b_9c0d_1e2f3a4b5c6d.slice/cri-containerd-{id}.scope"),
            format!("/docker/{id}"),
            format!("/kubepods/burstable/pod1b2c3d4e-5f60-7a8b-9c0d-1e2f3a4b5c6d/crio-{id}"),
        ] {
            assert_eq!(container_id(&p).as_deref(), Some(id), "{p}");
        }
        assert_eq!(container_id("/system.slice/nginx.service"), None);
        assert_eq!(
            pod_uid("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c3d4e_5f60_7a8b_9c0d_1e2f3a4b5c6d.slice/x").as_deref(),
            Some("1b2c3d4e-5f60-7a8b-9c0d-1e2f3a4b5c6d")
        );
        assert_eq!(
            pod_uid("/kubepods/burstable/pod1b2c3d4e-5f60-7a8b-9c0d-1e2f3a4b5c6d/abc").as_deref(),
            Some("1b2c3d4e-5f60-7a8b-9c0d-1e2f3a4b5c6d")
        );
        assert_eq!(pod_uid("/system.slice/podman.service"), None);
    }

    /// The kubelet's pod log directories, as `BuildPodLogsDirectory` names them
    /// (kubernetes pkg/kubelet/kuberuntime/helpers.go: NAMESPACE_NAME_UID).
    #[test]
    fn pods_are_named_from_the_kubelets_log_directories() {
        let root = std::env::temp_dir().join(format!("syslint-pods-{}", std::process::id()));
        let uid = "1b2c3d4e-5f60-7a8b-9c0d-1e2f3a4b5c6d";
        std::fs::create_dir_all(root.join(format!("shop_web-7d4b9c-x2x9q_{uid}/nginx"))).unwrap();
        std::fs::create_dir_all(root.join("not-a-pod")).unwrap();
        let mut pods = Pods::new(&root);
        assert_eq!(pods.of(uid), Some(("shop".into(), "web-7d4b9c-x2x9q".into())));
        assert_eq!(pods.of("00000000-0000-0000-0000-000000000000"), None);
        assert_eq!(Pods::new(root.join("absent")).of(uid), None);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn the_store_is_bounded() {
        let mut s = Store::default();
        for i in 0..Store::MAX + 10 {
            let t = SystemTime::UNIX_EPOCH + Duration::from_secs(i as u64);
            s.add(&report(vec![finding("busy-poll", &format!("p{i}"), Severity::Info, 0.0)], &[]), t);
        }
        assert_eq!(s.len(), Store::MAX);
        assert_eq!(s.evicted, 10);
        assert!(s.entries().all(|(k, _)| k.program.as_deref() != Some("p0")), "the oldest went first");
    }
}
