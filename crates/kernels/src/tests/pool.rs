//! The thread pool and the process-wide settings: concurrent callers, thread counts,
//! `force_isa`.

use super::{GLOBAL, Rng, assert_bits, isas};
use crate::*;

#[test]
fn concurrent_callers_get_the_same_bits() {
    let mut rng = Rng::new(9);
    let (m, k, n) = (96, 256, 160);
    let a = rng.vec(m * k, -1.0, 1.0);
    let b = rng.vec(k * n, -1.0, 1.0);
    let mut want = vec![0.0; m * n];
    matmul(&a, &b, &mut want, m, k, n, false);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..5 {
                    let mut c = vec![0.0; m * n];
                    matmul(&a, &b, &mut c, m, k, n, false);
                    assert_bits(&c, &want, "concurrent matmul");
                }
            });
        }
    });
}

#[test]
fn global_settings() {
    let _guard = GLOBAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let before = (active_isa(), num_threads());
    let mut rng = Rng::new(10);
    let (m, k, n) = (64, 300, 128);
    let a = rng.vec(m * k, -1.0, 1.0);
    let b = rng.vec(k * n, -1.0, 1.0);
    let x = rng.vec(5000, -5.0, 5.0);
    let mut results = Vec::new();
    for isa in isas() {
        force_isa(Some(isa)).unwrap();
        assert_eq!(active_isa(), isa);
        for threads in [1, 2] {
            set_num_threads(threads);
            assert_eq!(num_threads(), threads);
            let mut c = vec![0.0; m * n];
            matmul_nt(&a, &b, &mut c, m, k, n, false);
            let mut g = vec![0.0; x.len()];
            gelu_slice(&x, &mut g);
            results.push((c, g));
        }
    }
    for (c, g) in &results[1..] {
        assert_bits(c, &results[0].0, "matmul_nt under force_isa");
        assert_bits(g, &results[0].1, "gelu_slice under force_isa");
    }
    for isa in Isa::ALL {
        assert_eq!(force_isa(Some(isa)).is_ok(), isa.is_supported());
        assert_eq!(Isa::from_name(isa.name()), Some(isa));
    }
    force_isa(None).unwrap();
    set_num_threads(before.1);
    let _ = before.0;
}

#[test]
fn a_panicking_part_is_reported() {
    let r = std::panic::catch_unwind(|| {
        crate::pool::run_parts(4, 2, &|part| assert!(part != 3, "part 3 fails"));
    });
    assert!(r.is_err());
    // The pool still works afterwards.
    let hits = std::sync::atomic::AtomicUsize::new(0);
    crate::pool::run_parts(8, 2, &|_| {
        hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    });
    assert_eq!(hits.into_inner(), 8);
}
