//! Printers only read a [`Report`](crate::Report); they never compute findings.

pub mod diff;
pub mod html;
pub mod json;
pub mod markdown;
pub mod table;

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
    fn formats() {
        assert_eq!(fmt_count(1234567), "1,234,567");
        assert_eq!(fmt_count(12), "12");
        assert_eq!(fmt_secs(0.0123), "12.3ms");
        assert_eq!(fmt_secs(2.5e-6), "2.5us");
        assert_eq!(fmt_bytes(1536), "1.5 KiB");
    }
}
