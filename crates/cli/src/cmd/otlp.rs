//! `syslint agent --otlp-endpoint URL`: findings as OpenTelemetry log records and the agent's
//! series as OTLP metrics, over OTLP/HTTP with protobuf bodies (`URL/v1/logs`,
//! `URL/v1/metrics`), the way an OpenTelemetry Collector's `otlp` receiver takes them.
//!
//! The messages are opentelemetry-proto's types (the OpenTelemetry project's generated OTLP
//! structs), encoded with prost and posted with ureq. Not the SDK's exporters: those carry one
//! Resource per provider, and the agent speaks for many processes, containers and pods, each
//! of which is a resource of its own (semantic conventions: `process.executable.name`,
//! `container.id`, `k8s.pod.uid`, `host.name`); a request here groups the records by resource.
//! docs/design.md says more.
//!
//! An `https://` endpoint is verified against Mozilla's root certificates (built in, so the
//! agent needs no CA store in its image), or against the CAs of `--otlp-ca FILE`
//! ($OTEL_EXPORTER_OTLP_CERTIFICATE) for a collector with a private or self-signed certificate;
//! `--otlp-client-cert`/`--otlp-client-key` (mutual TLS) present the agent's own. rustls, with
//! ring's cryptography: no OpenSSL at run time.
//!
//! A log record is sent when a finding changes ([`Change`]: found, back, worse, gone), not
//! every window it is seen in; the metrics after every window. A collector that is down or slow
//! costs a window at most the request timeout; failures are counted and said (the first, then
//! one in a hundred), never fatal.

use prost::Message;
use std::time::{Duration, SystemTime};
use syslint_pipeline::agent::{self, Change, Key, Store};
use syslint_report::Severity;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use opentelemetry_proto::tonic::metrics::v1::{
    metric, number_data_point, AggregationTemporality, Gauge, Metric, NumberDataPoint, ResourceMetrics, ScopeMetrics,
    Sum,
};
use opentelemetry_proto::tonic::resource::v1::Resource;

/// The agent's own counters, beside the store's.
#[derive(Debug, Default, Clone, Copy)]
pub struct AgentCounts {
    pub failed_windows: u64,
    pub count_periods: u64,
    pub candidate_windows: u64,
    pub cpu_s: f64,
    /// Windows shortened or skipped to stay within the CPU budget; windows whose records
    /// reached what the memory budget leaves.
    pub shortened_windows: u64,
    pub skipped_windows: u64,
    pub unread_windows: u64,
    pub resident_bytes: u64,
    /// Seconds the windows spent in each of [`WINDOW_PHASES`].
    pub window_phases_s: [f64; WINDOW_PHASES.len()],
    /// Windows ended early at --window-records.
    pub bounded_windows: u64,
    /// Windows that left out the processes which filled the window before at its bound.
    pub rotated_windows: u64,
}

/// What `syslint_rotated_windows_total` (OTLP `syslint.windows.rotated`) counts.
pub const ROTATED_HELP: &str =
    "Windows that left out the processes which filled the window before at --window-records (the others got a whole window)";

/// Where a window's time goes, in order: loading and attaching the programs, recording,
/// waiting for calls under way to return (hooks on, nothing new recorded), reading and
/// analysing what is left (the programs detached first), freeing the programs and maps,
/// finishing each cgroup's report and keeping its findings.
pub const WINDOW_PHASES: [&str; 6] = ["attach", "trace", "settle", "catch_up", "detach", "analyse"];

/// The TLS files of an `https://` OTLP endpoint (PEM): the CAs to trust instead of Mozilla's
/// roots, and the agent's own certificate and key for a collector that asks for one.
#[derive(Debug, Default, Clone)]
pub struct Tls {
    /// `--otlp-ca`, $OTEL_EXPORTER_OTLP_CERTIFICATE: one or more CA certificates.
    pub ca: Option<std::path::PathBuf>,
    /// `--otlp-client-cert`, $OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: the chain, leaf first.
    pub client_cert: Option<std::path::PathBuf>,
    /// `--otlp-client-key`, $OTEL_EXPORTER_OTLP_CLIENT_KEY: its private key.
    pub client_key: Option<std::path::PathBuf>,
}

impl Tls {
    /// The files not given by a flag or the config file taken from the OpenTelemetry variables
    /// (`env` looks one up; read only when there is an endpoint, as the headers are).
    pub fn or_env(self, env: impl Fn(&str) -> Option<String>) -> Tls {
        let var = |name: &str| env(name).filter(|v| !v.is_empty()).map(std::path::PathBuf::from);
        Tls {
            ca: self.ca.or_else(|| var("OTEL_EXPORTER_OTLP_CERTIFICATE")),
            client_cert: self.client_cert.or_else(|| var("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE")),
            client_key: self.client_key.or_else(|| var("OTEL_EXPORTER_OTLP_CLIENT_KEY")),
        }
    }

    /// The first of the options set, named as its flag: they mean nothing for plain http.
    pub fn given(&self) -> Option<&'static str> {
        [(&self.ca, "--otlp-ca"), (&self.client_cert, "--otlp-client-cert"), (&self.client_key, "--otlp-client-key")]
            .into_iter()
            .find_map(|(v, flag)| v.as_ref().map(|_| flag))
    }

    /// The files read and checked: every error names the option and the file.
    fn config(&self) -> anyhow::Result<ureq::tls::TlsConfig> {
        use ureq::tls::{ClientCert, PemItem, RootCerts, TlsConfig};
        let read = |flag: &str, p: &std::path::Path| -> anyhow::Result<Vec<PemItem<'static>>> {
            let bytes = std::fs::read(p).map_err(|e| anyhow::anyhow!("{flag} {}: {e}", p.display()))?;
            let items = ureq::tls::parse_pem(&bytes).collect::<Result<Vec<_>, _>>();
            items.map_err(|e| anyhow::anyhow!("{flag} {}: not PEM ({e})", p.display()))
        };
        let certs = |flag: &str, p: &std::path::Path| -> anyhow::Result<Vec<ureq::tls::Certificate<'static>>> {
            let list: Vec<_> = read(flag, p)?
                .into_iter()
                .filter_map(|i| match i {
                    PemItem::Certificate(c) => Some(c),
                    _ => None,
                })
                .collect();
            if list.is_empty() {
                anyhow::bail!(
                    "{flag} {}: no certificate in it (a PEM file with -----BEGIN CERTIFICATE-----)",
                    p.display()
                );
            }
            Ok(list)
        };
        let mut b = TlsConfig::builder();
        if let Some(p) = &self.ca {
            b = b.root_certs(RootCerts::new_with_certs(&certs("--otlp-ca", p)?));
        }
        match (&self.client_cert, &self.client_key) {
            (None, None) => {}
            (Some(c), Some(k)) => {
                let chain = certs("--otlp-client-cert", c)?;
                let key = read("--otlp-client-key", k)?.into_iter().find_map(|i| match i {
                    PemItem::PrivateKey(k) => Some(k),
                    _ => None,
                });
                let Some(key) = key else {
                    anyhow::bail!("--otlp-client-key {}: no private key in it (a PEM file with -----BEGIN PRIVATE KEY----- or an RSA or EC key)", k.display());
                };
                b = b.client_cert(Some(ClientCert::new_with_certs(&chain, key)));
            }
            (Some(_), None) => anyhow::bail!("--otlp-client-cert needs --otlp-client-key (its private key) too"),
            (None, Some(_)) => {
                anyhow::bail!("--otlp-client-key needs --otlp-client-cert (the certificate it goes with) too")
            }
        }
        Ok(b.build())
    }
}

/// How long one export may take (connect, send, answer).
const TIMEOUT: Duration = Duration::from_secs(5);

/// Where the agent exports, and what it has sent.
pub struct Otlp {
    base: String,
    /// Sent with every request (--otlp-header, $OTEL_EXPORTER_OTLP_HEADERS); never printed.
    headers: Vec<(String, String)>,
    http: ureq::Agent,
    /// Whether the CAs to trust were given (else a certificate error hints at --otlp-ca).
    own_ca: bool,
    host: String,
    started: u64,
    pub sent_logs: u64,
    pub errors: u64,
}

impl Otlp {
    /// An exporter to `endpoint`, the collector's OTLP/HTTP base URL (`http://HOST:4318`, as
    /// OTEL_EXPORTER_OTLP_ENDPOINT gives it): the signal paths are appended. `tls` is for an
    /// `https://` endpoint only.
    pub fn new(endpoint: &str, headers: Vec<(String, String)>, tls: &Tls) -> anyhow::Result<Otlp> {
        let base = endpoint.trim_end_matches('/').to_string();
        let ok = base.strip_prefix("http://").or_else(|| base.strip_prefix("https://")).is_some_and(|h| !h.is_empty());
        if !ok {
            anyhow::bail!(
                "the OTLP endpoint must be an http:// or https:// URL (e.g. http://127.0.0.1:4318), not {endpoint:?}"
            );
        }
        let https = base.starts_with("https://");
        if !https {
            if let Some(flag) = tls.given() {
                anyhow::bail!("{flag} is for an https:// endpoint, and {base} is plain http://");
            }
        }
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(TIMEOUT))
            .http_status_as_error(false)
            .https_only(https)
            .tls_config(tls.config()?)
            .user_agent(concat!("syslint/", env!("CARGO_PKG_VERSION")))
            .build();
        Ok(Otlp {
            base,
            headers,
            http: config.into(),
            own_ca: tls.ca.is_some(),
            host: host_name(),
            started: unix_nanos(SystemTime::now()),
            sent_logs: 0,
            errors: 0,
        })
    }

    /// The changes a window made, as log records (one per change) grouped by resource: the
    /// body to post to `/v1/logs` and the records in it ([`Otlp::send_logs`]). Built while the
    /// store is locked, sent after.
    pub fn logs(&self, store: &Store, changes: &[(Key, Change)], pods: &mut agent::Pods) -> Option<(Vec<u8>, u64)> {
        if changes.is_empty() {
            return None;
        }
        let now = unix_nanos(SystemTime::now());
        let mut by: Vec<(Resource, Vec<LogRecord>)> = Vec::new();
        for (k, c) in changes {
            let Some(e) = store.get(k) else { continue };
            let res = self.resource_of(k, pods);
            let rec = record(k, *c, e, now);
            match by.iter_mut().find(|(r, _)| *r == res) {
                Some((_, list)) => list.push(rec),
                None => by.push((res, vec![rec])),
            }
        }
        let n = by.iter().map(|(_, l)| l.len() as u64).sum::<u64>();
        let req = ExportLogsServiceRequest {
            resource_logs: by
                .into_iter()
                .map(|(resource, log_records)| ResourceLogs {
                    resource: Some(resource),
                    scope_logs: vec![ScopeLogs { scope: Some(scope()), log_records, schema_url: String::new() }],
                    schema_url: String::new(),
                })
                .collect(),
        };
        Some((req.encode_to_vec(), n))
    }

    /// Posts what [`Otlp::logs`] made.
    pub fn send_logs(&mut self, (body, n): (Vec<u8>, u64)) {
        if self.post("/v1/logs", body) {
            self.sent_logs += n;
        }
    }

    /// Posts what [`Otlp::metrics`] made.
    pub fn send_metrics(&mut self, body: Vec<u8>) {
        self.post("/v1/metrics", body);
    }

    /// The store's series (what /metrics serves) as OTLP metrics: cumulative sums since the
    /// agent started, the findings' states as gauges. The body to post to `/v1/metrics`.
    pub fn metrics(&self, store: &Store, agent: &AgentCounts) -> Vec<u8> {
        let now = unix_nanos(SystemTime::now());
        let start = self.started;
        let point = |attributes: Vec<KeyValue>, v: number_data_point::Value| NumberDataPoint {
            attributes,
            start_time_unix_nano: start,
            time_unix_nano: now,
            value: Some(v),
            ..Default::default()
        };
        let int = number_data_point::Value::AsInt;
        let sum = |name: &str, description: &str, unit: &str, points: Vec<NumberDataPoint>| Metric {
            name: name.into(),
            description: description.into(),
            unit: unit.into(),
            data: Some(metric::Data::Sum(Sum {
                data_points: points,
                aggregation_temporality: AggregationTemporality::Cumulative as i32,
                is_monotonic: true,
            })),
            ..Default::default()
        };
        let mut found = Vec::new();
        let mut active = Vec::new();
        let mut saved = Vec::new();
        for (k, e) in store.entries() {
            let mut attrs = finding_labels(k);
            attrs.push(kv("syslint.severity", severity(e.worst)));
            found.push(point(attrs.clone(), int(e.windows as i64)));
            active.push(point(attrs.clone(), int(i64::from(e.active))));
            saved.push(point(attrs, number_data_point::Value::AsDouble(e.saved_s)));
        }
        let (mut p_calls, mut p_errors, mut p_traced) = (Vec::new(), Vec::new(), Vec::new());
        for ((program, cgroup), c) in &store.programs {
            let mut attrs = vec![kv("process.executable.name", program)];
            if let Some(cg) = cgroup {
                attrs.push(kv("syslint.cgroup", cg));
            }
            p_calls.push(point(attrs.clone(), int(c.calls as i64)));
            p_errors.push(point(attrs.clone(), int(c.errors as i64)));
            p_traced.push(point(attrs, number_data_point::Value::AsDouble(c.traced_s)));
        }
        let one = |v: u64| vec![point(Vec::new(), int(v as i64))];
        let metrics = vec![
            sum("syslint.findings", "Windows each finding was found in", "{window}", found),
            Metric {
                name: "syslint.finding.active".into(),
                description: "1 while the finding was seen in the latest window of its program".into(),
                data: Some(metric::Data::Gauge(Gauge { data_points: active })),
                ..Default::default()
            },
            sum("syslint.finding.saved", "Seconds the finding's fix would have saved over its windows", "s", saved),
            sum(
                "syslint.program.syscalls",
                "Syscalls of each program in the windows that watched it",
                "{syscall}",
                p_calls,
            ),
            sum(
                "syslint.program.syscall_errors",
                "Failed syscalls of each program in its windows",
                "{syscall}",
                p_errors,
            ),
            sum("syslint.program.traced", "Seconds each program was traced in full detail", "s", p_traced),
            sum("syslint.windows", "Full-detail windows made", "{window}", one(store.windows)),
            sum("syslint.windows.idle", "Windows with no process to watch", "{window}", one(store.idle_windows)),
            sum("syslint.windows.failed", "Windows whose trace could not start", "{window}", one(agent.failed_windows)),
            sum(
                "syslint.windows.bounded",
                "Windows ended early because they reached --window-records",
                "{window}",
                one(agent.bounded_windows),
            ),
            sum("syslint.windows.rotated", ROTATED_HELP, "{window}", one(agent.rotated_windows)),
            sum(
                "syslint.count_periods",
                "Periods a cgroup was counted in the kernel between windows",
                "{period}",
                one(agent.count_periods),
            ),
            sum(
                "syslint.windows.candidate",
                "Windows started at once because a cgroup's counts showed something new",
                "{window}",
                one(agent.candidate_windows),
            ),
            sum("syslint.syscalls", "Syscalls seen in the windows", "{syscall}", one(store.syscalls)),
            sum("syslint.lost_events", "Events the windows' captures lost", "{event}", one(store.lost_events)),
            sum(
                "syslint.findings.evicted",
                "Findings dropped to keep the store bounded",
                "{finding}",
                one(store.evicted),
            ),
            sum(
                "syslint.agent.cpu.time",
                "CPU time of the agent itself (user and system)",
                "s",
                vec![point(Vec::new(), number_data_point::Value::AsDouble(agent.cpu_s))],
            ),
            Metric {
                name: "syslint.agent.memory.usage".into(),
                description: "Memory of the agent itself (resident)".into(),
                unit: "By".into(),
                data: Some(metric::Data::Gauge(Gauge {
                    data_points: vec![point(Vec::new(), int(i64::try_from(agent.resident_bytes).unwrap_or(i64::MAX)))],
                })),
                ..Default::default()
            },
            sum(
                "syslint.windows.shed",
                "Windows shortened or skipped to stay within the CPU budget (syslint.budget=cpu), or whose records \
                 reached what the memory budget leaves (syslint.budget=memory)",
                "{window}",
                [
                    ("cpu", "shortened", agent.shortened_windows),
                    ("cpu", "skipped", agent.skipped_windows),
                    ("memory", "unread", agent.unread_windows),
                ]
                .into_iter()
                .map(|(b, how, n)| point(vec![kv("syslint.budget", b), kv("syslint.shed", how)], int(n as i64)))
                .collect(),
            ),
            sum(
                "syslint.windows.time",
                "Seconds the windows spent in each phase (syslint.phase): attach, trace, settle, catch_up, detach, \
                 analyse",
                "s",
                WINDOW_PHASES
                    .iter()
                    .zip(agent.window_phases_s)
                    .map(|(p, s)| point(vec![kv("syslint.phase", p)], number_data_point::Value::AsDouble(s)))
                    .collect(),
            ),
        ];
        let req = ExportMetricsServiceRequest {
            resource_metrics: vec![ResourceMetrics {
                resource: Some(Resource {
                    attributes: vec![kv("service.name", "syslint-agent"), kv("host.name", &self.host)],
                    ..Default::default()
                }),
                scope_metrics: vec![ScopeMetrics { scope: Some(scope()), metrics, schema_url: String::new() }],
                schema_url: String::new(),
            }],
        };
        req.encode_to_vec()
    }

    /// The resource a finding is about, in the semantic conventions' names.
    fn resource_of(&self, k: &Key, pods: &mut agent::Pods) -> Resource {
        let mut attributes = vec![kv("host.name", &self.host)];
        if let Some(p) = &k.program {
            attributes.push(kv("process.executable.name", p));
        }
        if let Some(c) = k.cgroup.as_deref().and_then(agent::container_id) {
            attributes.push(kv("container.id", &c));
        }
        if let Some(p) = k.cgroup.as_deref().and_then(agent::pod_uid) {
            if let Some((ns, name)) = pods.of(&p) {
                attributes.push(kv("k8s.namespace.name", &ns));
                attributes.push(kv("k8s.pod.name", &name));
            }
            attributes.push(kv("k8s.pod.uid", &p));
        }
        Resource { attributes, ..Default::default() }
    }

    /// POSTs one protobuf body; whether the collector took it.
    fn post(&mut self, path: &str, body: Vec<u8>) -> bool {
        let url = format!("{}{path}", self.base);
        let mut req = self.http.post(&url).header("Content-Type", "application/x-protobuf");
        for (k, v) in &self.headers {
            req = req.header(k, v);
        }
        let r = req.send(&body[..]);
        let problem = match r {
            Ok(mut resp) if resp.status().is_success() => {
                // the answer (an ExportLogsServiceResponse) may report rejected records
                let _ = resp.body_mut().read_to_vec();
                return true;
            }
            Ok(mut resp) => {
                let text = resp.body_mut().read_to_string().unwrap_or_default();
                format!("{} {}", resp.status(), text.chars().take(200).collect::<String>())
            }
            Err(e) if !self.own_ca && e.to_string().contains("certificate") => {
                format!("{e} (a collector with a private or self-signed certificate: give its CA with --otlp-ca FILE)")
            }
            Err(e) => e.to_string(),
        };
        self.errors += 1;
        if self.errors % 100 == 1 {
            eprintln!("syslint agent: OTLP export to {url} failed ({} so far): {problem}", self.errors);
        }
        false
    }
}

/// A finding's change as a log record: the message as its body, the rest as attributes.
fn record(k: &Key, c: Change, e: &agent::Entry, now: u64) -> LogRecord {
    let f = &e.latest;
    let (number, text) = match (c, f.severity) {
        (Change::Gone, _) => (9, "INFO"),
        (_, Severity::Info) => (9, "INFO"),
        (_, Severity::Warning) => (13, "WARN"),
        (_, Severity::Error) => (17, "ERROR"),
    };
    let mut attributes = finding_labels(k);
    attributes.extend([
        kv("syslint.change", c.as_str()),
        kv("syslint.code", &f.code),
        kv("syslint.severity", severity(f.severity)),
        kv("syslint.subject", &f.subject),
        kv("syslint.fix", &f.fix),
        kv_of("syslint.windows", int_value(e.windows as i64)),
        kv_of("syslint.saved_seconds", double_value(e.saved_s)),
    ]);
    if let Some(cost) = &f.cost {
        attributes.push(kv("syslint.cost", cost));
    }
    // where in the code (semantic conventions' code.* attributes), when the stacks named it
    if let Some(lead) = f.call_sites.first().and_then(|s| s.lead()) {
        if let Some(sym) = &lead.symbol {
            attributes.push(kv("code.function.name", sym));
        }
        if let Some(file) = &lead.file {
            attributes.push(kv("code.file.path", file));
        }
        if let Some(line) = lead.line {
            attributes.push(kv_of("code.line.number", int_value(i64::from(line))));
        }
    }
    let body = match c {
        Change::Gone => format!("{} no longer seen: {}", f.detector, f.message),
        _ => format!("{}: {}", f.detector, f.message),
    };
    LogRecord {
        time_unix_nano: unix_nanos(e.last_seen),
        observed_time_unix_nano: now,
        severity_number: number,
        severity_text: text.into(),
        body: Some(string_value(&body)),
        attributes,
        event_name: "syslint.finding".into(),
        ..Default::default()
    }
}

/// The attributes that tell one finding from another (its key).
fn finding_labels(k: &Key) -> Vec<KeyValue> {
    let mut v = vec![kv("syslint.detector", &k.detector)];
    if let Some(p) = &k.program {
        v.push(kv("process.executable.name", p));
    }
    if let Some(n) = &k.name {
        v.push(kv("syslint.subject.name", n));
    }
    if let Some(c) = &k.cgroup {
        v.push(kv("syslint.cgroup", c));
    }
    v
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Info => "info",
        Severity::Warning => "warning",
        Severity::Error => "error",
    }
}

fn scope() -> InstrumentationScope {
    InstrumentationScope { name: "syslint".into(), version: env!("CARGO_PKG_VERSION").into(), ..Default::default() }
}

fn kv(key: &str, value: &str) -> KeyValue {
    kv_of(key, string_value(value))
}

fn kv_of(key: &str, value: AnyValue) -> KeyValue {
    KeyValue { key: key.into(), value: Some(value), ..Default::default() }
}

fn string_value(s: &str) -> AnyValue {
    AnyValue { value: Some(any_value::Value::StringValue(s.into())) }
}

fn int_value(v: i64) -> AnyValue {
    AnyValue { value: Some(any_value::Value::IntValue(v)) }
}

fn double_value(v: f64) -> AnyValue {
    AnyValue { value: Some(any_value::Value::DoubleValue(v)) }
}

fn unix_nanos(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The headers to send: `--otlp-header KEY=VALUE` flags, and $OTEL_EXPORTER_OTLP_HEADERS
/// (`key1=value1,key2=value2`, values percent-encoded, as the OpenTelemetry specification
/// writes it), a flag winning over the variable for the same key (names compare without
/// case). An error names the flag or the variable and the key, never a value.
pub fn headers(flags: &[String], env: &str) -> anyhow::Result<Vec<(String, String)>> {
    fn check(k: &str, v: &str, from: &str) -> anyhow::Result<(String, String)> {
        let k = k.trim();
        let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if k.is_empty() || !k.chars().all(token) {
            anyhow::bail!("{from}: {k:?} is not a header name (letters, digits and -_. and the like)");
        }
        if v.chars().any(|c| c.is_control() && c != '\t') {
            anyhow::bail!("{from}: the value of {k} holds a control character (a line break?)");
        }
        Ok((k.to_string(), v.trim().to_string()))
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for item in env.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((k, v)) = item.split_once('=') else {
            anyhow::bail!("$OTEL_EXPORTER_OTLP_HEADERS: an entry without '=' (key1=value1,key2=value2)");
        };
        let v = percent_decode(v).ok_or_else(|| {
            anyhow::anyhow!("$OTEL_EXPORTER_OTLP_HEADERS: the value of {} is not valid percent-encoded UTF-8", k.trim())
        })?;
        out.push(check(k, &v, "$OTEL_EXPORTER_OTLP_HEADERS")?);
    }
    for f in flags {
        let Some((k, v)) = f.split_once('=') else {
            anyhow::bail!("--otlp-header: expected KEY=VALUE (e.g. Authorization=Bearer ...), got no '='");
        };
        let (k, v) = check(k, v, "--otlp-header")?;
        out.retain(|(o, _)| !o.eq_ignore_ascii_case(&k));
        out.push((k, v));
    }
    Ok(out)
}

/// `%XX` escapes undone (a value of $OTEL_EXPORTER_OTLP_HEADERS); None when one is malformed
/// or the bytes are not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// This host's name (the kernel's), for `host.name`.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_checked() {
        assert!(Otlp::new("http://127.0.0.1:4318", vec![], &Tls::default()).is_ok());
        assert!(Otlp::new("http://127.0.0.1:4318/", vec![], &Tls::default())
            .is_ok_and(|o| o.base == "http://127.0.0.1:4318"));
        assert!(Otlp::new("https://collector:4318", vec![], &Tls::default()).is_ok());
        for bad in ["127.0.0.1:4318", "http://", "ftp://x", "https://"] {
            assert!(Otlp::new(bad, vec![], &Tls::default()).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_collector_that_is_down_is_counted_not_fatal() {
        // a port nothing listens on (bound, then closed)
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("port").port();
        let mut o = Otlp::new(&format!("http://127.0.0.1:{port}"), vec![], &Tls::default()).expect("exporter");
        let body = o.metrics(&Store::default(), &AgentCounts::default());
        o.send_metrics(body);
        assert_eq!((o.errors, o.sent_logs), (1, 0));
    }

    #[test]
    fn headers_come_from_flags_and_the_variable() {
        let h = headers(&["Authorization=Bearer abc=def".into()], "x-api-key=k%2C1, Authorization = old ").expect("ok");
        assert_eq!(h, [("x-api-key".into(), "k,1".into()), ("Authorization".into(), "Bearer abc=def".into())]);
        assert!(headers(&[], "").expect("none").is_empty());
        for (flags, env) in [
            (vec!["novalue".to_string()], ""),
            (vec!["bad name=x".to_string()], ""),
            (vec!["k=a\nb".to_string()], ""),
            (vec![], "k"),
            (vec![], "k=%zz"),
        ] {
            let e = headers(&flags, env).expect_err("refused").to_string();
            assert!(!e.contains("a\nb") && !e.contains("%zz"), "no value in the message: {e}");
        }
    }

    #[test]
    fn headers_go_with_every_request() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
        let port = l.local_addr().expect("addr").port();
        let got = std::thread::spawn(move || {
            let (mut c, _) = l.accept().expect("accept");
            let mut req = Vec::new();
            let mut buf = [0u8; 4096];
            use std::io::{Read, Write};
            // the head and a little of the body: enough to see the headers
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = c.read(&mut buf).expect("read");
                if n == 0 {
                    break;
                }
                req.extend_from_slice(&buf[..n]);
            }
            let _ = c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            String::from_utf8_lossy(&req).to_lowercase()
        });
        let h = vec![("x-api-key".to_string(), "secret-1".to_string())];
        let mut o = Otlp::new(&format!("http://127.0.0.1:{port}"), h, &Tls::default()).expect("exporter");
        let body = o.metrics(&Store::default(), &AgentCounts::default());
        o.send_metrics(body);
        let req = got.join().expect("server");
        assert!(req.starts_with("post /v1/metrics "), "{req}");
        assert!(req.contains("\r\nx-api-key: secret-1\r\n"), "{req}");
        assert_eq!(o.errors, 0);
    }
}
