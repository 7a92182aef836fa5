//! CM revision 9's shortcut for long predictable stretches (doc/FORMAT.md
//! 4.20.6): runs, long repeats, repeats broken by single changed bytes
//! where the shortcut starts and stops, a bitmap and mixed text round-trip
//! at revisions 9 and 10; on a run-heavy input revision 9 codes most bytes
//! by the shortcut alone and is no larger than revision 7.

use crate::common;
use common::{config, fax, mixed_text, noise, round_trip, round_trip_skipped};

/// Runs of one byte of many lengths (some just below, at and above the
/// trigger length), with single other bytes between them.
fn runs() -> Vec<u8> {
    let mut out = Vec::new();
    let lens = [1usize, 3, 5, 6, 7, 8, 15, 16, 17, 40, 200, 1000, 3000];
    for (k, &n) in lens.iter().cycle().take(30).enumerate() {
        let b = [0u8, 0xFF, b' ', 0x80][k % 4];
        out.extend(std::iter::repeat_n(b, n));
        out.push((k * 37) as u8);
    }
    out
}

/// A block of noise repeated, each copy with one byte changed at an offset
/// around the trigger length after the copy's start or the last change:
/// in the last bit only (the exclusion's known last bit), in the first bit,
/// or in a middle bit.
fn broken_repeats() -> Vec<u8> {
    let block = noise(700, 99);
    let mut out = block.clone();
    for copy in 0..12usize {
        let mut b = block.clone();
        for (j, off) in [5usize, 6, 7, 13, 20, 300, 699].iter().enumerate() {
            if (copy + j) % 3 != 0 {
                b[*off] ^= [0x01, 0x80, 0x10][(copy + j) % 3];
            }
        }
        out.extend(b);
    }
    out
}

/// A run-heavy input: long runs and long exact repeats of short noise,
/// as in an uncompressed image with a white background.
fn run_heavy() -> Vec<u8> {
    let line = noise(90, 7);
    let mut out = Vec::new();
    for row in 0..50usize {
        out.extend(std::iter::repeat_n(0xFFu8, 300));
        if row % 4 == 0 {
            out.extend(&line);
        } else {
            out.extend(std::iter::repeat_n(0xFFu8, 90));
        }
    }
    out
}

#[test]
fn round_trips_at_revisions_9_and_10() {
    let mut repeats = noise(2000, 5);
    repeats.extend(repeats.clone());
    repeats.extend(repeats.clone());
    for (name, data) in [
        ("runs", runs()),
        ("repeats", repeats),
        ("broken repeats", broken_repeats()),
        ("mixed text", mixed_text()),
    ] {
        for revision in [9, 10] {
            let (_, skipped) = round_trip_skipped(&data, &config(revision));
            if name != "mixed text" {
                assert!(
                    skipped * 10 > data.len() as u64,
                    "{name} at revision {revision}: {skipped} of {} bytes skipped",
                    data.len()
                );
            }
        }
    }
}

#[test]
fn a_bitmap_round_trips_with_the_record_contexts() {
    // Rows of 64 bytes: the shortcut's contexts look one and two rows up.
    let data = fax(64, 150);
    for revision in [9, 10] {
        let (_, skipped) = round_trip_skipped(&data, &config(revision));
        assert!(skipped > 0, "revision {revision}: no byte skipped");
    }
}

#[test]
fn revision_9_skips_most_of_a_run_heavy_input_and_is_no_larger_than_7() {
    let data = run_heavy();
    let (r7, skipped7) = round_trip_skipped(&data, &config(7));
    let (r9, skipped9) = round_trip_skipped(&data, &config(9));
    assert_eq!(skipped7, 0, "revision 7 has no shortcut");
    assert!(
        skipped9 * 10 > data.len() as u64 * 8,
        "{skipped9} of {} bytes skipped",
        data.len()
    );
    assert!(
        r9.len() <= r7.len(),
        "revision 9 {} vs 7 {}",
        r9.len(),
        r7.len()
    );
    // Revision 8 (the max line before it) has no shortcut; 10 has.
    let (_, skipped8) = round_trip_skipped(&data, &config(8));
    assert_eq!(skipped8, 0);
    assert!(round_trip(&data, &config(10)).len() <= round_trip(&data, &config(8)).len());
}
