//! SARIF 2.1.0 (OASIS), for code-scanning tools (GitHub code scanning, GitLab, IDE viewers):
//! each finding whose call sites reach the user's own source becomes a result on that line.
//!
//! Such tools place a result on a file of the repository and reject one without a location,
//! so a finding is written only when one of its call sites has a frame with a source file
//! under `root` (the repository: the working directory unless `--source-root` says otherwise)
//! and a line: strace `-kk` gives file:line where the program has debug info, and so does
//! `syslint trace`'s eBPF unwinder. The frame chosen is the innermost such frame of the call
//! site with most calls; frames of the other call sites in the repository become related
//! locations. Findings left out are counted in the run's properties, and said on stderr by
//! the CLI.
//!
//! The fingerprint (`partialFingerprints["syslint/v1"]`) is the detector, what the finding is
//! about (its `about`, without process ids, else its subject) and the function of the chosen
//! frame: the same problem in the same function keeps its fingerprint across runs, so a
//! code-scanning tool tracks it as one alert, while a fix that moves the spin elsewhere shows
//! as the old alert fixed and a new one.

use crate::{CallSite, Finding, Report, Severity, StackFrame};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

/// Where a finding is in the repository: the frame's file relative to the root, its line and
/// function.
struct Place {
    uri: String,
    line: u32,
    function: Option<String>,
}

/// `file` relative to `root` when it is inside it; `None` for a file elsewhere (the C
/// library's sources, a system header) or one that climbs out with `..`. A relative name
/// (debug info written relative to a build directory: glibc's `elf/dl-load.c`, a reproducible
/// build's) counts only where the root has that file.
fn in_repo(file: &str, root: &Path) -> Option<String> {
    let p = Path::new(file);
    let rel: PathBuf = if p.is_absolute() {
        p.strip_prefix(root).ok()?.to_path_buf()
    } else if root.join(p).is_file() {
        p.to_path_buf()
    } else {
        return None;
    };
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_str()?.to_string()),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// A path as a URI's path: bytes other than letters, digits, `-._~` and `/` percent-encoded
/// (a space, `#`, `%`, non-ASCII).
fn uri_path(p: &str) -> String {
    let mut o = String::with_capacity(p.len());
    for b in p.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            o.push(b as char);
        } else {
            o.push_str(&format!("%{b:02X}"));
        }
    }
    o
}

fn place(f: &StackFrame, root: &Path) -> Option<Place> {
    let line = f.line.filter(|&l| l > 0)?;
    let uri = uri_path(&in_repo(f.file.as_deref()?, root)?);
    Some(Place { uri, line, function: f.symbol.clone() })
}

/// The innermost frame of `site` in the repository, from its owner frame outward.
fn site_place(site: &CallSite, root: &Path) -> Option<Place> {
    let start = site.owner.unwrap_or(0);
    site.frames.iter().skip(start).chain(site.frames.iter().take(start)).find_map(|f| place(f, root))
}

fn location(p: &Place, message: Option<String>) -> Value {
    let mut loc = json!({
        "physicalLocation": {
            "artifactLocation": { "uri": p.uri, "uriBaseId": "SRCROOT" },
            "region": { "startLine": p.line }
        }
    });
    if let Some(f) = &p.function {
        loc["logicalLocations"] = json!([{ "name": f, "kind": "function" }]);
    }
    if let Some(m) = message {
        loc["message"] = json!({ "text": m });
    }
    loc
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

fn fingerprint(f: &Finding, p: &Place) -> String {
    let about = match &f.about {
        Some(a) => {
            let kind =
                serde_json::to_value(a.kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            format!("{kind}:{}:{}", a.program.as_deref().unwrap_or(""), a.name.as_deref().unwrap_or(""))
        }
        None => f.subject.clone(),
    };
    format!("{}|{}|{}", f.detector, about, p.function.as_deref().unwrap_or(&p.uri))
}

fn result(f: &Finding, rule: usize, root: &Path) -> Option<Value> {
    // the call site with most calls that reaches the repository leads
    let mut sites = f.call_sites.iter().filter_map(|s| site_place(s, root).map(|p| (s, p)));
    let (lead, p) = sites.next()?;
    let related: Vec<Value> = sites
        .take(4)
        .enumerate()
        .map(|(i, (s, q))| {
            let mut l = location(&q, Some(format!("{:.0}% of its calls", s.share * 100.0)));
            l["id"] = json!(i + 1);
            l
        })
        .collect();
    let mut text = format!("{}: {}", f.detector, f.message);
    if lead.share < 0.995 {
        text.push_str(&format!(" ({:.0}% of its calls come from here)", lead.share * 100.0));
    }
    let mut r = json!({
        "ruleId": f.code,
        "ruleIndex": rule,
        "level": level(f.severity),
        "message": { "text": text },
        "locations": [location(&p, None)],
        "partialFingerprints": { "syslint/v1": fingerprint(f, &p) },
        "properties": { "subject": f.subject, "fix": f.fix }
    });
    if let Some(c) = &f.cost {
        r["properties"]["cost"] = json!(c);
    }
    if let Some(i) = &f.impact {
        r["properties"]["share"] = json!(i.share);
    }
    if !related.is_empty() {
        r["relatedLocations"] = json!(related);
    }
    Some(r)
}

/// Write the SARIF log; returns how many findings were left out (no call site reaches a file
/// under `root`).
pub fn print(r: &Report, root: &Path, out: &mut dyn Write) -> io::Result<usize> {
    // one rule per detector that found something here, in code order
    let mut rules: BTreeMap<&str, &Finding> = BTreeMap::new();
    for f in &r.findings {
        rules.entry(f.code.as_str()).or_insert(f);
    }
    let index: BTreeMap<&str, usize> = rules.keys().enumerate().map(|(i, c)| (*c, i)).collect();
    let results: Vec<Value> =
        r.findings.iter().filter_map(|f| result(f, index.get(f.code.as_str()).copied().unwrap_or(0), root)).collect();
    let left_out = r.findings.len() - results.len();
    let rules: Vec<Value> = rules
        .values()
        .map(|f| {
            json!({
                "id": f.code,
                "name": f.detector,
                "shortDescription": { "text": format!("syslint {}", f.detector) },
                "help": { "text": format!("syslint explain {}", f.detector) },
                "defaultConfiguration": { "level": "warning" }
            })
        })
        .collect();
    let mut root_uri = uri_path(&root.to_string_lossy());
    if !root_uri.ends_with('/') {
        root_uri.push('/');
    }
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "syslint",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules
            }},
            "originalUriBaseIds": { "SRCROOT": { "uri": format!("file://{root_uri}") } },
            "results": results,
            "properties": { "findings": r.findings.len(), "findingsWithoutSourceLocation": left_out }
        }]
    });
    super::json::write_value(&doc, out)?;
    Ok(left_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_under_the_root_are_the_repositorys() {
        let root = Path::new("/srv/app");
        assert_eq!(in_repo("/srv/app/src/main.c", root).as_deref(), Some("src/main.c"));
        assert_eq!(in_repo("/srv/app/./src/x.c", root).as_deref(), Some("src/x.c"));
        assert_eq!(in_repo("/usr/src/glibc/poll.c", root), None);
        assert_eq!(in_repo("/srv/app/../etc/passwd", root), None, "climbs out");
        assert_eq!(in_repo("/srv/application/x.c", root), None, "a sibling with the root's name as prefix");
        assert_eq!(in_repo("/srv/app", root), None, "the root itself is no file");
        // relative names count where the root has the file
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert_eq!(in_repo("src/printers/sarif.rs", here).as_deref(), Some("src/printers/sarif.rs"));
        assert_eq!(in_repo("elf/dl-load.c", here), None);
    }

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(uri_path("/home/me/my app/#1/ü.c"), "/home/me/my%20app/%231/%C3%BC.c");
        assert_eq!(uri_path("src/a-b_c.d~e.rs"), "src/a-b_c.d~e.rs");
    }
}
