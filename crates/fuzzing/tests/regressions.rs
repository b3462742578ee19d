//! Every input that ever crashed, hung or broke a property of a fuzz target
//! (fuzz/regressions/TARGET/), and the seed inputs the fuzzers start from (the recorded test
//! fixtures and lab traces), through the fuzz targets' bodies: on stable Rust, in seconds, in CI.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The files of a directory, sorted (none if it does not exist).
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file()).collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

/// A trace file's text (gzip-compressed ones decompressed, as the reader does).
fn trace_bytes(p: &Path) -> Vec<u8> {
    let raw = std::fs::read(p).expect("read a fixture");
    if p.extension().is_some_and(|e| e == "gz") {
        use std::io::Read;
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..]).read_to_end(&mut out).expect("a fixture decompresses");
        out
    } else {
        raw
    }
}

/// The recorded traces: tests/fixtures/traces and every lab's traces.
fn traces() -> Vec<PathBuf> {
    let mut v = files(&root().join("tests/fixtures/traces"));
    for lab in files(&root().join("lab")).into_iter().chain(
        std::fs::read_dir(root().join("lab")).expect("lab/").filter_map(|e| e.ok().map(|e| e.path().join("traces"))),
    ) {
        v.extend(files(&lab));
    }
    v.retain(|p| p.to_string_lossy().contains(".strace"));
    assert!(v.len() > 50, "the recorded traces are missing: {}", v.len());
    v
}

/// tests/fixtures/traces, and the three smallest traces of each lab.
fn seed_traces() -> Vec<PathBuf> {
    let all = traces();
    let mut v: Vec<PathBuf> = all.iter().filter(|p| p.starts_with(root().join("tests"))).cloned().collect();
    let mut labs: std::collections::BTreeMap<PathBuf, Vec<(u64, PathBuf)>> = Default::default();
    for p in all.iter().filter(|p| p.starts_with(root().join("lab"))) {
        let size = std::fs::metadata(p).map_or(u64::MAX, |m| m.len());
        labs.entry(p.parent().unwrap_or(p).to_path_buf()).or_default().push((size, p.clone()));
    }
    for (_, mut l) in labs {
        l.sort();
        v.extend(l.into_iter().take(3).map(|(_, p)| p));
    }
    // the pasted forms of the lab runs: tables of counts and excerpts (lab/counts, lab/excerpts)
    for dir in std::fs::read_dir(root().join("lab")).expect("lab/").filter_map(|e| e.ok().map(|e| e.path())) {
        v.extend(files(&dir.join("counts")).into_iter().chain(files(&dir.join("excerpts"))));
    }
    v
}

/// Run `f` on every file of fuzz/regressions/`target`, each within a time bound (a hang
/// found once must stay fixed).
fn replay(target: &str, f: fn(&[u8])) -> usize {
    let dir = root().join("fuzz/regressions").join(target);
    let list = files(&dir);
    for p in &list {
        let data = std::fs::read(p).expect("read a regression input");
        let t = Instant::now();
        f(&data);
        assert!(t.elapsed() < Duration::from_secs(10), "{}: took {:?}", p.display(), t.elapsed());
    }
    list.len()
}

#[test]
fn strace_log_regressions_and_seeds() {
    let n = replay("strace_log", syslint_fuzzing::strace_log);
    eprintln!("strace_log: {n} regression inputs");
    // every recorded trace keeps the properties: the parallel reader in 256-byte chunks gives
    // the sequential reader's events, the JSON report reads back, a self-diff is quiet
    let mut bytes = 0;
    // the fixtures, and the three smallest traces of each lab (the lab traces repeat the same
    // shapes at length; the fuzzers start from all of them, see fuzz/README.md)
    for p in seed_traces() {
        let data = trace_bytes(&p);
        bytes += data.len();
        syslint_fuzzing::strace_log(&data);
    }
    assert!(bytes > 1 << 20, "only {bytes} bytes of traces");
}

/// Every strace log under a directory, at any depth (the programs that made them left out).
fn logs_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut v: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    v.sort();
    for p in v {
        let name = p.to_string_lossy();
        if p.is_dir() {
            if !name.ends_with("/programs") {
                logs_under(&p, out);
            }
        } else if name.contains(".strace") || name.ends_with(".txt") || name.ends_with(".log") {
            out.push(p);
        }
    }
}

/// Excerpts as people paste them: windows of every recorded log (every strace option set,
/// strace 7, terminal `-f` output with `[pid N]` prefixes, collectors' prefixes, the pasted
/// corpus), starting and ending anywhere, mid-line included. Each reads the same in one piece
/// and in chunks of a few lines (issue 29: 5 of 25 excerpts of a terminal `-f` log gave
/// another report on more cores).
#[test]
fn excerpts_of_every_recorded_log_read_the_same_in_chunks() {
    let mut logs = Vec::new();
    logs_under(&root().join("tests/fixtures"), &mut logs);
    logs_under(&root().join("lab"), &mut logs);
    assert!(logs.len() > 1000, "the recorded logs are missing: {}", logs.len());
    let mut excerpts = 0;
    // a fixed pseudo-random sequence: the same windows on every run
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for p in &logs {
        let data = trace_bytes(p);
        if data.is_empty() {
            continue;
        }
        for len in [700usize, 6_000, 40_000] {
            let start = (next() as usize) % data.len();
            let end = (start + len).min(data.len());
            syslint_fuzzing::readers_agree(&data[start..end]);
            excerpts += 1;
        }
    }
    eprintln!("{excerpts} excerpts of {} logs", logs.len());
}

#[test]
fn recording_regressions_and_every_prefix_of_a_real_one() {
    let n = replay("recording", syslint_fuzzing::recording);
    eprintln!("recording: {n} regression inputs");
    // recordings of real programs (tests/fixtures/recordings): every prefix, and every
    // single-byte corruption, replays without a panic
    let list = files(&root().join("tests/fixtures/recordings"));
    let list: Vec<_> = list.into_iter().filter(|p| p.extension().is_some_and(|e| e == "slr")).collect();
    assert!(list.len() >= 2, "the recorded .slr fixtures are missing");
    for p in list {
        let body = zstd::decode_all(std::fs::File::open(&p).expect("open")).expect("a fixture decompresses");
        syslint_fuzzing::recording(&body);
        // every cut in the header and the fd snapshot, then a stride through the records
        let step = (body.len() / 150).max(1);
        for cut in (0..body.len()).filter(|&c| c < 200 || c % step == 0) {
            syslint_fuzzing::recording(&body[..cut]);
        }
        for i in (0..body.len()).filter(|&c| c < 100 || c % step == 0) {
            let mut b = body.clone();
            b[i] ^= 0xff;
            syslint_fuzzing::recording(&b);
        }
    }
}

#[test]
fn report_json_regressions_and_real_reports() {
    let n = replay("report_json", syslint_fuzzing::report_json);
    eprintln!("report_json: {n} regression inputs");
    let snap = root().join("crates/cli/tests/snapshots/stat1000.json");
    let text = std::fs::read(&snap).expect("the JSON snapshot");
    syslint_fuzzing::report_json(&text);
    // and a report of every kind of content: findings, endpoints, timeline
    for p in traces().iter().filter(|p| p.to_string_lossy().contains("-tt-T-yy")).take(8) {
        let r = syslint_fuzzing::json_report_of(&trace_bytes(p));
        syslint_fuzzing::report_json(&r);
    }
}

#[test]
fn arguments_regressions_and_real_argument_lists() {
    let n = replay("arguments", syslint_fuzzing::arguments);
    eprintln!("arguments: {n} regression inputs");
    // the argument lists of real calls, one per syscall name and shape
    let mut seen = std::collections::HashSet::new();
    for p in traces() {
        let text = String::from_utf8_lossy(&trace_bytes(&p)).into_owned();
        // (lines of at most 1 MiB: the reader cuts longer ones to 4 MiB and 64 KiB before any
        // argument is read, and bigwrite's 71 MB write line would take minutes in a debug build)
        for line in text.lines().filter(|l| l.len() <= 1 << 20) {
            let Some(open) = line.find('(') else { continue };
            let name = line[..open].rsplit(' ').next().unwrap_or("");
            let Some(close) = line.rfind(") = ") else { continue };
            if close <= open || !seen.insert((name.to_string(), line.len() / 128)) {
                continue;
            }
            if seen.len() > 150 {
                break;
            }
            let ret = &line[close + 4..];
            syslint_fuzzing::arguments(format!("{}\n{ret}", &line[open + 1..close]).as_bytes());
        }
    }
    assert!(seen.len() > 100, "only {} argument lists", seen.len());
}

#[test]
fn config_regressions_and_documented_settings() {
    let n = replay("config", syslint_fuzzing::config);
    eprintln!("config: {n} regression inputs");
    for text in [
        "",
        "[busy-poll]\nmin_calls = 10\n",
        "[busy-poll]\nmin_calls = -1\n",
        "[busy-poll]\nmin_calls = \"ten\"\n",
        "[no-such-detector]\nx = 1\n",
        "[small-io]\nmax_bytes = 1e308\n",
        "busy-poll = 3\n",
    ] {
        syslint_fuzzing::config(text.as_bytes());
    }
}
