//! The detector kit: the vocabulary detectors share, so a detector file holds only what is
//! particular to its pathology (model: clippy_utils).
//!
//! - [`Bounded`]: a hash map with a cap and an overflow counter (every per-thread, per-fd or
//!   per-path map a detector keeps must be bounded);
//! - [`Calls`]: the (thread, syscall) pairs a finding counts, for its call sites;
//! - [`Programs`]: processes grouped by the program they run, so the workers of one program
//!   are one subject;
//! - [`Span`], [`window`]: first and last time of something, and the report's window;
//! - [`Timing`]: the one policy for trusting `-T` durations; [`Typical`]: a median duration;
//! - [`Metrics`]: a typed builder for a finding's metrics (counts stay integers);
//! - [`Evidence`], [`EvidenceBuf`]: strace lines kept as evidence, payloads redacted; [`Shown`]:
//!   what a finding can show of them;
//! - [`dns`]: DNS messages, DNS sockets and timed-out waits, for the two DNS detectors;
//! - [`Rekey`], [`IdKey`]: maps keyed by thread or process, which the analyzer re-keys when a
//!   pid alias is learnt (a detector lists them in `Detector::keyed`).

mod bounded;
mod calls;
pub mod dns;
pub(crate) mod evidence;
mod keyed;
mod metrics;
mod programs;
mod time;

pub use bounded::Bounded;
pub use calls::Calls;
pub use evidence::{redact, redact_into, render_call_into, Evidence, EvidenceBuf, Shown};
pub use keyed::{IdKey, Rekey};
pub use metrics::Metrics;
pub use programs::Programs;
pub use time::{secs, window, Span, Timing, Typical};
