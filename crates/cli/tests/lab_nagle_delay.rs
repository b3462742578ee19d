//! nagle-delay (SL020) on the lab traces (lab/nagle-delay: a C and a Python client writing each
//! request as a header and a body in two writes to a loopback server that answers once it has
//! both; their fixes, TCP_NODELAY, writev, MSG_MORE, one send; a slow server answering one-write
//! requests after 40 ms, and Python's http.client, which splits but sets TCP_NODELAY; strace 6.1,
//! recorded by record.sh) and live: run.sh under strace again.

use crate::common::*;
use syslint_report::Severity;

const LAB: &str = "nagle-delay";
const DET: &str = "nagle-delay";
/// -f -tt -T -yy, -f -tt, -f
const SETS: &[&str] = &["f-tt-T-yy", "f-tt", "f"];

#[test]
fn two_small_writes_per_request_wait_for_the_delayed_ack() {
    for variant in ["c-two-writes", "py-two-sends"] {
        for set in SETS {
            let ctx = format!("{variant}.{set}");
            let f = only(DET, &analyze(&[&lab_variant(LAB, variant, set)]), &ctx);
            assert_eq!(metric(&f, "split_requests"), 60.0, "{ctx}");
            assert_eq!(metric(&f, "writes_per_request"), 2.0, "{ctx}");
            assert_eq!(metric(&f, "connections"), 1.0, "{ctx}");
            if set.contains('T') {
                // the first request goes out in quick-ack mode, the other 59 wait ~40 ms
                assert_eq!(f.severity, Severity::Warning, "{ctx}");
                assert_eq!(metric(&f, "delayed_requests"), 59.0, "{ctx}");
                let m = metric(&f, "median_rtt_ms");
                assert!((40.0..50.0).contains(&m), "{ctx}: median {m}");
                assert!(metric(&f, "delayed_s") > 2.0, "{ctx}");
            } else {
                // no durations: the pattern without its time, info
                assert_eq!(f.severity, Severity::Info, "{ctx}");
                assert!(!f.metrics.contains_key("median_rtt_ms"), "{ctx}");
                assert!(f.cost.as_deref().unwrap_or("").contains("time unknown"), "{ctx}");
            }
            // a Python program is told Python's way first, the general advice folded beside it
            assert_eq!(f.fix_for.as_deref(), ctx.starts_with("py").then_some("Python"), "{ctx}");
            let all = format!("{} {}", f.fix, f.fix_elsewhere.as_deref().unwrap_or(""));
            assert!(f.fix.contains("TCP_NODELAY") && all.contains("writev"), "{ctx}: {all}");
        }
    }
}

#[test]
fn fixes_and_near_misses_are_quiet() {
    for variant in [
        "c-nodelay",
        "c-writev",
        "c-msg-more",
        "py-nodelay",
        "py-one-send",
        // one write per request to a server that takes 40 ms: the same round trips, no split
        "near-slow-server",
        // http.client sends headers and a file body apart, with TCP_NODELAY set
        "near-http-client",
    ] {
        for set in SETS {
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert!(findings(&r, DET).is_empty(), "{variant}.{set}: {:#?}", findings(&r, DET));
        }
    }
}

#[test]
fn a_tls_handshake_per_connection_is_quiet() {
    // Python's TLS client writes twice per connection (the handshake's end, then the request)
    // before reading the answer, one request per connection: quick-ack mode answers the first
    // exchanges at once, so without -T they are not counted, and with -T they are fast
    for v in ["py-tls-each", "py-tls-once"] {
        for set in SETS {
            let r = analyze(&[&lab_variant("reopen-churn", v, set)]);
            assert!(findings(&r, DET).is_empty(), "{v}.{set}: {:#?}", findings(&r, DET));
        }
    }
}

#[test]
fn the_slow_server_really_is_as_slow() {
    // the near miss's round trips cluster where Nagle's do: only the second write tells them apart
    let r = analyze(&[&lab_variant(LAB, "near-slow-server", "f-tt-T-yy")]);
    let read = syscall(&r, "read");
    assert!(read.p50_s.unwrap_or(0.0) > 0.040, "{read:?}");
}

#[test]
fn live_two_writes_and_writev_under_strace() {
    need(&["strace", "cc", "python3"]);
    let run = |variant: &str| live_lab(LAB, variant, &["-f", "-tt", "-T", "-yy"], &[("REQUESTS", "40")]);
    let f = only(DET, &run("c-two-writes"), "live c-two-writes");
    assert_eq!(f.severity, Severity::Warning, "{f:#?}");
    assert!(metric(&f, "delayed_requests") >= 35.0, "{f:#?}");
    assert!(findings(&run("c-writev"), DET).is_empty());
}
