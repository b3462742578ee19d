//! failed-lookup-storm (SL007) on the lab traces (lab/failed-lookup-storm: real programs under
//! strace 6.1, recorded by record.sh) and live: run.sh under strace again and compare.

use crate::common::*;
use std::path::PathBuf;
use syslint_report::{Finding, Report, Severity};

const LAB: &str = "failed-lookup-storm";
const DET: &str = "failed-lookup-storm";
/// -f -tt -T -yy, -f -tt, -f
const SETS: &[&str] = &["f-tt-T-yy", "f-tt", "f"];

fn trace(variant: &str, set: &str) -> PathBuf {
    lab_variant(LAB, variant, set)
}

fn top_dir(f: &Finding) -> String {
    f.metrics
        .get("top_dirs")
        .and_then(|v| v.as_array())
        .and_then(|a| a.first())
        .and_then(|d| d.as_str())
        .unwrap_or("")
        .into()
}

/// Durations are reported with -T and never without timestamps (with -tt alone strace's
/// unfinished/resumed pairs of a multi-process trace may time most calls).
fn check_timing(f: &Finding, set: &str, ctx: &str) {
    let timed = f.metrics.contains_key("failed_time_s");
    if set.contains('T') {
        assert!(timed, "{ctx}: -T gives failed_time_s");
    }
    if !set.contains("tt") {
        assert!(!timed, "{ctx}: no durations without timestamps");
    }
    if timed {
        assert!(metric(f, "failed_time_s") > 0.0, "{ctx}");
        assert!(f.cost.as_deref().unwrap_or("").contains("measured"), "{ctx}: {:?}", f.cost);
    } else {
        assert!(f.cost.as_deref().unwrap_or("").contains("time unknown"), "{ctx}: {:?}", f.cost);
    }
    assert_eq!(f.metrics.contains_key("failed_per_sec"), set.contains("tt"), "{ctx}: rate iff timestamps");
    assert!(f.window.is_some() == set.contains("tt"), "{ctx}: window iff timestamps");
}

/// PHP with 30 missing directories in front of lib/ in include_path, 50 requests of 10
/// includes by bare name: 500 searches of 30 misses each (plus PHP's own start-up: 3 misses,
/// one of them a search of 1).
fn check_php_bad(f: &Finding, ctx: &str) {
    assert_eq!(f.severity, Severity::Warning, "{ctx}");
    assert!(f.subject.ends_with("(php)"), "{ctx}: {}", f.subject);
    assert_eq!(metric(f, "failed_lookups"), 15003.0, "{ctx}");
    assert_eq!(metric(f, "searches"), 501.0, "{ctx}");
    assert_eq!(metric(f, "search_misses"), 15001.0, "{ctx}");
    assert_eq!(metric(f, "avoidable_lookups"), 15001.0, "{ctx}");
    assert!((metric(f, "avg_misses_per_search") - 15001.0 / 501.0).abs() < 1e-3, "{ctx}");
    // 30 vendor dirs x 10 names + 3 start-up misses; each tried 50 times
    assert_eq!(metric(f, "distinct_failed_paths"), 303.0, "{ctx}");
    assert_eq!(metric(f, "repeated_failures"), 14700.0, "{ctx}");
    assert!((metric(f, "repeats_per_path") - 15003.0 / 303.0).abs() < 1e-3, "{ctx}");
    assert_eq!(metric(f, "processes"), 1.0, "{ctx}");
    // 500 includes open their file; ~30 failed lookups per successful open
    assert!((500.0..600.0).contains(&metric(f, "successful_opens")), "{ctx}");
    assert!(metric(f, "failed_per_open") > 25.0, "{ctx}");
    assert!(metric(f, "share_of_calls") > 0.8, "{ctx}");
    assert_eq!(metric(f, "dirs_with_failures"), 33.0, "{ctx}");
    assert!(top_dir(f).contains("/vendor/pkg"), "{ctx}: {}", top_dir(f));
    assert!(f.message.starts_with("15003 failed lookups (ENOENT), 15001 avoidable: 501 searches missed 29.9"), "{ctx}");
    assert!(f.fix.contains("__DIR__") && f.fix.contains("include_path") && f.fix.contains("realpath_cache_size"));
    // evidence: the first search, its first misses, its last miss and the hit
    let ev = &f.evidence;
    assert_eq!(ev.len(), 5, "{ctx}: {ev:#?}");
    assert!(ev[0].contains("/vendor/pkg0/src/part0.php\"") && ev[0].contains("= -1 ENOENT"), "{ctx}: {ev:#?}");
    assert!(ev[1].contains("/vendor/pkg1/src/part0.php\"") && ev[1].contains("= -1 ENOENT"), "{ctx}: {ev:#?}");
    assert_eq!(ev[2], "...");
    assert!(ev[3].contains("/vendor/pkg29/src/part0.php\"") && ev[3].contains("= -1 ENOENT"), "{ctx}: {ev:#?}");
    assert!(ev[4].contains("/lib/part0.php\"") && ev[4].contains(") = 0"), "{ctx}: the hit {ev:#?}");
}

#[test]
fn php_include_path_search_is_a_warning() {
    for set in SETS {
        // the same with opcache on and a 64M realpath cache: neither stops the misses
        for variant in ["php-include-bad", "php-include-caches"] {
            let ctx = format!("{variant}.{set}");
            let r = analyze(&[&trace(variant, set)]);
            let f = only(DET, &r, &ctx);
            check_php_bad(&f, &ctx);
            check_timing(&f, set, &ctx);
        }
    }
}

#[test]
fn c_search_path_in_four_workers_is_one_warning() {
    for set in SETS {
        let ctx = format!("c-search-bad.{set}");
        let r = analyze(&[&trace("c-search-bad", set)]);
        let f = only(DET, &r, &ctx);
        // 4 workers x 20 requests x 8 names x 24 missing directories, + the loader's one miss
        assert_eq!(f.severity, Severity::Warning, "{ctx}");
        assert!(f.subject.starts_with("5 processes of search (pids "), "{ctx}: {}", f.subject);
        assert_eq!(metric(&f, "processes"), 5.0, "{ctx}");
        assert_eq!(metric(&f, "failed_lookups"), 15361.0, "{ctx}");
        assert_eq!(metric(&f, "searches"), 640.0, "{ctx}");
        assert_eq!(metric(&f, "search_misses"), 15360.0, "{ctx}");
        assert_eq!(metric(&f, "avg_misses_per_search"), 24.0, "{ctx}");
        assert_eq!(metric(&f, "distinct_failed_paths"), 193.0, "{ctx}");
        assert_eq!(metric(&f, "repeated_failures"), 15168.0, "{ctx}");
        assert_eq!(metric(&f, "successful_opens"), 642.0, "{ctx}");
        assert_eq!(metric(&f, "dirs_with_failures"), 25.0, "{ctx}");
        assert!(top_dir(&f).ends_with("/inc0"), "{ctx}: {}", top_dir(&f));
        assert!(metric(&f, "share_of_calls") > 0.8, "{ctx}");
        check_timing(&f, set, &ctx);
    }
}

#[test]
fn python_subprocess_path_search_is_info() {
    for set in SETS {
        let ctx = format!("py-spawn-bad.{set}");
        let r = analyze(&[&trace("py-spawn-bad", set)]);
        let f = only(DET, &r, &ctx);
        // 60 spawns, each child tries execve in 30 missing PATH directories before /usr/bin:
        // the vfork children count with python3, the program that searched
        assert_eq!(f.severity, Severity::Info, "{ctx}: 1800 misses cost milliseconds");
        assert!(f.subject.starts_with("61 processes of python3"), "{ctx}: {}", f.subject);
        assert_eq!(metric(&f, "processes"), 61.0, "{ctx}");
        assert!((1800.0..1900.0).contains(&metric(&f, "failed_lookups")), "{ctx}");
        assert!((60.0..70.0).contains(&metric(&f, "searches")), "{ctx}");
        assert!(metric(&f, "avg_misses_per_search") > 28.0, "{ctx}");
        assert!(top_dir(&f).contains("/bin"), "{ctx}: {}", top_dir(&f));
        assert!(f.evidence[0].contains("/bin0/true\"") && f.evidence[0].contains("= -1 ENOENT"), "{ctx}");
        assert!(
            f.evidence.last().is_some_and(|e| e.contains("execve(\"/usr/bin/true\"") && e.contains(") = 0")),
            "{ctx}"
        );
    }
}

/// GOOD variants and near-misses: no finding at all from this detector, and no warning from
/// any detector.
#[test]
fn good_and_near_miss_traces_are_quiet() {
    for variant in [
        "php-include-good",
        "php-include-short",
        "c-search-good",
        "py-spawn-good",
        "near-py-imports",
        "near-py-json",
        "near-gcc",
        "near-ls",
    ] {
        for set in SETS {
            let ctx = format!("{variant}.{set}");
            let r = analyze(&[&trace(variant, set)]);
            assert!(findings(&r, DET).is_empty(), "{ctx}: {:#?}", findings(&r, DET));
            assert!(r.findings.iter().all(|f| f.severity < Severity::Warning), "{ctx}: {:#?}", r.findings);
        }
    }
}

/// The thresholds are real: lowering them makes the near-misses report their few misses,
/// raising them silences the lab, and warn_avoidable moves the severity.
#[test]
fn thresholds_come_from_the_config() {
    let dir = std::env::temp_dir().join(format!("syslint-fls-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = |name: &str, body: &str| {
        let p = dir.join(name);
        std::fs::write(&p, body).unwrap();
        p
    };
    let json = |cfg: &std::path::Path, t: &std::path::Path| {
        let o = run(&["analyze", "--format", "json", "--config", cfg.to_str().unwrap(), t.to_str().unwrap()]);
        assert!(o.status.code().is_some_and(|c| c <= 1), "{}", stderr(&o));
        parse_report(&stdout(&o)).unwrap()
    };
    let low = cfg("low.toml", "[failed-lookup-storm]\nmin_avoidable = 1\nmin_failed_per_open = 0.0\n");
    let r = json(&low, &trace("near-gcc", "f-tt-T-yy"));
    let cc1: Vec<_> = findings(&r, DET).into_iter().filter(|f| f.subject.ends_with("(cc1)")).collect();
    assert_eq!(cc1.len(), 1, "{:#?}", r.findings);
    assert_eq!(cc1[0].severity, Severity::Info);
    assert!(metric(cc1[0], "failed_lookups") < 200.0, "a compiler probes a few include directories");
    let high = cfg("high.toml", "[failed-lookup-storm]\nwarn_avoidable = 100000\n");
    let f = only(DET, &json(&high, &trace("php-include-bad", "f")), "warn_avoidable = 100000");
    assert_eq!(f.severity, Severity::Info);
    // a storm is fast: with timestamps the rate is checked, without it cannot be
    let slow = cfg("slow.toml", "[failed-lookup-storm]\nwarn_per_sec = 1000000.0\n");
    assert_eq!(only(DET, &json(&slow, &trace("php-include-bad", "f-tt")), "slow tt").severity, Severity::Info);
    assert_eq!(only(DET, &json(&slow, &trace("php-include-bad", "f")), "slow f").severity, Severity::Warning);
    let off = cfg("off.toml", "[SL007]\nmin_avoidable = 20000\n");
    assert!(findings(&json(&off, &trace("php-include-bad", "f")), DET).is_empty());
    let bad = cfg("bad.toml", "[failed-lookup-storm]\nno_such_option = 1\n");
    let o = run(&["analyze", "--config", bad.to_str().unwrap(), trace("php-include-bad", "f").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "unknown options are errors");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn explain_documents_it() {
    for key in ["failed-lookup-storm", "SL007", "sl007"] {
        let o = run(&["explain", key]);
        assert!(o.status.success(), "{}", stderr(&o));
        let t = stdout(&o);
        for needle in ["failed-lookup-storm", "SL007", "include_path", "min_avoidable", "warn_share_of_calls", "ENOENT"]
        {
            assert!(t.contains(needle), "explain {key}: no {needle:?} in\n{t}");
        }
    }
    let t = stdout(&run(&["detectors"]));
    assert!(t.lines().any(|l| l.contains("SL007") && l.contains("failed-lookup-storm")), "{t}");
}

// ------------------------------------------------------------------------------------------
// live: the lab programs under strace now, compared with their recorded traces

fn live(variant: &str, flags: &[&str]) -> Report {
    live_in(variant, flags, &[])
}

/// [`live`] with more environment: another machine's PATH or Python packages.
fn live_in(variant: &str, flags: &[&str], env: &[(&str, String)]) -> Report {
    need(&["strace", "php", "cc", "bash"]);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    live_lab(LAB, variant, flags, &env)
}

fn same_finding(live: &Finding, rec: &Finding, ctx: &str) {
    assert_eq!(live.severity, rec.severity, "{ctx}");
    assert_eq!(metric(live, "processes"), metric(rec, "processes"), "{ctx}: processes");
    // searches include the interpreter's own start-up (a Python's sys.path grows with the .pth
    // files of what the machine has installed: 62 live on one machine against 63 recorded on
    // another), so near the recording; what the workload guarantees is asserted by the callers
    let (a, b) = (metric(live, "searches"), metric(rec, "searches"));
    assert!((a - b).abs() <= 0.05 * b + 3.0, "{ctx}: searches live {a} recorded {b}");
    // the directories probed include what the machine's Python adds to sys.path (.pth files of
    // installed packages: 45 when recorded, 48 with python3-gevent and others installed)
    let (a, b) = (metric(live, "dirs_with_failures"), metric(rec, "dirs_with_failures"));
    assert!((a - b).abs() <= 0.1 * b + 3.0, "{ctx}: dirs_with_failures live {a} recorded {b}");
    for k in ["failed_lookups", "search_misses", "repeated_failures"] {
        let (a, b) = (metric(live, k), metric(rec, k));
        assert!((a - b).abs() <= 0.01 * b + 5.0, "{ctx}: {k} live {a} recorded {b}");
    }
    assert!((metric(live, "avg_misses_per_search") - metric(rec, "avg_misses_per_search")).abs() < 0.5, "{ctx}");
}

#[test]
fn live_php_include_path_matches_the_recording() {
    for (set, flags) in [("f-tt-T-yy", &["-f", "-tt", "-T", "-yy"][..]), ("f", &["-f"][..])] {
        let ctx = format!("live php-include-bad {set}");
        let l = only(DET, &live("php-include-bad", flags), &ctx);
        check_php_bad(&l, &ctx);
        check_timing(&l, set, &ctx);
        same_finding(&l, &only(DET, &analyze(&[&trace("php-include-bad", set)]), &ctx), &ctx);
    }
    assert!(findings(&live("php-include-good", &["-f", "-tt", "-T", "-yy"]), DET).is_empty());
}

#[test]
fn live_c_search_matches_the_recording() {
    let ctx = "live c-search-bad";
    let l = only(DET, &live("c-search-bad", &["-f", "-tt", "-T", "-yy"]), ctx);
    same_finding(&l, &only(DET, &analyze(&[&trace("c-search-bad", "f-tt-T-yy")]), ctx), ctx);
    assert!(findings(&live("c-search-good", &["-f", "-tt"]), DET).is_empty());
}

#[test]
fn live_python_spawn_matches_the_recording() {
    assert!(std::path::Path::new("/usr/bin/python3").exists(), "python3 is missing: scripts/test.sh installs it");
    let ctx = "live py-spawn-bad";
    let l = only(DET, &live("py-spawn-bad", &["-f", "-tt", "-T", "-yy"]), ctx);
    same_finding(&l, &only(DET, &analyze(&[&trace("py-spawn-bad", "f-tt-T-yy")]), ctx), ctx);
    // what spawn.py guarantees whatever the machine has installed: 60 children, each searching
    // PATH's 30 missing directories before /usr/bin, and Python itself
    assert_eq!(metric(&l, "processes"), 61.0, "{ctx}");
    assert!(metric(&l, "searches") >= 60.0, "{ctx}: {l:#?}");
    assert!(metric(&l, "search_misses") >= 60.0 * 30.0, "{ctx}: {l:#?}");
    assert!(metric(&l, "dirs_with_failures") >= 30.0, "{ctx}: {l:#?}");
    // the same guarantees on what stands for a machine with more installed (issue 29: a second
    // machine's Python packages made the old exact count fail there every time): a sys.path six
    // directories longer for every import of Python's start-up, and a longer PATH for run.sh
    let tmp = std::env::temp_dir().join(format!("syslint-more-packages-{}", std::process::id()));
    let dirs: Vec<String> = (0..6).map(|i| tmp.join(format!("site{i}")).display().to_string()).collect();
    for d in &dirs {
        std::fs::create_dir_all(d).expect("site dir");
    }
    let path = format!("{}:/usr/local/games:{}", tmp.join("bin").display(), std::env::var("PATH").unwrap_or_default());
    let env = [("PYTHONPATH", dirs.join(":")), ("PATH", path)];
    let ctx = "live py-spawn-bad, more installed";
    let m = only(DET, &live_in("py-spawn-bad", &["-f", "-tt", "-T", "-yy"], &env), ctx);
    std::fs::remove_dir_all(&tmp).ok();
    assert_eq!(m.severity, l.severity, "{ctx}");
    assert_eq!(metric(&m, "processes"), 61.0, "{ctx}");
    assert!(metric(&m, "searches") >= 60.0, "{ctx}: {m:#?}");
    assert!(metric(&m, "search_misses") >= 60.0 * 30.0, "{ctx}: {m:#?}");
    assert!(metric(&m, "dirs_with_failures") >= 30.0, "{ctx}: {m:#?}");
}
