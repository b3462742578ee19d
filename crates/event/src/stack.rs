//! Call sites: the user-space stack of a call, shared by every backend.
//!
//! A backend that knows where calls come from (strace `-k`/`-kk` frames, eBPF's sampled and
//! unwound stacks) interns each stack once in a [`StackTable`] per input and marks the call
//! with its [`StackId`] ([`crate::Pre::stack`]): a busy loop making the same call from the
//! same place a million times costs one entry. Frames are interned too (stacks share most of
//! theirs). Both are bounded ([`StackTable::MAX_STACKS`], [`StackTable::MAX_FRAMES`],
//! [`StackTable::MAX_DEPTH`]); what did not fit is counted, never silently lost.

use rustc_hash::FxHashMap as HashMap;

/// One interned stack of a [`StackTable`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StackId(pub u32);

/// One frame of a stack, innermost first in a stack: where the code was, in the words the
/// backend could give (a frame without a module or symbol is still a frame).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Frame {
    /// The address: strace prints the offset in the module's file (`[0x10a2b]`); an unwinder
    /// in this process may give the virtual address. 0 when unknown.
    pub addr: u64,
    /// The object the code is in (`/usr/lib/x86_64-linux-gnu/libc.so.6`, `/srv/app/spin`).
    pub module: Option<String>,
    /// The function, as printed (demangled when the backend demangles).
    pub symbol: Option<String>,
    /// Bytes from the start of `symbol`.
    pub offset: u64,
    /// Source file and line, where debug info gave them (`strace -kk`, DWARF).
    pub file: Option<String>,
    pub line: Option<u32>,
    /// What the unwinder said instead of a frame (`unexpected_backtracing_error`, `too many
    /// stack frames`): the stack is cut there.
    pub error: Option<String>,
}

impl Frame {
    /// JIT-compiled code named from the perf map its runtime wrote (`/tmp/perf-PID.map`: a
    /// Node JS function, a Java method): the program's own code, run by the runtime.
    pub fn is_jit(&self) -> bool {
        self.module.as_deref().is_some_and(|m| m.starts_with("/tmp/perf-") && m.ends_with(".map"))
    }

    /// JIT code of the runtime rather than of the program, named by its perf map: a Java
    /// platform class's method, a HotSpot stub or adapter (`Interpreter`, `StubRoutines (1)`),
    /// Node's own `node:` modules and V8's built-ins, Python's standard library
    /// ([`is_python_stdlib`]).
    pub fn is_runtime_jit(&self) -> bool {
        const PLATFORM: [&str; 5] = ["java.", "javax.", "jdk.", "sun.", "com.sun."];
        if !self.is_jit() {
            return false;
        }
        let Some(s) = &self.symbol else { return true };
        if let Some(file) = &self.file {
            // a JS function (or Python's) with its script
            return file.starts_with("node:") || is_python_stdlib(file);
        }
        // a Java method `pkg.Class.method(args)` (perf-map-agent: `pkg.Class::method`); what
        // is not one is the runtime's (`Builtin:...`, `I2C/C2I adapters`, `Interpreter`)
        let head = s.split('(').next().unwrap_or(s);
        head.contains(' ')
            || !(head.contains('.') || head.contains("::"))
            || PLATFORM.iter().any(|p| head.starts_with(p))
    }

    /// Whether this frame is in the C library, the dynamic loader, the vDSO or the thread
    /// library, or is the runtime's JIT code ([`Self::is_runtime_jit`]): code the program
    /// calls through, not code it owns (the call site a finding names first is the innermost
    /// frame outside these).
    pub fn is_runtime(&self) -> bool {
        if self.is_jit() {
            return self.is_runtime_jit();
        }
        let Some(m) = &self.module else { return self.error.is_some() };
        let base = m.rsplit('/').next().unwrap_or(m);
        base.starts_with("libc.so")
            || base.starts_with("libc-")
            || base.starts_with("ld-linux")
            || base.starts_with("ld-musl")
            || base.starts_with("libpthread")
            || base.starts_with("linux-vdso")
            || base.starts_with("[vdso]")
            || base == "vdso"
    }
}

/// Whether a Python function's file (as `-X perf` names it) is the interpreter's standard
/// library: a module under `lib/pythonX.Y/` outside `site-packages` and `dist-packages` (where
/// installed packages go, which the program chose), or a frozen module (`<frozen
/// importlib._bootstrap>`). `socket.create_connection` or `genericpath.exists` making the
/// calls is the runtime working for the program's function that called it.
pub fn is_python_stdlib(file: &str) -> bool {
    if file.starts_with("<frozen ") {
        return true;
    }
    let mut parts = file.split('/');
    while let Some(p) = parts.next() {
        if p != "lib" {
            continue;
        }
        let mut rest = parts.clone();
        let is_version = rest.next().and_then(|v| v.strip_prefix("python")).is_some_and(|v| {
            let mut n = v.split('.');
            let ok = |x: Option<&str>| x.is_some_and(|x| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit()));
            ok(n.next()) && ok(n.next()) && n.next().is_none()
        });
        if is_version {
            return !rest.any(|d| d == "site-packages" || d == "dist-packages");
        }
    }
    false
}

/// Stacks and frames of one input, interned and bounded.
#[derive(Clone, Debug, Default)]
pub struct StackTable {
    frames: Vec<Frame>,
    frame_ids: HashMap<Frame, u32>,
    stacks: Vec<Box<[u32]>>,
    stack_ids: HashMap<Box<[u32]>, StackId>,
    /// Calls whose stack was not kept: new stacks after [`Self::MAX_STACKS`], or stacks with a
    /// frame that did not fit in [`Self::MAX_FRAMES`].
    pub dropped_stacks: u64,
    /// Frames not kept (beyond [`Self::MAX_FRAMES`] distinct ones).
    pub dropped_frames: u64,
    /// Stacks cut at [`Self::MAX_DEPTH`] frames.
    pub truncated: u64,
}

impl StackTable {
    /// Distinct stacks kept per input.
    pub const MAX_STACKS: usize = 1 << 16;
    /// Distinct frames kept per input.
    pub const MAX_FRAMES: usize = 1 << 18;
    /// Frames kept per stack, innermost first (strace prints up to 256).
    pub const MAX_DEPTH: usize = 64;

    pub fn is_empty(&self) -> bool {
        self.stacks.is_empty() && self.dropped_stacks == 0
    }

    /// Distinct stacks kept.
    pub fn stacks(&self) -> usize {
        self.stacks.len()
    }

    /// Distinct frames kept.
    pub fn frames(&self) -> usize {
        self.frames.len()
    }

    /// The id of `frame`, interned; `None` when the table is full.
    pub fn frame(&mut self, frame: Frame) -> Option<u32> {
        if let Some(&i) = self.frame_ids.get(&frame) {
            return Some(i);
        }
        if self.frames.len() >= Self::MAX_FRAMES {
            self.dropped_frames += 1;
            return None;
        }
        let i = self.frames.len() as u32;
        self.frames.push(frame.clone());
        self.frame_ids.insert(frame, i);
        Some(i)
    }

    /// The frame `i` ([`Self::frame`]'s answer).
    pub fn frame_at(&self, i: u32) -> Option<&Frame> {
        self.frames.get(i as usize)
    }

    /// The id of the stack of frames `ids` (innermost first), interned; `None` for an empty
    /// stack or when the table is full (counted).
    pub fn stack(&mut self, ids: &[u32]) -> Option<StackId> {
        if ids.is_empty() {
            return None;
        }
        let ids = if ids.len() > Self::MAX_DEPTH {
            self.truncated += 1;
            &ids[..Self::MAX_DEPTH]
        } else {
            ids
        };
        if let Some(&s) = self.stack_ids.get(ids) {
            return Some(s);
        }
        if self.stacks.len() >= Self::MAX_STACKS {
            self.dropped_stacks += 1;
            return None;
        }
        let s = StackId(self.stacks.len() as u32);
        self.stacks.push(ids.into());
        self.stack_ids.insert(ids.into(), s);
        Some(s)
    }

    /// The frames of stack `s`, innermost first.
    pub fn frames_of(&self, s: StackId) -> impl Iterator<Item = &Frame> {
        self.stacks.get(s.0 as usize).into_iter().flat_map(|ids| ids.iter().filter_map(|&i| self.frame_at(i)))
    }

    /// Add `other`'s stacks to this table; the answer maps `other`'s ids to this table's
    /// (`None`: not kept, counted as dropped). For a reader whose parts each interned their own.
    pub fn absorb(&mut self, other: StackTable) -> Vec<Option<StackId>> {
        self.dropped_stacks += other.dropped_stacks;
        self.dropped_frames += other.dropped_frames;
        self.truncated += other.truncated;
        let frame_map: Vec<Option<u32>> = other.frames.into_iter().map(|f| self.frame(f)).collect();
        let mut ids = Vec::new();
        other
            .stacks
            .iter()
            .map(|s| {
                ids.clear();
                for &f in s {
                    match frame_map.get(f as usize).copied().flatten() {
                        Some(f) => ids.push(f),
                        None => {
                            self.dropped_stacks += 1;
                            return None;
                        }
                    }
                }
                self.stack(&ids)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(module: &str, symbol: &str, addr: u64) -> Frame {
        Frame { addr, module: Some(module.into()), symbol: Some(symbol.into()), ..Default::default() }
    }

    #[test]
    fn the_same_stack_costs_one_entry_and_tables_merge_by_value() {
        let mut t = StackTable::default();
        let a = [t.frame(f("/lib/libc.so.6", "poll", 1)).unwrap(), t.frame(f("/app", "spin", 2)).unwrap()];
        let s1 = t.stack(&a).unwrap();
        let s2 = t.stack(&a).unwrap();
        assert_eq!(s1, s2);
        assert_eq!((t.stacks(), t.frames()), (1, 2));
        assert_eq!(t.stack(&[]), None);

        let mut u = StackTable::default();
        let b = [u.frame(f("/app", "other", 3)).unwrap()];
        let c = [u.frame(f("/lib/libc.so.6", "poll", 1)).unwrap(), u.frame(f("/app", "spin", 2)).unwrap()];
        let (sb, sc) = (u.stack(&b).unwrap(), u.stack(&c).unwrap());
        let map = t.absorb(u);
        assert_eq!(map[sc.0 as usize], Some(s1), "the same frames are the same stack");
        let nb = map[sb.0 as usize].unwrap();
        assert_ne!(nb, s1);
        assert_eq!(t.frames_of(nb).map(|f| f.symbol.clone().unwrap()).collect::<Vec<_>>(), ["other"]);
    }

    #[test]
    fn stacks_beyond_the_cap_are_counted_not_kept() {
        let mut t = StackTable::default();
        for i in 0..StackTable::MAX_STACKS as u64 + 3 {
            let id = t.frame(f("/app", "x", i)).unwrap();
            t.stack(&[id]);
        }
        assert_eq!(t.stacks(), StackTable::MAX_STACKS);
        assert_eq!(t.dropped_stacks, 3);
        let deep: Vec<u32> = (0..100).collect();
        t.stack(&deep);
        assert_eq!(t.truncated, 1);
    }

    #[test]
    fn runtime_frames_are_told_from_the_programs_own() {
        assert!(f("/usr/lib/x86_64-linux-gnu/libc.so.6", "poll", 0).is_runtime());
        assert!(f("/usr/lib64/ld-linux-x86-64.so.2", "", 0).is_runtime());
        assert!(!f("/srv/app/spin", "wait_for_data", 0).is_runtime());
        assert!(!f("/usr/lib/x86_64-linux-gnu/libcurl.so.4", "Curl_poll", 0).is_runtime());
        // JIT code, as a JVM's and node's perf maps name it
        let jit = |sym: &str| f("/tmp/perf-7.map", sym, 0);
        assert!(jit("Wait.main(java.lang.String[])").is_jit());
        assert!(!jit("Wait.main(java.lang.String[])").is_runtime());
        assert!(!jit("com.example.Poller.spin()").is_runtime());
        assert!(jit("sun.nio.ch.FileDispatcherImpl.read0(java.io.FileDescriptor, long, int)").is_runtime());
        assert!(jit("java.lang.Object.hashCode()").is_runtime());
        assert!(jit("Interpreter").is_runtime());
        assert!(jit("StubRoutines (1)").is_runtime());
        assert!(jit("I2C/C2I adapters").is_runtime());
        let mut js = jit("probeMissing");
        js.file = Some("/srv/probe.js".into());
        assert!(!js.is_runtime());
        js.file = Some("node:fs".into());
        assert!(js.is_runtime());
        // Python functions (-X perf): the standard library's are the runtime's
        let mut py = jit("probe_missing");
        py.file = Some("/srv/probe.py".into());
        assert!(!py.is_runtime());
        for stdlib in [
            "/usr/lib/python3.14/genericpath.py",
            "/var/cache/syslint/sid-strace/usr/lib/python3.14/socket.py",
            "/opt/py/lib/python3.12/http/client.py",
            "<frozen importlib._bootstrap>",
        ] {
            py.file = Some(stdlib.into());
            assert!(py.is_runtime(), "{stdlib}");
        }
        for owned in [
            "/usr/lib/python3/dist-packages/requests/api.py",
            "/srv/venv/lib/python3.12/site-packages/httpx/_client.py",
            "/srv/lib/app/python3.12.py",
            "/srv/lib/python3/app.py",
            "/srv/lib/python3.x/app.py",
        ] {
            py.file = Some(owned.into());
            assert!(!py.is_runtime(), "{owned}");
        }
    }
}

/// Stacks a backend sampled beside the calls rather than on them (eBPF: the first calls of each
/// thread and syscall, then one in N, unwound and symbolized after the capture), for the
/// analyzer to count as the calls they stand for.
#[derive(Clone, Debug, Default)]
pub struct SampledStacks {
    /// Each stack's frames, innermost first.
    pub stacks: Vec<Vec<Frame>>,
    /// (thread, syscall, calls it stands for, index into `stacks`).
    pub samples: Vec<(crate::Tid, crate::Sys, u64, usize)>,
    /// What could not be named or kept, in words (for the report's notes).
    pub notes: Vec<String>,
}
