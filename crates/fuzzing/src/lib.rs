//! The bodies of syslint's fuzz targets: one function per reader or decoder that takes
//! arbitrary bytes, runs them through everything that reads them, and checks the properties
//! that must hold on any input (not only "no panic"):
//!
//! - [`strace_log`]: the strace reader with every detector and every printer; the parallel
//!   reader cut into tiny chunks gives exactly the events of the sequential reader; the JSON
//!   report reads back, and `diff` of a report with itself finds nothing changed.
//! - [`recording`]: a decompressed `.slr` recording, replayed through the eBPF formatter into
//!   the analysis, and each event rendered as strace text (what `export` writes).
//! - [`report_json`]: a saved JSON report as `diff` reads it, diffed and printed in every
//!   format.
//! - [`arguments`]: one call's argument text under every syscall name, through every typed
//!   accessor and the evidence renderer.
//! - [`config`]: a `syslint.toml`, as the registry builds detectors from it.
//!
//! The cargo-fuzz targets in `fuzz/` call these; `tests/regressions.rs` replays every input
//! that ever crashed one (fuzz/regressions/) and the seed inputs, on stable Rust, in CI.

use std::io::Write;
use syslint_analyze::registry;
use syslint_analyze::Analyzer;
use syslint_capture::ebpf::format::Formatter;
use syslint_capture::ebpf::slr;
use syslint_capture::parallel::read_parallel;
use syslint_event::{Args, Event, EventKind, Pre, Ret, Sys, Syscall};
use syslint_report::printers::{diff as diff_printers, html, json, markdown, table};
use syslint_report::{diff, Capture, Report};

/// Longest line the reader keeps (as the binary's default).
const MAX_LINE: usize = 1 << 20;

/// A sink for printers' output that keeps only its length (fuzzing is about the path, not
/// the text).
struct Discard(usize);

impl Write for Discard {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0 += b.len();
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn analyzer() -> Analyzer {
    let detectors = registry::build(&[], &[], &toml::Table::new()).expect("the built-in detectors build");
    Analyzer::new(detectors)
}

/// Every printer over a report; the JSON must read back, and a report diffed with itself
/// must show no regression.
fn print_all(r: &Report) {
    let mut out = Discard(0);
    table::print(r, &mut out, &table::TableOptions::default()).expect("table");
    markdown::print(r, &mut out).expect("markdown");
    html::print(r, &mut out).expect("html");
    let mut text = Vec::new();
    json::print(r, &mut text).expect("json");
    let text = String::from_utf8(text).expect("the JSON report is UTF-8");
    let back = json::parse(&text).expect("syslint reads its own JSON report back");
    let d = diff::diff(&back, r);
    assert!(!d.regression, "a report diffed with itself shows a regression: {}", d.verdict);
    diff_printers::print_table(&d, &mut out).expect("diff table");
    diff_printers::print_markdown(&d, &mut out).expect("diff markdown");
    html::print_diff(&d, &back, r, &mut out).expect("diff html");
}

/// Strace text: the sequential reader and the parallel one cut into chunks of a few lines
/// give the same events and the same account of the reading (every count, which unparsed lines
/// are sampled and how): one input gives one report on any number of cores.
pub fn readers_agree(data: &[u8]) {
    let mut one = Vec::new();
    let o1 = read_parallel(data, "fuzz", 1, 1 << 30, MAX_LINE, &mut |e: &Event| one.push(format!("{e:?}")));
    // chunks of a few lines: every border case a 1 MiB chunk meets in a large log
    let mut two = Vec::new();
    let o2 = read_parallel(data, "fuzz", 2, 256, MAX_LINE, &mut |e: &Event| two.push(format!("{e:?}")));
    assert_eq!(one.len(), two.len(), "the parallel reader gave a different number of events");
    for (i, (a, b)) in one.iter().zip(&two).enumerate() {
        assert_eq!(a, b, "event {i} differs between the sequential and the parallel reader");
    }
    // everything the report shows of the reading too: byte-identical reports on any number of
    // cores (which lines are sampled, in what order, with what text)
    assert_eq!(format!("{:?}", o1.stats), format!("{:?}", o2.stats), "the readers' stats differ");
    assert_eq!(
        (o1.cut_lines, o1.stopped_at, o1.tally.lines, o1.tally.events, o1.tally.binary, o1.tally.stopped_at),
        (o2.cut_lines, o2.stopped_at, o2.tally.lines, o2.tally.events, o2.tally.binary, o2.tally.stopped_at),
        "the readers' tallies differ"
    );
    assert!(o1.stats.unparsed <= o1.stats.lines, "more unparsed lines than lines");
}

/// Strace text: sequential and parallel readers agree; the analysis and every printer run.
pub fn strace_log(data: &[u8]) {
    readers_agree(data);

    let mut a = analyzer();
    // the same bytes as a pasted table of counts (strace -c, perf trace -s, syscount): never a
    // panic, and every detector's counts rules run on whatever it found
    let counts = syslint_capture::tables::read(&String::from_utf8_lossy(data));
    if let Some(c) = &counts {
        assert!(c.rows.iter().all(|r| !r.name.is_empty()), "a table row without a name");
        let r = analyzer().finish(syslint_analyze::Captured {
            backend: Some(syslint_report::Backend::StraceLog),
            counts: Some(c.clone()),
            ..Default::default()
        });
        assert!(
            r.findings.iter().all(|f| f.severity != syslint_report::Severity::Error),
            "a table-only finding is an error"
        );
        print_all(&r);
    }
    let mut o = read_parallel(data, "fuzz", 1, 1 << 30, MAX_LINE, &mut |e: &Event| a.on_event(e));
    let capture = Capture {
        backend: "strace-log".into(),
        sources: vec!["fuzz".into()],
        lines: o.stats.lines,
        events: o.stats.events,
        syscalls: o.stats.syscalls,
        unparsed_lines: o.stats.unparsed,
        ..Capture::default()
    };
    // with the stacks of a -k input: every finding's call sites are looked up
    let stacks = o.stats.stacks.take();
    print_all(&a.finish(syslint_analyze::Captured { capture, stacks, ..Default::default() }));
}

/// A decompressed `.slr` body (magic, header, records).
pub fn recording(data: &[u8]) {
    let Ok(mut rec) = slr::Recording::from_decompressed(data.to_vec(), None) else { return };
    let mut f = Formatter::new(rec.known.clone());
    let mut a = analyzer();
    let mut text = String::new();
    let offset = rec.header.realtime_offset_ns;
    let _info = rec.replay(&mut |r| {
        f.on_record(&r, &mut |ev| {
            a.on_event(ev);
            text.clear();
            syslint_capture::ebpf::format::strace_line(&mut text, ev, offset);
        });
    });
    print_all(&a.finish(Capture { backend: "ebpf-recording".into(), ..Capture::default() }));
}

/// A JSON report as `diff` reads it.
pub fn report_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(r) = json::parse(text) else { return };
    let mut out = Discard(0);
    let base = analyzer().finish(Capture::default());
    for (before, after) in [(&r, &r), (&base, &r), (&r, &base)] {
        let d = diff::diff(before, after);
        diff_printers::print_table(&d, &mut out).expect("diff table");
        diff_printers::print_markdown(&d, &mut out).expect("diff markdown");
        html::print_diff(&d, before, after, &mut out).expect("diff html");
    }
    table::print(&r, &mut out, &table::TableOptions::default()).expect("table");
    markdown::print(&r, &mut out).expect("markdown");
    html::print(&r, &mut out).expect("html");
}

/// One argument list (and a return value) under every syscall name.
pub fn arguments(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // the first line is the arguments, the second (if any) the return note or errno
    let (args, note) = text.split_once('\n').unwrap_or((text, ""));
    let mut buf = [0u8; 64];
    let mut line = String::new();
    for i in 0..Sys::COUNT {
        let sys = Sys::from_index(i);
        for ret in [Ret::Ok { val: 3, deco: Some(note), note }, Ret::Err { val: -1, errno: note }, Ret::Unknown] {
            let mut sc = Syscall {
                sys,
                name: sys.name(),
                args: Args::Text(args),
                ret,
                dur_ns: Some(1000),
                resumed: false,
                pre: Pre::NONE,
            };
            for pass in 0..2 {
                if pass == 1 {
                    sc.decode_pre();
                }
                let _ = (sc.fd(), sc.fd_num(), sc.path(), sc.bytes(), sc.timeout(), sc.sockaddr());
                let _ = (sc.open_flags(), sc.msg_flags(), sc.clone_flags(), sc.wait_options(), sc.futex_op());
                let _ = (sc.fcntl_cmd(), sc.ioctl_req(), sc.prctl_name(), sc.memfd_name(), sc.unlink_path());
                let _ = (sc.dir_fd(), sc.socket_kind(), sc.fd_pair(), sc.polled_fds(), sc.sockopt(), sc.epoll_ctl());
                let _ = (sc.requested_bytes(), sc.offset(), sc.payload_prefix(&mut buf), sc.payloads());
                let mut h = std::collections::hash_map::DefaultHasher::new();
                sc.hash_args(3, &mut h);
                line.clear();
                syslint_analyze::detectors::render_call_into(&sc, &mut line);
            }
            let ev = Event { tid: syslint_event::Tid(1), ts_ns: Some(0), kind: EventKind::Syscall(sc) };
            let _ = syslint_analyze::detectors::Evidence::of(&ev);
        }
    }
}

/// A configuration file.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(table) = text.parse::<toml::Table>() else { return };
    match registry::build(&[], &[], &table) {
        Ok(detectors) => {
            // a configuration that builds must analyse
            let mut a = Analyzer::new(detectors);
            let _ = read_parallel(
                &b"1 10:00:00.000000 getpid() = 1 <0.000010>\n"[..],
                "c",
                1,
                1 << 20,
                MAX_LINE,
                &mut |e: &Event| a.on_event(e),
            );
            let _ = a.finish(Capture::default());
        }
        Err(e) => {
            // a refusal says what is wrong
            assert!(!e.to_string().is_empty(), "an empty configuration error");
        }
    }
}

/// The JSON report of a strace log (a seed for [`report_json`]).
pub fn json_report_of(data: &[u8]) -> Vec<u8> {
    let mut a = analyzer();
    let o = read_parallel(data, "seed", 1, 1 << 30, MAX_LINE, &mut |e: &Event| a.on_event(e));
    let r = a.finish(Capture { backend: "strace-log".into(), lines: o.stats.lines, ..Capture::default() });
    let mut out = Vec::new();
    json::print(&r, &mut out).expect("json");
    out
}
