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

mod inputs;
mod lossy;
mod must_fail;
mod prior;
mod seek_cases;
mod v3;
use inputs::*;
use lossy::lossy_files;
use must_fail::must_fail;
use prior::prior_files;

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
        // CM revision 4 (doc/FORMAT.md 4.15), the default before revision 5.
        ("default-r4", default_r(4)),
        // CM revision 5 (4.16), the default before revision 7, and revision 6
        // (4.17) with `max`'s tables, the `max` before revision 8.
        ("default-r5", default_r(5)),
        ("max-r6", max_r6()),
        // CM revisions 7 (4.18) and 8 (4.19): today's `default` and `max`.
        ("default-r7", default_r(7)),
        ("max-r8", preset_r(Preset::Max, 8)),
        // CM revisions 9 (4.20) and 10 (4.21): today's `default` and `max`.
        ("default-r9", default_r(9)),
        ("max-r10", preset_r(Preset::Max, 10)),
        // CM revision 12 (4.23), the `max` before revision 14.
        ("max-r12", preset_r(Preset::Max, 12)),
        // CM revision 14 (4.25): `max` before revision 16.
        ("max-r14", preset_r(Preset::Max, 14)),
        // CM revision 16 (4.27): `max` before revision 18.
        ("max-r16", preset_r(Preset::Max, 16)),
        // CM revision 18 (4.29): `max` before revision 20.
        ("max-r18", preset_r(Preset::Max, 18)),
        // CM revision 20 (4.31): `max` before revision 22.
        ("max-r20", preset_r(Preset::Max, 20)),
        // CM revision 22 (4.33): `max` before revision 24.
        ("max-r22", preset_r(Preset::Max, 22)),
        // CM revision 24 (4.35): `max` before revision 26.
        ("max-r24", preset_r(Preset::Max, 24)),
        // CM revision 26 (4.37): `max` before revision 28.
        ("max-r26", preset_r(Preset::Max, 26)),
        // CM revision 28 (4.39): `max` before revision 30.
        ("max-r28", preset_r(Preset::Max, 28)),
        // CM revision 30 (4.41): `max` before revision 32.
        ("max-r30", preset_r(Preset::Max, 30)),
        // CM revision 32 (4.43): `max` before revision 34.
        ("max-r32", preset_r(Preset::Max, 32)),
        // CM revision 34 (4.45): `max` before revision 36.
        ("max-r34", preset_r(Preset::Max, 34)),
        // CM revision 36 (4.47): `max` before revision 38.
        ("max-r36", preset_r(Preset::Max, 36)),
        // CM revision 38 (4.49): `max` before revision 40.
        ("max-r38", preset_r(Preset::Max, 38)),
        // CM revision 40 (4.51): `max` before revision 42.
        ("max-r40", preset_r(Preset::Max, 40)),
        // CM revision 42 (4.53): `max` before revision 44.
        ("max-r42", preset_r(Preset::Max, 42)),
        // CM revision 44 (4.55): `max` before revision 46.
        ("max-r44", preset_r(Preset::Max, 44)),
        // CM revision 46 (4.57): today's `max`.
        ("max-r46", preset_r(Preset::Max, 46)),
        // Issue 19: `max` plus the serial LSTM (doc/FORMAT.md section 4.13),
        // pinned at CM revision 2 (the revision `max` had then), and at
        // revision 6, and at revision 8 (today's `ultra`).
        ("ultra", ultra_r(2)),
        ("ultra-r6", ultra_r(6)),
        ("ultra-r8", ultra_r(8)),
        ("ultra-r10", ultra_r(10)),
        ("ultra-r12", ultra_r(12)),
        // Serial network kind 2 (doc/FORMAT.md 4.13.1: a decaying learning
        // rate), which no preset writes yet.
        ("ultra-r12-k2", ultra_kind2(12)),
        ("ultra-r14", ultra_r(14)),
        // Serial network kind 3 (doc/FORMAT.md 4.13.2: kind 2 with the
        // trained weights installed 16 bytes late): `ultra` from stop 31
        // (CM revision 16).
        ("ultra-r14-k3", ultra_kind3(14, 16)),
        ("ultra-r16-k3", ultra_kind3(16, 16)),
        ("ultra-r18-k3", ultra_kind3(18, 16)),
        ("ultra-r20-k3", ultra_kind3(20, 16)),
        ("ultra-r22-k3", ultra_kind3(22, 16)),
        ("ultra-r24-k3", ultra_kind3(24, 16)),
        ("ultra-r26-k3", ultra_kind3(26, 16)),
        ("ultra-r28-k3", ultra_kind3(28, 16)),
        // Serial network kind 4 (doc/FORMAT.md 4.13.3): `ultra` from stop
        // 38 (CM revision 30). Its encoder leaves the network out of blocks
        // under 32 KiB, so these small inputs pin that rule (the archives
        // are `max-r30`'s); `ultra-r30-k4.grammar-streamed.sep` keeps it.
        ("ultra-r30-k4", ultra_kind4(30)),
        // `ultra` from stop 39 (CM revision 32).
        ("ultra-r32-k4", ultra_kind4(32)),
        // `ultra` from stop 40 (CM revision 34).
        ("ultra-r34-k4", ultra_kind4(34)),
        // `ultra` from stop 41 (CM revision 36).
        ("ultra-r36-k4", ultra_kind4(36)),
        // `ultra` from stop 42 (CM revision 38).
        ("ultra-r38-k4", ultra_kind4(38)),
        // `ultra` from stop 43 (CM revision 40).
        ("ultra-r40-k4", ultra_kind4(40)),
        // `ultra` from stop 44 (CM revision 42).
        ("ultra-r42-k4", ultra_kind4(42)),
        // `ultra` from stop 45 (CM revision 44).
        ("ultra-r44-k4", ultra_kind4(44)),
        // `ultra` from stop 46 (CM revision 46).
        ("ultra-r46-k4", ultra_kind4(46)),
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

/// `preset` with its CM at revision `revision` (pinned: `max` and `ultra`
/// wrote `table_bits` 27 up to revision 14, 29 from revision 16).
pub(crate) fn preset_r(preset: Preset, revision: u8) -> Model {
    match Model::mix_preset(preset) {
        Model::Mix(m) => {
            let table_bits = if matches!(preset, Preset::Max | Preset::Ultra) && revision <= 14 {
                27
            } else {
                m.cm.table_bits
            };
            Model::Mix(MixConfig {
                cm: CmConfig {
                    revision,
                    table_bits,
                    ..m.cm
                },
                ..m
            })
        }
        other => other,
    }
}

/// `ultra` as it was written with CM revision `revision` (pinned: serial
/// network kind 1, which `ultra` wrote until stop 31).
fn ultra_r(revision: u8) -> Model {
    match preset_r(Preset::Ultra, revision) {
        Model::Mix(m) => Model::Mix(MixConfig {
            serial: m.serial.map(|s| sep::LstmConfig {
                kind: 1,
                delay: 0,
                ..s
            }),
            ..m
        }),
        other => other,
    }
}

/// [`ultra_r`] with serial network kind 2 (doc/FORMAT.md 4.13.1).
fn ultra_kind2(revision: u8) -> Model {
    match ultra_r(revision) {
        Model::Mix(m) => Model::Mix(MixConfig {
            serial: m.serial.map(|s| sep::LstmConfig { kind: 2, ..s }),
            ..m
        }),
        other => other,
    }
}

/// [`ultra_r`] with serial network kind 3 and `delay` (doc/FORMAT.md 4.13.2).
fn ultra_kind3(revision: u8, delay: u8) -> Model {
    match ultra_r(revision) {
        Model::Mix(m) => Model::Mix(MixConfig {
            serial: m.serial.map(|s| sep::LstmConfig {
                kind: 3,
                delay,
                ..s
            }),
            ..m
        }),
        other => other,
    }
}

/// [`ultra_kind3`] with serial network kind 4 (doc/FORMAT.md 4.13.3: no
/// weight-set selector, the network's mixer weights starting at 0), delay 16.
fn ultra_kind4(revision: u8) -> Model {
    match ultra_kind3(revision, 16) {
        Model::Mix(m) => Model::Mix(MixConfig {
            serial: m.serial.map(|s| sep::LstmConfig { kind: 4, ..s }),
            ..m
        }),
        other => other,
    }
}

/// `max` at CM revision 6 (pinned).
fn max_r6() -> Model {
    preset_r(Preset::Max, 6)
}

/// The `default` preset with CM revision 0.
fn default_r0() -> Model {
    default_r(0)
}

/// The `default` preset with CM revision `revision` (pinned: the archives
/// of an older revision must not change when the default moves on).
pub(crate) fn default_r(revision: u8) -> Model {
    let cm = MixConfig::preset(Preset::Default).expect("mix preset").cm;
    Model::Mix(MixConfig {
        cm: CmConfig { revision, ..cm },
        neural: None,
        serial: None,
    })
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
        let detecting = [
            "default-r4",
            "default-r5",
            "max-r6",
            "default-r7",
            "max-r8",
            "default-r9",
            "max-r10",
            "max-r12",
            "max-r14",
            "max-r16",
            "max-r18",
            "max-r20",
            "max-r22",
            "max-r24",
            "max-r26",
            "max-r28",
            "max-r30",
            "max-r32",
            "max-r34",
            "max-r36",
            "max-r38",
            "max-r40",
            "max-r42",
            "max-r44",
            "max-r46",
        ];
        if ["mix2", "default-r1", "default-r2"].contains(&name) || detecting.contains(&name) {
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
        // Revision 4's own detections (doc/FORMAT.md 4.15), and later ones.
        if detecting.contains(&name) {
            for input in ["image.bmp", "quat.f32", "code.rsrc"] {
                let short = input.split('.').next().expect("name");
                add(&format!("{name}.{short}.sep"), input, &model, None);
            }
        }
        // Revision 5's JPEG family (4.16.4: a JPEG file coded untransformed
        // when that is smaller) and transform 6, png-pixels (section 8).
        if [
            "default-r5",
            "max-r6",
            "default-r7",
            "max-r8",
            "default-r9",
            "max-r10",
            "max-r12",
            "max-r14",
            "max-r16",
            "max-r18",
            "max-r20",
            "max-r22",
            "max-r24",
            "max-r26",
            "max-r28",
            "max-r30",
            "max-r32",
            "max-r34",
            "max-r36",
            "max-r38",
            "max-r40",
            "max-r42",
            "max-r44",
            "max-r46",
        ]
        .contains(&name)
        {
            add(
                &format!("{name}.jpeg.sep"),
                "fireworks.crop128x96.jpg",
                &model,
                None,
            );
            add(
                &format!("{name}.png.sep"),
                "kodim23.crop32x24.png",
                &model,
                None,
            );
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
    // Issue 19: `ultra`'s kind-4 network where its encoder keeps it (no
    // content length, so the block is not known to be under 32 KiB).
    list.push(Golden {
        archive: "ultra-r30-k4.grammar-streamed.sep".into(),
        input: "grammar.lsp",
        model: ultra_kind4(30),
        block_size: None,
        streamed: true,
    });
    list.push(Golden {
        archive: "ultra-r32-k4.grammar-streamed.sep".into(),
        input: "grammar.lsp",
        model: ultra_kind4(32),
        block_size: None,
        streamed: true,
    });
    list.push(Golden {
        archive: "ultra-r34-k4.grammar-streamed.sep".into(),
        input: "grammar.lsp",
        model: ultra_kind4(34),
        block_size: None,
        streamed: true,
    });
    list.push(Golden {
        archive: "ultra-r36-k4.grammar-streamed.sep".into(),
        input: "grammar.lsp",
        model: ultra_kind4(36),
        block_size: None,
        streamed: true,
    });
    list.push(Golden {
        archive: "ultra-r38-k4.grammar-streamed.sep".into(),
        input: "grammar.lsp",
        model: ultra_kind4(38),
        block_size: None,
        streamed: true,
    });
    list.push(Golden {
        archive: "ultra-r40-k4.grammar-streamed.sep".into(),
        input: "grammar.lsp",
        model: ultra_kind4(40),
        block_size: None,
        streamed: true,
    });
    list.push(Golden {
        archive: "ultra-r42-k4.grammar-streamed.sep".into(),
        input: "grammar.lsp",
        model: ultra_kind4(42),
        block_size: None,
        streamed: true,
    });
    list.push(Golden {
        archive: "ultra-r44-k4.grammar-streamed.sep".into(),
        input: "grammar.lsp",
        model: ultra_kind4(44),
        block_size: None,
        streamed: true,
    });
    list.push(Golden {
        archive: "ultra-r46-k4.grammar-streamed.sep".into(),
        input: "grammar.lsp",
        model: ultra_kind4(46),
        block_size: None,
        streamed: true,
    });
    list
}

/// The options every archive of `v1/`, `must-fail/` and `prior-v1/` starts
/// from: the defaults, pinned to format version 1 (the encoder writes version
/// 3 by default since issue 20, doc/FORMAT.md section 13).
pub(crate) fn v1_options() -> Options {
    Options {
        format_version: 1,
        ..Options::default()
    }
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
        ..v1_options()
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
        archive.extend_from_slice(&end.to_bytes(header.version));
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
            ..v1_options()
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
        version: 1,
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
    .write_to(&mut b, 1)
    .expect("write to a Vec");
    b
}

fn end(content: &[u8]) -> Vec<u8> {
    EndRecord {
        content_length: content.len() as u64,
        content_check: xxhash_rust::xxh3::xxh3_64(content),
    }
    .to_bytes(1)
}

fn main() {
    let write = std::env::args().any(|a| a == "--write");
    let mut files = Files::new();
    golden_files(&mut files);
    must_fail(&mut files);
    lossy_files(&mut files); // issue 21
    prior_files(&mut files); // issue 20
    v3::v3_files(&mut files); // issue 20: format version 3
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
    for sub in ["v1", "v3", "must-fail", "lossy-v2", "prior-v1"] {
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
