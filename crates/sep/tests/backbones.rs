//! Every backbone (PAC, TRACE, PatchTST), with and without the semantics enhancement,
//! in every adaptive-stride mode: round trips, archives independent of the kernels'
//! thread count, and the header form of every new field.

mod common;
use common::{noise, round_trip};
use sep::{
    Model, ModelConfig, Options,
    neural::{
        Adaptive, BackboneConfig, NeuralConfig, PacConfig, PatchTstConfig, SeBody, SeConfig,
        TokenShape, TraceConfig,
    },
};

const PAC: PacConfig = PacConfig {
    context: 4,
    embed: 8,
    ffn: 32,
    pairs: 2,
    cache: true,
};
const TRACE: TraceConfig = TraceConfig {
    shape: TokenShape {
        context: 8,
        embed: 8,
        group: 2,
        heads: 2,
        ffn: 32,
    },
    passes: 2,
};
const PATCHTST: PatchTstConfig = PatchTstConfig {
    shape: TokenShape {
        context: 8,
        embed: 8,
        group: 2,
        heads: 2,
        ffn: 32,
    },
    layers: 1,
};

fn modes(patch: u8) -> [Adaptive; 4] {
    [
        Adaptive::Off,
        Adaptive::Soft {
            per_element: false,
            keep_every: 2,
            threshold: 0.5,
            slope: 10.0,
        },
        Adaptive::Soft {
            per_element: true,
            keep_every: patch,
            threshold: 0.5,
            slope: 64.0,
        },
        Adaptive::Hard {
            keep_every: patch,
            threshold: 0.5,
            sparsity: 0.01,
        },
    ]
}

/// The SE in front of each tiny body: 12 bytes, patches of 2 or 4, stride 1 or 2.
fn se(body: SeBody, stride: u8, adaptive: Adaptive) -> SeConfig {
    // PAC reads one token of 32; the token bodies two tokens of 16.
    let (tokens, width) = body.input_shape();
    let patch = if matches!(body, SeBody::Pac(_)) { 4 } else { 2 };
    let embed = (width / usize::from(patch)) as u16;
    SeConfig {
        context: 12,
        patch,
        stride,
        embed,
        positions: matches!(body, SeBody::Trace(_)),
        newest_init: false,
        tokens: tokens as u16,
        adaptive,
        body,
    }
}

/// Every plain backbone, then each body behind the SE in every mode, both strides.
fn all_backbones() -> Vec<BackboneConfig> {
    let bodies = [
        SeBody::Pac(PAC),
        SeBody::Trace(TRACE.with_context(4)),
        SeBody::PatchTst(PATCHTST.with_context(4)),
    ];
    let mut all = vec![
        BackboneConfig::Pac(PAC),
        BackboneConfig::Trace(TRACE),
        BackboneConfig::PatchTst(PATCHTST),
    ];
    for body in bodies {
        let patch = if matches!(body, SeBody::Pac(_)) { 4 } else { 2 };
        for (i, mode) in modes(patch).into_iter().enumerate() {
            let mut c = se(body, 1 + (i % 2) as u8, mode);
            c.newest_init = i == 3;
            all.push(BackboneConfig::Se(c));
        }
    }
    for b in &all {
        b.validate()
            .unwrap_or_else(|e| panic!("{}: {e}", b.describe()));
    }
    all
}

fn neural(backbone: BackboneConfig, streams: u32) -> NeuralConfig {
    NeuralConfig {
        backbone,
        streams,
        min_stream_len: 64,
        adam: sep::neural::AdamConfig::default(),
    }
}

fn sample(len: usize) -> Vec<u8> {
    let text = b"Semantic patches carry several bytes' meaning; strides adapt. ".repeat(80);
    [&text[..len - 300], &noise(300, 5)[..]].concat()
}

#[test]
fn every_backbone_se_and_adaptive_mode_round_trips() {
    // 2701 bytes in blocks of 1500: 4 streams of uneven length, so the last steps of
    // each block run with fewer rows (PatchTST's batch statistics shrink with them).
    let data = sample(2701);
    for b in all_backbones() {
        let o = Options {
            model: Model::Neural(neural(b.clone(), 4)),
            block_size: Some(1500),
            small_blocks: true,
            threads: 2,
            ..Options::default()
        };
        let archive = round_trip(&data, &o);
        eprintln!("{:100} {} -> {}", b.describe(), data.len(), archive.len());
        assert!(archive.len() < data.len(), "{}", b.describe());
        let h = sep::read_header(&mut &archive[..]).unwrap();
        assert_eq!(
            ModelConfig::from_header(&h).unwrap(),
            ModelConfig::Neural(neural(b.clone(), 4)),
            "header round trip"
        );
    }
}

#[test]
fn archives_do_not_depend_on_kernel_threads() {
    // Sizes at which the kernels split products over threads (2^22 multiply-adds):
    // 64 streams of 8 tokens of 128 features.
    let trace = TraceConfig {
        shape: TokenShape {
            context: 32,
            embed: 32,
            group: 4,
            heads: 4,
            ffn: 512,
        },
        passes: 2,
    };
    let patchtst = PatchTstConfig {
        shape: TokenShape {
            context: 32,
            embed: 32,
            group: 4,
            heads: 4,
            ffn: 512,
        },
        layers: 1,
    };
    let se_trace = SeConfig {
        context: 32,
        patch: 4,
        stride: 1,
        embed: 32,
        positions: true,
        newest_init: false,
        tokens: 2,
        adaptive: Adaptive::Hard {
            keep_every: 4,
            threshold: 0.5,
            sparsity: 0.01,
        },
        body: SeBody::Trace(trace.with_context(8)),
    };
    let se_patchtst = SeConfig {
        positions: false,
        newest_init: false,
        tokens: 4,
        adaptive: Adaptive::Soft {
            per_element: true,
            keep_every: 4,
            threshold: 0.5,
            slope: 10.0,
        },
        body: SeBody::PatchTst(patchtst.with_context(16)),
        ..se_trace
    };
    let data = sample(1300);
    for b in [
        BackboneConfig::Trace(trace),
        BackboneConfig::PatchTst(patchtst),
        BackboneConfig::Se(se_trace),
        BackboneConfig::Se(se_patchtst),
    ] {
        let o = Options {
            model: Model::Neural(NeuralConfig {
                min_stream_len: 40,
                ..neural(b.clone(), 64)
            }),
            ..Options::default()
        };
        sep_kernels::set_num_threads(1);
        let one = sep::compress(&data, &o).unwrap();
        sep_kernels::set_num_threads(2);
        let two = sep::compress(&data, &o).unwrap();
        assert!(one == two, "{}: archives differ by threads", b.describe());
        assert_eq!(sep::decompress(&two).unwrap(), data, "{}", b.describe());
    }
}

/// Replaces the header of `archive` by `h` (its checksum recomputed).
fn with_header(archive: &[u8], h: &sep::format::Header) -> Vec<u8> {
    let old = sep::read_header(&mut &archive[..])
        .unwrap()
        .to_bytes()
        .len();
    [&h.to_bytes()[..], &archive[old..]].concat()
}

#[test]
fn bad_header_fields_are_rejected_with_their_name() {
    let b = BackboneConfig::Se(se(SeBody::Trace(TRACE.with_context(4)), 2, modes(2)[3]));
    let data = sample(700);
    let o = Options {
        model: Model::Neural(neural(b, 4)),
        ..Options::default()
    };
    let archive = sep::compress(&data, &o).unwrap();
    let h = sep::read_header(&mut &archive[..]).unwrap();
    // `backbone_params` start at byte 50 of the neural params; the SE's own bytes
    // first, then its body's (TRACE, 10 bytes) from SE byte 28.
    let se_at = 50;
    let cases: &[(usize, &[u8], &str)] = &[
        (0, &[5], "unknown backbone id 5"),
        (0, &[1], "PAC parameters are"),
        (se_at, &[0, 0], "SE context 0"),
        (se_at + 2, &[0], "SE patch 0"),
        (se_at + 3, &[3], "SE stride 3"),
        (se_at + 4, &[6, 0], "multiple of 4"),
        (se_at + 6, &[9, 0], "SE makes 9 tokens"),
        (se_at + 8, &[4], "reserved SE flags bits"),
        (se_at + 9, &[7], "adaptive mode 7"),
        (se_at + 10, &[1], "SE mask must be 0"),
        (se_at + 12, &2f32.to_le_bytes(), "SE threshold 2"),
        (se_at + 16, &1f32.to_le_bytes(), "SE slope must be 0"),
        (se_at + 20, &(-1f32).to_le_bytes(), "SE sparsity -1"),
        (se_at + 24, &[9], "SE body backbone id 9"),
        (se_at + 25, &[1], "reserved SE byte"),
        (se_at + 28 + 4, &[3], "TRACE group 3"),
        (se_at + 28 + 5, &[3], "TRACE heads 3"),
        (se_at + 28 + 8, &[0], "TRACE passes 0"),
        (se_at + 28 + 9, &[1], "reserved TRACE byte"),
    ];
    for &(at, bytes, what) in cases {
        let mut bad = h.clone();
        bad.params[at..at + bytes.len()].copy_from_slice(bytes);
        let e = ModelConfig::from_header(&bad).unwrap_err().to_string();
        assert!(e.contains(what), "byte {at}: expected '{what}' in: {e}");
        let d = sep::decompress(&with_header(&archive, &bad)).unwrap_err();
        assert!(d.is_corrupt() && d.to_string().contains(what), "{d}");
    }
    // A PatchTST with one token could not normalise a one-stream step.
    let mut one_token = h.clone();
    let p = BackboneConfig::PatchTst(PATCHTST);
    let mut params = one_token.params[..48].to_vec();
    params.extend_from_slice(&(10u16).to_le_bytes());
    let mut pb = sep::params::write_backbone(&p);
    pb[4] = 8; // group 8: context 8 / 8 = 1 token
    params.extend_from_slice(&pb);
    params[0] = 3;
    one_token.params = params;
    one_token.context = 8;
    let e = ModelConfig::from_header(&one_token)
        .unwrap_err()
        .to_string();
    assert!(e.contains("PatchTST tokens"), "{e}");
}

#[test]
fn paper_presets_have_the_papers_shapes() {
    for (p, macs) in [
        (sep::Preset::PaperSepPac, 10_000_000..12_000_000u64),
        (sep::Preset::PaperTrace, 6_000_000..7_000_000),
        (sep::Preset::PaperSepTrace, 4_500_000..5_500_000),
        (sep::Preset::PaperPatchTst, 37_000_000..39_000_000),
        (sep::Preset::PaperSepPatchTst, 18_000_000..20_000_000),
    ] {
        let c = NeuralConfig::preset(p);
        assert_eq!(c.streams, 512, "{p:?}");
        let m = c.backbone.forward_macs();
        assert!(macs.contains(&m), "{p:?}: {m}");
        assert_eq!(sep::Preset::from_name(p.name()), Some(p));
    }
}

/// The training is the archive format: pinned archive hashes of each new backbone
/// catch any change of its arithmetic, initialisation or byte layout (as
/// `crates/nn/tests/determinism.rs` does for the layers).
#[test]
fn archives_are_pinned() {
    let data = sample(1200);
    let mut got = Vec::new();
    // TRACE, PatchTST, SE + PAC (soft per patch; hard with the newest-patch map),
    // SE + TRACE (soft per element; hard), SE + PatchTST (soft per element; hard).
    let all = all_backbones();
    for b in [1, 2, 4, 6, 9, 10, 13, 14].map(|i| all[i].clone()) {
        let o = Options {
            model: Model::Neural(neural(b.clone(), 4)),
            // The pinned hashes are of format version 1 archives.
            format_version: 1,
            ..Options::default()
        };
        let archive = sep::compress(&data, &o).unwrap();
        got.push(format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&archive)));
    }
    assert_eq!(
        got, PINNED,
        "archives changed: update PINNED only with a format change"
    );
}

const PINNED: [&str; 8] = [
    "e4aed9831577193d",
    "4b81455f36fed920",
    "3ce9f3de45727255",
    "99e641aa29abd16c",
    "a5f94e84856c6563",
    "91f7adafd6f818cf",
    "5ba92bd68a2ee0b2",
    "a15361d6cfc424d5",
];
