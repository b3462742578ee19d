//! `-k`/`-kk` stack frames: the lines strace prints after a call (and after a signal), one per
//! frame, innermost first. The shapes (strace's src/unwind.c, print_call_cb and
//! sprint_call_or_error; the same in 6.x and 7.x):
//!
//! ```text
//!  > %s(%s+0x%lx) [0x%lx]          module(symbol+offset) [offset in the module's file]
//!  > %s(%s+0x%lx) [0x%lx] %s:%d    the same with its source line (-kk, libdw builds)
//!  > %s() [0x%lx]                  no symbol known
//!  > %s [0x%lx]                    the unwinder's error at an address (unexpected_backtracing_error)
//!  > %s                            the unwinder's error (too many stack frames, libdw's messages)
//! ```
//!
//! A symbol may be demangled with its parameters (`ns::f(int)+0x12`): the module ends at the
//! first `(`, the symbol at the last `+0x` before `) [0x`.
//!
//! The parser holds each line of a `-k` log until the lines after it are read: a call's
//! frames come right after the call's line (or its `<... resumed>` line), never interleaved
//! with another process's lines (strace prints them as the call returns), so the call is
//! handed on with its stack.

use super::*;
use syslint_event::{Frame, StackId, StackTable};

/// A `-k` frame line: ` > ` then what strace printed.
#[inline]
pub(super) fn is_frame_line(line: &str) -> bool {
    line.as_bytes().starts_with(b" > ")
}

/// The frame a line (without its ` > `) stands for; `None` when it is garbled.
pub(super) fn parse_frame(t: &str) -> Option<Frame> {
    let t = t.trim_end();
    if t.is_empty() {
        return None;
    }
    let Some(open) = t.find('(') else {
        if t.starts_with('/') {
            // a module's path cut before its `(`: no unwinder's message starts so
            return None;
        }
        // the unwinder's error, at an address or not
        let (error, addr) = match t.rsplit_once(" [0x") {
            Some((e, a)) => (e, hex(a.strip_suffix(']')?)?),
            None => (t, 0),
        };
        return Some(Frame { addr, error: Some(error.to_string()), ..Default::default() });
    };
    let module = &t[..open];
    // `) [0x...]`, then ` file:line` under -kk
    let close = t.rfind(") [0x")?;
    if close < open {
        return None;
    }
    let after = &t[close + 5..];
    let end = after.find(']')?;
    let addr = hex(&after[..end])?;
    let src = after[end + 1..].strip_prefix(' ');
    let (file, line) = match src {
        Some(s) => {
            let (f, l) = s.rsplit_once(':')?;
            (Some(f.to_string()), Some(l.parse::<u32>().ok()?))
        }
        None if after[end + 1..].is_empty() => (None, None),
        None => return None,
    };
    let inner = &t[open + 1..close];
    let (symbol, offset) = if inner.is_empty() {
        (None, 0)
    } else {
        let plus = inner.rfind("+0x")?;
        let sym = &inner[..plus];
        (Some(sym).filter(|s| !s.is_empty()).map(str::to_string), hex(&inner[plus + 3..])?)
    };
    Some(Frame { addr, module: Some(module.to_string()), symbol, offset, file, line, error: None })
}

fn hex(s: &str) -> Option<u64> {
    let s = s.strip_prefix("0x").unwrap_or(s);
    (!s.is_empty()).then(|| u64::from_str_radix(s, 16).ok()).flatten()
}

/// A line held back until the frames after it are read.
pub(super) struct Held {
    pub(super) line: String,
    pub(super) line_no: u64,
    pub(super) pid_hint: Option<Tid>,
}

/// The stacks of a `-k` log being read.
#[derive(Default)]
pub(super) struct Stacks {
    pub(super) table: StackTable,
    /// Frame lines already interned: the same line is the same frame.
    by_text: HashMap<Box<str>, u32>,
    /// The frames read after the held line, innermost first.
    frames: Vec<u32>,
    pub(super) held: Option<Held>,
    /// The buffer of the last line released, for the next one held.
    pub(super) spare: String,
    /// A frame of the current stack was not kept (the table was full): the stack is not kept.
    lost: bool,
    /// Stacks that followed no line this reader holds (the log's first lines, a signal's).
    pub(super) unattached: u64,
}

impl Stacks {
    /// Add a frame line (without its ` > `) to the stack being read; `false` when it is garbled.
    pub(super) fn frame(&mut self, text: &str) -> bool {
        if let Some(&i) = self.by_text.get(text) {
            self.frames.push(i);
            return true;
        }
        let Some(f) = parse_frame(text) else { return false };
        match self.table.frame(f) {
            Some(i) => {
                if self.by_text.len() < StackTable::MAX_FRAMES {
                    self.by_text.insert(text.into(), i);
                }
                self.frames.push(i);
            }
            None => self.lost = true,
        }
        true
    }

    /// The stack read since the last line, interned (and the reading begun again).
    pub(super) fn take(&mut self) -> Option<StackId> {
        if self.frames.is_empty() && !self.lost {
            return None;
        }
        let s = if self.lost {
            self.table.dropped_stacks += 1;
            None
        } else {
            self.table.stack(&self.frames)
        };
        self.frames.clear();
        self.lost = false;
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // lines copied from recordings: ../shared/strace-corpus/stacktrace-k-f-t-2025-strace6.strace,
    // tests/fixtures/stacks/traces/deep.f-kk-tt-T.strace7-libdw.strace.gz (strace 7.2, libdw, -kk)
    #[test]
    fn frames_read_as_strace_prints_them() {
        let f =
            parse_frame("/tmp/syslint-stacks/app/spin(wait_for_reply+0x32) [0x12f2] /tmp/syslint-stacks/app/spin.c:33")
                .unwrap();
        assert_eq!((f.symbol.as_deref(), f.offset, f.addr), (Some("wait_for_reply"), 0x32, 0x12f2));
        assert_eq!((f.file.as_deref(), f.line), (Some("/tmp/syslint-stacks/app/spin.c"), Some(33)));
        let f = parse_frame("no matching address range").unwrap();
        assert_eq!((f.error.as_deref(), f.module), (Some("no matching address range"), None));
        let f = parse_frame("/usr/lib/ld-linux-x86-64.so.2(_dl_catch_exception+0xa6) [0x2456]").unwrap();
        assert_eq!(f.module.as_deref(), Some("/usr/lib/ld-linux-x86-64.so.2"));
        assert_eq!((f.symbol.as_deref(), f.offset, f.addr), (Some("_dl_catch_exception"), 0xa6, 0x2456));
        let f = parse_frame("/usr/lib/ld-linux-x86-64.so.2() [0x1eb40]").unwrap();
        assert_eq!((f.symbol.as_deref(), f.addr), (None, 0x1eb40));
        assert!(f.is_runtime());
    }

    #[test]
    fn the_other_shapes_of_unwind_c() {
        // the other formats of strace's src/unwind.c, filled in by hand: no program recorded
        // here makes strace print them, so they stand for what those formats give: a demangled
        // C++ symbol with its parameters and a source line, libunwind's error at an address,
        // the frame limit's message
        let f = parse_frame("/srv/a.out(ns::f(int)+0x1f) [0x1139] /srv/a.c:12").unwrap();
        assert_eq!(f.symbol.as_deref(), Some("ns::f(int)"));
        assert_eq!((f.file.as_deref(), f.line), (Some("/srv/a.c"), Some(12)));
        let f = parse_frame("unexpected_backtracing_error [0x7f1c2a3b4c5d]").unwrap();
        assert_eq!((f.error.as_deref(), f.addr), (Some("unexpected_backtracing_error"), 0x7f1c2a3b4c5d));
        assert_eq!(parse_frame("too many stack frames").unwrap().error.as_deref(), Some("too many stack frames"));
    }

    #[test]
    fn garbled_frames_are_refused() {
        for t in [
            "/usr/lib/libc.so.6(read+0x12",
            "/lib/x.so(read+0xzz) [0x10]",
            "/lib/x.so(read) [0x10]",
            "",
            "x [0xq]",
            "/usr/lib/x86_64-linux-gnu/l",
        ] {
            assert!(parse_frame(t).is_none(), "{t}");
        }
    }
}
