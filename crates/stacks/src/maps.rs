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

/// A mount of this process's mount table: the file system (major, minor), the directory of
/// it that is mounted (its `root`), and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Mount {
    pub dev: (u32, u32),
    pub root: String,
    pub at: String,
}

/// This process's mount table, from /proc/self/mountinfo (empty when it cannot be read).
pub(crate) fn mounts() -> Vec<Mount> {
    std::fs::read_to_string("/proc/self/mountinfo").map(|t| parse_mountinfo(&t)).unwrap_or_default()
}

/// `/proc/PID/mountinfo` text: `ID PARENT MAJ:MIN ROOT MOUNT_POINT ...` (octal escapes such as
/// `\040` for a space decoded).
pub(crate) fn parse_mountinfo(text: &str) -> Vec<Mount> {
    let unescape = |s: &str| -> String {
        let b = s.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            let oct = b.get(i + 1..i + 4).filter(|d| b[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
            match oct.and_then(|d| u8::from_str_radix(std::str::from_utf8(d).ok()?, 8).ok()) {
                Some(c) => {
                    out.push(c);
                    i += 4;
                }
                None => {
                    out.push(b[i]);
                    i += 1;
                }
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    };
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let (maj, min) = f.get(2)?.split_once(':')?;
            Some(Mount {
                dev: (maj.parse().ok()?, min.parse().ok()?),
                root: unescape(f.get(3)?),
                at: unescape(f.get(4)?),
            })
        })
        .collect()
}

/// A mapping the kernel sent as a /proc line would give it: its file placed under a mount of
/// its file system where that path now holds the same inode (None when none does).
pub(crate) fn from_kernel(v: &syslint_bpf::KernelVma, mounts: &[Mount]) -> Option<Mapping> {
    use std::os::unix::fs::MetadataExt;
    let fs_path = v.fs_path.as_deref()?;
    let path = mounts.iter().filter(|m| m.dev == v.dev).find_map(|m| {
        let rest = if m.root == "/" { fs_path } else { fs_path.strip_prefix(m.root.as_str())? };
        if !rest.is_empty() && !rest.starts_with('/') {
            return None;
        }
        let p = if m.at == "/" { rest.to_string() } else { format!("{}{rest}", m.at) };
        std::fs::metadata(&p).is_ok_and(|x| x.ino() == v.inode).then_some(p)
    })?;
    Some(Mapping {
        range: v.start..v.end,
        offset: v.offset,
        exec: true,
        dev: u64::from(v.dev.0) << 32 | u64::from(v.dev.1),
        inode: v.inode,
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

    #[test]
    fn reads_mountinfo_and_places_files_under_their_mount() {
        use std::os::unix::fs::MetadataExt;
        let m = parse_mountinfo(
            "36 35 98:0 /mnt1 /mnt/par\\040ent rw,noatime master:1 - ext3 /dev/root rw\n22 1 8:1 / / rw - ext4 /dev/sda1 rw\nbad\n",
        );
        assert_eq!(
            m,
            [
                Mount { dev: (98, 0), root: "/mnt1".into(), at: "/mnt/par ent".into() },
                Mount { dev: (8, 1), root: "/".into(), at: "/".into() }
            ]
        );
        // this test's own binary, as the kernel would describe it: placed back where it is
        let me = std::env::current_exe().expect("exe");
        let meta = std::fs::metadata(&me).expect("stat");
        let mounts = mounts();
        let dev = ((meta.dev() >> 8 & 0xfff) as u32, ((meta.dev() & 0xff) | (meta.dev() >> 12 & 0xfff00)) as u32);
        let mine: Vec<&Mount> = mounts.iter().filter(|x| x.dev == dev).collect();
        let Some(mount) = mine.iter().find(|x| me.starts_with(&x.at)) else {
            panic!("no mount of {dev:?} holds {}: {mounts:#?}", me.display())
        };
        let rel = me.strip_prefix(&mount.at).expect("under its mount");
        let fs_path = format!("{}/{}", mount.root.trim_end_matches('/'), rel.display());
        let v = syslint_bpf::KernelVma {
            tgid: 1,
            mm_id: 1,
            start: 0x1000,
            end: 0x2000,
            offset: 0,
            inode: meta.ino(),
            dev,
            fs_path: Some(fs_path),
        };
        let got = from_kernel(&v, &mounts).expect("placed");
        assert_eq!(std::path::Path::new(&got.path), me);
        // another inode at that path: not placed
        assert!(from_kernel(&syslint_bpf::KernelVma { inode: meta.ino() + 1, ..v.clone() }, &mounts).is_none());
        assert!(from_kernel(&syslint_bpf::KernelVma { fs_path: None, ..v }, &mounts).is_none());
    }
}
