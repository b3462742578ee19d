//! Generates each detector's declaration from its docs: the metadata, the events it asks for
//! and its options are data in `src/detectors/<name>.md`, written once, beside the prose that
//! explains them.
//!
//! The title line gives the name, the code and the summary: `# fsync-storm (SL008): a flush to
//! disk after every small write or record ...` (the name is the file's, kebab-case; the code `SL`
//! and three digits, no two detectors sharing one). The ```toml block under the `## Declaration`
//! heading (the last section, after `## Example`, where `syslint explain` stops reading) gives
//! the rest, with the names of the code's variants and constants:
//!
//! ```toml
//! category = "Filesystem"     # a variant of registry::Category: Cpu, Network, Filesystem, Io
//! status = "Stable"           # Stable (on by default) or Preview (only with --select)
//!
//! [cost]                      # registry::CostModel
//! metric = "sync_time_s"      # the metric with the seconds a fix saves; none: no cost in seconds
//! model = "the time inside the flushes beyond what batching them would need"
//!
//! [interest]                  # registry::Interest: what the detector is handed
//! syscalls = ["Fsync", "Fdatasync"]   # variants of syslint_event::Sys
//! classes = ["WRITE"]         # constants of syslint_event::Class
//! exits = true                # also all_syscalls, aliases, notes; false when left out
//!
//! [limits]                    # how much it keeps or looks at, at most (constants of the code)
//! MAX_FILES = { value = 1024, meaning = "files remembered per program" }
//!
//! [levels]                    # registry::Levels: the excerpt and counts rules in words
//! excerpt = "at least 4 fsync/fdatasync calls on one fd ..."   # or why there is none
//! counts = "fsync/fdatasync at least 100 ..."                  # (no table: full traces only)
//! table = ["every-syscall", "errors"]  # what a table must have for the counts rule to run
//!
//! [[option]]
//! name = "min_spins"          # the key in syslint.toml, and the field
//! default = 200               # its type follows: integer u64, float f64, bool, String, array Vec
//! meaning = "spins a window needs to be reported"
//!
//! [[option]]
//! name = "max_other_calls"
//! type = "u32"                # any other type is named
//! default = 16
//! meaning = "this many other calls in a row end a window"
//! ```
//!
//! One `[[option]]` table per option, in the order `syslint explain` lists them. A default that
//! must follow a constant of the code is a Rust constant expression instead,
//! `default_expr = "MIN_WAIT_NS / 1_000_000"`, with its `type`.
//!
//! For each file this writes `$OUT_DIR/detectors/<name>.rs`: the struct `Config` (serde, unknown
//! keys refused, missing keys defaulted), its `Default`, `OPTIONS` (the list `Meta::options`
//! holds) and the static `META`. The detector includes it with one line,
//! `crate::detector!("<name>", Type { cfg })` (see the macro in `src/registry.rs`), which adds its
//! registry `ENTRY`. What does not read fails the build with the file and the problem: a title
//! that is not `# <name> (<code>): <summary>` or names another file, a code taken by another
//! detector, an unknown key, a value of the wrong kind, an option declared twice. The names of
//! variants and constants are written into the code as they are, so a misspelt one fails to
//! compile, in the generated file, whose first line names the `.md` to edit.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const HEADING: &str = "## Declaration";

fn main() {
    let dir = Path::new("src/detectors");
    println!("cargo:rerun-if-changed={}", dir.display());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("detectors");
    std::fs::create_dir_all(&out).unwrap_or_else(|e| fail(&[format!("{}: {e}", out.display())]));
    let mut docs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| fail(&[format!("{}: {e}", dir.display())]))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    let mut errors = Vec::new();
    // each code and the file that took it first
    let mut codes: Vec<(String, PathBuf)> = Vec::new();
    for md in &docs {
        let stem = md.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let declared = std::fs::read_to_string(md).map_err(|e| e.to_string()).and_then(|text| declaration(stem, &text));
        let decl = match declared {
            Ok(d) => d,
            Err(e) => {
                errors.push(format!("{}: {e}", md.display()));
                continue;
            }
        };
        if let Some((_, first)) = codes.iter().find(|(c, _)| *c == decl.code) {
            errors.push(format!("{}: line 1: the code {} is taken, by {}", md.display(), decl.code, first.display()));
            continue;
        }
        codes.push((decl.code.clone(), md.clone()));
        let code = generate(md, stem, &decl);
        let path = out.join(format!("{stem}.rs"));
        // rewritten only when it changed, so that an edit of the prose alone does not make the
        // generated file look new
        if std::fs::read_to_string(&path).ok().as_deref() != Some(code.as_str()) {
            if let Err(e) = std::fs::write(&path, code) {
                errors.push(format!("{}: {e}", path.display()));
            }
        }
    }
    if !errors.is_empty() {
        fail(&errors);
    }
}

/// Every problem found, one line each, then the build stops.
fn fail(errors: &[String]) -> ! {
    for e in errors {
        eprintln!("error: {e}");
    }
    eprintln!(
        "(a detector is declared by the title of its .md and the ```toml block under `{HEADING}`: see crates/analyze/build.rs)"
    );
    std::process::exit(1)
}

/// A detector's declaration, as the generated code needs it.
struct Decl {
    name: String,
    code: String,
    summary: String,
    category: String,
    status: String,
    metric: Option<String>,
    model: String,
    syscalls: Vec<String>,
    classes: Vec<String>,
    /// `all_syscalls`, `exits`, `aliases`, `notes`, in this order.
    flags: [bool; 4],
    /// The excerpt and counts rules in words, when declared, and what the counts rule needs of
    /// a table (`every-syscall`, `errors`).
    levels: Option<(String, String, [bool; 2])>,
    /// `usize` constants of the detector's module: (name, value, meaning).
    limits: Vec<(String, i64, String)>,
    options: Vec<Opt>,
}

const FLAGS: [&str; 4] = ["all_syscalls", "exits", "aliases", "notes"];

/// The declaration of the detector whose docs are `md` (the file `<stem>.md`).
fn declaration(stem: &str, md: &str) -> Result<Decl, String> {
    let (name, code, summary) = title(stem, md).map_err(|e| format!("line 1: {e}"))?;
    let (line, block) = declaration_block(md)?;
    let at = |e: String| format!("the declaration (```toml at line {line}): {e}");
    let table: toml::Table = block.parse().map_err(|e: toml::de::Error| at(e.to_string().trim().to_string()))?;
    if let Some(k) = table
        .keys()
        .find(|k| !["category", "status", "cost", "interest", "limits", "levels", "option"].contains(&k.as_str()))
    {
        return Err(at(format!(
            "unknown key `{k}` (category, status, [cost], [interest], [limits], [levels], [[option]])"
        )));
    }
    let category = variant(&table, "category", "a variant of registry::Category (Cpu, Network, ...)").map_err(at)?;
    let status = variant(&table, "status", "Stable or Preview").map_err(at)?;
    let cost = sub_table(&table, "cost").map_err(at)?;
    if let Some(k) = cost.keys().find(|k| !["metric", "model"].contains(&k.as_str())) {
        return Err(at(format!("[cost]: unknown key `{k}` (metric, model)")));
    }
    let metric = match cost.get("metric") {
        None => None,
        Some(toml::Value::String(m)) if is_ident(m, char::is_ascii_lowercase) => Some(m.clone()),
        Some(v) => return Err(at(format!("[cost]: the metric {v} is not a snake_case metric key"))),
    };
    let model = match cost.get("model") {
        Some(toml::Value::String(m)) if !m.trim().is_empty() => m.clone(),
        _ => return Err(at("[cost]: no `model` (what the seconds a fix saves are, in words)".into())),
    };
    let interest = sub_table(&table, "interest").map_err(at)?;
    if let Some(k) =
        interest.keys().find(|k| !["syscalls", "classes"].contains(&k.as_str()) && !FLAGS.contains(&k.as_str()))
    {
        return Err(at(format!("[interest]: unknown key `{k}` (syscalls, classes, {})", FLAGS.join(", "))));
    }
    let syscalls =
        names(&interest, "syscalls", char::is_ascii_uppercase, "a variant of syslint_event::Sys (Fsync, ...)")
            .map_err(at)?;
    let classes =
        names(&interest, "classes", char::is_ascii_uppercase, "a constant of syslint_event::Class (WRITE, ...)")
            .map_err(at)?;
    if classes.iter().any(|c| c.chars().any(|ch| ch.is_ascii_lowercase())) {
        return Err(at("[interest]: classes are named in capitals (WRITE, POLL)".into()));
    }
    let mut flags = [false; 4];
    for (flag, key) in flags.iter_mut().zip(FLAGS) {
        match interest.get(key) {
            None => {}
            Some(toml::Value::Boolean(b)) => *flag = *b,
            Some(v) => return Err(at(format!("[interest]: `{key}` is {v}, not true or false"))),
        }
    }
    let levels = match table.get("levels") {
        None => None,
        Some(toml::Value::Table(t)) => {
            if let Some(k) = t.keys().find(|k| !["excerpt", "counts", "table"].contains(&k.as_str())) {
                return Err(at(format!("[levels]: unknown key `{k}` (excerpt, counts, table)")));
            }
            let mut needs = [false; 2];
            match t.get("table") {
                None => {}
                Some(toml::Value::Array(a)) => {
                    for v in a {
                        match v.as_str() {
                            Some("every-syscall") => needs[0] = true,
                            Some("errors") => needs[1] = true,
                            _ => return Err(at(format!("[levels] table: {v} is not \"every-syscall\" or \"errors\""))),
                        }
                    }
                }
                Some(v) => return Err(at(format!("[levels] table is {v}, not a list"))),
            }
            let text = |key: &str| match t.get(key) {
                Some(toml::Value::String(v)) if !v.trim().is_empty() => Ok(v.clone()),
                _ => Err(at(format!("[levels]: no `{key}` (the rule in words, or why there is none)"))),
            };
            Some((text("excerpt")?, text("counts")?, needs))
        }
        Some(v) => return Err(at(format!("[levels] is {v}, not a table"))),
    };
    let mut limits = Vec::new();
    for (k, v) in sub_table(&table, "limits").map_err(at)? {
        if !is_ident(&k, char::is_ascii_uppercase) || k.chars().any(|c| c.is_ascii_lowercase()) {
            return Err(at(format!("[limits]: `{k}` is not a constant's name (MAX_FILES)")));
        }
        let t = match v {
            toml::Value::Table(t) => t,
            v => return Err(at(format!("[limits]: {k} is {v}, not {{ value = N, meaning = \"...\" }}"))),
        };
        if let Some(x) = t.keys().find(|x| !["value", "meaning"].contains(&x.as_str())) {
            return Err(at(format!("[limits]: {k}: unknown key `{x}` (value, meaning)")));
        }
        let value = match t.get("value") {
            Some(toml::Value::Integer(i)) if *i >= 0 => *i,
            _ => return Err(at(format!("[limits]: {k}: no `value`, a whole number of 0 or more"))),
        };
        let meaning = match t.get("meaning") {
            Some(toml::Value::String(m)) if !m.trim().is_empty() => m.clone(),
            _ => return Err(at(format!("[limits]: {k}: no `meaning` (what it bounds)"))),
        };
        limits.push((k, value, meaning));
    }
    let options = parse(table.get("option")).map_err(at)?;
    Ok(Decl { name, code, summary, category, status, metric, model, syscalls, classes, flags, limits, levels, options })
}

/// Name, code and summary from the title line, `# <name> (<code>): <summary>`, checked: the
/// name is the file's, the code `SL` and three digits.
fn title(stem: &str, md: &str) -> Result<(String, String, String), String> {
    let line = md.lines().next().unwrap_or_default();
    let form = || format!("the title `{line}` is not `# <name> (<code>): <summary>`");
    let rest = line.strip_prefix("# ").ok_or_else(form)?;
    let (name, rest) = rest.split_once(" (").ok_or_else(form)?;
    let (code, summary) = rest.split_once("): ").ok_or_else(form)?;
    let own = stem.replace('_', "-");
    if name != own {
        return Err(format!("the title names `{name}`, but the file {stem}.md is the docs of `{own}`"));
    }
    let digits = code.strip_prefix("SL").unwrap_or_default();
    if digits.len() != 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("the code `{code}` is not SL and three digits (SL024)"));
    }
    if summary.trim().is_empty() || summary.trim() != summary {
        return Err("the summary after the code is empty, or has spaces around it".into());
    }
    Ok((name.to_string(), code.to_string(), summary.to_string()))
}

/// Whether `s` is a Rust identifier starting with a character `first` accepts.
fn is_ident(s: &str, first: fn(&char) -> bool) -> bool {
    s.chars().next().is_some_and(|c| first(&c)) && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A variant name (`Filesystem`) under `key`.
fn variant(t: &toml::Table, key: &str, what: &str) -> Result<String, String> {
    match t.get(key) {
        Some(toml::Value::String(s)) if is_ident(s, char::is_ascii_uppercase) => Ok(s.clone()),
        Some(v) => Err(format!("`{key}` is {v}, not {what}")),
        None => Err(format!("no `{key}` ({what})")),
    }
}

/// The table `[key]`, empty when left out.
fn sub_table(t: &toml::Table, key: &str) -> Result<toml::Table, String> {
    match t.get(key) {
        None => Ok(toml::Table::new()),
        Some(toml::Value::Table(t)) => Ok(t.clone()),
        Some(_) => Err(format!("`{key}` is not a table ([{key}])")),
    }
}

/// A list of names (`syscalls = ["Fsync", "Close"]`) under `key`, none twice.
fn names(t: &toml::Table, key: &str, first: fn(&char) -> bool, what: &str) -> Result<Vec<String>, String> {
    let list = match t.get(key) {
        None => return Ok(Vec::new()),
        Some(toml::Value::Array(a)) => a,
        Some(_) => return Err(format!("[interest]: `{key}` is not a list")),
    };
    let mut out: Vec<String> = Vec::new();
    for v in list {
        match v {
            toml::Value::String(s) if is_ident(s, first) => {
                if out.contains(s) {
                    return Err(format!("[interest]: `{s}` stands twice in `{key}`"));
                }
                out.push(s.clone());
            }
            _ => return Err(format!("[interest]: {v} in `{key}` is not {what}")),
        }
    }
    Ok(out)
}

/// The text of the ```toml block under the `## Declaration` heading, and the line it starts on.
fn declaration_block(md: &str) -> Result<(usize, String), String> {
    let lines: Vec<&str> = md.lines().collect();
    let headings: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].trim_end() == HEADING).collect();
    let at = match headings[..] {
        [at] => at,
        [] => return Err(format!("no `{HEADING}` section (the last one, after `## Example`)")),
        _ => return Err(format!("`{HEADING}` stands {} times", headings.len())),
    };
    let section_end = (at + 1..lines.len()).find(|&i| lines[i].starts_with("## ")).unwrap_or(lines.len());
    let fence = (at + 1..section_end)
        .find(|&i| lines[i].starts_with("```"))
        .ok_or_else(|| format!("no ```toml block under `{HEADING}`"))?;
    if lines[fence].trim_end() != "```toml" {
        return Err(format!("line {}: the declaration opens with ```toml, not {}", fence + 1, lines[fence]));
    }
    let close = (fence + 1..section_end)
        .find(|&i| lines[i].trim_end() == "```")
        .ok_or_else(|| format!("line {}: the ```toml block is not closed", fence + 1))?;
    let mut block = String::new();
    for l in &lines[fence + 1..close] {
        block.push_str(l);
        block.push('\n');
    }
    Ok((fence + 1, block))
}

/// One option as the generated code needs it.
struct Opt {
    name: String,
    ty: Ty,
    /// The default as a Rust expression.
    default: String,
    meaning: String,
    /// An amount the trace accumulates (bytes, seconds, calls), not a share or a rate: a window
    /// cut short by its bound of records meets it at the rate it saw (`registry::Stretch`).
    amount: bool,
}

/// The types an option may have.
enum Ty {
    Int(&'static str),
    Float(&'static str),
    Bool,
    Str,
    Vec(Box<Ty>),
}

const INTS: [&str; 10] = ["u8", "u16", "u32", "u64", "usize", "i8", "i16", "i32", "i64", "isize"];

impl Ty {
    fn parse(s: &str) -> Option<Ty> {
        let s = s.trim();
        if let Some(inner) = s.strip_prefix("Vec<").and_then(|r| r.strip_suffix('>')) {
            return match Ty::parse(inner)? {
                Ty::Vec(_) => None,
                t => Some(Ty::Vec(Box::new(t))),
            };
        }
        match s {
            "f32" => Some(Ty::Float("f32")),
            "f64" => Some(Ty::Float("f64")),
            "bool" => Some(Ty::Bool),
            "String" => Some(Ty::Str),
            _ => INTS.iter().copied().find(|t| *t == s).map(Ty::Int),
        }
    }

    /// The type a default's TOML value says without a `type`.
    fn of(v: &toml::Value) -> Option<Ty> {
        match v {
            toml::Value::Integer(_) => Some(Ty::Int("u64")),
            toml::Value::Float(_) => Some(Ty::Float("f64")),
            toml::Value::Boolean(_) => Some(Ty::Bool),
            toml::Value::String(_) => Some(Ty::Str),
            toml::Value::Array(a) => match Ty::of(a.first()?)? {
                Ty::Vec(_) => None,
                t => Some(Ty::Vec(Box::new(t))),
            },
            _ => None,
        }
    }

    fn rust(&self) -> String {
        match self {
            Ty::Int(t) | Ty::Float(t) => (*t).to_string(),
            Ty::Bool => "bool".into(),
            Ty::Str => "String".into(),
            Ty::Vec(t) => format!("Vec<{}>", t.rust()),
        }
    }

    /// The value as a Rust expression of this type.
    fn literal(&self, v: &toml::Value) -> Result<String, String> {
        let wrong = || Err(format!("the default {v} is no {}", self.rust()));
        Ok(match (self, v) {
            (Ty::Int(t), toml::Value::Integer(i)) => {
                if !int_fits(t, *i) {
                    return Err(format!("the default {i} does not fit in {t}"));
                }
                grouped(*i)
            }
            (Ty::Float(_), toml::Value::Float(f)) if f.is_finite() => format!("{f:?}"),
            (Ty::Float(_), toml::Value::Integer(i)) => format!("{:?}", *i as f64),
            (Ty::Bool, toml::Value::Boolean(b)) => b.to_string(),
            (Ty::Str, toml::Value::String(s)) => format!("String::from({s:?})"),
            (Ty::Vec(t), toml::Value::Array(a)) => {
                let items: Result<Vec<String>, String> = a.iter().map(|x| t.literal(x)).collect();
                format!("vec![{}]", items?.join(", "))
            }
            _ => return wrong(),
        })
    }
}

fn int_fits(t: &str, i: i64) -> bool {
    match t {
        "u8" => u8::try_from(i).is_ok(),
        "u16" => u16::try_from(i).is_ok(),
        "u32" => u32::try_from(i).is_ok(),
        "u64" | "usize" => u64::try_from(i).is_ok(),
        "i8" => i8::try_from(i).is_ok(),
        "i16" => i16::try_from(i).is_ok(),
        "i32" => i32::try_from(i).is_ok(),
        _ => true,
    }
}

/// An integer with its digits in groups of three (`67_108_864`), as the code writes them.
fn grouped(i: i64) -> String {
    let digits = i.unsigned_abs().to_string();
    if digits.len() <= 4 {
        return i.to_string();
    }
    let mut s = String::new();
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            s.push('_');
        }
        s.push(c);
    }
    if i < 0 {
        s.insert(0, '-');
    }
    s
}

/// Keywords a field cannot be named.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "box", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false",
    "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "static", "struct", "super", "trait", "true", "try", "type", "unsafe", "use", "where", "while", "yield",
];

/// The options (the `[[option]]` tables), in order.
fn parse(list: Option<&toml::Value>) -> Result<Vec<Opt>, String> {
    let list = match list {
        None => return Ok(Vec::new()),
        Some(toml::Value::Array(a)) => a,
        Some(_) => return Err("`option` is not a list of [[option]] tables".into()),
    };
    let mut out: Vec<Opt> = Vec::new();
    for (n, v) in list.iter().enumerate() {
        let toml::Value::Table(t) = v else { return Err(format!("option {} is not a table", n + 1)) };
        let opt = option(t).map_err(|e| {
            let name = t.get("name").and_then(toml::Value::as_str);
            format!("option {}{}: {e}", n + 1, name.map(|s| format!(" `{s}`")).unwrap_or_default())
        })?;
        if out.iter().any(|o| o.name == opt.name) {
            return Err(format!("option `{}` is declared twice", opt.name));
        }
        out.push(opt);
    }
    Ok(out)
}

fn option(t: &toml::Table) -> Result<Opt, String> {
    if let Some(k) =
        t.keys().find(|k| !["name", "type", "default", "default_expr", "meaning", "amount"].contains(&k.as_str()))
    {
        return Err(format!("unknown key `{k}` (name, type, default or default_expr, meaning, amount)"));
    }
    let text = |k: &str| -> Result<Option<&str>, String> {
        match t.get(k) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(format!("`{k}` is not a string")),
        }
    };
    let name = text("name")?.ok_or("no `name`")?.to_string();
    let ident = name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !ident || KEYWORDS.contains(&name.as_str()) {
        return Err(format!("the name `{name}` is not a snake_case field name"));
    }
    let meaning = text("meaning")?.unwrap_or_default().trim().to_string();
    if meaning.is_empty() {
        return Err("no `meaning` (what the option decides, as `syslint explain` prints it)".into());
    }
    let declared = match text("type")? {
        Some(s) => Some(Ty::parse(s).ok_or_else(|| {
            format!("unknown type `{s}` (one of {}, f32, f64, bool, String, or a Vec of one)", INTS.join(", "))
        })?),
        None => None,
    };
    let (ty, default) = match (t.get("default"), text("default_expr")?) {
        (Some(v), None) => {
            let ty = match declared {
                Some(ty) => ty,
                None => {
                    Ty::of(v).ok_or_else(|| format!("the type of the default {v} is not plain: give its `type`"))?
                }
            };
            let lit = ty.literal(v)?;
            (ty, lit)
        }
        (None, Some(e)) => (declared.ok_or("a `default_expr` needs its `type`")?, e.trim().to_string()),
        (Some(_), Some(_)) => return Err("both `default` and `default_expr`".into()),
        (None, None) => return Err("no `default`".into()),
    };
    let amount = match t.get("amount") {
        None => false,
        Some(toml::Value::Boolean(b)) => *b,
        Some(_) => return Err("`amount` is not true or false".into()),
    };
    if amount && !matches!(ty, Ty::Int(_) | Ty::Float(_)) {
        return Err(format!("an `amount` is a number, not a {}", ty.rust()));
    }
    Ok(Opt { name, ty, default, meaning, amount })
}

/// The code `include!`d by `crate::detector!`. The config is what the `options!` macro used to
/// expand to: each meaning keeps the leading space a `///` line gave it, so `OPTIONS` holds the
/// same bytes as before; `META` is what each detector used to write out.
fn generate(md: &Path, stem: &str, d: &Decl) -> String {
    let options = &d.options;
    let mut s = String::new();
    let _ = writeln!(s, "// Generated by crates/analyze/build.rs from {}: edit the declaration there.", md.display());
    s.push_str("\n#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]\n");
    s.push_str("#[serde(default, deny_unknown_fields)]\npub struct Config {\n");
    for o in options {
        let _ = writeln!(s, "    #[doc = {:?}]\n    pub {}: {},", format!(" {}", o.meaning), o.name, o.ty.rust());
    }
    s.push_str("}\n\nimpl Default for Config {\n    fn default() -> Self {\n        Config {\n");
    for o in options {
        let _ = writeln!(s, "            {}: {},", o.name, o.default);
    }
    s.push_str("        }\n    }\n}\n\n/// The documented options, in declaration order.\n");
    s.push_str("pub const OPTIONS: &[crate::registry::OptionDoc] = &[\n");
    for o in options {
        let _ = writeln!(
            s,
            "    crate::registry::OptionDoc {{ name: {:?}, meaning: {:?}, amount: {} }},",
            o.name,
            format!(" {}", o.meaning),
            o.amount
        );
    }
    s.push_str("];\n\nimpl crate::registry::Stretch for Config {\n");
    let amounts: Vec<&Opt> = options.iter().filter(|o| o.amount).collect();
    let by = if amounts.is_empty() { "_by" } else { "by" };
    let _ = writeln!(s, "    fn stretch(&mut self, {by}: f64) {{");
    for o in amounts {
        let _ = writeln!(s, "        self.{0} = crate::registry::Amount::over(self.{0}, by);", o.name);
    }
    s.push_str("    }\n}\n\n/// The detector's declaration: the title and the declaration block of its docs.\n");
    s.push_str("pub static META: crate::registry::Meta = crate::registry::Meta {\n");
    let _ = writeln!(s, "    code: {:?},\n    name: {:?},", d.code, d.name);
    let _ = writeln!(s, "    category: crate::registry::Category::{},", d.category);
    let _ = writeln!(s, "    status: crate::registry::Status::{},", d.status);
    let _ = writeln!(s, "    summary: {:?},", d.summary);
    let _ = writeln!(
        s,
        "    docs: crate::registry::Docs::markdown(include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/src/detectors/{stem}.md\"))),"
    );
    s.push_str("    options: OPTIONS,\n");
    let metric = d.metric.as_ref().map_or("None".to_string(), |m| format!("Some({m:?})"));
    let _ = writeln!(s, "    cost: crate::registry::CostModel {{ metric: {metric}, model: {:?} }},", d.model);
    s.push_str("    interest: crate::registry::Interest {\n        syscalls: &[");
    let sys: Vec<String> = d.syscalls.iter().map(|n| format!("::syslint_event::Sys::{n}")).collect();
    let classes: Vec<String> = d.classes.iter().map(|n| format!("::syslint_event::Class::{n}")).collect();
    let _ = writeln!(s, "{}],\n        classes: &[{}],", sys.join(", "), classes.join(", "));
    for (flag, key) in d.flags.iter().zip(FLAGS) {
        let _ = writeln!(s, "        {key}: {flag},");
    }
    s.push_str("    },\n");
    match &d.levels {
        Some((excerpt, counts, [every_syscall, errors])) => {
            let _ = writeln!(
                s,
                "    levels: crate::registry::Levels {{ excerpt: {excerpt:?}, counts: {counts:?}, \
                 table: crate::registry::TableNeeds {{ every_syscall: {every_syscall}, errors: {errors} }} }},"
            );
        }
        None => s.push_str("    levels: crate::registry::Levels::NONE,\n"),
    }
    s.push_str("};\n");
    for (name, value, meaning) in &d.limits {
        let _ = writeln!(s, "\n#[doc = {:?}]\nconst {name}: usize = {};", format!(" {meaning}"), grouped(*value));
    }
    s
}
