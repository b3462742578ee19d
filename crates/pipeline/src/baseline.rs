//! Baselines: findings accepted once (`--write-baseline FILE`) and then reported but not failed
//! on (`--baseline FILE`), so CI fails only on new ones.
//!
//! A baseline is TOML, one `[[finding]]` table per accepted problem, keyed by what stays the
//! same from run to run: the detector (`code`, with its `detector` name beside it) and the
//! finding's subject as data ([`syslint_report::Subject`]: `kind`, `program`, `name`: a program,
//! a file's path, an endpoint, a DNS name). Never process ids, timestamps or counts. A path's
//! random parts (a `mktemp` suffix, a number in `/proc/1234/`) are written as `*`, which matches
//! any text; hand-written entries may use `*` the same way.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use syslint_report::{Finding, Report, SubjectKind};

/// The baseline format this syslint writes and reads. A baseline of a newer version is refused
/// (its keys may mean something else), not half-read.
pub const BASELINE_VERSION: u32 = 1;

/// The largest baseline file read (one of 100,000 entries is about 10 MiB).
const MAX_BYTES: u64 = 64 << 20;

/// Why a baseline could not be read or written; every error names the file.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    #[error("cannot read baseline {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write baseline {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not a syslint baseline: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    #[error(
        "{}: baseline version {found} is newer than this syslint reads (version {BASELINE_VERSION}): upgrade syslint, or write the baseline again with --write-baseline",
        path.display()
    )]
    Newer { path: PathBuf, found: i64 },
}

/// One accepted finding.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The detector's code (`SL001`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The detector's name (`busy-poll`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detector: Option<String>,
    /// What the finding is about: `thread`, `program`, `file`, `endpoint`, `listener`, `name`,
    /// `address`, `lookups`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<SubjectKind>,
    /// The program (process name) it is in; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// The path, endpoint, listening address or DNS name; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// For a finding without a structured subject (a report of an older syslint): its subject
    /// text, process ids as `*`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: u32,
    #[serde(default, rename = "finding")]
    findings: Vec<Entry>,
}

/// Only the version, read first: a newer baseline is refused for what it is, not for a key
/// this version does not know.
#[derive(Deserialize)]
struct Head {
    version: Option<toml::Value>,
}

/// A loaded baseline.
#[derive(Debug, Clone, Default)]
pub struct Baseline {
    pub path: PathBuf,
    pub entries: Vec<Entry>,
}

impl Baseline {
    /// Read and check a baseline file.
    pub fn read(path: &Path) -> Result<Baseline, BaselineError> {
        use std::io::Read;
        let read = |source| BaselineError::Read { path: path.into(), source };
        let f = std::fs::File::open(path).map_err(read)?;
        let mut bytes = Vec::new();
        f.take(MAX_BYTES + 1).read_to_end(&mut bytes).map_err(read)?;
        let parse = |message: String| BaselineError::Parse { path: path.into(), message };
        if bytes.len() as u64 > MAX_BYTES {
            return Err(parse(format!("larger than {} MiB", MAX_BYTES >> 20)));
        }
        let text = std::str::from_utf8(&bytes).map_err(|e| {
            let at = crate::config::position(&String::from_utf8_lossy(&bytes[..e.valid_up_to()]), e.valid_up_to());
            parse(format!("{at}: not UTF-8 text"))
        })?;
        let entries = Baseline::parse(text).map_err(|e| match e {
            ParseError::Newer(found) => BaselineError::Newer { path: path.into(), found },
            ParseError::Bad(m) => parse(m),
        })?;
        Ok(Baseline { path: path.into(), entries })
    }

    fn parse(text: &str) -> Result<Vec<Entry>, ParseError> {
        let toml_error = |e: toml::de::Error| ParseError::Bad(e.to_string().trim().to_string());
        let head: Head = toml::from_str(text).map_err(toml_error)?;
        match head.version {
            None => return Err(ParseError::Bad("no `version` key (syslint --write-baseline FILE writes one)".into())),
            Some(toml::Value::Integer(v)) if v > BASELINE_VERSION as i64 => return Err(ParseError::Newer(v)),
            Some(toml::Value::Integer(v)) if v == BASELINE_VERSION as i64 => {}
            Some(v) => {
                return Err(ParseError::Bad(format!("unknown version {v} (this syslint reads {BASELINE_VERSION})")))
            }
        }
        let file: File = toml::from_str(text).map_err(toml_error)?;
        for (i, e) in file.findings.iter().enumerate() {
            if e.code.is_none() && e.detector.is_none() {
                return Err(ParseError::Bad(format!(
                    "[[finding]] number {} names no detector (code or detector)",
                    i + 1
                )));
            }
        }
        Ok(file.findings)
    }

    /// The entry accepting `f`, if any.
    pub fn accepts(&self, f: &Finding) -> bool {
        self.entries.iter().any(|e| matches(e, f))
    }

    /// Mark the report's findings this baseline accepts, and name the baseline in the report.
    /// Returns how many were marked.
    pub fn apply(&self, report: &mut Report) -> usize {
        let mut n = 0;
        for f in &mut report.findings {
            f.baselined = self.accepts(f);
            n += usize::from(f.baselined);
        }
        report.baseline = Some(self.path.display().to_string());
        n
    }
}

enum ParseError {
    Newer(i64),
    Bad(String),
}

/// The entry that accepts `f` (and findings like it in later runs).
pub fn entry_of(f: &Finding) -> Entry {
    let mut e = Entry { code: Some(f.code.clone()), detector: Some(f.detector.clone()), ..Entry::default() };
    match &f.about {
        Some(a) => {
            e.kind = Some(a.kind);
            e.program = a.program.clone();
            e.name = a.name.as_deref().map(|n| stable_name(a.kind, n));
        }
        None => e.subject = Some(syslint_report::diff::stable_subject(&f.subject)),
    }
    e
}

/// The baseline accepting every finding of `report`, as the text of a baseline file: sorted,
/// one entry per distinct key, so that two baselines diff line by line.
pub fn write_text(report: &Report) -> String {
    let mut entries: Vec<Entry> = report.findings.iter().map(entry_of).collect();
    entries.sort();
    entries.dedup();
    let body = toml::to_string(&File { version: BASELINE_VERSION, findings: entries }).unwrap_or_default();
    format!(
        "# syslint baseline: findings accepted as they are. `syslint analyze --baseline FILE` still\n\
         # lists them but does not fail on them; a finding of another detector or about another\n\
         # subject (program, path, endpoint, name) does. `*` in a value matches any text.\n{body}"
    )
}

/// Write the baseline of `report` to `path`.
pub fn write(report: &Report, path: &Path) -> Result<Baseline, BaselineError> {
    let text = write_text(report);
    let fail = |source| BaselineError::Write { path: path.into(), source };
    // written beside it and renamed into place: a failed write leaves the old baseline whole
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.syslint-{}.tmp", std::process::id()));
    let renamed = std::fs::write(&tmp, &text).and_then(|()| std::fs::rename(&tmp, path));
    if renamed.is_err() {
        std::fs::remove_file(&tmp).ok();
        // a directory one may not write in: the file itself, in place (the error, if any,
        // is about the file asked for)
        std::fs::write(path, &text).map_err(fail)?;
    }
    let entries = Baseline::parse(&text).unwrap_or_default();
    Ok(Baseline { path: path.into(), entries })
}

fn matches(e: &Entry, f: &Finding) -> bool {
    if e.code.as_ref().is_some_and(|c| !c.eq_ignore_ascii_case(&f.code)) {
        return false;
    }
    if e.detector.as_ref().is_some_and(|d| d != &f.detector) {
        return false;
    }
    let opt = |o: &Option<String>| o.as_deref().unwrap_or("").to_string();
    match (&f.about, &e.subject) {
        (_, Some(s)) => glob(s, &syslint_report::diff::stable_subject(&f.subject)),
        (Some(a), None) => {
            e.kind.is_none_or(|k| k == a.kind)
                && glob(&opt(&e.program), &opt(&a.program))
                && glob(&opt(&e.name), &opt(&a.name))
        }
        (None, None) => false,
    }
}

/// Whether `text` matches `pattern`, where `*` matches any text (also none) and every other
/// character itself.
pub fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    // the classic two-pointer match with backtracking to the last star: linear-ish, no recursion
    let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
    while j < t.len() {
        if i < p.len() && p[i] != '*' && p[i] == t[j] {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// A subject's name with what changes between runs of the same program written as `*`: in a
/// path, the random suffix of a `mktemp` name (`/tmp/app.W19gnl/` -> `/tmp/app.*/`) and numbers
/// standing alone (`/proc/1234/stat` -> `/proc/*/stat`). Endpoints, listeners and DNS names are
/// kept as they are: they are what the finding is about.
pub fn stable_name(kind: SubjectKind, name: &str) -> String {
    if !matches!(kind, SubjectKind::File) || !name.starts_with('/') {
        return name.to_string();
    }
    name.split('/')
        .map(|c| {
            if !c.is_empty() && c.bytes().all(|b| b.is_ascii_digit()) {
                return "*".to_string();
            }
            match c.rsplit_once('.') {
                Some((stem, suffix)) if !stem.is_empty() && random(suffix) => format!("{stem}.*"),
                _ => c.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Whether a name's suffix looks like `mktemp`'s `XXXXXX`: six or more letters and digits
/// mixing at least two of lower case, upper case and digits (`W19gnl`, not `config` or `1024`).
fn random(s: &str) -> bool {
    let classes = [
        s.bytes().any(|b| b.is_ascii_lowercase()),
        s.bytes().any(|b| b.is_ascii_uppercase()),
        s.bytes().any(|b| b.is_ascii_digit()),
    ];
    s.len() >= 6 && s.bytes().all(|b| b.is_ascii_alphanumeric()) && classes.iter().filter(|c| **c).count() >= 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use syslint_report::Subject;

    fn finding(code: &str, detector: &str, about: Subject) -> Finding {
        Finding { code: code.into(), detector: detector.into(), about: Some(about), ..Default::default() }
    }

    #[test]
    fn globs() {
        assert!(glob("*", ""));
        assert!(glob("/tmp/a.*/app.log", "/tmp/a.W19gnl/app.log"));
        assert!(!glob("/tmp/a.*/app.log", "/tmp/a.W19gnl/other.log"));
        assert!(glob("a*b*c", "aXXbYYc"));
        assert!(!glob("abc", "abcd"));
        assert!(glob("", ""));
        assert!(!glob("", "x"));
    }

    #[test]
    fn names_drop_what_changes_between_runs() {
        let f = |n| stable_name(SubjectKind::File, n);
        assert_eq!(f("/tmp/syslint-lab-smallio.W19gnl/app.log"), "/tmp/syslint-lab-smallio.*/app.log");
        assert_eq!(f("/proc/1234/stat"), "/proc/*/stat");
        assert_eq!(f("/etc/app.config"), "/etc/app.config");
        assert_eq!(f("/var/lib/db.backup"), "/var/lib/db.backup");
        assert_eq!(stable_name(SubjectKind::Endpoint, "10.0.0.1:5432"), "10.0.0.1:5432");
    }

    #[test]
    fn an_entry_accepts_the_same_problem_and_no_other() {
        let spin = finding("SL001", "busy-poll", Subject::new(SubjectKind::Thread).program(Some("spin")));
        let file = finding(
            "SL006",
            "small-io",
            Subject::new(SubjectKind::File).program(Some("python3")).name("/tmp/x.W19gnl/app.log"),
        );
        let report = Report {
            version: 1,
            tool: Default::default(),
            capture: Default::default(),
            summary: Default::default(),
            findings: vec![spin.clone(), file.clone(), spin.clone()],
            timeline: None,
            baseline: None,
        };
        let text = write_text(&report);
        let entries = Baseline::parse(&text).ok().unwrap();
        assert_eq!(entries.len(), 2, "{text}");
        let b = Baseline { path: "b.toml".into(), entries };
        assert!(b.accepts(&spin) && b.accepts(&file));
        // the same file in a run with another temporary directory
        let mut moved = file.clone();
        moved.about = Some(Subject::new(SubjectKind::File).program(Some("python3")).name("/tmp/x.Q7zzP1/app.log"));
        assert!(b.accepts(&moved));
        // another program, another detector, another file: not accepted
        let other = finding("SL001", "busy-poll", Subject::new(SubjectKind::Thread).program(Some("java")));
        assert!(!b.accepts(&other));
        let mut other_detector = spin.clone();
        other_detector.code = "SL017".into();
        other_detector.detector = "yield-spin".into();
        assert!(!b.accepts(&other_detector));
        let mut other_file = file;
        other_file.about = Some(Subject::new(SubjectKind::File).program(Some("python3")).name("/var/log/app.log"));
        assert!(!b.accepts(&other_file));
    }

    #[test]
    fn bad_baselines_are_refused_with_where_and_why() {
        let bad = |t: &str| match Baseline::parse(t) {
            Err(ParseError::Bad(m)) => m,
            Err(ParseError::Newer(v)) => format!("newer {v}"),
            Ok(_) => panic!("{t:?} was accepted"),
        };
        assert!(bad("{\"version\": 1}").contains("line 1"), "{}", bad("{\"version\": 1}"));
        assert!(bad("[[finding]]\ncode = \"SL001\"\n").contains("no `version`"));
        assert_eq!(bad("version = 2\n[[finding]]\nwhatever = 1\n"), "newer 2");
        assert!(bad("version = \"one\"\n").contains("unknown version"));
        let e = bad("version = 1\n[[finding]]\ncode = \"SL001\"\nprogam = \"x\"\n");
        assert!(e.contains("line 4") && e.contains("progam"), "{e}");
        assert!(bad("version = 1\n[[finding]]\nprogram = \"x\"\n").contains("names no detector"));
        let e = bad("version = 1\n[[finding]]\ncode = \"SL001\"\nkind = \"galaxy\"\n");
        assert!(e.contains("line 4") && e.contains("galaxy"), "{e}");
    }
}
