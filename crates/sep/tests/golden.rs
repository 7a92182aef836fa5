//! Golden archives (`tests/golden/`, see its README.md): every committed archive of
//! format versions 1 and 3 must decode, forever, to exactly its committed original; every
//! must-fail file must fail with its expected error. A change that breaks either has
//! broken the format. (`cargo run -p sep --example make_golden` writes them; never in
//! CI.)

use sep::Error;
use std::io::Read;
use std::path::PathBuf;

fn golden() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

/// The rows of a tab-separated file, comments skipped.
fn rows(path: PathBuf) -> Vec<Vec<String>> {
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// Every file of a folder but its `.tsv` table, sorted.
fn files(sub: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(golden().join(sub))
        .expect("golden folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".tsv"))
        .collect();
    names.sort();
    names
}

#[test]
fn every_golden_archive_decodes_to_its_original() {
    let (ids, backbones) = decode_folder("v1");
    assert_eq!(
        ids.into_iter().collect::<Vec<_>>(),
        [0, 1, 2, 3],
        "model ids"
    );
    assert_eq!(
        backbones.into_iter().collect::<Vec<_>>(),
        [1, 2, 3, 4],
        "backbones"
    );
}

/// Issue 20: the archives of format version 3 (doc/FORMAT.md section 13).
#[test]
fn every_version_3_golden_archive_decodes_to_its_original() {
    let (ids, _) = decode_folder("v3");
    assert_eq!(ids.into_iter().collect::<Vec<_>>(), [0, 1, 3], "model ids");
    for f in files("v3") {
        let data = std::fs::read(golden().join("v3").join(&f)).expect("archive");
        let last = sep::inspect(&data[..])
            .expect("inspect")
            .pop()
            .expect("one");
        assert_eq!(last.header.version, 3, "v3/{f}");
    }
}

/// Decodes every archive of `sub`'s MANIFEST.tsv (and checks that the folder
/// holds no other); returns the model ids and backbone ids met.
fn decode_folder(
    sub: &str,
) -> (
    std::collections::BTreeSet<u16>,
    std::collections::BTreeSet<u8>,
) {
    let manifest = rows(golden().join(sub).join("MANIFEST.tsv"));
    // The archives are independent: split them over the cores (row k to
    // worker k % n), the slowest part of the test suite otherwise.
    let n = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    let parts: Vec<_> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..n)
            .map(|w| {
                let mine: Vec<&Vec<String>> = manifest.iter().skip(w).step_by(n).collect();
                scope.spawn(move || decode_rows(sub, &mine))
            })
            .collect();
        workers
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut ids = std::collections::BTreeSet::new();
    let mut backbones = std::collections::BTreeSet::new();
    for (i, b) in parts {
        ids.extend(i);
        backbones.extend(b);
    }
    let listed: Vec<&String> = manifest.iter().map(|r| &r[0]).collect();
    for f in files(sub) {
        assert!(listed.contains(&&f), "{sub}/{f} is not in MANIFEST.tsv");
    }
    eprintln!("{} golden archives of {sub} decoded", manifest.len());
    (ids, backbones)
}

/// Decodes the archives of `rows` (rows of `sub`'s MANIFEST.tsv) whole and
/// streamed, checks them against their inputs and model ids; returns the
/// model ids and backbone ids met.
fn decode_rows(
    sub: &str,
    rows: &[&Vec<String>],
) -> (
    std::collections::BTreeSet<u16>,
    std::collections::BTreeSet<u8>,
) {
    let mut ids = std::collections::BTreeSet::new();
    let mut backbones = std::collections::BTreeSet::new();
    for row in rows {
        let [archive, input, bytes, xxh3, model_id, _describe] = &row[..] else {
            panic!("bad manifest row {row:?}");
        };
        let data = std::fs::read(golden().join(sub).join(archive)).expect("archive");
        let original = std::fs::read(golden().join("inputs").join(input)).expect("input");
        assert_eq!(original.len().to_string(), *bytes, "{input}: size changed");
        assert_eq!(
            format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&original)),
            *xxh3,
            "{input}: content changed"
        );
        let out = sep::decompress(&data).unwrap_or_else(|e| panic!("{archive}: {e}"));
        assert!(out == original, "{archive}: decodes to different bytes");
        // The streaming decoder, small reads, two blocks at a time.
        let mut streamed = Vec::new();
        let mut dec = sep::Decoder::new(&data[..])
            .expect("header")
            .with_threads(2);
        let mut buf = [0u8; 777];
        loop {
            let n = dec
                .read(&mut buf)
                .unwrap_or_else(|e| panic!("{archive}: {e}"));
            if n == 0 {
                break;
            }
            streamed.extend_from_slice(&buf[..n]);
        }
        assert!(streamed == original, "{archive}: streaming decode differs");
        let infos = sep::inspect(&data[..]).expect("inspect");
        assert_eq!(infos[0].model.id().to_string(), *model_id, "{archive}");
        for info in &infos {
            ids.insert(info.model.id());
            let net = match &info.model {
                sep::ModelConfig::Neural(c) => Some(c),
                sep::ModelConfig::Mix(c) => c.neural.as_ref(),
                _ => None,
            };
            if let Some(c) = net {
                backbones.insert(c.backbone.id());
            }
        }
    }
    (ids, backbones)
}

/// The variant's name, as written in must-fail/EXPECTED.tsv.
fn variant(e: &Error) -> &'static str {
    match e {
        Error::Io(_) => "Io",
        Error::BadMagic { .. } => "BadMagic",
        Error::UnsupportedVersion { .. } => "UnsupportedVersion",
        Error::Reserved { .. } => "Reserved",
        Error::Truncated { .. } => "Truncated",
        Error::InvalidField { .. } => "InvalidField",
        Error::HeaderChecksum => "HeaderChecksum",
        Error::BlockChecksum { .. } => "BlockChecksum",
        Error::ContentChecksum { .. } => "ContentChecksum",
        Error::LengthMismatch { .. } => "LengthMismatch",
        Error::UnknownModel(_) => "UnknownModel",
        Error::InvalidModel { .. } => "InvalidModel",
        Error::LimitExceeded { .. } => "LimitExceeded",
        Error::TrailingData => "TrailingData",
        Error::StreamJunk { .. } => "StreamJunk",
        Error::SeekTable { .. } => "SeekTable",
        _ => "other",
    }
}

#[test]
fn every_must_fail_file_fails_with_its_error() {
    let expected = rows(golden().join("must-fail/EXPECTED.tsv"));
    for row in &expected {
        let [file, want, substring, what] = &row[..] else {
            panic!("bad row {row:?}");
        };
        let data = std::fs::read(golden().join("must-fail").join(file)).expect("file");
        let e = match sep::decompress(&data) {
            Ok(_) => panic!("{file} ({what}) decoded"),
            Err(e) => e,
        };
        assert_eq!(variant(&e), want, "{file} ({what}): {e}");
        assert!(
            e.to_string().contains(substring.as_str()),
            "{file} ({what}): {e:?} does not say {substring:?}"
        );
        assert!(e.is_corrupt(), "{file}: {e} is not reported as corruption");
    }
    let listed: Vec<&String> = expected.iter().map(|r| &r[0]).collect();
    for f in files("must-fail") {
        assert!(listed.contains(&&f), "must-fail/{f} is not in EXPECTED.tsv");
    }
    eprintln!("{} must-fail files rejected", expected.len());
}
