//! Argument decoding on the recorded netio traces, in every flag set strace 6.1 offers:
//! the same program must decode to the same flags, timeouts and addresses.

use std::sync::{atomic::AtomicU64, Arc};
use syslint_capture::input::expand_sources;
use syslint_event::{EventKind, OpenFlags, SockAddr, Sys, Timeout};

const SETS: &[&str] = &[
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

#[derive(Default, Debug, PartialEq)]
struct Seen {
    accept4_nonblock: u32,
    socket_nonblock: u32,
    zero_timeouts: u32,
    finite_timeouts: Vec<u64>,
    connects: Vec<String>,
}

fn decode(name: &str) -> Seen {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/traces").join(name);
    let src = expand_sources(&[p]).expect("fixture");
    let mut s = Seen::default();
    syslint_capture::read_strace(&src, Arc::new(AtomicU64::new(0)), |e| {
        let EventKind::Syscall(sc) = &e.kind else { return };
        match sc.sys {
            Sys::Accept4 if sc.open_flags().is_some_and(|f| f.contains(OpenFlags::NONBLOCK)) => s.accept4_nonblock += 1,
            Sys::Socket if sc.open_flags().is_some_and(|f| f.contains(OpenFlags::NONBLOCK)) => s.socket_nonblock += 1,
            Sys::Connect if sc.ret.value() == Some(0) => {
                if let Some(a) = sc.sockaddr() {
                    s.connects.push(match a {
                        SockAddr::Inet { ip, .. } => ip.to_string(),
                        other => other.to_string(),
                    });
                }
            }
            _ => {}
        }
        match sc.timeout() {
            Some(Timeout::Ns(0)) => s.zero_timeouts += 1,
            Some(Timeout::Ns(n)) => s.finite_timeouts.push(n),
            _ => {}
        }
    })
    .expect("read");
    s.connects.sort();
    s.finite_timeouts.sort();
    s
}

#[test]
fn every_flag_set_decodes_alike() {
    for name in SETS {
        let s = decode(name);
        assert_eq!(s.accept4_nonblock, 4, "{name}");
        assert_eq!(s.socket_nonblock, 1, "{name}");
        // 7 epoll_wait + 11 poll with 0; poll 50 ms, select 10 ms, ppoll 20 ms
        assert_eq!(s.zero_timeouts, 18, "{name}");
        assert_eq!(s.finite_timeouts, vec![10_000_000, 20_000_000, 50_000_000], "{name}");
        // TCP v4 to the child, v6 to the child, the unix socket, the self-connect
        assert_eq!(s.connects, vec!["127.0.0.1", "127.0.0.1", "::1", "unix:/tmp/syslint-netio.sock"], "{name}");
    }
}

/// Byte counts, offsets and poll timeouts are read from the end of the argument text (past
/// the buffer or fd array): on every such call of real traces, in every flag set, they equal
/// what splitting the arguments from the start finds.
#[test]
fn counts_read_from_the_end_equal_counts_split_from_the_start() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files: Vec<std::path::PathBuf> = SETS.iter().map(|n| root.join("tests/fixtures/traces").join(n)).collect();
    for lab in ["small-io", "keepalive-stall", "fsync-storm", "busy-poll", "accept-herd"] {
        let mut t: Vec<_> = std::fs::read_dir(root.join("lab").join(lab).join("traces"))
            .expect("lab traces")
            .map(|e| e.expect("entry").path())
            .collect();
        t.sort();
        files.extend(t);
    }
    let mut checked = 0;
    for path in &files {
        let name = path.display();
        let src = expand_sources(std::slice::from_ref(path)).expect("fixture");
        syslint_capture::read_strace(&src, Arc::new(AtomicU64::new(0)), |e| {
            let EventKind::Syscall(sc) = &e.kind else { return };
            if matches!(sc.sys, Sys::Poll | Sys::EpollWait) {
                // the millisecond timeout, likewise read from the end
                let i = if sc.sys == Sys::Poll { 2 } else { 3 };
                let fwd = sc.arg(i).and_then(|a| a.trim().parse::<i64>().ok()).map(|v| {
                    if (0..1 << 31).contains(&v) {
                        Timeout::Ns(v as u64 * 1_000_000)
                    } else {
                        Timeout::Infinite
                    }
                });
                assert_eq!(sc.timeout(), fwd, "{name}: {sc:?}");
                checked += 1;
                return;
            }
            let (count, off) = match sc.sys {
                Sys::Read | Sys::Write | Sys::Recv | Sys::Send | Sys::Readv | Sys::Writev => (2, None),
                Sys::Pread64 | Sys::Pwrite64 => (2, Some(3)),
                _ => return,
            };
            let forward = |i: usize| sc.arg(i).and_then(|a| a.trim().parse::<u64>().ok());
            assert_eq!(sc.requested_bytes(), forward(count), "{name}: {sc:?}");
            if let Some(o) = off {
                assert_eq!(sc.offset(), forward(o), "{name}: {sc:?}");
            }
            checked += 1;
        })
        .expect("read");
    }
    assert!(checked > 10_000, "{checked} calls checked");
}
