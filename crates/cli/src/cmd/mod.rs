pub mod analyze;
pub mod completions;
pub mod detectors;
pub mod diff;
pub mod explain;
pub mod export;
pub mod man;
pub mod schema;
pub mod trace;

/// No finding at or above the fail level.
pub const EXIT_CLEAN: u8 = 0;
/// Findings at or above the fail level.
pub const EXIT_FINDINGS: u8 = 1;
/// syslint itself failed (bad input, bad arguments, I/O).
pub const EXIT_ERROR: u8 = 2;
