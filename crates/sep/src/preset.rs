//! [`Preset`]: the named configurations of sep's modes.

/// A named configuration, for the mixed model (context mixing, the default
/// `model`) and for the neural model alike: [`Model::mix_preset`] turns a
/// preset into the mixed model (the command line's `-p`, with `-m mix`, the
/// default), [`Model::preset`] into the neural model alone (`-m neural -p`).
/// The same name means this for each:
///
/// | preset | mixed model ([`MixConfig::preset`]) | neural model ([`NeuralConfig::preset`]) |
/// |---|---|---|
/// | `fast` | CM revision 3, the lean model (doc/FORMAT.md 4.14): order 1 direct, orders 2-4 and 6 and word hashed, one match model, one mixer, one APM, 4 MiB table; 8.2 MiB | PAC, context 8, embedding 16, FFN 256, 64 streams |
/// | `default` | orders 1-6 and the last 8 bytes, word, sparse, record and image contexts, two match models, 64 MiB table, two APMs; 112 MiB (what `sep FILE` uses) | PAC, context 8, embedding 16, FFN 512, 32 streams |
/// | `max` | `default`'s contexts with a 128 MiB table and 2^24-slot match tables; 208 MiB | PAC, context 8, embedding 32, FFN 1024, 32 streams |
/// | `ultra` | `max` plus a serial LSTM (64 cells) that reads the whole block as one stream and adds mixer inputs (doc/FORMAT.md 4.13); several times slower | as `max` |
/// | `hybrid` | `default` plus the `fast` network with 32 streams as one more mixer input | that network alone |
/// | `paper-*` | none: the neural model (the column to the right) | the paper's six configurations, sized for a GPU (each variant's doc) |
///
/// The neural networks learn at rate 4e-3 (the paper's presets at its
/// 1e-3); README.md's "Presets and ablation" has the measurements behind each
/// choice, and `sep -l` prints every parameter an archive was made with.
///
/// ```
/// // The context-mixing `fast` preset, as `sep -p fast` compresses:
/// let options = sep::Options {
///     model: sep::Model::mix_preset(sep::Preset::Fast),
///     ..sep::Options::default()
/// };
/// assert_eq!(options.model.name(), "mix");
/// // The same name for the neural model alone (`sep -m neural -p fast`):
/// assert_eq!(sep::Model::preset(sep::Preset::Fast).name(), "neural");
/// // The paper's presets have no context-mixing form:
/// assert_eq!(sep::Model::mix_preset(sep::Preset::PaperTrace).name(), "neural");
/// ```
///
/// [`Model::mix_preset`]: crate::Model::mix_preset
/// [`Model::preset`]: crate::Model::preset
/// [`MixConfig::preset`]: crate::MixConfig::preset
/// [`NeuralConfig::preset`]: crate::neural::NeuralConfig::preset
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Preset {
    /// The fastest: fewer contexts (mixed model), the smallest network
    /// (neural model).
    Fast,
    /// The balance of ratio and speed; the mixed model's `default` is what
    /// `sep FILE` uses.
    Default,
    /// Bigger tables (mixed model), the largest network worth its time on
    /// a CPU (neural model).
    Max,
    /// For the mixed model: `max` plus a serial LSTM inside the mixer (it
    /// reads the unsplit block); for the neural model, `max`'s network.
    Ultra,
    /// For the mixed model: the `default` context mixing plus a small network
    /// (the `fast` one, 32 streams) as one more mixer input; for the neural
    /// model, that network alone.
    Hybrid,
    /// The paper's PAC configuration (B = 512, L = 16, E = 16, F = 4096, 4 pairs).
    PaperPac,
    /// The paper's SEP+PAC: SE (L = 48, patches of 16 bytes x 16 features, 33 patches
    /// -> 1 token, soft gate per patch) in front of PAC's body with 5 pairs.
    PaperSepPac,
    /// The paper's TRACE (B = 512, L = 64, 16 tokens of 256, 8 heads, FFN 4096 twice).
    PaperTrace,
    /// The paper's SEP+TRACE: SE (L = 64, patches of 4 x 64 features with positions,
    /// 61 patches -> 4 tokens, soft gate per element) in front of TRACE's body.
    PaperSepTrace,
    /// The paper's PatchTST (B = 512, L = 64, 16 tokens of 256, 8 heads, FFN 4096).
    PaperPatchTst,
    /// The paper's SEP+PatchTST: SE (L = 64, patches of 4 x 64 features, 61 patches
    /// -> 8 tokens, soft gate per element) in front of PatchTST's body.
    PaperSepPatchTst,
}

impl Preset {
    /// Every preset, for listings.
    pub const ALL: [Preset; 11] = [
        Preset::Fast,
        Preset::Default,
        Preset::Max,
        Preset::Ultra,
        Preset::Hybrid,
        Preset::PaperPac,
        Preset::PaperSepPac,
        Preset::PaperTrace,
        Preset::PaperSepTrace,
        Preset::PaperPatchTst,
        Preset::PaperSepPatchTst,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Fast => "fast",
            Preset::Default => "default",
            Preset::Max => "max",
            Preset::Ultra => "ultra",
            Preset::Hybrid => "hybrid",
            Preset::PaperPac => "paper-pac",
            Preset::PaperSepPac => "paper-sep-pac",
            Preset::PaperTrace => "paper-trace",
            Preset::PaperSepTrace => "paper-sep-trace",
            Preset::PaperPatchTst => "paper-patchtst",
            Preset::PaperSepPatchTst => "paper-sep-patchtst",
        }
    }

    /// Whether this is one of the paper's configurations (sized for a GPU).
    pub fn is_paper(self) -> bool {
        !matches!(
            self,
            Preset::Fast | Preset::Default | Preset::Max | Preset::Ultra | Preset::Hybrid
        )
    }

    /// The preset with this command-line name.
    pub fn from_name(name: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|p| p.name() == name)
    }
}
