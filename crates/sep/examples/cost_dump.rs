//! Where the bits of an ELF go: codes a file with the context-mixing model
//! (after the E8/E9 transform when it is an x86 ELF, as the pipeline does)
//! and splits the cost (the ideal code length, -log2 of each coded bit's
//! probability) by ELF section and, in executable sections, by instruction
//! part as the CM's x86 decoder reads it.
//!
//! `cargo run --release -p sep --example cost_dump -- [--preset default|max]
//!  [--revision R] FILE`; with `COST_DUMP_WRITE=PATH` it also writes the
//! bytes the model codes (after the transform) to PATH; with
//! `COST_DUMP_CHUNKS` set it prints the cost of every 4 KiB of the large
//! sections; with `COST_DUMP_BITS=PATH` it writes, for every coded byte,
//! the byte, its x86 role (0xFF outside executable sections) and the cost
//! of each of its 8 bits (f32 little-endian, most significant bit first),
//! 34 bytes a record, for offline splits.
use sep::Preset;
use sep_cm::{Cm, CmStream, Sequential};
use sep_coder::{Coder, FreqTable};
use std::collections::BTreeMap;

/// A coder that codes nothing and adds up each bit's ideal cost.
struct Cost {
    bits: f64,
    /// The cost of each bit coded, in order.
    each: Vec<f32>,
}

impl Coder for Cost {
    fn code_bit(&mut self, bit: u32, p1: u32) -> u32 {
        let p = f64::from(p1) / 65536.0;
        let c = -if bit == 1 { p } else { 1.0 - p }.log2();
        self.bits += c;
        self.each.push(c as f32);
        bit
    }
    fn code_symbol(&mut self, sym: u32, _table: &FreqTable) -> u32 {
        sym
    }
    fn code_uniform(&mut self, sym: u32, bits: u32) -> u32 {
        self.bits += f64::from(bits);
        sym
    }
}

/// `(name, offset, size, executable)` of each ELF64 little-endian section
/// with file contents.
fn sections(d: &[u8]) -> Vec<(String, usize, usize, bool)> {
    let u16at = |o: usize| u16::from_le_bytes([d[o], d[o + 1]]) as usize;
    let u32at = |o: usize| u32::from_le_bytes(d[o..o + 4].try_into().unwrap()) as usize;
    let u64at = |o: usize| u64::from_le_bytes(d[o..o + 8].try_into().unwrap()) as usize;
    if d.len() < 64 || &d[..4] != b"\x7fELF" || d[4] != 2 {
        return Vec::new();
    }
    let (shoff, shentsize, shnum, shstrndx) = (u64at(0x28), u16at(0x3A), u16at(0x3C), u16at(0x3E));
    if shentsize < 64 || shoff + shnum * shentsize > d.len() || shstrndx >= shnum {
        return Vec::new();
    }
    let sh = |k: usize| shoff + k * shentsize;
    let strtab = u64at(sh(shstrndx) + 24);
    let mut out = Vec::new();
    for k in 0..shnum {
        let h = sh(k);
        let (name, ty, flags, off, size) = (
            u32at(h),
            u32at(h + 4),
            u64at(h + 8),
            u64at(h + 24),
            u64at(h + 32),
        );
        if ty == 8 || size == 0 || off + size > d.len() {
            continue; // NOBITS
        }
        let n = &d[strtab + name..];
        let n = String::from_utf8_lossy(&n[..n.iter().position(|&b| b == 0).unwrap_or(0)]);
        out.push((n.into_owned(), off, size, flags & 4 != 0));
    }
    out
}

fn main() {
    let mut preset = Preset::Default;
    let mut revision = None;
    let mut file = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--preset" => preset = Preset::from_name(&args.next().unwrap()).expect("preset"),
            "--revision" => revision = Some(args.next().unwrap().parse().unwrap()),
            f => file = Some(f.to_string()),
        }
    }
    let raw = std::fs::read(file.expect("FILE")).expect("read");
    let mut cfg = sep::MixConfig::preset(preset).expect("mix preset").cm;
    if let Some(r) = revision {
        cfg.revision = r;
    }
    let secs = sections(&raw);
    let mut data = if secs.is_empty() {
        raw.clone()
    } else {
        sep_transform::x86_forward(&raw)
    };
    if let Ok(path) = std::env::var("COST_DUMP_WRITE") {
        // The bytes the model codes, for cm_bench.
        std::fs::write(path, &data).expect("write");
    }
    let mut cost = vec![0f64; data.len()];
    let mut m = Cm::new(&cfg, false, data.len());
    let mut st = CmStream::new(0);
    let mut c = Cost {
        bits: 0.0,
        each: Vec::new(),
    };
    let mut bit_cost = Vec::new();
    for (pos, cost) in cost.iter_mut().enumerate() {
        let before = c.bits;
        c.each.clear();
        m.code_byte(&mut c, &mut st, &mut data, pos, &Sequential(pos), None);
        *cost = c.bits - before;
        let mut b8 = [0f32; 8];
        for (d, s) in b8.iter_mut().zip(&c.each) {
            *d = *s;
        }
        bit_cost.push(b8);
    }
    let mut owner = vec![usize::MAX; data.len()];
    for (k, s) in secs.iter().enumerate() {
        owner[s.1..s.1 + s.2].fill(k);
    }
    let mut by: BTreeMap<String, (usize, f64)> = BTreeMap::new();
    for (pos, &k) in owner.iter().enumerate() {
        let name = if k == usize::MAX {
            "(no section)".to_string()
        } else {
            secs[k].0.clone()
        };
        let e = by.entry(name).or_default();
        e.0 += 1;
        e.1 += cost[pos];
    }
    let total: f64 = cost.iter().sum();
    println!(
        "{:24} {:>9} {:>10} {:>6} {:>6}",
        "section", "bytes", "cost B", "bpb", "share"
    );
    let mut rows: Vec<_> = by.into_iter().collect();
    rows.sort_by(|a, b| b.1.1.total_cmp(&a.1.1));
    for (n, (len, bits)) in rows {
        println!(
            "{n:24} {len:>9} {:>10.0} {:>6.3} {:>5.1}%",
            bits / 8.0,
            bits / len as f64,
            100.0 * bits / total
        );
    }
    println!("total {} bytes -> {:.0} bytes", data.len(), total / 8.0);
    if std::env::var_os("COST_DUMP_CHUNKS").is_some() {
        // Cost per 4 KiB of every section of 16 KiB or more.
        for s in secs.iter().filter(|s| s.2 >= 1 << 14) {
            for (k, c) in cost[s.1..s.1 + s.2].chunks(4096).enumerate() {
                let bits: f64 = c.iter().sum();
                println!("{} +{:#x}: {:.3} bpb", s.0, k * 4096, bits / c.len() as f64);
            }
        }
    }
    if let Ok(path) = std::env::var("COST_DUMP_BITS") {
        let mut role = vec![0xFFu8; data.len()];
        for s in secs.iter().filter(|s| s.3) {
            role[s.1..s.1 + s.2].copy_from_slice(&sep_cm::x86_roles(&data[s.1..s.1 + s.2]));
        }
        let mut out = Vec::with_capacity(data.len() * 34);
        for ((&b, &r), b8) in data.iter().zip(&role).zip(&bit_cost) {
            out.push(b);
            out.push(r);
            for x in b8 {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        std::fs::write(path, out).expect("write bits");
    }
    const PARTS: [&str; 7] = [
        "prefix/opcode",
        "0F xx",
        "0F 38/3A xx",
        "ModRM",
        "SIB",
        "disp",
        "imm",
    ];
    for s in secs.iter().filter(|s| s.3) {
        let roles = sep_cm::x86_roles(&data[s.1..s.1 + s.2]);
        let mut part = [(0usize, 0f64); 7];
        for (j, &r) in roles.iter().enumerate() {
            part[usize::from(r)].0 += 1;
            part[usize::from(r)].1 += cost[s.1 + j];
        }
        println!("{}: by instruction part", s.0);
        for (n, (len, bits)) in PARTS.iter().zip(part) {
            println!(
                "  {n:14} {len:>9} {:>10.0} {:>6.3}",
                bits / 8.0,
                bits / len.max(1) as f64
            );
        }
    }
}
