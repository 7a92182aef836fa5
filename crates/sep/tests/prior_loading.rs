//! Issue 20, time per small file: loading a prior from a file (one pass of
//! hashing for its checksum and id, the file read into huge-page-advised
//! memory) and the models' huge-page-advised tables change no byte. The
//! prior files of tests/golden/prior-v1 loaded with `Prior::from_file` keep
//! their ids and code their inputs to exactly the golden archives; a damaged
//! file is still refused.

use sep::{Options, Prior};
use std::path::PathBuf;

fn golden() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

/// The manifest's rows: (file, prior file or samples, input, bytes, hash).
fn manifest() -> Vec<[String; 5]> {
    let text = std::fs::read_to_string(golden().join("prior-v1/MANIFEST.tsv")).expect("manifest");
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let v: Vec<String> = l.split('\t').map(str::to_string).collect();
            v.try_into().expect("five columns")
        })
        .collect()
}

#[test]
fn priors_from_files_code_the_golden_archives() {
    let dir = golden().join("prior-v1");
    let rows = manifest();
    let mut coded = 0;
    for [file, prior_name, input, _, hash] in &rows {
        if file.ends_with(".sepp") {
            let p = Prior::from_file(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(&p.id_hex(), hash, "{file}: id");
            let q = Prior::from_bytes(&std::fs::read(dir.join(file)).unwrap()).unwrap();
            assert_eq!(p.id(), q.id());
            assert_eq!(p.file_len(), q.file_len());
            continue;
        }
        if prior_name.starts_with("builtin:") {
            continue;
        }
        let prior = Prior::from_file(dir.join(prior_name)).expect("prior");
        let data = std::fs::read(golden().join("inputs").join(input)).expect("input");
        let options = Options {
            model: prior.model(),
            prior: Some(prior.clone()),
            // The golden archives of prior-v1 are of format version 1.
            format_version: 1,
            ..Options::default()
        };
        let archive = sep::compress(&data, &options).expect("compress");
        let golden_archive = std::fs::read(dir.join(file)).expect("archive");
        assert!(archive == golden_archive, "{file}: different bytes");
        coded += 1;
    }
    assert_eq!(coded, 4);
}

#[test]
fn damaged_or_changed_files_are_refused() {
    let src = golden().join("prior-v1/default.grammar-head.sepp");
    let good = std::fs::read(&src).unwrap();
    let tmp = std::env::temp_dir().join(format!("sep-prior-loading-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let path = tmp.join("p.sepp");
    // One flipped bit in the samples: the checksum fails.
    let mut v = good.clone();
    let mid = v.len() / 3;
    v[mid] ^= 0x10;
    std::fs::write(&path, &v).unwrap();
    let e = Prior::from_file(&path).unwrap_err().to_string();
    assert!(e.contains("checksum"), "{e}");
    // One byte more or less: the declared length fails.
    for w in [&good[..good.len() - 1], &[&good[..], &[0]].concat()[..]] {
        std::fs::write(&path, w).unwrap();
        assert!(Prior::from_file(&path).is_err());
    }
    // Empty and missing files.
    std::fs::write(&path, b"").unwrap();
    assert!(Prior::from_file(&path).is_err());
    assert!(Prior::from_file(tmp.join("missing.sepp")).is_err());
    // The good file again loads.
    std::fs::write(&path, &good).unwrap();
    assert!(Prior::from_file(&path).is_ok());
    std::fs::remove_dir_all(&tmp).ok();
}
