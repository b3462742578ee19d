//! Generates each detector's config struct from the options block of its docs.
//!
//! A detector's thresholds are data in `src/detectors/<name>.md`: the ```toml block under its
//! `## Options` heading, one `[[option]]` table per option, in the order `syslint explain` lists
//! them:
//!
//! ```toml
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
//! A default that must follow a constant of the code is a Rust constant expression instead,
//! `default_expr = "MIN_WAIT_NS / 1_000_000"`, with its `type`. For each file this writes
//! `$OUT_DIR/options/<name>.rs`: the struct `Config` (serde, unknown keys refused, missing keys
//! defaulted), its `Default` and `OPTIONS`, the list `Meta::options` holds; the detector
//! includes it with `crate::options!("<name>");`. The options are kept beside the prose that
//! explains them, and declared once. A block that does not read fails the build with the file,
//! the option and the problem.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const HEADING: &str = "## Options";

fn main() {
    let dir = Path::new("src/detectors");
    println!("cargo:rerun-if-changed={}", dir.display());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("options");
    std::fs::create_dir_all(&out).unwrap_or_else(|e| fail(&[format!("{}: {e}", out.display())]));
    let mut docs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| fail(&[format!("{}: {e}", dir.display())]))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    let mut errors = Vec::new();
    for md in &docs {
        let generated = std::fs::read_to_string(md)
            .map_err(|e| e.to_string())
            .and_then(|text| options_block(&text))
            .and_then(|(line, block)| {
                parse(&block).map_err(|e| format!("the options block (```toml at line {line}): {e}"))
            })
            .map(|options| generate(md, &options));
        match generated {
            Ok(code) => {
                let stem = md.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
                let path = out.join(format!("{stem}.rs"));
                // rewritten only when it changed, so that an edit of the prose alone does not
                // make the generated file look new
                if std::fs::read_to_string(&path).ok().as_deref() != Some(code.as_str()) {
                    if let Err(e) = std::fs::write(&path, code) {
                        errors.push(format!("{}: {e}", path.display()));
                    }
                }
            }
            Err(e) => errors.push(format!("{}: {e}", md.display())),
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
    eprintln!("(a detector's options are the ```toml block under `{HEADING}` in its .md: see crates/analyze/build.rs)");
    std::process::exit(1)
}

/// The text of the ```toml block under the `## Options` heading, and the line it starts on.
fn options_block(md: &str) -> Result<(usize, String), String> {
    let lines: Vec<&str> = md.lines().collect();
    let headings: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].trim_end() == HEADING).collect();
    let at = match headings[..] {
        [at] => at,
        [] => return Err(format!("no `{HEADING}` section (without options: an empty ```toml block)")),
        _ => return Err(format!("`{HEADING}` stands {} times", headings.len())),
    };
    let section_end = (at + 1..lines.len()).find(|&i| lines[i].starts_with("## ")).unwrap_or(lines.len());
    let fence = (at + 1..section_end)
        .find(|&i| lines[i].starts_with("```"))
        .ok_or_else(|| format!("no ```toml block under `{HEADING}`"))?;
    if lines[fence].trim_end() != "```toml" {
        return Err(format!("line {}: the options block opens with ```toml, not {}", fence + 1, lines[fence]));
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

/// The options of a block, in order.
fn parse(block: &str) -> Result<Vec<Opt>, String> {
    let table: toml::Table = block.parse().map_err(|e: toml::de::Error| e.to_string().trim().to_string())?;
    if let Some(k) = table.keys().find(|k| *k != "option") {
        return Err(format!("unknown key `{k}` (each option is an [[option]] table)"));
    }
    let list = match table.get("option") {
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
    if let Some(k) = t.keys().find(|k| !["name", "type", "default", "default_expr", "meaning"].contains(&k.as_str())) {
        return Err(format!("unknown key `{k}` (name, type, default or default_expr, meaning)"));
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
    Ok(Opt { name, ty, default, meaning })
}

/// The code `include!`d by `crate::options!`: what the macro used to expand to. Each meaning
/// keeps the leading space a `///` line gave it, so `OPTIONS` holds the same bytes as before.
fn generate(md: &Path, options: &[Opt]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "// Generated by crates/analyze/build.rs from {}: edit the options there.", md.display());
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
            "    crate::registry::OptionDoc {{ name: {:?}, meaning: {:?} }},",
            o.name,
            format!(" {}", o.meaning)
        );
    }
    s.push_str("];\n");
    s
}
