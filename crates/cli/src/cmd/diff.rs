//! `syslint diff`: not built yet; says so and what to do meanwhile.

use crate::cli::DiffArgs;
use anyhow::{bail, Result};

pub fn run(a: DiffArgs) -> Result<u8> {
    bail!(
        "`syslint diff` is not available in this version yet. Compare the two summaries by hand:\n  \
         syslint analyze --format json {} > before.json\n  syslint analyze --format json {} > after.json",
        a.before.display(),
        a.after.display()
    )
}
