//! Faults while tracing (issue 16): syslint stopped or killed while attached, the traced program
//! killed, exec'ing, forking thousands of children or calling faster than syslint can keep up,
//! a PID namespace of its own, another user's process. The traced program must stay healthy,
//! nothing of syslint's may stay loaded or attached, and every loss or refusal must be said.

use crate::common::*;
use crate::trace::{alive_and_working, signal, tmp, trace_cmd, wait_tracing, worker};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Each behaviour, on both backends.
macro_rules! both {
    ($name:ident) => {
        mod $name {
            #[test]
            fn strace() {
                super::$name("strace")
            }
            #[test]
            #[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
            fn ebpf() {
                crate::common::assert_bpf_works("the eBPF variants");
                super::$name("ebpf")
            }
        }
    };
}

/// The kernel objects (BPF programs, maps, links) a process holds open, from its fdinfo.
fn bpf_objects(pid: u32) -> Vec<(&'static str, u32)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/fdinfo")).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        for l in text.lines() {
            for kind in ["prog_id", "map_id", "link_id"] {
                if let Some(id) = l.strip_prefix(kind).and_then(|v| v.strip_prefix(':')) {
                    out.push((kind, id.trim().parse().unwrap()));
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether the kernel still has this BPF object (BPF_*_GET_FD_BY_ID; needs root).
fn bpf_object_exists(kind: &str, id: u32) -> bool {
    use nix::libc;
    let cmd = match kind {
        "prog_id" => 13, // BPF_PROG_GET_FD_BY_ID
        "map_id" => 14,  // BPF_MAP_GET_FD_BY_ID
        _ => 30,         // BPF_LINK_GET_FD_BY_ID
    };
    let attr: [u32; 4] = [id, 0, 0, 0];
    // SAFETY: bpf(cmd, attr, size) reads `size` bytes of a valid, zero-padded attribute union.
    let fd = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_ptr(), std::mem::size_of_val(&attr)) };
    if fd >= 0 {
        // SAFETY: a new fd the kernel just gave us.
        unsafe { libc::close(fd as i32) };
        return true;
    }
    let e = std::io::Error::last_os_error();
    assert_eq!(e.raw_os_error(), Some(libc::ENOENT), "bpf({cmd}, {id}): {e}");
    false
}

fn tracer_of(pid: u32) -> u32 {
    let st = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    st.lines().find_map(|l| l.strip_prefix("TracerPid:")).unwrap().trim().parse().unwrap()
}

/// After syslint (`tracer`, gone now) traced `target`: nothing of it is left. No tracer on the
/// target, none of its BPF objects loaded, no FIFO directory in the temporary directory.
fn assert_nothing_left(b: &str, target: u32, tracer: u32, objects: &[(&str, u32)]) {
    let t0 = Instant::now();
    loop {
        // the kernel frees a program after its last reference is gone (RCU): give it time
        let tracers = tracer_of(target);
        let loaded: Vec<_> = objects.iter().filter(|(k, id)| bpf_object_exists(k, *id)).collect();
        if tracers == 0 && loaded.is_empty() {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "{b}: TracerPid {tracers}, still loaded: {loaded:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let prefix = format!("syslint-{tracer}-");
    let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "{b}: left behind: {left:?}");
}

/// syslint attached with `-p`, once it traces: its pid, the worker, the worker's line counter
/// and the BPF objects syslint holds (none for strace).
fn attached(
    b: &str,
    tag: &str,
) -> (std::process::Child, std::process::Child, std::path::PathBuf, Vec<(&'static str, u32)>) {
    let d = tmp(&format!("{tag}-{b}"));
    let w = worker(&d);
    std::thread::sleep(Duration::from_millis(200));
    let s = trace_cmd(b, &["-q", "--format", "json", "-p", &w.id().to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_tracing(b, s.id(), Some(w.id()));
    let objects = bpf_objects(s.id());
    if b == "ebpf" {
        assert!(objects.iter().any(|(k, _)| *k == "prog_id"), "no BPF program among syslint's fds");
        assert!(objects.iter().any(|(k, _)| *k == "map_id"), "no BPF map among syslint's fds");
    } else {
        assert!(objects.is_empty(), "{objects:?}");
    }
    (s, w, d.join("count"), objects)
}

/// syslint stopped (SIGSTOP) while attached, then continued: the target runs on (with eBPF
/// even while syslint is stopped: the kernel drops what syslint does not read), and when
/// continued syslint still detaches on Ctrl-C and reports.
fn stopped_then_continued_while_attached(b: &str) {
    let (s, mut w, count, objects) = attached(b, "stopcont");
    std::thread::sleep(Duration::from_millis(300));
    signal(s.id(), "-STOP");
    std::thread::sleep(Duration::from_millis(500));
    if b == "ebpf" {
        assert!(alive_and_working(&mut w, &count), "the worker must run on while syslint is stopped");
    }
    // strace: strace itself runs on and fills the pipe to the stopped syslint, then waits
    // for it (as strace -o PIPE does), and the tracee with it: give it time to get there
    std::thread::sleep(Duration::from_millis(1000));
    signal(s.id(), "-CONT");
    assert!(alive_and_working(&mut w, &count), "{b}: the worker must run on once syslint continues");
    signal(s.id(), "-INT");
    let spid = s.id();
    let o = s.wait_with_output().unwrap();
    let r = syslint_report::printers::json::parse(&stdout(&o)).unwrap_or_else(|e| panic!("{b}: {e}: {}", stderr(&o)));
    // 1: a finding (the worker's shell forks a sleep 20 times a second)
    assert!(matches!(o.status.code(), Some(0 | 1)), "{b}: {}", stderr(&o));
    assert!(r.capture.syscalls > 10, "{b}: {}", r.capture.syscalls);
    assert!(r.capture.notes.iter().any(|n| n.contains("Ctrl-C")), "{b}: {:?}", r.capture.notes);
    assert_nothing_left(b, w.id(), spid, &objects);
    assert!(alive_and_working(&mut w, &count), "{b}: the worker must run on after syslint ended");
    let _ = w.kill();
    let _ = w.wait();
}

both!(stopped_then_continued_while_attached);

/// syslint stopped while attached, then killed (SIGKILL, no destructor runs): the target
/// runs on untraced; no BPF program, map or link of syslint stays loaded, no ptrace tracer
/// stays on the target, and the strace backend's FIFO directory is gone.
fn stopped_then_killed_while_attached(b: &str) {
    let (mut s, mut w, count, objects) = attached(b, "stopkill");
    std::thread::sleep(Duration::from_millis(300));
    signal(s.id(), "-STOP");
    std::thread::sleep(Duration::from_millis(1500));
    s.kill().unwrap();
    let _ = s.wait();
    assert_nothing_left(b, w.id(), s.id(), &objects);
    assert!(alive_and_working(&mut w, &count), "{b}: the worker must run on after syslint was killed");
    let _ = w.kill();
    let _ = w.wait();
}

both!(stopped_then_killed_while_attached);

/// syslint killed (SIGKILL) while attached and running: as above.
fn killed_while_attached_leaves_nothing(b: &str) {
    let (mut s, mut w, count, objects) = attached(b, "kill");
    std::thread::sleep(Duration::from_millis(300));
    s.kill().unwrap();
    let _ = s.wait();
    assert_nothing_left(b, w.id(), s.id(), &objects);
    assert!(alive_and_working(&mut w, &count), "{b}: the worker must run on after syslint was killed");
    let _ = w.kill();
    let _ = w.wait();
}

both!(killed_while_attached_leaves_nothing);
