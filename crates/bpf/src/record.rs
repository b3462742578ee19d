//! Ring-buffer records read from their bytes: what the live probe hands its caller, and what a
//! `.slr` recording holds (read without the loader: an analyze-only build reads recordings).

use std::mem::size_of;

use crate::{abi, Data, DataKind, Record};

fn data_kind(k: u8) -> DataKind {
    match k {
        abi::DATA_STR => DataKind::Str,
        abi::DATA_BYTES => DataKind::Bytes,
        abi::DATA_SOCKADDR => DataKind::Sockaddr,
        _ => DataKind::None,
    }
}

pub(crate) fn data(kind: u8, bytes: &[u8], truncated: bool, fault: bool) -> Data<'_> {
    if kind == abi::DATA_NONE {
        return Data::NONE;
    }
    Data { kind: data_kind(kind), bytes, truncated, fault }
}

/// One ring-buffer record as a [`Record`]; None for a record too short for its kind (never
/// produced by the kernel program).
pub(crate) fn parse(b: &[u8]) -> Option<Record<'_>> {
    match *b.first()? {
        abi::REC_SYSCALL => {
            let h = abi::read::<abi::SyscallRec>(b)?;
            let body = &b[size_of::<abi::SyscallRec>()..];
            let l1 = usize::from(h.data1_len).min(body.len());
            let l2 = usize::from(h.data2_len).min(body.len() - l1);
            Some(Record::Syscall {
                tgid: h.tgid,
                tid: h.tid,
                nr: h.nr,
                args: h.args,
                ret: h.ret,
                ts_enter: h.ts_enter,
                ts_exit: h.ts_exit,
                data1: data(h.data1_kind, &body[..l1], h.flags & abi::F_TRUNC1 != 0, h.flags & abi::F_FAULT1 != 0),
                data2: data(
                    h.data2_kind,
                    &body[l1..l1 + l2],
                    h.flags & abi::F_TRUNC2 != 0,
                    h.flags & abi::F_FAULT2 != 0,
                ),
                unfinished: h.flags & abi::F_UNFINISHED != 0,
                began_before: h.flags & abi::F_NO_ENTRY != 0,
            })
        }
        abi::REC_REPEAT => {
            let r = abi::read::<abi::RepeatRec>(b)?;
            Some(Record::Repeat {
                tgid: r.tgid,
                tid: r.tid,
                period: r.period,
                count: r.count,
                first_ts: r.first_ts,
                last_ts: r.last_ts,
                dur_sum_ns: r.dur_sum,
            })
        }
        abi::REC_FORK => {
            let r = abi::read::<abi::ForkRec>(b)?;
            Some(Record::Fork {
                parent_tgid: r.parent_tgid,
                parent_tid: r.parent_tid,
                child_tgid: r.child_tgid,
                child_tid: r.child_tid,
                is_thread: r.is_thread != 0,
                ts: r.ts,
            })
        }
        abi::REC_EXEC => {
            let r = abi::read::<abi::ExecRec>(b)?;
            let body = &b[size_of::<abi::ExecRec>()..];
            let l = usize::from(r.filename_len).min(body.len());
            Some(Record::Exec {
                tgid: r.tgid,
                tid: r.tid,
                old_tid: r.old_tid,
                filename: &body[..l],
                truncated: r.truncated != 0,
                ts: r.ts,
            })
        }
        abi::REC_SIGNAL => {
            let r = abi::read::<abi::SignalRec>(b)?;
            Some(Record::Signal { tgid: r.tgid, tid: r.tid, sig: r.sig, code: r.code, addr: r.addr, ts: r.ts })
        }
        abi::REC_EXIT => {
            let r = abi::read::<abi::ExitRec>(b)?;
            Some(Record::Exit {
                tgid: r.tgid,
                tid: r.tid,
                exit_code: r.exit_code,
                process_ended: r.group_dead != 0,
                ts: r.ts,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_syscall_record_with_two_slots() {
        let h = abi::SyscallRec {
            kind: abi::REC_SYSCALL,
            flags: abi::F_TRUNC2,
            data1_kind: abi::DATA_SOCKADDR,
            data2_kind: abi::DATA_BYTES,
            tgid: 10,
            tid: 11,
            nr: 44,
            args: [3, 4, 5, 6, 7, 8],
            ret: -11,
            ts_enter: 100,
            ts_exit: 200,
            data1_len: 2,
            data2_len: 3,
            _pad: 0,
        };
        let mut b = abi::bytes(&h).to_vec();
        b.extend_from_slice(&[2, 0, b'a', b'b', b'c']);
        let Some(Record::Syscall { tgid, tid, nr, args, ret, data1, data2, unfinished, .. }) = parse(&b) else {
            panic!("not a syscall record");
        };
        assert_eq!((tgid, tid, nr, args, ret, unfinished), (10, 11, 44, [3, 4, 5, 6, 7, 8], -11, false));
        assert_eq!((data1.kind, data1.bytes, data1.truncated), (DataKind::Sockaddr, &[2u8, 0][..], false));
        assert_eq!((data2.kind, data2.bytes, data2.truncated), (DataKind::Bytes, &b"abc"[..], true));
    }

    #[test]
    fn short_or_unknown_records_are_skipped() {
        assert_eq!(parse(&[]), None);
        assert_eq!(parse(&[abi::REC_REPEAT, 1, 0]), None);
        assert_eq!(parse(&[99; 64]), None);
    }
}
