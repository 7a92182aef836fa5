//! doc/FORMAT.md section 7: a crafted archive that claims huge lengths or model sizes is
//! rejected before anything large is allocated, and an accepted one allocates only what
//! its blocks need, when they come. Measured with a counting global allocator
//! (`sep_kernels::CountingAllocator`, feature `alloc-counter`): the bytes requested
//! while each archive is decoded, process-wide (this binary holds this one test only).

use sep::format::{BlockHeader, BlockType, EndRecord, Header};
use sep::{
    Error, Model, ModelConfig, Options,
    neural::{
        BackboneConfig, PacConfig, PatchTstConfig, SeBody, SeConfig, TokenShape, TraceConfig,
    },
};
use sep_kernels::CountingAllocator;

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

/// Decodes `archive`; returns the result and the bytes requested meanwhile.
fn decode_measured(archive: &[u8]) -> (sep::Result<Vec<u8>>, u64) {
    let before = CountingAllocator::bytes();
    let r = sep::decompress(archive);
    (r, CountingAllocator::bytes() - before)
}

/// A header of model `model_id` with these fields, blocks of `block_size`.
fn header(model_id: u16, streams: u32, context: u16, params: Vec<u8>, block_size: u32) -> Header {
    Header {
        version: sep::format::FORMAT_VERSION,
        content_length: None,
        block_size,
        seed: 0,
        streams,
        context,
        model_id,
        params,
        prior_id: None,
    }
}

/// The `params` of a tiny network with `backbone` in its place (section 4.4), the
/// rest (Adam) from a valid header.
fn neural_params(backbone: &BackboneConfig) -> Vec<u8> {
    let tiny = Options {
        model: Model::Neural(sep::neural::NeuralConfig {
            backbone: BackboneConfig::Pac(PacConfig {
                context: 4,
                embed: 8,
                ffn: 32,
                pairs: 2,
                cache: true,
            }),
            streams: 4,
            min_stream_len: 64,
            adam: sep::neural::AdamConfig::default(),
        }),
        ..Options::default()
    }
    .header()
    .expect("tiny network")
    .0;
    let mut p = tiny.params[..48].to_vec();
    p[0] = backbone.id();
    let bb = sep::params::write_backbone(backbone);
    p.extend_from_slice(&(bb.len() as u16).to_le_bytes());
    p.extend_from_slice(&bb);
    p
}

/// `params` of the mix model without a network, with these table sizes.
fn mix_params(table_bits: u8, match_bits: u8) -> Vec<u8> {
    let h = Options {
        model: Model::Mix(sep::MixConfig {
            cm: sep::CmConfig {
                orders: 0b0011_1111,
                word: true,
                sparse: true,
                record: true,
                long: 0b0011,
                match_min: 5,
                match2_min: 12,
                table_bits: 20,
                match_bits: 16,
                selectors: 0xF,
                apms: 3,
                image: true,
                revision: 0,
            },
            neural: None,
            serial: None,
        }),
        ..Options::default()
    }
    .header()
    .expect("mix header")
    .0;
    let mut p = h.params;
    p[4 + 7] = table_bits;
    p[4 + 8] = match_bits;
    p
}

/// An archive of `header` and no block.
fn empty_archive(h: &Header) -> Vec<u8> {
    let mut a = h.to_bytes();
    a.extend_from_slice(
        &EndRecord {
            content_length: 0,
            content_check: xxhash_rust::xxh3::xxh3_64(b""),
        }
        .to_bytes(h.version),
    );
    a
}

/// `header`, then one block header claiming `raw_len` / `payload_len`, then `tail`.
fn claiming(h: &Header, block_type: BlockType, raw_len: u32, payload_len: u32) -> Vec<u8> {
    let mut a = h.to_bytes();
    BlockHeader {
        block_type,
        raw_len,
        payload_len,
        raw_check: 0,
        stream_lens: match block_type {
            BlockType::Modelled => vec![payload_len],
            _ => vec![],
        },
    }
    .write_to(&mut a, h.version)
    .expect("write to a Vec");
    a.extend_from_slice(&[0x55; 64]);
    a
}

const PAC_MAX: PacConfig = PacConfig {
    context: 256,
    embed: 16,
    ffn: 16384,
    pairs: 8,
    cache: true,
};
const TRACE_MAX: TraceConfig = TraceConfig {
    shape: TokenShape {
        context: 1024,
        embed: 16,
        group: 4,
        heads: 8,
        ffn: 16384,
    },
    passes: 4,
};
const PATCHTST_MAX: PatchTstConfig = PatchTstConfig {
    shape: TokenShape {
        context: 1024,
        embed: 16,
        group: 4,
        heads: 8,
        ffn: 16384,
    },
    layers: 4,
};

fn se_max() -> SeConfig {
    // 256 bytes in 241 patches of 16 bytes x 256 features (4096, the limit), mapped
    // to the 4 tokens of 4096 of the largest TRACE body whose tokens are that wide.
    let body = SeBody::Trace(TraceConfig {
        shape: TokenShape {
            context: 16,
            embed: 1024,
            group: 4,
            heads: 8,
            ffn: 16384,
        },
        passes: 4,
    });
    let (tokens, width) = body.input_shape();
    SeConfig {
        context: 256,
        patch: 16,
        stride: 1,
        embed: (width / 16) as u16,
        positions: false,
        newest_init: false,
        tokens: tokens as u16,
        adaptive: sep::neural::Adaptive::Soft {
            per_element: false,
            keep_every: 0,
            threshold: 0.5,
            slope: 1.0,
        },
        body,
    }
}

/// Whether an error is the one expected.
type Expected = fn(&Error) -> bool;

#[test]
fn crafted_archives_are_rejected_before_allocating() {
    let big = 1u32 << 30;
    let mut rejected: Vec<(String, Vec<u8>, Expected)> = vec![
        (
            "block_size 2^30 + 1".into(),
            empty_archive(&header(0, 1, 0, vec![], big + 1)),
            |e| {
                matches!(
                    e,
                    Error::InvalidField {
                        field: "block_size",
                        ..
                    }
                )
            },
        ),
        (
            "streams 4097".into(),
            empty_archive(&header(
                2,
                4097,
                4,
                neural_params(&BackboneConfig::Pac(PacConfig {
                    context: 4,
                    embed: 8,
                    ffn: 32,
                    pairs: 2,
                    cache: true,
                })),
                256,
            )),
            |e| {
                matches!(
                    e,
                    Error::InvalidField {
                        field: "streams",
                        ..
                    }
                )
            },
        ),
        (
            "params_len 1025".into(),
            empty_archive(&header(3, 1, 0, vec![0; 1025], 256)),
            |e| {
                matches!(
                    e,
                    Error::InvalidField {
                        field: "params_len",
                        ..
                    }
                )
            },
        ),
        (
            "order2 table_bits 25".into(),
            empty_archive(&header(1, 1, 2, vec![25, 0, 0, 0], 256)),
            |e| {
                matches!(
                    e,
                    Error::InvalidField {
                        field: "table_bits",
                        ..
                    }
                )
            },
        ),
        (
            "mix table_bits 31".into(),
            empty_archive(&header(3, 1, 0, mix_params(31, 16), big)),
            |e| matches!(e, Error::InvalidModel { .. }),
        ),
        (
            "mix match_bits 29".into(),
            empty_archive(&header(3, 1, 0, mix_params(20, 29), big)),
            |e| matches!(e, Error::InvalidModel { .. }),
        ),
    ];
    // The largest network of each backbone, every field in range, for 4096 streams.
    for (name, backbone) in [
        ("PAC", BackboneConfig::Pac(PAC_MAX)),
        ("TRACE", BackboneConfig::Trace(TRACE_MAX)),
        ("PatchTST", BackboneConfig::PatchTst(PATCHTST_MAX)),
        ("SE", BackboneConfig::Se(se_max())),
    ] {
        let context = backbone.context() as u16;
        let params = neural_params(&backbone);
        // Every field is in range: it parses, and only its size is refused.
        let one_stream = header(2, 1, context, params.clone(), big);
        let memory = ModelConfig::from_header(&one_stream)
            .map(|m| m.max_memory_bytes(big))
            .unwrap_or_else(|e| match e {
                Error::LimitExceeded { value, .. } => value,
                e => panic!("{name}: the largest network does not parse: {e}"),
            });
        eprintln!("largest {name}: {} MiB for one stream", memory / MIB);
        rejected.push((
            format!("the largest {name} for 4096 streams"),
            empty_archive(&header(2, 4096, context, params, big)),
            |e| matches!(e, Error::LimitExceeded { .. }),
        ));
    }
    for (what, archive, expected) in &rejected {
        let (r, bytes) = decode_measured(archive);
        let e = r.expect_err(what);
        assert!(expected(&e), "{what}: {e}");
        assert!(e.is_corrupt(), "{what}: {e}");
        assert!(
            bytes < 256 * KIB,
            "{what}: {bytes} bytes allocated before: {e}"
        );
        eprintln!("{what}: {e} ({bytes} bytes allocated)");
    }

    // Lengths that the header allows but the input does not hold: a block of 2^30 bytes
    // whose payload is not there. The payload is read as it arrives (at most 1 MiB
    // reserved ahead); the block's output is never allocated.
    let order2 = header(1, 1, 2, vec![24, 0, 0, 0], big);
    let store = header(0, 1, 0, vec![], big);
    for (what, archive) in [
        (
            "stored block of 2^30 bytes, 64 present",
            claiming(&store, BlockType::Stored, big, big),
        ),
        (
            "modelled block of 2^30 bytes, 64 of 2^30 payload bytes present",
            claiming(&order2, BlockType::Modelled, big, big),
        ),
    ] {
        let (r, bytes) = decode_measured(&archive);
        let e = r.expect_err(what);
        assert!(
            matches!(
                e,
                Error::Truncated {
                    what: "block payload"
                }
            ),
            "{what}: {e}"
        );
        assert!(bytes <= 2 * MIB, "{what}: {} KiB allocated", bytes / KIB);
        eprintln!("{what}: {e} ({} KiB allocated)", bytes / KIB);
    }
    // A header content_length that the blocks exceed is caught at the block that
    // exceeds it, before that block is decoded.
    let mut declared = order2.clone();
    declared.content_length = Some(10);
    let (r, bytes) = decode_measured(&claiming(&declared, BlockType::Modelled, 1000, 10));
    let e = r.expect_err("content_length exceeded");
    assert!(
        matches!(e, Error::LengthMismatch { .. }),
        "content_length exceeded: {e}"
    );
    assert!(bytes < 2 * MIB, "content_length exceeded: {bytes} bytes");

    // The largest models that are accepted allocate nothing until a block needs them:
    // an archive of no blocks decodes with a few KiB, whatever the header promises.
    for (what, h) in [
        ("order2 table_bits 24", order2.clone()),
        (
            "mix, tables of 2^30 and 2^28",
            header(3, 1, 0, mix_params(30, 28), big),
        ),
    ] {
        let model = ModelConfig::from_header(&h).unwrap_or_else(|e| panic!("{what}: {e}"));
        let (r, bytes) = decode_measured(&empty_archive(&h));
        assert_eq!(r.expect(what), b"");
        assert!(bytes < 256 * KIB, "{what}: {bytes} bytes allocated");
        eprintln!(
            "{what}: accepted ({} MiB of model per block), {bytes} bytes allocated for no block",
            model.max_memory_bytes(big) / MIB
        );
    }
}
