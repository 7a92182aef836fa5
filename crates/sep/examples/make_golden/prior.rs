//! The prior files and the archives coded with them (tests/golden/prior-v1).

#[allow(unused_imports)]
use super::*;

/// The first line of the prior manifests.
const MANIFEST_HEADER: &str = "# file\tprior file (archives) or samples (priors)\tinput\tbytes\txxh3_64 of the input, or the prior id\n";

/// Issue 20: priors (doc/FORMAT.md section 11). Two prior files trained on the
/// first 2000 bytes of `grammar.lsp` (presets fast and default), and archives
/// coded with them; `prior-v1/MANIFEST.tsv` pins each prior's id and each
/// archive's input. Prior files of version 1 must load, and these archives
/// decode, forever.
pub(crate) fn prior_files(files: &mut Files) {
    use sep::Prior;
    let dir = golden_dir().join("inputs");
    let grammar = std::fs::read(dir.join("grammar.lsp")).expect("input");
    let mut manifest = String::from(MANIFEST_HEADER);
    // "fast" is the fast preset of the release that wrote these files (CM
    // revision 0, before revision 3 became `fast`), pinned.
    let fast_r0 = Model::Mix(MixConfig {
        cm: CmConfig {
            orders: 0b0010_1111,
            word: true,
            sparse: false,
            record: true,
            long: 0,
            match_min: 5,
            match2_min: 0,
            table_bits: 22,
            match_bits: 22,
            selectors: 0xF,
            apms: 1,
            image: true,
            revision: 0,
        },
        neural: None,
        serial: None,
    });
    for (name, model) in [
        ("fast", fast_r0),
        // The default of the release that wrote these files (CM revision
        // 2), pinned.
        ("default", super::default_r(2)),
    ] {
        prior_and_archives(files, &mut manifest, name, &model, &grammar);
    }
    // A built-in prior (crates/sep/priors): decoded with no prior given.
    let prior = Prior::builtin(sep::Builtin::Text);
    let data = std::fs::read(dir.join("grammar.lsp")).expect("input");
    let archive = coded_with(&prior, &data);
    manifest += &format!(
        "builtin-text.grammar.sep\tbuiltin:text\tgrammar.lsp\t{}\t{:016x}\n",
        data.len(),
        xxhash_rust::xxh3::xxh3_64(&data)
    );
    files.insert("prior-v1/builtin-text.grammar.sep".into(), archive);
    files.insert("prior-v1/MANIFEST.tsv".into(), manifest.into_bytes());
    fast_r3_files(files, &grammar);
}

/// Priors of CM revision 3 (the `fast` preset's `FastCm`, 2026-12): a prior
/// trained on the first 2000 bytes of `grammar.lsp` with the fast preset of
/// CM revision 3 (pinned), and archives coded with it, in their own
/// manifest (`prior-v1/MANIFEST-r3.tsv`, checked by
/// crates/sep/tests/prior_fast.rs), so the files above stay as they are.
fn fast_r3_files(files: &mut Files, grammar: &[u8]) {
    let mut manifest = String::from(MANIFEST_HEADER);
    prior_and_archives(files, &mut manifest, "fast-r3", &super::fast_r3(), grammar);
    files.insert("prior-v1/MANIFEST-r3.tsv".into(), manifest.into_bytes());
}

/// `data` coded with `prior` (its model, the prior).
fn coded_with(prior: &sep::Prior, data: &[u8]) -> Vec<u8> {
    let options = Options {
        model: prior.model(),
        prior: Some(prior.clone()),
        ..v1_options()
    };
    sep::compress(data, &options).expect("compress")
}

/// The prior `NAME.grammar-head.sepp` that `model` learns from the first
/// 2000 bytes of `grammar`, and `NAME.grammar.sep` and `NAME.obj1.sep`
/// coded with it, each with its manifest row.
fn prior_and_archives(
    files: &mut Files,
    manifest: &mut String,
    name: &str,
    model: &Model,
    grammar: &[u8],
) {
    let dir = golden_dir().join("inputs");
    let bytes = sep::Prior::train(model, &[&grammar[..2000]]).expect("train");
    let prior = sep::Prior::from_bytes(&bytes).expect("load");
    let prior_name = format!("{name}.grammar-head.sepp");
    *manifest += &format!(
        "{prior_name}\tgrammar.lsp[..2000]\t-\t{}\t{}\n",
        bytes.len(),
        prior.id_hex()
    );
    files.insert(format!("prior-v1/{prior_name}"), bytes);
    for input in ["grammar.lsp", "obj1.head4096"] {
        let data = std::fs::read(dir.join(input)).expect("input");
        let archive = coded_with(&prior, &data);
        let short = input.split('.').next().expect("name");
        let archive_name = format!("{name}.{short}.sep");
        *manifest += &format!(
            "{archive_name}\t{prior_name}\t{input}\t{}\t{:016x}\n",
            data.len(),
            xxhash_rust::xxh3::xxh3_64(&data)
        );
        files.insert(format!("prior-v1/{archive_name}"), archive);
    }
}
