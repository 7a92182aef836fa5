//! CM revision 14's x86 family (doc/FORMAT.md 4.25.2): orders 2 and 3 with
//! the instruction decoder's state, register and opcode histories, operands
//! per base register and C-string contexts in the data. Round trips at
//! revisions 12 and 14 on an ELF file whose code is real (this test
//! binary's own machine code), a lying ELF header, a truncated ELF, and
//! tiny inputs; and that revision 14 beats revision 12 on that ELF file
//! (the family switched off fails it).

mod common;
use common::{round_trip_each, x86_cases, x86_code_sizes};

#[test]
fn revisions_12_and_14_round_trip_x86_code() {
    round_trip_each(&[12, 14], &x86_cases(), true);
}

/// Revision 14 pays on real x86-64 code in an ELF file: smaller than
/// revision 12 (the family switched off, they are equal). The code is this
/// test binary's own, so the margin depends on the build: only "smaller"
/// is asserted; doc/FORMAT.md 4.25.2 has the corpus numbers.
#[test]
fn revision_14_beats_12_on_x86_code() {
    let (a, b) = x86_code_sizes(12, 14);
    assert!(b < a, "revision 14 {b} bytes, revision 12 {a}");
}
