//! The process and fd model: who is who (threads, processes, parents, program names) and
//! what every fd refers to (files, sockets with endpoints, pipes, eventfds, epoll), built from
//! `-y`/`-yy` decorations when present and from open/socket/connect/accept/dup/close events
//! when not. It also keeps connection lifetimes and per-target statistics.
//!
//! Memory is bounded: fd tables die with their process, targets beyond [`MAX_TARGETS`]
//! are pooled into one "(other targets)" row.

use rustc_hash::FxHashMap as HashMap;
use syslint_event::args::{self, FdTarget};
use syslint_event::{
    Class, CloneFlags, Direction, Event, EventKind, FcntlCmd, Ret, SockAddr, Sys, Syscall, TargetKind, Tgid, Tid,
};

/// Distinct fd targets tracked individually.
pub const MAX_TARGETS: usize = 50_000;
/// Distinct endpoints tracked individually.
pub const MAX_ENDPOINTS: usize = 20_000;
/// Ended processes kept one by one (the busiest); the rest are summed in [`Folded`], so a
/// log of millions of short processes needs no more memory than one of twenty thousand.
pub const MAX_ENDED_PROCS: usize = 20_000;

#[derive(Clone, Debug, Default)]
pub struct TaskInfo {
    pub tid: Tid,
    /// Index into `procs`.
    pub proc_: usize,
    /// Events seen on this task (0 for children created but not traced).
    pub events: u64,
    pub calls: u64,
    pub errors: u64,
    pub dur_ns: u64,
    pub ended: bool,
}

#[derive(Clone, Debug, Default)]
pub struct ProcInfo {
    pub pid: Tgid,
    pub comm: Option<String>,
    pub parent: Option<Tgid>,
    pub end: Option<String>,
    /// Index into `tables`; `None` once the process ended.
    table: Option<usize>,
    /// Absorbed into another process (a task first seen alone turned out to be a thread),
    /// or a free slot.
    pub absorbed: bool,
    /// Its tasks (indexes into `tasks`).
    pub tasks: Vec<usize>,
    /// Where its root is, as the tracer sees it, after a chroot the trace showed (inherited by
    /// children): strace's `-yy` names files from outside (`/srv/jail/etc/hosts`), the program
    /// and the eBPF backend from inside (`/etc/hosts`); decorations are read from inside.
    pub root: Option<Box<str>>,
}

/// Totals of ended processes no longer listed one by one (see [`MAX_ENDED_PROCS`]).
#[derive(Clone, Debug, Default)]
pub struct Folded {
    pub processes: u64,
    pub threads: u64,
    pub calls: u64,
    pub errors: u64,
    pub dur_ns: u64,
}

#[derive(Clone, Debug, Default)]
pub struct TargetAgg {
    pub display: String,
    pub kind: TargetKind,
    pub calls: u64,
    pub errors: u64,
    pub dur_ns: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Times the data changed direction (in after out, or out after in), and the last
    /// direction (0 none, 1 in, 2 out): a conversation's turns.
    pub turns: u64,
    pub last_dir: u8,
}

#[derive(Clone, Debug, Default)]
pub struct EndpointAgg {
    pub endpoint: String,
    pub proto: TargetKind,
    pub direction: Direction,
    pub connections: u64,
    pub closed: u64,
    /// Lifetime of the closed connections whose open and close times are known.
    pub lifetime_ns: u64,
    pub lifetime_timed: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub connect_ns: u64,
}

#[derive(Clone, Debug)]
struct Fd {
    target: u32,
    /// The decoration text this entry was last derived from (to skip re-parsing).
    deco: Option<Box<str>>,
    /// The connection this fd is a copy of (index into `Model::conns`).
    conn: Option<u32>,
    /// Socket protocol, once known.
    proto: Option<TargetKind>,
    local: Option<String>,
    side: Side,
    /// When the call that made this entry returned (open, accept, socket, ...), if timed.
    since: Option<i64>,
}

/// One connection, however many fds refer to it (a forked child's copy, a dup): its bytes
/// are its endpoint's whoever does the I/O, and it is closed when its last fd is.
#[derive(Clone, Debug)]
struct Conn {
    endpoint: u32,
    opened_ns: Option<i64>,
    /// The direction data last went (0 none, 1 in, 2 out): the conversation's turns.
    last_dir: u8,
    /// Fds referring to it; 0 for a free slot.
    refs: u32,
}

#[derive(Default)]
struct FdTable {
    fds: HashMap<i32, Fd>,
    users: u32,
    /// fd -> when the last closed entry of that number was made (`Fd::since`) and its target,
    /// to know a close reported after the fd's next life was closed too ([`Model::late_close`]).
    closed: HashMap<i32, (i64, u32)>,
}

/// Thread id -> task slot, remembering the last answer: most events come from the thread of
/// the event before (71% in the benchmark log), and the model and the detectors ask for the
/// same thread several times per event.
#[derive(Default)]
struct TaskIndex {
    map: HashMap<Tid, usize>,
    last: std::cell::Cell<Option<(Tid, usize)>>,
}

impl TaskIndex {
    #[inline]
    fn get(&self, pid: &Tid) -> Option<usize> {
        if let Some((p, t)) = self.last.get() {
            if p == *pid {
                return Some(t);
            }
        }
        let t = self.map.get(pid).copied();
        if let Some(t) = t {
            self.last.set(Some((*pid, t)));
        }
        t
    }

    fn insert(&mut self, pid: Tid, t: usize) {
        self.map.insert(pid, t);
        self.last.set(Some((pid, t)));
    }

    fn remove(&mut self, pid: &Tid) -> Option<usize> {
        if self.last.get().is_some_and(|(p, _)| p == *pid) {
            self.last.set(None);
        }
        self.map.remove(pid)
    }
}

pub struct Model {
    pub tasks: Vec<TaskInfo>,
    task_of: TaskIndex,
    pub procs: Vec<ProcInfo>,
    free_tasks: Vec<usize>,
    free_procs: Vec<usize>,
    ended: std::collections::BinaryHeap<std::cmp::Reverse<(u64, usize)>>,
    pub folded: Folded,
    max_ended: usize,
    tables: Vec<Option<FdTable>>,
    free_tables: Vec<usize>,
    pub targets: Vec<TargetAgg>,
    /// Per kind (`TargetKind as usize`): display text -> target (looked up without a copy).
    target_ids: Vec<HashMap<String, u32>>,
    /// Per [`Side`]: decoration text -> its kind and target. An fd opened per request shows
    /// the same decoration each time; reading it (a parse, a display string, its lookup)
    /// cost ~1,400 instructions. Bounded: emptied at [`MAX_DECO_MEMO`] entries.
    deco_targets: [HashMap<Box<str>, (TargetKind, u32)>; 3],
    other_target: Option<u32>,
    pub endpoints: Vec<EndpointAgg>,
    endpoint_ids: HashMap<(TargetKind, Direction, String), u32>,
    other_endpoint: Option<u32>,
    conns: Vec<Conn>,
    free_conns: Vec<u32>,
    /// The task of the event [`Model::on_event`] saw last.
    last_task: usize,
    /// Tasks whose clone, fork or vfork is under way (strace printed it unfinished), with
    /// whether it makes a thread and shares the fd table: a new task seen while exactly one is
    /// under way is that call's child, known before the call returns with its id.
    spawning: Vec<(usize, bool, bool)>,
    /// When the syscall being fed returned (its start plus its duration), if timed.
    call_end: Option<i64>,
    /// The close being fed is of an earlier life of its fd number (see [`Model::earlier_life`]).
    earlier_life: bool,
}

/// Decorations remembered per side (see `Model::deco_targets`).
const MAX_DECO_MEMO: usize = 1 << 12;

/// Which end of a connection names it: the remote end for connections we opened, the local
/// end for connections we accepted, a guess when the trace did not show how it was made.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Side {
    Guess,
    Local,
    Remote,
}

/// Kind and display text of an fd target.
fn describe(t: &FdTarget) -> (TargetKind, String) {
    describe_side(t, Side::Guess)
}

fn describe_side(t: &FdTarget, side: Side) -> (TargetKind, String) {
    match t {
        FdTarget::File(p) => (TargetKind::File, p.clone()),
        FdTarget::Inet { proto, local, remote } => {
            let shown = match (local, remote) {
                (Some(l), Some(r)) => match side {
                    Side::Local => format!("{l} (accepted)"),
                    Side::Remote => r.clone(),
                    Side::Guess => service_side(l, r).to_string(),
                },
                (Some(l), None) => l.clone(),
                _ => "(unconnected)".into(),
            };
            (*proto, shown)
        }
        FdTarget::Unix { detail } => (TargetKind::Unix, unix_display(detail)),
        FdTarget::Netlink { detail } => (TargetKind::Netlink, detail.split(':').next().unwrap_or("").to_string()),
        FdTarget::Pipe => (TargetKind::Pipe, "pipe".into()),
        FdTarget::Socket => (TargetKind::Socket, "socket".into()),
        FdTarget::Anon(a) => anon_kind(a),
        FdTarget::Other(o) => (TargetKind::Other, o.clone()),
    }
}

fn anon_kind(a: &str) -> (TargetKind, String) {
    let a = a.trim_start_matches('[').trim_end_matches(']');
    let kind = match a {
        "eventpoll" => TargetKind::Epoll,
        "eventfd" => TargetKind::Eventfd,
        "timerfd" => TargetKind::Timerfd,
        "signalfd" => TargetKind::Signalfd,
        "inotify" => TargetKind::Inotify,
        "io_uring" => TargetKind::IoUring,
        _ => return (TargetKind::Anon, a.to_string()),
    };
    (kind, kind.as_str().into())
}

/// `12345->12346` or `12345,"/run/x.sock"` or `@"/abstract"`: show the path when there is one.
fn unix_display(detail: &str) -> String {
    match detail.find('"') {
        Some(i) => args::unquote(&detail[i..]).map(std::borrow::Cow::into_owned).unwrap_or_else(|| detail.to_string()),
        None => "unix socket".into(),
    }
}

/// Of two `addr:port` ends, the one that is more likely the service: the one outside Linux's
/// default ephemeral range (32768-60999), else the lower port.
fn service_side<'a>(l: &'a str, r: &'a str) -> &'a str {
    let port = |s: &str| s.rsplit(':').next().and_then(|p| p.parse::<u32>().ok()).unwrap_or(u32::MAX);
    let eph = |p: u32| (32768..=60999).contains(&p);
    let (pl, pr) = (port(l), port(r));
    match (eph(pl), eph(pr)) {
        (false, true) => l,
        (true, false) => r,
        _ if pl < pr => l,
        _ => r,
    }
}

fn basename(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// What an fd refers to, for detectors.
#[derive(Copy, Clone, Debug)]
pub struct TargetView<'m> {
    pub id: u32,
    pub kind: TargetKind,
    /// A path, or the service end of a connection (`127.0.0.1:80`, `... (accepted)`).
    pub display: &'m str,
    /// The connection's endpoint, when the fd is a connection the model saw being made.
    pub endpoint: Option<&'m EndpointAgg>,
}

impl Default for Model {
    fn default() -> Self {
        Model::with_limits(MAX_ENDED_PROCS)
    }
}

impl Model {
    pub fn new() -> Self {
        Model::default()
    }

    /// The target with this id.
    pub fn target(&self, id: u32) -> Option<TargetView<'_>> {
        let t = self.targets.get(id as usize)?;
        Some(TargetView { id, kind: t.kind, display: &t.display, endpoint: None })
    }

    /// What `fd` of thread `pid` refers to now (no side effects).
    pub fn lookup_fd(&self, pid: Tid, fd: i32) -> Option<TargetView<'_>> {
        let task = self.task_of.get(&pid)?;
        let ti = self.procs[self.tasks[task].proc_].table?;
        let e = self.tables[ti].as_ref()?.fds.get(&fd)?;
        let mut v = self.target(e.target)?;
        v.endpoint =
            e.conn.and_then(|c| self.conns.get(c as usize)).and_then(|c| self.endpoints.get(c.endpoint as usize));
        Some(v)
    }

    /// The close just fed is of an earlier life of its fd number: another thread got the
    /// number again (an accept, an open) and its call was reported before this close, which
    /// began before that call returned. What is known of the fd now is the next life's, which
    /// this close does not end (a server's handler closing connection A while its acceptor
    /// takes connection B on the same number: under strace, B's accept can be printed first).
    /// Known only from timestamps.
    pub fn earlier_life(&self) -> bool {
        self.earlier_life
    }

    /// The process of the last event's thread ([`Model::tgid`] without a lookup).
    pub fn last_tgid(&self) -> Tgid {
        self.tasks.get(self.last_task).map_or(Tgid(0), |t| self.procs[t.proc_].pid)
    }

    /// The process (thread group leader) a thread belongs to.
    pub fn tgid(&self, pid: Tid) -> Tgid {
        self.task_of.get(&pid).map_or(pid.as_process(), |t| self.procs[self.tasks[t].proc_].pid)
    }

    /// `pid 1234 (python3)`, or `thread 1240 of pid 1234 (python3)` for a thread.
    pub fn label(&self, pid: Tid) -> String {
        let Some(t) = self.task_of.get(&pid) else {
            return format!("pid {pid}");
        };
        let p = &self.procs[self.tasks[t].proc_];
        let comm = p.comm.as_deref().map(|c| format!(" ({c})")).unwrap_or_default();
        if pid.leads(p.pid) {
            format!("pid {pid}{comm}")
        } else {
            format!("thread {pid} of pid {}{comm}", p.pid)
        }
    }

    /// The program name (comm, set by execve or prctl) of the process `pid` belongs to.
    pub fn comm(&self, pid: Tid) -> Option<&str> {
        let t = self.task_of.get(&pid)?;
        self.procs[self.tasks[t].proc_].comm.as_deref()
    }

    /// A model that keeps at most `max_ended` ended processes one by one.
    pub fn with_limits(max_ended: usize) -> Self {
        Model {
            tasks: Vec::new(),
            task_of: TaskIndex::default(),
            procs: Vec::new(),
            free_tasks: Vec::new(),
            free_procs: Vec::new(),
            ended: Default::default(),
            folded: Folded::default(),
            max_ended,
            tables: Vec::new(),
            free_tables: Vec::new(),
            targets: Vec::new(),
            target_ids: Vec::new(),
            deco_targets: Default::default(),
            other_target: None,
            endpoints: Vec::new(),
            endpoint_ids: HashMap::default(),
            other_endpoint: None,
            conns: Vec::new(),
            free_conns: Vec::new(),
            last_task: 0,
            spawning: Vec::new(),
            earlier_life: false,
            call_end: None,
        }
    }

    fn new_table(&mut self) -> usize {
        let t = Some(FdTable { fds: HashMap::default(), users: 1, closed: HashMap::default() });
        if let Some(i) = self.free_tables.pop() {
            self.tables[i] = t;
            return i;
        }
        self.tables.push(t);
        self.tables.len() - 1
    }

    fn free_table(&mut self, i: usize) {
        if self.tables[i].take().is_some() {
            self.free_tables.push(i);
        }
    }

    /// Syscalls seen so far on a thread (0 for a thread not seen): a detector compares its own
    /// calls with all the thread made, a share that does not depend on the tracer's speed.
    pub fn thread_calls(&self, pid: Tid) -> u64 {
        self.task_of.get(&pid).map_or(0, |t| self.tasks[t].calls)
    }

    /// The task for a tid, created on first sight as its own process.
    #[inline]
    pub fn task(&mut self, pid: Tid) -> usize {
        if let Some(t) = self.task_of.get(&pid) {
            return t;
        }
        let table = self.new_table();
        let proc_ = match self.free_procs.pop() {
            Some(i) => i,
            None => {
                self.procs.push(ProcInfo::default());
                self.procs.len() - 1
            }
        };
        self.procs[proc_] = ProcInfo { pid: pid.as_process(), table: Some(table), ..Default::default() };
        let info = TaskInfo { tid: pid, proc_, ..Default::default() };
        let t = match self.free_tasks.pop() {
            Some(i) => {
                self.tasks[i] = info;
                i
            }
            None => {
                self.tasks.push(info);
                self.tasks.len() - 1
            }
        };
        self.procs[proc_].tasks.push(t);
        self.task_of.insert(pid, t);
        t
    }

    /// Keep at most [`MAX_ENDED_PROCS`] ended processes; beyond, the one with the fewest
    /// calls is folded into [`Model::folded`] and its slots are reused.
    fn retire(&mut self, p: usize) {
        let calls: u64 = self.procs[p].tasks.iter().map(|&t| self.tasks[t].calls).sum();
        self.ended.push(std::cmp::Reverse((calls, p)));
        while self.ended.len() > self.max_ended {
            let Some(std::cmp::Reverse((calls, q))) = self.ended.pop() else { break };
            let tasks = std::mem::take(&mut self.procs[q].tasks);
            self.folded.processes += 1;
            self.folded.calls += calls;
            for t in tasks {
                self.folded.threads += 1;
                self.folded.errors += self.tasks[t].errors;
                self.folded.dur_ns += self.tasks[t].dur_ns;
                let tid = self.tasks[t].tid;
                if self.task_of.get(&tid) == Some(t) {
                    self.task_of.remove(&tid);
                }
                self.tasks[t] = TaskInfo::default();
                self.free_tasks.push(t);
            }
            if let Some(ti) = self.procs[q].table.take() {
                self.free_table(ti);
            }
            self.procs[q] = ProcInfo { absorbed: true, ..Default::default() };
            self.free_procs.push(q);
        }
    }

    /// The path an open names, for an fd without a decoration. A relative path opened through a
    /// directory fd the model saw opened with an absolute path is named with that directory's
    /// path: a directory walker opens `LC_MESSAGES` in directory after directory through one
    /// reused fd number, and those are different directories.
    fn opened_path(&self, task: usize, sc: &Syscall) -> String {
        let Some(p) = sc.path() else { return "?".into() };
        if p.starts_with('/') {
            return p.into_owned();
        }
        let dir = sc.dir_fd().filter(|fd| fd.num >= 0).and_then(|fd| {
            let ti = self.procs[self.tasks[task].proc_].table?;
            let t = self.targets.get(self.tables[ti].as_ref()?.fds.get(&fd.num)?.target as usize)?;
            (t.kind == TargetKind::File && t.display.starts_with('/')).then_some(t.display.as_str())
        });
        match dir {
            Some(d) => join_lexically(d, &p),
            None => p.into_owned(),
        }
    }

    fn table_of(&mut self, task: usize) -> Option<&mut FdTable> {
        let p = self.tasks[task].proc_;
        let ti = self.procs[p].table?;
        self.tables[ti].as_mut()
    }

    fn intern_target(&mut self, kind: TargetKind, display: String) -> u32 {
        if let Some(&id) = self.target_ids.get(kind as usize).and_then(|m| m.get(display.as_str())) {
            return id;
        }
        if self.targets.len() >= MAX_TARGETS {
            if let Some(o) = self.other_target {
                return o;
            }
            self.targets.push(TargetAgg {
                display: "(other targets)".into(),
                kind: TargetKind::Other,
                ..Default::default()
            });
            let id = (self.targets.len() - 1) as u32;
            self.other_target = Some(id);
            return id;
        }
        self.targets.push(TargetAgg { display: display.clone(), kind, ..Default::default() });
        let id = (self.targets.len() - 1) as u32;
        if self.target_ids.len() <= kind as usize {
            self.target_ids.resize_with(kind as usize + 1, HashMap::default);
        }
        self.target_ids[kind as usize].insert(display, id);
        id
    }

    fn intern_endpoint(&mut self, proto: TargetKind, direction: Direction, endpoint: String) -> u32 {
        let key = (proto, direction, endpoint);
        if let Some(&id) = self.endpoint_ids.get(&key) {
            return id;
        }
        if self.endpoints.len() >= MAX_ENDPOINTS {
            if let Some(o) = self.other_endpoint {
                return o;
            }
            self.endpoints.push(EndpointAgg {
                endpoint: "(other endpoints)".into(),
                proto,
                direction,
                ..Default::default()
            });
            let id = (self.endpoints.len() - 1) as u32;
            self.other_endpoint = Some(id);
            return id;
        }
        self.endpoints.push(EndpointAgg { endpoint: key.2.clone(), proto, direction, ..Default::default() });
        let id = (self.endpoints.len() - 1) as u32;
        self.endpoint_ids.insert(key, id);
        id
    }

    /// A new fd entry pointing at a target described by a decoration or a fallback.
    fn set_fd_side(
        &mut self,
        task: usize,
        fd: i32,
        deco: Option<&str>,
        fallback: impl FnOnce() -> (TargetKind, String),
        proto: Option<TargetKind>,
        side: Side,
    ) {
        if fd < 0 {
            return;
        }
        let deco = deco.map(|d| self.inside_root(task, d));
        let (kind, target) = match deco {
            Some(d) => match self.deco_targets[side as usize].get(d) {
                Some(&known) => known,
                None => {
                    let (kind, display) = describe_side(&FdTarget::from_deco(d), side);
                    let target = self.intern_target(kind, display);
                    let memo = &mut self.deco_targets[side as usize];
                    if memo.len() >= MAX_DECO_MEMO {
                        memo.clear();
                    }
                    memo.insert(d.into(), (kind, target));
                    (kind, target)
                }
            },
            None => {
                // what the call itself says, made only when no decoration says more
                let (kind, display) = fallback();
                (kind, self.intern_target(kind, display))
            }
        };
        let proto = if proto.is_none() && kind.is_connection_socket() { Some(kind) } else { proto };
        let entry =
            Fd { target, deco: deco.map(Into::into), conn: None, proto, local: None, side, since: self.call_end };
        if let Some(t) = self.table_of(task) {
            if let Some(old) = t.fds.insert(fd, entry) {
                // an fd reused without a close we saw: finish its connection
                if let Some(c) = old.conn {
                    self.release_conn(c, None);
                }
            }
        }
    }

    /// A new connection to `endpoint`, referred to by one fd.
    fn new_conn(&mut self, endpoint: u32, opened_ns: Option<i64>) -> u32 {
        let c = Conn { endpoint, opened_ns, last_dir: 0, refs: 1 };
        if let Some(i) = self.free_conns.pop() {
            self.conns[i as usize] = c;
            return i;
        }
        self.conns.push(c);
        (self.conns.len() - 1) as u32
    }

    /// One fd of connection `c` closed (or its process ended) at `at`: when it was the last,
    /// the connection is closed and its lifetime counted.
    fn release_conn(&mut self, c: u32, at: Option<i64>) {
        let Some(conn) = self.conns.get_mut(c as usize) else { return };
        conn.refs = conn.refs.saturating_sub(1);
        if conn.refs > 0 {
            return;
        }
        let (ep, opened) = (conn.endpoint, conn.opened_ns);
        self.free_conns.push(c);
        let e = &mut self.endpoints[ep as usize];
        e.closed += 1;
        if let (Some(a), Some(b)) = (opened, at) {
            e.lifetime_ns += b.saturating_sub(a).max(0) as u64;
            e.lifetime_timed += 1;
        }
    }

    /// Connections still open: (endpoint, when opened).
    pub fn open_connections(&self) -> impl Iterator<Item = (u32, Option<i64>)> + '_ {
        self.conns.iter().filter(|c| c.refs > 0).map(|c| (c.endpoint, c.opened_ns))
    }

    /// A `-yy` path as the process sees it: without its root, when a chroot the trace showed
    /// moved it (strace reads the path from outside; `/` when it is the root itself).
    fn inside_root<'a>(&self, task: usize, d: &'a str) -> &'a str {
        let Some(root) = self.procs[self.tasks[task].proc_].root.as_deref() else { return d };
        match d.strip_prefix(root) {
            Some(rest) if rest.starts_with('/') => rest,
            Some("") => "/",
            _ => d,
        }
    }

    /// Look up (or learn from a decoration) the target of an fd argument.
    fn fd_target(&mut self, task: usize, fd: i32, deco: Option<&str>) -> Option<u32> {
        if fd < 0 {
            return None;
        }
        let deco = deco.map(|d| self.inside_root(task, d));
        let known =
            self.table_of(task).and_then(|t| t.fds.get(&fd)).map(|e| (e.target, e.deco.as_deref() == deco, e.side));
        match (known, deco) {
            (Some((target, true, _)), _) | (Some((target, false, _)), None) => Some(target),
            (k, Some(d)) => {
                // first sight or the decoration changed (a socket got connected)
                let side = k.map_or(Side::Guess, |k| k.2);
                let (kind, display) = describe_side(&FdTarget::from_deco(d), side);
                let target = self.intern_target(kind, display);
                if let Some(t) = self.table_of(task) {
                    let e = t.fds.entry(fd).or_insert(Fd {
                        target,
                        deco: None,
                        conn: None,
                        proto: None,
                        local: None,
                        side,
                        since: None,
                    });
                    e.target = target;
                    e.deco = Some(d.into());
                    if kind.is_connection_socket() {
                        e.proto = Some(kind);
                    }
                }
                Some(target)
            }
            (None, None) => {
                // opened before the trace started
                let target = self.intern_target(TargetKind::Unknown, format!("fd {fd} (opened before trace)"));
                if let Some(t) = self.table_of(task) {
                    t.fds.insert(
                        fd,
                        Fd { target, deco: None, conn: None, proto: None, local: None, side: Side::Guess, since: None },
                    );
                }
                Some(target)
            }
        }
    }

    /// A close of an fd number with no entry, begun before the last entry of that number was
    /// made: the close of an earlier life of the fd, reported late (eBPF sends each call at its
    /// return: a worker's close can come after the accept that reused the number on another
    /// thread, and after that connection's own close). Not an fd opened before the trace: it
    /// counts against the target of the last life (the same number, most likely the same role).
    fn late_close(&mut self, task: usize, fd: i32, ts: Option<i64>) -> Option<u32> {
        let t = self.table_of(task)?;
        if t.fds.contains_key(&fd) {
            return None;
        }
        match (t.closed.get(&fd), ts) {
            (Some(&(s, target)), Some(c)) if c < s => Some(target),
            _ => None,
        }
    }

    /// Feed one event. Returns the target the syscall's fd refers to, if any.
    pub fn on_event(&mut self, ev: &Event) -> Option<u32> {
        self.earlier_life = false;
        let task = match (self.task_of.get(&ev.tid), self.spawning.as_slice()) {
            (Some(t), _) => t,
            // a task's first call, printed before the clone that made it returned: it is that
            // clone's child (a thread of its process, when CLONE_THREAD), so that what it does
            // now is counted where it belongs
            (None, &[(parent, thread, files)]) if !matches!(ev.kind, EventKind::TaskKnown { .. }) => {
                self.spawning.clear();
                self.on_spawn(parent, ev.tid, thread, files);
                self.task(ev.tid)
            }
            (None, _) => self.task(ev.tid),
        };
        self.last_task = task;
        if let EventKind::Spawning { thread, files } = ev.kind {
            self.spawning.retain(|s| s.0 != task);
            if self.spawning.len() < 64 {
                self.spawning.push((task, thread, files));
            }
            return None;
        }
        if let EventKind::FdKnown { fd, target } = ev.kind {
            // what the fd is, as a decoration on its first use would have said
            self.fd_target(task, fd, Some(target));
            return None;
        }
        if let EventKind::TaskKnown { tgid, parent, comm } = ev.kind {
            // who the thread is, as its clone and execve would have said
            self.task_known(ev.tid, tgid, parent, comm);
            return None;
        }
        self.tasks[task].events += 1;
        match &ev.kind {
            EventKind::Syscall(sc) => self.on_syscall(task, ev.ts_ns, sc),
            EventKind::Exited { code } => {
                self.end_task(task, ev.ts_ns, format!("exited {code}"));
                None
            }
            EventKind::Alias { old } => {
                self.alias(*old, ev.tid, task);
                None
            }
            EventKind::Killed { signal, core_dumped } => {
                let core = if *core_dumped { " (core dumped)" } else { "" };
                self.end_task(task, ev.ts_ns, format!("killed by {signal}{core}"));
                None
            }
            _ => None,
        }
    }

    /// Thread `tid` belongs to process `tgid`, whose parent is `parent` and program `comm`
    /// (empty: unknown): what /proc said when attaching, or the kernel at an exec. A thread
    /// joins its process as if the process had cloned it (one fd table, the fds it opened
    /// meanwhile included), so it is counted as a thread and its fds are its process's.
    fn task_known(&mut self, tid: Tid, tgid: Tgid, parent: Option<Tgid>, comm: &str) {
        if !tid.leads(tgid) {
            let leader = self.task(tgid.main_thread());
            self.on_spawn(leader, tid, true, true);
        }
        let task = self.task(tid);
        self.last_task = task;
        let p = self.tasks[task].proc_;
        if let Some(pp) = parent {
            self.procs[p].parent.get_or_insert(pp);
        }
        if !comm.is_empty() {
            self.procs[p].comm = Some(comm.to_string());
        }
    }

    /// `new` is the task earlier seen as `old`: from now on the old task answers to `new`.
    fn alias(&mut self, old: Tid, new: Tid, fresh: usize) {
        let Some(t) = self.task_of.get(&old) else {
            return;
        };
        if t == fresh {
            return;
        }
        // the freshly made task for `new` had only this event: fold it away
        let p = self.tasks[fresh].proc_;
        self.procs[p].absorbed = true;
        if let Some(ti) = self.procs[p].table.take() {
            self.free_table(ti);
        }
        self.tasks[fresh].events = 0;
        self.task_of.remove(&old);
        self.task_of.insert(new, t);
        self.last_task = t;
        self.tasks[t].tid = new;
        self.tasks[t].events += 1;
        let op = self.tasks[t].proc_;
        if old.leads(self.procs[op].pid) {
            self.procs[op].pid = new.as_process();
        }
    }

    fn end_task(&mut self, task: usize, ts: Option<i64>, how: String) {
        self.spawning.retain(|s| s.0 != task);
        self.tasks[task].ended = true;
        let p = self.tasks[task].proc_;
        let leader = self.tasks[task].tid.leads(self.procs[p].pid);
        if leader {
            self.procs[p].end = Some(how);
            self.retire(p);
            // the process is gone: its fds close, its table is freed
            if let Some(ti) = self.procs[p].table.take() {
                if let Some(t) = self.tables[ti].as_mut() {
                    t.users = t.users.saturating_sub(1);
                    if t.users == 0 {
                        if let Some(t) = self.tables[ti].take() {
                            self.free_tables.push(ti);
                            for (_, fd) in t.fds {
                                if let Some(c) = fd.conn {
                                    self.release_conn(c, ts);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    fn on_syscall(&mut self, task: usize, ts: Option<i64>, sc: &Syscall) -> Option<u32> {
        if !self.spawning.is_empty() {
            // a thread makes one call at a time: its clone has returned (or never will)
            self.spawning.retain(|s| s.0 != task);
        }
        {
            let t = &mut self.tasks[task];
            t.calls += 1;
            if sc.ret.is_err() {
                t.errors += 1;
            }
            t.dur_ns += sc.dur_ns.unwrap_or(0);
        }
        self.call_end = ts.zip(sc.dur_ns).map(|(t, d)| t.saturating_add(d as i64));
        let class = sc.sys.class();
        let ret_fd = match sc.ret {
            Ret::Ok { val, deco, .. } if (0..=i32::MAX as i64).contains(&val) => Some((val as i32, deco)),
            _ => None,
        };
        let mut target = None;
        if sc.sys == Sys::Connect {
            // count the connect against where it goes, not the unconnected socket
            self.on_connect(task, ts, sc);
        }
        if class.has(Class::FD) {
            if let Some(fd) = sc.fd() {
                target = match sc.sys {
                    Sys::Close => {
                        let late = self.late_close(task, fd.num, ts);
                        self.earlier_life = late.is_some();
                        late
                    }
                    _ => None,
                }
                .or_else(|| self.fd_target(task, fd.num, fd.deco));
                if let Some(id) = target {
                    let t = &mut self.targets[id as usize];
                    t.calls += 1;
                    if sc.ret.is_err() {
                        t.errors += 1;
                    }
                    t.dur_ns += sc.dur_ns.unwrap_or(0);
                    if let Some(b) = sc.bytes() {
                        if class.has(Class::READ) {
                            t.bytes_read += b;
                        } else {
                            t.bytes_written += b;
                        }
                        self.count_conn_bytes(task, fd.num, class, b, sc, id);
                    }
                }
            }
        }
        match sc.sys {
            s if class.has(Class::OPEN) => {
                let _ = s;
                if let Some((fd, deco)) = ret_fd {
                    let name = if deco.is_none() { Some(self.opened_path(task, sc)) } else { None };
                    self.set_fd_side(
                        task,
                        fd,
                        deco,
                        || (TargetKind::File, name.unwrap_or_default()),
                        None,
                        Side::Guess,
                    );
                }
            }
            Sys::Socket => {
                if let Some((fd, deco)) = ret_fd {
                    let proto = sc.socket_kind().unwrap_or(TargetKind::Socket);
                    self.set_fd_side(
                        task,
                        fd,
                        deco,
                        || (proto, format!("{proto} (unconnected)")),
                        Some(proto),
                        Side::Guess,
                    );
                }
            }
            Sys::Bind | Sys::Getsockname => {
                if let (Some(fd), Some(addr)) = (sc.fd(), sc.sockaddr()) {
                    if ret_fd.is_some() {
                        let local = addr.to_string();
                        // name an inet socket by its address, as -yy would (`127.0.0.1:8080`)
                        let kind =
                            self.table_of(task).and_then(|t| t.fds.get(&fd.num)).map(|e| (e.proto, e.deco.is_none()));
                        let target = match kind {
                            Some((Some(proto), true)) if proto.is_tcp() || proto.is_udp() => {
                                matches!(addr, SockAddr::Inet { .. }).then(|| self.intern_target(proto, local.clone()))
                            }
                            _ => None,
                        };
                        if let Some(e) = self.table_of(task).and_then(|t| t.fds.get_mut(&fd.num)) {
                            e.local = Some(local);
                            if let Some(id) = target {
                                e.target = id;
                            }
                        }
                    }
                }
            }
            Sys::Accept | Sys::Accept4 => {
                if let Some((fd, deco)) = ret_fd {
                    self.on_accept(task, ts, sc, fd, deco);
                }
            }
            Sys::Chroot if matches!(sc.ret, Ret::Ok { .. }) => {
                // an absolute path, from the root it had (a relative one needs the working
                // directory, which the model does not follow: the root is then unknown)
                let p = self.tasks[task].proc_;
                let path = sc.path().filter(|p| p.starts_with('/')).map(|p| p.to_string());
                self.procs[p].root = path.map(|path| {
                    let from = self.procs[p].root.as_deref().unwrap_or("/");
                    let root = join_lexically(from, path.trim_start_matches('/'));
                    root.into_boxed_str()
                });
                if self.procs[p].root.as_deref() == Some("/") {
                    self.procs[p].root = None;
                }
            }
            Sys::Close => {
                if let Some(fd) = sc.fd() {
                    let mut reborn = false;
                    if let Some(t) = self.table_of(task) {
                        // an entry made by a call that returned after this close began is the
                        // fd's next life (another thread got the number as soon as the kernel
                        // freed it, and its call was reported first): not the one closed
                        reborn = matches!((t.fds.get(&fd.num).and_then(|e| e.since), ts), (Some(s), Some(c)) if s > c);
                        if let Some(e) = if reborn { None } else { t.fds.remove(&fd.num) } {
                            if let Some(s) = e.since {
                                t.closed.insert(fd.num, (s, e.target));
                            }
                            if let Some(c) = e.conn {
                                self.release_conn(c, ts.map(|t| t + sc.dur_ns.unwrap_or(0) as i64));
                            }
                        }
                    }
                    self.earlier_life |= reborn;
                }
            }
            Sys::Dup | Sys::Dup2 | Sys::Dup3 | Sys::Fcntl | Sys::Fcntl64 => {
                let dupfd = matches!(sc.sys, Sys::Dup | Sys::Dup2 | Sys::Dup3) || sc.fcntl_cmd() == Some(FcntlCmd::Dup);
                if let (true, Some((newfd, _)), Some(old)) = (dupfd, ret_fd, sc.fd()) {
                    if newfd != old.num {
                        let entry = self.table_of(task).and_then(|t| t.fds.get(&old.num)).cloned();
                        if let Some(e) = entry {
                            // the copy refers to the same connection
                            if let Some(c) = e.conn.and_then(|c| self.conns.get_mut(c as usize)) {
                                c.refs += 1;
                            }
                            let replaced = self.table_of(task).and_then(|t| t.fds.insert(newfd, e));
                            if let Some(c) = replaced.and_then(|r| r.conn) {
                                self.release_conn(c, ts);
                            }
                        }
                    }
                }
            }
            Sys::Pipe | Sys::Pipe2 | Sys::Socketpair if ret_fd.is_some() => {
                if let Some((a, b)) = sc.fd_pair() {
                    let (kind, proto) = if sc.sys == Sys::Socketpair {
                        (TargetKind::Unix, Some(TargetKind::Unix))
                    } else {
                        (TargetKind::Pipe, None)
                    };
                    let disp = if sc.sys == Sys::Socketpair { "socketpair" } else { "pipe" };
                    self.set_fd_side(task, a, None, || (kind, disp.into()), proto, Side::Guess);
                    self.set_fd_side(task, b, None, || (kind, disp.into()), proto, Side::Guess);
                }
            }
            Sys::Eventfd | Sys::Eventfd2 => self.anon_fd(task, ret_fd, TargetKind::Eventfd),
            Sys::EpollCreate | Sys::EpollCreate1 => self.anon_fd(task, ret_fd, TargetKind::Epoll),
            Sys::TimerfdCreate => self.anon_fd(task, ret_fd, TargetKind::Timerfd),
            Sys::Signalfd | Sys::Signalfd4 => self.anon_fd(task, ret_fd, TargetKind::Signalfd),
            Sys::InotifyInit | Sys::InotifyInit1 => self.anon_fd(task, ret_fd, TargetKind::Inotify),
            Sys::IoUringSetup => self.anon_fd(task, ret_fd, TargetKind::IoUring),
            Sys::MemfdCreate => {
                if let Some((fd, deco)) = ret_fd {
                    let name = sc.memfd_name().map(std::borrow::Cow::into_owned).unwrap_or_default();
                    self.set_fd_side(
                        task,
                        fd,
                        deco,
                        || (TargetKind::Memfd, format!("memfd:{name}")),
                        None,
                        Side::Guess,
                    );
                }
            }
            Sys::Clone | Sys::Clone3 | Sys::Fork | Sys::Vfork => {
                if let Some((child, _)) = ret_fd {
                    if child > 0 {
                        let flags = sc.clone_flags().unwrap_or_default();
                        let thread = flags.contains(CloneFlags::THREAD);
                        let share = flags.contains(CloneFlags::FILES);
                        self.on_spawn(task, Tid(child as u32), thread, share);
                    }
                }
            }
            Sys::Execve | Sys::Execveat if ret_fd.is_some() => {
                if let Some(p) = sc.path() {
                    let pi = self.tasks[task].proc_;
                    self.procs[pi].comm = Some(basename(&p).to_string());
                }
            }
            Sys::Prctl => {
                if let Some(n) = sc.prctl_name() {
                    let pi = self.tasks[task].proc_;
                    if self.tasks[task].tid.leads(self.procs[pi].pid) {
                        self.procs[pi].comm = Some(n.into_owned());
                    }
                }
            }
            _ => {}
        }
        target
    }

    fn anon_fd(&mut self, task: usize, ret_fd: Option<(i32, Option<&str>)>, kind: TargetKind) {
        if let Some((fd, deco)) = ret_fd {
            self.set_fd_side(task, fd, deco, || (kind, kind.as_str().into()), None, Side::Guess);
        }
    }

    fn count_conn_bytes(&mut self, task: usize, fd: i32, class: Class, b: u64, sc: &Syscall, target: u32) {
        let conn_id = self.table_of(task).and_then(|t| t.fds.get(&fd)).and_then(|e| e.conn);
        // a turn of the conversation: data the other way than last time on this connection
        // (one connection may show as two targets, its reader's and its writer's view), or on
        // this target when the connection was made before the trace
        if b > 0 {
            let dir = if class.has(Class::READ) { 1 } else { 2 };
            let last = match conn_id.and_then(|c| self.conns.get_mut(c as usize)) {
                Some(c) => &mut c.last_dir,
                None => &mut self.targets[target as usize].last_dir,
            };
            if *last != dir {
                *last = dir;
                self.targets[target as usize].turns += 1;
            }
        }
        let conn = conn_id.and_then(|c| self.conns.get(c as usize)).map(|c| c.endpoint);
        let ep = match conn {
            Some(ep) => Some(ep),
            None if matches!(sc.sys, Sys::Sendto | Sys::Recvfrom | Sys::Sendmsg | Sys::Recvmsg) => {
                // unconnected datagrams (DNS over UDP): the address is in the call
                match sc.sockaddr() {
                    Some(addr @ SockAddr::Inet { .. }) => {
                        let proto = self
                            .table_of(task)
                            .and_then(|t| t.fds.get(&fd))
                            .and_then(|e| e.proto)
                            .unwrap_or(TargetKind::Udp);
                        Some(self.intern_endpoint(proto, Direction::Out, addr.to_string()))
                    }
                    _ => None,
                }
            }
            None => None,
        };
        if let Some(ep) = ep {
            let e = &mut self.endpoints[ep as usize];
            if class.has(Class::READ) {
                e.bytes_received += b;
            } else {
                e.bytes_sent += b;
            }
        }
    }

    fn on_connect(&mut self, task: usize, ts: Option<i64>, sc: &Syscall) {
        let ok = match &sc.ret {
            Ret::Ok { .. } => true,
            Ret::Err { errno, .. } => *errno == "EINPROGRESS",
            _ => false,
        };
        let (Some(fd), Some(addr)) = (sc.fd(), sc.sockaddr()) else {
            return;
        };
        if matches!(addr, SockAddr::Netlink { .. } | SockAddr::Other { .. }) {
            return;
        }
        let entry_proto = self.table_of(task).and_then(|t| t.fds.get(&fd.num)).and_then(|e| e.proto);
        let proto = match (&addr, entry_proto) {
            (_, Some(p)) => p,
            (SockAddr::Unix { .. }, _) => TargetKind::Unix,
            (SockAddr::Inet { ip, .. }, _) if ip.is_ipv6() => TargetKind::Tcp6,
            _ => TargetKind::Tcp,
        };
        let ep = self.intern_endpoint(proto, Direction::Out, addr.to_string());
        let e = &mut self.endpoints[ep as usize];
        e.connect_ns += sc.dur_ns.unwrap_or(0);
        if !ok {
            return;
        }
        e.connections += 1;
        let shown = addr.to_string();
        let target = self.intern_target(proto, shown);
        let conn = self.new_conn(ep, ts);
        let mut replaced = None;
        if let Some(t) = self.table_of(task) {
            let e = t.fds.entry(fd.num).or_insert(Fd {
                target,
                deco: None,
                conn: None,
                proto: Some(proto),
                local: None,
                side: Side::Remote,
                since: None,
            });
            e.target = target;
            e.side = Side::Remote;
            e.proto = Some(proto);
            replaced = e.conn.replace(conn);
        }
        if let Some(c) = replaced {
            self.release_conn(c, ts);
        }
    }

    fn on_accept(&mut self, task: usize, ts: Option<i64>, sc: &Syscall, fd: i32, deco: Option<&str>) {
        let listener = sc.fd();
        let (lproto, llocal, ldeco) = listener
            .and_then(|l| {
                self.table_of(task).and_then(|t| t.fds.get(&l.num)).map(|e| (e.proto, e.local.clone(), e.deco.clone()))
            })
            .unwrap_or((None, None, None));
        // where the connection arrived: the accepted socket's local end (-yy), else the
        // listener's decoration, else its bound address (which may say port 0)
        let inet_local = |d: Option<&str>| match d.map(FdTarget::from_deco) {
            Some(FdTarget::Inet { local, .. }) => local,
            _ => None,
        };
        let local = inet_local(deco)
            .or_else(|| inet_local(ldeco.as_deref()))
            .or(llocal)
            .or_else(|| listener.and_then(|l| l.deco).map(|d| describe(&FdTarget::from_deco(d)).1))
            .unwrap_or_else(|| "(listening socket)".into());
        let proto = lproto.unwrap_or_else(|| match sc.sockaddr() {
            Some(SockAddr::Inet { ip, .. }) if ip.is_ipv6() => TargetKind::Tcp6,
            Some(SockAddr::Unix { .. }) => TargetKind::Unix,
            _ => TargetKind::Tcp,
        });
        let ep = self.intern_endpoint(proto, Direction::In, local.clone());
        self.endpoints[ep as usize].connections += 1;
        self.set_fd_side(task, fd, deco, || (proto, format!("{local} (accepted)")), Some(proto), Side::Local);
        let conn = self.new_conn(ep, ts);
        let mut placed = false;
        if let Some(t) = self.table_of(task) {
            if let Some(e) = t.fds.get_mut(&fd) {
                e.conn = Some(conn);
                placed = true;
            }
        }
        if !placed {
            self.release_conn(conn, ts);
        }
    }

    fn on_spawn(&mut self, parent_task: usize, child: Tid, thread: bool, share_files: bool) {
        let parent_proc = self.tasks[parent_task].proc_;
        let parent_pid = self.procs[parent_proc].pid;
        let existing = self.task_of.get(&child);
        let child_task = match existing {
            Some(t) => t,
            None => self.task(child),
        };
        let own_proc = self.tasks[child_task].proc_;
        if thread {
            if own_proc != parent_proc {
                // first seen alone (its lines came before clone returned): it is a thread,
                // and so is any thread it made meanwhile
                let moved = std::mem::take(&mut self.procs[own_proc].tasks);
                for &t in &moved {
                    self.tasks[t].proc_ = parent_proc;
                }
                self.procs[parent_proc].tasks.extend(moved);
                if let Some(ti) = self.procs[own_proc].table.take() {
                    // the fds it opened meanwhile live in the table it shares with its process
                    let fds = self.tables[ti].as_mut().map(|t| std::mem::take(&mut t.fds)).unwrap_or_default();
                    if let Some(pt) = self.procs[parent_proc].table.and_then(|pt| self.tables[pt].as_mut()) {
                        for (fd, e) in fds {
                            pt.fds.insert(fd, e);
                        }
                    }
                    self.free_table(ti);
                }
                self.procs[own_proc] = ProcInfo { absorbed: true, ..Default::default() };
                self.free_procs.push(own_proc);
            }
            return;
        }
        self.procs[own_proc].parent = Some(parent_pid);
        if self.procs[own_proc].comm.is_none() {
            self.procs[own_proc].comm = self.procs[parent_proc].comm.clone();
        }
        if self.procs[own_proc].root.is_none() {
            self.procs[own_proc].root = self.procs[parent_proc].root.clone();
        }
        let Some(pt) = self.procs[parent_proc].table else {
            return;
        };
        if share_files {
            if let Some(ti) = self.procs[own_proc].table.take() {
                self.free_table(ti);
            }
            self.procs[own_proc].table = Some(pt);
            if let Some(t) = self.tables[pt].as_mut() {
                t.users += 1;
            }
        } else if let Some(parent_fds) = self.tables[pt].as_ref().map(|t| t.fds.clone()) {
            // fork copies the table; entries the child already made win. A copied connection
            // is the same connection: the child's I/O on it is its endpoint's, and it stays
            // open until the last copy closes
            let mut copied = Vec::new();
            if let Some(ti) = self.procs[own_proc].table {
                if let Some(t) = self.tables[ti].as_mut() {
                    for (fd, e) in parent_fds {
                        if let std::collections::hash_map::Entry::Vacant(v) = t.fds.entry(fd) {
                            copied.extend(e.conn);
                            v.insert(e);
                        }
                    }
                }
            }
            for c in copied {
                if let Some(c) = self.conns.get_mut(c as usize) {
                    c.refs += 1;
                }
            }
        }
    }
}

/// `dir/rel` with `.` and `..` taken away by name (a walker climbs back with `openat(fd, "..")`);
/// `dir` is absolute. By name, not by the file system: a `..` after a symbolic link names the
/// link's parent, where the kernel went to the target's.
fn join_lexically(dir: &str, rel: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in dir.split('/').chain(rel.split('/')) {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    let mut out = String::with_capacity(dir.len() + rel.len() + 1);
    for c in &parts {
        out.push('/');
        out.push_str(c);
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{atomic::AtomicU64, Arc};

    #[test]
    fn relative_opens_join_their_directory_by_name() {
        assert_eq!(join_lexically("/usr/share/locale/de", "LC_MESSAGES"), "/usr/share/locale/de/LC_MESSAGES");
        assert_eq!(join_lexically("/usr/share/locale/de/LC_MESSAGES", ".."), "/usr/share/locale/de");
        assert_eq!(join_lexically("/usr/share/", "./a/../b/"), "/usr/share/b");
        assert_eq!(join_lexically("/a/../x", "y"), "/x/y");
        assert_eq!(join_lexically("/", ".."), "/");
        assert_eq!(join_lexically("/a", "../../.."), "/");
    }

    /// Feed a recorded fixture through the real reader into a model.
    fn model_of(name: &str, max_ended: usize) -> Model {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/traces").join(name);
        let src = syslint_capture::input::expand_sources(&[path]).expect("fixture");
        let mut m = Model::with_limits(max_ended);
        syslint_capture::read_strace(&src, Arc::new(AtomicU64::new(0)), |e| {
            m.on_event(e);
        })
        .expect("read");
        m
    }

    /// Under strace -f a new task's first calls can be printed before its clone or fork
    /// returns with its id: Go's runtime threads (lab/failed-lookup-storm go-lookpath-bad), make's
    /// children (lab/spawn-per-task near-make), a ThreadingMixIn server's handler thread (a live
    /// lab run counted 39 of 40 requests when a handler's read came that early). Its calls belong
    /// where they belong from the first: the reader announces the call under way
    /// (`Spawning`), and the model makes the new task a thread of that process, or a child of
    /// it, at once.
    #[test]
    fn a_task_printed_before_its_clone_returns_is_placed_from_its_first_call() {
        let lab = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../lab");
        let mut early_total = 0;
        for trace in [
            "failed-lookup-storm/traces/go-lookpath-bad.f-tt-T-yy.strace.gz",
            "spawn-per-task/traces/near-make.f-tt-T-yy.strace.gz",
        ] {
            let src = syslint_capture::input::expand_sources(&[lab.join(trace)]).expect("lab trace");
            let mut m = Model::with_limits(1000);
            // each task's first call: whether its clone had returned, its process and parent then
            let mut firsts = Vec::new();
            let mut cloned_by = HashMap::default();
            syslint_capture::read_strace(&src, Arc::new(AtomicU64::new(0)), |e| {
                let first = m.task_of.get(&e.tid).is_none() && matches!(e.kind, EventKind::Syscall(_));
                m.on_event(e);
                if let EventKind::Syscall(sc) = &e.kind {
                    if let (Sys::Clone | Sys::Clone3 | Sys::Fork | Sys::Vfork, Ret::Ok { val, .. }) = (sc.sys, &sc.ret)
                    {
                        let thread = sc.clone_flags().is_some_and(|f| f.contains(CloneFlags::THREAD));
                        cloned_by.insert(*val as u32, (e.tid, thread));
                    }
                }
                if first {
                    let p = &m.procs[m.tasks[m.task_of.get(&e.tid).unwrap()].proc_];
                    firsts.push((e.tid, cloned_by.contains_key(&e.tid.0), m.tgid(e.tid), p.parent));
                }
            })
            .expect("read");
            let mut early = 0;
            for (tid, done, tgid, parent) in firsts {
                let Some(&(by, thread)) = cloned_by.get(&tid.0) else { continue };
                if done {
                    continue;
                }
                early += 1;
                if thread {
                    assert_eq!(tgid, m.tgid(by), "{trace}: thread {tid} of {by}'s process from its first call");
                } else {
                    assert_eq!(parent, Some(m.tgid(by)), "{trace}: {tid} a child of {by} from its first call");
                }
            }
            assert!(early >= 3, "{trace}: the race shows {early} times");
            early_total += early;
        }
        assert!(early_total >= 10, "{early_total}");
    }

    /// Issue 15: strace attached to a threaded server (tests/fixtures/record-attach-threads.sh).
    /// The trace alone shows five processes without names; with what /proc said at the attach
    /// (`threaded_server.attach.proc`, fed as TaskKnown events first, as `trace -p` does) it is
    /// one named process of five threads sharing one fd table.
    #[test]
    fn an_attached_threaded_server_is_one_named_process() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/traces");
        let proc_facts = std::fs::read_to_string(dir.join("threaded_server.attach.proc")).expect("facts");
        let facts: Vec<(u32, u32, u32, String)> = proc_facts
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f[0].parse().unwrap(), f[1].parse().unwrap(), f[2].parse().unwrap(), f[3].to_string())
            })
            .collect();
        assert_eq!(facts.len(), 5);
        let tgid = Tgid(facts[0].1);
        let live = |m: &Model| {
            m.procs.iter().filter(|p| !p.absorbed && p.tasks.iter().any(|&t| m.tasks[t].events > 0)).count()
        };

        let alone = model_of("threaded_server.attach-f-tt-T-yy.strace", 100);
        assert_eq!(live(&alone), 5);
        assert!(alone.procs.iter().all(|p| p.comm.is_none()));

        let mut m = Model::with_limits(100);
        for (tid, tg, ppid, comm) in &facts {
            m.on_event(&Event {
                tid: Tid(*tid),
                ts_ns: None,
                kind: EventKind::TaskKnown { tgid: Tgid(*tg), parent: Some(Tgid(*ppid)), comm },
            });
        }
        let path = dir.join("threaded_server.attach-f-tt-T-yy.strace");
        let src = syslint_capture::input::expand_sources(&[path]).expect("fixture");
        let mut served_by = std::collections::HashSet::new();
        syslint_capture::read_strace(&src, Arc::new(AtomicU64::new(0)), |e| {
            let target = m.on_event(e);
            // every fd a worker uses is known (-yy names it; the table is the process's)
            if let (EventKind::Syscall(sc), Some(t)) = (&e.kind, target) {
                if sc.sys == Sys::Read && m.targets[t as usize].kind.is_tcp() {
                    served_by.insert(e.tid);
                }
            }
        })
        .expect("read");
        assert_eq!(live(&m), 1);
        let p = m.procs.iter().find(|p| !p.absorbed && p.pid == tgid).expect("the server");
        assert_eq!(p.comm.as_deref(), Some("threaded_server"));
        assert_eq!(p.parent, Some(Tgid(facts[0].2)));
        assert_eq!(p.tasks.iter().filter(|&&t| m.tasks[t].events > 0).count(), 5);
        for (tid, ..) in &facts {
            assert_eq!(m.tgid(Tid(*tid)), tgid);
            assert_eq!(m.comm(Tid(*tid)), Some("threaded_server"));
        }
        assert!(m
            .label(Tid(facts[1].0))
            .starts_with(&format!("thread {} of pid {tgid} (threaded_server)", facts[1].0)));
        // connections were served on the workers, not the accepting main thread
        assert!(!served_by.is_empty() && !served_by.contains(&tgid.main_thread()), "{served_by:?}");
        // nothing was "opened before trace" (-yy names every fd; here in the one table)
        assert!(m.targets.iter().all(|t| !t.display.contains("opened before trace")), "{:?}", m.targets);
    }

    /// The same server attached with eBPF (`threaded_server.attach-ebpf.slr`, 400 connections):
    /// the recording's thread facts make it one named process; fds reused across threads are
    /// followed although five workers' closes were reported after the main thread's accept had
    /// reused the number (and that connection was closed too): no fd "opened before trace", every
    /// call of the 400 connections on the accepted connections' target.
    #[test]
    fn ebpf_attach_recording_follows_fds_across_threads() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/traces/threaded_server.attach-ebpf.slr");
        let mut rec = syslint_capture::ebpf::slr::open(&path).expect("recording");
        let mut f = syslint_capture::ebpf::format::Formatter::new(rec.known.clone());
        let mut m = Model::new();
        let info = rec.replay(&mut |r| {
            f.on_record(&r, &mut |e| {
                m.on_event(e);
            });
        });
        assert!(info.problem.is_none(), "{:?}", info.problem);
        let live: Vec<&ProcInfo> =
            m.procs.iter().filter(|p| !p.absorbed && p.tasks.iter().any(|&t| m.tasks[t].events > 0)).collect();
        assert_eq!(live.len(), 1);
        assert_eq!(live[0].comm.as_deref(), Some("threaded_server"));
        assert_eq!(live[0].tasks.iter().filter(|&&t| m.tasks[t].events > 0).count(), 5);
        assert!(m.targets.iter().all(|t| !t.display.contains("opened before trace")), "{:?}", m.targets);
        let accepted: Vec<&TargetAgg> = m.targets.iter().filter(|t| t.display.ends_with("(accepted)")).collect();
        assert_eq!(accepted.len(), 1);
        // read, write and close of each of the 400 connections
        assert_eq!(accepted[0].calls, 1200);
        assert_eq!(
            m.endpoints.iter().filter(|e| e.direction == Direction::In).map(|e| e.connections).sum::<u64>(),
            400
        );
    }

    #[test]
    fn ended_processes_beyond_the_cap_are_folded_smallest_first() {
        // signals.c: a parent and three children (exit 3, SIGKILL, SIGUSR2 then exit 0)
        let all = model_of("signals.f-tt-T.strace", 100);
        let live = |m: &Model| m.procs.iter().filter(|p| !p.absorbed).count();
        assert_eq!(live(&all), 4);
        assert_eq!(all.folded.processes, 0);
        let calls = |m: &Model, p: &ProcInfo| p.tasks.iter().map(|&t| m.tasks[t].calls).sum::<u64>();
        let mut child_calls: Vec<u64> =
            all.procs.iter().filter(|p| !p.absorbed && p.parent.is_some()).map(|p| calls(&all, p)).collect();
        child_calls.sort();

        let few = model_of("signals.f-tt-T.strace", 1);
        // four processes ended, one kept: the busiest (the parent)
        assert_eq!(live(&few), 1);
        assert_eq!(few.folded.processes, 3);
        assert_eq!(few.folded.calls, child_calls.iter().sum::<u64>());
        let kept = few.procs.iter().find(|p| !p.absorbed).unwrap();
        assert_eq!(kept.parent, None);
        // slots were reused, not leaked
        assert!(few.procs.len() <= all.procs.len());
    }
}
