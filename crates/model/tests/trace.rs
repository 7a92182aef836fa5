//! TRACE: finite-difference gradients through every layer, reproducibility, and the
//! configuration's archive form.

mod common;

use sep_model::{BackboneConfig, TokenShape, TraceConfig};

const TINY: TraceConfig = TraceConfig {
    shape: TokenShape {
        context: 8,
        embed: 8,
        group: 2,
        heads: 2,
        ffn: 16,
    },
    passes: 2,
};

#[test]
fn gradients() {
    common::gradient_check(&BackboneConfig::Trace(TINY), &mut |_| {});
    common::gradient_check(
        &BackboneConfig::Trace(TraceConfig {
            shape: TokenShape {
                group: 4,
                heads: 1,
                ..TINY.shape
            },
            passes: 1,
        }),
        &mut |_| {},
    );
}

#[test]
fn same_seed_same_bits_and_training_is_reproducible() {
    let cfg = BackboneConfig::Trace(TINY);
    let mut a = cfg.build(3, 5);
    let mut b = cfg.build(3, 5);
    assert_eq!(
        common::train(a.as_mut(), 3, 6, 1),
        common::train(b.as_mut(), 3, 6, 1)
    );
    let ctx = common::context(2, 8);
    let mut c = cfg.build(3, 6);
    assert_ne!(
        common::logit_bits(a.as_mut(), &ctx, 2),
        common::logit_bits(c.as_mut(), &ctx, 2)
    );
}

#[test]
fn only_the_context_matters_per_row() {
    // Linear attention and LayerNorm are per row: a row's logits do not depend on the
    // other rows of the step.
    let mut m = BackboneConfig::Trace(TINY).build(2, 1);
    let mut ctx = common::context(2, 8);
    let first = common::logit_bits(m.as_mut(), &ctx, 2);
    ctx[12] ^= 0x55;
    let second = common::logit_bits(m.as_mut(), &ctx, 2);
    assert_eq!(first[..256], second[..256]);
    assert_ne!(first[256..], second[256..]);
}

#[test]
fn config_validates() {
    // The archive form (and its round trip) is sep::params's: crates/sep/tests/params.rs.
    let c = TraceConfig::PAPER;
    assert!(c.validate().is_ok());
    for bad in [
        TraceConfig {
            shape: TokenShape {
                embed: 62,
                ..c.shape
            },
            ..c
        },
        TraceConfig {
            shape: TokenShape {
                group: 5,
                ..c.shape
            },
            ..c
        },
        TraceConfig {
            shape: TokenShape {
                group: 0,
                ..c.shape
            },
            ..c
        },
        TraceConfig {
            shape: TokenShape {
                heads: 7,
                ..c.shape
            },
            ..c
        },
        TraceConfig {
            shape: TokenShape {
                heads: 0,
                ..c.shape
            },
            ..c
        },
        TraceConfig {
            shape: TokenShape { ffn: 0, ..c.shape },
            ..c
        },
        TraceConfig { passes: 0, ..c },
        TraceConfig { passes: 5, ..c },
        c.with_context(0),
        c.with_context(512),
    ] {
        let msg = bad.validate().unwrap_err();
        assert!(msg.starts_with("TRACE"), "{msg}");
    }
    // the paper (doc/SEP-DESIGN.md): ~13 MFLOP forward per byte with the last token alone, ~143 for all tokens.
    let macs = c.forward_macs();
    assert!((6_000_000..7_000_000).contains(&macs), "{macs}");
    let all = c.reference_macs();
    assert!((70_000_000..73_000_000).contains(&all), "{all}");
    let m = c.memory_bytes(512);
    assert!(m > 30 << 20 && m < 1 << 30, "{m}");
}
