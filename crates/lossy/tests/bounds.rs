//! Every value within the bound, specials exact, for abs and rel at 1e-2,
//! 1e-3, 1e-4: on generated grids (routine) and on the whole float set
//! (`#[ignore]`d; run by hand with `SEP_CORPUS=/work/shared/corpus cargo test
//! --release -p sep-lossy --test bounds -- --ignored --nocapture`).

use sep_lossy::{Dtype, Mode, Options, Predictor, compare, compress_raw, decompress, inspect};
use std::time::Instant;

fn field(shape: &[usize], seed: u64) -> Vec<f64> {
    let n: usize = shape.iter().product();
    let mut s = seed | 1;
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let noise = (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            let x = (i % shape[shape.len() - 1]) as f64;
            let y = (i / shape[shape.len() - 1]) as f64;
            20.0 * (x * 0.05).sin() * (y * 0.03).cos() + 0.01 * noise + y * 0.1
        })
        .collect()
}

fn to_raw(v: &[f64], dtype: Dtype) -> Vec<u8> {
    match dtype {
        Dtype::F32 => v.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect(),
        Dtype::F64 => v.iter().flat_map(|&x| x.to_le_bytes()).collect(),
    }
}

/// Checks every value against the bound (and specials bit-exact) directly,
/// not through `compare`.
fn check(raw: &[u8], back: &[u8], dtype: Dtype, bound: f64, fills: &[f64]) {
    assert_eq!(raw.len(), back.len());
    let w = dtype.size();
    for (i, (a, b)) in raw.chunks(w).zip(back.chunks(w)).enumerate() {
        let (x, y) = match dtype {
            Dtype::F32 => (
                f64::from(f32::from_le_bytes(a.try_into().unwrap())),
                f64::from(f32::from_le_bytes(b.try_into().unwrap())),
            ),
            Dtype::F64 => (
                f64::from_le_bytes(a.try_into().unwrap()),
                f64::from_le_bytes(b.try_into().unwrap()),
            ),
        };
        if !x.is_finite() || fills.contains(&x) {
            assert_eq!(a, b, "special value {x} at {i} not exact");
        } else {
            assert!(
                (x - y).abs() <= bound,
                "value {i}: {x} -> {y}, bound {bound}"
            );
        }
    }
}

fn round_trip(raw: &[u8], dtype: Dtype, shape: &[usize], opts: &Options, fills: &[f64]) -> usize {
    let a = compress_raw(raw, dtype, shape, opts).unwrap();
    let info = inspect(&a).unwrap();
    let back = decompress(&a, u64::MAX).unwrap_or_else(|e| panic!("{shape:?} {opts:?}: {e}"));
    check(raw, &back, dtype, info.bound, fills);
    if let Mode::Abs(e) = opts.mode {
        assert_eq!(info.bound, e);
    }
    a.len()
}

#[test]
fn generated_grids_keep_every_bound_with_specials() {
    for (shape, dtype) in [
        (vec![3000usize], Dtype::F64),
        (vec![40, 70], Dtype::F32),
        (vec![6, 20, 30], Dtype::F32),
        (vec![2, 3, 9, 11], Dtype::F64),
    ] {
        let mut v = field(&shape, 7);
        let n = v.len();
        v[n / 3] = f64::NAN;
        v[n / 2] = f64::INFINITY;
        v[n / 2 + 1] = f64::NEG_INFINITY;
        for x in v.iter_mut().skip(n / 4).take(n / 10) {
            *x = -1e34;
        }
        let raw = to_raw(&v, dtype);
        for mode in [
            Mode::Abs(1e-2),
            Mode::Abs(1e-3),
            Mode::Abs(1e-4),
            Mode::Rel(1e-2),
            Mode::Rel(1e-3),
            Mode::Rel(1e-4),
        ] {
            for (predictor, revision) in [
                (None, None),
                (None, Some(0)),
                (Some(Predictor::Lorenzo), None),
                (Some(Predictor::Interpolation), None),
                (None, Some(2)),
                (Some(Predictor::Interpolation), Some(2)),
                (None, Some(3)),
                (Some(Predictor::Interpolation), Some(3)),
            ] {
                let opts = Options {
                    mode,
                    predictor,
                    revision,
                    ..Options::default()
                };
                let size = round_trip(&raw, dtype, &shape, &opts, &[-1e34]);
                assert!(size < raw.len(), "{shape:?} {mode:?} {size}");
            }
        }
    }
}

#[test]
fn explicit_fill_is_kept_and_left_out_of_the_range() {
    let shape = [30, 40];
    let mut v = field(&shape, 3);
    v[5] = 9999.0; // a fill too rare to be detected
    let raw = to_raw(&v, Dtype::F32);
    let opts = Options {
        mode: Mode::Rel(1e-3),
        fill: Some(9999.0),
        ..Options::default()
    };
    let a = compress_raw(&raw, Dtype::F32, &shape, &opts).unwrap();
    let info = inspect(&a).unwrap();
    assert!(info.fills.contains(&u64::from(9999f32.to_bits())));
    // The range is that of the other values, not up to 9999.
    assert!(info.bound < 0.1, "{}", info.bound);
    let back = decompress(&a, u64::MAX).unwrap();
    check(&raw, &back, Dtype::F32, info.bound, &[9999.0]);
    let s = compare(Dtype::F32, &raw, &back, &info.fills).unwrap();
    assert!(s.specials_exact && s.max_error <= info.bound);
}

#[test]
fn psnr_and_ratio_modes_reach_their_targets() {
    let shape = [64, 96];
    let raw = to_raw(&field(&shape, 11), Dtype::F32);
    for db in [40.0, 60.0, 80.0] {
        let a = compress_raw(
            &raw,
            Dtype::F32,
            &shape,
            &Options {
                mode: Mode::Psnr(db),
                ..Options::default()
            },
        )
        .unwrap();
        let back = decompress(&a, u64::MAX).unwrap();
        let s = compare(Dtype::F32, &raw, &back, &[]).unwrap();
        assert!(s.psnr >= db, "psnr {} < {db}", s.psnr);
    }
    for r in [8.0, 20.0, 40.0] {
        let a = compress_raw(
            &raw,
            Dtype::F32,
            &shape,
            &Options {
                mode: Mode::Ratio(r),
                ..Options::default()
            },
        )
        .unwrap();
        let got = raw.len() as f64 / a.len() as f64;
        assert!((got / r - 1.0).abs() <= 0.05, "ratio {got} for {r}");
        decompress(&a, u64::MAX).unwrap();
    }
}

#[test]
fn corrupt_archives_fail_cleanly() {
    let shape = [20, 30];
    let raw = to_raw(&field(&shape, 5), Dtype::F32);
    let a = compress_raw(&raw, Dtype::F32, &shape, &Options::default()).unwrap();
    for i in 0..a.len() {
        for bit in [0x01u8, 0x80] {
            let mut b = a.clone();
            b[i] ^= bit;
            assert!(decompress(&b, u64::MAX).is_err(), "flip at {i} accepted");
        }
    }
    for n in 0..a.len() {
        assert!(decompress(&a[..n], u64::MAX).is_err());
    }
    assert!(matches!(
        decompress(&a, 100),
        Err(sep_lossy::Error::LimitExceeded { .. })
    ));
    // Byte 5 is the model revision: one the decoder does not know is named.
    assert_eq!(inspect(&a).unwrap().revision, 1);
    let mut b = a.clone();
    b[5] = 7;
    let e = decompress(&b, u64::MAX).unwrap_err().to_string();
    assert!(e.contains("coder is 7"), "{e}");
    let e = compress_raw(
        &raw,
        Dtype::F32,
        &shape,
        &Options {
            revision: Some(9),
            ..Options::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("model revision 9"), "{e}");
}

#[test]
fn bad_options_are_one_line_errors() {
    let raw = vec![0u8; 400];
    let e = compress_raw(&raw, Dtype::F32, &[10, 11], &Options::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "shape 10x11 of f32 needs 440 bytes, the input has 400"
    );
    for bad in [
        "abs=0",
        "rel=-1",
        "abs=NaN",
        "psnr=inf",
        "ratio=0.5",
        "abs",
        "foo=1",
        "abs=x",
    ] {
        let e = Mode::parse(bad).unwrap_err().to_string();
        assert!(!e.contains('\n') && e.contains("--lossy"), "{bad}: {e}");
    }
    assert!(
        Dtype::parse("f16")
            .unwrap_err()
            .to_string()
            .contains("unknown dtype 'f16'")
    );
}

/// The whole float set of the shared corpus at abs and rel 1e-2, 1e-3,
/// 1e-4, default and fast settings: every value within the bound, specials exact; prints sizes and
/// speed.
#[test]
#[ignore = "reads the shared corpus; run by hand with SEP_CORPUS"]
fn whole_float_set_keeps_every_bound() {
    let root = std::env::var("SEP_CORPUS").unwrap_or_else(|_| "/work/shared/corpus".into());
    let list = std::fs::read_to_string(format!("{root}/sets/float.txt")).unwrap();
    let mut files = 0;
    for name in list
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let raw = std::fs::read(format!("{root}/files/{name}")).unwrap();
        let dtype = if name.starts_with("float64") {
            Dtype::F64
        } else {
            Dtype::F32
        };
        let shape: Vec<usize> = name
            .split('.')
            .find(|p| p.contains('x') && p.split('x').all(|d| d.parse::<usize>().is_ok()))
            .map(|p| p.split('x').map(|d| d.parse().unwrap()).collect())
            .unwrap_or_else(|| vec![raw.len() / dtype.size()]);
        for (mode, fast) in [
            Mode::Abs(1e-2),
            Mode::Abs(1e-3),
            Mode::Abs(1e-4),
            Mode::Rel(1e-2),
            Mode::Rel(1e-3),
            Mode::Rel(1e-4),
        ]
        .into_iter()
        .flat_map(|m| [(m, false), (m, true)])
        {
            let t = Instant::now();
            let a = compress_raw(
                &raw,
                dtype,
                &shape,
                &Options {
                    mode,
                    fast,
                    ..Options::default()
                },
            )
            .unwrap();
            let tc = t.elapsed().as_secs_f64();
            let info = inspect(&a).unwrap();
            let t = Instant::now();
            let back = decompress(&a, u64::MAX).unwrap();
            let td = t.elapsed().as_secs_f64();
            let fills: Vec<f64> = info.fills.iter().map(|&f| dtype.from_bits(f)).collect();
            check(&raw, &back, dtype, info.bound, &fills);
            let s = compare(dtype, &raw, &back, &info.fills).unwrap();
            println!(
                "{name:40} {:10} {:4} {:>9} B ratio {:7.2} {:13} max_err {:.3e} bound {:.3e} psnr {:6.2} c {:5.1} MB/s d {:5.1} MB/s",
                mode.describe(),
                if fast { "fast" } else { "" },
                a.len(),
                raw.len() as f64 / a.len() as f64,
                info.predictor.name(),
                s.max_error,
                info.bound,
                s.psnr,
                raw.len() as f64 / tc / 1e6,
                raw.len() as f64 / td / 1e6
            );
        }
        files += 1;
    }
    assert!(files >= 6, "float set has {files} files");
}

/// A series stored with two decimals plus an offset (like Basel-temp: steps of
/// 0.01): at a bound below half the step the values are coded in grid steps
/// (predictor ids 3 and 4), within the bound, nearly lossless, and smaller
/// than the same archive without the grid; above half the step, or with
/// `grid: false`, the archive has no grid. Flipping any bit of a grid
/// archive's header or payload fails cleanly.
#[test]
fn values_on_a_decimal_grid_are_coded_in_grid_steps() {
    let n = 20_000;
    let mut s = 0x1234_5678_9abc_def1u64;
    let mut t = 12.0f64;
    let values: Vec<f64> = (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            t += ((s >> 40) % 7) as f64 * 0.01 - 0.03 + (i as f64 * 0.01).sin() * 0.02;
            (t * 100.0).round() / 100.0 + 0.000_528_7
        })
        .collect();
    for dtype in [Dtype::F64, Dtype::F32] {
        let raw = to_raw(&values, dtype);
        for fast in [false, true] {
            for e in [1e-3, 1e-5] {
                let opts = |grid| Options {
                    mode: Mode::Abs(e),
                    fast,
                    grid,
                    ..Options::default()
                };
                let on = compress_raw(&raw, dtype, &[n], &opts(true)).unwrap();
                let off = compress_raw(&raw, dtype, &[n], &opts(false)).unwrap();
                let info = inspect(&on).unwrap();
                let (o, g) = info.grid.expect("a grid at a bound below half its step");
                assert!((g - 0.01).abs() < 1e-12 && o.abs() < 0.005, "{o} {g}");
                assert!(inspect(&off).unwrap().grid.is_none());
                let back = decompress(&on, u64::MAX).unwrap();
                check(&raw, &back, dtype, e, &[]);
                let st = compare(dtype, &raw, &back, &[]).unwrap();
                // Lossless up to the rounding of `offset + k step` (f32: an ulp).
                assert!(st.max_error <= 1e-5, "{dtype:?} {e}: {}", st.max_error);
                assert!(
                    on.len() < off.len(),
                    "{dtype:?} fast {fast} e {e}: grid {} bytes, without {}",
                    on.len(),
                    off.len()
                );
            }
            // A bound above half the step: the ordinary coding.
            let a = compress_raw(
                &raw,
                dtype,
                &[n],
                &Options {
                    mode: Mode::Abs(0.006),
                    fast,
                    ..Options::default()
                },
            )
            .unwrap();
            assert!(inspect(&a).unwrap().grid.is_none());
        }
    }
    let raw = to_raw(&values[..600], Dtype::F64);
    let a = compress_raw(
        &raw,
        Dtype::F64,
        &[600],
        &Options {
            mode: Mode::Abs(1e-4),
            ..Options::default()
        },
    )
    .unwrap();
    assert!(inspect(&a).unwrap().grid.is_some());
    for i in 0..a.len() {
        let mut b = a.clone();
        b[i] ^= 0x10;
        assert!(decompress(&b, u64::MAX).is_err(), "flip at {i} accepted");
    }
}

/// The float set's files: name, bytes, dtype and shape (from the name).
fn float_set() -> Vec<(String, Vec<u8>, Dtype, Vec<usize>)> {
    let root = std::env::var("SEP_CORPUS").unwrap_or_else(|_| "/work/shared/corpus".into());
    let list = std::fs::read_to_string(format!("{root}/sets/float.txt")).unwrap();
    list.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|name| {
            let raw = std::fs::read(format!("{root}/files/{name}")).unwrap();
            let dtype = if name.starts_with("float64") {
                Dtype::F64
            } else {
                Dtype::F32
            };
            let shape: Vec<usize> = name
                .split('.')
                .find(|p| p.contains('x') && p.split('x').all(|d| d.parse::<usize>().is_ok()))
                .map(|p| p.split('x').map(|d| d.parse().unwrap()).collect())
                .unwrap_or_else(|| vec![raw.len() / dtype.size()]);
            (name.to_string(), raw, dtype, shape)
        })
        .collect()
}

/// Issue 21's targets for the other two modes on every file of the float
/// set, both settings: `psnr` at or above the target, `ratio` within 5% of
/// the requested ratio (`#[ignore]`d: `SEP_CORPUS=/work/shared/corpus cargo
/// test --release -p sep-lossy --test bounds -- --ignored --nocapture
/// psnr_and_ratio`).
#[test]
#[ignore = "reads the shared corpus; run by hand with SEP_CORPUS"]
fn whole_float_set_psnr_and_ratio_modes_reach_their_targets() {
    let set = float_set();
    assert!(set.len() >= 6, "float set has {} files", set.len());
    let mut misses = Vec::new();
    for (name, raw, dtype, shape) in &set {
        for (mode, fast) in [
            Mode::Psnr(50.0),
            Mode::Psnr(70.0),
            Mode::Psnr(90.0),
            Mode::Ratio(8.0),
            Mode::Ratio(15.0),
            Mode::Ratio(30.0),
        ]
        .into_iter()
        .flat_map(|m| [(m, false), (m, true)])
        {
            let a = compress_raw(
                raw,
                *dtype,
                shape,
                &Options {
                    mode,
                    fast,
                    ..Options::default()
                },
            )
            .unwrap();
            let info = inspect(&a).unwrap();
            let back = decompress(&a, u64::MAX).unwrap();
            let fills: Vec<f64> = info.fills.iter().map(|&f| dtype.from_bits(f)).collect();
            check(raw, &back, *dtype, info.bound, &fills);
            let s = compare(*dtype, raw, &back, &info.fills).unwrap();
            let ratio = raw.len() as f64 / a.len() as f64;
            let ok = match mode {
                Mode::Psnr(db) => s.psnr >= db,
                Mode::Ratio(r) => (ratio / r - 1.0).abs() <= 0.05,
                _ => unreachable!(),
            };
            println!(
                "{name:40} {:10} {:4} ratio {ratio:7.2} psnr {:7.2} bound {:.3e}{}",
                mode.describe(),
                if fast { "fast" } else { "" },
                s.psnr,
                info.bound,
                if ok { "" } else { "  MISSED" }
            );
            if !ok {
                misses.push(format!("{name} {} fast={fast}", mode.describe()));
            }
        }
    }
    assert!(misses.is_empty(), "missed: {misses:?}");
}

/// A smooth series at a low rate: the encoder interpolates by level
/// (predictor id 5), keeps the bound, and reaches a higher PSNR than plain
/// interpolation at no more than 10% more bytes (a plain interpolation would
/// need far more for that PSNR); both settings, and the
/// predictor forced at a high rate round-trips too.
#[test]
fn low_rates_interpolate_by_level_for_a_higher_psnr() {
    let n = 30_000;
    let v: Vec<f64> = (0..n)
        .map(|i| {
            let t = i as f64 * 0.002;
            88.0 + 0.8 * t.sin() + 0.3 * (t * 3.7).cos() + 0.05 * (t * 17.0).sin()
        })
        .collect();
    let raw = to_raw(&v, Dtype::F64);
    for fast in [false, true] {
        let opts = |predictor| Options {
            mode: Mode::Rel(1e-2),
            predictor,
            fast,
            ..Options::default()
        };
        let chosen = compress_raw(&raw, Dtype::F64, &[n], &opts(None)).unwrap();
        let info = inspect(&chosen).unwrap();
        assert_eq!(info.predictor, Predictor::InterpolationByLevel);
        let plain = compress_raw(
            &raw,
            Dtype::F64,
            &[n],
            &opts(Some(Predictor::Interpolation)),
        )
        .unwrap();
        let a = decompress(&chosen, u64::MAX).unwrap();
        let b = decompress(&plain, u64::MAX).unwrap();
        check(&raw, &a, Dtype::F64, info.bound, &[]);
        let (sa, sb) = (
            compare(Dtype::F64, &raw, &a, &[]).unwrap(),
            compare(Dtype::F64, &raw, &b, &[]).unwrap(),
        );
        assert!(
            sa.psnr > sb.psnr + 1.0 && chosen.len() * 100 <= plain.len() * 110,
            "fast {fast}: by level {} B {:.2} dB, plain {} B {:.2} dB",
            chosen.len(),
            sa.psnr,
            plain.len(),
            sb.psnr
        );
    }
    let shape = [24, 40];
    let raw = to_raw(&field(&shape, 3), Dtype::F32);
    let opts = Options {
        mode: Mode::Abs(1e-3),
        predictor: Some(Predictor::InterpolationByLevel),
        ..Options::default()
    };
    round_trip(&raw, Dtype::F32, &shape, &opts, &[]);
}

/// The fast setting codes an `f64` array at a low rate with the default
/// setting's model (revision 1, smaller than its own tables) and keeps its
/// tables (revision 3) at higher rates and for `f32` arrays.
#[test]
fn fast_setting_uses_the_default_model_at_low_rates_on_f64() {
    let n = 30_000;
    let v: Vec<f64> = (0..n)
        .map(|i| {
            let t = i as f64 * 0.002;
            88.0 + 0.8 * t.sin() + 0.3 * (t * 3.7).cos() + 0.05 * (t * 17.0).sin()
        })
        .collect();
    let fast = |mode, revision| Options {
        mode,
        fast: true,
        revision,
        ..Options::default()
    };
    for (dtype, mode, want) in [
        (Dtype::F64, Mode::Rel(1e-2), 1),
        (Dtype::F64, Mode::Rel(1e-7), 3),
        (Dtype::F32, Mode::Rel(1e-2), 3),
    ] {
        let raw = to_raw(&v, dtype);
        let a = compress_raw(&raw, dtype, &[n], &fast(mode, None)).unwrap();
        let info = inspect(&a).unwrap();
        assert_eq!(info.revision, want, "{dtype:?} {mode:?}");
        let back = decompress(&a, u64::MAX).unwrap();
        check(&raw, &back, dtype, info.bound, &[]);
        if want == 1 {
            let tables = compress_raw(&raw, dtype, &[n], &fast(mode, Some(3))).unwrap();
            assert_eq!(inspect(&tables).unwrap().predictor, info.predictor);
            assert!(
                a.len() < tables.len(),
                "{} B with the default model, {} B with the tables",
                a.len(),
                tables.len()
            );
        }
    }
}

/// The fast setting's revision 3 codes the wide codes of fine bounds with its
/// classes of magnitudes (symbol, sign and low bits) instead of revision 2's
/// chain of binary decisions: every value within the bound, no larger than
/// revision 2 by more than 1%, and at coarse bounds (small codes) within 1%
/// too.
#[test]
fn fast_revision_3_codes_wide_codes_by_class() {
    let shape = [60, 80];
    let raw = to_raw(&field(&shape, 11), Dtype::F32);
    for mode in [Mode::Rel(1e-5), Mode::Rel(1e-3), Mode::Abs(1e-4)] {
        let size = |revision| {
            let opts = Options {
                mode,
                fast: true,
                revision,
                ..Options::default()
            };
            round_trip(&raw, Dtype::F32, &shape, &opts, &[])
        };
        let (r3, r2) = (size(None), size(Some(2)));
        assert_eq!(size(Some(3)), r3, "the fast setting writes revision 3");
        assert!(
            r3 * 100 <= r2 * 101,
            "{mode:?}: revision 3 {r3} B, 2 {r2} B"
        );
    }
    let opts = Options {
        mode: Mode::Rel(1e-5),
        fast: true,
        ..Options::default()
    };
    let a = compress_raw(&raw, Dtype::F32, &shape, &opts).unwrap();
    assert_eq!(inspect(&a).unwrap().revision, 3);
}
