//! What each fuzz target checks, as plain functions of the input bytes.
//!
//! The targets in `fuzz_targets/` call these; `crates/sep/tests/fuzz_regressions.rs`
//! includes this file and replays every committed crasher (`fuzz/artifacts/`) and seed
//! (`fuzz/seeds/`) through the same functions, so a crash found once stays fixed.
//!
//! Every function panics exactly when it finds a bug: a panic inside the library, an
//! error that is not reported as corruption, output that differs from what was
//! compressed, or a decode that is not deterministic. Models are tiny (tables of 2^16
//! bytes, networks of a few thousand weights), so an input decodes in milliseconds.
//!
//! | target | input | checks |
//! |---|---|---|
//! | `header` | byte 0: bit 0 repairs `header_check`; then an archive | parse, re-serialise, model limits, structure walk, bounded decode |
//! | `decode_order2` | byte 0: mode; then blocks | [`decode_blocks`] with order2 |
//! | `decode_neural` | likewise | a tiny PAC network |
//! | `decode_mix` | likewise | tiny context mixing, no network |
//! | `decode_mix2` | likewise | the same with CM revision 1 (data-type detection) |
//! | `decode_hybrid` | likewise | tiny context mixing with the tiny PAC network |
//! | `roundtrip` | byte 0: model, byte 1: block size; then content | compress, decompress, compare |

use sep::format::{BlockHeader, BlockType, EndRecord, Header, MAGIC, Record};
use sep::{
    CmConfig, Error, MixConfig, Model, ModelConfig, Options,
    neural::{
        Adaptive, BackboneConfig, NeuralConfig, PacConfig, PatchTstConfig, SeBody, SeConfig,
        TokenShape, TraceConfig,
    },
};
use std::io::Read as _;

/// Content bytes an input may make the decoder produce (summed over the blocks it
/// reaches), weighted by the model's cost per byte; larger claims are walked, not
/// decoded (the decoder's work is bounded by the lengths in the archive, by design).
pub const WORK_BUDGET: u64 = 1 << 16;
/// Largest model memory (the library's estimate) an input may make the decoder allocate.
pub const MEMORY_BUDGET: u64 = 64 << 20;
/// Block size of the fixed headers of the `decode_*` targets.
pub const BLOCK_SIZE: u32 = 256;

const PAC: PacConfig = PacConfig {
    context: 4,
    embed: 8,
    ffn: 32,
    pairs: 2,
    cache: true,
};

/// The tiny PAC network of `decode_neural` and `decode_hybrid`: 8 streams.
pub fn tiny_neural() -> NeuralConfig {
    neural(BackboneConfig::Pac(PAC))
}

fn neural(backbone: BackboneConfig) -> NeuralConfig {
    NeuralConfig {
        backbone,
        streams: 8,
        min_stream_len: 16,
        adam: sep::neural::AdamConfig::default(),
    }
}

/// The tiny context-mixing configuration: every context kind, both match models,
/// the smallest tables.
pub fn tiny_cm() -> CmConfig {
    CmConfig {
        orders: 0b0011_1111,
        word: true,
        sparse: true,
        record: true,
        long: 0b0011,
        match_min: 5,
        match2_min: 12,
        table_bits: 16,
        match_bits: 10,
        selectors: 0xF,
        apms: 3,
        image: true,
        revision: 0,
    }
}

/// The model of each `decode_*` target. (`decode_mix` and `decode_hybrid` have one APM
/// each: every APM costs 4 MiB to initialise per block.)
pub fn decode_model(target: &str) -> Model {
    match target {
        "decode_order2" => Model::Order2,
        "decode_neural" => Model::Neural(tiny_neural()),
        "decode_mix" => Model::Mix(MixConfig {
            cm: CmConfig {
                apms: 1,
                ..tiny_cm()
            },
            neural: None,
            serial: None,
        }),
        "decode_mix2" => Model::Mix(MixConfig {
            cm: CmConfig {
                apms: 1,
                revision: 1,
                ..tiny_cm()
            },
            neural: None,
            serial: None,
        }),
        "decode_hybrid" => Model::Mix(MixConfig {
            cm: CmConfig {
                apms: 2,
                ..tiny_cm()
            },
            neural: Some(tiny_neural()),
            serial: None,
        }),
        other => panic!("no decode target {other}"),
    }
}

/// The models `roundtrip` chooses from: every model id, every backbone, the SE in each
/// gate mode.
pub fn roundtrip_models() -> Vec<Model> {
    let trace = TraceConfig {
        shape: TokenShape {
            context: 8,
            embed: 8,
            group: 2,
            heads: 2,
            ffn: 32,
        },
        passes: 2,
    };
    let patchtst = PatchTstConfig {
        shape: TokenShape {
            context: 8,
            embed: 8,
            group: 2,
            heads: 2,
            ffn: 32,
        },
        layers: 1,
    };
    let se = |body: SeBody, patch: u8, adaptive: Adaptive| {
        let (tokens, width) = body.input_shape();
        BackboneConfig::Se(SeConfig {
            context: 12,
            patch,
            stride: 1,
            embed: (width / usize::from(patch)) as u16,
            positions: matches!(body, SeBody::Trace(_)),
            newest_init: matches!(body, SeBody::Pac(_)),
            tokens: tokens as u16,
            adaptive,
            body,
        })
    };
    vec![
        Model::Store,
        Model::Order2,
        Model::Neural(tiny_neural()),
        Model::Neural(neural(BackboneConfig::Trace(trace))),
        Model::Neural(neural(BackboneConfig::PatchTst(patchtst))),
        Model::Neural(neural(se(SeBody::Pac(PAC), 4, Adaptive::Off))),
        Model::Neural(neural(se(
            SeBody::Trace(trace.with_context(4)),
            2,
            Adaptive::Soft {
                per_element: true,
                keep_every: 2,
                threshold: 0.5,
                slope: 64.0,
            },
        ))),
        Model::Neural(neural(se(
            SeBody::PatchTst(patchtst.with_context(4)),
            2,
            Adaptive::Hard {
                keep_every: 2,
                threshold: 0.5,
                sparsity: 0.01,
            },
        ))),
        decode_model("decode_mix"),
        decode_model("decode_hybrid"),
        decode_model("decode_mix2"),
    ]
}

/// The header of a `decode_*` target: its model, blocks of [`BLOCK_SIZE`], no content
/// length; order2 with the smallest table (`table_bits` 12).
pub fn fixed_header(model: &Model) -> Header {
    let options = Options {
        model: model.clone(),
        block_size: Some(BLOCK_SIZE),
        small_blocks: true,
        ..Options::default()
    };
    let mut header = options.header().expect("valid fuzz model").0;
    if *model == Model::Order2 {
        header.params[0] = 12;
    }
    header
}

/// Target `header`: any bytes as an archive. With bit 0 of the first byte set, the
/// `header_check` is repaired first, so that the fuzzer explores the fields behind it.
///
/// A header that parses re-serialises to the bytes it was read from; a model that
/// parses fits the memory limit of doc/FORMAT.md; every error is a corruption error;
/// an archive small enough decodes to exactly the content its end records describe.
pub fn header(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mut archive = rest.to_vec();
    if mode & 1 == 1 {
        repair_header_check(&mut archive);
    }
    match sep::read_header(&mut &archive[..]) {
        Ok(h) => {
            let again = h.to_bytes();
            assert_eq!(
                &archive[..again.len()],
                &again[..],
                "a parsed header does not re-serialise to its bytes"
            );
            match ModelConfig::from_header(&h) {
                Ok(model) => {
                    let block = u64::from(h.block_size);
                    let memory = model.memory_bytes(block);
                    assert!(
                        memory <= sep::format::MAX_MODEL_MEMORY,
                        "accepted a model of {memory} bytes"
                    );
                }
                Err(e) => assert!(e.is_corrupt(), "{e}"),
            }
        }
        Err(e) => assert!(e.is_corrupt(), "{e}"),
    }
    decode_bounded(&archive);
}

/// Targets `decode_*`: blocks after the fixed header of `model`.
///
/// Byte 0, bit 0 clear: the rest is the archive after the header (block records, end
/// record, perhaps more archives), decoded as it is. Bit 0 set: the rest is one
/// well-formed modelled block: `raw_len` from bytes 1-2, the stream count from byte 3,
/// the payload after it cut into equal streams; its `raw_check` and `content_check` are
/// then set to whatever the decoder finds, and the archive must decode to the same
/// content every time.
pub fn decode_blocks(model: &Model, data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let header = fixed_header(model);
    let mut archive = header.to_bytes();
    if mode & 1 == 0 {
        archive.extend_from_slice(rest);
        decode_bounded(&archive);
        return;
    }
    if rest.len() < 3 {
        return;
    }
    let raw_len = 1 + u32::from(u16::from_le_bytes([rest[0], rest[1]])) % header.block_size;
    let count = 1 + u32::from(rest[2]) % header.streams.min(raw_len);
    let payload = &rest[3..rest.len().min(3 + raw_len as usize)];
    let base = payload.len() as u32 / count;
    let mut stream_lens = vec![base; count as usize];
    stream_lens[0] += payload.len() as u32 - base * count;
    let block = BlockHeader {
        block_type: BlockType::Modelled,
        raw_len,
        payload_len: payload.len() as u32,
        raw_check: 0,
        stream_lens,
    };
    let build = |block: &BlockHeader, content_check: u64| {
        let mut a = archive.clone();
        block
            .write_to(&mut a, header.version)
            .expect("write to a Vec");
        a.extend_from_slice(payload);
        a.extend_from_slice(
            &EndRecord {
                content_length: raw_len.into(),
                content_check,
            }
            .to_bytes(header.version),
        );
        a
    };
    // First pass: learn the block's checksum.
    let found = match sep::decompress(&build(&block, 0)) {
        Err(Error::BlockChecksum { found, .. }) => found,
        Err(e) => {
            assert!(corrupt_or_limit(&e), "{e}");
            return;
        }
        // Only a block whose content checks to 0 gets here, with content checksum 0.
        Ok(out) => {
            assert_eq!(out.len(), raw_len as usize, "decoded length");
            return;
        }
    };
    // Second pass, with that checksum: the block decodes again, to the same content
    // (the decoder hands it out before it reads the end record), and only the content
    // checksum then fails, with the checksum of that content.
    let block = BlockHeader {
        raw_check: found,
        ..block
    };
    let archive = build(&block, 0);
    let mut decoder = sep::Decoder::new(&archive[..]).expect("fixed header");
    let mut content = vec![0u8; raw_len as usize];
    decoder
        .read_exact(&mut content)
        .unwrap_or_else(|e| panic!("a block that decoded once fails the second time: {e}"));
    let rest = decoder.read(&mut [0u8; 1]);
    let expected = xxhash_rust::xxh3::xxh3_64(&content);
    match rest.map_err(Error::from_io) {
        Err(Error::ContentChecksum { found, .. }) => {
            assert_eq!(found, expected, "content checksum of the decoded block")
        }
        Ok(_) => assert_eq!(expected, 0, "content checksum 0 accepted"),
        Err(e) => panic!("after the block: {e}"),
    }
}

/// Target `roundtrip`: byte 0 picks a model of [`roundtrip_models`], byte 1 a block
/// size (0: the default), the rest is the content (at most 4 KiB, 1 KiB for networks).
/// The archive must decode to the content with one and two threads, and be the same
/// when compressed with two threads.
pub fn roundtrip(data: &[u8]) {
    let [m, b, content @ ..] = data else {
        return;
    };
    let models = roundtrip_models();
    let model = models[usize::from(*m) % models.len()].clone();
    let cap = if matches!(model, Model::Neural(_))
        || matches!(&model, Model::Mix(c) if c.neural.is_some())
    {
        1024
    } else {
        4096
    };
    let content = &content[..content.len().min(cap)];
    let options = Options {
        model,
        block_size: (*b != 0).then(|| u32::from(*b) * 8),
        small_blocks: true,
        ..Options::default()
    };
    let archive = sep::compress(content, &options).expect("compress");
    let out = sep::decompress(&archive).expect("decompress what was just compressed");
    assert!(out == content, "round trip changed the content");
    let mut threaded = Vec::new();
    sep::Decoder::new(&archive[..])
        .expect("header")
        .with_threads(2)
        .read_to_end(&mut threaded)
        .expect("decompress with two threads");
    assert!(
        threaded == content,
        "two decoding threads changed the content"
    );
    let two = sep::compress(
        content,
        &Options {
            threads: 2,
            ..options
        },
    )
    .expect("compress with two threads");
    assert!(two == archive, "two coding threads changed the archive");
}

/// Decodes `archive` when [`claimed_work`] is within budget; checks that the decoder
/// and [`sep::inspect`] agree, that errors are corruption errors, and that the output
/// has the length the end records give.
pub fn decode_bounded(archive: &[u8]) {
    let Some(work) = claimed_work(archive) else {
        return;
    };
    if work > WORK_BUDGET {
        return;
    }
    let listed = sep::inspect(archive);
    match sep::decompress(archive) {
        Ok(out) => {
            let infos = listed.expect("decoded, but inspect fails");
            let total: u64 = infos.iter().map(|i| i.content_length).sum();
            assert_eq!(out.len() as u64, total, "decoded length vs end records");
            // Issue 22: random access (seek table or header walk) gives the same
            // bytes as the full decode.
            let (start, len) = (total / 3, total / 3 + 1);
            let mut part = Vec::new();
            let range = sep::Decoder::range(std::io::Cursor::new(archive), start, Some(len))
                .and_then(|mut d| Ok(std::io::Read::read_to_end(&mut d, &mut part)?));
            if len > 0 && start + len <= total {
                range.expect("decoded, but the range fails");
                let (s, e) = (start as usize, (start + len) as usize);
                assert!(part == out[s..e], "range differs from the full decode");
            }
        }
        Err(e) => assert!(corrupt_or_limit(&e), "{e}"),
    }
}

/// What a decoder may fail with on hostile input: a corruption error, a resource
/// limit of `sep::limits` (an archive may be valid yet cost more than allowed), or a
/// header that names a prior the fuzzer gives none of (`PriorNeeded`: a well-formed
/// refusal; found by the header target once version 3's short headers made the prior
/// flag cheap to reach, fuzz/artifacts/header/crash-f486...).
fn corrupt_or_limit(e: &Error) -> bool {
    e.is_corrupt() || matches!(e, Error::OverLimit { .. } | Error::PriorNeeded { .. })
}

/// The decoder's work on `archive`: the `raw_len` of every block it would reach (the
/// structure up to its first error), weighted by the cost per byte of the model; `None`
/// when a model there would allocate more than [`MEMORY_BUDGET`].
pub fn claimed_work(archive: &[u8]) -> Option<u64> {
    let mut r = archive;
    let mut work = 0u64;
    let Ok(mut header) = sep::read_header(&mut r) else {
        return Some(0);
    };
    loop {
        let Ok(model) = ModelConfig::from_header(&header) else {
            return Some(work);
        };
        if model.memory_bytes(header.block_size.into()) > MEMORY_BUDGET {
            return None;
        }
        let cost = cost_per_byte(&model);
        loop {
            match Record::read(&mut r, &header) {
                Ok(Record::Block(b)) => {
                    work += u64::from(b.raw_len) * cost;
                    let skip = (b.payload_len as usize).min(r.len());
                    r = &r[skip..];
                }
                Ok(Record::End(_)) => break,
                Err(_) => return Some(work),
            }
        }
        if r.len() < 4 || r[..4] != MAGIC {
            return Some(work);
        }
        r = &r[4..];
        match Header::read_after_magic(&mut r) {
            Ok(h) => header = h,
            Err(_) => return Some(work),
        }
    }
}

/// Rough cost of a byte relative to order2: networks by their multiply-adds.
fn cost_per_byte(model: &ModelConfig) -> u64 {
    let net = |c: &NeuralConfig| 1 + c.backbone.forward_macs() / 256;
    match model {
        ModelConfig::Store => 0,
        ModelConfig::Order2(_) => 1,
        ModelConfig::Neural(c) => net(c),
        ModelConfig::Mix(c) => 4 + c.neural.as_ref().map_or(0, net),
        // ModelConfig is non-exhaustive: a model a later library adds costs at
        // least what the mix does until it is listed here.
        _ => 4,
    }
}

/// Rewrites `header_check` to match the header bytes before it, when the archive is
/// long enough to hold one.
pub fn repair_header_check(archive: &mut [u8]) {
    if archive.len() > 6 && archive[4] == 3 {
        repair_compact_header_check(archive);
        return;
    }
    if archive.len() < 38 {
        return;
    }
    let params_len = usize::from(u16::from_le_bytes([archive[36], archive[37]]));
    let end = 38 + params_len;
    if archive.len() < end + 4 {
        return;
    }
    let check = sep::format::raw_check(&archive[..end]);
    archive[end..end + 4].copy_from_slice(&check.to_le_bytes());
}

/// [`repair_header_check`] of a header of format version 3 (doc/FORMAT.md
/// section 13): walks its varints to find `params_len`, then the check.
fn repair_compact_header_check(archive: &mut [u8]) {
    let flags = archive[5];
    let mut at = 6;
    let varint = |at: &mut usize| -> Option<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = *archive.get(*at)?;
            *at += 1;
            v |= u64::from(b & 0x7F).checked_shl(7 * i).unwrap_or(0);
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    };
    let fields = 5 + usize::from(flags & 1);
    for _ in 0..fields {
        if varint(&mut at).is_none() {
            return;
        }
    }
    let Some(params_len) = varint(&mut at) else {
        return;
    };
    let id_len = if flags & 2 != 0 { 16 } else { 0 };
    // A `params_len` near 2^64 must not overflow the walk (found by the
    // header target: fuzz/artifacts/header/crash-3f6296b7...).
    let Some(end) = usize::try_from(params_len)
        .ok()
        .and_then(|p| (at + id_len).checked_add(p))
        .filter(|end| end.checked_add(4).is_some_and(|e| e <= archive.len()))
    else {
        return;
    };
    let check = sep::format::raw_check(&archive[..end]);
    archive[end..end + 4].copy_from_slice(&check.to_le_bytes());
}

/// Target `transforms` (issue 17): the decoders of segmented blocks on any
/// bytes. Byte 0 picks what is fed: 1 jpeg, 2 deflate, 3 x86, 4 png,
/// 6 png-pixels, 7 colour (the inverse
/// transform, with bytes 1..3 the expected length, bytes 3..5 the length of
/// the inner bytes, then the inner bytes and the reconstruction data), else
/// the segment-table parser (bytes 1..3 `raw_len`, the rest a payload). No
/// panic; an inverse that succeeds gives exactly the expected length; a table
/// that parses covers exactly `raw_len`.
pub fn transforms(data: &[u8]) {
    use sep::segment::{TransformKind, list, transform};
    if data.len() < 5 {
        return;
    }
    let raw_len = usize::from(u16::from_le_bytes([data[1], data[2]]));
    match TransformKind::from_id(data[0]) {
        Some(kind) if kind != TransformKind::None => {
            let rest = &data[5..];
            let split = usize::from(u16::from_le_bytes([data[3], data[4]])).min(rest.len());
            let (inner, extra) = rest.split_at(split);
            if let Ok(out) = transform::inverse(kind, inner, extra, raw_len) {
                assert_eq!(out.len(), raw_len);
            }
        }
        _ => {
            let raw_len = raw_len.max(1) as u32;
            if let Ok(segments) = list(&data[3..], raw_len, 4) {
                let sum: u64 = segments.iter().map(|s| u64::from(s.raw_len)).sum();
                assert_eq!(sum, u64::from(raw_len));
            }
        }
    }
}

/// Target `decode_lossy` (issue 21): the lossy decoder (format version 2,
/// doc/FORMAT.md section 10) on arbitrary bytes, with a 1 MiB output limit so
/// that an input declaring a huge array is refused before anything is
/// allocated: an error or an output of the declared length, never a panic; an
/// archive that decodes decodes again to the same bytes.
pub fn decode_lossy(data: &[u8]) {
    if let Ok(out) = sep::lossy::decompress(data, 1 << 20) {
        let info = sep::lossy::inspect(data).expect("inspect agrees with decompress");
        assert_eq!(out.len() as u64, info.output_len);
        assert_eq!(sep::lossy::decompress(data, 1 << 20).expect("again"), out);
    }
}

/// Target `prior` (issue 20): any bytes as a prior file (doc/FORMAT.md section 11).
///
/// Byte 0, bit 0 set: the rest gets a correct `check` (its last 8 bytes are replaced
/// by the XXH3-64 of the bytes before them), so the fuzzer reaches the snapshot
/// checks and the restore behind it. A prior that loads must code and decode a small
/// input with it, to the same bytes; one that does not load fails with
/// [`Error::BadPrior`](sep::Error::BadPrior), never a panic.
pub fn prior(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mut file = rest.to_vec();
    if mode & 1 == 1 && file.len() >= 8 {
        let end = file.len() - 8;
        let check = xxhash_rust::xxh3::xxh3_64(&file[..end]);
        file[end..].copy_from_slice(&check.to_le_bytes());
    }
    match sep::Prior::from_bytes(&file) {
        Ok(p) => {
            let input = b"a small file coded with a fuzzed prior, a small file".repeat(3);
            let options = sep::Options {
                model: p.model(),
                prior: Some(p.clone()),
                ..sep::Options::default()
            };
            let archive = sep::compress(&input, &options).expect("compress with a loaded prior");
            let mut out = Vec::new();
            std::io::Read::read_to_end(
                &mut sep::Decoder::new(&archive[..])
                    .expect("header")
                    .with_prior(Some(p)),
                &mut out,
            )
            .expect("decode with the same prior");
            assert_eq!(out, input);
        }
        Err(e) => assert!(matches!(e, sep::Error::BadPrior(_)), "{e}"),
    }
}
