//! [`EncodeStats`]: where an [`Encoder`](crate::Encoder)'s time went, for
//! `sep -c -v` and `sep bench` (issue 17: the cost of looking for transforms).
//!
//! The counters are wall-clock times summed over the worker threads (with
//! `-T1`, CPU time of the one coding thread). They are measurements, never
//! inputs: nothing in an archive depends on them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
struct Counters {
    blocks: AtomicU64,
    segmented_blocks: AtomicU64,
    detect_ns: AtomicU64,
    transform_ns: AtomicU64,
    segmented_coding_ns: AtomicU64,
    block_ns: AtomicU64,
}

/// A handle on an encoder's counters, read from any thread, during or after
/// the work: take it with [`Encoder::stats`](crate::Encoder::stats) before
/// `finish`, read it after.
///
/// ```
/// use std::io::Write;
/// let mut enc = sep::Encoder::new(Vec::new(), &sep::Options::default())?;
/// let stats = enc.stats();
/// enc.write_all(b"hello hello hello")?;
/// enc.finish()?;
/// assert_eq!(stats.blocks(), 1);
/// assert_eq!(stats.segmented_blocks(), 0);
/// assert!(stats.detect() <= stats.coding());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct EncodeStats(Arc<Counters>);

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

fn add(counter: &AtomicU64, since: Instant) {
    counter.fetch_add(nanos(since.elapsed()), Ordering::Relaxed);
}

fn read(counter: &AtomicU64) -> Duration {
    Duration::from_nanos(counter.load(Ordering::Relaxed))
}

impl EncodeStats {
    /// Blocks coded so far.
    pub fn blocks(&self) -> u64 {
        self.0.blocks.load(Ordering::Relaxed)
    }

    /// Blocks written as segmented blocks (a transform applied and paid).
    pub fn segmented_blocks(&self) -> u64 {
        self.0.segmented_blocks.load(Ordering::Relaxed)
    }

    /// Time in the segment detector (`sep_transform::detect`).
    pub fn detect(&self) -> Duration {
        read(&self.0.detect_ns)
    }

    /// Time in the forward transforms and the inverses that verify them.
    pub fn transforms(&self) -> Duration {
        read(&self.0.transform_ns)
    }

    /// Time the model spent coding the transformed content of blocks in
    /// which a transform applied (whether the segmented form was then kept
    /// or not).
    pub fn segmented_coding(&self) -> Duration {
        read(&self.0.segmented_coding_ns)
    }

    /// Time spent coding blocks, all of the above included.
    pub fn coding(&self) -> Duration {
        read(&self.0.block_ns)
    }

    pub(crate) fn time_detect(&self, since: Instant) {
        add(&self.0.detect_ns, since);
    }

    pub(crate) fn time_transforms(&self, since: Instant) {
        add(&self.0.transform_ns, since);
    }

    pub(crate) fn time_segmented_coding(&self, since: Instant) {
        add(&self.0.segmented_coding_ns, since);
    }

    /// One block done, started at `since`; `segmented`: written as such.
    pub(crate) fn block_done(&self, since: Instant, segmented: bool) {
        add(&self.0.block_ns, since);
        self.0.blocks.fetch_add(1, Ordering::Relaxed);
        if segmented {
            self.0.segmented_blocks.fetch_add(1, Ordering::Relaxed);
        }
    }
}
