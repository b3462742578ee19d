//! Hostile inputs through the CLI (issue 16, item 3): each asserts the exit code, the message
//! (with its location) and the peak memory of the syslint process, measured by
//! `/usr/bin/time -f %M` (the child's own max RSS, whatever else the test binary runs).
//! Big inputs are generated in a temp dir and deleted; the bytes are hostile bytes or recorded
//! fixtures, never invented strace lines.

use crate::common::*;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A temp dir removed when dropped (big inputs must not stay behind).
struct Tmp(PathBuf);

impl Tmp {
    fn new(tag: &str) -> Tmp {
        let d = std::env::temp_dir().join(format!("syslint-hostile-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Tmp(d)
    }
    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One run of syslint: its output, its peak RSS in MiB and its wall time.
struct Measured {
    out: Output,
    peak_mib: f64,
    secs: f64,
}

impl Measured {
    fn code(&self) -> Option<i32> {
        self.out.status.code()
    }
    fn err(&self) -> String {
        stderr(&self.out)
    }
    fn report(&self) -> syslint_report::Report {
        parse_report(&stdout(&self.out)).unwrap_or_else(|e| panic!("{e}: {}", self.err()))
    }
}

/// Run syslint under `/usr/bin/time`, with `stdin` as its input (or none), killed (and the
/// test failed) after `limit`: hostile input must never hang it. `pre`: a shell prefix such
/// as `ulimit -n 1024;`.
fn measured_with(pre: &str, args: &[&str], stdin: Option<Stdio>, limit: Duration) -> Measured {
    assert!(Path::new("/usr/bin/time").exists(), "/usr/bin/time (GNU time) is needed to measure peak memory");
    let t = tempfile_path("rss");
    let script = format!("{pre} exec /usr/bin/time -f %M -o \"$0\" \"$@\"");
    let start = Instant::now();
    let mut c = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(&t)
        .arg(bin())
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(stdin.unwrap_or_else(Stdio::null))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let (mut so, mut se) = (c.stdout.take().unwrap(), c.stderr.take().unwrap());
    let a = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = so.read_to_end(&mut v);
        v
    });
    let b = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = se.read_to_end(&mut v);
        v
    });
    let status = loop {
        if let Some(s) = c.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit {
            let _ = c.kill();
            let _ = c.wait();
            let _ = std::fs::remove_file(&t);
            panic!("syslint {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let secs = start.elapsed().as_secs_f64();
    let out = Output { status, stdout: a.join().unwrap(), stderr: b.join().unwrap() };
    let kib = std::fs::read_to_string(&t).unwrap_or_default();
    let _ = std::fs::remove_file(&t);
    // GNU time writes "Command exited with non-zero status N" first when it did
    let kib: f64 = kib.lines().last().and_then(|l| l.trim().parse().ok()).unwrap_or_else(|| panic!("time: {kib:?}"));
    Measured { out, peak_mib: kib / 1024.0, secs }
}

fn measured(args: &[&str]) -> Measured {
    measured_with("", args, None, Duration::from_secs(120))
}

fn tempfile_path(tag: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("syslint-hostile-{tag}-{}-{n}", std::process::id()))
}

// ---- .slr recordings ----------------------------------------------------------------------

fn leb(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// A recorded fixture's decompressed body (magic, header, records, end record).
fn slr_body() -> Vec<u8> {
    syslint_capture::ebpf::slr::decompress(&recorded_slr()).unwrap()
}

/// A recorded server capture (110 KB, 1.4 MB decompressed: several zstd blocks).
fn recorded_slr() -> PathBuf {
    root().join("tests/fixtures/servers/nginx-BEFORE.slr")
}

/// A zstd bomb in `.slr` form: a header (docs/slr.md), then `mib`
/// MiB of syscall records each carrying a 60,000-byte payload of zeros; a few
/// MB on disk.
fn slr_bomb(path: &Path, mib: u64) -> u64 {
    let mut head = b"SLR2".to_vec();
    let json = br#"{"tool":"syslint","version":"0.1.0","arch":"x86_64","clock":"monotonic","realtime_offset_ns":0,"what":"bomb","payload_bytes":64,"path_bytes":256,"coalesce":true}"#;
    leb(&mut head, json.len() as u64);
    head.extend_from_slice(json);
    // tag 1: tgid, tid, nr (1: write), 6 args, ret (zigzag), ts delta (zigzag), duration,
    // flags, data1 (kind 2 bytes, flags, length, bytes), data2 (none)
    let mut rec = vec![1u8];
    for v in [7, 7, 1, 1, 0, 60_000, 0, 0, 0] {
        leb(&mut rec, v);
    }
    leb(&mut rec, 120_000); // ret 60,000, zigzag
    leb(&mut rec, 2_000); // +1 us
    leb(&mut rec, 500);
    rec.push(0);
    rec.push(2);
    rec.push(0);
    leb(&mut rec, 60_000);
    rec.extend(std::iter::repeat_n(0u8, 60_000));
    rec.push(0);
    let f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut z = zstd::stream::write::Encoder::new(f, 1).unwrap();
    z.write_all(&head).unwrap();
    let n = (mib << 20) / rec.len() as u64;
    for _ in 0..n {
        z.write_all(&rec).unwrap();
    }
    z.write_all(&[0xff, 0, 0]).unwrap();
    z.finish().unwrap().flush().unwrap();
    n
}

/// A recording expanding to 1 GiB is replayed in bounded memory (it was decompressed whole:
/// a 66 KB file reached 3.15 GB) and every record is counted.
#[test]
fn slr_zstd_bomb_is_replayed_in_bounded_memory() {
    let d = Tmp::new("slrbomb");
    let p = d.join("bomb.slr");
    let n = slr_bomb(&p, 1024);
    let size = std::fs::metadata(&p).unwrap().len();
    assert!(size < 2 << 20, "a bomb is small on disk: {size}");
    let m = measured(&["analyze", "--format", "json", p.to_str().unwrap()]);
    assert_eq!(m.code(), Some(0), "{}", m.err());
    let r = m.report();
    assert_eq!(r.capture.syscalls, n, "{}", m.err());
    assert!(m.peak_mib < 120.0, "peak {:.0} MiB for a 1 GiB recording", m.peak_mib);
    eprintln!("slr bomb: {size} bytes -> 1 GiB, peak {:.1} MiB, {:.1} s", m.peak_mib, m.secs);
}

/// A recording cut short (syslint killed, a partial download) or with a damaged compressed
/// stream reads up to the damage, says where (decompressed byte offset), and is never read as
/// strace text with nothing in it.
#[test]
fn slr_cut_or_corrupted_says_where() {
    let d = Tmp::new("slrcut");
    let full = std::fs::read(recorded_slr()).unwrap();
    let whole = analyze(&[&recorded_slr()]);
    assert!(whole.capture.warnings.is_empty(), "{:?}", whole.capture.warnings);
    let body = slr_body();

    // the compressed file cut in half
    let cut = d.join("cut.slr");
    std::fs::write(&cut, &full[..full.len() / 2]).unwrap();
    // compressed bytes overwritten in the middle
    let mut bad = full.clone();
    let mid = bad.len() / 2;
    for b in &mut bad[mid..mid + 64] {
        *b ^= 0x5a;
    }
    let corrupt = d.join("corrupt.slr");
    std::fs::write(&corrupt, &bad).unwrap();
    // (--fail-on error: the recording is nginx with `sendfile off`, a userspace-copy warning; exit 0
    // says it was read and analysed, not that it is clean)
    for (p, what) in [(&cut, "cut"), (&corrupt, "corrupt")] {
        let m = measured(&["analyze", "--format", "json", "--fail-on", "error", p.to_str().unwrap()]);
        assert_eq!(m.code(), Some(0), "{what}: {}", m.err());
        let e = m.err();
        // zstd frames carry no checksum: corrupted bytes may decompress to damaged records
        let located = [": the compressed stream is damaged or cut short after ", ": damaged record at byte "]
            .iter()
            .any(|m| e.contains(&format!("syslint: warning: {}{m}", p.display())));
        assert!(located, "{what}: {e}");
        let r = m.report();
        assert!(
            r.capture.syscalls > 0 && r.capture.syscalls < whole.capture.syscalls,
            "{what}: {}",
            r.capture.syscalls
        );
        assert_eq!(r.capture.backend, "ebpf-recording");
        assert!(r.capture.warnings.iter().any(|w| w.contains(" byte")), "{what}: {:?}", r.capture.warnings);
        assert!(m.peak_mib < 60.0, "{what}: peak {:.0} MiB", m.peak_mib);
    }

    // a body damaged in the middle (a valid zstd stream of bad records): the byte offset
    let mut dam = body.clone();
    let at = body.len() / 2;
    dam[at..at + 16].fill(0x77); // 0x77 is no record tag
    let damaged = d.join("damaged.slr");
    std::fs::write(&damaged, zstd::encode_all(&dam[..], 3).unwrap()).unwrap();
    let m = measured(&["analyze", "--format", "json", "--fail-on", "error", damaged.to_str().unwrap()]);
    assert_eq!(m.code(), Some(0), "{}", m.err());
    let e = m.err();
    let off: u64 = e
        .split("damaged record at byte ")
        .nth(1)
        .and_then(|s| s.split(';').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{e}"));
    assert!(off <= at as u64 + 16 && off + 200_000 > at as u64, "offset {off} near {at}");
    assert!(m.report().capture.syscalls > 0);

    // a body cut inside a record (a valid zstd stream): said so, with the offset
    let short = d.join("short.slr");
    std::fs::write(&short, zstd::encode_all(&body[..body.len() - 7], 3).unwrap()).unwrap();
    let m = measured(&["analyze", "--format", "json", "--fail-on", "error", short.to_str().unwrap()]);
    assert_eq!(m.code(), Some(0), "{}", m.err());
    assert!(m.err().contains("the recording ends inside a record at byte "), "{}", m.err());

    // damaged from the first block on: an error naming the file, exit 2, never an empty report
    let mut head = full.clone();
    for b in &mut head[4..40] {
        *b ^= 0xa5;
    }
    let broken = d.join("broken.slr");
    std::fs::write(&broken, &head).unwrap();
    let m = measured(&["analyze", broken.to_str().unwrap()]);
    assert_eq!(m.code(), Some(2), "{}", m.err());
    assert!(m.err().contains("broken.slr"), "{}", m.err());
    assert!(m.err().contains("syslint: error:"), "{}", m.err());
    assert_eq!(stdout(&m.out), "");
    // and export says the same
    let m = measured(&["export", broken.to_str().unwrap()]);
    assert_eq!(m.code(), Some(2), "{}", m.err());
    assert!(m.err().contains("broken.slr"), "{}", m.err());
}

// ---- compression bombs and endless input ----------------------------------------------------

fn demo_text() -> Vec<u8> {
    let mut out = Vec::new();
    let f = std::fs::File::open(root().join("demo/fetch.strace.gz")).unwrap();
    flate2::read::GzDecoder::new(f).read_to_end(&mut out).unwrap();
    out
}

/// `gib` GiB of zeros as gzip: one member of 16 MiB repeated (gzip readers read every member),
/// after `head` (a real trace, or nothing) in a first member.
fn gzip_bomb(path: &Path, head: &[u8], gib: u64) {
    let gz = |b: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(b).unwrap();
        e.finish().unwrap()
    };
    let member = gz(&vec![0u8; 16 << 20]);
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    if !head.is_empty() {
        f.write_all(&gz(head)).unwrap();
    }
    for _ in 0..gib * 64 {
        f.write_all(&member).unwrap();
    }
    f.flush().unwrap();
}

/// The same as zstd frames of 256 MiB.
fn zstd_bomb(path: &Path, head: &[u8], gib: u64) {
    let frame = zstd::encode_all(&vec![0u8; 256 << 20][..], 1).unwrap();
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    if !head.is_empty() {
        f.write_all(&zstd::encode_all(head, 3).unwrap()).unwrap();
    }
    for _ in 0..gib * 4 {
        f.write_all(&frame).unwrap();
    }
    f.flush().unwrap();
}

/// A gzip or zstd file of a few MB expanding to 10 GiB of junk is read no further than 64 MiB
/// past the last strace line (docs/robustness.md): alone it is an error saying where reading
/// stopped; after a real trace, that trace's report with a warning. Bounded memory, and time
/// that does not depend on how far the bomb would expand.
#[test]
fn compression_bombs_stop_in_bounded_memory_and_time() {
    let d = Tmp::new("bombs");
    let text = demo_text();
    let whole = analyze(&[&root().join("demo/fetch.strace.gz")]);
    for (name, make) in [("bomb.gz", gzip_bomb as fn(&Path, &[u8], u64)), ("bomb.zst", zstd_bomb)] {
        let p = d.join(name);
        make(&p, b"", 10);
        let size = std::fs::metadata(&p).unwrap().len();
        assert!(size < 20 << 20, "{name}: {size} bytes");
        let m = measured(&["analyze", "--format", "json", p.to_str().unwrap()]);
        assert_eq!(m.code(), Some(2), "{name}: {}", m.err());
        let e = m.err();
        assert!(e.contains(&format!("syslint: error: {}: binary data, not a strace log", p.display())), "{e}");
        assert!(e.contains("stopped reading at byte ") && e.contains("after 64 MiB without a strace line"), "{e}");
        assert!(m.peak_mib < 80.0, "{name}: peak {:.0} MiB", m.peak_mib);
        assert!(m.secs < 30.0, "{name}: {:.1} s", m.secs);
        eprintln!("{name}: {size} bytes -> 10 GiB of zeros: exit 2, peak {:.1} MiB, {:.1} s", m.peak_mib, m.secs);

        // a real trace, then the bomb: the trace is analysed, the rest said
        let p = d.join(&format!("trace-then-{name}"));
        make(&p, &text, 10);
        let m = measured(&["analyze", "--format", "json", p.to_str().unwrap()]);
        assert_eq!(m.code(), Some(0), "{name}: {}", m.err());
        let r = m.report();
        assert_eq!(r.capture.syscalls, whole.capture.syscalls, "{name}");
        let w = format!("{}: stopped reading at byte ", p.display());
        assert!(
            r.capture.warnings.iter().any(|x| x.starts_with(&w) && x.contains("no strace line in the last 64 MiB")),
            "{:?}",
            r.capture.warnings
        );
        assert!(m.peak_mib < 80.0, "{name}: peak {:.0} MiB", m.peak_mib);
        assert!(m.secs < 30.0, "{name}: {:.1} s", m.secs);
        eprintln!("trace + {name}: exit 0, peak {:.1} MiB, {:.1} s", m.peak_mib, m.secs);
    }
}

/// `/dev/zero` (endless, no newline) and endless random bytes from a pipe stop the same way.
#[test]
fn endless_input_stops() {
    let m = measured(&["analyze", "/dev/zero"]);
    assert_eq!(m.code(), Some(2), "{}", m.err());
    assert!(
        m.err().contains("/dev/zero: binary data, not a strace log") && m.err().contains("stopped reading at byte"),
        "{}",
        m.err()
    );
    assert!(m.peak_mib < 80.0, "peak {:.0} MiB", m.peak_mib);
    // stdin: endless pseudo-random bytes (NULs, invalid UTF-8, newlines now and then)
    let mut gen = Command::new("sh")
        .args([
            "-c",
            "exec openssl enc -aes-128-ctr -nosalt -pass pass:syslint < /dev/zero 2>/dev/null || exec cat /dev/urandom",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let out = gen.stdout.take().unwrap();
    let m = measured_with("", &["analyze", "-"], Some(Stdio::from(out)), Duration::from_secs(120));
    let _ = gen.kill();
    let _ = gen.wait();
    assert_eq!(m.code(), Some(2), "{}", m.err());
    assert!(m.err().contains("<stdin>: ") && m.err().contains("stopped reading at byte"), "{}", m.err());
    assert!(m.peak_mib < 80.0, "peak {:.0} MiB", m.peak_mib);
    eprintln!("endless random stdin: exit 2, peak {:.1} MiB, {:.1} s", m.peak_mib, m.secs);
}

/// `sh -c SCRIPT` writing to a pipe, for syslint's stdin; `env`: its variables.
fn generator(script: &str, env: &[(&str, &str)]) -> (std::process::Child, Stdio) {
    let mut c = Command::new("sh")
        .arg("-c")
        .arg(script)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = c.stdout.take().unwrap();
    (c, Stdio::from(out))
}

/// The byte syslint says it stopped reading at, from its message.
fn stopped_at(msg: &str) -> u64 {
    let i = msg.find("stopped reading at byte ").unwrap_or_else(|| panic!("no byte in: {msg}")) + 24;
    msg[i..].split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
}

/// A line of exactly 2 GiB (2,147,483,648 bytes) without a newline, streamed into `analyze -`:
/// a recorded call whose path string never ends. A line that starts as a call is read to its
/// end however long (up to 16 GiB: a real 71 MB write line once ended the reading, issue 29),
/// in bounded memory: its first 4 MiB and last 64 KiB are kept. Unfinished, it is one
/// unreadable line: a located error, exit 2. After a real trace, the trace is reported, the
/// line counted as not understood.
#[test]
fn a_2_gib_line_without_newline_on_stdin() {
    const SIZE: u64 = 2 << 30;
    let line = stat1000_line("/nonexistent/syslint/");
    let head = &line[..line.find("\"/nonexistent/").unwrap() + 2];
    let fill = SIZE - head.len() as u64;
    let script = format!("printf '%s' \"$HEAD\"; head -c {fill} /dev/zero | tr '\\0' x");
    let (mut gen, input) = generator(&script, &[("HEAD", head)]);
    let m = measured_with("", &["analyze", "-"], Some(input), Duration::from_secs(120));
    let _ = gen.wait();
    assert_eq!(m.code(), Some(2), "{}", m.err());
    let e = m.err();
    assert!(e.contains("syslint: error: <stdin>: no strace lines recognised in 1 lines"), "{e}");
    assert!(!e.contains("stopped reading"), "{e}");
    assert!(m.peak_mib < 80.0, "peak {:.0} MiB", m.peak_mib);
    eprintln!("2 GiB line on stdin: exit 2, read to its end, peak {:.1} MiB, {:.2} s", m.peak_mib, m.secs);

    // a real trace first: it is reported, and where reading stopped is a warning
    let d = Tmp::new("longline");
    let trace = d.join("trace.strace");
    std::fs::write(&trace, demo_text()).unwrap();
    let whole = analyze(&[&root().join("demo/fetch.strace.gz")]);
    let script = format!("cat \"$TRACE\"; printf '%s' \"$HEAD\"; head -c {fill} /dev/zero | tr '\\0' x");
    let (mut gen, input) = generator(&script, &[("HEAD", head), ("TRACE", trace.to_str().unwrap())]);
    let m = measured_with("", &["analyze", "--format", "json", "-"], Some(input), Duration::from_secs(120));
    let _ = gen.wait();
    assert_eq!(m.code(), Some(0), "{}", m.err());
    let r = m.report();
    assert_eq!(r.capture.syscalls, whole.capture.syscalls);
    assert_eq!(r.capture.unparsed_lines, whole.capture.unparsed_lines + 1, "{:?}", r.capture.unparsed_samples);
    assert!(r.capture.warnings.iter().any(|w| w.contains("longer than 4 MiB")), "{:?}", r.capture.warnings);
    assert!(!r.capture.warnings.iter().any(|w| w.contains("stopped reading")), "{:?}", r.capture.warnings);
    assert!(m.peak_mib < 80.0, "peak {:.0} MiB", m.peak_mib);
    eprintln!("trace + 2 GiB line on stdin: exit 0, read to the end; peak {:.1} MiB, {:.2} s", m.peak_mib, m.secs);
}

/// Exactly 1 GiB (1,073,741,824 bytes) of pseudo-random bytes (NULs, invalid UTF-8, newlines
/// now and then) through a FIFO: no strace line, reading stopped 64 MiB in, a located error,
/// exit 2, bounded memory.
#[test]
fn a_gib_of_random_bytes_through_a_fifo() {
    const SIZE: u64 = 1 << 30;
    let d = Tmp::new("random");
    let fifo = d.join("random.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let script = format!(
        "{{ openssl enc -aes-128-ctr -nosalt -pass pass:syslint < /dev/zero 2>/dev/null || cat /dev/urandom; }} \
         | head -c {SIZE} > \"$FIFO\""
    );
    let (mut gen, _) = generator(&script, &[("FIFO", fifo.to_str().unwrap())]);
    let m = measured_with("", &["analyze", fifo.to_str().unwrap()], None, Duration::from_secs(120));
    let _ = gen.wait();
    assert_eq!(m.code(), Some(2), "{}", m.err());
    let e = m.err();
    // a random line holds a NUL about half the time (it ends at a newline or at a NUL first,
    // each as likely): "binary data" or "no strace lines", whichever half won in 64 MiB
    let name = fifo.display();
    assert!(
        e.contains(&format!("syslint: error: {name}: binary data, not a strace log ("))
            || e.contains(&format!("syslint: error: {name}: no strace lines recognised in ")),
        "{e}"
    );
    assert!(e.contains("stopped reading at byte ") && e.contains("after 64 MiB without a strace line"), "{e}");
    let at = stopped_at(&e);
    assert!(at > 64 << 20 && at < SIZE, "stopped at byte {at}");
    assert!(m.peak_mib < 80.0, "peak {:.0} MiB", m.peak_mib);
    eprintln!("1 GiB of random bytes through a FIFO: exit 2 at byte {at}, peak {:.1} MiB, {:.2} s", m.peak_mib, m.secs);
}

/// A zstd log cut in half keeps what was read and says where it ends (gzip: inputs.rs).
#[test]
fn truncated_zstd_keeps_what_was_read() {
    let d = Tmp::new("zcut");
    let z = zstd::encode_all(&demo_text()[..], 3).unwrap();
    let p = d.join("cut.strace.zst");
    std::fs::write(&p, &z[..z.len() / 2]).unwrap();
    let m = measured(&["analyze", "--format", "json", p.to_str().unwrap()]);
    assert_eq!(m.code(), Some(0), "{}", m.err());
    assert!(m.err().contains("cut.strace.zst: input ends early after line "), "{}", m.err());
    let r = m.report();
    let whole = analyze(&[&root().join("demo/fetch.strace.gz")]);
    assert!(r.capture.syscalls > 0 && r.capture.syscalls < whole.capture.syscalls, "{}", r.capture.syscalls);
    assert!(m.peak_mib < 60.0, "peak {:.0} MiB", m.peak_mib);
}

// ---- strace -ff sets of many files ----------------------------------------------------------

/// A real `strace -ff` set: a shell running /bin/true 300 times (302 files).
fn record_ff(dir: &Path) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    // without cargo's library path, each /bin/true would look for libc in a dozen build dirs
    let st = Command::new("strace")
        .env_remove("LD_LIBRARY_PATH")
        .args(["-ff", "-tt", "-T", "-yy", "-o"])
        .arg(dir.join("t"))
        .args(["sh", "-c", "for i in $(seq 300); do /bin/true; done"])
        .status()
        .expect("strace is installed (scripts/test.sh installs it)");
    assert!(st.success());
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    v.sort();
    assert_eq!(v.len(), 302);
    v
}

/// `n` files named `t.PID` in `dir`, hard links to the recorded files in turn (or, with
/// `lines`, each recorded file cut after its first `lines` lines): every one a process.
fn ff_set(dir: &Path, recorded: &[PathBuf], n: usize, lines: Option<usize>) {
    std::fs::create_dir_all(dir).unwrap();
    let cut: Vec<Vec<u8>> = recorded
        .iter()
        .map(|p| {
            let b = std::fs::read(p).unwrap();
            let k = lines.map_or(b.len(), |l| {
                b.iter().enumerate().filter(|(_, &c)| c == b'\n').nth(l - 1).map_or(b.len(), |(i, _)| i + 1)
            });
            b[..k].to_vec()
        })
        .collect();
    for i in 0..n {
        let to = dir.join(format!("t.{}", 1_000_000 + i));
        match lines {
            None => std::fs::hard_link(&recorded[i % recorded.len()], &to).unwrap(),
            Some(_) => std::fs::write(&to, &cut[i % cut.len()]).unwrap(),
        }
    }
}

/// 3,000 `-ff` files under `ulimit -n 1024` (all opened at once, it failed with "Too many open
/// files"): every file's calls are counted, in bounded memory; and forcing the merge to keep
/// only 16 files open at once (parking and reopening the others) gives the very same report, so
/// the merge by timestamp stays right.
#[test]
fn ff_set_of_3000_files_under_ulimit_1024() {
    let d = Tmp::new("ff3000");
    let rec = record_ff(&d.join("rec"));
    let one = analyze(&[&d.join("rec")]);
    let set = d.join("set");
    ff_set(&set, &rec, 3000, None);
    let s = set.to_str().unwrap();
    let m = measured_with("ulimit -n 1024;", &["analyze", "--format", "json", s], None, Duration::from_secs(120));
    // 1: a finding at warning severity (3,000 processes doing the same)
    assert!(matches!(m.code(), Some(0 | 1)), "{:?} {}", m.code(), m.err());
    assert_eq!(m.err(), "");
    let r = m.report();
    // 3,000 = 9 whole sets and the first 282 files again
    let partial = analyze(&rec[..282].iter().map(PathBuf::as_path).collect::<Vec<_>>());
    assert_eq!(r.capture.syscalls, 9 * one.capture.syscalls + partial.capture.syscalls);
    assert_eq!(r.capture.sources.len(), 3000);
    assert!(r.capture.warnings.is_empty(), "{:?}", r.capture.warnings);
    assert!(m.peak_mib < 100.0, "peak {:.0} MiB", m.peak_mib);
    eprintln!("3,000 -ff files, ulimit -n 1024: peak {:.1} MiB, {:.1} s", m.peak_mib, m.secs);
    let parked =
        Command::new(bin()).args(["analyze", "--format", "json", s]).env("SYSLINT_MAX_OPEN", "16").output().unwrap();
    assert_eq!(parked.status.code(), m.code(), "{}", stderr(&parked));
    assert_eq!(
        analysis_of(&parked.stdout),
        analysis_of(&m.out.stdout),
        "16 files open at a time must not change the merge"
    );
}

/// A report as JSON without what names its files or tells how they were read (`notes`): the
/// same analysis whatever the merge had to do to read them.
fn analysis_of(out: &[u8]) -> serde_json::Value {
    let mut v = json_doc(out).expect("a JSON report");
    let c = v["capture"].as_object_mut().expect("a capture section");
    c.remove("sources");
    c.remove("notes");
    v
}

fn notes_of(out: &[u8]) -> Vec<String> {
    let v = json_doc(out).expect("a JSON report");
    v["capture"]["notes"].as_array().map_or(Vec::new(), |a| a.iter().map(|n| n.as_str().unwrap().to_string()).collect())
}

/// `-ff` files that all overlap in time (issue 29: 600 overlapping gzipped files took 103 s,
/// every reopened file decompressed again from its start). A real recording of 40 process
/// trees running at once, made 600 files, plain and gzipped: read with the descriptors cut to
/// 8 (files closed and reopened where they stood) and with no memory for decompressors (each
/// gzipped file decompressed once into a temporary directory), the analysis is the very same,
/// and a note says what the bounds made the merge do.
#[test]
fn ff_set_of_600_overlapping_files_plain_and_gzipped() {
    let d = Tmp::new("ff600");
    let rec = d.join("rec");
    std::fs::create_dir_all(&rec).unwrap();
    let st = Command::new("strace")
        .env_remove("LD_LIBRARY_PATH")
        .args(["-ff", "-tt", "-T", "-yy", "-o"])
        .arg(rec.join("t"))
        .args([
            "sh",
            "-c",
            "for i in $(seq 40); do (cat /etc/hostname; sleep 0.2; cat /etc/hostname) >/dev/null & done; wait",
        ])
        .status()
        .expect("strace is installed (scripts/test.sh installs it)");
    assert!(st.success());
    let mut recorded: Vec<PathBuf> = std::fs::read_dir(&rec).unwrap().map(|e| e.unwrap().path()).collect();
    recorded.sort();
    assert!(recorded.len() > 80, "{} files", recorded.len());
    let plain = d.join("plain");
    ff_set(&plain, &recorded, 600, None);
    let gz = d.join("gz");
    std::fs::create_dir_all(&gz).unwrap();
    for e in std::fs::read_dir(&plain).unwrap() {
        let p = e.unwrap().path();
        let mut w = flate2::write::GzEncoder::new(
            std::fs::File::create(gz.join(format!("{}.gz", p.file_name().unwrap().to_str().unwrap()))).unwrap(),
            flate2::Compression::fast(),
        );
        w.write_all(&std::fs::read(&p).unwrap()).unwrap();
        w.finish().unwrap();
    }
    let run = |dir: &Path, env: &[(&str, &str)]| {
        let o = Command::new(bin())
            .args(["analyze", "--format", "json"])
            .arg(dir)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
        o.stdout
    };
    let base = run(&plain, &[("SYSLINT_MAX_OPEN", "100000")]);
    let r = parse_report(&String::from_utf8_lossy(&base)).unwrap();
    assert_eq!(r.capture.sources.len(), 600);
    assert!(r.capture.warnings.is_empty(), "{:?}", r.capture.warnings);
    assert!(notes_of(&base).is_empty(), "{:?}", notes_of(&base));
    let want = analysis_of(&base);

    let few = run(&plain, &[("SYSLINT_MAX_OPEN", "8")]);
    assert_eq!(analysis_of(&few), want, "8 descriptors must not change the merge");
    let notes = notes_of(&few);
    assert!(notes.iter().any(|n| n.contains("than the 8 descriptors") && n.contains("reopened")), "{notes:?}");

    let gz_default = run(&gz, &[]);
    assert_eq!(analysis_of(&gz_default), want, "gzipped files must read as the plain ones");
    let spilled = run(&gz, &[("SYSLINT_MAX_OPEN", "8"), ("SYSLINT_DECOMPRESS_MIB", "0")]);
    assert_eq!(analysis_of(&spilled), want, "files decompressed ahead must read as the plain ones");
    let notes = notes_of(&spilled);
    assert!(
        notes.iter().any(|n| n.starts_with("600 compressed files") && n.contains("decompressed once")),
        "{notes:?}"
    );
    // the temporary directory is gone
    let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("syslint-merge-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// 50,000 `-ff` files (each a recorded file cut after its first 3 lines, so the test takes
/// seconds): all read, bounded memory.
#[test]
fn ff_set_of_50000_files() {
    let d = Tmp::new("ff50k");
    let rec = record_ff(&d.join("rec"));
    let set = d.join("set");
    ff_set(&set, &rec, 50_000, Some(3));
    let m = measured(&["analyze", "--format", "json", set.to_str().unwrap()]);
    assert_eq!(m.code(), Some(0), "{}", m.err());
    let r = m.report();
    assert_eq!(r.capture.sources.len(), 50_000);
    assert!(!m.err().contains("Too many open files"), "{}", m.err());
    assert_eq!(r.capture.lines, 150_000);
    assert!(m.peak_mib < 150.0, "peak {:.0} MiB", m.peak_mib);
    eprintln!("50,000 -ff files of 3 lines: peak {:.1} MiB, {:.1} s", m.peak_mib, m.secs);
}

/// The same with 50,000 whole recorded files (1.9 million syscalls).
#[test]
#[ignore = "slow: about 30 s in a debug build (50,000 files, 1.9 million syscalls); run with --ignored"]
fn ff_set_of_50000_whole_files() {
    let d = Tmp::new("ff50kw");
    let rec = record_ff(&d.join("rec"));
    let set = d.join("set");
    ff_set(&set, &rec, 50_000, None);
    let m = measured(&["analyze", "--format", "json", set.to_str().unwrap()]);
    assert!(matches!(m.code(), Some(0 | 1)), "{:?} {}", m.code(), m.err());
    assert_eq!(m.report().capture.sources.len(), 50_000);
    assert!(m.peak_mib < 150.0, "peak {:.0} MiB", m.peak_mib);
    eprintln!("50,000 whole -ff files: peak {:.1} MiB, {:.1} s", m.peak_mib, m.secs);
}

// ---- diff streams each side ------------------------------------------------------------------

/// `diff` of two 100 MB logs (the recorded demo trace 150 times over) streams each side through
/// the analysis as `analyze` does: it read each wholly into memory first (2.1 GB for a 2 GB log).
#[test]
fn diff_streams_each_side() {
    let d = Tmp::new("diffbig");
    let text = demo_text();
    let p = d.join("big.strace");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
    for _ in 0..150 {
        f.write_all(&text).unwrap();
    }
    f.flush().unwrap();
    drop(f);
    let size = std::fs::metadata(&p).unwrap().len();
    assert!(size > 100_000_000);
    let s = p.to_str().unwrap();
    let m = measured(&["diff", "--format", "json", s, s]);
    assert_eq!(m.code(), Some(0), "{}", m.err());
    let v = json_doc(stdout(&m.out)).unwrap();
    assert_eq!(v["regression"], serde_json::Value::Bool(false), "{v}");
    assert!(m.peak_mib < 70.0, "peak {:.0} MiB for two sides of {size} bytes", m.peak_mib);
    let a = measured(&["analyze", "--format", "json", s]);
    eprintln!(
        "diff of two {size}-byte logs: peak {:.1} MiB, {:.1} s (analyze: {:.1} MiB)",
        m.peak_mib, m.secs, a.peak_mib
    );
}

// ---- millions of distinct pids and paths -------------------------------------------------------

/// Recorded lines of `stat1000.f-tt-T-yy.strace` (`-f`: a pid column).
fn stat1000_line(has: &str) -> String {
    read_text(&fixture("stat1000.f-tt-T-yy.strace")).lines().find(|l| l.contains(has)).unwrap().to_string()
}

/// `n` copies of a recorded `brk` call, each under its own pid (the pid column rewritten).
fn distinct_pids(path: &Path, n: u32) {
    let line = stat1000_line(" brk(NULL)");
    let (_, rest) = line.split_once(' ').unwrap();
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for pid in 2..n + 2 {
        writeln!(f, "{pid} {rest}").unwrap();
    }
    f.flush().unwrap();
}

/// Memory grew ~1.6 KB per distinct pid (4,194,304 pids: 6.7 GB). Threads beyond the first
/// 100,000 are now counted together as one thread (said in a warning): 1,000,000 pids take no
/// more memory than 150,000, and every call is still counted.
#[test]
fn a_million_distinct_pids_in_bounded_memory() {
    let d = Tmp::new("pids");
    let (small, big) = (d.join("150k.strace"), d.join("1m.strace"));
    distinct_pids(&small, 150_000);
    distinct_pids(&big, 1_000_000);
    let a = measured(&["analyze", "--format", "json", small.to_str().unwrap()]);
    let b = measured(&["analyze", "--format", "json", big.to_str().unwrap()]);
    for (m, n) in [(&a, 150_000u64), (&b, 1_000_000)] {
        assert!(matches!(m.code(), Some(0 | 1)), "{}", m.err());
        let r = m.report();
        assert_eq!(r.capture.syscalls, n);
        let w = r.capture.warnings.iter().find(|w| w.contains("threads beyond the first 100000 were counted together"));
        assert!(w.is_some(), "{:?}", r.capture.warnings);
        assert!(m.peak_mib < 400.0, "{n} pids: peak {:.0} MiB", m.peak_mib);
    }
    assert!(b.peak_mib < a.peak_mib * 1.25 + 10.0, "150k pids: {:.0} MiB, 1M: {:.0} MiB", a.peak_mib, b.peak_mib);
    eprintln!("150,000 pids: peak {:.1} MiB; 1,000,000 pids: peak {:.1} MiB, {:.1} s", a.peak_mib, b.peak_mib, b.secs);
}

#[test]
#[ignore = "slow: 10 million pids (690 MB of log) take about a minute in a debug build; run with --ignored"]
fn ten_million_distinct_pids_in_bounded_memory() {
    let d = Tmp::new("pids10m");
    let big = d.join("10m.strace");
    distinct_pids(&big, 10_000_000);
    let m = measured_with("", &["analyze", big.to_str().unwrap()], None, Duration::from_secs(600));
    assert!(matches!(m.code(), Some(0 | 1)), "{}", m.err());
    assert!(m.peak_mib < 200.0, "peak {:.0} MiB", m.peak_mib);
    eprintln!("10,000,000 pids: peak {:.1} MiB, {:.1} s", m.peak_mib, m.secs);
}

/// `n` recorded open/close pairs, each on its own path (the path renamed).
fn distinct_paths(path: &Path, n: u32) {
    let (open, close) = (stat1000_line("openat(AT_FDCWD"), stat1000_line("close(3</etc/ld.so.cache>)"));
    assert!(open.contains("/etc/ld.so.cache"), "{open}");
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for i in 0..n {
        let p = format!("/etc/ld.so.cache.{i}");
        writeln!(f, "{}", open.replace("/etc/ld.so.cache", &p)).unwrap();
        writeln!(f, "{}", close.replace("/etc/ld.so.cache", &p)).unwrap();
    }
    f.flush().unwrap();
}

/// 500,000 distinct files opened take no more memory than 100,000.
#[test]
fn distinct_paths_in_bounded_memory() {
    let d = Tmp::new("paths");
    let (small, big) = (d.join("100k.strace"), d.join("500k.strace"));
    distinct_paths(&small, 100_000);
    distinct_paths(&big, 500_000);
    let a = measured(&["analyze", "--format", "json", small.to_str().unwrap()]);
    let b = measured(&["analyze", "--format", "json", big.to_str().unwrap()]);
    assert!(matches!(b.code(), Some(0 | 1)), "{}", b.err());
    assert_eq!(b.report().capture.syscalls, 1_000_000);
    assert!(b.peak_mib < a.peak_mib * 1.25 + 10.0, "100k paths: {:.0} MiB, 500k: {:.0} MiB", a.peak_mib, b.peak_mib);
    eprintln!("100,000 paths: peak {:.1} MiB; 500,000: {:.1} MiB, {:.1} s", a.peak_mib, b.peak_mib, b.secs);
}

#[test]
#[ignore = "slow: 5 million distinct paths (10 million calls) take about a minute in a debug build; run with --ignored"]
fn five_million_distinct_paths_in_bounded_memory() {
    let d = Tmp::new("paths5m");
    let big = d.join("5m.strace");
    distinct_paths(&big, 5_000_000);
    let m = measured_with("", &["analyze", big.to_str().unwrap()], None, Duration::from_secs(600));
    assert!(matches!(m.code(), Some(0 | 1)), "{}", m.err());
    assert!(m.peak_mib < 100.0, "peak {:.0} MiB", m.peak_mib);
    eprintln!("5,000,000 paths: peak {:.1} MiB, {:.1} s", m.peak_mib, m.secs);
}

// ---- special files and files that change --------------------------------------------------------

/// A FIFO is read once (it was opened a first time to look for a recording's magic, which
/// took what the writer sent: the read then blocked for ever); a symlink loop is one clear error.
#[test]
fn fifo_and_symlink_loop() {
    let d = Tmp::new("special");
    let fifo = d.join("trace.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let text = demo_text();
    let f2 = fifo.clone();
    let writer = std::thread::spawn(move || std::fs::write(&f2, &text));
    let m = measured_with("", &["analyze", "--format", "json", fifo.to_str().unwrap()], None, Duration::from_secs(60));
    writer.join().unwrap().unwrap();
    assert_eq!(m.code(), Some(0), "{}", m.err());
    let whole = analyze(&[&root().join("demo/fetch.strace.gz")]);
    assert_eq!(m.report().capture.syscalls, whole.capture.syscalls);
    assert!(m.peak_mib < 60.0, "peak {:.0} MiB", m.peak_mib);

    let (a, b) = (d.join("a"), d.join("b"));
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    let m = measured(&["analyze", a.to_str().unwrap()]);
    assert_eq!(m.code(), Some(2));
    assert_eq!(
        m.err().trim(),
        format!("syslint: error: {}: Too many levels of symbolic links (os error 40)", a.display())
    );
}

/// A recording in a FIFO or on stdin is a recording (only regular files were looked into for
/// its magic, so it was read as strace text: "binary data, not a strace log", exit 2); the
/// bytes looked at are not lost: every call is replayed, as from the file.
#[test]
fn a_recording_in_a_fifo_or_on_stdin_is_replayed() {
    let d = Tmp::new("slrfifo");
    let rec = recorded_slr();
    let whole = analyze(&[&rec]);
    assert!(whole.capture.syscalls > 1000, "{}", whole.capture.syscalls);
    let fifo = d.join("rec.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let (f2, r2) = (fifo.clone(), rec.clone());
    let writer = std::thread::spawn(move || std::fs::write(&f2, std::fs::read(&r2).unwrap()));
    let m = measured_with("", &["analyze", "--format", "json", fifo.to_str().unwrap()], None, Duration::from_secs(60));
    writer.join().unwrap().unwrap();
    assert!(matches!(m.code(), Some(0 | 1)), "{}", m.err());
    let r = m.report();
    assert_eq!(r.capture.backend, "ebpf-recording");
    assert_eq!((r.capture.syscalls, r.capture.events), (whole.capture.syscalls, whole.capture.events));
    assert_eq!(r.capture.sources, [fifo.display().to_string()]);
    assert!(m.peak_mib < 60.0, "peak {:.0} MiB", m.peak_mib);
    eprintln!("recording in a FIFO: peak {:.1} MiB, {:.2} s", m.peak_mib, m.secs);

    // stdin, from a pipe; and `export -` writes the same text as from the file
    let pipe = |p: &Path| {
        let mut c = Command::new("cat").arg(p).stdout(Stdio::piped()).spawn().unwrap();
        let out = c.stdout.take().unwrap();
        (c, Stdio::from(out))
    };
    let (mut cat, input) = pipe(&rec);
    let m = measured_with("", &["analyze", "--format", "json", "-"], Some(input), Duration::from_secs(60));
    cat.wait().unwrap();
    assert!(matches!(m.code(), Some(0 | 1)), "{}", m.err());
    let r = m.report();
    assert_eq!((r.capture.backend.as_str(), r.capture.syscalls), ("ebpf-recording", whole.capture.syscalls));
    assert_eq!(r.capture.sources, ["<stdin>"]);
    let (mut cat, input) = pipe(&rec);
    let m = measured_with("", &["export", "-"], Some(input), Duration::from_secs(60));
    cat.wait().unwrap();
    assert_eq!(m.code(), Some(0), "{}", m.err());
    let from_file = measured(&["export", rec.to_str().unwrap()]);
    assert!(stdout(&m.out) == stdout(&from_file.out), "export of stdin and of the file differ");
    // strace text on stdin is still strace text, and not a recording to export
    let (mut cat, input) = pipe(&root().join("demo/fetch.strace.gz"));
    let m = measured_with("", &["export", "-"], Some(input), Duration::from_secs(60));
    cat.wait().unwrap();
    assert_eq!(m.code(), Some(2));
    assert!(m.err().contains("-: not a syslint recording"), "{}", m.err());
}

/// A log that grows, is truncated or is deleted while syslint reads it: the report says so.
#[test]
fn a_file_that_changes_while_read_is_said() {
    let d = Tmp::new("changing");
    let text = demo_text();
    let big = |p: &Path| {
        let mut f = std::io::BufWriter::new(std::fs::File::create(p).unwrap());
        for _ in 0..60 {
            f.write_all(&text).unwrap();
        }
        f.flush().unwrap();
    };
    for what in ["grew", "was truncated", "deleted"] {
        let p = d.join(&format!("{}.strace", what.replace(' ', "-")));
        big(&p);
        let ps = p.to_str().unwrap().to_string();
        let run = std::thread::spawn(move || measured(&["analyze", "--format", "json", &ps]));
        std::thread::sleep(Duration::from_millis(300));
        match what {
            "grew" => {
                // a few appends, as a program still logging would (not faster than it is read)
                let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
                for _ in 0..5 {
                    f.write_all(&text).unwrap();
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            "was truncated" => std::fs::OpenOptions::new().write(true).open(&p).unwrap().set_len(1000).unwrap(),
            _ => std::fs::remove_file(&p).unwrap(),
        }
        let m = run.join().unwrap();
        assert!(matches!(m.code(), Some(0 | 1)), "{what}: {}", m.err());
        let r = m.report();
        let w = format!("{}: {what} while it was read", p.display());
        assert!(r.capture.warnings.iter().any(|x| x.starts_with(&w)), "{what}: {:?}", r.capture.warnings);
        assert!(m.peak_mib < 80.0, "{what}: peak {:.0} MiB", m.peak_mib);
    }
}

/// A file of an `strace -ff` set that grows, is truncated or is deleted while the set is read:
/// the warning names the file and its sizes, as for a single input (it said nothing).
#[test]
fn a_file_of_an_ff_set_that_changes_while_read_is_said() {
    let d = Tmp::new("ffchanging");
    let text = demo_text();
    for what in ["grew", "was truncated", "deleted"] {
        let dir = d.join(&what.replace(' ', "-"));
        std::fs::create_dir_all(&dir).unwrap();
        // one file long enough to be still read when it changes (13 MB: 6 s in a debug build,
        // the merge peeks each line's time), two short ones
        let p = dir.join("trace.9357");
        let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
        for _ in 0..20 {
            f.write_all(&text).unwrap();
        }
        f.flush().unwrap();
        drop(f);
        for pid in ["9358", "9359"] {
            std::fs::write(dir.join(format!("trace.{pid}")), &text).unwrap();
        }
        let before = std::fs::metadata(&p).unwrap().len();
        let ds = dir.to_str().unwrap().to_string();
        let run = std::thread::spawn(move || measured(&["analyze", "--format", "json", &ds]));
        std::thread::sleep(Duration::from_millis(200));
        match what {
            "grew" => {
                let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
                for _ in 0..5 {
                    f.write_all(&text).unwrap();
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            "was truncated" => std::fs::OpenOptions::new().write(true).open(&p).unwrap().set_len(1000).unwrap(),
            _ => std::fs::remove_file(&p).unwrap(),
        }
        let m = run.join().unwrap();
        assert!(matches!(m.code(), Some(0 | 1)), "{what}: {}", m.err());
        let r = m.report();
        assert_eq!(r.capture.sources.len(), 3, "{what}");
        let w = match what {
            "grew" => format!("{}: grew while it was read ({before} bytes when opened, {} at the end); the report covers the ", p.display(), before + 5 * text.len() as u64),
            "was truncated" => format!("{}: was truncated while it was read ({before} bytes when opened, 1000 at the end); the report covers the ", p.display()),
            _ => format!("{}: deleted while it was read; the report covers the ", p.display()),
        };
        let said: Vec<_> = r.capture.warnings.iter().filter(|x| x.contains("while it was read")).collect();
        assert!(
            said.len() == 1 && said[0].starts_with(&w) && said[0].ends_with(" lines read"),
            "{what}: {:?}",
            r.capture.warnings
        );
        assert!(m.peak_mib < 80.0, "{what}: peak {:.0} MiB", m.peak_mib);
        eprintln!("-ff file ({what}): {}; peak {:.1} MiB, {:.1} s", said[0], m.peak_mib, m.secs);
    }
}

/// `diff` given a JSON report of the wrong schema, or of a newer version, refuses it by name.
#[test]
fn diff_refuses_a_json_report_of_the_wrong_schema() {
    let d = Tmp::new("schema");
    let p = d.join("other.json");
    std::fs::write(&p, br#"{"name": "not syslint", "items": [1, 2, 3]}"#).unwrap();
    let s = p.to_str().unwrap();
    let m = measured(&["diff", s, s]);
    assert_eq!(m.code(), Some(2), "{}", m.err());
    assert!(m.err().contains(&format!("{s}: not a syslint JSON report")), "{}", m.err());
    assert!(m.peak_mib < 30.0);
}

/// A recorded call whose argument list holds 3 million nested opening braces, brackets and
/// quotes: read in linear time and bounded memory, the recorded line after it still counted.
#[test]
fn deeply_nested_braces_and_quotes() {
    let d = Tmp::new("nested");
    let line = stat1000_line(" brk(NULL)");
    let (a, b) = line.split_once('(').unwrap();
    let p = d.join("nested.strace");
    let mut bytes = format!("{a}(").into_bytes();
    bytes.extend(b"{[\"".repeat(1_000_000));
    bytes.extend(format!("{b}\n{line}\n").into_bytes());
    std::fs::write(&p, &bytes).unwrap();
    let m = measured(&["analyze", "--format", "json", p.to_str().unwrap()]);
    assert!(matches!(m.code(), Some(0 | 1)), "{}", m.err());
    assert!(m.report().capture.syscalls >= 1);
    assert!(m.secs < 20.0, "{:.1} s", m.secs);
    assert!(m.peak_mib < 60.0, "peak {:.0} MiB", m.peak_mib);
}
