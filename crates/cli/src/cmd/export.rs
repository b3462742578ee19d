//! `syslint export`: an eBPF recording (.slr) as strace text, for people and other tools.

use crate::cli::{ExportArgs, ExportFormat};
use anyhow::{bail, Context, Result};
use std::io::Write;
use syslint_capture::ebpf::slr;
use syslint_capture::input;
use syslint_pipeline::{open_stream, RecordingSource, StraceText, Stream};

pub fn run(a: ExportArgs) -> Result<u8> {
    let ExportFormat::Strace = a.format;
    let not_one =
        || format!("{}: not a syslint recording (.slr files come from syslint trace -o FILE.slr)", a.input.display());
    // stdin or a FIFO is opened once, and looked into then
    let src = input::Source { path: a.input.clone(), pid: None };
    let mut rec = if input::is_stream(&src) {
        match open_stream(&src)? {
            Stream::Recording(rec) => *rec,
            Stream::Text(..) => bail!(not_one()),
        }
    } else if slr::is_slr(&a.input) {
        RecordingSource::open(&a.input)?
    } else {
        bail!(not_one());
    };
    let out: Box<dyn Write> = match &a.output_file {
        // `-o -`: stdout, as no option does
        Some(p) if p.as_os_str() == "-" => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
        Some(p) => syslint_capture::live::text_writer(p).with_context(|| format!("cannot write {}", p.display()))?,
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let mut text = StraceText::new(out, rec.realtime_offset_ns());
    text.payloads = a.payloads;
    // fds from before an attach keep their -yy decoration in the text
    let info = rec.replay(&mut text, None);
    text.finish()?;
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
