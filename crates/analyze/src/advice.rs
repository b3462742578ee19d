//! Advice for the program at hand (issue 27.5): a finding about a program syslint can name
//! leads with that program's or runtime's own fix (`AllowOverride None`, `skip-name-resolve`,
//! `-Dsun.net.httpserver.nodelay=true`), and the detector's general advice, written for every
//! runtime at once, moves to `fix_elsewhere` (folded away: `--verbose` in the table, collapsed in
//! HTML and Markdown).
//!
//! Detection stays behavioural: the program's name picks only the words of the advice, never
//! whether there is a finding. The program is known by its process name (`comm`); a runtime by
//! the interpreter's or VM's usual process names.

use syslint_report::Finding;

/// A program or runtime with advice of its own.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Program {
    Apache,
    Nginx,
    Haproxy,
    Lighttpd,
    Squid,
    Varnish,
    MysqlServer,
    Postgres,
    Redis,
    Sshd,
    Jdk,
    Python,
    Ruby,
    Node,
    Php,
    /// Python servers with their own knobs (advice for Python in general applies otherwise).
    Gunicorn,
    Uwsgi,
}

impl Program {
    /// How the advice names it.
    pub fn label(self) -> &'static str {
        match self {
            Program::Apache => "Apache httpd",
            Program::Nginx => "nginx",
            Program::Haproxy => "HAProxy",
            Program::Lighttpd => "lighttpd",
            Program::Squid => "Squid",
            Program::Varnish => "Varnish",
            Program::MysqlServer => "MariaDB/MySQL",
            Program::Postgres => "PostgreSQL",
            Program::Redis => "Redis",
            Program::Sshd => "OpenSSH sshd",
            Program::Jdk => "Java",
            Program::Python => "Python",
            Program::Ruby => "Ruby",
            Program::Node => "Node.js",
            Program::Php => "PHP",
            Program::Gunicorn => "gunicorn",
            Program::Uwsgi => "uWSGI",
        }
    }

    /// The runtime whose advice applies when this program has none of its own.
    fn runtime(self) -> Option<Program> {
        match self {
            Program::Gunicorn | Program::Uwsgi => Some(Program::Python),
            _ => None,
        }
    }

    /// The program a process name (`comm`, at most 15 bytes) belongs to.
    pub fn of_comm(comm: &str) -> Option<Program> {
        let c = comm.trim();
        let starts = |p: &str| c.starts_with(p);
        Some(match c {
            "apache2" | "httpd" | "httpd-prefork" | "httpd-worker" | "httpd-event" => Program::Apache,
            _ if starts("nginx") => Program::Nginx,
            _ if starts("haproxy") => Program::Haproxy,
            _ if starts("lighttpd") => Program::Lighttpd,
            "squid" => Program::Squid,
            "varnishd" | "cache-main" | "cache-worker" | "cache-acceptor" => Program::Varnish,
            "mariadbd" | "mysqld" | "mariadbd-safe" | "mysqld_safe" => Program::MysqlServer,
            "postgres" | "postmaster" => Program::Postgres,
            _ if starts("redis-server") => Program::Redis,
            "sshd" => Program::Sshd,
            "java" | "javac" => Program::Jdk,
            _ if starts("gunicorn") => Program::Gunicorn,
            _ if starts("uwsgi") => Program::Uwsgi,
            "rq" | "rqworker" => Program::Python,
            _ if starts("python") || starts("celery") => Program::Python,
            _ if starts("ruby") || starts("puma") || starts("unicorn") => Program::Ruby,
            "node" | "nodejs" => Program::Node,
            _ if starts("php") => Program::Php,
            _ => return None,
        })
    }
}

/// (detector, program, what to do there). The first match leads the finding's fix.
const ADVICE: &[(&str, Program, &str)] = &[
    // connection-churn: the side that opens connections per request, or the server told why
    (
        "connection-churn",
        Program::Apache,
        "keep client connections with `KeepAlive On` (with `MaxKeepAliveRequests` 100 or more and a `KeepAliveTimeout` of a few seconds); towards a backend, mod_proxy reuses connections per worker (`ProxyPass ... keepalive=On`; `enablereuse=on` for mod_proxy_fcgi)",
    ),
    (
        "connection-churn",
        Program::Nginx,
        "towards a backend, an `upstream` block with `keepalive 16;` plus `proxy_http_version 1.1;` and `proxy_set_header Connection \"\";` (FastCGI: `fastcgi_keep_conn on;`); towards clients, `keepalive_timeout` and `keepalive_requests`",
    ),
    (
        "connection-churn",
        Program::Haproxy,
        "`option http-keep-alive` (the default HTTP mode, not `option httpclose` or `http-server-close`) and `http-reuse safe` (or `aggressive`/`always`) so that server-side connections are shared between requests",
    ),
    (
        "connection-churn",
        Program::Lighttpd,
        "keep-alive is on unless `server.max-keep-alive-requests = 0`: raise it (default 1000) and `server.max-keep-alive-idle`; towards a backend, mod_proxy and mod_fastcgi open a connection per request, so keep the backend local (a unix socket) or put a pooling proxy between",
    ),
    (
        "connection-churn",
        Program::Squid,
        "`client_persistent_connections on` and `server_persistent_connections on` (the defaults: check that neither is off), and a `pconn_timeout` longer than the gap between requests",
    ),
    (
        "connection-churn",
        Program::MysqlServer,
        "the clients open a connection per query: pool them in the application (HikariCP, SQLAlchemy's pool, PDO persistent connections) or put ProxySQL or MaxScale in front; on the server, `thread_cache_size` keeps threads for new connections",
    ),
    (
        "connection-churn",
        Program::Postgres,
        "every connection forks a backend and loads its caches: pool connections in the application (HikariCP, SQLAlchemy's pool, pgx's pool) or with PgBouncer in transaction mode",
    ),
    (
        "connection-churn",
        Program::Jdk,
        "reuse one java.net.http.HttpClient for all requests (HttpURLConnection keeps a connection only when each response body is read to the end and its stream closed); JDBC through a pool such as HikariCP, not DriverManager.getConnection per query",
    ),
    (
        "connection-churn",
        Program::Python,
        "one http.client.HTTPConnection (or HTTPSConnection) per host kept for all its requests, or one requests.Session (or urllib3.PoolManager, httpx.Client, aiohttp.ClientSession), not requests.get() per call; redis-py: one redis.Redis for the process (its ConnectionPool keeps the connection), not one per request; database connections from a pool (SQLAlchemy's, psycopg_pool)",
    ),
    (
        "connection-churn",
        Program::Node,
        "an http.Agent with `keepAlive: true` (the default from Node 19) shared by all requests; fetch/undici keeps connections per origin when the response bodies are consumed",
    ),
    (
        "connection-churn",
        Program::Php,
        "reuse one curl handle across requests (or share connections with curl_share_init and CURL_LOCK_DATA_CONNECT); PDO with `PDO::ATTR_PERSISTENT => true` under PHP-FPM",
    ),
    (
        "connection-churn",
        Program::Ruby,
        "keep one Net::HTTP session open around all requests (`Net::HTTP.start(host, port) { |http| ... }`) or use the net-http-persistent gem; database connections from ActiveRecord's or Sequel's pool",
    ),
    // connection-churn on the server side, when this server closes unasked: its keep-alive knobs
    (
        "connection-churn/server-closes",
        Program::Apache,
        "`KeepAlive On`, `MaxKeepAliveRequests` 100 or more (0 is unlimited) and a `KeepAliveTimeout` of a few seconds",
    ),
    (
        "connection-churn/server-closes",
        Program::Nginx,
        "`keepalive_timeout 65;` (0 turns keep-alive off) and `keepalive_requests 1000;`; answers need a length (Content-Length or chunked) for the connection to stay open",
    ),
    (
        "connection-churn/server-closes",
        Program::Haproxy,
        "`option http-keep-alive` (not `option httpclose` or `http-server-close`) with `timeout http-keep-alive` of a few seconds",
    ),
    (
        "connection-churn/server-closes",
        Program::Lighttpd,
        "`server.max-keep-alive-requests` above 0 (default 1000) and `server.max-keep-alive-idle` of a few seconds",
    ),
    (
        "connection-churn/server-closes",
        Program::Jdk,
        "Tomcat: the Connector's `maxKeepAliveRequests` (100 by default, -1 for no limit; 1 turns keep-alive off) and `keepAliveTimeout`; Jetty: the connector's `idleTimeout`; the JDK's HttpServer keeps connections unless the handler sends `Connection: close`",
    ),
    (
        "connection-churn/server-closes",
        Program::Gunicorn,
        "gunicorn's sync workers close every connection by design (behind nginx that is expected); facing clients, a worker class that keeps connections (`-k gthread --threads N`, or `-k gevent`) with `--keep-alive` of a few seconds; already on gthread or gevent, raise `--keep-alive` (2 s by default) above the clients' gap between requests",
    ),
    (
        "connection-churn/server-closes",
        Program::Uwsgi,
        "`--http11-socket` (or `--http-keepalive` with the HTTP router): the plain `--http-socket` closes every connection",
    ),
    (
        "connection-churn/server-closes",
        Program::Python,
        "http.server answers HTTP/1.0 and closes: set `protocol_version = \"HTTP/1.1\"` on the handler (with a Content-Length on every answer); aiohttp and uvicorn keep connections unless their keep-alive timeout is 0",
    ),
    (
        "connection-churn/server-closes",
        Program::Ruby,
        "Puma: `persistent_timeout` (20 s by default) and `max_fast_inline`; WEBrick keeps HTTP/1.1 connections when the response has a length",
    ),
    (
        "connection-churn/server-closes",
        Program::Node,
        "`server.keepAliveTimeout` (5 s by default; 0 turns keep-alive off) above the clients' gap between requests, with `server.headersTimeout` above it",
    ),
    // connection-churn: connections handed between processes
    (
        "connection-churn/handover",
        Program::Node,
        "the cluster module's round-robin (`cluster.SCHED_RR`, the default on Linux) accepts every connection in the primary and passes it to a worker: set `cluster.schedulingPolicy = cluster.SCHED_NONE` before forking (or `NODE_CLUSTER_SCHED_POLICY=none`) so the workers accept themselves, or run one process per core with `reusePort: true` (Node 22.12+)",
    ),
    // connection-churn on the server side, when the clients close: what this server offers them
    (
        "connection-churn/clients-close",
        Program::Postgres,
        "each client connection forks a backend and fills its caches: have the clients pool connections (HikariCP, SQLAlchemy's pool, pgx's pool) or put PgBouncer in transaction mode in front",
    ),
    (
        "connection-churn/clients-close",
        Program::MysqlServer,
        "the clients connect per query: have them pool connections (HikariCP, SQLAlchemy's pool, PDO persistent connections) or put ProxySQL in front, and run the `mysql`/`mariadb` command line client once for all the statements, not once per statement; `thread_cache_size` keeps the server's threads for new connections meanwhile",
    ),
    // spawn-per-task, forked copies per job or connection
    (
        "spawn-per-task/forked",
        Program::Postgres,
        "the postmaster forks a backend for every connection by design: keep connections, with the application's pool (HikariCP, SQLAlchemy's, pgx's) or PgBouncer in transaction mode in front, so that one backend serves many transactions",
    ),
    (
        "spawn-per-task/forked",
        Program::Python,
        "RQ: `rq worker --worker-class rq.worker.SimpleWorker` (the job runs in the worker, no work-horse forked per job) when jobs need no isolation; socketserver: `ThreadingTCPServer` or a fixed pool instead of `ForkingTCPServer`; gunicorn: `--max-requests` in the thousands (or 0) so workers are not forked again and again",
    ),
    (
        "spawn-per-task/forked",
        Program::Apache,
        "`MaxConnectionsPerChild 0` (children live on) and `MinSpareServers`/`MaxSpareServers` wide enough that children are not forked and reaped with the load; the event MPM serves connections with threads",
    ),
    // nagle-delay
    (
        "nagle-delay",
        Program::Jdk,
        "the JDK's built-in HTTP server (com.sun.net.httpserver) writes headers and body apart without TCP_NODELAY: start the JVM with `-Dsun.net.httpserver.nodelay=true`; on your own sockets, `socket.setTcpNoDelay(true)`",
    ),
    (
        "nagle-delay",
        Program::Ruby,
        "set TCP_NODELAY on the socket (`sock.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1)`); WEBrick writes the header and the body apart without it: a server such as Puma sets it",
    ),
    (
        "nagle-delay",
        Program::Python,
        "`sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)`, or send the header and the body in one `sendall()`",
    ),
    (
        "nagle-delay",
        Program::Node,
        "`http.createServer({ noDelay: true })` (the default from Node 16.5) or `socket.setNoDelay(true)`; write the head and the body in one `res.end(body)`",
    ),
    // repeated-dns, dns-timeout
    (
        "repeated-dns",
        Program::Apache,
        "`HostnameLookups Off` (the default), and no host names in `Require host` or `Allow from` rules: each forces a reverse and a forward lookup per request",
    ),
    ("repeated-dns", Program::MysqlServer, "`skip-name-resolve` in [mysqld] (grants then name hosts by address)"),
    ("repeated-dns", Program::Sshd, "`UseDNS no` in sshd_config (the default since OpenSSH 6.8: check it is not on)"),
    (
        "repeated-dns",
        Program::Nginx,
        "give `proxy_pass` an address or an upstream block (resolved once at start), or a `resolver ... valid=300s;` that caches answers",
    ),
    (
        "repeated-dns",
        Program::Jdk,
        "the JVM caches lookups for `networkaddress.cache.ttl` seconds (30 by default without a security manager): raise it in java.security, and reuse connections",
    ),
    (
        "repeated-dns",
        Program::Php,
        "share the DNS cache between curl handles (curl_share_init with CURL_LOCK_DATA_DNS) and reuse the handle; `CURLOPT_DNS_CACHE_TIMEOUT` for longer-lived answers",
    ),
    ("dns-timeout", Program::Sshd, "`UseDNS no` in sshd_config: sshd looks up every client's address and waits out a dead resolver before the login goes on"),
    ("dns-timeout", Program::MysqlServer, "`skip-name-resolve` in [mysqld]: the server looks up every client's address before authenticating it"),
    // file-system storms
    (
        "failed-lookup-storm",
        Program::Apache,
        "`AllowOverride None` where no .htaccess is needed: with it on, Apache looks for .htaccess in every directory of every request's path",
    ),
    (
        "failed-lookup-storm",
        Program::Php,
        "`composer dump-autoload -o` (or `--classmap-authoritative`) so the autoloader reads a class map instead of probing PSR-4 paths; fewer include_path entries; `realpath_cache_size` of 4M or more and opcache",
    ),
    (
        "stat-storm",
        Program::Php,
        "`realpath_cache_size` (4M or more) and `realpath_cache_ttl`; opcache with `opcache.validate_timestamps=0` (or a `revalidate_freq`) in production",
    ),
    ("stat-storm", Program::Nginx, "`open_file_cache max=10000 inactive=30s;` with `open_file_cache_valid`"),
    ("reopen-churn", Program::Nginx, "`open_file_cache max=10000 inactive=30s;` keeps the served files' descriptors"),
    ("small-io", Program::Apache, "`BufferedLogs On` (mod_log_config): the access log is then written in blocks, not one write per request"),
    ("small-io", Program::Nginx, "`access_log /path combined buffer=64k flush=5s;`"),
    ("userspace-copy", Program::Apache, "`EnableSendfile On` (off by default since 2.3.9)"),
    ("userspace-copy", Program::Nginx, "`sendfile on;` (with `tcp_nopush on;`)"),
    ("userspace-copy", Program::Lighttpd, "`server.network-backend = \"sendfile\"` (the default on Linux)"),
    ("userspace-copy", Program::Python, "`socket.sendfile(file)` (os.sendfile underneath) instead of reading and sending"),
    ("userspace-copy", Program::Jdk, "`FileChannel.transferTo()` to the socket's channel"),
    (
        "fsync-storm",
        Program::Redis,
        "`appendfsync everysec` (the default) instead of `always`: at most a second of writes at risk, one flush a second",
    ),
    (
        "fsync-storm",
        Program::MysqlServer,
        "`innodb_flush_log_at_trx_commit = 2` (or 0) where losing up to a second of commits on a crash is acceptable, `sync_binlog` likewise; or group commits",
    ),
    (
        "fsync-storm",
        Program::Postgres,
        "`synchronous_commit = off` for transactions that may be lost on a crash (the database stays consistent), or commit in batches",
    ),
    (
        "accept-herd",
        Program::Nginx,
        "`listen ... reuseport;` (a socket per worker, the kernel spreading connections), or `accept_mutex on;`",
    ),
    ("accept-herd", Program::Apache, "`ListenCoresBucketsRatio` (2.4.17+) gives groups of children their own SO_REUSEPORT listener"),
    ("accept-herd", Program::Python, "gunicorn `--reuse-port`; uWSGI `--thunder-lock` or `--reuse-port`"),
    (
        "busy-poll",
        Program::Php,
        "call `curl_multi_select()` between `curl_multi_exec()` calls (and sleep briefly when it returns -1) instead of looping on curl_multi_exec",
    ),
];

/// Leads the finding's fix with its program's advice, when the program is one syslint knows and
/// there is advice for it (else its runtime's: gunicorn's falls back to Python's); the fix it
/// replaces moves to `fix_elsewhere`. A fix the detector wrote for this finding (not its general
/// one) is left as it is (it knows more: which processes, that the closer is unknown),
/// except for the cases with advice of their own: the server side of connection churn by who
/// closed, forked copies per job or connection, and a DNS timeout in a program with a knob to
/// stop looking its clients up.
pub fn apply(f: &mut Finding, meta: &crate::registry::Meta) {
    // the general fix, as `fix()` trims it or as the docs hold it whole, is advised as the
    // detector's; a fix the detector wrote itself only when it named the case it belongs to
    // (the server side of connection churn by who closed; a dead resolver's program knob,
    // `UseDNS no`, leads over the resolver fix too)
    let general = f.fix == meta.fix() || f.fix == meta.docs.fix;
    let key: &str = match f.advice {
        Some(k) => k,
        None if general => meta.name,
        None => return,
    };
    let Some(p) = f.about.as_ref().and_then(|a| a.program.as_deref()).and_then(Program::of_comm) else {
        return;
    };
    let find = |p: Program| ADVICE.iter().find(|(d, q, _)| *d == key && *q == p);
    let Some((_, q, text)) = find(p).or_else(|| p.runtime().and_then(find)) else { return };
    let text = (*text).to_string();
    let label = q.label().to_string();
    let before = std::mem::replace(&mut f.fix, text);
    f.fix_elsewhere = Some(before);
    f.fix_for = Some(label);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detectors::ENTRIES;

    #[test]
    fn every_piece_of_advice_names_a_detector_and_is_said_once() {
        let names: Vec<&str> = ENTRIES.iter().map(|e| e.meta.name).collect();
        for (i, (d, p, t)) in ADVICE.iter().enumerate() {
            let detector = d.split('/').next().unwrap_or(d);
            assert!(names.contains(&detector), "advice for an unknown detector {d}");
            assert!(!t.ends_with('.') && !t.is_empty(), "{d} / {p:?}: a fix has no final period");
            assert!(!ADVICE[..i].iter().any(|(e, q, _)| e == d && q == p), "{d} / {p:?} twice");
        }
    }

    #[test]
    fn programs_are_known_by_their_process_names() {
        assert_eq!(Program::of_comm("apache2"), Some(Program::Apache));
        assert_eq!(Program::of_comm("php-fpm8.2"), Some(Program::Php));
        assert_eq!(Program::of_comm("python3.11"), Some(Program::Python));
        assert_eq!(Program::of_comm("gunicorn"), Some(Program::Gunicorn));
        assert_eq!(Program::Gunicorn.runtime(), Some(Program::Python));
        assert_eq!(Program::of_comm("cache-main"), Some(Program::Varnish));
        assert_eq!(Program::of_comm("bash"), None);
    }
}
