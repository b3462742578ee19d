//! memory-map-churn (SL022) on the lab traces (lab/memory-map-churn: req.c and req.py under
//! strace 6.1, recorded by record.sh), and live: run.sh under strace again.

use crate::common::*;
use syslint_report::Severity;

const LAB: &str = "memory-map-churn";
const DET: &str = "memory-map-churn";
/// -f -tt -T -yy, -f -tt, -f
const SETS: &[&str] = &["f-tt-T-yy", "f-tt", "f"];

#[test]
fn a_large_buffer_per_request_fires_in_c_and_python() {
    // (variant, via, program, block: 64 MiB and glibc's page of chunk header, or the heap's 64 MiB);
    // 30 requests: 29 take back what the one before released
    for (variant, via, program, block) in [
        ("c-64m-each", "mmap/munmap", "req", 67_112_960.0),
        ("c-64m-nommap", "brk", "req", 67_112_960.0),
        ("py-64m-each", "mmap/munmap", "python3", 67_112_960.0),
    ] {
        for set in SETS {
            let ctx = format!("{variant}.{set}");
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert_eq!(r.findings.len(), 1, "{ctx}: only this detector fires: {:#?}", r.findings);
            let f = only(DET, &r, &ctx);
            assert_eq!(f.severity, Severity::Warning, "{ctx}: {f:#?}");
            assert_eq!(metric(&f, "cycles"), 29.0, "{ctx}");
            assert!((metric(&f, "block_bytes") - block).abs() <= 8192.0, "{ctx}: {f:#?}");
            assert!(metric(&f, "churned_bytes") >= 29.0 * 64.0 * 1048576.0, "{ctx}: {f:#?}");
            assert_eq!(f.metrics["via"], via, "{ctx}");
            assert!(metric(&f, "page_faults_min") >= 29.0 * 16384.0, "{ctx}");
            assert!(f.subject.contains(&format!("({program})")), "{ctx}: {}", f.subject);
            assert_eq!(f.metrics.contains_key("syscall_seconds"), set.contains('T'), "{ctx}");
            assert!(f.fix.contains("GLIBC_TUNABLES") && f.fix.contains("reuse the buffer"), "{ctx}");
        }
    }
}

#[test]
fn a_fixed_mmap_threshold_churns_256_kib_blocks_at_info() {
    // GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072 turns the dynamic threshold off: 1000
    // requests, an mmap and a munmap each; 254 MiB churned, under warn_bytes
    for set in SETS {
        let ctx = format!("c-256k-fixed.{set}");
        let f = only(DET, &analyze(&[&lab_variant(LAB, "c-256k-fixed", set)]), &ctx);
        assert_eq!(f.severity, Severity::Info, "{ctx}: {f:#?}");
        assert_eq!(metric(&f, "cycles"), 999.0, "{ctx}");
        assert_eq!(metric(&f, "block_bytes"), 266_240.0, "{ctx}");
    }
}

#[test]
fn reuse_tuned_tunables_and_the_dynamic_threshold_are_quiet() {
    for variant in ["c-64m-reuse", "c-64m-tuned", "c-256k-each", "py-64m-reuse"] {
        for set in SETS {
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert!(r.findings.is_empty(), "{variant}.{set}: {:#?}", r.findings);
        }
    }
}

#[test]
fn live_buffer_per_request_under_strace() {
    need(&["strace", "cc", "bash"]);
    let run = |variant: &str| live_lab(LAB, variant, &["-f", "-tt", "-T", "-yy"], &[]);
    let f = only(DET, &run("c-64m-each"), "live c-64m-each");
    assert_eq!(f.severity, Severity::Warning, "{f:#?}");
    assert_eq!(metric(&f, "cycles"), 29.0, "{f:#?}");
    assert!(findings(&run("c-64m-reuse"), DET).is_empty());
    assert!(findings(&run("c-256k-each"), DET).is_empty());
}
