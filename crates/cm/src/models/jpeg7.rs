//! The JPEG family of CM revision 7 (doc/FORMAT.md 4.18.2): revision 5's
//! family (`jpeg.rs`: its baseline decoder, 14 contexts and two mixers,
//! unchanged) plus contexts of its own, four mixers selected by different
//! contexts, a final mixer over them and two APMs.
//!
//! Everything is declared here: [`Jpeg7Contexts::contexts7`] computes the
//! new contexts when a code or a coefficient's extra bits start (the
//! revision 5 family counts them in `codes`), and
//! [`Jpeg7Contexts::predict_bit`](ContextModel::predict_bit) writes the
//! mixer inputs, in this order: revision 5's 16 inputs, the new contexts'
//! adaptive probabilities, the final mixer's output and the APMs' refined
//! probability.

use super::forward_family;
use super::jpeg::{self, EDGE, JpegContexts, Mode, UNZIGZAG, ZIGZAG, bucket};
use super::{ContextModel, hash2};
use crate::apm::Apm;
use crate::logistic::stretch;
use crate::prim::{AdaptiveProbs, Mixer, StateMap};
use crate::state::STATES;

/// Bits of the new contexts' probability table index (`default`'s line,
/// revision 7); the `max` line (revision 8) takes one more.
const TABLE_BITS: u32 = 23;

/// New contexts per bit.
const CONTEXTS: usize = 16;

/// Inputs of the first-layer mixers: revision 5's 29 and each new
/// context's adaptive probability and bit history's probability.
const MIX_INPUTS: usize = jpeg::MIX_INPUTS + 2 * CONTEXTS;

/// First-layer mixers.
const MIXERS: usize = 2;

/// Weight sets of each first-layer mixer.
const MIX_SETS: [usize; MIXERS] = [2 * 4 * 64, 4 * 2 * 512];

/// Inputs of the final mixer: the first layer and a bias.
const FINAL_INPUTS: usize = MIXERS + 1;

/// Weight sets of the final mixer: (chroma, mode, zigzag index).
const FINAL_SETS: usize = 2 * 4 * 64;

/// Contexts of each APM.
const APM_BITS: u32 = 16;

/// Mixer inputs per bit: the first-layer mixers' outputs, revision 5's
/// two mixers' outputs, the final mixer's output and the APMs' refined
/// probability (revision 5's contexts' probabilities add only noise to the
/// model's mixer once they are mixed here).
const BIT_INPUTS: usize = MIXERS + 2;

/// Count limit of a table entry's adaptation rate.
const LIMIT: u32 = 1023;

/// Bytes the family allocates on top of revision 5's (models/jpeg.rs) at
/// revision 7 (revision 8: [`MEMORY_MAX_LINE`] more).
pub(crate) const MEMORY: u64 = (5 << TABLE_BITS)
    + ((MIX_SETS[0] + MIX_SETS[1]) * MIX_INPUTS * 4) as u64
    + (FINAL_SETS * FINAL_INPUTS * 4) as u64
    + 2 * 2 * 33 * (1 << APM_BITS);

/// The larger table of revision 8.
pub(crate) const MEMORY_MAX_LINE: u64 = 5 << TABLE_BITS;

/// `1024 * C(u) * cos(13 * u * pi / 16)`: a coefficient's weight in the
/// DCT basis on a block's next-to-last row or column of pixels (that of
/// the last one is `EDGE[u] * (-1)^u`).
const NEXT_TO_LAST: [i64; 8] = [724, -851, 392, 200, -724, 1004, -946, 569];

/// Predictions of the coefficient at zigzag index `k` of `b`'s current
/// block (quantised; at `k = 0` the DC itself) from the block above and
/// from the block to the left, like revision 5's edge predictions but with
/// the neighbour's edge extrapolated by its gradient: this block's first
/// pixel row (column) in the coefficient's column (row) frequency is taken
/// as `2 * last - next_to_last` of the neighbour's rows (columns), less
/// what this block's coefficients decoded so far contribute.
fn gradient_predictions(b: &JpegContexts, k: usize, quant: &[u16; 64]) -> (i32, i32) {
    let z = usize::from(ZIGZAG[k]);
    let (r, c) = (z / 8, z % 8);
    let side = |nbr: &[i32; 64], fixed: usize, own: usize, vertical: bool| {
        let mut num = 0i64;
        for t in 0..8 {
            let n = if vertical {
                t * 8 + fixed
            } else {
                fixed * 8 + t
            };
            let zz = usize::from(UNZIGZAG[n]);
            let q = i64::from(quant[zz].max(1));
            let last = if t % 2 == 1 { -EDGE[t] } else { EDGE[t] };
            num += i64::from(nbr[zz]) * q * (2 * last - NEXT_TO_LAST[t]);
            if t != own {
                num -= i64::from(b.coef[zz]) * q * EDGE[t];
            }
        }
        let den = EDGE[own] * i64::from(quant[k].max(1));
        (num / den).clamp(-2048, 2047) as i32
    };
    (side(&b.above, c, r, true), side(&b.left, r, c, false))
}

/// The JPEG family of revision 7.
#[derive(Debug, Clone)]
pub(crate) struct Jpeg7Contexts {
    /// Revision 5's family: the decoder and its own predictions.
    pub(crate) base: JpegContexts,
    /// `base.codes` when the contexts were last computed.
    seen: u32,
    ctx: [u32; CONTEXTS],
    slots: Slots<CONTEXTS>,
    mixers: Vec<Mixer<MIX_INPUTS>>,
    fin: Mixer<FINAL_INPUTS>,
    apm1: Apm,
    apm2: Apm,
    /// Contexts of the APMs for the current code (bit state added per bit).
    apm_ctx: [u32; 2],
    predicted: bool,
    /// The last block decoded of each scan component (zigzag order).
    last: Vec<[i32; 64]>,
    /// `base.block` and `base.mcu` when `last` was last brought up to date.
    at_block: (usize, usize),
    #[cfg(test)]
    cost: [f64; BIT_INPUTS],
    #[cfg(test)]
    profile: Vec<f64>,
}

impl Jpeg7Contexts {
    /// The family right after a block's `FF D8 FF`; `max_line`: revision
    /// 8 (a larger table).
    pub fn new(max_line: bool) -> Self {
        let bits = TABLE_BITS + u32::from(max_line);
        let mut base = JpegContexts::new();
        // Revision 5's two mixers are not run: the inputs are mixed here.
        base.own_mixers = false;
        Jpeg7Contexts {
            base,
            seen: 0,
            ctx: [0; CONTEXTS],
            slots: Slots::new(bits, LIMIT),
            mixers: MIX_SETS
                .iter()
                .map(|&n| Mixer::new(n, 3, 1 << 10))
                .collect(),
            fin: Mixer::new(FINAL_SETS, 2, 65536 / MIXERS as i32),
            apm1: Apm::new(1 << APM_BITS, 7),
            apm2: Apm::new(1 << APM_BITS, 7),
            apm_ctx: [0; 2],
            predicted: false,
            last: Vec::new(),
            at_block: (usize::MAX, usize::MAX),
            #[cfg(test)]
            cost: [0.0; BIT_INPUTS],
            #[cfg(test)]
            profile: vec![0.0; 4 * 64 * 2],
        }
    }

    /// The contexts of the code or extra bits that start now.
    fn contexts7(&mut self) {
        let b = &self.base;
        let s = b.scan_component();
        let fc = b.scan[s].frame;
        let k = b.k.min(63);
        let mode = b.mode as u32;
        let chroma = u32::from(fc > 0);
        let quant = &b.quant[usize::from(b.frame[fc].quant)];
        let (pa, pl) = b.edge_predictions(k, quant);
        let z = usize::from(ZIGZAG[k]);
        let (r, c) = (z / 8, z % 8);
        let pred = if k == 0 {
            (pa + pl) / 2 - b.scan[s].dc_pred
        } else {
            match (r, c) {
                (0, _) => pa,
                (_, 0) => pl,
                _ => (pa + pl) / 2,
            }
        };
        let (ga, gl) = gradient_predictions(b, k, quant);
        let gpred = match (r, c) {
            _ if k == 0 => (ga + gl) / 2 - b.scan[s].dc_pred,
            (0, _) => ga,
            (_, 0) => gl,
            _ => (ga + gl) / 2,
        };
        let (pa, pl, ga, gl) = if k == 0 {
            let p = b.scan[s].dc_pred;
            (pa - p, pl - p, ga - p, gl - p)
        } else {
            (pa, pl, ga, gl)
        };
        // Nonzero coefficients so far in this block's row and column.
        let (mut zu, mut zv) = (0u32, 0u32);
        for t in 0..8 {
            zu += u32::from(b.coef[usize::from(UNZIGZAG[r * 8 + t])] != 0);
            zv += u32::from(b.coef[usize::from(UNZIGZAG[t * 8 + c])] != 0);
        }
        let lnz = |blk: &[i32; 64]| blk.iter().rposition(|&v| v != 0).unwrap_or(0) as u32;
        let (la, ll) = (lnz(&b.above), lnz(&b.left));
        // The block of the scan component before (Cb for Cr, luma for Cb).
        let cross = if s > 0 && s - 1 < self.last.len() {
            self.last[s - 1][k]
        } else {
            0
        };
        let mag = b.above[k].unsigned_abs() + b.left[k].unsigned_abs();
        let mag = 32 - (mag + pa.unsigned_abs() / 2 + pl.unsigned_abs() / 2).leading_zeros();
        let run = (b.k - b.last_nz.min(b.k)).min(15) as u32;
        let c1 = if k > 0 { b.coef[k - 1].clamp(-7, 7) } else { 0 };
        let c2 = if k > 1 { b.coef[k - 2].clamp(-7, 7) } else { 0 };
        let qk = 32 - u32::from(quant[k]).leading_zeros();
        let nz = b.nz.min(15);
        let sum = 32 - b.abs_sum.leading_zeros();
        let size = if matches!(b.mode, Mode::DcExtra | Mode::AcExtra) {
            b.size
        } else {
            0
        };
        let kk = (mode << 1 | chroma) << 6 | k as u32;
        let vals = [
            hash2(kk, fine(pa)),
            hash2(kk, fine(pl)),
            hash2(kk, fine(pred) << 4 | nz.min(7)),
            hash2(kk, bucket(pa) << 10 | bucket(pl) << 5 | bucket(pred)),
            hash2(kk, zu << 4 | zv << 8 | nz),
            hash2(kk, la << 6 | ll << 12 | run),
            hash2(kk, bucket(cross) << 5 | bucket(pred) | (s as u32) << 10),
            hash2(kk, mag << 4 | run),
            hash2(kk, sum << 10 | nz << 6 | b.last_nz as u32),
            hash2(kk, ((c1 + 7) as u32) << 4 | (c2 + 7) as u32),
            hash2(mode << 1 | chroma, qk << 8 | fine(pred)),
            hash2(mode, bucket(pred) << 8 | u32::from(k == 0)),
            hash2(kk, fine(ga)),
            hash2(kk, fine(gl)),
            hash2(kk, fine(gpred) << 6 | fine(pred)),
            hash2(kk, fine(pa) << 6 | fine(pl)),
        ];
        for (j, (c, v)) in self.ctx.iter_mut().zip(vals).enumerate() {
            *c = hash2(hash2(v, size), j as u32 + 0x7A00);
        }
        self.apm_ctx = [
            hash2(kk, size),
            hash2(mode << 8 | fine(pred), size << 4 | nz.min(7)),
        ];
    }

    /// Keeps `last` (each scan component's last block) up to date: called
    /// before each prediction; a block ended when the decoder moved on.
    fn track_blocks(&mut self) {
        let b = &self.base;
        if self.last.len() != b.scan.len() {
            self.last = vec![[0; 64]; b.scan.len()];
            self.at_block = (b.block, b.mcu);
        }
        if (b.block, b.mcu) != self.at_block {
            // The block before the current one in the MCU (or the previous
            // MCU's last) is complete: its row entry holds it.
            let n = b.mcu_blocks.len();
            let prev = (b.block + n - 1) % n;
            let (s, h, _) = b.mcu_blocks[prev];
            let mcu = if b.block == 0 {
                b.mcu.saturating_sub(1)
            } else {
                b.mcu
            };
            let sc = &b.scan[s];
            let col = if n == 1 && b.scan.len() == 1 {
                mcu % b.mcus_x
            } else {
                (mcu % b.mcus_x) * usize::from(b.frame[sc.frame].h) + h
            };
            if let Some(row) = sc.rows.get(col) {
                for (d, &x) in self.last[s].iter_mut().zip(row) {
                    *d = i32::from(x);
                }
            }
            self.at_block = (b.block, b.mcu);
        }
    }
}

/// A signed value in 6 bits: exact below 16, then two steps per octave
/// (magnitude), plus 32 if negative.
#[inline]
pub(crate) fn fine(v: i32) -> u32 {
    let m = v.unsigned_abs();
    let b = if m < 16 {
        m
    } else {
        let l = 31 - m.leading_zeros(); // >= 4
        (16 + 2 * (l - 4) + ((m >> (l - 1)) & 1)).min(31)
    };
    if v < 0 { b | 32 } else { b }
}

impl ContextModel for Jpeg7Contexts {
    forward_family!(base; contexts, hashes, selector_size, selector, begin_byte, observe);

    fn bit_inputs(&self) -> usize {
        BIT_INPUTS
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let mut b5 = [0i32; jpeg::BIT_INPUTS];
        self.base.predict_bit(c0, i, &mut b5);
        self.predicted = self.base.predicted;
        if !self.predicted {
            out.fill(0);
            return;
        }
        self.track_blocks();
        if self.seen != self.base.codes {
            self.seen = self.base.codes;
            self.contexts7();
        }
        let hs = self.base.bit_state();
        let mut x = [0i32; MIX_INPUTS];
        x[..jpeg::MIX_INPUTS].copy_from_slice(&self.base.inputs);
        let first = jpeg::MIX_INPUTS;
        self.slots.inputs(&self.ctx, hs, &mut x[first..]);
        let sets = mixer_sets(&self.base);
        let mut f = [0i32; FINAL_INPUTS];
        for (j, (m, &set)) in self.mixers.iter_mut().zip(&sets).enumerate() {
            f[j] = m.mix(x, set);
        }
        f[MIXERS] = 256;
        let d = self.fin.mix(f, sets[0]);
        let mask = (1 << APM_BITS) - 1;
        let p1 = self
            .apm1
            .refine_stretched(d, hash2(self.apm_ctx[0], hs) as usize & mask);
        let p2 = self
            .apm2
            .refine_stretched(d, hash2(self.apm_ctx[1], hs) as usize & mask);
        let p = (p1 + p2).div_ceil(2);
        out[..MIXERS].copy_from_slice(&f[..MIXERS]);
        out[MIXERS] = d;
        out[MIXERS + 1] = stretch(p.clamp(1, 65535));
    }

    fn update_bit(&mut self, bit: u32) {
        if self.predicted {
            self.slots.update(bit);
            for m in &mut self.mixers {
                m.update(bit);
            }
            self.fin.update(bit);
            self.apm1.update(bit);
            self.apm2.update(bit);
            self.predicted = false;
        }
        self.base.update_bit(bit);
    }

    fn detected(&self) -> bool {
        true
    }
}

/// The weight sets of revision 7's two first-layer mixers for the
/// decoder's state `b` (revision 36's family uses them too): the component
/// (luma or chroma) x the decoder's mode x the zigzag index `k`, and the
/// mode x component x the code's prefix (the bits of a Huffman code read so
/// far with a leading 1 while under 8, else 0; for extra bits 256 plus the
/// coefficient's size and the bits read, each at most 15).
pub(crate) fn mixer_sets(b: &JpegContexts) -> [usize; 2] {
    let chroma = usize::from(b.scan[b.scan_component()].frame > 0);
    let mode = b.mode as usize;
    let k = b.k.min(63);
    let extra = if matches!(b.mode, Mode::DcExtra | Mode::AcExtra) {
        b.size as usize
    } else {
        0
    };
    let prefix = match b.mode {
        Mode::DcCode | Mode::AcCode if b.len < 8 => (1 << b.len) | b.code as usize & 255,
        Mode::DcCode | Mode::AcCode => 0,
        _ => 256 + (extra.min(15) << 4 | b.len.min(15)),
    };
    [
        (chroma * 4 + mode) * 64 + k,
        (mode * 2 + chroma) * 512 + prefix,
    ]
}

/// The hashed contexts of a JPEG family (revision 7's here, revision 36's
/// in `jpeg36.rs`): for context `j` and the decoder's bit state `hs`, slot
/// `i = hash2(ctx[j], hs) >> (32 - bits)` holds an adaptive probability
/// (count limit `limit`) and a bit history read through context `j`'s own
/// state map.
#[derive(Debug, Clone)]
pub(crate) struct Slots<const N: usize> {
    /// Bits of the slot index.
    bits: u32,
    /// Each context's slot for the current bit.
    idx: [usize; N],
    table: AdaptiveProbs,
    states: Vec<u8>,
    maps: Vec<StateMap>,
}

impl<const N: usize> Slots<N> {
    /// `2^bits` fresh slots.
    pub(crate) fn new(bits: u32, limit: u32) -> Self {
        Slots {
            bits,
            idx: [0; N],
            table: AdaptiveProbs::new(1 << bits, limit),
            states: vec![0; 1 << bits],
            maps: vec![StateMap::default(); N],
        }
    }

    /// Finds the contexts' slots for bit state `hs` and writes context `j`'s
    /// inputs: `x[j]`, its probability's stretch (0 for a slot never
    /// trained), and `x[N + j]`, its bit history's.
    #[inline]
    pub(crate) fn inputs(&mut self, ctx: &[u32; N], hs: u32, x: &mut [i32]) {
        for j in 0..N {
            let i = (hash2(ctx[j], hs) >> (32 - self.bits)) as usize;
            self.idx[j] = i;
            x[j] = if self.table.count(i) == 0 {
                0
            } else {
                self.table.stretched(i)
            };
            x[N + j] = self.maps[j].stretched(self.states[i]);
        }
    }

    /// Trains the slots [`Slots::inputs`] found on `bit`.
    #[inline]
    pub(crate) fn update(&mut self, bit: u32) {
        for (&i, map) in self.idx.iter().zip(&mut self.maps) {
            let s = self.states[i];
            map.update(s, bit, 1023);
            self.states[i] = STATES.next(s, bit);
            self.table.update(i, bit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logistic::squash;

    /// Runs the family over `data` (which starts with `FF D8 FF`) as the
    /// model would, adding each input's cost in bytes to `cost` and the
    /// final probability's cost per (mode, zigzag index, code or extra
    /// bit) to `profile`.
    fn follow(data: &[u8]) -> Jpeg7Contexts {
        let mut j = Jpeg7Contexts::new(false);
        for &b in &data[3..] {
            j.base.active = j.base.phase == jpeg::Phase::Scan && !j.base.after_ff;
            for i in (0..8).rev() {
                let bit = u32::from(b >> i) & 1;
                let mut out = [0i32; BIT_INPUTS];
                j.predict_bit(0, i, &mut out);
                if j.predicted {
                    let cost = |x: i32| {
                        let p = f64::from(squash(x)) / 65536.0;
                        -(if bit == 1 { p } else { 1.0 - p }).log2() / 8.0
                    };
                    for (c, &x) in out.iter().enumerate() {
                        j.cost[c] += cost(x);
                    }
                    let at = (j.base.mode as usize * 64 + j.base.k.min(63)) * 2;
                    j.profile[at] += cost(out[BIT_INPUTS - 1]);
                    j.profile[at + 1] += 1.0 / 8.0;
                }
                j.update_bit(bit);
            }
            j.observe(&[], 0, b);
        }
        j
    }

    /// A real baseline JPEG (tests/golden/inputs).
    const JPEG: &[u8] = include_bytes!("../../../../tests/golden/inputs/fireworks.crop128x96.jpg");

    #[test]
    fn follows_the_scan_and_codes_it_below_its_size() {
        let j = follow(JPEG);
        assert!(j.base.finished);
        // The family's final probability codes the scan (which starts at
        // byte 623) smaller than its bytes. (That revision 7 codes it
        // smaller than revision 5 is tests/jpeg_rev7.rs, through the model.)
        let scan_bytes = (JPEG.len() - 623) as f64;
        assert!(j.cost[BIT_INPUTS - 1] < scan_bytes, "{:?}", j.cost);
        // A damaged scan stops the family without a panic.
        let mut bad = JPEG.to_vec();
        let n = bad.len();
        bad[n - 300..n - 200].fill(0xFE);
        follow(&bad);
    }

    #[test]
    fn fine_buckets_keep_small_values_and_signs() {
        assert_eq!(fine(0), 0);
        assert_eq!(fine(15), 15);
        assert_eq!(fine(-1), 33);
        assert_eq!(fine(16), 16);
        assert_eq!(fine(24), 17);
        assert_eq!(fine(32), 18);
        assert_eq!(fine(1 << 20), 31);
    }

    /// Where the bits go: `SEP_JPEG_PROFILE=FILE cargo test --release -p
    /// sep-cm --lib jpeg7 -- --ignored --nocapture` prints the bytes of
    /// the family's final probability per mode and zigzag band.
    #[test]
    #[ignore]
    fn profile() {
        let Ok(path) = std::env::var("SEP_JPEG_PROFILE") else {
            return;
        };
        let data = std::fs::read(path).unwrap();
        let j = follow(&data);
        let names = ["DC code", "DC extra", "AC code", "AC extra"];
        println!("inputs (bytes): {:?}", j.cost.map(|c| c.round()));
        for (m, name) in names.iter().enumerate() {
            let mut line = format!("{name:>9}:");
            for band in [0..1, 1..3, 3..6, 6..10, 10..15, 15..28, 28..45, 45..64] {
                let (mut c, mut n) = (0.0, 0.0);
                for k in band.clone() {
                    c += j.profile[(m * 64 + k) * 2];
                    n += j.profile[(m * 64 + k) * 2 + 1];
                }
                line += &format!(" {}-{}: {c:.0}/{n:.0}", band.start, band.end - 1);
            }
            println!("{line}");
        }
    }
}
