//! A process's memory map, read from `/proc/PID/maps` while it runs, and the module files
//! mapped in it opened at that moment (kept open, so a binary deleted or replaced later, or a
//! process gone, still gets its frames named).

use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One line of `/proc/PID/maps`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    pub range: Range<u64>,
    /// The offset in the file of `range.start`.
    pub offset: u64,
    pub exec: bool,
    /// (device, inode): 0 for anonymous memory.
    pub dev: u64,
    pub inode: u64,
    /// The file (or `[stack]`, `[vdso]`, `[heap]`, or empty for anonymous memory); a deleted
    /// file ends with " (deleted)".
    pub path: String,
}

impl Mapping {
    pub fn is_file(&self) -> bool {
        self.inode != 0 && self.path.starts_with('/')
    }
}

/// `/proc/PID/maps` text as mappings; lines it cannot read are skipped.
pub fn parse_maps(text: &str) -> Vec<Mapping> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Mapping> {
    let mut it = line.splitn(6, ' ');
    let (range, perms, offset, dev, inode) = (it.next()?, it.next()?, it.next()?, it.next()?, it.next()?);
    let path = it.next().map(str::trim_start).unwrap_or("").to_string();
    let (a, b) = range.split_once('-')?;
    let (start, end) = (u64::from_str_radix(a, 16).ok()?, u64::from_str_radix(b, 16).ok()?);
    let (maj, min) = dev.split_once(':')?;
    let dev = u64::from_str_radix(maj, 16).ok()? << 32 | u64::from_str_radix(min, 16).ok()?;
    Some(Mapping {
        range: start..end,
        offset: u64::from_str_radix(offset, 16).ok()?,
        exec: perms.as_bytes().get(2) == Some(&b'x'),
        dev,
        inode: inode.parse().ok()?,
        path,
    })
}

/// A mapped file opened while the process ran: what unwinding and symbolization read.
pub struct ModuleFile {
    /// The path as the process mapped it (" (deleted)" removed).
    pub path: String,
    /// A path that opens this very file now: the original while it is still the same file,
    /// else this process's `/proc/self/fd/N` of the open file.
    pub(crate) open_path: PathBuf,
    pub(crate) map: Arc<memmap2::Mmap>,
    // keeps /proc/self/fd/N valid
    _file: File,
}

impl ModuleFile {
    /// Opens the file mapped as `m` in process `pid`: through `/proc/PID/map_files/` (works
    /// for deleted files while the process lives), else by path; checks it is the mapped file
    /// (device and inode).
    pub(crate) fn open(pid: u32, m: &Mapping) -> Option<ModuleFile> {
        use std::os::unix::fs::MetadataExt;
        let path = m.path.strip_suffix(" (deleted)").unwrap_or(&m.path).to_string();
        let via_proc = PathBuf::from(format!("/proc/{pid}/map_files/{:x}-{:x}", m.range.start, m.range.end));
        let file = File::open(&via_proc).or_else(|_| File::open(&path)).ok()?;
        let meta = file.metadata().ok()?;
        if meta.ino() != m.inode {
            return None;
        }
        // SAFETY: a read-only private mapping of a file; a file changed under it (a binary
        // rewritten in place) can give wrong bytes, which unwinding and the ELF parser treat as
        // data (bounds-checked), never as memory to trust.
        let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        let same = std::fs::metadata(&path).is_ok_and(|p| p.ino() == m.inode && p.dev() == meta.dev());
        let open_path =
            if same { PathBuf::from(&path) } else { PathBuf::from(format!("/proc/self/fd/{}", fd_of(&file))) };
        Some(ModuleFile { path, open_path, map: Arc::new(map), _file: file })
    }

    pub(crate) fn open_path(&self) -> &Path {
        &self.open_path
    }
}

fn fd_of(f: &File) -> i32 {
    std::os::fd::AsRawFd::as_raw_fd(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_proc_maps_lines() {
        // this process's own map, as the kernel prints it
        let text = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
        let maps = parse_maps(&text);
        assert_eq!(maps.len(), text.lines().count(), "every line read");
        let me = std::env::current_exe().expect("exe");
        let exe = me.to_string_lossy();
        assert!(maps.iter().any(|m| m.exec && m.path == exe && m.is_file()), "{maps:#?}");
        assert!(maps.iter().any(|m| m.path == "[stack]" && !m.is_file()));
        let a =
            parse_line("7f0000001000-7f0000002000 r-xp 00003000 fd:01 1234   /usr/lib/x (deleted)").expect("a line");
        assert_eq!(
            (a.range, a.offset, a.exec, a.dev, a.inode),
            (0x7f0000001000..0x7f0000002000, 0x3000, true, 0xfd << 32 | 1, 1234)
        );
        assert_eq!(a.path, "/usr/lib/x (deleted)");
        assert!(parse_line("garbage").is_none());
    }
}
