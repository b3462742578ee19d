//! repeated-dns (SL004) on its lab (lab/repeated-dns): the recorded traces, the same programs
//! run live under strace (against a DNS responder on 127.53.x.y:53 in a private mount
//! namespace, or a private /etc/hosts), the bundled demo, and real-world traces. The numbers
//! are the programs' own: 30 requests that each resolve feed.lab.test are 30 lookups, 60 DNS
//! questions (A and AAAA) and 60 answers.

use crate::common::*;
use std::path::Path;
use syslint_report::{Finding, Report, Severity};

const DET: &str = "repeated-dns";
const LAB: &str = "repeated-dns";

/// What a BAD variant must show (counts exact).
struct Expect {
    /// The finding's subject.
    subject: &'static str,
    lookups: f64,
    processes: f64,
    /// DNS questions sent (A and AAAA per lookup), 0 for lookups answered from /etc/hosts.
    queries: f64,
    truncated: bool,
}

fn expected(variant: &str, set: &str) -> Option<Expect> {
    let dns = |subject, n: f64, procs: f64| Expect {
        subject,
        lookups: n,
        processes: procs,
        queries: 2.0 * n,
        truncated: false,
    };
    let hosts = |n: f64, procs: f64| Expect {
        subject: "name resolving to 127.0.0.1",
        lookups: n,
        processes: procs,
        queries: 0.0,
        truncated: false,
    };
    match variant {
        // Python http.client: a new HTTPConnection("feed.lab.test") per request
        "py-resolve-each" => Some(dns("feed.lab.test", 30.0, 1.0)),
        // the same with a name longer than strace's default -s 32 shows
        "py-long-name" if set.ends_with("s256") => Some(dns("a-rather-long-feed-name.lab.test", 30.0, 1.0)),
        "py-long-name" => Some(Expect { truncated: true, ..dns("a-rather-long-feed-…", 30.0, 1.0) }),
        // socket.getaddrinfo("localhost", AF_INET) before each of 40 requests: /etc/hosts
        "py-hosts-each" => Some(hosts(40.0, 1.0)),
        // curl once per URL: 15 processes, each resolving in its resolver thread
        "curl-per-url" => Some(dns("feed.lab.test", 15.0, 15.0)),
        "curl-hosts-per-url" => Some(hosts(15.0, 15.0)),
        // PHP: curl_init per request, libcurl's threaded resolver each time
        "php-fresh" => Some(dns("feed.lab.test", 20.0, 1.0)),
        "php-hosts-fresh" => Some(hosts(20.0, 1.0)),
        // fixes and near-misses: one lookup then one connection (Python, curl with every URL,
        // PHP with one handle or a share handle with CURL_LOCK_DATA_DNS), five different
        // names once each, a single lookup
        "py-resolve-once" | "curl-one-invocation" | "php-reuse" | "php-share-dns" | "py-few-names" | "py-single" => {
            None
        }
        _ => panic!("no expectation for {variant}"),
    }
}

const VARIANTS: &[&str] = &[
    "py-resolve-each",
    "py-resolve-once",
    "py-long-name",
    "py-few-names",
    "py-single",
    "py-hosts-each",
    "curl-per-url",
    "curl-one-invocation",
    "php-fresh",
    "php-reuse",
    "php-share-dns",
    "curl-hosts-per-url",
    "php-hosts-fresh",
];

/// Check a report of `variant` against its expectation. `timed`: -T or -tt; `durations`: -T.
fn check(r: &Report, variant: &str, set: &str, ctx: &str, timed: bool, durations: bool) {
    assert_eq!(r.capture.unparsed_lines, 0, "{ctx}: {:?}", r.capture.unparsed_samples);
    let fs = findings(r, DET);
    let Some(want) = expected(variant, set) else {
        assert!(fs.is_empty(), "{ctx}: must stay quiet, got {fs:#?}");
        return;
    };
    assert_eq!(fs.len(), 1, "{ctx}: {fs:#?}");
    let f: &Finding = fs[0];
    assert_eq!(f.code, "SL004", "{ctx}");
    assert_eq!(f.subject, want.subject, "{ctx}");
    assert_eq!(metric(f, "lookups"), want.lookups, "{ctx}");
    assert_eq!(metric(f, "processes"), want.processes, "{ctx}");
    assert_eq!(metric(f, "dns_queries"), want.queries, "{ctx}");
    assert_eq!(metric(f, "dns_answers"), want.queries, "{ctx}");
    // glibc with `hosts: files dns` reads /etc/hosts once per lookup
    assert_eq!(metric(f, "hosts_file_reads"), want.lookups, "{ctx}");
    assert_eq!(metric(f, "name_truncated"), if want.truncated { 1.0 } else { 0.0 }, "{ctx}");
    assert!(f.message.contains(&format!("looked up {} times", want.lookups)), "{ctx}: {}", f.message);
    assert!(!f.message.ends_with('.'), "{ctx}");
    if want.processes > 1.0 {
        assert!(f.message.contains(&format!(" times by {} processes", want.processes)), "{ctx}: {}", f.message);
    }
    let cost = f.cost.as_deref().unwrap_or("");
    assert!(cost.starts_with(&format!("{} of {} lookups", want.lookups - 1.0, want.lookups)), "{ctx}: {cost}");
    assert_eq!(cost.contains("rerun with -s 256"), want.truncated, "{ctx}: {cost}");
    // timed with -T durations, or with timestamps and DNS traffic to time; lookups answered
    // from /etc/hosts in a -tt trace are timed only where strace split a call in two (threads)
    let must_time = durations || (timed && want.queries > 0.0);
    if must_time || f.metrics.contains_key("resolve_s") {
        let resolve = metric(f, "resolve_s");
        assert!(resolve > 0.0 && resolve < 5.0, "{ctx}: resolve_s {resolve}");
        let wasted = metric(f, "wasted_s");
        assert!(wasted > 0.0 && wasted < resolve, "{ctx}: wasted_s {wasted}");
        assert!(f.severity <= Severity::Warning, "{ctx}");
    } else {
        assert!(!f.metrics.contains_key("wasted_s"), "{ctx}");
        assert!(cost.contains("time unknown"), "{ctx}: {cost}");
        assert_eq!(f.severity, Severity::Info, "{ctx}");
    }
    if !timed {
        assert!(!f.metrics.contains_key("resolve_s"), "{ctx}");
    }
    if want.queries > 0.0 && timed {
        let w = metric(f, "dns_wait_s");
        assert!(w > 0.0 && w <= metric(f, "resolve_s"), "{ctx}: dns_wait_s {w}");
    } else {
        assert!(!f.metrics.contains_key("dns_wait_s"), "{ctx}");
    }
    assert!(f.window.is_some() == timed, "{ctx}");
    // evidence: the resolver's lines, payload redacted (the name is the subject, not evidence)
    assert!(f.evidence.iter().any(|l| l.contains("/etc/hosts")), "{ctx}: {:?}", f.evidence);
    if want.queries > 0.0 {
        assert!(f.evidence.iter().any(|l| l.contains("sendmmsg(")), "{ctx}: {:?}", f.evidence);
        assert!(f.evidence.iter().all(|l| !l.contains("\\4feed")), "{ctx}: payload in evidence {:?}", f.evidence);
    }
    assert!(f.fix.contains("CURL_LOCK_DATA_DNS") && f.fix.contains("nscd"), "{ctx}");
}

/// (flag set, timestamps, durations).
const SETS: &[(&str, bool, bool)] =
    &[("f-tt-T-yy", true, true), ("f-tt", true, false), ("f", false, false), ("f-tt-T-yy-s256", true, true)];

#[test]
fn recorded_lab_traces() {
    let mut seen = 0;
    for v in VARIANTS {
        for (set, timed, durations) in SETS {
            let p = lab_trace(LAB, &format!("{v}.{set}.strace.gz"));
            if !p.exists() {
                assert!(set.len() > 4 || *set == "f", "{} missing (lab/{LAB}/record.sh makes it)", p.display());
                continue;
            }
            let r = analyze(&[&p]);
            check(&r, v, set, &format!("{v}.{set}"), *timed, *durations);
            seen += 1;
        }
    }
    assert_eq!(seen, VARIANTS.len() * 2 + 3 + 1, "every variant in two flag sets, 3 without timestamps, 1 with -s 256");
}

#[test]
fn dns_share_alone_keeps_the_connections() {
    // PHP with only CURL_LOCK_DATA_DNS shared: one lookup, yet still a connection per request
    let r = analyze(&[&lab_trace(LAB, "php-share-dns.f-tt-T-yy.strace.gz")]);
    assert!(findings(&r, DET).is_empty());
    let churn = findings(&r, "connection-churn");
    assert_eq!(churn.len(), 1);
    assert_eq!(metric(churn[0], "connections"), 20.0);
}

#[test]
fn first_lookup_reads_the_resolver_config() {
    // glibc opens its configuration (/etc/resolv.conf, /etc/host.conf, ...) on a process's
    // first lookup only: one process with 30 lookups opens it once, 15 curl processes 15 times
    let f = |name: &str| {
        let r = analyze(&[&lab_trace(LAB, name)]);
        metric(findings(&r, DET)[0], "config_reads")
    };
    for one in [f("py-resolve-each.f-tt-T-yy.strace.gz"), f("php-fresh.f-tt-T-yy.strace.gz")] {
        assert!((1.0..=4.0).contains(&one), "{one}");
    }
    let many = f("curl-per-url.f-tt-T-yy.strace.gz");
    assert!(many % 15.0 == 0.0 && (1.0..=4.0).contains(&(many / 15.0)), "{many}");
}

#[test]
fn demo_fetch_fires() {
    // demo/fetch.py: getaddrinfo("localhost") before each of 40 connections, answered from
    // /etc/hosts; its server's getfqdn() at start-up read /etc/hosts once more before the first
    // connect, and lookups with no connect of their own count for the next one
    let r = analyze(&[&root().join("demo/fetch.strace.gz")]);
    let fs = findings(&r, DET);
    assert_eq!(fs.len(), 1, "{fs:#?}");
    let f = fs[0];
    assert_eq!(f.subject, "name resolving to 127.0.0.1");
    assert_eq!(metric(f, "lookups"), 41.0);
    assert_eq!(metric(f, "hosts_file_reads"), 41.0);
    assert_eq!(metric(f, "dns_queries"), 0.0);
    assert!(metric(f, "resolve_s") > 0.0);
    assert_eq!(f.severity, Severity::Info, "microseconds per lookup from /etc/hosts");
}

#[test]
fn thresholds_come_from_the_config() {
    let dir = std::env::temp_dir().join(format!("syslint-dns-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("syslint.toml");
    std::fs::write(&cfg, "[repeated-dns]\nmin_lookups = 31\n").unwrap();
    let t = lab_trace(LAB, "py-resolve-each.f-tt-T-yy.strace.gz");
    let run_cfg = |t: &Path| {
        let out = run(&["analyze", "--format", "json", "--config", cfg.to_str().unwrap(), t.to_str().unwrap()]);
        parse_report(&stdout(&out)).expect("json")
    };
    assert!(findings(&run_cfg(&t), DET).is_empty(), "30 lookups < 31");
    // unnamed lookups have their own threshold
    let h = lab_trace(LAB, "py-hosts-each.f-tt-T-yy.strace.gz");
    assert_eq!(findings(&run_cfg(&h), DET).len(), 1);
    std::fs::write(&cfg, "[repeated-dns]\nmin_lookups_unnamed = 41\n").unwrap();
    assert!(findings(&run_cfg(&h), DET).is_empty(), "40 lookups < 41");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
#[cfg_attr(not(syslint_corpus), ignore = "needs ../shared/strace-corpus beside the checkout")]
fn real_world_traces() {
    let dir = corpus_dir();
    // a Django app server (2012, strace 4): every request connects to MySQL anew, and the
    // client library reads /etc/hosts twice before each connect
    let r = analyze(&[&dir.join("django-appserver-p-attach-detach-strace4-old-sockaddr.strace")]);
    let fs = findings(&r, DET);
    assert_eq!(fs.len(), 1, "{fs:#?}");
    assert_eq!(fs[0].subject, "name resolving to 10.10.25.121");
    assert_eq!(metric(fs[0], "lookups"), 70.0);
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if !name.contains(".strace") || name.starts_with("django-appserver") {
            continue;
        }
        let r = analyze(&[&p]);
        assert!(findings(&r, DET).is_empty(), "{name}: {:#?}", findings(&r, DET));
    }
}

/// Run a lab variant under strace now; the report must say what the recorded trace says.
fn live(variant: &str, flags: &[&str]) -> Report {
    live_lab(LAB, variant, flags, &[])
}

#[test]
fn live_lab_matches_fixtures() {
    for v in VARIANTS {
        let r = live(v, &["-f", "-tt", "-T", "-yy"]);
        check(&r, v, "f-tt-T-yy", &format!("live {v} -f -tt -T -yy"), true, true);
    }
    for v in ["py-resolve-each", "curl-hosts-per-url"] {
        let r = live(v, &["-f"]);
        check(&r, v, "f", &format!("live {v} -f"), false, false);
    }
    let r = live("py-long-name", &["-f", "-tt", "-T", "-yy", "-s", "256"]);
    check(&r, "py-long-name", "f-tt-T-yy-s256", "live py-long-name -s 256", true, true);
}

/// Issue 27: behind a search list (`ndots:5`, three domains) each lookup asks
/// `api.lab.test.shop.svc.cluster.local` and two more before `api.lab.test` resolves; the
/// finding named the first expansion. It names the name that was answered, the one the program
/// asked for (tests/fixtures/servers/diff/record-dns-search.sh, 50 lookups by Python).
#[test]
fn behind_a_search_list_the_name_asked_for_is_named() {
    let r = analyze(&[&root().join("tests/fixtures/servers/diff/dns-SEARCH.slr")]);
    let f = findings(&r, "repeated-dns");
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert_eq!(f[0].subject, "api.lab.test");
    assert!(f[0].message.starts_with("api.lab.test looked up 50 times"), "{}", f[0].message);
    assert_eq!(f[0].about.as_ref().and_then(|a| a.name.as_deref()), Some("api.lab.test"));
}
