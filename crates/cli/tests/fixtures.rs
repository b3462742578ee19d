//! The recorded fixtures (tests/fixtures: real programs under strace 6.1, facts checked by
//! check-facts.sh). Numbers asserted here come from the programs' own behaviour, and time
//! totals are checked against sums taken from the trace text itself.

use crate::common::*;
use syslint_report::Report;

const STAT_SETS: &[(&str, &str, bool)] = &[
    // (flag set, clock, durations)
    ("plain", "none", false),
    ("tt-T", "time-of-day", true),
    ("t", "time-of-day", false),
    ("ttt", "epoch", false),
    ("r", "relative", false),
    ("f-tt-T-yy", "time-of-day", true),
    ("T", "none", true),
    ("C", "none", false),
];

fn stat_report(set: &str) -> Report {
    analyze(&[&fixture(&format!("stat1000.{set}.strace"))])
}

#[test]
fn stat1000_counts_in_every_format() {
    for (set, clock, durations) in STAT_SETS {
        let r = stat_report(set);
        let ctx = format!("stat1000.{set}");
        assert_eq!(r.capture.unparsed_lines, 0, "{ctx}: {:?}", r.capture.unparsed_samples);
        assert_eq!(r.capture.syscalls, 1045, "{ctx}");
        assert_eq!(r.capture.clock, *clock, "{ctx}");
        assert_eq!(r.capture.durations, *durations, "{ctx}");
        assert_eq!(r.capture.processes, 1, "{ctx}");
        // 1000 failing stat() on missing paths + 10 stat("/") + 2 from the loader
        let st = syscall(&r, "newfstatat");
        assert_eq!((st.calls, st.errors), (1012, 1000), "{ctx}");
        assert_eq!(st.errnos.get("ENOENT"), Some(&1000), "{ctx}");
        assert_eq!(st.errnos.len(), 1, "{ctx}");
        let ac = syscall(&r, "access");
        assert_eq!((ac.calls, ac.errors), (6, 6), "{ctx}");
        let errors: u64 = r.summary.syscalls.iter().map(|s| s.errors).sum();
        assert_eq!(errors, 1006, "{ctx}");
        let p = &r.summary.processes[0];
        assert_eq!(p.comm.as_deref(), Some("stat1000"), "{ctx}");
        assert_eq!(p.end.as_deref(), Some("exited 0"), "{ctx}");
        assert_eq!((p.calls, p.errors), (1045, 1006), "{ctx}");
        if *durations {
            assert_eq!(st.timed_calls, 1012);
            assert!(st.p50_s <= st.p90_s && st.p90_s <= st.p99_s && st.p99_s <= st.max_s, "{ctx}: {st:?}");
            assert!(st.p50_s.is_some(), "{ctx}: {st:?}");
            // a share of the threads' time needs timestamps to know that time
            assert_eq!(st.thread_share.is_some(), *clock != "none", "{ctx}: {st:?}");
        } else {
            assert_eq!(st.timed_calls, 0, "{ctx}");
            // not measured: absent, not zero
            assert!(st.p50_s.is_none() && st.max_s.is_none() && st.thread_share.is_none(), "{ctx}: {st:?}");
        }
    }
}

/// Sum of `<0.000123>` durations on the lines naming `call(` in a trace.
fn durations_in_text(name: &str, call: &str) -> f64 {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    text.lines()
        .filter(|l| l.contains(&format!("{call}(")))
        .filter_map(|l| l.rsplit_once(" <").and_then(|(_, d)| d.strip_suffix('>')?.parse::<f64>().ok()))
        .sum()
}

#[test]
fn durations_sum_like_the_text_and_percentiles_are_close() {
    for set in ["tt-T", "T", "f-tt-T-yy"] {
        let name = format!("stat1000.{set}.strace");
        let r = analyze(&[&fixture(&name)]);
        let st = syscall(&r, "newfstatat");
        let want = durations_in_text(&name, "newfstatat");
        assert!((st.total_s - want).abs() < 1e-6, "{name}: {} vs {want}", st.total_s);
        assert!((st.avg_s - want / 1012.0).abs() < 1e-9);
        // p50 from the histogram is within 3% (plus a microsecond: strace prints us) of the exact median
        let text = std::fs::read_to_string(fixture(&name)).unwrap();
        let mut v: Vec<f64> = text
            .lines()
            .filter(|l| l.contains("newfstatat("))
            .filter_map(|l| l.rsplit_once(" <").and_then(|(_, d)| d.strip_suffix('>')?.parse().ok()))
            .collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let median = v[v.len().div_ceil(2) - 1];
        let p50 = st.p50_s.expect("timed");
        assert!((p50 - median).abs() <= median * 0.03 + 1e-6, "{name}: p50 {p50} vs {median}");
        assert_eq!(st.max_s, Some(v[v.len() - 1]));
    }
}

#[test]
fn relative_timestamps_accumulate() {
    let r = stat_report("r");
    let w = r.capture.window.expect("window");
    assert_eq!(w.start_s, 0.0);
    let text = std::fs::read_to_string(fixture("stat1000.r.strace")).unwrap();
    let sum: f64 = text.lines().filter_map(|l| l.split_whitespace().next()?.parse::<f64>().ok()).sum();
    assert!((w.end_s - sum).abs() < 1e-6, "{} vs {sum}", w.end_s);
}

#[test]
fn c_tables_are_kept() {
    for set in ["c-summary", "C"] {
        let r = analyze(&[&fixture(&format!("stat1000.{set}.strace"))]);
        let t = &r.summary.strace_c_table;
        let row = |n: &str| t.iter().find(|x| x.name == n).map(|x| (x.calls, x.errors));
        assert_eq!(row("newfstatat"), Some((1012, 1000)), "{set}");
        assert_eq!(row("access"), Some((6, 6)), "{set}");
        assert_eq!(t.len(), 16, "{set}: rows without the total");
        assert_eq!(r.capture.unparsed_lines, 0);
    }
    assert_eq!(analyze(&[&fixture("stat1000.c-summary.strace")]).capture.syscalls, 0);
}

#[test]
fn hex_dumps_of_written_buffers_are_understood() {
    // -e write=all: ` | 00000  65 6e 64 ...` lines, and ` * 3 bytes in buffer 0` per writev buffer
    let r = analyze(&[&fixture("interleave.e-write-all.strace")]);
    assert_eq!(r.capture.unparsed_lines, 0, "{:?}", r.capture.unparsed_samples);
    assert_eq!(syscall(&r, "write").calls, 300);
    assert_eq!(syscall(&r, "writev").calls, 1);
}

const NETIO: &[&str] = &[
    "netio.f-tt-T-yy.strace",
    "netio.f-tt-T-decode-fds-all.strace",
    "netio.f.strace",
    "netio.f-ttt-T-y.strace",
    "netio.f-x.strace",
    "netio.f-xx.strace",
    "netio.f-s16.strace",
    "netio.f-Xraw.strace",
    "netio.f-Xverbose.strace",
    "netio.f-v-tt.strace",
    "netio.f-n-i.strace",
    "netio.ff",
];

#[test]
fn netio_polls_accepts_and_connections_in_every_format() {
    for name in NETIO {
        let r = analyze(&[&fixture(name)]);
        let ctx = *name;
        assert_eq!(r.capture.unparsed_lines, 0, "{ctx}: {:?}", r.capture.unparsed_samples);
        assert_eq!(r.capture.never_resumed, 0, "{ctx}");
        // 11 x poll(.., 0) and 1 x poll(.., 50), all timing out
        let poll = syscall(&r, "poll");
        assert_eq!(poll.calls, 12, "{ctx}");
        assert_eq!(poll.returns.get("returned_0"), Some(&12), "{ctx}");
        assert_eq!(poll.returns.get("timeout_0"), Some(&11), "{ctx}");
        let ep = syscall(&r, "epoll_wait");
        assert_eq!(
            (ep.calls, ep.returns.get("timeout_0"), ep.returns.get("returned_0")),
            (7, Some(&7), Some(&7)),
            "{ctx}"
        );
        assert_eq!(syscall(&r, "select").returns.get("returned_0"), Some(&1), "{ctx}");
        assert_eq!(syscall(&r, "ppoll").returns.get("returned_0"), Some(&1), "{ctx}");
        let a4 = syscall(&r, "accept4");
        assert_eq!((a4.calls, a4.errnos.get("EAGAIN")), (4, Some(&3)), "{ctx}");
        assert_eq!(syscall(&r, "accept").calls, 3, "{ctx}");

        // two processes, the child's parent is the parent
        assert_eq!(r.summary.processes.len(), 2, "{ctx}");
        let parent = r.summary.processes.iter().find(|p| p.parent.is_none()).expect("root process");
        let child = r.summary.processes.iter().find(|p| p.parent.is_some()).expect("child process");
        assert_eq!(child.parent, Some(parent.pid), "{ctx}");
        assert_eq!(parent.comm.as_deref(), Some("netio"), "{ctx}");

        // connections: the fd model follows fds through fork, connect, accept, close
        let mut eps: Vec<(String, String, u64, u64, u64)> = r
            .summary
            .endpoints
            .iter()
            .map(|e| (e.direction.clone(), e.proto.clone(), e.connections, e.bytes_sent, e.bytes_received))
            .collect();
        eps.sort();
        let want: Vec<(&str, &str, u64, u64, u64)> = vec![
            ("in", "tcp", 1, 0, 0),        // the self-connect on the non-blocking listener
            ("in", "tcp", 1, 5000, 10000), // child: recvfrom 10000, writes 5000
            ("in", "tcp6", 1, 5, 5),
            ("in", "unix", 1, 0, 5),
            ("out", "tcp", 1, 0, 0),
            ("out", "tcp", 1, 10000, 5000), // parent: 10 x write(1000), read(5000)
            ("out", "tcp6", 1, 5, 5),
            ("out", "udp", 0, 4, 4), // unconnected datagrams: "ping"/"pong" each way
            ("out", "udp", 0, 4, 4),
            ("out", "unix", 1, 5, 0),
        ];
        let got: Vec<(&str, &str, u64, u64, u64)> =
            eps.iter().map(|(d, p, c, s, rcv)| (d.as_str(), p.as_str(), *c, *s, *rcv)).collect();
        assert_eq!(got, want, "{ctx}");
        assert!(
            r.summary.endpoints.iter().any(|e| e.endpoint == "unix:/tmp/syslint-netio.sock"),
            "{ctx}: {:?}",
            r.summary.endpoints
        );
        assert!(
            r.summary.endpoints.iter().all(|e| !e.endpoint.ends_with(":0")),
            "{ctx}: port 0 left: {:?}",
            r.summary.endpoints
        );
    }
}

#[test]
fn ff_directory_merges_by_time() {
    let r = analyze(&[&fixture("netio.ff")]);
    assert_eq!(r.capture.sources.len(), 2);
    assert_eq!(r.capture.clock, "time-of-day");
    assert!(r.capture.warnings.is_empty(), "{:?}", r.capture.warnings);
    let pids: Vec<u32> = r.summary.processes.iter().map(|p| p.pid).collect();
    let mut names: Vec<u32> = std::fs::read_dir(fixture("netio.ff"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_str().unwrap().rsplit('.').next().unwrap().parse().unwrap())
        .collect();
    names.sort();
    let mut p = pids.clone();
    p.sort();
    assert_eq!(p, names, "pids come from the file names");
}

/// One `strace -ff` file alone (or a directory holding one) has its pid in its name only:
/// its process is that pid, not "pid 0", read on one thread or on several in small chunks.
#[test]
fn one_ff_file_takes_its_pid_from_its_name() {
    let f = fixture("netio.ff/trace.12877");
    for (threads, chunk) in [("1", "1048576"), ("2", "256")] {
        let o = std::process::Command::new(bin())
            .args(["analyze", "--format", "json", f.to_str().unwrap()])
            .env("SYSLINT_THREADS", threads)
            .env("SYSLINT_CHUNK", chunk)
            .output()
            .unwrap();
        let r = parse_report(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)));
        let pids: Vec<u32> = r.summary.processes.iter().map(|p| p.pid).collect();
        assert_eq!(pids, [12877], "threads {threads}");
        assert_eq!(r.capture.syscalls, 26);
    }
    // a plain log whose lines carry no pid keeps "unknown" when its name has no pid
    let r = analyze(&[&fixture("stat1000.tt-T.strace")]);
    assert!(r.summary.processes.iter().all(|p| p.pid == 0), "{:?}", r.summary.processes);
}

/// A pre-forking server: the process that accepted a connection hands it to a worker and
/// closes its copy at once. The connection is the worker's from then on: its bytes count for
/// the endpoint, and it lives until the worker closes it (after the client's 200 ms), not
/// until the parent's close.
#[test]
fn a_forked_workers_copy_of_a_socket_is_the_same_connection() {
    let r = analyze(&[&fixture("forkserver.f-tt-T-yy.strace")]);
    let inbound = r.summary.endpoints.iter().find(|e| e.direction == "in").expect("the accepted connection");
    assert_eq!((inbound.connections, inbound.closed, inbound.open_at_end), (1, 1, 0), "{inbound:?}");
    assert_eq!((inbound.bytes_received, inbound.bytes_sent), (500, 20_000), "{inbound:?}");
    assert!(inbound.avg_lifetime_s > 0.2, "{inbound:?}");
    // the client's side agrees
    let out = r.summary.endpoints.iter().find(|e| e.direction == "out").expect("the client's connection");
    assert_eq!((out.bytes_sent, out.bytes_received), (500, 20_000), "{out:?}");
    assert!((inbound.avg_lifetime_s - out.avg_lifetime_s).abs() < 0.01, "{inbound:?} {out:?}");
}

#[test]
fn threads_unfinished_resumed_and_fd_targets() {
    for name in ["threads.f-tt-T-yy.strace", "threads.f-stderr-tt-T.strace"] {
        let r = analyze(&[&fixture(name)]);
        assert_eq!(r.capture.unparsed_lines, 0, "{name}: {:?}", r.capture.unparsed_samples);
        assert_eq!(r.capture.never_resumed, 0, "{name}");
        assert!(r.capture.resumed_pairs >= 8, "{name}: 4 reads and 4 clone3 at least");
        // one process, main thread + 4 threads
        assert_eq!(r.summary.processes.len(), 1, "{name}: {:?}", r.summary.processes);
        assert_eq!(r.summary.processes[0].threads, 5, "{name}");
        assert_eq!(r.capture.threads, 5, "{name}");
        // 4 x 50 writes of 100 bytes to /dev/null, plus 4 one-byte writes to the pipes
        let w = syscall(&r, "write");
        assert_eq!((w.calls, w.bytes), (204, Some(20_004)), "{name}");
        let dn = r.summary.fd_targets.iter().find(|t| t.target == "/dev/null").expect("/dev/null target");
        assert_eq!((dn.calls, dn.bytes_written), (200, 20_000), "{name}");
        // the blocked reads: each returns 1 byte and took ~100 ms or more in total
        let rd = r.summary.fd_targets.iter().filter(|t| t.kind == "pipe").map(|t| t.bytes_read).sum::<u64>();
        assert_eq!(rd, 4, "{name}");
        assert!(syscall(&r, "read").max_s > Some(0.05), "{name}: resumed reads carry their blocking time");
        // five threads blocked in read at once: the time inside read is several times the
        // wall time (wall_share > 1), but as a share of the threads' own time each syscall
        // stays under 100%, and all of them together too
        assert!(syscall(&r, "read").wall_share > 1.0, "{name}");
        let shares: Vec<f64> = r.summary.syscalls.iter().filter_map(|s| s.thread_share).collect();
        assert!(shares.iter().all(|&s| (0.0..=1.0).contains(&s)), "{name}: {shares:?}");
        assert!(shares.iter().sum::<f64>() <= 1.0 + 1e-9, "{name}: {shares:?}");
        assert!(syscall(&r, "read").thread_share > Some(0.5), "{name}");
    }
}

#[test]
fn signals_exits_and_kills() {
    for name in ["signals.f-tt-T.strace", "signals.f.strace"] {
        let r = analyze(&[&fixture(name)]);
        assert_eq!(r.capture.unparsed_lines, 0, "{name}");
        let mut ends: Vec<String> = r.summary.processes.iter().filter_map(|p| p.end.clone()).collect();
        ends.sort();
        assert_eq!(ends, vec!["exited 0", "exited 0", "exited 3", "killed by SIGKILL"], "{name}");
        let root = r.summary.processes.iter().find(|p| p.parent.is_none()).unwrap().pid;
        assert!(r.summary.processes.iter().filter(|p| p.pid != root).all(|p| p.parent == Some(root)));
        assert_eq!(syscall(&r, "rt_sigreturn").errnos.get("EINTR"), Some(&1), "{name}");
        assert_eq!(syscall(&r, "read").errnos.get("ERESTARTSYS"), Some(&1), "{name}");
        assert_eq!(syscall(&r, "tgkill").calls, 2, "{name}");
    }
}

#[test]
fn segfault_is_a_kill() {
    let r = analyze(&[&fixture("segv.tt.strace")]);
    assert_eq!(r.summary.processes[0].end.as_deref(), Some("killed by SIGSEGV"));
    assert_eq!(r.capture.unparsed_lines, 0);
}

#[test]
fn attach_to_a_running_process() {
    for name in ["sleeper.attach.strace", "sleeper.attach-stderr.strace"] {
        let r = analyze(&[&fixture(name)]);
        let text = std::fs::read_to_string(fixture(name)).unwrap();
        let getppid = text.matches("getppid()").count() as u64;
        assert_eq!(r.capture.unparsed_lines, 0, "{name}: {:?}", r.capture.unparsed_samples);
        assert_eq!(syscall(&r, "getppid").calls, getppid, "{name}");
        assert_eq!(r.summary.processes.len(), 1, "{name}: {:?}", r.summary.processes);
        // the call in progress at detach never finished in the trace
        assert_eq!(r.capture.never_resumed, 1, "{name}");
        assert_eq!(r.summary.processes[0].end, None, "{name}: still running after detach");
    }
    let r = analyze(&[&fixture("sleeper.attach-stderr.strace")]);
    let text = std::fs::read_to_string(fixture("sleeper.attach-stderr.strace")).unwrap();
    let pid: u32 = text.lines().next().unwrap().split_whitespace().nth(2).unwrap().parse().unwrap();
    assert_eq!(r.summary.processes[0].pid, pid, "the pid comes from strace's attach message");
}

#[test]
fn table_snapshot() {
    let t = run_in_root(&["analyze", "tests/fixtures/traces/netio.f-tt-T-yy.strace"]);
    snapshot("netio.table.txt", &t);
}

#[test]
fn json_snapshot() {
    let t = run_in_root(&["analyze", "--format", "json", "tests/fixtures/traces/stat1000.tt-T.strace"]);
    snapshot("stat1000.json", &t);
}

/// Every input gives the same report read on one thread in one piece as on two threads in
/// tiny chunks, whose borders fall inside unfinished/resumed pairs, -r deltas and so on.
#[test]
fn chunked_parallel_reading_matches_sequential() {
    let mut inputs: Vec<std::path::PathBuf> = std::fs::read_dir(root().join("tests/fixtures/traces"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    inputs.push(root().join("demo/fetch.strace.gz"));
    if let Some(c) = corpus() {
        inputs.extend(std::fs::read_dir(c).unwrap().map(|e| e.unwrap().path()).filter(|p| !p.ends_with("SOURCES.md")));
    }
    let run_with = |p: &std::path::Path, threads: &str, chunk: &str| {
        let o = std::process::Command::new(bin())
            .args(["analyze", "--format", "json", p.to_str().unwrap()])
            .env("SYSLINT_THREADS", threads)
            .env("SYSLINT_CHUNK", chunk)
            .output()
            .unwrap();
        String::from_utf8(o.stdout).unwrap()
    };
    for p in &inputs {
        let one = run_with(p, "1", "1000000000");
        for chunk in ["300", "4096"] {
            let many = run_with(p, "2", chunk);
            assert!(one == many, "{} differs when read in {chunk}-byte chunks", p.display());
        }
    }
    // (that small chunks really cut the inputs is checked in syslint-capture's unit tests)
}

#[test]
fn markdown_snapshot() {
    let t = run_in_root(&["analyze", "--format", "markdown", "tests/fixtures/traces/netio.f-tt-T-yy.strace"]);
    snapshot("netio.md", &t);
}

/// Issue 29 item 7: the two backends named files differently inside a chroot: strace's -yy
/// reads them from outside (`/var/cache/syslint/sid-strace/etc/debian_version`), eBPF and the
/// program from inside (`/etc/debian_version`), and a strace trace then counted the files the
/// chroot binary opened before its chroot and those the program opened after under two names
/// each. A chroot the trace shows moves the process's root: its decorations are read from
/// inside (tests/fixtures/record-chroot.sh made both recordings).
#[test]
fn a_chrooted_program_names_files_as_it_sees_them_under_both_backends() {
    let files = |name: &str| -> std::collections::BTreeSet<String> {
        let r = analyze(&[&fixture(name)]);
        r.summary.fd_targets.iter().filter(|t| t.kind == "file").map(|t| t.target.clone()).collect()
    };
    let st = files("chroot-cat.f-tt-T-yy.strace.gz");
    let bpf = files("chroot-cat.slr");
    // the recording shows the outside names
    let text = read_text(&fixture("chroot-cat.f-tt-T-yy.strace.gz"));
    assert!(text.contains("</var/cache/syslint/sid-strace/etc/debian_version>"), "the -yy names are from outside");
    for (what, set) in [("strace", &st), ("eBPF", &bpf)] {
        assert!(set.contains("/etc/debian_version"), "{what}: {set:?}");
        assert!(!set.iter().any(|f| f.starts_with("/var/cache/syslint/sid-strace")), "{what}: {set:?}");
    }
    // the same files inside, by both (names a symbolic link changes aside: -yy shows where
    // /usr/share/locale/locale.alias leads, eBPF the name opened, with or without a chroot)
    for f in [
        "/etc/debian_version",
        "/etc/ld.so.cache",
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
        "/usr/lib/locale/C.utf8/LC_CTYPE",
    ] {
        assert!(st.contains(f) && bpf.contains(f), "{f}: strace {st:?}, eBPF {bpf:?}");
    }
    let locale: Vec<&String> = st.iter().filter(|f| f.starts_with("/usr/lib/locale/")).collect();
    assert_eq!(locale, bpf.iter().filter(|f| f.starts_with("/usr/lib/locale/")).collect::<Vec<_>>());
}

/// The eBPF capture's signal records (tp_btf/signal_deliver) read as strace's lines for the
/// same programs: traces/signals.ebpf.slr and segv.ebpf.slr are tests/fixtures/programs'
/// signals.c and segv.c recorded with `syslint trace --backend ebpf -o` (README.md). Each
/// process's deliveries, in order, with their si_code, as strace 6.1 printed them; strace's
/// SIGCHLD lines excepted (SIGCHLD's default action is to ignore it: the kernel delivers it to
/// a tracer, never to an untraced program), and only strace prints the sender's pid and uid.
#[test]
fn ebpf_recordings_show_the_signals_strace_shows() {
    // (signal, si_code, si_addr when printed), per delivery in order of the text
    fn signals(text: &str) -> Vec<(String, String, Option<String>)> {
        text.lines()
            .filter_map(|l| l.split_once("--- SIG").map(|(_, r)| r))
            .filter_map(|r| {
                let (name, info) = r.split_once(" {")?;
                let field = |k: &str| {
                    info.split(", ")
                        .chain(info.split('{'))
                        .find_map(|f| f.trim_end_matches(['}', ' ', '-']).strip_prefix(k).map(str::to_string))
                };
                Some((format!("SIG{name}"), field("si_code=")?, field("si_addr=")))
            })
            .filter(|s| s.0 != "SIGCHLD")
            .collect()
    }
    for (strace, slr, want) in
        [("signals.f-tt-T.strace", "signals.ebpf.slr", 3), ("segv.tt.strace", "segv.ebpf.slr", 1)]
    {
        let st = signals(&read_text(&fixture(strace)));
        let out = std::env::temp_dir().join(format!("syslint-signals-{}-{slr}.txt", std::process::id()));
        let e = run(&["export", fixture(slr).to_str().expect("path"), "-o", out.to_str().expect("path")]);
        assert!(e.status.success(), "export {slr}: {}", stderr(&e));
        let bpf = signals(&read_text(&out));
        std::fs::remove_file(&out).ok();
        assert_eq!(st.len(), want, "{strace}: {st:?}");
        assert_eq!(bpf, st, "{slr} against {strace}");
    }
    // a fault loop recorded with eBPF (lab/fault-signal-loop's fault.c, pipe-loop 300): named
    // from the recording as from strace's lines
    let r = analyze(&[&fixture("fault-pipe-loop.ebpf.slr")]);
    let f: Vec<_> = r.findings.iter().filter(|f| f.detector == "fault-signal-loop").collect();
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert_eq!(f[0].severity, syslint_report::Severity::Warning);
    assert_eq!(f[0].metrics.get("faults").and_then(serde_json::Value::as_f64), Some(300.0));
    assert!(f[0]
        .evidence
        .iter()
        .any(|l| l.contains("--- SIGSEGV {si_signo=SIGSEGV, si_code=SEGV_MAPERR, si_addr=0x38} ---")));
}
