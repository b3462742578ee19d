//! Starting a program so that its very first syscall is traced: fork, let the child wait on a
//! pipe until the parent has put its pid in the filter map, then exec.
//!
//! `std::process::Command::pre_exec` cannot do this: the parent only learns the pid after
//! `spawn` returns, which waits for the exec, which waits for the parent: a deadlock. So this
//! forks by hand. Everything the child needs (C strings, the resolved program path, the
//! environment) is prepared before the fork; between fork and exec the child only calls
//! async-signal-safe functions (read, write, execve, _exit).

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

/// A program started by [`crate::Probe::spawn`]. Dropping it does not kill or wait for it.
#[derive(Debug)]
pub struct Child {
    pid: u32,
    status: Option<ExitStatus>,
}

impl Child {
    /// The child's process id (also its tgid).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Waits for the child to end and returns how it ended (repeated calls return the same).
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(s) = self.status {
            return Ok(s);
        }
        let mut status = 0;
        loop {
            // SAFETY: waitpid on our own child's pid with a valid pointer to a c_int.
            let r = unsafe { libc::waitpid(self.pid as libc::pid_t, &mut status, 0) };
            if r >= 0 {
                break;
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        let s = ExitStatus::from_raw(status);
        self.status = Some(s);
        Ok(s)
    }

    /// Returns how the child ended if it has, without blocking.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if let Some(s) = self.status {
            return Ok(Some(s));
        }
        let mut status = 0;
        // SAFETY: as in wait(); WNOHANG makes it return 0 while the child runs.
        let r = unsafe { libc::waitpid(self.pid as libc::pid_t, &mut status, libc::WNOHANG) };
        match r {
            0 => Ok(None),
            r if r < 0 => Err(io::Error::last_os_error()),
            _ => {
                let s = ExitStatus::from_raw(status);
                self.status = Some(s);
                Ok(Some(s))
            }
        }
    }

    /// Sends a signal to the child (e.g. `libc::SIGKILL`).
    pub fn signal(&self, sig: i32) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        // SAFETY: kill(2) with our child's pid; no memory is involved.
        if unsafe { libc::kill(self.pid as libc::pid_t, sig) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Finds the program as execvp would: a name with a slash is used as it is, others are looked
/// up in $PATH (default "/usr/local/bin:/usr/bin:/bin").
fn resolve(program: &OsStr) -> io::Result<PathBuf> {
    if program.as_bytes().contains(&b'/') {
        return Ok(PathBuf::from(program));
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
    for dir in std::env::split_paths(&path) {
        let cand = if dir.as_os_str().is_empty() { Path::new(".").join(program) } else { dir.join(program) };
        let Ok(c) = CString::new(cand.as_os_str().as_bytes()) else { continue };
        // SAFETY: access(2) with a valid NUL-terminated path.
        if cand.is_file() && unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0 {
            return Ok(cand);
        }
    }
    Err(io::Error::new(io::ErrorKind::NotFound, format!("{} not found in PATH", program.to_string_lossy())))
}

fn cstring(s: &OsStr) -> io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "argument contains a NUL byte"))
}

fn pipe() -> io::Result<[libc::c_int; 2]> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two fds into a valid 2-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fds)
}

fn close(fd: libc::c_int) {
    // SAFETY: closing an fd this module opened and owns.
    unsafe { libc::close(fd) };
}

/// Forks; the child waits for `allow(pid)` to return, then execs `argv`. When `allow` fails the
/// child is killed and reaped and its error returned.
pub(crate) fn spawn_gated(
    argv: &[OsString],
    allow: &mut dyn FnMut(u32) -> Result<(), crate::Error>,
) -> Result<Child, crate::Error> {
    let spawn_err = |source: io::Error| crate::Error::Spawn {
        program: argv.first().map(|a| a.to_string_lossy().into_owned()).unwrap_or_default(),
        source,
    };
    let program = argv.first().ok_or_else(|| spawn_err(io::Error::new(io::ErrorKind::InvalidInput, "empty argv")))?;
    let path = cstring(resolve(program).map_err(spawn_err)?.as_os_str()).map_err(spawn_err)?;
    let args: Vec<CString> = argv.iter().map(|a| cstring(a)).collect::<io::Result<_>>().map_err(spawn_err)?;
    let mut arg_ptrs: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    arg_ptrs.push(std::ptr::null());
    let env: Vec<CString> = std::env::vars_os()
        .filter_map(|(k, v)| {
            let mut kv = k.into_vec();
            kv.push(b'=');
            kv.extend(v.into_vec());
            CString::new(kv).ok()
        })
        .collect();
    let mut env_ptrs: Vec<*const libc::c_char> = env.iter().map(|e| e.as_ptr()).collect();
    env_ptrs.push(std::ptr::null());

    let gate = pipe().map_err(spawn_err)?;
    let report = match pipe() {
        Ok(p) => p,
        Err(e) => {
            close(gate[0]);
            close(gate[1]);
            return Err(spawn_err(e));
        }
    };

    // SAFETY: fork in a possibly multi-threaded process; the child below only calls
    // async-signal-safe functions on memory prepared before the fork, then execs or _exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let e = io::Error::last_os_error();
        for fd in gate.into_iter().chain(report) {
            close(fd);
        }
        return Err(spawn_err(e));
    }
    if pid == 0 {
        // SAFETY (whole block): child after fork: only read/write/execve/_exit on fds and
        // pointers set up before the fork, which remain valid in the child's copy of memory.
        unsafe {
            libc::close(gate[1]);
            libc::close(report[0]);
            let mut b = 0u8;
            let n = loop {
                let n = libc::read(gate[0], (&mut b as *mut u8).cast(), 1);
                if n >= 0 || *libc::__errno_location() != libc::EINTR {
                    break n;
                }
            };
            if n == 1 {
                libc::execve(path.as_ptr(), arg_ptrs.as_ptr(), env_ptrs.as_ptr());
                let errno = *libc::__errno_location();
                libc::write(report[1], (&errno as *const libc::c_int).cast(), size_of::<libc::c_int>());
            }
            libc::_exit(127);
        }
    }
    close(gate[0]);
    close(report[1]);
    let mut child = Child { pid: pid as u32, status: None };
    if let Err(e) = allow(child.pid) {
        close(gate[1]); // the child reads EOF and _exits
        close(report[0]);
        let _ = child.wait();
        return Err(e);
    }
    let go = 1u8;
    // SAFETY: writing one byte from a valid buffer to the pipe we own.
    let w = unsafe { libc::write(gate[1], (&go as *const u8).cast(), 1) };
    close(gate[1]);
    if w != 1 {
        let e = io::Error::last_os_error();
        close(report[0]);
        let _ = child.wait();
        return Err(spawn_err(e));
    }
    // EOF on the report pipe (closed on exec) means the exec succeeded; 4 bytes are its errno.
    let mut errno: libc::c_int = 0;
    let n = loop {
        // SAFETY: reading into a valid c_int from the pipe we own.
        let n = unsafe { libc::read(report[0], (&mut errno as *mut libc::c_int).cast(), size_of::<libc::c_int>()) };
        if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            break n;
        }
    };
    close(report[0]);
    if n == size_of::<libc::c_int>() as isize {
        let _ = child.wait();
        return Err(spawn_err(io::Error::from_raw_os_error(errno)));
    }
    Ok(child)
}
