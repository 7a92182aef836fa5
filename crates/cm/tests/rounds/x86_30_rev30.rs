//! CM revision 30's x86 family (doc/FORMAT.md 4.41.2): last operands of
//! the same instruction form and base register, register and instruction
//! histories, an instruction-aligned match and 4-byte table contexts in the
//! data. Round trips at revisions 28 and 30 on an ELF file whose code is
//! real (frozen x86-64 code, `data/x86-code.bin`), a lying ELF header, a
//! truncated ELF, an ELF with a jump table in its data, and tiny inputs
//! (empty, 1 byte, a bare ELF magic); and that revision 30 beats revision
//! 28 on the real code (the family switched off, they are equal).

use crate::common;
use common::{elf64, real_code, round_trip_each, x86_cases, x86_code_sizes};

/// An ELF file with real code and a jump table of 4-byte offsets (relative
/// to the table, as compilers write them for a `switch`) in its data.
fn elf_with_jump_table() -> Vec<u8> {
    let mut table = Vec::new();
    let mut s = 12345u32;
    for k in 0..600i32 {
        s = s.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let target = -0x7_0000 + k * 40 + (s >> 24) as i32 % 24;
        table.extend(target.to_le_bytes());
    }
    elf64(&real_code(4096), &table)
}

#[test]
fn revisions_28_and_30_round_trip_x86_code() {
    let mut cases = x86_cases();
    cases.push(elf_with_jump_table());
    let mut lying = elf_with_jump_table();
    // Program headers that put the code at the end of the block.
    let end = (lying.len() as u64 - 3).to_le_bytes();
    lying[64 + 56 + 8..64 + 56 + 16].copy_from_slice(&end);
    cases.push(lying);
    round_trip_each(&[28, 30], &cases, true);
}

/// Revision 30 pays on real x86-64 code in an ELF file: smaller than
/// revision 28 (the family switched off, they are equal). The code is
/// frozen (`data/x86-code.bin`); only "smaller" is asserted, doc/FORMAT.md
/// 4.41.2 has the corpus numbers.
#[test]
fn revision_30_beats_28_on_x86_code() {
    let (a, b) = x86_code_sizes(28, 30);
    assert!(b < a, "revision 30 {b} bytes, revision 28 {a}");
}
