//! Compiles `src/bpf/syslint.bpf.c` twice into skeletons in OUT_DIR (never committed):
//! `syslint.skel.rs` for kernels with BTF (tp_btf programs, CO-RE reads) and
//! `syslint_nobtf.skel.rs` (`-DSYSLINT_NO_BTF`: raw_tp programs, no CO-RE relocation, so it
//! loads on kernels without /sys/kernel/btf/vmlinux).

use std::env;
use std::path::PathBuf;

use libbpf_cargo::SkeletonBuilder;

const SRC: &str = "src/bpf/syslint.bpf.c";

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    let arch = env::var("CARGO_CFG_TARGET_ARCH").expect("CARGO_CFG_TARGET_ARCH is set by cargo");
    let target = match arch.as_str() {
        "x86_64" => "x86",
        "aarch64" => "arm64",
        other => other,
    };
    for (name, extra) in [("syslint", None), ("syslint_nobtf", Some("-DSYSLINT_NO_BTF"))] {
        let mut args = vec![format!("-D__TARGET_ARCH_{target}"), "-Wall".to_string()];
        args.extend(extra.map(str::to_string));
        SkeletonBuilder::new()
            .source(SRC)
            .obj(out.join(format!("{name}.bpf.o")))
            .clang_args(args)
            .build_and_generate(out.join(format!("{name}.skel.rs")))
            .unwrap_or_else(|e| panic!("building the BPF skeleton {name} from {SRC}: {e:#}"));
    }
    println!("cargo:rerun-if-changed=src/bpf");
    probe_test_conditions();
}

/// Tells the live tests whether they can run here (cfg `syslint_bpf`: root and a kernel with
/// BTF, unless `SYSLINT_TEST_NO_BPF` is set); where not, they are reported as ignored.
fn probe_test_conditions() {
    println!("cargo::rustc-check-cfg=cfg(syslint_bpf)");
    println!("cargo::rerun-if-env-changed=SYSLINT_TEST_NO_BPF");
    let btf = "/sys/kernel/btf/vmlinux";
    println!("cargo::rerun-if-changed={btf}");
    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines().find(|l| l.starts_with("Uid:")).and_then(|l| l.split_whitespace().nth(2)) == Some("0")
    });
    if root && std::path::Path::new(btf).exists() && env::var_os("SYSLINT_TEST_NO_BPF").is_none() {
        println!("cargo::rustc-cfg=syslint_bpf");
    }
}
