//! The semantics enhancement: finite-difference gradients in every adaptive mode in
//! front of every body, the hard gate's skipping and reproducibility, and the archive
//! form of every field.

mod common;

use sep_model::{
    Adaptive, Backbone, BackboneConfig, PacConfig, PatchTstConfig, Se, SeBody, SeConfig,
    TokenShape, TraceConfig,
};

const SOFT: Adaptive = Adaptive::Soft {
    per_element: false,
    keep_every: 2,
    threshold: 0.5,
    slope: 4.0,
};
const SOFT_ELEMENT: Adaptive = Adaptive::Soft {
    per_element: true,
    keep_every: 3,
    threshold: 0.5,
    slope: 4.0,
};
const HARD: Adaptive = Adaptive::Hard {
    keep_every: 3,
    threshold: 0.5,
    sparsity: 0.01,
};
const MODES: [Adaptive; 4] = [Adaptive::Off, SOFT, SOFT_ELEMENT, HARD];

/// SE with a PAC body: 12 bytes, patches of 4, `stride` 1 or 2, 4 features per byte,
/// one token of 16.
fn pac(stride: u8, adaptive: Adaptive) -> SeConfig {
    SeConfig {
        context: 12,
        patch: 4,
        stride,
        embed: 4,
        positions: false,
        newest_init: false,
        tokens: 1,
        adaptive,
        body: SeBody::Pac(PacConfig {
            context: 4,
            embed: 4,
            ffn: 16,
            pairs: 2,
            cache: true,
        }),
    }
}

/// SE with a TRACE body: 11 bytes, patches of 4 every 3 bytes (3 patches, offset 1) or
/// every byte (8 patches), 4 features per byte with positions, 3 tokens of 16.
fn trace(stride: u8, adaptive: Adaptive) -> SeConfig {
    SeConfig {
        context: 11,
        patch: 4,
        stride,
        embed: 4,
        positions: true,
        newest_init: false,
        tokens: 3,
        adaptive,
        body: SeBody::Trace(TraceConfig {
            shape: TokenShape {
                context: 6,
                embed: 8,
                group: 2,
                heads: 2,
                ffn: 16,
            },
            passes: 2,
        }),
    }
}

/// SE with a PatchTST body: 11 bytes, patches of 3 every 2 bytes (offset 0), 2 tokens of 12.
fn patchtst(adaptive: Adaptive) -> SeConfig {
    SeConfig {
        context: 11,
        patch: 3,
        stride: 2,
        embed: 4,
        positions: false,
        newest_init: false,
        tokens: 2,
        adaptive,
        body: SeBody::PatchTst(PatchTstConfig {
            shape: TokenShape {
                context: 6,
                embed: 4,
                group: 3,
                heads: 2,
                ffn: 16,
            },
            layers: 1,
        }),
    }
}

/// Hard-gate scores at `+-1` (far from the threshold's 0), every third unforced patch
/// skipped; tensor 3 is the mask (embedding, map weight, map bias, mask).
fn split_scores(model: &mut dyn Backbone) {
    let mut k = 0;
    model.visit_params(&mut |p| {
        if k == 3 && p.name == "se.mask" {
            for (i, v) in p.value.iter_mut().enumerate() {
                *v = if i % 3 == 1 { -1.0 } else { 1.0 };
            }
        }
        k += 1;
    });
}

fn check(c: SeConfig) {
    let hard = matches!(c.adaptive, Adaptive::Hard { .. });
    common::gradient_check(&BackboneConfig::Se(c), &mut |m| {
        if hard {
            split_scores(m);
        }
    });
}

#[test]
fn gradients_with_a_pac_body() {
    for mode in MODES {
        for stride in [1, 2] {
            check(pac(stride, mode));
        }
    }
}

#[test]
fn gradients_with_a_trace_body() {
    for mode in MODES {
        for stride in [1, 3] {
            check(trace(stride, mode));
        }
    }
}

#[test]
fn gradients_with_a_patchtst_body() {
    for mode in [Adaptive::Off, SOFT_ELEMENT, HARD] {
        check(patchtst(mode));
    }
}

#[test]
fn hard_gate_skips_patches_exactly() {
    // Patches of 4 every 4 bytes: each byte is in one patch. With patch 1 skipped, its
    // bytes (4..8) cannot change the logits.
    let c = SeConfig {
        stride: 4,
        adaptive: Adaptive::Hard {
            keep_every: 0,
            threshold: 0.5,
            sparsity: 0.0,
        },
        ..pac(1, HARD)
    };
    let mut model = Se::new(&c, 2, 3);
    model.visit_params(&mut |p| {
        if p.name == "se.mask" {
            p.value.copy_from_slice(&[1.0, -1.0, 1.0]);
        }
    });
    let mut ctx = common::context(2, 12);
    let a = common::logit_bits(&mut model, &ctx, 2);
    assert_eq!((model.kept_patches(), model.patches()), (2, 3));
    for i in 4..8 {
        ctx[i] ^= 0xA5;
        ctx[12 + i] = ctx[12 + i].wrapping_add(1);
    }
    model.reset();
    assert_eq!(a, common::logit_bits(&mut model, &ctx, 2));
    ctx[8] ^= 1;
    model.reset();
    assert_ne!(a, common::logit_bits(&mut model, &ctx, 2));
}

#[test]
fn hard_gate_decisions_replay_and_sparsity_prunes() {
    let c = SeConfig {
        adaptive: Adaptive::Hard {
            keep_every: 4,
            threshold: 0.5,
            sparsity: 1.0,
        },
        ..trace(1, HARD)
    };
    let run = || {
        let mut m = Se::new(&c, 3, 9);
        // Start the scores near the threshold so that a few hundred steps decide.
        m.visit_params(&mut |p| {
            if p.name == "se.mask" {
                p.value.fill(0.2);
            }
        });
        let mut kept = Vec::new();
        let mut logits = Vec::new();
        for round in 0..6 {
            logits.extend(common::train(&mut m, 3, 200, round));
            kept.push(m.kept_patches());
        }
        (kept, logits)
    };
    let (kept_a, logits_a) = run();
    let (kept_b, logits_b) = run();
    assert_eq!(kept_a, kept_b);
    assert!(logits_a == logits_b, "training replays bit for bit");
    // Strong sparsity pressure drives the unforced scores under the threshold; the
    // forced patches (0 and 4 of 8) stay.
    assert_eq!(kept_a[0], 8, "{kept_a:?}");
    assert_eq!(*kept_a.last().unwrap(), 2, "{kept_a:?}");
}

#[test]
fn newest_init_starts_from_the_newest_patches() {
    // 12 bytes, patches of 4 every 2 bytes (5 patches), 1 token: the map starts as
    // patch 4 alone (bytes 8..12); the other bytes cannot change the first logits.
    let c = SeConfig {
        newest_init: true,
        ..pac(2, Adaptive::Off)
    };
    let mut model = Se::new(&c, 2, 4);
    let mut ctx = common::context(2, 12);
    let a = common::logit_bits(&mut model, &ctx, 2);
    for i in 0..8 {
        ctx[i] ^= 0x3C;
        ctx[12 + i] ^= 0x81;
    }
    model.reset();
    assert_eq!(a, common::logit_bits(&mut model, &ctx, 2));
    ctx[8] ^= 1;
    model.reset();
    assert_ne!(a, common::logit_bits(&mut model, &ctx, 2));
    // With T tokens, token t starts as patch N - 1 - (T - 1 - t) * ceil(P / S).
    let t = SeConfig {
        newest_init: true,
        ..trace(3, Adaptive::Off)
    };
    let mut w = Vec::new();
    Se::new(&t, 1, 0).visit_params(&mut |p| {
        if p.name == "se.map.weight" {
            w = p.value.clone();
        }
    });
    // 3 patches (stride 3, patch 4: step 2), 3 tokens: patch 2 for token 2, patch 0
    // for token 1, none for token 0.
    assert_eq!(w, [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
}

#[test]
fn soft_gate_keeps_every_patch_and_forced_patches_get_no_gradient() {
    let mut m = BackboneConfig::Se(pac(1, SOFT)).build(3, 2);
    let ctx = common::context(3, 12);
    let mut ce = sep_nn::CrossEntropy::new(256, 3);
    let logits = m.forward(&ctx, 3).to_vec();
    ce.forward(&logits, &common::TARGETS);
    let d = ce.backward().to_vec();
    m.backward(&d);
    m.visit_params(&mut |p| {
        if p.name == "se.mask" {
            // keep_every 2: patches 0, 2, 4 forced.
            for (i, g) in p.grad.iter().enumerate() {
                assert_eq!(*g == 0.0, i % 2 == 0, "patch {i}: {g}");
            }
        }
    });
}

#[test]
fn config_validates_every_field() {
    // The archive form (and its round trip) is sep::params's: crates/sep/tests/params.rs.
    for c in [
        pac(1, Adaptive::Off),
        pac(2, SOFT),
        trace(3, SOFT_ELEMENT),
        trace(1, HARD),
        patchtst(HARD),
    ] {
        assert!(c.validate().is_ok(), "{c:?}");
    }
    let base = trace(1, HARD);
    let bad = |c: SeConfig, what: &str| {
        let msg = c.validate().unwrap_err();
        assert!(msg.contains(what), "expected '{what}' in: {msg}");
    };
    bad(SeConfig { context: 0, ..base }, "context");
    bad(
        SeConfig {
            context: 300,
            ..base
        },
        "context",
    );
    bad(SeConfig { patch: 0, ..base }, "patch");
    bad(SeConfig { patch: 12, ..base }, "patch");
    bad(SeConfig { patch: 2, ..base }, "tokens of 8");
    bad(SeConfig { stride: 0, ..base }, "stride");
    bad(SeConfig { stride: 5, ..base }, "stride");
    bad(SeConfig { embed: 6, ..base }, "multiple of 4");
    bad(SeConfig { embed: 0, ..base }, "embed");
    bad(SeConfig { tokens: 0, ..base }, "tokens");
    bad(SeConfig { tokens: 4, ..base }, "body reads 3 of 16");
    bad(
        SeConfig {
            adaptive: Adaptive::Hard {
                keep_every: 1,
                threshold: 1.0,
                sparsity: 0.0,
            },
            ..base
        },
        "threshold",
    );
    bad(
        SeConfig {
            adaptive: Adaptive::Hard {
                keep_every: 1,
                threshold: 0.5,
                sparsity: f32::NAN,
            },
            ..base
        },
        "sparsity",
    );
    bad(
        SeConfig {
            adaptive: Adaptive::Soft {
                per_element: false,
                keep_every: 1,
                threshold: 0.5,
                slope: 0.0,
            },
            ..base
        },
        "slope",
    );
    bad(
        SeConfig {
            context: 256,
            patch: 16,
            embed: 256,
            tokens: 1,
            adaptive: SOFT_ELEMENT,
            body: SeBody::Pac(PacConfig {
                context: 16,
                embed: 256,
                ffn: 16,
                pairs: 1,
                cache: false,
            }),
            ..base
        },
        "per-element mask",
    );
    // Byte-level checks (reserved bits, unused fields, the body's id and length) are
    // sep::params's: crates/sep/tests/params.rs.
}

#[test]
fn paper_shapes() {
    // SEP+TRACE: 64 bytes, patches of 4 -> 61 patches -> 4 tokens of 256.
    let c = SeConfig {
        context: 64,
        patch: 4,
        stride: 1,
        embed: 64,
        positions: true,
        newest_init: false,
        tokens: 4,
        adaptive: Adaptive::Off,
        body: SeBody::Trace(TraceConfig::PAPER.with_context(16)),
    };
    assert_eq!(c.validate(), Ok(()));
    assert_eq!((c.patches(), c.offset(), c.features()), (61, 0, 256));
    let s3 = SeConfig { stride: 3, ..c };
    assert_eq!((s3.patches(), s3.offset()), (21, 0));
    let pac = SeConfig {
        context: 48,
        patch: 16,
        stride: 3,
        embed: 16,
        positions: false,
        newest_init: false,
        tokens: 1,
        adaptive: Adaptive::Off,
        body: SeBody::Pac(PacConfig {
            pairs: 5,
            ..PacConfig::PAPER
        }),
    };
    assert_eq!(pac.validate(), Ok(()));
    // 32 bytes of slack do not divide by 3: patches align to the newest byte.
    assert_eq!((pac.patches(), pac.offset()), (11, 2));
}
