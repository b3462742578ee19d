//! What an fd refers to, as a kind: typed, so code asks `kind.is_tcp()` instead of comparing
//! strings, and the text (`tcp6`, `file`, ...) exists in one place, for reports.

/// The kind of thing an fd refers to.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum TargetKind {
    File,
    Tcp,
    Tcp6,
    Udp,
    Udp6,
    UdpLite,
    /// An AF_INET/AF_INET6 socket that is neither stream nor datagram (SOCK_RAW, ...).
    Raw,
    Unix,
    Netlink,
    /// A socket of another or unknown family.
    Socket,
    Pipe,
    Epoll,
    Eventfd,
    Timerfd,
    Signalfd,
    Inotify,
    IoUring,
    /// `memfd_create`.
    Memfd,
    /// Another `anon_inode:[...]`.
    Anon,
    /// A decoration syslint does not know.
    Other,
    /// An fd whose creation the trace does not show (opened before it began).
    #[default]
    Unknown,
}

impl TargetKind {
    /// The name reports use (`tcp`, `file`, `eventfd`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::File => "file",
            TargetKind::Tcp => "tcp",
            TargetKind::Tcp6 => "tcp6",
            TargetKind::Udp => "udp",
            TargetKind::Udp6 => "udp6",
            TargetKind::UdpLite => "udplite",
            TargetKind::Raw => "raw",
            TargetKind::Unix => "unix",
            TargetKind::Netlink => "netlink",
            TargetKind::Socket => "socket",
            TargetKind::Pipe => "pipe",
            TargetKind::Epoll => "epoll",
            TargetKind::Eventfd => "eventfd",
            TargetKind::Timerfd => "timerfd",
            TargetKind::Signalfd => "signalfd",
            TargetKind::Inotify => "inotify",
            TargetKind::IoUring => "io_uring",
            TargetKind::Memfd => "memfd",
            TargetKind::Anon => "anon",
            TargetKind::Other => "other",
            TargetKind::Unknown => "unknown",
        }
    }

    /// TCP over IPv4 or IPv6.
    pub fn is_tcp(self) -> bool {
        matches!(self, TargetKind::Tcp | TargetKind::Tcp6)
    }

    /// UDP (or UDP-Lite) over IPv4 or IPv6.
    pub fn is_udp(self) -> bool {
        matches!(self, TargetKind::Udp | TargetKind::Udp6 | TargetKind::UdpLite)
    }

    /// A socket whose protocol the model tracks connections for (TCP, UDP, unix).
    pub fn is_connection_socket(self) -> bool {
        self.is_tcp() || matches!(self, TargetKind::Udp | TargetKind::Udp6 | TargetKind::Unix)
    }

    /// Any socket.
    pub fn is_socket(self) -> bool {
        self.is_tcp()
            || self.is_udp()
            || matches!(self, TargetKind::Raw | TargetKind::Unix | TargetKind::Netlink | TargetKind::Socket)
    }
}

impl std::fmt::Display for TargetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which way a connection was made: `Out` we connected (or sent to an address), `In` we
/// accepted it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Direction {
    In,
    #[default]
    Out,
}

impl Direction {
    /// The name reports use: `in`, `out`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::In => "in",
            Direction::Out => "out",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_names() {
        assert!(TargetKind::Tcp6.is_tcp() && !TargetKind::Udp.is_tcp());
        assert!(TargetKind::UdpLite.is_udp() && TargetKind::Unix.is_socket() && !TargetKind::Pipe.is_socket());
        assert!(!TargetKind::UdpLite.is_connection_socket() && TargetKind::Unix.is_connection_socket());
        assert_eq!(TargetKind::IoUring.to_string(), "io_uring");
        assert_eq!(TargetKind::default(), TargetKind::Unknown);
    }
}
