#![no_main]
//! See crates/fuzzing: `syslint_fuzzing::report_json` says what this target checks.
libfuzzer_sys::fuzz_target!(|data: &[u8]| syslint_fuzzing::report_json(data));
