//! The corpus of real pastes from public threads (tests/fixtures/pasted: README.md has each
//! file's source and what the people in the thread concluded; expected.tsv the verdict syslint
//! should give): syslint is run over every file and held to that verdict.
//!
//! Rows naming a pathology no detector knows yet (`[ioctl-poll]`, issue 28's development
//! corpus) count as misses. Where syslint disagrees today, DISAGREE (or the development
//! corpus's misses.tsv) says so and why; the test then holds it to exactly that, so a fix (or a
//! regression) shows.

use crate::common::*;
use syslint_report::{Confidence, Severity};

/// Files where syslint's verdict differs from expected.tsv today, and why.
const DISAGREE: &[(&str, &str)] = &[
    (
    "pstore-11-gpg-spawn-grep-context.txt",
    "read now (its signed -r deltas and grep's `--` lines), but the grep-picked lines show two children of programs they do not name, one reaped by wait4: under the 3 children the excerpt rule needs; the thread's point (each gpg child costs ~10 ms) is a time only a full trace with -f shows",
),
];

fn conf(s: &str) -> Option<Confidence> {
    match s {
        "low" => Some(Confidence::Low),
        "medium" => Some(Confidence::Medium),
        "high" => Some(Confidence::High),
        _ => None,
    }
}

#[test]
fn every_paste_gets_the_verdict_of_its_thread() {
    let disagree: Vec<(String, String)> = DISAGREE.iter().map(|(f, w)| (f.to_string(), w.to_string())).collect();
    let tally = verdicts(&root().join("tests/fixtures/pasted"), &disagree);
    assert!(tally.checked >= 25, "only {} rows checked", tally.checked);
}

/// Issue 28's development corpus (tests/fixtures/pasted-dev: README.md has each paste's
/// source and the thread's diagnosis, labelled before syslint was run on it): the rows syslint
/// misses today are listed in its misses.tsv with the reason, and held to that, so a fix (or a
/// regression) shows. The hit rate is printed.
#[test]
fn the_development_corpus_is_read_as_recorded() {
    let dir = root().join("tests/fixtures/pasted-dev");
    if !dir.join("expected.tsv").is_file() {
        panic!("tests/fixtures/pasted-dev/expected.tsv is missing");
    }
    let misses: Vec<(String, String)> = std::fs::read_to_string(dir.join("misses.tsv"))
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_once('\t').map(|(f, w)| (f.to_string(), w.to_string())))
        .collect();
    let t = verdicts(&dir, &misses);
    eprintln!(
        "development corpus: {} of {} positives named, {} of {} negatives with a warning",
        t.positives_named, t.positives, t.negatives_warned, t.negatives
    );
}

/// What a corpus run found.
#[derive(Default)]
struct Tally {
    checked: usize,
    positives: usize,
    positives_named: usize,
    negatives: usize,
    negatives_warned: usize,
}

/// Runs syslint over every row of `dir`/expected.tsv and holds it to the row's verdict, except
/// the rows of `disagree` (file, why), which must still disagree.
fn verdicts(dir: &std::path::Path, disagree: &[(String, String)]) -> Tally {
    let tsv = std::fs::read_to_string(dir.join("expected.tsv")).expect("expected.tsv");
    let known: Vec<&str> = syslint_analyze::registry::metas().iter().map(|m| m.name).collect();
    let mut t = Tally::default();
    let mut wrong = Vec::new();
    for (f, _) in disagree {
        assert!(dir.join(f).is_file(), "{f}: listed as a disagreement, not in {}", dir.display());
    }
    for line in tsv.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (file, expected, min) = (cols[0], cols[2], cols[3]);
        let disagreed = disagree.iter().any(|(f, _)| f == file);
        let positive = expected != "quiet";
        if positive && !known.contains(&expected) {
            // a pathology no detector knows yet (`[ioctl-poll]`): counted as a miss
            t.positives += 1;
            continue;
        }
        let p = dir.join(file);
        assert!(p.is_file(), "{file}: in expected.tsv, not in {}", dir.display());
        let o = run(&["analyze", "--format", "json", &p.display().to_string()]);
        t.checked += 1;
        if o.status.code() == Some(2) {
            // not read at all: an error, no finding
            if positive {
                t.positives += 1;
                if !disagreed {
                    wrong.push(format!(
                        "{file}: expected {expected}, syslint could not read it: {}",
                        String::from_utf8_lossy(&o.stderr).trim()
                    ));
                }
            } else {
                t.negatives += 1;
            }
            continue;
        }
        let r = parse_report(&String::from_utf8_lossy(&o.stdout)).expect("JSON report");
        let table_only = r.capture.syscalls == 0;
        for f in &r.findings {
            assert!(!(table_only && f.severity == Severity::Error), "{file}: a table-only finding is an error");
            assert!(f.confidence.is_some(), "{file}: {} without confidence", f.detector);
        }
        let got_ok = if positive {
            let want = conf(min).unwrap_or(Confidence::Low);
            r.findings.iter().any(|f| f.detector == expected && f.confidence.is_some_and(|c| c >= want))
        } else {
            r.findings.iter().all(|f| f.severity < Severity::Warning)
        };
        if positive {
            t.positives += 1;
            t.positives_named += usize::from(got_ok);
        } else {
            t.negatives += 1;
            t.negatives_warned += usize::from(!got_ok);
        }
        let said: Vec<String> = r
            .findings
            .iter()
            .map(|f| format!("{} {} {}", f.detector, f.severity.as_str(), f.confidence.map_or("-", Confidence::as_str)))
            .collect();
        if got_ok == disagreed {
            wrong.push(format!(
                "{file}: expected {expected} >= {min}, syslint said {said:?}{}",
                if disagreed { " (listed as a disagreement: remove it)" } else { "" }
            ));
        }
    }
    assert!(wrong.is_empty(), "{} verdicts differ:\n{}", wrong.len(), wrong.join("\n"));
    t
}

/// The near misses of issue 14, each recorded from a real program and cut the way a person
/// pastes it (tests/fixtures/near-miss: record.sh, cut.py, README.md): an idle GLib main loop
/// with a 100 ms timer, nginx with SO_REUSEPORT meeting an occasional EAGAIN, a resolver told a
/// name does not exist, a sysfs file read a byte at a time once. Neither the excerpt nor the
/// `strace -c` table of the same program raises a warning. Each excerpt is checked to hold what
/// makes it a near miss, so the test cannot pass on lines that show nothing.
#[test]
fn near_misses_raise_no_warning() {
    let dir = root().join("tests/fixtures/near-miss");
    // (name, what the excerpt must show: a line fragment and how many lines hold it)
    let cases: &[(&str, &str, usize)] = &[
        ("glib-tick", "], 2, 100) = 0 (Timeout)", 10),
        ("nginx-reuseport", "accept4(4, 0x", 2),
        ("getent-nxdomain", "recvfrom(3, ", 2),
        ("dd-sysfs-bs1", "read(0, ", 10),
    ];
    for (name, shows, min) in cases {
        let x = dir.join(format!("{name}.excerpt.txt"));
        let text = std::fs::read_to_string(&x).expect("excerpt");
        let n = text.lines().filter(|l| l.contains(shows)).count();
        assert!(n >= *min, "{name}: the excerpt shows {n} lines with {shows:?}, not what makes it a near miss");
        for (p, kind) in [
            (x, syslint_report::BasisKind::Excerpt),
            (dir.join(format!("{name}.strace-c.txt")), syslint_report::BasisKind::Counts),
        ] {
            let r = analyze(&[&p]);
            assert_eq!(r.capture.basis.as_ref().map(|b| b.kind), Some(kind), "{}", p.display());
            let loud: Vec<String> = r
                .findings
                .iter()
                .filter(|f| f.severity >= Severity::Warning)
                .map(|f| format!("{} {}: {}", f.detector, f.severity.as_str(), f.message))
                .collect();
            assert!(loud.is_empty(), "{}: a near miss raised {loud:?}", p.display());
        }
    }
    // the dd lines read the sysfs file a byte at a time: what small-io would name elsewhere
    let dd = std::fs::read_to_string(dir.join("dd-sysfs-bs1.excerpt.txt")).unwrap();
    assert!(
        dd.lines().next().is_some_and(|l| l.contains("\"/sys/")),
        "dd: the excerpt starts at the open of the sysfs file"
    );
    // the resolver's answer is NXDOMAIN (flags 0x8183)
    let g = std::fs::read_to_string(dir.join("getent-nxdomain.excerpt.txt")).unwrap();
    assert!(g.contains("\\201\\203"), "getent: the answer is not NXDOMAIN");
}

/// A table pasted from a decimal-comma locale (Signal-Desktop#3171): every row is read, its
/// seconds with the comma as the decimal point, and a futex total over an Electron app's
/// threads is no finding (a summed table cannot tell a contended lock from waiting threads).
#[test]
fn a_decimal_comma_table_is_read_whole() {
    let p = root().join("tests/fixtures/pasted/signal-desktop-3171-strace-c-decimal-comma.txt");
    let r = analyze(&[&p]);
    let c = r.summary.counts.as_ref().expect("a table");
    assert_eq!(c.rows.len(), 19);
    assert_eq!(c.total_calls(), 525_409);
    let futex = c.row("futex").expect("futex");
    assert_eq!((futex.calls, futex.errors), (67_980, 4_679));
    assert!(futex.seconds.is_some_and(|s| (s - 74.425698).abs() < 1e-6), "{futex:?}");
    assert!(r.findings.iter().all(|f| f.severity < Severity::Warning), "{:#?}", r.findings);
}
