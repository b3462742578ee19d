//! [`Calls`]: which threads' calls of which syscalls a finding counts, for its call sites.

use crate::host::Merge;
use syslint_event::{Sys, Tid};

/// The (thread, syscall) pairs of the calls a finding counts, at most [`Calls::MAX`]. A finding
/// built with them ([`Draft::calls`](crate::draft::Draft::calls)) has the stacks of those calls
/// as its call sites; one without, the stacks of the calls its evidence lines show (which are
/// an example: a failed-lookup storm's longest search may be the loader's at startup while
/// most failures are another thread's `stat` calls).
#[derive(Clone, Default, Debug, PartialEq)]
pub struct Calls(Vec<(Tid, Sys)>);

impl Calls {
    /// Pairs kept; the calls of further pairs have no part in the call sites.
    pub const MAX: usize = 64;

    /// One more call of `sys` by `tid` counted.
    #[inline]
    pub fn add(&mut self, tid: Tid, sys: Sys) {
        let k = (tid, sys);
        if self.0.last() != Some(&k) && self.0.len() < Self::MAX && !self.0.contains(&k) {
            self.0.push(k);
        }
    }

    pub fn pairs(&self) -> &[(Tid, Sys)] {
        &self.0
    }
}

impl Merge for Calls {
    fn merge(&mut self, o: Self) {
        for (t, s) in o.0 {
            self.add(t, s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_kept_once_and_bounded() {
        let mut c = Calls::default();
        c.add(Tid(1), Sys::Stat);
        c.add(Tid(1), Sys::Stat);
        c.add(Tid(2), Sys::Openat);
        c.add(Tid(1), Sys::Stat);
        assert_eq!(c.pairs(), [(Tid(1), Sys::Stat), (Tid(2), Sys::Openat)]);
        let mut d = Calls::default();
        for t in 0..100 {
            d.add(Tid(t), Sys::Access);
        }
        assert_eq!(d.pairs().len(), Calls::MAX);
        c.merge(d);
        assert_eq!(c.pairs().len(), Calls::MAX);
        assert_eq!(c.pairs()[..2], [(Tid(1), Sys::Stat), (Tid(2), Sys::Openat)]);
    }
}
