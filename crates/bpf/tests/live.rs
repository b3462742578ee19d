//! Real programs traced by the real kernel program. Needs root and a kernel with BTF, and a C
//! compiler: the build script sets cfg `syslint_bpf` when it sees root and BTF (and
//! `SYSLINT_TEST_NO_BPF` is unset); without it every test here is reported as ignored.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use syslint_bpf::{syscall_name, DataKind, Lost, Options, Probe, Record, StackOptions};

const POLL: u32 = 7;
const READ: u32 = 0;
const WRITE: u32 = 1;
const GETPPID: u32 = 110;
const OPENAT: u32 = 257;
const CONNECT: u32 = 42;
const SENDTO: u32 = 44;

/// Written to the real stderr, past the test harness's output capture, so that a skip shows in
/// a plain `cargo test` run.
fn skip(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "\n!!!!!!!! SKIPPED {test}: {why} !!!!!!!!\n");
}

/// A loaded probe (the test runs only where the build script saw root and BTF).
fn probe(test: &str, opts: &Options) -> Option<Probe> {
    match Probe::load(opts) {
        Ok(p) => Some(p),
        Err(e) => panic!("{test}: loading the probe failed although BPF looked usable here: {e}"),
    }
}

/// Compiles tests/programs/NAME.c once per test run; None after a loud skip without `cc`.
fn program(test: &str, name: &str) -> Option<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs").join(format!("{name}.c"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("syslint-bpf-{name}"));
    // tests run in parallel threads and may build the same program at once
    static BUILDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let build = BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = out.with_extension(format!("tmp{}-{build}", std::process::id()));
    let status = Command::new("cc").args(["-O2", "-pthread", "-o"]).arg(&tmp).arg(&src).status();
    match status {
        Ok(s) if s.success() => {
            std::fs::rename(&tmp, &out).expect("moving the compiled test program into place");
            Some(out)
        }
        Ok(s) => panic!("{test}: cc failed on {}: {s}", src.display()),
        Err(e) => panic!("{test}: no C compiler (cc; scripts/test.sh installs it): {e}"),
    }
}

/// An owned copy of a record, for assertions after the run.
#[derive(Clone, Debug)]
enum Rec {
    Sys {
        tgid: u32,
        tid: u32,
        nr: u32,
        args: [u64; 6],
        ret: i64,
        d1: (DataKind, Vec<u8>, bool),
        d2: (DataKind, Vec<u8>, bool),
        unfinished: bool,
        began_before: bool,
        ts_exit: u64,
    },
    Repeat {
        tgid: u32,
        tid: u32,
        period: u8,
        count: u32,
        dur_sum_ns: [u64; 2],
    },
    Fork {
        parent_tgid: u32,
        child_tgid: u32,
        child_tid: u32,
        is_thread: bool,
    },
    Exec {
        tgid: u32,
        filename: Vec<u8>,
    },
    Exit {
        tgid: u32,
        tid: u32,
        process_ended: bool,
    },
    Signal {
        tid: u32,
        sig: i32,
        code: i32,
        addr: u64,
    },
}

impl Rec {
    fn from(r: Record<'_>) -> Rec {
        match r {
            Record::Syscall { tgid, tid, nr, args, ret, data1, data2, unfinished, began_before, ts_exit, .. } => {
                Rec::Sys {
                    tgid,
                    ts_exit,
                    tid,
                    nr,
                    args,
                    ret,
                    d1: (data1.kind, data1.bytes.to_vec(), data1.truncated),
                    d2: (data2.kind, data2.bytes.to_vec(), data2.truncated),
                    unfinished,
                    began_before,
                }
            }
            Record::Repeat { tgid, tid, period, count, first_ts, last_ts, dur_sum_ns } => {
                assert!(first_ts <= last_ts, "repeat times out of order");
                Rec::Repeat { tgid, tid, period, count, dur_sum_ns }
            }
            Record::Fork { parent_tgid, child_tgid, child_tid, is_thread, .. } => {
                Rec::Fork { parent_tgid, child_tgid, child_tid, is_thread }
            }
            Record::Exec { tgid, filename, .. } => Rec::Exec { tgid, filename: filename.to_vec() },
            Record::Exit { tgid, tid, process_ended, .. } => Rec::Exit { tgid, tid, process_ended },
            Record::Signal { tid, sig, code, addr, .. } => Rec::Signal { tid, sig, code, addr },
        }
    }

    fn pids(&self) -> Vec<u32> {
        match *self {
            Rec::Sys { tgid, tid, .. } | Rec::Repeat { tgid, tid, .. } | Rec::Exit { tgid, tid, .. } => vec![tgid, tid],
            Rec::Fork { parent_tgid, child_tgid, child_tid, .. } => vec![parent_tgid, child_tgid, child_tid],
            Rec::Exec { tgid, .. } => vec![tgid],
            Rec::Signal { tid, .. } => vec![tid],
        }
    }
}

/// Polls until `done` says the traced work is over (bounded), then drains and flushes.
fn collect(probe: &mut Probe, mut done: impl FnMut() -> bool) -> Vec<Rec> {
    let mut recs = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "traced program did not finish in 60 s");
        probe.poll(Duration::from_millis(100), &mut |r| recs.push(Rec::from(r))).expect("poll");
    }
    probe.poll(Duration::ZERO, &mut |r| recs.push(Rec::from(r))).expect("final poll");
    probe.flush_pending(&mut |r| recs.push(Rec::from(r))).expect("flush");
    recs
}

/// Spawns argv under the probe and collects everything until it exits successfully.
fn run(probe: &mut Probe, argv: &[&str]) -> (u32, Vec<Rec>) {
    let argv: Vec<OsString> = argv.iter().map(OsString::from).collect();
    let mut child = probe.spawn(&argv).expect("spawn");
    let pid = child.pid();
    let mut status = None;
    let recs = collect(probe, || {
        status = child.try_wait().expect("try_wait");
        status.is_some()
    });
    let status = status.expect("exited");
    assert!(status.success(), "{argv:?} failed: {status}");
    (pid, recs)
}

/// Expands Repeat records: syscalls per (tid, nr) as if every call had been sent.
fn per_thread_calls(recs: &[Rec]) -> HashMap<(u32, u32), u64> {
    let mut out = HashMap::new();
    let mut last: HashMap<u32, Vec<u32>> = HashMap::new(); // tid -> nrs of its Syscall records
    for r in recs {
        match r {
            Rec::Sys { tid, nr, .. } => {
                *out.entry((*tid, *nr)).or_insert(0) += 1;
                last.entry(*tid).or_default().push(*nr);
            }
            Rec::Repeat { tid, period, count, .. } => {
                let hist = last.get(tid).map(Vec::as_slice).unwrap_or(&[]);
                assert!(hist.len() >= usize::from(*period), "repeat of tid {tid} without {period} records before it");
                for nr in &hist[hist.len() - usize::from(*period)..] {
                    *out.entry((*tid, *nr)).or_insert(0) += u64::from(*count);
                }
            }
            _ => {}
        }
    }
    out
}

fn calls_of(recs: &[Rec], tid: u32, nr: u32) -> u64 {
    per_thread_calls(recs).get(&(tid, nr)).copied().unwrap_or(0)
}

fn sys_records<'a>(recs: &'a [Rec], nr: u32) -> impl Iterator<Item = &'a Rec> + 'a {
    recs.iter().filter(move |r| matches!(r, Rec::Sys { nr: n, .. } if *n == nr))
}

fn repeats(recs: &[Rec], tid: u32) -> Vec<(u8, u32)> {
    recs.iter()
        .filter_map(|r| match *r {
            Rec::Repeat { tid: t, period, count, .. } if t == tid => Some((period, count)),
            _ => None,
        })
        .collect()
}

fn polls_exact(test: &str, opts: &Options) {
    let Some(mut probe) = probe(test, opts) else { return };
    let Some(prog) = program(test, "polls") else { return };
    const N: u64 = 5000;
    let (pid, recs) = run(&mut probe, &[prog.to_str().expect("utf-8 path"), &N.to_string()]);
    let polls = calls_of(&recs, pid, POLL);
    let reps = repeats(&recs, pid);
    eprintln!("{test}: {} records, repeats {reps:?}, lost {:?}", recs.len(), probe.lost());
    assert_eq!(probe.lost(), Lost::default());
    assert_eq!(polls, N, "poll calls seen (records + repeats)");
    assert!(sys_records(&recs, POLL).count() < 50, "polls were not coalesced");
    assert!(reps.iter().all(|&(p, _)| p == 1));
    // the run ended with the process: its exit_group arrives unfinished, then Exit
    assert!(recs.iter().any(|r| matches!(r, Rec::Sys { nr: 231, unfinished: true, .. })));
    assert!(recs.iter().any(|r| matches!(*r, Rec::Exit { tgid, process_ended: true, .. } if tgid == pid)));
    assert!(recs.iter().any(|r| matches!(r, Rec::Exec { filename, .. } if filename.ends_with(b"syslint-bpf-polls"))));
    // execve's path is copied at entry: after the exec that memory is gone
    assert!(sys_records(&recs, 59).any(|r| matches!(r,
        Rec::Sys { ret: 0, d1: (DataKind::Str, p, false), .. } if p.ends_with(b"syslint-bpf-polls"))));
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn long_runs_are_reported_in_pieces_of_at_most_65536() {
    let test = "long_runs_are_reported_in_pieces_of_at_most_65536";
    let Some(mut probe) = probe(test, &Options::default()) else { return };
    let Some(prog) = program(test, "polls") else { return };
    const N: u64 = 300_000;
    let (pid, recs) = run(&mut probe, &[prog.to_str().expect("utf-8 path"), &N.to_string()]);
    let reps = repeats(&recs, pid);
    assert_eq!(calls_of(&recs, pid, POLL), N);
    assert!(reps.len() >= 5, "300000 polls need at least 5 repeats: {reps:?}");
    assert!(reps.iter().all(|&(p, c)| p == 1 && c <= 65536), "{reps:?}");
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn runs_report_every_100ms_and_flush_pending_drains_them() {
    let test = "runs_report_every_100ms_and_flush_pending_drains_them";
    let Some(mut stream) = probe(test, &Options::default()) else { return };
    let Some(mut counter) = probe(test, &Options { summary_only: true, ..Options::default() }) else { return };
    let Some(prog) = program(test, "gated") else { return };
    // long enough to still run after 300 ms, bounded in case it is fast
    const N: u64 = 6_000_000;
    let mut child = gated(&prog, N);
    let pid = child.id();
    stream.follow(pid).expect("follow");
    counter.follow(pid).expect("follow");
    child.stdin.take().expect("stdin").write_all(b"g").expect("release it");
    let mut recs = Vec::new();
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(350) {
        stream.poll(Duration::from_millis(100), &mut |r| recs.push(Rec::from(r))).expect("poll");
    }
    if child.try_wait().expect("try_wait").is_some() {
        skip(test, "the loop of 6,000,000 getppid ended within 350 ms: machine too fast for this check");
        return;
    }
    // SAFETY: kill(2) on our own child.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGSTOP) }, 0);
    std::thread::sleep(Duration::from_millis(50));
    stream.poll(Duration::ZERO, &mut |r| recs.push(Rec::from(r))).expect("poll");
    let timed = repeats(&recs, pid).len();
    let before = recs.len();
    stream.flush_pending(&mut |r| recs.push(Rec::from(r))).expect("flush");
    let flushed = recs[before..].to_vec();
    // SAFETY: kill(2) on our own child.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGCONT) }, 0);
    let mut status = None;
    recs.extend(collect(&mut stream, || {
        status = child.try_wait().expect("try_wait");
        status.is_some()
    }));
    assert!(status.is_some_and(|s| s.success()));
    eprintln!("{test}: {timed} timed repeats in 350 ms, flushed {flushed:?}, lost {:?}", stream.lost());
    assert!(timed >= 1, "runs must be reported while they last (every 100 ms or 65536 calls)");
    assert!(flushed.iter().all(|r| matches!(r, Rec::Repeat { .. } | Rec::Sys { .. })));
    let counted = counter.summary().iter().find(|(nr, _)| *nr == GETPPID).map(|(_, c)| c.calls);
    assert_eq!(counted, Some(N));
    assert_eq!(calls_of(&recs, pid, GETPPID) + stream.lost().syscalls, N, "every getppid accounted for");
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn identical_polls_sum_exactly() {
    polls_exact("identical_polls_sum_exactly", &Options::default());
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn identical_polls_sum_exactly_without_btf() {
    polls_exact("identical_polls_sum_exactly_without_btf", &Options { force_no_btf: true, ..Options::default() });
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn alternating_read_write_is_period_two() {
    let test = "alternating_read_write_is_period_two";
    let Some(mut probe) = probe(test, &Options::default()) else { return };
    let Some(prog) = program(test, "readwrite") else { return };
    const N: u64 = 3000;
    let (pid, recs) = run(&mut probe, &[prog.to_str().expect("utf-8 path"), &N.to_string()]);
    let reps = repeats(&recs, pid);
    eprintln!("{test}: {} records, repeats {reps:?}", recs.len());
    assert_eq!(calls_of(&recs, pid, READ) - reads_before_loop(&recs, pid), N);
    assert_eq!(calls_of(&recs, pid, WRITE), N);
    assert!(reps.iter().any(|&(p, _)| p == 2), "no period-2 repeat");
    // (counting only the loop's calls: how many other records start-up makes depends on the
    // environment, e.g. the directories in LD_LIBRARY_PATH the loader searches)
    let loop_recs = recs
        .iter()
        .filter(|r| matches!(r, Rec::Sys { tgid, nr, .. } if *tgid == pid && (*nr == READ || *nr == WRITE)))
        .count();
    assert!(loop_recs < 20, "read/write pairs were not coalesced: {loop_recs} read/write records");

    // a started but unfinished repetition (the last read) arrives as its own Syscall record
    let (pid, recs) = run(&mut probe, &[prog.to_str().expect("utf-8 path"), &N.to_string(), "1"]);
    assert_eq!(calls_of(&recs, pid, READ) - reads_before_loop(&recs, pid), N + 1);
    assert_eq!(calls_of(&recs, pid, WRITE), N);
}

/// Issue 15: a quick call alternating with a 20 ms wait is coalesced as period 2, and the
/// repeat keeps each position's durations apart (the run's mean had gone to both calls).
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn alternating_calls_keep_their_own_durations() {
    let test = "alternating_calls_keep_their_own_durations";
    let Some(mut probe) = probe(test, &Options::default()) else { return };
    let Some(prog) = program(test, "quick_then_wait") else { return };
    const N: u32 = 12;
    const CLOCK_NANOSLEEP: u32 = 230; // clock_nanosleep: what glibc's nanosleep calls
    let (pid, recs) = run(&mut probe, &[prog.to_str().expect("utf-8 path"), &N.to_string(), "20"]);
    assert_eq!(calls_of(&recs, pid, GETPPID), u64::from(N));
    assert_eq!(calls_of(&recs, pid, CLOCK_NANOSLEEP), u64::from(N));
    // the two records each period-2 repeat stands for, and its per-position sums
    let mut last: Vec<u32> = Vec::new();
    let mut seen = 0;
    for r in &recs {
        match *r {
            Rec::Sys { tid, nr, .. } if tid == pid => last.push(nr),
            Rec::Repeat { tid, period: 2, count, dur_sum_ns, .. } if tid == pid => {
                let pos = &last[last.len() - 2..];
                for (i, nr) in pos.iter().enumerate() {
                    let mean = dur_sum_ns[i] / u64::from(count);
                    match *nr {
                        GETPPID => assert!(mean < 1_000_000, "{test}: getppid {mean} ns on average"),
                        CLOCK_NANOSLEEP => assert!(mean >= 20_000_000, "{test}: nanosleep {mean} ns on average"),
                        other => panic!("{test}: repeat of {other} in the loop"),
                    }
                }
                seen += count;
            }
            _ => {}
        }
    }
    assert!(seen >= N - 3, "{test}: the loop was not coalesced ({seen} repetitions in repeats)");
}

/// Reads the dynamic loader makes before main (ELF headers of libraries).
fn reads_before_loop(recs: &[Rec], pid: u32) -> u64 {
    sys_records(recs, READ).filter(|r| matches!(r, Rec::Sys { tid, args, .. } if *tid == pid && args[2] != 512)).count()
        as u64
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn follows_forks_and_threads_only() {
    family("follows_forks_and_threads_only", &Options::default(), 2000, true);
}

/// Without BTF a forked child is added when clone returns in the parent, so the first calls of
/// a child that runs at once can be missed: its count is at most N, the rest must be there.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn follows_forks_and_threads_without_btf() {
    family(
        "follows_forks_and_threads_without_btf",
        &Options { force_no_btf: true, ..Options::default() },
        20_000,
        false,
    );
}

fn family(test: &str, opts: &Options, n: u64, children_exact: bool) {
    let Some(mut probe) = probe(test, opts) else { return };
    let (Some(prog), Some(busy)) = (program(test, "family"), program(test, "polls")) else { return };
    // an unrelated busy process, not traced: none of its ids may appear
    let mut other = Command::new(&busy).arg("3000000").spawn().expect("start the unrelated process");
    let (pid, recs) = run(&mut probe, &[prog.to_str().expect("utf-8 path"), &n.to_string()]);
    let other_pid = other.id();
    let _ = other.kill();
    let _ = other.wait();

    assert!(recs.iter().all(|r| !r.pids().contains(&other_pid)), "records of the unrelated process {other_pid}");
    let forks: Vec<&Rec> = recs.iter().filter(|r| matches!(r, Rec::Fork { .. })).collect();
    let workers: BTreeSet<u32> = forks
        .iter()
        .filter_map(|r| match **r {
            Rec::Fork { child_tgid, is_thread: false, .. } => Some(child_tgid),
            _ => None,
        })
        .collect();
    let threads: BTreeSet<u32> = forks
        .iter()
        .filter_map(|r| match **r {
            Rec::Fork { child_tid, is_thread: true, .. } => Some(child_tid),
            _ => None,
        })
        .collect();
    assert_eq!(workers.len(), 2, "worker forks: {forks:?}");
    assert_eq!(threads.len(), 2, "thread forks: {forks:?}");
    let tgids: BTreeSet<u32> = recs
        .iter()
        .filter_map(|r| match *r {
            Rec::Sys { tgid, .. } => Some(tgid),
            _ => None,
        })
        .collect();
    let want: BTreeSet<u32> = workers.iter().copied().chain([pid]).collect();
    assert_eq!(tgids, want, "processes seen");

    let calls = per_thread_calls(&recs);
    for &tid in threads.iter().chain([&pid]) {
        assert_eq!(calls.get(&(tid, GETPPID)).copied().unwrap_or(0), n, "getppid calls of {tid}");
    }
    for &tid in &workers {
        let got = calls.get(&(tid, GETPPID)).copied().unwrap_or(0);
        if children_exact {
            assert_eq!(got, n, "getppid calls of worker {tid}");
        } else {
            assert!(got <= n, "getppid calls of worker {tid}: {got}");
        }
    }
    let mut opened: BTreeMap<String, (u32, i64)> = BTreeMap::new();
    for r in sys_records(&recs, OPENAT) {
        if let Rec::Sys { tid, ret, d1: (DataKind::Str, path, _), .. } = r {
            let path = String::from_utf8_lossy(path).into_owned();
            if let Some(who) = path.strip_prefix("/nonexistent-syslint-test/") {
                opened.insert(who.to_string(), (*tid, *ret));
            }
        }
    }
    let names: Vec<&str> = opened.keys().map(String::as_str).collect();
    assert_eq!(names, ["main", "thread0", "thread1", "worker0", "worker1"]);
    assert!(opened.values().all(|&(_, ret)| ret == -2), "ENOENT expected: {opened:?}");
    assert_eq!(opened["main"].0, pid);
    assert!(threads.contains(&opened["thread0"].0) && threads.contains(&opened["thread1"].0));
    assert!(workers.contains(&opened["worker0"].0) && workers.contains(&opened["worker1"].0));
    let ended: BTreeSet<u32> = recs
        .iter()
        .filter_map(|r| match *r {
            Rec::Exit { tgid, process_ended: true, .. } => Some(tgid),
            _ => None,
        })
        .collect();
    assert_eq!(ended, want, "every process reported its end");
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn socket_addresses_payloads_and_paths() {
    let test = "socket_addresses_payloads_and_paths";
    let Some(mut probe) = probe(test, &Options::default()) else { return };
    let Some(prog) = program(test, "client") else { return };
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen on loopback");
    let port = listener.local_addr().expect("addr").port();
    let udp = UdpSocket::bind("127.0.0.1:0").expect("udp on loopback");
    let udp_port = udp.local_addr().expect("addr").port();
    let server = std::thread::spawn(move || {
        let (mut c, _) = listener.accept().expect("accept");
        c.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        let mut buf = [0u8; 1024];
        let mut got = Vec::new();
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = c.read(&mut buf).expect("read request");
            assert!(n > 0, "client closed early");
            got.extend_from_slice(&buf[..n]);
        }
        c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").expect("answer");
    });
    let (pid, recs) = run(&mut probe, &[prog.to_str().expect("utf-8 path"), &port.to_string(), &udp_port.to_string()]);
    server.join().expect("server thread");
    let mut dgram = [0u8; 64];
    udp.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
    assert_eq!(udp.recv(&mut dgram).expect("datagram"), 12);

    let sockaddr = |port: u16| {
        let mut v = vec![2, 0]; // AF_INET, little-endian sa_family
        v.extend_from_slice(&port.to_be_bytes());
        v.extend_from_slice(&[127, 0, 0, 1]);
        v
    };
    let connect = sys_records(&recs, CONNECT).find(|r| matches!(r, Rec::Sys { tgid, .. } if *tgid == pid));
    let Some(Rec::Sys { ret: 0, d1: (DataKind::Sockaddr, addr, false), .. }) = connect else {
        panic!("connect record: {connect:?}");
    };
    assert_eq!(addr.len(), 16);
    assert_eq!(addr[..8], sockaddr(port)[..]);

    let req = b"GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: syslint-test\r\nAccept: */*\r\n\r\n";
    let write = sys_records(&recs, WRITE).find(|r| matches!(r, Rec::Sys { d1: (DataKind::Bytes, _, _), .. }));
    let Some(Rec::Sys { ret, d1: (_, payload, truncated), .. }) = write else { panic!("socket write: {write:?}") };
    assert_eq!(*ret, req.len() as i64);
    assert_eq!(payload[..], req[..64], "payload cut at the 64-byte default");
    assert!(*truncated);

    let read = sys_records(&recs, READ).find(|r| matches!(r, Rec::Sys { d1: (DataKind::Bytes, _, _), .. }));
    let Some(Rec::Sys { ret, d1: (_, payload, false), .. }) = read else { panic!("socket read: {read:?}") };
    assert_eq!(payload[..], b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"[..]);
    assert_eq!(*ret as usize, payload.len());
    // reads of files (the loader's ELF headers) carry no payload
    assert!(sys_records(&recs, READ).any(|r| matches!(r, Rec::Sys { d1: (DataKind::None, _, _), .. })));

    let send = sys_records(&recs, SENDTO).next();
    let Some(Rec::Sys { d1: (DataKind::Bytes, payload, false), d2: (DataKind::Sockaddr, to, false), .. }) = send else {
        panic!("sendto: {send:?}");
    };
    assert_eq!(payload[..], b"ping-syslint"[..]);
    assert_eq!(to[..8], sockaddr(udp_port)[..]);

    assert!(sys_records(&recs, OPENAT).any(|r| matches!(r,
        Rec::Sys { ret: -2, d1: (DataKind::Str, p, false), .. } if p == b"/nonexistent-syslint-test/client-config")));
}

/// Starts tests/programs/gated.c untraced and returns once it is blocked reading stdin, so that
/// probes following it from then on all see the same calls.
fn gated(prog: &Path, n: u64) -> std::process::Child {
    let child = Command::new(prog).arg(n.to_string()).stdin(Stdio::piped()).spawn().expect("start the gated program");
    let deadline = Instant::now() + Duration::from_secs(20);
    // /proc/PID/syscall starts with the number of the call the task is blocked in (0: read)
    while !std::fs::read_to_string(format!("/proc/{}/syscall", child.id())).is_ok_and(|s| s.starts_with("0 ")) {
        assert!(Instant::now() < deadline, "the gated program never blocked in read");
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn attaches_to_a_running_process() {
    let test = "attaches_to_a_running_process";
    let Some(mut probe) = probe(test, &Options::default()) else { return };
    let Some(prog) = program(test, "gated") else { return };
    const N: u64 = 1500;
    let mut child = gated(&prog, N);
    let pid = child.id();
    probe.follow(pid).expect("follow");
    child.stdin.take().expect("stdin").write_all(b"g").expect("release it");
    let mut status = None;
    let recs = collect(&mut probe, || {
        status = child.try_wait().expect("try_wait");
        status.is_some()
    });
    assert!(status.is_some_and(|s| s.success()));
    assert_eq!(calls_of(&recs, pid, GETPPID), N);
    assert!(sys_records(&recs, OPENAT).any(|r| matches!(r,
        Rec::Sys { d1: (DataKind::Str, p, _), .. } if p == b"/nonexistent-syslint-test/gated")));
    assert!(recs.iter().all(|r| r.pids().iter().all(|&p| p == pid)), "only the followed process");
    assert!(probe.follow(u32::MAX - 1).is_err(), "following a missing process fails");
}

/// Attaching with `in_flight` (what `trace -p` sets): the read the program was blocked in
/// when tracing began is reported when it returns, flagged, with its number, arguments and
/// return value; without it, that call is missed (a spawned command's gate).
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn a_call_under_way_at_attach_is_reported_when_it_returns() {
    let test = "a_call_under_way_at_attach_is_reported_when_it_returns";
    let Some(prog) = program(test, "gated") else { return };
    for (in_flight, no_btf) in [(true, false), (true, true), (false, false)] {
        let Some(mut probe) = probe(test, &Options { in_flight, force_no_btf: no_btf, ..Options::default() }) else {
            return;
        };
        let mut child = gated(&prog, 10);
        let pid = child.id();
        probe.follow(pid).expect("follow");
        child.stdin.take().expect("stdin").write_all(b"g").expect("release it");
        let mut status = None;
        let recs = collect(&mut probe, || {
            status = child.try_wait().expect("try_wait");
            status.is_some()
        });
        assert!(status.is_some_and(|s| s.success()));
        let first = recs.iter().find(|r| matches!(r, Rec::Sys { tid, .. } if *tid == pid));
        let ctx = format!("{test} in_flight={in_flight} no_btf={no_btf}: {first:?}");
        match first {
            Some(&Rec::Sys { nr, args, ret, began_before, .. }) if in_flight => {
                assert_eq!((nr, args[0], args[2], ret, began_before), (READ, 0, 1, 1, true), "{ctx}");
            }
            Some(&Rec::Sys { nr, began_before, .. }) => assert!(nr != READ && !began_before, "{ctx}"),
            _ => panic!("{ctx}"),
        }
        let flagged = recs.iter().filter(|r| matches!(r, Rec::Sys { began_before: true, .. })).count();
        assert_eq!(flagged, usize::from(in_flight), "{ctx}");
        assert_eq!(calls_of(&recs, pid, GETPPID), 10, "{ctx}");
    }
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn drops_are_counted_and_account_for_every_call() {
    let test = "drops_are_counted_and_account_for_every_call";
    // a tiny ring that is not read while the program runs; coalescing off so every call is a
    // record; a summary-only probe on the same process counts every call independently
    let stream_opts = Options { ring_bytes: 16 << 10, coalesce: false, ..Options::default() };
    let Some(mut stream) = probe(test, &stream_opts) else { return };
    let Some(mut counter) = probe(test, &Options { summary_only: true, ..Options::default() }) else { return };
    let Some(prog) = program(test, "gated") else { return };
    const N: u64 = 20_000;
    let mut child = gated(&prog, N);
    let pid = child.id();
    stream.follow(pid).expect("follow");
    counter.follow(pid).expect("follow");
    child.stdin.take().expect("stdin").write_all(b"g").expect("release it");
    let status = child.wait().expect("wait");
    assert!(status.success());
    let recs = collect(&mut stream, || true);
    let lost = stream.lost();
    let seen: u64 = recs
        .iter()
        .filter(|r| matches!(r, Rec::Sys { .. } | Rec::Repeat { .. }))
        .map(|r| match r {
            Rec::Repeat { period, count, .. } => u64::from(*period) * u64::from(*count),
            _ => 1,
        })
        .sum();
    let counted: u64 = counter.summary().iter().map(|(_, c)| c.calls).sum();
    let getppid = counter.summary().iter().find(|(nr, _)| *nr == GETPPID).map(|(_, c)| c.calls);
    eprintln!("{test}: seen {seen}, lost {lost:?}, summary counted {counted}");
    assert_eq!(getppid, Some(N), "summary-only counters");
    assert!(lost.records > 0 && lost.syscalls > 0, "the tiny ring must have overflowed");
    assert_eq!(seen + lost.syscalls, counted, "records + lost = every call");
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn summary_only_counts_calls_errors_and_time() {
    let test = "summary_only_counts_calls_errors_and_time";
    let Some(mut probe) = probe(test, &Options { summary_only: true, ..Options::default() }) else { return };
    let Some(prog) = program(test, "family") else { return };
    const N: u64 = 1000;
    let (_, recs) = run(&mut probe, &[prog.to_str().expect("utf-8 path"), &N.to_string()]);
    assert!(recs.iter().all(|r| !matches!(r, Rec::Sys { .. } | Rec::Repeat { .. })), "no per-call records");
    let summary: HashMap<u32, syslint_bpf::Counts> = probe.summary().into_iter().collect();
    assert_eq!(summary[&GETPPID].calls, 5 * N);
    assert_eq!(summary[&GETPPID].errors, 0);
    assert!(summary[&GETPPID].dur_ns > 0);
    assert!(summary[&OPENAT].errors >= 5, "the five missing paths");
    assert!(summary.keys().all(|&nr| syscall_name(nr).is_some()));
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn every_capture_kind_arrives() {
    let test = "every_capture_kind_arrives";
    let Some(mut probe) = probe(test, &Options::default()) else { return };
    let Some(prog) = program(test, "captures") else { return };
    const M: u64 = 200;
    let (pid, recs) = run(&mut probe, &[prog.to_str().expect("utf-8 path"), &M.to_string()]);
    let first = |nr: u32| -> &Rec {
        sys_records(&recs, nr).next().unwrap_or_else(|| panic!("no {} record", syscall_name(nr).unwrap_or("?")))
    };
    let d1 = |r: &Rec| match r {
        Rec::Sys { d1, .. } => d1.clone(),
        _ => unreachable!(),
    };
    let d2 = |r: &Rec| match r {
        Rec::Sys { d2, .. } => d2.clone(),
        _ => unreachable!(),
    };
    let loopback = |a: &[u8]| a.len() == 16 && a[..2] == [2, 0] && a[4..8] == [127, 0, 0, 1];

    // pipe2: the two fds the kernel wrote
    let (kind, fds, _) = d1(first(293));
    assert_eq!((kind, fds.len()), (DataKind::Bytes, 8));
    // ppoll: M identical zero timeouts coalesce exactly; a different timeout is a new record
    assert_eq!(calls_of(&recs, pid, 271), M + 1);
    let timeouts: Vec<Vec<u8>> = sys_records(&recs, 271).map(|r| d1(r).1).collect();
    let mut tiny = vec![0u8; 8];
    tiny.extend_from_slice(&1000u64.to_ne_bytes());
    assert_eq!(timeouts, [vec![0u8; 16], tiny], "the first zero-timeout ppoll and the 1 µs one");
    // epoll_ctl: struct epoll_event, 12 bytes on x86_64
    let mut ev = 1u32.to_ne_bytes().to_vec(); // EPOLLIN
    ev.extend_from_slice(&0x1122334455667788u64.to_ne_bytes());
    assert_eq!(d1(first(233)), (DataKind::Bytes, ev, false));
    // setsockopt: the int value
    assert_eq!(d1(first(54)), (DataKind::Bytes, 1i32.to_ne_bytes().to_vec(), false));
    // addresses passed and received
    for nr in [49, 51, 42, 43] {
        let (kind, addr, _) = d1(first(nr));
        assert!(kind == DataKind::Sockaddr && loopback(&addr), "{}: {addr:?}", syscall_name(nr).unwrap_or("?"));
    }
    // writev: the first buffer only; the TCP read: all 11 bytes
    assert_eq!(d1(first(20)), (DataKind::Bytes, b"hello-".to_vec(), false));
    let socket_read = sys_records(&recs, READ).find(|r| matches!(r, Rec::Sys { ret: 11, .. })).expect("socket read");
    assert_eq!(d1(socket_read).1, b"hello-world");
    // UDP: sendmsg's first iovec and destination, recvfrom's payload and source
    let sendmsg = first(46);
    assert_eq!(d1(sendmsg).1, b"hello-");
    assert!(loopback(&d2(sendmsg).1));
    let recvfrom = first(45);
    assert_eq!(d1(recvfrom).1, b"hello-world");
    assert!(loopback(&d2(recvfrom).1));
}

/// A fault delivered again and again (tests/programs/faults.c): one Signal record per
/// delivery, with SIGSEGV's number, SEGV_MAPERR and the address, each before the handler's
/// getppid, and no run of identical getppid calls folded across a signal (the handler makes the
/// same call every time: without the run broken at each signal the calls would arrive after the
/// signals as one Repeat).
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn signals_arrive_in_order_between_the_calls() {
    const GETPPID: u32 = 110;
    const N: usize = 300;
    let test = "signals_arrive_in_order_between_the_calls";
    let Some(mut probe) = probe(test, &Options::default()) else { return };
    let Some(prog) = program(test, "faults") else { return };
    let (pid, recs) = run(&mut probe, &[prog.to_str().expect("path"), &N.to_string()]);
    let mine: Vec<&Rec> = recs
        .iter()
        .filter(|r| r.pids().first() == Some(&pid) || matches!(r, Rec::Signal { tid, .. } if *tid == pid))
        .collect();
    let signals: Vec<&Rec> = mine.iter().copied().filter(|r| matches!(r, Rec::Signal { .. })).collect();
    assert_eq!(signals.len(), N, "one record per delivery");
    for s in &signals {
        assert!(matches!(s, Rec::Signal { sig: 11, code: 1, addr: 0x38, .. }), "{s:?}");
    }
    // between two signals (and after the last): exactly the handler's one getppid
    let mut between: Option<u64> = None;
    let mut last_nrs: Vec<u32> = Vec::new();
    for r in &mine {
        match r {
            Rec::Signal { .. } => {
                if let Some(n) = between {
                    assert_eq!(n, 1, "getppid calls between two signals");
                }
                between = Some(0);
            }
            Rec::Sys { nr, .. } => {
                last_nrs.push(*nr);
                if *nr == GETPPID {
                    if let Some(n) = between.as_mut() {
                        *n += 1;
                    }
                }
            }
            Rec::Repeat { period, count, .. } => {
                let p = usize::from(*period);
                let folded = last_nrs[last_nrs.len().saturating_sub(p)..].iter().filter(|n| **n == GETPPID).count();
                if let Some(n) = between.as_mut() {
                    *n += u64::from(*count) * folded as u64;
                }
            }
            _ => {}
        }
    }
    assert_eq!(between, Some(1), "the last handler's getppid");
}

/// Spawns argv with a stack-sampling probe, reading the stack ring on this thread between the
/// record polls; returns (pid, records, stack samples as (tid, nr, ts_exit, weight, ip, bytes,
/// fault, truncated, fp walk), stats).
#[allow(clippy::type_complexity)]
fn run_with_stacks(probe: &mut Probe, argv: &[&str]) -> (u32, Vec<Rec>, Samples) {
    let mut ring = probe.take_stack_ring().expect("stack ring").expect("stacks were asked for");
    assert!(probe.take_stack_ring().expect("second take").is_none(), "taken once only");
    let argv: Vec<OsString> = argv.iter().map(OsString::from).collect();
    let mut child = probe.spawn(&argv).expect("spawn");
    let pid = child.pid();
    let mut stacks = Vec::new();
    let mut take = |s: syslint_bpf::StackSample<'_>| {
        stacks.push((
            s.tid,
            s.nr,
            s.ts_exit,
            s.weight,
            s.ip,
            s.stack.len(),
            s.fault,
            s.truncated,
            s.fp_ips().collect(),
        ));
    };
    let mut recs = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let status = child.try_wait().expect("try_wait");
        probe.poll(Duration::from_millis(20), &mut |r| recs.push(Rec::from(r))).expect("poll");
        ring.poll(Duration::ZERO, &mut take).expect("stack poll");
        if let Some(s) = status {
            assert!(s.success(), "{argv:?} failed: {s}");
            break;
        }
        assert!(Instant::now() < deadline, "traced program did not finish in 60 s");
    }
    probe.poll(Duration::ZERO, &mut |r| recs.push(Rec::from(r))).expect("final poll");
    probe.flush_pending(&mut |r| recs.push(Rec::from(r))).expect("flush");
    ring.poll(Duration::ZERO, &mut take).expect("final stack poll");
    (pid, recs, stacks)
}

/// Polls the exact-budget tests make.
const EXACT_POLLS: u64 = 5000;

/// The stacks [`run_with_stacks`] collects: (tid, nr, ts_exit, weight, ip, stack bytes, fault,
/// truncated, frame-pointer walk).
type Samples = Vec<(u32, u32, u64, u32, u64, usize, bool, bool, Vec<u64>)>;

/// [`EXACT_POLLS`] polls traced with a budget whose every sample can be predicted (first 8, then one in
/// 1000, one window, no spacing) and the given cap: the probe (for its counters), the pid, the
/// records and the stacks. None when eBPF or the program is not there (said by the helpers).
fn polls_with_exact_budget(test: &str, cap: u32) -> Option<(Probe, u32, Vec<Rec>, Samples)> {
    let stacks = StackOptions {
        first: 8,
        every: 1000,
        cap,
        window: Duration::from_secs(3600),
        spacing: Duration::ZERO,
        syscalls: Some(vec![POLL]),
        ..Default::default()
    };
    let opts = Options { stacks: Some(stacks), ..Options::default() };
    let mut probe = probe(test, &opts)?;
    let prog = program(test, "polls")?;
    let (pid, recs, samples) =
        run_with_stacks(&mut probe, &[prog.to_str().expect("utf-8 path"), &EXACT_POLLS.to_string()]);
    Some((probe, pid, recs, samples))
}

/// The kernel's sampling budget, exactly: 5000 polls in one window give the first 8 and then
/// one in 1000 (weight 1000) stacks, each naming a poll call of the thread whose exit time is
/// in the trace, and none is lost. The copy starts at sp and stops at the stack's top (fault)
/// or the byte limit; ip is the instruction after libc's syscall.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn sampled_calls_carry_their_stack_and_the_budget_is_exact() {
    let test = "sampled_calls_carry_their_stack_and_the_budget_is_exact";
    let Some((probe, pid, recs, samples)) = polls_with_exact_budget(test, StackOptions::default().cap) else { return };
    let st = probe.stack_stats();
    eprintln!("{test}: {} samples, stats {st:?}", samples.len());
    assert_eq!(calls_of(&recs, pid, POLL), EXACT_POLLS);
    // first 8, then calls 1008, 2008, 3008, 4008
    assert_eq!(samples.len(), 8 + 4, "{samples:?}");
    assert_eq!(st.sampled, 12);
    assert_eq!((st.sent, st.lost), (12, 0));
    assert!(samples.iter().all(|s| s.0 == pid && s.1 == POLL), "only the process's polls");
    let weights: Vec<u32> = samples.iter().map(|s| s.3).collect();
    assert_eq!(weights, [1, 1, 1, 1, 1, 1, 1, 1, 1000, 1000, 1000, 1000]);
    assert_eq!(st.bytes, samples.iter().map(|s| 64 + 256 + s.5 as u64).sum::<u64>());
    // every sample names a call the trace has: the first polls' own records' exit times
    let poll_exits: BTreeSet<u64> = sys_records(&recs, POLL)
        .filter_map(|r| match r {
            Rec::Sys { ts_exit, .. } => Some(*ts_exit),
            _ => None,
        })
        .collect();
    assert!(poll_exits.contains(&samples[0].2), "the first sample is the first poll's");
    for s in &samples {
        // the stack copy: from sp to the stack's top (a main thread's stack is far less than
        // 8 KiB deep here), so it stopped at an unreadable page, never empty
        assert!(s.5 > 0 && s.5 <= 8192, "stack bytes {}", s.5);
        assert!(s.6 || s.7, "the copy stopped somewhere: fault or limit");
        // the frame-pointer walk starts at ip
        assert_eq!(s.8.first().copied(), Some(s.4), "walk {:x?} vs ip {:x}", s.8, s.4);
    }
    // all from the same call site: one ip
    assert_eq!(samples.iter().map(|s| s.4).collect::<BTreeSet<_>>().len(), 1);
}

/// A spin does not buy thousands of stacks a window: after `cap` samples at a stride the stride
/// doubles, and each sample weighs the stride it was taken at. 5000 polls, first 8, one in 1000,
/// cap 2: calls 1..8 (weight 1), then 1008 and 2008 (stride 1000), then 4008 (stride 2000).
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn the_sampling_stride_doubles_after_cap_samples() {
    let test = "the_sampling_stride_doubles_after_cap_samples";
    let Some((probe, pid, recs, samples)) = polls_with_exact_budget(test, 2) else { return };
    assert_eq!(calls_of(&recs, pid, POLL), EXACT_POLLS);
    let weights: Vec<u32> = samples.iter().map(|s| s.3).collect();
    assert_eq!(weights, [1, 1, 1, 1, 1, 1, 1, 1, 1000, 1000, 2000], "{samples:?}");
    assert_eq!(probe.stack_stats().lost, 0);
}

/// No two samples of a thread closer than the spacing (the default, 1 ms): a loop's first calls
/// are not slowed one after another. Each sample weighs the calls since the previous one, so the
/// weights still add up to the calls made up to the last sample.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn samples_of_a_thread_are_spaced_and_weigh_the_calls_between() {
    let test = "samples_of_a_thread_are_spaced_and_weigh_the_calls_between";
    let stacks = syslint_bpf::StackOptions {
        window: Duration::from_secs(3600),
        syscalls: Some(vec![POLL]),
        ..Default::default()
    };
    assert_eq!(stacks.spacing, Duration::from_millis(1), "the default spacing");
    // every poll its own record, to count the polls before each sample
    let opts = Options { stacks: Some(stacks), coalesce: false, ..Options::default() };
    let Some(mut probe) = probe(test, &opts) else { return };
    let Some(prog) = program(test, "polls") else { return };
    const N: u64 = 200_000;
    let (pid, recs, samples) = run_with_stacks(&mut probe, &[prog.to_str().expect("utf-8 path"), &N.to_string()]);
    assert_eq!(calls_of(&recs, pid, POLL), N);
    assert!(samples.len() >= 2, "{samples:?}");
    let exits: Vec<u64> = samples.iter().map(|s| s.2).collect();
    for w in exits.windows(2) {
        assert!(w[1] - w[0] >= 1_000_000, "samples {} ns apart: {exits:?}", w[1] - w[0]);
    }
    // the first sample is the first poll; the others stand for the polls since the one before
    let weights: Vec<u64> = samples.iter().map(|s| u64::from(s.3)).collect();
    assert_eq!(weights[0], 1, "{weights:?}");
    assert!(weights[1..].iter().all(|&w| w > 1), "spaced samples skip calls: {weights:?}");
    let sum: u64 = weights.iter().sum();
    assert!(sum <= N, "{weights:?}");
    // each weight is exact: the poll records before each sample's exit time count the same
    let poll_exits: Vec<u64> = sys_records(&recs, POLL)
        .filter_map(|r| match r {
            Rec::Sys { ts_exit, .. } => Some(*ts_exit),
            _ => None,
        })
        .collect();
    assert_eq!(poll_exits.len() as u64, N);
    let last = *exits.last().expect("a sample");
    let before = poll_exits.iter().filter(|&&t| t <= last).count() as u64;
    assert_eq!(sum, before, "the weights add up to the polls up to the last sample");
    assert_eq!(probe.stack_stats().lost, 0);
}

/// Before a thread's first sample the kernel sends its process's executable file mappings
/// (what names the frames of a process gone before /proc/PID/maps is read), and again when a
/// thread that had samples calls exit_group: the program's own file among them, by inode, with
/// its path from its file system's root.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn the_kernel_sends_the_mappings_before_the_first_sample_and_at_exit() {
    use std::os::unix::fs::MetadataExt;
    let test = "the_kernel_sends_the_mappings_before_the_first_sample_and_at_exit";
    let stacks = syslint_bpf::StackOptions { syscalls: Some(vec![POLL]), ..Default::default() };
    let opts = Options { stacks: Some(stacks), ..Options::default() };
    let Some(mut probe) = probe(test, &opts) else { return };
    let Some(prog) = program(test, "polls") else { return };
    let mut ring = probe.take_stack_ring().expect("stack ring").expect("stacks were asked for");
    let mut child = probe.spawn(&[prog.clone().into_os_string(), "1000".into()]).expect("spawn");
    let pid = child.pid();
    // (kind, ...) in ring order: 'v' a mapping of the program's file, 'V' another, 's' a sample
    let mut seen: Vec<(char, u32, u64)> = Vec::new();
    let ino = std::fs::metadata(&prog).expect("stat").ino();
    let name = prog.file_name().expect("name").to_string_lossy().into_owned();
    let mut paths = Vec::new();
    let mut take = |i: syslint_bpf::StackItem<'_>| match i {
        syslint_bpf::StackItem::Vma(v) => {
            let mine = v.inode == ino;
            if mine {
                paths.push(v.fs_path.clone());
            }
            seen.push((if mine { 'v' } else { 'V' }, v.tgid, v.mm_id));
        }
        syslint_bpf::StackItem::Sample(s) => seen.push(('s', s.tgid, s.mm_id)),
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let status = child.try_wait().expect("try_wait");
        probe.poll(Duration::from_millis(20), &mut |_| {}).expect("poll");
        ring.poll_items(Duration::ZERO, &mut take).expect("stack poll");
        if status.is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "traced program did not finish in 60 s");
    }
    ring.poll_items(Duration::ZERO, &mut take).expect("final stack poll");
    let first = seen.iter().position(|x| x.0 == 's').expect("a sample");
    let (tgid, mm) = (seen[first].1, seen[first].2);
    assert_eq!(tgid, pid);
    let before: Vec<char> = seen[..first].iter().filter(|x| x.1 == pid && x.2 == mm).map(|x| x.0).collect();
    assert!(before.contains(&'v'), "the program's mapping before its first sample: {seen:?}");
    let after: Vec<char> = seen[first..].iter().filter(|x| x.1 == pid && x.2 == mm).map(|x| x.0).collect();
    assert!(after.contains(&'v'), "and again at exit: {seen:?}");
    // its path from its file system's root ends with the file's name
    assert!(paths.iter().all(|p| p.as_deref().is_some_and(|p| p.ends_with(&format!("/{name}")))), "{paths:?}");
}

/// Without stacks asked for there is no stack ring, and none is sampled.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn no_stacks_unless_asked() {
    let test = "no_stacks_unless_asked";
    let Some(mut probe) = probe(test, &Options::default()) else { return };
    assert!(probe.take_stack_ring().expect("take").is_none());
    let Some(prog) = program(test, "polls") else { return };
    let (pid, recs) = run(&mut probe, &[prog.to_str().expect("utf-8 path"), "100"]);
    assert_eq!(calls_of(&recs, pid, POLL), 100);
    assert_eq!(probe.stack_stats(), syslint_bpf::StackStats::default());
    // the raw_tp variant sends none even when asked
    let opts = Options { force_no_btf: true, stacks: Some(Default::default()), ..Options::default() };
    let Some(mut nobtf) = self::probe(test, &opts) else { return };
    assert!(nobtf.take_stack_ring().expect("take").is_none());
}

/// The agent's counter: two processes counted apart in two groups, exactly, and a third one
/// not named not counted at all; after `detach`, nothing more is counted.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn the_counter_counts_each_group_apart_and_only_them() {
    let test = "the_counter_counts_each_group_apart_and_only_them";
    let Some(prog) = program(test, "gated") else { return };
    let mut counter = match syslint_bpf::Counter::load() {
        Ok(c) => c,
        Err(e) => panic!("{test}: loading the counter failed although BPF looked usable here: {e}"),
    };
    let (mut a, mut b, mut other) = (gated(&prog, 700), gated(&prog, 1300), gated(&prog, 500));
    assert_eq!(counter.watch(&[vec![a.id()], vec![b.id()]]).expect("watch"), 2);
    for c in [&mut a, &mut b, &mut other] {
        c.stdin.take().expect("stdin").write_all(b"g").expect("release it");
    }
    for c in [&mut a, &mut b, &mut other] {
        assert!(c.wait().expect("wait").success());
    }
    let groups = counter.take();
    assert_eq!(groups.len(), 2);
    for (rows, n) in groups.iter().zip([700, 1300]) {
        let of = |nr: u32| rows.iter().find(|(r, _)| *r == nr).map(|(_, c)| (c.calls, c.errors));
        assert_eq!(of(GETPPID), Some((n, 0)), "{test}: {rows:?}");
        // the read it was blocked in when counting began, counted when it returned
        assert_eq!(of(READ), Some((1, 0)), "{test}: {rows:?}");
        assert_eq!(of(OPENAT), Some((1, 1)), "{test}: the missing path: {rows:?}");
        assert!(rows.iter().all(|(nr, c)| c.dur_ns == 0 && syscall_name(*nr).is_some()), "{rows:?}");
    }
    // the third process's 500 would show in a group's getppid count above; after detach even
    // a watched process is not counted, and what was counted can still be taken
    counter.detach();
    let mut late = gated(&prog, 900);
    counter.watch(&[vec![a.id()], vec![late.id()]]).expect("watch after detach");
    late.stdin.take().expect("stdin").write_all(b"g").expect("release it");
    assert!(late.wait().expect("wait").success());
    assert_eq!(counter.take(), groups, "{test}: counted after detach");
}
