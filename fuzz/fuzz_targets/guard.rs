//! Fuzz target `guard`: the checks are in fuzz/checks.rs, shared with tests/it/fuzz_regressions.rs.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hookd_fuzz::guard(data));
