//! `syslint man [--dir DIR]`: manual pages made by clap_mangen from the definitions the parser
//! and `--help` use (cli.rs): syslint.1, and syslint-NAME.1 for each command.

use crate::cli::{Cli, ManArgs};
use anyhow::{Context, Result};
use clap::CommandFactory;
use std::io::Write;

pub fn run(a: ManArgs) -> Result<u8> {
    let pages = pages()?;
    let Some(dir) = a.dir else {
        let mut out = crate::output::open(None)?;
        out.write_all(&pages[0].1)?;
        out.finish()?;
        return Ok(super::EXIT_CLEAN);
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot make {}", dir.display()))?;
    let mut written = Vec::new();
    for (name, page) in &pages {
        let path = dir.join(name);
        // each page whole or not at all (output::open writes beside it and renames)
        let mut f = crate::output::open(Some(&path))?;
        f.write_all(page)?;
        f.finish()?;
        written.push(path);
    }
    let mut out = std::io::stdout().lock();
    for p in written {
        writeln!(out, "{}", p.display())?;
    }
    Ok(super::EXIT_CLEAN)
}

/// (file name, roff text) of every page: syslint.1 first, then one per visible command.
pub fn pages() -> Result<Vec<(String, Vec<u8>)>> {
    // the version as a plain number: --version's text has the commit and a second line, which
    // would break the page's .TH line (and make the pages differ between two builds)
    let version = env!("CARGO_PKG_VERSION");
    let mut cmd = Cli::command().version(version).disable_help_subcommand(true);
    cmd.build();
    let source = format!("syslint {version}");
    let mut pages = Vec::new();
    let mut render = |c: clap::Command| -> Result<()> {
        let man = clap_mangen::Man::new(c).source(source.as_str()).manual("syslint manual");
        let mut roff = Vec::new();
        man.render(&mut roff)?;
        pages.push((man.get_filename(), ascii(&roff)));
        Ok(())
    };
    render(cmd.clone())?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        render(sub.clone())?;
    }
    Ok(pages)
}

/// Non-ASCII characters (the help's `…`, `→`) as groff's `\[uXXXX]` escapes: a page in plain
/// ASCII renders the same under any roff, with or without preconv (which man runs, and groff
/// alone does not: it reads the bytes as Latin-1 and warns).
fn ascii(roff: &[u8]) -> Vec<u8> {
    use std::fmt::Write as _;
    let text = String::from_utf8_lossy(roff);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let _ = write!(out, "\\[u{:04X}]", u32::from(c));
        }
    }
    out.into_bytes()
}
