//! The dynamic Markov family of CM revision 26 (doc/FORMAT.md 4.37.2: the
//! `max` line's twelfth round): a bit-level state graph in the manner of
//! Cormack and Horspool's Dynamic Markov Coding (1987) that grows by
//! cloning the states it enters often, so that each state stands for a
//! variable-length, data-chosen bit history. Unlike the hashed contexts,
//! nothing here is a byte context the lead chose.
//!
//! - **Graph.** Nodes with two successors and two counts (units of
//!   1/[`ONE`] of an observation). The initial graph is the order-1 bit
//!   tree: a node for each previous byte and partial byte (256 * 255), the
//!   last bit of a byte leading to the first node of the byte just coded.
//! - **Cloning.** Taking edge `b` of node `s` to `t`: when `s`'s count of
//!   `b` is at least the threshold and `t`'s total exceeds it by the
//!   threshold, a clone of `t` takes the share `n_b(s) / total(t)` of
//!   `t`'s counts (which keeps the rest) and its successors, and becomes
//!   `s`'s successor on `b`. The threshold grows as the pool fills; a
//!   full pool is reset to the initial graph.
//! - **Inputs** ([`INPUTS`] per graph, [`GRAPHS`] graphs with different
//!   thresholds): the stretched count ratio of the current node, and an
//!   adaptive probability indexed by the bit position and the
//!   quantized counts of the node.
//!
//! Every input and table is declared here; everything is integer.

use super::{ByteCtx, ContextModel};
use crate::apm::AveragedApm;
use crate::cm::CmConfig;
use crate::logistic::stretch;
use crate::prim::{AdaptiveProbs, StateMap};
use crate::state::STATES;

/// Graphs (each with its own clone threshold).
const GRAPHS: usize = 2;
/// Mixer inputs per graph.
const INPUTS: usize = 2;
/// One observation in count units.
const ONE: u32 = 16;
/// Counts are halved when their total exceeds this (count units).
const LIMIT: u32 = 255 * ONE;
/// The clone thresholds (count units) of the graphs, at an empty pool.
const THRESHOLDS: [u32; GRAPHS] = [ONE, 4 * ONE];
/// Nodes of the initial graph.
const INITIAL: usize = 256 * 255;

/// Nodes each graph may hold under `config` (the block's table bits).
fn capacity(config: &CmConfig) -> usize {
    let bits = config.table_bits.clamp(16, 29);
    let sh = env("DMC_CAPSHIFT", 7) as u8;
    (1usize << (bits - sh)).max(INITIAL * 2)
}

/// Bytes the family allocates under `config`, at most.
pub(crate) fn memory(config: &CmConfig) -> u64 {
    GRAPHS as u64 * capacity(config) as u64 * 13 + (GRAPHS * INPUTS * 8 * 1024 * 4) as u64
}

/// The experiment's knobs, fixed at the values measured best.
fn env(_k: &str, d: u32) -> u32 {
    d
}

/// Quantizes a count (units of [`ONE`]) to 0..16.
#[inline]
fn level(n: u32) -> usize {
    let c = n * 4 / ONE;
    if c < 4 {
        c as usize
    } else {
        let l = 31 - c.leading_zeros();
        (4 + 2 * (l as usize - 2) + ((c >> (l - 1)) & 1) as usize).min(15)
    }
}

/// One dynamic Markov graph.
#[derive(Debug, Clone)]
struct Graph {
    /// Successors, two per node.
    next: Vec<u32>,
    /// Counts of a 0 and of a 1, two per node.
    counts: Vec<u16>,
    /// Bit-history state per node.
    hist: Vec<u8>,
    /// What each bit-history state predicts.
    map: StateMap,
    /// Whether the bit-history input is on.
    use_hist: bool,
    /// Most nodes.
    capacity: usize,
    /// The clone threshold at an empty pool.
    threshold: u32,
    /// The current node.
    cur: usize,
    /// The adaptive probabilities of the second input.
    probs: AdaptiveProbs,
    /// Its entry for the current bit.
    index: usize,
    limit: u32,
    /// The pool is full: the graph is reset at the end of the byte.
    full: bool,
}

impl Graph {
    fn new(capacity: usize, threshold: u32) -> Self {
        let mut g = Graph {
            next: Vec::new(),
            counts: Vec::new(),
            capacity,
            threshold,
            cur: 0,
            probs: AdaptiveProbs::new(8 * 16 * 16, 1023),
            hist: Vec::new(),
            map: StateMap::default(),
            use_hist: env("DMC_HIST", 0) != 0,
            index: 0,
            full: false,
            limit: env("DMC_LIMIT", LIMIT),
        };
        g.reset();
        g
    }

    /// The initial graph (the order-1 bit tree), at the node of byte 0's
    /// first bit.
    fn reset(&mut self) {
        self.next.clear();
        self.counts.clear();
        self.hist.clear();
        self.hist.resize(INITIAL, 0);
        self.next.reserve(INITIAL * 2);
        self.counts.reserve(INITIAL * 2);
        for c1 in 0..256u32 {
            for c0 in 1..256u32 {
                for b in 0..2 {
                    let to = c0 * 2 + b;
                    let node = if to < 256 {
                        c1 * 255 + to - 1
                    } else {
                        (to & 0xFF) * 255
                    };
                    self.next.push(node);
                    self.counts.push(0);
                }
            }
        }
        self.cur = 0;
        self.full = false;
    }

    /// The byte `byte` ends: a full pool is reset, at the node of `byte`.
    fn end_byte(&mut self, byte: u8) {
        if self.full {
            self.reset();
            self.cur = usize::from(byte) * 255;
        }
    }

    #[inline]
    fn predict(&mut self, i: u32, out: &mut [i32]) {
        let n0 = u32::from(self.counts[self.cur * 2]);
        let n1 = u32::from(self.counts[self.cur * 2 + 1]);
        let p = ((n1 * 2 + ONE) << 15) / (n0 + n1 + ONE);
        out[0] = stretch(p.clamp(1, 65535));
        self.index = (i as usize * 16 + level(n0)) * 16 + level(n1);
        out[1] = self.probs.stretched(self.index);
        if self.use_hist {
            out[2] = self.map.stretched(self.hist[self.cur]);
        }
    }

    #[inline]
    fn update(&mut self, bit: u32) {
        self.probs.update(self.index, bit);
        if self.use_hist {
            let h = self.hist[self.cur];
            self.map.update(h, bit, 1023);
            self.hist[self.cur] = STATES.next(h, bit);
        }
        self.step(bit);
    }

    /// Takes edge `bit` of the current node, cloning its target first
    /// when the edge is busy.
    #[inline]
    fn step(&mut self, bit: u32) {
        let s = self.cur;
        let e = s * 2 + bit as usize;
        let mut t = self.next[e] as usize;
        let nb = u32::from(self.counts[e]);
        let total = u32::from(self.counts[t * 2]) + u32::from(self.counts[t * 2 + 1]);
        let used = self.next.len() / 2;
        let thr = self.threshold
            + (u64::from(self.threshold) * 3 * used as u64 / self.capacity as u64) as u32;
        if nb >= thr && total >= nb + thr {
            if used >= self.capacity {
                self.full = true;
            }
        }
        if nb >= thr && total >= nb + thr && !self.full {
            let n = self.next.len() / 2;
            for k in 0..2 {
                let c = u32::from(self.counts[t * 2 + k]);
                let share = (u64::from(c) * u64::from(nb) / u64::from(total)) as u32;
                self.counts[t * 2 + k] = (c - share) as u16;
                self.counts.push(share as u16);
                let nx = self.next[t * 2 + k];
                self.next.push(nx);
            }
            let h = self.hist[t];
            self.hist.push(h);
            self.next[e] = n as u32;
            t = n;
        }
        let mut c0 = u32::from(self.counts[e]);
        let mut c1 = u32::from(self.counts[e ^ 1]);
        c0 += ONE;
        if c0 + c1 > self.limit {
            c0 >>= 1;
            c1 >>= 1;
        }
        self.counts[e] = c0 as u16;
        self.counts[e ^ 1] = c1 as u16;
        self.cur = t;
    }
}

/// The revision-26 dynamic Markov family.
#[derive(Debug, Clone)]
pub(crate) struct DmcContexts {
    graphs: Vec<Graph>,
    /// Bits of the current byte the graphs have taken.
    bits: u32,
    /// Inputs per graph.
    inputs: usize,
    /// The final APM on the first graph's counts, if on.
    apm: Option<AveragedApm>,
}

impl DmcContexts {
    /// A fresh family for `config` (the block's `table_bits`).
    pub fn new(config: &CmConfig) -> Self {
        let cap = capacity(config);
        DmcContexts {
            graphs: [env("DMC_T0", THRESHOLDS[0]), env("DMC_T1", THRESHOLDS[1])]
                .iter()
                .take(env("DMC_GRAPHS", GRAPHS as u32) as usize)
                .map(|&t| Graph::new(cap, t))
                .collect(),
            bits: 0,
            inputs: INPUTS + (env("DMC_HIST", 0) != 0) as usize,
            apm: (env("DMC_APM", 0) != 0)
                .then(|| AveragedApm::new(8 * 16 * 16, env("DMC_APMRATE", 7))),
        }
    }
}

impl ContextModel for DmcContexts {
    fn contexts(&self) -> usize {
        0
    }

    fn hashes(&self, _ctx: &ByteCtx<'_>, _out: &mut [u32]) {}

    fn bit_inputs(&self) -> usize {
        self.graphs.len() * self.inputs
    }

    fn begin_byte(&mut self, _ctx: &ByteCtx<'_>) {
        self.bits = 0;
    }

    fn predict_bit(&mut self, _c0: u32, i: u32, out: &mut [i32]) {
        for (g, o) in self
            .graphs
            .iter_mut()
            .zip(out.chunks_exact_mut(self.inputs))
        {
            g.predict(i, o);
        }
    }

    fn refine_final(&mut self, p: u32, _c0: u32) -> u32 {
        match self.apm.as_mut() {
            Some(a) => a.refine(p, self.graphs[0].index),
            None => p,
        }
    }

    fn update_bit(&mut self, bit: u32) {
        if let Some(a) = self.apm.as_mut() {
            a.update(bit);
        }
        for g in &mut self.graphs {
            g.update(bit);
        }
        self.bits += 1;
    }

    fn observe(&mut self, _data: &[u8], _pos: usize, byte: u8) {
        // A byte coded by revision 9's shortcut: the graphs take its bits.
        while self.bits < 8 {
            let bit = u32::from(byte >> (7 - self.bits)) & 1;
            for g in &mut self.graphs {
                g.step(bit);
            }
            self.bits += 1;
        }
        for g in &mut self.graphs {
            g.end_byte(byte);
        }
        self.bits = 0;
    }

    fn visit_state(&mut self, _v: &mut dyn crate::snapshot::Visitor) {
        // A prior does not hold the graphs: a walk resets them, so the
        // model a snapshot restores and the one walked code alike.
        for g in &mut self.graphs {
            g.reset();
        }
        self.bits = 0;
    }
}
