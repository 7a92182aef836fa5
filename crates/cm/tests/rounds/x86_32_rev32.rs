//! CM revision 32's x86 family (doc/FORMAT.md 4.43.2): branch-target and
//! rip-relative-target contexts, register dataflow for the ModRM and SIB,
//! the ModRM per opcode pair. Round trips at revisions 30 and 32 of the x86
//! cases (empty, 1 byte, a bare ELF magic, an ELF file of frozen real
//! x86-64 code, a lying ELF header, program headers beyond the block, a
//! truncated ELF) plus code made of branches alone; and that revision 32
//! beats revision 30 on the real code (the family switched off, they are
//! equal).

use crate::common;
use common::{elf64, real_code, round_trip_each, x86_cases, x86_code_sizes};

/// An ELF file whose code is short and near branches (jcc rel8, jmp rel8,
/// jcc rel32, E9) to a few labels, with rip-relative loads between them,
/// and a code segment that ends inside an instruction.
fn elf_with_branches() -> Vec<u8> {
    let mut code = Vec::new();
    let mut s = 7u32;
    while code.len() < 6000 {
        s = s.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let label = (code.len() as i64 / 64 + 1) * 64 + i64::from(s >> 30) * 8;
        match (s >> 16) % 5 {
            0 | 1 => {
                let end = code.len() as i64 + 2;
                let rel = (label - end).clamp(-128, 127) as i8;
                code.extend([0x74 + (s >> 20) as u8 % 4, rel as u8]);
            }
            2 => {
                let end = code.len() as i64 + 6;
                code.extend([0x0F, 0x85]);
                code.extend(((label - end) as i32).to_le_bytes());
            }
            3 => {
                code.push(0xE9);
                code.extend((label as i32).to_le_bytes());
            }
            _ => {
                // mov rax, [rip + disp32] to one of a few globals.
                let end = code.len() as i64 + 7;
                let global = 0x2_0000 + i64::from(s >> 29) * 16;
                code.extend([0x48, 0x8B, 0x05]);
                code.extend(((global - end) as i32).to_le_bytes());
            }
        }
    }
    code.extend([0x0F, 0x85, 0x12]);
    elf64(&code, b"data")
}

#[test]
fn revisions_30_and_32_round_trip_x86_code() {
    let mut cases = x86_cases();
    cases.push(elf_with_branches());
    cases.push(elf64(&real_code(3000), &[]));
    round_trip_each(&[30, 32], &cases, true);
}

/// Revision 32 pays on real x86-64 code in an ELF file: smaller than
/// revision 30. The code is frozen (`data/x86-code.bin`); only "smaller" is
/// asserted, doc/FORMAT.md 4.43.2 has the corpus numbers.
#[test]
fn revision_32_beats_30_on_x86_code() {
    let (a, b) = x86_code_sizes(30, 32);
    assert!(b < a, "revision 32 {b} bytes, revision 30 {a}");
}
