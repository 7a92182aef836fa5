//! CM revision 4's code models (doc/FORMAT.md 4.15.4): the x86 family for
//! blocks with an x86 ELF header and the 16-bit word family for Macintosh
//! resource forks (68000 code). Round trips, determinism, lying headers, and
//! that each beats revision 2 on code of its kind.

use crate::common;
use common::{Rng, config, push_resource, resource_fork_of, round_trip, round_trip_each};

fn noise(len: usize, seed: u32) -> Vec<u8> {
    let mut r = Rng(seed | 1);
    (0..len).map(|_| r.next() as u8).collect()
}

/// An x86-64 ELF header followed by `functions` functions of varied x86-64
/// code: prologues, REX-prefixed moves with ModRM/SIB and displacements,
/// immediates, calls to absolute targets (as after the E8/E9 transform)
/// among a few hundred functions, conditional jumps, epilogues.
fn x86_elf(functions: u32, seed: u32) -> Vec<u8> {
    let mut out = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0\x3e\0".to_vec();
    out.extend([0u8; 44]);
    let mut r = Rng(seed);
    let targets: Vec<u32> = (0..300)
        .map(|k| 0x0040_1000 + k * 0x5c + r.below(64))
        .collect();
    for _ in 0..functions {
        out.extend([0x55, 0x48, 0x89, 0xE5]);
        if r.below(2) == 0 {
            out.extend([0x48, 0x83, 0xEC, (r.below(8) * 8) as u8]);
        }
        for _ in 0..3 + r.below(8) {
            match r.below(7) {
                // mov reg, [rbp - disp8]
                0 => out.extend([
                    0x48,
                    0x8B,
                    0x45 | (r.below(8) as u8) << 3,
                    (0xF8 - r.below(8) * 8) as u8,
                ]),
                // mov [rsp + disp8], reg (SIB)
                1 => out.extend([
                    0x48,
                    0x89,
                    0x44 | (r.below(8) as u8) << 3,
                    0x24,
                    (r.below(16) * 8) as u8,
                ]),
                // call absolute target
                2 => {
                    out.push(0xE8);
                    out.extend(targets[r.below(300) as usize].to_le_bytes());
                }
                // mov eax, imm32
                3 => {
                    out.push(0xB8 + r.below(8) as u8);
                    out.extend(r.below(300).to_le_bytes());
                }
                // test eax, eax; jne rel32
                4 => {
                    out.extend([0x85, 0xC0, 0x0F, 0x85]);
                    out.extend((r.below(512) + 16).to_le_bytes());
                }
                // lea rdi, [rip + disp32]
                5 => {
                    out.extend([0x48, 0x8D, 0x3D]);
                    out.extend((0x2000 + r.below(4096)).to_le_bytes());
                }
                // add rsp / cmp reg, imm8
                _ => out.extend([0x48, 0x83, 0xF8 + r.below(8) as u8, r.below(32) as u8]),
            }
        }
        out.extend([0xC9, 0xC3]);
    }
    out
}

/// A Macintosh resource fork header (data at 256, `len` bytes of data, a
/// map after it) and 68000-like code: functions of LINK, MOVEM, MOVE.L with
/// displacements, JSR d16(PC), TST/BEQ, UNLK and RTS, as big-endian words.
fn resource_fork(functions: u32, seed: u32) -> Vec<u8> {
    let mut r = Rng(seed);
    let mut code: Vec<u16> = Vec::new();
    for _ in 0..functions {
        code.extend([0x4E56, (0u16).wrapping_sub(4 * r.below(8) as u16)]);
        code.extend([0x48E7, 0x1F00 | (r.below(8) as u16) << 4]);
        for _ in 0..2 + r.below(8) {
            match r.below(5) {
                0 => code.extend([0x202E | (r.below(4) as u16) << 9, 8 + 2 * r.below(6) as u16]),
                1 => code.extend([0x2F2E, 0xFFFC - 4 * r.below(4) as u16]),
                2 => code.extend([0x4EBA, r.below(0x4000) as u16 * 2]),
                3 => code.extend([
                    0x4A80 | r.below(8) as u16,
                    0x6700 | (2 * r.below(40) + 2) as u16,
                ]),
                _ => code.extend([0x7000 | (r.below(8) as u16) << 9 | r.below(64) as u16]),
            }
        }
        code.extend([0x4CDF, 0x00F8, 0x4E5E, 0x4E75]);
    }
    let len = (code.len() * 2) as u32;
    let mut out = Vec::new();
    for v in [256, 256 + len, len, 286] {
        out.extend(u32::to_be_bytes(v));
    }
    out.resize(256, 0);
    for w in code {
        out.extend(w.to_be_bytes());
    }
    out.resize(out.len() + 286, 0);
    out
}

#[test]
fn revision_4_round_trips_code_and_lying_headers() {
    let mut elf_noise = x86_elf(0, 1);
    elf_noise.extend(noise(3000, 13));
    let mut fork_noise = resource_fork(0, 1);
    fork_noise.extend(noise(3001, 5));
    // A header alone, and cut inside the header.
    let fork = resource_fork(20, 3);
    for data in [
        x86_elf(150, 7),
        resource_fork(150, 7),
        elf_noise,
        fork_noise,
        fork[..16].to_vec(),
        fork[..15].to_vec(),
        x86_elf(0, 1)[..20].to_vec(),
    ] {
        let a = round_trip(&data, &config(4));
        assert_eq!(a, round_trip(&data, &config(4)), "not deterministic");
    }
}

#[test]
fn revision_4_code_models_beat_revision_2() {
    for (what, data) in [("x86", x86_elf(400, 9)), ("68000", resource_fork(400, 9))] {
        let v2 = round_trip(&data, &config(2)).len();
        let v4 = round_trip(&data, &config(4)).len();
        assert!(
            v4 * 100 < v2 * 99,
            "{what}: revision 4 {v4} bytes, revision 2 {v2}"
        );
    }
}

/// A resource fork laid out as the Resource Manager writes one (data at 256,
/// each resource a 4-byte big-endian length and its data): a 7-byte string
/// resource (odd, so the code after it is on odd block positions), then
/// CODE resources, each with its 4-byte header and functions in the style of
/// a Pascal compiler: LINK, a local variable per function (its frame offset
/// recurs in the function's instructions), parameters pushed with MOVE.L d16(A6),-(SP),
/// PEA d16(A6) and MOVE.W #imm,-(SP), calls through the jump table (JSR
/// d16(A5) with a few hundred offsets), toolbox A-line traps, BEQ.W,
/// UNLK/RTS and zero padding.
fn resource_fork_code(functions: u32, seed: u32) -> Vec<u8> {
    let mut r = Rng(seed);
    let calls: Vec<u16> = (0..200).map(|k| 0x0200 + 8 * k).collect();
    let frames: Vec<u16> = (0..64).map(|k| 0xFF00 - 2 * k).collect();
    let mut data: Vec<u8> = Vec::new();
    data.extend(7u32.to_be_bytes());
    data.extend(b"\x06Hello!");
    for segment in 0..3 {
        let mut code: Vec<u16> = vec![0x0100 * segment, 0x0010];
        for _ in 0..functions / 3 {
            // The function's local variable: its frame offset recurs.
            let frame = frames[r.below(64) as usize];
            code.extend([0x4E56, frame - 0x100]);
            for _ in 0..3 + r.below(8) {
                match r.below(8) {
                    // A call: its parameters, then JSR d16(A5).
                    0 => {
                        let k = r.below(200) as usize;
                        code.extend([0x486E, frame, 0x3F3C, 0x00FF, 0x4EAD, calls[k]]);
                    }
                    1 => code.extend([0x2F2E, 8 + 4 * r.below(3) as u16, 0x4EAD, calls[0]]),
                    // MOVE.B #imm, d16(A6); CMPI.W #imm, d16(A6); BNE.W.
                    2 => code.extend([0x1D7C, r.below(2) as u16, frame]),
                    3 => code.extend([0x0C6E, r.below(16) as u16, frame, 0x6600, 0x000C]),
                    // MOVE.L #imm32, -(SP); a toolbox trap.
                    4 => code.extend([0x2F3C, 0, r.below(4) as u16, 0xA800 | r.below(0x40) as u16]),
                    5 => code.extend([0x7000, 0x102E, frame, 0x48C0, 0x2F00]),
                    6 => code.push(0xA800 | r.below(0x100) as u16),
                    _ => code.extend([0x4A2E, frame, 0x6700, 2 * r.below(40) as u16 + 4]),
                }
            }
            code.extend([0x4E5E, 0x4E75, 0x0000]);
        }
        push_resource(&mut data, &code);
    }
    resource_fork_of(&data)
}

#[test]
fn revision_5_and_6_round_trip_68000_code_and_lying_headers() {
    let mut fork_noise = resource_fork_code(0, 1);
    fork_noise.extend(noise(3001, 5));
    let fork = resource_fork_code(30, 3);
    // A resource length that points past the block.
    let mut long = fork.clone();
    long[256..260].copy_from_slice(&u32::MAX.to_be_bytes());
    round_trip_each(
        &[5, 6],
        &[
            resource_fork_code(150, 7),
            resource_fork(100, 7),
            fork_noise,
            long,
            fork[..16].to_vec(),
            fork[..258].to_vec(),
        ],
        true,
    );
}

#[test]
fn revision_5_68000_family_beats_revision_4() {
    let data = resource_fork_code(600, 9);
    // A context table the size `default` gives an input of this length.
    let cfg = |revision| sep_cm::CmConfig {
        table_bits: 22,
        ..config(revision)
    };
    let v4 = round_trip(&data, &cfg(4)).len();
    let v5 = round_trip(&data, &cfg(5)).len();
    assert!(
        v5 * 100 < v4 * 98,
        "68000: revision 5 {v5} bytes, revision 4 {v4}"
    );
}

/// An x86-64 ELF header and functions that each work on one local
/// variable (its `[rbp + disp8]` recurs in the function's instructions of
/// several forms): loads, stores, adds of small immediates, compares with a
/// few constants, calls to absolute targets, short jumps.
fn x86_locals(functions: u32, seed: u32) -> Vec<u8> {
    let mut out = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0\x3e\0".to_vec();
    out.extend([0u8; 44]);
    let mut r = Rng(seed);
    for _ in 0..functions {
        let local = (0x100 - 4 * (1 + r.below(32))) as u8;
        let constant = [10u32, 100, 1000, 4096][r.below(4) as usize];
        out.extend([0x55, 0x48, 0x89, 0xE5]);
        for _ in 0..3 + r.below(6) {
            match r.below(5) {
                0 => out.extend([0x8B, 0x45, local]),
                1 => out.extend([0x89, 0x45, local]),
                2 => out.extend([0x83, 0x45, local, 1 + r.below(2) as u8]),
                3 => {
                    out.push(0x3D);
                    out.extend(constant.to_le_bytes());
                    out.extend([0x75, 2 + r.below(30) as u8]);
                }
                _ => {
                    out.push(0xE8);
                    out.extend((0x0040_1000 + 16 * r.below(500)).to_le_bytes());
                }
            }
        }
        out.extend([0xC9, 0xC3]);
    }
    out
}

#[test]
fn revision_6_round_trips_x86_code_and_beats_revision_5() {
    let mut elf_noise = x86_elf(0, 1);
    elf_noise.extend(noise(3000, 13));
    for data in [x86_elf(150, 7), elf_noise, x86_elf(0, 1)[..20].to_vec()] {
        let a = round_trip(&data, &config(6));
        assert_eq!(a, round_trip(&data, &config(6)), "not deterministic");
    }
    let data = x86_locals(600, 9);
    let v5 = round_trip(&data, &config(5)).len();
    let v6 = round_trip(&data, &config(6)).len();
    assert!(
        v6 * 1000 < v5 * 997,
        "x86: revision 6 {v6} bytes, revision 5 {v5}"
    );
}
