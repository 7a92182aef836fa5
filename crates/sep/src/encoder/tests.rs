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
    let seg = crate::segment::encode(&config4, 0, &jpeg, &cancel, &Default::default())
        .expect("jpeg segment");
    assert_eq!(seg.dense, jpeg.len() as u64);
    assert!(segmented_suffices(seg.payload.len() + 16, seg.dense));
    // At revision 5 (default) the JPEG family codes a JPEG that starts the
    // block: it is not dense, both codings are compared.
    let seg = crate::segment::encode(&config, 0, &jpeg, &cancel, &Default::default())
        .expect("jpeg segment");
    assert_eq!(seg.dense, 0);
    assert!(!segmented_suffices(seg.payload.len() + 16, seg.dense));
    // A small JPEG's lepton payload (2969 of 3399 bytes) is not: both
    // codings are compared.
    let small = repo_file("tests/golden/inputs/fireworks.crop128x96.jpg");
    let seg = crate::segment::encode(&config, 0, &small, &cancel, &Default::default())
        .expect("jpeg segment");
    assert!(!segmented_suffices(seg.payload.len() + 16, seg.dense));
    assert!(!seg.header_known);
    // x86 code holds no entropy-coded data, and without a header naming it
    // as code both codings are compared.
    let x86 = repo_file("tests/golden/inputs/x86.text16k");
    let seg = crate::segment::encode(&config, 0, &x86, &cancel, &Default::default())
        .expect("x86 segment");
    assert_eq!(seg.dense, 0);
    assert!(!seg.header_known);
    assert!(!segmented_suffices(seg.payload.len(), seg.dense));
    // The rule itself: at most 7/8 of the dense bytes.
    assert!(segmented_suffices(700, 800));
    assert!(!segmented_suffices(701, 800));
    // The chosen block decodes to the input either way.
    for data in [&jpeg, &small, &x86] {
        let a = crate::compress(data, &Options::default()).expect("compress");
        assert_eq!(&crate::decompress(&a).expect("decompress"), data);
    }
}

/// A minimal x86-64 ELF: its header, one executable PROGBITS section
/// holding `code`, and the section header table after it.
fn tiny_elf(code: &[u8]) -> Vec<u8> {
    let mut e = vec![0u8; 64];
    e[..7].copy_from_slice(b"\x7FELF\x02\x01\x01");
    e[18..20].copy_from_slice(&0x3Eu16.to_le_bytes());
    let shoff = 64 + code.len() as u64;
    e[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
    e[0x3A..0x3C].copy_from_slice(&64u16.to_le_bytes());
    e[0x3C..0x3E].copy_from_slice(&2u16.to_le_bytes());
    e.extend_from_slice(code);
    e.extend_from_slice(&[0u8; 64]); // the null section
    let mut text = [0u8; 64];
    text[4..8].copy_from_slice(&1u32.to_le_bytes()); // PROGBITS
    text[8..16].copy_from_slice(&6u64.to_le_bytes()); // ALLOC | EXECINSTR
    text[0x18..0x20].copy_from_slice(&64u64.to_le_bytes());
    text[0x20..0x28].copy_from_slice(&(code.len() as u64).to_le_bytes());
    e.extend_from_slice(&text);
    e
}

#[test]
fn code_named_by_an_elf_header_is_not_coded_twice() {
    let (_, config) = Options::default().header().expect("default header");
    let cancel = Cancel::default();
    let code = repo_file("tests/golden/inputs/x86.text16k");
    let elf = tiny_elf(&code);
    assert!(sep_transform::detect::header_names_code(&elf));
    let seg = crate::segment::encode(&config, 0, &elf, &cancel, &Default::default())
        .expect("x86 segment");
    assert!(seg.header_known, "the header names the code section");
    assert_eq!(seg.dense, 0);
    // The same code behind a header whose section points past the end is
    // not named code.
    let mut cut = elf.clone();
    cut.truncate(64 + code.len() / 2);
    assert!(!sep_transform::detect::header_names_code(&cut));
    // The block is kept segmented (without the untransformed coding that
    // could have won) and decodes to the input.
    let stats = EncodeStats::default();
    let mut raw = elf.clone();
    let coded = block::code_block(&config, None, 0, 3, true, &mut raw, &cancel, &stats);
    assert!(coded.segmented());
    assert!(block::skip_untransformed(usize::MAX, 0, true));
    assert!(!block::skip_untransformed(701, 800, false));
    assert!(block::skip_untransformed(700, 800, false));
    let a = crate::compress(&elf, &Options::default()).expect("compress");
    assert_eq!(crate::decompress(&a).expect("decompress"), elf);
}
