//! What the fds of a running process are, read when attaching: the analysis never sees their
//! open/socket/connect, so they are decorated the way `strace -yy` would (`/var/log/x`,
//! `TCP:[127.0.0.1:80->127.0.0.1:5000]`, `pipe:[123]`).
//!
//! Sockets are named from the kernel's socket tables of the process's network namespace, asked
//! over sock_diag netlink as `ss` does, without the TIME_WAIT sockets (they belong to no fd).
//! /proc/PID/net/tcp is the fallback: a busy server churning connections keeps tens of
//! thousands of TIME_WAIT sockets, and reading that file then took 0.3-1.8 s; read once per
//! traced process, it held the attach for seconds (nginx in front of php-fpm, 70k TIME_WAIT:
//! 5.4 s between the first process followed and the trace starting, its kernel buffer
//! overflowing meanwhile). A table is read once per network namespace, again only when a
//! process holds a socket made since (sock_diag only: a container's namespace is read from
//! /proc once when syslint may not enter it).

use super::format::Known;
use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The sockets of the network namespaces met so far: inode -> decoration, and whether the
/// table came from sock_diag (cheap to read again).
#[derive(Default)]
pub struct Sockets {
    by_netns: HashMap<u64, (HashMap<u64, String>, bool)>,
    /// Our own network namespace (sock_diag answers for the namespace the asking socket was
    /// made in).
    own: Option<u64>,
}

impl Sockets {
    /// The decorations of `wanted` socket inodes of process `pid`: its namespace's table, read
    /// again when one of them is missing from it (a socket made since the last read) and the
    /// table came from sock_diag; one read from /proc stands for the whole attach.
    fn names(&mut self, pid: u32, wanted: &HashSet<u64>) -> &HashMap<u64, String> {
        let ns = netns_of(pid).unwrap_or(0);
        let own = *self.own.get_or_insert_with(|| netns_of(std::process::id()).unwrap_or(0));
        let stale = self.by_netns.get(&ns).is_none_or(|(t, cheap)| *cheap && wanted.iter().any(|i| !t.contains_key(i)));
        if stale {
            let diag = if ns == 0 {
                None
            } else if ns == own {
                diag::table().ok()
            } else {
                diag_in_netns_of(pid)
            };
            let cheap = diag.is_some();
            self.by_netns.insert(ns, (diag.unwrap_or_else(|| proc_table(pid)), cheap));
        }
        &self.by_netns[&ns].0
    }
}

/// [`diag::table`] asked from a thread that entered the network namespace of `pid` (a
/// container's): needs CAP_SYS_ADMIN, which the agent's manifests do not grant; None then.
fn diag_in_netns_of(pid: u32) -> Option<HashMap<u64, String>> {
    let ns = std::fs::File::open(format!("/proc/{pid}/ns/net")).ok()?;
    std::thread::scope(|s| {
        s.spawn(|| {
            // the thread's namespace only; it ends here
            nix::sched::setns(&ns, nix::sched::CloneFlags::CLONE_NEWNET).ok()?;
            diag::table().ok()
        })
        .join()
        .ok()
        .flatten()
    })
}

/// The inode of a process's network namespace (`net:[4026531840]`).
fn netns_of(pid: u32) -> Option<u64> {
    let l = std::fs::read_link(format!("/proc/{pid}/ns/net")).ok()?;
    l.to_str()?.strip_prefix("net:[")?.strip_suffix(']')?.parse().ok()
}

/// Add the fds of process `pid` to `known`. Unreadable entries (permissions, a process that
/// just ended) are skipped: the analysis then learns about those fds as strace without -y would.
pub fn fds_of(pid: u32, known: &mut Known, sockets: &mut Sockets) {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return };
    let mut links = Vec::new();
    for e in dir.flatten() {
        let Some(fd) = e.file_name().to_str().and_then(|s| s.parse::<i64>().ok()) else { continue };
        let Ok(link) = std::fs::read_link(e.path()) else { continue };
        links.push((fd, link.to_string_lossy().into_owned()));
    }
    let inode = |link: &str| link.strip_prefix("socket:[").and_then(|s| s.strip_suffix(']')?.parse::<u64>().ok());
    let wanted: HashSet<u64> = links.iter().filter_map(|(_, l)| inode(l)).collect();
    let table = if wanted.is_empty() { None } else { Some(sockets.names(pid, &wanted)) };
    for (fd, link) in links {
        let deco = match (inode(&link), table) {
            (Some(i), Some(t)) => t.get(&i).cloned().unwrap_or(link),
            _ => link,
        };
        known.fds.insert((pid, fd), deco);
    }
}

/// `TCP:[local->remote]`, or `TCP:[local]` for a listening socket (and an unconnected UDP one).
fn inet_deco(kind: &str, local: &str, remote: Option<&str>) -> String {
    match remote {
        Some(r) => format!("{kind}:[{local}->{r}]"),
        None => format!("{kind}:[{local}]"),
    }
}

/// The socket tables over sock_diag netlink, in our own network namespace.
mod diag {
    use netlink_packet_core::{NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_DUMP, NLM_F_REQUEST};
    use netlink_packet_sock_diag::constants::{
        AF_INET, AF_INET6, IPPROTO_TCP, IPPROTO_UDP, SOCK_DGRAM, SOCK_SEQPACKET, TCP_LISTEN,
    };
    use netlink_packet_sock_diag::inet::{ExtensionFlags, InetRequest, SocketId, StateFlags};
    use netlink_packet_sock_diag::unix::{self, ShowFlags, UnixRequest};
    use netlink_packet_sock_diag::SockDiagMessage;
    use netlink_sys::{protocols::NETLINK_SOCK_DIAG, Socket, SocketAddr};
    use std::collections::HashMap;
    use std::io::{Error, ErrorKind};

    /// Every TCP, UDP and unix socket that an fd can hold: inode -> decoration.
    pub(super) fn table() -> std::io::Result<HashMap<u64, String>> {
        let mut s = Socket::new(NETLINK_SOCK_DIAG)?;
        s.bind_auto()?;
        s.connect(&SocketAddr::new(0, 0))?;
        let mut m = HashMap::new();
        // TIME_WAIT sockets have no inode: left out in the kernel, the dump stays short
        let states = StateFlags::all() - StateFlags::TIME_WAIT;
        for (family, protocol, kind) in [
            (AF_INET, IPPROTO_TCP, "TCP"),
            (AF_INET6, IPPROTO_TCP, "TCPv6"),
            (AF_INET, IPPROTO_UDP, "UDP"),
            (AF_INET6, IPPROTO_UDP, "UDPv6"),
        ] {
            let socket_id = if family == AF_INET { SocketId::new_v4() } else { SocketId::new_v6() };
            let req = InetRequest {
                family,
                protocol,
                extensions: ExtensionFlags::empty(),
                states: states.clone(),
                socket_id,
            };
            dump(&s, SockDiagMessage::InetRequest(req), &mut |msg| {
                if let SockDiagMessage::InetResponse(r) = msg {
                    let h = &r.header;
                    let id = &h.socket_id;
                    let local = super::sockaddr(id.source_address, id.source_port);
                    let unconnected = id.destination_port == 0 && id.destination_address.is_unspecified();
                    let remote = (h.state != TCP_LISTEN && !unconnected)
                        .then(|| super::sockaddr(id.destination_address, id.destination_port));
                    m.insert(u64::from(h.inode), super::inet_deco(kind, &local, remote.as_deref()));
                }
            })?;
        }
        let req = UnixRequest {
            state_flags: unix::StateFlags::from_bits_retain(u32::MAX),
            inode: 0,
            show_flags: ShowFlags::NAME,
            cookie: [0xff; 8],
        };
        dump(&s, SockDiagMessage::UnixRequest(req), &mut |msg| {
            if let SockDiagMessage::UnixResponse(r) = msg {
                let ino = r.header.inode;
                let kind = match r.header.kind {
                    SOCK_DGRAM => "UNIX-DGRAM",
                    SOCK_SEQPACKET => "UNIX-SEQPACKET",
                    _ => "UNIX-STREAM",
                };
                let path = r.nlas.iter().find_map(|n| match n {
                    unix::nlas::Nla::Name(unix::nlas::UnixDiagName::Pathname(p)) => {
                        Some(format!(",\"{}\"", p.to_string_lossy()))
                    }
                    unix::nlas::Nla::Name(unix::nlas::UnixDiagName::Abstract(a)) => {
                        Some(format!(",\"@{}\"", String::from_utf8_lossy(a)))
                    }
                    _ => None,
                });
                m.insert(u64::from(ino), format!("{kind}:[{ino}{}]", path.unwrap_or_default()));
            }
        })?;
        Ok(m)
    }

    /// Send one dump request and hand every answer to `each`, until the kernel says done.
    fn dump(s: &Socket, req: SockDiagMessage, each: &mut dyn FnMut(SockDiagMessage)) -> std::io::Result<()> {
        let mut header = NetlinkHeader::default();
        header.flags = NLM_F_REQUEST | NLM_F_DUMP;
        let mut packet = NetlinkMessage::new(header, req.into());
        packet.finalize();
        let mut buf = vec![0; packet.buffer_len()];
        packet.serialize(&mut buf);
        s.send(&buf, 0)?;
        let mut rx = vec![0u8; 1 << 16];
        // a dump is bounded by the sockets that exist; this bounds a kernel that never says done
        for _ in 0..1_000_000 {
            let n = s.recv(&mut &mut rx[..], 0)?;
            let mut off = 0;
            while off < n {
                let msg = <NetlinkMessage<SockDiagMessage>>::deserialize(&rx[off..n])
                    .map_err(|e| Error::new(ErrorKind::InvalidData, format!("sock_diag: {e}")))?;
                let len = msg.header.length as usize;
                match msg.payload {
                    NetlinkPayload::InnerMessage(m) => each(m),
                    NetlinkPayload::Done(_) => return Ok(()),
                    NetlinkPayload::Error(e) => {
                        return Err(Error::other(format!("sock_diag: {e}")));
                    }
                    _ => {}
                }
                if len == 0 {
                    break;
                }
                off += (len + 3) & !3;
            }
            if n == 0 {
                break;
            }
        }
        Err(Error::new(ErrorKind::UnexpectedEof, "sock_diag: the dump did not end"))
    }
}

/// `127.0.0.1:80`, `[::1]:80`, an IPv4-mapped address as IPv4 (as strace prints them).
fn sockaddr(ip: IpAddr, port: u16) -> String {
    match ip {
        IpAddr::V4(a) => format!("{a}:{port}"),
        IpAddr::V6(a) => match a.to_ipv4_mapped() {
            Some(v4) => format!("{v4}:{port}"),
            None => format!("[{a}]:{port}"),
        },
    }
}

/// inode -> decoration for the sockets in the process's network namespace, from
/// /proc/PID/net (where sock_diag cannot answer for that namespace).
fn proc_table(pid: u32) -> HashMap<u64, String> {
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
            m.insert(ino, inet_deco(kind, &local, (!listening).then_some(remote.as_str())));
        }
    }
    if let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/net/unix")) {
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() >= 7 {
                if let Ok(ino) = f[6].parse::<u64>() {
                    let kind = match f[4] {
                        "0002" => "UNIX-DGRAM",
                        "0005" => "UNIX-SEQPACKET",
                        _ => "UNIX-STREAM",
                    };
                    let path = f.get(7).map(|p| format!(",\"{p}\"")).unwrap_or_default();
                    m.insert(ino, format!("{kind}:[{ino}{path}]"));
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
        // this test process: listening, connected, UDP and unix sockets and a file it holds open
        use std::os::fd::AsRawFd;
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().expect("addr").port();
        let c = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
        let cport = c.local_addr().expect("addr").port();
        let u = std::net::UdpSocket::bind("127.0.0.1:0").expect("udp");
        let uport = u.local_addr().expect("addr").port();
        let dir = tempfile::tempdir().expect("tempdir");
        let ul = std::os::unix::net::UnixListener::bind(dir.path().join("s")).expect("unix bind");
        let f = std::fs::File::open("/proc/self/status").expect("open");
        let mut known = Known::default();
        fds_of(std::process::id(), &mut known, &mut Sockets::default());
        let me = std::process::id();
        let of = |fd: i32| known.fds.get(&(me, i64::from(fd))).cloned().unwrap_or_default();
        assert_eq!(of(l.as_raw_fd()), format!("TCP:[127.0.0.1:{port}]"));
        assert_eq!(of(c.as_raw_fd()), format!("TCP:[127.0.0.1:{cport}->127.0.0.1:{port}]"));
        assert_eq!(of(u.as_raw_fd()), format!("UDP:[127.0.0.1:{uport}]"));
        let unix = of(ul.as_raw_fd());
        assert!(unix.starts_with("UNIX-STREAM:[") && unix.ends_with("/s\"]"), "{unix}");
        assert!(of(f.as_raw_fd()).ends_with("/status"));
    }

    /// sock_diag and /proc/net name this process's sockets alike (the fallback for another
    /// network namespace must not change a report's meaning).
    #[test]
    fn sock_diag_agrees_with_proc_net() {
        use std::os::fd::AsRawFd;
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let c = std::net::TcpStream::connect(l.local_addr().expect("addr")).expect("connect");
        let u =
            std::net::UdpSocket::bind("[::1]:0").or_else(|_| std::net::UdpSocket::bind("127.0.0.1:0")).expect("udp");
        let dir = tempfile::tempdir().expect("tempdir");
        let ul = std::os::unix::net::UnixListener::bind(dir.path().join("s")).expect("unix bind");
        let dg = std::os::unix::net::UnixDatagram::unbound().expect("unix dgram");
        let me = std::process::id();
        // this test's sockets only: the tests running beside it in this process open and close
        // their own meanwhile
        let ours: Vec<u64> = [l.as_raw_fd(), c.as_raw_fd(), u.as_raw_fd(), ul.as_raw_fd(), dg.as_raw_fd()]
            .iter()
            .filter_map(|fd| std::fs::read_link(format!("/proc/self/fd/{fd}")).ok())
            .filter_map(|l| l.to_str()?.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok())
            .collect();
        assert!(ours.len() >= 5, "{ours:?}");
        let (nl, proc) = (diag::table().expect("sock_diag"), proc_table(me));
        for i in ours {
            assert_eq!(nl.get(&i), proc.get(&i), "socket {i}");
            assert!(nl.contains_key(&i), "socket {i} not named");
        }
    }

    /// A process in a network namespace of its own (a container's): its listening socket is
    /// named, from sock_diag inside that namespace (root) and from its /proc/PID/net alike.
    #[test]
    fn sockets_of_another_network_namespace() {
        if !nix::unistd::geteuid().is_root() {
            eprintln!("SKIP sockets_of_another_network_namespace: needs root (unshare --net)");
            return;
        }
        let mut child = std::process::Command::new("unshare")
            .args(["--net", "python3", "-c"])
            .arg("import socket, sys, time\ns = socket.socket(); s.bind(('0.0.0.0', 0)); s.listen()\nprint(s.getsockname()[1], flush=True); time.sleep(30)")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("unshare --net python3 (util-linux, python3)");
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().expect("stdout")), &mut line)
            .expect("the port");
        let port: u16 = line.trim().parse().expect("a port");
        let pid = child.id();
        assert_ne!(netns_of(pid), netns_of(std::process::id()), "unshare --net made no namespace");
        let mut known = Known::default();
        fds_of(pid, &mut known, &mut Sockets::default());
        let by_diag: Vec<&String> = known.fds.values().filter(|d| d.starts_with("TCP")).collect();
        let in_proc: Vec<String> = proc_table(pid).into_values().filter(|d| d.starts_with("TCP")).collect();
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(by_diag, [&format!("TCP:[0.0.0.0:{port}]")]);
        assert_eq!(in_proc, [format!("TCP:[0.0.0.0:{port}]")]);
    }
}
