//! `syslint export --format perfetto`: the Chrome trace JSON that ui.perfetto.dev opens, from
//! the recorded lab traces and fixtures. Read back here (every syscall a slice, threads and
//! processes named, the findings on their own track over their windows); in headless Chromium
//! by a page that imports it as the JSON trace format says; and in headless Chromium by
//! DevTools' own trace engine (npm's @paulirish/trace_engine, how Chrome's Performance panel
//! reads these files). The Perfetto UI itself is not reachable from the test machines, and no
//! registry ships its trace processor (docs/design.md).

use crate::common::*;
use crate::html::{chromium, load, load_with, tmp};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The findings' synthetic process (PID_MAX_LIMIT: no real process has it).
const FINDINGS_PID: u64 = 1 << 22;

/// `syslint export --format perfetto INPUT -o DIR/NAME`, parsed; exits 0.
fn export(input: &Path, dir: &Path, name: &str) -> (PathBuf, Value) {
    let out = dir.join(name);
    let o = run(&["export", "--format", "perfetto", input.to_str().expect("path"), "-o", out.to_str().expect("path")]);
    assert_eq!(o.status.code(), Some(0), "export {}: {}", input.display(), stderr(&o));
    let v: Value = serde_json::from_slice(&std::fs::read(&out).expect("the trace")).expect("the trace is JSON");
    assert_eq!(v["displayTimeUnit"], "ns");
    (out, v)
}

fn events(v: &Value) -> &Vec<Value> {
    v["traceEvents"].as_array().expect("traceEvents")
}

/// The metadata names: (pid, tid) -> name for `what` (process_name, thread_name).
fn names(v: &Value, what: &str) -> HashMap<(u64, u64), String> {
    events(v)
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == what)
        .map(|e| {
            let k = (e["pid"].as_u64().expect("pid"), e["tid"].as_u64().expect("tid"));
            (k, e["args"]["name"].as_str().expect("name").to_string())
        })
        .collect()
}

/// Syscall slices of each thread, sorted: each ends before the next of its thread begins
/// (one call at a time per thread), with times in microseconds.
fn check_tracks(v: &Value) -> usize {
    let mut tracks: BTreeMap<(u64, u64), Vec<(f64, f64)>> = BTreeMap::new();
    for e in events(v).iter().filter(|e| e["ph"] == "X" && e["cat"] == "syscall") {
        let ts = e["ts"].as_f64().expect("ts");
        let dur = e["dur"].as_f64().expect("dur");
        assert!(dur >= 0.0 && ts >= 0.0, "{e}");
        assert!(e["name"].as_str().is_some_and(|n| !n.is_empty()), "{e}");
        assert!(e["args"]["call"].as_str().is_some_and(|c| c.len() < 600), "{e}");
        tracks.entry((e["pid"].as_u64().expect("pid"), e["tid"].as_u64().expect("tid"))).or_default().push((ts, dur));
    }
    for (k, s) in &mut tracks {
        s.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in s.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0 + 1e-6, "thread {k:?}: {:?} overlaps {:?}", w[0], w[1]);
        }
    }
    tracks.len()
}

#[test]
fn busy_poll_exports_every_call_and_the_finding_over_its_window() {
    let dir = tmp("perfetto-busy-poll");
    let trace = lab_variant("busy-poll", "c-poll0", "f-tt-T-yy");
    let (_, v) = export(&trace, &dir, "bad.json");
    let r = analyze(&[&trace]);
    let slices = events(&v).iter().filter(|e| e["ph"] == "X" && e["cat"] == "syscall").count();
    assert_eq!(slices as u64, r.capture.syscalls, "one slice per syscall analyze counts");
    assert!(check_tracks(&v) >= 1);
    // the spinning program, named
    let procs = names(&v, "process_name");
    assert!(procs.values().any(|n| n == "spin"), "{procs:?}");
    assert_eq!(procs.get(&(FINDINGS_PID, FINDINGS_PID)).map(String::as_str), Some("syslint findings"));
    // payloads as in report evidence: a read's bytes are their length
    let read = events(&v)
        .iter()
        .find(|e| e["name"] == "read" && e["args"]["call"].as_str().is_some_and(|c| c.contains("TCP:")))
        .expect("the socket read");
    assert!(read["args"]["call"].as_str().expect("call").contains("bytes…\""), "{read}");
    // the finding, on its own track, over the window analyze gives it
    let f = only("busy-poll", &r, "c-poll0");
    let w = f.window.as_ref().expect("window");
    let t0 = r.capture.window.as_ref().expect("trace window").start_s;
    let ann: Vec<&Value> = events(&v).iter().filter(|e| e["cat"] == "syslint.finding" && e["ph"] == "X").collect();
    assert_eq!(ann.len(), r.findings.len());
    let a = ann.iter().find(|e| e["args"]["detector"] == "busy-poll").expect("busy-poll annotation");
    assert_eq!(a["pid"].as_u64(), Some(FINDINGS_PID));
    assert_eq!(a["args"]["severity"], f.severity.as_str());
    assert_eq!(a["args"]["message"], f.message.as_str());
    assert_eq!(a["args"]["fix"], f.fix.as_str());
    assert_eq!(a["args"]["cost"].as_str(), f.cost.as_deref());
    let ts = a["ts"].as_f64().expect("ts");
    let dur = a["dur"].as_f64().expect("dur");
    assert!((ts - (w.start_s - t0) * 1e6).abs() < 2.0, "start {ts} µs vs {} s", w.start_s - t0);
    assert!((dur - w.duration_s * 1e6).abs() < 2.0, "dur {dur} µs vs {} s", w.duration_s);
    let track = names(&v, "thread_name");
    let label = &track[&(FINDINGS_PID, a["tid"].as_u64().expect("tid"))];
    assert_eq!(label, "SL001 busy-poll (warning)");
    // and a global marker where it begins
    assert!(events(&v).iter().any(|e| e["ph"] == "i" && e["s"] == "g" && e["ts"] == a["ts"]));
}

#[test]
fn an_ebpf_recording_exports_its_threads() {
    let dir = tmp("perfetto-slr");
    let slr = fixture("threaded_server.attach-ebpf.slr");
    let (_, v) = export(&slr, &dir, "slr.json");
    let r = analyze(&[&slr]);
    let slices = events(&v).iter().filter(|e| e["ph"] == "X" && e["cat"] == "syscall").count();
    assert_eq!(slices as u64, r.capture.syscalls);
    // threads of one process, each on its own track, named after the program
    let tracks = check_tracks(&v);
    let threads = names(&v, "thread_name");
    let server: Vec<_> = threads.iter().filter(|(_, n)| *n == "threaded_server").collect();
    assert!(server.len() >= 4 && server.len() == tracks, "{threads:?} vs {tracks} tracks");
    let pids: std::collections::HashSet<u64> = server.iter().map(|((p, _), _)| *p).collect();
    assert_eq!(pids.len(), 1, "one process: {pids:?}");
    let ann = events(&v).iter().filter(|e| e["cat"] == "syslint.finding" && e["ph"] == "X").count();
    assert_eq!(ann, r.findings.len());
    // the same input gives the same file (the calls still held at the end, of five threads,
    // are written in thread order)
    let (a, _) = export(&slr, &dir, "again.json");
    assert!(
        std::fs::read(a).expect("again") == std::fs::read(dir.join("slr.json")).expect("first"),
        "two exports differ"
    );
}

#[test]
fn a_log_without_timestamps_is_an_error_not_an_empty_trace() {
    let dir = tmp("perfetto-untimed");
    let out = dir.join("plain.json");
    let trace = lab_variant("busy-poll", "c-poll0", "f");
    let o = run(&["export", "--format", "perfetto", trace.to_str().expect("path"), "-o", out.to_str().expect("path")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("c-poll0.f.strace") && e.contains("-tt or -ttt"), "{e}");
    assert!(!out.exists(), "no trace file is left behind");
    let o = run(&["export", "--format", "perfetto", trace.to_str().expect("path")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty(), "nothing on stdout");
}

/// The page that reads a trace as the JSON trace format says, in the browser: the file's
/// text parsed with JSON.parse, the metadata events naming processes and threads, complete
/// events placed on their threads' tracks (each track's slices must nest), then a summary of
/// what a viewer would show written into the page for the test to read back.
const CHECKER: &str = r#"<!DOCTYPE html><html><head><meta charset="utf-8"><title>trace check</title></head><body>
<pre id="result">not run</pre>
<script type="application/json" id="trace">TRACE</script>
<script>
"use strict";
const errors = [];
const procs = {}, threads = {}, tracks = {};
const findings = [];
let slices = 0, instants = 0;
try {
  const doc = JSON.parse(document.getElementById("trace").textContent);
  if (!Array.isArray(doc.traceEvents)) throw new Error("no traceEvents array");
  if (doc.displayTimeUnit !== "ns" && doc.displayTimeUnit !== "ms") errors.push("displayTimeUnit " + doc.displayTimeUnit);
  for (const e of doc.traceEvents) {
    if (!Number.isInteger(e.pid) || !Number.isInteger(e.tid)) { errors.push("pid/tid not integers: " + JSON.stringify(e).slice(0, 200)); continue; }
    const key = e.pid + "/" + e.tid;
    if (e.ph === "M") {
      if (e.name === "process_name") procs[e.pid] = e.args.name;
      else if (e.name === "thread_name") threads[key] = e.args.name;
      else if (e.name !== "process_sort_index") errors.push("unknown metadata " + e.name);
    } else if (e.ph === "X") {
      if (typeof e.name !== "string" || typeof e.ts !== "number" || typeof e.dur !== "number" || e.dur < 0) { errors.push("bad slice " + JSON.stringify(e).slice(0, 200)); continue; }
      (tracks[key] = tracks[key] || []).push([e.ts, e.ts + e.dur, e.name]);
      if (e.cat === "syslint.finding") findings.push({pid: e.pid, tid: e.tid, ts: e.ts, dur: e.dur, detector: e.args.detector, severity: e.args.severity, fix: e.args.fix});
      else slices++;
    } else if (e.ph === "i") {
      if (!["g", "p", "t"].includes(e.s)) errors.push("instant without scope");
      instants++;
    } else errors.push("unexpected phase " + e.ph);
  }
  // slices of a track must nest, as a timeline draws them: each one ends before the next
  // begins, or contains it
  for (const [key, list] of Object.entries(tracks)) {
    list.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    const stack = [];
    for (const s of list) {
      while (stack.length && stack[stack.length - 1][1] <= s[0]) stack.pop();
      if (stack.length && s[1] > stack[stack.length - 1][1] + 1e-6) { errors.push("track " + key + ": " + s[2] + " at " + s[0] + " overlaps " + stack[stack.length - 1][2]); break; }
      stack.push(s);
    }
  }
  for (const f of findings) {
    f.process = procs[f.pid];
    f.track = threads[f.pid + "/" + f.tid];
  }
} catch (err) {
  errors.push("failed: " + err.message);
}
const named = {};
for (const [pid, name] of Object.entries(procs)) named[pid] = name;
document.getElementById("result").textContent = JSON.stringify({
  slices, instants, tracks: Object.keys(tracks).length, processes: named, threads: Object.keys(threads).length, findings, errors
});
</script></body></html>"#;

/// What the page found in `trace`, read back from the DOM Chromium dumped.
fn in_browser(browser: &str, trace: &str, dir: &Path, name: &str) -> Value {
    let page = dir.join(name);
    // inside a <script> element only `</` could end it early: JSON allows `<\/`
    std::fs::write(&page, CHECKER.replace("TRACE", &trace.replace("</", "<\\/"))).expect("write page");
    let l = load(browser, &page, dir);
    assert!(l.console.is_empty(), "console: {:?}", l.console);
    assert!(l.requests.is_empty(), "requests: {:?}", l.requests);
    let start = l.dom.find("<pre id=\"result\">").expect("result") + "<pre id=\"result\">".len();
    let end = start + l.dom[start..].find("</pre>").expect("end of result");
    let text =
        l.dom[start..end].replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("result {text:?}: {e}"))
}

#[test]
fn the_browser_reads_the_trace_and_finds_the_findings() {
    let Some(b) = chromium() else { return };
    let dir = tmp("perfetto-browser");
    let trace = lab_variant("busy-poll", "c-poll0", "f-tt-T-yy");
    let (path, _) = export(&trace, &dir, "bad.json");
    let text = std::fs::read_to_string(&path).expect("trace");
    let got = in_browser(b, &text, &dir, "check.html");
    assert_eq!(got["errors"], serde_json::json!([]), "{got}");
    let r = analyze(&[&trace]);
    assert_eq!(got["slices"].as_u64(), Some(r.capture.syscalls));
    assert!(got["processes"].as_object().expect("processes").values().any(|n| n == "spin"), "{got}");
    let f = &got["findings"].as_array().expect("findings")[..];
    assert_eq!(f.len(), 1, "{got}");
    assert_eq!(f[0]["detector"], "busy-poll");
    assert_eq!(f[0]["severity"], "warning");
    assert_eq!(f[0]["process"], "syslint findings");
    assert_eq!(f[0]["track"], "SL001 busy-poll (warning)");
    assert!(f[0]["dur"].as_f64().is_some_and(|d| d > 100_000.0), "the spin lasts 0.6 s: {got}");

    // the checker fails what a viewer would misdraw: a slice overlapping its neighbour, a
    // finding with no name for its process
    let mut v: Value = serde_json::from_str(&text).expect("JSON");
    let evs = v["traceEvents"].as_array_mut().expect("events");
    evs.retain(|e| !(e["ph"] == "M" && e["pid"] == FINDINGS_PID && e["name"] == "process_name"));
    let f64_of = |e: &Value, k: &str| e[k].as_f64().expect("number");
    let i = evs.iter().position(|e| e["name"] == "poll" && f64_of(e, "dur") >= 2.0).expect("a poll");
    let j =
        i + 1 + evs[i + 1..].iter().position(|e| e["ph"] == "X" && e["tid"] == evs[i]["tid"]).expect("the next call");
    // the next call begins inside this one and ends after it
    let (ts, dur) = (f64_of(&evs[i], "ts"), f64_of(&evs[i], "dur"));
    evs[j]["ts"] = serde_json::json!(ts + dur / 2.0);
    evs[j]["dur"] = serde_json::json!(dur);
    let bad = in_browser(b, &v.to_string(), &dir, "broken.html");
    let errors = bad["errors"].as_array().expect("errors");
    assert!(errors.iter().any(|e| e.as_str().is_some_and(|e| e.contains("overlaps"))), "{bad}");
    assert_eq!(bad["findings"][0]["process"], Value::Null, "{bad}");
}

/// DevTools' trace engine from npm (scripts/test.sh installs it under target/trace-engine, or
/// `SYSLINT_TRACE_ENGINE` names its package directory).
fn trace_engine() -> Option<PathBuf> {
    let dir = std::env::var_os("SYSLINT_TRACE_ENGINE")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/trace-engine/node_modules/@paulirish/trace_engine"));
    if dir.join("models/trace/trace.js").is_file() {
        return Some(dir);
    }
    eprintln!(
        "NOTE: DevTools' trace engine is not installed: the DevTools test cannot run (scripts/test.sh installs it)"
    );
    assert!(std::env::var_os("CI").is_none(), "@paulirish/trace_engine missing in CI");
    None
}

/// The page that hands the trace to DevTools' trace engine, as the Performance panel does
/// with a file it opens, and writes what the engine made of it: per process its name and per
/// thread its name and the entries (slices) on its track, and the findings' entries.
const DEVTOOLS: &str = r#"<!DOCTYPE html><html><head><meta charset="utf-8"><title>DevTools trace engine</title></head><body>
<pre id="result">not run</pre>
<script type="importmap">{"imports": {"third-party-web": "./third-party-web.js", "legacy-javascript": "LEGACY"}}</script>
<script type="application/json" id="trace">TRACE</script>
<script type="module">
import * as Trace from "ENGINE/models/trace/trace.js";
const out = document.getElementById("result");
try {
  const doc = JSON.parse(document.getElementById("trace").textContent);
  const model = Trace.TraceModel.Model.createWithAllHandlers();
  await model.parse(doc.traceEvents);
  const d = model.parsedTrace().data;
  const procs = {};
  for (const [pid, p] of d.Renderer.processes) {
    const threads = {};
    for (const [tid, t] of p.threads) {
      threads[tid] = {name: t.name, entries: t.entries.length,
        first: t.entries.slice(0, 1).map(e => ({name: e.name, ts: e.ts, dur: e.dur, args: e.args}))};
    }
    procs[pid] = {name: d.Meta.processNames.get(Number(pid))?.args?.name, threads};
  }
  out.textContent = JSON.stringify({procs});
} catch (e) {
  out.textContent = JSON.stringify({error: String(e && e.stack || e)});
}
</script></body></html>"#;

#[test]
fn devtools_trace_engine_reads_the_tracks_and_the_findings() {
    let Some(b) = chromium() else { return };
    let Some(engine) = trace_engine() else { return };
    let dir = tmp("perfetto-devtools");
    let trace = lab_variant("busy-poll", "c-poll0", "f-tt-T-yy");
    let (path, _) = export(&trace, &dir, "bad.json");
    let text = std::fs::read_to_string(&path).expect("trace");
    // third-party-web's entity lists are CommonJS, which a browser cannot import; the engine
    // asks them about URLs only (network requests, scripts), of which a syscall trace has none
    std::fs::write(
        dir.join("third-party-web.js"),
        "export default {getEntity() { return undefined; }, getRootDomain(u) { return u; }, \
         getProduct() { return undefined; }};\n",
    )
    .expect("stub");
    let legacy = engine.join("../../legacy-javascript/legacy-javascript.js");
    let page = dir.join("devtools.html");
    let html = DEVTOOLS
        .replace("LEGACY", &format!("file://{}", legacy.display()))
        .replace("ENGINE", &format!("file://{}", engine.display()))
        .replace("TRACE", &text.replace("</", "<\\/"));
    std::fs::write(&page, html).expect("page");
    let l = load_with(b, &page, &dir, &["--allow-file-access-from-files", "--virtual-time-budget=60000"]);
    assert!(l.console.is_empty(), "console: {:?}", l.console);
    let start = l.dom.find("<pre id=\"result\">").expect("result") + "<pre id=\"result\">".len();
    let end = start + l.dom[start..].find("</pre>").expect("end of result");
    let raw = l.dom[start..end].replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    let got: Value = serde_json::from_str(&raw).unwrap_or_else(|e| panic!("result {raw:?}: {e}"));
    assert!(got.get("error").is_none(), "the engine failed: {got}");
    let procs = got["procs"].as_object().expect("processes");
    let r = analyze(&[&trace]);
    // every syscall is an entry on its thread's track, in processes named after the program
    let mut calls = 0;
    for (pid, p) in procs.iter().filter(|(pid, _)| **pid != FINDINGS_PID.to_string()) {
        assert_eq!(p["name"], "spin", "process {pid}: {p}");
        for t in p["threads"].as_object().expect("threads").values() {
            assert_eq!(t["name"], "spin");
            calls += t["entries"].as_u64().expect("entries");
        }
    }
    assert_eq!(calls, r.capture.syscalls, "{got}");
    // the findings' process, its track, the finding over its window with its detector
    let fp = &procs[&FINDINGS_PID.to_string()];
    assert_eq!(fp["name"], "syslint findings");
    let tracks = fp["threads"].as_object().expect("finding tracks");
    assert_eq!(tracks.len(), r.findings.len());
    let t = tracks.values().next().expect("a finding track");
    assert_eq!(t["name"], "SL001 busy-poll (warning)");
    assert_eq!(t["entries"], 1);
    let e = &t["first"][0];
    assert!(e["name"].as_str().is_some_and(|n| n.starts_with("busy-poll: spinning")), "{e}");
    assert_eq!(e["args"]["detector"], "busy-poll");
    let w = only("busy-poll", &r, "c-poll0").window.expect("window");
    // the engine keeps the file's microseconds
    assert!((e["dur"].as_f64().expect("dur") - w.duration_s * 1e6).abs() < 2.0, "{e}");
}
