//! Instruction-set selection: runtime detection, the `SEP_KERNELS_ISA` override and
//! [`force_isa`].
//!
//! Every instruction set computes the same bits (that is the point of this crate), so
//! the choice only changes speed. The override exists to test exactly that claim, and
//! to run the slow paths on a machine that has the fast ones.
//!
//! Precedence: [`force_isa`] (when set), else the environment variable
//! `SEP_KERNELS_ISA=scalar|sse2|avx2|avx512` (read once, on first use), else the best
//! instruction set the CPU supports ([`detected_isa`]).

use std::fmt;
use std::sync::atomic::{AtomicU8, Ordering};

/// An instruction set a kernel can run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Isa {
    /// Portable `f32` code (`f32::mul_add`); the reference. On a CPU or build without
    /// FMA, `mul_add` is libm's correctly rounded `fmaf`: same bits, much slower.
    Scalar,
    /// x86-64 SSE2, 4 lanes. SSE2 has no FMA: it is emulated exactly in `f64` with
    /// round-to-odd, so this path is meant for pre-2013 CPUs only.
    Sse2,
    /// x86-64 AVX2 with FMA3, 8 lanes.
    Avx2,
    /// x86-64 AVX-512F (with AVX2 and FMA3), 16 lanes.
    Avx512,
}

impl Isa {
    /// All instruction sets, slowest first.
    pub const ALL: [Isa; 4] = [Isa::Scalar, Isa::Sse2, Isa::Avx2, Isa::Avx512];

    /// Whether this CPU can run this instruction set.
    pub fn is_supported(self) -> bool {
        match self {
            Isa::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Sse2 => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The lower-case name used by `SEP_KERNELS_ISA`.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Sse2 => "sse2",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    /// Parses a name as accepted by `SEP_KERNELS_ISA` (case-insensitive).
    pub fn from_name(name: &str) -> Option<Isa> {
        Isa::ALL
            .into_iter()
            .find(|isa| isa.name().eq_ignore_ascii_case(name.trim()))
    }

    fn code(self) -> u8 {
        self as u8 + 1
    }

    fn from_code(code: u8) -> Option<Isa> {
        Isa::ALL.get(usize::from(code).checked_sub(1)?).copied()
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Returned by [`force_isa`] for an instruction set this CPU lacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnsupportedIsa(pub Isa);

impl fmt::Display for UnsupportedIsa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "this CPU does not support the {} kernels", self.0)
    }
}

impl std::error::Error for UnsupportedIsa {}

/// The best instruction set this CPU supports.
pub fn detected_isa() -> Isa {
    Isa::ALL
        .into_iter()
        .rev()
        .find(|isa| isa.is_supported())
        .unwrap_or(Isa::Scalar)
}

/// 0: not decided yet; otherwise `Isa::code`.
static ACTIVE: AtomicU8 = AtomicU8::new(0);

/// The instruction set the kernels use now.
///
/// # Panics
/// On first use, if `SEP_KERNELS_ISA` names an unknown instruction set or one this CPU
/// lacks: a test that asked for a path must not silently get another.
#[inline]
pub fn active_isa() -> Isa {
    if let Some(isa) = Isa::from_code(ACTIVE.load(Ordering::Relaxed)) {
        return isa;
    }
    let isa = from_env().unwrap_or_else(detected_isa);
    // A concurrent `force_isa` wins over the default.
    match ACTIVE.compare_exchange(0, isa.code(), Ordering::Relaxed, Ordering::Relaxed) {
        Ok(_) => isa,
        Err(code) => Isa::from_code(code).unwrap_or(isa),
    }
}

fn from_env() -> Option<Isa> {
    let value = std::env::var("SEP_KERNELS_ISA").ok()?;
    if value.trim().is_empty() {
        return None;
    }
    let isa = Isa::from_name(&value).unwrap_or_else(|| {
        panic!("SEP_KERNELS_ISA={value:?}: expected one of scalar, sse2, avx2, avx512")
    });
    assert!(
        isa.is_supported(),
        "SEP_KERNELS_ISA={value}: {}",
        UnsupportedIsa(isa)
    );
    Some(isa)
}

/// Makes every kernel use `isa` (`Some`), or returns to the default (`None`:
/// `SEP_KERNELS_ISA`, else [`detected_isa`]). Results do not change, only speed.
///
/// This is a process-wide setting meant for tests and benchmarks; tests that change it
/// must not run concurrently with tests that depend on it.
pub fn force_isa(isa: Option<Isa>) -> Result<(), UnsupportedIsa> {
    let isa = match isa {
        Some(isa) if !isa.is_supported() => return Err(UnsupportedIsa(isa)),
        Some(isa) => isa,
        None => from_env().unwrap_or_else(detected_isa),
    };
    ACTIVE.store(isa.code(), Ordering::Relaxed);
    Ok(())
}
