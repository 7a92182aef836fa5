//! Issue 21: the golden lossy archives (format version 2, doc/FORMAT.md section 9)
//! decode to the same bytes forever, every value within the archive's bound of
//! the input, NaN/inf/fill values exact; every file of `tests/golden/lossy-v2` is
//! listed.

use std::path::PathBuf;

fn golden() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

#[test]
fn every_lossy_golden_archive_decodes_within_its_bound() {
    let manifest = std::fs::read_to_string(golden().join("lossy-v2/MANIFEST.tsv")).unwrap();
    let mut listed = vec!["MANIFEST.tsv".to_string()];
    for line in manifest.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split('\t').collect();
        let (name, input, hash) = (f[0], f[1], f[6]);
        listed.push(name.to_string());
        let archive = std::fs::read(golden().join("lossy-v2").join(name)).unwrap();
        assert!(sep::lossy::is_lossy(&archive), "{name}");
        let info = sep::lossy::inspect(&archive).unwrap();
        let out = sep::lossy::decompress(&archive, u64::MAX).unwrap();
        assert_eq!(
            format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&out)),
            hash,
            "{name} decodes to other bytes"
        );
        assert_eq!(info.dtype.name(), f[2]);
        assert_eq!(
            info.predictor == sep::lossy::Predictor::InterpolationByLevel,
            name.contains("levels."),
            "{name}"
        );
        // Predictor ids 3 and 4: coded in steps of a value grid.
        assert_eq!(
            info.grid.is_some(),
            name.starts_with("grid.")
                || name.starts_with("fast.grid.")
                || name.starts_with("fast3.grid."),
            "{name}"
        );
        // The model revision is in the name's prefix.
        let revision = match name.split('.').next() {
            Some("r1" | "grid" | "levels") => 1,
            Some("fast") => 2,
            Some("fast3") => 3,
            _ => 0,
        };
        assert_eq!(info.revision, revision, "{name}: model revision");
        let orig = std::fs::read(golden().join("inputs").join(input)).unwrap();
        let s = sep::lossy::compare(info.dtype, &orig, &out, &info.fills).unwrap();
        assert!(
            s.max_error <= info.bound,
            "{name}: {} > {}",
            s.max_error,
            info.bound
        );
        assert!(s.specials_exact, "{name}");
        assert!(s.valid > 200, "{name}");
        if input.ends_with(".npy") {
            let h = sep::lossy::npy::parse(&orig).unwrap().header.len();
            assert_eq!(out[..h], orig[..h], "{name}: .npy header");
        }
    }
    for e in std::fs::read_dir(golden().join("lossy-v2")).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(listed.contains(&n), "lossy-v2/{n} is not in MANIFEST.tsv");
    }
    assert!(listed.len() >= 9);
}

#[test]
fn lossless_decoder_rejects_a_lossy_archive_by_version() {
    let archive = std::fs::read(golden().join("lossy-v2/rel-1e-4.grid.sep")).unwrap();
    let e = sep::decompress(&archive).unwrap_err();
    assert!(
        e.to_string().contains("unsupported format version 2"),
        "{e}"
    );
}
