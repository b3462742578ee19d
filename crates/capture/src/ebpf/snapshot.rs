//! What the fds of a running process are, read from /proc when attaching: the analysis never
//! sees their open/socket/connect, so they are decorated the way `strace -yy` would
//! (`/var/log/x`, `TCP:[127.0.0.1:80->127.0.0.1:5000]`, `pipe:[123]`).

use super::format::Known;
use std::collections::HashMap;
use std::net::{Ipv4Addr, Ipv6Addr};

/// Add the fds of process `pid` to `known`. Unreadable entries (permissions, a process that
/// just ended) are skipped: the analysis then learns about those fds as strace without -y would.
pub fn fds_of(pid: u32, known: &mut Known) {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return };
    let mut sockets: Option<HashMap<u64, String>> = None;
    for e in dir.flatten() {
        let Some(fd) = e.file_name().to_str().and_then(|s| s.parse::<i64>().ok()) else { continue };
        let Ok(link) = std::fs::read_link(e.path()) else { continue };
        let link = link.to_string_lossy().into_owned();
        let deco = if let Some(ino) = link.strip_prefix("socket:[").and_then(|s| s.strip_suffix(']')) {
            let table = sockets.get_or_insert_with(|| socket_table(pid));
            match ino.parse::<u64>().ok().and_then(|i| table.get(&i)) {
                Some(d) => d.clone(),
                None => format!("socket:[{ino}]"),
            }
        } else {
            link
        };
        known.fds.insert((pid, fd), deco);
    }
}

/// inode -> `TCP:[local->remote]` (or `TCP:[local]` when listening) for the sockets in the
/// process's network namespace.
fn socket_table(pid: u32) -> HashMap<u64, String> {
    let mut m = HashMap::new();
    for (file, kind, v6) in
        [("tcp", "TCP", false), ("tcp6", "TCPv6", true), ("udp", "UDP", false), ("udp6", "UDPv6", true)]
    {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/net/{file}")) else { continue };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 10 {
                continue;
            }
            let (Some(local), Some(remote), Ok(ino)) = (addr(f[1], v6), addr(f[2], v6), f[9].parse::<u64>()) else {
                continue;
            };
            // 0A: listening; an unconnected UDP socket has a zero remote
            let listening = f[3] == "0A" || remote.ends_with(":0");
            let d = if listening { format!("{kind}:[{local}]") } else { format!("{kind}:[{local}->{remote}]") };
            m.insert(ino, d);
        }
    }
    if let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/net/unix")) {
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() >= 7 {
                if let Ok(ino) = f[6].parse::<u64>() {
                    let path = f.get(7).map(|p| format!(",\"{p}\"")).unwrap_or_default();
                    m.insert(ino, format!("UNIX-STREAM:[{ino}{path}]"));
                }
            }
        }
    }
    m
}

/// `0100007F:1F90` -> `127.0.0.1:8080`; v6 as four little-endian words -> `[::1]:8080`.
fn addr(s: &str, v6: bool) -> Option<String> {
    let (ip, port) = s.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    if !v6 {
        let v = u32::from_str_radix(ip, 16).ok()?;
        return Some(format!("{}:{port}", Ipv4Addr::from(v.to_le_bytes())));
    }
    if ip.len() != 32 {
        return None;
    }
    let mut b = [0u8; 16];
    for w in 0..4 {
        let v = u32::from_str_radix(&ip[w * 8..w * 8 + 8], 16).ok()?;
        b[w * 4..w * 4 + 4].copy_from_slice(&v.to_le_bytes());
    }
    let a = Ipv6Addr::from(b);
    Some(match a.to_ipv4_mapped() {
        Some(v4) => format!("{v4}:{port}"),
        None => format!("[{a}]:{port}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_net_addresses() {
        assert_eq!(addr("0100007F:1F90", false).as_deref(), Some("127.0.0.1:8080"));
        assert_eq!(addr("00000000000000000000000001000000:0050", true).as_deref(), Some("[::1]:80"));
        assert_eq!(addr("0000000000000000FFFF00000100007F:0050", true).as_deref(), Some("127.0.0.1:80"));
    }

    #[test]
    fn own_fds_are_named() {
        // this test process: a listening socket and a file it holds open
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().expect("addr").port();
        let f = std::fs::File::open("/proc/self/status").expect("open");
        let mut known = Known::default();
        fds_of(std::process::id(), &mut known);
        use std::os::fd::AsRawFd;
        let me = std::process::id();
        assert_eq!(
            known.fds.get(&(me, l.as_raw_fd() as i64)).map(String::as_str),
            Some(&*format!("TCP:[127.0.0.1:{port}]"))
        );
        assert!(known.fds.get(&(me, f.as_raw_fd() as i64)).is_some_and(|p| p.ends_with("/status")));
    }
}
