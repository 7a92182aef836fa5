//! CM revisions 7 and 8's code models (doc/FORMAT.md 4.18.5): the x86
//! family with the ELF layout from the program headers, and the 68000
//! family. Round trips on a real ELF piece (this test binary's first 32 KiB),
//! on generated ELF files and resource forks, with lying headers; and that
//! revisions 7 and 8 beat 5 and 6 on code of each kind.

use crate::common;
use common::{Rng, config, elf64, push_resource, resource_fork_of, round_trip, round_trip_each};

/// x86-64 code in the style of a compiler: functions that work on a local
/// variable, call a few hundred functions (absolute targets, as after the
/// E8/E9 transform), load constants, compare and branch.
fn x86_code(functions: u32, r: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..functions {
        let local = (0x100 - 8 * (1 + r.below(16))) as u8;
        out.extend([0x55, 0x48, 0x89, 0xE5, 0x48, 0x83, 0xEC, 0x20]);
        for _ in 0..4 + r.below(8) {
            match r.below(7) {
                0 => out.extend([0x48, 0x8B, 0x45 | (r.below(4) as u8) << 3, local]),
                1 => out.extend([0x48, 0x89, 0x45 | (r.below(4) as u8) << 3, local]),
                2 => {
                    out.extend([0x48, 0x89, 0xC7]);
                    out.push(0xE8);
                    out.extend((0x1000 + 0x40 * r.below(300)).to_le_bytes());
                }
                3 => {
                    out.extend([0x83, 0xF8, r.below(8) as u8, 0x74, 4 + r.below(40) as u8]);
                }
                4 => {
                    out.extend([0x48, 0x8D, 0x35]);
                    out.extend((0x3000 + 16 * r.below(200)).to_le_bytes());
                }
                5 => out.extend([0x31, 0xC0, 0x85, 0xC0]),
                _ => out.extend([0xBF, r.below(64) as u8, 0, 0, 0]),
            }
        }
        out.extend([0xC9, 0xC3, 0x0F, 0x1F, 0x40, 0x00]);
    }
    out
}

/// A 64-bit x86 ELF file: the ELF header, three program headers (a
/// read-only segment at 0, the code, then read-only data), the code of
/// `functions` functions and a string table of messages.
fn elf_file(functions: u32, seed: u32) -> Vec<u8> {
    let mut r = Rng(seed);
    let code = x86_code(functions, &mut r);
    let words = [
        "cannot",
        "open",
        "file",
        "invalid",
        "option",
        "device",
        "read",
        "write",
        "error",
        "partition",
        "table",
        "missing",
        "argument",
        "usage",
        "directory",
    ];
    let mut strings = Vec::new();
    while strings.len() < code.len() / 3 {
        for k in 0..2 + r.below(5) {
            if k > 0 {
                strings.push(b' ');
            }
            strings.extend(words[r.below(words.len() as u32) as usize].as_bytes());
        }
        strings.extend(if r.below(2) == 0 {
            &b": %s\n\0"[..]
        } else {
            b"\0"
        });
    }
    elf64(&code, &strings)
}

/// A Macintosh resource fork (data at 256) of two CODE resources of
/// Pascal-style 68000 functions: LINK with the function's frame, calls
/// through the jump table (`JSR d16(A5)`) after pushing parameters,
/// compares and branches on the local variable, toolbox traps, UNLK/RTS.
fn resource_fork(functions: u32, seed: u32) -> Vec<u8> {
    let mut r = Rng(seed);
    let mut data: Vec<u8> = Vec::new();
    for segment in 0..2u16 {
        let mut code: Vec<u16> = vec![0x0100 * segment, 0x0010];
        for _ in 0..functions / 2 {
            let frame = 0xFF00 - 2 * r.below(64) as u16;
            code.extend([0x4E56, frame - 0x100]);
            for _ in 0..3 + r.below(8) {
                match r.below(6) {
                    0 => code.extend([0x486E, frame, 0x4EAD, 0x200 + 8 * r.below(200) as u16]),
                    1 => code.extend([0x2F2E, 8 + 4 * r.below(3) as u16, 0x4EAD, 0x200]),
                    2 => code.extend([0x0C6E, r.below(16) as u16, frame, 0x6600, 0x000C]),
                    3 => code.push(0xA800 | r.below(0x80) as u16),
                    4 => code.extend([0x7000, 0x102E, frame, 0x48C0, 0x2F00]),
                    _ => code.extend([0x4A2E, frame, 0x6700, 2 * r.below(40) as u16 + 4]),
                }
            }
            code.extend([0x4E5E, 0x4E75]);
        }
        push_resource(&mut data, &code);
    }
    resource_fork_of(&data)
}

#[test]
fn revisions_7_and_8_round_trip_real_and_generated_code_and_lying_headers() {
    // This test binary's first 32 KiB: a real ELF header, program headers
    // and what follows them.
    let exe = std::fs::read(std::env::current_exe().expect("test binary")).expect("read");
    let real = exe[..exe.len().min(1 << 15)].to_vec();
    // Program headers that point past the block, and a cut header.
    let mut lying = elf_file(40, 3);
    lying[0x20] = 0xF0;
    let mut past = elf_file(40, 4);
    past[64 + 56 + 8..64 + 56 + 16].copy_from_slice(&u64::MAX.to_le_bytes());
    let mut fork_cut = resource_fork(40, 5);
    fork_cut[256..260].copy_from_slice(&u32::MAX.to_be_bytes());
    round_trip_each(
        &[7, 8],
        &[
            real,
            elf_file(100, 7),
            lying,
            past,
            elf_file(10, 1)[..100].to_vec(),
            resource_fork(100, 7),
            fork_cut,
        ],
        true,
    );
}

#[test]
fn revisions_7_and_8_beat_5_and_6_on_code() {
    let cfg = |revision| sep_cm::CmConfig {
        table_bits: 22,
        ..config(revision)
    };
    for (what, data) in [("x86", elf_file(500, 9)), ("68000", resource_fork(500, 9))] {
        for (old, new) in [(5, 7), (6, 8)] {
            let a = round_trip(&data, &cfg(old)).len();
            let b = round_trip(&data, &cfg(new)).len();
            eprintln!("{what}: revision {new} {b} bytes, revision {old} {a}");
            assert!(
                b * 1000 < a * 997,
                "{what}: revision {new} {b} bytes, revision {old} {a}"
            );
        }
    }
}
