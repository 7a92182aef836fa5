//! Issue 20: the prior files of tests/golden/prior-v1 load, keep their ids,
//! and the archives coded with them decode to their inputs, forever
//! (doc/FORMAT.md section 11; written by crates/sep/examples/make_golden.rs).

use sep::{Decoder, Error, Prior};
use std::io::Read;
use std::path::PathBuf;

fn golden() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

#[test]
fn golden_priors_load_and_their_archives_decode() {
    let dir = golden().join("prior-v1");
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).expect("manifest");
    let (mut priors, mut archives) = (0, 0);
    for line in manifest.lines().filter(|l| !l.starts_with('#')) {
        let [file, prior_or_samples, input, bytes, hash] = line.split('\t').collect::<Vec<_>>()[..]
        else {
            panic!("bad row {line}");
        };
        let data = std::fs::read(dir.join(file)).expect("file");
        if file.ends_with(".sepp") {
            let p = Prior::from_bytes(&data).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(p.id_hex(), hash, "{file}: id changed");
            assert_eq!(data.len().to_string(), bytes, "{file}");
            priors += 1;
            continue;
        }
        // A built-in prior (crates/sep/priors) is found by its id alone.
        let builtin = sep::Builtin::from_name(prior_or_samples)
            .filter(|_| prior_or_samples.starts_with("builtin:"));
        let p = match builtin {
            Some(b) => Prior::builtin(b),
            None => Prior::from_file(dir.join(prior_or_samples)).expect("prior"),
        };
        let original = std::fs::read(golden().join("inputs").join(input)).expect("input");
        assert_eq!(original.len().to_string(), bytes, "{input}: size changed");
        assert_eq!(
            format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&original)),
            hash,
            "{input} changed"
        );
        let header = sep::read_header(&mut &data[..]).expect("header");
        assert_eq!(header.prior_id, Some(p.id()), "{file}");
        let mut out = Vec::new();
        Decoder::new(&data[..])
            .expect("header")
            .with_prior(Some(p.clone()))
            .read_to_end(&mut out)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(out == original, "{file}: decodes to different bytes");
        if builtin.is_some() {
            assert!(sep::decompress(&data).unwrap() == original, "{file}");
        } else {
            assert!(matches!(
                sep::decompress(&data),
                Err(Error::PriorNeeded { .. })
            ));
        }
        archives += 1;
    }
    assert_eq!((priors, archives), (2, 5));
}
