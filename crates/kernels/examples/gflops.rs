//! Quick matrix-product throughput table: GFLOP/s per layout and shape at 1 and 2
//! threads, taking the *best* of many repetitions (robust on a shared, busy machine,
//! where criterion's mean mostly measures the neighbours).
//!
//! `cargo run --release -p sep-kernels --example gflops [reps] [shapes]` (the first
//! `shapes` shapes of the list only, default all).

use std::time::Instant;

type Matmul = fn(&[f32], &[f32], &mut [f32], usize, usize, usize, bool);

fn main() {
    let arg = |i: usize| {
        std::env::args()
            .nth(i)
            .and_then(|s| s.parse::<usize>().ok())
    };
    let reps = arg(1).unwrap_or(30);
    let count = arg(2).unwrap_or(usize::MAX);
    println!("isa: {}", sep_kernels::active_isa());
    let layouts: [(&str, Matmul); 3] = [
        ("nn", sep_kernels::matmul),
        ("tn", sep_kernels::matmul_tn),
        ("nt", sep_kernels::matmul_nt),
    ];
    let shapes = [
        (256, 256, 1024),
        (256, 1024, 256),
        (1024, 256, 256),
        (512, 256, 4096),
        (64, 256, 1024),
        (16, 256, 256),
        (1, 128, 128),
        (1, 16, 16),
    ];
    println!(
        "{:<6} {:>16} {:>10} {:>10}",
        "layout", "m x k x n", "1t GF/s", "2t GF/s"
    );
    for (name, f) in layouts {
        for &(m, k, n) in shapes.iter().take(count) {
            let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 * 0.1 - 0.3).collect();
            let b: Vec<f32> = (0..k * n).map(|i| (i % 5) as f32 * 0.1 - 0.2).collect();
            let mut c = vec![0.0f32; m * n];
            let flops = 2.0 * (m * k * n) as f64;
            let inner = (2e7 / flops).ceil() as usize;
            let mut out = Vec::new();
            for threads in [1, 2] {
                sep_kernels::set_num_threads(threads);
                let mut best = f64::INFINITY;
                for _ in 0..reps {
                    let t = Instant::now();
                    for _ in 0..inner {
                        f(&a, &b, &mut c, m, k, n, false);
                    }
                    best = best.min(t.elapsed().as_secs_f64() / inner as f64);
                }
                out.push(flops / best / 1e9);
            }
            println!(
                "{name:<6} {:>16} {:>10.1} {:>10.1}",
                format!("{m}x{k}x{n}"),
                out[0],
                out[1]
            );
        }
    }
}
