//! A module's unwind information for framehop: where `.eh_frame` (and its index), `.debug_frame`,
//! `.text` and `.got` are in the ELF file, read from the file mapped once (zero copy), and the
//! load bias that turns the file's addresses into the process's.

use std::ops::{Deref, Range};
use std::sync::Arc;

use object::{Object, ObjectSection, ObjectSegment, SegmentFlags};

use crate::maps::{Mapping, ModuleFile};

/// Bytes of a mapped file (a section), shared without copying.
#[derive(Clone)]
pub struct Bytes {
    map: Arc<memmap2::Mmap>,
    range: Range<usize>,
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.map.get(self.range.clone()).unwrap_or(&[])
    }
}

/// The sections framehop asks for, by name: (address in the file's terms, bytes in the file).
pub(crate) struct ElfSections {
    map: Arc<memmap2::Mmap>,
    sections: Vec<(Vec<u8>, Range<u64>, Range<usize>)>,
}

const WANTED: &[&[u8]] = &[b".eh_frame", b".eh_frame_hdr", b".debug_frame", b".text", b".got"];

/// Executable segments: (p_offset, p_vaddr, p_filesz).
pub(crate) type Segments = Vec<(u64, u64, u64)>;

/// Parses the ELF file: its unwind sections and executable segments. None for a file that is
/// not ELF.
pub(crate) fn read_elf(file: &ModuleFile) -> Option<(ElfSections, Segments)> {
    let data: &[u8] = &file.map;
    let obj = object::File::parse(data).ok()?;
    let mut sections = Vec::new();
    for s in obj.sections() {
        let Ok(name) = s.name_bytes() else { continue };
        if !WANTED.contains(&name) {
            continue;
        }
        let Some((off, size)) = s.file_range() else { continue };
        let (Ok(off), Ok(size)) = (usize::try_from(off), usize::try_from(size)) else { continue };
        let Some(end) = off.checked_add(size).filter(|&e| e <= data.len()) else { continue };
        sections.push((name.to_vec(), s.address()..s.address().saturating_add(s.size()), off..end));
    }
    let segments = obj
        .segments()
        .filter(|s| matches!(s.flags(), SegmentFlags::Elf { p_flags } if p_flags & object::elf::PF_X != 0))
        .map(|s| {
            let (off, size) = s.file_range();
            (off, s.address(), size)
        })
        .collect();
    Some((ElfSections { map: file.map.clone(), sections }, segments))
}

impl framehop::ModuleSectionInfo<Bytes> for ElfSections {
    fn base_svma(&self) -> u64 {
        0
    }

    fn section_svma_range(&mut self, name: &[u8]) -> Option<Range<u64>> {
        self.sections.iter().find(|s| s.0 == name).map(|s| s.1.clone())
    }

    fn section_data(&mut self, name: &[u8]) -> Option<Bytes> {
        self.sections.iter().find(|s| s.0 == name).map(|s| Bytes { map: self.map.clone(), range: s.2.clone() })
    }
}

/// The load bias of a file mapped as `m` (an executable mapping): the process address minus
/// the file's address, from the executable segment whose page-aligned file offset is the
/// mapping's.
pub(crate) fn bias(segments: &Segments, m: &Mapping) -> Option<u64> {
    const PAGE: u64 = 4096;
    segments.iter().find_map(|&(off, vaddr, size)| {
        let aligned = off & !(PAGE - 1);
        let inside = m.offset >= aligned && m.offset < off.saturating_add(size.max(1));
        inside.then(|| m.range.start.wrapping_sub((vaddr & !(PAGE - 1)).wrapping_add(m.offset - aligned)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::maps::parse_maps;

    /// Against this test binary as the kernel mapped it: the bias puts the address of a
    /// function of ours inside .text in the file's terms.
    #[test]
    fn bias_maps_our_own_code_back_into_the_file() {
        let maps = parse_maps(&std::fs::read_to_string("/proc/self/maps").expect("maps"));
        let here = bias_maps_our_own_code_back_into_the_file as fn() as usize as u64;
        let m = maps.iter().find(|m| m.exec && m.range.contains(&here)).expect("our code's mapping");
        let f = ModuleFile::open(std::process::id(), m).expect("open our own binary");
        let (mut secs, segs) = read_elf(&f).expect("ELF");
        let b = bias(&segs, m).expect("bias");
        let text = framehop::ModuleSectionInfo::section_svma_range(&mut secs, b".text").expect(".text");
        assert!(text.contains(&(here - b)), "{:x} not in {text:x?}", here - b);
        let eh = framehop::ModuleSectionInfo::section_data(&mut secs, b".eh_frame").expect(".eh_frame");
        assert!(eh.len() > 100);
    }
}
