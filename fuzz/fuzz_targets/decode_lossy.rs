//! Fuzz target `decode_lossy`: `sep_fuzz::decode_lossy` (issue 21, the lossy decoder).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sep_fuzz::decode_lossy(data));
