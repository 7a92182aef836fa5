//! Fuzz target `transforms`: `sep_fuzz::transforms` (segment tables and the
//! JPEG, deflate and x86 inverse transforms, issue 17).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sep_fuzz::transforms(data));
