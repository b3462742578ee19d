//! What a user installing syslint gets (issue 30): a minimum Rust version every crate declares
//! (so an old cargo stops with its own one-line message instead of a compile error deep in the
//! build), `--version` naming the commit and the backends, shell completions that their shells
//! accept and complete with, man pages that render cleanly, and the README saying how.

use crate::common::*;
use std::process::Command;

/// The workspace's `rust-version`, read from the root Cargo.toml.
fn workspace_msrv() -> String {
    let text = std::fs::read_to_string(root().join("Cargo.toml")).expect("read Cargo.toml");
    let doc: toml::Table = toml::from_str(&text).expect("Cargo.toml is TOML");
    doc.get("workspace")
        .and_then(|w| w.get("package"))
        .and_then(|p| p.get("rust-version"))
        .and_then(toml::Value::as_str)
        .expect("[workspace.package] rust-version")
        .to_string()
}

/// Every crate under crates/ (members or not: a new crate must not forget it) inherits the
/// workspace's rust-version; without it cargo checks nothing for that crate.
#[test]
fn every_crate_inherits_the_workspace_rust_version() {
    let mut seen = 0;
    for entry in std::fs::read_dir(root().join("crates")).expect("read crates/") {
        let manifest = entry.expect("dir entry").path().join("Cargo.toml");
        if !manifest.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&manifest).expect("read a crate's Cargo.toml");
        let doc: toml::Table = toml::from_str(&text).expect("a crate's Cargo.toml is TOML");
        let rv = doc.get("package").and_then(|p| p.get("rust-version"));
        let inherits = rv.and_then(|v| v.get("workspace")).and_then(toml::Value::as_bool) == Some(true);
        assert!(
            inherits,
            "{} does not inherit the workspace's rust-version (add `rust-version.workspace = true` under [package]); it has {rv:?}",
            manifest.display()
        );
        seen += 1;
    }
    assert!(seen >= 8, "only {seen} crates found under crates/");
}

/// The declared minimum is at least what the code is known to need (`u64::is_multiple_of`,
/// stable since 1.87; clap 4.6 needs 1.85), and the README's Install section states it and
/// shows how to get completions and man pages.
#[test]
fn the_minimum_rust_version_is_declared_and_documented() {
    let msrv = workspace_msrv();
    let parts: Vec<u32> = msrv.split('.').map(|p| p.parse().expect("a numeric rust-version")).collect();
    assert!(parts.len() >= 2 && (parts[0], parts[1]) >= (1, 87), "rust-version {msrv} is below 1.87");
    let readme = std::fs::read_to_string(root().join("README.md")).expect("read README.md");
    let install = readme.split("## Install").nth(1).expect("README has an Install section");
    let install = install.split("\n## ").next().unwrap_or(install);
    assert!(install.contains(&format!("Rust {msrv} or newer")), "README's Install section does not say Rust {msrv}");
    assert!(install.contains("cargo install --locked --path crates/cli"), "README's Install section: no cargo install");
    for cmd in ["syslint completions bash", "syslint man --dir"] {
        assert!(install.contains(cmd), "README's Install section does not show `{cmd}`");
    }
}

/// The README's install command, run with the Rust release before the minimum
/// (scripts/test.sh installs it with rustup): cargo itself refuses, in one message naming the
/// version needed, before compiling anything, rather than an error deep in a dependency.
#[test]
fn an_old_rustc_gets_cargos_msrv_message() {
    let msrv = workspace_msrv();
    let minor: u32 = msrv.split('.').nth(1).and_then(|m| m.parse().ok()).expect("rust-version 1.N");
    let old = format!("1.{}", minor - 1);
    let has = |cmd: &mut Command| cmd.output().is_ok_and(|o| o.status.success());
    if !has(Command::new("rustup").args(["run", &old, "cargo", "--version"])) {
        eprintln!("NOTE: no Rust {old} toolchain (rustup toolchain install {old} --profile minimal): cannot try it");
        assert!(std::env::var_os("CI").is_none(), "Rust {old} missing in CI");
        return;
    }
    let dir = temp_dir("msrv");
    let out = Command::new("rustup")
        .args(["run", &old, "cargo", "install", "--locked", "--path", "crates/cli", "--root"])
        .arg(dir.join("root"))
        .arg("--target-dir")
        .arg(dir.join("target"))
        .current_dir(root())
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("CARGO")
        .env_remove("RUSTC")
        .output()
        .expect("run cargo");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "Rust {old} installed syslint: {err}");
    assert!(
        err.contains(&format!("rustc {old}.0 is not supported by the following packages"))
            && err.contains(&format!("syslint@{} requires rustc {msrv}", env!("CARGO_PKG_VERSION"))),
        "{err}"
    );
    // refused at the start: nothing was compiled
    assert!(!err.contains("Compiling "), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The README's Install section shows the three ways to get the shipped binary (the tarball and
/// the .deb scripts/build-dist.sh makes, the container image), each by a file that exists.
/// Installing them is tested by scripts/test-install.sh and scripts/test-container.sh
/// (scripts/test.sh runs both after the dist build).
#[test]
fn the_shipped_binary_tarball_deb_and_container_are_documented() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("read README.md");
    let install = readme.split("## Install").nth(1).expect("README has an Install section");
    let install = install.split("\n## ").next().unwrap_or(install);
    let version = env!("CARGO_PKG_VERSION");
    for shown in [
        "scripts/build-dist.sh".to_string(),
        format!("target/dist/syslint-{version}-x86_64-linux.tar.gz"),
        format!("sudo dpkg -i target/dist/syslint_{version}-1_amd64.deb"),
        "podman build -t syslint .".to_string(),
        "--pid=host --cap-add=BPF --cap-add=PERFMON".to_string(),
    ] {
        assert!(install.contains(&shown), "README's Install section does not show `{shown}`");
    }
    for file in [
        "scripts/build-dist.sh",
        "scripts/package-dist.sh",
        "scripts/test-install.sh",
        "scripts/test-container.sh",
        "Containerfile",
        ".dockerignore",
    ] {
        assert!(root().join(file).is_file(), "{file} is missing");
    }
}

/// `git ARGS` in the source tree, or None when git is absent or fails.
fn git(args: &[&str]) -> Option<String> {
    let o = std::process::Command::new("git").arg("-C").arg(root()).args(args).output().ok()?;
    o.status.success().then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// `syslint --version` and `-V` name the commit the binary was built from (in a checkout: the
/// source tree's HEAD, `-dirty` when crates/ or the manifests differ from it) and the backends
/// compiled in; outside a checkout they say `unknown commit`.
#[test]
fn version_names_the_commit_and_the_backends() {
    let checkout = git(&["ls-files", "--error-unmatch", "--", "crates/cli/build.rs"]).is_some();
    let want = if checkout {
        let hash = git(&["rev-parse", "--short", "HEAD"]).expect("git rev-parse --short HEAD");
        let changed =
            git(&["status", "--porcelain", "--", ":/crates", ":/Cargo.toml", ":/Cargo.lock"]).expect("git status");
        format!("(commit {hash}{})", if changed.is_empty() { "" } else { "-dirty" })
    } else {
        eprintln!(
            "NOTE: the source tree is not a git checkout (or git is not installed): --version must say unknown commit"
        );
        "(unknown commit)".to_string()
    };
    for flag in ["--version", "-V"] {
        let o = run(&[flag]);
        assert!(o.status.success(), "syslint {flag}: {}", stderr(&o));
        let out = stdout(&o);
        let mut lines = out.lines();
        let first = lines.next().unwrap_or_default();
        assert_eq!(first, format!("syslint {} {want}", env!("CARGO_PKG_VERSION")), "syslint {flag}:\n{out}");
        let backends = lines.next().and_then(|l| l.strip_prefix("backends: ")).unwrap_or_else(|| {
            panic!("syslint {flag}: no `backends:` line:\n{out}");
        });
        let backends: Vec<&str> = backends.split(", ").collect();
        assert!(backends.contains(&"strace"), "syslint {flag}: strace is always compiled in:\n{out}");
        // this test is built with the binary's features: eBPF is listed exactly when compiled
        assert_eq!(backends.contains(&"ebpf"), syslint_capture::EBPF_COMPILED, "syslint {flag}:\n{out}");
    }
}

/// The commands `syslint --help` lists (clap's own `help` left out).
fn commands() -> Vec<String> {
    let o = run(&["--help"]);
    assert!(o.status.success(), "syslint --help: {}", stderr(&o));
    let help = stdout(&o);
    let list = help.split("\nCommands:\n").nth(1).expect("syslint --help lists its commands");
    let names: Vec<String> = list
        .lines()
        .take_while(|l| l.starts_with("  "))
        // a command's line; a description wrapped onto the next is indented further
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|&n| n != "help")
        .map(str::to_string)
        .collect();
    for want in ["analyze", "trace", "diff", "completions", "man"] {
        assert!(names.iter().any(|n| n == want), "syslint --help does not list {want}: {names:?}");
    }
    names
}

/// The long options `syslint ARGS --help` lists (`--format`, `--output-file`, ...).
fn long_options(args: &[&str]) -> Vec<String> {
    let mut a = args.to_vec();
    a.push("--help");
    let o = run(&a);
    assert!(o.status.success(), "syslint {a:?}: {}", stderr(&o));
    let mut opts: Vec<String> = stdout(&o)
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = if l.len() > 4 && l.starts_with('-') && &l[2..4] == ", " { &l[4..] } else { l };
            let name: String =
                l.strip_prefix("--")?.chars().take_while(|&c| c.is_ascii_alphanumeric() || c == '-').collect();
            (!name.is_empty()).then(|| format!("--{name}"))
        })
        .collect();
    opts.dedup();
    assert!(opts.iter().any(|o| o == "--help"), "no options read from syslint {a:?}");
    opts
}

/// A fresh directory under the system's temporary directory.
fn temp_dir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("syslint-install-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("make a temporary directory");
    d
}

fn completions(shell: &str) -> String {
    let o = run(&["completions", shell]);
    assert!(o.status.success(), "syslint completions {shell}: {}", stderr(&o));
    let script = stdout(&o);
    assert!(script.len() > 200, "syslint completions {shell} is nearly empty:\n{script}");
    for c in commands() {
        assert!(script.contains(&c), "syslint completions {shell} does not complete the command {c}");
    }
    script
}

/// The bash script parses (`bash -n`), and completes commands and option values when run the
/// way bash runs it at a TAB.
#[test]
fn bash_completions_parse_and_complete() {
    let script = completions("bash");
    let dir = temp_dir("bash");
    let file = dir.join("syslint.bash");
    std::fs::write(&file, &script).unwrap();
    let o = std::process::Command::new("bash").arg("-n").arg(&file).output().expect("run bash -n");
    assert!(o.status.success(), "bash -n rejects the completion script: {}", stderr(&o));
    // what bash does at `syslint <TAB>` and `syslint analyze --format <TAB>`
    let probe = r#"source "$1"
complete -p syslint >/dev/null || { echo "no completion registered for syslint"; exit 1; }
at() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
  _syslint syslint "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"; printf '%s\n' "${COMPREPLY[@]}"; }
echo '# commands'; at syslint ''
echo '# formats'; at syslint analyze --format ''
echo '# shells'; at syslint completions ''
"#;
    let o = std::process::Command::new("bash").args(["-c", probe, "probe"]).arg(&file).output().expect("run bash");
    assert!(o.status.success(), "bash completion probe failed: {}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    let section = |name: &str| -> Vec<String> {
        out.split(&format!("# {name}\n"))
            .nth(1)
            .unwrap_or("")
            .split("\n# ")
            .next()
            .unwrap_or("")
            .lines()
            .map(str::to_string)
            .collect()
    };
    let cmds = section("commands");
    for c in commands() {
        assert!(cmds.contains(&c), "`syslint <TAB>` does not offer {c}: {cmds:?}");
    }
    let mut formats = section("formats");
    formats.sort();
    assert_eq!(formats, ["html", "json", "markdown", "sarif", "table"], "`syslint analyze --format <TAB>`");
    // with nothing typed bash offers the options too (-h, --help)
    let mut shells: Vec<String> = section("shells").into_iter().filter(|w| !w.starts_with('-')).collect();
    shells.sort();
    assert_eq!(shells, ["bash", "elvish", "fish", "powershell", "zsh"], "`syslint completions <TAB>`");
    let _ = std::fs::remove_dir_all(&dir);
}

/// zsh and fish parse their scripts when installed (scripts/test.sh installs both); a shell
/// that is absent is said, not passed silently. Elvish's and PowerShell's scripts are generated
/// and hold the commands, and that is all that is checked: elvish compiles its `edit:` module
/// only in an interactive shell (`elvish -compileonly` rejects every completer), and PowerShell
/// is not in Debian.
#[test]
fn other_shells_completions_parse() {
    let dir = temp_dir("shells");
    for (shell, check) in [("zsh", Some("-n")), ("fish", Some("--no-execute")), ("elvish", None), ("powershell", None)]
    {
        let script = completions(shell);
        let file = dir.join(format!("syslint.{shell}"));
        std::fs::write(&file, &script).unwrap();
        let Some(check) = check else {
            eprintln!(
                "NOTE: the {shell} completion script is generated and names every command; its syntax is not checked"
            );
            continue;
        };
        if !have(shell) {
            assert!(std::env::var_os("CI").is_none(), "{shell} missing in CI");
            continue;
        }
        let o = std::process::Command::new(shell).arg(check).arg(&file).output().expect("run the shell");
        assert!(
            o.status.success() && o.stderr.is_empty(),
            "{shell} {check} rejects the completion script: {}{}",
            stdout(&o),
            stderr(&o)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A shell clap_complete does not know is a usage error naming the ones it does, not a panic.
#[test]
fn completions_for_an_unknown_shell_is_a_clear_error() {
    let o = run(&["completions", "nosuchshell"]);
    assert_eq!(o.status.code(), Some(2), "syslint completions nosuchshell: {o:?}");
    let err = stderr(&o);
    assert!(err.contains("invalid value 'nosuchshell'"), "{err}");
    assert!(err.contains("bash, elvish, fish, powershell, zsh"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// `syslint man --dir DIR` writes syslint.1 and a page per command; each renders under groff
/// with every warning on and none given, and names each option its command's --help lists.
/// `syslint man` alone prints syslint.1.
#[test]
fn man_pages_render_without_warnings_and_name_every_option() {
    if !have("groff") {
        assert!(std::env::var_os("CI").is_none(), "groff missing in CI");
        return;
    }
    let dir = temp_dir("man");
    let o = run(&["man", "--dir", dir.to_str().unwrap()]);
    assert!(o.status.success(), "syslint man --dir: {}", stderr(&o));
    let mut pages = vec![(String::from("syslint.1"), vec![])];
    for c in commands() {
        pages.push((format!("syslint-{c}.1"), vec![c]));
    }
    let mut listed: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    let mut want: Vec<String> = pages.iter().map(|(p, _)| dir.join(p).display().to_string()).collect();
    listed.sort();
    want.sort();
    assert_eq!(listed, want, "syslint man --dir prints the pages it wrote");
    for (page, args) in &pages {
        let path = dir.join(page);
        let roff = std::fs::read(&path).unwrap_or_else(|e| panic!("{page} was not written: {e}"));
        assert!(roff.is_ascii(), "{page} holds non-ASCII bytes (groff without preconv warns)");
        // -ww: every warning; -z: no output, the warnings alone
        let o = std::process::Command::new("groff").args(["-man", "-Tutf8", "-ww", "-z"]).arg(&path).output().unwrap();
        assert!(o.status.success() && o.stderr.is_empty(), "groff warns on {page}:\n{}", stderr(&o));
        // rendered as a reader sees it (-P-cbou: no colour, bold or underline overstrikes)
        let o = std::process::Command::new("groff").args(["-man", "-Tutf8", "-P-cbou"]).arg(&path).output().unwrap();
        let text = stdout(&o);
        let name = page.trim_end_matches(".1");
        assert!(text.contains("NAME") && text.contains(name), "{page} does not name {name}:\n{text}");
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        for opt in long_options(&args) {
            assert!(text.contains(&opt), "{page} does not mention {opt}:\n{text}");
        }
        if args.is_empty() {
            for c in commands() {
                assert!(text.contains(&format!("syslint-{c}(1)")), "syslint.1 does not point to syslint-{c}(1)");
            }
        }
    }
    let o = run(&["man"]);
    assert!(o.status.success(), "syslint man: {}", stderr(&o));
    assert_eq!(o.stdout, std::fs::read(dir.join("syslint.1")).unwrap(), "syslint man prints syslint.1");
    let _ = std::fs::remove_dir_all(&dir);
}
