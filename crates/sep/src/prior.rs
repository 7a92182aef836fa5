//! Priors (issue 20, doc/FORMAT.md section 11): the state of a mix model
//! after it has learned a set of samples, so that small files compress as
//! if they continued the samples.
//!
//! A prior file holds the model parameters it was trained for, the table
//! sizes it fixes, the samples (the history the match models and the
//! record and text families point into) and a snapshot of everything the
//! model learned ([`sep_cm::Cm::snapshot`]). Its id is the XXH3-128 of the
//! whole file; an archive coded with a prior names that id in its header.
//!
//! [`Prior`] is cheap to clone and to share between threads (an [`Arc`]):
//! one loaded prior serves every block of every file of a process. Each
//! block restores a fresh copy of the trained model from it.

#[path = "prior_builtin.rs"]
pub mod builtin;

use crate::codec::Model;
use crate::error::{Error, Result};
use crate::format::MAX_PARAMS_LEN;
use crate::mix::MixConfig;
use sep_cm::{Cm, CmConfig, CmStream, FastCm};
use std::borrow::Cow;
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex};
use xxhash_rust::xxh3::{xxh3_64, xxh3_128};

/// `magic` of a prior file: `8F 53 50 52` (`\x8FSPR`).
pub const PRIOR_MAGIC: [u8; 4] = [0x8F, b'S', b'P', b'R'];
/// The `prior_version` of a plain prior file (what [`Prior::train`] writes).
pub const PRIOR_VERSION: u8 = 1;
/// The `prior_version` of a packed prior file ([`Prior::pack`]): a version-1
/// file deflated, with the id of that file.
pub const PRIOR_VERSION_PACKED: u8 = 2;
/// Bytes before a packed file's deflate stream.
const PACKED_HEAD: usize = 32;
/// Most bytes a prior file (or a packed file's version-1 content) may have.
pub const MAX_PRIOR_FILE: u64 = MAX_PRIOR_HISTORY as u64 * 4 + (64 << 20);
/// Most bytes of samples (history) a prior may hold: 64 MiB.
pub const MAX_PRIOR_HISTORY: u32 = 1 << 26;
/// Largest `table_bits` of a prior (a 16 MiB context table).
pub const MAX_PRIOR_TABLE_BITS: u8 = 24;
/// Largest `match_bits` of a prior (16 MiB per match model).
pub const MAX_PRIOR_MATCH_BITS: u8 = 22;
/// The mix model id (doc/FORMAT.md section 4.9).
const MIX_MODEL_ID: u16 = 3;
/// Bytes before `params`.
const FIXED: usize = 12;
/// Bytes between `params` and the history.
const MIDDLE: usize = 20;

/// A model restored from a prior, ready to code the byte after its samples.
pub(crate) enum Trained {
    /// The mix model of every CM revision but 3, with its stream.
    Cm(Box<Cm>, CmStream),
    /// CM revision 3 (the `fast` preset's [`FastCm`]).
    Fast(Box<FastCm>),
}

/// Restores the model of `cm` from a snapshot of walk `walk` (revision 3:
/// [`FastCm::restore`], walk 0 only; doc/FORMAT.md section 11).
fn restore_model(
    cm: &CmConfig,
    snapshot: &[u8],
    state_len: u64,
    history_len: usize,
    walk: u8,
) -> std::result::Result<Trained, String> {
    if cm.revision == 3 {
        if walk != 0 {
            return Err(format!("walk {walk}: a CM revision 3 prior has walk 0"));
        }
        return FastCm::restore(cm, snapshot, state_len, history_len)
            .map(|m| Trained::Fast(Box::new(m)));
    }
    Cm::restore_walk(cm, snapshot, state_len, history_len, walk)
        .map(|(m, st)| Trained::Cm(Box::new(m), st))
}

/// A loaded prior: shared, immutable, cheap to clone.
#[derive(Clone)]
pub struct Prior(Arc<Inner>);

struct Inner {
    id: [u8; 16],
    /// The model's `params` as an archive header writes them.
    params: Vec<u8>,
    /// The model it was trained for (the preset's table sizes).
    mix: MixConfig,
    /// The context-mixing configuration with the prior's table sizes.
    cm: CmConfig,
    /// The (version-1) file's bytes: the history and the snapshot are
    /// ranges of it, not copies (loading copies nothing; a built-in prior's
    /// bytes are the binary's own).
    file: Cow<'static, [u8]>,
    history: Range<usize>,
    snapshot: Range<usize>,
    state_len: u64,
    /// The snapshot's state walk (doc/FORMAT.md section 11).
    walk: u8,
    /// The model restored (and so checked) when the prior was loaded: the
    /// first block takes it; later blocks restore their own from the
    /// snapshot (a fresh model's untouched tables cost no memory traffic,
    /// where a copy of the whole state would).
    first: Mutex<Option<Trained>>,
    file_len: usize,
}

impl std::fmt::Debug for Prior {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prior")
            .field("id", &self.id_hex())
            .field("history", &self.0.history.len())
            .finish_non_exhaustive()
    }
}

impl PartialEq for Prior {
    fn eq(&self, other: &Prior) -> bool {
        self.0.id == other.0.id
    }
}

/// The id's 32 lowercase hex digits.
pub fn id_hex(id: &[u8; 16]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

fn bad(why: impl Into<String>) -> Error {
    Error::BadPrior(why.into())
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// The mix configuration a prior can serve: `model` must be a mix model
/// without a network (neither a parallel nor a serial one).
fn mix_of(model: &Model) -> Result<MixConfig> {
    match model {
        Model::Mix(m) if m.neural.is_none() && m.serial.is_none() => Ok(m.clone()),
        other => Err(Error::InvalidOption(format!(
            "priors need a context-mixing model without a network (presets fast, default, max); not {}",
            match other {
                Model::Mix(m) => m.describe(),
                m => m.name().to_string(),
            }
        ))),
    }
}

/// The state walk a prior of `cm` is written with (doc/FORMAT.md section
/// 11): 1 where revision 9's shortcut exists (walk 0 leaves its mixer
/// fresh, so a restored model would not code as the trained one), 0 before
/// (the same walk, and the same bytes as the priors written before walk 1).
/// Revision 3 (`FastCm`) has one walk, 0.
fn walk_of(cm: &CmConfig) -> u8 {
    u8::from(cm.since(9))
}

/// Smallest `match_bits` of a prior.
pub const MIN_PRIOR_MATCH_BITS: u8 = 10;
/// Smallest `table_bits` of a prior (a 64 KiB context table).
pub const MIN_PRIOR_TABLE_BITS: u8 = 16;

/// The table sizes a prior trained on `history_len` bytes fixes: those of a
/// block of that length, at most 2^24 and 2^22 bytes; `table_bits` and
/// `match_bits`, when given, replace them (a smaller, faster prior).
fn prior_cm(
    cm: &CmConfig,
    history_len: usize,
    table_bits: Option<u8>,
    match_bits: Option<u8>,
) -> CmConfig {
    let (t, m) = cm.effective_bits(history_len.max(1 << 16));
    CmConfig {
        table_bits: table_bits.unwrap_or(t).min(MAX_PRIOR_TABLE_BITS),
        match_bits: match_bits.unwrap_or(m).min(MAX_PRIOR_MATCH_BITS),
        ..*cm
    }
}

impl Prior {
    /// Trains a prior for `model` on `samples`, learned one after the other
    /// in the order given, and returns the prior file's bytes. `model` must
    /// be a mix model without a network; the samples together hold
    /// `1..=`[`MAX_PRIOR_HISTORY`] bytes.
    pub fn train(model: &Model, samples: &[&[u8]]) -> Result<Vec<u8>> {
        Prior::train_sized(model, samples, None, None)
    }

    /// [`train`](Self::train) with the context table the prior fixes set to
    /// `2^table_bits` bytes (`16..=24`) and its match models' tables to
    /// `2^match_bits` entries (`10..=22`); `None`: the sizes of a block as
    /// long as the samples, as `train` picks. Smaller tables make a smaller
    /// prior file (fewer trained entries) that loads and codes faster; the
    /// match tables hold one position per sample byte they index, so they
    /// dominate the file of a small table.
    pub fn train_sized(
        model: &Model,
        samples: &[&[u8]],
        table_bits: Option<u8>,
        match_bits: Option<u8>,
    ) -> Result<Vec<u8>> {
        if let Some(t) = table_bits
            && !(MIN_PRIOR_TABLE_BITS..=MAX_PRIOR_TABLE_BITS).contains(&t)
        {
            return Err(Error::InvalidOption(format!(
                "a prior's table_bits is {MIN_PRIOR_TABLE_BITS} to {MAX_PRIOR_TABLE_BITS}, not {t}"
            )));
        }
        if let Some(m) = match_bits
            && !(MIN_PRIOR_MATCH_BITS..=MAX_PRIOR_MATCH_BITS).contains(&m)
        {
            return Err(Error::InvalidOption(format!(
                "a prior's match_bits is {MIN_PRIOR_MATCH_BITS} to {MAX_PRIOR_MATCH_BITS}, not {m}"
            )));
        }
        let mix = mix_of(model)?;
        let history: Vec<u8> = samples.concat();
        if history.is_empty() || history.len() > MAX_PRIOR_HISTORY as usize {
            return Err(Error::InvalidOption(format!(
                "a prior is trained on 1 to {MAX_PRIOR_HISTORY} bytes of samples, not {}",
                history.len()
            )));
        }
        let cm = prior_cm(&mix.cm, history.len(), table_bits, match_bits);
        let walk = walk_of(&cm);
        let (snapshot, state_len) = if cm.revision == 3 {
            (FastCm::snapshot(&cm, &history), FastCm::state_len(&cm))
        } else {
            (
                Cm::snapshot_walk(&cm, &history, walk).map_err(Error::InvalidOption)?,
                Cm::state_len_walk(&cm, walk),
            )
        };
        let params = crate::params::write_mix(&mix);
        let mut b = Vec::with_capacity(FIXED + params.len() + MIDDLE + history.len() + 8);
        b.extend_from_slice(&PRIOR_MAGIC);
        b.push(PRIOR_VERSION);
        b.extend_from_slice(&[0, 0, 0]);
        b.extend_from_slice(&MIX_MODEL_ID.to_le_bytes());
        b.extend_from_slice(&(params.len() as u16).to_le_bytes());
        b.extend_from_slice(&params);
        b.extend_from_slice(&[cm.table_bits, cm.match_bits, walk, 0]);
        b.extend_from_slice(&(history.len() as u32).to_le_bytes());
        b.extend_from_slice(&state_len.to_le_bytes());
        b.extend_from_slice(&(snapshot.len() as u32).to_le_bytes());
        b.extend_from_slice(&history);
        b.extend_from_slice(&snapshot);
        let check = xxh3_64(&b);
        b.extend_from_slice(&check.to_le_bytes());
        Ok(b)
    }

    /// Loads a prior file's bytes, checking every field (doc/FORMAT.md
    /// section 11) before anything is allocated, then the snapshot against
    /// the model it restores.
    /// A packed file (version 2) is unpacked first; its prior is the
    /// version-1 file it holds, with that file's id.
    pub fn from_bytes(b: &[u8]) -> Result<Prior> {
        if b.len() < 4 || b[..4] != PRIOR_MAGIC {
            return Err(bad("not a sep prior file (wrong magic)"));
        }
        if b.len() < FIXED {
            return Err(bad("truncated header"));
        }
        if b[4] == PRIOR_VERSION_PACKED {
            return Prior::from_packed(b);
        }
        Prior::from_plain(Cow::Owned(b.to_vec()))
    }

    /// [`from_bytes`](Self::from_bytes) of bytes that live as long as the
    /// program (a built-in prior): a plain file is used in place, not copied.
    pub(crate) fn from_static(b: &'static [u8]) -> Result<Prior> {
        if b.len() >= FIXED && b[..4] == PRIOR_MAGIC && b[4] != PRIOR_VERSION_PACKED {
            return Prior::from_plain(Cow::Borrowed(b));
        }
        Prior::from_bytes(b)
    }

    /// [`from_bytes`](Self::from_bytes) of a file read into `b`: a plain
    /// file is used in place, not copied.
    fn from_vec(b: Vec<u8>) -> Result<Prior> {
        if b.len() >= FIXED && b[..4] == PRIOR_MAGIC && b[4] != PRIOR_VERSION_PACKED {
            return Prior::from_plain(Cow::Owned(b));
        }
        Prior::from_bytes(&b)
    }

    /// Loads a packed (version-2) file.
    fn from_packed(b: &[u8]) -> Result<Prior> {
        {
            let plain = unpack(b)?;
            let mut p = Prior::from_plain(Cow::Owned(plain))?;
            if b[8..24] != p.id() {
                return Err(bad("the packed prior's id is not the id of what it holds"));
            }
            Arc::get_mut(&mut p.0).expect("not shared yet").file_len = b.len();
            Ok(p)
        }
    }

    /// Loads a version-1 file.
    fn from_plain(file: Cow<'static, [u8]>) -> Result<Prior> {
        let b: &[u8] = &file;
        let (mix, params_len) = plain_header(b)?;
        let params = &b[FIXED..FIXED + params_len];
        let m = FIXED + params_len;
        let (table_bits, match_bits, walk) = (b[m], b[m + 1], b[m + 2]);
        if walk > sep_cm::MAX_WALK {
            return Err(bad(format!(
                "walk {walk}: this sep reads state walks 0 to {}",
                sep_cm::MAX_WALK
            )));
        }
        if b[m + 3] != 0 {
            return Err(bad("reserved byte after params is not 0"));
        }
        if !(MIN_PRIOR_TABLE_BITS..=MAX_PRIOR_TABLE_BITS).contains(&table_bits) {
            return Err(bad(format!("table_bits {table_bits} outside 16..=24")));
        }
        if !(MIN_PRIOR_MATCH_BITS..=MAX_PRIOR_MATCH_BITS).contains(&match_bits) {
            return Err(bad(format!("match_bits {match_bits} outside 10..=22")));
        }
        let history_len = u32_at(b, m + 4);
        let state_len = u64::from_le_bytes(b[m + 8..m + 16].try_into().expect("8 bytes"));
        let snapshot_len = u32_at(b, m + 16);
        if history_len == 0 || history_len > MAX_PRIOR_HISTORY {
            return Err(bad(format!(
                "history_len {history_len} outside 1..={MAX_PRIOR_HISTORY}"
            )));
        }
        let body = m + MIDDLE;
        let expect = body as u64 + u64::from(history_len) + u64::from(snapshot_len) + 8;
        if b.len() as u64 != expect {
            return Err(bad(format!(
                "the file is {} bytes, its header declares {expect}",
                b.len()
            )));
        }
        let end = b.len() - 8;
        let (check, id) = checksum_and_id(b);
        if check != u64::from_le_bytes(b[end..].try_into().expect("8 bytes")) {
            return Err(bad("checksum mismatch (the file is damaged)"));
        }
        let cm = CmConfig {
            table_bits,
            match_bits,
            ..mix.cm
        };
        cm.validate().map_err(bad)?;
        let hist_at = body;
        let snap_at = hist_at + history_len as usize;
        let history = hist_at..snap_at;
        // The runs are checked against state_len, state_len against the
        // model, and every restored position against the history, here:
        // blocks coded with the prior copy the model restored once.
        let snapshot = snap_at..end;
        let trained = restore_model(&cm, &b[snapshot.clone()], state_len, history.len(), walk)
            .map_err(bad)?;
        let file_len = b.len();
        Ok(Prior(Arc::new(Inner {
            id,
            params: params.to_vec(),
            mix,
            cm,
            history,
            snapshot,
            state_len,
            walk,
            first: Mutex::new(Some(trained)),
            file_len,
            file,
        })))
    }

    /// Loads a prior file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Prior> {
        let path = path.as_ref();
        let len = std::fs::metadata(path)?.len();
        if len > MAX_PRIOR_FILE {
            return Err(bad(format!(
                "{} is {len} bytes, more than a prior can be",
                path.display()
            )));
        }
        Prior::from_vec(read_file(path, len)?)
    }

    /// Packs a version-1 prior file (what [`train`](Self::train) returns)
    /// as a version-2 file: the same prior, with the same id, its bytes
    /// deflated (doc/FORMAT.md section 11). The file is smaller (about half:
    /// the samples shrink, the snapshot less) and takes longer to load (it is
    /// inflated first). Deterministic: the same input gives the same bytes.
    pub fn pack(plain: &[u8]) -> Result<Vec<u8>> {
        if plain.get(4) == Some(&PRIOR_VERSION_PACKED) {
            return Err(Error::InvalidOption(
                "the prior file is packed already".into(),
            ));
        }
        let p = Prior::from_bytes(plain)?;
        let packed = miniz_oxide::deflate::compress_to_vec(plain, 10);
        let mut b = Vec::with_capacity(PACKED_HEAD + packed.len() + 8);
        b.extend_from_slice(&PRIOR_MAGIC);
        b.push(PRIOR_VERSION_PACKED);
        b.extend_from_slice(&[0, 0, 0]);
        b.extend_from_slice(&p.id());
        b.extend_from_slice(&(plain.len() as u64).to_le_bytes());
        b.extend_from_slice(&packed);
        let check = xxh3_64(&b);
        b.extend_from_slice(&check.to_le_bytes());
        Ok(b)
    }

    /// The id: XXH3-128 of the (version-1) file, as an archive header
    /// records it.
    pub fn id(&self) -> [u8; 16] {
        self.0.id
    }

    /// The id as 32 hex digits.
    pub fn id_hex(&self) -> String {
        id_hex(&self.0.id)
    }

    /// The model it was trained for (the archive's model when coding with it).
    pub fn model(&self) -> Model {
        Model::Mix(self.0.mix.clone())
    }

    /// The model's `params`, as an archive header holds them.
    pub(crate) fn params(&self) -> &[u8] {
        &self.0.params
    }

    /// Bytes of samples it holds.
    pub fn history_len(&self) -> usize {
        self.0.history.len()
    }

    /// Bytes of the prior file.
    pub fn file_len(&self) -> usize {
        self.0.file_len
    }

    /// Context-table bytes (`2^table_bits`) of the model it fixes.
    pub fn table_bytes(&self) -> u64 {
        1 << self.0.cm.table_bits
    }

    /// Bytes of model memory one block coded with it holds, history included.
    pub fn memory_bytes(&self) -> u64 {
        self.0.cm.memory_bytes() + 2 * self.0.history.len() as u64
    }

    /// Bytes the loaded prior itself holds, once per process however many
    /// blocks use it: its snapshot and samples, and the model restored when it
    /// was loaded until the first block takes it.
    pub fn held_bytes(&self) -> u64 {
        let first = self
            .0
            .first
            .lock()
            .map_or(0, |f| f.as_ref().map_or(0, |_| self.0.cm.memory_bytes()));
        self.0.file.len() as u64 + first
    }

    /// The memory one worker holds coding a block of up to `block` bytes
    /// with it: the restored model, its history and the block buffer (what
    /// the loaded prior holds comes once: [`held_bytes`](Self::held_bytes)).
    pub(crate) fn worker_memory(&self, block: u64) -> u64 {
        self.memory_bytes()
            .saturating_add(block)
            .saturating_add(64 << 10)
    }

    /// The samples (the history a block coded with it continues).
    pub(crate) fn history(&self) -> &[u8] {
        &self.0.file[self.0.history.clone()]
    }

    /// A fresh copy of the trained model and its stream.
    pub(crate) fn restore(&self) -> Trained {
        let first = self.0.first.lock().map(|mut f| f.take()).unwrap_or(None);
        first.unwrap_or_else(|| {
            restore_model(
                &self.0.cm,
                &self.0.file[self.0.snapshot.clone()],
                self.0.state_len,
                self.0.history.len(),
                self.0.walk,
            )
            .expect("checked when the prior was loaded")
        })
    }

    /// Checks that an archive with model `params` can be coded with this
    /// prior.
    pub(crate) fn check_params(&self, model_id: u16, params: &[u8]) -> Result<()> {
        if model_id == MIX_MODEL_ID && params == self.params() {
            Ok(())
        } else {
            Err(Error::InvalidOption(format!(
                "prior {} was trained for {}, not for this model",
                self.id_hex(),
                self.0.mix.describe()
            )))
        }
    }
}

/// The checksum of a version-1 file (the XXH3-64 of all its bytes but the
/// last 8) and its id (the XXH3-128 of all of them), in one pass over the
/// file: XXH3's 64- and 128-bit hashes of an input share its accumulation,
/// so one streaming state fed the bytes before the checksum gives the
/// first, then fed the checksum's 8 bytes the second (the two one-shot
/// hashes read a 20 MB prior twice). `b` has at least 8 bytes.
fn checksum_and_id(b: &[u8]) -> (u64, [u8; 16]) {
    let end = b.len() - 8;
    let mut h = xxhash_rust::xxh3::Xxh3Default::new();
    h.update(&b[..end]);
    let check = h.digest();
    h.update(&b[end..]);
    (check, h.digest128().to_le_bytes())
}

/// Reads a file of `len` bytes (its length a moment before) into memory
/// backed by huge pages where the system has them: a 20 MB prior then costs
/// ten page faults in place of five thousand. Fails if the file's length
/// changed.
fn read_file(path: &Path, len: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let len = usize::try_from(len).map_err(|_| bad("the file is too large"))?;
    let mut b = vec![0u8; len];
    sep_kernels::advise_huge_pages(&b);
    f.read_exact(&mut b).map_err(|e| {
        bad(format!(
            "{}: {e} (did it change while read?)",
            path.display()
        ))
    })?;
    if f.read(&mut [0u8; 1])? != 0 {
        return Err(bad(format!("{} grew while it was read", path.display())));
    }
    Ok(b)
}

/// The model a version-1 prior file's header names and the length of its
/// `params`, every header field up to them checked; the snapshot is not
/// read (a caller that only needs the model skips restoring it).
fn plain_header(b: &[u8]) -> Result<(MixConfig, usize)> {
    if b.len() < FIXED || b[..4] != PRIOR_MAGIC {
        return Err(bad("truncated header"));
    }
    if b[4] != PRIOR_VERSION {
        return Err(bad(format!(
            "prior_version {} is not supported (this sep reads {PRIOR_VERSION} and {PRIOR_VERSION_PACKED})",
            b[4]
        )));
    }
    if b[5..8] != [0, 0, 0] {
        return Err(bad("reserved header bytes are not 0"));
    }
    let model_id = u16_at(b, 8);
    if model_id != MIX_MODEL_ID {
        return Err(bad(format!(
            "model_id {model_id}: priors exist for the mix model (3) only"
        )));
    }
    let params_len = usize::from(u16_at(b, 10));
    if params_len > usize::from(MAX_PARAMS_LEN) {
        return Err(bad(format!("params_len {params_len} is above 1024")));
    }
    if b.len() < FIXED + params_len + MIDDLE + 8 {
        return Err(bad("truncated header"));
    }
    let mix = crate::params::read_mix(&b[FIXED..FIXED + params_len], 1, 0)
        .map_err(|e| bad(format!("invalid model parameters: {e}")))?;
    if mix.neural.is_some() || mix.serial.is_some() {
        return Err(bad(
            "model parameters with a network (priors hold the CM only)",
        ));
    }
    Ok((mix, params_len))
}

/// The model a prior file's bytes name, read from its header without
/// restoring the snapshot (a packed file is unpacked first).
pub(crate) fn declared_model(b: &[u8]) -> Result<Model> {
    if b.len() >= 5 && b[..4] == PRIOR_MAGIC && b[4] == PRIOR_VERSION_PACKED {
        return Ok(Model::Mix(plain_header(&unpack(b)?)?.0));
    }
    Ok(Model::Mix(plain_header(b)?.0))
}

/// The id a prior file declares without loading it: a packed file's `id`
/// field, or the XXH3-128 of a version-1 file (None: neither).
pub fn declared_id(b: &[u8]) -> Option<[u8; 16]> {
    match b.get(..5)? {
        [0x8F, b'S', b'P', b'R', PRIOR_VERSION_PACKED] => b.get(8..24)?.try_into().ok(),
        [0x8F, b'S', b'P', b'R', PRIOR_VERSION] => Some(xxh3_128(b).to_le_bytes()),
        _ => None,
    }
}

/// The version-1 file a packed (version-2) file holds, every field checked:
/// the reserved bytes, `plain_len` within [`MAX_PRIOR_FILE`], the checksum,
/// a deflate stream that fills exactly `plain_len` bytes and ends exactly
/// at the checksum (the caller checks the id of what it holds).
fn unpack(b: &[u8]) -> Result<Vec<u8>> {
    use miniz_oxide::inflate::TINFLStatus;
    use miniz_oxide::inflate::core::{DecompressorOxide, decompress, inflate_flags};
    if b.len() < PACKED_HEAD + 8 {
        return Err(bad("truncated packed header"));
    }
    if b[5..8] != [0, 0, 0] {
        return Err(bad("reserved header bytes are not 0"));
    }
    let end = b.len() - 8;
    if xxh3_64(&b[..end]) != u64::from_le_bytes(b[end..].try_into().expect("8 bytes")) {
        return Err(bad("checksum mismatch (the file is damaged)"));
    }
    let plain_len = u64::from_le_bytes(b[24..32].try_into().expect("8 bytes"));
    if !(FIXED as u64..=MAX_PRIOR_FILE).contains(&plain_len) {
        return Err(bad(format!(
            "plain_len {plain_len} outside {FIXED}..={MAX_PRIOR_FILE}"
        )));
    }
    let mut plain = vec![0u8; plain_len as usize];
    let mut r = DecompressorOxide::new();
    let (status, read, written) = decompress(
        &mut r,
        &b[PACKED_HEAD..end],
        &mut plain,
        0,
        inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
    );
    if status != TINFLStatus::Done || read != end - PACKED_HEAD || written as u64 != plain_len {
        return Err(bad(
            "the packed prior does not inflate to its plain_len bytes",
        ));
    }
    if plain[..4] != PRIOR_MAGIC || plain[4] != PRIOR_VERSION {
        return Err(bad("a packed prior must hold a version-1 prior file"));
    }
    Ok(plain)
}

/// Checks the prior an archive's header names against the one a decoder
/// has: none needed, the same id, and the same model parameters.
pub(crate) fn check_header(header: &crate::format::Header, prior: Option<&Prior>) -> Result<()> {
    match (header.prior_id, prior) {
        (None, _) => Ok(()),
        (Some(need), None) => Err(Error::PriorNeeded { id: id_hex(&need) }),
        (Some(need), Some(p)) if need != p.id() => Err(Error::PriorMismatch {
            need: id_hex(&need),
            have: p.id_hex(),
        }),
        (Some(_), Some(p)) => {
            if header.model_id == MIX_MODEL_ID && header.params == p.params() {
                Ok(())
            } else {
                Err(Error::InvalidField {
                    field: "prior_id",
                    value: 0,
                    why: "names a prior trained for other model parameters",
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preset::Preset;

    fn samples() -> Vec<Vec<u8>> {
        (0..4)
            .map(|i| {
                format!("{{\"id\": {i}, \"name\": \"record {i}\", \"tags\": [\"a\", \"b\"]}}\n")
                    .repeat(40)
                    .into_bytes()
            })
            .collect()
    }

    fn trained() -> Vec<u8> {
        let s = samples();
        let refs: Vec<&[u8]> = s.iter().map(Vec::as_slice).collect();
        Prior::train(&Model::mix_preset(Preset::Default), &refs).unwrap()
    }

    #[test]
    fn trains_loads_and_is_deterministic() {
        let a = trained();
        let b = trained();
        assert_eq!(a, b, "training twice gives the same file");
        let p = Prior::from_bytes(&a).unwrap();
        assert_eq!(p.id(), xxh3_128(&a).to_le_bytes());
        assert_eq!(p.id_hex().len(), 32);
        assert_eq!(p.model(), Model::mix_preset(Preset::Default));
        assert_eq!(p.history_len(), samples().concat().len());
        let q = p.clone();
        assert_eq!(p, q);
    }

    /// The one-pass checksum and id are the two one-shot hashes, at every
    /// length around XXH3's short, mid-size, stripe and block boundaries.
    #[test]
    fn one_pass_checksum_and_id_are_the_two_hashes() {
        let mut x = 0x9E37_79B9u32;
        let data: Vec<u8> = (0..70_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        let lens = (8..=2200).chain([4095, 4096, 4097, 16_383, 16_384, 16_385, 65_536, 70_000]);
        for n in lens {
            let b = &data[..n];
            let (check, id) = checksum_and_id(b);
            assert_eq!(check, xxh3_64(&b[..n - 8]), "checksum, {n} bytes");
            assert_eq!(id, xxh3_128(b).to_le_bytes(), "id, {n} bytes");
        }
    }

    #[test]
    fn every_bad_field_is_refused() {
        let good = trained();
        let p = Prior::from_bytes(&good).unwrap();
        let load = |b: &[u8]| Prior::from_bytes(b).unwrap_err().to_string();
        assert!(load(b"\x8FSEP").contains("magic"));
        assert!(load(&good[..good.len() - 1]).contains("declares"));
        assert!(load(&good[..20]).contains("truncated"));
        let mut v = good.clone();
        v[4] = 3;
        assert!(load(&v).contains("prior_version"));
        let mut v = good.clone();
        v[8] = 2;
        assert!(load(&v).contains("model_id"));
        let mut v = good.clone();
        let last = v.len() - 20;
        v[last] ^= 1;
        assert!(load(&v).contains("checksum"));
        // Every truncation fails cleanly.
        for n in 0..good.len().min(400) {
            assert!(Prior::from_bytes(&good[..n]).is_err());
        }
        assert!(p.check_params(3, p.params()).is_ok());
        assert!(p.check_params(3, &[0; 16]).is_err());
        assert!(p.check_params(1, p.params()).is_err());
    }

    /// A packed prior (version 2) is the same prior: same id, same model,
    /// the archives of one decode with the other; it is smaller, packing is
    /// deterministic, and every damaged field is refused.
    #[test]
    fn a_packed_prior_is_the_same_prior() {
        let plain = trained();
        let packed = Prior::pack(&plain).unwrap();
        assert_eq!(packed, Prior::pack(&plain).unwrap(), "deterministic");
        // About half: 74,665 of 149,125 bytes with `default` at CM revision 9,
        // whose mixer update counts and shortcut tables pack a little less
        // well than revision 7's state (under half then).
        assert!(
            packed.len() * 20 < plain.len() * 11,
            "{} vs {}",
            packed.len(),
            plain.len()
        );
        let (a, b) = (
            Prior::from_bytes(&plain).unwrap(),
            Prior::from_bytes(&packed).unwrap(),
        );
        assert_eq!(a.id(), b.id());
        assert_eq!(declared_id(&packed), Some(a.id()));
        assert_eq!(declared_id(&plain), Some(a.id()));
        assert_eq!(declared_model(&packed).unwrap(), a.model());
        assert_eq!(declared_model(&plain).unwrap(), a.model());
        assert!(declared_model(&plain[..FIXED]).is_err());
        assert_eq!(b.file_len(), packed.len());
        assert_eq!(a.history(), b.history());
        let data = samples().concat();
        let options = crate::Options {
            model: a.model(),
            prior: Some(a.clone()),
            ..crate::Options::default()
        };
        let archive = crate::compress(&data[..1000], &options).unwrap();
        let mut out = Vec::new();
        use std::io::Read;
        crate::Decoder::new(&archive[..])
            .unwrap()
            .with_prior(Some(b.clone()))
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, &data[..1000]);
        assert!(Prior::pack(&packed).is_err(), "packed twice");
        // Damaged fields, each with a valid checksum so the field is what fails.
        let load = |mut v: Vec<u8>| {
            let n = v.len() - 8;
            v.truncate(n);
            let c = xxh3_64(&v);
            v.extend_from_slice(&c.to_le_bytes());
            Prior::from_bytes(&v).unwrap_err().to_string()
        };
        let mut v = packed.clone();
        v[9] ^= 1;
        assert!(load(v).contains("id"));
        let mut v = packed.clone();
        v[6] = 1;
        assert!(load(v).contains("reserved"));
        let mut v = packed.clone();
        v[24..32].copy_from_slice(&(MAX_PRIOR_FILE + 1).to_le_bytes());
        assert!(load(v).contains("plain_len"));
        let mut v = packed.clone();
        v[24] ^= 1;
        assert!(load(v).contains("inflate"));
        let mut v = packed.clone();
        v.insert(v.len() - 8, 0);
        assert!(load(v).contains("inflate"), "a byte after the stream");
        let mut v = packed.clone();
        let mid = PACKED_HEAD + (v.len() - PACKED_HEAD) / 2;
        v[mid] ^= 0x55;
        let e = load(v);
        assert!(!e.is_empty());
        let mut v = packed.clone();
        v[100] ^= 1;
        assert!(
            Prior::from_bytes(&v)
                .unwrap_err()
                .to_string()
                .contains("checksum")
        );
        for n in 0..packed.len().min(300) {
            assert!(Prior::from_bytes(&packed[..n]).is_err());
        }
    }

    /// From revision 9 (`default` writes 9) a prior is written with state
    /// walk 1 (the shortcut's mixer included); a walk-0 file, as sep wrote
    /// before walk 1, still loads and decodes its archives; an unknown walk
    /// is refused.
    #[test]
    fn walk_1_from_revision_9_and_walk_0_still_loads() {
        let plain = trained();
        let p = Prior::from_bytes(&plain).unwrap();
        assert!(p.0.cm.revision >= 9, "revision {}", p.0.cm.revision);
        let m = FIXED + p.params().len();
        assert_eq!(plain[m + 2], 1, "walk");
        let cm = p.0.cm;
        let hist = p.history().to_vec();
        let snap0 = Cm::snapshot(&cm, &hist).unwrap();
        let mut old = plain[..m].to_vec();
        old.extend_from_slice(&[cm.table_bits, cm.match_bits, 0, 0]);
        old.extend_from_slice(&(hist.len() as u32).to_le_bytes());
        old.extend_from_slice(&Cm::state_len(&cm).to_le_bytes());
        old.extend_from_slice(&(snap0.len() as u32).to_le_bytes());
        old.extend_from_slice(&hist);
        old.extend_from_slice(&snap0);
        let c = xxh3_64(&old);
        old.extend_from_slice(&c.to_le_bytes());
        let q = Prior::from_bytes(&old).unwrap();
        assert_ne!(q.id(), p.id());
        let data = samples().concat();
        for prior in [p, q] {
            let options = crate::Options {
                model: prior.model(),
                prior: Some(prior.clone()),
                ..crate::Options::default()
            };
            let archive = crate::compress(&data[..700], &options).unwrap();
            let mut out = Vec::new();
            use std::io::Read;
            crate::Decoder::new(&archive[..])
                .unwrap()
                .with_prior(Some(prior))
                .read_to_end(&mut out)
                .unwrap();
            assert_eq!(out, &data[..700]);
        }
        let mut v = plain.clone();
        v[m + 2] = 2;
        let n = v.len() - 8;
        v.truncate(n);
        let c = xxh3_64(&v);
        v.extend_from_slice(&c.to_le_bytes());
        let e = Prior::from_bytes(&v).unwrap_err().to_string();
        assert!(e.contains("walk 2"), "{e}");
    }

    #[test]
    fn a_smaller_table_is_fixed_and_loads() {
        let s = samples();
        let refs: Vec<&[u8]> = s.iter().map(Vec::as_slice).collect();
        let model = Model::mix_preset(Preset::Default);
        let small = Prior::train_sized(&model, &refs, Some(16), None).unwrap();
        let p = Prior::from_bytes(&small).unwrap();
        assert_eq!(p.table_bytes(), 1 << 16);
        let q = Prior::from_bytes(&trained()).unwrap();
        assert!(q.table_bytes() > p.table_bytes(), "{}", q.table_bytes());
        assert_ne!(p.id(), q.id());
        for t in [15, 25] {
            let e = Prior::train_sized(&model, &refs, Some(t), None).unwrap_err();
            assert!(e.to_string().contains("table_bits"), "{e}");
        }
        let tiny = Prior::train_sized(&model, &refs, Some(16), Some(12)).unwrap();
        assert!(
            tiny.len() <= small.len(),
            "{} vs {}",
            tiny.len(),
            small.len()
        );
        Prior::from_bytes(&tiny).unwrap();
        for m in [9, 23] {
            let e = Prior::train_sized(&model, &refs, None, Some(m)).unwrap_err();
            assert!(e.to_string().contains("match_bits"), "{e}");
        }
    }

    #[test]
    fn networks_are_refused() {
        let s = samples();
        let refs: Vec<&[u8]> = s.iter().map(Vec::as_slice).collect();
        for p in [Preset::Ultra, Preset::Hybrid] {
            let e = Prior::train(&Model::mix_preset(p), &refs).unwrap_err();
            assert!(e.to_string().contains("without a network"), "{e}");
        }
        assert!(Prior::train(&Model::Order2, &refs).is_err());
        assert!(Prior::train(&Model::mix_preset(Preset::Default), &[]).is_err());
    }
}
