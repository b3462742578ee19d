//! What deploy/ ships for running `syslint agent` (issue 32): the systemd unit, the
//! Kubernetes DaemonSet and the Helm chart. No cluster and no init system run here, so: the
//! unit is checked by systemd's own verifier; the agent runs with exactly the capabilities the
//! unit (and the DaemonSet, which must grant the same) leaves it, and still finds a BAD
//! program's waste; the DaemonSet's arguments are the agent's; the chart is linted and rendered
//! by the real helm, its DaemonSet with default values is the manifest's pod, and its values
//! become the agent's flags, which the agent takes. (The Grafana dashboard's queries are run by
//! a real Prometheus in agent.rs.)

use crate::common::*;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

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

/// YAML documents (`what` names them) as JSON, read by python3-yaml (scripts/test.sh installs it).
fn yaml_docs(text: &str, what: &str) -> Vec<Value> {
    let mut child = Command::new("/usr/bin/python3")
        .args(["-c", "import sys, json, yaml; print(json.dumps(list(yaml.safe_load_all(sys.stdin))))"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3");
    child.stdin.take().expect("stdin").write_all(text.as_bytes()).expect("write the YAML");
    let o = child.wait_with_output().expect("python3");
    assert!(o.status.success(), "python3-yaml reads {what} (scripts/test.sh installs it): {}", stderr(&o));
    let docs: Vec<Value> = serde_json::from_slice(&o.stdout).expect("JSON");
    docs.into_iter().filter(|d| !d.is_null()).collect()
}

/// The DaemonSet manifest's DaemonSet, as JSON.
fn daemonset() -> Value {
    let path = root().join("deploy/kubernetes/daemonset.yaml");
    let text = std::fs::read_to_string(&path).expect("the manifest");
    yaml_docs(&text, "the manifest").into_iter().find(|d| d["kind"] == "DaemonSet").expect("a DaemonSet")
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
    assert_eq!(sc["capabilities"]["drop"], json!(["ALL"]), "{sc:#}");
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

/// A pod's arguments, as strings, its metrics address (the container's port on 0.0.0.0)
/// changed for a free loopback port: how they are run here.
fn local_args(container: &Value) -> Vec<String> {
    let args = container["args"].as_array().expect("args");
    let port = container["ports"][0]["containerPort"].as_u64();
    args.iter()
        .map(|a| a.as_str().expect("a string"))
        .map(|a| port.map_or(a.to_string(), |p| a.replace(&format!("0.0.0.0:{p}"), "127.0.0.1:0")))
        .collect()
}

/// The agent takes `args` (a pod's): run for a millisecond (one window at most), it exits 0 and
/// says it is `watching` what they name.
fn the_agent_takes(args: &[String], watching: &str) {
    assert_eq!(args.first().map(String::as_str), Some("agent"), "{args:?}");
    let o = Command::new(bin())
        .args(args)
        .args(["--for", "1ms"])
        .env("XDG_CONFIG_HOME", root().join("target/no-user-config"))
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .output()
        .expect("syslint");
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    assert!(stderr(&o).contains(&format!("watching {watching}")), "{args:?}: {}", stderr(&o));
}

/// The DaemonSet's arguments are ones the agent takes: run for a millisecond (one window at
/// most), listening on a free loopback port instead of the pod's.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn the_daemonsets_arguments_are_the_agents() {
    assert_bpf_works("the deploy test");
    let ds = daemonset();
    let args = local_args(&ds["spec"]["template"]["spec"]["containers"][0]);
    the_agent_takes(&args, "every process of the host");
}

/// The Helm chart (deploy/helm/syslint-agent).
fn chart() -> PathBuf {
    root().join("deploy/helm/syslint-agent")
}

/// helm v3.22.0, built once from its Go module by scripts/helm.sh into /var/cache/syslint
/// (minutes the first time: scripts/test.sh builds it while the lints run). Outside CI, a note
/// and None when it cannot be built (the script's exit 3: no go, no module proxy); in CI that
/// fails, and so does any other failure of the script.
fn helm() -> Option<PathBuf> {
    static HELM: OnceLock<Option<PathBuf>> = OnceLock::new();
    HELM.get_or_init(|| {
        let o =
            Command::new(root().join("scripts/helm.sh")).stderr(Stdio::inherit()).output().expect("scripts/helm.sh");
        if o.status.success() {
            return Some(PathBuf::from(stdout(&o).trim()));
        }
        assert_eq!(o.status.code(), Some(3), "scripts/helm.sh failed");
        eprintln!("NOTE: scripts/helm.sh could not build helm (above): the Helm chart is not checked");
        assert!(std::env::var_os("CI").is_none(), "helm missing in CI: scripts/test.sh builds it (scripts/helm.sh)");
        None
    })
    .clone()
}

/// `helm ARGS` in the workspace, with a home of its own (no user's repositories or plugins,
/// nothing written to theirs), and no cluster.
fn helm_run(helm: &Path, args: &[&str]) -> Output {
    let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("helm-home-{}", std::process::id()));
    Command::new(helm)
        .args(args)
        .current_dir(root())
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_DATA_HOME", home.join("data"))
        .env("KUBECONFIG", home.join("no-kubeconfig"))
        .output()
        .expect("helm")
}

/// What `helm template syslint-agent CHART --namespace syslint ARGS` renders, as JSON documents
/// (helm's own checks, e.g. the values' types, run first).
fn render(helm: &Path, args: &[&str]) -> Vec<Value> {
    let chart = chart();
    let mut all = vec!["template", "syslint-agent", chart.to_str().expect("a path"), "--namespace", "syslint"];
    all.extend_from_slice(args);
    let o = helm_run(helm, &all);
    assert!(o.status.success(), "helm {all:?}: {}", stderr(&o));
    yaml_docs(&stdout(&o), "helm template's output")
}

/// The chart's one document, its DaemonSet: nothing else (no service account, role or binding:
/// the agent asks the API server nothing).
fn rendered_daemonset(helm: &Path, args: &[&str]) -> Value {
    let docs = render(helm, args);
    let kinds: Vec<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
    assert_eq!(kinds, ["DaemonSet"], "the chart renders a DaemonSet and nothing else");
    docs.into_iter().next().expect("the DaemonSet")
}

/// The paths (`at` and below) where `a` and `b` differ, each with both values.
fn differences(a: &Value, b: &Value, at: &str) -> Vec<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.iter()
                .flat_map(|k| {
                    differences(
                        x.get(*k).unwrap_or(&Value::Null),
                        y.get(*k).unwrap_or(&Value::Null),
                        &format!("{at}.{k}"),
                    )
                })
                .collect()
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().flat_map(|(i, (p, q))| differences(p, q, &format!("{at}[{i}]"))).collect()
        }
        _ if a == b => vec![],
        _ => vec![format!("{at}: {a} against {b}")],
    }
}

/// The chart passes `helm lint --strict` (a warning fails it) with its defaults and with every
/// value set, and says the syslint it deploys is this one.
#[test]
fn the_helm_chart_lints() {
    let Some(helm) = helm() else { return };
    let chart = chart();
    let chart = chart.to_str().expect("a path");
    for sets in [&[][..], &ALL_VALUES[..]] {
        let mut args = vec!["lint", "--strict", chart];
        args.extend_from_slice(sets);
        let o = helm_run(&helm, &args);
        assert!(o.status.success(), "helm {args:?}: {}{}", stdout(&o), stderr(&o));
        assert!(stdout(&o).contains("1 chart(s) linted, 0 chart(s) failed"), "{}", stdout(&o));
    }
    let meta = std::fs::read_to_string(root().join("deploy/helm/syslint-agent/Chart.yaml")).expect("Chart.yaml");
    let meta = &yaml_docs(&meta, "Chart.yaml")[0];
    assert_eq!(meta["appVersion"], env!("CARGO_PKG_VERSION"), "Chart.yaml's appVersion is syslint's version");
}

/// With its default values the chart's DaemonSet runs the manifest's pod: the same pod spec,
/// compared whole (host pids, no service account token, tolerations; the container's image,
/// arguments, environment, port, security context with its capabilities, resources, probe and
/// read-only mounts; the host paths mounted), and the same scrape annotations. Only the
/// labels differ (Helm's), and the namespace is the release's.
#[test]
fn the_helm_charts_daemonset_is_the_manifests() {
    let Some(helm) = helm() else { return };
    let chart = rendered_daemonset(&helm, &[]);
    let manifest = daemonset();
    assert_eq!(chart["metadata"]["name"], manifest["metadata"]["name"], "{:#}", chart["metadata"]);
    assert_eq!(chart["metadata"]["namespace"], manifest["metadata"]["namespace"], "{:#}", chart["metadata"]);
    for part in ["spec", "metadata"] {
        let (c, m) = (&chart["spec"]["template"][part], &manifest["spec"]["template"][part]);
        let (c, m) = if part == "metadata" { (&c["annotations"], &m["annotations"]) } else { (c, m) };
        let d = differences(c, m, &format!("template.{part}"));
        assert!(d.is_empty(), "the chart's pod (first) and the manifest's differ:\n{}", d.join("\n"));
    }
    // the pod's labels select it
    let labels = &chart["spec"]["template"]["metadata"]["labels"];
    for (k, v) in chart["spec"]["selector"]["matchLabels"].as_object().expect("matchLabels") {
        assert_eq!(&labels[k], v, "{labels:#}");
    }
}

/// Every value of the chart that is a flag of the agent but `comm`, set, as `--set` arguments
/// (`comm` is the docs' example's).
const ALL_VALUES: [&str; 22] = [
    "--set",
    "metricsListen=0.0.0.0:9100",
    "--set",
    "cgroup={/kubepods.slice,/system.slice}",
    "--set",
    "stacks=off",
    "--set",
    "countBetween=true",
    "--set",
    "podLogs=/var/lib/syslint-test/pods",
    "--set",
    "every=30s",
    "--set",
    "extraArgs={--config,/etc/syslint/syslint.toml}",
    "--set",
    "otlpEndpoint=http://127.0.0.1:4318",
    "--set",
    "cpuBudget=10%",
    "--set",
    "memoryBudget=384M",
    "--set",
    "windowRecords=0",
];

/// The chart's values become exactly the agent's flags: the three the docs show (an OTLP
/// endpoint, two names, a window), then every value at once (the port, the pod log
/// directory's mount and the scrape annotation follow theirs), then none but the OTLP endpoint
/// (no metrics address: no port, probe or scrape annotations).
#[test]
fn the_helm_charts_values_are_the_agents_flags() {
    let Some(helm) = helm() else { return };
    let args = |ds: &Value| -> Vec<String> {
        ds["spec"]["template"]["spec"]["containers"][0]["args"]
            .as_array()
            .expect("args")
            .iter()
            .map(|a| a.as_str().expect("a string").to_string())
            .collect()
    };
    let ds = rendered_daemonset(
        &helm,
        &["--set", "otlpEndpoint=http://127.0.0.1:4318", "--set", "comm={nginx,php-fpm}", "--set", "window=5s"],
    );
    #[rustfmt::skip]
    assert_eq!(args(&ds), [
        "agent", "--metrics-listen", "0.0.0.0:9464", "--window", "5s", "--every", "60s",
        "--otlp-endpoint", "http://127.0.0.1:4318", "--comm", "nginx", "--comm", "php-fpm",
    ]);

    let ds = rendered_daemonset(&helm, &ALL_VALUES);
    #[rustfmt::skip]
    assert_eq!(args(&ds), [
        "agent", "--metrics-listen", "0.0.0.0:9100", "--window", "2s", "--every", "30s",
        "--otlp-endpoint", "http://127.0.0.1:4318", "--cgroup", "/kubepods.slice", "--cgroup", "/system.slice",
        "--stacks", "off", "--count-between", "--pod-logs", "/var/lib/syslint-test/pods",
        "--cpu-budget", "10%", "--memory-budget", "384M", "--window-records", "0",
        "--config", "/etc/syslint/syslint.toml",
    ]);
    let pod = &ds["spec"]["template"]["spec"];
    let c = &pod["containers"][0];
    assert_eq!(c["ports"], json!([{"name": "metrics", "containerPort": 9100}]), "{c:#}");
    assert_eq!(ds["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"], "9100");
    let logs =
        c["volumeMounts"].as_array().expect("mounts").iter().find(|m| m["name"] == "pod-logs").expect("pod-logs");
    assert_eq!(logs["mountPath"], "/var/lib/syslint-test/pods", "{logs:#}");
    assert_eq!(logs["readOnly"], true, "{logs:#}");
    let vol = pod["volumes"].as_array().expect("volumes").iter().find(|v| v["name"] == "pod-logs").expect("pod-logs");
    assert_eq!(vol["hostPath"]["path"], "/var/lib/syslint-test/pods", "{vol:#}");

    let ds = rendered_daemonset(&helm, &["--set", "metricsListen=", "--set", "otlpEndpoint=http://127.0.0.1:4318"]);
    #[rustfmt::skip]
    assert_eq!(args(&ds), ["agent", "--window", "2s", "--every", "60s", "--otlp-endpoint", "http://127.0.0.1:4318"]);
    let c = &ds["spec"]["template"]["spec"]["containers"][0];
    assert!(c.get("ports").is_none() && c.get("readinessProbe").is_none(), "{c:#}");
    let meta = &ds["spec"]["template"]["metadata"];
    assert!(meta.get("annotations").is_none(), "no scrape annotations without a port: {meta:#}");

    // TLS files from a Secret (cert-manager's keys), mounted read-only, given by their flags
    let ds = rendered_daemonset(
        &helm,
        &[
            "--set",
            "otlpEndpoint=https://otel.example:4318",
            "--set",
            "otlpTls.secretName=otlp-ca",
            "--set",
            "otlpTls.clientCertificate=true",
        ],
    );
    #[rustfmt::skip]
    assert_eq!(args(&ds), [
        "agent", "--metrics-listen", "0.0.0.0:9464", "--window", "2s", "--every", "60s",
        "--otlp-endpoint", "https://otel.example:4318", "--otlp-ca", "/etc/syslint/otlp-tls/ca.crt",
        "--otlp-client-cert", "/etc/syslint/otlp-tls/tls.crt", "--otlp-client-key", "/etc/syslint/otlp-tls/tls.key",
    ]);
    let pod = &ds["spec"]["template"]["spec"];
    let mount =
        pod["containers"][0]["volumeMounts"].as_array().expect("mounts").iter().find(|m| m["name"] == "otlp-tls");
    assert_eq!(mount, Some(&json!({"name": "otlp-tls", "mountPath": "/etc/syslint/otlp-tls", "readOnly": true})));
    let vol = pod["volumes"].as_array().expect("volumes").iter().find(|v| v["name"] == "otlp-tls");
    assert_eq!(vol.map(|v| &v["secret"]), Some(&json!({"secretName": "otlp-ca", "defaultMode": 0o400})));
    let ds =
        rendered_daemonset(&helm, &["--set", "otlpEndpoint=https://otel.example", "--set", "otlpTls.secretName=ca"]);
    assert!(args(&ds).ends_with(&["--otlp-ca".to_string(), "/etc/syslint/otlp-tls/ca.crt".to_string()]));

    // a value the agent would refuse is refused by the chart, naming it
    let chart = chart();
    for (set, says) in [
        ("otlpTls.clientCertificate=true", "otlpTls.clientCertificate"),
        ("otlpTls.secretName=ca", "otlpTls.secretName: TLS files are for an https:// otlpEndpoint"),
    ] {
        let o = helm_run(&helm, &["template", "x", chart.to_str().expect("a path"), "--set", set]);
        assert!(!o.status.success() && stderr(&o).contains(says), "{set}: {}", stderr(&o));
    }
    let o = helm_run(&helm, &["template", "x", chart.to_str().expect("a path"), "--set", "stacks=full"]);
    assert!(!o.status.success() && stderr(&o).contains("stacks \"full\": sampled or off"), "{}", stderr(&o));
}

/// The flags the chart's values give are ones the agent takes: the docs' example and every
/// value at once, run as the DaemonSet's are (a millisecond, a loopback port), the
/// `--config` of `extraArgs` and the pod log directory made here.
#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn the_helm_charts_arguments_are_the_agents() {
    assert_bpf_works("the deploy test");
    let Some(helm) = helm() else { return };
    let ds = rendered_daemonset(
        &helm,
        &["--set", "otlpEndpoint=http://127.0.0.1:4318", "--set", "comm={nginx,php-fpm}", "--set", "window=5s"],
    );
    the_agent_takes(&local_args(&ds["spec"]["template"]["spec"]["containers"][0]), "processes named nginx, php-fpm");

    let dir = std::env::temp_dir().join(format!("syslint-deploy-helm-{}", std::process::id()));
    let (config, logs) = (dir.join("syslint.toml"), dir.join("pods"));
    std::fs::create_dir_all(&logs).expect("dir");
    std::fs::write(&config, "[agent]\n").expect("config");
    let mut sets: Vec<String> = ALL_VALUES.iter().map(ToString::to_string).collect();
    for s in &mut sets {
        *s = s
            .replace("/var/lib/syslint-test/pods", logs.to_str().expect("a path"))
            .replace("/etc/syslint/syslint.toml", config.to_str().expect("a path"));
    }
    let ds = rendered_daemonset(&helm, &sets.iter().map(String::as_str).collect::<Vec<_>>());
    let args = local_args(&ds["spec"]["template"]["spec"]["containers"][0]);
    assert!(args.iter().any(|a| a == "--count-between") && args.contains(&config.display().to_string()), "{args:?}");
    the_agent_takes(&args, "every process of the host in cgroup /kubepods.slice, /system.slice");
    let _ = std::fs::remove_dir_all(&dir);
}
