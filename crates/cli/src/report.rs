//! What the command prints about archives and runs: model labels, segment
//! listings, ratios, rates and sizes in human units.

use crate::execute::*;
use anyhow::{Result, anyhow};
use std::io::{self, Write};
use std::path::Path;

/// The model and preset that wrote an archive with header `h` ("mix/max",
/// "order2", "neural/paper-pac"), found by building the header each known
/// setting writes for the same block size; "mix (custom)" and the like when
/// none matches (knobs such as --context).
pub(crate) fn model_label(h: &sep::format::Header) -> String {
    let mut candidates: Vec<(String, sep::Model)> = Vec::new();
    for name in ["order2", "store"] {
        if let Some(m) = sep::Model::from_name(name) {
            candidates.push((name.into(), m));
        }
    }
    for p in sep::Preset::ALL {
        candidates.push((format!("mix/{}", p.name()), sep::Model::mix_preset(p)));
        candidates.push((format!("neural/{}", p.name()), sep::Model::preset(p)));
    }
    for (label, model) in candidates {
        let options = sep::Options {
            model,
            block_size: Some(h.block_size),
            seed: h.seed,
            content_length: h.content_length,
            // The block size of a short input is its length, often under
            // the minimum a caller may ask for.
            small_blocks: true,
            ..sep::Options::default()
        };
        if let Ok((c, _)) = options.header()
            && (c.model_id, c.streams, c.context, &c.params)
                == (h.model_id, h.streams, h.context, &h.params)
        {
            return label;
        }
    }
    let family = match h.model_id {
        0 => "store",
        1 => "order2",
        2 => "neural",
        3 => "mix",
        _ => "unknown",
    };
    format!("{family} (custom)")
}

/// `sep -l -v` (issue 17): every block with its type and, for a segmented
/// block, its segments (doc/FORMAT.md section 8).
pub(crate) fn list_segments(input: &Path) -> Result<()> {
    let inp = open_input(input)?;
    let blocks = sep::segment::list_blocks(inp.reader).map_err(|e| anyhow!(e))?;
    let mut o = io::stdout().lock();
    writeln!(o, "  blocks:")?;
    for b in &blocks {
        let kind = match b.block_type {
            sep::format::BlockType::Stored => "stored",
            sep::format::BlockType::Modelled => "modelled",
            sep::format::BlockType::Segmented => "segmented",
            sep::format::BlockType::End => "end",
        };
        writeln!(
            o,
            "    archive {} block {}: {kind}, {} bytes -> {} bytes{}",
            b.archive,
            b.index,
            b.raw_len,
            b.payload_len,
            if b.segments.is_empty() {
                String::new()
            } else {
                format!(", {} segments", b.segments.len())
            }
        )?;
        let mut at = 0u64;
        for s in &b.segments {
            writeln!(
                o,
                "      at {at:>10}: {:<7} {:>10} bytes -> {:>10} to the model + {:>8} reconstruction",
                s.kind.name(),
                s.raw_len,
                s.inner_len,
                s.extra_len
            )?;
            at += u64::from(s.raw_len);
        }
    }
    Ok(())
}

/// `sep -c -v` (issue 17): where the encoder's time went on transforms.
pub(crate) fn transform_time_text(s: &sep::EncodeStats) -> String {
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let looking = ms(s.detect() + s.transforms());
    format!(
        "transforms: detection {:.2} ms, transforms {:.2} ms, coding transformed content {:.2} ms \
         ({} of {} blocks segmented); detection and transforms {:.2}% of {:.2} ms coding",
        ms(s.detect()),
        ms(s.transforms()),
        ms(s.segmented_coding()),
        s.segmented_blocks(),
        s.blocks(),
        100.0 * looking / ms(s.coding()).max(1e-9),
        ms(s.coding()),
    )
}

/// The environment variable naming a file to which a compression appends
/// one line of [`sep::EncodeStats`] (`sep bench` reads it, see
/// `bench/runner.rs`): `detect_s transforms_s segmented_coding_s coding_s
/// blocks segmented_blocks`.
pub(crate) const STATS_FILE_VAR: &str = "SEP_STATS_FILE";

/// Appends `s` to the file `$SEP_STATS_FILE` names, if it is set; a file
/// that cannot be written is a warning (the archive is written already).
pub(crate) fn write_stats_file(s: &sep::EncodeStats) {
    let Some(path) = std::env::var_os(STATS_FILE_VAR) else {
        return;
    };
    let line = format!(
        "{:.9} {:.9} {:.9} {:.9} {} {}\n",
        s.detect().as_secs_f64(),
        s.transforms().as_secs_f64(),
        s.segmented_coding().as_secs_f64(),
        s.coding().as_secs_f64(),
        s.blocks(),
        s.segmented_blocks()
    );
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        eprintln!(
            "sep: warning: {STATS_FILE_VAR}: cannot write {}: {}",
            std::path::Path::new(&path).display(),
            io_message(&e)
        );
    }
}

/// "No such file or directory" rather than "No such file or directory (os error 2)".
pub(crate) fn io_message(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// ", ratio 3.120 (32.05%)"; nothing for empty content, which has no ratio.
pub(crate) fn ratio_text(raw: u64, archive: u64) -> String {
    if raw == 0 || archive == 0 {
        return String::new();
    }
    format!(
        ", ratio {:.3} ({:.2}%)",
        raw as f64 / archive as f64,
        100.0 * archive as f64 / raw as f64
    )
}

/// A speed with a unit that shows its digits: "12.3 MB/s", "45.6 KB/s",
/// "789 B/s" (decimal units, as the byte counts).
pub(crate) fn human_rate(bytes: u64, secs: f64) -> String {
    let r = bytes as f64 / secs.max(1e-9);
    if r >= 1e6 {
        format!("{:.2} MB/s", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.2} KB/s", r / 1e3)
    } else {
        format!("{r:.0} B/s")
    }
}

pub(crate) fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}
