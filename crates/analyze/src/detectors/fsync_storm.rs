//! `fsync-storm` (SL008): flushes to stable storage (fsync, fdatasync, sync_file_range,
//! syncfs, sync, or writes to a file opened with O_SYNC/O_DSYNC) after every small write or
//! record, often with a journal file created and deleted around each (SQLite's rollback
//! journal in autocommit mode).
//!
//! Findings are per program, like failed-lookup-storm: the writers of one program are one
//! subject.

use super::failed_lookup_storm::resolve;
use super::{Evidence, EvidenceBuf, Span};
use crate::host::{Capped, Groups, Hosted, Merge, State};
use crate::kit::Metrics;
use crate::registry::{Ctx, FinishCtx};
use rustc_hash::FxHashMap as HashMap;
use syslint_event::{Class, Event, OpenFlags, Sys, Syscall, TargetKind};
use syslint_report::{Finding, Severity};

crate::detector!("fsync_storm", FsyncStorm { cfg, written: HashMap::default() });

/// Software that flushes this way by design, and the knob that trades it.
struct ByDesign {
    what: &'static str,
    knob: &'static str,
}

const POSTGRES: ByDesign = ByDesign {
    what: "PostgreSQL flushes its WAL at every commit by design (synchronous_commit = on, the default)",
    knob: "PostgreSQL: each commit waits for its WAL to be on disk because synchronous_commit = on \
(the default). Where losing the last few hundred milliseconds of commits on a crash is acceptable \
(the database stays consistent), set synchronous_commit = off, for the whole server or per session \
or transaction (SET LOCAL synchronous_commit = off) for the writes that can tolerate it; with many \
concurrent committers, commit_delay (with commit_siblings) lets commits share one flush; batch \
many statements per transaction; put pg_wal on faster storage. Never fsync = off.",
};
const DPKG: ByDesign = ByDesign {
    what: "dpkg flushes every unpacked file before renaming it into place by design",
    knob: "dpkg: it fsyncs each unpacked file so that a crash in the middle of an upgrade leaves \
either the old or the new file, never an empty one. Where a crash can be repaired by starting over \
(container and image builds, throw-away VMs), dpkg --force-unsafe-io (apt-get -o \
Dpkg::Options::=--force-unsafe-io, or force-unsafe-io in /etc/dpkg/dpkg.cfg.d/) skips the flushes; \
eatmydata does the same for any program.",
};
const MYSQL: ByDesign = ByDesign {
    what: "MySQL/MariaDB flushes its redo log at every commit by design (innodb_flush_log_at_trx_commit = 1, the default)",
    knob: "MySQL/MariaDB: each commit waits for the InnoDB redo log on disk because \
innodb_flush_log_at_trx_commit = 1 (the default, and sync_binlog = 1 for the binary log). Where \
losing up to a second of commits on a crash is acceptable, innodb_flush_log_at_trx_commit = 2 \
(write at commit, flush once a second) and sync_binlog = 0 or N; batch statements per transaction.",
};

/// Whether the flushes are a database's or package manager's durability by design, known by
/// what the syscalls show: the files flushed (a write-ahead log, a redo log, a package's
/// unpacked files). Never by the program's name: a program called `postgres` that flushes
/// after every record of its own files is judged like any other.
fn by_design(files: &[(&str, u64)]) -> Option<&'static ByDesign> {
    let any = |pat: &str| files.iter().any(|(f, _)| f.contains(pat));
    // a path component, also first in a relative path: the eBPF backend and strace without -y
    // see the path as the program opened it, relative to its data directory (`pg_wal/0000...`,
    // MySQL's `./ib_logfile0`)
    let part = |name: &str| {
        files.iter().any(|(f, _)| {
            let f = f.strip_prefix("./").unwrap_or(f);
            f.starts_with(name) || f.contains(&format!("/{name}"))
        })
    };
    if part("pg_wal/") || part("pg_xlog/") {
        Some(&POSTGRES)
    } else if any(".dpkg-new") || any("/var/lib/dpkg/") {
        Some(&DPKG)
    } else if part("ib_logfile") || any("#innodb_redo") {
        Some(&MYSQL)
    } else {
        None
    }
}

#[derive(Clone, Default)]
pub struct Group {
    sync_calls: u64,
    sync_writes: u64,
    timed: u64,
    sync_ns: u64,
    file_writes: u64,
    file_bytes: u64,
    span: Span,
    created: u64,
    removed: u64,
    /// Path -> opens with O_CREAT, unlinks after one.
    churn: Capped<Box<str>, Churn, MAX_FILES>,
    /// Flushed file -> flushes.
    synced: Capped<Box<str>, Flushes, MAX_FILES>,
    /// The first flushes and the last.
    evidence: Option<EvidenceBuf>,
    unlink: Option<Evidence>,
}

crate::merge!(Group {
    sync_calls: sum,
    sync_writes: sum,
    timed: sum,
    sync_ns: sum,
    file_writes: sum,
    file_bytes: sum,
    span: merge,
    created: sum,
    removed: sum,
    churn: merge,
    synced: merge,
    evidence: first,
    unlink: first,
});

/// A file created (opened with O_CREAT) and unlinked after: how often each.
#[derive(Clone, Copy, Default)]
pub struct Churn {
    created: u32,
    removed: u32,
}

impl Merge for Churn {
    fn merge(&mut self, o: Self) {
        self.created = self.created.saturating_add(o.created);
        self.removed = self.removed.saturating_add(o.removed);
    }
}

/// Flushes of one file.
#[derive(Clone, Copy, Default)]
pub struct Flushes(u64);

impl Merge for Flushes {
    fn merge(&mut self, o: Self) {
        self.0 += o.0;
    }
}

#[derive(Clone)]
pub struct FsyncStorm {
    cfg: Config,
    /// Bytes written to each disk file, by any process.
    written: HashMap<Box<str>, u64>,
}

/// Targets that are not files on a disk (terminals, /dev/null, proc files). A path relative to
/// the working directory is a file too (PostgreSQL opens `base/5/16396` and `pg_wal/...` from
/// its data directory): before, their writes were left out ("one flush per 38 bytes written"
/// for a checkpoint that wrote 13 MiB).
fn on_disk(display: &str) -> bool {
    !display.starts_with("/dev/")
        && !display.starts_with("/proc/")
        && !display.starts_with("/sys/")
        && (display.contains('/') || display.contains('.'))
}

impl FsyncStorm {
    /// A flush: a sync call, or a write to an O_SYNC/O_DSYNC file.
    fn flush(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall, write: bool) {
        let target = cx.target.filter(|t| t.kind == TargetKind::File).map(|t| t.display);
        let g = s.program();
        if write {
            g.sync_writes += 1;
        } else {
            g.sync_calls += 1;
        }
        if let Some(d) = sc.dur_ns {
            g.timed += 1;
            g.sync_ns += d;
        }
        g.span.add(ev.ts_ns);
        g.evidence.get_or_insert_with(|| EvidenceBuf::new(4)).push(ev);
        let key = match (target, sc.fd()) {
            (Some(t), _) => Some(std::borrow::Cow::Borrowed(t)),
            (None, Some(fd)) => Some(std::borrow::Cow::Owned(format!("fd {}", fd.num))),
            (None, None) => None,
        };
        if let Some(k) = key {
            match g.synced.0.get_mut(&*k) {
                Some(n) => n.0 += 1,
                None => {
                    if g.synced.0.len() < MAX_FILES {
                        g.synced.0.insert(k.into(), Flushes(1));
                    }
                }
            }
        }
    }

    fn opened(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall, fd: i64) {
        // the flags argument found once, asked three questions
        let flags = sc.open_flags().unwrap_or_default();
        let create = sc.sys == Sys::Creat || flags.contains(OpenFlags::CREAT);
        // O_SYNC holds O_DSYNC's bit
        let sync = flags.contains(OpenFlags::DSYNC);
        if sc.sys != Sys::Creat && sync {
            // followed until its close: nothing kept but that it is one
            if let Ok(fd) = u64::try_from(fd as i32) {
                s.object_or(fd, <()>::default);
            }
        }
        if !create {
            return;
        }
        let Some(p) = sc.path() else { return };
        let Some(path) = resolve(cx.model, ev.tid, sc, &p) else { return };
        let g = s.program();
        g.created += 1;
        match g.churn.0.get_mut(path.as_str()) {
            Some(c) => c.created = c.created.saturating_add(1),
            None => {
                if g.churn.0.len() < MAX_FILES {
                    g.churn.0.insert(path.into(), Churn { created: 1, removed: 0 });
                }
            }
        }
    }

    fn unlinked(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        let p = sc.unlink_path();
        let Some(p) = p else { return };
        let Some(path) = resolve(cx.model, ev.tid, sc, &p) else { return };
        let g = s.program();
        if let Some(c) = g.churn.0.get_mut(path.as_str()) {
            if c.created > c.removed {
                c.removed += 1;
                g.removed += 1;
                if g.unlink.is_none() {
                    g.unlink = Some(Evidence::of(ev));
                }
            }
        }
    }
}

impl Hosted for FsyncStorm {
    type Thread = ();
    type Program = Group;
    /// An fd opened with O_SYNC or O_DSYNC (its number), until its close: its writes are
    /// flushes.
    type Object = ();
    const MAX_OBJECTS: usize = MAX_SYNC_FDS;

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        // per (thread, fd): small writes since the last flush; flushes right after a few
        let mut since: std::collections::HashMap<(u32, i32), (u64, u64)> = Default::default();
        let (mut flushes, mut after_small) = (0u64, 0u64);
        let mut idx = Vec::new();
        for (i, c) in x.calls.iter().enumerate() {
            let Some(fd) = c.fd else { continue };
            if c.sys.is(syslint_event::Class::WRITE) {
                let e = since.entry((c.tid.0, fd)).or_default();
                e.0 += 1;
                e.1 += c.ret.unwrap_or(0).max(0) as u64;
            } else if matches!(c.sys, Sys::Fsync | Sys::Fdatasync) {
                flushes += 1;
                let (w, b) = since.remove(&(c.tid.0, fd)).unwrap_or((0, 0));
                if (1..=3).contains(&w) && b < 64 * 1024 {
                    after_small += 1;
                    idx.push(i);
                }
            }
        }
        // two or three, every flush right after a small write: the pattern, too few times to
        // say it goes on (stress-ng#531: a log line, then its fsync)
        let short = after_small < 4;
        if after_small < 2 || (short && after_small < flushes) || after_small * 5 < flushes * 4 {
            return Vec::new();
        }
        let what = x.calls[idx[0]].target.clone().unwrap_or_else(|| format!("fd {}", x.calls[idx[0]].fd.unwrap_or(-1)));
        let about = syslint_report::Subject::new(syslint_report::SubjectKind::File).name(what.clone());
        let mut ev = Vec::new();
        for &i in idx.iter().take(3) {
            if i > 0 {
                ev.push(i - 1);
            }
            ev.push(i);
        }
        let conf = Confidence::medium_if(!short);
        let why = if short {
            format!("{after_small} flushes, each right after a small write: too few in the excerpt to say it goes on; a log that must survive a crash does this on purpose")
        } else {
            format!("{after_small} flushes each right after a small write; a database flushing each commit does this too, by its configuration")
        };
        META.finding(
            if short { Severity::Info } else { Severity::Warning },
            format!("a flush after every small write: {after_small} fsync/fdatasync calls each after a write or a few"),
        )
        .about(what, about)
        .metrics([("flushes", flushes.into()), ("after_small_writes", after_small.into())])
        .lines(x.evidence(&ev, 6))
        .in_excerpt(x, conf, &why)
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, per_second, SysCounts, SysRows};
        use syslint_report::Confidence;
        const SYNC: &[Sys] = &[Sys::Fsync, Sys::Fdatasync, Sys::SyncFileRange, Sys::SyncFileRange2];
        const WRITE: &[Sys] = &[Sys::Write, Sys::Pwrite64, Sys::Writev, Sys::Pwritev, Sys::Pwritev2];
        // a table limited to the flushes (`syscount --syscall fsync`) cannot show the writes
        if !c.counted_any_of(WRITE) {
            return Vec::new();
        }
        let syncs = c.calls_of(SYNC);
        let writes = c.calls_of(WRITE);
        if syncs < 100 || syncs * 2 < writes {
            return Vec::new();
        }
        let sev = Severity::warning_if(syncs * 5 >= writes * 4);
        let rate = per_second(c, syncs, 0);
        META.finding(sev, format!("a flush for about every write: {syncs} fsync/fdatasync{rate} for {writes} writes"))
            .metrics([("syncs", syncs.into()), ("writes", writes.into())])
            .lines(count_lines(c, &[SYNC, WRITE].concat()))
            .in_table(
                c,
                Confidence::Medium,
                "flushes nearly as many as writes; the table cannot show which files, nor whether a database was asked to flush each commit",
            )
    }

    fn on_syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        match sc.sys {
            // sync_file_range(SYNC_FILE_RANGE_WRITE) only starts writeback (PostgreSQL's
            // checkpoint_flush_after, RocksDB): a flush waits for it (WAIT_AFTER)
            Sys::SyncFileRange | Sys::SyncFileRange2 if sc.sync_range_waits() == Some(false) => {}
            Sys::Fsync | Sys::Fdatasync | Sys::SyncFileRange | Sys::SyncFileRange2 | Sys::Syncfs | Sys::Sync
                if !sc.ret.is_err() =>
            {
                self.flush(s, cx, ev, sc, false);
            }
            Sys::Open | Sys::Openat | Sys::Creat => {
                if let Some(fd) = sc.ret.value().filter(|v| *v >= 0) {
                    self.opened(s, cx, ev, sc, fd);
                }
            }
            Sys::Unlink | Sys::Unlinkat if sc.ret.value() == Some(0) => self.unlinked(s, cx, ev, sc),
            Sys::Close => {
                if let Some(fd) = cx.closed_object(sc) {
                    s.end_object(fd, self);
                }
            }
            _ if sc.sys.is(Class::WRITE) && !sc.sys.is(Class::NET) => {
                let Some(t) = cx.target else { return };
                if t.kind != TargetKind::File || !on_disk(t.display) {
                    return;
                }
                let Some(bytes) = sc.bytes() else { return };
                let sync = sc.fd_num().and_then(|fd| u64::try_from(fd).ok()).is_some_and(|fd| s.existing_object(fd).is_some());
                // bytes per file, whoever wrote them: PostgreSQL's WAL writer flushes what the
                // backends wrote
                if let Some(b) = self.written.get_mut(t.display) {
                    *b += bytes;
                } else if self.written.len() < MAX_WRITTEN {
                    self.written.insert(t.display.into(), bytes);
                }
                let g = s.program();
                g.file_writes += 1;
                g.file_bytes += bytes;
                if sync {
                    self.flush(s, cx, ev, sc, true);
                }
            }
            _ => {}
        }
    }

    fn report(&mut self, groups: Groups<'_, Group>, cx: &FinishCtx) -> Vec<Finding> {
        let window_s = cx.window.map_or(0.0, |w| w.duration_s);
        groups.findings(cx.model, |g| {
            let flushes = g.sync_calls + g.sync_writes;
            if flushes < self.cfg.min_flushes.max(1) {
                return None;
            }
            // the bytes written to the files it flushed, by anyone (a WAL writer flushes what
            // the backends wrote), or its own writes when more
            let flushed_bytes: u64 = g.synced.0.keys().filter_map(|f| self.written.get(f)).sum();
            let bytes = g.file_bytes.max(flushed_bytes);
            let bytes_per_sync = bytes as f64 / flushes as f64;
            if bytes_per_sync > self.cfg.max_bytes_per_sync as f64 {
                return None;
            }
            // durations of most flushes (-T), not just of a few unfinished/resumed pairs
            let timed = g.timed > 0 && g.timed * 10 >= flushes * 9;
            let sync_s = g.sync_ns as f64 / 1e9;
            let share = if window_s > 0.0 { sync_s / window_s } else { 0.0 };
            let span_s = g.span.seconds();
            let rate_ok = span_s <= 0.0 || flushes as f64 / span_s >= self.cfg.warn_per_sec;
            let mut severity =
                Severity::warning_if((flushes >= self.cfg.warn_flushes && rate_ok) || (timed && sync_s >= self.cfg.warn_seconds));
            if timed && sync_s >= self.cfg.error_seconds && share >= 0.2 {
                severity = Severity::Error;
            }

            let mut files: Vec<(&str, u64)> = g.synced.0.iter().map(|(f, n)| (&**f, n.0)).collect();
            files.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            // a database committing, a package manager installing: the durability it was asked
            // for, traded by a setting, not a bug to fix: at most info, with the setting named
            let design = by_design(&files);
            if design.is_some() {
                severity = Severity::Info;
            }
            let journal =
                g.churn.0.iter().filter(|(_, c)| c.removed > 0).max_by(|a, b| a.1.removed.cmp(&b.1.removed).then(b.0.cmp(a.0)));

            let mut m = Metrics::new();
            m.count("flushes", flushes);
            m.count("sync_calls", g.sync_calls);
            m.count("sync_writes", g.sync_writes);
            m.count("file_writes", g.file_writes);
            m.count("file_bytes", g.file_bytes);
            m.count("flushed_file_bytes", flushed_bytes);
            m.value("syncs_per_write", flushes as f64 / g.file_writes.max(1) as f64);
            m.value("bytes_per_sync", bytes_per_sync);
            m.count("synced_files", g.synced.0.len());
            m.count("files_created", g.created);
            m.count("files_created_and_removed", g.removed);
            if span_s > 0.0 {
                m.value("syncs_per_sec", flushes as f64 / span_s);
            }
            if timed {
                m.value("sync_time_s", sync_s);
                m.value("avg_sync_ms", sync_s * 1e3 / g.timed as f64);
                if window_s > 0.0 {
                    m.value("share_of_window", share);
                }
            }

            let what = match (g.sync_calls, g.sync_writes) {
                (c, 0) => format!("{c} fsync/fdatasync calls"),
                (0, w) => format!("{w} O_SYNC/O_DSYNC writes"),
                (c, w) => format!("{} flushes ({c} sync calls, {w} O_SYNC/O_DSYNC writes)", c + w),
            };
            let mut message = format!(
                "{what}, one per {:.0} bytes written ({:.2} per file write)",
                bytes_per_sync,
                flushes as f64 / g.file_writes.max(1) as f64
            );
            if let Some((path, c)) = journal.filter(|(_, c)| c.removed >= 3) {
                message.push_str(&format!("; {path} created and deleted {} times", c.removed));
            } else if let Some((f, n)) = files.first() {
                message.push_str(&format!("; {n} of them on {f}"));
            }
            if let Some(d) = design {
                message.push_str(&format!(" ({})", d.what));
            }

            let cost = if timed {
                format!(
                    "{sync_s:.3} s waiting for flushes ({:.2} ms each, {}){}; one flush per batch \
would save about {} of them",
                    sync_s * 1e3 / g.timed as f64,
                    cx.tracer.measured(),
                    if window_s > 0.0 { format!(", {:.0}% of the traced time", share * 100.0) } else { String::new() },
                    flushes.saturating_sub(1)
                )
            } else {
                format!(
                    "time unknown (no -T); {flushes} flushes, each a wait for the device (a fraction of a millisecond \
on a fast SSD, several on a disk or network volume): about {:.1} s at 1 ms each; one flush per batch would save \
about {} of them",
                    flushes as f64 / 1e3,
                    flushes.saturating_sub(1)
                )
            };

            // the first flushes, the first unlink of a created file, the last flush
            let (first, last) = g.evidence.as_ref().map_or((&[][..], None), |e| (&e.first[..], e.last.as_ref()));
            let mut evidence: Vec<String> = first.iter().map(|e| e.render(cx.clock)).collect();
            if let Some(u) = &g.unlink {
                evidence.push(u.render(cx.clock));
            }
            if let Some(l) = last {
                evidence.push("...".into());
                evidence.push(l.render(cx.clock));
            }

            Some(
                META.finding(severity, message)
                    .over(&g.span)
                    .metrics(m)
                    .lines(evidence)
                    .cost(cost)
                    .fix(design.map_or(META.docs.fix, |d| d.knob)),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    // The fixture tests are data: fixtures/fsync-storm/expect.toml, run by src/check/fixtures.rs.
    use super::*;

    #[test]
    fn disk_files_only() {
        assert!(on_disk("/var/tmp/x.db"));
        assert!(on_disk("base/5/16396") && on_disk("rows.db"));
        assert!(!on_disk("/dev/null"));
        assert!(!on_disk("/proc/self/status"));
        assert!(!on_disk("pipe"));
    }
}
