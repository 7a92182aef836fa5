//! Golden archives of format version 3, the compact layout (issue 20,
//! doc/FORMAT.md section 13): tests/golden/v3 and its manifest.

#[allow(unused_imports)]
use super::*;

/// Options at format version 3 (written out, not the default, so that the
/// files stay as they are if the default version moves on).
fn v3(model: Model) -> Options {
    Options {
        model,
        format_version: 3,
        ..Options::default()
    }
}

/// Issue 20: version-3 archives of the empty input, one byte, a small text
/// with the default and max presets (CM revisions 9 and 28, what they write
/// at stop 37, pinned), order2
/// in blocks of 1000 bytes, written streaming (no content length) and with a
/// seek table, incompressible noise (a stored block), a gzip file (a
/// segmented block), the built-in text prior, and a version-1 archive
/// followed by a version-3 one.
pub(crate) fn v3_files(files: &mut Files) {
    let dir = golden_dir().join("inputs");
    let input = |name: &str| -> Vec<u8> {
        synthetic()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, b)| b)
            .unwrap_or_else(|| std::fs::read(dir.join(name)).expect("input"))
    };
    let default = preset_r(Preset::Default, 9);
    let order2_1000 = Options {
        block_size: Some(1000),
        small_blocks: true,
        ..v3(Model::Order2)
    };
    let cases: Vec<(&str, &str, Options, bool)> = vec![
        ("default.empty.sep", "empty", v3(default.clone()), false),
        (
            "default.one-byte.sep",
            "one-byte",
            v3(default.clone()),
            false,
        ),
        (
            "default.grammar.sep",
            "grammar.lsp",
            v3(default.clone()),
            false,
        ),
        (
            "max.grammar.sep",
            "grammar.lsp",
            v3(preset_r(Preset::Max, 28)),
            false,
        ),
        ("store.grammar.sep", "grammar.lsp", v3(Model::Store), false),
        (
            "order2.blocks-1000.sep",
            "grammar.lsp",
            order2_1000.clone(),
            false,
        ),
        (
            "order2.streamed.sep",
            "grammar.lsp",
            order2_1000.clone(),
            true,
        ),
        (
            "order2.seek-table.sep",
            "grammar.lsp",
            Options {
                seek_table: true,
                ..order2_1000.clone()
            },
            false,
        ),
        (
            "default.noise-1500.sep",
            "noise-1500",
            v3(default.clone()),
            false,
        ),
        (
            "default.gzip.sep",
            "grammar.lsp.gz",
            v3(default.clone()),
            false,
        ),
        (
            "builtin-text.grammar.sep",
            "grammar.lsp",
            Options {
                prior: Some(sep::Prior::builtin(sep::Builtin::Text)),
                ..v3(sep::Prior::builtin(sep::Builtin::Text).model())
            },
            false,
        ),
    ];
    let mut manifest = String::from(
        "# archive\tinput\tbytes\txxh3_64 of the input\tmodel_id\tmodel (ModelConfig::describe)\n",
    );
    let mut row = |archive: &str, name: &str, data: &[u8], model_id: u16, describe: &str| {
        manifest += &format!(
            "{archive}\t{name}\t{}\t{:016x}\t{model_id}\t{describe}\n",
            data.len(),
            xxhash_rust::xxh3::xxh3_64(data)
        );
    };
    for (archive, name, options, streamed) in cases {
        let data = input(name);
        let bytes = if streamed {
            let mut enc = sep::Encoder::new(Vec::new(), &options).expect("encoder");
            enc.write_all(&data).expect("write");
            enc.finish().expect("finish")
        } else {
            sep::compress(
                &data,
                &Options {
                    content_length: Some(data.len() as u64),
                    ..options
                },
            )
            .expect("compress")
        };
        assert_eq!(bytes[4], 3, "{archive}: format version 3");
        assert_eq!(sep::decompress(&bytes).expect("decompress"), data);
        let model =
            ModelConfig::from_header(&sep::read_header(&mut &bytes[..]).unwrap()).expect("model");
        row(archive, name, &data, model.id(), &model.describe());
        files.insert(format!("v3/{archive}"), bytes);
    }
    // A version-1 archive, then a version-3 one: the concatenation of their contents.
    let a = files["v1/order2.grammar.sep"].clone();
    let b = files["v3/default.one-byte.sep"].clone();
    let both = input("grammar+one-byte");
    row(
        "concatenated-v1-v3.sep",
        "grammar+one-byte",
        &both,
        1,
        "order2 archive of version 1, then a default archive of version 3",
    );
    files.insert("v3/concatenated-v1-v3.sep".into(), [a, b].concat());
    files.insert("v3/MANIFEST.tsv".into(), manifest.into_bytes());
}
