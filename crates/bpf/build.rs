//! Compiles `src/bpf/syslint.bpf.c` twice into skeletons in OUT_DIR (never committed):
//! `syslint.skel.rs` for kernels with BTF (tp_btf programs, CO-RE reads) and
//! `syslint_nobtf.skel.rs` (`-DSYSLINT_NO_BTF`: raw_tp programs, no CO-RE relocation, so it
//! loads on kernels without /sys/kernel/btf/vmlinux); and `src/bpf/counter.bpf.c` (the
//! agent's counting program: tp_btf, so BTF only) into `counter.skel.rs`.
//!
//! Also generates `abi.rs` in OUT_DIR from `src/bpf/syslint.h`, the layout shared with the
//! kernel program, with bindgen: its constants and structs, renamed Rust-style (`SL_REC_EXIT` →
//! `REC_EXIT`, `struct sl_exec_rec` → `ExecRec`), and bindgen's compile-time asserts that each
//! Rust struct has the size and field offsets clang gives the C one. The crate compiles the
//! committed copy, `src/abi_generated.rs` (a build without the `load` feature has no clang to
//! run bindgen and still reads recordings); this build fails when the two differ, saying how to
//! bring the copy up to date, so the copy cannot drift from the header.
//!
//! Without the `load` feature (an analyze-only build) nothing is compiled: no clang, libelf or
//! bindgen is needed.

use std::env;
#[cfg(feature = "load")]
use std::path::PathBuf;

#[cfg(feature = "load")]
use bindgen::callbacks::{IntKind, ItemInfo, ItemKind, ParseCallbacks};
#[cfg(feature = "load")]
use libbpf_cargo::SkeletonBuilder;

#[cfg(feature = "load")]
const SRC: &str = "src/bpf/syslint.bpf.c";
#[cfg(feature = "load")]
const COUNTER_SRC: &str = "src/bpf/counter.bpf.c";
#[cfg(feature = "load")]
const ABI_HEADER: &str = "src/bpf/syslint.h";
#[cfg(feature = "load")]
const ABI_COPY: &str = "src/abi_generated.rs";

fn main() {
    #[cfg(feature = "load")]
    build_kernel_program();
    probe_test_conditions();
}

#[cfg(feature = "load")]
fn build_kernel_program() {
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
    // the counting program (tp_btf, so BTF only): the agent's counts between windows
    SkeletonBuilder::new()
        .source(COUNTER_SRC)
        .obj(out.join("counter.bpf.o"))
        .clang_args([format!("-D__TARGET_ARCH_{target}"), "-Wall".to_string()])
        .build_and_generate(out.join("counter.skel.rs"))
        .unwrap_or_else(|e| panic!("building the BPF skeleton counter from {COUNTER_SRC}: {e:#}"));
    println!("cargo:rerun-if-changed=src/bpf");
    println!("cargo:rerun-if-changed={ABI_COPY}");
    let fresh = out.join("abi.rs");
    generate_abi(&fresh);
    let (fresh_text, copy) =
        (std::fs::read_to_string(&fresh).unwrap_or_default(), std::fs::read_to_string(ABI_COPY).unwrap_or_default());
    // bindgen formats its output with rustfmt, which reads the rustfmt.toml above the sources:
    // the repository's (wide lines) in a checkout, none in a packaged crate. What must agree is
    // the code, not its line breaks.
    let code = |s: &str| s.split_whitespace().collect::<String>();
    if code(&fresh_text) != code(&copy) {
        panic!(
            "{ABI_COPY} is not what bindgen makes of {ABI_HEADER} now (the header changed?): bring it up to date with\n  cp {} crates/bpf/{ABI_COPY}",
            fresh.display()
        );
    }
}

/// Rust names and integer types for what syslint.h declares.
#[cfg(feature = "load")]
#[derive(Debug)]
struct AbiNames;

#[cfg(feature = "load")]
impl ParseCallbacks for AbiNames {
    /// `SL_FOO` → `FOO`; `struct sl_foo_bar` → `FooBar`; the `__u8`-style typedefs unchanged.
    fn item_name(&self, item: ItemInfo<'_>) -> Option<String> {
        match item.kind {
            ItemKind::Var => item.name.strip_prefix("SL_").map(str::to_string),
            ItemKind::Type => {
                item.name.strip_prefix("sl_").map(|n| n.split('_').map(|w| w[..1].to_uppercase() + &w[1..]).collect())
            }
            _ => None,
        }
    }

    /// The type of the field each group of constants is stored in or compared with; sizes and
    /// counts as usize (array lengths, indexes).
    fn int_macro(&self, name: &str, _value: i64) -> Option<IntKind> {
        let u8_groups = ["SL_REC_", "SL_DATA_", "SL_LEN_", "SL_F_", "SL_STK_"];
        Some(if u8_groups.iter().any(|p| name.starts_with(p)) {
            IntKind::U8
        } else if name.starts_with("SL_CAP_") {
            IntKind::U16
        } else {
            IntKind::Custom { name: "usize", is_signed: false }
        })
    }
}

#[cfg(feature = "load")]
fn generate_abi(dest: &std::path::Path) {
    bindgen::Builder::default()
        .header_contents("abi_wrapper.h", "#include <linux/types.h>\n#include \"syslint.h\"\n")
        .clang_arg("-Isrc/bpf")
        .allowlist_file(".*/syslint\\.h")
        .parse_callbacks(Box::new(AbiNames))
        .derive_default(true)
        .derive_eq(true)
        .layout_tests(true)
        .generate()
        .unwrap_or_else(|e| panic!("generating Rust bindings for {ABI_HEADER} (bindgen needs libclang): {e}"))
        .write_to_file(dest)
        .unwrap_or_else(|e| panic!("writing {}: {e}", dest.display()));
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
