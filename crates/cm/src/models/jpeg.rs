//! The JPEG family (CM revision 5, doc/FORMAT.md 4.16.4): a block that
//! starts with a JPEG's SOI marker (`FF D8 FF`) is followed byte by byte as
//! a baseline JPEG decoder would read it. Headers are parsed from the coded
//! bytes (DQT, DHT, SOF0/SOF1, DRI, SOS); inside an entropy-coded scan every
//! bit is fed to a Huffman decoder (byte stuffing `FF 00`, restart markers
//! `FF D0`..`FF D7`), so that at each bit the family knows whether a DC or
//! AC code or a coefficient's extra bits are being read, the code prefix so
//! far, the zigzag index, the component, the coefficients already decoded
//! in the block and those of the blocks above and to the left (same
//! component). Its contexts ([`JpegContexts::coefficient_contexts`]) are
//! hashed with the bit's position in the code ([`JpegContexts::bit_state`])
//! into a table of adaptive probabilities, mixed by two small mixers of its
//! own whose weight sets follow the zigzag index and the code position.
//!
//! Anything the family does not understand (progressive or arithmetic
//! coding, 12-bit samples, an invalid Huffman code, a marker out of place)
//! switches it off for the rest of the block: it then gives no predictions.
//! Encoder and decoder see the same bytes, so they switch off at the same
//! bit; nothing here can make a decode wrong, only predictions worse.

use super::{ByteCtx, ContextModel, hash2};
use crate::logistic::stretch;
use crate::prim::{Mixer, StateMap};
use crate::state::STATES;

/// Bits of the family's probability table index.
const TABLE_BITS: u32 = 22;

/// Contexts per bit (each one mixer input through the table).
pub(crate) const CONTEXTS: usize = 14;

/// Inputs of the family's own mixers: each context's adaptive probability
/// and its bit history's, and a bias.
pub(crate) const MIX_INPUTS: usize = 2 * CONTEXTS + 1;

/// Mixer inputs per bit: the contexts and the two mixers' outputs.
pub(crate) const BIT_INPUTS: usize = CONTEXTS + 2;

/// Weight sets of the first mixer: (chroma, mode, zigzag index).
const MIX1_SETS: usize = 2 * 4 * 64;

/// Weight sets of the second mixer: (chroma, mode, code length or extra
/// bits read, extra size).
const MIX2_SETS: usize = 2 * 4 * 17 * 16;

/// Count limit of a table entry's adaptation rate.
const LIMIT: u32 = 1023;

/// Bytes the family allocates once a JPEG is detected (the table and the
/// mixers' weights; row buffers depend on the image and are bounded by the
/// frame size: at most 4 components x 8192 blocks x 64 x 2 bytes).
pub(crate) const MEMORY: u64 =
    (5 << TABLE_BITS) + ((MIX1_SETS + MIX2_SETS) * MIX_INPUTS * 4) as u64 + (4 << 22);

/// The natural (row-major) position of each zigzag index.
pub(crate) const ZIGZAG: [u8; 64] = [
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20,
    13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59,
    52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
];

/// The zigzag index of each natural position.
pub(crate) const UNZIGZAG: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut k = 0;
    while k < 64 {
        t[ZIGZAG[k] as usize] = k as u8;
        k += 1;
    }
    t
};

/// `1024 * C(u) * cos(u * pi / 16)` (C(0) = 1/sqrt(2), else 1): a
/// coefficient's weight in the DCT basis on a block's first row or column
/// of pixels; on the last one it is the same times `(-1)^u`.
pub(crate) const EDGE: [i64; 8] = [724, 1004, 946, 851, 724, 569, 392, 200];

/// A Huffman table from a DHT segment, for decoding one bit at a time.
#[derive(Debug, Clone)]
pub(crate) struct Huffman {
    /// Smallest and largest code of each length (max -1: none).
    min_code: [i32; 17],
    max_code: [i32; 17],
    /// Index in `values` of each length's first code, minus that code.
    offset: [i32; 17],
    values: [u8; 256],
}

impl Huffman {
    /// The table of `counts` (codes per length 1..=16) and `values` (at
    /// most 256), or `None` when the counts overflow the code space.
    fn new(counts: &[u8], values: &[u8]) -> Option<Self> {
        let mut h = Huffman {
            min_code: [0; 17],
            max_code: [-1; 17],
            offset: [0; 17],
            values: [0; 256],
        };
        h.values[..values.len()].copy_from_slice(values);
        let (mut code, mut k) = (0i32, 0i32);
        for len in 1..=16 {
            let n = i32::from(counts[len - 1]);
            if n > 0 {
                h.min_code[len] = code;
                h.offset[len] = k - code;
                code += n;
                k += n;
                h.max_code[len] = code - 1;
            }
            if code > 1 << len {
                return None;
            }
            code <<= 1;
        }
        Some(h)
    }

    /// The symbol of the code `code` of `len` bits, if it is one.
    #[inline]
    fn symbol(&self, code: i32, len: usize) -> Option<u8> {
        (code >= self.min_code[len] && code <= self.max_code[len])
            .then(|| self.values[(code + self.offset[len]) as usize & 255])
    }
}

/// A frame component (SOF).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Component {
    pub(crate) id: u8,
    pub(crate) h: u8,
    pub(crate) v: u8,
    pub(crate) quant: u8,
}

/// A component of the current scan.
#[derive(Debug, Clone)]
pub(crate) struct ScanComponent {
    /// Index in the frame.
    pub(crate) frame: usize,
    pub(crate) dc: usize,
    pub(crate) ac: usize,
    /// Blocks per row of this component in the scan.
    pub(crate) width: usize,
    /// The last block decoded in each column (zigzag order).
    pub(crate) rows: Vec<[i16; 64]>,
    /// DC prediction (the previous block's DC).
    pub(crate) dc_pred: i32,
}

/// Where the family is in the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Expecting `FF` before a marker.
    MarkerFf,
    /// After `FF`: the marker's code.
    MarkerCode,
    /// The first byte of a segment's length.
    Len1,
    /// The second byte.
    Len2,
    /// A segment's payload.
    Payload,
    /// Entropy-coded data.
    Scan,
    /// Off for the rest of the block.
    Off,
}

/// What the bits being read are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    DcCode = 0,
    DcExtra = 1,
    AcCode = 2,
    AcExtra = 3,
}

/// The JPEG family.
#[derive(Debug, Clone)]
pub(crate) struct JpegContexts {
    pub(crate) phase: Phase,
    pub(crate) marker: u8,
    pub(crate) remaining: usize,
    pub(crate) payload: Vec<u8>,
    pub(crate) quant: [[u16; 64]; 4],
    /// DC tables 0..4, AC tables 4..8.
    pub(crate) huffman: Vec<Option<Huffman>>,
    pub(crate) frame: Vec<Component>,
    pub(crate) width: usize,
    pub(crate) height: usize,
    /// The scan's components, and the blocks of one MCU: (scan component,
    /// h, v).
    pub(crate) scan: Vec<ScanComponent>,
    pub(crate) mcu_blocks: Vec<(usize, usize, usize)>,
    pub(crate) mcus_x: usize,
    pub(crate) mcus: usize,
    pub(crate) mcu: usize,
    pub(crate) block: usize,
    /// The scan's byte before was `FF`.
    pub(crate) after_ff: bool,
    /// All MCUs decoded: the scan's padding is left.
    pub(crate) finished: bool,
    /// The current byte holds scan bits.
    pub(crate) active: bool,
    pub(crate) mode: Mode,
    pub(crate) code: i32,
    pub(crate) len: usize,
    pub(crate) size: u32,
    pub(crate) extra: u32,
    /// Zigzag index of the next coefficient.
    pub(crate) k: usize,
    /// This block's coefficients (zigzag order), the block above and left.
    pub(crate) coef: [i32; 64],
    pub(crate) above: [i32; 64],
    pub(crate) left: [i32; 64],
    /// Nonzero coefficients of the above and left blocks at zigzag
    /// index `k` or later.
    pub(crate) nbr_nz: [u8; 65],
    pub(crate) nz: u32,
    pub(crate) last_nz: usize,
    pub(crate) abs_sum: u32,
    /// Per-coefficient contexts and this bit's table entries.
    pub(crate) ctx: [u32; CONTEXTS],
    pub(crate) idx: [usize; CONTEXTS],
    pub(crate) table: Vec<u32>,
    /// Each entry's bit history (`state.rs`) and each context's map of
    /// histories to probabilities.
    pub(crate) states: Vec<u8>,
    pub(crate) maps: Vec<StateMap>,
    pub(crate) mix1: Mixer<MIX_INPUTS>,
    pub(crate) mix2: Mixer<MIX_INPUTS>,
    pub(crate) predicted: bool,
    /// The last bit's inputs of the two mixers (read by revision 7's
    /// family, `jpeg7.rs`, which mixes them again).
    pub(crate) inputs: [i32; MIX_INPUTS],
    /// Codes (and extra bits) started so far: a change tells revision 7's
    /// family to compute its contexts again.
    pub(crate) codes: u32,
    /// Whether the two mixers run (revision 5: always; revision 7's family
    /// mixes the inputs itself).
    pub(crate) own_mixers: bool,
    #[cfg(test)]
    pub(crate) cost: [f64; BIT_INPUTS],
}

impl JpegContexts {
    /// The family right after a block's `FF D8 FF`: the next byte is a
    /// marker's code.
    pub fn new() -> Self {
        JpegContexts {
            phase: Phase::MarkerCode,
            marker: 0,
            remaining: 0,
            payload: Vec::new(),
            quant: [[1; 64]; 4],
            huffman: vec![None; 8],
            frame: Vec::new(),
            width: 0,
            height: 0,
            scan: Vec::new(),
            mcu_blocks: Vec::new(),
            mcus_x: 0,
            mcus: 0,
            mcu: 0,
            block: 0,
            after_ff: false,
            finished: false,
            active: false,
            mode: Mode::DcCode,
            code: 0,
            len: 0,
            size: 0,
            extra: 0,
            k: 0,
            coef: [0; 64],
            above: [0; 64],
            left: [0; 64],
            nbr_nz: [0; 65],
            nz: 0,
            last_nz: 0,
            abs_sum: 0,
            ctx: [0; CONTEXTS],
            idx: [0; CONTEXTS],
            table: vec![1 << 31; 1 << TABLE_BITS],
            states: vec![0; 1 << TABLE_BITS],
            maps: vec![StateMap::default(); CONTEXTS],
            mix1: Mixer::new(MIX1_SETS, 2, 1 << 11),
            mix2: Mixer::new(MIX2_SETS, 2, 1 << 11),
            predicted: false,
            inputs: [0; MIX_INPUTS],
            codes: 0,
            own_mixers: true,
            #[cfg(test)]
            cost: [0.0; BIT_INPUTS],
        }
    }

    /// Sees one byte outside the entropy-coded data.
    fn header_byte(&mut self, b: u8) {
        match self.phase {
            Phase::MarkerFf => {
                self.phase = if b == 0xFF {
                    Phase::MarkerCode
                } else {
                    Phase::Off
                };
            }
            Phase::MarkerCode => self.marker_code(b),
            Phase::Len1 => {
                self.remaining = usize::from(b) << 8;
                self.phase = Phase::Len2;
            }
            Phase::Len2 => {
                self.remaining |= usize::from(b);
                if self.remaining < 2 {
                    self.phase = Phase::Off;
                } else {
                    self.remaining -= 2;
                    self.payload.clear();
                    self.phase = Phase::Payload;
                    if self.remaining == 0 {
                        self.segment();
                    }
                }
            }
            Phase::Payload => {
                self.payload.push(b);
                self.remaining -= 1;
                if self.remaining == 0 {
                    self.segment();
                }
            }
            Phase::Scan | Phase::Off => {}
        }
    }

    /// A marker's code `b` after `FF`.
    fn marker_code(&mut self, b: u8) {
        self.phase = match b {
            0xFF => Phase::MarkerCode,
            // SOI, RSTn and TEM stand alone.
            0xD8 | 0xD0..=0xD7 | 0x01 => Phase::MarkerFf,
            // EOI (another JPEG may follow), and the marker codes that
            // cannot start a segment.
            0xD9 => Phase::MarkerFf,
            0x00 => Phase::Off,
            _ => {
                self.marker = b;
                Phase::Len1
            }
        };
    }

    /// Handles the segment in `payload` (marker `marker`).
    fn segment(&mut self) {
        self.phase = Phase::MarkerFf;
        let ok = match self.marker {
            0xC4 => self.parse_dht(),
            0xDB => self.parse_dqt(),
            0xC0 | 0xC1 => self.parse_sof(),
            0xDA => self.parse_sos(),
            // Progressive, lossless, hierarchical and arithmetic frames,
            // and arithmetic conditioning.
            0xC2 | 0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCC | 0xCD..=0xCF | 0xDC => false,
            _ => true,
        };
        if !ok {
            self.phase = Phase::Off;
        }
    }

    fn parse_dht(&mut self) -> bool {
        let p = std::mem::take(&mut self.payload);
        let mut at = 0;
        let mut ok = true;
        while at < p.len() {
            let Some(counts) = p.get(at + 1..at + 17) else {
                ok = false;
                break;
            };
            let (class, id) = (p[at] >> 4, usize::from(p[at] & 15));
            let total: usize = counts.iter().map(|&c| usize::from(c)).sum();
            let Some(values) = p.get(at + 17..at + 17 + total) else {
                ok = false;
                break;
            };
            if class > 1 || id > 3 || total > 256 {
                ok = false;
                break;
            }
            match Huffman::new(counts, values) {
                Some(h) => self.huffman[usize::from(class) * 4 + id] = Some(h),
                None => {
                    ok = false;
                    break;
                }
            }
            at += 17 + total;
        }
        self.payload = p;
        ok
    }

    fn parse_dqt(&mut self) -> bool {
        let p = &self.payload;
        let mut at = 0;
        while at < p.len() {
            let (precision, id) = (p[at] >> 4, usize::from(p[at] & 15));
            let n = if precision == 0 { 64 } else { 128 };
            if precision > 1 || id > 3 || at + 1 + n > p.len() {
                return false;
            }
            for k in 0..64 {
                self.quant[id][k] = if precision == 0 {
                    u16::from(p[at + 1 + k])
                } else {
                    u16::from_be_bytes([p[at + 1 + 2 * k], p[at + 2 + 2 * k]])
                };
            }
            at += 1 + n;
        }
        true
    }

    fn parse_sof(&mut self) -> bool {
        let p = &self.payload;
        if p.len() < 6 || p[0] != 8 {
            return false;
        }
        self.height = usize::from(u16::from_be_bytes([p[1], p[2]]));
        self.width = usize::from(u16::from_be_bytes([p[3], p[4]]));
        let n = usize::from(p[5]);
        if !(1..=4).contains(&n) || p.len() < 6 + 3 * n || self.width == 0 || self.height == 0 {
            return false;
        }
        self.frame = (0..n)
            .map(|c| Component {
                id: p[6 + 3 * c],
                h: p[7 + 3 * c] >> 4,
                v: p[7 + 3 * c] & 15,
                quant: p[8 + 3 * c] & 3,
            })
            .collect();
        self.frame
            .iter()
            .all(|c| (1..=4).contains(&c.h) && (1..=4).contains(&c.v))
    }

    fn parse_sos(&mut self) -> bool {
        let p = &self.payload;
        let n = usize::from(*p.first().unwrap_or(&0));
        if self.frame.is_empty() || !(1..=4).contains(&n) || p.len() < 4 + 2 * n {
            return false;
        }
        let (ss, se, a) = (p[1 + 2 * n], p[2 + 2 * n], p[3 + 2 * n]);
        if ss != 0 || se != 63 || a != 0 {
            return false;
        }
        let hmax = usize::from(self.frame.iter().map(|c| c.h).max().unwrap_or(1));
        let vmax = usize::from(self.frame.iter().map(|c| c.v).max().unwrap_or(1));
        let mut scan = Vec::with_capacity(n);
        for s in 0..n {
            let (id, tables) = (p[1 + 2 * s], p[2 + 2 * s]);
            let Some(frame) = self.frame.iter().position(|c| c.id == id) else {
                return false;
            };
            let (dc, ac) = (usize::from(tables >> 4), 4 + usize::from(tables & 15));
            if dc > 3 || ac > 7 || self.huffman[dc].is_none() || self.huffman[ac].is_none() {
                return false;
            }
            scan.push(ScanComponent {
                frame,
                dc,
                ac,
                width: 0,
                rows: Vec::new(),
                dc_pred: 0,
            });
        }
        let mut blocks = Vec::new();
        if n == 1 {
            let c = self.frame[scan[0].frame];
            let w = (self.width * usize::from(c.h)).div_ceil(hmax).div_ceil(8);
            let h = (self.height * usize::from(c.v)).div_ceil(vmax).div_ceil(8);
            scan[0].width = w;
            self.mcus_x = w;
            self.mcus = w * h;
            blocks.push((0, 0, 0));
        } else {
            self.mcus_x = self.width.div_ceil(8 * hmax);
            self.mcus = self.mcus_x * self.height.div_ceil(8 * vmax);
            for (s, sc) in scan.iter_mut().enumerate() {
                let c = self.frame[sc.frame];
                sc.width = self.mcus_x * usize::from(c.h);
                for v in 0..usize::from(c.v) {
                    for h in 0..usize::from(c.h) {
                        blocks.push((s, h, v));
                    }
                }
            }
            if blocks.len() > 10 {
                return false;
            }
        }
        for sc in &mut scan {
            sc.rows = vec![[0; 64]; sc.width];
        }
        self.scan = scan;
        self.mcu_blocks = blocks;
        self.mcu = 0;
        self.block = 0;
        self.finished = self.mcus == 0;
        self.after_ff = false;
        self.phase = Phase::Scan;
        self.start_block();
        true
    }

    /// The current block's component (scan index) and column.
    pub(crate) fn block_position(&self) -> (usize, usize, bool) {
        let (s, h, v) = self.mcu_blocks[self.block];
        let (mx, my) = (self.mcu % self.mcus_x, self.mcu / self.mcus_x);
        let c = self.frame[self.scan[s].frame];
        if self.mcu_blocks.len() == 1 && self.scan.len() == 1 {
            (s, mx, my > 0)
        } else {
            (s, mx * usize::from(c.h) + h, my > 0 || v > 0)
        }
    }

    /// Starts the MCU's current block: neighbours loaded, DC code next.
    fn start_block(&mut self) {
        let (s, col, has_above) = self.block_position();
        let sc = &self.scan[s];
        let above = if has_above { sc.rows[col] } else { [0; 64] };
        let left = if col > 0 { sc.rows[col - 1] } else { [0; 64] };
        let mut nz = 0u8;
        for k in (0..64).rev() {
            self.above[k] = i32::from(above[k]);
            self.left[k] = i32::from(left[k]);
            nz += u8::from(above[k] != 0) + u8::from(left[k] != 0);
            self.nbr_nz[k] = nz;
        }
        self.nbr_nz[64] = 0;
        self.coef = [0; 64];
        self.k = 0;
        self.nz = 0;
        self.last_nz = 0;
        self.abs_sum = 0;
        self.start_code(Mode::DcCode);
    }

    /// Finishes the current block and starts the next one.
    fn end_block(&mut self) {
        let (s, col, _) = self.block_position();
        let mut stored = [0i16; 64];
        for (d, &c) in stored.iter_mut().zip(&self.coef) {
            *d = c.clamp(-32768, 32767) as i16;
        }
        self.scan[s].rows[col] = stored;
        self.block += 1;
        if self.block == self.mcu_blocks.len() {
            self.block = 0;
            self.mcu += 1;
            if self.mcu >= self.mcus {
                self.finished = true;
                return;
            }
        }
        self.start_block();
    }

    /// A restart marker: DC predictions reset, the current MCU restarts.
    fn restart(&mut self) {
        for sc in &mut self.scan {
            sc.dc_pred = 0;
        }
        if !self.finished {
            self.block = 0;
            self.start_block();
        }
    }

    fn start_code(&mut self, mode: Mode) {
        self.mode = mode;
        self.code = 0;
        self.len = 0;
        self.extra = 0;
        self.codes = self.codes.wrapping_add(1);
        self.coefficient_contexts();
    }

    /// Learns one scan bit: advances the Huffman decoder.
    fn scan_bit(&mut self, bit: u32) {
        if self.finished {
            return;
        }
        match self.mode {
            Mode::DcCode | Mode::AcCode => {
                self.code = self.code << 1 | bit as i32;
                self.len += 1;
                let s = self.scan_component();
                let table = if self.mode == Mode::DcCode {
                    self.scan[s].dc
                } else {
                    self.scan[s].ac
                };
                let Some(h) = self.huffman[table].as_ref() else {
                    self.phase = Phase::Off;
                    return;
                };
                match h.symbol(self.code, self.len) {
                    Some(sym) => self.symbol(sym),
                    None if self.len >= 16 => self.phase = Phase::Off,
                    None => {}
                }
            }
            Mode::DcExtra | Mode::AcExtra => {
                self.extra = self.extra << 1 | bit;
                self.len += 1;
                if self.len as u32 == self.size {
                    let v = self.extra as i32;
                    let value = if v >> (self.size - 1) != 0 {
                        v
                    } else {
                        v - (1 << self.size) + 1
                    };
                    self.coefficient(value);
                }
            }
        }
    }

    pub(crate) fn scan_component(&self) -> usize {
        self.mcu_blocks[self.block].0
    }

    /// A decoded Huffman symbol.
    fn symbol(&mut self, sym: u8) {
        if self.mode == Mode::DcCode {
            if sym > 11 {
                self.phase = Phase::Off;
            } else if sym == 0 {
                self.coefficient(0);
            } else {
                self.size = u32::from(sym);
                self.start_code(Mode::DcExtra);
            }
            return;
        }
        let (run, size) = (usize::from(sym >> 4), u32::from(sym & 15));
        if size == 0 {
            if run == 15 {
                self.k += 16;
                if self.k > 63 {
                    self.phase = Phase::Off;
                } else {
                    self.start_code(Mode::AcCode);
                }
            } else {
                self.end_block();
            }
            return;
        }
        self.k += run;
        if self.k > 63 || size > 10 {
            self.phase = Phase::Off;
            return;
        }
        self.size = size;
        self.start_code(Mode::AcExtra);
    }

    /// The coefficient at `k` is decoded (`value`: a DC difference at 0).
    fn coefficient(&mut self, value: i32) {
        let value = if self.k == 0 {
            let sc = &mut self.scan[self.mcu_blocks[self.block].0];
            sc.dc_pred = (sc.dc_pred + value).clamp(-32768, 32767);
            sc.dc_pred
        } else {
            value
        };
        self.coef[self.k] = value;
        if self.k > 0 && value != 0 {
            self.nz += 1;
            self.last_nz = self.k;
            self.abs_sum += value.unsigned_abs().min(1 << 16);
        }
        self.k += 1;
        if self.k == 64 {
            self.end_block();
        } else {
            self.start_code(Mode::AcCode);
        }
    }

    /// The contexts of the symbol or extra bits that start now.
    fn coefficient_contexts(&mut self) {
        let s = self.scan_component();
        let fc = self.scan[s].frame;
        let k = self.k.min(63);
        let q = u32::from(self.quant[usize::from(self.frame[fc].quant)][k].min(255));
        let mode = self.mode as u32;
        let chroma = u32::from(fc > 0);
        let base = (mode << 8 | chroma << 7 | k as u32) << 4 | (mode * 4 + s as u32);
        let (a, l) = if k == 0 {
            let pred = self.scan[s].dc_pred;
            (self.above[0] - pred, self.left[0] - pred)
        } else {
            (self.above[k], self.left[k])
        };
        let (qa, ql) = (bucket(a), bucket(l));
        let nbr = u32::from(self.nbr_nz[k].min(31));
        let run = (self.k - self.last_nz.min(self.k)).min(15) as u32;
        let prev = if self.last_nz > 0 {
            bucket(self.coef[self.last_nz])
        } else {
            0
        };
        // Within the block: the coefficients one row up and one column to
        // the left in natural order (both come earlier in zigzag order).
        let z = usize::from(ZIGZAG[k]);
        let (r, c) = (z / 8, z % 8);
        let up = if r > 0 && k > 0 {
            bucket(self.coef[usize::from(UNZIGZAG[z - 8])])
        } else {
            0
        };
        let lf = if c > 0 && k > 0 {
            bucket(self.coef[usize::from(UNZIGZAG[z - 1])])
        } else {
            0
        };
        let quant = &self.quant[usize::from(self.frame[fc].quant)];
        let (pa, pl, pred) = if k == 0 {
            let p = self.scan[s].dc_pred;
            let (pa, pl) = (self.above[0] - p, self.left[0] - p);
            (pa, pl, (pa + pl) / 2)
        } else {
            let (pa, pl) = self.edge_predictions(k, quant);
            let z = ZIGZAG[k];
            let pred = match (z / 8, z % 8) {
                (0, _) => pa,
                (_, 0) => pl,
                _ => (pa + pl) / 2,
            };
            (pa, pl, pred)
        };
        let (bpa, bpl) = (bucket(pa), bucket(pl));
        let fine = pred.clamp(-63, 63) as u32 & 127;
        let mut mask = 0u32;
        for j in k..(k + 4).min(64) {
            mask = mask << 2 | u32::from(self.above[j] != 0) << 1 | u32::from(self.left[j] != 0);
        }
        let size = if matches!(self.mode, Mode::DcExtra | Mode::AcExtra) {
            self.size
        } else {
            0
        };
        let nz = self.nz.min(31);
        let sum = 32 - self.abs_sum.leading_zeros();
        let vals = [
            0,
            qa,
            ql,
            nz,
            prev << 4 | run,
            bpa << 5 | bpl,
            nbr << 5 | nz,
            qa << 5 | ql,
            sum << 5 | nz.min(15),
            up << 5 | lf,
            q << 5 | size,
            bucket(pred) << 5 | nbr,
            mask << 5 | nz.min(15),
            fine << 5 | up,
        ];
        for (j, (c, v)) in self.ctx.iter_mut().zip(vals).enumerate() {
            let b = if j == 10 { mode << 8 | chroma } else { base };
            *c = hash2(hash2(b, v), j as u32 + 0x4A00);
        }
        if size > 0 {
            // Extra bits: the symbol's size matters to every context.
            for c in &mut self.ctx {
                *c = hash2(*c, size);
            }
        }
    }

    /// Predictions of the coefficient at zigzag index `k > 0` (quantised)
    /// from the block above and from the block to the left: the value that
    /// makes this block's top (left) edge continue the bottom (right) edge
    /// of that neighbour in the coefficient's column (row) frequency, from
    /// the neighbour's coefficients and this block's ones decoded so far
    /// (those not decoded yet count as 0).
    pub(crate) fn edge_predictions(&self, k: usize, quant: &[u16; 64]) -> (i32, i32) {
        let z = usize::from(ZIGZAG[k]);
        let (r, c) = (z / 8, z % 8);
        let side = |nbr: &[i32; 64], fixed: usize, own: usize, vertical: bool| {
            let mut num = 0i64;
            for (t, &w) in EDGE.iter().enumerate() {
                let n = if vertical {
                    t * 8 + fixed
                } else {
                    fixed * 8 + t
                };
                let zz = usize::from(UNZIGZAG[n]);
                let q = i64::from(quant[zz].max(1));
                let sign = if t % 2 == 1 { -1 } else { 1 };
                num += i64::from(nbr[zz]) * q * w * sign;
                if t != own {
                    num -= i64::from(self.coef[zz]) * q * w;
                }
            }
            let den = EDGE[own] * i64::from(quant[k].max(1));
            (num / den).clamp(-2048, 2047) as i32
        };
        (side(&self.above, c, r, true), side(&self.left, r, c, false))
    }

    /// The position in the code being read, hashed with every context.
    #[inline]
    pub(crate) fn bit_state(&self) -> u32 {
        match self.mode {
            Mode::DcCode | Mode::AcCode => (self.len as u32) << 16 | self.code as u32 & 0xFFFF,
            Mode::DcExtra | Mode::AcExtra => {
                let shift = (self.len as u32).saturating_sub(3);
                0x10_0000 | (self.len as u32) << 16 | (self.extra >> shift)
            }
        }
    }

    /// Whether the current byte's bits are scan data being decoded.
    #[inline]
    pub(crate) fn decoding(&self) -> bool {
        self.active && self.phase == Phase::Scan && !self.finished
    }
}

/// A coefficient (or difference) in `-15..=15`: exact up to 7, then the
/// sign with 8 plus the magnitude's bit length beyond 3.
#[inline]
pub(crate) fn bucket(v: i32) -> u32 {
    let m = v.unsigned_abs();
    let b = if m <= 7 {
        m
    } else {
        (8 + (32 - m.leading_zeros()) - 4).min(15)
    };
    if v < 0 { b | 16 } else { b }
}

impl Default for JpegContexts {
    fn default() -> Self {
        Self::new()
    }
}

impl ContextModel for JpegContexts {
    fn contexts(&self) -> usize {
        1
    }

    fn hashes(&self, _ctx: &ByteCtx<'_>, out: &mut [u32]) {
        out[0] = if self.phase == Phase::Scan && !self.finished && !self.after_ff {
            hash2(
                (self.mode as u32) << 8 | self.k as u32,
                self.bit_state() ^ (self.scan_component() as u32) << 24,
            )
        } else {
            hash2(self.phase as u32, 0x4A50)
        };
    }

    fn selector_size(&self) -> usize {
        129 * 8
    }

    fn selector(&self, _ctx: &ByteCtx<'_>) -> usize {
        if self.phase == Phase::Scan && !self.finished && !self.after_ff {
            let chroma = usize::from(self.scan[self.scan_component()].frame > 0);
            1 + chroma * 64 + self.k.min(63)
        } else {
            0
        }
    }

    fn bit_inputs(&self) -> usize {
        BIT_INPUTS
    }

    fn begin_byte(&mut self, _ctx: &ByteCtx<'_>) {
        self.active = self.phase == Phase::Scan && !self.after_ff;
    }

    fn predict_bit(&mut self, _c0: u32, _i: u32, out: &mut [i32]) {
        self.predicted = self.decoding();
        if !self.predicted {
            out.fill(0);
            return;
        }
        let hs = self.bit_state();
        let mut x = [0i32; MIX_INPUTS];
        for j in 0..CONTEXTS {
            let i = (hash2(self.ctx[j], hs) >> (32 - TABLE_BITS)) as usize;
            self.idx[j] = i;
            let e = self.table[i];
            x[j] = if e & 1023 == 0 { 0 } else { stretch(e >> 16) };
            out[j] = x[j];
            x[CONTEXTS + j] = self.maps[j].stretched(self.states[i]);
        }
        x[2 * CONTEXTS] = 256;
        let fc = self.scan[self.scan_component()].frame;
        let chroma = usize::from(fc > 0);
        let mode = self.mode as usize;
        let set1 = (chroma * 4 + mode) * 64 + self.k.min(63);
        let extra = if matches!(self.mode, Mode::DcExtra | Mode::AcExtra) {
            self.size as usize
        } else {
            0
        };
        let set2 = ((chroma * 4 + mode) * 17 + self.len.min(16)) * 16 + extra.min(15);
        if self.own_mixers {
            out[CONTEXTS] = self.mix1.mix(x, set1);
            out[CONTEXTS + 1] = self.mix2.mix(x, set2);
        }
        self.inputs = x;
    }

    fn update_bit(&mut self, bit: u32) {
        if self.predicted {
            for (&i, map) in self.idx.iter().zip(&mut self.maps) {
                let s = self.states[i];
                map.update(s, bit, 1023);
                self.states[i] = STATES.next(s, bit);
                let e = self.table[i];
                let n = e & 1023;
                let p = i64::from(e >> 10);
                let target = i64::from(bit) << 22;
                let p = p + (target - p) * 2 / (2 * i64::from(n) + 3);
                self.table[i] = (p as u32) << 10 | (n + u32::from(n < LIMIT));
            }
            if self.own_mixers {
                self.mix1.update(bit);
                self.mix2.update(bit);
            }
            self.predicted = false;
        }
        if self.decoding() {
            self.scan_bit(bit);
        }
    }

    fn observe(&mut self, _data: &[u8], _pos: usize, byte: u8) {
        if self.phase != Phase::Scan {
            self.header_byte(byte);
            return;
        }
        if !self.after_ff {
            self.after_ff = byte == 0xFF;
            return;
        }
        match byte {
            0x00 => self.after_ff = false,
            0xFF => {}
            0xD0..=0xD7 => {
                self.after_ff = false;
                self.restart();
            }
            _ => {
                self.after_ff = false;
                self.phase = Phase::MarkerCode;
                self.marker_code(byte);
            }
        }
    }

    fn detected(&self) -> bool {
        true
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Runs the family's decoder over `data` (which starts with `FF D8 FF`)
    /// without predicting; returns it.
    pub(crate) fn follow(data: &[u8]) -> JpegContexts {
        let mut j = JpegContexts::new();
        for &b in &data[3..] {
            j.active = j.phase == Phase::Scan && !j.after_ff;
            for i in (0..8).rev() {
                let bit = u32::from(b >> i) & 1;
                let mut out = [0i32; BIT_INPUTS];
                j.predict_bit(0, i, &mut out);
                if j.predicted {
                    for (c, &x) in out.iter().enumerate() {
                        let p = f64::from(crate::logistic::squash(x)) / 65536.0;
                        let p = if bit == 1 { p } else { 1.0 - p };
                        j.cost[c] -= p.log2() / 8.0;
                    }
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
    fn follows_a_baseline_scan_to_its_end() {
        let j = follow(JPEG);
        // 128x96 pixels, 4:2:0 or 4:4:4: every MCU decoded, then EOI.
        assert!(j.finished, "mcu {} of {}", j.mcu, j.mcus);
        assert_eq!(j.mcu, j.mcus);
        assert_eq!(j.phase, Phase::MarkerFf);
        // The family's own mix codes the scan smaller than its bits.
        // (Its scan starts at byte 623.)
        let scan_bytes = (JPEG.len() - 623) as f64;
        assert!(j.cost[CONTEXTS] < scan_bytes, "{:?}", j.cost);
        // A damaged code stops the family (it never panics).
        let mut bad = JPEG.to_vec();
        let n = bad.len();
        bad[n - 300..n - 200].fill(0xFE);
        follow(&bad);
    }

    #[test]
    fn huffman_tables_decode_canonical_codes() {
        // Lengths: two codes of 2 bits, one of 3: 00, 01, 100.
        let mut counts = [0u8; 16];
        counts[1] = 2;
        counts[2] = 1;
        let h = Huffman::new(&counts, &[5, 7, 9]).unwrap();
        assert_eq!(h.symbol(0, 1), None);
        assert_eq!(h.symbol(0, 2), Some(5));
        assert_eq!(h.symbol(1, 2), Some(7));
        assert_eq!(h.symbol(2, 2), None);
        assert_eq!(h.symbol(4, 3), Some(9));
        assert_eq!(h.symbol(5, 3), None);
        // Three codes of one bit do not fit.
        let mut over = [0u8; 16];
        over[0] = 3;
        assert!(Huffman::new(&over, &[1, 2, 3]).is_none());
    }

    #[test]
    fn buckets_keep_small_values_and_signs() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(7), 7);
        assert_eq!(bucket(-3), 19);
        assert_eq!(bucket(8), 8);
        assert_eq!(bucket(1000), 14);
        assert_eq!(bucket(1 << 20), 15);
        assert_eq!(bucket(-1000), 30);
    }
}
