//! reopen-churn (SL015) on the lab traces (lab/reopen-churn: a Python config read per request, a
//! /proc file read per sample in C, Python's ssl.create_default_context() per HTTPS request, Node's
//! fs.appendFileSync per request, and their fixes; strace 6.1, recorded by record.sh) and live:
//! run.sh under strace again.

use crate::common::*;
use syslint_report::Severity;

const LAB: &str = "reopen-churn";
const DET: &str = "reopen-churn";
/// -f -tt -T -yy, -f -tt, -f
const SETS: &[&str] = &["f-tt-T-yy", "f-tt", "f"];

#[test]
fn a_ca_bundle_per_connection_is_a_warning() {
    for set in SETS {
        let ctx = format!("py-tls-each.{set}");
        let f = only(DET, &analyze(&[&lab_variant(LAB, "py-tls-each", set)]), &ctx);
        assert_eq!(f.severity, Severity::Warning, "{ctx}");
        // 100 contexts: the system bundle and the lab's certificate, each loaded 100 times
        assert_eq!(metric(&f, "reopens"), 198.0, "{ctx}");
        assert_eq!(metric(&f, "hot_files"), 2.0, "{ctx}");
        assert_eq!(metric(&f, "top_file_reopens"), 99.0, "{ctx}");
        // 99 x 219,597 bytes of the bundle, and the certificate
        assert!(metric(&f, "bytes_reread") > 99.0 * 219_597.0, "{ctx}");
        let top = f.metrics["top_files"][0].as_str().unwrap_or("");
        // with -yy the file, without it the path opened (a symlink to it)
        assert!(top == "/etc/ssl/certs/ca-certificates.crt" || top == "/usr/lib/ssl/cert.pem", "{ctx}: {top}");
        assert!(f.fix.contains("SSLContext") && f.fix.contains("pread"), "{ctx}");
    }
}

#[test]
fn a_config_a_proc_file_and_a_log_reopened_per_request_are_info() {
    for (variant, reopens, file) in [
        ("py-config-each", 3000.0, "app.json"),
        ("c-proc-reopen", 4999.0, "/stat"),
        ("node-append-each", 2999.0, "access.log"),
    ] {
        for set in SETS {
            let ctx = format!("{variant}.{set}");
            let f = only(DET, &analyze(&[&lab_variant(LAB, variant, set)]), &ctx);
            // a few thousand reopens cost milliseconds: info (a warning from 10,000)
            assert_eq!(f.severity, Severity::Info, "{ctx}");
            assert_eq!(metric(&f, "reopens"), reopens, "{ctx}");
            assert_eq!(metric(&f, "hot_files"), 1.0, "{ctx}");
            assert!(f.metrics["top_files"][0].as_str().unwrap_or("").ends_with(file), "{ctx}: {:?}", f.metrics);
            assert_eq!(f.metrics.contains_key("seconds"), set.contains('T'), "{ctx}");
        }
    }
}

#[test]
fn fixes_and_near_misses_are_quiet() {
    for variant in
        ["py-config-once", "c-proc-pread", "py-tls-once", "node-append-once", "near-py-config-reload", "near-git"]
    {
        for set in SETS {
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert!(findings(&r, DET).is_empty(), "{variant}.{set}: {:#?}", findings(&r, DET));
        }
    }
}

#[test]
fn sqlite_journals_and_directory_fsyncs_are_not_reopens() {
    // fsync-storm's autocommit lab: the journal is created and deleted per transaction and the
    // directory opened to be fsynced per commit: new files and durability, not re-reading
    for v in ["sqlite-cli-autocommit", "sqlite-py-autocommit"] {
        let r = analyze(&[&lab_variant("fsync-storm", v, "f-tt-T-yy")]);
        assert!(findings(&r, DET).is_empty(), "{v}: {:#?}", findings(&r, DET));
    }
}

#[test]
fn live_proc_sampling_under_strace() {
    need(&["strace", "cc", "bash"]);
    let run = |variant: &str| live_lab(LAB, variant, &["-f", "-tt", "-T", "-yy"], &[("SAMPLES", "1500")]);
    let f = only(DET, &run("c-proc-reopen"), "live c-proc-reopen");
    assert_eq!(f.severity, Severity::Info, "{f:#?}");
    assert_eq!(metric(&f, "reopens"), 1499.0);
    assert!(findings(&run("c-proc-pread"), DET).is_empty());
}

/// Issue 27: "sent to sockets (a file served per request)" was said of /etc/hosts, which glibc
/// reads again for each lookup of a program that also sends responses. A file is served when
/// what the program sends is about what it read again; 144 KiB of /etc/hosts beside 24 MiB of
/// responses is not (lab/reopen-churn/hosts.py: a lookup and an 8 KiB response per request).
#[test]
fn a_file_read_again_beside_larger_responses_is_not_served() {
    for set in ["f-tt-T-yy", "f-tt", "f"] {
        let ctx = format!("near-py-hosts-per-request.{set}");
        let r = analyze(&[&lab_variant("reopen-churn", "near-py-hosts-per-request", set)]);
        let f = findings(&r, "reopen-churn");
        assert_eq!(f.len(), 1, "{ctx}: {:#?}", r.findings);
        assert!(
            f[0].message.contains("/etc/hosts") && !f[0].message.contains("sent to sockets"),
            "{ctx}: {}",
            f[0].message
        );
        assert_eq!(metric(f[0], "bytes_served"), 0.0, "{ctx}");
        assert!(metric(f[0], "reopens") >= 2900.0, "{ctx}");
    }
}
