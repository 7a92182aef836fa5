//! CM revision 16's x86 family (doc/FORMAT.md 4.27.3): an instruction-level
//! history, the last ModRM and SIB of each opcode and the expected bytes of
//! rip-relative and call targets. Round trips at revisions 14 and 16 on an
//! ELF file whose code is real (this test binary's own machine code), a
//! lying ELF header, a truncated ELF, and tiny inputs; and that revision 16
//! beats revision 14 on that ELF file (the family switched off fails it).

mod common;
use common::{coded_len, config, elf_file, real_code, round_trip_each};
use sep_cm::CmConfig;

#[test]
fn revisions_14_and_16_round_trip_x86_code() {
    let mut lying_elf = elf_file(real_code(4096), 3);
    lying_elf[0x20] = 0xF0;
    // Program headers that put the code beyond the block.
    let mut far_code = elf_file(real_code(2048), 4);
    far_code[64 + 56 + 8] = 0xFF;
    let truncated = elf_file(real_code(4096), 5)[..3000].to_vec();
    round_trip_each(
        &[14, 16],
        &[
            b"".to_vec(),
            b"x".to_vec(),
            b"\x7fELF\x02\x01\x01".to_vec(),
            elf_file(real_code(8 << 10), 1),
            lying_elf,
            far_code,
            truncated,
        ],
        true,
    );
}

/// Revision 16 pays on real x86-64 code in an ELF file: smaller than
/// revision 14 (the family switched off, they are equal). The code is this
/// test binary's own, so the margin depends on the build: only "smaller"
/// is asserted; doc/FORMAT.md 4.27.3 has the corpus numbers.
#[test]
fn revision_16_beats_14_on_x86_code() {
    let data = elf_file(real_code(160 << 10), 7);
    // A table of the `max` preset's order of size: with the tests'
    // 2^18 slots, 160 KiB of code overfill it.
    let big = |revision| CmConfig {
        table_bits: 22,
        ..config(revision)
    };
    let a = coded_len(&data, &big(14));
    let b = coded_len(&data, &big(16));
    eprintln!("revision 16 {b} bytes, revision 14 {a}");
    assert!(b < a, "revision 16 {b} bytes, revision 14 {a}");
}
