//! Opening, configuring, loading and attaching the skeleton; reading the ring buffer and maps.

use std::ffi::OsString;
use std::mem::MaybeUninit;
use std::os::fd::AsFd;
use std::path::Path;
use std::time::Duration;

use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use libbpf_rs::{ErrorKind, Link, MapCore, MapFlags, MapHandle};

use crate::abi::{self, Pod};
use crate::ring::Ring;
use crate::{caps, spawn, Child, Counts, Error, Lost, Options, Record};

mod skel_btf {
    include!(concat!(env!("OUT_DIR"), "/syslint.skel.rs"));
}
mod skel_nobtf {
    include!(concat!(env!("OUT_DIR"), "/syslint_nobtf.skel.rs"));
}

const PERMISSION_HINT: &str = "loading eBPF programs needs root, or the capabilities CAP_BPF and CAP_PERFMON \
     (e.g. `sudo setcap cap_bpf,cap_perfmon+ep /path/to/syslint`); \
     kernel.unprivileged_bpf_disabled does not matter then";

fn classify(what: &str, e: libbpf_rs::Error) -> Error {
    let log = libbpf_log_tail();
    match e.kind() {
        // the verifier rejects a program with EACCES too: with the privileges in hand, that is
        // a bug in the program, not something the user can grant
        ErrorKind::PermissionDenied if bpf_privileged() => {
            Error::Other(format!("{what}: {e} (the kernel rejected the program){log}"))
        }
        ErrorKind::PermissionDenied => Error::PermissionDenied(format!("{what}: {e}; {PERMISSION_HINT}")),
        ErrorKind::Unsupported => Error::Unsupported(format!("{what}: {e}{log}")),
        _ => Error::Other(format!("{what}: {e}{log}")),
    }
}

/// Whether this process holds what loading needs: CAP_SYS_ADMIN, or CAP_BPF and CAP_PERFMON
/// (effective set, from /proc/self/status).
fn bpf_privileged() -> bool {
    const CAP_SYS_ADMIN: u32 = 21;
    const CAP_PERFMON: u32 = 38;
    const CAP_BPF: u32 = 39;
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else { return false };
    let Some(eff) = status.lines().find_map(|l| l.strip_prefix("CapEff:")) else { return false };
    let Ok(eff) = u64::from_str_radix(eff.trim(), 16) else { return false };
    let has = |cap: u32| eff & (1 << cap) != 0;
    has(CAP_SYS_ADMIN) || (has(CAP_BPF) && has(CAP_PERFMON))
}

/// libbpf's messages during a load, kept instead of printed: a caller falling back to strace
/// should not spill libbpf's stderr lines on the user; on failure the tail goes into the error.
static LIBBPF_LOG: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

fn keep_libbpf_message(_level: libbpf_rs::PrintLevel, msg: String) {
    if let Ok(mut log) = LIBBPF_LOG.lock() {
        if log.len() < 1 << 20 {
            log.push_str(&msg);
        }
    }
}

/// The last lines libbpf said (the verifier's verdict is at the end), for an error message.
fn libbpf_log_tail() -> String {
    let Ok(log) = LIBBPF_LOG.lock() else { return String::new() };
    let lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return String::new();
    }
    format!("\nlibbpf said:\n  {}", lines[lines.len().saturating_sub(12)..].join("\n  "))
}

/// Routes libbpf's messages into LIBBPF_LOG while alive; restores the previous printer on drop.
pub(crate) struct QuietLibbpf(Option<(libbpf_rs::PrintLevel, libbpf_rs::PrintCallback)>);

impl QuietLibbpf {
    pub(crate) fn new() -> QuietLibbpf {
        if let Ok(mut log) = LIBBPF_LOG.lock() {
            log.clear();
        }
        QuietLibbpf(libbpf_rs::set_print(Some((libbpf_rs::PrintLevel::Warn, keep_libbpf_message))))
    }
}

impl Drop for QuietLibbpf {
    fn drop(&mut self) {
        libbpf_rs::set_print(self.0.take());
    }
}

pub(crate) fn map_err(what: &str) -> impl Fn(libbpf_rs::Error) -> Error + '_ {
    move |e| classify(what, e)
}

/// (major, minor) of the running kernel.
fn kernel_version() -> Option<(u32, u32)> {
    let rel = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
    let mut it = rel.trim().split(|c: char| !c.is_ascii_digit());
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

struct Maps {
    events: MapHandle,
    traced: MapHandle,
    threads: MapHandle,
    caps: MapHandle,
    lost: MapHandle,
    counts: MapHandle,
    stack_events: MapHandle,
    stack_stats: MapHandle,
    closing: MapHandle,
}

/// Opens one skeleton variant, sets the options, loads, fills the capture table, attaches, and
/// returns the links and map handles (the skeleton itself is dropped: links keep the programs
/// attached, the handles keep the maps alive).
macro_rules! load_variant {
    ($builder:ty, $opts:expr, [$($link:ident),+]) => {{
        let opts: &Options = $opts;
        let mut storage = MaybeUninit::uninit();
        let mut open = <$builder>::default().open(&mut storage).map_err(map_err("opening the BPF object"))?;
        let ro = open
            .maps
            .rodata_data
            .as_deref_mut()
            .ok_or_else(|| Error::Other("the BPF object has no read-only data".into()))?;
        ro.opt_payload_bytes = u32::from(opts.payload_bytes).min(abi::SLOT_MAX as u32 - 1);
        ro.opt_path_bytes = u32::from(opts.path_bytes).min(abi::SLOT_MAX as u32 - 1);
        ro.opt_coalesce = opts.coalesce;
        ro.opt_summary_only = opts.summary_only;
        ro.opt_in_flight = opts.in_flight;
        // stacks: tp_btf only (the raw_tp variant never calls sample_stack); without them the
        // stack ring is one page
        let stacks = opts.stacks.as_ref().filter(|_| ro_has_btf::<$builder>());
        ro.opt_stacks = stacks.is_some();
        let mut stack_ring = 4096;
        if let Some(st) = stacks {
            ro.opt_stack_first = st.first;
            ro.opt_stack_every = st.every;
            ro.opt_stack_cap = st.cap;
            ro.opt_stack_spacing_ns = u64::try_from(st.spacing.as_nanos()).unwrap_or(u64::MAX);
            ro.opt_stack_window_ns = u64::try_from(st.window.as_nanos()).unwrap_or(u64::MAX).max(1);
            ro.opt_stack_bytes = st.bytes.min(abi::STACK_MAX as u32);
            ro.opt_stack_fp = st.frame_pointers;
            ro.opt_stack_nrs = st.nr_bitmap();
            stack_ring = ring_size(st.ring_bytes);
        }
        open.maps.stack_events.set_max_entries(stack_ring).map_err(map_err("sizing the stack ring buffer"))?;
        open.maps.events.set_max_entries(ring_size(opts.ring_bytes)).map_err(map_err("sizing the ring buffer"))?;
        let mut skel = open.load().map_err(map_err("loading the BPF programs"))?;
        for (nr, spec) in caps::specs() {
            skel.maps
                .caps
                .update(&nr.to_ne_bytes(), abi::bytes(&spec), MapFlags::ANY)
                .map_err(map_err("filling the capture table"))?;
        }
        skel.attach().map_err(map_err("attaching the BPF programs"))?;
        let links: Vec<Link> = [$(skel.links.$link.take()),+].into_iter().flatten().collect();
        let handle = |m: &libbpf_rs::Map<'_>| MapHandle::try_from(m).map_err(map_err("duplicating a map handle"));
        let maps = Maps {
            events: handle(&skel.maps.events)?,
            traced: handle(&skel.maps.traced)?,
            threads: handle(&skel.maps.threads)?,
            caps: handle(&skel.maps.caps)?,
            lost: handle(&skel.maps.lost)?,
            counts: handle(&skel.maps.counts)?,
            stack_events: handle(&skel.maps.stack_events)?,
            stack_stats: handle(&skel.maps.stack_stats)?,
            closing: handle(&skel.maps.closing)?,
        };
        (links, maps)
    }};
}

/// Whether a skeleton builder is the tp_btf one (the only one that sends stacks).
fn ro_has_btf<B: 'static>() -> bool {
    std::any::TypeId::of::<B>() == std::any::TypeId::of::<skel_btf::SyslintSkelBuilder>()
}

/// A power of two of at least one page, as the kernel requires.
fn ring_size(bytes: u32) -> u32 {
    bytes.max(4096).checked_next_power_of_two().unwrap_or(1 << 31)
}

/// A fresh shared mapping of the first `bytes` of a `BPF_F_MMAPABLE` array's values (`what`
/// names it in the error); the caller unmaps it.
pub(crate) fn map_values(
    map: &MapHandle,
    bytes: usize,
    prot: libc::c_int,
    what: &str,
) -> Result<*mut libc::c_void, Error> {
    // SAFETY: a new mapping of the map's fd; nothing else is touched.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            prot,
            libc::MAP_SHARED,
            std::os::fd::AsRawFd::as_raw_fd(&map.as_fd()),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(Error::Other(format!("mapping {what}: {}", std::io::Error::last_os_error())));
    }
    Ok(p)
}

/// The `traced` bitmap (bit tgid & 63 of word tgid >> 6), mapped: bits are set with an atomic
/// or, because the programs set and clear other bits of the same word (atomic adds) meanwhile.
pub(crate) struct Filter {
    words: *mut u64,
}

impl Filter {
    const BYTES: usize = abi::PID_WORDS * 8;

    pub(crate) fn new(map: &MapHandle) -> Result<Filter, Error> {
        let p = map_values(map, Self::BYTES, libc::PROT_READ | libc::PROT_WRITE, "the process filter")?;
        Ok(Filter { words: p.cast() })
    }

    pub(crate) fn add(&self, tgid: u32) -> Result<(), Error> {
        let w = (tgid >> 6) as usize;
        if w >= abi::PID_WORDS {
            return Err(Error::Other(format!("process id {tgid} is beyond the filter's range")));
        }
        // SAFETY: word w of the mapping (8-byte aligned, inside BYTES), alive as long as self.
        let word = unsafe { &*(self.words.add(w) as *const std::sync::atomic::AtomicU64) };
        word.fetch_or(1 << (tgid & 63), std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
}

impl Drop for Filter {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping made in new().
        unsafe { libc::munmap(self.words.cast(), Self::BYTES) };
    }
}

/// The kernel's initial PID namespace has this fixed inode (PROC_PID_INIT_INO).
const INIT_PID_NS: &str = "pid:[4026531836]";

/// This process's PID namespace (`pid:[INODE]`) when it is not the initial one: pids seen here
/// (the command's, `-p`'s) are not the ones the kernel program sees (the host's). None when it
/// is the initial one or cannot be read.
fn own_pid_namespace() -> Option<String> {
    let ns = std::fs::read_link("/proc/self/ns/pid").ok()?;
    let ns = ns.to_string_lossy();
    (ns != INIT_PID_NS).then(|| ns.into_owned())
}

/// The loaded and attached eBPF programs. Dropping it detaches them.
pub struct Probe {
    // declared first so it drops first: detach before anything else goes
    links: Vec<Link>,
    ring: Ring,
    filter: Filter,
    maps: Maps,
    btf: bool,
    stacks: bool,
}

impl Probe {
    /// Opens, loads and attaches the programs (tp_btf on kernels with BTF, raw_tp otherwise).
    /// Nothing is traced until [`Probe::follow`] or [`Probe::spawn`].
    pub fn load(opts: &Options) -> Result<Probe, Error> {
        if let Some(ns) = own_pid_namespace() {
            return Err(Error::Unsupported(format!(
                "syslint runs in a PID namespace of its own ({ns}, a container or `unshare -p`) and the \
                 kernel program sees only the host's pids: it would record nothing. Run syslint in the \
                 host's PID namespace (it traces processes inside namespaces from there), or use \
                 --backend strace"
            )));
        }
        if let Some((maj, min)) = kernel_version() {
            if (maj, min) < (5, 8) {
                return Err(Error::Unsupported(format!(
                    "kernel {maj}.{min} has no BPF ring buffer (needs 5.8 or later)"
                )));
            }
        }
        let btf = !opts.force_no_btf && Path::new("/sys/kernel/btf/vmlinux").exists();
        let _quiet = QuietLibbpf::new();
        let (links, maps) = if btf {
            load_variant!(
                skel_btf::SyslintSkelBuilder,
                opts,
                [sl_sys_enter, sl_sys_exit, sl_fork, sl_exec, sl_exit, sl_signal]
            )
        } else {
            load_variant!(skel_nobtf::SyslintNobtfSkelBuilder, opts, [sl_sys_enter_raw, sl_sys_exit_raw])
        };
        let ring = Ring::new(maps.events.as_fd(), maps.events.max_entries())?;
        let filter = Filter::new(&maps.traced)?;
        let stacks = btf && opts.stacks.is_some();
        Ok(Probe { links, ring, filter, maps, btf, stacks })
    }

    /// True when the tp_btf variant is loaded, false for the raw_tp fallback.
    pub fn has_btf(&self) -> bool {
        self.btf
    }

    /// The ring buffer of the sampled calls' stacks, for a thread of its own to read; None when
    /// stacks were not asked for, the raw_tp variant is loaded (it sends none), or it was
    /// taken already.
    pub fn take_stack_ring(&mut self) -> Result<Option<crate::StackRing>, Error> {
        if !std::mem::take(&mut self.stacks) {
            return Ok(None);
        }
        let map = MapHandle::try_from(&self.maps.stack_events).map_err(map_err("duplicating the stack ring"))?;
        crate::StackRing::new(map).map(Some)
    }

    /// How many calls were sampled for a stack, sent, lost (the stack ring was full), summed
    /// over CPUs.
    pub fn stack_stats(&self) -> crate::StackStats {
        let mut s = crate::StackStats::default();
        for v in self.percpu::<abi::StackStats>(&self.maps.stack_stats, 0) {
            s.sampled += v.sampled;
            s.sent += v.sent;
            s.lost += v.lost;
            s.bytes += v.bytes;
        }
        s
    }

    /// Traces a running process: all its threads (they share the tgid) and, from now on, its
    /// children. A thread blocked in a syscall right now is seen from its next call.
    pub fn follow(&mut self, tgid: u32) -> Result<(), Error> {
        if !Path::new(&format!("/proc/{tgid}")).exists() {
            return Err(Error::Other(format!("no process {tgid}")));
        }
        self.filter.add(tgid)
    }

    /// Starts `argv` (looked up in PATH like execvp) traced from its first syscall: the child
    /// waits on a pipe until its pid is in the filter map, then execs.
    pub fn spawn(&mut self, argv: &[OsString]) -> Result<Child, Error> {
        let filter = &self.filter;
        spawn::spawn_gated(argv, &mut |pid| filter.add(pid))
    }

    /// Waits up to `timeout` for records (the kernel wakes this only when 256 KiB are waiting;
    /// otherwise it returns after the timeout), then delivers every record that is there to `f`,
    /// read in place. Returns how many records were delivered.
    pub fn poll(&mut self, timeout: Duration, f: &mut dyn FnMut(Record<'_>)) -> Result<usize, Error> {
        self.ring.wait(timeout)?;
        let mut n = 0;
        self.ring.read(&mut |b| {
            if let Some(r) = crate::record::parse(b) {
                f(r);
                n += 1;
            }
        })?;
        Ok(n)
    }

    /// Like [`Probe::poll`], but appends the records as they lie in the ring buffer (about
    /// `max` bytes at most) to `out`, for [`crate::parse_chunk`] to read later, maybe on another
    /// thread: one copy, no per-record work. Returns how many records.
    pub fn poll_copy(&mut self, timeout: Duration, out: &mut Vec<u8>, max: usize) -> Result<usize, Error> {
        self.ring.wait(timeout)?;
        Ok(self.ring.copy(out, max)? as usize)
    }

    /// Reports the runs of identical calls the kernel is still counting (threads that have not
    /// broken their run, ended, or reached the 100 ms report) as Repeat records, and a started
    /// repetition as its Syscall record, through `f`; then resets those runs. Meant for the end
    /// of a trace: while the threads run on, a call racing with this can be miscounted.
    pub fn flush_pending(&mut self, f: &mut dyn FnMut(Record<'_>)) -> Result<(), Error> {
        let keys: Vec<Vec<u8>> = self.maps.threads.keys().collect();
        for key in keys {
            let Some(raw) = self.maps.threads.lookup(&key, MapFlags::ANY).map_err(map_err("reading thread state"))?
            else {
                continue;
            };
            let Some(mut t) = abi::read::<abi::Thread>(&raw) else { continue };
            if t.period == 0 {
                continue;
            }
            let tid = key.get(..4).and_then(|k| k.try_into().ok()).map(u32::from_ne_bytes).unwrap_or(0);
            if t.count > 0 {
                f(Record::Repeat {
                    tgid: t.tgid,
                    tid,
                    period: t.period,
                    count: t.count,
                    first_ts: t.first_ts,
                    last_ts: t.last_ts,
                    dur_sum_ns: t.dur_sum,
                });
            }
            if t.partial > 0 {
                // the partial repetition's call is the older record
                let s = t.hist[usize::from(t.newest ^ 1) & 1];
                let l1 = usize::from(s.len1).min(abi::SIG_DATA);
                let l2 = usize::from(s.len2).min(abi::SIG_DATA - l1);
                f(Record::Syscall {
                    tgid: t.tgid,
                    tid,
                    nr: s.nr,
                    args: s.args,
                    ret: s.ret,
                    ts_enter: t.part_ts_enter,
                    ts_exit: t.part_ts_exit,
                    data1: crate::record::data(s.kinds & 0xf, &s.data[..l1], false, false),
                    data2: crate::record::data(s.kinds >> 4, &s.data[l1..l1 + l2], false, false),
                    unfinished: false,
                    began_before: false,
                });
            }
            t.count = 0;
            t.period = 0;
            t.partial = 0;
            t.hist_n = 0;
            // the thread may have ended meanwhile: then there is nothing to reset
            let _ = self.maps.threads.update(&key, abi::bytes(&t), MapFlags::EXIST);
        }
        Ok(())
    }

    /// Detaches the programs: nothing more is captured (the maps and the ring buffer stay
    /// readable). The end of a trace does this before it empties the ring buffer, which a
    /// program still attached to a busy process refills as fast as it is read.
    pub fn detach(&mut self) {
        self.links.clear();
    }

    /// Records (and the syscalls they stood for) dropped because the ring buffer was full.
    pub fn lost(&self) -> Lost {
        let mut l = Lost::default();
        for v in self.percpu::<abi::Lost>(&self.maps.lost, 0) {
            l.records += v.records;
            l.syscalls += v.syscalls;
        }
        l
    }

    /// Summary-only counters, summed over CPUs: (syscall number, counts) for every syscall
    /// called at least once, by number.
    pub fn summary(&self) -> Vec<(u32, Counts)> {
        let mut out = Vec::new();
        for nr in 0..abi::NR_MAX as u32 {
            let mut c = Counts::default();
            for v in self.percpu::<abi::Counts>(&self.maps.counts, nr) {
                c.calls += v.calls;
                c.errors += v.errors;
                c.dur_ns += v.dur_ns;
            }
            if c.calls > 0 {
                out.push((nr, c));
            }
        }
        out
    }

    fn percpu<T: Pod>(&self, map: &MapHandle, key: u32) -> Vec<T> {
        match map.lookup_percpu(&key.to_ne_bytes(), MapFlags::ANY) {
            Ok(Some(vals)) => vals.iter().filter_map(|v| abi::read::<T>(v)).collect(),
            _ => Vec::new(),
        }
    }

    /// Close the window: from now on the kernel program records no new call of the traced
    /// threads, only the return of the calls they are already in (see [`Probe::waiting`]).
    pub fn close_window(&self) -> Result<(), Error> {
        let now = crate::monotonic_now_ns().max(1);
        self.maps
            .closing
            .update(&0u32.to_ne_bytes(), &now.to_ne_bytes(), MapFlags::ANY)
            .map_err(map_err("closing the window"))
    }

    /// The calls traced threads are in, that began before [`Probe::close_window`] and that
    /// `wanted(tgid, nr, args)` waits for; the others end the window when it closes.
    pub fn waiting(&self, wanted: &mut dyn FnMut(u32, u32, &[u64; 6]) -> bool) -> usize {
        let mut n = 0;
        for key in self.maps.threads.keys() {
            let Ok(Some(raw)) = self.maps.threads.lookup(&key, MapFlags::ANY) else { continue };
            let Some(t) = abi::read::<abi::Thread>(&raw) else { continue };
            // ts_enter 0: a call begun before the attach (its length is unknown anyway)
            if t.in_flight != 0 && t.ts_enter != 0 && wanted(t.tgid, t.nr, &t.args) {
                n += 1;
            }
        }
        n
    }

    /// How many capture-table rows the kernel holds (a self-check for tests and `--debug`).
    pub fn capture_rows(&self) -> usize {
        (0..abi::NR_MAX as u32)
            .filter(|nr| {
                matches!(self.maps.caps.lookup(&nr.to_ne_bytes(), MapFlags::ANY),
                    Ok(Some(v)) if v.iter().any(|&b| b != 0))
            })
            .count()
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        // detach first, so nothing is produced into maps that are going away
        self.links.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_sizes_are_powers_of_two() {
        assert_eq!(ring_size(0), 4096);
        assert_eq!(ring_size(16 << 20), 16 << 20);
        assert_eq!(ring_size(5000), 8192);
    }
}
