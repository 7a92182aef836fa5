//! A byte-oriented range coder with a 56-bit window.
//!
//! The coder keeps an interval `[low, low + range)` inside a window of
//! `2^56`. Coding a symbol with cumulative frequency `cum` and frequency `freq`
//! out of `2^t` narrows it to `r = range >> t`, `low += r * cum`,
//! `range = r * freq` (the last symbol of a table takes the whole remainder
//! `range - r * cum`, so no code space is wasted at the top). Whenever
//! `range < 2^48`, one byte leaves the top of the window.
//!
//! Invariants, kept by [`Encoder::normalize`] and [`Decoder::normalize`]:
//! * `2^48 <= range < 2^56` between calls;
//! * encoder: `low < 2^56` between calls; during a call `low` may reach
//!   bit 56, which is a carry into bytes already produced. Those bytes are held
//!   back (one `cache` byte followed by `pending` bytes of `0xFF`) until it is
//!   known whether a carry reaches them, as in LZMA's coder;
//! * decoder: `code = value - low < range` for every valid stream.
//!
//! With `range >= 2^48` and `t <= 24`, `r >= 2^24`, so the truncation in
//! `range >> t` costs less than `2^-24` of the range per symbol.
//!
//! The stream needs no end marker and no length prefix of its own: the
//! decoder reads zeros past the end, and [`Encoder::finish`] emits only the
//! bytes needed to point inside the final interval, then drops trailing zero
//! bytes. The container stores each stream's length.

use crate::quant::{FREQ_BITS, FreqTable};

/// Largest `t` accepted for a table total of `2^t`.
pub const MAX_TOTAL_BITS: u32 = 24;
/// Precision of binary probabilities: `P(1) = p1 / 2^16`.
pub const BIT_PROB_BITS: u32 = 16;

const WINDOW_BITS: u32 = 56;
const TOP: u64 = 1 << WINDOW_BITS;
const MASK: u64 = TOP - 1;
const BOT: u64 = 1 << (WINDOW_BITS - 8);

/// Range encoder writing into an owned byte vector.
#[derive(Debug, Clone)]
pub struct Encoder {
    low: u64,
    range: u64,
    /// The byte that a carry may still increment.
    cache: u8,
    /// Whether `cache` holds a real byte (false only before the first byte).
    has_cache: bool,
    /// Number of `0xFF` bytes after `cache`, also waiting for a possible carry.
    pending: u64,
    out: Vec<u8>,
}

impl Default for Encoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Encoder {
    /// A new encoder with an empty output.
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// A new encoder whose output vector has room for `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> Self {
        Encoder {
            low: 0,
            range: MASK,
            cache: 0,
            has_cache: false,
            pending: 0,
            out: Vec::with_capacity(capacity),
        }
    }

    /// Bytes produced so far (the final count is known only after
    /// [`finish`](Self::finish)).
    pub fn bytes_so_far(&self) -> usize {
        self.out.len() + usize::from(self.has_cache) + self.pending as usize
    }

    /// Codes the interval `[cum, cum + freq)` of a table whose total is
    /// `2^total_bits`.
    #[inline]
    pub fn encode(&mut self, cum: u32, freq: u32, total_bits: u32) {
        debug_assert!((1..=MAX_TOTAL_BITS).contains(&total_bits));
        debug_assert!(freq > 0 && u64::from(cum) + u64::from(freq) <= 1 << total_bits);
        let r = self.range >> total_bits;
        let base = r * u64::from(cum);
        self.low += base;
        self.range = if cum + freq == 1 << total_bits {
            self.range - base
        } else {
            r * u64::from(freq)
        };
        self.normalize();
    }

    /// Codes one bit with `P(1) = p1 / 2^16`, `p1` in `1..=65535`.
    #[inline]
    pub fn encode_bit(&mut self, bit: u32, p1: u32) {
        debug_assert!((1..1 << BIT_PROB_BITS).contains(&p1));
        let split = (self.range >> BIT_PROB_BITS) * u64::from((1 << BIT_PROB_BITS) - p1);
        // Branch-free: the bit is unpredictable to the CPU, and a mispredicted
        // branch here costs more than the whole update.
        let take = 0u64.wrapping_sub(u64::from(bit & 1)); // all ones for a 1
        self.low += split & take;
        self.range = (split & !take) | ((self.range - split) & take);
        self.normalize();
    }

    #[inline]
    fn normalize(&mut self) {
        while self.range < BOT {
            self.range <<= 8;
            self.shift_low();
        }
    }

    /// Moves the top byte of `low` out of the window, resolving carries.
    fn shift_low(&mut self) {
        if self.low < (0xFF << (WINDOW_BITS - 8)) || self.low >= TOP {
            let carry = (self.low >> WINDOW_BITS) as u8;
            if self.has_cache {
                self.out.push(self.cache.wrapping_add(carry));
            } else {
                // The coded value lies in [0, 1): nothing can carry out of
                // its first byte.
                debug_assert_eq!(carry, 0);
            }
            for _ in 0..self.pending {
                self.out.push(0xFFu8.wrapping_add(carry));
            }
            self.pending = 0;
            self.cache = (self.low >> (WINDOW_BITS - 8)) as u8;
            self.has_cache = true;
        } else {
            self.pending += 1;
        }
        self.low = (self.low << 8) & MASK;
    }

    /// Ends the stream and returns its bytes.
    ///
    /// Picks the value in `[low, low + range)` with the most trailing zero
    /// bits, emits its significant bytes, and drops trailing zero bytes (the
    /// decoder reads zeros past the end).
    pub fn finish(mut self) -> Vec<u8> {
        let mut bytes = WINDOW_BITS / 8;
        for k in 0..=WINDOW_BITS / 8 {
            let unit = 1u64 << (WINDOW_BITS - 8 * k);
            let v = (self.low + unit - 1) & !(unit - 1);
            if v < self.low + self.range {
                self.low = v;
                bytes = k;
                break;
            }
        }
        // Any carry in the rounded value is resolved by the first shift; a
        // value of exactly 2^56 needs one shift even when `bytes == 0`.
        for _ in 0..bytes.max(u32::from(self.low >= TOP)) {
            self.shift_low();
        }
        // Flush the held-back bytes: push a zero byte through the window.
        self.low = 0;
        self.shift_low();
        while self.out.last() == Some(&0) {
            self.out.pop();
        }
        self.out
    }
}

/// Range decoder over a borrowed byte slice; reads zeros past its end.
#[derive(Debug, Clone)]
pub struct Decoder<'a> {
    code: u64,
    range: u64,
    /// `range >> total_bits` of the current multi-symbol decode.
    r: u64,
    input: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    /// A decoder positioned at the start of `input`.
    pub fn new(input: &'a [u8]) -> Self {
        let mut d = Decoder {
            code: 0,
            range: MASK,
            r: 0,
            input,
            pos: 0,
        };
        for _ in 0..WINDOW_BITS / 8 {
            d.code = (d.code << 8) | u64::from(d.next_byte());
        }
        d
    }

    #[inline]
    fn next_byte(&mut self) -> u8 {
        let b = self.input.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    /// How many bytes past the end of the input the decoder has read. A
    /// valid stream may be read past its end (trailing zeros are dropped by
    /// the encoder), so this is informative only.
    pub fn overrun(&self) -> usize {
        self.pos.saturating_sub(self.input.len())
    }

    /// Bytes of the input the decoder has not read (yet). Once every symbol of a
    /// stream written by [`Encoder::finish`] is decoded, this is 0: the encoder
    /// emits at most the 7 bytes its window holds past the ones it shifted out,
    /// and the decoder has read exactly those 7 ahead.
    pub fn unread(&self) -> usize {
        self.input.len().saturating_sub(self.pos)
    }

    /// Whether the input is exactly what [`Encoder::finish`] writes for the
    /// symbols decoded so far; call it once every symbol is decoded. The
    /// encoder ends a stream with the value of the final interval that has the
    /// most trailing zero bits and drops trailing zero bytes, so its stream is
    /// read to the last byte, does not end in a zero byte, and the decoder's
    /// final window (the 7 bytes it read last, zeros past the end) holds that
    /// value. Anything else (bytes appended, or changed past the point that
    /// decides the symbols) was not written by an encoder. `Err` says what is
    /// wrong.
    pub fn check_finished(&self) -> Result<(), String> {
        if self.unread() > 0 {
            return Err(format!(
                "{} byte(s) after the last one its range decoder reads",
                self.unread()
            ));
        }
        if self.input.last() == Some(&0) {
            return Err("ends in a zero byte, which no encoder writes".into());
        }
        let window = (self.pos - (WINDOW_BITS / 8) as usize..self.pos).fold(0u64, |w, i| {
            (w << 8) | u64::from(self.input.get(i).copied().unwrap_or(0))
        });
        let low = window.wrapping_sub(self.code) & MASK;
        // The encoder's choice in `finish`, from the same `low` and `range`.
        let canonical = (0..=WINDOW_BITS / 8)
            .map(|k| {
                let unit = 1u64 << (WINDOW_BITS - 8 * k);
                (low + unit - 1) & !(unit - 1)
            })
            .find(|&v| v < low + self.range)
            .unwrap_or(low)
            & MASK;
        if window != canonical {
            return Err("ends in bytes that no encoder writes (its last bytes are not the shortest end of the stream)".into());
        }
        Ok(())
    }

    /// First half of a multi-symbol decode: the position, in `0..2^total_bits`,
    /// of the coded value. The caller finds the symbol whose interval holds
    /// it and calls [`decode_update`](Self::decode_update).
    #[inline]
    pub fn decode_target(&mut self, total_bits: u32) -> u32 {
        debug_assert!((1..=MAX_TOTAL_BITS).contains(&total_bits));
        self.r = self.range >> total_bits;
        // The last symbol owns the remainder above r * 2^t, so clamp.
        (self.code / self.r).min((1 << total_bits) - 1) as u32
    }

    /// Second half of a multi-symbol decode, with the interval of the symbol
    /// found for the value returned by [`decode_target`](Self::decode_target).
    #[inline]
    pub fn decode_update(&mut self, cum: u32, freq: u32, total_bits: u32) {
        let base = self.r * u64::from(cum);
        // For a valid stream base <= code; on corrupt input wrap instead of
        // panicking (the container's checksum reports the corruption).
        self.code = self.code.wrapping_sub(base) & MASK;
        self.range = if cum + freq == 1 << total_bits {
            self.range - base
        } else {
            self.r * u64::from(freq)
        };
        self.normalize();
    }

    /// Decodes a bit coded with [`Encoder::encode_bit`] and the same `p1`.
    #[inline]
    pub fn decode_bit(&mut self, p1: u32) -> u32 {
        debug_assert!((1..1 << BIT_PROB_BITS).contains(&p1));
        let split = (self.range >> BIT_PROB_BITS) * u64::from((1 << BIT_PROB_BITS) - p1);
        let bit = u64::from(self.code >= split);
        let take = 0u64.wrapping_sub(bit);
        self.code -= split & take;
        self.range = (split & !take) | ((self.range - split) & take);
        self.normalize();
        bit as u32
    }

    #[inline]
    fn normalize(&mut self) {
        while self.range < BOT {
            self.range <<= 8;
            self.code = ((self.code << 8) | u64::from(self.next_byte())) & MASK;
        }
    }
}

impl crate::Coder for Encoder {
    #[inline]
    fn code_bit(&mut self, bit: u32, p1: u32) -> u32 {
        self.encode_bit(bit, p1);
        bit
    }

    #[inline]
    fn code_symbol(&mut self, sym: u32, table: &FreqTable) -> u32 {
        let (cum, freq) = table.interval(sym);
        self.encode(cum, freq, FREQ_BITS);
        sym
    }

    #[inline]
    fn code_uniform(&mut self, sym: u32, bits: u32) -> u32 {
        self.encode(sym, 1, bits);
        sym
    }
}

impl crate::Coder for Decoder<'_> {
    #[inline]
    fn code_bit(&mut self, _bit: u32, p1: u32) -> u32 {
        self.decode_bit(p1)
    }

    #[inline]
    fn code_symbol(&mut self, _sym: u32, table: &FreqTable) -> u32 {
        let target = self.decode_target(FREQ_BITS);
        let sym = table.find(target);
        let (cum, freq) = table.interval(sym);
        self.decode_update(cum, freq, FREQ_BITS);
        sym
    }

    #[inline]
    fn code_uniform(&mut self, _sym: u32, bits: u32) -> u32 {
        let sym = self.decode_target(bits);
        self.decode_update(sym, 1, bits);
        sym
    }
}
