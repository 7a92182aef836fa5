//! PatchTST: finite-difference gradients (batch normalisation included), the coupling
//! of the streams through it, and the configuration's archive form.

mod common;

use sep_model::{BackboneConfig, PatchTstConfig, TokenShape};

const TINY: PatchTstConfig = PatchTstConfig {
    shape: TokenShape {
        context: 8,
        embed: 8,
        group: 2,
        heads: 2,
        ffn: 16,
    },
    layers: 1,
};

#[test]
fn gradients() {
    common::gradient_check(&BackboneConfig::PatchTst(TINY), &mut |_| {});
    common::gradient_check(
        &BackboneConfig::PatchTst(PatchTstConfig {
            shape: TokenShape {
                group: 4,
                heads: 4,
                ..TINY.shape
            },
            layers: 2,
        }),
        &mut |_| {},
    );
}

#[test]
fn batch_norm_couples_rows_and_a_single_row_works() {
    let cfg = BackboneConfig::PatchTst(TINY);
    let mut m = cfg.build(2, 1);
    let mut ctx = common::context(2, 8);
    let first = common::logit_bits(m.as_mut(), &ctx, 2);
    ctx[12] ^= 0x55;
    let second = common::logit_bits(m.as_mut(), &ctx, 2);
    assert_ne!(
        first[..256],
        second[..256],
        "row 0 sees row 1 through BatchNorm"
    );
    // The last steps of a block have fewer rows: one row still has 4 token rows.
    let one = common::logit_bits(m.as_mut(), &ctx[..8], 1);
    assert!(one.iter().all(|b| f32::from_bits(*b).is_finite()));
    let mut a = cfg.build(3, 5);
    let mut b = cfg.build(3, 5);
    assert_eq!(
        common::train(a.as_mut(), 3, 5, 2),
        common::train(b.as_mut(), 3, 5, 2)
    );
}

#[test]
fn config_validates() {
    // The archive form (and its round trip) is sep::params's: crates/sep/tests/params.rs.
    let c = PatchTstConfig::PAPER;
    assert!(c.validate().is_ok());
    for bad in [
        PatchTstConfig {
            shape: TokenShape {
                group: 64,
                ..c.shape
            },
            ..c
        },
        PatchTstConfig {
            shape: TokenShape {
                embed: 30,
                ..c.shape
            },
            ..c
        },
        PatchTstConfig {
            shape: TokenShape {
                heads: 3,
                ..c.shape
            },
            ..c
        },
        PatchTstConfig { layers: 0, ..c },
        PatchTstConfig { layers: 9, ..c },
        PatchTstConfig {
            shape: TokenShape { ffn: 0, ..c.shape },
            ..c
        },
    ] {
        let msg = bad.validate().unwrap_err();
        assert!(msg.starts_with("PatchTST"), "{msg}");
    }
    // the paper (doc/SEP-DESIGN.md): ~78 MFLOP forward per byte (here the output map runs on the last token only).
    let macs = c.forward_macs();
    assert!((37_000_000..39_000_000).contains(&macs), "{macs}");
}
