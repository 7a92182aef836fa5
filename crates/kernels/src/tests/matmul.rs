//! Matrix products: the scalar path against an independent naive triple loop, and every
//! instruction set, thread count and layout against it, bit for bit.

use super::{REF, Rng, assert_bits, execs};
use crate::matmul::{Layout, matmul_exec};

/// The contract, written out: one `mul_add` chain per element, `p` in order.
#[allow(clippy::too_many_arguments)]
fn naive(
    layout: Layout,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    m: usize,
    k: usize,
    n: usize,
    accumulate: bool,
) {
    for i in 0..m {
        for j in 0..n {
            let mut acc = if accumulate { c[i * n + j] } else { 0.0 };
            for p in 0..k {
                let av = match layout {
                    Layout::Tn => a[p * m + i],
                    _ => a[i * k + p],
                };
                let bv = match layout {
                    Layout::Nt => b[j * k + p],
                    _ => b[p * n + j],
                };
                acc = av.mul_add(bv, acc);
            }
            c[i * n + j] = acc;
        }
    }
}

fn check_shape(rng: &mut Rng, m: usize, k: usize, n: usize, all_execs: bool) {
    let a = rng.vec(m * k, -1.0, 1.0);
    let b = rng.vec(k * n, -1.0, 1.0);
    let c0 = rng.vec(m * n, -1.0, 1.0);
    for layout in [Layout::Nn, Layout::Tn, Layout::Nt] {
        for accumulate in [false, true] {
            let mut want = c0.clone();
            naive(layout, &a, &b, &mut want, m, k, n, accumulate);
            let list = if all_execs { execs() } else { vec![] };
            for exec in std::iter::once(REF).chain(list) {
                let mut c = c0.clone();
                matmul_exec(exec, layout, &a, &b, &mut c, m, k, n, accumulate);
                let what = format!("{layout:?} acc={accumulate} {exec:?} m={m} k={k} n={n}");
                assert_bits(&c, &want, &what);
            }
        }
    }
}

#[test]
fn awkward_shapes() {
    let mut rng = Rng::new(1);
    let dims = [0, 1, 2, 5, 7, 15, 16, 17, 33, 63, 65];
    for &m in &dims {
        for &k in &[0, 1, 3, 16, 17, 64] {
            for &n in &dims {
                check_shape(&mut rng, m, k, n, true);
            }
        }
    }
}

/// Long enough `k` to cross k-blocks (`KC = 256`), and enough work (at least
/// `PAR_MIN_WORK` = 2^22 multiply-adds for most) to run on the pool, split by columns
/// (wide `n`) or by rows (narrow `n`).
#[test]
fn blocked_and_threaded_shapes() {
    let mut rng = Rng::new(2);
    for (m, k, n) in [
        (1, 600, 130),
        (13, 777, 70),
        (70, 300, 200),
        (128, 256, 128),
        (64, 1030, 96),
        (200, 64, 257),
        (600, 300, 40),
    ] {
        check_shape(&mut rng, m, k, n, true);
    }
}

/// Special values flow through the same chain (inf * 0 = NaN, signed zeros).
#[test]
fn special_values() {
    let vals = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        1e-40,
    ];
    let (m, k, n) = (9, 8, 35);
    let mut rng = Rng::new(3);
    let pick = |rng: &mut Rng| vals[(rng.next_u64() % vals.len() as u64) as usize];
    let a: Vec<f32> = (0..m * k).map(|_| pick(&mut rng)).collect();
    let b: Vec<f32> = (0..k * n).map(|_| pick(&mut rng)).collect();
    for layout in [Layout::Nn, Layout::Tn, Layout::Nt] {
        for accumulate in [false, true] {
            let c0: Vec<f32> = (0..m * n).map(|_| pick(&mut rng)).collect();
            let mut want = c0.clone();
            naive(layout, &a, &b, &mut want, m, k, n, accumulate);
            for exec in execs() {
                let mut c = c0.clone();
                matmul_exec(exec, layout, &a, &b, &mut c, m, k, n, accumulate);
                for (i, (g, w)) in c.iter().zip(&want).enumerate() {
                    let same = g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan());
                    assert!(same, "{layout:?} {exec:?} element {i}: {g} vs {w}");
                }
            }
        }
    }
}

/// `-0.0` products: a chain starting from `+0.0` gives `+0.0`, accumulate keeps `c`.
#[test]
fn signed_zeros() {
    let a = [-0.0f32; 4];
    let b = [1.0f32; 4];
    for exec in execs() {
        let mut c = [-0.0f32; 2];
        matmul_exec(exec, Layout::Nn, &a, &b, &mut c, 2, 2, 1, false);
        assert_eq!(c.map(f32::to_bits), [0, 0], "{exec:?}");
        let mut c = [-0.0f32; 2];
        matmul_exec(exec, Layout::Nn, &a, &b, &mut c, 2, 0, 1, true);
        assert_eq!(c.map(f32::to_bits), [0x8000_0000; 2], "{exec:?}");
    }
}

#[test]
fn tile_shape_table_matches_the_isa_code() {
    use crate::matmul::{tile_shape, tile_shape_of};
    use crate::simd::with_simd;
    for isa in super::isas() {
        assert_eq!(
            tile_shape_of(isa),
            with_simd!(isa, |s| tile_shape(s)),
            "{isa}"
        );
    }
}
