//! Printers only read a [`Report`](crate::Report); they never compute findings.

pub mod diff;
pub mod html;
pub mod json;
pub mod markdown;
pub mod sarif;
pub mod table;

/// `s` with every character a terminal or a text viewer would act on written out instead: ESC
/// as `\e`, other C0 controls and DEL as `\xNN` (tab, newline and carriage return as `\t`, `\n`,
/// `\r`: a field must not start a line of its own), C1 controls and the invisible bidi and
/// zero-width marks as `\u{NNNN}`. What a traced program chose (its name after
/// `prctl(PR_SET_NAME)`, a path, a payload in a `-yy` decoration) reaches the reader as data: no
/// title set, no screen cleared, no clipboard written through OSC 52, no line reordered.
pub fn inert_text(s: &str) -> std::borrow::Cow<'_, str> {
    fn acts(c: char) -> bool {
        matches!(c, '\0'..='\x1f' | '\x7f' | '\u{80}'..='\u{9f}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
    }
    if !s.chars().any(acts) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\x1b' => out.push_str("\\e"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c <= '\x1f' || c == '\x7f' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if acts(c) => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A copy of `x` (a report, a diff) whose every string went through `f` (map keys through
/// [`inert_text`] alone, since field names are keys too): the
/// printers then cannot forget a field, today's or one added later. Falls back to `x` itself
/// only if the copy does not read back, which the tests hold never happens.
pub fn with_strings<T: serde::Serialize + serde::de::DeserializeOwned + Clone>(x: &T, f: &dyn Fn(&str) -> String) -> T {
    fn walk(v: serde_json::Value, f: &dyn Fn(&str) -> String) -> serde_json::Value {
        use serde_json::Value;
        match v {
            Value::String(s) => Value::String(f(&s)),
            Value::Array(a) => Value::Array(a.into_iter().map(|v| walk(v, f)).collect()),
            // keys are field names too, which must read back: only control characters go
            // (a map keyed by the log's text, errno names, is escaped where it is printed)
            Value::Object(m) => {
                Value::Object(m.into_iter().map(|(k, v)| (inert_text(&k).into_owned(), walk(v, f))).collect())
            }
            v => v,
        }
    }
    serde_json::to_value(x)
        .ok()
        .map(|v| walk(v, f))
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_else(|| x.clone())
}

/// Seconds as a short human string: `1.23s`, `45.6ms`, `789us`, `12ns`.
/// A duration that may not have been measured: `-` then.
pub fn fmt_opt_secs(s: Option<f64>) -> String {
    s.map_or_else(|| "-".into(), fmt_secs)
}

pub fn fmt_secs(s: f64) -> String {
    let a = s.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 100.0 {
        format!("{s:.0}s")
    } else if a >= 1.0 {
        format!("{s:.2}s")
    } else if a >= 1e-3 {
        format!("{:.1}ms", s * 1e3)
    } else if a >= 1e-6 {
        format!("{:.1}us", s * 1e6)
    } else {
        format!("{:.0}ns", s * 1e9)
    }
}

/// A value under 1 to three significant digits: `0.0118`, `0.800`.
pub fn sig3(v: f64) -> String {
    let digits = (2 - v.log10().floor() as i32).clamp(1, 9) as usize;
    format!("{v:.digits$}")
}

/// A share of a whole as a percentage: `0.06%`, `2.4%`, `37%` (`0%` for none).
pub fn fmt_share(x: f64) -> String {
    let p = x * 100.0;
    if p == 0.0 {
        "0%".into()
    } else if p >= 10.0 {
        format!("{p:.0}%")
    } else if p >= 1.0 {
        format!("{p:.1}%")
    } else {
        format!("{p:.2}%")
    }
}

/// A count with thousands separators: 1234567 -> `1,234,567`.
pub fn fmt_count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes with a binary unit: `512 B`, `4.0 KiB`, `1.5 MiB`.
pub fn fmt_bytes(n: u64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut i = 0;
    while v >= 1024.0 && i < U.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", U[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_written_out() {
        assert_eq!(inert_text("plain /tmp/a b"), "plain /tmp/a b");
        assert_eq!(inert_text("\x1b]0;PWN\x07\x1b[2J"), r"\e]0;PWN\x07\e[2J");
        assert_eq!(inert_text("a\nb\tc\rd\x7f"), r"a\nb\tc\rd\x7f");
        assert_eq!(inert_text("\u{9b}31m \u{202e}cod"), r"\u{009b}31m \u{202e}cod");
    }

    #[test]
    fn markdown_text_renders_as_itself() {
        use super::markdown::inert;
        assert_eq!(inert("1.5 ms, 3/4 of calls"), "1.5 ms, 3/4 of calls");
        assert_eq!(inert("![x](http://e/p.png)"), r"\!\[x\]\(http\://e/p.png\)");
        assert_eq!(inert("<img src=x>"), r"\<img src=x\>");
        assert_eq!(inert("see www.e.org or a@b.c | x"), r"see www\.e.org or a\@b.c \| x");
        assert_eq!(inert("`code` *b* _i_ # h"), r"\`code\` \*b\* \_i\_ \# h");
    }
    #[test]
    fn formats() {
        assert_eq!(fmt_count(1234567), "1,234,567");
        assert_eq!(fmt_count(12), "12");
        assert_eq!(fmt_secs(0.0123), "12.3ms");
        assert_eq!(fmt_secs(2.5e-6), "2.5us");
        assert_eq!(fmt_bytes(1536), "1.5 KiB");
    }
}
