//! CM revision 4's text changes (doc/FORMAT.md 4.15.1): the indirect
//! contexts and the mixer's starting weights round trip, code
//! deterministically, with side-by-side streams too, and shrink real text
//! and code against revision 2.

use crate::common;
use common::{mixed_text, round_trip};
use sep_cm::{Cm, CmConfig, CmStream, Visibility};
use sep_coder::{Decoder, Encoder};

/// The `default` preset's CM with small tables.
fn config(revision: u8) -> CmConfig {
    CmConfig {
        orders: 0b0011_1111,
        word: true,
        sparse: true,
        record: true,
        long: 0b0001,
        match_min: 5,
        match2_min: 12,
        table_bits: 20,
        match_bits: 16,
        selectors: 0xF,
        apms: 3,
        image: true,
        revision,
    }
}

#[test]
fn revision_4_round_trips_and_is_deterministic() {
    let readme = include_bytes!("../data/readme.md");
    let mut bin: Vec<u8> = (0..20_000u32).map(|i| ((i * i) >> 5) as u8).collect();
    bin.extend(&readme[..readme.len().min(5_000)]);
    for data in [
        &mixed_text()[..],
        &readme[..readme.len().min(20_000)],
        &bin,
        b"",
        b"x",
    ] {
        let a = round_trip(data, &config(4));
        let b = round_trip(data, &config(4));
        assert_eq!(a, b, "revision 4 is not deterministic");
    }
}

/// Two streams coded side by side, as the engine's threads do.
struct Front {
    half: usize,
    t: usize,
    s: usize,
}

impl Visibility for Front {
    fn known(&self, p: usize) -> bool {
        let (s, off) = (p / self.half, p % self.half);
        off < self.t + usize::from(s < self.s)
    }
}

#[test]
fn revision_4_round_trips_side_by_side_streams() {
    let data = mixed_text();
    let half = data.len() / 2;
    let data = &data[..2 * half];
    let cfg = config(4);
    let code = |buf: &mut Vec<u8>, input: Option<&[Vec<u8>]>| -> Vec<Vec<u8>> {
        let mut m = Cm::new(&cfg, false, buf.len());
        let mut sts = [CmStream::new(0), CmStream::new(half)];
        match input {
            None => {
                let mut encs = [Encoder::new(), Encoder::new()];
                for t in 0..half {
                    for s in 0..2 {
                        let v = Front { half, t, s };
                        m.code_byte(&mut encs[s], &mut sts[s], buf, s * half + t, &v, None);
                    }
                }
                encs.into_iter().map(Encoder::finish).collect()
            }
            Some(streams) => {
                let mut decs = [Decoder::new(&streams[0]), Decoder::new(&streams[1])];
                for t in 0..half {
                    for s in 0..2 {
                        let v = Front { half, t, s };
                        m.code_byte(&mut decs[s], &mut sts[s], buf, s * half + t, &v, None);
                    }
                }
                Vec::new()
            }
        }
    };
    let mut buf = data.to_vec();
    let streams = code(&mut buf, None);
    let mut out = vec![0u8; data.len()];
    code(&mut out, Some(&streams));
    assert!(out == data);
}

#[test]
fn revision_4_beats_revision_2_on_text_and_code() {
    // Real text of this repository (Markdown prose and Rust code) and the
    // generated markup: revision 4 must code each smaller than revision 2.
    let readme = include_bytes!("../data/readme.md");
    let code = include_bytes!("../data/cm-mod.rs.txt");
    for data in [
        &readme[..readme.len().min(40_000)],
        &code[..],
        &mixed_text(),
    ] {
        let v2 = round_trip(data, &config(2)).len();
        let v4 = round_trip(data, &config(4)).len();
        assert!(v4 < v2, "revision 4 {v4} bytes, revision 2 {v2}");
        eprintln!("{} bytes: revision 2 {v2}, revision 4 {v4}", data.len());
    }
}
