//! `syslint export`: an eBPF recording (.slr) as strace text, for people and other tools.

use crate::cli::{ExportArgs, ExportFormat};
use anyhow::{bail, Context, Result};
use std::io::Write;
use syslint_capture::ebpf::{format::strace_line, format::Formatter, slr};

pub fn run(a: ExportArgs) -> Result<u8> {
    let ExportFormat::Strace = a.format;
    if !slr::is_slr(&a.input) {
        bail!("{}: not a syslint recording (.slr files come from syslint trace -o FILE.slr)", a.input.display());
    }
    let mut out: Box<dyn Write> = match &a.output_file {
        Some(p) => syslint_capture::live::text_writer(p).with_context(|| format!("cannot write {}", p.display()))?,
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let rec = slr::open(&a.input).with_context(|| format!("cannot read {}", a.input.display()))?;
    let offset = rec.header.realtime_offset_ns;
    let mut f = Formatter::new(rec.known.clone());
    // fds from before an attach keep their -yy decoration in the text
    f.decorate = true;
    let mut line = String::new();
    let mut err = None;
    let info = rec.replay(&mut |r| {
        f.on_record(&r, &mut |ev| {
            if err.is_some() {
                return;
            }
            line.clear();
            strace_line(&mut line, ev, offset);
            if let Err(e) = out.write_all(line.as_bytes()) {
                err = Some(e);
            }
        })
    });
    if let Some(e) = err {
        return Err(e.into());
    }
    out.flush()?;
    if let Some(p) = info.problem {
        eprintln!("syslint: warning: {}: {p}", a.input.display());
    }
    if info.lost.records > 0 {
        eprintln!(
            "syslint: warning: {} records ({} syscalls) were lost during the capture",
            info.lost.records, info.lost.syscalls
        );
    }
    Ok(0)
}
