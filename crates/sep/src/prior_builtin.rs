//! Built-in priors (issue 20 item 3): small priors compiled into the
//! library for the common kinds of small files, found by name
//! (`builtin:text`) or by the id an archive's header records, and chosen by
//! themselves for small inputs ([`pick`]).
//!
//! The files are `crates/sep/priors/*.sepp`, rebuilt bit for bit by
//! `crates/sep/priors/build.sh` from pinned Debian packages and corpus files;
//! `crates/sep/priors/MANIFEST.md` lists their samples, licences and ids.
//! Each is loaded at most once per process, when first used.

use super::Prior;
use crate::codec::Model;
use crate::encoder::{Encoder, Options};
use crate::error::{Error, Result};
use crate::format::Header;
use crate::stats::EncodeStats;
use std::io::Write;
use std::sync::OnceLock;

/// The inputs [`pick`] tries a built-in prior on: at most 64 KiB. Larger
/// inputs learn enough from themselves that a prior pays little.
pub const AUTO_MAX_LEN: usize = 64 << 10;

/// The context table of every built-in prior: 2^20 bytes (build.sh).
pub const TABLE_BITS: u8 = 20;
/// The match models' tables of every built-in prior: 2^16 entries (build.sh).
pub const MATCH_BITS: u8 = 16;

/// A built-in prior's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// Text and markup: man pages (man and mdoc macros), HTML, English prose.
    Text,
    /// Source code: C headers.
    Code,
    /// Records: JSON, tab-separated tables, URL and log lines.
    Records,
}

/// The files, in [`Builtin::ALL`] order.
static FILES: [&[u8]; 3] = [
    include_bytes!("../priors/text.sepp"),
    include_bytes!("../priors/code.sepp"),
    include_bytes!("../priors/records.sepp"),
];

/// Built-in priors replaced by newer ones of their kind, kept so that the
/// archives coded with them still decode: found by id only, never picked
/// (crates/sep/priors/legacy, MANIFEST.md).
static LEGACY: [&[u8]; 1] = [
    // records until 2026-12-02 (before the MDN JSON samples).
    include_bytes!("../priors/legacy/records-0f8601c3.sepp"),
];

/// The ids of [`LEGACY`], read once.
fn legacy_ids() -> &'static [[u8; 16]; 1] {
    static IDS: OnceLock<[[u8; 16]; 1]> = OnceLock::new();
    IDS.get_or_init(|| LEGACY.map(|f| super::declared_id(f).expect("a shipped prior has an id")))
}

impl Builtin {
    /// Every kind.
    pub const ALL: [Builtin; 3] = [Builtin::Text, Builtin::Code, Builtin::Records];

    fn index(self) -> usize {
        match self {
            Builtin::Text => 0,
            Builtin::Code => 1,
            Builtin::Records => 2,
        }
    }

    /// Its name: `text`, `code` or `records`.
    pub fn name(self) -> &'static str {
        ["text", "code", "records"][self.index()]
    }

    /// The kind named `name` or `builtin:NAME`.
    pub fn from_name(name: &str) -> Option<Builtin> {
        let n = name.strip_prefix("builtin:").unwrap_or(name);
        Builtin::ALL.into_iter().find(|b| b.name() == n)
    }

    /// The prior file's bytes, as shipped.
    pub fn bytes(self) -> &'static [u8] {
        FILES[self.index()]
    }

    /// The prior's id (the XXH3-128 of its version-1 file: a packed file
    /// declares it), read without loading the prior, once.
    pub fn id(self) -> [u8; 16] {
        static IDS: OnceLock<[[u8; 16]; 3]> = OnceLock::new();
        IDS.get_or_init(|| FILES.map(|f| super::declared_id(f).expect("a shipped prior has an id")))
            [self.index()]
    }

    /// The model the prior was trained for, read from its header without
    /// loading it, once (a caller whose model is of another family skips
    /// the load: restoring a prior's model takes milliseconds).
    pub fn model(self) -> Model {
        static MODELS: OnceLock<[Model; 3]> = OnceLock::new();
        MODELS.get_or_init(|| {
            FILES.map(|f| super::declared_model(f).expect("a shipped prior has a model"))
        })[self.index()]
        .clone()
    }

    /// The built-in prior whose id is `id`.
    pub fn from_id(id: &[u8; 16]) -> Option<Builtin> {
        Builtin::ALL.into_iter().find(|b| b.id() == *id)
    }

    /// The kind a cheap byte-statistics test sees in `data`: records when
    /// lines are short and full of JSON or table punctuation or URLs, code
    /// when C punctuation is frequent, text otherwise.
    pub fn guess(data: &[u8]) -> Builtin {
        let n = data.len().max(1);
        let count = |set: &[u8]| data.iter().filter(|b| set.contains(b)).count();
        let lines = count(b"\n").max(1);
        let json = count(b"{}[]\":,\t");
        let code = count(b";{}()*#=");
        let urls = data.windows(4).filter(|w| w == b"http").count();
        if json * 100 > n * 12 || urls * 2 > lines || (n / lines < 60 && count(b"\t") > lines) {
            Builtin::Records
        } else if code * 100 > n * 4 {
            Builtin::Code
        } else {
            Builtin::Text
        }
    }
}

impl Prior {
    /// The built-in prior of `kind`, loaded on first use and shared.
    pub fn builtin(kind: Builtin) -> Prior {
        static LOADED: [OnceLock<Prior>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        LOADED[kind.index()]
            .get_or_init(|| {
                Prior::from_static(kind.bytes()).expect("a shipped prior loads (tests check it)")
            })
            .clone()
    }

    /// The built-in prior with id `id`, if there is one, current or
    /// replaced (the decoder finds the prior an archive names this way, with
    /// no option).
    pub fn builtin_by_id(id: &[u8; 16]) -> Option<Prior> {
        if let Some(b) = Builtin::from_id(id) {
            return Some(Prior::builtin(b));
        }
        static LOADED: [OnceLock<Prior>; 1] = [OnceLock::new()];
        let i = legacy_ids().iter().position(|l| l == id)?;
        Some(
            LOADED[i]
                .get_or_init(|| {
                    Prior::from_static(LEGACY[i]).expect("a shipped prior loads (tests check it)")
                })
                .clone(),
        )
    }

    /// Which built-in prior this is, if it is one.
    pub fn builtin_kind(&self) -> Option<Builtin> {
        Builtin::from_id(&self.id())
    }
}

/// An archive [`choose`] made: the smaller of the input coded with the
/// built-in prior of its kind and without, with what a caller reports about
/// it (sep's CLI writes it as it is, instead of coding the input again).
pub struct Chosen {
    /// The built-in prior it was coded with; `None`: coded without one.
    pub prior: Option<Prior>,
    /// The archive.
    pub archive: Vec<u8>,
    /// Its header (the model, block size and content length it names).
    pub header: Header,
    /// The encoder's statistics of the coding that made it.
    pub stats: EncodeStats,
}

/// Codes `data` as one archive under `options`, keeping its header and
/// statistics.
fn code(data: &[u8], options: &Options) -> Result<Chosen> {
    let options = Options {
        content_length: Some(data.len() as u64),
        ..options.clone()
    };
    let mut enc = Encoder::new(Vec::with_capacity(data.len() / 2 + 64), &options)?;
    let (header, stats) = (enc.header().clone(), enc.stats());
    enc.write_all(data).map_err(Error::from_io)?;
    Ok(Chosen {
        prior: options.prior.clone(),
        archive: enc.finish()?,
        header,
        stats,
    })
}

/// The archive of `data` under `options` that sep writes: for inputs of 1
/// to [`AUTO_MAX_LEN`] bytes whose options name no prior and whose model is
/// the one the built-in priors were trained for (the `default` preset's
/// context mixing at any CM revision; the prior pins its own), the input is
/// coded with the built-in prior of the kind [`Builtin::guess`] sees and
/// without, and the smaller archive is returned (the one without a prior
/// when they tie); otherwise, the archive without a prior. Each is coded
/// once: the caller writes the archive returned.
pub fn choose(data: &[u8], options: &Options) -> Result<Chosen> {
    let without = code(data, options)?;
    let eligible = !data.is_empty() && data.len() <= AUTO_MAX_LEN && options.prior.is_none();
    if !eligible {
        return Ok(without);
    }
    let kind = Builtin::guess(data);
    // Another family (`fast`, `max`...) never takes a built-in prior: the
    // header says so without loading the prior (16 ms for a 4 KB input).
    if !same_family(&options.model, &kind.model()) {
        return Ok(without);
    }
    let prior = Prior::builtin(kind);
    let with = Options {
        model: prior.model(),
        prior: Some(prior.clone()),
        ..options.clone()
    };
    // A prior that cannot code the input (a memory limit, say) is not used.
    match code(data, &with) {
        Ok(w) if w.archive.len() < without.archive.len() => Ok(w),
        _ => Ok(without),
    }
}

/// The built-in prior worth coding `data` with under `options`, if any, and
/// the archive it made: [`choose`] when it picks a prior.
pub fn pick(data: &[u8], options: &Options) -> Option<(Prior, Vec<u8>)> {
    let c = choose(data, options).ok()?;
    c.prior.map(|p| (p, c.archive))
}

/// Whether an archive coded with `options.model` may instead use a built-in
/// prior's model: both the `default` preset's context mixing, whatever its
/// CM revision (the prior pins its own).
fn same_family(model: &Model, prior: &Model) -> bool {
    match (model, prior) {
        (Model::Mix(a), Model::Mix(b)) => {
            let mut a = a.clone();
            a.cm.revision = b.cm.revision;
            a == *b
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The id MANIFEST.md records for `name` (its row `| name | id | ...`).
    fn manifest_id(name: &str) -> String {
        let manifest = include_str!("../priors/MANIFEST.md");
        let row = manifest
            .lines()
            .find(|l| l.starts_with(&format!("| {name} |")))
            .unwrap_or_else(|| panic!("MANIFEST.md has no row for {name}"));
        row.split('|')
            .nth(2)
            .unwrap()
            .trim()
            .trim_matches('`')
            .to_string()
    }

    #[test]
    fn every_shipped_prior_loads_and_has_its_manifest_id() {
        for b in Builtin::ALL {
            let p = Prior::builtin(b);
            assert_eq!(p.id_hex(), manifest_id(b.name()), "{}", b.name());
            assert_eq!(p.id(), b.id());
            assert_eq!(Builtin::from_id(&p.id()), Some(b));
            assert_eq!(p.builtin_kind(), Some(b));
            assert_eq!(
                Builtin::from_name(&format!("builtin:{}", b.name())),
                Some(b)
            );
            // Plain (fast to load: no inflating), at most 5 MiB, a
            // 2^20-byte table, CM revision 2.
            assert_eq!(b.bytes()[4], super::super::PRIOR_VERSION);
            assert!(b.bytes().len() <= 5 << 20, "{}", b.bytes().len());
            assert_eq!(p.table_bytes(), 1 << TABLE_BITS);
            // `choose` decides on the model read from the header alone.
            assert_eq!(b.model(), p.model(), "{}", b.name());
            match p.model() {
                Model::Mix(m) => assert_eq!(m.cm.revision, 2),
                m => panic!("{m:?}"),
            }
        }
        assert_eq!(Builtin::from_name("builtin:nope"), None);
        assert!(Prior::builtin_by_id(&[0; 16]).is_none());
    }

    /// Training again on the samples a shipped prior holds (its history, one
    /// after the other as build.sh gave them) gives the same file; packed,
    /// the same id.
    #[test]
    fn every_shipped_prior_retrains_bit_for_bit() {
        for b in Builtin::ALL {
            let p = Prior::builtin(b);
            let again = Prior::train_sized(
                &p.model(),
                &[p.history()],
                Some(TABLE_BITS),
                Some(MATCH_BITS),
            )
            .unwrap();
            let packed = Prior::pack(&again).unwrap();
            assert_eq!(super::super::declared_id(&packed), Some(b.id()));
            assert!(
                again == b.bytes(),
                "{} does not retrain to itself",
                b.name()
            );
        }
    }

    /// A replaced built-in prior still decodes the archives coded with it:
    /// the decoder finds it by the id in the header, with no option; it is
    /// never a current kind, and its id is the one MANIFEST.md lists.
    #[test]
    fn replaced_built_in_priors_still_decode_their_archives() {
        assert_eq!(LEGACY[0][4], super::super::PRIOR_VERSION_PACKED);
        let old = Prior::from_bytes(LEGACY[0]).unwrap();
        assert_eq!(
            old.id_hex(),
            manifest_id("records (until 2026-12-02), packed")
        );
        assert_eq!(old.builtin_kind(), None);
        assert_ne!(old.id(), Builtin::Records.id());
        assert_eq!(Prior::builtin_by_id(&old.id()), Some(old.clone()));
        let data = b"{\"id\": 1, \"name\": \"a\", \"tags\": [\"x\", \"y\"]},\n".repeat(30);
        let archive = crate::compress(
            &data,
            &Options {
                model: old.model(),
                prior: Some(old.clone()),
                ..Options::default()
            },
        )
        .unwrap();
        assert_eq!(
            crate::read_header(&mut &archive[..]).unwrap().prior_id,
            Some(old.id())
        );
        assert_eq!(crate::decompress(&archive).unwrap(), data);
    }

    #[test]
    fn the_guess_sees_each_kind() {
        let json = b"{\"id\": 1, \"name\": \"a\", \"tags\": [\"x\", \"y\"]},\n".repeat(40);
        let tsv = b"AD\t+4230+00131\tEurope/Andorra\n".repeat(40);
        let urls = b"http://example.com/a/b?c=1\n".repeat(40);
        let c = b"static int f(int *p) { return p[0] + (p[1] * 2); }\n#include <x.h>\n".repeat(20);
        let text = b"The quick brown fox jumps over the lazy dog, and then it rests.\n".repeat(20);
        assert_eq!(Builtin::guess(&json), Builtin::Records);
        assert_eq!(Builtin::guess(&tsv), Builtin::Records);
        assert_eq!(Builtin::guess(&urls), Builtin::Records);
        assert_eq!(Builtin::guess(&c), Builtin::Code);
        assert_eq!(Builtin::guess(&text), Builtin::Text);
    }

    /// `choose` returns the smaller archive with its header and statistics:
    /// the text prior's on a man page, the plain one on noise and on inputs
    /// it does not try a prior on; each is what `compress` writes.
    #[test]
    fn choose_returns_the_smaller_archive_it_coded() {
        let text = include_bytes!("../../../tests/corpus/files/cantrbry.xargs.1");
        let opts = Options::default();
        let c = choose(text, &opts).unwrap();
        let p = c.prior.clone().expect("the text prior pays on a man page");
        assert_eq!(p.builtin_kind(), Some(Builtin::Text));
        assert_eq!(c.header.prior_id, Some(p.id()));
        assert_eq!(c.stats.blocks(), 1);
        let forced = Options {
            model: p.model(),
            prior: Some(p),
            ..opts.clone()
        };
        assert_eq!(c.archive, crate::compress(text, &forced).unwrap());
        let plain = crate::compress(text, &opts).unwrap();
        assert!(c.archive.len() < plain.len());
        // Too large for a prior: the plain archive.
        let big = text.repeat(AUTO_MAX_LEN / text.len() + 1);
        let c = choose(&big, &opts).unwrap();
        assert!(c.prior.is_none());
        assert_eq!(c.header.prior_id, None);
        assert_eq!(c.archive, crate::compress(&big, &opts).unwrap());
    }

    #[test]
    fn pick_takes_a_prior_only_when_it_pays_and_round_trips() {
        let text = include_bytes!("../../../tests/corpus/files/cantrbry.xargs.1");
        let opts = Options::default();
        let (prior, archive) = pick(text, &opts).expect("the text prior pays on a man page");
        assert_eq!(prior.builtin_kind(), Some(Builtin::Text));
        let plain = crate::compress(text, &opts).unwrap();
        assert!(
            archive.len() < plain.len(),
            "{} vs {}",
            archive.len(),
            plain.len()
        );
        // The decoder finds the built-in prior by the id in the header.
        assert_eq!(crate::decompress(&archive).unwrap(), text);
        // Not for large inputs, other presets or a prior already given.
        assert!(pick(&vec![b'a'; AUTO_MAX_LEN + 1], &opts).is_none());
        let max = Options {
            model: Model::mix_preset(crate::Preset::Max),
            ..Options::default()
        };
        assert!(pick(text, &max).is_none());
        let given = Options {
            prior: Some(prior.clone()),
            ..Options::default()
        };
        assert!(pick(text, &given).is_none());
        // Random bytes: no prior pays.
        let mut x = 1u32;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        assert!(pick(&noise, &opts).is_none());
    }
}
