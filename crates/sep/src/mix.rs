//! The mixed model (`model_id` 3): context mixing with, optionally, a neural
//! network's prediction as one more input. Its presets are sep's modes.

use crate::neural::NeuralConfig;
use crate::preset::Preset;
use sep_cm::{CmConfig, LstmConfig};

/// Everything that defines a mixed model.
#[derive(Debug, Clone, PartialEq)]
pub struct MixConfig {
    /// The context models, match models, mixer and APMs.
    pub cm: CmConfig,
    /// The network whose distribution is mixed in, if any. Its `streams` and
    /// `min_stream_len` decide how a block is cut into streams; without a
    /// network a block is one stream.
    pub neural: Option<NeuralConfig>,
    /// The serial network inside the mixer (preset `ultra`, doc/FORMAT.md
    /// section 4.13): it reads the block as one stream, so it excludes
    /// [`neural`](Self::neural).
    pub serial: Option<LstmConfig>,
}

/// The serial network of preset `ultra` (README, "Presets and ablation"):
/// kind 4 since stop 38 (doc/FORMAT.md 4.13.3): kind 3's network (4.13.2,
/// training on a second thread when the block has two, weights 16 bytes
/// late) without a weight-set selector, its mixer weights starting at 0,
/// and left out of blocks under 32 KiB, so that `ultra` is never more
/// than noise above `max` on small files. Kind 3 from stop 31, kind 1
/// before.
pub(crate) const ULTRA_LSTM: LstmConfig = LstmConfig {
    kind: 4,
    cells: 64,
    horizon: 16,
    lr: 100,
    delay: 16,
};

/// The context-model set of the `default` preset (orders 1-6, the last 8
/// bytes, word, sparse, record and image contexts, two match models) with
/// tables of `2^table_bits` bytes.
pub(crate) fn full_cm(table_bits: u8) -> CmConfig {
    CmConfig {
        orders: 0b0011_1111,
        word: true,
        sparse: true,
        record: true,
        long: 0b0001,
        match_min: 5,
        match2_min: 12,
        table_bits,
        match_bits: 22,
        selectors: 0xF,
        apms: 3,
        image: true,
        revision: 0,
    }
}

/// The `fast` preset's context model: CM revision 3 (`sep_cm::FastCm`).
pub(crate) fn fast_cm() -> CmConfig {
    CmConfig {
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
    }
}

/// The least block size at which the encoder writes a serial network of
/// kind 4 (doc/FORMAT.md 4.13.3): its 8 parameter bytes in the header cost
/// more than the network saves on a smaller input, so a block of fewer
/// bytes (the whole input when its length is known) is coded by the
/// context-mixing model alone, as `max` codes it. An encoder's choice, not
/// the format's: the decoder reads whichever model the header names, and
/// kinds 1-3 are always written as asked.
pub const SERIAL_MIN_BLOCK: u32 = 32 << 10;

impl MixConfig {
    /// The model the encoder writes for blocks of `block_size` bytes: this
    /// one, less a serial network of kind 4 when the block is smaller than
    /// [`SERIAL_MIN_BLOCK`].
    pub(crate) fn for_block_len(&self, block_size: u32) -> MixConfig {
        let mut c = self.clone();
        if block_size < SERIAL_MIN_BLOCK && c.serial.is_some_and(|s| s.kind >= 4) {
            c.serial = None;
        }
        c
    }

    /// The configuration of a preset; `None` for the paper's (neural-only)
    /// presets. Chosen by measurement (README, "Presets and ablation"): a network as a
    /// mixer input costs more than it gains at the sizes measured (the CM
    /// loses context when a block is cut into the streams a network needs),
    /// so only `hybrid` has one.
    pub fn preset(p: Preset) -> Option<Self> {
        match p {
            // CM revision 3, the lean model (doc/FORMAT.md section 4.14,
            // README "Presets"): 4 MiB context table, 2^20-slot match table.
            Preset::Fast => Some(MixConfig {
                cm: fast_cm(),
                neural: None,
                serial: None,
            }),
            // A 64 MiB context table: the 3.7 MB float32x4 file codes to
            // 467,185 bytes instead of 487,241 with 16 MiB (README, "Presets
            // and ablation").
            // CM revision 1 (WAV/PNM detection): only detected files
            // change, and those shrink (README, "Presets and ablation").
            // CM revision 2 (text, code and markup contexts, more selectors
            // and APMs; the float-array and adaptive pixel models): README,
            // "CM revision 2". CM revision 4 (section 4.15): revision 2
            // plus the models of issues 16-18's second round; revision 5
            // (section 4.16): revision 4 plus models cheap enough for the
            // default's speed, and a mixer of up to 64 inputs; revision 7
            // (section 4.18): revision 5 plus the third round's models of
            // the `default` line; revision 9 (section 4.20): revision 7 plus
            // the fourth round's.
            Preset::Default => Some(MixConfig {
                cm: CmConfig {
                    revision: 9,
                    ..full_cm(26)
                },
                neural: None,
                serial: None,
            }),
            // The default's contexts with larger tables: twice the
            // default's, 0.6-1% smaller on the 4 MB inputs; orders 7 and 16
            // measured worse. From stop 31 a 512 MiB table (2^29; used whole
            // by inputs of 512 KiB and more): enwik8.head4M 810,867 ->
            // 804,907 bytes at revision 14 (2^28: 806,783; book1 at 2^28
            // 193,189 -> 193,041). CM
            // revision 6 (section 4.17): revision 5 plus the costlier models;
            // revision 8 (section 4.19): revision 6 plus revision 7's and the
            // third round's costlier models; revision 10 (section 4.21):
            // revision 8 plus revision 9's and the fourth round's; revision
            // 12 (section 4.23): revision 10 plus the fifth round's; revision
            // 14 (section 4.25): revision 12 plus the sixth round's; revision
            // 16 (section 4.27): revision 14 plus the seventh round's;
            // revision 18 (section 4.29): revision 16 plus the eighth
            // round's; revision 20 (section 4.31): revision 18 plus the
            // ninth round's; revision 22 (section 4.33): revision 20 plus
            // the tenth round's; revision 24 (section 4.35): revision 22
            // plus the eleventh round's; revision 26 (section 4.37):
            // revision 24 plus the twelfth round's; revision 28 (section
            // 4.39): revision 26 plus the thirteenth round's; revision 30
            // (section 4.41): revision 28 plus the fourteenth round's;
            // revision 32 (section 4.43): revision 30 plus the fifteenth
            // round's; revision 34 (section 4.45): revision 32 plus the
            // sixteenth round's; revision 36 (section 4.47): revision 34
            // plus the seventeenth round's; revision 38 (section 4.49):
            // revision 36 plus the eighteenth round's; revision 40 (section
            // 4.51): revision 38 plus the nineteenth round's; revision 42
            // (section 4.53): revision 40 plus the twentieth round's; revision
            // 44 (section 4.55): revision 42 plus the twenty-first round's;
            // revision 46 (section 4.57): revision 44 plus the twenty-second
            // round's.
            Preset::Max => Some(MixConfig {
                cm: CmConfig {
                    match_bits: 24,
                    revision: 46,
                    ..full_cm(29)
                },
                neural: None,
                serial: None,
            }),
            // `max` plus the serial LSTM: the two measure the network's
            // worth. `max`'s CM revision (6, then 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 42, 44, now 46) has room for the network's
            // inputs in its 64-input mixer (doc/FORMAT.md 4.16); archives
            // of the earlier `ultra` (revision 2 with the network) decode
            // as before.
            Preset::Ultra => {
                let max = MixConfig::preset(Preset::Max)?;
                Some(MixConfig {
                    serial: Some(ULTRA_LSTM),
                    ..max
                })
            }
            Preset::Hybrid => Some(MixConfig {
                cm: full_cm(26),
                neural: Some(NeuralConfig::preset(Preset::Hybrid)),
                serial: None,
            }),
            _ => None,
        }
    }

    /// Streams a block of `n` bytes is cut into.
    pub(crate) fn stream_count(&self, n: usize) -> usize {
        self.neural
            .as_ref()
            .map_or(1, |c| crate::engine::stream_count(c, n))
    }

    /// `(streams, context)` for the header.
    pub(crate) fn header_fields(&self) -> (u32, u16) {
        self.neural
            .as_ref()
            .map_or((1, 0), |c| (c.streams, c.context() as u16))
    }

    /// Bytes of model memory for a block of `block_len` bytes.
    pub fn memory_bytes(&self, block_len: u64) -> u64 {
        let (t, m) = self.cm.effective_bits(block_len as usize);
        CmConfig {
            table_bits: t,
            match_bits: m,
            ..self.cm
        }
        .memory_bytes()
            + self.neural.as_ref().map_or(0, |c| {
                c.memory_bytes(crate::engine::stream_count(c, block_len as usize))
            })
            + self.serial.as_ref().map_or(0, LstmConfig::memory_bytes)
    }

    /// One line for listings.
    pub fn describe(&self) -> String {
        match (&self.neural, &self.serial) {
            (Some(n), _) => format!("mix: {} + {}", self.cm.describe(), n.describe()),
            (None, Some(s)) => format!("mix: {} + {}", self.cm.describe(), s.describe()),
            (None, None) => format!("mix: {}", self.cm.describe()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params;

    #[test]
    fn params_round_trip_and_validate() {
        let with = MixConfig {
            cm: full_cm(22),
            neural: Some(NeuralConfig::preset(Preset::Fast)),
            serial: None,
        };
        let (b, l) = with.header_fields();
        assert_eq!(
            params::read_mix(&params::write_mix(&with), b, l),
            Ok(with.clone())
        );
        let without = MixConfig {
            cm: full_cm(20),
            neural: None,
            serial: None,
        };
        assert_eq!(
            params::read_mix(&params::write_mix(&without), 1, 0),
            Ok(without.clone())
        );
        assert!(params::read_mix(&params::write_mix(&without), 2, 0).is_err());
        let mut bad = params::write_mix(&without);
        bad[0] = 2;
        assert!(params::read_mix(&bad, 1, 0).is_err());
        let mut bad = params::write_mix(&without);
        bad[4 + 7] = 40; // table_bits
        assert!(
            params::read_mix(&bad, 1, 0)
                .unwrap_err()
                .to_string()
                .contains("table_bits")
        );
        assert!(params::read_mix(&params::write_mix(&with)[..30], b, l).is_err());
    }

    #[test]
    fn serial_network_travels_in_flag_bit_1() {
        let u = MixConfig::preset(Preset::Ultra).expect("mix preset");
        assert_eq!(u.serial, Some(ULTRA_LSTM));
        // `max`'s contexts and CM revision; revision 4 takes no network.
        let max = MixConfig::preset(Preset::Max).expect("max").cm;
        assert_eq!(u.cm, max);
        let mut r4 = params::write_mix(&u);
        r4[1] = 4;
        assert!(
            params::read_mix(&r4, 1, 0)
                .unwrap_err()
                .to_string()
                .contains("revision 4 takes no network")
        );
        // Revisions 5 and 6 (64 mixer inputs) take the serial network.
        for r in [5, 6] {
            let mut wide = params::write_mix(&u);
            wide[1] = r;
            assert_eq!(params::read_mix(&wide, 1, 0).unwrap().cm.revision, r);
        }
        let p = params::write_mix(&u);
        assert_eq!((p[0], p.len()), (2, 24));
        assert_eq!(params::read_mix(&p, 1, 0), Ok(u.clone()));
        assert!(params::read_mix(&p, 2, 0).is_err());
        assert!(params::read_mix(&p[..20], 1, 0).is_err());
        let mut bad = p.clone();
        bad[16] = 7;
        assert!(
            params::read_mix(&bad, 1, 0)
                .unwrap_err()
                .to_string()
                .contains("kind")
        );
        let mut bad = p;
        bad[0] = 3;
        assert!(params::read_mix(&bad, 1, 0).is_err());
        assert!(u.describe().contains("lstm (64 cells"));
        let max = MixConfig::preset(Preset::Max).expect("max");
        assert!(u.memory_bytes(1 << 20) > max.memory_bytes(1 << 20));
    }

    #[test]
    fn cm_revision_travels_in_params_byte_1() {
        let r9 = MixConfig::preset(Preset::Default).expect("mix preset");
        assert_eq!(r9.cm.revision, 9);
        let max = MixConfig::preset(Preset::Max).expect("mix preset");
        assert_eq!(max.cm.revision, 46);
        let p = params::write_mix(&r9);
        assert_eq!(p[1], 9);
        assert_eq!(params::read_mix(&p, 1, 0), Ok(r9.clone()));
        for r in [
            1, 2, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
            26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46,
        ] {
            let mut older = p.clone();
            older[1] = r;
            assert_eq!(params::read_mix(&older, 1, 0).unwrap().cm.revision, r);
        }
        let mut hybrid = params::write_mix(&MixConfig::preset(Preset::Hybrid).expect("hybrid"));
        hybrid[1] = 5;
        assert!(
            params::read_mix(&hybrid, 64, 8)
                .unwrap_err()
                .to_string()
                .contains("only the serial network")
        );
        let mut bad = p.clone();
        bad[1] = 47;
        assert!(
            params::read_mix(&bad, 1, 0)
                .unwrap_err()
                .to_string()
                .contains("revision")
        );
        let mut bad = p;
        bad[2] = 1;
        assert!(params::read_mix(&bad, 1, 0).is_err());
    }

    #[test]
    fn fast_is_cm_revision_3_without_a_network() {
        let f = MixConfig::preset(Preset::Fast).expect("mix preset");
        assert_eq!(f.cm, fast_cm());
        assert_eq!(
            (f.cm.revision, f.neural.is_none(), f.serial.is_none()),
            (3, true, true)
        );
        let p = params::write_mix(&f);
        assert_eq!((p[1], p.len()), (3, 16));
        assert_eq!(params::read_mix(&p, 1, 0), Ok(f.clone()));
        assert!(f.describe().contains("cm-fast"));
        // Revision 3 takes no network and only its own fixed fields.
        let mut bad = params::write_mix(&MixConfig {
            cm: fast_cm(),
            neural: Some(NeuralConfig::preset(Preset::Fast)),
            serial: None,
        });
        let (b, l) = (NeuralConfig::preset(Preset::Fast).streams, 8);
        assert!(
            params::read_mix(&bad, b, l)
                .unwrap_err()
                .to_string()
                .contains("revision 3")
        );
        bad = p.clone();
        bad[4 + 2] = 1; // sparse
        assert!(
            params::read_mix(&bad, 1, 0)
                .unwrap_err()
                .to_string()
                .contains("revision 3")
        );
        bad = p.clone();
        bad[4 + 5] = 0; // match_min
        assert!(params::read_mix(&bad, 1, 0).is_err());
        bad = p;
        bad[1] = 47;
        assert!(params::read_mix(&bad, 1, 0).is_err());
        // Its memory estimate is its own (a 4 MiB table, a 4 MiB match table).
        let m = f.memory_bytes(1 << 24);
        assert!((8 << 20..12 << 20).contains(&m), "{m}");
    }
}
