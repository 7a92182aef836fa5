//! Issue 22: random access for `SepFile.seek()`: [`RangeReader`] decodes from a
//! content offset of a seekable Python file object, reading only the blocks
//! from there on (found with the seek table, or by walking the block headers),
//! and [`content_length`] gives the content's length the same way.

use crate::{SepError, lock, to_py};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::Mutex;

/// A seekable Python binary file object as a Rust reader, the archive starting
/// at `base` in it; each call takes the GIL.
struct PyFile {
    fp: Py<PyAny>,
    base: u64,
}

fn py_io(e: PyErr) -> io::Error {
    io::Error::other(e.to_string())
}

impl Read for PyFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Python::attach(|py| {
            let data = self
                .fp
                .call_method1(py, "read", (buf.len(),))
                .map_err(py_io)?;
            let data = data.bind(py);
            let bytes = data
                .cast::<PyBytes>()
                .map_err(|_| io::Error::other("the file's read() did not return bytes"))?
                .as_bytes();
            let n = bytes.len().min(buf.len());
            buf[..n].copy_from_slice(&bytes[..n]);
            Ok(n)
        })
    }
}

impl Seek for PyFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let (offset, whence) = match pos {
            SeekFrom::Start(n) => (self.base as i128 + i128::from(n), 0),
            SeekFrom::Current(n) => (i128::from(n), 1),
            SeekFrom::End(n) => (i128::from(n), 2),
        };
        let at: u64 = Python::attach(|py| {
            self.fp
                .call_method1(py, "seek", (offset, whence))
                .and_then(|r| r.extract(py))
                .map_err(py_io)
        })?;
        at.checked_sub(self.base)
            .ok_or_else(|| io::Error::other("seek before the start of the archive"))
    }
}

/// _RangeReader(fp, start, base=0, threads=1, max_output=None)
/// --
///
/// Decodes the content of the archive(s) in the seekable binary file `fp`
/// (starting at byte `base` of it) from content offset `start` to the end; a
/// `start` past the end is clamped to it. `position` is where it starts.
#[pyclass(module = "sep", name = "_RangeReader")]
pub(crate) struct RangeReader {
    /// Boxed for the decoder's 64-byte alignment (see `EncoderState`).
    dec: Mutex<Option<Box<sep::Decoder<PyFile>>>>,
    #[pyo3(get)]
    position: u64,
}

#[pymethods]
impl RangeReader {
    #[new]
    #[pyo3(signature = (fp, start, base=0, threads=1, max_output=None))]
    fn new(
        py: Python<'_>,
        fp: Py<PyAny>,
        start: u64,
        base: u64,
        threads: usize,
        max_output: Option<u64>,
    ) -> PyResult<Self> {
        let open = |start: u64, fp: Py<PyAny>| {
            sep::Decoder::range(PyFile { fp, base }, start, None)
                .map(|d| d.with_threads(threads).with_max_output(max_output))
        };
        let again = fp.clone_ref(py);
        let (dec, position) = match py.detach(|| open(start, fp)) {
            Ok(d) => (d, start),
            Err(sep::Error::RangePastEnd { length, .. }) => {
                (py.detach(|| open(length, again)).map_err(to_py)?, length)
            }
            Err(e) => return Err(to_py(e)),
        };
        Ok(RangeReader {
            dec: Mutex::new(Some(Box::new(dec))),
            position,
        })
    }

    /// read(size)
    /// --
    ///
    /// Up to `size` decoded bytes; `b""` at the end.
    fn read(&self, py: Python<'_>, size: usize) -> PyResult<Py<PyBytes>> {
        let out = py.detach(|| -> PyResult<Vec<u8>> {
            let mut st = lock(&self.dec);
            let Some(dec) = st.as_mut() else {
                return Err(SepError::new_err("the reader failed earlier"));
            };
            let mut out = vec![0u8; size.min(1 << 24)];
            let mut n = 0;
            while n < out.len() {
                match dec.read(&mut out[n..]) {
                    Ok(0) => break,
                    Ok(k) => n += k,
                    Err(e) => {
                        *st = None;
                        return Err(to_py(sep::Error::from_io(e)));
                    }
                }
            }
            out.truncate(n);
            Ok(out)
        })?;
        Ok(PyBytes::new(py, &out).unbind())
    }
}

/// _content_length(fp, base=0)
/// --
///
/// The content length of the archive(s) in the seekable binary file `fp`
/// (starting at byte `base`), from its seek table or by walking its block
/// headers; nothing is decoded.
#[pyfunction(name = "_content_length")]
#[pyo3(signature = (fp, base=0))]
pub(crate) fn content_length(py: Python<'_>, fp: Py<PyAny>, base: u64) -> PyResult<u64> {
    py.detach(|| sep::content_length(&mut PyFile { fp, base }))
        .map_err(to_py)
}
