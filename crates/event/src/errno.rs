//! Errno names by number, as Linux defines them for x86, x86_64, arm and aarch64
//! (asm-generic/errno-base.h and errno.h). Used where a log or a live backend gives only the
//! number.

static NAMES: &[&str] = &[
    "",
    "EPERM",
    "ENOENT",
    "ESRCH",
    "EINTR",
    "EIO",
    "ENXIO",
    "E2BIG",
    "ENOEXEC",
    "EBADF",
    "ECHILD",
    "EAGAIN",
    "ENOMEM",
    "EACCES",
    "EFAULT",
    "ENOTBLK",
    "EBUSY",
    "EEXIST",
    "EXDEV",
    "ENODEV",
    "ENOTDIR",
    "EISDIR",
    "EINVAL",
    "ENFILE",
    "EMFILE",
    "ENOTTY",
    "ETXTBSY",
    "EFBIG",
    "ENOSPC",
    "ESPIPE",
    "EROFS",
    "EMLINK",
    "EPIPE",
    "EDOM",
    "ERANGE",
    "EDEADLK",
    "ENAMETOOLONG",
    "ENOLCK",
    "ENOSYS",
    "ENOTEMPTY",
    "ELOOP",
    "",
    "ENOMSG",
    "EIDRM",
    "ECHRNG",
    "EL2NSYNC",
    "EL3HLT",
    "EL3RST",
    "ELNRNG",
    "EUNATCH",
    "ENOCSI",
    "EL2HLT",
    "EBADE",
    "EBADR",
    "EXFULL",
    "ENOANO",
    "EBADRQC",
    "EBADSLT",
    "",
    "EBFONT",
    "ENOSTR",
    "ENODATA",
    "ETIME",
    "ENOSR",
    "ENONET",
    "ENOPKG",
    "EREMOTE",
    "ENOLINK",
    "EADV",
    "ESRMNT",
    "ECOMM",
    "EPROTO",
    "EMULTIHOP",
    "EDOTDOT",
    "EBADMSG",
    "EOVERFLOW",
    "ENOTUNIQ",
    "EBADFD",
    "EREMCHG",
    "ELIBACC",
    "ELIBBAD",
    "ELIBSCN",
    "ELIBMAX",
    "ELIBEXEC",
    "EILSEQ",
    "ERESTART",
    "ESTRPIPE",
    "EUSERS",
    "ENOTSOCK",
    "EDESTADDRREQ",
    "EMSGSIZE",
    "EPROTOTYPE",
    "ENOPROTOOPT",
    "EPROTONOSUPPORT",
    "ESOCKTNOSUPPORT",
    "EOPNOTSUPP",
    "EPFNOSUPPORT",
    "EAFNOSUPPORT",
    "EADDRINUSE",
    "EADDRNOTAVAIL",
    "ENETDOWN",
    "ENETUNREACH",
    "ENETRESET",
    "ECONNABORTED",
    "ECONNRESET",
    "ENOBUFS",
    "EISCONN",
    "ENOTCONN",
    "ESHUTDOWN",
    "ETOOMANYREFS",
    "ETIMEDOUT",
    "ECONNREFUSED",
    "EHOSTDOWN",
    "EHOSTUNREACH",
    "EALREADY",
    "EINPROGRESS",
    "ESTALE",
    "EUCLEAN",
    "ENOTNAM",
    "ENAVAIL",
    "EISNAM",
    "EREMOTEIO",
    "EDQUOT",
    "ENOMEDIUM",
    "EMEDIUMTYPE",
    "ECANCELED",
    "ENOKEY",
    "EKEYEXPIRED",
    "EKEYREVOKED",
    "EKEYREJECTED",
    "EOWNERDEAD",
    "ENOTRECOVERABLE",
    "ERFKILL",
    "EHWPOISON",
];

/// The name of errno `n` (`22` -> `EINVAL`), including the kernel-internal restart codes.
pub fn name(n: i64) -> Option<&'static str> {
    match n {
        512 => Some("ERESTARTSYS"),
        513 => Some("ERESTARTNOINTR"),
        514 => Some("ERESTARTNOHAND"),
        515 => Some("ENOIOCTLCMD"),
        516 => Some("ERESTART_RESTARTBLOCK"),
        _ => NAMES.get(usize::try_from(n).ok()?).copied().filter(|s| !s.is_empty()),
    }
}

/// The number of errno `name` (`ECONNREFUSED` -> `111`): strace prints getsockopt's SO_ERROR
/// value by name.
pub fn number(name: &str) -> Option<i64> {
    if name.is_empty() {
        return None;
    }
    NAMES.iter().position(|&n| n == name).map(|i| i as i64)
}

/// The errno name as a `'static` string (to keep it without copying), when it is a known one.
pub fn intern(name: &str) -> Option<&'static str> {
    number(name).and_then(self::name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_back_to_numbers() {
        assert_eq!(super::number("ECONNREFUSED"), Some(111));
        assert_eq!(super::number("ENOENT"), Some(2));
        assert_eq!(super::number(""), None);
        assert_eq!(super::number("EWHATEVER"), None);
        assert_eq!(super::intern("ETIMEDOUT"), Some("ETIMEDOUT"));
    }

    #[test]
    fn known_numbers() {
        assert_eq!(super::name(2), Some("ENOENT"));
        assert_eq!(super::name(11), Some("EAGAIN"));
        assert_eq!(super::name(22), Some("EINVAL"));
        assert_eq!(super::name(110), Some("ETIMEDOUT"));
        assert_eq!(super::name(115), Some("EINPROGRESS"));
        assert_eq!(super::name(133), Some("EHWPOISON"));
        assert_eq!(super::name(41), None);
        assert_eq!(super::name(-1), None);
    }
}
