//! clock-syscalls (SL011) on the lab traces (lab/clock-syscalls: clock.c and cputime.py under
//! strace 6.1, recorded by record.sh), on a real log posted by someone else (an Android zygote
//! on a kernel without a vDSO for ARM32), and live: run.sh under strace again.

use crate::common::*;
use syslint_report::Severity;

const LAB: &str = "clock-syscalls";
const DET: &str = "clock-syscalls";
/// -f -tt -T -yy, -f -tt, -f
const SETS: &[&str] = &["f-tt-T-yy", "f-tt", "f"];

#[test]
fn clock_reads_that_bypass_the_vdso_are_a_warning() {
    for set in SETS {
        let ctx = format!("c-syscall.{set}");
        let path = lab_variant(LAB, "c-syscall", set);
        let r = analyze(&[&path]);
        assert_eq!(r.findings.len(), 1, "{ctx}: only this detector fires: {:#?}", r.findings);
        let f = only(DET, &r, &ctx);
        assert_eq!(f.severity, Severity::Warning, "{ctx}: {f:#?}");
        // 3,000 items, two reads each: every one counted, whatever the flags
        let in_text = read_text(&path).lines().filter(|l| l.contains(" clock_gettime(CLOCK_MONOTONIC,")).count();
        assert_eq!(in_text, 6000, "{ctx}");
        assert_eq!(metric(&f, "calls"), 6000.0, "{ctx}");
        assert_eq!(metric(&f, "vdso_clock_calls"), 6000.0, "{ctx}");
        assert_eq!(metric(&f, "cpu_clock_calls"), 0.0, "{ctx}");
        assert!(metric(&f, "share_of_calls") > 0.99, "{ctx}");
        assert_eq!(metric(&f, "processes"), 1.0, "{ctx}");
        assert!(f.message.contains("clock_gettime(CLOCK_MONOTONIC)"), "{ctx}: {}", f.message);
        assert_eq!(f.metrics.contains_key("calls_per_sec"), set.contains("tt"), "{ctx}");
        assert_eq!(f.metrics.contains_key("seconds"), set.contains('T'), "{ctx}");
        assert!(f.fix.contains("tsc") && f.fix.contains("COARSE"), "{ctx}");
        assert!(f.evidence.iter().all(|e| e == "..." || e.contains("clock_gettime(CLOCK_MONOTONIC")), "{ctx}");
    }
}

#[test]
fn the_vdso_and_a_few_kernel_reads_are_quiet() {
    for variant in ["c-vdso", "c-few"] {
        for set in SETS {
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert!(r.findings.is_empty(), "{variant}.{set}: {:#?}", r.findings);
        }
    }
}

#[test]
fn cpu_time_clocks_are_info_at_most() {
    // time.process_time() per item: a clock only the kernel reads; busy-poll no longer takes
    // these reads for a spin (clock reads are clock-syscalls' alone)
    for set in SETS {
        let ctx = format!("py-cputime.{set}");
        let r = analyze(&[&lab_variant(LAB, "py-cputime", set)]);
        assert_eq!(r.findings.len(), 1, "{ctx}: {:#?}", r.findings);
        let f = only(DET, &r, &ctx);
        assert_eq!(f.severity, Severity::Info, "{ctx}");
        assert_eq!(metric(&f, "cpu_clock_calls"), 6000.0, "{ctx}");
        assert_eq!(metric(&f, "vdso_clock_calls"), 0.0, "{ctx}");
        assert!(f.message.contains("CLOCK_PROCESS_CPUTIME_ID") && f.message.contains("only the kernel"), "{ctx}");
    }
}

#[test]
#[cfg_attr(not(syslint_corpus), ignore = "needs ../shared/strace-corpus beside the checkout")]
fn an_android_zygote_without_a_vdso_is_info() {
    let r = analyze(&[&corpus_dir().join("android-arm32-zygote-app_process-tt-killed.strace")]);
    let f = only(DET, &r, "android zygote");
    assert_eq!(f.severity, Severity::Info);
    assert_eq!(metric(&f, "vdso_clock_calls"), 982.0);
    assert!(f.message.contains("clock_gettime(CLOCK_MONOTONIC)") && f.message.contains("gettimeofday"));
}

#[test]
fn live_clock_reads_under_strace() {
    need(&["strace", "cc", "bash"]);
    let run = |variant: &str| live_lab(LAB, variant, &["-f", "-tt", "-T", "-yy"], &[]);
    let f = only(DET, &run("c-syscall"), "live c-syscall");
    assert_eq!(f.severity, Severity::Warning, "{f:#?}");
    assert_eq!(metric(&f, "vdso_clock_calls"), 6000.0);
    assert!(findings(&run("c-vdso"), DET).is_empty());
}
