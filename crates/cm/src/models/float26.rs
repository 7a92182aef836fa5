//! Repeated records of CM revision 26 (doc/FORMAT.md 4.37.1): a family
//! next to revision 7's ([`super::float7`]) for arrays of 4-byte numbers
//! in short records (the same layouts, [`Float7Contexts::applies`]).
//!
//! Most records of an array of rotations repeat a recent one. The family
//! keeps the last [`SIZE`] distinct records in move-to-front order and an
//! adaptive count of how often a record repeats the one at each rank
//! (ranks grouped in buckets, one more count for new records), in a
//! context of the previous record's rank. For each bit of a record it
//! turns these counts into a distribution over the kept records that
//! agree with the record's bits coded so far, plus the share of a new
//! record (halved at each bit coded, as if a new record's bits were
//! uniform): the probability of a 1 is one input, and an adaptive table
//! in the context of that probability, the byte in the record and the
//! number of agreeing records is another. All arithmetic is integer.
//!
//! [`Float7Contexts::applies`]: super::float7::Float7Contexts::applies

use super::float::FloatInfo;
use super::{ByteCtx, ContextModel};
use crate::logistic::stretch;
use crate::prim::AdaptiveProbs;

/// Records kept.
const SIZE: usize = 256;

/// Longest record, in bytes, that the family keeps.
const MAX_RECORD_BYTES: usize = 64;

/// Rank buckets: ranks 0..16 alone, then half octaves up to [`SIZE`]
/// (16..24, 24..32, 32..48, ..., 192..256), then one for new records.
const BUCKETS: usize = 16 + 8 + 1;

/// Contexts of the rank counts: the previous record's rank class.
const RANK_CTX: usize = 6;

/// Quantised input levels of the learned table.
const LEVELS: usize = 24;

/// Learned-table entries: level, byte in the record (16), agreeing records
/// (4), bit.
const TABLE: usize = LEVELS * 16 * 4 * 8;

/// Per-bit inputs.
const INPUTS: usize = 2;

/// Bytes the family allocates: the records, the counts and the table.
pub(crate) const MEMORY: u64 =
    (SIZE * MAX_RECORD_BYTES + RANK_CTX * BUCKETS * 4 + TABLE * 4 + SIZE * 2) as u64;

/// The bucket of rank `r` and the number of ranks in it.
#[inline]
fn bucket(r: usize) -> (usize, u64) {
    if r < 16 {
        return (r, 1);
    }
    let mut lo = 16;
    let mut b = 16;
    loop {
        let half = lo / 2;
        if r < lo + half {
            return (b, half as u64);
        }
        if r < 2 * lo {
            return (b + 1, half as u64);
        }
        lo *= 2;
        b += 2;
    }
}

/// The context class of the previous record's rank (`SIZE`: new).
#[inline]
fn rank_class(r: usize) -> usize {
    match r {
        0 => 0,
        1 => 1,
        2 | 3 => 2,
        4..=15 => 3,
        r if r < SIZE => 4,
        _ => 5,
    }
}

/// The revision-26 repeated-record family.
#[derive(Debug, Clone)]
pub(crate) struct Float26Contexts {
    info: FloatInfo,
    /// Bytes per record (0: records too long, the family is idle).
    len: usize,
    /// `SIZE` records of `len` bytes, rank 0 first.
    records: Vec<u8>,
    filled: usize,
    /// Per rank class of the previous record: the counts of each bucket.
    counts: Vec<u32>,
    /// The rank class of the last record.
    class: usize,
    /// The ranks that agree with the record's bytes coded before this byte.
    alive: Vec<u16>,
    /// The weight of each rank for the record being coded.
    weights: Vec<u64>,
    /// Of the agreeing ranks, the ones that agree with the bits of this
    /// byte so far: their weight and byte.
    voters: Vec<(u64, u8)>,
    /// Block position of the byte prepared (`usize::MAX`: none), and its
    /// byte in the record.
    pos: usize,
    at: usize,
    /// Whether the byte is in a record the family follows.
    active: bool,
    table: AdaptiveProbs,
    entry: usize,
}

impl Float26Contexts {
    /// The family for an array laid out as `info`.
    pub fn new(info: FloatInfo) -> Self {
        let elems = info.lag.max(1);
        let len = if elems * info.width <= MAX_RECORD_BYTES {
            elems * info.width
        } else {
            0
        };
        Float26Contexts {
            info,
            len,
            records: vec![0; SIZE * len],
            filled: 0,
            counts: vec![1; RANK_CTX * BUCKETS],
            class: RANK_CTX - 1,
            alive: Vec::with_capacity(SIZE),
            weights: vec![0; SIZE],
            voters: Vec::with_capacity(SIZE),
            pos: usize::MAX,
            at: 0,
            active: false,
            table: AdaptiveProbs::new(TABLE, 255),
            entry: 0,
        }
    }

    /// Learns the record `rec` that just ended: counts its rank's bucket
    /// and moves (or puts) it to the front.
    fn learn(&mut self, rec: &[u8]) {
        let len = self.len;
        let found = (0..self.filled).find(|&r| &self.records[r * len..(r + 1) * len] == rec);
        let (b, last, rank) = match found {
            Some(r) => (bucket(r).0, r, r),
            None => {
                self.filled = (self.filled + 1).min(SIZE);
                (BUCKETS - 1, self.filled - 1, SIZE)
            }
        };
        let c = &mut self.counts[self.class * BUCKETS..(self.class + 1) * BUCKETS];
        c[b] += 32;
        if c[b] > 65535 {
            c.iter_mut().for_each(|n| *n = n.div_ceil(2));
        }
        self.class = rank_class(rank);
        self.records.copy_within(0..last * len, len);
        self.records[..len].copy_from_slice(rec);
    }

    /// The weight of rank `r` (counts times 2^20 over the bucket's size).
    #[inline]
    fn weight(&self, r: usize) -> u64 {
        let (b, n) = bucket(r);
        (u64::from(self.counts[self.class * BUCKETS + b]) << 20) / n
    }
}

impl ContextModel for Float26Contexts {
    fn contexts(&self) -> usize {
        0
    }

    fn hashes(&self, _ctx: &ByteCtx<'_>, _out: &mut [u32]) {}

    fn bit_inputs(&self) -> usize {
        INPUTS
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let (pos, start, len) = (ctx.pos, ctx.st.start, self.len);
        if self.pos == pos {
            return;
        }
        let prev = self.pos;
        self.pos = pos;
        self.active = false;
        self.voters.clear();
        let first = self.info.offset % self.info.width;
        if len == 0 || pos < first + start {
            return;
        }
        let at = (pos - first) % len;
        let rec = pos - at;
        if at == 0 && rec >= start + len {
            self.learn(&ctx.data[rec - len..rec]);
        }
        if rec < start {
            return;
        }
        if at == 0 {
            for r in 0..self.filled {
                self.weights[r] = self.weight(r);
            }
            self.alive.clear();
            self.alive.extend(0..self.filled as u16);
        } else if prev.wrapping_add(1) == pos {
            let b = ctx.data[pos - 1];
            let records = &self.records;
            self.alive
                .retain(|&r| records[usize::from(r) * len + at - 1] == b);
        } else {
            let prefix = &ctx.data[rec..pos];
            self.alive.clear();
            for r in 0..self.filled {
                if self.records[r * len..r * len + at] == *prefix {
                    self.alive.push(r as u16);
                }
            }
        }
        self.at = at;
        self.active = true;
        for &r in &self.alive {
            let r = usize::from(r);
            self.voters
                .push((self.weights[r], self.records[r * len + at]));
        }
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        if !self.active {
            out.fill(0);
            return;
        }
        let prefix = c0 ^ (1 << (7 - i));
        self.voters
            .retain(|&(_, b)| u32::from(b) >> (i + 1) == prefix);
        let mut s = [0u64; 2];
        for &(w, b) in &self.voters {
            s[((b >> i) & 1) as usize] += w;
        }
        let coded = (self.at * 8 + 7 - i as usize).min(63);
        let new = (u64::from(self.counts[self.class * BUCKETS + BUCKETS - 1]) << 20) >> coded;
        let p1 = ((s[1] + new / 2 + 1) << 16) / (s[0] + s[1] + new + 2);
        let st = stretch(p1.clamp(1, 65535) as u32);
        out[0] = st;
        let level = ((st + 2048) * LEVELS as i32 / 4096).clamp(0, LEVELS as i32 - 1) as usize;
        let many = match self.voters.len() {
            0 => 0,
            1 => 1,
            2..=4 => 2,
            _ => 3,
        };
        self.entry = ((level * 16 + self.at.min(15)) * 4 + many) * 8 + i as usize;
        out[1] = self.table.stretched(self.entry);
    }

    fn update_bit(&mut self, bit: u32) {
        if self.active {
            self.table.update(self.entry, bit);
        }
    }
}
