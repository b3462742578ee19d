//! The syslint binary: parse arguments, dispatch, map errors to exit codes. The work is done
//! in the library crates.

mod cli;
mod cmd;
mod output;
mod version;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    let result = match args.command {
        cli::Command::Analyze(a) => cmd::analyze::run(a),
        cli::Command::Trace(a) => cmd::trace::run(a),
        cli::Command::Diff(a) => cmd::diff::run(a),
        cli::Command::Export(a) => cmd::export::run(a),
        cli::Command::Agent(a) => cmd::agent::run(a),
        cli::Command::Explain(a) => cmd::explain::run(a),
        cli::Command::Detectors(a) => cmd::detectors::run(a),
        cli::Command::Completions(a) => cmd::completions::run(a),
        cli::Command::Man(a) => cmd::man::run(a),
        cli::Command::Schema(a) => cmd::schema::run(a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            if output::is_broken_pipe(&e) {
                // `syslint analyze big.log | head`: the reader left, nothing is wrong
                return ExitCode::SUCCESS;
            }
            eprintln!("syslint: error: {e:#}");
            ExitCode::from(cmd::EXIT_ERROR)
        }
    }
}
