//! CM revision 14's x86 family (doc/FORMAT.md 4.25.2): orders 2 and 3 with
//! the instruction decoder's state, register and opcode histories, operands
//! per base register and C-string contexts in the data. Round trips at
//! revisions 12 and 14 on an ELF file whose code is real (frozen x86-64
//! code, `data/x86-code.bin`), a lying ELF header, a truncated ELF, and
//! tiny inputs; and that revision 14's family is active on that ELF file at
//! a bounded cost.

use crate::common;
use common::{round_trip_each, x86_cases, x86_code_sizes};

#[test]
fn revisions_12_and_14_round_trip_x86_code() {
    round_trip_each(&[12, 14], &x86_cases(), true);
}

/// Revision 14's family is active on real x86-64 code (the sizes differ)
/// and costs at most 0.5% there. It does not beat revision 12 on this code
/// at the tests' configuration: 21,095 bytes against 21,052 (+0.2%) on the
/// frozen code of a Rust release build, and +7 bytes on the debug test
/// binary's own code at stop 36, which failed the earlier assertion
/// "smaller" in CI. Its gain is on gcc-compiled C at `max`: busybox -0.45%
/// (doc/FORMAT.md 4.25.2); revision 16's family beats it by 6.7% on this
/// code (x86_rev16.rs).
#[test]
fn revision_14_is_active_on_x86_code_at_a_bounded_cost() {
    let (a, b) = x86_code_sizes(12, 14);
    assert_ne!(a, b, "the family changes nothing");
    assert!(
        b * 1000 <= a * 1005,
        "revision 14 {b} bytes, revision 12 {a}"
    );
}
