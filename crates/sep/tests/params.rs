//! The model-parameter wire format (`sep::params`, doc/FORMAT.md sections
//! 4.4-4.10): every backbone and CM configuration round-trips, and every
//! malformed field is refused with an error that names it.

use sep::neural::{
    Adaptive, BackboneConfig, PacConfig, PatchTstConfig, SeBody, SeConfig, TokenShape, TraceConfig,
};
use sep::params::{ParamError, read_backbone, read_cm, write_backbone, write_cm};

const TRACE: TraceConfig = TraceConfig {
    shape: TokenShape {
        context: 6,
        embed: 8,
        group: 2,
        heads: 2,
        ffn: 8,
    },
    passes: 2,
};

/// SE over a TRACE body: 11 bytes, patches of 4, 3 tokens of 16.
fn se(stride: u8, adaptive: Adaptive) -> SeConfig {
    SeConfig {
        context: 11,
        patch: 4,
        stride,
        embed: 4,
        positions: true,
        newest_init: true,
        tokens: 3,
        adaptive,
        body: SeBody::Trace(TRACE),
    }
}

fn configs() -> Vec<BackboneConfig> {
    let soft = |per_element| Adaptive::Soft {
        per_element,
        keep_every: 3,
        threshold: 0.5,
        slope: 4.0,
    };
    let hard = Adaptive::Hard {
        keep_every: 3,
        threshold: 0.5,
        sparsity: 0.01,
    };
    let pac_body = PacConfig {
        context: 4,
        embed: 4,
        ffn: 16,
        pairs: 2,
        cache: true,
    };
    vec![
        BackboneConfig::Pac(PacConfig::PAPER),
        BackboneConfig::Trace(TraceConfig::PAPER),
        BackboneConfig::PatchTst(PatchTstConfig::PAPER),
        BackboneConfig::Se(se(1, Adaptive::Off)),
        BackboneConfig::Se(se(3, soft(true))),
        BackboneConfig::Se(se(1, soft(false))),
        BackboneConfig::Se(se(1, hard)),
        BackboneConfig::Se(SeConfig {
            context: 12,
            tokens: 1,
            positions: false,
            body: SeBody::Pac(pac_body),
            ..se(1, hard)
        }),
    ]
}

#[test]
fn every_backbone_round_trips_at_its_documented_length() {
    for c in configs() {
        let b = write_backbone(&c);
        let expected = match &c {
            BackboneConfig::Pac(_) => 8,
            BackboneConfig::Trace(_) | BackboneConfig::PatchTst(_) => 10,
            BackboneConfig::Se(s) => {
                28 + if matches!(s.body, SeBody::Pac(_)) {
                    8
                } else {
                    10
                }
            }
        };
        assert_eq!(b.len(), expected, "{c:?}");
        assert_eq!(read_backbone(c.id(), &b), Ok(c.clone()));
        // One byte short or long is a length error naming the parameters.
        for len in [b.len() - 1, b.len() + 1] {
            let mut short = b.clone();
            short.resize(len, 0);
            let e = read_backbone(c.id(), &short).unwrap_err();
            assert!(
                matches!(
                    e,
                    ParamError::Length { .. } | ParamError::LengthField { .. }
                ),
                "{c:?} at {len} bytes: {e}"
            );
        }
    }
}

#[test]
fn malformed_fields_are_named() {
    let pac = write_backbone(&BackboneConfig::Pac(PacConfig::PAPER));
    let trace = write_backbone(&BackboneConfig::Trace(TraceConfig::PAPER));
    let patchtst = write_backbone(&BackboneConfig::PatchTst(PatchTstConfig::PAPER));
    let good = write_backbone(&BackboneConfig::Se(se(
        1,
        Adaptive::Hard {
            keep_every: 3,
            threshold: 0.5,
            sparsity: 0.01,
        },
    )));
    let cases: &[(u8, &[u8], usize, u8, &str)] = &[
        (1, &pac, 7, 2, "reserved PAC flags"),
        (1, &pac, 6, 0, "PAC pairs 0"),
        (2, &trace, 9, 1, "reserved TRACE byte 9"),
        (2, &trace, 8, 0, "TRACE passes 0"),
        (3, &patchtst, 9, 3, "reserved PatchTST byte 9"),
        (3, &patchtst, 8, 9, "PatchTST layers 9"),
        (4, &good, 8, 4, "reserved SE flags"),
        (4, &good, 9, 3, "unknown SE adaptive mode 3"),
        (4, &good, 10, 1, "SE mask must be 0 for adaptive mode 2"),
        (4, &good, 16, 1, "SE slope must be 0"),
        (4, &good, 24, 4, "unknown SE body backbone id 4"),
        (4, &good, 24, 1, "PAC parameters are 10 bytes, expected 8"),
        (4, &good, 25, 1, "reserved SE byte 25"),
        (4, &good, 26, 9, "SE body_len says 9 bytes, 10 follow"),
        (4, &good, 2, 0, "SE patch 0"),
    ];
    for &(id, bytes, at, v, what) in cases {
        let mut b = bytes.to_vec();
        b[at] = v;
        let e = read_backbone(id, &b).unwrap_err().to_string();
        assert!(
            e.contains(what),
            "backbone {id}, byte {at} = {v}: expected '{what}' in: {e}"
        );
    }
    let mut off = write_backbone(&BackboneConfig::Se(se(1, Adaptive::Off)));
    off[11] = 1;
    assert_eq!(
        read_backbone(4, &off),
        Err(ParamError::Unused {
            field: "keep_every",
            mode: 0,
            value: 1
        })
    );
    assert!(matches!(
        read_backbone(9, &pac),
        Err(ParamError::Unknown {
            field: "backbone id",
            value: 9,
            ..
        })
    ));
    // A config that breaks a model's own limit reads back as that limit.
    let bad = SeConfig {
        tokens: 4,
        ..se(1, Adaptive::Off)
    };
    assert_eq!(
        read_backbone(4, &write_backbone(&BackboneConfig::Se(bad))),
        Err(ParamError::Limit(bad.validate().unwrap_err()))
    );
}

#[test]
fn cm_params_round_trip_and_name_bad_flags() {
    let c = sep::MixConfig::preset(sep::Preset::Default).unwrap().cm;
    let b = write_cm(&c);
    assert_eq!(b.len(), 12);
    assert_eq!(read_cm(&b, c.revision), Ok(c));
    let mut flag = b.clone();
    flag[1] = 2;
    assert_eq!(
        read_cm(&flag, c.revision),
        Err(ParamError::Flag {
            field: "CM flag word",
            value: 2
        })
    );
    assert!(
        read_cm(&b, 200)
            .unwrap_err()
            .to_string()
            .contains("revision")
    );
    assert!(matches!(
        read_cm(&b[..11], 0),
        Err(ParamError::Length {
            found: 11,
            expected: 12,
            ..
        })
    ));
}

#[test]
fn serial_network_params_round_trip_and_name_bad_fields() {
    let c = sep::LstmConfig {
        kind: 1,
        cells: 64,
        horizon: 16,
        lr: 100,
        delay: 0,
    };
    let b = sep::params::write_serial(&c);
    assert_eq!(b.len(), 8);
    assert_eq!(sep::params::read_serial(&b), Ok(c));
    // Kind 2 (doc/FORMAT.md 4.13.1): the same fields, a decaying rate.
    let c2 = sep::LstmConfig { kind: 2, ..c };
    let b2 = sep::params::write_serial(&c2);
    assert_eq!(b2[0], 2);
    assert_eq!(sep::params::read_serial(&b2), Ok(c2));
    // Kind 3 (doc/FORMAT.md 4.13.2): byte 5 is the delay.
    let c3 = sep::LstmConfig {
        kind: 3,
        delay: 32,
        ..c
    };
    let b3 = sep::params::write_serial(&c3);
    assert_eq!((b3[0], b3[5]), (3, 32));
    assert_eq!(sep::params::read_serial(&b3), Ok(c3));
    // Kind 4 (doc/FORMAT.md 4.13.3): kind 3's fields.
    let c4 = sep::LstmConfig { kind: 4, ..c3 };
    let b4 = sep::params::write_serial(&c4);
    assert_eq!((b4[0], b4[5]), (4, 32));
    assert_eq!(sep::params::read_serial(&b4), Ok(c4));
    for (at, v, what) in [
        (0, 5, "unknown serial network kind 5"),
        (5, 1, "delay"),
        (2, 0, "horizon"),
        (7, 1, "reserved serial network bytes"),
    ] {
        let mut bad = b.clone();
        bad[at] = v;
        let e = sep::params::read_serial(&bad).unwrap_err().to_string();
        assert!(
            e.contains(what),
            "byte {at} = {v}: expected '{what}' in: {e}"
        );
    }
    assert!(sep::params::read_serial(&b[..7]).is_err());
}
