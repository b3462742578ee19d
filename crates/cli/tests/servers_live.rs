//! Issue 15's end-to-end suite, live: each real server of tests/fixtures/servers is started, put
//! under a bounded load on 127.0.0.1 and attached with eBPF before and after a configuration
//! change with a known effect (the same scripts that recorded the fixtures, writing into a
//! temporary directory), and `diff` must call every measured improvement improved, never
//! regressed. The recorded fixtures keep the exact numbers (diff.rs); this proves the same
//! verdicts on today's build, kernel and packages. Needs root (eBPF) and the servers, which
//! scripts/test.sh installs: nginx, redis-server/redis-tools, postgresql, memcached, gunicorn,
//! php-fpm, wrk.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn record(script: &str) -> PathBuf {
    let out =
        std::env::temp_dir().join(format!("syslint-servers-{}-{}", script.trim_end_matches(".sh"), std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).expect("out dir");
    // the postgres scripts write as the postgres user into it
    let _ = Command::new("chmod").arg("777").arg(&out).status();
    let o = Command::new("bash")
        .arg(root().join("tests/fixtures/servers").join(script))
        .arg(bin())
        .env("SYSLINT_SERVERS_OUT", &out)
        .output()
        .expect("run the recording script");
    assert!(
        o.status.success(),
        "{script} failed ({:?}): {}{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

fn diff(dir: &Path, before: &str, after: &str) -> (Option<i32>, serde_json::Value) {
    let (b, a) = (dir.join(format!("{before}.slr")), dir.join(format!("{after}.slr")));
    let o = run(&["diff", "--format", "json", b.to_str().unwrap(), a.to_str().unwrap(), "--fail-on-regression"]);
    (o.status.code(), serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o))))
}

/// `after` improves on `before`: exit 0 under --fail-on-regression and an "improved" verdict.
fn improved(dir: &Path, before: &str, after: &str) -> serde_json::Value {
    let (code, d) = diff(dir, before, after);
    assert_eq!(code, Some(0), "{before} -> {after}: {d:#}");
    let v = d["verdict"].as_str().unwrap_or("");
    assert!(v.starts_with("improved"), "{before} -> {after}: {v}");
    d
}

fn check(script: &str, pairs: &[(&str, &str)], reverse_is_regression: bool) {
    assert_bpf_works("the live server suite");
    let dir = record(script);
    for (before, after) in pairs {
        improved(&dir, before, after);
        if reverse_is_regression {
            let (code, d) = diff(&dir, after, before);
            assert_eq!(code, Some(1), "{after} -> {before} must fail --fail-on-regression: {d:#}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn nginx_sendfile_and_open_file_cache() {
    check("record-nginx.sh", &[("nginx-BEFORE", "nginx-AFTER")], true);
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn nginx_keeping_fastcgi_connections_to_php_fpm() {
    check("record-nginx-fpm.sh", &[("nginx-fpm-BEFORE", "nginx-fpm-AFTER")], false);
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn redis_pipelining() {
    check("record-redis.sh", &[("redis-BEFORE", "redis-AFTER")], true);
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn postgres_asynchronous_commit() {
    // (the reverse is judged by calls per MiB, which one live second of pgbench moves by only
    // ~10%; the recorded pair in diff.rs holds the regression)
    check("record-postgres.sh", &[("pg-commit", "pg-commit-async")], false);
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn memcached_kept_connections() {
    check("record-memcached-attach.sh", &[("memcached-BEFORE", "memcached-AFTER")], true);
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs eBPF: root and a kernel with BTF")]
fn gunicorn_more_workers() {
    check("record-gunicorn.sh", &[("gunicorn-BEFORE", "gunicorn-AFTER")], false);
}
