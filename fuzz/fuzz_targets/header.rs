//! Fuzz target `header`: see `sep_fuzz::header`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sep_fuzz::header(data));
