//! Issue 20: the prior files of tests/golden/prior-v1 load, keep their ids,
//! and the archives coded with them decode to their inputs, forever
//! (doc/FORMAT.md section 11; written by crates/sep/examples/make_golden.rs).

mod common;

#[test]
fn golden_priors_load_and_their_archives_decode() {
    assert_eq!(
        common::check_golden_priors("MANIFEST.tsv", |_, _| {}),
        (2, 5)
    );
}
