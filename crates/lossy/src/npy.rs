//! The `.npy` container (NumPy's array file): parsing the header of a
//! little-endian `float32`/`float64` C-order array, checked against the data.

use crate::{Dtype, Error};

/// A parsed `.npy` file: its header bytes (kept to restore the file exactly),
/// dtype and shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Npy {
    /// The bytes before the data: magic, version, header length and header.
    pub header: Vec<u8>,
    /// The element type.
    pub dtype: Dtype,
    /// The shape, slowest axis first.
    pub shape: Vec<usize>,
}

/// Whether `bytes` start with the `.npy` magic.
pub fn is_npy(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x93NUMPY")
}

fn bad(why: impl Into<String>) -> Error {
    Error::BadNpy(why.into())
}

/// Parses the header of an `.npy` file and checks that the data that follows
/// it has exactly the length the header declares.
pub fn parse(bytes: &[u8]) -> Result<Npy, Error> {
    parse_inner(bytes, true)
}

/// Parses an `.npy` header alone (the bytes must end where the header does).
pub fn parse_header_only(bytes: &[u8]) -> Result<Npy, Error> {
    parse_inner(bytes, false)
}

fn parse_inner(bytes: &[u8], with_data: bool) -> Result<Npy, Error> {
    if !is_npy(bytes) {
        return Err(bad("no \\x93NUMPY magic"));
    }
    if bytes.len() < 10 {
        return Err(bad("truncated header"));
    }
    let major = bytes[6];
    let (len, start): (usize, usize) = match major {
        1 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(bad("truncated header"));
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        v => return Err(bad(format!("unsupported version {v}"))),
    };
    let end = start
        .checked_add(len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| bad("header length runs past the end of the file"))?;
    let text = std::str::from_utf8(&bytes[start..end]).map_err(|_| bad("header is not text"))?;
    let descr = field(text, "descr")?;
    let dtype = match descr.trim().trim_matches(|c| c == '\'' || c == '"') {
        "<f4" => Dtype::F32,
        "<f8" => Dtype::F64,
        d => {
            return Err(bad(format!(
                "dtype {d} is not supported (only little-endian <f4 and <f8)"
            )));
        }
    };
    let fortran = field(text, "fortran_order")?;
    if fortran.trim() != "False" {
        return Err(bad("fortran_order arrays are not supported"));
    }
    let shape_text = field(text, "shape")?;
    let inner = shape_text
        .trim()
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| bad("shape is not a tuple"))?;
    let mut shape = Vec::new();
    for part in inner.split(',') {
        let p = part.trim();
        if p.is_empty() {
            continue;
        }
        shape.push(
            p.parse::<usize>()
                .map_err(|_| bad(format!("shape entry '{p}' is not a number")))?,
        );
    }
    if shape.is_empty() {
        return Err(bad("0-dimensional arrays are not supported"));
    }
    let data = bytes.len() - end;
    if !with_data && data != 0 {
        return Err(bad("bytes after the header"));
    }
    let expected = shape
        .iter()
        .try_fold(dtype.size(), |a: usize, &d| a.checked_mul(d))
        .ok_or_else(|| bad("shape overflows"))?;
    if with_data && data != expected {
        return Err(bad(format!(
            "header says {} values of {} bytes ({expected} bytes), the file has {data} bytes of data",
            expected / dtype.size(),
            dtype.size()
        )));
    }
    Ok(Npy {
        header: bytes[..end].to_vec(),
        dtype,
        shape,
    })
}

/// The value text of `'key': value` in a header dict (up to the next key or
/// the closing brace; a tuple is kept whole).
fn field<'a>(text: &'a str, key: &str) -> Result<&'a str, Error> {
    let pat1 = format!("'{key}':");
    let pat2 = format!("\"{key}\":");
    let at = text
        .find(&pat1)
        .map(|i| i + pat1.len())
        .or_else(|| text.find(&pat2).map(|i| i + pat2.len()))
        .ok_or_else(|| bad(format!("header has no '{key}'")))?;
    let rest = &text[at..];
    let rest_trim = rest.trim_start();
    if rest_trim.starts_with('(') {
        let close = rest_trim
            .find(')')
            .ok_or_else(|| bad(format!("'{key}' tuple is not closed")))?;
        return Ok(&rest_trim[..=close]);
    }
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    Ok(&rest[..end])
}

/// An `.npy` file (version 1.0) holding `values` of `dtype` with `shape`.
pub fn write(dtype: Dtype, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape_text = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let descr = match dtype {
        Dtype::F32 => "<f4",
        Dtype::F64 => "<f8",
    };
    let mut h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}, }}");
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    out.extend_from_slice(h.as_bytes());
    out.extend_from_slice(data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_it_writes_and_rejects_lies() {
        let data = vec![0u8; 2 * 3 * 4];
        let f = write(Dtype::F32, &[2, 3], &data);
        let n = parse(&f).unwrap();
        assert_eq!((n.dtype, n.shape.clone()), (Dtype::F32, vec![2, 3]));
        assert_eq!(n.header.len() % 64, 0);
        let short = &f[..f.len() - 4];
        assert!(
            parse(short)
                .unwrap_err()
                .to_string()
                .contains("header says 6 values")
        );
        let f8 = String::from_utf8_lossy(&f).replace("<f4", ">f4");
        assert!(parse(f8.as_bytes()).is_err());
        assert_eq!(
            parse(&write(Dtype::F64, &[5], &[0; 40])).unwrap().shape,
            vec![5]
        );
    }
}
