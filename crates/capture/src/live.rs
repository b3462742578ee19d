//! Live capture with strace as a child process.
//!
//! strace writes its trace into a FIFO in a private temporary directory; the reader streams
//! it into the same parser as `analyze` (no temporary file the size of the trace). The
//! directory is removed as soon as both ends are open, so a syslint killed with SIGKILL leaves
//! nothing behind (one killed before strace opened the FIFO: the next start removes it). The traced
//! program keeps its own stdin/stdout/stderr: strace opens the FIFO close-on-exec, so the
//! program does not inherit it.
//!
//! Safety of the traced processes (measured with strace 6.1 here, see tests): if the reader
//! dies, strace (attached with -p) gets SIGPIPE and the kernel detaches it; strace running a
//! command would instead keep tracing and complain, so strace runs with a parent-death
//! signal of SIGKILL (util-linux `setpriv --pdeathsig`): when syslint dies, strace dies, and
//! the kernel detaches every tracee, which runs on.

use std::ffi::OsString;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// What to trace.
#[derive(Clone, Debug)]
pub enum Target {
    /// Run this command (following its children and threads).
    Command(Vec<OsString>),
    /// Attach to these processes (and their future children).
    Pids(Vec<u32>),
}

/// Why live capture could not start (or went wrong). Messages say what to do.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    #[error("strace is not installed: install it (Debian/Ubuntu: apt-get install strace; Fedora: dnf install strace)")]
    StraceMissing,
    #[error("command not found: {0}")]
    CommandNotFound(String),
    #[error("no process with pid {0}")]
    NoSuchPid(u32),
    #[error("not permitted to trace: {0}")]
    NotPermitted(String),
    #[error("strace failed ({status}){detail}")]
    StraceFailed { status: String, detail: String },
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// Find a program in PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        let p = PathBuf::from(name);
        return p.is_file().then_some(p);
    }
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).map(|d| d.join(name)).find(|p| p.is_file()))
        .unwrap_or(None)
}

/// Pids of processes whose name (`/proc/PID/comm`) or program file name is `name`.
pub fn pids_by_name(name: &str) -> Vec<u32> {
    let own = std::process::id();
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("/proc") else { return out };
    for e in rd.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        if pid == own {
            continue;
        }
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        let exe = std::fs::read_to_string(e.path().join("cmdline")).unwrap_or_default();
        let arg0 = exe.split('\0').next().unwrap_or("");
        let base = arg0.rsplit('/').next().unwrap_or(arg0);
        if comm.trim_end() == name || base == name {
            out.push(pid);
        }
    }
    out.sort_unstable();
    out
}

/// Explain why attaching to another process would fail, before strace tries.
fn check_attach_permission() -> Result<(), LiveError> {
    let has_ptrace_cap = has_ptrace_cap();
    let scope = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .unwrap_or(0);
    match scope {
        3 => Err(LiveError::NotPermitted(
            "kernel.yama.ptrace_scope=3 forbids attaching to any process until reboot; run the program under \
             `syslint trace -- CMD` instead"
                .into(),
        )),
        2 if !has_ptrace_cap => Err(LiveError::NotPermitted(
            "kernel.yama.ptrace_scope=2 allows attaching only with CAP_SYS_PTRACE: run as root".into(),
        )),
        1 if !has_ptrace_cap => Err(LiveError::NotPermitted(
            "kernel.yama.ptrace_scope=1 allows tracing only your own children: run as root, or \
             `sudo sysctl kernel.yama.ptrace_scope=0`, or start the program with `syslint trace -- CMD`"
                .into(),
        )),
        _ if nix::unistd::geteuid().is_root() && !has_ptrace_cap => Err(LiveError::NotPermitted(
            "root without CAP_SYS_PTRACE (a container?): run it with --cap-add=SYS_PTRACE".into(),
        )),
        _ => Ok(()),
    }
}

/// A process has one tracer: attaching to one that another strace, gdb or the like already
/// traces fails with EPERM, which read as "run as root" even to root (issue 29). Say who.
fn check_not_traced(pid: u32) -> Result<(), LiveError> {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return Ok(()) };
    let tracer = status.lines().find_map(|l| l.strip_prefix("TracerPid:")).and_then(|v| v.trim().parse::<u32>().ok());
    match tracer {
        Some(t) if t != 0 => {
            let comm = std::fs::read_to_string(format!("/proc/{t}/comm"))
                .map(|c| format!(" ({})", c.trim()))
                .unwrap_or_default();
            Err(LiveError::NotPermitted(format!(
                "pid {pid} is already traced by pid {t}{comm}, and a process can have only one tracer: stop that \
                 one first, or use --backend ebpf, which traces without ptrace"
            )))
        }
        _ => Ok(()),
    }
}

/// Without CAP_SYS_PTRACE, the kernel lets a process be traced only by its own user (its
/// real, effective and saved uids all the tracer's): say so before strace fails with a bare
/// EPERM (issue 16 saw an empty report and exit 0).
fn check_same_user(pid: u32) -> Result<(), LiveError> {
    if has_ptrace_cap() {
        return Ok(());
    }
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return Ok(()) };
    let uids: Vec<u32> = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .map(|v| v.split_whitespace().take(3).filter_map(|u| u.parse().ok()).collect())
        .unwrap_or_default();
    let me = nix::unistd::getuid();
    match uids.iter().find(|&&u| u != me.as_raw()) {
        None => Ok(()),
        Some(&other) => {
            let name = |uid: u32| {
                nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
                    .ok()
                    .flatten()
                    .map_or_else(|| format!("uid {uid}"), |u| format!("{} (uid {uid})", u.name))
            };
            Err(LiveError::NotPermitted(format!(
                "pid {pid} runs as {} and syslint as {}: tracing another user's process needs root \
                 (or CAP_SYS_PTRACE)",
                name(other),
                name(me.as_raw())
            )))
        }
    }
}

/// Whether syslint holds CAP_SYS_PTRACE: without it, the kernel lets it trace only its own
/// user's processes, and programs it traces run set-user-ID binaries without their privileges.
pub fn has_ptrace_cap() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let cap_eff = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .unwrap_or(0);
    cap_eff & (1 << 19) != 0 // CAP_SYS_PTRACE
}

/// Which calls strace prints the stack of (`-k`): the call sites findings name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum StackCalls {
    #[default]
    Off,
    /// Every call (`-k`): an unwind at every stop.
    All,
    /// These syscalls only, and only these are traced (`-k -e trace=...`): strace prints the
    /// stack of every call it prints, and cannot sample.
    Only(Vec<String>),
}

/// Whether this strace can print stacks (`-k` needs a build with libunwind or libdw: one
/// without says "Stack traces (-k/--stack-trace option) are not supported by this build").
pub fn strace_unwinds(strace: &Path) -> bool {
    Command::new(strace)
        .args(["-k", "-e", "trace=none", "-o", "/dev/null", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A running strace.
pub struct StraceSession {
    child: Child,
    dir: PathBuf,
    fifo: PathBuf,
    attach: bool,
    stderr: Option<std::thread::JoinHandle<String>>,
    /// What strace was asked to trace, for messages.
    pub what: String,
    /// Processes given that had exited before strace started (skipped).
    pub gone: Vec<u32>,
    /// What became of the stacks asked for, for the report's notes.
    pub stacks_note: Option<String>,
}

impl StraceSession {
    /// Start strace with the flags the analysis needs, keeping `payload_bytes` of each buffer
    /// (strace -s).
    pub fn start(target: &Target, payload_bytes: u16, stacks: &StackCalls) -> Result<StraceSession, LiveError> {
        let strace = which("strace").ok_or(LiveError::StraceMissing)?;
        let attach = matches!(target, Target::Pids(_));
        let (mut attach_pids, mut gone) = (Vec::new(), Vec::new());
        let what = match target {
            Target::Command(c) => {
                let prog = c.first().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
                if prog.is_empty() || which(&prog).is_none() {
                    return Err(LiveError::CommandNotFound(prog));
                }
                c.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ")
            }
            Target::Pids(pids) => {
                // one of several that is gone (exited between `--comm`'s scan and now) is
                // skipped, and the report says so; none left is an error
                let (live, dead): (Vec<u32>, Vec<u32>) = pids.iter().partition(|&&p| crate::procfs::running(p));
                if live.is_empty() {
                    return Err(LiveError::NoSuchPid(pids.first().copied().unwrap_or(0)));
                }
                gone = dead;
                check_attach_permission()?;
                for &p in &live {
                    check_not_traced(p)?;
                    check_same_user(p)?;
                }
                let what =
                    format!("pid {}", live.iter().map(std::string::ToString::to_string).collect::<Vec<_>>().join(","));
                attach_pids = live;
                what
            }
        };
        remove_stale_fifo_dirs(&std::env::temp_dir());
        let dir = std::env::temp_dir().join(format!(
            "syslint-{}-{}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir(&dir)?;
        let fifo = dir.join("trace");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR)
            .map_err(|e| LiveError::Io(io::Error::from(e)))?;

        // when syslint dies, strace dies, and the kernel lets the tracees run on
        let mut cmd = match which("setpriv") {
            Some(setpriv) => {
                let mut c = Command::new(setpriv);
                c.args(["--pdeathsig", "KILL"]).arg(&strace);
                c
            }
            None => Command::new(&strace),
        };
        cmd.args(["-f", "-q", "-tt", "-T", "-yy", "-s"]).arg(payload_bytes.to_string()).arg("-o").arg(&fifo);
        let stacks_note = match stacks {
            StackCalls::Off => None,
            _ if !strace_unwinds(&strace) => Some(format!(
                "no call sites: {} cannot print stacks (-k needs a build with libunwind or libdw)",
                strace.display()
            )),
            StackCalls::All => {
                cmd.arg("-k");
                Some("strace printed the stack of every call (-k)".to_string())
            }
            StackCalls::Only(names) => {
                // `?name`: a name this strace does not know (another architecture's) is no error
                let set: Vec<String> = names.iter().map(|n| format!("?{n}")).collect();
                cmd.arg("-k").arg("-e").arg(format!("trace={}", set.join(",")));
                Some(format!(
                    "strace traced {} syscalls with their stacks (-k -e trace=...): the others are not in this trace",
                    names.len()
                ))
            }
        };
        match target {
            Target::Command(c) => {
                cmd.arg("--").args(c);
            }
            Target::Pids(_) => {
                for p in &attach_pids {
                    cmd.arg("-p").arg(p.to_string());
                }
                // nothing inherits strace's stderr when attaching: keep its messages
                cmd.stdin(Stdio::null()).stderr(Stdio::piped());
            }
        }
        let mut child = cmd.spawn().map_err(|e| {
            let _ = std::fs::remove_dir_all(&dir);
            LiveError::Io(e)
        })?;
        let stderr = child.stderr.take().map(|mut e| {
            std::thread::spawn(move || {
                let mut s = String::new();
                let _ = e.read_to_string(&mut s);
                s
            })
        });
        Ok(StraceSession { child, dir, fifo, attach, stderr, what, gone, stacks_note })
    }

    pub fn strace_pid(&self) -> u32 {
        self.child.id()
    }

    /// Open the trace stream. Waits until strace opened the FIFO, or fails if strace exits
    /// before (e.g. it could not attach).
    pub fn output(&mut self) -> Result<std::fs::File, LiveError> {
        let (tx, rx) = mpsc::channel();
        let fifo = self.fifo.clone();
        std::thread::spawn(move || {
            let _ = tx.send(std::fs::File::open(&fifo));
        });
        loop {
            match rx.recv_timeout(Duration::from_millis(20)) {
                Ok(f) => {
                    let f = f?;
                    // both ends are open (the open returns once strace opened it to write):
                    // the name is no longer needed, and nothing is left behind in the temporary
                    // directory however syslint ends (SIGKILL runs no destructor)
                    let _ = std::fs::remove_dir_all(&self.dir);
                    return Ok(f);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(LiveError::Io(io::Error::other("trace stream lost")));
                }
            }
            if let Some(st) = self.child.try_wait()? {
                // unblock the opener, then report why strace is gone
                let _ = std::fs::OpenOptions::new().write(true).open(&self.fifo);
                return Err(self.failure(st));
            }
        }
    }

    /// Detach from the traced processes: they run on, strace ends, the stream ends.
    pub fn detach(&self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        // attached: strace detaches cleanly on SIGINT. Running a command, strace blocks
        // fatal signals (-I3); SIGKILL makes the kernel detach the command, which runs on.
        if !self.attach {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::SIGKILL);
            return;
        }
        // strace can hang in its own detach when a tracee is in the middle of a fork (seen
        // here with strace 6.1: the new child stays in ptrace-stop, the parent in clone, and
        // strace waits forever). A tracer that is gone releases every tracee, so if strace
        // has not ended after a grace period it is killed. A pidfd names this very process,
        // even if it is reaped (and its pid reused) before the grace period ends.
        let pidfd = pidfd_open(self.child.id());
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::SIGINT);
        if let Some(fd) = pidfd {
            std::thread::spawn(move || {
                std::thread::sleep(DETACH_GRACE);
                pidfd_kill(&fd);
            });
        }
    }

    /// Wait for strace to end; its status is the traced command's (strace passes it on).
    pub fn wait(&mut self) -> Result<ExitStatus, LiveError> {
        Ok(self.child.wait()?)
    }

    /// strace's own messages (attach mode only).
    pub fn messages(&mut self) -> String {
        self.stderr.take().and_then(|h| h.join().ok()).unwrap_or_default()
    }

    fn failure(&mut self, st: ExitStatus) -> LiveError {
        let msg = self.messages();
        let first = msg.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
        if msg.contains("Operation not permitted") {
            return LiveError::NotPermitted(format!(
                "{first} (run as root, or check kernel.yama.ptrace_scope and CAP_SYS_PTRACE)"
            ));
        }
        if msg.contains("No such process") {
            return LiveError::StraceFailed { status: st.to_string(), detail: format!(": {first}") };
        }
        let detail = if first.is_empty() { String::new() } else { format!(": {first}") };
        LiveError::StraceFailed { status: st.to_string(), detail }
    }
}

/// Remove the FIFO directories (`syslint-PID-NANOS` holding only the FIFO `trace`) of syslint
/// processes that are gone: one killed between creating its FIFO and strace opening it.
fn remove_stale_fifo_dirs(tmp: &Path) {
    let Ok(rd) = std::fs::read_dir(tmp) else { return };
    for e in rd.flatten() {
        let name = e.file_name();
        let Some((pid, stamp)) = name.to_str().and_then(|n| n.strip_prefix("syslint-")).and_then(|n| n.split_once('-'))
        else {
            continue;
        };
        let (Ok(pid), Ok(_)) = (pid.parse::<u32>(), stamp.parse::<u128>()) else { continue };
        if pid == std::process::id() || crate::procfs::running(pid) {
            continue;
        }
        let only_the_fifo = std::fs::read_dir(e.path()).is_ok_and(|d| {
            d.flatten().map(|f| f.file_name()).collect::<Vec<_>>() == [std::ffi::OsString::from("trace")]
        });
        let is_fifo = std::fs::symlink_metadata(e.path().join("trace"))
            .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type()));
        if only_the_fifo && is_fifo {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// How long strace may take to detach after SIGINT before it is killed.
const DETACH_GRACE: Duration = Duration::from_secs(3);

fn pidfd_open(pid: u32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
    let fd = unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_open, pid as nix::libc::c_int, 0) };
    // SAFETY: a non-negative return is a new fd that nothing else owns.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// SIGKILL the process behind a pidfd (nothing happens when it has already ended).
fn pidfd_kill(fd: &std::os::fd::OwnedFd) {
    use std::os::fd::AsRawFd;
    // SAFETY: plain syscall on an fd we own; a null siginfo means "as kill(2) would".
    unsafe {
        nix::libc::syscall(
            nix::libc::SYS_pidfd_send_signal,
            fd.as_raw_fd(),
            nix::libc::SIGKILL,
            std::ptr::null::<nix::libc::siginfo_t>(),
            0,
        );
    }
}

impl Drop for StraceSession {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A file for strace text, compressed by its ending (`.gz`, `.zst`) or plain.
pub fn text_writer(p: &Path) -> io::Result<Box<dyn io::Write + Send>> {
    let f = io::BufWriter::new(std::fs::File::create(p)?);
    let name = p.to_string_lossy();
    Ok(if name.ends_with(".gz") {
        Box::new(flate2::write::GzEncoder::new(f, flate2::Compression::default()))
    } else if name.ends_with(".zst") {
        Box::new(zstd::stream::write::Encoder::new(f, 3)?.auto_finish())
    } else {
        Box::new(f)
    })
}

/// Copies everything read into a recording (plain, or compressed by the file's ending).
pub struct Tee<R> {
    inner: R,
    out: Option<Box<dyn io::Write + Send>>,
    /// Set when writing the recording failed (the analysis goes on).
    pub error: Option<io::Error>,
}

impl<R: Read> Tee<R> {
    pub fn new(inner: R, path: Option<&Path>) -> io::Result<Tee<R>> {
        let out = match path {
            None => None,
            Some(p) => Some(text_writer(p)?),
        };
        Ok(Tee { inner, out, error: None })
    }

    /// Write `text` into the recording only (what syslint knows that the stream does not
    /// carry, e.g. [`crate::procfs::recording_line`]s), before the stream's next bytes.
    pub fn record(&mut self, text: &str) {
        if let Some(o) = self.out.as_mut() {
            if let Err(e) = o.write_all(text.as_bytes()) {
                self.error = Some(e);
                self.out = None;
            }
        }
    }

    /// Flush and close the recording.
    pub fn finish(&mut self) -> io::Result<()> {
        if let Some(mut o) = self.out.take() {
            o.flush()?;
        }
        Ok(())
    }
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(o) = self.out.as_mut() {
            if let Err(e) = o.write_all(&buf[..n]) {
                self.error = Some(e);
                self.out = None;
            }
        }
        Ok(n)
    }
}

/// Now in the clock of live strace's `-tt` timestamps: nanoseconds since local midnight (the
/// end of a live trace, in its events' clock).
pub fn time_of_day_now_ns() -> i64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let tt = now.as_secs() as nix::libc::time_t;
    // SAFETY: a zeroed struct tm is a valid value (integers and a null zone pointer)
    let mut tm: nix::libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: localtime_r reads one time_t and writes one struct tm, both valid locals.
    unsafe { nix::libc::localtime_r(&tt, &mut tm) };
    let secs = i64::from(tm.tm_hour) * 3600 + i64::from(tm.tm_min) * 60 + i64::from(tm.tm_sec);
    secs * 1_000_000_000 + i64::from(now.subsec_nanos())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_fifo_dirs_of_dead_syslints_are_removed() {
        let tmp = std::env::temp_dir().join(format!("syslint-stale-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir(&tmp).unwrap();
        let fifo_dir = |name: &str| {
            let d = tmp.join(name);
            std::fs::create_dir(&d).unwrap();
            nix::unistd::mkfifo(&d.join("trace"), nix::sys::stat::Mode::S_IRUSR).unwrap();
            d
        };
        let dead = fifo_dir("syslint-4000000000-17");
        let ours = fifo_dir(&format!("syslint-{}-17", std::process::id()));
        // not syslint's: another name, or more than the FIFO inside
        let other = fifo_dir("syslint-4000000000-x");
        let more = fifo_dir("syslint-4000000001-17");
        std::fs::write(more.join("notes"), "keep").unwrap();
        remove_stale_fifo_dirs(&tmp);
        assert!(!dead.exists());
        assert!(ours.exists() && other.exists() && more.exists());
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
