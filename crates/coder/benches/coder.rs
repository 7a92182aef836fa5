//! Symbols per second of the range coder, encode and decode, for 256-way
//! quantized tables and for binary decisions. Reports throughput in
//! elements (symbols) per second.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sep_coder::{Coder, Decoder, Encoder, FreqTable, quantize};
use std::hint::black_box;

const N: usize = 1 << 16;

/// A skewed table and a symbol sequence drawn from it (deterministic LCG).
fn workload() -> (FreqTable, Vec<u32>, Vec<u32>) {
    let mut p = [0.0f32; 256];
    for (i, x) in p.iter_mut().enumerate() {
        *x = 1.0 / (1.0 + i as f32).powi(2);
    }
    let mut t = FreqTable::default();
    quantize(&p, &mut t);
    let mut state = 12345u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 40) as u32
    };
    let syms = (0..N).map(|_| t.find(next() & 0xFF_FFFF)).collect();
    let probs = (0..N).map(|_| 1 + next() % 65535).collect();
    (t, syms, probs)
}

fn bench(c: &mut Criterion) {
    let (table, syms, probs) = workload();
    let bits: Vec<u32> = probs.iter().map(|&p| u32::from(p > 32768)).collect();
    let mut g = c.benchmark_group("range_coder");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("encode_symbol_256", |b| {
        b.iter(|| {
            let mut e = Encoder::with_capacity(N);
            for &s in &syms {
                e.code_symbol(s, &table);
            }
            black_box(e.finish())
        })
    });
    let mut e = Encoder::new();
    for &s in &syms {
        e.code_symbol(s, &table);
    }
    let sym_bytes = e.finish();
    g.bench_function("decode_symbol_256", |b| {
        b.iter(|| {
            let mut d = Decoder::new(&sym_bytes);
            let mut acc = 0u32;
            for _ in 0..N {
                acc = acc.wrapping_add(d.code_symbol(0, &table));
            }
            black_box(acc)
        })
    });
    g.bench_function("encode_bit", |b| {
        b.iter(|| {
            let mut e = Encoder::with_capacity(N / 8);
            for (&bit, &p) in bits.iter().zip(&probs) {
                e.code_bit(bit, p);
            }
            black_box(e.finish())
        })
    });
    let mut e = Encoder::new();
    for (&bit, &p) in bits.iter().zip(&probs) {
        e.code_bit(bit, p);
    }
    let bit_bytes = e.finish();
    g.bench_function("decode_bit", |b| {
        b.iter(|| {
            let mut d = Decoder::new(&bit_bytes);
            let mut acc = 0u32;
            for &p in &probs {
                acc = acc.wrapping_add(d.code_bit(0, p));
            }
            black_box(acc)
        })
    });
    let dists: Vec<[f32; 256]> = (0..64)
        .map(|k| {
            let mut p = [0.0f32; 256];
            for (i, x) in p.iter_mut().enumerate() {
                *x = 1.0 / (1.0 + ((i + k) % 256) as f32);
            }
            p
        })
        .collect();
    g.throughput(Throughput::Elements(dists.len() as u64));
    g.bench_function("quantize_256", |b| {
        let mut t = FreqTable::default();
        b.iter(|| {
            for d in &dists {
                quantize(black_box(d), &mut t);
            }
            black_box(t.freq(0))
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
