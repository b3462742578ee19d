//! Thread and process ids as two types, so a per-thread key cannot be used where a process is
//! meant (a Go server's seven threads counted as seven processes, an fd opened on one thread
//! looked up under another).

use std::fmt;

/// A thread: the kernel's task id, strace's pid column (`0` when the trace has no pid column:
/// a single process).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tid(pub u32);

/// A process: its thread group id, which is the tid of its main thread.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tgid(pub u32);

impl Tgid {
    /// The process's main thread.
    pub fn main_thread(self) -> Tid {
        Tid(self.0)
    }
}

impl Tid {
    /// The process this thread leads, if it is the main thread (a new process starts as one).
    pub fn as_process(self) -> Tgid {
        Tgid(self.0)
    }
    /// Whether this is the main thread of `p`.
    pub fn leads(self, p: Tgid) -> bool {
        self.0 == p.0
    }
}

impl fmt::Display for Tid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Display for Tgid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::str::FromStr for Tid {
    type Err = std::num::ParseIntError;
    fn from_str(s: &str) -> Result<Tid, Self::Err> {
        s.parse().map(Tid)
    }
}
