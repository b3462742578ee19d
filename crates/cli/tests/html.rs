//! The HTML report in a real browser (Debian's chromium, headless): the page loads with no
//! console message, makes no network request, shows the findings and draws the timeline.
//! The checker itself is tried on a page that breaks every rule, so it cannot pass by
//! seeing nothing.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) fn chromium() -> Option<&'static str> {
    for c in ["chromium", "chromium-browser", "google-chrome"] {
        if Command::new("sh").args(["-c", &format!("command -v {c}")]).output().is_ok_and(|o| o.status.success()) {
            return Some(c);
        }
    }
    eprintln!("NOTE: chromium is not installed: the browser tests cannot run (scripts/test.sh installs it)");
    assert!(std::env::var_os("CI").is_none(), "chromium missing in CI");
    None
}

pub(crate) struct Loaded {
    /// The DOM after loading.
    pub dom: String,
    /// Console messages the page produced.
    pub console: Vec<String>,
    /// URLs the page asked the network for (the browser's own background requests excluded).
    pub requests: Vec<String>,
}

/// Load `page` headless; collect console messages (chromium logs them on stderr) and the
/// page's network requests (from a net log: requests whose initiator is the page's origin).
pub(crate) fn load(browser: &str, page: &Path, dir: &Path) -> Loaded {
    load_with(browser, page, dir, &[])
}

/// [`load`] with more flags for chromium (a page that imports modules from files, one whose
/// scripts run after the load event and need virtual time to finish before the DOM is dumped).
pub(crate) fn load_with(browser: &str, page: &Path, dir: &Path, flags: &[&str]) -> Loaded {
    let netlog = dir.join("net.json");
    let out = Command::new("timeout")
        .arg("120")
        .arg(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            "--disable-extensions",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--log-net-log={}", netlog.display()))
        .args(flags)
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    assert!(out.status.success(), "chromium failed: {}", stderr(&out));
    let console = stderr(&out).lines().filter(|l| l.contains(":CONSOLE")).map(str::to_string).collect();
    let log: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&netlog).expect("net log")).expect("net log is JSON");
    let mut requests = Vec::new();
    for e in log["events"].as_array().expect("events") {
        let p = &e["params"];
        if let (Some(url), Some(init)) = (p["url"].as_str(), p["initiator"].as_str()) {
            // the browser's own requests (update checks, ...) have no origin
            if init != "not an origin" {
                requests.push(url.to_string());
            }
        }
    }
    requests.sort();
    requests.dedup();
    Loaded { dom: stdout(&out), console, requests }
}

pub(crate) fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("syslint-html-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("tmp dir");
    d
}

/// What any syslint page must satisfy, read from the file itself.
fn static_rules(html: &str) {
    for bad in ["<script", "<link", "<img", "<iframe", "@import", "url(", " src=", "https://"] {
        assert!(!html.contains(bad), "page contains {bad:?}");
    }
    // the only http:// is the SVG namespace, which names and loads nothing
    assert_eq!(html.matches("http://").count(), html.matches("http://www.w3.org/2000/svg").count());
    assert!(html.contains("Content-Security-Policy"));
}

/// `syslint analyze --format html` of `trace` into `dir/name`: the page, read back and held to
/// the static rules (analyze exits 1: the lab traces have findings).
fn analyze_page(dir: &Path, name: &str, trace: &Path) -> (PathBuf, String) {
    let page = dir.join(name);
    let out = run(&[
        "analyze",
        "--format",
        "html",
        "--output-file",
        page.to_str().expect("path"),
        trace.to_str().expect("path"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).expect("page");
    static_rules(&html);
    (page, html)
}

#[test]
fn checker_sees_console_errors_and_requests() {
    let Some(b) = chromium() else { return };
    let dir = tmp("control");
    let page = dir.join("bad.html");
    // a request to a closed loopback port and a script error: both must be seen
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><p>x</p><img src=\"http://127.0.0.1:9/x.png\"><script>nope();</script></body></html>",
    )
    .expect("write");
    let l = load(b, &page, &dir);
    assert!(l.console.iter().any(|c| c.contains("nope is not defined")), "{:?}", l.console);
    assert!(l.requests.iter().any(|u| u == "http://127.0.0.1:9/x.png"), "{:?}", l.requests);
}

#[test]
fn analyze_page_loads_clean_and_shows_the_herd() {
    let Some(b) = chromium() else { return };
    let dir = tmp("herd");
    let (page, html) = analyze_page(&dir, "herd.html", &lab_variant("accept-herd", "c-procs", "f-tt-T-yy"));
    assert!(html.len() < 400_000, "page of {} bytes", html.len());
    let l = load(b, &page, &dir);
    assert!(l.console.is_empty(), "console: {:?}", l.console);
    assert!(l.requests.is_empty(), "requests: {:?}", l.requests);
    // the finding, with its evidence, in the rendered page
    assert!(l.dom.contains("data-finding=\"accept-herd\""));
    assert!(l.dom.contains("EAGAIN"));
    // one lane per worker and the listening parent, with drawn activity and failed accepts
    // (in the page-wide timeline; the zoomed levels and the finding's window draw them again)
    let base = &l.dom[l.dom.find("id=\"tl-x1\"").expect("page-wide timeline")..];
    let base = &base[..base.find("</svg>").expect("its svg")];
    assert_eq!(base.matches("class=\"lane\"").count(), 5, "lanes");
    assert!(base.matches("class=\"errors\"").count() >= 4, "failed calls drawn");
    assert!(base.matches("class=\"busy\"").count() >= 5, "time inside syscalls drawn");
    assert!(l.dom.matches("class=\"latency\"").count() >= 4, "latency charts");
    assert!(l.dom.contains("data-syscall=\"accept4\""));
}

#[test]
fn diff_page_tells_the_fix() {
    let Some(b) = chromium() else { return };
    let dir = tmp("diff");
    let page = dir.join("diff.html");
    let bad = lab_variant("busy-poll", "c-poll0", "f-tt-T-yy");
    let good = lab_variant("busy-poll", "c-timeout", "f-tt-T-yy");
    let out = run(&[
        "diff",
        "--format",
        "html",
        "--output-file",
        page.to_str().expect("path"),
        bad.to_str().expect("path"),
        good.to_str().expect("path"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).expect("page");
    static_rules(&html);
    let l = load(b, &page, &dir);
    assert!(l.console.is_empty(), "console: {:?}", l.console);
    assert!(l.requests.is_empty(), "requests: {:?}", l.requests);
    assert!(l.dom.contains("improved: busy-poll fixed"), "verdict");
    assert!(l.dom.contains("data-finding=\"busy-poll\" data-status=\"fixed\""));
    // both runs drawn; the spinning one has dense calls, the fixed one blocks
    let before =
        &l.dom[l.dom.find("data-side=\"before\"").expect("before")..l.dom.find("data-side=\"after\"").expect("after")];
    let after = &l.dom[l.dom.find("data-side=\"after\"").expect("after")..];
    assert!(before.contains("class=\"lane\"") && after.contains("class=\"lane\""));
    assert!(before.contains("(spin): 9,917 calls"), "spinning lane with its calls");
    assert!(after.contains("(spin): 51 calls") && !after.contains("(spin): 9,"), "the fixed run blocks");
    // the poll latency before and after, side by side
    assert_eq!(l.dom.matches("data-syscall=\"poll\"").count(), 2);
}

#[test]
fn page_without_timestamps_says_why_there_is_no_timeline() {
    let dir = tmp("plain");
    let (_, html) = analyze_page(&dir, "plain.html", &lab_variant("busy-poll", "c-poll0", "f"));
    assert!(html.contains("No timeline: the trace has no timestamps"));
    assert!(html.contains("No durations"));
    assert!(!html.contains("class=\"lane\""));
}

/// A screenshot of `page` (with a `#fragment` or none) in a window taller than the page, so
/// nothing scrolls: what differs between two is what the page shows, not where it is scrolled.
fn screenshot(browser: &str, page: &Path, fragment: &str, dir: &Path) -> Vec<u8> {
    let png = dir.join(format!("shot-{}.png", fragment.trim_start_matches('#')));
    let out = Command::new("timeout")
        .arg("120")
        .arg(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1280,9000"])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}{fragment}", page.display()))
        .output()
        .expect("run chromium");
    assert!(out.status.success(), "chromium failed: {}", stderr(&out));
    std::fs::read(&png).expect("screenshot")
}

#[test]
fn a_finding_links_to_its_window_and_the_timeline_zooms() {
    let dir = tmp("zoom");
    let (page, html) = analyze_page(&dir, "poll.html", &lab_variant("busy-poll", "c-poll0", "f-tt-T-yy"));
    // the card links to its window's view, the view and the timeline's mark back to the card
    let card = &html[html.find("data-finding=\"busy-poll\"").expect("card")..];
    assert!(card.contains("href=\"#win-0\">its window on the timeline</a>"), "{}", &card[..800]);
    let view = &html[html.find("id=\"win-0\"").expect("window view")..];
    assert!(view.contains("SL001 busy-poll") && view.contains("href=\"#f-0\""));
    assert!(html.contains("<a href=\"#win-0\"><title>SL001 busy-poll</title>"), "the mark is a link");
    // zoom levels for the spin's 191 bins
    assert!(html.contains("<a href=\"#tl-x4\">4x</a>") && html.contains("id=\"tl-x4\""));
    let Some(b) = chromium() else { return };
    // what a user sees changes with the link followed; a fragment naming nothing changes
    // nothing, and the same page twice is the same picture (so a difference means something)
    let plain = screenshot(b, &page, "", &dir);
    assert_eq!(plain, screenshot(b, &page, "", &dir), "rendering is deterministic");
    assert_eq!(plain, screenshot(b, &page, "#nothing", &dir), "an unknown fragment shows the same page");
    let window = screenshot(b, &page, "#win-0", &dir);
    let zoomed = screenshot(b, &page, "#tl-x4", &dir);
    assert_ne!(plain, window, "following the finding's link shows its window");
    assert_ne!(plain, zoomed, "4x replaces the page-wide timeline");
    assert_ne!(window, zoomed);
}
