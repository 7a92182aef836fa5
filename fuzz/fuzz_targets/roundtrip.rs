//! Fuzz target `roundtrip`: see `sep_fuzz::roundtrip`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sep_fuzz::roundtrip(data));
