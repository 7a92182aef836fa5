//! Codes JPEG files through `sep`'s library with the `default` and `max`
//! presets at a chosen CM revision, before a preset writes that revision:
//! for each file and revision, the archive with transforms (the smaller of
//! the lepton-segmented and the untransformed block is kept), without
//! transforms (the untransformed block: the JPEG family of that revision),
//! lepton's output size (the transformed block before the model), which one won, the compress wall time, and a
//! check that the archive decodes to the file.
//!
//! `cargo run --release -p sep --example jpeg_rev -- 5,7,6,8 FILE...`
//! (revisions 5 and 7 use the `default` preset, 6 and 8 `max`).

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let revisions: Vec<u8> = args
        .next()
        .expect("usage: jpeg_rev REVISIONS FILE...")
        .split(',')
        .map(|r| r.parse().expect("a revision"))
        .collect();
    println!("file\trevision\tauto\traw\tlepton\tkept\twall_s");
    for path in args {
        let data = std::fs::read(&path).expect("readable file");
        let name = std::path::Path::new(&path)
            .file_name()
            .map_or(path.clone(), |n| n.to_string_lossy().into_owned());
        // The transformed block's bytes before the model codes them:
        // lepton's output for a JPEG.
        let lepton = sep_transform::analyse(&data).map_or(0, |p| {
            p.inner.len() + p.segments.iter().map(|s| s.extra.len()).sum::<usize>()
        });
        for &revision in &revisions {
            let preset = if revision % 2 == 0 {
                sep::Preset::Max
            } else {
                sep::Preset::Default
            };
            let mut model = sep::Model::mix_preset(preset);
            if let sep::Model::Mix(m) = &mut model {
                m.cm.revision = revision;
            }
            let options = sep::Options {
                model,
                ..sep::Options::default()
            };
            let t = Instant::now();
            let mut enc = sep::Encoder::new(Vec::new(), &options).expect("an encoder");
            let stats = enc.stats();
            std::io::Write::write_all(&mut enc, &data).expect("coded");
            let auto = enc.finish().expect("finished");
            let cpu = t.elapsed().as_secs_f64();
            let raw = sep::compress(
                &data,
                &sep::Options {
                    transforms: false,
                    ..options.clone()
                },
            )
            .expect("coded");
            assert_eq!(sep::decompress(&auto).expect("decoded"), data);
            let kept = if stats.segmented_blocks() > 0 {
                "lepton"
            } else {
                "raw"
            };
            println!(
                "{name}\t{revision}\t{}\t{}\t{lepton}\t{kept}\t{cpu:.2}",
                auto.len(),
                raw.len()
            );
        }
    }
}
