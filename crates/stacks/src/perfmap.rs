//! JIT-compiled code named from the perf map a runtime writes (`/tmp/perf-PID.map`: one
//! `START SIZE NAME` line per compiled function, hexadecimal, the format of Linux perf's
//! jit interface): Node with `--perf-basic-prof`, the JVM with `-XX:+DumpPerfMapAtExit`,
//! Python 3.12+ with `-X perf`. The file outlives the process, so it is read when the capture
//! ends; frames in anonymous memory that a line covers get its name.
//!
//! It also outlives the process for good: a map left in /tmp by an earlier process with the
//! same pid (pids wrap at 32,768 on small machines) would name this one's code with another
//! program's functions. A map last written before the process started is not read; and since
//! Python appends to a map it finds, a later line wins over an earlier one for an address.

use std::io::{BufRead, BufReader, Read};

/// Bytes of a perf map read at most (a long-running JIT writes one line per compilation).
const MAX_BYTES: u64 = 64 << 20;

/// One process's perf map, sorted by start address: (start, end, line number, name).
#[derive(Debug, Default)]
pub struct PerfMap {
    entries: Vec<(u64, u64, usize, String)>,
}

impl PerfMap {
    /// `/tmp/perf-PID.map`, when the process (or its runtime) wrote one; not when the file
    /// was last written before `started` (the process's start, when known): an earlier
    /// process's with the same pid. A process in a container writes it in its own /tmp, named
    /// by its pid there (`ns_pid`): read through `/proc/PID/root` while the process runs, the
    /// host's /tmp after.
    pub fn of_process(pid: u32, ns_pid: Option<u32>, started: Option<std::time::SystemTime>) -> Option<PerfMap> {
        let own = format!("/proc/{pid}/root/tmp/perf-{}.map", ns_pid.unwrap_or(pid));
        let f = std::fs::File::open(own).or_else(|_| std::fs::File::open(format!("/tmp/perf-{pid}.map"))).ok()?;
        let written = f.metadata().and_then(|m| m.modified()).ok();
        if let (Some(w), Some(s)) = (written, started) {
            // a second of slack: the start time is read in clock ticks
            if w + std::time::Duration::from_secs(1) < s {
                return None;
            }
        }
        Some(PerfMap::parse(BufReader::new(f.take(MAX_BYTES))))
    }

    /// The lines of a perf map; lines that are not `START SIZE NAME` are skipped.
    pub fn parse(r: impl BufRead) -> PerfMap {
        let mut entries: Vec<(u64, u64, usize, String)> = r
            .lines()
            .map_while(Result::ok)
            .enumerate()
            .filter_map(|(n, l)| {
                let mut it = l.splitn(3, ' ');
                let start = u64::from_str_radix(it.next()?.trim_start_matches("0x"), 16).ok()?;
                let size = u64::from_str_radix(it.next()?.trim_start_matches("0x"), 16).ok()?;
                let name = it.next()?.trim();
                (size > 0 && !name.is_empty()).then(|| (start, start.saturating_add(size), n, name.to_string()))
            })
            .collect();
        entries.sort_by_key(|e| e.0);
        PerfMap { entries }
    }

    /// The name of the code at `addr`: of the lines whose range holds it, the one written last
    /// (newer code where the runtime reused the memory, or this process's lines after an
    /// earlier one's in a map it appended to).
    pub fn name_of(&self, addr: u64) -> Option<&str> {
        let i = self.entries.partition_point(|e| e.0 <= addr);
        let holding = self.entries[..i].iter().rev().take(64).filter(|e| addr < e.1);
        holding.max_by_key(|e| e.2).map(|e| e.3.as_str())
    }
}

/// A perf-map name as a frame's function and, where the runtime put it in the name (Node:
/// `JS:*probeMissing /srv/app/spin.js:2:22`), its source file and line.
pub fn split_name(name: &str) -> (String, Option<String>, Option<u32>) {
    let body = name.strip_prefix("JS:").or_else(|| name.strip_prefix("LazyCompile:")).unwrap_or(name);
    // V8's markers before the function: ~ interpreted, ^ baseline, + / * optimised
    let body = body.trim_start_matches(['~', '^', '+', '*']);
    if let Some((func, place)) = body.rsplit_once(' ') {
        let mut parts = place.rsplitn(3, ':');
        let (_col, line, file) = (parts.next(), parts.next(), parts.next());
        if let (Some(file), Some(line)) = (file, line.and_then(|l| l.parse::<u32>().ok())) {
            if !file.is_empty() {
                let func = if func.is_empty() { "(anonymous)" } else { func };
                return (func.to_string(), Some(file.to_string()), Some(line));
            }
        }
    }
    // Python 3.12 -X perf: `py::function:/path/file.py`
    if let Some((func, file)) = body.strip_prefix("py::").and_then(|b| b.split_once(':')) {
        return (func.to_string(), (!file.is_empty()).then(|| file.to_string()), None);
    }
    // HotSpot: `RETURN pkg.Class.method(ARGS)`, without the return type
    if let Some(open) = body.find('(').filter(|_| body.ends_with(')')) {
        if let Some(sp) = body[..open].rfind(' ').filter(|&sp| sp + 1 < open) {
            return (body[sp + 1..].to_string(), None, None);
        }
    }
    (body.to_string(), None, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of the perf map Node 20.20 wrote with --perf-basic-prof for the test program of
    /// crates/cli/tests/call_sites.rs (one function interpreted, baseline and optimised), and a
    /// line that is none.
    #[test]
    fn reads_lines_and_names_addresses() {
        let text = "3ee0f9c4bb0e 4f JS:~probeMissing /tmp/nodet/spin.js:2:22\n\
                    7f80c8006280 23c JS:^probeMissing /tmp/nodet/spin.js:2:22\n\
                    garbage\n\
                    7f80c8006e80 414 JS:*probeMissing /tmp/nodet/spin.js:2:22\n";
        let m = PerfMap::parse(text.as_bytes());
        assert_eq!(m.name_of(0x7f80c80070c3), Some("JS:*probeMissing /tmp/nodet/spin.js:2:22"));
        assert_eq!(m.name_of(0x7f80c8006397), Some("JS:^probeMissing /tmp/nodet/spin.js:2:22"));
        assert_eq!(m.name_of(0x7f80c8007294), None, "one past the end");
        assert_eq!(m.name_of(0x10), None);
        assert_eq!(
            split_name("JS:*probeMissing /tmp/nodet/spin.js:2:22"),
            ("probeMissing".into(), Some("/tmp/nodet/spin.js".into()), Some(2))
        );
        assert_eq!(
            split_name("JS:~ node:internal/main:1:1"),
            ("(anonymous)".into(), Some("node:internal/main".into()), Some(1))
        );
        assert_eq!(split_name("java.lang.String::hashCode"), ("java.lang.String::hashCode".into(), None, None));
        assert_eq!(split_name("py::spin:/srv/app.py"), ("spin".into(), Some("/srv/app.py".into()), None));
        // as HotSpot's DumpPerfMapAtExit writes them
        assert_eq!(
            split_name("int sun.nio.ch.IOUtil.read(java.io.FileDescriptor, java.nio.ByteBuffer, long)"),
            ("sun.nio.ch.IOUtil.read(java.io.FileDescriptor, java.nio.ByteBuffer, long)".into(), None, None)
        );
        assert_eq!(
            split_name("void Wait.main(java.lang.String[])"),
            ("Wait.main(java.lang.String[])".into(), None, None)
        );
        assert_eq!(split_name("StubRoutines (1)"), ("StubRoutines (1)".into(), None, None));
    }

    /// An earlier process's lines, then this one's appended (as Python appends to a map it
    /// finds): where both hold an address, this one's name it.
    #[test]
    fn the_line_written_last_names_an_address() {
        let text = "7f0000001000 1000 void Old.stale()\n\
                    7f0000001800 40 py::probe_missing:/srv/probe.py\n";
        let m = PerfMap::parse(text.as_bytes());
        assert_eq!(m.name_of(0x7f0000001810), Some("py::probe_missing:/srv/probe.py"));
        assert_eq!(m.name_of(0x7f0000001010), Some("void Old.stale()"), "only the old line holds it");
    }

    /// A map last written before the process started is an earlier process's: not read.
    #[test]
    fn a_map_older_than_its_process_is_not_read() {
        use std::time::{Duration, SystemTime};
        let pid = 4_000_000 + std::process::id() % 100_000; // above any pid_max: no process's
        let path = format!("/tmp/perf-{pid}.map");
        std::fs::write(&path, "7f0000001000 100 py::f:/x.py\n").expect("write");
        let now = SystemTime::now();
        assert!(
            PerfMap::of_process(pid, None, Some(now - Duration::from_secs(60))).is_some(),
            "written since it started"
        );
        assert!(PerfMap::of_process(pid, None, None).is_some(), "start unknown: read");
        assert!(
            PerfMap::of_process(pid, None, Some(now + Duration::from_secs(60))).is_none(),
            "written before it started"
        );
        let _ = std::fs::remove_file(&path);
    }

    /// A running process's map is read in its own root's /tmp, by its pid in its namespace:
    /// for this test (not in a container) the same file as the host's.
    #[test]
    fn a_running_process_map_is_read_in_its_own_root() {
        let me = std::process::id();
        let path = format!("/tmp/perf-{me}.map");
        std::fs::write(&path, "7f0000001000 100 py::g:/y.py\n").expect("write");
        let m = PerfMap::of_process(me, Some(me), None).expect("read through /proc/self/root");
        assert_eq!(m.name_of(0x7f0000001010), Some("py::g:/y.py"));
        // a pid in the namespace with no map there: the host's /tmp by the host pid
        let m = PerfMap::of_process(me, Some(u32::MAX), None).expect("the host's /tmp");
        assert_eq!(m.name_of(0x7f0000001010), Some("py::g:/y.py"));
        let _ = std::fs::remove_file(&path);
    }
}
