//! `sep.compress_array` / `sep.decompress_array`: the library's lossy mode
//! (`sep::lossy`, format version 2, doc/FORMAT.md section 10) for float
//! arrays; the Python layer (`python/sep/__init__.py`) converts the numpy
//! array to and from raw little-endian bytes.

use crate::{Data, SepError, data_of};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes};
use sep::lossy::{Dtype, Mode, Options};

fn lossy_err(e: sep::lossy::Error) -> PyErr {
    match e {
        sep::lossy::Error::Invalid(_) | sep::lossy::Error::BadNpy(_) => {
            PyValueError::new_err(e.to_string())
        }
        e => SepError::new_err(e.to_string()),
    }
}

/// _compress_array(data, dtype, shape, mode, value, fill=None)
/// --
///
/// Compresses the raw little-endian array `data` of `dtype` (`"f32"` or
/// `"f64"`) and `shape` (1 to 4 axes) within the bound `mode=value` (`"abs"`,
/// `"rel"`, `"psnr"` or `"ratio"`); `fill` is kept exactly.
#[pyfunction(name = "_compress_array")]
#[pyo3(signature = (data, dtype, shape, mode, value, fill=None))]
pub(crate) fn compress_array<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    dtype: &str,
    shape: Vec<usize>,
    mode: &str,
    value: f64,
    fill: Option<f64>,
) -> PyResult<Bound<'py, PyBytes>> {
    let dtype = Dtype::parse(dtype).map_err(lossy_err)?;
    let mode = Mode::parse(&format!("{mode}={value}")).map_err(lossy_err)?;
    let options = Options {
        mode,
        fill,
        ..Options::default()
    };
    let data: Data = data_of(py, data)?;
    let archive = py
        .detach(|| sep::lossy::compress_raw(&data, dtype, &shape, &options))
        .map_err(lossy_err)?;
    Ok(PyBytes::new(py, &archive))
}

/// _decompress_array(data, max_output=None)
/// --
///
/// Decodes a lossy archive; returns `(values, dtype, shape)`: the values as a
/// `bytearray` of little-endian floats (an `.npy` header the archive restores
/// is left out), the dtype name and the shape.
#[pyfunction(name = "_decompress_array")]
#[pyo3(signature = (data, max_output=None))]
pub(crate) fn decompress_array<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    max_output: Option<u64>,
) -> PyResult<(Bound<'py, PyByteArray>, &'static str, Vec<usize>)> {
    let data: Data = data_of(py, data)?;
    if !sep::lossy::is_lossy(&data) {
        return Err(SepError::new_err(
            "not a lossy sep archive (format version 2); use sep.decompress for lossless ones",
        ));
    }
    let (info, out) = py
        .detach(|| {
            let info = sep::lossy::inspect(&data)?;
            let out = sep::lossy::decompress(&data, max_output.unwrap_or(u64::MAX))?;
            Ok((info, out))
        })
        .map_err(lossy_err)?;
    let values = &out[info.container.len()..];
    Ok((PyByteArray::new(py, values), info.dtype.name(), info.shape))
}
