//! State keyed by thread or process, kept right by the analyzer when it learns a pid alias: a
//! log without a pid column gains one when a second process appears, and the thread its
//! earlier lines belonged to (shown as 0) turns out to be a pid. A detector lists its maps in
//! [`Detector::keyed`](crate::registry::Detector::keyed); the analyzer re-keys them all, so no
//! detector has to remember to.

use super::Bounded;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hash};
use syslint_event::{Tgid, Tid};

/// A key that names a thread or a process (alone or with more, such as an fd).
pub trait IdKey: Sized {
    /// The key under the new id, when it names the aliased thread (or its process).
    fn aliased(&self, old: Tid, new: Tid) -> Option<Self>;
}

impl IdKey for Tid {
    fn aliased(&self, old: Tid, new: Tid) -> Option<Tid> {
        (*self == old).then_some(new)
    }
}

/// An object of a process, kept under the process's main thread (`crate::host`).
impl IdKey for (Tid, u64) {
    fn aliased(&self, old: Tid, new: Tid) -> Option<Self> {
        (self.0 == old).then_some((new, self.1))
    }
}

impl IdKey for Tgid {
    fn aliased(&self, old: Tid, new: Tid) -> Option<Tgid> {
        old.leads(*self).then_some(new.as_process())
    }
}

impl<T: Copy> IdKey for (Tgid, T) {
    fn aliased(&self, old: Tid, new: Tid) -> Option<Self> {
        self.0.aliased(old, new).map(|p| (p, self.1))
    }
}

impl<A: Copy, B: Copy> IdKey for (Tgid, A, B) {
    fn aliased(&self, old: Tid, new: Tid) -> Option<Self> {
        self.0.aliased(old, new).map(|p| (p, self.1, self.2))
    }
}

/// Re-key what is kept under `old` to `new`.
pub trait Rekey {
    fn alias(&mut self, old: Tid, new: Tid);
}

impl<K: IdKey + Hash + Eq + Clone, V, S: BuildHasher> Rekey for HashMap<K, V, S> {
    fn alias(&mut self, old: Tid, new: Tid) {
        let moves: Vec<(K, K)> = self.keys().filter_map(|k| k.aliased(old, new).map(|n| (k.clone(), n))).collect();
        for (from, to) in moves {
            if let Some(v) = self.remove(&from) {
                self.insert(to, v);
            }
        }
    }
}

impl<K: IdKey + Hash + Eq + Clone, S: BuildHasher> Rekey for HashSet<K, S> {
    fn alias(&mut self, old: Tid, new: Tid) {
        let moves: Vec<(K, K)> = self.iter().filter_map(|k| k.aliased(old, new).map(|n| (k.clone(), n))).collect();
        for (from, to) in moves {
            self.remove(&from);
            self.insert(to);
        }
    }
}

impl<K: IdKey + Hash + Eq + Copy, V> Rekey for Bounded<K, V> {
    fn alias(&mut self, old: Tid, new: Tid) {
        self.rekey(|k| k.aliased(old, new));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustc_hash::FxHashMap;

    #[test]
    fn threads_processes_and_their_fds_follow_the_alias() {
        let (old, new) = (Tid(0), Tid(4242));
        let mut threads: FxHashMap<Tid, &str> = FxHashMap::default();
        threads.insert(old, "main");
        threads.insert(Tid(7), "other");
        threads.alias(old, new);
        assert_eq!((threads.get(&new), threads.get(&old), threads.get(&Tid(7))), (Some(&"main"), None, Some(&"other")));
        let mut fds: HashSet<(Tgid, i32)> = [(Tgid(0), 3), (Tgid(0), 4), (Tgid(9), 3)].into_iter().collect();
        fds.alias(old, new);
        assert!(fds.contains(&(Tgid(4242), 3)) && fds.contains(&(Tgid(4242), 4)) && fds.contains(&(Tgid(9), 3)));
        assert_eq!(fds.len(), 3);
        let mut runs: Bounded<(Tgid, i32, bool), u32> = Bounded::new(4);
        runs.insert((Tgid(0), 5, true), 1);
        runs.alias(old, new);
        assert_eq!(runs.get(&(Tgid(4242), 5, true)), Some(&1));
    }
}
