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
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a size (examples: 512M, 2G, none)"))?;
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        "p" | "pb" | "pib" => 50,
        _ => {
            return Err(format!(
                "'{s}': unknown unit '{unit}' (use K, M, G, T or P)"
            ));
        }
    };
    n.checked_shl(shift)
        .filter(|&v| v >> shift == n)
        .map(|v| Limit(Some(v)))
        .ok_or_else(|| format!("'{s}' is too large"))
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
    }
}
