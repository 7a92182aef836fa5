//! Helpers shared by the context-mixing model's integration tests: the
//! configuration of a revision, a round trip through encoder and decoder,
//! deterministic noise and generated inputs (mixed text, images, audio).
//! (Each test binary uses some of them.)
#![allow(dead_code)]

use sep_cm::{Cm, CmConfig, CmStream, MAX_WALK, Sequential};
use sep_coder::{Decoder, Encoder};

pub fn config(revision: u8) -> CmConfig {
    CmConfig {
        orders: 0b0011_1111,
        word: true,
        sparse: true,
        record: true,
        long: 0b0001,
        match_min: 5,
        match2_min: 12,
        table_bits: 18,
        match_bits: 14,
        selectors: 0xF,
        apms: 3,
        image: true,
        revision,
    }
}

/// Encodes `data` as one stream, decodes it, checks the result; returns the
/// coded bytes.
pub fn round_trip(data: &[u8], cfg: &CmConfig) -> Vec<u8> {
    round_trip_skipped(data, cfg).0
}

/// One step of the 64-bit xorshift (13, 7, 17): moves `s` and returns it.
/// The tests' generated data come from it (or from [`xorshift32`]).
pub fn xorshift64_step(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// The 64-bit xorshift from the (non-zero) state `s`: each call steps.
pub fn xorshift64(mut s: u64) -> impl FnMut() -> u64 {
    move || xorshift64_step(&mut s)
}

/// The 32-bit xorshift (13, 17, 5) from the (non-zero) state `s`: each
/// call steps and returns the state.
pub fn xorshift32(mut s: u32) -> impl FnMut() -> u32 {
    move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s
    }
}

/// Xorshift noise in `-amp..=amp` (roughly triangular), for audio.
pub struct Noise(pub u64);

impl Noise {
    /// The next sample's noise.
    pub fn next(&mut self, amp: i64) -> i64 {
        let mut r = || (xorshift64_step(&mut self.0) >> 40) as i64 % (amp + 1);
        r() - r()
    }
}

pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut next = xorshift64(seed | 1);
    (0..len).map(|_| (next() >> 24) as u8).collect()
}

/// A PCM WAV header: `channels` of `bits`-bit samples at `rate` Hz, then
/// `data_len` bytes of samples.
pub fn wav_header(channels: u16, bits: u16, rate: u32, data_len: u32) -> Vec<u8> {
    let mut h = b"RIFF".to_vec();
    h.extend((36 + data_len).to_le_bytes());
    h.extend(b"WAVEfmt ");
    h.extend(16u32.to_le_bytes());
    h.extend(1u16.to_le_bytes());
    h.extend(channels.to_le_bytes());
    h.extend(rate.to_le_bytes());
    h.extend((rate * u32::from(channels * bits / 8)).to_le_bytes());
    h.extend((channels * bits / 8).to_le_bytes());
    h.extend(bits.to_le_bytes());
    h.extend(b"data");
    h.extend(data_len.to_le_bytes());
    h
}

/// The inputs the serial networks' thread-count round trips share: empty,
/// one byte, mixed text, noise, and a WAV header that claims 1 MiB before
/// text (a detected kind that lies).
pub fn serial_inputs() -> Vec<Vec<u8>> {
    let mut lying = wav_header(2, 16, 44100, 1 << 20);
    lying.extend(mixed_text());
    vec![
        Vec::new(),
        b"x".to_vec(),
        mixed_text(),
        noise(1500, 5),
        lying,
    ]
}

/// Appends one PCM sample `v` as a WAV stores it: 16-bit little-endian
/// signed, or 8-bit unsigned (the top byte of a 16-bit value plus 128),
/// clamped to the format's range.
pub fn push_sample(out: &mut Vec<u8>, v: i64, bits: u16) {
    if bits == 16 {
        out.extend((v.clamp(-32768, 32767) as i16).to_le_bytes());
    } else {
        out.push(((v >> 8).clamp(-128, 127) + 128) as u8);
    }
}

/// WAV files that reach an audio family's clamps or lie (shared by the
/// audio rounds' round trips): silence and a full-scale square wave; a
/// data chunk that claims more than there is, an odd number of bytes after
/// a 16-bit header, text after an 8-bit one, and an empty data chunk.
pub fn hostile_wavs() -> Vec<Vec<u8>> {
    let mut next = xorshift64(0x1234_5678_9ABC_DEF1);
    let noise: Vec<u8> = (0..5001).map(|_| (next() >> 32) as u8).collect();
    let mut fake = wav_header(2, 16, 44100, 1 << 30);
    fake.extend(&noise);
    let mut odd = wav_header(1, 16, 22050, 3);
    odd.extend([1, 2, 3]);
    let mut text = wav_header(2, 8, 22050, 10);
    text.extend(b"not audio, just some words ".repeat(40));
    vec![
        wav_header(2, 16, 22050, 4000)
            .into_iter()
            .chain([0u8; 4000])
            .collect(),
        wav_header(1, 16, 22050, 4000)
            .into_iter()
            .chain((0..2000).flat_map(|t| if t % 20 < 10 { [0xFF, 0x7F] } else { [0, 0x80] }))
            .collect(),
        fake,
        odd,
        text,
        wav_header(2, 16, 22050, 0),
    ]
}

/// A bi-level bitmap (1 bit per pixel, rows of `width` bytes) of vertical
/// streaks: a pixel copies the one above, except that a white pixel turns
/// black with probability 1/128 and a black one white with 1/5; and a
/// vertical rule. Mostly zero bytes, no header.
pub fn fax(width: usize, rows: usize) -> Vec<u8> {
    let mut out = vec![0u8; width * rows];
    let mut s = 0x1234_5678u32;
    for y in 1..rows {
        for x in 0..width * 8 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            let (byte, bit) = (x / 8, 0x80u8 >> (x % 8));
            let above = out[(y - 1) * width + byte] & bit != 0;
            let black = if above {
                !s.is_multiple_of(5)
            } else {
                s.is_multiple_of(128)
            };
            if black || x == 45 {
                out[y * width + byte] |= bit;
            }
        }
    }
    out
}

/// An image of `channels` channels (1: P5, 3: P6) of soft shapes with noise
/// that the channels share.
pub fn soft_pnm(w: usize, h: usize, channels: usize) -> Vec<u8> {
    let magic = if channels == 1 { "P5" } else { "P6" };
    let mut img = format!("{magic}\n{w} {h}\n255\n").into_bytes();
    let grain = noise(w * h, 31);
    for y in 0..h {
        for x in 0..w {
            let g = i32::from(grain[y * w + x] % 17) - 8;
            let base = ((x * x + y * y) / 64 % 200) as i32 + 20;
            for (scale, off) in [(4, 0), (3, 10), (2, 30)].into_iter().take(channels) {
                img.push((base * scale / 4 + off + g).clamp(0, 255) as u8);
            }
        }
    }
    img
}

/// The pixels of [`soft_pnm`] as a 24-bit BMP (bottom-up, rows padded to 4
/// bytes, BGR) with an info header of 40 bytes.
pub fn soft_bmp(w: usize, h: usize) -> Vec<u8> {
    let pnm = soft_pnm(w, h, 3);
    let pixels = &pnm[pnm.len() - w * h * 3..];
    let row = (w * 3).div_ceil(4) * 4;
    let mut out = b"BM".to_vec();
    out.extend(((54 + row * h) as u32).to_le_bytes());
    out.extend(0u32.to_le_bytes());
    out.extend(54u32.to_le_bytes());
    out.extend(40u32.to_le_bytes());
    out.extend((w as u32).to_le_bytes());
    out.extend((h as u32).to_le_bytes());
    out.extend(1u16.to_le_bytes());
    out.extend(24u16.to_le_bytes());
    out.extend([0u8; 24]);
    for y in (0..h).rev() {
        for x in 0..w {
            let p = &pixels[(y * w + x) * 3..][..3];
            out.extend([p[2], p[1], p[0]]);
        }
        out.resize(out.len() + row - w * 3, 0);
    }
    out
}

/// Sentences of `words` (`min_words` plus up to `spread - 1` more, chosen
/// by an LCG seeded with `seed`), each new one or, one time in four, an
/// earlier one again, until at least `len` bytes: text whose repeats come at
/// varying distances (the serial network's tests).
pub fn recurring_sentences(
    words: &[&str],
    seed: u32,
    min_words: u32,
    spread: u32,
    len: usize,
) -> Vec<u8> {
    let mut s = seed;
    let mut out = String::new();
    let mut sentences: Vec<String> = Vec::new();
    while out.len() < len {
        s = s.wrapping_mul(1_103_515_245).wrapping_add(12345);
        if s >> 30 == 0 && !sentences.is_empty() {
            let k = (s >> 8) as usize % sentences.len();
            out.push_str(&sentences[k].clone());
            continue;
        }
        let mut sentence = String::new();
        for _ in 0..min_words + (s >> 20) % spread {
            s = s.wrapping_mul(1_103_515_245).wrapping_add(12345);
            sentence.push_str(words[(s >> 16) as usize % words.len()]);
            sentence.push(' ');
        }
        sentence.push_str(".\n");
        out.push_str(&sentence);
        sentences.push(sentence);
    }
    out.into_bytes()
}

/// Round trips, at CM `revision` (full and lean configurations), text from
/// `text(len, seed)` behind lying headers (a WAV header announcing far more
/// samples than follow; a BMP signature; noise), the empty and a one-byte
/// input, and mixed text without the word contexts: the text families'
/// hard cases.
pub fn round_trip_text_behind_lying_headers(revision: u8, text: impl Fn(usize, u64) -> Vec<u8>) {
    let mut wav = wav_header(2, 16, 44_100, 1 << 30);
    wav.extend(text(3_000, 9));
    let mut bmp = b"BM\xff\xff\xff\x7f\0\0\0\0\x36\0\0\0".to_vec();
    bmp.extend(text(2_000, 11));
    let mut bin = noise(3_000, 3);
    bin.extend(text(3_000, 13));
    for data in [wav, bmp, bin, Vec::new(), b"x".to_vec()] {
        round_trip(&data, &config(revision));
        round_trip(&data, &lean_config(revision));
    }
    let mut cfg = config(revision);
    cfg.word = false;
    round_trip(&mixed_text(), &cfg);
}

/// Markup, JSON, C-like code and UTF-8 text, with the repeats the
/// indirect contexts learn from.
pub fn mixed_text() -> Vec<u8> {
    let mut out = String::new();
    for i in 0..80u32 {
        out.push_str(&format!(
            "<li class=\"k{}\">Item {i}: \u{4e2d}\u{6587}\u{6587}\u{5b57} {}</li>\n",
            i % 4,
            i * 53 % 997
        ));
        out.push_str(&format!(
            "  {{\"id\": {i}, \"next\": {}, \"ok\": {}}},\n",
            i + 1,
            i % 2 == 0
        ));
        out.push_str(&format!(
            "    while (n{} < {}) n{} += g(n);\n",
            i % 3,
            i * 7,
            i % 3
        ));
    }
    out.into_bytes()
}

/// Round trips every input at every revision of `revisions` (the decoder
/// restores it); with `twice`, codes each once more and checks that the
/// coded bytes are the same (the model is deterministic).
pub fn round_trip_each<D: AsRef<[u8]>>(revisions: &[u8], inputs: &[D], twice: bool) {
    for &revision in revisions {
        for data in inputs {
            let a = round_trip(data.as_ref(), &config(revision));
            if twice {
                let b = round_trip(data.as_ref(), &config(revision));
                assert_eq!(a, b, "revision {revision} is not deterministic");
            }
        }
    }
}

/// Encodes `data` as one stream: the coded bytes and how many bytes the
/// model coded by revision 9's shortcut alone.
fn encode(data: &[u8], cfg: &CmConfig) -> (Vec<u8>, u64) {
    let mut enc = Encoder::new();
    let mut m = Cm::new(cfg, false, data.len());
    let mut st = CmStream::new(0);
    let mut buf = data.to_vec();
    for pos in 0..buf.len() {
        m.code_byte(&mut enc, &mut st, &mut buf, pos, &Sequential(pos), None);
    }
    assert_eq!(buf, data, "the encoder changed its input");
    let skipped = m.skipped_bytes();
    (enc.finish(), skipped)
}

/// The coded size of `data` as one stream (encoding only: for size
/// comparisons of inputs that other tests round trip).
pub fn coded_len(data: &[u8], cfg: &CmConfig) -> usize {
    encode(data, cfg).0.len()
}

/// The coded bytes of `data` as one stream (encoding only: for comparing
/// what two configurations write for inputs another call round trips).
pub fn coded_bytes(data: &[u8], cfg: &CmConfig) -> Vec<u8> {
    encode(data, cfg).0
}

/// [`round_trip`], also returning how many bytes the encoder's and the
/// decoder's models coded by revision 9's shortcut alone (checked equal).
pub fn round_trip_skipped(data: &[u8], cfg: &CmConfig) -> (Vec<u8>, u64) {
    let (bytes, skipped) = encode(data, cfg);
    let mut out = vec![0u8; data.len()];
    let mut dec = Decoder::new(&bytes);
    let mut m = Cm::new(cfg, false, data.len());
    let mut st = CmStream::new(0);
    for pos in 0..out.len() {
        m.code_byte(&mut dec, &mut st, &mut out, pos, &Sequential(pos), None);
    }
    assert!(
        out == data,
        "decoded bytes differ (revision {})",
        cfg.revision
    );
    assert_eq!(m.skipped_bytes(), skipped, "decoder skipped other bytes");
    (bytes, skipped)
}

/// An x86-64 ELF executable: the header, three program headers (the
/// headers page read-only, `code` at 0x1000 read+execute, `data` after it
/// read-only), then the code and the data.
pub fn elf64(code: &[u8], data: &[u8]) -> Vec<u8> {
    let code_off = 0x1000usize;
    let data_off = code_off + code.len();
    let mut out = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0\x3e\0".to_vec();
    out.resize(64, 0);
    out[0x20] = 64; // e_phoff
    out[0x36] = 56; // e_phentsize
    out[0x38] = 3; // e_phnum
    for (flags, off, size) in [
        (4u32, 0usize, code_off),
        (5, code_off, code.len()),
        (4, data_off, data.len()),
    ] {
        let mut ph = vec![0u8; 56];
        ph[..4].copy_from_slice(&1u32.to_le_bytes());
        ph[4..8].copy_from_slice(&flags.to_le_bytes());
        ph[8..16].copy_from_slice(&(off as u64).to_le_bytes());
        ph[32..40].copy_from_slice(&(size as u64).to_le_bytes());
        out.extend(ph);
    }
    out.resize(code_off, 0);
    out.extend(code);
    out.extend(data);
    out
}

/// The pixels of [`soft_pnm`] as a 32-bit TGA (a fourth channel that
/// follows the first).
pub fn soft_tga32(w: usize, h: usize) -> Vec<u8> {
    let pnm = soft_pnm(w, h, 3);
    let mut out = vec![0u8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    out.extend((w as u16).to_le_bytes());
    out.extend((h as u16).to_le_bytes());
    out.extend([32, 8]);
    for p in pnm[pnm.len() - w * h * 3..].chunks_exact(3) {
        out.extend([p[2], p[1], p[0], p[0] / 2 + 7]);
    }
    out
}

/// The inputs the text revisions' tests round trip: mixed markup, JSON, code
/// and UTF-8 text, the start of `data/readme.md`, noise with text after it (`seed`
/// varies the noise), a detected BMP image (detected kinds take another
/// path), an empty and a one-byte input.
pub fn text_test_inputs(seed: u64) -> Vec<Vec<u8>> {
    let readme = include_bytes!("../../data/readme.md");
    let mut bin = noise(6_000, seed);
    bin.extend(&readme[..readme.len().min(4_000)]);
    vec![
        mixed_text(),
        readme[..readme.len().min(12_000)].to_vec(),
        bin,
        soft_bmp(48, 32),
        Vec::new(),
        b"x".to_vec(),
    ]
}

/// `revision`'s configuration with as few mixer inputs as it takes: one
/// order context, no match model, one selector, no sparse or record
/// contexts.
pub fn lean_config(revision: u8) -> CmConfig {
    CmConfig {
        orders: 1,
        long: 0,
        match_min: 0,
        match2_min: 0,
        selectors: 1,
        sparse: false,
        record: false,
        ..config(revision)
    }
}

/// For each `(old, new)` pair, asserts that revision `new` codes real text
/// of this repository (`data/readme.md`: README.md's first 40,000 bytes at 4570cd0, Markdown prose) and
/// real code (`data/cm-mod.rs.txt`: `src/cm/mod.rs` at 4570cd0) smaller than revision `old`.
pub fn assert_text_and_code_shrink(pairs: &[(u8, u8)]) {
    let readme = include_bytes!("../../data/readme.md");
    let code = include_bytes!("../../data/cm-mod.rs.txt");
    for data in [&readme[..readme.len().min(40_000)], &code[..]] {
        for &(old, new) in pairs {
            let a = round_trip(data, &config(old)).len();
            let b = round_trip(data, &config(new)).len();
            eprintln!("{} bytes: revision {old} {a}, {new} {b}", data.len());
            assert!(b < a, "revision {new} {b} bytes, revision {old} {a}");
        }
    }
}

/// A real baseline JPEG: a 128x96 crop of the corpus' fireworks.jpeg
/// (tests/golden/inputs).
pub const JPEG: &[u8] =
    include_bytes!("../../../../../tests/golden/inputs/fireworks.crop128x96.jpg");

/// Where the entropy-coded data of the JPEG `j` starts (after its SOS
/// segment).
pub fn jpeg_scan_start(j: &[u8]) -> usize {
    let mut at = 2;
    loop {
        assert_eq!(j[at], 0xFF, "a marker at {at}");
        let len = usize::from(j[at + 2]) << 8 | usize::from(j[at + 3]);
        if j[at + 1] == 0xDA {
            return at + 2 + len;
        }
        at += 2 + len;
    }
}

/// A xorshift generator for the tests' generated code.
pub struct Rng(pub u32);

impl Rng {
    pub fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }

    pub fn below(&mut self, n: u32) -> u32 {
        self.next() % n
    }
}

/// Round-trip inputs around the resource fork `fork` (at least 257
/// bytes): the fork, its first half, one whose header lies, one whose
/// first resource claims too much, random words behind its valid header
/// (looks like code, is not; from `seed`), empty and one byte.
pub fn fork_inputs(fork: &[u8], seed: u32) -> Vec<Vec<u8>> {
    let mut lying_fork = fork.to_vec();
    lying_fork[3] = 0xF0;
    let mut long_resource = fork.to_vec();
    long_resource[256] = 0x7F;
    let mut noise = fork[..256].to_vec();
    let mut r = Rng(seed);
    noise.extend((0..fork.len() - 256).map(|_| r.next() as u8));
    vec![
        fork.to_vec(),
        fork[..fork.len() / 2 + 1].to_vec(),
        lying_fork,
        long_resource,
        noise,
        Vec::new(),
        vec![0x4E],
    ]
}

/// Appends one resource to a resource fork's data as the Resource Manager
/// lays it out: its length (4 bytes, big-endian), then its 16-bit words
/// (big-endian).
pub fn push_resource(data: &mut Vec<u8>, words: &[u16]) {
    data.extend((words.len() as u32 * 2).to_be_bytes());
    for w in words {
        data.extend(w.to_be_bytes());
    }
}

/// A Macintosh resource fork around `data`: the 16-byte header (data at
/// 256, its length, a 30-byte map after it), zeros to 256, the data and
/// the map's 30 zero bytes.
pub fn resource_fork_of(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in [256, 256 + data.len() as u32, data.len() as u32, 30] {
        out.extend(v.to_be_bytes());
    }
    out.resize(256, 0);
    out.extend(data);
    out.resize(out.len() + 30, 0);
    out
}

/// `len` bytes (at most 160 KiB) of real x86-64 machine code: the frozen
/// `data/x86-code.bin` (data/README.md). It was the test binary's own code
/// until a change elsewhere in the crate moved the slice and revision 14
/// lost to 12 by 7 bytes on it (stop 36): a size comparison must not depend
/// on code that every change rebuilds.
pub fn real_code(len: usize) -> Vec<u8> {
    let code: &[u8] = include_bytes!("../../data/x86-code.bin");
    assert!(len <= code.len(), "at most {} bytes of code", code.len());
    code[..len].to_vec()
}

/// A 64-bit x86 ELF file: the ELF header, three program headers (a
/// read-only segment at 0, the code, then a table of 24-byte records with
/// pointers and a string table), the code being `code`.
pub fn elf_file(code: Vec<u8>, seed: u32) -> Vec<u8> {
    let mut r = Rng(seed);
    let mut data = Vec::new();
    for k in 0..code.len() / 96 {
        data.extend((0x40_1000 + 0x40 * r.below(500) as u64).to_le_bytes());
        data.extend((k as u64 * 24 + 0x8000).to_le_bytes());
        data.extend(u64::from(r.below(4) + 1).to_le_bytes());
    }
    let words = [
        "cannot", "open", "file", "invalid", "option", "usage", "error",
    ];
    while data.len() < code.len() / 2 {
        for _ in 0..1 + r.below(4) {
            data.extend(words[r.below(words.len() as u32) as usize].as_bytes());
            data.push(b' ');
        }
        data.extend(b"%s\n\0");
    }
    elf64(&code, &data)
}

/// A Macintosh resource fork (data at 256) of one CODE resource of
/// Pascal-style 68000 functions: LINK, floating-point calls through the
/// SANE trap (`PEA d16(A6)` twice, `MOVE.W #op,-(SP)`, `A9EB`), calls
/// through the jump table, compares and branches, UNLK/RTS; each step one
/// of twelve idioms whose operands follow from the idiom.
pub fn idiom_fork(functions: u32, seed: u32) -> Vec<u8> {
    let mut r = Rng(seed);
    let mut code: Vec<u16> = vec![0x0000, 0x0010];
    for _ in 0..functions {
        let frame = 0xFF00 - 2 * r.below(64) as u16;
        let locals: Vec<u16> = (0..4).map(|k| frame + 10 * k).collect();
        code.extend([0x4E56, frame - 0x100]);
        for _ in 0..20 + r.below(20) {
            // One of a few idioms: its operands follow from its number.
            let k = r.below(12);
            let (a, b) = (locals[(k & 3) as usize], locals[(k >> 2) as usize]);
            match k % 5 {
                0 | 1 => code.extend([
                    0x486E,
                    a,
                    0x486E,
                    b,
                    0x3F3C,
                    0x1000 | (2 * k as u16),
                    0xA9EB,
                ]),
                2 => code.extend([0x486E, a, 0x4EAD, 0x200 + 8 * r.below(100) as u16]),
                3 => code.extend([
                    0x0C6E,
                    r.below(16) as u16,
                    a,
                    0x6600,
                    2 * r.below(40) as u16 + 4,
                ]),
                _ => code.extend([0x302E, a, 0xC1FC, 0x0078, 0x3D40, b]),
            }
        }
        code.extend([0x4E5E, 0x4E75]);
    }
    let mut data = Vec::new();
    push_resource(&mut data, &code);
    resource_fork_of(&data)
}

/// A smooth field over `cols` x `rows` (a terrain crossing zero), with
/// noise from `seed` (the float rounds of revisions 44 and 46).
pub fn terrain(cols: usize, rows: usize, seed: u64) -> Vec<f64> {
    let n = noise(cols * rows, seed);
    let mut out = Vec::with_capacity(cols * rows);
    for y in 0..rows {
        for x in 0..cols {
            let (fx, fy) = (x as f64 * 0.05, y as f64 * 0.07);
            let h = 900.0 * (fx.sin() * fy.cos())
                + 300.0 * (0.3 * fx + 0.2 * fy).sin()
                + 40.0 * (0.9 * fx - 0.4 * fy).cos()
                + f64::from(n[y * cols + x]) * 0.05;
            out.push(h);
        }
    }
    out
}

/// [`terrain`] as little-endian f32 rounded to sixteenths (the low byte of
/// every number is 0, as in etopo20).
pub fn terrain_f32(cols: usize, rows: usize, seed: u64) -> Vec<u8> {
    terrain(cols, rows, seed)
        .iter()
        .flat_map(|&h| (((h * 16.0).round() / 16.0) as f32).to_le_bytes())
        .collect()
}

/// [`terrain`] as big-endian f32.
pub fn terrain_f32_be(cols: usize, rows: usize) -> Vec<u8> {
    terrain(cols, rows, 5)
        .iter()
        .flat_map(|&h| (h as f32).to_be_bytes())
        .collect()
}

/// [`terrain`] as little-endian f64 rounded to tenths.
pub fn terrain_f64(cols: usize, rows: usize) -> Vec<u8> {
    terrain(cols, rows, 6)
        .iter()
        .flat_map(|&h| ((h * 10.0).round() / 10.0).to_le_bytes())
        .collect()
}

/// The corpus file `name` (`../shared/corpus/files/` beside the
/// repository, as the project's machines have it), if it is there.
pub fn corpus_file(name: &str) -> Option<Vec<u8>> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus/files/");
    std::fs::read(format!("{dir}{name}")).ok()
}

/// Rows `y0..y0 + h` of the corpus' calgary.pic (a 1728 x 2376 bi-level
/// fax, rows of 216 bytes), if the corpus is present; else a generated page
/// of text: lines of 8 x 12 glyphs drawn from 24 random ones.
pub fn pic_page(y0: usize, h: usize) -> Vec<u8> {
    const WIDTH: usize = 216;
    if let Some(data) = corpus_file("calgary.pic")
        && data.len() == WIDTH * 2376
    {
        return data[y0 * WIDTH..(y0 + h) * WIDTH].to_vec();
    }
    let glyphs = noise(24 * 12, 77);
    let pick = noise(WIDTH * h, 78);
    let mut out = vec![0u8; WIDTH * h];
    for y in 0..h {
        let (line, row) = (y / 16, y % 16);
        if row >= 12 {
            continue;
        }
        for x in 8..WIDTH - 8 {
            let g = usize::from(pick[line * WIDTH + x]) % 24;
            out[y * WIDTH + x] = glyphs[g * 12 + row] & 0x7E;
        }
    }
    out
}

/// A `w` x `h` crop at (`x0`, `y0`) of the corpus' kodim23 (768 x 512 RGB
/// PPM) as a PPM, if the corpus is present.
pub fn kodim23_crop(x0: usize, y0: usize, w: usize, h: usize) -> Option<Vec<u8>> {
    let data = corpus_file("image.kodim23.ppm")?;
    let header = b"P6\n768 512\n255\n";
    if !data.starts_with(header) || data.len() != header.len() + 768 * 512 * 3 {
        return None;
    }
    let pixels = &data[header.len()..];
    let mut out = format!("P6\n{w} {h}\n255\n").into_bytes();
    for y in y0..y0 + h {
        out.extend_from_slice(&pixels[(y * 768 + x0) * 3..][..w * 3]);
    }
    Some(out)
}

/// The x86 families' round-trip inputs: tiny inputs, an ELF file of this
/// test binary's own code, a lying ELF header, program headers that put the
/// code beyond the block, and a truncated ELF.
pub fn x86_cases() -> Vec<Vec<u8>> {
    let mut lying_elf = elf_file(real_code(4096), 3);
    lying_elf[0x20] = 0xF0;
    let mut far_code = elf_file(real_code(2048), 4);
    far_code[64 + 56 + 8] = 0xFF;
    let truncated = elf_file(real_code(4096), 5)[..3000].to_vec();
    vec![
        b"".to_vec(),
        b"x".to_vec(),
        b"\x7fELF\x02\x01\x01".to_vec(),
        elf_file(real_code(8 << 10), 1),
        lying_elf,
        far_code,
        truncated,
    ]
}

/// Coded sizes of 160 KiB of this test binary's code in an ELF file at
/// revisions `old` and `new`, with a 2^22-byte table (the tests' 2^18 slots
/// would overfill). The margin depends on the build: assert only "smaller".
pub fn x86_code_sizes(old: u8, new: u8) -> (usize, usize) {
    let data = elf_file(real_code(160 << 10), 7);
    let big = |revision| CmConfig {
        table_bits: 22,
        ..config(revision)
    };
    let (a, b) = (coded_len(&data, &big(old)), coded_len(&data, &big(new)));
    eprintln!("revision {new} {b} bytes, revision {old} {a}");
    (a, b)
}

/// The 24/32-bit image families' round-trip inputs: tiny inputs, generated
/// PPM, BMP and TGA images, headers that lie (noise, a 1-pixel-wide image,
/// a huge size), a truncated photograph crop (kodim23 when the corpus is
/// there) and truncated images.
pub fn image_cases() -> Vec<Vec<u8>> {
    let mut cases = vec![
        Vec::new(),
        b"x".to_vec(),
        soft_pnm(37, 23, 3),
        soft_bmp(37, 21),
        soft_tga32(23, 19),
    ];
    cases.extend(lying_pnm_images());
    cases.extend([
        b"P6\n1 1\n255\n\x01\x02\x03".to_vec(),
        soft_pnm(64, 64, 3)[..5000].to_vec(),
        soft_pnm(8, 8, 3)[..9].to_vec(),
    ]);
    cases
}

/// PPM images whose headers lie: noise after the header, a width of one
/// pixel, a size far past the data, and a photograph crop (kodim23 when the
/// corpus is there) whose pixels end early.
pub fn lying_pnm_images() -> [Vec<u8>; 4] {
    let mut lying = b"P6\n300 200\n255\n".to_vec();
    lying.extend(noise(2000, 5));
    let mut narrow = b"P6\n1 40\n255\n".to_vec();
    narrow.extend(noise(120, 8));
    let mut huge = b"P6\n999999 999999\n255\n".to_vec();
    huge.extend(noise(500, 9));
    let mut real = kodim23_crop(300, 200, 24, 16).unwrap_or_else(|| soft_pnm(24, 16, 3));
    real.truncate(real.len() - 100);
    [lying, narrow, huge, real]
}

/// Codes `x` as the continuation of `history` with `cm`; returns the bytes.
pub fn code_after(cm: &mut Cm, st: &mut CmStream, history: &[u8], x: &[u8]) -> Vec<u8> {
    let mut enc = Encoder::new();
    let mut data = [history, x].concat();
    for pos in history.len()..data.len() {
        cm.code_byte(&mut enc, st, &mut data, pos, &Sequential(pos), None);
    }
    enc.finish()
}

/// Codes `x` with the prior of `c` trained on `history` (doc/FORMAT.md
/// section 11): checks that the model restored from the snapshot codes as
/// the one that learned the samples in memory, and that it decodes; returns
/// the coded bytes.
pub fn prior_round_trip(c: &CmConfig, history: &[u8], x: &[u8]) -> Vec<u8> {
    let (mut cm, mut st) = Cm::for_prior_trained(c, history).unwrap();
    let direct = code_after(&mut cm, &mut st, history, x);
    let snap = Cm::snapshot_walk(c, history, MAX_WALK).unwrap();
    let len = Cm::state_len_walk(c, MAX_WALK);
    let (mut cm2, mut st2) = Cm::restore_walk(c, &snap, len, history.len(), MAX_WALK).unwrap();
    let restored = code_after(&mut cm2, &mut st2, history, x);
    assert_eq!(
        direct, restored,
        "revision {}: the restored model codes as the trained one",
        c.revision
    );
    let (mut cm3, mut st3) = Cm::restore_walk(c, &snap, len, history.len(), MAX_WALK).unwrap();
    let mut dec = Decoder::new(&restored);
    let mut data = [history, &vec![0u8; x.len()][..]].concat();
    for pos in history.len()..data.len() {
        cm3.code_byte(&mut dec, &mut st3, &mut data, pos, &Sequential(pos), None);
    }
    assert_eq!(&data[history.len()..], x, "revision {}", c.revision);
    restored
}

/// A 64-bit xorshift generator for generated float arrays.
pub struct Rng64(pub u64);

impl Rng64 {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in [-1, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// A unit quaternion (x, y, z, w) as f32: a rotation by a random angle
/// about a random axis when the generator's draw is a multiple of
/// `random_axis_every`, else about the Y axis (x = z = 0).
pub fn unit_quaternion(rng: &mut Rng64, random_axis_every: u64) -> [f32; 4] {
    let a = rng.unit() * std::f64::consts::PI;
    let (s, c) = (a.sin(), a.cos());
    let q = if !rng.next().is_multiple_of(random_axis_every) {
        [0.0, s, 0.0, c]
    } else {
        let (ax, ay, az) = (rng.unit(), rng.unit(), rng.unit());
        let len = (ax * ax + ay * ay + az * az).sqrt().max(1e-9);
        [s * ax / len, s * ay / len, s * az / len, c]
    };
    q.map(|v| v as f32)
}

/// `n` little-endian f32 of a smooth curve (a grid with long rows).
pub fn f32_grid(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|k| (100.0 + (k as f32 * 0.01).sin() * 30.0).to_le_bytes())
        .collect()
}

/// The words of the README and FORMAT excerpts of tests/data (letters
/// only, at least two of them): real English words for generated text.
pub fn readme_words() -> Vec<String> {
    let readme = include_bytes!("../../data/readme.md");
    let format = include_bytes!("../../data/format.md");
    readme
        .iter()
        .chain(format.iter())
        .copied()
        .collect::<Vec<u8>>()
        .split(|b| !b.is_ascii_alphabetic())
        .filter(|w| w.len() >= 2)
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect()
}

/// About `len` bytes of prose from a small grammar: each word is drawn
/// (by an LCG seeded with `seed`) among the few words that may follow the
/// last one (pairs recur, with varying successors), in sentences of 4 to
/// 15 words that start with a capital and end with `. `, `, ` inside.
pub fn successor_prose(len: usize, seed: u64) -> Vec<u8> {
    let w = readme_words();
    let mut x = seed.wrapping_mul(6_364_136_223_846_793_005) | 1;
    let mut rand = move |n: usize| {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) as usize % n
    };
    // Every word's hash picks its three possible successors.
    let succ = |k: usize, r: usize| (k.wrapping_mul(2_654_435_761) >> 7).wrapping_add(r * 97) % 600;
    let mut out = String::new();
    let mut k = 0usize;
    while out.len() < len {
        let n = 4 + rand(12);
        for j in 0..n {
            k = succ(k, rand(3));
            let word = &w[k % w.len()];
            if j == 0 {
                let mut c = word.chars();
                if let Some(f) = c.next() {
                    out.push(f.to_ascii_uppercase());
                    out.push_str(c.as_str());
                }
            } else {
                out.push_str(word);
            }
            out.push_str(if j + 1 == n {
                ". "
            } else if rand(9) == 0 {
                ", "
            } else {
                " "
            });
        }
        if rand(5) == 0 {
            out.push('\n');
        }
    }
    out.into_bytes()
}

/// A small C-like source of `lines` lines, varied by `seed`; `indent`
/// starts its `if` lines (the small-input rounds' generated code).
pub fn c_like(lines: usize, seed: u32, indent: &str) -> Vec<u8> {
    let names = ["count", "buf", "len", "next", "node", "value", "index"];
    let mut s = String::from("#include <stdio.h>\n\n");
    let mut next = xorshift32(seed.wrapping_mul(2_654_435_761) | 1);
    for k in 0..lines {
        let x = next();
        let a = names[x as usize % names.len()];
        let b = names[(x >> 8) as usize % names.len()];
        match x >> 16 & 3 {
            0 => s.push_str(&format!("int {a}_{k}(int {b})\n{{\n")),
            1 => s.push_str(&format!("{indent}if ({a} < {b}) {a} = {b} + {};\n", x % 97)),
            2 => s.push_str(&format!("    return {a}[{b}];\n}}\n\n")),
            _ => s.push_str(&format!("    /* {a} and {b} */ {a}++;\n")),
        }
    }
    s.into_bytes()
}
