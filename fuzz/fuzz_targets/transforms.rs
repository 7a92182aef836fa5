//! Fuzz target `transforms`: `sep_fuzz::transforms` (segment tables and the
//! JPEG, deflate and x86 inverse transforms, issue 17).
//!
//! The two third-party codecs (lepton_jpeg, preflate-rs with its entropy
//! coder cabac) run under
//! `catch_unwind` in `sep-transform` (`guarded`): a panic inside them is an
//! error of the segment by design (doc/FORMAT.md section 8), and this build's
//! overflow checks make lepton 0.5.8 panic on some crafted headers
//! (`fuzz/artifacts/transforms/crash-89112083…`), cabac 0.15 on crafted
//! preflate corrections (`crash-9b23bac8…`, a shift overflow; it wraps in
//! release builds). libFuzzer's panic hook aborts on every panic, caught or
//! not, so this target lets panics located in those crates unwind to that
//! `catch_unwind`; any other panic, and any panic that escapes, still aborts.
#![no_main]

use std::sync::Once;

static HOOK: Once = Once::new();

/// Wraps libFuzzer's panic hook (installed before the first input) so that
/// panics raised inside lepton_jpeg, preflate-rs or cabac are left to
/// `guarded`.
fn tolerate_codec_panics() {
    HOOK.call_once(|| {
        let fuzzer_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_codec = info.location().is_some_and(|l| {
                let f = l.file();
                ["/lepton_jpeg-", "/preflate-rs", "/cabac-"]
                    .iter()
                    .any(|c| f.contains(c))
            });
            if !in_codec {
                fuzzer_hook(info);
            }
        }));
    });
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    tolerate_codec_panics();
    sep_fuzz::transforms(data)
});
