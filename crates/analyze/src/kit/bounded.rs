//! A hash map with a cap: beyond it, new keys are refused and counted, existing keys still
//! update. Detectors keep per-thread, per-fd and per-path state in these so that no input, however
//! many threads or paths it has, grows a detector's memory without bound.

use rustc_hash::FxHashMap;
use std::hash::Hash;

#[derive(Clone, Debug)]
pub struct Bounded<K, V> {
    map: FxHashMap<K, V>,
    cap: usize,
    overflow: u64,
}

impl<K: Hash + Eq, V> Bounded<K, V> {
    /// A map holding at most `cap` keys.
    pub fn new(cap: usize) -> Self {
        Bounded { map: FxHashMap::default(), cap, overflow: 0 }
    }

    /// The value for `k`, created with `make` when absent and there is room; `None` (and one
    /// more refused key counted) when the map is full.
    pub fn entry(&mut self, k: K, make: impl FnOnce() -> V) -> Option<&mut V> {
        use std::collections::hash_map::Entry;
        let full = self.map.len() >= self.cap;
        match self.map.entry(k) {
            Entry::Occupied(e) => Some(e.into_mut()),
            Entry::Vacant(e) if !full => Some(e.insert(make())),
            Entry::Vacant(_) => {
                self.overflow += 1;
                None
            }
        }
    }

    /// Insert when there is room or the key exists; `false` (counted) when refused.
    pub fn insert(&mut self, k: K, v: V) -> bool {
        if self.map.len() >= self.cap && !self.map.contains_key(&k) {
            self.overflow += 1;
            return false;
        }
        self.map.insert(k, v);
        true
    }

    pub fn get(&self, k: &K) -> Option<&V> {
        self.map.get(k)
    }
    pub fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        self.map.get_mut(k)
    }
    pub fn contains_key(&self, k: &K) -> bool {
        self.map.contains_key(k)
    }
    pub fn remove(&mut self, k: &K) -> Option<V> {
        self.map.remove(k)
    }
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
    /// Keys refused because the map was full.
    pub fn overflow(&self) -> u64 {
        self.overflow
    }
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.map.iter()
    }
    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.map.keys()
    }
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.map.values_mut()
    }
    pub fn retain(&mut self, f: impl FnMut(&K, &mut V) -> bool) {
        self.map.retain(f);
    }
    /// Take everything out (the cap and the overflow count stay).
    pub fn drain(&mut self) -> impl Iterator<Item = (K, V)> + '_ {
        self.map.drain()
    }
    pub fn clear(&mut self) {
        self.map.clear();
    }
}

impl<K: Hash + Eq + Copy, V> Bounded<K, V> {
    /// Move the entries whose key `to` maps to a new key (a pid alias learnt: every key of the
    /// old pid becomes the same key of the new one). Moving never counts as overflow.
    pub fn rekey(&mut self, to: impl Fn(&K) -> Option<K>) {
        let moves: Vec<(K, K)> = self.map.keys().filter_map(|k| to(k).map(|n| (*k, n))).collect();
        for (old, new) in moves {
            if let Some(v) = self.map.remove(&old) {
                self.map.insert(new, v);
            }
        }
    }

    /// Remove and return the entries whose key matches (a process ended: its fds go).
    pub fn take_where(&mut self, pick: impl Fn(&K) -> bool) -> Vec<(K, V)> {
        let keys: Vec<K> = self.map.keys().filter(|k| pick(k)).copied().collect();
        keys.into_iter().filter_map(|k| self.map.remove(&k).map(|v| (k, v))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_new_keys_when_full_and_counts_them() {
        let mut m: Bounded<u32, u32> = Bounded::new(2);
        *m.entry(1, || 0).expect("room") += 1;
        *m.entry(2, || 0).expect("room") += 1;
        assert!(m.entry(3, || 0).is_none());
        assert!(!m.insert(4, 0));
        // existing keys still update
        *m.entry(1, || 0).expect("exists") += 1;
        assert_eq!((m.get(&1), m.len(), m.overflow()), (Some(&2), 2, 2));
    }

    #[test]
    fn rekey_and_take_where() {
        let mut m: Bounded<(u32, i32), &str> = Bounded::new(10);
        m.insert((0, 3), "a");
        m.insert((0, 4), "b");
        m.insert((7, 3), "c");
        m.rekey(|k| (k.0 == 0).then_some((12, k.1)));
        assert_eq!((m.get(&(12, 3)), m.get(&(12, 4)), m.get(&(0, 3))), (Some(&"a"), Some(&"b"), None));
        let mut gone = m.take_where(|k| k.0 == 12);
        gone.sort();
        assert_eq!(gone, vec![((12, 3), "a"), ((12, 4), "b")]);
        assert_eq!(m.len(), 1);
    }
}
