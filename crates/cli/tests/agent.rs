//! `syslint agent` (issue 32, first step): duty-cycled eBPF windows, findings kept across them,
//! served as Prometheus text and JSON. Live: the timer-polling lab's program (timer.c), BAD
//! (select() with a 20 ms timeout, 50 wake-ups a second) and GOOD (one blocking select), both
//! watched by name; the test scrapes the agent's /metrics over loopback while they run.

use crate::common::*;
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `GET path` on the agent, the body.
fn get(addr: &str, path: &str) -> String {
    let mut c = std::net::TcpStream::connect(addr).expect("connect to the agent");
    c.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    write!(c, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").expect("request");
    let mut out = String::new();
    c.read_to_string(&mut out).expect("response");
    assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
    out.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default()
}

/// The value of the series whose line starts with `prefix` (name and labels), if any.
fn series(metrics: &str, prefix: &str) -> Option<f64> {
    metrics.lines().find(|l| l.starts_with(prefix)).and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn the_agent_serves_what_its_windows_found_to_prometheus() {
    assert_bpf_works("the agent test");
    let dir = std::env::temp_dir().join(format!("syslint-agent-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    // names of their own (a process name is at most 15 bytes), so that no other test's timer
    // is watched
    let n = std::process::id() % 100_000;
    let (bad, good) = (format!("tbad{n}"), format!("tgood{n}"));
    let built = Command::new("cc")
        .args(["-O1", "-o"])
        .arg(dir.join(&bad))
        .arg(root().join("lab/timer-polling/timer.c"))
        .status()
        .expect("cc");
    assert!(built.success());
    std::fs::copy(dir.join(&bad), dir.join(&good)).expect("copy");
    // bounded: the program's own alarm(30), and killed by pid when the test ends
    let bad_proc =
        Killed(Command::new(dir.join(&bad)).args(["select20", "12000"]).stdout(Stdio::null()).spawn().expect("bad"));
    let _good_proc =
        Killed(Command::new(dir.join(&good)).args(["block", "12000"]).stdout(Stdio::null()).spawn().expect("good"));
    let mut agent = Killed(
        Command::new(bin())
            .args(["agent", "--comm", &bad, "--comm", &good, "--window", "2s", "--every", "3s", "--for", "8s"])
            .args(["--metrics-listen", "127.0.0.1:0"])
            .env("XDG_CONFIG_HOME", root().join("target/no-user-config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("syslint agent"),
    );
    // the address it serves on is its first line
    let mut err = agent.0.stderr.take().expect("stderr");
    let mut first = Vec::new();
    let mut byte = [0u8; 1];
    while err.read(&mut byte).is_ok_and(|n| n == 1) && byte[0] != b'\n' {
        first.push(byte[0]);
    }
    let first = String::from_utf8_lossy(&first).to_string();
    let addr = first.split("http://").nth(1).and_then(|s| s.split('/').next()).unwrap_or_else(|| panic!("{first}"));
    // scrape until a window is in
    let t0 = Instant::now();
    let metrics = loop {
        let m = get(addr, "/metrics");
        if series(&m, "syslint_windows_total").is_some_and(|w| w >= 1.0) || t0.elapsed() > Duration::from_secs(20) {
            break m;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let bad_series =
        format!("syslint_findings_total{{detector=\"timer-polling\",severity=\"warning\",program=\"{bad}\"}}");
    assert!(series(&metrics, &bad_series).is_some_and(|v| v >= 1.0), "{metrics}");
    let active = format!("syslint_finding_active{{detector=\"timer-polling\",severity=\"warning\",program=\"{bad}\"}}");
    assert_eq!(series(&metrics, &active), Some(1.0), "{metrics}");
    assert!(!metrics.contains(&format!("program=\"{good}\"")), "GOOD has no finding: {metrics}");
    assert!(series(&metrics, "syslint_syscalls_total").is_some_and(|v| v > 0.0), "{metrics}");
    assert_eq!(series(&metrics, "syslint_lost_events_total"), Some(0.0), "{metrics}");
    assert!(metrics.trim_end().ends_with("# EOF"), "OpenMetrics text ends with # EOF: {metrics}");
    // the same as JSON, with the latest window's evidence
    let json: serde_json::Value = serde_json::from_str(&get(addr, "/findings")).expect("JSON");
    let list = json["findings"].as_array().expect("a list");
    let f = list.iter().find(|f| f["program"] == bad.as_str()).unwrap_or_else(|| panic!("{json:#}"));
    assert_eq!(f["detector"], "timer-polling");
    assert!(f["latest"]["evidence"].as_array().is_some_and(|e| !e.is_empty()), "{f:#}");
    // --for ends it; its last words list what it kept, and the programs still run
    let st = agent.0.wait().expect("agent exits");
    let mut rest = String::new();
    err.read_to_string(&mut rest).expect("stderr");
    assert!(st.success(), "{rest}");
    assert!(rest.contains(&format!("timer-polling warning in {bad}")), "{rest}");
    assert!(
        bad_proc.0.id() > 0 && std::path::Path::new(&format!("/proc/{}", bad_proc.0.id())).exists(),
        "BAD still runs"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_agent_needs_something_to_watch_and_windows_that_fit() {
    let o = run(&["agent"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("nothing to watch: give --comm NAME"), "{}", stderr(&o));
    let o = run(&["agent", "--comm", "x", "--window", "10s", "--every", "5s"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--every (5s) must be at least --window (10s)"), "{}", stderr(&o));
}
