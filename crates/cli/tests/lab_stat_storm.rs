//! stat-storm (SL014) on the lab traces (lab/stat-storm: PHP 8.2 with and without its realpath
//! cache, a C logger calling localtime() with and without TZ, git status; strace 6.1, recorded
//! by record.sh) and live: run.sh under strace again.

use crate::common::*;
use syslint_report::Severity;

const LAB: &str = "stat-storm";
const DET: &str = "stat-storm";
/// -f -tt -T -yy, -f -tt, -f
const SETS: &[&str] = &["f-tt-T-yy", "f-tt", "f"];

#[test]
fn php_without_its_realpath_cache_is_a_warning() {
    for set in SETS {
        let ctx = format!("php-nocache.{set}");
        let r = analyze(&[&lab_variant(LAB, "php-nocache", set)]);
        // besides this one, only reopen-churn's info: without opcache PHP opens and compiles each
        // include again per request (in php-cache too)
        let others: Vec<_> = r.findings.iter().filter(|f| f.detector != DET).collect();
        assert!(
            others.iter().all(|f| f.detector == "reopen-churn" && f.severity == Severity::Info),
            "{ctx}: {others:#?}"
        );
        let f = only(DET, &r, &ctx);
        assert_eq!(f.severity, Severity::Warning, "{ctx}");
        // 300 requests x 8 includes x 11 components (/tmp, the lab dir, src, ..., partN.php)
        assert_eq!(metric(&f, "lookups"), 24_639.0, "{ctx}");
        assert_eq!(metric(&f, "hot_paths"), 17.0, "{ctx}");
        assert_eq!(metric(&f, "repeated"), 23_987.0, "{ctx}");
        assert_eq!(metric(&f, "top_path_lookups"), 2402.0, "{ctx}");
        assert!(metric(&f, "share_of_calls") > 0.7, "{ctx}");
        assert_eq!(f.metrics.contains_key("seconds"), set.contains('T'), "{ctx}");
        assert_eq!(f.fix_for.as_deref(), Some("PHP"), "{ctx}");
        assert!(f.fix.contains("realpath_cache_size"), "{ctx}: {}", f.fix);
        assert!(f.fix_elsewhere.as_deref().is_some_and(|g| g.contains("TZ")), "{ctx}");
        assert!(f.evidence.iter().any(|e| e.contains("newfstatat")), "{ctx}: {:#?}", f.evidence);
    }
}

#[test]
fn localtime_without_tz_is_a_warning() {
    for set in SETS {
        let ctx = format!("c-localtime.{set}");
        let r = analyze(&[&lab_variant(LAB, "c-localtime", set)]);
        assert_eq!(r.findings.len(), 1, "{ctx}: {:#?}", r.findings);
        let f = only(DET, &r, &ctx);
        assert_eq!(f.severity, Severity::Warning, "{ctx}");
        // 25,000 calls: the first opens /etc/localtime, each later one stats it
        assert_eq!(metric(&f, "lookups"), 24_999.0, "{ctx}");
        assert_eq!(metric(&f, "distinct_paths"), 1.0, "{ctx}");
        assert_eq!(f.metrics["top_paths"][0], "/etc/localtime", "{ctx}");
        assert!(f.message.contains("/etc/localtime"), "{ctx}: {}", f.message);
    }
}

#[test]
fn the_cache_tz_git_status_and_a_short_logger_are_quiet() {
    for variant in ["php-cache", "c-tz", "near-git-status", "near-localtime-few"] {
        for set in SETS {
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert!(findings(&r, DET).is_empty(), "{variant}.{set}: {:#?}", r.findings);
            // and no other detector mistakes them for anything
            assert!(r.findings.iter().all(|f| f.severity < Severity::Warning), "{variant}.{set}: {:#?}", r.findings);
        }
    }
    // git status looked at thousands of paths, each about twice: a scan, not a storm
    let r = analyze(&[&lab_variant(LAB, "near-git-status", "f-tt")]);
    assert!(syscall(&r, "newfstatat").calls > 3000, "{:?}", syscall(&r, "newfstatat"));
}

#[test]
fn live_localtime_under_strace() {
    need(&["strace", "cc", "bash"]);
    let run = |variant: &str| live_lab(LAB, variant, &["-f", "-tt", "-T", "-yy"], &[("LINES", "6000")]);
    let f = only(DET, &run("c-localtime"), "live c-localtime");
    assert_eq!(f.severity, Severity::Info, "6,000 lines: under warn_repeated {f:#?}");
    assert_eq!(metric(&f, "lookups"), 5999.0);
    assert!(findings(&run("c-tz"), DET).is_empty());
}

/// Issue 15: "npm: 17,860 failing mkdir with EEXIST; only ENOENT storms are covered". A mkdir of
/// a directory that exists found it: a successful lookup, counted with the stats.
#[test]
fn a_directory_made_before_every_file_is_info() {
    for set in SETS {
        let ctx = format!("node-mkdir-each.{set}");
        let f = only(DET, &analyze(&[&lab_variant("stat-storm", "node-mkdir-each", set)]), &ctx);
        // fs.mkdirSync(dir, {recursive: true}) before each of 3,000 files: the first creates the
        // tree, each later one is a mkdir = EEXIST and a statx of the same directory
        assert_eq!(f.severity, Severity::Info, "{ctx}: a few ms of lookups");
        assert_eq!(metric(&f, "mkdir_eexist"), 2999.0, "{ctx}");
        assert_eq!(metric(&f, "top_path_lookups"), 5998.0, "{ctx}");
        assert!(
            f.metrics["top_paths"][0].as_str().unwrap_or("").ends_with("/node_modules/@scope/pkg/lib/util"),
            "{ctx}"
        );
        assert!(f.message.contains("mkdir of a directory that exists"), "{ctx}: {}", f.message);
        // made once: quiet
        let r = analyze(&[&lab_variant("stat-storm", "node-mkdir-once", set)]);
        assert!(findings(&r, "stat-storm").is_empty(), "node-mkdir-once.{set}: {:#?}", findings(&r, "stat-storm"));
    }
    // npm itself installing a local tarball of 300 files offline (recorded with -e
    // trace=%file,%process: the full trace is 1.2 MB compressed): its extraction makes each
    // directory of every file's path again, 2,650 EEXIST in all
    let f = only(DET, &analyze(&[&lab_variant("stat-storm", "npm-install", "f-tt-T-yy-efile")]), "npm-install");
    assert_eq!(f.severity, Severity::Info);
    assert_eq!(metric(&f, "mkdir_eexist"), 2650.0);
    assert!(metric(&f, "hot_paths") > 50.0, "{:?}", f.metrics);
    // and failed-lookup-storm does not count them (EEXIST is no missing path)
    let r = analyze(&[&lab_variant("stat-storm", "npm-install", "f-tt-T-yy-efile")]);
    assert!(findings(&r, "failed-lookup-storm").is_empty(), "{:#?}", findings(&r, "failed-lookup-storm"));
}

#[test]
fn live_node_mkdir_under_strace() {
    need(&["strace", "node", "bash"]);
    let out = std::env::temp_dir().join(format!("syslint-live-stat-storm-node-{}.strace", std::process::id()));
    let run = |variant: &str| {
        let o = std::process::Command::new("bash")
            .arg(root().join("lab/stat-storm/run.sh"))
            .arg(variant)
            .arg(&out)
            .args(["-f", "-tt", "-T", "-yy"])
            .env("FILES", "2600")
            .output()
            .expect("run.sh");
        assert!(o.status.success(), "run.sh {variant}: {}", stderr(&o));
        let r = analyze(&[&out]);
        std::fs::remove_file(&out).ok();
        r
    };
    let f = only(DET, &run("node-mkdir-each"), "live node-mkdir-each");
    assert_eq!(metric(&f, "mkdir_eexist"), 2599.0, "{f:#?}");
    assert!(findings(&run("node-mkdir-once"), "stat-storm").is_empty());
}
