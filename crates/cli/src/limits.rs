//! Resource limits of the command line (issue 14): thread counts, the output limit
//! and their defaults. Kept apart from `main.rs` so that each policy is one function
//! with its reason next to it.

use crate::args::Args;

/// `--max-output` when the user gives none and standard output is a terminal: 64 MiB,
/// far more text than anyone reads on a screen, far less than a decompression bomb
/// writes. Files and pipes get no default limit: decompressors run in pipelines and
/// backups on data of any size (`sep -dc backup.sep | tar x`), where a default cap
/// would break correct work; there the disk or the reader bounds the output, and a
/// failed decompression to a file leaves no file.
pub const TERMINAL_MAX_OUTPUT: u64 = 64 << 20;

/// A limit given on the command line: a size, or `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit(pub Option<u64>);

/// Parses `none`, `65536`, `64K`, `4M`, `2G`, `1T`, `1P` (powers of 1024).
pub fn parse_limit(s: &str) -> Result<Limit, String> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("none") {
        return Ok(Limit(None));
    }
    crate::args::parse_bytes(t, "512M, 2G, none").map(|v| Limit(Some(v)))
}

/// The output limit of a decompression: `--max-output` if given, else
/// [`TERMINAL_MAX_OUTPUT`] when writing to a terminal, else none.
pub fn max_output(args: &Args, to_terminal: bool) -> Option<u64> {
    match args.max_output {
        Some(Limit(l)) => l,
        None => to_terminal.then_some(TERMINAL_MAX_OUTPUT),
    }
}

/// The work limit of a decompression: `--max-work` if given, else the library's
/// default.
pub fn max_work(args: &Args) -> Option<u64> {
    args.max_work
        .map_or(Some(sep::limits::DEFAULT_MAX_WORK), |Limit(l)| l)
}

/// The flag that raises one of the decoder's limits, for messages.
pub fn flag_of(limit: sep::limits::Limit) -> &'static str {
    match limit {
        sep::limits::Limit::Output => "--max-output",
        sep::limits::Limit::Memory => "--memory",
        sep::limits::Limit::Work => "--max-work",
        // A limit a later library adds: its own setter's name is still a hint.
        other => other.setter(),
    }
}

/// `--memory` when the user gives none: half of the machine's RAM (`MemTotal` of
/// `/proc/meminfo`), so that sep leaves room for everything else; 4 GiB where the
/// system does not say.
pub fn default_memory() -> u64 {
    crate::memory::proc_kib("/proc/meminfo", "MemTotal:").map_or(4 << 30, |t| t / 2)
}

/// The memory limit: `--memory` if given, else [`default_memory`].
pub fn memory(args: &Args) -> Option<u64> {
    args.memory.map_or(Some(default_memory()), |Limit(l)| l)
}

/// Estimated peak heap of an encoder with these options: the library's upper
/// bound, [`sep::Options::encoder_memory`] (transforms included).
pub fn encoder_memory(options: &sep::Options) -> Result<u64, sep::Error> {
    options.encoder_memory()
}

/// Fits a compression into `limit`: fewer threads if that is enough, else the largest
/// smaller preset of the same model that fits (with a note for the user), else an
/// error naming the need and the limit.
pub fn fit_compression(
    options: &mut sep::Options,
    limit: Option<u64>,
) -> Result<Option<String>, String> {
    let Some(limit) = limit else {
        return Ok(None);
    };
    let need = |o: &sep::Options| encoder_memory(o).unwrap_or(u64::MAX);
    let one = |model: &sep::Model| {
        need(&sep::Options {
            model: model.clone(),
            threads: 1,
            ..options.clone()
        })
    };
    let first = one(&options.model);
    let mut note = None;
    // A prior (issue 20) fixes the model: only the threads can change.
    if first > limit && options.prior.is_none() {
        let same_kind: Vec<sep::Model> = sep::Preset::ALL
            .into_iter()
            .filter_map(|p| match &options.model {
                // Context mixing stays with or without its networks, as chosen.
                sep::Model::Mix(c) => sep::MixConfig::preset(p)
                    .filter(|m| {
                        m.neural.is_some() == c.neural.is_some()
                            && m.serial.is_some() == c.serial.is_some()
                    })
                    .map(sep::Model::Mix),
                sep::Model::Neural(_) => Some(sep::Model::preset(p)),
                _ => None,
            })
            .collect();
        let best = same_kind
            .into_iter()
            .map(|m| (one(&m), m))
            .filter(|(n, _)| *n <= limit)
            .max_by_key(|(n, _)| *n);
        let Some((n, model)) = best else {
            return Err(format!(
                "model {} needs about {} of memory, more than the limit of {} (-M/--memory), and no smaller preset of it fits",
                options.model.name(),
                human(first),
                human(limit)
            ));
        };
        note = Some(format!(
            "the chosen preset needs about {} of memory, more than the limit of {} (-M/--memory); using the {} preset that needs {} ({})",
            human(first),
            human(limit),
            options.model.name(),
            human(n),
            describe(&model)
        ));
        options.model = model;
    }
    while options.threads > 1 && need(options) > limit {
        options.threads -= 1;
    }
    Ok(note)
}

fn describe(model: &sep::Model) -> String {
    sep::Options {
        model: model.clone(),
        ..sep::Options::default()
    }
    .header()
    .map_or_else(|_| model.name().to_string(), |(_, c)| c.describe())
}

fn human(n: u64) -> String {
    if n >= 1 << 30 {
        format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn limits_parse() {
        assert_eq!(parse_limit("none"), Ok(Limit(None)));
        assert_eq!(parse_limit("512M"), Ok(Limit(Some(512 << 20))));
        assert_eq!(parse_limit("2G"), Ok(Limit(Some(2 << 30))));
        assert_eq!(parse_limit("3T"), Ok(Limit(Some(3 << 40))));
        assert_eq!(parse_limit("0"), Ok(Limit(Some(0))));
        assert!(parse_limit("1Q").is_err());
        assert!(parse_limit("99999999P").is_err());
        assert!(parse_limit("G").is_err());
    }

    #[test]
    fn output_limit_defaults_to_none_except_on_a_terminal() {
        let args = |v: &[&str]| Args::try_parse_from([&["sep"], v].concat()).unwrap();
        assert_eq!(max_output(&args(&[]), false), None);
        assert_eq!(max_output(&args(&[]), true), Some(TERMINAL_MAX_OUTPUT));
        assert_eq!(
            max_output(&args(&["--max-output", "1K"]), false),
            Some(1024)
        );
        assert_eq!(max_output(&args(&["--max-output", "none"]), true), None);
        assert_eq!(max_work(&args(&[])), Some(sep::limits::DEFAULT_MAX_WORK));
        assert_eq!(max_work(&args(&["--max-work", "1P"])), Some(1 << 50));
        assert_eq!(max_work(&args(&["--max-work", "none"])), None);
        assert_eq!(memory(&args(&["-M", "2G"])), Some(2 << 30));
        assert_eq!(memory(&args(&["--memory", "none"])), None);
        let half = memory(&args(&[])).unwrap();
        assert!(half > 64 << 20 && half == default_memory(), "{half}");
    }

    #[test]
    fn compression_fits_the_memory_limit() {
        let max = sep::Options {
            model: sep::Model::mix_preset(sep::Preset::Max),
            block_size: Some(16 << 20),
            threads: 2,
            ..sep::Options::default()
        };
        let need = |m: sep::Preset, t| {
            encoder_memory(&sep::Options {
                model: sep::Model::mix_preset(m),
                threads: t,
                ..max.clone()
            })
            .unwrap()
        };
        // Enough for two threads of max: nothing changes.
        let mut o = max.clone();
        assert_eq!(
            fit_compression(&mut o, Some(need(sep::Preset::Max, 2))),
            Ok(None)
        );
        assert_eq!(o, max);
        // Enough for one: one thread.
        let mut o = max.clone();
        assert_eq!(
            fit_compression(&mut o, Some(need(sep::Preset::Max, 1))),
            Ok(None)
        );
        assert_eq!((o.model.clone(), o.threads), (max.model.clone(), 1));
        // Less: the default preset, with a note.
        let mut o = max.clone();
        let note = fit_compression(&mut o, Some(need(sep::Preset::Max, 1) - 1)).unwrap();
        assert!(note.unwrap().contains("using the mix preset"));
        assert_eq!(o.model, sep::Model::mix_preset(sep::Preset::Default));
        // Too little for any: an error naming need and limit.
        let mut o = max.clone();
        let e = fit_compression(&mut o, Some(1 << 20)).unwrap_err();
        assert!(
            e.contains("no smaller preset") && e.contains("1.0 MiB"),
            "{e}"
        );
    }
}
