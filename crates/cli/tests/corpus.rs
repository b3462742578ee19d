//! Real strace logs written by other people (../shared/strace-corpus, not copied here):
//! every one must be read without a panic, nearly every line understood, and the facts each
//! file is known for must come out.

use crate::common::*;

/// (file, unparsed lines expected, why those lines are not strace output)
const EXPECT: &[(&str, u64, &str)] = &[
    ("aarch64-mongosh-node-f-ttt-T-y-xx-2024.strace", 0, ""),
    ("aarch64-postmarketos-xorg-f-pidcol.strace", 0, ""),
    ("anaconda-installer-python-fc18-2015-strace4-p-f-tt-v.strace", 0, ""),
    ("android-arm32-zygote-app_process-tt-killed.strace", 0, ""),
    ("asterisk-2017-strace4-p-f-threads-unfinished-resumed.strace", 0, ""),
    ("centos6-staprun-2017-strace4-shell-prompt-first-line.strace", 1, "the shell prompt"),
    ("cuda-nvidia-ioctls-2024-strace6.strace", 0, ""),
    ("django-appserver-p-attach-detach-strace4-old-sockaddr.strace", 0, ""),
    ("i386-ping-localhost-2016-strace4-f-v-env-pidcol.strace", 0, ""),
    ("i386-thttpd-2018-strace4.strace", 0, ""),
    ("java-launcher-bash-exec-jvm-2019-strace4.2x.strace", 0, ""),
    ("perl-seccomp-eval-strace4.strace", 0, ""),
    ("php5-cli-2015-strace4.strace", 0, ""),
    (
        "phpunit-c-summary-mixed-with-program-output-2022.txt",
        0,
        "a strace -c table: the table reader skips the program output around it",
    ),
    ("python36-pybind-numpy-2018-strace4-killed-sigsegv.strace", 0, ""),
    ("python39-requests-labkey-2023-strace5.strace", 0, ""),
    ("raku-moarvm-2019-strace4.2x-killed-sigabrt-core.strace", 0, ""),
    ("rust-cargo-run-multithread-f-pidcol-strace5-statx.strace", 0, ""),
    ("rust-git2-2022-strace5-killed-sigsegv.strace", 0, ""),
    ("rust-tokio-uring-nix-2022-strace5-io_uring.strace", 0, ""),
    ("stacktrace-k-f-t-2025-strace6.strace", 0, ""),
    ("uwsgi-fastrouter-2013-strace4-p-f-t-pidcol.strace", 0, ""),
];

#[test]
#[cfg_attr(not(syslint_corpus), ignore = "needs ../shared/strace-corpus beside the checkout")]
fn every_corpus_file_is_understood() {
    let dir = corpus_dir();
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("corpus dir") {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
        if name == "SOURCES.md" {
            continue;
        }
        let (_, want, why) = EXPECT
            .iter()
            .find(|(f, _, _)| *f == name)
            .unwrap_or_else(|| panic!("corpus file {name} has no expectation here: add one"));
        let r = analyze(&[&path]);
        assert_eq!(
            r.capture.unparsed_lines, *want,
            "{name}: unparsed lines ({why}); samples: {:?}",
            r.capture.unparsed_samples
        );
        assert!(r.capture.syscalls > 0 || !r.summary.strace_c_table.is_empty(), "{name}: nothing read");
        seen += 1;
    }
    assert_eq!(seen, EXPECT.len(), "corpus files missing");
}

fn corpus_report(name: &str) -> syslint_report::Report {
    analyze(&[&corpus_dir().join(name)])
}

#[test]
#[cfg_attr(not(syslint_corpus), ignore = "needs ../shared/strace-corpus beside the checkout")]
fn unfinished_resumed_pairs_across_threads() {
    let name = "asterisk-2017-strace4-p-f-threads-unfinished-resumed.strace";
    let r = corpus_report(name);
    let text = std::fs::read_to_string(corpus_dir().join(name)).unwrap();
    let resumed = text.lines().filter(|l| l.contains(" resumed>")).count() as u64;
    let unfinished = text.lines().filter(|l| l.ends_with("<unfinished ...>")).count() as u64;
    // every resumption found its start (the log begins with unfinished calls only)
    assert_eq!(r.capture.resumed_pairs, resumed);
    assert_eq!(r.capture.never_resumed, unfinished - resumed);
    assert!(r.capture.threads >= 60, "threads: {}", r.capture.threads);
    // `= 0 (Timeout)` polls with a 1000 ms timeout dominate this idle PBX
    let timeouts = text
        .lines()
        .filter(|l| (l.contains(" poll(") || l.contains("<... poll resumed>")) && l.contains("= 0 (Timeout)"))
        .count() as u64;
    let poll = syscall(&r, "poll");
    assert_eq!(poll.returns.get("returned_0").copied(), Some(timeouts));
}

#[test]
#[cfg_attr(not(syslint_corpus), ignore = "needs ../shared/strace-corpus beside the checkout")]
fn killed_processes_and_core_dumps() {
    let r = corpus_report("raku-moarvm-2019-strace4.2x-killed-sigabrt-core.strace");
    assert_eq!(r.summary.processes[0].end.as_deref(), Some("killed by SIGABRT (core dumped)"));
    let r = corpus_report("android-arm32-zygote-app_process-tt-killed.strace");
    assert!(r.summary.processes.iter().any(|p| p.end.as_deref() == Some("killed by SIGSEGV")));
    assert_eq!(r.capture.clock, "time-of-day");
}

#[test]
#[cfg_attr(not(syslint_corpus), ignore = "needs ../shared/strace-corpus beside the checkout")]
fn hex_escaped_paths_are_decoded() {
    let r = corpus_report("aarch64-mongosh-node-f-ttt-T-y-xx-2024.strace");
    assert_eq!(r.capture.clock, "epoch");
    assert!(r.capture.durations);
    assert!(
        r.summary.fd_targets.iter().any(|t| t.target.starts_with("/") && !t.target.contains("\\x")),
        "{:?}",
        r.summary.fd_targets
    );
    let fa = syscall(&r, "faccessat");
    assert!(fa.errnos.get("ENOENT").copied().unwrap_or(0) > 0);
}

#[test]
#[cfg_attr(not(syslint_corpus), ignore = "needs ../shared/strace-corpus beside the checkout")]
fn old_sockaddr_format_and_attach() {
    let r = corpus_report("django-appserver-p-attach-detach-strace4-old-sockaddr.strace");
    // accept(3, {sa_family=AF_INET6, ... inet_pton(AF_INET6, "::ffff:10.10.25.20", ...)})
    assert!(r.summary.endpoints.iter().any(|e| e.direction == "in" && e.connections > 0), "{:?}", r.summary.endpoints);
    assert!(r.summary.endpoints.iter().any(|e| e.direction == "out"), "{:?}", r.summary.endpoints);
}

#[test]
#[cfg_attr(not(syslint_corpus), ignore = "needs ../shared/strace-corpus beside the checkout")]
fn old_epoll_format_infinite_timeouts() {
    let name = "uwsgi-fastrouter-2013-strace4-p-f-t-pidcol.strace";
    let r = corpus_report(name);
    let text = std::fs::read_to_string(corpus_dir().join(name)).unwrap();
    // -1 printed as an unsigned 32-bit number by old strace
    let inf = text.lines().filter(|l| l.contains("epoll_wait(") && l.contains(", 4294967295")).count() as u64;
    let e = syscall(&r, "epoll_wait");
    assert!(inf > 50);
    assert_eq!(e.returns.get("timeout_infinite").copied(), Some(inf));
}

#[test]
#[cfg_attr(not(syslint_corpus), ignore = "needs ../shared/strace-corpus beside the checkout")]
fn strace_c_table_is_read() {
    let r = corpus_report("phpunit-c-summary-mixed-with-program-output-2022.txt");
    let access = r.summary.strace_c_table.iter().find(|x| x.name == "access").expect("access row");
    assert_eq!((access.calls, access.errors), (3594, 1644));
    assert!((access.seconds - 1.865496).abs() < 1e-9);
}

#[test]
#[cfg_attr(not(syslint_corpus), ignore = "needs ../shared/strace-corpus beside the checkout")]
fn stack_frames_are_not_errors() {
    let r = corpus_report("stacktrace-k-f-t-2025-strace6.strace");
    assert_eq!(r.capture.syscalls, 11);
    assert_eq!(r.capture.clock, "time-of-day");
}

#[test]
#[cfg_attr(not(syslint_corpus), ignore = "needs ../shared/strace-corpus beside the checkout")]
fn program_output_cutting_lines_is_rejoined() {
    let r = corpus_report("raku-moarvm-2019-strace4.2x-killed-sigabrt-core.strace");
    // `write(2, "moar: ..."..., 77moar: src/unix/core.c:539: ...` then `) = 77`
    let w = syscall(&r, "write");
    assert!(w.bytes.unwrap_or(0) >= 77);
}
