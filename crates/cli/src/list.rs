//! `sep -l`: one line per archive (a header line first), or the detailed
//! view with `-v`, read without decoding.

use crate::execute::*;
use crate::report::*;
use anyhow::{Result, anyhow};
use std::io::{self, Write};
use std::path::Path;

impl Ctx<'_> {
    /// The column titles of the one-line `-l` view.
    pub(crate) fn list_header(&self) -> Result<()> {
        writeln!(
            io::stdout().lock(),
            "{:>6} {:>14} {:>14} {:>8}  {:<16} Filename",
            "Blocks",
            "Compressed",
            "Uncompressed",
            "Ratio",
            "Model"
        )?;
        Ok(())
    }

    pub(crate) fn list(&self, input: &Path) -> Result<()> {
        let inp = open_input(input)?;
        let infos = sep::inspect(inp.reader).map_err(|e| anyhow!(e))?;
        let mut o = io::stdout().lock();
        if self.verbosity() < 2 {
            for info in &infos {
                let ratio = if info.content_length == 0 {
                    "-".to_string()
                } else {
                    format!(
                        "{:.3}",
                        info.content_length as f64 / info.archive_bytes.max(1) as f64
                    )
                };
                writeln!(
                    o,
                    "{:>6} {:>14} {:>14} {:>8}  {:<16} {}",
                    info.blocks,
                    info.archive_bytes,
                    info.content_length,
                    ratio,
                    model_label(&info.header)
                        + &info
                            .header
                            .prior_id
                            .map_or(String::new(), |id| format!(" prior {}", prior_label(&id))),
                    display_name(input)
                )?;
            }
            return Ok(());
        }
        for (i, info) in infos.iter().enumerate() {
            let h = &info.header;
            let name = display_name(input);
            if infos.len() > 1 {
                writeln!(o, "{name} (archive {} of {})", i + 1, infos.len())?;
            } else {
                writeln!(o, "{name}")?;
            }
            let ratio = info.content_length as f64 / info.archive_bytes.max(1) as f64;
            writeln!(o, "  format version  {}", h.version)?;
            writeln!(
                o,
                "  model           {} (model_id {})",
                info.model.describe(),
                h.model_id
            )?;
            writeln!(
                o,
                "  content         {} bytes{}",
                info.content_length,
                if h.content_length.is_some() {
                    ""
                } else {
                    " (length not in header: streamed)"
                }
            )?;
            writeln!(
                o,
                "  archive         {} bytes, ratio {:.3}",
                info.archive_bytes, ratio
            )?;
            writeln!(
                o,
                "  blocks          {} ({} stored), block size {}",
                info.blocks, info.stored_blocks, h.block_size
            )?;
            writeln!(o, "  streams (B)     {}", h.streams)?;
            writeln!(o, "  context (L)     {}", h.context)?;
            writeln!(o, "  seed            {}", h.seed)?;
            if let Some(id) = &h.prior_id {
                writeln!(o, "  prior           {}", prior_label(id))?;
            }
            let (one, all) = (
                PROGRAM_MEMORY + info.decoder_memory(1),
                PROGRAM_MEMORY + info.decoder_memory(self.threads),
            );
            // Without the prior's model and samples (the lister has no prior).
            let plus = if h.prior_id.is_some() {
                ", plus the prior's"
            } else {
                ""
            };
            if all == one {
                writeln!(o, "  memory          {} to decode{plus}", human_bytes(one))?;
            } else {
                writeln!(
                    o,
                    "  memory          {} to decode with -T1, {} with -T{}{plus}",
                    human_bytes(one),
                    human_bytes(all),
                    self.threads
                )?;
            }
            writeln!(o, "  checksum        xxh3-64 {:016x}", info.content_check)?;
            if info.seek_table_bytes > 0 {
                writeln!(o, "  seek table      {} bytes", info.seek_table_bytes)?; // issue 22
            }
        }
        drop(o);
        // Issue 17: with -v, each block's segments and transforms.
        if self.args.verbose > 0 && !is_stdin(input) {
            list_segments(input)?;
        }
        Ok(())
    }
}

/// A prior's id as `sep -l` shows it: `builtin:NAME` for a built-in prior
/// (issue 20), else its 32 hex digits.
fn prior_label(id: &[u8; 16]) -> String {
    match sep::Builtin::from_id(id) {
        Some(b) => format!("builtin:{} ({})", b.name(), sep::prior::id_hex(id)),
        None => sep::prior::id_hex(id),
    }
}
