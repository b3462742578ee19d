//! Reports cannot attack their reader (issue 29, items 3 and 4). A real program
//! (tests/fixtures/programs/hostile.py, recorded by record-hostile.sh) renamed itself with
//! terminal escape codes (an OSC title, a screen clear, a BEL) and looked up files in directories
//! named with Markdown and HTML: an image that would load a tracking pixel, a link, a heading
//! with an <img> tag, a bare www address and e-mail address, an OSC 52 clipboard write. syslint
//! names it (failed-lookup-storm, with the program's name and the worst directory in the
//! finding), and every format shows all of it as text: no control character reaches a terminal,
//! no markup renders in a pull-request comment.

use crate::common::*;

fn hostile() -> String {
    fixture("hostile.f-tt-T-yy.strace.gz").display().to_string()
}

/// Characters a terminal or a viewer acts on: C0 controls but newline, DEL, C1, bidi marks.
fn acting(out: &str) -> Vec<(usize, char)> {
    out.char_indices()
        .filter(|&(_, c)| {
            (c < ' ' && c != '\n')
                || c == '\x7f'
                || ('\u{80}'..='\u{9f}').contains(&c)
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)
        })
        .collect()
}

/// Markup of the program's choosing that would render: an HTML tag, an image, a link, a bare
/// address GitHub turns into a link, a heading.
fn live_markup(md: &str) -> Vec<String> {
    let mut bad = Vec::new();
    for needle in ["<img", "![x]", "[click](", "](http", "www.evil", "a@evil", "```\"", "\n# heading"] {
        // an occurrence right after a backslash is escaped: it renders as text
        if md.match_indices(needle).any(|(i, _)| !md[..i].ends_with('\\')) {
            bad.push(needle.to_string());
        }
    }
    bad
}

#[test]
fn every_format_shows_a_hostile_program_as_text() {
    let log = hostile();
    // the log holds what the program chose, in strace's own escapes
    let text = read_text(std::path::Path::new(&log));
    assert!(text.contains(r#"prctl(PR_SET_NAME, "\33]0;PWN\7\33[2J")"#), "the fixture lost the rename");
    for format in ["table", "markdown", "html", "json"] {
        let o = run(&["analyze", "--format", format, &log]);
        assert!(matches!(o.status.code(), Some(0 | 1)), "{format}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(out.contains("failed-lookup-storm"), "{format}: the finding is gone:\n{out}");
        assert_eq!(acting(&out), vec![], "analyze --format {format} writes characters a terminal acts on");
        let d = run(&["diff", "--format", format, &log, &log]);
        assert!(matches!(d.status.code(), Some(0 | 1)), "diff {format}: {}", stderr(&d));
        assert_eq!(acting(&stdout(&d)), vec![], "diff --format {format} writes characters a terminal acts on");
    }
    // the table writes them out the way strace and a C string would
    let table = stdout(&run(&["analyze", &log]));
    assert!(table.contains(r"\e]0;PWN\x07\e[2J"), "the program's name, written out:\n{table}");
    assert!(table.contains(r"/tmp/\e]52;c;cHduZWQ=\x07"), "the clipboard write, written out:\n{table}");
}

#[test]
fn markdown_reports_render_the_programs_markup_as_text() {
    let log = hostile();
    let md = stdout(&run(&["analyze", "--format", "markdown", &log]));
    assert_eq!(live_markup(&md), Vec::<String>::new(), "markup of the program's choosing renders:\n{md}");
    // and it is there, escaped: the reader sees what the program named
    for escaped in [
        r"\<img src=x onerror=alert\(1\)\>",
        r"\!\[x\]\(http:%2F%2Fevil.example%2Fp.png\)",
        r"www\.evil.example a\@evil.example",
    ] {
        assert!(md.contains(escaped), "{escaped} missing:\n{md}");
    }
    // a diff of two reports carries every free-text field of both
    let json = std::env::temp_dir().join(format!("syslint-inert-{}.json", std::process::id()));
    let o = run(&["analyze", "--format", "json", "--output-file", json.to_str().unwrap(), &log]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let d = stdout(&run(&["diff", "--format", "markdown", json.to_str().unwrap(), &log]));
    let _ = std::fs::remove_file(&json);
    assert_eq!(live_markup(&d), Vec::<String>::new(), "markup renders in the diff:\n{d}");
}
