//! Unit tests of `decoder`.

use super::*;
use crate::format::BlockHeader;

/// 19-byte blocks of a network that takes about 1 GiB to set up: the first is
/// free, the ones after it must be paid for by the archive's bytes, which they
/// are not. Records are only read here, never decoded.
#[test]
fn tiny_blocks_of_a_costly_model_are_refused_by_the_setup_rule() {
    let model = crate::Model::Neural(crate::neural::NeuralConfig {
        backbone: sep_model::BackboneConfig::Pac(sep_model::PacConfig {
            context: 256,
            embed: 16,
            ffn: 1024,
            pairs: 8,
            cache: true,
        }),
        streams: 19,
        min_stream_len: 1,
        adam: sep_nn::AdamConfig::default(),
    });
    let (header, config) = crate::Options {
        model,
        block_size: Some(19),
        small_blocks: true,
        ..crate::Options::default()
    }
    .header()
    .expect("valid");
    let setup = config.block_work(19, 19).0;
    assert!(setup > 1 << 31, "a costly set-up: {setup}");
    let mut archive = Vec::new();
    for _ in 0..100 {
        BlockHeader {
            block_type: BlockType::Modelled,
            raw_len: 19,
            payload_len: 19,
            raw_check: 0,
            stream_lens: vec![1; 19],
        }
        .write_to(&mut archive, header.version)
        .unwrap();
        archive.extend_from_slice(&[0x55; 19]);
    }
    let mut walk = Walk {
        config: Arc::new(config),
        header,
        archive_total: 0,
        earlier: 0,
        block_index: 0,
        short_block: None,
        spent: Spent::default(),
        expected: Default::default(),
        prior: None,
    };
    let mut r = &archive[..];
    let mut blocks = 0;
    let e = loop {
        match read_record(&mut r, &mut walk, &Limits::default(), &mut Vec::new()) {
            Ok(Read1::Block(_)) => blocks += 1,
            Ok(Read1::End { .. }) => panic!("no end record here"),
            Err(e) => break e,
        }
    };
    assert!(
        matches!(e, Error::OverLimit { what, .. } if what.starts_with("model set-up")),
        "{e}"
    );
    assert!((1..=3).contains(&blocks), "{blocks} blocks accepted: {e}");
    // Without a work limit there is no set-up limit either.
    let mut walk2 = Walk {
        spent: Spent::default(),
        block_index: 0,
        archive_total: 0,
        ..walk
    };
    let none = Limits {
        max_work: None,
        ..Limits::default()
    };
    let mut r = &archive[..];
    for _ in 0..100 {
        assert!(matches!(
            read_record(&mut r, &mut walk2, &none, &mut Vec::new()),
            Ok(Read1::Block(_))
        ));
    }
}
