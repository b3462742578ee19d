//! epoll-ctl-churn (SL013) on the lab traces (lab/epoll-ctl-churn: echo.c and asyncio under
//! strace 6.1, recorded by record.sh), on a real log posted by someone else (uWSGI's fastrouter,
//! 2013), and live: run.sh under strace again.

use crate::common::*;
use syslint_report::Severity;

const LAB: &str = "epoll-ctl-churn";
const DET: &str = "epoll-ctl-churn";
/// -f -tt -T -yy, -f -tt, -f
const SETS: &[&str] = &["f-tt-T-yy", "f-tt", "f"];

#[test]
fn interest_toggled_per_request_is_a_warning_in_c_and_in_asyncio() {
    // (variant, program, epoll_ctl calls on the churning fd)
    for (variant, program, ctl) in [("c-mod", "(echo)", 2001.0), ("py-sock", "(python3)", 2002.0)] {
        for set in SETS {
            let ctx = format!("{variant}.{set}");
            let path = lab_variant(LAB, variant, set);
            let r = analyze(&[&path]);
            assert_eq!(r.findings.len(), 1, "{ctx}: only this detector fires: {:#?}", r.findings);
            let f = only(DET, &r, &ctx);
            assert_eq!(f.severity, Severity::Warning, "{ctx}: {f:#?}");
            // 1,000 requests: two re-registrations each (MOD out and back; asyncio ADD and DEL),
            // one per read or write that moved data
            assert_eq!(metric(&f, "reregistrations"), 2000.0, "{ctx}");
            assert_eq!(metric(&f, "io_ops"), 2000.0, "{ctx}");
            assert_eq!(metric(&f, "epoll_ctl_calls"), ctl, "{ctx}");
            assert_eq!(metric(&f, "fds"), 1.0, "{ctx}");
            assert_eq!(metric(&f, "oneshot_rearms"), 0.0, "{ctx}");
            assert!(f.subject.contains(program), "{ctx}: {}", f.subject);
            assert_eq!(f.metrics.contains_key("epoll_ctl_seconds"), set.contains('T'), "{ctx}");
            assert!(f.fix.contains("EPOLLET") && f.fix.contains("sock_recv"), "{ctx}");
            assert!(f.evidence.iter().any(|e| e.contains("epoll_ctl(")), "{ctx}: {:#?}", f.evidence);
        }
    }
}

#[test]
fn registration_once_is_quiet_and_oneshot_rearms_are_info() {
    for variant in ["c-et", "c-conn", "py-streams"] {
        for set in SETS {
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert!(findings(&r, DET).is_empty(), "{variant}.{set}: {:#?}", r.findings);
        }
    }
    for set in SETS {
        let ctx = format!("c-oneshot.{set}");
        let f = only(DET, &analyze(&[&lab_variant(LAB, "c-oneshot", set)]), &ctx);
        assert_eq!(f.severity, Severity::Info, "{ctx}");
        assert_eq!(metric(&f, "oneshot_rearms"), 1000.0, "{ctx}");
        assert!(f.message.contains("EPOLLONESHOT"), "{ctx}: {}", f.message);
    }
}

#[test]
#[cfg_attr(not(syslint_corpus), ignore = "needs ../shared/strace-corpus beside the checkout")]
fn uwsgi_fastrouter_relaying_4k_chunks_is_a_warning() {
    let r = analyze(&[&corpus_dir().join("uwsgi-fastrouter-2013-strace4-p-f-t-pidcol.strace")]);
    let f = only(DET, &r, "uwsgi fastrouter");
    assert_eq!(f.severity, Severity::Warning, "{f:#?}");
    assert_eq!(metric(&f, "reregistrations"), 1342.0);
    assert_eq!(metric(&f, "io_ops"), 740.0);
}

#[test]
fn live_echo_under_strace() {
    need(&["strace", "cc", "bash"]);
    let run = |variant: &str| live_lab(LAB, variant, &["-f", "-tt", "-T", "-yy"], &[("REQUESTS", "600")]);
    let f = only(DET, &run("c-mod"), "live c-mod");
    assert_eq!(f.severity, Severity::Warning, "{f:#?}");
    assert_eq!(metric(&f, "reregistrations"), 1200.0);
    assert!(findings(&run("c-et"), DET).is_empty());
}
