//! Labs as data (issue 26): every lab has a manifest, `lab/<name>/manifest.toml`, that says
//! what each of its recorded traces must show for its detector judged alone (`--select`), with
//! the reason for each quiet one. This test walks every manifest and analyses every recorded
//! trace in-process, through the pipeline library (`syslint analyze` without the process), so
//! a new detector's lab is checked by its manifest alone; the lab's own test file keeps what a
//! manifest cannot say (messages, live runs, other programs).
//!
//! ```toml
//! detector = "yield-spin"
//! live = "lab/yield-spin/run.sh"            # how to see it live (the lab test runs it)
//!
//! [[variant]]
//! name = "c-spin"                           # traces/c-spin.<flags>.strace[.gz]
//! expect = "warning"                        # quiet, info, warning or error: the highest
//! sets = { f = "warning" }                  # per flag set, where it differs
//! metrics = { processes = 1 }               # exact, on every set
//!
//! [[variant]]
//! name = "c-mutex"
//! expect = "quiet"
//! reason = "a mutex sleeps in futex(): nothing yields"   # required when quiet
//!
//! [pasted]                                  # tables and excerpts of a pair (pasted_labs.rs)
//! bad = "c-spin"
//! good = "c-mutex"
//! [pasted.quiet]                            # BAD inputs the detector does not name, and why
//! "c-spin.10" = "5 yields in a row: a lock that yields a few times and then sleeps looks the same"
//!
//! [[ebpf]]                                  # eBPF against strace, live (ebpf_labs.rs)
//! bad = "c-spin"
//! good = "c-mutex"
//! call_site = "worker"                      # the function BAD's finding names (stacks)
//! call_site_file = "lock.c"                 # ... and its file (the C labs build with -g)
//! ```
//!
//! A lab without `[[ebpf]]` pairs says where its eBPF check is instead (`ebpf_elsewhere`).

use crate::common::*;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct Manifest {
    pub detector: String,
    live: Option<String>,
    variant: Vec<Variant>,
    pub pasted: Option<Pasted>,
    #[serde(default)]
    pub ebpf: Vec<Pair>,
    /// Where the lab's eBPF check is, when it is not a plain pair.
    ebpf_elsewhere: Option<String>,
}

/// What people paste instead of a full trace, of a BAD and a GOOD run (pasted_labs.rs).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct Pasted {
    pub bad: String,
    pub good: String,
    /// Excerpts cut again with durations too (`<variant>.T.<N>.txt`).
    #[serde(default)]
    pub timed: bool,
    /// BAD inputs (`<variant>.<tool>` tables, `<variant>.<N>` excerpts) the detector does not
    /// name, each with why.
    #[serde(default)]
    pub quiet: BTreeMap<String, String>,
}

/// A BAD and a GOOD variant, for a live check.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct Pair {
    pub bad: String,
    pub good: String,
    /// The function BAD's finding names as its top call site under eBPF (the lead frame: the
    /// innermost one the program owns), with `call_site_file` its source file where the program
    /// has debug info (the C labs are built with -g)...
    pub call_site: Option<String>,
    pub call_site_file: Option<String>,
    /// ...or why no function of the program can be named (the frames that are named instead).
    /// Pairs with neither are still checked for call sites; naming their function is being
    /// added lab by lab (issue 31).
    pub call_site_none: Option<String>,
}

/// Every registered detector's lab manifest, in the registry's order.
pub(crate) fn manifests() -> Vec<Manifest> {
    syslint_analyze::registry::ENTRIES.iter().map(|e| manifest(&root().join("lab").join(e.meta.name))).collect()
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Variant {
    name: String,
    expect: String,
    #[serde(default)]
    sets: BTreeMap<String, String>,
    reason: Option<String>,
    #[serde(default)]
    metrics: BTreeMap<String, f64>,
}

const LEVELS: &[&str] = &["quiet", "info", "warning", "error"];

/// A recorded trace's variant and flag set: `c-spin.f-tt-T-yy.strace.gz` is (`c-spin`,
/// `f-tt-T-yy`), `redis-new-client.slr` is (`redis-new-client`, `slr`). Other files beside the
/// traces (a native measurement) are not traces.
fn variant_of(file: &str) -> Option<(&str, &str)> {
    let stem = file.strip_suffix(".strace.gz").or_else(|| file.strip_suffix(".strace"));
    match stem {
        Some(s) => Some(s.split_once('.').unwrap_or((s, ""))),
        None => file.strip_suffix(".slr").map(|s| (s, "slr")),
    }
}

fn manifest(lab: &Path) -> Manifest {
    let path = lab.join("manifest.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The highest severity of the detector's findings in a trace (`quiet` for none), and the first
/// finding's metrics.
fn judge(detector: &str, trace: &Path) -> (String, BTreeMap<String, f64>) {
    let detectors = syslint_pipeline::detectors(&[detector.to_string()], &[], None).expect("detector builds");
    let done = syslint_pipeline::analyze_logs(&[trace.to_path_buf()], false, detectors)
        .unwrap_or_else(|e| panic!("{}: {e}", trace.display()));
    let mine: Vec<_> = done.report.findings.iter().filter(|f| f.detector == detector).collect();
    let level = mine.iter().map(|f| f.severity.as_str().to_string()).max_by_key(|s| LEVELS.iter().position(|l| l == s));
    let metrics = mine
        .first()
        .map(|f| f.metrics.iter().filter_map(|(k, v)| v.as_f64().map(|n| (k.clone(), n))).collect())
        .unwrap_or_default();
    (level.unwrap_or_else(|| "quiet".into()), metrics)
}

#[test]
fn every_lab_trace_shows_what_its_manifest_says() {
    let mut work: Vec<(String, PathBuf, String, BTreeMap<String, f64>)> = Vec::new();
    let mut problems = Vec::new();
    for e in syslint_analyze::registry::ENTRIES {
        let name = e.meta.name;
        let lab = root().join("lab").join(name);
        let m = manifest(&lab);
        assert_eq!(m.detector, name, "{}: the manifest names another detector", lab.display());
        if let Some(live) = &m.live {
            assert!(root().join(live.split_whitespace().next().unwrap_or("")).exists(), "{name}: live command {live}");
        }
        // a firing variant and a quiet one, each quiet one with its reason
        assert!(m.variant.iter().any(|v| v.expect != "quiet"), "{name}: no variant where the detector fires");
        assert!(m.variant.iter().any(|v| v.expect == "quiet"), "{name}: no variant where the detector is quiet");
        // its live eBPF check, and what people paste
        assert!(
            !m.ebpf.is_empty()
                || m.ebpf_elsewhere.as_deref().is_some_and(|r| !r.trim().is_empty() && !r.contains("TODO")),
            "{name}: no [[ebpf]] pair and no ebpf_elsewhere saying where eBPF is checked"
        );
        assert!(m.pasted.is_some(), "{name}: no [pasted] pair (lab/counts/record.sh, lab/excerpts/cut.py)");
        // the strace recording of each eBPF pair's BAD variant is what eBPF is held to
        for p in &m.ebpf {
            assert!(m.variant.iter().any(|x| x.name == p.bad), "{name}: [[ebpf]] bad = {}, which is no variant", p.bad);
            assert!(
                !(p.call_site.is_some() && p.call_site_none.is_some()),
                "{name}: [[ebpf]] bad = {}: call_site or call_site_none, not both",
                p.bad
            );
        }
        for v in &m.variant {
            for level in std::iter::once(&v.expect).chain(v.sets.values()) {
                assert!(LEVELS.contains(&level.as_str()), "{name}/{}: expect {level:?}", v.name);
            }
            if v.expect == "quiet" || v.sets.values().any(|s| s == "quiet") {
                assert!(
                    v.reason.as_deref().is_some_and(|r| !r.trim().is_empty()),
                    "{name}/{}: quiet without a reason",
                    v.name
                );
            }
        }
        // every recorded trace belongs to a variant of the manifest, every variant has traces
        let mut files: Vec<String> = std::fs::read_dir(lab.join("traces"))
            .unwrap_or_else(|e| panic!("{name}: traces: {e}"))
            .map(|e| e.expect("dir entry").file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        for v in &m.variant {
            let traces: Vec<&String> =
                files.iter().filter(|f| variant_of(f).is_some_and(|(n, _)| n == v.name)).collect();
            assert!(!traces.is_empty(), "{name}: variant {} has no recorded trace", v.name);
            for set in v.sets.keys() {
                assert!(
                    traces.iter().any(|f| variant_of(f).is_some_and(|(_, s)| s == set)),
                    "{name}/{}: no set {set}",
                    v.name
                );
            }
        }
        for f in &files {
            let Some((variant, set)) = variant_of(f) else { continue };
            let Some(v) = m.variant.iter().find(|v| v.name == variant) else {
                problems.push(format!("{name}: traces/{f} is in no variant of the manifest"));
                continue;
            };
            let expect = v.sets.get(set).unwrap_or(&v.expect).clone();
            work.push((name.to_string(), lab.join("traces").join(f), expect, v.metrics.clone()));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    // in-process, on every core
    let next = std::sync::atomic::AtomicUsize::new(0);
    let wrong = std::sync::Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((det, trace, expect, metrics)) = work.get(i) else { break };
                let (got, have) = judge(det, trace);
                let mut why = Vec::new();
                if &got != expect {
                    why.push(format!("{got}, expected {expect}"));
                }
                for (k, v) in metrics.iter().filter(|_| expect != "quiet") {
                    if have.get(k) != Some(v) {
                        why.push(format!("{k} = {:?}, expected {v}", have.get(k)));
                    }
                }
                if !why.is_empty() {
                    let file = trace.strip_prefix(root()).unwrap_or(trace).display().to_string();
                    wrong.lock().expect("lock").push(format!("{det}: {file}: {}", why.join("; ")));
                }
            });
        }
    });
    let wrong = wrong.into_inner().expect("lock");
    assert!(
        wrong.is_empty(),
        "{} of {} lab traces differ from their manifests:\n{}",
        wrong.len(),
        work.len(),
        wrong.join("\n")
    );
}

#[test]
fn trace_names_give_variant_and_flag_set() {
    assert_eq!(variant_of("c-spin.f-tt-T-yy.strace.gz"), Some(("c-spin", "f-tt-T-yy")));
    assert_eq!(variant_of("c-mutex.f.strace"), Some(("c-mutex", "f")));
    assert_eq!(variant_of("redis-new-client.slr"), Some(("redis-new-client", "slr")));
    assert_eq!(variant_of("redis-native.txt"), None);
}

/// scripts/new-detector.sh (dry run): the manifest it starts a lab with reads as a manifest, the
/// docs as docs, and both say TODO where only the author can write (the suite fails on them
/// until then: the registry's consistency test, and the walk above for a variant without traces).
#[test]
fn the_generator_starts_a_manifest_and_docs_that_read() {
    let o = std::process::Command::new(root().join("scripts/new-detector.sh"))
        .args(["--dry-run", "pipe-churn", "SL999"])
        .output()
        .expect("run scripts/new-detector.sh");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let file = |name: &str| -> String {
        let start = out.find(&format!("==> {name}\n")).unwrap_or_else(|| panic!("{name} not written: {out}"));
        let body = &out[start..].split_once('\n').map_or("", |x| x.1);
        body.split("\n==> ").next().unwrap_or("").to_string()
    };
    let m: Manifest = toml::from_str(&file("lab/pipe-churn/manifest.toml")).expect("the manifest reads");
    assert_eq!(m.detector, "pipe-churn");
    // the pasted pair and the eBPF pair start as the lab's variants
    assert!(m.pasted.as_ref().is_some_and(|p| p.bad == "TODO-bad" && p.good == "TODO-good"));
    assert!(m.ebpf.iter().any(|p| p.bad == "TODO-bad"));
    assert!(
        m.variant.iter().any(|v| v.expect == "quiet" && v.reason.is_some())
            && m.variant.iter().any(|v| v.expect != "quiet")
    );
    let md: &'static str = Box::leak(file("crates/analyze/src/detectors/pipe_churn.md").into_boxed_str());
    let docs = syslint_analyze::registry::Docs::markdown(md);
    assert!(md.starts_with("# pipe-churn (SL999): ") && docs.what.contains("TODO") && docs.example.contains("TODO"));
    // the detector is declared in one line, from the title and the Declaration block of its docs
    assert!(md.contains("\n## Declaration\n\n```toml\ncategory = "), "{md}");
    let rs = file("crates/analyze/src/detectors/pipe_churn.rs");
    assert!(rs.contains("crate::detector!(\"pipe_churn\", struct PipeChurn);"), "{rs}");
    // a taken name or code is refused, and nothing is written
    for args in [["busy-poll", "SL999"], ["pipe-churn", "SL001"], ["Pipe_Churn", "SL999"]] {
        let o = std::process::Command::new(root().join("scripts/new-detector.sh")).args(args).output().expect("run");
        assert!(!o.status.success(), "{args:?} accepted");
    }
}
