//! CM revisions 7 and 8's mixing and SSE side for text (doc/FORMAT.md
//! 4.18.1 and 4.19.1): they round trip and code deterministically on text,
//! code, binary data and detected kinds, revision 8 shrinks real text and
//! code against revision 6, and the 128-input mixer of revision 8 sums
//! exactly.

use crate::common;
use common::{
    assert_text_and_code_shrink, config, lean_config, mixed_text, round_trip, round_trip_each,
    text_test_inputs,
};
use sep_cm::Mixer2;

#[test]
fn revisions_7_and_8_round_trip_and_are_deterministic() {
    round_trip_each(&[7, 8], &text_test_inputs(11), true);
}

#[test]
fn revisions_7_and_8_round_trip_without_the_text_family_and_with_few_inputs() {
    let mut cfg = config(8);
    cfg.word = false;
    round_trip(&mixed_text(), &cfg);
    cfg.revision = 7;
    round_trip(&mixed_text(), &cfg);
    // One order context, no match models, one selector.
    round_trip(&mixed_text(), &lean_config(8));
}

#[test]
fn revision_8_beats_revision_6_on_text_and_code() {
    assert_text_and_code_shrink(&[(6, 8)]);
}

#[test]
fn a_128_input_mixer_sums_exactly() {
    // Every weight at its largest (32767, about 2.0) and every input at
    // +-2047: each block of 32 inputs sums to about +-2^31, two blocks of
    // one sign would overflow an i32. Blocks 0 and 1 are positive, 2 and 3
    // negative but for one input, so the exact sum is 32767 * 100.
    let mut m = Mixer2::new(128, &[1], 1, 6, 2);
    m.set_initial_weights(32767);
    for i in 0..128 {
        m.set(i, if i < 64 { 2047 } else { -2047 });
    }
    m.set(127, -2047 + 100);
    m.select(0, 0);
    m.select_final(0);
    // One set: its output (32767 * 100) >> 14 = 199, times the final
    // weight 16384 (1.0).
    assert_eq!(m.mix(), 199);
    // All positive: far beyond the clamp, which must hold.
    for i in 0..128 {
        m.set(i, 2047);
    }
    assert_eq!(m.mix(), 2047);
    for i in 0..128 {
        m.set(i, -2047);
    }
    assert_eq!(m.mix(), -2047);
    // Training at the extremes saturates weights without overflow.
    for step in 0..2_000u32 {
        for i in 0..128 {
            m.set(
                i,
                if (i as u32 + step).is_multiple_of(3) {
                    2047
                } else {
                    -2047
                },
            );
        }
        let d = m.mix();
        assert!((-2047..=2047).contains(&d));
        m.update(step % 2);
    }
}
