//! The lossy archive's header (doc/FORMAT.md section 10): writing, reading
//! with every field checked, and [`inspect`].

use crate::*;

pub(crate) fn write_header(info: &Info) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&MAGIC);
    h.extend_from_slice(&[FORMAT_VERSION, info.revision, 0, 0]);
    let (mode_id, mode_value) = info.mode.id();
    h.push(match info.dtype {
        Dtype::F32 => 1,
        Dtype::F64 => 2,
    });
    h.push(info.shape.len() as u8);
    h.push(info.predictor.id() + if info.grid.is_some() { 2 } else { 0 });
    h.push(mode_id);
    h.extend_from_slice(&mode_value.to_bits().to_le_bytes());
    h.extend_from_slice(&info.bound.to_bits().to_le_bytes());
    h.extend_from_slice(&[info.fills.len() as u8, 0, 0, 0]);
    for &d in &info.shape {
        h.extend_from_slice(&(d as u64).to_le_bytes());
    }
    for &f in &info.fills {
        h.extend_from_slice(&f.to_le_bytes());
    }
    if let Some((offset, step)) = info.grid {
        h.extend_from_slice(&offset.to_bits().to_le_bytes());
        h.extend_from_slice(&step.to_bits().to_le_bytes());
    }
    h.extend_from_slice(&(info.container.len() as u32).to_le_bytes());
    h.extend_from_slice(&info.container);
    h.extend_from_slice(&(info.payload_len).to_le_bytes());
    let check = xxh3_64(&h) as u32;
    h.extend_from_slice(&check.to_le_bytes());
    h
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Error> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| Error::Corrupt(format!("truncated in {what}")))?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self, what: &str) -> Result<u8, Error> {
        Ok(self.take(1, what)?[0])
    }
    fn u32(&mut self, what: &str) -> Result<u32, Error> {
        let s = self.take(4, what)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn u64(&mut self, what: &str) -> Result<u64, Error> {
        let s = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(u64::from_le_bytes(a))
    }
}

pub(crate) fn corrupt(s: impl Into<String>) -> Error {
    Error::Corrupt(s.into())
}

/// Reads and checks the header; returns it and the offset of the payload.
pub(crate) fn read_header(a: &[u8]) -> Result<(Info, usize), Error> {
    if a.len() < 4 || a[..4] != MAGIC {
        return Err(corrupt("not a sep archive (bad magic)"));
    }
    let mut r = Reader { b: a, pos: 4 };
    let version = r.u8("format_version")?;
    if version != FORMAT_VERSION {
        return Err(corrupt(format!("format_version is {version}, expected 2")));
    }
    let revision = r.u8("coder")?;
    if revision >= crate::model::REVISIONS {
        return Err(corrupt(format!(
            "coder is {revision}, must be below {}",
            crate::model::REVISIONS
        )));
    }
    if r.take(2, "reserved")? != [0, 0] {
        return Err(corrupt("reserved bytes are not 0"));
    }
    let dtype = match r.u8("dtype")? {
        1 => Dtype::F32,
        2 => Dtype::F64,
        v => return Err(corrupt(format!("dtype is {v}, must be 1 or 2"))),
    };
    let ndim = usize::from(r.u8("ndim")?);
    if !(1..=MAX_DIMS).contains(&ndim) {
        return Err(corrupt(format!("ndim is {ndim}, must be 1..=4")));
    }
    let predictor_id = r.u8("predictor")?;
    let predictor = match predictor_id {
        1 | 3 => Predictor::Lorenzo,
        2 | 4 => Predictor::Interpolation,
        5 => Predictor::InterpolationByLevel,
        v => return Err(corrupt(format!("predictor is {v}, must be 1..=5"))),
    };
    let mode_id = r.u8("mode")?;
    let mode_value = f64::from_bits(r.u64("mode_value")?);
    let mode = match mode_id {
        1 => Mode::Abs(mode_value),
        2 => Mode::Rel(mode_value),
        3 => Mode::Psnr(mode_value),
        4 => Mode::Ratio(mode_value),
        v => return Err(corrupt(format!("mode is {v}, must be 1..=4"))),
    };
    let bound = f64::from_bits(r.u64("bound")?);
    if !(bound > 0.0 && bound.is_finite()) {
        return Err(corrupt(format!(
            "bound is {bound}, must be finite and above 0"
        )));
    }
    let nfill = usize::from(r.u8("fill_count")?);
    if r.take(3, "reserved")? != [0, 0, 0] {
        return Err(corrupt("reserved bytes are not 0"));
    }
    if nfill > MAX_FILLS {
        return Err(corrupt(format!("fill_count is {nfill}, at most 4")));
    }
    let mut shape = Vec::with_capacity(ndim);
    for _ in 0..ndim {
        let d = r.u64("dims")?;
        if d == 0 || d > 1 << 40 {
            return Err(corrupt(format!("a dimension is {d}")));
        }
        shape.push(d as usize);
    }
    let mut fills = Vec::with_capacity(nfill);
    for _ in 0..nfill {
        let f = r.u64("fills")?;
        if dtype == Dtype::F32 && f >> 32 != 0 {
            return Err(corrupt("an f32 fill value has bits above 32"));
        }
        fills.push(f);
    }
    let grid = if predictor_id == 3 || predictor_id == 4 {
        let offset = f64::from_bits(r.u64("grid_offset")?);
        let step = f64::from_bits(r.u64("grid_step")?);
        if !(offset.is_finite() && step > 0.0 && step.is_finite()) {
            return Err(corrupt(format!(
                "grid offset {offset} and step {step}: both must be finite, the step above 0"
            )));
        }
        Some((offset, step))
    } else {
        None
    };
    let clen = r.u32("container_len")? as usize;
    let container = r.take(clen, "container")?.to_vec();
    if clen > 0 {
        let n = npy::parse_header_only(&container)?;
        if n.dtype != dtype || n.shape != shape {
            return Err(corrupt("the .npy header does not match dtype and shape"));
        }
    }
    let payload_len = r.u64("payload_len")?;
    let check = r.u32("header_check")?;
    if xxh3_64(&a[..r.pos - 4]) as u32 != check {
        return Err(corrupt("header checksum mismatch"));
    }
    let values = shape
        .iter()
        .try_fold(1u64, |a: u64, &d| a.checked_mul(d as u64))
        .filter(|&n| n < 1 << 40)
        .ok_or_else(|| corrupt("shape too large"))?;
    let output_len = values * dtype.size() as u64 + clen as u64;
    let info = Info {
        dtype,
        shape,
        mode,
        bound,
        predictor,
        grid,
        revision,
        fills,
        container,
        payload_len,
        output_len,
    };
    Ok((info, r.pos))
}

/// Reads the header of a lossy archive without decoding it.
pub fn inspect(archive: &[u8]) -> Result<Info, Error> {
    let (info, pos) = read_header(archive)?;
    let expect = (pos as u64)
        .checked_add(info.payload_len)
        .and_then(|v| v.checked_add(8));
    if expect != Some(archive.len() as u64) {
        return Err(corrupt(format!(
            "archive is {} bytes, the header says {}",
            archive.len(),
            expect.map_or("more".into(), |v| v.to_string())
        )));
    }
    Ok(info)
}
