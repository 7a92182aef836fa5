//! Writes the golden archives of `tests/golden/` (see its README.md): archives of format
//! version 1 for every model kind, their manifest, and the must-fail files with their
//! expected errors. `crates/sep/tests/golden.rs` decodes them forever after.
//!
//! Never run in CI. Without `--write` it only compares what it would write with what is
//! committed and lists the differences:
//!
//! ```sh
//! cargo run -p sep --example make_golden              # what would change
//! cargo run -p sep --example make_golden -- --write   # rewrite tests/golden/v1 and must-fail
//! ```
//!
//! Golden archives of a released version must never be regenerated: a decoder that no
//! longer decodes them has broken the format (tests/golden/README.md).

use sep::format::{BlockHeader, BlockType, EndRecord, Header, MAGIC, raw_check};
use sep::{
    CmConfig, MixConfig, Model, ModelConfig, Options, Preset,
    neural::{
        AdamConfig, Adaptive, BackboneConfig, NeuralConfig, PacConfig, PatchTstConfig, SeBody,
        SeConfig, TokenShape, TraceConfig,
    },
};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

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

fn neural(backbone: BackboneConfig) -> NeuralConfig {
    NeuralConfig {
        backbone,
        streams: 4,
        min_stream_len: 512,
        adam: AdamConfig {
            lr: 2e-3,
            ..AdamConfig::default()
        },
    }
}

/// The SE in front of a tiny body: 12 bytes of context, patches of 4 (PAC) or 2 bytes.
fn se(body: SeBody, adaptive: Adaptive) -> BackboneConfig {
    let (tokens, width) = body.input_shape();
    let patch = if matches!(body, SeBody::Pac(_)) { 4 } else { 2 };
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
}

fn small_cm() -> CmConfig {
    CmConfig {
        orders: 0b0011_1111,
        word: true,
        sparse: true,
        record: true,
        long: 0b0011,
        match_min: 5,
        match2_min: 12,
        table_bits: 18,
        match_bits: 14,
        selectors: 0xF,
        apms: 3,
        image: true,
        revision: 0,
    }
}

/// `(name, model)`: one configuration per model kind, backbone and SE body; the last
/// is what `sep FILE` uses.
fn models() -> Vec<(&'static str, Model)> {
    vec![
        ("store", Model::Store),
        ("order2", Model::Order2),
        ("pac", Model::Neural(neural(BackboneConfig::Pac(PAC)))),
        ("trace", Model::Neural(neural(BackboneConfig::Trace(TRACE)))),
        (
            "patchtst",
            Model::Neural(neural(BackboneConfig::PatchTst(PATCHTST))),
        ),
        (
            "se-pac",
            Model::Neural(neural(se(SeBody::Pac(PAC), Adaptive::Off))),
        ),
        (
            "se-trace",
            Model::Neural(neural(se(
                SeBody::Trace(TRACE.with_context(4)),
                Adaptive::Soft {
                    per_element: true,
                    keep_every: 2,
                    threshold: 0.5,
                    slope: 64.0,
                },
            ))),
        ),
        (
            "se-patchtst",
            Model::Neural(neural(se(
                SeBody::PatchTst(PATCHTST.with_context(4)),
                Adaptive::Hard {
                    keep_every: 2,
                    threshold: 0.5,
                    sparsity: 0.01,
                },
            ))),
        ),
        (
            "mix",
            Model::Mix(MixConfig {
                cm: small_cm(),
                neural: None,
                serial: None,
            }),
        ),
        (
            "mix-pac",
            Model::Mix(MixConfig {
                cm: small_cm(),
                neural: Some(neural(BackboneConfig::Pac(PAC))),
                serial: None,
            }),
        ),
        // The default of version 1 before CM revision 1 (pinned: its archives
        // must not change when the default does).
        ("default", default_r0()),
        (
            "mix2",
            Model::Mix(MixConfig {
                cm: CmConfig {
                    revision: 1,
                    ..small_cm()
                },
                neural: None,
                serial: None,
            }),
        ),
        ("default-r1", default_r(1)),
        ("default-r2", default_r(2)),
        // Issue 19: `max` plus the serial LSTM (doc/FORMAT.md section 4.13).
        ("ultra", Model::mix_preset(Preset::Ultra)),
        // Issue 18: CM revision 3, the lean `fast` model (doc/FORMAT.md
        // section 4.14).
        ("fast-r3", fast_r3()),
    ]
}

/// The `fast` preset of CM revision 3 (pinned: its archives must not change
/// when the preset does).
fn fast_r3() -> Model {
    Model::Mix(MixConfig {
        cm: CmConfig {
            orders: 0b0010_1111,
            word: true,
            sparse: false,
            record: false,
            long: 0,
            match_min: 6,
            match2_min: 0,
            table_bits: 22,
            match_bits: 20,
            selectors: 0b0011,
            apms: 1,
            image: false,
            revision: 3,
        },
        neural: None,
        serial: None,
    })
}

/// The `default` preset with CM revision 0.
fn default_r0() -> Model {
    default_r(0)
}

/// The `default` preset with CM revision `revision` (pinned: the archives
/// of an older revision must not change when the default moves on).
fn default_r(revision: u8) -> Model {
    let cm = MixConfig::preset(Preset::Default).expect("mix preset").cm;
    Model::Mix(MixConfig {
        cm: CmConfig { revision, ..cm },
        neural: None,
        serial: None,
    })
}

/// A 44-byte WAV header for `data_len` bytes of 16-bit PCM.
fn wav_header(channels: u16, data_len: u32) -> Vec<u8> {
    let mut h = b"RIFF".to_vec();
    h.extend(36u32.wrapping_add(data_len).to_le_bytes());
    h.extend(b"WAVEfmt ");
    h.extend(16u32.to_le_bytes());
    h.extend(1u16.to_le_bytes());
    h.extend(channels.to_le_bytes());
    h.extend(8000u32.to_le_bytes());
    h.extend((8000 * 2 * u32::from(channels)).to_le_bytes());
    h.extend((2 * channels).to_le_bytes());
    h.extend(16u16.to_le_bytes());
    h.extend(b"data");
    h.extend(data_len.to_le_bytes());
    h
}

/// 16-bit stereo WAV of 2000 frames: an integer oscillator, the right
/// channel a scaled copy of the left with a small ripple.
fn tone_wav() -> Vec<u8> {
    let mut out = wav_header(2, 8000);
    let (mut a, mut b) = (0i32, 9000i32);
    for t in 0..2000 {
        a += b * 3 / 64;
        b -= a * 3 / 64;
        out.extend((a as i16).to_le_bytes());
        out.extend(((a / 2 + (t % 5) * 30) as i16).to_le_bytes());
    }
    out
}

/// An x86-64 ELF header (20 bytes, then zeros to 64) and 150 small
/// functions of machine code.
fn x86_elf() -> Vec<u8> {
    let mut out = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0\x3e\0".to_vec();
    out.extend([0u8; 44]);
    for f in 0..150u32 {
        out.extend([0x55, 0x48, 0x89, 0xE5, 0x8B, 0x45, 0xF8, 0xE8]);
        out.extend(
            (f.wrapping_mul(2_654_435_761) >> 20)
                .wrapping_neg()
                .to_le_bytes(),
        );
        out.extend([0x0F, 0x85]);
        out.extend((f % 64 + 16).to_le_bytes());
        out.extend([0xC9, 0xC3]);
    }
    out
}

/// A BIFF stream: BOF, then 60 rows of four NUMBER cells.
fn cells_xls() -> Vec<u8> {
    let mut out = vec![0x09, 0x00, 0x04, 0x00, 0x02, 0x00, 0x10, 0x00];
    for r in 0..60u16 {
        for c in 0..4u16 {
            out.extend([0x03, 0x02, 14, 0]);
            out.extend(r.to_le_bytes());
            out.extend(c.to_le_bytes());
            out.extend(15u16.to_le_bytes());
            out.extend((f64::from(r) * 1.5 + f64::from(c)).to_le_bytes());
        }
    }
    out
}

/// A bi-level bitmap of 1100 rows of 64 bytes: vertical streaks (a pixel
/// copies the one above, except that white turns black with probability
/// 1/128 and black turns white with 1/5) and a vertical rule. Large enough
/// (70,400 bytes) for CM revision 1 to switch to its bi-level model.
fn fax() -> Vec<u8> {
    let (width, rows) = (64, 1100);
    let mut out = vec![0u8; width * rows];
    let mut s = 0x1234_5678u32;
    for y in 1..rows {
        for x in 0..width * 8 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            let (byte, bit) = (x / 8, 0x80u8 >> (x % 8));
            let above = out[(y - 1) * width + byte] & bit != 0;
            let black = if above {
                !s.is_multiple_of(5)
            } else {
                s.is_multiple_of(128)
            };
            if black || x == 45 {
                out[y * width + byte] |= bit;
            }
        }
    }
    out
}

/// A WAV header that lies: it claims 1 GiB of audio, followed by 3000 bytes
/// of 6-bit noise.
fn fake_wav() -> Vec<u8> {
    let mut out = wav_header(2, 1 << 30);
    out.extend(noise(3000).iter().map(|b| b & 63));
    out
}

/// Deterministic noise (xorshift64), incompressible: stored blocks.
fn noise(len: usize) -> Vec<u8> {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect()
}

/// The synthetic inputs (the others are copied from the corpus; see the README).
fn synthetic() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("empty", Vec::new()),
        ("one-byte", b"a".to_vec()),
        ("zeros-2000", vec![0; 2000]),
        ("noise-1500", noise(1500)),
        ("tone.wav", tone_wav()),
        ("fake.wav", fake_wav()),
        ("x86.elf", x86_elf()),
        ("cells.xls", cells_xls()),
        ("fax.pbm", fax()),
    ]
}

/// One golden archive.
struct Golden {
    archive: String,
    input: &'static str,
    model: Model,
    block_size: Option<u32>,
    /// Written by the streaming encoder without a content length (flag clear).
    streamed: bool,
}

fn golden_list() -> Vec<Golden> {
    let mut list = Vec::new();
    let mut add = |name: &str, input: &'static str, model: &Model, block: Option<u32>| {
        list.push(Golden {
            archive: name.to_string(),
            input,
            model: model.clone(),
            block_size: block,
            streamed: false,
        });
    };
    for (name, model) in models() {
        add(&format!("{name}.grammar.sep"), "grammar.lsp", &model, None);
        add(&format!("{name}.obj1.sep"), "obj1.head4096", &model, None);
    }
    for (name, model) in models() {
        if [
            "store", "order2", "pac", "mix", "mix-pac", "ultra", "fast-r3",
        ]
        .contains(&name)
        {
            for (input, _) in synthetic().into_iter().filter(|(n, _)| !n.contains('.')) {
                add(&format!("{name}.{input}.sep"), input, &model, None);
            }
            add(
                &format!("{name}.blocks-1000.sep"),
                "grammar.lsp",
                &model,
                Some(1000),
            );
        }
        if ["mix2", "default-r1", "default-r2"].contains(&name) {
            for input in [
                "kodim23.crop32x24.ppm",
                "tone.wav",
                "fake.wav",
                "x86.elf",
                "cells.xls",
                "fax.pbm",
            ] {
                let short = input.split('.').next().expect("name");
                add(&format!("{name}.{short}.sep"), input, &model, None);
            }
        }
        if ["mix", "default", "fast-r3"].contains(&name) {
            add(
                &format!("{name}.kodim23.sep"),
                "kodim23.crop32x24.ppm",
                &model,
                None,
            );
            add(
                &format!("{name}.basel.sep"),
                "basel-temp.head2048.f64",
                &model,
                None,
            );
        }
    }
    // Issue 17: segmented blocks (doc/FORMAT.md section 8), one per transform,
    // with the default of the release that added them (CM revision 1, pinned).
    let default = default_r(1);
    add(
        "default.jpeg.sep",
        "fireworks.crop128x96.jpg",
        &default,
        None,
    );
    add("default.gzip.sep", "grammar.lsp.gz", &default, None);
    add("default.x86.sep", "x86.text16k", &default, None);
    // Transform 4 (PNG IDAT runs), added later, with the same pinned model.
    add("default.png.sep", "kodim23.crop32x24.png", &default, None);
    let mix = models()[8].1.clone();
    list.push(Golden {
        archive: "mix.streamed.sep".into(),
        input: "grammar.lsp",
        model: mix,
        block_size: Some(1500),
        streamed: true,
    });
    list
}

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

fn compress(g: &Golden, data: &[u8]) -> Vec<u8> {
    let options = Options {
        model: g.model.clone(),
        block_size: g.block_size,
        // Blocks of 1000 and 1500 bytes: many blocks from a small input.
        small_blocks: true,
        ..Options::default()
    };
    if data.is_empty() {
        // Since the encoder writes an empty input with the store model's
        // header (66 bytes, doc/FORMAT.md section 3), the committed
        // `*.empty.sep` of the other models are what it wrote before: their
        // own header, then the end record. Both are v1 and must decode; this
        // keeps the generator in step with the committed files.
        let declared = Options {
            content_length: (!g.streamed).then_some(0),
            ..options.clone()
        };
        let (header, _) = declared.header().expect("header");
        let mut archive = header.to_bytes();
        let end = EndRecord {
            content_length: 0,
            content_check: xxhash_rust::xxh3::xxh3_64(data),
        };
        archive.extend_from_slice(&end.to_bytes());
        return archive;
    }
    if !g.streamed {
        return sep::compress(data, &options).expect("compress");
    }
    let mut enc = sep::Encoder::new(Vec::new(), &options).expect("encoder");
    enc.write_all(data).expect("write");
    enc.finish().expect("finish")
}

/// Files to write: path relative to tests/golden -> bytes.
type Files = BTreeMap<String, Vec<u8>>;

fn golden_files(files: &mut Files) {
    let dir = golden_dir();
    for (name, bytes) in synthetic() {
        files.insert(format!("inputs/{name}"), bytes);
    }
    let input = |name: &str| -> Vec<u8> {
        synthetic()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, b)| b)
            .unwrap_or_else(|| std::fs::read(dir.join("inputs").join(name)).expect("input"))
    };
    let mut manifest = String::from(
        "# archive\tinput\tbytes\txxh3_64 of the input\tmodel_id\tmodel (ModelConfig::describe)\n",
    );
    for g in golden_list() {
        let data = input(g.input);
        let archive = compress(&g, &data);
        assert_eq!(sep::decompress(&archive).expect("decompress"), data);
        let model =
            ModelConfig::from_header(&sep::read_header(&mut &archive[..]).unwrap()).expect("model");
        manifest += &format!(
            "{}\t{}\t{}\t{:016x}\t{}\t{}\n",
            g.archive,
            g.input,
            data.len(),
            xxhash_rust::xxh3::xxh3_64(&data),
            model.id(),
            model.describe()
        );
        files.insert(format!("v1/{}", g.archive), archive);
    }
    // Two archives, concatenated: they decode to the concatenation of their contents.
    let a = files["v1/order2.grammar.sep"].clone();
    let b = files["v1/store.one-byte.sep"].clone();
    let both = [input("grammar.lsp"), input("one-byte")].concat();
    files.insert("inputs/grammar+one-byte".into(), both.clone());
    manifest += &format!(
        "concatenated.sep\tgrammar+one-byte\t{}\t{:016x}\t1\torder2 archive, then a store archive\n",
        both.len(),
        xxhash_rust::xxh3::xxh3_64(&both)
    );
    files.insert("v1/concatenated.sep".into(), [a, b].concat());
    // Issue 22: an archive followed by its seek table (doc/FORMAT.md section 12).
    let grammar = input("grammar.lsp");
    let tabled = sep::compress(
        &grammar,
        &Options {
            model: Model::Order2,
            block_size: Some(1000),
            small_blocks: true,
            seek_table: true,
            ..Options::default()
        },
    )
    .expect("compress");
    assert_eq!(sep::decompress(&tabled).expect("decompress"), grammar);
    manifest += &format!(
        "order2.seek-table.sep\tgrammar.lsp\t{}\t{:016x}\t1\torder2 in blocks of 1000 bytes, then a seek table\n",
        grammar.len(),
        xxhash_rust::xxh3::xxh3_64(&grammar)
    );
    files.insert("v1/order2.seek-table.sep".into(), tabled);
    files.insert("v1/MANIFEST.tsv".into(), manifest.into_bytes());
}

/// Rewrites `header_check` after the header was edited.
fn repair(archive: &mut [u8]) {
    let params_len = usize::from(u16::from_le_bytes([archive[36], archive[37]]));
    let end = 38 + params_len;
    let check = raw_check(&archive[..end]);
    archive[end..end + 4].copy_from_slice(&check.to_le_bytes());
}

fn header(model_id: u16, streams: u32, context: u16, params: Vec<u8>) -> Header {
    Header {
        content_length: None,
        block_size: 100,
        seed: 0,
        streams,
        context,
        model_id,
        params,
        prior_id: None,
    }
}

fn block(block_type: BlockType, raw: &[u8], payload_len: usize, lens: Vec<u32>) -> Vec<u8> {
    let mut b = Vec::new();
    BlockHeader {
        block_type,
        raw_len: raw.len() as u32,
        payload_len: payload_len as u32,
        raw_check: raw_check(raw),
        stream_lens: lens,
    }
    .write_to(&mut b)
    .expect("write to a Vec");
    b
}

fn end(content: &[u8]) -> Vec<u8> {
    EndRecord {
        content_length: content.len() as u64,
        content_check: xxhash_rust::xxh3::xxh3_64(content),
    }
    .to_bytes()
    .to_vec()
}

/// `(file, expected error variant, message substring, what is wrong)` and the bytes.
fn must_fail(files: &mut Files) {
    let text: Vec<u8> = b"It was the best of times, it was the worst of times. ".repeat(6);
    let content = &text[..300];
    let store = sep::compress(
        content,
        &Options {
            model: Model::Store,
            block_size: Some(100),
            small_blocks: true,
            ..Options::default()
        },
    )
    .expect("store archive");
    let order2 = sep::compress(
        content,
        &Options {
            model: Model::Order2,
            block_size: Some(100),
            small_blocks: true,
            ..Options::default()
        },
    )
    .expect("order2 archive");
    let hlen = sep::read_header(&mut &store[..]).unwrap().to_bytes().len();
    let o2len = sep::read_header(&mut &order2[..]).unwrap().to_bytes().len();
    assert_eq!(order2[o2len], 0x01, "order2's first block is modelled");
    let n = store.len();
    let edit = |base: &[u8], at: usize, f: &dyn Fn(&mut u8), fix: bool| {
        let mut v = base.to_vec();
        f(&mut v[at]);
        if fix {
            repair(&mut v);
        }
        v
    };
    let with_header = |h: &Header, rest: &[u8]| [h.to_bytes(), rest.to_vec()].concat();
    let store_body = &store[hlen..];
    let first_payload = &content[..100];
    // The largest PAC the per-field limits allow (context 128 x embed 32, ffn 16384,
    // 8 pairs), with 4096 streams: terabytes of model.
    let pac_max = BackboneConfig::Pac(PacConfig {
        context: 128,
        embed: 32,
        ffn: 16384,
        pairs: 8,
        cache: false,
    });
    let pac_params = {
        let h = Options {
            model: Model::Neural(neural(BackboneConfig::Pac(PAC))),
            ..Options::default()
        }
        .header()
        .expect("pac header")
        .0;
        h.params
    };
    let mix_params = {
        let h = Options {
            model: Model::Mix(MixConfig {
                cm: small_cm(),
                neural: None,
                serial: None,
            }),
            ..Options::default()
        }
        .header()
        .expect("mix header")
        .0;
        h.params
    };
    let pac_max_params = {
        let mut p = pac_params.clone();
        let bb = sep::params::write_backbone(&pac_max);
        p.truncate(48);
        p.extend_from_slice(&(bb.len() as u16).to_le_bytes());
        p.extend_from_slice(&bb);
        p
    };
    let modelled_in_store = [
        store[..hlen].to_vec(),
        block(BlockType::Modelled, first_payload, 100, vec![100]),
        first_payload.to_vec(),
        store[hlen + 16 + 100..].to_vec(),
    ]
    .concat();
    let stored = |raw: &[u8]| {
        [
            block(BlockType::Stored, raw, raw.len(), vec![]),
            raw.to_vec(),
        ]
        .concat()
    };
    let mut cases: Vec<(&str, &str, &str, &str, Vec<u8>)> = vec![
        (
            "empty.sep",
            "Truncated",
            "the input is empty",
            "no bytes at all",
            vec![],
        ),
        (
            "bad-magic.sep",
            "BadMagic",
            "not a sep archive",
            "a zip file",
            b"PK\x03\x04 this is not sep".to_vec(),
        ),
        (
            "short-magic.sep",
            "Truncated",
            "magic",
            "the first two bytes of the magic",
            MAGIC[..2].to_vec(),
        ),
        (
            "future-version.sep",
            "UnsupportedVersion",
            "unsupported format version 2",
            "format_version 2",
            edit(&store, 4, &|b| *b = 2, true),
        ),
        (
            "reserved-flag.sep",
            "Reserved",
            "flags",
            // Bit 1 is the prior flag since issue 20 (doc/FORMAT.md section 2).
            "flags bit 2 set",
            edit(&store, 5, &|b| *b |= 4, true),
        ),
        (
            "reserved-header.sep",
            "Reserved",
            "reserved (header)",
            "the reserved u16 of the header is 1",
            edit(&store, 6, &|b| *b = 1, true),
        ),
        (
            "content-length-flag-clear.sep",
            "Reserved",
            "content_length (flag clear)",
            "content_length 300 with flag bit 0 clear",
            edit(&store, 5, &|b| *b = 0, true),
        ),
        (
            "header-checksum.sep",
            "HeaderChecksum",
            "header checksum mismatch",
            "a bit of seed flipped",
            edit(&store, 20, &|b| *b ^= 1, false),
        ),
        (
            "block-size-zero.sep",
            "InvalidField",
            "block_size is 0",
            "block_size 0",
            with_header(
                &Header {
                    block_size: 0,
                    ..header(0, 1, 0, vec![])
                },
                store_body,
            ),
        ),
        (
            "block-size-too-large.sep",
            "InvalidField",
            "block_size is 1073741825",
            "block_size 2^30 + 1",
            with_header(
                &Header {
                    block_size: (1 << 30) + 1,
                    ..header(0, 1, 0, vec![])
                },
                store_body,
            ),
        ),
        (
            "streams-zero.sep",
            "InvalidField",
            "streams is 0",
            "streams 0",
            with_header(&header(0, 0, 0, vec![]), store_body),
        ),
        (
            "streams-too-many.sep",
            "InvalidField",
            "streams is 4097",
            "streams 4097",
            with_header(&header(2, 4097, 4, pac_params.clone()), store_body),
        ),
        (
            "params-len-too-long.sep",
            "InvalidField",
            "params_len is 1025",
            "params_len 1025",
            with_header(&header(3, 1, 0, vec![0; 1025]), store_body),
        ),
        (
            "unknown-model.sep",
            "UnknownModel",
            "unsupported model id 7",
            "model_id 7",
            with_header(&header(7, 1, 0, vec![]), store_body),
        ),
        (
            "store-with-params.sep",
            "InvalidField",
            "params_len is 4",
            "model store with 4 bytes of params",
            with_header(&header(0, 1, 0, vec![0; 4]), store_body),
        ),
        (
            "order2-table-bits.sep",
            "InvalidField",
            "table_bits is 25",
            "order2 table_bits 25 (limit 24)",
            with_header(&header(1, 1, 2, vec![25, 0, 0, 0]), store_body),
        ),
        (
            "order2-reserved.sep",
            "Reserved",
            "reserved (order2 params)",
            "order2 params reserved byte 1",
            with_header(&header(1, 1, 2, vec![16, 1, 0, 0]), store_body),
        ),
        (
            "mix-table-bits.sep",
            "InvalidModel",
            "table_bits",
            "mix table_bits 31 (limit 30)",
            with_header(
                &header(3, 1, 0, {
                    let mut p = mix_params.clone();
                    p[4 + 7] = 31;
                    p
                }),
                store_body,
            ),
        ),
        (
            "neural-unknown-backbone.sep",
            "InvalidModel",
            "unknown backbone id 9",
            "neural backbone 9",
            with_header(
                &header(2, 4, 4, {
                    let mut p = pac_params.clone();
                    p[0] = 9;
                    p
                }),
                store_body,
            ),
        ),
        (
            "neural-context-mismatch.sep",
            "InvalidModel",
            "context",
            "header context 5, PAC context 4",
            with_header(&header(2, 4, 5, pac_params.clone()), store_body),
        ),
        (
            "neural-too-large.sep",
            "LimitExceeded",
            "model memory",
            "the largest PAC for 4096 streams: every field in range, terabytes in all",
            with_header(
                &Header {
                    block_size: 1 << 20,
                    ..header(2, 4096, 128, pac_max_params)
                },
                store_body,
            ),
        ),
        (
            "truncated-header.sep",
            "Truncated",
            "header",
            "the header cut at 20 bytes",
            store[..20].to_vec(),
        ),
        (
            "truncated-block-header.sep",
            "Truncated",
            "block header",
            "a block header cut after 5 bytes",
            store[..hlen + 5].to_vec(),
        ),
        (
            "truncated-payload.sep",
            "Truncated",
            "block payload",
            "a stored payload cut in half",
            store[..hlen + 16 + 50].to_vec(),
        ),
        (
            "truncated-end-record.sep",
            "Truncated",
            "end record",
            "the end record cut after 10 bytes",
            store[..n - 14].to_vec(),
        ),
        (
            "missing-end-record.sep",
            "Truncated",
            "block header",
            "no end record",
            store[..n - 24].to_vec(),
        ),
        (
            "bad-block-type.sep",
            "InvalidField",
            "block_type is 2",
            "block_type 0x02",
            edit(&store, hlen, &|b| *b = 2, false),
        ),
        (
            "reserved-block-header.sep",
            "Reserved",
            "reserved (block header)",
            "a block header's reserved byte 1",
            edit(&store, hlen + 1, &|b| *b = 1, false),
        ),
        (
            "raw-len-zero.sep",
            "InvalidField",
            "raw_len is 0",
            "raw_len 0",
            [
                store[..hlen].to_vec(),
                block(BlockType::Stored, &[], 0, vec![]),
                store_body.to_vec(),
            ]
            .concat(),
        ),
        (
            "raw-len-over-block-size.sep",
            "InvalidField",
            "raw_len is 101",
            "raw_len 101 with block_size 100",
            [
                store[..hlen].to_vec(),
                stored(&content[..101]),
                end(&content[..101]),
            ]
            .concat(),
        ),
        (
            "payload-len-over-raw-len.sep",
            "InvalidField",
            "payload_len is 101",
            "a modelled block with payload_len 101 > raw_len 100",
            [
                store[..hlen].to_vec(),
                block(BlockType::Modelled, first_payload, 101, vec![101]),
                vec![0; 101],
            ]
            .concat(),
        ),
        (
            "stored-payload-len.sep",
            "LengthMismatch",
            "payload_len of a stored block",
            "a stored block with payload_len 99, raw_len 100",
            [
                store[..hlen].to_vec(),
                block(BlockType::Stored, first_payload, 99, vec![]),
                content[..99].to_vec(),
            ]
            .concat(),
        ),
        (
            "stream-count-zero.sep",
            "InvalidField",
            "stream_count is 0",
            "stream_count 0",
            [
                order2[..o2len].to_vec(),
                block(BlockType::Modelled, first_payload, 0, vec![]),
            ]
            .concat(),
        ),
        (
            "stream-count-over-streams.sep",
            "InvalidField",
            "stream_count is 2",
            "stream_count 2 with streams 1",
            [
                order2[..o2len].to_vec(),
                block(BlockType::Modelled, first_payload, 20, vec![10, 10]),
                vec![0; 20],
            ]
            .concat(),
        ),
        (
            "stream-lens-sum.sep",
            "LengthMismatch",
            "sum of stream_len",
            "stream_len 30 with payload_len 20",
            [
                order2[..o2len].to_vec(),
                block(BlockType::Modelled, first_payload, 20, vec![30]),
                vec![0; 30],
            ]
            .concat(),
        ),
        (
            "varint-not-minimal.sep",
            "InvalidField",
            "not minimal",
            "stream_count written as 0x81 0x00",
            {
                let mut v = order2[..o2len].to_vec();
                v.extend_from_slice(&block(BlockType::Modelled, first_payload, 1, vec![1])[..16]);
                v.extend_from_slice(&[0x81, 0x00, 0x01, 0x00]);
                v
            },
        ),
        (
            "modelled-block-in-store.sep",
            "InvalidField",
            "model store has no modelled blocks",
            "a modelled block in a store archive",
            modelled_in_store,
        ),
        (
            "stored-block-checksum.sep",
            "BlockChecksum",
            "block 1 fails its checksum",
            "a byte of the second stored block changed",
            edit(&store, hlen + 116 + 16 + 7, &|b| *b ^= 0x20, false),
        ),
        (
            "modelled-block-checksum.sep",
            "BlockChecksum",
            "block 0 fails its checksum",
            "a byte of a modelled payload changed",
            edit(&order2, o2len + 20, &|b| *b ^= 0x01, false),
        ),
        (
            "content-checksum.sep",
            "ContentChecksum",
            "content checksum mismatch",
            "content_check flipped",
            edit(&store, n - 1, &|b| *b ^= 0x80, false),
        ),
        (
            "end-content-length.sep",
            "LengthMismatch",
            "content (sum of raw_len)",
            "the end record says 301 bytes",
            edit(&store, n - 16, &|b| *b += 1, false),
        ),
        (
            "header-content-length.sep",
            "LengthMismatch",
            "content_length of the end record",
            "the header says 301 bytes, the blocks hold 300",
            edit(&store, 8, &|b| *b += 1, true),
        ),
        (
            "reserved-end-record.sep",
            "Reserved",
            "reserved (end record)",
            "an end record's reserved byte 3",
            edit(&store, n - 21, &|b| *b = 1, false),
        ),
        (
            "trailing-data.sep",
            "TrailingData",
            "trailing data",
            "junk after the end record",
            [store.clone(), b"junk".to_vec()].concat(),
        ),
        (
            "truncated-second-magic.sep",
            "Truncated",
            "magic of a concatenated archive",
            "half a magic after the end record",
            [store.clone(), MAGIC[..2].to_vec()].concat(),
        ),
        (
            "second-header-checksum.sep",
            "HeaderChecksum",
            "header checksum mismatch",
            "a second archive whose header is damaged",
            [store.clone(), edit(&store, 20, &|b| *b ^= 1, false)].concat(),
        ),
    ];
    // Issue 14 item 8: a short block that is not the last (50, 100, 100, 50 bytes with
    // block_size 100), and order2's first stream with a byte appended (its lengths
    // adjusted): decodable, but no encoder writes either.
    let short_first = [
        store[..hlen].to_vec(),
        block(BlockType::Stored, &content[..50], 50, vec![]),
        content[..50].to_vec(),
        block(BlockType::Stored, &content[50..150], 100, vec![]),
        content[50..150].to_vec(),
        block(BlockType::Stored, &content[150..250], 100, vec![]),
        content[150..250].to_vec(),
        block(BlockType::Stored, &content[250..], 50, vec![]),
        content[250..].to_vec(),
        end(content),
    ]
    .concat();
    let stream_plus = |junk: u8| {
        let h = sep::read_header(&mut &order2[..]).unwrap();
        let mut rest = &order2[o2len..];
        let sep::format::Record::Block(mut bh) = sep::format::Record::read(&mut rest, &h).unwrap()
        else {
            panic!("order2's first record is a block")
        };
        let payload = &rest[..bh.payload_len as usize];
        let after = &rest[bh.payload_len as usize..];
        bh.payload_len += 1;
        bh.stream_lens[0] += 1;
        assert!(bh.payload_len <= bh.raw_len, "room for a junk byte");
        let mut head = Vec::new();
        bh.write_to(&mut head).unwrap();
        [&order2[..o2len], &head, payload, &[junk], after].concat()
    };
    cases.extend([
        (
            "short-block-in-middle.sep",
            "InvalidField",
            "raw_len is 50, less than block_size, but a block follows",
            "a first block of 50 bytes with block_size 100 (only the last may be short)",
            short_first,
        ),
        (
            "stream-junk.sep",
            "StreamJunk",
            "block 0, stream 0: ends in bytes that no encoder writes",
            "a byte appended to order2's first stream, lengths adjusted",
            stream_plus(0x5A),
        ),
        (
            "stream-trailing-zero.sep",
            "StreamJunk",
            "block 0, stream 0: ends in a zero byte",
            "a zero byte appended to order2's first stream, lengths adjusted",
            stream_plus(0),
        ),
    ]);
    // Issue 22: damaged seek tables (doc/FORMAT.md section 12) after the store
    // archive (3 blocks: the table is 4 + 24 + 16 bytes).
    let table = |entries: &[sep::format::SeekEntry]| sep::format::write_seek_table(entries);
    let entries = sep::format::parse_seek_table(
        &sep::compress(
            content,
            &Options {
                model: Model::Store,
                block_size: Some(100),
                small_blocks: true,
                seek_table: true,
                ..Options::default()
            },
        )
        .expect("store archive")[n..],
        100,
    )
    .expect("a table");
    let good = table(&entries);
    let mut lying = entries.clone();
    lying[0].block_len += 1;
    lying[1].block_len -= 1;
    let flip = |at: usize| {
        let mut t = good.clone();
        t[at] ^= 1;
        [store.clone(), t].concat()
    };
    cases.extend([
        (
            "seek-table-check.sep",
            "SeekTable",
            "seek table: table_check mismatch",
            "a bit flipped in an entry of the seek table",
            flip(5),
        ),
        (
            "seek-table-entries.sep",
            "SeekTable",
            "seek table: entries do not match",
            "entries that lie about block_len (table_check recomputed)",
            [store.clone(), table(&lying)].concat(),
        ),
        (
            "seek-table-count.sep",
            "SeekTable",
            "seek table: footer_magic is wrong",
            "a seek table with one entry more than the archive has blocks",
            [
                store.clone(),
                table(&[&entries[..], &entries[..1]].concat()),
            ]
            .concat(),
        ),
        (
            "seek-table-footer.sep",
            "SeekTable",
            "seek table: footer_magic is wrong",
            "a bit flipped in footer_magic",
            flip(good.len() - 1),
        ),
        (
            "seek-table-truncated.sep",
            "Truncated",
            "seek table",
            "a seek table cut short in its footer",
            [store.clone(), good[..good.len() - 3].to_vec()].concat(),
        ),
    ]);
    let mut expected = String::from("# file\terror variant\tmessage contains\twhat is wrong\n");
    for (file, variant, substring, what, bytes) in cases {
        expected += &format!("{file}\t{variant}\t{substring}\t{what}\n");
        files.insert(format!("must-fail/{file}"), bytes);
    }
    files.insert("must-fail/EXPECTED.tsv".into(), expected.into_bytes());
}

fn main() {
    let write = std::env::args().any(|a| a == "--write");
    let mut files = Files::new();
    golden_files(&mut files);
    must_fail(&mut files);
    lossy_files(&mut files); // issue 21
    prior_files(&mut files); // issue 20
    let dir = golden_dir();
    let mut changed = 0;
    for (path, bytes) in &files {
        let full = dir.join(path);
        let old = std::fs::read(&full).ok();
        if old.as_deref() == Some(&bytes[..]) {
            continue;
        }
        changed += 1;
        println!(
            "{} {path} ({} bytes)",
            if old.is_some() { "changed" } else { "new" },
            bytes.len()
        );
        if write {
            std::fs::create_dir_all(full.parent().expect("parent")).expect("create folder");
            std::fs::write(&full, bytes).expect("write");
        }
    }
    for sub in ["v1", "must-fail", "lossy-v2", "prior-v1"] {
        for e in std::fs::read_dir(dir.join(sub)).into_iter().flatten() {
            let p = e.expect("entry").path();
            let rel = format!("{sub}/{}", file_name(&p));
            if !files.contains_key(&rel) {
                println!("stale {rel} (not written by this generator; remove it by hand)");
            }
        }
    }
    println!(
        "{} files, {changed} new or changed{}",
        files.len(),
        if write || changed == 0 {
            ""
        } else {
            " (rerun with --write to write them)"
        }
    );
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .expect("file name")
        .to_string_lossy()
        .into_owned()
}

/// Issue 21: lossy archives (format version 2, doc/FORMAT.md section 9). Their
/// decoded bytes are pinned by XXH3 in `lossy-v2/MANIFEST.tsv`, and every value
/// must be within the archive's bound of the input.
fn lossy_files(files: &mut Files) {
    use sep::lossy::{Dtype, Mode, Options, Predictor, compress_npy, compress_raw, npy};
    // A 4 x 24 x 32 f32 grid: smooth field plus noise, a land mask of -1e10, a NaN
    // and both infinities.
    let mut grid = Vec::new();
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..4 * 24 * 32 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let (z, y, x) = (i / 768, (i / 32) % 24, i % 32);
        let v: f32 = if (x + y) % 11 == 0 && y < 12 {
            -1e10
        } else if i == 100 {
            f32::NAN
        } else if i == 200 {
            f32::INFINITY
        } else if i == 300 {
            f32::NEG_INFINITY
        } else {
            15.0 * (x as f32 * 0.2).sin()
                + 4.0 * (y as f32 * 0.15).cos()
                + z as f32
                + (s >> 40) as f32 / (1u64 << 24) as f32 * 0.05
        };
        grid.extend_from_slice(&v.to_le_bytes());
    }
    files.insert("inputs/grid-4x24x32.f32".into(), grid.clone());
    let grid_npy = npy::write(Dtype::F32, &[4, 24, 32], &grid);
    files.insert("inputs/grid-4x24x32.npy".into(), grid_npy.clone());
    let basel = std::fs::read(golden_dir().join("inputs/basel-temp.head2048.f64")).expect("input");
    let mut manifest =
        String::from("# archive\tinput\tdtype\tshape\tmode\tbound\txxh3_64 of the decoded bytes\n");
    let cases: Vec<(&str, &str, Mode, Option<Predictor>)> = vec![
        (
            "abs-0.01.lorenzo.grid.sep",
            "grid-4x24x32.f32",
            Mode::Abs(0.01),
            Some(Predictor::Lorenzo),
        ),
        (
            "abs-0.01.interp.grid.sep",
            "grid-4x24x32.f32",
            Mode::Abs(0.01),
            Some(Predictor::Interpolation),
        ),
        (
            "rel-1e-4.grid.sep",
            "grid-4x24x32.f32",
            Mode::Rel(1e-4),
            None,
        ),
        (
            "psnr-50.grid.sep",
            "grid-4x24x32.f32",
            Mode::Psnr(50.0),
            None,
        ),
        (
            "ratio-8.grid.sep",
            "grid-4x24x32.f32",
            Mode::Ratio(8.0),
            None,
        ),
        (
            "rel-1e-3.grid.npy.sep",
            "grid-4x24x32.npy",
            Mode::Rel(1e-3),
            None,
        ),
        (
            "abs-0.001.basel.sep",
            "basel-temp.head2048.f64",
            Mode::Abs(0.001),
            None,
        ),
        (
            "rel-1e-2.lorenzo.basel.sep",
            "basel-temp.head2048.f64",
            Mode::Rel(1e-2),
            Some(Predictor::Lorenzo),
        ),
    ];
    // The cases above are pinned to model revision 0 (written before revision
    // 1 existed); the ones below use the newest revisions.
    let pinned = cases.len();
    let cases: Vec<_> = cases
        .into_iter()
        .map(|(n, i, m, p)| (n, i, m, p, Some(0u8)))
        .chain([
            (
                "r1.rel-1e-4.grid.sep",
                "grid-4x24x32.f32",
                Mode::Rel(1e-4),
                None,
                Some(1u8),
            ),
            (
                "r1.abs-0.01.lorenzo.grid.sep",
                "grid-4x24x32.f32",
                Mode::Abs(0.01),
                Some(Predictor::Lorenzo),
                Some(1u8),
            ),
            (
                "r1.abs-0.0001.basel.sep",
                "basel-temp.head2048.f64",
                Mode::Abs(1e-4),
                None,
                Some(1u8),
            ),
            (
                "fast.rel-1e-4.grid.sep",
                "grid-4x24x32.f32",
                Mode::Rel(1e-4),
                None,
                Some(2u8),
            ),
            (
                "fast.abs-0.01.interp.grid.sep",
                "grid-4x24x32.f32",
                Mode::Abs(0.01),
                Some(Predictor::Interpolation),
                Some(2u8),
            ),
            (
                "fast.abs-0.00001.basel.sep",
                "basel-temp.head2048.f64",
                Mode::Abs(1e-5),
                None,
                Some(2u8),
            ),
        ])
        .collect();
    assert!(cases.len() > pinned);
    for (name, input, mode, predictor, revision) in cases {
        let opts = Options {
            mode,
            fill: None,
            predictor,
            revision,
            fast: false,
        };
        let archive = match input {
            "grid-4x24x32.f32" => compress_raw(&grid, Dtype::F32, &[4, 24, 32], &opts),
            "grid-4x24x32.npy" => compress_npy(&grid_npy, &opts),
            _ => compress_raw(&basel, Dtype::F64, &[basel.len() / 8], &opts),
        }
        .expect("lossy compress");
        let info = sep::lossy::inspect(&archive).expect("inspect");
        let out = sep::lossy::decompress(&archive, u64::MAX).expect("lossy decompress");
        let shape: Vec<String> = info.shape.iter().map(|d| d.to_string()).collect();
        manifest += &format!(
            "{name}\t{input}\t{}\t{}\t{}\t{:e}\t{:016x}\n",
            info.dtype.name(),
            shape.join("x"),
            mode.describe(),
            info.bound,
            xxhash_rust::xxh3::xxh3_64(&out)
        );
        files.insert(format!("lossy-v2/{name}"), archive);
    }
    files.insert("lossy-v2/MANIFEST.tsv".into(), manifest.into_bytes());
}

/// Issue 20: priors (doc/FORMAT.md section 11). Two prior files trained on the
/// first 2000 bytes of `grammar.lsp` (presets fast and default), and archives
/// coded with them; `prior-v1/MANIFEST.tsv` pins each prior's id and each
/// archive's input. Prior files of version 1 must load, and these archives
/// decode, forever.
fn prior_files(files: &mut Files) {
    use sep::{Preset, Prior};
    let dir = golden_dir().join("inputs");
    let grammar = std::fs::read(dir.join("grammar.lsp")).expect("input");
    let mut manifest = String::from(
        "# file\tprior file (archives) or samples (priors)\tinput\tbytes\txxh3_64 of the input, or the prior id\n",
    );
    for (name, preset) in [("fast", Preset::Fast), ("default", Preset::Default)] {
        let bytes = Prior::train(&Model::mix_preset(preset), &[&grammar[..2000]]).expect("train");
        let prior = Prior::from_bytes(&bytes).expect("load");
        let prior_name = format!("{name}.grammar-head.sepp");
        manifest += &format!(
            "{prior_name}\tgrammar.lsp[..2000]\t-\t{}\t{}\n",
            bytes.len(),
            prior.id_hex()
        );
        files.insert(format!("prior-v1/{prior_name}"), bytes);
        for input in ["grammar.lsp", "obj1.head4096"] {
            let data = std::fs::read(dir.join(input)).expect("input");
            let options = Options {
                model: prior.model(),
                prior: Some(prior.clone()),
                ..Options::default()
            };
            let archive = sep::compress(&data, &options).expect("compress");
            let short = input.split('.').next().expect("name");
            let archive_name = format!("{name}.{short}.sep");
            manifest += &format!(
                "{archive_name}\t{prior_name}\t{input}\t{}\t{:016x}\n",
                data.len(),
                xxhash_rust::xxh3::xxh3_64(&data)
            );
            files.insert(format!("prior-v1/{archive_name}"), archive);
        }
    }
    files.insert("prior-v1/MANIFEST.tsv".into(), manifest.into_bytes());
}
