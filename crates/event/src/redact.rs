//! Payload bytes out of text that goes into reports: quoted strings become their length.
//! Evidence lines, and the samples of lines the reader could not read, pass through here, so
//! no report carries what a program read or wrote.

/// Replace the contents of quoted strings with their length: `"GET / HTTP/1.1\r\n"...`
/// becomes `"…16 bytes…"...`. Socket paths (`sun_path="..."`) stay: they are addresses.
pub fn redact(args: &str) -> String {
    let mut out = String::with_capacity(args.len().min(256));
    redact_into(args, &mut out);
    out
}

/// [`redact`] into an existing buffer. Jumps between quotes and escapes with `memchr`: it
/// runs for every evidence line a detector keeps, often one per request.
pub fn redact_into(args: &str, out: &mut String) {
    let b = args.as_bytes();
    let mut i = 0;
    let mut last = 0;
    while let Some(q) = memchr::memchr(b'"', &b[i..]) {
        let start = i + q;
        i = start + 1;
        let mut n = 0usize;
        loop {
            let Some(k) = memchr::memchr2(b'"', b'\\', &b[i..]) else {
                // unterminated: the rest is the string
                n += b.len() - i;
                i = b.len();
                break;
            };
            n += k;
            i += k;
            if b[i] == b'"' {
                break;
            }
            // \n, \x41, \101 each stand for one byte
            i += 1;
            if i < b.len() && b[i] == b'x' {
                i += 2;
            } else if i < b.len() && b[i].is_ascii_digit() {
                let mut k = 1;
                while k < 3 && i + 1 < b.len() && (b'0'..=b'7').contains(&b[i + 1]) {
                    i += 1;
                    k += 1;
                }
            }
            i += 1;
            n += 1;
            if i >= b.len() {
                i = b.len();
                break;
            }
        }
        // addresses are not payload: sun_path="...", inet_addr("..."), inet_pton(..., "...")
        let before = &args[..start];
        let keep = before.ends_with("sun_path=")
            || before.ends_with("sun_path=@")
            || before.ends_with("inet_addr(")
            || before.ends_with("AF_INET6, ")
            || before.ends_with("AF_INET, ");
        out.push_str(&args[last..start]);
        if keep {
            out.push_str(&args[start..(i + 1).min(args.len())]);
        } else {
            use std::fmt::Write;
            let _ = write!(out, "\"…{n} bytes…\"");
        }
        i = (i + 1).min(b.len());
        last = i;
    }
    out.push_str(&args[last..]);
}
