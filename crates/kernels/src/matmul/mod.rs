//! Matrix products in the three layouts that training needs.
//!
//! All matrices are dense, row-major `f32` slices. Contract for every output
//! element: `acc = if accumulate { c[i,j] } else { 0.0 }`, then for `p` in
//! `0..k`, in order, `acc = a(i,p).mul_add(b(p,j), acc)`; finally `c[i,j] = acc`.

mod kernel;

use std::cell::RefCell;
use std::ops::Range;

use crate::pool::{plan_threads, run_parts};
use crate::simd::{Simd, with_simd};
use crate::{Exec, Isa, SendPtr};

/// Which operand is stored transposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `A[m x k] * B[k x n]`.
    Nn,
    /// `A^T * B`, `A` stored `[k x m]`.
    Tn,
    /// `A * B^T`, `B` stored `[n x k]`.
    Nt,
}

/// `C[m x n] (+)= A[m x k] * B[k x n]`, each element one `mul_add` chain over `p` in
/// order (see [matrix products](crate#matrix-products)).
///
/// # Panics
/// If a slice is shorter than its shape.
pub fn matmul(a: &[f32], b: &[f32], c: &mut [f32], m: usize, k: usize, n: usize, accumulate: bool) {
    check("matmul", a.len(), b.len(), c.len(), m, k, n);
    matmul_exec(Exec::current(), Layout::Nn, a, b, c, m, k, n, accumulate);
}

/// `C[m x n] (+)= A^T * B` where `A` is stored `[k x m]` and `B` is `[k x n]`, each
/// element one `mul_add` chain over `p` in order (see
/// [matrix products](crate#matrix-products)). The gradient form `dW = dY^T X`.
///
/// # Panics
/// If a slice is shorter than its shape.
pub fn matmul_tn(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    m: usize,
    k: usize,
    n: usize,
    accumulate: bool,
) {
    check("matmul_tn", a.len(), b.len(), c.len(), m, k, n);
    matmul_exec(Exec::current(), Layout::Tn, a, b, c, m, k, n, accumulate);
}

/// `C[m x n] (+)= A * B^T` where `A` is `[m x k]` and `B` is stored `[n x k]`, each
/// element one `mul_add` chain over `p` in order (see
/// [matrix products](crate#matrix-products)). The `X W^T` form of a linear layer.
///
/// # Panics
/// If a slice is shorter than its shape.
pub fn matmul_nt(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    m: usize,
    k: usize,
    n: usize,
    accumulate: bool,
) {
    check("matmul_nt", a.len(), b.len(), c.len(), m, k, n);
    matmul_exec(Exec::current(), Layout::Nt, a, b, c, m, k, n, accumulate);
}

fn check(name: &str, la: usize, lb: usize, lc: usize, m: usize, k: usize, n: usize) {
    let fits = |len: usize, r: usize, c: usize| r.checked_mul(c).is_some_and(|rc| len >= rc);
    assert!(
        fits(la, m, k) && fits(lb, k, n) && fits(lc, m, n),
        "{name}: slice too short for m={m} k={k} n={n} (a: {la}, b: {lb}, c: {lc})"
    );
}

/// The k-block: a constant. (Blocking stores the running sums to `C` and reloads them,
/// which is exact, so it cannot change a bit; it is kept constant all the same.)
const KC: usize = 256;
/// Columns of `B` packed at once; a multiple of every panel width.
const NC: usize = 512;
/// Rows of `A` packed at once; a multiple of every `MR` (4 and 6).
const MC: usize = 240;
/// Widest `B` (layouts `Nn`, `Tn`) read in place rather than packed: a k step then
/// moves 4 KiB at most, so a panel's rows stay on few pages.
const DIRECT_B_MAX_N: usize = 1024;
/// Below this many multiply-adds (about 40 us on one AVX-512 core) a product runs on
/// the calling thread only. Measured on 2 Zen 4 cores shared with other processes
/// (load 3-6), with the training step's products of 1-2M multiply-adds (m = 32):
/// splitting them (threshold 2^20) cost 43% more CPU time and 35% more wall time than
/// one thread; on a momentarily idle second core a 2M product ran 1.7-1.9x faster. On
/// a dedicated machine a lower threshold would pay.
const PAR_MIN_WORK: usize = 1 << 22;
/// Parts a threaded product is cut into, per thread.
const PARTS_PER_THREAD: usize = 2;

/// `(MR, NR)`: rows and columns of `C` per micro-kernel call on `S`.
#[inline(always)]
pub(crate) fn tile_shape<S: Simd>(_: S) -> (usize, usize) {
    (S::MR, S::NV * S::LANES)
}

/// Width of a packed panel holding `pw` valid columns: whole vectors only.
#[inline(always)]
fn panel_width<S: Simd>(_: S, pw: usize) -> usize {
    pw.next_multiple_of(S::LANES)
}

/// [`tile_shape`] without entering the instruction set's code (checked by a test).
pub(crate) fn tile_shape_of(isa: Isa) -> (usize, usize) {
    match isa {
        Isa::Scalar => (4, 4),
        Isa::Sse2 => (4, 8),
        Isa::Avx2 => (6, 16),
        Isa::Avx512 => (6, 64),
    }
}

/// Runs a product on `exec` (lengths already checked).
///
/// Threads get disjoint blocks of `C`: column ranges (whole panels) or row ranges (whole
/// tiles), whichever duplicates less packing. Each block is then an independent product
/// computed by [`gemm_block`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn matmul_exec(
    exec: Exec,
    layout: Layout,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    m: usize,
    k: usize,
    n: usize,
    accumulate: bool,
) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            c[..m * n].fill(0.0);
        }
        return;
    }
    let (mr, nr) = tile_shape_of(exec.isa);
    let threads = if m.saturating_mul(n).saturating_mul(k) >= PAR_MIN_WORK {
        plan_threads(exec.threads)
    } else {
        1
    };
    let (panels, row_tiles) = (n.div_ceil(nr), m.div_ceil(mr));
    // (parts, split columns?, columns or rows per part). A column split makes every part
    // pack all of A (m x k), a row split all of B (k x n); packing A costs about twice
    // as much per element, so split rows when 2 m k > k n. Two parts per thread, taken
    // in turn from the pool's queue, keep both threads busy when one of them is slowed
    // down by another process.
    let want = threads * PARTS_PER_THREAD;
    let cols_ok = panels >= threads;
    let rows_ok = row_tiles >= threads;
    let prefer_rows = 2 * m > n;
    let (parts, by_cols, per) = if threads > 1 && cols_ok && !(rows_ok && prefer_rows) {
        let per = panels.div_ceil(want.min(panels)) * nr;
        (n.div_ceil(per), true, per)
    } else if threads > 1 && rows_ok {
        let per = row_tiles.div_ceil(want.min(row_tiles)) * mr;
        (m.div_ceil(per), false, per)
    } else {
        (1, true, n)
    };
    let g = Gemm {
        layout,
        a: a.as_ptr(),
        b: b.as_ptr(),
        c: c.as_mut_ptr(),
        m,
        k,
        n,
        accumulate,
    };
    if parts == 1 {
        // SAFETY: the lengths were checked against m, k, n.
        with_simd!(exec.isa, |s| unsafe { gemm_block(s, &g, 0..m, 0..n) });
        return;
    }
    let (ap, bp, cp) = (
        SendPtr(a.as_ptr().cast_mut()),
        SendPtr(b.as_ptr().cast_mut()),
        SendPtr(c.as_mut_ptr()),
    );
    run_parts(parts, threads, &|part| {
        let lo = part * per;
        let (rows, cols) = if by_cols {
            (0..m, lo..n.min(lo + per))
        } else {
            (lo..m.min(lo + per), 0..n)
        };
        let g = Gemm {
            layout,
            a: ap.get(),
            b: bp.get(),
            c: cp.get(),
            m,
            k,
            n,
            accumulate,
        };
        // SAFETY: the lengths were checked against m, k, n; parts write disjoint
        // blocks of C and only read A and B.
        with_simd!(exec.isa, |s| unsafe { gemm_block(s, &g, rows, cols) });
    });
}

/// One product's operands.
struct Gemm {
    layout: Layout,
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: usize,
    k: usize,
    n: usize,
    accumulate: bool,
}

thread_local! {
    /// Packing buffer of the current thread, reused between calls.
    static PACK: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// Takes this thread's packing buffer (leaving an empty one, so a nested call would
/// simply allocate its own), grown to at least `len + 16` floats. Give it back with
/// [`put_pack`]. (No closure here: the caller's loop nest must stay inside the
/// function compiled for its instruction set.)
#[inline(always)]
fn take_pack(len: usize) -> Vec<f32> {
    let mut v = PACK.with(|cell| cell.take());
    if v.len() < len + 16 {
        v.resize(len + 16, 0.0);
    }
    v
}

/// Returns the buffer taken by [`take_pack`].
#[inline(always)]
fn put_pack(v: Vec<f32>) {
    PACK.with(|cell| cell.replace(v));
}

/// Computes the block `rows x cols` of `C` on `S`.
///
/// Loop nest (GotoBLAS order): column blocks of [`NC`]; k-blocks of [`KC`] (the first
/// starts from `0.0` or the old `C`, later ones from the stored running sums), with `B`
/// packed into panels of `NR` columns; row blocks of [`MC`] with `A` packed into
/// micro-panels of `MR` rows; then one micro-kernel call per (row tile, panel). In
/// layouts `Nn` and `Tn`, `B` is read in place when `n <= DIRECT_B_MAX_N` or the part has
/// a single row tile (only a partial last panel is packed); measured on Zen 4 at
/// m = 32..128, that is 5-11% faster than packing it.
///
/// # Safety
/// `g` must describe valid slices (`A`, `B` readable and `C` writable for their shapes),
/// and no other thread may touch this block of `C`.
#[inline(always)]
unsafe fn gemm_block<S: Simd>(s: S, g: &Gemm, rows: Range<usize>, cols: Range<usize>) {
    let (mr_max, nr) = tile_shape(s);
    let (k, n) = (g.k, g.n);
    // B in layouts Nn and Tn is read in place (its rows are contiguous; only a partial
    // last panel is packed, once per k-block) unless its rows are so far apart that
    // each k step of a panel would touch another page; A is read in place by a part
    // with a single row tile where its rows are contiguous in memory.
    let single = rows.len() <= mr_max;
    let direct_b = g.layout != Layout::Nt && (single || n <= DIRECT_B_MAX_N);
    let direct_a = single && (g.layout == Layout::Tn || rows.len() == 1);
    let b_len = if direct_b { KC * nr } else { KC * NC };
    let a_len = KC * MC.min(rows.len().next_multiple_of(mr_max));
    let mut buf = take_pack(b_len + a_len);
    let offset = buf.as_ptr().align_offset(64).min(16);
    // SAFETY: offset <= 16 and the buffer holds b_len + a_len + 16 floats.
    let bpack = unsafe { buf.as_mut_ptr().add(offset) };
    // SAFETY: every pointer in this nest stays inside A, B, C or the buffer of
    // b_len + a_len floats, as the index arithmetic shows.
    unsafe {
        let apack = bpack.add(b_len);
        let mut jc = cols.start;
        while jc < cols.end {
            let nc = NC.min(cols.end - jc);
            let panels = nc.div_ceil(nr);
            let mut pc = 0;
            while pc < k {
                let kc = KC.min(k - pc);
                let load_c = g.accumulate || pc > 0;
                if !direct_b {
                    for t in 0..panels {
                        let (j, dst) = (jc + t * nr, bpack.add(t * kc * nr));
                        let pw = nr.min(cols.end - j);
                        pack_b(s, g, pc, j, pw, kc, dst, panel_width(s, pw));
                    }
                } else {
                    let j = jc + (panels - 1) * nr;
                    let pw = nr.min(cols.end - j);
                    if pw % S::LANES != 0 {
                        pack_b(s, g, pc, j, pw, kc, bpack, panel_width(s, pw));
                    }
                }
                let mut ic = rows.start;
                while ic < rows.end {
                    let mc = MC.min(rows.end - ic);
                    if !direct_a {
                        pack_a(g, ic, mc, pc, kc, mr_max, apack);
                    }
                    let mut ir = ic;
                    while ir < ic + mc {
                        let mr = mr_max.min(ic + mc - ir);
                        let (ap, lda) = if !direct_a {
                            (apack.add((ir - ic) * kc).cast_const(), mr)
                        } else if g.layout == Layout::Tn {
                            (g.a.add(pc * g.m + ir), g.m)
                        } else {
                            (g.a.add(ir * k + pc), 1)
                        };
                        for t in 0..panels {
                            let j = jc + t * nr;
                            let pw = nr.min(cols.end - j);
                            let nv = pw.div_ceil(S::LANES);
                            let full = pw % S::LANES == 0;
                            let (bptr, ldb) = if !direct_b {
                                (bpack.add(t * kc * nr).cast_const(), panel_width(s, pw))
                            } else if full {
                                (g.b.add(pc * n + j), n)
                            } else {
                                // The partial last panel, packed above.
                                (bpack.cast_const(), panel_width(s, pw))
                            };
                            let cptr = g.c.add(ir * n + j);
                            if full {
                                kernel::tile(s, mr, nv, kc, ap, lda, bptr, ldb, cptr, n, load_c);
                            } else {
                                // A partial vector: run on a copy of the tile.
                                let mut tmp = [0.0f32; 6 * 64];
                                let t = tmp.as_mut_ptr();
                                if load_c {
                                    for r in 0..mr {
                                        std::ptr::copy_nonoverlapping(
                                            cptr.add(r * n),
                                            t.add(r * nr),
                                            pw,
                                        );
                                    }
                                }
                                kernel::tile(s, mr, nv, kc, ap, lda, bptr, ldb, t, nr, load_c);
                                for r in 0..mr {
                                    std::ptr::copy_nonoverlapping(
                                        t.add(r * nr),
                                        cptr.add(r * n),
                                        pw,
                                    );
                                }
                            }
                        }
                        ir += mr;
                    }
                    ic += mc;
                }
                pc += kc;
            }
            jc += nc;
        }
    }
    put_pack(buf);
}

/// Packs rows `ic..ic + mc`, k-range `pc..pc + kc` of `A` as consecutive micro-panels
/// of `mr_max` rows (the last may be shorter): micro-panel `t` starts at
/// `t * mr_max * kc` and holds `A(ic + t * mr_max + r, pc + p)` at `p * mr + r`.
/// Reads follow `A`'s storage order, so both layouts stream contiguous memory.
///
/// # Safety
/// `g` valid, the named part of `A` inside it, `ap[..mc * kc]` writable.
#[inline(always)]
unsafe fn pack_a(
    g: &Gemm,
    ic: usize,
    mc: usize,
    pc: usize,
    kc: usize,
    mr_max: usize,
    ap: *mut f32,
) {
    let (m, k) = (g.m, g.k);
    match g.layout {
        Layout::Nn | Layout::Nt => {
            let mut i0 = 0;
            while i0 < mc {
                let mr = mr_max.min(mc - i0);
                let dst = ap.wrapping_add(i0 * kc);
                let src = g.a.wrapping_add((ic + i0) * k + pc);
                for p in 0..kc {
                    for r in 0..mr {
                        // SAFETY: row ic + i0 + r < m, column pc + p < k; the write is
                        // below mc * kc.
                        unsafe { *dst.add(p * mr + r) = *src.add(r * k + p) };
                    }
                }
                i0 += mr;
            }
        }
        Layout::Tn => {
            // One pass per row of the stored [k x m] matrix, scattering to the panels.
            for p in 0..kc {
                let src = g.a.wrapping_add((pc + p) * m + ic);
                let mut i0 = 0;
                while i0 < mc {
                    let mr = mr_max.min(mc - i0);
                    let dst = ap.wrapping_add(i0 * kc + p * mr);
                    for r in 0..mr {
                        // SAFETY: as above, with A stored [k x m].
                        unsafe { *dst.add(r) = *src.add(i0 + r) };
                    }
                    i0 += mr;
                }
            }
        }
    }
}

/// Packs `B(pc + p, j + q)` for `p < kc`, `q < pw` into a panel of `width` columns.
///
/// # Safety
/// `g` valid, the named part of `B` inside it, `dst[..kc * width]` writable.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn pack_b<S: Simd>(
    s: S,
    g: &Gemm,
    pc: usize,
    j: usize,
    pw: usize,
    kc: usize,
    dst: *mut f32,
    width: usize,
) {
    // SAFETY: the caller's contract.
    unsafe {
        match g.layout {
            Layout::Nn | Layout::Tn => kernel::pack_b_rows(g.b, g.n, pc, j, pw, kc, dst, width),
            Layout::Nt => s.pack_transposed(g.b.add(j * g.k + pc), g.k, pw, kc, dst, width),
        }
    }
}
