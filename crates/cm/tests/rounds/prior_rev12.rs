//! Priors (issue 20, doc/FORMAT.md section 11) for the revisions the presets
//! write now: a model restored from a snapshot of revisions 9 to 12 codes
//! exactly as the model that learned the samples in memory (every family's
//! state, the mixer's per-set counts, the shortcut, the final SSE and the
//! byte runs are in the walk), decodes, and pays against a fresh model.

use crate::common;

use sep_cm::{Cm, CmConfig, MAX_WALK};

/// Mixed small-file text: man-page macros, C, JSON records, URLs and
/// prose, so that the text, word, markup, indirect, record and match
/// families all learn something.
fn mixed(seed: u32, n: usize) -> Vec<u8> {
    let parts: [&str; 12] = [
        ".TH SEP 1\n.SH NAME\nsep \\- compress small files\n",
        ".B \\-\\-prior\n.I file\nuses the samples as history.\n",
        "static int model_update(struct cm *m, unsigned bit) {\n    return m->p[bit];\n}\n",
        "#define TABLE_BITS 20\n#include <stdint.h>\n",
        "{\"alpha_2\": \"FR\", \"name\": \"France\", \"numeric\": \"250\"},\n",
        "{\"alpha_2\": \"DE\", \"name\": \"Germany\", \"numeric\": \"276\"},\n",
        "http://www.example.com/search?q=small+files&page=2\n",
        "https://en.wikipedia.org/wiki/Context_mixing\n",
        "The model learns the samples, then codes the file as their continuation. ",
        "<p>A <b>prior</b> is the state of a model.</p>\n",
        "\tif (x > 0 && y < 10) { z = x * y; }\n",
        "Small files pay the whole learning cost without one. ",
    ];
    let mut next = common::xorshift32(seed | 1);
    let mut out = Vec::new();
    while out.len() < n {
        let x = next();
        out.extend_from_slice(parts[(x % parts.len() as u32) as usize].as_bytes());
        if x.is_multiple_of(7) {
            out.extend_from_slice(format!("{} ", x % 1000).as_bytes());
        }
    }
    out.truncate(n);
    out
}

fn check(c: &CmConfig, history: &[u8], x: &[u8]) -> (usize, usize) {
    let restored = common::prior_round_trip(c, history, x);
    let (mut fresh, mut fst) = Cm::for_prior(c);
    let alone = common::code_after(&mut fresh, &mut fst, &[], x);
    (restored.len(), alone.len())
}

/// Revisions 9 to 12 (the presets' default and max lines) through a
/// snapshot: bit-identical to the in-memory model, and a prior pays.
#[test]
fn revisions_9_to_12_restore_exactly() {
    let history = mixed(1, 8000);
    let x = mixed(2, 1500);
    for revision in [9, 10, 11, 12] {
        let c = common::config(revision);
        let (with, alone) = check(&c, &history, &x);
        assert!(
            with * 3 < alone * 2,
            "revision {revision}: {with} with the prior vs {alone} alone"
        );
    }
}

/// A long run of one byte at the end of the samples leaves revision 9's
/// shortcut and the byte runs mid-stretch: they continue exactly.
#[test]
fn shortcut_state_continues() {
    let mut history = mixed(3, 3000);
    history.extend(std::iter::repeat_n(b'=', 2000));
    let mut x = vec![b'='; 500];
    x.extend(mixed(4, 1000));
    for revision in [9, 10, 11, 12] {
        check(&common::config(revision), &history, &x);
    }
}

/// Walk 0 (the first priors' walk) leaves revision 9's shortcut mixer
/// fresh: the restored model then codes differently from the trained one,
/// which is why walk 1 exists; without the shortcut both walks are equal.
#[test]
fn walk_0_misses_the_shortcut_mixer() {
    let history = mixed(5, 3000);
    let c = common::config(9);
    assert!(Cm::state_len_walk(&c, 1) > Cm::state_len_walk(&c, 0));
    let c8 = common::config(8);
    assert_eq!(Cm::state_len_walk(&c8, 1), Cm::state_len_walk(&c8, 0));
    assert_eq!(
        Cm::snapshot_walk(&c8, &history, 1).unwrap(),
        Cm::snapshot(&c8, &history).unwrap()
    );
    assert!(Cm::restore_walk(&c, &[], 0, 0, MAX_WALK + 1).is_err());
}
