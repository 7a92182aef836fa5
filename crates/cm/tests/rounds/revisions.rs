//! Which CM revision has which model (doc/FORMAT.md 4.18): the `default`
//! line (odd revisions from 5) and the `max` line (even revisions from 6),
//! and revisions 7 to 46 round trip on text, binary data and detected kinds.

use crate::common;
use common::{config, mixed_text, noise, round_trip_each, soft_bmp};
use sep_cm::{CmConfig, revision_has};

#[test]
fn each_line_keeps_its_own_models() {
    // (revision, introduced) -> has; the table of doc/FORMAT.md 4.18.
    let table = [
        (5, 4, true),
        (5, 5, true),
        (5, 6, false),
        (6, 5, true),
        (6, 6, true),
        (7, 5, true),
        (7, 6, false),
        (7, 7, true),
        (7, 8, false),
        (8, 5, true),
        (8, 6, true),
        (8, 7, true),
        (8, 8, true),
        (9, 6, false),
        (9, 7, true),
        (9, 8, false),
        (9, 9, true),
        (9, 10, false),
        (10, 6, true),
        (10, 8, true),
        (10, 9, true),
        (10, 10, true),
        (11, 9, true),
        (11, 10, false),
        (11, 11, true),
        (11, 12, false),
        (12, 10, true),
        (12, 11, true),
        (12, 12, true),
        (12, 9, true),
        (13, 11, true),
        (13, 12, false),
        (13, 13, true),
        (13, 14, false),
        (14, 12, true),
        (14, 13, true),
        (14, 14, true),
        (14, 11, true),
        (15, 13, true),
        (15, 14, false),
        (15, 15, true),
        (15, 16, false),
        (16, 14, true),
        (16, 15, true),
        (16, 16, true),
        (16, 13, true),
        (17, 15, true),
        (17, 16, false),
        (17, 17, true),
        (17, 18, false),
        (18, 16, true),
        (18, 17, true),
        (18, 18, true),
        (18, 15, true),
        (19, 17, true),
        (19, 18, false),
        (19, 19, true),
        (19, 20, false),
        (20, 18, true),
        (20, 19, true),
        (20, 20, true),
        (20, 17, true),
        (21, 19, true),
        (21, 20, false),
        (21, 21, true),
        (21, 22, false),
        (22, 20, true),
        (22, 21, true),
        (22, 22, true),
        (22, 19, true),
        (23, 21, true),
        (23, 22, false),
        (23, 23, true),
        (23, 24, false),
        (24, 22, true),
        (24, 23, true),
        (24, 24, true),
        (24, 21, true),
        (25, 23, true),
        (25, 24, false),
        (25, 25, true),
        (25, 26, false),
        (26, 24, true),
        (26, 25, true),
        (26, 26, true),
        (26, 23, true),
        (27, 25, true),
        (27, 26, false),
        (27, 27, true),
        (27, 28, false),
        (28, 26, true),
        (28, 27, true),
        (28, 28, true),
        (28, 25, true),
        (29, 27, true),
        (29, 28, false),
        (29, 29, true),
        (29, 30, false),
        (30, 28, true),
        (30, 29, true),
        (30, 30, true),
        (30, 27, true),
        (31, 29, true),
        (31, 30, false),
        (31, 31, true),
        (31, 32, false),
        (32, 30, true),
        (32, 31, true),
        (32, 32, true),
        (32, 29, true),
        (33, 31, true),
        (33, 32, false),
        (33, 33, true),
        (33, 34, false),
        (34, 32, true),
        (34, 33, true),
        (34, 34, true),
        (34, 31, true),
        (35, 33, true),
        (35, 34, false),
        (35, 35, true),
        (35, 36, false),
        (36, 34, true),
        (36, 35, true),
        (36, 36, true),
        (36, 33, true),
        (37, 35, true),
        (37, 36, false),
        (37, 37, true),
        (37, 38, false),
        (38, 36, true),
        (38, 37, true),
        (38, 38, true),
        (38, 35, true),
        (39, 37, true),
        (39, 38, false),
        (39, 39, true),
        (39, 40, false),
        (40, 38, true),
        (40, 39, true),
        (40, 40, true),
        (40, 37, true),
        (41, 39, true),
        (41, 40, false),
        (41, 41, true),
        (41, 42, false),
        (42, 40, true),
        (42, 41, true),
        (42, 42, true),
        (42, 39, true),
        (43, 41, true),
        (43, 42, false),
        (43, 43, true),
        (43, 44, false),
        (44, 42, true),
        (44, 43, true),
        (44, 44, true),
        (44, 41, true),
        (45, 43, true),
        (45, 44, false),
        (45, 45, true),
        (45, 46, false),
        (46, 44, true),
        (46, 45, true),
        (46, 46, true),
        (46, 43, true),
        (2, 4, false),
        (4, 4, true),
        (4, 5, false),
    ];
    for (revision, introduced, has) in table {
        assert_eq!(
            revision_has(revision, introduced),
            has,
            "revision {revision}, model of revision {introduced}"
        );
        assert_eq!(config(revision).since(introduced), has);
    }
}

#[test]
fn revisions_up_to_46_are_valid_and_47_is_not() {
    for revision in 0..=46 {
        if revision == 3 {
            continue; // the lean model takes other fields (4.14)
        }
        assert!(config(revision).validate().is_ok(), "revision {revision}");
    }
    let err = config(47).validate().unwrap_err();
    assert!(err.contains("unknown"), "{err}");
}

#[test]
fn revisions_7_to_46_round_trip_and_are_deterministic() {
    let readme = include_bytes!("../data/readme.md");
    let mut bin = noise(6_000, 11);
    bin.extend(&readme[..readme.len().min(4_000)]);
    let bmp = soft_bmp(48, 32);
    round_trip_each(
        &[
            7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
            29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46,
        ],
        &[&mixed_text()[..], &bin, &bmp, b"", b"x"],
        true,
    );
}

#[test]
fn the_default_line_leaves_out_the_max_lines_memory() {
    // Revision 6's costlier models allocate tables revision 7 must not.
    assert!(config(7).memory_bytes() < config(8).memory_bytes());
    assert!(config(6).memory_bytes() <= config(8).memory_bytes());
    assert!(config(5).memory_bytes() <= config(7).memory_bytes());
    assert!(config(7).memory_bytes() <= config(9).memory_bytes());
    assert!(config(9).memory_bytes() < config(10).memory_bytes());
    assert!(config(8).memory_bytes() <= config(10).memory_bytes());
    assert!(config(9).memory_bytes() <= config(11).memory_bytes());
    assert!(config(11).memory_bytes() <= config(12).memory_bytes());
    assert!(config(10).memory_bytes() <= config(12).memory_bytes());
    assert!(config(11).memory_bytes() <= config(13).memory_bytes());
    assert!(config(13).memory_bytes() <= config(14).memory_bytes());
    assert!(config(12).memory_bytes() <= config(14).memory_bytes());
    assert!(config(13).memory_bytes() <= config(15).memory_bytes());
    assert!(config(15).memory_bytes() <= config(16).memory_bytes());
    assert!(config(14).memory_bytes() <= config(16).memory_bytes());
    assert!(config(15).memory_bytes() <= config(17).memory_bytes());
    assert!(config(17).memory_bytes() <= config(18).memory_bytes());
    // From revision 18 the text family's direct tables follow the table
    // size (4.29.1): at `max`'s sizes revision 18 keeps revision 16's, at
    // the test configuration's 2^18 bytes they are smaller.
    let sized = |revision, table_bits| CmConfig {
        table_bits,
        ..config(revision)
    };
    for bits in [27, 29] {
        assert!(sized(16, bits).memory_bytes() <= sized(18, bits).memory_bytes());
        assert!(sized(18, bits).memory_bytes() <= sized(20, bits).memory_bytes());
        assert!(sized(20, bits).memory_bytes() <= sized(22, bits).memory_bytes());
        assert!(sized(22, bits).memory_bytes() <= sized(24, bits).memory_bytes());
        assert!(sized(24, bits).memory_bytes() <= sized(26, bits).memory_bytes());
        assert!(sized(26, bits).memory_bytes() <= sized(28, bits).memory_bytes());
        assert!(sized(28, bits).memory_bytes() <= sized(30, bits).memory_bytes());
        assert!(sized(30, bits).memory_bytes() <= sized(32, bits).memory_bytes());
        assert!(sized(32, bits).memory_bytes() <= sized(34, bits).memory_bytes());
        assert!(sized(34, bits).memory_bytes() <= sized(36, bits).memory_bytes());
        assert!(sized(36, bits).memory_bytes() <= sized(38, bits).memory_bytes());
        assert!(sized(38, bits).memory_bytes() <= sized(40, bits).memory_bytes());
        // Revision 42's image family replaces revision 40's at less than
        // half its memory (4.53.3), more than x86_42's tables add (4.53.4).
        assert!(sized(42, bits).memory_bytes() < sized(40, bits).memory_bytes());
        assert!(sized(41, bits).memory_bytes() <= sized(42, bits).memory_bytes());
        assert!(sized(42, bits).memory_bytes() <= sized(44, bits).memory_bytes());
        assert!(sized(43, bits).memory_bytes() <= sized(44, bits).memory_bytes());
        assert!(sized(44, bits).memory_bytes() <= sized(46, bits).memory_bytes());
        assert!(sized(45, bits).memory_bytes() <= sized(46, bits).memory_bytes());
    }
    assert!(config(17).memory_bytes() <= config(19).memory_bytes());
    assert!(config(19).memory_bytes() <= config(21).memory_bytes());
    assert!(config(21).memory_bytes() <= config(23).memory_bytes());
    assert!(config(23).memory_bytes() <= config(25).memory_bytes());
    assert!(config(25).memory_bytes() <= config(27).memory_bytes());
    assert!(config(27).memory_bytes() <= config(29).memory_bytes());
    assert!(config(29).memory_bytes() <= config(31).memory_bytes());
    assert!(config(31).memory_bytes() <= config(33).memory_bytes());
    assert!(config(33).memory_bytes() <= config(35).memory_bytes());
    assert!(config(35).memory_bytes() <= config(37).memory_bytes());
    assert!(config(37).memory_bytes() <= config(39).memory_bytes());
    assert!(config(39).memory_bytes() <= config(41).memory_bytes());
    assert!(config(41).memory_bytes() <= config(43).memory_bytes());
    assert!(config(43).memory_bytes() <= config(45).memory_bytes());
    assert!(config(18).memory_bytes() < config(16).memory_bytes());
}
