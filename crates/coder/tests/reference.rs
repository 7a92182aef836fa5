//! The range coder checked against a straightforward reference encoder and by
//! property tests over random tables, probabilities and symbol sequences.

use proptest::prelude::*;
use sep_coder::{Coder, Decoder, Encoder, FREQ_TOTAL, FreqTable, quantize};

/// One coding operation, for driving both encoders with the same sequence.
#[derive(Debug, Clone, Copy)]
enum Op {
    /// `(cum, freq, total_bits)`.
    Sym(u32, u32, u32),
    /// `(bit, p1)`.
    Bit(u32, u32),
}

/// The reference: the same interval arithmetic, but `low` is a plain integer
/// and a carry walks back through the output bytes, with no cache, no
/// pending count and no dummy byte. Its end step tries every byte count in
/// turn. Written independently of the fast encoder's bookkeeping.
fn reference_encode(ops: &[Op]) -> Vec<u8> {
    const TOP: u128 = 1 << 56;
    let mut out: Vec<u8> = Vec::new();
    let mut low: u128 = 0;
    let mut range: u128 = TOP - 1;
    let emit = |out: &mut Vec<u8>, low: &mut u128| {
        if *low >= TOP {
            let mut i = out.len();
            loop {
                i -= 1; // a carry past the first byte would mean a value >= 1
                out[i] = out[i].wrapping_add(1);
                if out[i] != 0 {
                    break;
                }
            }
            *low -= TOP;
        }
        out.push((*low >> 48) as u8);
        *low = (*low << 8) & (TOP - 1);
    };
    for &op in ops {
        match op {
            Op::Sym(cum, freq, t) => {
                let r = range >> t;
                low += r * u128::from(cum);
                range = if cum + freq == 1 << t {
                    range - r * u128::from(cum)
                } else {
                    r * u128::from(freq)
                };
            }
            Op::Bit(bit, p1) => {
                let split = (range >> 16) * u128::from(65536 - p1);
                if bit == 0 {
                    range = split;
                } else {
                    low += split;
                    range -= split;
                }
            }
        }
        while range < 1 << 48 {
            range <<= 8;
            emit(&mut out, &mut low);
        }
    }
    for k in 0..=7u32 {
        let unit = 1u128 << (56 - 8 * k);
        let v = low.div_ceil(unit) * unit;
        if v < low + range {
            low = v;
            for _ in 0..k.max(u32::from(low >= TOP)) {
                emit(&mut out, &mut low);
            }
            break;
        }
    }
    while out.last() == Some(&0) {
        out.pop();
    }
    out
}

fn fast_encode(ops: &[Op]) -> Vec<u8> {
    let mut e = Encoder::new();
    for &op in ops {
        match op {
            Op::Sym(cum, freq, t) => e.encode(cum, freq, t),
            Op::Bit(bit, p1) => e.encode_bit(bit, p1),
        }
    }
    e.finish()
}

fn decode_check(bytes: &[u8], ops: &[Op]) {
    let mut d = Decoder::new(bytes);
    for (i, &op) in ops.iter().enumerate() {
        match op {
            Op::Sym(cum, freq, t) => {
                let target = d.decode_target(t);
                assert!(
                    target >= cum && (target < cum + freq || cum + freq == 1 << t),
                    "op {i}: target {target} outside [{cum}, {})",
                    cum + freq
                );
                d.decode_update(cum, freq, t);
            }
            Op::Bit(bit, p1) => assert_eq!(d.decode_bit(p1), bit, "op {i}"),
        }
    }
    // Every stream the encoder writes is read to its last byte, which is not 0.
    assert_eq!(d.check_finished(), Ok(()), "{} bytes", bytes.len());
    // A byte appended to it is found, unless it changes the symbols decoded (which
    // the container's checksums find).
    for junk in [0u8, 1, 0x80, 0xFF] {
        let mut longer = bytes.to_vec();
        longer.push(junk);
        let mut d = Decoder::new(&longer);
        if replay(&mut d, ops) {
            assert!(d.check_finished().is_err(), "junk {junk} accepted");
        }
    }
}

/// Decodes `ops`; whether every symbol decoded is the one coded.
fn replay(d: &mut Decoder<'_>, ops: &[Op]) -> bool {
    let mut same = true;
    for &op in ops {
        match op {
            Op::Sym(cum, freq, t) => {
                let target = d.decode_target(t);
                same &= target >= cum && (target < cum + freq || cum + freq == 1 << t);
                d.decode_update(cum, freq, t);
            }
            Op::Bit(bit, p1) => same &= d.decode_bit(p1) == bit,
        }
    }
    same
}

/// A random frequency table over `n` symbols with total `2^t`.
fn table_strategy() -> impl Strategy<Value = (u32, Vec<u32>)> {
    (1u32..=24, 2usize..=300)
        .prop_flat_map(|(t, n)| {
            let n = n.min(1 << t);
            (Just(t), proptest::collection::vec(1u32..1000, n))
        })
        .prop_map(|(t, weights)| {
            // Scale weights to sum exactly to 2^t with each >= 1.
            let total = 1u64 << t;
            let n = weights.len() as u64;
            let wsum: u64 = weights.iter().map(|&w| u64::from(w)).sum();
            let mut f: Vec<u32> = weights
                .iter()
                .map(|&w| (1 + u64::from(w) * (total - n) / wsum) as u32)
                .collect();
            let s: u64 = f.iter().map(|&x| u64::from(x)).sum();
            f[0] += (total - s) as u32;
            (t, f)
        })
}

fn ops_strategy() -> impl Strategy<Value = Vec<Op>> {
    let sym = (table_strategy(), any::<u32>()).prop_map(|((t, f), pick)| {
        let s = (pick as usize) % f.len();
        let cum: u32 = f[..s].iter().sum();
        Op::Sym(cum, f[s], t)
    });
    let bit = (0u32..2, 1u32..65536).prop_map(|(b, p)| Op::Bit(b, p));
    let skewed = (0u32..2, prop_oneof![1u32..64, 65472u32..65536]).prop_map(|(b, p)| Op::Bit(b, p));
    proptest::collection::vec(prop_oneof![sym, bit, skewed], 0..400)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn matches_reference_and_round_trips(ops in ops_strategy()) {
        let fast = fast_encode(&ops);
        prop_assert_eq!(&fast, &reference_encode(&ops));
        decode_check(&fast, &ops);
    }

    #[test]
    fn size_close_to_information_content(ops in ops_strategy()) {
        let bits: f64 = ops.iter().map(|&op| match op {
            Op::Sym(_, f, t) => f64::from(t) - f64::from(f).log2(),
            Op::Bit(b, p) => -((if b == 1 { f64::from(p) } else { 65536.0 - f64::from(p) }) / 65536.0).log2(),
        }).sum();
        let len = fast_encode(&ops).len() as f64;
        // At most one byte of end cost plus a relative loss far below 1e-5.
        prop_assert!(len * 8.0 <= bits * (1.0 + 1e-5) + 8.0 + 1.0, "{} bytes for {} bits", len, bits);
    }

    #[test]
    fn quantizer_total_and_floor(probs in proptest::collection::vec(prop_oneof![
        4 => 0.0f32..1.0,
        1 => Just(0.0f32),
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => -1.0f32..0.0,
        1 => 1e-45f32..1e-30,
        1 => 1.0f32..1e30,
    ], 256)) {
        let p: [f32; 256] = probs.try_into().unwrap();
        let mut t = FreqTable::default();
        quantize(&p, &mut t);
        let mut total = 0u64;
        for s in 0..256 {
            prop_assert!(t.freq(s) >= 1);
            total += u64::from(t.freq(s));
        }
        prop_assert_eq!(total, u64::from(FREQ_TOTAL));
        // Larger probability never gets a smaller frequency, except for the
        // symbol that took the rounding shortfall (it only grows).
        let clean = |x: f32| if x > 0.0 { x.min(1.0) } else { 0.0 };
        for a in 0..256u32 {
            for b in 0..256u32 {
                if clean(p[a as usize]) > clean(p[b as usize]) {
                    prop_assert!(t.freq(a) >= t.freq(b) || t.freq(b) == (0..256).map(|s| t.freq(s)).max().unwrap());
                }
            }
        }
    }

    #[test]
    fn symbols_round_trip_through_quantized_tables(seq in proptest::collection::vec((any::<u8>(), proptest::collection::vec(0.0f32..1.0, 256)), 1..40)) {
        let mut e = Encoder::new();
        let mut tables = Vec::new();
        for (sym, probs) in &seq {
            let mut t = FreqTable::default();
            quantize(&probs.clone().try_into().unwrap(), &mut t);
            e.code_symbol(u32::from(*sym), &t);
            tables.push(t);
        }
        let bytes = e.finish();
        let mut d = Decoder::new(&bytes);
        for ((sym, _), t) in seq.iter().zip(&tables) {
            prop_assert_eq!(d.code_symbol(0, t), u32::from(*sym));
        }
    }
}

#[test]
fn find_matches_linear_search() {
    let mut p = [0.0f32; 256];
    for (i, x) in p.iter_mut().enumerate() {
        *x = ((i * 7919) % 256) as f32 / 1000.0;
    }
    let mut t = FreqTable::default();
    quantize(&p, &mut t);
    for target in (0..FREQ_TOTAL).step_by(977).chain([0, 1, FREQ_TOTAL - 1]) {
        let linear = (0..256u32).rfind(|&s| t.interval(s).0 <= target).unwrap();
        assert_eq!(t.find(target), linear);
    }
}

#[test]
fn quantizer_edge_inputs() {
    let mut t = FreqTable::default();
    quantize(&[0.0; 256], &mut t);
    assert_eq!(t, FreqTable::default());
    quantize(&[f32::NAN; 256], &mut t);
    assert_eq!(t, FreqTable::default());
    let mut one_hot = [0.0f32; 256];
    one_hot[200] = 1.0;
    quantize(&one_hot, &mut t);
    assert_eq!(t.freq(200), FREQ_TOTAL - 255);
    assert_eq!(t.freq(0), 1);
    // Exact known values: uniform 1/256 input gives the uniform table.
    quantize(&[1.0 / 256.0; 256], &mut t);
    assert_eq!(t, FreqTable::default());
    // Pinned output (sum 0.875 is renormalised): a change here changes archives.
    let mut p = [0.0f32; 256];
    p[0] = 0.5;
    p[1] = 0.25;
    p[2] = 0.125;
    quantize(&p, &mut t);
    assert_eq!(
        (t.freq(0), t.freq(1), t.freq(2), t.freq(3)),
        (9_586_836, 4_793_418, 2_396_709, 1)
    );
    assert!(FreqTable::from_freqs(&[1; 256]).is_none());
}

#[test]
fn empty_and_tiny_streams() {
    assert!(Encoder::new().finish().is_empty());
    // A certain symbol costs nothing.
    let mut e = Encoder::new();
    for _ in 0..1000 {
        e.encode(0, 1 << 20, 20);
    }
    assert!(e.finish().is_empty());
    // Long runs of carries: symbols at the very top of the interval.
    let ops: Vec<Op> = (0..5000)
        .map(|i| {
            if i % 3 == 0 {
                Op::Bit(1, 1)
            } else {
                Op::Sym((1 << 24) - 2, 1, 24)
            }
        })
        .collect();
    let bytes = fast_encode(&ops);
    assert_eq!(bytes, reference_encode(&ops));
    decode_check(&bytes, &ops);
}

#[test]
fn corrupt_input_never_panics() {
    let table = {
        let mut p = [0.0f32; 256];
        for (i, x) in p.iter_mut().enumerate() {
            *x = 1.0 / (1.0 + i as f32);
        }
        let mut t = FreqTable::default();
        quantize(&p, &mut t);
        t
    };
    for seed in 0..64u8 {
        let garbage: Vec<u8> = (0..64u32)
            .map(|i| (i as u8).wrapping_mul(seed).wrapping_add(seed ^ 0xFF))
            .collect();
        let mut d = Decoder::new(&garbage);
        for i in 0..2000 {
            if i % 2 == 0 {
                d.code_symbol(0, &table);
            } else {
                d.code_bit(0, 1 + (i * 31) % 65535);
            }
        }
        let mut d = Decoder::new(&[0xFF; 16]);
        for _ in 0..100 {
            d.code_uniform(0, 24);
        }
    }
}

/// The quantizer as first written (scalar loops, a 128-bit product), kept as the
/// reference its faster form must reproduce exactly: its output is archive format.
fn quantize_reference(probs: &[f32; 256]) -> [u32; 257] {
    let mut w = [0u32; 256];
    let mut total = 0u64;
    for (ws, &p) in w.iter_mut().zip(probs) {
        let x = if p > 0.0 {
            p.min(1.0) * FREQ_TOTAL as f32
        } else {
            0.0
        };
        *ws = x as u32;
        total += u64::from(*ws);
    }
    let mut cum = [0u32; 257];
    if total == 0 {
        for (s, c) in cum.iter_mut().enumerate() {
            *c = (s as u32) << 16;
        }
        return cum;
    }
    let spare = u64::from(FREQ_TOTAL) - 256;
    let inv = u128::from((spare << 32) / total);
    let mut sum = 0u32;
    let mut best = 0usize;
    let mut best_f = 0u32;
    let mut freqs = [0u32; 256];
    for (s, (f, &ws)) in freqs.iter_mut().zip(&w).enumerate() {
        *f = 1 + ((u128::from(ws) * inv) >> 32) as u32;
        sum += *f;
        if *f > best_f {
            best_f = *f;
            best = s;
        }
    }
    freqs[best] += FREQ_TOTAL - sum;
    let mut acc = 0u32;
    for (c, f) in cum.iter_mut().zip(&freqs) {
        *c = acc;
        acc += f;
    }
    cum[256] = acc;
    cum
}

#[test]
fn quantizer_matches_its_reference() {
    let mut state = 0x1234_5678_9abc_def0u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let specials = [
        0.0f32,
        -0.0,
        1.0,
        0.5,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -1.0,
        1e-45,
        1e-8,
        5.9604645e-8,
        0.99999994,
        1.0000001,
        1e30,
    ];
    for case in 0..20_000 {
        let mut p = [0.0f32; 256];
        for x in p.iter_mut() {
            let r = next();
            *x = match (case % 5, r % 16) {
                // softmax-like rows: a few large entries, many tiny ones
                (0, _) => {
                    (r >> 40) as f32 / (1u64 << 24) as f32 * if r % 7 == 0 { 1.0 } else { 1e-4 }
                }
                (1, 0..=2) => specials[(r >> 8) as usize % specials.len()],
                (2, _) => f32::from_bits((r >> 32) as u32),
                (3, _) => 1.0 / 256.0 + ((r >> 40) as f32 - 8e6) * 1e-12,
                _ => (r >> 40) as f32 / (1u64 << 24) as f32,
            };
        }
        if case % 97 == 0 {
            p = [0.0; 256];
            p[(next() % 256) as usize] = 1.0;
        }
        let mut t = FreqTable::default();
        quantize(&p, &mut t);
        let want = quantize_reference(&p);
        for (s, &c) in want.iter().enumerate() {
            assert_eq!(t.cum(s), c, "case {case}, cum[{s}]");
        }
    }
}
