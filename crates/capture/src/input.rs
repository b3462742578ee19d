//! Opening inputs (plain, gzip, zstd, stdin, `-ff` file sets, directories) and reading them
//! line by line from a large reused buffer.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Errors a capture source can report. The CLI prints them as one line each.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{path}: no such file or directory")]
    NotFound { path: String },
    #[error("{path}: permission denied")]
    PermissionDenied { path: String },
    /// (`err`, not `source`: the message already says it, an error chain would say it twice)
    #[error("{path}: {err}")]
    Io { path: String, err: io::Error },
    #[error("{path}: directory holds no trace files")]
    EmptyDir { path: String },
    #[error("{path}: directory holds no trace files, only symbolic links (not followed inside a directory) or syslint recordings (analysed by name): give them by name")]
    OnlyLinks { path: String },
}

impl InputError {
    pub(crate) fn from_io(path: &Path, e: io::Error) -> InputError {
        let path = path.display().to_string();
        match e.kind() {
            io::ErrorKind::NotFound => InputError::NotFound { path },
            io::ErrorKind::PermissionDenied => InputError::PermissionDenied { path },
            _ => InputError::Io { path, err: e },
        }
    }
}

pub use crate::compress::Compression;

/// One input: a path (or `-` for stdin) and, for `-ff` files named `NAME.PID`, the pid.
#[derive(Clone, Debug)]
pub struct Source {
    pub path: PathBuf,
    pub pid: Option<u32>,
}

impl Source {
    pub fn name(&self) -> String {
        if self.is_stdin() {
            "<stdin>".into()
        } else {
            self.path.display().to_string()
        }
    }
    pub fn is_stdin(&self) -> bool {
        self.path.as_os_str() == "-"
    }
    /// Size on disk, when known (for progress).
    #[allow(clippy::len_without_is_empty)] // a size, not a collection
    pub fn len(&self) -> Option<u64> {
        if self.is_stdin() {
            None
        } else {
            std::fs::metadata(&self.path).ok().map(|m| m.len())
        }
    }
}

/// Expand the command-line inputs: files, `-`, and directories (every regular file inside,
/// as written by `strace -ff -o DIR/trace`). A file named `NAME.PID` (`.gz`, `.zst`) gets that
/// pid for its lines that have no pid column, alone or among others: strace -ff writes the pid
/// in the name, not in the lines.
pub fn expand_sources(args: &[PathBuf]) -> Result<Vec<Source>, InputError> {
    expand_sources_noting(args).map(|(s, _)| s)
}

/// [`expand_sources`], and what it left out, said: symbolic links inside a directory are not
/// followed (syslint may run with more rights than whoever made the directory, and a link
/// named like an `-ff` file can point anywhere); a link given by name is read.
pub fn expand_sources_noting(args: &[PathBuf]) -> Result<(Vec<Source>, Vec<String>), InputError> {
    let mut skipped = Vec::new();
    let mut files = Vec::new();
    for a in args {
        if a.as_os_str() == "-" {
            files.push(a.clone());
            continue;
        }
        let meta = std::fs::metadata(a).map_err(|e| InputError::from_io(a, e))?;
        if meta.is_dir() {
            let rd = std::fs::read_dir(a).map_err(|e| InputError::from_io(a, e))?;
            let mut inside: Vec<PathBuf> = Vec::new();
            let links_before = skipped.len();
            for e in rd.filter_map(std::result::Result::ok) {
                let p = e.path();
                if e.file_type().is_ok_and(|t| t.is_symlink()) {
                    if p.is_file() {
                        skipped.push(format!(
                            "{}: a symbolic link inside a directory, not followed (give its target by name to read it)",
                            p.display()
                        ));
                    }
                } else if crate::ebpf::slr::is_slr(&p) {
                    skipped.push(format!(
                        "{}: a syslint recording, not read with the text files of the directory (analyse it by name)",
                        p.display()
                    ));
                } else if p.is_file() {
                    inside.push(p);
                }
            }
            if inside.is_empty() {
                let path = a.display().to_string();
                return Err(if skipped.len() == links_before {
                    InputError::EmptyDir { path }
                } else {
                    InputError::OnlyLinks { path }
                });
            }
            inside.sort();
            files.extend(inside);
        } else {
            files.push(a.clone());
        }
    }
    skipped.sort();
    let sources = files
        .into_iter()
        .map(|path| {
            let pid = ff_pid(&path);
            Source { path, pid }
        })
        .collect();
    Ok((sources, skipped))
}

/// `trace.1234` (or `trace.1234.gz`/`.zst`) -> 1234.
fn ff_pid(p: &Path) -> Option<u32> {
    let name = p.file_name()?.to_str()?;
    let name = name.strip_suffix(".gz").or_else(|| name.strip_suffix(".zst")).unwrap_or(name);
    let (_, suffix) = name.rsplit_once('.')?;
    if suffix.bytes().all(|c| c.is_ascii_digit()) && !suffix.is_empty() {
        suffix.parse().ok()
    } else {
        None
    }
}

/// Counts bytes pulled from the underlying file (compressed bytes for compressed input).
pub struct Counting<R> {
    pub(crate) inner: R,
    pub count: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// Open a source for reading, decompressing gzip/zstd transparently. `progress` is bumped
/// with the bytes read from disk.
pub fn open(
    src: &Source,
    progress: std::sync::Arc<std::sync::atomic::AtomicU64>,
) -> Result<(Box<dyn Read + Send>, Compression), InputError> {
    let raw: Box<dyn Read + Send> = if src.is_stdin() {
        Box::new(io::stdin())
    } else {
        Box::new(File::open(&src.path).map_err(|e| InputError::from_io(&src.path, e))?)
    };
    // the first bytes decide the compression: read until there are enough of them (a pipe
    // whose writer paused after one byte once made a recording read as text)
    let mut counting = Counting { inner: raw, count: progress };
    let (head, err) = peek(&mut counting, 4);
    if let (Some(e), true) = (err, head.is_empty()) {
        return Err(InputError::from_io(&src.path, e));
    }
    let comp = Compression::sniff(&head);
    let raw = io::BufReader::with_capacity(1 << 16, Peeked::new(head, None, counting));
    let r: Box<dyn Read + Send> = match comp {
        Compression::None => Box::new(raw),
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(raw)),
        Compression::Zstd => {
            Box::new(zstd::stream::read::Decoder::with_buffer(raw).map_err(|e| InputError::from_io(&src.path, e))?)
        }
    };
    Ok((r, comp))
}

/// [`open`] a source again and skip its first `pos` bytes (after decompression): a plain
/// file is seeked, a compressed one decompressed again up to there.
pub fn open_at(
    src: &Source,
    pos: u64,
    progress: std::sync::Arc<std::sync::atomic::AtomicU64>,
) -> Result<Box<dyn Read + Send>, InputError> {
    let (mut r, comp) = open(src, progress.clone())?;
    if pos == 0 {
        return Ok(r);
    }
    if comp == Compression::None && !src.is_stdin() {
        use std::io::Seek;
        let mut f = File::open(&src.path).map_err(|e| InputError::from_io(&src.path, e))?;
        f.seek(io::SeekFrom::Start(pos)).map_err(|e| InputError::from_io(&src.path, e))?;
        return Ok(Box::new(f));
    }
    io::copy(&mut (&mut r).take(pos), &mut io::sink()).map_err(|e| InputError::from_io(&src.path, e))?;
    Ok(r)
}

/// Up to `max` bytes from the start of `r`, and the error that stopped reading, if any.
pub fn peek<R: Read>(r: &mut R, max: usize) -> (Vec<u8>, Option<io::Error>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 64 << 10];
    while buf.len() < max {
        match r.read(&mut chunk[..(max - buf.len()).min(64 << 10)]) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (buf, Some(e)),
        }
    }
    (buf, None)
}

/// A regular file whose gzip stream holds a zstd one (a `.slr` recording gzipped again).
pub fn gzip_around_zstd(path: &Path) -> bool {
    let Ok(f) = File::open(path) else { return false };
    let mut gz = flate2::read::MultiGzDecoder::new(io::BufReader::new(f));
    let mut m = [0u8; 4];
    gz.read_exact(&mut m).is_ok() && Compression::sniff(&m) == Compression::Zstd
}

/// A zstd decoder over a reader (a recording inside another compression).
pub fn zstd_reader(r: Box<dyn Read + Send>) -> io::Result<Box<dyn Read + Send>> {
    Ok(Box::new(zstd::stream::read::Decoder::new(r)?))
}

/// A reader given back the first bytes [`peek`] took from it (and the error that ended them):
/// a stream read once can be looked into and still be read whole.
pub struct Peeked<R> {
    head: io::Cursor<Vec<u8>>,
    err: Option<io::Error>,
    rest: R,
}

impl<R> Peeked<R> {
    pub fn new(head: Vec<u8>, err: Option<io::Error>, rest: R) -> Self {
        Peeked { head: io::Cursor::new(head), err, rest }
    }

    /// The bytes taken back.
    pub fn head(&self) -> &[u8] {
        self.head.get_ref()
    }
}

impl<R: Read> Read for Peeked<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.head.read(buf)?;
        if n > 0 || buf.is_empty() {
            return Ok(n);
        }
        if let Some(e) = self.err.take() {
            return Err(e);
        }
        self.rest.read(buf)
    }
}

/// Whether a source is read as a stream that can be opened once only (stdin, a FIFO, a
/// character device), not a file that can be opened again.
pub fn is_stream(src: &Source) -> bool {
    src.is_stdin() || std::fs::metadata(&src.path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Reads lines out of a large buffer without copying each line. Lines longer than
/// `max_line` are cut (the rest skipped) so one enormous line cannot exhaust memory.
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    pub line_no: u64,
    max_line: usize,
    /// Lines cut because they exceeded `max_line`.
    pub cut_lines: u64,
    /// Inside a cut line: the rest up to its newline is skipped.
    pub skipping: bool,
    /// Bytes read from `inner`.
    read: u64,
}

pub const DEFAULT_MAX_LINE: usize = 4 << 20;

impl<R: Read> LineReader<R> {
    pub fn new(inner: R) -> Self {
        Self::with_limits(inner, 1 << 20, DEFAULT_MAX_LINE)
    }

    pub fn with_limits(inner: R, cap: usize, max_line: usize) -> Self {
        LineReader {
            inner,
            buf: vec![0; cap.max(1024)],
            start: 0,
            end: 0,
            eof: false,
            line_no: 0,
            max_line: max_line.max(1024),
            cut_lines: 0,
            skipping: false,
            read: 0,
        }
    }

    /// A reader of input that begins `pos` bytes into a file (reopened there).
    pub fn starting_at(mut self, pos: u64) -> Self {
        self.read = pos;
        self
    }

    /// Where the next line begins in the input (bytes read and not yet handed out excluded).
    pub fn pos(&self) -> u64 {
        self.read - (self.end - self.start) as u64
    }

    /// The next line without its `\n`, or `None` at the end. A read error (for example a
    /// truncated gzip stream) ends the input and is returned once.
    pub fn next_line(&mut self) -> io::Result<Option<&[u8]>> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                let s = self.start;
                self.start += i + 1;
                if self.skipping {
                    self.skipping = false;
                    continue;
                }
                self.line_no += 1;
                return Ok(Some(&self.buf[s..s + i]));
            }
            if self.eof {
                if self.start < self.end && !self.skipping {
                    let s = self.start;
                    self.start = self.end;
                    self.line_no += 1;
                    return Ok(Some(&self.buf[s..self.end]));
                }
                return Ok(None);
            }
            // make room: move the partial line to the front, grow if it fills the buffer
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.skipping && self.end > 0 {
                // still inside a cut line: drop what was read of it
                self.end = 0;
            }
            if self.end == self.buf.len() {
                if self.buf.len() >= self.max_line {
                    // give out what we have as a (cut) line and skip to the next newline
                    self.cut_lines += 1;
                    self.skipping = true;
                    self.line_no += 1;
                    self.start = self.end;
                    return Ok(Some(&self.buf[..self.end]));
                }
                let n = (self.buf.len() * 2).min(self.max_line);
                self.buf.resize(n, 0);
            }
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => {
                    self.end += n;
                    self.read += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.eof = true;
                    return Err(e);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_across_buffer_edges() {
        let text = (0..500).map(|i| format!("line {i}\n")).collect::<String>() + "last";
        let mut r = LineReader::with_limits(text.as_bytes(), 1024, 4096);
        let mut n = 0;
        let mut last = String::new();
        while let Some(l) = r.next_line().unwrap() {
            n += 1;
            last = String::from_utf8(l.to_vec()).unwrap();
        }
        assert_eq!(n, 501);
        assert_eq!(last, "last");
    }

    #[test]
    fn cuts_enormous_lines() {
        let text = format!("a\n{}\nb\n", "x".repeat(10_000));
        let mut r = LineReader::with_limits(text.as_bytes(), 1024, 2048);
        let mut lines = vec![];
        while let Some(l) = r.next_line().unwrap() {
            lines.push(l.len());
        }
        assert_eq!(lines, vec![1, 2048, 1]);
        assert_eq!(r.cut_lines, 1);
    }

    #[test]
    fn ff_pid_from_name() {
        assert_eq!(ff_pid(Path::new("/x/trace.1234")), Some(1234));
        assert_eq!(ff_pid(Path::new("/x/trace.1234.gz")), Some(1234));
        assert_eq!(ff_pid(Path::new("/x/trace.log")), None);
    }
}
