//! Fuzz target `decode_mix2`: `sep_fuzz::decode_blocks` with the model of `sep_fuzz::decode_model`.
#![no_main]

use std::sync::LazyLock;

static MODEL: LazyLock<sep::Model> = LazyLock::new(|| sep_fuzz::decode_model("decode_mix2"));

libfuzzer_sys::fuzz_target!(|data: &[u8]| sep_fuzz::decode_blocks(&MODEL, data));
