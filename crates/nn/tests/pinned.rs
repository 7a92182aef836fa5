//! The random sequences are part of the archive format: the decoder rebuilds the model
//! from the seed, so these constants must never change. If one of these tests fails,
//! the change breaks every archive written before it; revert it (or bump the format
//! version and keep the old generator for old archives).
//!
//! The xoshiro256** and SplitMix64 values were cross-checked against an independent
//! Python implementation of the published algorithms (SplitMix64 from seed 0 starts
//! 0xE220A8397B1DCDAF, the published reference value).

use sep_nn::{Rng, init, splitmix64};

fn bits32(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn splitmix64_reference() {
    let mut s = 0u64;
    assert_eq!(splitmix64(&mut s), 0xE220_A839_7B1D_CDAF);
    assert_eq!(splitmix64(&mut s), 0x6E78_9E6A_A1B9_65F4);
}

#[test]
fn xoshiro_u64() {
    let mut r = Rng::new(0);
    let got: Vec<u64> = (0..4).map(|_| r.next_u64()).collect();
    assert_eq!(
        got,
        [
            0x99EC_5F36_CB75_F2B4,
            0xBF6E_1F78_4956_452A,
            0x1A5F_849D_4933_E6E0,
            0x6AA5_94F1_262D_2D2C
        ]
    );
    let mut r = Rng::new(0x5EED);
    let got: Vec<u64> = (0..4).map(|_| r.next_u64()).collect();
    assert_eq!(
        got,
        [
            0xEF33_F170_5524_4B74,
            0xE1F5_9111_2FB5_051B,
            0xD8AB_0564_0214_863A,
            0xF985_E1F2_FB89_7B03
        ]
    );
    let mut r = Rng::new(2);
    assert_eq!(r.fork().next_u64(), 0x4871_F886_2353_A927);
}

#[test]
fn uniforms_and_normals() {
    let mut r = Rng::new(1);
    let f: Vec<u32> = (0..4).map(|_| r.next_f32().to_bits()).collect();
    assert_eq!(f, [0x3F33_F2AF, 0x3F05_3B55, 0x3F12_F897, 0x3EC8_5C38]);
    let mut r = Rng::new(1);
    let d: Vec<u64> = (0..4).map(|_| r.next_f64().to_bits()).collect();
    assert_eq!(
        d,
        [
            0x3FE6_7E55_EDA1_F8E2,
            0x3FE0_A76A_B2C8_E6C9,
            0x3FE2_5F12_EAC1_0548,
            0x3FD9_0B87_1EF0_99A8
        ]
    );
    let mut r = Rng::new(1);
    let n: Vec<u64> = (0..6).map(|_| r.next_normal().to_bits()).collect();
    assert_eq!(
        n,
        [
            0x3FFE_267C_87AC_62EB,
            0x3FC8_4ABD_879D_0E18,
            0x3FF4_D55C_9633_557C,
            0xBFFE_8D0B_0399_EE9C,
            0x3FDC_0D73_2AE4_B3DD,
            0xBFE9_5ABE_A928_1847
        ]
    );
    let mut r = Rng::new(1);
    let b: Vec<u64> = (0..4).map(|_| r.next_below(1000)).collect();
    assert_eq!(b, [702, 520, 574, 391]);
}

#[test]
fn initialisers() {
    let mut b = [0f32; 4];
    let mut r = Rng::new(3);
    init::linear_weight(&mut b, &mut r, 256);
    assert_eq!(
        bits32(&b),
        [0x3CC3_36AF, 0x3C8F_F478, 0xBD10_3FEA, 0x3B8B_1B59]
    );
    let mut r = Rng::new(3);
    init::linear_bias(&mut b, &mut r, 1024);
    assert_eq!(
        bits32(&b),
        [0x3C43_36AF, 0x3C0F_F478, 0xBC90_3FEA, 0x3B0B_1B59]
    );
    let mut r = Rng::new(3);
    init::kaiming_uniform(&mut b, &mut r, 256, 0.0);
    assert_eq!(
        bits32(&b),
        [0x3D6F_163D, 0x3D30_4EDF, 0xBDB0_AB46, 0x3C2A_5ED0]
    );
    let mut r = Rng::new(3);
    init::normal(&mut b, &mut r, 0.0, 1.0);
    assert_eq!(
        bits32(&b),
        [0x3FB2_16D6, 0x3F83_53B8, 0xBFBF_486D, 0x3E38_7696]
    );
    let mut r = Rng::new(3);
    init::normal(&mut b, &mut r, 0.5, 0.01);
    assert_eq!(
        bits32(&b),
        [0x3F03_8FD1, 0x3F02_A065, 0x3EF8_5943, 0x3F00_760E]
    );
    let mut r = Rng::new(3);
    init::xavier_normal(&mut b, &mut r, 256, 1024, 1.0);
    assert_eq!(
        bits32(&b),
        [0x3D61_445B, 0x3D26_1DF4, 0xBD71_F4B4, 0x3BE9_545F]
    );
    let mut r = Rng::new(3);
    init::xavier_uniform(&mut b, &mut r, 256, 1024, 1.0);
    assert_eq!(
        bits32(&b),
        [0x3CD5_D886, 0x3C9D_B1DB, 0xBD1E_0481, 0x3B98_6247]
    );
    let mut r = Rng::new(3);
    init::uniform(&mut b, &mut r, -2.0, 3.0);
    assert_eq!(
        bits32(&b),
        [0x3FBA_022E, 0x3F99_F8CB, 0xBF68_9FC9, 0x3F2B_788C]
    );
    init::constant(&mut b, 1.0);
    assert_eq!(b, [1.0; 4]);
}

/// Layer constructors draw in PyTorch's order (weight, then bias) from the generator
/// they are given.
#[test]
fn layer_constructors_draw_weight_then_bias() {
    let mut r = Rng::new(3);
    let lin = sep_nn::Linear::new(256, 2, true, 1, &mut r);
    assert_eq!(
        bits32(&lin.weight.value[..4]),
        [0x3CC3_36AF, 0x3C8F_F478, 0xBD10_3FEA, 0x3B8B_1B59]
    );
    let mut r = Rng::new(3);
    let mut w = vec![0f32; 512];
    init::linear_weight(&mut w, &mut r, 256);
    let mut bias = [0f32; 2];
    init::linear_bias(&mut bias, &mut r, 256);
    assert_eq!(bits32(&lin.bias.as_ref().unwrap().value), bits32(&bias));
    let mut r = Rng::new(3);
    let emb = sep_nn::Embedding::new(256, 16, 1, &mut r);
    assert_eq!(
        bits32(&emb.weight.value[..4]),
        [0x3FB2_16D6, 0x3F83_53B8, 0xBFBF_486D, 0x3E38_7696]
    );
}

#[test]
fn sinusoidal_table() {
    let mut t = vec![0f32; 16 * 32];
    sep_nn::sinusoidal_positions(&mut t, 16, 32);
    let picks: Vec<u32> = [33, 47, 50, 63, 15 * 32 + 1, 15 * 32 + 17, 15 * 32 + 31]
        .iter()
        .map(|&i| t[i].to_bits())
        .collect();
    // Also equal to CPython's libm values rounded to f32.
    assert_eq!(
        picks,
        [
            0x3F08_7DBA,
            0x393A_7753,
            0x3F73_4E6A,
            0x3F80_0000,
            0x3F55_F980,
            0xBF0C_89AC,
            0x3F7F_FFC4
        ]
    );
}
