//! Would choosing the predictor per block pay? Codes each file of the float
//! set whole (predictor chosen per array) and as 8 slabs of its slowest
//! dimension (a 1-D series: 8 segments), each slab with Lorenzo and with
//! interpolation, and prints the bytes of: the whole array, every slab with
//! one predictor, and every slab with its better predictor.
//!
//! `cargo run --release -p sep-lossy --example lossy_blocks -- MODE FILE...`
//! (files named like the float set, as for `lossy_speed`).

use sep_lossy::{Dtype, Mode, Options, Predictor};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mode = Mode::parse(&args.remove(0)).expect("mode");
    let (mut whole_t, mut best_t) = (0usize, 0usize);
    for path in &args {
        let raw = std::fs::read(path).expect("read");
        let name = path.rsplit('/').next().unwrap_or(path);
        let dtype = if name.contains("float64") {
            Dtype::F64
        } else {
            Dtype::F32
        };
        let raw = &raw[..raw.len() / dtype.size() * dtype.size()];
        let shape: Vec<usize> = name
            .split('.')
            .find(|p| p.contains('x') && p.split('x').all(|d| d.parse::<usize>().is_ok()))
            .map(|p| p.split('x').map(|d| d.parse().unwrap()).collect())
            .unwrap_or_else(|| vec![raw.len() / dtype.size()]);
        // The bound of the whole array, so that every slab keeps the same one.
        let whole = sep_lossy::compress_raw(
            raw,
            dtype,
            &shape,
            &Options {
                mode,
                ..Options::default()
            },
        )
        .expect("compress");
        let info = sep_lossy::inspect(&whole).expect("inspect");
        let abs = Mode::Abs(info.bound);
        let row = raw.len() / shape[0];
        let per = shape[0].div_ceil(8);
        let (mut lor, mut int, mut best) = (0usize, 0usize, 0usize);
        let mut picks = String::new();
        for start in (0..shape[0]).step_by(per) {
            let rows = per.min(shape[0] - start);
            let mut s = shape.clone();
            s[0] = rows;
            let part = &raw[start * row..(start + rows) * row];
            let size = |p| {
                let o = Options {
                    mode: abs,
                    predictor: Some(p),
                    fill: info.fills.first().map(|&f| dtype.from_bits(f)),
                    ..Options::default()
                };
                sep_lossy::compress_raw(part, dtype, &s, &o)
                    .expect("compress")
                    .len()
            };
            let (l, i) = (size(Predictor::Lorenzo), size(Predictor::Interpolation));
            lor += l;
            int += i;
            best += l.min(i);
            picks.push(if l < i { 'L' } else { 'I' });
        }
        println!(
            "{name:40} whole {:>9} ({:13}) slabs: lorenzo {lor:>9} interpolation {int:>9} best per slab {best:>9} [{picks}] best/whole {:.3}",
            whole.len(),
            info.predictor.name(),
            best as f64 / whole.len() as f64
        );
        whole_t += whole.len();
        best_t += best;
    }
    println!(
        "total whole {whole_t} best per slab {best_t} ({:.3})",
        best_t as f64 / whole_t as f64
    );
}
