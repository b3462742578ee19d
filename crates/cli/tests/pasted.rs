//! The corpus of real pastes from public threads (tests/fixtures/pasted: README.md has each
//! file's source and what the people in the thread concluded; expected.tsv the verdict syslint
//! should give): syslint is run over every file and held to that verdict.
//!
//! Rows naming a detector this build does not have (the second wave: yield-spin, stat-storm,
//! timer-polling, retry-storm, spawn-per-task) are checked only for staying below `error`
//! until those detectors land. Where syslint disagrees today, DISAGREE says so and why; the
//! test then holds it to exactly that, so a fix (or a regression) shows.

use crate::common::*;
use syslint_report::{Confidence, Severity};

/// Files where syslint's verdict differs from expected.tsv today, and why.
const DISAGREE: &[(&str, &str)] = &[
    // counts rules
    ("bcc-4132-syscount-fsync-mysqld.txt", "a syscount of fsync only (--syscall fsync): the fsync rule reads fsync against writes it cannot see; it should skip tables filtered to one syscall"),
    ("mpdscribble-60-strace-c-epoll-spin.txt", "named, but low: plain strace -c is system time, so the rule cannot see that the waits returned at once; the thread reads it medium"),
    // excerpt rules: the spin seen differently than a zero timeout or EAGAIN read
    ("beanstalkd-53-epoll-ready-spin-pre.txt", "a wait that returns ready at once (timeout 998, = 3) without the ready fds being served: the rule knows only zero timeouts and EAGAIN reads"),
    ("rtorrent-580-epollout-spin-fence.txt", "an EPOLLOUT-ready spin: the rule knows only zero timeouts and EAGAIN reads"),
    ("swoole-2847-epoll-errhup-spin.txt", "an EPOLLERR|EPOLLHUP-ready spin: the rule knows only zero timeouts and EAGAIN reads"),
    ("systemd-5648-user-bus-recvmsg-eagain-spin.txt", "recvmsg EAGAIN alternating with epoll_wait(..., 0) = 1 (EPOLLOUT): the zero-timeout polls return 1, not 0, so neither half counts"),
    ("libtorrent-756-epoll-timeout0-annotated.txt", "5 calls, annotated by hand: under the rule's minimum of 8 spins"),
    ("wrk-179-eof-read-spin-leading-space.txt", "a read spin at EOF (= 0), not EAGAIN: the rule does not count reads at EOF"),
    // fd-close-sweep: pastes elided by hand
    ("dosemu2-2889-close-sweep-ttT.txt", "named at low: the excerpt rule cannot see how far a sweep goes; the thread's -T times would justify medium"),
    ("icinga2-8437-close-sweep.txt", "three closes, a '# ... nearly 2^20 more calls' comment, the last close: under the 8-close run the rule needs; it should read the jump to fd 1048573"),
    ("icinga2-3943-close-sweep-16k-indented.txt", "a few closes with an elision: under the 8-close run"),
    ("lsof-147-close-sweep-getrlimit.txt", "the sweep is a short run after getrlimit in the paste: under the 8-close run"),
    // others
    ("rsync-267-files-from-1byte-reads.txt", "1-byte reads alternating with a pselect6 each: [pid N] lines of one thread, reads <= 16 bytes, but the reads are under half of the excerpt's calls (the pselect6s)"),
    ("stress-ng-531-write-fsync-per-log-line.txt", "one write+fsync pair visible (program output interleaved): under the 4 pairs the rule needs"),
    ("swoole-2419-autoload-stat-enoent.txt", "the same file missing from many directories, but the file names differ only in a middle path component (the directory varies, not the base name): counted per base name, it is one name in 5+ dirs, yet fewer than 6 lookups in the paste"),
    // second-wave detectors now on main, without counts or excerpt rules yet
    ("php-nfs-webtutor-lstat-c.txt", "a strace -c table dominated by lstat: stat-storm has no counts rule yet"),
    ("eaccelerator-15-sched-yield.txt", "a sched_yield spin pasted as an excerpt: yield-spin has no excerpt rule yet"),
    ("nomad-8163-strace-c-sched-yield.txt", "a strace -c table dominated by sched_yield: yield-spin has no counts rule yet, and busy-poll's counts rule still reads sched_yield as polling"),
    ("teleproxy-129-epoll-2ms-nanosleep0.txt", "2 ms epoll timeouts expiring: timer-polling has no excerpt rule yet"),
    ("wrk-26-reconnect-loop-econnrefused.txt", "refused connects pasted as an excerpt: retry-storm has no excerpt rule yet"),
    ("pstore-11-gpg-spawn-grep-context.txt", "-r stamps with grep's `--` separators and context prefixes: not read as strace lines yet"),
    ("oils-44-execvpe-path-walk.txt", "an execvpe PATH walk (python missing from 3 PATH entries): ordinary; the excerpt rule counts execve as a lookup and should leave PATH searches of exec to their few entries"),
];

fn conf(s: &str) -> Option<Confidence> {
    match s {
        "low" => Some(Confidence::Low),
        "medium" => Some(Confidence::Medium),
        "high" => Some(Confidence::High),
        _ => None,
    }
}

#[test]
fn every_paste_gets_the_verdict_of_its_thread() {
    let dir = root().join("tests/fixtures/pasted");
    let tsv = std::fs::read_to_string(dir.join("expected.tsv")).expect("expected.tsv");
    let known: Vec<&str> = syslint_analyze::registry::metas().iter().map(|m| m.name).collect();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for line in tsv.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (file, expected, min) = (cols[0], cols[2], cols[3]);
        if expected != "quiet" && !known.contains(&expected) {
            // a detector of another branch: nothing to hold this build to yet
            continue;
        }
        let p = dir.join(file);
        let o = run(&["analyze", "--format", "json", &p.display().to_string()]);
        if o.status.code() == Some(2) {
            // not read at all: an error, no finding
            if expected != "quiet" && !DISAGREE.iter().any(|(f, _)| *f == file) {
                wrong.push(format!(
                    "{file}: expected {expected}, syslint could not read it: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                ));
            }
            checked += 1;
            continue;
        }
        let r = syslint_report::printers::json::parse(&String::from_utf8_lossy(&o.stdout)).expect("JSON report");
        let table_only = r.capture.syscalls == 0;
        for f in &r.findings {
            assert!(!(table_only && f.severity == Severity::Error), "{file}: a table-only finding is an error");
            assert!(f.confidence.is_some(), "{file}: {} without confidence", f.detector);
        }
        let got_ok = if expected == "quiet" {
            r.findings.iter().all(|f| f.severity < Severity::Warning)
        } else {
            let want = conf(min).unwrap_or(Confidence::Low);
            r.findings.iter().any(|f| f.detector == expected && f.confidence.is_some_and(|c| c >= want))
        };
        checked += 1;
        let said: Vec<String> = r
            .findings
            .iter()
            .map(|f| format!("{} {} {}", f.detector, f.severity.as_str(), f.confidence.map_or("-", Confidence::as_str)))
            .collect();
        let disagreed = DISAGREE.iter().any(|(f, _)| *f == file);
        if got_ok == disagreed {
            wrong.push(format!(
                "{file}: expected {expected} >= {min}, syslint said {said:?}{}",
                if disagreed { " (listed in DISAGREE: remove it)" } else { "" }
            ));
        }
    }
    assert!(checked >= 25, "only {checked} rows checked");
    assert!(wrong.is_empty(), "{} verdicts differ:\n{}", wrong.len(), wrong.join("\n"));
}
