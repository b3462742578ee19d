//! User stacks of the syscalls syslint's eBPF capture sampled ([`syslint_bpf::StackOptions`]):
//! unwound from `.eh_frame` / `.debug_frame` CFI with `framehop` (falling back to the kernel's
//! frame-pointer walk) and symbolized with `blazesym` (ELF symbols, DWARF file:line where debug
//! information exists), on a thread of their own ([`Collector`]), never the capture thread.
//!
//! What comes out is a [`StackTable`]: symbolized stacks, each named by its index (a
//! [`StackId`]), and one [`Sample`] per sampled call saying which stack it had, so a finding
//! can count its calls per call site. A frame is [`Frame`]: address, module path, symbol and
//! offset, file:line when known, the shape strace `-k`/`-kk` prints per frame.
//!
//! Short-lived processes: the kernel wakes the collector at each thread's first sample of a
//! syscall, and the collector reads `/proc/PID/maps` and opens the mapped files then, so a
//! process that lives a few milliseconds still has its map read; when it is gone before that,
//! its frames stay unnamed addresses and [`Stack::note`] says why.
//!
//! Bounded: at most [`Limits`] processes, modules, stacks, samples and frames per stack; what
//! goes beyond is counted in [`Stats`] and said in [`StackTable::notes`].

mod maps;
mod perfmap;

/// How a frame named from a runtime's perf map names its module: `/tmp/perf-PID.map`.
pub const JIT_MODULE: &str = "/tmp/perf-";
mod module;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{FrameAddress, Unwinder};
use syslint_bpf::{KernelVma, OwnedStackSample, StackItem, StackRing, StackSample, StackStats};

use maps::ModuleFile;
pub use maps::{parse_maps, Mapping};
use module::Bytes;

/// One frame of a user stack. The innermost frame's `addr` is the instruction after the
/// syscall; the others' are return addresses (named by the call instruction before them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The address in the process.
    pub addr: u64,
    /// The mapped file holding it (None: anonymous memory, JIT code, or a map not read).
    pub module: Option<String>,
    /// `addr`'s offset in `module`'s file (0 without a module).
    pub module_offset: u64,
    /// The function, demangled (None: no symbol covers it, as in a stripped binary).
    pub symbol: Option<String>,
    /// `addr` minus the symbol's start.
    pub symbol_offset: u64,
    /// Source file and line (DWARF), when the module has debug information.
    pub file: Option<String>,
    pub line: Option<u32>,
}

/// How a stack was unwound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// DWARF CFI (`.eh_frame`, `.debug_frame`) over the copied stack bytes, frame pointers
    /// where a module has none.
    Cfi,
    /// The kernel's frame-pointer walk (it went further than CFI over the copy).
    FramePointer,
}

/// A stack, innermost frame first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stack {
    pub tgid: u32,
    pub frames: Vec<Frame>,
    pub method: Method,
    /// The unwinding reached the stack's root (the thread's start) rather than stopping early.
    pub complete: bool,
    /// What could not be named, and why (a stripped module, a map not read, a stack cut).
    pub note: Option<String>,
    /// Why the walk stopped before the stack's root, in words that are the same for every
    /// stack it happened to (no address): what a report sums up.
    pub cut: Option<String>,
}

/// The index of a stack in [`StackTable::stacks`].
pub type StackId = u32;

/// One sampled call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    pub tgid: u32,
    pub tid: u32,
    /// The syscall number.
    pub nr: u32,
    /// The call's exit (CLOCK_MONOTONIC ns), as in its Syscall record; with (tid, nr) it names
    /// the call, or, coalesced, one of the calls its Repeat record stands for.
    pub ts_exit: u64,
    /// How many calls of this thread and syscall the sample stands for.
    pub weight: u32,
    pub stack: StackId,
}

/// What the collector did, and what it had to leave out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Stack records received.
    pub received: u64,
    /// Samples not kept (beyond [`Limits::samples`] or [`Limits::stacks`]).
    pub dropped: u64,
    /// Time spent unwinding and symbolizing, in total.
    pub unwind_ns: u64,
    pub symbolize_ns: u64,
    /// Bytes of the stack records received.
    pub bytes: u64,
    /// Processes whose memory map could not be read (gone before the collector looked).
    pub unmapped_processes: u64,
}

/// The stacks of a trace.
#[derive(Clone, Debug, Default)]
pub struct StackTable {
    pub stacks: Vec<Stack>,
    pub samples: Vec<Sample>,
    pub stats: Stats,
    /// The kernel's counts (sampled, sent, lost), when the caller filled them in.
    pub kernel: Option<StackStats>,
    /// What the table leaves out, in words.
    pub notes: Vec<String>,
}

/// Bounds on what the collector keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub processes: usize,
    pub modules: usize,
    pub stacks: usize,
    pub samples: usize,
    pub frames: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { processes: 4096, modules: 2048, stacks: 65536, samples: 1 << 20, frames: 128 }
    }
}

/// A process's map as read, its modules placed at their addresses for framehop.
struct Process {
    maps: Vec<Mapping>,
    /// Module files by mapping index (executable file mappings only).
    files: Vec<(usize, Arc<ModuleFile>)>,
    unwinder: UnwinderX86_64<Bytes>,
    read_at: Instant,
    /// Times the map was read again (an address outside it: a library loaded since).
    rereads: u32,
}

/// Reads of a process's map again at once when an address falls outside it; after these, at
/// most one every [`REREAD_EVERY`] (addresses in anonymous or JIT memory never fall inside).
const REREADS_AT_ONCE: u32 = 8;
const REREAD_EVERY: Duration = Duration::from_millis(100);

/// Unwinds stack samples as they come (the copied bytes are dropped right after) and
/// symbolizes the distinct stacks at the end. The test-level API; [`Collector`] runs one on a
/// thread of its own.
pub struct Resolver {
    limits: Limits,
    procs: HashMap<(u32, u64), Option<Process>>,
    modules: HashMap<(u64, u64), Arc<ModuleFile>>,
    cache: CacheX86_64,
    /// (tgid, mm_id, method, complete, addresses) -> stack id
    seen: HashMap<(u32, u64, Method, bool, Vec<u64>), StackId>,
    raw: Vec<RawStack>,
    samples: Vec<Sample>,
    stats: Stats,
    /// The mappings the kernel sent, by (tgid, mm_id).
    vmas: HashMap<(u32, u64), Vec<KernelVma>>,
    /// This process's mount table (read when first needed).
    mounts: Option<Vec<maps::Mount>>,
    /// Samples of processes gone before their mappings were known, and their stack bytes.
    pending: Vec<OwnedStackSample>,
    pending_bytes: usize,
    /// Processes the kernel sent new mappings of since the last [`Resolver::retry`].
    fresh: Vec<(u32, u64)>,
    /// When each process whose map was read from /proc started (to tell its perf map from an
    /// earlier process's with the same pid), and its pid in its own pid namespace (a process
    /// in a container names its perf map by that one, in its own /tmp).
    started: HashMap<u32, (std::time::SystemTime, u32)>,
}

/// Whether a process's memory is gone: it ended, it is a zombie (whose /proc entry stays
/// until it is reaped, with an empty map), or it is exiting with its memory released. Its
/// state in /proc/PID/stat and one byte of its map, not the whole map: a JIT runtime's samples
/// are never covered by a file mapping and would read a long map each.
fn gone(tgid: u32) -> bool {
    use std::io::Read;
    let Ok(stat) = std::fs::read(format!("/proc/{tgid}/stat")) else { return true };
    // `PID (COMM) STATE ...`: COMM may hold spaces and parentheses, the last ')' ends it
    let state = stat.iter().rposition(|&c| c == b')').and_then(|i| stat.get(i + 2)).copied();
    if matches!(state, None | Some(b'Z' | b'X')) {
        return true;
    }
    // exiting: its memory released, not yet a zombie (the first byte of the map is enough)
    let mut one = [0u8; 1];
    std::fs::File::open(format!("/proc/{tgid}/maps")).and_then(|mut f| f.read(&mut one)).map_or(true, |n| n == 0)
}

/// When a running process started: its start in clock ticks after boot (/proc/PID/stat's 22nd
/// field) after the boot time (/proc/stat's `btime`).
fn start_time(tgid: u32) -> Option<std::time::SystemTime> {
    let stat = std::fs::read_to_string(format!("/proc/{tgid}/stat")).ok()?;
    // after the command name's closing parenthesis: state is field 3, starttime 22
    let ticks: u64 = stat.rsplit_once(')')?.1.split_whitespace().nth(19)?.parse().ok()?;
    let boot = std::fs::read_to_string("/proc/stat").ok()?;
    let btime: u64 = boot.lines().find_map(|l| l.strip_prefix("btime "))?.trim().parse().ok()?;
    // USER_HZ: 100 on x86_64
    let at = std::time::Duration::from_secs(btime) + std::time::Duration::from_millis(ticks * 10);
    Some(std::time::SystemTime::UNIX_EPOCH + at)
}

/// A process's pid in its innermost pid namespace (the last of /proc/PID/status's `NSpid`).
fn ns_pid(tgid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{tgid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("NSpid:"))?.split_whitespace().last()?.parse().ok()
}

/// Samples (and their stack bytes) kept at most while their process's mappings are awaited.
const PENDING_MAX: usize = 8192;
const PENDING_BYTES: usize = 32 << 20;

struct RawStack {
    tgid: u32,
    mm_id: u64,
    method: Method,
    complete: bool,
    addrs: Vec<u64>,
    /// Why the walk stopped early: (the same words for every stack, this stack's own).
    cut: Option<(String, String)>,
}

impl Resolver {
    pub fn new(limits: Limits) -> Resolver {
        Resolver {
            limits,
            procs: HashMap::new(),
            modules: HashMap::new(),
            cache: CacheX86_64::new(),
            seen: HashMap::new(),
            raw: Vec::new(),
            samples: Vec::new(),
            stats: Stats::default(),
            vmas: HashMap::new(),
            mounts: None,
            pending: Vec::new(),
            pending_bytes: 0,
            fresh: Vec::new(),
            started: HashMap::new(),
        }
    }

    /// Reads the process's map now (once per address space; again when an address falls
    /// outside it: a library loaded later, as the C library is after the first calls of a
    /// program, which a process gone in milliseconds must not miss) and opens its module files.
    fn process(&mut self, tgid: u32, mm_id: u64, ip: u64) -> Option<&Process> {
        let key = (tgid, mm_id);
        let stale = match self.procs.get(&key) {
            None => true,
            Some(None) => false,
            Some(Some(p)) => {
                !p.maps.iter().any(|m| m.range.contains(&ip))
                    && (p.rereads < REREADS_AT_ONCE || p.read_at.elapsed() > REREAD_EVERY)
            }
        };
        let rereads = match self.procs.get(&key) {
            Some(Some(p)) => p.rereads + 1,
            _ => 0,
        };
        if stale {
            if self.procs.len() >= self.limits.processes && !self.procs.contains_key(&key) {
                return None;
            }
            let p = self.read_process(tgid, mm_id).map(|p| Process { rereads, ..p });
            if p.is_none() && !self.procs.contains_key(&key) {
                self.stats.unmapped_processes += 1;
            }
            if p.is_some() || !self.procs.contains_key(&key) {
                self.procs.insert(key, p);
            }
        }
        self.procs.get(&key).and_then(Option::as_ref)
    }

    /// The process's map from /proc while it runs, else from the mappings the kernel sent
    /// before its thread's first sample (a process gone within milliseconds).
    fn read_process(&mut self, tgid: u32, mm_id: u64) -> Option<Process> {
        let text = std::fs::read_to_string(format!("/proc/{tgid}/maps")).ok();
        let maps = text.as_deref().map(parse_maps).unwrap_or_default();
        if !maps.is_empty() && self.started.len() < self.limits.processes {
            if let Some(t) = start_time(tgid) {
                self.started.entry(tgid).or_insert((t, ns_pid(tgid).unwrap_or(tgid)));
            }
        }
        // empty: gone, or a zombie (its memory is released already); another address space
        // than the sample's: the process has run execve since (its spawning code's stack was
        // sampled at execve's entry)
        let other = |maps: &[Mapping]| {
            self.vmas
                .get(&(tgid, mm_id))
                .and_then(|v| v.first())
                .is_some_and(|v| !maps.iter().any(|m| m.range.start == v.start && m.inode == v.inode))
        };
        let maps = if maps.is_empty() || other(&maps) { self.kernel_maps(tgid, mm_id)? } else { maps };
        let mut unwinder = UnwinderX86_64::new();
        let mut files = Vec::new();
        for (i, m) in maps.iter().enumerate() {
            if !m.exec || !m.is_file() {
                continue;
            }
            let key = (m.dev, m.inode);
            let file = match self.modules.get(&key) {
                Some(f) => f.clone(),
                None if self.modules.len() < self.limits.modules => {
                    let Some(f) = ModuleFile::open(tgid, m) else { continue };
                    let f = Arc::new(f);
                    self.modules.insert(key, f.clone());
                    f
                }
                None => continue,
            };
            if let Some((sections, segments)) = module::read_elf(&file) {
                if let Some(bias) = module::bias(&segments, m) {
                    // the whole file's span in the process, for framehop's module lookup
                    let span = maps
                        .iter()
                        .filter(|o| o.dev == m.dev && o.inode == m.inode)
                        .fold(m.range.clone(), |r, o| r.start.min(o.range.start)..r.end.max(o.range.end));
                    if !unwinder_has(&files, &maps, m) {
                        unwinder.add_module(framehop::Module::new(file.path.clone(), span, bias, sections));
                    }
                }
            }
            files.push((i, file));
        }
        Some(Process { maps, files, unwinder, read_at: Instant::now(), rereads: 0 })
    }

    /// A mapping the kernel sent (before a thread's first sample), kept for when the
    /// process is gone before its /proc map is read.
    pub fn add_vma(&mut self, v: KernelVma) {
        let key = (v.tgid, v.mm_id);
        if !self.vmas.contains_key(&key) && self.vmas.len() >= self.limits.processes {
            return;
        }
        let list = self.vmas.entry(key).or_default();
        // every thread's first sample sends them again, and the exit of a thread that had one
        if list.len() < 256 && !list.iter().any(|o| o.start == v.start) {
            list.push(v);
            if self.fresh.len() < 1024 && !self.fresh.contains(&key) {
                self.fresh.push(key);
            }
        }
    }

    /// The kernel's mappings of (tgid, mm_id) as /proc lines would give them, each file placed
    /// under a mount point of its file system where that path holds the same inode.
    fn kernel_maps(&mut self, tgid: u32, mm_id: u64) -> Option<Vec<Mapping>> {
        let vmas = self.vmas.get(&(tgid, mm_id)).filter(|v| !v.is_empty())?;
        let mounts = self.mounts.get_or_insert_with(maps::mounts);
        let maps: Vec<Mapping> = vmas.iter().filter_map(|v| maps::from_kernel(v, mounts)).collect();
        (!maps.is_empty()).then_some(maps)
    }

    /// Unwinds one sample now; its stack bytes are not kept.
    pub fn add(&mut self, s: &StackSample<'_>) {
        self.stats.received += 1;
        self.stats.bytes += s.record_bytes() as u64;
        // a process gone with none of the maps known covering the call: the mappings the
        // kernel sends at its exit may still name it (kept, bounded, until they come or the end)
        if self.pending.len() < PENDING_MAX
            && self.pending_bytes + s.stack.len() <= PENDING_BYTES
            && !self.covered(s)
            && gone(s.tgid)
        {
            self.pending_bytes += s.stack.len();
            self.pending.push(s.to_owned_sample());
            return;
        }
        self.unwind(s);
    }

    /// Whether the map known of the sample's process (read now if need be) holds its ip.
    fn covered(&mut self, s: &StackSample<'_>) -> bool {
        self.process(s.tgid, s.mm_id, s.ip).is_some_and(|p| p.maps.iter().any(|m| m.range.contains(&s.ip)))
    }

    /// Unwinds the samples kept for processes the kernel has sent more mappings of since,
    /// once those cover the sample's address (the collector calls this after each batch of
    /// records). Mappings another thread's first sample sent are not yet the exit's: a sample
    /// whose address they miss waits on.
    pub fn retry(&mut self) {
        if self.fresh.is_empty() {
            return;
        }
        let fresh = std::mem::take(&mut self.fresh);
        // the map of each process waited for, again with what the kernel sent; a map read
        // before stays when this gives none (symbolization needs its module files)
        let mut waited: Vec<(u32, u64)> = Vec::new();
        for p in &self.pending {
            let s = p.as_sample();
            let k = (s.tgid, s.mm_id);
            if fresh.contains(&k) && !waited.contains(&k) {
                waited.push(k);
            }
        }
        for k in &waited {
            let rereads = self.procs.get(k).and_then(Option::as_ref).map_or(0, |p| p.rereads);
            if let Some(p) = self.read_process(k.0, k.1) {
                self.procs.insert(*k, Some(Process { rereads, ..p }));
            }
        }
        let pending = std::mem::take(&mut self.pending);
        let (now, keep): (Vec<_>, Vec<_>) = pending.into_iter().partition(|p| {
            let s = p.as_sample();
            waited.contains(&(s.tgid, s.mm_id)) && self.covered_addr(&s, s.ip)
        });
        self.pending = keep;
        for p in now {
            let s = p.as_sample();
            self.pending_bytes -= s.stack.len();
            self.unwind(&s);
        }
    }

    /// Whether the map known of the sample's process holds `addr` (no re-read).
    fn covered_addr(&self, s: &StackSample<'_>, addr: u64) -> bool {
        self.procs
            .get(&(s.tgid, s.mm_id))
            .and_then(Option::as_ref)
            .is_some_and(|p| p.maps.iter().any(|m| m.range.contains(&addr)))
    }

    /// The sample's frames as the known map's modules unwind them: (addresses, whether the
    /// walk reached the stack's root, why it stopped early).
    fn walk(&self, s: &StackSample<'_>, cache: &mut CacheX86_64) -> (Vec<u64>, bool, Option<(String, String)>) {
        let max = self.limits.frames;
        let (mut addrs, mut complete, mut cut) = (Vec::new(), false, None);
        let Some(p) = self.procs.get(&(s.tgid, s.mm_id)).and_then(Option::as_ref) else {
            return (addrs, complete, cut);
        };
        let mut read = |a: u64| s.read_u64(a).ok_or(());
        let mut it = p.unwinder.iter_frames(s.ip, UnwindRegsX86_64::new(s.ip, s.sp, s.bp), cache, &mut read);
        loop {
            match it.next() {
                Ok(Some(f)) if addrs.len() < max => addrs.push(frame_addr(f)),
                Ok(Some(_)) => {
                    let why = format!("cut at {max} frames");
                    cut = Some((why.clone(), why));
                    break;
                }
                Ok(None) => {
                    complete = true;
                    break;
                }
                Err(e) => {
                    cut = Some(unwind_stop(&e, s));
                    break;
                }
            }
        }
        (addrs, complete, cut)
    }

    fn unwind(&mut self, s: &StackSample<'_>) {
        let t0 = Instant::now();
        if self.samples.len() >= self.limits.samples {
            self.stats.dropped += 1;
            return;
        }
        let max = self.limits.frames;
        let fp: Vec<u64> = s.fp_ips().take(max).collect();
        let mut cache = std::mem::take(&mut self.cache);
        let (mut addrs, mut complete, mut cut);
        if self.process(s.tgid, s.mm_id, s.ip).is_some() {
            (addrs, complete, cut) = self.walk(s, &mut cache);
            // stopped at a return address no known mapping holds: a library loaded since the
            // map was read (PHP's extensions, dlopen'ed after the first calls); read it again
            // (bounded like every re-read) and walk once more
            let last = addrs.last().copied().filter(|_| !complete && addrs.len() > 1);
            if let Some(a) = last.filter(|&a| !self.covered_addr(s, a)) {
                if self.process(s.tgid, s.mm_id, a).is_some_and(|p| p.maps.iter().any(|m| m.range.contains(&a))) {
                    (addrs, complete, cut) = self.walk(s, &mut cache);
                }
            }
        } else {
            complete = false;
            let late_us = syslint_bpf::monotonic_now_ns().saturating_sub(s.ts_exit) / 1000;
            cut = Some((
                "its process ended before its memory map could be read".to_string(),
                format!(
                    "process {} ended before its memory map could be read ({late_us} us after this \
                     call): no module is known, the addresses are unnamed",
                    s.tgid
                ),
            ));
            addrs = vec![s.ip];
        }
        self.cache = cache;
        // the kernel's frame-pointer walk of code without frame pointers can loop on one
        // address to its end: only what it found beyond the unwinder's frames counts
        let runs = 1 + fp.windows(2).filter(|w| w[0] != w[1]).count();
        let method = if !fp.is_empty() && runs > addrs.len() {
            addrs = fp;
            Method::FramePointer
        } else {
            Method::Cfi
        };
        let key = (s.tgid, s.mm_id, method, complete, addrs);
        let id = match self.seen.get(&key) {
            Some(&id) => id,
            None if self.raw.len() < self.limits.stacks => {
                let id = self.raw.len() as StackId;
                self.raw.push(RawStack { tgid: s.tgid, mm_id: s.mm_id, method, complete, addrs: key.4.clone(), cut });
                self.seen.insert(key, id);
                id
            }
            None => {
                self.stats.dropped += 1;
                return;
            }
        };
        self.samples.push(Sample {
            tgid: s.tgid,
            tid: s.tid,
            nr: s.nr,
            ts_exit: s.ts_exit,
            weight: s.weight,
            stack: id,
        });
        self.stats.unwind_ns += t0.elapsed().as_nanos() as u64;
    }

    /// Symbolizes every distinct stack (one blazesym pass per module) and hands the table over.
    pub fn finish(mut self) -> StackTable {
        // what still waits for mappings is unwound with what is known
        for p in std::mem::take(&mut self.pending) {
            self.unwind(&p.as_sample());
        }
        let t0 = Instant::now();
        let Resolver { procs, raw, samples, mut stats, .. } = self;
        let symbolizer = blazesym::symbolize::Symbolizer::new();
        // (stack, frame) -> where, grouped by module for one batch each
        let mut by_module: HashMap<*const ModuleFile, Batch> = HashMap::new();
        let mut stacks: Vec<Stack> = Vec::with_capacity(raw.len());
        for (si, r) in raw.iter().enumerate() {
            let proc_ = procs.get(&(r.tgid, r.mm_id)).and_then(Option::as_ref);
            let mut frames = Vec::with_capacity(r.addrs.len());
            for (fi, &addr) in r.addrs.iter().enumerate() {
                let lookup = if fi == 0 { addr } else { addr.wrapping_sub(1) };
                let mut f = Frame {
                    addr,
                    module: None,
                    module_offset: 0,
                    symbol: None,
                    symbol_offset: 0,
                    file: None,
                    line: None,
                };
                if let Some(p) = proc_ {
                    if let Some((mi, m)) = p.maps.iter().enumerate().find(|(_, m)| m.range.contains(&lookup)) {
                        f.module =
                            m.is_file().then(|| m.path.strip_suffix(" (deleted)").unwrap_or(&m.path).to_string());
                        if m.path == "[vdso]" {
                            f.module = Some(m.path.clone());
                        }
                        f.module_offset = addr - m.range.start + m.offset;
                        if let Some((_, file)) = p.files.iter().find(|(i, _)| *i == mi) {
                            let e = by_module.entry(Arc::as_ptr(file)).or_insert_with(|| (file.clone(), Vec::new()));
                            e.1.push((si, fi, lookup - m.range.start + m.offset));
                        }
                    }
                }
                frames.push(f);
            }
            stacks.push(Stack {
                tgid: r.tgid,
                frames,
                method: r.method,
                complete: r.complete,
                note: r.cut.as_ref().map(|c| c.1.clone()),
                cut: r.cut.as_ref().map(|c| c.0.clone()),
            });
        }
        for (file, wants) in by_module.values() {
            let offsets: Vec<u64> = wants.iter().map(|w| w.2).collect();
            let src = blazesym::symbolize::source::Source::Elf(blazesym::symbolize::source::Elf::new(file.open_path()));
            let Ok(syms) = symbolizer.symbolize(&src, blazesym::symbolize::Input::FileOffset(&offsets)) else {
                continue;
            };
            for (w, sym) in wants.iter().zip(syms) {
                let Some(f) = stacks.get_mut(w.0).and_then(|s| s.frames.get_mut(w.1)) else { continue };
                if let blazesym::symbolize::Symbolized::Sym(sym) = sym {
                    // a symbol of no known size far below the address (a stripped library's
                    // version node, `CURL_OPENSSL_4`, an absolute symbol at 0) does not name it
                    if sym.size.unwrap_or(0) == 0 && sym.offset > 0x1000 {
                        continue;
                    }
                    f.symbol = Some(sym.name.to_string());
                    // the frame's own address (not the lookup address one before a return)
                    f.symbol_offset = sym.offset as u64 + u64::from(w.1 != 0);
                    if let Some(ci) = &sym.code_info {
                        f.file = Some(ci.to_path().display().to_string());
                        f.line = ci.line;
                    }
                }
            }
        }
        // JIT code: the perf map its runtime wrote, read now (it outlives the process)
        let mut perf: HashMap<u32, Option<perfmap::PerfMap>> = HashMap::new();
        for s in &mut stacks {
            for f in s.frames.iter_mut().filter(|f| f.module.is_none() && f.symbol.is_none()) {
                if perf.len() >= 256 && !perf.contains_key(&s.tgid) {
                    break;
                }
                let seen = self.started.get(&s.tgid).copied();
                let map = perf
                    .entry(s.tgid)
                    .or_insert_with(|| perfmap::PerfMap::of_process(s.tgid, seen.map(|x| x.1), seen.map(|x| x.0)));
                if let Some(name) = map.as_ref().and_then(|m| m.name_of(f.addr)) {
                    let (func, file, line) = perfmap::split_name(name);
                    f.module = Some(format!("{}{}.map", JIT_MODULE, s.tgid));
                    f.module_offset = f.addr; // JIT code has no file: its address stays
                    f.symbol = Some(func);
                    f.file = file;
                    f.line = line;
                }
            }
        }
        // JIT code left unnamed: say which flag makes its runtime write a perf map
        let mut hints: Vec<&str> = Vec::new();
        for s in &stacks {
            // unnamed code in anonymous memory, of a process that wrote no perf map
            let has_map = perf.get(&s.tgid).is_some_and(Option::is_some);
            if has_map || !s.frames.iter().any(|f| f.module.is_none() && f.symbol.is_none()) {
                continue;
            }
            let base = |f: &Frame| f.module.as_deref().map(|m| m.rsplit('/').next().unwrap_or(m).to_string());
            let hint = s.frames.iter().filter_map(base).find_map(|b| runtime_flag(&b));
            if let Some(h) = hint.filter(|h| !hints.contains(h)) {
                hints.push(h);
            }
        }
        // a JVM's compiled code keeps no frame pointer unless asked, and has no unwind tables:
        // a stack stopping in it goes no further than the JDK's methods
        let jvm = |tgid: u32| {
            procs.iter().any(|((t, _), p)| {
                *t == tgid && p.as_ref().is_some_and(|p| p.maps.iter().any(|m| m.path.ends_with("/libjvm.so")))
            })
        };
        let stops_in_jit = |s: &Stack| {
            !s.complete
                && s.frames.last().is_some_and(|f| f.module.as_deref().is_some_and(|m| m.starts_with(JIT_MODULE)))
        };
        if !hints.iter().any(|h| h.contains("-XX:")) && stacks.iter().any(|s| stops_in_jit(s) && jvm(s.tgid)) {
            hints.push(JVM_FRAME_POINTERS);
        }
        for s in &mut stacks {
            let unnamed: Vec<String> = s
                .frames
                .iter()
                .filter(|f| f.symbol.is_none())
                .map(|f| match &f.module {
                    Some(m) => format!("{m}+{:#x}", f.module_offset),
                    None => format!("{:#x}", f.addr),
                })
                .collect();
            if !unnamed.is_empty() {
                let why = format!(
                    "{} of {} frames have no symbol ({}): a stripped module (only its exported \
                     symbols are left), anonymous or JIT code, or a map not read",
                    unnamed.len(),
                    s.frames.len(),
                    unnamed.join(", ")
                );
                s.note = Some(match s.note.take() {
                    Some(n) => format!("{n}; {why}"),
                    None => why,
                });
            }
        }
        stats.symbolize_ns = t0.elapsed().as_nanos() as u64;
        let mut notes = Vec::new();
        if stats.dropped > 0 {
            notes.push(format!("{} sampled stacks not kept (the collector's bounds)", stats.dropped));
        }
        for h in hints {
            if h == JVM_FRAME_POINTERS {
                notes.push(format!("stacks stop in JIT-compiled Java code: {h}"));
            } else {
                notes.push(format!("frames in JIT-compiled code have no name: {h}"));
            }
        }
        if stats.unmapped_processes > 0 {
            notes.push(format!(
                "{} processes ended before their memory map could be read: their frames are unnamed",
                stats.unmapped_processes
            ));
        }
        StackTable { stacks, samples, stats, kernel: None, notes }
    }
}

/// What lets the unwinder walk through a JVM's compiled code.
const JVM_FRAME_POINTERS: &str = "run java with -XX:+PreserveFramePointer as well";

/// The flag that makes a runtime write the perf map its JIT code is named from, by a module
/// of the runtime in the stack (advice names the program's own setting).
fn runtime_flag(module: &str) -> Option<&'static str> {
    if module == "node" || module.starts_with("libnode.so") {
        Some("run node with --perf-basic-prof")
    } else if module.starts_with("libjvm.so") {
        Some("run java with -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer")
    } else if module.starts_with("libpython3") || module.starts_with("python3") {
        Some("Python 3.12 and later name Python functions with -X perf (older ones cannot)")
    } else {
        None
    }
}

/// A module's frames to symbolize: (stack index, frame index, file offset to look up).
type Batch = (Arc<ModuleFile>, Vec<(usize, usize, u64)>);

/// Whether a module for the same file was already added for this process (a file mapped
/// executable twice).
fn unwinder_has(files: &[(usize, Arc<ModuleFile>)], maps: &[Mapping], m: &Mapping) -> bool {
    files.iter().any(|(i, _)| maps.get(*i).is_some_and(|o| o.dev == m.dev && o.inode == m.inode))
}

fn frame_addr(f: FrameAddress) -> u64 {
    f.address()
}

/// Why CFI unwinding stopped: (the same words for every stack it happens to, this stack's).
fn unwind_stop(e: &framehop::Error, s: &StackSample<'_>) -> (String, String) {
    match e {
        framehop::Error::CouldNotReadStack(a) if s.truncated => (
            format!("the stack goes on past the {} bytes copied of it", s.stack.len()),
            format!("the stack goes on past the {} bytes copied (the next frame is at {a:#x})", s.stack.len()),
        ),
        framehop::Error::CouldNotReadStack(a) => (
            "unwinding stopped: a frame lies outside the stack copied".to_string(),
            format!("unwinding stopped: the next frame is at {a:#x}, outside the stack copied"),
        ),
        other => (format!("unwinding stopped: {other}"), format!("unwinding stopped: {other}")),
    }
}

/// Reads a [`StackRing`] on a thread of its own, unwinding as samples come, and symbolizes at
/// [`Collector::finish`].
pub struct Collector {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Result<StackTable, String>>,
}

impl Collector {
    pub fn start(mut ring: StackRing, limits: Limits) -> std::io::Result<Collector> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new().name("syslint-stacks".into()).spawn(move || {
            let mut r = Resolver::new(limits);
            loop {
                let last = flag.load(Ordering::Acquire);
                ring.poll_items(if last { Duration::ZERO } else { Duration::from_millis(10) }, &mut |i| match i {
                    StackItem::Sample(s) => r.add(&s),
                    StackItem::Vma(v) => r.add_vma(v),
                })
                .map_err(|e| e.to_string())?;
                r.retry();
                if last {
                    break;
                }
            }
            Ok(r.finish())
        })?;
        Ok(Collector { stop, thread })
    }

    /// Reads what is left in the ring, symbolizes, and returns the table. Call it once the
    /// traced processes are done (or detached).
    pub fn finish(self) -> Result<StackTable, String> {
        self.stop.store(true, Ordering::Release);
        self.thread.join().map_err(|_| "the stack collector thread panicked".to_string())?
    }
}

impl Frame {
    /// `sym+0xoff (file:line)` or what is known, for notes and debug output.
    pub fn describe(&self) -> String {
        let mut s = match (&self.symbol, &self.module) {
            (Some(sym), _) => format!("{sym}+{:#x}", self.symbol_offset),
            (None, Some(m)) => format!("{m}+{:#x}", self.module_offset),
            (None, None) => format!("{:#x}", self.addr),
        };
        if let (Some(file), Some(line)) = (&self.file, self.line) {
            s.push_str(&format!(" ({file}:{line})"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::gone;

    /// A process that runs is not gone; one that exited is, whether a zombie still (not yet
    /// waited for: its map is already empty) or reaped.
    #[test]
    fn a_zombie_is_gone() {
        assert!(!gone(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().expect("spawn true");
        let pid = child.id();
        let t0 = std::time::Instant::now();
        while !gone(pid) {
            assert!(t0.elapsed() < std::time::Duration::from_secs(10), "true did not exit");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // still there to wait for: a zombie
        assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
        child.wait().expect("wait");
        assert!(gone(pid));
    }
}
