//! CM revisions 9 and 10's mixing side for text (doc/FORMAT.md 4.20.1):
//! the first-layer rates in quarter units with a lower floor and a boost
//! per weight set that decays with the set's update count. Revisions 9
//! and 10 round trip and code deterministically on text, code, binary data
//! and detected kinds, shrink real text and code against revisions 7 and
//! 8, and the per-set rates are exact at extreme inputs and weights.

use crate::common;
use common::{
    assert_text_and_code_shrink, config, lean_config, mixed_text, round_trip, round_trip_each,
    text_test_inputs,
};
use sep_cm::Mixer2;

#[test]
fn revisions_9_and_10_round_trip_and_are_deterministic() {
    round_trip_each(&[9, 10], &text_test_inputs(17), true);
}

#[test]
fn revisions_9_and_10_round_trip_with_few_inputs() {
    let mut cfg = config(10);
    cfg.word = false;
    round_trip(&mixed_text(), &cfg);
    cfg.revision = 9;
    round_trip(&mixed_text(), &cfg);
    // One order context, no match models, one selector.
    for revision in [9, 10] {
        round_trip(&mixed_text(), &lean_config(revision));
    }
}

#[test]
fn revisions_9_and_10_beat_7_and_8_on_text_and_code() {
    assert_text_and_code_shrink(&[(7, 9), (8, 10)]);
}

/// The coding cost in bits of `bits` random-looking bits that input 0
/// predicts, each in a fresh weight set (so only the first updates of a
/// set count), with or without revision 9's per-set rates.
fn fresh_set_cost(per_set: bool) -> f64 {
    let sets = 512;
    let mut m = Mixer2::new(2, &[sets], 1, 24, 2);
    if per_set {
        m.set_set_rates(32, 256, 2);
    } else {
        m.set_rates(6, 2);
    }
    let mut state = 5u32;
    let mut cost = 0.0;
    for step in 0..sets * 8 {
        state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let bit = (state >> 16) & 1;
        m.set(0, if bit == 1 { 600 } else { -600 });
        m.set(1, ((state >> 4) & 511) as i32 - 256);
        m.select(0, step / 8);
        m.select_final(0);
        m.mix();
        let p = m.last();
        let q = if bit == 1 { p } else { 65536 - p };
        cost -= (f64::from(q) / 65536.0).log2();
        m.update(bit);
    }
    cost
}

#[test]
fn per_set_rates_let_fresh_sets_learn_faster() {
    // Rate 24 quarter units is the plain rate 6; the per-set boost adds
    // up to 32 quarters (8) to a set's first updates.
    let plain = fresh_set_cost(false);
    let boosted = fresh_set_cost(true);
    eprintln!("plain {plain:.0} bits, per-set rates {boosted:.0} bits");
    assert!(boosted < plain * 0.97, "{boosted} vs {plain}");
}

#[test]
fn per_set_rates_are_exact_at_extreme_inputs_and_counts() {
    // Every input at +-2047, weights driven to saturation by the largest
    // rates, and one set's count past its 65535 saturation.
    let mut m = Mixer2::new(128, &[2, 1], 4, 16, 8);
    m.set_set_rates(i32::from(i16::MAX), 1, 0);
    m.set_initial_weights(i16::MAX);
    for step in 0..70_000usize {
        for i in 0..128 {
            m.set(i, if (i + step) % 3 == 0 { 5000 } else { -5000 });
        }
        m.select(0, step % 7 / 6);
        m.select(1, 0);
        m.select_final(step % 4);
        let d = m.mix();
        assert!((-2047..=2047).contains(&d));
        assert!((1..65536).contains(&m.last()));
        m.update(u32::from(step % 5 < 2));
    }
}
