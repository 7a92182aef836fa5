//! Must-fail seek tables (issue 22, doc/FORMAT.md section 12).

use super::*;

/// Issue 22: damaged seek tables (doc/FORMAT.md section 12) after `store`, the
/// store archive of `content` (3 blocks: the table is 4 + 24 + 16 bytes).
#[allow(clippy::type_complexity)]
pub(crate) fn seek_table_cases(
    content: &[u8],
    store: &[u8],
) -> Vec<(
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    Vec<u8>,
)> {
    let store = store.to_vec();
    let table = |entries: &[sep::format::SeekEntry]| sep::format::write_seek_table(entries);
    let entries = sep::format::parse_seek_table(
        &sep::compress(
            content,
            &Options {
                model: Model::Store,
                block_size: Some(100),
                small_blocks: true,
                seek_table: true,
                ..v1_options()
            },
        )
        .expect("store archive")[store.len()..],
        100,
        1,
    )
    .expect("a table");
    let good = table(&entries);
    let mut lying = entries.clone();
    lying[0].block_len += 1;
    lying[1].block_len -= 1;
    let flip = |at: usize| {
        let mut t = good.clone();
        t[at] ^= 1;
        [store.clone(), t].concat()
    };
    vec![
        (
            "seek-table-check.sep",
            "SeekTable",
            "seek table: table_check mismatch",
            "a bit flipped in an entry of the seek table",
            flip(5),
        ),
        (
            "seek-table-entries.sep",
            "SeekTable",
            "seek table: entries do not match",
            "entries that lie about block_len (table_check recomputed)",
            [store.clone(), table(&lying)].concat(),
        ),
        (
            "seek-table-count.sep",
            "SeekTable",
            "seek table: footer_magic is wrong",
            "a seek table with one entry more than the archive has blocks",
            [
                store.clone(),
                table(&[&entries[..], &entries[..1]].concat()),
            ]
            .concat(),
        ),
        (
            "seek-table-footer.sep",
            "SeekTable",
            "seek table: footer_magic is wrong",
            "a bit flipped in footer_magic",
            flip(good.len() - 1),
        ),
        (
            "seek-table-truncated.sep",
            "Truncated",
            "seek table",
            "a seek table cut short in its footer",
            [store.clone(), good[..good.len() - 3].to_vec()].concat(),
        ),
    ]
}
