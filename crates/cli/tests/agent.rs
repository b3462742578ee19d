//! `syslint agent` (issue 32, first step): duty-cycled eBPF windows, findings kept across them,
//! served as Prometheus text and JSON. Live: the timer-polling lab's program (timer.c), BAD
//! (select() with a 20 ms timeout, 50 wake-ups a second) and GOOD (one blocking select), both
//! watched by name; the test scrapes the agent's /metrics over loopback while they run.

use crate::common::*;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
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
    metrics.lines().find(|l| l.starts_with(prefix)).and_then(value)
}

/// The line of the series `name` with these labels (among others), if any.
fn series_with<'m>(metrics: &'m str, name: &str, labels: &[(&str, &str)]) -> Option<&'m str> {
    metrics.lines().find(|l| {
        l.strip_prefix(name).is_some_and(|r| r.starts_with('{'))
            && labels.iter().all(|(k, v)| l.contains(&format!("{k}=\"{v}\"")))
    })
}

/// A series line's value.
fn value(line: &str) -> Option<f64> {
    line.rsplit(' ').next()?.parse().ok()
}

/// The unified (v2) cgroup hierarchy: the whole of /sys/fs/cgroup, or /sys/fs/cgroup/unified
/// on a hybrid host.
fn cgroup_v2_root() -> &'static std::path::Path {
    ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
        .iter()
        .map(std::path::Path::new)
        .find(|p| p.join("cgroup.procs").exists())
        .expect("a cgroup v2 hierarchy (/sys/fs/cgroup or /sys/fs/cgroup/unified)")
}

/// The timer-polling lab's program (lab/timer-polling/timer.c) built in `dir` under each name
/// (a process name is at most 15 bytes).
pub fn build_timers(dir: &std::path::Path, names: &[&str]) {
    let first = dir.join(names[0]);
    let built = Command::new("cc")
        .args(["-O1", "-o"])
        .arg(&first)
        .arg(root().join("lab/timer-polling/timer.c"))
        .status()
        .expect("cc");
    assert!(built.success());
    for n in &names[1..] {
        std::fs::copy(&first, dir.join(n)).expect("copy");
    }
}

/// The timer-polling lab's BAD and GOOD programs under names of their own (a process name is
/// at most 15 bytes; no other test's timer is watched), and the agent watching both by name in
/// 2 s windows every 3 s for `secs`, serving on a free loopback port.
struct Setup {
    dir: std::path::PathBuf,
    bad: String,
    good: String,
    bad_proc: Killed,
    _good_proc: Killed,
    agent: Killed,
    /// The agent's stderr after its first line.
    err: std::process::ChildStderr,
    /// Where it serves (`127.0.0.1:PORT`).
    addr: String,
}

fn setup(tag: &str, secs: u32) -> Setup {
    setup_with(tag, secs, &[], |_| {})
}

/// [`setup`], with more arguments for the agent, and `before_agent` given BAD's pid once the
/// programs run and before the agent starts.
fn setup_with(tag: &str, secs: u32, more: &[&str], before_agent: impl FnOnce(u32)) -> Setup {
    setup_watching(tag, secs, more, |bad, _| {
        before_agent(bad);
        None
    })
}

/// [`setup_with`], whose `before_agent` (given BAD's and GOOD's pids) says what the agent
/// watches instead of the two programs' names.
fn setup_watching(
    tag: &str,
    secs: u32,
    more: &[&str],
    before_agent: impl FnOnce(u32, u32) -> Option<Vec<String>>,
) -> Setup {
    let dir = std::env::temp_dir().join(format!("syslint-agent-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let n = std::process::id() % 100_000;
    let (bad, good) = (format!("{tag}b{n}"), format!("{tag}g{n}"));
    build_timers(&dir, &[&bad, &good]);
    // bounded: the program's own alarm(30), and killed by pid when the test ends (it waits
    // 20 s at most)
    let ms = (secs * 1000 + 4000).min(20_000).to_string();
    let spawn = |name: &str, mode: &str| {
        Killed(Command::new(dir.join(name)).args([mode, &ms]).stdout(Stdio::null()).spawn().expect("timer"))
    };
    let bad_proc = spawn(&bad, "select20");
    let good_proc = spawn(&good, "block");
    let watch = before_agent(bad_proc.0.id(), good_proc.0.id())
        .unwrap_or_else(|| ["--comm", &bad, "--comm", &good].map(String::from).to_vec());
    let mut args: Vec<String> = watch;
    // the defaults' timeline compressed twenty times (2 s every 3 s, not every 60 s): the CPU
    // budget scaled with it (5% of a core over a minute, 100% over 3 s)
    args.extend(["--window", "2s", "--every", "3s", "--cpu-budget", "100%", "--for"].map(String::from));
    args.push(format!("{secs}s"));
    args.extend(more.iter().map(ToString::to_string));
    let (agent, err, addr) = serving_agent(&args, &[]);
    Setup { dir, bad, good, bad_proc, _good_proc: good_proc, agent, err, addr }
}

/// `syslint agent ARGS --metrics-listen 127.0.0.1:0` with `env` (no OTLP endpoint or user
/// config from the test's environment), and the address it serves on, read from its first
/// line; the rest of its stderr is left to read.
fn serving_agent(args: &[String], env: &[(&str, &str)]) -> (Killed, std::process::ChildStderr, String) {
    let mut agent = Killed(
        Command::new(bin())
            .arg("agent")
            .args(args)
            .args(["--metrics-listen", "127.0.0.1:0"])
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env("XDG_CONFIG_HOME", root().join("target/no-user-config"))
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("syslint agent"),
    );
    let mut err = agent.0.stderr.take().expect("stderr");
    let mut first = Vec::new();
    let mut byte = [0u8; 1];
    while err.read(&mut byte).is_ok_and(|n| n == 1) && byte[0] != b'\n' {
        first.push(byte[0]);
    }
    let first = String::from_utf8_lossy(&first).to_string();
    let addr = first.split("http://").nth(1).and_then(|s| s.split('/').next()).unwrap_or_else(|| panic!("{first}"));
    (agent, err, addr.to_string())
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn the_agent_serves_what_its_windows_found_to_prometheus() {
    assert_bpf_works("the agent test");
    let mut s = setup("ta", 8);
    let addr = s.addr.clone();
    // scrape until a window is in
    let t0 = Instant::now();
    let metrics = loop {
        let m = get(&addr, "/metrics");
        if series(&m, "syslint_windows_total").is_some_and(|w| w >= 1.0) || t0.elapsed() > Duration::from_secs(20) {
            break m;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let bad = &s.bad;
    let labels = [("detector", "timer-polling"), ("severity", "warning"), ("program", bad.as_str())];
    let found = series_with(&metrics, "syslint_findings_total", &labels);
    assert!(found.and_then(value).is_some_and(|v| v >= 1.0), "{metrics}");
    let active = series_with(&metrics, "syslint_finding_active", &labels);
    assert_eq!(active.and_then(value), Some(1.0), "{metrics}");
    assert!(!metrics.contains(&format!("program=\"{}\"", s.good)), "GOOD has no finding: {metrics}");
    assert!(series(&metrics, "syslint_syscalls_total").is_some_and(|v| v > 0.0), "{metrics}");
    // BAD's syscall rate while traced: about 50 select() a second (and their reads)
    let calls = series_with(&metrics, "syslint_program_syscalls_total", &[("program", bad.as_str())]).and_then(value);
    let traced =
        series_with(&metrics, "syslint_program_traced_seconds_total", &[("program", bad.as_str())]).and_then(value);
    let rate = calls.zip(traced).map(|(c, t)| c / t);
    assert!(rate.is_some_and(|r| r > 25.0), "BAD's syscalls per traced second {rate:?}: {metrics}");
    let errors = series_with(&metrics, "syslint_program_syscall_errors_total", &[("program", bad.as_str())]);
    assert!(errors.and_then(value).is_some(), "{metrics}");
    assert_eq!(series(&metrics, "syslint_lost_events_total"), Some(0.0), "{metrics}");
    assert!(metrics.trim_end().ends_with("# EOF"), "OpenMetrics text ends with # EOF: {metrics}");
    // the same as JSON, with the latest window's evidence
    let json: serde_json::Value = serde_json::from_str(&get(&addr, "/findings")).expect("JSON");
    let list = json["findings"].as_array().expect("a list");
    let f = list.iter().find(|f| f["program"] == bad.as_str()).unwrap_or_else(|| panic!("{json:#}"));
    assert_eq!(f["detector"], "timer-polling");
    assert!(f["latest"]["evidence"].as_array().is_some_and(|e| !e.is_empty()), "{f:#}");
    // --for ends it; its last words list what it kept, and the programs still run
    let st = s.agent.0.wait().expect("agent exits");
    let mut rest = String::new();
    s.err.read_to_string(&mut rest).expect("stderr");
    assert!(st.success(), "{rest}");
    assert!(rest.contains(&format!("timer-polling warning in {bad}")), "{rest}");
    let pid = s.bad_proc.0.id();
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists(), "BAD still runs");
    let _ = std::fs::remove_dir_all(&s.dir);
}

/// Cgroups made by a test, removed (innermost first) when it ends, after its processes.
struct Cgroups(Vec<std::path::PathBuf>);

impl Drop for Cgroups {
    fn drop(&mut self) {
        for d in self.0.iter().rev() {
            for _ in 0..50 {
                if std::fs::remove_dir(d).is_ok() || !d.exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

/// A finding names the container its program runs in: the test puts the BAD program in a
/// cgroup of its own, named as podman names a container's (`libpod-<64 hex>.scope`, in the
/// unified hierarchy); the agent traces each cgroup's processes in windows of their own, and
/// the BAD finding's series carry that cgroup and the container's short id, GOOD (left where
/// it was) has none.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn the_agent_names_the_cgroup_and_container_of_a_finding() {
    assert_bpf_works("the agent test");
    // the unified (v2) hierarchy: the whole of /sys/fs/cgroup, or /sys/fs/cgroup/unified on a
    // hybrid host
    let root = cgroup_v2_root();
    let n = std::process::id();
    let id = format!("{:032x}{:032x}", 0x5157_1000_u128 + u128::from(n), u128::from(n) << 64 | 0xabc);
    let parent = root.join(format!("syslint-agent-test-{n}"));
    let scope = parent.join(format!("libpod-{id}.scope"));
    let mut cgroups = Cgroups(Vec::new());
    let path = format!("/syslint-agent-test-{n}/libpod-{id}.scope");
    let s = setup_with("tc", 8, &[], |bad| {
        std::fs::create_dir_all(&scope).expect("a cgroup (root)");
        cgroups.0.extend([parent.clone(), scope.clone()]);
        std::fs::write(scope.join("cgroup.procs"), bad.to_string()).expect("move BAD into it");
    });
    let t0 = Instant::now();
    let metrics = loop {
        let m = get(&s.addr, "/metrics");
        if series(&m, "syslint_windows_total").is_some_and(|w| w >= 2.0) || t0.elapsed() > Duration::from_secs(20) {
            break m;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let labels = [
        ("detector", "timer-polling"),
        ("program", s.bad.as_str()),
        ("container", &id[..12]),
        ("cgroup", path.as_str()),
    ];
    let found = series_with(&metrics, "syslint_findings_total", &labels);
    assert!(found.and_then(value).is_some_and(|v| v >= 1.0), "{metrics}");
    assert!(!metrics.contains(&format!("program=\"{}\"", s.good)), "GOOD has no finding: {metrics}");
    let json: serde_json::Value = serde_json::from_str(&get(&s.addr, "/findings")).expect("JSON");
    // BAD's entry in that cgroup (its child, forked before the move, is watched where it was)
    let f = json["findings"]
        .as_array()
        .and_then(|l| l.iter().find(|f| f["program"] == s.bad.as_str() && f["cgroup"] == path.as_str()));
    let f = f.unwrap_or_else(|| panic!("{json:#}"));
    assert_eq!(f["container"], id.as_str(), "{f:#}");
    let _ = std::fs::remove_dir_all(&s.dir);
    drop(s);
    drop(cgroups);
}

/// A finding in a Kubernetes pod names the pod and its namespace: the test puts BAD in a
/// cgroup named as the kubelet's systemd driver names a burstable pod's container
/// (`kubepods-burstable-pod<UID>.slice/cri-containerd-<64 hex>.scope`) and makes the pod's log
/// directory as the kubelet names it (`NAMESPACE_NAME_UID`, in a directory given by
/// --pod-logs): the series carry `pod` and `namespace`, /findings the uid too.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn the_agent_names_the_pod_and_namespace_of_a_finding() {
    assert_bpf_works("the agent test");
    let root = cgroup_v2_root();
    let n = std::process::id();
    let uid = format!("{:08x}-5f60-4a8b-9c0d-1e2f3a4b5c6d", n);
    let id = format!("{:032x}{:032x}", 0x6b8_5000_u128 + u128::from(n), 0xdef_u128);
    let top = format!("syslint-agent-pod-{n}");
    let slice = format!("kubepods-burstable-pod{}.slice", uid.replace('-', "_"));
    let scope = root.join(&top).join(&slice).join(format!("cri-containerd-{id}.scope"));
    let logs = std::env::temp_dir().join(format!("syslint-pod-logs-{n}"));
    std::fs::create_dir_all(logs.join(format!("shop_web-7d4b9c-x2x9q_{uid}/app"))).expect("pod log dir");
    let mut cgroups = Cgroups(Vec::new());
    let logs_arg = logs.display().to_string();
    let s = setup_with("tk", 8, &["--pod-logs", &logs_arg], |bad| {
        std::fs::create_dir_all(&scope).expect("a cgroup (root)");
        cgroups.0.extend([root.join(&top), root.join(&top).join(&slice), scope.clone()]);
        std::fs::write(scope.join("cgroup.procs"), bad.to_string()).expect("move BAD into it");
    });
    let labels = [
        ("detector", "timer-polling"),
        ("program", s.bad.as_str()),
        ("container", &id[..12]),
        ("pod", "web-7d4b9c-x2x9q"),
        ("namespace", "shop"),
    ];
    // BAD's child, forked before the move, stays where it was: its cgroup gets windows too
    let t0 = Instant::now();
    let metrics = loop {
        let m = get(&s.addr, "/metrics");
        if series_with(&m, "syslint_findings_total", &labels).is_some() || t0.elapsed() > Duration::from_secs(20) {
            break m;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let found = series_with(&metrics, "syslint_findings_total", &labels);
    assert!(found.and_then(value).is_some_and(|v| v >= 1.0), "{metrics}");
    let json: serde_json::Value = serde_json::from_str(&get(&s.addr, "/findings")).expect("JSON");
    // BAD's entry in the pod's cgroup (its child's, where it was, is another)
    let f = json["findings"]
        .as_array()
        .and_then(|l| l.iter().find(|f| f["program"] == s.bad.as_str() && f["pod_uid"] == uid.as_str()));
    let f = f.unwrap_or_else(|| panic!("{json:#}"));
    assert_eq!((f["pod"].as_str(), f["namespace"].as_str()), (Some("web-7d4b9c-x2x9q"), Some("shop")), "{f:#}");
    let _ = std::fs::remove_dir_all(&s.dir);
    let _ = std::fs::remove_dir_all(&logs);
    drop(s);
    drop(cgroups);
}

/// A real Prometheus server (Debian's `prometheus`, started by the test on loopback with its
/// own data directory) scrapes the agent every second; its query API then has the BAD
/// program's finding series with its labels, and none for GOOD; and every query of the shipped
/// Grafana dashboard (deploy/grafana) runs there, over series the agent serves.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn a_prometheus_server_scrapes_the_findings() {
    need(&["prometheus"]);
    assert_bpf_works("the agent test");
    let s = setup("tp", 14);
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        l.local_addr().expect("addr").port()
    };
    let conf = s.dir.join("prometheus.yml");
    std::fs::write(
        &conf,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: syslint\n    static_configs:\n      - targets: ['{}']\n",
            s.addr
        ),
    )
    .expect("config");
    let _prom = Killed(
        Command::new("prometheus")
            .arg(format!("--config.file={}", conf.display()))
            .arg(format!("--storage.tsdb.path={}", s.dir.join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus"),
    );
    let api = format!("127.0.0.1:{port}");
    let query = "/api/v1/query?query=syslint_findings_total";
    let t0 = Instant::now();
    let result = loop {
        let body = std::net::TcpStream::connect(&api).ok().map(|_| get(&api, query));
        let found = body.as_deref().and_then(|b| serde_json::from_str::<serde_json::Value>(b).ok()).and_then(|v| {
            let r = v["data"]["result"].as_array()?.clone();
            (!r.is_empty()).then_some(r)
        });
        if let Some(r) = found {
            break r;
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "no syslint_findings_total in Prometheus: {body:?}");
        std::thread::sleep(Duration::from_millis(500));
    };
    let bad = result.iter().find(|r| r["metric"]["program"] == s.bad.as_str()).unwrap_or_else(|| panic!("{result:#?}"));
    assert_eq!(bad["metric"]["detector"], "timer-polling", "{bad:#}");
    assert_eq!(bad["metric"]["severity"], "warning", "{bad:#}");
    assert_eq!(bad["metric"]["job"], "syslint", "{bad:#}");
    assert!(!result.iter().any(|r| r["metric"]["program"] == s.good.as_str()), "{result:#?}");
    // the shipped Grafana dashboard's queries, run by the same Prometheus: each is valid
    // PromQL over series the agent serves, and the findings panels show BAD's
    let metrics = get(&s.addr, "/metrics");
    let dash: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root().join("deploy/grafana/syslint-agent.json")).expect("dashboard"))
            .expect("dashboard JSON");
    let mut exprs: Vec<String> = dash["panels"]
        .as_array()
        .expect("panels")
        .iter()
        .flat_map(|p| p["targets"].as_array().into_iter().flatten())
        .filter_map(|t| t["expr"].as_str().map(String::from))
        .collect();
    for v in dash["templating"]["list"].as_array().expect("variables") {
        // label_values(METRIC, LABEL): the metric's series must exist
        if let Some(m) =
            v["definition"].as_str().and_then(|d| d.strip_prefix("label_values(")).and_then(|d| d.split(',').next())
        {
            exprs.push(m.trim().to_string());
        }
    }
    assert!(exprs.len() >= 10, "{exprs:?}");
    let instant = |e: &str| -> serde_json::Value {
        let e = e.replace("$instance", ".*").replace("$detector", ".*").replace("$__rate_interval", "1m");
        let body = get(&api, &format!("/api/v1/query?query={}", percent(&e)));
        let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("{e}: {body}"));
        assert_eq!(v["status"], "success", "{e}: {body}");
        v
    };
    for e in &exprs {
        instant(e);
        let mut rest = e.as_str();
        while let Some(i) = rest.find("syslint_") {
            let name: String = rest[i..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            let served = metrics.lines().any(|l| l.strip_prefix(&name).is_some_and(|r| r.starts_with(['{', ' '])));
            assert!(served, "the dashboard queries {name}, which the agent does not serve: {metrics}");
            rest = &rest[i + name.len()..];
        }
    }
    let by_severity = instant(&exprs[0]);
    let warning =
        by_severity["data"]["result"].as_array().and_then(|r| r.iter().find(|x| x["metric"]["severity"] == "warning"));
    assert!(warning.is_some_and(|w| w["value"][1].as_str().is_some_and(|v| v != "0")), "{by_severity:#}");
    let _ = std::fs::remove_dir_all(&s.dir);
}

/// A PromQL query as a URL query value.
fn percent(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A real OpenTelemetry Collector (tools/otelcol, built by scripts/otelcol.sh) on a free
/// loopback port, its `otlp` receiver's http protocol configured with `tls` (YAML lines under
/// `http:`, or none), its logs and metrics written by the `file` exporter to `out` (a JSON
/// line per request, flushed every 100 ms).
struct Collector {
    _proc: Killed,
    port: u16,
    out: std::path::PathBuf,
    dir: std::path::PathBuf,
}

fn collector(tag: &str, tls: &str) -> Collector {
    let built = Command::new(root().join("scripts/otelcol.sh")).stderr(Stdio::inherit()).output().expect("otelcol.sh");
    assert!(built.status.success(), "scripts/otelcol.sh could not build the collector (scripts/test.sh prepares it)");
    let collector = String::from_utf8_lossy(&built.stdout).trim().to_string();
    let dir = std::env::temp_dir().join(format!("syslint-otel-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
    let out = dir.join("otlp.json");
    let conf = dir.join("otelcol.yaml");
    std::fs::write(
        &conf,
        format!(
            "receivers:\n  otlp:\n    protocols:\n      http:\n        endpoint: 127.0.0.1:{port}\n{tls}\
             exporters:\n  file:\n    path: {}\n    format: json\n    flush_interval: 100ms\n\
             service:\n  telemetry:\n    metrics:\n      level: none\n\
             \x20 pipelines:\n    logs:\n      receivers: [otlp]\n      exporters: [file]\n\
             \x20   metrics:\n      receivers: [otlp]\n      exporters: [file]\n",
            out.display()
        ),
    )
    .expect("config");
    let mut col = Killed(
        Command::new(&collector)
            .arg(format!("--config={}", conf.display()))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("otelcol.log")).expect("log"))
            .spawn()
            .expect("otelcol"),
    );
    let t0 = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if t0.elapsed() > Duration::from_secs(20) || col.0.try_wait().ok().flatten().is_some() {
            let _ = col.0.kill();
            let e = std::fs::read_to_string(dir.join("otelcol.log")).unwrap_or_default();
            panic!("the collector did not listen on 127.0.0.1:{port}: {e}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Collector { _proc: col, port, out, dir }
}

impl Collector {
    /// The file exporter's JSON lines, once one holds log records (or after 10 s).
    fn lines_with_logs(&self) -> Vec<serde_json::Value> {
        let t0 = Instant::now();
        loop {
            let text = std::fs::read_to_string(&self.out).unwrap_or_default();
            let v: Vec<serde_json::Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
            let has_logs = v.iter().any(|l| l.get("resourceLogs").is_some());
            if has_logs || t0.elapsed() > Duration::from_secs(10) {
                return v;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A value of an OTLP attribute list (string or int), by key.
fn attr(attrs: &serde_json::Value, key: &str) -> Option<String> {
    attrs.as_array()?.iter().find(|a| a["key"] == key).and_then(|a| {
        let v = &a["value"];
        v["stringValue"].as_str().map(String::from).or_else(|| v["intValue"].as_str().map(String::from))
    })
}

/// Every log record in the file exporter's lines: (resource attributes, scope, record).
fn log_records(lines: &[serde_json::Value]) -> Vec<(serde_json::Value, serde_json::Value, serde_json::Value)> {
    let mut records = Vec::new();
    for rl in lines.iter().filter_map(|l| l["resourceLogs"].as_array()).flatten() {
        for sl in rl["scopeLogs"].as_array().into_iter().flatten() {
            for r in sl["logRecords"].as_array().into_iter().flatten() {
                records.push((rl["resource"]["attributes"].clone(), sl["scope"].clone(), r.clone()));
            }
        }
    }
    records
}

/// A real OpenTelemetry Collector (tools/otelcol: the collector's own Go modules, its `otlp`
/// receiver and the contrib `file` exporter, built by scripts/otelcol.sh) on loopback takes the
/// agent's OTLP/HTTP export: its file has BAD's finding as a log record, with the program and
/// host as resource attributes and the change it was (found), and the finding's series as
/// OTLP metrics; nothing about GOOD.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn an_opentelemetry_collector_receives_the_findings() {
    assert_bpf_works("the agent test");
    let col = collector("plain", "");
    let port = col.port;
    let endpoint = format!("http://127.0.0.1:{port}");
    let mut s = setup_with("to", 8, &["--otlp-endpoint", &endpoint], |_| {});
    let st = s.agent.0.wait().expect("agent exits");
    let mut rest = String::new();
    s.err.read_to_string(&mut rest).expect("stderr");
    assert!(st.success(), "{rest}");
    assert!(rest.contains("exports failed") && rest.contains(", 0 exports failed"), "{rest}");
    let (bad, good) = (s.bad.as_str(), s.good.as_str());
    let lines = col.lines_with_logs();
    let records = log_records(&lines);
    let (res, scope, rec) = records
        .iter()
        .find(|(res, _, _)| attr(res, "process.executable.name").as_deref() == Some(bad))
        .unwrap_or_else(|| panic!("no log record about {bad} in the collector's file: {lines:#?}\n{rest}"));
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("hostname");
    assert_eq!(attr(res, "host.name").as_deref(), Some(host.trim()), "{res:#}");
    assert_eq!(scope["name"], "syslint", "{scope:#}");
    assert_eq!(attr(&rec["attributes"], "syslint.detector").as_deref(), Some("timer-polling"), "{rec:#}");
    assert_eq!(attr(&rec["attributes"], "syslint.change").as_deref(), Some("found"), "{rec:#}");
    assert_eq!(attr(&rec["attributes"], "syslint.severity").as_deref(), Some("warning"), "{rec:#}");
    assert_eq!(rec["severityText"], "WARN", "{rec:#}");
    assert_eq!(rec["eventName"], "syslint.finding", "{rec:#}");
    assert!(rec["body"]["stringValue"].as_str().is_some_and(|b| b.starts_with("timer-polling: ")), "{rec:#}");
    // found once: the later windows saw it again as it was
    let about_bad = records.iter().filter(|(r, _, _)| attr(r, "process.executable.name").as_deref() == Some(bad));
    assert_eq!(about_bad.count(), 1, "{records:#?}");
    assert!(
        !records.iter().any(|(r, _, _)| attr(r, "process.executable.name").as_deref() == Some(good)),
        "{records:#?}"
    );
    // the series: the finding active, windows counted
    let metrics: Vec<&serde_json::Value> = lines
        .iter()
        .filter_map(|l| l["resourceMetrics"].as_array())
        .flatten()
        .flat_map(|rm| rm["scopeMetrics"].as_array().into_iter().flatten())
        .flat_map(|sm| sm["metrics"].as_array().into_iter().flatten())
        .collect();
    let active = metrics
        .iter()
        .filter(|m| m["name"] == "syslint.finding.active")
        .flat_map(|m| m["gauge"]["dataPoints"].as_array().into_iter().flatten())
        .find(|p| attr(&p["attributes"], "process.executable.name").as_deref() == Some(bad));
    let active = active.unwrap_or_else(|| panic!("no syslint.finding.active for {bad}: {metrics:#?}"));
    assert_eq!(active["asInt"], "1", "{active:#}");
    let calls = metrics
        .iter()
        .filter(|m| m["name"] == "syslint.program.syscalls")
        .flat_map(|m| m["sum"]["dataPoints"].as_array().into_iter().flatten())
        .find(|p| attr(&p["attributes"], "process.executable.name").as_deref() == Some(bad));
    let calls = calls.and_then(|p| p["asInt"].as_str()).and_then(|v| v.parse::<u64>().ok());
    assert!(calls.is_some_and(|c| c > 0), "syslint.program.syscalls for {bad}: {metrics:#?}");
    let windows = metrics.iter().rfind(|m| m["name"] == "syslint.windows").expect("syslint.windows");
    assert_eq!(windows["sum"]["isMonotonic"], true, "{windows:#}");
    assert!(windows["sum"]["dataPoints"][0]["asInt"]
        .as_str()
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|v| v >= 1));
    drop(col);
    let _ = std::fs::remove_dir_all(&s.dir);
}

/// A certificate authority made for one test by the openssl command line (EC P-256, valid two
/// days), and certificates it signed: `ca.pem`, and `NAME.pem` + `NAME.key` per `make`.
struct Pki(std::path::PathBuf);

impl Pki {
    fn new(dir: &std::path::Path) -> Pki {
        let pki = Pki(dir.to_path_buf());
        pki.openssl(
            &["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
            &["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=syslint test CA"],
        );
        pki
    }

    /// A certificate for `name`, with these X.509v3 extensions (subjectAltName, usage).
    fn make(&self, name: &str, ext: &str) {
        std::fs::write(self.0.join(format!("{name}.ext")), ext).expect("ext");
        let (key, csr, pem, extf) =
            (format!("{name}.key"), format!("{name}.csr"), format!("{name}.pem"), format!("{name}.ext"));
        self.openssl(
            &["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
            &["-keyout", &key, "-out", &csr, "-subj", &format!("/CN={name}")],
        );
        self.openssl(
            &["x509", "-req", "-in", &csr, "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial"],
            &["-out", &pem, "-days", "2", "-extfile", &extf],
        );
    }

    fn openssl(&self, a: &[&str], b: &[&str]) {
        let o = Command::new("openssl")
            .args(a)
            .args(b)
            .current_dir(&self.0)
            .output()
            .expect("openssl (scripts/test.sh installs it)");
        assert!(o.status.success(), "openssl {a:?} {b:?}: {}", String::from_utf8_lossy(&o.stderr));
    }

    fn path(&self, file: &str) -> String {
        self.0.join(file).display().to_string()
    }
}

/// An https endpoint: the collector's receiver serves TLS with a certificate of a private CA
/// and asks for the client's (mutual TLS). The agent given the CA (`--otlp-ca`) and a client
/// certificate and key of the same CA exports BAD's finding with no failure; without the CA it
/// fails to export and says to give one; without a client certificate the collector refuses
/// it; and the variables of the OpenTelemetry specification do what the flags do.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn an_https_collector_with_a_private_ca_and_client_certificates_receives_the_findings() {
    assert_bpf_works("the agent test");
    let dir = std::env::temp_dir().join(format!("syslint-otel-pki-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let pki = Pki::new(&dir);
    pki.make("collector", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
    pki.make("agent", "extendedKeyUsage=clientAuth\n");
    let tls = format!(
        "        tls:\n          cert_file: {}\n          key_file: {}\n          client_ca_file: {}\n",
        pki.path("collector.pem"),
        pki.path("collector.key"),
        pki.path("ca.pem")
    );
    let col = collector("tls", &tls);
    let endpoint = format!("https://127.0.0.1:{}", col.port);
    // a short agent watching a sleeping process: its windows' metrics are exported
    let sleeper = Killed(Command::new("sleep").arg("60").spawn().expect("sleep"));
    let pid = sleeper.0.id().to_string();
    let short = |more: &[&str], env: &[(&str, String)]| {
        let mut c = Command::new(bin());
        c.args(["agent", "-p", &pid, "--window", "1s", "--every", "1s", "--for", "2s"]);
        for v in ["CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY", "HEADERS", "ENDPOINT"] {
            c.env_remove(format!("OTEL_EXPORTER_OTLP_{v}"));
        }
        let o = c
            .args(["--otlp-endpoint", &endpoint])
            .args(more)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("XDG_CONFIG_HOME", root().join("target/no-user-config"))
            .output()
            .expect("agent");
        (o.status.success(), String::from_utf8_lossy(&o.stderr).to_string())
    };
    let (ok, err) = short(&[], &[]);
    assert!(ok, "{err}");
    assert!(
        err.contains("OTLP export to https://127.0.0.1:") && err.contains("give its CA with --otlp-ca FILE"),
        "{err}"
    );
    assert!(!err.contains(", 0 exports failed"), "{err}");
    let (ok, err) = short(&["--otlp-ca", &pki.path("ca.pem")], &[]);
    assert!(ok, "{err}");
    assert!(
        err.contains("OTLP export to https://127.0.0.1:") && !err.contains("--otlp-ca FILE"),
        "the collector asks for a client certificate: {err}"
    );
    let vars = [
        ("OTEL_EXPORTER_OTLP_CERTIFICATE", pki.path("ca.pem")),
        ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", pki.path("agent.pem")),
        ("OTEL_EXPORTER_OTLP_CLIENT_KEY", pki.path("agent.key")),
    ];
    let (ok, err) = short(&[], &vars);
    assert!(ok && err.contains(", 0 exports failed"), "{err}");
    drop(sleeper);
    // the flags, and a finding through them
    let flags = ["--otlp-ca", "--otlp-client-cert", "--otlp-client-key"];
    let files = [pki.path("ca.pem"), pki.path("agent.pem"), pki.path("agent.key")];
    let mut more = vec!["--otlp-endpoint", &endpoint];
    for (f, p) in flags.iter().zip(&files) {
        more.extend([*f, p.as_str()]);
    }
    let mut s = setup_with("ts", 6, &more, |_| {});
    let st = s.agent.0.wait().expect("agent exits");
    let mut rest = String::new();
    s.err.read_to_string(&mut rest).expect("stderr");
    assert!(st.success() && rest.contains(", 0 exports failed"), "{rest}");
    let lines = col.lines_with_logs();
    let records = log_records(&lines);
    let rec =
        records.iter().find(|(res, _, _)| attr(res, "process.executable.name").as_deref() == Some(s.bad.as_str()));
    let (_, _, rec) = rec.unwrap_or_else(|| panic!("no log record about {} over https: {lines:#?}\n{rest}", s.bad));
    assert_eq!(attr(&rec["attributes"], "syslint.detector").as_deref(), Some("timer-polling"), "{rec:#}");
    drop(col);
    let _ = std::fs::remove_dir_all(&s.dir);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The TLS options are checked at start: a missing or wrong file is named with its option,
/// a key without its certificate is refused, and they mean nothing for plain http.
#[test]
fn otlp_tls_files_are_checked_at_start() {
    let dir = std::env::temp_dir().join(format!("syslint-otel-badpki-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let not_pem = dir.join("not.pem");
    std::fs::write(&not_pem, "hello\n").expect("file");
    let np = not_pem.display().to_string();
    let https = ["agent", "--comm", "x", "--otlp-endpoint", "https://127.0.0.1:4318"];
    for (more, says) in [
        (vec!["--otlp-ca", "/nonexistent/ca.pem"], "--otlp-ca /nonexistent/ca.pem: No such file"),
        (vec!["--otlp-ca", &np], "no certificate in it"),
        (vec!["--otlp-client-key", &np], "--otlp-client-key needs --otlp-client-cert"),
    ] {
        let o = run(&[&https[..], &more].concat());
        assert_eq!(o.status.code(), Some(2), "{more:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{more:?}: {}", stderr(&o));
    }
    let o = run(&["agent", "--comm", "x", "--otlp-endpoint", "http://127.0.0.1:4318", "--otlp-ca", &np]);
    assert!(stderr(&o).contains("--otlp-ca is for an https:// endpoint"), "{}", stderr(&o));
    let o = run(&["agent", "--comm", "x", "--otlp-ca", &np]);
    assert!(stderr(&o).contains("--otlp-ca is for an OTLP export"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The agent stays within its budgets and says when it sheds detail for them: with 0.1% of a
/// core its first window (BPF loading and analysis: tens of milliseconds of CPU) spends the
/// credit of minutes, so the next windows are skipped, counted in /metrics and said; with the
/// records' queue bounded to a byte (SYSLINT_QUEUE_BYTES, as the trace tests provoke a full
/// queue) the window leaves the kernel buffer unread meanwhile, counted as memory shedding.
/// The first window still finds BAD's finding.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn the_agent_sheds_windows_to_stay_within_its_budgets() {
    assert_bpf_works("the agent test");
    let dir = std::env::temp_dir().join(format!("syslint-agent-budget-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let bad = format!("bb{}", std::process::id() % 100_000);
    build_timers(&dir, &[&bad]);
    let bad_proc =
        Killed(Command::new(dir.join(&bad)).args(["select20", "12000"]).stdout(Stdio::null()).spawn().expect("timer"));
    let args = ["-p", &bad_proc.0.id().to_string(), "--window", "1s", "--every", "2s", "--for", "7s"]
        .into_iter()
        .chain(["--cpu-budget", "0.1%"])
        .map(String::from)
        .collect::<Vec<_>>();
    let (mut agent, mut err, addr) = serving_agent(&args, &[("SYSLINT_QUEUE_BYTES", "1")]);
    std::thread::sleep(Duration::from_secs(5));
    let m = get(&addr, "/metrics");
    let shed = |b: &str, how: &str| {
        series_with(&m, "syslint_shed_windows_total", &[("budget", b), ("how", how)]).and_then(value).unwrap_or(-1.0)
    };
    assert!(shed("cpu", "skipped") >= 1.0, "{m}");
    assert!(shed("memory", "unread") >= 1.0, "{m}");
    assert!(series(&m, "syslint_agent_resident_bytes").is_some_and(|v| v > 1e6), "{m}");
    let st = agent.0.wait().expect("agent exits");
    let mut rest = String::new();
    err.read_to_string(&mut rest).expect("stderr");
    assert!(st.success(), "{rest}");
    assert!(rest.contains("over its CPU budget (0.1% of a core): windows skipped until it refills"), "{rest}");
    assert!(rest.contains("syslint agent: 1 window ("), "one window made, the others skipped: {rest}");
    assert!(rest.contains("CPU budget (0.1% of a core): 0 windows shortened, "), "{rest}");
    assert!(rest.contains("memory budget (256 MiB): 1 window left the kernel buffer unread"), "{rest}");
    // found (a 1 s window of BAD's start may not show enough for a warning)
    assert!(rest.lines().any(|l| l.contains("timer-polling") && l.contains(&format!(" in {bad}:"))), "{rest}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Budgets are checked at start: a share of a core that is no percentage or none, a size that
/// is none, and a memory budget below what the agent holds already.
#[test]
fn budgets_are_checked_at_start() {
    for (args, says) in [
        (&["--cpu-budget", "0%"][..], "--cpu-budget"),
        (&["--cpu-budget", "lots"], "is not a percentage"),
        (&["--memory-budget", "12 parsecs"], "unknown unit"),
        (&["--memory-budget", "1M"], "less than the agent needs"),
    ] {
        let o = run(&[&["agent", "--comm", "x"][..], args].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
}

/// What to watch comes from the config file's `[agent]` table when no flag says it: the
/// agent given only `--config` (and the harness's timing flags) finds BAD by the names in it.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn the_config_files_agent_table_says_what_to_watch() {
    assert_bpf_works("the agent test");
    let n = std::process::id() % 100_000;
    let conf = std::env::temp_dir().join(format!("syslint-agent-conf-{n}.toml"));
    let mut s = setup_watching("tf", 6, &[], |_, _| {
        std::fs::write(&conf, format!("[agent]\ncomm = [\"tfb{n}\", \"tfg{n}\"]\nstacks = \"off\"\n")).expect("config");
        Some(vec!["--config".into(), conf.display().to_string()])
    });
    let st = s.agent.0.wait().expect("agent exits");
    let mut rest = String::new();
    s.err.read_to_string(&mut rest).expect("stderr");
    assert!(st.success(), "{rest}");
    assert!(rest.contains(&format!("timer-polling warning in {}", s.bad)), "{rest}");
    let _ = std::fs::remove_file(&conf);
    let _ = std::fs::remove_dir_all(&s.dir);
}

/// The `[agent]` table's values are checked as the flags are, and a flag overrides its key.
#[test]
fn the_agent_tables_values_are_checked_and_flags_win() {
    let conf = std::env::temp_dir().join(format!("syslint-agent-conf-check-{}.toml", std::process::id()));
    std::fs::write(&conf, "[agent]\nwindow = \"10s\"\nevery = \"5s\"\n").expect("config");
    let c = conf.to_str().expect("utf-8");
    let o = run(&["agent", "--config", c]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--every (5s) must be at least --window (10s)"), "{}", stderr(&o));
    // --window 1s beats the file's 10s; a pid that does not run: idle windows, no trace
    let o = run(&["agent", "--config", c, "--window", "1s", "-p", "999999999", "--for", "1ms"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("1s windows every 5s"), "{}", stderr(&o));
    std::fs::write(&conf, "[agent]\nwindow = \"soon\"\n").expect("config");
    let o = run(&["agent", "--config", c]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("[agent] window: \"soon\" is not a duration"), "{}", stderr(&o));
    std::fs::write(&conf, "[agent]\nwindows = \"1s\"\n").expect("config");
    let o = run(&["agent", "--config", c]);
    assert!(stderr(&o).contains("line 1, column 1: agent: unknown field `windows`"), "{}", stderr(&o));
    let _ = std::fs::remove_file(&conf);
}

/// --count-between: a program that starts misbehaving after its cgroup's window is counted in
/// the kernel between windows, and its counts (the busy-poll counts rule: poll calls by the
/// thousand, next to no I/O) start a window at once, which finds it; without them it would wait
/// for the next cycle (--every 60s, after the test). GOOD (the timer lab's blocking wait) runs
/// from the start; BAD (the busy-poll lab's spin.c, poll with a zero timeout for 10 s) from a
/// second after the agent's first window began, so that window does not watch it.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn counts_between_windows_start_a_window_at_once() {
    assert_bpf_works("the agent test");
    let dir = std::env::temp_dir().join(format!("syslint-agent-count-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let n = std::process::id() % 100_000;
    let (bad, good) = (format!("spb{n}"), format!("tkg{n}"));
    build_timers(&dir, &[&good]);
    let built = Command::new("cc")
        .args(["-O1", "-pthread", "-o"])
        .arg(dir.join(&bad))
        .arg(root().join("lab/busy-poll/spin.c"))
        .status()
        .expect("cc");
    assert!(built.success());
    let _good =
        Killed(Command::new(dir.join(&good)).args(["block", "20000"]).stdout(Stdio::null()).spawn().expect("timer"));
    let mut agent = Killed(
        Command::new(bin())
            .args(["agent", "--comm", &bad, "--comm", &good, "--count-between", "--window", "2s", "--every", "60s"])
            .args(["--for", "17s", "--stacks", "off"])
            .env("XDG_CONFIG_HOME", root().join("target/no-user-config"))
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("syslint agent"),
    );
    std::thread::sleep(Duration::from_secs(1));
    // 100 answers 100 ms apart: 10 s of spinning (alarm(10) bounds it too)
    let _bad = Killed(
        Command::new(dir.join(&bad))
            .args(["poll0", "100", "100"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spin"),
    );
    let mut err = agent.0.stderr.take().expect("stderr");
    let st = agent.0.wait().expect("agent exits");
    let mut text = String::new();
    err.read_to_string(&mut text).expect("stderr");
    assert!(st.success(), "{text}");
    assert!(text.contains("look like busy-poll") && text.contains("a window at once"), "{text}");
    assert!(text.contains("busy-poll") && text.contains(&format!(" in {bad}")), "{text}");
    assert!(text.contains("2 windows"), "the cycle's and the one the counts started: {text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_otlp_endpoint_is_refused_at_start() {
    let o = run(&["agent", "--comm", "x", "--otlp-endpoint", "collector:4318"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("must be an http:// or https:// URL"), "{}", stderr(&o));
}

/// With no program named, the agent scans every process of the host; `--cgroup` keeps those
/// in the cgroup given and below: the test puts BAD and GOOD in two cgroups of its own under one
/// parent and names only the parent. `syslint agent status` then says it watches exactly those
/// two processes, in their two cgroups, and lists BAD's finding, active, in its cgroup. One
/// window traces both cgroups, each analysed apart.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn the_host_is_scanned_for_a_cgroup_and_status_tells_what_was_found() {
    assert_bpf_works("the agent test");
    let root = cgroup_v2_root();
    let n = std::process::id();
    let top = format!("/syslint-agent-host-{n}");
    let mut cgroups = Cgroups(Vec::new());
    // GOOD blocks the whole time (no call a window could see): beside it in its cgroup, under
    // GOOD's name, the lab's quiet server (a poll with a timeout, answered every 30 ms)
    let mut quiet: Option<Killed> = None;
    let s = setup_watching("th", 8, &[], |bad, good| {
        let watch = bad_and_good_in_cgroups_below(root, &top, &mut cgroups, bad, good);
        let exe = std::env::temp_dir().join(format!("syslint-agent-th-{n}")).join(format!("thg{}", n % 100_000));
        let q = Killed(Command::new(exe).args(["server20", "12000"]).stdout(Stdio::null()).spawn().expect("server20"));
        let procs = root.join(&top[1..]).join("good/cgroup.procs");
        std::fs::write(procs, q.0.id().to_string()).expect("move the quiet server in");
        quiet = Some(q);
        Some(watch)
    });
    // the first window traces both cgroups at once, each analysed apart: right after it (the
    // next begins 3 s after the first), GOOD's cgroup's calls are counted there and BAD's
    // finding in BAD's
    let t0 = Instant::now();
    let metrics = loop {
        let m = get(&s.addr, "/metrics");
        if series(&m, "syslint_windows_total").is_some_and(|w| w >= 1.0) || t0.elapsed() > Duration::from_secs(20) {
            break m;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(series(&metrics, "syslint_windows_total"), Some(1.0), "{metrics}");
    let calls = |program: &str, cgroup: &str| {
        series_with(&metrics, "syslint_program_syscalls_total", &[("program", program), ("cgroup", cgroup)])
            .and_then(value)
    };
    let (bad_cg, good_cg) = (format!("{top}/bad"), format!("{top}/good"));
    assert!(calls(&s.good, &good_cg).is_some_and(|c| c > 0.0), "GOOD traced in window 1: {metrics}");
    assert!(calls(&s.bad, &bad_cg).is_some_and(|c| c > 0.0), "BAD traced in window 1: {metrics}");
    assert!(calls(&s.good, &bad_cg).is_none() && calls(&s.bad, &good_cg).is_none(), "apart: {metrics}");
    let found = [("detector", "timer-polling"), ("program", s.bad.as_str()), ("cgroup", bad_cg.as_str())];
    assert!(series_with(&metrics, "syslint_findings_total", &found).is_some(), "{metrics}");
    // after more windows
    let json = loop {
        let o = run(&["agent", "status", "--at", &s.addr, "--format", "json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        if v["windows"].as_u64().is_some_and(|w| w >= 2) || t0.elapsed() > Duration::from_secs(20) {
            break v;
        }
        std::thread::sleep(Duration::from_millis(300));
    };
    let mut watched: Vec<(String, String)> = json["watching"]
        .as_array()
        .expect("watching")
        .iter()
        .flat_map(|c| {
            let cg = c["cgroup"].as_str().unwrap_or_default().to_string();
            c["processes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(move |p| (cg.clone(), p["comm"].as_str().unwrap_or_default().to_string()))
        })
        .collect();
    let processes = watched.len();
    // timer.c forks the child it waits for at its start: when the fork comes after the test
    // moved the program into its cgroup, the child (same name) is watched there too
    watched.sort();
    watched.dedup();
    assert_eq!(watched, [(format!("{top}/bad"), s.bad.clone()), (format!("{top}/good"), s.good.clone())], "{json:#}");
    // the table
    let o = run(&["agent", "status", "--at", &s.addr]);
    let table = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(table.contains(&format!("watching {processes} processes in 2 cgroups")), "{table}");
    let row = table.lines().find(|l| l.contains(s.bad.as_str())).unwrap_or_else(|| panic!("{table}"));
    assert!(
        row.starts_with("active") && row.contains("timer-polling") && row.contains(&format!("cgroup {top}/bad")),
        "{table}"
    );
    assert!(!table.contains(s.good.as_str()), "GOOD has no finding: {table}");
    let _ = std::fs::remove_dir_all(&s.dir);
    drop(s);
    drop(quiet);
    drop(cgroups);
}

#[test]
fn status_without_an_agent_says_where_it_asked() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("port").port();
    let o = run(&["agent", "status", "--at", &format!("127.0.0.1:{port}")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("no agent answered at http://127.0.0.1:{port}/findings")), "{}", stderr(&o));
}

#[test]
fn the_agent_needs_cgroup_paths_and_windows_that_fit() {
    let o = run(&["agent", "--cgroup", "system.slice"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("a cgroup path starts with /"), "{}", stderr(&o));
    let o = run(&["agent", "--comm", "x", "--window", "10s", "--every", "5s"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--every (5s) must be at least --window (10s)"), "{}", stderr(&o));
}

/// BAD and GOOD moved into cgroups `bad` and `good` below `top` (made here, removed by
/// `cgroups`), and the agent's arguments to watch `top`.
fn bad_and_good_in_cgroups_below(
    root: &std::path::Path,
    top: &str,
    cgroups: &mut Cgroups,
    bad: u32,
    good: u32,
) -> Vec<String> {
    for (name, pid) in [("bad", bad), ("good", good)] {
        let d = root.join(&top[1..]).join(name);
        std::fs::create_dir_all(&d).expect("a cgroup (root)");
        cgroups.0.extend([root.join(&top[1..]), d.clone()]);
        std::fs::write(d.join("cgroup.procs"), pid.to_string()).expect("move the program into it");
    }
    vec!["--cgroup".into(), top.to_string()]
}

/// Processes and containers come and go by the thousand under what the agent watches: a
/// thousand short processes, ten in each of a hundred cgroups made and removed one after
/// another below the watched cgroup, while BAD and GOOD run in cgroups of their own. Every
/// short process runs to its end (the agent stops none), every cgroup can be removed (the
/// agent holds none), and the agent keeps serving, with BAD's finding, its windows counted
/// (a window whose cgroup emptied before it began counts as failed, not as an error), and its
/// memory bounded.
#[test]
fn the_agent_survives_processes_and_cgroups_coming_and_going() {
    assert_bpf_works("the agent test");
    let root = cgroup_v2_root();
    let n = std::process::id();
    let top = format!("/syslint-agent-churn-{n}");
    let mut cgroups = Cgroups(Vec::new());
    // the agent runs 30 s, long past the churn (about 9 s alone, 18 s seen on a loaded
    // machine); the timer programs live 20 s at most, their findings are kept after them
    let s = setup_watching("ch", 30, &[], |bad, good| {
        Some(bad_and_good_in_cgroups_below(root, &top, &mut cgroups, bad, good))
    });
    let status = |addr: &str| -> serde_json::Value {
        let o = run(&["agent", "status", "--at", addr, "--format", "json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).expect("JSON")
    };
    // BAD's cgroup sorts first: its window is the first; the churn starts after it
    let t0 = Instant::now();
    while status(&s.addr)["windows"].as_u64().unwrap_or(0) < 1 && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(200));
    }
    // bounded: 100 cgroups of 10 processes living 5 ms each (about 8 s: several of the agent's
    // 3 s cycles), and `timeout`
    let script = r#"base=$1; ran=0
for i in $(seq 100); do
  d=$base/c$i; mkdir "$d" || exit 1
  for j in $(seq 10); do sh -c 'echo $$ > "$1/cgroup.procs" && exec sleep 0.005' _ "$d" && ran=$((ran + 1)); done
  rmdir "$d" || exit 2
done
echo "$ran""#;
    let windows_before = status(&s.addr)["windows"].as_u64().unwrap_or(0);
    let churn = Command::new("timeout")
        .args(["120", "sh", "-c", script, "churn"])
        .arg(root.join(&top[1..]))
        .output()
        .expect("sh");
    assert!(churn.status.success(), "the churn stopped: {churn:?}");
    assert_eq!(String::from_utf8_lossy(&churn.stdout).trim(), "1000", "every short process ran to its end");
    // the agent lives on and still serves, BAD's finding with it
    let mut agent = s.agent;
    if let Some(status) = agent.0.try_wait().expect("wait") {
        let mut err = String::new();
        let _ = std::io::Read::read_to_string(&mut { s.err }, &mut err);
        panic!("the agent ended during the churn ({status}, {:?} after its first window): {err}", t0.elapsed());
    }
    let json = status(&s.addr);
    let findings = json["findings"].as_array().expect("findings");
    assert!(findings.iter().any(|f| f["detector"] == "timer-polling" && f["program"] == s.bad.as_str()), "{json:#}");
    // windows went on through the churn (those whose cgroup emptied first count as failed)
    let during = json["windows"].as_u64().unwrap_or(0) + json["failed_windows"].as_u64().unwrap_or(0) - windows_before;
    assert!(during >= 2, "{during} windows during the churn: {json:#}");
    // its peak memory: 104 MB here, most of it the (debug) binary's mapped pages and the BPF
    // ring buffers as they are touched (32 MB of events, 8 MB of stacks); its own heap is
    // about 1.5 MB (a release agent: 52 MB resident, 1.4 MB anonymous)
    let peak_kb: u64 = std::fs::read_to_string(format!("/proc/{}/status", agent.0.id()))
        .expect("the agent's status")
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .expect("VmHWM");
    eprintln!("agent peak RSS {peak_kb} kB; status {json:#}");
    assert!(peak_kb < 256 * 1024, "the agent's peak RSS {peak_kb} kB");
    let _ = agent.0.kill();
    let mut err = String::new();
    let _ = std::io::Read::read_to_string(&mut { s.err }, &mut err);
    assert!(!err.contains("panicked"), "{err}");
    let _ = std::fs::remove_dir_all(&s.dir);
    drop(s.bad_proc);
    drop(cgroups);
}

/// OTLP headers are checked at start, named in errors without their values, and need an
/// endpoint to go to.
#[test]
fn otlp_headers_are_checked_at_start_and_never_printed() {
    let no_endpoint = run(&["agent", "--comm", "x", "--otlp-header", "Authorization=Bearer s3cret"]);
    let bad_env = Command::new(bin())
        .args(["agent", "--comm", "x", "--otlp-endpoint", "http://127.0.0.1:4318"])
        .env("OTEL_EXPORTER_OTLP_HEADERS", "api-key=s3cret,broken")
        .output()
        .expect("syslint agent");
    let bad_name =
        run(&["agent", "--comm", "x", "--otlp-endpoint", "http://127.0.0.1:4318", "--otlp-header", "my key=s3cret"]);
    for (o, says) in [
        (&no_endpoint, "give --otlp-endpoint"),
        (&bad_env, "$OTEL_EXPORTER_OTLP_HEADERS: an entry without '='"),
        (&bad_name, "--otlp-header: \"my key\" is not a header name"),
    ] {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
        assert!(stderr(o).contains(says), "{}", stderr(o));
        assert!(!stderr(o).contains("s3cret"), "{}", stderr(o));
    }
}

/// A wait longer than a window: lab/keepalive-stall's py-eof client reads until nginx closes
/// its keep-alive connection (keepalive_timeout 2s, the body complete after ~0.1 s), again and
/// again against the nginx its run.sh started, in a cgroup of its own; py-length (reads
/// Content-Length bytes) beside it in another. A 2 s window cut the stall short and never
/// found it (bench/agent-latency.sh: 6 windows, not found); the agent's windows now let the
/// socket reads already begun end. BAD is found in its first two windows; GOOD stays quiet.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn a_stall_longer_than_a_window_is_seen_to_its_end() {
    use std::os::unix::process::CommandExt;
    assert_bpf_works("the agent test");
    assert!(have("nginx") || std::path::Path::new("/usr/sbin/nginx").exists(), "nginx is required (scripts/test.sh)");
    let cg_root = cgroup_v2_root();
    let n = std::process::id();
    let top = format!("/syslint-agent-stall-{n}");
    let dir = std::env::temp_dir().join(format!("syslint-agent-stall-{n}"));
    std::fs::create_dir_all(&dir).expect("dir");
    // the lab's run.sh with a stand-in for strace that runs the client untraced (the agent
    // traces it) again and again for 20 s
    let standin = dir.join("strace");
    std::fs::write(
        &standin,
        "#!/bin/sh\nwhile [ $# -gt 0 ]; do case $1 in -o) shift 2 ;; --) shift; break ;; -*) shift ;; *) break ;; esac; done\n\
         end=$(($(date +%s) + 20))\nwhile [ \"$(date +%s)\" -lt \"$end\" ]; do \"$@\" > /dev/null 2>&1 < /dev/null || true; done\n",
    )
    .expect("stand-in");
    let _ = Command::new("chmod").arg("+x").arg(&standin).status();
    let mut cgroups = Cgroups(vec![cg_root.join(&top[1..])]);
    std::fs::create_dir_all(cg_root.join(&top[1..])).expect("a cgroup (root)");
    // bounded: the stand-in's loop ends after 20 s by itself, and the group is killed with the test
    let mut lab = |variant: &str| {
        let cg = cg_root.join(&top[1..]).join(variant);
        std::fs::create_dir_all(&cg).expect("a cgroup");
        cgroups.0.push(cg.clone());
        let script = r#"echo $$ > "$1/cgroup.procs" && exec "$2" "$3" "$4" > /dev/null 2>&1"#;
        Group(
            Command::new("sh")
                .args(["-c", script, "loop"])
                .process_group(0)
                .arg(&cg)
                .arg(root().join("lab/keepalive-stall/run.sh"))
                .arg(variant)
                .arg(dir.join(format!("{variant}.out")))
                .env("STRACE", &standin)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("sh")
                .id(),
        )
    };
    let (_bad, _good) = (lab("py-eof"), lab("py-length"));
    // nginx started, the clients at work
    std::thread::sleep(Duration::from_millis(1500));
    let args: Vec<String> =
        ["--cgroup", &top, "--window", "2s", "--every", "5s", "--cpu-budget", "100%", "--for", "18s"]
            .map(String::from)
            .to_vec();
    let (agent, err, addr) = serving_agent(&args, &[]);
    let status = || -> serde_json::Value {
        let o = run(&["agent", "status", "--at", &addr, "--format", "json"]);
        serde_json::from_slice(&o.stdout).unwrap_or_default()
    };
    let found = |json: &serde_json::Value, variant: &str| {
        json["findings"].as_array().is_some_and(|fs| {
            fs.iter().any(|f| f["detector"] == "keepalive-stall" && f["cgroup"] == format!("{top}/{variant}").as_str())
        })
    };
    // BAD's cgroup sorts first: its windows are the 1st, 3rd, ...; two of them
    let t0 = Instant::now();
    let mut json = status();
    while !found(&json, "py-eof") && json["windows"].as_u64().unwrap_or(0) < 4 && t0.elapsed() < Duration::from_secs(25)
    {
        std::thread::sleep(Duration::from_millis(300));
        json = status();
    }
    assert!(found(&json, "py-eof"), "py-eof's stall not found in 2 of its windows: {json:#}");
    // GOOD had its windows too (the agent ends after --for: keep the last answer)
    while json["windows"].as_u64().unwrap_or(0) < 4 && t0.elapsed() < Duration::from_secs(25) {
        std::thread::sleep(Duration::from_millis(300));
        let now = status();
        if now.is_null() {
            break;
        }
        json = now;
    }
    assert!(json["windows"].as_u64().unwrap_or(0) >= 2, "{json:#}");
    assert!(!found(&json, "py-length"), "py-length reads Content-Length bytes: no stall: {json:#}");
    drop(agent);
    let mut text = String::new();
    let _ = std::io::Read::read_to_string(&mut { err }, &mut text);
    assert!(!text.contains("panicked"), "{text}");
    drop((_bad, _good));
    // the loops' run.sh stop their nginx and exit; the cgroups can go then
    std::thread::sleep(Duration::from_millis(500));
    drop(cgroups);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A process group started by a test, sent SIGTERM as a whole when dropped (the lab's run.sh
/// stops its nginx on it).
struct Group(u32);

impl Drop for Group {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg("--").arg(format!("-{}", self.0)).status();
    }
}

/// A C program of the repository (`src`, from its root) built into `dir` as `name`.
fn build_c(dir: &std::path::Path, name: &str, src: &str) -> std::path::PathBuf {
    assert!(have("cc"), "cc is required (scripts/test.sh installs it)");
    let prog = dir.join(name);
    let ok = Command::new("cc").args(["-O2", "-pthread", "-o"]).arg(&prog).arg(root().join(src)).status();
    assert!(ok.expect("cc").success(), "cc {src}");
    prog
}

/// What the agent run with `args` served once its first window was made and analysed, and
/// what it said when Ctrl-C stopped it then: /metrics, /findings, its stderr after the first
/// line (its closing lines).
fn first_window(args: &[String]) -> (String, serde_json::Value, String) {
    let (mut agent, mut err, addr) = serving_agent(args, &[]);
    let t0 = Instant::now();
    let mut m = get(&addr, "/metrics");
    while series(&m, "syslint_windows_total") != Some(1.0) && t0.elapsed() < Duration::from_secs(40) {
        std::thread::sleep(Duration::from_millis(200));
        m = get(&addr, "/metrics");
    }
    let json: serde_json::Value = serde_json::from_str(&get(&addr, "/findings")).expect("JSON");
    // Ctrl-C: the agent stops and prints its closing lines
    let _ = Command::new("kill").args(["-INT", &agent.0.id().to_string()]).status();
    let st = agent.0.wait().expect("agent exits");
    let mut rest = String::new();
    err.read_to_string(&mut rest).expect("stderr");
    assert!(st.success(), "{rest}");
    (m, json, rest)
}

/// --window-records: a window on a process that calls nonstop ends once the kernel has sent
/// that many records, long before --window, and says so (the closing lines, /metrics); where
/// the windows' time went is served by phase. Without the bound the same window lasts its
/// whole --window.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn a_window_ends_at_its_bound_of_records() {
    assert_bpf_works("the agent test");
    let dir = std::env::temp_dir().join(format!("syslint-agent-records-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let prog = build_c(&dir, "three_calls", "crates/cli/tests/programs/three_calls.c");
    let phase = |rest: &str, name: &str| -> f64 {
        let line = rest.lines().find(|l| l.contains("the windows' time:")).unwrap_or_else(|| panic!("{rest}"));
        let at = line.find(&format!(" {name} ")).unwrap_or_else(|| panic!("{name}: {line}")) + name.len() + 2;
        line[at..].split(' ').next().and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{name}: {line}"))
    };
    for (bound, ends_early) in [("20000", true), ("0", false)] {
        // 60M calls: it outlasts the window (killed by pid when the test ends)
        let busy = Killed(Command::new(&prog).arg("20000000").spawn().expect("three_calls"));
        let args: Vec<String> = ["-p", &busy.0.id().to_string(), "--window", "1s", "--every", "60s", "--for", "60s"]
            .into_iter()
            .chain(["--cpu-budget", "100%", "--stacks", "off", "--window-records", bound])
            .map(String::from)
            .collect();
        // the first window made and analysed (bounded: the next starts a minute later)
        let (m, _, rest) = first_window(&args);
        assert!(rest.contains("syslint agent: 1 window ("), "{rest}");
        for p in ["attach", "trace", "settle", "catch_up", "detach", "analyse"] {
            assert!(series_with(&m, "syslint_window_seconds_total", &[("phase", p)]).is_some(), "{p}: {m}");
        }
        let traced = phase(&rest, "trace");
        let bounded = series(&m, "syslint_bounded_windows_total");
        if ends_early {
            // 20,000 calls of a program calling nonstop take milliseconds
            assert!(traced < 0.5, "traced {traced} s: {rest}");
            assert_eq!(bounded, Some(1.0), "{m}");
            assert!(rest.contains("1 window ended early at --window-records (20000)"), "{rest}");
            let seen = series(&m, "syslint_syscalls_total").unwrap_or_default();
            assert!((20_000.0..2_000_000.0).contains(&seen), "{seen} syscalls: {m}");
        } else {
            assert!(traced > 0.9, "traced {traced} s: {rest}");
            assert_eq!(bounded, Some(0.0), "{m}");
            assert!(rest.contains("0 windows ended early at --window-records (none)"), "{rest}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A window that ends early at its bound of records is judged at the rate it saw, over the
/// whole --window (issue 32): a quiet pathology beside a busy program. The busy-poll lab's
/// client (spin.c, `poll(fd, 1, 0)` in a loop while its server takes 200 ms an answer: the
/// kernel folds its identical calls, a few records a second) and three_calls (three different
/// calls nonstop: 100,000 records in a few hundredths of a second) in one window: the spinner spins a
/// few hundredths of a second before the bound, under busy-poll's 0.1 s for a warning; over
/// the 2 s window, at that rate, it spins the whole time, as an unbounded window sees it. The
/// finding's cost line says what its severity stands on.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn a_bounded_window_is_judged_over_its_whole_length() {
    assert_bpf_works("the agent test");
    let dir = std::env::temp_dir().join(format!("syslint-agent-rate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let spin = build_c(&dir, "spin", "lab/busy-poll/spin.c");
    let busy = build_c(&dir, "three_calls", "crates/cli/tests/programs/three_calls.c");
    // 40 answers 200 ms apart: 8 s of spinning (spin.c's alarm ends it at 10 s at the latest)
    let spin = Killed(Command::new(&spin).args(["poll0", "40", "200"]).stdout(Stdio::null()).spawn().expect("spin"));
    // 60M calls: it outlasts the window (killed by pid when the test ends)
    let busy = Killed(Command::new(&busy).arg("20000000").spawn().expect("three_calls"));
    // spinning by the time the agent attaches (its server forked and the first request sent)
    std::thread::sleep(Duration::from_millis(300));
    let (s, b) = (spin.0.id().to_string(), busy.0.id().to_string());
    let args: Vec<String> = ["-p", &s, "-p", &b, "--window", "2s", "--every", "60s", "--for", "60s"]
        .into_iter()
        .chain(["--cpu-budget", "100%", "--stacks", "off", "--window-records", "100000"])
        .map(String::from)
        .collect();
    let (m, json, rest) = first_window(&args);
    assert_eq!(series(&m, "syslint_bounded_windows_total"), Some(1.0), "{m}");
    let list = json["findings"].as_array().expect("a list");
    let f = list.iter().find(|f| f["detector"] == "busy-poll").unwrap_or_else(|| panic!("{json:#}\n{rest}"));
    let latest = &f["latest"];
    // seen alone, a few hundredths of a second of spinning: info
    let spun = latest["metrics"]["spin_seconds"].as_f64().unwrap_or_else(|| panic!("{f:#}"));
    assert!(spun < 0.1, "the bound came later than thought: {spun} s spun\n{f:#}");
    assert!(matches!(latest["severity"].as_str(), Some("warning" | "error")), "{f:#}");
    let cost = latest["cost"].as_str().unwrap_or_default();
    assert!(cost.contains("at the rate seen in the") && cost.contains("over the 2.00 s it was to last"), "{cost}");
    assert!(cost.contains("info from those calls alone"), "{cost}");
    drop((spin, busy));
    let _ = std::fs::remove_dir_all(&dir);
}

/// On a busy host every window ends at its bound of records; the processes that filled one sit
/// out the next, so the quiet ones get a whole window (issue 32: "rotating so every watched
/// process gets detail over time"). three_calls (three different calls nonstop: 20,000 records
/// in hundredths of a second) beside the timer-polling lab's BAD (a 20 ms select timeout):
/// timer-polling needs half a second of idle ticks, which no bounded window holds, and is found
/// in the whole window that follows one. Without the rotation every window is bounded and it is
/// never found.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn the_processes_that_filled_a_window_sit_out_the_next() {
    assert_bpf_works("the agent test");
    let dir = std::env::temp_dir().join(format!("syslint-agent-rotate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let prog = build_c(&dir, "three_calls", "crates/cli/tests/programs/three_calls.c");
    // 300M calls: it outlasts the agent (killed by pid when the test ends)
    let busy = Killed(Command::new(&prog).arg("100000000").spawn().expect("three_calls"));
    let more = ["--window-records", "20000", "--stacks", "off"];
    let busy_pid = busy.0.id().to_string();
    let mut s = setup_watching("rot", 12, &more, |bad, _good| {
        Some(["-p".to_string(), bad.to_string(), "-p".to_string(), busy_pid.clone()].to_vec())
    });
    let st = s.agent.0.wait().expect("agent exits");
    let mut rest = String::new();
    s.err.read_to_string(&mut rest).expect("stderr");
    assert!(st.success(), "{rest}");
    assert!(
        rest.contains("the process that filled it (three_calls) sits this one out"),
        "the busy program sat a window out: {rest}"
    );
    let closing = rest
        .lines()
        .find(|l| l.contains("ended early at --window-records (20000)"))
        .unwrap_or_else(|| panic!("{rest}"));
    let rotated: u64 = closing
        .rsplit(", ")
        .next()
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{closing}"));
    assert!(rotated >= 1, "{closing}");
    assert!(rest.contains(&format!("timer-polling warning in {}", s.bad)), "found in a whole window: {rest}");
    drop(busy);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&s.dir);
}
