//! Times the detector and the verified transforms on files, and prints what
//! they find: `cargo run --release -p sep-transform --example probe -- FILE...`
//! (used for the detection-cost numbers in doc/TRANSFORMS.md).

use std::time::Instant;

fn main() {
    for path in std::env::args().skip(1) {
        let data = std::fs::read(&path).expect("read");
        let t = Instant::now();
        let found = sep_transform::detect::detect(&data);
        let detect = t.elapsed();
        let t = Instant::now();
        let plan = sep_transform::analyse(&data);
        let analyse = t.elapsed();
        println!(
            "{path}: {} bytes, {} candidates, detect {:.2} ms, detect+transform+verify {:.2} ms",
            data.len(),
            found.len(),
            detect.as_secs_f64() * 1e3,
            analyse.as_secs_f64() * 1e3
        );
        if let Some(p) = plan {
            for s in &p.segments {
                println!(
                    "  {:<7} {:>10} -> {:>10} + {:>8}",
                    s.kind.name(),
                    s.raw_len,
                    s.inner_len,
                    s.extra.len()
                );
            }
        }
    }
}
