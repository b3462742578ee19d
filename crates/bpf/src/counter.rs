//! The counting program (`src/bpf/counter.bpf.c`): calls and failures of every syscall of the
//! watched processes, counted in the kernel per group of processes, with one hook (sys_exit)
//! where the capture program has two, and no per-thread state. Read without a syscall (the
//! counts are a mapped array). For the agent's counting between windows.
//!
//! ```no_run
//! use syslint_bpf::Counter;
//!
//! let mut counter = Counter::load()?;
//! // two groups: processes 1234 and 1235, and process 2000
//! counter.watch(&[vec![1234, 1235], vec![2000]])?;
//! std::thread::sleep(std::time::Duration::from_secs(10));
//! for (group, rows) in counter.take().iter().enumerate() {
//!     for (nr, c) in rows {
//!         println!("group {group} syscall {nr}: {} calls, {} failed", c.calls, c.errors);
//!     }
//! }
//! # Ok::<(), syslint_bpf::Error>(())
//! ```

use std::collections::BTreeSet;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, Ordering};

use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{Link, MapCore, MapFlags, MapHandle};

use crate::abi;
use crate::probe::{map_err, map_values, Filter, QuietLibbpf};
use crate::{Counts, Error};

mod skel {
    include!(concat!(env!("OUT_DIR"), "/counter.skel.rs"));
}

const NR_MAX: usize = abi::NR_MAX;
const CELLS: usize = abi::COUNTER_GROUPS * NR_MAX;

/// The loaded and attached counting program. Dropping it detaches it.
pub struct Counter {
    // declared first so it drops first
    link: Option<Link>,
    filter: Filter,
    groups: MapHandle,
    /// The counts array, mapped: CELLS × {calls, errors}.
    cells: *mut AtomicU64,
    /// How many groups [`Counter::watch`] was given (the ones counted).
    watched: usize,
    /// The processes given a group (at most [`Counter::PIDS`]).
    pids: BTreeSet<u32>,
}

impl Counter {
    /// How many cgroups one counter counts apart.
    pub const GROUPS: usize = abi::COUNTER_GROUPS;

    /// Loads and attaches the counting program (tp_btf, so it needs BTF). Nothing is counted
    /// until [`Counter::watch`].
    pub fn load() -> Result<Counter, Error> {
        if !std::path::Path::new("/sys/kernel/btf/vmlinux").exists() {
            return Err(Error::Unsupported("counting in the kernel needs BTF (/sys/kernel/btf/vmlinux)".into()));
        }
        let _quiet = QuietLibbpf::new();
        let mut storage = MaybeUninit::uninit();
        let open =
            skel::CounterSkelBuilder::default().open(&mut storage).map_err(map_err("opening the counting program"))?;
        let skel = open.load().map_err(map_err("loading the counting program"))?;
        let handle = |m: &libbpf_rs::Map<'_>| MapHandle::try_from(m).map_err(map_err("duplicating a map handle"));
        let filter = Filter::new(&handle(&skel.maps.traced)?)?;
        let counts = handle(&skel.maps.slot_counts)?;
        let p = map_values(&counts, CELLS * std::mem::size_of::<abi::SlotCount>(), libc::PROT_READ, "the counts")?;
        let link = skel.progs.sl_count_exit.attach().map_err(map_err("attaching the counting program"))?;
        Ok(Counter {
            link: Some(link),
            filter,
            groups: handle(&skel.maps.groups)?,
            cells: p.cast(),
            watched: 0,
            pids: BTreeSet::new(),
        })
    }

    /// How many processes one counter counts at once.
    pub const PIDS: usize = abi::COUNTER_PIDS;

    /// Count these groups of processes from now on, each apart (group i's counts are
    /// [`Counter::take`]'s i-th). Groups beyond [`Counter::GROUPS`], and processes beyond
    /// [`Counter::PIDS`], are not counted: returns how many groups were (all or in part).
    pub fn watch(&mut self, groups: &[Vec<u32>]) -> Result<usize, Error> {
        for (i, pids) in groups.iter().take(Self::GROUPS).enumerate() {
            for &p in pids {
                if self.pids.len() >= Self::PIDS && !self.pids.contains(&p) {
                    return Ok(i);
                }
                self.groups
                    .update(&p.to_ne_bytes(), &(i as u32).to_ne_bytes(), MapFlags::ANY)
                    .map_err(map_err("naming a counted process"))?;
                self.pids.insert(p);
                self.filter.add(p)?;
            }
            self.watched = i + 1;
        }
        Ok(self.watched)
    }

    /// Each group's counts so far, by group as [`Counter::watch`] gave them: (syscall number,
    /// counts) for each syscall called, by number.
    pub fn take(&self) -> Vec<Vec<(u32, Counts)>> {
        (0..self.watched as u32)
            .map(|i| {
                self.read(i)
                    .into_iter()
                    .enumerate()
                    .filter(|(_, (calls, _))| *calls > 0)
                    .map(|(nr, (calls, errors))| (nr as u32, Counts { calls, errors, dur_ns: 0 }))
                    .collect()
            })
            .collect()
    }

    /// Group `i`'s (calls, errors) by syscall number now.
    fn read(&self, i: u32) -> Vec<(u64, u64)> {
        let base = i as usize * NR_MAX;
        (0..NR_MAX)
            .map(|nr| {
                let cell = 2 * (base + nr);
                // SAFETY: cell + 1 < 2 * CELLS, inside the mapping, alive as long as self.
                let (calls, errors) = unsafe { (&*self.cells.add(cell), &*self.cells.add(cell + 1)) };
                (calls.load(Ordering::Relaxed), errors.load(Ordering::Relaxed))
            })
            .collect()
    }

    /// Detaches the program (dropping the counter does too): nothing is counted after, and
    /// what was counted can still be taken.
    pub fn detach(&mut self) {
        self.link = None;
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        self.link = None;
        // SAFETY: unmapping exactly the mapping made in load().
        unsafe { libc::munmap(self.cells.cast(), CELLS * std::mem::size_of::<abi::SlotCount>()) };
    }
}

// SAFETY: the mapping is owned by the counter and read with atomic loads only.
unsafe impl Send for Counter {}
