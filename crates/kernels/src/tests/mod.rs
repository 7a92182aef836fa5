//! Crate-internal tests: every instruction set and thread count against the scalar
//! path, the scalar path against independent naive code, and the elementwise functions
//! against `f64` references.
//!
//! Tests pass [`Exec`] explicitly to the internal entry points, so they never touch the
//! process-wide settings; the few that test those settings hold [`GLOBAL`].

mod golden;
mod math;
mod matmul;
mod optim;
mod pool;
mod rows;
mod serial;

use crate::{Exec, Isa};
use std::sync::Mutex;

/// Held by tests that change `force_isa` / `set_num_threads`.
pub(crate) static GLOBAL: Mutex<()> = Mutex::new(());

/// Every instruction set this CPU runs; prints the ones it lacks, so a skipped path is
/// visible in `cargo test -- --nocapture` output and never passes silently unnoticed.
pub(crate) fn isas() -> Vec<Isa> {
    let (have, lack): (Vec<Isa>, Vec<Isa>) = Isa::ALL.into_iter().partition(|i| i.is_supported());
    for isa in lack {
        eprintln!("NOTE: skipping the {isa} path: this CPU does not support it");
    }
    have
}

/// Every (instruction set, thread count) pair to compare with the scalar reference.
pub(crate) fn execs() -> Vec<Exec> {
    let mut v = Vec::new();
    for isa in isas() {
        for threads in [1, 2, 3] {
            v.push(Exec { isa, threads });
        }
    }
    v
}

/// The reference execution: scalar, one thread.
pub(crate) const REF: Exec = Exec {
    isa: Isa::Scalar,
    threads: 1,
};

/// SplitMix64: a small seeded generator for test data.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `[lo, hi)`.
    pub(crate) fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        let u = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * u
    }
    pub(crate) fn vec(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n).map(|_| self.uniform(lo, hi)).collect()
    }
}

/// Asserts two slices are identical bit for bit.
#[track_caller]
pub(crate) fn assert_bits(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            g.to_bits() == w.to_bits(),
            "{what}: element {i}: got {g:e} ({:#010x}), want {w:e} ({:#010x})",
            g.to_bits(),
            w.to_bits()
        );
    }
}

/// Awkward lengths: empty, single, around vector and reduction widths, and long.
pub(crate) const SIZES: [usize; 14] = [0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 63, 65, 1000];
