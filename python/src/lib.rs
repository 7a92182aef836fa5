//! The `sep._sep` extension module: the Rust side of the `sep` Python package.
//!
//! It holds what must run outside the GIL: one-shot [`compress`] and
//! [`decompress`], the incremental [`SepCompressor`] (an [`sep::Encoder`] whose
//! output is collected and handed back per call) and [`SepDecompressor`] (an
//! [`sep::Decoder`] on a thread of its own, fed through a queue). The Python
//! layer (`python/sep/__init__.py`) adds `open()`/`SepFile` and the docs of the
//! package; the behaviour is the library's: archives are those `sep -c` writes.

use pyo3::create_exception;
use pyo3::exceptions::{PyEOFError, PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::PyBytes;
use sep::format::Record;
use std::collections::VecDeque;
use std::io::{self, Cursor, Read, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

mod lossy; // issue 22: sep.compress_array / decompress_array
mod prior; // issue 20: sep.Prior
mod range; // issue 22: SepFile.seek()
mod stream;
use stream::*;

create_exception!(
    _sep,
    SepError,
    PyException,
    "A sep archive could not be read or written: corrupt or truncated data, a limit exceeded, an I/O error."
);

/// The library's error as a Python exception: invalid options are
/// `ValueError` (as `lzma` does), everything else `SepError`.
fn to_py(e: sep::Error) -> PyErr {
    match e {
        sep::Error::InvalidOption(_) | sep::Error::BlockSize { .. } => {
            PyValueError::new_err(e.to_string())
        }
        e => SepError::new_err(e.to_string()),
    }
}

/// Locks a mutex, going on with the data if a thread panicked while holding it
/// (the state is then checked by the caller's flags).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Input bytes held so that they can be read without the GIL (`bytes` are
/// borrowed, not copied).
struct Data(PyBackedBytes);

impl std::ops::Deref for Data {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

/// Reads a bytes-like object: `bytes` and `bytearray` directly, any other
/// object with the buffer protocol (memoryview, array, numpy arrays) through
/// `memoryview(obj).tobytes()`, in C order. Anything else is a `TypeError`,
/// as for `lzma.compress`.
fn data_of(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Data> {
    if let Ok(b) = obj.extract::<PyBackedBytes>() {
        return Ok(Data(b));
    }
    let view = py
        .import("builtins")?
        .getattr("memoryview")?
        .call1((obj,))
        .map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "a bytes-like object is required, not '{}'",
                obj.get_type()
                    .name()
                    .map_or_else(|_| "?".to_string(), |n| n.to_string())
            ))
        })?;
    Ok(Data(view.call_method0("tobytes")?.extract()?))
}

/// The model a preset names: a level 1-9 as `sep -1` .. `sep -9`, or a name:
/// `store`, `order2`, or a preset of `sep -p` (`fast`, `default`, `max`,
/// `hybrid`, the paper's presets). `None` is `default`.
fn model_of(preset: Option<&Bound<'_, PyAny>>) -> PyResult<sep::Model> {
    use sep::{Model, Preset};
    let Some(p) = preset else {
        return Ok(Model::default());
    };
    if let Ok(level) = p.extract::<i64>() {
        return match level {
            1 => Ok(Model::Order2),
            2 | 3 => Ok(Model::mix_preset(Preset::Fast)),
            4..=6 => Ok(Model::mix_preset(Preset::Default)),
            7..=9 => Ok(Model::mix_preset(Preset::Max)),
            _ => Err(PyValueError::new_err(format!(
                "invalid preset level {level}: levels are 1..9"
            ))),
        };
    }
    let name: String = p.extract().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err("preset must be an int (1..9), a str or None")
    })?;
    match name.as_str() {
        "store" => Ok(Model::Store),
        "order2" => Ok(Model::Order2),
        "mix" => Ok(Model::default()),
        n => Preset::from_name(n).map(Model::mix_preset).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown preset {n:?}: use 1..9, store, order2, fast, default, max, hybrid or paper-*"
            ))
        }),
    }
}

/// The options for a preset, thread count, block size and archive format
/// version (1 or 3, as `sep --format-version`; anything else is a
/// `ValueError`).
fn options(
    preset: Option<&Bound<'_, PyAny>>,
    threads: usize,
    block_size: Option<u32>,
    format_version: u8,
) -> PyResult<sep::Options> {
    if !sep::format::is_supported_version(format_version) {
        return Err(PyValueError::new_err(format!(
            "format_version {format_version}: sep writes 1 or 3"
        )));
    }
    let options = sep::Options {
        model: model_of(preset)?,
        threads,
        block_size,
        format_version,
        ..sep::Options::default()
    };
    options.effective_block_size().map_err(to_py)?;
    Ok(options)
}

/// compress(data, preset=None, threads=1, block_size=None, seek_table=False, prior=None, format_version=3)
/// --
///
/// Compresses `data` into a complete archive, the same bytes `sep -c` writes
/// for a file holding `data` with the same settings (`seek_table`: `sep -c
/// --seek-table`, an index of the blocks for random access; `prior`: a
/// `sep.Prior`, as `sep --prior FILE`, whose model is used when `preset` is
/// None; `format_version`: 3, the compact layout, or 1, as `sep
/// --format-version 1`, for readers older than version 3).
#[pyfunction]
#[pyo3(signature = (data, preset=None, threads=1, block_size=None, seek_table=false, prior=None, format_version=3))]
// One argument per Python keyword, as `lzma.compress` has them.
#[allow(clippy::too_many_arguments)]
fn compress<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    preset: Option<&Bound<'py, PyAny>>,
    threads: usize,
    block_size: Option<u32>,
    seek_table: bool,
    prior: Option<PyRef<'py, prior::PyPrior>>,
    format_version: u8,
) -> PyResult<Bound<'py, PyBytes>> {
    let mut options = sep::Options {
        seek_table,
        ..options(preset, threads, block_size, format_version)?
    };
    if let Some(p) = prior {
        if preset.is_none() {
            options.model = p.inner.model();
        }
        options.prior = Some(p.inner.clone());
    }
    let data = data_of(py, data)?;
    let archive = py
        .detach(|| sep::compress(&data, &options))
        .map_err(to_py)?;
    Ok(PyBytes::new(py, &archive))
}

/// decompress(data, threads=1, max_output=None, prior=None)
/// --
///
/// Decompresses a complete archive (or several concatenated ones); an archive
/// coded with a prior needs the same `sep.Prior`.
#[pyfunction]
#[pyo3(signature = (data, threads=1, max_output=None, prior=None))]
fn decompress<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    threads: usize,
    max_output: Option<u64>,
    prior: Option<PyRef<'py, prior::PyPrior>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let data = data_of(py, data)?;
    let prior = prior.map(|p| p.inner.clone());
    let out = py
        .detach(|| -> sep::Result<Vec<u8>> {
            let mut dec = sep::Decoder::new(&data[..])?
                .with_prior(prior)
                .with_threads(threads)
                .with_max_output(max_output);
            let mut out = Vec::new();
            dec.read_to_end(&mut out).map_err(sep::Error::from_io)?;
            Ok(out)
        })
        .map_err(to_py)?;
    Ok(PyBytes::new(py, &out))
}

/// A `Write` into a buffer shared with the compressor object.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        lock(&self.0).extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The encoder of a [`SepCompressor`], until `flush` finishes it.
struct EncoderState {
    /// Boxed: the encoder holds cache-line-aligned (64-byte) state, and Python
    /// allocates objects with 16-byte alignment only, so it must not live in
    /// the Python object itself (a debug build panics on the misaligned
    /// pointer; a release build would be undefined behaviour).
    encoder: Option<Box<sep::Encoder<Sink>>>,
    failed: bool,
}

impl Drop for EncoderState {
    fn drop(&mut self) {
        if let Some(e) = self.encoder.take() {
            e.abandon();
        }
    }
}

/// SepCompressor(preset=None, threads=1, block_size=None, content_length=None, seek_table=False, format_version=3)
/// --
///
/// An incremental compressor: `compress(data)` returns the archive bytes
/// ready so far (often none: blocks are coded when full), `flush()` the rest.
/// The concatenated results are one archive. With `content_length`, the exact
/// number of bytes that will be fed, the archive is the one `sep -c` writes
/// for a file of that length (the header records it and the block size
/// shrinks to it); `flush()` fails if a different number was fed. With
/// `seek_table`, `flush()` also writes the archive's seek table (random access);
/// `format_version` as in `compress`.
#[pyclass(module = "sep")]
struct SepCompressor {
    sink: Sink,
    state: Mutex<EncoderState>,
}

impl SepCompressor {
    fn take(&self, py: Python<'_>) -> Py<PyBytes> {
        let out = std::mem::take(&mut *lock(&self.sink.0));
        PyBytes::new(py, &out).unbind()
    }
}

#[pymethods]
impl SepCompressor {
    #[new]
    #[pyo3(signature = (preset=None, threads=1, block_size=None, content_length=None, seek_table=false, format_version=3))]
    fn new(
        preset: Option<&Bound<'_, PyAny>>,
        threads: usize,
        block_size: Option<u32>,
        content_length: Option<u64>,
        seek_table: bool,
        format_version: u8,
    ) -> PyResult<Self> {
        let options = sep::Options {
            content_length,
            seek_table,
            ..options(preset, threads, block_size, format_version)?
        };
        let sink = Sink::default();
        let encoder = Box::new(sep::Encoder::new(sink.clone(), &options).map_err(to_py)?);
        Ok(SepCompressor {
            sink,
            state: Mutex::new(EncoderState {
                encoder: Some(encoder),
                failed: false,
            }),
        })
    }

    /// compress(data)
    /// --
    ///
    /// Feeds `data`; returns the archive bytes produced so far (may be empty).
    fn compress(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Py<PyBytes>> {
        let data = data_of(py, data)?;
        py.detach(|| -> PyResult<()> {
            let mut st = lock(&self.state);
            if st.failed {
                return Err(SepError::new_err("the compressor failed earlier"));
            }
            let Some(enc) = st.encoder.as_mut() else {
                return Err(PyValueError::new_err("compressor has been flushed"));
            };
            if let Err(e) = enc.write_all(&data) {
                st.failed = true;
                return Err(to_py(sep::Error::from_io(e)));
            }
            Ok(())
        })?;
        Ok(self.take(py))
    }

    /// flush()
    /// --
    ///
    /// Codes what is left and writes the end record; returns the last bytes
    /// of the archive. The compressor cannot be used afterwards.
    fn flush(&self, py: Python<'_>) -> PyResult<Py<PyBytes>> {
        py.detach(|| -> PyResult<()> {
            let mut st = lock(&self.state);
            if st.failed {
                return Err(SepError::new_err("the compressor failed earlier"));
            }
            let Some(enc) = st.encoder.take() else {
                return Err(PyValueError::new_err("repeated call to flush()"));
            };
            enc.finish().map(drop).map_err(|e| {
                st.failed = true;
                to_py(e)
            })
        })?;
        Ok(self.take(py))
    }
}

/// SepDecompressor(max_output=None)
/// --
///
/// An incremental decompressor of one archive: `decompress(data)` returns
/// the bytes decoded so far; `eof` is true once the archive's end was reached
/// and every byte returned; bytes after the archive are in `unused_data`.
/// Decoding runs on a thread of its own, without the GIL. A block's bytes are
/// returned once the next block (or the end record) has been fed too: the
/// decoder reads one block ahead, so memory holds at most about two blocks.
#[pyclass(module = "sep")]
struct SepDecompressor {
    link: Link,
    state: Mutex<DecState>,
    max_output: Option<u64>,
}

impl Drop for SepDecompressor {
    fn drop(&mut self) {
        let (m, cv) = &*self.link;
        lock(m).abandoned = true;
        cv.notify_all();
    }
}

#[pymethods]
impl SepDecompressor {
    #[new]
    #[pyo3(signature = (max_output=None))]
    fn new(max_output: Option<u64>) -> Self {
        SepDecompressor {
            link: Arc::new((Mutex::new(Shared::default()), Condvar::new())),
            state: Mutex::new(DecState {
                frame: Frame::Header,
                pending: Vec::new(),
                unused: Vec::new(),
                thread: None,
                error: None,
            }),
            max_output,
        }
    }

    /// decompress(data, max_length=-1)
    /// --
    ///
    /// Feeds `data`; returns the decoded bytes available, at most
    /// `max_length` of them when it is not negative (call again with `b""`
    /// for the rest while `needs_input` is false).
    #[pyo3(signature = (data, max_length=-1))]
    fn decompress(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        max_length: i64,
    ) -> PyResult<Py<PyBytes>> {
        let data = data_of(py, data)?;
        let out = py.detach(|| -> PyResult<Vec<u8>> {
            let mut st = lock(&self.state);
            if let Some(e) = &st.error {
                return Err(SepError::new_err(e.clone()));
            }
            let (m, cv) = &*self.link;
            if matches!(st.frame, Frame::Done) {
                let s = lock(m);
                if s.finished && s.output.is_empty() {
                    return Err(PyEOFError::new_err("already at end of stream"));
                }
            }
            st.pending.extend_from_slice(&data);
            let (forward, done) = st.frame().map_err(|e| {
                st.error = Some(e.to_string());
                to_py(e)
            })?;
            if st.thread.is_none() && !forward.is_empty() {
                let link = self.link.clone();
                let max_output = self.max_output;
                st.thread = Some(std::thread::spawn(move || decode_thread(link, max_output)));
            }
            let mut s = lock(m);
            s.input.extend(forward);
            s.closed |= done;
            let limit = usize::try_from(max_length).unwrap_or(usize::MAX);
            s.cap = limit.max(1 << 20);
            cv.notify_all();
            if st.thread.is_some() {
                while !(s.finished || s.input.is_empty() && s.waiting || s.output.len() >= limit) {
                    s = cv.wait(s).unwrap_or_else(|p| p.into_inner());
                }
            }
            if let Some(e) = s.error.clone() {
                st.error = Some(e.clone());
                return Err(SepError::new_err(e));
            }
            let n = limit.min(s.output.len());
            let out: Vec<u8> = s.output.drain(..n).collect();
            cv.notify_all();
            Ok(out)
        })?;
        Ok(PyBytes::new(py, &out).unbind())
    }

    /// True once the end of the archive was reached and all its bytes returned.
    #[getter]
    fn eof(&self) -> bool {
        let st = lock(&self.state);
        let s = lock(&self.link.0);
        matches!(st.frame, Frame::Done) && s.finished && s.error.is_none() && s.output.is_empty()
    }

    /// True when the decoder waits for more input: false while decoded bytes
    /// wait to be returned (after a call limited by `max_length`), while
    /// input already fed is still being decoded, and at the end; then
    /// `decompress(b"")` returns more.
    #[getter]
    fn needs_input(&self) -> bool {
        let st = lock(&self.state);
        let s = lock(&self.link.0);
        if matches!(st.frame, Frame::Done) && s.finished {
            return false;
        }
        let idle = st.thread.is_none() || s.input.is_empty() && s.waiting;
        s.output.is_empty() && idle && !s.finished
    }

    /// The bytes fed after the end of the archive.
    #[getter]
    fn unused_data<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &lock(&self.state).unused)
    }
}

/// The `sep._sep` module.
#[pymodule]
fn _sep(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SepError", m.py().get_type::<SepError>())?;
    m.add_function(wrap_pyfunction!(compress, m)?)?;
    m.add_function(wrap_pyfunction!(decompress, m)?)?;
    m.add_class::<SepCompressor>()?;
    m.add_class::<SepDecompressor>()?;
    m.add_class::<prior::PyPrior>()?;
    m.add_class::<range::RangeReader>()?;
    m.add_function(wrap_pyfunction!(range::content_length, m)?)?;
    m.add_function(wrap_pyfunction!(lossy::compress_array, m)?)?;
    m.add_function(wrap_pyfunction!(lossy::decompress_array, m)?)?;
    m.add("FORMAT_VERSION", sep::format::FORMAT_VERSION)?;
    m.add("MAX_THREADS", sep::MAX_THREADS)?;
    Ok(())
}

// Python allocates objects with 16-byte alignment; a pyclass that needs more
// is placed misaligned (see `EncoderState::encoder`).
const _: () = assert!(std::mem::align_of::<SepCompressor>() <= 16);
const _: () = assert!(std::mem::align_of::<SepDecompressor>() <= 16);
