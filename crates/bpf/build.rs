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
}
