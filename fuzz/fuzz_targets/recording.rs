#![no_main]
//! See crates/fuzzing: `syslint_fuzzing::recording` says what this target checks.
libfuzzer_sys::fuzz_target!(|data: &[u8]| syslint_fuzzing::recording(data));
