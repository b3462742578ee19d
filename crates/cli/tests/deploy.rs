//! What deploy/ ships for running `syslint agent` (issue 32): the systemd unit and the
//! Kubernetes DaemonSet. No cluster and no init system run here, so: the unit is checked by
//! systemd's own verifier; the agent runs with exactly the capabilities the unit (and the
//! DaemonSet, which must grant the same) leaves it, and still finds a BAD program's waste; and
//! the DaemonSet's arguments are the agent's. (The Grafana dashboard's queries are run by a real
//! Prometheus in agent.rs.)

use crate::common::*;
use std::process::{Command, Stdio};

fn unit_text() -> String {
    std::fs::read_to_string(root().join("deploy/systemd/syslint-agent.service")).expect("the unit")
}

/// The unit's `CapabilityBoundingSet`, as setpriv and Kubernetes name them (`bpf`, `sys_ptrace`).
fn unit_caps() -> Vec<String> {
    let text = unit_text();
    let line = text.lines().find_map(|l| l.strip_prefix("CapabilityBoundingSet=")).expect("CapabilityBoundingSet");
    let mut caps: Vec<String> =
        line.split_whitespace().map(|c| c.strip_prefix("CAP_").expect("CAP_ names").to_ascii_lowercase()).collect();
    caps.sort();
    caps
}

/// The unit passes `systemd-analyze verify` (its keys, its ExecStart, the man page its
/// Documentation names, which `syslint man` makes), with the binary where the test built it.
#[test]
fn the_systemd_unit_verifies() {
    need(&["systemd-analyze"]);
    let dir = std::env::temp_dir().join(format!("syslint-deploy-unit-{}", std::process::id()));
    let man = dir.join("man/man1");
    std::fs::create_dir_all(&man).expect("dir");
    let o = Command::new(bin()).arg("man").arg("--dir").arg(&man).output().expect("syslint man");
    assert!(o.status.success(), "{}", stderr(&o));
    let unit = dir.join("syslint-agent.service");
    let text = unit_text();
    assert!(text.contains("ExecStart=/usr/bin/syslint agent "), "{text}");
    std::fs::write(&unit, text.replace("/usr/bin/syslint", bin())).expect("unit");
    let o = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&unit)
        .env("MANPATH", dir.join("man"))
        .output()
        .expect("verify");
    assert!(o.status.success() && o.stderr.is_empty(), "systemd-analyze verify: {}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The agent, run as the unit runs it (uid 0 with only the unit's capabilities: setpriv sets
/// the same bounding set), attaches and finds the timer-polling lab's BAD program (select()
/// with a 20 ms timeout): the privileges the unit and docs/agent.md give are enough.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn the_units_capabilities_are_enough() {
    need(&["setpriv", "cc"]);
    assert_bpf_works("the deploy test");
    let dir = std::env::temp_dir().join(format!("syslint-deploy-caps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let name = format!("dcap{}", std::process::id() % 100_000);
    crate::agent::build_timers(&dir, &[&name]);
    // bounded: the program's own alarm, and killed by pid at the end
    let mut bad =
        Command::new(dir.join(&name)).args(["select20", "9000"]).stdout(Stdio::null()).spawn().expect("timer");
    let caps = unit_caps();
    assert!(caps.contains(&"bpf".to_string()) && caps.contains(&"perfmon".to_string()), "{caps:?}");
    let set = format!("-all,{}", caps.iter().map(|c| format!("+{c}")).collect::<Vec<_>>().join(","));
    let o = Command::new("setpriv")
        .args(["--bounding-set", &set, "--inh-caps", "-all", "--"])
        .arg(bin())
        .args(["agent", "--comm", &name, "--window", "2s", "--every", "2s", "--for", "3s"])
        .env("XDG_CONFIG_HOME", root().join("target/no-user-config"))
        .output()
        .expect("setpriv");
    let _ = bad.kill();
    let _ = bad.wait();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains(&format!("timer-polling warning in {name}")), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The DaemonSet manifest as JSON documents.
fn daemonset() -> serde_json::Value {
    let path = root().join("deploy/kubernetes/daemonset.yaml");
    let o = Command::new("/usr/bin/python3")
        .args(["-c", "import sys, json, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))"])
        .arg(&path)
        .output()
        .expect("python3");
    assert!(o.status.success(), "python3-yaml reads the manifest (scripts/test.sh installs it): {}", stderr(&o));
    let docs: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).expect("JSON");
    docs.into_iter().find(|d| d["kind"] == "DaemonSet").expect("a DaemonSet")
}

/// The DaemonSet's container: host pids, a read-only root, no privilege escalation, all
/// capabilities dropped and the unit's added back (the same set, proven enough above), BTF
/// mounted, the port Prometheus is told of the one it serves.
#[test]
fn the_daemonset_grants_the_units_privileges() {
    let ds = daemonset();
    let pod = &ds["spec"]["template"]["spec"];
    assert_eq!(pod["hostPID"], true, "{pod:#}");
    let c = &pod["containers"][0];
    let sc = &c["securityContext"];
    assert_eq!(sc["readOnlyRootFilesystem"], true, "{sc:#}");
    assert_eq!(sc["allowPrivilegeEscalation"], false, "{sc:#}");
    assert_eq!(sc["capabilities"]["drop"], serde_json::json!(["ALL"]), "{sc:#}");
    let mut added: Vec<String> = sc["capabilities"]["add"]
        .as_array()
        .expect("capabilities added")
        .iter()
        .map(|c| c.as_str().expect("a name").to_ascii_lowercase())
        .collect();
    added.sort();
    assert_eq!(added, unit_caps(), "the DaemonSet and the unit grant the same capabilities");
    let mounts: Vec<&str> =
        c["volumeMounts"].as_array().expect("mounts").iter().filter_map(|m| m["mountPath"].as_str()).collect();
    assert!(mounts.contains(&"/sys/kernel/btf") && mounts.contains(&"/var/log/pods"), "{mounts:?}");
    let port = c["ports"][0]["containerPort"].as_u64().expect("a port");
    let ann = &ds["spec"]["template"]["metadata"]["annotations"];
    assert_eq!(ann["prometheus.io/port"], port.to_string(), "{ann:#}");
    let args: Vec<&str> = c["args"].as_array().expect("args").iter().filter_map(|a| a.as_str()).collect();
    assert!(args.join(" ").contains(&format!("--metrics-listen 0.0.0.0:{port}")), "{args:?}");
}

/// The DaemonSet's arguments are ones the agent takes: run for a millisecond (one window at
/// most), listening on a free loopback port instead of the pod's.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn the_daemonsets_arguments_are_the_agents() {
    assert_bpf_works("the deploy test");
    let ds = daemonset();
    let c = &ds["spec"]["template"]["spec"]["containers"][0];
    let port = c["ports"][0]["containerPort"].as_u64().expect("a port");
    let args: Vec<String> = c["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| a.as_str().expect("a string").replace(&format!("0.0.0.0:{port}"), "127.0.0.1:0"))
        .collect();
    assert_eq!(args.first().map(String::as_str), Some("agent"), "{args:?}");
    let o = Command::new(bin()).args(&args).args(["--for", "1ms"]).output().expect("syslint");
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    assert!(stderr(&o).contains("watching every process of the host"), "{}", stderr(&o));
}
