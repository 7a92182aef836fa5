//! The APM stages that refine the mixer's output.
//!
//! [`Apm`] is one adaptive probability map (also called SSE);
//! `ApmChain` is the v1 model's pair of them (order 1 and hashed order 2),
//! selected by the `apms` bits of the configuration.

use crate::logistic::{squash, stretch};

/// Adaptive probability map: refines a probability given a context by
/// interpolating between 33 learned points along the stretch axis.
///
/// Each point is stored as its (wrapping, 16-bit) difference from the
/// identity map, so a zeroed allocation, which the operating system provides
/// lazily, is a fresh map: creating one costs nothing whatever its size.
#[derive(Debug, Clone)]
pub struct Apm {
    t: Vec<u16>,
    identity: [u16; 33],
    index: usize,
    rate: u32,
}

impl Apm {
    /// Walks the map (`snapshot.rs`).
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        v.u16s(&mut self.t);
    }

    /// `contexts` maps, each starting as the identity; `rate` is the
    /// adaptation shift (larger is slower, about 6..=8).
    pub fn new(contexts: usize, rate: u32) -> Self {
        let mut identity = [0u16; 33];
        for (j, v) in identity.iter_mut().enumerate() {
            *v = squash((j as i32 - 16) * 128).min(65535) as u16;
        }
        let t = vec![0; contexts * 33];
        // A map of 2^16 contexts (4.1 MiB) is read and written at scattered
        // contexts: huge pages fault it in a few times, not a thousand
        // (a 4 KiB input touched nearly every 4 KiB page of each).
        sep_kernels::advise_huge_pages(&t);
        Apm {
            t,
            identity,
            index: 0,
            rate,
        }
    }

    #[inline]
    fn point(&self, i: usize) -> u32 {
        u32::from(self.identity[i % 33].wrapping_add(self.t[i]))
    }

    /// The refined 16-bit probability of `p` in context `ctx`.
    #[inline]
    pub fn refine(&mut self, p: u32, ctx: usize) -> u32 {
        self.refine_stretched(stretch(p), ctx)
    }

    /// The refined probability of the stretched probability `d`
    /// (`-2047..=2047`) in context `ctx`.
    #[inline]
    pub fn refine_stretched(&mut self, d: i32, ctx: usize) -> u32 {
        let s = (d.clamp(-2047, 2047) + 2048) as u32; // 1..=4095
        let lo = (s >> 7) as usize;
        let w = s & 127;
        let i = ctx * 33 + lo;
        self.index = i + usize::from(w >= 64);
        let (a, b) = (
            u32::from(self.identity[lo].wrapping_add(self.t[i])),
            u32::from(self.identity[lo + 1].wrapping_add(self.t[i + 1])),
        );
        (a * (128 - w) + b * w) >> 7
    }

    /// Loads the cache lines of context `ctx`'s row without changing
    /// anything (a prefetch: the read's value is only returned so that it is
    /// not optimised away).
    #[inline]
    pub fn touch(&self, ctx: usize) -> u16 {
        let i = ctx * 33;
        self.t[i] ^ self.t[i + 32]
    }

    /// Starts loading context `ctx`'s row into the cache (a hint: changes
    /// nothing), so that a later [`refine_stretched`](Self::refine_stretched)
    /// of `ctx` does not wait for memory.
    #[inline]
    pub fn prefetch(&self, ctx: usize) {
        let i = ctx * 33;
        sep_kernels::prefetch(&self.t, i);
        sep_kernels::prefetch(&self.t, i + 32);
    }

    /// Moves the point nearest to the last refined input towards `bit`.
    #[inline]
    pub fn update(&mut self, bit: u32) {
        let target = if bit == 1 { 65535 } else { 0 };
        let v = self.point(self.index) as i32;
        let v = (v + ((target - v) >> self.rate)) as u16;
        self.t[self.index] = v.wrapping_sub(self.identity[self.index % 33]);
    }
}

/// A final-stage APM averaged with its input, learning only at bits it
/// refined: `refine` gives `ceil((p + apm(stretch(p))) / 2)` clamped to
/// `1..=65535` and marks the bit; `update` teaches the map that bit and
/// clears the mark (the stage of the image families from revision 16 on,
/// doc/FORMAT.md 4.27.2, 4.29.2, 4.33.2).
#[derive(Debug, Clone)]
pub struct AveragedApm {
    apm: Apm,
    pending: bool,
}

impl AveragedApm {
    /// `contexts` maps at adaptation shift `rate` (as [`Apm::new`]).
    pub fn new(contexts: usize, rate: u32) -> Self {
        AveragedApm {
            apm: Apm::new(contexts, rate),
            pending: false,
        }
    }

    /// The 16-bit probability `p` refined in context `ctx` and averaged
    /// with `p`.
    #[inline]
    pub fn refine(&mut self, p: u32, ctx: usize) -> u32 {
        let a = self.apm.refine_stretched(stretch(p.clamp(1, 65535)), ctx);
        self.pending = true;
        (p + a).div_ceil(2).clamp(1, 65535)
    }

    /// Starts loading the row that [`refine`](Self::refine) will read in
    /// context `ctx` (a cache hint: changes nothing).
    #[inline]
    pub fn prefetch(&self, ctx: usize) {
        self.apm.prefetch(ctx);
    }

    /// Learns `bit` if the last bit was refined.
    #[inline]
    pub fn update(&mut self, bit: u32) {
        if self.pending {
            self.apm.update(bit);
            self.pending = false;
        }
    }
}

/// The v1 model's APM stage: bit 0 of `apms` an APM on the previous byte,
/// bit 1 one on a hash of the last two bytes, averaged with the mixer's
/// output.
#[derive(Debug, Clone)]
pub(crate) struct ApmChain {
    apms: u8,
    order1: Apm,
    order2: Apm,
}

impl ApmChain {
    /// Walks both maps (`snapshot.rs`).
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        self.order1.visit(v);
        self.order2.visit(v);
    }

    /// The APMs that the `apms` bits select (the others take no memory),
    /// with adaptation shift `rate` (7 up to CM revision 2, 6 in revision
    /// 4).
    pub fn with_rate(apms: u8, rate: u32) -> Self {
        ApmChain {
            apms,
            order1: Apm::new(if apms & 1 != 0 { 1 << 16 } else { 0 }, rate),
            order2: Apm::new(if apms & 2 != 0 { 1 << 16 } else { 0 }, rate),
        }
    }

    /// The final probability from the mixer's probability `pm` and its
    /// stretched form `d`; `c0` is the partial byte, `c1` the previous byte,
    /// `h2` an 8-bit hash of the last two bytes.
    #[inline]
    pub fn refine(&mut self, pm: u32, d: i32, c0: u32, c1: u32, h2: usize) -> u32 {
        let (o1, o2) = Self::contexts(c0, c1, h2);
        match self.apms {
            0 => pm,
            1 => (pm + 3 * self.order1.refine_stretched(d, o1) + 2) >> 2,
            2 => (pm + 3 * self.order2.refine_stretched(d, o2) + 2) >> 2,
            _ => {
                let a1 = self.order1.refine_stretched(d, o1);
                let a2 = self.order2.refine_stretched(d, o2);
                (2 * pm + 3 * a1 + 3 * a2 + 4) >> 3
            }
        }
        .clamp(1, 65535)
    }

    /// The contexts of the order-1 and order-2 APMs ([`refine`](Self::refine)'s
    /// arguments).
    #[inline]
    fn contexts(c0: u32, c1: u32, h2: usize) -> (usize, usize) {
        ((c0 | c1 << 8) as usize, c0 as usize | h2 << 8)
    }

    /// Starts loading the rows that [`refine`](Self::refine) with these
    /// arguments will read (a cache hint: changes nothing).
    #[inline]
    pub fn prefetch(&self, c0: u32, c1: u32, h2: usize) {
        let (o1, o2) = Self::contexts(c0, c1, h2);
        if self.apms & 1 != 0 {
            self.order1.prefetch(o1);
        }
        if self.apms & 2 != 0 {
            self.order2.prefetch(o2);
        }
    }

    /// Trains the APMs that [`refine`](Self::refine) used.
    #[inline]
    pub fn update(&mut self, bit: u32) {
        if self.apms & 1 != 0 {
            self.order1.update(bit);
        }
        if self.apms & 2 != 0 {
            self.order2.update(bit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apm_starts_near_identity_and_adapts() {
        let mut a = Apm::new(2, 6);
        for p in [2000u32, 20000, 32768, 50000, 63000] {
            let r = a.refine(p, 1);
            assert!(
                (r as i32 - p as i32).abs() < p.min(65536 - p) as i32 / 8 + 64,
                "{p} -> {r}"
            );
        }
        for _ in 0..200 {
            a.refine(32768, 0);
            a.update(1);
        }
        assert!(a.refine(32768, 0) > 60000);
        assert!((a.refine(32768, 1) as i32 - 32768).abs() < 64);
    }

    #[test]
    fn averaged_apm_averages_and_learns_only_refined_bits() {
        let mut a = AveragedApm::new(2, 6);
        let mut plain = Apm::new(2, 6);
        let p = 40000;
        assert_eq!(a.refine(p, 0), (p + plain.refine(p, 0)).div_ceil(2));
        // Updates without a refine in between teach nothing.
        a.update(1);
        for _ in 0..50 {
            a.update(1);
        }
        for _ in 0..200 {
            a.refine(32768, 0);
            a.update(1);
        }
        let r = a.refine(32768, 0);
        // Half-way between the input and a map that learned 1s.
        assert!(r > 46000 && r < 49200, "{r}");
        // The other context was never taught.
        assert!((a.refine(32768, 1) as i32 - 32768).abs() < 64);
        assert!(a.refine(0, 1) >= 1 && a.refine(65535, 1) <= 65535);
    }
}
