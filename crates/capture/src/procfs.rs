//! Who the threads of a running process are, read from /proc when attaching (both backends):
//! a trace that begins mid-life never shows the clone that made a thread or the execve that
//! named the program, so without this every thread looks like a process of its own and every
//! program is unnamed. The facts become [`syslint_event::EventKind::TaskKnown`] events.

use rustc_hash::FxHashMap as HashMap;

/// Largest pid Linux can give (PID_MAX_LIMIT on 64-bit); larger numbers are timestamps.
pub(crate) const PID_MAX: u64 = 4_194_304;

/// What /proc says about one thread.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskFacts {
    /// Its process (thread group id; the thread's own id for a main thread).
    pub tgid: u32,
    /// The process's parent (`PPid`), when there is one (0 is none).
    pub parent: Option<u32>,
    /// The process's program name, as an execve of it would set it (see [`program_name`]);
    /// empty when /proc would not say.
    pub comm: String,
}

/// Threads by thread id.
pub type Tasks = HashMap<u32, TaskFacts>;

/// The `Name:`-style field `key` of a /proc status file.
fn status_field<'a>(status: &'a str, key: &str) -> Option<&'a str> {
    status.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix(':').map(str::trim))
}

/// The program name of process `pid`: its `comm` (what execve set: the file name's last part,
/// or what `prctl(PR_SET_NAME)` set), which the kernel cuts at 15 bytes; a cut name is completed
/// from the executable's or argv[0]'s file name when one of them starts with it.
pub fn program_name(pid: u32) -> Option<String> {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    let comm = comm.trim_end_matches('\n').to_string();
    if comm.len() < 15 {
        return Some(comm);
    }
    let base = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok().map(|p| base(&p.to_string_lossy()));
    let argv0 = std::fs::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .and_then(|c| c.split(|&b| b == 0).next().map(|a| base(&String::from_utf8_lossy(a))));
    Some([exe, argv0].into_iter().flatten().find(|n| n.len() > comm.len() && n.starts_with(&comm)).unwrap_or(comm))
}

/// Add the threads of process `pid` (from /proc/PID/task) to `tasks`. A process that ended
/// meanwhile, or that /proc will not describe, adds nothing or less: the analysis then learns
/// who is who from the trace alone, as before.
pub fn threads_of(pid: u32, tasks: &mut Tasks) {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return };
    // the pid given may be a thread's: its process is what Tgid says
    let tgid = status_field(&status, "Tgid").and_then(|v| v.parse().ok()).unwrap_or(pid);
    let status =
        if tgid == pid { status } else { std::fs::read_to_string(format!("/proc/{tgid}/status")).unwrap_or(status) };
    let parent = status_field(&status, "PPid").and_then(|v| v.parse().ok()).filter(|&p: &u32| p != 0);
    let comm = program_name(tgid).unwrap_or_default();
    let facts = TaskFacts { tgid, parent, comm };
    tasks.insert(tgid, facts.clone());
    let Ok(dir) = std::fs::read_dir(format!("/proc/{tgid}/task")) else { return };
    for e in dir.flatten() {
        if let Some(tid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) {
            tasks.insert(tid, facts.clone());
        }
    }
}

/// How a text recording of an attached strace keeps what /proc said (`trace -p PID --backend
/// strace -o FILE`): strace cannot print it, so syslint writes one line per thread before
/// strace's first line, `#syslint task TID TGID PPID COMM` (`PPID` `-` when there is none;
/// `COMM` the rest of the line, maybe empty, control characters replaced by `?`). No line
/// strace writes starts with `#`; the strace reader turns these back into the same
/// [`syslint_event::EventKind::TaskKnown`] events the live analysis had.
pub const RECORDING_TAG: &str = "#syslint task ";

/// Whether a process (or thread) with this id exists now.
pub fn running(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// The child processes of process `pid` now (every thread's children, from
/// /proc/PID/task/TID/children), in pid order; empty when /proc will not say.
pub fn children_of(pid: u32) -> Vec<u32> {
    let mut kids = Vec::new();
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return kids };
    for e in dir.flatten() {
        if let Ok(text) = std::fs::read_to_string(e.path().join("children")) {
            kids.extend(text.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
        }
    }
    kids.sort_unstable();
    kids.dedup();
    kids
}

/// The recording line for thread `tid` (with its newline).
pub fn recording_line(tid: u32, t: &TaskFacts) -> String {
    let parent = t.parent.map_or_else(|| "-".to_string(), |p| p.to_string());
    let comm: String = t.comm.chars().map(|c| if c.is_control() { '?' } else { c }).collect();
    format!("{RECORDING_TAG}{tid} {} {parent} {comm}\n", t.tgid)
}

/// A recording line back: (tid, facts); `None` when the line is not one (or is malformed).
pub fn parse_recording_line(line: &str) -> Option<(u32, TaskFacts)> {
    // pids as Linux gives them, as the strace reader takes them: 1 to PID_MAX_LIMIT
    let pid = |s: &str| s.parse::<u32>().ok().filter(|&p| p >= 1 && u64::from(p) <= PID_MAX);
    let r = line.strip_prefix(RECORDING_TAG)?;
    let mut it = r.splitn(4, ' ');
    let tid = pid(it.next()?)?;
    let tgid = pid(it.next()?)?;
    let parent = match it.next()? {
        "-" => None,
        p => Some(pid(p)?),
    };
    let comm = it.next().unwrap_or("").to_string();
    Some((tid, TaskFacts { tgid, parent, comm }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_and_its_threads() {
        // a thread of this test process, alive while /proc is read
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<u32>();
        let h = std::thread::spawn(move || {
            // SAFETY: gettid has no preconditions
            let tid = unsafe { nix::libc::gettid() } as u32;
            ready_tx.send(tid).expect("send");
            let _ = rx.recv();
        });
        let tid = ready_rx.recv().expect("thread id");
        let me = std::process::id();
        let mut tasks = Tasks::default();
        // asked by a thread's id, the whole process is described
        threads_of(tid, &mut tasks);
        tx.send(()).expect("send");
        h.join().expect("join");
        let main = tasks.get(&me).expect("the main thread");
        assert_eq!(main.tgid, me);
        assert_eq!(tasks.get(&tid), Some(main));
        assert!(tasks.len() >= 2, "{tasks:?}");
        let ppid = std::os::unix::process::parent_id();
        assert_eq!(main.parent, Some(ppid));
        let exe = std::env::current_exe().expect("exe");
        let exe = exe.file_name().and_then(|n| n.to_str()).expect("name");
        // the test binary's name is longer than 15 bytes: completed from the executable
        assert_eq!(main.comm, exe);
    }

    #[test]
    fn status_fields() {
        let s = "Name:\tpostgres\nTgid:\t812\nPid:\t815\nPPid:\t1\n";
        assert_eq!(status_field(s, "Tgid"), Some("812"));
        assert_eq!(status_field(s, "PPid"), Some("1"));
        assert_eq!(status_field(s, "Uid"), None);
    }

    #[test]
    fn recording_lines_round_trip() {
        let t = TaskFacts { tgid: 812, parent: Some(1), comm: "nginx: worker".into() };
        let l = recording_line(815, &t);
        assert_eq!(l, "#syslint task 815 812 1 nginx: worker\n");
        assert_eq!(parse_recording_line(l.trim_end()), Some((815, t)));
        // no parent, no name, a control character in the name
        let t = TaskFacts { tgid: 7, parent: None, comm: String::new() };
        assert_eq!(parse_recording_line(recording_line(7, &t).trim_end()), Some((7, t)));
        let odd = TaskFacts { tgid: 9, parent: Some(2), comm: "a\nb".into() };
        assert_eq!(parse_recording_line(recording_line(9, &odd).trim_end()).map(|(_, t)| t.comm), Some("a?b".into()));
        // anything else is not one
        assert_eq!(parse_recording_line("#syslint task x 1 2 a"), None);
        assert_eq!(parse_recording_line("#syslint task 1 2"), None);
        assert_eq!(parse_recording_line("#syslint task 0 0 - zero"), None);
        assert_eq!(parse_recording_line("#syslint task 5 4294967295 - big"), None);
        assert_eq!(parse_recording_line("123 read(3, \"\", 1) = 0"), None);
    }
}
