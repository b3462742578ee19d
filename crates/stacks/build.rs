//! Tells the live tests whether they can run here (cfg `syslint_bpf`: root and a kernel with
//! BTF, unless `SYSLINT_TEST_NO_BPF` is set), as crates/bpf/build.rs does; where not, they are
//! reported as ignored.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(syslint_bpf)");
    println!("cargo::rerun-if-env-changed=SYSLINT_TEST_NO_BPF");
    let btf = "/sys/kernel/btf/vmlinux";
    println!("cargo::rerun-if-changed={btf}");
    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines().find(|l| l.starts_with("Uid:")).and_then(|l| l.split_whitespace().nth(2)) == Some("0")
    });
    if root && std::path::Path::new(btf).exists() && std::env::var_os("SYSLINT_TEST_NO_BPF").is_none() {
        println!("cargo::rustc-cfg=syslint_bpf");
    }
}
