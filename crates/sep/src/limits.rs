//! What a decoder may spend on an archive (issue 14, doc/FORMAT.md section 7):
//! the estimated work, the set-up work of blocks, the output and the memory.
//!
//! Work is counted in *work units*: about one multiply-add, or a few bytes of
//! model state written; one core does about 2.5 * 10^10 a second (the `default`
//! neural preset, 0.53 M units per byte, decodes at about 48 KB/s). The cost of a
//! block is [`ModelConfig::block_work`](crate::ModelConfig::block_work). A decoder
//! refuses, before decoding the block that crosses it:
//!
//! * total work over `max_work + WORK_PER_ARCHIVE_BYTE * archive bytes read`
//!   (`max_work` is [`DEFAULT_MAX_WORK`] unless the caller changes it with
//!   [`Decoder::with_max_work`](crate::Decoder::with_max_work)): a small archive
//!   can cost at most about 90 minutes of one core, and a large one at most
//!   about 43 ms per archive byte more, which any real archive stays under
//!   (context mixing needs a ratio over 8000:1 to reach it, a paper-sized
//!   network over 40:1);
//! * total set-up work over that of one full block of the first archive plus
//!   `SETUP_WORK_PER_ARCHIVE_BYTE * archive bytes read`: blocks so small that
//!   setting their model up costs more than coding them (a 19-byte block of a
//!   large network) are refused, while a block of 16 MiB of zeros that mix codes
//!   in 18 bytes (a 104 MiB model) passes.

/// Estimated work units (about one multiply-add, or a few bytes of memory
/// written, each; a core does about 2.5 * 10^10 per second) that order2 spends
/// per byte: about 230 ns per byte measured (README, "Benchmarks").
pub const ORDER2_BYTE_WORK: u64 = 1 << 13;
/// Work units per byte of context mixing, whatever its contexts: the `default`
/// preset measured 3.7 us per byte of text (README, "Benchmarks"), `max` about
/// the same.
pub const CM_BYTE_WORK: u64 = 1 << 17;
/// Work units per byte of model state a block sets up (allocating, zeroing,
/// drawing initial weights).
pub const SETUP_BYTE_WORK: u64 = 4;

/// Work a decoder allows by default before the per-byte allowance: 2^47 units,
/// about 90 minutes of one core.
pub const DEFAULT_MAX_WORK: u64 = 1 << 47;
/// Work allowed per byte of archive read, on top of the `max_work`: 2^30 units,
/// about 43 ms.
pub const WORK_PER_ARCHIVE_BYTE: u64 = 1 << 30;
/// Set-up work allowed per byte of archive read, beyond one full block's: 2^26
/// units, about 2.7 ms (a 17-byte block may set up about 280 MiB of model).
pub const SETUP_WORK_PER_ARCHIVE_BYTE: u64 = 1 << 26;

use crate::error::{Error, Result};

/// What the caller allows a decoder to spend.
#[derive(Debug, Clone)]
pub(crate) struct Limits {
    /// Content bytes, all archives together.
    pub(crate) max_output: Option<u64>,
    /// Work beyond the per-byte allowance; `None`: no work limit.
    pub(crate) max_work: Option<u64>,
    /// Heap bytes the decoder may hold (estimated); `None`: no limit.
    pub(crate) memory: Option<u64>,
    /// Threads the decoder settled on (for archives concatenated later).
    pub(crate) threads: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_output: None,
            max_work: Some(DEFAULT_MAX_WORK),
            memory: None,
            threads: 1,
        }
    }
}

/// What a decoder has read and committed to so far, all archives together.
#[derive(Debug, Clone, Default)]
pub(crate) struct Spent {
    /// Archive bytes read (headers, block headers, payloads, end records).
    pub(crate) bytes: u64,
    /// Work of the blocks read (set-up and coding).
    pub(crate) work: u64,
    /// Set-up work of the blocks read.
    pub(crate) setup: u64,
    /// Set-up work that needs no justification: one full block of the first
    /// archive.
    pub(crate) free_setup: Option<u64>,
}

/// One of the limits a [`Decoder`](crate::Decoder) applies, named in
/// [`Error::OverLimit`] so that a caller can say how to raise it in its own
/// terms (the `sep` command names its flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// Content bytes: [`Decoder::with_max_output`](crate::Decoder::with_max_output).
    Output,
    /// Estimated memory: [`Decoder::with_memory_limit`](crate::Decoder::with_memory_limit).
    Memory,
    /// Estimated work: [`Decoder::with_max_work`](crate::Decoder::with_max_work).
    Work,
}

impl Limit {
    /// The library method that sets this limit.
    pub fn setter(self) -> &'static str {
        match self {
            Limit::Output => "Decoder::with_max_output",
            Limit::Memory => "Decoder::with_memory_limit",
            Limit::Work => "Decoder::with_max_work",
        }
    }
}

impl Limits {
    /// Checks `total` content bytes against the output limit.
    pub(crate) fn check_output(&self, total: u64) -> Result<()> {
        match self.max_output {
            Some(limit) if total > limit => Err(Error::OverLimit {
                what: "output (content bytes)",
                value: total,
                limit,
                raise: Limit::Output,
                note: "",
            }),
            _ => Ok(()),
        }
    }

    /// The most threads, up to `threads`, whose estimated memory (`need(t)` for
    /// `t` threads) fits the memory limit; an error when one does not.
    pub(crate) fn fit_threads(&self, threads: usize, need: impl Fn(usize) -> u64) -> Result<usize> {
        let Some(limit) = self.memory else {
            return Ok(threads);
        };
        match (1..=threads).rev().find(|&t| need(t) <= limit) {
            Some(t) => Ok(t),
            None => Err(Error::OverLimit {
                what: "decoder memory (estimated bytes, one block at a time)",
                value: need(1),
                limit,
                raise: Limit::Memory,
                note: "",
            }),
        }
    }

    /// Adds a block's `(setup, coding)` work to `spent` and checks both rules.
    pub(crate) fn charge(&self, spent: &mut Spent, (setup, coding): (u64, u64)) -> Result<()> {
        spent.setup = spent.setup.saturating_add(setup);
        spent.work = spent.work.saturating_add(setup).saturating_add(coding);
        let Some(base) = self.max_work else {
            return Ok(());
        };
        let allowed = base.saturating_add(WORK_PER_ARCHIVE_BYTE.saturating_mul(spent.bytes));
        if spent.work > allowed {
            return Err(Error::OverLimit {
                what: "decoding work (estimated units of about one multiply-add)",
                value: spent.work,
                limit: allowed,
                raise: Limit::Work,
                note: "",
            });
        }
        let setup_allowed = spent
            .free_setup
            .unwrap_or(0)
            .saturating_add(SETUP_WORK_PER_ARCHIVE_BYTE.saturating_mul(spent.bytes));
        if spent.setup > setup_allowed {
            return Err(Error::OverLimit {
                what: "model set-up work of the blocks (estimated units)",
                value: spent.setup,
                limit: setup_allowed,
                raise: Limit::Work,
                note: "blocks this small for this model are not worth decoding; ",
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_and_setup_rules() {
        let limits = Limits {
            max_output: None,
            max_work: Some(1000),
            ..Limits::default()
        };
        let mut spent = Spent {
            bytes: 10,
            free_setup: Some(500),
            ..Spent::default()
        };
        // Within the base and the per-byte allowance.
        limits.charge(&mut spent, (400, 600)).expect("allowed");
        // Set-up past the free block and the bytes' allowance.
        let mut s = spent.clone();
        let e = limits
            .charge(&mut s, (SETUP_WORK_PER_ARCHIVE_BYTE * 10 + 101, 0))
            .unwrap_err();
        assert!(e.to_string().contains("set-up work"), "{e}");
        // Work past the base and the per-byte allowance.
        let mut s = spent.clone();
        let e = limits
            .charge(&mut s, (0, WORK_PER_ARCHIVE_BYTE * 10 + 1))
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("raise it with Decoder::with_max_work"),
            "{e}"
        );
        // No limit: anything goes.
        let none = Limits {
            max_work: None,
            ..limits
        };
        none.charge(&mut spent, (u64::MAX, u64::MAX))
            .expect("no limit");
    }
}
