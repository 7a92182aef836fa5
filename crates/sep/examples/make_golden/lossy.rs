//! The lossy golden archives of format version 2 (tests/golden/lossy-v2).

#[allow(unused_imports)]
use super::*;

/// Issue 21: lossy archives (format version 2, doc/FORMAT.md section 9). Their
/// decoded bytes are pinned by XXH3 in `lossy-v2/MANIFEST.tsv`, and every value
/// must be within the archive's bound of the input.
pub(crate) fn lossy_files(files: &mut Files) {
    use sep::lossy::{Dtype, Mode, Options, Predictor, compress_npy, compress_raw, npy};
    // A 4 x 24 x 32 f32 grid: smooth field plus noise, a land mask of -1e10, a NaN
    // and both infinities.
    let mut grid = Vec::new();
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..4 * 24 * 32 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let (z, y, x) = (i / 768, (i / 32) % 24, i % 32);
        let v: f32 = if (x + y) % 11 == 0 && y < 12 {
            -1e10
        } else if i == 100 {
            f32::NAN
        } else if i == 200 {
            f32::INFINITY
        } else if i == 300 {
            f32::NEG_INFINITY
        } else {
            15.0 * (x as f32 * 0.2).sin()
                + 4.0 * (y as f32 * 0.15).cos()
                + z as f32
                + (s >> 40) as f32 / (1u64 << 24) as f32 * 0.05
        };
        grid.extend_from_slice(&v.to_le_bytes());
    }
    files.insert("inputs/grid-4x24x32.f32".into(), grid.clone());
    let grid_npy = npy::write(Dtype::F32, &[4, 24, 32], &grid);
    files.insert("inputs/grid-4x24x32.npy".into(), grid_npy.clone());
    let basel = std::fs::read(golden_dir().join("inputs/basel-temp.head2048.f64")).expect("input");
    let mut manifest =
        String::from("# archive\tinput\tdtype\tshape\tmode\tbound\txxh3_64 of the decoded bytes\n");
    let cases: Vec<(&str, &str, Mode, Option<Predictor>)> = vec![
        (
            "abs-0.01.lorenzo.grid.sep",
            "grid-4x24x32.f32",
            Mode::Abs(0.01),
            Some(Predictor::Lorenzo),
        ),
        (
            "abs-0.01.interp.grid.sep",
            "grid-4x24x32.f32",
            Mode::Abs(0.01),
            Some(Predictor::Interpolation),
        ),
        (
            "rel-1e-4.grid.sep",
            "grid-4x24x32.f32",
            Mode::Rel(1e-4),
            None,
        ),
        (
            "psnr-50.grid.sep",
            "grid-4x24x32.f32",
            Mode::Psnr(50.0),
            None,
        ),
        (
            "ratio-8.grid.sep",
            "grid-4x24x32.f32",
            Mode::Ratio(8.0),
            None,
        ),
        (
            "rel-1e-3.grid.npy.sep",
            "grid-4x24x32.npy",
            Mode::Rel(1e-3),
            None,
        ),
        (
            "abs-0.001.basel.sep",
            "basel-temp.head2048.f64",
            Mode::Abs(0.001),
            None,
        ),
        (
            "rel-1e-2.lorenzo.basel.sep",
            "basel-temp.head2048.f64",
            Mode::Rel(1e-2),
            Some(Predictor::Lorenzo),
        ),
    ];
    // The cases above are pinned to model revision 0 (written before revision
    // 1 existed); the ones below use the newest revisions.
    let pinned = cases.len();
    let cases: Vec<_> = cases
        .into_iter()
        .map(|(n, i, m, p)| (n, i, m, p, Some(0u8), false))
        .chain([
            (
                "r1.rel-1e-4.grid.sep",
                "grid-4x24x32.f32",
                Mode::Rel(1e-4),
                None,
                Some(1u8),
                false,
            ),
            (
                "r1.abs-0.01.lorenzo.grid.sep",
                "grid-4x24x32.f32",
                Mode::Abs(0.01),
                Some(Predictor::Lorenzo),
                Some(1u8),
                false,
            ),
            (
                "r1.abs-0.0001.basel.sep",
                "basel-temp.head2048.f64",
                Mode::Abs(1e-4),
                None,
                Some(1u8),
                false,
            ),
            (
                "fast.rel-1e-4.grid.sep",
                "grid-4x24x32.f32",
                Mode::Rel(1e-4),
                None,
                Some(2u8),
                false,
            ),
            (
                "fast.abs-0.01.interp.grid.sep",
                "grid-4x24x32.f32",
                Mode::Abs(0.01),
                Some(Predictor::Interpolation),
                Some(2u8),
                false,
            ),
            (
                "fast.abs-0.00001.basel.sep",
                "basel-temp.head2048.f64",
                Mode::Abs(1e-5),
                None,
                Some(2u8),
                false,
            ),
            // Values on a grid of 0.01 (Basel-temp) at bounds below half
            // the step: predictor ids 3 and 4 (grid offset and step in the
            // header), default and fast revisions.
            (
                "grid.abs-0.0001.basel.sep",
                "basel-temp.head2048.f64",
                Mode::Abs(1e-4),
                None,
                Some(1u8),
                true,
            ),
            (
                "grid.interp.rel-1e-5.basel.sep",
                "basel-temp.head2048.f64",
                Mode::Rel(1e-5),
                Some(Predictor::Interpolation),
                Some(1u8),
                true,
            ),
            // Interpolation by level (predictor id 5), default and fast.
            (
                "levels.rel-1e-2.grid.sep",
                "grid-4x24x32.f32",
                Mode::Rel(1e-2),
                Some(Predictor::InterpolationByLevel),
                Some(1u8),
                true,
            ),
            (
                "fast.levels.rel-1e-2.basel.sep",
                "basel-temp.head2048.f64",
                Mode::Rel(1e-2),
                Some(Predictor::InterpolationByLevel),
                Some(2u8),
                true,
            ),
            (
                "fast.grid.abs-0.00001.basel.sep",
                "basel-temp.head2048.f64",
                Mode::Abs(1e-5),
                None,
                Some(2u8),
                true,
            ),
            // Model revision 3, the fast setting since stop 18: codes up to
            // 2047 in its tables (classes with raw low bits), off and on a
            // value grid, both predictors, f32 and f64.
            (
                "fast3.rel-1e-4.grid.sep",
                "grid-4x24x32.f32",
                Mode::Rel(1e-4),
                None,
                Some(3u8),
                false,
            ),
            (
                "fast3.abs-0.01.interp.grid.sep",
                "grid-4x24x32.f32",
                Mode::Abs(0.01),
                Some(Predictor::Interpolation),
                Some(3u8),
                false,
            ),
            (
                "fast3.abs-0.00001.basel.sep",
                "basel-temp.head2048.f64",
                Mode::Abs(1e-5),
                None,
                Some(3u8),
                false,
            ),
            (
                "fast3.grid.abs-0.00001.basel.sep",
                "basel-temp.head2048.f64",
                Mode::Abs(1e-5),
                None,
                Some(3u8),
                true,
            ),
        ])
        .collect();
    assert!(cases.len() > pinned);
    for (name, input, mode, predictor, revision, on_grid) in cases {
        let opts = Options {
            mode,
            fill: None,
            predictor,
            revision,
            fast: false,
            grid: on_grid,
            by_level: on_grid,
        };
        let archive = match input {
            "grid-4x24x32.f32" => compress_raw(&grid, Dtype::F32, &[4, 24, 32], &opts),
            "grid-4x24x32.npy" => compress_npy(&grid_npy, &opts),
            _ => compress_raw(&basel, Dtype::F64, &[basel.len() / 8], &opts),
        }
        .expect("lossy compress");
        let info = sep::lossy::inspect(&archive).expect("inspect");
        let out = sep::lossy::decompress(&archive, u64::MAX).expect("lossy decompress");
        let shape: Vec<String> = info.shape.iter().map(|d| d.to_string()).collect();
        manifest += &format!(
            "{name}\t{input}\t{}\t{}\t{}\t{:e}\t{:016x}\n",
            info.dtype.name(),
            shape.join("x"),
            mode.describe(),
            info.bound,
            xxhash_rust::xxh3::xxh3_64(&out)
        );
        files.insert(format!("lossy-v2/{name}"), archive);
    }
    files.insert("lossy-v2/MANIFEST.tsv".into(), manifest.into_bytes());
}
