//! Fuzz target `prior`: see `sep_fuzz::prior`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sep_fuzz::prior(data));
