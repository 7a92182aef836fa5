//! The context-mixing model: many context models, a match model and
//! (optionally) a neural prediction, mixed per bit.
//!
//! For every byte the model hashes a set of contexts (orders 1 to 7, the
//! current and previous word, sparse byte pairs, the byte one record above),
//! finds each context's nibble bucket in a shared [`NibbleTable`], and for
//! each bit turns every context's bit history into a probability with an
//! adaptive map per context kind. Those, the match model's prediction, an
//! order-0 prediction, the neural network's probability of the bit (when a
//! 256-way distribution is given) and a bias are mixed by a [`Mixer2`] whose
//! weight sets are chosen by the match state, the partial byte, the previous
//! byte and how many contexts have been seen before; two APMs refine the mix.
//!
//! All arithmetic is integer: encoder and decoder agree on every machine.
//!
//! Several streams may share one model (the neural engine codes its streams
//! side by side): statistics are shared, each stream keeps its own history
//! ([`CmStream`]) and the match model reads only bytes the decoder already has
//! ([`Visibility`]).

use crate::hashtable::NibbleTable;
use crate::logistic::stretch;
use crate::matcher::{MatchModel, MatchState, Visibility};
use crate::mixer2::Mixer2;
use crate::prim::{AdaptiveProbs, Apm, StateMap};
use crate::state::STATES;
use sep_coder::{Coder, FreqTable};

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
}

impl CmConfig {
    /// Bytes of memory the model allocates (one model serves all streams).
    pub fn memory_bytes(&self) -> u64 {
        let slots = self.slots().len() as u64;
        (1u64 << self.table_bits)
            + (u64::from(self.match_min > 0) + u64::from(self.match2_min > 0))
                * (4u64 << self.match_bits)
            + u64::from(self.apms.count_ones()) * 2 * 33 * 65536
            + 4 * 256 * (slots + 1)
            + 4 * 1024 * 24
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
        if self.apms & 0xFC != 0 {
            return Err(format!("apms {:#x}: only bits 0 and 1", self.apms));
        }
        Ok(())
    }

    /// Serialised form (12 bytes): `orders, word, sparse, record, long,
    /// match_min, match2_min, table_bits, match_bits, selectors, apms,
    /// image`.
    pub fn to_bytes(&self) -> Vec<u8> {
        vec![
            self.orders,
            u8::from(self.word),
            u8::from(self.sparse),
            u8::from(self.record),
            self.long,
            self.match_min,
            self.match2_min,
            self.table_bits,
            self.match_bits,
            self.selectors,
            self.apms,
            u8::from(self.image),
        ]
    }

    /// Parses and validates [`to_bytes`](Self::to_bytes)'s form.
    pub fn from_bytes(b: &[u8]) -> Result<Self, String> {
        let [
            orders,
            word,
            sparse,
            record,
            long,
            match_min,
            match2_min,
            table_bits,
            match_bits,
            selectors,
            apms,
            image,
        ] = b
        else {
            return Err(format!("CM parameters are {} bytes, expected 12", b.len()));
        };
        let flag = |v: u8, name: &str| match v {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(format!("CM flag {name} is {v}, must be 0 or 1")),
        };
        let c = CmConfig {
            orders: *orders,
            word: flag(*word, "word")?,
            sparse: flag(*sparse, "sparse")?,
            record: flag(*record, "record")?,
            long: *long,
            match_min: *match_min,
            match2_min: *match2_min,
            table_bits: *table_bits,
            match_bits: *match_bits,
            selectors: *selectors,
            apms: *apms,
            image: flag(*image, "image")?,
        };
        c.validate()?;
        Ok(c)
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
            "cm (orders {}{}{}{}{}; match {}{}; table 2^{}, match table 2^{})",
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

    fn slots(&self) -> Vec<Slot> {
        let mut v = Vec::new();
        for k in 1..=7u8 {
            if self.orders & (1 << (k - 1)) != 0 {
                v.push(Slot::Order(k));
            }
        }
        for i in 0..4u8 {
            if self.long & (1 << i) != 0 {
                v.push(Slot::Long(i));
            }
        }
        if self.word {
            v.push(Slot::Word);
            v.push(Slot::Words);
            v.push(Slot::Column);
        }
        if self.image {
            for i in 0..6 {
                v.push(Slot::Image(i));
            }
        }
        if self.sparse {
            for i in 0..4 {
                v.push(Slot::Sparse(i));
            }
        }
        if self.record {
            for i in 0..4 {
                v.push(Slot::Record(i));
            }
        }
        v
    }
}

/// Context lengths of the `long` contexts.
pub const LONG_ORDERS: [usize; 4] = [8, 12, 16, 24];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Order(u8),
    Long(u8),
    Word,
    Words,
    /// Bytes since the last newline, with the last byte.
    Column,
    /// Image contexts (doc/FORMAT.md 4.10).
    Image(u8),
    Sparse(u8),
    Record(u8),
}

/// One stream's history.
#[derive(Debug, Clone)]
pub struct CmStream {
    start: usize,
    /// The last four bytes (last byte lowest) and the four before them.
    c4: u32,
    c8: u32,
    word: u32,
    word_prev: u32,
    word_prev2: u32,
    /// Bytes since the last newline.
    col: u32,
    matcher: MatchState,
    matcher2: MatchState,
    /// Record-length detection: last position of each byte value and the
    /// distance to the one before.
    last_pos: Vec<u32>,
    last_dist: Vec<u32>,
    r_cand: u32,
    r_count: u32,
    r_len: u32,
    /// Bytes in a row equal to the byte one and two records back.
    r_run: [u32; 2],
}

impl CmStream {
    /// The history of a stream whose first byte is at `start` in the block.
    pub fn new(start: usize) -> Self {
        CmStream {
            start,
            c4: 0,
            c8: 0,
            word: 0,
            word_prev: 0,
            word_prev2: 0,
            col: 0,
            matcher: MatchState::default(),
            matcher2: MatchState::default(),
            last_pos: vec![0; 256],
            last_dist: vec![0; 256],
            r_cand: 0,
            r_count: 0,
            r_len: 0,
            r_run: [0; 2],
        }
    }

    /// The detected record length (0: none).
    pub fn record_len(&self) -> u32 {
        self.r_len
    }

    fn observe(&mut self, byte: u8, pos: usize) {
        self.c8 = (self.c8 << 8) | (self.c4 >> 24);
        self.c4 = (self.c4 << 8) | u32::from(byte);
        let is_letter = byte.is_ascii_alphabetic() || byte >= 0x80;
        if is_letter {
            self.word = (self.word ^ u32::from(byte.to_ascii_lowercase()))
                .wrapping_mul(0x2C9F_3C51)
                .wrapping_add(1);
        } else if self.word != 0 {
            self.word_prev2 = self.word_prev;
            self.word_prev = self.word;
            self.word = 0;
        }
        self.col = if byte == b'\n' { 0 } else { self.col + 1 };
        // A distance seen twice in a row for the same byte value votes for a
        // record length; a steady vote wins.
        let rel = (pos - self.start + 1) as u32;
        let b = usize::from(byte);
        if self.last_pos[b] != 0 {
            let d = rel - self.last_pos[b];
            if d == self.last_dist[b] && d > 1 {
                if d == self.r_cand {
                    self.r_count += 1;
                    if self.r_count >= 8 {
                        self.r_len = d;
                    }
                } else if self.r_count > 0 {
                    self.r_count -= 1;
                } else {
                    self.r_cand = d;
                }
            }
            self.last_dist[b] = d;
        }
        self.last_pos[b] = rel;
    }
}

/// The layout of a PNM image at the start of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ImageInfo {
    /// Block position of the first sample.
    start: usize,
    /// Bytes per pixel (channels x bytes per sample).
    pixel_bytes: usize,
    /// Bytes per row.
    row_bytes: usize,
}

impl ImageInfo {
    /// Recognises a complete binary PNM header (`P5` grey or `P6` RGB:
    /// magic, width, height, maxval, each after whitespace or comments,
    /// then one whitespace byte) that is exactly `h`.
    fn parse_pnm(h: &[u8]) -> Option<ImageInfo> {
        let channels = match h.get(..2)? {
            b"P5" => 1,
            b"P6" => 3,
            _ => return None,
        };
        let mut i = 2;
        let mut fields = [0usize; 3];
        for f in &mut fields {
            loop {
                match h.get(i)? {
                    b' ' | b'\t' | b'\r' | b'\n' => i += 1,
                    b'#' => {
                        while *h.get(i)? != b'\n' {
                            i += 1;
                        }
                    }
                    _ => break,
                }
            }
            let digits = h[i..].iter().take_while(|b| b.is_ascii_digit()).count();
            if digits == 0 || digits > 6 {
                return None;
            }
            *f = std::str::from_utf8(&h[i..i + digits]).ok()?.parse().ok()?;
            i += digits;
        }
        // The header ends with exactly one whitespace byte after maxval.
        if h.len() != i + 1 || !h[i].is_ascii_whitespace() {
            return None;
        }
        let [width, height, maxval] = fields;
        if width == 0 || height == 0 || maxval == 0 || maxval > 65535 {
            return None;
        }
        let pixel_bytes = channels * if maxval > 255 { 2 } else { 1 };
        Some(ImageInfo {
            start: h.len(),
            pixel_bytes,
            row_bytes: width * pixel_bytes,
        })
    }
}

#[inline]
fn hash2(a: u32, b: u32) -> u32 {
    let h = a.wrapping_mul(0x9E37_79B1) ^ b.wrapping_mul(0x85EB_CA77).rotate_left(15);
    (h ^ (h >> 15)).wrapping_mul(0xC2B2_AE3D) ^ (h >> 13)
}

/// The context-mixing model: shared statistics for any number of streams.
#[derive(Debug, Clone)]
pub struct Cm {
    slots: Vec<Slot>,
    table: NibbleTable,
    maps: Vec<StateMap>,
    order0: AdaptiveProbs,
    matcher: Option<MatchModel>,
    matcher2: Option<MatchModel>,
    neural_input: bool,
    mixer: Mixer2,
    apm1: Apm,
    apm2: Apm,
    selectors: u8,
    apms: u8,
    image_cfg: bool,
    header: Vec<u8>,
    image: Option<ImageInfo>,
    hashes: Vec<u32>,
    buckets: Vec<usize>,
    nodes: Vec<usize>,
    states: Vec<u8>,
}

impl Cm {
    /// A fresh model for a block of `block_len` bytes; `neural_input`
    /// reserves a mixer input for a neural network's distribution (then every
    /// byte must come with one).
    ///
    /// Tables are the configured size, or smaller when the block cannot fill
    /// them: see [`CmConfig::effective_bits`].
    pub fn new(config: &CmConfig, neural_input: bool, block_len: usize) -> Self {
        config.validate().expect("valid CM configuration");
        let (table_bits, match_bits) = config.effective_bits(block_len);
        let slots = config.slots();
        let n = slots.len()
            + 2
            + usize::from(config.match_min > 0)
            + usize::from(config.match2_min > 0)
            + usize::from(neural_input);
        let sizes = [1 + 2 * 32, 256, 256, (slots.len() + 1) * 8];
        let chosen: Vec<usize> = (0..4)
            .filter(|k| config.selectors & (1 << k) != 0)
            .map(|k| sizes[k])
            .collect();
        let mixer = Mixer2::new(n, &chosen, 8, 6, 2);
        Cm {
            maps: (0..slots.len()).map(|_| StateMap::default()).collect(),
            states: vec![0; slots.len()],
            hashes: vec![0; slots.len()],
            buckets: vec![0; slots.len()],
            nodes: vec![0; slots.len()],
            slots,
            table: NibbleTable::new(table_bits),
            order0: AdaptiveProbs::new(256, 255),
            matcher: (config.match_min > 0)
                .then(|| MatchModel::new(match_bits, config.match_min.into())),
            matcher2: (config.match2_min > 0)
                .then(|| MatchModel::new(match_bits, config.match2_min.into())),
            neural_input,
            mixer,
            apm1: Apm::new(if config.apms & 1 != 0 { 1 << 16 } else { 0 }, 7),
            apm2: Apm::new(if config.apms & 2 != 0 { 1 << 16 } else { 0 }, 7),
            selectors: config.selectors,
            apms: config.apms,
            image_cfg: config.image,
            header: Vec::with_capacity(96),
            image: None,
        }
    }

    fn context_hashes<V: Visibility>(&mut self, st: &CmStream, data: &[u8], pos: usize, vis: &V) {
        let (c4, c8) = (st.c4, st.c8);
        for (i, slot) in self.slots.iter().enumerate() {
            let h = match *slot {
                Slot::Order(k) => {
                    let lo = if k >= 4 {
                        c4
                    } else {
                        c4 & ((1u32 << (8 * k)) - 1)
                    };
                    let hi = if k > 4 {
                        c8 & ((1u32 << (8 * (k - 4))) - 1)
                    } else {
                        0
                    };
                    hash2(hash2(lo, u32::from(k)), hi)
                }
                Slot::Long(j) => {
                    let k = LONG_ORDERS[usize::from(j)];
                    let from = pos.saturating_sub(k).max(st.start);
                    let mut h = 0x500 + u32::from(j);
                    for &b in &data[from..pos] {
                        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
                    }
                    hash2(h, k as u32)
                }
                Slot::Word => hash2(st.word, 0x100 + (c4 & 0xFF)),
                Slot::Words => hash2(hash2(st.word, st.word_prev), 0x200),
                Slot::Column => hash2(st.col.min(60), 0x600 + (c4 & 0xFF)),
                Slot::Image(j) => self.image_context(j, data, pos, vis, c4),
                Slot::Sparse(j) => {
                    let v = match j {
                        0 => c4 & 0xFF00,
                        1 => c4 & 0xFF_0000,
                        2 => c4 & 0xFF00_0000,
                        _ => c4 & 0xFF00_FF00,
                    };
                    hash2(v, 0x300 + u32::from(j))
                }
                Slot::Record(j) => {
                    let r = st.r_len as usize;
                    let at = |back: usize| -> u32 {
                        if r > 0 && pos >= st.start + back {
                            u32::from(data[pos - back])
                        } else {
                            0x100
                        }
                    };
                    // How long the data has repeated the record(s) above:
                    // a record that began as a copy tends to stay one.
                    let run = |k: usize| st.r_run[k].min(12);
                    let v = match j {
                        0 => hash2(at(r), (r as u32) << 9 | run(0) << 4),
                        1 => hash2(hash2(at(r), at(2 * r)), r as u32 | run(1) << 24),
                        2 => hash2(hash2(at(r), c4 & 0xFF), (r as u32) | 1 << 31),
                        _ => {
                            // The current record's bytes so far, with the
                            // column: records that start alike end alike.
                            let col = if r > 0 { (pos - st.start) % r } else { 0 };
                            let mut h = hash2(col as u32, r as u32 | 1 << 30);
                            if r > 0 && r <= 64 {
                                for &b in &data[pos - col..pos] {
                                    h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
                                }
                            }
                            h
                        }
                    };
                    hash2(v, 0x400 + u32::from(j))
                }
            };
            self.hashes[i] = h;
        }
    }

    /// Image context `j` for the byte at `pos`: neighbouring samples of the
    /// same channel (W, N, NW, NE, WW), 0 where unknown. Before a PNM header
    /// is recognised, every image context is the same constant.
    fn image_context<V: Visibility>(
        &self,
        j: u8,
        data: &[u8],
        pos: usize,
        vis: &V,
        c4: u32,
    ) -> u32 {
        let Some(img) = self.image.filter(|img| pos >= img.start) else {
            return hash2(0x700 + u32::from(j), 0);
        };
        let (pb, rw) = (img.pixel_bytes, img.row_bytes);
        let at = |back: usize| -> u32 {
            match pos.checked_sub(back) {
                Some(p) if p >= img.start && vis.known(p) => u32::from(data[p]),
                _ => 0,
            }
        };
        let col = ((pos - img.start) % pb) as u32;
        let (w, n, ne) = (at(pb), at(rw), at(rw.saturating_sub(pb)));
        let v = match j {
            0 => hash2(w, n << 8),
            1 => (w + n).saturating_sub(at(rw + pb)).min(255),
            2 => hash2(n, ne << 8),
            3 => hash2(w, (c4 & 0xFF) << 8),
            4 => hash2(w.div_ceil(2) + n / 2, (n + ne).div_ceil(2) << 8),
            _ => hash2(hash2(w, at(2 * pb)), (n >> 2) << 16),
        };
        hash2(hash2(v, col), 0x700 + u32::from(j))
    }

    /// Remembers the first bytes of the block, in order, and recognises a
    /// PNM header once it is complete.
    fn observe_header(&mut self, pos: usize, byte: u8) {
        if self.image_cfg && self.image.is_none() && pos == self.header.len() && pos < 96 {
            self.header.push(byte);
            self.image = ImageInfo::parse_pnm(&self.header);
        }
    }

    /// Loads every context's cache line at once: the misses overlap instead
    /// of queueing behind each lookup's compare and branch.
    #[inline]
    fn touch_all(&self, nibble: Option<u32>) {
        let mut acc = 0u8;
        for &h in &self.hashes {
            acc ^= self.table.touch(nibble.map_or(h, |c0| hash2(h, c0)));
        }
        std::hint::black_box(acc);
    }

    /// Codes (or decodes) the byte at `pos` of the stream with history `st`,
    /// writes it to `data[pos]` and returns it. `neural` is the network's
    /// distribution for this byte (required iff the model was built with a
    /// neural input).
    pub fn code_byte<C: Coder, V: Visibility>(
        &mut self,
        coder: &mut C,
        st: &mut CmStream,
        data: &mut [u8],
        pos: usize,
        vis: &V,
        neural: Option<&FreqTable>,
    ) -> u8 {
        debug_assert_eq!(neural.is_some(), self.neural_input, "neural input mismatch");
        self.context_hashes(st, data, pos, vis);
        self.touch_all(None);
        for (b, &h) in self.buckets.iter_mut().zip(&self.hashes) {
            *b = self.table.bucket(h);
        }
        if let Some(m) = self.matcher.as_mut() {
            m.begin_byte(&mut st.matcher, data, st.start, pos, vis);
        }
        if let Some(m) = self.matcher2.as_mut() {
            m.begin_byte(&mut st.matcher2, data, st.start, pos, vis);
        }
        let byte = u32::from(data[pos]);
        let c1 = st.c4 & 0xFF;
        let c2 = (st.c4 >> 8) & 0xFF;
        let h2 = (hash2(c1, c2 | 0x1_0000) >> 24) as usize;
        let mut c0 = 1u32;
        let mut nib = 1usize;
        let n_slots = self.slots.len();
        for i in (0..8).rev() {
            if i == 3 {
                self.touch_all(Some(c0));
                for (b, &h) in self.buckets.iter_mut().zip(&self.hashes) {
                    *b = self.table.bucket(hash2(h, c0));
                }
                nib = 1;
            }
            let mut hits = 0;
            let lane = self.mixer.lane();
            for ((((x, map), &b), node), state) in lane
                .iter_mut()
                .zip(&self.maps)
                .zip(&self.buckets)
                .zip(self.nodes.iter_mut())
                .zip(self.states.iter_mut())
            {
                *node = b + nib - 1;
                let s = self.table.state(*node);
                *state = s;
                hits += usize::from(s != 0);
                *x = map.stretched(s) as i16;
            }
            let mut input = n_slots;
            self.mixer.set(input, stretch(self.order0.p(c0 as usize)));
            input += 1;
            let mut match_sel = 0;
            for (m, ms) in [
                (self.matcher.as_ref(), &mut st.matcher),
                (self.matcher2.as_ref(), &mut st.matcher2),
            ] {
                if let Some(m) = m {
                    let x = m.input(ms, c0, i);
                    self.mixer.set(input, x);
                    input += 1;
                    if x != 0 && match_sel == 0 {
                        match_sel = 1 + (ms.len().min(31) << 1) + usize::from(x > 0);
                    }
                }
            }
            if let Some(table) = neural {
                self.mixer.set(input, neural_input(table, c0, i));
                input += 1;
            }
            self.mixer.set(input, 256);
            let contexts = [match_sel, c0 as usize, c1 as usize, hits * 8 + i as usize];
            let mut k = 0;
            for (j, &ctx) in contexts.iter().enumerate() {
                if self.selectors & (1 << j) != 0 {
                    self.mixer.select(k, ctx);
                    k += 1;
                }
            }
            self.mixer.select_final(i as usize);
            let d = self.mixer.mix();
            let pm = self.mixer.last();
            let p = match self.apms {
                0 => pm,
                1 => (pm + 3 * self.apm1.refine_stretched(d, (c0 | c1 << 8) as usize) + 2) >> 2,
                2 => (pm + 3 * self.apm2.refine_stretched(d, c0 as usize | h2 << 8) + 2) >> 2,
                _ => {
                    let a1 = self.apm1.refine_stretched(d, (c0 | c1 << 8) as usize);
                    let a2 = self.apm2.refine_stretched(d, c0 as usize | h2 << 8);
                    (2 * pm + 3 * a1 + 3 * a2 + 4) >> 3
                }
            }
            .clamp(1, 65535);

            let bit = coder.code_bit((byte >> i) & 1, p);

            for ((map, &node), &s) in self.maps.iter_mut().zip(&self.nodes).zip(&self.states) {
                map.update(s, bit, 1023);
                self.table.set(node, STATES.next(s, bit));
            }
            self.order0.update(c0 as usize, bit);
            if let Some(m) = self.matcher.as_mut() {
                m.update(&mut st.matcher, bit);
            }
            if let Some(m) = self.matcher2.as_mut() {
                m.update(&mut st.matcher2, bit);
            }
            self.mixer.update(bit);
            if self.apms & 1 != 0 {
                self.apm1.update(bit);
            }
            if self.apms & 2 != 0 {
                self.apm2.update(bit);
            }
            c0 = (c0 << 1) | bit;
            nib = (nib << 1) | bit as usize;
        }
        let b = (c0 & 0xFF) as u8;
        data[pos] = b;
        let r = st.r_len as usize;
        for k in 0..2 {
            let back = (k + 1) * r;
            st.r_run[k] = if r > 0 && pos >= st.start + back && data[pos - back] == b {
                st.r_run[k] + 1
            } else {
                0
            };
        }
        st.observe(b, pos);
        self.observe_header(pos, b);
        b
    }
}

/// The neural distribution's probability that bit `i` of the byte is 1,
/// given the bits so far (`c0`, leading 1), stretched. Integer throughout:
/// the masses are differences of the quantised cumulative frequencies.
#[inline]
fn neural_input(table: &FreqTable, c0: u32, i: u32) -> i32 {
    let depth = 7 - i;
    let prefix = c0 ^ (1 << depth);
    let lo = prefix << (i + 1);
    let mid = lo + (1 << i);
    let hi = lo + (2 << i);
    let (c_lo, c_mid, c_hi) = (
        table.cum(lo as usize),
        table.cum(mid as usize),
        table.cum(hi as usize),
    );
    let m0 = u64::from(c_mid - c_lo);
    let m1 = u64::from(c_hi - c_mid);
    let p = ((m1 << 16) / (m0 + m1).max(1)).clamp(1, 65535) as u32;
    stretch(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matcher::Sequential;
    use sep_coder::{Decoder, Encoder, quantize};

    fn config() -> CmConfig {
        CmConfig {
            orders: 0b0011_1111,
            word: true,
            sparse: true,
            record: true,
            long: 0b0101,
            match_min: 6,
            match2_min: 16,
            table_bits: 18,
            match_bits: 14,
            selectors: 0xF,
            apms: 3,
            image: true,
        }
    }

    fn round_trip(data: &[u8], cfg: &CmConfig) -> usize {
        let mut enc = Encoder::new();
        let mut m = Cm::new(cfg, false, data.len());
        let mut st = CmStream::new(0);
        let mut buf = data.to_vec();
        for pos in 0..buf.len() {
            m.code_byte(&mut enc, &mut st, &mut buf, pos, &Sequential(pos), None);
        }
        let bytes = enc.finish();
        let mut out = vec![0u8; data.len()];
        let mut dec = Decoder::new(&bytes);
        let mut m = Cm::new(cfg, false, data.len());
        let mut st = CmStream::new(0);
        for pos in 0..out.len() {
            m.code_byte(&mut dec, &mut st, &mut out, pos, &Sequential(pos), None);
        }
        assert_eq!(out, data);
        bytes.len()
    }

    #[test]
    fn round_trips_and_beats_order2_on_repeats() {
        let text: Vec<u8> = b"the quick brown fox jumps over the lazy dog; "
            .iter()
            .cycle()
            .take(30_000)
            .copied()
            .collect();
        let n = round_trip(&text, &config());
        assert!(n < 400, "{n}");
        round_trip(b"", &config());
        round_trip(&[0], &config());
    }

    #[test]
    fn recognises_pnm_headers() {
        let img = ImageInfo::parse_pnm(b"P6\n768 512\n255\n").unwrap();
        assert_eq!((img.start, img.pixel_bytes, img.row_bytes), (15, 3, 2304));
        let img = ImageInfo::parse_pnm(b"P5 # comment\n 10 4 65535 ").unwrap();
        assert_eq!((img.pixel_bytes, img.row_bytes), (2, 20));
        assert!(
            ImageInfo::parse_pnm(b"P6\n768 512\n255").is_none(),
            "incomplete"
        );
        assert!(
            ImageInfo::parse_pnm(b"P6\n768 512\n255\n\n").is_none(),
            "two whitespace bytes"
        );
        assert!(
            ImageInfo::parse_pnm(b"P3\n1 1\n255\n").is_none(),
            "ASCII PNM"
        );
        assert!(ImageInfo::parse_pnm(b"P5\n0 1\n255\n").is_none());
    }

    #[test]
    fn image_model_round_trips_and_helps_an_image() {
        let mut img = b"P6\n40 30\n255\n".to_vec();
        for y in 0..30u32 {
            for x in 0..40u32 {
                img.extend_from_slice(&[(x * 6) as u8, (y * 8) as u8, ((x + y) * 3) as u8]);
            }
        }
        let with = round_trip(&img, &config());
        let without = round_trip(
            &img,
            &CmConfig {
                image: false,
                ..config()
            },
        );
        assert!(
            with < without,
            "image contexts did not help: {with} vs {without}"
        );
    }

    #[test]
    fn detects_records() {
        let mut st = CmStream::new(0);
        let mut x = 12345u32;
        for pos in 0..3000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            // Random bytes, except a marker field at the start of 37-byte records.
            let b = if pos % 37 == 0 {
                7
            } else {
                (x >> 24) as u8 | 8
            };
            st.observe(b, pos);
        }
        assert_eq!(st.record_len(), 37);
    }

    #[test]
    fn neural_input_follows_the_distribution() {
        let mut p = [1e-6f32; 256];
        p[b'A' as usize] = 1.0;
        let mut t = FreqTable::default();
        quantize(&p, &mut t);
        // 'A' = 0b0100_0001: first bit 0, second 1.
        assert!(neural_input(&t, 1, 7) < -1500);
        assert!(neural_input(&t, 0b10, 6) > 1500);
        // A uniform distribution says nothing.
        assert_eq!(neural_input(&FreqTable::default(), 1, 7), 0);
    }
}
