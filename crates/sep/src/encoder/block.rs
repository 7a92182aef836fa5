//! How one block is coded: the cheap incompressibility probe, the model (with
//! a prior, or on segments after transforms, whichever is smaller), or stored.

use super::*;

/// How much of a block the probe codes: 1/64 of it, 4 KiB to 64 KiB.
pub(super) fn probe_len(block_len: usize) -> usize {
    (block_len / 64).clamp(4 << 10, 64 << 10)
}

/// Early give-up on incompressible data: codes the first [`probe_len`]
/// bytes of a block of at least [`PROBE_MIN_BLOCK`] bytes with a fresh model
/// (as the block itself would start) and says whether they failed to shrink
/// by 1/64. Such a block is then stored without modelling the rest: random
/// or already-compressed data costs 1/64 of the model's time instead of all
/// of it. The decision depends only on the block's bytes and the model, so
/// the archive stays the same for every thread count; stored blocks are
/// format v1 (doc/FORMAT.md section 3.1), so any decoder reads the result.
/// A compressible block pays for the probe: at most 1/64 more work, and a
/// block whose start looks random but whose rest would shrink is stored
/// (crates/sep/tests/api.rs shows one). Measured (`sep -c -T1`, default
/// preset, 2026-12-01): 1 MB of random bytes 5.36 s -> 0.08 s CPU (best of
/// 3), archive 1,000,098 bytes both; the 17 files of the bench set code to
/// the same sizes as before, in 80.4 s CPU against 82.5 s (noise of a shared
/// machine).
///
/// The probe runs with a quiet [`Cancel`] (it stops when the block's work
/// is cancelled, but its bytes do not count as progress: the block is coded
/// again, or stored, after it).
pub(super) fn looks_incompressible(
    config: &ModelConfig,
    seed: u64,
    raw: &[u8],
    cancel: &Cancel,
) -> bool {
    if raw.len() < PROBE_MIN_BLOCK || matches!(config, ModelConfig::Store) {
        return false;
    }
    let mut probe = raw[..probe_len(raw.len())].to_vec();
    match config.encode_block(seed, &mut probe, &cancel.quiet()) {
        Some(streams) => {
            let coded: usize = streams.iter().map(Vec::len).sum();
            coded >= probe.len() - probe.len() / 64
        }
        None => false,
    }
}

/// One block, coded: stored when the model would not make it smaller, or
/// when its start shows it incompressible ([`looks_incompressible`]). `raw`
/// is left as it is (and kept, as the payload of a stored block); the result
/// is garbage once `cancel` is set. `transforms`: try a segmented block too.
/// `version`: the format version the block header is written in (its length
/// enters the choice between stored, modelled and segmented).
#[allow(clippy::too_many_arguments)]
pub(super) fn code_block(
    config: &ModelConfig,
    prior: Option<&crate::Prior>,
    seed: u64,
    version: u8,
    transforms: bool,
    raw: &mut Vec<u8>,
    cancel: &Cancel,
    stats: &EncodeStats,
) -> Coded {
    let raw_len = raw.len() as u32;
    let check = raw_check(raw);
    let stored = BlockHeader {
        block_type: BlockType::Stored,
        raw_len,
        payload_len: raw_len,
        raw_check: check,
        stream_lens: vec![],
    };
    // Issue 17: a segmented block (doc/FORMAT.md section 8) when a transform
    // applies and it comes out smaller than the alternatives. It runs with a
    // quiet Cancel (stops when asked, counts no progress): the block's own
    // coding below counts it.
    let segmented = transforms
        .then(|| crate::segment::encode(config, seed, raw, &cancel.quiet(), stats))
        .flatten()
        .map(|seg| {
            let payload = seg.payload;
            let bh = BlockHeader {
                block_type: BlockType::Segmented,
                raw_len,
                payload_len: payload.len() as u32,
                raw_check: check,
                stream_lens: vec![],
            };
            (
                bh.encoded_len(version) + payload.len(),
                header_bytes(&bh, version),
                payload,
                (seg.dense, seg.header_known),
            )
        });
    // Coding the block untransformed as well (to keep the smaller) doubles
    // the model's work. It is skipped when the segmented block is at most 7/8
    // of the entropy-coded bytes its transforms decoded (JPEG, compressed
    // deflate): the plain coding could only win by shrinking those bytes by
    // more than 1/8 even if it coded everything else for free, which a
    // byte-level model does not do on such data. It is skipped as well when
    // an ELF or PE header at the block's start names the code the x86
    // transform was applied to: the transform is then known to apply, and
    // on every ELF measured the segmented block was the smaller (3-5%).
    // Likewise when a colour segment (CM revision 46) covers at least 7/8
    // of the block: an image known by its header, where the colour
    // differences were the smaller on every image measured (2-5%,
    // doc/FORMAT.md 4.57.1).
    // Deterministic: it depends only on the block's bytes and the model.
    // Measured in doc/TRANSFORMS.md (section "Coding twice").
    if let Some((seg_len, _, _, (dense, header_known))) = &segmented
        && skip_untransformed(*seg_len, *dense, *header_known)
    {
        cancel.advance(raw.len() as u64);
        let (_, header, payload, _) = segmented.expect("checked above");
        return Coded {
            header,
            streams: vec![payload],
            raw: std::mem::take(raw),
        };
    }
    let best =
        |len: usize, header: Vec<u8>, streams: Vec<Vec<u8>>, raw: &mut Vec<u8>| match segmented {
            Some((seg_len, seg_header, payload, _)) if seg_len < len => Coded {
                header: seg_header,
                streams: vec![payload],
                raw: std::mem::take(raw),
            },
            _ => Coded {
                header,
                streams,
                raw: std::mem::take(raw),
            },
        };
    // A JPEG for the JPEG family (CM revision 5) looks incompressible to a
    // probe of its start: it is coded all the same.
    let probe = prior.is_none() && !crate::segment::models_jpeg(config, raw);
    let modelled = if probe && looks_incompressible(config, seed, raw, cancel) {
        None
    } else {
        config.encode_block_with(prior, seed, raw, cancel)
    };
    if modelled.is_none() {
        // Stored: nothing more to code, the block is done all the same.
        cancel.advance(raw.len() as u64);
    }
    if let Some(streams) = modelled {
        let payload_len: usize = streams.iter().map(Vec::len).sum();
        let modelled = BlockHeader {
            block_type: BlockType::Modelled,
            raw_len,
            payload_len: payload_len as u32,
            raw_check: check,
            stream_lens: streams.iter().map(|s| s.len() as u32).collect(),
        };
        let len = modelled.encoded_len(version) + payload_len;
        if len < stored.encoded_len(version) + raw.len() {
            return best(len, header_bytes(&modelled, version), streams, raw);
        }
    }
    best(
        stored.encoded_len(version) + raw.len(),
        header_bytes(&stored, version),
        Vec::new(),
        raw,
    )
}

/// Whether the encoder keeps a segmented block of `seg_len` bytes without
/// also coding the block untransformed: its transforms decoded enough dense
/// bytes ([`segmented_suffices`]), or the block's header says its transform
/// applies (`header_known`: an ELF/PE header named the code its x86
/// transform applied to, or a colour segment covers most of the block).
pub(super) fn skip_untransformed(seg_len: usize, dense: u64, header_known: bool) -> bool {
    header_known || segmented_suffices(seg_len, dense)
}

/// Whether a segmented block of `seg_len` bytes (header included) whose
/// transforms decoded `dense` bytes of entropy-coded data is kept without
/// also coding the block untransformed: at most 7/8 of `dense` (see
/// `code_block`).
pub(super) fn segmented_suffices(seg_len: usize, dense: u64) -> bool {
    (seg_len as u64).saturating_mul(8) <= dense.saturating_mul(7)
}
