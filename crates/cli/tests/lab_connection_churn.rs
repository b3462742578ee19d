//! connection-churn (SL003) on its lab (lab/connection-churn): the recorded traces, the same
//! programs run live under strace, the bundled demo, and real-world traces. The numbers are
//! the programs' own: a client doing 40 requests on 40 new connections shows 40 connections
//! carrying 1.0 requests each; the fixed clients show nothing.

use crate::common::*;
use syslint_report::{Finding, Report, Severity};

const DET: &str = "connection-churn";
const LAB: &str = "connection-churn";

/// What a BAD variant must show: counts exact; how many connections were open at once and how
/// many requests were in flight at once within bounds where threads or curl's event loop decide.
struct Expect {
    connections: f64,
    requests: f64,
    tls: f64,
    processes: f64,
    max_concurrent: (f64, f64),
    peak_in_flight: (f64, f64),
    /// The idle-pool form (more connections open than requests in flight) rather than churn.
    pool: bool,
}

/// None: the variant must stay quiet.
fn expected(variant: &str) -> Option<Expect> {
    let churn = |n: f64, tls: bool, procs: f64| Expect {
        connections: n,
        requests: n,
        tls: if tls { n } else { 0.0 },
        processes: procs,
        max_concurrent: (1.0, 1.0),
        peak_in_flight: (1.0, 1.0),
        pool: false,
    };
    match variant {
        // Python http.client, a new HTTPConnection per request (40 requests)
        "py-new-conn" => Some(churn(40.0, false, 1.0)),
        // the same over TLS (30 requests): a ClientHello on every connection
        "py-tls-new-conn" => Some(churn(30.0, true, 1.0)),
        // curl CLI once per URL (20 processes, https)
        "curl-per-url" => Some(churn(20.0, true, 20.0)),
        // PHP: curl_init per request (libcurl, https, 30 requests)
        "php-tls-fresh" => Some(churn(30.0, true, 1.0)),
        // 40 requests from 8 Python threads, a new connection each
        "py-parallel-new-conn" => {
            Some(Expect { max_concurrent: (2.0, 8.0), peak_in_flight: (1.0, 8.0), ..churn(40.0, false, 1.0) })
        }
        // curl --parallel over HTTP/1.1 to nginx: up to 20 connections at once, one request each
        "curl-parallel-h1" => {
            Some(Expect { max_concurrent: (2.0, 20.0), peak_in_flight: (1.0, 20.0), ..churn(20.0, true, 1.0) })
        }
        // 12 keep-alive connections opened up front, 36 requests one at a time over them
        "py-pool" => Some(Expect {
            connections: 12.0,
            requests: 36.0,
            tls: 0.0,
            processes: 1.0,
            max_concurrent: (12.0, 12.0),
            peak_in_flight: (1.0, 1.0),
            pool: true,
        }),
        // fixes and near-misses: one keep-alive connection (plain, TLS, curl with all URLs,
        // PHP with one handle or a share handle), two keep-alive connections, five hosts
        "py-keepalive"
        | "py-tls-keepalive"
        | "curl-one-invocation"
        | "php-tls-reuse"
        | "php-tls-share"
        | "py-two-conns"
        | "py-few-hosts" => None,
        // the same 20 parallel transfers multiplexed over one HTTP/2 connection
        "curl-parallel-h2" => None,
        _ => panic!("no expectation for {variant}"),
    }
}

const VARIANTS: &[&str] = &[
    "py-new-conn",
    "py-keepalive",
    "py-two-conns",
    "py-few-hosts",
    "py-pool",
    "py-tls-new-conn",
    "py-tls-keepalive",
    "curl-per-url",
    "curl-one-invocation",
    "php-tls-fresh",
    "php-tls-reuse",
    "php-tls-share",
    "py-parallel-new-conn",
    "curl-parallel-h1",
    "curl-parallel-h2",
];

fn is_loopback_endpoint(s: &str) -> bool {
    s.strip_prefix("127.0.0.1:").is_some_and(|p| p.parse::<u16>().is_ok_and(|p| p > 0))
}

/// Check a report of `variant` against its expectation. `timed`: the trace has -T or -tt.
fn check(r: &Report, variant: &str, ctx: &str, timed: bool) {
    assert_eq!(r.capture.unparsed_lines, 0, "{ctx}: {:?}", r.capture.unparsed_samples);
    let fs = findings(r, DET);
    let Some(want) = expected(variant) else {
        assert!(fs.is_empty(), "{ctx}: must stay quiet, got {fs:#?}");
        return;
    };
    assert_eq!(fs.len(), 1, "{ctx}: one endpoint, one finding: {fs:#?}");
    let f: &Finding = fs[0];
    assert_eq!(f.code, "SL003", "{ctx}");
    assert!(is_loopback_endpoint(&f.subject), "{ctx}: subject {}", f.subject);
    assert_eq!(metric(f, "connections"), want.connections, "{ctx}");
    assert_eq!(metric(f, "requests"), want.requests, "{ctx}");
    assert_eq!(metric(f, "requests_per_connection"), want.requests / want.connections, "{ctx}");
    assert_eq!(metric(f, "tls_handshakes"), want.tls, "{ctx}");
    assert_eq!(metric(f, "processes"), want.processes, "{ctx}");
    let open = metric(f, "max_concurrent");
    let peak = metric(f, "peak_in_flight");
    assert!((want.max_concurrent.0..=want.max_concurrent.1).contains(&open), "{ctx}: max_concurrent {open}");
    assert!((want.peak_in_flight.0..=want.peak_in_flight.1).contains(&peak) && peak <= open, "{ctx}: peak {peak}");
    let reusable = if want.pool { open - peak.max(1.0) } else { want.connections - peak.max(1.0) };
    assert_eq!(metric(f, "reusable_connections"), reusable, "{ctx}");
    let first = if want.pool { open } else { want.connections };
    assert!(f.message.starts_with(&format!("{first} ")), "{ctx}: {}", f.message);
    assert_eq!(f.message.contains("open at once"), want.pool, "{ctx}: {}", f.message);
    assert!(!f.message.ends_with('.') && f.message == f.message.to_lowercase(), "{ctx}: {}", f.message);
    if want.tls > 0.0 {
        assert!(f.message.contains(&format!("{} tls handshakes", want.tls)), "{ctx}: {}", f.message);
    }
    let cost = f.cost.as_deref().unwrap_or("");
    assert!(cost.starts_with(&format!("{reusable} of ")), "{ctx}: {cost}");
    if timed {
        let connect = metric(f, "connect_s");
        let wasted = metric(f, "wasted_s");
        // loopback: well under a second for all connects, but not nothing
        assert!(connect > 0.0 && connect < 2.0, "{ctx}: connect_s {connect}");
        // nothing wasted when every connection carried a request at the same moment (curl's 20
        // parallel transfers sometimes all overlap): then nothing was reusable either
        assert!(wasted < 5.0 && (wasted > 0.0) == (reusable > 0.0), "{ctx}: wasted_s {wasted}, reusable {reusable}");
        if want.tls > 0.0 {
            let hs = metric(f, "handshake_s");
            assert!(hs > 0.0 && hs < 5.0, "{ctx}: handshake_s {hs}");
        } else {
            assert!(!f.metrics.contains_key("handshake_s"), "{ctx}");
        }
        assert!(f.window.is_some(), "{ctx}");
        // loopback costs milliseconds per connection: never an error
        assert!(f.severity <= Severity::Warning, "{ctx}: {:?}", f.severity);
    } else {
        for k in ["connect_s", "handshake_s", "wasted_s", "avg_lifetime_s"] {
            assert!(!f.metrics.contains_key(k), "{ctx}: {k} without timing");
        }
        assert!(cost.contains("time unknown"), "{ctx}: {cost}");
        assert_eq!(f.severity, Severity::Info, "{ctx}");
    }
    // evidence: strace-like lines, payload redacted
    assert!(f.evidence.iter().any(|l| l.contains("connect(")), "{ctx}: {:?}", f.evidence);
    assert!(f.evidence.len() <= 7, "{ctx}");
    if want.tls > 0.0 {
        // the ClientHello write is shown, its bytes are not
        assert!(f.evidence.iter().all(|l| !l.contains("\\26\\3\\1")), "{ctx}: payload in evidence {:?}", f.evidence);
    }
    // the program's own advice leads (Python's, PHP's), every runtime's is kept beside it
    let every = format!("{} {}", f.fix, f.fix_elsewhere.as_deref().unwrap_or(""));
    assert!(every.contains("CURL_LOCK_DATA_CONNECT") && every.contains("requests.Session"), "{ctx}");
    if want.processes > 1.0 {
        assert!(f.fix.starts_with(&format!("{} separate processes", want.processes)), "{ctx}: {}", f.fix);
    }
}

/// (flag set, timed) of the recorded traces; `f` only for some BAD variants.
const SETS: &[(&str, bool)] = &[("f-tt-T-yy", true), ("f-tt", true), ("f", false)];

#[test]
fn recorded_lab_traces() {
    let mut seen = 0;
    for v in VARIANTS {
        for (set, timed) in SETS {
            let p = lab_trace(LAB, &format!("{v}.{set}.strace.gz"));
            if !p.exists() {
                assert_eq!(*set, "f", "{} missing (lab/{LAB}/record.sh makes it)", p.display());
                continue;
            }
            let r = analyze(&[&p]);
            check(&r, v, &format!("{v}.{set}"), *timed);
            seen += 1;
        }
    }
    assert_eq!(seen, VARIANTS.len() * 2 + 3, "every variant in two flag sets, three also without timestamps");
}

#[test]
fn recorded_severities_follow_the_cost() {
    // TLS handshakes cost milliseconds each even on loopback, plain connects a fraction:
    // 40 plain connects stay info, and a warning needs 0.1 s of setup lost
    for set in ["f-tt-T-yy", "f-tt"] {
        let r = analyze(&[&lab_trace(LAB, &format!("py-new-conn.{set}.strace.gz"))]);
        let f = findings(&r, DET)[0];
        assert_eq!(f.severity, Severity::Info, "py-new-conn.{set}");
        assert!(metric(f, "wasted_s") < 0.1);
        for v in ["py-tls-new-conn", "php-tls-fresh", "curl-per-url"] {
            let r = analyze(&[&lab_trace(LAB, &format!("{v}.{set}.strace.gz"))]);
            let f = findings(&r, DET)[0];
            let want = if metric(f, "wasted_s") >= 0.1 { Severity::Warning } else { Severity::Info };
            assert_eq!(f.severity, want, "{v}.{set}");
        }
    }
}

#[test]
fn thresholds_come_from_the_config() {
    let dir = std::env::temp_dir().join(format!("syslint-churn-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("syslint.toml");
    // 40 connections are below a threshold of 50: quiet
    std::fs::write(&cfg, "[connection-churn]\nmin_connections = 50\n").unwrap();
    let t = lab_trace(LAB, "py-new-conn.f-tt-T-yy.strace.gz");
    let out = run(&["analyze", "--format", "json", "--config", cfg.to_str().unwrap(), t.to_str().unwrap()]);
    let r = parse_report(&stdout(&out)).expect("json");
    assert!(findings(&r, DET).is_empty());
    // an idle pool of 12 is reported at 8, not at 16
    std::fs::write(&cfg, "[connection-churn]\nmin_idle_parallel = 16\n").unwrap();
    let t = lab_trace(LAB, "py-pool.f-tt-T-yy.strace.gz");
    let out = run(&["analyze", "--format", "json", "--config", cfg.to_str().unwrap(), t.to_str().unwrap()]);
    let r = parse_report(&stdout(&out)).expect("json");
    assert!(findings(&r, DET).is_empty());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn demo_fetch_fires() {
    // demo/fetch.py: 40 requests, each on a new connection to its own HTTP/1.0 server thread
    // (the server thread is traced too: its side of the same 40 connections is the second,
    // info finding, the server closing each one as HTTP/1.0 does)
    let r = analyze(&[&root().join("demo/fetch.strace.gz")]);
    let fs = findings(&r, DET);
    assert_eq!(fs.len(), 2, "{fs:#?}");
    assert_eq!(fs[1].subject, "127.0.0.1:44649 (accepted)");
    assert_eq!((metric(fs[1], "connections"), metric(fs[1], "server_closed")), (40.0, 40.0));
    assert_eq!(fs[1].severity, Severity::Info);
    let f = fs[0];
    assert_eq!(f.subject, "127.0.0.1:44649");
    assert_eq!(metric(f, "connections"), 40.0);
    assert_eq!(metric(f, "requests"), 40.0);
    assert_eq!(metric(f, "tls_handshakes"), 0.0);
    assert_eq!(metric(f, "processes"), 1.0);
    assert_eq!(metric(f, "reusable_connections"), 39.0);
    assert!(metric(f, "connect_s") > 0.0);
}

#[test]
#[cfg_attr(not(syslint_corpus), ignore = "needs ../shared/strace-corpus beside the checkout")]
fn real_world_traces() {
    let dir = corpus_dir();
    // uWSGI's fastrouter (2013, strace 4, -t without microseconds): a new backend
    // connection per proxied request
    // connection per proxied request; and on its own listening socket (attached after the listen,
    // no -y: named by its fd) the clients' 57 connections, one request each, closed by it
    let r = analyze(&[&dir.join("uwsgi-fastrouter-2013-strace4-p-f-t-pidcol.strace")]);
    let fs = findings(&r, DET);
    assert_eq!(fs.len(), 2, "{fs:#?}");
    assert_eq!(fs[0].subject, "127.0.0.1:59201");
    assert_eq!(metric(fs[0], "connections"), 42.0);
    assert_eq!(metric(fs[0], "requests_per_connection"), 1.0);
    assert_eq!(fs[1].subject, "listening fd 3 of pid 1230 (accepted)");
    assert_eq!((metric(fs[1], "connections"), metric(fs[1], "requests")), (57.0, 57.0));
    assert_eq!(fs[1].severity, Severity::Info);
    // a Django app server attached with strace 4: 23 connections accepted, one request each,
    // the server closing them (a WSGI server without keep-alive behind its proxy: info)
    let r = analyze(&[&dir.join("django-appserver-p-attach-detach-strace4-old-sockaddr.strace")]);
    let fs = findings(&r, DET);
    assert_eq!(fs.len(), 1, "{fs:#?}");
    assert_eq!((metric(fs[0], "connections"), metric(fs[0], "server_closed")), (23.0, 19.0));
    assert_eq!(fs[0].severity, Severity::Info);
    // nothing else in the corpus churns
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if !name.contains(".strace") || name.starts_with("uwsgi-fastrouter") || name.starts_with("django-appserver") {
            continue;
        }
        let r = analyze(&[&p]);
        assert!(findings(&r, DET).is_empty(), "{name}: {:#?}", findings(&r, DET));
    }
}

/// Run a lab variant under strace now; the report must say what the recorded trace says.
/// A live run of `variant`, analysed; keep the [`LiveTrace`] until the checks are done (a failing
/// check keeps the recording).
fn live(variant: &str, flags: &[&str]) -> (Report, LiveTrace) {
    let trace = LiveTrace::new(&format!("{LAB}-{variant}{}.strace", flags.concat()));
    let out = &trace.0;
    let script = root().join("lab").join(LAB).join("run.sh");
    let mut cmd = std::process::Command::new(&script);
    cmd.arg(variant).arg(out).args(flags);
    let o = cmd.output().expect("run lab/connection-churn/run.sh");
    assert!(
        o.status.success(),
        "{} {variant} failed ({:?}): {}",
        script.display(),
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    (analyze(&[out]), trace)
}

#[test]
fn live_lab_matches_fixtures() {
    for v in VARIANTS {
        let (mut r, mut trace) = live(v, &["-f", "-tt", "-T", "-yy"]);
        if findings(&r, DET).iter().any(|f| f.severity == Severity::Error) {
            // under ptrace on a loaded machine (CI with other work on both cores) connects on
            // loopback can wait tens of milliseconds for the tracer, which reads as an error's
            // worth of setup time. Recorded once more; two such runs fail
            eprintln!("live {v}: an error's worth of setup time on loopback (machine busy?), recording again");
            (r, trace) = live(v, &["-f", "-tt", "-T", "-yy"]);
        }
        check(&r, v, &format!("live {v} -f -tt -T -yy"), true);
        drop(trace);
    }
    for v in ["py-new-conn", "curl-per-url"] {
        let (r, _trace) = live(v, &["-f"]);
        check(&r, v, &format!("live {v} -f"), false);
    }
}

/// Issue 15: one memcached client (a new connection per set+get, 1,000 times) was two infos
/// under eBPF and two warnings under strace: a few of strace's connects waited milliseconds for
/// the tracer to be scheduled, and the mean setup time made 0.34 s "wasted" of them. The
/// median connection's setup decides now (tests/fixtures/servers/record-memcached.sh; the
/// strace recording is one from a loaded machine, where the tail shows; the client was named
/// client.py then).
#[test]
fn severity_does_not_depend_on_the_tracer() {
    let dir = root().join("tests/fixtures/servers");
    let st = analyze(&[&dir.join("memcached-client.f-tt-T-yy.strace.gz")]);
    let bpf = analyze(&[&dir.join("memcached-client.slr")]);
    let (s, b) = (findings(&st, DET), findings(&bpf, DET));
    assert_eq!((s.len(), b.len()), (1, 1), "{s:#?} {b:#?}");
    let (s, b) = (s[0], b[0]);
    for k in ["connections", "reusable_connections", "requests"] {
        assert_eq!(metric(s, k), metric(b, k), "{k}: the same program, the same counts");
    }
    // strace's connects took 45 times longer in all, mostly a few very long ones
    assert!(metric(s, "connect_s") > 20.0 * metric(b, "connect_s"), "{s:#?}");
    assert_eq!(s.severity, b.severity);
    assert_eq!(s.severity, Severity::Info, "1,000 loopback connects: milliseconds natively");
    assert!(metric(s, "wasted_s") < 0.1 && metric(s, "setup_ms") < 0.1, "{s:#?}");
}

/// Issue 27: "connection churn counts the whole connection life it causes ... not connect()
/// alone". redis-py with a new redis.Redis per request, 2,000 requests, recorded with eBPF by
/// lab/connection-churn/redis/record-ebpf.sh beside 5 untraced runs of each mode
/// (redis-native.txt): the calls on the socket were 40 us of each connection, the connection's
/// life as the program lived it (socket() to the first request, the last response to the end
/// of the close: creating the client, shutdown, close) about 250 us, and the untraced runs lose
/// 220 us a connection. Under strace the time between calls is the tracer's (ptrace stops,
/// -yy's lookups on a new socket: milliseconds), so a strace log is priced by its calls and
/// says so.
#[test]
fn whole_connection_life_is_priced_near_the_native_loss() {
    let native = std::fs::read_to_string(lab_trace(LAB, "redis-native.txt")).unwrap();
    let mut runs: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for l in native.lines().filter(|l| !l.starts_with('#')) {
        let w: Vec<&str> = l.split_whitespace().collect();
        let i = usize::from(w[0] == "one-client");
        runs[i].push(w[2].parse::<f64>().unwrap());
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    assert_eq!((runs[0].len(), runs[1].len()), (5, 5), "{native}");
    let lost = median(&mut runs[0]) - median(&mut runs[1]);
    let r = analyze(&[&lab_trace(LAB, "redis-new-client.slr")]);
    let f = findings(&r, DET);
    assert_eq!(f.len(), 1, "{f:#?}");
    let f = f[0];
    assert_eq!(metric(f, "connections"), 2000.0);
    let wasted = metric(f, "wasted_s");
    assert!(
        wasted > lost / 2.0 && wasted < lost * 2.0,
        "priced {wasted:.3} s, natively {lost:.3} s lost: not within 2x"
    );
    // the calls alone were a fifth of it
    assert!(metric(f, "connect_s") < wasted / 4.0, "{f:#?}");
    assert_eq!(f.severity, Severity::Warning, "half the run: {f:#?}");
    let cost = f.cost.as_deref().unwrap();
    assert!(cost.contains("from socket() to the first request") && cost.contains("eBPF"), "{cost}");
    let good = analyze(&[&lab_trace(LAB, "redis-one-client.slr")]);
    assert!(findings(&good, DET).is_empty(), "{:#?}", findings(&good, DET));
    let (new, one) = (lab_trace(LAB, "redis-new-client.slr"), lab_trace(LAB, "redis-one-client.slr"));
    for (a, b, want) in [(&new, &one, "improved"), (&one, &new, "regressed")] {
        let o = run(&["diff", "--format", "json", a.to_str().unwrap(), b.to_str().unwrap()]);
        let d = json_doc(stdout(&o)).unwrap();
        assert_eq!(d["outcome"], want, "{d:#}");
    }
    // the same client under strace: its calls, and the cost line says what is not counted
    let st = analyze(&[&lab_trace(LAB, "redis-new-client.f-tt-T-yy.strace.gz")]);
    let c = findings(&st, DET)[0].cost.clone().unwrap();
    assert!(c.contains("as strace timed them") && c.contains("eBPF measures it"), "{c}");
}

/// Both ends in one trace (the demo: a Python client and its own HTTP/1.0 server thread): the
/// server's accept and close for each connection are the churn's cost too, added to the
/// client's price; the server-side finding points at it rather than saying the clients' time
/// is missing.
#[test]
fn both_ends_traced_price_the_accept_side_too() {
    let r = analyze(&[&root().join("demo/fetch.strace.gz")]);
    let f = findings(&r, DET);
    let client = f.iter().find(|f| !f.subject.contains("(accepted")).expect("the clients' finding");
    let server = f.iter().find(|f| f.subject.contains("(accepted")).expect("the server's finding");
    let c = client.cost.as_deref().unwrap();
    assert!(c.contains("with the server's accept and close") && c.contains("(both ends traced)"), "{c}");
    let s = server.cost.as_deref().unwrap();
    assert!(s.contains("their finding prices both ends") && !s.contains("not in this trace"), "{s}");
    // a client whose server is not traced: the client's calls alone
    let r = analyze(&[&lab_trace(LAB, "redis-new-client.f-tt-T-yy.strace.gz")]);
    assert!(!findings(&r, DET)[0].cost.as_deref().unwrap().contains("both ends"));
}

/// The server side (issue 15: "gunicorn closing every connection: 20,790 accepts; churn looks
/// only at outgoing connections"). The server is traced, the client is not: connections
/// accepted on one listener carrying one request each are reported, info (the round trips are
/// the clients'), saying who closed first, which decides the fix.
/// (variant, connections at least, requests, closed by the server, by the clients) or quiet.
fn expected_server(variant: &str) -> Option<(f64, f64, f64, f64)> {
    match variant {
        // Python http.server, a client opening a new connection per request: the clients close
        "srv-py-new-conn" => Some((40.0, 40.0, 0.0, 40.0)),
        // http.server answering as HTTP/1.0 (its own default): it closes after every answer
        "srv-py-http10" => Some((40.0, 40.0, 40.0, 0.0)),
        // nginx with keepalive_timeout 0: it closes; plus run.sh's readiness probe (no request)
        "srv-nginx-ka-off" => Some((41.0, 40.0, 40.0, 1.0)),
        // keep-alive: 40 requests on one connection; six clients with 7 requests each
        "srv-py-keepalive" | "srv-nginx-keepalive" | "srv-nginx-few-clients" => None,
        _ => panic!("no expectation for {variant}"),
    }
}

const SERVER_VARIANTS: &[&str] = &[
    "srv-py-new-conn",
    "srv-py-http10",
    "srv-nginx-ka-off",
    "srv-py-keepalive",
    "srv-nginx-keepalive",
    "srv-nginx-few-clients",
];

fn check_server(r: &Report, variant: &str, ctx: &str) {
    assert_eq!(r.capture.unparsed_lines, 0, "{ctx}: {:?}", r.capture.unparsed_samples);
    let fs = findings(r, DET);
    let Some((conns, requests, by_server, by_clients)) = expected_server(variant) else {
        assert!(fs.is_empty(), "{ctx}: must stay quiet, got {fs:#?}");
        return;
    };
    assert_eq!(fs.len(), 1, "{ctx}: {fs:#?}");
    let f = fs[0];
    assert_eq!(f.severity, Severity::Info, "{ctx}");
    let listener = f.subject.strip_suffix(" (accepted)").unwrap_or("");
    assert!(is_loopback_endpoint(listener), "{ctx}: subject {}", f.subject);
    // the readiness probe may connect more than once when the server is slow to start
    assert!(metric(f, "connections") >= conns && metric(f, "connections") <= conns + 3.0, "{ctx}: {f:#?}");
    // (a live run once counted 39 of 40: the handler thread's read was printed before its
    // clone returned, and counted as another process's; the model now places such a task
    // from its first call, model::tests::a_task_printed_before_its_clone_returns_...)
    assert_eq!(metric(f, "requests"), requests, "{ctx}");
    assert_eq!(metric(f, "server_closed"), by_server, "{ctx}");
    assert!(metric(f, "client_closed") >= by_clients, "{ctx}");
    let server_closes = by_server > by_clients;
    assert_eq!(f.message.contains("this server closed"), server_closes, "{ctx}: {}", f.message);
    assert_eq!(f.fix.contains("keepalive_timeout"), server_closes, "{ctx}: {}", f.fix);
    // strace -s 32 keeps the request line and part of Host: whether the clients asked for the
    // close (Connection: close) is unknown, and the fix gives both sides, the clients' first
    let unseen = server_closes && metric(f, "ask_unseen") >= by_server - 1.0;
    if unseen {
        assert!(f.message.contains("whether the clients asked it to"), "{ctx}: {}", f.message);
        assert!(f.fix.starts_with("If the clients ask for the close"), "{ctx}: {}", f.fix);
    }
    assert_eq!(f.fix.contains("requests.Session"), !server_closes || unseen, "{ctx}: {}", f.fix);
    assert!(f.evidence.iter().any(|l| l.contains("accept")), "{ctx}: {:?}", f.evidence);
    // the request bytes are not in the report
    assert!(f.evidence.iter().all(|l| !l.contains("GET /feed")), "{ctx}: payload in evidence {:?}", f.evidence);
}

#[test]
fn recorded_server_side() {
    for v in SERVER_VARIANTS {
        for set in ["f-tt-T-yy", "f-tt"] {
            let r = analyze(&[&lab_trace(LAB, &format!("{v}.{set}.strace.gz"))]);
            check_server(&r, v, &format!("{v}.{set}"));
        }
    }
}

/// A handler thread's close printed after the accept that reused its number: under strace on a
/// loaded machine, thread A's `close(4 <unfinished ...>` can be followed by the acceptor's
/// `accept4(...) = 4` of the next connection, and only then by `<... close resumed>`. The kernel
/// freed 4 before the accept got it, so the close is of the earlier life; ending the connection
/// on 4 then lost the next one's request (a live run, 39 of 40). The recording is such a run.
#[test]
fn a_close_printed_after_its_number_was_reused_ends_nothing() {
    let trace = lab_trace(LAB, "srv-py-new-conn-loaded.f-tt-T-yy.strace.gz");
    // the order is in the recording: a close of N unfinished, an accept returning N, the resumption
    let text = read_text(&trace);
    let mut unfinished: Vec<(String, String)> = Vec::new();
    let mut seen = 0;
    for l in text.lines() {
        let mut f = l.splitn(3, ' ');
        let (Some(tid), Some(_), Some(call)) = (f.next(), f.next(), f.next()) else { continue };
        if let Some(fd) = call.strip_prefix("close(").filter(|c| c.ends_with("<unfinished ...>")) {
            unfinished.push((tid.to_string(), fd.split('<').next().unwrap_or("").to_string()));
        } else if call.starts_with("<... close resumed>") {
            unfinished.retain(|(t, _)| t != tid);
        } else if let Some(i) =
            call.rfind(") = ").filter(|_| call.starts_with("accept4(") || call.starts_with("<... accept4"))
        {
            let fd = call[i + 4..].split('<').next().unwrap_or("");
            seen += unfinished.iter().filter(|(_, f)| f == fd).count();
        }
    }
    assert_eq!(seen, 1, "the recording shows the reuse once");
    let r = analyze(&[&trace]);
    check_server(&r, "srv-py-new-conn", "srv-py-new-conn-loaded");
    let f = findings(&r, DET)[0];
    assert_eq!(metric(f, "connections"), 40.0);
    assert_eq!(metric(f, "client_closed"), 40.0, "{f:#?}");
}

#[test]
fn live_server_side() {
    for v in SERVER_VARIANTS {
        let (r, _trace) = live(v, &["-f", "-tt", "-T", "-yy"]);
        check_server(&r, v, &format!("live {v}"));
    }
}

/// Issue 15: "pgbench -C: 1,275 connections in 5 s with one transaction each", missed because
/// PostgreSQL's start-up exchange was counted as requests and a transaction is ~7 queries.
/// The start-up (SSLRequest, StartupMessage, authentication, up to the first query) is setup
/// now, and setup taking a quarter of a connection's life is churn whatever its requests.
/// tests/fixtures/servers/record-pgbench-churn.sh made the four recordings.
#[test]
fn pgbench_connection_per_transaction() {
    let dir = root().join("tests/fixtures/servers");
    for name in ["pgbench-C.f-tt-T-yy.strace.gz", "pgbench-C.slr"] {
        let r = analyze(&[&dir.join(name)]);
        let fs = findings(&r, DET);
        assert_eq!(fs.len(), 1, "{name}: {fs:#?}");
        let f = fs[0];
        assert!(is_loopback_endpoint(&f.subject), "{name}: {}", f.subject);
        // pgbench's set-up connection and one per transaction
        assert_eq!(metric(f, "connections"), 41.0, "{name}");
        // BEGIN, 3 UPDATEs, SELECT, INSERT, END per transaction, and the set-up's queries
        let rpc = metric(f, "requests_per_connection");
        assert!((6.0..=8.0).contains(&rpc), "{name}: {rpc}");
        assert!(metric(f, "setup_share") >= 0.25, "{name}: {f:#?}");
        assert!(f.message.contains("of their life spent setting them up"), "{name}: {}", f.message);
        assert!(metric(f, "handshake_s") > 0.0, "{name}: the start-up exchange is timed");
        assert_eq!(metric(f, "tls_handshakes"), 0.0, "{name}");
        assert!(f.severity >= Severity::Info, "{name}");
    }
    // the same severity under both tracers (the cost of 40 backend start-ups)
    let sev = |n: &str| findings(&analyze(&[&dir.join(n)]), DET)[0].severity;
    assert_eq!(sev("pgbench-C.f-tt-T-yy.strace.gz"), sev("pgbench-C.slr"));
    // one connection for all 40 transactions: quiet
    for name in ["pgbench.f-tt-T-yy.strace.gz", "pgbench.slr"] {
        let r = analyze(&[&dir.join(name)]);
        assert!(findings(&r, DET).is_empty(), "{name}: {:#?}", findings(&r, DET));
    }
}

/// Issue 27: "MariaDB with a connection per query (TCP and Unix socket) gets no finding from the
/// server or the client: the MySQL handshake (greeting, auth, query, COM_QUIT) is not recognised
/// as set-up the way PostgreSQL's is." Each connection was three request-like exchanges (the
/// handshake response, the query, COM_QUIT), over the two a churned connection may carry. A
/// server greeting as MySQL (sequence id 0, protocol 10, a version) is recognised now, on both
/// ends: only commands are requests, the handshake and authentication are set-up, COM_QUIT is
/// the client closing. tests/fixtures/servers/record-mariadb-churn.sh made the recordings
/// (MariaDB 10.11, the `mariadb` client once per query or one session for all of them; natively
/// 55 against 3,483 queries/s, mariadb-churn.native.txt).
#[test]
fn mariadb_connection_per_query() {
    let dir = root().join("tests/fixtures/servers");
    // the client side, traced whole: 100 `mariadb -e 'SELECT i'`, a connection (and process) each
    let r = analyze(&[&dir.join("mariadb-per-query.slr")]);
    let fs = findings(&r, DET);
    assert_eq!(fs.len(), 1, "{fs:#?}");
    let f = fs[0];
    assert!(is_loopback_endpoint(&f.subject), "{}", f.subject);
    assert_eq!(metric(f, "connections"), 100.0);
    assert_eq!(metric(f, "processes"), 100.0);
    assert_eq!(metric(f, "mysql_handshakes"), 100.0, "every server greeting recognised");
    // the query is the one request: not the handshake response, nor COM_QUIT
    assert_eq!(metric(f, "requests"), 100.0);
    assert_eq!(metric(f, "requests_per_connection"), 1.0);
    assert_eq!(metric(f, "tls_handshakes"), 0.0);
    assert!(f.message.contains("100 mysql handshakes"), "{}", f.message);
    // the set-up is timed: connect, and from the greeting to the server's OK
    let (hs, connect) = (metric(f, "handshake_s"), metric(f, "connect_s"));
    assert!(hs > 0.0 && hs < 1.0 && connect > 0.0 && connect < 1.0, "{f:#?}");
    let cost = f.cost.as_deref().unwrap_or("");
    assert!(cost.starts_with("99 of 100 connects and mysql handshakes"), "{cost}");
    assert!(cost.contains("in mysql handshakes"), "{cost}");
    // the severity is the rule's on the set-up time lost (loopback: well under a second)
    let wasted = metric(f, "wasted_s");
    assert!(wasted > 0.0 && wasted < 1.0, "{f:#?}");
    let want = if wasted >= 0.1 { Severity::Warning } else { Severity::Info };
    assert_eq!(f.severity, want, "{f:#?}");
    // one session for the same 100 queries: one connection, quiet
    let r = analyze(&[&dir.join("mariadb-one-conn.slr")]);
    assert!(findings(&r, DET).is_empty(), "{:#?}", findings(&r, DET));
    // the client over the server's unix socket: 50 queries, a connection each, named by its path
    let r = analyze(&[&dir.join("mariadb-per-query-unix.slr")]);
    let fs = findings(&r, DET);
    assert_eq!(fs.len(), 1, "{fs:#?}");
    let f = fs[0];
    assert!(f.subject.starts_with("unix:/tmp/") && f.subject.ends_with("/mysqld.sock"), "{}", f.subject);
    for k in ["connections", "mysql_handshakes", "requests", "processes"] {
        assert_eq!(metric(f, k), 50.0, "{k}: {f:#?}");
    }
    let wasted = metric(f, "wasted_s");
    assert_eq!(f.severity, if wasted >= 0.1 { Severity::Warning } else { Severity::Info }, "{f:#?}");

    // the server side: mariadbd attached 1 s under the per-query load, over TCP and its socket
    for (name, unix) in [("mariadb-server-tcp.slr", false), ("mariadb-server-unix.slr", true)] {
        let r = analyze(&[&dir.join(name)]);
        let fs = findings(&r, DET);
        assert_eq!(fs.len(), 1, "{name}: {fs:#?}");
        let f = fs[0];
        let listener = f.subject.strip_suffix(" (accepted)").unwrap_or("");
        if unix {
            // named by its path, which the attach read from /proc
            assert!(listener.starts_with("/tmp/") && listener.ends_with("/mysqld.sock"), "{name}: {}", f.subject);
        } else {
            assert!(is_loopback_endpoint(listener), "{name}: {}", f.subject);
        }
        // a server-side finding is info: the round trips are the clients'
        assert_eq!(f.severity, Severity::Info, "{name}");
        let n = metric(f, "connections");
        assert!(n >= 10.0, "{name}: {f:#?}");
        assert_eq!(metric(f, "mysql_handshakes"), n, "{name}: every connection greeted as MySQL");
        // one query each (a connection the window cut before its query may have none)
        let rpc = metric(f, "requests_per_connection");
        assert!(rpc > 0.9 && rpc <= 1.0, "{name}: {f:#?}");
        // COM_QUIT is the client closing: the clients closed, not this server
        assert!(metric(f, "client_closed") >= n - 2.0, "{name}: {f:#?}");
        assert!(
            f.message.contains("mysql handshakes") && f.message.contains("the clients closed"),
            "{name}: {}",
            f.message
        );
        assert!(f.fix.contains("`mysql`/`mariadb` command line client"), "{name}: {}", f.fix);
        // the query bytes are not in the report
        assert!(f.evidence.iter().all(|l| !l.contains("SELECT")), "{name}: payload in evidence {:?}", f.evidence);
    }
    // attached while one session runs its queries: quiet
    let r = analyze(&[&dir.join("mariadb-server-one-conn.slr")]);
    assert!(findings(&r, DET).is_empty(), "{:#?}", findings(&r, DET));
}

/// A non-blocking connect that getsockopt(SO_ERROR) then reports refused made no connection:
/// the retry loops of lab/retry-storm (retry-storm's finding) are no connection churn, nor is
/// urllib3 backing off between 11 refused attempts.
#[test]
fn refused_non_blocking_connects_are_no_connections() {
    for v in ["c-nonblock", "py-loop", "py-urllib3", "py-urllib3-backoff"] {
        let r = analyze(&[&lab_variant("retry-storm", v, "f-tt-T-yy")]);
        assert!(findings(&r, DET).is_empty(), "{v}: {:#?}", findings(&r, DET));
    }
}

#[test]
fn redis_client_per_request() {
    // lab/connection-churn/redis: redis-py, 200 requests (a SET and a GET each) against a
    // redis-server on loopback; a new redis.Redis per request opens a connection per request
    let r = analyze(&[&lab_trace(LAB, "redis-new-client.f-tt-T-yy.strace.gz")]);
    let f = findings(&r, DET);
    assert_eq!(f.len(), 1, "{f:#?}");
    let f = f[0];
    assert_eq!(metric(f, "connections"), 200.0, "{f:#?}");
    assert_eq!(metric(f, "requests"), 400.0, "{f:#?}");
    assert_eq!(metric(f, "requests_per_connection"), 2.0, "{f:#?}");
    assert!(is_loopback_endpoint(&f.subject), "{}", f.subject);
    // a loopback connect costs microseconds: worth naming, not a warning
    assert_eq!(f.severity, Severity::Info, "{f:#?}");
    assert!(f.fix.contains("redis-py: one redis.Redis"), "{}", f.fix);
    // the fix it names: one client for the program, its pool keeping one connection
    let good = analyze(&[&lab_trace(LAB, "redis-one-client.f-tt-T-yy.strace.gz")]);
    assert!(findings(&good, DET).is_empty(), "{:#?}", findings(&good, DET));
    assert_eq!(syscall(&good, "connect").calls, 1, "one connection for 400 commands");
}
