//! Reading the BPF ring buffer through its memory mapping, without libbpf's callback per
//! record: records can be read in place ([`Ring::read`]) or their committed stretch copied in
//! one piece ([`Ring::copy`]) for another thread to parse later ([`frames`]).
//!
//! The layout is the kernel's (kernel/bpf/ringbuf.c, as libbpf's ringbuf.c reads it): a
//! writable page holding the consumer position, then a read-only page holding the producer
//! position followed by the data area mapped twice in a row, so a record that wraps around the
//! end is contiguous. Every record starts with an 8-byte header, `u32 len` (with a busy bit
//! while the producer writes it and a discard bit) and `u32 pg_off`, and takes its length
//! rounded up to 8 bytes.

#[cfg(feature = "load")]
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
#[cfg(feature = "load")]
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
#[cfg(feature = "load")]
use std::time::Duration;

#[cfg(feature = "load")]
use crate::Error;

const HDR: u64 = 8;
const BUSY: u32 = 1 << 31;
const DISCARD: u32 = 1 << 30;
#[cfg(feature = "load")]
/// What the programs let wait before they wake readers (opt_wakeup_bytes in syslint.bpf.c).
const WAKE_BYTES: u64 = 256 * 1024;
#[cfg(feature = "load")]
/// How long a ring holding a little is left to fill before reading it: at 50 MB/s of records
/// (nginx at full speed on the development VM) about 500 KiB, far below the 16 MiB ring.
const SHORT_WAIT: Duration = Duration::from_millis(10);

/// The bytes a record with `len` bytes of data takes in the ring (and in a copied stretch).
fn span(len: u32) -> u64 {
    (u64::from(len & !(BUSY | DISCARD)) + HDR + 7) & !7
}

#[cfg(feature = "load")]
pub(crate) struct Ring {
    fd: RawFd,
    cons: *mut u8,
    prod: *mut u8,
    data_size: u64,
    page: usize,
}

#[cfg(feature = "load")]
impl Ring {
    /// Maps the ring buffer map `fd` (of `max_entries` data bytes). The fd must stay open as
    /// long as the Ring lives.
    pub(crate) fn new(fd: BorrowedFd<'_>, max_entries: u32) -> Result<Ring, Error> {
        // SAFETY: sysconf reads no memory.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let page = usize::try_from(page).ok().filter(|&p| p > 0).unwrap_or(4096);
        let data_size = u64::from(max_entries);
        if data_size == 0 || !data_size.is_power_of_two() {
            return Err(Error::Other(format!("ring buffer of {data_size} bytes: not a power of two")));
        }
        let fd = fd.as_raw_fd();
        let map = |len: usize, prot: i32, off: usize| -> Result<*mut u8, Error> {
            // SAFETY: a fresh shared mapping of the map's pages; nothing else aliases it.
            let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, off as libc::off_t) };
            if p == libc::MAP_FAILED {
                return Err(Error::Other(format!("mapping the ring buffer: {}", std::io::Error::last_os_error())));
            }
            Ok(p.cast())
        };
        let cons = map(page, libc::PROT_READ | libc::PROT_WRITE, 0)?;
        let prod = match map(page + 2 * data_size as usize, libc::PROT_READ, page) {
            Ok(p) => p,
            Err(e) => {
                // SAFETY: unmapping exactly what was mapped above.
                unsafe { libc::munmap(cons.cast(), page) };
                return Err(e);
            }
        };
        Ok(Ring { fd, cons, prod, data_size, page })
    }

    fn consumer_pos(&self) -> &AtomicU64 {
        // SAFETY: the first word of the consumer page, 8-byte aligned, mapped while self lives.
        unsafe { &*(self.cons as *const AtomicU64) }
    }

    fn producer_pos(&self) -> &AtomicU64 {
        // SAFETY: the first word of the producer page, 8-byte aligned, mapped while self lives.
        unsafe { &*(self.prod as *const AtomicU64) }
    }

    /// The data area at ring position `pos`, with `len` bytes readable from there.
    fn at(&self, pos: u64) -> *const u8 {
        // SAFETY: the offset is below data_size, inside the doubly mapped data area.
        unsafe { self.prod.add(self.page + (pos & (self.data_size - 1)) as usize) }
    }

    fn header_len(&self, pos: u64) -> u32 {
        // SAFETY: a record header is 8-byte aligned inside the data area.
        unsafe { (*(self.at(pos) as *const AtomicU32)).load(Ordering::Acquire) }
    }

    /// Waits up to `timeout` for records worth reading. The programs submit without waking
    /// readers and force a wake-up only once `WAKE_BYTES` wait, and poll(2) returns at once
    /// whenever the ring holds anything at all; so: an empty ring sleeps in poll until that
    /// wake-up or the timeout, a ring holding a little sleeps a short while first (reading it
    /// at once would mean tiny batches, one per few records, at high rates), and a ring holding
    /// a lot returns at once. An interrupted wait is not an error.
    pub(crate) fn wait(&self, timeout: Duration) -> Result<(), Error> {
        if timeout.is_zero() {
            return Ok(());
        }
        let avail = self.producer_pos().load(Ordering::Acquire) - self.consumer_pos().load(Ordering::Relaxed);
        if avail >= WAKE_BYTES {
            return Ok(());
        }
        if avail > 0 {
            std::thread::sleep(timeout.min(SHORT_WAIT));
            return Ok(());
        }
        let mut p = libc::pollfd { fd: self.fd, events: libc::POLLIN, revents: 0 };
        let ms = timeout.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd.
        let rc = unsafe { libc::poll(&mut p, 1, ms) };
        if rc < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(Error::Other(format!("polling the ring buffer: {e}")));
            }
        }
        Ok(())
    }

    /// The header of the record at `pos` (below `prod`) and the bytes it takes; None while the
    /// kernel is still writing it.
    fn record_at(&self, pos: u64, prod: u64) -> Result<Option<(u32, u64)>, Error> {
        let len = self.header_len(pos);
        if len & BUSY != 0 {
            return Ok(None);
        }
        let s = span(len);
        if s > self.data_size || pos + s > prod {
            return Err(Error::Other(format!("ring buffer damaged: a record of {len} bytes at {pos}")));
        }
        Ok(Some((len, s)))
    }

    /// The committed records from the consumer position: (end position, records, bytes),
    /// stopping before `max` bytes or at a record still being written.
    fn committed(&self, max: u64) -> Result<(u64, u64, usize), Error> {
        let start = self.consumer_pos().load(Ordering::Acquire);
        let prod = self.producer_pos().load(Ordering::Acquire);
        let (mut pos, mut n) = (start, 0u64);
        while pos < prod {
            let Some((_, s)) = self.record_at(pos, prod)? else { break };
            if pos + s - start > max && n > 0 {
                break;
            }
            pos += s;
            n += 1;
        }
        Ok((pos, n, (pos - start) as usize))
    }

    /// Appends the committed records (ring headers included, see [`frames`]) to `out`, at most
    /// about `max` bytes, and frees their room in the ring. Returns how many records.
    pub(crate) fn copy(&mut self, out: &mut Vec<u8>, max: usize) -> Result<u64, Error> {
        let (end, n, bytes) = self.committed(max as u64)?;
        if n == 0 {
            return Ok(0);
        }
        let start = self.consumer_pos().load(Ordering::Relaxed);
        // SAFETY: `bytes` <= data_size committed bytes from the consumer position; the double
        // mapping makes them contiguous, and the kernel does not touch them before the
        // consumer position moves past them (below).
        let src = unsafe { std::slice::from_raw_parts(self.at(start), bytes) };
        out.extend_from_slice(src);
        self.consumer_pos().store(end, Ordering::Release);
        Ok(n)
    }

    /// Hands every committed record's data to `f` in place, then frees their room.
    pub(crate) fn read(&mut self, f: &mut dyn FnMut(&[u8])) -> Result<u64, Error> {
        let start = self.consumer_pos().load(Ordering::Relaxed);
        let prod = self.producer_pos().load(Ordering::Acquire);
        let (mut pos, mut n) = (start, 0u64);
        while pos < prod {
            let Some((len, s)) = self.record_at(pos, prod)? else { break };
            if len & DISCARD == 0 {
                // SAFETY: a committed record of `len` bytes after its header, inside the data area.
                f(unsafe { std::slice::from_raw_parts(self.at(pos).add(HDR as usize), (len & !DISCARD) as usize) });
                n += 1;
            }
            pos += s;
        }
        self.consumer_pos().store(pos, Ordering::Release);
        Ok(n)
    }
}

#[cfg(feature = "load")]
impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the two mappings made in new().
        unsafe {
            libc::munmap(self.prod.cast(), self.page + 2 * self.data_size as usize);
            libc::munmap(self.cons.cast(), self.page);
        }
    }
}

/// Why a copied stretch of the ring could not be read whole (the records before the damage
/// were handed out).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChunkError {
    #[error("{stray} stray bytes after {records} records")]
    Stray { stray: usize, records: u64 },
    #[error("a record of {len} bytes runs past its chunk after {records} records")]
    Overrun { len: u32, records: u64 },
    #[error("{unreadable} of {records} records could not be read")]
    Unreadable { unreadable: u64, records: u64 },
}

/// The records of a stretch [`Ring::copy`] made, in order: each data part to `f`. A damaged
/// stretch (a length running past its end) stops with an error after the whole records.
pub fn frames(mut b: &[u8], f: &mut dyn FnMut(&[u8])) -> Result<u64, ChunkError> {
    let mut n = 0;
    while !b.is_empty() {
        let Some(h) = b.get(..4) else { return Err(ChunkError::Stray { stray: b.len(), records: n }) };
        let len = u32::from_ne_bytes([h[0], h[1], h[2], h[3]]);
        let s = span(len) as usize;
        let Some(rec) = b.get(HDR as usize..HDR as usize + (len & !(BUSY | DISCARD)) as usize) else {
            return Err(ChunkError::Overrun { len: len & !(BUSY | DISCARD), records: n });
        };
        if len & (BUSY | DISCARD) == 0 {
            f(rec);
            n += 1;
        }
        b = b.get(s..).unwrap_or(&[]);
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(data: &[u8]) -> Vec<u8> {
        let mut v = (data.len() as u32).to_ne_bytes().to_vec();
        v.extend_from_slice(&[0; 4]);
        v.extend_from_slice(data);
        while !v.len().is_multiple_of(8) {
            v.push(0xaa);
        }
        v
    }

    #[test]
    fn frames_walks_padded_records_and_skips_discarded_ones() {
        let mut b = frame(b"abc");
        let mut d = frame(b"gone!");
        d[3] |= (DISCARD >> 24) as u8;
        b.extend(d);
        b.extend(frame(b"12345678"));
        let mut got = Vec::new();
        assert_eq!(frames(&b, &mut |r| got.push(r.to_vec())), Ok(2));
        assert_eq!(got, vec![b"abc".to_vec(), b"12345678".to_vec()]);
    }

    #[test]
    fn frames_reports_a_cut_stretch_after_the_whole_records() {
        let mut b = frame(b"whole");
        b.extend(&frame(b"cut short")[..12]);
        let mut got = 0;
        let e = frames(&b, &mut |_| got += 1).unwrap_err();
        assert_eq!(got, 1);
        assert_eq!(e, ChunkError::Overrun { len: 9, records: 1 });
        assert!(e.to_string().contains("runs past"), "{e}");
    }
}
