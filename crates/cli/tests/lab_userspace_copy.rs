//! userspace-copy (SL018) on the lab traces (lab/userspace-copy: a C and a Python file server
//! copying a 4 MiB file to each connection with read+write, their sendfile versions, and near
//! misses: TLS, gzip, a 4 KiB file; strace 6.1, recorded by record.sh), on nginx attached with
//! eBPF with `sendfile off` and `on` (tests/fixtures/servers), and live: run.sh under strace.

use crate::common::*;
use syslint_report::Severity;

const LAB: &str = "userspace-copy";
const DET: &str = "userspace-copy";
/// -f -tt -T -yy, -f -tt, -f
const SETS: &[&str] = &["f-tt-T-yy", "f-tt", "f"];
const MIB: f64 = 1048576.0;

#[test]
fn file_servers_copying_through_user_space_are_a_warning() {
    for variant in ["c-readwrite", "py-sendall"] {
        for set in SETS {
            let ctx = format!("{variant}.{set}");
            let f = only(DET, &analyze(&[&lab_variant(LAB, variant, set)]), &ctx);
            assert_eq!(f.severity, Severity::Warning, "{ctx}");
            // 80 requests of 4 MiB (Python's 12-byte headers also use up bytes it read at start-up)
            let copied = metric(&f, "copied_bytes");
            assert!((320.0 * MIB..320.0 * MIB + 4096.0).contains(&copied), "{ctx}: {copied}");
            assert!(metric(&f, "copy_share") > 0.99, "{ctx}");
            assert!(f.metrics["top_files"][0].as_str().unwrap_or("").ends_with("page.txt"), "{ctx}: {:?}", f.metrics);
            assert_eq!(f.metrics.contains_key("seconds"), set.contains('T'), "{ctx}");
            let all = format!("{} {}", f.fix, f.fix_elsewhere.as_deref().unwrap_or(""));
            assert!(all.contains("sendfile on") && all.contains("socket.sendfile"), "{ctx}: {all}");
        }
    }
}

#[test]
fn sendfile_tls_compression_and_a_small_file_are_quiet() {
    for variant in ["c-sendfile", "py-sendfile", "near-py-tls", "near-py-gzip", "near-c-small"] {
        for set in SETS {
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert!(findings(&r, DET).is_empty(), "{variant}.{set}: {:#?}", findings(&r, DET));
        }
    }
}

#[test]
fn nginx_sendfile_off_is_a_warning_and_on_is_quiet() {
    // tests/fixtures/servers/record-nginx.sh: 1 MiB files at 300 requests/s, attached 1 s
    let f = only(DET, &analyze(&[&root().join("tests/fixtures/servers/nginx-BEFORE.slr")]), "nginx sendfile off");
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(metric(&f, "copied_bytes"), 282.0 * 1048576.0);
    assert_eq!(metric(&f, "writes"), 9024.0);
    assert!(f.metrics["top_files"][0].as_str().unwrap_or("").ends_with("/www/page.bin"), "{:?}", f.metrics);
    assert!(f.cost.as_deref().unwrap_or("").contains("measured with eBPF"), "{:?}", f.cost);
    for after in ["nginx-AFTER.slr", "nginx-AFTER-4-WORKERS.slr"] {
        let r = analyze(&[&root().join("tests/fixtures/servers").join(after)]);
        assert!(findings(&r, DET).is_empty(), "{after}: {:#?}", findings(&r, DET));
    }
}

#[test]
fn live_file_server_under_strace() {
    need(&["strace", "cc", "bash"]);
    let run = |variant: &str| live_lab(LAB, variant, &["-f", "-tt", "-T", "-yy"], &[("REQUESTS", "10")]);
    let f = only(DET, &run("c-readwrite"), "live c-readwrite");
    assert_eq!(metric(&f, "copied_bytes"), 40.0 * MIB, "{f:#?}");
    assert_eq!(f.severity, Severity::Info, "40 MiB: under warn_bytes");
    assert!(findings(&run("c-sendfile"), DET).is_empty());
}
