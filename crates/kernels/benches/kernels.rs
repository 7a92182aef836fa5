//! Criterion benchmarks: matrix products in the three layouts at the model's shapes (1
//! and 2 threads), the elementwise and row kernels, and a measured FMA peak to compare
//! against.
//!
//! Run with `cargo bench -p sep-kernels --bench kernels`; filter with e.g.
//! `-- matmul/nn`. Throughput is reported in "elements/s" where one element is one
//! floating-point operation (a multiply-add counts as 2), i.e. FLOP/s.
//!
//! `fma_peak` measures the achievable single-core FMA throughput: 12 independent
//! chains of vector FMAs (enough to cover the 4-cycle latency on two FMA pipes); its
//! FLOP/s is the "peak" the matmul figures are a fraction of. `fma_latency` runs one
//! dependent chain: its time per FMA is the FMA latency (4 cycles on Zen 4), which
//! gives the clock frequency.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

fn data(len: usize, seed: u32) -> Vec<f32> {
    let mut x = seed.wrapping_mul(2_654_435_761).max(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        })
        .collect()
}

type Matmul = fn(&[f32], &[f32], &mut [f32], usize, usize, usize, bool);

fn matmuls(c: &mut Criterion) {
    let layouts: [(&str, Matmul); 3] = [
        ("nn", sep_kernels::matmul),
        ("tn", sep_kernels::matmul_tn),
        ("nt", sep_kernels::matmul_nt),
    ];
    let shapes = [
        (256, 256, 1024),
        (256, 1024, 256),
        (1024, 256, 256),
        (64, 256, 1024),
        (16, 256, 256),
        (1, 128, 128),
        (1, 16, 16),
    ];
    for (name, f) in layouts {
        let mut group = c.benchmark_group(format!("matmul/{name}"));
        group
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .sample_size(20);
        for (m, k, n) in shapes {
            let a = data(m * k, 1);
            let b = data(k * n, 2);
            let mut out = vec![0.0f32; m * n];
            group.throughput(Throughput::Elements(2 * (m * k * n) as u64));
            for threads in [1, 2] {
                if m * k * n < 1 << 20 && threads > 1 {
                    continue;
                }
                sep_kernels::set_num_threads(threads);
                let id = BenchmarkId::new(format!("{m}x{k}x{n}"), format!("{threads}t"));
                group.bench_function(id, |bench| {
                    bench.iter(|| f(black_box(&a), black_box(&b), &mut out, m, k, n, false))
                });
            }
        }
        group.finish();
    }
    sep_kernels::set_num_threads(1);
}

fn rows_and_elementwise(c: &mut Criterion) {
    sep_kernels::set_num_threads(1);
    let mut group = c.benchmark_group("rows");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    let (rows, n) = (256, 1024);
    let x = data(rows * n, 3);
    let mut y = vec![0.0f32; rows * n];
    group.throughput(Throughput::Elements((rows * n) as u64));
    group.bench_function("gelu_256x1024", |b| {
        b.iter(|| sep_kernels::gelu_slice(black_box(&x), &mut y))
    });
    group.bench_function("gelu_backward_256x1024", |b| {
        b.iter(|| sep_kernels::gelu_backward(black_box(&x), &x, &mut y, false))
    });
    group.bench_function("exp_256x1024", |b| {
        b.iter(|| sep_kernels::exp_slice(black_box(&x), &mut y))
    });
    group.bench_function("softmax_256x1024", |b| {
        b.iter(|| sep_kernels::softmax_rows(black_box(&x), &mut y, rows, n))
    });
    let (g, be) = (vec![1.0f32; n], vec![0.0f32; n]);
    let (mut mean, mut rstd) = (vec![0.0f32; rows], vec![0.0f32; rows]);
    group.bench_function("layernorm_256x1024", |b| {
        b.iter(|| {
            sep_kernels::layernorm_rows(
                black_box(&x),
                &g,
                &be,
                &mut y,
                &mut mean,
                &mut rstd,
                rows,
                n,
                1e-5,
            )
        })
    });
    let (mut dx, mut dg, mut db) = (vec![0.0f32; rows * n], vec![0.0f32; n], vec![0.0f32; n]);
    group.bench_function("layernorm_backward_256x1024", |b| {
        b.iter(|| {
            sep_kernels::layernorm_rows_backward(
                black_box(&x),
                &x,
                &g,
                &mean,
                &rstd,
                &mut dx,
                &mut dg,
                &mut db,
                rows,
                n,
                false,
            )
        })
    });
    group.bench_function("sum_cols_256x1024", |b| {
        b.iter(|| sep_kernels::sum_cols(black_box(&x), &mut dg, rows, n, false))
    });
    group.finish();
}

#[cfg(target_arch = "x86_64")]
mod peak {
    use std::arch::x86_64::*;

    /// FMAs per call of [`independent`]: 12 chains x 16 lanes x `iters`.
    pub const CHAINS: usize = 12;

    /// # Safety
    /// Needs AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn independent(iters: usize, x: f32) -> f32 {
        let (m, a) = (_mm512_set1_ps(x), _mm512_set1_ps(1e-9));
        let mut acc = [_mm512_set1_ps(1.0); CHAINS];
        for _ in 0..iters {
            for v in acc.iter_mut() {
                *v = _mm512_fmadd_ps(*v, m, a);
            }
        }
        let mut s = _mm512_setzero_ps();
        for v in acc {
            s = _mm512_add_ps(s, v);
        }
        _mm512_reduce_add_ps(s)
    }

    /// # Safety
    /// Needs FMA.
    #[target_feature(enable = "fma")]
    pub unsafe fn dependent(iters: usize, x: f32) -> f32 {
        let (m, a) = (_mm_set1_ps(x), _mm_set1_ps(1e-9));
        let mut v = _mm_set1_ps(1.0);
        for _ in 0..iters {
            v = _mm_fmadd_ps(v, m, a);
        }
        _mm_cvtss_f32(v)
    }
}

#[cfg(target_arch = "x86_64")]
fn fma_peak(c: &mut Criterion) {
    let mut group = c.benchmark_group("fma");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    let iters = 100_000;
    if std::arch::is_x86_feature_detected!("avx512f") {
        group.throughput(Throughput::Elements((iters * peak::CHAINS * 16 * 2) as u64));
        group.bench_function("peak_avx512", |b| {
            // SAFETY: AVX-512F was detected just above.
            b.iter(|| unsafe { peak::independent(black_box(iters), black_box(0.999)) })
        });
    } else {
        eprintln!("NOTE: no AVX-512F: fma/peak_avx512 skipped");
    }
    if std::arch::is_x86_feature_detected!("fma") {
        // One element = one FMA: elements/s is FMAs per second of a dependent chain,
        // i.e. clock / latency.
        group.throughput(Throughput::Elements(iters as u64));
        group.bench_function("latency_chain", |b| {
            // SAFETY: FMA was detected just above.
            b.iter(|| unsafe { peak::dependent(black_box(iters), black_box(0.999)) })
        });
    }
    group.finish();
}

#[cfg(not(target_arch = "x86_64"))]
fn fma_peak(_: &mut Criterion) {}

criterion_group!(benches, fma_peak, matmuls, rows_and_elementwise);
criterion_main!(benches);
