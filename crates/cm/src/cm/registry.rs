//! The registration lists of the context-mixing model: which families a
//! configuration installs ([`families`]) and which replace them once a
//! block's data kind is detected ([`kind_families`]). Adding a family is
//! its own file under `models/` plus one line here.

use super::CmConfig;
use crate::models::ContextModel;
use crate::models::audio::AudioContexts;
use crate::models::audio4::Audio4Contexts;
use crate::models::audio14::Audio14Contexts;
use crate::models::biff::BiffContexts;
use crate::models::biff7::Biff7Contexts;
use crate::models::biff12::Biff12Contexts;
use crate::models::biff32::Biff32Contexts;
use crate::models::bilevel::BilevelContexts;
use crate::models::bilevel4::Bilevel4Contexts;
use crate::models::bilevel7::Bilevel7Contexts;
use crate::models::bilevel10::Bilevel10Contexts;
use crate::models::bilevel12::Bilevel12Contexts;
use crate::models::detect::DataKind;
use crate::models::float::FloatContexts;
use crate::models::float4::Float4Contexts;
use crate::models::float7::Float7Contexts;
use crate::models::float10::Float10Contexts;
use crate::models::float18::Float18Contexts;
use crate::models::float24::Float24Contexts;
use crate::models::float26::Float26Contexts;
use crate::models::float44::Float44Contexts;
use crate::models::ibm10::Ibm10Contexts;
use crate::models::image::ImageContexts;
use crate::models::image7::Image7Contexts;
use crate::models::image10::Image10Contexts;
use crate::models::image14::Image14Contexts;
use crate::models::image16::Image16Contexts;
use crate::models::image18::Image18Contexts;
use crate::models::image22::Image22Contexts;
use crate::models::image32::Image32Contexts;
use crate::models::image40::Image40Contexts;
use crate::models::image42::Image42Contexts;
use crate::models::image44::Image44Contexts;
use crate::models::indirect::IndirectContexts;
use crate::models::jpeg::JpegContexts;
use crate::models::jpeg7::Jpeg7Contexts;
use crate::models::jpeg36::Jpeg36Contexts;
use crate::models::line40::Line40Contexts;
use crate::models::m68k::WordBeContexts;
use crate::models::m68k5::M68k5Contexts;
use crate::models::m68k7::M68k7Contexts;
use crate::models::m68k12::M68k12Contexts;
use crate::models::m68k34::M68k34Contexts;
use crate::models::m68k46::M68k46Contexts;
use crate::models::matchctx::MatchContexts;
use crate::models::order::OrderContexts;
use crate::models::pixel::PixelContexts;
use crate::models::pixel2::Pixel2Contexts;
use crate::models::pixel4::Pixel4Contexts;
use crate::models::record::RecordContexts;
use crate::models::small44::Small44Contexts;
use crate::models::small46::Small46Contexts;
use crate::models::sparse::SparseContexts;
use crate::models::text::TextContexts;
use crate::models::text16::Text16Contexts;
use crate::models::text20::Text20Contexts;
use crate::models::text22::Text22Contexts;
use crate::models::text30::Text30Contexts;
use crate::models::text32::Text32Contexts;
use crate::models::wiki44::Wiki44Contexts;
use crate::models::word::WordContexts;
use crate::models::words8::Words8Contexts;
use crate::models::x86::X86Contexts;
use crate::models::x86_4::X86v4Contexts;
use crate::models::x86_5::X86v5Contexts;
use crate::models::x86_7::X86v7Contexts;
use crate::models::x86_10::X86v10Contexts;
use crate::models::x86_14::X86v14Contexts;
use crate::models::x86_16::X86v16Contexts;
use crate::models::x86_30::X86v30Contexts;
use crate::models::x86_32::X86v32Contexts;
use crate::models::x86_42::X86v42Contexts;

/// The hashed-context families of a configuration, in mixer order: the
/// registration list of the v1 model.
pub(crate) fn families(config: &CmConfig) -> Vec<Box<dyn ContextModel>> {
    let mut f: Vec<Box<dyn ContextModel>> = Vec::new();
    f.push(Box::new(OrderContexts::new(config.orders, config.long)));
    // Revision 2: the text family replaces the word and image families.
    if config.word && config.revision >= 2 {
        f.push(Box::new(TextContexts::new()));
        // Revision 4: the indirect contexts after the text family.
        if config.revision >= 4 {
            f.push(Box::new(IndirectContexts::new()));
            f.push(Box::new(MatchContexts));
        }
    } else if config.word {
        f.push(Box::new(WordContexts));
    }
    if config.image && config.revision < 2 {
        f.push(Box::new(ImageContexts::new()));
    }
    if config.sparse {
        f.push(Box::new(SparseContexts));
    }
    if config.record {
        f.push(Box::new(RecordContexts));
    }
    // Revisions 7 and 8 (doc/FORMAT.md 4.18.7, 4.19.7): word, line,
    // markup and code-point contexts after the text family's.
    if config.word && config.since(7) {
        f.push(Box::new(Words8Contexts::new(config.since(8))));
    }
    // Revision 16 (doc/FORMAT.md 4.27.1): direct contexts, the last word.
    // Revision 20 (doc/FORMAT.md 4.31.1): and parse-state contexts.
    // Revision 22 (doc/FORMAT.md 4.33.1): and morphology contexts.
    // Revision 30 (doc/FORMAT.md 4.41.1): and region selectors.
    if config.word && config.since(30) {
        f.push(Box::new(Text30Contexts::new(config)));
    } else if config.word && config.since(22) {
        f.push(Box::new(Text22Contexts::new(config)));
    } else if config.word && config.since(20) {
        f.push(Box::new(Text20Contexts::new(config)));
    } else if config.word && config.since(16) {
        f.push(Box::new(Text16Contexts::new(config)));
    }
    // Revision 32 (doc/FORMAT.md 4.43.1): word-prediction contexts and APM.
    if config.word && config.since(32) {
        f.push(Box::new(Text32Contexts::new(config)));
    }
    // Revision 40 (doc/FORMAT.md 4.51.2): line and field contexts.
    if config.word && config.since(40) {
        f.push(Box::new(Line40Contexts::new()));
    }
    // Revision 44 (doc/FORMAT.md 4.55.3): markup and code structure;
    // (4.55.2): word followers as expected bytes.
    if config.word && config.since(44) {
        f.push(Box::new(Small44Contexts::new()));
        f.push(Box::new(Wiki44Contexts::new(config)));
    }
    // Revision 46 (doc/FORMAT.md 4.57.2): short matches as expected bytes.
    if config.word && config.since(46) {
        f.push(Box::new(Small46Contexts::new(config)));
    }
    f
}

/// The hashed-context families that replace a configuration's after a
/// revision-1 model detects the kind of a block (doc/FORMAT.md 4.11).
pub(crate) fn kind_families(kind: DataKind, config: &CmConfig) -> Vec<Box<dyn ContextModel>> {
    match kind {
        // Revision 36 (doc/FORMAT.md 4.47.4): revision 8's family wrapped.
        DataKind::Jpeg if config.since(36) => vec![
            Box::new(OrderContexts::new(0b1, 0)),
            Box::new(Jpeg36Contexts::new()),
        ],
        // Revision 7 (doc/FORMAT.md 4.18.2): the JPEG family of revision 7
        // (revision 8: its larger table), with order 1 only (the longer
        // orders only add noise in a scan).
        DataKind::Jpeg if config.since(7) => vec![
            Box::new(OrderContexts::new(0b1, 0)),
            Box::new(Jpeg7Contexts::new(config.since(8))),
        ],
        // Revision 5 (doc/FORMAT.md 4.16.4): the JPEG family.
        DataKind::Jpeg => vec![
            Box::new(OrderContexts::new(config.orders, config.long)),
            Box::new(JpegContexts::new()),
        ],
        // Revision 30 (doc/FORMAT.md 4.41.2): revision 16's x86 families and
        // revision 30's (last operands, registers, instruction-aligned
        // matches, 4-byte tables).
        DataKind::X86 if config.since(30) => {
            let mut f = generic_with(Box::new(X86v10Contexts::new()), config);
            f.push(Box::new(X86v14Contexts::new()));
            f.push(Box::new(X86v16Contexts::new()));
            f.push(Box::new(X86v30Contexts::new()));
            // Revision 32 (doc/FORMAT.md 4.43.2): dataflow and branch targets.
            if config.since(32) {
                f.push(Box::new(X86v32Contexts::new()));
            }
            // Revision 42 (doc/FORMAT.md 4.53.4): expected-byte inputs.
            if config.since(42) {
                f.push(Box::new(X86v42Contexts::new()));
            }
            f
        }
        // Revision 16 (doc/FORMAT.md 4.27.3): revision 14's x86 families and
        // revision 16's (instruction history, targets).
        DataKind::X86 if config.since(16) => {
            let mut f = generic_with(Box::new(X86v10Contexts::new()), config);
            f.push(Box::new(X86v14Contexts::new()));
            f.push(Box::new(X86v16Contexts::new()));
            f
        }
        // Revision 14 (doc/FORMAT.md 4.25.2): revision 10's x86 family and
        // revision 14's after the configured ones (instruction-prefix,
        // register and C-string contexts).
        DataKind::X86 if config.since(14) => {
            let mut f = generic_with(Box::new(X86v10Contexts::new()), config);
            f.push(Box::new(X86v14Contexts::new()));
            f
        }
        // Revision 10 (doc/FORMAT.md 4.21.5): revision 8's x86 family with
        // same-opcode, immediate and record contexts.
        DataKind::X86 if config.since(10) => generic_with(Box::new(X86v10Contexts::new()), config),
        // Revisions 7 and 8 (doc/FORMAT.md 4.18.5): x86 history and ELF
        // layout contexts (with revision 6's operand contexts at 8).
        DataKind::X86 if config.since(7) => {
            generic_with(Box::new(X86v7Contexts::new(config.since(6))), config)
        }
        // Revision 6 (doc/FORMAT.md 4.17.3): x86 operand contexts.
        DataKind::X86 if config.since(6) => generic_with(Box::new(X86v5Contexts::new()), config),
        // Revision 4 (doc/FORMAT.md 4.15.4): x86 and 68000 code.
        DataKind::X86 if config.revision >= 4 => {
            generic_with(Box::new(X86v4Contexts::new()), config)
        }
        // Revisions 7 and 8 (doc/FORMAT.md 4.18.5): more 68000 contexts,
        // the indirect and match contexts; revision 12 (4.23.4): more
        // 68000 contexts; revision 34 (4.45.3): branch and call targets.
        DataKind::ResourceFork if config.since(7) => {
            let code: Box<dyn ContextModel> = if config.since(34) {
                Box::new(M68k34Contexts::new())
            } else if config.since(12) {
                Box::new(M68k12Contexts::new())
            } else {
                Box::new(M68k7Contexts::new())
            };
            let mut f = generic_with(code, config);
            f.push(Box::new(IndirectContexts::new()));
            f.push(Box::new(MatchContexts));
            // Revision 46 (doc/FORMAT.md 4.57.3): expected-byte inputs.
            if config.since(46) {
                f.push(Box::new(M68k46Contexts::new()));
            }
            f
        }
        // Revision 5 (doc/FORMAT.md 4.16.3): 68000 instruction contexts.
        DataKind::ResourceFork if config.revision >= 5 => {
            generic_with(Box::new(M68k5Contexts::new()), config)
        }
        DataKind::ResourceFork => generic_with(Box::new(WordBeContexts), config),
        DataKind::X86 => generic_with(Box::new(X86Contexts::new()), config),
        // Revision 12 (doc/FORMAT.md 4.23.6): run and tall templates, a
        // third mixer, two APMs and the last word on the probability.
        DataKind::Bilevel(width) if config.since(12) => vec![
            Box::new(OrderContexts::new(0b11, 0)),
            Box::new(Bilevel12Contexts::new(width)),
        ],
        // Revision 10 (doc/FORMAT.md 4.21.3): more templates and a second
        // mixer.
        DataKind::Bilevel(width) if config.since(10) => vec![
            Box::new(OrderContexts::new(0b11, 0)),
            Box::new(Bilevel10Contexts::new(width)),
        ],
        // Revision 7 (doc/FORMAT.md 4.18.4): runs and wide templates.
        DataKind::Bilevel(width) if config.since(7) => vec![
            Box::new(OrderContexts::new(0b11, 0)),
            Box::new(Bilevel7Contexts::new(width)),
        ],
        DataKind::Bilevel(width) if config.revision >= 4 => vec![
            Box::new(OrderContexts::new(0b11, 0)),
            Box::new(Bilevel4Contexts::new(width)),
        ],
        DataKind::Bilevel(width) => generic_with(Box::new(BilevelContexts::new(width)), config),
        // Revision 32 (doc/FORMAT.md 4.43.3): column histograms.
        DataKind::Biff(ty, len) if config.since(32) => {
            generic_with(Box::new(Biff32Contexts::new(ty, len, 4)), config)
        }
        // Revision 12 (doc/FORMAT.md 4.23.5): partner-column contexts.
        DataKind::Biff(ty, len) if config.since(12) => {
            generic_with(Box::new(Biff12Contexts::new(ty, len, 4)), config)
        }
        // Revision 7 (doc/FORMAT.md 4.18.4): spreadsheet cell contexts.
        DataKind::Biff(ty, len) if config.since(7) => {
            generic_with(Box::new(Biff7Contexts::new(ty, len, 4)), config)
        }
        DataKind::Biff(ty, len) => generic_with(Box::new(BiffContexts::new(ty, len, 4)), config),
        DataKind::Float(f) => {
            let mut v: Vec<Box<dyn ContextModel>> = vec![
                Box::new(OrderContexts::new(config.orders, config.long)),
                if config.revision >= 4 {
                    Box::new(Float4Contexts::new(f))
                } else {
                    Box::new(FloatContexts::new(f))
                },
            ];
            // Revisions 7 and 8 (doc/FORMAT.md 4.18.6, 4.19.6).
            if config.since(7) && Float7Contexts::applies(&f) {
                v.push(Box::new(Float7Contexts::new(f, config.since(8))));
            }
            // Revision 10 (doc/FORMAT.md 4.21.4): record matches, IBM floats.
            if config.since(10) && Float7Contexts::applies(&f) {
                v.push(Box::new(Float10Contexts::new(f)));
            }
            if config.since(10) && f.width == 4 && f.big_endian {
                v.push(Box::new(Ibm10Contexts::new()));
            }
            // Revision 18 (doc/FORMAT.md 4.29.3): ordered-integer predictions.
            if config.since(18) {
                v.push(Box::new(Float18Contexts::new(f, config.since(20))));
            }
            // Revision 24 (doc/FORMAT.md 4.35.3): unit-norm records.
            if config.since(24) && Float24Contexts::applies(&f) {
                v.push(Box::new(Float24Contexts::new(f)));
            }
            // Revision 26 (doc/FORMAT.md 4.37.1): repeated records' ranks.
            if config.since(26) && Float7Contexts::applies(&f) {
                v.push(Box::new(Float26Contexts::new(f)));
            }
            // Revision 44 (doc/FORMAT.md 4.55.4): OLS on the values; revision
            // 46 (4.57.4): not where it would be idle or misread, and it
            // finds its own phase.
            if config.since(44) && (!config.since(46) || Float44Contexts::applies46(&f)) {
                v.push(Box::new(Float44Contexts::with_phase(f, config.since(46))));
            }
            if config.record {
                v.push(Box::new(RecordContexts));
            }
            v
        }
        // Revision 38: long NLMS stages over stereo residuals (FORMAT 4.49.4).
        DataKind::Audio(a) if config.since(38) => vec![
            Box::new(OrderContexts::new(0, 0)),
            Box::new(Audio14Contexts::with_nlms(a)),
        ],
        // Revision 14: more OLS predictors and contexts (FORMAT 4.25.5).
        DataKind::Audio(a) if config.since(14) => vec![
            Box::new(OrderContexts::new(0, 0)),
            Box::new(Audio14Contexts::new(a)),
        ],
        // Revision 4: the OLS/LMS audio family (doc/FORMAT.md 4.15.5).
        DataKind::Audio(a) if config.revision >= 4 => vec![
            Box::new(OrderContexts::new(0, 0)),
            Box::new(Audio4Contexts::new(a)),
        ],
        DataKind::Audio(a) => vec![
            Box::new(OrderContexts::new(0, 0)),
            Box::new(AudioContexts::new(a)),
        ],
        // Revision 44 (doc/FORMAT.md 4.55.1): revision 42's and maps of strong moved predictions.
        DataKind::Image(i) if config.since(44) && matches!(i.pixel_bytes, 3 | 4) => vec![
            Box::new(OrderContexts::new(0b1, 0)),
            Box::new(Image14Contexts::new(i).with_revision38_last_mixer()),
            Box::new(Image22Contexts::new(i)),
            Box::new(Image42Contexts::new(i)),
            Box::new(Image44Contexts::new(i)),
        ],
        // Revision 42 (doc/FORMAT.md 4.53.3): revision 40's and residual and texture maps.
        DataKind::Image(i) if config.since(42) && matches!(i.pixel_bytes, 3 | 4) => vec![
            Box::new(OrderContexts::new(0b1, 0)),
            Box::new(Image14Contexts::new(i).with_revision38_last_mixer()),
            Box::new(Image22Contexts::new(i)),
            Box::new(Image42Contexts::new(i)),
        ],
        // Revision 40 (doc/FORMAT.md 4.51.3): revision 38's and ranked predictors' APMs.
        DataKind::Image(i) if config.since(40) && matches!(i.pixel_bytes, 3 | 4) => vec![
            Box::new(OrderContexts::new(0b1, 0)),
            Box::new(Image14Contexts::new(i).with_revision38_last_mixer()),
            Box::new(Image22Contexts::new(i)),
            Box::new(Image40Contexts::new(i)),
        ],
        // Revision 38 (doc/FORMAT.md 4.49.2): revision 32's families, the
        // revision-14 family's last mixer rounded and slower.
        DataKind::Image(i) if config.since(38) && matches!(i.pixel_bytes, 3 | 4) => vec![
            Box::new(OrderContexts::new(0b1, 0)),
            Box::new(Image14Contexts::new(i).with_revision38_last_mixer()),
            Box::new(Image22Contexts::new(i)),
            Box::new(Image32Contexts::new(i)),
        ],
        // Revision 32 (doc/FORMAT.md 4.43.4): learnt maps per predictor.
        DataKind::Image(i) if config.since(32) && matches!(i.pixel_bytes, 3 | 4) => vec![
            Box::new(OrderContexts::new(0b1, 0)),
            Box::new(Image14Contexts::new(i)),
            Box::new(Image22Contexts::new(i)),
            Box::new(Image32Contexts::new(i)),
        ],
        // Revision 22 (doc/FORMAT.md 4.33.2): more mixer selectors.
        DataKind::Image(i) if config.since(22) && matches!(i.pixel_bytes, 3 | 4) => vec![
            Box::new(OrderContexts::new(0b1, 0)),
            Box::new(Image14Contexts::new(i)),
            Box::new(Image22Contexts::new(i)),
        ],
        // Revision 18 (doc/FORMAT.md 4.29.2): OLS predictors.
        DataKind::Image(i) if config.since(18) && matches!(i.pixel_bytes, 3 | 4) => vec![
            Box::new(OrderContexts::new(0b1, 0)),
            Box::new(Image14Contexts::new(i)),
            Box::new(Image18Contexts::new(i)),
        ],
        // Revision 16 (doc/FORMAT.md 4.27.2): blended predictions.
        DataKind::Image(i) if config.since(16) && matches!(i.pixel_bytes, 3 | 4) => vec![
            Box::new(OrderContexts::new(0b1, 0)),
            Box::new(Image14Contexts::new(i)),
            Box::new(Image16Contexts::new(i)),
        ],
        // Revision 14 (doc/FORMAT.md 4.25.1): the last word.
        DataKind::Image(i) if config.since(14) && matches!(i.pixel_bytes, 3 | 4) => vec![
            Box::new(OrderContexts::new(0b1, 0)),
            Box::new(Image14Contexts::new(i)),
        ],
        // Revision 10 (doc/FORMAT.md 4.21.3): revision 8's family and more.
        DataKind::Image(i) if config.since(10) && matches!(i.pixel_bytes, 3 | 4) => vec![
            Box::new(OrderContexts::new(0b1, 0)),
            Box::new(Image10Contexts::new(i)),
        ],
        // Revision 8 (doc/FORMAT.md 4.19.3): 24- and 32-bit pixels.
        DataKind::Image(i) if config.since(8) && matches!(i.pixel_bytes, 3 | 4) => vec![
            Box::new(OrderContexts::new(0b1, 0)),
            Box::new(Image7Contexts::new(i)),
        ],
        DataKind::Image(i) if config.revision >= 4 => vec![
            Box::new(OrderContexts::new(0b1, 0)),
            Box::new(Pixel4Contexts::new(i)),
        ],
        DataKind::Image(i) if config.revision >= 2 => vec![
            Box::new(OrderContexts::new(0b111, 0)),
            Box::new(Pixel2Contexts::new(i)),
        ],
        DataKind::Image(i) => vec![
            Box::new(OrderContexts::new(0b111, 0)),
            Box::new(PixelContexts::new(i)),
        ],
    }
}

/// The configured families with `special` in place of the image contexts.
fn generic_with(special: Box<dyn ContextModel>, config: &CmConfig) -> Vec<Box<dyn ContextModel>> {
    let mut f: Vec<Box<dyn ContextModel>> = vec![
        Box::new(OrderContexts::new(config.orders, config.long)),
        special,
    ];
    if config.word {
        f.push(Box::new(WordContexts));
    }
    if config.sparse {
        f.push(Box::new(SparseContexts));
    }
    if config.record {
        f.push(Box::new(RecordContexts));
    }
    f
}
