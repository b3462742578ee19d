//! The reader's integration tests, one binary (each file is a module).

#[path = "decode_fixtures.rs"]
mod decode_fixtures;
#[path = "strace_versions.rs"]
mod strace_versions;
