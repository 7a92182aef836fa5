//! One measured result ([`Row`]: a file and a compressor) and the totals of a
//! compressor over a set ([`Row::total`]).
//!
//! Unknown values (a run that failed) are `NaN` or `None`; they propagate into
//! totals, so a compressor that failed anywhere has no total speed or size.

/// The name of total rows in the `file` column.
pub const TOTAL: &str = "TOTAL";

/// The cost of one direction (compress or decompress), best of the repeats.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Wall-clock seconds.
    pub wall_s: f64,
    /// CPU seconds, user + system.
    pub cpu_s: f64,
    /// Peak resident set size, KiB.
    pub peak_rss_kb: Option<u64>,
}

impl Sample {
    /// A direction that was not measured.
    pub const UNKNOWN: Sample = Sample {
        wall_s: f64::NAN,
        cpu_s: f64::NAN,
        peak_rss_kb: None,
    };
}

/// Where sep's compression time went on transforms (issue 17), from the
/// [`sep::EncodeStats`] line its compression wrote (`SEP_STATS_FILE`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransformTime {
    /// Seconds in the segment detector.
    pub detect_s: f64,
    /// Seconds in the forward transforms and their verifying inverses.
    pub transforms_s: f64,
    /// Seconds the model spent coding transformed content.
    pub segmented_coding_s: f64,
    /// Seconds coding blocks, all of the above included.
    pub coding_s: f64,
    /// Blocks coded.
    pub blocks: u64,
    /// Blocks written segmented.
    pub segmented_blocks: u64,
}

impl TransformTime {
    /// Parses a line `detect_s transforms_s segmented_coding_s coding_s
    /// blocks segmented_blocks`.
    pub fn parse(line: &str) -> Option<TransformTime> {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 6 {
            return None;
        }
        Some(TransformTime {
            detect_s: f[0].parse().ok()?,
            transforms_s: f[1].parse().ok()?,
            segmented_coding_s: f[2].parse().ok()?,
            coding_s: f[3].parse().ok()?,
            blocks: f[4].parse().ok()?,
            segmented_blocks: f[5].parse().ok()?,
        })
    }

    /// The least of each time and the counts of `self` (best of repeats).
    pub fn best(self, o: TransformTime) -> TransformTime {
        TransformTime {
            detect_s: self.detect_s.min(o.detect_s),
            transforms_s: self.transforms_s.min(o.transforms_s),
            segmented_coding_s: self.segmented_coding_s.min(o.segmented_coding_s),
            coding_s: self.coding_s.min(o.coding_s),
            ..self
        }
    }

    /// The sum of two files' times and counts.
    fn sum(self, o: TransformTime) -> TransformTime {
        TransformTime {
            detect_s: self.detect_s + o.detect_s,
            transforms_s: self.transforms_s + o.transforms_s,
            segmented_coding_s: self.segmented_coding_s + o.segmented_coding_s,
            coding_s: self.coding_s + o.coding_s,
            blocks: self.blocks + o.blocks,
            segmented_blocks: self.segmented_blocks + o.segmented_blocks,
        }
    }
}

/// One file compressed and restored by one compressor.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The file's name, or [`TOTAL`].
    pub file: String,
    /// Original bytes.
    pub bytes: u64,
    /// `sep` or the peer's name.
    pub compressor: String,
    /// The sep setting or the peer's flags.
    pub setting: String,
    /// The table and plot label (`sep order2`, `xz`).
    pub label: String,
    /// Compressed bytes.
    pub compressed_bytes: Option<u64>,
    /// Compression cost.
    pub compress: Sample,
    /// Decompression cost.
    pub decompress: Sample,
    /// The restored bytes equal the original.
    pub verified: bool,
    /// sep only: its time on detection and transforms.
    pub transform_time: Option<TransformTime>,
}

impl Row {
    /// Original over compressed size.
    pub fn ratio(&self) -> f64 {
        match self.compressed_bytes {
            Some(c) if c > 0 => self.bytes as f64 / c as f64,
            _ => f64::NAN,
        }
    }

    /// Compression speed, MB/s of original bytes, wall clock.
    pub fn compress_mbps(&self) -> f64 {
        mbps(self.bytes, self.compress.wall_s)
    }

    /// Decompression speed, MB/s of original bytes, wall clock.
    pub fn decompress_mbps(&self) -> f64 {
        mbps(self.bytes, self.decompress.wall_s)
    }

    /// The total of one compressor's rows: sums of sizes and times, the
    /// largest peak memory, verified when every row is.
    pub fn total(rows: &[&Row]) -> Row {
        let first = rows.first().expect("a total of at least one row");
        let sum = |f: &dyn Fn(&Row) -> f64| rows.iter().map(|r| f(r)).sum::<f64>();
        let max = |f: &dyn Fn(&Row) -> Option<u64>| {
            rows.iter()
                .map(|r| f(r))
                .collect::<Option<Vec<u64>>>()
                .map(|v| v.into_iter().max().unwrap_or(0))
        };
        Row {
            file: TOTAL.into(),
            bytes: rows.iter().map(|r| r.bytes).sum(),
            compressor: first.compressor.clone(),
            setting: first.setting.clone(),
            label: first.label.clone(),
            compressed_bytes: rows.iter().map(|r| r.compressed_bytes).sum(),
            compress: Sample {
                wall_s: sum(&|r| r.compress.wall_s),
                cpu_s: sum(&|r| r.compress.cpu_s),
                peak_rss_kb: max(&|r| r.compress.peak_rss_kb),
            },
            decompress: Sample {
                wall_s: sum(&|r| r.decompress.wall_s),
                cpu_s: sum(&|r| r.decompress.cpu_s),
                peak_rss_kb: max(&|r| r.decompress.peak_rss_kb),
            },
            verified: rows.iter().all(|r| r.verified),
            transform_time: rows
                .iter()
                .map(|r| r.transform_time)
                .reduce(|a, b| Some(a?.sum(b?)))
                .flatten(),
        }
    }
}

/// Megabytes (10^6 bytes) per second; `NaN` when the time is unknown.
pub fn mbps(bytes: u64, secs: f64) -> f64 {
    if secs.is_nan() {
        f64::NAN
    } else {
        bytes as f64 / 1e6 / secs.max(1e-6)
    }
}

/// The totals of each compressor, in the order of first appearance.
pub fn totals(rows: &[Row]) -> Vec<Row> {
    let mut labels: Vec<&str> = Vec::new();
    for r in rows {
        if !labels.contains(&r.label.as_str()) {
            labels.push(&r.label);
        }
    }
    labels
        .iter()
        .map(|l| Row::total(&rows.iter().filter(|r| r.label == *l).collect::<Vec<_>>()))
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn row(file: &str, label: &str, bytes: u64, packed: Option<u64>) -> Row {
        Row {
            file: file.into(),
            bytes,
            compressor: label.into(),
            setting: "-1".into(),
            label: label.into(),
            compressed_bytes: packed,
            compress: Sample {
                wall_s: 1.0,
                cpu_s: 0.5,
                peak_rss_kb: Some(100),
            },
            decompress: Sample {
                wall_s: 2.0,
                cpu_s: 1.5,
                peak_rss_kb: Some(50),
            },
            verified: packed.is_some(),
            transform_time: None,
        }
    }

    #[test]
    fn totals_sum_sizes_and_times() {
        let rows = [
            row("a", "x", 1_000_000, Some(500_000)),
            row("b", "x", 3_000_000, Some(500_000)),
            row("a", "y", 1_000_000, None),
        ];
        let t = totals(&rows);
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].file, TOTAL);
        assert_eq!(t[0].bytes, 4_000_000);
        assert_eq!(t[0].compressed_bytes, Some(1_000_000));
        assert_eq!(t[0].ratio(), 4.0);
        assert_eq!(t[0].compress_mbps(), 2.0);
        assert_eq!(t[0].decompress_mbps(), 1.0);
        assert_eq!(t[0].compress.peak_rss_kb, Some(100));
        assert!(t[0].verified);
        assert_eq!(t[1].compressed_bytes, None);
        assert!(t[1].ratio().is_nan());
        assert!(!t[1].verified);
    }
}
