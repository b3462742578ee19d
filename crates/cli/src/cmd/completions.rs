//! `syslint completions SHELL`: the shell's completion script, made by clap_complete from the
//! definitions the parser uses (cli.rs), so it never lags behind an option.

use crate::cli::{Cli, CompletionsArgs};
use anyhow::Result;
use clap::CommandFactory;
use std::io::Write;

pub fn run(a: CompletionsArgs) -> Result<u8> {
    // made in memory, then written: clap_complete panics when its writer fails, and a reader
    // that leaves early (`| head`) is no error (main)
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut Cli::command(), "syslint", &mut script);
    let mut out = crate::output::open(None)?;
    out.write_all(&script)?;
    out.finish()?;
    Ok(super::EXIT_CLEAN)
}
