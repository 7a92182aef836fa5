//! `sep.Prior`: a prior file (issue 20, doc/FORMAT.md section 11) loaded once
//! and shared by every `compress`/`decompress` call given it.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Prior(data)
/// --
///
/// A prior written by `sep train` (or `Prior.train`), loaded from its bytes.
/// Give it as `prior=` to `compress` and `decompress`; an archive coded with a
/// prior decodes only with the same one.
#[pyclass(module = "sep._sep", name = "Prior", frozen)]
pub(crate) struct PyPrior {
    pub(crate) inner: sep::Prior,
}

#[pymethods]
impl PyPrior {
    #[new]
    fn new(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let data = crate::data_of(py, data)?;
        let inner = py
            .detach(|| sep::Prior::from_bytes(&data))
            .map_err(crate::to_py)?;
        Ok(PyPrior { inner })
    }

    /// Prior.train(samples, preset="default") -> bytes
    /// --
    ///
    /// Trains a prior on `samples` (a list of bytes-like objects) for a
    /// context-mixing preset and returns the prior file's bytes (what
    /// `sep train` writes).
    #[staticmethod]
    #[pyo3(signature = (samples, preset=None))]
    fn train<'py>(
        py: Python<'py>,
        samples: Vec<Bound<'py, PyAny>>,
        preset: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let model = crate::model_of(preset)?;
        let samples = samples
            .iter()
            .map(|s| crate::data_of(py, s))
            .collect::<PyResult<Vec<_>>>()?;
        let file = py
            .detach(|| {
                let views: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
                sep::Prior::train(&model, &views)
            })
            .map_err(crate::to_py)?;
        Ok(PyBytes::new(py, &file))
    }

    /// The prior's id (32 hexadecimal digits), as archives coded with it name it.
    #[getter]
    fn id(&self) -> String {
        self.inner.id_hex()
    }

    fn __repr__(&self) -> String {
        format!("sep.Prior(id={})", self.inner.id_hex())
    }
}
