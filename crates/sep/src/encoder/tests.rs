//! Unit tests of `encoder`.

use super::*;

fn repo_file(path: &str) -> Vec<u8> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read(dir.join(path)).expect("a file of the repository")
}

#[test]
fn untransformed_coding_is_skipped_only_for_dense_segments() {
    let (_, config) = Options::default().header().expect("default header");
    let cancel = Cancel::default();
    // A photo: lepton's payload is about 4/5 of the JPEG, so at CM revision
    // 4 the block is not coded a second time as it is.
    let jpeg = repo_file("tests/corpus/files/snappy.fireworks.jpeg");
    let crate::codec::ModelConfig::Mix(mix) = &config else {
        panic!("default is a mix model")
    };
    let mut mix4 = mix.clone();
    mix4.cm.revision = 4;
    let config4 = crate::codec::ModelConfig::Mix(mix4);
    let (payload, dense) = crate::segment::encode(&config4, 0, &jpeg, &cancel, &Default::default())
        .expect("jpeg segment");
    assert_eq!(dense, jpeg.len() as u64);
    assert!(segmented_suffices(payload.len() + 16, dense));
    // At revision 5 (default) the JPEG family codes a JPEG that starts the
    // block: it is not dense, both codings are compared.
    let (payload, dense) = crate::segment::encode(&config, 0, &jpeg, &cancel, &Default::default())
        .expect("jpeg segment");
    assert_eq!(dense, 0);
    assert!(!segmented_suffices(payload.len() + 16, dense));
    // A small JPEG's lepton payload (2969 of 3399 bytes) is not: both
    // codings are compared.
    let small = repo_file("tests/golden/inputs/fireworks.crop128x96.jpg");
    let (payload, dense) = crate::segment::encode(&config, 0, &small, &cancel, &Default::default())
        .expect("jpeg segment");
    assert!(!segmented_suffices(payload.len() + 16, dense));
    // x86 code holds no entropy-coded data: both codings are compared.
    let x86 = repo_file("tests/golden/inputs/x86.text16k");
    let (payload, dense) = crate::segment::encode(&config, 0, &x86, &cancel, &Default::default())
        .expect("x86 segment");
    assert_eq!(dense, 0);
    assert!(!segmented_suffices(payload.len(), dense));
    // The rule itself: at most 7/8 of the dense bytes.
    assert!(segmented_suffices(700, 800));
    assert!(!segmented_suffices(701, 800));
    // The chosen block decodes to the input either way.
    for data in [&jpeg, &small, &x86] {
        let a = crate::compress(data, &Options::default()).expect("compress");
        assert_eq!(&crate::decompress(&a).expect("decompress"), data);
    }
}
