//! The parameters of the context-mixing model (doc/FORMAT.md section 4.10):
//! which context families it uses, and its table sizes.

use crate::models::order::LONG_ORDERS;

/// Which contexts the model uses, and its table sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmConfig {
    /// Bit `k - 1` set: use the order-`k` context (`k` in 1..=7).
    pub orders: u8,
    /// Word contexts (current word; current and previous word).
    pub word: bool,
    /// Sparse contexts (bytes -2, -3, -4, and -2 with -4).
    pub sparse: bool,
    /// Record contexts (the bytes one and two records above, with the last
    /// byte), with the record length detected from the data.
    pub record: bool,
    /// Bit `i` set: use the hash of the last `LONG_ORDERS[i]` bytes
    /// (8, 12, 16, 24) as a context.
    pub long: u8,
    /// Shortest match of a second match model for long repeats; 0 turns it
    /// off.
    pub match2_min: u8,
    /// Shortest match the match model follows; 0 turns it off.
    pub match_min: u8,
    /// log2 of the bytes of the shared context table (`16..=30`).
    pub table_bits: u8,
    /// log2 of the match model's hash slots (`10..=28`).
    pub match_bits: u8,
    /// Mixer weight-set selectors, bit `k` for selector `k`: the match state,
    /// the partial byte, the previous byte, and how many contexts have been
    /// seen (with the bit position). At least one.
    pub selectors: u8,
    /// APMs, bit 0: order 1 (previous byte), bit 1: hashed order 2.
    pub apms: u8,
    /// Image contexts for blocks that start with a PNM (P5/P6) header:
    /// neighbouring pixels of the same channel.
    pub image: bool,
    /// The model's revision: 0 is the frozen v1 model; 1 adds data-type
    /// detection at the start of a block (WAV audio, PNM images, x86 ELF
    /// files, Excel BIFF streams), switching to the audio, pixel, x86 or
    /// record model set where a header says so
    /// (doc/FORMAT.md section 4.11); 2 adds the text, code and markup
    /// contexts in place of the word and image ones, one mixer selector and
    /// two APMs, and the structured-data models (float arrays found from
    /// statistics, an adaptive pixel predictor) of section 4.12; 3 is the
    /// lean model of the `fast` preset ([`FastCm`](crate::FastCm), section
    /// 4.14), which reads only `table_bits`, `match_bits` and `match_min`;
    /// 4 is revision 2 plus the models of section 4.15 (`revision >= 4`
    /// gates each of them); 5 is revision 4 plus the models of section 4.16
    /// and a main mixer of up to 64 inputs (`revision >= 5`), written by
    /// preset `default`; 6 is revision 5 plus the costlier models of section
    /// 4.17 (`revision >= 6`), written by `max`; 7 is revision 5 plus the
    /// models of section 4.18 and 8 is revision 6 plus those of sections
    /// 4.18 and 4.19; 9 is 7 plus the models of section 4.20 and 10 is 8
    /// plus those of 4.20 and 4.21; 11 is 9 plus the models of section 4.22
    /// and 12 is 10 plus those of 4.22 and 4.23; 13 is 11 plus the models
    /// of section 4.24 and 14 is 12 plus those of 4.24 and 4.25; 15 is 13 plus
    /// the models of section 4.26 and 16 is 14 plus those of 4.26 and 4.27;
    /// 17 is 15 plus the models of section 4.28 and 18 is 16 plus those of
    /// 4.28 and 4.29; 19 is 17 plus the models of section 4.30 and 20 is 18
    /// plus those of 4.30 and 4.31; 21 is 19 plus the models of section 4.32
    /// and 22 is 20 plus those of 4.32 and 4.33; 23 is 21 plus the models
    /// of section 4.34 and 24 is 22 plus those of 4.34 and 4.35; 25 is 23
    /// plus the models of section 4.36 and 26 is 24 plus those of 4.36 and 4.37; 27 is 25
    /// plus the models of section 4.38 and 28 is 26 plus those of 4.38 and 4.39; 29 is 27
    /// plus the models of section 4.40 and 30 is 28 plus those of 4.40 and 4.41; 31 is 29
    /// plus the models of section 4.42 and 32 is 30 plus those of 4.42 and 4.43;
    /// 33 is 31 plus the models of section 4.44 and 34 is 32 plus those of 4.44 and 4.45;
    /// 35 is 33 plus the models of section 4.46 and 36 is 34 plus those of 4.46 and 4.47;
    /// 37 is 35 plus the models of section 4.48 and 38 is 36 plus those of 4.48 and 4.49;
    /// 39 is 37 plus the models of section 4.50 and 40 is 38 plus those of 4.50 and 4.51;
    /// 41 is 39 plus the models of section 4.52 and 42 is 40 plus those of 4.52 and 4.53;
    /// 43 is 41 plus the models of section 4.54 and 44 is 42 plus those of 4.54 and 4.55;
    /// 45 is 43 plus the models of section 4.56 and 46 is 44 plus those of 4.56 and 4.57.
    /// From 5 on, odd revisions are the `default` line and
    /// even ones the `max` line: a model of a `max` revision is in the later
    /// `max` revisions only ([`revision_has`]). Not part of
    /// `sep::params::write_cm`:
    /// the mix parameters carry it.
    pub revision: u8,
}

/// Whether a model introduced at CM revision `introduced` is part of
/// revision `revision` (doc/FORMAT.md 4.18). Up to 5 and on the `default`
/// line (odd revisions from 5) a model stays in every later revision; a
/// model of the `max` line (even revisions from 6) stays in the later even
/// revisions only, so `default`'s revision 7 has revision 5's models and
/// not revision 6's, and `max`'s revision 8 has all of 5, 6 and 7.
pub const fn revision_has(revision: u8, introduced: u8) -> bool {
    revision >= introduced && (introduced < 6 || introduced % 2 == 1 || revision.is_multiple_of(2))
}

impl CmConfig {
    /// [`since`] for this configuration's revision.
    pub fn since(&self, introduced: u8) -> bool {
        revision_has(self.revision, introduced)
    }

    /// Bytes of memory the model allocates (one model serves all streams).
    pub fn memory_bytes(&self) -> u64 {
        if self.revision == 3 {
            return crate::fast::memory_bytes(self.table_bits, self.match_bits);
        }
        let slots = self.contexts() as u64;
        (1u64 << self.table_bits)
            + (u64::from(self.match_min > 0) + u64::from(self.match2_min > 0))
                * (4u64 << self.match_bits)
            + u64::from(self.apms.count_ones()) * 2 * 33 * 65536
            + 4 * 256 * (slots + 1)
            + 4 * 1024 * 24
            // Revision 1: the detected kind's tables (the BIFF family's
            // 4 MiB column table is the largest) and second mixer.
            + if self.revision > 0 { 6 << 20 } else { 0 }
            // Revision 2: the two APMs of `sse.rs`.
            + if self.revision >= 2 { 2 * 2 * 33 * 65536 } else { 0 }
            // Revision 4, images (4.15.2): the bi-level family's eight
            // template tables of 4 MiB and its mixer (the larger of the two
            // image families; the pixel family's tables take 2 MiB).
            + if self.revision >= 4 { 33 << 20 } else { 0 }
            // Revision 4, float arrays (4.15.3): the per-bit tables
            // (0.45 MiB) and the mixer's 4096 weight sets of its selector.
            + if self.revision >= 4 { 2 << 20 } else { 0 }
            // Revision 4, x86 (FORMAT 4.15.4): the x86 family's mixer selector,
            // 7 * 64 * 8 weight sets of up to 32 i16 weights.
            + if self.revision >= 4 { 2 * 7 * 64 * 8 * 32 } else { 0 }
            // Revision 4 audio (models/audio4.rs): covariances, cascades and
            // expected-bit tables of two channels, under 256 KiB.
            + if self.revision >= 4 { 256 << 10 } else { 0 }
            // Revision 14 audio (models/audio14.rs): OLS 64 and 16, a
            // second cascade per channel and two final APMs (186 KiB),
            // under 512 KiB more.
            + if self.since(14) { 512 << 10 } else { 0 }
            // Revision 38 audio (models/audio38.rs): three NLMS stages'
            // rings and weights of two channels and a third final APM
            // (about 200 KiB), under 256 KiB more.
            + if self.since(38) { 256 << 10 } else { 0 }
            // Revision 38 (4.49.1): the configured families' mixer's two
            // more selectors, 2 * 65,536 weight sets of 128 i16 weights.
            + if self.since(38) { 2 * 65536 * 128 * 2 } else { 0 }
            // Revision 4: the indirect family's byte histories (and its two
            // contexts' state maps, counted in `slots` above).
            + if self.revision >= 4 { crate::models::indirect::IndirectContexts::MEMORY } else { 0 }
            // Revision 4: the mixer's character-class selector, 32,768
            // weight sets of 64 bytes.
            + if self.revision >= 4 { 64 << 15 } else { 0 }
            // Revision 5, JPEG (FORMAT 4.16.4): the JPEG family's probability
            // table, mixers and coefficient rows (models/jpeg.rs).
            + if self.revision >= 5 { crate::models::jpeg::MEMORY } else { 0 }
            // Revision 7, JPEG (FORMAT 4.18.2): the revision-7 JPEG family's
            // table, mixers and APMs, on top of revision 5's (models/jpeg7.rs).
            + if self.since(7) { crate::models::jpeg7::MEMORY } else { 0 }
            // Revision 8, JPEG (FORMAT 4.19.2): that family's table doubled.
            + if self.since(8) { crate::models::jpeg7::MEMORY_MAX_LINE } else { 0 }
            // Revision 36, JPEG (FORMAT 4.47.4): the revision-36 family's
            // table, mixers and APM (models/jpeg36.rs).
            + if self.since(36) { crate::models::jpeg36::MEMORY } else { 0 }
            // Revision 9, text mixing (FORMAT 4.20.1): a u16 update count
            // per first-layer weight set of the configured families' mixer
            // (under 2^17 sets with every selector).
            + if self.since(9) { 2 << 17 } else { 0 }
            // Revision 6 text (FORMAT 4.17.1-2): the confidence inputs make
            // the mixer two blocks of 32 weights (the class selector's
            // second block, 2 MiB) and its class-and-partial-byte selector
            // has 65,536 sets of 128 bytes (8 MiB).
            + if self.since(6) { 10 << 20 } else { 0 }
            // Revision 5, 68000 code (4.16.3): the last extension word of
            // each opcode word (128 KiB) and the mixer selector's 2,048
            // weight sets of up to 64 i16 weights.
            + if self.revision >= 5 { (2 << 16) + 2048 * 64 * 2 } else { 0 }
            // Revision 6, x86 code (4.17.3): the last operand of each
            // instruction form, 2^14 u32.
            + if self.since(6) { 4 << 14 } else { 0 }
            // Revision 8, 24/32-bit images (4.19.3): the image family's
            // tables, APM, mixer, OLS and residual ring (models/image7.rs).
            + if self.since(8) { crate::models::image7::MEMORY } else { 0 }
            // Revision 10, images (4.21.3): the larger of the 24/32-bit
            // family's second mixer, APMs and input tables
            // (models/image10.rs) and the bi-level family's new tables,
            // mixer and APM (models/bilevel10.rs): one kind per block.
            + if self.since(10) { crate::models::image10::MEMORY.max(crate::models::bilevel10::MEMORY) } else { 0 }
            // Revision 14, 24/32-bit images (4.25.1): the two final APMs
            // and the last mixer (models/image14.rs).
            + if self.since(14) { crate::models::image14::MEMORY } else { 0 }
            // Revision 16 text (4.27.1): the direct tables
            // (models/text16.rs).
            + if self.since(16) && self.word { crate::models::text16::memory(self) } else { 0 }
            + if self.since(20) && self.word { crate::models::text20::memory(self) } else { 0 }
            + if self.since(22) && self.word { crate::models::text22::memory(self) } else { 0 }
            // Revision 30 (doc/FORMAT.md 4.41.1): the text family's region
            // selector's and final layer's weight sets.
            + if self.since(30) && self.word { crate::models::text30::MEMORY } else { 0 }
            // Revision 32 (doc/FORMAT.md 4.43.1): the word-prediction family's follower tables, direct input and APM.
            + if self.since(32) && self.word { crate::models::text32::memory(self) } else { 0 }
            // Revision 44 (doc/FORMAT.md 4.55.2): the word-follower family's tables.
            + if self.since(44) && self.word { crate::models::wiki44::memory(self) } else { 0 }
            // Revision 46 (doc/FORMAT.md 4.57.2): the short-match family's tables.
            + if self.since(46) && self.word { crate::models::small46::memory(self) } else { 0 }
            // Revision 16, 24/32-bit images (4.27.2): the blend's error ring, input tables, bias table and APM (models/image16.rs).
            + if self.since(16) { crate::models::image16::MEMORY } else { 0 }
            // Revision 18, 24/32-bit images (4.29.2): the OLS systems, residual ring, APM and second selector's weight sets (models/image18.rs).
            + if self.since(18) { crate::models::image18::MEMORY } else { 0 }
            // Revision 22, 24/32-bit images (4.33.2): the further selectors' weight sets and the distance APM (models/image22.rs).
            + if self.since(22) { crate::models::image22::MEMORY } else { 0 }
            // Revision 32, 24/32-bit images (4.43.4): the predictors' maps and the family's mixer (models/image32.rs).
            + if self.since(32) { crate::models::image32::MEMORY } else { 0 }
            // Revision 40, 24/32-bit images (4.51.3): the ranked predictors' error ring and APMs (models/image40.rs).
            + if self.since(40) && !self.since(42) { crate::models::image40::MEMORY } else { 0 }
            // Revision 42, 24/32-bit images (4.53.3): revision 40's family trimmed to two maps and two APMs (models/image42.rs).
            + if self.since(42) { crate::models::image42::MEMORY } else { 0 }
            // Revision 44, 24/32-bit images (4.55.1): the difference-plane maps (models/image44.rs).
            + if self.since(44) { crate::models::image44::MEMORY } else { 0 }
            // Revision 7, spreadsheets (4.18.4): the cell family's per-bit
            // tables (models/biff7.rs).
            + if self.since(7) { crate::models::biff7::MEMORY } else { 0 }
            // Revision 12, spreadsheets (4.23.5): the partner columns'
            // prediction table, pair scores and row (models/biff12.rs).
            + if self.since(12) { crate::models::biff12::MEMORY } else { 0 }
            // Revision 32, spreadsheets (4.43.3): the column histograms
            // (models/biff32.rs).
            + if self.since(32) { crate::models::biff32::MEMORY } else { 0 }
            // Revision 7, bi-level images (4.18.4): the new templates' slow
            // and fast tables, the family's mixer and APM (models/bilevel7.rs).
            + if self.since(7) { crate::models::bilevel7::MEMORY } else { 0 }
            // Revision 7 and 8, words (FORMAT 4.18.7, 4.19.7): the word
            // family's successor table and, at revision 8, its run table
            // (its contexts' state maps are counted in `slots` above).
            + if self.since(7) { crate::models::words8::Words8Contexts::memory(self.since(8)) } else { 0 }
            // Revisions 7 and 8, x86 and 68000 code (4.18.5): the larger of
            // the two families' tables and selectors (one kind per block).
            + if self.since(7) { crate::models::x86_7::MEMORY.max(crate::models::m68k7::MEMORY) } else { 0 }
            // Revision 10, x86 code (4.21.5, exe10): the x86 family's own
            // tables.
            + if self.since(10) { crate::models::x86_10::MEMORY } else { 0 }
            // Revision 14, x86 code (4.25.2, exe14): the second x86 family.
            + if self.since(14) { crate::models::x86_14::MEMORY } else { 0 }
            // Revision 16, x86 code (4.27.3, exe16): the third x86 family.
            + if self.since(16) { crate::models::x86_16::MEMORY } else { 0 }
            // Revision 30, x86 code (4.41.2): the fourth x86 family.
            + if self.since(30) { crate::models::x86_30::MEMORY } else { 0 }
            // Revision 32, x86 code (4.43.2): the fifth x86 family.
            + if self.since(32) { crate::models::x86_32::MEMORY } else { 0 }
            // Revision 42, x86 code (4.53.4): the expected-byte inputs.
            + if self.since(42) { crate::models::x86_42::MEMORY } else { 0 }
            // Revision 12, 68000 code (4.23.4, exe12): the 68000 family's
            // displacement and opcode histories.
            + if self.since(12) { crate::models::m68k12::MEMORY } else { 0 }
            // Revision 34, 68000 code (4.45.3): the branch and call targets.
            + if self.since(34) { crate::models::m68k34::MEMORY } else { 0 }
            // Revision 46, 68000 code (4.57.3): the expected-byte inputs.
            + if self.since(46) { crate::models::m68k46::MEMORY } else { 0 }
            // Revision 7 float arrays (4.18.6, models/float7.rs): the
            // candidates' expected-bit table (1.5 MiB) and the two
            // vocabularies' tables (0.5 MiB each) and records.
            + if self.since(7) { 3 << 20 } else { 0 }
            // Revision 7 text (FORMAT 4.18.1): the final layer's 256 weight
            // sets of up to 12 i16.
            + if self.since(7) { 256 * 12 * 2 } else { 0 }
            // Revision 8 text (FORMAT 4.19.1): the final APM stage (52 MiB),
            // the run map (16 MiB) and the longest-order selector's 2,304
            // weight sets of up to 128 i16 weights.
            + if self.since(8) {
                crate::sse::FinalSse::memory(super::FINAL_APM_BITS)
                    + crate::runs::RunMap::memory(super::RUN_BITS)
                    + 9 * 256 * 128 * 2
            } else {
                0
            }
            // Revision 9, skip (FORMAT 4.20.6): the shortcut's direct table
            // and APM (skip.rs).
            + if self.since(9) { crate::skip::MEMORY } else { 0 }
            // Revision 10 records and floats (4.21.4): the record-match
            // and IBM float families' tables (models/float10.rs, ibm10.rs).
            + if self.since(10) { crate::models::float10::MEMORY + crate::models::ibm10::MEMORY } else { 0 }
            // Revision 18 floats (4.29.3, models/float18.rs).
            + if self.since(18) { crate::models::float18::MEMORY } else { 0 }
            // Revision 24 floats (4.35.3, models/float24.rs).
            + if self.since(24) { crate::models::float24::MEMORY } else { 0 }
            // Revision 26 floats (4.37.1, models/float26.rs).
            + if self.since(26) { crate::models::float26::MEMORY } else { 0 }
            // Revision 44 floats (4.55.4, models/float44.rs).
            + if self.since(44) { crate::models::float44::MEMORY } else { 0 }
            // Revision 12, bi-level images (4.23.6): the new templates'
            // tables and states, the third mixer, the APMs and the final
            // stage's mixer (models/bilevel12.rs).
            + if self.since(12) { crate::models::bilevel12::MEMORY } else { 0 }
            // Revision 12 detected kinds (FORMAT 4.23.1): the kind's final
            // APM stage (cm/kindmix.rs).
            + if self.since(12) { super::kindmix::MEMORY } else { 0 }
            // Revision 34 (FORMAT 4.45.1): the second final layer and the stage mix.
            + if self.since(34) { super::mix34::MEMORY } else { 0 }
            // Revision 36 (FORMAT 4.47.2): a detected kind's second final
            // layer and stage mix (cm/kindmix36.rs).
            + if self.since(36) { super::kindmix36::MEMORY } else { 0 }
            // Revision 36 (FORMAT 4.47.1): a detected image's second layer and APMs.
            + if self.since(36) { super::imgmix36::MEMORY } else { 0 }
            // Revision 28 (FORMAT 4.39.2): the word-position selectors'
            // weight sets (cm/mix28.rs).
            + if self.since(28) { super::mix28::MEMORY } else { 0 }
    }

    /// `(table_bits, match_bits)` used for a block of `block_len` bytes: the
    /// configured sizes, capped at what the block can use (a context table
    /// of `2^(log2(len) + 9)` bytes, a match table of `2^(log2(len) + 1)`
    /// slots; at least 2^16 and 2^10). Small inputs then touch, and pay for,
    /// little memory.
    pub fn effective_bits(&self, block_len: usize) -> (u8, u8) {
        let log = (usize::BITS - block_len.max(1).leading_zeros()) as u8;
        (
            self.table_bits.min((log + 9).max(16)),
            self.match_bits.min((log + 1).max(10)),
        )
    }

    /// Checks the limits of doc/FORMAT.md.
    pub fn validate(&self) -> Result<(), String> {
        if self.orders & 0x80 != 0 {
            return Err("order bit 7 (order 8) is reserved".into());
        }
        if !(16..=30).contains(&self.table_bits) {
            return Err(format!("table_bits {} outside 16..=30", self.table_bits));
        }
        if !(10..=28).contains(&self.match_bits) {
            return Err(format!("match_bits {} outside 10..=28", self.match_bits));
        }
        if self.match_min > 64 || self.match2_min > 64 {
            return Err(format!(
                "match lengths {} / {} above 64",
                self.match_min, self.match2_min
            ));
        }
        if self.long & 0xF0 != 0 {
            return Err("long-context bits 4..7 are reserved".into());
        }
        if self.selectors == 0 || self.selectors & 0xF0 != 0 {
            return Err(format!(
                "selectors {:#x}: at least one of bits 0..3, no other",
                self.selectors
            ));
        }
        if self.revision > 46 {
            return Err(format!("CM revision {} unknown (0 to 46)", self.revision));
        }
        if self.revision == 3 {
            if self.match_min == 0 {
                return Err("CM revision 3 needs a match model (match_min 1..=64)".into());
            }
            if !crate::fast::fixed_fields_match(self) {
                return Err(
                    "CM revision 3 takes only table_bits, match_bits and match_min; \
                     its other fields are fixed (doc/FORMAT.md section 4.14)"
                        .into(),
                );
            }
        }
        if self.apms & 0xFC != 0 {
            return Err(format!("apms {:#x}: only bits 0 and 1", self.apms));
        }
        Ok(())
    }

    /// One line for listings.
    pub fn describe(&self) -> String {
        let orders: Vec<String> = (1..=7)
            .filter(|k| self.orders & (1 << (k - 1)) != 0)
            .map(|k| k.to_string())
            .collect();
        let long: Vec<String> = (0..4)
            .filter(|i| self.long & (1 << i) != 0)
            .map(|i| LONG_ORDERS[i].to_string())
            .collect();
        format!(
            "cm{} (orders {}{}{}{}{}; match {}{}; table 2^{}, match table 2^{})",
            match self.revision {
                0 => String::new(),
                1 | 2 => "2".into(),
                3 => "-fast".into(),
                r => r.to_string(),
            },
            if orders.is_empty() {
                "none".into()
            } else {
                orders.join(",")
            },
            if long.is_empty() {
                String::new()
            } else {
                format!(",{}", long.join(","))
            },
            if self.word { ", word" } else { "" },
            if self.sparse { ", sparse" } else { "" },
            if self.record { ", record" } else { "" },
            self.match_min,
            if self.match2_min > 0 {
                format!("+{}", self.match2_min)
            } else {
                String::new()
            },
            self.table_bits,
            self.match_bits
        )
    }

    /// How many hashed contexts the configuration selects (the sum over
    /// its families, see `cm/mod.rs`).
    pub(crate) fn contexts(&self) -> usize {
        super::families(self).iter().map(|f| f.contexts()).sum()
    }
}
